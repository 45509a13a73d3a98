#!/usr/bin/env python3
"""Differential testing of cgc's ordering on the GPU.

Generates random valid .cgraph programs (buffers and views of them, nodes
drawn from a small library of integer kernels with in, out and inout
parameters, copies, fills, a launch scalar written and read through
pointers; plain graphs and explicit graphs with the written edges they
need; in half the plain graphs one or two runs of nodes inside a while
with max, an if with or without else, or a switch on the scalar, their
conditions over the scalar and buffer elements), compiles them all into
one program with cgc, runs every graph twice
on the GPU (rebinding its extern buffers between the two launches) and
requires every buffer and the scalar to be bit-identical to a CPU
interpretation of sequential semantics: the nodes run one after another in
the order written.  Every kernel first spins for a random time, so an
edge that is missing shows as a wrong value.

A graph that fails is shrunk (nodes dropped one at a time while it still
fails) and saved as JSON; every file in regressions/ runs again each time.

  gpu_diff.py --cgc CGC --cgrt LIBCGRT --include DIR [--include DIR ...]
              --nvcc NVCC --cc CC --arch 90 [--cudart LIBCUDART]
              [--programs N] [--seed S] [--save DIR] [--keep DIR]
              [--mutate]

--mutate drops one edge from each graph's generated C (the harness's own
check: most graphs must then fail, and shrink to the two nodes of that
edge and what they need).  Exit status 0: all equal; 1: a difference (or
a build error); 77: no GPU here.
"""
import argparse
import ctypes
import glob
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
M = 0xFFFFFFFF
COLS = 16  # u32 elements a row; views select rows

DECLS = """kernel d_add(in a: u32*, inout b: u32*, n: u32, ns: u64);
kernel d_mix(in a: u32*, in b: u32*, out c: u32*, n: u32, ns: u64);
kernel d_scale(inout a: u32*, n: u32, k: u32, ns: u64);
kernel d_set(out a: u32*, n: u32, k: u32, ns: u64);
kernel d_sum(in a: u32*, out s: u32*, n: u32, ns: u64);
kernel d_adds(in s: u32*, inout a: u32*, n: u32, ns: u64);
"""

# op: modes of its views, in order ("r", "w", "rw"); the scalar is apart.
OPS = {
    "add": ["r", "rw"],
    "mix": ["r", "r", "w"],
    "scale": ["rw"],
    "set": ["w"],
    "sum": ["r"],      # writes s
    "adds": ["rw"],    # reads s
    "copy": ["w", "r"],
    "fill": ["w"],
}
SPINS = [0, 0, 0, 2000, 10000, 30000]


# ---- generating ----

def gen_program(rng, index):
    explicit = rng.random() < 0.35
    nbuf = rng.randint(2, 4)
    buffers = []
    for b in range(nbuf):
        kind = rng.choice(["extern", "owned", "zero"])
        buffers.append({"name": "b%d" % b, "rows": rng.randint(2, 6), "kind": kind})
    nodes = []
    for i in range(rng.randint(3, 14)):
        node = gen_node(rng, buffers, i)
        if node:
            nodes.append(node)
    prog = {"name": "g%d" % index, "explicit": explicit, "buffers": buffers, "nodes": nodes,
            "extra": [], "seed": rng.randrange(1 << 30)}
    # Extra written edges, always forward, so never a cycle.
    n = len(nodes)
    for _ in range(rng.randint(0, 2)):
        if n >= 2:
            i = rng.randrange(n - 1)
            j = rng.randrange(i + 1, n)
            prog["extra"].append([nodes[i]["name"], nodes[j]["name"]])
    prog["blocks"] = []
    if not explicit and n >= 2 and rng.random() < 0.5:
        add_blocks(rng, prog)
    return prog


def gen_cond(rng, prog, depth=0):
    """A condition over the scalar and buffer elements (u32)."""
    k = rng.random()
    if depth < 2 and k < 0.25:
        return {"and" if rng.random() < 0.5 else "or": [gen_cond(rng, prog, depth + 1),
                                                        gen_cond(rng, prog, depth + 1)]}
    if depth < 2 and k < 0.35:
        return {"not": gen_cond(rng, prog, depth + 1)}
    if rng.random() < 0.4:
        operand = {"s": 1}
        value = rng.choice([2, 3, 1 << 31, rng.randrange(1 << 32)])
    else:
        b = rng.choice(prog["buffers"])
        operand = {"buf": b["name"], "row": rng.randrange(b["rows"]), "col": rng.randrange(COLS)}
        value = rng.choice([1 << 31, rng.randrange(1 << 32), 0])
    return {"cmp": rng.choice(["==", "!=", "<", "<=", ">", ">="]), "a": operand, "k": value}


def add_blocks(rng, prog):
    """Wraps one or two runs of a plain graph's nodes in while, if (with or
    without else) or switch; written edges stay between top-level nodes."""
    nodes = prog["nodes"]
    n = len(nodes)
    cuts = sorted(rng.sample(range(n + 1), 4 if n >= 4 and rng.random() < 0.4 else 2))
    for b in range(len(cuts) // 2):
        lo, hi = cuts[2 * b], cuts[2 * b + 1]
        if lo == hi:
            continue
        kind = rng.choice(["while", "if", "ifelse", "switch"])
        block = {"kind": kind}
        if kind == "switch":
            block["cases"] = rng.sample([0, 1, 2, 3, 7, 1 << 31], rng.randint(1, 3))
            block["default"] = rng.random() < 0.6
            nb = len(block["cases"]) + block["default"]
        else:
            block["cond"] = gen_cond(rng, prog)
            if kind == "while":
                block["max"] = rng.randint(1, 3)
            nb = 2 if kind == "ifelse" else 1
        for i in range(lo, hi):
            nodes[i]["scope"] = len(prog["blocks"])
            nodes[i]["branch"] = min(nb - 1, (i - lo) * nb // (hi - lo))
        prog["blocks"].append(block)
    scoped = {nd["name"] for nd in nodes if "scope" in nd}
    prog["extra"] = [e for e in prog["extra"] if e[0] not in scoped and e[1] not in scoped]


def gen_node(rng, buffers, i):
    op = rng.choice(list(OPS))
    modes = OPS[op]
    for _ in range(20):
        rows = rng.randint(1, 3)
        views = []
        for _m in modes:
            fit = [b for b in buffers if b["rows"] >= rows]
            if not fit:
                break
            b = rng.choice(fit)
            lo = rng.randrange(b["rows"] - rows + 1)
            views.append([b["name"], lo, lo + rows])
        if len(views) != len(modes):
            continue
        if op in ("sum",):
            views = [views[0]]
        ok = True
        for x in range(len(views)):
            for y in range(x + 1, len(views)):
                if "w" in modes[x] + modes[y] and overlap(views[x], views[y]):
                    ok = False
        if ok:
            return {"name": "n%d" % i, "op": op, "views": views,
                    "k": rng.randrange(1 << 32), "ns": rng.choice(SPINS)}
    return None


def overlap(a, b):
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def accesses(node):
    """(resource, lo row, hi row, writes) of a node; the scalar is 's'."""
    acc = [(v[0], v[1], v[2], "w" in m) for v, m in zip(node["views"], OPS[node["op"]])]
    if node["op"] == "sum":
        acc.append(("s", 0, 1, True))
    if node["op"] == "adds":
        acc.append(("s", 0, 1, False))
    return acc


def conflicts(a, b):
    for ra in accesses(a):
        for rb in accesses(b):
            if (ra[3] or rb[3]) and ra[0] == rb[0] and ra[1] < rb[2] and rb[1] < ra[2]:
                return True
    return False


def needed_edges(prog):
    """The transitive reduction of (conflicts + extra edges): what an
    explicit graph must write."""
    nodes = prog["nodes"]
    n = len(nodes)
    index = {nd["name"]: i for i, nd in enumerate(nodes)}
    succ = [set() for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            if conflicts(nodes[i], nodes[j]):
                succ[i].add(j)
    for a, b in prog["extra"]:
        if a in index and b in index:
            succ[index[a]].add(index[b])
    reach = [set() for _ in range(n)]
    for i in reversed(range(n)):
        for j in succ[i]:
            reach[i] |= {j} | reach[j]
    edges = []
    for i in range(n):
        for j in sorted(succ[i]):
            if not any(j in reach[k] for k in succ[i] if k != j):
                edges.append((i, j))
    return edges


def cond_uses_scalar(c):
    if "cmp" in c:
        return "s" in c["a"]
    return any(cond_uses_scalar(x) for x in (c.get("and") or c.get("or") or [c.get("not")]))


def uses_scalar(prog):
    if any(nd["op"] in ("sum", "adds") for nd in prog["nodes"]):
        return True
    live = {nd["scope"] for nd in prog["nodes"] if "scope" in nd}
    return any(b["kind"] == "switch" or cond_uses_scalar(b["cond"])
               for i, b in enumerate(prog.get("blocks", [])) if i in live)


def cond_text(c):
    if "cmp" in c:
        a = c["a"]
        lhs = "s" if "s" in a else "%s[%d][%d]" % (a["buf"], a["row"], a["col"])
        return "%s %s %d" % (lhs, c["cmp"], c["k"])
    if "not" in c:
        return "!(%s)" % cond_text(c["not"])
    op = " && " if "and" in c else " || "
    return "(%s)" % op.join(cond_text(x) for x in (c.get("and") or c.get("or")))


def view_text(prog, v):
    rows = next(b["rows"] for b in prog["buffers"] if b["name"] == v[0])
    if v[1] == 0 and v[2] == rows:
        return v[0]
    if v[2] == v[1] + 1:
        return "%s[%d]" % (v[0], v[1])
    return "%s[%d:%d]" % (v[0], v[1], v[2])


def cgraph_text(prog):
    out = ["%sgraph %s {" % ("explicit " if prog["explicit"] else "", prog["name"])]
    if uses_scalar(prog):
        out.append("    scalar s: u32;")
    for b in prog["buffers"]:
        out.append("    %sbuffer %s: u32[%d, %d]%s;" % (
            "extern " if b["kind"] == "extern" else "", b["name"], b["rows"], COLS,
            " = 0" if b["kind"] == "zero" else ""))
    done = set()
    for nd in prog["nodes"]:
        if "scope" not in nd:
            out.append(node_text(prog, nd, "    "))
            continue
        b = nd["scope"]
        if b in done:
            continue
        done.add(b)
        out += block_text(prog, b)
    names = [nd["name"] for nd in prog["nodes"]]
    if prog["explicit"]:
        for i, j in needed_edges(prog):
            out.append("    %s -> %s;" % (names[i], names[j]))
    else:
        for a, b in prog["extra"]:
            if a in names and b in names:
                out.append("    %s -> %s;" % (a, b))
    out.append("}")
    return "\n".join(out) + "\n"


def block_text(prog, b):
    block = prog["blocks"][b]
    members = [nd for nd in prog["nodes"] if nd.get("scope") == b]

    def body(branch, ind):
        return [node_text(prog, nd, ind) for nd in members if nd["branch"] == branch]

    kind = block["kind"]
    if kind == "while":
        return (["    while %s max %d {" % (cond_text(block["cond"]), block["max"])] +
                body(0, "        ") + ["    }"])
    if kind in ("if", "ifelse"):
        out = ["    if %s {" % cond_text(block["cond"])] + body(0, "        ")
        if kind == "ifelse":
            out += ["    } else {"] + body(1, "        ")
        return out + ["    }"]
    out = ["    switch s {"]
    for k, v in enumerate(block["cases"]):
        out += ["        case %d {" % v] + body(k, "            ") + ["        }"]
    if block["default"]:
        out += ["        default {"] + body(len(block["cases"]), "            ") + ["        }"]
    return out + ["    }"]


def node_text(prog, nd, ind):
    v = [view_text(prog, x) for x in nd["views"]]
    n = (nd["views"][0][2] - nd["views"][0][1]) * COLS
    grid = "grid(%d) block(32)" % ((n + 31) // 32)
    op, k, ns = nd["op"], nd["k"], nd["ns"]
    if op == "add":
        call = "d_add(%s, %s, %d, %d) %s" % (v[0], v[1], n, ns, grid)
    elif op == "mix":
        call = "d_mix(%s, %s, %s, %d, %d) %s" % (v[0], v[1], v[2], n, ns, grid)
    elif op == "scale":
        call = "d_scale(%s, %d, %d, %d) %s" % (v[0], n, k, ns, grid)
    elif op == "set":
        call = "d_set(%s, %d, %d, %d) %s" % (v[0], n, k, ns, grid)
    elif op == "sum":
        call = "d_sum(%s, s, %d, %d) grid(1) block(1)" % (v[0], n, ns)
    elif op == "adds":
        call = "d_adds(s, %s, %d, %d) %s" % (v[0], n, ns, grid)
    elif op == "copy":
        call = "copy(%s, %s)" % (v[0], v[1])
    else:
        call = "fill(%s, %d)" % (v[0], k)
    return "%snode %s = %s;" % (ind, nd["name"], call)


# ---- the CPU's sequential semantics ----

def run_node(nd, bufs, s):
    """Runs one node; returns the scalar's value after it."""
    views = nd["views"]
    el = [(v[0], v[1] * COLS, v[2] * COLS) for v in views]
    n = el[0][2] - el[0][1]
    op, k = nd["op"], nd["k"]

    def get(x, i):
        return bufs[el[x][0]][el[x][1] + i]

    def put(x, i, val):
        bufs[el[x][0]][el[x][1] + i] = val & M

    if op == "add":
        for i in range(n):
            put(1, i, get(1, i) + get(0, i) * 3 + 1)
    elif op == "mix":
        for i in range(n):
            put(2, i, (get(0, i) ^ ((get(1, i) * 2654435761) & M)) + 7)
    elif op == "scale":
        for i in range(n):
            put(0, i, get(0, i) * k + i)
    elif op == "set":
        for i in range(n):
            put(0, i, k ^ i)
    elif op == "sum":
        s = sum(get(0, i) for i in range(n)) & M
    elif op == "adds":
        for i in range(n):
            put(0, i, get(0, i) + s)
    elif op == "copy":
        src = [get(1, i) for i in range(n)]
        for i in range(n):
            put(0, i, src[i])
    else:
        for i in range(n):
            put(0, i, k)
    return s


def cond_value(c, bufs, s):
    if "cmp" in c:
        a = c["a"]
        x = s if "s" in a else bufs[a["buf"]][a["row"] * COLS + a["col"]]
        k = c["k"]
        return {"==": x == k, "!=": x != k, "<": x < k, "<=": x <= k, ">": x > k,
                ">=": x >= k}[c["cmp"]]
    if "not" in c:
        return not cond_value(c["not"], bufs, s)
    if "and" in c:
        return all(cond_value(x, bufs, s) for x in c["and"])
    return any(cond_value(x, bufs, s) for x in c["or"])


def interpret(prog, bufs, s):
    """Sequential semantics: the nodes in written order; a block's
    condition evaluated where the block stands."""
    done = set()
    for nd in prog["nodes"]:
        if "scope" not in nd:
            s = run_node(nd, bufs, s)
            continue
        b = nd["scope"]
        if b in done:
            continue
        done.add(b)
        block = prog["blocks"][b]
        members = [x for x in prog["nodes"] if x.get("scope") == b]

        def body(branch, s):
            for x in members:
                if x["branch"] == branch:
                    s = run_node(x, bufs, s)
            return s

        kind = block["kind"]
        if kind == "while":
            count = 0
            while count < block["max"] and cond_value(block["cond"], bufs, s):
                s = body(0, s)
                count += 1
        elif kind in ("if", "ifelse"):
            if cond_value(block["cond"], bufs, s):
                s = body(0, s)
            elif kind == "ifelse":
                s = body(1, s)
        else:
            if s in block["cases"]:
                s = body(block["cases"].index(s), s)
            elif block["default"]:
                s = body(len(block["cases"]), s)
    return s


def expected(prog):
    """Initial contents, the results after launch 1 and 2, and the
    scalar's values: set before each launch and after it."""
    rng = random.Random(prog["seed"])
    bufs = {}
    for b in prog["buffers"]:
        n = b["rows"] * COLS
        bufs[b["name"]] = [0] * n if b["kind"] == "zero" else [rng.randrange(1 << 32)
                                                              for _ in range(n)]
    init = {k: list(v) for k, v in bufs.items()}
    sets = [rng.choice([rng.randrange(4), rng.randrange(1 << 32)]) for _ in range(2)]
    after, s_after = [], []
    for launch in range(2):
        s_after.append(interpret(prog, bufs, sets[launch]))
        after.append({k: list(v) for k, v in bufs.items()})
    return init, after, sets, s_after


# ---- the driver ----

DRIVER_HEAD = r"""/* The differential test's driver, written by gpu_diff.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "diff_graph.h"

static FILE *data;
static int failures;

#define CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
  printf("CUDA %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
  exit(1); } } while (0)
#define CGRT(call) do { if ((call) != CGRT_OK) { \
  printf("CGRT %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cgrt_last_error()); \
  exit(1); } } while (0)

static uint32_t *read_words(size_t n) {
  uint32_t *w = malloc(n * sizeof *w);
  if (!w || fread(w, sizeof *w, n, data) != n) {
    printf("driver: the data file is short\n");
    exit(1);
  }
  return w;
}

/* Compares a device buffer with what the CPU computed. */
static void check(const char *graph, int launch, const char *buf, const void *dev, size_t n) {
  uint32_t *want = read_words(n), *got = malloc(n * sizeof *got);
  CUDA(cudaMemcpy(got, dev, n * sizeof *got, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      printf("FAIL %s launch %d buffer %s element %zu: got %u, expected %u\n", graph, launch,
             buf, i, got[i], want[i]);
      failures++;
      break;
    }
  free(want);
  free(got);
}

static void check_scalar(const char *graph, int launch, uint32_t got) {
  uint32_t *want = read_words(1);
  if (got != *want) {
    printf("FAIL %s launch %d scalar s: got %u, expected %u\n", graph, launch, got, *want);
    failures++;
  }
  free(want);
}
"""


def driver_function(prog):
    g = prog["name"]
    ext = [b for b in prog["buffers"] if b["kind"] == "extern"]
    lines = ["static void run_%s(void) {" % g]
    lines.append("  %s *g;" % g)
    for b in prog["buffers"]:
        lines.append("  size_t n_%s = %d;" % (b["name"], b["rows"] * COLS))
        lines.append("  void *p_%s;" % b["name"])
        lines.append("  uint32_t *i_%s = read_words(n_%s);" % (b["name"], b["name"]))
    for b in ext:
        lines.append("  CUDA(cudaMalloc(&p_%s, n_%s * 4));" % (b["name"], b["name"]))
        lines.append("  CUDA(cudaMemcpy(p_%s, i_%s, n_%s * 4, cudaMemcpyHostToDevice));"
                     % (b["name"], b["name"], b["name"]))
    if ext:
        lines.append("  %s_extern ext = {%s};" % (g, ", ".join("p_" + b["name"] for b in ext)))
        lines.append("  CGRT(%s_create(&g, &ext, NULL));" % g)
    else:
        lines.append("  CGRT(%s_create(&g, NULL));" % g)
    for b in prog["buffers"]:
        if b["kind"] != "extern":
            lines.append("  p_%s = %s_buffer_%s(g);" % (b["name"], g, b["name"]))
        if b["kind"] == "owned":
            lines.append("  CUDA(cudaMemcpy(p_%s, i_%s, n_%s * 4, cudaMemcpyHostToDevice));"
                         % (b["name"], b["name"], b["name"]))
    lines.append("  uint32_t *sets = read_words(2);")
    for launch in (1, 2):
        if launch == 2:
            # The extern buffers move to fresh memory with the same contents.
            for b in ext:
                nm = b["name"]
                lines.append("  { void *q; CUDA(cudaMalloc(&q, n_%s * 4));" % nm)
                lines.append("    CUDA(cudaMemcpy(q, p_%s, n_%s * 4, cudaMemcpyDeviceToDevice));"
                             % (nm, nm))
                lines.append("    CGRT(%s_bind_%s(g, q)); CUDA(cudaFree(p_%s)); p_%s = q; }"
                             % (g, nm, nm, nm))
        if uses_scalar(prog):
            lines.append("  CGRT(%s_set_s(g, sets[%d]));" % (g, launch - 1))
        lines.append("  CGRT(%s_launch(g, 0));" % g)
        lines.append("  CUDA(cudaStreamSynchronize(0));")
        for b in prog["buffers"]:
            lines.append('  check("%s", %d, "%s", p_%s, n_%s);' % (g, launch, b["name"],
                                                                 b["name"], b["name"]))
        if uses_scalar(prog):
            lines.append("  { uint32_t v; CGRT(%s_get_s(g, &v)); check_scalar(\"%s\", %d, v); }"
                         % (g, g, launch))
        else:
            lines.append("  free(read_words(1));")
    lines.append("  %s_destroy(g);" % g)
    for b in prog["buffers"]:
        if b["kind"] == "extern":
            lines.append("  CUDA(cudaFree(p_%s));" % b["name"])
        lines.append("  free(i_%s);" % b["name"])
    lines.append("  free(sets);")
    lines.append("}")
    return "\n".join(lines) + "\n"


def data_words(prog):
    init, after, sets, s_after = expected(prog)
    words = []
    for b in prog["buffers"]:
        words += init[b["name"]]
    words += sets
    for launch in range(2):
        for b in prog["buffers"]:
            words += after[launch][b["name"]]
        words.append(s_after[launch])
    return words


def write_program(progs, d):
    with open(os.path.join(d, "diff.cgraph"), "w") as f:
        f.write("// Written by gpu_diff.py.\n" + DECLS)
        for p in progs:
            f.write("\n" + cgraph_text(p))
    with open(os.path.join(d, "driver.c"), "w") as f:
        f.write(DRIVER_HEAD)
        for p in progs:
            f.write("\n" + driver_function(p))
        f.write("\nint main(int argc, char **argv) {\n")
        f.write("  int n = 0;\n  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {\n"
                "    printf(\"driver: no GPU\\n\");\n    return 77;\n  }\n")
        f.write("  data = fopen(argc > 1 ? argv[1] : \"diff.data\", \"rb\");\n"
                "  if (!data) {\n    printf(\"driver: no data file\\n\");\n    return 1;\n  }\n")
        for p in progs:
            f.write("  run_%s();\n" % p["name"])
        f.write("  fclose(data);\n  printf(\"driver: %%d graphs, %%d differences\\n\", %d, "
                "failures);\n  return failures ? 1 : 0;\n}\n" % len(progs))
    with open(os.path.join(d, "diff.data"), "wb") as f:
        for p in progs:
            w = data_words(p)
            f.write(struct.pack("<%dI" % len(w), *w))


def mutate(d, progs, rng):
    """Drops one edge from each graph's table in the generated C, the same
    edge (by its nodes' names) on every rebuild."""
    path = os.path.join(d, "diff_graph.c")
    text = open(path).read()
    for p in progs:
        g = p["name"]
        m = re.search(r"static const uint32_t cgc_%s_edges\[\] = \{\n((?:  .*\n)*?)\};" % g, text)
        if not m:
            continue
        lines = m.group(1).splitlines()
        names = [re.search(r"/\* (\S+) (?:->|=>) (\S+) \*/", l).groups() for l in lines]
        if "drop" not in p:
            if len(lines) < 2:
                continue
            p["drop"] = list(rng.choice(names))
        if tuple(p["drop"]) not in names or len(lines) < 2:
            continue
        k = names.index(tuple(p["drop"]))
        del lines[k]
        text = text[:m.start(1)] + "".join(l + "\n" for l in lines) + text[m.end(1):]
        text = re.sub(r'(static const cgrt_graph_desc cgc_%s_desc = \{\n  CGRT_ABI, "%s", '
                      r'"[^"\n]*",\n  \d+, \d+, \d+, )(\d+)' % (g, g),
                      lambda mm: mm.group(1) + str(int(mm.group(2)) - 1), text)
    open(path, "w").write(text)


class Builder:
    def __init__(self, args):
        self.args = args
        self.kernels_obj = None

    def sh(self, cmd, cwd):
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed:\n%s" % (" ".join(cmd), r.stdout[-4000:]))
        return r.stdout

    def build(self, progs, d, rng=None):
        """Writes, compiles and links the driver for `progs` in d."""
        a = self.args
        write_program(progs, d)
        self.sh([a.cgc, "-o", "diff_graph.c", "diff.cgraph"], d)
        if a.mutate:
            mutate(d, progs, rng or random.Random(0))
        inc = sum((["-I", i] for i in a.include), [])
        # The kernels depend only on the declarations: compiled once.
        if not self.kernels_obj:
            kd = tempfile.mkdtemp(prefix="cgc_diff_kernels_")
            shutil.copy(os.path.join(HERE, "kernels.cu"), kd)
            with open(os.path.join(kd, "kdecl.cgraph"), "w") as f:
                f.write(DECLS + "graph unused {\n}\n")
            self.sh([a.cgc, "-o", "kdecl_graph.c", "-H", "diff_graph.h", "kdecl.cgraph"], kd)
            self.sh([a.nvcc, a.arch_flag, "-O2", "-c", "kernels.cu", "-o",
                     "kernels.o", "-I", kd] + inc, kd)
            self.kernels_obj = os.path.join(kd, "kernels.o")
        self.sh([a.cc, "-std=c11", "-O1", "-c", "diff_graph.c", "driver.c"] + inc, d)
        self.sh([a.nvcc, a.arch_flag, "-o", "driver", "driver.o", "diff_graph.o",
                 self.kernels_obj, a.cgrt], d)

    def run(self, d):
        r = subprocess.run(["./driver", "diff.data"], cwd=d, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=600)
        return r.returncode, r.stdout


def failing_graphs(out):
    return sorted(set(re.findall(r"^FAIL (\S+) ", out, re.M)))


def shrink(builder, prog, d):
    """Drops nodes while the graph still fails; returns the smallest."""
    os.makedirs(d, exist_ok=True)
    best = prog
    changed = True
    while changed:
        changed = False
        for i in range(len(best["nodes"])):
            cand = dict(best, nodes=best["nodes"][:i] + best["nodes"][i + 1:])
            if not cand["nodes"]:
                continue
            try:
                builder.build([cand], d)
                rc, out = builder.run(d)
            except RuntimeError:
                continue
            if rc == 1 and failing_graphs(out):
                best = cand
                changed = True
                break
    return best


def have_gpu(cudart):
    if not cudart:
        return None
    try:
        lib = ctypes.CDLL(cudart)
        n = ctypes.c_int(0)
        return lib.cudaGetDeviceCount(ctypes.byref(n)) == 0 and n.value > 0
    except OSError:
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cgc", required=True)
    p.add_argument("--cgrt", required=True)
    p.add_argument("--include", action="append", default=[])
    p.add_argument("--nvcc", required=True)
    p.add_argument("--cc", default="cc")
    p.add_argument("--arch", default="90")
    p.add_argument("--cudart")
    p.add_argument("--programs", type=int, default=200)
    p.add_argument("--seed", type=int)
    p.add_argument("--save", default=os.path.join(os.getcwd(), "gpu_diff_failures"))
    p.add_argument("--keep")
    p.add_argument("--mutate", action="store_true")
    a = p.parse_args()
    a.cgc, a.cgrt = os.path.abspath(a.cgc), os.path.abspath(a.cgrt)
    a.include = [os.path.abspath(i) for i in a.include]
    a.arch = a.arch.split(";")[0].split("-")[0]
    a.arch_flag = "-arch=sm_%s" % a.arch if a.arch.isdigit() else "-arch=native"
    if have_gpu(a.cudart) is False:
        print("gpu_diff: skipped: no GPU")
        return 77
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    print("gpu_diff: seed %d, %d programs%s" % (seed, a.programs,
                                               ", one edge dropped from each" if a.mutate else ""))
    rng = random.Random(seed)
    progs = [gen_program(rng, i) for i in range(a.programs)]
    for i, path in enumerate(sorted(glob.glob(os.path.join(HERE, "regressions", "*.json")))):
        r = json.load(open(path))
        r["name"] = "r%d" % i
        progs.append(r)
    d = a.keep or tempfile.mkdtemp(prefix="cgc_gpu_diff_")
    os.makedirs(d, exist_ok=True)
    builder = Builder(a)
    try:
        builder.build(progs, d, rng)
    except RuntimeError as e:
        print("gpu_diff: build failed: %s" % e)
        return 1
    rc, out = builder.run(d)
    if rc == 77:
        print("gpu_diff: skipped: no GPU")
        return 77
    print("\n".join(l for l in out.splitlines() if not l.startswith("FAIL"))[-2000:])
    bad = failing_graphs(out)
    if rc != 0 and not bad:
        print(out[-4000:])
        return 1
    print("gpu_diff: %d of %d graphs differ from the CPU" % (len(bad), len(progs)))
    if bad:
        for line in out.splitlines():
            if line.startswith("FAIL"):
                print(line)
                break
        os.makedirs(a.save, exist_ok=True)
        byname = {pr["name"]: pr for pr in progs}
        for name in bad[:3]:
            small = shrink(builder, byname[name], os.path.join(d, "shrink"))
            path = os.path.join(a.save, "%s_seed%d.json" % (name, seed))
            with open(path, "w") as f:
                json.dump(small, f, indent=1)
            print("gpu_diff: %s shrunk from %d to %d nodes: %s\n%s" % (
                name, len(byname[name]["nodes"]), len(small["nodes"]), path, cgraph_text(small)))
    if not a.keep:
        shutil.rmtree(d, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
