#!/bin/sh
# The examples of the documentation.  In each Markdown file, every block
# fenced as ```cgraph is a whole program that `cgc --check` accepts without
# a warning, and
# every ```cgraph-error block a program it refuses with exit status 1 and,
# for each `// error: MESSAGE` line in the block, a diagnostic containing
# MESSAGE.  ```cgraph-fragment blocks (parts of programs) are not checked.
# In a file given after --labelled, every fenced block must carry an info
# string, so that no example goes unchecked by mistake.  -I DIR gives cgc
# a directory where the modules and template headers the examples name
# are (doc/examples).
#   run_doc_examples.sh CGC [-I DIR] [--labelled] FILE.md... [--labelled FILE.md...]
set -u
. "$(dirname "$0")/check.sh"
cgc=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg"
cgc=$(under_valgrind "$cgc" "$tmp/vg")

labelled=0
n=0
incs=
next_is_dir=0
for md in "$@"; do
  if [ "$next_is_dir" = 1 ]; then
    incs="$incs -I $md"
    next_is_dir=0
    continue
  fi
  if [ "$md" = -I ]; then
    next_is_dir=1
    continue
  fi
  if [ "$md" = --labelled ]; then
    labelled=1
    continue
  fi
  if [ ! -f "$md" ]; then
    check "$md exists" false
    continue
  fi
  # Splits the file into $tmp/B.cgraph files, one per checked block, and
  # lists each as "B KIND LINE" in $tmp/blocks; reports fence problems.
  rm -f "$tmp/blocks" "$tmp/fences"
  awk -v dir="$tmp" -v start="$n" -v labelled="$labelled" '
    BEGIN { b = start; inside = 0 }
    {
      # A fence may be indented by up to three spaces (CommonMark).
      if (!inside && /^ ? ? ?```/) {
        info = $0
        sub(/^ *```/, "", info)
        sub(/[ \t]+$/, "", info)
        inside = 1
        opened = NR
        if (info == "" && labelled)
          print NR ": a fenced block without an info string" >> (dir "/fences")
        if (info == "cgraph" || info == "cgraph-error") {
          b++
          out = dir "/" b ".cgraph"
          printf "" > out
          print b, info, NR >> (dir "/blocks")
        } else {
          out = ""
        }
        next
      }
      if (inside && /^ ? ? ?```[ \t]*$/) {
        inside = 0
        if (out != "")
          close(out)
        next
      }
      if (inside && out != "")
        print >> out
    }
    END {
      if (inside)
        print opened ": a fenced block that is never closed" >> (dir "/fences")
    }' "$md"
  if [ -s "$tmp/fences" ]; then
    while read -r line; do
      check "$md:$line" false
    done < "$tmp/fences"
  fi
  count=0
  if [ -s "$tmp/blocks" ]; then
    while read -r b kind line; do
      count=$((count + 1))
      n=$b
      # shellcheck disable=SC2086
      NO_COLOR=1 "$cgc" $incs --check "$tmp/$b.cgraph" > "$tmp/out" 2> "$tmp/err"
      status=$?
      before=$fails
      if [ "$kind" = cgraph ]; then
        check "$md:$line: the example compiles" [ "$status" = 0 ]
        check "$md:$line: the example compiles without a warning" [ ! -s "$tmp/err" ]
      else
        check "$md:$line: cgc refuses the example with status 1" [ "$status" = 1 ]
        sed -n 's|^[[:space:]]*// error: ||p' "$tmp/$b.cgraph" > "$tmp/expected"
        while IFS= read -r msg; do
          check "$md:$line: cgc says '$msg'" grep -qF -- "$msg" "$tmp/err"
        done < "$tmp/expected"
      fi
      [ "$fails" = "$before" ] || cat "$tmp/err"
    done < "$tmp/blocks"
  fi
  echo "$md: $count examples checked"
  check "$md has examples to check" [ "$count" -gt 0 ]
done
valgrind_clean "$tmp/vg"
finish
