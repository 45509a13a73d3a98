#!/usr/bin/env python3
"""test_reference.py: reference.py checked against the C weights and against
itself, on the CPU at small dimensions.

    test_reference.py --formula TEST_WEIGHTS   the random weights' formula in
        plain Python (weights_formula.py) against the C one, sampled at the
        real shape (indices past 2^32 included) and the small one; no torch
    test_reference.py TEST_WEIGHTS             reference.py: exits 77
        (skipped) without torch

TEST_WEIGHTS is the test_dsv2_weights program (test_weights.c), whose
--sample prints C's values and --write writes a checkpoint."""

import math
import os
import subprocess
import sys
import tempfile
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import weights_formula  # noqa: E402

# test_weights.c's small model
SMALL = dict(vocab=64, hidden=32, layers=2, dense_layers=1, heads=2, kv_lora_rank=16, qk_nope=8,
             qk_rope=4, v_head=6, ffn=48, experts=4, expert_ffn=16, shared_ffn=32)
LITE = dict(vocab=102400, hidden=2048, layers=27, dense_layers=1, heads=16, kv_lora_rank=512,
            qk_nope=128, qk_rope=64, v_head=128, ffn=10944, experts=64, expert_ffn=1408,
            shared_ffn=2816)

failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL: {message}", file=sys.stderr)


def c_samples(program):
    """test_weights --sample: (config name, buffer, index, bits) a line."""
    out = subprocess.run([program, "--sample"], check=True, capture_output=True, text=True).stdout
    rows = [line.split() for line in out.splitlines()]
    return [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows]


def test_formula(program):
    configs = {"lite": SimpleNamespace(**LITE), "small": SimpleNamespace(**SMALL)}
    rows = c_samples(program)
    check(len(rows) == 2 * 5 * len(weights_formula.BUFFERS), f"{len(rows)} samples")
    check(any(i >= 1 << 32 for _, _, i, _ in rows), "no sample past 2^32")
    for config, b, i, bits in rows:
        scale, offset = weights_formula.random_params(configs[config],
                                                      weights_formula.BUFFERS[b])
        got = weights_formula.random_value(1234, b, i, scale, offset)
        check(got == bits, f"{config} {weights_formula.BUFFERS[b]}[{i}]: Python 0x{got:04x}, "
                           f"C 0x{bits:04x}")


def test_torch(program):
    import torch

    import reference as ref

    torch.manual_seed(0)
    small = ref.Config(**SMALL, top_k=2)
    lite = ref.Config()

    # The torch formula against C's samples, and every element of the small
    # model's buffers against the plain Python one.
    for config, b, i, bits in c_samples(program):
        c = lite if config == "lite" else small
        got = ref.random_elements(c, 1234, ref.BUFFERS[b], torch.tensor([i]))
        got = int(got.view(torch.int16).item()) & 0xFFFF
        check(got == bits, f"torch {config} {ref.BUFFERS[b]}[{i}]: 0x{got:04x}, C 0x{bits:04x}")
    w = ref.random_weights(small, 77, chunk=1000)
    for name, t in w.items():
        check(tuple(t.shape) == ref.tensor_shapes(small)[name], f"{name}: shape {t.shape}")
        scale, offset = weights_formula.random_params(small, name)
        flat = t.reshape(-1).view(torch.int16).tolist()
        b = ref.BUFFERS.index(name)
        bad = [j for j in range(len(flat))
               if flat[j] & 0xFFFF != weights_formula.random_value(77, b, j, scale, offset)]
        check(not bad, f"{name}: {len(bad)} elements differ from the formula")
    if torch.cuda.is_available():
        on_gpu = ref.random_weights(small, 77, "cuda")
        for name in w:
            check(torch.equal(on_gpu[name].cpu().view(torch.int16), w[name].view(torch.int16)),
                  f"{name}: made on the GPU, differs from the CPU's")
    for name in ("attn_norm", "kv_norm"):
        check(abs(float(w[name].float().mean()) - 1) < 0.05, f"{name}'s mean is not near 1")
    std = float(w["w_qkv"].float().std()) * math.sqrt(small.hidden)
    check(0.8 < std < 1.2, f"w_qkv's std times sqrt(D) is {std}")

    # The C writer's checkpoint, loaded by Python, is the same seed's weights
    # (so the two loaders and the two layouts agree); and a bad one refused.
    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a.safetensors"), os.path.join(d, "b.safetensors")
        subprocess.run([program, "--write", a, b, "31"], check=True)
        loaded = ref.load_checkpoint(small, [a, b])
        want = ref.random_weights(small, 31)
        for name in want:
            check(torch.equal(loaded[name].view(torch.int16), want[name].view(torch.int16)),
                  f"load_checkpoint: {name} differs from random_weights")
        for paths, message in (([a], "missing tensor"), ([a, b, a], "a tensor must be in one")):
            try:
                ref.load_checkpoint(small, paths)
                check(False, f"{paths}: loaded")
            except ValueError as e:
                check(message in str(e), f"{paths}: {e}")
        other = ref.Config(**dict(SMALL, hidden=16), top_k=2)
        try:
            ref.load_checkpoint(other, [a, b])
            check(False, "a wrong hidden size: loaded")
        except ValueError as e:
            check("expected [64, 16]" in str(e), f"a wrong hidden size: {e}")

    # YaRN: the fast dimensions keep their frequency, the slow ones are
    # divided by the factor, and the correction range is V2-Lite's [10, 23].
    inv = ref.yarn_inv_freq(lite)
    base = lite.rope_theta
    check(abs(float(inv[0]) - 1.0) < 1e-7, f"inv_freq[0] = {float(inv[0])}")
    check(abs(float(inv[9]) - base ** (-18 / 64)) < 1e-6 * base ** (-18 / 64), "inv_freq[9]")
    slow = base ** (-62 / 64) / 40
    check(abs(float(inv[31]) - slow) < 1e-6 * slow, f"inv_freq[31] = {float(inv[31])}")
    for i in (10, 16, 23):  # the ramp runs from dimension 10 (0) to 23 (1)
        extra, ramp = base ** (-2 * i / 64), min(max((i - 10) / 13, 0), 1)
        want = extra / 40 * ramp + extra * (1 - ramp)
        check(abs(float(inv[i]) - want) < 1e-5 * want, f"inv_freq[{i}] = {float(inv[i])}, "
                                                        f"expected {want}")
    m = 0.1 * 0.707 * math.log(40) + 1
    check(abs(ref.softmax_scale(lite) - m * m / math.sqrt(192)) < 1e-12, "softmax scale")

    # RoPE: the published permutation and rotate_half are a rotation of each
    # interleaved pair (x[2i], x[2i+1]) by position * inv_freq[i], written
    # to halves (i and i + P/2).
    cos, sin = ref.rope_tables(lite, 100, "cpu")
    x = torch.randn(3, 64)
    pos = torch.tensor([0, 7, 99])
    got = ref.apply_rope(x, cos[pos], sin[pos])
    angle = pos[:, None].float() * inv[None, :]
    a_, b_ = x[:, 0::2], x[:, 1::2]
    want = torch.cat((a_ * angle.cos() - b_ * angle.sin(), a_ * angle.sin() + b_ * angle.cos()), -1)
    check(torch.allclose(got, want, atol=1e-4), "RoPE is not a rotation of interleaved pairs")
    check(torch.equal(ref.apply_rope(x, cos[0], sin[0]),
                      torch.cat((x[:, 0::2], x[:, 1::2]), -1)), "RoPE at 0 is not the permutation")

    # MLA: the plain form (keys and values from the latent) and the absorbed
    # form agree in float64, and within bf16's rounding when rounded.
    H, N, P, R, V, T = 4, 16, 8, 32, 12, 9
    q_nope, q_pe = torch.randn(H, N, dtype=torch.float64), torch.randn(H, P, dtype=torch.float64)
    latent, k_pe = torch.randn(T, R, dtype=torch.float64), torch.randn(T, P, dtype=torch.float64)
    w_uk_t = torch.randn(H, R, N, dtype=torch.float64) / math.sqrt(R)
    w_uv = torch.randn(H, V, R, dtype=torch.float64) / math.sqrt(R)
    plain = ref.mla_attention(q_nope, q_pe, latent, k_pe, w_uk_t, w_uv, 0.1, False, None)
    absorbed = ref.mla_attention(q_nope, q_pe, latent, k_pe, w_uk_t, w_uv, 0.1, True, None)
    check(torch.allclose(plain, absorbed, rtol=1e-10, atol=1e-12), "MLA: the two forms differ")
    # ... and both against the published form written out: per head, keys
    # [k_nope | k_pe] and queries [q_nope | q_pe] of 192-style concatenation.
    kv_b = torch.cat((w_uk_t.transpose(1, 2), w_uv), dim=1).reshape(H * (N + V), R)
    kv = (latent @ kv_b.t()).view(T, H, N + V).transpose(0, 1)
    keys = torch.cat((kv[:, :, :N], k_pe[None].expand(H, T, P)), -1)
    query = torch.cat((q_nope, q_pe), -1)
    p = torch.softmax(torch.einsum("hd,htd->ht", query, keys) * 0.1, -1)
    published = torch.einsum("ht,htv->hv", p, kv[:, :, N:])
    check(torch.allclose(plain, published, rtol=1e-10, atol=1e-12), "MLA: not the published form")
    args = [t.to(torch.bfloat16) for t in (q_nope, q_pe, latent, k_pe, w_uk_t, w_uv)]
    plain16 = ref.mla_attention(*args, 0.1, False).float()
    absorbed16 = ref.mla_attention(*args, 0.1, True).float()
    check(torch.allclose(plain16, absorbed16, rtol=3e-2, atol=3e-2), "MLA in bf16: the forms differ")

    # MoE: top-k routing without renormalisation, against every expert
    # computed and the unchosen ones' weights zeroed, in float64.
    D, E, F, K = 16, 6, 8, 2
    x = torch.randn(3, D).to(torch.bfloat16)
    router = (torch.randn(E, D) / 4).to(torch.bfloat16)
    gu = (torch.randn(E, 2 * F, D) / 4).to(torch.bfloat16)
    down = (torch.randn(E, D, F) / 3).to(torch.bfloat16)
    sgu, sdown = (torch.randn(2 * F, D) / 4).to(torch.bfloat16), (torch.randn(D, F) / 3).to(
        torch.bfloat16)
    got = ref.moe(x, router, gu, down, sgu, sdown, K).double()
    xd = x.double()

    def mlp(g, d):
        return (torch.nn.functional.silu(xd @ g[:F].double().t()) * (xd @ g[F:].double().t())) @ \
            d.double().t()

    probs = torch.softmax(xd @ router.double().t(), -1)
    kth = probs.topk(K, -1).values[:, -1:]
    gates = torch.where(probs >= kth, probs, torch.zeros_like(probs))
    check(float(gates.sum(-1).max()) < 1, "the top-k weights are renormalised")
    want = sum(gates[:, e:e + 1] * mlp(gu[e], down[e]) for e in range(E)) + mlp(sgu, sdown)
    check(torch.allclose(got, want, rtol=5e-2, atol=2e-2), f"MoE: off by "
                                                            f"{float((got - want).abs().max())}")

    # The whole model at small dimensions.
    c = ref.Config(vocab=256, hidden=64, layers=3, dense_layers=1, heads=4, kv_lora_rank=32,
                   qk_nope=16, qk_rope=8, v_head=16, ffn=96, experts=8, expert_ffn=32,
                   shared_ffn=64, top_k=3)
    w = ref.random_weights(c, 5)
    model, absorbed_model = ref.Reference(w, c, 32), ref.Reference(w, c, 32, absorbed=True)
    prompt = [3, 141, 59, 26, 5]
    for pos, t in enumerate(prompt):
        logits = model.step(torch.tensor([t]), torch.tensor([pos]))
        logits2 = absorbed_model.step(torch.tensor([t]), torch.tensor([pos]))
        check(bool(torch.isfinite(logits).all()), "logits not finite")
        check(torch.allclose(logits, logits2, rtol=5e-2, atol=5e-2),
              f"position {pos}: the absorbed model's logits differ by "
              f"{float((logits - logits2).abs().max())}")
    check(tuple(logits.shape) == (1, 256), f"logits' shape {tuple(logits.shape)}")
    # A batch of two sequences at their own positions is each sequence alone.
    other = [7, 7, 200]
    alone = ref.Reference(w, c, 32)
    for pos, t in enumerate(other):
        solo = alone.step(torch.tensor([t]), torch.tensor([pos]))
    batch = ref.Reference(w, c, 32)
    for pos in range(len(prompt)):
        a_tok = prompt[pos]
        b_tok, b_pos = (other[pos], pos) if pos < len(other) else (other[-1], len(other) - 1)
        out = batch.step(torch.tensor([a_tok, b_tok]), torch.tensor([pos, b_pos]))
        if pos == len(other) - 1:
            check(torch.allclose(out[1], solo[0], rtol=1e-3, atol=1e-3),
                  "batch row 1 differs from the sequence alone")
    check(torch.allclose(out[0], logits[0], rtol=1e-3, atol=1e-3),
          "batch row 0 differs from the sequence alone")
    # generate: greedy, the same as stepping by hand.
    tokens = model.generate(prompt, 6)
    check(len(tokens) == 6 and all(0 <= t < 256 for t in tokens), f"generate: {tokens}")
    model.reset()
    for pos, t in enumerate(prompt):
        logits = model.step(torch.tensor([t]), torch.tensor([pos]))
    by_hand = []
    for pos in range(len(prompt), len(prompt) + 6):
        by_hand.append(int(logits[0].argmax()))
        logits = model.step(torch.tensor([by_hand[-1]]), torch.tensor([pos]))
    check(tokens == by_hand, f"generate {tokens}, by hand {by_hand}")
    eos = ref.Config(**dict(c.__dict__, eos=tokens[1]))
    check(ref.Reference(w, eos, 32).generate(prompt, 6) == tokens[:2], "generate past the eos")

    # 27 layers: the residual stream's scale stays moderate and the router's
    # softmax is not one-hot.
    deep = ref.Config(vocab=128, hidden=64, layers=27, dense_layers=1, heads=4, kv_lora_rank=32,
                      qk_nope=16, qk_rope=8, v_head=16, ffn=96, experts=8, expert_ffn=32,
                      shared_ffn=64, top_k=3)
    dw = ref.random_weights(deep, 3)
    logits = ref.Reference(dw, deep, 4).step(torch.tensor([1]), torch.tensor([0]))
    std = float(logits.std())
    check(bool(torch.isfinite(logits).all()) and 0.3 < std < 10, f"27 layers: logits' std {std}")
    x = ref.rms_norm(dw["embed"][:4], dw["ffn_norm"][5], deep.eps)
    probs = torch.softmax(x.float() @ dw["router"][4].float().t(), -1)
    check(float(probs.max()) < 0.9, f"the router is one-hot: {float(probs.max())}")

    # The command line.
    code = ref.main(["--layers", "2", "--dense-layers", "1", "--experts", "4", "--vocab", "300",
                     "--device", "cpu", "--seed", "2", "--prompt", "1,2", "--tokens", "3",
                     "--set", "hidden=64", "--set", "ffn=128", "--set", "expert_ffn=32",
                     "--set", "shared_ffn=64", "--set", "heads=2", "--set", "kv_lora_rank=32"])
    check(code == 0, f"reference.py's command line: exit {code}")
    check(ref.main(["--set", "hidden"]) == 1, "reference.py --set hidden: not refused")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--formula":
        test_formula(sys.argv[2])
    elif len(sys.argv) == 2:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("test_reference.py: skipped: PyTorch is not installed")
            return 77
        test_torch(sys.argv[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    if failures:
        print(f"test_reference.py: {failures} failures", file=sys.stderr)
        return 1
    print("test_reference.py: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
