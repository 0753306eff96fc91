// The loader's key table, docs/configuration.md and config/emqd.example.yaml
// cannot drift apart: every key the loader knows is documented and shown in
// the example, the docs name no key the loader does not know, and the
// example loads, showing the real defaults.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "config_dictionary.h"
#include "config/config_schema.h"
#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

const std::string kExample = std::string(EMQ_SOURCE_DIR) + "/config/emqd.example.yaml";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Dotted keys present in a YAML tree, list elements as "[]". Free-form
// mappings (env, plugin config) contribute their own key only.
void collect_keys(const YAML::Node& node, const std::string& path, std::set<std::string>& out) {
  if (node.IsSequence()) {
    for (const auto& item : node) collect_keys(item, path + "[]", out);
    return;
  }
  if (!node.IsMap()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string name = it->first.as<std::string>();
    const std::string key = path.empty() ? name : path + "." + name;
    out.insert(key);
    if (name == "env" || name == "overrides" || name == "config" || name == "permanent_exit_codes" || name == "command")
      continue;
    collect_keys(it->second, key, out);
  }
}

std::string leaf(const std::string& key) { return key.substr(key.rfind('.') + 1); }

TEST(Example, LoadsCleanly) {
  const Config c = load_config(kExample);
  ASSERT_EQ(c.queues.size(), 2u);
  EXPECT_EQ(c.queues[0].handler.command, (std::vector<std::string>{"/bin/cat"}));
  EXPECT_EQ(c.queues[1].handler.type, HandlerConfig::Type::Pool);
}

TEST(Example, ShowsTheDefaultsTheLoaderUses) {
  const Config c = load_config(kExample);
  const Config d;
  EXPECT_EQ(c.valkey.url, d.valkey.url);
  EXPECT_EQ(c.valkey.username, d.valkey.username);
  EXPECT_EQ(c.valkey.password_env, d.valkey.password_env);
  EXPECT_EQ(c.valkey.password_file, d.valkey.password_file);
  EXPECT_EQ(c.valkey.connect_timeout_ms, d.valkey.connect_timeout_ms);
  EXPECT_EQ(c.valkey.command_timeout_ms, d.valkey.command_timeout_ms);
  EXPECT_EQ(c.valkey.keyspace_events, d.valkey.keyspace_events);
  EXPECT_EQ(c.valkey.require_noeviction, d.valkey.require_noeviction);
  EXPECT_EQ(c.valkey.embedded_dir, d.valkey.embedded_dir);
  EXPECT_EQ(c.metrics.listen, d.metrics.listen);
  EXPECT_EQ(c.log.level, d.log.level);
  EXPECT_EQ(c.log.format, d.log.format);
  EXPECT_EQ(c.reaper.interval_ms, d.reaper.interval_ms);
  EXPECT_EQ(c.reaper.batch, d.reaper.batch);
  EXPECT_DOUBLE_EQ(c.shutdown.drain_timeout_s, d.shutdown.drain_timeout_s);
  EXPECT_EQ(c.daemon.name, d.daemon.name);
  EXPECT_DOUBLE_EQ(c.daemon.beat_s, d.daemon.beat_s);

  // pool-ok sets only concurrency, backoff.initial_ms and handler keys: the
  // rest is what the example's `defaults:` shows, which must be the real defaults.
  const QueueConfig& q = c.queues[1];
  const QueueConfig dq;
  EXPECT_EQ(q.lease_ms, dq.lease_ms);
  EXPECT_EQ(q.max_attempts, dq.max_attempts);
  EXPECT_DOUBLE_EQ(q.backoff.multiplier, dq.backoff.multiplier);
  EXPECT_EQ(q.backoff.max_ms, dq.backoff.max_ms);
  EXPECT_DOUBLE_EQ(q.backoff.jitter, dq.backoff.jitter);
  EXPECT_EQ(q.keep_completed_s, dq.keep_completed_s);
  EXPECT_EQ(q.keep_dead_s, dq.keep_dead_s);
  EXPECT_EQ(q.poll_max_ms, dq.poll_max_ms);
  EXPECT_EQ(q.handler.permanent_exit_codes, dq.handler.permanent_exit_codes);
  EXPECT_EQ(q.handler.inherit_env, dq.handler.inherit_env);
  EXPECT_EQ(q.handler.env, dq.handler.env);
  EXPECT_EQ(q.handler.max_jobs_per_process, dq.handler.max_jobs_per_process);
  // The echo queue restates every default of its own.
  EXPECT_EQ(c.queues[0].backoff.initial_ms, dq.backoff.initial_ms);
  EXPECT_DOUBLE_EQ(c.queues[0].handler.kill_grace_s, dq.handler.kill_grace_s);
  EXPECT_EQ(c.queues[0].handler.max_output_bytes, dq.handler.max_output_bytes);
}

TEST(Example, HoldsEveryKnownKey) {
  std::set<std::string> present;
  collect_keys(YAML::LoadFile(kExample), "", present);
  // A key that cannot be live in a file that loads as it is (the plugin
  // queue needs a real library) must at least be there commented out.
  const std::string text = read_text(kExample);
  for (const std::string& key : known_config_keys()) {
    if (present.count(key)) continue;
    const std::regex commented("#\\s*(- )?" + leaf(key) + ":");
    EXPECT_TRUE(std::regex_search(text, commented)) << key << " is not in " << kExample;
  }
}

TEST(Docs, DocumentEveryKnownKey) {
  const std::string text = read_text(kConfigurationPage);
  ASSERT_FALSE(text.empty()) << kConfigurationPage;
  for (const std::string& key : known_config_keys()) {
    EXPECT_NE(text.find("| `" + key + "` |"), std::string::npos) << key << " has no row in " << kConfigurationPage;
  }
}

TEST(Docs, DocumentNoKeyTheLoaderDoesNotKnow) {
  const std::vector<std::string> known = known_config_keys();
  std::istringstream lines(read_text(kConfigurationPage));
  const std::regex row("^\\| `([^`]+)` \\|");
  int rows = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    ++rows;
    EXPECT_NE(std::find(known.begin(), known.end(), m[1].str()), known.end()) << m[1] << " is documented but unknown";
  }
  EXPECT_EQ(rows, static_cast<int>(known.size()));
}

// The cells of the docs' row for `key`, without the row's outer bars; empty
// when there is none.
std::vector<std::string> docs_row(const std::string& text, const std::string& key) {
  const std::size_t at = text.find("| `" + key + "` |");
  if (at == std::string::npos) return {};
  const std::string line = text.substr(at + 1, text.find('\n', at) - at - 1);
  std::vector<std::string> cells;
  std::istringstream split(line);
  for (std::string cell; std::getline(split, cell, '|');) {
    const std::size_t b = cell.find_first_not_of(' ');
    const std::size_t e = cell.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return cells;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// Each row of the schema as the docs must show it: its type, its default
// where it stands in defaults or at the top, its range, and for a handler
// key the types that read it.
TEST(Docs, ShowEachRowsTypeDefaultRangeAndHandlerTypes) {
  const std::string text = read_text(kConfigurationPage);
  const std::map<ValueType, std::string> type_words = {{ValueType::Mapping, "mapping"}, {ValueType::Section, "mapping"},
                                                       {ValueType::Integer, "integer"}, {ValueType::Number, "number"},
                                                       {ValueType::Boolean, "boolean"}, {ValueType::Word, "string"},
                                                       {ValueType::String, "string"}};
  for (const KeySpec& k : config_schema()) {
    std::vector<std::string> keys;
    if (k.places & kTop) keys.push_back(k.path);
    if (k.places & kDefaults) keys.push_back("defaults." + k.path);
    if (k.places & kQueue) keys.push_back("queues[]." + k.path);
    if (k.places & kHandler) keys.push_back("queues[].handler." + k.path);
    for (const std::string& key : keys) {
      SCOPED_TRACE(key);
      const std::vector<std::string> cells = docs_row(text, key);
      ASSERT_GE(cells.size(), 4u) << "no row in " << kConfigurationPage;
      if (type_words.count(k.type)) {
        EXPECT_EQ(cells[1], type_words.at(k.type));
      }
      const bool own_default = (k.places & (kTop | kDefaults)) != 0 && key.rfind("queues[]", 0) != 0;
      if (own_default && !k.fallback.empty()) {
        EXPECT_EQ(cells[2], "`" + k.fallback + "`");
      }
      if ((k.type == ValueType::Integer || k.type == ValueType::Number) && own_default) {
        EXPECT_EQ(cells.back().rfind(number_text(k.lo) + ".." + number_text(k.hi), 0), 0u) << cells.back();
      }
      if (key.rfind("queues[].handler.", 0) == 0) {
        std::vector<std::string> types;
        for (const std::string& name : handler_type_names()) {
          if (k.places & handler_place(*parse_handler_type(name))) types.push_back(name);
        }
        std::string want;
        for (const auto& t : types) want += (want.empty() ? "" : ", ") + t;
        EXPECT_EQ(cells[3], types.size() == handler_type_names().size() && k.path == "type" ? "all" : want);
      }
    }
  }
}

// The fuzzer's dictionary, made from the schema: every line a token in
// libFuzzer's quoting (a bad line makes libFuzzer refuse the whole file),
// every key name and every word of the schema in it.
TEST(FuzzDictionary, IsValidAndHoldsEveryKeyAndWordOfTheSchema) {
  const std::string dict = config_dictionary();
  std::istringstream lines(dict);
  std::set<std::string> tokens;
  const std::regex token(R"re("((?:[ !#-\[\]-~]|\\[\\"]|\\x[0-9a-f]{2})*)")re");
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    ASSERT_TRUE(std::regex_match(line, m, token)) << "not a libFuzzer token: " << line;
    tokens.insert(m[1].str());
  }
  for (const KeySpec& k : config_schema()) {
    EXPECT_TRUE(tokens.count(k.leaf() + ":")) << k.leaf() << " is not in the dictionary";
    for (const std::string& w : k.words) EXPECT_TRUE(tokens.count(w)) << w << " is not in the dictionary";
  }
  EXPECT_TRUE(tokens.count("\\x0a  ")) << "a newline is written as \\x0a";
  EXPECT_TRUE(tokens.count("[\\\"/bin/cat\\\"]")) << "a quote inside is escaped";
}

// The defaults the schema states are the ones the loader gives: a file that
// writes each of them out loads to the same configuration as one that
// writes none.
TEST(Schema, StatesTheDefaultsTheLoaderGives) {
  std::string valkey, sections, defaults;
  std::map<std::string, std::string> top;
  for (const KeySpec& k : config_schema()) {
    if (k.slot == nullptr || k.fallback.empty()) continue;
    if (k.places & kTop) top[k.parent()] += "  " + k.leaf() + ": " + k.fallback + "\n";
    if (k.places & kDefaults) {
      defaults += k.parent().empty() ? "  " + k.leaf() + ": " + k.fallback + "\n"
                                     : "  " + k.parent() + ": { " + k.leaf() + ": " + k.fallback + " }\n";
    }
  }
  std::string text;
  for (const auto& [section, lines] : top) text += section + ":\n" + lines;
  // Mappings given once each: merge the one-key backoff lines.
  std::string merged, backoff;
  std::istringstream lines(defaults);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  backoff: { ", 0) == 0) {
      backoff += (backoff.empty() ? "" : ", ") + line.substr(13, line.size() - 15);
    } else {
      merged += line + "\n";
    }
  }
  text += "defaults:\n" + merged + "  backoff: { " + backoff + " }\n";
  const std::string queue = "queues: [{ name: q, handler: { type: exec, command: [/bin/cat] } }]\n";
  TempDir dir;
  const std::string stated = dir.write("stated.yaml", text + queue);
  const std::string bare = dir.write("bare.yaml", queue);
  Config a = load_config(stated);
  Config b = load_config(bare);
  a.path = b.path = "";
  EXPECT_EQ(describe(a), describe(b)) << text;
}

// Each --check-config label of the schema is a row of the summary.
TEST(Schema, EveryLabelIsARowOfTheCheckConfigSummary) {
  TempDir dir;
  const std::string path =
      dir.write("all.yaml",
                "valkey: { url: valkeys://cache.example:6380/0 }\ndefaults: { prefetch: 2 }\nqueues:\n"
                "  - { name: e, handler: { type: exec, command: [/bin/cat] } }\n"
                "  - { name: p, handler: { type: pool, command: [/bin/cat] } }\n"
                "schedules:\n  - { name: beat, queue: e, every: 1s }\n");
  const std::string summary = describe(load_config(path));
  for (const KeySpec& k : config_schema()) {
    if (k.label.empty() || k.path == "config") continue;  // a plugin queue needs a real library
    const std::regex row("(^|\n) *" + k.label + " {2,}");
    EXPECT_TRUE(std::regex_search(summary, row)) << k.path << ": no row " << k.label << " in\n" << summary;
  }
}

TEST(KnownKeys, AreWhatTheLoaderAccepts) {
  // A spot check that the table is the loader's: a documented key loads, a
  // near miss is refused.
  const std::vector<std::string> known = known_config_keys();
  for (const char* key : {"valkey.embedded_dir", "defaults.backoff.jitter", "queues[].handler.max_jobs_per_process"}) {
    EXPECT_NE(std::find(known.begin(), known.end(), key), known.end()) << key;
  }
  TempDir dir;
  const std::string ok = dir.write(
      "ok.yaml", "valkey: { embedded_dir: x }\nqueues: [{ name: q, handler: { type: exec, command: [/bin/cat] } }]\n");
  EXPECT_NO_THROW(load_config(ok));
  const std::string bad = dir.write(
      "bad.yaml", "valkey: { embeded_dir: x }\nqueues: [{ name: q, handler: { type: exec, command: [/bin/cat] } }]\n");
  EXPECT_EQ(load_errors(bad),
            (std::vector<std::string>{bad + ":1: valkey.embeded_dir: unknown key; did you mean embedded_dir?"}));
}

}  // namespace
}  // namespace echomq::daemon::test
