// A transition as the EMQ.* command line the native executor writes, and as
// the EVAL of its script's text, for tests that talk to the module (and the
// script beside it) over a plain connection.
#pragma once

#include <string>

#include "echomq/executor.h"
#include "echomq/scripts.h"

namespace echomq::test {

inline Command native_command(const ScriptCall& call) {
  Command c{script_info(call.script).native, std::to_string(call.keys.size())};
  c.insert(c.end(), call.keys.begin(), call.keys.end());
  c.insert(c.end(), call.args.begin(), call.args.end());
  return c;
}

inline Command eval_command(const ScriptCall& call) {
  Command c{"EVAL", script_source(call.script), std::to_string(call.keys.size())};
  c.insert(c.end(), call.keys.begin(), call.keys.end());
  c.insert(c.end(), call.args.begin(), call.args.end());
  return c;
}

}  // namespace echomq::test
