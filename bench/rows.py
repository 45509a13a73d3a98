"""What the benchmark scripts share: their CSV rows, looking one up, the
ratio lines of their tables, the files --out writes, and running a command."""
import csv
import os
import subprocess

FIELDS = ["section", "case", "way", "metric", "value"]


def sh(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


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


def write_outputs(out_dir, stem, rows, text):
    """DIR/STEM.csv (the rows) and DIR/STEM.txt (the table)."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, stem + ".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out_dir, stem + ".txt"), "w") as f:
        f.write(text)
