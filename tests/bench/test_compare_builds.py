#!/usr/bin/env python3
"""bench/compare_builds.py against fake build trees whose sample is a shell
script: the figures it reads, the table, the builds taking turns, the
cases passed on, and its refusals (different tokens, a failing sample, no
GPU, a missing sample, a bad case).  No GPU needed."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "compare_builds.py")
SAMPLE = os.path.join("samples", "deepseek_v2_lite", "deepseek_v2_lite")
failures = 0


def check(what, ok, detail=""):
    global failures
    print("%s: %s" % ("ok" if ok else "FAILED", what))
    if not ok:
        failures += 1
        if detail:
            print(detail)


def fake(tmp, name, base, tokens="5 6 7", status=0):
    """A build tree whose sample logs its name and arguments, then prints
    BASE + 100 * batch + keys / 512 us a step and the tokens given."""
    exe = os.path.join(tmp, name, SAMPLE)
    os.makedirs(os.path.dirname(exe))
    with open(exe, "w") as f:
        f.write('#!/bin/sh\necho "%s $*" >> "%s"\n' % (name, os.path.join(tmp, "log")))
        if status:
            f.write("exit %d\n" % status)
        f.write('echo "weights: 1.00 GB"\necho "sequence 0: %s"\necho "sequence 1: 9"\n' % tokens)
        f.write('echo "generation: 64 tokens a sequence in one launch after $4 prompt positions: '
                '$(( %d + 100 * $2 + $4 / 512 )).0 us a step, 1.0 tokens/s"\n' % base)
        f.write('echo "host-launched: 64 launches of one token: 1.0 us a step, 1.0 tokens/s"\n')
    os.chmod(exe, 0o755)
    return os.path.join(tmp, name)


def run(*args):
    p = subprocess.run([sys.executable, SCRIPT] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


with tempfile.TemporaryDirectory() as tmp:
    a, b = fake(tmp, "a", 2000), fake(tmp, "b", 1800)
    rc, out, err = run("tip=" + a, "change=" + b, "--case", "1:512", "--case", "8:4096",
                       "--rounds", "3", "--tokens", "9", "--out", os.path.join(tmp, "out"))
    check("two builds that make the same tokens: exit 0", rc == 0, out + err)
    check("the first build's figures and median", "2101.0, 2101.0, 2101.0 (2101.0)" in out, out)
    check("the second build's, at 8 sequences and 4,096 keys",
          "2608.0, 2608.0, 2608.0 (2608.0)" in out, out)
    check("the ratio of the medians", "%.4f" % (1901.0 / 2101.0) in out, out)
    with open(os.path.join(tmp, "log")) as f:
        log = f.read().splitlines()
    check("every run: 2 builds x 2 cases x 3 rounds", len(log) == 12, "\n".join(log))
    check("the arguments passed on", log[0] == "a --batch 1 --keys 512 --tokens 9", "\n".join(log))
    check("the builds take turns: round 2 starts with the second",
          [l.split()[0] for l in log[4:6]] == ["b", "a"], "\n".join(log))
    with open(os.path.join(tmp, "out", "compare_builds.csv")) as f:
        csv_text = f.read()
    check("--out writes the medians as rows",
          "compare_builds,b1_k512,change,us_a_step,1901.0000" in csv_text, csv_text)

    c = fake(tmp, "c", 2000, tokens="5 6 8")
    rc, out, err = run(a, c, "--case", "1:512", "--rounds", "1")
    check("different tokens: exit 1", rc == 1, out + err)
    check("different tokens: said", "made different tokens" in err, err)

    rc, out, err = run(a, fake(tmp, "d", 2000, status=77), "--case", "1:512")
    check("no GPU: exit 77", rc == 77 and "skipped: no GPU" in out, out + err)
    rc, out, err = run(a, fake(tmp, "e", 2000, status=3), "--case", "1:512")
    check("a failing sample: exit 1, said", rc == 1 and "failed with status 3" in err, out + err)
    rc, out, err = run(a, os.path.join(tmp, "nowhere"))
    check("a tree without the sample: usage error", rc == 2 and "build it first" in err, err)
    rc, out, err = run(a, b, "--case", "8x512")
    check("a bad case: usage error", rc == 2 and "expected B:K" in err, err)
    rc, out, err = run(a, a)
    check("two builds of one name: usage error", rc == 2 and "two builds are named" in err, err)

print("%d failed" % failures if failures else "all passed")
sys.exit(1 if failures else 0)
