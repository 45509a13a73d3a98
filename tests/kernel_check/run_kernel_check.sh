#!/bin/sh
# run_kernel_check.sh CGC CGC_GRAPH_CMAKE RUNTIME_INCLUDE NVCC: a kernel's CUDA
# definition that differs from its .cgraph declaration fails with a message
# that names the kernel, the parameter and the type the .cgraph means
# (doc/language.md, section 6.1), through the check that cgc_add_graph's
# launcher runs (cmake/CgcGraph.cmake); one that matches compiles cleanly.
# Compile only: no GPU.  Skipped (77) without nvcc.
cgc=$1 script=$2 runtime=$3 nvcc=$4
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  echo "kernel_check: skipped: nvcc not found"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
(cd "$here" && "$cgc" residual.cgraph -o "$dir/residual_graph.c") || exit 1

# compile NAME.cu: through the launcher, as cgc_add_graph's targets compile.
compile() {
  cmake -DCGC_CHECK_DIR="$dir" -P "$script" -- "$nvcc" -arch=sm_75 -I"$dir" -I"$runtime" \
    -MD -MT "$dir/$1.o" -MF "$dir/$1.d" -x cu -c "$dir/$1.cu" -o "$dir/$1.o" >"$dir/$1.out" 2>&1
}

cp "$here/match.cu" "$dir/match.cu"
if ! compile match || [ -s "$dir/match.out" ]; then
  echo "FAIL match.cu: a matching definition does not compile cleanly:"
  cat "$dir/match.out"
  fail=1
fi

# mismatch NAME DEFINITION EXPECTED...: DEFINITION fails, with each EXPECTED.
mismatch() {
  name=$1 definition=$2
  shift 2
  printf '#include "residual_graph.h"\n%s\nextern "C" __global__ void tick() {}\n' \
    "$definition" >"$dir/$name.cu"
  if compile "$name"; then
    echo "FAIL $name: compiled: $definition"
    fail=1
    return
  fi
  for want in "$@"; do
    if ! grep -qF "$dir/$name.cu: error: $want" "$dir/$name.out"; then
      echo "FAIL $name: no '$want' in:"
      cat "$dir/$name.out"
      fail=1
    fi
  done
  [ -e "$dir/$name.o.cgc-check.cu" ] && { echo "FAIL $name: the check's file is left"; fail=1; }
}

mismatch const_inout \
  'extern "C" __global__ void residual(const __half *x, const __half *y, uint32_t n) {}' \
  "kernel 'residual', parameter 1 'x': the .cgraph declares 'inout x: f16*', which is '__half *'"
mismatch in_not_const \
  'extern "C" __global__ void residual(__half *x, __half *y, int n) {}' \
  "kernel 'residual', parameter 2 'y': the .cgraph declares 'in y: f16*', which is 'const __half *'" \
  "kernel 'residual', parameter 3 'n': the .cgraph declares 'n: u32', which is 'uint32_t'"
mismatch missing \
  'extern "C" __global__ void residual(__half *x, const __half *y) {}' \
  "kernel 'residual': the .cgraph declares 3 parameters (inout x: f16*, in y: f16*, n: u32), which in C++ are (__half *, const __half *, uint32_t)"
mismatch bf16 \
  'extern "C" __global__ void residual(__nv_bfloat16 *x, const __half *y, uint32_t n) {}' \
  "kernel 'residual', parameter 1 'x': the .cgraph declares 'inout x: f16*', which is '__half *'"

[ $fail = 0 ] && echo "kernel_check: PASS"
exit $fail
