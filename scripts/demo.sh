#!/usr/bin/env bash
# The demo: emqd with config/demo.yaml on an embedded Valkey, a few hundred
# jobs enqueued with `emq` (some fail and retry, one goes dead), progress
# while they flow, `emq stats`, then a clean stop. Run by `make demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
emqd=$build/bin/emqd
emq=$build/bin/emq
state=$build/demo-state
export EMQ_URL="unix://$PWD/$state/valkey.sock"

rm -rf "$state"
"$emqd" --check-config --config config/demo.yaml
echo
"$emqd" --config config/demo.yaml &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true' EXIT

for _ in $(seq 100); do
  "$emq" stats emails >/dev/null 2>&1 && break
  sleep 0.1
done

echo "== enqueueing 300 jobs with emq"
# One payload a line; eight emq processes at a time.
for i in $(seq 1 150); do
  if [ $((i % 25)) = 0 ]; then
    echo "user$i@example.com flaky"      # fails on its first attempt, then succeeds
  else
    echo "user$i@example.com"
  fi
done | xargs -d '\n' -n 1 -P 8 "$emq" enqueue emails >/dev/null
"$emq" enqueue emails "not-an-address" >/dev/null   # exit 65: dead at once
for i in $(seq 1 149); do
  text="the quick brown fox number $i jumps over the lazy dog"
  [ $((i % 30)) = 0 ] && text="$text retry-me"     # exit 1 on attempt 1
  echo "$text"
done | xargs -d '\n' -n 1 -P 8 "$emq" enqueue words >/dev/null

echo "== progress (emq stats --json, every half second)"
progress() {
  "$emq" stats --json | /usr/bin/python3 -c '
import json, sys
qs = json.load(sys.stdin)
parts = []
for q in qs:
    left = q["pending"] + q["active"] + q["delayed"]
    parts.append("%s: %d done, %d left, %d dead" % (q["queue"], q["counters"]["completed"], left, q["dead"]))
print("  ".join(parts))
sys.exit(0 if all(q["pending"] + q["active"] + q["delayed"] == 0 for q in qs) else 3)'
}
for _ in $(seq 120); do
  progress && break
  sleep 0.5
done
echo
echo "== emq stats"
"$emq" stats
echo
echo "== the dead job"
"$emq" dead list emails
echo
echo "== stopping emqd (SIGTERM: drain, then exit 0)"
kill -TERM $daemon
wait $daemon
trap - EXIT
echo "emqd exited with $?"
