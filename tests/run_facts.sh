#!/bin/sh
# Facts written once and read in several places agree:
#   - the version: CMake's project VERSION, `cgc --version`, the CMake
#     package's version file, python/pyproject.toml and the Python package;
#     and the license: LICENSE, pyproject.toml, CHANGELOG.md's entry;
#   - the options: `cgc --help` lists exactly the man page's options;
#   - the figures: every row of the README's table of figures is a row of
#     BENCHMARKS.md, copied as it is;
#   - the reserved words: compiler/keywords.def's are exactly those of
#     doc/language.md's list (section 2.4), and the Vim, VS Code and
#     tree-sitter grammars name each.
#   run_facts.sh CGC SOURCE_DIR BUILD_DIR
set -u
. "$(dirname "$0")/check.sh"
cgc=$1
src=$2
build=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/^project(cgc VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
check "CMakeLists.txt gives the version" [ -n "$version" ]
check "cgc --version says $version" [ "$("$cgc" --version)" = "cgc $version" ]
if [ -f "$build/cgcConfigVersion.cmake" ]; then
  check "the CMake package's version is $version" \
    grep -q "^set(PACKAGE_VERSION \"$version\")" "$build/cgcConfigVersion.cmake"
fi
check "python/pyproject.toml's version is $version" \
  grep -qx "version = \"$version\"" "$src/python/pyproject.toml"
check "the Python package's __version__ is $version" \
  grep -qx "__version__ = \"$version\"" "$src/python/cgc/__init__.py"
check "CHANGELOG.md has an entry for $version" grep -q "^## $version" "$src/CHANGELOG.md"
check "LICENSE is the MIT license" [ "$(head -1 "$src/LICENSE")" = "MIT License" ]
check "python/pyproject.toml names the MIT license" \
  grep -qx 'license = {text = "MIT"}' "$src/python/pyproject.toml"

# The options: in --help, every option-shaped word of the lines that list
# options; in the man page, every option-shaped word of the tags of OPTIONS
# (troff's font changes and quotes taken away, \- made -).  The value after
# = is not part of the option.
options() {
  grep -oE '(^|[ (,[])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ (,[]//' | sort -u
}
"$cgc" --help | sed -n '/^  -/,$p' | options > "$tmp/help"
awk '/^\.SH/ { in_opts = ($2 == "OPTIONS") } in_opts && tag { print; tag = 0 }
     in_opts && /^\.TP/ { tag = 1 }' "$src/doc/cgc.1" |
  awk '{ sub(/^\.[A-Z]+ /, ""); n = split($0, part, "\""); s = ""
         for (i = 1; i <= n; i++) { if (i % 2) gsub(/ /, "", part[i]); s = s part[i] }
         gsub(/\\f[BIRP]/, "", s); gsub(/\\-/, "-", s); print s }' |
  options > "$tmp/man"
check "cgc --help lists options" [ -s "$tmp/help" ]
if ! cmp -s "$tmp/help" "$tmp/man"; then
  echo "cgc --help (<) and doc/cgc.1's OPTIONS (>) list different options:"
  diff "$tmp/help" "$tmp/man"
  check "cgc --help lists exactly the man page's options" false
fi

# The figures: the README's table between <!-- figures --> and
# <!-- /figures -->.
awk '/<!-- \/figures -->/ { on = 0 } on && /^\|/ { print } /<!-- figures -->/ { on = 1 }' \
  "$src/README.md" > "$tmp/rows"
check "the README has a table of figures" [ -s "$tmp/rows" ]
while IFS= read -r row; do
  check "BENCHMARKS.md has the README's row: $row" grep -qxF -- "$row" "$src/BENCHMARKS.md"
done < "$tmp/rows"

# The reserved words: keywords.def's spellings, and the words of the code
# block after the reference's "### 2.4" heading.
sed -n 's/^\(KEYWORD\|TYPE_NAME\)([A-Z0-9_]*, "\([a-z0-9]*\)")$/\2/p' \
  "$src/compiler/keywords.def" | sort > "$tmp/words"
awk '/^### 2\.4/ { sec = 1 } sec && /^```/ { if (code) exit; code = 1; next } code' \
  "$src/doc/language.md" | tr -s ' ' '\n' | sed '/^$/d' | sort > "$tmp/doc_words"
check "keywords.def has the reserved words" [ "$(wc -l < "$tmp/words")" -ge 40 ]
if ! cmp -s "$tmp/words" "$tmp/doc_words"; then
  echo "compiler/keywords.def (<) and doc/language.md's section 2.4 (>) list different words:"
  diff "$tmp/words" "$tmp/doc_words"
  check "doc/language.md lists exactly keywords.def's words" false
fi
for grammar in editors/vim/syntax/cgraph.vim editors/vscode/syntaxes/cgraph.tmLanguage.json \
               editors/tree-sitter-cgraph/grammar.js; do
  while IFS= read -r word; do
    check "$grammar names '$word'" grep -qw -- "$word" "$src/$grammar"
  done < "$tmp/words"
done
finish
