#!/bin/sh
# The VS Code extension (editors/vscode), as CI packages it: its pinned
# dependencies (package-lock.json) installed from the npm registry into the
# build tree, the extension packaged into a .vsix with the pinned
# @vscode/vsce (`npm run package`), and the package checked for the files
# the extension needs (check_vsix.js).  Then its activation, outside VS
# Code (check_extension.js): `cgc lsp` started with cgraph.server.path, and
# a clear message when it cannot be.
#   run_vscode.sh SOURCE_DIR WORK_DIR
set -u
src=$1 work=$2
ext=$src/editors/vscode
if ! command -v node > /dev/null || ! command -v npm > /dev/null; then
  echo "no node or npm here (Debian packages nodejs and npm; scripts/deps.sh test installs" \
    "them): the VS Code extension is not packaged"
  exit 77
fi
# The pinned vsce's dependencies (cheerio, undici, @azure/*) need node 20.
major=$(node -p 'process.versions.node.split(".")[0]' 2> /dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  echo "node $(node --version) is older than 20, which the pinned @vscode/vsce's dependencies" \
    "need: the VS Code extension is not packaged"
  exit 77
fi
mkdir -p "$work/vscode"
# The extension's files, over those of the last run (node_modules stays).
(cd "$ext" && tar --exclude=./node_modules --exclude='./*.vsix' -cf - .) |
  (cd "$work/vscode" && tar -xf -) || {
  echo "FAIL: could not copy $ext"
  exit 1
}
if ! cmp -s "$ext/package-lock.json" "$work/lock.installed" ||
  [ ! -d "$work/vscode/node_modules/@vscode/vsce" ]; then
  # --ignore-scripts: no install step may download anything (keytar's
  # prebuilt binary, which vsce needs only to publish).
  (cd "$work/vscode" && npm ci --ignore-scripts --no-audit --no-fund > "$work/npm.log" 2>&1) || {
    cat "$work/npm.log"
    echo "FAIL: npm ci could not install the extension's dependencies from the npm registry"
    exit 1
  }
  cp "$ext/package-lock.json" "$work/lock.installed"
fi
rm -f "$work/cgraph.vsix"
(cd "$work/vscode" && npm run --silent package -- -o "$work/cgraph.vsix" > "$work/vsce.log" 2>&1) || {
  cat "$work/vsce.log"
  echo "FAIL: vsce could not package the extension"
  exit 1
}
grep -E 'DONE|WARNING' "$work/vsce.log"
status=0
node "$src/tests/editors/check_vsix.js" "$work/cgraph.vsix" "$work/vscode/node_modules" || status=1
node "$src/tests/editors/check_extension.js" "$ext/extension.js" "$work/activation" || status=1
[ "$status" = 0 ] && echo "vscode: packaged into $work/cgraph.vsix"
exit "$status"
