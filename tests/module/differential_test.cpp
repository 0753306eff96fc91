// The proof of sameness: one seeded random run of transitions, in lockstep
// on two databases of one server, db 0 through the scripts and db 1 through
// the emq module. After every step the replies, the keyspace events the
// step emitted, and the whole keyspace of each database must be equal
// (times within a tolerance). The run mixes in what the module must treat
// as the scripts do: duplicates, stale epochs, malformed rows, binary
// payloads, kept results, backoffs, permanent failures, and the lanes,
// delays, reaps and maintenance that stay scripts on either executor. It
// also corrupts the rows and counters of jobs already in flight, every
// field a transition reads (lane, attempts, lease_epoch, failures, the
// stats counters, the row's type), and after every step checks what no
// corruption may break: each emq/1 row's state names the one set holding
// its id (none when completed).
//
// It draws pauses with who, why and an end (none, ahead, come, broken),
// so that both lift an ended pause alike and refuse a broken end alike.
// It draws the queue's limits too: max_active, rates, broken limit fields,
// and before each claim of a queue with a rate, the bucket as the clock
// left it (full, refilled in part, a clock that stepped back past rate_at,
// a day of silence, a broken bucket). The two sides never run in the same
// millisecond, so the bucket is planted with room for the gap: the claim's
// token count cannot depend on it. Each side's new bucket is checked to
// the unit against the contract's formula at the time it wrote (rate_at),
// and across the sides rate_at is a time and rate_credit differs by at
// most rate_max per millisecond between them.
//
// It draws flows too (differential_flows.h): trees of parents and
// children, settled through complete_flow and fail_flow, told through the
// scripts a drainer runs, their rows, outbox, deps and results broken,
// with the stream on and off; its closing line counts them.
//
// It draws trace contexts too (traceparent, with a tracestate or not) on
// the optioned enqueue, written alike to the row on both sides.
//
// It draws unique keys too: jobs enqueued with a key of a small pool in
// every mode (windows that expire at once and that outlive the run),
// replacements with and without a due time, settles that pass the uniq
// root and that do not (leaving stale pointers), and stale pointers made
// by hand (a holder's row deleted or made a string, a lock of garbage or
// of another type); after every step no two live jobs share a key.
//
// It draws the queue's events too: the stream passed or not, of lengths
// that trim it and that do not, the stream made another type by some
// other writer, and the progress transition, so that the EMQ.* commands
// must append what the scripts append. Entries are compared with their ids
// masked; the server keeps stream nodes by count alone
// (stream-node-max-bytes 0), so approximate trimming cuts the same
// entries on both sides whatever the ids' sizes.
//
// It draws groups too (differential_groups.h): grouped jobs entering
// their groups through retry_job, promote_job and claim's promotion,
// policies with weights, caps, rates and pauses (and broken ones), group
// keys broken, all beside ungrouped jobs and an emq/1 peer's reap; after
// every step the groups' counts and the rotation must hold together.
//
// EMQ_DIFF_SEED and EMQ_DIFF_STEPS replay or lengthen a run; the seed and
// the step count are printed either way.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "echomq/events.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"
#include "echomq/transitions.h"
#include "differential_flows.h"
#include "differential_groups.h"
#include "keyspace_dump.h"
#include "valkey_server.h"
#include "wait_for.h"

namespace echomq::test {
namespace {

constexpr std::int64_t kToleranceMs = 5000;
constexpr std::int64_t kLong = 3600000;  // never due, never expired during a run
constexpr const char* kFence = "emq-diff-fence";
// The most a bucket planted before a claim allows between the reading of
// the server's clock and either side's claim.
constexpr std::int64_t kBucketSlackMs = 5000;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

// Every keyspace event of the server, split by database, in order.
class EventTap {
 public:
  explicit EventTap(int port) : c_(redisConnect("127.0.0.1", port), redisFree) {
    if (c_ == nullptr || c_->err) throw std::runtime_error("event tap cannot connect");
    timeval tv{10, 0};
    redisSetTimeout(c_.get(), tv);
    expect_reply(static_cast<redisReply*>(redisCommand(c_.get(), "PSUBSCRIBE __keyspace@*__:*")));
    expect_reply(static_cast<redisReply*>(redisCommand(c_.get(), "SUBSCRIBE %s", kFence)));
  }

  // The events up to the fence published with this mark: db -> "key event".
  std::map<int, std::vector<std::string>> until(const std::string& mark) {
    std::map<int, std::vector<std::string>> out;
    while (true) {
      void* raw = nullptr;
      if (redisGetReply(c_.get(), &raw) != REDIS_OK || raw == nullptr) {
        throw std::runtime_error("event tap lost the server");
      }
      std::unique_ptr<redisReply, decltype(&freeReplyObject)> r(static_cast<redisReply*>(raw), freeReplyObject);
      std::string kind(r->element[0]->str, r->element[0]->len);
      if (kind == "message") {
        if (std::string(r->element[2]->str, r->element[2]->len) == mark) return out;
        continue;
      }
      std::string channel(r->element[2]->str, r->element[2]->len);  // __keyspace@<db>__:<key>
      const std::size_t at = channel.find('@'), colon = channel.find("__:");
      const int db = std::stoi(channel.substr(at + 1, colon - at - 1));
      out[db].push_back(channel.substr(colon + 3) + " " + std::string(r->element[3]->str, r->element[3]->len));
    }
  }

 private:
  static void expect_reply(redisReply* r) {
    if (r == nullptr) throw std::runtime_error("event tap: subscribe failed");
    freeReplyObject(r);
  }
  std::unique_ptr<redisContext, decltype(&redisFree)> c_;
};

// A row counter as the transitions accept it: the server's integer form in
// 18 characters at most.
bool is_counter(const std::string& v) {
  static const std::regex form("0|-?[1-9][0-9]*");
  return v.size() <= 18 && std::regex_match(v, form);
}

// The invariant: every row that is a hash, whatever its counters hold, is
// in exactly the set its state names, and in no other (claim and reap send
// a hash with a broken counter to dead, as PROTOCOL.md says; only a key
// that is not a hash is dropped from its set). One line per row that is
// not. Ids whose running row an operator deleted (gone) are left out:
// their old lease stays in active until a reap, whatever the id becomes.
std::vector<std::string> stranded(const Keyspace& ks, const QueueKeys& q, const std::set<std::string>& gone) {
  const std::map<std::string, std::string> sets{
      {"pending", q.pending}, {"active", q.active}, {"delayed", q.delayed}, {"dead", q.dead}};
  std::vector<std::string> out;
  for (const auto& [key, row] : ks) {
    if (key.rfind(q.row_root, 0) != 0 || row.type != "hash") continue;
    const std::string id = key.substr(q.row_root.size());
    if (gone.count(id) == 1) continue;
    auto state = row.entries.find("state");
    const std::string named = state == row.entries.end() ? "(none)" : state->second;
    // A grouped job that is pending waits in its group's zset instead.
    auto group = row.entries.find("group");
    const std::string own_gq =
        group != row.entries.end() && valid_group_name(group->second) ? q.gq(group->second) : std::string();
    for (const auto& [name, set] : sets) {
      auto s = ks.find(set);
      bool holds = s != ks.end() && s->second.entries.count(id) == 1;
      if (name == "pending" && !own_gq.empty() && !holds) {
        auto g = ks.find(own_gq);
        holds = g != ks.end() && g->second.type == "zset" && g->second.entries.count(id) == 1;
      }
      if (holds != (name == named)) {
        out.push_back(show(id) + " in state " + show(named) + (holds ? " is also in " : " is not in ") + name);
      }
    }
  }
  return out;
}

// Unique keys: no two live jobs hold one key (PROTOCOL.md, "Unique jobs"):
// rows carrying the same key in a state their own mode covers, a window
// aside (a throttle, which lets a second job in once it expires), a
// started-mode job once claimed aside. One line per key held twice.
std::vector<std::string> shared_keys(const Keyspace& ks, const QueueKeys& q) {
  std::map<std::string, std::vector<std::string>> holders;
  for (const auto& [key, row] : ks) {
    if (key.rfind(q.row_root, 0) != 0 || row.type != "hash") continue;
    const auto field = [&](const char* f) {
      auto it = row.entries.find(f);
      return it == row.entries.end() ? std::string() : it->second;
    };
    const std::string k = field("unique"), mode = field("unique_mode"), state = field("state");
    // A started-mode job holds its key until its first claim: once claimed
    // (a lease_epoch), a retry does not make it a holder again.
    const bool claimed = row.entries.count("lease_epoch") == 1;
    const bool covered = mode == "started"
                             ? !claimed && (state == "pending" || state == "delayed" || state == "waiting")
                             : state == "pending" || state == "delayed" || state == "waiting" || state == "active";
    if (!k.empty() && mode != "window" && covered) holders[k].push_back(key.substr(q.row_root.size()) + " " + state);
  }
  std::vector<std::string> out;
  for (const auto& [k, rows] : holders) {
    if (rows.size() < 2) continue;
    std::string line = "key " + k + " is held by";
    for (const std::string& r : rows) line += " " + r;
    out.push_back(line);
  }
  return out;
}

std::string first_word(const std::string& s) { return s.substr(0, s.find(' ')); }

std::optional<std::int64_t> integer(const std::map<std::string, std::string>& fields, const std::string& name) {
  auto it = fields.find(name);
  if (it == fields.end() || !is_counter(it->second)) return std::nullopt;
  return std::stoll(it->second);
}

// The rate's bucket in meta is written at each side's own `now`: rate_at
// is a time, and rate_credit may differ by rate_max (at most max_rate) per
// millisecond between the two. Checked here, then taken out of both dumps so that every other
// byte is compared as it is. "" when the two agree.
std::string set_bucket_aside(Keyspace& a, Keyspace& b, const QueueKeys& q, std::int64_t tolerance_ms,
                             std::int64_t max_rate) {
  auto ma = a.find(q.meta), mb = b.find(q.meta);
  if (ma == a.end() || mb == b.end()) return "";
  auto& fa = ma->second.entries;
  auto& fb = mb->second.entries;
  const auto ta = integer(fa, "rate_at"), tb = integer(fb, "rate_at");
  const auto ca = integer(fa, "rate_credit"), cb = integer(fb, "rate_credit");
  if (!ta || !tb || !ca || !cb) return "";  // compared byte for byte
  const std::int64_t gap = std::llabs(*ta - *tb);
  if (gap > tolerance_ms) return "rate_at " + std::to_string(*ta) + " vs " + std::to_string(*tb);
  // Bounded by the largest rate the run draws: the bucket may outlive its
  // rate (a rate_max broken later leaves it in place).
  if (std::llabs(*ca - *cb) > gap * max_rate) {
    return "rate_credit " + std::to_string(*ca) + " vs " + std::to_string(*cb) + " with rate_at " +
           std::to_string(*ta) + " vs " + std::to_string(*tb);
  }
  for (const char* f : {"rate_at", "rate_credit"}) {
    fa.erase(f);
    fb.erase(f);
  }
  return "";
}

// The same for each group's bucket (grp:<g>), written at each side's now.
// Unlike the queue's, a group's bucket is not planted before each claim,
// so the two sides' buckets are the same line of credit over time shifted
// by when each side last spent (up to tolerance_ms apart), not by their
// last rate_at: two claims in the same ms after spends a ms apart leave
// equal rate_at and credits max_rate apart. So the credits may differ by
// the tolerance's worth at the largest rate, whatever the gap now; a
// token spent on one side only is a window's worth, far beyond it.
std::string set_group_buckets_aside(Keyspace& a, Keyspace& b, const QueueKeys& q, std::int64_t tolerance_ms,
                                    std::int64_t max_rate) {
  for (auto& [key, state] : a) {
    if (key.rfind(q.grp_root, 0) != 0 || state.type != "hash" || !b.count(key)) continue;
    auto& fa = state.entries;
    auto& fb = b.at(key).entries;
    const auto ta = integer(fa, "rate_at"), tb = integer(fb, "rate_at");
    const auto ca = integer(fa, "rate_credit"), cb = integer(fb, "rate_credit");
    if (!ta || !tb || !ca || !cb) continue;
    const std::int64_t gap = std::llabs(*ta - *tb);
    if (gap > tolerance_ms || std::llabs(*ca - *cb) > tolerance_ms * max_rate) {
      return key + " buckets differ: rate_at " + std::to_string(*ta) + " vs " + std::to_string(*tb) + ", rate_credit " +
             std::to_string(*ca) + " vs " + std::to_string(*cb);
    }
    for (const char* f : {"rate_at", "rate_credit"}) {
      fa.erase(f);
      fb.erase(f);
    }
  }
  return "";
}

// Equal replies; an error of our own (EMQ...) equal to the byte, another
// server error equal in its code (a script's adds where in the script).
bool same_reply(const Reply& a, const Reply& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case Reply::Type::Error:
      return a.str.rfind("EMQ", 0) == 0 ? a.str == b.str : first_word(a.str) == first_word(b.str);
    case Reply::Type::Integer: return a.integer == b.integer;
    case Reply::Type::Array:
      if (a.elements.size() != b.elements.size()) return false;
      for (std::size_t i = 0; i < a.elements.size(); ++i) {
        if (!same_reply(a.elements[i], b.elements[i])) return false;
      }
      return true;
    default: return a.str == b.str;
  }
}

std::string show_reply(const Reply& r) {
  switch (r.type) {
    case Reply::Type::Nil: return "nil";
    case Reply::Type::Integer: return std::to_string(r.integer);
    case Reply::Type::Array: {
      std::string s = "[";
      for (const Reply& e : r.elements) s += (s.size() > 1 ? ", " : "") + show_reply(e);
      return s + "]";
    }
    case Reply::Type::Error: return "error " + show(r.str);
    default: return "'" + show(r.str) + "'";
  }
}

// One database and the executor that speaks to it.
struct Side {
  Side(const ValkeyServer& server, int db, ExecutorChoice choice)
      : x(options(server, db, choice)), raw(Connection::open(options(server, db, ExecutorChoice::Scripted))) {}
  static ConnectionOptions options(const ValkeyServer& server, int db, ExecutorChoice choice) {
    ConnectionOptions o = server.options();
    o.db = db;
    o.executor = choice;
    return o;
  }
  Executor x;
  Connection raw;  // for what no transition writes: malformed rows, pause
};

// A step: the same call on either side, its reply.
using Step = std::function<Reply(Side&)>;

class Differential : public ::testing::Test {
 protected:
  static ValkeyServer::Options server_options() {
    ValkeyServer::Options o;
    o.load_module = true;
    o.extra_args = {"--notify-keyspace-events",  "KAn", "--stream-node-max-bytes", "0",
                    "--stream-node-max-entries", "4"};
    return o;
  }

  Differential()
      : server(server_options()),
        scripted(server, 0, ExecutorChoice::Scripted),
        native(server, 1, ExecutorChoice::Native),
        control(Connection::open(server.options())),
        q("diff") {}

  std::string new_id() { return "JOB_" + std::to_string(next_id_++); }
  std::string bytes(std::size_t max_len) {
    std::string s(std::uniform_int_distribution<std::size_t>(0, max_len)(rng), '\0');
    for (char& c : s) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    return s;
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }
  std::int64_t pick64(std::int64_t n) { return std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng); }
  bool chance(int percent) { return pick(100) < percent; }

  static Reply eval(Side& s, const ScriptCall& call) { return s.x.eval_batch({call}).front(); }

  // A unique key of the run's small pool, its mode drawn: a window that
  // expires before the next step or outlives the run, a mode left to the
  // default, or none at all.
  std::optional<UniqueKey> some_unique() {
    if (chance(40)) return std::nullopt;
    UniqueKey u{"k" + std::to_string(pick(4)), std::nullopt, 0};
    switch (pick(6)) {
      case 0: break;  // finished, the default
      case 1: u.mode = UniqueMode::Started; break;
      case 2: u.mode = UniqueMode::Replace; break;
      case 3: u.mode = UniqueMode::Finished; break;
      default:
        u.for_ms = chance(50) ? 1 : kLong;
        if (chance(50)) u.mode = UniqueMode::Window;
    }
    ++unique_enqueues_;
    return u;
  }

  // A trace context, or none: a traceparent alone or with a tracestate
  // (empty is not sent), of the sizes the wire allows at their bounds.
  void some_trace_context(JobOptions& job) {
    if (chance(60)) return;
    job.traceparent = "00-" + hex(32) + "-" + hex(16) + "-0" + std::to_string(pick(2));
    if (chance(50)) job.tracestate = chance(20) ? std::string(512, 't') : "v=" + hex(1 + pick(40));
    ++traced_enqueues_;
  }
  std::string hex(int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += "0123456789abcdef"[pick(16)];
    return out;
  }

  // A window of 1 ms set in this step ends on each side a little apart:
  // between the two sides' dumps, or before the fence on one side and after
  // it on the other (its expired event in another step). So each such lock
  // is waited out on both sides before the step is compared; a long window
  // outlives the run.
  void let_short_windows_end() {
    for (Side* side : {&scripted, &native}) {
      for (int k = 0; k < 4; ++k) {
        const std::string lock = q.uniq("k" + std::to_string(k));
        ASSERT_TRUE(wait_for(
            [&] {
              const std::int64_t ttl = side->raw.command({"PTTL", lock}).integer;
              return ttl < 0 || ttl > kLong / 2;
            },
            std::chrono::seconds(1)))
            << lock << " outlived its 1 ms window";
      }
    }
  }

  // Stale pointers made by hand, the same on both sides: a holder's row
  // deleted (and its set entries) or made a string, a lock of garbage or
  // of another type where no live job holds the key.
  Step stale_pointer() {
    ++stale_steps_;
    const std::string k = "k" + std::to_string(pick(4));
    const std::string lock = q.uniq(k);
    Reply held = scripted.raw.command({"GET", lock});
    const std::string h = held.type == Reply::Type::String ? held.str : "";
    if (!h.empty() && h.rfind("JOB", 0) == 0 && chance(70)) {
      const std::string row = q.row_root + h;
      std::vector<Command> plant = {{"DEL", row}};
      for (const std::string* set : {&q.pending, &q.active, &q.delayed, &q.dead}) plant.push_back({"ZREM", *set, h});
      if (chance(50)) plant.push_back({"SET", row, "no longer a hash"});
      return raw_step(std::move(plant));
    }
    if (!h.empty()) return raw_step({{"TYPE", lock}});
    return raw_step({chance(50) ? Command{"SET", lock, "not-an-id"} : Command{"HSET", lock, "f", "v"}});
  }

  // Two enqueues of one fresh key back to back, the run's first step (before
  // any key is broken): the second meets the first holding it, whatever the
  // random draws of the run meet later.
  Step held_key() {
    const std::string first = new_id(), second = new_id();
    ids.push_back(first);
    ids.push_back(second);
    EnqueueOptions o;
    o.job.unique = UniqueKey{"held" + std::to_string(next_id_), std::nullopt, 0};
    const ScriptCall a = ev(enqueue_call(q, first, bytes(16), o)), b = ev(enqueue_call(q, second, bytes(16), o));
    return [a, b](Side& s) {
      eval(s, a);
      return eval(s, b);
    };
  }

  // A settle call without the uniq root, as an emq/1 speaker sends it.
  ScriptCall without_root(ScriptCall call) {
    if (!call.keys.empty() && call.keys.back() == q.uniq_root && chance(25)) call.keys.pop_back();
    return call;
  }

  // A lease to settle: one the run was handed, sometimes made stale.
  Lease some_lease() {
    if (leases.empty() || chance(10)) return {ids.empty() ? new_id() : ids[pick(static_cast<int>(ids.size()))], 1};
    Lease l = leases[pick(static_cast<int>(leases.size()))];
    if (chance(15)) l.epoch -= 1;
    return l;
  }

  // Rows no transition writes, planted on both sides alike: claim must
  // skip each and leave it for an operator.
  Step malformed() {
    const std::string id = new_id();
    const std::string row = q.row(id);
    std::vector<Command> plant;
    switch (pick(5)) {
      case 0: plant = {{"SET", row, "not a hash"}, {"ZADD", q.pending, "0", id}}; break;
      case 1:
        plant = {{"HSET", row, "state", "pending", "attempts", "abc", "payload", "p"}, {"ZADD", q.pending, "0", id}};
        break;
      case 2: plant = {{"ZADD", q.pending, "-1", id}}; break;  // its row is gone
      case 3: plant = {{"HSET", row, "state", "delayed", "lease_epoch", "1.5"}, {"ZADD", q.delayed, "1", id}}; break;
      default:
        plant = {{"HSET", row, "state", "pending", "attempts", "99999999999999999999"}, {"ZADD", q.pending, "2", id}};
    }
    return raw_step(std::move(plant));
  }

  // Plain commands, the same on either side: what no transition writes.
  static Step raw_step(std::vector<Command> plant) {
    return [plant](Side& s) {
      Reply r;
      r.type = Reply::Type::Array;
      for (Reply& each : s.raw.pipeline(plant)) r.elements.push_back(std::move(each));
      return r;
    };
  }

  // A job already in flight, broken by some other writer: a field a
  // transition reads given a value no transition writes (or one at the
  // edge of what is accepted), a stats counter broken, or the row made a
  // string. Every later step must refuse, skip or settle it alike on both
  // sides, and strand nothing.
  Step corrupt() {
    static const std::vector<std::string> lanes = {
        "nan", "-nan", "inf", "1001", "-1001", "1.5", "abc", "", std::string(400, '9'),
        " 5",  "-0",   "007", "1000", "-1000"};
    static const std::vector<std::string> counters = {
        "abc", "1.5", "007", "-0", "", "nan", "99999999999999999999", "999999999999999999", "-3", "0"};
    const std::string id = ids.empty() ? new_id() : ids[pick(static_cast<int>(ids.size()))];
    const std::string row = q.row(id);
    std::vector<Command> plant;
    switch (pick(6)) {
      case 0:
      case 1: plant = {{"HSET", row, "lane", lanes[pick(static_cast<int>(lanes.size()))]}}; break;
      case 2: {
        static const std::vector<std::string> fields = {"attempts", "lease_epoch", "failures"};
        plant = {{"HSET", row, fields[pick(3)], counters[pick(static_cast<int>(counters.size()))]}};
        break;
      }
      case 3: {
        static const std::vector<std::string> fields = {"claimed", "completed", "retried",
                                                        "dead",    "reaped",    "released"};
        plant = {{"HSET", q.stats, fields[pick(6)], counters[pick(static_cast<int>(counters.size()))]}};
        break;
      }
      case 4: plant = {{"DEL", row}, {"SET", row, "no longer a hash"}}; break;
      default: plant = {{"HSET", row, "lane", std::to_string(pick(2001) - 1000)}};  // a lane moved by hand
    }
    return raw_step(std::move(plant));
  }

  // The queue's limits as an operator (or emq limit) sets them: set,
  // cleared, or broken, so that claim must refuse by name alike on both
  // sides. A rate set anew comes with an empty bucket state, as emq limit
  // writes it.
  Step limits() {
    static const std::vector<std::string> broken = {
        "0", "-1", "abc", "1.5", "007", "", "1000001", std::string(30, '9'), " 3", "86400001"};
    static const std::vector<std::int64_t> windows = {60000, 600000, 3600000, 86400000};
    switch (pick(8)) {
      case 0: return raw_step({{"HDEL", q.meta, "max_active", "rate_max", "rate_window_ms", "rate_credit", "rate_at"}});
      case 1:
      case 2: return raw_step({{"HSET", q.meta, "max_active", std::to_string(1 + pick(6))}});
      case 3: return raw_step({{"HDEL", q.meta, "max_active"}});
      case 4:
      case 5:
        return raw_step({{"HSET", q.meta, "rate_max", std::to_string(1 + pick(kMaxRate)), "rate_window_ms",
                          std::to_string(windows[pick(static_cast<int>(windows.size()))])},
                         {"HDEL", q.meta, "rate_credit", "rate_at"}});
      case 6:
        if (chance(50)) return raw_step({{"HDEL", q.meta, chance(50) ? "rate_max" : "rate_window_ms"}});  // half a rate
        return raw_step({{"HDEL", q.meta, "rate_max", "rate_window_ms", "rate_credit", "rate_at"}});
      default: {
        static const std::vector<std::string> fields = {"max_active", "rate_max", "rate_window_ms"};
        return raw_step({{"HSET", q.meta, fields[pick(3)], broken[pick(static_cast<int>(broken.size()))]}});
      }
    }
  }

  // A pause as emq pause and emq resume write it, or as another writer
  // left it: with no end, an end far ahead, an end that has come (the next
  // claim lifts it), a broken end (claim refuses by name), resumed, or
  // `paused` alone deleted (the other fields stay behind, unread).
  Step pause() {
    static const std::vector<std::string> broken = {"soon", "-1", "1.5", "007", "", "1000000000000001", " 5"};
    ++pause_steps_;
    const Command who = {"HSET", q.meta, "paused", "1", "paused_by", "ann@host-a", "paused_reason", bytes(20)};
    switch (pick(6)) {
      case 0: return raw_step({who, {"HDEL", q.meta, "paused_until"}});
      case 1: return raw_step({who, {"HSET", q.meta, "paused_until", std::to_string(server_now() + kLong)}});
      case 2:
        return raw_step({who,
                         {"HSET", q.meta, "paused_until",
                          chance(20) ? std::string("0") : std::to_string(server_now() - pick64(kLong))}});
      case 3: return raw_step({who, {"HSET", q.meta, "paused_until", broken[pick(static_cast<int>(broken.size()))]}});
      case 4: return raw_step({{"HDEL", q.meta, "paused", "paused_by", "paused_reason", "paused_until"}});
      default: return raw_step({{"HDEL", q.meta, "paused"}});
    }
  }

  // The bucket a claim of a queue with a well-formed rate starts from, the
  // same on both sides, as some clock left it. Each case leaves the token
  // count the same at any claim time within kBucketSlackMs of now, so the
  // two sides' replies cannot differ by when they ran; expect_ records
  // what each side must write (checked by bucket_problem).
  std::vector<Command> bucket_before_claim() {
    expect_.reset();
    Reply m =
        scripted.raw.command({"HMGET", q.meta, "paused", "max_active", "rate_max", "rate_window_ms", "paused_until"});
    const auto field = [&](std::size_t i) {
      return m.elements.size() > i && m.elements[i].type == Reply::Type::String ? m.elements[i].str : std::string();
    };
    const std::int64_t now = server_now();
    // A pause whose end has come is lifted by the claim, which then takes
    // tokens: its bucket is planted as any other's.
    const bool ended = is_counter(field(4)) && std::stoll(field(4)) <= now;
    if ((field(0) == "1" && !ended) || (!field(1).empty() && !is_counter(field(1)))) return {};
    if (!is_counter(field(2)) || !is_counter(field(3))) return {};
    Bucket b{std::stoll(field(2)), std::stoll(field(3)), std::nullopt, std::nullopt, now};
    if (b.rate_max < 1 || b.rate_max > kMaxRate || b.window < kBucketSlackMs * (kMaxRate + 1)) return {};
    const std::int64_t cap = b.rate_max * b.window;
    std::vector<Command> plant;
    switch (pick(7)) {
      case 0: plant = {{"HDEL", q.meta, "rate_credit", "rate_at"}}; break;  // full
      case 1:                                                               // half a bucket's state is a full bucket
        plant = {{"HDEL", q.meta, "rate_at"}, {"HSET", q.meta, "rate_credit", std::to_string(pick64(cap + 1))}};
        break;
      case 2:  // the server's clock stepped back behind rate_at: no refill
        b.credit = pick64(cap + 1);
        b.at = b.now + kLong + pick(1000);
        break;
      case 3:  // a window or more of silence: a window's refill, capped
        b.credit = pick64(cap + 1);
        b.at = b.now - b.window - pick64(kLong);
        break;
      case 4:
      case 5: {  // refilled in part, whole tokens away from the gap
        const std::int64_t base = pick64(b.rate_max + 1) * b.window + pick64(b.window - kBucketSlackMs * b.rate_max);
        const std::int64_t elapsed = std::min(pick64(b.window - kBucketSlackMs), base / b.rate_max);
        b.credit = base - elapsed * b.rate_max;
        b.at = b.now - elapsed;
        break;
      }
      default: {  // a broken bucket: refused by name, nothing written
        static const std::vector<std::pair<std::string, std::string>> bad = {
            {"rate_credit", "x"}, {"rate_credit", "-1"}, {"rate_credit", "86400000000001"}, {"rate_credit", "2.5"},
            {"rate_at", "soon"},  {"rate_at", "-5"},     {"rate_at", "1000000000000001"}};
        const auto& [f, v] = bad[pick(static_cast<int>(bad.size()))];
        return {{"HSET", q.meta, "rate_credit", "0", "rate_at", std::to_string(b.now)}, {"HSET", q.meta, f, v}};
      }
    }
    if (b.credit)
      plant = {{"HSET", q.meta, "rate_credit", std::to_string(*b.credit), "rate_at", std::to_string(*b.at)}};
    expect_ = b;
    return plant;
  }

  // What a side's claim wrote to the bucket, against the contract: the
  // credit at its own now (its rate_at), less a window per job claimed.
  std::string bucket_problem(const Keyspace& ks, const Reply& reply) const {
    if (!expect_ || reply.type != Reply::Type::Array) return "";
    const Bucket& b = *expect_;
    auto meta = ks.find(q.meta);
    if (meta == ks.end()) return "no meta after a claim with a rate";
    const auto at = integer(meta->second.entries, "rate_at");
    const auto credit = integer(meta->second.entries, "rate_credit");
    if (!at || !credit) return "no bucket written by a claim with a rate";
    if (*at < b.now || *at > b.now + kBucketSlackMs) {
      return "the claim ran at " + std::to_string(*at) + ", outside the planted bucket's slack from " +
             std::to_string(b.now);
    }
    const std::int64_t cap = b.rate_max * b.window;
    std::int64_t was = cap;
    if (b.credit) {
      was = std::min(cap, *b.credit + std::min(std::max<std::int64_t>(*at - *b.at, 0), b.window) * b.rate_max);
    }
    const std::int64_t claimed = static_cast<std::int64_t>(reply.elements.size() / 4);
    if (claimed > was / b.window)
      return "claimed " + std::to_string(claimed) + " with " + std::to_string(was) + " credit";
    const std::int64_t left = was - claimed * b.window;
    if (*credit != left)
      return "rate_credit " + std::to_string(*credit) + ", the contract says " + std::to_string(left);
    return "";
  }

  // The stream passed from now on, or not, or broken by another writer.
  Step events() {
    static const std::vector<std::int64_t> lengths = {0, 0, 1, 5, 1000};
    events_ = lengths[pick(static_cast<int>(lengths.size()))];
    switch (pick(8)) {
      case 0: return raw_step({{"DEL", q.events}, {"SET", q.events, "not a stream"}});
      case 1: return raw_step({{"DEL", q.events}});  // by hand, as an operator may
      default: return raw_step({{"TYPE", q.events}});
    }
  }

  // A transition's call with the stream, while the run passes it.
  ScriptCall ev(ScriptCall call) const { return with_events(std::move(call), q, events_); }

  // Calls in one batch, their replies as one array; counted for the
  // closing line on the scripted side.
  Reply run_calls(Side& s, const std::vector<ScriptCall>& calls) {
    Reply r;
    r.type = Reply::Type::Array;
    if (calls.empty()) return r;
    r.elements = s.x.eval_batch(calls);
    for (std::size_t i = 0; &s == &scripted && i < calls.size(); ++i) flows_.count(calls[i], r.elements[i]);
    return r;
  }

  // A flow's step: a tree enqueued, a flow job settled while held, a
  // drainer's round, or a flow's keys broken.
  Step flow_step() {
    ++flow_steps_;
    const int roll = pick(10);
    if (roll < 3) {
      std::vector<ScriptCall> calls = flows_.enqueue_tree(ids);
      for (ScriptCall& c : calls) c = ev(std::move(c));
      return [this, calls](Side& s) { return run_calls(s, calls); };
    }
    if (roll < 6) {
      if (std::optional<ScriptCall> call = flows_.settle_held(scripted.raw, leases, bytes(24))) {
        return settle_step(ev(std::move(*call)));
      }
    }
    if (roll < 9) {
      FlowDraws::Round round = flows_.drain_round(scripted.raw);
      return [this, round](Side& s) {
        std::vector<ScriptCall> calls = flows_.round_calls(round, s.raw);
        for (ScriptCall& c : calls) c = ev(std::move(c));
        return run_calls(s, calls);
      };
    }
    return raw_step(flows_.corrupt(scripted.raw));
  }

  // A group's step: a grouped job entering its group, one cancelled, a
  // policy written, a group's key broken by some other writer, or a
  // running grouped job's row deleted.
  Step group_step() {
    ++group_steps_;
    const int roll = pick(10);
    if (roll == 6) {
      if (std::optional<ScriptCall> call = groups_.cancel_one()) {
        ScriptCall c = ev(std::move(*call));
        return [c](Side& s) { return eval(s, c); };
      }
    }
    if (roll <= 6) {  // an entry (a cancel, before the run has a grouped job)
      const std::string id = new_id();
      ids.push_back(id);
      GroupDraws::Entry e = groups_.grouped_job(id, bytes(16), server_now());
      std::optional<ScriptCall> call;
      if (e.call) call = ev(std::move(*e.call));
      return [this, e, call](Side& s) {
        Reply r;
        r.type = Reply::Type::Array;
        if (!e.plant.empty()) {
          for (Reply& each : s.raw.pipeline(e.plant)) r.elements.push_back(std::move(each));
        }
        if (call) r.elements.push_back(eval(s, *call));
        return r;
      };
    }
    if (roll < 9) {
      ScriptCall call = groups_.policy_call();
      return [call](Side& s) { return eval(s, call); };
    }
    return raw_step(chance(30) ? groups_.row_gone(scripted.raw) : groups_.broken());
  }

  // A settle, plain or in its flow form (flows_.settle_mode()).
  Step settle_step(ScriptCall call) {
    return [this, call](Side& s) { return run_calls(s, {call}).elements.front(); };
  }

  Step next_step() {
    expect_.reset();
    if (events_ > 0) ++events_steps_;
    if (chance(6)) {
      ++limits_steps_;
      return limits();
    }
    if (chance(4)) return events();
    if (chance(18)) return flow_step();
    if (chance(12)) return group_step();
    if (chance(3)) {
      const Lease l = some_lease();
      ScriptCall call = ev(progress_call(q, l, bytes(chance(5) ? 1100 : 24)));
      return [call](Side& s) { return eval(s, call); };
    }
    const int roll = pick(100);
    if (roll < 16) {
      std::string id = ids.empty() || chance(80) ? new_id() : ids[pick(static_cast<int>(ids.size()))];
      ids.push_back(id);
      ScriptCall call = ev(enqueue_call(q, id, bytes(48)));
      return [call](Side& s) { return eval(s, call); };
    }
    if (roll < 22) {
      std::string id = new_id();
      ids.push_back(id);
      EnqueueOptions o;
      o.lane = pick(11) - 5;
      if (chance(50)) o.due_ms = chance(50) ? 1000 : server_now() + kLong;
      o.job.unique = some_unique();
      some_trace_context(o.job);
      ScriptCall call = ev(enqueue_call(q, id, bytes(16), o));
      return [call](Side& s) { return eval(s, call); };
    }
    if (roll < 42) {
      ClaimArgs a{chance(30) ? 1 : kLong, 1 + pick(4), pick(4)};
      ScriptCall call = ev(claim_call(q, a));
      std::vector<Command> bucket = bucket_before_claim();
      for (Command& c : groups_.gwait_before_claim(scripted.raw, server_now(), kBucketSlackMs)) {
        bucket.push_back(std::move(c));
      }
      return [this, call, bucket](Side& s) {
        if (!bucket.empty()) s.raw.pipeline(bucket);
        Reply r = eval(s, call);
        if (&s == &scripted && r.type == Reply::Type::Array) {
          std::vector<Command> groups;
          for (std::size_t i = 0; i + 3 < r.elements.size(); i += 4) {
            leases.push_back({r.elements[i].str, r.elements[i + 3].integer});
            groups.push_back({"HGET", q.row(r.elements[i].str), "group"});
          }
          for (const Reply& g : s.raw.pipeline(groups)) grouped_claims_ += g.type == Reply::Type::String;
        }
        return r;
      };
    }
    if (roll < 50) {
      std::vector<Lease> batch;
      for (int n = 1 + pick(3); n > 0; --n) batch.push_back(some_lease());
      // The same lease twice: the second ZADD finds the score it sets, and
      // ZADD is silent then.
      if (chance(30)) batch.push_back(batch.front());
      ScriptCall call = extend_call(q, chance(20) ? 1 : kLong, batch);
      return [call](Side& s) { return eval(s, call); };
    }
    if (roll < 61) {
      const Lease l = some_lease();
      return settle_step(
          ev(without_root(complete_call(q, l, chance(50) ? 0 : kLong, bytes(24), flows_.settle_mode()))));
    }
    if (roll < 72) {
      const std::string error = bytes(64);
      FailArgs a{error, 1 + pick(3), chance(40) ? 0 : (chance(50) ? 1 : kLong), chance(20)};
      const Lease l = some_lease();
      return settle_step(ev(without_root(fail_call(q, l, a, flows_.settle_mode()))));
    }
    if (roll < 77) {
      ScriptCall call = ev(release_call(q, some_lease()));
      return [call](Side& s) { return eval(s, call); };
    }
    if (roll < 82) {
      ScriptCall call = ev({Script::Reap,
                            {q.active, q.pending, q.dead, q.stats, q.row_root, q.uniq_root},
                            {"3", std::to_string(1 + pick(4))}});
      return [call](Side& s) { return eval(s, call); };
    }
    if (roll < 84) return malformed();
    if (roll < 85) return stale_pointer();
    if (roll < 90) return corrupt();
    if (roll < 93) {
      ScriptCall call;
      switch (pick(4)) {
        case 0: call = retry_dead_call(q, 1 + pick(3)); break;
        case 1: {
          std::string id = ids.empty() ? new_id() : ids[pick(static_cast<int>(ids.size()))];
          call = promote_job_call(q, id);
          break;
        }
        case 2: {
          std::string id = ids.empty() ? new_id() : ids[pick(static_cast<int>(ids.size()))];
          call = chance(50) ? cancel_call(q, id, FlowMode::Plain) : retry_job_call(q, id);
          break;
        }
        default:
          call = {
              Script::TrimDead, {q.dead, q.row_root, q.uniq_root}, {std::to_string(kLong), std::to_string(pick(3))}};
      }
      call = ev(std::move(call));
      return [call](Side& s) { return eval(s, call); };
    }
    if (roll < 95) return pause();
    // Refusals: a non-JOB id, an argument out of range. Same text, nothing written.
    std::vector<ScriptCall> bad = {
        {Script::Enqueue, {q.row_root + "TASK_1", q.pending}, {"TASK_1", "p"}},
        {Script::Claim, {q.pending, q.active, q.delayed, q.meta, q.stats, q.row_root}, {"0", "1", "0"}},
        {Script::Extend, {q.active, q.row_root}, {"1000", "JOB_1"}},
        {Script::Complete, {q.row("JOB_1"), q.active, q.stats}, {"JOB_1", "1", "-1", ""}},
        {Script::Fail,
         {q.row("JOB_1"), q.active, q.delayed, q.pending, q.dead, q.stats},
         {"JOB_1", "1", "e", "3", "0", "2"}},
        {Script::Release, {q.row_root + "NOPE", q.active, q.pending, q.stats}, {"NOPE", "1"}},
        // The optioned enqueue's refusals.
        {Script::Enqueue, {q.row("JOB_1"), q.pending}, {"JOB_1", "p", "colour", "red"}},
        {Script::Enqueue, {q.row("JOB_1"), q.pending, q.uniq("k9")}, {"JOB_1", "p", "unique", "k0"}},
        {Script::Enqueue,
         {q.row("JOB_1"), q.pending, q.uniq("k0")},
         {"JOB_1", "p", "unique", "k0", "unique_for_ms", "0"}},
        {Script::Enqueue, {q.row("JOB_1"), q.pending}, {"JOB_1", "p", "group", "g"}},
        // The stream with a length no script takes.
        {Script::Enqueue, {q.row("JOB_1"), q.pending, q.events}, {"JOB_1", "p", chance(50) ? "0" : "10000001"}},
        {Script::Complete, {q.row("JOB_1"), q.active, q.stats, q.events}, {"JOB_1", "1", "0", "r", "x"}},
        // And the flow forms', with and without the stream.
        complete_call(q, {"JOB_1", 1}, -1, "", FlowMode::Flow),
        ev(fail_call(q, {"JOB_1", 1}, {"e", 0, 0, false}, FlowMode::Flow)),
        {Script::CompleteFlow,
         {q.row_root + "TASK_1", q.active, q.stats, q.outbox, q.deps_root, q.results_root},
         {"TASK_1", "1", "0", ""}},
        {Script::FailFlow,
         {q.row("JOB_1"), q.active, q.delayed, q.pending, q.dead, q.stats, q.outbox, q.deps_root, q.results_root,
          q.events},
         {"JOB_1", "1", "e", "3", "0", "0", "0"}},
    };
    ScriptCall call = bad[pick(static_cast<int>(bad.size()))];
    return [call](Side& s) { return eval(s, call); };
  }

  std::int64_t server_now() { return scripted.x.server_time_ms(); }
  bool is_paused(Side& s) {
    Reply r = s.raw.command({"HGET", q.meta, "paused"});
    return r.type == Reply::Type::String && r.str == "1";
  }

  ValkeyServer server;
  Side scripted;
  Side native;
  Connection control;
  QueueKeys q;
  std::mt19937_64 rng;
  std::vector<std::string> ids;
  std::vector<Lease> leases;
  FlowDraws flows_{rng, q, [this] { return new_id(); }};
  int flow_steps_ = 0;
  GroupDraws groups_{rng, q};
  int group_steps_ = 0, grouped_claims_ = 0;
  std::string group_claims_summary() const { return std::to_string(grouped_claims_) + " grouped jobs claimed"; }

  // A claim step's bucket, planted before it: absent fields are a full one.
  struct Bucket {
    std::int64_t rate_max = 0, window = 0;
    std::optional<std::int64_t> credit, at;
    std::int64_t now = 0;  // the server's clock when it was planted
  };
  static constexpr std::int64_t kMaxRate = 10;
  std::optional<Bucket> expect_;
  // What the run met of the limits, for its closing line.
  int rate_claims_ = 0, limit_refusals_ = 0, limits_steps_ = 0;
  // The stream's length passed with each transition (0: none).
  std::int64_t events_ = 0;
  int events_steps_ = 0;
  int entries_ = 0;
  std::set<std::string> broken_to_dead_;  // rows claim or reap sent to dead for a broken counter
  // And of pauses: steps that set one, claims that lifted one.
  int pause_steps_ = 0, pause_lifts_ = 0;
  // And of unique keys: enqueues given one, stale pointers made by hand,
  // replies naming a holder (a duplicate, a replace, a refused retry).
  int unique_enqueues_ = 0, stale_steps_ = 0, holder_replies_ = 0;
  int traced_enqueues_ = 0;  // optioned enqueues given a trace context

 private:
  int next_id_ = 1;
};

TEST_F(Differential, ScriptedAndNativeLeaveTheSameKeysRepliesAndEvents) {
  const std::uint64_t seed = env_number("EMQ_DIFF_SEED", std::random_device{}());
  const std::uint64_t steps = env_number("EMQ_DIFF_STEPS", 600);
  rng.seed(seed);
  std::printf("differential: seed %llu, %llu steps (replay: EMQ_DIFF_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(steps),
              static_cast<unsigned long long>(seed));
  RecordProperty("seed", std::to_string(seed));

  scripted.x.ensure_connected();
  native.x.ensure_connected();
  ASSERT_FALSE(scripted.x.native());
  ASSERT_TRUE(native.x.native()) << "db 1 must run on the emq module";
  EventTap tap(server.port());

  for (std::uint64_t n = 1; n <= steps; ++n) {
    // Lets the 1 ms leases and backoffs of earlier steps fall due on both
    // sides before this one runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    Step step = n == 1 ? held_key() : next_step();
    const bool paused_before = is_paused(scripted);
    Reply a = step(scripted);
    Reply b = step(native);
    let_short_windows_end();
    const std::string mark = std::to_string(n);
    control.command({"PUBLISH", kFence, mark});
    std::map<int, std::vector<std::string>> events = tap.until(mark);

    const std::string where = "step " + std::to_string(n) + " of seed " + std::to_string(seed);
    ASSERT_TRUE(same_reply(a, b)) << where << ": scripted " << show_reply(a) << ", native " << show_reply(b);
    ASSERT_EQ(events[0], events[1]) << where << ": the keyspace events differ";
    for (const std::string& e : events[0]) entries_ += e.size() > 5 && e.compare(e.size() - 5, 5, " xadd") == 0;
    Keyspace ka = dump_keyspace(scripted.raw), kb = dump_keyspace(native.raw);
    const std::string bucket_a = bucket_problem(ka, a), bucket_b = bucket_problem(kb, b);
    ASSERT_TRUE(bucket_a.empty()) << where << ": scripted: " << bucket_a;
    ASSERT_TRUE(bucket_b.empty()) << where << ": native: " << bucket_b;
    const std::string bucket = set_bucket_aside(ka, kb, q, kToleranceMs, kMaxRate);
    ASSERT_TRUE(bucket.empty()) << where << ": the buckets differ: " << bucket;
    const std::string group_bucket = set_group_buckets_aside(ka, kb, q, kToleranceMs, kMaxRate);
    ASSERT_TRUE(group_bucket.empty()) << where << ": " << group_bucket;
    std::vector<std::string> group_faults = groups_.group_problems(ka);
    ASSERT_TRUE(group_faults.empty()) << where << ": " << group_faults.front() << "; last reply " << show_reply(a);
    std::vector<std::string> diff = keyspace_diff(ka, kb, kToleranceMs);
    ASSERT_TRUE(diff.empty()) << where << ": the keyspaces differ, first: " << diff.front() << " (" << diff.size()
                              << " in all); last reply " << show_reply(a);
    if (expect_ && a.type == Reply::Type::Array) ++rate_claims_;
    if (a.type == Reply::Type::Error && a.str.find("EMQARG " + q.meta) != std::string::npos) ++limit_refusals_;
    // A claim (a list reply; a resume answers a count) that found the
    // queue paused and left it not paused: its end had come.
    const bool unpaused = !ka.count(q.meta) || !ka.at(q.meta).entries.count("paused");
    if (paused_before && unpaused && a.type == Reply::Type::Array) ++pause_lifts_;
    for (const auto& [key, row] : ka) {
      auto error = row.entries.find("error");
      if (row.type == "hash" && error != row.entries.end() && error->second.rfind("row field ", 0) == 0) {
        broken_to_dead_.insert(key);
      }
    }
    if (a.type == Reply::Type::Array && a.elements.size() == 3 && a.elements[1].type == Reply::Type::String) {
      ++holder_replies_;
    }
    std::vector<std::string> shared = shared_keys(ka, q);
    ASSERT_TRUE(shared.empty()) << where << ": " << shared.front() << "; last reply " << show_reply(a);
    std::vector<std::string> lost = stranded(ka, q, groups_.rows_gone());
    ASSERT_TRUE(lost.empty()) << where << ": " << lost.front() << " (" << lost.size() << " rows in all); last reply "
                              << show_reply(a);
  }
  std::printf(
      "differential: %d limits steps, %d claims under a rate checked to the unit, %d claims refused for a "
      "broken limit or pause, %d steps with events on, %d entries appended alike, %d rows sent to dead for a "
      "broken counter; %d pause steps, %d pauses lifted by their end\n",
      limits_steps_, rate_claims_, limit_refusals_, events_steps_, entries_, static_cast<int>(broken_to_dead_.size()),
      pause_steps_, pause_lifts_);
  std::printf("differential: %d flow steps; %s\n", flow_steps_, flows_.summary().c_str());
  std::printf("differential: %d enqueues with a unique key, %d replies naming a holder, %d stale pointers made\n",
              unique_enqueues_, holder_replies_, stale_steps_);
  EXPECT_GT(holder_replies_, 0) << "the run should have met a held key";
  std::printf("differential: %d group steps; %s; %s\n", group_steps_, groups_.summary().c_str(),
              group_claims_summary().c_str());
  std::printf("differential: %d optioned enqueues with a trace context\n", traced_enqueues_);
  EXPECT_GT(traced_enqueues_, 0) << "the run should have written trace contexts";
  // A run that never claimed or settled would prove little.
  Reply stats = scripted.raw.command({"HGETALL", q.stats});
  EXPECT_GE(stats.elements.size(), 8u) << "the run should have claimed, completed, retried and killed jobs";
  EXPECT_GT(flows_.settled(), 0) << "the run should have settled jobs through the flow forms";
}

}  // namespace
}  // namespace echomq::test
