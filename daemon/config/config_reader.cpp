#include "config/config_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "echomq/whole_number.h"
#include "text/lower_case.h"

namespace echomq::daemon {

namespace {

int mark_line(const YAML::Node& node) {
  const int line = node.Mark().line;
  return line >= 0 ? line + 1 : 1;
}

// A quoted scalar ("8", '8') or one tagged !!str is text, never a number or a
// bool: YAML says so, and it is usually a slip worth pointing at.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

std::string shorten(const std::string& text) {
  constexpr std::size_t kMax = 40;
  return text.size() <= kMax ? text : text.substr(0, kMax) + "...";
}

std::string range_text(std::int64_t lo, std::int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string with_why(std::string message, const char* why) {
  if (why != nullptr) message += std::string("; ") + why;
  return message;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Skips the digits from i on; how many there were.
std::size_t skip_digits(const std::string& s, std::size_t& i) {
  const std::size_t from = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i - from;
}

// Skips a leading + or -.
std::size_t after_sign(const std::string& s) { return !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0; }

std::string join(const std::vector<std::string>& words, const char* sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

}  // namespace

std::string_view without_plus(const std::string& s) {
  return !s.empty() && s[0] == '+' ? std::string_view(s).substr(1) : std::string_view(s);
}

bool is_integer_text(const std::string& s) {
  std::size_t i = after_sign(s);
  return skip_digits(s, i) > 0 && i == s.size();
}

bool is_number_text(const std::string& s) {
  std::size_t i = after_sign(s);
  const std::size_t whole = skip_digits(s, i);
  std::size_t fraction = 0;
  if (i < s.size() && s[i] == '.') fraction = skip_digits(s, ++i);
  if (whole == 0 && fraction == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (skip_digits(s, i) == 0) return false;
  }
  return i == s.size();
}

bool is_ascii_letter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

bool is_ascii_word(const std::string& s, const char* extra) {
  auto in_word = [&](char c) {
    return is_ascii_letter(c) || (c >= '0' && c <= '9') || (c != '\0' && std::strchr(extra, c) != nullptr);
  };
  return !s.empty() && std::all_of(s.begin(), s.end(), in_word);
}

int Field::line() const {
  if (value.IsScalar() || key_line == 0) return mark_line(value);
  return key_line;
}

const Field* Mapping::get(const std::string& name) const {
  const std::string wanted = child(name);
  for (const Field& f : fields) {
    if (f.key == wanted) return &f;
  }
  return nullptr;
}

std::string Mapping::child(const std::string& name) const { return key.empty() ? name : key + "." + name; }

void ConfigReader::error(int line, const std::string& key, const std::string& what) {
  errors_.emplace_back(line, file_ + ":" + std::to_string(line) + ": " + (key.empty() ? "(top)" : key) + ": " + what);
}

std::vector<std::string> ConfigReader::errors() const {
  auto sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& e : sorted) out.push_back(std::move(e.second));
  return out;
}

std::string nearest_key(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string wanted = lower(name);
  std::string best;
  std::size_t best_distance = 3;  // a likely typo is at most two edits away
  for (const auto& c : candidates) {
    // "timeout" for "timeout_s", "lease" for "lease_ms": the unit was left off.
    if (c.rfind(wanted + "_", 0) == 0) return c;
    const std::size_t d = edit_distance(wanted, c);
    if (d < best_distance && d * 2 <= wanted.size()) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::string describe_value(const YAML::Node& value) {
  if (value.IsNull()) return "an empty value";
  if (value.IsSequence()) return "a list";
  if (value.IsMap()) return "a mapping";
  if (is_quoted(value)) return "the quoted string \"" + shorten(value.Scalar()) + "\"";
  return shorten(value.Scalar());
}

bool ConfigReader::mapping(const Field& f, const std::vector<std::string>& allowed, Mapping& out,
                           const Misplaced& misplaced) {
  out.key = f.key;
  out.line = f.line();
  out.fields.clear();
  if (f.value.IsNull()) return true;
  if (!f.value.IsMap()) {
    error(f, "expected a mapping (key: value lines), got " + describe_value(f.value));
    return false;
  }
  std::map<std::string, int> first_line;
  for (auto it = f.value.begin(); it != f.value.end(); ++it) {
    const YAML::Node key = it->first;  // a copy: the iterator hands out a temporary
    const int key_line = mark_line(key);
    if (!key.IsScalar()) {
      error(key_line, out.key.empty() ? "(top)" : out.key, "expected a plain key name, got " + describe_value(key));
      continue;
    }
    const std::string name = key.Scalar();
    const std::string dotted = out.child(name);
    if (auto seen = first_line.find(name); seen != first_line.end()) {
      error(key_line, dotted, "duplicate key, first given at line " + std::to_string(seen->second) + "; keep one");
      continue;
    }
    first_line.emplace(name, key_line);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string what = "unknown key";
      auto advice = std::find_if(misplaced.begin(), misplaced.end(), [&](const auto& m) { return m.first == name; });
      if (name == "<<") {
        what += "; YAML merge keys (<<) are not supported, write the keys out";
      } else if (advice != misplaced.end()) {
        what += "; " + advice->second;
      } else if (std::string near = nearest_key(name, allowed); !near.empty()) {
        what += "; did you mean " + near + "?";
      } else {
        what += "; expected one of " + join(allowed, ", ");
      }
      error(key_line, dotted, what);
      continue;
    }
    out.fields.push_back(Field{dotted, it->second, key_line});
  }
  return true;
}

bool ConfigReader::sequence(const Field& f, const std::string& expected, std::vector<Field>& out) {
  out.clear();
  if (!f.value.IsSequence()) {
    error(f, "expected " + expected + ", got " + describe_value(f.value));
    return false;
  }
  for (std::size_t i = 0; i < f.value.size(); ++i) {
    out.push_back(Field{f.key + "[" + std::to_string(i) + "]", f.value[i], 0});
  }
  return true;
}

bool ConfigReader::integer(const Field& f, std::int64_t lo, std::int64_t hi, std::int64_t& out, const char* why) {
  const std::string expected = "expected a whole number in " + range_text(lo, hi) + ", got ";
  if (!f.value.IsScalar() || is_quoted(f.value) || !is_integer_text(f.value.Scalar())) {
    std::string hint = is_quoted(f.value) ? " (write numbers without quotes)" : "";
    error(f, with_why(expected + describe_value(f.value) + hint, why));
    return false;
  }
  const std::optional<std::int64_t> v = whole_number(without_plus(f.value.Scalar()));
  if (!v || *v < lo || *v > hi) {
    error(f, with_why(expected + shorten(f.value.Scalar()), why));
    return false;
  }
  out = *v;
  return true;
}

bool ConfigReader::integer(const Field& f, int lo, int hi, int& out, const char* why) {
  std::int64_t wide = 0;
  if (!integer(f, std::int64_t{lo}, std::int64_t{hi}, wide, why)) return false;
  out = static_cast<int>(wide);
  return true;
}

bool ConfigReader::number(const Field& f, double lo, double hi, double& out, const char* why) {
  const std::string expected = "expected a number in " + number_text(lo) + ".." + number_text(hi) + ", got ";
  if (!f.value.IsScalar() || is_quoted(f.value) || !is_number_text(f.value.Scalar())) {
    std::string hint = is_quoted(f.value) ? " (write numbers without quotes)" : "";
    error(f, with_why(expected + describe_value(f.value) + hint, why));
    return false;
  }
  const std::optional<double> v = decimal_number(without_plus(f.value.Scalar()));
  if (!v || *v < lo || *v > hi) {
    error(f, with_why(expected + shorten(f.value.Scalar()), why));
    return false;
  }
  out = *v;
  return true;
}

bool ConfigReader::boolean(const Field& f, bool& out) {
  // Only the YAML 1.2 words: yes/no/on/off are YAML 1.1 and read as strings
  // by other tools, so a file that relies on them means different things.
  if (f.value.IsScalar() && !is_quoted(f.value) && (f.value.Scalar() == "true" || f.value.Scalar() == "false")) {
    out = f.value.Scalar() == "true";
    return true;
  }
  error(f, "expected true or false, got " + describe_value(f.value));
  return false;
}

bool ConfigReader::string(const Field& f, std::string& out) {
  if (f.value.IsScalar()) {
    out = f.value.Scalar();
    return true;
  }
  std::string hint = f.value.IsNull() ? " (write \"\" for none)" : "";
  error(f, "expected a string, got " + describe_value(f.value) + hint);
  return false;
}

bool ConfigReader::word(const Field& f, const std::vector<std::string>& words, std::string& out) {
  if (f.value.IsScalar() && std::find(words.begin(), words.end(), f.value.Scalar()) != words.end()) {
    out = f.value.Scalar();
    return true;
  }
  error(f, "expected one of " + join(words, ", ") + ", got " + describe_value(f.value));
  return false;
}

}  // namespace echomq::daemon
