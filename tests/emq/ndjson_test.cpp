// emq enqueue --ndjson: many jobs, one JSON object per line, checked whole
// before anything is sent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "cli_fixture.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"

namespace echomq::test {
namespace {

class NdjsonCli : public CliTest {
 protected:
  std::string field(const std::string& id, const std::string& name) {
    auto row = inspect(x(), keys(), id);
    if (!row) return "<no row>";
    auto it = row->fields.find(name);
    return it == row->fields.end() ? "<absent>" : it->second;
  }
};

TEST_F(NdjsonCli, EachLineIsAJobAndEachIdIsPrintedInOrder) {
  const std::int64_t before = x().server_time_ms();
  const std::string input =
      "{\"payload\": \"hello\"}\n"
      "{\"payload_b64\": \"/wAB\", \"id\": \"JOB_bin\"}\n"
      "\n"
      "{\"payload\": {\"to\": \"ada\"}, \"lane\": -3}\n"
      "{\"payload\": \"soon\", \"delay_ms\": 60000, \"id\": \"JOB_soon\"}\n"
      "{\"payload\": \"then\", \"at\": \"2031-05-06T07:08:09.250Z\", \"id\": \"JOB_then\"}\r\n"
      "{\"payload\": \"ms\", \"at\": 1935817689251, \"id\": \"JOB_ms\"}";
  EmqResult r = emq({"enqueue", queue(), "--ndjson", "-"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ids = lines_of(r.out);
  ASSERT_EQ(ids.size(), 6u) << r.out;
  EXPECT_TRUE(minted_at_ms(ids[0]).has_value()) << ids[0];
  EXPECT_EQ(field(ids[0], "payload"), "hello");
  EXPECT_EQ(ids[1], "JOB_bin");
  EXPECT_EQ(field("JOB_bin", "payload"), std::string("\xff\x00\x01", 3));
  EXPECT_EQ(field(ids[2], "payload"), "{\"to\":\"ada\"}") << "a JSON value that is not a string is sent as JSON";
  EXPECT_EQ(x().command({"ZSCORE", keys().pending, ids[2]}).str, "-3");
  EXPECT_LT(ids[0], ids[2]) << "minted in line order";
  EXPECT_EQ(field("JOB_soon", "state"), "delayed");
  EXPECT_GE(std::stoll(x().command({"ZSCORE", keys().delayed, "JOB_soon"}).str), before + 60000);
  EXPECT_EQ(x().command({"ZSCORE", keys().delayed, "JOB_then"}).str, "1935817689250");
  EXPECT_EQ(x().command({"ZSCORE", keys().delayed, "JOB_ms"}).str, "1935817689251");
  EXPECT_NE(r.err.find("enqueued 6 jobs (0 duplicates)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("jobs/s"), std::string::npos) << r.err;
  std::vector<std::string> known = known_queues(x());
  EXPECT_NE(std::find(known.begin(), known.end(), queue()), known.end());
}

TEST_F(NdjsonCli, ABadLineIsNamedAndNothingIsEnqueued) {
  std::string input;
  for (int i = 0; i < 1500; ++i) input += "{\"payload\": \"ok\"}\n";
  input += "{\"payload\": \"x\", \"lane\": 5000}\n";   // line 1501
  input += "{\"payload\": \"y\", \"priority\": 1}\n";  // line 1502
  input += "{\"payload\": \"z\"\n";                    // line 1503
  input += "{\"payload_b64\": \"not base64!\"}\n";     // line 1504
  input += "{\"id\": \"JOB_x\"}\n";                    // line 1505
  input += "{\"payload\": \"ok\"}\n";
  EmqResult r = emq({"enqueue", queue(), "--ndjson", "-"}, input);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  for (const char* want :
       {"stdin:1501: \"lane\" must be an integer in -1000..1000", "stdin:1502: unknown key \"priority\"",
        "stdin:1503: not JSON", "stdin:1504: \"payload_b64\" is not base64", "stdin:1505: give exactly one of",
        "5 bad line(s) in stdin; nothing was enqueued"}) {
    EXPECT_NE(r.err.find(want), std::string::npos) << want << " in\n" << r.err;
  }
  EXPECT_EQ(stats(x(), keys()).pending, 0) << "the good lines before the bad one were not sent either";
}

TEST_F(NdjsonCli, ReadsAFileAndReportsDuplicates) {
  const std::string path = server().dir() + "/jobs.ndjson";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"payload\": \"a\", \"id\": \"JOB_f1\"}\n{\"payload\": \"b\", \"id\": \"JOB_f1\"}\n", f);
  std::fclose(f);
  EmqResult r = emq({"enqueue", queue(), "--ndjson", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "JOB_f1\nJOB_f1\n");
  EXPECT_NE(r.err.find("duplicate: JOB_f1 (line 2)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("enqueued 1 jobs (1 duplicates)"), std::string::npos) << r.err;
  EXPECT_EQ(field("JOB_f1", "payload"), "a");

  r = emq({"enqueue", queue(), "--ndjson", server().dir() + "/no-such-file"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
}

// A line's "group" sends its job to that group's turn, as --group does for
// one job; a line without one is ungrouped. A bad group is a bad line, and
// --group beside --ndjson is refused: each line says its own.
TEST_F(NdjsonCli, EachLineMayNameItsGroup) {
  const std::string input =
      "{\"payload\": \"a\", \"id\": \"JOB_a\", \"group\": \"cust.42\"}\n"
      "{\"payload\": \"b\", \"id\": \"JOB_b\", \"group\": \"cust.42\", \"lane\": -2}\n"
      "{\"payload\": \"c\", \"id\": \"JOB_c\", \"group\": \"acme\", \"delay_ms\": 60000}\n"
      "{\"payload\": \"d\", \"id\": \"JOB_d\"}\n";
  EmqResult r = emq({"enqueue", queue(), "--ndjson", "-"}, input);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "JOB_a\nJOB_b\nJOB_c\nJOB_d\n");
  EXPECT_EQ(field("JOB_a", "group"), "cust.42");
  EXPECT_EQ(field("JOB_c", "group"), "acme");
  EXPECT_EQ(field("JOB_d", "group"), "<absent>");
  EXPECT_EQ(x().command({"ZRANGE", keys().gq("cust.42"), "0", "-1"}).elements.size(), 2u);
  EXPECT_EQ(x().command({"ZSCORE", keys().gq("cust.42"), "JOB_b"}).str, "-2");
  EXPECT_EQ(x().command({"ZSCORE", keys().gidx, "cust.42"}).str, "2");
  EXPECT_EQ(field("JOB_c", "state"), "delayed") << "a delayed grouped job waits in delayed until promoted";
  EXPECT_EQ(x().command({"ZCARD", keys().pending}).integer, 1) << "only the ungrouped line";

  r = emq({"enqueue", queue(), "--ndjson", "-"},
          "{\"payload\": \"x\"}\n{\"payload\": \"y\", \"group\": \"a b\"}\n{\"payload\": \"z\", \"group\": 7}\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("stdin:2: \"group\" must be 1-128 bytes of 0-9 A-Z a-z _ . : -"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stdin:3: \"group\" must be"), std::string::npos) << r.err;
  r = emq({"enqueue", queue(), "--ndjson", "-", "--group", "acme"}, "{\"payload\": \"x\"}\n");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--ndjson takes each job's group from its line (\"group\"); drop --group"), std::string::npos)
      << r.err;
  EXPECT_EQ(stats(x(), keys()).pending, 3) << "nothing more was enqueued";
}

TEST_F(NdjsonCli, RefusesPerJobFlagsBesideIt) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"enqueue", queue(), "--ndjson", "-", "--lane", "2"},
           {"enqueue", queue(), "--ndjson", "-", "--id", "JOB_1"},
           {"enqueue", queue(), "--ndjson", "-", "--delay-ms", "5"},
           {"enqueue", queue(), "payload", "--ndjson", "-"},
       }) {
    EmqResult r = emq(args, "{\"payload\": \"a\"}\n");
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(stats(x(), keys()).pending, 0);
}

}  // namespace
}  // namespace echomq::test
