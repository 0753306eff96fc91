# For the shell tests (tests/image/check.sh, tests/package/): waiting on a
# condition with a deadline, a free loopback port, and a valkey-server with
# the emq module on one. Sourced; the caller defines fail MESSAGE.

# Polls a command until it succeeds or the deadline (seconds) passes.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.1
  done
}

# A loopback port nothing answers a connect on.
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  fail "no free loopback port found"
}

# Starts `RUN... valkey-server` (RUN: nothing, or e.g. chroot ROOT) on a
# free loopback port with no persistence, its files in DIR and the module
# MODULE loaded, its output in LOG; sets vport and valkey_pid. A port taken
# between the look and the bind is tried again, three times.
start_valkey() { # LOG DIR MODULE [RUN...]
  local log=$1 dir=$2 module=$3
  shift 3
  for _ in 1 2 3; do
    vport=$(free_port)
    "$@" valkey-server --port "$vport" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
      --loadmodule "$module" >"$log" 2>&1 &
    valkey_pid=$!
    if wait_for 10 sh -c "valkey-cli -p $vport PING 2>/dev/null | grep -q PONG || ! kill -0 $valkey_pid 2>/dev/null"; then
      if kill -0 "$valkey_pid" 2>/dev/null; then
        # $! is the shell running RUN (a function such as in_root), whose
        # child is the server: stopping that shell would leave the server.
        valkey_pid=$(valkey-cli -p "$vport" INFO server | tr -d '\r' | sed -n 's/^process_id://p')
        return 0
      fi
    fi
    valkey_pid=
  done
  fail "valkey-server did not start; its log: $(tail -n 5 "$log")"
}

# SIGTERMs the emqd this shell started (emqd_pid) and waits up to SECONDS
# for it to exit 0 (the drain); WHY is added to the message when it does
# not stop. The caller defines emqd_log, the end of emqd's log.
stop_emqd() { # SECONDS [WHY]
  local pid=$emqd_pid rc=0
  kill -TERM "$pid"
  wait_for "$1" sh -c "! kill -0 $pid 2>/dev/null" || fail "emqd still runs $1 s after SIGTERM${2:+ ($2)}: $(emqd_log)"
  wait "$pid" || rc=$?
  emqd_pid=
  [ "$rc" = 0 ] || fail "emqd exited $rc after SIGTERM, want 0: $(emqd_log)"
}

# An EXIT trap's part: kills the emqd and the valkey-server still running,
# and unmounts ROOT's /proc and /dev (bound in for a chroot) so that
# deleting the tree can never reach the host's. Returns 1 when a mount
# stayed: then the tree must be left alone.
stop_all_and_unmount() { # ROOT
  [ -z "${emqd_pid:-}" ] || kill -KILL "$emqd_pid" 2>/dev/null || true
  [ -z "${valkey_pid:-}" ] || { kill -TERM "$valkey_pid" 2>/dev/null &&
    wait_for 10 sh -c "! kill -0 $valkey_pid 2>/dev/null"; } || true
  [ -n "$1" ] || return 0
  umount "$1/proc" 2>/dev/null || true
  umount "$1/dev" 2>/dev/null || true
  if mountpoint -q "$1/proc" || mountpoint -q "$1/dev"; then
    echo "$1 still has mounts; left it in place" >&2
    return 1
  fi
}
