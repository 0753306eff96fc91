// emq limit QUEUE [--max-active N|off] [--rate N/PERIOD|off]: a queue's
// limits in its meta, which claim enforces for every daemon at once.
#include <iostream>
#include <memory>

#include "config/duration.h"
#include "echomq/limits.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

struct LimitArgs {
  std::string queue;
  std::string max_active;  // "" unchanged, "off", or N
  std::string rate;        // "" unchanged, "off", or N/PERIOD
};

// 1..1000000 written plainly: up to 7 digits, no sign, no leading zero.
// By hand: the std::regex it replaced recursed once per character and a
// 60,000-character value overflowed the stack.
std::optional<std::int64_t> count_of(const std::string& text) {
  if (text.empty() || text.size() > 7 || text[0] == '0') return std::nullopt;
  const std::optional<std::int64_t> n = whole_number(text);
  return n && *n <= kMaxActiveLimit ? n : std::nullopt;
}

// A value as an error shows it: a pasted megabyte is cut.
std::string shown(const std::string& text) { return "'" + text_cell(text, 40) + "'"; }

// N, or "off"; a usage error naming the option otherwise.
std::optional<std::int64_t> max_active_of(const std::string& text) {
  if (text == "off") return std::nullopt;
  if (std::optional<std::int64_t> n = count_of(text)) return n;
  throw Error(ErrorKind::Invalid, "--max-active", "expected 1..1000000 or off, got " + shown(text));
}

// N/PERIOD (100/1s, 5/500ms, 1000/m), or "off".
std::optional<RateLimit> rate_of(const std::string& text) {
  if (text == "off") return std::nullopt;
  const std::size_t slash = text.find('/');
  if (slash != std::string::npos) {
    std::string period = text.substr(slash + 1);
    // "1000/m": a period without a number is one of its unit.
    if (!period.empty() && (period[0] < '0' || period[0] > '9')) period.insert(0, "1");
    const std::optional<std::int64_t> max = count_of(text.substr(0, slash));
    const std::optional<std::int64_t> window = daemon::parse_duration_ms(period);
    if (max && window && *window >= 1 && *window <= kMaxWindowMs) return RateLimit{*max, *window};
  }
  throw Error(ErrorKind::Invalid, "--rate",
              "expected N/PERIOD such as 100/1s, 5/500ms or 1000/m (N 1..1000000, PERIOD 1ms..24h), or off; got " +
                  shown(text));
}

void show(Executor& x, const QueueKeys& q) {
  std::vector<Reply> r = x.pipeline({limit_fields_read(q), {"ZCARD", q.active}});
  const LimitFields f = decode_limit_fields(r[0]);
  const LimitStatus s = limit_status(f, r[1].integer, x.server_time_ms());
  std::cout << "queue       " << q.queue << '\n';
  if (!s.limits) {
    std::cout << "limits      broken: " << s.broken << " (claims stop until mended: set them again here)\n";
    return;
  }
  std::cout << "max_active  " << (s.limits->max_active ? std::to_string(*s.limits->max_active) : "off")
            << " (active now " << r[1].integer << ")\n";
  if (!s.limits->rate) {
    std::cout << "rate        off\n";
  } else {
    const RateLimit& rate = *s.limits->rate;
    std::cout << "rate        " << rate.max << " per " << rate.window_ms << " ms\n";
    if (!f.rate_credit || !f.rate_at) {
      std::cout << "bucket      full (" << rate.max << " tokens)\n";
    } else {
      std::cout << "bucket      " << *s.tokens << " whole tokens now (" << std::stoll(*f.rate_credit) / rate.window_ms
                << " at the last claim, " << iso_time(std::stoll(*f.rate_at)) << ")\n";
    }
  }
  if (!s.held_back.empty()) std::cout << "held back   " << s.held_back << '\n';
}

int run_limit(Tool& tool, const LimitArgs& a) {
  QueueKeys q(a.queue);
  // The values are checked before the server is asked anything.
  // Outer nullopt: unchanged; inner: off.
  std::optional<std::optional<std::int64_t>> max_active;
  std::optional<std::optional<RateLimit>> rate;
  if (!a.max_active.empty()) max_active.emplace(max_active_of(a.max_active));
  if (!a.rate.empty()) rate.emplace(rate_of(a.rate));
  Executor x(tool.options());
  if (a.max_active.empty() && a.rate.empty()) {
    warn_if_unknown(x, q);
    show(x, q);
    return kExitOk;
  }
  const LimitFields f = decode_limit_fields(x.command(limit_fields_read(q)));
  std::string broken;
  const std::optional<QueueLimits> was = f.limits(&broken);
  if (!was) say("note: the limits in " + q.meta + " were broken (" + broken + "); what is not set now is off");
  const QueueLimits before = was.value_or(QueueLimits{});
  QueueLimits want = before;
  if (max_active) want.max_active = *max_active;
  if (rate) want.rate = *rate;
  for (const Reply& r : x.pipeline(limits_write(q, before, want))) {
    if (r.is_error()) throw error_from_reply("limit", r.str);
  }
  warn_if_unknown(x, q);
  std::cout << "limits of " << q.queue << ": " << describe(want)
            << (want.rate && want.rate != before.rate ? " (the bucket starts full)" : "") << '\n';
  return kExitOk;
}

}  // namespace

void add_limit(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<LimitArgs>();
  CLI::App* sub = app.add_subcommand("limit", "show or set a queue's limits, for every daemon at once");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("--max-active", a->max_active, "jobs holding a lease at once, across every daemon, or off")
      ->type_name("N|off");
  sub->add_option("--rate", a->rate, "claims per period, e.g. 100/1s, or off")->type_name("N/PERIOD|off");
  sub->footer(
      "Without options it shows the limits and the rate's bucket. A changed rate starts a full bucket. "
      "A daemon whose config has limits: writes them again at its start.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_limit(tool, *a); }; });
}

}  // namespace echomq::cli
