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
  void SetUp() override { ASSERT_EQ(tree().result.code, 0) << tree().result.out << tree().result.err; }

  static const InstalledTree& tree() { return installed_tree(); }
  static fs::path at(const std::string& relative) { return tree().at(relative); }
  static std::set<std::string> names_in(const fs::path& dir, const std::string& ext) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ext) names.insert(e.path().filename().string());
    }
    return names;
  }
};

TEST_F(InstallTree, NothingIsInstalledOutsideThePrefix) {
  std::istringstream in(tree().result.out);
  int files = 0;
  for (std::string line; std::getline(in, line);) {
    for (const std::string verb : {"-- Installing: ", "-- Up-to-date: "}) {
      if (line.rfind(verb, 0) != 0) continue;
      ++files;
      EXPECT_EQ(line.find(tree().root.path().string(), verb.size()), verb.size()) << line;
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

TEST_F(InstallTree, TheUnitsAreInLibSystemdSystemWhateverTheLibdir) {
  // Their contents, and that they run the emqd installed here, are
  // systemd_unit_test.cpp's.
  EXPECT_TRUE(fs::exists(at("lib/systemd/system/emqd.service")));
  EXPECT_TRUE(fs::exists(at("lib/systemd/system/emqd@.service")));
}

TEST_F(InstallTree, EveryLuaTransitionIsInShareEchomqLua) {
  const auto installed = names_in(at("share/echomq/lua"), ".lua");
  EXPECT_EQ(installed, names_in(source_dir() / "lua", ".lua"));
  EXPECT_EQ(installed.size(), echomq::kScriptCount) << "every transition of emq/1 the library knows";
}

TEST_F(InstallTree, ThePublicHeadersAndThePluginAbiAreInIncludeEchomq) {
  std::set<std::string> headers = names_in(source_dir() / "lib/include/echomq", ".h");
  headers.insert("script_names.h");  // the Script enum, generated from lua/ (cmake/lua_scripts.cmake)
  EXPECT_EQ(names_in(at("include/echomq"), ".h"), headers);
  EXPECT_TRUE(fs::exists(at("include/echomq/plugin.h"))) << "the plugin ABI header plugin authors compile against";
}

TEST_F(InstallTree, TheExampleConfigAndTheDocsAreInShareDoc) {
  EXPECT_TRUE(fs::exists(at("share/doc/echomq/emqd.example.yaml")));
  EXPECT_TRUE(fs::exists(at("share/doc/echomq/operations.md"))) << "the unit's Documentation= points here";
}

}  // namespace
}  // namespace echomq::test
