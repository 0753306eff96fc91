// The tracing block, and the standard OTEL_* variables that fill what it
// leaves out (the file wins where both speak). Resolved here, at load, so
// that `emqd --check-config` refuses a malformed endpoint or variable and
// shows where each value came from. Nothing read here is checked while
// tracing is off: an operator's stray OTEL_* variable cannot stop a daemon
// that does not trace.
#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "config/config_paths.h"
#include "config/config_sections.h"
#include "echomq/whole_number.h"
#include "text/lower_case.h"

namespace echomq::daemon {

namespace {

constexpr const char* kTracesPath = "/v1/traces";
constexpr std::size_t kMaxEndpointBytes = 2048;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// "" when `host` is a host name, an IPv4 address or a bracketed IPv6 one.
bool valid_host(const std::string& host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    return is_ascii_word(host.substr(1, host.size() - 2), ":.") && host.find_first_of("g-zG-Z", 1) == std::string::npos;
  }
  return host.size() <= 253 && is_ascii_word(host, ".-_");
}

// The URL spans are posted to, or "" with `why`. `append`: the endpoint is
// the collector's base and /v1/traces goes after its path (as for
// OTEL_EXPORTER_OTLP_ENDPOINT); a path that already ends so is kept.
std::string traces_url(const std::string& endpoint, bool append, std::string& why) {
  const char* const form = "expected http://host:port or https://host:port, with a path if the collector wants one";
  const std::string folded = lower(endpoint);
  const std::size_t scheme = folded.rfind("http://", 0) == 0 ? 7 : folded.rfind("https://", 0) == 0 ? 8 : 0;
  if (scheme == 0) {
    why = std::string(form) + " (emqd exports OTLP over HTTP)";
    return "";
  }
  if (endpoint.size() > kMaxEndpointBytes) {
    why = "the endpoint is longer than 2048 bytes";
    return "";
  }
  for (char c : endpoint) {
    if (c <= ' ' || c == 0x7f || c == '?' || c == '#') {
      why = std::string(form) + ", without spaces, a query or a fragment";
      return "";
    }
  }
  const std::size_t slash = endpoint.find('/', scheme);
  const std::string authority =
      endpoint.substr(scheme, slash == std::string::npos ? std::string::npos : slash - scheme);
  std::string path = slash == std::string::npos ? "" : endpoint.substr(slash);
  if (authority.find('@') != std::string::npos) {
    why = "the endpoint holds credentials, which would show wherever it is shown: put them in headers_file";
    return "";
  }
  const std::size_t colon = authority.rfind(':');
  const bool has_port = colon != std::string::npos && authority.find(']', colon) == std::string::npos;
  const std::string host = has_port ? authority.substr(0, colon) : authority;
  if (!valid_host(host)) {
    why = std::string(form) + ", but the host is missing or not a host name or address";
    return "";
  }
  if (has_port) {
    const std::string port = authority.substr(colon + 1);
    if (!port_number(port)) {
      why = std::string(form) + ", but the port is not 1..65535";
      return "";
    }
  }
  if (!append || ends_with(path, kTracesPath)) return path.empty() ? endpoint + "/" : endpoint;
  while (!path.empty() && path.back() == '/') path.pop_back();
  return endpoint.substr(0, scheme) + authority + path + kTracesPath;
}

// RFC 9110's token, a header's name.
bool header_name(const std::string& s) { return is_ascii_word(s, "!#$%&'*+-.^_`|~"); }

// "Name: value" lines; blank lines and lines starting with # are skipped.
// Errors name the line, never its text: it is a secret.
bool read_headers(const std::string& path, std::vector<std::pair<std::string, std::string>>& out, std::string& why) {
  std::string text;
  if (!read_secret_file(path, text, why, "the collector's headers")) return false;
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const std::size_t colon = line.find(':');
    const std::string name = colon == std::string::npos ? "" : line.substr(0, colon);
    std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    value.erase(value.find_last_not_of(" \t") + 1);
    const bool printable = std::all_of(value.begin(), value.end(), [](char c) { return c >= ' ' && c != 0x7f; });
    if (!header_name(name) || value.empty() || !printable) {
      why = path + " line " + std::to_string(n) +
            ": expected a header as \"Name: value\" (a token, a colon, printable text)";
      return false;
    }
    out.emplace_back(name, value);
  }
  if (out.empty()) {
    why = path + " holds no header; expected \"Name: value\" lines";
    return false;
  }
  return true;
}

class TracingReader {
 public:
  TracingReader(ConfigReader& reader, std::string dir, const Field& field, TracingConfig& t)
      : r_(reader), dir_(std::move(dir)), field_(field), t_(t) {}

  void read(Config& config) {
    if (!read_mapping(r_, field_, kTop, "tracing", m_)) return;
    read_plain(r_, m_, kTop, "tracing", &config, nullptr);
    if (auto f = m_.get("service_name"); f && t_.service_name.empty()) {
      r_.error(*f, "expected the service's name as the tracing backend should show it (emqd)");
    }
    if (auto f = m_.get("endpoint"); f && r_.string(*f, endpoint_)) {
      std::string why;
      t_.url = traces_url(endpoint_, true, why);
      if (t_.url.empty()) r_.error(*f, why);
      t_.url_from = "tracing.endpoint";
    }
    if (auto f = m_.get("headers_file"); f && r_.string(*f, t_.headers_file) && !t_.headers_file.empty()) {
      t_.headers_file = absolute_from(dir_, t_.headers_file);
      std::string why;
      if (!read_headers(t_.headers_file, t_.headers, why)) r_.error(*f, why);
    }
    if (t_.enabled && lower(env("OTEL_SDK_DISABLED")) == "true") {
      t_.enabled = false;
      t_.disabled_by = "OTEL_SDK_DISABLED";
    }
    if (t_.enabled) from_environment();
  }

 private:
  void env_error(const char* name, const std::string& what) { r_.error(field_, std::string(name) + ": " + what); }

  void from_environment() {
    if (m_.get("endpoint") == nullptr) endpoint_from_environment();
    for (const char* name : {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}) {
      const std::string protocol = env(name);
      if (!protocol.empty() && protocol != "http/protobuf") {
        env_error(name, "is \"" + protocol + "\", but emqd exports http/protobuf only; unset it or set http/protobuf");
      }
    }
    if (m_.get("sample_ratio") == nullptr) sampler_from_environment();
    if (m_.get("service_name") == nullptr && !env("OTEL_SERVICE_NAME").empty()) {
      t_.service_name = env("OTEL_SERVICE_NAME");
    }
    whole("OTEL_BSP_MAX_QUEUE_SIZE", 1, 1000000, t_.max_queue_size);
    whole("OTEL_BSP_SCHEDULE_DELAY", 1, 3600000, t_.schedule_delay_ms);
    whole("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1, 1000000, t_.max_export_batch_size);
    // A smaller queue than the default batch takes the batch down with it;
    // a batch asked for that could never fill is a slip worth saying.
    if (t_.max_export_batch_size > t_.max_queue_size && env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE").empty()) {
      t_.max_export_batch_size = t_.max_queue_size;
    } else if (t_.max_export_batch_size > t_.max_queue_size) {
      env_error("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "is larger than the queue of spans (" +
                                                      std::to_string(t_.max_queue_size) +
                                                      ", OTEL_BSP_MAX_QUEUE_SIZE): a batch could never fill");
    }
  }

  void endpoint_from_environment() {
    // The signal's own variable is the URL as it is; the general one is the
    // collector's base (the OpenTelemetry exporter specification).
    for (const char* name : {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}) {
      const std::string value = env(name);
      if (value.empty()) continue;
      std::string why;
      t_.url = traces_url(value, name == std::string("OTEL_EXPORTER_OTLP_ENDPOINT"), why);
      if (t_.url.empty()) env_error(name, why);
      t_.url_from = name;
      return;
    }
    t_.url = std::string("http://localhost:4318") + kTracesPath;
    t_.url_from = "the default";
  }

  void sampler_from_environment() {
    const std::string sampler = env("OTEL_TRACES_SAMPLER");
    if (sampler.empty()) return;
    t_.sampler_from = "OTEL_TRACES_SAMPLER";
    t_.parent_based = sampler.rfind("parentbased_", 0) == 0;
    const std::string root = t_.parent_based ? sampler.substr(12) : sampler;
    if (root == "always_on") {
      t_.sample_ratio = 1;
    } else if (root == "always_off") {
      t_.sample_ratio = 0;
    } else if (root == "traceidratio") {
      const std::string arg = env("OTEL_TRACES_SAMPLER_ARG");
      t_.sample_ratio = 1;  // the specification's default
      if (arg.empty()) return;
      const std::optional<double> ratio = decimal_number(arg);
      if (!ratio || *ratio < 0 || *ratio > 1) {
        env_error("OTEL_TRACES_SAMPLER_ARG", "is \"" + arg + "\": expected a number in 0..1");
      } else {
        t_.sample_ratio = *ratio;
      }
    } else {
      env_error(
          "OTEL_TRACES_SAMPLER",
          "is \"" + sampler + "\": expected always_on, always_off, traceidratio, or one of them after parentbased_");
    }
  }

  void whole(const char* name, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
    const std::string value = env(name);
    if (value.empty()) return;
    const std::optional<std::int64_t> n = whole_number_in(value, lo, hi);
    if (!n) {
      env_error(name,
                "is \"" + value + "\": expected a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
      return;
    }
    out = *n;
  }

  ConfigReader& r_;
  std::string dir_;
  const Field& field_;
  TracingConfig& t_;
  Mapping m_;
  std::string endpoint_;
};

}  // namespace

void read_tracing(ConfigReader& r, const std::string& dir, const Field& field, Config& config) {
  TracingReader(r, dir, field, config.tracing).read(config);
}

}  // namespace echomq::daemon
