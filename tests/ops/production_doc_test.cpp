// docs/production.md's unit for `emq web`, taken from the page, read as
// systemd reads it: `systemd-analyze verify` says nothing about it (it
// warns only, so its silence is the check) once its ExecStart names this
// build's emq, and it serves loopback only, as the page advises. The emq
// it names is the one the .deb installs (debian/rules installs the build
// with the prefix /usr), the page's install for Debian hosts.
#include <gtest/gtest.h>

#include <set>

#include "config/config_schema.h"
#include "doc_text.h"
#include "ops_files.h"

namespace echomq::test {
namespace {

TEST(ProductionDoc, TheEmqWebUnitVerifies) {
  ASSERT_FALSE(find_program("systemd-analyze").empty())
      << "systemd-analyze is not installed: run scripts/install-deps.sh (package systemd)";
  std::string unit =
      fenced_block((source_dir() / "docs/production.md").string(), "## Several hosts and a managed Valkey", "ini");
  const std::string rules = read_text(source_dir() / "packaging/debian/rules");
  ASSERT_NE(rules.find("cmake --install $(EMQ_DEB_BUILDDIR) --prefix /usr\n"), std::string::npos)
      << "debian/rules no longer installs into /usr: the unit's ExecStart must follow";
  const std::string installed = "ExecStart=/usr/bin/emq web ";
  const std::size_t at = unit.find(installed);
  ASSERT_NE(at, std::string::npos) << "the unit no longer runs " << installed << ":\n" << unit;
  EXPECT_EQ(unit.find("--listen 127.0.0.1:", at), at + installed.size()) << "a loopback --listen first:\n" << unit;
  unit.replace(at, installed.size() - 5, "ExecStart=" + std::string(EMQ_BIN_DIR) + "/emq");

  TempDir dir;
  const fs::path path = dir.path() / "emq-web.service";
  write_text(path, unit);
  const RunResult r = run_tool("systemd-analyze", {"verify", path.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "") << "systemd-analyze verify had something to say about:\n" << unit;
}

// The part of the page from `from` up to `to`.
std::string page_part(const std::string& from, const std::string& to) {
  const std::string page = read_text(source_dir() / "docs/production.md");
  const std::size_t at = page.find(from);
  if (at == std::string::npos) return "";
  return page.substr(at, page.find(to, at) - at);
}

// "What must match across hosts" sorts every setting a daemon has: each
// key of a queue (its top: `backoff`, not `backoff.jitter`), each section
// of the file that is the daemon's own, and each key of `daemon:`, is
// named in it, as must match or as may differ.
TEST(ProductionDoc, WhatMustMatchAcrossHostsNamesEverySetting) {
  const std::string part = page_part("**What must match across hosts.**", "**Persistence without AOF.**");
  ASSERT_FALSE(part.empty()) << "docs/production.md has no \"What must match across hosts\"";
  std::set<std::string> names;
  for (const daemon::KeySpec& k : daemon::config_schema()) {
    const bool queue_key = (k.places & daemon::kQueue) != 0 && k.parent().empty();
    if (queue_key && k.path != "name" && k.path != "handler") names.insert(k.path);
    if (k.places == daemon::kTop && k.parent() == "daemon") names.insert(k.path);
  }
  for (const char* section : {"metrics", "log", "reaper", "shutdown", "schedules", "executor"}) names.insert(section);
  for (const std::string& name : names) {
    EXPECT_NE(part.find("`" + name + "`"), std::string::npos)
        << "docs/production.md, \"What must match across hosts\", "
        << "does not say whether `" << name << "` must match";
  }
}

// The managed Valkey's keyspace events need emqd to listen too, which it
// does only when told (the key's default is false).
TEST(ProductionDoc, TheManagedKeyspaceEventsStepSwitchesEmqdsListeningOn) {
  const daemon::KeySpec& key = daemon::key_spec(daemon::kTop, "valkey.keyspace_events");
  ASSERT_EQ(key.fallback, "false") << "the default changed: the page's step may go";
  const std::string part = page_part("**Keyspace events.**", "**DNS.**");
  ASSERT_FALSE(part.empty()) << "docs/production.md has no \"Keyspace events\" step";
  EXPECT_NE(part.find("`valkey.keyspace_events: true`"), std::string::npos) << part;
}

}  // namespace
}  // namespace echomq::test
