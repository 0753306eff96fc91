#!/bin/sh
# Ends as its payload says: "retry" fails with an ordinary exit code, "dead"
# with 65 (EX_DATAERR, permanent by default); anything else succeeds with
# "done:" followed by the payload.
payload=$(cat)
case "$payload" in
  retry) echo 'try again' >&2; exit 3 ;;
  dead) echo 'bad input' >&2; exit 65 ;;
esac
printf 'done:%s' "$payload"
