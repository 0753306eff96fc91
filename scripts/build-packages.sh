#!/usr/bin/env bash
# make packages, make deb: the three packages of this tree, all at the
# version in VERSION, into dist/ (scripts/install-deps.sh --package installs
# what this needs; no network is used).
#
#   emqd_VERSION_ARCH.deb        the daemon as a Debian package: debhelper's
#                                rules in packaging/debian/, run by
#                                dpkg-buildpackage, then checked by lintian
#                                (an error fails the build)
#   echomq-VERSION-py3-none-any.whl   clients/python, by python3 -m build
#                                with Debian's setuptools (no isolation, so
#                                offline)
#   echomq-VERSION.tgz           clients/node, by npm pack
#
# The wheel and the tarball carry a copy of lua/ their build takes (setup.py,
# clients/node/lib/copy_scripts.js). Each speaker is built from a staged copy
# of its folder beside lua/ and VERSION, so the build leaves nothing in the
# source tree and the tarball's package.json says VERSION.
#
#   scripts/build-packages.sh                 all three
#   scripts/build-packages.sh --deb           the .deb alone
#   ... --binnmu N                            the .deb as VERSION+bN: the
#                                             same tree built again, as
#                                             Debian numbers a rebuild (make
#                                             package-test upgrades to it)
#   ... --out DIR                             into DIR instead of dist/
#
# Environment: BUILD_DEB (default build-deb) holds the CMake build of the
# package, kept between runs; JOBS (default nproc) compile jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

what=all
binnmu=
out=$top/dist
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) what=deb ;;
    --binnmu) binnmu=${2:?--binnmu needs a number}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    *) echo "usage: build-packages.sh [--deb] [--binnmu N] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done
fail() {
  echo "build-packages: FAIL: $*" >&2
  exit 1
}
step() { echo "== build-packages: $*"; }

version=$(head -n 1 VERSION)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "VERSION holds '$version', want MAJOR.MINOR.PATCH"
deb_version=$version${binnmu:++b$binnmu}
build_deb=${BUILD_DEB:-build-deb}
[[ "$build_deb" == /* ]] || build_deb=$top/$build_deb
mkdir -p "$out" "$build_deb"
out=$(cd "$out" && pwd)

# A changelog entry for this build; its date (the last commit's, else
# VERSION's) is what dpkg stamps the files with (SOURCE_DATE_EPOCH).
changelog() {
  local when
  when=$(git log -1 --format=%aD 2>/dev/null || date -R -r VERSION)
  printf 'emqd (%s) unstable; urgency=medium\n\n' "$deb_version"
  if [ -n "$binnmu" ]; then
    printf '  * Rebuild %s of %s, from the same tree.\n\n' "$binnmu" "$version"
  else
    printf '  * emqd %s, built from the echomq tree%s.\n\n' "$version" \
      "$(git rev-parse --short HEAD 2>/dev/null | sed 's/^/ at /')"
  fi
  printf ' -- %s  %s\n' "$(sed -n 's/^Maintainer: //p' packaging/debian/control)" "$when"
}

build_deb_package() {
  # dh runs in a staging directory: debian/ is packaging/debian/ with the
  # changelog, src/ a copy of the tree (dh wants the sources under its
  # working directory; build trees, git and node_modules left out). The
  # copy keeps the files' times and its path never changes, so the CMake
  # build in $build_deb/cmake (outside it) is reused: a rebuild compiles
  # only what changed.
  local stage=$build_deb/stage arch deb
  rm -rf "$stage"
  mkdir -p "$stage/src"
  cp -r packaging/debian "$stage/debian"
  # (tar exits 1 when a directory changed as it read it: a build writing
  # beside the sources, which are not what changed.)
  { tar -c --warning=no-file-changed --exclude=./.git --exclude='./build*' --exclude="./${build_deb#"$top"/}" \
    --exclude=./dist --exclude=node_modules --exclude=__pycache__ --exclude=./bench/.peer . || [ $? = 1 ]; } |
    tar -x -C "$stage/src"
  changelog >"$stage/debian/changelog"
  arch=$(dpkg-architecture -qDEB_HOST_ARCH)
  deb=emqd_${deb_version}_${arch}.deb
  step "$deb: dpkg-buildpackage (log: $build_deb/dpkg-buildpackage.log)"
  (cd "$stage" && EMQ_DEB_BUILDDIR=$build_deb/cmake DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} parallel=${JOBS:-$(nproc)}" \
    dpkg-buildpackage -b -us -uc) >"$build_deb/dpkg-buildpackage.log" 2>&1 ||
    fail "dpkg-buildpackage failed; the end of $build_deb/dpkg-buildpackage.log:
$(tail -n 30 "$build_deb/dpkg-buildpackage.log")"
  step "$deb: lintian"
  # Every tag but the pedantic and experimental ones; errors fail the build.
  lintian --display-level '>=info' --fail-on error "$build_deb/$deb" | tee "$build_deb/lintian.txt" ||
    fail "lintian found errors in $deb (above; also in $build_deb/lintian.txt)"
  mv "$build_deb/$deb" "$out/$deb"
  echo "$out/$deb: $(stat -c %s "$out/$deb") bytes, Installed-Size $(dpkg-deb -f "$out/$deb" Installed-Size) KiB"
}

# A copy of clients/NAME beside lua/ and VERSION, as in the tree, without
# what the tree's own use leaves there (node_modules, caches, builds).
stage_speaker() {
  local name=$1 stage=$build_deb/speakers
  mkdir -p "$stage/clients"
  [ -e "$stage/lua" ] || cp -r lua VERSION "$stage/"
  rm -rf "$stage/clients/$name"
  tar -C clients --exclude=node_modules --exclude=__pycache__ --exclude='*.egg-info' --exclude=build \
    --exclude=dist --exclude=tests --exclude=test -c "$name" | tar -C "$stage/clients" -x
  echo "$stage/clients/$name"
}

build_wheel() {
  local dir
  rm -rf "$build_deb/speakers"
  dir=$(stage_speaker python)
  step "echomq-$version-py3-none-any.whl: Debian's python3 -m build --wheel --no-isolation"
  /usr/bin/python3 -m build --wheel --no-isolation --outdir "$out" "$dir" >"$build_deb/wheel.log" 2>&1 ||
    fail "the wheel did not build; the end of $build_deb/wheel.log:
$(tail -n 20 "$build_deb/wheel.log")"
  [ -f "$out/echomq-$version-py3-none-any.whl" ] || fail "no $out/echomq-$version-py3-none-any.whl after the build"
  echo "$out/echomq-$version-py3-none-any.whl"
}

build_tarball() {
  local dir
  dir=$(stage_speaker node)
  step "echomq-$version.tgz: npm pack"
  (cd "$dir" && npm pkg set "version=$version" && npm pack --pack-destination "$out") >"$build_deb/npm-pack.log" 2>&1 ||
    fail "npm pack failed; the end of $build_deb/npm-pack.log:
$(tail -n 20 "$build_deb/npm-pack.log")"
  [ -f "$out/echomq-$version.tgz" ] || fail "no $out/echomq-$version.tgz after npm pack"
  echo "$out/echomq-$version.tgz"
}

build_deb_package
if [ "$what" = all ]; then
  build_wheel
  build_tarball
fi
