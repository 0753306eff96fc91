// Interop: runtimes that share no code with libechomq speak emq/1 through
// the raw lua/ files, and our library serves their jobs, and they ours.
// Peer one is Python (Debian's python3 with its `redis` module, EVALSHA of
// the file text, tests/lua/peer_speaker.py); peer two is valkey-cli --eval.
#include <nlohmann/json.hpp>

#include "emqd_process.h"
#include "wire_fixture.h"

namespace echomq::test {
namespace {

const std::string kLuaDir = EMQ_LUA_DIR;
const std::string kPython = "/usr/bin/python3";
const std::string kPeer = kLuaDir + "/../tests/lua/peer_speaker.py";

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string every_byte() {
  std::string s;
  for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
  return s;
}

class Interop : public WireTest {
 protected:
  RunResult python(std::vector<std::string> args) {
    std::vector<std::string> argv{kPython, kPeer, "--port", std::to_string(server().port()), "--lua-dir", kLuaDir};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run_program(argv);
    EXPECT_EQ(r.code, 0) << "peer_speaker.py failed: " << r.err;
    return r;
  }
  // valkey-cli --eval FILE key... , arg...: EVAL of the file's text.
  RunResult cli_eval(const std::string& script, const std::vector<std::string>& keys,
                     const std::vector<std::string>& args) {
    std::vector<std::string> argv{find_program("valkey-cli"), "-p", std::to_string(server().port()), "--eval",
                                  kLuaDir + "/" + script + ".lua"};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.push_back(",");
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = run_program(argv);
    EXPECT_EQ(r.code, 0) << "valkey-cli failed: " << r.err;
    return r;
  }
  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      out.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  void SetUp() override {
    if (::access(kPython.c_str(), X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
    ASSERT_FALSE(find_program("valkey-cli").empty()) << "valkey-cli is not on PATH";
  }
};

TEST_F(Interop, PythonEnqueuesOurLibraryClaimsAndCompletes) {
  const std::string id = "JOB_py-" + q.queue.substr(0, 40);
  const std::string payload = every_byte();
  RunResult r = python({"enqueue", q.queue, id, hex(payload)});
  EXPECT_EQ(r.out, "1\n");
  // The peer wrote exactly the seed's three-field row.
  EXPECT_EQ(row(id), (Row{{"state", "pending"}, {"attempts", "0"}, {"payload", payload}}));

  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
  EXPECT_TRUE(jobs[0].payload == payload) << "payload changed between the runtimes";
  EXPECT_EQ(jobs[0].attempt, 1);
  EXPECT_EQ(complete(x, q, {id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);
  EXPECT_FALSE(exists(q.row_root + id));
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"completed", 1}}));

  // Once its row is gone the id is free again; while a row lives, the
  // peer's enqueue is the same script's duplicate no-op.
  EXPECT_EQ(python({"enqueue", q.queue, id, hex("again")}).out, "1\n");
  EXPECT_EQ(python({"enqueue", q.queue, id, hex("third")}).out, "0\n");
  EXPECT_EQ(row(id).at("payload"), "again");
}

TEST_F(Interop, OurLibraryEnqueuesPythonClaimsAndCompletes) {
  const std::string payload = std::string("from C++\0", 9) + every_byte();
  std::string id = enqueue_new(payload);
  RunResult r = python({"claim-complete", q.queue, "60000", "done by python"});
  nlohmann::json reply = nlohmann::json::parse(r.out);
  EXPECT_EQ(reply["id"], id);
  EXPECT_EQ(reply["payload_hex"], hex(payload));
  EXPECT_EQ(reply["attempts"], 1);
  EXPECT_EQ(reply["lease_epoch"], 1);
  EXPECT_EQ(reply["complete"], 1);

  EXPECT_EQ(row(id), (Row{{"state", "completed"},
                          {"attempts", "1"},
                          {"payload", payload},
                          {"lease_epoch", "1"},
                          {"result", "done by python"}}));
  EXPECT_GT(pttl(q.row_root + id), 0);
  EXPECT_EQ(zset(q.active), ZSet{});
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"completed", 1}}));
  // Our fencing holds against the peer's settle: the lease is spent.
  EXPECT_EQ(complete(x, q, {id, 1}, 0, ""), CompleteResult::LeaseLost);
}

TEST_F(Interop, ValkeyCliEnqueuesOurLibraryClaims) {
  const std::string id = "JOB_cli-" + q.queue.substr(0, 40);
  RunResult r = cli_eval("enqueue", {q.row_root + id, q.pending}, {id, "from the shell"});
  EXPECT_EQ(r.out, "1\n");
  std::vector<ClaimedJob> jobs = claim(x, q, {30000, 1, 0});
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, id);
  EXPECT_EQ(jobs[0].payload, "from the shell");
  EXPECT_EQ(complete(x, q, {id, jobs[0].lease_epoch}, 0, ""), CompleteResult::Completed);
}

TEST_F(Interop, OurLibraryEnqueuesValkeyCliClaimsAndCompletes) {
  std::string id = enqueue_new("for the shell");
  RunResult claimed =
      cli_eval("claim", {q.pending, q.active, q.delayed, q.meta, q.stats, q.row_root}, {"30000", "1", "0"});
  EXPECT_EQ(lines(claimed.out), (std::vector<std::string>{id, "for the shell", "1", "1"}));
  EXPECT_EQ(row(id).at("state"), "active");

  RunResult done = cli_eval("complete", {q.row_root + id, q.active, q.stats}, {id, "1", "0", "shell result"});
  EXPECT_EQ(done.out, "1\n");
  EXPECT_FALSE(exists(q.row_root + id));
  EXPECT_EQ(counters(), counters_with({{"claimed", 1}, {"completed", 1}}));
}

}  // namespace
}  // namespace echomq::test
