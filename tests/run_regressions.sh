#!/bin/sh
# Inputs the fuzzer once broke cgc with (tests/fuzz/): each must now end in
# diagnostics or output, never a crash or a sanitizer report, through the
# compiler and through cgc fmt.
#   run_regressions.sh CGC DIR
set -u
. "$(dirname "$0")/check.sh"
cgc=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg"
cgc=$(under_valgrind "$cgc" "$tmp/vg")
for f in "$dir"/*.cgraph; do
  name=$(basename "$f")
  "$cgc" -o "$tmp/out.c" "$f" > /dev/null 2> "$tmp/err"
  status=$?
  check "$name: cgc ends with a status, not a signal ($status)" [ "$status" -le 2 ]
  check "$name: no sanitizer report" sh -c '! grep -q Sanitizer "$0"' "$tmp/err"
  cp "$f" "$tmp/fmt.cgraph"
  "$cgc" fmt "$tmp/fmt.cgraph" > /dev/null 2> "$tmp/err"
  status=$?
  check "$name: cgc fmt ends with a status, not a signal ($status)" [ "$status" -le 2 ]
  check "$name: no sanitizer report from fmt" sh -c '! grep -q Sanitizer "$0"' "$tmp/err"
done
valgrind_clean "$tmp/vg"
finish
