#!/usr/bin/env bash
# Builds the fuzzer (clang, -fsanitize=fuzzer,address,undefined) and fuzzes
# the whole compiler for SECONDS (default 120), starting from every .cgraph
# of the project, the hostile shapes in fuzz/seeds/ (line breaks, limits,
# values at the edge of their types), the modules of tests/diag/modules
# and the language's dictionary.  It runs from the repository's root, where
# `from` paths in the seeds find those modules.  Then it fuzzes the
# DeepSeek-V2-Lite sample's safetensors reader for ST_SECONDS (default: 30,
# or SECONDS if less) from fuzz/safetensors/.  Any crash, leak, hang or
# sanitizer report fails the run and leaves the input in fuzz/findings/.
#   bash fuzz/run.sh [SECONDS] [JOBS] [ST_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
jobs=${2:-1}
st_seconds=${3:-$((seconds < 30 ? seconds : 30))}
if ! command -v clang > /dev/null; then
  echo "fuzz: no clang here; not fuzzing"
  exit 0
fi
cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
  -DCGC_SANITIZE=ON -DCGC_FUZZ=ON -DCGC_GPU=OFF -DBUILD_TESTING=OFF > /dev/null
cmake --build build-fuzz --target fuzz_cgc fuzz_safetensors
corpus=build-fuzz/corpus
mkdir -p "$corpus" fuzz/findings
cp samples/*/*.cgraph tests/*/*.cgraph tests/diag/inc/*.cgraph bench/*.cgraph fuzz/seeds/*.cgraph "$corpus/" 2> /dev/null || true
# Modules of every format, whole and broken, for the module readers.
for f in tests/diag/modules/*; do cp "$f" "$corpus/module_$(basename "$f")"; done
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  build-fuzz/fuzz/fuzz_cgc -dict=fuzz/cgraph.dict -max_total_time="$seconds" -timeout=20 \
  -rss_limit_mb=4096 -max_len=8192 -jobs="$jobs" -workers="$jobs" \
  -artifact_prefix=fuzz/findings/ "$corpus" 2>&1 | tail -5
st_corpus=build-fuzz/corpus_safetensors
mkdir -p "$st_corpus"
cp fuzz/safetensors/* "$st_corpus/"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  build-fuzz/fuzz/fuzz_safetensors -dict=fuzz/safetensors.dict -max_total_time="$st_seconds" \
  -timeout=20 -rss_limit_mb=4096 -max_len=4096 -jobs="$jobs" -workers="$jobs" \
  -artifact_prefix=fuzz/findings/safetensors- "$st_corpus" 2>&1 | tail -5
found=$(ls fuzz/findings | grep -c -E '^(safetensors-)?(crash|leak|timeout|oom|slow-unit)-' || true)
if [ "$found" != 0 ]; then
  ls -la fuzz/findings
  echo "fuzz: $found findings in fuzz/findings/"
  exit 1
fi
echo "fuzz: $seconds s (and $st_seconds s of the safetensors reader), no findings"
