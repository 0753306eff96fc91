// What the flow tests share: a parent queue (the fixture's q) and child
// queues of their own, each flow transition called with its KEYS as
// PROTOCOL.md's "Flows" lists them, and the outbox drained by hand exactly
// as a flow-aware speaker drains it (child_done on the parent's queue, then
// outbox_ack on the child's).
#pragma once

#include <string>
#include <vector>

#include "wire_fixture.h"

namespace echomq::test {

class FlowTest : public WireTest {
 protected:
  // Another queue of this test's own: its name is q's, cut, plus a suffix.
  QueueKeys queue(const std::string& suffix) const { return QueueKeys(q.queue.substr(0, 60) + "-" + suffix); }

  static std::vector<std::string> refs_of(const QueueKeys& in, const std::vector<std::string>& ids) {
    std::vector<std::string> refs;
    for (const std::string& id : ids) refs.push_back(in.ref(id));
    return refs;
  }

  ScriptCall enqueue_parent_call(const QueueKeys& in, const std::string& id, const std::vector<std::string>& children,
                                 const std::string& policy = "fail", const std::string& parent = "",
                                 const std::string& lane = "0") {
    ScriptCall c{Script::EnqueueParent,
                 {in.row_root + id, in.waiting, in.deps_root + id, in.meta},
                 {id, "parent payload", lane, policy, parent}};
    c.args.insert(c.args.end(), children.begin(), children.end());
    return c;
  }
  ScriptCall enqueue_child_call(const QueueKeys& in, const std::string& id, const std::string& parent,
                                const std::string& lane = "0") {
    return {Script::EnqueueChild, {in.row_root + id, in.pending, in.meta}, {id, "child payload", lane, parent}};
  }
  ScriptCall complete_flow_call(const QueueKeys& in, const Lease& l, std::int64_t keep_ms, const std::string& result) {
    return {Script::CompleteFlow,
            {in.row(l.id), in.active, in.stats, in.outbox, in.deps_root, in.results_root},
            {l.id, std::to_string(l.epoch), std::to_string(keep_ms), result}};
  }
  ScriptCall fail_flow_call(const QueueKeys& in, const Lease& l, const std::string& error, std::int64_t max_attempts,
                            std::int64_t backoff_ms, bool permanent) {
    return {
        Script::FailFlow,
        {in.row(l.id), in.active, in.delayed, in.pending, in.dead, in.stats, in.outbox, in.deps_root, in.results_root},
        {l.id, std::to_string(l.epoch), error, std::to_string(max_attempts), std::to_string(backoff_ms),
         permanent ? "1" : "0"}};
  }
  ScriptCall child_done_call(const QueueKeys& in, const std::string& parent_id, const std::string& ref,
                             const std::string& outcome, const std::string& text, bool with_outbox = true) {
    ScriptCall c{Script::ChildDone,
                 {in.row_root + parent_id, in.deps_root + parent_id, in.results_root + parent_id, in.waiting,
                  in.pending, in.dead},
                 {ref, outcome, text}};
    if (with_outbox) c.keys.push_back(in.outbox);
    return c;
  }
  ScriptCall outbox_ack_call(const QueueKeys& in, const std::string& id, std::int64_t keep_ms) {
    return {Script::OutboxAck, {in.row_root + id, in.outbox}, {id, std::to_string(keep_ms)}};
  }

  // Runs a call that must answer an integer.
  std::int64_t integer(const ScriptCall& call) {
    Reply r = raw(call);
    EXPECT_EQ(r.type, Reply::Type::Integer) << script_info(call.script).name << ": " << r.str;
    return r.integer;
  }

  std::string parent_of(const QueueKeys& in, const std::vector<std::string>& children,
                        const std::string& policy = "fail", const std::string& parent = "") {
    std::string id = mint_job_id();
    EXPECT_EQ(integer(enqueue_parent_call(in, id, children, policy, parent)), 1);
    return id;
  }
  std::string child_of(const QueueKeys& in, const std::string& parent_ref, const std::string& id = mint_job_id()) {
    EXPECT_EQ(integer(enqueue_child_call(in, id, parent_ref)), 1);
    return id;
  }
  Lease claim_from(const QueueKeys& in, const std::string& expected_id) {
    std::vector<ClaimedJob> jobs = claim(x, in, {30000, 1, 0});
    EXPECT_EQ(jobs.size(), 1u) << "claim from " << in.queue;
    if (jobs.empty()) return {};
    EXPECT_EQ(jobs[0].id, expected_id);
    return {jobs[0].id, jobs[0].lease_epoch};
  }

  // One pass over a queue's outbox, as a speaker drains it: the child_done
  // replies, in the outbox's order.
  std::vector<std::int64_t> drain(const QueueKeys& in, std::int64_t keep_ms = 0) {
    std::vector<std::int64_t> told;
    for (const std::string& id : members(in.outbox)) {
      Row child = hash(in.row_root + id);
      std::string parent = child["parent"];
      std::size_t colon = parent.find(':');
      EXPECT_NE(colon, std::string::npos) << id << " is in the outbox without a parent";
      if (colon == std::string::npos) continue;
      QueueKeys pq(parent.substr(0, colon));
      bool completed = child["state"] == "completed";
      told.push_back(integer(child_done_call(pq, parent.substr(colon + 1), in.ref(id), completed ? "completed" : "dead",
                                             completed ? child["result"] : child["error"])));
      EXPECT_EQ(integer(outbox_ack_call(in, id, keep_ms)), 1);
    }
    return told;
  }
};

}  // namespace echomq::test
