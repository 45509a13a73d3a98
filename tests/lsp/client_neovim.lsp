# A session in the message shapes of Neovim's built-in client (vim.lsp):
# initialize with clientInfo, workDoneToken and workspace folders, a
# completion context (triggerKind 1), shutdown without params, then exit
# without params: cgc lsp exits 0.
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":31337,"clientInfo":{"name":"Neovim","version":"0.10.2"},"rootPath":"$DIR","rootUri":"$ROOT","initializationOptions":{},"workDoneToken":"1","trace":"off","workspaceFolders":[{"uri":"$ROOT","name":"$DIR"}],"capabilities":{"general":{"positionEncodings":["utf-16"]},"textDocument":{"completion":{"dynamicRegistration":false,"contextSupport":false,"completionItem":{"snippetSupport":false,"commitCharactersSupport":false,"preselectSupport":false,"deprecatedSupport":false,"documentationFormat":["markdown","plaintext"]},"completionItemKind":{"valueSet":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]}},"synchronization":{"didSave":true,"dynamicRegistration":false,"willSave":true,"willSaveWaitUntil":true}},"window":{"workDoneProgress":true,"showMessage":{"messageActionItem":{"additionalPropertiesSupport":false}}},"workspace":{"applyEdit":true,"configuration":true,"workspaceFolders":true}}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/context.cgraph","languageId":"cgraph","version":0,"text":"@file:context.cgraph"}}}
# scale(y, g| : 'a: f32' with the prefix g: the f32 scalar gain
{"jsonrpc":"2.0","id":2,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/context.cgraph"},"position":{"line":16,"character":23},"context":{"triggerKind":1}}}
# grid(| of the second node: integers only
{"jsonrpc":"2.0","id":3,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/context.cgraph"},"position":{"line":16,"character":38},"context":{"triggerKind":1}}}
# at the start of a statement: everything (nodes and keywords among it)
{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/context.cgraph"},"position":{"line":17,"character":4},"context":{"triggerKind":1}}}
{"jsonrpc":"2.0","id":5,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
