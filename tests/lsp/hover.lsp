# Hover: a kernel (from an include), a buffer, a scalar, a node with its
# launch and inferred edges, a const, a parameter, a type; nothing on a comment.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/main.cgraph","languageId":"cgraph","version":1,"text":"@file:main.cgraph"}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/kernels.cgraph","languageId":"cgraph","version":1,"text":"@file:kernels.cgraph"}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/loops.cgraph","languageId":"cgraph","version":1,"text":"@file:loops.cgraph"}}}
# scale, in a node (line 12)
{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":11,"character":15}}}
# x, an extern buffer
{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":7,"character":19}}}
# y, an owned buffer, where used
{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":11,"character":22}}}
# alpha
{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":6,"character":12}}}
# node t
{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":12,"character":9}}}
# N, the top-level const, where used
{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":7,"character":26}}}
# a parameter of add, in kernels.cgraph
{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/kernels.cgraph"},"position":{"line":2,"character":43}}}
# f32, a type
{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":8,"character":22}}}
# the comment
{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":0,"character":5}}}
# the graph
{"jsonrpc":"2.0","id":10,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":5,"character":7}}}
# step, a node made three times in a loop, and the edge written to it
{"jsonrpc":"2.0","id":11,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/loops.cgraph"},"position":{"line":5,"character":14}}}
# the for variable
{"jsonrpc":"2.0","id":12,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/loops.cgraph"},"position":{"line":5,"character":24}}}
# step in an edge is the node
{"jsonrpc":"2.0","id":13,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/loops.cgraph"},"position":{"line":8,"character":5}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
