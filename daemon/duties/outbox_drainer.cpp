#include "duties/outbox_drainer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <set>

#include "echomq/flow_batches.h"
#include "echomq/flow_speaker.h"
#include "echomq/job_id.h"
#include "echomq/whole_number.h"

namespace echomq::daemon {

namespace {
// Ids read from one outbox per round trip.
constexpr std::int64_t kBatch = 500;
// While children finish, the next round follows at once; idle, the wait
// grows to this. A parent waits at most this long for news of its last
// child.
constexpr std::chrono::milliseconds kIdleMax{50};

}  // namespace

struct OutboxDrainer::Finished {
  std::size_t queue;  // index into config_.queues
  std::string id;
  std::optional<std::int64_t> score;  // as read, for outbox_ack to compare
  std::optional<JobRef> parent = std::nullopt;
  ChildOutcome outcome = ChildOutcome::Dead;  // as child_done is told it
  std::string text = "";                      // the result (completed) or the error (dead)
};

OutboxDrainer::OutboxDrainer(const Config& config, const ConnectionOptions& server, Metrics& metrics,
                             ReconnectPolicy reconnect)
    : Periodic("outbox drainer"),
      config_(config),
      executor_(server, std::move(reconnect), &metrics),
      metrics_(metrics),
      idle_(1) {
  for (const QueueConfig& q : config.queues) keys_.emplace_back(q.name);
}

OutboxDrainer::~OutboxDrainer() {
  request_stop();
  join();
}

std::chrono::milliseconds OutboxDrainer::tick() {
  std::vector<Finished> batch = read_outboxes();
  const std::size_t told = batch.empty() ? 0 : tell(batch);
  idle_ =
      told > 0 ? std::chrono::milliseconds(0) : std::min(kIdleMax, std::max(idle_ * 2, std::chrono::milliseconds(1)));
  return idle_;
}

// Two round trips for every outbox at once: the ids, then their rows. A
// child whose row says it is on its way again is left out.
std::vector<OutboxDrainer::Finished> OutboxDrainer::read_outboxes() {
  // Past the entries held back: stuck ones are the oldest, at the head.
  std::vector<std::size_t> wanted;
  std::vector<Command> ranges;
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    wanted.push_back(static_cast<std::size_t>(kBatch) + stuck_.count(i));
    ranges.push_back({"ZRANGE", keys_[i].outbox, "0", std::to_string(wanted.back() - 1), "WITHSCORES"});
  }
  std::vector<Reply> ids = executor_.pipeline(ranges);
  const StuckNews::Clock::time_point now = StuckNews::Clock::now();
  std::vector<Finished> batch;
  std::vector<Command> rows;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].is_error()) throw error_from_reply("outbox", ids[i].str);
    std::vector<Reply>& pairs = ids[i].elements;
    std::set<std::string> present;
    for (std::size_t m = 0; m + 1 < pairs.size(); m += 2) {
      std::string& id = pairs[m].str;
      if (!passes_wire_gate(id)) {
        spdlog::warn("queue={} outbox holds '{}', not a job id; left for an operator", keys_[i].queue,
                     id.substr(0, 80));
        continue;
      }
      present.insert(id);
      if (stuck_.holding(i, id, now)) continue;
      rows.push_back({"HMGET", keys_[i].row(id), "parent", "state", "result", "error"});
      batch.push_back({i, std::move(id), whole_number(pairs[m + 1].str)});
    }
    if (pairs.size() / 2 < wanted[i]) stuck_.keep_only(i, present);
  }
  if (rows.empty()) return batch;
  std::vector<Reply> fields = executor_.pipeline(rows);
  std::vector<Finished> finished;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const Reply& f = fields[k];
    if (f.is_error()) throw error_from_reply("outbox", f.str);
    Finished& done = batch[k];
    if (f.elements.size() == 4) {
      const std::string& state = f.elements[1].str;
      // A child still on its way (retried by an operator after it died) is
      // left: settling it adds it again, and acknowledging it now could
      // race with that.
      if (!state.empty() && state != "completed" && state != "dead") continue;
      if (!f.elements[0].is_nil()) done.parent = parse_ref(f.elements[0].str);
      done.outcome = state == "completed" ? ChildOutcome::Completed : ChildOutcome::Dead;
      done.text = done.outcome == ChildOutcome::Completed ? f.elements[2].str : f.elements[3].str;
    }
    finished.push_back(std::move(done));
  }
  return finished;
}

// One children_done per parent, then one outbox_ack_many per queue: a round
// costs a few calls however many children finished.
std::size_t OutboxDrainer::tell(const std::vector<Finished>& batch) {
  std::vector<ChildNews> news;
  std::vector<std::size_t> asked;  // batch index of each news
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const Finished& f = batch[k];
    if (!f.parent) continue;
    news.push_back({f.parent->queue, f.parent->id, keys_[f.queue].ref(f.id), f.outcome, f.text});
    asked.push_back(k);
  }
  parent_queues_.mark(executor_, news);
  // One reply per news, as child_done would have given it.
  std::vector<Reply> replies = tell_parents(executor_, news);
  std::vector<bool> told(batch.size(), false);
  std::vector<Command> parents_left;  // for replies of 0: is the parent there at all?
  std::vector<std::size_t> zero;
  for (std::size_t c = 0; c < replies.size(); ++c) {
    const Finished& f = batch[asked[c]];
    ChildDoneResult r;
    try {
      r = decode_child_done(replies[c]);
    } catch (const Error& e) {
      if (e.transient()) throw;
      // The parent's row or deps are not what child_done can read: its
      // outbox entry stays, said once and retried less and less often
      // until an operator mends or cancels the parent.
      const std::string parent_ref = f.parent->queue + ":" + f.parent->id;
      if (stuck_.refused(f.queue, f.id, parent_ref, StuckNews::Clock::now())) {
        spdlog::error(
            "queue={} job={} cannot tell its parent {}:{}: {}. The news of its children stays in the outbox, "
            "retried every {} s to {} s and not logged again until told: mend the parent's row, or cancel the "
            "parent (emq cancel {} {})",
            keys_[f.queue].queue, f.id, f.parent->queue, f.parent->id, e.what(), StuckNews::kFirstRetry.count() / 1000,
            StuckNews::kLastRetry.count() / 1000, f.parent->queue, f.parent->id);
      }
      continue;
    }
    told[asked[c]] = true;
    if (stuck_.told(f.queue, f.id)) {
      spdlog::info("queue={} job={} told its parent {}:{} at last: {}", keys_[f.queue].queue, f.id, f.parent->queue,
                   f.parent->id, to_string(r));
    }
    QueueMetrics& m = metrics_.queue(config_.queues[f.queue].name);
    if (r == ChildDoneResult::NotInDeps) {
      parents_left.push_back({"EXISTS", QueueKeys(f.parent->queue).row(f.parent->id)});
      zero.push_back(asked[c]);
      continue;
    }
    (f.outcome == ChildOutcome::Completed ? m.children_done_completed : m.children_done_dead)->Increment();
    spdlog::debug("queue={} job={} told its parent {}:{}: {}", keys_[f.queue].queue, f.id, f.parent->queue,
                  f.parent->id, to_string(r));
  }
  if (!parents_left.empty()) {
    std::vector<Reply> exists = executor_.pipeline(parents_left);
    for (std::size_t z = 0; z < zero.size(); ++z) {
      const Finished& f = batch[zero[z]];
      if (exists[z].type == Reply::Type::Integer && exists[z].integer == 0) {
        spdlog::warn("queue={} job={} finished but its parent {}:{} is gone; acknowledged", keys_[f.queue].queue, f.id,
                     f.parent->queue, f.parent->id);
      }
    }
  }
  std::vector<OutboxEntry> acks;
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const Finished& f = batch[k];
    if (!f.parent) {
      spdlog::warn(
          "queue={} job={} is in the outbox with no parent ref in its row (gone, or written by another "
          "speaker); acknowledged",
          keys_[f.queue].queue, f.id);
    } else if (!told[k]) {
      continue;
    }
    // With the score read: a child that finished again since keeps its
    // entry for the next round (a retry from dead racing this one).
    acks.push_back({keys_[f.queue].queue, f.id, config_.queues[f.queue].keep_completed_s * 1000, f.score});
  }
  if (acks.empty()) return 0;
  std::size_t left = 0;
  for (const Reply& r : ack_outboxes(executor_, acks)) {
    if (r.is_error()) throw error_from_reply("outbox_ack", r.str);
    if (decode_outbox_ack(r)) ++left;
  }
  return std::max<std::size_t>(left, 1);
}

}  // namespace echomq::daemon
