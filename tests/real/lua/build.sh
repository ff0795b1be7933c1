#!/bin/sh
# Builds Lua 5.4 from Debian's source package (lua5.4) for rpt's real-program suite, and records
# what the oracles print for bench.lua.
#
#   ./build.sh              builds lua.exe (the committed guest PE) and records bench.out
#   ./build.sh pe OUT       builds the PE at OUT
#   ./build.sh oracle OUT   builds the native i386 Linux build of the same sources at OUT
#   ./build.sh x86-64 OUT   builds a native x86-64 Linux build (clang-19 -O2 -static): the
#                           benchmark's other limit (bench/real-peers.sh)
#   ./build.sh check        rebuilds the PE and fails unless it is byte-identical to lua.exe, then
#                           runs both oracles on bench.lua and fails unless each prints bench.out
#                           (the native build after "\n" becomes "\r\n": msvcrt's text mode)
#
# The source: LUA_SRC names an unpacked lua-5.4.4 directory; without it, `apt-get source lua5.4`
# fetches Debian's package into a temporary directory (deb-src must be enabled: `Types: deb deb-src`
# in /etc/apt/sources.list.d/debian.sources, then `apt-get update`). Only the upstream sources are
# used (src/*.c but luac.c), not Debian's patches, which concern its shared library and packaging.
#
# The PE: mingw -O2 against msvcrt (printf is msvcrt's: -D__USE_MINGW_ANSI_STDIO=0), no relocations
# or ASLR flag, no timestamp, COFF symbols kept, so the same toolchain gives the same bytes. Lua's
# luaconf.h picks its Windows configuration (_WIN32): LoadLibraryExA for C modules and _popen for
# io.popen, which rpt's win32-console platform lacks (stubs that stop the program if called; bench.lua
# calls neither). Lua dispatches its bytecode by GCC's computed goto (lvm.c's jump table).
# The oracles: Wine running the PE, and `gcc -m32 -O2 -static` of the same sources.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
CC_PE=${CC_PE:-i686-w64-mingw32-gcc}
CC_ORACLE=${CC_ORACLE:-gcc}
CC_X86_64=${CC_X86_64:-clang-19}
COMMON="-O2 -m32 -march=i686 -fno-asynchronous-unwind-tables"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source_dir() {
    if [ -n "${LUA_SRC:-}" ]; then
        echo "$LUA_SRC"
        return
    fi
    fetch="$work/fetch"
    if [ -d "$fetch/lua-5.4.4" ]; then
        echo "$fetch/lua-5.4.4"
        return
    fi
    mkdir -p "$fetch"
    (cd "$fetch" && apt-get source -qq --download-only lua5.4 >/dev/null 2>&1 &&
        tar xzf lua5.4_5.4.4.orig.tar.gz) || {
        echo "build.sh: cannot fetch lua5.4's source (enable deb-src, or set LUA_SRC)" >&2
        exit 1
    }
    echo "$fetch/lua-5.4.4"
}

sources() {
    for f in "$1"/src/*.c; do
        case "$f" in */luac.c) ;; *) echo "$f" ;; esac
    done
}

build_pe() {
    src=$(source_dir)
    # shellcheck disable=SC2046,SC2086
    "$CC_PE" $COMMON -D__USE_MINGW_ANSI_STDIO=0 \
        -Wl,--disable-dynamicbase -Wl,--disable-reloc-section -Wl,--no-insert-timestamp -Wl,-S \
        $(sources "$src") -o "$1"
}

build_oracle() {
    src=$(source_dir)
    # gcc-12-multilib has no i386 <asm/errno.h>; the x86-64 one has the same numbers.
    # shellcheck disable=SC2046,SC2086
    "$CC_ORACLE" $COMMON -static -idirafter /usr/include/x86_64-linux-gnu $(sources "$src") -lm -o "$1"
}

# Runs a program on bench.lua in a fresh directory holding a copy of it.
run_bench() {
    dir="$work/run"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$here/bench.lua" "$dir/"
    (cd "$dir" && "$@" bench.lua)
}

wine_run() {
    WINEDEBUG=-all run_bench wine "$1" 2>/dev/null
}

case "${1:-}" in
"")
    build_pe "$here/lua.exe"
    wine_run "$here/lua.exe" >"$here/bench.out"
    ;;
pe)
    build_pe "${2:?usage: build.sh pe OUT}"
    ;;
oracle)
    build_oracle "${2:?usage: build.sh oracle OUT}"
    ;;
x86-64)
    src=$(source_dir)
    # shellcheck disable=SC2046
    "$CC_X86_64" -O2 -static $(sources "$src") -lm -o "${2:?usage: build.sh x86-64 OUT}"
    ;;
check)
    tmp="$work"
    build_pe "$tmp/lua.exe"
    cmp "$tmp/lua.exe" "$here/lua.exe"
    build_oracle "$tmp/lua-native"
    run_bench "$tmp/lua-native" | sed 's/$/\r/' | cmp - "$here/bench.out"
    wine_run "$here/lua.exe" | cmp - "$here/bench.out"
    echo "lua.exe is reproducible and both oracles print bench.out"
    ;;
*)
    echo "usage: build.sh [pe OUT | oracle OUT | x86-64 OUT | check]" >&2
    exit 64
    ;;
esac
