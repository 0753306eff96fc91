// An id in the minted form dated a given millisecond, for tests that need
// a job to look old. mint_job_id(ms) cannot go back in time once this
// process has minted a later id (it is strictly increasing), so such ids
// are spelt out here: 10 Crockford base32 digits of time, then 16 of
// (here zero) randomness.
#pragma once

#include <cstdint>
#include <string>

namespace echomq::test {

inline std::string id_minted_at(std::int64_t ms) {
  static const char digits[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::string time(10, '0');
  for (int i = 9; i >= 0; --i, ms >>= 5) time[static_cast<std::size_t>(i)] = digits[ms & 31];
  return "JOB_" + time + std::string(16, '0');
}

}  // namespace echomq::test
