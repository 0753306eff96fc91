// What an operator's day throws at the daemon process, each against the real
// emqd and a real server: clients that hold the metrics port open, stray
// signals, a frozen server at shutdown, a config path that is no file, the
// embedded server's files under a loose umask, secrets in an inherited
// environment, and the traps a newcomer falls into first.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "fault_fixture.h"

namespace echomq::test {
namespace {

class ProcessOps : public Faults {};

std::string one_exec_queue(const std::string& name, const std::string& command, const std::string& more = "") {
  return "  - name: " + name + "\n    concurrency: 2\n    keep_completed_s: 300\n" + more +
         "    handler:\n      type: exec\n      command: " + command + "\n";
}

TEST_F(ProcessOps, ClientsHoldingTheMetricsPortOpenDoNotStarveHealthProbes) {
  FaultSettings f;
  f.metrics_port = free_loopback_port();
  auto d = start_ready(fault_config_head(server.url(), f) + one_exec_queue("q", "[\"/bin/cat\"]"));
  ASSERT_TRUE(d);
  ASSERT_TRUE(wait_for([&] { return http_get(f.metrics_port, "/healthz").status == 200; }, seconds(10)));

  // More half-sent requests than the server keeps connections for, held.
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 100; ++i) {
    slow.push_back(std::make_unique<Client>(f.metrics_port));
    slow.back()->send("GET /healthz HTTP/1.1\r\nHost: x\r\n");
  }
  int answered = 0;
  for (int probe = 0; probe < 7; ++probe) {
    Client c(f.metrics_port);
    c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    answered += c.read_all(seconds(1)).status == 200;  // a probe's usual timeout
  }
  EXPECT_EQ(answered, 7) << "health probes answered within 1 s while 100 clients held connections";
  report_figures("slow clients on the metrics port",
                 "held=100 probes=7 answered_within_1s=" + std::to_string(answered));
}

TEST_F(ProcessOps, SigusrOneAndTwoAreLoggedAndIgnored) {
  auto d = start_ready(fault_config_head(server.url(), {}) + one_exec_queue("q", "[\"/bin/cat\"]"));
  ASSERT_TRUE(d);
  d->signal(SIGUSR1);
  d->signal(SIGUSR2);
  ASSERT_TRUE(d->wait_log("received SIGUSR2", seconds(5))) << d->log();
  EXPECT_TRUE(d->running()) << d->log();
  const std::string id = put("q", "still here");
  ASSERT_TRUE(settled("q", 1)) << d->log();
  EXPECT_EQ(row("q", id)["result"], "still here");
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(20)), 0) << d->log();
  EXPECT_NE(d->log().find("received SIGUSR1"), std::string::npos);
}

TEST_F(ProcessOps, SigtermWithAFrozenServerWaitsForOutcomesOnlyTheFlushWindow) {
  FaultSettings f;
  f.drain_timeout_s = 30;  // the default: what the stop must not wait out
  f.command_timeout_ms = 1000;
  f.connect_timeout_ms = 1000;
  const std::string started = server.dir() + "/started";
  const std::string done = server.dir() + "/done";
  auto d = start_ready(fault_config_head(server.url(), f) +
                       "  - name: q\n    concurrency: 4\n    handler:\n      type: exec\n"
                       "      command: [\"/bin/sh\", \"-c\", \"echo $EMQ_JOB_ID >> " +
                       started + "; sleep 0.5; echo $EMQ_JOB_ID >> " + done + "\"]\n");
  ASSERT_TRUE(d);
  for (int i = 0; i < 4; ++i) put("q", "x");
  // Frozen once all four run in handlers, not once they are leased: a
  // claim the server ran but had not yet answered would leave a job leased
  // that no handler ever gets.
  ASSERT_TRUE(wait_for([&] { return read_ledger(started).distinct() == 4; }, seconds(10))) << d->log();
  server.freeze();
  // Every handler has ended: what is left are outcomes the server must take.
  ASSERT_TRUE(wait_for([&] { return read_ledger(done).distinct() == 4; }, seconds(10))) << d->log();
  const auto began = std::chrono::steady_clock::now();
  d->signal(SIGTERM);
  const std::optional<int> code = d->wait_exit(seconds(40));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  server.thaw();
  EXPECT_EQ(code, 0) << d->log();
  // The flush window (5 s) plus a call already waiting on the server.
  EXPECT_LT(took, 10) << "no handler ran: the drain must not wait drain_timeout_s for the server";
  const std::string log = d->log();
  EXPECT_NE(log.find("4 outcomes not yet recorded"), std::string::npos) << log;
  EXPECT_EQ(log.find("jobs still running"), std::string::npos) << "none was running: " << log;
  report_figures("SIGTERM, server frozen, no handler running",
                 "outcomes=4 stop_took_s=" + std::to_string(took) + " (drain_timeout_s 30)");
}

TEST(ProcessOpsConfig, ADeviceOrAnOversizedFileIsRefusedAndAPipeIsRead) {
  RunResult zero = run_program({emqd_binary(), "--check-config", "--config", "/dev/zero"});
  EXPECT_EQ(zero.code, 2) << zero.err;
  EXPECT_NE(zero.err.find("/dev/zero:1: (file): expected a YAML file, but this is a device"), std::string::npos)
      << zero.err;

  const std::string dir = std::filesystem::temp_directory_path() / ("emqd-cfg-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string big = dir + "/big.yaml";
  std::ofstream(big) << "# " << std::string(5 << 20, 'x') << "\n";
  RunResult huge = run_program({emqd_binary(), "--check-config", "--config", big});
  EXPECT_EQ(huge.code, 2) << huge.err;
  EXPECT_NE(huge.err.find("at most 4 MiB"), std::string::npos) << huge.err;

  // A pipe, as `--config <(...)` gives: read, up to the same cap.
  RunResult piped =
      run_program({"/bin/bash", "-c",
                   emqd_binary() + " --check-config --config <(printf 'queues:\\n  - name: piped\\n    handler:\\n"
                                   "      type: exec\\n      command: [/bin/cat]\\n')"});
  EXPECT_EQ(piped.code, 0) << piped.err;
  EXPECT_NE(piped.out.find("piped"), std::string::npos) << piped.out;
  RunResult flood =
      run_program({"/bin/bash", "-c",
                   emqd_binary() + " --check-config --config <(printf '# '; head -c 6000000 /dev/zero | tr '\\0' x)"});
  EXPECT_EQ(flood.code, 2) << flood.err;
  EXPECT_NE(flood.err.find("at most 4 MiB"), std::string::npos) << flood.err;
  std::filesystem::remove_all(dir);
}

TEST_F(ProcessOps, TheEmbeddedServerKeepsItsFilesPrivateWhateverTheUmask) {
  const std::string state = server.dir() + "/state";
  const mode_t old = ::umask(022);
  EmqdProcess d("valkey:\n  url: embedded\n  embedded_dir: " + state + "\nmetrics:\n  listen: \"\"\n" + "queues:\n" +
                one_exec_queue("q", "[\"/bin/cat\"]"));
  ::umask(old);
  ASSERT_TRUE(d.wait_ready(seconds(30))) << d.log();
  struct stat st {};
  ASSERT_EQ(::stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "the state directory";
  // The AOF appears once the server has written it.
  std::size_t files = 0;
  ASSERT_TRUE(wait_for(
      [&] {
        files = 0;
        for (const auto& e : std::filesystem::recursive_directory_iterator(state)) files += e.is_regular_file();
        return files >= 2;
      },
      seconds(10)));
  for (const auto& e : std::filesystem::recursive_directory_iterator(state)) {
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
    if (S_ISSOCK(st.st_mode)) continue;
    EXPECT_EQ(st.st_mode & 077, 0u) << e.path() << " is open to others: " << std::oct << (st.st_mode & 0777);
  }
  d.signal(SIGTERM);
  EXPECT_EQ(d.wait_exit(seconds(30)), 0) << d.log();
}

TEST_F(ProcessOps, InheritEnvPassesNoVariableThatCanCarryThePassword) {
  auto d = std::make_unique<EmqdProcess>(
      fault_config_head(server.url(), {}) + one_exec_queue("q", "[\"" EMQ_TEST_HANDLERS "/env_dump.sh\"]") +
          "      inherit_env: true\n",
      std::vector<std::string>{},
      std::vector<std::string>{"EMQ_PASSWORD=hunter2", "EMQ_URL=valkey://:hunter2@cache:6379/0",
                               "REDISCLI_AUTH=hunter2", "VALKEYCLI_AUTH=hunter2", "EMQ_TEST_HARMLESS=kept"});
  ASSERT_TRUE(d->wait_ready()) << d->log();
  const std::string id = put("q", "");
  ASSERT_TRUE(settled("q", 1)) << d->log();
  const std::string env = row("q", id)["result"];
  EXPECT_NE(env.find("EMQ_TEST_HARMLESS=kept"), std::string::npos) << "inherit_env passes the rest: " << env;
  EXPECT_EQ(env.find("hunter2"), std::string::npos) << env;
  for (const char* name : {"EMQ_PASSWORD=", "EMQ_URL=", "REDISCLI_AUTH=", "VALKEYCLI_AUTH="}) {
    EXPECT_EQ(env.find(std::string("\n") + name), std::string::npos) << name;
    EXPECT_NE(env.rfind(name, 0), 0u) << name;
  }
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(20)), 0);
}

TEST_F(ProcessOps, ARelativeScriptInTheCommandIsFoundBesideTheConfig) {
  // emqd starts in this test's directory; the config and its script live
  // elsewhere, as /etc/echomq/emqd.yaml and its worker would.
  auto d = std::make_unique<EmqdProcess>(fault_config_head(server.url(), {}) +
                                         one_exec_queue("q", "[\"/bin/sh\", \"worker.sh\"]"));
  // The config directory is the daemon's own temp dir: write the script there
  // before a job runs.
  std::ofstream(d->dir() + "/worker.sh") << "echo \"worker beside the config in $(pwd)\"\n";
  ASSERT_TRUE(d->wait_ready()) << d->log();
  ASSERT_NE(std::filesystem::current_path().string(), d->dir());
  const std::string id = put("q", "");
  ASSERT_TRUE(settled("q", 1)) << d->log();
  auto r = row("q", id);
  EXPECT_EQ(r["state"], "completed") << r["error"] << "\n" << d->log();
  EXPECT_EQ(r["result"], "worker beside the config in " + std::filesystem::canonical(d->dir()).string() + "\n");
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(20)), 0);
}

// The configuration of the README's first queue, as a newcomer copies it:
// the here-document its shell block writes to emqd.yaml.
std::string readme_example() {
  std::ifstream in(std::string(EMQ_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::string opening = "cat > emqd.yaml <<'EOF'\n";
  const std::size_t section = all.find("## A first queue");
  const std::size_t begin = all.find(opening, section);
  const std::size_t end = all.find("\nEOF\n", begin);
  if (section == std::string::npos || begin == std::string::npos || end == std::string::npos) return "";
  return all.substr(begin + opening.size(), end + 1 - begin - opening.size());
}

TEST(ProcessOpsConfig, TheReadmeExamplePassesCheckConfigAsCopied) {
  const std::string yaml = readme_example();
  ASSERT_FALSE(yaml.empty()) << "README.md: no `cat > emqd.yaml <<'EOF'` under 'A first queue'";
  const std::string path =
      std::filesystem::temp_directory_path() / ("emqd-readme-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << yaml;
  ::unsetenv("EMQ_VALKEY_PASSWORD");
  RunResult r = run_program({emqd_binary(), "--check-config", "--config", path});
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(ProcessOps, APluginsMaxOutputBytesIsConfigurableAndHeld) {
  const std::string sha256 = std::string(EMQ_LIB_DIR) + "/libemq_sha256.so";
  auto plugin_queue = [&](const std::string& name, int limit) {
    return "  - name: " + name +
           "\n    max_attempts: 1\n    keep_completed_s: 300\n    handler:\n      type: plugin\n" +
           "      path: " + sha256 + "\n      max_output_bytes: " + std::to_string(limit) + "\n";
  };
  auto d = start_ready(fault_config_head(server.url(), {}) + plugin_queue("fits", 64) + plugin_queue("tight", 10));
  ASSERT_TRUE(d);
  const std::string fits = put("fits", "abc");
  const std::string tight = put("tight", "abc");
  ASSERT_TRUE(settled("fits", 1)) << d->log();
  ASSERT_TRUE(settled("tight", 1)) << d->log();
  EXPECT_EQ(row("fits", fits)["result"].size(), 64u);
  auto r = row("tight", tight);
  EXPECT_EQ(r["state"], "dead");
  EXPECT_NE(r["error"].find("max_output_bytes"), std::string::npos) << r["error"];
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(20)), 0);
}

}  // namespace
}  // namespace echomq::test
