// Inputs the fuzzers of fuzz/ found crashing something, kept as files in
// tests/faults/fuzz_found/ (named for what they found) and replayed here
// against the function they broke, now fixed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "config/config.h"
#include "echomq/errors.h"
#include "echomq/url.h"
#include "emqd_process.h"
#include "handlers/pool_protocol.h"

namespace echomq::test {
namespace {

std::string found(const std::string& name) {
  std::ifstream in(std::string(EMQ_SOURCE_DIR) + "/tests/faults/fuzz_found/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// pool_frame_fuzz: "3e333…" made nlohmann::json throw out_of_range (a
// number past a double), which parse_reply_frame let escape: it promises a
// refusal with a reason, never a throw.
TEST(FuzzFound, PoolReplyNumberOverflowIsARefusalNotAThrow) {
  const std::string line = found("pool_reply_number_overflow.txt");
  ASSERT_FALSE(line.empty());
  daemon::Reply reply;
  std::string problem;
  EXPECT_NO_THROW(problem = daemon::parse_reply_frame(line, reply));
  EXPECT_NE(problem.find("not JSON"), std::string::npos) << problem;
  EXPECT_NE(problem.find("3e333"), std::string::npos) << "the reason names the number: " << problem;

  // The same number inside an otherwise good reply.
  EXPECT_NO_THROW(problem = daemon::parse_reply_frame(R"({"id":"JOB_1","ok":true,"n":3e333})", reply));
  EXPECT_NE(problem.find("not JSON"), std::string::npos) << problem;
}

// url_fuzz: a host of colons and control bytes was taken as it was (and
// only a resolver would have refused it, at every reconnect).
TEST(FuzzFound, UrlHostWithColonsAndControlBytesIsRefused) {
  const std::string url = found("url_host_with_colons_and_control_bytes.txt");
  ASSERT_EQ(url.rfind("redis://", 0), 0u);
  try {
    parse_url(url);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Invalid);
    EXPECT_NE(std::string(e.what()).find("the host holds a character"), std::string::npos) << e.what();
  }
  for (const char* bad : {"valkey://local host:6379", "valkey://a:b:6379", "valkey://h%41:6379", "valkey://h\t/0"}) {
    EXPECT_THROW(parse_url(bad), Error) << bad;
  }
  try {
    parse_url("valkey://a:b:6379");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("put it in brackets"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_url("valkey://[fe80::1%25eth0]:6379").host, "fe80::1%25eth0");
  EXPECT_EQ(parse_url("valkey://cache-1.internal_zone:6380/2").host, "cache-1.internal_zone");
}

// config_fuzz: a ',' outside [ ] or { } (",\n" is enough) sends yaml-cpp
// 0.7's LoadAll into a loop that allocates until the process aborts; the
// real binary must refuse the file instead. Memory is capped at 1 GiB so a
// regression fails here rather than eating the machine (under ASan, which
// needs a vast address space, by its own RSS limit instead of ulimit).
TEST(FuzzFound, ConfigWithAStrayCommaIsRefusedNotALoopUntilOutOfMemory) {
  const std::string path =
      std::string(EMQ_SOURCE_DIR) + "/tests/faults/fuzz_found/config_stray_comma_makes_yaml_cpp_loop.yaml";
#ifdef __SANITIZE_ADDRESS__
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string cap = "", env = std::string("ASAN_OPTIONS=") + (asan ? asan : "") + ":hard_rss_limit_mb=1024";
#else
  const std::string cap = "ulimit -v 1048576; ", env = "EMQ_UNUSED=1";
#endif
  RunResult r = run_program({"/bin/sh", "-c", cap + "exec \"$0\" --check-config --config \"$1\"", emqd_binary(), path},
                            "", {env});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(path + ":1: (syntax): expected valid YAML: the parser cannot get past column 1"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("a ',' outside [ ] or { }"), std::string::npos) << r.err;
}

// config_fuzz: bytes that are not UTF-8 in a plugin's config: mapping made
// nlohmann::json's dump() throw out of load_config, and emqd abort. Now a
// refusal at that key; and an exec argument with such bytes is shown by
// --check-config (with U+FFFD) instead of throwing out of describe().
TEST(FuzzFound, ConfigBytesThatAreNotUtf8AreRefusedOrShownNotAnAbort) {
  const std::string path = std::string(EMQ_SOURCE_DIR) + "/tests/faults/fuzz_found/config_plugin_config_not_utf8.yaml";
  RunResult r = run_program({emqd_binary(), "--check-config", "--config", path});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(path + ":42: queues[2].handler.config: expected UTF-8 text"), std::string::npos) << r.err;

  char dir[] = "/tmp/emq-fuzz-found-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string config = std::string(dir) + "/emqd.yaml";
  std::ofstream(config) << "queues:\n  - name: q\n    handler:\n      type: exec\n"
                           "      command: [\"/bin/cat\", \"caf\xe9\"]\n";
  r = run_program({emqd_binary(), "--check-config", "--config", config});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("[\"/bin/cat\",\"caf\xef\xbf\xbd\"]"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace echomq::test
