// docs/operations.md's "Valkey settings", taken from the page as written:
// every line of its plain blocks is a server setting (`name value`, with a
// comment after `#`) that valkey-server accepts at start and then reports
// as given.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "doc_text.h"
#include "echomq/connection.h"
#include "ops_files.h"
#include "valkey_server.h"

namespace echomq::test {
namespace {

std::vector<std::pair<std::string, std::string>> settings() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const DocBlock& b : fenced_blocks((source_dir() / "docs/operations.md").string())) {
    if (b.heading != "## Valkey settings" || !b.lang.empty()) continue;
    std::istringstream lines(b.body);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line.substr(0, line.find('#')));
      std::string name, value;
      if (words >> name >> value) out.emplace_back(name, value);
    }
  }
  return out;
}

TEST(ValkeySettingsDoc, EverySettingStartsTheServerAndReadsBackAsGiven) {
  const auto given = settings();
  ASSERT_GE(given.size(), 4u) << "docs/operations.md, \"Valkey settings\": fewer settings than the page has";
  ValkeyServer::Options o;
  for (const auto& [name, value] : given) {
    o.extra_args.push_back("--" + name);
    o.extra_args.push_back(value);
  }
  ValkeyServer server(o);
  Connection c = Connection::open(server.options());
  for (const auto& [name, value] : given) {
    Reply r = c.command({"CONFIG", "GET", name});
    ASSERT_EQ(r.elements.size(), 2u) << name;
    EXPECT_EQ(r.elements[1].str, value) << name;
  }
}

}  // namespace
}  // namespace echomq::test
