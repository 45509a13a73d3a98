# Includes through initializationOptions.includePaths (cgc's -I): found,
# and gone to by definition; a node's hover shows the edge that the fill
# after it needs (write after write).
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{},"initializationOptions":{"includePaths":["$DIR/lib",7]}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/uses_lib.cgraph","languageId":"cgraph","version":1,"text":"@file:uses_lib.cgraph"}}}
{"jsonrpc":"2.0","id":1,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/uses_lib.cgraph"},"position":{"line":4,"character":18}}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/uses_lib.cgraph"},"position":{"line":0,"character":10}}}
{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/uses_lib.cgraph"},"position":{"line":4,"character":10}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
