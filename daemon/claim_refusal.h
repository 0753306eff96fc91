// Why a queue's claims are refused, in words said once when it starts and
// once when it ends (claim_loop.h): a broken limit or pause end in meta
// (claim's EMQARG naming meta, then the field), a key of the queue that
// holds another type than emq/1 keeps there (WRONGTYPE names no key, on
// either executor: the types of the claim's keys are read to name it), or
// whatever else claim refuses.
#pragma once

#include <string>

#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq::daemon {

struct ClaimRefusal {
  std::string why;     // what is wrong, naming the key ("emq:{q}:events holds a string, not a stream")
  std::string kind;    // /healthz: "queue Q claims nothing, <kind>: <why>"
  std::string until;   // the log: "queue=Q claims nothing until <until>: <why>"
  std::string mended;  // the log, once claims are answered again: "queue=Q <mended>: claiming resumes"
  // A WRONGTYPE whose key the types read after it did not find: mended in
  // between (or the read failed), or a key claim keeps that is not read.
  bool unnamed = false;

  bool operator==(const ClaimRefusal& o) const { return why == o.why && until == o.until; }
};

// What `refused` says of the queue; reads the types of its keys (on `x`)
// for a WRONGTYPE.
ClaimRefusal claim_refusal(Executor& x, const QueueKeys& keys, const Error& refused);

}  // namespace echomq::daemon
