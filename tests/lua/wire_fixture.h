// What every wire test shares: one real valkey-server per suite (with the
// emq module loaded), an executor on it (scripted, or native when ctest runs
// the suite as native.*: executor_under_test()), a queue of the test's own
// (so tests never share state), and plain reads of the rows and sets exactly
// as PROTOCOL.md names them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "echomq/errors.h"
#include "echomq/executor.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::test {

using Row = std::map<std::string, std::string>;
using ZSet = std::vector<std::pair<std::string, std::int64_t>>;

// An error reply as the executor surfaced it.
struct WireError {
  ErrorKind kind = ErrorKind::Reply;
  std::string message;
};

// A queue name unique in this process and readable in a failure message:
// t<N>-<Suite>.<Test>, cut to the 64 bytes a queue name may have.
inline std::string queue_name_for_this_test() {
  static std::atomic<int> counter{0};
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "t" + std::to_string(++counter) + "-";
  if (info != nullptr) name += std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) c = '-';
  }
  return name.substr(0, 64);
}

inline std::int64_t score_of(const std::string& s) { return static_cast<std::int64_t>(std::llround(std::stod(s))); }

class WireTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ValkeyServer::Options o;
    o.load_module = true;
    server_ = std::make_unique<ValkeyServer>(o);
  }
  static void TearDownTestSuite() { server_.reset(); }
  static ValkeyServer& server() { return *server_; }

  WireTest() : x(options_under_test()), q(queue_name_for_this_test()) {}

  static ConnectionOptions options_under_test() {
    ConnectionOptions o = server_->options();
    o.executor = executor_under_test();
    return o;
  }

  // A native run that quietly fell back to scripts would prove nothing.
  void SetUp() override {
    x.ensure_connected();
    ASSERT_EQ(x.native(), executor_under_test() == ExecutorChoice::Native);
  }

  // A plain command that must not fail.
  Reply cmd(const Command& argv) {
    Reply r = x.command(argv);
    EXPECT_FALSE(r.is_error()) << argv[0] << ": " << r.str;
    return r;
  }

  Row hash(const std::string& key) {
    Row out;
    Reply r = cmd({"HGETALL", key});
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
  }
  Row row(const std::string& id) { return hash(q.row_root + id); }

  ZSet zset(const std::string& key) {
    ZSet out;
    Reply r = cmd({"ZRANGE", key, "0", "-1", "WITHSCORES"});
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      out.emplace_back(r.elements[i].str, score_of(r.elements[i + 1].str));
    }
    return out;
  }
  std::vector<std::string> members(const std::string& key) {
    std::vector<std::string> out;
    for (auto& [member, score] : zset(key)) out.push_back(member);
    return out;
  }
  std::int64_t score(const std::string& key, const std::string& member) {
    Reply r = cmd({"ZSCORE", key, member});
    EXPECT_EQ(r.type, Reply::Type::String) << member << " is not in " << key;
    return r.type == Reply::Type::String ? score_of(r.str) : -1;
  }
  // A plain set's members, sorted.
  std::vector<std::string> set_members(const std::string& key) {
    std::vector<std::string> out;
    for (const Reply& m : cmd({"SMEMBERS", key}).elements) out.push_back(m.str);
    std::sort(out.begin(), out.end());
    return out;
  }
  bool exists(const std::string& key) { return cmd({"EXISTS", key}).integer == 1; }
  std::int64_t pttl(const std::string& key) { return cmd({"PTTL", key}).integer; }
  std::int64_t now_ms() { return x.server_time_ms(); }

  // Every key of this queue, rendered: the whole state a transition could
  // touch, for "nothing changes" checks. A TTL shows only as "expiring", since
  // its remaining time moves on by itself.
  std::map<std::string, std::string> snapshot() { return snapshot(q); }
  std::map<std::string, std::string> snapshot(const QueueKeys& of) {
    std::map<std::string, std::string> out;
    Reply keys = cmd({"KEYS", "emq:{" + of.queue + "}:*"});
    for (const Reply& k : keys.elements) {
      std::string type = cmd({"TYPE", k.str}).str;
      std::string text = type + ":";
      if (type == "hash") {
        for (auto& [f, v] : hash(k.str)) text += " " + f + "=" + v;
      } else if (type == "zset") {
        for (auto& [m, s] : zset(k.str)) text += " " + m + "@" + std::to_string(s);
      } else if (type == "set") {
        for (const std::string& m : set_members(k.str)) text += " " + m;
      } else {
        text += " (unexpected type)";
      }
      if (pttl(k.str) > 0) text += " (expiring)";
      out[k.str] = text;
    }
    return out;
  }

  Reply raw(const ScriptCall& call) { return x.eval(call); }

  // Runs a call that the wire must refuse; fails the test if it does not.
  WireError eval_error(const ScriptCall& call) {
    try {
      Reply r = x.eval(call);
      ADD_FAILURE() << script_info(call.script).name << " answered instead of refusing (type "
                    << static_cast<int>(r.type) << ", integer " << r.integer << ")";
    } catch (const Error& e) {
      return {e.kind(), e.what()};
    }
    return {};
  }

  // Each call must be refused with EMQARG and a text that holds its words.
  struct ArgCase {
    ScriptCall call;
    std::string says;  // the text after "EMQARG "
  };
  void expect_arg_errors(const std::vector<ArgCase>& cases) {
    for (const ArgCase& c : cases) {
      WireError e = eval_error(c.call);
      EXPECT_EQ(e.kind, ErrorKind::Arg) << e.message;
      EXPECT_NE(e.message.find("EMQARG " + c.says), std::string::npos) << e.message;
    }
  }

  // Seeding through the transitions themselves, so every state a test starts
  // from is one the wire can reach.
  std::string enqueue_new(const std::string& payload = "payload", const EnqueueOptions& o = {}) {
    std::string id = mint_job_id();
    EXPECT_EQ(enqueue(x, q, id, payload, o), EnqueueResult::Enqueued);
    return id;
  }
  // Claims exactly one job and checks it is the one expected.
  Lease claim_one(const std::string& expected_id, std::int64_t lease_ms = 30000) {
    std::vector<ClaimedJob> jobs = claim(x, q, {lease_ms, 1, 0});
    EXPECT_EQ(jobs.size(), 1u);
    if (jobs.empty()) return {};
    EXPECT_EQ(jobs[0].id, expected_id);
    return {jobs[0].id, jobs[0].lease_epoch};
  }
  Lease make_active(const std::string& payload = "payload", std::int64_t lease_ms = 30000) {
    return claim_one(enqueue_new(payload), lease_ms);
  }
  std::string make_delayed(const std::string& payload = "payload") {
    return enqueue_new(payload, {0, now_ms() + 3600000});
  }
  std::string make_dead(const std::string& payload = "payload") {
    Lease l = make_active(payload);
    EXPECT_EQ(fail(x, q, l, {"broken", 5, 0, true}), FailResult::Dead);
    return l.id;
  }
  std::string make_completed_kept(const std::string& payload = "payload") {
    Lease l = make_active(payload);
    EXPECT_EQ(complete(x, q, l, 600000, "kept result"), CompleteResult::Completed);
    return l.id;
  }

  std::map<std::string, std::int64_t> counters() { return stats(x, q).counters; }

  Executor x;
  QueueKeys q;

 private:
  inline static std::unique_ptr<ValkeyServer> server_;
};

// The counters of emq:{q}:stats, all zero but those given.
inline std::map<std::string, std::int64_t> counters_with(std::map<std::string, std::int64_t> set) {
  std::map<std::string, std::int64_t> all{{"claimed", 0}, {"completed", 0}, {"retried", 0},    {"dead", 0},
                                          {"reaped", 0},  {"released", 0},  {"duplicates", 0}, {"replaced", 0}};
  for (auto& [k, v] : set) all[k] = v;
  return all;
}

}  // namespace echomq::test
