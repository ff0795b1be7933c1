#!/usr/bin/env bash
# Recompiles every guest sample of tests/host-matrix.ron for every host (x86-64 natively, AArch64 and
# LoongArch64 under qemu-user), compares each run with the sample's oracle, and rewrites the table in
# README.md. Extra arguments go to the driver: --hosts aarch64, --sample demo, --ci-only (these skip the
# README). CI runs only the samples marked `ci` (cargo test -p rpt-tests --test host_matrix).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
if [ $# -eq 0 ]; then
  set -- --write-readme
fi
exec cargo run --quiet -p rpt-tests --bin host-matrix -- "$@"
