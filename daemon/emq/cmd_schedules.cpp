// emq schedules [QUEUE...] [--json] / emq schedules fire QUEUE NAME
//
// What every daemon published to emq:{q}:schedules, beside the marker in
// emq:{q}:cron: the last fire and its job, the next fire and the ticks
// missed since the last fire, all by the server's clock. `fire` enqueues one
// fire now through enqueue_cron, marked with the server's time.
#include <date/date.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/transitions.h"
#include "emq/output.h"
#include "emq/tool.h"
#include "schedule/next_tick.h"

namespace echomq::cli {

namespace {

using daemon::TickRule;

struct SchedulesArgs {
  std::vector<std::string> queues;
  bool json = false;
};

struct FireArgs {
  std::string queue;
  std::string name;
  std::string payload;
};

struct ScheduleView {
  std::string queue;
  std::string name;
  nlohmann::json definition;
  std::optional<std::int64_t> last_fire_ms;
  std::string last_job;
  std::optional<std::int64_t> next_fire_ms;
  std::int64_t missed = 0;
  std::string problem;  // a definition or marker this tool cannot read
};

std::string iso(std::int64_t ms) {
  return date::format("%FT%TZ", date::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(ms)));
}

std::optional<TickRule> rule_of(const nlohmann::json& d) {
  if (d.contains("every_ms") && d["every_ms"].is_number_integer() && d["every_ms"].get<std::int64_t>() > 0)
    return TickRule::every(d["every_ms"].get<std::int64_t>());
  if (d.contains("cron") && d["cron"].is_string()) {
    std::string zone = d.value("timezone", std::string("UTC"));
    return TickRule::cron(daemon::parse_cron(d["cron"].get<std::string>()), daemon::find_zone(zone));
  }
  return std::nullopt;
}

std::map<std::string, std::string> hash(Executor& x, const std::string& key) {
  std::map<std::string, std::string> out;
  Reply r = x.command({"HGETALL", key});
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
  return out;
}

std::vector<ScheduleView> read_queue(Executor& x, const QueueKeys& q, std::int64_t now) {
  std::vector<ScheduleView> out;
  std::map<std::string, std::string> markers = hash(x, q.cron);
  for (const auto& [name, text] : hash(x, q.schedules)) {
    ScheduleView v{q.queue, name};
    v.definition = nlohmann::json::parse(text, nullptr, false);
    if (auto m = markers.find(name); m != markers.end()) {
      std::size_t colon = m->second.find(':');
      try {
        v.last_fire_ms = std::stoll(m->second.substr(0, colon));
        v.last_job = colon == std::string::npos ? "" : m->second.substr(colon + 1);
      } catch (const std::exception&) {
        v.problem = "marker '" + m->second + "' is not <fire_ms>:<job id>";
      }
    }
    try {
      std::optional<TickRule> rule = v.definition.is_discarded() ? std::nullopt : rule_of(v.definition);
      if (!rule) {
        v.problem = "definition is not one this tool reads: " + text;
      } else {
        v.next_fire_ms = rule->next_after(now);
        // Ticks since the last fire that can no longer fire (past grace).
        std::int64_t grace = v.definition.value("misfire_grace_ms", std::int64_t{60000});
        if (v.last_fire_ms) {
          if (auto due = rule->latest_between(*v.last_fire_ms, now - grace, 1000000)) v.missed = due->earlier + 1;
        }
      }
    } catch (const std::exception& e) {
      v.problem = e.what();
    }
    out.push_back(std::move(v));
  }
  return out;
}

void print_table(const std::vector<ScheduleView>& all) {
  std::cout << "QUEUE\tNAME\tDEFINITION\tLAST FIRE\tJOB\tNEXT FIRE\tMISSED\n";
  for (const ScheduleView& v : all) {
    std::string def = v.definition.is_discarded() ? "?" : v.definition.value("cron", "");
    if (def.empty() && !v.definition.is_discarded() && v.definition.contains("every_ms"))
      def = "every " + std::to_string(v.definition["every_ms"].get<std::int64_t>()) + " ms";
    else if (!v.definition.is_discarded())
      def += " " + v.definition.value("timezone", std::string("UTC"));
    std::cout << v.queue << '\t' << v.name << '\t' << def << '\t' << (v.last_fire_ms ? iso(*v.last_fire_ms) : "-")
              << '\t' << (v.last_job.empty() ? "-" : v.last_job) << '\t'
              << (v.next_fire_ms ? iso(*v.next_fire_ms) : "-") << '\t' << v.missed << '\n';
  }
}

void print_json(const std::vector<ScheduleView>& all) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ScheduleView& v : all) {
    nlohmann::ordered_json o;
    o["queue"] = v.queue;
    o["name"] = v.name;
    o["definition"] = v.definition.is_discarded() ? nlohmann::json() : v.definition;
    o["last_fire_ms"] = v.last_fire_ms ? nlohmann::json(*v.last_fire_ms) : nlohmann::json();
    o["last_job"] = v.last_job.empty() ? nlohmann::json() : nlohmann::json(v.last_job);
    o["next_fire_ms"] = v.next_fire_ms ? nlohmann::json(*v.next_fire_ms) : nlohmann::json();
    o["missed"] = v.missed;
    if (!v.problem.empty()) o["problem"] = v.problem;
    out.push_back(o);
  }
  std::cout << out.dump(2) << '\n';
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
    for (ScheduleView& v : read_queue(x, q, now)) all.push_back(std::move(v));
  }
  if (a.json) {
    print_json(all);
  } else if (all.empty()) {
    say("no schedules are published in these queues (a daemon publishes its schedules when it starts)");
  } else {
    print_table(all);
  }
  for (const ScheduleView& v : all) {
    if (!v.problem.empty()) say("schedule " + v.name + " of queue " + v.queue + ": " + v.problem);
  }
  return kExitOk;
}

int run_fire(Tool& tool, const FireArgs& a) {
  QueueKeys q(a.queue);
  Executor x(tool.options());
  Reply text = x.command({"HGET", q.schedules, a.name});
  if (text.type != Reply::Type::String) {
    say("no schedule " + a.name + " is published in queue " + q.queue + " (see emq schedules " + q.queue + ")");
    return kExitNotFound;
  }
  nlohmann::json d = nlohmann::json::parse(text.str, nullptr, false);
  CronFire fire{a.name, x.server_time_ms(), d.is_discarded() ? 0 : d.value("lane", std::int64_t{0}),
                !d.is_discarded() && d.value("overlap", std::string("allow")) == "skip"};
  const std::string id = mint_job_id();
  switch (enqueue_cron(x, q, id, a.payload, fire)) {
    case CronFireResult::Enqueued:
      std::cout << id << '\n';
      return kExitOk;
    case CronFireResult::Skipped:
      say("not fired: overlap is skip and the last fire's job is unfinished");
      return kExitRunning;
    case CronFireResult::Already:
      say("not fired: the marker already holds a fire at or after now");
      return kExitNotFound;
  }
  return kExitServer;
}

}  // namespace

void add_schedules(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<SchedulesArgs>();
  CLI::App* sub = app.add_subcommand("schedules", "every published schedule: definition, last fire and job, next fire");
  sub->add_option("queues", a->queues, "the queues; default: every queue in {emq}:queues")->type_name("QUEUE...");
  sub->add_flag("--json", a->json, "print a JSON array, one object per schedule");
  sub->footer("Times are UTC, by the server's clock. MISSED: ticks since the last fire that are past\n"
              "misfire_grace and so will never fire.");
  sub->callback([&tool, a, sub] {
    if (sub->get_subcommands().empty()) tool.run = [&tool, a] { return run_schedules(tool, *a); };
  });

  auto f = std::make_shared<FireArgs>();
  CLI::App* fire = sub->add_subcommand("fire", "enqueue one fire now, through enqueue_cron (marked with the server's time)");
  fire->add_option("queue", f->queue, "the queue")->required()->type_name("QUEUE");
  fire->add_option("name", f->name, "the schedule")->required()->type_name("NAME");
  fire->add_option("--payload", f->payload, "the job's payload (the published definition holds none); default empty");
  fire->footer("Prints the job id. Exit 1 no such schedule (or the marker is ahead), 4 overlap: skip held it.");
  fire->callback([&tool, f] { tool.run = [&tool, f] { return run_fire(tool, *f); }; });
}

}  // namespace echomq::cli
