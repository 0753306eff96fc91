#!/usr/bin/env bash
# Formats the tree's C and C++ sources with .clang-format (module/ keeps C's
# `char *p`, module/.clang-format), or with --check says which files differ
# and exits 1 (the test Style.ClangFormat runs that). The files are git's:
# nothing untracked, nothing under build directories.
#
#   scripts/format.sh           rewrite in place
#   scripts/format.sh --check   change nothing; exit 1 when a file would change
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "format.sh: clang-format is missing: run scripts/install-deps.sh (Debian package clang-format)" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h')
if [ "${1:-}" = "--check" ]; then
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if ! clang-format --dry-run --Werror "${files[@]}" 2>"$log"; then
    grep -oE '^[^:]+\.(c|cpp|h):' "$log" | sort -u | sed 's/:$//; s/^/  not formatted: /' >&2
    echo "format.sh: run scripts/format.sh to format them" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted as .clang-format says"
else
  clang-format -i "${files[@]}"
fi
