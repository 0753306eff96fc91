#include "echomq/executor.h"

#include <algorithm>
#include <charconv>

#include "echomq/keyspace.h"

namespace echomq {

namespace {
bool is_noscript(const Reply& r) { return r.is_error() && r.str.rfind("NOSCRIPT", 0) == 0; }

// MODULE LIST answers one entry per module, each a flat map (RESP2) with
// "name" among its keys.
bool lists_emq(const Reply& modules) {
  for (const Reply& m : modules.elements) {
    for (std::size_t i = 0; i + 1 < m.elements.size(); i += 2) {
      if (m.elements[i].str == "name" && m.elements[i + 1].str == "emq") return true;
    }
  }
  return false;
}
}  // namespace

const char* to_string(ExecutorChoice choice) {
  switch (choice) {
    case ExecutorChoice::Auto: return "auto";
    case ExecutorChoice::Scripted: return "scripted";
    case ExecutorChoice::Native: return "native";
  }
  return "auto";
}

std::optional<ExecutorChoice> parse_executor_choice(std::string_view text) {
  if (text == "auto") return ExecutorChoice::Auto;
  if (text == "scripted") return ExecutorChoice::Scripted;
  if (text == "native") return ExecutorChoice::Native;
  return std::nullopt;
}

std::string module_load_hint() {
  return "add 'loadmodule /usr/local/lib/echomq/emq.so' (where make install put it) to the server's "
         "valkey.conf and restart it, or run MODULE LOAD with that path";
}

Executor::Executor(ConnectionOptions options, ReconnectPolicy policy, ExecutorObserver* observer)
    : options_(std::move(options)), policy_(policy), observer_(observer), next_delay_(policy.initial) {}

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

void Executor::ensure_connected() {
  if (connected()) return;
  conn_.reset();
  if (std::chrono::steady_clock::now() < next_attempt_ && !server_back()) {
    // The last attempt's own kind: a refusal (a wrong wire, a refused
    // login) reads the same inside the backoff window as outside it.
    const std::string wait = "next attempt in " + std::to_string(retry_after().count()) + " ms";
    if (!transient(last_kind_)) throw Error(last_kind_, "connect", last_error_ + "; " + wait);
    throw Error(last_kind_, "connect", "server unreachable (" + last_error_ + "); " + wait);
  }
  try {
    Connection c = Connection::open(options_);
    handshake(c);
    conn_.emplace(std::move(c));
    next_delay_ = policy_.initial;
    if (policy_.group) policy_.group->connected();
  } catch (const Error& e) {
    // Only a server we cannot use yet is worth retrying; a wrong wire or a
    // refused login will not mend itself, but retrying it costs little and
    // keeps the daemon alive for an operator to fix it.
    last_error_ = e.what();
    last_kind_ = e.kind();
    failed_at_ = std::chrono::steady_clock::now();
    next_attempt_ = failed_at_ + next_delay_;
    next_delay_ = std::min(next_delay_ * 2, policy_.max);
    note_error(e.kind());
    throw;
  }
}

void Executor::handshake(Connection& c) {
  // SET NX claims an empty keyspace for emq/1; GET reads what is there, so a
  // read-only replica that already holds emq/1 is accepted too. MODULE LIST,
  // unless the scripts are asked for, rides in the same round trip.
  std::vector<Command> hello = {{"SET", std::string(kVersionKey), std::string(kWireVersion), "NX"},
                                {"GET", std::string(kVersionKey)}};
  if (options_.executor != ExecutorChoice::Scripted) hello.push_back({"MODULE", "LIST"});
  std::vector<Reply> r = c.pipeline(hello);
  if (r[1].is_error() && r[1].str.rfind("WRONGTYPE", 0) == 0) {
    // A hash or a set where the wire identity belongs will not mend itself.
    throw Error(ErrorKind::Wire, "connect",
                "EMQWIRE " + std::string(kVersionKey) + " is not a string holding '" + std::string(kWireVersion) +
                    "' (" + r[1].str.substr(0, 80) + "): this server holds another program's data; use a separate "
                    "database");
  }
  if (r[1].type == Reply::Type::String && r[1].str != kWireVersion) {
    throw Error(ErrorKind::Wire, "connect",
                "EMQWIRE " + std::string(kVersionKey) + " holds '" + r[1].str.substr(0, 64) + "', not '" +
                    std::string(kWireVersion) + "': this server speaks another EchoMQ wire; use a separate database");
  }
  if (r[1].type != Reply::Type::String) {
    if (r[0].is_error()) throw error_from_reply("connect", r[0].str);
    if (r[1].is_error()) throw error_from_reply("connect", r[1].str);
    throw Error(ErrorKind::Protocol, "connect", "GET " + std::string(kVersionKey) + " answered no string");
  }
  native_ = false;
  if (r.size() == 3) choose_executor(r[2]);
  load_scripts(c);
}

void Executor::choose_executor(const Reply& modules) {
  // Managed services often refuse MODULE: that is a server without emq.
  native_ = modules.type == Reply::Type::Array && lists_emq(modules);
  if (!native_ && options_.executor == ExecutorChoice::Native) {
    throw Error(ErrorKind::Invalid, "connect",
                "the executor is native but the server has no emq module" +
                    (modules.is_error() ? " (MODULE LIST answered " + modules.str + ")" : std::string()) + ": " +
                    module_load_hint() + "; or use the executor auto or scripted");
  }
}

void Executor::load_scripts(Connection& c) {
  std::vector<Command> loads;
  loads.reserve(kScriptCount);
  for (const ScriptInfo& s : all_scripts()) loads.push_back({"SCRIPT", "LOAD", script_source(s.script)});
  std::vector<Reply> shas = c.pipeline(loads);
  script_loads_ += kScriptCount;
  if (observer_ != nullptr) observer_->on_script_loads(static_cast<int>(kScriptCount));
  for (std::size_t i = 0; i < kScriptCount; ++i) {
    if (shas[i].type != Reply::Type::String) {
      throw Error(ErrorKind::Reply, "script load",
                  std::string(all_scripts()[i].name) + ".lua was refused: " + shas[i].str);
    }
    sha_[i] = shas[i].str;
  }
}

template <typename F>
auto Executor::guarded(F&& f) -> decltype(f(std::declval<Connection&>())) {
  ensure_connected();  // books its own failures
  Connection& c = *conn_;
  try {
    return f(c);
  } catch (const Error& e) {
    if (c.broken()) {
      // The connection broke under this call. Try again at once on the next
      // call (a restarted server is back quickly); back off only if that fails.
      last_error_ = e.what();
      last_kind_ = e.kind();
      failed_at_ = std::chrono::steady_clock::now();
      next_attempt_ = failed_at_;
      conn_.reset();
    }
    note_error(e.kind());
    throw;
  }
}

void Executor::add_call(const ScriptCall& call, RespBuffer& out) const {
  char numkeys[24];
  const auto end = std::to_chars(numkeys, numkeys + sizeof numkeys, call.keys.size()).ptr;
  const char* twin = native_ ? script_info(call.script).native : nullptr;
  if (twin != nullptr) {
    // PROTOCOL.md: exactly the EVALSHA line with the command in place of the SHA.
    out.begin(2 + call.keys.size() + call.args.size());
    out.arg(twin);
  } else {
    out.begin(3 + call.keys.size() + call.args.size());
    out.arg("EVALSHA");
    out.arg(sha_[static_cast<std::size_t>(call.script)]);
  }
  out.arg(std::string_view(numkeys, static_cast<std::size_t>(end - numkeys)));
  for (const std::string& k : call.keys) out.arg(k);
  for (const std::string& a : call.args) out.arg(a);
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

std::vector<Reply> Executor::eval_calls(const ScriptCall* calls, std::size_t count) {
  return guarded([&](Connection& c) {
    calls_.clear();
    for (std::size_t i = 0; i < count; ++i) add_call(calls[i], calls_);
    std::vector<Reply> replies = c.pipeline(calls_);

    std::vector<std::size_t> missed;
    for (std::size_t i = 0; i < replies.size(); ++i) {
      if (is_noscript(replies[i])) missed.push_back(i);
    }
    if (!missed.empty()) {
      load_scripts(c);
      calls_.clear();
      for (std::size_t i : missed) add_call(calls[i], calls_);
      std::vector<Reply> retried = c.pipeline(calls_);
      for (std::size_t k = 0; k < missed.size(); ++k) replies[missed[k]] = std::move(retried[k]);
    }
    calls_.clear();
    for (const Reply& r : replies) {
      if (r.is_error()) note_error(error_from_reply("", r.str).kind());
    }
    return replies;
  });
}

Reply Executor::command(const Command& argv) {
  return guarded([&](Connection& c) { return c.command(argv); });
}

std::vector<Reply> Executor::pipeline(const std::vector<Command>& commands) {
  return guarded([&](Connection& c) { return c.pipeline(commands); });
}

std::int64_t Executor::server_time_ms() {
  Reply r = command({"TIME"});
  if (r.type != Reply::Type::Array || r.elements.size() != 2) {
    throw Error(ErrorKind::Protocol, "time", "TIME answered something other than [seconds, microseconds]");
  }
  return std::stoll(r.elements[0].str) * 1000 + std::stoll(r.elements[1].str) / 1000;
}

}  // namespace echomq
