#!/bin/sh
# One compiler test case, DIR/CASE.cgraph, against an expected file beside
# it; KIND says which (tests/CMakeLists.txt finds the kinds by the files
# there, so a new case needs no CMake edit):
#   errors    CASE.err: cgc exits 1, prints exactly CASE.err, writes nothing
#             to standard output, leaves an existing output file as it was
#             and no temporary behind; in JSON every diagnostic has a code.
#   warnings  CASE.err, only warnings: cgc exits 0, prints exactly CASE.err
#             and writes its output; with -Werror the same diagnostics are
#             errors, cgc exits 1 and writes nothing; with -Wno-NAME for
#             each warning named, it prints nothing; in JSON each is a
#             warning with its option.
#   dot       CASE.dot: cgc --emit=dot succeeds silently and prints exactly
#             CASE.dot, the same bytes on every run and through -o.
#   c         CASE_graph.c and CASE_graph.h (in GOLDEN_DIR, by default
#             beside the case), and CASE_graph_templates.cu where its graphs
#             use template kernels (none otherwise): exactly what cgc writes.
# Directives, lines at the top of the case:
#   // cgc-args: ARGS      arguments for cgc (several lines add up)
#   run_case.sh CGC DIR/CASE.cgraph KIND [GOLDEN_DIR]
# CGC_VALGRIND=1 runs cgc under valgrind, which must report nothing.
# CGC_UPDATE=1 writes the expected file from what cgc printed or wrote
# (review the diff); `CGC_UPDATE=1 ctest -L golden` rewrites every golden
# C file.
set -u
. "$(dirname "$0")/check.sh"
cgc=$1 kind=$3
dir=$(dirname "$2")
name=$(basename "$2" .cgraph)
golden=$(cd "${4:-$dir}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg"
cgc=$(under_valgrind "$cgc" "$tmp/vg")
cd "$dir" || exit 1
args=$(awk '!/^\/\/ cgc-[a-z]+:/ { exit } sub(/^\/\/ cgc-args: /, "") { printf "%s ", $0 }' \
  "$name.cgraph")
update() { [ "${CGC_UPDATE:-0}" = 1 ]; }

# run ARGS...: cgc with the case's arguments and ARGS, into $tmp/out.dot
# (holding "previous output" before); sets status, $tmp/stdout, $tmp/err.
run() {
  printf 'previous output\n' > "$tmp/out.dot"
  # shellcheck disable=SC2086
  NO_COLOR=1 "$cgc" $args "$@" --emit=dot -o "$tmp/out.dot" "$name.cgraph" > "$tmp/stdout" \
    2> "$tmp/err"
  status=$?
}
unchanged() { [ "$(cat "$tmp/out.dot")" = "previous output" ]; }
json() { # the case's diagnostics in JSON, into $tmp/json
  # shellcheck disable=SC2086
  "$cgc" $args --diagnostics-format=json --check "$name.cgraph" > /dev/null 2> "$tmp/json"
}

errors() {
  run
  update && cp "$tmp/err" "$name.err"
  check "$name: exit status $status, expected 1" [ "$status" = 1 ]
  check "$name: the diagnostics of $name.err" diff -u "$name.err" "$tmp/err"
  check "$name: nothing on standard output" [ ! -s "$tmp/stdout" ]
  check "$name: the output file unchanged" unchanged
  check "$name: no temporary output left behind" \
    sh -c '! ls "$0" | grep -q "out\.dot\.tmp"' "$tmp"
  # The same diagnostics in JSON: each has a stable code (E0000 is none).
  json
  check "$name: json: diagnostics" grep -q . "$tmp/json"
  check "$name: json: every diagnostic with its code" \
    sh -c '! grep -v "\"code\":\"[EW][0-9][0-9][0-9][0-9]\"" "$0" && ! grep -q "\"code\":\"E0000\"" "$0"' \
    "$tmp/json"
}

warnings() {
  run
  update && cp "$tmp/err" "$name.err"
  check "$name: exit 0" [ "$status" = 0 ]
  check "$name: warns" grep -q ': warning\[W[0-9]\{4\}\]: .* \[-W[a-z-]*\]$' "$name.err"
  check "$name: the warnings of $name.err" diff -u "$name.err" "$tmp/err"
  check "$name: the output is written" grep -q '^digraph' "$tmp/out.dot"

  run -Werror
  sed 's/: warning\[\(W[0-9]*\)\]: \(.*\) \[-W\([a-z-]*\)\]$/: error[\1]: \2 [-Werror=\3]/' "$name.err" \
    > "$tmp/as_errors"
  check "$name: -Werror: exit 1" [ "$status" = 1 ]
  check "$name: -Werror: the same, as errors" diff -u "$tmp/as_errors" "$tmp/err"
  check "$name: -Werror: nothing written" unchanged

  off=$(sed -n 's/.*: warning\[W[0-9]*\]: .* \[-W\([a-z-]*\)\]$/-Wno-\1/p' "$name.err" | sort -u)
  # shellcheck disable=SC2086
  run $off
  check "$name: $(echo $off): exit 0" [ "$status" = 0 ]
  check "$name: $(echo $off): no warning" [ ! -s "$tmp/err" ]

  command -v python3 > /dev/null || return 0
  json
  check "$name: json: every warning with its option" python3 - "$tmp/json" "$name.err" << 'PY'
import json, re, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
want = re.findall(r": warning\[(W[0-9]{4})\]: .* \[(-W[a-z-]*)\]$", open(sys.argv[2]).read(), re.M)
assert [(o["code"], o["option"]) for o in objs] == want, (objs, want)
assert all(o["severity"] == "warning" for o in objs), objs
PY
}

dot() {
  # shellcheck disable=SC2086
  "$cgc" $args --emit=dot "$name.cgraph" > "$tmp/first" 2> "$tmp/err"
  check "$name: cgc --emit=dot succeeds" [ "$?" = 0 ]
  # shellcheck disable=SC2086
  "$cgc" $args --emit=dot -o "$tmp/second" "$name.cgraph" 2>> "$tmp/err"
  check "$name: cgc --emit=dot -o succeeds" [ "$?" = 0 ]
  # shellcheck disable=SC2086
  "$cgc" $args --check "$name.cgraph" > "$tmp/check" 2>> "$tmp/err"
  check "$name: cgc --check succeeds" [ "$?" = 0 ]
  update && cp "$tmp/first" "$name.dot"
  check "$name: cgc prints nothing besides the DOT" \
    sh -c '[ ! -s "$0" ] && [ ! -s "$1" ]' "$tmp/err" "$tmp/check"
  [ -s "$tmp/err" ] && cat "$tmp/err"
  check "$name: the DOT of $name.dot" diff -u "$name.dot" "$tmp/first"
  check "$name: two runs give the same bytes" cmp -s "$tmp/first" "$tmp/second"
}

c() {
  # shellcheck disable=SC2086
  "$cgc" $args -o "$tmp/${name}_graph.c" "$name.cgraph" 2> "$tmp/err"
  status=$?
  check "$name: cgc succeeds" [ "$status" = 0 ]
  [ "$status" = 0 ] || cat "$tmp/err"
  cu=${name}_graph_templates.cu
  if update; then
    cp "$tmp/${name}_graph.c" "$tmp/${name}_graph.h" "$golden/"
    rm -f "$golden/$cu"
    [ -f "$tmp/$cu" ] && cp "$tmp/$cu" "$golden/"
  fi
  files="${name}_graph.c ${name}_graph.h"
  if [ -f "$golden/$cu" ] || [ -f "$tmp/$cu" ]; then
    files="$files $cu"
  fi
  for f in $files; do
    check "$name: $f as the golden file (CGC_UPDATE=1 to accept)" diff -u "$golden/$f" "$tmp/$f"
  done
}

case $kind in
  errors | warnings | dot | c) "$kind" ;;
  *)
    echo "run_case.sh: unknown kind '$kind'"
    exit 2
    ;;
esac
valgrind_clean "$tmp/vg"
finish
