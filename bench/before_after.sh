# Shared by the bench_*_scale scripts (sourced): the "after" binary (this tree's build) and the
# optional "before" binary, and a measurement of one command on both as a table row.
#   AFTER=path      the binary measured as "after" (default: build/stackcheck of this tree)
#   BEFORE=path     a binary to measure as "before" (for instance main's, built elsewhere), or
#   BEFORE_REF=ref  a git revision of this repository to build as "before" (git archive into a
#                   temporary directory, tests off: a minute on two cores)
#   RUNS=n          runs of each "after" command (median; default 5)
#   BEFORE_RUNS=n   runs of each "before" command (default 1: those are the slow ones)
#   BEFORE_TIMEOUT=s  a "before" run longer than this is cut and shown as ">s" (default 600)
# The table (Markdown) goes to standard output and to bench/results/<script>.md.
set -eu
bench_dir=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$bench_dir/.." && pwd)
results=$bench_dir/results
mkdir -p "$results"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
AFTER=${AFTER:-$repo/build/stackcheck}
RUNS=${RUNS:-5}
BEFORE_RUNS=${BEFORE_RUNS:-1}
BEFORE_TIMEOUT=${BEFORE_TIMEOUT:-600}
command -v hyperfine >/dev/null || { echo "hyperfine is required" >&2; exit 2; }
[ -x "$AFTER" ] || { echo "no stackcheck binary at $AFTER (build first, or set AFTER)" >&2; exit 2; }
if [ -z "${BEFORE:-}" ] && [ -n "${BEFORE_REF:-}" ]; then
    echo "building $BEFORE_REF as the 'before' binary..." >&2
    mkdir -p "$work/before-src"
    git -C "$repo" archive "$BEFORE_REF" | tar -x -C "$work/before-src"
    cmake -S "$work/before-src" -B "$work/before-build" -G Ninja -DSC_TESTS=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$work/before-build" >/dev/null
    BEFORE=$work/before-build/stackcheck
fi
gen="python3 $repo/tests/integration/pathological.py"
table=$results/$(basename "$0" .sh).md
printf '| shape | before | after | speed-up |\n|---|---:|---:|---:|\n' >"$table"

# The median of hyperfine's runs of a command, in seconds; ">T" when a run passed the timeout.
median_s() {
    runs=$1
    shift
    if ! hyperfine -N -i --style none -w 0 -r "$runs" --export-json "$work/h.json" \
        "timeout $BEFORE_TIMEOUT $*" >/dev/null 2>&1; then
        echo "?"
        return
    fi
    python3 - "$work/h.json" "$BEFORE_TIMEOUT" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
limit = float(sys.argv[2])
print(">%d s" % limit if max(r["times"]) >= limit - 0.5 else "%.3f s" % r["median"])
PY
}

# One row: LABEL then the stackcheck arguments (the binary is put in front).
row() {
    label=$1
    shift
    after=$(median_s "$RUNS" "$AFTER" "$@")
    before=-
    if [ -n "${BEFORE:-}" ]; then
        before=$(median_s "$BEFORE_RUNS" "$BEFORE" "$@")
    fi
    speed=$(python3 -c 'import sys
b, a = (v.rstrip(" s") for v in sys.argv[1:3])
try:
    print("%s%.0fx" % (">" if b.startswith(">") else "", float(b.lstrip(">")) / float(a)))
except ValueError:
    print("-")' "$before" "$after")
    printf '| %s | %s | %s | %s |\n' "$label" "$before" "$after" "$speed" | tee -a "$table"
}
