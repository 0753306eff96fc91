#!/bin/sh
# Fails its first attempt (exit 3, "first attempt fails" on stderr), and
# succeeds with "done" on any later one: a job that is retried once.
cat > /dev/null
if [ "${EMQ_ATTEMPT:-1}" -le 1 ]; then
  echo 'first attempt fails' >&2
  exit 3
fi
printf 'done'
