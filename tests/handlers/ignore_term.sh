#!/bin/sh
# Ignores SIGTERM, and so does the child it starts (an ignored signal stays
# ignored across fork and exec): only SIGKILL to the group ends them.
trap '' TERM
sleep 600 &
echo "ignoring TERM pgid=$$" >&2
sleep 600
