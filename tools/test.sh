#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds with gcc and runs every test (unit,
# fixture, integration, fuzz replay), then builds with clang and runs the libFuzzer smoke runs,
# then the release checks (tools/release-check.sh: every build type, the portable binaries and
# their glibc floor, the suite against them, Debian 11 roots, packages). Warnings are errors.
#   tools/test.sh              the suite
#   tools/test.sh --sanitize   the suite built with AddressSanitizer and UndefinedBehaviorSanitizer
#   SC_RELEASE_CHECK=0 tools/test.sh   without the release checks (they fetch from Debian)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--sanitize" ] && [ "${SC_RELEASE_CHECK:-1}" != 0 ]; then
  tools/deps.sh --release
else
  tools/deps.sh
fi
jobs=$(nproc)

run_suite() { # build-dir, extra cmake args...
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja -DSC_WERROR=ON "$@" >/dev/null
  cmake --build "$dir"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" ${SC_CTEST_ARGS:-}
}

if [ "${1:-}" = "--sanitize" ]; then
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  run_suite build-sanitize -DSC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  exit 0
fi

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
# clang: the same code must build clean, and the fuzz targets run as libFuzzer for a few seconds each
CC=clang cmake -S . -B build-clang -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSC_WERROR=ON >/dev/null
cmake --build build-clang
ctest --test-dir build-clang --output-on-failure -j "$jobs" -L fuzz-smoke
[ "${SC_RELEASE_CHECK:-1}" = 0 ] || tools/release-check.sh
