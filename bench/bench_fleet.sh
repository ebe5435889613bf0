#!/bin/sh
# Benchmark of `stackcheck fleet`: N synthetic snapshots (default 10,000; copies of the MI250X
# fixture's snapshot, about 23 KB each, with host names, 8 stack variants, failed and slow nodes;
# written by bench/fleet_snapshots.py) grouped from one directory. Prints the wall time, CPU time
# and peak memory of RUNS runs (default 3), and the same for N/10 nodes: the memory depends on the
# number of distinct stacks, not of nodes.
# Usage: [N=10000] [RUNS=3] [STACKCHECK=build/stackcheck] bench/bench_fleet.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${STACKCHECK:-$here/../build/stackcheck}
n=${N:-10000}
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| nodes | wall s | user s | sys s | peak RSS KiB |"
echo "|---:|---:|---:|---:|---:|"
for count in $((n / 10)) "$n"; do
    python3 "$here/fleet_snapshots.py" "$count" "$work/$count"
    i=0
    while [ "$i" -lt "$runs" ]; do
        /usr/bin/time -f "| $count | %e | %U | %S | %M |" "$bin" fleet "$work/$count" \
            --json "$work/out.json" >/dev/null 2>"$work/time" || true
        tail -n 1 "$work/time"
        i=$((i + 1))
    done
done
