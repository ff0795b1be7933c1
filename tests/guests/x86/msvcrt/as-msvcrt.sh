#!/bin/sh
# Runs a native oracle (a program built by ./build.sh oracle or ../../bench/build.sh i386) and prints its
# standard output as the msvcrt PE prints the same lines, keeping the program's exit status:
#
#   ./as-msvcrt.sh same PROGRAM [ARGS...]       byte for byte as the program printed it
#   ./as-msvcrt.sh crlf PROGRAM [ARGS...]       msvcrt keeps stdout in text mode, where each "\n" is "\r\n"
#   ./as-msvcrt.sh exponents PROGRAM [ARGS...]  msvcrt prints at least three exponent digits ("1e+005"),
#                                               glibc two ("1e+05")
#
# Standard input and the environment go to PROGRAM, which runs in its own directory (so files it
# writes stay in the oracle's scratch directory). tests/host-matrix.ron uses this; tests/msvcrt_samples.rs
# makes the same two changes in Rust.
set -eu
mode=${1:?usage: as-msvcrt.sh same|crlf|exponents PROGRAM [ARGS...]}
shift
program=${1:?usage: as-msvcrt.sh same|crlf|exponents PROGRAM [ARGS...]}
shift
case "$program" in
/*) ;;
*) program="$(pwd)/$program" ;;
esac
cd "$(dirname "$program")"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$program" "$@" >"$out" || status=$?
case "$mode" in
same) cat "$out" ;;
crlf) sed 's/$/\r/' "$out" ;;
# An "e" or "E" after a digit or a point, a sign and exactly two digits (as widen_exponents does).
exponents) sed 's/\([0-9.][eE][-+]\)\([0-9][0-9]\)\([^0-9]\|$\)/\10\2\3/g' "$out" ;;
*)
    echo "as-msvcrt.sh: unknown mode '$mode' (same, crlf, exponents)" >&2
    exit 64
    ;;
esac
exit "$status"
