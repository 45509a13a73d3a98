#!/bin/sh
# cgc_add_graph in projects of users (tests/cmake/), against the build
# installed to a temporary prefix:
#  - cxx: a project of C++ and CUDA only, whose kernels are a library that
#    includes the generated header through app_graphs; it builds and runs,
#    a second build does nothing, an edited comment rebuilds neither the
#    header nor the kernels, and a changed signature rebuilds both; no
#    companion CUDA file is compiled until a template kernel is added, and
#    then after one build that says so;
#  - cuda_only: neither C nor C++, refused with a clear message;
#  - fetch: cgc through FetchContent from the source tree configures
#    without its tests, samples or benchmarks.
#   run_cmake.sh BUILD_DIR SOURCE_DIR [CUDA_ARCHITECTURES]
set -u
. "$(dirname "$0")/check.sh"
build=$1 src=$2 arch=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v ninja > /dev/null || { echo "no ninja here"; exit 77; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 || cat "$tmp/install.log"
set -- -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix"
[ -n "$arch" ] && set -- "$@" -DCMAKE_CUDA_ARCHITECTURES="$arch"

# project CASE: the case's CMakeLists.txt with tests/link's sources, in $tmp/CASE.
project() {
  mkdir -p "$tmp/$1"
  cp "$src"/tests/link/* "$src/tests/cmake/$1/CMakeLists.txt" "$tmp/$1/"
}
logged() { # logged LOG COMMAND...: runs it, printing LOG if it fails
  l=$1
  shift
  "$@" > "$l" 2>&1 || { cat "$l"; return 1; }
}
mtime() { stat -c %Y.%y "$1"; }

project cxx
p=$tmp/cxx
check "cxx: configures (C++ and CUDA, no C)" logged "$tmp/c.log" cmake -S "$p" -B "$p/b" "$@"
check "cxx: builds" logged "$tmp/b.log" cmake --build "$p/b"
check "cxx: the graph's C is compiled as C++" [ -f "$p/b/cgc_generated/app/step_graph.cpp" ]
check "cxx: no companion CUDA file without template kernels" \
  sh -c '! find "$1" -name "*_templates.cu*" | grep -q .' - "$p/b"
"$p/b/app" > "$tmp/run.log" 2>&1
status=$?
check "cxx: the program runs (or says it needs a GPU)" [ "$status" = 0 -o "$status" = 77 ]
ninja -C "$p/b" > "$tmp/again.log" 2>&1
check "cxx: a second build does nothing" grep -q "no work to do" "$tmp/again.log"
header=$p/b/cgc_generated/app/step_graph.h
kobj=$(find "$p/b" -name 'kernels.cu.o')
check "cxx: the kernels' object is there" [ -f "$kobj" ]
h0=$(mtime "$header") k0=$(mtime "$kobj") c0=$(mtime "$p/b/cgc_generated/app/step_graph.cpp")
sleep 1
{ echo "// an edited comment"; cat "$src/tests/link/step.cgraph"; } > "$p/step.cgraph"
check "cxx: builds after a comment is added" logged "$tmp/b.log" cmake --build "$p/b"
check "cxx: cgc ran again (the C's line numbers moved)" [ "$(mtime "$p/b/cgc_generated/app/step_graph.cpp")" != "$c0" ]
check "cxx: the header was not rewritten" [ "$(mtime "$header")" = "$h0" ]
check "cxx: the kernels were not rebuilt" [ "$(mtime "$kobj")" = "$k0" ]
ninja -C "$p/b" > "$tmp/again.log" 2>&1
check "cxx: then a build does nothing" grep -q "no work to do" "$tmp/again.log"
sed 's/inout x: f32\*, a: f32/inout x: f32*, a: f32, b: f32/; s/scale(x, 2.0, N)/scale(x, 2.0, 0.0, N)/' \
  "$src/tests/link/step.cgraph" > "$p/step.cgraph"
sed 's/float a, uint32_t n/float a, float b, uint32_t n/; s/x\[i\] \*= a/x[i] = x[i] * a + b/' \
  "$src/tests/link/kernels.cu" > "$p/kernels.cu"
check "cxx: builds after a parameter is added" logged "$tmp/b.log" cmake --build "$p/b"
check "cxx: the header was rewritten" [ "$(mtime "$header")" != "$h0" ]
check "cxx: the kernels were rebuilt" [ "$(mtime "$kobj")" != "$k0" ]
# A template kernel added since CMake ran: the first build fails saying so,
# the next runs CMake again and compiles the companion.
cp "$src/doc/examples/scale.cuh" "$p/"
{ sed '$d' "$p/step.cgraph"
  echo '    node t = scale4(x, 0.5, N) grid(cdiv(N, 256)) block(256);'
  echo '}'
  echo 'kernel scale4 = scale<float, 4>(inout x: f32*, s: f32, n: u32) from "scale.cuh";'
} > "$p/step.cgraph.new" && mv "$p/step.cgraph.new" "$p/step.cgraph"
cmake --build "$p/b" > "$tmp/t.log" 2>&1
check "cxx: a template kernel added since CMake ran fails the build once" [ "$?" != 0 ]
check "cxx: and says why" grep -q "step.cgraph now uses template kernels" "$tmp/t.log"
check "cxx: the next build compiles their companion" logged "$tmp/b.log" cmake --build "$p/b"
check "cxx: the companion is compiled" \
  sh -c 'find "$1" -name "step_graph_templates.cu.o" | grep -q .' - "$p/b"

project cuda_only
cmake -S "$tmp/cuda_only" -B "$tmp/cuda_only/b" "$@" > "$tmp/cuda.log" 2>&1
check "cuda_only: refused" [ "$?" != 0 ]
check "cuda_only: says why" grep -q "cgc_add_graph(app): the generated C needs the C or CXX language" \
  "$tmp/cuda.log"

project fetch
p=$tmp/fetch
check "fetch: configures" logged "$tmp/f.log" cmake -S "$p" -B "$p/b" "$@" -DCGC_SOURCE_DIR="$src"
ninja -C "$p/b" -t targets all > "$tmp/targets" 2>&1
check "fetch: the compiler is a target" grep -q "/compiler/cgc:" "$tmp/targets"
check "fetch: the runtime is a target" grep -q "libcgrt.a:" "$tmp/targets"
check "fetch: the program is a target" grep -q "^app:" "$tmp/targets"
for t in decode_step test_values cgc_limits test_types bench; do
  check "fetch: no target $t" sh -c "! grep -q '[/]$t:\|^$t:' '$tmp/targets'"
done
(cd "$p/b" && ctest -N) > "$tmp/ctest.log" 2>&1
check "fetch: no tests" grep -q "Total Tests: 0" "$tmp/ctest.log"
finish
