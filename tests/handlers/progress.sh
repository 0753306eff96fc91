#!/bin/sh
# An exec handler that reports progress on EMQ_PROGRESS_FD: "one" at once,
# then "two" once the file $1/after exists; answers "done" once $1/go exists.
echo one >&"$EMQ_PROGRESS_FD"
while [ ! -e "$1/after" ]; do sleep 0.01; done
echo two >&"$EMQ_PROGRESS_FD"
while [ ! -e "$1/go" ]; do sleep 0.01; done
cat > /dev/null
printf done
