// One contract for every transport under a Connection: plain TCP, a unix
// socket and TLS alike carry commands and both pipeline forms, 10 MiB each
// way, a subscriber's read with a deadline that leaves the connection good,
// a command timeout and a server gone that break it.
#include <chrono>

#include "echomq/connection.h"
#include "tls_fixture.h"

namespace echomq::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

enum class Link { Tcp, Unix, Tls };

std::string name_of(const ::testing::TestParamInfo<Link>& info) {
  switch (info.param) {
    case Link::Tcp: return "Tcp";
    case Link::Unix: return "Unix";
    case Link::Tls: return "Tls";
  }
  return "?";
}

class Transports : public ::testing::TestWithParam<Link> {
 protected:
  Transports() : server(GetParam() == Link::Tls ? tls_server(true) : ValkeyServer::Options{}) {}

  ConnectionOptions options() const {
    ConnectionOptions o = server.options();
    if (GetParam() == Link::Unix) o.unix_path = server.socket_path();
    return o;
  }

  ValkeyServer server;
};

std::string pattern(std::size_t size) {
  std::string s(size, '\0');
  for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>((i * 7 + i / 4096) % 251);
  return s;
}

TEST_P(Transports, CarryCommandsAndBothPipelineForms) {
  Connection c = Connection::open(options());
  EXPECT_EQ(c.command({"SET", "k", "v"}).str, "OK");
  std::vector<Reply> r = c.pipeline({{"INCR", "n"}, {"INCR", "n"}, {"GET", "k"}, {"NO-SUCH-COMMAND"}});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[1].integer, 2);
  EXPECT_EQ(r[2].str, "v");
  EXPECT_TRUE(r[3].is_error()) << "an error reply is a reply, in its place";
  RespBuffer many;
  for (int i = 0; i < 2000; ++i) many.add({"RPUSH", "list", std::to_string(i)});
  std::vector<Reply> pushed = c.pipeline(many);
  ASSERT_EQ(pushed.size(), 2000u);
  EXPECT_EQ(pushed.back().integer, 2000);
  EXPECT_FALSE(c.broken());
  EXPECT_EQ(c.command({"LINDEX", "list", "1999"}).str, "1999");
}

TEST_P(Transports, CarryTenMebibytesEachWay) {
  const std::string big = pattern(10 << 20);
  Connection c = Connection::open(options());
  EXPECT_EQ(c.command({"SET", "big", big}).str, "OK");
  std::vector<Reply> r = c.pipeline({{"GET", "big"}, {"STRLEN", "big"}, {"GET", "big"}});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].integer, static_cast<long long>(big.size()));
  EXPECT_TRUE(r[0].str == big) << "the payload came back changed";
  EXPECT_TRUE(r[2].str == big);
}

TEST_P(Transports, ReadForWaitsWithoutBreakingTheConnection) {
  Connection sub = Connection::open(options());
  sub.send({"SUBSCRIBE", "ch"});
  std::optional<Reply> confirmed = sub.read_for(seconds(10));
  ASSERT_TRUE(confirmed);
  ASSERT_EQ(confirmed->elements.size(), 3u);
  EXPECT_EQ(confirmed->elements[0].str, "subscribe");

  EXPECT_FALSE(sub.read_for(milliseconds(50))) << "nothing was published";
  EXPECT_FALSE(sub.broken());

  Connection pub = Connection::open(options());
  const std::string large = pattern(1 << 20);  // many TLS records
  EXPECT_EQ(pub.command({"PUBLISH", "ch", "hello"}).integer, 1);
  EXPECT_EQ(pub.command({"PUBLISH", "ch", large}).integer, 1);
  auto next = [&] {
    std::optional<Reply> m;
    wait_for([&] { return (m = sub.read_for(milliseconds(100))).has_value(); }, seconds(10));
    return m;
  };
  std::optional<Reply> first = next();
  std::optional<Reply> second = next();
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->elements.size(), 3u);
  EXPECT_EQ(first->elements[2].str, "hello");
  ASSERT_EQ(second->elements.size(), 3u);
  EXPECT_TRUE(second->elements[2].str == large);
  EXPECT_FALSE(sub.read_for(milliseconds(20)));
  EXPECT_FALSE(sub.broken());
}

TEST_P(Transports, ACommandTimeoutBreaksTheConnection) {
  ConnectionOptions o = options();
  o.command_timeout = milliseconds(300);
  Connection c = Connection::open(o);
  EXPECT_EQ(c.command({"PING"}).str, "PONG");
  server.freeze();
  try {
    c.command({"PING"});
    ADD_FAILURE() << "a frozen server answered";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Timeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("within the command timeout"), std::string::npos) << e.what();
  }
  server.thaw();
  EXPECT_TRUE(c.broken());
  EXPECT_THROW(c.command({"PING"}), Error) << "a broken connection is never reused";
}

TEST_P(Transports, AServerGoneIsAnIoErrorAndABackOneIsReachedAgain) {
  Connection c = Connection::open(options());
  server.stop();
  try {
    c.command({"PING"});
    ADD_FAILURE() << "a stopped server answered";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io) << e.what();
  }
  EXPECT_TRUE(c.broken());
  server.start();
  Connection again = Connection::open(options());
  EXPECT_EQ(again.command({"PING"}).str, "PONG");
}

INSTANTIATE_TEST_SUITE_P(Links, Transports, ::testing::Values(Link::Tcp, Link::Unix, Link::Tls), name_of);

}  // namespace
}  // namespace echomq::test
