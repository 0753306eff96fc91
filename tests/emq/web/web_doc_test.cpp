// docs/web.md's "A look without a desktop", run as written (it once lacked
// --no-sandbox, without which Chromium refuses to run as root; and once
// hung while a live stream kept Chromium's virtual time from ending): a free
// port for 9465, this build's emq first on PATH, EMQ_URL naming a real
// server on which a real emqd runs a queue that keeps events. The picture
// must be a PNG.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "doc_text.h"
#include "emqd_process.h"
#include "valkey_server.h"

namespace echomq::test {
namespace {

namespace fs = std::filesystem;

TEST(WebDoc, TheScreenshotBlockRunsAsWritten) {
  ASSERT_FALSE(find_program("chromium").empty()) << "chromium is missing: run scripts/install-deps.sh";
  const std::string block =
      fenced_block(std::string(EMQ_SOURCE_DIR) + "/docs/web.md", "## A look without a desktop", "sh");
  std::string script = block;
  const std::string port = std::to_string(free_loopback_port());
  int replaced = 0;
  for (std::size_t at = script.find("9465"); at != std::string::npos; at = script.find("9465", at + port.size())) {
    script.replace(at, 4, port);
    ++replaced;
  }
  ASSERT_GT(replaced, 0) << "the block no longer says 9465: update this test with it";

  ValkeyServer server;
  // events are on by default: the overview would follow the queue live.
  EmqdProcess emqd("valkey:\n  url: " + server.url() +
                   "\nmetrics:\n  listen: \"\"\nshutdown:\n  drain_timeout_s: 1\n"
                   "queues:\n  - name: shots\n    handler: { type: exec, command: [\"/bin/true\"] }\n");
  ASSERT_TRUE(emqd.wait_ready()) << emqd.log();
  const fs::path dir = fs::temp_directory_path() / ("emq-web-doc-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = fs::path(emq_binary()).parent_path().string() + ":" + std::getenv("PATH");
  const RunResult r = run_script(dir.string(), script, {"EMQ_URL=" + server.url(), "PATH=" + path});
  EXPECT_EQ(r.code, 0) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;
  const std::string png = read_doc((dir / "emq-web.png").string());
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << "no PNG: " << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace echomq::test
