// emq schedules [QUEUE...] [--json] / emq schedules fire QUEUE NAME
//
// What every daemon published to emq:{q}:schedules, beside the marker in
// emq:{q}:cron: the last fire and its job, the next fire and the ticks
// missed since the last fire, all by the server's clock. `fire` enqueues one
// fire now through enqueue_cron, marked with the server's time.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "bytes_text.h"
#include "output.h"
#include "schedule_fire.h"
#include "schedule_view.h"
#include "tool.h"

namespace echomq::cli {

namespace {

struct SchedulesArgs {
  std::vector<std::string> queues;
  bool json = false;
};

struct FireArgs {
  std::string queue;
  std::string name;
  std::string payload;
};

void print_table(const std::vector<ScheduleView>& all) {
  Table t({{"QUEUE", false},
           {"NAME", false},
           {"DEFINITION", false},
           {"GROUP", false},
           {"LAST FIRE", false},
           {"JOB", false},
           {"NEXT FIRE", false},
           {"MISSED", true}});
  for (const ScheduleView& v : all) {
    t.add({v.queue, v.name, describe_definition(v), v.group.empty() ? "-" : v.group,
           v.last_fire_ms ? iso_time(*v.last_fire_ms) : "-", v.last_job.empty() ? "-" : v.last_job,
           v.next_fire_ms ? iso_time(*v.next_fire_ms) : "-", std::to_string(v.missed)});
  }
  t.print(std::cout);
}

void print_json(const std::vector<ScheduleView>& all) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ScheduleView& v : all) out.push_back(schedule_json(v));
  std::cout << json_text(out, 2) << '\n';
}

// "schedule NAME of queue Q", the name in hex when it is not text.
std::string schedule_words(const std::string& queue, const std::string& name) {
  if (name.empty()) return "queue " + queue;
  return "schedule " + (is_printable_text(name) ? name : "(hex " + hex_encode(name) + ")") + " of queue " + queue;
}

int run_schedules(Tool& tool, const SchedulesArgs& a) {
  std::vector<QueueKeys> keys;
  for (const std::string& name : a.queues) keys.emplace_back(name);
  Executor x(tool.options());
  if (keys.empty()) {
    for (const std::string& name : known_queues(x)) {
      if (valid_queue_name(name)) keys.emplace_back(name);
    }
  }
  const std::int64_t now = x.server_time_ms();
  std::vector<ScheduleView> all;
  for (const QueueKeys& q : keys) {
    for (ScheduleView& v : read_schedules(x, q, now)) all.push_back(std::move(v));
  }
  if (a.json) {
    print_json(all);
  } else if (all.empty()) {
    say("no schedules are published in these queues (a daemon publishes its schedules when it starts)");
  } else {
    print_table(all);
  }
  for (const ScheduleView& v : all) {
    if (!v.problem.empty()) say(schedule_words(v.queue, v.name) + ": " + v.problem);
  }
  return kExitOk;
}

int run_fire(Tool& tool, const FireArgs& a) {
  QueueKeys q(a.queue);
  Executor x(tool.options());
  const FireOutcome r = fire_schedule(x, q, a.name, a.payload);
  switch (r.kind) {
    case FireOutcome::Kind::Fired: std::cout << r.job_id << '\n'; return kExitOk;
    case FireOutcome::Kind::NoSchedule:
      say("no schedule " + a.name + " is published in queue " + q.queue + " (see emq schedules " + q.queue + ")");
      return kExitNotFound;
    case FireOutcome::Kind::Broken:
      say(schedule_words(q.queue, a.name) + ": not fired: its published definition " + r.problem +
          ". Another writer changed " + q.schedules + "; a daemon that runs the schedule publishes it again when it " +
          "starts");
      return kExitServer;
    case FireOutcome::Kind::Skipped:
      say("not fired: overlap is skip and the last fire's job is unfinished");
      return kExitRunning;
    case FireOutcome::Kind::MarkerAhead:
      say("not fired: the marker already holds a fire at or after now");
      return kExitNotFound;
    case FireOutcome::Kind::KeyHeld:
      std::cout << terminal_text(r.job_id) << '\n';
      say("not fired: the schedule's unique key is held by " + r.job_id + " (" + r.problem + "); the tick is taken");
      return kExitRunning;
  }
  return kExitServer;
}

}  // namespace

void add_schedules(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<SchedulesArgs>();
  CLI::App* sub = app.add_subcommand("schedules", "every published schedule: definition, last fire and job, next fire");
  add_queue_list_options(sub, a->queues, a->json, "schedule");
  sub->footer(
      "Times are UTC, by the server's clock. GROUP: the group its fires' jobs go to (- for none).\n"
      "MISSED: ticks since the last fire that are past misfire_grace and so will never fire. A marker\n"
      "ahead of the server's clock holds its schedule until then (--json: held_until_ms), said on\n"
      "stderr with what is broken in any schedule.");
  sub->callback([&tool, a, sub] {
    if (sub->get_subcommands().empty()) tool.run = [&tool, a] { return run_schedules(tool, *a); };
  });

  auto f = std::make_shared<FireArgs>();
  CLI::App* fire =
      sub->add_subcommand("fire", "enqueue one fire now, through enqueue_cron (marked with the server's time)");
  fire->add_option("queue", f->queue, "the queue")->required()->type_name("QUEUE");
  fire->add_option("name", f->name, "the schedule")->required()->type_name("NAME");
  fire->add_option("--payload", f->payload, "the job's payload (the published definition holds none); default empty");
  fire->footer(
      "Prints the job id. Exit 1 no such schedule (or the marker is ahead), 3 its published definition is\n"
      "broken (another writer's: said on stderr, nothing fired), 4 overlap: skip held it.");
  fire->callback([&tool, f] { tool.run = [&tool, f] { return run_fire(tool, *f); }; });
}

}  // namespace echomq::cli
