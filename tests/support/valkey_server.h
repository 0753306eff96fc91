// A real valkey-server for one test or one suite: started on a free
// loopback port and a unix socket in a private temporary directory, stopped
// (and the directory removed) by the destructor.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "echomq/url.h"

namespace echomq::test {

class ValkeyServer {
 public:
  // TLS on the port instead of plaintext (--tls-port P --port 0); the unix
  // socket stays plaintext, for cli().
  struct Tls {
    std::string cert_file;  // the server's certificate and key
    std::string key_file;
    std::string ca_file;        // verifies client certificates, and options() the server
    bool auth_clients = false;  // require a client certificate
    std::string client_cert;    // what options() presents, when set
    std::string client_key;
  };
  struct Options {
    bool appendonly = false;
    std::vector<std::string> extra_args;  // e.g. {"--requirepass", "s3cret"}
    std::optional<Tls> tls = std::nullopt;
    bool load_module = false;  // --loadmodule the emq module this tree built
  };

  ValkeyServer();
  explicit ValkeyServer(Options options);
  ~ValkeyServer();
  ValkeyServer(const ValkeyServer&) = delete;
  ValkeyServer& operator=(const ValkeyServer&) = delete;

  int port() const { return port_; }
  const std::string& socket_path() const { return socket_; }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  std::string url() const {
    return (options_.tls ? "valkeys://127.0.0.1:" : "valkey://127.0.0.1:") + std::to_string(port_) + "/0";
  }
  // Over TLS: verified against Tls::ca_file, with the client certificate.
  ConnectionOptions options() const;

  void stop();    // SIGTERM and wait
  void kill9();   // SIGKILL and wait
  void start();   // again, same port and directory (data survives with AOF)
  void freeze();  // SIGSTOP
  void thaw();    // SIGCONT

  // Runs valkey-cli against this server; returns its stdout.
  std::string cli(const std::vector<std::string>& args) const;
  // How many times the server has run `command` ("evalsha"), from INFO
  // commandstats: 0 before the first.
  long long calls(const std::string& command) const;
  // How many error replies starting with `code` ("EMQROW") the server has
  // sent, from INFO errorstats: each one a call it refused.
  long long errors(const std::string& code) const;

 private:
  void launch();
  void wait_ready();

  Options options_;
  std::string dir_;
  std::string socket_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// The emq module this tree built (build/lib/emq.so).
std::string emq_module_path();

// The executor a wire suite runs on: EMQ_TEST_EXECUTOR=native (ctest runs
// each wire suite once per executor), else scripted.
ExecutorChoice executor_under_test();

// The path of a program from PATH, or "" when it is not installed.
std::string find_program(const std::string& name);

// A loopback TCP port that was free a moment ago (for metrics.listen, which
// refuses port 0), from below the kernel's ephemeral range, so no outgoing
// connection takes it before the program that binds it next.
int free_loopback_port();

}  // namespace echomq::test
