#!/bin/sh
# Regenerates src/ (parser.c, grammar.json, node-types.json and
# tree_sitter/parser.h) from grammar.js, for ABI 14: the version that every
# tree-sitter runtime from 0.20 on loads (Debian 12's libtree-sitter 0.20.7,
# Neovim, Helix).  Run it after changing grammar.js, and commit src/.
#
#   generate.sh                      with a `tree-sitter` CLI on PATH
#   generate.sh TREE_SITTER_SOURCE   without one: builds the generator of
#                                    tree-sitter 0.20.8 from a git clone of
#                                    tree-sitter/tree-sitter, offline, with
#                                    Debian's Rust crates (needs cargo and
#                                    rustc 1.65 or later, and node)
#
# The committed src/ was made the second way (the generator of 0.20.8, which
# matches Debian's runtime); another CLI version writes a different, equally
# valid, parser.c.  The npm package tree-sitter-cli cannot be used where
# only the npm registry is reachable: its install step downloads the binary
# from GitHub.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# = 0 ]; then
  command -v tree-sitter > /dev/null || {
    echo "generate.sh: no tree-sitter CLI on PATH; give a tree-sitter source clone" >&2
    exit 1
  }
  cd "$here" && exec tree-sitter generate --abi 14
fi
ts=$(cd "$1" && pwd)
build=${TMPDIR:-/tmp}/cgraph-tsgen
crates="anyhow indexmap lazy-static log regex regex-syntax rustc-hash semver serde serde-derive
  serde-json smallbitvec"
missing=
for c in $crates; do
  dpkg -s "librust-$c-dev" > /dev/null 2>&1 || missing="$missing librust-$c-dev"
done
if [ -n "$missing" ]; then
  echo "generate.sh: installing Debian's Rust crates:$missing"
  apt-get install -y -qq $missing > /dev/null
fi

rm -rf "$build" && mkdir -p "$build/src" "$build/shim/src" "$build/.cargo"
# The CLI's generate module, and the runtime's parser.h it writes beside
# parser.c.  unicode-properties.json (the \p{...} classes of regexes) is
# absent from some clones; grammar.js uses none, so an empty table does.
for f in $(git -C "$ts" ls-tree -r --name-only v0.20.8 cli/src/generate); do
  out=$build/src/${f#cli/src/}
  mkdir -p "$(dirname "$out")"
  git -C "$ts" show "v0.20.8:$f" > "$out" 2> /dev/null || echo '{}' > "$out"
done
git -C "$ts" show v0.20.8:lib/include/tree_sitter/parser.h > "$build/shim/parser.h"

cat > "$build/Cargo.toml" << 'EOF'
[package]
name = "tsgen"
version = "0.20.8"
edition = "2021"

[dependencies]
anyhow = "1.0"
indexmap = "1"
lazy_static = "1.2.0"
regex = "1"
regex-syntax = "0.6.4"
rustc-hash = "1"
semver = "1.0"
serde = { version = "1.0.130", features = ["derive"] }
smallbitvec = "2.5.1"
serde_json = { version = "1.0", features = ["preserve_order"] }
log = { version = "0.4.6", features = ["std"] }
tree-sitter = { path = "shim" }
EOF
cat > "$build/.cargo/config.toml" << 'EOF'
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
[net]
offline = true
EOF
# The two things the generator takes from the runtime crate.
cat > "$build/shim/Cargo.toml" << 'EOF'
[package]
name = "tree-sitter"
version = "0.20.10"
edition = "2021"
EOF
cat > "$build/shim/src/lib.rs" << 'EOF'
pub const LANGUAGE_VERSION: usize = 14;
pub const PARSER_HEADER: &'static str = include_str!("../parser.h");
EOF
cat > "$build/src/main.rs" << 'EOF'
// tree-sitter 0.20.8's `tree-sitter generate` in the current directory (ABI 14).
mod generate;
fn main() -> anyhow::Result<()> {
    let dir = std::env::current_dir()?;
    generate::generate_parser_in_directory(&dir, None, 14, false, None)
}
EOF
(cd "$build" && RUST_BINDING_VERSION=0.20.8 cargo build --release --quiet)
cd "$here" && "$build/target/release/tsgen"
echo "generate.sh: src/ regenerated from grammar.js (tree-sitter 0.20.8's generator, ABI 14)"
