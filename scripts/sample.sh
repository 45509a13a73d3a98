#!/usr/bin/env bash
# Sets up, builds cgc and runs it on the bundled sample: checks
# samples/decode_step/decode_step.cgraph and prints its graph as DOT.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja > /dev/null
cmake --build build
build/compiler/cgc --check samples/decode_step/decode_step.cgraph
echo "cgc: samples/decode_step/decode_step.cgraph checks; its graph:"
build/compiler/cgc --emit=dot samples/decode_step/decode_step.cgraph
