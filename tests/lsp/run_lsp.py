#!/usr/bin/env python3
"""Drives `cgc lsp` through one recorded exchange and compares its answers.

    run_lsp.py CGC CASE.lsp

CASE.lsp holds what the client sends, one message a line:
  - a JSON message, sent with a Content-Length header.  In it, $ROOT is the
    file: URI of tests/lsp/files, $DIR its path, and "@file:NAME" (a whole string) is the
    text of tests/lsp/files/NAME;
  - "raw: TEXT", TEXT sent as it is after Python's unicode_escape decoding
    (for malformed framing);
  - "exit-status: N", the status cgc lsp must exit with (default 0);
  - "mkfifo: NAME", a FIFO NAME (no writer ever opens it) in a temporary
    folder, which messages name as $FIFOS;
  - "timeout: SECONDS", how long the server may take (default 300);
  - blank lines and lines starting with '#' are skipped.
Standard input is closed after the last message.  Every message the server
writes is read back with its framing checked, $ROOT put back in place of
the URI, and written one JSON object a line (keys sorted) to compare with
CASE.out.  CGC_UPDATE=1 writes CASE.out instead; CGC_VALGRIND=1 runs the
server under valgrind, which must report nothing.
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import urllib.parse

cgc, case = sys.argv[1], pathlib.Path(sys.argv[2])
here = pathlib.Path(__file__).resolve().parent
files = here / "files"
root = "file://" + urllib.parse.quote(str(files))


def substitute(v):
    if isinstance(v, str):
        if v.startswith("@file:"):
            return (files / v[6:]).read_text(encoding="utf-8")
        return v.replace("$ROOT", root).replace("$DIR", str(files)).replace("$FIFOS", fifos)
    if isinstance(v, list):
        return [substitute(x) for x in v]
    if isinstance(v, dict):
        return {k: substitute(x) for k, x in v.items()}
    return v


fifos = tempfile.mkdtemp(prefix="cgc-lsp-")
data = b""
want_status = 0
timeout = 300
for n, line in enumerate(case.read_text(encoding="utf-8").splitlines(), 1):
    if not line.strip() or line.startswith("#"):
        continue
    if line.startswith("raw: "):
        data += line[5:].encode("latin-1").decode("unicode_escape").encode("latin-1")
        continue
    if line.startswith("exit-status: "):
        want_status = int(line.split(":")[1])
        continue
    if line.startswith("mkfifo: "):
        os.mkfifo(os.path.join(fifos, line[8:]))
        continue
    if line.startswith("timeout: "):
        timeout = int(line.split(":")[1])
        continue
    try:
        msg = substitute(json.loads(line))
    except json.JSONDecodeError as e:
        sys.exit(f"{case}:{n}: not JSON: {e}")
    body = json.dumps(msg).encode("utf-8")
    data += b"Content-Length: %d\r\n\r\n" % len(body) + body

cmd = [cgc, "lsp"]
vlog = None
if os.environ.get("CGC_VALGRIND") == "1":
    vlog = tempfile.NamedTemporaryFile(suffix=".log", delete=False).name
    cmd = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
           "--show-leak-kinds=all", "--errors-for-leak-kinds=all",
           "--log-file=" + vlog] + cmd
try:
    p = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout, cwd=str(files))
except subprocess.TimeoutExpired:
    sys.exit(f"FAIL: {case.stem}: no end within {timeout} s")
finally:
    for name in os.listdir(fifos):
        os.unlink(os.path.join(fifos, name))
    os.rmdir(fifos)
out = p.stdout

fail = []
got = []
i = 0
while i < len(out):
    end = out.find(b"\r\n\r\n", i)
    if end < 0:
        fail.append(f"unframed output at byte {i}: {out[i:i + 80]!r}")
        break
    headers = out[i:end].decode("ascii", "replace").split("\r\n")
    length = None
    for h in headers:
        k, _, v = h.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v)
    if length is None:
        fail.append(f"no Content-Length in {headers!r}")
        break
    body = out[end + 4:end + 4 + length]
    if len(body) != length:
        fail.append("a message shorter than its Content-Length")
        break
    try:
        msg = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        fail.append(f"a message that is not JSON ({e}): {body[:80]!r}")
        break
    info = msg.get("result") if isinstance(msg.get("result"), dict) else {}
    if isinstance(info.get("serverInfo"), dict):
        info["serverInfo"]["version"] = "$VERSION"  # not a change of behaviour
    text = json.dumps(msg, sort_keys=True, ensure_ascii=False)
    got.append(text.replace(root, "$ROOT").replace(str(files), "$DIR").replace(fifos, "$FIFOS"))
    i = end + 4 + length
got_text = "".join(s + "\n" for s in got)

expected = case.with_suffix(".out")
if os.environ.get("CGC_UPDATE") == "1":
    expected.write_text(got_text, encoding="utf-8")
want_text = expected.read_text(encoding="utf-8") if expected.exists() else ""
if got_text != want_text:
    import difflib
    sys.stdout.writelines(difflib.unified_diff(
        want_text.splitlines(True), got_text.splitlines(True), str(expected), "cgc lsp"))
    fail.append("the answers differ from " + expected.name)
if p.returncode != want_status:
    fail.append(f"exit status {p.returncode}, expected {want_status}")
if p.stderr and b"ERROR: AddressSanitizer" in p.stderr or b"runtime error:" in p.stderr:
    fail.append("a sanitizer reported an error")
if vlog:
    log = pathlib.Path(vlog).read_text()
    os.unlink(vlog)
    if log.strip():
        print(log)
        fail.append("valgrind reported errors")
if fail:
    sys.stderr.buffer.write(p.stderr)
    for f in fail:
        print(f"FAIL: {case.stem}: {f}")
    sys.exit(1)
