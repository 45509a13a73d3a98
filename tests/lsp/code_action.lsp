# Quick fixes from the fixes a diagnostic carries.
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/errors.cgraph","languageId":"cgraph","version":1,"text":"@file:errors.cgraph"}}}
{"jsonrpc":"2.0","id":1,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"$ROOT/errors.cgraph"},"range":{"start":{"line":3,"character":14},"end":{"line":3,"character":19}},"context":{"diagnostics":[{"range":{"end":{"character":19,"line":3},"start":{"character":14,"line":3}},"severity":1,"code":"E0001","source":"cgc","message":"unknown type","data":{"fixes":[{"uri":"$ROOT/errors.cgraph","range":{"end":{"character":19,"line":3},"start":{"character":14,"line":3}},"newText":"f32"}]}},{"range":{"end":{"character":1,"line":0},"start":{"character":0,"line":0}},"message":"no data"}]}}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/codeAction","params":{"textDocument":{"uri":"$ROOT/errors.cgraph"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
