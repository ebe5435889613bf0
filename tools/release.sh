#!/usr/bin/env bash
# The portable release: one binary per machine that runs on any Linux with glibc 2.17 or newer and
# nothing else installed, packed as dist/stackcheck-VERSION-linux-ARCH.tar.gz (binary, man page,
# bash completion, documentation, licence), with a .deb and an .rpm of the same installation.
#   tools/release.sh                      x86_64 and aarch64
#   tools/release.sh x86_64               one of them
# What it fetches (cJSON's Debian source, an arm64 root with the -dev packages for the cross
# build) is kept between runs in SC_CACHE (tools/debian.sh; outside the tree), what it builds
# stays under build-release/, and the results go to dist/. Needs root (mmdebstrap)
# and Debian's mirror; installs what it lacks (tools/deps.sh --release). SC_WERROR=ON makes
# warnings errors (CI), SC_JOBS sets the build jobs, SC_DEBIAN_MIRROR another mirror.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh --release
source tools/debian.sh

archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(x86_64 aarch64)
work=$PWD/build-release
dist=$PWD/dist
suite=bookworm # the suite of the build machine: the static archives match its toolchain
version=$(sed -nE 's/^#define SC_VERSION "([^"]+)".*/\1/p' include/sc_version.h)
mkdir -p "$work" "$dist"

# cJSON has no static archive in Debian: its source package is compiled in.
cjson_source() {
  local cached=$SC_CACHE/cjson-$suite
  if [ ! -f "$cached/cJSON.c" ]; then
    local tree
    tree=$(sc_debian_source cjson "$suite" "$cached.fetch")
    rm -rf "$cached" && mv "$tree" "$cached"
    rm -rf "$cached.fetch"
  fi
  echo "$cached"
}

# An arm64 root with the -dev packages the cross build links from (their static archives).
arm64_sysroot() {
  sc_debian_cached_root arm64 "$suite" libc6-dev,libelf-dev,libdrm-dev,libzstd-dev,zlib1g-dev
}

# Configures and builds the portable binary for one machine in build-release/ARCH.
build_arch() {
  local arch=$1 build=$work/$1
  local args=(-DCMAKE_BUILD_TYPE=Release -DSC_PORTABLE=ON -DSC_TESTS=OFF
    -DSC_WERROR="${SC_WERROR:-OFF}" -DSC_CJSON_SOURCE="$(cjson_source)")
  if [ "$arch" = aarch64 ]; then
    args+=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" -DCMAKE_SYSROOT="$(arm64_sysroot)")
  fi
  rm -f "$build/CMakeCache.txt" # found archives and sources are cached there: find them again
  cmake -S . -B "$build" -G Ninja "${args[@]}" >/dev/null
  cmake --build "$build" ${SC_JOBS:+-j "$SC_JOBS"}
}

# The tarball: the installation's files laid out flat, to run from where it is unpacked.
pack_tarball() {
  local arch=$1 build=$work/$1
  local name=stackcheck-$version-linux-$arch stage=$work/stage-$1
  rm -rf "$stage" && mkdir -p "$stage/$name/docs"
  DESTDIR=$stage/install cmake --install "$build" --prefix /usr --strip >/dev/null
  local usr=$stage/install/usr
  cp "$usr/bin/stackcheck" "$usr/share/man/man1/stackcheck.1" "$stage/$name/"
  cp "$usr/share/bash-completion/completions/stackcheck" "$stage/$name/stackcheck.bash"
  cp "$usr/share/doc/stackcheck/README.md" "$usr/share/doc/stackcheck/LICENSE" "$stage/$name/"
  cp "$usr/share/doc/stackcheck/"{findings.md,probes.md,snapshot.schema.json} "$stage/$name/docs/"
  local epoch
  epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -czf "$dist/$name.tar.gz" "$name"
  echo "$dist/$name.tar.gz"
}

# The .deb and .rpm of the same installation (CPack: dpkg-deb, and rpmbuild from Debian's rpm).
pack_packages() {
  local build=$work/$1
  (cd "$build" && cpack -G "DEB;RPM" -B "$build/packages" >/dev/null)
  cp "$build"/packages/*.deb "$build"/packages/*.rpm "$dist/"
  ls "$build"/packages/*.deb "$build"/packages/*.rpm | sed "s|.*/|$dist/|"
}

for arch in "${archs[@]}"; do
  case $arch in
  x86_64 | aarch64) ;;
  *) echo "release: unknown machine '$arch' (x86_64 or aarch64)" >&2 && exit 2 ;;
  esac
  build_arch "$arch"
  pack_tarball "$arch"
  pack_packages "$arch"
done
binaries=()
for arch in "${archs[@]}"; do binaries+=("$work/$arch/stackcheck"); done
tools/glibc-floor.sh "${binaries[@]}"
