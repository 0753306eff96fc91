// The L2 transitions as this library knows them: one entry per lua/*.lua,
// with what its header declares. A transition is its file: the build reads
// the names in lua/ (Script and kScriptCount, echomq/script_names.h), and
// each file's text and header (cmake/lua_scripts.cmake), so a new one is a
// new lua/<name>.lua and no list besides; one the emq module runs too
// names its twin in scripts.cpp. The text is compiled in, so nothing is
// read from disk at run time.
#pragma once

#include <array>
#include <cstddef>

#include "echomq/script_names.h"

namespace echomq {

struct ScriptInfo {
  Script script;
  const char* name;  // the file name without .lua, as in PROTOCOL.md
  // The KEYS every call passes (PROTOCOL.md's KEYS column): the header's
  // KEYS lines that do not say "optional".
  int num_keys;
  const char* native;  // its EMQ.* twin in the emq module, or nullptr
  // KEYS a call may add after those: reap, cancel, child_done and children_done
  // take the outbox as an optional last KEY (cancel then waiting, deps and
  // results too), so a speaker that knows nothing of flows calls them as
  // before; and every transition that writes a job's state takes the
  // queue's events stream last (events below).
  int optional_keys = 0;
  // Whether it takes the events stream as its last KEY and the stream's
  // length as its last ARGV (PROTOCOL.md, "Events"): a KEYS line of its
  // header names emq:{q}:events.
  bool events = false;
};

const std::array<ScriptInfo, kScriptCount>& all_scripts();
const ScriptInfo& script_info(Script s);
// The exact text of lua/<name>.lua.
const char* script_source(Script s);

}  // namespace echomq
