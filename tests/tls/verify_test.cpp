// Verification is always on: what a server must show to be reached over
// TLS, what the client shows when the server asks, and what each refusal
// tells the user to change.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "echomq/tls.h"
#include "tls_fixture.h"

namespace echomq::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string endpoint(const ValkeyServer& s) { return "127.0.0.1:" + std::to_string(s.port()); }

TEST(Verify, ATrustedServerIsReachedByItsIpAndByItsName) {
  ValkeyServer server(tls_server());
  ConnectionOptions o = server.options();
  EXPECT_EQ(open_error(o), "");
  o.host = "localhost";
  EXPECT_EQ(open_error(o), "");
}

// A CA file that is there but wrong is another mistake than none at all:
// the advice names the file (it gave the advice for a missing one).
TEST(Verify, AServerSignedByAnotherCaIsRefusedNamingTheCaFile) {
  ValkeyServer server(tls_server());
  ConnectionOptions o = server.options();
  o.tls.ca_file = pki().other_ca();
  const std::string e = open_error(o);
  EXPECT_THAT(e, HasSubstr("TLS handshake with " + endpoint(server) + " failed"));
  // The server sends its CA along with its certificate: OpenSSL then
  // reports a self-signed certificate in the chain.
  EXPECT_THAT(e, HasSubstr("certificate verify failed: self-signed certificate in certificate chain"));
  EXPECT_THAT(e, HasSubstr("the CA in " + pki().other_ca() +
                           " did not sign the server's certificate: set tls.ca_file to the CA that did"));
}

TEST(Verify, WithoutACaFileTheAdviceIsToSetOne) {
  ValkeyServer server(tls_server());
  ConnectionOptions o = server.options();
  // The system's store does not know the test CA.
  o.tls.ca_file.clear();
  const std::string e = open_error(o);
  EXPECT_THAT(e, HasSubstr("TLS handshake with " + endpoint(server) + " failed: certificate verify failed"));
  EXPECT_THAT(e, HasSubstr("; set tls.ca_file to the CA that signed the server's certificate"));
  EXPECT_THAT(e, Not(HasSubstr("did not sign")));
}

TEST(Verify, ACertificateForAnotherNameIsRefusedUnlessThatNameIsExpected) {
  ValkeyServer server(tls_server(false, pki().misnamed_server()));
  ConnectionOptions o = server.options();
  EXPECT_THAT(open_error(o), HasSubstr("IP address mismatch"));
  o.host = "localhost";
  const std::string e = open_error(o);
  EXPECT_THAT(e, HasSubstr("hostname mismatch"));
  EXPECT_THAT(e, HasSubstr("not for 'localhost'"));
  EXPECT_THAT(e, HasSubstr("set tls.server_name"));
  o.tls.server_name = "elsewhere.test";
  EXPECT_EQ(open_error(o), "") << "the name the certificate holds is accepted";
}

TEST(Verify, AnExpiredCertificateIsRefused) {
  ValkeyServer server(tls_server(false, pki().expired_server()));
  const std::string e = open_error(server.options());
  EXPECT_THAT(e, HasSubstr("certificate has expired"));
  EXPECT_THAT(e, HasSubstr("renew the server's certificate"));
}

TEST(Verify, MutualTlsWithTheClientCertificate) {
  ValkeyServer server(tls_server(true));
  EXPECT_EQ(open_error(server.options()), "");
}

TEST(Verify, MutualTlsWithoutAClientCertificateSaysWhichSettingsToSet) {
  ValkeyServer server(tls_server(true));
  ConnectionOptions o = server.options();
  o.tls.cert_file.clear();
  o.tls.key_file.clear();
  o.client_name = "probe";  // a first command, where TLS 1.3 reports it
  EXPECT_THAT(open_error(o), HasSubstr("the server wants a client certificate: set tls.cert_file and tls.key_file"));
}

TEST(Verify, AClientCertificateFromAnotherCaIsRefused) {
  ValkeyServer server(tls_server(true));
  ConnectionOptions o = server.options();
  o.tls.cert_file = pki().stranger().cert;
  o.tls.key_file = pki().stranger().key;
  o.client_name = "probe";
  EXPECT_THAT(open_error(o), HasSubstr("refused the client certificate in tls.cert_file"));
}

TEST(Verify, TlsWithAPassword) {
  ValkeyServer server(tls_server(true, pki().server(), {"--requirepass", "s3cret-over-tls"}));
  ConnectionOptions o = server.options();
  o.password = "s3cret-over-tls";
  EXPECT_EQ(open_error(o), "");
  o.password = "wrong-one";
  const std::string e = open_error(o);
  EXPECT_THAT(e, HasSubstr("refused the login"));
  EXPECT_EQ(e.find("wrong-one"), std::string::npos) << "a password is never shown";
}

TEST(Verify, PlaintextAndTlsMixedUpSayWhichToUse) {
  ValkeyServer tls(tls_server());
  ConnectionOptions plain_to_tls = tls.options();
  plain_to_tls.tls.enabled = false;
  plain_to_tls.client_name = "probe";
  EXPECT_THAT(open_error(plain_to_tls), HasSubstr("use valkeys://"));

  ValkeyServer plain;
  ConnectionOptions tls_to_plain = plain.options();
  tls_to_plain.tls.enabled = true;
  tls_to_plain.tls.ca_file = pki().ca();
  tls_to_plain.connect_timeout = std::chrono::milliseconds(1000);
  EXPECT_THAT(open_error(tls_to_plain), HasSubstr("TLS port"));
}

TEST(Verify, UnusableFilesAreNamedBySetting) {
  ValkeyServer server(tls_server(true));
  ConnectionOptions o = server.options();
  o.tls.ca_file = pki().dir() + "/none.crt";
  EXPECT_THAT(open_error(o), HasSubstr("cannot use tls.ca_file: cannot read " + o.tls.ca_file));
  o = server.options();
  o.tls.key_file = pki().stranger().key;
  const std::string e = open_error(o);
  EXPECT_THAT(e, HasSubstr("cannot use tls.key_file: " + o.tls.key_file + " is not the key of the certificate in " +
                           o.tls.cert_file));
  o = server.options();
  o.tls.key_file.clear();
  EXPECT_THAT(open_error(o), HasSubstr("needs both tls.cert_file and tls.key_file"));
}

TEST(TlsFiles, ChecksSayWhatIsWrongWithEachFile) {
  EXPECT_EQ(check_ca_file(pki().ca()), "");
  EXPECT_EQ(check_cert_file(pki().client().cert), "");
  EXPECT_EQ(check_key_file(pki().client().key, pki().client().cert), "");

  const std::string dir = pki().dir();
  std::ofstream(dir + "/garbage.pem") << "not a certificate\n";
  EXPECT_THAT(check_ca_file(dir + "/garbage.pem"), HasSubstr("holds no PEM certificate"));
  EXPECT_THAT(check_cert_file(dir + "/garbage.pem"), HasSubstr("is not a PEM certificate"));
  EXPECT_THAT(check_key_file(dir + "/garbage.pem", pki().client().cert), HasSubstr("is not a PEM private key"));
  EXPECT_THAT(check_ca_file(dir + "/absent.pem"), HasSubstr("cannot read " + dir + "/absent.pem"));
  // A key file holds a key, never shown: the message names the file only.
  const std::string mismatch = check_key_file(pki().stranger().key, pki().client().cert);
  EXPECT_THAT(mismatch, HasSubstr("is not the key of the certificate in " + pki().client().cert));
  EXPECT_EQ(mismatch.find("BEGIN"), std::string::npos);
}

TEST(TlsFiles, AKeyOthersCanReadIsNamedWithItsMode) {
  const std::string key = pki().dir() + "/shared.key";
  std::filesystem::copy_file(pki().client().key, key, std::filesystem::copy_options::overwrite_existing);
  ::chmod(key.c_str(), 0600);
  EXPECT_EQ(key_file_exposure(key), "");
  ::chmod(key.c_str(), 0644);
  const std::string warning = key_file_exposure(key);
  EXPECT_THAT(warning, HasSubstr(key));
  EXPECT_THAT(warning, HasSubstr("mode 0644"));
}

}  // namespace
}  // namespace echomq::test
