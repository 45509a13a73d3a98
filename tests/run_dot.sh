#!/bin/sh
# One golden DOT case: cgc --emit=dot must succeed silently and print
# exactly CASE.dot, the same bytes on every run and through -o.
#   run_dot.sh CGC DIR/CASE.cgraph
# CGC_VALGRIND=1 and CGC_UPDATE=1 as in run_diag.sh.
set -u
cgc=$1
dir=$(dirname "$2")
name=$(basename "$2" .cgraph)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$dir" || exit 1
# Extra arguments come from a first line "// cgc-args: ...".
args=$(sed -n '1s|^// cgc-args: ||p' "$name.cgraph")
if [ "${CGC_VALGRIND:-0}" = 1 ]; then
  set -- valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all \
    --errors-for-leak-kinds=all --log-file="$tmp/valgrind.log" "$cgc"
else
  set -- "$cgc"
fi
fail=0
"$@" $args --emit=dot "$name.cgraph" > "$tmp/first" 2> "$tmp/stderr" || fail=1
"$@" $args --emit=dot -o "$tmp/second" "$name.cgraph" 2>> "$tmp/stderr" || fail=1
"$@" $args --check "$name.cgraph" > "$tmp/check" 2>> "$tmp/stderr" || fail=1
[ "$fail" = 0 ] || echo "FAIL: $name: cgc failed"
if [ "${CGC_UPDATE:-0}" = 1 ]; then
  cp "$tmp/first" "$name.dot"
fi
if [ -s "$tmp/stderr" ] || [ -s "$tmp/check" ]; then
  cat "$tmp/stderr"
  echo "FAIL: $name: cgc printed something besides the DOT"
  fail=1
fi
if ! diff -u "$name.dot" "$tmp/first"; then
  echo "FAIL: $name: output differs from $name.dot"
  fail=1
fi
if ! cmp -s "$tmp/first" "$tmp/second"; then
  echo "FAIL: $name: two runs gave different bytes"
  fail=1
fi
[ "$fail" = 0 ] && echo "PASS: $name"
exit "$fail"
