#include "echomq/executor.h"

#include <algorithm>
#include <charconv>

#include "cluster_router.h"
#include "echomq/events.h"
#include "echomq/keyspace.h"
#include "echomq/whole_number.h"

namespace echomq {

const char* to_string(ExecutorChoice choice) {
  switch (choice) {
    case ExecutorChoice::Auto: return "auto";
    case ExecutorChoice::Scripted: return "scripted";
    case ExecutorChoice::Native: return "native";
  }
  return "auto";
}

constexpr ExecutorChoice kExecutorChoices[] = {ExecutorChoice::Auto, ExecutorChoice::Scripted, ExecutorChoice::Native};

std::optional<ExecutorChoice> parse_executor_choice(std::string_view text) {
  for (ExecutorChoice c : kExecutorChoices) {
    if (text == to_string(c)) return c;
  }
  return std::nullopt;
}

Executor::Executor(ConnectionOptions options, ReconnectPolicy policy, ExecutorObserver* observer)
    : options_(std::move(options)), policy_(policy), observer_(observer), next_delay_(policy.initial) {}
Executor::~Executor() = default;
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;

bool Executor::connected() const noexcept {
  if (cluster_) return !cluster_->stale();
  return conn_.has_value() && !conn_->broken();
}

void Executor::disconnect() noexcept {
  conn_.reset();
  cluster_.reset();
}

const SlotMap* Executor::cluster_map() const noexcept { return cluster_ ? &cluster_->map() : nullptr; }

std::string Executor::lost_node() const { return cluster_ ? cluster_->lost_node() : std::string(); }

void Executor::note_error(ErrorKind kind) noexcept {
  if (observer_ != nullptr) observer_->on_error(kind);
}

bool Executor::server_back() const noexcept {
  return !connected() && policy_.group && policy_.group->last_connect() > failed_at_;
}

std::chrono::milliseconds Executor::retry_after() const {
  if (connected() || server_back()) return std::chrono::milliseconds(0);
  // Rounded up: a caller that waits this long finds the window closed,
  // rather than a fraction of a millisecond early and turned away.
  auto left = std::chrono::ceil<std::chrono::milliseconds>(next_attempt_ - std::chrono::steady_clock::now());
  return std::max(left, std::chrono::milliseconds(0));
}

template <typename F>
auto Executor::guarded(F&& f) -> decltype(f()) {
  ensure_connected();  // books its own failures
  try {
    return f();
  } catch (const Error& e) {
    if (!connected()) {
      // The connection (or a cluster node) broke under this call. Try again
      // at once on the next call (a restarted server is back quickly, a
      // promoted replica is in the map another node gives); back off only
      // if that fails.
      last_error_ = e.what();
      last_kind_ = e.kind();
      failed_at_ = std::chrono::steady_clock::now();
      next_attempt_ = failed_at_;
      conn_.reset();
      if (policy_.group) policy_.group->lost();
    }
    note_error(e.kind());
    throw;
  }
}

void Executor::add_call(const ScriptCall& call, std::int64_t events, RespBuffer& out) const {
  const std::size_t extra = events > 0 ? 1 : 0;
  char numkeys[24];
  const auto end = std::to_chars(numkeys, numkeys + sizeof numkeys, call.keys.size() + extra).ptr;
  const char* twin = native_ ? script_info(call.script).native : nullptr;
  if (twin != nullptr) {
    // PROTOCOL.md: exactly the EVALSHA line with the command in place of the SHA.
    out.begin(2 + call.keys.size() + call.args.size() + 2 * extra);
    out.arg(twin);
  } else {
    out.begin(3 + call.keys.size() + call.args.size() + 2 * extra);
    out.arg("EVALSHA");
    out.arg(sha_[static_cast<std::size_t>(call.script)]);
  }
  out.arg(std::string_view(numkeys, static_cast<std::size_t>(end - numkeys)));
  for (const std::string& k : call.keys) out.arg(k);
  if (extra) out.arg(queue_key(queue_of_key(call.keys.front()), "events"));
  for (const std::string& a : call.args) out.arg(a);
  if (extra) out.arg(std::to_string(events));
}

void Executor::look_up_events(const ScriptCall* calls, std::size_t count) {
  events_.assign(count, 0);
  if (!options_.events) return;
  std::vector<std::string_view> queues;
  std::vector<std::size_t> asked;
  for (std::size_t i = 0; i < count; ++i) {
    const ScriptCall& c = calls[i];
    if (!script_info(c.script).events || c.keys.empty() || carries_events(c)) continue;
    const std::string_view q = queue_of_key(c.keys.front());
    if (q.empty()) continue;
    queues.push_back(q);
    asked.push_back(i);
  }
  if (queues.empty()) return;
  std::vector<std::int64_t> lengths = options_.events->lengths(*this, queues);
  for (std::size_t k = 0; k < asked.size(); ++k) events_[asked[k]] = lengths[k];
}

void Executor::report_events(const ScriptCall* calls, std::size_t count, const std::vector<Reply>& replies) {
  if (observer_ == nullptr || !options_.events) return;
  for (std::size_t i = 0; i < count && i < events_.size(); ++i) {
    if (events_[i] == 0) continue;
    const std::int64_t n = entries_appended(calls[i], replies[i]);
    if (n > 0) observer_->on_events_written(queue_of_key(calls[i].keys.front()), n);
  }
}

Reply Executor::eval(const ScriptCall& call) {
  std::vector<Reply> replies = eval_calls(&call, 1);
  Reply& r = replies.front();
  if (r.is_error()) throw error_from_reply(script_info(call.script).name, r.str);
  return std::move(r);
}

std::vector<Reply> Executor::eval_batch(const std::vector<ScriptCall>& calls) {
  return eval_calls(calls.data(), calls.size());
}

std::vector<Reply> Executor::eval_batch(const std::vector<ScriptCall>& calls, const std::vector<Command>& then) {
  return eval_calls(calls.data(), calls.size(), then);
}

std::vector<Reply> Executor::eval_calls(const ScriptCall* calls, std::size_t count, const std::vector<Command>& then) {
  look_up_events(calls, count);
  std::vector<Reply> replies = guarded([&] {
    std::vector<Reply> got = cluster_ ? eval_routed(calls, count, then) : eval_direct(calls, count, then);
    for (const Reply& r : got) {
      if (r.is_error()) note_error(error_from_reply("", r.str).kind());
    }
    return got;
  });
  report_events(calls, count, replies);
  return replies;
}

std::vector<Reply> Executor::eval_routed(const ScriptCall* calls, std::size_t count, const std::vector<Command>& then) {
  std::vector<int> slots(count + then.size(), ClusterRouter::kAnyNode);
  for (std::size_t i = 0; i < count; ++i) {
    if (!calls[i].keys.empty()) slots[i] = key_slot(calls[i].keys.front());
  }
  for (std::size_t i = 0; i < then.size(); ++i) {
    const std::string_view key = routing_key(then[i]);
    if (!key.empty()) slots[count + i] = key_slot(key);
  }
  auto write = [&](std::size_t i, RespBuffer& out) {
    if (i < count) {
      add_call(calls[i], events_[i], out);
    } else {
      out.add(then[i - count]);
    }
  };
  auto opened = [this](Connection& n) { load_scripts(n); };
  return cluster_->run(slots, write, opened);
}

// One pipeline; the calls whose script the server had lost (NOSCRIPT after
// a restart or SCRIPT FLUSH) go again once the scripts are loaded, and the
// commands after them again too.
std::vector<Reply> Executor::eval_direct(const ScriptCall* calls, std::size_t count, const std::vector<Command>& then) {
  Connection& c = *conn_;
  calls_.clear();
  for (std::size_t i = 0; i < count; ++i) add_call(calls[i], events_[i], calls_);
  for (const Command& argv : then) calls_.add(argv);
  std::vector<Reply> replies = c.pipeline(calls_);

  std::vector<std::size_t> missed;
  for (std::size_t i = 0; i < count; ++i) {
    if (is_noscript(replies[i])) missed.push_back(i);
  }
  if (!missed.empty()) {
    load_scripts(c);
    calls_.clear();
    for (std::size_t i : missed) add_call(calls[i], events_[i], calls_);
    for (const Command& argv : then) calls_.add(argv);
    std::vector<Reply> retried = c.pipeline(calls_);
    for (std::size_t k = 0; k < missed.size(); ++k) replies[missed[k]] = std::move(retried[k]);
    for (std::size_t k = 0; k < then.size(); ++k) replies[count + k] = std::move(retried[missed.size() + k]);
  }
  calls_.clear();
  return replies;
}

Reply Executor::command(const Command& argv) {
  if (cluster_ || !conn_) {
    std::vector<Reply> r = pipeline({argv});
    return std::move(r.front());
  }
  return guarded([&] { return conn_->command(argv); });
}

std::vector<Reply> Executor::pipeline(const std::vector<Command>& commands) {
  return guarded([&] {
    if (!cluster_) return conn_->pipeline(commands);
    std::vector<int> slots(commands.size(), ClusterRouter::kAnyNode);
    for (std::size_t i = 0; i < commands.size(); ++i) {
      const std::string_view key = routing_key(commands[i]);
      if (!key.empty()) slots[i] = key_slot(key);
    }
    auto write = [&](std::size_t i, RespBuffer& out) { out.add(commands[i]); };
    return cluster_->run(slots, write, [this](Connection& n) { load_scripts(n); });
  });
}

std::vector<Reply> Executor::transaction(const std::vector<Command>& commands) {
  std::vector<Command> all;
  all.reserve(commands.size() + 2);
  all.push_back({"MULTI"});
  all.insert(all.end(), commands.begin(), commands.end());
  all.push_back({"EXEC"});
  std::vector<Reply> replies = guarded([&] {
    if (!cluster_) return conn_->pipeline(all);
    const std::string_view key = commands.empty() ? std::string_view() : routing_key(commands.front());
    std::vector<int> slots(all.size(), key.empty() ? ClusterRouter::kAnyNode : key_slot(key));
    auto write = [&](std::size_t i, RespBuffer& out) { out.add(all[i]); };
    return cluster_->run(slots, write, [this](Connection& n) { load_scripts(n); });
  });
  Reply& exec = replies.back();
  if (exec.type != Reply::Type::Array) {
    throw Error(ErrorKind::Reply, "multi", exec.is_error() ? exec.str : "the transaction was refused");
  }
  return std::move(exec.elements);
}

// TIME's seconds, at most: whatever keeps seconds x 1000 within int64.
constexpr std::int64_t kMaxTimeS = 9000000000000000;

std::int64_t Executor::server_time_ms() { return time_reply_ms(command({"TIME"})); }

std::int64_t time_reply_ms(const Reply& r) {
  if (r.type != Reply::Type::Array || r.elements.size() != 2) {
    throw Error(ErrorKind::Protocol, "time", "TIME answered something other than [seconds, microseconds]");
  }
  const std::optional<std::int64_t> s = whole_number_in(r.elements[0].str, 0, kMaxTimeS);
  const std::optional<std::int64_t> us = whole_number_in(r.elements[1].str, 0, 999999);
  if (!s || !us) throw Error(ErrorKind::Protocol, "time", "TIME answered something other than [seconds, microseconds]");
  return *s * 1000 + *us / 1000;
}

}  // namespace echomq
