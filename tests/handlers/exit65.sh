#!/bin/sh
# Rejects its payload for good: 65 is EX_DATAERR, a permanent exit code by default.
echo 'bad payload' >&2
exit 65
