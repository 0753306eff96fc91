#!/bin/sh
# A pool handler that answers each job with its environment (env's output,
# as base64).
while IFS= read -r frame; do
  id=$(printf '%s\n' "$frame" | sed 's/^{"id":"\([^"]*\)".*/\1/')
  printf '{"id":"%s","ok":true,"result_b64":"%s"}\n' "$id" "$(env | base64 -w 0)"
done
