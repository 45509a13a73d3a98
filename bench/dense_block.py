#!/usr/bin/env python3
"""The dense block of a DeepSeek-V2-Lite decode step, per token: cgc's graph
on the kernel library against the same kernels as stream launches and
stream-captured by hand, the floor (a read-only kernel over as many bytes as
its weights), and PyTorch's own ops (eager and CUDA graph).

  python3 bench/dense_block.py [--build DIR] [--arch 90] [--no-build] [--out DIR]

Builds bench/bench_dense (CGC_BENCH=ON) unless --no-build, runs it (4
layers, 512 live keys, 648 MB of bf16 weights), then, when PyTorch and a
GPU are there, the block written in PyTorch's own ops (matmuls,
elementwise ops, scaled_dot_product_attention over the masked cache),
eager and as a CUDA graph.  Prints a table: us a token, GB/s of weights
read, ratios against stream capture, the floor and PyTorch's CUDA graph,
and the issue's targets; with --out also writes DIR/dense_block.csv and
DIR/dense_block.txt.  bench/run.py calls measure() and ratio_lines().
"""
import io
import math
import os
import statistics
import sys
import time

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = "4_layers_512_keys"

# samples/dense_block/dense_block.cgraph at its defaults.
D, H, NOPE, ROPE, QK, VD, KVR, F = 2048, 16, 128, 64, 192, 128, 512, 10944
LAYERS, MAXPOS, KEYS = 4, 1024, 512
QA, KVB = H * QK + KVR + ROPE, H * (NOPE + VD)


def run_c(build_dir):
    """bench_dense's rows, or none (with a message) without a GPU."""
    return rows_io.run_rows([os.path.join(build_dir, "bench", "bench_dense")], "dense_block",
                            "no GPU; the C rows are left out")


def row(way, metric, value):
    return rows_io.row("dense", CASE, way, metric, value)


def run_torch():
    """The same block in PyTorch's own ops, eager, and replayed from a
    torch.cuda.CUDAGraph with pos and nkeys copied in first."""
    torch = rows_io.torch_here("dense_block")
    if torch is None:
        return []
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
    scal = torch.tensor([KEYS - 1, KEYS], device=dev, dtype=torch.int32)
    host_scal = torch.tensor([KEYS - 1, KEYS], dtype=torch.int32).pin_memory()

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
        return []

    def idiomatic_graph_step():
        scal.copy_(host_scal, non_blocking=True)
        gi.replay()

    def idiomatic_eager_step():
        scal.copy_(host_scal, non_blocking=True)
        idiomatic_step()

    rows = []
    for way, f in (("torch_ops_eager", idiomatic_eager_step),
                   ("torch_ops_graph", idiomatic_graph_step)):
        rows.append(row(way, "us_per_token", rows_io.event_us(torch, f, 1, 100)))
        rows.append(row(way, "us_per_token_queued", rows_io.event_us(torch, f, 16, 25)))
    rows.append(row("torch_ops_graph", "host_us", host_cost(idiomatic_graph_step)))
    rows.append(row("torch_replay", "host_us", host_cost(gi.replay)))
    return rows


def measure(build_dir, arch):
    """Every row: the C ways, then PyTorch's (arch: run.py's signature;
    nothing here is compiled for it)."""
    del arch
    return run_c(build_dir) + run_torch()


def get(rows, way, metric):
    return rows_io.get(rows, "dense", CASE, way, metric)


def ratio_lines(rows):
    """(label, value, target text, met) for the tables and run.py's plot."""
    out = []
    add = rows_io.ratio_adder(out)

    for metric, tag in (("us_per_token", ""), ("us_per_token_queued", ", queued")):
        cgc = get(rows, "cgc", metric)
        add("dense block%s: cgc / weights' floor (read-only kernel)" % tag, cgc,
            get(rows, "read", metric), "<= 1.2", lambda v: v <= 1.2)
        add("dense block%s: cgc / stream capture" % tag, cgc, get(rows, "capture", metric),
            "<= 1.02", lambda v: v <= 1.02)
        add("dense block%s: cgc / torch ops CUDA graph" % tag, cgc,
            get(rows, "torch_ops_graph", metric), "<= 1", lambda v: v <= 1)
        add("dense block%s: stream launches / cgc" % tag, get(rows, "stream", metric), cgc)
        add("dense block%s: torch ops eager / cgc" % tag, get(rows, "torch_ops_eager", metric),
            cgc)
    add("dense block: host, cgc set+launch / torch replay()", get(rows, "cgc", "host_us"),
        get(rows, "torch_replay", "host_us"), "< 1", lambda v: v < 1)
    add("dense block: host, cgc / torch copy_ + replay()", get(rows, "cgc", "host_us"),
        get(rows, "torch_ops_graph", "host_us"))
    add("dense block: host, cgc / stream capture (copy + launch)", get(rows, "cgc", "host_us"),
        get(rows, "capture", "host_us"))
    return out


WAYS = (("cgc", "cgc graph (set pos; launch)"),
        ("stream", "stream launches (copy; launches)"),
        ("capture", "stream capture by hand (copy; launch)"),
        ("read", "floor: read-only kernel, same bytes"),
        ("torch_ops_eager", "PyTorch ops eager (no custom kernel)"),
        ("torch_ops_graph", "PyTorch ops CUDA graph"))


def table(rows):
    """The table as text."""
    t = io.StringIO()
    wbytes = get(rows, "weights", "bytes") or 2.0 * LAYERS * (
        QA * D + KVB * KVR + D * H * VD + 2 * F * D + D * F + 2 * D + KVR)
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
