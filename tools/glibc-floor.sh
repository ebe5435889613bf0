#!/usr/bin/env bash
# Prints the newest glibc symbol version each ELF file needs and the shared libraries it loads,
# and fails when one needs a version above the floor (2.17, or SC_GLIBC_FLOOR) or a library that
# glibc does not provide: what a binary must meet to start on any Linux with that glibc and
# nothing else installed. Reads the files with readelf (any machine's ELF), never runs them.
#   tools/glibc-floor.sh FILE...
set -euo pipefail
floor=${SC_GLIBC_FLOOR:-2.17}
# The libraries of glibc itself (their sonames on x86_64 and aarch64).
glibc_libs=" libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libresolv.so.2 \
ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 "

[ $# -gt 0 ] || { echo "usage: tools/glibc-floor.sh FILE..." >&2; exit 2; }
status=0
for file in "$@"; do
  if ! readelf -h "$file" >/dev/null 2>&1; then
    echo "$file: not an ELF file" >&2
    status=1
    continue
  fi
  machine=$(readelf -h "$file" | sed -nE 's/^ +Machine: +//p')
  # The versions it needs: the Version needs section names them per library.
  newest=$(readelf -V --wide "$file" | grep -oE 'Name: GLIBC_[0-9][0-9.]*' | sed 's/Name: GLIBC_//' |
    sort -V | tail -n 1)
  private=$(readelf -V --wide "$file" | grep -c 'Name: GLIBC_PRIVATE' || true)
  needed=$(readelf -d --wide "$file" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' ')
  problems=()
  if [ -n "$newest" ] && [ "$(printf '%s\n%s\n' "$floor" "$newest" | sort -V | tail -n 1)" != "$floor" ]; then
    problems+=("GLIBC_$newest is above the floor $floor")
  fi
  [ "$private" = 0 ] || problems+=("GLIBC_PRIVATE is needed")
  foreign=()
  for lib in $needed; do
    [[ $glibc_libs == *" $lib "* ]] || foreign+=("$lib")
  done
  [ ${#foreign[@]} -eq 0 ] || problems+=("${foreign[*]} not part of glibc")
  verdict=ok
  if [ ${#problems[@]} -gt 0 ]; then
    verdict="FAIL: $(IFS=';'; echo "${problems[*]}" | sed 's/;/; /g')"
  fi
  echo "$file: GLIBC_${newest:-none} ($machine; needs ${needed% }) $verdict"
  [ "$verdict" = ok ] || status=1
done
exit $status
