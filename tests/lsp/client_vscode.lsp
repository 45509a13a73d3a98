# A session in the message shapes of VS Code's client (vscode-languageclient):
# initialize with clientInfo, workspace folders and completion capabilities;
# completion requests with a context (triggerKind 1: invoked by the user);
# shutdown and exit with "params": null, after which cgc lsp exits 0.
# Completion offers what fits the position: in rotary(q, | the f32 buffers
# and scalars for 'in freqs: f32*'; in grid(| the constants, the integer
# scalars and cdiv/min, and never node names, kernels or keywords.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":4242,"clientInfo":{"name":"Visual Studio Code","version":"1.95.3"},"locale":"en","rootPath":"$DIR","rootUri":"$ROOT","capabilities":{"workspace":{"applyEdit":true,"workspaceEdit":{"documentChanges":true},"configuration":true,"workspaceFolders":true},"textDocument":{"synchronization":{"dynamicRegistration":true,"willSave":true,"willSaveWaitUntil":true,"didSave":true},"completion":{"dynamicRegistration":true,"contextSupport":true,"completionItem":{"snippetSupport":true,"commitCharactersSupport":true,"documentationFormat":["markdown","plaintext"],"deprecatedSupport":true,"preselectSupport":true,"insertReplaceSupport":true,"labelDetailsSupport":true},"insertTextMode":2,"completionItemKind":{"valueSet":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]}},"hover":{"dynamicRegistration":true,"contentFormat":["markdown","plaintext"]}},"general":{"positionEncodings":["utf-16"]}},"trace":"off","workspaceFolders":[{"uri":"$ROOT","name":"files"}]}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/context.cgraph","languageId":"cgraph","version":1,"text":"@file:context.cgraph"}}}
# rotary(| : the first argument, 'inout q: f16*': the f16 buffers
{"jsonrpc":"2.0","id":1,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/context.cgraph"},"position":{"line":15,"character":20},"context":{"triggerKind":1}}}
# rotary(q, | : 'in freqs: f32*': the f32 buffers and the f32 scalar
{"jsonrpc":"2.0","id":2,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/context.cgraph"},"position":{"line":15,"character":23},"context":{"triggerKind":1}}}
# rotary(q, freqs, | : 'n: u32': constants, the u32 scalar, cdiv and min
{"jsonrpc":"2.0","id":3,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/context.cgraph"},"position":{"line":15,"character":30},"context":{"triggerKind":1}}}
# grid(| : integers only
{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/context.cgraph"},"position":{"line":15,"character":38},"context":{"triggerKind":1}}}
{"jsonrpc":"2.0","id":5,"method":"shutdown","params":null}
{"jsonrpc":"2.0","method":"exit","params":null}
