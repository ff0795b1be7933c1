#!/usr/bin/env bash
# Recompiles the bundled demo (an x86 PE) for this x86-64 machine and runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh demo
cargo run --release --quiet -p rpt-cli -- run recipes/demo-x86.ron
