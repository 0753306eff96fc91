// Reading fields and scores a peer may have written as anything, for the
// listings (jobs.cpp, search.cpp): what is not a number reads as 0 rather
// than stopping the listing.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "echomq/reply.h"
#include "echomq/whole_number.h"

namespace echomq {

inline std::int64_t number_of(const Reply& r) {
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.type != Reply::Type::String) return 0;
  const std::optional<double> v = decimal_number(r.str);
  return v ? std::llround(*v) : 0;
}

inline std::optional<std::string> string_of(Reply& r) {
  if (r.type != Reply::Type::String) return std::nullopt;
  return std::move(r.str);
}

}  // namespace echomq
