#!/usr/bin/env bash
# Installs the Debian packages rpt's demo and tests need, and nothing when they are already there.
# Usage: scripts/install-deps.sh [demo|test]
set -euo pipefail

mode=${1:-test}
# clang-19/lld-19 compile and link generated C for every host.
packages=(clang-19 lld-19)
if [ "$mode" = test ]; then
  # gcc-12-multilib and g++-12-multilib (never gcc-multilib or g++-multilib: they remove the cross compilers)
  # build the native i386 oracles, C and C++; mingw (gcc and g++) builds the PE test guests; qemu-user runs foreign hosts (qemu-aarch64, qemu-loongarch64) and
  # qemu-ppc, the PowerPC oracle; gcc-powerpc-linux-gnu (with its binutils) builds the PowerPC test guests
  # and the oracle harness, and with the PowerPC glibc (libc6-dev-powerpc-cross) the static-glibc guest; the arm64 cross glibc and libgcc are what the AArch64 host links against
  # (LoongArch64 needs nothing more: it builds freestanding); valgrind measures;
  # Wine (32-bit, headless) runs the PE test guests as the Windows oracle; cc65 assembles the SNES
  # sample ROMs, and the bsnes-mercury libretro core is the SNES oracle.
  packages+=(cc65 libretro-bsnes-mercury-accuracy gcc-12-multilib g++-12-multilib gcc-mingw-w64-i686 g++-mingw-w64-i686 gcc-powerpc-linux-gnu libc6-dev-powerpc-cross qemu-user libc6-dev-arm64-cross libgcc-12-dev-arm64-cross valgrind wine wine32:i386)
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# The real programs' native oracles (tests/real/*/build.sh) are built from Debian's own source packages
# (`apt-get source bzip2`, `xz-utils`), which need deb-src entries; a fresh Debian image has none. They
# are added once, for the suites and mirror the image already uses, in a file of rpt's own.
deb_src=/etc/apt/sources.list.d/rpt-deb-src.sources
if [ "$mode" = test ] && ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/ &&
  [ -f /etc/apt/sources.list.d/debian.sources ]; then
  echo "rpt: enabling Debian source packages ($deb_src) for the real programs' native oracles" >&2
  sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $sudo tee "$deb_src" >/dev/null
  $sudo apt-get update -qq || echo "rpt: apt-get update failed; the native oracles may not build" >&2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "rpt: installing ${missing[*]}" >&2
# wine32 is an i386 package.
if [[ " ${missing[*]} " == *":i386 "* ]] && ! dpkg --print-foreign-architectures | grep -qx i386; then
  $sudo dpkg --add-architecture i386
fi
# A mirror caught mid-sync fails one index (seen: bookworm-security's i386 Packages); the others still serve.
for attempt in 1 2 3; do
  $sudo apt-get update -qq && break
  echo "rpt: apt-get update failed (attempt $attempt); going on with the indexes that did download" >&2
  sleep 10
done

install() { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"; }

# With the security i386 index missing, an amd64 library already updated from the security archive has
# no i386 twin of the same version, and Multi-Arch: same forbids mixing (wine32 then "generates breaks").
# The twin is still in the security pool: fetch the exact version apt names in its resolver trace.
fetch_i386_twins() {
  local twins
  twins=$(DEBIAN_FRONTEND=noninteractive $sudo apt-get install -s --no-install-recommends "${missing[@]}" \
      -o Debug::pkgProblemResolver=1 2>&1 |
    sed -n 's/^Broken .* on \([^:]*\):amd64 < \([^ ]*\) @ii.*/\1 \2/p' | sort -u)
  [ -n "$twins" ] || return 1
  local tmp
  tmp=$(mktemp -d)
  while read -r pkg version; do
    local source
    source=$(dpkg-query -W -f='${source:Package}' "$pkg:amd64" 2>/dev/null) || continue
    local prefix=${source:0:1}
    [[ $source == lib* ]] && prefix=${source:0:4}
    local file="${pkg}_${version#*:}_i386.deb"
    curl -sfL -o "$tmp/$file" "http://deb.debian.org/debian-security/pool/updates/main/$prefix/$source/${file//+/%2b}" ||
      rm -f "$tmp/$file"
  done <<<"$twins"
  compgen -G "$tmp/*.deb" >/dev/null || return 1
  echo "rpt: installing i386 twins from the security pool: $(ls "$tmp")" >&2
  $sudo dpkg -i "$tmp"/*.deb >/dev/null 2>&1 || true
  install -f >/dev/null
}

install "${missing[@]}" >/dev/null || { fetch_i386_twins && install "${missing[@]}" >/dev/null; }
