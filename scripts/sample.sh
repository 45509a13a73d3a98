#!/usr/bin/env bash
# Sets up and builds what the decode_step sample needs (cgc, the runtime
# library, the sample), then runs it: 64 positions of a 4-layer decode step
# from one instantiated graph, checked against a CPU reference.  The CUDA
# code is built for the GPU that is here (CMake's `native`); without a GPU,
# for CMake's default architecture, and it says that running needs one.
# It installs only what building needs (scripts/deps.sh sample).  The tests
# are the second command's: scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh sample
# Ninja where there is one, else make; a build folder keeps its generator.
configure=(-S . -B build)
if [ ! -f build/CMakeCache.txt ]; then
  if command -v ninja > /dev/null; then
    configure+=(-G Ninja)
  else
    configure+=(-G "Unix Makefiles")
  fi
fi
# The GPU's architecture, as nvidia-smi reports its compute capability.
gpu=$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2> /dev/null | head -1 || true)
if [ -n "$gpu" ]; then
  echo "sample: building the CUDA code for this machine's GPU ($gpu): CMAKE_CUDA_ARCHITECTURES=native"
  configure+=(-DCMAKE_CUDA_ARCHITECTURES=native)
else
  echo "sample: no GPU found (nvidia-smi lists none): building for CMake's default CUDA" \
    "architecture; set CMAKE_CUDA_ARCHITECTURES in build/CMakeCache.txt to choose another"
fi
cmake "${configure[@]}"
arch=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' build/CMakeCache.txt)
[ -n "$arch" ] && echo "sample: CMAKE_CUDA_ARCHITECTURES is $arch"

jobs=$(nproc 2> /dev/null || echo 2)
if grep -q '^CMAKE_CUDA_COMPILER:[A-Z]*=.' build/CMakeCache.txt &&
  [ -d build/samples/decode_step ]; then
  cmake --build build -j "$jobs" --target cgc cgrt decode_step
else
  cmake --build build -j "$jobs" --target cgc
fi
echo "sample: cgc is $PWD/build/compiler/cgc"
if [ ! -x build/samples/decode_step/decode_step ]; then
  echo "sample: no CUDA compiler was found, so only cgc was built; checking the sample:"
  build/compiler/cgc --check samples/decode_step/decode_step.cgraph && echo "decode_step.cgraph: OK"
  exit 0
fi
status=0
build/samples/decode_step/decode_step || status=$?
[ "$status" = 77 ] && status=0 # no GPU: built, not run
exit "$status"
