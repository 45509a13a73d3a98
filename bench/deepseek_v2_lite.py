#!/usr/bin/env python3
"""DeepSeek-V2-Lite's decode, a token at a time (random weights; batch 1, and 2 to 8):
cgc's graph (samples/deepseek_v2_lite) against PyTorch, eager and as a CUDA
graph, and against the floor: the bytes of weights a token reads divided by
the bandwidth of a plain read-only kernel measured in the same run.

  python3 bench/deepseek_v2_lite.py [--build DIR] [--arch 90] [--no-build] [--out DIR]

cgc's figures: us a token at 512 and 4,096 live keys (a `generate` launch
making 64 tokens after that many prompt positions), over a 256-token
generation, and launched once a token from the host; the batch variants of
2, 4 and 8 sequences at 512 keys (us a step, tokens a second of all the
sequences); the time to create the four batch variants; the GPU memory in
use.  PyTorch's version (batch 1) is written
in idiomatic torch ops on the same layouts (matmuls, the absorbed attention
over the cache with torch's softmax, `topk` on the router's softmax, the
chosen experts gathered with `index_select` and multiplied with `bmm`).
Prints a table; --out DIR also writes DIR/deepseek_v2_lite.csv and .txt.
bench/run.py calls measure(), ratio_lines() and table().
"""
import io
import math
import os
import re
import subprocess
import sys

import rows as rows_io  # bench/rows.py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SECTION = "deepseek_v2_lite"

# The published configuration.
VOCAB, D, LAYERS, DENSE, H, KVR, NOPE, ROPE, VD = 102400, 2048, 27, 1, 16, 512, 128, 64, 128
F, E, FE, TOPK, FS = 10944, 64, 1408, 6, 2816
QKV = H * (NOPE + ROPE) + KVR + ROPE


def weight_bytes_a_token():
    """The bf16 weights one token's step reads: every layer's attention and
    norms, the dense FFN, each MoE layer's router, shared experts and 6 of
    its 64 experts, the final norm and the LM head (and one embedding row)."""
    attn = QKV * D + H * KVR * NOPE + H * VD * KVR + D * H * VD + 2 * D + KVR
    moe = E * D + TOPK * 3 * FE * D + 3 * FS * D
    dense = 3 * F * D
    total = LAYERS * attn + DENSE * dense + (LAYERS - DENSE) * moe + D + VOCAB * D + D
    return 2 * total


def build(build_dir, arch):
    rows_io.configure(build_dir, arch)
    rows_io.build(build_dir, "deepseek_v2_lite", "bench_llm_kernels")


BATCHES = (2, 4, 8)  # the sample's batch variants past one sequence
STEP = r"generation: .*?: ([0-9.]+) us a step"  # the sample's one-launch figure


def batch_of(case):
    """The sequences of a batch row's case (batch8_keys512: 8)."""
    return int(case[len("batch"):].split("_")[0])


def run_sample(build_dir, args):
    exe = os.path.join(build_dir, "samples", "deepseek_v2_lite", "deepseek_v2_lite")
    out = subprocess.run([exe] + args, check=True, capture_output=True, text=True).stdout
    print(out, end="", flush=True)
    return out


def number(pattern, text):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None


def measure_cgc(build_dir):
    rows = []

    def add(case, way, metric, value):
        if value is not None:
            rows.append(dict(section=SECTION, case=case, way=way, metric=metric, value=value))

    for keys, tokens in ((512, 64), (4096, 64), (512, 256)):
        out = run_sample(build_dir, ["--keys", str(keys), "--tokens", str(tokens + 1)])
        case = "keys%d" % keys if tokens == 64 else "generate256"
        add(case, "cgc", "us_a_token", number(STEP, out))
        add(case, "cgc_host_launched", "us_a_token",
            number(r"host-launched: .*?: ([0-9.]+) us a step", out))
        if tokens == 256:
            add("create", "cgc", "ms", number(r"created: .* in ([0-9.]+) ms", out))
            add("memory", "cgc", "GB", number(r"GPU memory in use: ([0-9.]+) GB", out))
    for batch in BATCHES:
        out = run_sample(build_dir, ["--batch", str(batch), "--keys", "512", "--tokens", "65"])
        add("batch%d_keys512" % batch, "cgc", "us_a_step",
            number(STEP, out))
    out = subprocess.run([os.path.join(build_dir, "bench", "bench_llm_kernels"), "--read"],
                         check=True, capture_output=True, text=True).stdout
    tbs = number(r"read,8GB,read_only,TB/s,([0-9.]+)", out)
    add("read", "read_only", "TB/s", tbs)
    if tbs:
        add("floor", "read_only", "us_a_token", weight_bytes_a_token() / (tbs * 1e12) * 1e6)
    return rows


# ---- PyTorch ---------------------------------------------------------------


class TorchModel:
    """The step in idiomatic PyTorch, batch 1, over a cache of `maxpos`."""

    def __init__(self, torch, maxpos):
        self.torch = torch
        dev, bf = "cuda", torch.bfloat16
        g = torch.Generator(device=dev)
        g.manual_seed(1)

        def w(*shape, scale=None):
            s = scale if scale is not None else 1 / math.sqrt(shape[-1])
            return ((torch.rand(*shape, device=dev, generator=g) * 2 - 1) * s).to(bf)

        self.embed = w(VOCAB, D, scale=1.0)
        self.attn_norm = torch.ones(LAYERS, D, device=dev, dtype=bf)
        self.ffn_norm = torch.ones(LAYERS, D, device=dev, dtype=bf)
        self.kv_norm = torch.ones(LAYERS, KVR, device=dev, dtype=bf)
        self.final_norm = torch.ones(D, device=dev, dtype=bf)
        self.lm_head = w(VOCAB, D)
        self.w_qkv = [w(QKV, D) for _ in range(LAYERS)]
        self.w_ukt = [w(H, KVR, NOPE) for _ in range(LAYERS)]
        self.w_uv = [w(H, VD, KVR) for _ in range(LAYERS)]
        self.w_o = [w(D, H * VD, scale=0.5 / math.sqrt(H * VD)) for _ in range(LAYERS)]
        self.dense_gu = [w(2 * F, D) for _ in range(DENSE)]
        self.dense_down = [w(D, F, scale=0.5 / math.sqrt(F)) for _ in range(DENSE)]
        self.router = [w(E, D) for _ in range(LAYERS - DENSE)]
        self.exp_gu = [w(E, 2 * FE, D) for _ in range(LAYERS - DENSE)]
        self.exp_down = [w(E, D, FE, scale=0.5 / math.sqrt(FE)) for _ in range(LAYERS - DENSE)]
        self.sh_gu = [w(2 * FS, D) for _ in range(LAYERS - DENSE)]
        self.sh_down = [w(D, FS, scale=0.5 / math.sqrt(FS)) for _ in range(LAYERS - DENSE)]
        self.cache = [torch.zeros(maxpos, KVR + ROPE, device=dev, dtype=bf)
                      for _ in range(LAYERS)]
        # Plain RoPE frequencies, not YaRN's: the time does not depend on them.
        inv = 1.0 / (10000 ** (torch.arange(0, ROPE, 2, device=dev, dtype=torch.float32) / ROPE))
        self.inv_freq = inv
        self.scale = 0.114721387

    def rms(self, x, g):
        t = self.torch
        xf = x.float()
        return g * (xf * t.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(t.bfloat16)

    def rope(self, x, pos):
        t = self.torch
        f = pos.float() * self.inv_freq
        cos, sin = t.cos(f).to(t.bfloat16), t.sin(f).to(t.bfloat16)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return t.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)

    def step(self, tok, pos, keys):
        """tok, pos: 1-element tensors; attends over the first `keys` rows."""
        t = self.torch
        x = self.embed[tok]                                   # [1, D]
        for l in range(LAYERS):
            h = self.rms(x, self.attn_norm[l])
            qkv = h @ self.w_qkv[l].T                          # [1, QKV]
            q = qkv[:, :H * (NOPE + ROPE)].view(H, NOPE + ROPE)
            ckv, kpe = qkv[:, H * (NOPE + ROPE):H * (NOPE + ROPE) + KVR], qkv[:, -ROPE:]
            c = self.rms(ckv, self.kv_norm[l])
            self.cache[l].index_copy_(0, pos, t.cat([c, self.rope(kpe, pos)], -1))
            q_lat = t.bmm(q[:, :NOPE].unsqueeze(1), self.w_ukt[l].transpose(1, 2)).squeeze(1)
            q_pe = self.rope(q[:, NOPE:], pos)
            kv = self.cache[l][:keys]                          # [keys, KVR + ROPE]
            s = (t.cat([q_lat, q_pe], -1) @ kv.T).float() * self.scale
            p = t.softmax(s, -1).to(t.bfloat16)                # [H, keys]
            o = p @ kv[:, :KVR]                                # [H, KVR]
            a = t.bmm(self.w_uv[l], o.unsqueeze(2)).reshape(1, H * VD)
            x = x + a @ self.w_o[l].T
            h = self.rms(x, self.ffn_norm[l])
            if l < DENSE:
                gu = h @ self.dense_gu[l].T
                x = x + (t.nn.functional.silu(gu[:, :F]) * gu[:, F:]) @ self.dense_down[l].T
                continue
            e = l - DENSE
            probs = t.softmax((h @ self.router[e].T).float(), -1)
            wts, ids = t.topk(probs, TOPK, -1)
            gu = t.bmm(self.exp_gu[e].index_select(0, ids[0]), h.T.expand(TOPK, D, 1).contiguous())
            act = t.nn.functional.silu(gu[:, :FE]) * gu[:, FE:]          # [TOPK, FE, 1]
            y = t.bmm(self.exp_down[e].index_select(0, ids[0]), act)      # [TOPK, D, 1]
            routed = (y.squeeze(2).float() * wts.T).sum(0, keepdim=True).to(t.bfloat16)
            sgu = h @ self.sh_gu[e].T
            shared = (t.nn.functional.silu(sgu[:, :FS]) * sgu[:, FS:]) @ self.sh_down[e].T
            x = x + routed + shared
        logits = (self.rms(x, self.final_norm) @ self.lm_head.T).float()
        return t.argmax(logits, -1)


def measure_torch(keys_list=(512, 4096)):
    torch = rows_io.torch_here("deepseek_v2_lite.py")
    if torch is None:
        return []
    rows = []
    model = TorchModel(torch, max(keys_list) + 8)
    for keys in keys_list:
        tok = torch.tensor([7], device="cuda")
        pos = torch.tensor([keys - 1], device="cuda")
        with torch.no_grad():
            step = lambda: model.step(tok, pos, keys)
            rows.append(dict(section=SECTION, case="keys%d" % keys, way="torch_eager",
                             metric="us_a_token",
                             value=rows_io.event_us(torch, step, rounds=5, warm_up=3)))
            graph = rows_io.torch_graph(torch, step)
            rows.append(dict(section=SECTION, case="keys%d" % keys, way="torch_graph",
                             metric="us_a_token",
                             value=rows_io.event_us(torch, graph.replay, rounds=20, warm_up=3)))
            del graph
        print("deepseek_v2_lite.py: torch at %d keys: eager %.0f us, graph %.0f us a token" % (
            keys, rows[-2]["value"], rows[-1]["value"]), flush=True)
    del model
    torch.cuda.empty_cache()
    return rows


def measure(build_dir, arch, no_build=False):
    if not no_build:
        build(build_dir, arch)
    return measure_cgc(build_dir) + measure_torch()


def ratio_lines(rows):
    out = []
    add = rows_io.ratio_adder(out)
    g = lambda case, way: rows_io.get(rows, SECTION, case, way, "us_a_token")
    floor = g("floor", "read_only")
    add("DeepSeek-V2-Lite 512 keys: cgc / floor", g("keys512", "cgc"), floor, "<= 1.35",
        lambda v: v <= 1.35)
    add("DeepSeek-V2-Lite 4096 keys: cgc / floor", g("keys4096", "cgc"), floor, "", lambda v: None)
    add("DeepSeek-V2-Lite 256 tokens: cgc / floor", g("generate256", "cgc"), floor, "",
        lambda v: None)
    for keys in (512, 4096):
        c = g("keys%d" % keys, "cgc")
        add("DeepSeek-V2-Lite %d keys: host-launched / cgc" % keys,
            g("keys%d" % keys, "cgc_host_launched"), c, "", lambda v: None)
        add("DeepSeek-V2-Lite %d keys: torch eager / cgc" % keys, g("keys%d" % keys, "torch_eager"),
            c, "", lambda v: None)
        add("DeepSeek-V2-Lite %d keys: torch graph / cgc" % keys, g("keys%d" % keys, "torch_graph"),
            c, "", lambda v: None)
    create = rows_io.get(rows, SECTION, "create", "cgc", "ms")
    if create is not None:
        out.append(("DeepSeek-V2-Lite: create 4 variants (ms)", create, "< 100", create < 100))
    return out


def table(rows):
    lines = ["DeepSeek-V2-Lite decode, random weights (%.2f GB of weights a token), batch 1:" %
             (weight_bytes_a_token() / 1e9), "%-22s %-18s %12s %10s" % ("case", "way", "us/token",
                                                                       "tokens/s")]
    for r in rows:
        if r["section"] == SECTION and r["metric"] == "us_a_token":
            v = float(r["value"])
            lines.append("%-22s %-18s %12.1f %10.1f" % (r["case"], r["way"], v, 1e6 / v))
    steps = [r for r in rows if r["section"] == SECTION and r["metric"] == "us_a_step"]
    if steps:
        lines.append("%-22s %-18s %12s %10s" % ("batch", "way", "us/step", "tokens/s"))
    for r in steps:
        v = float(r["value"])
        lines.append("%-22s %-18s %12.1f %10.1f" % (r["case"], r["way"], v,
                                                     batch_of(r["case"]) * 1e6 / v))
    for r in rows:
        if r["section"] == SECTION and r["metric"] not in ("us_a_token", "us_a_step"):
            lines.append("%-22s %-18s %12.2f %s" % (r["case"], r["way"], float(r["value"]),
                                                     r["metric"]))
    t = io.StringIO()
    rows_io.ratio_table(t, ratio_lines(rows), digits=2)
    return "\n".join(lines) + "\n" + t.getvalue()


def main():
    args = rows_io.parser(__doc__.split("\n")[0], "deepseek_v2_lite").parse_args()
    rows = measure(args.build, args.arch, args.no_build)
    rows_io.finish(args.out, SECTION, rows, table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
