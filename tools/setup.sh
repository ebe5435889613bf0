#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build, and run stackcheck on
# this machine. Arguments are passed to stackcheck, e.g. tools/setup.sh --json snapshot.json
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target stackcheck
exec build/stackcheck "$@"
