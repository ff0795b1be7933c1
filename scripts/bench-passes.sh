#!/usr/bin/env bash
# The pass benchmark: every x86 sample recompiled for x86-64 in each pass configuration, its executed
# host instructions counted with callgrind, and the table written to docs/benchmarks/passes.md.
#
#   scripts/bench-passes.sh            all samples, all configurations
#
# Each configuration is a `--passes` list. Instruction counts come from callgrind on a copy of the
# binary with its debug info stripped (valgrind 3.19 cannot read clang-19's DWARF 5); callgrind
# counts are repeatable, so one run per cell is enough. Every run's output must equal the
# baseline's, or the script stops: a wrong result is never measured.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test

configs=("" "flag-abi" "x87-regions" "memarg" "flag-abi,x87-regions,memarg")
names=("baseline" "+flag-abi" "+x87-regions" "+memarg" "all")
# recipe | arguments (space-separated) | stdin file ("" for none)
samples=(
  "recipes/demo-x86.ron||"
  "recipes/msvcrt-int-work.ron|one two|"
  "recipes/msvcrt-qsort-mingw.ron||"
  "recipes/msvcrt-printf-float.ron||"
  "recipes/sse-float.ron||"
  "recipes/x87-mandel.ron||"
  "recipes/x87-physics.ron||"
  "recipes/x87-ray53.ron||"
  "recipes/x87-mandel-f64.ron||"
  "recipes/x87-ray53-f64.ron||"
  "recipes/bench-vm-x86.ron|6|"
  "recipes/bench-lz-x86.ron|20|"
  "recipes/bench-physics-x86.ron|30|"
)

# The generated code does not depend on how rpt itself was compiled, so the debug build will do;
# RPT names another rpt binary.
if [ -z "${RPT:-}" ]; then
  cargo build -q -p rpt-cli
fi
rpt=${RPT:-target/debug/rpt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=docs/benchmarks/passes.md
mkdir -p docs/benchmarks

{
  echo "# Passes: executed instructions per configuration"
  echo
  echo "Made by \`scripts/bench-passes.sh\` (x86 samples, x86-64 host, callgrind; the same inputs give the same"
  echo "counts). Each cell: instructions executed by the whole recompiled program (runtime and platform"
  echo "included), its ratio to the baseline, and the text size of the binary. Every configuration's output"
  echo "was checked equal to the baseline's before counting."
  echo
  echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(clang-19 --version | head -1); $(valgrind --version)."
  echo
  header="| sample |"
  rule="|---|"
  for n in "${names[@]}"; do header="$header $n |"; rule="$rule---:|"; done
  echo "$header"
  echo "$rule"
} > "$work/table.md"

for entry in "${samples[@]}"; do
  IFS='|' read -r recipe args stdin <<< "$entry"
  name=$(basename "$recipe" .ron)
  row="| $name |"
  base=""
  base_out=""
  for i in "${!configs[@]}"; do
    cfg=${configs[$i]}
    gen=$("$rpt" recompile "$recipe" --passes "$cfg" --progress never 2>&1 | sed -n 's/^  generation: //p')
    bin=$(find "$gen/bin" -type f | head -1)
    cp "$bin" "$work/bin"
    strip --strip-debug "$work/bin"
    # shellcheck disable=SC2086
    (cd "$work" && RPT_SANDBOX="$work" valgrind --tool=callgrind --callgrind-out-file=/dev/null ./bin $args \
      < "${stdin:-/dev/null}" > "$work/out.$i" 2> "$work/vg.$i") || true
    if [ -z "$base_out" ]; then
      base_out="$work/out.$i"
    elif ! cmp -s "$base_out" "$work/out.$i"; then
      echo "rpt: $name with --passes '$cfg' prints something else than the baseline" >&2
      exit 1
    fi
    count=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/vg.$i")
    text=$(size "$work/bin" | awk 'NR==2 {print $1}')
    if [ -z "$base" ]; then
      base=$count
      row="$row $(printf "%'d" "$count") (text $text) |"
    else
      ratio=$(awk -v a="$count" -v b="$base" 'BEGIN { printf "%.3f", a / b }')
      row="$row $(printf "%'d" "$count") ($ratio; text $text) |"
    fi
  done
  echo "$row" >> "$work/table.md"
  echo "$row" >&2
done

cp "$work/table.md" "$out"
echo "rpt: wrote $out" >&2
