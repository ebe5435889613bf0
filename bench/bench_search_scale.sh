#!/bin/sh
# Benchmark of the libraries resolver on pathological files (built at run time with cc by
# tests/integration/pathological.py): a 50,000-entry RPATH of absent directories with 100
# missing libraries, and a chain of 4,000 libraries each with an RPATH of its own in front of the
# one that finds them (d^2/2 directory visits). The search opened every candidate at every
# lookup; it now parses each list once, checks each directory once and lists busy ones, within
# budgets. Before/after: see bench/before_after.sh (BEFORE=bin or BEFORE_REF=main).
# Usage: [BEFORE=path | BEFORE_REF=main] bench/bench_search_scale.sh
. "$(dirname "$0")/before_after.sh"
wide=$($gen rpath-elf "$work/wide" --entries 50000 --missing 100)
chain=$($gen rpath-chain "$work/chain" --depth 4000)
echo "| libs shape | before | after | speed-up |"
echo "|---|---:|---:|---:|"
row "RPATH of 50,000 entries, 100 missing" libs --json "$work/out.json" "$wide"
row "RPATH chain 4,000 deep" libs --json "$work/out.json" "$chain"
