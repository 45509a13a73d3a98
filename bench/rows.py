"""What the benchmark scripts share: their command line, building their
targets and running them, their CSV rows, looking one up, the ratio lines
of their tables, the files --out writes, and capturing a PyTorch graph."""
import argparse
import csv
import io
import os
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

FIELDS = ["section", "case", "way", "metric", "value"]


def sh(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def parser(description, stem):
    """The command line of a script that builds, measures and writes STEM's
    files: --build, --arch, --no-build, --out."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    p.add_argument("--arch", default="90", help="CUDA architecture (90 for H100 and H200)")
    p.add_argument("--no-build", action="store_true", help="use the build directory as it is")
    p.add_argument("--out", help="also write DIR/%s.csv and DIR/%s.txt" % (stem, stem))
    return p


def configure(build_dir, arch, bench=True):
    """A Release build of the project in build_dir for CUDA architecture
    arch, with the benchmarks (CGC_BENCH) when bench."""
    cmd = ["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
           "-DCMAKE_CUDA_ARCHITECTURES=" + arch]
    if bench:
        cmd.append("-DCGC_BENCH=ON")
    sh(cmd, stdout=subprocess.DEVNULL)


def build(build_dir, *targets):
    sh(["cmake", "--build", build_dir, "--target"] + list(targets), stdout=subprocess.DEVNULL)


def run_rows(cmd, who, no_gpu):
    """The CSV rows a benchmark program prints; none, saying "WHO: NO_GPU",
    when it exits 77 (no GPU, or too few); SystemExit when it fails."""
    print("+", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if p.returncode == 77:
        print("%s: %s" % (who, no_gpu), flush=True)
        return []
    if p.returncode != 0:
        raise SystemExit("%s: %s failed with status %d" % (who, cmd[0], p.returncode))
    return list(csv.DictReader(io.StringIO(p.stdout)))


def row(section, case, way, metric, value):
    """A row as the programs print it."""
    return dict(section=section, case=case, way=way, metric=metric, value="%.4f" % value)


def get(rows, section, case, way, metric):
    """The row's value as a float, or None when there is no such row."""
    for r in rows:
        if (r["section"], r["case"], r["way"], r["metric"]) == (section, case, way, metric):
            return float(r["value"])
    return None


def ratio_adder(out):
    """add(label, num, den, target="", ok=...) appends (label, num / den,
    target text, met) to out, or (label, None, target, None) when either
    value is missing or den is 0; ok(ratio) says whether the target is met
    (None: no target)."""

    def add(label, num, den, target="", ok=lambda v: None):
        if num is None or den is None or den == 0:
            out.append((label, None, target, None))
        else:
            v = num / den
            out.append((label, v, target, ok(v)))

    return add


def ratio_table(t, lines, width=58, digits=3):
    """The ratio lines (ratio_adder's) as a table, written to t."""
    t.write("\n%-*s %8s %8s\n" % (width, "ratio", "value", "target"))
    for label, v, target, ok in lines:
        mark = "" if ok is None else "met" if ok else "MISSED"
        t.write("%-*s %8s %8s %s\n" % (width, label, "-" if v is None else "%.*f" % (digits, v),
                                       target, mark))


def write_outputs(out_dir, stem, rows, text):
    """DIR/STEM.csv (the rows) and DIR/STEM.txt (the table)."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, stem + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out_dir, stem + ".txt"), "w") as f:
        f.write(text)


def finish(out_dir, stem, rows, text):
    """DIR/STEM.csv and DIR/STEM.txt where --out gave DIR; the table printed."""
    if out_dir:
        write_outputs(out_dir, stem, rows, text)
    print(text)


def torch_here(who):
    """PyTorch's module where it imports and sees a GPU; else None, saying
    so as WHO, whose PyTorch rows are then left out."""
    try:
        import torch
    except ImportError:
        print("%s: no PyTorch here; its rows are left out" % who, flush=True)
        return None
    if not torch.cuda.is_available():
        print("%s: PyTorch sees no GPU; its rows are left out" % who, flush=True)
        return None
    return torch


def event_us(torch, f, k=1, rounds=200, warm_up=10, line_up=None):
    """us a call of f: the median over rounds of k calls between two CUDA
    events, after warm_up calls; line_up(), if given, runs before each
    round (the ranks of a run over several GPUs waiting for each other)."""
    for _ in range(warm_up):
        f()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rounds):
        if line_up is not None:
            line_up()
        e0.record()
        for _ in range(k):
            f()
        e1.record()
        e1.synchronize()
        times.append(1000.0 * e0.elapsed_time(e1) / k)
    return statistics.median(times)


def torch_graph(torch, step, before=None):
    """step() captured into a torch.cuda.CUDAGraph after three warm-up calls
    on a side stream, as PyTorch asks (before(), if given, runs there
    first); synchronised."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        if before is not None:
            before()
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    torch.cuda.synchronize()
    return g
