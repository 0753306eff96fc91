// Where emq finds the server: --url, EMQ_URL, unix sockets, databases, and
// EMQ_PASSWORD; what it says when the server cannot be reached or refuses
// the login, and that it never shows the password.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "echomq/stats.h"

namespace echomq::test {
namespace {

TEST(ConnectionCli, UnreachableServerIsExit3WithAMessage) {
  std::string url;
  {
    ValkeyServer gone;
    url = gone.url();
  }  // stopped: nothing listens on its port now
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"stats", "q"},
           {"enqueue", "q", "x"},
           {"inspect", "q", "JOB_x"},
           {"dead", "list", "q"},
           {"dead", "retry", "q"},
           {"pause", "q"},
           {"resume", "q"},
           {"cancel", "q", "JOB_x"},
       }) {
    EmqResult r = run_emq(args, {{"EMQ_URL", url}});
    EXPECT_EQ(r.exit_code, 3) << args[0] << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("emq: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("cannot reach"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--url or EMQ_URL"), std::string::npos) << r.err;
  }
  // --url wins over EMQ_URL.
  ValkeyServer up;
  EXPECT_EQ(run_emq({"--url", up.url(), "stats", "q"}, {{"EMQ_URL", url}}).exit_code, 0);
  EXPECT_EQ(run_emq({"stats", "q", "--url", up.url()}, {{"EMQ_URL", url}}).exit_code, 0);
}

TEST(ConnectionCli, ArgumentsAreCheckedBeforeConnecting) {
  // A bad argument is a usage error even when the server is also down.
  EmqResult r = run_emq({"enqueue", "q", "x", "--lane", "2000"}, {{"EMQ_URL", "valkey://127.0.0.1:1/0"}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

TEST(ConnectionCli, BadUrlIsUsage) {
  for (const char* url : {"http://127.0.0.1/", "valkey://127.0.0.1:99999/0", "unix://relative.sock"}) {
    EmqResult r = run_emq({"stats", "q"}, {{"EMQ_URL", url}});
    EXPECT_EQ(r.exit_code, 2) << url << ": " << r.err;
    EXPECT_NE(r.err.find("--url or EMQ_URL"), std::string::npos) << r.err;
  }
}

TEST(ConnectionCli, UnixSocketAndDatabase) {
  ValkeyServer server;
  const std::string url = "unix://" + server.socket_path() + "?db=2";
  EmqResult r = run_emq({"enqueue", "sock", "via unix", "--id", "JOB_u1"}, {{"EMQ_URL", url}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ConnectionOptions db2 = server.options();
  db2.db = 2;
  Executor x2(db2);
  auto row = inspect(x2, QueueKeys("sock"), "JOB_u1");
  ASSERT_TRUE(row.has_value()) << "the job is not in database 2";
  EXPECT_EQ(row->fields.at("payload"), "via unix");
  Executor x0(server.options());
  EXPECT_FALSE(inspect(x0, QueueKeys("sock"), "JOB_u1").has_value()) << "the job landed in database 0";
}

class PasswordCli : public ::testing::Test {
 protected:
  static constexpr const char* kPassword = "s3cret-Pw-9f1c";
  static void SetUpTestSuite() {
    ValkeyServer::Options o;
    o.extra_args = {"--requirepass", kPassword};
    server_ = std::make_unique<ValkeyServer>(o);
  }
  static void TearDownTestSuite() { server_.reset(); }
  inline static std::unique_ptr<ValkeyServer> server_;

  static void expect_no_secret(const EmqResult& r, const std::string& secret) {
    EXPECT_EQ(r.out.find(secret), std::string::npos) << "stdout shows the password";
    EXPECT_EQ(r.err.find(secret), std::string::npos) << "stderr shows the password: " << r.err;
  }
};

TEST_F(PasswordCli, WithoutPasswordIsExit3AndSaysHowToGiveOne) {
  EmqResult r = run_emq({"stats", "q"}, {{"EMQ_URL", server_->url()}});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("EMQ_PASSWORD"), std::string::npos) << r.err;
}

TEST_F(PasswordCli, EmqPasswordLogsInAndIsNeverShown) {
  const Env env = {{"EMQ_URL", server_->url()}, {"EMQ_PASSWORD", kPassword}};
  EmqResult r = run_emq({"enqueue", "secure", "x", "--id", "JOB_pw"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_no_secret(r, kPassword);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"stats"},
                                             {"stats", "--json"},
                                             {"inspect", "secure", "JOB_pw", "--json"},
                                             {"inspect", "secure", "JOB_no"},
                                             {"dead", "list", "secure"},
                                             {"--help"}}) {
    r = run_emq(args, env);
    EXPECT_LE(r.exit_code, 1) << args[0] << ": " << r.err;
    expect_no_secret(r, kPassword);
  }
  r = run_emq({"stats", "secure", "--json"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)[0]["pending"], 1);
}

TEST_F(PasswordCli, WrongPasswordIsExit3AndNotShown) {
  const std::string wrong = "not-the-Pw-77aa";
  EmqResult r = run_emq({"stats", "q"}, {{"EMQ_URL", server_->url()}, {"EMQ_PASSWORD", wrong}});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("refused the login"), std::string::npos) << r.err;
  expect_no_secret(r, wrong);

  // The same for a password in the URL.
  const std::string url = "valkey://default:" + wrong + "@127.0.0.1:" + std::to_string(server_->port()) + "/0";
  r = run_emq({"stats", "q"}, {{"EMQ_URL", url}});
  EXPECT_EQ(r.exit_code, 3);
  expect_no_secret(r, wrong);
}

TEST_F(PasswordCli, UrlPasswordWorksAndEmqPasswordWinsOverIt) {
  const std::string port = std::to_string(server_->port());
  EmqResult r =
      run_emq({"stats", "q"}, {{"EMQ_URL", "valkey://:" + std::string(kPassword) + "@127.0.0.1:" + port + "/0"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_no_secret(r, kPassword);

  r = run_emq({"stats", "q"},
              {{"EMQ_URL", "valkey://:stale-pw@127.0.0.1:" + port + "/0"}, {"EMQ_PASSWORD", kPassword}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace echomq::test
