// emq pause QUEUE [--reason TEXT] [--for DURATION] [--by NAME] /
// emq resume QUEUE / emq cancel QUEUE ID | --match TEXT [--state S] [--scan N] [--yes]
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "echomq/bytes.h"
#include "text/duration.h"
#include "echomq/job_actions.h"
#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "bulk_match.h"
#include "bytes_text.h"
#include "job_table.h"
#include "output.h"
#include "pause_view.h"
#include "tool.h"

namespace echomq::cli {

namespace {

struct ControlArgs {
  std::string queue;
  std::string id;
  // pause: who, why and for how long ("" when not given)
  std::string by;
  std::string reason;
  std::string for_text;
  // cancel --match
  MatchOptions match;
  std::string state;
};

// Who pauses, when --by does not say: $USER@host, as an operator would
// sign it by hand.
std::string default_pauser() {
  const char* user = std::getenv("USER");
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string who = user != nullptr && *user != '\0' ? user : "uid" + std::to_string(::getuid());
  if (host[0] != '\0') who += std::string("@") + host;
  return who.substr(0, kPausedByMax);
}

// The request of emq pause's options; Error{Invalid} naming the option.
PauseRequest pause_request(const ControlArgs& a) {
  PauseRequest how;
  how.by = a.by.empty() ? default_pauser() : a.by;
  how.reason = a.reason;
  if (how.by.size() > kPausedByMax) {
    throw Error(ErrorKind::Invalid, "pause", "--by is " + std::to_string(how.by.size()) + " bytes; at most 64");
  }
  if (how.reason.size() > kPausedReasonMax) {
    throw Error(ErrorKind::Invalid, "pause",
                "--reason is " + std::to_string(how.reason.size()) + " bytes; at most 256");
  }
  // Every tool that finds the queue paused prints these.
  for (const auto& [flag, text] :
       {std::pair<const char*, const std::string*>{"--by", &how.by}, {"--reason", &how.reason}}) {
    if (!is_plain_text(*text)) {
      throw Error(ErrorKind::Invalid, "pause",
                  std::string(flag) + " holds a control character (or bytes that are not UTF-8): write plain text");
    }
  }
  if (!a.for_text.empty()) {
    how.for_ms = daemon::parse_duration_ms(a.for_text);
    if (!how.for_ms || *how.for_ms < 1) {
      throw Error(ErrorKind::Invalid, "pause",
                  "--for '" + a.for_text + "' is not a duration: a whole number and a unit, e.g. 90s, 30m, 2h, 1d");
    }
  }
  return how;
}

int run_pause(Tool& tool, const ControlArgs& a, bool paused) {
  QueueKeys q(a.queue);
  const std::optional<PauseRequest> how = paused ? std::optional<PauseRequest>(pause_request(a)) : std::nullopt;
  Executor x(tool.options());
  if (!how) {
    resume(x, q);
    warn_if_unknown(x, q);
    std::cout << "resumed " << q.queue << '\n';
    return kExitOk;
  }
  pause(x, q, *how);
  warn_if_unknown(x, q);
  // What was written, read back as every other reader will see it.
  std::cout << "paused " << q.queue << ' ' << terminal_text(describe_pause(stats(x, q), x.server_time_ms())) << '\n';
  return kExitOk;
}

int run_cancel(Tool& tool, const ControlArgs& a) {
  if (a.id.empty() == a.match.text.empty()) {
    throw Error(ErrorKind::Invalid, "cancel", "give a job ID or --match TEXT, one of the two");
  }
  if (!a.match.text.empty()) {
    MatchOptions m = a.match;
    m.queue = a.queue;
    return run_cancel_match(tool, m, state_option(a.state.empty() ? "pending" : a.state, "cancel"));
  }
  if (!a.state.empty()) throw Error(ErrorKind::Invalid, "cancel", "--state goes with --match");
  if (a.match.in != MatchOptions().in) throw Error(ErrorKind::Invalid, "cancel", "--in goes with --match");
  QueueKeys q(a.queue);
  check_wire_gate(a.id);  // a listed id may be any shape a peer wrote
  Executor x(tool.options());
  const Reply state = x.command({"HGET", q.row(a.id), "state"});
  switch (cancel(x, q, a.id)) {
    case CancelResult::Removed:
      std::cout << "cancelled " << a.id << '\n';
      if (state.type == Reply::Type::String && state.str == "waiting") {
        say("note: " + a.id +
            " was a parent waiting for its children: they still run, and their news no longer runs it; "
            "cancel them too if they should not run");
      }
      return kExitOk;
    case CancelResult::NotFound:
      say("no job " + a.id + " in queue " + q.queue + "; nothing was cancelled");
      return kExitNotFound;
    case CancelResult::Refused: say(cancel_refusal(x, q, a.id)); return kExitRunning;
  }
  return kExitServer;  // unreachable: every CancelResult is handled above
}

}  // namespace

void warn_if_unknown(Executor& x, const QueueKeys& q) {
  std::vector<std::string> known = known_queues(x);
  if (!std::binary_search(known.begin(), known.end(), q.queue)) {
    say("note: " + q.queue + " is not a known queue (not in " + std::string(kQueuesKey) + "); check the name");
  }
}

void add_control(CLI::App& app, Tool& tool) {
  for (bool paused : {true, false}) {
    auto a = std::make_shared<ControlArgs>();
    CLI::App* sub =
        app.add_subcommand(paused ? "pause" : "resume", paused ? "stop claims from a queue (running jobs go on)"
                                                               : "let claims from a paused queue go on");
    sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
    if (paused) {
      sub->add_option("--reason", a->reason, "why, for whoever finds it paused (at most 256 bytes)")->type_name("TEXT");
      sub->add_option("--for", a->for_text, "ends the pause by itself after this long: 90s, 30m, 2h, 1d")
          ->type_name("DURATION");
      sub->add_option("--by", a->by, "who pauses (default: $USER@host)")->type_name("NAME");
      sub->footer(
          "A pause with --for ends at the first claim after its end, by whichever daemon claims:\n"
          "no timer and no leader. emq stats shows who paused, why and until when.");
    }
    sub->callback([&tool, a, paused] { tool.run = [&tool, a, paused] { return run_pause(tool, *a, paused); }; });
  }

  auto c = std::make_shared<ControlArgs>();
  CLI::App* cancel_cmd =
      app.add_subcommand("cancel",
                         "delete a job that is not running (pending, delayed, dead, kept completed, or a parent "
                         "waiting for its children)");
  cancel_cmd->add_option("queue", c->queue, "the queue")->required()->type_name("QUEUE");
  cancel_cmd->add_option("id", c->id, "the job id (JOB_...)")->type_name("ID");
  cancel_cmd->add_option("--match", c->match.text, "every job of --state whose payload or error (--in) holds TEXT")
      ->type_name("TEXT");
  add_match_in_option(cancel_cmd, c->match);
  cancel_cmd->add_option("--state", c->state, "with --match: pending (default) or delayed")->type_name("STATE");
  add_number_option(cancel_cmd, "--scan", c->match.scan, "with --match: read at most N jobs (default 10000)")
      ->type_name("N");
  cancel_cmd->add_flag("--yes,-y", c->match.yes, "with --match: do not ask (required when stdin is not a terminal)");
  cancel_cmd->footer(
      "Exit 0 cancelled, 1 no such job, 4 refused: the job is running.\n"
      "--match prints the count found and asks, then cancels 100 per round trip; a job that left the\n"
      "state since the search is left alone and counted.");
  cancel_cmd->callback([&tool, c] { tool.run = [&tool, c] { return run_cancel(tool, *c); }; });
}

}  // namespace echomq::cli
