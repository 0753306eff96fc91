#!/bin/sh
# A pool handler that writes two progress lines and its answer in one write
# per job, so emqd reads them together: each progress line reported, then
# the answer taken.
while IFS= read -r frame; do
  id=$(printf '%s\n' "$frame" | sed 's/^{"id":"\([^"]*\)".*/\1/')
  printf '{"id":"%s","progress":"1/2"}\n{"id":"%s","progress":{"step":2}}\n{"id":"%s","ok":true,"result":"r"}\n' \
    "$id" "$id" "$id"
done
