#!/bin/sh
# Builds the C++ sample (README.md) two ways:
#
#   cxx.exe  i686-w64-mingw32-g++ -static: libstdc++, libsupc++ and libgcc's DWARF-2 unwinder are
#            linked into the PE, so the exception machinery is guest code rpt recompiles
#            (recipes/cxx-sample.ron); Wine runs it as an oracle
#   native   g++ -m32 -static (g++-12-multilib), the native i386 oracle, which the tests build
#
#   ./build.sh             builds cxx.exe and mini.exe next to this script (committed)
#   ./build.sh oracle OUT  builds the native i386 oracle at OUT
#   ./build.sh oracle-mini OUT  the same for mini.cpp, the small sibling CI runs
#   ./build.sh check       rebuilds both in a temporary directory and fails unless they are
#                          byte-identical to the committed ones
#
# CXX_PE and CXX_ORACLE override the compilers.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
CXX_PE=${CXX_PE:-i686-w64-mingw32-g++}
CXX_ORACLE=${CXX_ORACLE:-g++}
SOURCES="main.cpp support.cpp expr.cpp shapes.cpp json.cpp containers.cpp"
FLAGS="-O2 -Wall -Wextra"
# PE_LINK, the PE link flags the real programs use.
# shellcheck source=../../../real/flags.sh
. "$here/../../../real/flags.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build_pe() {
    # Everything static; msvcrt's own printf underneath (-D__USE_MINGW_ANSI_STDIO=0). Relative
    # source names keep the build directory out of the image.
    # shellcheck disable=SC2086
    (cd "$here" && "$CXX_PE" $FLAGS -static -static-libgcc -static-libstdc++ -D__USE_MINGW_ANSI_STDIO=0 \
        $PE_LINK $2 -o "$1")
}

build_oracle() {
    # Debian's `g++ -m32` finds no <asm/errno.h> without the host's include directory after its own.
    # shellcheck disable=SC2086
    (cd "$here" && "$CXX_ORACLE" -m32 $FLAGS -static -idirafter /usr/include/x86_64-linux-gnu $2 -o "$1")
}

case "${1:-}" in
"")
    build_pe "$here/cxx.exe" "$SOURCES"
    build_pe "$here/mini.exe" mini.cpp
    ;;
oracle)
    build_oracle "$2" "$SOURCES"
    ;;
oracle-mini)
    build_oracle "$2" mini.cpp
    ;;
check)
    for exe in cxx mini; do
        if [ $exe = cxx ]; then build_pe "$tmp/$exe.exe" "$SOURCES"; else build_pe "$tmp/$exe.exe" mini.cpp; fi
        cmp "$tmp/$exe.exe" "$here/$exe.exe"
    done
    echo "cxx.exe and mini.exe are reproducible"
    ;;
*)
    echo "usage: $0 [oracle OUTPUT | oracle-mini OUTPUT | check]" >&2
    exit 2
    ;;
esac
