#!/bin/sh
# The tree-sitter grammar (editors/tree-sitter-cgraph), with its committed
# parser (src/parser.c) built here against libtree-sitter: the trees of its
# corpus (test/corpus, as `tree-sitter test` reads it) are the trees it
# gives; it parses every valid program of the project without an ERROR or
# MISSING node; and its highlight query captures each token as what it is
# (ts_check.c).  The valid programs are the .cgraph files of the
# repository and the ```cgraph examples of the documentation that
# `cgc --check` accepts.  Then the checker itself must fail on programs
# with syntax errors.
#   run_tree_sitter.sh SOURCE_DIR CGC WORK_DIR [CC]
set -u
src=$1 cgc=$2 work=$3 cc=${4:-${CC:-cc}}
ts=$src/editors/tree-sitter-cgraph
mkdir -p "$work"
rm -rf "$work/docs" && mkdir -p "$work/docs"

if ! command -v "$cc" > /dev/null; then
  echo "no C compiler ($cc) here: the tree-sitter grammar is not checked"
  exit 77
fi
printf '#include <tree_sitter/api.h>\nint main(void) { return ts_parser_new() == 0; }\n' \
  > "$work/probe.c"
if ! "$cc" "$work/probe.c" -ltree-sitter -o "$work/probe" > /dev/null 2>&1; then
  echo "no libtree-sitter here (Debian package libtree-sitter-dev; scripts/deps.sh test" \
    "installs it): the tree-sitter grammar is not checked"
  exit 77
fi
for f in grammar.js src/parser.c src/tree_sitter/parser.h src/node-types.json \
  queries/highlights.scm queries/locals.scm queries/folds.scm queries/helix/highlights.scm \
  test/corpus/cgraph.txt package.json tree-sitter.json; do
  [ -f "$ts/$f" ] || { echo "FAIL: editors/tree-sitter-cgraph/$f is missing"; exit 1; }
done
"$cc" -std=c11 -O1 -I"$ts/src" -c "$ts/src/parser.c" -o "$work/parser.o" &&
  "$cc" -std=c11 -O1 -Wall -Wextra -Werror -I"$src/compiler" -c "$src/tests/editors/ts_check.c" \
    -o "$work/ts_check.o" &&
  "$cc" "$work/ts_check.o" "$work/parser.o" -ltree-sitter -o "$work/ts_check" || {
  echo "FAIL: the parser or its checker does not build"
  exit 1
}

# The repository's .cgraph files: git's list where there is one.
if git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  all=$(cd "$src" && git ls-files '*.cgraph' | sed "s|^|$src/|")
else
  all=$(find "$src" -name '*.cgraph' -not -path '*/node_modules/*' -not -path "$work/*")
fi
# The documentation's ```cgraph examples, one file each.
for md in "$src"/README.md "$src"/doc/*.md; do
  awk -v dir="$work/docs" -v name="$(basename "$md" .md)" '
    !inside && /^ ? ? ?```/ {
      info = $0; sub(/^ *```/, "", info); sub(/[ \t]+$/, "", info)
      inside = 1; out = ""
      if (info == "cgraph") { b++; out = dir "/" name "_" NR ".cgraph"; printf "" > out }
      next
    }
    inside && /^ ? ? ?```[ \t]*$/ { inside = 0; if (out != "") close(out); next }
    inside && out != "" { print >> out }' "$md"
done
all="$all $(ls "$work"/docs/*.cgraph 2> /dev/null)"

valid= nvalid=0 refused=0 nul=0
for f in $all; do
  if ! "$cgc" -I "$src/doc/examples" --check "$f" > /dev/null 2>&1; then
    refused=$((refused + 1))
    continue
  fi
  # tree-sitter takes a NUL byte for the end of the text, as editors do.
  if ! tr -d '\000' < "$f" | cmp -s - "$f"; then
    nul=$((nul + 1))
    echo "not parsed (a NUL byte, which tree-sitter takes for the end): $f"
    continue
  fi
  valid="$valid $f"
  nvalid=$((nvalid + 1))
done
echo "$nvalid valid programs to parse ($refused refused by cgc --check, $nul with a NUL byte)"
status=0
if [ "$nvalid" -lt 50 ]; then
  echo "FAIL: fewer valid programs than expected: is cgc ($cgc) working?"
  status=1
fi
# shellcheck disable=SC2086
"$work/ts_check" -c "$ts/test/corpus/cgraph.txt" -q "$ts/queries/locals.scm" -q "$ts/queries/folds.scm" \
  -q "$ts/queries/helix/highlights.scm" "$ts/queries/highlights.scm" $valid || status=1
# Helix's copy of the highlights is made from them.
if ! sed -f "$ts/queries/helix/names.sed" "$ts/queries/highlights.scm" |
  cmp -s - "$ts/queries/helix/highlights.scm"; then
  echo "FAIL: queries/helix/highlights.scm is not made from queries/highlights.scm:" \
    "run sed -f names.sed ../highlights.scm > highlights.scm in queries/helix"
  status=1
fi

# The checker must see what is wrong.
printf 'const N = 4 @ 5;\n' > "$work/bad1.cgraph"
printf 'kernel k(x: i32;\ngraph g { node a = k(1) }\n' > "$work/bad2.cgraph"
for f in "$work/bad1.cgraph" "$work/bad2.cgraph"; do
  if "$work/ts_check" "$ts/queries/highlights.scm" "$f" > "$work/bad.out" 2>&1 ||
    ! grep -q 'ERROR\|MISSING' "$work/bad.out"; then
    cat "$work/bad.out"
    echo "FAIL: a syntax error in $f went unseen"
    status=1
  fi
done
[ "$status" = 0 ] && echo "tree-sitter: every valid program parses, and is highlighted"
exit "$status"
