// Unique jobs under load and under kill -9, with the real emqd: eight
// producers race twenty thousand unique enqueues over a hundred keys while
// two daemons run them, and a daemon killed mid-job leaves a key its
// holder, reaped to dead, no longer holds.
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "echomq/events.h"
#include "echomq/scripts.h"
#include "fault_fixture.h"

namespace echomq::test {
namespace {

class UniqueFaults : public Faults {
 protected:
  // The queue's live jobs (pending, delayed, active) by unique key, read in
  // one atomic step: the sample the race's bound is checked on.
  static std::map<std::string, int> live_per_key(Executor& on, const QueueKeys& q) {
    static const std::string read = R"(
      local out = {}
      for i = 1, 3 do
        for _, id in ipairs(redis.call('ZRANGE', KEYS[i], 0, -1)) do
          local u = redis.call('HGET', KEYS[4] .. id, 'unique')
          if u then out[#out + 1] = u end
        end
      end
      return out)";
    Reply r = on.command({"EVAL", read, "4", q.pending, q.delayed, q.active, q.row_root});
    std::map<std::string, int> n;
    for (const Reply& k : r.elements) ++n[k.str];
    return n;
  }

  // Each job's completion, by the server's clock: the ms of its completed
  // entry in the queue's stream.
  static std::map<std::string, std::int64_t> completions(Executor& on, const QueueKeys& q) {
    std::map<std::string, std::int64_t> out;
    Reply r = on.command({"XRANGE", q.events, "-", "+"});
    for (const Reply& e : r.elements) {
      const std::int64_t ms = std::stoll(e.elements[0].str.substr(0, e.elements[0].str.find('-')));
      const Reply& f = e.elements[1];
      std::string event, id;
      for (std::size_t i = 0; i + 1 < f.elements.size(); i += 2) {
        if (f.elements[i].str == "event") event = f.elements[i + 1].str;
        if (f.elements[i].str == "id") id = f.elements[i + 1].str;
      }
      if (event == "completed") out[id] = ms;
    }
    return out;
  }
};

// What one producer's enqueue met, with the server's time it ran at.
struct Attempt {
  std::string key;
  std::string id;
  EnqueueResult result = EnqueueResult::Enqueued;
  KeyHolder holder;
  std::int64_t server_ms = 0;
};

TEST_F(UniqueFaults, EightProducersAndTwoDaemonsNeverRunTwoLiveJobsUnderOneKey) {
  const int kProducers = 8, kEnqueues = 20000, kKeys = 100, kConcurrency = 8;
  const QueueKeys q("race");
  const std::int64_t kEvents = 10000000;  // the whole run's entries, for completion times
  auto config = [&](const std::string& name) {
    const std::string more = "    events: " + std::to_string(kEvents) + "\n";
    if (std::filesystem::exists(ledger_plugin())) {
      return fault_config_head(server.url(), {}) + plugin_ledger_queue("race", kConcurrency, ledger_path(), name) +
             more;
    }
    return fault_config_head(server.url(), {}) +
           ledger_queue("race", kConcurrency, 30000, ledger_path(), name, ":", more);
  };
  EmqdProcess a(config("a")), b(config("b"));
  ASSERT_TRUE(a.wait_ready()) << a.log();
  ASSERT_TRUE(b.wait_ready()) << b.log();
  ASSERT_TRUE(wait_for(
      [&] {
        return x.command({"HGET", q.meta, "events"}).str == std::to_string(kEvents);
      },
      seconds(10)));

  // Each enqueue runs in one MULTI with TIME, so its server time is known.
  const std::string enqueue_text = script_source(Script::Enqueue);
  std::atomic<bool> producing{true};
  std::mutex m;
  std::vector<Attempt> attempts;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      Executor on(server.options());
      std::mt19937 rng(static_cast<unsigned>(p));
      std::vector<Attempt> mine;
      for (int i = 0; i < kEnqueues / kProducers; ++i) {
        Attempt t;
        t.key = "k" + std::to_string(std::uniform_int_distribution<int>(0, kKeys - 1)(rng));
        t.id = mint_job_id();
        EnqueueOptions o;
        o.job.unique = UniqueKey{t.key, std::nullopt, 0};
        const ScriptCall call = with_events(enqueue_call(q, t.id, "x", o), q, kEvents);
        Command eval = {"EVAL", enqueue_text, std::to_string(call.keys.size())};
        eval.insert(eval.end(), call.keys.begin(), call.keys.end());
        eval.insert(eval.end(), call.args.begin(), call.args.end());
        std::vector<Reply> r = on.pipeline({{"MULTI"}, {"TIME"}, eval, {"EXEC"}});
        const Reply& exec = r.back();
        ASSERT_EQ(exec.elements.size(), 2u) << exec.str;
        t.server_ms =
            std::stoll(exec.elements[0].elements[0].str) * 1000 + std::stoll(exec.elements[0].elements[1].str) / 1000;
        t.result = decode_enqueue(exec.elements[1], &t.holder);
        mine.push_back(std::move(t));
      }
      std::lock_guard<std::mutex> lock(m);
      attempts.insert(attempts.end(), mine.begin(), mine.end());
    });
  }
  // Sampled while the producers run and the daemons drain.
  int samples = 0, most_live = 0;
  std::thread sampler([&] {
    Executor on(server.options());
    while (producing) {
      for (const auto& [key, n] : live_per_key(on, q)) most_live = std::max(most_live, n);
      ++samples;
    }
  });
  for (std::thread& t : producers) t.join();
  std::int64_t enqueued = 0, duplicates = 0;
  for (const Attempt& t : attempts) enqueued += t.result == EnqueueResult::Enqueued;
  duplicates = static_cast<std::int64_t>(attempts.size()) - enqueued;
  ASSERT_TRUE(all_completed(x, "race", enqueued, seconds(240))) << a.log() << b.log();
  producing = false;
  sampler.join();

  EXPECT_EQ(static_cast<int>(attempts.size()), kEnqueues);
  EXPECT_LE(most_live, 1) << "two live jobs held one key at a sample";
  EXPECT_GT(samples, 10);
  EXPECT_GT(duplicates, 0) << "the race should have met held keys";
  EXPECT_EQ(stats_of("race").counters["duplicates"], duplicates);

  // Every key is taken again by the first enqueue after its holder
  // finished: a duplicate only ever met a holder still to finish.
  const std::map<std::string, std::int64_t> done = completions(x, q);
  int after_finish = 0;
  for (const Attempt& t : attempts) {
    if (t.result == EnqueueResult::Enqueued) continue;
    EXPECT_TRUE(t.holder.state == "pending" || t.holder.state == "active" || t.holder.state == "delayed")
        << t.holder.id << " " << t.holder.state;
    auto it = done.find(t.holder.id);
    ASSERT_NE(it, done.end()) << t.holder.id << " never completed";
    after_finish += t.server_ms > it->second;
  }
  EXPECT_EQ(after_finish, 0) << "duplicates refused by a holder that had finished";

  // Each enqueued job ran, once; no lock is left; each key is free.
  LedgerCounts c = read_ledger(ledger_path());
  EXPECT_EQ(c.distinct(), static_cast<std::size_t>(enqueued));
  EXPECT_EQ(c.rerun(), 0u);
  EXPECT_EQ(x.command({"KEYS", q.uniq_root + "*"}).elements.size(), 0u) << "a finished job kept its lock";
  int taken = 0;
  for (int k = 0; k < kKeys; ++k) {
    EnqueueOptions o;
    o.job.unique = UniqueKey{"k" + std::to_string(k), std::nullopt, 0};
    taken += enqueue(x, q, mint_job_id(), "after", o) == EnqueueResult::Enqueued;
  }
  EXPECT_EQ(taken, kKeys);
  report_figures("unique: 8 producers, 2 daemons, 100 keys",
                 "enqueues=" + std::to_string(attempts.size()) + " enqueued=" + std::to_string(enqueued) +
                     " duplicates=" + std::to_string(duplicates) + " jobs_run=" + std::to_string(c.lines) +
                     " most_live_per_key=" + std::to_string(most_live) + " samples=" + std::to_string(samples));
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  EXPECT_EQ(a.wait_exit(seconds(15)), 0) << a.log();
  EXPECT_EQ(b.wait_exit(seconds(15)), 0) << b.log();
}

TEST_F(UniqueFaults, AJobReapedToDeadAfterKillNineFreesItsKey) {
  const QueueKeys q("reaped");
  auto config = [&](const std::string& name) {
    return fault_config_head(server.url(), {}) +
           ledger_queue("reaped", 1, 1000, ledger_path(), name, "sleep 600", "    max_attempts: 1\n");
  };
  EnqueueOptions o;
  o.job.unique = UniqueKey{"nightly", std::nullopt, 0};
  const std::string id = mint_job_id();
  ASSERT_EQ(enqueue(x, q, id, "x", o), EnqueueResult::Enqueued);
  auto victim = std::make_unique<EmqdProcess>(config("victim"));
  ASSERT_TRUE(wait_for(
      [&] {
        return x.command({"HGET", q.row(id), "state"}).str == "active";
      },
      seconds(20)))
      << victim->log();
  victim->signal(SIGKILL);
  ASSERT_EQ(victim->wait_exit(seconds(5)), 128 + SIGKILL);
  EnqueueOptions again = o;
  KeyHolder h;
  EXPECT_EQ(decode_enqueue(x.eval(enqueue_call(q, mint_job_id(), "x", again)), &h), EnqueueResult::Duplicate)
      << "the killed daemon's job still holds the key until it is reaped";
  EXPECT_EQ(h.id, id);

  // The survivor's reaper finds the lease expired: one attempt, so dead.
  EmqdProcess survivor(fault_config_head(server.url(), {}) +
                       ledger_queue("reaped", 1, 1000, ledger_path(), "survivor", ":", "    max_attempts: 1\n"));
  ASSERT_TRUE(wait_for(
      [&] {
        return x.command({"HGET", q.row(id), "state"}).str == "dead";
      },
      seconds(20)))
      << survivor.log();
  EXPECT_EQ(x.command({"EXISTS", q.uniq("nightly")}).integer, 0) << "reap released the key in the same step";
  const std::string next = mint_job_id();
  EXPECT_EQ(enqueue(x, q, next, "x", o), EnqueueResult::Enqueued);
  ASSERT_TRUE(wait_for([&] { return stats_of("reaped").counters["completed"] == 1; }, seconds(20))) << survivor.log();
  survivor.signal(SIGTERM);
  EXPECT_EQ(survivor.wait_exit(seconds(15)), 0) << survivor.log();
}

}  // namespace
}  // namespace echomq::test
