// The whole keyspace of one database, read with plain commands, and the
// differences between two: what the differential and replication tests
// compare. Times (scores and expiry times, both epoch milliseconds) may
// differ by a tolerance, since two servers or two databases never run in
// the same millisecond; every other byte must be equal. Expiries are read
// as PEXPIRETIME, a point in time, not PTTL: a TTL shrinks while the test
// restarts a server, and a slow restart under load failed the AOF test.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "echomq/connection.h"

namespace echomq::test {

struct KeyState {
  std::string type;
  std::map<std::string, std::string> entries;  // hash field -> value, zset member -> score, string "" -> value,
                                               // list "item <index>" -> value
  std::int64_t expires_at_ms = -1;             // PEXPIRETIME: -1 none
};
using Keyspace = std::map<std::string, KeyState>;

inline Keyspace dump_keyspace(Connection& c) {
  Keyspace out;
  Reply keys = c.command({"KEYS", "*"});
  std::vector<Command> meta;
  for (const Reply& k : keys.elements) {
    meta.push_back({"TYPE", k.str});
    meta.push_back({"PEXPIRETIME", k.str});
  }
  std::vector<Reply> m = c.pipeline(meta);
  std::vector<Command> reads;
  for (std::size_t i = 0; i < keys.elements.size(); ++i) {
    KeyState& s = out[keys.elements[i].str];
    s.type = m[2 * i].str;
    s.expires_at_ms = m[2 * i + 1].integer;
    const std::string& k = keys.elements[i].str;
    if (s.type == "hash")
      reads.push_back({"HGETALL", k});
    else if (s.type == "zset")
      reads.push_back({"ZRANGE", k, "0", "-1", "WITHSCORES"});
    else if (s.type == "string")
      reads.push_back({"GET", k});
    else if (s.type == "set")
      reads.push_back({"SMEMBERS", k});
    else if (s.type == "stream")
      reads.push_back({"XRANGE", k, "-", "+"});
    else if (s.type == "list")
      reads.push_back({"LRANGE", k, "0", "-1"});
    else
      reads.push_back({"TYPE", k});
  }
  std::vector<Reply> r = c.pipeline(reads);
  for (std::size_t i = 0; i < keys.elements.size(); ++i) {
    KeyState& s = out[keys.elements[i].str];
    const Reply& v = r[i];
    if (s.type == "hash" || s.type == "zset") {
      for (std::size_t j = 0; j + 1 < v.elements.size(); j += 2) s.entries[v.elements[j].str] = v.elements[j + 1].str;
    } else if (s.type == "set") {
      for (const Reply& e : v.elements) s.entries[e.str] = "";
    } else if (s.type == "list") {
      for (std::size_t j = 0; j < v.elements.size(); ++j) {
        char at[32];
        std::snprintf(at, sizeof at, "item %06zu", j);
        s.entries[at] = v.elements[j].str;
      }
    } else if (s.type == "stream") {
      // Entry ids are the server's clock: masked, the entries kept in order.
      for (std::size_t j = 0; j < v.elements.size(); ++j) {
        std::string fields;
        for (const Reply& f : v.elements[j].elements[1].elements) fields += f.str + '\0';
        char at[32];
        std::snprintf(at, sizeof at, "entry %06zu", j);
        s.entries[at] = fields;
      }
    } else {
      s.entries[""] = v.str;
    }
  }
  return out;
}

// A score is a time when it is an epoch millisecond (lanes are -1000..1000).
inline bool same_score(const std::string& a, const std::string& b, std::int64_t tolerance_ms) {
  if (a == b) return true;
  const double x = std::stod(a), y = std::stod(b);
  return std::fabs(x) > 1e11 && std::fabs(y) > 1e11 && std::fabs(x - y) <= static_cast<double>(tolerance_ms);
}

inline std::string show(const std::string& bytes) {
  std::string out;
  for (unsigned char ch : bytes) {
    if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
      out += static_cast<char>(ch);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

// One line per difference; empty when the two keyspaces are the same.
inline std::vector<std::string> keyspace_diff(const Keyspace& a, const Keyspace& b, std::int64_t tolerance_ms) {
  std::vector<std::string> out;
  for (const auto& [key, sa] : a) {
    auto it = b.find(key);
    if (it == b.end()) {
      out.push_back(show(key) + ": only in the first");
      continue;
    }
    const KeyState& sb = it->second;
    if (sa.type != sb.type) out.push_back(show(key) + ": type " + sa.type + " vs " + sb.type);
    const bool a_expires = sa.expires_at_ms >= 0, b_expires = sb.expires_at_ms >= 0;
    if (a_expires != b_expires || std::llabs(sa.expires_at_ms - sb.expires_at_ms) > tolerance_ms) {
      out.push_back(show(key) + ": expires at " + std::to_string(sa.expires_at_ms) + " vs " +
                    std::to_string(sb.expires_at_ms));
    }
    for (const auto& [field, va] : sa.entries) {
      auto f = sb.entries.find(field);
      if (f == sb.entries.end()) {
        out.push_back(show(key) + " " + show(field) + ": only in the first");
      } else if (va != f->second && !(sa.type == "zset" && same_score(va, f->second, tolerance_ms))) {
        out.push_back(show(key) + " " + show(field) + ": " + show(va) + " vs " + show(f->second));
      }
    }
    for (const auto& [field, vb] : sb.entries) {
      if (sa.entries.count(field) == 0) out.push_back(show(key) + " " + show(field) + ": only in the second");
    }
  }
  for (const auto& [key, sb] : b) {
    if (a.count(key) == 0) out.push_back(show(key) + ": only in the second");
  }
  return out;
}

}  // namespace echomq::test
