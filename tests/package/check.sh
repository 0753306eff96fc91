#!/usr/bin/env bash
# make package-test: the packages of `make packages` installed and used as
# an operator and an application would. As root (chroot, mount):
#
#   tests/package/check.sh DIST REBUILD
#
# DIST holds emqd_VERSION_ARCH.deb, echomq-VERSION-py3-none-any.whl and
# echomq-VERSION.tgz; REBUILD the same .deb as VERSION+b1
# (scripts/build-packages.sh --binnmu 1: the same files repacked).
#
#   1. the .deb, installed with apt-get into a fresh Debian root
#      (tests/package/lib.sh): its files and modes, the units (systemd-analyze
#      verify), the shipped configuration (emqd --check-config), the unit
#      enabled and not started (deb_checks.sh);
#   2. the packaged valkey-server loads the packaged module; the packaged
#      emqd runs jobs from the packaged emq, from the wheel installed into a
#      fresh venv and from the tarball installed into an empty folder
#      (run_checks.sh);
#   3. an upgrade to the rebuild keeps the edited configuration and
#      restarts the unit; remove keeps the configuration and stops the
#      unit; purge removes both (lifecycle_checks.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD

dist=$(cd "${1:?usage: check.sh DIST REBUILD}" && pwd)
rebuild=$(cd "${2:?usage: check.sh DIST REBUILD}" && pwd)
. tests/package/lib.sh
[ "$(id -u)" -eq 0 ] || fail "run as root (make package-test uses sudo): chroot and mount need it"

version=$(head -n 1 VERSION)
arch=$(dpkg --print-architecture)
deb=$dist/emqd_${version}_${arch}.deb
deb2=$rebuild/emqd_${version}+b1_${arch}.deb
wheel=$dist/echomq-${version}-py3-none-any.whl
tarball=$dist/echomq-${version}.tgz
for f in "$deb" "$deb2" "$wheel" "$tarball"; do
  [ -f "$f" ] || fail "no $f: run make packages (and scripts/build-packages.sh --binnmu 1 --out $rebuild)"
done
# MODULE LIST's ver for VERSION (module/CMakeLists.txt).
IFS=. read -r major minor patch <<<"$version"
module_version=$((major * 10000 + minor * 100 + patch))

work=$(mktemp -d /var/tmp/emq-package-test.XXXXXX)
root=
valkey_pid=
emqd_pid=
cleanup() { stop_all_and_unmount "$root" && rm -rf --one-file-system "$work"; }
trap cleanup EXIT

step "a fresh Debian root (scripts/debian-base.sh) in $work/root"
make_root "$work/root"
in_root apt-get update -q >"$work/apt-update.log" 2>&1 ||
  fail "apt-get update in the root failed: $(tail -n 5 "$work/apt-update.log")"
# systemd, as on a host (debootstrap's minbase has none): its units' targets
# are what systemd-analyze verifies emqd's against.
in_root apt-get install -y -q --no-install-recommends systemd </dev/null >"$work/apt-systemd.log" 2>&1 ||
  fail "apt-get install systemd in the root failed: $(tail -n 5 "$work/apt-systemd.log")"
recorder_systemctl

. tests/package/deb_checks.sh
. tests/package/run_checks.sh
. tests/package/lifecycle_checks.sh

echo
echo "package-test: PASS in $((SECONDS - t0)) s: $(basename "$deb") $(stat -c %s "$deb") bytes," \
  "Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB"
