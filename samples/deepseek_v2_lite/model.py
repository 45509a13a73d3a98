#!/usr/bin/env python3
"""DeepSeek-V2-Lite's decode from Python: cgc.build compiles
deepseek_v2_lite.cgraph against the installed kernel library (cgc::kernels),
and the graph runs over PyTorch tensors: the weights (reference.py's
buffers: random from a seed, or a checkpoint) and the state of the batch.

    cmake --install build --prefix PREFIX
    CGC_HOME=PREFIX PYTHONPATH=python python3 samples/deepseek_v2_lite/model.py \\
        [--layers 27 --experts 64 --vocab 102400] [--batch 1] [--prompt 100000,2991]
        [--tokens 32] [--seed 1 | --checkpoint FILE ...]

Model(weights, config, batch) gives step(tokens, positions) -> logits (one
launch, a token for each sequence) and generate(n) -> the next n tokens of
each sequence (one launch for all of them).  Exit status 77 without
PyTorch or a GPU.
"""
import argparse
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CGRAPH = os.path.join(HERE, "deepseek_v2_lite.cgraph")
# The .cgraph's names for reference.py's buffers, where they differ.
GRAPH_NAME = {"w_uk_t": "w_ukt"}
MAXB = 8  # the sequences the graph's KV cache holds


def kernels_paths(prefix):
    """The kernel library and the folder of its declarations (llm.cgraph) in
    an install prefix."""
    lib = os.path.join(prefix, "lib", "libcgc_kernels.a")
    inc = os.path.join(prefix, "include", "cgc", "kernels")
    for p in (lib, os.path.join(inc, "llm.cgraph")):
        if not os.path.exists(p):
            raise FileNotFoundError("%s is missing: install cgc (cmake --install) to the prefix "
                                    "that CGC_HOME names" % p)
    return lib, inc


def build(config, maxpos, maxgen, arch=None, verbose=False):
    """The library of the graph at this configuration (cgc.build caches it)."""
    import cgc
    prefix = os.environ.get("CGC_HOME")
    if not prefix:
        raise RuntimeError("set CGC_HOME to cgc's install prefix (it has the kernel library)")
    lib, inc = kernels_paths(prefix)
    defines = dict(LAYERS=config.layers, DENSE=config.dense_layers, EXPERTS=config.experts,
                   TOPK=config.top_k, VOCAB=config.vocab, MAXPOS=maxpos, MAXGEN=maxgen)
    return cgc.build(CGRAPH, defines=defines, include_dirs=[inc], link_flags=[lib], arch=arch,
                     verbose=verbose)


class Model:
    """The graph's variant for `batch` sequences over `weights` (a dict of
    reference.py's buffers on the GPU)."""

    def __init__(self, module, weights, config, batch, maxpos, maxgen):
        import torch
        from reference import yarn_inv_freq
        self.torch, self.c, self.batch, self.maxgen = torch, config, batch, maxgen
        dev = weights["embed"].device
        # The graph's u32 buffers: int32 tensors here (torch does little
        # with uint32 ones), handed to the graph as uint32 views.
        self.tok = torch.zeros(batch, dtype=torch.int32, device=dev)
        self.pos = torch.zeros(batch, dtype=torch.int32, device=dev)
        self.cache = torch.zeros(config.layers, MAXB, maxpos, config.kv_lora_rank + config.qk_rope,
                                 dtype=torch.bfloat16, device=dev)
        self.logits = torch.zeros(batch, config.vocab, dtype=torch.float32, device=dev)
        self.made = torch.zeros(batch, maxgen, dtype=torch.int32, device=dev)
        inv = yarn_inv_freq(config)
        self.inv_freq = (inv if isinstance(inv, torch.Tensor) else torch.tensor(inv)).to(
            device=dev, dtype=torch.float32).contiguous()
        externs = {GRAPH_NAME.get(k, k): v for k, v in weights.items()}
        u32 = torch.uint32
        externs.update(tok=self.tok.view(u32), pos=self.pos.view(u32), cache=self.cache,
                       inv_freq=self.inv_freq, logits=self.logits, made=self.made.view(u32))
        self.graph = getattr(module, "decode_%d" % batch)(**externs)

    def step(self, tokens, positions):
        """One token for each sequence at its position: the fp32 logits
        [batch][vocab] (a view of the graph's buffer, valid until the next launch)."""
        self.tok.copy_(self.torch.as_tensor(tokens, dtype=self.torch.int32))
        self.pos.copy_(self.torch.as_tensor(positions, dtype=self.torch.int32))
        self.graph.limit = 1
        self.graph.launch()
        return self.logits

    def next_tokens(self):
        """Each sequence's greedy next token after the last launch."""
        return self.tok.tolist()

    def generate(self, n, eos=None):
        """The next n tokens of each sequence, made on the device in one
        launch from the last step's tokens and positions: [batch][n]."""
        if not 1 <= n <= self.maxgen:
            raise ValueError("n must be 1 to %d (MAXGEN)" % self.maxgen)
        self.graph.eos = self.c.vocab if eos is None else eos
        self.graph.limit = n
        self.graph.launch()
        return self.made[:, :n].tolist()

    def close(self):
        self.graph.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=27)
    ap.add_argument("--experts", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=102400)
    ap.add_argument("--batch", type=int, default=1, choices=(1, 2, 4, 8))
    ap.add_argument("--prompt", default="100000,2991,457,245,4863,13,340,10,17")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--checkpoint", nargs="+")
    ap.add_argument("--maxpos", type=int, default=512)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("model.py: needs PyTorch, which is not installed here")
        return 77
    if not torch.cuda.is_available():
        print("model.py: needs a GPU, and PyTorch sees none")
        return 77
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from reference import Config, load_checkpoint, random_weights
    c = Config(layers=args.layers, experts=args.experts, vocab=args.vocab,
               top_k=min(6, args.experts))
    w = load_checkpoint(c, args.checkpoint, "cuda") if args.checkpoint else \
        random_weights(c, args.seed, "cuda")
    m = build(c, args.maxpos, args.tokens)
    model = Model(m, w, c, args.batch, args.maxpos, args.tokens)
    prompt = [int(t) % c.vocab for t in args.prompt.split(",")]
    for i, t in enumerate(prompt):
        model.step([(t + b) % c.vocab for b in range(args.batch)], [i] * args.batch)
    first = model.next_tokens()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    rest = model.generate(args.tokens - 1) if args.tokens > 1 else [[] for _ in first]
    e1.record()
    torch.cuda.synchronize()
    for b in range(args.batch):
        print("sequence %d: %s" % (b, " ".join(str(t) for t in [first[b]] + rest[b])))
    if args.tokens > 1:
        us = e0.elapsed_time(e1) * 1e3 / (args.tokens - 1)
        print("generation: %.1f us a step, %.1f tokens/s" % (us, 1e6 * args.batch / us))
    model.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
