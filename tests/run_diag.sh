#!/bin/sh
# One diagnostics case: cgc must exit 1, print exactly CASE.err on stderr,
# and leave an existing output file as it was.
#   run_diag.sh CGC DIR/CASE.cgraph
# CGC_VALGRIND=1 runs cgc under valgrind, which must report nothing.
# CGC_UPDATE=1 writes CASE.err from what cgc printed (review the diff).
set -u
cgc=$1
dir=$(dirname "$2")
name=$(basename "$2" .cgraph)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf 'previous output\n' > "$tmp/out.dot"
cd "$dir" || exit 1
# Extra arguments come from a first line "// cgc-args: ...".
args=$(sed -n '1s|^// cgc-args: ||p' "$name.cgraph")
if [ "${CGC_VALGRIND:-0}" = 1 ]; then
  set -- valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all \
    --errors-for-leak-kinds=all --log-file="$tmp/valgrind.log" "$cgc"
else
  set -- "$cgc"
fi
# shellcheck disable=SC2086
NO_COLOR=1 "$@" $args --emit=dot -o "$tmp/out.dot" "$name.cgraph" > "$tmp/stdout" 2> "$tmp/stderr"
status=$?

if [ "${CGC_UPDATE:-0}" = 1 ]; then
  cp "$tmp/stderr" "$name.err"
fi
fail=0
if [ "$status" -ne 1 ]; then
  echo "FAIL: $name: exit status $status, expected 1"
  fail=1
fi
if ! diff -u "$name.err" "$tmp/stderr"; then
  echo "FAIL: $name: diagnostics differ from $name.err"
  fail=1
fi
if [ -s "$tmp/stdout" ]; then
  echo "FAIL: $name: wrote to standard output"
  fail=1
fi
if [ "$(cat "$tmp/out.dot")" != "previous output" ]; then
  echo "FAIL: $name: the output file was changed"
  fail=1
fi
if [ "$(ls "$tmp" | grep -c 'out\.dot\.tmp')" -ne 0 ]; then
  echo "FAIL: $name: a temporary output file was left behind"
  fail=1
fi
if [ -s "$tmp/valgrind.log" ]; then
  cat "$tmp/valgrind.log"
  echo "FAIL: $name: valgrind reported errors"
  fail=1
fi
# The same diagnostics in JSON: each has a stable code (E0000 is none).
# shellcheck disable=SC2086
"$@" $args --diagnostics-format=json --check "$name.cgraph" > /dev/null 2> "$tmp/json"
if ! grep -q . "$tmp/json" || grep -v '"code":"[EW][0-9][0-9][0-9][0-9]"' "$tmp/json" ||
  grep '"code":"E0000"' "$tmp/json"; then
  echo "FAIL: $name: a JSON diagnostic without its code"
  fail=1
fi
if [ -s "$tmp/valgrind.log" ]; then
  cat "$tmp/valgrind.log"
  echo "FAIL: $name: valgrind reported errors in the JSON run"
  fail=1
fi
[ "$fail" = 0 ] && echo "PASS: $name"
exit "$fail"
