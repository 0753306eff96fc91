// A password never shows: not in an error, not in ConfigError::what(), not
// in describe(), wherever it came from (env, file, url) and whatever else
// is wrong with the file.
#include <gtest/gtest.h>

#include "config_test_support.h"

namespace echomq::daemon::test {
namespace {

const char* kSecret = "Pa55-w0rd-never-shown";

// Faults around the password, so the loader has errors to write.
const char* kFaults = "log: { level: loud }\ndefaults: { concurrency: 0, lease_ms: -1 }\n";

void expect_no_secret(const std::vector<std::string>& errors) {
  ASSERT_FALSE(errors.empty());
  for (const auto& e : errors) EXPECT_EQ(e.find(kSecret), std::string::npos) << e;
}

std::vector<std::string> errors_and_what(const std::string& path) {
  try {
    load_config(path);
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find(kSecret), std::string::npos) << e.what();
    return e.errors();
  }
  ADD_FAILURE() << path << " loaded";
  return {};
}

TEST(Secret, FromEnvIsResolvedButNeverShown) {
  ScopedEnv env("EMQ_TEST_SECRET_PASSWORD", kSecret);
  TempDir dir;
  const std::string good =
      dir.write("good.yaml", std::string("valkey: { password_env: EMQ_TEST_SECRET_PASSWORD }\n") + kOneExecQueue);
  const Config c = load_config(good);
  EXPECT_EQ(c.valkey.password, kSecret);
  const std::string text = describe(c);
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_NE(text.find("from $EMQ_TEST_SECRET_PASSWORD\n"), std::string::npos) << text;

  const std::string bad = dir.write(
      "bad.yaml", std::string("valkey: { password_env: EMQ_TEST_SECRET_PASSWORD }\n") + kFaults + kOneExecQueue);
  expect_no_secret(errors_and_what(bad));
}

TEST(Secret, FromFileIsResolvedButNeverShown) {
  TempDir dir;
  dir.write("secret", std::string(kSecret) + "\n", 0600);
  const std::string good = dir.write("good.yaml", std::string("valkey: { password_file: secret }\n") + kOneExecQueue);
  const Config c = load_config(good);
  EXPECT_EQ(c.valkey.password, kSecret);
  const std::string text = describe(c);
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_NE(text.find("from " + dir.path() + "/secret\n"), std::string::npos) << text;

  const std::string bad =
      dir.write("bad.yaml", std::string("valkey: { password_file: secret }\n") + kFaults + kOneExecQueue);
  expect_no_secret(errors_and_what(bad));
}

TEST(Secret, InTheUrlIsNeverShownEvenWhenTheUrlIsWrong) {
  TempDir dir;
  const std::string good = dir.write(
      "good.yaml", "valkey: { url: \"valkey://app:" + std::string(kSecret) + "@cache:6380/1\" }\n" + kOneExecQueue);
  const std::string text = describe(load_config(good));
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_NE(text.find("valkey://app@cache:6380/1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("in the url\n"), std::string::npos) << text;

  const std::vector<std::string> bad_urls = {
      "valkey://app:" + std::string(kSecret) + "@cache:99999/1",  // port out of range
      "valkey://app:" + std::string(kSecret) + "@cache:6380/x",   // db not a number
      "valkey://app:" + std::string(kSecret) + "@:6380",          // no host
      "app:" + std::string(kSecret) + "@cache:6380",              // no scheme at all
      "ftp://app:" + std::string(kSecret) + "@cache",             // unknown scheme
      "va:lkey://app:" + std::string(kSecret) + "@cache",         // garbage before ://
      "unix://app:" + std::string(kSecret) + "@relative.sock",    // socket path not absolute
      "valkey://app:%zz" + std::string(kSecret) + "@cache",       // bad % escape
  };
  for (const std::string& url : bad_urls) {
    const std::string bad = dir.write("bad.yaml", "valkey: { url: \"" + url + "\" }\n" + kFaults + kOneExecQueue);
    const std::vector<std::string> errors = errors_and_what(bad);
    expect_no_secret(errors);
    ASSERT_FALSE(errors.empty());
    EXPECT_EQ(errors[0].rfind(bad + ":1: valkey.url: ", 0), 0u) << errors[0];
  }
}

TEST(Secret, DescribeOfAHandBuiltConfigShowsNoPasswordEither) {
  Config c;
  c.valkey.password = kSecret;
  c.valkey.url = "valkey://u:" + std::string(kSecret) + "@h:1/0";
  const std::string text = describe(c);
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
}

TEST(Secret, EnvValuesAreNamedButNotShownByDescribe) {
  TempDir dir;
  const std::string path = dir.write(
      "emqd.yaml",
      "queues:\n  - name: q\n    handler:\n      type: exec\n      command: [/bin/cat]\n      env: { API_TOKEN: " +
          std::string(kSecret) + " }\n");
  const Config c = load_config(path);
  EXPECT_EQ(c.queues[0].handler.env.at("API_TOKEN"), kSecret);
  const std::string text = describe(c);
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_NE(text.find("API_TOKEN"), std::string::npos) << text;
}

}  // namespace
}  // namespace echomq::daemon::test
