#!/bin/sh
# One warnings case: cgc exits 0, prints exactly CASE.err (one warning at
# least) and writes its output; with -Werror the same diagnostics are
# errors ([-Werror=NAME]), cgc exits 1 and writes nothing; with -Wno-NAME
# for each warning named, it prints nothing; in JSON each is a warning
# with its option.
#   run_warn.sh CGC DIR/CASE.cgraph
# CGC_VALGRIND=1 and CGC_UPDATE=1 as in run_diag.sh.
set -u
. "$(dirname "$0")/check.sh"
cgc=$1
dir=$(dirname "$2")
name=$(basename "$2" .cgraph)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg"
cgc=$(under_valgrind "$cgc" "$tmp/vg")
cd "$dir" || exit 1
args=$(sed -n '1s|^// cgc-args: ||p' "$name.cgraph")

run() { # run ARGS...: status, $tmp/err; the output is $tmp/out.dot
  printf 'previous output\n' > "$tmp/out.dot"
  # shellcheck disable=SC2086
  NO_COLOR=1 "$cgc" $args "$@" --emit=dot -o "$tmp/out.dot" "$name.cgraph" > "$tmp/stdout" \
    2> "$tmp/err"
  status=$?
}

run
[ "${CGC_UPDATE:-0}" = 1 ] && cp "$tmp/err" "$name.err"
check "$name: exit 0" [ "$status" = 0 ]
check "$name: warns" grep -q ': warning: .* \[-W[a-z-]*\]$' "$name.err"
check "$name: the warnings of $name.err" diff -u "$name.err" "$tmp/err"
check "$name: the output is written" grep -q '^digraph' "$tmp/out.dot"

run -Werror
sed 's/: warning: \(.*\) \[-W\([a-z-]*\)\]$/: error: \1 [-Werror=\2]/' "$name.err" > "$tmp/as_errors"
check "$name: -Werror: exit 1" [ "$status" = 1 ]
check "$name: -Werror: the same, as errors" diff -u "$tmp/as_errors" "$tmp/err"
check "$name: -Werror: nothing written" [ "$(cat "$tmp/out.dot")" = "previous output" ]

off=$(sed -n 's/.*: warning: .* \[-W\([a-z-]*\)\]$/-Wno-\1/p' "$name.err" | sort -u)
# shellcheck disable=SC2086
run $off
check "$name: $(echo $off): exit 0" [ "$status" = 0 ]
check "$name: $(echo $off): no warning" [ ! -s "$tmp/err" ]

if command -v python3 > /dev/null; then
  printf 'x\n' > "$tmp/out.dot"
  # shellcheck disable=SC2086
  "$cgc" $args --diagnostics-format=json --check "$name.cgraph" 2> "$tmp/json"
  check "$name: json: every warning with its option" python3 - "$tmp/json" "$name.err" <<'PY'
import json, re, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
want = re.findall(r": warning: .* \[(-W[a-z-]*)\]$", open(sys.argv[2]).read(), re.M)
assert [o["option"] for o in objs] == want, (objs, want)
assert all(o["severity"] == "warning" for o in objs), objs
PY
fi
valgrind_clean "$tmp/vg"
finish
