#!/bin/sh
# Names the generated C can use: for each program, the C compiles with gcc
# and clang under -std=c11 and -std=gnu11 (where linux is a macro) with
# -Wall -Wextra -pedantic -Werror, the header with g++ as C++17, and the
# .cu file beside the program, which includes the header, with nvcc.
#   run_names.sh CGC RUNTIME_DIR CUDA_INCLUDE_DIR NVCC PROGRAM.cgraph...
# A program's first lines may say
#   // cgc-output: OUT.c         the C file's name (the header's follows)
#   // header-has: TEXT          a line the header must hold
# Exits 77 (skipped) after the other checks when nvcc is missing.
set -u
cgc=$1 runtime=$2 cuda=$3 nvcc=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
fail() {
  echo "FAIL: $1"
  fails=$((fails + 1))
}
for src in "$@"; do
  name=$(basename "$src" .cgraph)
  dir=$(cd "$(dirname "$src")" && pwd)
  out=$(sed -n 's|^// cgc-output: ||p' "$src")
  out=${out:-${name}_graph.c}
  mkdir -p "$tmp/$name"
  # The programs declare names, not work: buffers no node uses are theirs.
  if ! (cd "$dir" && "$cgc" -Wno-unused -o "$tmp/$name/$out" "$name.cgraph" 2> "$tmp/cgc.err"); then
    cat "$tmp/cgc.err"
    fail "$name: cgc failed"
    continue
  fi
  if [ -s "$tmp/cgc.err" ]; then
    cat "$tmp/cgc.err"
    fail "$name: cgc warned"
  fi
  header=$tmp/$name/${out%.c}.h
  sed -n 's|^// header-has: ||p' "$src" | while IFS= read -r line; do
    grep -qxF "$line" "$header" || echo "$line"
  done > "$tmp/missing"
  [ -s "$tmp/missing" ] && fail "$name: the header lacks $(cat "$tmp/missing")"
  for cc in gcc clang; do
    command -v $cc > /dev/null || continue
    for std in c11 gnu11; do
      if $cc -std=$std -Wall -Wextra -pedantic -Werror -I "$runtime" -I "$cuda" \
        -c "$tmp/$name/$out" -o "$tmp/$name/c.o" 2> "$tmp/err"; then
        passes=$((passes + 1))
      else
        cat "$tmp/err"
        fail "$name: $cc -std=$std rejects the generated C"
      fi
    done
  done
  printf '#include "%s"\n' "$(basename "$header")" > "$tmp/$name/header.cpp"
  if g++ -std=c++17 -Wall -Wextra -pedantic -Werror -I "$runtime" -isystem "$cuda" \
    -c "$tmp/$name/header.cpp" -o "$tmp/$name/cpp.o" 2> "$tmp/err"; then
    passes=$((passes + 1))
  else
    cat "$tmp/err"
    fail "$name: g++ rejects the header"
  fi
  if [ -f "$dir/$name.cu" ] && [ -x "$nvcc" ]; then
    cp "$dir/$name.cu" "$tmp/$name/"
    if "$nvcc" -Werror all-warnings -I "$runtime" -c "$tmp/$name/$name.cu" \
      -o "$tmp/$name/cu.o" 2> "$tmp/err"; then
      passes=$((passes + 1))
    else
      cat "$tmp/err"
      fail "$name: nvcc rejects $name.cu"
    fi
  fi
done
echo "$passes passed, $fails failed"
[ "$fails" = 0 ] || exit 1
if ! [ -x "$nvcc" ]; then
  echo "SKIP: no nvcc for the .cu files"
  exit 77
fi
