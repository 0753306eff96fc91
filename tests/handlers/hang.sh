#!/bin/sh
# Never finishes by itself; SIGTERM ends it. Says so on stderr once running.
echo "hanging pgid=$$" >&2
sleep 600
