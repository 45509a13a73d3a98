"""weights_formula.py: the random weights' formula (weights.h) in plain
Python, without torch: the definition that dsv2_random_value (C),
dsv2_random_device (CUDA) and reference.random_weights (torch) are checked
against."""

import math
import struct

# ORDER BUFFERS: weights.h's DSV2_BUFFERS; a buffer's number is its place here.
BUFFERS = ["embed", "attn_norm", "ffn_norm", "kv_norm", "final_norm", "lm_head",
           "w_qkv", "w_uk_t", "w_uv", "w_o", "dense_gu", "dense_down",
           "router", "exp_gu", "exp_down", "sh_gu", "sh_down"]

M32 = 0xFFFFFFFF


def fmix32(x):
    """MurmurHash3's finaliser."""
    x ^= x >> 16
    x = (x * 0x85EBCA6B) & M32
    x ^= x >> 13
    x = (x * 0xC2B2AE35) & M32
    x ^= x >> 16
    return x


def buffer_key(seed, buffer):
    """The key of buffer number `buffer` under a seed."""
    return fmix32((seed & M32) ^ fmix32((0x9E3779B9 * (buffer + 1)) & M32))


def random_params(c, name):
    """(scale, offset) of a buffer as doubles, as dsv2_random_params computes
    them before rounding to fp32; c has Dsv2Config's fields."""
    if name in ("attn_norm", "ffn_norm", "kv_norm", "final_norm"):
        return 0.1, 1.0
    k, gain = {
        "embed": (1, 1.0),
        "lm_head": (c.hidden, 1.0), "w_qkv": (c.hidden, 1.0), "dense_gu": (c.hidden, 1.0),
        "router": (c.hidden, 1.0), "exp_gu": (c.hidden, 1.0), "sh_gu": (c.hidden, 1.0),
        "w_uk_t": (c.kv_lora_rank, 1.0), "w_uv": (c.kv_lora_rank, 1.0),
        "w_o": (c.heads * c.v_head, 0.5), "dense_down": (c.ffn, 0.5),
        "exp_down": (c.expert_ffn, 0.5), "sh_down": (c.shared_ffn, 0.5),
    }[name]
    return gain * math.sqrt(3.0 / k), 0.0


def f32(x):
    """x rounded to fp32, to nearest even."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bf16_bits(x):
    """The bf16 bits of fp32 value x, rounded to nearest even."""
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def random_value(seed, buffer, i, scale, offset):
    """Element i of buffer number `buffer`: its bf16 bits."""
    h = fmix32(fmix32(buffer_key(seed, buffer) ^ (i & M32)) ^ (i >> 32))
    t = (h >> 8) * 2.0 ** -23 - 1.0  # exact in fp32
    # A product or sum of two fp32 values, done in double and rounded once to
    # fp32, is the fp32 operation's result.
    return bf16_bits(f32(f32(t * f32(scale)) + f32(offset)))
