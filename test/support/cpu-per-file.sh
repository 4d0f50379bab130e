#!/bin/sh
# CPU-seconds of each test file run alone, as `npm test` runs it (docs/testing.md, "CPU: what the suite costs"):
# user+sys of `node --test <file>` and everything it waited for, two files at a time, niced; sorted, the most
# expensive first. Usage: sh test/support/cpu-per-file.sh [output file] (default: cpu-per-file.txt).
set -eu
out=$(realpath "${1:-cpu-per-file.txt}")
dir=$(mktemp -d)
: > "$out.unsorted"
find test -name '*.test.ts' | sort | OUT="$out.unsorted" DIR="$dir" xargs -P 2 -I{} sh -c '
  t="$DIR/$(echo "$1" | tr / _)"
  nice -n 15 /usr/bin/time -f "%U %S %e" -o "$t" node --test --test-reporter=dot --test-concurrency=2 \
    --test-timeout=180000 --import ./test/support/test-guard.ts "$1" > "$t.out" 2>&1 && rc=0 || rc=$?
  echo "$(tail -1 "$t") $rc $1" >> "$OUT"
' sh {}
# CPU-s  user  sys  wall-s  exit-code  file
awk '{ printf "%6.1f %6.1f %6.1f %6.0f %s %s\n", $1 + $2, $1, $2, $3, $4, $5 }' "$out.unsorted" | sort -rn > "$out"
rm -rf "$dir" "$out.unsorted"
awk '{ s += $1 } END { printf "%d files, %.1f CPU-s in all\n", NR, s }' "$out"
