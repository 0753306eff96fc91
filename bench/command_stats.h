// The server's own count of one command (INFO commandstats): what the
// benchmark programs divide by the jobs they moved.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>
#include <utility>

#include "echomq/executor.h"

namespace emq_bench {

// calls and usec of one command from INFO commandstats; {0, 0} when absent.
inline std::pair<long long, long long> command_stats(echomq::Executor& x, const std::string& command) {
  std::istringstream lines(x.command({"INFO", "commandstats"}).str);
  const std::string prefix = "cmdstat_" + command + ":";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    long long calls = 0, usec = 0;
    std::sscanf(line.c_str() + prefix.size(), "calls=%lld,usec=%lld", &calls, &usec);
    return {calls, usec};
  }
  return {0, 0};
}

}  // namespace emq_bench
