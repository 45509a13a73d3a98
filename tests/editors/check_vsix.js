// Checks a packaged VS Code extension (.vsix, a zip): the files the
// extension needs are in it, with the language client among its
// dependencies, and nothing of the packaging tools.
//   node check_vsix.js VSIX NODE_MODULES
"use strict";
const path = require("path");
const [vsix, modules] = process.argv.slice(2);
const yauzl = require(path.join(path.resolve(modules), "yauzl"));

function entries(file) {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err)
        return reject(err);
      const found = new Map();
      zip.on("entry", (e) => {
        if (!e.fileName.endsWith("/") && e.fileName === "extension/package.json") {
          zip.openReadStream(e, (err2, stream) => {
            if (err2)
              return reject(err2);
            const chunks = [];
            stream.on("data", (c) => chunks.push(c));
            stream.on("end", () => {
              found.set(e.fileName, Buffer.concat(chunks).toString("utf8"));
              zip.readEntry();
            });
          });
        } else {
          found.set(e.fileName, null);
          zip.readEntry();
        }
      });
      zip.on("end", () => resolve(found));
      zip.readEntry();
    });
  });
}

(async () => {
  const files = await entries(vsix);
  let failed = 0;
  const fail = (msg) => {
    console.log("FAIL: " + msg);
    failed++;
  };
  for (const f of ["extension.vsixmanifest", "[Content_Types].xml", "extension/package.json",
    "extension/extension.js", "extension/README.md", "extension/language-configuration.json",
    "extension/syntaxes/cgraph.tmLanguage.json",
    "extension/node_modules/vscode-languageclient/package.json",
    "extension/node_modules/vscode-languageclient/node.js",
    "extension/node_modules/vscode-jsonrpc/package.json",
    "extension/node_modules/vscode-languageserver-protocol/package.json"])
    if (!files.has(f))
      fail(`${f} is not in the package`);
  for (const f of files.keys())
    if (/node_modules\/(@vscode\/vsce|yauzl|typescript)\//.test(f) || f.endsWith(".vsix"))
      fail(`${f} is in the package: packaging tools do not belong there`);
  const manifest = JSON.parse(files.get("extension/package.json") || "{}");
  if (!files.has("extension/" + path.posix.normalize(manifest.main || "")))
    fail(`the package's main (${manifest.main}) is not in it`);
  const props = ((manifest.contributes || {}).configuration || {}).properties || {};
  if (!props["cgraph.server.path"] || props["cgraph.server.path"].default !== "cgc")
    fail("the setting cgraph.server.path (default cgc) is not contributed");
  if (!((manifest.contributes || {}).grammars || []).some((g) => g.scopeName === "source.cgraph"))
    fail("the TextMate grammar is not contributed");
  if (!(manifest.dependencies || {})["vscode-languageclient"])
    fail("vscode-languageclient is not a dependency");
  console.log(`${vsix}: ${files.size} files; ${failed} problems`);
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log("FAIL: " + e.message);
  process.exit(1);
});
