#!/bin/sh
# Dies by a signal, as a crashing program would (no core file).
ulimit -c 0
kill -SEGV $$
