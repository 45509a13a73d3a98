#!/usr/bin/env python3
"""The tensor-parallel FFN stack (samples/tensor_parallel: 4 SwiGLU layers of
hidden 2048 and intermediate 10,944, bf16, one token) on 1 and 2 GPUs: cgc's
graph against the same stack in one GPU's graph, the same step captured by
hand, one all_reduce node against the same ncclAllReduce captured by hand,
and PyTorch (torch.distributed NCCL all_reduce under torch.cuda.CUDAGraph,
one process a GPU).

  python3 bench/tensor_parallel.py [--build DIR] [--arch 90] [--no-build] [--out DIR]
                                   [--no-sweep]

Builds the bench_tp targets (CGC_BENCH=ON, NCCL found) unless --no-build,
runs bench_tp1 and bench_tp2 (2 ranks: skipped, with a message, on fewer
than 2 GPUs) and the crossover sweep over F (TP_BENCH_SWEEP: 2736, 5472,
21888), then PyTorch's version with world sizes 1 and 2 (where there are
the GPUs) when PyTorch with NCCL is there.  Prints a table: us a step,
ratios and the issue's targets (2 GPUs at least 1.4x one; a collective
node no slower than the same call captured by hand; faster than
PyTorch's); with --out also writes DIR/tensor_parallel.csv and .txt.
bench/run.py calls measure(), ratio_lines() and table().
"""
import argparse
import io
import json
import os
import subprocess
import sys

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))

D, F, LAYERS = 2048, 10944, 4
SWEEP = (2736, 5472, 10944, 21888)
ROUNDS, QUEUED = 200, 16


def build(build_dir, arch):
    rows_io.configure(build_dir, arch)
    build_targets(build_dir)


def build_targets(build_dir):
    """The bench_tp targets, which exist only where CMake found NCCL."""
    cmd = ["cmake", "--build", build_dir, "--target", "bench_tp"]
    print("+", " ".join(cmd), flush=True)
    if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
        print("tensor_parallel: bench_tp did not build (is NCCL there? set NCCL_ROOT)", flush=True)


def exe_name(f, ranks):
    return "bench_tp%d" % ranks if f == F else "bench_tp_f%d_r%d" % (f, ranks)


def run_c(build_dir, sweep=True):
    """Every bench_tp's rows; those that cannot run (no NCCL, too few GPUs)
    are left out with a message."""
    rows = []
    for f in SWEEP if sweep else (F,):
        for ranks in (1, 2):
            exe = os.path.join(build_dir, "bench", exe_name(f, ranks))
            if not os.path.exists(exe):
                print("tensor_parallel: no %s (built only where NCCL is); its rows are left out"
                      % exe, flush=True)
                continue
            rows += rows_io.run_rows(
                [exe], "tensor_parallel", "%d rank%s: too few GPUs here; those rows are left out"
                % (ranks, "" if ranks == 1 else "s"))
    return rows


def row(case, way, metric, value):
    return rows_io.row("tp", case, way, metric, value)


def torch_rank(rank, world, port):
    """One rank of PyTorch's version: the same stack written as PyTorch users
    write it (RMSNorm, matmuls, silu(gate) * up, dist.all_reduce of the
    down projection's partial, the residual add), bf16, its shard of F;
    timed eager and as a CUDA graph as bench_tp times cgc's."""
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    try:
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    except TypeError:  # a PyTorch before device_id
        dist.init_process_group("nccl", rank=rank, world_size=world)
    bf16, fr = torch.bfloat16, F // world
    gen = torch.Generator(device=dev)
    gen.manual_seed(1000 + rank)

    def uniform(*shape, scale=1.0):
        return ((torch.rand(*shape, device=dev, generator=gen) * 2 - 1) * scale).to(bf16)

    norm = [(1 + 0.1 * (torch.rand(D, device=dev, generator=gen) * 2 - 1)).to(bf16)
            for _ in range(LAYERS)]
    w_gate = [uniform(fr, D, scale=(3.0 / D) ** 0.5) for _ in range(LAYERS)]
    w_up = [uniform(fr, D, scale=(3.0 / D) ** 0.5) for _ in range(LAYERS)]
    w_down = [uniform(D, fr, scale=(3.0 / F) ** 0.5) for _ in range(LAYERS)]
    x = uniform(1, D)
    F_ = torch.nn.functional

    def step():
        for l in range(LAYERS):
            h = x.float()
            h = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).to(bf16) * norm[l]
            act = F_.silu(h @ w_gate[l].t()) * (h @ w_up[l].t())
            y = act @ w_down[l].t()
            if world > 1:
                dist.all_reduce(y)
            x.add_(y)

    g = rows_io.torch_graph(torch, step)
    line = torch.ones(1, device=dev)

    def timed(f, k, rounds):
        """us a step: k steps between two events after the ranks line up."""
        return rows_io.event_us(torch, f, k, rounds,
                                line_up=(lambda: dist.all_reduce(line)) if world > 1 else None)

    out = {}
    for way, f in (("torch_graph", g.replay), ("torch_eager", step)):
        out[(way, "us_per_step")] = timed(f, 1, ROUNDS if way == "torch_graph" else 50)
        out[(way, "us_per_step_queued")] = timed(f, QUEUED, 50 if way == "torch_graph" else 10)
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(json.dumps([[way, metric, v] for (way, metric), v in sorted(out.items())]),
              flush=True)


def run_torch():
    """PyTorch's rows for world sizes 1 and 2, as many as there are GPUs:
    one process a rank, this script run again with --torch-rank."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("tensor_parallel: no PyTorch here; its rows are left out", flush=True)
        return []
    if not torch.cuda.is_available() or not dist.is_available() or not dist.is_nccl_available():
        print("tensor_parallel: PyTorch sees no GPU or has no NCCL; its rows are left out",
              flush=True)
        return []
    gpus = torch.cuda.device_count()
    rows = []
    for world in (1, 2):
        if world > gpus:
            print("tensor_parallel: PyTorch with %d processes needs %d GPUs, this machine has %d; "
                  "left out" % (world, world, gpus), flush=True)
            continue
        port = 29500 + os.getpid() % 1000 + world
        print("+ PyTorch, %d process%s" % (world, "" if world == 1 else "es"), flush=True)
        procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--torch-rank",
                                   str(r), str(world), str(port)],
                                  stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
                                  text=True) for r in range(world)]
        try:
            text, _ = procs[0].communicate(timeout=900)
            for p in procs[1:]:
                p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            text = None
        for p in procs:
            if p.poll() is None:
                p.kill()
        if text is None or any(p.returncode != 0 for p in procs):
            print("tensor_parallel: PyTorch with %d processes failed; left out" % world,
                  flush=True)
            continue
        case = "f%d_r%d" % (F, world)
        rows += [row(case, way, metric, v) for way, metric, v in json.loads(text.splitlines()[-1])]
    return rows


def measure(build_dir, arch, sweep=True):
    """Every row: the C ways, then PyTorch's."""
    del arch  # the C is built for it; PyTorch needs nothing built
    return run_c(build_dir, sweep) + run_torch()


def get(rows, f, ranks, way, metric="us_per_step_queued"):
    return rows_io.get(rows, "tp", "f%d_r%d" % (f, ranks), way, metric)


def one_gpu(rows, f, metric="us_per_step_queued"):
    """The unsplit stack's time: measured by bench_tp1 (or bench_tp2)."""
    v = get(rows, f, 1, "full", metric)
    return v if v is not None else get(rows, f, 2, "full", metric)


def ratio_lines(rows):
    """(label, value, target text, met) for the tables and run.py's plot."""
    out = []
    add = rows_io.ratio_adder(out)

    for metric, tag in (("us_per_step_queued", ""), ("us_per_step", ", one step")):
        full = one_gpu(rows, F, metric)
        add("TP FFN%s: one GPU / cgc on 2 GPUs" % tag, full, get(rows, F, 2, "cgc", metric),
            ">= 1.4", lambda v: v >= 1.4)
        add("TP FFN%s: torch CUDA graph / cgc, 2 GPUs" % tag,
            get(rows, F, 2, "torch_graph", metric), get(rows, F, 2, "cgc", metric), "> 1",
            lambda v: v > 1)
        add("TP FFN%s: torch eager / cgc, 2 GPUs" % tag, get(rows, F, 2, "torch_eager", metric),
            get(rows, F, 2, "cgc", metric))
        add("TP FFN%s: torch CUDA graph / cgc, 1 GPU" % tag,
            get(rows, F, 1, "torch_graph", metric), get(rows, F, 1, "cgc", metric), "> 1",
            lambda v: v > 1)
        for ranks in (1, 2):
            add("TP FFN%s, %d rank%s: cgc / capture by hand" % (tag, ranks,
                                                              "" if ranks == 1 else "s"),
                get(rows, F, ranks, "cgc", metric), get(rows, F, ranks, "capture", metric),
                "<= 1.02", lambda v: v <= 1.02)
            add("all_reduce%s, %d rank%s: cgc node / captured by hand" % (
                tag, ranks, "" if ranks == 1 else "s"),
                get(rows, F, ranks, "reduce_cgc", metric),
                get(rows, F, ranks, "reduce_hand", metric), "<= 1.02", lambda v: v <= 1.02)
        add("TP FFN%s, 1 rank: cgc (with its all_reduce) / one GPU's graph" % tag,
            get(rows, F, 1, "cgc", metric), full)
    for f in SWEEP:
        if f != F:
            add("crossover, F %d: one GPU / cgc on 2 GPUs" % f, one_gpu(rows, f),
                get(rows, f, 2, "cgc"), "> 1 pays", lambda v: v > 1)
    return out


WAYS = (("cgc", "cgc graph (all_reduce nodes)"),
        ("capture", "captured by hand (ncclAllReduce)"),
        ("reduce_cgc", "one all_reduce node (cgc)"),
        ("reduce_hand", "one ncclAllReduce captured"),
        ("full", "one GPU's graph, unsplit"),
        ("torch_graph", "PyTorch CUDA graph"),
        ("torch_eager", "PyTorch eager"))


def table(rows):
    """The table as text."""
    t = io.StringIO()
    t.write("tensor-parallel FFN: %d layers, hidden %d, bf16, one token; us a step "
            "(queued: %d back to back; one: a step alone, the ranks lined up first)\n"
            % (LAYERS, D, QUEUED))
    t.write("%-8s %-6s %-36s %10s %10s\n" % ("F", "ranks", "way", "queued", "one"))
    for f in SWEEP:
        for ranks in (1, 2):
            for way, label in WAYS:
                q, one = (get(rows, f, ranks, way, m) for m in ("us_per_step_queued",
                                                                "us_per_step"))
                if q is None and one is None:
                    continue
                t.write("%-8d %-6d %-36s %10s %10s\n" % (
                    f, ranks, label, "-" if q is None else "%.1f" % q,
                    "-" if one is None else "%.1f" % one))
    if get(rows, F, 2, "cgc") is None:
        t.write("(no 2-rank rows: they need 2 GPUs)\n")
    rows_io.ratio_table(t, ratio_lines(rows))
    return t.getvalue()


def main():
    p = rows_io.parser(__doc__.splitlines()[0], "tensor_parallel")
    p.add_argument("--no-sweep", action="store_true", help="F = 10944 only")
    p.add_argument("--torch-rank", nargs=3, type=int, metavar=("RANK", "WORLD", "PORT"),
                   help=argparse.SUPPRESS)  # one rank of PyTorch's version (run_torch)
    args = p.parse_args()
    if args.torch_rank:
        torch_rank(*args.torch_rank)
        return 0
    if not args.no_build:
        build(args.build, args.arch)
    rows = measure(args.build, args.arch, not args.no_sweep)
    rows_io.finish(args.out, "tensor_parallel", rows, table(rows))


if __name__ == "__main__":
    sys.exit(main())
