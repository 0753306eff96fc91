// The helpers several scripts share (is_counter, is_zset, lane_of, the
// WRONGTYPE text, ...) and the blocks fenced as shared (the argument
// checks, the halves fail and fail_flow, promote_job and retry_job have in
// common, the unique jobs' options, holder rule and release) are copies,
// since each script is loaded alone by SHA and Lua in Valkey has no
// include. A copy that drifts is a rule that differs between
// transitions: every copy must be the same, byte for byte, as every other.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "echomq/scripts.h"

namespace echomq {
namespace {

namespace fs = std::filesystem;
const fs::path kLuaDir = EMQ_LUA_DIR;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Helper name -> script name -> its text: each `local function NAME(...)`
// at the start of a line through the first `end` alone on a line, and
// each top-level `local NAME = '...'` text constant.
using Copies = std::map<std::string, std::map<std::string, std::string>>;

// The name after `prefix` on a line that starts with it: letters, digits, _.
std::string name_after(const std::string& line, const std::string& prefix) {
  if (line.rfind(prefix, 0) != 0) return "";
  std::size_t end = prefix.size();
  while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_')) ++end;
  return line.substr(prefix.size(), end - prefix.size());
}

void add_helpers(const std::string& script, std::istream& in, Copies& copies) {
  std::string line;
  std::string open;  // the function being read, if any
  std::string text;
  while (std::getline(in, line)) {
    if (!open.empty()) {
      text += line + "\n";
      if (line == "end") {
        copies[open][script] = text;
        open.clear();
      }
      continue;
    }
    const std::string function = name_after(line, "local function ");
    const std::string constant = name_after(line, "local ");
    if (!function.empty()) {
      open = function;
      text = line + "\n";
    } else if (!constant.empty() && line.find(" = '") == constant.size() + 6) {
      copies[constant][script] = line;
    }
  }
}

Copies helpers_of_every_script() {
  Copies copies;
  for (const auto& entry : fs::directory_iterator(kLuaDir)) {
    if (entry.path().extension() != ".lua") continue;
    std::ifstream in(entry.path());
    add_helpers(entry.path().stem().string(), in, copies);
  }
  return copies;
}

TEST(ScriptCopies, EveryCopyOfASharedHelperIsTheSame) {
  const Copies copies = helpers_of_every_script();
  int shared = 0;
  for (const auto& [name, by_script] : copies) {
    if (by_script.size() < 2) continue;
    ++shared;
    const auto& [first_script, first_text] = *by_script.begin();
    for (const auto& [script, text] : by_script) {
      EXPECT_EQ(text, first_text) << name << " in lua/" << script << ".lua differs from its copy in lua/"
                                  << first_script << ".lua";
    }
  }
  EXPECT_GE(shared, 5) << "the helpers were not found: is " << kLuaDir << " the scripts' folder?";
}

// The refusal a script returns for a key of the wrong type is the one
// WRONGTYPE constant, not a literal that could drift from it.
TEST(ScriptCopies, TheWrongTypeTextIsWrittenOnlyAsTheConstant) {
  const std::string text = "WRONGTYPE Operation against a key holding the wrong kind of value";
  for (const auto& entry : fs::directory_iterator(kLuaDir)) {
    if (entry.path().extension() != ".lua") continue;
    const std::string body = read_file(entry.path());
    std::size_t uses = 0;
    for (std::size_t at = body.find(text); at != std::string::npos; at = body.find(text, at + 1)) ++uses;
    EXPECT_LE(uses, 1u) << entry.path() << " writes the WRONGTYPE text more than once: use local WRONGTYPE";
    if (uses == 1) {
      EXPECT_NE(body.find("local WRONGTYPE = '" + text + "'"), std::string::npos)
          << entry.path() << " writes the WRONGTYPE text outside its constant";
    }
  }
}

// A block fenced by the lines "-- [shared NAME: ...]" and
// "-- [end shared NAME]": name -> script -> the lines between.
Copies fenced_blocks() {
  Copies blocks;
  for (const auto& entry : fs::directory_iterator(kLuaDir)) {
    if (entry.path().extension() != ".lua") continue;
    const std::string script = entry.path().stem().string();
    std::ifstream in(entry.path());
    std::string line;
    std::string open;
    std::string text;
    while (std::getline(in, line)) {
      const std::string begins = name_after(line, "-- [shared ");
      const std::string ends = name_after(line, "-- [end shared ");
      if (!begins.empty()) {
        EXPECT_EQ(open, "") << "lua/" << script << ".lua opens " << begins << " inside " << open;
        EXPECT_EQ(blocks[begins].count(script), 0u) << "lua/" << script << ".lua fences " << begins << " twice";
        open = begins;
        text.clear();
      } else if (!ends.empty()) {
        EXPECT_EQ(ends, open) << "lua/" << script << ".lua ends " << ends << " where " << open << " is open";
        blocks[ends][script] = text;
        open.clear();
      } else if (!open.empty()) {
        text += line + "\n";
      }
    }
    EXPECT_EQ(open, "") << "lua/" << script << ".lua never ends " << open;
  }
  return blocks;
}

TEST(ScriptCopies, EveryCopyOfAFencedBlockIsTheSame) {
  const Copies blocks = fenced_blocks();
  for (const auto& [name, by_script] : blocks) {
    EXPECT_GE(by_script.size(), 2u) << "the block " << name << " is fenced as shared in one script alone";
    const auto& [first_script, first_text] = *by_script.begin();
    for (const auto& [script, text] : by_script) {
      EXPECT_EQ(text, first_text) << "the shared block " << name << " in lua/" << script
                                  << ".lua differs from its copy in lua/" << first_script << ".lua";
    }
  }
  // fail and fail_flow, promote_job and retry_job, the argument checks, and
  // unique jobs: the enqueue forms' options and holder rule, and the uniq
  // root every ending transition takes.
  for (const char* name :
       {"fail_helpers", "fail_arguments", "fail_row", "fail_writes", "fail_requeue", "move_keys", "move_row",
        "move_lane", "job_id", "lane_argument", "enqueue_options", "unique_holder", "unique_enqueue", "unique_root",
        "unique_release", "group_block", "group_policy", "group_steps"}) {
    EXPECT_EQ(blocks.count(name), 1u) << "no block fenced as " << name << ": is " << kLuaDir << " the scripts' folder?";
  }
}

// The events prelude (PROTOCOL.md, "Events": find the stream, check N and
// its type, emit) opens every script that takes the stream, the same
// lines in each: from its comment through the `end` of emit.
std::string events_prelude(const std::string& body) {
  const std::size_t from = body.find("-- Events (PROTOCOL.md");
  if (from == std::string::npos) return "";
  const std::size_t emit = body.find("local function emit", from);
  const std::size_t end = emit == std::string::npos ? emit : body.find("\nend\n", emit);
  return end == std::string::npos ? "" : body.substr(from, end + 5 - from);
}

// Held here by its own rule rather than fenced: the prelude is being
// rewritten (issue 53 item 2); once that lands, fence it as the blocks
// above are and let this test go.
TEST(ScriptCopies, EveryScriptThatTakesTheStreamOpensWithTheSamePrelude) {
  std::string first;
  std::string first_name;
  for (const ScriptInfo& info : all_scripts()) {
    const std::string prelude = events_prelude(read_file(kLuaDir / (std::string(info.name) + ".lua")));
    if (!info.events) {
      EXPECT_EQ(prelude, "") << "lua/" << info.name << ".lua has the events prelude but its ScriptInfo says it "
                             << "takes no stream: set events in lib/src/scripts.cpp";
      continue;
    }
    ASSERT_NE(prelude, "") << "lua/" << info.name << ".lua takes the stream but lacks the events prelude";
    if (first.empty()) {
      first = prelude;
      first_name = info.name;
    }
    EXPECT_EQ(prelude, first) << "the events prelude of lua/" << info.name << ".lua differs from lua/" << first_name
                              << ".lua's";
  }
}

}  // namespace
}  // namespace echomq
