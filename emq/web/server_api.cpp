#include "web/server_api.h"

#include <map>
#include <string>
#include <string_view>

#include "echomq/errors.h"
#include "echomq/whole_number.h"

namespace echomq::cli {

namespace {

using json = nlohmann::ordered_json;

// "field:value" lines of INFO, comments and blank lines left out.
std::map<std::string, std::string> info_fields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t colon = line.find(':');
    if (!line.empty() && line[0] != '#' && colon != std::string::npos)
      out[line.substr(0, colon)] = line.substr(colon + 1);
    pos = end + 1;
  }
  return out;
}

json text_of(const std::map<std::string, std::string>& f, const std::string& name) {
  auto it = f.find(name);
  return it == f.end() ? json(nullptr) : json(it->second.substr(0, 100));
}

json count_of(const std::map<std::string, std::string>& f, const std::string& name) {
  auto it = f.find(name);
  const std::optional<std::int64_t> n = it == f.end() ? std::nullopt : whole_number(it->second);
  return n ? json(*n) : json(nullptr);
}

// INFO modules lists each on a line "module:name=emq,ver=10203,api=1,...":
// the emq module's version, or null when it is not loaded.
json emq_module(const std::string& text) {
  const std::string marker = "module:name=emq,ver=";
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) return nullptr;
  const std::size_t from = at + marker.size();
  const std::optional<std::int64_t> ver = whole_number(text.substr(from, text.find_first_of(",\r\n", from) - from));
  return {{"name", "emq"}, {"ver", ver ? json(*ver) : json(nullptr)}};
}

}  // namespace

ApiAnswer server_answer(Executor& x) {
  const Reply r = x.command({"INFO", "server", "clients", "memory", "modules"});
  if (r.is_error()) throw error_from_reply("info", r.str);
  const std::map<std::string, std::string> f = info_fields(r.str);
  // Valkey names both its own way; Redis (and Valkey 7) the older one.
  json version = text_of(f, "valkey_version");
  if (version.is_null()) version = text_of(f, "redis_version");
  json mode = text_of(f, "server_mode");
  if (mode.is_null()) mode = text_of(f, "redis_mode");
  const SlotMap* cluster = x.cluster_map();
  return {200,
          {{"version", version},
           {"mode", mode},
           {"cluster_primaries", cluster ? json(cluster->primaries().size()) : json(nullptr)},
           {"uptime_s", count_of(f, "uptime_in_seconds")},
           {"connected_clients", count_of(f, "connected_clients")},
           {"blocked_clients", count_of(f, "blocked_clients")},
           {"maxclients", count_of(f, "maxclients")},
           {"used_memory", count_of(f, "used_memory")},
           {"used_memory_peak", count_of(f, "used_memory_peak")},
           {"maxmemory", count_of(f, "maxmemory")},
           {"maxmemory_policy", text_of(f, "maxmemory_policy")},
           {"module", emq_module(r.str)},
           {"executor", x.native() ? "native" : "scripted"}}};
}

}  // namespace echomq::cli
