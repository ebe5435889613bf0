#!/usr/bin/env bash
# Installs the Debian packages stackcheck needs to build and test, when they are missing.
# Needs root (or sudo). Safe to run again: it installs nothing that is already there.
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
  libcjson-dev libdrm-dev libelf-dev libzstd-dev zlib1g-dev python3-dev
  # tests
  libcmocka-dev python3-jsonschema procps
  # the real components the tests run against (no accelerator needed)
  libamdhip64-dev hipcc rocminfo python3-torch librocsparse0 librocrand1
  # benchmarks
  hyperfine
  # clusters: promtool for the metrics, a one-node Slurm with munge, yamllint for deploy/
  prometheus slurmctld slurmd slurm-client munge yamllint
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
