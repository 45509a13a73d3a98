# Incremental sync: ranges replaced in turn, in UTF-16 code units.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","languageId":"cgraph","version":1,"text":"@file:utf16.cgraph"}}}
# 'float' (characters 23 to 28 of line 2, after the emoji) becomes 'f32': no error
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","version":2},"contentChanges":[{"range":{"start":{"line":2,"character":23},"end":{"line":2,"character":28}},"text":"f32"}]}}
# two changes in one message: a second buffer inserted, then its type misspelt
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","version":3},"contentChanges":[{"range":{"start":{"line":3,"character":0},"end":{"line":3,"character":0}},"text":"    buffer y: f32[8];\n"},{"range":{"start":{"line":3,"character":14},"end":{"line":3,"character":17}},"text":"u23"}]}}
{"jsonrpc":"2.0","id":1,"method":"textDocument/formatting","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph"},"options":{"tabSize":4,"insertSpaces":true}}}
# a range past the end of its line and of the text is clamped; a whole-text change after it
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","version":4},"contentChanges":[{"range":{"start":{"line":3,"character":14},"end":{"line":3,"character":99}},"text":"u32[8];"},{"range":{"start":{"line":90,"character":0},"end":{"line":99,"character":0}},"text":"// end\n"}]}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/formatting","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph"},"options":{"tabSize":4,"insertSpaces":true}}}
# a change with no text: ignored with the changes after it (nothing to publish)
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","version":5},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}},{"text":""}]}}
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/utf16.cgraph","version":6},"contentChanges":[{"text":"graph g {}\n"}]}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
