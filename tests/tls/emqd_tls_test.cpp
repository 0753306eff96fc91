// emqd over TLS, as a user runs it: a valkeys:// url and a valkey.tls
// block; every connection of the daemon (claim loops, renewer, reaper,
// wake-up subscriber) goes through it, since the server has no plaintext
// port. What --check-config and the log say when the files are wrong.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "echomq/executor.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emqd_process.h"
#include "ledger.h"
#include "tls_fixture.h"

namespace echomq::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// The valkey: block for `server` over TLS, with the test client's
// certificate unless told otherwise; `sections` (top-level YAML) and the
// queues follow.
std::string tls_config(const ValkeyServer& server, const std::string& tls_lines, const std::string& sections = "") {
  return "valkey:\n  url: " + server.url() + "\n  keyspace_events: true\n  tls:\n" + tls_lines +
         "metrics:\n  listen: \"\"\n"
         "log:\n  level: debug\n"
         "shutdown:\n  drain_timeout_s: 5\n" +
         sections + "queues:\n";
}

std::string good_tls() {
  return "    ca_file: " + pki().ca() + "\n    cert_file: " + pki().client().cert +
         "\n    key_file: " + pki().client().key + "\n";
}

std::int64_t completed(Executor& x, const std::string& q) { return stats(x, QueueKeys(q)).counters["completed"]; }

bool all_done(Executor& x, const std::string& q, std::int64_t n) {
  try {
    QueueStats s = stats(x, QueueKeys(q));
    return s.counters["completed"] >= n && s.pending + s.active + s.delayed == 0;
  } catch (const Error&) {
    return false;  // the server is away for a moment
  }
}

TEST(EmqdTls, JobsRunEndToEndOverMutualTls) {
  ValkeyServer server(tls_server(true));
  Executor x(server.options());
  const std::string ledger = server.dir() + "/ledger.txt";
  EmqdProcess d(tls_config(server, good_tls()) + "  - name: tls\n    concurrency: 4\n    handler:\n      type: exec\n" +
                ledger_handler_yaml(ledger, "a", "cat > /dev/null"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  EXPECT_THAT(d.log(), HasSubstr("connected to valkeys://127.0.0.1:" + std::to_string(server.port())));
  for (int i = 0; i < 100; ++i) enqueue(x, QueueKeys("tls"), mint_job_id(), "job " + std::to_string(i));
  ASSERT_TRUE(wait_for([&] { return all_done(x, "tls", 100); }, seconds(60))) << d.log();
  EXPECT_EQ(read_ledger(ledger).distinct(), 100u);
  // Every client the server sees came over TLS: it has no other TCP port.
  EXPECT_THAT(server.cli({"CLIENT", "LIST"}), HasSubstr("name=emqd"));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

TEST(EmqdTls, ServerRestartedMidRunLosesNothing) {
  ValkeyServer::Options o = tls_server(true);
  o.appendonly = true;
  ValkeyServer server(o);
  Executor x(server.options());
  const int kJobs = 200;
  for (int i = 0; i < kJobs; ++i) enqueue(x, QueueKeys("restart"), mint_job_id(), std::to_string(i));
  const std::string ledger = server.dir() + "/ledger.txt";
  EmqdProcess d(tls_config(server, good_tls()) +
                "  - name: restart\n    concurrency: 4\n    lease_ms: 5000\n    handler:\n      type: exec\n" +
                ledger_handler_yaml(ledger, "a", "sleep 0.01"));
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(wait_for([&] { return completed(x, "restart") >= 30; }, seconds(30))) << d.log();
  server.stop();
  std::this_thread::sleep_for(milliseconds(1500));  // the outage itself, not a wait for a condition
  server.start();
  ASSERT_TRUE(wait_for([&] { return all_done(x, "restart", kJobs); }, seconds(90))) << d.log();
  EXPECT_EQ(read_ledger(ledger).distinct(), static_cast<std::size_t>(kJobs));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

// The claim loop idles towards poll_max_ms (60 s here); a job enqueued
// then runs at once only if the keyspace subscriber, over TLS, wakes it.
// The reaper runs once a minute, so the claim loop's EVALSHA calls are the
// server's only ones and show how long the loop sleeps.
TEST(EmqdTls, TheSubscriberWakesAnIdleQueueOverTls) {
  ValkeyServer server(tls_server(true));
  Executor x(server.options());
  EmqdProcess d(tls_config(server, good_tls(), "reaper:\n  interval_ms: 60000\n") +
                "  - name: idle\n    poll_max_ms: 60000\n    handler:\n      type: exec\n"
                "      command: [\"/bin/true\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  ASSERT_TRUE(d.wait_log("wakeup: keyspace events switched on", seconds(10))) << d.log();
  const std::string channel = "__keyspace@0__:" + QueueKeys("idle").pending;
  ASSERT_TRUE(wait_for(
      [&] {
        return server.cli({"PUBSUB", "NUMSUB", channel}).find("\n1") != std::string::npos;
      },
      seconds(10)))
      << "the subscriber is not listening";

  auto claims = [&] {
    const std::string info = server.cli({"INFO", "commandstats"});
    const auto at = info.find("cmdstat_evalsha:calls=");
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + 22));
  };
  // Wait for a claim that ends a sleep of 4 s or more: the next sleep is
  // twice as long.
  using Clock = std::chrono::steady_clock;
  long long last = claims();
  auto last_at = Clock::now();
  milliseconds gap{0};
  ASSERT_TRUE(wait_for(
      [&] {
        const long long now = claims();
        if (now == last) return false;
        gap = std::chrono::duration_cast<milliseconds>(Clock::now() - last_at);
        last = now;
        last_at = Clock::now();
        return gap >= seconds(4);
      },
      seconds(40)))
      << "the claim loop never slept 4 s";
  const auto enqueued_at = Clock::now();
  enqueue(x, QueueKeys("idle"), mint_job_id(), "wake");
  ASSERT_TRUE(wait_for([&] { return completed(x, "idle") == 1; }, seconds(30))) << d.log();
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - enqueued_at);
  EXPECT_LT(took, gap) << "the job waited for the next poll (" << 2 * gap.count() << " ms away), not for a wake-up";
}

TEST(EmqdTls, AWrongCaIsLoggedWithTheKeyToFix) {
  ValkeyServer server(tls_server(true));
  EmqdProcess d(tls_config(server, "    ca_file: " + pki().other_ca() + "\n    cert_file: " + pki().client().cert +
                                       "\n    key_file: " + pki().client().key + "\n") +
                "  - name: q\n    handler:\n      type: exec\n      command: [\"/bin/true\"]\n");
  EXPECT_TRUE(d.wait_log("the CA in " + pki().other_ca() +
                             " did not sign the server's certificate: set valkey.tls.ca_file to the CA that did",
                         seconds(20)))
      << d.log();
  EXPECT_THAT(d.log(), HasSubstr("TLS handshake with 127.0.0.1:" + std::to_string(server.port()) + " failed"));
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(10)), 0) << d.log();
}

TEST(EmqdTls, AKeyFileOthersCanReadIsOneWarningNamingItsMode) {
  ValkeyServer server(tls_server(true));
  const std::string key = server.dir() + "/client.key";
  std::filesystem::copy_file(pki().client().key, key);
  ::chmod(key.c_str(), 0644);
  EmqdProcess d(tls_config(server, "    ca_file: " + pki().ca() + "\n    cert_file: " + pki().client().cert +
                                       "\n    key_file: " + key + "\n") +
                "  - name: q\n    handler:\n      type: exec\n      command: [\"/bin/true\"]\n");
  ASSERT_TRUE(d.wait_ready()) << d.log();
  const std::string log = d.log();
  const std::string warning = "the TLS key file " + key + " has mode 0644";
  ASSERT_THAT(log, HasSubstr(warning));
  EXPECT_EQ(log.find(warning), log.rfind(warning)) << "warned more than once";
}

TEST(EmqdTls, CheckConfigNamesFileLineAndKeyOfABadTlsFile) {
  ValkeyServer server(tls_server());
  const std::string dir = server.dir();
  std::ofstream(dir + "/not.pem") << "this is not a certificate\n";
  const std::string queue = "  - name: q\n    handler:\n      type: exec\n      command: [\"/bin/true\"]\n";
  auto check = [&](const std::string& tls_lines) {
    std::ofstream(dir + "/emqd.yaml") << tls_config(server, tls_lines) << queue;
    return run_program({emqd_binary(), "--check-config", "--config", dir + "/emqd.yaml"});
  };

  RunResult not_pem = check("    cert_file: " + dir + "/not.pem\n    key_file: " + pki().client().key + "\n");
  EXPECT_EQ(not_pem.code, 2);
  EXPECT_THAT(not_pem.err,
              HasSubstr(dir + "/emqd.yaml:5: valkey.tls.cert_file: " + dir + "/not.pem is not a PEM certificate"));

  RunResult mismatch =
      check("    cert_file: " + pki().client().cert + "\n    key_file: " + pki().stranger().key + "\n");
  EXPECT_EQ(mismatch.code, 2);
  EXPECT_THAT(mismatch.err, HasSubstr(dir + "/emqd.yaml:6: valkey.tls.key_file: " + pki().stranger().key +
                                      " is not the key of the certificate in " + pki().client().cert));

  RunResult missing = check("    ca_file: missing-ca.pem\n");
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("emqd.yaml:5: valkey.tls.ca_file: cannot read " + dir + "/missing-ca.pem"));

  RunResult good = check(good_tls() + "    server_name: localhost\n");
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_THAT(good.out,
              HasSubstr("verified against " + pki().ca() + " as localhost; client certificate " + pki().client().cert));
}

TEST(EmqdTls, ATlsBlockWithAPlaintextUrlIsRefused) {
  ValkeyServer server;
  const std::string dir = server.dir();
  std::ofstream(dir + "/emqd.yaml") << "valkey:\n  url: " << server.url() << "\n  tls:\n    ca_file: " << pki().ca()
                                    << "\nqueues:\n  - name: q\n    handler:\n      type: exec\n"
                                       "      command: [\"/bin/true\"]\n";
  RunResult r = run_program({emqd_binary(), "--check-config", "--config", dir + "/emqd.yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("valkey.tls: TLS needs a valkeys:// or rediss:// url"));
}

}  // namespace
}  // namespace echomq::test
