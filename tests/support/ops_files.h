// Files and programs for the ops tests: the source tree, the build tree, a
// temporary directory, running a tool found on PATH, and this build installed.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "emqd_process.h"
#include "valkey_server.h"

namespace echomq::test {

namespace fs = std::filesystem;

inline fs::path source_dir() { return EMQ_SOURCE_DIR; }
// EMQ_BIN_DIR is <build>/bin.
inline fs::path build_dir() { return fs::path(EMQ_BIN_DIR).parent_path(); }

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "emqd-ops-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A tool the suite's dependencies install (scripts/install-deps.sh): a
// test that needs one fails without it, naming the package; never a skip,
// which would pass where the check never ran.
#define ASSERT_TOOL_INSTALLED(name, package)                        \
  ASSERT_FALSE(::echomq::test::find_program(name).empty())          \
      << name << " is not installed: run scripts/install-deps.sh (" \
      << "package " << package << ")"

// Runs a tool from PATH; throws when it is not installed.
inline RunResult run_tool(const std::string& name, std::vector<std::string> args, const std::string& stdin_data = "",
                          std::vector<std::string> env = {}) {
  const std::string path = find_program(name);
  if (path.empty()) throw std::runtime_error(name + " is not on PATH: run scripts/install-deps.sh");
  args.insert(args.begin(), path);
  return run_program(args, stdin_data, std::move(env));
}

// This build, installed once per test process with `cmake --install
// --prefix <a temporary directory>`: the tree a package is made from.
// Tests check `result` before they look at the tree.
struct InstalledTree {
  InstalledTree() : result(run_tool("cmake", {"--install", build_dir().string(), "--prefix", root.path().string()})) {}
  fs::path at(const std::string& relative) const { return root.path() / relative; }

  TempDir root;
  RunResult result;
};

inline const InstalledTree& installed_tree() {
  static const InstalledTree tree;
  return tree;
}

}  // namespace echomq::test
