// `cmake --install` into a temporary prefix: the tree a package or the
// container image is made from. Everything lands under the prefix (no
// absolute destination escapes it) and in the places the docs name.
#include <gtest/gtest.h>

#include <set>

#include "echomq/scripts.h"
#include "ops_files.h"

namespace echomq::test {
namespace {

class InstallTree : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    prefix_ = new TempDir();
    result_ = new RunResult(run_tool("cmake", {"--install", build_dir().string(), "--prefix", prefix_->path().string()}));
  }
  static void TearDownTestSuite() {
    delete result_;
    delete prefix_;
  }
  void SetUp() override { ASSERT_EQ(result_->code, 0) << result_->out << result_->err; }

  static fs::path at(const std::string& relative) { return prefix_->path() / relative; }
  static std::set<std::string> names_in(const fs::path& dir, const std::string& ext) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ext) names.insert(e.path().filename().string());
    }
    return names;
  }

  static TempDir* prefix_;
  static RunResult* result_;
};
TempDir* InstallTree::prefix_ = nullptr;
RunResult* InstallTree::result_ = nullptr;

TEST_F(InstallTree, NothingIsInstalledOutsideThePrefix) {
  std::istringstream in(result_->out);
  int files = 0;
  for (std::string line; std::getline(in, line);) {
    for (const std::string verb : {"-- Installing: ", "-- Up-to-date: "}) {
      if (line.rfind(verb, 0) != 0) continue;
      ++files;
      EXPECT_EQ(line.find(prefix_->path().string(), verb.size()), verb.size()) << line;
    }
  }
  EXPECT_GT(files, 20);
}

TEST_F(InstallTree, TheBinariesAreInBin) {
  for (const char* bin : {"bin/emqd", "bin/emq"}) {
    ASSERT_TRUE(fs::exists(at(bin))) << bin;
    EXPECT_NE(fs::status(at(bin)).permissions() & fs::perms::owner_exec, fs::perms::none) << bin;
  }
}

TEST_F(InstallTree, TheUnitIsInLibSystemdSystemWhateverTheLibdir) {
  ASSERT_TRUE(fs::exists(at("lib/systemd/system/emqd.service")));
  EXPECT_EQ(read_text(at("lib/systemd/system/emqd.service")), read_text(source_dir() / "systemd/emqd.service"));
}

TEST_F(InstallTree, EveryLuaTransitionIsInShareEchomqLua) {
  const auto installed = names_in(at("share/echomq/lua"), ".lua");
  EXPECT_EQ(installed, names_in(source_dir() / "lua", ".lua"));
  EXPECT_EQ(installed.size(), echomq::kScriptCount) << "every transition of emq/1 the library knows";
}

TEST_F(InstallTree, ThePublicHeadersAndThePluginAbiAreInIncludeEchomq) {
  EXPECT_EQ(names_in(at("include/echomq"), ".h"), names_in(source_dir() / "lib/include/echomq", ".h"));
  EXPECT_TRUE(fs::exists(at("include/echomq/plugin.h"))) << "the plugin ABI header plugin authors compile against";
}

TEST_F(InstallTree, TheExampleConfigAndTheDocsAreInShareDoc) {
  EXPECT_TRUE(fs::exists(at("share/doc/echomq/emqd.example.yaml")));
  EXPECT_TRUE(fs::exists(at("share/doc/echomq/operations.md"))) << "the unit's Documentation= points here";
}

}  // namespace
}  // namespace echomq::test
