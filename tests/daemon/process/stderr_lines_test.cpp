// StderrLines: one log line per stderr line (4 KiB pieces past that), and
// the last 4 KiB as the error text.
#include "process/stderr_lines.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "process_probe.h"

namespace echomq::daemon {
namespace {

using ::testing::ElementsAre;

TEST(StderrLines, LogsEachLineWithQueueAndJobWhateverTheReadBoundaries) {
  test::LogCapture logs;
  StderrLines lines("emails", "JOB_1");
  lines.feed("first li");
  lines.feed("ne\nsecond line\r\n\nthi");
  lines.feed("rd");
  lines.finish();
  EXPECT_THAT(
      logs.lines(),
      ElementsAre("info queue=emails job=JOB_1 stderr: first line", "info queue=emails job=JOB_1 stderr: second line",
                  "info queue=emails job=JOB_1 stderr: ", "info queue=emails job=JOB_1 stderr: third"));
}

TEST(StderrLines, SplitsLinesLongerThanFourKiB) {
  test::LogCapture logs;
  StderrLines lines("q", "J");
  const std::string exact(StderrLines::kMaxLine, 'a');
  lines.feed(exact + "\n");
  lines.feed(std::string(StderrLines::kMaxLine, 'b') + "bb");
  lines.feed("b\n");
  lines.finish();
  const std::string prefix = "info queue=q job=J stderr: ";
  EXPECT_THAT(logs.lines(),
              ElementsAre(prefix + exact, prefix + std::string(StderrLines::kMaxLine, 'b'), prefix + "bbb"));
}

TEST(StderrLines, TailIsTheLastFourKiBWithoutTrailingWhitespace) {
  test::LogCapture logs;
  StderrLines lines("q", "J");
  EXPECT_EQ(lines.tail(), "");
  std::string all;
  for (int i = 0; i < 2000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    all += line;
    lines.feed(line);
  }
  std::string expected = all.substr(all.size() - StderrLines::kTailBytes);
  expected.pop_back();  // the final newline
  EXPECT_EQ(lines.tail(), expected);

  StderrLines big("q", "J");
  big.feed(std::string(100000, 'x') + "end\n\n  ");
  EXPECT_EQ(big.tail(), std::string(StderrLines::kTailBytes - 7, 'x') + "end");
}

}  // namespace
}  // namespace echomq::daemon
