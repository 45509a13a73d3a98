# Completion: the names in scope with a prefix, and everything at a blank;
# a loop's variable and constants only inside that loop.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/main.cgraph","languageId":"cgraph","version":1,"text":"@file:main.cgraph"}}}
# 'al' in the graph (after 'alpha' on line 7, col 11)
{"jsonrpc":"2.0","id":1,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":6,"character":13}}}
# 'sc' on line 12
{"jsonrpc":"2.0","id":2,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":11,"character":15}}}
# at the start of an empty-prefix place: all
{"jsonrpc":"2.0","id":3,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/main.cgraph"},"position":{"line":12,"character":4}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/scopes.cgraph","languageId":"cgraph","version":1,"text":"@file:scopes.cgraph"}}}
# 'c' inside the second loop (line 12, x[c]): its const c among the rest
{"jsonrpc":"2.0","id":4,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/scopes.cgraph"},"position":{"line":11,"character":13}}}
# 'i' of 'if' after the loops (line 14): no for variable i
{"jsonrpc":"2.0","id":5,"method":"textDocument/completion","params":{"textDocument":{"uri":"$ROOT/scopes.cgraph"},"position":{"line":13,"character":5}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
