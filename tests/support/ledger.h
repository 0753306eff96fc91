// The ledger handlers write in end-to-end and fault tests: one line per run,
// "<job id> <attempt> <daemon>", appended (O_APPEND, one short write, so
// lines from concurrent handlers never interleave). The test counts runs
// from it, not from what the daemon says about itself.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace echomq::test {

struct LedgerCounts {
  std::map<std::string, int> runs;           // job id -> times it ran
  std::map<std::string, std::string> first;  // job id -> the daemon that ran it first
  std::size_t lines = 0;

  std::size_t distinct() const { return runs.size(); }
  std::size_t rerun() const {
    std::size_t n = 0;
    for (const auto& [id, count] : runs) n += count > 1 ? 1 : 0;
    return n;
  }
  // Jobs that ran again after `daemon` ran them first.
  std::size_t rerun_after(const std::string& daemon) const {
    std::size_t n = 0;
    for (const auto& [id, count] : runs) n += count > 1 && first.at(id) == daemon ? 1 : 0;
    return n;
  }
};

inline LedgerCounts read_ledger(const std::string& path) {
  LedgerCounts c;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, attempt, daemon;
    fields >> id >> attempt >> daemon;
    if (id.empty()) continue;
    c.first.emplace(id, daemon);
    ++c.runs[id];
    ++c.lines;
  }
  return c;
}

// A handler command (argv) that records its run in `ledger` and then runs
// `then` (a shell snippet; it sees the payload on stdin).
inline std::string ledger_handler_yaml(const std::string& ledger, const std::string& daemon, const std::string& then) {
  return "      command: [\"/bin/sh\", \"-c\", \"echo \\\"$EMQ_JOB_ID $EMQ_ATTEMPT $DAEMON\\\" >> \\\"$LEDGER\\\"; " +
         then + "\"]\n      env: { LEDGER: \"" + ledger + "\", DAEMON: \"" + daemon + "\" }\n";
}

}  // namespace echomq::test
