#!/usr/bin/env python3
"""A decode step set and launched from Python: cgc's graph through the
Python package against torch.cuda.CUDAGraph.replay() of the same kernels.

  python3 bench/python_launch.py [--cgc PREFIX | --build DIR] [--arch 90] [--out DIR]

The decode step is samples/decode_step (4 layers, 32 kernels), built with
cgc.build together with bench/python_launch/stream_step.cu, which launches
the same kernels on a stream (with programmatic stream serialization, as
cgc's graph has programmatic edges) for PyTorch to capture.  Per step:

  host_us     CPU time to issue one step, 32 issued back to back (median
              of rounds)
  latency_us  one step issued and waited for (torch.cuda.synchronize)
  gpu_us      CUDA events around 64 queued steps, per step

cgc: `g.pos = 63; g.nkeys = 64; g.launch()` (PyTorch's current stream),
the same with the stream given as an int, and launch() alone, through the
package's C extension (cgc._speedups) where it was built; the same set and
launch in pure Python (the path without the extension), on a second graph
object of the same tensors; PyTorch:
`replay()` alone, and `copy_` of pos and nkeys from pinned memory then
`replay()`, which is what feeding its graph a new position takes.  Every
way does the same GPU work (row 63, 64 keys); the two are checked to
compute the same result first.  The target: cgc's set and launch costs the host no
more than `replay()` alone.  cgc is found through --cgc (an install prefix),
else --build DIR (installed to DIR/python-prefix first, and the package
imported from DIR/python, the build's copy with its extension), else
CGC_HOME.
Exit status 77 without PyTorch or a GPU.  bench/run.py calls measure() and
ratio_lines().
"""
import argparse
import ctypes
import io
import os
import statistics
import subprocess
import sys
import time

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SAMPLE = os.path.join(ROOT, "samples", "decode_step")
CASE = "decode_step"
STEPS_PER_ROUND = 32


def row(way, metric, value):
    return rows_io.row("python", CASE, way, metric, value)


def install(build_dir):
    """cgc and its runtime from a build tree, installed beside it."""
    prefix = os.path.join(build_dir, "python-prefix")
    targets = ["cgc", "cgrt", "cgrt_shared"]
    # The install takes every library the build defines: cgrt_nccl too
    # where CMake found NCCL; the package's copy with its extension where
    # the tests are built.
    listed = subprocess.run(["cmake", "--build", build_dir, "--target", "help"],
                            stdout=subprocess.PIPE, text=True, check=True).stdout
    targets += [t for t in ("cgrt_nccl", "cgc_python") if t in listed]
    for cmd in (["cmake", "--build", build_dir, "--target"] + targets,
                ["cmake", "--install", build_dir, "--prefix", prefix]):
        rows_io.sh(cmd, stdout=subprocess.DEVNULL)
    return prefix


def pure_class(cls, cgc):
    """cls as the package runs it without its extension: the scalars'
    properties and the Python launch."""
    ns = {"__slots__": (), "launch": cgc.Graph._launch_slow}
    for name, attr in vars(cls).items():
        if hasattr(attr, "prop"):
            ns[name] = attr.prop
    return type(cls.__name__, (cls,), ns)


def run(cgc_prefix, arch, package):
    import torch
    sys.path.insert(0, package)
    import cgc
    print("python_launch: cgc from %s, speedups %s" % (os.path.dirname(cgc.__file__),
                                                       "on" if cgc.speedups() else "off"),
          flush=True)

    m = cgc.build(os.path.join(SAMPLE, "decode_step.cgraph"),
                  sources=[os.path.join(SAMPLE, "kernels", "decode_step.cu"),
                           os.path.join(HERE, "python_launch", "stream_step.cu")],
                  cgc=cgc_prefix, arch=arch)
    spec = os.path.join(ROOT, "samples", "python", "decode_step.py")
    import importlib.util
    s = importlib.util.spec_from_file_location("decode_sample", spec)
    sample = importlib.util.module_from_spec(s)
    s.loader.exec_module(sample)

    t = sample.inputs(torch, 42)
    for k in ("kc", "vc"):
        t[k].zero_()
    mine = {k: v.clone() for k, v in t.items()}  # PyTorch's graph works on its own copies
    scratch = {k: torch.empty(256, device="cuda") for k in ("h", "q", "k", "v", "a", "o")}
    names = ("x", "wn", "wq", "wk", "wv", "wo", "kc", "vc", "h", "q", "k", "v", "a", "o")
    bufs = (ctypes.c_void_p * len(names))(*[dict(mine, **scratch)[n].data_ptr() for n in names])
    scal = torch.zeros(2, dtype=torch.int32, device="cuda")
    host_scal = torch.zeros(2, dtype=torch.int32).pin_memory()
    on_stream = m._lib.decode_step_on_stream
    on_stream.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    on_stream.restype = ctypes.c_int

    def stream_step():
        err = on_stream(bufs, scal.data_ptr(), torch.cuda.current_stream().cuda_stream)
        if err:
            raise RuntimeError("decode_step_on_stream: CUDA error %d" % err)

    g = m.decode_step(**t)
    gp = pure_class(m.decode_step, cgc)(**t) if cgc.speedups() else None
    # The same 8 steps both ways must give the same x.
    for p in range(8):
        g.pos, g.nkeys = p, p + 1
        g.launch()
        scal.copy_(torch.tensor([p, p + 1], dtype=torch.int32))
        stream_step()
    torch.cuda.synchronize()
    diff = (t["x"] - mine["x"]).abs().max().item()
    if not diff <= 1e-5 * t["x"].abs().max().item():
        raise SystemExit("python_launch: cgc's graph and the stream launches disagree: %g" % diff)

    tg = rows_io.torch_graph(torch, stream_step)

    # Every way does the same GPU work: row 63 written, attention over 64
    # keys (what a set costs does not depend on the value).
    stream = torch.cuda.current_stream().cuda_stream
    host_scal.copy_(torch.tensor([63, 64], dtype=torch.int32))
    scal.copy_(host_scal)

    def cgc_step():
        g.pos = 63
        g.nkeys = 64
        g.launch()

    def cgc_pure_step():
        gp.pos = 63
        gp.nkeys = 64
        gp.launch()

    def cgc_step_stream():
        g.pos = 63
        g.nkeys = 64
        g.launch(stream)

    def torch_copy_replay():
        scal.copy_(host_scal, non_blocking=True)
        tg.replay()

    ways = (("cgc", cgc_step), ("cgc_int_stream", cgc_step_stream), ("cgc_launch", g.launch),
            ("torch_replay", tg.replay), ("torch_copy_replay", torch_copy_replay))
    if gp is not None:
        ways += (("cgc_pure", cgc_pure_step),)

    def host(f, rounds=60):
        times = []
        for _ in range(rounds):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(STEPS_PER_ROUND):
                f()
            times.append((time.perf_counter() - t0) * 1e6 / STEPS_PER_ROUND)
        torch.cuda.synchronize()
        return statistics.median(times)

    def latency(f, rounds=300):
        times = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            f()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(times)

    def gpu(f):
        return rows_io.event_us(torch, f, k=64, rounds=30, warm_up=0)

    rows = []
    for _ in range(2):  # warm
        for _, f in ways:
            host(f, 5)
    # Interleaved, so drift of the machine's clocks falls on every way alike.
    results = {w: {"host_us": [], "latency_us": [], "gpu_us": []} for w, _ in ways}
    for _ in range(3):
        for w, f in ways:
            results[w]["host_us"].append(host(f))
            results[w]["latency_us"].append(latency(f))
            results[w]["gpu_us"].append(gpu(f))
    for w, _ in ways:
        for metric, values in results[w].items():
            rows.append(row(w, metric, statistics.median(values)))
    g.close()
    if gp is not None:
        gp.close()
    return rows


def measure(build_dir, arch, cgc_prefix=None):
    """The rows, or none (with a message) without PyTorch or a GPU."""
    if rows_io.torch_here("python_launch") is None:
        return []
    package = os.path.join(ROOT, "python")
    if cgc_prefix is None and build_dir is not None:
        cgc_prefix = install(build_dir)
        if os.path.isdir(os.path.join(build_dir, "python", "cgc")):
            package = os.path.join(build_dir, "python")
    return run(cgc_prefix, arch, package)


def get(rows, way, metric):
    return rows_io.get(rows, "python", CASE, way, metric)


def ratio_lines(rows):
    """(label, value, target text, met) for the table and run.py's plot."""
    out = []
    add = rows_io.ratio_adder(out)

    add("python decode_step: host, cgc set+launch / torch replay()",
        get(rows, "cgc", "host_us"), get(rows, "torch_replay", "host_us"), "<= 1",
        lambda v: v <= 1)
    add("python decode_step: host, cgc / torch copy_ + replay()", get(rows, "cgc", "host_us"),
        get(rows, "torch_copy_replay", "host_us"))
    add("python decode_step: host, cgc in pure Python / torch replay()",
        get(rows, "cgc_pure", "host_us"), get(rows, "torch_replay", "host_us"))
    add("python decode_step: latency, cgc / torch replay()", get(rows, "cgc", "latency_us"),
        get(rows, "torch_replay", "latency_us"))
    add("python decode_step: GPU time, cgc / torch replay()", get(rows, "cgc", "gpu_us"),
        get(rows, "torch_replay", "gpu_us"))
    return out


WAYS = (("cgc", "cgc: set pos, nkeys; launch()"),
        ("cgc_pure", "cgc: the same in pure Python"),
        ("cgc_int_stream", "cgc: the same, launch(stream int)"),
        ("cgc_launch", "cgc: launch() alone"),
        ("torch_replay", "PyTorch: replay()"),
        ("torch_copy_replay", "PyTorch: copy_ pos, nkeys; replay()"))


def table(rows):
    t = io.StringIO()
    t.write("decode step (4 layers, 32 kernels) from Python, us a step\n")
    t.write("%-40s %10s %12s %10s\n" % ("way", "host", "latency", "GPU"))
    for way, label in WAYS:
        v = [get(rows, way, m) for m in ("host_us", "latency_us", "gpu_us")]
        t.write("%-40s %10s %12s %10s\n" % ((label,) + tuple(
            "-" if x is None else "%.2f" % x for x in v)))
    rows_io.ratio_table(t, ratio_lines(rows), width=62)
    return t.getvalue()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cgc", help="cgc's install prefix (default: --build, else CGC_HOME)")
    p.add_argument("--build", help="a build of this project, installed to DIR/python-prefix")
    p.add_argument("--arch", default=None, help="CUDA architecture (default: this GPU's)")
    p.add_argument("--out", help="also write DIR/python_launch.csv and DIR/python_launch.txt")
    args = p.parse_args()
    rows = measure(args.build, args.arch, args.cgc)
    if not rows:
        return 77
    rows_io.finish(args.out, "python_launch", rows, table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
