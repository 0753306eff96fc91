// The commands a real server ran, with their arguments: its slow log, set
// to record every command (slowlog-log-slower-than 0). A test then asks
// what was called (a script by its SHA, with the values it was given),
// where INFO commandstats only counts a command's calls. The server cuts
// an entry at 32 arguments and an argument at 128 bytes; commands that
// scripts run are not recorded, only what clients sent.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "echomq/connection.h"
#include "echomq/scripts.h"

namespace echomq::test {

class CommandLog {
 public:
  // Records from now on, up to `keep` commands (the oldest go first).
  explicit CommandLog(const ConnectionOptions& server, long long keep = 1000000) : c_(Connection::open(server)) {
    c_.command({"CONFIG", "SET", "slowlog-max-len", std::to_string(keep)});
    c_.command({"CONFIG", "SET", "slowlog-log-slower-than", "0"});
    c_.command({"SLOWLOG", "RESET"});
  }

  // The SHA a script is called by (SCRIPT LOAD is idempotent).
  std::string sha_of(Script s) { return c_.command({"SCRIPT", "LOAD", script_source(s)}).str; }

  // Every recorded call of `command` (as sent: "EVALSHA", "EMQ.CLAIM"),
  // oldest first, whose next arguments are `then` (a SHA, say).
  std::vector<std::vector<std::string>> calls(const std::string& command, const std::vector<std::string>& then = {}) {
    std::vector<std::vector<std::string>> out;
    const Reply all = c_.command({"SLOWLOG", "GET", "-1"});
    for (auto entry = all.elements.rbegin(); entry != all.elements.rend(); ++entry) {
      if (entry->elements.size() < 4) continue;
      std::vector<std::string> argv;
      for (const Reply& a : entry->elements[3].elements) argv.push_back(a.str);
      if (argv.empty() || !same_word(argv[0], command) || argv.size() < 1 + then.size()) continue;
      if (std::equal(then.begin(), then.end(), argv.begin() + 1)) out.push_back(std::move(argv));
    }
    return out;
  }

 private:
  static bool same_word(const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  }

  Connection c_;
};

}  // namespace echomq::test
