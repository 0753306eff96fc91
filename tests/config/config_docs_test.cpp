// The loader's key table, docs/configuration.md and config/emqd.example.yaml
// cannot drift apart: every key the loader knows is documented and shown in
// the example, the docs name no key the loader does not know, and the
// example loads, showing the real defaults.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

const std::string kExample = std::string(EMQ_SOURCE_DIR) + "/config/emqd.example.yaml";
const std::string kDocs = std::string(EMQ_SOURCE_DIR) + "/docs/configuration.md";

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
    if (name == "env" || name == "config" || name == "permanent_exit_codes" || name == "command") continue;
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
  const std::string text = read_text(kDocs);
  ASSERT_FALSE(text.empty()) << kDocs;
  for (const std::string& key : known_config_keys()) {
    EXPECT_NE(text.find("| `" + key + "` |"), std::string::npos) << key << " has no row in " << kDocs;
  }
}

TEST(Docs, DocumentNoKeyTheLoaderDoesNotKnow) {
  const std::vector<std::string> known = known_config_keys();
  std::istringstream lines(read_text(kDocs));
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
