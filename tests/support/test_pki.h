// A private certificate authority for one test binary, made with the
// openssl command line tool in a temporary directory (removed with the
// object): a CA, certificates it signed for the server and a client, and
// the wrong ones a user meets (another CA, an expired certificate, one for
// another name). EC P-256 keys: quick to make on a loaded machine.
#pragma once

#include <string>

namespace echomq::test {

struct CertPair {
  std::string cert;
  std::string key;
};

class TestPki {
 public:
  TestPki();
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  const std::string& dir() const { return dir_; }
  std::string ca() const { return dir_ + "/ca.crt"; }
  // For localhost and 127.0.0.1, signed by ca().
  CertPair server() const { return {dir_ + "/server.crt", dir_ + "/server.key"}; }
  // A client certificate signed by ca().
  CertPair client() const { return {dir_ + "/client.crt", dir_ + "/client.key"}; }
  // A CA that signed nothing the server shows, and a client it signed.
  std::string other_ca() const { return dir_ + "/other-ca.crt"; }
  CertPair stranger() const { return {dir_ + "/stranger.crt", dir_ + "/stranger.key"}; }
  // For localhost and 127.0.0.1, signed by ca(), out of date since yesterday.
  CertPair expired_server() const { return {dir_ + "/expired.crt", dir_ + "/expired.key"}; }
  // Signed by ca() for elsewhere.test only.
  CertPair misnamed_server() const { return {dir_ + "/misnamed.crt", dir_ + "/misnamed.key"}; }

 private:
  void make_ca(const std::string& name, const std::string& subject);
  void make_cert(const std::string& name, const std::string& ca, const std::string& subject, const std::string& san,
                 int days);

  std::string dir_;
};

}  // namespace echomq::test
