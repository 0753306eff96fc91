// emq limit QUEUE [--max-active N|off] [--rate N/PERIOD|off]: a queue's
// limits in its meta, which claim enforces for every daemon at once.
#include <iostream>
#include <memory>

#include "echomq/limits.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"
#include "limit_change.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

struct LimitArgs {
  std::string queue;
  std::string max_active;  // "" unchanged, "off", or N
  std::string rate;        // "" unchanged, "off", or N/PERIOD
};

void show(Executor& x, const QueueKeys& q) {
  std::vector<Reply> r = x.pipeline({limit_fields_read(q), {"ZCARD", q.active}});
  const LimitFields f = decode_limit_fields(r[0]);
  const LimitStatus s = limit_status(f, r[1].integer, x.server_time_ms());
  std::cout << "queue       " << q.queue << '\n';
  if (!s.limits) {
    std::cout << "limits      broken: " << terminal_text(s.broken)
              << " (claims stop until mended: set them again here)\n";
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
      std::cout << "bucket      " << *s.tokens << " whole tokens now ("
                << whole_number(*f.rate_credit).value_or(0) / rate.window_ms << " at the last claim, "
                << iso_time(whole_number(*f.rate_at).value_or(0)) << ")\n";
    }
  }
  if (!s.held_back.empty()) std::cout << "held back   " << terminal_text(s.held_back) << '\n';
}

int run_limit(Tool& tool, const LimitArgs& a) {
  QueueKeys q(a.queue);
  // The values are checked before the server is asked anything.
  LimitChange change;
  if (!a.max_active.empty()) change.max_active.emplace(max_active_of(a.max_active, "--max-active"));
  if (!a.rate.empty()) change.rate.emplace(rate_of(a.rate, "--rate"));
  Executor x(tool.options());
  if (a.max_active.empty() && a.rate.empty()) {
    warn_if_unknown(x, q);
    show(x, q);
    return kExitOk;
  }
  const LimitsWritten w = change_limits(x, q, change);
  if (!w.was_broken.empty()) {
    say("note: the limits in " + q.meta + " were broken (" + w.was_broken + "); what is not set now is off");
  }
  warn_if_unknown(x, q);
  std::cout << "limits of " << q.queue << ": " << describe(w.now)
            << (w.now.rate && w.now.rate != w.before.rate ? " (the bucket starts full)" : "") << '\n';
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
