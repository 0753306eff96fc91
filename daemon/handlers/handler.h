// What every handler kind (exec, pool, plugin) offers the claim loop: run
// one job to its end and say how it ended. The loops know nothing else of
// handlers, so a new kind slots in here without touching them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config_types.h"
#include "echomq/flow_speaker.h"
#include "handlers/stop_token.h"

namespace echomq::daemon {

// The job as every handler sees it.
struct Job {
  std::string queue;
  std::string id;
  std::string payload;  // bytes
  std::int64_t attempt = 1;
  std::int64_t deadline_ms = 0;  // epoch ms by which the daemon stops waiting; 0: none
  // A parent's children's outcomes, in ref order; empty for any other job.
  std::vector<ChildResult> children;
  // The W3C context of the job's span, for the handler's own spans to nest
  // under (exec: TRACEPARENT and TRACESTATE; pool: the frame's keys;
  // plugin: emq_host's trace_context). Empty while tracing is off.
  std::string traceparent;
  std::string tracestate;
  // Where the handler reports how far the job got, as often as it likes
  // (the daemon stores at most 4 a second: PROTOCOL.md, "progress"). Empty
  // where nobody listens. Any thread, while run() lasts.
  std::function<void(std::string_view)> progress;
};

struct Outcome {
  enum class Verdict {
    Complete,  // done; result is the output
    Retry,     // failed; try again after the queue's backoff
    Dead,      // failed for good (a permanent error)
    Release,   // never attempted (the handler could not start it): back to pending, no attempt counted
  };
  Verdict verdict = Verdict::Retry;
  std::string result;  // Complete
  std::string error;   // Retry, Dead, Release: what went wrong, for the row's error field and the log

  static Outcome complete(std::string result) {
    Outcome out;
    out.verdict = Verdict::Complete;
    out.result = std::move(result);
    return out;
  }
  static Outcome failed(Verdict verdict, std::string error) {
    Outcome out;
    out.verdict = verdict;
    out.error = std::move(error);
    return out;
  }
  // A job the daemon ended (lease lost, drain timed out): the caller
  // discards the outcome or releases the job, but the text shows in logs.
  static Outcome stopped(std::string_view note = {});
};

inline constexpr std::string_view kStoppedByDaemon = "stopped by the daemon";

inline Outcome Outcome::stopped(std::string_view note) {
  std::string text(kStoppedByDaemon);
  if (!note.empty()) text.append(" (").append(note).append(")");
  return failed(Verdict::Retry, std::move(text));
}

// A configured number of seconds (timeout_s, kill_grace_s) as a duration,
// clamped to [0, 30 years] so an absurd value cannot overflow the clock.
inline std::chrono::steady_clock::duration seconds(double s) {
  const double bounded = std::min(std::max(s, 0.0), 1e9);
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(bounded));
}

class Handler {
 public:
  virtual ~Handler() = default;

  // Called once before the first job (a pool starts its processes here).
  // Throws std::runtime_error with an actionable message when the handler
  // cannot work at all.
  virtual void start() {}
  // Runs one job to its end. Called from up to `concurrency` slot threads
  // at once. When `stop` is requested the handler ends the job as fast as
  // it safely can (the caller discards the outcome). Never throws: every
  // failure of the handler is an Outcome.
  virtual Outcome run(const Job& job, const StopToken& stop) = 0;
  // Why no job should be claimed for it now, "" when jobs may be (a pool
  // with no process up while its starts keep failing). The claim loop
  // claims nothing meanwhile, and /healthz says why. Any thread, any time.
  virtual std::string not_ready() const { return {}; }
  // Called once after the last job has returned (a pool closes its
  // processes' stdin and waits for them here).
  virtual void shutdown() {}
};

}  // namespace echomq::daemon
