#!/bin/sh
# Lists the descriptors the handler was given, "ls -l" style ("N -> target").
# exec, so the listing is of this process rather than a subshell; ls's own
# handle on the directory shows as "-> /proc/<pid>/fd".
exec ls -l /proc/self/fd/
