# Names in a loop's body that runs no time, and in the arguments of a call
# whose kernel is undefined, stand for what they name there.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/unchecked.cgraph","languageId":"cgraph","version":1,"text":"@file:unchecked.cgraph"}}}
# c in the loop's body -> its const (line 6)
{"jsonrpc":"2.0","id":1,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/unchecked.cgraph"},"position":{"line":7,"character":13}}}
# i in the const -> the for variable (line 5)
{"jsonrpc":"2.0","id":2,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/unchecked.cgraph"},"position":{"line":6,"character":18}}}
# x in the undefined kernel's arguments -> the buffer (line 4)
{"jsonrpc":"2.0","id":3,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/unchecked.cgraph"},"position":{"line":9,"character":16}}}
{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/unchecked.cgraph"},"position":{"line":9,"character":16}}}
# the undefined kernel: nothing
{"jsonrpc":"2.0","id":5,"method":"textDocument/definition","params":{"textDocument":{"uri":"$ROOT/unchecked.cgraph"},"position":{"line":9,"character":13}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
