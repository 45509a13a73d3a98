#!/usr/bin/env python3
"""A change against the tree before it, on the whole model: the
DeepSeek-V2-Lite sample of two or more builds run in turns, in one process
tree on one GPU, so that drift between runs falls on every build alike.

  python3 bench/compare_builds.py [NAME=]DIR [NAME=]DIR ... [--case B:K]...
                                  [--rounds N] [--tokens N] [--out DIR]

Each DIR is a build tree with the sample built (cmake --build DIR --target
deepseek_v2_lite), for example the tip and the change, each its own
checkout, or one checkout configured twice with a macro the change reads
(-DCMAKE_CUDA_FLAGS=-DNAME=VALUE).  For every round and every case (B
sequences at K live keys; default 1:512, 8:512 and 1:4096) it runs each
build's sample with --batch B --keys K --tokens N, the builds taking turns
in an order that moves by one each round, and reads its "us a step" and
the tokens it made.  It prints a table: each build's figures, their median
and the median's ratio to the first build's.  Builds that make different
tokens for the same case are an error (exit 1): a change that is only
faster makes the same tokens.  Exit 77 where there is no GPU.
"""
import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys

import rows as rows_io  # bench/rows.py

SAMPLE = os.path.join("samples", "deepseek_v2_lite", "deepseek_v2_lite")
SECTION = "compare_builds"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("builds", nargs="+", metavar="[NAME=]DIR",
                   help="build trees with the sample built; the first is the baseline")
    p.add_argument("--case", action="append", metavar="B:K",
                   help="B sequences at K live keys (repeatable; default 1:512, 8:512, 1:4096)")
    p.add_argument("--rounds", type=int, default=2, help="runs of each build a case (default 2)")
    p.add_argument("--tokens", type=int, default=65,
                   help="tokens a run makes, the first not timed (default 65)")
    p.add_argument("--sample", default=SAMPLE,
                   help="the program's path in each build tree (default %s)" % SAMPLE)
    p.add_argument("--out", help="also write DIR/compare_builds.csv and .txt")
    a = p.parse_args(argv)
    builds = []
    for spec in a.builds:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = os.path.basename(os.path.normpath(spec)) or spec, spec
        if not name or not path:
            p.error("'%s': expected DIR or NAME=DIR" % spec)
        if any(name == n for n, _ in builds):
            p.error("two builds are named '%s': name them (NAME=DIR)" % name)
        exe = os.path.join(path, a.sample)
        if not os.access(exe, os.X_OK):
            p.error("'%s' has no %s: build it first (cmake --build %s --target %s)"
                    % (path, a.sample, path, os.path.basename(a.sample)))
        builds.append((name, exe))
    cases = []
    for spec in a.case or ["1:512", "8:512", "1:4096"]:
        m = re.fullmatch(r"([0-9]+):([0-9]+)", spec)
        if not m:
            p.error("--case '%s': expected B:K, sequences and live keys (8:512)" % spec)
        cases.append((int(m.group(1)), int(m.group(2))))
    if a.rounds < 1:
        p.error("--rounds must be at least 1")
    if a.tokens < 2:
        p.error("--tokens must be at least 2 (the first token is not timed)")
    return a, builds, cases


def run_once(exe, batch, keys, tokens):
    """(us a step, a digest of the tokens made), or None where there is no
    GPU (the sample's status 77); SystemExit where the sample fails or
    prints no figure."""
    cmd = [exe, "--batch", str(batch), "--keys", str(keys), "--tokens", str(tokens)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode == 77:
        return None
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit("compare_builds: %s failed with status %d" % (" ".join(cmd), p.returncode))
    m = re.search(r"^generation: .*?([0-9.]+) us a step", p.stdout, re.M)
    made = [line for line in p.stdout.splitlines() if line.startswith("sequence ")]
    if not m or not made:
        raise SystemExit("compare_builds: %s printed no 'generation: ... us a step' line or no "
                         "'sequence' lines" % " ".join(cmd))
    return float(m.group(1)), hashlib.sha256("\n".join(made).encode()).hexdigest()[:12]


def measure(builds, cases, rounds, tokens):
    """{(case, build name): [us a step...]} and {(case, build name): digest},
    or None where there is no GPU."""
    times, digests = {}, {}
    for r in range(rounds):
        for case in cases:
            order = builds[r % len(builds):] + builds[:r % len(builds)]
            for name, exe in order:
                got = run_once(exe, case[0], case[1], tokens)
                if got is None:
                    return None
                us, digest = got
                print("round %d, %d sequences at %d keys, %s: %.1f us a step"
                      % (r + 1, case[0], case[1], name, us), flush=True)
                times.setdefault((case, name), []).append(us)
                digests.setdefault((case, name), set()).add(digest)
    return times, digests


def table(builds, cases, times):
    names = [n for n, _ in builds]
    lines = ["DeepSeek-V2-Lite, us a step (each run, then the median; ratio: median / %s's)"
             % names[0]]
    header = ["case"] + names + ["ratio " + n for n in names[1:]]
    body = []
    for case in cases:
        med = {n: statistics.median(times[(case, n)]) for n in names}
        cells = ["%d seq, %d keys" % case]
        for n in names:
            cells.append("%s (%.1f)" % (", ".join("%.1f" % v for v in times[(case, n)]), med[n]))
        for n in names[1:]:
            cells.append("%.4f" % (med[n] / med[names[0]]))
        body.append(cells)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    for r in [header] + body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines) + "\n"


def main(argv):
    a, builds, cases = parse_args(argv)
    got = measure(builds, cases, a.rounds, a.tokens)
    if got is None:
        print("compare_builds: skipped: no GPU")
        return 77
    times, digests = got
    text = table(builds, cases, times)
    rows = []
    for case in cases:
        for name, _ in builds:
            rows.append(rows_io.row(SECTION, "b%d_k%d" % case, name, "us_a_step",
                                    statistics.median(times[(case, name)])))
    rows_io.finish(a.out, SECTION, rows, text)
    bad = False
    for case in cases:
        seen = {name: digests[(case, name)] for name, _ in builds}
        if len(set().union(*seen.values())) != 1:
            bad = True
            print("compare_builds: %d sequences at %d keys: the builds made different tokens (%s)"
                  % (case[0], case[1], "; ".join("%s: %s" % (n, ", ".join(sorted(d)))
                                                 for n, d in seen.items())), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
