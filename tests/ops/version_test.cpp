// One version, the file VERSION, for emqd, emq, the emq module, the .deb and
// both speakers' packages: what each built here says, against the file.
// The packages themselves (the .deb's version, the wheel's and the
// tarball's) are checked where they are built and installed, by make
// package-test (tests/package/).
#include <gtest/gtest.h>

#include <map>

#include "echomq/connection.h"
#include "ops_files.h"

namespace echomq::test {
namespace {

std::string version_file() {
  std::string text = read_text(source_dir() / "VERSION");
  return text.substr(0, text.find('\n'));
}

// MODULE LIST's ver: MAJOR * 10000 + MINOR * 100 + PATCH.
long long as_module_version(const std::string& version) {
  long long major = 0, minor = 0, patch = 0;
  char dot1 = 0, dot2 = 0;
  std::istringstream in(version);
  in >> major >> dot1 >> minor >> dot2 >> patch;
  if (!in || dot1 != '.' || dot2 != '.') throw std::runtime_error("VERSION is not MAJOR.MINOR.PATCH: " + version);
  return major * 10000 + minor * 100 + patch;
}

TEST(OneVersion, EmqdAndEmqSayTheVersionFile) {
  const std::string version = version_file();
  for (const auto& [program, binary] : {std::pair{std::string("emqd"), emqd_binary()}, {"emq", emq_binary()}}) {
    RunResult r = run_program({binary, "--version"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind(program + " " + version + " (", 0), 0u) << program << " --version said: " << r.out;
  }
}

TEST(OneVersion, ModuleListShowsTheVersionFileAsANumber) {
  ValkeyServer::Options with_module;
  with_module.load_module = true;
  ValkeyServer server(with_module);
  Connection raw = Connection::open(server.options());
  Reply r = raw.command({"MODULE", "LIST"});
  ASSERT_EQ(r.elements.size(), 1u);
  std::map<std::string, const Reply*> fields;
  for (std::size_t i = 0; i + 1 < r.elements[0].elements.size(); i += 2) {
    fields[r.elements[0].elements[i].str] = &r.elements[0].elements[i + 1];
  }
  ASSERT_TRUE(fields.count("ver"));
  EXPECT_EQ(fields["ver"]->integer, as_module_version(version_file()));
}

TEST(OneVersion, ThePythonSpeakerTakesTheVersionFile) {
  // setup.py reads VERSION; pyproject.toml must not pin a version of its own.
  const std::string pyproject = read_text(source_dir() / "clients/python/pyproject.toml");
  EXPECT_EQ(pyproject.find("\nversion ="), std::string::npos) << "clients/python/pyproject.toml pins a version";
  // Debian's python3, whose setuptools the wheel is built with (make packages).
  RunResult r = run_program({"/bin/sh", "-c", "cd \"$0\" && exec /usr/bin/python3 setup.py --version",
                             (source_dir() / "clients/python").string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, version_file() + "\n") << r.err;
}

// A checkout linked with `npm install /path/to/emqd/clients/node` reports
// package.json's version; the tarball is packed with VERSION set into it.
TEST(OneVersion, TheNodeSpeakerSaysTheVersionFile) {
  const std::string package = read_text(source_dir() / "clients/node/package.json");
  EXPECT_NE(package.find("\n  \"version\": \"" + version_file() + "\",\n"), std::string::npos)
      << "clients/node/package.json does not say \"version\": \"" << version_file() << "\" (VERSION)";
}

}  // namespace
}  // namespace echomq::test
