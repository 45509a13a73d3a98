#!/usr/bin/env python3
"""Times cgc on hostile inputs at and over each limit of the whole program.

  bench/limits.py [CGC] [--only NAME]...    (default CGC: build/compiler/cgc)

Each shape is generated just inside a limit, where cgc must succeed, and
just over it (or at the size that once hung cgc), where it must stop with
the limit's diagnostic.  For each run it prints the CPU time (user + system,
steadier than the wall clock on a shared machine), the wall-clock time and
the peak resident memory, and fails when a run exits otherwise than
expected, or exceeds the case's bound on CPU time or memory.  The bounds
are loose on purpose: they are there to catch work that grows faster than
the input (a quadratic phase takes hours at these sizes), not to measure.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

MAX_NODES = 2 * 1024 * 1024
MAX_STATEMENTS = 8 * 1024 * 1024
MAX_EDGES = 16 * 1024 * 1024
MAX_ACCESSES = 16 * 1024 * 1024


def nested_empty_loops(outer, inner):
    return ("graph g {\n    for i in 0 .. %d {\n        for j in 0 .. %d {\n        }\n    }\n}\n"
            % (outer, inner))


def many_ifs(n):
    return ("kernel k(in s: u32*);\ngraph g {\n    scalar s: u32;\n    for i in 0 .. %d {\n"
            "        if s == 0 {\n            k(s) grid(1) block(1);\n        }\n    }\n}\n" % n)


def while_body(writers, readers):
    return ("kernel r(in x: f32*);\nkernel w(inout x: f32*);\ngraph g {\n    scalar s: u32;\n"
            "    buffer x: f32[4];\n    buffer y: f32[4];\n"
            "    for i in 0 .. %d {\n        w(y) grid(1) block(1);\n    }\n"
            "    while s < 1 {\n        for i in 0 .. %d {\n            r(x) grid(1) block(1);\n"
            "        }\n    }\n}\n" % (writers, readers))


def written_edges(width, repeats):
    out = ["kernel e();", "graph g {"]
    for side in "ab":
        out += ["    node %s%d = e() grid(1) block(1);" % (side, i) for i in range(width)]
    left = ", ".join("a%d" % i for i in range(width))
    right = ", ".join("b%d" % i for i in range(width))
    out.append("    for r in 0 .. %d {\n        {%s} -> {%s};\n    }" % (repeats, left, right))
    out.append("}")
    return "\n".join(out) + "\n"


def inferred_edges(writers, readers):
    return ("kernel wr(out x: u8*);\nkernel rd(in x: u8*);\ngraph g {\n    buffer x: u8[%d];\n"
            "    for i in 0 .. %d {\n        wr(x[i]) grid(1) block(1);\n    }\n"
            "    for j in 0 .. %d {\n        rd(x) grid(1) block(1);\n    }\n}\n"
            % (writers, writers, readers))


def many_graphs(graphs, nodes):
    out = ["kernel k(inout x: f32*);"]
    for g in range(graphs):
        out.append("graph g%d {\n    buffer x: f32[4];\n    for i in 0 .. %d {\n"
                   "        node n = k(x) grid(1) block(1);\n    }\n}" % (g, nodes))
    return "\n".join(out) + "\n"


def long_names(nodes, last_digits):
    """Names of 255 + 12 * 20 + last_digits + 2 bytes: 512 with 15 digits."""
    out = ["kernel k(inout x: f32*);", "graph g {", "    buffer x: f32[4];"]
    indent = "    "
    for i in range(12):
        out.append(indent + "for v%d in 999999999999999990 .. 999999999999999991 {" % i)
        indent += "    "
    first = 10 ** (last_digits - 1)
    out.append(indent + "for j in %d .. %d {" % (first, first + nodes))
    out.append(indent + "    node %s = k(x) grid(1) block(1);" % ("n" * 255))
    out.append(indent + "}")
    for i in range(12):
        indent = indent[4:]
        out.append(indent + "}")
    out.append("}")
    return "\n".join(out) + "\n"


def tangled_reduction(n):
    """Every reader has two predecessors, the chain's end and a node no
    chain node reaches: without pruning each reduction walks the chain."""
    return ("kernel w(inout x: f32*);\nkernel p(out s: u32*);\nkernel r(in x: f32*, in s: u32*);\n"
            "graph g {\n    scalar s: u32;\n    buffer x: f32[1];\n    node a = p(s) grid(1) block(1);\n"
            "    for i in 0 .. %d {\n        w(x) grid(1) block(1);\n    }\n"
            "    for j in 0 .. %d {\n        r(x, s) grid(1) block(1);\n    }\n}\n" % (n, n))


def wide_kernels(nodes):
    params = ", ".join("in p%d: f32*" % i for i in range(4095))
    args = ", ".join("x" for _ in range(4095))
    return ("kernel k(%s);\ngraph g {\n    buffer x: f32[4];\n    for i in 0 .. %d {\n"
            "        k(%s) grid(1) block(1);\n    }\n}\n" % (params, nodes, args))


def deep_nesting(depth, nodes):
    out = ["kernel wr(out x: u8*);", "graph g {", "    scalar s: u32;",
           "    buffer x: u8[%d];" % (2 * nodes)]
    indent = "    "
    for _ in range(depth):
        out.append(indent + "if s == 0 {")
        indent += "    "
    out.append(indent + "for i in 0 .. %d {" % nodes)
    out.append(indent + "    wr(x[2 * i]) grid(1) block(1);")
    out.append(indent + "}")
    for _ in range(depth):
        indent = indent[4:]
        out.append(indent + "}")
    out.append("}")
    return "\n".join(out) + "\n"


LIMIT_NODES = "more than %d nodes" % MAX_NODES
LIMIT_STATEMENTS = "more than %d statements" % MAX_STATEMENTS
LIMIT_EDGES = "more than %d edges" % MAX_EDGES
LIMIT_ACCESSES = "more than %d node arguments" % MAX_ACCESSES

# name, what, text, cgc arguments, expected message (None: must succeed),
# CPU-time bound (s), memory bound (MiB)
CASES = [
    ("nested_empty_loops.at", "2,796,200 x 1 empty iterations, 8,388,601 statements",
     lambda: nested_empty_loops(2796200, 1), ["--check"], None, 30, 512),
    ("nested_empty_loops.over", "8,000,000 x 8,000,000 empty iterations (D02)",
     lambda: nested_empty_loops(8000000, 8000000), ["--check"], LIMIT_STATEMENTS, 5, 512),
    ("ifs.100k", "100,000 ifs of one node each (D03)",
     lambda: many_ifs(100000), ["--check"], None, 30, 1024),
    ("ifs.at", "1,048,576 ifs of one node each: 2,097,152 nodes",
     lambda: many_ifs(MAX_NODES // 2), ["--check"], None, 120, 4096),
    ("ifs.over", "1,048,577 ifs of one node each",
     lambda: many_ifs(MAX_NODES // 2 + 1), ["--check"], LIMIT_NODES, 120, 4096),
    ("while_dot.at", "--emit=dot: 1,048,575 writers, and a while of 1,048,575 readers (D04)",
     lambda: while_body(MAX_NODES // 2 - 1, MAX_NODES // 2 - 1), ["--emit=dot"], None, 120, 4096),
    ("while_dot.over", "--emit=dot: 1,048,576 writers, and a while of 1,048,576 readers",
     lambda: while_body(MAX_NODES // 2, MAX_NODES // 2), ["--emit=dot"], LIMIT_NODES, 120, 4096),
    ("written_edges.at", "16 x {1000 nodes} -> {1000 nodes}: 16,000,000 edges (D05a)",
     lambda: written_edges(1000, 16), ["--check"], None, 120, 4096),
    ("written_edges.over", "17 x {1000 nodes} -> {1000 nodes}",
     lambda: written_edges(1000, 17), ["--check"], LIMIT_EDGES, 120, 4096),
    ("inferred_edges.at", "4,096 writers of a byte each, 4,096 readers of all: 16,777,216 edges",
     lambda: inferred_edges(4096, 4096), ["--check"], None, 120, 4096),
    ("inferred_edges.over", "100,000 writers of a byte each, 100,000 readers of all (D05b)",
     lambda: inferred_edges(100000, 100000), ["--check"], LIMIT_EDGES, 120, 4096),
    ("many_graphs.at", "16 graphs of 131,072 nodes: 2,097,152 nodes",
     lambda: many_graphs(16, MAX_NODES // 16), ["--check"], None, 120, 4096),
    ("many_graphs.over", "16 graphs of 131,073 nodes",
     lambda: many_graphs(16, MAX_NODES // 16 + 1), ["--check"], LIMIT_NODES, 120, 4096),
    ("many_graphs.d06", "12 graphs of 2,097,152 nodes (D06): the second one's loop",
     lambda: many_graphs(12, 2048 * 1024), ["--check"], LIMIT_STATEMENTS, 120, 4096),
    ("long_names.at", "2,000,000 nodes named with 512 bytes each (D07)",
     lambda: long_names(2000000, 15), ["--check"], None, 120, 4096),
    ("long_names.over", "nodes named with 513 bytes",
     lambda: long_names(1000, 16), ["--check"], "has a name of 513 bytes", 5, 512),
    ("wide_kernels.at", "4,096 nodes of 4,095 arguments: 16,773,120",
     lambda: wide_kernels(4096), ["--check"], None, 120, 4096),
    ("wide_kernels.over", "4,100 nodes of 4,095 arguments",
     lambda: wide_kernels(4100), ["--check"], LIMIT_ACCESSES, 120, 4096),
    ("deep_nesting.at", "15 nested ifs around 1,000,000 writers of disjoint bytes",
     lambda: deep_nesting(15, 1000000), ["--check"], None, 120, 4096),
    ("deep_nesting.over", "16 nested ifs around 1,000,000 writers of disjoint bytes",
     lambda: deep_nesting(16, 1000000), ["--check"], LIMIT_ACCESSES, 120, 4096),
    ("tangled_reduction", "a chain of 1,000,000 and 1,000,000 readers of its end and of "
     "another node", lambda: tangled_reduction(1000000), ["--check"], None, 120, 4096),
]


def run(cgc, path, args):
    """Runs cgc; returns its status, stderr, CPU seconds, wall seconds and
    peak resident memory in MiB."""
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen([cgc] + args + [path], stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    return (proc.returncode, text, usage.ru_utime + usage.ru_stime, wall,
            usage.ru_maxrss / 1024.0)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cgc", nargs="?", default=os.path.join(here, "..", "build", "compiler", "cgc"))
    ap.add_argument("--only", action="append", default=[], help="run the cases of this name")
    opts = ap.parse_args()
    failures = 0
    print("%-24s %6s %8s %8s %9s  %s" % ("case", "status", "cpu s", "wall s", "peak MiB",
                                          "input"))
    with tempfile.TemporaryDirectory() as tmp:
        for name, what, make, args, message, cpu_bound, mem_bound in CASES:
            if opts.only and not any(name.startswith(o) for o in opts.only):
                continue
            path = os.path.join(tmp, name + ".cgraph")
            with open(path, "w") as f:
                f.write(make())
            status, err, cpu, wall, mib = run(opts.cgc, path, args)
            problems = []
            if message is None and status != 0:
                problems.append("exit %d, expected 0: %s" % (status, err.strip()[:300]))
            if message is not None and (status != 1 or message not in err):
                problems.append("exit %d without '%s': %s" % (status, message, err.strip()[:300]))
            if cpu > cpu_bound:
                problems.append("%.1f s of CPU, bound %d" % (cpu, cpu_bound))
            if mib > mem_bound:
                problems.append("%.0f MiB, bound %d" % (mib, mem_bound))
            print("%-24s %6d %8.2f %8.2f %9.0f  %s" % (name, status, cpu, wall, mib, what))
            for p in problems:
                print("  FAIL: " + p)
            failures += bool(problems)
            os.unlink(path)
            sys.stdout.flush()
    print("limits: %d case%s failed" % (failures, "" if failures == 1 else "s") if failures
          else "limits: every case within its bounds")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
