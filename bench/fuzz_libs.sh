#!/bin/sh
# The longer fuzz run of the libraries parsers (ELF, offload bundle, CCOB, NVIDIA fat binary,
# ld.so.cache): each libFuzzer target of a clang build for SECONDS (default 300), on a scratch copy
# of its seed corpus so the tree's seeds stay small. Usage: bench/fuzz_libs.sh CLANG_BUILD_DIR [SECONDS]
set -eu
build=$1
seconds=${2:-300}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in fuzz_elf fuzz_offload_bundle fuzz_ccob fuzz_nvfatbin fuzz_ldcache; do
    mkdir -p "$work/$t"
    cp "$src/tests/fuzz/corpus/$t"/* "$work/$t/"
    echo "== $t for ${seconds}s"
    "$build/tests/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 "$work/$t"
done
