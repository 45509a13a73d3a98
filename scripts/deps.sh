#!/usr/bin/env bash
# Installs, from Debian's packages, what the machine lacks for one purpose:
#   deps.sh sample   building cgc and the samples: cmake (3.24 or later),
#                    ninja or make, a C compiler, flex (2.6), bison (3.6)
#   deps.sh test     all of that, and what the whole test run uses: ninja,
#                    valgrind, clang and its fuzzer runtime, universal-ctags,
#                    libtree-sitter (the tree-sitter grammar's test), node
#                    and npm (the editors' tests), cJSON (cgc lsp and its
#                    tests)
# The CUDA Toolkit is not installed (take it from NVIDIA): without nvcc
# only the compiler is built, and this says so.  When something is missing
# and cannot be installed (no apt-get, or neither root nor sudo), it names
# each missing tool and the package that holds it, and exits 1.
set -euo pipefail
purpose=${1:-test}
case $purpose in
  sample | test) ;;
  *)
    echo "usage: deps.sh [sample|test]" >&2
    exit 2
    ;;
esac

need=()    # packages to install
missing=() # what each one is for, in words
want() {   # want PACKAGE WHAT
  need+=("$1")
  missing+=("$2 (Debian package $1)")
}

# The version of a tool, as its --version prints it first: "3.8.2".
version_of() {
  "$@" --version 2> /dev/null | head -1 | grep -Eo '[0-9]+(\.[0-9]+)+' | head -1
}
# at_least VERSION MINIMUM
at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]
}

if ! command -v cmake > /dev/null; then
  want cmake "cmake, 3.24 or later"
elif ! at_least "$(version_of cmake)" 3.24; then
  want cmake "cmake 3.24 or later (this one is $(version_of cmake))"
fi
if [ "$purpose" = test ]; then
  command -v ninja > /dev/null || want ninja-build "ninja"
elif ! command -v ninja > /dev/null && ! command -v make > /dev/null; then
  want ninja-build "ninja (or make)"
fi
command -v cc > /dev/null || want gcc "a C compiler (cc)"
if ! command -v flex > /dev/null; then
  want flex "flex, 2.6 or later"
elif ! at_least "$(version_of flex)" 2.6; then
  want flex "flex 2.6 or later (this one is $(version_of flex))"
fi
if ! command -v bison > /dev/null; then
  want bison "bison, 3.6 or later"
elif ! at_least "$(version_of bison)" 3.6; then
  want bison "bison 3.6 or later (this one is $(version_of bison))"
fi
if [ "$purpose" = test ]; then
  command -v valgrind > /dev/null || want valgrind "valgrind (the diagnostics tests under valgrind)"
  command -v clang > /dev/null || want clang "clang (the fuzzer and the C check)"
  # libFuzzer's runtime, for fuzz/run.sh.
  ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1 ||
    want libclang-rt-14-dev "libFuzzer's runtime (for fuzz/run.sh)"
  # The names test reads every name the C and CUDA headers declare.
  ctags --version 2> /dev/null | grep -q 'Universal Ctags' ||
    want universal-ctags "universal-ctags (the names test)"
  # The tree-sitter grammar's parser is built against the runtime library.
  ls /usr/include/tree_sitter/api.h > /dev/null 2>&1 ||
    want libtree-sitter-dev "libtree-sitter (the tree-sitter grammar's test)"
  # The editors' tests: the VS Code grammar, and packaging the extension.
  command -v node > /dev/null || want nodejs "node (the VS Code extension's tests)"
  command -v npm > /dev/null || want npm "npm (the VS Code extension's tests)"
  # cgc lsp, the language server, and its tests (without it cgc is built
  # without the server).
  [ -f /usr/include/cjson/cJSON.h ] || want libcjson-dev "cJSON (cgc lsp and its tests)"
fi

if ! command -v nvcc > /dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "deps: the CUDA Toolkit (nvcc) is not here, and is not installed by this script" \
    "(https://developer.nvidia.com/cuda-downloads): only the compiler will be built"
fi

((${#need[@]})) || exit 0
sudo=
if [ "$(id -u)" != 0 ]; then
  command -v sudo > /dev/null && sudo=sudo
fi
why=
if ! command -v apt-get > /dev/null; then
  why="there is no apt-get here"
elif [ "$(id -u)" != 0 ] && [ -z "$sudo" ]; then
  why="this is not root and there is no sudo"
fi
if [ -n "$why" ]; then
  echo "deps: cannot install what is missing: $why. Missing:" >&2
  for m in "${missing[@]}"; do
    echo "  - $m" >&2
  done
  echo "deps: install these, then run this again" >&2
  exit 1
fi
echo "deps: installing ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" > /dev/null
