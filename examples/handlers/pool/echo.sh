#!/bin/sh
# An emqd pool handler in POSIX sh: answers each job with its own payload,
# and fails an empty one for good.
#
# No JSON parser needed: emqd writes each frame on one line with its keys
# in a fixed order, the payload last,
#   {"id":"JOB_…","queue":"q","attempt":1,"deadline_ms":0,"payload":"…"}
# ("payload_b64" for bytes that are not UTF-8), so sed can take it apart.
# The payload's JSON string goes back as it came, escapes and all. Inside
# a JSON string every '"' is escaped, so ',"payload' cannot occur in one.
while IFS= read -r frame; do
  id=$(printf '%s\n' "$frame" | sed 's/^{"id":"\([^"]*\)".*/\1/')
  value=$(printf '%s\n' "$frame" | sed 's/.*,"payload\(_b64\)\{0,1\}":\(".*"\)}$/\2/')
  case $frame in
    *',"payload_b64":"'*) key=result_b64 ;;
    *) key=result ;;
  esac
  if [ "$value" = '""' ]; then
    printf '{"id":"%s","ok":false,"error":"empty payload","permanent":true}\n' "$id"
  else
    printf '{"id":"%s","ok":true,"%s":%s}\n' "$id" "$key" "$value"
  fi
done
