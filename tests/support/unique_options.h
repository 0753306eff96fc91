// An enqueue's options with a unique key, its mode and window: what the
// unique jobs' tests of the library and of emq enqueue with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "echomq/transitions.h"

namespace echomq::test {

inline EnqueueOptions keyed(const std::string& key, std::optional<UniqueMode> mode = std::nullopt,
                            std::int64_t for_ms = 0) {
  EnqueueOptions o;
  o.job.unique = UniqueKey{key, mode, for_ms};
  return o;
}

}  // namespace echomq::test
