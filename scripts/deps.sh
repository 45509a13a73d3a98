#!/usr/bin/env bash
# Installs what building cgc needs and the machine lacks: flex, bison,
# cmake, ninja, valgrind, clang and universal-ctags, from Debian's packages.
set -euo pipefail
need=()
command -v flex > /dev/null || need+=(flex)
command -v bison > /dev/null || need+=(bison)
command -v cmake > /dev/null || need+=(cmake)
command -v ninja > /dev/null || need+=(ninja-build)
command -v valgrind > /dev/null || need+=(valgrind)
command -v cc > /dev/null || need+=(gcc)
command -v clang > /dev/null || need+=(clang)
# The names test reads every name the C and CUDA headers declare.
ctags --version 2> /dev/null | grep -q 'Universal Ctags' || need+=(universal-ctags)
# libFuzzer's runtime, for fuzz/run.sh.
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a > /dev/null 2>&1 ||
  need+=(libclang-rt-14-dev)
if ((${#need[@]})); then
  echo "deps: installing ${need[*]}"
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" > /dev/null
fi
