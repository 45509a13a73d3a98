#!/usr/bin/env python3
"""kernels/ (cgc::kernels) at DeepSeek-V2-Lite's decode shapes: each kernel
as 200 back-to-back calls in one CUDA graph, each call reading another copy
of its weights (more than the 50 MB L2 in all), against cuBLAS's GEMM and a
read-only kernel over the same bytes timed the same way (bench_llm_kernels),
and torch.matmul timed the same way (a CUDA graph of 200 calls over copies).

  python3 bench/llm_kernels.py [--build DIR] [--arch 90] [--no-build] [--out DIR]

Prints a table (us a call, TB/s, ratios against the read-only kernel and
cuBLAS, and the issue's targets); --out DIR also writes DIR/llm_kernels.csv
and .txt.  bench/run.py calls measure(), ratio_lines() and table().
"""
import csv
import io
import os
import subprocess
import sys

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CALLS = 200

# The one-token GEMV shapes (rows n of weights, k) torch.matmul is timed at.
TORCH_SHAPES = {"kv_a_m1": (576, 2048), "q_proj_m1": (3072, 2048), "o_proj_m1": (2048, 2048),
                "expert_down_m1": (2048, 1408), "dense_down_m1": (2048, 10944),
                "dense_gate_up_m1": (2 * 10944, 2048), "lm_head_m1": (102400, 2048)}


def build(build_dir, arch):
    rows_io.configure(build_dir, arch)
    rows_io.build(build_dir, "bench_llm_kernels")


def run_c(build_dir):
    out = subprocess.run([os.path.join(build_dir, "bench", "bench_llm_kernels")], check=True,
                         capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def run_torch():
    torch = rows_io.torch_here("llm_kernels.py")
    if torch is None:
        return []
    rows = []
    for case, (n, k) in TORCH_SHAPES.items():
        bytes_ = n * k * 2
        copies = max(2, -(-(512 << 20) // bytes_))
        ws = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.02 for _ in range(copies)]
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)

        def calls():
            for i in range(CALLS):
                torch.matmul(x, ws[i % copies].T)

        g = rows_io.torch_graph(torch, calls)
        us = rows_io.event_us(torch, g.replay, rounds=15, warm_up=3) / CALLS
        rows.append(dict(section="kernels", case=case, way="torch_matmul", metric="us",
                         value="%.4f" % us))
        del g, ws
        torch.cuda.empty_cache()
    return rows


def measure(build_dir, arch, no_build=False):
    if not no_build:
        build(build_dir, arch)
    return run_c(build_dir) + run_torch()


def _cases(rows, section):
    seen = []
    for r in rows:
        if r["section"] == section and r["case"] not in seen:
            seen.append(r["case"])
    return seen


def ratio_lines(rows):
    out = []
    add = rows_io.ratio_adder(out)
    for c in _cases(rows, "kernels"):
        mb = rows_io.get(rows, "kernels", c, "bytes", "MB")
        k = rows_io.get(rows, "kernels", c, "cgc_kernels", "us")
        add("%s: cgc_kernels / read-only" % c, k, rows_io.get(rows, "kernels", c, "read_only", "us"),
            "<= 1.1", lambda v: v <= 1.1)
        if mb is not None and mb < 16 and c.endswith("_m1"):
            add("%s: cgc_kernels / cuBLAS" % c, k, rows_io.get(rows, "kernels", c, "cublas", "us"),
                "<= 0.6", lambda v: v <= 0.6)
    for c in _cases(rows, "moe"):
        if c.startswith("experts"):
            mb = rows_io.get(rows, "moe", c, "bytes", "MB")
            us = rows_io.get(rows, "moe", c, "cgc_kernels", "us")
            if mb and us:
                v = mb / us / 1e6
                out.append(("%s: TB/s" % c, v, ">= 4.0" if c.endswith("m1") else "",
                            v >= 4.0 if c.endswith("m1") else None))
    for c in _cases(rows, "attention"):
        if c.startswith("keys4096"):
            add("%s: read-only / decode" % c, rows_io.get(rows, "attention", c, "read_only", "us"),
                rows_io.get(rows, "attention", c, "decode_combine", "us"), ">= 0.7",
                lambda v: v >= 0.7)
    for c in _cases(rows, "layer"):
        add("%s: chain / read-only" % c, rows_io.get(rows, "layer", c, "cgc_kernels", "us"),
            rows_io.get(rows, "layer", c, "read_only", "us"), "<= 1.25", lambda v: v <= 1.25)
    return out


def table(rows):
    lines = ["kernels/ at DeepSeek-V2-Lite's shapes (us a call; %d calls a graph)" % CALLS]
    read = rows_io.get(rows, "read", "8GB", "read_only", "TB/s")
    if read:
        lines.append("read-only kernel over 8 GB: %.2f TB/s" % read)
    for section in ("kernels", "attention", "moe", "layer", "boundary", "router", "sweep"):
        for c in _cases(rows, section):
            vals = {r["way"]: float(r["value"]) for r in rows
                    if r["section"] == section and r["case"] == c}
            mb = vals.pop("bytes", None)
            text = "  ".join("%s %.2f" % (w, v) for w, v in vals.items())
            main = vals.get("cgc_kernels") or vals.get("decode_combine")
            tbs = " %.2f TB/s" % (mb / main / 1e6) if mb and main else ""
            lines.append("%-10s %-26s %8.2f MB%s  %s" % (section, c, mb or 0, tbs, text))
    t = io.StringIO()
    rows_io.ratio_table(t, ratio_lines(rows), digits=2)
    return "\n".join(lines) + "\n" + t.getvalue()


def main():
    args = rows_io.parser(__doc__.split("\n")[0], "llm_kernels").parse_args()
    rows = measure(args.build, args.arch, args.no_build)
    rows_io.finish(args.out, "llm_kernels", rows, table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
