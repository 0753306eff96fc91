#!/bin/sh
# Leaves a sleeper behind that holds stdout and stderr open, then succeeds:
# the job must still end in bounded time.
sleep 600 &
echo "leader done pgid=$$"
exit 0
