// The durations docs/configuration.md shows are the loader's: every example
// in a duration key's row loads at that key, and the units the page lists
// are the ones the parser takes, no more and no fewer. (The page once gave
// `every: 500ms` as an example, which is refused; `per: 1d` was taken but
// not documented.)
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "config_test_support.h"
#include "doc_text.h"
#include "text/duration.h"

namespace echomq::daemon::test {
namespace {

// Every `...` span of `text` that is a whole duration ("500ms", "7d").
std::vector<std::string> duration_examples(const std::string& text) {
  std::vector<std::string> out;
  const std::regex example("`([0-9]+[a-z]+)`");
  for (std::sregex_iterator it(text.begin(), text.end(), example), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

// The line of the page's table row for `key`, "" when there is none.
std::string row_of(const std::string& page, const std::string& key) {
  const std::size_t at = page.find("| `" + key + "` |");
  return at == std::string::npos ? "" : page.substr(at, page.find('\n', at) - at);
}

// A configuration with `value` at the duration key `key`, the rest minimal.
std::string config_with(const std::string& key, const std::string& value) {
  const std::string queue = "  - { name: q, handler: { type: exec, command: [/bin/cat] } }\n";
  if (key == "schedules[].every")
    return "queues:\n" + queue + "schedules:\n  - { name: s, queue: q, every: " + value + " }\n";
  if (key == "schedules[].misfire_grace") {
    return "queues:\n" + queue + "schedules:\n  - { name: s, queue: q, every: 1m, misfire_grace: " + value + " }\n";
  }
  const std::string limits = "limits: { rate: { max: 1, per: " + value + " } }";
  if (key == "defaults.limits.rate.per") return "defaults: { " + limits + " }\nqueues:\n" + queue;
  return "queues:\n  - { name: q, " + limits + ", handler: { type: exec, command: [/bin/cat] } }\n";
}

TEST(DocsExamples, EveryDurationARowShowsLoadsAtItsKey) {
  const std::string page = echomq::test::read_doc(kConfigurationPage);
  TempDir dir;
  int shown = 0;
  for (const std::string key :
       {"schedules[].every", "schedules[].misfire_grace", "defaults.limits.rate.per", "queues[].limits.rate.per"}) {
    const std::string row = row_of(page, key);
    ASSERT_FALSE(row.empty()) << key << " has no row in " << kConfigurationPage;
    EXPECT_NE(row.find("| duration |"), std::string::npos) << key << "'s type is a duration: " << row;
    for (const std::string& value : duration_examples(row)) {
      ++shown;
      const std::string path = dir.write("c.yaml", config_with(key, value));
      try {
        load_config(path);
      } catch (const ConfigError& e) {
        ADD_FAILURE() << kConfigurationPage << " shows " << key << ": " << value << ", which is refused:\n"
                      << joined(e.errors());
      }
    }
  }
  EXPECT_GE(shown, 8);
}

TEST(DocsExamples, TheDurationUnitsListedAreTheOnesParsed) {
  const std::string page = echomq::test::read_doc(kConfigurationPage);
  const std::size_t at = page.find("- **Durations**");
  ASSERT_NE(at, std::string::npos) << kConfigurationPage << " has no bullet on durations";
  const std::string bullet = page.substr(at, page.find("\n- ", at + 1) - at);
  std::set<std::string> listed;
  const std::regex unit("`([a-z]+)`");
  for (std::sregex_iterator it(bullet.begin(), bullet.end(), unit), end; it != end; ++it) listed.insert((*it)[1]);
  for (const char* u : {"ns", "us", "ms", "s", "sec", "m", "min", "h", "d", "w", "mo", "y"}) {
    const bool parsed = parse_duration_ms(std::string("1") + u).has_value();
    EXPECT_EQ(listed.count(u) == 1, parsed)
        << "unit " << u << (parsed ? " is parsed but not listed" : " is listed but refused") << " in: " << bullet;
  }
  for (const std::string& example : duration_examples(bullet)) {
    EXPECT_TRUE(parse_duration_ms(example)) << example << " is shown but refused";
  }
}

}  // namespace
}  // namespace echomq::daemon::test
