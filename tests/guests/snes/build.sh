#!/usr/bin/env bash
# Builds the SNES test ROMs with cc65's ca65 and ld65 (Debian package cc65; its C compiler only
# emits 6502 code, so the programs are 65816 assembly): each NAME.s becomes NAME.sfc, a 128 KiB
# LoROM image laid out by lorom128.cfg, whose internal header checksum this script then sets.
# The committed ROMs are what this gives, so tests need no assembler.
#
#   ./build.sh                 builds every NAME.sfc next to this script (committed)
#   ./build.sh rom NAME OUT    builds NAME.sfc at OUT
#   ./build.sh check           rebuilds into a temporary directory and fails unless the results
#                              are byte-identical to the committed ROMs
#
# CA65 and LD65 override the tools (default: ca65 and ld65 on PATH).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CA65=${CA65:-ca65}
LD65=${LD65:-ld65}
PROGRAMS="cputest nmi"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The header checksum is the 16-bit sum of every byte of the image, and its complement is
# checksum ^ $FFFF. The two fields always add $FF + $FF to the sum, whatever they hold, so the sum
# taken with ld65's placeholders (complement $FFFF, checksum $0000) is already the final one.
fix_checksum() {
    python3 - "$1" <<'EOF'
import sys

path = sys.argv[1]
rom = bytearray(open(path, "rb").read())
assert len(rom) == 0x20000, f"{path}: {len(rom)} bytes, expected 128 KiB"
assert rom[0x7FDC:0x7FE0] == b"\xff\xff\x00\x00", f"{path}: checksum placeholders missing"
checksum = sum(rom) & 0xFFFF
rom[0x7FDC:0x7FE0] = (checksum ^ 0xFFFF).to_bytes(2, "little") + checksum.to_bytes(2, "little")
open(path, "wb").write(rom)
EOF
}

build_rom() {
    local name=$1 out=$2
    "$CA65" --cpu 65816 -I "$here" -o "$work/$name.o" "$here/$name.s"
    "$LD65" -C "$here/lorom128.cfg" -o "$work/$name.sfc" "$work/$name.o"
    fix_checksum "$work/$name.sfc"
    cp "$work/$name.sfc" "$out"
}

case "${1:-}" in
"")
    for p in $PROGRAMS; do
        build_rom "$p" "$here/$p.sfc"
    done
    ;;
rom)
    build_rom "${2:?usage: build.sh rom NAME OUT}" "${3:?usage: build.sh rom NAME OUT}"
    ;;
check)
    mkdir "$work/check"
    for p in $PROGRAMS; do
        build_rom "$p" "$work/check/$p.sfc"
        cmp "$work/check/$p.sfc" "$here/$p.sfc"
    done
    echo "the committed ROMs are reproducible"
    ;;
*)
    echo "usage: build.sh [rom NAME OUT | check]" >&2
    exit 2
    ;;
esac
