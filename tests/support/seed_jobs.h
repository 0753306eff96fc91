// Many jobs in a given state, made through the wire's own transitions
// (enqueue, claim, fail), a thousand per round trip: the search and bulk
// tests need thousands of dead or pending jobs without thousands of trips.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"

namespace echomq::test {

inline constexpr std::size_t kSeedBatch = 1000;

// "JOB_<stem>100000", "JOB_<stem>100001", ...: ids in byte order = index order.
inline std::vector<std::string> numbered_ids(std::size_t n, const std::string& stem) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("JOB_" + stem + std::to_string(100000 + i));
  return out;
}

// Enqueues ids[i] with payload_of(i), kSeedBatch per round trip.
inline void seed_pending(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids,
                         const std::function<std::string(std::size_t)>& payload_of) {
  for (std::size_t start = 0; start < ids.size(); start += kSeedBatch) {
    std::vector<ScriptCall> calls;
    for (std::size_t i = start; i < std::min(ids.size(), start + kSeedBatch); ++i) {
      calls.push_back(enqueue_call(q, ids[i], payload_of(i)));
    }
    x.eval_batch(calls);
  }
}

// Enqueues ids (payload_of) and fails each for good with error_of(i): they
// end in the dead set. The queue must hold no other pending jobs.
inline void seed_dead(Executor& x, const QueueKeys& q, const std::vector<std::string>& ids,
                      const std::function<std::string(std::size_t)>& payload_of,
                      const std::function<std::string(std::size_t)>& error_of) {
  seed_pending(x, q, ids, payload_of);
  std::vector<std::string> errors;
  for (std::size_t i = 0; i < ids.size(); ++i) errors.push_back(error_of(i));
  std::size_t done = 0;
  while (done < ids.size()) {
    std::vector<ClaimedJob> jobs = claim(x, q, {30000, static_cast<std::int64_t>(kSeedBatch), 0});
    if (jobs.empty()) break;
    std::vector<ScriptCall> calls;
    for (const ClaimedJob& j : jobs) {
      const std::size_t i = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), j.id) - ids.begin());
      FailArgs permanent;
      permanent.error = errors[i];
      permanent.permanent = true;
      calls.push_back(fail_call(q, {j.id, j.lease_epoch}, permanent));
    }
    x.eval_batch(calls);
    done += jobs.size();
  }
}

}  // namespace echomq::test
