#!/bin/sh
# The README's tutorial, run exactly as printed: between <!-- tutorial -->
# and <!-- /tutorial -->, each ```cgraph, ```cuda or ```c block is a file
# named by its first line's comment ("// step.cgraph: ..."), written where
# the commands have got to, and each ```sh block's lines are run in order
# in one shell.  The commands start in a copy of the checkout's layout:
# build/ (this build) and runtime/ (the sources).  A line marked "# needs a
# GPU" runs only where there is one, "# needs Graphviz" only where `dot`
# is; the tutorial must end in a program, `app`.
#   run_readme.sh BUILD_DIR SOURCE_DIR CUDA_BIN_DIR
set -u
. "$(dirname "$0")/check.sh"
build=$1 src=$2 cudabin=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/root"
ln -s "$build" "$tmp/root/build"
ln -s "$src/runtime" "$tmp/root/runtime"

gpu=false
nvidia-smi -L 2> /dev/null | grep -q '^GPU' && gpu=true
graphviz=false
command -v dot > /dev/null && graphviz=true

awk -v gpu="$gpu" -v graphviz="$graphviz" '
  /<!-- \/tutorial -->/ { on = 0 }
  /<!-- tutorial -->/ { on = 1; next }
  !on { next }
  /^```/ {
    if (kind != "") {
      if (kind != "sh") print "CGC_TUTORIAL_FILE"
      kind = ""
      next
    }
    kind = substr($0, 4)
    first = 1
    next
  }
  kind == "" { next }
  kind == "sh" {
    if (/# needs a GPU$/ && gpu != "true") { print "echo \"skipped (no GPU): " $0 "\""; next }
    if (/# needs Graphviz$/ && graphviz != "true") { print "echo \"skipped (no Graphviz): " $0 "\""; next }
    print
    next
  }
  first {
    name = $0
    sub(/^(\/\/|\/\*) */, "", name)
    sub(/[: ].*/, "", name)
    print "cat > " name " <<'\''CGC_TUTORIAL_FILE'\''"
    first = 0
  }
  { print }
' "$src/README.md" > "$tmp/tutorial.sh"
check "the README has a tutorial that writes files" grep -q "^cat > " "$tmp/tutorial.sh"
check "the README's tutorial has commands" grep -q "^\.\./build/compiler/cgc " "$tmp/tutorial.sh"

cd "$tmp/root" || exit 1
PATH=$cudabin:$PATH sh -ex "$tmp/tutorial.sh" > "$tmp/log" 2>&1
status=$?
check "the tutorial runs as printed" [ "$status" = 0 ]
[ "$status" = 0 ] || cat "$tmp/log"
check "the tutorial makes its program" [ -x "$tmp/root/tutorial/app" ]
$gpu || echo "the tutorial's program was built; running it needs a GPU"
finish
