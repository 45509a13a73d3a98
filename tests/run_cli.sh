#!/bin/sh
# The command line: options, exit statuses, outputs and the depfile.
#   run_cli.sh CGC TESTS_DIR
set -u
. "$(dirname "$0")/check.sh"
cgc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/vg"
cgc=$(under_valgrind "$cgc" "$tmp/vg")

run() { # run ARGS...: sets status, out, err
  "$cgc" "$@" > "$tmp/out" 2> "$tmp/err"
  status=$?
}

cat > "$tmp/ok.cgraph" <<'G'
include "inc.cgraph";
graph g {
    buffer x: f32[N];
    node a = k(x) grid(1) block(N);
}
G
cat > "$tmp/inc.cgraph" <<'G'
const N = 32;
kernel k(inout x: f32*);
G

run --version
check "--version prints the version" [ "$status" = 0 ]
check "--version text" grep -q '^cgc [0-9]' "$tmp/out"

run --help
check "--help exits 0" [ "$status" = 0 ]
check "--help lists --emit" grep -q -- '--emit=c|dot' "$tmp/out"

run
check "no input is a usage error" [ "$status" = 2 ]
check "no input says so" grep -q 'no input file' "$tmp/err"

run --frobnicate "$tmp/ok.cgraph"
check "unknown option is a usage error" [ "$status" = 2 ]

run --emit=pdf "$tmp/ok.cgraph"
check "unknown --emit is a usage error" [ "$status" = 2 ]

run -D "$tmp/ok.cgraph"
check "-D without NAME=VALUE is a usage error" [ "$status" = 2 ]

run -D N=abc --check "$tmp/ok.cgraph"
check "-D with a non-integer is a usage error" [ "$status" = 2 ]

# Warning options: an unknown name is a usage error; the last of -WNAME
# and -Wno-NAME counts.
printf 'kernel k(inout x: f32*);\ngraph g {\n    buffer x: f32[32] = 0;\n    buffer spare: f32[4];\n    node a = k(x) grid(1) block(32);\n}\n' > "$tmp/warn.cgraph"
run -Wno-such-warning --check "$tmp/warn.cgraph"
check "an unknown -Wno- is a usage error" [ "$status" = 2 ]
check "and names the warnings" grep -q "unknown warning 'such-warning' (the warnings are uninitialized" "$tmp/err"
run -Wfrobnicate --check "$tmp/warn.cgraph"
check "an unknown -W is a usage error" [ "$status" = 2 ]
run -Wno-unused -Wunused --check "$tmp/warn.cgraph"
check "-Wunused after -Wno-unused warns again" grep -q "buffer 'spare' is never used \[-Wunused\]" "$tmp/err"
check "a warning alone exits 0" [ "$status" = 0 ]
run -Wunused -Wno-unused --check "$tmp/warn.cgraph"
check "-Wno-unused after -Wunused silences it" [ ! -s "$tmp/err" ]
for w in -Wall -Wextra; do
  run $w --check "$tmp/warn.cgraph"
  check "$w is accepted" [ "$status" = 0 ]
  check "$w warns" grep -q "buffer 'spare' is never used \[-Wunused\]" "$tmp/err"
  run -Wno-unused $w --check "$tmp/warn.cgraph"
  check "-Wno-unused wins over a later $w" [ ! -s "$tmp/err" ]
done
"$cgc" --help > "$tmp/out"
check "--help ends pointing to man cgc and the reference" \
  sh -c 'tail -n 1 "$1" | grep -q "man cgc (doc/cgc.1), and the language reference, doc/language.md"' sh "$tmp/out"
run -Werror -o "$tmp/warn_graph.c" "$tmp/warn.cgraph"
check "-Werror: exit 1" [ "$status" = 1 ]
check "-Werror: nothing written" [ ! -e "$tmp/warn_graph.c" ] && [ ! -e "$tmp/warn_graph.h" ]
run -o "$tmp/warn_graph.c" "$tmp/warn.cgraph"
check "without -Werror the C is written" [ -f "$tmp/warn_graph.c" ]
rm -f "$tmp/warn_graph.c" "$tmp/warn_graph.h"

# -h is --help, for cgc and cgc fmt.
run -h
check "-h exits 0" [ "$status" = 0 ]
check "-h prints the usage" grep -q '^usage: cgc \[options\] FILE.cgraph' "$tmp/out"
run fmt -h
check "fmt -h exits 0" [ "$status" = 0 ]
check "fmt -h prints fmt's usage" grep -q '^usage: cgc fmt' "$tmp/out"
check "-h names cgc lsp" sh -c "$cgc -h | grep -q '^ *cgc lsp'"
# cgc lsp: -h (or, built without cJSON, that it needs it), an unknown option.
run lsp -h
check "lsp -h prints lsp's usage, or says cgc has no server" \
  sh -c "{ [ $status = 0 ] && grep -q '^usage: cgc lsp' '$tmp/out'; } ||
         { [ $status = 2 ] && grep -q 'without the language server' '$tmp/err'; }"
run lsp --no-such-option
check "an unknown lsp option is a usage error" [ "$status" = 2 ]

# cgc fmt - reads standard input and writes the layout to standard output.
printf 'const  N=1;\n' | "$cgc" fmt - > "$tmp/out" 2> "$tmp/err"
check "fmt -: exit 0" [ "$?" = 0 ]
check "fmt -: the layout on standard output" [ "$(cat "$tmp/out")" = "const N = 1;" ]
check "fmt -: nothing on standard error" [ ! -s "$tmp/err" ]
printf 'const N = 1;\n' | "$cgc" fmt - > "$tmp/out" 2> "$tmp/err"
check "fmt - of a formatted text: exit 0, the text again" [ "$?" = 0 ] && [ "$(cat "$tmp/out")" = "const N = 1;" ]
printf 'const  N=1;\n' | "$cgc" fmt --check - > "$tmp/out" 2> "$tmp/err"
check "fmt --check - of an unformatted text: exit 1" [ "$?" = 1 ]
check "fmt --check - names it <stdin>" [ "$(cat "$tmp/out")" = "<stdin>" ]
printf 'const N = ;\n' | "$cgc" fmt - > "$tmp/out" 2> "$tmp/err"
check "fmt - of a text that does not parse: exit 1" [ "$?" = 1 ]
check "fmt - of a text that does not parse: nothing on standard output" [ ! -s "$tmp/out" ]
check "fmt - of a text that does not parse: the error names <stdin>" grep -q '^<stdin>:1:11: error\[E[0-9]*\]:' "$tmp/err"

# Diagnostics on standard output.
printf 'const Z = 1 / 0;\nconst Z = 2;\n' > "$tmp/two.cgraph"
run --check --diagnostics-format=json --diagnostics-output=stdout "$tmp/two.cgraph"
check "--diagnostics-output=stdout: exit 1" [ "$status" = 1 ]
check "--diagnostics-output=stdout: two JSON lines on standard output" [ "$(wc -l < "$tmp/out")" = 2 ]
check "--diagnostics-output=stdout: nothing on standard error" [ ! -s "$tmp/err" ]
run --check --diagnostics-output=stdout "$tmp/two.cgraph"
check "--diagnostics-output=stdout: text too" grep -q 'error\[E0019\]: division by zero' "$tmp/out"
run --emit=dot --diagnostics-output=stdout "$tmp/two.cgraph"
check "--diagnostics-output=stdout with DOT on standard output: usage error" [ "$status" = 2 ]
run --check --diagnostics-output=file "$tmp/two.cgraph"
check "an unknown --diagnostics-output: usage error" [ "$status" = 2 ]

# Codes and fixes as data.
cat > "$tmp/fixes.cgraph" <<'G'
kernel rmsnorm(inout x: f32*);
explicit graph g {
    buffer x: f32[32]
    node p = rmsnrom(x) grid(1) block(32);
}
G
cat > "$tmp/hazard.cgraph" <<'G'
kernel rmsnorm(inout x: f32*);
explicit graph h {
    buffer x: f32[32] = 0;
    node p = rmsnorm(x) grid(1) block(32);
    node c = rmsnorm(x) grid(1) block(32);
}
G
"$cgc" --check --diagnostics-format=json "$tmp/fixes.cgraph" 2> "$tmp/json"
check "json: exit 1" [ "$?" = 1 ]
"$cgc" --check --diagnostics-format=json "$tmp/hazard.cgraph" 2>> "$tmp/json"
check "json: a hazard: exit 1" [ "$?" = 1 ]
if command -v python3 > /dev/null; then
  check "json: codes, and fixes as data (text, range, edge)" python3 - "$tmp/json" <<'PY'
import json, sys
semi, meant, hazard = [json.loads(l) for l in open(sys.argv[1])]
assert semi["code"] == "E0135" and semi["message"] == "expected ';' at the end of the statement", semi
assert semi["fixes"] == [{"file": semi["file"], "line": 3, "column": 22,
                          "start": {"line": 3, "column": 22}, "end": {"line": 3, "column": 22},
                          "text": ";"}], semi
assert meant["code"] == "E0005" and meant["fixes"][0]["text"] == "rmsnorm", meant
assert meant["fixes"][0]["start"] == {"line": 4, "column": 14}, meant
assert meant["fixes"][0]["end"] == {"line": 4, "column": 21}, meant
assert hazard["message"].startswith("hazard on 'x'"), hazard
fix = hazard["fixes"][0]
assert fix["edge"] == {"from": "p", "to": "c"}, fix
assert fix["start"] == fix["end"] == {"line": 5, "column": 5} and fix["text"] == "p -> c;\n    ", fix
PY
fi

# A C++ name for the C keeps the header's name: OUT.h, not OUT.cpp.h.
for ext in cpp cc cxx; do
  run -o "$tmp/cxx_graph.$ext" "$tmp/ok.cgraph"
  check "-o OUT.$ext succeeds" [ "$status" = 0 ]
  check "-o OUT.$ext writes OUT.h" [ -f "$tmp/cxx_graph.h" ]
  check "-o OUT.$ext writes no OUT.$ext.h" [ ! -e "$tmp/cxx_graph.$ext.h" ]
  check "OUT.$ext includes OUT.h" grep -q '^#include "cxx_graph.h"$' "$tmp/cxx_graph.$ext"
  rm -f "$tmp/cxx_graph.$ext" "$tmp/cxx_graph.h"
done

run "$tmp/missing.cgraph" --check
check "a missing input is an I/O error" [ "$status" = 2 ]
check "a missing input is named" grep -q "cannot read '$tmp/missing.cgraph': No such file" "$tmp/err"

run "$tmp" --check
check "a directory as input is an I/O error" [ "$status" = 2 ]

truncate -s 300M "$tmp/big.cgraph"
run --check "$tmp/big.cgraph"
check "an input over the size limit is refused" [ "$status" = 2 ]
check "the size limit is named" grep -q 'larger than 256 MiB' "$tmp/err"

run --check "$tmp/ok.cgraph"
check "--check of a good file succeeds" [ "$status" = 0 ]
check "--check prints nothing" [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ]

run --check -D N=64 "$tmp/ok.cgraph"
check "-D overrides a constant" [ "$status" = 0 ]
run --check -D N=2048 "$tmp/ok.cgraph"
check "-D reaches the checks (block of 2048)" [ "$status" = 1 ]
run --check -DN=64 "$tmp/ok.cgraph"
check "-DNAME=VALUE in one word" [ "$status" = 0 ]

# A -D of a name given again with another value is a usage error that
# names both (whichever order); given again with the same value (as
# written or not), it is accepted, and used.
run --check -D N=2048 -D N=64 "$tmp/ok.cgraph"
check "-D N=2048 -D N=64 is a usage error" [ "$status" = 2 ]
check "-D N=2048 -D N=64 names both values" grep -qxF \
  "cgc: error[E0249]: -D N is given twice, with different values ('2048', then '64')" "$tmp/err"
run -o "$tmp/twice.c" -DN=64 -D N=2048 "$tmp/ok.cgraph"
check "-DN=64 -D N=2048 is a usage error" [ "$status" = 2 ]
check "-DN=64 -D N=2048 names both values" grep -qxF \
  "cgc: error[E0249]: -D N is given twice, with different values ('64', then '2048')" "$tmp/err"
check "a -D given twice writes no C" [ ! -e "$tmp/twice.c" ] && [ ! -e "$tmp/twice.h" ]
run --check -D N=64 -D N=64 "$tmp/ok.cgraph"
check "-D N=64 twice is accepted" [ "$status" = 0 ]
check "a repeated -D is no unused constant" [ ! -s "$tmp/err" ]
run --check -D N=2048 -D N=2K "$tmp/ok.cgraph"
check "-D N=2048 -D N=2K: one value twice, used" [ "$status" = 1 ]
check "-D N=2048 -D N=2K: the value is used" grep -q "error\\[E0063\\]: block extent x is 2048" "$tmp/err"
run --check -D N=64 -D M=64 -D N=64 -D M=65 "$tmp/ok.cgraph"
check "-D M=64 then M=65 among others is a usage error" [ "$status" = 2 ]
check "-D M=64 then M=65 names M" grep -qF "E0249]: -D M is given twice, with different values ('64', then '65')" "$tmp/err"
run --check --diagnostics-format=json -D N=1 -D N=2 "$tmp/ok.cgraph"
check "-D twice in JSON: exit 2" [ "$status" = 2 ]
check "-D twice in JSON: its code" grep -q '"code":"E0249"' "$tmp/err"

# -o names the output once: a second -o is a usage error that names both,
# and nothing is written.
run "$tmp/ok.cgraph" -o "$tmp/x.c" -o "$tmp/y.c"
check "-o twice is a usage error" [ "$status" = 2 ]
check "-o twice names both" grep -qxF \
  "cgc: error[E0248]: -o is given twice ('$tmp/x.c', then '$tmp/y.c')" "$tmp/err"
check "-o twice writes neither" [ ! -e "$tmp/x.c" ] && [ ! -e "$tmp/y.c" ] &&
  [ ! -e "$tmp/x.h" ] && [ ! -e "$tmp/y.h" ]
run "$tmp/ok.cgraph" -o "$tmp/x.c" -o"$tmp/x.c"
check "-o twice with one name is a usage error too" [ "$status" = 2 ]
check "-o twice with one name names it twice" grep -qxF \
  "cgc: error[E0248]: -o is given twice ('$tmp/x.c', then '$tmp/x.c')" "$tmp/err"
check "-o twice with one name writes nothing" [ ! -e "$tmp/x.c" ] && [ ! -e "$tmp/x.h" ]
# So are the other options that name one thing.
run "$tmp/ok.cgraph" -o "$tmp/x.c" -H "$tmp/a.h" -H "$tmp/b.h"
check "-H twice is a usage error" [ "$status" = 2 ]
check "-H twice names both" grep -qxF \
  "cgc: error[E0248]: -H is given twice ('$tmp/a.h', then '$tmp/b.h')" "$tmp/err"
check "-H twice writes nothing" [ ! -e "$tmp/x.c" ] && [ ! -e "$tmp/a.h" ] && [ ! -e "$tmp/b.h" ]
run "$tmp/ok.cgraph" -o "$tmp/x.c" --depfile "$tmp/a.d" --depfile="$tmp/b.d"
check "--depfile twice names both" grep -qxF \
  "cgc: error[E0248]: --depfile is given twice ('$tmp/a.d', then '$tmp/b.d')" "$tmp/err"
check "--depfile twice writes nothing" [ ! -e "$tmp/x.c" ] && [ ! -e "$tmp/a.d" ] && [ ! -e "$tmp/b.d" ]
run "$tmp/ok.cgraph" -o "$tmp/x.c" --templates="$tmp/a.cu" --templates "$tmp/b.cu"
check "--templates twice names both" grep -qxF \
  "cgc: error[E0248]: --templates is given twice ('$tmp/a.cu', then '$tmp/b.cu')" "$tmp/err"
run "$tmp/ok.cgraph" -o "$tmp/x.c" --prefix=a_ --prefix=b_
check "--prefix twice names both" grep -qxF \
  "cgc: error[E0248]: --prefix is given twice ('a_', then 'b_')" "$tmp/err"
check "--prefix twice writes nothing" [ ! -e "$tmp/x.c" ]

# Every 64-bit value, INT64_MIN included, and nothing beyond.
printf 'const N = 1;\ngraph g {\n}\n' > "$tmp/n.cgraph"
for v in -9223372036854775808 9223372036854775807 -0x8000000000000000 0x7fffffffffffffff \
  -8589934592G 8388607G; do
  run --check -D "N=$v" "$tmp/n.cgraph"
  check "-D N=$v is accepted" [ "$status" = 0 ]
done
for v in -9223372036854775809 9223372036854775808 -0x8000000000000001 0x8000000000000000 \
  -8589934593G 8589934592G 99999999999999999999; do
  run --check -D "N=$v" "$tmp/n.cgraph"
  check "-D N=$v is a usage error" [ "$status" = 2 ]
  check "-D N=$v does not fit" grep -q "^cgc: error\\[E0224\\]: -D N=$v: the value does not fit in 64 bits" "$tmp/err"
done
for v in '' - 0x 1Q 12KK; do
  run --check -D "N=$v" "$tmp/n.cgraph"
  check "-D N='$v' is not an integer" grep -q "the value must be an integer" "$tmp/err"
done

run --check -D UNUSED=1 "$tmp/ok.cgraph"
check "an unused -D is only a warning" [ "$status" = 0 ]
check "an unused -D is named" grep -q "warning\\[W0004\\]: -D UNUSED: the program has no top-level constant 'UNUSED'" "$tmp/err"

run "$tmp/ok.cgraph"
check "without -o the C goes beside the input" [ "$status" = 0 ]
check "without -o: FILE_graph.c" grep -q '#include "ok_graph.h"' "$tmp/ok_graph.c"
check "without -o: FILE_graph.h" grep -q 'cgrt_status g_create' "$tmp/ok_graph.h"
rm -f "$tmp/ok_graph.c" "$tmp/ok_graph.h"
for o in o.h o.c.txt o.hpp; do
  run -o "$tmp/$o" "$tmp/ok.cgraph"
  check "-o $o is a usage error" [ "$status" = 2 ]
  check "-o $o says which names C output takes" grep -q "C output goes into a .c, .cc, .cpp, .cxx or .cu file" "$tmp/err"
  check "-o $o writes no C" [ ! -e "$tmp/$o" ]
  check "-o $o writes no header" [ ! -e "$tmp/$o.h" ]
done
run -o "$tmp/cu_graph.cu" "$tmp/ok.cgraph"
check "-o OUT.cu writes OUT.h beside it" grep -q '#include "cu_graph.h"' "$tmp/cu_graph.cu"

run -o "$tmp/ok_graph.c" "$tmp/ok.cgraph"
check "C output succeeds" [ "$status" = 0 ]
check "the C file is written" grep -q '^// Code generated by cgc .* DO NOT EDIT\.$' "$tmp/ok_graph.c"
check "the header goes beside it" grep -q 'cgrt_status g_create' "$tmp/ok_graph.h"
check "the C file includes its header" grep -q '#include "ok_graph.h"' "$tmp/ok_graph.c"

run -o "$tmp/dep_graph.c" --depfile "$tmp/dep.d" "$tmp/ok.cgraph"
printf '%s: \\\n  %s \\\n  %s\n' "$tmp/dep_graph.c" "$(realpath "$tmp/ok.cgraph")" \
  "$(realpath "$tmp/inc.cgraph")" > "$tmp/dep.d.want"
check "the depfile of C output names every file read" cmp -s "$tmp/dep.d" "$tmp/dep.d.want"

mkdir "$tmp/inc_dir"
run -o "$tmp/ok2.c" -H "$tmp/inc_dir/ok2.h" "$tmp/ok.cgraph"
check "-H names the header" [ "$status" = 0 ]
check "-H writes the header there" [ -f "$tmp/inc_dir/ok2.h" ]
check "-H writes no header beside the C" [ ! -e "$tmp/ok2.h" ]

# A header named cgrt.h would include itself instead of the runtime's.
mkdir "$tmp/rt"
run -o "$tmp/rt/cgrt.c" "$tmp/ok.cgraph"
check "-o cgrt.c is a usage error" [ "$status" = 2 ]
check "-o cgrt.c says why" grep -q "the header '$tmp/rt/cgrt.h' would include itself in place of the runtime's cgrt.h" "$tmp/err"
run -o "$tmp/rt/x.c" -H "$tmp/rt/CGRT.h" "$tmp/ok.cgraph"
check "-H CGRT.h is a usage error (case-blind file systems)" [ "$status" = 2 ]
check "neither writes a file" [ -z "$(ls "$tmp/rt")" ]
run -o "$tmp/rt/cgrt.c" -H "$tmp/rt/rt_graph.h" "$tmp/ok.cgraph"
check "a C file named cgrt.c with another header is fine" [ "$status" = 0 ]

printf 'previous\n' > "$tmp/bad_graph.c"
printf 'previous\n' > "$tmp/bad_graph.h"
printf 'const N = 1 / 0;\n' > "$tmp/bad.cgraph"
run -o "$tmp/bad_graph.c" "$tmp/bad.cgraph"
check "a failed C output exits 1" [ "$status" = 1 ]
check "a failed C output touches neither file" \
  [ "$(cat "$tmp/bad_graph.c" "$tmp/bad_graph.h")" = "$(printf 'previous\nprevious')" ]

printf 'old\n' > "$tmp/g.dot"
run --emit=dot -o "$tmp/g.dot" --depfile "$tmp/g.d" "$tmp/ok.cgraph"
check "--emit=dot -o succeeds" [ "$status" = 0 ]
check "-o replaces the output" grep -q '^digraph "g"' "$tmp/g.dot"
check "no temporary file is left" [ -z "$(ls "$tmp" | grep tmp)" ]
printf '%s: \\\n  %s \\\n  %s\n' "$tmp/g.dot" "$(realpath "$tmp/ok.cgraph")" \
  "$(realpath "$tmp/inc.cgraph")" > "$tmp/g.d.want"
check "the depfile lists every file read" cmp -s "$tmp/g.d" "$tmp/g.d.want"

run --check --depfile "$tmp/x.d" "$tmp/ok.cgraph"
check "--depfile needs -o" [ "$status" = 2 ]

# Kernels from modules and templates: found beside the file that names
# them, then through -I; listed in the depfile; the companion CUDA file
# written beside -o only when a graph uses a template kernel, or always
# where --templates names it.
mkdir -p "$tmp/m/sub" "$tmp/mods"
cp "$src/diag/modules/add.ptx" "$tmp/m/sub/add.ptx"
cp "$src/diag/modules/add.cubin" "$tmp/mods/add.cubin"
cp "$src/diag/modules/scale.cuh" "$tmp/m/sub/scale.cuh"
cat > "$tmp/m/sub/kernels.cgraph" <<'G'
kernel add_one(inout x: f32*, n: u32) from "add.ptx";
kernel add_cubin(inout x: f32*, n: u32) from "add.cubin" symbol "add_one";
kernel scale_f32 = scale<float, 2>(inout x: f32*, s: f32, n: u32) from "scale.cuh";
G
cat > "$tmp/m/main.cgraph" <<'G'
include "sub/kernels.cgraph";
graph g {
    buffer x: f32[32];
    node a = add_one(x, 32) grid(1) block(32);
    node b = add_cubin(x, 32) grid(1) block(32);
    node c = scale_f32(x, 2.0, 32) grid(1) block(32);
}
G
run --check "$tmp/m/main.cgraph"
check "a module not beside its .cgraph nor in an -I directory is not found" [ "$status" = 1 ]
check "and named" grep -q "cannot find module 'add.cubin'" "$tmp/err"
run -I "$tmp/mods" -o "$tmp/m/out_graph.c" --depfile "$tmp/m/out.d" "$tmp/m/main.cgraph"
check "modules and headers found beside the including file and through -I" [ "$status" = 0 ]
printf '%s: \\\n  %s \\\n  %s \\\n  %s \\\n  %s \\\n  %s\n' "$tmp/m/out_graph.c" \
  "$(realpath "$tmp/m/main.cgraph")" "$(realpath "$tmp/m/sub/kernels.cgraph")" \
  "$(realpath "$tmp/m/sub/add.ptx")" "$(realpath "$tmp/mods/add.cubin")" \
  "$(realpath "$tmp/m/sub/scale.cuh")" > "$tmp/m/out.d.want"
check "the depfile lists the modules and the template's header" cmp -s "$tmp/m/out.d" "$tmp/m/out.d.want"
check "a template kernel's graph gets the companion beside -o" [ -f "$tmp/m/out_graph_templates.cu" ]
check "the companion includes the header cgc found, from the main file's directory" grep -q '#include "sub/scale.cuh"' "$tmp/m/out_graph_templates.cu"
check "each module is embedded once" [ "$(grep -c '^static const unsigned char cgc_module_' "$tmp/m/out_graph.c")" = 2 ]
run -o "$tmp/plain_graph.c" "$tmp/ok.cgraph"
check "no companion without template kernels" [ ! -e "$tmp/plain_graph_templates.cu" ]
run -o "$tmp/plain_graph.c" --templates "$tmp/plain.cu" "$tmp/ok.cgraph"
check "--templates writes it anyway" grep -q 'use no template kernel' "$tmp/plain.cu"
run -I "$tmp/mods" -o "$tmp/m/t.c" --templates "$tmp/m/t.cu" "$tmp/m/main.cgraph"
check "--templates names the companion" grep -q 'scale<float, 2>' "$tmp/m/t.cu"
check "--templates writes none beside -o" [ ! -e "$tmp/m/t_templates.cu" ]
run --emit=dot -o "$tmp/m/g.dot" --templates "$tmp/m/t.cu" "$tmp/m/main.cgraph"
check "--templates with --emit=dot is a usage error" [ "$status" = 2 ]
run -I "$tmp/mods" -o "$tmp/m/u.c" --templates "$tmp/m/sub/scale.cuh" "$tmp/m/main.cgraph"
check "--templates that is a template's header is a usage error" [ "$status" = 2 ]
check "and says so" grep -q "is '.*scale.cuh', a file the program reads" "$tmp/err"
run -I "$tmp/mods" -o "$tmp/m/sub/add.ptx" "$tmp/m/main.cgraph"
check "-o that is a module is a usage error" [ "$status" = 2 ]
run -I "$tmp/mods" -o "$tmp/m/v.c" -H "$tmp/m/v_templates.cu" "$tmp/m/main.cgraph"
check "a header that is the companion is a usage error" [ "$status" = 2 ]
check "and says so" grep -q "are the same file" "$tmp/err"
check "and nothing is written" [ ! -e "$tmp/m/v.c" ] && [ ! -e "$tmp/m/v_templates.cu" ]

mkdir "$tmp/ro" && printf 'x' > "$tmp/ro/g.dot" && chmod 555 "$tmp/ro"
if [ ! -w "$tmp/ro" ]; then
  run --emit=dot -o "$tmp/ro/g.dot" "$tmp/ok.cgraph"
  check "an unwritable output is an I/O error" [ "$status" = 2 ]
  check "an unwritable output is left alone" [ "$(cat "$tmp/ro/g.dot")" = x ]
fi
chmod 755 "$tmp/ro"

# A condition makes at most 16 comparisons (the runtime's limit).
{
  printf 'graph g {\n    scalar n: u32;\n    while n < 0'
  for i in $(seq 1 16); do printf ' || n == %d' "$i"; done
  printf ' {\n    }\n}\n'
} > "$tmp/cf.cgraph"
run -o "$tmp/cf_graph.c" "$tmp/cf.cgraph"
check "17 comparisons in one condition are refused (exit 1)" [ "$status" = 1 ]
check "and the message says so" grep -q "cf.cgraph:3:11: error\\[E0092\\]: this condition makes 17 comparisons; one condition makes at most 16" "$tmp/err"
check "and nothing is written" [ ! -e "$tmp/cf_graph.c" ]
sed -i 's/ || n == 16//' "$tmp/cf.cgraph"
run -o "$tmp/cf_graph.c" "$tmp/cf.cgraph"
check "16 comparisons are C" [ "$status" = 0 ]

# Machine-readable diagnostics: one JSON object a line, notes inside.
printf 'const Z = 1 / 0;\nconst Z = 2;\n' > "$tmp/two.cgraph"
"$cgc" --check --diagnostics-format=json "$tmp/two.cgraph" 2> "$tmp/json"
status=$?
check "json: exit status 1" [ "$status" = 1 ]
if command -v python3 > /dev/null; then
  check "json: one object a diagnostic, with its fields and notes" python3 - "$tmp/json" "$tmp/two.cgraph" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
assert len(objs) == 2, objs
a, b = objs
assert a["file"] == sys.argv[2] and a["line"] == 1 and a["column"] == 13, a
# The caret at the operator, the span over the whole expression.
assert a["start"] == {"line": 1, "column": 11}, a
assert a["end"] == {"line": 1, "column": 16} and a["severity"] == "error", a
assert a["message"] == "division by zero" and a["notes"] == [] and a["fixes"] == [], a
assert b["line"] == 2 and b["column"] == 7 and b["message"] == "redefinition of 'Z'", b
assert b["notes"] == [{"file": sys.argv[2], "line": 1, "column": 7,
                       "start": {"line": 1, "column": 7}, "end": {"line": 1, "column": 8},
                       "message": "'Z' was defined here"}], b
PY
fi
# A file name holds any bytes but NUL: in JSON, bytes that are not UTF-8
# become U+FFFD and control characters \u escapes, so every line parses; in
# text, control characters are escaped so the FILE:LINE:COL line stays whole.
odd=$(printf '%s/odd\377\342\202\254\nname\033[1m\355\240\200' "$tmp")
mkdir "$odd"
printf 'const N = 1 / 0;\n' > "$odd/x.cgraph"
printf 'include "\\xff\\xfe\\n\\xc0\\x80\\xf4\\x90\\x80\\x80.cgraph";\n' > "$tmp/inc_bytes.cgraph"
if command -v python3 > /dev/null; then
  for f in "$odd/x.cgraph" "$tmp/inc_bytes.cgraph" "$odd/missing.cgraph"; do
    "$cgc" --check --diagnostics-format=json "$f" 2> "$tmp/json"
    check "json: every line is valid JSON, for any bytes in a name" python3 -c '
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"" and len(lines) >= 2, lines
for l in lines[:-1]:
    json.loads(l.decode("utf-8"))
' "$tmp/json"
  done
  "$cgc" --check --diagnostics-format=json "$odd/x.cgraph" 2> "$tmp/json"
  check "json: the file name keeps its UTF-8 and control characters" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
assert o["file"] == sys.argv[2] + "/odd\ufffd\u20ac\nname\x1b[1m\ufffd\ufffd\ufffd/x.cgraph", o
' "$tmp/json" "$tmp"
fi
run --check "$odd/x.cgraph"
check "text: a line break in a file name is escaped" \
  env LC_ALL=C grep -q "^$tmp/odd.*\\\\nname\\\\x1b\\[1m.*/x.cgraph:1:13: error\\[E0019\\]: division by zero\$" "$tmp/err"
check "text: a diagnostic is three lines" [ "$(wc -l < "$tmp/err")" = 3 ]
run --check "$tmp/inc_bytes.cgraph"
check "text: a line break in a message is escaped" \
  env LC_ALL=C grep -q "error\\[E0113\\]: cannot find include file '.*\\\\n.*\\.cgraph'\$" "$tmp/err"
run "$odd/nothing.cgraph" -o "$tmp/x.c"
check "text: an I/O error's file name is escaped" \
  env LC_ALL=C grep -q "cannot read '.*\\\\nname\\\\x1b.*nothing.cgraph'" "$tmp/err"

run --check --diagnostics-format=xml "$tmp/ok.cgraph"
check "an unknown diagnostics format is a usage error" [ "$status" = 2 ]
# After --diagnostics-format=json a usage error is a JSON line with its code,
# where diagnostics go.
run --diagnostics-format=json --bogus "$tmp/ok.cgraph"
check "json: a usage error: exit 2" [ "$status" = 2 ]
check "json: a usage error is one JSON line with its code" \
  grep -qx '{"file":null,.*"severity":"error","code":"E0[0-9]*","message":"unknown option '"'"'--bogus'"'"'",.*}' "$tmp/err"
check "json: nothing else" [ "$(wc -l < "$tmp/err")" = 1 ]
# A refused bound is reported once, where it is written: no note or fix-it
# of its uses at a line 0.
printf 'kernel k(inout x: f32*, n: u32);\ngraph g {\n    scalar r: u32 max 4 = ranks;\n    buffer x: f32[r, 16];\n    k(x, r) grid(r) block(32);\n}\n' > "$tmp/ranks.cgraph"
run --check --diagnostics-format=json "$tmp/ranks.cgraph"
check "json: a refused bound: one error" [ "$(wc -l < "$tmp/err")" = 1 ]
check "json: no position at line 0" sh -c '! grep -q "\"line\":0" "$0"' "$tmp/err"
run --diagnostics-format=json --diagnostics-output=stdout --check
check "json to stdout: a usage error goes there" grep -q '"message":"no input file"' "$tmp/out"
check "json to stdout: not to stderr" [ ! -s "$tmp/err" ]

# Colour only on a terminal, and never with NO_COLOR.
printf 'const N = 1 / 0;\n' > "$tmp/bad.cgraph"
if command -v script > /dev/null; then
  env -u NO_COLOR script -qec "$cgc --check $tmp/bad.cgraph" /dev/null > "$tmp/tty" 2>&1
  check "colour on a terminal" grep -q "$(printf '\033')\[" "$tmp/tty"
  NO_COLOR=1 script -qec "$cgc --check $tmp/bad.cgraph" /dev/null > "$tmp/tty" 2>&1
  check "no colour with NO_COLOR" [ -z "$(grep "$(printf '\033')\[" "$tmp/tty")" ]
fi
env -u NO_COLOR "$cgc" --check "$tmp/bad.cgraph" 2> "$tmp/err"
check "no colour into a file" [ -z "$(grep "$(printf '\033')\[" "$tmp/err")" ]

# --prefix: every name the C declares for a graph, and only those.
run -o "$tmp/pre.c" --prefix=m1_ "$tmp/ok.cgraph"
check "--prefix: exit 0" [ "$status" = 0 ]
check "--prefix: the graph's functions take it" grep -q "cgrt_status m1_g_create(m1_g \*\*out" "$tmp/pre.h"
check "--prefix: the kernel keeps its name" grep -q "void k(" "$tmp/pre.h"
run -o "$tmp/pre2.c" --prefix=m2_ "$tmp/ok.cgraph"
for h in pre pre2; do grep -o 'm[12]_g[a-z_]*' "$tmp/$h.h" | sed 's/^m[12]_//' | sort -u; done |
  sort | uniq -c > "$tmp/names"
check "--prefix: the two headers declare the same names, each with its prefix" \
  sh -c "[ -s '$tmp/names' ] && ! grep -qv '^ *2 ' '$tmp/names'"
for bad in 9x x-y "" $(printf 'a%.0s' $(seq 1 65)); do
  run -o "$tmp/bad.c" "--prefix=$bad" "$tmp/ok.cgraph"
  check "--prefix='$bad' is a usage error" [ "$status" = 2 ]
done

# A module that is a FIFO is refused without opening it for good (the open
# cannot block), as a device is; a directory is said to be one.
if mkfifo "$tmp/fifo.ptx" 2> /dev/null; then
  printf 'kernel k(inout x: f32*) from "fifo.ptx";\n' > "$tmp/fifo.cgraph"
  timeout 20 "$cgc" --check "$tmp/fifo.cgraph" > "$tmp/out" 2> "$tmp/err"
  status=$?
  check "a FIFO as a module: exit 1, not a hang" [ "$status" = 1 ]
  check "a FIFO as a module: not a regular file" grep -q "module 'fifo.ptx' is not a regular file" "$tmp/err"
fi

valgrind_clean "$tmp/vg"
finish
