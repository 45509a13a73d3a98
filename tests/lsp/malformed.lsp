# Malformed input: each gets JSON-RPC's error (or, for a notification,
# nothing), and the server goes on.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
# not JSON
raw: Content-Length: 9\r\n\r\n{"jsonrp
# no Content-Length
raw: Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n
# a Content-Length that is no number
raw: Content-Length: many\r\n\r\n
# not an object: an array (a batch, which LSP does not use), a number
[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]
42
# no jsonrpc, or another version
{"id":2,"method":"shutdown"}
{"jsonrpc":"1.0","id":3,"method":"shutdown"}
# an id that is an object; a method that is a number
{"jsonrpc":"2.0","id":{"a":1},"method":"shutdown"}
{"jsonrpc":"2.0","id":4,"method":7}
# params that are a string
{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":"x"}
# an unknown method; an unknown notification (no answer); a response
{"jsonrpc":"2.0","id":6,"method":"textDocument/rename","params":{}}
{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}
{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":null}}
{"jsonrpc":"2.0","id":77,"result":null}
# wrong types in params: a position of strings, no textDocument, a document not open
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/main.cgraph","languageId":"cgraph","version":1,"text":"@file:main.cgraph"}}}
{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":"1","character":2}}}
{"jsonrpc":"2.0","id":8,"method":"textDocument/definition","params":{"position":{"line":1,"character":2}}}
{"jsonrpc":"2.0","id":9,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/nothing.cgraph"},"position":{"line":1,"character":2}}}
{"jsonrpc":"2.0","id":10,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":-1,"character":2.5}}}
# positions past the end of a line and of the document are clamped
{"jsonrpc":"2.0","id":11,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":7,"character":500}}}
{"jsonrpc":"2.0","id":12,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":5000,"character":0}}}
# notifications with wrong params are dropped
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":5}}}
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"contentChanges":"all"}}
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"contentChanges":[{"text":7}]}}
# a lone surrogate escape: cJSON refuses the message
{"jsonrpc":"2.0","id":13,"method":"textDocument/hover","params":{"textDocument":{"uri":"\udbff"},"position":{"line":0,"character":0}}}
# a document of nonsense
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"untitled:Untitled-1","languageId":"cgraph","version":1,"text":"graph { include \"x\" ]]]] \u00e9 @"}}}
{"jsonrpc":"2.0","id":14,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"untitled:Untitled-1"}}}
{"jsonrpc":"2.0","id":15,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
