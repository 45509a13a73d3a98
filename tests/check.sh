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

# `cgc=$(under_valgrind "$cgc" DIR)`: with CGC_VALGRIND=1, a wrapper in DIR
# that runs cgc under valgrind, failing (status 99) on any error or leak and
# keeping the reports in DIR/valgrind.*.log; otherwise cgc itself.
under_valgrind() {
  if [ "${CGC_VALGRIND:-0}" != 1 ]; then
    printf '%s\n' "$1"
    return
  fi
  cat > "$2/cgc-valgrind" <<WRAP
#!/bin/sh
exec valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=all \
  --errors-for-leak-kinds=all --log-file="$2/valgrind.%p.log" "$1" "\$@"
WRAP
  chmod +x "$2/cgc-valgrind"
  printf '%s\n' "$2/cgc-valgrind"
}

# Fails the run if valgrind wrote any report into DIR.
valgrind_clean() {
  [ "${CGC_VALGRIND:-0}" = 1 ] || return 0
  if cat "$1"/valgrind.*.log 2> /dev/null | grep -q .; then
    cat "$1"/valgrind.*.log
    echo "FAIL: valgrind reported errors"
    fails=$((fails + 1))
  fi
}
