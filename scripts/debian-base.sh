#!/usr/bin/env bash
# The fresh Debian 12 root that make image-test builds its image on and
# make package-test installs the .deb into: `debootstrap --variant=minbase
# bookworm` from the system's own apt source, trimmed like the registry's
# debian:bookworm-slim and kept in podman's storage as
# localhost/debian:bookworm-slim, so the next run on this machine reuses it
# (`podman rmi debian:bookworm-slim` makes it anew). No image registry is
# needed. As root, with podman and debootstrap installed (install-deps.sh
# --package installs both).
#
#   scripts/debian-base.sh            makes the base unless podman has it;
#                                     prints its name
#   scripts/debian-base.sh --export DIR
#                                     the same, then writes its files into
#                                     the empty directory DIR
set -euo pipefail
cd "$(dirname "$0")/.."

base=localhost/debian:bookworm-slim
fail() {
  echo "debian-base: FAIL: $*" >&2
  exit 1
}
export_to=
case "${1:-}" in
  "") ;;
  --export) export_to=${2:?usage: debian-base.sh [--export DIR]} ;;
  *) echo "usage: debian-base.sh [--export DIR]" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || fail "run as root: debootstrap and podman import need it"
command -v podman >/dev/null && command -v debootstrap >/dev/null ||
  fail "podman and debootstrap are needed: scripts/install-deps.sh --package installs them"

if ! podman image exists "$base"; then
  mirror=$(scripts/install-deps.sh --mirror)
  echo "debian-base: debootstrap --variant=minbase bookworm from $mirror" >&2
  rootfs=$(mktemp -d /var/tmp/emq-bookworm.XXXXXX)
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/tmp/emq-debootstrap.log 2>&1 ||
    fail "debootstrap failed; its log: /tmp/emq-debootstrap.log (last lines: $(tail -n 3 /tmp/emq-debootstrap.log))"
  # Like the registry's bookworm-slim, in this base and every layer built on
  # it: dpkg leaves out documentation (but copyright files), manuals and
  # translations; apt keeps no downloaded package; no lists are shipped.
  case "$rootfs" in /var/tmp/emq-bookworm.?*) ;; *) fail "refusing to trim '$rootfs'" ;; esac
  printf '%s\n' 'path-exclude /usr/share/doc/*' 'path-include /usr/share/doc/*/copyright' \
    'path-exclude /usr/share/man/*' 'path-exclude /usr/share/info/*' \
    'path-exclude /usr/share/locale/*' 'path-exclude /usr/share/lintian/*' \
    >"$rootfs/etc/dpkg/dpkg.cfg.d/echomq-slim"
  echo 'APT::Keep-Downloaded-Packages "false";' >"$rootfs/etc/apt/apt.conf.d/echomq-slim"
  find "$rootfs/usr/share/doc" -mindepth 2 ! -type d ! -name copyright -delete
  for d in usr/share/man usr/share/info usr/share/locale usr/share/lintian var/lib/apt/lists; do
    [ ! -d "$rootfs/$d" ] || find "$rootfs/$d" -mindepth 1 -delete
  done
  find "$rootfs/var/cache/apt" -name '*.deb' -delete
  tar -C "$rootfs" --numeric-owner -c . | podman import --quiet --change 'CMD ["bash"]' - "$base" >/dev/null ||
    fail "podman import of the debootstrapped tree failed"
  rm -rf --one-file-system "$rootfs"
fi

if [ -n "$export_to" ]; then
  [ -d "$export_to" ] && [ -z "$(ls -A "$export_to")" ] || fail "--export needs an empty directory, not '$export_to'"
  container=$(podman create "$base" 2>/dev/null) || fail "podman create $base failed"
  podman export "$container" | tar -x -C "$export_to" || fail "podman export of $base failed"
  podman rm -v "$container" >/dev/null 2>&1 || true
fi
echo "$base"
