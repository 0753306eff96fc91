#!/usr/bin/env bash
# make image-test: builds the image from the Dockerfile and runs it, on a
# Debian 12 machine, as root (or through sudo). For those who ship the image.
#
#   1. installs podman and debootstrap from Debian's archive, and
#      valkey-server through scripts/install-deps.sh --runtime;
#   2. makes the base image debian:bookworm-slim locally, with
#      `debootstrap --variant=minbase bookworm` from the system's own apt
#      source and `podman import` (scripts/debian-base.sh; no image registry
#      is needed; the base is kept in podman's storage, so the next run on
#      this machine reuses it; `podman rmi debian:bookworm-slim` makes it
#      anew);
#   3. builds the image (`podman build --format docker`: the OCI format
#      would drop the HEALTHCHECK) from the .deb given (make image-test
#      gives make deb's: the programs make test ran, compiled once), or,
#      given none, compiling the tree in the Dockerfile's build stage;
#   4. checks what the image holds and runs it against a valkey-server this
#      script starts on a free loopback port.
#
# The image is run WITHOUT a container runtime: its filesystem is exported
# (`podman create` + `podman export`) and emqd runs in it under
# `chroot --userspec=UID:GID` with the image's USER, ENV and WORKDIR,
# sharing the host's network. That is because `podman run` fails in some
# sandboxes (CI's among them: the runtime's setrlimit is refused); what is
# checked is the image's own files, run as its own user, which is what a
# runtime would run.
#
#   scripts/image-test.sh             all of the above
#   scripts/image-test.sh --deb FILE  the same, the image's programs taken
#                                     from the .deb FILE (under this tree)
#   scripts/image-test.sh --no-build  the checks only, on the image built last
set -euo pipefail
cd "$(dirname "$0")/.."

build=yes
deb=
case "${1:-}" in
  "") ;;
  --no-build) build=no ;;
  --deb) deb=${2:?--deb needs a .deb file} ;;
  *) echo "usage: image-test.sh [--deb FILE | --no-build]" >&2; exit 2 ;;
esac

base=localhost/debian:bookworm-slim
image=localhost/emqd:image-test
t0=$SECONDS
step() { printf '\n== image-test: %s (at %ds)\n' "$*" $((SECONDS - t0)); }
fail() {
  echo "image-test: FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root (make image-test uses sudo): podman build, debootstrap and chroot need it"
# The build context is this tree: the .deb must be in it, where .dockerignore
# lets it through (dist/).
if [ -n "$deb" ]; then
  [ -f "$deb" ] || fail "no .deb at $deb: make deb builds it"
  deb=$(realpath --relative-to=. "$deb")
  [[ "$deb" == dist/emqd_*.deb ]] || fail "the .deb must be dist/emqd_*.deb in this tree (the build context), not $deb"
fi

# --- 1. what this needs on the host -----------------------------------------
step "installing podman, debootstrap, valkey-server"
scripts/install-deps.sh --runtime >/dev/null
if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends podman debootstrap
fi

# --- 2. the base image, made here and cached ---------------------------------
# scripts/debian-base.sh debootstraps it unless podman keeps it already; make
# package-test installs the .deb into the same base.
step "base image $base (scripts/debian-base.sh: cached, or debootstrapped now)"
scripts/debian-base.sh >/dev/null

# --- 3. the image -------------------------------------------------------------
if [ "$build" = yes ]; then
  step "podman build${deb:+ from $deb} (log: /tmp/emq-image-build.log)"
  build_start=$SECONDS
  # Each line of the log stamped with the seconds since the build began.
  podman build --isolation chroot --network host --pull=never --format docker --build-arg "EMQD_DEB=$deb" -t "$image" . 2>&1 |
    while IFS= read -r line; do printf '[%4ds] %s\n' $((SECONDS - build_start)) "$line"; done \
      >/tmp/emq-image-build.log ||
    fail "podman build failed; the end of /tmp/emq-image-build.log:
$(tail -n 30 /tmp/emq-image-build.log)"
  echo "built in $((SECONDS - build_start)) s"
  # The build stage's layers (about 2 GB, and a new one for every source
  # change) are not kept: what is kept between runs is the base and the
  # image itself.
  podman image prune -f >/dev/null
fi
podman image exists "$image" || fail "no image $image: run without --no-build first"

# The checks know the .deb only when this build took it (not --no-build).
exec tests/image/check.sh "$image" ${deb:+"$deb"}
