// A queue's groups across real daemons (issue 51, item 4): a group's
// max_active and its rate hold however many emqd processes claim, and a
// daemon killed with SIGKILL mid-job leaves every group's counts right once
// its leases are reaped. Each group's policy is set with the library's
// group_set, as an operator's tool would. Each test runs on both
// executors: against a server with the emq module, `executor: auto` makes
// the daemons' claims and ends EMQ.* commands.
#include <algorithm>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include "fault_fixture.h"
#include "intervals.h"

namespace echomq::test {
namespace {

// An exec handler that records its start and end as intervals.h reads them,
// with the daemon's name after the id, and sleeps `seconds` between.
std::string recording_handler(const std::string& record, const std::string& daemon, const std::string& seconds) {
  return "    handler:\n      type: exec\n      command: [\"/bin/sh\", \"-c\", \"echo \\\"s $(date +%s%N) "
         "$EMQ_JOB_ID $DAEMON\\\" >> \\\"$REC\\\"; sleep " +
         seconds + "; echo \\\"e $(date +%s%N) $EMQ_JOB_ID $DAEMON\\\" >> \\\"$REC\\\"\"]\n      env: { REC: \"" +
         record + "\", DAEMON: \"" + daemon + "\" }\n";
}

// Every group's books against the jobs themselves, read in one atomic step
// on the server: gact:<g> holds exactly the ids in active whose row names
// g, gidx's g is the size of gq:<g> and its * their sum. "" when they
// agree, else what differs.
constexpr const char* kBooksScript = R"lua(
local q = ARGV[1]
local leased = {}
for _, id in ipairs(redis.call('ZRANGE', q .. 'active', 0, -1)) do
  local g = redis.call('HGET', q .. 'job:' .. id, 'group')
  if g then
    leased[g] = leased[g] or {}
    leased[g][id] = true
  end
end
local wrong, sum = {}, 0
for i = 2, #ARGV do
  local g = ARGV[i]
  local counted = redis.call('ZRANGE', q .. 'gact:' .. g, 0, -1)
  local want = 0
  for _ in pairs(leased[g] or {}) do want = want + 1 end
  if #counted ~= want then
    wrong[#wrong + 1] = g .. ' counts ' .. #counted .. ' and ' .. want .. ' are leased'
  end
  for _, id in ipairs(counted) do
    if not (leased[g] or {})[id] then wrong[#wrong + 1] = g .. ' counts ' .. id .. ', which is not leased' end
  end
  local pending = redis.call('ZCARD', q .. 'gq:' .. g)
  sum = sum + pending
  local idx = tonumber(redis.call('ZSCORE', q .. 'gidx', g) or '0')
  if idx ~= pending then wrong[#wrong + 1] = 'gidx ' .. g .. ' is ' .. idx .. ' and ' .. pending .. ' pending' end
end
local star = tonumber(redis.call('ZSCORE', q .. 'gidx', '*') or '0')
if star ~= sum then wrong[#wrong + 1] = 'gidx * is ' .. star .. ' and ' .. sum .. ' pending in all' end
return table.concat(wrong, '; ')
)lua";

// The server for the executor under test: the module loaded for native.
ValkeyServer::Options server_for(ExecutorChoice executor) {
  ValkeyServer::Options o;
  o.load_module = executor == ExecutorChoice::Native;
  return o;
}

class GroupsAcrossDaemons : public Faults, public ::testing::WithParamInterface<ExecutorChoice> {
 protected:
  GroupsAcrossDaemons() : Faults(server_for(GetParam())) {}

  // On the native run, the daemons' claims were the module's.
  void expect_the_executor_ran() const {
    if (GetParam() == ExecutorChoice::Native) EXPECT_GT(server.calls("emq.claim"), 0) << "no EMQ.CLAIM was run";
  }

  std::vector<std::string> put_grouped(const std::string& queue, const std::string& group, int n) {
    QueueKeys q(queue);
    std::vector<std::string> ids;
    std::vector<ScriptCall> batch;
    EnqueueOptions o;
    o.group = group;
    for (int i = 0; i < n; ++i) {
      ids.push_back(mint_job_id());
      batch.push_back(enqueue_call(q, ids.back(), group, o));
    }
    for (const Reply& r : x.eval_batch(batch)) EXPECT_EQ(decode_enqueue(r), EnqueueResult::Enqueued);
    return ids;
  }

  std::string books(const std::string& queue, const std::vector<std::string>& groups) {
    Command c{"EVAL", kBooksScript, "0", QueueKeys(queue).gq_root.substr(0, QueueKeys(queue).gq_root.size() - 3)};
    c.insert(c.end(), groups.begin(), groups.end());
    Reply r = x.command(c);
    return r.is_error() ? "the check failed: " + r.str : r.str;
  }

  std::vector<std::unique_ptr<EmqdProcess>> start_daemons(const std::string& queue, int concurrency,
                                                          std::int64_t lease_ms, const std::string& record,
                                                          const std::string& sleep_s) {
    std::vector<std::unique_ptr<EmqdProcess>> out;
    for (int i = 0; i < 3; ++i) {
      const std::string name = "d" + std::to_string(i);
      out.push_back(start_ready(fault_config_head(server.url(), {}) + "  - name: " + queue + "\n    concurrency: " +
                                std::to_string(concurrency) + "\n    lease_ms: " + std::to_string(lease_ms) + "\n" +
                                recording_handler(record, name, sleep_s)));
      EXPECT_TRUE(out.back()) << name;
    }
    return out;
  }
};

// Only the given jobs' intervals.
std::map<std::string, Interval> only(const std::map<std::string, Interval>& all, const std::vector<std::string>& ids) {
  std::map<std::string, Interval> out;
  for (const std::string& id : ids) {
    auto it = all.find(id);
    if (it != all.end()) out.emplace(id, it->second);
  }
  return out;
}

TEST_P(GroupsAcrossDaemons, AGroupsMaxActiveHoldsAcrossThreeDaemonsWhileOthersRun) {
  const std::string record = server.dir() + "/intervals";
  const QueueKeys q("gcap");
  group_set(x, q, "capped", "max_active=2");  // 0: nothing of the group pending yet
  ASSERT_EQ(x.command({"HGET", q.groups, "capped"}).str, "max_active=2");
  // Three daemons of 8 slots, all claiming before the jobs come: 24
  // places, of which the capped group may hold 2.
  auto daemons = start_daemons("gcap", 8, 30000, record, "0.25");
  std::vector<std::string> capped = put_grouped("gcap", "capped", 24);
  std::vector<std::string> free = put_grouped("gcap", "free", 24);
  ASSERT_TRUE(all_completed(x, "gcap", 48, seconds(120))) << daemons[0]->log();
  const std::map<std::string, Interval> all = read_intervals(record);
  ASSERT_EQ(all.size(), 48u);
  const auto [capped_most, capped_mean] = overlap(only(all, capped));
  const auto [free_most, free_mean] = overlap(only(all, free));
  EXPECT_LE(capped_most, 2) << "max_active 2 across three daemons of 8 slots";
  EXPECT_EQ(capped_most, 2) << "max_active 2 should let two of the group's jobs run at once";
  EXPECT_GT(free_most, 2) << "the uncapped group is not held to the other's cap";
  std::set<std::string> daemons_seen;
  for (const std::string& line : {std::string("d0"), std::string("d1"), std::string("d2")}) {
    if (ledger_lines_of(record, line) > 0) daemons_seen.insert(line);
  }
  EXPECT_GE(daemons_seen.size(), 2u) << "more than one daemon ran jobs, so the cap held across processes";
  EXPECT_EQ(books("gcap", {"capped", "free"}), "");
  expect_the_executor_ran();
  report_figures("group max_active 2, 3 daemons x 8 slots, " + std::string(to_string(GetParam())),
                 "capped_peak=" + std::to_string(capped_most) + " capped_mean=" + std::to_string(capped_mean) +
                     " free_peak=" + std::to_string(free_most) +
                     " daemons_that_ran_jobs=" + std::to_string(daemons_seen.size()));
}

TEST_P(GroupsAcrossDaemons, AGroupsRateHoldsAcrossThreeDaemons) {
  const std::string record = server.dir() + "/intervals";
  const QueueKeys q("grate");
  group_set(x, q, "paced", "rate_max=5 rate_window_ms=1000");  // 0: nothing of the group pending yet
  ASSERT_EQ(x.command({"HGET", q.groups, "paced"}).str, "rate_max=5 rate_window_ms=1000");
  auto daemons = start_daemons("grate", 8, 30000, record, "0");
  const std::int64_t began = x.server_time_ms();
  std::vector<std::string> paced = put_grouped("grate", "paced", 60);
  std::this_thread::sleep_for(seconds(5));
  // Read in this order, so every claim counted is inside the bound's time.
  const std::int64_t claimed = stats_of("grate").counters["claimed"];
  const std::int64_t ended = x.server_time_ms();
  const double elapsed_s = static_cast<double>(ended - began) / 1000.0;
  // A full bucket of 5, then 5 a second, whatever the daemons.
  const double bound = 5 + 5 * elapsed_s;
  EXPECT_LE(static_cast<double>(claimed), bound + 1) << "over " << elapsed_s << " s";
  EXPECT_GE(claimed, 10) << "the daemons should use the tokens as they come";
  // Starts in any one window of 1 s, by the handlers' own clocks: printed,
  // not asserted (a handler starts a spawn's time after its claim, so
  // starts may bunch under load where claims do not).
  std::vector<std::int64_t> starts;
  for (const auto& [id, i] : read_intervals(record)) starts.push_back(i.start);
  std::sort(starts.begin(), starts.end());
  std::size_t most_in_window = 0;
  for (std::size_t a = 0, b = 0; b < starts.size(); ++b) {
    while (starts[b] - starts[a] >= 1000000000) ++a;
    most_in_window = std::max(most_in_window, b - a + 1);
  }
  expect_the_executor_ran();
  report_figures("group rate 5/s, 3 daemons x 8 slots, 5 s, " + std::string(to_string(GetParam())),
                 "claimed=" + std::to_string(claimed) + " bound=" + std::to_string(bound) +
                     " most_started_in_1s=" + std::to_string(most_in_window));
}

TEST_P(GroupsAcrossDaemons, AKilledDaemonsJobsLeaveEveryGroupsCountsRightAfterTheReap) {
  const std::string record = server.dir() + "/intervals";
  const QueueKeys q("gkill");
  const std::vector<std::string> groups = {"capped", "free", "other"};
  group_set(x, q, "capped", "max_active=2");  // 0: nothing of the group pending yet
  ASSERT_EQ(x.command({"HGET", q.groups, "capped"}).str, "max_active=2");
  auto daemons = start_daemons("gkill", 4, 2000, record, "0.5");
  std::vector<std::string> ids;
  for (const std::string& g : groups) {
    std::vector<std::string> some = put_grouped("gkill", g, 12);
    ids.insert(ids.end(), some.begin(), some.end());
  }
  // Kill d0 while it holds jobs: once it has started some that have not ended.
  ASSERT_TRUE(wait_for(
      [&] {
        std::size_t started = 0, ended = 0;
        std::ifstream in(record);
        for (std::string line; std::getline(in, line);) {
          if (line.size() < 3 || line.compare(line.size() - 3, 3, " d0") != 0) continue;
          (line[0] == 's' ? started : ended) += 1;
        }
        return started > ended;
      },
      seconds(60)));
  daemons[0]->signal(SIGKILL);
  ASSERT_EQ(daemons[0]->wait_exit(seconds(5)), 128 + SIGKILL);
  std::vector<std::string> held;
  for (const Reply& r : x.command({"ZRANGE", q.active, "0", "-1"}).elements) held.push_back(r.str);
  // The books agree at every look while the survivors run and the reaper
  // sends the victim's expired jobs back to their groups.
  int looks = 0, wrong_looks = 0;
  std::string first_wrong;
  const bool done = wait_for(
      [&] {
        ++looks;
        const std::string wrong = books("gkill", groups);
        wrong_looks += !wrong.empty();
        if (!wrong.empty() && first_wrong.empty()) first_wrong = wrong;
        QueueStats s = stats_of("gkill");
        return s.counters["completed"] >= static_cast<std::int64_t>(ids.size()) && s.active == 0;
      },
      seconds(120));
  ASSERT_TRUE(done) << "books at the first look that was wrong: " << first_wrong << "\n" << daemons[1]->log();
  EXPECT_EQ(first_wrong, "") << "after " << looks << " looks";
  EXPECT_EQ(books("gkill", groups), "");
  QueueStats s = stats_of("gkill");
  EXPECT_GE(s.counters["reaped"], 1) << "the victim held a job whose lease the reaper found expired";
  for (const std::string& g : groups) {
    EXPECT_EQ(x.command({"EXISTS", q.gq(g), q.gact(g)}).integer, 0) << g << " holds no keys once idle";
  }
  EXPECT_EQ(x.command({"EXISTS", q.gidx}).integer, 0) << "nothing pending in any group";
  expect_the_executor_ran();
  report_figures("kill -9 of one of three daemons, grouped jobs, " + std::string(to_string(GetParam())),
                 "jobs=" + std::to_string(ids.size()) + " active_at_kill=" + std::to_string(held.size()) +
                     " reaped=" + std::to_string(s.counters["reaped"]) + " books_checked=" + std::to_string(looks) +
                     " times, wrong_at=" + std::to_string(wrong_looks));
}

INSTANTIATE_TEST_SUITE_P(BothExecutors, GroupsAcrossDaemons,
                         ::testing::Values(ExecutorChoice::Scripted, ExecutorChoice::Native),
                         [](const auto& p) { return std::string(to_string(p.param)); });

}  // namespace
}  // namespace echomq::test
