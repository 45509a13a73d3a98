# Formatting through cgc fmt's code: a messy document gets one edit, a
# formatted one none, and one with errors is refused.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/messy.cgraph","languageId":"cgraph","version":1,"text":"@file:messy.cgraph"}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/main.cgraph","languageId":"cgraph","version":1,"text":"@file:main.cgraph"}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/errors.cgraph","languageId":"cgraph","version":1,"text":"@file:errors.cgraph"}}}
{"jsonrpc":"2.0","id":"messy","method":"textDocument/formatting","params":{"textDocument":{"uri":"$ROOT/messy.cgraph"},"options":{"tabSize":4,"insertSpaces":true}}}
{"jsonrpc":"2.0","id":"main","method":"textDocument/formatting","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"options":{"tabSize":4,"insertSpaces":true}}}
{"jsonrpc":"2.0","id":"errors","method":"textDocument/formatting","params":{"textDocument":{"uri":"$ROOT/errors.cgraph"},"options":{"tabSize":4,"insertSpaces":true}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
