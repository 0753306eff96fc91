#!/bin/sh
# The manual pages emqd(1) and emq(1): the programs' own --help and
# --version, so they cannot drift, with FILES, SIGNALS, EXIT STATUS,
# ENVIRONMENT and SEE ALSO from the include file beside this script.
# debian/rules runs it; so does tests/ops/man_pages_test.cpp.
#   make-pages.sh BIN_DIR OUT_DIR
set -eu
[ $# -eq 2 ] || { echo "usage: make-pages.sh BIN_DIR OUT_DIR" >&2; exit 2; }
here=$(dirname "$0")
mkdir -p "$2"
help2man --no-info --section=1 --name="EchoMQ worker daemon" \
  --include="$here/emqd.h2m" --output="$2/emqd.1" "$1/emqd"
help2man --no-info --section=1 --name="enqueue, inspect and control EchoMQ queues" \
  --include="$here/emq.h2m" --output="$2/emq.1" "$1/emq"
