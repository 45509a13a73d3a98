#!/usr/bin/env python3
"""The decode step (samples/decode_step) driven from Python: cgc.build
compiles the .cgraph and its kernels, the graph is created over PyTorch
tensors (no copies), and 64 steps set pos and nkeys and launch on PyTorch's
current stream; the result is checked against the same step in PyTorch's
own ops in float64.  Exit status 77 without PyTorch or a GPU.

    cmake --install build --prefix PREFIX
    CGC_HOME=PREFIX PYTHONPATH=python python3 samples/python/decode_step.py
"""
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SAMPLE = os.path.join(ROOT, "samples", "decode_step")
D, MAXPOS, LAYERS, STEPS = 256, 128, 4, 64


def inputs(torch, seed):
    """Random weights and input as the C sample makes them, and caches of
    NaN, so a row the step did not write shows."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)

    def uniform(*shape):  # in [-1, 1)
        return torch.rand(*shape, device="cuda", generator=gen) * 2 - 1
    return dict(x=uniform(D), wn=1 + 0.1 * uniform(LAYERS, D),
                wq=uniform(LAYERS, D, D) / math.sqrt(D), wk=uniform(LAYERS, D, D) / math.sqrt(D),
                wv=uniform(LAYERS, D, D) / math.sqrt(D), wo=uniform(LAYERS, D, D) / math.sqrt(D),
                kc=torch.full((LAYERS, MAXPOS, D), float("nan"), device="cuda"),
                vc=torch.full((LAYERS, MAXPOS, D), float("nan"), device="cuda"))


def reference(torch, t, steps, first=0):
    """Steps first .. first + steps - 1 in PyTorch's ops, in float64:
    returns x, kc, vc (and h, the last RMSNorm) without touching t."""
    x, kc, vc = t["x"].double().clone(), t["kc"].double().clone(), t["vc"].double().clone()
    w = {k: t[k].double() for k in ("wn", "wq", "wk", "wv", "wo")}
    for pos in range(first, first + steps):
        for l in range(LAYERS):
            h = x * torch.rsqrt((x * x).mean() + 1e-6) * w["wn"][l]
            q, k, v = w["wq"][l] @ h, w["wk"][l] @ h, w["wv"][l] @ h
            kc[l, pos], vc[l, pos] = k, v
            p = torch.softmax(kc[l, :pos + 1] @ q / math.sqrt(D), 0)
            x = x + w["wo"][l] @ (p @ vc[l, :pos + 1])
    return x, kc, vc, h


def rel_error(torch, a, b):
    """||a - b|| / ||b||; infinity where a has a NaN."""
    a, b = a.double(), b.double()
    if torch.isnan(a).any():
        return math.inf
    return (torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b)).item()


def check(torch, got, want, steps):
    """The relative errors of x and the cache rows written, and whether the
    rows not written are still NaN."""
    x, kc, vc = got
    rx, rkc, rvc = want[:3]
    ex = rel_error(torch, x, rx)
    ek = rel_error(torch, kc[:, :steps], rkc[:, :steps])
    ev = rel_error(torch, vc[:, :steps], rvc[:, :steps])
    untouched = bool(torch.isnan(kc[:, steps:]).all() and torch.isnan(vc[:, steps:]).all())
    return ex, ek, ev, untouched


def main():
    try:
        import torch
    except ImportError:
        print("decode_step.py: needs PyTorch, which is not installed here")
        return 77
    if not torch.cuda.is_available():
        print("decode_step.py: needs a GPU, and PyTorch sees none")
        return 77
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import cgc

    m = cgc.build(os.path.join(SAMPLE, "decode_step.cgraph"),
                  sources=[os.path.join(SAMPLE, "kernels", "decode_step.cu")])
    print("decode_step.py: %s (%s)" % (m.path, "built" if m.built else "from the cache"))
    seed = int(time.time() * 1000) % (1 << 31)
    print("decode_step.py: seed %d" % seed)
    t = inputs(torch, seed)
    want = reference(torch, t, STEPS)

    g = m.decode_step(**t)  # binds the tensors: the graph reads and writes them in place
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for pos in range(STEPS):
        g.pos = pos
        g.nkeys = pos + 1
        g.launch()  # on torch.cuda.current_stream()
    stop.record()
    torch.cuda.synchronize()
    ex, ek, ev, untouched = check(torch, (t["x"], t["kc"], t["vc"]), want, STEPS)
    h = g.tensor("h")  # the graph's own buffer, without a copy
    eh = rel_error(torch, h, want[3])
    last = g.pos
    ok = max(ex, ek, ev, eh) < 1e-4 and untouched and last == STEPS - 1
    print("decode_step.py: %d steps of %d layers in %.1f us a step" % (
        STEPS, LAYERS, 1000 * start.elapsed_time(stop) / STEPS))
    print("decode_step.py: relative error: x %.2e, k cache %.2e, v cache %.2e, h %.2e; rows "
          "not written still NaN: %s; pos after the last launch %d: %s" % (
              ex, ek, ev, eh, untouched, last, "OK" if ok else "FAILED"))
    g.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
