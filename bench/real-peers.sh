#!/bin/sh
# The native peers of the real programs (tests/real/PROGRAM), in the form bench/suite.ron's
# build scripts take: `real-peers.sh KIND PROGRAM OUT`, KIND i386 (the program's own oracle build,
# gcc -m32 -O2 -static) or x86-64 (clang-19 -O2 -static). Each program's build.sh fetches its Debian
# source (deb-src enabled) or takes it from its *_SRC variable; see tests/real/README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kind=${1:?usage: real-peers.sh i386|x86-64 PROGRAM OUT}
program=${2:?usage: real-peers.sh KIND PROGRAM OUT}
out=${3:?usage: real-peers.sh KIND PROGRAM OUT}
script="$here/../tests/real/$program/build.sh"
[ -x "$script" ] || { echo "real-peers.sh: no real program '$program' ($script)" >&2; exit 64; }
case "$kind" in
i386) exec "$script" oracle "$out" ;;
x86-64) exec "$script" x86-64 "$out" ;;
*) echo "real-peers.sh: unknown kind '$kind' (i386, x86-64)" >&2; exit 64 ;;
esac
