#!/bin/sh
# Editor support: the VS Code grammar tokenizes every valid program of the
# project without an invalid token (vscode-textmate from the npm registry,
# installed once into the build tree), and Vim recognises .cgraph files and
# loads the syntax for them.
#   run_editors.sh SOURCE_DIR WORK_DIR
set -u
src=$1 work=$2
files=$(ls "$src"/samples/*/*.cgraph "$src"/tests/dot/*.cgraph "$src"/tests/gpu/*.cgraph \
  "$src"/bench/*.cgraph)
status=0
if command -v vim > /dev/null; then
  for f in $files; do
    vim -u NONE -N -es -c "set rtp+=$src/editors/vim" -c 'filetype on' -c 'syntax on' \
      -c "edit $f" -c 'if &filetype !=# "cgraph" || !exists("b:current_syntax") || b:current_syntax !=# "cgraph" | cquit | endif' \
      -c 'qa!' < /dev/null || { echo "FAIL: vim did not take $f as cgraph"; status=1; }
  done
  [ "$status" = 0 ] && echo "vim: every file is cgraph, with its syntax"
fi
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "no node or npm here: the VS Code grammar is not checked"
  exit 77
fi
mkdir -p "$work"
if [ ! -d "$work/node_modules/vscode-textmate" ] || [ ! -d "$work/node_modules/vscode-oniguruma" ]; then
  (cd "$work" && npm install --no-save --silent --no-audit --no-fund \
    vscode-textmate@9.3.2 vscode-oniguruma@2.0.1 > npm.log 2>&1) || {
    cat "$work/npm.log"
    echo "FAIL: could not install vscode-textmate from the npm registry"
    exit 1
  }
fi
# shellcheck disable=SC2086
node "$src/tests/editors/check_grammar.mjs" "$src/editors/vscode/syntaxes/cgraph.tmLanguage.json" \
  "$work/node_modules" $files || status=1
exit "$status"
