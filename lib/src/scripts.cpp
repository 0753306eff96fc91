#include "echomq/scripts.h"

#include "script_sources.h"

namespace echomq {

namespace {
// Order matches enum Script; a test checks num_keys + optional_keys against
// the KEYS the file's header declares. The six core transitions name their
// twin in the emq module (PROTOCOL.md, "The native module").
constexpr std::array<ScriptInfo, kScriptCount> kScripts{{
    {Script::Enqueue, "enqueue", 2, "EMQ.ENQUEUE"},
    {Script::EnqueueLane, "enqueue_lane", 2, nullptr},
    {Script::EnqueueAt, "enqueue_at", 2, nullptr},
    {Script::Claim, "claim", 6, "EMQ.CLAIM"},
    {Script::Extend, "extend", 2, "EMQ.EXTEND"},
    {Script::Complete, "complete", 3, "EMQ.COMPLETE"},
    {Script::Fail, "fail", 6, "EMQ.FAIL"},
    {Script::Release, "release", 4, "EMQ.RELEASE"},
    {Script::Reap, "reap", 5, nullptr, 1},
    {Script::RetryDead, "retry_dead", 3, nullptr},
    {Script::RetryJob, "retry_job", 3, nullptr},
    {Script::PromoteJob, "promote_job", 3, nullptr},
    {Script::Cancel, "cancel", 4, nullptr, 4},
    {Script::TrimDead, "trim_dead", 2, nullptr},
    {Script::EnqueueCron, "enqueue_cron", 4, nullptr},
    {Script::EnqueueParent, "enqueue_parent", 4, nullptr},
    {Script::EnqueueChild, "enqueue_child", 3, nullptr},
    {Script::CompleteFlow, "complete_flow", 6, nullptr},
    {Script::FailFlow, "fail_flow", 9, nullptr},
    {Script::ChildDone, "child_done", 6, nullptr, 1},
    {Script::OutboxAck, "outbox_ack", 2, nullptr},
    {Script::ChildrenDone, "children_done", 7, nullptr, 1},
    {Script::OutboxAckMany, "outbox_ack_many", 2, nullptr},
    {Script::Progress, "progress", 2, nullptr, 1},
}};
}  // namespace

const std::array<ScriptInfo, kScriptCount>& all_scripts() { return kScripts; }

const ScriptInfo& script_info(Script s) { return kScripts[static_cast<std::size_t>(s)]; }

const char* script_source(Script s) { return detail::script_source(s); }

}  // namespace echomq
