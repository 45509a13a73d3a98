#!/bin/sh
# Every sample given, under compute-sanitizer's racecheck and synccheck with
# CGRT_SANITIZER_SAFE=all,stream (no device-updatable nodes, no
# programmatic edges, and no CUDA graph launched: the nodes one by one on
# the stream, which the tools follow where they may not follow conditional
# nodes), and quick (CGC_SAMPLE_QUICK=1: one timed round, short problems,
# for the tools make each kernel hundreds of times slower): each must run
# to its end (exit 0) with no error reported, in every process it forks
# too.  Skipped (77) without compute-sanitizer or
# without a GPU (the first sample, run plainly, says which).
#   run_sanitizer.sh COMPUTE_SANITIZER SAMPLE...
set -u
. "$(dirname "$0")/check.sh"
sanitizer=$1
shift
command -v "$sanitizer" > /dev/null || { echo "run_sanitizer: no compute-sanitizer"; exit 77; }
"$1" > /dev/null 2>&1
[ $? = 77 ] && { echo "run_sanitizer: no GPU"; exit 77; }
export CGRT_SANITIZER_SAFE=all,stream CGC_SAMPLE_QUICK=1
for tool in racecheck synccheck; do
  for sample; do
    check "$tool $(basename "$sample")" \
      "$sanitizer" --tool "$tool" --error-exitcode 3 --target-processes all "$sample"
  done
done
finish
