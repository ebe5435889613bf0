#!/bin/sh
# Benchmark of the framework layer: a full stackcheck run (every layer, --keep-going, torch imported
# in the chosen interpreter) against the bare `import torch; torch.cuda.is_available()` and against
# `python -m torch.utils.collect_env`, same interpreter, median of several runs (hyperfine).
# Usage: bench/bench_framework.sh [BUILD_DIR] [PYTHON]   (defaults: build, /usr/bin/python3)
# Environment: RUNS (default 10), WARMUP (default 2), EXPORT (keep hyperfine's JSON there).
set -eu
build=${1:-build}
python=${2:-/usr/bin/python3}
runs=${RUNS:-10}
warmup=${WARMUP:-2}
stackcheck=$build/stackcheck
[ -x "$stackcheck" ] || { echo "no $stackcheck: build first" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }
"$python" -c "import torch" 2>/dev/null || { echo "$python has no importable torch" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# stackcheck exits 1 when a layer fails (no accelerator here): -i keeps hyperfine going.
export_json=${EXPORT:-$tmp/hyperfine.json}
hyperfine --warmup "$warmup" --runs "$runs" -i -N --style basic --export-json "$export_json" \
    -n "bare import" "$python -c 'import torch; torch.cuda.is_available()'" \
    -n "stackcheck full run" "$stackcheck --keep-going --no-color -q --python $python --json $tmp/s.json" \
    -n "collect_env" "$python -m torch.utils.collect_env"
# The framework layer's own share: framework.torch's duration in a few more full runs.
i=0
while [ "$i" -lt "${PROBE_RUNS:-5}" ]; do
    "$stackcheck" --keep-going --no-color -q --python "$python" --json "$tmp/p$i.json" >/dev/null 2>&1 || true
    i=$((i + 1))
done
# Medians side by side, the overhead over the bare import, and the probes' durations.
"$python" - "$export_json" "$tmp" <<'PY'
import glob, json, os, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
base = results[0]["median"]
low = results[0]["min"]
cpu = results[0]["user"] + results[0]["system"]
# CPU time (user + system, mean) is the figure least disturbed by other load on the machine.
print("\n%-22s %9s %8s %9s %8s %9s %8s" % ("command", "median s", "vs imp", "min s", "vs imp",
                                           "cpu s", "vs imp"))
for r in results:
    c = r["user"] + r["system"]
    print("%-22s %9.3f %+7.1f%% %9.3f %+7.1f%% %9.3f %+7.1f%%" % (
        r["command"], r["median"], (r["median"] / base - 1) * 100, r["min"],
        (r["min"] / low - 1) * 100, c, (c / cpu - 1) * 100))
durations = {}
for path in glob.glob(os.path.join(sys.argv[2], "p*.json")):
    for layer in json.load(open(path))["layers"]:
        for p in layer["probes"]:
            durations.setdefault(p["id"], []).append(p["duration_ms"] / 1000.0)
            if p["id"] == "framework.torch":
                t = p["facts"].get("torch") or {}
                durations.setdefault("(import inside)", []).append((t.get("import_ms") or 0) / 1000.0)
print("probe durations in full runs (median):")
for name, values in durations.items():
    m = statistics.median(values)
    vs = "%+9.1f%%" % ((m / base - 1) * 100) if name.startswith(("framework", "(")) else ""
    print("%-28s %10.3f %10s" % ("  " + name, m, vs))
PY
