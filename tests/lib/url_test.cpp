#include "echomq/url.h"

#include <gtest/gtest.h>

#include "echomq/errors.h"

namespace echomq {
namespace {

TEST(Url, ValkeyWithEverything) {
  ConnectionOptions o = parse_url("valkey://app:s%40cret@cache.local:6380/3");
  EXPECT_EQ(o.host, "cache.local");
  EXPECT_EQ(o.port, 6380);
  EXPECT_EQ(o.db, 3);
  EXPECT_EQ(o.username, "app");
  EXPECT_EQ(o.password, "s@cret");
  EXPECT_TRUE(o.unix_path.empty());
}

TEST(Url, RedisSchemeAndDefaults) {
  ConnectionOptions o = parse_url("redis://localhost");
  EXPECT_EQ(o.host, "localhost");
  EXPECT_EQ(o.port, 6379);
  EXPECT_EQ(o.db, 0);
  EXPECT_TRUE(o.password.empty());
}

TEST(Url, PasswordOnly) {
  ConnectionOptions o = parse_url("valkey://:pw@127.0.0.1:7000/0");
  EXPECT_EQ(o.username, "");
  EXPECT_EQ(o.password, "pw");
}

TEST(Url, Ipv6) {
  ConnectionOptions o = parse_url("valkey://[::1]:7001/2");
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 7001);
  EXPECT_EQ(o.db, 2);
}

TEST(Url, UnixSocketWithDb) {
  ConnectionOptions o = parse_url("unix:///run/valkey/valkey.sock?db=5");
  EXPECT_EQ(o.unix_path, "/run/valkey/valkey.sock");
  EXPECT_EQ(o.db, 5);
  ConnectionOptions p = parse_url("unix://u:p@/tmp/v.sock");
  EXPECT_EQ(p.unix_path, "/tmp/v.sock");
  EXPECT_EQ(p.username, "u");
  EXPECT_EQ(p.password, "p");
}

TEST(Url, RedactedNeverShowsThePassword) {
  ConnectionOptions o = parse_url("valkey://app:topsecret@h:1/2");
  EXPECT_EQ(o.redacted(), "valkey://app@h:1/2");
  EXPECT_EQ(o.redacted().find("topsecret"), std::string::npos);
}

TEST(Url, BadUrlsAreRefusedWithoutEchoingSecrets) {
  for (const char* bad : {"", "localhost:6379", "http://h", "valkey://", "valkey://h:0", "valkey://h:99999",
                          "valkey://h:12x", "valkey://h/abc", "unix://relative.sock", "unix:///s?db=x",
                          "unix:///s?foo=1", "valkey://u:p%zz@h", "valkey://u:p%4@h", "valkey://[::1"}) {
    try {
      parse_url(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Invalid) << bad;
    }
  }
  try {
    parse_url("valkey://u:hunter2@h:notaport");
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos);
  }
}

}  // namespace
}  // namespace echomq
