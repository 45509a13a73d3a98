# What a name stands for is what the compiler resolved it to: a graph and
# its constant of one name, a kernel from an include and a buffer of its
# name, a while's handle and a loop's constant of one name, a kernel and
# its parameter of one name.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph","languageId":"cgraph","version":1,"text":"@file:fooled.cgraph"}}}
# the graph's name c -> the graph (line 6), not its const c
{"jsonrpc":"2.0","id":1,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":6,"character":6}}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":6,"character":6}}}
# c in an argument -> the graph's const (line 7)
{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":19,"character":9}}}
{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":19,"character":9}}}
# the callee scale -> the kernel in kernels.cgraph, not the buffer scale
{"jsonrpc":"2.0","id":5,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":11,"character":13}}}
{"jsonrpc":"2.0","id":6,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":11,"character":13}}}
# the argument scale -> the buffer (line 8)
{"jsonrpc":"2.0","id":7,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":11,"character":19}}}
# w, the handle argument -> the while node (line 16), not the loop's const w
{"jsonrpc":"2.0","id":8,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":17,"character":20}}}
{"jsonrpc":"2.0","id":9,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":17,"character":20}}}
# w in the loop -> the loop's const (line 13)
{"jsonrpc":"2.0","id":10,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":14,"character":13}}}
# the kernel's name n -> the kernel, not its parameter n
{"jsonrpc":"2.0","id":11,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":3,"character":7}}}
# the parameter n -> itself
{"jsonrpc":"2.0","id":12,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":3,"character":24}}}
{"jsonrpc":"2.0","id":13,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":3,"character":24}}}
# the callee n in the graph -> the kernel (line 3)
{"jsonrpc":"2.0","id":14,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/fooled.cgraph"},"position":{"line":14,"character":8}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
