#!/bin/sh
# An exec handler in POSIX sh that passes the job's trace on to the service
# it calls: the W3C headers from TRACEPARENT and TRACESTATE, which emqd
# sets when it traces, so the service's spans nest under the job's. Posts
# the payload to $SERVICE_URL and prints the answer; a failed call (curl
# exit 22 on an HTTP error) fails the job for retry.
set -- --fail --silent --show-error --data-binary @-
[ -n "$TRACEPARENT" ] && set -- "$@" -H "traceparent: $TRACEPARENT"
[ -n "$TRACESTATE" ] && set -- "$@" -H "tracestate: $TRACESTATE"
exec curl "$@" "$SERVICE_URL"
