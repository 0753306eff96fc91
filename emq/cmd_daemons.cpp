// emq daemons [--jobs] [--json] / emq daemons quiet|stop DAEMON...|--all
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "text/duration.h"
#include "echomq/daemons.h"
#include "echomq/keyspace.h"
#include "bytes_text.h"
#include "daemon_view.h"
#include "fleet_signal.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

struct DaemonsArgs {
  bool jobs = false;
  bool json = false;
  std::vector<std::string> ids;
  bool all = false;
  std::string timeout;
};

// "0.4 s", "12 s", "3 min", "2 h": how long ago, or how long.
std::string span(std::int64_t ms) {
  if (ms < 0) ms = 0;
  if (ms < 10000) return std::to_string(ms / 1000) + "." + std::to_string(ms % 1000 / 100) + " s";
  if (ms < 120000) return std::to_string(ms / 1000) + " s";
  if (ms < 7200000) return std::to_string(ms / 60000) + " min";
  return std::to_string(ms / 3600000) + " h";
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ",") + w;
  return out.empty() ? "-" : out;
}

// The widths a daemon writes its fields within (an id of a 64-byte host, a
// state word, a version); wider is another writer's, and cut.
constexpr std::size_t kIdChars = 96;
constexpr std::size_t kHostChars = 64;
constexpr std::size_t kWordChars = 24;
constexpr std::size_t kQueueChars = 64;

void print_table(const Fleet& f, bool with_jobs) {
  Table t({{"ID", false, kIdChars},
           {"HOST", false, kHostChars},
           {"STATE", false, kWordChars},
           {"QUEUES", false, 2 * kQueueChars},
           {"BUSY", true},
           {"PREFETCHED", true},
           {"LAST BEAT", true},
           {"UP", true},
           {"VERSION", false, kWordChars}});
  for (const DaemonInfo& d : f.daemons) {
    t.add({d.id, d.host, d.state, joined(d.queues), std::to_string(d.busy) + "/" + std::to_string(d.slots),
           std::to_string(d.prefetched), span(f.server_time_ms - d.beat_ms) + " ago",
           span(f.server_time_ms - d.started_ms), d.version});
  }
  t.print(std::cout);
  if (!with_jobs) return;
  std::cout << '\n';
  Table jobs({{"DAEMON", false, kIdChars},
              {"QUEUE", false, kQueueChars},
              {"JOB", false},
              {"ATTEMPT", true},
              {"RUNNING", true}});
  for (const DaemonInfo& d : f.daemons) {
    for (const DaemonJob& j : d.jobs) {
      // One claimed ahead has not started: it waits in the daemon for a slot.
      jobs.add({d.id, j.queue, j.id, std::to_string(j.attempt),
                j.prefetched ? "waits for a slot" : span(f.server_time_ms - j.started_ms)});
    }
  }
  jobs.print(std::cout);
}

int run_list(Tool& tool, const DaemonsArgs& a) {
  Executor x(tool.options());
  const Fleet f = list_daemons(x, a.jobs);
  // What could not be read is said, and the rest listed all the same; only
  // a registry that cannot be read at all fails the command.
  for (const std::string& p : f.problems) say(p);
  if (!f.readable) return kExitServer;
  if (a.json) {
    json out = json::array();
    for (const DaemonInfo& d : f.daemons) out.push_back(daemon_json(d, f.server_time_ms, a.jobs));
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
  } else if (!f.daemons.empty()) {
    print_table(f, a.jobs);
  }
  if (f.daemons.empty()) say("no live daemons in " + std::string(kDaemonsKey));
  if (f.ghosts > 0) {
    say(std::to_string(f.ghosts) + " stopped beating without leaving (killed, or cut off from the server): left " +
        "out, and removed once their last beat is an hour old");
  }
  for (const DaemonInfo& d : f.daemons) {
    for (const std::string& p : d.problems) say("daemon " + d.id + ": " + p + " (another writer broke it)");
  }
  return kExitOk;
}

// What one daemon answered, in a line.
std::string answer_line(const DaemonAnswer& a, std::string_view signal) {
  if (!a.sent) return a.id + ": gone before the signal was sent";
  if (a.left && !a.answered) return a.id + ": left the registry without answering (it stopped some other way)";
  if (a.left) return a.id + ": stopped and left the registry (after " + span(a.waited_ms) + ")";
  const DaemonInfo& d = *a.last;
  const std::string jobs = std::to_string(d.busy) + (d.busy == 1 ? " job" : " jobs") + " still running";
  if (!a.answered) {
    return a.id + ": no answer within " + span(a.waited_ms) + " (state " + d.state + ", " + jobs + "); the " +
           std::string(signal) + " waits in its signals list until it beats again";
  }
  return a.id + ": " + d.state + " (answered in " + span(a.waited_ms) + "); " + jobs;
}

int run_signal(Tool& tool, const DaemonsArgs& a, std::string_view signal) {
  std::optional<std::chrono::milliseconds> timeout;
  if (!a.timeout.empty()) {
    const std::optional<std::int64_t> ms = daemon::parse_duration_ms(a.timeout);
    if (!ms || *ms < 1) {
      throw Error(ErrorKind::Invalid, "daemons", "--timeout '" + a.timeout + "' is not a duration (e.g. 10s, 2m)");
    }
    timeout = std::chrono::milliseconds(*ms);
  }
  if (a.all == !a.ids.empty()) {
    throw Error(ErrorKind::Invalid, "daemons", "name the daemons (ids from emq daemons) or say --all, not both");
  }
  Executor x(tool.options());
  const Fleet f = list_daemons(x, false);
  for (const std::string& p : f.problems) say(p);
  if (!f.readable) return kExitServer;
  std::vector<DaemonInfo> to;
  for (const std::string& id : a.ids) {
    auto it = std::find_if(f.daemons.begin(), f.daemons.end(), [&](const DaemonInfo& d) { return d.id == id; });
    if (it == f.daemons.end()) {
      say("no live daemon " + id + " in " + std::string(kDaemonsKey) + " (emq daemons lists them); nothing was sent");
      return kExitNotFound;
    }
    to.push_back(*it);
  }
  if (a.all) to = f.daemons;
  if (to.empty()) {
    say("no live daemons in " + std::string(kDaemonsKey) + "; nothing was sent");
    return kExitOk;
  }
  bool all_answered = true;
  for (const DaemonAnswer& answer : signal_and_wait(x, to, signal, timeout)) {
    std::cout << terminal_text(answer_line(answer, signal)) << '\n';
    all_answered = all_answered && answer.answered;
  }
  return all_answered ? kExitOk : kExitTimeout;
}

}  // namespace

void add_daemons(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<DaemonsArgs>();
  CLI::App* sub = app.add_subcommand("daemons", "every live daemon: its state, queues, busy/slots, last beat");
  sub->add_flag("--jobs", a->jobs, "also what each runs now");
  sub->add_flag("--json", a->json, "print a JSON array, one object per daemon");
  sub->footer(
      "A daemon beats every daemon.beat_s (5 s) into {emq}:daemons; one that has not beaten for 6 beats\n"
      "(killed, or cut off) is left out. emq daemons quiet|stop asks daemons through the registry.");
  // Unless a subcommand below was chosen (CLI11 may run either callback first).
  sub->callback([&tool, a] {
    if (!tool.run) tool.run = [&tool, a] { return run_list(tool, *a); };
  });
  for (std::string_view signal : {kSignalQuiet, kSignalStop}) {
    auto s = std::make_shared<DaemonsArgs>();
    const bool quiet = signal == kSignalQuiet;
    CLI::App* cmd = sub->add_subcommand(
        std::string(signal), quiet ? "stop claiming; running jobs finish; stay up" : "drain and exit, as on SIGTERM");
    cmd->add_option("daemons", s->ids, "daemon ids, as emq daemons lists them")->type_name("DAEMON...");
    cmd->add_flag("--all", s->all, "every live daemon");
    cmd->add_option("--timeout", s->timeout, "how long to wait for each answer (default: two of its beats + 5 s)")
        ->type_name("DURATION");
    cmd->footer(
        "Waits for each daemon's ack and prints what it answered and how many jobs it still runs.\n"
        "Exit 0 every daemon answered, 1 a daemon named is not alive (nothing sent), 5 one did not\n"
        "answer in time.");
    cmd->callback([&tool, s, signal] { tool.run = [&tool, s, signal] { return run_signal(tool, *s, signal); }; });
  }
}

}  // namespace echomq::cli
