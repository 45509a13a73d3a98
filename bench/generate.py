#!/usr/bin/env python3
"""Greedy generation, 64 tokens of the generate sample's model (4 layers of
D = 256, a vocabulary of 1024): cgc's device loop (one launch makes every
token), the sample's one-step graph launched once a token (queued, and
with each token read back, as a host loop that watches for the end token
must), and PyTorch's CUDA graph of the same step (the same kernels, through
an extension) replayed once a token.

  python3 bench/generate.py [--build DIR] [--arch 90] [--no-build] [--out DIR]

Prints us a token, tokens a second and the ratios; with --out also writes
DIR/generate.csv and DIR/generate.txt.
"""
import io
import os
import sys
import tempfile

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))
D, MAXPOS, LAYERS, V, N, PROMPT = 256, 128, 4, 1024, 64, 7
CASE = "%d_tokens" % N


def run_c(build_dir, no_build, arch):
    if not no_build:
        rows_io.configure(build_dir, arch, bench=False)
        rows_io.build(build_dir, "generate")
    exe = os.path.join(build_dir, "samples", "generate", "generate")
    return rows_io.run_rows([exe, "--bench"], "generate", "no GPU; the C rows are left out")


def row(way, metric, value):
    return rows_io.row("generate", CASE, way, metric, value)


def run_torch(arch):
    torch = rows_io.torch_here("generate")
    if torch is None:
        return []
    from torch.utils.cpp_extension import load
    ext = load(name="cgc_generate_ext", sources=[os.path.join(HERE, "generate", "torch_ext.cu")],
               extra_cuda_cflags=["-O3", "-gencode=arch=compute_%s,code=sm_%s" % (arch, arch)],
               build_directory=tempfile.mkdtemp(prefix="cgc_generate_ext_"), verbose=False)
    dev = "cuda"
    gen = torch.Generator(device=dev)
    gen.manual_seed(7)

    def uni(*shape, scale=1.0, offset=0.0):
        return offset + scale * (torch.rand(*shape, device=dev, generator=gen) * 2 - 1)

    sd = (3.0 / D) ** 0.5
    emb, wout = uni(V, D), uni(V, D, scale=sd)
    wn, wf = uni(LAYERS, D, scale=0.1, offset=1.0), uni(D, scale=0.1, offset=1.0)
    wq, wk, wv, wo = [uni(LAYERS, D, D, scale=sd) for _ in range(4)]
    kc, vc = [torch.zeros(LAYERS, MAXPOS, D, device=dev) for _ in range(2)]
    tokens = torch.zeros(MAXPOS, device=dev, dtype=torch.int32)
    scal = torch.zeros(4, device=dev, dtype=torch.int32)
    start = torch.tensor([PROMPT, 0, 1, 0], dtype=torch.int32).pin_memory()
    x, h, q, k, v, a, o = [torch.empty(D, device=dev) for _ in range(7)]
    logits = torch.empty(V, device=dev)

    def step():
        ext.step(emb, wn, wq, wk, wv, wo, wf, wout, kc, vc, tokens, scal, x, h, q, k, v, a, o,
                 logits)

    g = rows_io.torch_graph(torch, step, before=lambda: scal.copy_(start))

    def n_replays():
        scal.copy_(start, non_blocking=True)
        for _ in range(N):
            g.replay()

    def n_replays_read():
        scal.copy_(start, non_blocking=True)
        for _ in range(N):
            g.replay()
            int(scal[0].item())  # the token, as a host loop watching for the end reads it

    def per_token(f):  # f runs the N tokens
        return rows_io.event_us(torch, f, rounds=51, warm_up=3) / N

    return [row("torch_graph_replays", "us_per_token", per_token(n_replays)),
            row("torch_graph_replays_read", "us_per_token", per_token(n_replays_read))]


def get(rows, way):
    return rows_io.get(rows, "generate", CASE, way, "us_per_token")


WAYS = (("device_loop", "cgc while on the device (1 launch)"),
        ("step_launches", "cgc step graph, a launch a token"),
        ("step_launches_read", "cgc step graph, each token read back"),
        ("torch_graph_replays", "PyTorch CUDA graph, a replay a token"),
        ("torch_graph_replays_read", "PyTorch CUDA graph, each token read back"))


def table(rows):
    t = io.StringIO()
    t.write("greedy generation, %d tokens, %d layers of %d, vocabulary %d\n" % (N, LAYERS, D, V))
    t.write("%-40s %10s %10s\n" % ("way", "us/token", "tokens/s"))
    for way, label in WAYS:
        us = get(rows, way)
        t.write("%-40s %10s %10s\n" % (label, "-" if us is None else "%.2f" % us,
                                        "-" if us is None else "%.0f" % (1e6 / us)))
    loop = get(rows, "device_loop")
    t.write("\n")
    for way, label in WAYS[1:]:
        other = get(rows, way)
        if loop and other:
            t.write("%-58s %6.2fx\n" % ("device loop speed-up over " + label, other / loop))
    return t.getvalue()


def main():
    args = rows_io.parser(__doc__.splitlines()[0], "generate").parse_args()
    rows = run_c(args.build, args.no_build, args.arch) + run_torch(args.arch)
    rows_io.finish(args.out, "generate", rows, table(rows))


if __name__ == "__main__":
    sys.exit(main())
