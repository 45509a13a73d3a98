#!/bin/sh
# The sample's command line, without a GPU (the options are read before
# the GPU is looked for): each bad value is refused with exit status 2 and
# names its option; ids and counts are digits only.  Good values are
# taken.
#   test_options.sh PROGRAM
prog=$1
failures=0
refused() { # OPTION VALUE
  out=$("$prog" "$1" "$2" 2>&1)
  rc=$?
  case $out in
    *"bad or missing value for '$1'"*) msg=1 ;;
    *) msg=0 ;;
  esac
  if [ $rc != 2 ] || [ $msg != 1 ]; then
    echo "FAILED: $1 '$2': exit $rc: $out"
    failures=$((failures + 1))
  fi
}
for v in "" "1," ",1" "1,,2" "+5" " 5" "-0" "1, 2" "5a" "1,4096" "18446744073709551617"; do
  refused --prompt "$v"
done
for v in "" "+1" " 1" "-1" "0" "3" "16" "1x"; do
  refused --batch "$v"
done
for v in "" "+32" " 32" "-1" "0" "32 "; do
  refused --tokens "$v"
done
refused --seed "+7"
refused --keys " 8"
refused --eos "-1"
# And good values are taken: the program runs (0), or says it has no GPU (77).
out=$("$prog" --prompt 1,2,0 --batch 2 --tokens 1 --keys 8 --seed 0 --eos 3 2>&1)
rc=$?
if [ $rc != 0 ] && [ $rc != 77 ]; then
  echo "FAILED: good values: exit $rc: $out"
  failures=$((failures + 1))
fi
[ $failures = 0 ] && echo "test_options: all refused, and good values taken" && exit 0
echo "test_options: $failures not refused"
exit 1
