#!/bin/sh
# Times `cgc --check` (parse, checks, ordering) on generated graphs of 100k
# and 1M nodes and prints the time ratio: linear scaling gives about 10.
#   bench/compile_scaling.sh [CGC]     (default: build/compiler/cgc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cgc=${1:-$here/../build/compiler/cgc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-28s %9s %9s %10s %8s\n' shape nodes seconds "peak MiB" "ratio"
for shape in "layered" "layered --explicit" "router" "router --explicit"; do
  prev=
  for n in 100000 1000000; do
    # shellcheck disable=SC2086
    python3 "$here/gen_graph.py" --nodes "$n" --shape $shape > "$tmp/g.cgraph"
    : > "$tmp/times"
    for run in 1 2 3; do
      /usr/bin/time -f '%e %M' -o "$tmp/t" "$cgc" --check "$tmp/g.cgraph"
      cat "$tmp/t" >> "$tmp/times"
    done
    secs=$(cut -d' ' -f1 "$tmp/times" | median)
    mib=$(cut -d' ' -f2 "$tmp/times" | median | awk '{ printf "%.0f", $1 / 1024 }')
    ratio=
    [ -n "$prev" ] && ratio=$(awk -v a="$secs" -v b="$prev" 'BEGIN { printf "%.1f", a / b }')
    printf '%-28s %9d %9s %10s %8s\n' "$shape" "$n" "$secs" "$mib" "$ratio"
    prev=$secs
  done
done
