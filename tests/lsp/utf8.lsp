# Positions in UTF-8 bytes, when the client offers utf-8: the same error at 25, x at 22.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"capabilities":{"general":{"positionEncodings":["utf-8","utf-16"]}}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","languageId":"cgraph","version":1,"text":"@file:utf16.cgraph"}}}
{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph"},"position":{"line":2,"character":22}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
