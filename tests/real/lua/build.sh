#!/bin/sh
# Builds Lua 5.4 from Debian's source package (lua5.4) for rpt's real-program suite, and records
# what the oracles print for bench.lua.
#
#   ./build.sh              builds lua.exe (the committed guest PE), lua.elf and lua.dol (the
#                           PowerPC build and its DOL), records bench.out, and prints the DOL
#                           recipe's guest_options
#   ./build.sh pe OUT       builds the PE at OUT
#   ./build.sh oracle OUT   builds the native i386 Linux build of the same sources at OUT
#   ./build.sh x86-64 OUT   builds a native x86-64 Linux build (clang-19 -O2 -static): the
#                           benchmark's other limit (bench/real-peers.sh)
#   ./build.sh jmp ELF      prints the guest_options naming ELF's setjmp and longjmp families
#   ./build.sh check        rebuilds the PE, the ELF and the DOL and fails unless each is
#                           byte-identical to the committed file and recipes/real-lua-dol.ron names
#                           the ELF's setjmp and longjmp, then runs the oracles on bench.lua and fails
#                           unless each prints bench.out: Wine as it is, the native build and
#                           `qemu-ppc -cpu 750cl lua.elf` after "\n" becomes "\r\n" (msvcrt's text mode)
#
# lua.elf: powerpc-linux-gnu-gcc against Debian's static glibc at GameCube addresses, as
# tests/real/bzip2 links; `rpt convert-image ppc-dol` makes lua.dol of it (RPT names the rpt binary;
# default: cargo run, through tests/guests/ppc/common.sh). bench.lua calls no libm function but
# floor and ceil: glibc's PowerPC libm uses mffsl, which qemu-ppc 7.2 rejects.
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
CC_PPC=${CC_PPC:-powerpc-linux-gnu-gcc}
NM_PPC=${NM_PPC:-powerpc-linux-gnu-nm}
# The workspace's tests/guests/ppc/common.sh defines rpt(); it finds the workspace two levels up.
# shellcheck source=../../guests/ppc/common.sh
. "$here/../../guests/ppc/common.sh"
# X86_FLAGS, PE_FLAGS, PE_LINK, ORACLE_FLAGS and PPC_FLAGS.
# shellcheck source=../flags.sh
. "$here/../flags.sh"
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
    "$CC_PE" $PE_FLAGS $PE_LINK $(sources "$src") -o "$1"
}

build_oracle() {
    src=$(source_dir)
    # shellcheck disable=SC2046,SC2086
    "$CC_ORACLE" $ORACLE_FLAGS $(sources "$src") -lm -o "$1"
}

build_elf() {
    src=$(source_dir)
    # The linker warns that tmpnam is dangerous (os.tmpname) and that 0x80003000 is not a multiple
    # of its page size (tests/guests/ppc-glibc/README.md: it runs regardless).
    # shellcheck disable=SC2046,SC2086
    "$CC_PPC" $PPC_FLAGS $(sources "$src") -lm -o "$1" 2>"$work/ppc.log" || {
        cat "$work/ppc.log" >&2
        exit 1
    }
}

# The addresses of every symbol of one family (names ending in setjmp, or in longjmp: _setjmp,
# __GI__setjmp, __sigsetjmp, ...; longjmp, __longjmp, siglongjmp, ...), deduplicated, as the
# ppc-dol guest's options want them (guests/ppc-dol/src/nonlocal.rs, docs/linux-syscalls.md).
family() {
    "$NM_PPC" "$1" | awk -v suffix="$2" '$3 ~ suffix "$" { print "0x" $1 }' | sort -u | tr '\n' ' ' | sed 's/ $//'
}

jmp_options() {
    printf 'guest_options: {"setjmp": "%s", "longjmp": "%s"},\n' "$(family "$1" setjmp)" "$(family "$1" longjmp)"
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
    build_elf "$here/lua.elf"
    rpt convert-image ppc-dol "$here/lua.elf" "$here/lua.dol"
    wine_run "$here/lua.exe" >"$here/bench.out"
    echo "recipes/real-lua-dol.ron: $(jmp_options "$here/lua.elf")"
    ;;
jmp)
    jmp_options "${2:?usage: build.sh jmp ELF}"
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
    build_elf "$tmp/lua.elf"
    cmp "$tmp/lua.elf" "$here/lua.elf"
    rpt convert-image ppc-dol "$tmp/lua.elf" "$tmp/lua.dol"
    cmp "$tmp/lua.dol" "$here/lua.dol"
    options=$(jmp_options "$here/lua.elf")
    grep -qF "$options" "$here/../../../recipes/real-lua-dol.ron" || {
        echo "recipes/real-lua-dol.ron does not say $options" >&2
        exit 1
    }
    build_oracle "$tmp/lua-native"
    run_bench "$tmp/lua-native" | sed 's/$/\r/' | cmp - "$here/bench.out"
    run_bench qemu-ppc -cpu 750cl "$here/lua.elf" | sed 's/$/\r/' | cmp - "$here/bench.out"
    wine_run "$here/lua.exe" | cmp - "$here/bench.out"
    echo "lua.exe, lua.elf and lua.dol are reproducible, the DOL's recipe names the ELF's setjmp and longjmp, and the three oracles print bench.out"
    ;;
*)
    echo "usage: build.sh [pe OUT | oracle OUT | x86-64 OUT | jmp ELF | check]" >&2
    exit 64
    ;;
esac
