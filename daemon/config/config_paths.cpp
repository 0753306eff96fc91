#include "config/config_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace echomq::daemon {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Why `path` cannot be run, or "" when it can.
std::string not_executable_reason(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return path + " does not exist";
    return "cannot look at " + path + ": " + errno_text(errno);
  }
  if (S_ISDIR(st.st_mode)) return path + " is a directory";
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  if (::access(path.c_str(), X_OK) != 0) return path + " is not executable (chmod +x it)";
  return "";
}

}  // namespace

std::string absolute_from(const std::string& base, const std::string& path) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base) / p;
  return p.lexically_normal().string();
}

std::string directory_of(const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) absolute = path;
  return absolute.lexically_normal().parent_path().string();
}

ProgramLookup find_program(const std::string& program, const std::string& base, const std::string& search_path) {
  if (program.empty()) return {"", "the program (first element) is empty"};
  if (program.find('/') != std::string::npos) {
    const std::string path = absolute_from(base, program);
    std::string why = not_executable_reason(path);
    if (!why.empty()) return {"", "expected an executable file, but " + why};
    return {path, ""};
  }
  // As execvp: the first directory holding an executable of that name wins;
  // one that holds a non-executable file of that name is passed over.
  std::string passed_over;
  std::size_t start = 0;
  while (start <= search_path.size()) {
    std::size_t end = search_path.find(':', start);
    if (end == std::string::npos) end = search_path.size();
    const std::string dir = search_path.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir[0] != '/') continue;
    const std::string candidate = absolute_from(dir, program);
    std::string why = not_executable_reason(candidate);
    if (why.empty()) return {candidate, ""};
    if (passed_over.empty() && why.find("does not exist") == std::string::npos) passed_over = why;
  }
  std::string error = "expected a program on PATH (" + search_path + "), but " + program + " is not there";
  if (!passed_over.empty()) error += " (" + passed_over + ")";
  return {"", error + "; give its absolute path or install it"};
}

std::string check_directory(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? path + " does not exist" : path + ": " + errno_text(errno);
  if (!S_ISDIR(st.st_mode)) return path + " is not a directory";
  return "";
}

std::string check_readable_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT ? path + " does not exist" : path + ": " + errno_text(errno);
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return "cannot read " + path + ": " + errno_text(errno);
  return "";
}

bool read_secret_file(const std::string& path, std::string& secret, std::string& error, const std::string& holding) {
  constexpr std::size_t kMax = 64 * 1024;
  // A FIFO or a device would block or never end: only a regular file will do.
  std::string why = check_readable_file(path);
  if (!why.empty()) {
    error = "expected a readable file holding " + holding + ", but " + why;
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    error = "cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  std::string content(kMax + 1, '\0');
  in.read(content.data(), static_cast<std::streamsize>(content.size()));
  if (in.bad()) {
    error = "cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  content.resize(static_cast<std::size_t>(in.gcount()));
  if (content.size() > kMax) {
    error = path + " is larger than 64 KiB; expected a file holding just " + holding;
    return false;
  }
  while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) content.pop_back();
  if (content.empty()) {
    error = path + " is empty; expected " + holding + " in it";
    return false;
  }
  secret = std::move(content);
  return true;
}

}  // namespace echomq::daemon
