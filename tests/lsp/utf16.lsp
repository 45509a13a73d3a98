# Positions in UTF-16 code units (the default): after a comment holding
# U+1F600 (two units, four bytes), the error on 'float' starts at character
# 23 (25 in bytes), and x, at 20, is hovered.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","languageId":"cgraph","version":1,"text":"@file:utf16.cgraph"}}}
{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph"},"position":{"line":2,"character":20}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
