#!/bin/sh
# Builds the benchmark programs (see README.md) from one C source each, for every peer rpt is
# measured against:
#
#   ./build.sh                    builds NAME.exe (mingw PE, msvcrt), NAME.elf and NAME.dol (PowerPC)
#                                 next to this script: the committed guests
#   ./build.sh pe NAME OUT        the mingw PE rpt recompiles for the x86-pe guest
#   ./build.sh i386 NAME OUT      the native i386 Linux build (gcc -m32 -O2): the x86 oracle, the
#                                 instruction-count limit, and what qemu-i386 runs
#   ./build.sh x86-64 NAME OUT    the native x86-64 build (clang-19 -O2): the other limit
#   ./build.sh ppc-elf NAME OUT   the PowerPC ELF that qemu-ppc runs and the DOL is made from
#   ./build.sh check              rebuilds the guests into a temporary directory and fails unless they
#                                 are byte-identical to the committed files
#   ./build.sh list               prints the program names
#
# CC_PE, CC_I386, CC_X86_64 and CC_PPC override the compilers; RPT the rpt binary (default:
# cargo run -q -p rpt-cli --). The x86 builds share their code generation flags (as
# tests/guests/x86/msvcrt/build.sh does); the PowerPC flags are ../ppc/common.sh's.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
CC_PE=${CC_PE:-i686-w64-mingw32-gcc}
CC_I386=${CC_I386:-gcc}
CC_X86_64=${CC_X86_64:-clang-19}
CC_PPC=${CC_PPC:-powerpc-linux-gnu-gcc}
PROGRAMS="vm lz physics calls computed"

COMMON="-O2 -m32 -march=i686 -fno-asynchronous-unwind-tables -Wall -Wextra"
# shellcheck source=../ppc/common.sh
. "$here/../ppc/common.sh"

# Flags one program gets in every build, so all peers run the same code shape.
# vm: its dispatch switch becomes a compare tree instead of a jump table. The table gcc emits there
# has its base hoisted out of the loop (PowerPC) and its bound compared in memory (x86), shapes
# neither guest's jump-table recogniser knows yet, so the recompiled program would exit at the
# first case (see README.md).
program_flags() {
    case "$1" in
    vm) echo "-fno-jump-tables" ;;
    *) echo "" ;;
    esac
}

build() {
    kind=$1 name=$2 out=$3
    src="$here/$name.c"
    extra=$(program_flags "$name")
    # shellcheck disable=SC2086
    case "$kind" in
    pe)
        # msvcrt's printf (not mingw's own), a fixed image base, no timestamp, no DWARF:
        # the same compiler gives the same bytes every time.
        "$CC_PE" $COMMON $extra -D__USE_MINGW_ANSI_STDIO=0 \
            -Wl,--disable-dynamicbase -Wl,--disable-reloc-section -Wl,--no-insert-timestamp -Wl,-S \
            "$src" -o "$out" ;;
    i386) "$CC_I386" $COMMON $extra -static "$src" -o "$out" ;;
    x86-64) "$CC_X86_64" -O2 -Wall -Wextra $extra -static "$src" -o "$out" ;;
    ppc-elf) "$CC_PPC" $PPC_FLAGS $extra -T "$here/../ppc/gc.ld" "$here/../ppc/rt.c" "$src" -lgcc -o "$out" ;;
    *)
        echo "build.sh: unknown kind '$kind' (pe, i386, x86-64, ppc-elf)" >&2
        exit 64 ;;
    esac
}

build_guests() {
    for p in $PROGRAMS; do
        build pe "$p" "$1/$p.exe"
        build ppc-elf "$p" "$1/$p.elf"
        rpt convert-image ppc-dol "$1/$p.elf" "$1/$p.dol"
    done
}

case "${1:-}" in
"")
    build_guests "$here"
    ;;
pe | i386 | x86-64 | ppc-elf)
    build "$1" "${2:?usage: build.sh $1 NAME OUT}" "${3:?usage: build.sh $1 NAME OUT}"
    ;;
check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    build_guests "$tmp"
    for p in $PROGRAMS; do
        for ext in exe elf dol; do cmp "$tmp/$p.$ext" "$here/$p.$ext"; done
    done
    echo "the benchmark guests are reproducible and up to date"
    ;;
list)
    echo $PROGRAMS
    ;;
*)
    echo "usage: build.sh [pe|i386|x86-64|ppc-elf NAME OUT | check | list]" >&2
    exit 64
    ;;
esac
