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
# The .deb is made from a CMake build compiled here, not in debian/rules:
# the build in $BUILD (make build's, the binaries make test ran) when it is
# configured, else one of its own in $BUILD_DEB/cmake without tests. Either
# is brought up to date first; both have Debian's hardening flags
# (cmake/debian_build_flags.cmake).
#
# The wheel and the tarball carry a copy of lua/ their build takes (setup.py,
# clients/node/lib/copy_scripts.js). Each speaker is built from a staged copy
# of its folder beside lua/ and VERSION, so the build leaves nothing in the
# source tree and the tarball's package.json says VERSION.
#
#   scripts/build-packages.sh                 all three
#   scripts/build-packages.sh --deb           the .deb alone
#   scripts/build-packages.sh --speakers      the wheel and the tarball alone
#   ... --binnmu N                            no build: dist/'s .deb repacked
#                                             as VERSION+bN, the same files
#                                             under the number Debian gives
#                                             a rebuild (make package-test
#                                             upgrades to it)
#   ... --out DIR                             into DIR instead of dist/
#
# Environment: BUILD (default build) make build's build directory; BUILD_DEB
# (default build-deb) this script's work, and its own build when BUILD is
# not configured; JOBS (default nproc) compile jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD

what=all
binnmu=
out=$top/dist
while [ $# -gt 0 ]; do
  case "$1" in
    --deb) what=deb ;;
    --speakers) what=speakers ;;
    --binnmu) binnmu=${2:?--binnmu needs a number}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    *) echo "usage: build-packages.sh [--deb | --speakers | --binnmu N] [--out DIR]" >&2; exit 2 ;;
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
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
absolute() { if [[ "$1" == /* ]]; then echo "$1"; else echo "$top/$1"; fi; }
build_deb=$(absolute "${BUILD_DEB:-build-deb}")
shared_build=$(absolute "${BUILD:-build}")
jobs=${JOBS:-$(nproc)}
mkdir -p "$out" "$build_deb"
out=$(cd "$out" && pwd)

# A changelog entry for this build; its date (the last commit's, else
# VERSION's) is what dpkg stamps the files with (SOURCE_DATE_EPOCH). A
# binNMU's is now: a rebuild comes after its source (lintian holds an entry
# to a date of its own).
changelog() {
  local when
  when=$(git log -1 --format=%aD 2>/dev/null || date -R -r VERSION)
  [ -z "$binnmu" ] || when=$(date -R)
  printf 'emqd (%s) unstable; urgency=medium\n\n' "$deb_version"
  if [ -n "$binnmu" ]; then
    printf '  * Binary-only rebuild %s of %s: its files, repacked.\n\n' "$binnmu" "$version"
  else
    printf '  * emqd %s, built from the echomq tree%s.\n\n' "$version" \
      "$(git rev-parse --short HEAD 2>/dev/null | sed 's/^/ at /')"
  fi
  printf ' -- %s  %s\n' "$(sed -n 's/^Maintainer: //p' packaging/debian/control)" "$when"
}

# The value of VAR in the CMake cache of the build directory DIR.
cache_value() { sed -n "s/^$2:[A-Z]*=//p" "$1/CMakeCache.txt"; }

# Refuses a build the package cannot be made from: debian/rules takes
# optimised, unsanitised programs with Debian's flags, installed in make
# build's layout (which it moves into Debian's).
check_build() { # DIR
  local type var want got
  type=$(cache_value "$1" CMAKE_BUILD_TYPE)
  case "$type" in RelWithDebInfo | Release) ;; *)
    fail "$1 is a '$type' build; the package takes a RelWithDebInfo (make build's) or Release build:" \
      "name one with BUILD=, or a new directory for a build of its own" ;;
  esac
  # (An empty CMAKE_INSTALL_DOCDIR is GNUInstallDirs' default, share/doc/echomq.)
  for var in EMQ_SANITIZE=OFF EMQ_FUZZ=OFF EMQ_DEBIAN_FLAGS=ON CMAKE_INSTALL_LIBDIR=lib \
    CMAKE_INSTALL_DATAROOTDIR=share CMAKE_INSTALL_DOCDIR= EMQ_SYSTEMD_UNITDIR=lib/systemd/system; do
    want=${var#*=}
    got=$(cache_value "$1" "${var%%=*}")
    [ "$got" = "$want" ] ||
      fail "$1 is configured with ${var%%=*}='$got'; the package needs '$want'" \
        "(configure it so, or name another build with BUILD=)"
  done
}

# Brings the build the .deb is made from up to date and sets $deb_build to
# it: make build's, when configured; else the package's own, configured
# here as make build would configure it, without the tests and benchmarks.
compile_build() {
  if [ -f "$shared_build/CMakeCache.txt" ]; then
    deb_build=$shared_build
    step "the .deb from the build in $deb_build (make build's), brought up to date"
    # Configured again as it is, so that its cache has what this tree asks.
    cmake -S . -B "$deb_build" >"$build_deb/configure.log" 2>&1 ||
      fail "cmake could not configure $deb_build again; the end of $build_deb/configure.log:
$(tail -n 20 "$build_deb/configure.log")"
  else
    deb_build=$build_deb/cmake
    step "the .deb from a build of its own in $deb_build (no ${shared_build#"$top"/}/ configured; no tests)"
    # A build the old rules configured (type None, Debian's layout) is not reused.
    [ ! -f "$deb_build/CMakeCache.txt" ] || [ "$(cache_value "$deb_build" CMAKE_BUILD_TYPE)" = RelWithDebInfo ] ||
      rm -rf "$deb_build"
    local launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    cmake -S . -B "$deb_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMQ_BUILD_TESTS=OFF \
      -DEMQ_BUILD_BENCH=OFF "${launcher[@]}" >"$build_deb/configure.log" 2>&1 ||
      fail "cmake could not configure $deb_build; the end of $build_deb/configure.log:
$(tail -n 20 "$build_deb/configure.log")"
  fi
  check_build "$deb_build"
  # The programs the package holds (emq_programs), not the tests a shared
  # build may also be configured with.
  cmake --build "$deb_build" -j "$jobs" --target emq_programs >"$build_deb/build.log" 2>&1 ||
    fail "the build in $deb_build failed; the end of $build_deb/build.log:
$(tail -n 30 "$build_deb/build.log")"
}

build_deb_package() {
  # dh runs in a staging directory holding debian/: packaging/debian/ and
  # the changelog. debian/rules compiles nothing; it installs $deb_build.
  local stage=$build_deb/stage deb=emqd_${deb_version}_${arch}.deb
  compile_build
  rm -rf "$stage"
  mkdir -p "$stage"
  cp -r packaging/debian "$stage/debian"
  changelog >"$stage/debian/changelog"
  step "$deb: dpkg-buildpackage (log: $build_deb/dpkg-buildpackage.log)"
  (cd "$stage" && EMQ_DEB_BUILDDIR=$deb_build EMQ_SOURCE_DIR=$top dpkg-buildpackage -b -us -uc) \
    >"$build_deb/dpkg-buildpackage.log" 2>&1 ||
    fail "dpkg-buildpackage failed; the end of $build_deb/dpkg-buildpackage.log:
$(tail -n 30 "$build_deb/dpkg-buildpackage.log")"
  step "$deb: lintian"
  # Every tag but the pedantic and experimental ones; errors fail the build.
  lintian --display-level '>=info' --fail-on error "$build_deb/$deb" | tee "$build_deb/lintian.txt" ||
    fail "lintian found errors in $deb (above; also in $build_deb/lintian.txt)"
  mv "$build_deb/$deb" "$out/$deb"
  echo "$out/$deb: $(stat -c %s "$out/$deb") bytes, Installed-Size $(dpkg-deb -f "$out/$deb" Installed-Size) KiB"
}

# --binnmu N: the .deb in dist/ as VERSION+bN, nothing built again: its
# files as they are, but the version in its control file and a changelog
# entry saying so (and the checksums of what changed).
repack_binnmu() {
  local from=$top/dist/emqd_${version}_${arch}.deb deb=emqd_${deb_version}_${arch}.deb
  local tree=$build_deb/binnmu-tree log
  [ -f "$from" ] || fail "no $from to repack as $deb_version: make deb builds it"
  step "$deb: $(basename "$from") repacked"
  rm -rf "$tree"
  dpkg-deb -R "$from" "$tree"
  sed -i "s/^Version: .*/Version: $deb_version/" "$tree/DEBIAN/control"
  log=$tree/usr/share/doc/emqd/changelog.gz
  { changelog && echo && gzip -dc "$log"; } | gzip -9n >"$log.new"
  touch -r "$log" "$log.new" && mv "$log.new" "$log"
  (cd "$tree" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
    >"$tree/DEBIAN/md5sums"
  dpkg-deb --root-owner-group --build "$tree" "$out/$deb" >/dev/null
  rm -rf "$tree"
  echo "$out/$deb"
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

if [ -n "$binnmu" ]; then
  repack_binnmu
  exit 0
fi
[ "$what" = speakers ] || build_deb_package
if [ "$what" != deb ]; then
  build_wheel
  build_tarball
fi
