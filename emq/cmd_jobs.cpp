// emq jobs QUEUE [--state pending|active|delayed|dead|waiting] [--limit N] [--offset N] [--reverse] [--json]
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "echomq/jobs.h"
#include "bytes_text.h"
#include "output.h"
#include "tool.h"

namespace echomq::cli {

namespace {

constexpr std::int64_t kMaxPage = 10000;
constexpr std::size_t kPreviewBytes = 40;
constexpr std::size_t kErrorColumnBytes = 60;

struct JobsArgs {
  std::string queue;
  std::string state = "pending";
  std::int64_t limit = 20;
  std::int64_t offset = 0;
  bool reverse = false;
  bool json = false;
};

// The name of the set's score, per state, in JSON (as emq inspect names
// them) and as a column heading; pending's score is the lane, shown apart.
struct TimeColumn {
  const char* json_name;
  const char* heading;
};
std::optional<TimeColumn> time_column(JobState s) {
  switch (s) {
    case JobState::Active: return TimeColumn{"lease_deadline_ms", "DEADLINE"};
    case JobState::Delayed: return TimeColumn{"due_ms", "DUE"};
    case JobState::Dead: return TimeColumn{"died_ms", "DIED"};
    case JobState::Waiting: return TimeColumn{"waiting_since_ms", "SINCE"};
    case JobState::Pending: break;
  }
  return std::nullopt;
}

std::string payload_cell(const JobSummary& j) {
  if (!j.payload_head) return "(" + std::to_string(j.payload_bytes) + " bytes)";
  if (j.payload_bytes == 0) return "-";
  if (!j.payload_utf8 || !is_printable_text(*j.payload_head)) {
    return "(not text, " + std::to_string(j.payload_bytes) + " bytes)";
  }
  std::string cell = text_cell(j.payload_head, kPreviewBytes);
  if (static_cast<std::int64_t>(j.payload_head->size()) < j.payload_bytes && cell.rfind(" ...") == std::string::npos) {
    cell += " ...";
  }
  return cell;
}

void print_json(const QueueKeys& q, JobState state, const ListArgs& args, const JobPage& page) {
  const std::optional<TimeColumn> time = time_column(state);
  nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
  for (const JobSummary& j : page.jobs) {
    nlohmann::ordered_json o = {{"id", j.id}};
    o["state"] = j.row_found ? nlohmann::ordered_json(j.state) : nlohmann::ordered_json(nullptr);
    if (time) o[time->json_name] = j.score;
    o["lane"] = state == JobState::Pending ? j.score : j.lane;
    o["attempts"] = j.attempts;
    o["failures"] = j.failures;
    put_bytes_or_null(o, "error", j.error);
    o["payload_bytes"] = j.payload_bytes;
    if (!j.payload_head) {
      o["payload_preview"] = nullptr;
    } else if (j.payload_utf8) {
      o["payload_preview"] = *j.payload_head;
    } else {
      o["payload_preview_b64"] = base64_encode(*j.payload_head);
    }
    jobs.push_back(std::move(o));
  }
  nlohmann::ordered_json out = {{"queue", q.queue},
                                {"state", to_string(state)},
                                {"order", args.order == ListOrder::Ascending ? "ascending" : "descending"},
                                {"total", page.total},
                                {"offset", args.offset},
                                {"jobs", std::move(jobs)}};
  std::cout << out.dump(2) << '\n';
}

void print_table(JobState state, const JobPage& page) {
  const std::optional<TimeColumn> time = time_column(state);
  std::vector<Table::Column> columns = {{"ID", false}};
  if (time) columns.push_back({time->heading, false});
  for (const char* name : {"LANE", "ATTEMPTS", "FAILURES"}) columns.push_back({name, true});
  columns.push_back({"PAYLOAD", false});
  columns.push_back({"ERROR", false});
  Table t(columns);
  for (const JobSummary& j : page.jobs) {
    std::vector<std::string> row = {j.id};
    if (time) row.push_back(iso_time(j.score));
    if (!j.row_found) {
      // Settled or cancelled between the two reads.
      row.insert(row.end(), {"-", "-", "-", "(gone)", "-"});
      t.add(std::move(row));
      continue;
    }
    row.push_back(std::to_string(state == JobState::Pending ? j.score : j.lane));
    row.push_back(std::to_string(j.attempts));
    row.push_back(std::to_string(j.failures));
    row.push_back(payload_cell(j));
    row.push_back(text_cell(j.error, kErrorColumnBytes));
    t.add(std::move(row));
  }
  t.print(std::cout);
}

int run_jobs(Tool& tool, const JobsArgs& a) {
  QueueKeys q(a.queue);
  std::optional<JobState> state = job_state_from(a.state);
  if (!state) {
    throw Error(ErrorKind::Invalid, "jobs",
                "--state " + a.state + " is not a state: use pending, active, delayed, dead or waiting");
  }
  if (a.limit <= 0 || a.limit > kMaxPage) {
    throw Error(ErrorKind::Invalid, "jobs",
                "--limit " + std::to_string(a.limit) + " is out of range: use 1.." + std::to_string(kMaxPage));
  }
  if (a.offset < 0) throw Error(ErrorKind::Invalid, "jobs", "--offset " + std::to_string(a.offset) + " must be >= 0");

  ListArgs args;
  args.state = *state;
  args.offset = a.offset;
  args.limit = a.limit;
  args.order = default_order(*state);
  if (a.reverse) args.order = args.order == ListOrder::Ascending ? ListOrder::Descending : ListOrder::Ascending;
  args.preview_bytes = a.json ? 200 : kPreviewBytes;

  Executor x(tool.options());
  const JobPage page = list_jobs(x, q, args);
  if (a.json) {
    print_json(q, *state, args, page);
    return kExitOk;
  }
  const std::string name = to_string(*state);
  if (page.jobs.empty()) {
    say(page.total == 0 ? "no " + name + " jobs in queue " + q.queue
                        : "no " + name + " jobs at offset " + std::to_string(a.offset) + "; queue " + q.queue +
                              " has " + std::to_string(page.total));
    return kExitOk;
  }
  print_table(*state, page);
  const std::int64_t last = a.offset + static_cast<std::int64_t>(page.jobs.size());
  if (a.offset > 0 || last < page.total) {
    std::string note = "showing " + std::to_string(a.offset + 1) + "-" + std::to_string(last) + " of " +
                       std::to_string(page.total) + " " + name + " jobs";
    if (last < page.total) note += "; --offset " + std::to_string(last) + " shows the next";
    say(note);
  }
  return kExitOk;
}

}  // namespace

void add_jobs(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<JobsArgs>();
  CLI::App* sub = app.add_subcommand("jobs", "the jobs of one state of a queue, a page at a time");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("--state", a->state, "pending (default), active, delayed, dead or waiting")->type_name("STATE");
  add_number_option(sub, "--limit", a->limit, "jobs per page, 1..10000 (default 20)")->type_name("N");
  add_number_option(sub, "--offset", a->offset, "skip the first N in the order shown (default 0)")->type_name("N");
  sub->add_flag("--reverse", a->reverse, "the other order (e.g. oldest deaths first)");
  sub->add_flag("--json", a->json, "print one JSON object: total, offset and the page of jobs");
  sub->footer(
      "Order: pending in claim order (lane, then id); active by lease deadline and delayed by due time,\n"
      "soonest first; dead newest death first; waiting (parents of flows) longest waiting first. Pages are read by "
      "index, so any page of any size of set\n"
      "answers at once. Payloads are previewed (not read when over 64 KiB); emq inspect shows one whole.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_jobs(tool, *a); }; });
}

}  // namespace echomq::cli
