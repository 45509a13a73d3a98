# Before initialize: requests are refused, notifications dropped.
{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/main.cgraph","languageId":"cgraph","version":1,"text":"@file:main.cgraph"}}}
{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
# initialize twice is an error
{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"capabilities":{}}}
{"jsonrpc":"2.0","id":"s","method":"shutdown"}
# after shutdown: only exit
{"jsonrpc":"2.0","id":4,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"$ROOT/main.cgraph"}}}
{"jsonrpc":"2.0","method":"exit"}
# nothing after exit is read
{"jsonrpc":"2.0","id":5,"method":"shutdown"}
