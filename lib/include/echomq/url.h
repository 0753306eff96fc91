// Where the server is and how to log in: parsed from valkey://, redis:// and
// unix:// URLs. The password is carried, never printed: use redacted().
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace echomq {

// How transitions reach the server (DESIGN.md, "Reaching the server"):
// scripts by SHA, the emq module's EMQ.* commands, or whichever the server
// has (native when MODULE LIST shows emq).
enum class ExecutorChoice { Auto, Scripted, Native };

struct ConnectionOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string unix_path;  // when set, host and port are not used
  int db = 0;
  std::string username;   // ACL user; empty means the default user
  std::string password;   // empty means no AUTH
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds command_timeout{5000};
  std::string client_name;  // CLIENT SETNAME, when set

  // The executor (issue 12).
  ExecutorChoice executor = ExecutorChoice::Auto;

  // The address without secrets, for logs: "valkey://user@host:port/db".
  std::string redacted() const;
};

// valkey://[user[:password]@]host[:port][/db]
// redis://  the same
// unix://[user[:password]@]/path/to/socket[?db=N]
// Throws Error{Invalid} saying what part is wrong. Userinfo is
// percent-decoded, so passwords may hold any byte.
ConnectionOptions parse_url(std::string_view url);

}  // namespace echomq
