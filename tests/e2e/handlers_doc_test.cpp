// docs/handlers.md's plugin blocks, as a reader follows them: the queue of
// "`plugin`: a shared library in-process" names the example plugin where
// the .deb installs it (debian/rules' multiarch directory, a file this
// build makes), and emqd checks it, with this build's plugin in its place;
// "Building a plugin" compiles the example as written and emqd checks the
// library it made.
#include <filesystem>
#include <fstream>

#include "doc_text.h"
#include "e2e_fixture.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

const std::string kPage = std::string(EMQ_SOURCE_DIR) + "/docs/handlers.md";

std::string head_for(const ValkeyServer& server) {
  return "valkey:\n  url: " + server.url() + "\nmetrics:\n  listen: \"\"\n";
}

RunResult check_config(const fs::path& dir, const std::string& yaml) {
  std::ofstream(dir / "emqd.yaml") << yaml;
  return run_program({emqd_binary(), "--check-config", "--config", (dir / "emqd.yaml").string()});
}

TEST(HandlersDoc, ThePluginQueueNamesWhereTheDebInstallsTheExample) {
  std::string block = fenced_block(kPage, "## `plugin`: a shared library in-process", "yaml");
  const RunResult arch = run_program({"/bin/sh", "-c", "dpkg-architecture -qDEB_HOST_MULTIARCH"});
  ASSERT_EQ(arch.code, 0) << arch.err;
  const std::string dir = "/usr/lib/" + arch.out.substr(0, arch.out.find('\n')) + "/echomq/plugins/";
  const std::string rules = read_doc(std::string(EMQ_SOURCE_DIR) + "/packaging/debian/rules");
  ASSERT_NE(rules.find("$(PKG)/usr/lib/$(DEB_HOST_MULTIARCH)/echomq/plugins"), std::string::npos)
      << "debian/rules no longer installs the plugins in the multiarch directory: the page must follow";
  const std::size_t at = block.find("path: " + dir);
  ASSERT_NE(at, std::string::npos) << "the block's path is not in " << dir << ":\n" << block;
  const std::size_t from = at + 6, to = block.find('\n', at);
  const std::string file = block.substr(from + dir.size(), to - from - dir.size());
  ASSERT_TRUE(fs::exists(fs::path(EMQ_LIB_DIR) / file)) << file << " is not a plugin this build makes (build/lib/)";

  block.replace(from, to - from, std::string(EMQ_LIB_DIR) + "/" + file);
  ValkeyServer server;
  const RunResult r = check_config(server.dir(), head_for(server) + block);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST(HandlersDoc, BuildingThePluginAsShownMakesALibraryEmqdLoads) {
  const std::string block = fenced_block(kPage, "### Building a plugin", "");
  ValkeyServer server;
  const fs::path dir = server.dir();
  // The block runs from the top of the tree (lib/include, examples/).
  for (const char* part : {"lib", "examples"})
    fs::create_directory_symlink(fs::path(EMQ_SOURCE_DIR) / part, dir / part);
  std::ofstream(dir / "emqd.yaml") << head_for(server)
                                   << "queues:\n  - name: digest\n    handler:\n      type: plugin\n      path: "
                                   << (dir / "libemq_sha256.so").string() << "\n";
  const RunResult r = run_program({"/bin/bash", "-c", "set -e\ncd " + dir.string() + "\n" + block}, "",
                                  {"PATH=" + std::string(EMQ_BIN_DIR) + ":/usr/bin:/bin"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("digest"), std::string::npos) << "emqd --check-config prints the queue it checked:\n" << r.out;
}

}  // namespace
}  // namespace echomq::test
