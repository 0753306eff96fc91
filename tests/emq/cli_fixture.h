// The fixture of the emq tests: one real valkey-server per test suite, a
// queue named for each test (so tests of a suite never see each other's
// jobs), the emq binary run against it, and the library to seed state and
// to read back what emq did.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "emq_process.h"
#include "valkey_server.h"

namespace echomq::test {

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = std::make_unique<ValkeyServer>(); }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    x_ = std::make_unique<Executor>(server_->options());
    // "Suite.Test" -> "Suite.Test": both parts are valid queue-name bytes.
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    queue_ = std::string(info->test_suite_name()) + "." + info->name();
    keys_ = std::make_unique<QueueKeys>(queue_);
  }

  EmqResult emq(const std::vector<std::string>& args, const std::string& input = {}) const {
    return run_emq(args, {{"EMQ_URL", server_->url()}}, input);
  }

  Executor& x() { return *x_; }
  const std::string& queue() const { return queue_; }
  const QueueKeys& keys() const { return *keys_; }
  ValkeyServer& server() { return *server_; }

  inline static std::unique_ptr<ValkeyServer> server_;

 private:
  std::unique_ptr<Executor> x_;
  std::string queue_;
  std::unique_ptr<QueueKeys> keys_;
};

// Splits text into lines, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The first byte (or UTF-8 control or bidi mark) of emq's output that a
// terminal would act on, described; "" when there is none. Newlines end
// lines and are allowed.
inline std::string terminal_control_in(const std::string& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    const auto next = i + 1 < out.size() ? static_cast<unsigned char>(out[i + 1]) : 0;
    const auto third = i + 2 < out.size() ? static_cast<unsigned char>(out[i + 2]) : 0;
    const bool c0 = (c < 0x20 && c != '\n') || c == 0x7F;
    const bool c1 = c == 0xC2 && next >= 0x80 && next <= 0x9F;
    const bool bidi = c == 0xE2 && next == 0x80 && (third == 0x8E || third == 0x8F || (third >= 0xAA && third <= 0xAE));
    if (c0 || c1 || bidi) {
      return "byte " + std::to_string(c) + " at " + std::to_string(i) + " in: " + out.substr(i < 40 ? 0 : i - 40, 80);
    }
  }
  return "";
}

// Splits a line on runs of blanks: the cells of an aligned table row.
inline std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string cell; in >> cell;) out.push_back(cell);
  return out;
}

}  // namespace echomq::test
