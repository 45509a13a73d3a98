#!/bin/sh
# run_kernel_check.sh CGC CGC_GRAPH_CMAKE RUNTIME_INCLUDE NVCC: a kernel's CUDA
# definition that differs from its .cgraph declaration fails with a message
# that names the kernel, the parameter and the type the .cgraph means
# (doc/language.md, section 6.1), through the check that cgc_add_graph's
# launcher runs (cmake/CgcGraph.cmake); one that matches compiles cleanly.
# The same for a template kernel (section 6.5), which the companion file
# OUT_templates.cu checks itself.
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

# template NAME TEMPLATES EXPECTED...: the companion of templates.cgraph,
# with TEMPLATES in templates.cuh, compiles cleanly (no EXPECTED) or fails
# with each EXPECTED, nvcc's static assertion, after which the launcher
# says it again.  The accessors are defined either way.
template() {
  name=$1 templates=$2
  shift 2
  mkdir "$dir/$name"
  cp "$here/templates.cgraph" "$dir/$name/templates.cgraph"
  printf '#include <stdint.h>\n#include <cuda_fp16.h>\n%s\n' "$templates" >"$dir/$name/templates.cuh"
  (cd "$dir/$name" && "$cgc" templates.cgraph) || { fail=1; return; }
  out=$dir/$name/templates_graph_templates
  cmake -DCGC_CHECK_DIR="$dir/$name" -P "$script" -- "$nvcc" -arch=sm_75 -I"$dir/$name" \
    -I"$runtime" -x cu -c "$out.cu" -o "$out.o" >"$out.out" 2>&1
  rc=$?
  if [ $# = 0 ]; then
    if [ $rc != 0 ] || [ -s "$out.out" ]; then
      echo "FAIL $name: a matching template does not compile cleanly:"
      cat "$out.out"
      fail=1
    elif [ "$(nm "$out.o" | grep -c ' W cgc_template_\(res\|deduced\)_')" != 2 ]; then
      echo "FAIL $name: the accessors are not both defined:"
      nm "$out.o"
      fail=1
    fi
    return
  fi
  if [ $rc = 0 ]; then
    echo "FAIL $name: compiled: $templates"
    fail=1
    return
  fi
  for want in "$@"; do
    if ! grep -qF "error: static assertion failed with \"$want\"" "$out.out" ||
       ! grep -qF "$out.cu: error: $want" "$out.out"; then
      echo "FAIL $name: no '$want' (nvcc's, then the launcher's) in:"
      cat "$out.out"
      fail=1
    fi
  done
}

n_deduced='template <class T, class N> __global__ void residual_n(T *x, const T *y, N n) {}'
template template_match \
  "template <class T, int K> __global__ void residual(T *__restrict__ x, const T y[], const uint32_t n) {}
$n_deduced"
template template_in_not_const \
  "template <class T, int K> __global__ void residual(T *x, T *y, int n) {}
$n_deduced" \
  "kernel 'res', parameter 2 'y': the .cgraph declares 'in y: f16*', which is 'const __half *'" \
  "kernel 'res', parameter 3 'n': the .cgraph declares 'n: u32', which is 'uint32_t'"
template template_missing \
  "template <class T, int K> __global__ void residual(T *x, const T *y) {}
$n_deduced" \
  "kernel 'res': the .cgraph declares 3 parameters (inout x: f16*, in y: f16*, n: u32), which in C++ are (__half *, const __half *, uint32_t)"

[ $fail = 0 ] && echo "kernel_check: PASS"
exit $fail
