#!/bin/sh
# Builds the static-glibc PowerPC test guest: hello.c linked by powerpc-linux-gnu-gcc against
# Debian's static glibc at GameCube addresses (text segment at 0x80003000), which runs under
# `qemu-ppc -cpu 750cl` as it is (the oracle), and the DOL rpt recompiles, converted from that
# same ELF by `rpt convert-image ppc-dol`. One binary for both sides.
#
#   ./build.sh             builds hello.elf and hello.dol next to this script (committed)
#   ./build.sh elf OUT     builds hello.elf at OUT
#   ./build.sh check       rebuilds into a temporary directory and fails unless the results are
#                          byte-identical to the committed files
#
# CC overrides the compiler (default powerpc-linux-gnu-gcc); RPT the rpt binary (default: cargo
# run -q -p rpt-cli --, through ../ppc/common.sh).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-powerpc-linux-gnu-gcc}
# shellcheck source=../ppc/common.sh
. "$here/../ppc/common.sh"

# A real program's flags: glibc's own start-up and C library, no freestanding options. The build id
# is left out so the file depends on the sources and the toolchain alone.
GLIBC_FLAGS="-mcpu=750 -O2 -static -fno-pie -no-pie -Wall -Wextra -Wl,-Ttext-segment=0x80003000 -Wl,--build-id=none"

build_elf() {
    # shellcheck disable=SC2086
    "$CC" $GLIBC_FLAGS "$here/hello.c" -o "$1"
}

build_all() {
    build_elf "$1/hello.elf"
    rpt convert-image ppc-dol "$1/hello.elf" "$1/hello.dol"
}

case "${1:-}" in
"")
    build_all "$here"
    ;;
elf)
    build_elf "${2:?usage: build.sh elf OUT}"
    ;;
check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    build_all "$tmp"
    cmp "$tmp/hello.elf" "$here/hello.elf"
    cmp "$tmp/hello.dol" "$here/hello.dol"
    echo "the committed guest is reproducible"
    ;;
*)
    echo "usage: build.sh [elf OUT | check]" >&2
    exit 2
    ;;
esac
