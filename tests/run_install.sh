#!/bin/sh
# Installs the build to a temporary prefix and builds samples/external, an
# outside project that finds cgc with find_package(cgc) alone.
#   run_install.sh BUILD_DIR SOURCE_DIR [CUDA_ARCHITECTURES]
set -u
. "$(dirname "$0")/check.sh"
build=$1 src=$2 arch=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 || cat "$tmp/install.log"
p=$tmp/prefix
check "cgc is installed" [ -x "$p/bin/cgc" ]
check "the static runtime is installed" [ -f "$p/lib/libcgrt.a" ]
check "the shared runtime is installed" [ -f "$p/lib/libcgrt.so" ]
check "cgrt.h is installed" [ -f "$p/include/cgrt.h" ]
check "the man page is installed" [ -f "$p/share/man/man1/cgc.1" ]
check "the language reference is installed" [ -f "$p/share/doc/cgc/language.md" ]
check "the CMake package is installed" [ -f "$p/lib/cmake/cgc/cgcConfig.cmake" ]
check "the pkg-config file is installed" [ -f "$p/lib/pkgconfig/cgrt.pc" ]
check "the installed cgc runs" "$p/bin/cgc" --version
if [ -f "$p/lib/libcgrt_nccl.a" ]; then
  check "cgrt_nccl.h is installed with libcgrt_nccl" [ -f "$p/include/cgrt_nccl.h" ]
else
  check "cgrt_nccl.h is not installed without libcgrt_nccl" [ ! -e "$p/include/cgrt_nccl.h" ]
fi
check "cgrt.pc's prefix is where it was installed" grep -qx "prefix=$p" "$p/lib/pkgconfig/cgrt.pc"

if command -v pkg-config > /dev/null; then
  flags=$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs cgrt)
  printf '#include "cgrt.h"\nint main(void) { return cgrt_last_error()[0]; }\n' > "$tmp/pc.c"
  # shellcheck disable=SC2086
  check "pkg-config's flags compile and link a program" cc "$tmp/pc.c" -o "$tmp/pc" $flags
  check "pkg-config's rpath is PREFIX/lib" \
    sh -c 'case " $1 " in *" -Wl,-rpath,$2/lib "*) ;; *) echo "$1"; exit 1 ;; esac' - "$flags" "$p"
  check "the program finds the shared runtime at run time" "$tmp/pc"
fi

set -- -S "$src/samples/external" -B "$tmp/ext" -DCMAKE_PREFIX_PATH="$p"
[ -n "$arch" ] && set -- "$@" -DCMAKE_CUDA_ARCHITECTURES="$arch"
check "the outside project configures with find_package(cgc)" \
  sh -c 'cmake "$@" > "$0/configure.log" 2>&1 || { cat "$0/configure.log"; exit 1; }' "$tmp" "$@"
check "the outside project builds" \
  sh -c 'cmake --build "$0/ext" > "$0/build.log" 2>&1 || { cat "$0/build.log"; exit 1; }' "$tmp"
check "it ran the installed cgc" [ -f "$tmp/ext/cgc_generated/saxpy/saxpy_graph.c" ]
"$tmp/ext/saxpy"
status=$?
check "the outside program works (or says it needs a GPU)" [ "$status" = 0 -o "$status" = 77 ]
finish
