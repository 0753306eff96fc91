// The L2 transitions as this library knows them: one entry per lua/*.lua,
// with the number of KEYS each declares. The text is compiled in from lua/
// at build time, so nothing is read from disk at run time.
#pragma once

#include <array>
#include <cstddef>

namespace echomq {

enum class Script {
  Enqueue,
  EnqueueLane,
  EnqueueAt,
  Claim,
  Extend,
  Complete,
  Fail,
  Release,
  Reap,
  RetryDead,
  RetryJob,
  PromoteJob,
  Cancel,
  TrimDead,
  EnqueueCron,
  EnqueueParent,
  EnqueueChild,
  CompleteFlow,
  FailFlow,
  ChildDone,
  OutboxAck,
  ChildrenDone,
  OutboxAckMany,
  Progress,
  GroupSet,
};

struct ScriptInfo {
  Script script;
  const char* name;    // the file name without .lua, as in PROTOCOL.md
  int num_keys;        // the KEYS every call passes (PROTOCOL.md's KEYS column)
  const char* native;  // its EMQ.* twin in the emq module, or nullptr
  // KEYS a call may add after those: reap, cancel, child_done and children_done
  // take the outbox as an optional last KEY (cancel then waiting, deps and
  // results too), so a speaker that knows nothing of flows calls them as
  // before; and every transition that writes a job's state takes the
  // queue's events stream last (events below).
  int optional_keys = 0;
  // Whether it takes the events stream as its last KEY and the stream's
  // length as its last ARGV (PROTOCOL.md, "Events").
  bool events = false;
};

inline constexpr std::size_t kScriptCount = 25;

const std::array<ScriptInfo, kScriptCount>& all_scripts();
const ScriptInfo& script_info(Script s);
// The exact text of lua/<name>.lua.
const char* script_source(Script s);

}  // namespace echomq
