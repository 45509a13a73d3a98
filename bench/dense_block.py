#!/usr/bin/env python3
"""The dense block of a DeepSeek-V2-Lite decode step, per token: cgc's graph
against the same work as stream launches, stream-captured by hand, its GEMMs
alone, and PyTorch (eager and CUDA graph).

  python3 bench/dense_block.py [--build DIR] [--arch 90] [--no-build] [--out DIR]

Builds bench/bench_dense (CGC_BENCH=ON) unless --no-build, runs it (4
layers, 512 live keys, 648 MB of bf16 weights), then PyTorch's version when
PyTorch and a GPU are there: torch.matmul and Tensor.addmv_ for the GEMMs
and the sample's own kernels through a C++/CUDA extension
(bench/dense_block/torch_ext.*); and the block written in PyTorch's own
ops (matmuls, elementwise ops, scaled_dot_product_attention over the
masked cache), eager and as a CUDA graph.  Prints a table: us a token, GB/s of
weights read, ratios against stream capture, the GEMMs alone and PyTorch's
CUDA graph, and the issue's targets; with --out also writes
DIR/dense_block.csv and DIR/dense_block.txt.  bench/run.py calls measure()
and ratio_lines().
"""
import io
import math
import os
import statistics
import sys
import tempfile
import time

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = "4_layers_512_keys"

# samples/dense_block/dense_block.cgraph at its defaults.
D, H, NOPE, ROPE, QK, VD, KVR, F = 2048, 16, 128, 64, 192, 128, 512, 10944
LAYERS, MAXPOS, SPLITS, KEYS = 4, 1024, 16, 512
QA, KVB = H * QK + KVR + ROPE, H * (NOPE + VD)


def run_c(build_dir):
    """bench_dense's rows, or none (with a message) without a GPU."""
    return rows_io.run_rows([os.path.join(build_dir, "bench", "bench_dense")], "dense_block",
                            "no GPU; the C rows are left out")


def row(way, metric, value):
    return rows_io.row("dense", CASE, way, metric, value)


def run_torch(arch):
    """The same block in PyTorch: torch.matmul (Tensor.addmv_ where the
    residual is added, as cuBLAS does it with beta = 1 in the C version)
    and the sample's kernels through an extension; eager, and replayed
    from a torch.cuda.CUDAGraph with pos and nkeys copied in first."""
    torch = rows_io.torch_here("dense_block")
    if torch is None:
        return []
    from torch.utils.cpp_extension import load
    ext = load(name="cgc_dense_ext",
               sources=[os.path.join(HERE, "dense_block", "torch_ext.cpp"),
                        os.path.join(HERE, "dense_block", "torch_ext.cu")],
               extra_cuda_cflags=["-O3", "-gencode=arch=compute_%s,code=sm_%s" % (arch, arch)],
               build_directory=tempfile.mkdtemp(prefix="cgc_dense_ext_"), verbose=False)
    dev, bf16 = "cuda", torch.bfloat16
    gen = torch.Generator(device=dev)
    gen.manual_seed(42)

    def weight(rows, cols):  # uniform in +-sqrt(3 / cols), as the C side
        t = torch.rand(rows, cols, device=dev, generator=gen) * 2 - 1
        return (t * math.sqrt(3.0 / cols)).to(bf16)

    def norm(n):
        return (1 + 0.1 * (torch.rand(n, device=dev, generator=gen) * 2 - 1)).to(bf16)

    attn_norm = [norm(D) for _ in range(LAYERS)]
    w_qa = [weight(QA, D) for _ in range(LAYERS)]
    kv_norm = [norm(KVR) for _ in range(LAYERS)]
    w_kvb = [weight(KVB, KVR) for _ in range(LAYERS)]
    w_o = [weight(D, H * VD) for _ in range(LAYERS)]
    ffn_norm = [norm(D) for _ in range(LAYERS)]
    w_gu = [weight(2 * F, D) for _ in range(LAYERS)]
    w_down = [weight(D, F) for _ in range(LAYERS)]
    kc = torch.randn(LAYERS, H, MAXPOS, QK, device=dev, generator=gen).to(bf16)
    vc = torch.randn(LAYERS, H, MAXPOS, VD, device=dev, generator=gen).to(bf16)
    x = (torch.rand(D, device=dev, generator=gen) * 2 - 1).to(bf16)
    qa = torch.empty(QA, device=dev, dtype=bf16)
    kvb, a, gu, act = [torch.empty(n, device=dev, dtype=bf16) for n in (KVB, H * VD, 2 * F, F)]
    part = torch.empty(H, SPLITS, VD + 2, device=dev)
    count = torch.zeros(H, device=dev, dtype=torch.int32)
    scal = torch.tensor([KEYS - 1, KEYS], device=dev, dtype=torch.int32)
    host_scal = torch.tensor([KEYS - 1, KEYS], dtype=torch.int32).pin_memory()
    ckv_in = qa[H * QK:H * QK + KVR]

    # The sample's way: each norm's weights folded into the GEMM that reads
    # the norm, its 1 / rms applied by the attention and SwiGLU kernels.
    def fold(w, g):
        return (w.float() * g.float()).to(bf16)

    qa_f = [fold(w_qa[l], attn_norm[l]) for l in range(LAYERS)]
    kvb_f = [fold(w_kvb[l], kv_norm[l]) for l in range(LAYERS)]
    gu_f = [fold(w_gu[l], ffn_norm[l]) for l in range(LAYERS)]

    def step():
        for l in range(LAYERS):
            torch.matmul(qa_f[l], x, out=qa)
            torch.matmul(kvb_f[l], ckv_in, out=kvb)
            ext.attention(qa, kvb, x, kc[l], vc[l], scal, part, count, a)
            x.addmv_(w_o[l], a)
            torch.matmul(gu_f[l], x, out=gu)
            ext.swiglu(gu, x, act)
            x.addmv_(w_down[l], act)

    def graph_step():
        scal.copy_(host_scal, non_blocking=True)
        g.replay()

    def eager_step():
        scal.copy_(host_scal, non_blocking=True)
        step()

    g = rows_io.torch_graph(torch, step)

    def per_token(f, k, rounds=200):
        """us a step: k steps between two CUDA events, median of rounds."""
        return rows_io.event_us(torch, f, k, rounds)

    def host_cost(f, steps=20):
        """CPU time of issuing one step, `steps` issued without waiting."""
        times = []
        for _ in range(15):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(steps):
                f()
            times.append((time.perf_counter() - t0) * 1e6 / steps)
        torch.cuda.synchronize()
        return statistics.median(times)

    # The same block written as PyTorch users write it: matmuls and
    # elementwise ops, RoPE by slicing, attention by
    # scaled_dot_product_attention over every cache row with a mask of the
    # live ones (a CUDA graph needs fixed shapes), the KV row written with
    # index_copy_ at a position held on the device.
    F_ = torch.nn.functional
    keys = torch.arange(MAXPOS, device=dev)
    half = ROPE // 2
    inv = 1.0 / (10000.0 ** (torch.arange(half, device=dev, dtype=torch.float32) / half))

    def rms(v, w):
        f = v.float()
        return (f * torch.rsqrt(f.pow(2).mean() + 1e-6)).to(bf16) * w

    def rope(t, pos):  # t: [..., ROPE], rotating halves
        ang = pos.float() * inv
        c, s = torch.cos(ang).to(bf16), torch.sin(ang).to(bf16)
        a, b = t[..., :half], t[..., half:]
        return torch.cat((a * c - b * s, a * s + b * c), dim=-1)

    def idiomatic_step():
        pos, live = scal[0:1].long(), scal[1]
        mask = (keys < live).view(1, 1, MAXPOS)
        for l in range(LAYERS):
            hn = rms(x, attn_norm[l])
            q_kv = w_qa[l] @ hn
            q = q_kv[:H * QK].view(H, QK)
            q = torch.cat((q[:, :NOPE], rope(q[:, NOPE:], pos)), dim=-1)
            c = rms(q_kv[H * QK:H * QK + KVR], kv_norm[l])
            k_rope = rope(q_kv[H * QK + KVR:], pos)
            kv = (w_kvb[l] @ c).view(H, NOPE + VD)
            k = torch.cat((kv[:, :NOPE], k_rope.expand(H, ROPE)), dim=-1)
            kc[l].index_copy_(1, pos, k.view(H, 1, QK))
            vc[l].index_copy_(1, pos, kv[:, NOPE:].reshape(H, 1, VD))
            o = F_.scaled_dot_product_attention(q.view(H, 1, QK), kc[l], vc[l], attn_mask=mask,
                                                scale=1.0 / math.sqrt(QK))
            x.add_(w_o[l] @ o.reshape(H * VD))
            hn = rms(x, ffn_norm[l])
            g_u = w_gu[l] @ hn
            x.add_(w_down[l] @ (F_.silu(g_u[:F]) * g_u[F:]))

    try:
        gi = rows_io.torch_graph(torch, idiomatic_step)
    except RuntimeError as e:  # an op this PyTorch cannot run or capture: say so, go on
        print("dense_block: the PyTorch-ops version failed (%s); its rows are left out" % e,
              flush=True)
        gi = None

    def idiomatic_graph_step():
        scal.copy_(host_scal, non_blocking=True)
        gi.replay()

    def idiomatic_eager_step():
        scal.copy_(host_scal, non_blocking=True)
        idiomatic_step()

    rows = []
    ops = (("torch_ops_eager", idiomatic_eager_step), ("torch_ops_graph", idiomatic_graph_step))
    for way, f in ops if gi is not None else ():
        rows.append(row(way, "us_per_token", per_token(f, 1, 100)))
        rows.append(row(way, "us_per_token_queued", per_token(f, 16, 25)))
    for way, f in (("torch_eager", eager_step), ("torch_graph", graph_step)):
        rows.append(row(way, "us_per_token", per_token(f, 1)))
        rows.append(row(way, "us_per_token_queued", per_token(f, 16, 50)))
    rows.append(row("torch_graph", "host_us", host_cost(graph_step)))
    rows.append(row("torch_replay", "host_us", host_cost(g.replay)))
    rows.append(row("torch_eager", "host_us", host_cost(eager_step, 4)))
    return rows


def measure(build_dir, arch):
    """Every row: the C ways, then PyTorch's."""
    return run_c(build_dir) + run_torch(arch)


def get(rows, way, metric):
    return rows_io.get(rows, "dense", CASE, way, metric)


def ratio_lines(rows):
    """(label, value, target text, met) for the tables and run.py's plot."""
    out = []
    add = rows_io.ratio_adder(out)

    for metric, tag in (("us_per_token", ""), ("us_per_token_queued", ", queued")):
        cgc = get(rows, "cgc", metric)
        add("dense block%s: cgc / stream capture" % tag, cgc, get(rows, "capture", metric),
            "<= 1.02", lambda v: v <= 1.02)
        add("dense block%s: cgc / GEMMs alone" % tag, cgc, get(rows, "gemms", metric), "<= 1.2",
            lambda v: v <= 1.2)
        add("dense block%s: cgc / torch CUDA graph" % tag, cgc, get(rows, "torch_graph", metric),
            "<= 1", lambda v: v <= 1)
        add("dense block%s: stream launches / cgc" % tag, get(rows, "stream", metric), cgc)
        add("dense block%s: torch eager / cgc" % tag, get(rows, "torch_eager", metric), cgc)
        add("dense block%s: torch ops CUDA graph / cgc" % tag, get(rows, "torch_ops_graph", metric),
            cgc)
    add("dense block: host, cgc set+launch / torch replay()", get(rows, "cgc", "host_us"),
        get(rows, "torch_replay", "host_us"), "< 1", lambda v: v < 1)
    add("dense block: host, cgc / torch copy_ + replay()", get(rows, "cgc", "host_us"),
        get(rows, "torch_graph", "host_us"))
    add("dense block: host, cgc / stream capture (copy + launch)", get(rows, "cgc", "host_us"),
        get(rows, "capture", "host_us"))
    return out


WAYS = (("cgc", "cgc graph (set pos, nkeys; launch)"),
        ("stream", "stream launches (copy; launches)"),
        ("capture", "stream capture by hand (copy; launch)"),
        ("gemms", "GEMMs alone, captured"),
        ("torch_eager", "PyTorch eager"),
        ("torch_graph", "PyTorch CUDA graph (copy_; replay)"),
        ("torch_ops_eager", "PyTorch ops eager (no custom kernel)"),
        ("torch_ops_graph", "PyTorch ops CUDA graph"))


def table(rows):
    """The table as text."""
    t = io.StringIO()
    wbytes = get(rows, "weights", "bytes") or 2.0 * LAYERS * (
        QA * D + KVB * KVR + D * H * VD + 2 * F * D + D * F)
    t.write("dense block of DeepSeek-V2-Lite, %d layers, %d live keys, %.0f MB of bf16 weights\n"
            % (LAYERS, KEYS, wbytes / 1e6))
    t.write("%-36s %10s %10s %10s %12s\n" % ("way", "us/token", "GB/s", "queued", "host us/step"))
    for way, label in WAYS:
        us, q, host = (get(rows, way, m) for m in ("us_per_token", "us_per_token_queued", "host_us"))
        if us is None:
            t.write("%-36s %10s\n" % (label, "-"))
            continue
        t.write("%-36s %10.1f %10.0f %10s %12s\n" % (
            label, us, wbytes / us / 1e3, "-" if q is None else "%.1f" % q,
            "-" if host is None else "%.2f" % host))
    host = get(rows, "torch_replay", "host_us")
    if host is not None:
        t.write("%-36s %10s %10s %10s %12.2f\n" % ("PyTorch replay() alone", "", "", "", host))
    rows_io.ratio_table(t, ratio_lines(rows))
    return t.getvalue()


def main():
    args = rows_io.parser(__doc__.splitlines()[0], "dense_block").parse_args()
    if not args.no_build:
        rows_io.configure(args.build, args.arch)
        rows_io.build(args.build, "bench_dense")
    rows = measure(args.build, args.arch)
    rows_io.finish(args.out, "dense_block", rows, table(rows))


if __name__ == "__main__":
    sys.exit(main())
