# check.sh: sourced by the shell tests.  `check NAME COMMAND...` runs the
# command, counts it passed or failed, and names a failure; `finish` prints
# the count and gives the exit status.
passes=0
fails=0

check() {
  check_name=$1
  shift
  if "$@"; then
    passes=$((passes + 1))
  else
    echo "FAIL: $check_name"
    fails=$((fails + 1))
  fi
}

finish() {
  echo "$passes passed, $fails failed"
  [ "$fails" = 0 ]
}
