#!/bin/sh
# Benchmark of the driver layer: a whole stackcheck run on this machine, on the 8-GCD MI250X fixture
# and on a generated 64-GPU fixture, next to rocminfo on this machine. Median of several runs
# (hyperfine when installed, else a timed loop); the per-device cost is (t64 - t8) / 56.
# The live run is measured twice: with the default interpreter (the python3 on PATH, which may be
# a script wrapper: pyenv's shims are resolved from pyenv's files, other wrappers must be run) and
# with --python PY (default /usr/bin/python3, an ELF binary located from its files alone); the
# table says which way each run located its interpreter.
# Usage: bench/bench_driver.sh [path/to/stackcheck] [runs] [PY]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
sc=${1:-$here/build/stackcheck}
runs=${2:-30}
py=${3:-/usr/bin/python3}
[ -x "$sc" ] || { echo "no stackcheck binary at $sc (build first, or pass its path)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/tests/fixtures/make_many_gpus.py" "$tmp/gpu64" --count 64
fx8=$here/tests/fixtures/mi250x-8gcd

# median wall time in ms of a command (run through sh -c)
median_ms() {
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine -N -i -w 3 -r "$runs" --export-json "$tmp/h.json" "$1" >/dev/null 2>&1
        python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["results"][0]["median"] * 1000))' "$tmp/h.json"
    else
        python3 - "$1" "$runs" <<'PY'
import shlex, statistics, subprocess, sys, time
cmd, n = shlex.split(sys.argv[1]), int(sys.argv[2])
ts = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ts.append((time.perf_counter() - t) * 1000)
print("%.3f" % statistics.median(ts))
PY
    fi
}

# how framework.torch's gated inventory located the interpreter: static, ran, or why it could not
located() {
    "$sc" -q --json - "$@" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
p = [p for l in s["layers"] for p in l["probes"] if p["id"] == "framework.torch"][0]
py = p["facts"].get("python") or {}
print(py.get("located", "-"), py.get("executable", "-"), py.get("static_error", ""))'
}

# the probe's own duration_ms (median), without process start-up
probe_ms() {
    python3 - "$sc" "$1" "$runs" <<'PY'
import json, statistics, subprocess, sys
sc, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ts = []
for _ in range(n):
    args = [sc, "-q", "--json", "-"] + (["--sysroot", root] if root != "/" else [])
    out = subprocess.run(args, capture_output=True, text=True).stdout
    snap = json.loads(out)
    ts += [p["duration_ms"] for l in snap["layers"] for p in l["probes"] if p["id"] == "driver.amd"]
print("%.3f" % statistics.median(ts))
PY
}

live=$(median_ms "$sc -q")
if [ -x "$py" ]; then live_py=$(median_ms "$sc -q --python $py"); else live_py="n/a"; fi
t8=$(median_ms "$sc -q --sysroot $fx8")
t64=$(median_ms "$sc -q --sysroot $tmp/gpu64")
p8=$(probe_ms "$fx8")
p64=$(probe_ms "$tmp/gpu64")
plive=$(probe_ms /)
if command -v rocminfo >/dev/null 2>&1; then roc=$(median_ms "rocminfo"); else roc="n/a"; fi

printf '%-46s %12s %14s\n' "case (median of $runs)" "wall ms" "driver.amd ms"
printf '%-46s %12s %14s\n' "stackcheck, this machine (live)" "$live" "$plive"
printf '%-46s %12s %14s\n' "stackcheck --python $py (live)" "$live_py" "-"
printf '%-46s %12s %14s\n' "stackcheck --sysroot mi250x-8gcd" "$t8" "$p8"
printf '%-46s %12s %14s\n' "stackcheck --sysroot 64 GPUs" "$t64" "$p64"
printf '%-46s %12s %14s\n' "rocminfo, this machine" "$roc" "-"
python3 - "$t8" "$t64" "$p8" "$p64" <<'PY'
import sys
t8, t64, p8, p64 = map(float, sys.argv[1:])
print("per-device cost: %.3f ms wall, %.3f ms in the probe ((t64 - t8) / 56)"
      % ((t64 - t8) / 56, (p64 - p8) / 56))
PY
echo "interpreter, default run:      $(located)"
[ -x "$py" ] && echo "interpreter, --python $py: $(located --python "$py")"
python3 - "$live" "$live_py" "$roc" <<'PY'
import sys
def num(x):
    try:
        return float(x)
    except ValueError:
        return None
live, live_py, roc = map(num, sys.argv[1:])
if roc:
    for name, t in (("default run", live), ("--python run", live_py)):
        if t is not None:
            print("%s vs rocminfo: %.2fx (%s)" % (name, t / roc, "faster" if t < roc else "SLOWER"))
PY
