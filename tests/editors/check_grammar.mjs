// Tokenizes .cgraph files with the VS Code grammar (editors/vscode) through
// vscode-textmate, as the editor does, and fails on any token the grammar
// marks invalid or any keyword it does not highlight as one (the keywords
// of compiler/keywords.def, the language's one list).
//   node check_grammar.mjs GRAMMAR NODE_MODULES FILE...
import fs from "fs";
import path from "path";
import { createRequire } from "module";

const [grammarPath, modules, ...files] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modules), "index.js"));
const vsctm = require("vscode-textmate");
const onig = require("vscode-oniguruma");
await onig.loadWASM(fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm")).buffer);
const registry = new vsctm.Registry({
  onigLib: Promise.resolve({
    createOnigScanner: (patterns) => new onig.OnigScanner(patterns),
    createOnigString: (s) => new onig.OnigString(s),
  }),
  loadGrammar: async () =>
    vsctm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath),
});
const grammar = await registry.loadGrammar("source.cgraph");

const keywordsDef = new URL("../../compiler/keywords.def", import.meta.url);
const keywords = new Set(
  [...fs.readFileSync(keywordsDef, "utf8").matchAll(/^KEYWORD\(\w+, "(\w+)"\)/gm)].map((m) => m[1]));
if (keywords.size === 0) {
  console.error(`check_grammar: no KEYWORD rows in ${keywordsDef.pathname}`);
  process.exit(1);
}

function check(name, text) {
  const problems = [];
  let state = vsctm.INITIAL;
  text.split("\n").forEach((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    for (const t of r.tokens) {
      const word = line.slice(t.startIndex, t.endIndex);
      const where = `${name}:${i + 1}:${t.startIndex + 1}`;
      if (t.scopes.some((s) => s.startsWith("invalid")))
        problems.push(`${where}: '${word}' is marked invalid`);
      const quoted = t.scopes.some((s) => s.startsWith("comment") || s.startsWith("string"));
      if (!quoted && keywords.has(word) &&
          !t.scopes.some((s) => /^(keyword|storage|support)\./.test(s)))
        problems.push(`${where}: keyword '${word}' is not highlighted (${t.scopes.join(" ")})`);
    }
    state = r.ruleStack;
  });
  return problems;
}

let failed = 0, lines = 0;
for (const f of files) {
  const text = fs.readFileSync(f, "utf8");
  lines += text.split("\n").length;
  for (const p of check(f, text)) {
    console.log("FAIL: " + p);
    failed++;
  }
}
// The check itself can fail: a stray character must show.
// Template arguments are C++: '::', '?' or a '>' in parentheses is no stray.
const template = check("probe", 'kernel k = t<std::size_t, (A > B) ? 1 : 2>(x: i32) from "t.cuh";');
if (template.length) {
  console.log("FAIL: template arguments were marked invalid: " + template.join("; "));
  failed++;
}
if (!check("probe", "const N = 4 @ 5;").length) {
  console.log("FAIL: a stray '@' was not marked invalid");
  failed++;
}
console.log(`${files.length} files, ${lines} lines tokenized; ${failed} problems`);
process.exit(failed ? 1 : 0);
