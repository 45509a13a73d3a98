#!/bin/sh
# One golden C case: cgc must turn DIR/CASE.cgraph into exactly
# GOLDEN/CASE_graph.c and GOLDEN/CASE_graph.h, and, when its graphs use
# template kernels, the companion GOLDEN/CASE_graph_templates.cu (and
# write none otherwise), so that a change to the emitter shows in review
# as a diff of these files.
#   run_golden.sh CGC DIR/CASE.cgraph GOLDEN
# CGC_UPDATE=1 rewrites the golden files from what cgc wrote (review the
# diff); `CGC_UPDATE=1 ctest -L golden` updates them all.
set -u
cgc=$1
dir=$(dirname "$2")
name=$(basename "$2" .cgraph)
golden=$(cd "$3" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$dir" || exit 1
args=$(sed -n '1s|^// cgc-args: ||p' "$name.cgraph")
if ! "$cgc" $args -o "$tmp/${name}_graph.c" "$name.cgraph" 2> "$tmp/stderr"; then
  cat "$tmp/stderr"
  echo "FAIL: $name: cgc failed"
  exit 1
fi
cu=${name}_graph_templates.cu
if [ "${CGC_UPDATE:-0}" = 1 ]; then
  cp "$tmp/${name}_graph.c" "$tmp/${name}_graph.h" "$golden/"
  rm -f "$golden/$cu"
  [ -f "$tmp/$cu" ] && cp "$tmp/$cu" "$golden/"
fi
fail=0
files="${name}_graph.c ${name}_graph.h"
if [ -f "$golden/$cu" ] || [ -f "$tmp/$cu" ]; then
  files="$files $cu"
fi
for f in $files; do
  if ! diff -u "$golden/$f" "$tmp/$f"; then
    echo "FAIL: $name: $f differs from the golden file (CGC_UPDATE=1 to accept)"
    fail=1
  fi
done
[ "$fail" = 0 ] && echo "PASS: $name"
exit "$fail"
