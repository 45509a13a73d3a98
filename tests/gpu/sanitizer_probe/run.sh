#!/bin/sh
# Runs every sanitizer probe (README.md) plainly and under compute-sanitizer's
# racecheck and synccheck, several at once, each run stopped after
# PROBE_TIMEOUT seconds (60), and prints a line a probe:
#
#   probe  plain-rc  racecheck-rc first-error  synccheck-rc first-error
#
#   run.sh BUILD_DIR            the probes (about 2 minutes on an H200)
#   run.sh --samples BUILD_DIR  and the samples, plainly and with
#                               CGRT_SANITIZER_SAFE=1 and =stream (a few
#                               minutes more: some samples time out)
#   run.sh --plain BUILD_DIR    plainly only: exit 0 when every probe ran
#                               right, 1 when one did not, 77 without a GPU
#                               (the test gpu.sanitizer_probes)
#
# A probe named cgc:NAME+safe runs with CGRT_SANITIZER_SAFE=1, +stream with
# CGRT_SANITIZER_SAFE=stream (no CUDA graph launched at all).  rc 124 is
# a timeout; the sanitizer's own errors exit 3.  COMPUTE_SANITIZER names
# the tool (else compute-sanitizer on PATH or in CUDA's bin); PROBE_JOBS
# the runs at once (12); PROBE_ONLY a grep pattern of the probes to run;
# PROBE_SANITIZER_ARGS more options for the tool (for a bisection:
# --kernel-name-exclude kns=cgrt_ leaves the runtime's own kernels out).
# The logs stay in $PROBE_LOGS (else a new temporary folder, printed at
# the end; removed after a --plain run that passed).
set -u

# One run: `run.sh --one LOGS TOOL KEY` (TOOL plain, racecheck or
# synccheck), its rc into LOGS/KEY.TOOL.rc and its output into .log.
if [ "${1:-}" = --one ]; then
  logs=$2 tool=$3 key=$4
  probe=${key%+*}
  bin=$(cat "$logs/bin.$probe")
  arg=$(cat "$logs/arg.$probe")
  case $key in
  *+safe) set -- env CGRT_SANITIZER_SAFE=1 ;;
  *+stream) set -- env CGRT_SANITIZER_SAFE=stream ;;
  *) set -- env -u CGRT_SANITIZER_SAFE ;;
  esac
  # shellcheck disable=SC2086 # PROBE_SANITIZER_ARGS: words, split
  [ "$tool" != plain ] && set -- "$@" "$(cat "$logs/sanitizer")" --tool "$tool" \
    --error-exitcode 3 --print-limit 20 --target-processes all ${PROBE_SANITIZER_ARGS:-}
  timeout -k 5 "${PROBE_TIMEOUT:-60}" "$@" "$bin" $arg > "$logs/$key.$tool.log" 2>&1
  echo $? > "$logs/$key.$tool.rc"
  exit 0
fi

plain=0 samples=0
case "${1:-}" in
--plain) plain=1; shift ;;
--samples) samples=1; shift ;;
esac
[ $# = 1 ] || { echo "usage: run.sh [--plain | --samples] BUILD_DIR" >&2; exit 2; }
build=$1
raw=$build/tests/gpu/sanitizer_probe/raw_probes
cgc=$build/tests/gpu/sanitizer_probe/cgc_probes
for b in "$raw" "$cgc"; do
  [ -x "$b" ] || { echo "run.sh: no $b (build the GPU tests first)" >&2; exit 2; }
done
"$raw" stream_smem > /dev/null 2>&1
case $? in
0) ;;
77) echo "run.sh: skipped: no GPU"; exit 77 ;;
*) echo "run.sh: raw_probes stream_smem fails without a sanitizer:"; "$raw" stream_smem; exit 1 ;;
esac

logs=${PROBE_LOGS:-$(mktemp -d /tmp/sanitizer_probe.XXXXXX)}
mkdir -p "$logs"
tools="plain"
if [ "$plain" = 0 ]; then
  sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || true)}
  for dir in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do
    [ -z "$sanitizer" ] && [ -x "$dir/compute-sanitizer" ] && sanitizer=$dir/compute-sanitizer
  done
  [ -n "$sanitizer" ] || { echo "run.sh: no compute-sanitizer (set COMPUTE_SANITIZER)" >&2; exit 2; }
  echo "$sanitizer" > "$logs/sanitizer"
  tools="plain racecheck synccheck"
fi

# The probes, in order: KEY, its program and its argument.
keys=
add() { # add KEY BIN ARG
  keys="$keys $1"
  echo "$2" > "$logs/bin.$1"
  echo "$3" > "$logs/arg.$1"
}
for name in $("$raw" --list); do
  add "raw:$name" "$raw" "$name"
done
safe_keys=
for name in $("$cgc" --list); do
  add "cgc:$name" "$cgc" "$name"
  case $name in
  *handle*) ;; # a kernel that sets its handle: create refuses it without the graph
  *) safe_keys="$safe_keys cgc:$name+stream" ;;
  esac
done
# Those that CGRT_SANITIZER_SAFE=1 changes, again with it, and every cgc
# probe and sample with =stream (the keys share their program and
# argument).
safe_keys="cgc:devupd+safe cgc:devgrid+safe cgc:programmatic+safe cgc:while_pdl+safe $safe_keys"
if [ "$samples" = 1 ]; then
  for s in decode_step moe_route solver dense_block generate tensor_parallel1 compartments; do
    b=$(find "$build/samples" -type f -perm -u+x -name "$s" 2> /dev/null | head -n 1)
    [ -n "$b" ] && add "sample:$s" "$b" "" && safe_keys="$safe_keys sample:$s+safe sample:$s+stream"
  done
fi
for k in $safe_keys; do # those whose probe is there
  [ -f "$logs/bin.${k%+*}" ] && keys="$keys $k"
done
if [ -n "${PROBE_ONLY:-}" ]; then
  keys=$(for k in $keys; do echo "$k"; done | grep -e "$PROBE_ONLY" | tr '\n' ' ')
fi

# Every run, several at once: the plain runs first.
for tool in $tools; do
  for k in $keys; do
    echo "$tool $k"
  done
done | xargs -P "${PROBE_JOBS:-12}" -n 2 sh "$0" --one "$logs"

# The first line that says what went wrong: the sanitizer's first report,
# else a line of the program's own that names an error.
first_error() { # first_error LOG RC
  [ "$2" = 124 ] && { echo "timed out after ${PROBE_TIMEOUT:-60} s"; return; }
  line=$(grep -v -e '^========= COMPUTE-SANITIZER' -e '^========= ERROR SUMMARY: 0 errors' \
    -e '^=========     ' "$1" | grep -m 1 -e '^=========' -e '[Ee]rror' -e 'FAILED' -e ': not ' \
    -e ' is .*, not ' -e 'iterations, not')
  [ -z "$line" ] && [ -s "$1" ] && line=$(tail -n 1 "$1")
  printf '%s' "$line" | sed 's/^========= //' | cut -c 1-90
}

failed=0
if [ "$plain" = 1 ]; then
  printf '%-28s %5s\n' probe plain
else
  printf '%-28s %5s  | %s  | %s\n' probe plain racecheck synccheck
fi
for k in $keys; do
  rc=$(cat "$logs/$k.plain.rc" 2> /dev/null || echo '?')
  line=$(printf '%-28s %5s' "$k" "$rc")
  case $rc in
  0 | 77) ;;
  *) failed=1; line="$line $(first_error "$logs/$k.plain.log" "$rc")" ;;
  esac
  for tool in $tools; do
    [ "$tool" = plain ] && continue
    t=$(cat "$logs/$k.$tool.rc" 2> /dev/null || echo '?')
    e=
    [ "$t" = 0 ] || e=" $(first_error "$logs/$k.$tool.log" "$t")"
    line="$line  | $t$e"
  done
  echo "$line"
done
if [ "$plain" = 1 ] && [ "$failed" = 0 ] && [ -z "${PROBE_LOGS:-}" ]; then
  rm -rf "$logs" # the test passed: nothing to read
else
  echo "logs: $logs"
fi
[ "$plain" = 1 ] && exit $failed
exit 0
