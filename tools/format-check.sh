#!/bin/sh
# Checks that every C source and header follows .clang-format (exit 1 and the file names if not).
# Exit 77 (skipped) when clang-format is not installed.
set -eu
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
bad=0
for f in $(find src include probes tests -name '*.[ch]' | sort); do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=1
  fi
done
exit $bad
