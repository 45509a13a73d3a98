#!/usr/bin/env python3
"""cgc's benchmarks: the same kernels as stream launches, stream capture, a
hand-written graph, cgc's graph and PyTorch's CUDA graph, in one run; the
same kernel linked in and from a module; the dense block of a
DeepSeek-V2-Lite decode step (bench/dense_block.py); and its FFN stack split
over GPUs (bench/tensor_parallel.py).

  python3 bench/run.py [--out DIR] [--build DIR] [--arch 90]

Builds the project with the benchmarks (CGC_BENCH=ON), runs bench/bench
(C), builds and runs the PyTorch extension (bench/torch_ext) when PyTorch is
there, runs bench/dense_block.py's measurements (bench/bench_dense and its
PyTorch version), bench/tensor_parallel.py's (bench_tp on 1 and 2 GPUs,
and PyTorch's with torch.distributed) and bench/python_launch.py's (a
decode step set and launched from Python against PyTorch's replay()),
bench/llm_kernels.py's (kernels/ at DeepSeek-V2-Lite's shapes against
cuBLAS, torch.matmul and a read-only kernel) and bench/deepseek_v2_lite.py's
(the whole model's decode against PyTorch and the floor), times the compiler on generated graphs (and bench/compile_scaling.sh's
`cgc --check` at 10k, 100k and 1M nodes), and writes DIR/results.csv,
DIR/ratios.png and DIR/table.txt; the table is printed last.
"""
import argparse
import csv
import importlib.util
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from rows import FIELDS, configure, get, ratio_adder, ratio_table, sh, torch_graph  # bench/rows.py
from rows import build as build_targets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _sibling(name):
    """bench/NAME.py, loaded as a module of its own (not put in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


dense_block = _sibling("dense_block")
tensor_parallel = _sibling("tensor_parallel")
python_launch = _sibling("python_launch")
llm_kernels = _sibling("llm_kernels")
deepseek_v2_lite = _sibling("deepseek_v2_lite")


def build(build_dir, arch):
    configure(build_dir, arch)
    build_targets(build_dir, "bench", "bench_dense", "bench_upload", "bench_device_nodes",
                  "bench_loops", "cgc", "bench_llm_kernels", "deepseek_v2_lite")
    tensor_parallel.build_targets(build_dir)  # where NCCL is


def run_c(build_dir):
    rows = []
    for exe in ("bench", "bench_upload", "bench_device_nodes", "bench_loops"):
        out = sh([os.path.join(build_dir, "bench", exe)], stdout=subprocess.PIPE, text=True).stdout
        rows += [r for r in csv.DictReader(io.StringIO(out))]
    return rows


def run_torch(arch):
    """PyTorch's CUDA graph capturing the same chains of tick kernels."""
    try:
        import torch
        from torch.utils.cpp_extension import load
    except ImportError:
        print("bench: no PyTorch here; its rows are left out", flush=True)
        return []
    ext = load(name="cgc_bench_ext",
               sources=[os.path.join(HERE, "torch_ext", "tick_ext.cpp"),
                        os.path.join(HERE, "torch_ext", "tick_ext.cu")],
               extra_cuda_cflags=["-gencode=arch=compute_%s,code=sm_%s" % (arch, arch)],
               build_directory=tempfile.mkdtemp(prefix="cgc_torch_ext_"), verbose=False)
    rows = []
    for n in (1, 33, 1000):
        x = torch.zeros(256, device="cuda")
        g = torch_graph(torch, lambda: ext.chain(x, n))
        for _ in range(20):
            g.replay()
            torch.cuda.synchronize()
        times = []
        for _ in range(100 if n >= 1000 else 400):
            t0 = time.perf_counter()
            g.replay()
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e6)
        t = statistics.median(times)
        case = "chain%d" % n
        rows.append(dict(section="chain", case=case, way="torch_graph", metric="latency_us",
                         value="%.4f" % t))
        rows.append(dict(section="chain", case=case, way="torch_graph", metric="per_node_us",
                         value="%.4f" % (t / n)))
    return rows


def measure(cmd):
    """Wall time and peak resident memory (MiB) of one command."""
    code = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
            "t = time.perf_counter() - t\n"
            "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n")
    out = subprocess.run([sys.executable, "-c", code] + cmd, check=True, stdout=subprocess.PIPE,
                         text=True).stdout.split()
    return float(out[0]), float(out[1])


def run_compiler(build_dir):
    cgc = os.path.join(build_dir, "compiler", "cgc")
    cuda_inc = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1000, 10000, 100000):
            src = os.path.join(tmp, "g.cgraph")
            with open(src, "w") as f:
                subprocess.run([sys.executable, os.path.join(HERE, "gen_graph.py"), "--nodes",
                                str(n)], check=True, stdout=f)
            out_c = os.path.join(tmp, "g_graph.c")
            runs = [measure([cgc, "-o", out_c, src]) for _ in range(3)]
            gcc = [measure(["gcc", "-O2", "-std=c11", "-I", os.path.join(ROOT, "runtime"), "-I",
                            cuda_inc, "-c", out_c, "-o", os.path.join(tmp, "g.o")])
                   for _ in range(3)]
            case = "%dk_nodes" % (n // 1000)
            rows.append(dict(section="compiler", case=case, way="cgc", metric="seconds",
                             value="%.4f" % statistics.median(r[0] for r in runs)))
            rows.append(dict(section="compiler", case=case, way="cgc", metric="peak_mib",
                             value="%.1f" % statistics.median(r[1] for r in runs)))
            rows.append(dict(section="compiler", case=case, way="gcc_O2", metric="seconds",
                             value="%.4f" % statistics.median(r[0] for r in gcc)))
    return rows


def run_scaling(build_dir):
    """bench/compile_scaling.sh: cgc --check at 10k, 100k and 1M nodes."""
    cgc = os.path.join(build_dir, "compiler", "cgc")
    out = subprocess.run(["sh", os.path.join(HERE, "compile_scaling.sh"), "--csv", cgc],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    rows = []
    for line in out.splitlines():
        shape, nodes, wall, user, sys_s, mib = line.split(",")
        case = "%s_%dk_nodes" % (shape, int(nodes) // 1000)
        for metric, value in (("seconds", wall), ("user_seconds", user), ("peak_mib", mib)):
            rows.append(dict(section="compile_scaling", case=case, way="cgc_check", metric=metric,
                             value=value))
    return rows


    """(label, value, target text, met) for the table and the plot."""
    out = []
    add = ratio_adder(out)

    for n in (1, 33, 1000):
        c = "chain%d" % n
        cgc = get(rows, "chain", c, "cgc", "latency_us")
        add("%s: stream / cgc" % c, get(rows, "chain", c, "stream", "latency_us"), cgc,
            ">= 4" if n == 33 else "", (lambda v: v >= 4) if n == 33 else (lambda v: None))
        add("%s: capture / cgc" % c, get(rows, "chain", c, "capture", "latency_us"), cgc, "",
            lambda v: None)
        add("%s: cgc / hand-written" % c, cgc, get(rows, "chain", c, "hand", "latency_us"),
            "<= 1.02", lambda v: v <= 1.02)
        add("%s: torch graph / cgc" % c, get(rows, "chain", c, "torch_graph", "latency_us"), cgc,
            "> 1" if n == 33 else "", (lambda v: v > 1) if n == 33 else (lambda v: None))
    d = get(rows, "decode", "decode_step", "cgc", "step_us")
    for way in ("stream", "capture"):
        add("decode_step: %s / cgc" % way, get(rows, "decode", "decode_step", way, "step_us"), d,
            "", lambda v: None)
    dp = get(rows, "decode", "decode_step", "cgc_plain", "step_us")
    add("decode_step, plain kernels: cgc / hand-written", dp,
        get(rows, "decode", "decode_step", "hand", "step_us"), "<= 1.02", lambda v: v <= 1.02)
    add("decode_step: pdl / plain kernels (cgc)", d, dp, "<= 0.85", lambda v: v <= 0.85)
    for c in ("small33", "small1000", "large33"):
        add("%s chain: pdl / plain (cgc)" % c, get(rows, "pdl", c, "cgc_pdl", "latency_us"),
            get(rows, "pdl", c, "cgc", "latency_us"), "", lambda v: None)
    v = get(rows, "pdl", "small1000", "cgc_pdl", "per_node_us")
    out.append(("small chain with pdl: us a node", v, "<= 0.7", None if v is None else v <= 0.7))
    add("8 chains: serialised / parallel",
        get(rows, "concurrency", "8x33_spin20us", "cgc_serialised", "latency_us"),
        get(rows, "concurrency", "8x33_spin20us", "cgc", "latency_us"), ">= 6", lambda v: v >= 6)
    for k in (1, 10, 100):
        c = "%d_nodes" % k
        bare = get(rows, "scalars", c, "bare_launch", "host_us")
        add("set scalar + launch, %d reading: host / bare launch" % k,
            get(rows, "scalars", c, "set_pointer_scalar", "host_us"), bare, "<= 1.1",
            lambda v: v <= 1.1)
        add("set by-value scalar in %d nodes + launch: host / bare" % k,
            get(rows, "scalars", c, "set_value_scalar", "host_us"), bare, "", lambda v: None)
        for metric in ("host_us", "latency_us"):
            add("set by-value scalar in %d nodes + launch: %s, as built / all updated from the host"
                % (k, metric.split("_")[0]),
                get(rows, "scalars", c, "set_value_scalar", metric),
                get(rows, "scalars", c, "set_value_scalar_host", metric), "", lambda v: None)
        add("%d independent nodes, launch: hand-written host / cgc" % k,
            get(rows, "scalars", c, "hand_bare_launch", "host_us"), bare, "", lambda v: None)
        add("%d independent nodes, launch: hand-written latency / cgc" % k,
            get(rows, "scalars", c, "hand_bare_launch", "latency_us"),
            get(rows, "scalars", c, "bare_launch", "latency_us"), "", lambda v: None)
        add("set scalar + launch, %d reading: latency / bare" % k,
            get(rows, "scalars", c, "set_pointer_scalar", "latency_us"),
            get(rows, "scalars", c, "bare_launch", "latency_us"), "<= 1.1", lambda v: v <= 1.1)
        for way in ("ring", "params", "driver", "memop", "memcpy"):
            for metric in ("latency_us", "host_us"):
                add("upload by hand, %d reading: %s / bare, %s" % (k, way, metric.split("_")[0]),
                    get(rows, "upload", "%d_readers" % k, way, metric),
                    get(rows, "upload", "%d_readers" % k, "bare", metric), "", lambda v: None)
    for k in (1, 10, 100):
        c = "%d_nodes" % k
        same = get(rows, "grid", c, "grid_unchanged", "host_us")
        add("grid follows a scalar, %d nodes: host, grid changed / unchanged" % k,
            get(rows, "grid", c, "grid_changed", "host_us"), same, "", lambda v: None)
        add("grid follows a scalar, %d nodes: host, set to its value / unchanged" % k,
            get(rows, "grid", c, "grid_set_same", "host_us"), same, "", lambda v: None)
    for k in (8, 16, 32, 48, 56, 64, 100):
        c = "%d_nodes" % k
        add("%d device-updatable nodes / plain: host, launch" % k,
            get(rows, "device_nodes", c, "device_updatable", "host_us"),
            get(rows, "device_nodes", c, "plain", "host_us"), "", lambda v: None)
    add("decode_step batches 1, 2, 4, 8: pooled / separate memory",
        get(rows, "pool", "decode_step_batch_1_2_4_8", "pooled", "bytes"),
        get(rows, "pool", "decode_step_batch_1_2_4_8", "separate", "bytes"), "< 1",
        lambda v: v < 1)
    it = "1024_iterations"
    host = get(rows, "loop", it, "host_loop", "per_iteration_us")
    for k in (1, 4, 16):
        add("while, check every %d: host-driven loop / cgc" % k, host,
            get(rows, "loop", it, "cgc_check%d" % k, "per_iteration_us"), "", lambda v: None)
    add("while, check every 1: cgc / hand-written", get(rows, "loop", it, "cgc_check1",
        "per_iteration_us"), get(rows, "loop", it, "hand_check1", "per_iteration_us"), "",
        lambda v: None)
    add("while, body sets the handle: cgc / hand-written",
        get(rows, "loop", it, "cgc_handle1", "per_iteration_us"),
        get(rows, "loop", it, "hand_check1", "per_iteration_us"), "<= 1.05", lambda v: v <= 1.05)
    for k in (1, 4, 16):
        add("while, check every %d: us an iteration / us a node of a chain of its kernel" % k,
            get(rows, "loop", it, "cgc_check%d" % k, "per_iteration_us"),
            get(rows, "loop", it, "cgc_chain", "per_iteration_us"), "<= 1.2" if k == 16 else "",
            (lambda v: v <= 1.2) if k == 16 else (lambda v: None))
    add("while, check every 16, body sets the handle: us an iteration / us a chain's node",
        get(rows, "loop", it, "cgc_handle16", "per_iteration_us"),
        get(rows, "loop", it, "cgc_chain", "per_iteration_us"), "<= 1.2", lambda v: v <= 1.2)
    def tick(way):
        return get(rows, "loops", "1024_ticks", way, "per_tick_us")
    for num, den, label in (
            ("while_cond1", "while_set1",
             "a condition kernel after the body / the body's kernel setting the handle"),
            ("while_cgrt1", "while_cond1", "cgrt's one-comparison kernel / one written for it"),
            ("while_generic1", "while_cgrt1",
             "cgrt's general condition kernel / its one-comparison kernel"),
            ("tail_set1", "while_set1", "a graph relaunching itself / WHILE, body sets handle"),
            ("tail_cond1", "while_cond1",
             "a graph relaunched by a condition kernel / WHILE with one"),
            ("while_set16", "chain", "WHILE, 16 ticks a check, body sets handle / chain node"),
            ("while_cgrt16", "chain", "WHILE, 16 ticks a check, then cgrt's kernel / chain node"),
            ("tail_set16", "chain", "16 ticks relaunching their graph / chain node")):
        add("loops by hand, a tick: " + label, tick(num), tick(den), "", lambda v: None)
    for n in (33, 1000):
        c = "chain%d" % n
        add("%s: module kernels / linked kernels (replay)" % c,
            get(rows, "module", c, "module", "latency_us"),
            get(rows, "module", c, "linked", "latency_us"), "<= 1.02", lambda v: v <= 1.02)
    add("create 33 nodes: module kernels / linked kernels (the module's load)",
        get(rows, "module", "create33", "module", "create_us"),
        get(rows, "module", "create33", "linked", "create_us"), "", lambda v: None)
    for n in (100, 1000, 10000):
        c = "chain%d" % n
        add("create %d nodes: cgc / hand-written" % n, get(rows, "creation", c, "cgc", "create_us"),
            get(rows, "creation", c, "hand", "create_us"), "<= 1.1", lambda v: v <= 1.1)
    return (out + dense_block.ratio_lines(rows) + tensor_parallel.ratio_lines(rows) +
            python_launch.ratio_lines(rows) + llm_kernels.ratio_lines(rows) +
            deepseek_v2_lite.ratio_lines(rows))


def plot(lines, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: no matplotlib; no plot", flush=True)
        return
    shown = [l for l in lines if l[1] is not None]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(shown) + 1.5))
    colors = ["tab:green" if l[3] else "tab:red" if l[3] is False else "tab:gray" for l in shown]
    ax.barh(range(len(shown)), [l[1] for l in shown], color=colors)
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels([l[0] for l in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="black", linewidth=0.8)
    ax.set_xlabel("ratio (log scale); green: target met, red: missed, gray: no target")
    ax.set_title("cgc benchmarks: ratios from one run")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(ROOT, "bench-results"))
    p.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    p.add_argument("--arch", default="90", help="CUDA architecture (90 for H100 and H200)")
    p.add_argument("--from-csv", metavar="CSV",
                   help="measure nothing: remake the table and plot from an earlier results.csv")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.from_csv:
        with open(args.from_csv) as f:
            rows = list(csv.DictReader(f))
    else:
        build(args.build, args.arch)
        rows = run_c(args.build)
        rows += run_torch(args.arch)
        rows += dense_block.measure(args.build, args.arch)
        rows += tensor_parallel.measure(args.build, args.arch)
        rows += python_launch.measure(args.build, args.arch)
        rows += llm_kernels.measure(args.build, args.arch, no_build=True)
        rows += deepseek_v2_lite.measure(args.build, args.arch, no_build=True)
        rows += run_compiler(args.build)
        rows += run_scaling(args.build)
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    lines = ratio_lines(rows)
    plot(lines, os.path.join(args.out, "ratios.png"))
    table = io.StringIO()
    if not args.from_csv:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], stdout=subprocess.PIPE,
                             text=True).stdout.strip()
        table.write("GPU: %s; host: %s\n\n" % (gpu, platform.node()))
    table.write("%-58s %10s\n" % ("measurement", "value"))
    for r in rows:
        label = "%s %s %s %s" % (r["section"], r["case"], r["way"], r["metric"])
        table.write("%-58s %10s\n" % (label, r["value"]))
    ratio_table(table, lines, digits=2)
    if any(r["section"] == "dense" for r in rows):
        table.write("\n" + dense_block.table(rows))
    if any(r["section"] == "tp" for r in rows):
        table.write("\n" + tensor_parallel.table(rows))
    if any(r["section"] == "python" for r in rows):
        table.write("\n" + python_launch.table(rows))
    if any(r["section"] == "kernels" for r in rows):
        table.write("\n" + llm_kernels.table(rows))
    if any(r["section"] == deepseek_v2_lite.SECTION for r in rows):
        table.write("\n" + deepseek_v2_lite.table(rows))
    with open(os.path.join(args.out, "table.txt"), "w") as f:
        f.write(table.getvalue())
    print(table.getvalue())


if __name__ == "__main__":
    main()
