#!/bin/sh
# Benchmarks of the libraries analysis, side by side in one run (hyperfine, median of several runs):
#  1. offload targets of Debian's librocsparse.so.0.1 (1.3 GB, 111 bundles): stackcheck libs vs
#     roc-obj-ls (and readelf of the section headers, the floor of any reader);
#  2. dependency resolution of torch's libtorch_cpu.so: stackcheck libs --no-symbols vs libtree and
#     ldd; and the full analysis (with the symbol-version and undefined-symbol checks) vs ldd -r,
#     the loader's own undefined-symbol check.
# Usage: bench/bench_libs.sh [BUILD_DIR]   (default: build). Results go to bench/results/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
sc=$(cd "$build" && pwd)/stackcheck
out=$here/results
mkdir -p "$out"
rocsparse=/usr/lib/x86_64-linux-gnu/librocsparse.so.0.1
torch_cpu=/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so
runs=${RUNS:-10}

command -v hyperfine >/dev/null || { echo "hyperfine is required" >&2; exit 2; }
[ -x "$sc" ] || { echo "no stackcheck binary at $sc" >&2; exit 2; }

if [ -f "$rocsparse" ]; then
    echo "== offload targets of $rocsparse"
    "$sc" libs --no-symbols "$rocsparse" | grep 'GPU code'
    set -- "$sc libs --no-symbols $rocsparse" "readelf -SW $rocsparse"
    if command -v roc-obj-ls >/dev/null; then
        echo "roc-obj-ls: $(roc-obj-ls "$rocsparse" | awk '{print $2}' | sort -u | tr '\n' ' ')"
        set -- "$@" "roc-obj-ls $rocsparse"
    else
        echo "roc-obj-ls not installed (Debian: package rocm-llvm / roc-obj tools); skipped"
    fi
    hyperfine -N --style basic -w 1 -r "$runs" --export-json "$out/offload.json" \
        --export-markdown "$out/offload.md" "$@"
else
    echo "librocsparse0 not installed: offload benchmark skipped"
fi

if [ -f "$torch_cpu" ]; then
    echo "== dependency resolution of $torch_cpu"
    set -- "$sc libs --no-symbols $torch_cpu" "ldd $torch_cpu" "$sc libs $torch_cpu" \
        "ldd -r $torch_cpu"
    if command -v libtree >/dev/null; then
        set -- "$@" "libtree $torch_cpu"
    else
        echo "libtree not installed (apt-get install libtree); skipped"
    fi
    hyperfine -N --style basic -w 2 -r "$runs" -i --export-json "$out/resolve.json" \
        --export-markdown "$out/resolve.md" "$@"
else
    echo "python3-torch not installed: resolution benchmark skipped"
fi

# Medians side by side (hyperfine's JSON has them in seconds).
python3 - "$out" <<'PY'
import json, os, sys
for name in ("offload", "resolve"):
    path = os.path.join(sys.argv[1], name + ".json")
    if not os.path.exists(path):
        continue
    res = json.load(open(path))["results"]
    base = res[0]["median"]
    print("\n%s (median of %d runs)" % (name, len(res[0]["times"])))
    for r in res:
        print("  %9.2f ms  %6.1fx  %s" % (r["median"] * 1e3, r["median"] / base, r["command"]))
PY
