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

# An undefined node named in a loop of 2,000 iterations, among 2,000 nodes
# of long names that differ at their end: its "did you mean" (each name by
# edit distance) is worked out once, not at every iteration (400 by 400
# took 21 s so, and this about 9 minutes).
{
  printf 'kernel k(inout x: f32*);\ngraph g {\n    buffer x: f32[4] = 0;\n'
  awk 'BEGIN { s = sprintf("%240s", ""); gsub(/ /, "n", s)
               for (i = 0; i < 2000; i++) printf "    node %s%010d = k(x) grid(1) block(32);\n", s, i
               print "    for i in 0 .. 2000 {"
               print "        node a = k(x) grid(1) block(32);"
               printf "        a[i] -> %sx000000007;\n    }\n", s }'
  printf '}\n'
} > "$tmp/undefined.cgraph"
within "an undefined node in a loop of 2,000" "$cgc" --check "$tmp/undefined.cgraph"
check "an undefined node in a loop of 2,000: reported once" \
  [ "$(grep -c 'error\[E0006\]' "$tmp/err")" = 1 ]

# 64 batch variants of 40,000 buffers, all but one unused: -Wunused
# matches each variant's resources to the others' by position, not by
# searching the others' names (that took 51 s at 20,000 buffers).
{
  printf 'kernel k(inout x: f32*);\ngraph g for B in ['
  awk 'BEGIN { for (i = 1; i <= 64; i++) printf "%s%d", (i > 1 ? ", " : ""), i }'
  printf '] {\n'
  awk 'BEGIN { for (i = 0; i < 40000; i++) printf "    buffer b%d: f32[B];\n", i }'
  printf '    node n = k(b0) grid(1) block(32);\n}\n'
} > "$tmp/variants.cgraph"
within "64 variants of 40,000 buffers" "$cgc" --check "$tmp/variants.cgraph"
check "64 variants of 40,000 buffers: each unused one reported once" \
  [ "$(grep -c 'warning\[W0002\]' "$tmp/err")" = 39999 ]

# cgc lsp on a document of 100,000 nodes that each warn: its diagnostics
# and its symbols find their positions through an index of line starts.
if command -v python3 > /dev/null && "$cgc" lsp --help > /dev/null 2>&1; then
  python3 - "$tmp/lsp.in" <<'P'
import json, sys
doc = ("kernel k(inout x: f32*);\ngraph g {\n    buffer x: f32[4] = 0;\n" +
       "".join("    node a%d = k(x) grid(1) block(1);\n" % i for i in range(100000)) + "}\n")
uri = "file:///scaling.cgraph"
msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "cgraph", "version": 1, "text": doc}}},
        {"jsonrpc": "2.0", "id": 1, "method": "textDocument/documentSymbol",
         "params": {"textDocument": {"uri": uri}}},
        {"jsonrpc": "2.0", "id": 99, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"}]
with open(sys.argv[1], "wb") as f:
    for m in msgs:
        body = json.dumps(m).encode()
        f.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
P
  within "cgc lsp, 100,000 warnings and symbols" sh -c '"$0" lsp < "$1"' "$cgc" "$tmp/lsp.in"
  check "cgc lsp: the last warning is published" grep -q '"line":100002' "$tmp/out"
  check "cgc lsp: the symbols are answered" grep -q '"id":1,"result":\[' "$tmp/out"
fi

finish
