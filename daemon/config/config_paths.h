// The files a configuration names: where a relative path points, which
// program execvp would run, whether a file can be used. Checked at load time
// so a typo fails `emqd --check-config`, not the first job.
#pragma once

#include <cstddef>
#include <string>

namespace echomq::daemon {

// `path` if absolute, else `path` against `base`; lexically normalised.
std::string absolute_from(const std::string& base, const std::string& path);

// The directory holding the file at `path` (made absolute first).
std::string directory_of(const std::string& path);

// The program execvp would run for `program`, as an absolute path, or why
// there is none (in `error`). A name with a slash is a path, taken against
// `base`; a bare name is searched in the directories of `search_path` (a
// PATH value; relative entries are skipped, as they would depend on the
// daemon's working directory).
struct ProgramLookup {
  std::string path;
  std::string error;  // empty when found
};
ProgramLookup find_program(const std::string& program, const std::string& base, const std::string& search_path);

// The unix socket of the embedded server in `dir`; a socket path holds at
// most kMaxSocketPath bytes (sun_path is 108, with its terminating NUL).
inline constexpr std::size_t kMaxSocketPath = 107;
inline std::string embedded_socket_path(const std::string& dir) { return dir + "/valkey.sock"; }

// "" when `path` is an existing directory, else why not.
std::string check_directory(const std::string& path);
// "" when `path` is a regular file this process can read, else why not.
std::string check_readable_file(const std::string& path);

// Reads a small secret file (at most 64 KiB) with trailing newlines removed.
// On failure returns false and says why in `error`, never quoting the file;
// `holding` names what it should hold.
bool read_secret_file(const std::string& path, std::string& secret, std::string& error,
                      const std::string& holding = "the password");

}  // namespace echomq::daemon
