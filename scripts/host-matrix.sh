#!/usr/bin/env bash
# Recompiles every guest sample of tests/host-matrix.ron for every host (x86-64 natively, AArch64 and
# LoongArch64 under qemu-user), compares each run with the sample's oracle, and rewrites the table in
# README.md. Extra arguments go to the driver: --hosts aarch64, --sample demo, --ci-only (these skip the
# README). CI runs only the samples marked `ci` (cargo test -p rpt-tests --test host_matrix).
# Without arguments it then runs the real programs' long LoongArch64 runs, which CI leaves out
# (Lua's whole bench and bzip2's DOL under qemu-loongarch64: the ignored tests named loongarch64).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
if [ $# -gt 0 ]; then
  exec cargo run --quiet -p rpt-tests --bin host-matrix -- "$@"
fi
cargo run --quiet -p rpt-tests --bin host-matrix -- --write-readme
cargo test -p rpt-tests --test real_lua --test real_bzip2 -- --ignored loongarch64
