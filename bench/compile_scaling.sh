#!/bin/sh
# Times `cgc --check` (parse, checks, ordering) on generated graphs of 10k,
# 100k and 1M nodes, median of 3 runs: wall-clock, user and system time and
# the peak resident memory, with the ratios of wall-clock and of user time
# to the size before (linear scaling gives about 10).  System time is mostly
# the kernel zeroing fresh pages, which grows with the footprint.
#   bench/compile_scaling.sh [--csv] [CGC]     (default: build/compiler/cgc)
# --csv prints shape,nodes,wall_s,user_s,sys_s,peak_mib lines (bench/run.py).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
csv=0
if [ "${1:-}" = --csv ]; then
  csv=1
  shift
fi
cgc=${1:-$here/../build/compiler/cgc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b }'; }

[ "$csv" = 1 ] ||
  printf '%-20s %8s %7s %7s %7s %9s %7s %7s\n' graph nodes wall user sys "peak MiB" "wall x" "user x"
for shape in "chains" "layered" "layered --explicit" "router" "router --explicit"; do
  prev_wall= prev_user=
  for n in 10000 100000 1000000; do
    # shellcheck disable=SC2086
    python3 "$here/gen_graph.py" --nodes "$n" --shape $shape > "$tmp/g.cgraph"
    : > "$tmp/runs"
    for run in 1 2 3; do
      /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$cgc" --check "$tmp/g.cgraph" 2> /dev/null
      cat "$tmp/t" >> "$tmp/runs"
    done
    wall=$(cut -d' ' -f1 "$tmp/runs" | median)
    user=$(cut -d' ' -f2 "$tmp/runs" | median)
    sys=$(cut -d' ' -f3 "$tmp/runs" | median)
    mib=$(cut -d' ' -f4 "$tmp/runs" | median | awk '{ printf "%.0f", $1 / 1024 }')
    if [ "$csv" = 1 ]; then
      printf '%s,%d,%s,%s,%s,%s\n' "$(echo "$shape" | tr ' ' '_')" "$n" "$wall" "$user" "$sys" "$mib"
      continue
    fi
    rw= ru=
    if [ -n "$prev_wall" ]; then
      rw=$(ratio "$wall" "$prev_wall")
      ru=$(ratio "$user" "$prev_user")
    fi
    printf '%-20s %8d %7s %7s %7s %9s %7s %7s\n' "$shape" "$n" "$wall" "$user" "$sys" "$mib" "$rw" "$ru"
    prev_wall=$wall prev_user=$user
  done
done
