#include "echomq/scripts.h"

#include "script_sources.h"

namespace echomq {

namespace {
// Order matches enum Script; a test checks num_keys + optional_keys against
// the KEYS the file's header declares. The six core transitions name their
// twin in the emq module (PROTOCOL.md, "The native module"), and so do
// complete_flow and fail_flow: a child's settle is the one flow step each
// job of a flow takes (issue 41; docs/decisions.md).
constexpr std::array<ScriptInfo, kScriptCount> kScripts{{
    {Script::Enqueue, "enqueue", 2, "EMQ.ENQUEUE", 3, true},
    {Script::EnqueueLane, "enqueue_lane", 2, nullptr, 1, true},
    {Script::EnqueueAt, "enqueue_at", 2, nullptr, 1, true},
    {Script::Claim, "claim", 6, "EMQ.CLAIM", 2, true},
    {Script::Extend, "extend", 2, "EMQ.EXTEND"},
    {Script::Complete, "complete", 3, "EMQ.COMPLETE", 2, true},
    {Script::Fail, "fail", 6, "EMQ.FAIL", 2, true},
    {Script::Release, "release", 4, "EMQ.RELEASE", 1, true},
    {Script::Reap, "reap", 5, nullptr, 3, true},
    {Script::RetryDead, "retry_dead", 3, nullptr, 2, true},
    {Script::RetryJob, "retry_job", 3, nullptr, 2, true},
    {Script::PromoteJob, "promote_job", 3, nullptr, 1, true},
    {Script::Cancel, "cancel", 4, nullptr, 6, true},
    {Script::TrimDead, "trim_dead", 2, nullptr, 2, true},
    {Script::EnqueueCron, "enqueue_cron", 4, nullptr, 2, true},
    {Script::EnqueueParent, "enqueue_parent", 4, nullptr, 2, true},
    {Script::EnqueueChild, "enqueue_child", 3, nullptr, 2, true},
    {Script::CompleteFlow, "complete_flow", 6, "EMQ.COMPLETE_FLOW", 2, true},
    {Script::FailFlow, "fail_flow", 9, "EMQ.FAIL_FLOW", 2, true},
    {Script::ChildDone, "child_done", 6, nullptr, 3, true},
    {Script::OutboxAck, "outbox_ack", 2, nullptr},
    {Script::ChildrenDone, "children_done", 7, nullptr, 3, true},
    {Script::OutboxAckMany, "outbox_ack_many", 2, nullptr},
    {Script::Progress, "progress", 2, nullptr, 1, true},
}};
}  // namespace

const std::array<ScriptInfo, kScriptCount>& all_scripts() { return kScripts; }

const ScriptInfo& script_info(Script s) { return kScripts[static_cast<std::size_t>(s)]; }

const char* script_source(Script s) { return detail::script_source(s); }

}  // namespace echomq
