#!/bin/sh
# Copies its payload to stderr (one log line per line), then fails with 1.
cat >&2
exit 1
