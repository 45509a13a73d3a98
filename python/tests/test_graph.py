#!/usr/bin/env python3
"""The package's graph objects over the stand-in runtime (fake_cgrt.c):
introspection from the generated descriptions, every check of a bound
object and its message, scalars in every type, streams, bind, buffers,
errors the runtime returns, and lifetimes.  Needs cgc and a C compiler; no
GPU, no CUDA, no PyTorch (a stand-in torch module checks the PyTorch
paths)."""
import ctypes
import gc
import os
import shutil
import sys
import types
import unittest
import weakref

import common

import cgc
from cgc import _arrays

DECODE = os.path.join(common.SOURCE, "samples", "decode_step", "decode_step.cgraph")
TYPES = os.path.join(common.HERE, "types.cgraph")
libs = {}
folder = []  # setUpModule's, removed by tearDownModule


def setUpModule():
    import tempfile
    out = tempfile.mkdtemp(prefix="cgc-py-fake-")
    folder.append(out)
    for name, path in (("decode", DECODE), ("types", TYPES)):
        d = os.path.join(out, name)
        os.makedirs(d)
        libs[name] = common.fake_library(path, d)
    # The CUDA driver the package asks after a create fails in CUDA: a
    # stand-in, with one GPU unless a test says otherwise.
    libs["cuda"] = os.path.join(out, "libfake_cuda.so")
    common.run([common.c_compiler(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared",
                "-fPIC", os.path.join(common.HERE, "fake_cuda.c"), "-o", libs["cuda"]])
    cgc._cuda.DRIVER = libs["cuda"]


def tearDownModule():
    # The stand-in libraries stay loaded; their files are no longer needed.
    for out in folder:
        shutil.rmtree(out, True)


class CudaArray:
    """An object of the CUDA array interface, as CuPy or Numba make them."""

    def __init__(self, shape, typestr="<f4", ptr=0x7f0000000000, strides=None, device=None,
                 **extra):
        self.__cuda_array_interface__ = dict(version=3, shape=tuple(shape), typestr=typestr,
                                             data=(ptr, False), strides=strides, **extra)
        if device is not None:
            self.device = device


class HostArray:
    def __init__(self, shape, typestr="|u1", ptr=0x5000000):
        self.__array_interface__ = dict(version=3, shape=tuple(shape), typestr=typestr,
                                        data=(ptr, False), strides=None)


class Device:
    """torch.device's shape: a type and an index."""

    def __init__(self, type, index):
        self.type, self.index = type, index


def fake(lib_path):
    f = ctypes.CDLL(lib_path)
    for name in ("fake_scalar_bits",):
        getattr(f, name).restype = ctypes.c_uint64
    for name in ("fake_base", "fake_last_stream", "fake_upload_stream"):
        getattr(f, name).restype = ctypes.c_void_p
    for name in ("fake_live_graphs", "fake_launches", "fake_sets"):
        getattr(f, name).restype = ctypes.c_long
    for name in ("fake_scalar_bits", "fake_base", "fake_launches", "fake_sets", "fake_last_stream",
                 "fake_device", "fake_upload", "fake_upload_stream"):
        getattr(f, name).argtypes = [ctypes.c_void_p] + (
            [ctypes.c_uint32] if name in ("fake_scalar_bits", "fake_base") else [])
    return f


def decode_args(base=0x7f0000000000):
    m = cgc.load(libs["decode"])
    args = {}
    for i, name in enumerate(m.decode_step.externs):
        b = m.decode_step.buffers[name]
        args[name] = CudaArray(b.shape, ptr=base + 0x1000000 * i)
    return m, args


class Introspection(unittest.TestCase):
    def test_decode_step(self):
        m = cgc.load(libs["decode"])
        self.assertEqual(list(m.graphs), ["decode_step"])
        G = m.decode_step
        self.assertIs(m.graphs["decode_step"], G)
        self.assertEqual(G.name, "decode_step")
        self.assertEqual(G.source, "decode_step.cgraph")
        self.assertEqual(G.externs, ("x", "wn", "wq", "wk", "wv", "wo", "kc", "vc"))
        want = {"x": ("extern", (256,)), "wn": ("extern", (4, 256)),
                "wq": ("extern", (4, 256, 256)), "kc": ("extern", (4, 128, 256)),
                "h": ("device", (256,)), "o": ("device", (256,))}
        for name, (kind, shape) in want.items():
            b = G.buffers[name]
            self.assertEqual((b.kind, b.dtype, b.shape), (kind, "f32", shape), name)
            self.assertEqual(b.nbytes, 4 * _prod(shape))
            self.assertEqual(b.typestr, "<f4")
        self.assertEqual(len(G.buffers), 14)
        self.assertEqual([(s.name, s.dtype, s.init, s.slot) for s in G.scalars.values()],
                         [("pos", "u32", 0, True), ("nkeys", "u32", 1, True)])
        self.assertEqual([b.index for b in G.buffers.values()], list(range(14)))

    def test_every_type(self):
        m = cgc.load(libs["types"])
        self.assertEqual(list(m.graphs), ["kinds", "other"])
        K = m.kinds
        self.assertEqual([(s.name, s.dtype, s.size) for s in K.scalars.values()], [
            ("s8", "i8", 1), ("s16", "i16", 2), ("s32", "i32", 4), ("s64", "i64", 8),
            ("u8s", "u8", 1), ("u16s", "u16", 2), ("u32s", "u32", 4), ("u64s", "u64", 8),
            ("half", "f16", 2), ("brain", "bf16", 2), ("single", "f32", 4),
            ("double", "f64", 8), ("launch", "u32", 4)])
        maxes = {s.name: s.max for s in K.scalars.values() if s.max is not None}
        self.assertEqual(maxes, {"s64": 2**63 - 1, "u32s": 2**32 - 1})
        inits = {s.name: s.init for s in K.scalars.values()}
        self.assertEqual((inits["s8"], inits["u32s"], inits["half"], inits["brain"],
                          inits["single"], inits["double"]), (-3, 7, 1.5, -2.0, 0.25, 0.0))
        b = K.buffers
        self.assertEqual([(n, b[n].kind, b[n].dtype, b[n].shape, b[n].typestr, b[n].zero)
                          for n in b], [
            ("x", "extern", "bf16", (2, 3), "<V2", False),
            ("y", "extern", "f16", (4,), "<f2", False),
            ("z", "extern", "i64", (5,), "<i8", False),
            ("pinned", "extern host", "u8", (16,), "|u1", False),
            ("staging", "host", "f32", (8,), "<f4", False),
            ("owned", "device", "u64", (2, 2, 2), "<u8", True),
            ("c8", "device", "i8", (3,), "|i1", False)])
        self.assertEqual(K.externs, ("x", "y", "z", "pinned"))
        self.assertEqual(list(m.other.buffers), ["w"])
        self.assertEqual(m.other.externs, ())
        # A scalar named as a method keeps the method.
        self.assertTrue(callable(K.launch))
        u32s = K.__dict__["u32s"]
        if cgc.speedups():  # the C descriptor, over the same property
            self.assertIsInstance(u32s.prop, property)
            self.assertEqual(u32s.index, 6)
        else:
            self.assertIsInstance(u32s, property)
        self.assertEqual(u32s.__doc__, "scalar u32s: u32")

    def test_unknown_graph(self):
        m = cgc.load(libs["types"])
        with self.assertRaises(AttributeError) as e:
            m.kindz
        self.assertEqual(str(e.exception), "libtypes_fake.so has no graph 'kindz'; its graphs: "
                         "kinds, other")

    def test_load_errors(self):
        with self.assertRaises(cgc.Error) as e:
            cgc.load("/nonexistent/libx.so")
        self.assertIn("cannot load /nonexistent/libx.so", str(e.exception))
        with self.assertRaises(cgc.Error) as e:
            cgc.load(libs["decode"], program="no_such_program")
        self.assertEqual(str(e.exception), "%s defines no no_such_program(): compile its "
                         "generated C with -DCGC_PROGRAM=no_such_program" % libs["decode"])

    def test_refused_library_is_unloaded(self):
        """A library load refuses is closed again (dlclose): it does not stay
        mapped, and a good one put at its path later loads (dlopen handed
        back the refused one, loaded under that name, and load refused it
        again)."""
        d = os.path.join(folder[0], "refused")
        os.makedirs(d)
        path = os.path.join(d, "libprogram.so")
        shutil.copy(libs["cuda"], path)  # a library with no cgc_program()
        with self.assertRaises(cgc.Error) as e:
            cgc.load(path)
        self.assertIn("defines no cgc_program()", str(e.exception))
        with open("/proc/self/maps") as f:
            self.assertFalse(path in f.read(), "%s is still mapped" % path)
        shutil.copy(libs["decode"], path + ".new")
        os.replace(path + ".new", path)
        self.assertEqual(list(cgc.load(path).graphs), ["decode_step"])


class Create(unittest.TestCase):
    def test_pointers_and_options(self):
        m, args = decode_args()
        f = fake(libs["decode"])
        with m.decode_step(**args) as g:
            h = g._h
            for i, name in enumerate(m.decode_step.externs):
                self.assertEqual(f.fake_base(h, i), args[name].__cuda_array_interface__["data"][0])
            self.assertEqual((f.fake_device(h), f.fake_upload(h), f.fake_upload_stream(h)),
                             (-1, 1, None))
            self.assertIsNone(g.user)
            self.assertIsNone(g.device)
        opts = cgc.Options(device=2, stream=77, user=1234, upload=False)
        args = {k: CudaArray(v.__cuda_array_interface__["shape"], ptr=0x10000 * (i + 1),
                             device=Device("cuda", 2)) for i, (k, v) in enumerate(args.items())}
        with m.decode_step(opts, **args) as g:
            self.assertEqual((f.fake_device(g._h), f.fake_upload(g._h),
                              f.fake_upload_stream(g._h)), (2, 0, 77))
            self.assertEqual(g.user, 1234)
            self.assertEqual(g.device, 2)
        with m.decode_step({"device": "cuda:2", "user": ctypes.c_void_p(99)}, **args) as g:
            self.assertEqual((f.fake_device(g._h), g.user), (2, 99))

    def test_options_refused(self):
        m, args = decode_args()
        cases = [
            ((5,), "decode_step: the first argument is cgc.Options (or a dict of them), given "
                   "positionally; the extern buffers are keywords (got a int)"),
            (({"devise": 1},), "decode_step: options take device, stream, user and upload; "
                               "got devise"),
            ((cgc.Options(device="gpu1"),), "decode_step: device must be a GPU's ordinal, "
                                            "'cuda:N' or a CUDA torch.device; got 'gpu1'"),
            ((cgc.Options(stream="s"),), "decode_step: options: stream must be a cudaStream_t "
                                         "(an int), a torch.cuda.Stream or an object with "
                                         "cuda_stream; got 's'"),
            ((cgc.Options(user="u"),), "decode_step: options: user is an address (an int) or "
                                       "None; got 'u'"),
            # What cgrt_options' fields cannot hold, which ctypes wrapped or
            # truncated (device 2**32 was device 0, user 2**64 NULL).
            ((cgc.Options(device=2**32),), "decode_step: device must be a GPU's ordinal, "
                                           "'cuda:N' or a CUDA torch.device; got 4294967296"),
            ((cgc.Options(device="cuda:2147483648"),), "decode_step: device must be a GPU's "
                                                       "ordinal, 'cuda:N' or a CUDA "
                                                       "torch.device; got 'cuda:2147483648'"),
            ((cgc.Options(stream=2**64),), "decode_step: options: stream must be a "
                                           "cudaStream_t (an int), a torch.cuda.Stream or an "
                                           "object with cuda_stream; got 18446744073709551616"),
            ((cgc.Options(user=2**64),), "decode_step: options: user is an address (an int) or "
                                         "None; got 18446744073709551616"),
            ((cgc.Options(user=-1),), "decode_step: options: user is an address (an int) or "
                                      "None; got -1"),
        ]
        for opts, msg in cases:
            with self.assertRaises(cgc.BindTypeError) as e:
                m.decode_step(*opts, **args)
            self.assertEqual(str(e.exception), msg)

    def test_every_refusal(self):
        """Each wrong argument is refused before the runtime is called, with a
        message naming the buffer, what it expects and what it got."""
        m, args = decode_args()
        f = fake(libs["decode"])
        live = f.fake_live_graphs()
        pre = "decode_step: extern buffer "
        cases = [
            (dict(x=CudaArray((256,), "<f2")), cgc.BindTypeError,
             pre + "'x': expected f32[256], got a CudaArray of <f2 (f16)"),
            (dict(x=CudaArray((256,), "<i4")), cgc.BindTypeError,
             pre + "'x': expected f32[256], got a CudaArray of <i4 (i32)"),
            (dict(x=CudaArray((256,), ">f4")), cgc.BindTypeError,
             pre + "'x': expected f32[256], got a CudaArray of >f4"),
            (dict(x=CudaArray((256,), "<c8")), cgc.BindTypeError,
             pre + "'x': expected f32[256], got a CudaArray of <c8"),
            (dict(wq=CudaArray((4, 256))), cgc.BindError,
             pre + "'wq': expected f32[4, 256, 256], got a CudaArray of shape [4, 256] (too "
                   "small: 4096 bytes, it needs 1048576)"),
            (dict(x=CudaArray((257,))), cgc.BindError,
             pre + "'x': expected f32[256], got a CudaArray of shape [257] (too large: 1028 "
                   "bytes, it takes 1024)"),
            (dict(wq=CudaArray((1024, 256))), cgc.BindError,
             pre + "'wq': expected f32[4, 256, 256], got a CudaArray of shape [1024, 256] (the "
                   "same 262144 elements, but another shape: reshape it)"),
            (dict(wn=CudaArray((4, 256), strides=(4, 16))), cgc.BindError,
             pre + "'wn': expected a contiguous (row-major) f32[4, 256], got a CudaArray with "
                   "strides [4, 16]"),
            (dict(x=CudaArray((256,), device=Device("cpu", None))), cgc.BindError,
             pre + "'x': expected f32[256] on the GPU, got a CudaArray on cpu"),
            (dict(x=CudaArray((256,), ptr=0)), cgc.BindError,
             pre + "'x': expected f32[256], got a CudaArray whose address is NULL"),
            (dict(x=CudaArray((256,), ptr=2**64)), cgc.BindError,
             pre + "'x': expected f32[256], got a CudaArray whose address 18446744073709551616 "
                   "is not a 64-bit address"),
            (dict(x=CudaArray((256,), ptr=0x1002)), cgc.BindError,
             pre + "'x': expected f32[256] aligned to its 4-byte elements, got a CudaArray at "
                   "0x1002"),
            (dict(x=CudaArray((256,), mask=object())), cgc.BindError,
             pre + "'x': its __cuda_array_interface__ has a mask; masked arrays cannot be "
                   "bound"),
            (dict(x=3), cgc.BindTypeError,
             pre + "'x': it needs device memory (a torch.Tensor, or an object with "
                   "__cuda_array_interface__), got int"),
            (dict(x=HostArray((256,), "<f4")), cgc.BindError,
             pre + "'x': it needs device memory, got host memory (HostArray with "
                   "__array_interface__)"),
            (dict(x=Refusing()), cgc.BindTypeError,
             pre + "'x': its __cuda_array_interface__ cannot be read: not on the GPU"),
            (dict(x=Bare()), cgc.BindTypeError,
             pre + "'x': its __cuda_array_interface__ lacks shape, typestr or data ('shape')"),
            # Malformed interfaces: a BindTypeError naming the buffer, not
            # Python's own TypeError or ValueError.
            (dict(x=CudaArray((256,), strides=5)), cgc.BindTypeError,
             pre + "'x': its __cuda_array_interface__'s strides are 5, not a tuple of "
                   "integers"),
            (dict(x=CudaArray((256,), strides=("a",))), cgc.BindTypeError,
             pre + "'x': its __cuda_array_interface__'s strides are ('a',), not a tuple of "
                   "integers"),
            (dict(x=CudaArray((256,), ptr="0x1000")), cgc.BindTypeError,
             pre + "'x': its __cuda_array_interface__'s data is ('0x1000', False), not "
                   "(address, readonly)"),
            (dict(x=CudaArray((256,), "<f\u00b2")), cgc.BindTypeError,
             pre + "'x': expected f32[256], got a CudaArray of <f\u00b2"),
            (dict(x=CudaArray((-256,))), cgc.BindTypeError,
             pre + "'x': its __cuda_array_interface__'s shape [-256] has a negative "
                   "dimension"),
            (dict(wn=CudaArray((-4, -256))), cgc.BindTypeError,
             pre + "'wn': its __cuda_array_interface__'s shape [-4, -256] has a negative "
                   "dimension"),
            (dict(xx=1), cgc.BindError,
             "decode_step has no extern buffer 'xx' (did you mean 'x'?); its extern buffers: "
             "x, wn, wq, wk, wv, wo, kc, vc"),
            (dict(h=1), cgc.BindError,
             "decode_step: 'h' is a buffer the graph owns, not an extern buffer: it cannot be "
             "bound (read it with .buffer('h'))"),
            (dict(pos=1), cgc.BindError,
             "decode_step has no extern buffer 'pos': it is a scalar (set it with .set(pos=...), "
             "read it with .get('pos'))"),
        ]
        for change, kind, msg in cases:
            a = dict(args)
            a.update(change)
            with self.assertRaises(kind, msg=msg) as e:
                m.decode_step(**a)
            self.assertEqual(str(e.exception), msg)
            self.assertIsInstance(e.exception, ValueError)
            self.assertEqual(f.fake_live_graphs(), live, msg)
        a = dict(args)
        del a["kc"], a["vc"]
        with self.assertRaises(cgc.BindError) as e:
            m.decode_step(**a)
        self.assertEqual(str(e.exception), "decode_step: create needs every extern buffer; "
                         "missing: kc, vc (it takes x, wn, wq, wk, wv, wo, kc, vc)")
        self.assertIsInstance(cgc.BindTypeError("x"), TypeError)

    def test_device(self):
        m, args = decode_args()
        a = dict(args, x=CudaArray((256,), device=Device("cuda", 1)))
        with self.assertRaises(cgc.BindError) as e:
            m.decode_step(cgc.Options(device=0), **a)
        self.assertEqual(str(e.exception), "decode_step: extern buffer 'x': expected f32[256] "
                         "on cuda:0, where the graph is, got a CudaArray on cuda:1 (create the "
                         "graph with cgc.Options(device=1), or move the CudaArray)")
        # Where the graph's device is not known, a device of the object's
        # own is taken as it is; CuPy's Device (an id) and ints are read too.
        m.decode_step(**a).close()
        cupy_like = types.SimpleNamespace(id=3)
        for dev in (cupy_like, 3):
            b = dict(args, x=CudaArray((256,), device=dev))
            with self.assertRaises(cgc.BindError) as e:
                m.decode_step(cgc.Options(device=0), **b)
            self.assertIn("got a CudaArray on cuda:3", str(e.exception))
            m.decode_step(cgc.Options(device=3), **b).close()

    def test_host_buffers(self):
        m = cgc.load(libs["types"])
        args = dict(x=CudaArray((2, 3), "<V2"), y=CudaArray((4,), "<f2"),
                    z=CudaArray((5,), "<i8"), pinned=HostArray((16,)))
        with m.kinds(**args) as g:
            self.assertEqual(g.buffer("pinned").ptr, 0x5000000)
        for bad, msg in (
                (CudaArray((16,), "|u1"), "it needs pinned host memory (a pinned torch.Tensor, "
                                          "or an object with __array_interface__), got CudaArray"),
                (HostArray((16,), "|i1"), "expected u8[16], got a HostArray of |i1 (i8)")):
            with self.assertRaises(cgc.BindError) as e:
                m.kinds(**dict(args, pinned=bad))
            self.assertEqual(str(e.exception), "kinds: extern buffer 'pinned': " + msg)
        # bf16 has no typestr of its own: two opaque bytes (<V2), as this
        # package's own buffers give it, stand for it, and for nothing else.
        with self.assertRaises(cgc.BindTypeError) as e:
            m.kinds(**dict(args, y=CudaArray((4,), "<V2")))
        self.assertEqual(str(e.exception), "kinds: extern buffer 'y': expected f16[4], got a "
                         "CudaArray of <V2 (bf16)")
        m.other().close()


class Refusing:
    @property
    def __cuda_array_interface__(self):
        raise TypeError("not on the GPU")


class Bare:
    __cuda_array_interface__ = {"typestr": "<f4", "data": (4096, False)}


class Scalars(unittest.TestCase):
    def setUp(self):
        self.m = cgc.load(libs["types"])
        self.f = fake(libs["types"])
        self.g = self.m.kinds(x=CudaArray((2, 3), "<V2"), y=CudaArray((4,), "<f2"),
                              z=CudaArray((5,), "<i8"), pinned=HostArray((16,)))
        self.addCleanup(self.g.close)
        self.index = {s.name: s.index for s in self.m.kinds.scalars.values()}

    def bits(self, name):
        return self.f.fake_scalar_bits(self.g._h, self.index[name])

    def test_values_and_bits(self):
        g = self.g
        cases = [("s8", -3, 0xFD), ("s16", -2, 0xFFFE), ("s32", -(1 << 31), 0x80000000),
                 ("s64", -1, (1 << 64) - 1), ("u8s", 255, 255), ("u16s", 65535, 65535),
                 ("u32s", (1 << 32) - 1, (1 << 32) - 1), ("u64s", (1 << 64) - 1, (1 << 64) - 1),
                 ("half", 1.5, 0x3E00), ("half", -0.0, 0x8000), ("half", 1e6, 0x7C00),
                 ("half", -1e300, 0xFC00), ("brain", -2.0, 0xC000),
                 ("brain", 1.00390625, 0x3F80),  # ties: to even
                 ("brain", 1.01171875, 0x3F82), ("brain", 1e39, 0x7F80),
                 ("single", 0.25, 0x3E800000), ("double", 2.5, 0x4004000000000000),
                 ("launch", 11, 11)]
        rounded = {1.00390625: 1.0, 1.01171875: 1.015625, 1e6: float("inf"),
                   -1e300: float("-inf"), 1e39: float("inf")}
        for name, value, bits in cases:
            g.set(**{name: value})
            g.launch()  # the staged value goes to the runtime with the launch
            self.assertEqual(self.bits(name), bits, (name, value))
            self.assertEqual(g.get(name), rounded.get(value, value), (name, value))
        g.set(brain=float("nan"))
        g.launch()
        self.assertEqual(self.bits("brain") & 0x7FC0, 0x7FC0)
        self.assertNotEqual(g.get("brain"), g.get("brain"))  # NaN
        g.half = 2  # an int for a float scalar
        self.assertEqual(g.half, 2.0)
        g.u32s = 9  # get hands a staged value to the runtime first
        self.assertEqual((g.u32s, self.bits("u32s")), (9, 9))
        g.u8s = True  # bool is an int
        self.assertEqual(g.u8s, 1)
        g.set(s32=Index(-5), u64s=Index(7))
        self.assertEqual((g.s32, g.u64s), (-5, 7))
        # The attribute path (a memoryview store, else set's conversion).
        for name, value, bits in (("single", 1e300, 0x7F800000), ("double", -1.5, 0xBFF8 << 48),
                                  ("s64", -(1 << 63), 1 << 63), ("u16s", Index(65535), 65535),
                                  ("half", 1e6, 0x7C00), ("brain", 1.0, 0x3F80),
                                  ("s8", False, 0)):
            setattr(g, name, value)
            g.launch()
            self.assertEqual(self.bits(name), bits, name)
        self.assertTrue(callable(g.launch))
        self.assertEqual(g.get("launch"), 11)

    def test_attribute_ends(self):
        """g.NAME = value at each type's ends and one past them: what fits
        is stored (in C with cgc._speedups), what does not is refused as
        set() refuses it, and the scalar keeps its value."""
        g = self.g
        ends = {"s8": (-(1 << 7), (1 << 7) - 1), "s16": (-(1 << 15), (1 << 15) - 1),
                "s32": (-(1 << 31), (1 << 31) - 1), "s64": (-(1 << 63), (1 << 63) - 1),
                "u8s": (0, 255), "u16s": (0, 65535), "u32s": (0, (1 << 32) - 1),
                "u64s": (0, (1 << 64) - 1)}
        for name, (lo, hi) in ends.items():
            size = 8 * self.m.kinds.scalars[name].size
            for v in (lo, hi, 0, 1):
                setattr(g, name, v)
                g.launch()
                self.assertEqual((getattr(g, name), self.bits(name)),
                                 (v, v & ((1 << size) - 1)), (name, v))
            for v in (lo - 1, hi + 1, 1 << 70, -(1 << 70)):
                with self.assertRaises(cgc.BindError) as e:
                    setattr(g, name, v)
                self.assertIn("got %d" % v, str(e.exception))
                self.assertEqual(getattr(g, name), 1, (name, v))  # kept
        f32_max = 3.4028234663852886e38
        for value, bits in ((f32_max, 0x7F7FFFFF), (-f32_max, 0xFF7FFFFF),
                            (3.4028235677973366e38, 0x7F800000),  # rounds up to infinity
                            (float("inf"), 0x7F800000), (1.5e-45, 0x00000001), (-0.0, 1 << 31)):
            g.single = value
            g.launch()
            self.assertEqual(self.bits("single"), bits, value)
        g.double = 5e-324
        g.launch()
        self.assertEqual(self.bits("double"), 1)
        g.single, g.double = 7, -7  # ints for float scalars
        self.assertEqual((g.single, g.double), (7.0, -7.0))
        with self.assertRaises(AttributeError):
            del g.u32s
        self.assertEqual(g.u32s, 1)
        self.assertIsNotNone(type(g).u32s)  # on the class: the descriptor itself

    def test_refused(self):
        g = self.g
        cases = [
            (dict(u8s=256), cgc.BindError, "kinds: scalar 'u8s' is u8 (0 to 255); got 256"),
            (dict(s8=-129), cgc.BindError, "kinds: scalar 's8' is i8 (-128 to 127); got -129"),
            (dict(u64s=-1), cgc.BindError,
             "kinds: scalar 'u64s' is u64 (0 to 18446744073709551615); got -1"),
            (dict(u32s=1.5), cgc.BindTypeError,
             "kinds: scalar 'u32s' is u32, an integer type; got float 1.5"),
            (dict(u32s="3"), cgc.BindTypeError,
             "kinds: scalar 'u32s' is u32, an integer type; got str '3'"),
            (dict(s16=[1]), cgc.BindTypeError,
             "kinds: scalar 's16' is i16; got list, which is not an integer"),
            (dict(single="1.0"), cgc.BindTypeError,
             "kinds: scalar 'single' is f32; got str '1.0', which is not a number"),
            (dict(half=None), cgc.BindTypeError,
             "kinds: scalar 'half' is f16; got NoneType None, which is not a number"),
            (dict(u32z=1), cgc.BindError,
             "kinds has no scalar 'u32z' (did you mean 'u32s'?); its scalars: s8, s16, s32, "
             "s64, u8s, u16s, u32s, u64s, half, brain, single, double, launch"),
            (dict(x=1), cgc.BindError, "kinds has no scalar 'x': it is an extern buffer"),
            (dict(owned=1), cgc.BindError, "kinds has no scalar 'owned': it is a buffer"),
        ]
        for kw, kind, msg in cases:
            before = self.bits("u32s")
            with self.assertRaises(kind, msg=msg) as e:
                g.set(**kw)
            self.assertEqual(str(e.exception), msg)
            self.assertEqual(self.bits("u32s"), before)
        with self.assertRaises(cgc.BindError) as e:
            g.get("owned")
        self.assertEqual(str(e.exception), "kinds has no scalar 'owned': it is a buffer")
        # The attribute path refuses alike.
        for name, value, kind, msg in (
                ("u8s", 256, cgc.BindError, "kinds: scalar 'u8s' is u8 (0 to 255); got 256"),
                ("s16", 1.5, cgc.BindTypeError,
                 "kinds: scalar 's16' is i16, an integer type; got float 1.5"),
                ("single", "x", cgc.BindTypeError,
                 "kinds: scalar 'single' is f32; got str 'x', which is not a number")):
            with self.assertRaises(kind) as e:
                setattr(g, name, value)
            self.assertEqual(str(e.exception), msg)
        with self.assertRaises(AttributeError) as e:
            g.u32z = 1
        with self.assertRaises(AttributeError) as e:
            g.owned
        self.assertEqual(str(e.exception), "kinds: 'owned' is a buffer: use .buffer('owned') or "
                         ".tensor('owned')")
        m = cgc.load(libs["decode"])
        with self.assertRaises(cgc.BindError) as e:
            m.decode_step(**decode_args()[1]).set(poss=1)
        self.assertEqual(str(e.exception), "decode_step has no scalar 'poss' (did you mean "
                         "'pos'?); its scalars: pos, nkeys")
        with self.assertRaises(cgc.BindError) as e:
            m.decode_step(**decode_args()[1]).set(h=1)
        self.assertEqual(str(e.exception), "decode_step has no scalar 'h': it is a buffer")


class Staging(unittest.TestCase):
    def test_one_call_a_step(self):
        """Sets between launches cost no call into the runtime: the launch
        takes them (the last value of each), in one call."""
        m, args = decode_args()
        f = fake(libs["decode"])
        with m.decode_step(**args) as g:
            g.pos = 3
            g.pos = 4
            g.nkeys = 5
            self.assertEqual((f.fake_sets(g._h), f.fake_scalar_bits(g._h, 0)), (0, 0))
            g.launch()
            self.assertEqual((f.fake_sets(g._h), f.fake_scalar_bits(g._h, 0),
                              f.fake_scalar_bits(g._h, 1), f.fake_launches(g._h)), (2, 4, 5, 1))
            g.launch()  # nothing staged: nothing set
            self.assertEqual((f.fake_sets(g._h), f.fake_launches(g._h)), (2, 2))
            g.nkeys = 9
            self.assertEqual(g.nkeys, 9)  # get hands it over first, as C's set then get
            self.assertEqual(f.fake_sets(g._h), 3)
            g.launch()
            self.assertEqual(f.fake_sets(g._h), 3)


class Index:
    """An integer that is not an int (NumPy's, a 0-d integer tensor)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class Streams(unittest.TestCase):
    def test_launch_streams(self):
        m, args = decode_args()
        f = fake(libs["decode"])
        with m.decode_step(**args) as g:
            g.launch()
            self.assertEqual((f.fake_launches(g._h), f.fake_last_stream(g._h)), (1, None))
            for stream, want in ((5, 5), (types.SimpleNamespace(cuda_stream=9), 9),
                                 (CudaStream(11), 11), (0, None)):
                g.launch(stream)
                self.assertEqual(f.fake_last_stream(g._h), want)
            self.assertEqual(f.fake_launches(g._h), 5)
            # Ints no cudaStream_t holds are refused: ctypes truncated 2**64 + 5 to 5.
            for bad in ("x", -1, True, 1.0, types.SimpleNamespace(cuda_stream="9"), 2**64 + 5,
                        types.SimpleNamespace(cuda_stream=2**64 + 5)):
                with self.assertRaises(cgc.BindTypeError) as e:
                    g.launch(bad)
                self.assertEqual(str(e.exception), "decode_step.launch: stream must be a "
                                 "cudaStream_t (an int), a torch.cuda.Stream or an object with "
                                 "cuda_stream; got %r" % (bad,))
            self.assertEqual(f.fake_launches(g._h), 5)
            g.launch(stream=7)
            self.assertEqual((f.fake_launches(g._h), f.fake_last_stream(g._h)), (6, 7))
            g.launch(stream=None)
            self.assertEqual((f.fake_launches(g._h), f.fake_last_stream(g._h)), (7, None))
            g.launch(stream=2**64 - 8)  # past a C long long: the speedups hand it to Python
            self.assertEqual((f.fake_launches(g._h), f.fake_last_stream(g._h)), (8, 2**64 - 8))
            g.launch(stream=None)
            for args, kw in (((1, 2), {}), ((), {"strem": 1}), ((1,), {"stream": 2})):
                with self.assertRaises(TypeError):
                    g.launch(*args, **kw)
            self.assertEqual(f.fake_launches(g._h), 9)

    def test_torch_paths(self):
        """With PyTorch imported (a stand-in here), launch() uses its current
        stream on the graph's device, create takes its current device and
        stream, and tensors are read directly."""
        torch = FakeTorch()
        sys.modules["torch"] = torch
        self.addCleanup(sys.modules.pop, "torch")
        self.addCleanup(setattr, _arrays, "_TORCH_TYPES", None)
        m, args = decode_args()
        f = fake(libs["decode"])
        args = {k: torch.Tensor(v.__cuda_array_interface__["shape"], torch.float32,
                                v.__cuda_array_interface__["data"][0])
                for k, v in args.items()}
        with m.decode_step(**args) as g:
            self.assertEqual(g.device, 1)
            self.assertEqual((f.fake_device(g._h), f.fake_upload_stream(g._h)), (1, 0x1101))
            g.launch()
            self.assertEqual(f.fake_last_stream(g._h), 0x1101)
            torch.stream = 0x2202
            g.launch()
            self.assertEqual(f.fake_last_stream(g._h), 0x2202)
            self.assertEqual(torch.raw_calls, [1, 1])
            g.launch(torch.cuda.Stream(0x3303))
            self.assertEqual(f.fake_last_stream(g._h), 0x3303)
            t = g.tensor("h")
            self.assertEqual(t, ("as_tensor", g.buffer("h").ptr, (256,), "<f4", "cuda:1"))
        cases = [
            (dict(x=torch.Tensor((256,), torch.float16, 4096)), cgc.BindTypeError,
             "'x': expected f32[256], got a tensor of float16 (f16)"),
            (dict(x=torch.Tensor((256,), torch.float32, 4096, contiguous=False)), cgc.BindError,
             "'x': expected a contiguous (row-major) f32[256], got a tensor with strides [1] "
             "(use .contiguous())"),
            (dict(x=torch.Tensor((256,), torch.float32, 4096, device=("cuda", 0))), cgc.BindError,
             "'x': expected f32[256] on cuda:1, where the graph is, got a tensor on cuda:0 "
             "(create the graph with cgc.Options(device=0), or move the tensor)"),
            (dict(x=torch.Tensor((256,), torch.float32, 4096, device=("cpu", None))),
             cgc.BindError, "'x': expected f32[256] on cuda:1, got a tensor on cpu"),
            (dict(x=torch.Tensor((16, 16), torch.float32, 4096)), cgc.BindError,
             "'x': expected f32[256], got a tensor of shape [16, 16] (the same 256 elements, "
             "but another shape: reshape it)"),
        ]
        for change, kind, msg in cases:
            with self.assertRaises(kind) as e:
                m.decode_step(**dict(args, **change))
            self.assertEqual(str(e.exception), "decode_step: extern buffer " + msg)
        tm = cgc.load(libs["types"])
        targs = dict(x=torch.Tensor((2, 3), torch.bfloat16, 4096),
                     y=torch.Tensor((4,), torch.float16, 8192),
                     z=torch.Tensor((5,), torch.int64, 8192 * 2),
                     pinned=torch.Tensor((16,), torch.uint8, 4096, device=("cpu", None),
                                         pinned=True))
        tm.kinds(**targs).close()
        with self.assertRaises(cgc.BindError) as e:
            tm.kinds(**dict(targs, pinned=torch.Tensor((16,), torch.uint8, 4096,
                                                       device=("cpu", None))))
        self.assertEqual(str(e.exception), "kinds: extern buffer 'pinned': expected u8[16] in "
                         "pinned host memory, got a tensor that is not pinned (use .pin_memory())")
        with self.assertRaises(cgc.BindError) as e:
            tm.kinds(**dict(targs, pinned=torch.Tensor((16,), torch.uint8, 4096)))
        self.assertEqual(str(e.exception), "kinds: extern buffer 'pinned': expected u8[16] in "
                         "pinned host memory, got a tensor on cuda:1")


class CudaStream:
    """An object of the __cuda_stream__ protocol (cuda.core, CuPy)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


class FakeTorch(types.ModuleType):
    """What the package asks of PyTorch, and no more: its dtypes, Tensor's
    attributes, the current device and stream, as_tensor."""

    class Tensor:
        def __init__(self, shape, dtype, ptr, contiguous=True, device=("cuda", 1), pinned=False):
            self.shape, self.dtype, self.ptr = shape, dtype, ptr
            self.contiguous, self.pinned = contiguous, pinned
            self.device = types.SimpleNamespace(type=device[0], index=device[1])

        def stride(self):
            return tuple(1 for _ in self.shape)

        def is_contiguous(self):
            return self.contiguous

        def data_ptr(self):
            return self.ptr

        def is_pinned(self):
            return self.pinned

    def __init__(self):
        super().__init__("torch")
        for n in ("int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
                  "float64"):
            setattr(self, n, "torch." + n)
        self.stream = 0x1101
        self.raw_calls = []
        torch = self

        class Cuda:
            @staticmethod
            def is_available():
                return True

            @staticmethod
            def current_device():
                return 1

            @staticmethod
            def current_stream(device=None):
                return types.SimpleNamespace(cuda_stream=torch.stream)

            class Stream:
                def __init__(self, handle):
                    self.cuda_stream = handle

        def raw(device):
            torch.raw_calls.append(device)
            return torch.stream

        self.cuda = Cuda
        self._C = types.SimpleNamespace(_cuda_getCurrentRawStream=raw)

    def as_tensor(self, obj, device=None):
        i = obj.__cuda_array_interface__
        return ("as_tensor", i["data"][0], i["shape"], i["typestr"], device)


class BindAndBuffers(unittest.TestCase):
    def test_bind(self):
        m, args = decode_args()
        f = fake(libs["decode"])
        g = m.decode_step(**args)
        self.addCleanup(g.close)
        new = CudaArray((256,), ptr=0xA000)
        g.bind(x=new)
        self.assertEqual(f.fake_base(g._h, 0), 0xA000)
        self.assertEqual(g.buffer("x").ptr, 0xA000)
        # Every argument is checked before any is bound.
        with self.assertRaises(cgc.BindError):
            g.bind(x=CudaArray((256,), ptr=0xB000), wn=CudaArray((3,)))
        self.assertEqual(f.fake_base(g._h, 0), 0xA000)
        # An address no pointer holds is refused, not wrapped or truncated
        # (2**64 + 0xB000 was bound as 0xB000, -16 as 0xfffffffffffffff0).
        for bad in (2**64 + 0xB000, -16):
            with self.assertRaises(cgc.BindError) as e:
                g.bind(x=CudaArray((256,), ptr=0xB000), wn=CudaArray((4, 256), ptr=bad))
            self.assertEqual(str(e.exception), "decode_step: extern buffer 'wn': expected "
                             "f32[4, 256], got a CudaArray whose address %d is not a 64-bit "
                             "address" % bad)
            self.assertEqual((f.fake_base(g._h, 0), f.fake_base(g._h, 1)),
                             (0xA000, args["wn"].__cuda_array_interface__["data"][0]))
        # The runtime refuses the second: the first is put back.
        calls = []
        rt = g._rt

        class Failing:
            def __getattr__(self, name):
                return getattr(rt, name)

            def bind(self, h, index, ptr):
                calls.append((index, ptr))
                if len(calls) == 2:
                    f.fake_fail_next(2)
                return rt.bind(h, index, ptr)
        g._rt = Failing()
        with self.assertRaises(cgc.CgrtError) as e:
            g.bind(x=CudaArray((256,), ptr=0xC000), wn=CudaArray((4, 256), ptr=0xD000))
        self.assertEqual(e.exception.status, 2)
        self.assertEqual(str(e.exception), "decode_step: bind wn failed (CGRT_ERROR_INVALID): "
                         "decode_step.cgraph: graph decode_step: bind: fake failure")
        self.assertEqual(calls, [(0, 0xC000), (1, 0xD000), (0, 0xA000)])
        self.assertEqual(f.fake_base(g._h, 0), 0xA000)
        g._rt = rt
        for kw, msg in ((dict(h=new), "decode_step: 'h' is a buffer the graph owns, not an "
                                      "extern buffer: it cannot be bound (read it with "
                                      ".buffer('h'))"),
                        (dict(y=new), "decode_step has no extern buffer 'y'; its extern "
                                      "buffers: x, wn, wq, wk, wv, wo, kc, vc")):
            with self.assertRaises(cgc.BindError) as e:
                g.bind(**kw)
            self.assertEqual(str(e.exception), msg)

    def test_bound_objects_are_kept(self):
        m, args = decode_args()
        g = m.decode_step(**args)
        obj = CudaArray((256,), ptr=0xA000)
        ref = weakref.ref(obj)
        g.bind(x=obj)
        del obj, args
        gc.collect()
        self.assertIsNotNone(ref(), "the graph keeps what is bound to it")
        g.close()
        gc.collect()
        self.assertIsNone(ref(), "and lets it go when it is destroyed")

    def test_buffers(self):
        m = cgc.load(libs["types"])
        g = m.kinds(x=CudaArray((2, 3), "<V2"), y=CudaArray((4,), "<f2"),
                    z=CudaArray((5,), "<i8"), pinned=HostArray((16,)))
        self.addCleanup(g.close)
        b = g.buffer("owned")
        self.assertEqual((b.name, b.dtype, b.shape, b.nbytes), ("owned", "u64", (2, 2, 2), 64))
        self.assertEqual(b.__cuda_array_interface__, {
            "version": 3, "shape": (2, 2, 2), "typestr": "<u8", "data": (b.ptr, False),
            "strides": None})
        self.assertEqual(b.ptr, 0x100000 * 6)  # fake_cgrt's address for buffer 5
        self.assertFalse(hasattr(b, "__array_interface__"))
        s = g.buffer("staging")
        self.assertEqual(s.__array_interface__["typestr"], "<f4")
        self.assertFalse(hasattr(s, "__cuda_array_interface__"))
        self.assertEqual(g.buffer("x").__cuda_array_interface__["typestr"], "<V2")
        # One graph's buffer binds to another's extern buffer.
        m2 = cgc.load(libs["decode"])
        h = cgc.load(libs["decode"]).decode_step(**decode_args()[1])
        self.addCleanup(h.close)
        a = decode_args()[1]
        a["x"] = h.buffer("h")
        with m2.decode_step(**a) as g2:
            self.assertEqual(g2.buffer("x").ptr, h.buffer("h").ptr)
        for name, msg in (("nope", "kinds has no buffer 'nope'; its buffers: x, y, z, pinned, "
                                   "staging, owned, c8"),
                          ("u32s", "kinds has no buffer 'u32s': it is a scalar (set it with "
                                   ".set(u32s=...), read it with .get('u32s'))")):
            with self.assertRaises(cgc.BindError) as e:
                g.buffer(name)
            self.assertEqual(str(e.exception), msg)
        self.assertNotIn("torch", sys.modules)
        with self.assertRaises(cgc.Error) as e:
            g.tensor("owned")
        self.assertEqual(str(e.exception), "kinds.tensor('owned') needs PyTorch: import torch "
                         "first, or use .buffer('owned') with any library that reads "
                         "__cuda_array_interface__")


class Failures(unittest.TestCase):
    def test_no_gpu(self):
        """A create that fails in CUDA where the driver finds no GPU, or no
        driver is installed, says "no GPU", and why; with a GPU, or when the
        runtime refused for another reason, the driver is not asked."""
        m, args = decode_args()
        driver = ctypes.CDLL(libs["cuda"])
        self.addCleanup(driver.fake_cuda_set, 0, 1)
        raw = "decode_step.cgraph: graph decode_step: create: fake failure"
        missing = os.path.join(os.path.dirname(libs["cuda"]), "no-libcuda.so.1")
        cases = [
            (0, 0, libs["cuda"], "no GPU: the CUDA driver finds none"),
            (100, 1, libs["cuda"], "no GPU: the CUDA driver finds none"),
            (999, 1, libs["cuda"], "no GPU: the CUDA driver cannot start (cuInit: "
                                   "CUDA_ERROR_UNKNOWN)"),
            (0, 1, missing, "no GPU: no CUDA driver is installed (%s cannot be loaded)" % missing),
        ]
        for init, count, path, why in cases:
            driver.fake_cuda_set(init, count)
            cgc._cuda.DRIVER = path
            self.addCleanup(setattr, cgc._cuda, "DRIVER", libs["cuda"])
            fake(libs["decode"]).fake_fail_next(1)
            with self.assertRaises(cgc.CgrtError) as e:
                m.decode_step(**args)
            self.assertEqual(e.exception.status, 1)
            self.assertEqual(str(e.exception), "decode_step: create failed (CGRT_ERROR_CUDA): "
                             "%s; the runtime said: %s" % (why, raw))
        cgc._cuda.DRIVER = libs["cuda"]
        driver.fake_cuda_set(100, 0)
        calls = driver.fake_cuda_init_calls()
        fake(libs["decode"]).fake_fail_next(2)
        with self.assertRaises(cgc.CgrtError) as e:
            m.decode_step(**args)
        self.assertEqual(str(e.exception), "decode_step: create failed (CGRT_ERROR_INVALID): " +
                         raw)
        self.assertEqual(driver.fake_cuda_init_calls(), calls)

    def test_runtime_errors(self):
        m, args = decode_args()
        f = fake(libs["decode"])
        live = f.fake_live_graphs()
        f.fake_fail_next(1)
        with self.assertRaises(cgc.CgrtError) as e:
            m.decode_step(**args)
        self.assertEqual(e.exception.status, 1)
        self.assertIsInstance(e.exception, RuntimeError)
        self.assertEqual(str(e.exception), "decode_step: create failed (CGRT_ERROR_CUDA): "
                         "decode_step.cgraph: graph decode_step: create: fake failure")
        self.assertEqual(f.fake_live_graphs(), live)
        g = m.decode_step(**args)
        self.addCleanup(g.close)
        for call, what, status in ((g.launch, "launch", 1), (lambda: g.get("pos"), "get", 1)):
            f.fake_fail_next(status)
            with self.assertRaises(cgc.CgrtError) as e:
                call()
            self.assertEqual(e.exception.status, status)
            self.assertEqual(str(e.exception), "decode_step: %s failed (%s): decode_step.cgraph: "
                             "graph decode_step: %s: fake failure" % (
                                 what, cgc._abi.STATUS_NAMES[status], what))
        # A set is staged, so the runtime's refusal comes with the launch; the
        # value stays staged and goes with the next launch.
        g.set(pos=5)
        f.fake_fail_next(3)
        with self.assertRaises(cgc.CgrtError) as e:
            g.launch()
        self.assertEqual(str(e.exception), "decode_step: launch failed (CGRT_ERROR_NO_MEMORY): "
                         "decode_step.cgraph: graph decode_step: set: fake failure")
        launches = f.fake_launches(g._h)
        g.launch()
        self.assertEqual((f.fake_scalar_bits(g._h, 0), f.fake_launches(g._h)), (5, launches + 1))

    def test_lifetimes(self):
        m, args = decode_args()
        f = fake(libs["decode"])
        live = f.fake_live_graphs()
        g = m.decode_step(**args)
        self.assertEqual(f.fake_live_graphs(), live + 1)
        g.close()
        self.assertEqual(f.fake_live_graphs(), live)
        self.assertTrue(g.closed)
        g.close()  # twice is fine
        for call in (g.launch, lambda: g.set(pos=1), lambda: g.get("pos"),
                     lambda: g.bind(x=args["x"]), lambda: g.buffer("h"), lambda: g.user):
            with self.assertRaises(ValueError) as e:
                call()
            self.assertEqual(str(e.exception), "decode_step: the graph is closed")
        with self.assertRaises(ValueError):
            g.pos = 3
        self.assertEqual(repr(g), "<cgc graph decode_step from decode_step.cgraph, closed>")
        with m.decode_step(**args) as g:
            self.assertEqual(f.fake_live_graphs(), live + 1)
        self.assertEqual(f.fake_live_graphs(), live)
        g = m.decode_step(**args)
        del g
        gc.collect()
        self.assertEqual(f.fake_live_graphs(), live)
        # A Buffer keeps the memory: closing the graph destroys it only once
        # the last Buffer is gone.
        g = m.decode_step(**args)
        b = g.buffer("h")
        g.close()
        self.assertEqual(f.fake_live_graphs(), live + 1)
        del b
        gc.collect()
        self.assertEqual(f.fake_live_graphs(), live)


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    common.cgc_exe()
    common.c_compiler()
    common.main()
