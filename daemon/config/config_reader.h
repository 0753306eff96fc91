// Reading typed values out of a YAML tree while collecting every problem as
// "FILE:LINE: KEY: what was expected". config.cpp walks emqd's schema with
// it; nothing here knows emqd's keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace echomq::daemon {

// One key of a mapping, or one element of a list, and where it sits.
struct Field {
  std::string key;  // dotted path: "queues[2].handler.command"; "" is the document
  YAML::Node value;
  int key_line = 0;  // 1-based line of the key; 0 for list elements

  // The line an error about this field names: a scalar's own line, else the
  // key's (yaml-cpp marks an empty value or a block at the line after it).
  int line() const;
};

// The fields of one mapping, in file order.
struct Mapping {
  std::string key;  // dotted path of the mapping itself
  int line = 1;     // where a "missing key" error points
  std::vector<Field> fields;

  const Field* get(const std::string& name) const;
  // "queues[0].handler" + "command" -> "queues[0].handler.command"
  std::string child(const std::string& name) const;
};

// A key that is misplaced rather than misspelt, and the advice to give.
using Misplaced = std::vector<std::pair<std::string, std::string>>;

class ConfigReader {
 public:
  explicit ConfigReader(std::string file) : file_(std::move(file)) {}

  void error(int line, const std::string& key, const std::string& what);
  void error(const Field& at, const std::string& what) { error(at.line(), at.key, what); }
  bool failed() const { return !errors_.empty(); }
  // Every error, ordered by line (stable, so one line's errors keep their order).
  std::vector<std::string> errors() const;

  // A mapping whose keys must be in `allowed`. Unknown keys are reported with
  // the nearest allowed one or the `misplaced` advice, duplicates with the
  // line of the first. An empty value is an empty mapping. Returns false,
  // having reported it, when the value is not a mapping.
  bool mapping(const Field& f, const std::vector<std::string>& allowed, Mapping& out, const Misplaced& misplaced = {});
  // The elements of a list, as fields "key[i]". False (reported) otherwise.
  bool sequence(const Field& f, const std::string& expected, std::vector<Field>& out);

  // Each writes `out` only when the value is valid, and reports otherwise.
  bool integer(const Field& f, std::int64_t lo, std::int64_t hi, std::int64_t& out, const char* why = nullptr);
  bool integer(const Field& f, int lo, int hi, int& out, const char* why = nullptr);
  bool number(const Field& f, double lo, double hi, double& out, const char* why = nullptr);
  bool boolean(const Field& f, bool& out);
  // Any scalar, as written; an empty value is refused (write "" for none).
  bool string(const Field& f, std::string& out);
  // One of `words`, exactly.
  bool word(const Field& f, const std::vector<std::string>& words, std::string& out);

 private:
  std::string file_;
  std::vector<std::pair<int, std::string>> errors_;
};

// The nearest of `candidates` to a misspelt `name`, or "" when none is close
// enough to be a likely typo.
std::string nearest_key(const std::string& name, const std::vector<std::string>& candidates);

// Whether a plain scalar is a whole number ([+-]digits), or a number
// ([+-], digits with an optional fraction, an optional exponent), as YAML
// 1.2 reads one. Hand-written: std::regex recursed once per character and
// overflowed the stack on a value of 200,000 digits.
bool is_integer_text(const std::string& s);
bool is_number_text(const std::string& s);
// Either, as the number readers take it (echomq/whole_number.h): YAML's
// leading '+' dropped.
std::string_view without_plus(const std::string& s);
// Whether s is not empty and holds only ASCII letters, digits and the bytes
// of `extra` (names, schemes; by hand for the same reason).
bool is_ascii_word(const std::string& s, const char* extra);
bool is_ascii_letter(char c);

// How a value is shown in an error: "the string \"x\"", "a mapping", ...
std::string describe_value(const YAML::Node& value);

}  // namespace echomq::daemon
