// The systemd units as `cmake --install` writes them (from
// systemd/emqd.service.in, with the prefix of that install), read as
// systemd itself reads them: `systemd-analyze verify` must say nothing at
// all (it only warns, exit 0, on an unknown or malformed key or a missing
// binary, so its silence is the check), and the offline security review
// must rate the sandbox well. Nothing here rewrites the installed unit
// before verifying it: the ExecStart it names must be the emqd installed
// beside it, as it is after `make install` on a real machine.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "ops_files.h"

namespace echomq::test {
namespace {

#define REQUIRE_SYSTEMD_ANALYZE()                       \
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

class SystemdUnit : public ::testing::Test {
 protected:
  void SetUp() override {
    const InstalledTree& tree = installed_tree();
    ASSERT_EQ(tree.result.code, 0) << tree.result.out << tree.result.err;
  }
  static fs::path unit(const std::string& name) { return installed_tree().at("lib/systemd/system/" + name); }
  static std::string installed_emqd() { return installed_tree().at("bin/emqd").string(); }

  static RunResult verify(const fs::path& path) { return run_tool("systemd-analyze", {"verify", path.string()}); }
  // An instance of the template, emqd@emails.service, through a link named
  // for it in `dir`, as systemd loads an instance from emqd@.service.
  static fs::path instance_in(const TempDir& dir) {
    const fs::path instance = dir.path() / "emqd@emails.service";
    fs::create_symlink(unit("emqd@.service"), instance);
    return instance;
  }
};

TEST_F(SystemdUnit, VerifyFindsNothingToSayAboutTheInstalledUnit) {
  REQUIRE_SYSTEMD_ANALYZE();
  RunResult r = verify(unit("emqd.service"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "") << "systemd-analyze verify had something to say about " << unit("emqd.service");
}

TEST_F(SystemdUnit, VerifyFindsNothingToSayAboutAnInstanceOfTheTemplate) {
  REQUIRE_SYSTEMD_ANALYZE();
  TempDir dir;
  RunResult r = verify(instance_in(dir));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "") << "systemd-analyze verify had something to say about " << unit("emqd@.service");
}

TEST_F(SystemdUnit, TheUnitsRunTheEmqdInstalledBesideThem) {
  EXPECT_EQ(one(service_keys(read_text(unit("emqd.service"))), "ExecStart"),
            installed_emqd() + " --config /etc/echomq/emqd.yaml");
  const auto instance = service_keys(read_text(unit("emqd@.service")));
  EXPECT_EQ(one(instance, "ExecStart"), installed_emqd() + " --config /etc/echomq/emqd-%i.yaml");
  EXPECT_EQ(one(instance, "EnvironmentFile"), "-/etc/echomq/emqd-%i.env");
  EXPECT_EQ(one(instance, "StateDirectory"), "emqd/%i") << "each instance its own embedded server's data";
  EXPECT_EQ(one(instance, "RuntimeDirectory"), "emqd/%i");
}

// `make install` is `cmake --install` with the configured prefix (by
// default /usr/local); a package adds DESTDIR. The unit must name the
// binary where it lands without DESTDIR, which is where it is once the
// package is unpacked: verified inside the staging root, as systemd on that
// machine would read it (`--root`; the host's own units are copied in for
// the targets the unit orders itself after).
TEST_F(SystemdUnit, UnderDestdirTheUnitVerifiesInsideTheStagingRoot) {
  REQUIRE_SYSTEMD_ANALYZE();
  TempDir staging;
  const fs::path root = staging.path();
  RunResult r = run_tool("cmake", {"--install", build_dir().string()}, "", {"DESTDIR=" + root.string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  fs::path found;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().filename() == "emqd.service") found = e.path();
  }
  ASSERT_FALSE(found.empty()) << r.out;
  // <root><prefix>/lib/systemd/system/emqd.service
  const fs::path units = found.parent_path();
  const std::string prefix = units.parent_path().parent_path().parent_path().string().substr(root.string().size());
  const std::string exec = one(service_keys(read_text(found)), "ExecStart");
  EXPECT_EQ(exec, prefix + "/bin/emqd --config /etc/echomq/emqd.yaml");

  fs::create_directories(root / "usr/lib/systemd");
  fs::copy("/usr/lib/systemd/system", root / "usr/lib/systemd/system",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::skip_existing);
  fs::create_symlink(prefix + "/lib/systemd/system/emqd@.service", units / "emqd@emails.service");
  for (const std::string name : {"emqd.service", "emqd@emails.service"}) {
    RunResult v = run_tool("systemd-analyze", {"verify", "--root=" + root.string(), (units / name).string()});
    EXPECT_EQ(v.code, 0) << name << ": " << v.err;
    EXPECT_EQ(v.out + v.err, "") << "systemd-analyze verify --root had something to say about " << name;
  }
}

TEST_F(SystemdUnit, VerifyWouldCatchAMistake) {
  // The checks above are only worth something if verify speaks up: on a
  // misspelt key, a bad value, and an ExecStart naming a binary that is not
  // there (a unit for /usr/bin after an install to /usr/local).
  REQUIRE_SYSTEMD_ANALYZE();
  TempDir dir;
  std::string text = read_text(unit("emqd.service"));
  text = std::regex_replace(text, std::regex("\nWatchdogSec=30\n"), "\nWatchdogSec=thirty\nTpye=notify\n");
  text =
      std::regex_replace(text, std::regex("\nExecStart=[^ ]+ "), "\nExecStart=" + dir.path().string() + "/bin/emqd ");
  const fs::path bad = dir.path() / "emqd.service";
  write_text(bad, text);
  RunResult r = verify(bad);
  EXPECT_NE(r.err.find("Tpye"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("thirty"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not executable"), std::string::npos) << r.err;
}

TEST_F(SystemdUnit, TheSandboxRatesWellInTheOfflineSecurityReview) {
  REQUIRE_SYSTEMD_ANALYZE();
  // Exposure is 0 (locked down) to 10 (none); 25 here means 2.5, "OK".
  TempDir dir;
  for (const fs::path& path : {unit("emqd.service"), instance_in(dir)}) {
    RunResult r =
        run_tool("systemd-analyze", {"security", "--offline=true", "--threshold=25", "--no-pager", path.string()});
    EXPECT_EQ(r.code, 0) << path << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("Overall exposure level for " + path.filename().string()), std::string::npos)
        << r.out << r.err;
  }
}

TEST_F(SystemdUnit, LifecycleSettingsMatchTheDaemon) {
  for (const std::string name : {"emqd.service", "emqd@.service"}) {
    SCOPED_TRACE(name);
    const auto keys = service_keys(read_text(unit(name)));
    EXPECT_EQ(one(keys, "Type"), "notify") << "emqd sends READY=1 itself";
    EXPECT_EQ(one(keys, "NotifyAccess"), "main") << "only emqd, not its handlers, may notify";
    EXPECT_EQ(one(keys, "WatchdogSec"), "30");
    EXPECT_EQ(one(keys, "Restart"), "on-failure");
    EXPECT_EQ(one(keys, "RestartPreventExitStatus"), "2") << "a bad config cannot be mended by restarting";
    EXPECT_EQ(keys.count("ExecReload"), 0u) << "emqd does not reload its configuration";
    // KillMode=mixed: SIGTERM reaches emqd alone, which drains; handlers
    // must not be signalled behind its back.
    EXPECT_EQ(one(keys, "KillMode"), "mixed");
    // The stop timeout must outlast the default drain (30 s) plus the kill
    // grace (5 s) and the final settle (5 s).
    EXPECT_GT(std::stoi(one(keys, "TimeoutStopSec")), 40);
    EXPECT_EQ(one(keys, "RestrictAddressFamilies"), "AF_UNIX AF_INET AF_INET6");
    EXPECT_EQ(one(keys, "CapabilityBoundingSet"), "");
    EXPECT_EQ(one(keys, "UMask"), "0077");
  }
  EXPECT_EQ(one(service_keys(read_text(unit("emqd.service"))), "EnvironmentFile"), "-/etc/echomq/emqd.env")
      << "optional, for password_env";
}

}  // namespace
}  // namespace echomq::test
