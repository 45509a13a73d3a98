#!/bin/sh
# Work that grows with the input must grow linearly: each case generates an
# input large enough that a pass per item over the whole input (quadratic)
# takes minutes, and must end within a bound that linear work meets many
# times over on a loaded machine.
#   run_scaling.sh CGC
set -u
. "$(dirname "$0")/check.sh"
cgc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bound=120

# within NAME COMMAND...: the command ends within the bound with status 0 or 1.
within() {
  name=$1
  shift
  timeout "$bound" "$@" > "$tmp/out" 2> "$tmp/err"
  status=$?
  check "$name: ends within $bound s with status 0 or 1 (status $status)" [ "$status" -le 1 ]
}

# 100,000 warnings: each finds its line through an index of the line
# starts, not by scanning the file from its start (text and JSON).
{
  printf 'kernel k(inout x: f32*);\ngraph g {\n    buffer x: f32[4] = 0;\n'
  awk 'BEGIN { for (i = 0; i < 100000; i++) printf "    node a%d = k(x) grid(1) block(1);\n", i }'
  printf '}\n'
} > "$tmp/warnings.cgraph"
within "100,000 warnings" "$cgc" --check "$tmp/warnings.cgraph"
check "100,000 warnings: the last one is printed" grep -q 'warnings.cgraph:100003:' "$tmp/err"
within "100,000 warnings as JSON" "$cgc" --check --diagnostics-format=json "$tmp/warnings.cgraph"
check "100,000 warnings as JSON: one line each" [ "$(grep -c '"severity":"warning"' "$tmp/err")" = 100000 ]

# 300,000 loops whose body's kernel sets the loop's handle: each looks for
# control flow in its own body only, not in the whole graph.
cat > "$tmp/handles.cgraph" <<'G'
kernel p(inout x: f32*, h: handle);
graph g {
    buffer x: f32[4] = 0;
    for i in 0 .. 300000 {
        node l = while x[0] < 1.0 {
            p(x, l) grid(1) block(32);
        }
    }
}
G
within "300,000 loops that set their handle" "$cgc" --check "$tmp/handles.cgraph"
check "300,000 loops that set their handle: no diagnostic" [ ! -s "$tmp/err" ]

finish
