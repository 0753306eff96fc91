// Shared set-up for the fault suite: the e2e fixture (a real server, the
// real emqd), plus what a fault scenario needs on top of it: configs with
// short timeouts and a metrics port, many jobs enqueued at once, the daemon's
// /metrics read back, the books checked at the end, and one line of figures
// per scenario for docs/reliability.md.
#pragma once

#include <dirent.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../e2e/e2e_fixture.h"
#include "http_client.h"

namespace echomq::test {

// The knobs fault scenarios turn; everything else is emqd's default.
struct FaultSettings {
  int metrics_port = 0;  // 0: metrics.listen ""
  int connect_timeout_ms = 2000;
  int command_timeout_ms = 5000;
  std::string log_level = "info";
  int reaper_interval_ms = 100;
  double drain_timeout_s = 5;
  std::string valkey_extra;  // more lines under valkey:, each "  key: value\n"
};

// The top of a config for a server at `url`; queues follow.
inline std::string fault_config_head(const std::string& url, const FaultSettings& f) {
  return "valkey:\n  url: " + url + "\n  keyspace_events: true\n" +
         "  connect_timeout_ms: " + std::to_string(f.connect_timeout_ms) + "\n" +
         "  command_timeout_ms: " + std::to_string(f.command_timeout_ms) + "\n" + f.valkey_extra +
         "metrics:\n  listen: " + (f.metrics_port > 0 ? "127.0.0.1:" + std::to_string(f.metrics_port) : "\"\"") +
         "\nlog:\n  level: " + f.log_level + "\n" + "reaper:\n  interval_ms: " + std::to_string(f.reaper_interval_ms) +
         "\n" + "shutdown:\n  drain_timeout_s: " + std::to_string(f.drain_timeout_s) + "\n" + "queues:\n";
}

// One queue whose exec handler writes the ledger line and then runs `then`.
inline std::string ledger_queue(const std::string& name, int concurrency, std::int64_t lease_ms,
                                const std::string& ledger, const std::string& daemon, const std::string& then,
                                const std::string& more = "") {
  return "  - name: " + name + "\n    concurrency: " + std::to_string(concurrency) +
         "\n    lease_ms: " + std::to_string(lease_ms) + "\n" + more + "    handler:\n      type: exec\n" +
         ledger_handler_yaml(ledger, daemon, then);
}

// Ledger lines written under one daemon's name.
inline std::size_t ledger_lines_of(const std::string& path, const std::string& daemon) {
  std::ifstream in(path);
  std::size_t n = 0;
  const std::string suffix = " " + daemon;
  for (std::string line; std::getline(in, line);) {
    n += line.size() > suffix.size() && line.compare(line.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return n;
}

// One sample of a Prometheus text page: "name{labels} value". nullopt when
// the series is not on the page.
inline std::optional<double> sample_of(const std::string& page, const std::string& series) {
  std::istringstream lines(page);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 && line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

// The daemon's /metrics page, "" when it does not answer.
inline std::string scrape(int port) {
  try {
    HttpAnswer a = http_get(port, "/metrics");
    return a.status == 200 ? a.body : "";
  } catch (const std::exception&) {
    return "";
  }
}

inline double metric(int port, const std::string& series) { return sample_of(scrape(port), series).value_or(-1); }

// What /proc says about a live process.
inline long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

inline int open_fds(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
  ::closedir(d);
  return n;
}

// "fd -> target" per line, for a message about a leak.
inline std::string fd_targets(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  std::string out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[512] = {};
    const ssize_t n = ::readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
    out += std::string(e->d_name) + " -> " + (n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "?") + "\n";
  }
  ::closedir(d);
  return out;
}

// Ids whose "lease lost" a daemon logged ("queue=q job=ID ... lease lost").
inline std::set<std::string> lease_lost_ids(const std::string& log) {
  std::set<std::string> ids;
  static const std::regex line(R"(job=(JOB_[0-9A-Za-z_.:-]+)[^\n]*lease lost)");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it) ids.insert((*it)[1]);
  return ids;
}

// One line per scenario, the figures docs/reliability.md quotes. Also
// appended to $EMQ_FAULT_FIGURES when set, so a whole run can be collected.
inline void report_figures(const std::string& scenario, const std::string& figures) {
  const std::string line = "[figures] " + scenario + ": " + figures;
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  if (const char* path = std::getenv("EMQ_FAULT_FIGURES")) std::ofstream(path, std::ios::app) << line << "\n";
}

// The fault suite's ledger plugin (tests/faults/plugins/ledger.c) and the
// example no-op plugin, as the build puts them.
inline std::string ledger_plugin() { return std::string(EMQ_LIB_DIR) + "/libemq_fault_ledger.so"; }
inline std::string noop_plugin() { return std::string(EMQ_LIB_DIR) + "/libemq_noop.so"; }

// A queue handled by the ledger plugin.
inline std::string plugin_ledger_queue(const std::string& name, int concurrency, const std::string& ledger,
                                       const std::string& daemon) {
  return "  - name: " + name + "\n    concurrency: " + std::to_string(concurrency) +
         "\n    handler:\n      type: plugin\n      path: " + ledger_plugin() + "\n      config: { ledger: \"" +
         ledger + "\", daemon: \"" + daemon + "\" }\n";
}

// Starts emqd and waits until it is ready. nullptr when this build of emqd
// refuses the config's handler type (a kind not built in yet), so a test
// can fall back to exec and say so.
inline std::unique_ptr<EmqdProcess> start_ready(const std::string& yaml) {
  auto d = std::make_unique<EmqdProcess>(yaml);
  wait_for([&] { return d->log().find("ready:") != std::string::npos || !d->running(); }, seconds(30));
  if (!d->running() && d->log().find("no such handler type") != std::string::npos) return nullptr;
  EXPECT_TRUE(d->running()) << d->log();
  return d;
}

class Faults : public E2E {
 protected:
  using E2E::E2E;

  // `n` jobs, enqueued in pipelined batches; their ids, in order.
  std::vector<std::string> put_many(Executor& on, const std::string& queue, int n, const std::string& payload = "x") {
    QueueKeys q(queue);
    std::vector<std::string> ids;
    std::vector<ScriptCall> batch;
    for (int i = 0; i < n; ++i) {
      ids.push_back(mint_job_id());
      batch.push_back(enqueue_call(q, ids.back(), payload));
      if (batch.size() == 1000 || i == n - 1) {
        for (const Reply& r : on.eval_batch(batch)) EXPECT_EQ(decode_enqueue(r), EnqueueResult::Enqueued);
        batch.clear();
      }
    }
    return ids;
  }
  std::vector<std::string> put_many(const std::string& queue, int n, const std::string& payload = "x") {
    return put_many(x, queue, n, payload);
  }

  // Waits until `n` jobs completed and none is pending, active or delayed,
  // riding out a server that is away meanwhile.
  static bool all_completed(Executor& on, const std::string& queue, std::int64_t n, milliseconds deadline) {
    return wait_for(
        [&] {
          try {
            QueueStats s = stats(on, QueueKeys(queue));
            return s.counters["completed"] >= n && s.pending + s.active + s.delayed == 0;
          } catch (const Error&) {
            return false;
          }
        },
        deadline);
  }

  // The end of every scenario: each job ran and completed, nothing is left
  // in any set, no job was counted failed. Returns the ledger.
  LedgerCounts expect_all_completed(Executor& on, const std::string& queue, const std::vector<std::string>& ids,
                                    const std::string& ledger) {
    QueueStats s = stats(on, QueueKeys(queue));
    EXPECT_EQ(s.counters["completed"], static_cast<std::int64_t>(ids.size())) << queue;
    EXPECT_EQ(s.pending, 0) << queue;
    EXPECT_EQ(s.active, 0) << queue;
    EXPECT_EQ(s.delayed, 0) << queue;
    EXPECT_EQ(s.dead, 0) << queue;
    LedgerCounts c = read_ledger(ledger);
    EXPECT_EQ(c.distinct(), ids.size()) << "jobs that ran, by the ledger";
    std::size_t missing = 0;
    for (const std::string& id : ids) missing += c.runs.count(id) == 0;
    EXPECT_EQ(missing, 0u) << "enqueued jobs that never ran";
    return c;
  }
};

}  // namespace echomq::test
