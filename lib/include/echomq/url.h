// Where the server is and how to log in: parsed from valkey://, redis://,
// valkeys://, rediss:// (TLS) and unix:// URLs. The password is carried,
// never printed: use redacted().
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace echomq {

// TLS to the server. The server's certificate is always verified: there is
// deliberately no field that turns verification off.
struct TlsOptions {
  bool enabled = false;     // valkeys://, rediss://
  std::string ca_file;      // PEM CA certificates; empty: the system's store
  std::string cert_file;    // client certificate chain (PEM), with key_file
  std::string key_file;     // its private key (PEM, unencrypted)
  std::string server_name;  // SNI and the name verified; empty: the host

  // How the user sets each file or name above, so that an error says what
  // to change: "valkey.tls.ca_file" for emqd, "--tls-ca or EMQ_TLS_CA" for emq.
  struct Settings {
    std::string ca_file = "tls.ca_file";
    std::string cert_file = "tls.cert_file";
    std::string key_file = "tls.key_file";
    std::string server_name = "tls.server_name";
  } settings;
};

// How transitions reach the server (DESIGN.md, "Reaching the server"):
// scripts by SHA, the emq module's EMQ.* commands, or whichever the server
// has (native when MODULE LIST shows emq).
enum class ExecutorChoice { Auto, Scripted, Native };

class EventsBook;

struct ConnectionOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string unix_path;  // when set, host and port are not used
  int db = 0;
  std::string username;  // ACL user; empty means the default user
  std::string password;  // empty means no AUTH
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds command_timeout{5000};
  std::string client_name;  // CLIENT SETNAME, when set

  // The executor (issue 12).
  ExecutorChoice executor = ExecutorChoice::Auto;
  // When set, an executor passes each queue's events stream to every
  // transition that takes it, as the book says the queue keeps events
  // (events.h). One book serves a process's executors.
  std::shared_ptr<EventsBook> events;

  // The address without secrets, for logs: "valkey://user@host:port/db"
  // ("valkeys://..." over TLS).
  std::string redacted() const;

  TlsOptions tls;  // TLS: set by the scheme, files and name by the caller
};

// valkey://[user[:password]@]host[:port][/db]
// redis://  the same
// valkeys://, rediss://  the same, over TLS (the files come from the caller)
// unix://[user[:password]@]/path/to/socket[?db=N]
// Throws Error{Invalid} saying what part is wrong. Userinfo is
// percent-decoded, so passwords may hold any byte.
ConnectionOptions parse_url(std::string_view url);

}  // namespace echomq
