#!/bin/sh
# Rewrites tests/fixtures/<root>/expected.json (the normalised snapshot of each fixture root) with
# what the built binary says now: all roots, or the ones named. Review `git diff tests/fixtures`
# before committing: every changed line is a changed fact.
#   tools/refresh-golden.sh                 every fixture root
#   tools/refresh-golden.sh hygon-dcu ...   some (a name or a path)
#   STACKCHECK=path/to/stackcheck tools/refresh-golden.sh
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export SC_SOURCE_DIR="$top"
export STACKCHECK="${STACKCHECK:-$top/build/stackcheck}"
if [ ! -x "$STACKCHECK" ]; then
    echo "refresh-golden: no binary at $STACKCHECK (build first: cmake --build build)" >&2
    exit 2
fi
exec python3 "$top/tests/integration/golden.py" --refresh "$@"
