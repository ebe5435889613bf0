#!/usr/bin/env bash
# The release checks, run by tools/test.sh after the suite (CI runs them from a fresh machine):
#   builds      every build type with gcc and clang, warnings as errors
#   release     tools/release.sh: the portable binaries of x86_64 and aarch64, tarballs, packages
#   floor       tools/glibc-floor.sh on both binaries and the floor's own check program; the check
#               must also fail on the native build, which needs a newer glibc
#   suite       the unit tests built like the release binary, and the integration tests run
#               against the release binary (SC_TEST_BINARY)
#   bullseye    Debian 11 roots (glibc 2.31) of amd64 and arm64: both binaries run there (chroot,
#               qemu-aarch64-static), the loader model against the real ld.so, the packages
#               installed and removed (tests/release/)
# Each stage prints its wall time and the processor time its commands took (what it costs on a
# machine of its own). The Debian roots are fetched once into SC_CACHE (tools/debian.sh) and copied
# from there. Needs root (mmdebstrap, chroot) and the build of tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/debian.sh
jobs=$(nproc)
work=$PWD/build-release-check
mkdir -p "$work"
start_all=$(date +%s)

stage_start=0
stage_cpu=0
cpu_seconds() { # the processor time of this script's finished children, in seconds
  awk -v tick="$(getconf CLK_TCK)" '{ printf "%d", ($16 + $17) / tick }' "/proc/$$/stat"
}
stage() { # name: ends the previous stage's clocks, starts this one's
  local now cpu
  now=$(date +%s)
  cpu=$(cpu_seconds)
  [ "$stage_start" = 0 ] ||
    echo "release-check: stage done in $((now - stage_start)) s ($((cpu - stage_cpu)) s of processor time)"
  stage_start=$now
  stage_cpu=$cpu
  echo "release-check: == $1"
}

# The Debian 11 roots, fetched while the builds run.
stage "bullseye roots (in the background)"
(
  sc_debian_root_copy amd64 bullseye "$work/bullseye-amd64" libc6,libc-bin &&
    sc_debian_root_copy arm64 bullseye "$work/bullseye-arm64" libc6,libc-bin &&
    cp /usr/bin/qemu-aarch64-static "$work/bullseye-arm64/usr/bin/" &&
    chroot "$work/bullseye-amd64" /sbin/ldconfig &&
    chroot "$work/bullseye-arm64" /usr/bin/qemu-aarch64-static /sbin/ldconfig
) >"$work/roots.log" 2>&1 &
roots_pid=$!

stage "builds: Release, Debug and MinSizeRel with gcc and clang (RelWithDebInfo: the suite's)"
for cc in gcc clang; do
  for type in Release Debug MinSizeRel; do
    dir=$work/build-$cc-$type
    CC=$cc cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=$type -DSC_TESTS=OFF -DSC_WERROR=ON \
      >/dev/null
    cmake --build "$dir" -j "$jobs" >"$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
    echo "release-check: $cc $type: clean"
  done
done
# -Werror only where asked: a packager's Release build has none.
dir=$work/build-packager-Release
rm -rf "$dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSC_TESTS=OFF >/dev/null
if grep -q -- '-Werror' "$dir/build.ninja" || ! grep -q -- '-Wall' "$dir/build.ninja"; then
  echo "release-check: a Release build without SC_WERROR must warn without -Werror" >&2
  exit 1
fi
echo "release-check: Release without SC_WERROR: no -Werror"

stage "release: tools/release.sh (x86_64, aarch64)"
SC_WERROR=ON SC_JOBS=$jobs tools/release.sh

stage "floor: tools/glibc-floor.sh"
tools/glibc-floor.sh build-release/x86_64/stackcheck build-release/aarch64/stackcheck \
  build-release/x86_64/floor_check build-release/aarch64/floor_check
if tools/glibc-floor.sh build/stackcheck >/dev/null; then
  echo "release-check: glibc-floor.sh passed the native build, which needs glibc 2.34" >&2
  exit 1
fi
build-release/x86_64/floor_check

stage "suite: unit tests built like the release binary, integration tests against it"
cmake -S . -B build-release/x86_64 -DSC_TESTS=ON >/dev/null
cmake --build build-release/x86_64 -j "$jobs" >"$work/unit-build.log" 2>&1 ||
  { cat "$work/unit-build.log"; exit 1; }
ctest --test-dir build-release/x86_64 -L unit -j "$jobs" --output-on-failure
SC_TEST_BINARY=$PWD/build-release/x86_64/stackcheck \
  ctest --test-dir build -L integration -j "$jobs" --output-on-failure

stage "bullseye: both binaries on glibc 2.31, the loader against ld.so, the packages"
wait "$roots_pid" || { cat "$work/roots.log"; exit 1; }
(cd build && cpack -G "DEB;RPM" -B "$work/native-packages" >/dev/null)
SC_BULLSEYE=$work SC_NATIVE_PACKAGES=$work/native-packages SC_RELEASE_BUILD=$PWD/build-release \
  SC_DIST=$PWD/dist STACKCHECK=$PWD/build/stackcheck SC_BUILD_DIR=$PWD/build NO_COLOR=1 \
  python3 -m unittest discover -s tests/release -t tests/release -v

stage "done"
echo "release-check: all stages passed in $(($(date +%s) - start_all)) s"
