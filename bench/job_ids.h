// The ids the benchmark programs give their jobs: JOB_ and a 12-digit
// number, the length valkey-benchmark's __rand_int__ gives, so that both
// put the same bytes on the wire; and one numbering, so that
// emq_bench_enqueue --first writes the very ids emq_bench_flow_enqueue does.
#pragma once

#include <cstdio>
#include <string>

namespace emq_bench {

inline std::string job_id(long long n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "JOB_%012lld", n);
  return buf;
}

}  // namespace emq_bench
