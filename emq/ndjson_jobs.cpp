#include "ndjson_jobs.h"

#include <nlohmann/json.hpp>

#include "echomq/bytes.h"
#include "echomq/job_id.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "time_arg.h"

namespace echomq::cli {

namespace {

using nlohmann::json;

// unique, unique_mode and unique_for_ms of a line: the reason it is
// refused, or "".
std::string read_unique(const json& j, NdjsonJob& job) {
  if (!j.contains("unique")) {
    return j.contains("unique_mode") || j.contains("unique_for_ms")
               ? "\"unique_mode\" and \"unique_for_ms\" need \"unique\""
               : "";
  }
  UniqueKey u;
  if (!j["unique"].is_string() || !valid_unique_key(j["unique"].get<std::string>())) {
    return "\"unique\" must be 1-128 bytes of 0-9 A-Z a-z _ . : -";
  }
  u.key = j["unique"].get<std::string>();
  if (j.contains("unique_mode")) {
    u.mode = j["unique_mode"].is_string() ? unique_mode_from(j["unique_mode"].get<std::string>()) : std::nullopt;
    if (!u.mode) return "\"unique_mode\" must be finished, started, window or replace";
  }
  if (j.contains("unique_for_ms")) {
    const json& w = j["unique_for_ms"];
    if (!w.is_number_integer() || w.get<std::int64_t>() < 1 || w.get<std::int64_t>() > 1000000000000) {
      return "\"unique_for_ms\" must be an integer in 1..1000000000000";
    }
    u.for_ms = w.get<std::int64_t>();
    if (u.mode && u.mode != UniqueMode::Window) return "\"unique_for_ms\" is the window of unique_mode window only";
  } else if (u.mode == UniqueMode::Window) {
    return "unique_mode window needs \"unique_for_ms\"";
  }
  job.job.unique = std::move(u);
  return "";
}

// The reason a line is refused, or "" when it is a job.
std::string read_job(const json& j, NdjsonJob& job) {
  if (!j.is_object()) return "expected a JSON object such as {\"payload\": \"...\"}";
  for (const auto& [key, value] : j.items()) {
    if (key != "payload" && key != "payload_b64" && key != "id" && key != "lane" && key != "delay_ms" && key != "at" &&
        key != "unique" && key != "unique_mode" && key != "unique_for_ms" && key != "group") {
      return "unknown key \"" + key.substr(0, 40) +
             "\": use payload or payload_b64, and id, lane, delay_ms, at, unique, unique_mode, unique_for_ms, group";
    }
  }
  if (std::string why = read_unique(j, job); !why.empty()) return why;
  const bool text = j.contains("payload"), b64 = j.contains("payload_b64");
  if (text == b64) return "give exactly one of \"payload\" and \"payload_b64\"";
  if (text) {
    const json& p = j["payload"];
    job.payload = p.is_string() ? p.get<std::string>() : p.dump();
  } else if (!j["payload_b64"].is_string() || !base64_decode(j["payload_b64"].get<std::string>(), job.payload)) {
    return "\"payload_b64\" is not base64 (RFC 4648, standard alphabet, with padding)";
  }
  if (j.contains("id")) {
    if (!j["id"].is_string() || !valid_job_id(j["id"].get<std::string>())) {
      return "\"id\" must be JOB_ then 1-128 bytes of 0-9 A-Z a-z _ . : -";
    }
    job.id = j["id"].get<std::string>();
  }
  if (j.contains("lane")) {
    const json& l = j["lane"];
    if (!l.is_number_integer() || l.get<std::int64_t>() < kMinLane || l.get<std::int64_t>() > kMaxLane) {
      return "\"lane\" must be an integer in -1000..1000";
    }
    job.lane = l.get<int>();
  }
  if (j.contains("group")) {
    if (!j["group"].is_string() || !valid_group_name(j["group"].get<std::string>())) {
      return "\"group\" must be 1-128 bytes of 0-9 A-Z a-z _ . : -";
    }
    job.group = j["group"].get<std::string>();
  }
  if (j.contains("delay_ms") && j.contains("at")) return "give \"delay_ms\" or \"at\", not both";
  if (j.contains("delay_ms")) {
    const json& d = j["delay_ms"];
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0 || d.get<std::int64_t>() > kMaxDelayMs) {
      return "\"delay_ms\" must be an integer in 0.." + std::to_string(kMaxDelayMs);
    }
    job.delay_ms = d.get<std::int64_t>();
  }
  if (j.contains("at")) {
    const json& a = j["at"];
    std::optional<std::int64_t> at;
    if (a.is_number_unsigned()) at = a.get<std::int64_t>();
    if (a.is_string()) at = parse_time_ms(a.get<std::string>());
    if (!at) return "\"at\" must be an RFC 3339 time with a zone (2026-12-03T10:00:00Z) or epoch ms";
    job.at_ms = at;
  }
  return "";
}

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

NdjsonInput parse_ndjson(std::string_view text) {
  NdjsonInput in;
  std::size_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (blank(line)) continue;
    NdjsonJob job;
    job.line = number;
    std::string why;
    try {
      why = read_job(json::parse(line), job);
    } catch (const json::exception& e) {
      // "[json.exception.parse_error.101] parse error at ...": the part
      // after the bracket is what a person can act on.
      std::string what = e.what();
      const std::size_t bracket = what.find("] ");
      why = "not JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2));
    }
    if (!why.empty()) {
      in.errors.push_back({number, why});
      continue;
    }
    if (job.id.empty()) job.id = mint_job_id();
    in.jobs.push_back(std::move(job));
  }
  return in;
}

}  // namespace echomq::cli
