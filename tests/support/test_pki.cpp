#include "test_pki.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace echomq::test {

namespace {
// Runs openssl with its output in dir/openssl.log, throwing on failure.
void openssl(const std::string& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  const std::string log = dir + "/openssl.log";
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    std::FILE* out = std::fopen(log.c_str(), "a");
    if (out != nullptr) {
      ::dup2(::fileno(out), 1);
      ::dup2(::fileno(out), 2);
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp("openssl", argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("openssl " + args[1] + " failed (is openssl installed?); see " + log);
  }
}

const std::vector<std::string> kEcKey = {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"};
}  // namespace

TestPki::TestPki() {
  char tmpl[] = "/tmp/emq-pki-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  make_ca("ca", "/CN=emq test CA");
  make_ca("other-ca", "/CN=emq other CA");
  const std::string local = "subjectAltName=DNS:localhost,IP:127.0.0.1";
  make_cert("server", "ca", "/CN=localhost", local, 2);
  make_cert("client", "ca", "/CN=emq test client", "", 2);
  make_cert("stranger", "other-ca", "/CN=emq stranger", "", 2);
  // -days -1: not after is a day before not before, so out of date now.
  make_cert("expired", "ca", "/CN=localhost", local, -1);
  make_cert("misnamed", "ca", "/CN=elsewhere.test", "subjectAltName=DNS:elsewhere.test", 2);
  for (const char* key : {"server", "client", "stranger", "expired", "misnamed"}) {
    std::filesystem::permissions(dir_ + "/" + key + ".key",
                                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
}

TestPki::~TestPki() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void TestPki::make_ca(const std::string& name, const std::string& subject) {
  std::vector<std::string> args = {"req", "-x509"};
  args.insert(args.end(), kEcKey.begin(), kEcKey.end());
  args.insert(args.end(), {"-keyout", dir_ + "/" + name + ".key", "-out", dir_ + "/" + name + ".crt", "-subj", subject,
                           "-days", "2"});
  openssl(dir_, args);
}

void TestPki::make_cert(const std::string& name, const std::string& ca, const std::string& subject,
                        const std::string& san, int days) {
  const std::string base = dir_ + "/" + name;
  std::vector<std::string> req = {"req"};
  req.insert(req.end(), kEcKey.begin(), kEcKey.end());
  req.insert(req.end(), {"-keyout", base + ".key", "-out", base + ".csr", "-subj", subject});
  openssl(dir_, req);
  std::vector<std::string> sign = {"x509",
                                   "-req",
                                   "-in",
                                   base + ".csr",
                                   "-CA",
                                   dir_ + "/" + ca + ".crt",
                                   "-CAkey",
                                   dir_ + "/" + ca + ".key",
                                   "-CAcreateserial",
                                   "-days",
                                   std::to_string(days),
                                   "-out",
                                   base + ".crt"};
  if (!san.empty()) {
    std::ofstream(base + ".ext") << san << "\n";
    sign.insert(sign.end(), {"-extfile", base + ".ext"});
  }
  openssl(dir_, sign);
}

}  // namespace echomq::test
