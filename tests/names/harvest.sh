#!/bin/sh
# Every name the generated C's environment declares is one cgc refuses for
# a kernel: the macros and the names at file scope that gcc and clang (C11,
# GNU11) see in the generated C and g++ in its header, and those CUDA's
# headers declare in a .cu file that includes it (nvcc includes glibc's
# POSIX and GNU names there too, which cgc does not know; the reference
# says so).  Names beginning with '_' are left out: cgc refuses them all at
# file scope.
#   harvest.sh CGC RUNTIME_DIR CUDA_INCLUDE_DIR NVCC
# Exits 77 (skipped) without universal-ctags or nvcc.
set -u
cgc=$1 runtime=$2 cuda=$3 nvcc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! ctags --version 2> /dev/null | grep -q 'Universal Ctags' || ! [ -x "$nvcc" ]; then
  echo "SKIP: needs universal-ctags and nvcc"
  exit 77
fi
cd "$tmp" || exit 1
cat > probe.cgraph <<'G'
kernel probe_k(x: f32*, h: f16, b: bf16);
graph probe_g {
    buffer x: f32[4];
    node a = probe_k(x, 1.0, 1.0) grid(1) block(1);
}
G
"$cgc" probe.cgraph -o probe_graph.c || exit 1
printf '#include "probe_graph.h"\n' > probe.cpp
cp probe.cpp probe.cu

# The names declared at file scope in a preprocessed file ($1, language $2);
# with $3, only those declared in files under $3.
file_scope() {
  ctags --language-force="$2" --kinds-"$2"=+p-m --fields=+nZ -x \
    --_xformat='%N %n %{scope}' -o - "$1" 2> /dev/null |
    awk '$3 == "" || $3 == "-" { print $1, $2 }' > tags
  if [ $# -lt 3 ]; then
    cut -d' ' -f1 tags
  else
    awk -v dir="$3" 'NR == FNR { if ($0 ~ /^# [0-9]+ "/) f = $3; file[FNR] = f; next }
      index(file[$2], dir) { print $1 }' "$1" tags
  fi
}

for cc in gcc clang; do
  command -v $cc > /dev/null || continue
  for std in c11 gnu11; do
    $cc -std=$std -I "$runtime" -I "$cuda" -E probe_graph.c > c.i &&
      $cc -std=$std -I "$runtime" -I "$cuda" -dM -E probe_graph.c > c.dM || exit 1
    file_scope c.i C >> names
    sed -n 's/^#define \([A-Za-z0-9_]*\).*/\1/p' c.dM >> names
  done
done
g++ -std=c++17 -I "$runtime" -I "$cuda" -E probe.cpp > cpp.i &&
  g++ -std=c++17 -I "$runtime" -I "$cuda" -dM -E probe.cpp > cpp.dM || exit 1
file_scope cpp.i C++ >> names
sed -n 's/^#define \([A-Za-z0-9_]*\).*/\1/p' cpp.dM >> names
"$nvcc" -I "$runtime" -E probe.cu -o cu.i && "$nvcc" -I "$runtime" -E -Xcompiler -dD probe.cu -o cu.dD ||
  exit 1
cudadir=$(dirname "$(dirname "$nvcc")")
file_scope cu.i C++ "$cudadir" >> names
awk -v dir="$cudadir" '/^# [0-9]+ "/ { f = $3 } /^#define / && index(f, dir) { print $2 }' cu.dD |
  sed 's/(.*//' >> names

sort -u names | grep -v '^_' | grep -v -i '^probe_' > harvested
fails=0
while read -r name; do
  printf 'kernel %s(x: u32);\n' "$name" > one.cgraph
  if "$cgc" --check one.cgraph > /dev/null 2>&1; then
    echo "FAIL: kernel '$name' is accepted, but the generated C's environment declares it"
    fails=$((fails + 1))
  fi
done < harvested
echo "$(wc -l < harvested) names harvested, $fails accepted"
[ "$fails" = 0 ]
