#include "echomq/scripts.h"

#include "script_sources.h"

namespace echomq {

namespace {
// Order matches enum Script; a test checks each num_keys against the KEYS
// the file's header declares.
constexpr std::array<ScriptInfo, kScriptCount> kScripts{{
    {Script::Enqueue, "enqueue", 2},
    {Script::EnqueueLane, "enqueue_lane", 2},
    {Script::EnqueueAt, "enqueue_at", 2},
    {Script::Claim, "claim", 6},
    {Script::Extend, "extend", 2},
    {Script::Complete, "complete", 3},
    {Script::Fail, "fail", 6},
    {Script::Release, "release", 4},
    {Script::Reap, "reap", 5},
    {Script::RetryDead, "retry_dead", 3},
    {Script::RetryJob, "retry_job", 3},
    {Script::Cancel, "cancel", 4},
    {Script::TrimDead, "trim_dead", 2},
}};
}  // namespace

const std::array<ScriptInfo, kScriptCount>& all_scripts() { return kScripts; }

const ScriptInfo& script_info(Script s) { return kScripts[static_cast<std::size_t>(s)]; }

const char* script_source(Script s) { return detail::script_source(s); }

}  // namespace echomq
