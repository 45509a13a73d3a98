# A NUL byte in a header line is a byte of that line: the line after it
# (here the Content-Length) is read as it is, and the messages that follow
# keep their framing.  A Content-Length with a NUL after its number is none.
raw: X-A: 1\x00\r\nContent-Length: 2\r\n\r\n{}
raw: Content-Length: 2\x00x\r\n\r\n
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
