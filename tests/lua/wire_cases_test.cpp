// The shared wire cases (tests/wire-cases/<script>.json, format in its
// README.md), run through libechomq's executor: scripted, or native where
// the module has the transition's twin. The Python and Node packages run
// the same files, so a drift between any two speakers fails a test.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "doc_text.h"
#include "echomq/scripts.h"
#include "wire_fixture.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kCasesDir = fs::path(EMQ_LUA_DIR) / ".." / "tests" / "wire-cases";

// The clock of one case: T0 read before the keyspace is seeded, T1 after
// the call. "$NOW+N" in a start or a call is T0+N; expected, it is any
// time in [T0+N, T1+N], which the script's own TIME read must fall in.
struct Clock {
  std::int64_t t0 = 0;
  std::int64_t t1 = 0;
};

// The names and clock a case's text is read with.
struct Scope {
  std::string q, q2;
  Clock clock;

  std::string text(std::string s) const {
    static const std::regex now(R"(\$NOW([+-]\d+)?)");
    s = std::regex_replace(s, std::regex(R"(\$Q2)"), q2);
    s = std::regex_replace(s, std::regex(R"(\$Q)"), q);
    std::string out;
    std::size_t last = 0;
    for (std::sregex_iterator it(s.begin(), s.end(), now), end; it != end; ++it) {
      out += s.substr(last, it->position() - last);
      out += std::to_string(clock.t0 + ((*it)[1].matched ? std::stoll((*it)[1]) : 0));
      last = it->position() + it->length();
    }
    return out + s.substr(last);
  }

  // A string, or {"hex": "..."} for bytes JSON cannot hold.
  std::string bytes(const json& v) const {
    if (v.is_object()) {
      std::string hex = v.at("hex"), out;
      for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      return out;
    }
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    return text(v.get<std::string>());
  }

  // Whether an actual value (a string or an integer) is what a case expects.
  bool matches(const json& want, const std::string& got) const {
    static const std::regex whole(R"(^\$NOW([+-]\d+)?$)");
    std::smatch m;
    if (want.is_string()) {
      const std::string& w = want.get_ref<const std::string&>();
      if (std::regex_match(w, m, whole)) {
        std::int64_t offset = m[1].matched ? std::stoll(m[1]) : 0;
        try {
          std::int64_t v = std::stoll(got);
          return std::to_string(v) == got && v >= clock.t0 + offset && v <= clock.t1 + offset;
        } catch (const std::exception&) {
          return false;
        }
      }
    }
    return bytes(want) == got;
  }
};

std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out.size() > 200 ? out.substr(0, 200) + "...(" + std::to_string(s.size()) + " bytes)" : out;
}

const ScriptInfo* script_named(const std::string& name) {
  for (const ScriptInfo& s : all_scripts()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

class WireCases : public WireTest, public ::testing::WithParamInterface<std::string> {
 protected:
  // Fresh queues per case, so cases never see each other's keys.
  Scope scope_for_case() {
    static int n = 0;
    Scope s;
    s.q = "wc" + std::to_string(::getpid()) + "-" + std::to_string(++n);
    s.q2 = s.q + "-b";
    return s;
  }

  void seed(const Scope& s, const json& keyspace) {
    for (const auto& [key_text, v] : keyspace.items()) {
      std::string key = s.text(key_text);
      if (v.contains("hash")) {
        Command c{"HSET", key};
        for (const auto& [f, val] : v["hash"].items()) {
          c.push_back(s.text(f));
          c.push_back(s.bytes(val));
        }
        cmd(c);
      } else if (v.contains("zset")) {
        for (const json& e : v["zset"]) cmd({"ZADD", key, s.bytes(e[1]), s.bytes(e[0])});
      } else if (v.contains("set")) {
        for (const json& m : v["set"]) cmd({"SADD", key, s.bytes(m)});
      } else if (v.contains("list")) {
        for (const json& m : v["list"]) cmd({"RPUSH", key, s.bytes(m)});
      } else if (v.contains("stream")) {
        for (const json& entry : v["stream"]) {
          Command c{"XADD", key, "*"};
          for (const json& f : entry) c.push_back(s.bytes(f));
          cmd(c);
        }
      } else if (v.contains("string")) {
        cmd({"SET", key, s.bytes(v["string"])});
      } else {
        ADD_FAILURE() << key_text << ": a key is one of hash, zset, set, list, stream, string";
      }
      if (v.contains("expires")) cmd({"PEXPIREAT", key, s.bytes(v["expires"])});
    }
  }

  // A mismatch in one key, or "".
  std::string compare_key(const Scope& s, const std::string& key, const json& want) {
    std::string type = cmd({"TYPE", key}).str;
    std::string want_type = want.contains("hash")     ? "hash"
                            : want.contains("zset")   ? "zset"
                            : want.contains("set")    ? "set"
                            : want.contains("list")   ? "list"
                            : want.contains("stream") ? "stream"
                                                      : "string";
    if (type != want_type) return key + " is a " + type + ", not a " + want_type;
    std::ostringstream diff;
    if (type == "hash") {
      Row got = hash(key);
      for (const auto& [f, v] : want["hash"].items()) {
        auto it = got.find(s.text(f));
        if (it == got.end()) {
          diff << " field " << f << " is missing;";
        } else if (!s.matches(v, it->second)) {
          diff << " field " << f << " is " << printable(it->second) << ", not " << v.dump() << ";";
        }
        if (it != got.end()) got.erase(it);
      }
      for (const auto& [f, v] : got) diff << " field " << f << "=" << printable(v) << " is not expected;";
    } else if (type == "zset") {
      std::map<std::string, std::string> got;
      Reply r = cmd({"ZRANGE", key, "0", "-1", "WITHSCORES"});
      for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) got[r.elements[i].str] = r.elements[i + 1].str;
      for (const json& e : want["zset"]) {
        auto it = got.find(s.bytes(e[0]));
        if (it == got.end()) {
          diff << " member " << e[0].dump() << " is missing;";
          continue;
        }
        if (!s.matches(e[1], it->second))
          diff << " member " << e[0].dump() << " scores " << it->second << ", not " << e[1].dump() << ";";
        got.erase(it);
      }
      for (const auto& [m, sc] : got) diff << " member " << printable(m) << "@" << sc << " is not expected;";
    } else if (type == "set") {
      std::vector<std::string> got = set_members(key), expected;
      for (const json& m : want["set"]) expected.push_back(s.bytes(m));
      std::sort(expected.begin(), expected.end());
      if (got != expected) diff << " members differ (" << got.size() << " held, " << expected.size() << " expected);";
    } else if (type == "list") {
      Reply got = cmd({"LRANGE", key, "0", "-1"});
      bool same = got.elements.size() == want["list"].size();
      for (std::size_t i = 0; same && i < got.elements.size(); ++i)
        same = s.matches(want["list"][i], got.elements[i].str);
      if (!same) diff << " holds another list (" << got.elements.size() << " items);";
    } else if (type == "stream") {
      diff << compare_stream(s, key, want["stream"]);
    } else {
      std::string got = cmd({"GET", key}).str;
      if (!s.matches(want["string"], got)) diff << " holds " << printable(got) << ";";
    }
    std::int64_t at = cmd({"PEXPIRETIME", key}).integer;
    if (want.contains("expires")) {
      if (at < 0 || !s.matches(want["expires"], std::to_string(at)))
        diff << " expires at " << at << ", not " << want["expires"].dump() << ";";
    } else if (at >= 0) {
      diff << " expires at " << at << " but should not expire;";
    }
    return diff.str().empty() ? "" : key + ":" + diff.str();
  }

  // A stream's entries in order, ids aside (they are the server's), each a
  // flat list of fields and values.
  std::string compare_stream(const Scope& s, const std::string& key, const json& want) {
    std::ostringstream diff;
    Reply got = cmd({"XRANGE", key, "-", "+"});
    if (got.elements.size() != want.size()) {
      diff << " holds " << got.elements.size() << " entries, not " << want.size() << ";";
    }
    for (std::size_t i = 0; i < std::min(got.elements.size(), want.size()); ++i) {
      const std::vector<Reply>& fields = got.elements[i].elements[1].elements;
      bool same = fields.size() == want[i].size();
      for (std::size_t j = 0; same && j < fields.size(); ++j) same = s.matches(want[i][j], fields[j].str);
      if (!same) {
        diff << " entry " << i << " is [";
        for (const Reply& f : fields) diff << printable(f.str) << " ";
        diff << "], not " << want[i].dump() << ";";
      }
    }
    return diff.str();
  }

  std::vector<std::string> compare_keyspace(const Scope& s, const json& want) {
    std::vector<std::string> out;
    std::set<std::string> expected;
    for (const auto& [key_text, v] : want.items()) {
      std::string key = s.text(key_text);
      expected.insert(key);
      if (cmd({"EXISTS", key}).integer == 0) {
        out.push_back(key + " is missing");
        continue;
      }
      if (std::string d = compare_key(s, key, v); !d.empty()) out.push_back(d);
    }
    for (const std::string& name : {s.q, s.q2}) {
      for (const Reply& k : cmd({"KEYS", "emq:{" + name + "}:*"}).elements) {
        if (!expected.count(k.str)) out.push_back(k.str + " is not expected (" + cmd({"TYPE", k.str}).str + ")");
      }
    }
    return out;
  }

  // A mismatch between a reply and what a case expects, or "".
  std::string compare_reply(const Scope& s, const json& want, const Reply& got) {
    if (want.is_object() && want.contains("error")) {
      std::string text = s.text(want["error"]);
      if (!got.is_error())
        return "answered (type " + std::to_string(static_cast<int>(got.type)) + ") instead of " + text;
      return got.str == text ? "" : "refused with '" + got.str + "', not '" + text + "'";
    }
    if (got.is_error()) return "refused with '" + got.str + "'";
    if (want.is_null()) return got.is_nil() ? "" : "is not nil";
    if (want.is_number_integer()) {
      if (got.type != Reply::Type::Integer) return "is not an integer (want " + want.dump() + ")";
      return got.integer == want.get<std::int64_t>() ? ""
                                                     : "is " + std::to_string(got.integer) + ", not " + want.dump();
    }
    if (want.is_array()) {
      if (got.type != Reply::Type::Array) return "is not an array";
      if (got.elements.size() != want.size()) {
        return "has " + std::to_string(got.elements.size()) + " elements, not " + std::to_string(want.size());
      }
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (std::string d = compare_reply(s, want[i], got.elements[i]); !d.empty())
          return "[" + std::to_string(i) + "] " + d;
      }
      return "";
    }
    if (got.type != Reply::Type::String) return "is not a string (want " + want.dump() + ")";
    return s.matches(want, got.str) ? "" : "is '" + printable(got.str) + "', not " + want.dump();
  }

  void run_case(const json& c) {
    SCOPED_TRACE(c.at("call").at("script").get<std::string>() + ": " + c.at("name").get<std::string>());
    const ScriptInfo* info = script_named(c["call"]["script"]);
    ASSERT_NE(info, nullptr) << "no such script";
    Scope s = scope_for_case();
    s.clock.t0 = now_ms();
    seed(s, c["before"]);
    ScriptCall call{info->script, {}, {}};
    for (const json& k : c["call"]["keys"]) call.keys.push_back(s.bytes(k));
    for (const json& a : c["call"]["args"]) call.args.push_back(s.bytes(a));
    Reply got = x.eval_batch({call}).front();
    s.clock.t1 = now_ms();
    EXPECT_EQ(compare_reply(s, c["reply"], got), "") << "the reply";
    for (const std::string& d : compare_keyspace(s, c.contains("after") ? c["after"] : c["before"])) ADD_FAILURE() << d;
  }
};

TEST_P(WireCases, EveryCaseOfTheScriptHolds) {
  fs::path file = kCasesDir / (GetParam() + ".json");
  ASSERT_TRUE(fs::exists(file)) << GetParam() << " has no wire cases: add " << file;
  json cases = json::parse(read_doc(file.string()));
  ASSERT_TRUE(cases.is_array() && !cases.empty()) << file << " holds no case";
  for (const json& c : cases) {
    EXPECT_EQ(c.at("call").at("script"), GetParam()) << file << ": a case of another script";
    run_case(c);
  }
}

std::vector<std::string> script_names() {
  std::vector<std::string> out;
  for (const ScriptInfo& s : all_scripts()) out.push_back(s.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Scripts, WireCases, ::testing::ValuesIn(script_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// Every file is a script's: a case file for a renamed script would
// otherwise stop running without a word.
TEST(WireCaseFiles, EachNamesAScript) {
  for (const auto& entry : fs::directory_iterator(kCasesDir)) {
    if (entry.path().extension() != ".json") continue;
    EXPECT_NE(script_named(entry.path().stem().string()), nullptr) << entry.path() << " names no script";
  }
}

}  // namespace
}  // namespace echomq::test
