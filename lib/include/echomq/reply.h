// A server reply as a plain value: what hiredis read, copied out of its
// reply tree so that no hiredis object outlives the call that made it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace echomq {

struct Reply {
  enum class Type { Nil, Integer, String, Status, Error, Array };

  Type type = Type::Nil;
  std::int64_t integer = 0;
  std::string str;  // String, Status and Error
  std::vector<Reply> elements;

  bool is_error() const { return type == Type::Error; }
  bool is_nil() const { return type == Type::Nil; }
};

}  // namespace echomq
