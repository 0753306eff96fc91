// A plugin's `config` mapping, handed to it as a JSON object.

#include <nlohmann/json.hpp>

#include "config/config_sections.h"
#include "echomq/whole_number.h"

namespace echomq::daemon {

namespace {

// A scalar as YAML 1.2 reads a plain one (numbers, true, false); quoted
// ones stay strings.
nlohmann::json scalar_json(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return s;
  if (s == "true" || s == "false") return s == "true";
  if (is_integer_text(s)) {
    if (const std::optional<std::int64_t> v = whole_number(without_plus(s))) return *v;
  }
  if (is_number_text(s)) {
    if (const std::optional<double> v = decimal_number(without_plus(s))) return *v;
  }
  return s;
}

// YAML as JSON; `ok` turns false, reported, on a key JSON cannot hold.
nlohmann::json to_json(ConfigReader& r, const Field& f, bool& ok) {
  const YAML::Node& n = f.value;
  if (n.IsNull()) return nullptr;
  if (n.IsScalar()) return scalar_json(n);
  if (n.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 0; i < n.size(); ++i)
      out.push_back(to_json(r, Field{f.key + "[" + std::to_string(i) + "]", n[i], 0}, ok));
    return out;
  }
  nlohmann::json out = nlohmann::json::object();
  for (auto it = n.begin(); it != n.end(); ++it) {
    const int line = it->first.Mark().line + 1;
    if (!it->first.IsScalar()) {
      r.error(line, f.key, "expected plain key names (JSON object keys), got " + describe_value(it->first));
      ok = false;
      continue;
    }
    const std::string name = it->first.Scalar();
    if (out.contains(name)) {
      r.error(line, f.key + "." + name, "duplicate key; keep one");
      ok = false;
      continue;
    }
    out[name] = to_json(r, Field{f.key + "." + name, it->second, line}, ok);
  }
  return out;
}

}  // namespace

bool read_plugin_config(ConfigReader& r, const Field& f, std::string& json) {
  if (f.value.IsNull()) return true;
  if (!f.value.IsMap()) {
    r.error(f, "expected a mapping (handed to the plugin as a JSON object), got " + describe_value(f.value));
    return false;
  }
  bool ok = true;
  nlohmann::json j = to_json(r, f, ok);
  if (!ok) return false;
  try {
    json = j.dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    // YAML may carry bytes that are not UTF-8; JSON may not, and dump()
    // throws on them (found by fuzz/config_fuzz.cpp).
    r.error(f, "expected UTF-8 text (it is handed to the plugin as JSON), but a key or value holds other bytes");
    return false;
  }
}

}  // namespace echomq::daemon
