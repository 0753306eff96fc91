#include "settle.h"

namespace echomq::daemon {

Settlement Settlement::from_outcome(const Lease& lease, std::int64_t attempt, Outcome outcome) {
  Settlement s;
  s.lease = lease;
  s.attempt = attempt;
  switch (outcome.verdict) {
    case Outcome::Verdict::Complete:
      s.action = Action::Complete;
      s.text = std::move(outcome.result);
      break;
    case Outcome::Verdict::Retry:
    case Outcome::Verdict::Dead:
      s.action = Action::Fail;
      s.permanent = outcome.verdict == Outcome::Verdict::Dead;
      s.text = std::move(outcome.error);
      break;
    case Outcome::Verdict::Release: s.action = Action::Release; break;
  }
  return s;
}

Settlement Settlement::release(const Lease& lease, std::int64_t attempt) {
  Settlement s;
  s.lease = lease;
  s.attempt = attempt;
  s.action = Action::Release;
  return s;
}

Settler::Settler(const QueueConfig& queue, const QueueKeys& keys)
    : queue_(queue), keys_(keys), rng_(std::random_device{}()) {}

std::int64_t Settler::retry_delay_ms(std::int64_t attempt) { return backoff_delay_ms(queue_.backoff, attempt, rng_); }

ScriptCall Settler::call(const Settlement& s, FlowMode mode) {
  switch (s.action) {
    case Settlement::Action::Complete: {
      // A result is stored only when the row is kept: keep_ms 0 deletes it.
      // A child's row is kept until its parent has the result.
      const bool kept = queue_.keep_completed_s > 0 || mode == FlowMode::Flow;
      return complete_call(keys_, s.lease, queue_.keep_completed_s * 1000,
                           kept ? std::string_view(s.text) : std::string_view(), mode);
    }
    case Settlement::Action::Fail: {
      FailArgs args;
      args.error = s.text;
      args.max_attempts = queue_.max_attempts;
      args.permanent = s.permanent;
      // No delay for a job that will die anyway: the script ignores it then.
      args.backoff_ms = s.permanent || s.attempt >= queue_.max_attempts ? 0 : retry_delay_ms(s.attempt);
      return fail_call(keys_, s.lease, args, mode);
    }
    case Settlement::Action::Release: return release_call(keys_, s.lease);
  }
  return release_call(keys_, s.lease);
}

Settled Settler::decode(const Settlement& s, const Reply& reply) {
  switch (s.action) {
    case Settlement::Action::Complete:
      return decode_complete(reply) == CompleteResult::Completed ? Settled::Completed : Settled::LeaseLost;
    case Settlement::Action::Fail:
      switch (decode_fail(reply)) {
        case FailResult::Retry: return Settled::Retried;
        case FailResult::Dead: return Settled::Dead;
        case FailResult::LeaseLost: return Settled::LeaseLost;
      }
      break;
    case Settlement::Action::Release:
      return decode_release(reply) == ReleaseResult::Released ? Settled::Released : Settled::LeaseLost;
  }
  return Settled::LeaseLost;
}

const char* to_string(Settled s) {
  switch (s) {
    case Settled::Completed: return "completed";
    case Settled::Retried: return "retry";
    case Settled::Dead: return "dead";
    case Settled::Released: return "released";
    case Settled::LeaseLost: return "lease lost";
  }
  return "?";
}

}  // namespace echomq::daemon
