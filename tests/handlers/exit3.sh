#!/bin/sh
# Fails with an ordinary exit code: the job is retried.
echo 'transient trouble' >&2
exit 3
