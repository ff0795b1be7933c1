#!/usr/bin/env bash
# Prints the sha256 of every file rpt generates for every recipe (recipes/*.ron and bench/*/*.ron)
# in four configurations: x86-64 without passes, x86-64 with every pass, aarch64 and loongarch64.
# A refactoring that must not change output compares this list before and after:
#   scripts/generated-digests.sh target/debug/rpt > before.txt   (on the old commit)
#   scripts/generated-digests.sh target/debug/rpt > after.txt    (on the new one)
#   diff before.txt after.txt
# Objects are cached in $RPT_CACHE_DIR (default: a directory of this script's own in /tmp), so a
# second run mostly links.
set -uo pipefail
rpt=$(realpath "${1:?usage: scripts/generated-digests.sh RPT_BINARY}")
cd "$(dirname "$0")/.."
export RPT_CACHE_DIR=${RPT_CACHE_DIR:-/tmp/rpt-generated-digests-cache}
for recipe in recipes/*.ron bench/*/*.ron; do
  for config in "x86-64:" "x86-64:flag-abi,x87-regions,memarg" "aarch64:" "loongarch64:"; do
    host=${config%%:*}
    passes=${config#*:}
    gen=$(mktemp -d)
    args=(recompile "$recipe" --host "$host" --gen-dir "$gen" --progress never)
    [ -n "$passes" ] && args+=(--passes "$passes")
    if "$rpt" "${args[@]}" > "$gen/log" 2>&1; then
      (cd "$gen"/*/*/src && find . -type f | LC_ALL=C sort | xargs sha256sum) | sed "s|^|$recipe $config |"
    else
      echo "FAILED $recipe $config"
      tail -3 "$gen/log"
    fi
    rm -rf "$gen"
  done
done
