// Runs the VS Code extension's activate() outside VS Code, with stand-ins
// for the `vscode` module and vscode-languageclient, and checks what it
// does: it starts `CGC lsp` over stdio for cgraph documents with the
// executable that cgraph.server.path names (default `cgc`), and when that
// cannot be started it says so, naming the setting, and starts nothing.
//   node check_extension.js EXTENSION_JS WORK_DIR
"use strict";
const fs = require("fs");
const path = require("path");
const Module = require("module");

const [extensionPath, work] = process.argv.slice(2);
let failed = 0;
const check = (what, ok) => {
  if (!ok) {
    console.log("FAIL: " + what);
    failed++;
  }
};

// What the stand-ins saw.
let settings = {};
let clients = [];
let errors = [];
let startRejects = null;

class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions, started: false, stopped: false });
    clients.push(this);
  }
  onDidChangeState() {}
  async start() {
    if (startRejects)
      throw startRejects;
    this.started = true;
  }
  async stop() {
    this.stopped = true;
  }
  async dispose() {}
}

const vscode = {
  workspace: {
    getConfiguration: (section) => ({
      get: (key, dflt) => (section + "." + key in settings ? settings[section + "." + key] : dflt),
    }),
    onDidChangeConfiguration: () => ({ dispose() {} }),
  },
  window: {
    createOutputChannel: () => ({ appendLine() {}, dispose() {} }),
    showErrorMessage: async (msg) => {
      errors.push(msg);
      return undefined;
    },
  },
  commands: {
    registerCommand: () => ({ dispose() {} }),
    executeCommand: async () => {},
  },
};
const stubs = {
  vscode,
  "vscode-languageclient/node": { LanguageClient, State: { Stopped: 1, Running: 2 } },
};
const load = Module._load;
Module._load = function (request, ...rest) {
  return request in stubs ? stubs[request] : load.call(this, request, ...rest);
};
const ext = require(path.resolve(extensionPath));

async function activate(config, rejects = null) {
  settings = config;
  clients = [];
  errors = [];
  startRejects = rejects;
  await ext.activate({ subscriptions: [] });
  await ext.deactivate();
}

(async () => {
  // A stand-in cgc on PATH.
  const bin = path.join(work, "bin");
  fs.mkdirSync(bin, { recursive: true });
  const fake = path.join(bin, "cgc");
  fs.writeFileSync(fake, "#!/bin/sh\nexit 0\n");
  fs.chmodSync(fake, 0o755);
  const PATH = process.env.PATH;

  process.env.PATH = bin + path.delimiter + PATH;
  await activate({});
  check("by default one client is started", clients.length === 1 && clients[0].started);
  const c = clients[0] || { serverOptions: { run: {} }, clientOptions: {} };
  check("it runs `cgc lsp` (default cgraph.server.path)",
    c.serverOptions.run.command === "cgc" &&
      JSON.stringify(c.serverOptions.run.args) === '["lsp"]');
  check("over stdio (no other transport)", c.serverOptions.run.transport === undefined);
  check("for cgraph documents",
    (c.clientOptions.documentSelector || []).some((d) => d.language === "cgraph"));
  check("no error shown when it starts", errors.length === 0);
  check("deactivate stops it", c.stopped);

  process.env.PATH = PATH.split(path.delimiter).filter((d) => !fs.existsSync(path.join(d, "cgc")))
    .join(path.delimiter);
  await activate({ "cgraph.server.path": fake });
  check("cgraph.server.path names the executable",
    clients.length === 1 && clients[0].serverOptions.run.command === fake);

  await activate({});
  check("without cgc on PATH no client starts", clients.length === 0);
  check("without cgc on PATH one error is shown", errors.length === 1);
  check("the error names the server and the setting",
    /cannot start the language server/.test(errors[0]) && /cgraph\.server\.path/.test(errors[0]) &&
      /'cgc' was not found/.test(errors[0]));

  await activate({ "cgraph.server.path": path.join(work, "no", "such", "cgc") });
  check("a path that is no executable: no client, one error",
    clients.length === 0 && errors.length === 1 && errors[0].includes("no/such/cgc"));

  await activate({ "cgraph.server.path": fake }, new Error("the server exited with status 1"));
  check("a server that fails to start: one error with the reason",
    errors.length === 1 && errors[0].includes("the server exited with status 1"));

  await activate({ "cgraph.server.enable": false, "cgraph.server.path": fake });
  check("cgraph.server.enable off: no client, no error", clients.length === 0 && !errors.length);

  check("findExecutable finds sh on PATH", !!ext.findExecutable("sh", { PATH }));
  console.log(`extension: ${failed} problems`);
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.log("FAIL: " + (e.stack || e));
  process.exit(1);
});
