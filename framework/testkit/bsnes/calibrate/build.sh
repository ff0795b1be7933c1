#!/bin/sh
# Builds the calibration ROM with cc65's ca65 and ld65 (Debian package cc65) and sets its header
# checksum: `build.sh [out.sfc]`, by default calibrate.sfc beside this script, which is committed
# so that tests need no assembler. framework/testkit/tests/bsnes.rs rebuilds it when cc65 is
# there and checks that the committed ROM is what this source gives.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/calibrate.sfc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ca65 --cpu 65816 -o "$work/calibrate.o" "$here/calibrate.s"
ld65 -C "$here/calibrate.cfg" -o "$work/calibrate.sfc" "$work/calibrate.o"

# The checksum is the 16-bit sum of every byte of the image. The complement at $7FDC and the
# checksum at $7FDE always add up to $FF + $FF, so the sum taken with the placeholders ld65 wrote
# ($FFFF and $0000) is already the final one.
python3 - "$work/calibrate.sfc" <<'EOF'
import sys

path = sys.argv[1]
rom = bytearray(open(path, "rb").read())
assert len(rom) == 0x8000, len(rom)
checksum = sum(rom) & 0xFFFF
rom[0x7FDC:0x7FE0] = (checksum ^ 0xFFFF).to_bytes(2, "little") + checksum.to_bytes(2, "little")
open(path, "wb").write(rom)
EOF

cp "$work/calibrate.sfc" "$out"
