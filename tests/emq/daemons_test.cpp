// emq daemons against a registry other writers filled, as an attacker or a
// careless script would: text that would act on a terminal is printed
// escaped, a megabyte host is cut to its column, and a key of another type
// is named as a problem while every other daemon is still listed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/daemons.h"
#include "registry_beat.h"

namespace echomq::test {
namespace {

class DaemonsCli : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    x().command({"FLUSHALL"});  // the registry is one for the whole server
  }
  DaemonInfo beat(const std::string& host) { return daemon_beat(x(), host, queue()); }
  void write(const DaemonInfo& b) { write_beat(x(), b); }
};

// Every field of the registry is another writer's to fill: a host, state,
// version, queue and job progress with escapes, bells and forged lines.
TEST_F(DaemonsCli, ControlBytesInTheRegistryReachNoTerminal) {
  DaemonInfo b = beat("forged");
  b.host = "build-1\x1b]0;owned\x07";
  b.state = "run\r\nbuild-9 evil";
  b.version = "0.1.0\x1b[2J";
  b.queues = {"q\x1b[31m"};
  b.jobs = {{"q\x1b[31m", "JOB_\x1b[1A", 1, x().server_time_ms() - 1000, std::string("50%\x07\xc2\x9b")}};
  write(b);
  EmqResult r = emq({"daemons", "--jobs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(terminal_control_in(r.out), "");
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 5u) << "a header and a row, a blank line, a header and a job: " << r.out;
  for (const char* shown : {"build-1\\x1b]0;owned\\x07", "run\\r\\nbuild-9 evil", "0.1.0\\x1b[2J", "q\\x1b[31m"}) {
    EXPECT_NE(lines[1].find(shown), std::string::npos) << shown << " in " << lines[1];
  }
  EXPECT_NE(lines[4].find("JOB_\\x1b[1A"), std::string::npos) << lines[4];

  // A signal to an id that is no daemon names it escaped.
  r = emq({"daemons", "quiet", "gone\x1b[2J-1-abcdef"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(terminal_control_in(r.err), "");
  EXPECT_NE(r.err.find("gone\\x1b[2J-1-abcdef"), std::string::npos) << r.err;
}

// One host of a megabyte: its cell is cut, and no other line grows with it.
TEST_F(DaemonsCli, AMegabyteHostIsCutToItsColumn) {
  DaemonInfo big = beat("big");
  big.host = std::string(1 << 20, 'h');
  write(big);
  write(beat("small"));
  EmqResult r = emq({"daemons"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out.substr(0, 2000);
  for (const std::string& line : lines) EXPECT_LT(line.size(), 400u) << line.substr(0, 400);
  EXPECT_NE(r.out.find(std::string(61, 'h') + "..."), std::string::npos) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find(" small "), std::string::npos) << r.out.substr(0, 2000);

  r = emq({"daemons", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool whole = false;
  for (const auto& d : nlohmann::json::parse(r.out)) whole = whole || d["host"].get<std::string>().size() == 1u << 20;
  EXPECT_TRUE(whole) << "--json keeps the value whole";
}

// A member's hash of another type hides no other daemon: they are listed,
// and the broken key is named with what to do.
TEST_F(DaemonsCli, ADaemonKeyOfAnotherTypeIsNamedAndTheOthersListed) {
  const DaemonInfo a = beat("alpha"), b = beat("beta");
  write(a);
  write(b);
  const std::string broken = "gamma-1-0a0b0c";
  x().command({"ZADD", std::string(kDaemonsKey), std::to_string(x().server_time_ms()), broken});
  x().command({"SET", DaemonKeys(broken).hash, "oops"});
  x().command({"SET", DaemonKeys(b.id).work, "oops"});  // beta's work hash broken too

  EmqResult r = emq({"daemons", "--jobs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(a.id), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(b.id), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(DaemonKeys(broken).hash + " cannot be read: WRONGTYPE"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(DEL " + DaemonKeys(broken).hash + ")"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(DaemonKeys(b.id).work + " cannot be read"), std::string::npos) << r.err;

  r = emq({"daemons", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 2u) << r.out;

  // The registry itself of another type: nothing can be listed, and it says why.
  x().command({"DEL", std::string(kDaemonsKey)});
  x().command({"SET", std::string(kDaemonsKey), "oops"});
  r = emq({"daemons"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(std::string(kDaemonsKey) + " cannot be read: WRONGTYPE"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace echomq::test
