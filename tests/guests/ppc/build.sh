#!/bin/sh
# Builds the PowerPC test guests: each program is a freestanding static ELF linked at 0x80003100
# (gc.ld) with its own _start and Linux system calls (rt.c), which runs under
# `qemu-ppc -cpu 750cl` as it is (the oracle), and the DOL rpt recompiles, converted from that
# same ELF by `rpt convert-image ppc-dol`. One binary for both sides.
#
#   ./build.sh                 builds every NAME.elf and NAME.dol next to this script (committed)
#   ./build.sh elf NAME OUT    builds NAME.elf at OUT
#   ./build.sh check           rebuilds into a temporary directory and fails unless the results
#                              are byte-identical to the committed files (and expected.py still
#                              gives paired.expected)
#
# CC overrides the compiler (default powerpc-linux-gnu-gcc); RPT the rpt binary
# (default: cargo run -q -p rpt-cli --). The flags and the rpt wrapper are in common.sh.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-powerpc-linux-gnu-gcc}
PROGRAMS="integer float paired dispatch"
# shellcheck source=common.sh
. "$here/common.sh"

build_elf() {
    # A program NAME may have hand-written Gekko assembly in NAME_ops.S (paired singles).
    extra=""
    if [ -f "$here/${1}_ops.S" ]; then
        extra="-Wa,-mgekko $here/${1}_ops.S"
    fi
    # dispatch.c is shared with the x86 samples (one source, both guests: see its header).
    src="$here/$1.c"
    if [ "$1" = dispatch ]; then
        src="$here/../x86/msvcrt/dispatch.c"
    fi
    # shellcheck disable=SC2086
    "$CC" $PPC_FLAGS -I"$here" -T "$here/gc.ld" "$here/rt.c" "$src" $extra -lgcc -o "$2"
}

build_all() {
    for p in $PROGRAMS; do
        build_elf "$p" "$1/$p.elf"
        rpt convert-image ppc-dol "$1/$p.elf" "$1/$p.dol"
    done
}

case "${1:-}" in
"")
    build_all "$here"
    ;;
elf)
    build_elf "${2:?usage: build.sh elf NAME OUT}" "${3:?usage: build.sh elf NAME OUT}"
    ;;
check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    build_all "$tmp"
    for p in $PROGRAMS; do
        cmp "$tmp/$p.elf" "$here/$p.elf"
        cmp "$tmp/$p.dol" "$here/$p.dol"
    done
    python3 "$here/expected.py" | cmp - "$here/paired.expected"
    echo "the committed guests are reproducible"
    ;;
*)
    echo "usage: build.sh [elf NAME OUT | check]" >&2
    exit 2
    ;;
esac
