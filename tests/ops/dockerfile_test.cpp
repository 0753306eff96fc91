// The Dockerfile, checked without a Docker engine: every file it copies from
// the context exists and is not ignored, every file it copies from the build
// stage is one that `cmake --install` makes, every script it runs exists and
// takes the flags given, the runtime packages cover what emqd links, and the
// HEALTHCHECK command really tells a 200 from a 503. docs/operations.md
// names what the image holds, and `make image-test` (which builds and runs
// the image) builds the format that keeps the HEALTHCHECK.
#include <fnmatch.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "config/config_types.h"
#include "http/http_server.h"
#include "ops_files.h"

namespace echomq::test {
namespace {

struct Instruction {
  std::string op;    // upper case: FROM, COPY, RUN, ...
  std::string args;  // the rest, continuation lines joined
};

std::vector<Instruction> parse_dockerfile(const fs::path& path) {
  std::vector<Instruction> out;
  std::istringstream in(read_text(path));
  std::string line, joined;
  while (std::getline(in, line)) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    joined += line;
    const std::size_t sp = joined.find_first_of(" \t", joined.find_first_not_of(" \t"));
    Instruction i;
    i.op = joined.substr(joined.find_first_not_of(" \t"), sp - joined.find_first_not_of(" \t"));
    i.args = sp == std::string::npos ? "" : joined.substr(joined.find_first_not_of(" \t", sp));
    out.push_back(i);
    joined.clear();
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// The build stages in order, each a list of its instructions.
std::vector<std::vector<Instruction>> stages() {
  std::vector<std::vector<Instruction>> s;
  for (const Instruction& i : parse_dockerfile(source_dir() / "Dockerfile")) {
    if (i.op == "FROM") s.emplace_back();
    if (!s.empty()) s.back().push_back(i);
  }
  return s;
}

std::vector<std::string> dockerignore() {
  std::vector<std::string> patterns;
  std::istringstream in(read_text(source_dir() / ".dockerignore"));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') patterns.push_back(line);
  }
  return patterns;
}

bool ignored(const std::string& path, const std::vector<std::string>& patterns) {
  // The path or any directory above it matching a pattern (Docker's rule).
  fs::path p;
  for (const auto& part : fs::path(path)) {
    p /= part;
    for (std::string pat : patterns) {
      if (pat.rfind("**/", 0) == 0) pat = pat.substr(3);
      if (::fnmatch(pat.c_str(), p.c_str(), FNM_PATHNAME) == 0) return true;
    }
  }
  return false;
}

TEST(Dockerfile, HasABuildStageAndASlimNonRootRuntimeStage) {
  auto s = stages();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0][0].args, "debian:bookworm-slim AS build");
  EXPECT_EQ(s[1][0].args, "debian:bookworm-slim");
  std::string user, entrypoint, cmd;
  for (const Instruction& i : s[1]) {
    if (i.op == "USER") user = i.args;
    if (i.op == "ENTRYPOINT") entrypoint = i.args;
    if (i.op == "CMD") cmd = i.args;
  }
  ASSERT_FALSE(user.empty());
  EXPECT_NE(std::stoi(user), 0) << "a numeric non-root user, so runAsNonRoot can verify it";
  EXPECT_EQ(nlohmann::json::parse(entrypoint), nlohmann::json::parse(R"(["emqd"])"));
  EXPECT_EQ(nlohmann::json::parse(cmd), nlohmann::json::parse(R"(["--config", "/etc/echomq/emqd.yaml"])"));
}

TEST(Dockerfile, EveryFileCopiedFromTheContextExistsAndIsNotIgnored) {
  const auto patterns = dockerignore();
  int copies = 0;
  for (const auto& stage : stages()) {
    for (const Instruction& i : stage) {
      if (i.op != "COPY" || i.args.rfind("--from=", 0) == 0) continue;
      std::vector<std::string> w = words(i.args);
      ASSERT_GE(w.size(), 2u) << i.args;
      for (std::size_t k = 0; k + 1 < w.size(); ++k) {
        ++copies;
        EXPECT_TRUE(fs::exists(source_dir() / w[k])) << "COPY " << w[k] << ": no such file in the repository";
        if (w[k] != ".") {
          EXPECT_FALSE(ignored(w[k], patterns)) << "COPY " << w[k] << " is in .dockerignore";
        }
      }
    }
  }
  EXPECT_GE(copies, 3);
  EXPECT_TRUE(ignored("build-ops/bin/emqd", patterns)) << "host build trees stay out of the context";
  EXPECT_TRUE(ignored(".git", patterns));
  EXPECT_FALSE(ignored("lua/claim.lua", patterns));
}

TEST(Dockerfile, EveryFileCopiedFromTheBuildStageIsInTheInstallTree) {
  // The build stage runs `DESTDIR=/out cmake --install` with prefix /usr;
  // the same install here, under a temporary prefix, must hold every path
  // the runtime stage copies.
  TempDir prefix;
  RunResult r = run_tool("cmake", {"--install", build_dir().string(), "--prefix", (prefix.path() / "usr").string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  int copies = 0;
  const auto all = stages();
  for (const Instruction& i : all.back()) {
    if (i.op != "COPY" || i.args.rfind("--from=build ", 0) != 0) continue;
    std::vector<std::string> w = words(i.args.substr(std::string("--from=build ").size()));
    for (std::size_t k = 0; k + 1 < w.size(); ++k) {
      ++copies;
      ASSERT_EQ(w[k].rfind("/out/", 0), 0u) << w[k] << " is not under the build stage's DESTDIR /out";
      EXPECT_TRUE(fs::exists(prefix.path() / w[k].substr(5)))
          << "COPY --from=build " << w[k] << ": cmake --install does not make it";
      // valkey-server 8 loads no module file without the execute bit.
      if (fs::path(w[k]).extension() == ".so") {
        EXPECT_NE(fs::status(prefix.path() / w[k].substr(5)).permissions() & fs::perms::owner_exec, fs::perms::none)
            << w[k] << " is installed without the execute bit: valkey-server refuses to load it";
      }
    }
  }
  EXPECT_GE(copies, 3);
}

TEST(Dockerfile, EveryScriptItRunsExistsAndTakesTheFlagsGiven) {
  int scripts = 0;
  for (const auto& stage : stages()) {
    std::map<std::string, std::string> copied;  // path in the image -> path in the repository
    std::string workdir = "/";
    for (const Instruction& i : stage) {
      if (i.op == "WORKDIR") workdir = i.args;
      if (i.op == "COPY" && i.args.rfind("--from=", 0) != 0) {
        std::vector<std::string> w = words(i.args);
        fs::path dest = w.back()[0] == '/' ? fs::path(w.back()) : fs::path(workdir) / w.back();
        copied[dest.lexically_normal().string()] = w[0];
      }
      if (i.op != "RUN") continue;
      std::vector<std::string> w = words(i.args);
      for (std::size_t k = 0; k < w.size(); ++k) {
        if (w[k].size() < 4 || w[k].compare(w[k].size() - 3, 3, ".sh") != 0) continue;
        fs::path in_image = w[k][0] == '/' ? fs::path(w[k]) : fs::path(workdir) / w[k];
        auto it = copied.find(in_image.lexically_normal().string());
        ASSERT_NE(it, copied.end()) << "RUN " << w[k] << ": the stage never copies it in";
        const fs::path script = source_dir() / it->second;
        ASSERT_TRUE(fs::exists(script)) << script;
        EXPECT_EQ(fs::status(script).permissions() & fs::perms::owner_exec, fs::perms::owner_exec)
            << script << " must be executable: the Dockerfile runs it directly";
        std::vector<std::string> args = {script.string()};
        for (std::size_t f = k + 1; f < w.size() && w[f].rfind("--", 0) == 0; ++f) args.push_back(w[f]);
        // --list: the same parsing of the flags, without installing anything.
        args.push_back("--list");
        RunResult r = run_tool("bash", args);
        EXPECT_EQ(r.code, 0) << "RUN " << i.args << ": the script refuses its flags: " << r.err;
        EXPECT_FALSE(r.out.empty());
        ++scripts;
      }
    }
  }
  EXPECT_EQ(scripts, 2) << "install-deps.sh in both stages";
  // And the check can fail: a flag the script does not know is refused.
  RunResult bad = run_tool("bash", {(source_dir() / "scripts/install-deps.sh").string(), "--runtme", "--list"});
  EXPECT_EQ(bad.code, 2);
}

std::set<std::string> runtime_packages() {
  RunResult r = run_tool("bash", {(source_dir() / "scripts/install-deps.sh").string(), "--runtime", "--list"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::set<std::string> pkgs;
  std::istringstream in(r.out);
  for (std::string p; std::getline(in, p);) pkgs.insert(p);
  return pkgs;
}

// The Debian package of each library the binary asks for by name (NEEDED).
std::map<std::string, std::string> needed_packages(const fs::path& binary) {
  RunResult needed = run_tool("readelf", {"-d", binary.string()});
  RunResult ldd = run_tool("ldd", {binary.string()});
  std::map<std::string, std::string> path_of;  // library -> path ldd resolved
  std::smatch m;
  std::istringstream in(needed.out);
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_search(line, m, std::regex(R"(\(NEEDED\).*\[(.+)\])"))) continue;
    const std::string lib = m[1];
    std::smatch where;
    const std::regex resolved("\\s" + std::regex_replace(lib, std::regex(R"([.+])"), R"(\$&)") + R"( => (\S+))");
    path_of[lib] = std::regex_search(ldd.out, where, resolved) ? where[1].str() : "";
  }
  // One dpkg query for all, each path in both spellings: with merged /usr,
  // ldd may say /lib/... where dpkg recorded /usr/lib/..., or the reverse.
  std::vector<std::string> query = {"-S"};
  for (const auto& [lib, path] : path_of) {
    if (path.empty()) continue;
    query.push_back(path);
    query.push_back(path.rfind("/usr/", 0) == 0 ? path.substr(4) : "/usr" + path);
  }
  std::map<std::string, std::string> owner;               // path -> package
  std::istringstream found(run_tool("dpkg", query).out);  // exit 1: some spelling unknown, as expected
  for (std::string line; std::getline(found, line);) {
    const std::size_t sep = line.find(": ");
    if (sep == std::string::npos) continue;
    const std::string pkg = line.substr(0, line.find(':'));
    owner[line.substr(sep + 2)] = pkg;
    const std::string path = line.substr(sep + 2);
    owner[path.rfind("/usr/", 0) == 0 ? path.substr(4) : "/usr" + path] = pkg;
  }
  std::map<std::string, std::string> out;
  for (const auto& [lib, path] : path_of) {
    if (path.empty())
      out[lib] = "<not found by ldd>";
    else
      out[lib] = owner.count(path) ? owner[path] : "<no package owns " + path + ">";
  }
  return out;
}

TEST(Dockerfile, TheRuntimePackagesCoverEveryLibraryTheBinariesLink) {
  // What every Debian image has, as dependencies of apt and bash.
  const std::set<std::string> base = {"libc6", "libstdc++6", "libgcc-s1"};
  const std::set<std::string> runtime = runtime_packages();
  for (const fs::path& bin : {fs::path(emqd_binary()), fs::path(emq_binary())}) {
    ASSERT_TRUE(fs::exists(bin)) << bin << " is not built";
    const auto libs = needed_packages(bin);
    for (const auto& [lib, pkg] : libs) {
      if (lib.rfind("libasan", 0) == 0 || lib.rfind("libubsan", 0) == 0) {
        GTEST_SKIP() << bin << " is a sanitizer build (links " << lib
                     << "): the image ships a Release build; check this one in a plain build";
      }
    }
    EXPECT_GE(libs.size(), 4u) << bin;
    for (const auto& [lib, pkg] : libs) {
      EXPECT_TRUE(base.count(pkg) || runtime.count(pkg))
          << bin.filename() << " links " << lib << " from package " << pkg
          << ", which install-deps.sh --runtime does not install: add it to runtime_pkgs";
    }
  }
}

// The section of docs/operations.md on the image, up to the next section.
std::string containers_doc() {
  const std::string ops = read_text(source_dir() / "docs/operations.md");
  const std::size_t from = ops.find("## The container image");
  EXPECT_NE(from, std::string::npos) << "docs/operations.md has no section \"The container image\"";
  if (from == std::string::npos) return "";
  return ops.substr(from, ops.find("\n## ", from + 1) - from);
}

TEST(Dockerfile, TheDocsNameEveryPathTheRuntimeStageCopiesIn) {
  const std::string doc = containers_doc();
  int copies = 0;
  const auto all = stages();
  for (const Instruction& i : all.back()) {
    if (i.op != "COPY" || i.args.rfind("--from=build ", 0) != 0) continue;
    std::string dest = words(i.args).back();
    if (dest.size() > 1 && dest.back() == '/') dest.pop_back();
    ++copies;
    EXPECT_NE(doc.find(dest), std::string::npos) << "the image holds " << dest << " (COPY " << i.args
                                                 << "); docs/operations.md \"The container image\" must say so";
  }
  EXPECT_GE(copies, 3);
}

TEST(Dockerfile, TheImageTestBuildsInTheFormatThatKeepsTheHealthcheck) {
  // podman and buildah write OCI images by default, which have no
  // HEALTHCHECK: make image-test must build the Docker format, and the
  // docs must tell podman users to.
  bool healthcheck = false;
  const auto all = stages();
  for (const Instruction& i : all.back()) healthcheck = healthcheck || i.op == "HEALTHCHECK";
  ASSERT_TRUE(healthcheck) << "no HEALTHCHECK: then this test and the docs' advice about it should go";
  std::istringstream script(read_text(source_dir() / "scripts/image-test.sh"));
  std::string build;  // the command line, not a comment or message that names it
  for (std::string line; std::getline(script, line);) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 13, "podman build ") == 0) {
      build = line;
      break;
    }
  }
  ASSERT_FALSE(build.empty()) << "scripts/image-test.sh does not run podman build";
  EXPECT_NE(build.find("--format docker"), std::string::npos)
      << "scripts/image-test.sh builds in podman's default OCI format, which drops the HEALTHCHECK: " << build;
  EXPECT_NE(containers_doc().find("--format docker"), std::string::npos);
}

TEST(Dockerfile, TheHealthcheckProbeTellsA200FromA503) {
  std::string healthcheck, health_port;
  const auto all = stages();
  for (const Instruction& i : all.back()) {
    if (i.op == "HEALTHCHECK") healthcheck = i.args;
    if (i.op == "ENV" && i.args.rfind("EMQ_HEALTH_PORT=", 0) == 0) health_port = i.args.substr(16);
  }
  // The probe's port is the one emqd listens on by default.
  const std::string listen = daemon::MetricsConfig{}.listen;
  EXPECT_EQ(health_port, listen.substr(listen.rfind(':') + 1));
  const std::size_t cmd = healthcheck.find("CMD ");
  ASSERT_NE(cmd, std::string::npos) << healthcheck;
  const std::vector<std::string> argv = nlohmann::json::parse(healthcheck.substr(cmd + 4));
  ASSERT_EQ(argv.at(0), "bash");

  std::atomic<int> status{200};
  daemon::HttpServer::Params p;
  p.listen = "127.0.0.1:0";
  p.routes["/healthz"] = [&] { return daemon::HttpResponse{status.load(), "text/plain", "x\n", {}}; };
  auto server = std::make_unique<daemon::HttpServer>(std::move(p));
  server->start();
  const std::string port = "EMQ_HEALTH_PORT=" + std::to_string(server->port());
  std::vector<std::string> args(argv.begin() + 1, argv.end());

  EXPECT_EQ(run_tool("bash", args, "", {port}).code, 0) << "healthy";
  status = 503;
  EXPECT_NE(run_tool("bash", args, "", {port}).code, 0) << "503 must fail the check";
  server.reset();
  EXPECT_NE(run_tool("bash", args, "", {port}).code, 0) << "nothing listening must fail the check";
}

}  // namespace
}  // namespace echomq::test
