#!/usr/bin/env python3
"""Throws mutated LSP sessions at `cgc lsp` for SECONDS: the recorded
exchanges' messages with values, fields and positions changed, documents
of the project's programs with characters inserted, deleted and copied,
messages cut short.  Meant for a sanitizer build; any exit but 0 or 1, or
a sanitizer's report, stops it and leaves the input in crash.bin.

    fuzz_lsp.py CGC SECONDS
"""
import glob
import json
import os
import pathlib
import random
import subprocess
import sys
import time

cgc = sys.argv[1]
secs = float(sys.argv[2])
here = pathlib.Path(__file__).resolve().parent
files = here / "files"
root = "file://" + str(files)
msgs = []
for case in glob.glob(str(here / "*.lsp")):
    for line in open(case):
        if line.startswith("{"):
            try:
                m = json.loads(line.replace("$ROOT", root))
            except Exception:
                continue
            td = m.get("params", {}).get("textDocument", {}) if isinstance(m.get("params"), dict) else {}
            if isinstance(td, dict) and isinstance(td.get("text"), str) and td["text"].startswith("@file:"):
                td["text"] = (files / td["text"][6:]).read_text()
            msgs.append(m)
texts = [p.read_text() for p in files.glob("*.cgraph")] + [p.read_text() for p in (here.parent / "dot").glob("*.cgraph")]
def mutate_text(t):
    t = list(t)
    for _ in range(random.randint(0, 8)):
        op = random.random()
        i = random.randint(0, len(t))
        if op < 0.4 and t:
            del t[min(i, len(t)-1)]
        elif op < 0.8:
            t.insert(i, random.choice(list("{}()[];:,=->. \n\r\"/*é😀\x00abcxyz0129")))
        else:
            j = random.randint(0, len(t)); t[i:i] = t[j:j+random.randint(0,20)]
    return "".join(t)
def mutate(v, depth=0):
    r = random.random()
    if r < 0.03: return random.choice([None, 1, -1, 2.5, "x", [], {}, True, 10**12])
    if isinstance(v, dict):
        return {k: mutate(x, depth+1) for k, x in v.items() if random.random() > 0.02}
    if isinstance(v, list): return [mutate(x, depth+1) for x in v]
    if isinstance(v, int) and not isinstance(v, bool) and random.random() < 0.2: return v + random.randint(-3, 300)
    return v
t0 = time.time(); runs = 0
while time.time() - t0 < secs:
    runs += 1
    seq = [{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{"general":{"positionEncodings":random.choice([["utf-8"],["utf-16"]])}},"initializationOptions":{"includePaths":[str(files)]}}}]
    uris = [root + "/main.cgraph", root + "/kernels.cgraph", root + "/a.cgraph"]
    for _ in range(random.randint(1, 25)):
        r = random.random()
        if r < 0.35:
            u = random.choice(uris)
            seq.append({"jsonrpc":"2.0","method":random.choice(["textDocument/didOpen","textDocument/didChange"]),
                        "params":{"textDocument":{"uri":u,"version":1,"text":mutate_text(random.choice(texts))},
                                  "contentChanges":[{"text":mutate_text(random.choice(texts))}]}})
        elif r < 0.8:
            m = json.loads(json.dumps(random.choice(msgs)))
            if isinstance(m.get("params"), dict) and isinstance(m["params"].get("textDocument"), dict):
                m["params"]["textDocument"]["uri"] = random.choice(uris)
            if isinstance(m.get("params"), dict) and isinstance(m["params"].get("position"), dict):
                m["params"]["position"] = {"line": random.randint(0, 20), "character": random.randint(0, 70)}
            seq.append(mutate(m))
        else:
            seq.append(mutate(random.choice(msgs)))
    data = b""
    for m in seq:
        b = json.dumps(m).encode()
        if random.random() < 0.02: b = b[:random.randint(0, len(b))]
        data += b"Content-Length: %d\r\n\r\n" % len(b) + b
    p = subprocess.run([cgc, "lsp"], input=data, capture_output=True, timeout=60, cwd=str(files),
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"))
    if p.returncode not in (0, 1) or b"Sanitizer" in p.stderr or b"runtime error" in p.stderr:
        open("crash.bin", "wb").write(data)
        print("CRASH rc", p.returncode, p.stderr[-3000:].decode(errors="replace")); sys.exit(1)
print("runs", runs, "no crash")
