// emq over TLS: the --tls-* flags and the EMQ_TLS_* variables, a 10 MiB
// payload, and refusals that name the flag to change.
#include "echomq/executor.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emqd_process.h"
#include "tls_fixture.h"

namespace echomq::test {
namespace {

using ::testing::HasSubstr;

std::string payload_of(const ValkeyServer& server, const std::string& queue, const std::string& id) {
  Executor x(server.options());
  auto row = inspect(x, QueueKeys(queue), id);
  return row ? row->fields["payload"] : "(no such job)";
}

std::vector<std::string> emq(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {emq_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

TEST(EmqTls, FlagsReachAMutualTlsServer) {
  ValkeyServer server(tls_server(true));
  RunResult r = run_program(emq({"--url", server.url(), "--tls-ca", pki().ca(), "--tls-cert", pki().client().cert,
                                 "--tls-key", pki().client().key, "enqueue", "q", "over tls", "--id", "JOB_t1"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "JOB_t1\n");
  EXPECT_EQ(payload_of(server, "q", "JOB_t1"), "over tls");
}

TEST(EmqTls, VariablesReachAMutualTlsServer) {
  ValkeyServer server(tls_server(true));
  const std::vector<std::string> env = {"EMQ_URL=valkeys://localhost:" + std::to_string(server.port()) + "/0",
                                        "EMQ_TLS_CA=" + pki().ca(), "EMQ_TLS_CERT=" + pki().client().cert,
                                        "EMQ_TLS_KEY=" + pki().client().key, "EMQ_TLS_SERVER_NAME=localhost"};
  RunResult put = run_program(emq({"enqueue", "q", "by env", "--id", "JOB_t2"}), "", env);
  ASSERT_EQ(put.code, 0) << put.err;
  RunResult stats = run_program(emq({"stats", "q", "--json"}), "", env);
  ASSERT_EQ(stats.code, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("\"pending\": 1"));
  EXPECT_EQ(payload_of(server, "q", "JOB_t2"), "by env");
}

TEST(EmqTls, TenMebibytesFromStdin) {
  ValkeyServer server(tls_server(true));
  const std::string big(10 << 20, 'p');
  RunResult r = run_program(emq({"--url", server.url(), "--tls-ca", pki().ca(), "--tls-cert", pki().client().cert,
                                 "--tls-key", pki().client().key, "enqueue", "q", "-", "--id", "JOB_big"}),
                            big);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(payload_of(server, "q", "JOB_big") == big) << "the payload came back changed";
}

TEST(EmqTls, RefusalsNameTheFlagAndItsVariable) {
  ValkeyServer server(tls_server(true));
  RunResult wrong_ca = run_program(emq({"--url", server.url(), "--tls-ca", pki().other_ca(), "stats", "q"}));
  EXPECT_EQ(wrong_ca.code, 3);
  EXPECT_THAT(wrong_ca.err, HasSubstr("the CA in " + pki().other_ca() +
                                      " did not sign the server's certificate: set --tls-ca (or EMQ_TLS_CA) to the "
                                      "CA that did"));
  EXPECT_EQ(wrong_ca.err.find("--url or EMQ_URL"), std::string::npos) << wrong_ca.err;

  RunResult no_cert = run_program(emq({"--url", server.url(), "--tls-ca", pki().ca(), "stats", "q"}));
  EXPECT_EQ(no_cert.code, 3);
  EXPECT_THAT(no_cert.err, HasSubstr("set --tls-cert (or EMQ_TLS_CERT) and --tls-key (or EMQ_TLS_KEY)"));

  ValkeyServer plain;
  RunResult plain_url = run_program(emq({"--url", plain.url(), "--tls-ca", pki().ca(), "stats", "q"}));
  EXPECT_EQ(plain_url.code, 2);
  EXPECT_THAT(plain_url.err, HasSubstr("need a valkeys:// or rediss:// URL"));
}

}  // namespace
}  // namespace echomq::test
