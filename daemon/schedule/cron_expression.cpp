#include "schedule/cron_expression.h"

#include <array>
#include <limits>
#include <vector>

#include "echomq/whole_number.h"

namespace echomq::daemon {

namespace {

struct Field {
  const char* name;
  unsigned low;
  unsigned high;
  const char* const* names;  // low.. in order, or nullptr
  std::size_t names_count;
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

// Day-of-week allows 7 for Sunday; it is folded to 0 after parsing.
constexpr std::array<Field, 5> kFields = {{
    {"minute", 0, 59, nullptr, 0},
    {"hour", 0, 23, nullptr, 0},
    {"day-of-month", 1, 31, nullptr, 0},
    {"month", 1, 12, kMonthNames, 12},
    {"day-of-week", 0, 7, kDayNames, 7},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

[[noreturn]] void fail(const Field& f, const std::string& what) { throw CronError(std::string(f.name) + " " + what); }

unsigned parse_value(const Field& f, std::string_view token) {
  if (token.empty()) fail(f, "has an empty value");
  if (f.names != nullptr) {
    std::string name = lower(token);
    for (std::size_t i = 0; i < f.names_count; ++i)
      if (name == f.names[i]) return f.low + static_cast<unsigned>(i);
  }
  const std::optional<std::int64_t> number = whole_number(token);
  if (!number || *number < 0 || *number > std::numeric_limits<unsigned>::max()) {
    std::string expected = f.names != nullptr ? " (a number or a name like " + std::string(f.names[0]) + ")" : "";
    fail(f, "'" + std::string(token) + "' is not a number" + expected);
  }
  const auto value = static_cast<unsigned>(*number);
  if (value < f.low || value > f.high)
    fail(f, std::to_string(value) + " out of " + std::to_string(f.low) + "-" + std::to_string(f.high));
  return value;
}

unsigned parse_step(const Field& f, std::string_view token) {
  const std::optional<std::int64_t> step = whole_number(token);
  if (!step || *step <= 0 || *step > std::numeric_limits<unsigned>::max())
    fail(f, "step '" + std::string(token) + "' is not a positive number");
  return static_cast<unsigned>(*step);
}

// One comma-separated item: *, N, N-M, with an optional /STEP.
void parse_item(const Field& f, std::string_view item, std::vector<bool>& bits) {
  std::string_view range = item;
  unsigned step = 1;
  bool stepped = false;
  if (std::size_t slash = item.find('/'); slash != std::string_view::npos) {
    range = item.substr(0, slash);
    step = parse_step(f, item.substr(slash + 1));
    stepped = true;
  }
  unsigned first = f.low;
  unsigned last = f.high;
  if (range == "*") {
    if (f.low == 0 && f.high == 7) last = 6;  // day-of-week: 7 would repeat Sunday
  } else if (std::size_t dash = range.find('-'); dash != std::string_view::npos) {
    first = parse_value(f, range.substr(0, dash));
    last = parse_value(f, range.substr(dash + 1));
    if (first > last) fail(f, "range " + std::string(range) + " runs backwards (write it low-high)");
  } else {
    first = parse_value(f, range);
    // "N/STEP" means from N to the end, as in Vixie cron.
    last = stepped ? f.high : first;
  }
  for (unsigned v = first; v <= last; v += step) bits[v] = true;
}

std::vector<bool> parse_field(const Field& f, std::string_view text) {
  std::vector<bool> bits(f.high + 1, false);
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) fail(f, "has an empty item in '" + std::string(text) + "'");
    parse_item(f, item, bits);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return bits;
}

template <std::size_t N>
std::bitset<N> to_bits(const std::vector<bool>& v) {
  std::bitset<N> out;
  for (std::size_t i = 0; i < N && i < v.size(); ++i) out[i] = v[i];
  return out;
}

std::string_view expand_name(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kNames = {{
      {"@yearly", "0 0 1 1 *"},
      {"@annually", "0 0 1 1 *"},
      {"@monthly", "0 0 1 * *"},
      {"@weekly", "0 0 * * 0"},
      {"@daily", "0 0 * * *"},
      {"@midnight", "0 0 * * *"},
      {"@hourly", "0 * * * *"},
  }};
  for (const auto& [name, fields] : kNames)
    if (lower(text) == name) return fields;
  throw CronError("unknown name '" + std::string(text) +
                  "': use @hourly, @daily, @weekly, @monthly, @yearly, or 5 fields");
}

std::vector<std::string_view> split_fields(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

constexpr unsigned kMaxDays[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

}  // namespace

bool CronExpression::matches_day(unsigned day_of_month, unsigned day_of_week) const {
  bool dom = days_of_month[day_of_month];
  bool dow = days_of_week[day_of_week];
  if (day_of_month_star || day_of_week_star) return dom && dow;
  return dom || dow;
}

CronExpression parse_cron(std::string_view text) {
  std::string_view fields_text = text;
  if (!text.empty() && text.front() == '@') fields_text = expand_name(text);
  std::vector<std::string_view> fields = split_fields(fields_text);
  if (fields.size() != 5)
    throw CronError("expected 5 fields (minute hour day-of-month month day-of-week), got " +
                    std::to_string(fields.size()));
  std::array<std::vector<bool>, 5> bits;
  for (std::size_t i = 0; i < 5; ++i) bits[i] = parse_field(kFields[i], fields[i]);
  if (bits[4][7]) bits[4][0] = true;

  CronExpression e;
  e.text = std::string(text);
  e.minutes = to_bits<60>(bits[0]);
  e.hours = to_bits<24>(bits[1]);
  e.days_of_month = to_bits<32>(bits[2]);
  e.months = to_bits<13>(bits[3]);
  e.days_of_week = to_bits<7>(bits[4]);
  e.day_of_month_star = fields[2].front() == '*';
  e.day_of_week_star = fields[4].front() == '*';

  // "0 0 30 2 *" would never fire: say so now rather than never.
  if (e.day_of_week_star) {
    bool some = false;
    for (unsigned m = 1; m <= 12 && !some; ++m)
      for (unsigned d = 1; d <= kMaxDays[m] && !some; ++d) some = e.months[m] && e.days_of_month[d];
    if (!some)
      throw CronError("day-of-month " + std::string(fields[2]) + " never occurs in month " + std::string(fields[3]));
  }
  return e;
}

}  // namespace echomq::daemon
