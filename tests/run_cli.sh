#!/bin/sh
# The command line: options, exit statuses, outputs and the depfile.
#   run_cli.sh CGC TESTS_DIR
set -u
cgc=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0

check() { # check NAME CONDITION...
  name=$1
  shift
  if "$@"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $name"
    fails=$((fails + 1))
  fi
}

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

run --check -D UNUSED=1 "$tmp/ok.cgraph"
check "an unused -D is only a warning" [ "$status" = 0 ]
check "an unused -D is named" grep -q "warning: -D UNUSED: the program has no top-level constant 'UNUSED'" "$tmp/err"

run --emit=c -o "$tmp/ok.c" "$tmp/ok.cgraph"
check "C output is refused in this version" [ "$status" = 2 ]
check "C output writes nothing" [ ! -e "$tmp/ok.c" ]

printf 'old\n' > "$tmp/g.dot"
run --emit=dot -o "$tmp/g.dot" --depfile "$tmp/g.d" "$tmp/ok.cgraph"
check "--emit=dot -o succeeds" [ "$status" = 0 ]
check "-o replaces the output" grep -q '^digraph "g"' "$tmp/g.dot"
check "no temporary file is left" [ -z "$(ls "$tmp" | grep tmp)" ]
printf '%s: \\\n  %s \\\n  %s\n' "$tmp/g.dot" "$tmp/ok.cgraph" "$tmp/inc.cgraph" > "$tmp/g.d.want"
check "the depfile lists every file read" cmp -s "$tmp/g.d" "$tmp/g.d.want"

run --check --depfile "$tmp/x.d" "$tmp/ok.cgraph"
check "--depfile needs -o" [ "$status" = 2 ]

mkdir "$tmp/ro" && printf 'x' > "$tmp/ro/g.dot" && chmod 555 "$tmp/ro"
if [ ! -w "$tmp/ro" ]; then
  run --emit=dot -o "$tmp/ro/g.dot" "$tmp/ok.cgraph"
  check "an unwritable output is an I/O error" [ "$status" = 2 ]
  check "an unwritable output is left alone" [ "$(cat "$tmp/ro/g.dot")" = x ]
fi
chmod 755 "$tmp/ro"

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

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
