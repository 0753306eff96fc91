#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (AddressSanitizer and
# UndefinedBehaviorSanitizer on) and runs each for a bounded time. Installs
# clang and its runtime first when they are missing (Debian packages clang
# and libclang-rt-dev; as root or with sudo), so CI images that never fuzz
# need not carry them.
#
#   scripts/fuzz.sh                  every target, 60 s each
#   scripts/fuzz.sh url_fuzz         one target
#   FUZZ_SECONDS=600 scripts/fuzz.sh longer
#
# Targets: config_fuzz (daemon/config/config.h load_config), url_fuzz
# (echomq::parse_url), pool_frame_fuzz (daemon/handlers/pool_protocol.h).
# The corpus grows in build-fuzz/corpus/<target>, seeded from fuzz/seeds/
# and, for config_fuzz, from tests/configs/. A crash leaves its input in
# build-fuzz/crashes/ and makes this script exit 1: keep that input as a
# regression test under tests/ once fixed. Each run ends with libFuzzer's
# own figures (cov: edges reached, ft: features), printed as a summary.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-2}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config_fuzz url_fuzz pool_frame_fuzz)

fuzzer_runtime() {
  local rt
  rt=$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a
  [ -f "$rt" ]
}

if ! command -v clang++ >/dev/null || ! fuzzer_runtime; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "fuzz.sh: installing clang and libclang-rt-dev (libFuzzer)"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends clang libclang-rt-dev
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DEMQ_FUZZ=ON -DEMQ_BUILD_TESTS=OFF -DEMQ_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target "${targets[@]}" config_dict -j "$jobs"
"$build/bin/config_dict" >"$build/config.dict"

mkdir -p "$build/crashes"
summary=()
status=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  mkdir -p "$corpus"
  seeds=("$root/fuzz/seeds/${t%_fuzz}")
  extra=()
  if [ "$t" = config_fuzz ]; then
    seeds=("$root/tests/configs/good" "$root/tests/configs/bad" "$root/tests/configs/bad/multiple")
    extra=(-dict="$build/config.dict")
  fi
  for s in "${seeds[@]}"; do
    [ -d "$s" ] && find "$s" -maxdepth 1 -type f -exec cp -n {} "$corpus/" \;
  done
  log=$build/$t.log
  echo "fuzz.sh: $t for ${seconds} s (log: $log)"
  # -rss_limit_mb: the loader and the frame parser must not need more.
  if ! "$build/bin/$t" "$corpus" "${extra[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$build/crashes/$t-" >"$log" 2>&1; then
    status=1
    echo "fuzz.sh: $t FOUND A CRASH; input in $build/crashes/ (tail of $log):"
    tail -n 30 "$log"
  fi
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  summary+=("$t: ${seconds} s, ${runs:-?} runs, $(echo "$last" | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo 'cov: ?') corpus: $(find "$corpus" -type f | wc -l) files")
done

echo
echo "fuzz.sh: summary"
printf '  %s\n' "${summary[@]}"
exit $status
