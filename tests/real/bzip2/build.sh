#!/bin/sh
# Builds bzip2 1.0.8 from Debian's source package (bzip2 1.0.8-5, patches applied) three ways:
#
#   bzip2.exe  i686-w64-mingw32-gcc, linked against msvcrt.dll; rpt recompiles it on the
#              win32-console platform (recipes/real-bzip2-pe.ron) and Wine runs it as an oracle
#   bzip2.elf  powerpc-linux-gnu-gcc against Debian's static glibc at GameCube addresses; it runs
#              under `qemu-ppc -cpu 750cl` as it is (the oracle)
#   bzip2.dol  that ELF converted by `rpt convert-image ppc-dol` (recipes/real-bzip2-dol.ron)
#
# and, on request, the native i386 oracle (gcc -m32 -static), which the tests build and nobody commits.
#
#   ./build.sh             builds bzip2.exe, bzip2.elf and bzip2.dol next to this script (committed)
#   ./build.sh oracle OUT  builds the native i386 oracle at OUT
#   ./build.sh x86-64 OUT  builds a native x86-64 program (clang-19 -O2 -static): the benchmark's other limit
#   ./build.sh check       rebuilds the three into a temporary directory and fails unless they are
#                          byte-identical to the committed files
#
# BZIP2_SRC names an unpacked source tree (the directory holding bzip2.c). Without it the script
# runs `apt-get source bzip2` in a temporary directory, which needs deb-src entries:
# `Types: deb deb-src` in /etc/apt/sources.list.d/debian.sources, then `apt-get update`.
# CC_PE, CC_PPC and CC_ORACLE override the compilers; RPT the rpt binary (default: cargo run -q -p
# rpt-cli --, through tests/guests/ppc/common.sh).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
CC_PE=${CC_PE:-i686-w64-mingw32-gcc}
CC_PPC=${CC_PPC:-powerpc-linux-gnu-gcc}
CC_ORACLE=${CC_ORACLE:-gcc}
CC_X86_64=${CC_X86_64:-clang-19}
# The workspace's tests/guests/ppc/common.sh defines rpt(); it finds the workspace from $here as
# two levels up, which holds for tests/real/bzip2 as for tests/guests/ppc.
# shellcheck source=../../guests/ppc/common.sh
. "$here/../../guests/ppc/common.sh"

# The program and the library, in the order Debian's Makefile lists them.
SOURCES="blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c bzip2.c"

# X86_FLAGS, PE_FLAGS, PE_LINK, ORACLE_FLAGS and PPC_FLAGS.
# shellcheck source=../flags.sh
. "$here/../flags.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Sets $src to a source tree: $BZIP2_SRC, or a fresh `apt-get source bzip2` (which applies
# Debian's patches, among them help-option.diff to bzip2.c).
find_source() {
    if [ -n "${BZIP2_SRC:-}" ]; then
        src=$BZIP2_SRC
    else
        mkdir "$tmp/apt"
        (cd "$tmp/apt" && apt-get source -q bzip2 >/dev/null 2>&1) || {
            echo "apt-get source bzip2 failed: enable deb-src (Types: deb deb-src in" \
                "/etc/apt/sources.list.d/debian.sources) and run apt-get update, or set BZIP2_SRC" >&2
            exit 1
        }
        src=$(echo "$tmp"/apt/bzip2-1.0.8)
    fi
    [ -f "$src/bzip2.c" ] || { echo "no bzip2.c in $src" >&2; exit 1; }
}

build_pe() {
    # Relative source names keep the build directory out of the image.
    # shellcheck disable=SC2086
    (cd "$src" && "$CC_PE" $PE_FLAGS $PE_LINK $SOURCES -o "$1")
}

build_elf() {
    # shellcheck disable=SC2086
    (cd "$src" && "$CC_PPC" $PPC_FLAGS $SOURCES -o "$1" 2>"$tmp/ppc.log") || {
        cat "$tmp/ppc.log" >&2
        exit 1
    }
}

build_oracle() {
    # shellcheck disable=SC2086
    (cd "$src" && "$CC_ORACLE" $ORACLE_FLAGS $SOURCES -o "$1")
}

build_x86_64() {
    # shellcheck disable=SC2086
    (cd "$src" && "$CC_X86_64" -O2 -static $SOURCES -o "$1")
}

build_all() {
    build_pe "$1/bzip2.exe"
    build_elf "$1/bzip2.elf"
    rpt convert-image ppc-dol "$1/bzip2.elf" "$1/bzip2.dol"
}

case "${1:-}" in
"")
    find_source
    build_all "$here"
    ;;
oracle)
    out=${2:?usage: build.sh oracle OUT}
    find_source
    build_oracle "$out"
    ;;
x86-64)
    out=${2:?usage: build.sh x86-64 OUT}
    find_source
    build_x86_64 "$out"
    ;;
check)
    find_source
    mkdir "$tmp/out"
    build_all "$tmp/out"
    for f in bzip2.exe bzip2.elf bzip2.dol; do cmp "$tmp/out/$f" "$here/$f"; done
    echo "the committed bzip2 builds are reproducible"
    ;;
*)
    echo "usage: build.sh [oracle OUT | x86-64 OUT | check]" >&2
    exit 2
    ;;
esac
