#!/bin/sh
# flow_exec.sh that holds its job: says it runs (a file in $HOLD_DIR named
# for its pid), then waits (30 s at most) until $HOLD_DIR/release exists.
payload=$(cat)
printf '%s|%s|' "$payload" "${EMQ_CHILDREN_FILE:-}"
if [ -n "${EMQ_CHILDREN_FILE:-}" ]; then cat "$EMQ_CHILDREN_FILE"; fi
touch "$HOLD_DIR/running.$$"
tries=0
while [ ! -e "$HOLD_DIR/release" ] && [ "$tries" -lt 600 ]; do
  tries=$((tries + 1))
  sleep 0.05
done
