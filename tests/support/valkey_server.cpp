#include "valkey_server.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <stdexcept>

#include "echomq/connection.h"
#include "echomq/errors.h"
#include "wait_for.h"

namespace echomq::test {

namespace {

// The lowest port the kernel gives outgoing connections (their source
// ports) and bind(port 0); 32768 unless the machine says otherwise.
int ephemeral_low() {
  int low = 32768, high = 0;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (std::fscanf(f, "%d %d", &low, &high) != 2) low = 32768;
    std::fclose(f);
  }
  return low;
}

bool loopback_port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return free;
}

}  // namespace

// Not bind(port 0): that hands out a port of the ephemeral range, which
// the kernel also gives every outgoing connection as its source port, and
// the tests make many; one made between this probe and the server's bind
// took the port (ManyDaemons, "Address already in use"). Ports below that
// range are never handed out by the kernel; they are drawn at random, so
// two test processes probing at once rarely meet.
int free_loopback_port() {
  static std::mutex mutex;
  static std::mt19937 pick(std::random_device{}());
  std::lock_guard<std::mutex> lock(mutex);
  const int high = ephemeral_low() - 1;
  std::uniform_int_distribution<int> in_range(std::max(1024, high / 2), high);
  for (int i = 0; i < 1000; ++i) {
    const int port = in_range(pick);
    if (loopback_port_free(port)) return port;
  }
  throw std::runtime_error("cannot find a free loopback port below the ephemeral range");
}

std::string emq_module_path() { return EMQ_MODULE_PATH; }

ExecutorChoice executor_under_test() {
  const char* e = std::getenv("EMQ_TEST_EXECUTOR");
  return e != nullptr && std::string(e) == "native" ? ExecutorChoice::Native : ExecutorChoice::Scripted;
}

std::string find_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

ValkeyServer::ValkeyServer() : ValkeyServer(Options{}) {}

ValkeyServer::ValkeyServer(Options options) : options_(std::move(options)) {
  char tmpl[] = "/tmp/emq-valkey-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  socket_ = dir_ + "/valkey.sock";
  // A port found free can be taken before the server binds it; try a few.
  for (int attempt = 0;; ++attempt) {
    port_ = free_loopback_port();
    try {
      launch();
      wait_ready();
      return;
    } catch (const std::exception&) {
      kill9();
      if (attempt == 4) throw;
    }
  }
}

ValkeyServer::~ValkeyServer() {
  if (pid_ > 0) {
    thaw();
    stop();
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

ConnectionOptions ValkeyServer::options() const {
  ConnectionOptions o;
  o.host = "127.0.0.1";
  o.port = port_;
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.command_timeout = std::chrono::milliseconds(5000);
  if (options_.tls) {
    o.tls.enabled = true;
    o.tls.ca_file = options_.tls->ca_file;
    o.tls.cert_file = options_.tls->client_cert;
    o.tls.key_file = options_.tls->client_key;
  }
  return o;
}

void ValkeyServer::launch() {
  std::string server = find_program("valkey-server");
  if (server.empty()) throw std::runtime_error("valkey-server is not on PATH: run scripts/install-deps.sh");
  std::vector<std::string> args = {server,
                                   "--port",
                                   options_.tls ? "0" : std::to_string(port_),
                                   "--bind",
                                   "127.0.0.1",
                                   "--unixsocket",
                                   socket_,
                                   "--unixsocketperm",
                                   "700",
                                   "--dir",
                                   dir_,
                                   "--save",
                                   "",
                                   "--appendonly",
                                   options_.appendonly ? "yes" : "no",
                                   "--maxmemory-policy",
                                   "noeviction",
                                   "--logfile",
                                   dir_ + "/valkey.log",
                                   "--daemonize",
                                   "no"};
  if (const auto& t = options_.tls) {
    args.insert(args.end(),
                {"--tls-port", std::to_string(port_), "--tls-cert-file", t->cert_file, "--tls-key-file", t->key_file,
                 "--tls-ca-cert-file", t->ca_file, "--tls-auth-clients", t->auth_clients ? "yes" : "no"});
  }
  if (options_.load_module) {
    args.push_back("--loadmodule");
    args.push_back(emq_module_path());
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
}

void ValkeyServer::wait_ready() {
  ConnectionOptions o = options();
  // A password in extra_args (--requirepass) is the caller's to pass; PING
  // answers NOAUTH then, which still means "up", and the password from
  // extra_args lets the check below ask whose server it is.
  std::string password;
  for (std::size_t i = 0; i + 1 < options_.extra_args.size(); ++i) {
    if (options_.extra_args[i] == "--requirepass") password = options_.extra_args[i + 1];
  }
  bool up = wait_for(
      [&] {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          throw std::runtime_error("valkey-server exited at start; see " + dir_ + "/valkey.log");
        }
        try {
          Connection c = Connection::open(o);
          Reply r = c.command({"PING"});
          if (r.is_error() && r.str.rfind("NOAUTH", 0) == 0) {
            if (password.empty()) return true;
            c.command({"AUTH", password});
          } else if (r.type != Reply::Type::Status) {
            return false;
          }
          // The port was free when picked, but another test's server may
          // have bound it first: then ours exits, and this one must not be
          // taken for it.
          return c.command({"INFO", "server"}).str.find("process_id:" + std::to_string(pid_) + "\r\n") !=
                 std::string::npos;
        } catch (const Error& e) {
          // A server whose certificate fails verification on purpose
          // (expired, another name) is up when it shows that certificate.
          return e.op() == "tls" && std::string(e.what()).find("certificate verify failed") != std::string::npos;
        }
      },
      std::chrono::seconds(10));
  if (!up) throw std::runtime_error("valkey-server did not answer PING within 10 s");
}

void ValkeyServer::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void ValkeyServer::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void ValkeyServer::start() {
  if (pid_ > 0) return;
  launch();
  wait_ready();
}

void ValkeyServer::freeze() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void ValkeyServer::thaw() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

std::string ValkeyServer::cli(const std::vector<std::string>& args) const {
  // Over TLS the port wants a handshake: the unix socket is plaintext.
  std::string cmd = options_.tls ? "valkey-cli -s " + socket_ : "valkey-cli -p " + std::to_string(port_);
  for (const std::string& a : args) {
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += " " + quoted + "'";
  }
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) throw std::runtime_error("popen valkey-cli failed");
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  ::pclose(f);
  return out;
}

namespace {
// The number after `tag` in an INFO section; 0 when the line is not there.
long long info_count(const std::string& info, const std::string& tag) {
  const std::size_t at = info.find(tag);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + tag.size()));
}
}  // namespace

long long ValkeyServer::calls(const std::string& command) const {
  return info_count(cli({"INFO", "commandstats"}), "cmdstat_" + command + ":calls=");
}

long long ValkeyServer::errors(const std::string& code) const {
  return info_count(cli({"INFO", "errorstats"}), "errorstat_" + code + ":count=");
}

}  // namespace echomq::test
