# Go to definition: across an include, on an include's path, in a graph,
# a parameter, nowhere, and names that two blocks declare each.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/main.cgraph","languageId":"cgraph","version":1,"text":"@file:main.cgraph"}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/loops.cgraph","languageId":"cgraph","version":1,"text":"@file:loops.cgraph"}}}
# scale -> kernels.cgraph
{"jsonrpc":"2.0","id":1,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":11,"character":15}}}
# the include's path -> the file
{"jsonrpc":"2.0","id":2,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":1,"character":12}}}
# y -> its buffer
{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":11,"character":22}}}
# N -> the const
{"jsonrpc":"2.0","id":4,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":7,"character":26}}}
# step in an edge -> the node
{"jsonrpc":"2.0","id":5,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/loops.cgraph"},"position":{"line":8,"character":5}}}
# i -> the for variable
{"jsonrpc":"2.0","id":6,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/loops.cgraph"},"position":{"line":5,"character":24}}}
# a keyword: nothing
{"jsonrpc":"2.0","id":7,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":5,"character":2}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/scopes.cgraph","languageId":"cgraph","version":1,"text":"@file:scopes.cgraph"}}}
# c in the second loop -> the second loop's const (line 10), not the first's
{"jsonrpc":"2.0","id":8,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/scopes.cgraph"},"position":{"line":11,"character":12}}}
# i in the second loop -> the second `for i` (line 9)
{"jsonrpc":"2.0","id":9,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/scopes.cgraph"},"position":{"line":10,"character":18}}}
# i in a for in an else -> that for (line 16)
{"jsonrpc":"2.0","id":10,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/scopes.cgraph"},"position":{"line":17,"character":16}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
