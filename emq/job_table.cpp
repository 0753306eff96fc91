#include "job_table.h"

#include <iostream>
#include <optional>

#include "echomq/errors.h"
#include "bytes_text.h"
#include "output.h"

namespace echomq::cli {

namespace {

constexpr std::size_t kPreviewBytes = 40;
constexpr std::size_t kErrorColumnBytes = 60;

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

}  // namespace

void print_job_table(JobState state, const std::vector<JobSummary>& jobs) {
  const std::optional<TimeColumn> time = time_column(state);
  std::vector<Table::Column> columns = {{"ID", false}};
  if (time) columns.push_back({time->heading, false});
  for (const char* name : {"LANE", "ATTEMPTS", "FAILURES"}) columns.push_back({name, true});
  columns.push_back({"PAYLOAD", false});
  columns.push_back({"ERROR", false});
  Table t(columns);
  for (const JobSummary& j : jobs) {
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

nlohmann::ordered_json job_json(JobState state, const JobSummary& j) {
  const std::optional<TimeColumn> time = time_column(state);
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
  return o;
}

JobState state_option(const std::string& name, const char* op) {
  std::optional<JobState> state = job_state_from(name);
  if (!state) {
    throw Error(ErrorKind::Invalid, op,
                "--state " + name + " is not a state: use pending, active, delayed, dead or waiting");
  }
  return *state;
}

}  // namespace echomq::cli
