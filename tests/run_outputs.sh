#!/bin/sh
# Every kind of output path for every output: -o (the C file and the header
# beside it), -H, --depfile, --templates (the companion CUDA file of a
# program with template kernels), --emit=dot -o, and cgc fmt.  A failure exits
# 2, says "cannot write 'PATH': REASON" and leaves every file as it was
# (contents, modes, owners, links, no temporary left behind); a success
# writes through symlinks and into devices, gives a new file the mode the
# umask gives and an old one its own.  Cases that need root (mknod, another
# user's file) or a user that is not root (permissions) say "skipped" where
# they cannot run.
#   run_outputs.sh CGC
set -u
. "$(dirname "$0")/check.sh"
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

run() { # run COMMAND...: sets status, and the output in $tmp/out and $tmp/err
  "$@" > "$tmp/out" 2> "$tmp/err"
  status=$?
}

skip() { echo "skipped: $*"; }

# A directory's entries: name, type, mode, owner, size, link target, and
# the contents of every file.
snap() {
  (cd "$1" && find . -printf '%p %y %m %u:%g %s %l\n' | LC_ALL=C sort &&
    find . -type f -exec md5sum {} + | LC_ALL=C sort)
}

# with ROLE PATH [PREFIX...]: runs $exe with PATH as the output ROLE names,
# under PREFIX (setpriv to run as another user).
with() {
  w_role=$1 w_path=$2
  shift 2
  case $w_role in
    -o) run "$@" "$exe" "$w/ok.cgraph" -o "$w_path" ;;
    -H) run "$@" "$exe" "$w/ok.cgraph" -o "$w/good.c" -H "$w_path" ;;
    --depfile) run "$@" "$exe" "$w/ok.cgraph" -o "$w/good.c" --depfile "$w_path" ;;
    --templates) run "$@" "$exe" "$w/tmpl.cgraph" -o "$w/good.c" --templates "$w_path" ;;
    dot) run "$@" "$exe" --emit=dot "$w/ok.cgraph" -o "$w_path" ;;
    fmt) run "$@" "$exe" fmt "$w_path" ;;
  esac
}

# fails ROLE KIND PATH STATUS MESSAGE [PREFIX...]: cgc with PATH as the
# output ROLE exits STATUS, says MESSAGE, and changes nothing under $w.
fails() {
  f_role=$1 f_kind=$2 f_path=$3 f_want=$4 f_msg=$5
  shift 5
  f_before=$(snap "$w")
  with "$f_role" "$f_path" "$@"
  check "$f_role, $f_kind: exit $f_want" [ "$status" = "$f_want" ]
  check "$f_role, $f_kind: says \"$f_msg\"" grep -qF -- "$f_msg" "$tmp/err"
  check "$f_role, $f_kind: nothing written or changed" [ "$(snap "$w")" = "$f_before" ]
}

if [ "${1:-}" = --in-full-fs ]; then
  # run_outputs.sh --in-full-fs CGC W FS, in a mount namespace of its own:
  # every output on a full file system.
  exe=$2 w=$3 fs=$4 tmp=$4.tmp
  mkdir -p "$tmp"
  mount -t tmpfs -o size=256k tmpfs "$fs" 2> /dev/null || exit 77
  for f in old.c old.h old.d old.dot old.cu; do printf 'previous\n' > "$fs/$f"; done
  printf 'const N=1;\n' > "$fs/f.cgraph"
  dd if=/dev/zero of="$fs/fill" bs=1k 2> /dev/null
  w_saved=$w
  w=$fs # snapshots of the full file system; $exe still reads $w_saved/ok.cgraph
  full() {
    f_before=$(snap "$fs")
    run "$@"
    check "full file system, $*: exit 2" [ "$status" = 2 ]
    check "full file system, $*: says so" grep -q "^cgc: error\\[E0003\\]: cannot write '$fs/.*': No space left on device" "$tmp/err"
    check "full file system, $*: nothing written or changed" [ "$(snap "$fs")" = "$f_before" ]
  }
  full "$exe" "$w_saved/ok.cgraph" -o "$fs/old.c"
  full "$exe" "$w_saved/ok.cgraph" -o "$fs/new.c"
  full "$exe" "$w_saved/ok.cgraph" -o "$w_saved/good.c" -H "$fs/old.h"
  full "$exe" "$w_saved/ok.cgraph" -o "$w_saved/good.c" --depfile "$fs/old.d"
  full "$exe" "$w_saved/tmpl.cgraph" -o "$w_saved/good.c" --templates "$fs/old.cu"
  full "$exe" --emit=dot "$w_saved/ok.cgraph" -o "$fs/old.dot"
  full "$exe" fmt "$fs/f.cgraph"
  finish
  exit
fi

cgc_bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # another user runs cgc in $tmp/w
mkdir -p "$tmp/vg"
exe=$(under_valgrind "$cgc_bin" "$tmp/vg")
w=$tmp/w
mkdir -m 777 "$w"
cd "$w" || exit 1 # where an output named '' or '.h' would land, seen by snap

cat > "$w/ok.cgraph" <<'G'
const N = 32;
kernel k(inout x: f32*);
graph g {
    buffer x: f32[N];
    node a = k(x) grid(1) block(N);
}
G
chmod 644 "$w/ok.cgraph"
cat > "$w/tmpl.cgraph" <<'G'
kernel k = scale<float, 2>(inout x: f32*) from "scale.cuh";
graph g {
    buffer x: f32[32];
    node a = k(x) grid(1) block(32);
}
G
printf 'template <typename T, int K> __global__ void scale(T *x);\n' > "$w/scale.cuh"
chmod 644 "$w/tmpl.cgraph" "$w/scale.cuh"
"$exe" --emit=dot "$w/ok.cgraph" > "$tmp/ok.dot" || exit 1
printf 'previous\n' > "$w/good.c"
printf 'previous\n' > "$w/good.h"
chmod 666 "$w/good.c" "$w/good.h" # another user's run may replace them

# Another user, for permissions that root does not have to respect.
as_user=
user_skip=
if [ "$(id -u)" != 0 ]; then
  :
elif ! command -v setpriv > /dev/null; then
  user_skip="no setpriv to run cgc as nobody"
elif ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$cgc_bin"; then
  user_skip="nobody cannot run $cgc_bin"
else
  as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi

# ---- paths that cannot be written: nothing is written, for every output ----
mkdir "$w/dir"
printf 'x\n' > "$w/file"
ln -s nodir/x "$w/dangling_nodir"
ln -s loop_b "$w/loop_a"
ln -s loop_a "$w/loop_b"
ln -s dir "$w/dirlink"
ln -s /dev/full "$w/full"
for role in -o -H --depfile --templates dot; do
  flag=$role
  [ "$role" = dot ] && flag=-o
  fails "$role" "a directory" "$w/dir" 2 "cgc: error[E0003]: cannot write '$w/dir': Is a directory"
  fails "$role" "a directory with a slash" "$w/dir/" 2 "cannot write '$w/dir/': Is a directory"
  fails "$role" "a new name with a slash" "$w/new/" 2 "cannot write '$w/new/': Is a directory"
  fails "$role" "a file with a slash" "$w/file/" 2 "cannot write '$w/file/': Not a directory"
  fails "$role" "an empty name" "" 2 "cgc: error[E0234]: $flag needs a file name"
  fails "$role" "a missing directory" "$w/nodir/x" 2 \
    "cannot write '$w/nodir/x': No such file or directory"
  fails "$role" "a dangling symlink into a missing directory" "$w/dangling_nodir" 2 \
    "cannot write '$w/dangling_nodir': No such file or directory"
  fails "$role" "a symlink loop" "$w/loop_a" 2 \
    "cannot write '$w/loop_a': Too many levels of symbolic links"
  fails "$role" "a symlink to a directory" "$w/dirlink" 2 "cannot write '$w/dirlink': Is a directory"
  fails "$role" "a full device" "$w/full" 2 "cannot write '$w/full': No space left on device"
done

# Permissions, as a user that is not root.
if [ -n "$user_skip" ]; then
  skip "unwritable directories and files: $user_skip"
else
  mkdir -m 755 "$w/ro"
  printf 'x\n' > "$w/ro/x"
  printf 'previous\n' > "$w/rofile"
  chmod 444 "$w/rofile"
  printf 'const N=1;\n' > "$w/unformatted.cgraph"
  cp "$w/unformatted.cgraph" "$w/ro/f.cgraph"
  chmod 644 "$w/unformatted.cgraph" "$w/ro/f.cgraph"
  [ -z "$as_user" ] && chmod 555 "$w/ro"
  exe_saved=$exe
  [ -n "$as_user" ] && exe=$cgc_bin # valgrind's logs are root's
  for role in -o -H --depfile --templates dot; do
    # shellcheck disable=SC2086
    fails "$role" "a new file in an unwritable directory" "$w/ro/new" 2 \
      "cannot write '$w/ro/new': Permission denied" $as_user
    # shellcheck disable=SC2086
    fails "$role" "a file in an unwritable directory" "$w/ro/x" 2 \
      "cannot write '$w/ro/x': Permission denied" $as_user
    # shellcheck disable=SC2086
    fails "$role" "an unwritable file" "$w/rofile" 2 \
      "cannot write '$w/rofile': Permission denied" $as_user
  done
  if [ -n "$as_user" ]; then
    mkdir -m 1777 "$w/sticky"
    printf 'previous\n' > "$w/sticky/roots"
    chmod 666 "$w/sticky/roots"
    for role in -o -H --depfile --templates dot; do
      # shellcheck disable=SC2086
      fails "$role" "root's file in a sticky directory" "$w/sticky/roots" 2 \
        "cannot write '$w/sticky/roots': Operation not permitted" $as_user
    done
    rm -rf "$w/sticky"
  else
    skip "another user's file in a sticky directory: needs root to make one"
  fi
  # shellcheck disable=SC2086
  fails fmt "a file in an unwritable directory" "$w/ro/f.cgraph" 2 \
    "cannot write '$w/ro/f.cgraph': Permission denied" $as_user
  chmod 444 "$w/unformatted.cgraph"
  # shellcheck disable=SC2086
  fails fmt "an unwritable file" "$w/unformatted.cgraph" 2 \
    "cannot write '$w/unformatted.cgraph': Permission denied" $as_user
  chmod 755 "$w/ro"
  rm -rf "$w/ro" "$w/rofile" "$w/unformatted.cgraph"
  exe=$exe_saved
fi

# cgc fmt reads what it writes: the paths it cannot read are refused so.
printf 'const N=1;\n' > "$w/f.cgraph"
ln -s missing.cgraph "$w/dangling.cgraph"
fails fmt "a directory" "$w/dir" 2 "cannot read '$w/dir': Is a directory"
fails fmt "an empty name" "" 2 "cannot read '': No such file or directory"
fails fmt "a file with a slash" "$w/f.cgraph/" 2 "cannot read '$w/f.cgraph/': Not a directory"
fails fmt "a dangling symlink" "$w/dangling.cgraph" 2 "cannot read '$w/dangling.cgraph'"
rm "$w/f.cgraph" "$w/dangling.cgraph"

# A full file system: a tmpfs in a mount namespace of cgc's own.
if ! command -v unshare > /dev/null; then
  skip "a full file system: no unshare"
else
  mkdir "$tmp/fs"
  unshare -rm sh "$self" --in-full-fs "$exe" "$w" "$tmp/fs" > "$tmp/full.log" 2>&1
  full_status=$?
  if [ "$full_status" = 77 ] || ! grep -q ' passed, ' "$tmp/full.log"; then
    skip "a full file system: cannot mount a tmpfs in a namespace ($(head -1 "$tmp/full.log"))"
  else
    grep FAIL "$tmp/full.log"
    passes=$((passes + $(sed -n 's/^\([0-9]*\) passed.*/\1/p' "$tmp/full.log")))
    fails=$((fails + $(sed -n 's/.* \([0-9]*\) failed$/\1/p' "$tmp/full.log")))
  fi
fi

# ---- the paths that are written: through links, into devices ----
for role in -o -H --depfile --templates dot; do
  rm -rf "$w/s" && mkdir "$w/s"
  printf 'previous\n' > "$w/s/real"
  chmod 604 "$w/s/real"
  ln -s real "$w/s/link"
  ln -s link "$w/s/link2"
  ln -s sub/made "$w/s/dangling"
  mkdir "$w/s/sub"
  printf 'previous text, longer than the output\n%8000s\n' x > "$w/s/hard"
  ln "$w/s/hard" "$w/s/hard2"
  with "$role" "$w/s/hard"
  check "$role, a file with another hard link: exit 0" [ "$status" = 0 ]
  check "$role, a file with another hard link: still one file" [ "$w/s/hard" -ef "$w/s/hard2" ]
  check "$role, a file with another hard link: written, the old text cut off" \
    sh -c '! grep -q previous "$0"' "$w/s/hard2"
  with "$role" "$w/s/hard"
  check "$role, a file with another hard link, again: the same bytes" cmp -s "$w/s/hard" "$w/s/hard2"
  for p in link link2; do
    printf 'previous\n' > "$w/s/real"
    with "$role" "$w/s/$p"
    check "$role, a symlink ($p): exit 0" [ "$status" = 0 ]
    check "$role, a symlink ($p): still a link" [ -L "$w/s/$p" ]
    check "$role, a symlink ($p): its file is written" [ "$(head -c 9 "$w/s/real")" != previous ]
    check "$role, a symlink ($p): its file keeps its mode" [ "$(stat -c %a "$w/s/real")" = 604 ]
  done
  with "$role" "$w/s/dangling"
  check "$role, a dangling symlink: exit 0" [ "$status" = 0 ]
  check "$role, a dangling symlink: still a link" [ -L "$w/s/dangling" ]
  check "$role, a dangling symlink: the file it names is made" [ -s "$w/s/sub/made" ]
  if [ "$role" = dot ]; then
    check "dot, a symlink: the whole DOT" cmp -s "$w/s/sub/made" "$tmp/ok.dot"
  fi
  ln -s /dev/null "$w/s/null"
  with "$role" "$w/s/null"
  check "$role, a symlink to /dev/null: exit 0" [ "$status" = 0 ]
  check "$role, a symlink to /dev/null: still a link" [ "$(readlink "$w/s/null")" = /dev/null ]
  check "$role, a symlink to /dev/null: no temporary left" \
    [ -z "$(find "$w/s" "$w" -maxdepth 1 -name '*.tmp.*')" ]
  if mkfifo "$w/s/fifo" 2> /dev/null; then
    cat "$w/s/fifo" > "$tmp/fifo.out" &
    reader=$!
    with "$role" "$w/s/fifo"
    # A cgc that did not write into the FIFO leaves its reader waiting.
    i=0
    while kill -0 "$reader" 2> /dev/null && [ "$i" -lt 50 ]; do
      sleep 0.1
      i=$((i + 1))
    done
    kill "$reader" 2> /dev/null
    wait "$reader"
    check "$role, a FIFO: exit 0" [ "$status" = 0 ]
    check "$role, a FIFO: still a FIFO" [ -p "$w/s/fifo" ]
    check "$role, a FIFO: the output goes through it" [ -s "$tmp/fifo.out" ]
    if [ "$role" = dot ]; then
      check "dot, a FIFO: the whole DOT" cmp -s "$tmp/fifo.out" "$tmp/ok.dot"
    fi
  else
    skip "$role, a FIFO: mkfifo failed"
  fi
  if mknod "$w/s/cdev" c 1 3 2> /dev/null; then
    with "$role" "$w/s/cdev"
    check "$role, a device node: exit 0" [ "$status" = 0 ]
    check "$role, a device node: still a device" [ -c "$w/s/cdev" ]
    mknod "$w/s/cfull" c 1 7
    fails "$role" "a full device node" "$w/s/cfull" 2 \
      "cannot write '$w/s/cfull': No space left on device"
  else
    skip "$role, a device node: mknod needs root"
  fi
done
rm -rf "$w/s"

# Standard output by name, as a user that did not open it: a pipe, and a
# file the shell (root) made.
exe_saved=$exe
[ -n "$as_user" ] && exe=$cgc_bin
# shellcheck disable=SC2086
$as_user "$exe" --emit=dot "$w/ok.cgraph" -o /dev/stdout | cat > "$tmp/piped"
check "-o /dev/stdout into a pipe, as another user: the whole DOT" cmp -s "$tmp/piped" "$tmp/ok.dot"
# shellcheck disable=SC2086
{ echo before; $as_user "$exe" --emit=dot "$w/ok.cgraph" -o /dev/stdout; echo after; } > "$tmp/so"
{ echo before; cat "$tmp/ok.dot"; echo after; } > "$tmp/so.want"
check "-o /dev/stdout into a file, as another user: written in turn" cmp -s "$tmp/so" "$tmp/so.want"
exe=$exe_saved
[ -n "$user_skip" ] && skip "-o /dev/stdout as another user: $user_skip (ran as $(id -un))"

# The companion beside -o, where a graph uses a template kernel, is an
# output like the others: when it cannot be written, nothing is.
mkdir "$w/dc_templates.cu"
run "$exe" "$w/tmpl.cgraph" -o "$w/dc.c"
check "a template program, its companion a directory: exit 2" [ "$status" = 2 ]
check "a template program, its companion a directory: says so" \
  grep -qF "cannot write '$w/dc_templates.cu': Is a directory" "$tmp/err"
check "a template program, its companion a directory: nothing written" \
  [ ! -e "$w/dc.c" ] && [ ! -e "$w/dc.h" ]
rmdir "$w/dc_templates.cu"
run "$exe" "$w/tmpl.cgraph" -o "$w/dc.c"
check "a template program: the companion goes beside -o" \
  grep -q 'scale<float, 2>' "$w/dc_templates.cu"
rm -f "$w/dc.c" "$w/dc.h" "$w/dc_templates.cu"

# ---- modes and owners ----
for mask in 022 077 002 027; do
  rm -f "$w/m.c" "$w/m.h" "$w/m.d"
  run sh -c 'umask "$0"; exec "$@"' "$mask" "$exe" "$w/ok.cgraph" -o "$w/m.c" --depfile "$w/m.d"
  want=$(printf '%o' $((0666 & ~0$mask)))
  for f in m.c m.h m.d; do
    check "umask $mask: a new $f is $want" [ "$(stat -c %a "$w/$f")" = "$want" ]
  done
done
chmod 640 "$w/m.c"
chmod 604 "$w/m.h"
chmod 600 "$w/m.d"
run sh -c 'umask 022; exec "$@"' "$exe" "$w/ok.cgraph" -o "$w/m.c" --depfile "$w/m.d"
check "a replaced C file keeps its mode" [ "$(stat -c %a "$w/m.c")" = 640 ]
check "a replaced header keeps its mode" [ "$(stat -c %a "$w/m.h")" = 604 ]
check "a replaced depfile keeps its mode" [ "$(stat -c %a "$w/m.d")" = 600 ]
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$w/m.c"
  run "$exe" "$w/ok.cgraph" -o "$w/m.c"
  check "root replacing another user's file keeps its owner" \
    [ "$(stat -c %u:%g "$w/m.c")" = 65534:65534 ]
else
  skip "the owner of another user's file: needs root"
fi

printf 'const N=1;\n' > "$w/f.cgraph"
chmod 664 "$w/f.cgraph"
run sh -c 'umask 077; exec "$@"' "$exe" fmt "$w/f.cgraph"
check "fmt: exit 0" [ "$status" = 0 ]
check "fmt keeps the source's mode" [ "$(stat -c %a "$w/f.cgraph")" = 664 ]
mkdir "$w/real"
printf 'const N=1;\n' > "$w/real/g.cgraph"
chmod 640 "$w/real/g.cgraph"
ln -s real/g.cgraph "$w/g.cgraph"
run "$exe" fmt "$w/g.cgraph"
check "fmt of a symlink: exit 0" [ "$status" = 0 ]
check "fmt of a symlink: still a link" [ -L "$w/g.cgraph" ]
check "fmt of a symlink: the file it names is formatted" [ "$(cat "$w/real/g.cgraph")" = "const N = 1;" ]
check "fmt of a symlink: the file keeps its mode" [ "$(stat -c %a "$w/real/g.cgraph")" = 640 ]
check "fmt of a symlink: no temporary left" [ -z "$(find "$w" -name '*.tmp.*')" ]
# A file with another hard link is rewritten where it is: both names keep
# one file, which holds the new text (a rename would part them).
printf 'const N=1;\n' > "$w/real/h.cgraph"
ln "$w/real/h.cgraph" "$w/h2.cgraph"
run "$exe" fmt "$w/real/h.cgraph"
check "fmt of a file with another hard link: exit 0" [ "$status" = 0 ]
check "fmt of a file with another hard link: still one file" [ "$w/real/h.cgraph" -ef "$w/h2.cgraph" ]
check "fmt of a file with another hard link: the other name is formatted" \
  [ "$(cat "$w/h2.cgraph")" = "const N = 1;" ]
check "fmt of a file with another hard link: no temporary left" [ -z "$(find "$w" -name '*.tmp.*')" ]
rm "$w/real/h.cgraph" "$w/h2.cgraph"

# ---- an output that is another output, the input or an included file ----
cat > "$w/inc.cgraph" <<'G'
const M = 1;
G
printf 'include "inc.cgraph";\n' | cat - "$w/ok.cgraph" > "$w/main.cgraph"
ln -s ok.cgraph "$w/link.cgraph"
ln "$w/ok.cgraph" "$w/hard.cgraph"
same() { # same NAME MESSAGE ARGS...: a usage error, and nothing changes
  s_name=$1 s_msg=$2
  shift 2
  s_before=$(snap "$w")
  run "$exe" "$@"
  check "$s_name: exit 2" [ "$status" = 2 ]
  check "$s_name: says \"$s_msg\"" grep -qF -- "$s_msg" "$tmp/err"
  check "$s_name: nothing written or changed" [ "$(snap "$w")" = "$s_before" ]
}
same "-o X -H X" "-o '$w/x.c' and -H '$w/./x.c' are the same file" \
  "$w/ok.cgraph" -o "$w/x.c" -H "$w/./x.c"
same "-o the input" "-o '$w/ok.cgraph': C output goes into a .c, .cc, .cpp, .cxx or .cu file" \
  "$w/ok.cgraph" -o "$w/ok.cgraph"
ln -s ok.cgraph "$w/ok_link.c"
same "-o the input through a symlink" "-o '$w/ok_link.c' and the input '$w/ok.cgraph' are the same file" \
  "$w/ok.cgraph" -o "$w/ok_link.c"
same "--emit=dot -o the input through a symlink" \
  "-o '$w/link.cgraph' and the input '$w/ok.cgraph' are the same file" \
  --emit=dot "$w/ok.cgraph" -o "$w/link.cgraph"
same "-H a hard link of the input" "-H '$w/hard.cgraph' and the input" \
  "$w/ok.cgraph" -o "$w/x.c" -H "$w/hard.cgraph"
same "--depfile the input" "--depfile '$w/dir/../ok.cgraph' and the input" \
  "$w/ok.cgraph" -o "$w/x.c" --depfile "$w/dir/../ok.cgraph"
same "--depfile the C file" "-o '$w/x.c' and --depfile '$w/x.c' are the same file" \
  "$w/ok.cgraph" -o "$w/x.c" --depfile "$w/x.c"
same "--depfile the header beside it" "the header '$w/x.h' and --depfile '$w/x.h'" \
  "$w/ok.cgraph" -o "$w/x.c" --depfile "$w/x.h"
same "--emit=dot --depfile the DOT" "-o '$w/g.dot' and --depfile '$w/dir/../g.dot'" \
  --emit=dot "$w/ok.cgraph" -o "$w/g.dot" --depfile "$w/dir/../g.dot"
ln -s inc.cgraph "$w/inc_link.c"
same "-o an included file" "-o '$w/inc_link.c' is '$w/inc.cgraph', a file the program reads" \
  "$w/main.cgraph" -o "$w/inc_link.c"
ln -s /dev/null "$w/null"
run "$exe" --emit=dot "$w/ok.cgraph" -o "$w/null" --depfile /dev/null
check "a device may take more than one output" [ "$status" = 0 ]
rm -f "$w/null"

# ---- standard output on a full device ----
for args in "--emit=dot $w/ok.cgraph" --help --version; do
  # shellcheck disable=SC2086
  "$exe" $args > /dev/full 2> "$tmp/err"
  status=$?
  check "$args > /dev/full: exit 2" [ "$status" = 2 ]
  check "$args > /dev/full: says so" \
    grep -q '^cgc: error\[E0104\]: cannot write standard output: No space left on device' "$tmp/err"
done
printf 'const N=1;\n' > "$w/f.cgraph"
"$exe" fmt --check "$w/f.cgraph" > /dev/full 2> "$tmp/err"
check "fmt --check > /dev/full: exit 2" [ "$?" = 2 ]
check "fmt --check > /dev/full: says so" grep -q 'cannot write standard output' "$tmp/err"

# ---- names that cannot be written where they go ----
nl=$(printf '%s/nl\nx\377' "$w")
mkdir "$w/st*" "$w/a" "$w/a/*b" "$nl"
for d in "$w/st*" "$w/a/*b" "$nl"; do
  cp "$w/ok.cgraph" "$d/in.cgraph"
  run "$exe" "$d/in.cgraph" -o "$w/c27.c"
  case $d in
    */st\*) want="from $w/st*/in.cgraph. DO NOT EDIT." d=st* ;;
    */a/\*b) want="from $w/a/*b/in.cgraph. DO NOT EDIT." d=a/*b ;;
    *) want="from $w/nl\\x0ax\\xff/in.cgraph. DO NOT EDIT." d='nl<LF>x<FF>' ;;
  esac
  check "an input in '$d': exit 0" [ "$status" = 0 ]
  for f in "$w/c27.c" "$w/c27.h"; do
    check "an input in '$d': $(basename "$f") names it escaped" \
      [ "$(head -1 "$f")" = "// Code generated by cgc $("$exe" --version | cut -d' ' -f2) $want" ]
    check "an input in '$d': the first line of $(basename "$f") is the conventional one" \
      env LC_ALL=C awk 'NR == 1 { ok = /^\/\/ Code generated .* DO NOT EDIT\.$/ } END { exit !ok }' "$f"
    if command -v cc > /dev/null; then
      check "an input in '$d': cc takes the first line of $(basename "$f") as a comment" \
        sh -c '{ head -1 "$0"; echo "int x;"; } | cc -Wall -Werror -fsyntax-only -x c - 2> /dev/null' "$f"
    fi
  done
done
for h in 'q"x.h' "it's.h" 'back\slash.h' "$(printf 'line\nbreak.h')"; do
  same "-H '$h'" "cannot be named in #include" "$w/ok.cgraph" -o "$w/x.c" -H "$w/$h"
done
same "-o 'q\"x.c' (its header)" "the header '$w/q\"x.h' cannot be named in #include" \
  "$w/ok.cgraph" -o "$w/q\"x.c"
run "$exe" "$nl/in.cgraph" -o "$w/nl.c" --depfile "$w/nl.d"
check "a depfile cannot name a file with a line break: exit 2" [ "$status" = 2 ]
check "and says so" env LC_ALL=C grep -q "a depfile cannot name .*: Make has no way" "$tmp/err"
check "and nothing is written" [ ! -e "$w/nl.c" ] && [ ! -e "$w/nl.h" ] && [ ! -e "$w/nl.d" ]

# ---- an output whose bytes would not change is left as it is ----
# (its inode and time stamp too, so that a build does not rebuild what
# includes it), while the others of the run are replaced.
cp "$w/ok.cgraph" "$w/same.cgraph"
stamp() { stat -c '%i %Y.%y' "$1"; }
"$exe" "$w/same.cgraph" -o "$w/same.c" --depfile "$w/same.d"
touch -d '2001-01-01' "$w/same.c" "$w/same.h" "$w/same.d"
c0=$(stamp "$w/same.c") h0=$(stamp "$w/same.h") d0=$(stamp "$w/same.d")
run "$exe" "$w/same.cgraph" -o "$w/same.c" --depfile "$w/same.d"
check "the same outputs again: exit 0" [ "$status" = 0 ]
check "the same C again: not replaced" [ "$(stamp "$w/same.c")" = "$c0" ]
check "the same header again: not replaced" [ "$(stamp "$w/same.h")" = "$h0" ]
check "the same depfile again: not replaced" [ "$(stamp "$w/same.d")" = "$d0" ]
check "no temporary is left behind" sh -c "! ls '$w' | grep -q 'same.*tmp'"
# A comment on a line of its own moves the nodes' lines in the C, not the
# header.
{ echo '// a new first line'; cat "$w/ok.cgraph"; } > "$w/same.cgraph"
run "$exe" "$w/same.cgraph" -o "$w/same.c" --depfile "$w/same.d"
check "a comment added: exit 0" [ "$status" = 0 ]
check "a comment added: the C is replaced" [ "$(stamp "$w/same.c")" != "$c0" ]
check "a comment added: the header is not" [ "$(stamp "$w/same.h")" = "$h0" ]
check "a comment added: the C holds the new line numbers" grep -q '.line = 6,' "$w/same.c"
printf 'const  N=1;\n' > "$w/fmt_same.cgraph"
"$exe" fmt "$w/fmt_same.cgraph"
touch -d '2001-01-01' "$w/fmt_same.cgraph"
f0=$(stamp "$w/fmt_same.cgraph")
run "$exe" fmt "$w/fmt_same.cgraph"
check "fmt of a formatted file: not replaced" [ "$(stamp "$w/fmt_same.cgraph")" = "$f0" ]
rm -f "$w"/same.* "$w/fmt_same.cgraph"

# ---- an output error in JSON ----
"$exe" --diagnostics-format=json "$w/ok.cgraph" -o "$w/dir" 2> "$tmp/json"
check "json: an output error exits 2" [ "$?" = 2 ]
if command -v python3 > /dev/null; then
  check "json: an output error is a JSON object" python3 -c '
import json, sys
lines = open(sys.argv[1], "rb").read().decode("utf-8").splitlines()
assert len(lines) == 1, lines
o = json.loads(lines[0])
assert o["file"] is None and o["severity"] == "error", o
assert o["message"] == "cannot write %s: Is a directory" % repr(sys.argv[2]), o
' "$tmp/json" "$w/dir"
fi

valgrind_clean "$tmp/vg"
finish
