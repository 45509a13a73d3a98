#!/usr/bin/env python3
"""Compiles the sample's Triton kernel, silu_mul, to a cubin with Triton's
public API, and writes silu_mul_launch.cgraph: the launch configuration
Triton chose (threads a block from num_warps, shared memory), which
triton.cgraph includes.

  python3 compile_triton.py --arch 90 --out DIR

Triton 3.x compiles a kernel's parameters without its constexprs, and adds
two of its own at the end: the global scratch and the profile scratch
pointers.  triton.cgraph declares them (as u64 values, passed 0: a null
pointer, which is what Triton passes when the kernel needs no scratch).
This script checks every one of those assumptions against what Triton
produced and fails, loudly, when one does not hold, rather than write a
module whose declaration would not match.
"""
import argparse
import os
import re
import sys

BLOCK = 1024    # elements a program (the kernel's constexpr BLOCK)
NUM_WARPS = 4
NAME = "silu_mul"
# The user's parameters as Triton compiles them, then Triton's own two.
USER_PARAMS = [".u64", ".u64", ".u64", ".u32"]  # gate, up, h: *fp32; n: i32
EXTRA_PARAMS = 2


def fail(msg):
    print("compile_triton.py: error: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", type=int, required=True, help="compute capability, e.g. 90")
    ap.add_argument("--out", required=True, help="directory for the cubin and the .cgraph")
    a = ap.parse_args()
    try:
        import triton
        import triton.language as tl
        from triton.backends.compiler import GPUTarget
    except ImportError as e:
        fail("cannot import Triton: %s" % e)

    @triton.jit
    def silu_mul(gate_ptr, up_ptr, h_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        g = tl.load(gate_ptr + offs, mask=mask)
        u = tl.load(up_ptr + offs, mask=mask)
        tl.store(h_ptr + offs, g / (1.0 + tl.exp(-g)) * u, mask=mask)

    src = triton.compiler.ASTSource(
        fn=silu_mul,
        signature={"gate_ptr": "*fp32", "up_ptr": "*fp32", "h_ptr": "*fp32", "n": "i32",
                   "BLOCK": "constexpr"},
        constexprs={"BLOCK": BLOCK})
    try:
        k = triton.compile(src, target=GPUTarget("cuda", a.arch, 32),
                           options={"num_warps": NUM_WARPS})
    except Exception as e:  # Triton's errors have no common base class
        fail("Triton %s could not compile %s for sm_%d: %s" % (triton.__version__, NAME, a.arch, e))

    md = k.metadata
    if md.name != NAME:
        fail("Triton named the kernel '%s', not '%s': triton.cgraph's symbol must follow"
             % (md.name, NAME))
    for field in ("global_scratch_size", "profile_scratch_size"):
        if getattr(md, field, 0):
            fail("the kernel needs %d bytes of %s; triton.cgraph passes a null pointer"
                 % (getattr(md, field), field))
    if getattr(md, "num_ctas", 1) != 1:
        fail("the kernel wants clusters of %d blocks; triton.cgraph launches none" % md.num_ctas)
    cubin = k.asm.get("cubin")
    if not isinstance(cubin, bytes) or cubin[:4] != b"\x7fELF":
        fail("Triton gave no cubin (asm['cubin'] is %r)" % type(cubin))
    entry = re.search(r"\.entry\s+(\w+)\s*\(([^)]*)\)", k.asm.get("ptx", ""))
    if not entry or entry.group(1) != NAME:
        fail("no .entry %s in the PTX Triton gave" % NAME)
    params = re.findall(r"\.param\s+(\.\w+)", entry.group(2))
    want = USER_PARAMS + [".u64"] * EXTRA_PARAMS
    if params != want:
        fail("Triton %s compiled %s with parameters %s; triton.cgraph declares %s (the user's, "
             "then %d scratch pointers): change the declaration to match"
             % (triton.__version__, NAME, params, want, EXTRA_PARAMS))

    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, NAME + ".cubin"), "wb") as f:
        f.write(cubin)
    with open(os.path.join(a.out, NAME + "_launch.cgraph"), "w") as f:
        f.write("// Written by compile_triton.py: how Triton %s compiled %s for sm_%d.\n"
                % (triton.__version__, NAME, a.arch))
        f.write("const SILU_BLOCK   = %d;  // elements a program\n" % BLOCK)
        f.write("const SILU_THREADS = %d;  // 32 a warp, num_warps %d\n"
                % (32 * md.num_warps, md.num_warps))
        f.write("const SILU_SMEM    = %d;  // metadata.shared, bytes\n" % md.shared)
    print("compile_triton.py: %s for sm_%d: %d bytes of cubin, %d threads, %d bytes of shared "
          "memory" % (NAME, a.arch, len(cubin), 32 * md.num_warps, md.shared))


if __name__ == "__main__":
    main()
