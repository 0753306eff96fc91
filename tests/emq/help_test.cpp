// emq --version, emq --help, emq COMMAND --help, and emq with no command.
#include <gtest/gtest.h>

#include "cli_fixture.h"
#include "echomq/keyspace.h"

namespace echomq::test {
namespace {

TEST(HelpCli, VersionNamesTheToolAndTheWire) {
  EmqResult r = run_emq({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("emq ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(std::string(kWireVersion)), std::string::npos) << r.out;
}

TEST(HelpCli, HelpListsEveryCommandAndExitCode) {
  EmqResult r = run_emq({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"enqueue", "stats", "inspect", "dead", "pause", "resume", "cancel", "jobs", "purge", "wait",
                           "queues", "forget", "EMQ_URL", "EMQ_PASSWORD", "--url", "Exit codes"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  }
  for (const char* code : {"  0  ", "  1  ", "  2  ", "  3  ", "  4  ", "  5  "}) {
    EXPECT_NE(r.out.find(code), std::string::npos) << "exit code" << code;
  }
}

TEST(HelpCli, HelpMapsTheWordsOfSidekiqBullmqAndAsynq) {
  EmqResult r = run_emq({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"Coming from Sidekiq / BullMQ / asynq", "Scheduled, Retries", "archived",
                           "waitUntilFinished()", "emq purge Q --state STATE", "emq dead retry Q ID"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  }
}

TEST(HelpCli, EachCommandHasItsHelp) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"enqueue", "--help"}, {"Usage: emq enqueue", "--id", "--lane", "--delay-ms", "--at", "--ndjson", "stdin"}},
      {{"stats", "--help"}, {"Usage: emq stats", "--json"}},
      {{"inspect", "--help"}, {"Usage: emq inspect", "--json", "payload_b64"}},
      {{"dead", "--help"}, {"Usage: emq dead", "list", "retry"}},
      {{"dead", "list", "--help"}, {"Usage: emq dead list", "--limit", "--json"}},
      {{"dead", "retry", "--help"}, {"Usage: emq dead retry", "--limit", "ID..."}},
      {{"dead", "delete", "--help"}, {"Usage: emq dead delete", "--all", "--yes"}},
      {{"jobs", "--help"}, {"Usage: emq jobs", "--state", "--limit", "--offset", "--json"}},
      {{"purge", "--help"}, {"Usage: emq purge", "--state", "--yes"}},
      {{"wait", "--help"}, {"Usage: emq wait", "--timeout", "keep_completed_s"}},
      {{"queues", "--help"}, {"Usage: emq queues", "--json"}},
      {{"forget", "--help"}, {"Usage: emq forget"}},
      {{"pause", "--help"}, {"Usage: emq pause", "--reason", "--for", "--by"}},
      {{"daemons", "--help"}, {"Usage: emq daemons", "--jobs", "--json", "quiet", "stop"}},
      {{"daemons", "quiet", "--help"}, {"Usage: emq daemons quiet", "--all", "--timeout", "5"}},
      {{"daemons", "stop", "--help"}, {"Usage: emq daemons stop", "--all", "--timeout"}},
      {{"resume", "--help"}, {"Usage: emq resume"}},
      {{"cancel", "--help"}, {"Usage: emq cancel", "4"}},
  };
  for (const auto& [args, words] : cases) {
    EmqResult r = run_emq(args);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    for (const std::string& w : words) EXPECT_NE(r.out.find(w), std::string::npos) << args[0] << ": " << w;
  }
}

TEST(HelpCli, NoCommandIsUsage) {
  EmqResult r = run_emq({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("enqueue"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("emq: a command is required"), std::string::npos) << r.err;

  r = run_emq({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("emq: ", 0), 0u) << r.err;
}

// A number past what its option can hold is a usage error naming the
// option and the text, for every numeric option (--offset
// 99999999999999999999 became 2^63-1 and was used). Refused while parsing:
// no server is asked.
TEST(UsageCli, ANumberOutOfRangeIsRefusedForEveryNumericOption) {
  const std::string huge = "99999999999999999999";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"jobs", "q", "--offset", huge},
           {"jobs", "q", "--limit", huge},
           {"dead", "list", "q", "--limit", huge},
           {"dead", "retry", "q", "--limit", huge},
           {"enqueue", "q", "x", "--lane", huge},
           {"enqueue", "q", "x", "--delay-ms", huge},
           {"wait", "q", "JOB_x", "--timeout", "1e999"},
       }) {
    EmqResult r = run_emq(args);
    const std::string& option = args[args.size() - 2];
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(option + " " + args.back().substr(0, 40) + " is out of range"), std::string::npos) << r.err;
  }
}

TEST(UsageCli, TextThatIsNotANumberIsRefusedNamingTheOption) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"jobs", "q", "--offset", "12abc"},
           {"enqueue", "q", "x", "--lane", "1.5"},
           {"wait", "q", "JOB_x", "--timeout", "nan"},
       }) {
    EmqResult r = run_emq(args);
    const std::string& option = args[args.size() - 2];
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_NE(r.err.find(option + " " + args.back() + " is not a"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace echomq::test
