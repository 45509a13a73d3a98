#!/usr/bin/env python3
"""The package on a GPU with PyTorch: the decode step driven from Python
against PyTorch's ops in float64; tensors bound, rebound and read back;
launches on a non-default PyTorch stream ordered with PyTorch's work
before and after them; every element type through types.cgraph; the
runtime's own refusals; memory held by tensors after close.  Skipped
without PyTorch, a GPU, nvcc or the installed runtime."""
import ctypes
import gc
import importlib.util
import os

import common

DECODE = os.path.join(common.SOURCE, "samples", "decode_step")
spec = importlib.util.spec_from_file_location(
    "decode_sample", os.path.join(common.SOURCE, "samples", "python", "decode_step.py"))
sample = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sample)

torch = None
cgc = None
modules = {}


def setUpModule():
    kw = dict(cgc=os.environ["CGC_TEST_PREFIX"], nvcc=os.environ["CGC_TEST_NVCC"],
              cache_dir=os.environ.get("CGC_TEST_CACHE") or None)
    modules["decode"] = cgc.build(os.path.join(DECODE, "decode_step.cgraph"),
                                  sources=[os.path.join(DECODE, "kernels", "decode_step.cu")],
                                  **kw)
    modules["types"] = cgc.build(os.path.join(common.HERE, "types.cgraph"), **kw)


def live(m):
    """What the module's runtime holds now (host allocations, CUDA objects)."""
    f = m._lib.cgrt_test_live
    f.restype = ctypes.c_long
    return f()


class DecodeStep(common.TempDir):
    def test_against_pytorch(self):
        t = sample.inputs(torch, 1234)
        want = sample.reference(torch, t, 16)
        with modules["decode"].decode_step(**t) as g:
            for pos in range(16):
                g.set(pos=pos, nkeys=pos + 1)
                g.launch()
            torch.cuda.synchronize()
            ex, ek, ev, untouched = sample.check(torch, (t["x"], t["kc"], t["vc"]), want, 16)
            self.assertLess(max(ex, ek, ev), 1e-4, (ex, ek, ev))
            self.assertTrue(untouched)
            self.assertLess(sample.rel_error(torch, g.tensor("h"), want[3]), 1e-4)
            self.assertEqual((g.pos, g.nkeys), (15, 16))

    def test_bind_rebind_read_back(self):
        t = sample.inputs(torch, 99)
        g = modules["decode"].decode_step(**t)
        self.addCleanup(g.close)
        # Rebind x, kc and vc to fresh tensors: the old ones stay as they were.
        t2 = sample.inputs(torch, 7)
        before = {k: t[k].clone() for k in ("x", "kc", "vc")}
        g.bind(x=t2["x"], kc=t2["kc"], vc=t2["vc"])
        want = sample.reference(torch, dict(t, x=t2["x"], kc=t2["kc"], vc=t2["vc"]), 3)
        for pos in range(3):
            g.pos, g.nkeys = pos, pos + 1
            g.launch()
        torch.cuda.synchronize()
        for k in before:
            self.assertTrue(torch.equal(t[k].nan_to_num(), before[k].nan_to_num()), k)
        ex, ek, ev, untouched = sample.check(torch, (t2["x"], t2["kc"], t2["vc"]), want, 3)
        self.assertLess(max(ex, ek, ev), 1e-4)
        # Owned buffers read back, through the tensor and through the
        # interface: the same memory, no copy.
        h = g.tensor("h")
        self.assertEqual((h.dtype, tuple(h.shape), h.device.type), (torch.float32, (256,),
                                                                    "cuda"))
        self.assertEqual(h.data_ptr(), g.buffer("h").ptr)
        via_interface = torch.as_tensor(g.buffer("h"), device="cuda")
        self.assertEqual(via_interface.data_ptr(), h.data_ptr())
        self.assertLess(sample.rel_error(torch, h, want[3]), 1e-4)
        # The tensor is the graph's memory: the next launch changes it.
        before = h.clone()
        t2["x"].fill_(1.0)
        g.launch()
        torch.cuda.synchronize()
        self.assertFalse(torch.equal(h, before))
        self.assertEqual(g.buffer("x").ptr, t2["x"].data_ptr())

    def test_side_stream_ordering(self):
        """PyTorch work queued on a side stream before a launch (a long sleep,
        then a copy into x) finishes before the graph reads x, and work after
        it sees the graph's result: launch() takes the current stream."""
        t = sample.inputs(torch, 5)
        src = t["x"].clone()
        t["x"].zero_()
        want = sample.reference(torch, dict(t, x=src), 1)
        g = modules["decode"].decode_step(**t)
        self.addCleanup(g.close)
        torch.cuda.synchronize()
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)  # about 0.1 s: a launch elsewhere would run first
            t["x"].copy_(src)
            g.pos, g.nkeys = 0, 1
            g.launch()
            after = t["x"].clone()  # PyTorch's work after the launch
        torch.cuda.synchronize()
        self.assertLess(sample.rel_error(torch, after, want[0]), 1e-4)
        # The same with the stream given explicitly, outside the context.
        t2 = sample.inputs(torch, 6)
        src2 = t2["x"].clone()
        g.bind(**{k: t2[k] for k in ("x", "kc", "vc")})
        want2 = sample.reference(torch, dict(t, x=src2, kc=t2["kc"], vc=t2["vc"]), 1)
        t2["x"].zero_()
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            torch.cuda._sleep(200_000_000)
            t2["x"].copy_(src2)
        g.launch(side)
        with torch.cuda.stream(side):
            after2 = t2["x"].clone()
        torch.cuda.synchronize()
        self.assertLess(sample.rel_error(torch, after2, want2[0]), 1e-4)

    def test_refusals_with_real_tensors(self):
        t = sample.inputs(torch, 3)
        G = modules["decode"].decode_step
        pre = "decode_step: extern buffer "
        cases = [
            (dict(x=t["x"].half()), pre + "'x': expected f32[256], got a tensor of float16 (f16)"),
            (dict(wn=t["wn"].t()), pre + "'wn': expected f32[4, 256], got a tensor of shape "
                                         "[256, 4] (the same 1024 elements, but another shape: "
                                         "reshape it)"),
            (dict(wn=t["wn"].t().contiguous().t()),
             pre + "'wn': expected a contiguous (row-major) f32[4, 256], got a tensor with "
                   "strides [1, 4] (use .contiguous())"),
            (dict(x=t["x"].cpu()), pre + "'x': expected f32[256] on cuda:%d, got a tensor on cpu"
             % torch.cuda.current_device()),
            (dict(kc=t["kc"][:2]), pre + "'kc': expected f32[4, 128, 256], got a tensor of shape "
                                         "[2, 128, 256] (too small: 262144 bytes, it needs "
                                         "524288)"),
        ]
        for change, msg in cases:
            with self.assertRaises(cgc.BindError) as e:
                G(**dict(t, **change))
            self.assertEqual(str(e.exception), msg)
        # The runtime's own check: host memory handed over as device memory.
        host = torch.zeros(256).pin_memory()

        class Pinned:
            __cuda_array_interface__ = dict(version=3, shape=(256,), typestr="<f4",
                                            data=(host.data_ptr(), False), strides=None)
        with self.assertRaises(cgc.CgrtError) as e:
            G(**dict(t, x=Pinned()))
        self.assertEqual(e.exception.status, 2)
        self.assertEqual(str(e.exception), "decode_step: create failed (CGRT_ERROR_INVALID): "
                         "decode_step.cgraph: graph decode_step: extern buffer 'x' is not device "
                         "memory")

    def test_memory_outlives_close_while_a_tensor_holds_it(self):
        m = modules["decode"]
        base = live(m)
        t = sample.inputs(torch, 11)
        g = m.decode_step(**t)
        self.assertGreater(live(m), base)
        g.pos, g.nkeys = 0, 1
        g.launch()
        h = g.tensor("h")
        before = h.clone()
        g.close()
        self.assertGreater(live(m), base, "the tensor holds the graph's memory")
        self.assertTrue(torch.equal(h, before))
        del h
        gc.collect()
        torch.cuda.synchronize()
        self.assertEqual(live(m), base)


class EveryType(common.TempDir):
    def test_types(self):
        m = modules["types"]
        x = torch.randn(2, 3, device="cuda").to(torch.bfloat16)
        y = torch.randn(4, device="cuda").half()
        z = torch.arange(5, device="cuda")
        pinned = torch.zeros(16, dtype=torch.uint8).pin_memory()
        with m.kinds(x=x, y=y, z=z, pinned=pinned) as g:
            g.launch()
            torch.cuda.synchronize()
            c8 = g.tensor("c8")
            self.assertEqual(c8.dtype, torch.int8)
            self.assertTrue(torch.equal(c8.cpu(), torch.ones(3, dtype=torch.int8)))
            owned = g.tensor("owned")  # = 0: zeroed at create
            self.assertEqual((tuple(owned.shape), owned.element_size()), ((2, 2, 2), 8))
            self.assertTrue(bool((owned.view(torch.int64) == 0).all()))
            gx = g.tensor("x")
            self.assertEqual((gx.dtype, gx.data_ptr()), (torch.bfloat16, x.data_ptr()))
            self.assertTrue(torch.equal(gx, x))
            self.assertEqual(g.tensor("y").dtype, torch.float16)
            staging = g.tensor("staging")  # pinned host memory of the graph's
            self.assertEqual((staging.device.type, staging.dtype, tuple(staging.shape)),
                             ("cpu", torch.float32, (8,)))
            staging.fill_(2.5)
            self.assertEqual(g.tensor("staging").sum().item(), 20.0)
            self.assertEqual(g.tensor("pinned").data_ptr(), pinned.data_ptr())
            g.half, g.brain, g.s64 = 0.5, 3.0, -7
            self.assertEqual((g.half, g.brain, g.s64), (0.5, 3.0, -7))
        with m.other() as o:
            o.launch()  # a graph with no nodes launches too
            self.assertEqual(o.tensor("w").shape, (4,))


if __name__ == "__main__":
    try:
        import torch
    except ImportError:
        common.skip("PyTorch is not installed")
    if not torch.cuda.is_available():
        common.skip("PyTorch sees no GPU")
    common.need_env("CGC_TEST_NVCC", "this build found no CUDA compiler")
    common.need_env("CGC_TEST_PREFIX", "this build has no runtime (built without CUDA)")
    import cgc
    common.main()
