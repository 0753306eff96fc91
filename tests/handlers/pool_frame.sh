#!/bin/sh
# A pool handler that answers each job with the frame it was sent, byte for
# byte (as base64, newline excluded), so tests see exactly what emqd wrote.
while IFS= read -r frame; do
  id=$(printf '%s\n' "$frame" | sed 's/^{"id":"\([^"]*\)".*/\1/')
  printf '{"id":"%s","ok":true,"result_b64":"%s"}\n' "$id" "$(printf '%s' "$frame" | base64 -w 0)"
done
