// The three descriptions of the transitions agree: the lua/ files (their
// headers and their text), the library's table (all_scripts), and the
// transition table of PROTOCOL.md. docs/protocol.md describes each of them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "echomq/scripts.h"

namespace echomq {
namespace {

namespace fs = std::filesystem;

const fs::path kLuaDir = EMQ_LUA_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The comment block a file opens with: "--[[ name: ..." up to "]]".
std::string header_of(const std::string& text) {
  if (text.rfind("--[[", 0) != 0) return "";
  std::size_t end = text.find("]]");
  return end == std::string::npos ? "" : text.substr(0, end);
}

std::vector<int> declared_keys(const std::string& header) {
  std::vector<int> keys;
  static const std::regex line(R"(^\s*KEYS\[(\d+)\])");
  std::istringstream lines(header);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) keys.push_back(std::stoi(m[1]));
  }
  return keys;
}

// The header line that declares KEYS[k], or "".
std::string key_line(const std::string& header, int k) {
  std::istringstream lines(header);
  std::string prefix = "KEYS[" + std::to_string(k) + "]";
  for (std::string l; std::getline(lines, l);) {
    std::size_t start = l.find_first_not_of(" \t");
    if (start != std::string::npos && l.compare(start, prefix.size(), prefix) == 0) return l;
  }
  return "";
}

// Where PROTOCOL.md is: $EMQ_PROTOCOL_MD, else shared/PROTOCOL.md in the
// folder that holds the repository or in one above it (a git worktree
// stands deeper than the clone beside shared/); "" when there is none.
fs::path protocol_md() {
  if (const char* p = std::getenv("EMQ_PROTOCOL_MD")) return p;
  for (fs::path dir = fs::weakly_canonical(kLuaDir).parent_path().parent_path(); !dir.empty();
       dir = dir.parent_path()) {
    if (fs::exists(dir / "shared" / "PROTOCOL.md")) return dir / "shared" / "PROTOCOL.md";
    if (dir == dir.root_path()) break;
  }
  return "";
}

// The rows of every transition table of PROTOCOL.md (those whose header is
// "| transition | KEYS | ARGV | reply |", wherever they stand): name -> its
// KEYS column. Other tables (the Limits fields, the native commands) are not
// transitions, whatever their first column holds.
std::map<std::string, std::string> protocol_transitions(const std::string& md) {
  std::map<std::string, std::string> rows;
  static const std::regex header(R"(^\|\s*transition\s*\|\s*KEYS\s*\|\s*ARGV\s*\|\s*reply\s*\|)");
  static const std::regex row(R"(^\| `([a-z_]+)` \| ([^|]*) \|)");
  bool in_table = false;
  std::istringstream lines(md);
  for (std::string l; std::getline(lines, l);) {
    if (std::regex_search(l, header)) {
      in_table = true;
      continue;
    }
    if (l.rfind("|", 0) != 0) in_table = false;
    std::smatch m;
    if (in_table && std::regex_search(l, m, row)) rows[m[1]] = m[2];
  }
  return rows;
}

// The items of a KEYS column: split at the commas outside parentheses, so
// a note such as "outbox (optional: ..., score now)" stays one item.
std::vector<std::string> key_items(const std::string& column) {
  std::vector<std::string> items(1);
  int depth = 0;
  for (char c : column) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ',' && depth == 0) {
      items.emplace_back();
    } else {
      items.back().push_back(c);
    }
  }
  return items;
}

struct Listed {
  int keys = 0;      // every call passes them
  int optional = 0;  // "(optional...)": a call may add them after
};

// How many KEYS a column lists. An item "<name>'s" stands for the KEYS of
// that transition ("complete's, then outbox, ..."); "then" only reads well.
Listed count_listed(const std::map<std::string, std::string>& rows, const std::string& keys_column, int depth = 0) {
  static const std::regex borrowed(R"(^\s*(?:then\s+)?([a-z_]+)'s\s*$)");
  static const std::regex optional(R"(\(optional\b)");
  Listed n;
  for (const std::string& item : key_items(keys_column)) {
    std::smatch m;
    auto it = rows.end();
    if (std::regex_match(item, m, borrowed)) it = rows.find(m[1]);
    if (it != rows.end() && depth < 4) {
      Listed inner = count_listed(rows, it->second, depth + 1);
      n.keys += inner.keys;
      n.optional += inner.optional;
    } else {
      ++(std::regex_search(item, optional) ? n.optional : n.keys);
    }
  }
  return n;
}

TEST(Conformance, OnlyTransitionTablesAreReadAsTransitions) {
  const std::string md =
      "## L2: transitions\n"
      "| transition | KEYS | ARGV | reply |\n"
      "|---|---|---|---|\n"
      "| `complete` | row, active, stats | id | `1` |\n"
      "\n"
      "| field | meaning | range |\n"
      "|---|---|---|\n"
      "| `max_active` | at most this many | 1-10 |\n"
      "\n"
      "### Flows\n"
      "| transition | KEYS | ARGV | reply |\n"
      "|---|---|---|---|\n"
      "| `complete_flow` | complete's, then outbox, deps root | complete's | as `complete` |\n"
      "| `child_done` | row, deps, outbox (optional: a parent, dying, is added, score now) | ref | `0` |\n";
  std::map<std::string, std::string> rows = protocol_transitions(md);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_FALSE(rows.count("max_active"));
  EXPECT_EQ(count_listed(rows, rows["complete"]).keys, 3);
  EXPECT_EQ(count_listed(rows, rows["complete_flow"]).keys, 5);
  EXPECT_EQ(count_listed(rows, rows["child_done"]).keys, 2) << "a comma inside a note splits nothing";
  EXPECT_EQ(count_listed(rows, rows["child_done"]).optional, 1);
}

TEST(Conformance, TheTableFollowsTheScriptEnum) {
  for (std::size_t i = 0; i < kScriptCount; ++i) {
    const ScriptInfo& s = all_scripts()[i];
    EXPECT_EQ(static_cast<std::size_t>(s.script), i) << s.name;
    EXPECT_STREQ(script_info(s.script).name, s.name);
  }
}

TEST(Conformance, EachScriptIsItsFileByteForByte) {
  for (const ScriptInfo& s : all_scripts()) {
    fs::path file = kLuaDir / (std::string(s.name) + ".lua");
    ASSERT_TRUE(fs::exists(file)) << file;
    std::string text = read_file(file);
    EXPECT_EQ(std::strlen(script_source(s.script)), text.size()) << s.name;
    EXPECT_TRUE(text == script_source(s.script)) << s.name << ".lua differs from the embedded text: rebuild";
  }
}

TEST(Conformance, EachHeaderDeclaresExactlyNumKeysKeys) {
  for (const ScriptInfo& s : all_scripts()) {
    std::string text = read_file(kLuaDir / (std::string(s.name) + ".lua"));
    std::string header = header_of(text);
    ASSERT_FALSE(header.empty()) << s.name << ".lua does not open with a --[[ ... ]] header";
    EXPECT_EQ(header.rfind("--[[ " + std::string(s.name) + ":", 0), 0u)
        << s.name << ": header must start with its name";
    std::vector<int> want;
    for (int k = 1; k <= s.num_keys + s.optional_keys; ++k) want.push_back(k);
    EXPECT_EQ(declared_keys(header), want)
        << s.name << ".lua: KEYS lines must be KEYS[1].." << s.num_keys + s.optional_keys;
    for (int k = s.num_keys + 1; k <= s.num_keys + s.optional_keys; ++k) {
      EXPECT_NE(key_line(header, k).find("optional"), std::string::npos)
          << s.name << ".lua: KEYS[" << k << "] is optional and its line must say so";
    }
    EXPECT_NE(header.find("Reply:"), std::string::npos) << s.name << ": header must state the reply";
  }
}

TEST(Conformance, NoScriptUsesAKeyItDidNotDeclare) {
  static const std::regex use(R"(KEYS\[(\d+)\])");
  for (const ScriptInfo& s : all_scripts()) {
    std::string text = read_file(kLuaDir / (std::string(s.name) + ".lua"));
    std::string body = text.substr(header_of(text).size());
    for (std::sregex_iterator it(body.begin(), body.end(), use), end; it != end; ++it) {
      EXPECT_LE(std::stoi((*it)[1]), s.num_keys + s.optional_keys) << s.name << " uses " << it->str();
    }
  }
}

TEST(Conformance, EveryLuaFileIsInTheTable) {
  std::set<std::string> known;
  for (const ScriptInfo& s : all_scripts()) known.insert(s.name);
  for (const auto& entry : fs::directory_iterator(kLuaDir)) {
    if (entry.path().extension() != ".lua") continue;
    EXPECT_TRUE(known.count(entry.path().stem().string())) << entry.path() << " is not in all_scripts()";
  }
}

// Transitions this implementation adds to PROTOCOL.md's, each with its
// section in docs/protocol.md (which PROTOCOL.md leaves the KEYS, ARGV
// and replies of: "Groups").
const std::set<std::string> kAdditions = {"group_set"};

TEST(Conformance, EveryTransitionOfProtocolMdHasAScriptWithItsKeys) {
  fs::path md = protocol_md();
  // Not a skip: a clone without the wire's text beside it cannot check the
  // transitions against it, and must say so.
  ASSERT_TRUE(!md.empty() && fs::exists(md))
      << "PROTOCOL.md not found ("
      << (md.empty() ? "no shared/PROTOCOL.md beside the repository or above it" : md.string())
      << "): set EMQ_PROTOCOL_MD to the path of the wire's PROTOCOL.md";
  std::map<std::string, std::string> rows = protocol_transitions(read_file(md));
  ASSERT_EQ(rows.size() + kAdditions.size(), kScriptCount)
      << "the L2 table of " << md << " should list " << kScriptCount - kAdditions.size() << " transitions";
  std::map<std::string, const ScriptInfo*> by_name;
  for (const ScriptInfo& s : all_scripts()) by_name[s.name] = &s;
  for (const auto& [name, keys] : rows) {
    auto it = by_name.find(name);
    ASSERT_NE(it, by_name.end()) << "PROTOCOL.md names `" << name << "` but there is no lua/" << name << ".lua";
    const Listed listed = count_listed(rows, keys);
    EXPECT_EQ(listed.keys, it->second->num_keys) << name << ": PROTOCOL.md lists KEYS '" << keys << "'";
    // PROTOCOL.md may leave an optional KEY to its prose (reap's outbox).
    EXPECT_LE(listed.optional, it->second->optional_keys) << name << ": PROTOCOL.md lists KEYS '" << keys << "'";
  }
  for (const ScriptInfo& s : all_scripts()) {
    EXPECT_TRUE(rows.count(s.name) || kAdditions.count(s.name)) << s.name << " is not in PROTOCOL.md";
  }
}

TEST(Conformance, DocsProtocolMdDescribesEveryTransition) {
  std::string doc = read_file(kLuaDir / ".." / "docs" / "protocol.md");
  ASSERT_FALSE(doc.empty()) << "docs/protocol.md is missing";
  for (const ScriptInfo& s : all_scripts()) {
    EXPECT_NE(doc.find("### `" + std::string(s.name) + "`"), std::string::npos)
        << "docs/protocol.md has no section for " << s.name;
    EXPECT_NE(doc.find("EVALSHA <sha1 of lua/" + std::string(s.name) + ".lua>"), std::string::npos)
        << "docs/protocol.md has no worked EVALSHA example for " << s.name;
  }
}

}  // namespace
}  // namespace echomq
