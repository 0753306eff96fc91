#!/bin/sh
# An exec handler for flows: prints its payload, the path EMQ_CHILDREN_FILE
# names, and that file's contents, each followed by a '|'.
payload=$(cat)
printf '%s|%s|' "$payload" "${EMQ_CHILDREN_FILE:-}"
if [ -n "${EMQ_CHILDREN_FILE:-}" ]; then cat "$EMQ_CHILDREN_FILE"; fi
