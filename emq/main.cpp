// emq: the operator and producer tool. Parses the command line, runs the
// one command chosen, and turns every failure into a message on stderr and
// an exit code scripts can rely on (emq/output.h, docs/cli.md).
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "echomq/errors.h"
#include "echomq/keyspace.h"
#include "output.h"
#include "tool.h"

// daemon/CMakeLists.txt passes the project version to emqd_core; the tool
// is built apart from it, so it falls back to the version of this tree.

namespace echomq::cli {
namespace {

constexpr const char* kFooter = R"(Server:
  --url or EMQ_URL: valkey://[user[:password]@]host[:port][/db], redis://...,
  valkeys://... or rediss://... (TLS, the server's certificate always
  verified: --tls-ca, --tls-cert, --tls-key, --tls-server-name or
  EMQ_TLS_CA, EMQ_TLS_CERT, EMQ_TLS_KEY, EMQ_TLS_SERVER_NAME),
  or unix://[user[:password]@]/path/to/socket[?db=N].
  EMQ_PASSWORD, when set, is the password (it wins over one in the URL).
  --executor or EMQ_EXECUTOR: auto, scripted or native (the emq module's
  EMQ.* commands; native fails when the server has not loaded it).
  Prefer EMQ_PASSWORD or EMQ_URL to a password in --url: the command line
  of a process is visible to every user (ps). emq never prints the password.

Exit codes:
  0  done
  1  not found: no such job (inspect, cancel, wait), a job named is not
     dead (dead retry|delete), a job that died (wait), a daemon named is
     not alive (daemons quiet|stop), or "no" at a prompt
  2  usage: bad arguments, queue name, job id, lane, time or URL; or a
     purge without --yes when stdin is not a terminal
  3  the server is unreachable, refused the login, or answered an error
  4  refused: the job is running (cancel), the queue holds jobs (forget)
  5  wait: the job had not ended within --timeout; daemons quiet|stop: a
     daemon did not answer in time

Coming from Sidekiq / BullMQ / asynq (their words, ours):
  Sidekiq             BullMQ               asynq              emq
  Enqueued            waiting              pending            pending: emq jobs Q
  Busy                active               active             active: emq jobs Q --state active
  Scheduled, Retries  delayed              scheduled, retry   delayed: emq enqueue --at T | --delay-ms N
  Dead                failed               archived           dead: emq dead list Q
  queue weights       priority             queue priority     lane: emq enqueue --lane N (lower first)
  Retry Now           job.retry()          task run           emq dead retry Q ID
  Delete              job.remove()         task delete        emq cancel Q ID, emq dead delete Q ID
  Delete All          drain(), clean()     task deleteall     emq purge Q --state STATE
  -                   waitUntilFinished()  -                  emq wait Q ID
  -                   obliterate()         queue rm           emq forget Q (once it is empty)
  Busy (processes)    -                    servers            emq daemons --jobs
  Quiet, Stop         -                    -                  emq daemons quiet|stop ID

Run 'emq COMMAND --help' for the options of one command.)";

// What an operator can do about each kind of failure.
std::string hint(const Error& e) {
  const std::string what = e.what();
  if (what.find("NOAUTH") != std::string::npos) {
    return "; the server wants a password: set EMQ_PASSWORD or put it in the URL";
  }
  if (e.op() == "url") return " (fix --url or EMQ_URL)";
  if (e.op() == "tls") return "";  // the message names the flag to change
  switch (e.kind()) {
    case ErrorKind::Io:
    case ErrorKind::Timeout: return " (set the server with --url or EMQ_URL)";
    case ErrorKind::ReadOnly: return "; the server refuses writes for now (a replica, or loading): try again later";
    default: return "";
  }
}

int fail(const Error& e) {
  say(std::string(e.what()) + hint(e));
  switch (e.kind()) {
    case ErrorKind::Invalid:  // our own check of an argument
    case ErrorKind::Kind:     // the server's checks of the same
    case ErrorKind::Arg: return kExitUsage;
    default: return kExitServer;
  }
}

int run(int argc, char** argv) {
  Tool tool;
  CLI::App app{"emq: the EchoMQ operator and producer tool (wire " + std::string(kWireVersion) + ")", "emq"};
  app.set_version_flag("--version", std::string("emq ") + EMQ_VERSION + " (wire " + std::string(kWireVersion) + ")");
  add_server_options(app, tool);
  // Lets the server options come after the command too: emq stats --url ...
  app.fallthrough();

  add_enqueue(app, tool);
  add_flow(app, tool);
  add_stats(app, tool);
  add_schedules(app, tool);
  add_inspect(app, tool);
  add_jobs(app, tool);
  add_search(app, tool);
  add_dead(app, tool);
  add_purge(app, tool);
  add_promote(app, tool);
  add_wait(app, tool);
  add_events(app, tool);
  add_control(app, tool);
  add_daemons(app, tool);
  add_limit(app, tool);
  add_groups(app, tool);
  add_queues(app, tool);
  add_web(app, tool);
  // Set after the subcommands, which would inherit it otherwise.
  app.footer(kFooter);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --version
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    say(std::string(e.what()) + " (see emq --help)");
    return kExitUsage;
  }

  if (!tool.run) {
    // "emq" or "emq dead" alone: show what could follow.
    const CLI::App* at = &app;
    while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
    std::cerr << at->help(at == &app ? "" : "emq");
    say("a command is required (see above)");
    return kExitUsage;
  }
  try {
    return tool.run();
  } catch (const Error& e) {
    return fail(e);
  } catch (const std::exception& e) {
    say(std::string("unexpected failure: ") + e.what());
    return kExitServer;
  }
}

}  // namespace
}  // namespace echomq::cli

int main(int argc, char** argv) { return echomq::cli::run(argc, argv); }
