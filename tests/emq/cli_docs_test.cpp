// docs/cli.md's command table cannot fall behind emq: every command and
// subcommand `emq --help` lists has a row, and every row names a command
// emq has.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli_fixture.h"
#include "doc_text.h"

namespace echomq::test {
namespace {

// The names under "Subcommands:" in a help text.
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> out;
  bool in_list = false;
  for (const std::string& line : lines_of(help)) {
    if (line == "Subcommands:") {
      in_list = true;
    } else if (in_list && line.rfind("  ", 0) != 0) {
      break;
    } else if (in_list && line.size() > 2 && line[2] != ' ') {
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return out;
}

// Every command emq has, as "emq NAME" and "emq NAME SUB".
std::vector<std::string> emq_commands() {
  std::vector<std::string> out;
  const EmqResult top = run_emq({"--help"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  for (const std::string& name : subcommands(top.out)) {
    out.push_back("emq " + name);
    const EmqResult help = run_emq({name, "--help"});
    EXPECT_EQ(help.exit_code, 0) << name << ": " << help.err;
    for (const std::string& sub : subcommands(help.out)) out.push_back("emq " + name + " " + sub);
  }
  return out;
}

// The first cells of the command table, the one headed "| command | does |".
std::vector<std::string> table_rows() {
  std::vector<std::string> out;
  bool in_table = false;
  for (const std::string& line : lines_of(read_doc(std::string(EMQ_SOURCE_DIR) + "/docs/cli.md"))) {
    if (line == "| command | does |") {
      in_table = true;
    } else if (in_table && line.rfind("|", 0) != 0) {
      break;
    } else if (in_table && line.rfind("|---", 0) != 0) {
      out.push_back(line.substr(0, line.find(" | ")));
    }
  }
  return out;
}

TEST(CliDocs, TheCommandTableHasARowForEveryCommand) {
  const std::vector<std::string> rows = table_rows();
  ASSERT_FALSE(rows.empty()) << "docs/cli.md has no table headed | command | does |";
  const std::vector<std::string> commands = emq_commands();
  ASSERT_GT(commands.size(), 15u);
  for (const std::string& command : commands) {
    const bool found = std::any_of(rows.begin(), rows.end(), [&](const std::string& row) {
      return row.find("`" + command + " ") != std::string::npos || row.find("`" + command + "`") != std::string::npos;
    });
    EXPECT_TRUE(found) << command << " has no row in docs/cli.md's command table";
  }
  // And no row names a command that is not there.
  for (const std::string& row : rows) {
    const std::size_t at = row.find("`emq ");
    ASSERT_NE(at, std::string::npos) << row;
    const std::string name = "emq " + row.substr(at + 5, row.find_first_of(" `", at + 5) - (at + 5));
    EXPECT_NE(std::find(commands.begin(), commands.end(), name), commands.end()) << row << ": emq has no " << name;
  }
}

}  // namespace
}  // namespace echomq::test
