#!/bin/sh
# Succeeds only if $RENDEZVOUS_N jobs are running at the same time: each
# leaves a file in $RENDEZVOUS_DIR and waits (20 s at most) for the others.
touch "$RENDEZVOUS_DIR/$EMQ_JOB_ID"
tries=0
while [ "$(ls "$RENDEZVOUS_DIR" | wc -l)" -lt "$RENDEZVOUS_N" ]; do
  tries=$((tries + 1))
  if [ "$tries" -gt 400 ]; then
    echo "only $(ls "$RENDEZVOUS_DIR" | wc -l) of $RENDEZVOUS_N jobs arrived" >&2
    exit 1
  fi
  sleep 0.05
done
echo "met $EMQ_JOB_ID"
