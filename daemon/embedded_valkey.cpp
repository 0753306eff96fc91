#include "embedded_valkey.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "echomq/connection.h"
#include "echomq/errors.h"

namespace echomq::daemon {

namespace {
constexpr std::chrono::seconds kStartTimeout{30};
constexpr std::chrono::seconds kStopTimeout{30};

// The emq module beside this binary: build/bin/emqd finds build/lib/emq.so,
// <prefix>/bin/emqd finds <prefix>/lib/echomq/emq.so. "" when neither is.
std::string module_beside_binary() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path lib = exe.parent_path().parent_path() / "lib";
  for (const std::filesystem::path& candidate : {lib / "emq.so", lib / "echomq" / "emq.so"}) {
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
  }
  return "";
}
}  // namespace

EmbeddedValkey::EmbeddedValkey(std::string state_dir) : dir_(std::move(state_dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("embedded valkey: cannot create the state directory " + dir_ + ": " + ec.message());
  dir_ = std::filesystem::canonical(dir_).string();
  // The directory holds every payload (the AOF): this user's alone, whatever
  // the umask, and whoever created it before.
  if (::chmod(dir_.c_str(), 0700) != 0) {
    throw std::runtime_error("embedded valkey: cannot make the state directory " + dir_ +
                             " private (chmod 0700): " + std::strerror(errno));
  }
  lock_ = Fd(::open((dir_ + "/emqd.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock_) throw std::runtime_error("embedded valkey: cannot open " + dir_ + "/emqd.lock: " + std::strerror(errno));
  if (::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    throw std::runtime_error("embedded valkey: another emqd already runs on the state directory " + dir_ +
                             "; stop it first, or give this one its own valkey.embedded_dir");
  }
}

EmbeddedValkey::~EmbeddedValkey() { stop(); }

ConnectionOptions EmbeddedValkey::options() const {
  ConnectionOptions o;
  o.unix_path = socket_path();
  return o;
}

void EmbeddedValkey::start() {
  std::vector<std::string> args = {
      "valkey-server",
      "--port",
      "0",  // no TCP: only this machine's users with access to the directory
      "--unixsocket",
      socket_path(),
      "--unixsocketperm",
      "700",
      "--dir",
      dir_,
      "--appendonly",
      "yes",  // jobs survive a restart
      "--appendfsync",
      "everysec",
      "--save",
      "",
      "--maxmemory-policy",
      "noeviction",  // an evicted lease or row is a lost job
      "--notify-keyspace-events",
      "Kz",  // lets idle claim loops wake at once
      "--logfile",
      dir_ + "/valkey.log",
      "--daemonize",
      "no",
  };
  // With the module the core transitions run natively (valkey.executor:
  // auto picks it up); without it, scripts, which work as well.
  if (const std::string module = module_beside_binary(); !module.empty()) {
    args.insert(args.end(), {"--loadmodule", module});
    spdlog::info("embedded valkey: loading the emq module {}", module);
  } else {
    spdlog::info("embedded valkey: no emq module beside emqd (lib/emq.so or lib/echomq/emq.so); scripts only");
  }
  ::unlink(socket_path().c_str());
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("embedded valkey: fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    // Die with us, even on kill -9: an orphaned server would hold the lock
    // directory's data with nobody to stop it.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::setpgid(0, 0);  // a Ctrl-C on the terminal is ours to handle, not the server's
    ::umask(077);     // the AOF, its manifest and the log: 0600, like the directory
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp("valkey-server", argv.data());
    ::_exit(127);
  }

  const auto until = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error(WIFEXITED(status) && WEXITSTATUS(status) == 127
                                   ? "embedded valkey: valkey-server is not on PATH; install it "
                                     "(scripts/install-deps.sh) or point valkey.url at a server"
                                   : "embedded valkey: valkey-server exited at start; see " + dir_ + "/valkey.log");
    }
    try {
      Connection c = Connection::open(options());
      Reply r = c.command({"PING"});
      if (r.type == Reply::Type::Status) {
        spdlog::info("embedded valkey: pid {} on {}", pid_, socket_path());
        return;
      }
      // LOADING: the AOF is being replayed; keep waiting.
    } catch (const Error&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop();
  throw std::runtime_error("embedded valkey: no answer within 30 s; see " + dir_ + "/valkey.log");
}

void EmbeddedValkey::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + kStopTimeout;
  while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= until) {
      spdlog::warn("embedded valkey: pid {} did not stop within 30 s; killing it", pid_);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
}

}  // namespace echomq::daemon
