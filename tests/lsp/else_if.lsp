# else if: hover on a node of a later if of the chain and of its last
# else, and on a node of an if of constants that is not taken (none is
# made); the definition of a constant of an 'else if' body where it is
# used; completion in that body offers its constant, and in the last else
# its own; the outline has the chain's named nodes, and the chain's
# range runs to its last else.  The document has no
# diagnostics.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph","languageId":"cgraph","version":1,"text":"@file:else_if.cgraph"}}}
# second
{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph"},"position":{"line":9,"character":14}}}
# last
{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph"},"position":{"line":14,"character":14}}}
# never
{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph"},"position":{"line":11,"character":14}}}
# M where used
{"jsonrpc":"2.0","id":4,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph"},"position":{"line":9,"character":27}}}
# completion of the argument of second (M, not L), then of last (L, not M)
{"jsonrpc":"2.0","id":5,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph"},"position":{"line":9,"character":27}}}
{"jsonrpc":"2.0","id":6,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph"},"position":{"line":14,"character":25}}}
{"jsonrpc":"2.0","id":7,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"$ROOT/else_if.cgraph"}}}
{"jsonrpc":"2.0","id":8,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
