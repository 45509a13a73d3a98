#!/bin/sh
# The generated C: for every test and sample program, cgc warns of
# nothing, two runs give the same bytes, and the C compiles with gcc and clang under
# -std=c11 -Wall -Wextra -pedantic -Werror, and as C++ with g++ and clang++.
#   run_emit.sh CGC RUNTIME_DIR CUDA_INCLUDE_DIR PROGRAM.cgraph...
set -u
cgc=$1 runtime=$2 cuda=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
compilers=
for cc in gcc clang; do
  command -v $cc > /dev/null && compilers="$compilers $cc"
done
for src in "$@"; do
  name=$(basename "$src" .cgraph)
  dir=$(dirname "$src")
  args=$(sed -n '1s|^// cgc-args: ||p' "$src")
  # shellcheck disable=SC2086
  if ! (cd "$dir" && "$cgc" $args -o "$tmp/a/${name}_graph.c" "$name.cgraph" 2> "$tmp/err") &&
    ! { mkdir -p "$tmp/a" "$tmp/b" && (cd "$dir" && "$cgc" $args -o "$tmp/a/${name}_graph.c" "$name.cgraph"); }; then
    cat "$tmp/err"
    echo "FAIL: $name: cgc failed"
    fails=$((fails + 1))
    continue
  fi
  mkdir -p "$tmp/b"
  # shellcheck disable=SC2086
  (cd "$dir" && "$cgc" $args -o "$tmp/b/${name}_graph.c" "$name.cgraph" 2> "$tmp/warnings")
  if [ -s "$tmp/warnings" ]; then
    cat "$tmp/warnings"
    echo "FAIL: $name: cgc warned"
    fails=$((fails + 1))
  fi
  if ! cmp -s "$tmp/a/${name}_graph.c" "$tmp/b/${name}_graph.c" ||
    ! cmp -s "$tmp/a/${name}_graph.h" "$tmp/b/${name}_graph.h"; then
    echo "FAIL: $name: two runs gave different C"
    fails=$((fails + 1))
  fi
  # The header as C++ (a host file of the user's, or the capture functions'
  # definitions) declares the half types' own prototypes.
  if command -v g++ > /dev/null; then
    if printf '#include "%s_graph.h"\n' "$name" |
      g++ -x c++ -std=c++17 -Wall -Wextra -pedantic -Werror -I "$tmp/a" -I "$runtime" -I "$cuda" \
        -fsyntax-only - 2> "$tmp/cxx.err"; then
      passes=$((passes + 1))
    else
      cat "$tmp/cxx.err"
      echo "FAIL: $name: g++ rejects the generated header"
      fails=$((fails + 1))
    fi
  fi
  # Also with the program's table of graphs (-DCGC_PROGRAM), which must
  # come with its prototype.
  for cc in $compilers; do
    for program in "" -DCGC_PROGRAM=cgc_program; do
      # shellcheck disable=SC2086
      if $cc -std=c11 -Wall -Wextra -pedantic -Werror -Wmissing-prototypes $program \
        -I "$runtime" -I "$cuda" -c "$tmp/a/${name}_graph.c" -o "$tmp/${name}.o" 2> "$tmp/cc.err"; then
        passes=$((passes + 1))
      else
        cat "$tmp/cc.err"
        echo "FAIL: $name: $cc $program rejects the generated C"
        fails=$((fails + 1))
      fi
    done
  done
  # -o NAME.cpp writes the same C and NAME.h beside it; as C++ it compiles
  # with g++ (C++11 and C++20) and clang++, warning-free.
  mkdir -p "$tmp/c"
  # shellcheck disable=SC2086
  (cd "$dir" && "$cgc" $args -o "$tmp/c/${name}_graph.cpp" "$name.cgraph")
  if ! cmp -s "$tmp/a/${name}_graph.c" "$tmp/c/${name}_graph.cpp" ||
    ! cmp -s "$tmp/a/${name}_graph.h" "$tmp/c/${name}_graph.h"; then
    echo "FAIL: $name: -o ${name}_graph.cpp did not write the same C and ${name}_graph.h"
    fails=$((fails + 1))
  fi
  for cxx in "g++ -std=c++11 -pedantic" "g++ -std=c++20 -pedantic" "clang++ -std=c++17"; do
    command -v "${cxx%% *}" > /dev/null || continue
    # shellcheck disable=SC2086
    if $cxx -Wall -Wextra -Werror -I "$runtime" -I "$cuda" -c "$tmp/c/${name}_graph.cpp" \
      -o "$tmp/${name}.o" 2> "$tmp/cxx.err"; then
      passes=$((passes + 1))
    else
      cat "$tmp/cxx.err"
      echo "FAIL: $name: $cxx rejects the generated C as C++"
      fails=$((fails + 1))
    fi
  done
  rm -rf "$tmp/a" "$tmp/b" "$tmp/c"
done
# The version guard: the generated header refuses a cgrt.h of another ABI.
mkdir -p "$tmp/abi" "$tmp/guard"
cp "$runtime/cgrt.h" "$tmp/abi/cgrt.h"
sed 's/^#define CGRT_ABI [0-9]*$/#define CGRT_ABI 999/' "$runtime/cgrt_abi.h" > "$tmp/abi/cgrt_abi.h"
printf 'graph g {\n    buffer x: f32[4];\n}\n' > "$tmp/guard/g.cgraph"
"$cgc" -o "$tmp/guard/g_graph.c" "$tmp/guard/g.cgraph"
if ! grep -q '^#define CGRT_ABI 999$' "$tmp/abi/cgrt_abi.h"; then
  echo "FAIL: could not make a cgrt.h of another ABI"
  fails=$((fails + 1))
elif cc -std=c11 -I "$tmp/abi" -I "$cuda" -c "$tmp/guard/g_graph.c" -o "$tmp/g.o" \
  2> "$tmp/guard.err"; then
  echo "FAIL: the generated C compiled against a cgrt.h of another ABI"
  fails=$((fails + 1))
elif ! grep -q 'regenerate it' "$tmp/guard.err"; then
  cat "$tmp/guard.err"
  echo "FAIL: the ABI mismatch was not reported by the #error"
  fails=$((fails + 1))
else
  passes=$((passes + 1))
fi

# Graph variants compiled twice with two prefixes: one program holds both.
mkdir -p "$tmp/pre"
cat > "$tmp/pre/v.cgraph" <<'G'
kernel k(inout x: f32*, n: u32);
graph step for B in [1, 2, 4] {
    buffer x: f32[B, 32];
    k(x, B * 32) grid(B) block(32);
}
G
if ! "$cgc" --prefix=p1_ -o "$tmp/pre/v1.c" "$tmp/pre/v.cgraph" ||
  ! "$cgc" --prefix=p2_ -o "$tmp/pre/v2.c" "$tmp/pre/v.cgraph"; then
  echo "FAIL: variants with --prefix: cgc failed"
  fails=$((fails + 1))
elif ! printf '#include "v1.h"\n#include "v2.h"\nint main(void) { return p1_step_4_pool_bytes() == p2_step_4_pool_bytes() ? 0 : 1; }\n' > "$tmp/pre/main.c" ||
  ! cc -std=c11 -Wall -Wextra -pedantic -Werror -I "$tmp/pre" -I "$runtime" -I "$cuda" \
    -c "$tmp/pre/v1.c" -o "$tmp/pre/v1.o" ||
  ! cc -std=c11 -Wall -Wextra -pedantic -Werror -I "$tmp/pre" -I "$runtime" -I "$cuda" \
    -c "$tmp/pre/v2.c" -o "$tmp/pre/v2.o" ||
  ! cc -std=c11 -Wall -Wextra -pedantic -Werror -I "$tmp/pre" -I "$runtime" -I "$cuda" \
    -c "$tmp/pre/main.c" -o "$tmp/pre/main.o" ||
  ! ld -r "$tmp/pre/v1.o" "$tmp/pre/v2.o" "$tmp/pre/main.o" -o "$tmp/pre/all.o"; then
  echo "FAIL: two prefixed compilations of one program do not link together"
  fails=$((fails + 1))
elif ! nm "$tmp/pre/all.o" | grep -q ' T p1_step_2_create' ||
  ! nm "$tmp/pre/all.o" | grep -q ' T p2_step_2_create'; then
  echo "FAIL: the prefixed variants' functions are not defined"
  fails=$((fails + 1))
else
  passes=$((passes + 1))
fi

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
