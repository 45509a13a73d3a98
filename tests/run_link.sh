#!/bin/sh
# doc/building.md's link lines outside CMake: installs the build to a temporary
# prefix, takes the lines of doc/building.md's block that begins "# Building
# without CMake", and runs each on tests/link/ (step.cgraph, kernels.cu,
# main.c, main.cpp).  After each line that writes `app`, the program must run: exit
# 0, or 77 where there is no GPU.  The static ones must not need
# libcgrt.so, and each program must hold one CUDA runtime.
#   run_link.sh BUILD_DIR SOURCE_DIR CUDA_DIR
set -u
. "$(dirname "$0")/check.sh"
build=$1 src=$2 cuda=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v gcc > /dev/null || { echo "no gcc here"; exit 77; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" 2>&1 || cat "$tmp/install.log"
check "the build installs" [ -x "$tmp/prefix/bin/cgc" ]
awk '/^```/ { if (take) exit; inside = !inside; next }
     inside && /^# Building without CMake/ { take = 1 }
     take && !/^#/ && NF' "$src/doc/building.md" > "$tmp/lines"
check "doc/building.md has the block" [ "$(grep -c -- '-o app$' "$tmp/lines")" = 5 ]

mkdir "$tmp/work"
cp "$src"/tests/link/* "$tmp/work/"
cd "$tmp/work" || exit 1
export PREFIX="$tmp/prefix" CUDA="$cuda" PATH="$tmp/prefix/bin:$PATH"
n=0
while IFS= read -r line; do
  check "$line" sh -c "$line"
  case $line in
    *"-o app")
      n=$((n + 1))
      ./app > run.log 2>&1
      status=$?
      check "app $n runs (or says it needs a GPU)" [ "$status" = 0 -o "$status" = 77 ]
      [ "$status" = 0 -o "$status" = 77 ] || cat run.log
      case $line in
        *libcgrt.a*) check "app $n does not need libcgrt.so" sh -c '! ldd ./app | grep -q libcgrt' ;;
        *) check "app $n finds libcgrt.so in the prefix" sh -c 'ldd ./app | grep -q "libcgrt.so.* => $PREFIX/lib/"' ;;
      esac
      # A runtime linked statically into app, beside a shared one, is two.
      if ldd ./app | grep -q libcudart; then
        check "app $n holds one CUDA runtime" sh -c '! nm ./app | grep -q " T cudaGetDeviceCount"'
      fi
      rm -f app
      ;;
  esac
done < "$tmp/lines"
check "five programs were linked" [ "$n" = 5 ]
finish
