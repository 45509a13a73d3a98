#!/bin/sh
# Times cgc's C output for generated graphs of 1k, 10k and 100k nodes:
# cgc itself, and `gcc -O2 -c` on the C it writes (median of 3 runs).
#   bench/emit_compile_time.sh [CGC] [CUDA_INCLUDE_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cgc=${1:-$here/../build/compiler/cgc}
cuda=${2:-/usr/local/cuda/include}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%8s %10s %12s %10s %12s\n' nodes "C KiB" "cgc s" "gcc -O2 s" "gcc peak MiB"
for n in 1000 10000 100000; do
  python3 "$here/gen_graph.py" --nodes "$n" > "$tmp/g.cgraph"
  : > "$tmp/cgc" && : > "$tmp/gcc"
  for run in 1 2 3; do
    /usr/bin/time -f '%e' -o "$tmp/t" "$cgc" -o "$tmp/g_graph.c" "$tmp/g.cgraph"
    cat "$tmp/t" >> "$tmp/cgc"
    /usr/bin/time -f '%e %M' -o "$tmp/t" gcc -O2 -std=c11 -I "$here/../runtime" -I "$cuda" \
      -c "$tmp/g_graph.c" -o "$tmp/g.o"
    cat "$tmp/t" >> "$tmp/gcc"
  done
  kib=$(( $(wc -c < "$tmp/g_graph.c") / 1024 ))
  printf '%8d %10d %12s %10s %12s\n' "$n" "$kib" "$(median < "$tmp/cgc")" \
    "$(cut -d' ' -f1 "$tmp/gcc" | median)" \
    "$(cut -d' ' -f2 "$tmp/gcc" | median | awk '{ printf "%.0f", $1 / 1024 }')"
done
