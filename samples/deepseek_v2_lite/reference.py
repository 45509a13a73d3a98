#!/usr/bin/env python3
"""reference.py: DeepSeek-V2-Lite's decode step in PyTorch, the yardstick for
the cgc sample.

Written from the math of the published modeling code (it imports neither
transformers nor safetensors), on the sample's own weight layout: the stacked
bf16 buffers that weights.h describes, made from a seed exactly as
dsv2_random_device makes them, or loaded from the published checkpoint.

Precision, as the published code runs in bf16: the residual stream and every
projection's output are bf16, each projection accumulating in fp32; RMSNorm
in fp32, its weight applied to the bf16 normed value; the router's logits,
softmax and weights in fp32; attention scores, softmax and the weighted sum
of values in fp32 (the published code rounds the probabilities to bf16
first); RoPE in fp32 from fp32 cos and sin (the published code uses bf16
tables); logits in fp32.

The KV cache holds, for each layer and position, the normed latent [R] and
the roped key [P] in the layout after the published code's permutation
(interleaved pairs to halves).

    python3 reference.py --layers 2 --dense-layers 1 --experts 8 --vocab 512 \\
        --set hidden=256 --device cpu --seed 1 --prompt 1,2,3 --tokens 8
"""

import argparse
import dataclasses
import json
import math
import mmap
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from weights_formula import BUFFERS, M32, buffer_key, random_params  # noqa: E402


@dataclasses.dataclass
class Config:
    """The model's shape (Dsv2Config's fields) and the rest of config.json."""
    vocab: int = 102400
    hidden: int = 2048
    layers: int = 27
    dense_layers: int = 1
    heads: int = 16
    kv_lora_rank: int = 512
    qk_nope: int = 128
    qk_rope: int = 64
    v_head: int = 128
    ffn: int = 10944
    experts: int = 64
    expert_ffn: int = 1408
    shared_ffn: int = 2 * 1408
    top_k: int = 6
    eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_factor: float = 40.0
    rope_original_max: int = 4096
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    mscale: float = 0.707
    mscale_all_dim: float = 0.707
    bos: int = 100000
    eos: int = 100001

    def check(self):
        for f in ("vocab", "hidden", "layers", "heads", "kv_lora_rank", "qk_nope", "qk_rope",
                  "v_head", "ffn", "experts", "expert_ffn", "shared_ffn", "top_k"):
            if getattr(self, f) <= 0:
                raise ValueError(f"config: {f} is {getattr(self, f)}, and must be positive")
        if not 0 <= self.dense_layers <= self.layers:
            raise ValueError(f"config: dense_layers is {self.dense_layers}, and must be 0 to "
                             f"layers ({self.layers})")
        if self.top_k > self.experts:
            raise ValueError(f"config: top_k ({self.top_k}) is more than experts ({self.experts})")
        if self.qk_rope % 2:
            raise ValueError(f"config: qk_rope ({self.qk_rope}) must be even")


def tensor_shapes(c):
    """Each buffer's shape, in weights.h's layout."""
    L, Lm, H, D = c.layers, c.layers - c.dense_layers, c.heads, c.hidden
    R, N, P, V = c.kv_lora_rank, c.qk_nope, c.qk_rope, c.v_head
    return {
        "embed": (c.vocab, D),
        "attn_norm": (L, D),
        "ffn_norm": (L, D),
        "kv_norm": (L, R),
        "final_norm": (D,),
        "lm_head": (c.vocab, D),
        "w_qkv": (L, H * (N + P) + R + P, D),
        "w_uk_t": (L, H, R, N),
        "w_uv": (L, H, V, R),
        "w_o": (L, D, H * V),
        "dense_gu": (c.dense_layers, 2 * c.ffn, D),
        "dense_down": (c.dense_layers, D, c.ffn),
        "router": (Lm, c.experts, D),
        "exp_gu": (Lm, c.experts, 2 * c.expert_ffn, D),
        "exp_down": (Lm, c.experts, D, c.expert_ffn),
        "sh_gu": (Lm, 2 * c.shared_ffn, D),
        "sh_down": (Lm, D, c.shared_ffn),
    }


# ---- the random weights (weights.h's formula, weights_formula.py) ----

def _mul32(x, c):
    """(x * c) mod 2^32 on int64 tensors of 32-bit values, without overflow."""
    lo, hi = x & 0xFFFF, x >> 16
    return (lo * c + (((hi * c) & 0xFFFF) << 16)) & M32


def _fmix32_t(x):
    x = x ^ (x >> 16)
    x = _mul32(x, 0x85EBCA6B)
    x = x ^ (x >> 13)
    x = _mul32(x, 0xC2B2AE35)
    return x ^ (x >> 16)


def random_elements(c, seed, name, index):
    """The bf16 values of buffer `name` at the int64 tensor `index`."""
    key = buffer_key(seed, BUFFERS.index(name))
    h = _fmix32_t(_fmix32_t((index & M32) ^ key) ^ (index >> 32))
    t = (h >> 8).to(torch.float32) * (2.0 ** -23) - 1.0  # exact in fp32
    scale, offset = random_params(c, name)
    x = torch.mul(t, torch.tensor(scale, dtype=torch.float32, device=index.device))
    x = torch.add(x, torch.tensor(offset, dtype=torch.float32, device=index.device))
    return x.to(torch.bfloat16)


def random_weights(c, seed, device="cpu", chunk=1 << 24):
    """Every buffer, bit for bit as dsv2_random_device makes them."""
    c.check()
    weights = {}
    for name, shape in tensor_shapes(c).items():
        n = math.prod(shape)
        flat = torch.empty(n, dtype=torch.bfloat16, device=device)
        for start in range(0, n, chunk):
            index = torch.arange(start, min(n, start + chunk), dtype=torch.int64, device=device)
            flat[start:start + index.numel()] = random_elements(c, seed, name, index)
        weights[name] = flat.view(shape)
    return weights


# ---- the published checkpoint ----

def published_tensors(c):
    """(name, shape, placer): placer(weights, tensor) puts the published tensor
    into the buffers."""
    H, D, R = c.heads, c.hidden, c.kv_lora_rank
    N, P, V = c.qk_nope, c.qk_rope, c.v_head
    out = []

    def rows(buf, index, start=0):
        def place(w, t):
            target = w[buf][index] if index is not None else w[buf]
            target[start:start + t.shape[0]].copy_(t)
        return place

    def kv_b(layer):
        def place(w, t):
            t = t.view(H, N + V, R)
            w["w_uk_t"][layer].copy_(t[:, :N, :].transpose(1, 2))
            w["w_uv"][layer].copy_(t[:, N:, :])
        return place

    out.append(("model.embed_tokens.weight", (c.vocab, D), rows("embed", None)))
    for l in range(c.layers):
        p = f"model.layers.{l}."
        out.append((p + "input_layernorm.weight", (D,), rows("attn_norm", l)))
        out.append((p + "self_attn.q_proj.weight", (H * (N + P), D), rows("w_qkv", l)))
        out.append((p + "self_attn.kv_a_proj_with_mqa.weight", (R + P, D),
                    rows("w_qkv", l, H * (N + P))))
        out.append((p + "self_attn.kv_a_layernorm.weight", (R,), rows("kv_norm", l)))
        out.append((p + "self_attn.kv_b_proj.weight", (H * (N + V), R), kv_b(l)))
        out.append((p + "self_attn.o_proj.weight", (D, H * V), rows("w_o", l)))
        out.append((p + "post_attention_layernorm.weight", (D,), rows("ffn_norm", l)))
        if l < c.dense_layers:
            out.append((p + "mlp.gate_proj.weight", (c.ffn, D), rows("dense_gu", l)))
            out.append((p + "mlp.up_proj.weight", (c.ffn, D), rows("dense_gu", l, c.ffn)))
            out.append((p + "mlp.down_proj.weight", (D, c.ffn), rows("dense_down", l)))
            continue
        m, F, S = l - c.dense_layers, c.expert_ffn, c.shared_ffn
        out.append((p + "mlp.gate.weight", (c.experts, D), rows("router", m)))
        for e in range(c.experts):
            q = f"{p}mlp.experts.{e}."
            out.append((q + "gate_proj.weight", (F, D), rows("exp_gu", (m, e))))
            out.append((q + "up_proj.weight", (F, D), rows("exp_gu", (m, e), F)))
            out.append((q + "down_proj.weight", (D, F), rows("exp_down", (m, e))))
        out.append((p + "mlp.shared_experts.gate_proj.weight", (S, D), rows("sh_gu", m)))
        out.append((p + "mlp.shared_experts.up_proj.weight", (S, D), rows("sh_gu", m, S)))
        out.append((p + "mlp.shared_experts.down_proj.weight", (D, S), rows("sh_down", m)))
    out.append(("model.norm.weight", (D,), rows("final_norm", None)))
    out.append(("lm_head.weight", (c.vocab, D), rows("lm_head", None)))
    return out


DTYPES = {"BF16": (torch.bfloat16, 2), "F16": (torch.float16, 2), "F32": (torch.float32, 4)}


class SafetensorsFile:
    """A safetensors file, mapped: its header's tensors by name."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            if size < 8:
                raise ValueError(f"{path}: truncated: {size} bytes, and a safetensors file "
                                 "starts with an 8-byte header length")
            f.seek(0)
            n = struct.unpack("<Q", f.read(8))[0]
            if n > size - 8:
                raise ValueError(f"{path}: truncated: the header length is {n} bytes, and only "
                                 f"{size - 8} follow it")
            try:
                header = json.loads(f.read(n).decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise ValueError(f"{path}: bad header: {e}") from None
            self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
        if not isinstance(header, dict):
            raise ValueError(f"{path}: bad header: not an object")
        header.pop("__metadata__", None)
        for name, info in header.items():
            ok = isinstance(info, dict) and isinstance(info.get("dtype"), str) and \
                isinstance(info.get("shape"), list) and \
                isinstance(info.get("data_offsets"), list) and len(info["data_offsets"]) == 2 \
                and all(isinstance(v, int) and v >= 0
                        for v in info["shape"] + info["data_offsets"])
            if not ok:
                raise ValueError(f"{path}: bad header: tensor {name} needs a dtype, a shape and "
                                 "two data_offsets")
        self.data_start, self.data_size = 8 + n, size - 8 - n
        self.tensors = header

    def tensor(self, name):
        info = self.tensors[name]
        begin, end = info["data_offsets"]
        if end > self.data_size:
            raise ValueError(f"{self.path}: tensor {name}: data_offsets [{begin}, {end}] go past "
                             f"the end of the data ({self.data_size} bytes): the file is truncated")
        dtype, size = DTYPES[info["dtype"]]
        count = math.prod(info["shape"])
        if end - begin != count * size:
            raise ValueError(f"{self.path}: tensor {name}: data_offsets [{begin}, {end}] hold "
                             f"{end - begin} bytes, and its dtype and shape need {count * size}")
        t = torch.frombuffer(self.map, dtype=dtype, count=count, offset=self.data_start + begin)
        return t.view(info["shape"])


def load_checkpoint(c, paths, device="cpu"):
    """The buffers from the published checkpoint's files (every tensor in
    exactly one file; BF16, or F32 or F16 rounded to bf16)."""
    c.check()
    files = [SafetensorsFile(p) for p in paths]
    where = {}
    for f in files:
        for name in f.tensors:
            if name in where:
                raise ValueError(f"{f.path}: tensor {name} is also in {where[name].path}: a "
                                 "tensor must be in one file")
            where[name] = f
    wanted = published_tensors(c)
    for name, shape, _ in wanted:
        if name not in where:
            raise ValueError(f"{paths[0]}{' and the other files' if len(paths) > 1 else ''}: "
                             f"missing tensor {name} (bf16 {list(shape)})")
        info = where[name].tensors[name]
        if info["dtype"] not in DTYPES:
            raise ValueError(f"{where[name].path}: tensor {name}: dtype {info['dtype']}, "
                             "expected BF16 (or F32 or F16)")
        if tuple(info["shape"]) != shape:
            raise ValueError(f"{where[name].path}: tensor {name}: shape {info['shape']}, "
                             f"expected {list(shape)}")
    weights = {name: torch.empty(shape, dtype=torch.bfloat16, device=device)
               for name, shape in tensor_shapes(c).items()}
    for name, _, place in wanted:
        place(weights, where[name].tensor(name).to(device=device, dtype=torch.bfloat16))
    return weights


# ---- the model ----

def yarn_get_mscale(scale, mscale):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_inv_freq(c):
    """The published YaRN rotary embedding's inverse frequencies (fp32)."""
    dim, base = c.qk_rope, c.rope_theta

    def correction_dim(rotations):
        return (dim * math.log(c.rope_original_max / (rotations * 2 * math.pi))) / \
            (2 * math.log(base))

    low = max(math.floor(correction_dim(c.beta_fast)), 0)
    high = min(math.ceil(correction_dim(c.beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    exponents = torch.arange(0, dim, 2, dtype=torch.float32) / dim
    freq_extra = 1.0 / (base ** exponents)
    freq_inter = 1.0 / (c.rope_factor * base ** exponents)
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    extra_mask = 1.0 - ramp
    return freq_inter * (1 - extra_mask) + freq_extra * extra_mask


def softmax_scale(c):
    m = yarn_get_mscale(c.rope_factor, c.mscale_all_dim)
    return (c.qk_nope + c.qk_rope) ** -0.5 * m * m


def rope_tables(c, max_pos, device):
    """cos and sin [max_pos][P] in fp32, times the published code's mscale
    ratio (1 for V2-Lite, whose mscale and mscale_all_dim are equal)."""
    t = torch.arange(max_pos, dtype=torch.float32)
    freqs = torch.outer(t, yarn_inv_freq(c))
    emb = torch.cat((freqs, freqs), dim=-1)
    ratio = yarn_get_mscale(c.rope_factor, c.mscale) / yarn_get_mscale(c.rope_factor,
                                                                       c.mscale_all_dim)
    return (emb.cos() * ratio).to(device), (emb.sin() * ratio).to(device)


def apply_rope(x, cos, sin):
    """The published apply_rotary_pos_emb on x [..., P] (cos, sin broadcast):
    interleaved pairs to halves, then rotate_half; fp32 in, fp32 out."""
    P = x.shape[-1]
    x = x.reshape(*x.shape[:-1], P // 2, 2).transpose(-1, -2).reshape(*x.shape[:-1], P)
    rotated = torch.cat((-x[..., P // 2:], x[..., :P // 2]), dim=-1)
    return x * cos + rotated * sin


def rms_norm(x, weight, eps):
    """The published DeepseekV2RMSNorm on bf16 x."""
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(torch.bfloat16)


def linear(x, w):
    """x [..., k] @ w[n][k]^T: bf16 in, fp32 accumulation, bf16 out."""
    return (x.float() @ w.float().t()).to(torch.bfloat16)


def swiglu(x, gu, down):
    """The published DeepseekV2MLP with gate and up stacked in gu [2F][D]."""
    F = gu.shape[0] // 2
    gate, up = linear(x, gu[:F]), linear(x, gu[F:])
    return linear(torch.nn.functional.silu(gate.float()).to(torch.bfloat16) * up, down)


def mla_attention(q_nope, q_pe, latent, k_pe, w_uk_t, w_uv, scale, absorbed=False,
                  dtype=torch.bfloat16):
    """One sequence's attention over its T cached positions.

    q_nope [H][N], q_pe [H][P] (roped), latent [T][R] (normed), k_pe [T][P]
    (roped), w_uk_t [H][R][N], w_uv [H][V][R]; returns [H][V].  The plain
    form makes each head's keys and values from the latent (the published
    code's kv_b_proj); the absorbed form moves W_uk onto the query and W_uv
    after the weighted sum.  dtype is what the keys, values and output are
    rounded to (None: not rounded; with float64 inputs the two forms then
    agree to rounding)."""
    work = torch.float64 if latent.dtype == torch.float64 else torch.float32

    def rounded(t):
        return t.to(dtype).to(work) if dtype is not None else t

    q_nope, q_pe = q_nope.to(work), q_pe.to(work)
    latent, k_pe = latent.to(work), k_pe.to(work)
    w_uk_t, w_uv = w_uk_t.to(work), w_uv.to(work)
    rope_scores = q_pe @ k_pe.t()  # [H][T]
    if absorbed:
        q_latent = torch.einsum("hn,hrn->hr", q_nope, w_uk_t)
        scores = (q_latent @ latent.t() + rope_scores) * scale
        p = torch.softmax(scores, dim=-1)
        out = torch.einsum("hvr,hr->hv", w_uv, p @ latent)
    else:
        keys = rounded(torch.einsum("tr,hrn->htn", latent, w_uk_t))
        values = rounded(torch.einsum("tr,hvr->htv", latent, w_uv))
        scores = (torch.einsum("hn,htn->ht", q_nope, keys) + rope_scores) * scale
        p = torch.softmax(scores, dim=-1)
        out = torch.einsum("ht,htv->hv", p, values)
    return out.to(dtype) if dtype is not None else out


def route(x, router, top_k):
    """The published MoEGate (greedy top-k of a softmax, no renormalisation,
    routed_scaling_factor 1): expert ids [B][k] and fp32 weights [B][k]."""
    scores = torch.softmax(x.float() @ router.float().t(), dim=-1)
    weight, ids = torch.topk(scores, top_k, dim=-1)
    return ids, weight


def moe(x, router, exp_gu, exp_down, sh_gu, sh_down, top_k):
    """The published DeepseekV2MoE on x [B][D]: each token's experts' outputs
    (bf16) weighted in fp32, summed, rounded to bf16, plus the shared experts."""
    ids, weight = route(x, router, top_k)
    routed = torch.zeros(x.shape[0], x.shape[1], dtype=torch.float32, device=x.device)
    for b in range(x.shape[0]):
        for j in range(top_k):
            e = int(ids[b, j])
            y = swiglu(x[b:b + 1], exp_gu[e], exp_down[e])
            routed[b] += y[0].float() * weight[b, j]
    return routed.to(torch.bfloat16) + swiglu(x, sh_gu, sh_down)


class Reference:
    """The model on `weights` (the buffers) with a KV cache of max_pos
    positions for each of a batch's sequences."""

    def __init__(self, weights, config, max_pos, absorbed=False):
        config.check()
        self.w, self.c, self.max_pos, self.absorbed = weights, config, max_pos, absorbed
        self.device = weights["embed"].device
        self.cos, self.sin = rope_tables(config, max_pos, self.device)
        self.scale = softmax_scale(config)
        self.cache = None

    def reset(self):
        """Forgets every sequence."""
        self.cache = None

    def step(self, tokens, positions):
        """tokens and positions: LongTensor [B], sequence b's token at its
        position (the cache must hold its earlier positions); fp32 logits [B][vocab]."""
        c, w = self.c, self.w
        H, N, P, R = c.heads, c.qk_nope, c.qk_rope, c.kv_lora_rank
        B = tokens.shape[0]
        tokens, positions = tokens.to(self.device), positions.to(self.device)
        if int(positions.max()) >= self.max_pos or int(positions.min()) < 0:
            raise ValueError(f"positions {positions.tolist()} outside 0..{self.max_pos - 1}")
        if int(tokens.max()) >= c.vocab or int(tokens.min()) < 0:
            raise ValueError(f"tokens {tokens.tolist()} outside 0..{c.vocab - 1}")
        if self.cache is None or self.cache.shape[1] != B:
            self.cache = torch.zeros(c.layers, B, self.max_pos, R + P, dtype=torch.bfloat16,
                                     device=self.device)
        cos, sin = self.cos[positions], self.sin[positions]  # [B][P]
        x = w["embed"][tokens]
        for l in range(c.layers):
            h = rms_norm(x, w["attn_norm"][l], c.eps)
            qkv = linear(h, w["w_qkv"][l])
            q = qkv[:, :H * (N + P)].view(B, H, N + P)
            q_nope = q[:, :, :N]
            q_pe = apply_rope(q[:, :, N:].float(), cos[:, None], sin[:, None]).to(torch.bfloat16)
            latent = rms_norm(qkv[:, H * (N + P):H * (N + P) + R], w["kv_norm"][l], c.eps)
            k_pe = apply_rope(qkv[:, H * (N + P) + R:].float(), cos, sin).to(torch.bfloat16)
            rows = torch.arange(B, device=self.device)
            self.cache[l, rows, positions] = torch.cat((latent, k_pe), dim=-1)
            out = []
            for b in range(B):
                seen = self.cache[l, b, :int(positions[b]) + 1]
                out.append(mla_attention(q_nope[b], q_pe[b], seen[:, :R], seen[:, R:],
                                         w["w_uk_t"][l], w["w_uv"][l], self.scale,
                                         self.absorbed))
            x = x + linear(torch.stack(out).view(B, -1), w["w_o"][l])
            h = rms_norm(x, w["ffn_norm"][l], c.eps)
            if l < c.dense_layers:
                x = x + swiglu(h, w["dense_gu"][l], w["dense_down"][l])
            else:
                m = l - c.dense_layers
                x = x + moe(h, w["router"][m], w["exp_gu"][m], w["exp_down"][m], w["sh_gu"][m],
                            w["sh_down"][m], c.top_k)
        x = rms_norm(x, w["final_norm"], c.eps)
        return x.float() @ w["lm_head"].float().t()

    def generate(self, prompt, n):
        """Greedy: the prompt (a list of token ids) one position at a time,
        then up to n tokens, stopping after the end-of-sequence id; a list."""
        if not prompt:
            raise ValueError("an empty prompt")
        self.reset()
        out = []
        logits = None
        for pos, t in enumerate(prompt):
            logits = self.step(torch.tensor([t]), torch.tensor([pos]))
        pos = len(prompt)
        while len(out) < n:
            t = int(torch.argmax(logits[0]))
            out.append(t)
            if t == self.c.eos or len(out) == n:
                break
            logits = self.step(torch.tensor([t]), torch.tensor([pos]))
            pos += 1
        return out


def main(argv=None):
    ap = argparse.ArgumentParser(description="DeepSeek-V2-Lite's greedy decode in PyTorch")
    ap.add_argument("--layers", type=int, default=27)
    ap.add_argument("--dense-layers", type=int, default=1)
    ap.add_argument("--experts", type=int, default=64)
    ap.add_argument("--top-k", type=int, help="routed experts a token (default: 6, or fewer "
                    "when there are fewer experts)")
    ap.add_argument("--vocab", type=int, default=102400)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seed", type=int, default=1, help="random weights' seed")
    ap.add_argument("--checkpoint", nargs="+", metavar="FILE",
                    help="safetensors files of the published checkpoint, instead of a seed")
    ap.add_argument("--prompt", default="100000", help="token ids, comma-separated")
    ap.add_argument("--tokens", type=int, default=32, help="tokens to generate")
    ap.add_argument("--max-pos", type=int, default=4096)
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="any other Config field, e.g. hidden=256 (repeatable)")
    a = ap.parse_args(argv)
    c = Config(layers=a.layers, dense_layers=a.dense_layers, experts=a.experts, vocab=a.vocab,
               top_k=a.top_k if a.top_k else min(6, a.experts))
    try:
        fields = {f.name: f.type for f in dataclasses.fields(Config)}
        for setting in a.set:
            name, _, value = setting.partition("=")
            if name not in fields or not value:
                raise ValueError(f"--set {setting}: expected FIELD=VALUE, FIELD one of "
                                 f"{', '.join(fields)}")
            setattr(c, name, (float if fields[name] in (float, "float") else int)(value))
        prompt = [int(t) for t in a.prompt.split(",")]
        torch.backends.cuda.matmul.allow_tf32 = False
        w = load_checkpoint(c, a.checkpoint, a.device) if a.checkpoint else \
            random_weights(c, a.seed, a.device)
        if len(prompt) + a.tokens > a.max_pos:
            raise ValueError(f"{len(prompt)} prompt tokens and {a.tokens} more need more than "
                             f"--max-pos {a.max_pos} positions")
        tokens = Reference(w, c, a.max_pos).generate(prompt, a.tokens)
    except (ValueError, OSError) as e:
        print(f"reference.py: error: {e}", file=sys.stderr)
        return 1
    print(" ".join(str(t) for t in tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main())
