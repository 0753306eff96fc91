// The generated half of scripts.cpp (cmake/embed_lua.cmake): the text of
// each lua/*.lua file, and what its header declares.
#pragma once

#include "echomq/scripts.h"

namespace echomq::detail {

struct ScriptHeader {
  const char* name;   // the file name without .lua
  int num_keys;       // its KEYS lines that do not say "optional"
  int optional_keys;  // those that do (the last ones)
  bool events;        // one names emq:{q}:events
};

const char* script_source(Script s);
ScriptHeader script_header(Script s);

}  // namespace echomq::detail
