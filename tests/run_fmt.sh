#!/bin/sh
# cgc fmt: the golden layout, idempotence, the same program after as
# before, the project's own files already formatted, and refusals.
#   run_fmt.sh CGC SOURCE_DIR [PROGRAM=DIR...]
# A PROGRAM=DIR pair names a program whose modules or included files the
# build makes in DIR (cgc gets -I DIR); where this build does not make
# them, the program is formatted but not compiled, and that is said.
set -u
. "$(dirname "$0")/check.sh"
cgc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
shift 2
built="$*"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg"
cgc=$(under_valgrind "$cgc" "$tmp/vg")

cp "$src/tests/fmt/messy.cgraph" "$tmp/messy.cgraph"
"$cgc" fmt "$tmp/messy.cgraph"
check "messy.cgraph gets the layout of messy.formatted" \
  diff -u "$src/tests/fmt/messy.formatted" "$tmp/messy.cgraph"

# Every valid program of the project: formatted, it is the same program.
dirs="kernels samples tests/dot tests/gpu tests/fmt tests/diag/modules tests/warn tests/link bench"
for d in $dirs; do
  mkdir -p "$tmp/tree/$d"
  cp -R "$src/$d/." "$tmp/tree/$d/"
done
files=$(cd "$src" && ls kernels/*.cgraph samples/*/*.cgraph tests/dot/*.cgraph tests/gpu/*.cgraph \
  tests/fmt/*.cgraph tests/warn/*.cgraph tests/link/*.cgraph bench/*.cgraph)
for f in $files; do
  dir=$(dirname "$f")
  base=$(basename "$f")
  args=$(sed -n '1s|^// cgc-args: ||p' "$src/$f")
  needs=
  for pair in $built; do
    [ "${pair%%=*}" = "$f" ] && needs=${pair#*=}
  done
  if [ -n "$needs" ] && [ ! -d "$needs" ]; then
    echo "skipped: $f is not compiled: this build does not make $needs"
    check "$f: formatting is idempotent" "$cgc" fmt --check "$src/$f"
    continue
  fi
  [ -n "$needs" ] && args="$args -I $needs"
  # shellcheck disable=SC2086
  (cd "$src/$dir" && "$cgc" $args --emit=dot "$base") > "$tmp/before.dot"
  check "$f: cgc accepts it" [ $? = 0 ]
  (cd "$tmp/tree/$dir" && cp "$base" "$base.orig" && "$cgc" fmt "$base" && rm "$base.orig")
  # shellcheck disable=SC2086
  (cd "$tmp/tree/$dir" && "$cgc" $args --emit=dot "$base") > "$tmp/after.dot"
  check "$f: the same graphs after formatting" cmp -s "$tmp/before.dot" "$tmp/after.dot"
  check "$f: formatting is idempotent" "$cgc" fmt --check "$tmp/tree/$f"
done
# Every program but the deliberately messy one.
formatted=$(printf '%s\n' $files | grep -v '^tests/fmt/')
# shellcheck disable=SC2086
check "the project's programs are formatted (cgc fmt --check)" \
  sh -c 'cd "$0" && "$1" fmt --check $2' "$src" "$cgc" "$formatted"

# The diagnostics cases too, all but those that do not parse by design.
listed=$(cd "$src/tests/diag" && "$cgc" fmt --check ./*.cgraph inc/*.cgraph inc/depth/*.cgraph \
  2> /dev/null)
check "the diagnostics cases that parse are formatted" [ -z "$listed" ]

printf 'const N = ;\n' > "$tmp/bad.cgraph"
cp "$tmp/bad.cgraph" "$tmp/bad.before"
"$cgc" fmt "$tmp/bad.cgraph" 2> /dev/null
status=$?
check "a file with a syntax error is refused (exit 1)" [ "$status" = 1 ]
check "and left as it was" cmp -s "$tmp/bad.cgraph" "$tmp/bad.before"

# A NUL byte in a comment scans, but no layout could keep it: refused.
printf '// a \000 comment\nconst N=1;\n' > "$tmp/nul.cgraph"
cp "$tmp/nul.cgraph" "$tmp/nul.before"
"$cgc" fmt "$tmp/nul.cgraph" 2> "$tmp/nul.err"
status=$?
check "a file with a NUL byte is refused (exit 1)" [ "$status" = 1 ]
check "and said why" grep -q "cannot format a file with a NUL byte" "$tmp/nul.err"
check "and left as it was" cmp -s "$tmp/nul.cgraph" "$tmp/nul.before"

printf 'const N=1;\n' > "$tmp/unformatted.cgraph"
out=$("$cgc" fmt --check "$tmp/unformatted.cgraph")
status=$?
check "--check lists a file that would change and exits 1" \
  [ "$status" = 1 -a "$out" = "$tmp/unformatted.cgraph" ]
check "--check changes nothing" [ "$(cat "$tmp/unformatted.cgraph")" = "const N=1;" ]
"$cgc" fmt "$tmp/unformatted.cgraph"
check "fmt rewrites it in place" [ "$(cat "$tmp/unformatted.cgraph")" = "const N = 1;" ]
check "fmt without files is a usage error" sh -c '"$0" fmt 2> /dev/null; [ $? = 2 ]' "$cgc"
"$cgc" fmt 2> "$tmp/usage.err"
check "and says so with its code" \
  grep -qxF "cgc: error[E0247]: fmt needs files (cgc fmt --help)" "$tmp/usage.err"
"$cgc" fmt --write "$tmp/unformatted.cgraph" 2> "$tmp/usage.err"
status=$?
check "an unknown fmt option is a usage error (exit 2)" [ "$status" = 2 ]
check "and names the option, with its code" \
  grep -qxF "cgc: error[E0246]: unknown fmt option '--write'" "$tmp/usage.err"

valgrind_clean "$tmp/vg"
finish
