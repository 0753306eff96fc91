// Groups in the differential run (docs/protocol.md, "Groups"): grouped
// jobs enter their groups through the optioned enqueue (EMQ.ENQUEUE on
// the native side), a claim's promotion, promote_job, retry_job or
// retry_dead (scripts on both: the library's builders pass the block);
// policies (weights, caps, rates, pauses, a default, broken ones) are
// written through group_set or by some other writer, and group keys are
// broken now and then, so that EMQ.CLAIM's rotation and the twins' group
// steps meet every branch their scripts have. The run's cancels, child
// news and operator moves pass the block too; only the emq/1 peer's reap
// it also draws takes none: its grouped jobs reach pending and are
// counted by the next claim. What is drawn is drawn here;
// the fixture runs it, and checks after every step what the groups must
// keep (group_problems).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "keyspace_dump.h"

namespace echomq::test {

class GroupDraws {
 public:
  GroupDraws(std::mt19937_64& rng, const QueueKeys& q) : rng_(rng), q_(q) {}

  static const std::vector<std::string>& names() {
    static const std::vector<std::string> n = {"acme", "bolt", "cust.42", "d-1:x"};
    return n;
  }

  std::string some_group() { return names()[pick(static_cast<int>(names().size()))]; }

  // A grouped job that enters its group: enqueued, planted delayed and
  // promoted (by promote_job, or by the next claim when it is due), or
  // planted dead and retried (retry_job, retry_dead), each through the
  // transition's group step.
  struct Entry {
    std::vector<Command> plant;
    std::optional<ScriptCall> call;
  };
  Entry grouped_job(const std::string& id, const std::string& payload, std::int64_t now) {
    ++jobs_;
    grouped_ids_.push_back(id);
    const std::string g = some_group();
    const int lane = pick(5) - 2;
    const std::string row = q_.row(id);
    EnqueueOptions o;
    o.group = g;
    o.lane = lane;
    auto planted = [&](const char* state, const std::string& set, std::int64_t score) {
      return std::vector<Command>{
          {"HSET", row, "state", state, "attempts", "2", "payload", payload, "group", g, "lane", std::to_string(lane)},
          {"ZADD", set, std::to_string(score), id}};
    };
    switch (pick(6)) {
      case 0:
      case 1:  // the optioned enqueue: into its group's zset
        return {{}, enqueue_call(q_, id, payload, o)};
      case 2:  // due already: the next claim promotes it into its group
        o.due_ms = 1;
        return {{}, enqueue_call(q_, id, payload, o)};
      case 3:  // due in a day, run now by an operator
        ++moved_;
        return {planted("delayed", q_.delayed, now + 86400000), promote_job_call(q_, id)};
      case 4:  // dead the longest, so that retry_dead takes it among its first
        ++moved_;
        return {planted("dead", q_.dead, 1), retry_dead_call(q_, 1 + pick(3))};
      default: ++moved_; return {planted("dead", q_.dead, now), retry_job_call(q_, id)};
    }
  }

  // An operator's cancel of a grouped job, whatever its state now: a
  // pending one leaves its group's zset and count, a running one is
  // refused. None before the run has a grouped job.
  std::optional<ScriptCall> cancel_one() {
    if (grouped_ids_.empty()) return std::nullopt;
    ++cancels_;
    const std::string& id = grouped_ids_[pick(static_cast<int>(grouped_ids_.size()))];
    return cancel_call(q_, id, chance(50) ? FlowMode::Flow : FlowMode::Plain);
  }

  // A policy as an operator writes it (group_set), or as some other
  // writer broke it (a plain HSET): claim must hold a broken group, and
  // refuse by name for a broken default, alike on both sides. Rates have
  // windows of a day, so no token comes back between the two sides' runs.
  ScriptCall policy_call() {
    ++policies_;
    static const std::vector<std::string> policies = {"",
                                                      "weight=3",
                                                      "weight=1000",
                                                      "max_active=1",
                                                      "max_active=2 weight=2",
                                                      "paused=1",
                                                      "weight=2 paused=1",
                                                      "rate_max=2 rate_window_ms=86400000",
                                                      "rate_max=1 rate_window_ms=86400000 max_active=3"};
    std::string g = chance(15) ? "*" : some_group();
    std::string p = policies[pick(static_cast<int>(policies.size()))];
    if (g == "*" && p.find("paused") != std::string::npos) p = "weight=2";
    return group_set_call(q_, g, p);
  }

  std::vector<Command> broken() {
    ++broken_;
    static const std::vector<std::string> bad = {"weight=0", "weight=x",  "speed=3", "max_active=1  weight=2",
                                                 "paused=0", "rate_max=5"};
    const std::string g = some_group();
    switch (pick(4)) {
      case 0: return {{"HSET", q_.groups, g, bad[pick(static_cast<int>(bad.size()))]}};
      case 1: return {{"HSET", q_.grp(g), "deficit", chance(50) ? "x" : "5000"}};
      case 2: return {{"HSET", q_.grp(g), "rate_credit", "-1", "rate_at", "1"}};
      default: return {{"HDEL", q_.groups, g}};
    }
  }

  // A running grouped job's row deleted by hand, as an operator may: its
  // group counts it until a check finds the row gone, and the twins must
  // heal that count alike. Nothing when no grouped job is running.
  std::vector<Command> row_gone(Connection& scripted) {
    std::vector<std::string> running;
    for (const Reply& id : scripted.command({"ZRANGE", q_.active, "0", "-1"}).elements) {
      if (scripted.command({"HGET", q_.row(id.str), "group"}).type == Reply::Type::String) running.push_back(id.str);
    }
    if (running.empty()) return {};
    const std::string id = running[static_cast<std::size_t>(pick(static_cast<int>(running.size())))];
    gone_.insert(id);
    return {{"DEL", q_.row(id)}};
  }

  const std::set<std::string>& rows_gone() const { return gone_; }

  // The times in gwait within slack of now, planted due (as if the clock
  // had moved on), so that the two sides' claims, a few ms apart, never
  // fall on either side of one.
  std::vector<Command> gwait_before_claim(Connection& scripted, std::int64_t now, std::int64_t slack) {
    std::vector<Command> plant;
    Reply r = scripted.command({"ZRANGEBYSCORE", q_.gwait, std::to_string(now - slack), std::to_string(now + slack)});
    for (const Reply& g : r.elements) plant.push_back({"ZADD", q_.gwait, std::to_string(now - slack), g.str});
    return plant;
  }

  // What the groups must keep after every step, whatever the twins did:
  // each group's gidx score is its pending count and * their sum; the
  // rotation lists a group at most once, exactly when its `in` says rot;
  // a group in gwait says why; every pending grouped row is in its
  // group's zset, or in pending (an emq/1 reap put it there).
  std::vector<std::string> group_problems(const Keyspace& ks) const {
    std::vector<std::string> out;
    auto zset_of = [&](const std::string& key) {
      auto it = ks.find(key);
      return it == ks.end() ? std::map<std::string, std::string>{} : it->second.entries;
    };
    auto field = [&](const std::string& key, const std::string& f) -> std::string {
      auto it = ks.find(key);
      if (it == ks.end() || it->second.type != "hash") return "";
      auto v = it->second.entries.find(f);
      return v == it->second.entries.end() ? "" : v->second;
    };
    const auto idx = zset_of(q_.gidx);
    std::vector<std::string> rot;
    if (auto it = ks.find(q_.rot); it != ks.end()) {
      for (const auto& [at, member] : it->second.entries) rot.push_back(member);
    }
    std::set<std::string> in_rot(rot.begin(), rot.end());
    if (in_rot.size() != rot.size()) out.push_back("the rotation lists a member twice");
    std::int64_t sum = 0;
    for (const std::string& g : names()) {
      auto gq = ks.find(q_.gq(g));
      const bool broken = (gq != ks.end() && gq->second.type != "zset");
      if (broken) continue;
      const std::size_t n = gq == ks.end() ? 0 : gq->second.entries.size();
      sum += static_cast<std::int64_t>(n);
      auto score = idx.find(g);
      if (n > 0 && (score == idx.end() || std::stod(score->second) != static_cast<double>(n))) {
        out.push_back(g + " has " + std::to_string(n) + " pending and gidx says " +
                      (score == idx.end() ? std::string("none") : score->second));
      }
      const std::string where = field(q_.grp(g), "in");
      if ((where == "rot") != (in_rot.count(g) == 1)) out.push_back(g + " in=" + where + " against the rotation");
      if ((where == "cap" || where == "rate") && zset_of(q_.gwait).count(g) == 0) {
        out.push_back(g + " waits for its " + where + " outside gwait");
      }
    }
    auto star = idx.find("*");
    if (sum != (star == idx.end() ? 0 : static_cast<std::int64_t>(std::stod(star->second)))) {
      out.push_back("gidx * is not the sum of the pending counts " + std::to_string(sum));
    }
    return out;
  }

  std::string summary() const {
    return std::to_string(jobs_) + " grouped jobs entered (" + std::to_string(moved_) +
           " by promote_job or a retry), " + std::to_string(cancels_) + " cancels of one, " +
           std::to_string(policies_) + " policies written, " + std::to_string(broken_) + " group keys broken, " +
           std::to_string(gone_.size()) + " running grouped rows deleted";
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(int percent) { return pick(100) < percent; }

  std::mt19937_64& rng_;
  const QueueKeys& q_;
  int jobs_ = 0, moved_ = 0, cancels_ = 0, policies_ = 0, broken_ = 0;
  std::vector<std::string> grouped_ids_;
  std::set<std::string> gone_;
};

}  // namespace echomq::test
