#!/bin/sh
# Benchmark of the GPU code reader on pathological .hip_fatbin sections (built at run time by
# tests/integration/pathological.py): 100,000 tiny zstd bundles declaring 1 MiB each, 10,000 zlib
# bundles that inflate to 1 MiB of zeros after their one-entry table, and 1,000 zlib bundles whose
# entry table fills most of a megabyte. Each bundle was inflated to min(declared, 1 MiB) with fresh
# contexts; now only to the end of its table, with contexts kept, within the file's budgets.
# Before/after: see bench/before_after.sh (BEFORE=bin or BEFORE_REF=main).
# Usage: [BEFORE=path | BEFORE_REF=main] bench/bench_bundles_scale.sh
. "$(dirname "$0")/before_after.sh"
echo "| bundles shape | before | after | speed-up |"
echo "|---|---:|---:|---:|"
for spec in tiny-zstd:100000 zlib-bomb:10000 zlib-table:1000; do
    kind=${spec%%:*}
    count=${spec#*:}
    so=$($gen bundles "$work/$kind.so" --count "$count" --kind "$kind")
    row "$count $kind bundles" libs --json "$work/out.json" "$so"
done
