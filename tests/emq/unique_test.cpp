// emq and unique jobs: who holds a key (emq jobs --unique), a job's key in
// emq inspect, a dead job that stays dead because another live job holds
// its key (emq dead retry, by id, all, --match), ndjson lines with keys,
// and a holder's id from the server printed escaped. The enqueue flags are
// run as docs/cli.md shows them (tests/emq/cli_doc_blocks_test.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/job_id.h"
#include "echomq/transitions.h"
#include "unique_options.h"

namespace echomq::test {
namespace {

class UniqueCli : public CliTest {
 protected:
  void holding(const std::string& id, const std::string& key, EnqueueOptions o = {}) {
    if (!o.job.unique) o = keyed(key);
    ASSERT_EQ(enqueue(x(), keys(), id, "p", o), EnqueueResult::Enqueued);
  }
  // Enqueued with the key, claimed and failed for good: dead, its key free.
  void dead_with(const std::string& id, const std::string& key) {
    holding(id, key);
    std::vector<ClaimedJob> jobs = claim(x(), keys(), {30000, 1, 0});
    ASSERT_EQ(jobs.size(), 1u);
    ASSERT_EQ(jobs[0].id, id);
    FailArgs permanent;
    permanent.permanent = true;
    ASSERT_EQ(fail(x(), keys(), {id, jobs[0].lease_epoch}, permanent), FailResult::Dead);
  }
};

TEST_F(UniqueCli, JobsUniqueNamesTheHolderOrSaysTheKeyIsFreeAndWhy) {
  EmqResult r = emq({"jobs", queue(), "--unique", "digest:ada"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "emq: unique key digest:ada of queue " + queue() + ": free\n");

  holding("JOB_holder", "digest:ada");
  r = emq({"jobs", queue(), "--unique", "digest:ada"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "JOB_holder\n");
  EXPECT_EQ(r.err,
            "emq: unique key digest:ada of queue " + queue() + ": held by JOB_holder (pending), mode finished\n");

  r = emq({"jobs", queue(), "--unique", "digest:ada", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["held"], true);
  EXPECT_EQ(j["holder"], "JOB_holder");
  EXPECT_EQ(j["state"], "pending");
  EXPECT_EQ(j["mode"], "finished");
  EXPECT_EQ(j["lock"], "JOB_holder");
  EXPECT_EQ(j["window_left_ms"], nullptr);

  // A row deleted by hand leaves the lock: a stale pointer, named, which
  // blocks nothing.
  x().command({"DEL", keys().row("JOB_holder")});
  x().command({"ZREM", keys().pending, "JOB_holder"});
  r = emq({"jobs", queue(), "--unique", "digest:ada", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["held"], false);
  EXPECT_EQ(j["holder"], nullptr);
  EXPECT_EQ(j["lock"], "JOB_holder");
  r = emq({"jobs", queue(), "--unique", "digest:ada"});
  EXPECT_NE(r.err.find("free: the lock points at JOB_holder, which is gone (a stale pointer"), std::string::npos)
      << r.err;
  r = emq({"enqueue", queue(), "p", "--id", "JOB_next", "--unique", "digest:ada"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "JOB_next\n");

  r = emq({"jobs", queue(), "--unique", "a b"});
  EXPECT_EQ(r.exit_code, 2);
  r = emq({"jobs", queue(), "--unique", "k", "--state", "dead"});
  EXPECT_EQ(r.exit_code, 2) << "--unique finds one job: no state";
}

TEST_F(UniqueCli, AWindowSaysHowLongItHasLeft) {
  holding("JOB_w", "ping", keyed("ping", std::nullopt, 600000));
  EmqResult r = emq({"jobs", queue(), "--unique", "ping", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "window");
  EXPECT_GT(j["window_left_ms"].get<std::int64_t>(), 0);
  EXPECT_LE(j["window_left_ms"].get<std::int64_t>(), 600000);
}

TEST_F(UniqueCli, InspectShowsTheKeyItsModeAndWhoHoldsIt) {
  holding("JOB_w", "report", keyed("report", std::nullopt, 600000));
  EmqResult r = emq({"inspect", queue(), "JOB_w"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nunique       report, mode window 600000 ms; holds the key\n"), std::string::npos) << r.out;
  r = emq({"inspect", queue(), "JOB_w", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["unique"],
            (nlohmann::json{{"key", "report"}, {"mode", "window"}, {"for_ms", 600000}, {"holder", "JOB_w"}}));

  // A dead job whose key another job took since.
  dead_with("JOB_dead", "digest:bob");
  holding("JOB_live", "digest:bob");
  r = emq({"inspect", queue(), "JOB_dead"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nunique       digest:bob, mode finished; the key is held by JOB_live (pending)\n"),
            std::string::npos)
      << r.out;
  j = nlohmann::json::parse(emq({"inspect", queue(), "JOB_dead", "--json"}).out);
  EXPECT_EQ(j["unique"]["holder"], "JOB_live");

  ASSERT_EQ(enqueue(x(), keys(), "JOB_plain", "p"), EnqueueResult::Enqueued);
  r = emq({"inspect", queue(), "JOB_plain"});
  EXPECT_EQ(r.out.find("unique"), std::string::npos) << "a job without a key shows no key:\n" << r.out;
}

TEST_F(UniqueCli, DeadRetryNamesTheHolderAndLeavesTheJobDead) {
  dead_with("JOB_dead", "sync:7");
  holding("JOB_live", "sync:7");
  EmqResult r = emq({"dead", "retry", queue(), "JOB_dead"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "0\n");
  EXPECT_NE(r.err.find("emq: JOB_dead stays dead: its unique key is held by JOB_live (pending)"), std::string::npos)
      << r.err;
  EXPECT_EQ(x().command({"HGET", keys().row("JOB_dead"), "state"}).str, "dead");

  r = emq({"dead", "retry", queue()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  EXPECT_NE(r.err.find("1 dead jobs stay dead: another live job holds their unique key"), std::string::npos) << r.err;

  r = emq({"dead", "retry", queue(), "--match", "p", "--yes"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  EXPECT_NE(r.err.find("retried 0; 1 stayed dead: another live job holds their unique key"), std::string::npos)
      << r.err;

  // Once the holder is gone, the dead job takes its key back.
  ASSERT_EQ(cancel(x(), keys(), "JOB_live"), CancelResult::Removed);
  r = emq({"dead", "retry", queue(), "JOB_dead"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(x().command({"GET", keys().uniq("sync:7")}).str, "JOB_dead");
}

TEST_F(UniqueCli, NdjsonLinesCarryKeysAndADuplicatePrintsItsHolder) {
  const std::string input =
      "{\"payload\":\"a\",\"id\":\"JOB_n1\",\"unique\":\"night\"}\n"
      "{\"payload\":\"b\",\"id\":\"JOB_n2\",\"unique\":\"night\"}\n"
      "{\"payload\":\"c\",\"id\":\"JOB_n3\",\"unique\":\"ping\",\"unique_for_ms\":600000}\n";
  EmqResult r = emq({"enqueue", queue(), "--ndjson", "-"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "JOB_n1\nJOB_n1\nJOB_n3\n");
  EXPECT_NE(r.err.find("line 2: duplicate: its unique key is held by JOB_n1 (pending); nothing was enqueued"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(x().command({"HGET", keys().row("JOB_n3"), "unique_mode"}).str, "window");
  EXPECT_EQ(x().command({"EXISTS", keys().row("JOB_n2")}).integer, 0);

  r = emq({"enqueue", queue(), "--ndjson", "-"}, "{\"payload\":\"a\",\"unique\":\"k\",\"unique_mode\":\"window\"}\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("stdin:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unique_mode window needs \"unique_for_ms\""), std::string::npos) << r.err;
}

TEST_F(UniqueCli, StatsCountTheDuplicatesAndReplaces) {
  holding("JOB_h", "k", keyed("k", UniqueMode::Replace));
  ASSERT_EQ(enqueue(x(), keys(), "JOB_d", "p", keyed("k")), EnqueueResult::Duplicate);
  ASSERT_EQ(enqueue(x(), keys(), "JOB_r", "p", keyed("k", UniqueMode::Replace)), EnqueueResult::Replaced);
  EmqResult r = emq({"stats", queue()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nunique keys of " + queue() + ": 1 duplicates, 1 replaced\n"), std::string::npos) << r.out;
  r = emq({"stats", queue(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["counters"]["duplicates"], 1);
  EXPECT_EQ(j[0]["counters"]["replaced"], 1);
}

// A holder's id is the server's text: whatever another writer put in the
// lock, emq prints it escaped.
TEST_F(UniqueCli, AHoldersIdFromTheServerIsPrintedEscaped) {
  const std::string evil = "JOB\x1b]0;owned\x07";
  x().command({"HSET", keys().row(evil), "state", "pending", "attempts", "0", "payload", "p", "unique", "k"});
  x().command({"SET", keys().uniq("k"), evil});
  EmqResult r = emq({"jobs", queue(), "--unique", "k"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(terminal_control_in(r.out), "");
  EXPECT_EQ(terminal_control_in(r.err), "");
  r = emq({"enqueue", queue(), "p", "--unique", "k"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(terminal_control_in(r.out), "");
  EXPECT_EQ(terminal_control_in(r.err), "");
  EXPECT_NE(r.out.find("JOB\\x1b]0;owned\\x07"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace echomq::test
