// What a flow-aware speaker calls and reads around claim and settle
// (flow_speaker.h): child_done, outbox_ack and a parent's results.
#include "echomq/flow_speaker.h"

#include <algorithm>
#include <tuple>

#include "echomq/errors.h"
#include "echomq/job_id.h"
#include "script_replies.h"

namespace echomq {

namespace {
std::string num(std::int64_t v) { return std::to_string(v); }
}  // namespace

std::optional<JobRef> parse_ref(std::string_view ref) {
  const std::size_t colon = ref.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view queue = ref.substr(0, colon);
  std::string_view id = ref.substr(colon + 1);
  if (!valid_queue_name(queue) || !passes_wire_gate(id)) return std::nullopt;
  return JobRef{std::string(queue), std::string(id)};
}

const char* to_string(ChildOutcome o) { return o == ChildOutcome::Completed ? "completed" : "dead"; }

const char* to_string(ChildDoneResult r) {
  switch (r) {
    case ChildDoneResult::NotInDeps: return "not in deps";
    case ChildDoneResult::Recorded: return "recorded";
    case ChildDoneResult::Released: return "released";
    case ChildDoneResult::ParentDied: return "parent died";
    case ChildDoneResult::Waits: return "waits";
    case ChildDoneResult::ParentNotWaiting: return "parent not waiting";
  }
  return "?";
}

ScriptCall child_done_call(const QueueKeys& pq, std::string_view parent_id, std::string_view child_ref,
                           ChildOutcome outcome, std::string_view text) {
  ScriptCall call{
      Script::ChildDone,
      {pq.row(parent_id), pq.deps(parent_id), pq.results(parent_id), pq.waiting, pq.pending, pq.dead, pq.outbox},
      {std::string(child_ref), to_string(outcome), std::string(text)}};
  pq.add_group_block(call.keys);
  call.keys.push_back(pq.uniq_root);
  return call;
}

ChildDoneResult decode_child_done(const Reply& r) {
  const std::int64_t n = integer_of(r, "child_done");
  if (n < 0 || n > 5) throw Error(ErrorKind::Protocol, "child_done", "replied " + num(n) + ", not 0..5");
  return static_cast<ChildDoneResult>(n);
}

ScriptCall outbox_ack_call(const QueueKeys& q, std::string_view id, std::int64_t keep_ms,
                           std::optional<std::int64_t> read_score) {
  ScriptCall call{Script::OutboxAck, {q.row(id), q.outbox}, {std::string(id), num(keep_ms)}};
  if (read_score) call.args.push_back(num(*read_score));
  return call;
}

bool decode_outbox_ack(const Reply& r) { return integer_of(r, "outbox_ack") == 1; }

Command results_read(const QueueKeys& q, std::string_view id) { return {"HGETALL", q.results(id)}; }

std::vector<ChildResult> decode_results(const Reply& r) {
  throw_if_error(r, "results");
  if (r.type != Reply::Type::Array || r.elements.size() % 2 != 0) {
    throw Error(ErrorKind::Protocol, "results", "expected a flat hash [ref, outcome, ...]");
  }
  std::vector<ChildResult> out;
  for (std::size_t i = 0; i < r.elements.size(); i += 2) {
    auto ref = parse_ref(r.elements[i].str);
    const std::string& v = r.elements[i + 1].str;
    // A field another writer put there is no child of ours.
    if (!ref || v.size() < 2 || (v[0] != 'c' && v[0] != 'd') || v[1] != ':') continue;
    out.push_back({std::move(ref->queue), std::move(ref->id),
                   v[0] == 'c' ? ChildOutcome::Completed : ChildOutcome::Dead, v.substr(2)});
  }
  std::sort(out.begin(), out.end(), [](const ChildResult& a, const ChildResult& b) {
    return std::tie(a.queue, a.id) < std::tie(b.queue, b.id);
  });
  return out;
}

}  // namespace echomq
