// The executor (L3): runs transitions over one connection, by SHA or, when
// the server has the emq module and the options allow it, as the module's
// EMQ.* commands for the six core transitions and the flow forms of
// complete and fail (scripts for the rest; scripts.cpp names them). It
// owns that connection's life: connect, the wire-identity check, the
// executor choice, script loading, and reconnecting with capped
// exponential backoff.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "echomq/cluster.h"
#include "echomq/connection.h"
#include "echomq/errors.h"
#include "echomq/scripts.h"

namespace echomq {

class ClusterRouter;

struct ScriptCall {
  Script script;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

// What an executor tells whoever keeps the books (the daemon's metrics).
class ExecutorObserver {
 public:
  virtual ~ExecutorObserver() = default;
  virtual void on_script_loads(int count) = 0;
  virtual void on_error(ErrorKind kind) = 0;
  // Entries the transitions of one call appended to a queue's stream, for
  // the calls this executor passed the stream to (ConnectionOptions::events).
  virtual void on_events_written(std::string_view queue, std::int64_t entries) {
    (void)queue;
    (void)entries;
  }
};

// The executors (and other connections) of one process that share a
// server. When one of them connects, the others' reconnect wait is over:
// they try at once instead of sleeping out a backoff the server no longer
// needs. When one of them loses its connection under a call, the others
// look at theirs before their next call (a restarted server closed them
// all) and replace it if the server has closed it, rather than finding out
// by a failed call. Thread-safe.
class ReconnectGroup {
 public:
  void connected() noexcept { connect_ns_ = now_ns(); }
  void lost() noexcept { lost_ns_ = now_ns(); }
  std::chrono::steady_clock::time_point last_connect() const noexcept { return at(connect_ns_.load()); }
  std::chrono::steady_clock::time_point last_loss() const noexcept { return at(lost_ns_.load()); }

 private:
  static std::int64_t now_ns() noexcept { return std::chrono::steady_clock::now().time_since_epoch().count(); }
  static std::chrono::steady_clock::time_point at(std::int64_t ns) noexcept {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ns));
  }
  std::atomic<std::int64_t> connect_ns_{0};
  std::atomic<std::int64_t> lost_ns_{0};
};

// "auto", "scripted", "native": for config files and flags.
const char* to_string(ExecutorChoice choice);
std::optional<ExecutorChoice> parse_executor_choice(std::string_view text);
// What an operator adds to valkey.conf to load the module.
std::string module_load_hint();

struct ReconnectPolicy {
  std::chrono::milliseconds initial{100};
  std::chrono::milliseconds max{5000};
  std::shared_ptr<ReconnectGroup> group = nullptr;  // none: this executor alone
};

// On a cluster (INFO cluster says cluster_enabled:1 at connect) every call
// goes to the primary that owns its first key's slot, and a batch or a
// pipeline that spans queues is split per node (cluster_router.h); the
// calls and their answers are the same as on one server.
class Executor {
 public:
  explicit Executor(ConnectionOptions options, ReconnectPolicy policy = {}, ExecutorObserver* observer = nullptr);
  ~Executor();
  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs one transition by EVALSHA. On NOSCRIPT (the server lost its script
  // cache) loads the scripts again and retries once. An error reply throws,
  // mapped by error_from_reply.
  Reply eval(const ScriptCall& call);
  // Runs many transitions in one round trip. Error replies come back in
  // place as Replies of type Error, so one bad call cannot hide the others'
  // outcomes; NOSCRIPT replies are reloaded and retried once, in order.
  std::vector<Reply> eval_batch(const std::vector<ScriptCall>& calls);
  // The same, with plain commands after the calls in the same round trip:
  // their replies follow the calls'. A read that must see what the calls
  // did (meta's flows flag after a claim) goes here. When a call had to be
  // retried for NOSCRIPT on a standalone server, the commands are sent
  // again after it, so they still follow it.
  std::vector<Reply> eval_batch(const std::vector<ScriptCall>& calls, const std::vector<Command>& then);

  // Plain commands, for reads and for what needs no script.
  Reply command(const Command& argv);
  std::vector<Reply> pipeline(const std::vector<Command>& commands);
  // The commands in one MULTI/EXEC, on the node of the first one's key:
  // their replies, read at one instant. Throws when EXEC is refused.
  std::vector<Reply> transaction(const std::vector<Command>& commands);

  // Connects now if not connected. Throws a transient Error while the server
  // is unreachable, without trying again before the backoff has passed;
  // retry_after() says how long that is.
  void ensure_connected();
  // On a cluster: a slot map is held and no node has been lost since.
  bool connected() const noexcept;
  std::chrono::milliseconds retry_after() const;
  // Another member of the group connected after this executor's last
  // failure: the server is back, whatever the backoff says.
  bool server_back() const noexcept;
  // Drops the connection (the next call reconnects).
  void disconnect() noexcept;

  const ConnectionOptions& options() const noexcept { return options_; }
  const ReconnectPolicy& reconnect_policy() const noexcept { return policy_; }
  // Whether the current connection runs the core transitions natively
  // (decided at each connect; false before the first).
  bool native() const noexcept { return native_; }
  std::uint64_t script_loads() const noexcept { return script_loads_; }
  // The server's clock, in epoch milliseconds (TIME).
  std::int64_t server_time_ms();

  // The cluster's slot map as last read, or nullptr on a standalone server
  // (or before the first connect).
  const SlotMap* cluster_map() const noexcept;
  // The cluster node this executor lost last, until the map is read again
  // ("" when none, and always on a standalone server).
  std::string lost_node() const;

 private:
  // True for a standalone server; false when c is a cluster node (the
  // router then holds the connections, one per primary).
  bool handshake(Connection& c);
  void cluster_handshake(Connection& c);
  void check_wire(const Reply& set_nx, const Reply& get) const;
  void load_scripts(Connection& c);
  void choose_executor(const Reply& modules);  // MODULE LIST's answer
  std::vector<Reply> eval_calls(const ScriptCall* calls, std::size_t count, const std::vector<Command>& then = {});
  std::vector<Reply> eval_routed(const ScriptCall* calls, std::size_t count, const std::vector<Command>& then);
  std::vector<Reply> eval_direct(const ScriptCall* calls, std::size_t count, const std::vector<Command>& then);
  // Writes the call: EMQ.<NAME> when native and the module has a twin,
  // else EVALSHA of its script; then numkeys, its keys and its arguments,
  // and the queue's events stream and its length when events > 0.
  void add_call(const ScriptCall& call, std::int64_t events, RespBuffer& out) const;
  // events_[i]: the stream's length to pass with calls[i] (0: none), as
  // the options' events book says.
  void look_up_events(const ScriptCall* calls, std::size_t count);
  void report_events(const ScriptCall* calls, std::size_t count, const std::vector<Reply>& replies);
  template <typename F>
  auto guarded(F&& f) -> decltype(f());
  void note_error(ErrorKind kind) noexcept;

  ConnectionOptions options_;
  ReconnectPolicy policy_;
  ExecutorObserver* observer_;
  std::optional<Connection> conn_;
  std::unique_ptr<ClusterRouter> cluster_;  // on a cluster, instead of conn_
  std::array<std::string, kScriptCount> sha_;
  RespBuffer calls_;  // reused from call to call
  std::vector<std::int64_t> events_;
  std::uint64_t script_loads_ = 0;
  bool native_ = false;
  std::chrono::milliseconds next_delay_;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::steady_clock::time_point failed_at_{};
  std::chrono::steady_clock::time_point looked_at_{};  // at our connection, for the group's last loss
  std::string last_error_;
  ErrorKind last_kind_ = ErrorKind::Io;
};

// TIME's reply in epoch milliseconds; throws Error{Protocol} for any other
// reply (a claimer that sends TIME in a pipeline of its own reads it here).
std::int64_t time_reply_ms(const Reply& r);

}  // namespace echomq
