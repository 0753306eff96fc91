// The fleet's registry (PROTOCOL.md, "Daemons: who runs what"): who runs,
// what each runs now, and the signals that ask one to quiet or stop. Not a
// transition: plain commands on the {emq} keys, which live in one slot.
// The daemon writes its beat through beat_commands; tools read the fleet
// with list_daemons and ask with send_signal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "echomq/executor.h"

namespace echomq {

// Every daemon's id, scored by its last beat (server ms).
inline constexpr std::string_view kDaemonsKey = "{emq}:daemons";
// The root of each daemon's keys: "{emq}:daemon:<did>".
inline constexpr std::string_view kDaemonKeyRoot = "{emq}:daemon:";

// The keys of one daemon.
struct DaemonKeys {
  explicit DaemonKeys(std::string_view daemon_id);
  std::string hash;     // {emq}:daemon:<did>: who it is, its state, how busy
  std::string work;     // {emq}:daemon:<did>:work: job ref -> JSON
  std::string signals;  // {emq}:daemon:<did>:signals: requests, taken at each beat
};

// A host name as a daemon id carries it: [A-Za-z0-9_.-] kept, every other
// byte dropped, at most 64 bytes; "host" when nothing is left.
std::string daemon_host(std::string_view name);
// "<host>-<pid>-<6 hex>", the hex from the kernel's randomness: a restarted
// daemon that gets the same pid is still a new id.
std::string new_daemon_id(std::string_view host, std::int64_t pid);
// Whether id has that shape (a tool checks an id it is given before it
// names a key with it).
bool valid_daemon_id(std::string_view id);

// The two signals; anything else in a signals list is ignored (and said).
inline constexpr std::string_view kSignalQuiet = "quiet";
inline constexpr std::string_view kSignalStop = "stop";

// A daemon's last signal acted on: the hash's `ack`, "<signal>:<server ms>".
struct DaemonAck {
  std::string signal;
  std::int64_t at_ms = 0;
};
std::optional<DaemonAck> parse_ack(std::string_view text);
std::string format_ack(const DaemonAck& ack);

// One job a daemon holds now, as its work hash holds it: running, or
// claimed ahead and waiting for a slot.
struct DaemonJob {
  std::string queue;
  std::string id;
  std::int64_t attempt = 0;
  std::int64_t started_ms = 0;          // when it started; when it was claimed, for one prefetched
  std::optional<std::string> progress;  // the last report's text, when any
  // Claimed ahead (the queue's prefetch), waiting in the daemon for a slot.
  bool prefetched = false;
};

// One daemon, as its hash holds it (absent numbers are 0).
struct DaemonInfo {
  std::string id;
  std::string host;
  std::int64_t pid = 0;
  std::string version;
  std::int64_t started_ms = 0;
  std::int64_t beat_ms = 0;
  std::string state;  // running | quiet | stopping
  std::vector<std::string> queues;
  std::int64_t slots = 0;
  std::int64_t busy = 0;        // jobs its slots run now: at most slots
  std::int64_t prefetched = 0;  // jobs claimed ahead, waiting in it for a slot
  std::string executor;         // scripted | native
  std::optional<DaemonAck> ack;
  // The hash's time to live when read: six beats after the last one, so a
  // reader can tell the daemon's beat from it (beat_every_ms).
  std::int64_t ttl_ms = -1;
  std::vector<DaemonJob> jobs;  // only when asked for
  // What could not be read (a field that is not a number, a job whose JSON
  // does not parse): another writer's; the rest is read as usual.
  std::vector<std::string> problems;

  // The daemon's beat interval, from the hash's expiry (six beats past the
  // last beat) as read at now_ms; nullopt when it has none.
  std::optional<std::int64_t> beat_every_ms(std::int64_t now_ms) const;
};

// The expiry a beat gives its keys: this many beats.
inline constexpr std::int64_t kBeatsToLive = 6;
// A reader removes members of {emq}:daemons whose last beat is older.
inline constexpr std::int64_t kForgetDaemonAfterMs = 3600000;

struct Fleet {
  std::vector<DaemonInfo> daemons;  // by id
  std::int64_t server_time_ms = 0;
  // Members whose hash is gone (their daemon stopped beating): left out;
  // those older than an hour were removed from {emq}:daemons.
  std::size_t ghosts = 0;
  std::size_t forgotten = 0;
  // The registry's keys that could not be read (another writer's key of
  // another type, a read the server refused), each named with what to do;
  // the rest is listed as usual.
  std::vector<std::string> problems;
  // False when {emq}:daemons itself could not be read: no daemon is known,
  // which says nothing of how many run.
  bool readable = true;
};

// One daemon as read_daemons found it.
struct DaemonRead {
  std::optional<DaemonInfo> daemon;  // nullopt: gone (it stopped beating, or left), or unreadable
  std::string problem;               // why its hash could not be read; "" when it could
};

// The daemons named, as their hashes hold them now. One round trip. A key
// that cannot be read is that daemon's problem, never the others': only a
// transient refusal (the server loading) throws.
std::vector<DaemonRead> read_daemons(Executor& x, const std::vector<std::string>& ids, bool with_jobs);

// Every live daemon of {emq}:daemons, by id (three round trips however
// many there are), their jobs too when with_jobs. Ghosts are left out, and members
// whose last beat is over an hour old are removed. What cannot be read is
// in Fleet::problems (one broken key never hides the rest); only a
// transient refusal throws.
Fleet list_daemons(Executor& x, bool with_jobs);

// Asks the daemon: RPUSH to its signals list, which then expires when the
// daemon would have expired (a ghost's requests do not pile up). False when
// no such daemon is alive (nothing is sent).
bool send_signal(Executor& x, const DaemonInfo& to, std::string_view signal);

// The beat at server time now_ms, every beat_ms: one MULTI (the hash, the
// work hash replaced, both set to expire after kBeatsToLive beats, the
// score in {emq}:daemons), then the signals taken (LPOP, at most
// max_signals), the members older than an hour removed, and the members
// counted: live (beaten within kBeatsToLive of this daemon's beats) and
// ghosts (older, within the hour). The replies end with EXEC's, then
// kBeatRepliesAfterExec more: LPOP's, ZREMRANGEBYSCORE's, the two counts.
// The daemon is described by `self` as a reader would read it back; its
// beat_ms, ttl_ms and problems are not written (the beat sets the first).
std::vector<Command> beat_commands(const DaemonInfo& self, std::int64_t now_ms, std::int64_t beat_ms,
                                   std::int64_t max_signals);
inline constexpr std::size_t kBeatRepliesAfterExec = 4;
// The registry without this daemon: its member and its three keys.
std::vector<Command> farewell_commands(std::string_view daemon_id);

}  // namespace echomq
