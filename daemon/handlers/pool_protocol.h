// The pool handler's frames: one JSON object per line (NDJSON), one line
// per job each way (docs/handlers.md has the contract).
//
//   to the handler:  {"id":"JOB_…","queue":"q","attempt":1,"deadline_ms":0,"payload":"…"}
//                    ("payload_b64" instead when the payload is not UTF-8;
//                    a traced job's line adds "traceparent" and, when it
//                    has one, "tracestate" after deadline_ms; a parent's
//                    adds "children":[…], children_json's, before the payload)
//   back, success:   {"id":"JOB_…","ok":true,"result":"…"}   (or "result_b64", or neither: empty)
//   back, failure:   {"id":"JOB_…","ok":false,"error":"…","permanent":false}
//   back, progress:  {"id":"JOB_…","progress":…}   (any number of them before the answer)
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "echomq/bytes.h"
#include "handlers/handler.h"

namespace echomq::daemon {

// The frame for one job, ending in '\n'. Keys always in this order, no
// whitespace, so a handler in shell may take it apart with sed.
std::string encode_job_frame(const Job& job);

// A parent's children's outcomes as a JSON array, one object each, in ref
// order: {"queue":"thumbs","id":"JOB_…","outcome":"completed","result":"…"}
// or, for a dead child, "outcome":"dead","error":"…" ("result_b64" /
// "error_b64" when the bytes are not UTF-8). The pool's "children" field
// and the exec handler's EMQ_CHILDREN_FILE both hold it.
std::string children_json(const std::vector<ChildResult>& children);

struct Reply {
  std::string id;
  bool ok = false;
  std::string result;      // ok: the bytes of result or result_b64
  std::string error;       // !ok
  bool permanent = false;  // !ok
  // A progress line, not the answer: the value reported, a JSON string as
  // its text, any other JSON value as its compact JSON.
  bool is_progress = false;
  std::string progress;
};

// Parses one reply line (without its '\n'). Returns "" and fills `reply`,
// or says what is wrong with the line. Unknown keys are ignored, so a
// handler may add its own.
std::string parse_reply_frame(std::string_view line, Reply& reply);

}  // namespace echomq::daemon
