#include "trace_url.h"

#include "echomq/trace_context.h"

namespace echomq::cli {

namespace {

constexpr std::string_view kPlaceholder = "{trace_id}";
constexpr std::size_t kMaxTemplateBytes = 2048;

// Printable ASCII that may stand in a URL as it is: no space, quote, angle
// bracket, backslash or backtick (a browser would encode them or stop).
bool url_byte(unsigned char c) {
  return c > 0x20 && c < 0x7f && c != '"' && c != '<' && c != '>' && c != '\\' && c != '`';
}

}  // namespace

std::string trace_url_problem(const std::string& tmpl) {
  const std::size_t scheme = tmpl.rfind("https://", 0) == 0 ? 8 : tmpl.rfind("http://", 0) == 0 ? 7 : 0;
  if (scheme == 0) return "it does not begin with http:// or https:// (the only links the page follows)";
  if (tmpl.size() > kMaxTemplateBytes) return "it is longer than 2048 bytes";
  for (unsigned char c : tmpl) {
    if (!url_byte(c))
      return "it holds a space, a quote, <, >, \\, ` or a byte that is not printable ASCII: percent-encode it";
  }
  const std::size_t path = tmpl.find_first_of("/?#", scheme);
  const std::string authority = tmpl.substr(scheme, path == std::string::npos ? std::string::npos : path - scheme);
  if (authority.empty() || authority[0] == ':') return "the host is missing";
  if (authority.find('@') != std::string::npos) {
    return "it holds credentials (user@host), which every page would show: let the tracing tool ask for them";
  }
  std::string rest = tmpl;
  std::size_t found = 0;
  for (std::size_t at = rest.find(kPlaceholder); at != std::string::npos; at = rest.find(kPlaceholder, at)) {
    rest.erase(at, kPlaceholder.size());
    ++found;
  }
  if (found == 0) return "it has no {trace_id} for the trace id to go in";
  if (authority.find_first_of("{}") != std::string::npos)
    return "{trace_id} goes in the path or the query, not the host";
  if (rest.find_first_of("{}") != std::string::npos) {
    return "{trace_id} is the only placeholder: percent-encode any other { or } (%7B, %7D)";
  }
  return "";
}

std::string trace_url(const std::string& tmpl, std::string_view trace_id) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = tmpl.find(kPlaceholder); at != std::string::npos; at = tmpl.find(kPlaceholder, from)) {
    out.append(tmpl, from, at - from).append(trace_id);
    from = at + kPlaceholder.size();
  }
  return out.append(tmpl, from, std::string::npos);
}

std::optional<JobTrace> job_trace(const JobRow& row, const std::string& tmpl) {
  auto field = row.fields.find("traceparent");
  if (field == row.fields.end()) return std::nullopt;
  JobTrace t;
  t.problem = traceparent_problem(field->second);
  if (!t.problem.empty()) return t;
  t.trace_id = std::string(trace_id_of(field->second));
  if (!tmpl.empty()) t.url = trace_url(tmpl, t.trace_id);
  return t;
}

}  // namespace echomq::cli
