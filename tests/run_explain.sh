#!/bin/sh
# cgc --explain CODE: every code of compiler/diagnostics.def (errors) and of
# compiler/warnings.def has a row in compiler/explain.def and explains with exit
# 0; explain.def has no row for a code that is not one; every example
# program there gives its code, in the words the row shows; an unknown
# code is a usage error that names it; --help and the man page list
# --explain; doc/language.md's table of codes has every code.
#   run_explain.sh CGC SOURCE_DIR
set -u
. "$(dirname "$0")/check.sh"
cgc=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg"
cgc=$(under_valgrind "$cgc" "$tmp/vg")

errors=$(grep -o '^ERR([A-Z0-9_]*, "E[0-9]\{4\}"' "$src/compiler/diagnostics.def" | cut -d'"' -f2 |
  sort -u)
names=$(grep -o '^ERR([A-Z0-9_]*,' "$src/compiler/diagnostics.def" | sort)
check "diagnostics.def: each row's name its own" [ "$(printf '%s\n' "$names" | uniq -d)" = "" ]
warnings=$(grep -o '^WARNING([A-Z_]*, "[a-z-]*", "W[0-9]\{4\}"' "$src/compiler/warnings.def" |
  cut -d'"' -f4 | sort -u)
rows=$(grep -o '^EXPLAIN("[EW][0-9]\{4\}"' "$src/compiler/explain.def" | cut -d'"' -f2 | sort)
check "diagnostics.def has error codes" [ -n "$errors" ]
check "warnings.def has the warnings' codes" [ -n "$warnings" ]
check "explain.def has one row a code" [ "$(printf '%s\n' "$rows" | uniq -d)" = "" ]
for code in $errors $warnings; do
  printf '%s\n' "$rows" | grep -qx "$code" || check "$code has a row in explain.def" false
done
for code in $rows; do
  printf '%s\n%s\n' "$errors" "$warnings" | grep -qx "$code" ||
    check "explain.def's $code is a code of diagnostics.def or warnings.def" false
done

n=0
for code in $errors $warnings; do
  n=$((n + 1))
  "$cgc" --explain "$code" > "$tmp/out" 2> "$tmp/err"
  status=$?
  check "--explain $code: exit 0" [ "$status" = 0 ]
  check "--explain $code: nothing on standard error" [ ! -s "$tmp/err" ]
  check "--explain $code: it names the code" grep -q "^[a-z]*\[$code\]: " "$tmp/out"
  check "--explain $code: an example" grep -q '^For example' "$tmp/out"
  # A program example: compiled as the row says, it gives its code, in the
  # words shown under "says".
  if grep -q '^For example, cgc .*example\.cgraph of$' "$tmp/out"; then
    args=$(sed -n 's/^For example, cgc \(.*\)example\.cgraph of$/\1/p' "$tmp/out")
    sed -n '/^For example, cgc /,/^says$/p' "$tmp/out" | sed '1,2d;$d' | sed '$d' |
      sed 's/^    //' > "$tmp/example.cgraph"
    says=$(sed -n '/^says$/,$p' "$tmp/out" | sed -n 's/^    //p' | head -n 1)
    # shellcheck disable=SC2086
    (cd "$tmp" && NO_COLOR=1 "$cgc" $args --check example.cgraph > /dev/null 2> "$tmp/got")
    check "--explain $code: the example gives $code" grep -q "\[$code\]" "$tmp/got"
    check "--explain $code: the example says what the row shows" grep -qxF -- "$says" "$tmp/got"
  fi
done
echo "$n codes explained"
check "every code explained" [ "$n" -gt 200 ]

for code in E9999 W0000 E0000 e0004 E04 bogus ''; do
  "$cgc" --explain "$code" > "$tmp/out" 2> "$tmp/err"
  status=$?
  check "--explain '$code': a usage error (exit 2)" [ "$status" = 2 ]
  check "--explain '$code': nothing on standard output" [ ! -s "$tmp/out" ]
  check "--explain '$code': the message names it" \
    grep -qF "error[E0244]: no diagnostic has the code '$code'" "$tmp/err"
done
"$cgc" --explain > "$tmp/out" 2> "$tmp/err"
check "--explain without a code: exit 2" [ "$?" = 2 ]
check "--explain without a code: says so" grep -q 'error\[E0217\]: --explain needs a value' "$tmp/err"
"$cgc" --explain=W0001 > "$tmp/out"
check "--explain=W0001 explains" grep -q '^warning\[W0001\]: -Wuninitialized$' "$tmp/out"
"$cgc" --help > "$tmp/out"
check "--help lists --explain" grep -q '^  --explain CODE ' "$tmp/out"
for code in $errors $warnings; do
  grep -q "^| $code | " "$src/doc/language.md" ||
    check "$code is in the table of codes of doc/language.md" false
done
check "the man page has --explain" grep -q 'explain' "$src/doc/cgc.1"
valgrind_clean "$tmp/vg"
finish
