# Diagnostics: a document with errors (codes, a fix as data, a did-you-mean),
# an error in an included file (at the include, with the place as related
# information), a change that mends it, a warning, and a close.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/errors.cgraph","languageId":"cgraph","version":1,"text":"@file:errors.cgraph"}}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/badinc.cgraph","languageId":"cgraph","version":1,"text":"@file:badinc.cgraph"}}}
# the included file opened with its error mended: badinc is analysed again
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/broken_kernels.cgraph","languageId":"cgraph","version":1,"text":"kernel k(in x: f32*);\n"}}}
# a change to errors.cgraph: one buffer left unused (a warning)
{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"$ROOT/errors.cgraph","version":2},"contentChanges":[{"text":"include \"kernels.cgraph\";\n\ngraph broken {\n    buffer x: f32[16];\n    buffer y: f32[16];\n    buffer unused: f32[16];\n    fill(x, 1.0);\n    node a = scale(x, y, 1.0, 16) grid(1) block(64);\n}\n"}]}}
# closing the included file: badinc reads the file on disk again
{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"$ROOT/broken_kernels.cgraph"}}}
{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"$ROOT/errors.cgraph"}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
