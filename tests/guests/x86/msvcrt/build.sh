#!/bin/sh
# Builds the msvcrt sample guests: real mingw programs with the mingw CRT, linked against msvcrt.dll.
#
#   ./build.sh                    builds every NAME.exe (the committed guest PEs) next to this script
#   ./build.sh pe NAME OUTPUT     builds one sample's PE at OUTPUT
#   ./build.sh oracle NAME OUTPUT builds one sample's native i386 Linux oracle at OUTPUT (tests do this)
#   ./build.sh oracle-f64 NAME OUTPUT  the same with its float work in scalar SSE2 doubles
#                                 (-msse2 -mfpmath=sse): every operation rounded to double, which is what
#                                 the f64 x87 value model computes (the oracle of recipes/x87-mandel-f64.ron)
#   ./build.sh check              builds every PE twice into a temporary directory and fails unless
#                                 both builds and the committed PEs are byte-identical
#   ./build.sh list               prints the sample names
#
# Which printf a sample gets (see README.md):
#   dispatch, int_work, stdio_strings, printf_float, printf_quirks: -D__USE_MINGW_ANSI_STDIO=0, so printf is msvcrt's
#     (the win32-console platform formats it);
#   qsort_mingw, x87_physics: mingw's default, so printf is mingw's own code inside the PE (lifted guest code).
# Which float unit a sample's float code uses:
#   sse_float: scalar SSE2 (-msse2 -mfpmath=sse; -fno-math-errno so sqrt is the sqrtsd instruction;
#     -fno-tree-vectorize because rpt lifts scalar SSE, not the packed integer forms of vectorized loops);
#   the others: x87, gcc's default for i386. The x87_* samples are float work on the x87 (docs/x87.md);
#   x87_physics is built with -fno-math-errno so its square roots are the fsqrt instruction and it needs
#   no libm at all.
#
# CC_PE and CC_ORACLE override the compilers (default i686-w64-mingw32-gcc and gcc).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
CC_PE=${CC_PE:-i686-w64-mingw32-gcc}
CC_ORACLE=${CC_ORACLE:-gcc}
SAMPLES="dispatch int_work stdio_strings printf_float printf_quirks qsort_mingw sse_float x87_mandel x87_physics x87_ray53"

# Code generation flags shared by both builds, so the two programs are as alike as possible.
COMMON="-O2 -m32 -march=i686 -fno-asynchronous-unwind-tables -Wall -Wextra"

stdio_flags() {
    case "$1" in
    qsort_mingw) echo "" ;;
    x87_physics) echo "-fno-math-errno" ;;
    *) echo "-D__USE_MINGW_ANSI_STDIO=0" ;;
    esac
}

float_flags() {
    case "$1" in
    sse_float) echo "-msse2 -mfpmath=sse -fno-math-errno -fno-tree-vectorize" ;;
    *) echo "" ;;
    esac
}

build_pe() {
    # No relocations or ASLR flag (a fixed image base), no timestamp, no DWARF (-Wl,-S keeps the
    # COFF symbols for readers of listings): the same compiler gives the same bytes every time.
    # shellcheck disable=SC2086
    "$CC_PE" $COMMON $(stdio_flags "$1") $(float_flags "$1") \
        -Wl,--disable-dynamicbase -Wl,--disable-reloc-section -Wl,--no-insert-timestamp -Wl,-S \
        "$here/$1.c" -o "$2"
}

build_oracle() {
    # shellcheck disable=SC2086
    "$CC_ORACLE" $COMMON $(stdio_flags "$1") $(float_flags "$1") $3 -static "$here/$1.c" -o "$2" -lm
}

case "${1:-}" in
"")
    for s in $SAMPLES; do build_pe "$s" "$here/$s.exe"; done
    ;;
pe)
    build_pe "${2:?usage: build.sh pe NAME OUTPUT}" "${3:?usage: build.sh pe NAME OUTPUT}"
    ;;
oracle)
    build_oracle "${2:?usage: build.sh oracle NAME OUTPUT}" "${3:?usage: build.sh oracle NAME OUTPUT}" ""
    ;;
oracle-f64)
    build_oracle "${2:?usage: build.sh oracle-f64 NAME OUTPUT}" "${3:?usage: build.sh oracle-f64 NAME OUTPUT}" \
        "-msse2 -mfpmath=sse"
    ;;
check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for s in $SAMPLES; do
        build_pe "$s" "$tmp/a.exe"
        build_pe "$s" "$tmp/b.exe"
        cmp "$tmp/a.exe" "$tmp/b.exe"
        cmp "$tmp/a.exe" "$here/$s.exe"
    done
    echo "the msvcrt samples are reproducible and up to date"
    ;;
list)
    echo $SAMPLES
    ;;
*)
    echo "usage: build.sh [pe NAME OUTPUT | oracle NAME OUTPUT | oracle-f64 NAME OUTPUT | check | list]" >&2
    exit 64
    ;;
esac
