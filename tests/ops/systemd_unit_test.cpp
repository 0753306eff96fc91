// systemd/emqd.service as systemd itself reads it: `systemd-analyze verify`
// must say nothing at all (it only warns, exit 0, on an unknown or
// malformed key, so its silence is the check), and the offline security
// review must rate the sandbox well.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "ops_files.h"

namespace echomq::test {
namespace {

const fs::path kUnit = source_dir() / "systemd" / "emqd.service";

// The unit with ExecStart pointing at a binary that exists here (verify
// checks that it does): the built emqd.
std::string unit_for_verify() {
  fs::path bin = emqd_binary();
  if (!fs::exists(bin)) throw std::runtime_error(bin.string() + " is not built: build the emqd target first");
  std::string unit = read_text(kUnit);
  const std::string installed = "ExecStart=/usr/bin/emqd ";
  const std::size_t at = unit.find(installed);
  if (at == std::string::npos) throw std::runtime_error("no 'ExecStart=/usr/bin/emqd ' in " + kUnit.string());
  unit.replace(at, installed.size(), "ExecStart=" + bin.string() + " ");
  return unit;
}

#define REQUIRE_SYSTEMD_ANALYZE() \
  ASSERT_FALSE(find_program("systemd-analyze").empty()) \
      << "systemd-analyze is not installed: run scripts/install-deps.sh (package systemd)"

// Key=value lines of the [Service] section (the last value of a key wins,
// as in systemd, except for keys that add up, which keep every value).
std::multimap<std::string, std::string> service_keys(const std::string& unit) {
  std::multimap<std::string, std::string> keys;
  std::istringstream in(unit);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line;
      continue;
    }
    const std::size_t eq = line.find('=');
    if (section == "[Service]" && eq != std::string::npos) keys.emplace(line.substr(0, eq), line.substr(eq + 1));
  }
  return keys;
}

std::string one(const std::multimap<std::string, std::string>& keys, const std::string& key) {
  auto range = keys.equal_range(key);
  if (range.first == range.second) return "<absent>";
  return std::prev(range.second)->second;
}

TEST(SystemdUnit, VerifyFindsNothingToSay) {
  REQUIRE_SYSTEMD_ANALYZE();
  TempDir dir;
  const fs::path unit = dir.path() / "emqd.service";
  write_text(unit, unit_for_verify());
  RunResult r = run_tool("systemd-analyze", {"verify", unit.string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "") << "systemd-analyze verify had something to say about " << kUnit;
}

TEST(SystemdUnit, VerifyWouldCatchAMistake) {
  // The check above is only worth something if verify speaks up on a bad
  // key; a misspelt one and a bad value, in a copy of our unit.
  REQUIRE_SYSTEMD_ANALYZE();
  TempDir dir;
  std::string unit = unit_for_verify();
  unit = std::regex_replace(unit, std::regex("\nWatchdogSec=30\n"), "\nWatchdogSec=thirty\nTpye=notify\n");
  const fs::path bad = dir.path() / "emqd.service";
  write_text(bad, unit);
  RunResult r = run_tool("systemd-analyze", {"verify", bad.string()});
  EXPECT_NE(r.err.find("Tpye"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("thirty"), std::string::npos) << r.err;
}

TEST(SystemdUnit, TheSandboxRatesWellInTheOfflineSecurityReview) {
  REQUIRE_SYSTEMD_ANALYZE();
  TempDir dir;
  const fs::path unit = dir.path() / "emqd.service";
  write_text(unit, unit_for_verify());
  // Exposure is 0 (locked down) to 10 (none); 25 here means 2.5, "OK".
  RunResult r = run_tool("systemd-analyze", {"security", "--offline=true", "--threshold=25", "--no-pager", unit.string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Overall exposure level for emqd.service"), std::string::npos) << r.out << r.err;
}

TEST(SystemdUnit, LifecycleSettingsMatchTheDaemon) {
  const auto keys = service_keys(read_text(kUnit));
  EXPECT_EQ(one(keys, "Type"), "notify") << "emqd sends READY=1 itself";
  EXPECT_EQ(one(keys, "NotifyAccess"), "main") << "only emqd, not its handlers, may notify";
  EXPECT_EQ(one(keys, "ExecStart"), "/usr/bin/emqd --config /etc/echomq/emqd.yaml");
  EXPECT_EQ(one(keys, "WatchdogSec"), "30");
  EXPECT_EQ(one(keys, "Restart"), "on-failure");
  EXPECT_EQ(one(keys, "RestartPreventExitStatus"), "2") << "a bad config cannot be mended by restarting";
  EXPECT_EQ(keys.count("ExecReload"), 0u) << "emqd does not reload its configuration";
  // KillMode=mixed: SIGTERM reaches emqd alone, which drains; handlers must
  // not be signalled behind its back.
  EXPECT_EQ(one(keys, "KillMode"), "mixed");
  // The stop timeout must outlast the default drain (30 s) plus the kill
  // grace (5 s) and the final settle (5 s).
  EXPECT_GT(std::stoi(one(keys, "TimeoutStopSec")), 40);
  EXPECT_EQ(one(keys, "EnvironmentFile"), "-/etc/echomq/emqd.env") << "optional, for password_env";
  EXPECT_EQ(one(keys, "RestrictAddressFamilies"), "AF_UNIX AF_INET AF_INET6");
  EXPECT_EQ(one(keys, "CapabilityBoundingSet"), "");
  EXPECT_EQ(one(keys, "UMask"), "0077");
}

}  // namespace
}  // namespace echomq::test
