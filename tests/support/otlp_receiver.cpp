#include "otlp_receiver.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "wait_for.h"

namespace echomq::test {

namespace {
const char* mode_word(OtlpReceiver::Mode mode) {
  switch (mode) {
    case OtlpReceiver::Mode::Accept: return "accept";
    case OtlpReceiver::Mode::Refuse: return "refuse";
    case OtlpReceiver::Mode::Hang: return "hang";
  }
  return "accept";
}
}  // namespace

OtlpReceiver::OtlpReceiver(Mode mode) {
  char tmpl[] = "/tmp/emq-otlp-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  const std::string python = EMQ_SYSTEM_PYTHON3;
  const std::string script = EMQ_OTLP_RECEIVER;
  const std::string out = dir_ + "/receiver.log";
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    std::FILE* log = std::fopen(out.c_str(), "w");
    if (log != nullptr) {
      ::dup2(::fileno(log), 1);
      ::dup2(::fileno(log), 2);
    }
    ::execl(python.c_str(), python.c_str(), script.c_str(), "--dir", dir_.c_str(), "--mode", mode_word(mode),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const bool up = wait_for([&] { return std::filesystem::exists(dir_ + "/port"); }, std::chrono::seconds(20));
  if (!up) {
    std::ifstream in(out);
    const std::string why((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    throw std::runtime_error("the OTLP receiver did not start (needs python3-opentelemetry-proto): " + why);
  }
  std::ifstream(dir_ + "/port") >> port_;
}

OtlpReceiver::~OtlpReceiver() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::vector<nlohmann::json> OtlpReceiver::lines(const std::string& file) const {
  std::vector<nlohmann::json> out;
  std::ifstream in(dir_ + "/" + file);
  for (std::string line; std::getline(in, line);) {
    // A line still being written has no newline yet: parse whole lines only.
    if (in.eof()) break;
    out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

std::vector<nlohmann::json> OtlpReceiver::spans() const { return lines("spans.ndjson"); }
std::vector<nlohmann::json> OtlpReceiver::requests() const { return lines("requests.ndjson"); }

std::vector<nlohmann::json> OtlpReceiver::wait_spans(std::size_t count, std::chrono::milliseconds deadline) const {
  std::vector<nlohmann::json> got;
  wait_for(
      [&] {
        got = spans();
        return got.size() >= count;
      },
      deadline);
  return got;
}

int unused_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace echomq::test
