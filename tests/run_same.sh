#!/bin/sh
# Two programs written differently that are one program (`else if` and
# `else { if ... }`): cgc gives both the same DOT, C and header, but for
# the source positions the C keeps of each node (.line and .col).
#   run_same.sh CGC A.cgraph B.cgraph
set -u
. "$(dirname "$0")/check.sh"
cgc=$1 a=$2 b=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg" "$tmp/a" "$tmp/b"
cgc=$(under_valgrind "$cgc" "$tmp/vg")
# Under one name, so that the outputs name the same source and header.
cp "$a" "$tmp/a/same.cgraph"
cp "$b" "$tmp/b/same.cgraph"
for side in a b; do
  (cd "$tmp/$side" && "$cgc" --emit=dot -o same.dot same.cgraph && "$cgc" -o same_graph.c same.cgraph)
  check "$side: cgc accepts it" [ $? = 0 ]
  for f in same_graph.c same_graph.h; do
    sed 's/\.line = [0-9]*, \.col = [0-9]*/.line = L, .col = C/g' "$tmp/$side/$f" > "$tmp/$side/$f.nopos"
  done
done
what="$(basename "$a") and $(basename "$b")"
check "$what: the same DOT" diff -u "$tmp/a/same.dot" "$tmp/b/same.dot"
check "$what: the same C but for positions" diff -u "$tmp/a/same_graph.c.nopos" "$tmp/b/same_graph.c.nopos"
check "$what: the same header" diff -u "$tmp/a/same_graph.h.nopos" "$tmp/b/same_graph.h.nopos"
valgrind_clean "$tmp/vg"
finish
