// The fixture of the `emq web` API tests: a real `emq web` on a free
// loopback port against the suite's server, and requests as the page
// sends them (GET, and POST with its token and its own origin).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "../cli_fixture.h"
#include "emq_web_process.h"
#include "wait_for.h"
#include "web_client.h"

namespace echomq::test {

// Reads an event stream into `seen` until it holds `text` (false after 10 s).
inline bool read_until(Client& c, std::string& seen, const std::string& text) {
  return wait_for(
      [&] {
        seen += c.read_all(std::chrono::milliseconds(100)).raw;
        return seen.find(text) != std::string::npos;
      },
      std::chrono::seconds(10));
}

class WebApiTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    web_ =
        std::make_unique<EmqWeb>(std::vector<std::string>{"--listen", "127.0.0.1:0"}, Env{{"EMQ_URL", server().url()}});
    ASSERT_GT(web_->port(), 0) << web_->output();
  }
  void TearDown() override { web_.reset(); }

  int port() const { return web_->port(); }
  std::string qpath() const { return "/api/queues/" + url_encode(queue()); }
  HttpAnswer get(const std::string& path) const { return request(port(), "GET", path); }
  // A POST as the page sends it: the token and the page's own origin.
  HttpAnswer act(const std::string& path) const {
    return request(port(), "POST", path,
                   {{"X-EMQ-Token", token_of(port())},
                    {"Origin", "http://127.0.0.1:" + std::to_string(port())},
                    {"Sec-Fetch-Site", "same-origin"}});
  }

  int emq_limit(std::vector<std::string> args) {
    args.insert(args.begin(), {"limit", queue()});
    const EmqResult r = emq(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code;
  }

  std::unique_ptr<EmqWeb> web_;
};

}  // namespace echomq::test
