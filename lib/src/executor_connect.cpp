// How an Executor reaches its server: connecting with backoff, the
// handshake (the wire's identity, cluster or not, the module), and loading
// the scripts on every connection it opens. The calls it then carries are
// executor.cpp's.
#include <algorithm>

#include "cluster_router.h"
#include "echomq/executor.h"
#include "echomq/keyspace.h"

namespace echomq {

namespace {

// SET NX claims an empty keyspace for emq/1; GET reads what is there, so a
// read-only replica that already holds emq/1 is accepted too.
const std::vector<Command>& wire_probe() {
  static const std::vector<Command> probe = {{"SET", std::string(kVersionKey), std::string(kWireVersion), "NX"},
                                             {"GET", std::string(kVersionKey)}};
  return probe;
}

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

std::string module_load_hint() {
  return "add 'loadmodule /usr/local/lib/echomq/emq.so' (where make install put it) to the server's "
         "valkey.conf and restart it, or run MODULE LOAD with that path";
}

void Executor::ensure_connected() {
  // Another member lost its connection since we last looked at ours: if
  // the server closed it too, it is replaced now. A connection lost alone
  // (killed, timed out) leaves the others theirs. Cluster routers watch
  // their nodes themselves.
  if (conn_ && policy_.group && policy_.group->last_loss() > looked_at_) {
    looked_at_ = std::chrono::steady_clock::now();
    if (conn_->closed_by_server()) conn_.reset();
  }
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
    bool reached = true;
    if (cluster_) {
      // A node was lost: the map is read again from another one. That
      // another node answers is no news of the lost one, so it ends the
      // group's backoff only if the map no longer routes to it (a replica
      // took over). Else, with a shard down, each member's refresh ended
      // every other's wait and all of them tried every 100 ms.
      const std::string lost = cluster_->lost_node();
      cluster_->refresh();
      const std::vector<NodeAddress>& primaries = cluster_->map().primaries();
      reached =
          std::none_of(primaries.begin(), primaries.end(), [&](const NodeAddress& n) { return n.name() == lost; });
    } else {
      looked_at_ = std::chrono::steady_clock::now();
      Connection c = Connection::open(options_);
      if (handshake(c)) conn_.emplace(std::move(c));
    }
    next_delay_ = policy_.initial;
    if (policy_.group && reached) policy_.group->connected();
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

bool Executor::handshake(Connection& c) {
  // The wire probe, INFO cluster, and MODULE LIST unless the scripts are
  // asked for, in one round trip.
  std::vector<Command> hello = wire_probe();
  hello.push_back({"INFO", "cluster"});
  if (options_.executor != ExecutorChoice::Scripted) hello.push_back({"MODULE", "LIST"});
  std::vector<Reply> r = c.pipeline(hello);
  if (cluster_enabled(r[2])) {
    // The first two answered MOVED unless this node owns {emq}: the
    // router asks the owner again.
    cluster_handshake(c);
    return false;
  }
  check_wire(r[0], r[1]);
  native_ = false;
  if (r.size() == 4) choose_executor(r[3]);
  load_scripts(c);
  return true;
}

void Executor::cluster_handshake(Connection& c) {
  if (options_.executor == ExecutorChoice::Native) {
    throw Error(ErrorKind::Invalid, "connect",
                "the executor is native but the server is a cluster node, and the emq module is standalone only: "
                "use the executor auto or scripted");
  }
  native_ = false;
  auto router = std::make_unique<ClusterRouter>(options_, read_slot_map(c, options_.host));
  const std::vector<Command>& hello = wire_probe();
  auto write = [&](std::size_t i, RespBuffer& out) { out.add(hello[i]); };
  // Each node connection the router opens gets the scripts before its
  // first call: a promoted replica's cache is empty.
  auto opened = [this](Connection& n) { load_scripts(n); };
  std::vector<Reply> r = router->run({key_slot(kVersionKey), key_slot(kVersionKey)}, write, opened);
  check_wire(r[0], r[1]);
  cluster_ = std::move(router);
}

void Executor::check_wire(const Reply& set_nx, const Reply& get) const {
  if (get.is_error() && get.str.rfind("WRONGTYPE", 0) == 0) {
    // A hash or a set where the wire identity belongs will not mend itself.
    throw Error(ErrorKind::Wire, "connect",
                "EMQWIRE " + std::string(kVersionKey) + " is not a string holding '" + std::string(kWireVersion) +
                    "' (" + get.str.substr(0, 80) +
                    "): this server holds another program's data; use a separate "
                    "database");
  }
  if (get.type == Reply::Type::String && get.str != kWireVersion) {
    throw Error(ErrorKind::Wire, "connect",
                "EMQWIRE " + std::string(kVersionKey) + " holds '" + get.str.substr(0, 64) + "', not '" +
                    std::string(kWireVersion) + "': this server speaks another EchoMQ wire; use a separate database");
  }
  if (get.type != Reply::Type::String) {
    if (set_nx.is_error()) throw error_from_reply("connect", set_nx.str);
    if (get.is_error()) throw error_from_reply("connect", get.str);
    throw Error(ErrorKind::Protocol, "connect", "GET " + std::string(kVersionKey) + " answered no string");
  }
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

}  // namespace echomq
