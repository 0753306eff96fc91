#!/usr/bin/env bash
# Installs everything emqd needs to build, test and run, on Debian 12
# (bookworm), as root. Idempotent: a second run changes nothing.
#
# valkey-server 8.0 lives in bookworm-backports. We add that suite by reusing
# the URIs of the system's own Debian source, so this script works behind a
# mirror or a snapshot and names no archive host of its own.
#
#   scripts/install-deps.sh            build + demo + test + run dependencies
#                                      (make test; the same as --test)
#   scripts/install-deps.sh --build    what building needs, no test tools
#                                      (make build; the image's build stage)
#   scripts/install-deps.sh --demo     --build, and what the demo's handlers
#                                      run (make demo)
#   scripts/install-deps.sh --runtime  only what the emqd binaries need to run
#   scripts/install-deps.sh --package  what building needs, and the tools that
#                                      make the packages (make deb, make
#                                      packages)
#   ... --package-test                 --package, and what installs and runs
#                                      them in a fresh Debian root (make
#                                      package-test)
#   ... --list                         print the Debian packages, install nothing
#   scripts/install-deps.sh --mirror   print the URI of the system's bookworm
#                                      source (scripts/image-test.sh
#                                      debootstraps from it), install nothing
set -euo pipefail

usage() {
  echo "usage: install-deps.sh [--test|--build|--demo|--runtime|--package|--package-test] [--list] | --mirror" >&2
  exit 2
}
mode=all
list=no
mirror=no
for arg in "$@"; do
  case "$arg" in
    --test) mode=all ;;
    --runtime | --build | --demo | --package | --package-test) mode=$arg ;;
    --list) list=yes ;;
    --mirror) mirror=yes ;;
    *) usage ;;
  esac
done

backports_list=/etc/apt/sources.list.d/echomq-backports.sources

# Prints "URIS<TAB>SIGNED_BY" for the stanza that serves plain "bookworm".
debian_source() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && [ "$f" != "$backports_list" ] || continue
    awk -v RS= -F'\n' '
      {
        uris = ""; suites = ""; signed = ""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/)      { uris = $i;   sub(/^URIs:[ \t]*/, "", uris) }
          if ($i ~ /^Suites:/)    { suites = $i; sub(/^Suites:[ \t]*/, "", suites) }
          if ($i ~ /^Signed-By:/) { signed = $i; sub(/^Signed-By:[ \t]*/, "", signed) }
        }
        n = split(suites, s, /[ \t]+/)
        for (j = 1; j <= n; j++) if (s[j] == "bookworm") { print uris "\t" signed; exit }
      }' "$f"
  done
  # One-line format, as on older installs: "deb [opts] URI bookworm main".
  if [ -f /etc/apt/sources.list ]; then
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i == "bookworm") { print $(i-1) "\t"; exit } }' \
      /etc/apt/sources.list
  fi
}

if [ "$mirror" = yes ]; then
  uris=$(debian_source | head -n 1 | cut -f 1)
  [ -n "$uris" ] || { echo "install-deps.sh: no apt source for 'bookworm' found" >&2; exit 1; }
  echo "${uris%% *}"
  exit 0
fi

add_backports() {
  if [ -f "$backports_list" ] || grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    return
  fi
  local line uris signed
  line=$(debian_source | head -n 1)
  uris=${line%%$'\t'*}
  signed=${line#*$'\t'}
  if [ -z "$uris" ]; then
    echo "install-deps.sh: no apt source for 'bookworm' found; add bookworm-backports by hand" >&2
    exit 1
  fi
  {
    echo "Types: deb"
    echo "URIs: $uris"
    echo "Suites: bookworm-backports"
    echo "Components: main"
    [ -n "$signed" ] && echo "Signed-By: $signed"
  } > "$backports_list"
  echo "install-deps.sh: added bookworm-backports from $uris"
}

# The shared libraries emqd and emq link (readelf -d: NEEDED), beyond libc6,
# libstdc++6 and libgcc-s1 that every Debian image has; tests/ops checks
# this list against the built binaries. emqd speaks the systemd notify
# protocol itself and serves /metrics itself: no libsystemd, no civetweb.
# opentelemetry-cpp (emqd's spans; to build, its -dev and libabsl-dev for
# its headers) comes from bookworm-backports, as valkey-server does; its
# headers, built with Abseil, have emqd link libabsl20220623 by name.
runtime_pkgs=(
  libhiredis0.14 libyaml-cpp0.7 libspdlog1.10 libfmt9 libprometheus-cpp-core1.0 libjemalloc2 libssl3
  libdate-tz3 tzdata ca-certificates opentelemetry-cpp libabsl20220623
)
build_pkgs=(
  build-essential cmake pkg-config ninja-build
  libhiredis-dev libssl-dev libjemalloc-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  prometheus-cpp-dev nlohmann-json3-dev libsystemd-dev
  libhowardhinnant-date-dev opentelemetry-cpp-dev libabsl-dev
)
# The demo's handlers (examples/handlers/exec/word_count.py) and its
# progress line.
demo_pkgs=(python3)
test_pkgs=(
  libgtest-dev libgmock-dev googletest
  python3-redis python3-croniter python3-venv python3-wheel
  chromium chromium-driver python3-selenium
  systemd prometheus openssl clang-format help2man
  python3-opentelemetry-proto python3-protobuf curl
)
# The .deb (debhelper: its rules; lintian: Debian's check of it; help2man:
# its manual pages from --help), the Python wheel (python3-build, offline
# with Debian's setuptools and wheel) and the npm tarball (npm pack).
package_pkgs=(
  debhelper dpkg-dev fakeroot lintian help2man
  python3-build python3-wheel python3-setuptools
)
# make package-test: the fresh Debian root the packages are installed into
# (debootstrap, kept as podman's base image as make image-test keeps it),
# the fresh environment the wheel goes into (python3-venv) and the library
# it runs with (python3-redis); systemd: systemd-analyze, for the installed
# units.
package_test_pkgs=(debootstrap podman systemd python3-venv python3-redis)
# systemd: systemd-analyze, which checks systemd/emqd.service; prometheus:
# promtool, which checks the /metrics text (tests/ops); chromium,
# chromium-driver, python3-selenium: the browser tests of `emq web`
# (tests/emq/web); libdate-tz3, tzdata: schedules' time zones, read from the
# system's tzdata; python3-croniter: the oracle of the cron tests
# (tests/daemon/schedule); python3-opentelemetry-proto, python3-protobuf:
# the tracing tests' OTLP receiver (tests/support/otlp_receiver.py); curl:
# the shell handler that passes a trace on (examples/handlers/exec/
# traced_curl.sh); python3-venv, python3-wheel: the Python client's
# install as docs/clients.md gives it (tests/e2e/clients_doc_test.cpp runs
# it), python3-redis: that client's library; clang-format: Style.ClangFormat holds the sources to
# .clang-format (scripts/format.sh); openssl: the TLS
# tests make their own CA and certificates with it (tests/support/test_pki);
# help2man: the manual pages, made as the .deb makes them and checked
# (tests/ops/man_pages_test.cpp).

missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

case "$mode" in
  --runtime) want=("${runtime_pkgs[@]}") ;;
  --build)   want=("${runtime_pkgs[@]}" "${build_pkgs[@]}") ;;
  --demo)    want=("${runtime_pkgs[@]}" "${build_pkgs[@]}" "${demo_pkgs[@]}") ;;
  --package) want=("${runtime_pkgs[@]}" "${build_pkgs[@]}" "${package_pkgs[@]}") ;;
  --package-test)
    want=("${runtime_pkgs[@]}" "${build_pkgs[@]}" "${package_pkgs[@]}" "${package_test_pkgs[@]}") ;;
  *)         want=("${runtime_pkgs[@]}" "${build_pkgs[@]}" "${demo_pkgs[@]}" "${test_pkgs[@]}") ;;
esac
if [ "$list" = yes ]; then
  # valkey-server comes from bookworm-backports, for `valkey.url: embedded`.
  printf '%s\n' "${want[@]}" valkey-server valkey-tools
  exit 0
fi

[ "$(id -u)" -eq 0 ] || { echo "install-deps.sh: run as root (or with sudo)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
add_backports
mapfile -t need < <(missing "${want[@]}")
# The pool handler examples and tests use Node; keep a newer one if present.
[ "$mode" = all ] && ! command -v node >/dev/null && need+=(nodejs)
# npm installs the Node speaker's ioredis (clients/node, `make node-deps`)
# and packs its tarball (--package).
case "$mode" in all | --package | --package-test) ! command -v npm >/dev/null && need+=(npm) ;; esac
valkey_needed=$(missing valkey-server valkey-tools)

if [ ${#need[@]} -gt 0 ] || [ -n "$valkey_needed" ]; then
  apt-get update -q
  [ ${#need[@]} -gt 0 ] && apt-get install -y -q --no-install-recommends "${need[@]}"
  [ -n "$valkey_needed" ] && apt-get install -y -q --no-install-recommends -t bookworm-backports valkey-server valkey-tools
fi
# The Debian packages start system-wide servers (valkey, and prometheus for
# promtool's sake); tests and the demo start their own, so keep the ports
# free and the machine quiet.
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl disable --now valkey-server >/dev/null 2>&1 || true
  if [ "$mode" = all ]; then systemctl disable --now prometheus >/dev/null 2>&1 || true; fi
fi
command -v valkey-server >/dev/null || { echo "install-deps.sh: valkey-server missing after install" >&2; exit 1; }
echo "install-deps.sh: ready ($(valkey-server --version | head -n 1))"
