// Helpers for the configuration tests: where the data files are, loading a
// file that must fail, and scoped changes to the process environment and
// the file system that undo themselves.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace echomq::daemon::test {

inline std::string configs_dir() { return EMQ_TEST_CONFIGS; }
// The configuration reference, which the docs tests hold to the schema.
inline const std::string kConfigurationPage = std::string(EMQ_SOURCE_DIR) + "/docs/configuration.md";
// One exec queue: the least a file needs beside the section a test is about.
inline constexpr const char* kOneExecQueue = "queues: [{ name: q, handler: { type: exec, command: [/bin/cat] } }]\n";
inline std::string good_config(const std::string& name) { return configs_dir() + "/good/" + name; }
inline std::string bad_config(const std::string& name) { return configs_dir() + "/bad/" + name; }

// The errors load_config reports for `path`; a failure if it loads.
inline std::vector<std::string> load_errors(const std::string& path) {
  try {
    load_config(path);
  } catch (const ConfigError& e) {
    return e.errors();
  }
  ADD_FAILURE() << path << " loaded, but it should have been refused";
  return {};
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// `path` is refused with exactly one error, "<path>:<line>: <key>: ...",
// whose message says `fragment`.
inline void expect_one_error_at(const std::string& path, int line, const std::string& key,
                                const std::string& fragment) {
  const std::vector<std::string> errors = load_errors(path);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  const std::string prefix = path + ":" + std::to_string(line) + ": " + key + ": ";
  EXPECT_EQ(errors[0].substr(0, prefix.size()), prefix) << errors[0];
  EXPECT_NE(errors[0].find(fragment, prefix.size()), std::string::npos) << errors[0] << "\n  should say: " << fragment;
}

// Sets (or unsets) one environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
    if (const char* old = ::getenv(name_.c_str())) old_ = old;
    if (value != nullptr) {
      ::setenv(name_.c_str(), value, 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* tmp = ::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/emqd-config-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `text` to path()/name (creating directories), with `mode`.
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0644) const {
    const std::filesystem::path file = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    ::chmod(file.c_str(), mode);
    return file.string();
  }
  std::string mkdir(const std::string& name) const {
    const std::filesystem::path dir = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(dir);
    return dir.string();
  }

 private:
  std::string path_;
};

}  // namespace echomq::daemon::test
