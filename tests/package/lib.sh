# Shared by tests/package/*.sh (sourced, not run): the fresh Debian root
# and running in it.
#
# The root is scripts/debian-base.sh's debootstrapped bookworm, exported and
# turned back from an image into a host: dpkg installs documentation and
# manuals again, apt keeps its downloads, and apt reads the host's sources
# (bookworm, its updates and security, and bookworm-backports, which
# install-deps.sh added for valkey-server); check.sh installs systemd, as a
# host has it. It shares the host's network, with /dev and /proc bound in.
# systemd is not PID 1 in a chroot: see recorder_systemctl.

fail() {
  echo "package-test: FAIL: $*" >&2
  exit 1
}
ok() { echo "package-test: ok: $*"; }
t0=$SECONDS
step() { printf '\n== package-test: %s (at %ds)\n' "$*" $((SECONDS - t0)); }

# wait_for, free_port, start_valkey, stop_emqd, stop_all_and_unmount.
. tests/support/shell_harness.sh

root_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Runs ARGS in the root as root, with a clean environment, as an operator's
# shell would (apt-get, dpkg and the maintainer scripts they run).
in_root() { env -i PATH="$root_path" LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive chroot "$root" "$@"; }
# The same as the unprivileged user nobody (emqd, as the unit's DynamicUser).
as_nobody() { env -i PATH="$root_path" LANG=C.UTF-8 chroot --userspec=nobody:nogroup "$root" "$@"; }

make_root() { # DIR
  root=$1
  mkdir "$root"
  scripts/debian-base.sh --export "$root" >/dev/null
  rm -f "$root/etc/dpkg/dpkg.cfg.d/echomq-slim" "$root/etc/apt/apt.conf.d/echomq-slim"
  rm -f "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*
  cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/"
  [ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$root/etc/apt/sources.list"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  mount --bind /dev "$root/dev"
  mount -t proc proc "$root/proc"
}

# systemd is not PID 1 in a chroot, so the maintainer scripts' guard
# ([ -d /run/systemd/system ]) would skip every request to it, and whether
# the package starts, restarts or stops emqd would go unchecked. So the root
# claims a running systemd, and its systemctl notes each request in
# /var/log/systemctl-requests; the checks read what was asked. It takes the
# real one's place (dpkg-divert: the maintainer scripts do not see
# /usr/local/sbin first on PATH), hands it what needs no running systemd
# (unit files and their links: preset, enable, is-enabled) and says yes to
# the rest. policy-rc.d lets through emqd's units only: valkey-server's own
# scripts must not start a server in the root on the host's network.
recorder_systemctl() {
  mkdir -p "$root/run/systemd/system"
  in_root dpkg-divert --quiet --local --rename --divert /usr/bin/systemctl.real --add /usr/bin/systemctl ||
    fail "dpkg-divert of the root's /usr/bin/systemctl failed"
  cat >"$root/usr/bin/systemctl" <<'EOF'
#!/bin/sh
# package-test: notes what maintainer scripts ask systemd (tests/package/lib.sh).
echo "$*" >>/var/log/systemctl-requests
case " $* " in
  *" --root="* | *" preset "* | *" enable "* | *" disable "* | *" reenable "* | *" is-enabled "* | *" mask "* | *" unmask "*)
    exec /usr/bin/systemctl.real "$@" ;;
esac
exit 0
EOF
  cat >"$root/usr/sbin/policy-rc.d" <<'EOF'
#!/bin/sh
# package-test: only emqd's units may be acted on (tests/package/lib.sh).
case "$1" in emqd.service | emqd@*) exit 0 ;; *) exit 101 ;; esac
EOF
  chmod 0755 "$root/usr/bin/systemctl" "$root/usr/sbin/policy-rc.d"
}

# What the maintainer scripts asked systemd since the last call, but for
# valkey-server's requests.
systemd_requests() {
  local log=$root/var/log/systemctl-requests
  [ -f "$log" ] || touch "$log"
  grep -v 'valkey' "$log" || true
  : >"$log"
}

# Writes each ```sh block under the heading HEADING (a whole line) of the
# page PAGE to DIR/1.sh, DIR/2.sh, ... in order: the test runs what the
# page shows, so the page cannot drift from what works.
page_blocks() { # PAGE HEADING DIR
  awk -v heading="$2" -v dir="$3" '
    /^```/ {
      if (!fence) { fence = 1; if (inside && $0 == "```sh") { n++; open = 1 } }
      else { fence = 0; open = 0 }
      next
    }
    !fence && /^#/ { inside = ($0 == heading); next }
    open { print > (dir "/" n ".sh") }
  ' "$1"
}

# Runs the page block BLOCK (<version> filled in) with bash -e in the new
# folder DIR, where FILE, the package it installs, is copied first.
run_page_block() { # BLOCK DIR FILE
  mkdir "$2"
  cp "$3" "$2/"
  (cd "$2" && sed "s/<version>/$version/g" "$1" | bash -e) >"$2.log" 2>&1 ||
    fail "the block of docs/clients.md ($(tr '\n' ';' <"$1")) failed in $2: $(tail -n 10 "$2.log")"
}
