#!/usr/bin/env python3
"""Differential test of cgc's ordering against a brute-force reference.

Generates random programs (buffers, views, kernels with in, out and
inout parameters, copies, fills, a scalar written and read through
pointers; plain and explicit graphs with written edges), works out on its
own the edges section 6 of the language reference asks for (an edge for
every conflicting pair in written order, plus the written edges, reduced
transitively; in an explicit graph only written edges, and a hazard error
when a conflicting pair is unordered), and requires cgc's DOT to give
exactly those edges, or cgc to report the hazard; now and then a written
edge closes a cycle, which cgc must report.  In some plain graphs a run
of nodes sits in the bodies of a `while`, an `if` (with or without
`else`) or a `switch` on the scalar: each body is ordered on its own, and
the control node is one node at the top whose accesses are its bodies'
and what its condition reads; DOT must draw a dotted edge from it to each
body node that has no predecessor in its body.

  check_ordering.py CGC [PROGRAMS] [SEED]
"""
import random
import re
import subprocess
import sys
import tempfile
import os

KERNELS = {  # name: parameter modes, in order; "s" marks the u32 scalar
    "r1w1": ["r", "w"],
    "rw": ["rw"],
    "r2w1": ["r", "r", "w"],
    "r1": ["r"],
    "w1": ["w"],
    "rs_w": ["rs", "w"],
    "ws": ["ws"],
}
DECLS = """kernel r1w1(in a: f32*, out b: f32*);
kernel rw(inout a: f32*);
kernel r2w1(in a: f32*, in b: f32*, out c: f32*);
kernel r1(in a: f32*);
kernel w1(out a: f32*);
kernel rs_w(in s: u32*, out a: f32*);
kernel ws(out s: u32*);
"""


def view(rng, name, rows, cols):
    """A random view of buffer `name`: (text, lo byte, hi byte)."""
    row = 4 * cols
    k = rng.random()
    if k < 0.3:
        return name, 0, row * rows
    if k < 0.65:
        i = rng.randrange(rows)
        return "%s[%d]" % (name, i), row * i, row * (i + 1)
    i = rng.randrange(rows)
    j = rng.randrange(i + 1, rows + 1)
    return "%s[%d:%d]" % (name, i, j), row * i, row * j


def program(rng, explicit):
    cols = rng.randint(1, 4)
    buffers = [("b%d" % i, rng.randint(2, 6)) for i in range(rng.randint(1, 4))]
    nodes = []  # (text, [(resource, lo, hi, mode)])
    for n in range(rng.randint(2, 24)):
        k = rng.random()
        if k < 0.12:  # copy between two rows of equal length, not overlapping
            (b1, r1), (b2, r2) = rng.choice(buffers), rng.choice(buffers)
            i, j = rng.randrange(r1), rng.randrange(r2)
            if b1 == b2 and i == j:
                continue
            row = 4 * cols
            nodes.append(("copy(%s[%d], %s[%d])" % (b1, i, b2, j),
                          [(b1, row * i, row * (i + 1), "w"), (b2, row * j, row * (j + 1), "r")]))
        elif k < 0.2:
            b, r = rng.choice(buffers)
            text, lo, hi = view(rng, b, r, cols)
            nodes.append(("fill(%s, 0)" % text, [(b, lo, hi, "w")]))
        else:
            name = rng.choice(sorted(KERNELS))
            args, acc = [], []
            for mode in KERNELS[name]:
                if mode in ("rs", "ws"):
                    args.append("s")
                    acc.append(("s", 0, 4, mode[0]))
                else:
                    b, r = rng.choice(buffers)
                    text, lo, hi = view(rng, b, r, cols)
                    args.append(text)
                    acc.append((b, lo, hi, mode))
            nodes.append(("%s(%s) grid(1) block(32)" % (name, ", ".join(args)), acc))
    names = ["n%d" % i for i in range(len(nodes))]
    bodies, control = [], None  # bodies: [(names, nodes)]
    if not explicit and len(nodes) >= 3 and rng.random() < 0.35:
        i = rng.randrange(len(nodes) - 1)
        j = rng.randrange(i + 1, len(nodes))
        control = rng.choice(["while", "if", "switch"])
        cuts = sorted(rng.sample(range(i + 1, j), min(rng.randint(0, 2), j - i - 1)))
        if control == "while":
            cuts = []
        elif control == "if":
            cuts = cuts[:1]
        bounds = [i] + cuts + [j]
        bodies = [(names[a:b], nodes[a:b]) for a, b in zip(bounds, bounds[1:])]
        if control == "if" and len(bodies) == 1 and rng.random() < 0.3:
            bodies.append(([], []))  # an empty else
        acc = [("s", 0, 4, "r")] + [a for (_, accs) in nodes[i:j] for a in accs]
        nodes = nodes[:i] + [(None, acc)] + nodes[j:]
        names = names[:i] + ["ctl"] + names[j:]
    n = len(nodes)
    conflicts = conflicts_of(nodes)
    # Written edges follow a random order of the nodes that respects the
    # conflicts; in an explicit graph they are the conflicting pairs in that
    # order (now and then one left out: a hazard, unless a path covers it).
    order = list(range(n))
    rng.shuffle(order)
    order = topological(n, conflicts if not explicit else set(), order)
    pos = {v: k for k, v in enumerate(order)}
    if explicit:
        written = set((a, b) if pos[a] < pos[b] else (b, a)
                      for (a, b) in conflicts if rng.random() < 0.97)
    else:
        written = set()
    for _ in range(rng.randint(0, 3)):  # extra edges, often redundant, some backward
        if n >= 2:
            a, b = rng.sample(range(n), 2)
            written.add((a, b) if pos[a] < pos[b] else (b, a))
    # Now and then a written edge against the order: a cycle.
    cyclic = False
    base = conflicts | written if not explicit else written
    if base and rng.random() < 0.05:
        a, b = rng.choice(sorted(base))
        written.add((b, a))
        cyclic = True
    lines = [DECLS, "%sgraph g {" % ("explicit " if explicit else ""), "    scalar s: u32;"]
    lines += ["    buffer %s: f32[%d, %d];" % (b, r, cols) for b, r in buffers]
    for name, (t, _) in zip(names, nodes):
        if t is not None:
            lines.append("    node %s = %s;" % (name, t))
            continue
        heads = {"while": ["node ctl = while s == 0 max 4 {"],
                 "if": ["node ctl = if s != 0 {", "} else {"],
                 "switch": ["node ctl = switch s {", "case 0 {", "case 7 {", "default {"]}
        for k, (bnames, bnodes) in enumerate(bodies):
            if control == "switch":
                lines.append("    " + heads["switch"][0] if k == 0 else "    }")
                lines.append("    " + heads["switch"][k + 1 if k + 1 < len(bodies) else 3])
            else:
                lines.append("    " + heads[control][k])
            lines += ["        node %s = %s;" % (bn, bt) for bn, (bt, _) in zip(bnames, bnodes)]
        lines.append("    }" if control != "switch" else "    }\n    }")
    lines += ["    %s -> %s;" % (names[a], names[b]) for (a, b) in sorted(written)]
    lines.append("}")
    ctl = {"edges": set(), "entries": set(), "kind": control}
    for bnames, bnodes in bodies:
        body_edges = reduction(len(bnodes), conflicts_of(bnodes))
        ctl["edges"] |= set((bnames[a], bnames[b]) for (a, b) in body_edges)
        ctl["entries"] |= set(("ctl", bnames[v]) for v in range(len(bnodes))
                              if not any(b == v for (_, b) in body_edges))
    return "\n".join(lines) + "\n", names, conflicts, written, cyclic, ctl


def conflicts_of(nodes):
    """The pairs (i, j), i before j, whose accesses conflict."""
    conflicts = set()
    for i in range(len(nodes)):
        for j in range(i + 1, len(nodes)):
            for (r1, lo1, hi1, m1) in nodes[i][1]:
                for (r2, lo2, hi2, m2) in nodes[j][1]:
                    if r1 == r2 and lo1 < hi2 and lo2 < hi1 and ("w" in m1 or "w" in m2):
                        conflicts.add((i, j))
    return conflicts


def topological(n, edges, preference):
    """The nodes in an order that respects `edges`, else `preference`."""
    indeg = [0] * n
    for (_, b) in edges:
        indeg[b] += 1
    placed, out = set(), []
    while len(out) < n:
        v = next(v for v in preference if v not in placed and indeg[v] == 0)
        placed.add(v)
        out.append(v)
        for (a, b) in edges:
            if a == v:
                indeg[b] -= 1
    return out


def closure(n, edges):
    """reach[v]: the nodes a path of `edges` leads to from v (a DAG)."""
    reach = [None] * n

    def visit(v):
        if reach[v] is None:
            reach[v] = set()
            for (a, b) in edges:
                if a == v:
                    reach[v] |= {b} | visit(b)
        return reach[v]

    for v in range(n):
        visit(v)
    return reach


def reduction(n, edges):
    reach = closure(n, edges)
    return set((a, b) for (a, b) in edges
               if not any(b in reach[w] for w in reach[a] if w != b))


def main():
    cgc = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else random.randrange(1 << 30)
    print("check_ordering: seed %d" % seed)
    rng = random.Random(seed)
    failures = hazards = cycles = 0
    controls = {"while": 0, "if": 0, "switch": 0}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.cgraph")
        for k in range(count):
            explicit = rng.random() < 0.4
            text, names, conflicts, written, cyclic, ctl = program(rng, explicit)
            n = len(names)
            if ctl["kind"]:
                controls[ctl["kind"]] += 1
            with open(path, "w") as f:
                f.write(text)
            r = subprocess.run([cgc, "--emit=dot", path], capture_output=True, text=True)
            drawn = re.findall(r'"(\w+)" -> "(\w+)"( \[style=dotted\])?', r.stdout)
            edges = set((a, b) for a, b, dotted in drawn if not dotted)
            entries = set((a, b) for a, b, dotted in drawn if dotted)

            def named(pairs):
                return set((names[a], names[b]) for (a, b) in pairs)
            if cyclic:
                cycles += 1
                ok = r.returncode == 1 and "form a cycle" in r.stderr
                want = "a cycle error"
            elif explicit:
                reach = closure(n, written)
                unordered = [c for c in conflicts
                             if c[1] not in reach[c[0]] and c[0] not in reach[c[1]]]
                if unordered:
                    hazards += 1
                    ok = r.returncode == 1 and "hazard on" in r.stderr
                    want = "a hazard error (%s)" % unordered
                else:
                    want_edges = named(reduction(n, written))
                    ok = r.returncode == 0 and edges == want_edges
                    want = sorted(want_edges)
            else:
                want_edges = named(reduction(n, conflicts | written)) | ctl["edges"]
                ok = r.returncode == 0 and edges == want_edges and entries == ctl["entries"]
                want = "%s, entries %s" % (sorted(want_edges), sorted(ctl["entries"]))
            if not ok:
                failures += 1
                print("FAIL: program %d (seed %d)\n%s\ncgc (exit %d): %s\n%s\nexpected: %s"
                      % (k, seed, text, r.returncode, sorted(edges), r.stderr, want))
                if failures >= 3:
                    break
    print("%d passed, %d failed (%d programs with a hazard, %d with a cycle, %d with a while, "
          "%d with an if, %d with a switch)"
          % (count - failures, failures, hazards, cycles, controls["while"], controls["if"],
             controls["switch"]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
