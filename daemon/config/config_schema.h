// The schema of emqd's configuration: one row per key, in one table
// (config_schema.cpp). The loader's known-key check, its "did you mean" and
// "belongs under" advice, the keys each handler type reads, the plain keys'
// types, ranges and targets, and the tests that hold docs/configuration.md,
// config/emqd.example.yaml to the loader, and the fuzzer's dictionary
// (fuzz/config_dictionary.cpp), all read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config_types.h"

namespace echomq::daemon {

// Where a key may stand. A key that may stand in defaults and in a queue
// (or its handler) means the same in both, and the queue's value wins.
enum Place : unsigned {
  kTop = 1,       // the document; a row's path starts at the top: "valkey.tls.ca_file"
  kDefaults = 2,  // under defaults:
  kQueue = 4,     // in a queue, queues[]
  kExec = 8,      // in a queue's handler, by its type
  kPool = 16,
  kPlugin = 32,
  kSchedule = 64,  // in a schedule, schedules[] (config_schedules.cpp reads them all)
};
constexpr unsigned kHandler = kExec | kPool | kPlugin;

enum class ValueType {
  Mapping,  // holds keys of its own, rows below it, each read by its row
  Section,  // holds keys of its own, read by its section's reader (config_sections.h)
  Integer,
  Number,
  Boolean,
  Word,  // one of `words`
  String,
  Custom,  // its section's reader reads it (lists, paths, secrets, free-form maps)
};

// The field a plain key sets, one of the pointers.
struct Slot {
  Slot() = default;
  Slot(std::int64_t* v) : i64(v) {}
  Slot(int* v) : i32(v) {}
  Slot(double* v) : number(v) {}
  Slot(bool* v) : boolean(v) {}
  Slot(std::string* v) : text(v) {}
  std::int64_t* i64 = nullptr;
  int* i32 = nullptr;
  double* number = nullptr;
  bool* boolean = nullptr;
  std::string* text = nullptr;
};
// Top-level rows set a field of Config; the others one of the queue (defaults
// are a QueueConfig too) or of its handler.
using SlotOf = Slot (*)(Config* config, QueueConfig* queue);

struct KeySpec {
  std::string path;  // dotted, from where it stands: "backoff.jitter"; top level: "valkey.url"
  unsigned places = 0;
  ValueType type = ValueType::Custom;
  double lo = 0;  // Integer, Number: the range
  double hi = 0;
  const char* why = nullptr;       // said after a range error
  std::vector<std::string> words;  // Word
  std::string fallback;            // the default as docs show it; "" none
  std::string label;               // its row in `emqd --check-config`; "" when it shows in none
  SlotOf slot = nullptr;           // Integer..String: what it sets

  std::string parent() const;  // "backoff" for "backoff.jitter", "" for "lease_ms"
  std::string leaf() const;    // "jitter"
};

const std::vector<KeySpec>& config_schema();

// The keys of the mapping at `section` (a row's path, "" for the place's
// own mapping) that may stand in any of `places`.
std::vector<std::string> keys_at(unsigned places, const std::string& section);

// The advice for `name`, unknown in the mapping at `section` of `place`,
// when it is known elsewhere ("it belongs under valkey:"), else "".
std::string misplaced_advice(unsigned place, const std::string& section, const std::string& name);

// The row of `path` (from where it stands) that stands in `place`; throws
// std::logic_error when there is none, a slip in the loader.
const KeySpec& key_spec(unsigned place, const std::string& path);

// The place a handler type's keys stand in; its name in a file: "exec".
unsigned handler_place(HandlerConfig::Type type);
const char* to_string(HandlerConfig::Type type);
std::optional<HandlerConfig::Type> parse_handler_type(const std::string& word);
std::vector<std::string> handler_type_names();

}  // namespace echomq::daemon
