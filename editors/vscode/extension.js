// The cgraph extension: highlighting comes from the TextMate grammar
// (syntaxes/); everything else from cgc's language server, `cgc lsp`,
// spoken to over stdio.  The setting cgraph.server.path names the cgc
// executable (default: `cgc` on PATH).
"use strict";
const fs = require("fs");
const path = require("path");
const vscode = require("vscode");
const { LanguageClient, State } = require("vscode-languageclient/node");

let client; // the running client, or undefined
let output; // the cgraph output channel

function serverPath() {
  const path = vscode.workspace.getConfiguration("cgraph").get("server.path", "cgc");
  return path && path.trim() ? path.trim() : "cgc";
}

// The file a command runs: itself when it names a path, else the first
// executable of that name on PATH; undefined when there is none.
function findExecutable(command, env = process.env) {
  const isFile = (f) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return fs.statSync(f).isFile();
    } catch (_) {
      return false;
    }
  };
  const exts = process.platform === "win32"
    ? ["", ...(env.PATHEXT || ".EXE;.CMD;.BAT").split(";")]
    : [""];
  if (command.includes("/") || command.includes(path.sep))
    return exts.map((e) => command + e).find(isFile);
  for (const dir of (env.PATH || "").split(path.delimiter)) {
    if (!dir)
      continue;
    const found = exts.map((e) => path.join(dir, command + e)).find(isFile);
    if (found)
      return found;
  }
  return undefined;
}

// Why the server could not start, in words a user can act on.
function startFailure(command, err) {
  const why = err && err.code === "ENOENT"
    ? `'${command}' was not found`
    : String((err && err.message) || err);
  return `cgraph: cannot start the language server ('${command} lsp'): ${why}. ` +
    "Install cgc, or set 'cgraph.server.path' to the cgc executable. " +
    "Highlighting still works without it.";
}

async function reportFailure(message) {
  output.appendLine(message);
  const choice = await vscode.window.showErrorMessage(message, "Open Settings");
  if (choice === "Open Settings")
    await vscode.commands.executeCommand("workbench.action.openSettings", "cgraph.server.path");
}

async function start(context) {
  const config = vscode.workspace.getConfiguration("cgraph");
  if (!config.get("server.enable", true))
    return;
  const command = serverPath();
  if (!findExecutable(command)) {
    await reportFailure(startFailure(command, { code: "ENOENT" }));
    return;
  }
  const serverOptions = {
    run: { command, args: ["lsp"] },
    debug: { command, args: ["lsp"] },
  };
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "cgraph" },
      { scheme: "untitled", language: "cgraph" },
    ],
    outputChannel: output,
    // Reports a failed start once, here, instead of the client's own popups.
    initializationFailedHandler: () => false,
  };
  const c = new LanguageClient("cgraph", "cgraph language server", serverOptions, clientOptions);
  c.onDidChangeState((e) => {
    if (e.newState === State.Stopped && client === c)
      output.appendLine("cgraph: the language server stopped");
  });
  try {
    await c.start();
    client = c;
  } catch (err) {
    await reportFailure(startFailure(command, err));
    try {
      await c.dispose();
    } catch (_) {
      // A client that never started has nothing to stop.
    }
  }
}

async function stop() {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop();
    } catch (_) {
      // Already stopped (the server exited).
    }
  }
}

async function activate(context) {
  output = vscode.window.createOutputChannel("cgraph");
  context.subscriptions.push(output);
  context.subscriptions.push(vscode.commands.registerCommand("cgraph.restartServer", async () => {
    await stop();
    await start(context);
  }));
  context.subscriptions.push(vscode.workspace.onDidChangeConfiguration(async (e) => {
    if (e.affectsConfiguration("cgraph.server")) {
      await stop();
      await start(context);
    }
  }));
  await start(context);
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate, findExecutable, startFailure };
