# Files a document names that are FIFOs (no writer ever comes) or the
# server's own standard input: each is refused without blocking the server,
# which answers what follows.
mkfifo: inc.cgraph
mkfifo: k.ptx
timeout: 20
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$ROOT/fifo.cgraph","languageId":"cgraph","version":1,"text":"include \"$FIFOS/inc.cgraph\";\ninclude \"/dev/stdin\";\nkernel k(inout x: f32*) from \"$FIFOS/k.ptx\";\nkernel j(inout x: f32*) from \"/dev/stdin\";\n"}}}
{"jsonrpc":"2.0","id":1,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"$ROOT/fifo.cgraph"}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
