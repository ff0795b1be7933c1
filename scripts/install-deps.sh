#!/usr/bin/env bash
# Installs the Debian packages rpt's demo and tests need, and nothing when they are already there.
# Usage: scripts/install-deps.sh [demo|test]
set -euo pipefail

mode=${1:-test}
# clang-19/lld-19 compile and link generated C for every host.
packages=(clang-19 lld-19)
if [ "$mode" = test ]; then
  # gcc-12-multilib (never gcc-multilib: it removes the cross compilers) builds the native i386 oracles;
  # mingw builds the PE test guests; qemu-user runs foreign hosts (qemu-aarch64, qemu-loongarch64) and
  # qemu-ppc, the PowerPC oracle; gcc-powerpc-linux-gnu (with its binutils) builds the PowerPC test guests
  # and the oracle harness, and with the PowerPC glibc (libc6-dev-powerpc-cross) the static-glibc guest; the arm64 cross glibc and libgcc are what the AArch64 host links against
  # (LoongArch64 needs nothing more: it builds freestanding); valgrind measures;
  # Wine (32-bit, headless) runs the PE test guests as the Windows oracle.
  packages+=(gcc-12-multilib gcc-mingw-w64-i686 gcc-powerpc-linux-gnu libc6-dev-powerpc-cross qemu-user libc6-dev-arm64-cross libgcc-12-dev-arm64-cross valgrind wine wine32:i386)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "rpt: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# wine32 is an i386 package.
if [[ " ${missing[*]} " == *":i386 "* ]] && ! dpkg --print-foreign-architectures | grep -qx i386; then
  $sudo dpkg --add-architecture i386
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
