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
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
D, MAXPOS, LAYERS, V, N, PROMPT = 256, 128, 4, 1024, 64, 7
CASE = "%d_tokens" % N


def run_c(build_dir, no_build, arch):
    if not no_build:
        rows_io.sh(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_CUDA_ARCHITECTURES=" + arch], stdout=subprocess.DEVNULL)
        rows_io.sh(["cmake", "--build", build_dir, "--target", "generate"], stdout=subprocess.DEVNULL)
    exe = os.path.join(build_dir, "samples", "generate", "generate")
    print("+", exe, "--bench", flush=True)
    p = subprocess.run([exe, "--bench"], stdout=subprocess.PIPE, text=True)
    if p.returncode == 77:
        print("generate: no GPU; the C rows are left out", flush=True)
        return []
    if p.returncode != 0:
        raise SystemExit("generate: the sample failed with status %d" % p.returncode)
    return list(csv.DictReader(io.StringIO(p.stdout)))


def row(way, metric, value):
    return dict(section="generate", case=CASE, way=way, metric=metric, value="%.4f" % value)


def run_torch(arch):
    try:
        import torch
        from torch.utils.cpp_extension import load
    except ImportError:
        print("generate: no PyTorch here; its rows are left out", flush=True)
        return []
    if not torch.cuda.is_available():
        print("generate: PyTorch sees no GPU; its rows are left out", flush=True)
        return []
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

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        scal.copy_(start)
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    torch.cuda.synchronize()

    def n_replays():
        scal.copy_(start, non_blocking=True)
        for _ in range(N):
            g.replay()

    def n_replays_read():
        scal.copy_(start, non_blocking=True)
        for _ in range(N):
            g.replay()
            int(scal[0].item())  # the token, as a host loop watching for the end reads it

    def per_token(f, rounds=51):
        for _ in range(3):
            f()
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(rounds):
            e0.record()
            f()
            e1.record()
            e1.synchronize()
            times.append(1000.0 * e0.elapsed_time(e1) / N)
        return statistics.median(times)

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
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    p.add_argument("--arch", default="90")
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--out")
    args = p.parse_args()
    rows = run_c(args.build, args.no_build, args.arch) + run_torch(args.arch)
    text = table(rows)
    if args.out:
        rows_io.write_outputs(args.out, "generate", rows, text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
