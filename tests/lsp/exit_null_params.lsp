# exit with "params": null before shutdown ends the server with status 1
{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"$ROOT","capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":null}
{"jsonrpc":"2.0","method":"exit","params":null}
exit-status: 1
