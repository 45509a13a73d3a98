# Strings of the document may spell bytes that are not UTF-8 ("\xff"), and
# messages and hovers quote them: every message stays UTF-8, each such
# byte U+FFFD, as in cgc's JSON diagnostics.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/bytes.cgraph","languageId":"cgraph","version":1,"text":"include \"\\xff\";\nkernel k() from \"m\\xfe.ptx\";\nkernel t = scale<int>() from \"h\\xfd.cuh\";\n"}}}
{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/bytes.cgraph"},"position":{"line":1,"character":7}}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"$ROOT/bytes.cgraph"}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
