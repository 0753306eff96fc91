#!/usr/bin/env bash
# The checks of `make image-test`, on a built image (scripts/image-test.sh
# builds it and calls this). As root: tests/image/check.sh IMAGE [DEB]
# (DEB: the .deb the image was built from, whose programs it must hold).
#
# No container runtime runs the image here: `podman run` fails in some
# sandboxes (CI's among them: the runtime's setrlimit is refused). Instead
# the image's filesystem is exported (`podman create` + `podman export`) and
# its programs run under `chroot --userspec=USER` with the image's USER,
# ENV, WORKDIR, ENTRYPOINT and CMD, on the host's network (with /proc and
# /dev bound in, as a runtime would give them). The files, the user and the
# command are the image's own; the isolation is not tested.
#
# What a user mounts in, the test writes into the exported tree: the
# configuration at /etc/echomq/emqd.yaml and the handlers under
# /srv/handlers (shell: the image has no Python; see docs/operations.md).
set -euo pipefail
cd "$(dirname "$0")/../.."

image=${1:?usage: check.sh IMAGE [DEB]}
deb=${2:-}
fail() {
  echo "image-test: FAIL: $*" >&2
  exit 1
}
ok() { echo "image-test: ok: $*"; }

work=$(mktemp -d /var/tmp/emq-image-test.XXXXXX)
root=$work/root
mkdir "$root"
valkey_pid=
emqd_pid=
container=
# wait_for, free_port, start_valkey, stop_emqd, stop_all_and_unmount.
. tests/support/shell_harness.sh
cleanup() {
  [ -n "$container" ] && podman rm -f -v "$container" >/dev/null 2>&1
  stop_all_and_unmount "$root" && rm -rf --one-file-system "$work"
}
trap cleanup EXIT

# --- the image's configuration ------------------------------------------------
inspect() { podman image inspect --format "$1" "$image"; }
user=$(inspect '{{.Config.User}}')
workdir=$(inspect '{{.Config.WorkingDir}}')
mapfile -t env < <(inspect '{{range .Config.Env}}{{.}}{{"\n"}}{{end}}')
# A runtime gives a PATH when the image sets none; so does this test.
[[ " ${env[*]}" == *" PATH="* ]] || env+=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
mapfile -t entrypoint < <(inspect '{{range .Config.Entrypoint}}{{.}}{{"\n"}}{{end}}')
mapfile -t cmd < <(inspect '{{range .Config.Cmd}}{{.}}{{"\n"}}{{end}}')
mapfile -t healthcheck < <(inspect '{{if .HealthCheck}}{{range .HealthCheck.Test}}{{.}}{{"\n"}}{{end}}{{end}}')

size=$(inspect '{{.Size}}')
echo "image-test: image $image: $((size / 1000000)) MB ($size bytes, podman image inspect)"

# --- its filesystem -------------------------------------------------------------
# podman create and rm also arm and disarm a systemd timer for the
# HEALTHCHECK, and say so on stderr where there is no systemd: kept aside.
container=$(podman create "$image" 2>"$work/create.log") || fail "podman create: $(cat "$work/create.log")"
podman export "$container" | tar -x -C "$root"
podman rm -v "$container" >/dev/null 2>>"$work/create.log"
container=
echo "image-test: exported filesystem: $(du -sh --apparent-size "$root" | cut -f 1)"
mount --bind /dev "$root/dev"
mount -t proc proc "$root/proc"

# Runs ARGS in the image as its USER, in its WORKDIR, with its ENV only.
in_image() {
  env -i "${env[@]}" chroot --userspec="$user" "$root" env -C "$workdir" "$@"
}
# The same, as root: for looking at the image, never for running emqd.
as_root() { env -i "${env[@]}" chroot "$root" "$@"; }

# --- a non-root user ------------------------------------------------------------
[[ "$user" =~ ^[0-9]+:[0-9]+$ ]] || fail "USER is '$user': want numeric UID:GID (Kubernetes' runAsNonRoot needs a number)"
[ "${user%%:*}" != 0 ] || fail "USER is root"
[ "$(in_image id -u)" = "${user%%:*}" ] || fail "chroot --userspec=$user did not run as ${user%%:*}"
as_root getent passwd "${user%%:*}" >/dev/null || fail "user ${user%%:*} has no /etc/passwd entry in the image"
[ "$(stat -c %u "$root$workdir")" = "${user%%:*}" ] || fail "WORKDIR $workdir is not owned by ${user%%:*}: emqd cannot keep state there"
ok "runs as $user ($(as_root getent passwd "${user%%:*}" | cut -d: -f1)), WORKDIR $workdir its own"
[ "${entrypoint[*]}" = emqd ] || fail "ENTRYPOINT is '${entrypoint[*]}', want emqd"

# --- the programs -----------------------------------------------------------------
out=$(in_image emqd --version 2>&1) || fail "emqd --version exited $?: $out"
[[ "$out" == *emqd* ]] || fail "emqd --version printed '$out'"
ok "emqd --version: $out"
out=$(in_image emq --version 2>&1) || fail "emq --version exited $?: $out"
[[ "$out" == *emq* ]] || fail "emq --version printed '$out'"
ok "emq --version: $out"

# --- the files where docs/operations.md says --------------------------------------
for f in lua/*.lua; do
  cmp -s "$f" "$root/usr/share/echomq/$f" || fail "/usr/share/echomq/$f is missing or differs from the repository's $f"
done
extra=$(comm -13 <(cd lua && ls *.lua) <(cd "$root/usr/share/echomq/lua" && ls))
[ -z "$extra" ] || fail "/usr/share/echomq/lua holds files the repository's lua/ does not: $extra"
ok "the Lua transitions at /usr/share/echomq/lua ($(ls lua/*.lua | wc -l) files, as in lua/)"
module=/usr/lib/echomq/emq.so
[ -f "$root$module" ] || fail "no emq module at $module"
[ -x "$root$module" ] || fail "$module is not executable ($(stat -c %A "$root$module")): valkey-server 8 refuses to load it"
ok "the emq module at $module"
# Built from the .deb: the very files it packs, which make test ran, not a
# second compile.
if [ -n "$deb" ]; then
  for f in /usr/bin/emqd /usr/bin/emq $module; do
    dpkg-deb --fsys-tarfile "$deb" | tar -xO ".$f" | cmp -s - "$root$f" ||
      fail "the image's $f is not the one in $(basename "$deb")"
  done
  ok "emqd, emq and emq.so are $(basename "$deb")'s, byte for byte"
fi
[ -f "$root/etc/echomq/emqd.example.yaml" ] || fail "no /etc/echomq/emqd.example.yaml"
[ ! -e "$root/etc/echomq/emqd.yaml" ] || fail "the image has /etc/echomq/emqd.yaml: the docs say it is mounted in"
ok "/etc/echomq/emqd.example.yaml, and no emqd.yaml (it is mounted in)"
out=$(in_image valkey-server --version) || fail "valkey-server (for url: embedded) does not run: $out"
ok "valkey-server for url: embedded: $out"

# --- no compiler, no test binaries -------------------------------------------------
for tool in cc gcc g++ c++ cpp clang clang++ ld as make cmake ninja; do
  if p=$(as_root sh -c "command -v $tool"); then fail "the image holds a build tool: $tool at $p"; fi
done
found=$(find "$root" -xdev \( -name 'cc1*' -o -name 'libgtest*' -o -name 'libgmock*' -o -name '*_test' \
  -o -name '*_tests' -o -name 'emq_bench*' -o -name 'fuzz_*' -o -name CMakeCache.txt \) -print | sed "s#^$root##")
[ -z "$found" ] || fail "the image holds build or test files: $found"
for d in /src /build /out; do [ ! -e "$root$d" ] || fail "the image holds the build stage's $d"; done
# Every program outside Debian's packages is one the Dockerfile copies in.
owned=$(as_root sh -c 'dpkg-query -W -f "\${Package}\n" | xargs dpkg-query -L' |
  sed -E 's#^/(bin|sbin|lib|lib64)/#/usr/\1/#' | sort -u)
unowned=$(cd "$root" && find usr/bin usr/sbin usr/local usr/lib/echomq -type f | sed 's#^#/#' |
  sort | comm -23 - <(echo "$owned"))
want=$(printf '%s\n' /usr/bin/emq /usr/bin/emqd $module | sort)
[ "$unowned" = "$want" ] || fail "programs outside Debian's packages: want only
$want
got
$unowned"
ok "no compiler, no test binaries; outside Debian's packages only emqd, emq and emq.so"

# --- a configuration with an error exits 2 naming file, line and key -----------------
cat >"$root/etc/echomq/bad.yaml" <<'EOF'
valkey:
  url: valkey://127.0.0.1:6379/0
queues:
  - name: q
    concurrency: 0
    handler: { type: exec, command: ["/bin/true"] }
EOF
rc=0
out=$(in_image "${entrypoint[@]}" --config /etc/echomq/bad.yaml 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "a config with an error: exit $rc, want 2; it said: $out"
[[ "$out" == */etc/echomq/bad.yaml:5:*concurrency* ]] ||
  fail "a config with an error: want file, line 5 and the key concurrency in: $out"
ok "a bad config exits 2: $(echo "$out" | grep -m1 bad.yaml)"
rm "$root/etc/echomq/bad.yaml"

# --- a valkey-server on the host, with the image's emq module -------------------------
vport=
cli() { valkey-cli -p "$vport" "$@"; }
start_valkey "$work/valkey.log" "$work" "$root$module"
cli MODULE LIST | grep -qx emq || fail "the host's valkey-server did not load the image's $module: $(tail -n 5 "$work/valkey.log")"
ok "valkey-server on 127.0.0.1:$vport loaded the image's emq module"

# --- emqd with an exec, a pool and a slow queue -----------------------------------------
mport=$(free_port)
mkdir -p "$root/srv/handlers"
# The exec handler: the payload upper-cased, and the user it ran as.
cat >"$root/srv/handlers/upper.sh" <<'EOF'
#!/bin/sh
printf '%s uid=%s' "$(tr a-z A-Z)" "$(id -u)"
EOF
cp examples/handlers/pool/echo.sh "$root/srv/handlers/echo.sh"
chmod 0755 "$root/srv/handlers/upper.sh" "$root/srv/handlers/echo.sh"
cat >"$root/etc/echomq/emqd.yaml" <<EOF
valkey:
  url: valkey://127.0.0.1:$vport/0
metrics:
  listen: 127.0.0.1:$mport
shutdown:
  drain_timeout_s: 30
defaults:
  keep_completed_s: 3600
queues:
  - name: img-exec
    handler: { type: exec, command: ["/srv/handlers/upper.sh"] }
  - name: img-pool
    handler: { type: pool, command: ["/srv/handlers/echo.sh"] }
  - name: img-slow
    handler: { type: exec, command: ["/bin/sh", "-c", "sleep 3; echo drained"] }
EOF
# The Dockerfile's HEALTHCHECK reads the port from EMQ_HEALTH_PORT.
env=("${env[@]/#EMQ_HEALTH_PORT=*/EMQ_HEALTH_PORT=$mport}")
# Not through in_image: $! must be emqd itself (env, chroot and env exec it).
env -i "${env[@]}" chroot --userspec="$user" "$root" env -C "$workdir" "${entrypoint[@]}" "${cmd[@]}" \
  >"$work/emqd.log" 2>&1 &
emqd_pid=$!
emqd_log() { tail -n 20 "$work/emqd.log"; }

# A producer on the host, with no echomq program: the image's own enqueue
# script, by EVAL (KEYS row, pending; ARGV id, payload).
enqueue() { # QUEUE ID PAYLOAD
  local r
  r=$(cli EVAL "$(cat "$root/usr/share/echomq/lua/enqueue.lua")" 2 "emq:{$1}:job:$2" "emq:{$1}:pending" "$2" "$3")
  [ "$r" = 1 ] || fail "enqueue $1 $2: the server said '$r'"
}
state_is() { [ "$(cli HGET "emq:{$1}:job:$2" state)" = "$3" ]; }
# Waits for a job to complete and prints its result.
result_of() { # QUEUE ID
  wait_for 30 state_is "$1" "$2" completed ||
    fail "job $2 on $1 is '$(cli HGET "emq:{$1}:job:$2" state)' after 30 s, not completed; emqd's log: $(emqd_log)"
  cli HGET "emq:{$1}:job:$2" result
}

healthz() { # prints the status code of GET /healthz
  exec 3<>"/dev/tcp/127.0.0.1/$mport" || return 1
  printf 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
  local _ code
  read -r -t 5 _ code _ <&3 || true
  exec 3<&-
  echo "$code"
}
healthy() { [ "$(healthz 2>/dev/null)" = 200 ]; }
wait_for 30 healthy || fail "/healthz on 127.0.0.1:$mport is not 200 after 30 s (last: $(healthz 2>&1)); emqd's log: $(emqd_log)"
ok "/healthz answers 200"
grep -q 'executor native' "$work/emqd.log" || fail "emqd did not use the image's emq module (no 'executor native'): $(emqd_log)"
ok "emqd runs the core transitions in the image's module (executor native)"
if [ ${#healthcheck[@]} -gt 0 ]; then
  [ "${healthcheck[0]}" = CMD ] || fail "HEALTHCHECK is '${healthcheck[*]}': want the CMD form"
  in_image "${healthcheck[@]:1}" || fail "the image's HEALTHCHECK command fails against a healthy emqd"
  ok "the image's HEALTHCHECK command passes (kept by --format docker)"
else
  fail "the image has no HEALTHCHECK: build it with --format docker (the OCI format drops it)"
fi

enqueue img-exec JOB_image-exec "hello from the host"
r=$(result_of img-exec JOB_image-exec)
[ "$r" = "HELLO FROM THE HOST uid=${user%%:*}" ] || fail "the exec job's result is '$r'"
ok "exec handler ran a job from the host: $r"
enqueue img-pool JOB_image-pool "pooled"
r=$(result_of img-pool JOB_image-pool)
[ "$r" = pooled ] || fail "the pool job's result is '$r'"
ok "pool handler (examples/handlers/pool/echo.sh) ran a job from the host: $r"

# --- SIGTERM drains: the running job finishes, emqd exits 0 ----------------------------
enqueue img-slow JOB_image-slow "x"
wait_for 30 state_is img-slow JOB_image-slow active || fail "the slow job never became active: $(emqd_log)"
stop_emqd 40 "drain_timeout_s is 30"
state_is img-slow JOB_image-slow completed ||
  fail "the job running at SIGTERM is '$(cli HGET "emq:{img-slow}:job:JOB_image-slow" state)', not completed: the drain did not wait for it"
[ "$(cli HGET "emq:{img-slow}:job:JOB_image-slow" result)" = drained ] || fail "the drained job's result is wrong"
ok "SIGTERM drained the running job and exited 0"

echo "image-test: PASS ($((size / 1000000)) MB)"
