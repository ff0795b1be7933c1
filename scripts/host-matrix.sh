#!/usr/bin/env bash
# Recompiles every guest sample of tests/host-matrix.ron for every host (x86-64 natively, AArch64 and
# LoongArch64 under qemu-user), compares each run with the sample's oracle, and rewrites the table in
# README.md. Extra arguments go to the driver: --hosts aarch64, --sample demo, --ci-only (these skip the
# README). CI runs only the samples marked `ci` (cargo test -p rpt-tests --test host_matrix).
# Without arguments it then runs what CI leaves out to keep within its time: the real programs'
# foreign-host runs (xz and the full C++ sample on AArch64 and LoongArch64, Lua and bzip2 on the
# host CI does not run them on: the ignored tests named aarch64 or loongarch64), every SNES sample
# against bsnes on the foreign hosts (CI runs the NMI sample there), and each pass alone on every
# sample (tests/passes.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
if [ $# -gt 0 ]; then
  exec cargo run --quiet -p rpt-tests --bin host-matrix -- "$@"
fi
cargo run --quiet -p rpt-tests --bin host-matrix -- --write-readme
cargo test -p rpt-tests --test real_lua --test real_bzip2 --test real_xz --test cxx_sample -- --ignored loongarch64 aarch64
cargo test -p rpt-tests --test snes_oracle -- --ignored
cargo test -p rpt-tests --test passes -- --ignored
