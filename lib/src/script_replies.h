// Reading a transition's reply, for the typed API's decoders
// (transitions.cpp, flow_speaker.cpp, flow_batches.cpp, flow_tools.cpp,
// parent_results.cpp): one rule for errors and integers.
#pragma once

#include <cstdint>
#include <string>

#include "echomq/errors.h"
#include "echomq/reply.h"
#include "echomq/transitions.h"

namespace echomq {

// Error replies inside a batch come back in place; a decoder meets them here.
inline void throw_if_error(const Reply& r, const char* op) {
  if (r.is_error()) throw error_from_reply(op, r.str);
}

inline std::int64_t integer_of(const Reply& r, const char* op) {
  throw_if_error(r, op);
  if (r.type != Reply::Type::Integer) {
    throw Error(ErrorKind::Protocol, op,
                "expected an integer reply; is lua/" + std::string(op) + ".lua the emq/1 one?");
  }
  return r.integer;
}

// [code, holder id, holder state]: a unique enqueue's duplicate or replace,
// retry_job's refusal. The code; holder filled when given.
inline std::int64_t holder_reply(const Reply& r, const char* op, KeyHolder* holder) {
  throw_if_error(r, op);
  if (r.type != Reply::Type::Array || r.elements.size() != 3) return integer_of(r, op);
  const std::int64_t code = integer_of(r.elements[0], op);
  if (holder != nullptr) *holder = {r.elements[1].str, r.elements[2].str};
  return code;
}

}  // namespace echomq
