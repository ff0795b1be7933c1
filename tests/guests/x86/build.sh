#!/bin/sh
# Builds the x86 demo guest from demo.c.
#
#   ./build.sh                 builds demo.exe (the committed guest PE) next to this script
#   ./build.sh pe OUTPUT       builds the guest PE at OUTPUT
#   ./build.sh oracle OUTPUT   builds the native i386 Linux oracle at OUTPUT (tests do this at test time)
#   ./build.sh check           builds the PE twice into a temporary directory and fails unless the
#                              two builds and the committed demo.exe are byte-identical
#
# CC_PE and CC_ORACLE override the compilers (default i686-w64-mingw32-gcc and gcc).
# The PE flags: freestanding, no CRT (-nostdlib, so the entry is our own `start`, stdcall-decorated
# as _start@0), kernel32 only, no .eh_frame, no relocations and no ASLR flag (a fixed image base
# of 0x400000), and no link timestamp, so the same compiler gives the same bytes every time.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src="$here/demo.c"
CC_PE=${CC_PE:-i686-w64-mingw32-gcc}
CC_ORACLE=${CC_ORACLE:-gcc}

# Code generation flags shared by both builds, so the two programs are as alike as possible.
COMMON="-O2 -m32 -march=i686 -fno-asynchronous-unwind-tables -Wall -Wextra"

build_pe() {
    # shellcheck disable=SC2086
    "$CC_PE" $COMMON -ffreestanding -nostdlib -fno-builtin \
        -Wl,-e,_start@0 -Wl,--subsystem,console \
        -Wl,--disable-dynamicbase -Wl,--disable-reloc-section -Wl,--no-insert-timestamp \
        "$src" -lkernel32 -o "$1"
}

build_oracle() {
    # shellcheck disable=SC2086
    "$CC_ORACLE" $COMMON -static "$src" -o "$1"
}

case "${1:-}" in
"")
    build_pe "$here/demo.exe"
    ;;
pe)
    build_pe "${2:?usage: build.sh pe OUTPUT}"
    ;;
oracle)
    build_oracle "${2:?usage: build.sh oracle OUTPUT}"
    ;;
check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    build_pe "$tmp/a.exe"
    build_pe "$tmp/b.exe"
    cmp "$tmp/a.exe" "$tmp/b.exe"
    cmp "$tmp/a.exe" "$here/demo.exe"
    echo "demo.exe is reproducible and up to date"
    ;;
*)
    echo "usage: build.sh [pe OUTPUT | oracle OUTPUT | check]" >&2
    exit 64
    ;;
esac
