#!/bin/sh
# Builds XZ Utils 5.4.1 (the xz program and liblzma) from Debian's source package
# (xz-utils 5.4.1-1+deb12u1, patches applied) three ways:
#
#   xz.exe  i686-w64-mingw32-gcc, linked against msvcrt.dll; rpt recompiles it on the
#           win32-console platform (recipes/real-xz-pe.ron) and Wine runs it as an oracle
#   xz.elf  powerpc-linux-gnu-gcc against Debian's static glibc at GameCube addresses; it runs
#           under `qemu-ppc -cpu 750cl` as it is (the oracle)
#   xz.dol  that ELF converted by `rpt convert-image ppc-dol` (recipes/real-xz-dol.ron)
#
# and, on request, the native i386 oracle (gcc -m32 -static), which the tests build and nobody commits.
#
#   ./build.sh             builds xz.exe, xz.elf and xz.dol next to this script (committed)
#   ./build.sh oracle OUT  builds the native i386 oracle at OUT
#   ./build.sh x86-64 OUT  builds a native x86-64 program (clang-19 -O2 -static): the benchmark's other limit
#   ./build.sh check       rebuilds the three into a temporary directory and fails unless they are
#                          byte-identical to the committed files
#   ./build.sh lines       counts the lines of the C files (.c and .h) the builds compile
#
# There is no autotools step: config.h next to this script is written by hand (it says how), and
# the source lists below are those configure's Makefiles compile with
# `--disable-threads --disable-nls --disable-assembler` (the C CRCs instead of crc32_x86.S/crc64_x86.S).
#
# XZ_SRC names an unpacked source tree (the directory holding src/xz/main.c). Without it the script
# runs `apt-get source xz-utils` in a temporary directory, which needs deb-src entries:
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
# two levels up, which holds for tests/real/xz as for tests/guests/ppc.
# shellcheck source=../../guests/ppc/common.sh
. "$here/../../guests/ppc/common.sh"

# liblzma, relative to src/liblzma, in the order of its Makefile (check, common, delta, lz, lzma,
# rangecoder, simple), without the multithreaded coders and with the C CRCs.
LZMA_SOURCES="../common/tuklib_physmem.c
check/check.c check/crc32_fast.c check/crc32_table.c check/crc64_fast.c check/crc64_table.c check/sha256.c
common/common.c common/block_util.c common/easy_preset.c common/filter_common.c common/hardware_physmem.c
common/index.c common/stream_flags_common.c common/string_conversion.c common/vli_size.c
common/alone_encoder.c common/block_buffer_encoder.c common/block_encoder.c common/block_header_encoder.c
common/easy_buffer_encoder.c common/easy_encoder.c common/easy_encoder_memusage.c
common/filter_buffer_encoder.c common/filter_encoder.c common/filter_flags_encoder.c common/index_encoder.c
common/stream_buffer_encoder.c common/stream_encoder.c common/stream_flags_encoder.c common/vli_encoder.c
common/microlzma_encoder.c
common/alone_decoder.c common/auto_decoder.c common/block_buffer_decoder.c common/block_decoder.c
common/block_header_decoder.c common/easy_decoder_memusage.c common/file_info.c
common/filter_buffer_decoder.c common/filter_decoder.c common/filter_flags_decoder.c common/index_decoder.c
common/index_hash.c common/stream_buffer_decoder.c common/stream_decoder.c common/stream_flags_decoder.c
common/vli_decoder.c common/microlzma_decoder.c common/lzip_decoder.c
delta/delta_common.c delta/delta_encoder.c delta/delta_decoder.c
lz/lz_encoder.c lz/lz_encoder_mf.c lz/lz_decoder.c
lzma/lzma_encoder_presets.c lzma/lzma_encoder.c lzma/lzma_encoder_optimum_fast.c
lzma/lzma_encoder_optimum_normal.c lzma/fastpos_table.c lzma/lzma_decoder.c
lzma/lzma2_encoder.c lzma/lzma2_decoder.c
rangecoder/price_table.c
simple/simple_coder.c simple/simple_encoder.c simple/simple_decoder.c
simple/x86.c simple/powerpc.c simple/ia64.c simple/arm.c simple/armthumb.c simple/arm64.c simple/sparc.c"
# xz, relative to src/xz, in the order of its Makefile.
XZ_SOURCES="args.c coder.c file_io.c hardware.c list.c main.c message.c mytime.c options.c signals.c
suffix.c util.c ../common/tuklib_open_stdxxx.c ../common/tuklib_progname.c ../common/tuklib_exit.c
../common/tuklib_mbstr_width.c ../common/tuklib_mbstr_fw.c"

# X86_FLAGS, PE_FLAGS, PE_LINK, ORACLE_FLAGS and PPC_FLAGS.
# shellcheck source=../flags.sh
. "$here/../flags.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Sets $src to a source tree: $XZ_SRC, or a fresh `apt-get source xz-utils` (which applies
# Debian's patches).
find_source() {
    if [ -n "${XZ_SRC:-}" ]; then
        src=$XZ_SRC
    else
        mkdir "$tmp/apt"
        (cd "$tmp/apt" && apt-get source -q xz-utils >/dev/null 2>&1) || {
            echo "apt-get source xz-utils failed: enable deb-src (Types: deb deb-src in" \
                "/etc/apt/sources.list.d/debian.sources) and run apt-get update, or set XZ_SRC" >&2
            exit 1
        }
        src=$(echo "$tmp"/apt/xz-utils-5.4.1)
    fi
    [ -f "$src/src/xz/main.c" ] || { echo "no src/xz/main.c in $src" >&2; exit 1; }
}

# build CC "FLAGS" "LINK FLAGS" OUT: liblzma's objects first (with its own include path and
# TUKLIB_SYMBOL_PREFIX, as its Makefile compiles them), then xz linked with them. Relative source
# names, and config.h copied into the object directory, keep every absolute path out of the image.
build() {
    cc=$1 flags=$2 link=$3 out=$4
    objs=$tmp/objs-$(basename "$out")
    rm -rf "$objs"
    mkdir -p "$objs"
    cp "$here/config.h" "$objs/config.h"
    l=$src/src/liblzma
    # Each object is named after its source's path, so that equal base names never collide.
    for f in $LZMA_SOURCES; do
        o=$objs/$(echo "$f" | tr '/.' '__').o
        # shellcheck disable=SC2086
        (cd "$l" && "$cc" $flags -DHAVE_CONFIG_H -I"$objs" -Iapi -Icommon -Icheck -Ilz -Irangecoder \
            -Ilzma -Idelta -Isimple -I../common -DTUKLIB_SYMBOL_PREFIX=lzma_ -c "$f" -o "$o") \
            2>>"$tmp/cc.log" || { cat "$tmp/cc.log" >&2; exit 1; }
        echo "$o" >>"$objs/list"
    done
    # shellcheck disable=SC2086,SC2046
    (cd "$src/src/xz" && "$cc" $flags -DHAVE_CONFIG_H -I"$objs" -I../common -I../liblzma/api \
        $link $XZ_SOURCES $(cat "$objs/list") -o "$out") 2>>"$tmp/cc.log" || {
        cat "$tmp/cc.log" >&2
        exit 1
    }
}

build_all() {
    build "$CC_PE" "$PE_FLAGS" "$PE_LINK" "$1/xz.exe"
    build "$CC_PPC" "$PPC_FLAGS" "" "$1/xz.elf"
    rpt convert-image ppc-dol "$1/xz.elf" "$1/xz.dol"
}

# The lines of C the builds compile: every .c above and every .h they include (by gcc's -MM on
# the mingw build; the glibc builds include the same files of xz's).
count_lines() {
    objs=$tmp/count
    mkdir -p "$objs"
    cp "$here/config.h" "$objs/config.h"
    deps=$tmp/deps
    # shellcheck disable=SC2086
    (cd "$src/src/liblzma" && "$CC_PE" $PE_FLAGS -DHAVE_CONFIG_H -I"$objs" -Iapi -Icommon -Icheck -Ilz \
        -Irangecoder -Ilzma -Idelta -Isimple -I../common -DTUKLIB_SYMBOL_PREFIX=lzma_ -MM $LZMA_SOURCES) >"$deps"
    # shellcheck disable=SC2086
    (cd "$src/src/xz" && "$CC_PE" $PE_FLAGS -DHAVE_CONFIG_H -I"$objs" -I../common -I../liblzma/api \
        -MM $XZ_SOURCES | sed 's# \([^ /\\]\)# xz/\1#g') >>"$deps"
    # Every path of the source tree's src/ (liblzma's relative to src/liblzma, xz's prefixed), made
    # canonical, counted once; config.h (ours) is left out.
    tr ' \\' '\n\n' <"$deps" | grep '\.[ch]$' | grep -v '^/' | while read -r p; do
        case $p in xz/*) realpath "$src/src/$p" ;; *) realpath "$src/src/liblzma/$p" ;; esac
    done | sort -u | xargs cat | wc -l
}

case "${1:-}" in
"")
    find_source
    build_all "$here"
    ;;
oracle)
    out=${2:?usage: build.sh oracle OUT}
    find_source
    build "$CC_ORACLE" "$ORACLE_FLAGS" "" "$out"
    ;;
x86-64)
    out=${2:?usage: build.sh x86-64 OUT}
    find_source
    build "$CC_X86_64" "-O2 -static" "" "$out"
    ;;
check)
    find_source
    mkdir "$tmp/out"
    build_all "$tmp/out"
    for f in xz.exe xz.elf xz.dol; do cmp "$tmp/out/$f" "$here/$f"; done
    echo "the committed xz builds are reproducible"
    ;;
lines)
    find_source
    count_lines
    ;;
*)
    echo "usage: build.sh [oracle OUT | x86-64 OUT | check | lines]" >&2
    exit 2
    ;;
esac
