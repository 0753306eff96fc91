#include "echomq/daemons.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "echomq/errors.h"
#include "echomq/keyspace.h"
#include "echomq/whole_number.h"

namespace echomq {

namespace {

using json = nlohmann::json;

// A daemon id's host part, at most (PROTOCOL.md, "Daemons").
constexpr std::size_t kHostMax = 64;

void read_number(const std::map<std::string, std::string>& h, const char* field, std::int64_t& out,
                 std::vector<std::string>& problems) {
  auto it = h.find(field);
  if (it == h.end()) return;
  if (auto v = whole_number(it->second)) {
    out = *v;
  } else {
    problems.push_back(std::string(field) + " holds '" + it->second.substr(0, 40) + "', not an integer");
  }
}

// The hash's fields into a DaemonInfo.
DaemonInfo daemon_of(const std::string& id, const Reply& hash) {
  DaemonInfo d;
  d.id = id;
  std::map<std::string, std::string> h;
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) h[hash.elements[i].str] = hash.elements[i + 1].str;
  const auto get = [&](const char* f) {
    auto it = h.find(f);
    return it == h.end() ? std::string() : it->second;
  };
  d.host = get("host");
  d.version = get("version");
  d.state = get("state");
  d.executor = get("executor");
  read_number(h, "pid", d.pid, d.problems);
  read_number(h, "started_ms", d.started_ms, d.problems);
  read_number(h, "beat_ms", d.beat_ms, d.problems);
  read_number(h, "slots", d.slots, d.problems);
  read_number(h, "busy", d.busy, d.problems);
  read_number(h, "prefetched", d.prefetched, d.problems);
  if (h.count("ack") != 0) {
    d.ack = parse_ack(h["ack"]);
    if (!d.ack) d.problems.push_back("ack holds '" + h["ack"].substr(0, 40) + "', not <signal>:<ms>");
  }
  const json queues = json::parse(get("queues"), nullptr, false);
  if (queues.is_array()) {
    for (const json& q : queues) {
      if (q.is_string()) d.queues.push_back(q.get<std::string>());
    }
  } else if (h.count("queues") != 0) {
    d.problems.push_back("queues is not a JSON array");
  }
  return d;
}

// A registry key the server would not read, as a problem that names it
// and says what to do; a transient refusal (the server loading) is the
// server's state, not the key's, and is thrown.
std::string unreadable(const std::string& key, const Reply& r) {
  Error e = error_from_reply("daemons", r.str);
  if (e.transient()) throw e;
  const std::string named = key.substr(0, 120);
  std::string text = named + " cannot be read: " + r.str.substr(0, 200);
  if (r.str.rfind("WRONGTYPE", 0) == 0) {
    text += "; another writer put a key of another type there: delete it (DEL " + named +
            "), and a live daemon writes it again at its next beat";
  }
  return text;
}

// One entry of a work hash: "<queue>:<id>" -> JSON.
std::optional<DaemonJob> job_of(const std::string& ref, const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  DaemonJob job;
  const std::size_t colon = ref.find(':');
  job.queue = j.value("queue", colon == std::string::npos ? std::string() : ref.substr(0, colon));
  job.id = j.value("id", colon == std::string::npos ? ref : ref.substr(colon + 1));
  if (j.contains("attempt") && j["attempt"].is_number_integer()) job.attempt = j["attempt"].get<std::int64_t>();
  if (j.contains("started_ms") && j["started_ms"].is_number_integer()) {
    job.started_ms = j["started_ms"].get<std::int64_t>();
  }
  if (j.contains("progress"))
    job.progress = j["progress"].is_string() ? j["progress"].get<std::string>() : j["progress"].dump();
  job.prefetched = j.contains("prefetched") && j["prefetched"] == true;
  return job;
}

}  // namespace

DaemonKeys::DaemonKeys(std::string_view daemon_id)
    : hash(std::string(kDaemonKeyRoot) + std::string(daemon_id)), work(hash + ":work"), signals(hash + ":signals") {}

std::string daemon_host(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (ok && out.size() < kHostMax) out += c;
  }
  return out.empty() ? "host" : out;
}

std::string new_daemon_id(std::string_view host, std::int64_t pid) {
  std::random_device rd;
  char hex[8];
  std::snprintf(hex, sizeof hex, "%06x", static_cast<unsigned>(rd() & 0xffffffu));
  return daemon_host(host) + "-" + std::to_string(pid) + "-" + hex;
}

bool valid_daemon_id(std::string_view id) {
  // From the end: 6 hex, a dash, the pid's digits, a dash, then the host.
  if (id.size() < 10 || id.size() > kHostMax + 28) return false;
  const std::string_view hex = id.substr(id.size() - 6);
  if (!std::all_of(hex.begin(), hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    return false;
  }
  const std::string_view rest = id.substr(0, id.size() - 7);
  const std::size_t dash = rest.rfind('-');
  if (id[id.size() - 7] != '-' || dash == std::string_view::npos || dash == 0 || dash + 1 == rest.size()) {
    return false;
  }
  const std::string_view pid = rest.substr(dash + 1);
  if (!std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return daemon_host(rest.substr(0, dash)) == rest.substr(0, dash);
}

std::optional<DaemonAck> parse_ack(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::optional<std::int64_t> at = whole_number(text.substr(colon + 1));
  if (!at) return std::nullopt;
  return DaemonAck{std::string(text.substr(0, colon)), *at};
}

std::string format_ack(const DaemonAck& ack) { return ack.signal + ":" + std::to_string(ack.at_ms); }

std::optional<std::int64_t> DaemonInfo::beat_every_ms(std::int64_t now_ms) const {
  if (ttl_ms <= 0) return std::nullopt;
  // The expiry was set at beat_ms to kBeatsToLive beats.
  const std::int64_t every = (ttl_ms + std::max<std::int64_t>(0, now_ms - beat_ms)) / kBeatsToLive;
  return every > 0 ? std::optional<std::int64_t>(every) : std::nullopt;
}

std::vector<DaemonRead> read_daemons(Executor& x, const std::vector<std::string>& ids, bool with_jobs) {
  std::vector<Command> reads;
  for (const std::string& id : ids) {
    const DaemonKeys k(id);
    reads.push_back({"HGETALL", k.hash});
    reads.push_back({"PTTL", k.hash});
    if (with_jobs) reads.push_back({"HGETALL", k.work});
  }
  const std::size_t per = with_jobs ? 3 : 2;
  const std::vector<Reply> r = reads.empty() ? std::vector<Reply>{} : x.pipeline(reads);
  std::vector<DaemonRead> out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Reply* at = &r[i * per];
    if (at[0].is_error()) {
      out.push_back({std::nullopt, unreadable(DaemonKeys(ids[i]).hash, at[0])});
      continue;
    }
    if (at[0].elements.empty()) {
      out.emplace_back();  // its hash expired, or it said farewell
      continue;
    }
    DaemonInfo d = daemon_of(ids[i], at[0]);
    d.ttl_ms = at[1].type == Reply::Type::Integer ? at[1].integer : -1;
    if (with_jobs && at[2].is_error()) d.problems.push_back(unreadable(DaemonKeys(ids[i]).work, at[2]));
    if (with_jobs) {
      for (std::size_t f = 0; f + 1 < at[2].elements.size(); f += 2) {
        if (auto job = job_of(at[2].elements[f].str, at[2].elements[f + 1].str)) {
          d.jobs.push_back(std::move(*job));
        } else {
          d.problems.push_back("work entry " + at[2].elements[f].str.substr(0, 80) + " is not a JSON object");
        }
      }
      std::sort(d.jobs.begin(), d.jobs.end(),
                [](const DaemonJob& a, const DaemonJob& b) { return a.started_ms < b.started_ms; });
    }
    out.push_back({std::move(d), ""});
  }
  return out;
}

Fleet list_daemons(Executor& x, bool with_jobs) {
  Fleet fleet;
  fleet.server_time_ms = x.server_time_ms();
  const std::string key(kDaemonsKey);
  Reply members = x.command({"ZRANGE", key, "0", "-1", "WITHSCORES"});
  if (members.is_error()) {
    fleet.problems.push_back(unreadable(key, members));
    fleet.readable = false;
    return fleet;
  }
  std::vector<std::string> ids;
  std::vector<std::int64_t> beats;
  for (std::size_t i = 0; i + 1 < members.elements.size(); i += 2) {
    ids.push_back(members.elements[i].str);
    beats.push_back(whole_number(members.elements[i + 1].str).value_or(0));
  }
  std::vector<DaemonRead> read = read_daemons(x, ids, with_jobs);
  Command forget{"ZREM", key};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (read[i].daemon) {
      fleet.daemons.push_back(std::move(*read[i].daemon));
      continue;
    }
    if (!read[i].problem.empty()) {
      fleet.problems.push_back(std::move(read[i].problem));
      continue;
    }
    // A ghost: it stopped beating without a farewell (killed, or cut off).
    ++fleet.ghosts;
    if (fleet.server_time_ms - beats[i] > kForgetDaemonAfterMs) forget.push_back(ids[i]);
  }
  std::sort(fleet.daemons.begin(), fleet.daemons.end(),
            [](const DaemonInfo& a, const DaemonInfo& b) { return a.id < b.id; });
  // Cleaning is a courtesy of readers: one that may not write (a
  // read-only user, a replica) still lists.
  if (forget.size() > 2 && !x.command(forget).is_error()) fleet.forgotten = forget.size() - 2;
  return fleet;
}

bool send_signal(Executor& x, const DaemonInfo& to, std::string_view signal) {
  const DaemonKeys k(to.id);
  const std::int64_t now = x.server_time_ms();
  const std::int64_t every = to.beat_every_ms(now).value_or(60000);
  // Sent only to a daemon whose hash is there, and kept no longer than it
  // would live without beating again.
  std::vector<Reply> r = x.pipeline({{"EXISTS", k.hash}});
  if (r[0].is_error()) throw error_from_reply("signal", r[0].str);
  if (r[0].integer == 0) return false;
  r = x.pipeline(
      {{"RPUSH", k.signals, std::string(signal)}, {"PEXPIRE", k.signals, std::to_string(every * kBeatsToLive)}});
  for (const Reply& each : r) {
    if (each.is_error()) throw error_from_reply("signal", each.str);
  }
  return true;
}

std::vector<Command> beat_commands(const DaemonInfo& b, std::int64_t now_ms, std::int64_t beat_ms,
                                   std::int64_t max_signals) {
  const DaemonKeys k(b.id);
  const std::string ttl = std::to_string(beat_ms * kBeatsToLive);
  Command hash{"HSET",       k.hash,
               "host",       b.host,
               "pid",        std::to_string(b.pid),
               "version",    b.version,
               "started_ms", std::to_string(b.started_ms),
               "beat_ms",    std::to_string(now_ms),
               "state",      b.state,
               "queues",     json(b.queues).dump(),
               "slots",      std::to_string(b.slots),
               "busy",       std::to_string(b.busy),
               "prefetched", std::to_string(b.prefetched),
               "executor",   b.executor};
  if (b.ack) hash.insert(hash.end(), {"ack", format_ack(*b.ack)});
  std::vector<Command> out = {{"MULTI"}, std::move(hash), {"PEXPIRE", k.hash, ttl}, {"DEL", k.work}};
  if (!b.jobs.empty()) {
    Command work{"HSET", k.work};
    for (const DaemonJob& j : b.jobs) {
      // In the order the wire lists the fields, for whoever reads it raw.
      nlohmann::ordered_json o = {
          {"queue", j.queue}, {"id", j.id}, {"attempt", j.attempt}, {"started_ms", j.started_ms}};
      if (j.progress) o["progress"] = *j.progress;
      if (j.prefetched) o["prefetched"] = true;
      work.push_back(j.queue + ":" + j.id);
      // Ids read back from the server may hold any bytes: replaced, not thrown.
      work.push_back(o.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    out.push_back(std::move(work));
    out.push_back({"PEXPIRE", k.work, ttl});
  }
  out.push_back({"ZADD", std::string(kDaemonsKey), std::to_string(now_ms), b.id});
  out.push_back({"EXEC"});
  out.push_back({"LPOP", k.signals, std::to_string(max_signals)});
  // As a reader: members older than an hour go; then the live and the
  // ghosts, by this daemon's own beat.
  const std::string alive_since = std::to_string(now_ms - beat_ms * kBeatsToLive);
  const std::string forget_before = std::to_string(now_ms - kForgetDaemonAfterMs);
  const std::string key(kDaemonsKey);
  out.push_back({"ZREMRANGEBYSCORE", key, "-inf", "(" + forget_before});
  out.push_back({"ZCOUNT", key, alive_since, "+inf"});
  out.push_back({"ZCOUNT", key, forget_before, "(" + alive_since});
  return out;
}

std::vector<Command> farewell_commands(std::string_view daemon_id) {
  const DaemonKeys k(daemon_id);
  return {{"ZREM", std::string(kDaemonsKey), std::string(daemon_id)}, {"DEL", k.hash, k.work, k.signals}};
}

}  // namespace echomq
