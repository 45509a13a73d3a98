#!/usr/bin/env bash
# Sets up and runs every test: a normal build (GPU tests report skipped
# where there is no GPU), the compiler built with -fsanitize=address,undefined,
# two minutes of fuzzing, and the diagnostics tests under valgrind.  Any
# failure, sanitizer report, fuzzer finding or valgrind report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh test
jobs=$(nproc 2> /dev/null || echo 2)

echo "== build and test"
cmake -S . -B build -G Ninja > /dev/null
cmake --build build
ctest --test-dir build -j "$jobs" --output-on-failure

echo "== build and test the compiler with AddressSanitizer and UndefinedBehaviorSanitizer"
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCGC_SANITIZE=ON -DCGC_GPU=OFF \
  > /dev/null
cmake --build build-sanitize
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -j "$jobs" --output-on-failure

echo "== fuzzing the compiler for 120 s and the safetensors reader for 30 s (libFuzzer, ASan, UBSan)"
bash fuzz/run.sh 120

echo "== diagnostics tests under valgrind"
CGC_VALGRIND=1 ctest --test-dir build -L diag -j "$jobs" --output-on-failure
