// docs/clients.md followed as a newcomer follows it: every fenced block of
// the page, taken from its text, runs as written against a real server and
// the real emqd. The two installs run in an application directory of their
// own, against a copy of the checkout (pip builds in the tree it is given);
// then emqd runs the page's configuration with the page's Python handler,
// and again with its Node one, and each time every producer and flow block
// runs with the interpreters the installs made. Three substitutions, and
// only these, each of which must be found: the server's port for 6379, the
// copy for /path/to/emqd, the application directory for /srv/compress.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "doc_text.h"
#include "e2e_fixture.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = EMQ_SOURCE_DIR;
// The section whose blocks install the speakers from their packages: only
// `make packages` builds those, so `make package-test` runs these blocks as
// written (tests/package/run_checks.sh), not this test.
const std::string kFromThePackages = "## From the packages";

// Replaces every `from` with `to` in `text`; counts the replacements.
std::string substitute(std::string text, const std::string& from, const std::string& to, int& found) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++found;
  }
  return text;
}

void write_file(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string said(const RunResult& r) {
  return "exit " + std::to_string(r.code) + "\nstdout:\n" + r.out + "stderr:\n" + r.err;
}

// The page's blocks by what they are for; a block of any other kind fails
// the test, so a new example cannot go untested.
struct Page {
  std::vector<std::string> installs;  // sh
  std::string config;                 // yaml
  std::string python_handler, node_handler;
  std::vector<DocBlock> programs;  // python and js producers and flows
};

Page read_page(const std::string& port, const fs::path& checkout, const fs::path& app) {
  Page p;
  int ports = 0, checkouts = 0, apps = 0;
  for (DocBlock b : fenced_blocks((kSource / "docs/clients.md").string())) {
    if (b.heading == kFromThePackages) continue;
    b.body = substitute(b.body, "127.0.0.1:6379", "127.0.0.1:" + port, ports);
    b.body = substitute(b.body, "/path/to/emqd", checkout.string(), checkouts);
    b.body = substitute(b.body, "/srv/compress", app.string(), apps);
    const bool handler = b.body.find("handler.pool(") != std::string::npos;
    if (b.lang == "sh") {
      p.installs.push_back(b.body);
    } else if (b.lang == "yaml" && p.config.empty()) {
      p.config = b.body;
    } else if (b.lang == "python" && handler) {
      p.python_handler = b.body;
    } else if (b.lang == "js" && handler) {
      p.node_handler = b.body;
    } else if (b.lang == "python" || b.lang == "js") {
      p.programs.push_back(b);
    } else {
      ADD_FAILURE() << "docs/clients.md:" << b.line << ": a ```" << b.lang << " block this test does not run";
    }
  }
  EXPECT_GT(ports, 0) << "the page no longer says 127.0.0.1:6379: update this test with it";
  EXPECT_GT(checkouts, 0) << "the page no longer says /path/to/emqd: update this test with it";
  EXPECT_GT(apps, 0) << "the page no longer says /srv/compress: update this test with it";
  return p;
}

// A checkout as pip needs one: its own copy of clients/python (the build
// writes there), the rest of the tree it reads (lua/, VERSION) linked.
void make_checkout(const fs::path& checkout) {
  fs::create_directories(checkout / "clients");
  fs::copy(kSource / "clients/python", checkout / "clients/python", fs::copy_options::recursive);
  fs::create_directory_symlink(kSource / "clients/node", checkout / "clients/node");
  fs::create_directory_symlink(kSource / "lua", checkout / "lua");
  fs::create_symlink(kSource / "VERSION", checkout / "VERSION");
}

// The configuration with the handler command the page gives as the
// alternative in its comment ("# or [node, compress.js]").
std::string with_alternative_command(const std::string& config) {
  const std::size_t command = config.find("command: [");
  const std::size_t alternative = config.find("# or [", command);
  EXPECT_NE(alternative, std::string::npos) << "the configuration names no other command:\n" << config;
  if (alternative == std::string::npos) return config;
  const std::size_t end = config.find(']', command);
  const std::string other = config.substr(alternative + 5, config.find(']', alternative) + 1 - (alternative + 5));
  return config.substr(0, command + 9) + other + config.substr(end + 1);
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("emqd-clients-doc-" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    if (std::getenv("EMQ_KEEP_TEST_DIRS") == nullptr) fs::remove_all(path);
  }
};

// Runs every producer and flow block in `app` with the installs'
// interpreters; a producer must say what it was promised.
void run_programs(const Page& page, const fs::path& app, std::size_t report_bytes, const std::string& handler) {
  for (std::size_t i = 0; i < page.programs.size(); ++i) {
    const DocBlock& b = page.programs[i];
    SCOPED_TRACE("docs/clients.md:" + std::to_string(b.line) + " under the " + handler + " handler");
    const bool python = b.lang == "python";
    const fs::path file = app / ("block" + std::to_string(b.line) + (python ? ".py" : ".js"));
    write_file(file, b.body);
    const RunResult r = run_script(app.string(), (python ? ".venv/bin/python '" : "node '") + file.string() + "'");
    ASSERT_EQ(r.code, 0) << said(r);
    if (b.body.find("report.csv") != std::string::npos) {
      EXPECT_NE(r.out.find("bytes of " + std::to_string(report_bytes) + "\n"), std::string::npos) << said(r);
      EXPECT_NE(r.out.find("delayed "), std::string::npos) << said(r);
    }
  }
}

TEST(ClientsDoc, EveryBlockRunsAsWritten) {
  ASSERT_TRUE(fs::exists(kSource / "clients/node/node_modules/ioredis"))
      << "clients/node/node_modules is missing: make node-deps (npm ci --prefix clients/node)";
  ValkeyServer server;
  TempDir dir;
  const fs::path checkout = dir.path / "checkout", app = dir.path / "app";
  make_checkout(checkout);
  fs::create_directories(app);
  const Page page = read_page(std::to_string(server.port()), checkout, app);
  ASSERT_EQ(page.installs.size(), 2u) << "the Python and the Node install";
  ASSERT_FALSE(page.config.empty() || page.python_handler.empty() || page.node_handler.empty());
  ASSERT_GE(page.programs.size(), 4u) << "a producer and a flow in each language";

  for (const std::string& install : page.installs) {
    const RunResult r = run_script(app.string(), install);
    ASSERT_EQ(r.code, 0) << install << said(r);
  }
  // The files the page tells its reader to save and to have.
  write_file(app / "compress.py", page.python_handler);
  write_file(app / "compress.js", page.node_handler);
  std::string report = "id,name,amount\n";
  for (int i = 0; report.size() < 50000; ++i) report += std::to_string(i) + ",row " + std::to_string(i) + ",12.50\n";
  write_file(app / "report.csv", report);

  for (const auto& [handler, config] :
       {std::pair<std::string, std::string>{"Python", page.config}, {"Node", with_alternative_command(page.config)}}) {
    SCOPED_TRACE(handler + " handler:\n" + config);
    EmqdProcess emqd(config);
    ASSERT_TRUE(emqd.wait_ready()) << emqd.log();
    run_programs(page, app, report.size(), handler);
    emqd.signal(SIGTERM);
    EXPECT_EQ(emqd.wait_exit(seconds(30)), 0) << emqd.log();
  }
}

// The README's install lines are the ones this page gives (and the test
// above runs), in one line for pasting.
TEST(ClientsDoc, TheReadmeInstallsTheClientsAsThisPageDoes) {
  auto commands = [](const std::string& text) {
    std::set<std::string> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      line = line.substr(0, line.find('#'));
      for (std::size_t from = 0, to; from < line.size(); from = to + 2) {
        to = std::min(line.find("&&", from), line.size());
        std::string c = line.substr(from, to - from);
        c.erase(0, c.find_first_not_of(' '));
        c.erase(c.find_last_not_of(' ') + 1);
        if (!c.empty()) out.insert(c);
      }
    }
    return out;
  };
  std::string page, readme;
  for (const DocBlock& b : fenced_blocks((kSource / "docs/clients.md").string())) {
    if (b.lang == "sh" && b.heading != kFromThePackages) page += b.body;
  }
  for (const DocBlock& b : fenced_blocks((kSource / "README.md").string())) {
    if (b.lang == "sh" && b.body.find("pip install") != std::string::npos) readme += b.body;
  }
  ASSERT_FALSE(readme.empty()) << "README.md has no block with pip install";
  EXPECT_EQ(commands(readme), commands(page)) << "README.md:\n" << readme << "docs/clients.md:\n" << page;
}

}  // namespace
}  // namespace echomq::test
