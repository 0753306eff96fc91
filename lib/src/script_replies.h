// Reading a transition's reply, for the typed API's decoders
// (transitions.cpp, flow_speaker.cpp, flow_batches.cpp, flow_tools.cpp,
// parent_results.cpp): one rule for errors and integers.
#pragma once

#include <cstdint>
#include <string>

#include "echomq/errors.h"
#include "echomq/reply.h"

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

}  // namespace echomq
