#include "config_dictionary.h"

#include <set>
#include <sstream>
#include <vector>

#include "config/config_schema.h"

namespace echomq::daemon {

namespace {

// Tokens no row names: a list item's start, URL schemes, a listen address,
// a command, booleans, and YAML's anchors, aliases, merge keys, tags,
// document markers and indentation (the loader refuses aliases; the
// fuzzer should keep trying them).
const std::vector<std::string> kSyntax = {
    "- name:", "valkey://", "redis://", "unix://", "valkeys://", "127.0.0.1:9464", "[\"/bin/cat\"]", "true", "false",
    "<<:",     "&a",        "*a",       "!!str",   "---",        "\n  ",           "\n    ",
};

// libFuzzer's quoting: printable ASCII as is, but for \ and ", the rest \xNN.
std::string quoted(const std::string& token) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : token) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out + "\"";
}

}  // namespace

std::string config_dictionary() {
  std::set<std::string> seen;
  std::ostringstream out;
  out << "# config_fuzz's dictionary, made from daemon/config/config_schema.cpp by\n"
         "# fuzz/config_dict (scripts/fuzz.sh writes it before each run).\n";
  auto add = [&](const std::string& token) {
    if (seen.insert(token).second) out << quoted(token) << "\n";
  };
  for (const KeySpec& k : config_schema()) {
    // Each part of the path is a key of some mapping: "valkey", "tls", "ca_file".
    std::size_t from = 0;
    for (std::size_t dot = k.path.find('.');; dot = k.path.find('.', from)) {
      add(k.path.substr(from, dot - from) + ":");
      if (dot == std::string::npos) break;
      from = dot + 1;
    }
    for (const std::string& w : k.words) add(w);
  }
  for (const std::string& name : handler_type_names()) add(name);
  for (const char* place : {"defaults:", "queues:", "schedules:", "handler:"}) add(place);
  for (const std::string& token : kSyntax) add(token);
  return out.str();
}

}  // namespace echomq::daemon
