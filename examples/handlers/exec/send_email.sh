#!/bin/sh
# An exec handler in POSIX shell: one process per job.
# The payload arrives on stdin; stdout becomes the job's result; stderr lines
# are logged by emqd with the job id. Exit 0 completes the job, 65
# (EX_DATAERR) sends it to the dead set at once, anything else retries it.
set -eu
payload=$(cat)
case "$payload" in
  *@*) ;;
  *)
    echo "no address in payload: $payload" >&2
    exit 65
    ;;
esac
# Pretend to talk to a relay; the demo's relay is flaky on a first attempt.
if [ "${EMQ_ATTEMPT:-1}" = 1 ] && [ "${payload#*flaky}" != "$payload" ]; then
  echo "relay timed out (attempt $EMQ_ATTEMPT), will retry" >&2
  exit 75
fi
echo "sent to ${payload} by ${RELAY:-localhost} (job $EMQ_JOB_ID, attempt $EMQ_ATTEMPT)"
