#!/bin/sh
# scripts/deps.sh, on a PATH that holds only the tools each case gives it:
# the sample's set needs only what building needs, each missing tool is
# named when it cannot be installed, and only what is missing is installed.
#   run_deps.sh SOURCE_DIR
set -u
. "$(dirname "$0")/check.sh"
deps=$1/scripts/deps.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A bin folder with the shell's helpers and the named tools (links to the
# real ones; a name=TEXT item makes a script that prints TEXT instead).
bin() {
  rm -rf "$tmp/bin"
  mkdir "$tmp/bin"
  for t in bash head grep sort ls id "$@"; do
    case $t in
      *=*)
        printf '#!/bin/sh\necho "%s"\n' "${t#*=}" > "$tmp/bin/${t%%=*}"
        chmod +x "$tmp/bin/${t%%=*}"
        ;;
      *)
        p=$(command -v "$t") || { echo "run_deps: no $t here"; exit 77; }
        ln -s "$p" "$tmp/bin/$t"
        ;;
    esac
  done
}
# Runs deps.sh PURPOSE on that PATH: status in $status, output in $tmp/out.
run() {
  PATH=$tmp/bin "$tmp/bin/bash" "$deps" "$1" > "$tmp/out" 2>&1
  status=$?
}
says() { grep -q -- "$1" "$tmp/out"; }

build_tools="cmake cc flex bison"

bin $build_tools ninja
run sample
check "the sample needs nothing more than cmake, ninja, cc, flex and bison" [ "$status" = 0 ]
check "it installs nothing then" sh -c "! grep -q installing '$tmp/out'"

bin $build_tools make
run sample
check "make does instead of ninja for the sample" [ "$status" = 0 ]

bin cmake cc ninja
run sample
check "missing flex and bison without apt-get: exit 1" [ "$status" = 1 ]
check "it names flex" says "flex, 2.6 or later (Debian package flex)"
check "it names bison" says "bison, 3.6 or later (Debian package bison)"
check "it says why it cannot install them" says "there is no apt-get here"
check "it does not ask for valgrind for the sample" sh -c "! grep -q valgrind '$tmp/out'"

bin cmake cc ninja flex "bison=bison (GNU Bison) 3.5.1"
run sample
check "an old bison is named with its version" says "bison 3.6 or later (this one is 3.5.1)"

bin cmake cc bison ninja "id=1000" "apt-get=never run"
run sample
check "not root and no sudo: exit 1" [ "$status" = 1 ]
check "it says so" says "this is not root and there is no sudo"

# Root with an apt-get that records what it is asked to install.
bin $build_tools ninja "id=0"
printf '#!/bin/sh\necho "$@" >> "%s/apt.log"\n' "$tmp" > "$tmp/bin/apt-get"
chmod +x "$tmp/bin/apt-get"
rm "$tmp/bin/flex"
run sample
check "with apt-get as root it installs" [ "$status" = 0 ]
check "only flex is installed" grep -qx "install -y -qq flex" "$tmp/apt.log"

bin $build_tools ninja
run test
check "the test run also needs valgrind and clang" [ "$status" = 1 ]
check "it names valgrind" says "valgrind (the diagnostics tests under valgrind)"
check "it names clang" says "clang (the fuzzer and the C check)"
finish
