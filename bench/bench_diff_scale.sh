#!/bin/sh
# Benchmark of `stackcheck diff` on pathological snapshot pairs (generated at run time by
# tests/integration/pathological.py): 20,000 and 100,000 findings a side, 20,000 probes, stages,
# list items (devices, libraries, installs) and "*version*"/"*_ms" keys a side, one probe id
# repeated 20,000 times against one with 20,000 keys, and 16,384 numerics modules in reverse
# order. The pairwise comparison was quadratic in each (worse for the repeated id); the indexed
# one is O(n log n). Before/after: see bench/before_after.sh (BEFORE=bin or BEFORE_REF=main).
# Usage: [BEFORE=path | BEFORE_REF=main] bench/bench_diff_scale.sh
. "$(dirname "$0")/before_after.sh"
echo "| diff shape | before | after | speed-up |"
echo "|---|---:|---:|---:|"
for spec in findings:20000 findings:100000 probes:20000 stages:20000 lists:20000 keys:20000 \
    repeats:20000 modules:16384; do
    shape=${spec%%:*}
    size=${spec#*:}
    $gen diff "$size" "$work/$shape-$size" --shape "$shape" >/dev/null
    row "$size $shape a side" diff "$work/$shape-$size/a.json" "$work/$shape-$size/b.json" \
        --json "$work/out.json"
done
