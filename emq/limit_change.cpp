#include "limit_change.h"

#include "text/duration.h"
#include "echomq/errors.h"
#include "echomq/whole_number.h"
#include "bytes_text.h"

namespace echomq::cli {

namespace {

// 1..1000000 written plainly: up to 7 digits, no sign, no leading zero.
// By hand: the std::regex it replaced recursed once per character and a
// 60,000-character value overflowed the stack.
std::optional<std::int64_t> count_of(const std::string& text) {
  if (text.empty() || text.size() > 7 || text[0] == '0') return std::nullopt;
  const std::optional<std::int64_t> n = whole_number(text);
  return n && *n <= kMaxActiveLimit ? n : std::nullopt;
}

// A value as an error shows it: a pasted megabyte is cut.
std::string shown(const std::string& text) { return "'" + text_cell(text, 40) + "'"; }

}  // namespace

std::optional<std::int64_t> max_active_of(const std::string& text, const std::string& field) {
  if (text == "off") return std::nullopt;
  if (std::optional<std::int64_t> n = count_of(text)) return n;
  throw Error(ErrorKind::Invalid, field, "expected 1..1000000 or off, got " + shown(text));
}

std::optional<RateLimit> rate_of(const std::string& text, const std::string& field) {
  if (text == "off") return std::nullopt;
  const std::size_t slash = text.find('/');
  if (slash != std::string::npos) {
    std::string period = text.substr(slash + 1);
    // "1000/m": a period without a number is one of its unit.
    if (!period.empty() && (period[0] < '0' || period[0] > '9')) period.insert(0, "1");
    const std::optional<std::int64_t> max = count_of(text.substr(0, slash));
    const std::optional<std::int64_t> window = daemon::parse_duration_ms(period);
    if (max && window && *window >= 1 && *window <= kMaxWindowMs) return RateLimit{*max, *window};
  }
  throw Error(ErrorKind::Invalid, field,
              "expected N/PERIOD such as 100/1s, 5/500ms or 1000/m (N 1..1000000, PERIOD 1ms..24h), or off; got " +
                  shown(text));
}

LimitsWritten change_limits(Executor& x, const QueueKeys& q, const LimitChange& change) {
  const LimitFields f = decode_limit_fields(x.command(limit_fields_read(q)));
  LimitsWritten out;
  const std::optional<QueueLimits> was = f.limits(&out.was_broken);
  out.before = was.value_or(QueueLimits{});
  out.now = out.before;
  if (change.max_active) out.now.max_active = *change.max_active;
  if (change.rate) out.now.rate = *change.rate;
  for (const Reply& r : x.pipeline(limits_write(q, out.before, out.now))) {
    if (r.is_error()) throw error_from_reply("limit", r.str);
  }
  return out;
}

}  // namespace echomq::cli
