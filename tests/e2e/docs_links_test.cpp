// The repository's pages cite only what a reader of the repository has:
// every link to a file, and every page named in the text (`protocol.md`,
// `docs/production.md`), resolves to a file of the checkout, from the page's
// own directory or from the top. (docs/ once cited PROTOCOL.md and
// DESIGN.md, the upstream texts, which the repository does not hold.)
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "doc_text.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = EMQ_SOURCE_DIR;

// The checkout's pages: every *.md outside hidden, build and dependency
// directories.
std::vector<fs::path> pages() {
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(kSourceDir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name[0] == '.' || name.rfind("build", 0) == 0 || name == "node_modules")) {
      it.disable_recursion_pending();
    } else if (it->is_regular_file() && it->path().extension() == ".md") {
      out.push_back(it->path());
    }
  }
  return out;
}

bool resolves(const fs::path& page, const std::string& target) {
  return fs::exists(page.parent_path() / target) || fs::exists(kSourceDir / target);
}

TEST(Docs, CiteOnlyFilesOfTheRepository) {
  const std::vector<fs::path> all = pages();
  ASSERT_GE(all.size(), 12u) << "README.md, docs/ and the READMEs below";
  const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
  const std::regex named(R"((^|[^A-Za-z0-9_./:-])([A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md)\b)");
  for (const fs::path& page : all) {
    std::istringstream lines(read_doc(page.string()));
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      const std::string where = fs::relative(page, kSourceDir).string() + ":" + std::to_string(n);
      for (std::sregex_iterator it(line.begin(), line.end(), link), end; it != end; ++it) {
        const std::string target = (*it)[1];
        if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
        EXPECT_TRUE(resolves(page, target)) << where << ": a link to " << target << ", which is not in the checkout";
      }
      for (std::sregex_iterator it(line.begin(), line.end(), named), end; it != end; ++it) {
        const std::string target = (*it)[2];
        EXPECT_TRUE(resolves(page, target))
            << where << ": names " << target << ", which the repository does not have: cite its own pages";
      }
    }
  }
}

}  // namespace
}  // namespace echomq::test
