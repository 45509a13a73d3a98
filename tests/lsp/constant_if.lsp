# An if of constants: hover on a node of each body (each made in one
# variant, which the hover names), on a constant of a body, and the
# definition of that constant where it is used; hover on a node of a body
# not taken (no variants): none is made.  The document has no diagnostics.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/constant_if.cgraph","languageId":"cgraph","version":1,"text":"@file:constant_if.cgraph"}}}
# wide, made in g_4
{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/constant_if.cgraph"},"position":{"line":6,"character":14}}}
# narrow, made in g_1
{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/constant_if.cgraph"},"position":{"line":8,"character":14}}}
# N where used
{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/constant_if.cgraph"},"position":{"line":6,"character":26}}}
{"jsonrpc":"2.0","id":4,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/constant_if.cgraph"},"position":{"line":6,"character":26}}}
# never, in h
{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/constant_if.cgraph"},"position":{"line":16,"character":14}}}
# first, in h
{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/constant_if.cgraph"},"position":{"line":14,"character":10}}}
{"jsonrpc":"2.0","id":7,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
