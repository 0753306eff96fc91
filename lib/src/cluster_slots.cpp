#include <algorithm>
#include <cctype>
#include <limits>

#include "echomq/cluster.h"
#include "echomq/errors.h"
#include "echomq/whole_number.h"
#include "transport.h"

namespace echomq {

namespace {
std::uint16_t crc16_xmodem(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (unsigned char b : bytes) {
    crc ^= static_cast<std::uint16_t>(b << 8);
    for (int i = 0; i < 8; ++i) {
      const bool high = (crc & 0x8000) != 0;
      crc = static_cast<std::uint16_t>(crc << 1);
      if (high) crc ^= 0x1021;
    }
  }
  return crc;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

// Commands whose first argument is not a key: the ones this library and
// its callers send unkeyed. Anything else is routed by argv[1].
constexpr std::string_view kKeyless[] = {"TIME",   "PING", "INFO",   "CONFIG", "CLUSTER", "SCRIPT",  "CLIENT",
                                         "MODULE", "WAIT", "DBSIZE", "ECHO",   "HELLO",   "COMMAND", "ROLE"};

bool parse_int(std::string_view s, int& out) {
  const std::optional<std::int64_t> n = whole_number(s);
  if (!n || *n < std::numeric_limits<int>::min() || *n > std::numeric_limits<int>::max()) return false;
  out = static_cast<int>(*n);
  return true;
}
}  // namespace

std::uint16_t key_slot(std::string_view key) {
  const std::size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const std::size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return static_cast<std::uint16_t>(crc16_xmodem(key) & (kClusterSlots - 1));
}

std::string_view routing_key(const Command& argv) {
  if (argv.size() < 2) return {};
  for (std::string_view k : kKeyless) {
    if (iequals(argv[0], k)) return {};
  }
  // XREAD [COUNT n] [BLOCK ms] STREAMS key... id...: the first key.
  if (iequals(argv[0], "XREAD")) {
    for (std::size_t i = 1; i + 1 < argv.size(); ++i) {
      if (iequals(argv[i], "STREAMS")) return argv[i + 1];
    }
    return {};
  }
  return argv[1];
}

int SlotMap::index_of(const NodeAddress& node) {
  auto it = std::find(primaries_.begin(), primaries_.end(), node);
  if (it != primaries_.end()) return static_cast<int>(it - primaries_.begin());
  primaries_.push_back(node);
  return static_cast<int>(primaries_.size() - 1);
}

const NodeAddress* SlotMap::owner(std::uint16_t slot) const {
  const int i = owner_[slot % kClusterSlots];
  return i < 0 ? nullptr : &primaries_[static_cast<std::size_t>(i)];
}

std::size_t SlotMap::covered() const {
  return static_cast<std::size_t>(std::count_if(owner_.begin(), owner_.end(), [](std::int16_t i) { return i >= 0; }));
}

void SlotMap::assign(std::uint16_t slot, const NodeAddress& node) {
  owner_[slot % kClusterSlots] = static_cast<std::int16_t>(index_of(node));
}

SlotMap SlotMap::from_cluster_slots(const Reply& slots, const std::string& seed_host) {
  SlotMap map;
  // Each range: [start, end, [endpoint, port, id, ...] (the primary), replicas...].
  for (const Reply& range : slots.elements) {
    if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
    const Reply& primary = range.elements[2];
    NodeAddress node;
    const std::string& endpoint = primary.elements[0].str;
    node.host = endpoint.empty() || endpoint == "?" ? seed_host : endpoint;
    node.port = static_cast<int>(primary.elements[1].integer);
    const int at = map.index_of(node);
    const auto first = std::max<std::int64_t>(range.elements[0].integer, 0);
    const auto last = std::min<std::int64_t>(range.elements[1].integer, kClusterSlots - 1);
    for (std::int64_t s = first; s <= last; ++s) {
      map.owner_[static_cast<std::size_t>(s)] = static_cast<std::int16_t>(at);
    }
  }
  return map;
}

SlotMap read_slot_map(Connection& c, const std::string& seed_host) {
  Reply r = c.command({"CLUSTER", "SLOTS"});
  if (r.is_error()) throw error_from_reply("cluster slots", r.str);
  SlotMap map = SlotMap::from_cluster_slots(r, seed_host);
  if (map.empty()) {
    throw Error(ErrorKind::Io, "cluster slots",
                "the cluster serves no slot yet (CLUSTER SLOTS is empty): wait until it is formed "
                "(cluster_state:ok in CLUSTER INFO)");
  }
  return map;
}

ConnectionOptions node_options(const ConnectionOptions& seed, const NodeAddress& node) {
  ConnectionOptions o = seed;
  o.unix_path.clear();
  o.host = node.host;
  o.port = node.port;
  // A name given in the URL is the cluster's certificate name (managed
  // services issue one for all nodes); an address in the URL names only
  // that node, so each node is then verified by its own.
  if (o.tls.enabled && o.tls.server_name.empty() && !is_ip_address(seed.host)) o.tls.server_name = seed.host;
  return o;
}

bool cluster_enabled(const Reply& info) {
  return info.type == Reply::Type::String && info.str.find("cluster_enabled:1") != std::string::npos;
}

bool parse_redirect(const Reply& r, Redirect& out) {
  if (!r.is_error()) return false;
  std::string_view text = r.str;
  if (text.rfind("MOVED ", 0) == 0) {
    out.ask = false;
    text.remove_prefix(6);
  } else if (text.rfind("ASK ", 0) == 0) {
    out.ask = true;
    text.remove_prefix(4);
  } else {
    return false;
  }
  const std::size_t space = text.find(' ');
  const std::size_t colon = text.rfind(':');
  int slot = 0;
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space ||
      !parse_int(text.substr(0, space), slot) || !parse_int(text.substr(colon + 1), out.node.port)) {
    return false;
  }
  out.slot = static_cast<std::uint16_t>(slot);
  out.node.host = std::string(text.substr(space + 1, colon - space - 1));
  return true;
}

}  // namespace echomq
