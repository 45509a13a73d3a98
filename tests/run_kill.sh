#!/bin/sh
# An interrupted cgc never leaves a truncated output: killed (SIGKILL) at
# many points while it writes a large graph's C, the .c and .h are each
# either the previous files or the complete new ones.
#   run_kill.sh CGC SOURCE_DIR
set -u
. "$(dirname "$0")/check.sh"
cgc=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/bench/gen_graph.py" --nodes 100000 > "$tmp/big.cgraph" || exit 1
"$cgc" -o "$tmp/want_graph.c" "$tmp/big.cgraph" || exit 1
sed 's/want_graph/big_graph/g' "$tmp/want_graph.c" > "$tmp/want.c"
sed 's/WANT_GRAPH/BIG_GRAPH/g' "$tmp/want_graph.h" > "$tmp/want.h"
start=$(date +%s%N)
"$cgc" -o "$tmp/time_graph.c" "$tmp/big.cgraph"
took=$(( ($(date +%s%N) - start) / 1000000 )) # ms for a whole run
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  printf 'previous\n' > "$tmp/big_graph.c"
  printf 'previous\n' > "$tmp/big_graph.h"
  "$cgc" -o "$tmp/big_graph.c" "$tmp/big.cgraph" &
  pid=$!
  sleep "$(awk -v t="$took" -v i="$i" 'BEGIN { printf "%.3f", t * i / 12 / 1000 }')"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  for ext in c h; do
    f=$tmp/big_graph.$ext
    check "kill $i: $ext is the old file or the whole new one" \
      sh -c '[ "$(cat "$0")" = previous ] || cmp -s "$0" "$1"' "$f" "$tmp/want.$ext"
  done
done
finish
