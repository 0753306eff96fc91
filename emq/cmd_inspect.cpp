// emq inspect QUEUE ID [--json]
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "echomq/job_id.h"
#include "echomq/stats.h"
#include "echomq/unique.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"
#include "output.h"
#include "tool.h"
#include "trace_url.h"

namespace echomq::cli {

namespace {

// Text mode shows this much of a payload, result or error; --json shows all.
constexpr std::size_t kShownBytes = 1024;
constexpr int kLabelWidth = 13;

struct InspectArgs {
  std::string queue;
  std::string id;
  bool json = false;
  std::string trace_url;  // --trace-url's template, "" when not given
};

std::optional<std::string_view> field(const JobRow& row, const std::string& name) {
  auto it = row.fields.find(name);
  if (it == row.fields.end()) return std::nullopt;
  return std::string_view(it->second);
}

// Fields absent from a row are 0: @enqueue writes only state, attempts and
// payload, and later transitions add the rest.
std::int64_t int_field(const JobRow& row, const std::string& name) {
  auto v = field(row, name);
  return v ? whole_number(*v).value_or(0) : 0;
}

// Where the state's set says the job stands in time: the due time of a
// delayed job, the lease deadline of an active one, the death of a dead one.
struct SetTime {
  const char* json_name;
  const char* label;
  std::int64_t ms;
};

std::optional<SetTime> set_time(Executor& x, const QueueKeys& q, const std::string& id, std::string_view state) {
  SetTime t{};
  std::string key;
  if (state == "delayed") {
    t = {"due_ms", "due", 0};
    key = q.delayed;
  } else if (state == "active") {
    t = {"lease_deadline_ms", "lease until", 0};
    key = q.active;
  } else if (state == "dead") {
    t = {"died_ms", "died", 0};
    key = q.dead;
  } else {
    return std::nullopt;
  }
  Reply r = x.command({"ZSCORE", key, id});
  if (r.is_error()) throw error_from_reply("inspect", r.str);
  if (r.type != Reply::Type::String) return std::nullopt;
  const std::optional<double> score = decimal_number(r.str);
  if (!score) return std::nullopt;  // inf, put there by another writer
  t.ms = static_cast<std::int64_t>(*score);
  return t;
}

void print_label(const std::string& label, const std::string& value) {
  std::string pad(label.size() < kLabelWidth ? kLabelWidth - label.size() : 1, ' ');
  std::cout << label << pad << terminal_text(value) << '\n';
}

// Bytes as a header line ("11 bytes, text") and then the bytes themselves,
// indented, cut to kShownBytes with a note saying so.
void print_bytes(const std::string& label, std::optional<std::string_view> bytes) {
  if (!bytes) return print_label(label, "(none)");
  const std::string size = std::to_string(bytes->size()) + (bytes->size() == 1 ? " byte" : " bytes");
  if (bytes->empty()) return print_label(label, size);
  const bool text = is_printable_text(*bytes);
  std::string shown =
      text ? std::string(utf8_prefix(*bytes, kShownBytes)) : base64_encode(bytes->substr(0, kShownBytes / 4 * 3));
  const std::size_t shown_bytes = text ? shown.size() : std::min(bytes->size(), kShownBytes / 4 * 3);
  std::string head = size + (text ? ", text" : ", not text: shown as base64");
  if (shown_bytes < bytes->size()) {
    head += "; truncated to the first " + std::to_string(shown_bytes) + " bytes (--json shows all)";
  }
  print_label(label, head);
  if (!text) {
    for (std::size_t i = 0; i < shown.size(); i += 76) std::cout << "  " << shown.substr(i, 76) << '\n';
    return;
  }
  std::size_t start = 0;
  while (start < shown.size()) {
    std::size_t nl = shown.find('\n', start);
    std::size_t end = nl == std::string::npos ? shown.size() : nl;
    std::cout << "  " << terminal_text(std::string_view(shown).substr(start, end - start)) << '\n';
    start = end + 1;
  }
}

// Only for a row with a traceparent: its trace id, and where to see it.
void print_trace(const JobRow& row, const std::string& tmpl) {
  const std::optional<JobTrace> t = job_trace(row, tmpl);
  if (!t) return;
  if (!t->problem.empty()) return print_label("trace", "none: the row's traceparent is not W3C (" + t->problem + ")");
  print_label("trace", t->trace_id);
  if (!t->url.empty()) print_label("trace url", t->url);
}

// The row's unique key, its mode and who holds it now; none without a key.
std::optional<UniqueLock> unique_of(Executor& x, const QueueKeys& q, const JobRow& row) {
  const std::optional<std::string_view> key = field(row, "unique");
  if (!key || !valid_unique_key(*key)) return std::nullopt;
  return read_unique_lock(x, q, *key);
}

std::string unique_text(const JobRow& row, const UniqueLock& l) {
  std::string text = l.key + ", mode " + std::string(field(row, "unique_mode").value_or("finished"));
  if (auto window = field(row, "unique_for_ms")) text += " " + std::string(*window) + " ms";
  if (l.held && l.points_at == row.id) return text + "; holds the key";
  return text + "; the key is " + describe(l);
}

void print_text(const QueueKeys& q, const JobRow& row, const std::optional<SetTime>& when,
                const std::optional<UniqueLock>& unique, const std::string& tmpl) {
  print_label("queue", q.queue);
  print_label("id", row.id);
  if (auto minted = minted_at_ms(row.id)) print_label("minted", iso_time(static_cast<std::int64_t>(*minted)));
  print_label("state", std::string(field(row, "state").value_or("unknown")));
  if (when) print_label(when->label, iso_time(when->ms));
  for (const char* name : {"attempts", "lease_epoch", "failures", "lane"}) {
    print_label(name, std::to_string(int_field(row, name)));
  }
  print_trace(row, tmpl);
  if (unique) print_label("unique", unique_text(row, *unique));
  print_bytes("error", field(row, "error"));
  if (auto progress = field(row, "progress")) print_bytes("progress", progress);
  print_bytes("payload", field(row, "payload"));
  print_bytes("result", field(row, "result"));
}

void print_json(const QueueKeys& q, const JobRow& row, const std::optional<SetTime>& when,
                const std::optional<UniqueLock>& unique, const std::string& tmpl) {
  nlohmann::ordered_json j = {{"queue", q.queue}, {"id", row.id}};
  if (auto minted = minted_at_ms(row.id)) j["minted_ms"] = *minted;
  j["state"] = std::string(field(row, "state").value_or("unknown"));
  if (when) j[when->json_name] = when->ms;
  for (const char* name : {"attempts", "lease_epoch", "failures", "lane"}) j[name] = int_field(row, name);
  const std::optional<JobTrace> t = job_trace(row, tmpl);
  j["trace_id"] = t && t->problem.empty() ? nlohmann::ordered_json(t->trace_id) : nullptr;
  if (t && !t->problem.empty()) j["traceparent_problem"] = t->problem;
  if (!tmpl.empty()) j["trace_url"] = t && !t->url.empty() ? nlohmann::ordered_json(t->url) : nullptr;
  if (unique) {
    j["unique"] = {
        {"key", unique->key},
        {"mode", std::string(field(row, "unique_mode").value_or("finished"))},
        {"for_ms", field(row, "unique_for_ms") ? nlohmann::ordered_json(int_field(row, "unique_for_ms")) : nullptr},
        {"holder", unique->held ? nlohmann::ordered_json(unique->points_at) : nullptr}};
  }
  for (const char* name : {"error", "progress", "payload", "result"}) put_bytes_or_null(j, name, field(row, name));
  j["payload_bytes"] = field(row, "payload").value_or("").size();
  std::cout << json_text(j, 2) << '\n';
}

int run_inspect(Tool& tool, const InspectArgs& a) {
  if (std::string problem = trace_url_problem(a.trace_url); !a.trace_url.empty() && !problem.empty()) {
    say("--trace-url: " + problem);
    return kExitUsage;
  }
  QueueKeys q(a.queue);
  check_wire_gate(a.id);  // a listed id may be any shape a peer wrote
  Executor x(tool.options());
  std::optional<JobRow> row = inspect(x, q, a.id);
  if (!row) {
    say_no_job(q.queue, a.id);
    return kExitNotFound;
  }
  std::optional<SetTime> when = set_time(x, q, a.id, field(*row, "state").value_or(""));
  const std::optional<UniqueLock> unique = unique_of(x, q, *row);
  if (a.json) {
    print_json(q, *row, when, unique, a.trace_url);
  } else {
    print_text(q, *row, when, unique, a.trace_url);
  }
  return kExitOk;
}

}  // namespace

void add_inspect(CLI::App& app, Tool& tool) {
  auto a = std::make_shared<InspectArgs>();
  CLI::App* sub = app.add_subcommand("inspect", "show the row of one job; exit 1 when there is none");
  sub->add_option("queue", a->queue, "the queue")->required()->type_name("QUEUE");
  sub->add_option("id", a->id, "the job id (JOB_...)")->required()->type_name("ID");
  sub->add_flag("--json", a->json, "print one JSON object, with the whole payload and result");
  sub->add_option("--trace-url", a->trace_url,
                  "the job's trace in your tracing tool: a URL with {trace_id} "
                  "(https://tracing.example/trace/{trace_id})")
      ->type_name("TEMPLATE");
  sub->footer(
      "Text mode shows at most 1024 bytes of the payload, result and error, and says when it cut.\n"
      "Bytes that are not UTF-8 text are shown as base64; in --json such a field is named\n"
      "payload_b64 (result_b64, error_b64) instead of payload. A job with a trace context\n"
      "(a traceparent in its row) shows its trace id, and with --trace-url its link.");
  sub->callback([&tool, a] { tool.run = [&tool, a] { return run_inspect(tool, *a); }; });
}

}  // namespace echomq::cli
