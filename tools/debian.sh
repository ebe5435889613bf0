# Sourced by tools/release.sh and tools/release-check.sh: what they fetch from Debian. A root file
# system of another suite or architecture (mmdebstrap, packages extracted, nothing run in it), and
# a source package (apt-get source). apt's state for both lives in the directory given, so the
# system's apt configuration and lists stay as they are, and nothing is left behind there.
SC_DEBIAN_MIRROR=${SC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SC_DEBIAN_KEYRING=${SC_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
# What is fetched is kept here between runs (and between clones): outside the tree by default.
SC_CACHE=${SC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stackcheck}

# sc_debian_root ARCH SUITE DIR PACKAGE,PACKAGE...: DIR becomes a root with the packages extracted
# and registered as installed in its dpkg database (from their own control files: nothing ran in
# the root, so their maintainer scripts did not), so dpkg --root can check dependencies there.
sc_debian_root() {
  local arch=$1 suite=$2 dir=$3 packages=$4
  rm -rf "$dir"
  # apt's sandbox user may not read a root-owned temporary directory: apt runs as root here.
  mmdebstrap --quiet --mode=root --arch="$arch" --variant=extract --include="$packages" \
    --aptopt='APT::Sandbox::User "root"' --keyring="$SC_DEBIAN_KEYRING" \
    --skip=cleanup/apt/cache "$suite" "$dir" "$SC_DEBIAN_MIRROR"
  local deb name status=$dir/var/lib/dpkg/status
  for deb in "$dir"/var/cache/apt/archives/*.deb; do
    dpkg-deb -f "$deb" | sed '1a Status: install ok installed' >>"$status"
    echo >>"$status"
    name=$(dpkg-deb -f "$deb" Package)
    [ "$(dpkg-deb -f "$deb" Multi-Arch)" = same ] && name=$name:$arch
    dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\.||' -e 's|/$||' -e 's|^$|/.|' \
      >"$dir/var/lib/dpkg/info/$name.list"
    rm -f "$deb"
  done
}

# sc_debian_source PACKAGE SUITE DIR: unpacks the source package (Debian's patches applied) under
# DIR and prints the directory of the unpacked tree.
sc_debian_source() {
  local package=$1 suite=$2 dir=$3
  local state=$dir/apt
  rm -rf "$dir"
  mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/etc/parts"
  cat >"$state/etc/sources.list" <<SOURCES
deb-src [signed-by=$SC_DEBIAN_KEYRING] $SC_DEBIAN_MIRROR $suite main
SOURCES
  local opts=(-o "Dir::Etc::SourceList=$state/etc/sources.list" -o "Dir::Etc::SourceParts=$state/etc/parts"
    -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache" -o "APT::Sandbox::User=root"
    -o "Acquire::Languages=none" -qq)
  apt-get "${opts[@]}" update >&2
  (cd "$dir" && apt-get "${opts[@]}" source "$package" >&2)
  find "$dir" -mindepth 1 -maxdepth 1 -type d -name "$package-*" | head -n 1
}

# sc_debian_cached_root ARCH SUITE PACKAGE,PACKAGE...: prints the directory of that root in
# SC_CACHE, made by sc_debian_root on the first call; read it, never change it.
sc_debian_cached_root() {
  local arch=$1 suite=$2 packages=$3
  local cached
  cached=$SC_CACHE/roots/$suite-$arch-$(printf '%s' "$packages" | md5sum | cut -c1-8)
  if [ ! -f "$cached/.complete" ]; then
    mkdir -p "$SC_CACHE/roots"
    sc_debian_root "$arch" "$suite" "$cached.partial" "$packages" >&2
    rm -rf "$cached" && mv "$cached.partial" "$cached" && touch "$cached/.complete"
  fi
  echo "$cached"
}

# sc_debian_root_copy ARCH SUITE DIR PACKAGE,PACKAGE...: DIR becomes a fresh copy of the cached
# root (the tests change their copy: libraries added, packages installed, ldconfig run).
sc_debian_root_copy() {
  local dir=$3 cached
  cached=$(sc_debian_cached_root "$1" "$2" "$4")
  ! mountpoint -q "$dir/proc" || umount "$dir/proc" # left by a run that was stopped
  rm -rf "$dir" && mkdir -p "$(dirname "$dir")"
  cp -a "$cached" "$dir" && rm "$dir/.complete"
}
