// What the TLS tests share: one private CA per test binary (TestPki), and
// valkey-servers on a TLS port that present its certificates.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "echomq/connection.h"
#include "echomq/errors.h"
#include "test_pki.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::test {

// Made once: a handful of openssl runs is quick, but not free on a loaded
// machine.
inline const TestPki& pki() {
  static const TestPki* p = new TestPki();
  return *p;
}

// A server on a TLS port showing `shown` (the good certificate by default),
// verifying clients against the test CA; options() trusts the test CA and
// presents the test client's certificate.
inline ValkeyServer::Options tls_server(bool auth_clients = false, CertPair shown = pki().server(),
                                        std::vector<std::string> extra_args = {}) {
  ValkeyServer::Options o;
  o.tls = ValkeyServer::Tls{shown.cert, shown.key, pki().ca(), auth_clients, pki().client().cert, pki().client().key};
  o.extra_args = std::move(extra_args);
  return o;
}

// The message of the Error that opening a connection throws; "" if none.
inline std::string open_error(const ConnectionOptions& o) {
  try {
    Connection c = Connection::open(o);
    Reply r = c.command({"PING"});
    return r.is_error() ? "PING answered " + r.str : "";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace echomq::test
