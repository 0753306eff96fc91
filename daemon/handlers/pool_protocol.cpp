#include "handlers/pool_protocol.h"

#include <nlohmann/json.hpp>

namespace echomq::daemon {
namespace {

// How much of a bad line an error message quotes.
constexpr std::size_t kQuoteBytes = 120;

// The start of a line, as a JSON string: safe in a log line and in the
// job's error text whatever the bytes were.
std::string quote_start(std::string_view line) {
  std::string start(line.substr(0, kQuoteBytes));
  std::string quoted = nlohmann::json(start).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return line.size() > kQuoteBytes ? quoted + "…" : quoted;
}

std::string type_name(const nlohmann::json& v) { return v.type_name(); }

void put_bytes(nlohmann::ordered_json& obj, const std::string& name, const std::string& bytes) {
  if (is_utf8(bytes)) {
    obj[name] = bytes;
  } else {
    obj[name + "_b64"] = base64_encode(bytes);
  }
}

nlohmann::ordered_json children_array(const std::vector<ChildResult>& children) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const ChildResult& c : children) {
    nlohmann::ordered_json o;
    o["queue"] = c.queue;
    o["id"] = c.id;
    o["outcome"] = to_string(c.outcome);
    put_bytes(o, c.outcome == ChildOutcome::Completed ? "result" : "error", c.text);
    all.push_back(std::move(o));
  }
  return all;
}

}  // namespace

std::string children_json(const std::vector<ChildResult>& children) {
  return children_array(children).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string encode_job_frame(const Job& job) {
  nlohmann::ordered_json frame;
  frame["id"] = job.id;
  frame["queue"] = job.queue;
  frame["attempt"] = job.attempt;
  frame["deadline_ms"] = job.deadline_ms;
  if (!job.traceparent.empty()) {
    frame["traceparent"] = job.traceparent;
    if (!job.tracestate.empty()) frame["tracestate"] = job.tracestate;
  }
  // Before the payload: the frame promises nothing after the payload's
  // string but the closing brace (docs/handlers.md, "Frames").
  if (!job.children.empty()) frame["children"] = children_array(job.children);
  put_bytes(frame, "payload", job.payload);
  // ids and queue names are ASCII by the keyspace's rules; `replace` only
  // keeps a broken one from throwing.
  return frame.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string parse_reply_frame(std::string_view line, Reply& reply) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number past a double ("3e333",
    // found by fuzz/pool_frame_fuzz.cpp): a bad line either way.
    std::string why = e.what();
    // "[json.exception.parse_error.101] parse error at ...; last read: '…'":
    // keep the human part; the line is quoted below, made safe.
    if (auto bracket = why.find("] "); bracket != std::string::npos) why.erase(0, bracket + 2);
    if (auto last = why.find("; last read:"); last != std::string::npos) why.erase(last);
    if (!is_utf8(why)) why = "invalid bytes";
    return "the reply line is not JSON (" + why + "): " + quote_start(line);
  }
  if (!j.is_object()) return "the reply is a JSON " + type_name(j) + ", not an object: " + quote_start(line);

  const auto id = j.find("id");
  if (id == j.end() || !id->is_string()) return "the reply has no \"id\" string: " + quote_start(line);
  const auto ok = j.find("ok");
  if (const auto progress = j.find("progress"); ok == j.end() && progress != j.end()) {
    reply = Reply{};
    reply.id = id->get<std::string>();
    reply.is_progress = true;
    reply.progress = progress->is_string() ? progress->get<std::string>()
                                           : progress->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return {};
  }
  if (ok == j.end() || !ok->is_boolean()) return "the reply has no \"ok\" true or false: " + quote_start(line);

  Reply r;
  r.id = id->get<std::string>();
  r.ok = ok->get<bool>();
  if (r.ok) {
    const auto text = j.find("result");
    const auto b64 = j.find("result_b64");
    if (text != j.end() && b64 != j.end()) return "the reply has both \"result\" and \"result_b64\"; send one";
    if (text != j.end()) {
      if (!text->is_string()) return "\"result\" is a " + type_name(*text) + ", expected a string";
      r.result = text->get<std::string>();
    } else if (b64 != j.end()) {
      if (!b64->is_string() || !base64_decode(b64->get_ref<const std::string&>(), r.result)) {
        return "\"result_b64\" is not a base64 string (RFC 4648, with padding)";
      }
    }
  } else {
    if (const auto error = j.find("error"); error != j.end()) {
      if (!error->is_string()) return "\"error\" is a " + type_name(*error) + ", expected a string";
      r.error = error->get<std::string>();
    }
    if (const auto permanent = j.find("permanent"); permanent != j.end()) {
      if (!permanent->is_boolean()) return "\"permanent\" is a " + type_name(*permanent) + ", expected true or false";
      r.permanent = permanent->get<bool>();
    }
  }
  reply = std::move(r);
  return {};
}

}  // namespace echomq::daemon
