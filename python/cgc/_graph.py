"""Graphs from a built library: its descriptions read once, a class per
graph, and graph objects that call the runtime by index.

The library is one that cgc's generated C was compiled into with
-DCGC_PROGRAM=cgc_program, linked with the runtime: cgc_program() lists
every graph's description (cgrt_graph_desc), which gives its buffers (kind,
element type, shape) and scalars (type); cgrt_create, cgrt_set_scalar,
cgrt_bind and cgrt_buffer take a graph by description and its buffers and
scalars by index.  Nothing is generated per graph for Python.
"""
import ctypes as C
import difflib
import functools
import operator
import os
import struct
import sys

from . import _abi, _arrays, _cuda
from ._errors import BindError, BindTypeError, CgrtError, Error

PROGRAM = "cgc_program"

_CELLS = (C.c_int8, C.c_int16, C.c_int32, C.c_int64, C.c_uint8, C.c_uint16, C.c_uint32,
          C.c_uint64, C.c_uint16, C.c_uint16, C.c_float, C.c_double)
# The memoryview format of each type's cell; f16 and bf16 (their bits,
# which a memoryview cannot make from a float) are set through _set.
_VIEW_FORMATS = ("b", "h", "i", "q", "B", "H", "I", "Q", "H", "H", "f", "d")
F16, BF16, F32, F64 = 8, 9, 10, 11
# The largest device cgrt_options' int holds (ctypes would truncate past it).
_INT_MAX = (1 << (8 * C.sizeof(C.c_int) - 1)) - 1


def _int_range(t):
    bits = 8 * _abi.TYPES[t][1]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t < 4 else (0, (1 << bits) - 1)


def _f16_bits(x):
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:  # beyond f16's range: rounds to infinity, as a cast does
        return 0xFC00 if x < 0 else 0x7C00


def _bf16_bits(x):
    try:
        u = struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return 0xFF80 if x < 0 else 0x7F80
    if (u & 0x7FFFFFFF) > 0x7F800000:  # NaN stays NaN
        return (u >> 16) | 0x40
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF  # to nearest even


def _from_bits(t, bits):
    """A scalar's Python value from its bits (as the tables hold them)."""
    size = _abi.TYPES[t][1]
    bits &= (1 << (8 * size)) - 1
    if t == F16:
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if t == BF16:
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    if t == F32:
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if t == F64:
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if t < 4 and bits >> (8 * size - 1):
        return bits - (1 << (8 * size))
    return bits


class BufferInfo:
    """A buffer as the graph declares it: `kind` is 'device', 'extern',
    'host' or 'extern host'; `dtype` a cgraph type name ('f32'); `shape`
    a tuple; `index` its row in the runtime's table."""
    __slots__ = ("name", "index", "kind", "type", "dtype", "shape", "nbytes", "zero", "typestr")

    def __repr__(self):
        return "<%s buffer %s: %s>" % (self.kind, self.name, _arrays.shape_text(self.type,
                                                                               self.shape))


class ScalarInfo:
    """A launch scalar: `dtype` its cgraph type name, `slot` whether it has a
    device slot (kernels reach it through a pointer), `init` its initial
    value, `max` its bound (`scalar n: u32 max 4096`; None without one: the
    runtime refuses a value above it), `index` its row in the runtime's
    table."""
    __slots__ = ("name", "index", "type", "dtype", "size", "slot", "init", "max")

    def __repr__(self):
        return "<scalar %s: %s = %r>" % (self.name, self.dtype, self.init)


class GraphInfo:
    """What a graph's description says, read once when its library loads."""

    def __init__(self, module_path, address):
        abi = C.c_int.from_address(address).value
        if abi != _abi.ABI:
            raise Error("%s: a graph there was generated for cgrt ABI %d, but this package "
                        "reads ABI %d: build it again with this cgc" % (module_path, abi,
                                                                        _abi.ABI))
        d = _abi.GraphDesc.from_address(address)
        self.address = address
        self.name = d.name.decode()
        self.source = d.source.decode("utf-8", "replace")
        self.nnodes = d.nnodes
        bufs = []
        for i in range(d.nbuffers):
            b = d.buffers[i]
            info = BufferInfo()
            info.name, info.index = b.name.decode(), i
            if b.kind not in _abi.BUFFER_KINDS or b.type >= len(_abi.TYPES) or not (
                    1 <= b.ndims <= _abi.MAX_DIMS):
                self._malformed("buffer %s: kind %d, type %d, %d dimensions" % (
                    info.name, b.kind, b.type, b.ndims))
            info.kind, info.type = _abi.BUFFER_KINDS[b.kind], b.type
            info.dtype, _, info.typestr = _abi.TYPES[b.type]
            info.shape = tuple(int(b.dims[k]) for k in range(b.ndims))
            info.nbytes, info.zero = int(b.bytes), bool(b.zero)
            count = 1
            for n in info.shape:
                count *= n
            if min(info.shape) < 1 or count * _abi.TYPES[b.type][1] != info.nbytes:
                self._malformed("buffer %s: shape %s of %s is not %d bytes" % (
                    info.name, list(info.shape), info.dtype, info.nbytes))
            bufs.append(info)
        scalars = []
        for i in range(d.nscalars):
            s = d.scalars[i]
            info = ScalarInfo()
            info.name, info.index = s.name.decode(), i
            if s.type >= len(_abi.TYPES) or _abi.TYPES[s.type][1] != s.size:
                self._malformed("scalar %s: type %d of %d bytes" % (info.name, s.type, s.size))
            info.type, info.dtype, info.size = s.type, _abi.TYPES[s.type][0], s.size
            info.slot, info.init = bool(s.memory), _from_bits(s.type, s.init)
            info.max = _from_bits(s.type, s.max) if s.bounded else None
            scalars.append(info)
        self.buffers = {b.name: b for b in bufs}
        self.scalars = {s.name: s for s in scalars}
        self.externs = tuple(b for b in bufs if b.kind in ("extern", "extern host"))

    def _malformed(self, what):
        raise Error("graph %s (%s): its description is malformed: %s" % (self.name, self.source,
                                                                          what))

    def unknown(self, name, wanted):
        """The BindError for a name that is no `wanted` ('scalar', 'extern
        buffer' or 'buffer') of this graph."""
        g = self.name
        b = self.buffers.get(name)
        if wanted == "scalar" and b is not None:
            return BindError("%s has no scalar '%s': it is %s buffer" % (
                g, name, "an extern" if b in self.externs else "a"))
        if wanted == "extern buffer" and b is not None:
            return BindError("%s: '%s' is a buffer the graph owns, not an extern buffer: it "
                             "cannot be bound (read it with .buffer('%s'))" % (g, name, name))
        if wanted != "scalar" and name in self.scalars:
            return BindError("%s has no %s '%s': it is a scalar (set it with .set(%s=...), "
                             "read it with .get('%s'))" % (g, wanted, name, name, name))
        names = ([s for s in self.scalars] if wanted == "scalar" else
                 [e.name for e in self.externs] if wanted == "extern buffer" else
                 list(self.buffers))
        close = difflib.get_close_matches(name, names, 1)
        hint = " (did you mean '%s'?)" % close[0] if close else ""
        listed = ("its %ss: %s" % (wanted, ", ".join(names)) if names else
                  "it has no %ss" % wanted)
        return BindError("%s has no %s '%s'%s; %s" % (g, wanted, name, hint, listed))


def _int_converter(t, graph, name):
    lo, hi = _int_range(t)
    dtype = _abi.TYPES[t][0]

    def slow(v):
        if isinstance(v, (float, complex, str, bytes)):
            raise BindTypeError("%s: scalar '%s' is %s, an integer type; got %s %r" % (
                graph, name, dtype, type(v).__name__, v))
        try:
            i = operator.index(v)
        except TypeError:
            raise BindTypeError("%s: scalar '%s' is %s; got %s, which is not an integer" % (
                graph, name, dtype, type(v).__name__)) from None
        if not lo <= i <= hi:
            raise BindError("%s: scalar '%s' is %s (%d to %d); got %d" % (graph, name, dtype, lo,
                                                                          hi, i))
        return i

    def convert(v):
        if type(v) is int and lo <= v <= hi:
            return v
        return slow(v)
    return convert


def _float_converter(t, graph, name):
    dtype = _abi.TYPES[t][0]

    def to_float(v):
        if type(v) is float:
            return v
        if isinstance(v, (str, bytes, complex)) or not hasattr(v, "__float__") and not hasattr(
                v, "__index__"):
            raise BindTypeError("%s: scalar '%s' is %s; got %s %r, which is not a number" % (
                graph, name, dtype, type(v).__name__, v))
        return float(v)
    if t == F16:
        return lambda v: _f16_bits(to_float(v))
    if t == BF16:
        return lambda v: _bf16_bits(to_float(v))
    return to_float


class Options:
    """How a graph is created (cgrt_options):

    device  the GPU (an int, 'cuda:1' or a torch.device); default: PyTorch's
            current device when PyTorch is imported, else the current one
    stream  where the graph is uploaded at create (an int cudaStream_t, a
            torch.cuda.Stream or an object with cuda_stream); default:
            PyTorch's current stream when PyTorch is imported, else 0
    user    an address (int) that the capture functions receive; default NULL
    upload  upload the graph at create (default True), so the first launch
            costs what the others do
    """
    __slots__ = ("device", "stream", "user", "upload")

    def __init__(self, device=None, stream=None, user=None, upload=True):
        self.device, self.stream, self.user, self.upload = device, stream, user, upload

    def __repr__(self):
        return "cgc.Options(device=%r, stream=%r, user=%r, upload=%r)" % (
            self.device, self.stream, self.user, self.upload)


def _options(options, graph):
    if options is None:
        return Options()
    if isinstance(options, Options):
        return options
    if isinstance(options, dict):
        try:
            return Options(**options)
        except TypeError:
            raise BindTypeError("%s: options take device, stream, user and upload; got %s" % (
                graph, ", ".join(sorted(options)))) from None
    raise BindTypeError("%s: the first argument is cgc.Options (or a dict of them), given "
                        "positionally; the extern buffers are keywords (got a %s)" % (
                            graph, type(options).__name__))


def _device_index(device, graph):
    if device is None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_device()
        return None
    if isinstance(device, int) and not isinstance(device, bool) and 0 <= device <= _INT_MAX:
        return device
    if (isinstance(device, str) and device.startswith("cuda:") and device[5:].isascii() and
            device[5:].isdigit() and int(device[5:]) <= _INT_MAX):
        return int(device[5:])
    kind, index = getattr(device, "type", None), getattr(device, "index", None)
    if kind == "cuda":
        return index if index is not None else _device_index(None, graph)
    raise BindTypeError("%s: device must be a GPU's ordinal, 'cuda:N' or a CUDA torch.device; "
                        "got %r" % (graph, device))


def _stream_handle(stream, what):
    """An object's cudaStream_t as an int: an int, a torch.cuda.Stream (or
    anything with cuda_stream), or an object of the __cuda_stream__
    protocol."""
    if type(stream) is int and 0 <= stream < _arrays.ADDRESS_END:
        return stream
    h = getattr(stream, "cuda_stream", None)
    if h is None and hasattr(stream, "__cuda_stream__"):
        h = stream.__cuda_stream__()[1]
    if isinstance(h, int) and not isinstance(h, bool) and 0 <= h < _arrays.ADDRESS_END:
        return h
    raise BindTypeError("%s: stream must be a cudaStream_t (an int), a torch.cuda.Stream or an "
                        "object with cuda_stream; got %r" % (what, stream))


def _torch_stream(torch, device):
    """A function that returns PyTorch's current stream on device, as an
    int.  The first call goes through the public API, which initialises
    PyTorch's CUDA state; later ones through the raw getter when this
    PyTorch has it (what torch.compile's generated code calls)."""
    if device is None:
        device = torch.cuda.current_device()
    torch.cuda.current_stream(device)
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return functools.partial(raw, device)
    return lambda: torch.cuda.current_stream(device).cuda_stream


class _Handle:
    """Owns one cgrt_graph: destroys it when the graph object and every
    Buffer taken from it are gone, so no tensor over its memory outlives
    the memory.  It also holds the objects bound to the extern buffers,
    which the graph reads while it exists."""
    __slots__ = ("rt", "h", "keep")

    def __init__(self, rt, h, keep):
        self.rt, self.h, self.keep = rt, h, keep

    def release(self):
        h, self.h = self.h, None
        if h is not None and h.value:
            try:
                self.rt.destroy(h)
            except Exception:  # at interpreter exit ctypes may already be gone
                pass
        self.keep = None

    def __del__(self):
        self.release()


class Buffer:
    """A graph's buffer as memory another library can use without a copy:
    __cuda_array_interface__ (version 3) for device memory,
    __array_interface__ for pinned host memory (a host buffer).  It keeps
    the graph's memory alive."""
    __slots__ = ("graph", "info", "ptr", "device", "_handle", "__weakref__")

    def __init__(self, graph, info, ptr, device, handle):
        self.graph, self.info, self.ptr, self.device = graph, info, ptr, device
        self._handle = handle

    name = property(lambda self: self.info.name)
    dtype = property(lambda self: self.info.dtype)
    shape = property(lambda self: self.info.shape)
    nbytes = property(lambda self: self.info.nbytes)
    typestr = property(lambda self: self.info.typestr)

    def _interface(self, typestr=None):
        return {"version": 3, "shape": self.info.shape, "typestr": typestr or self.info.typestr,
                "data": (self.ptr, False), "strides": None}

    @property
    def __cuda_array_interface__(self):
        if self.info.kind in ("host", "extern host"):
            raise AttributeError("%s: buffer '%s' is pinned host memory: it has "
                                 "__array_interface__" % (self.graph, self.info.name))
        return self._interface()

    @property
    def __array_interface__(self):
        if self.info.kind not in ("host", "extern host"):
            raise AttributeError("%s: buffer '%s' is device memory: it has "
                                 "__cuda_array_interface__" % (self.graph, self.info.name))
        return self._interface()

    def __repr__(self):
        return "<cgc.Buffer %s.%s: %s %s at 0x%x>" % (
            self.graph, self.info.name, self.info.kind,
            _arrays.shape_text(self.info.type, self.info.shape), self.ptr)


class _Interface:
    """A __cuda_array_interface__ under another typestr, for PyTorch (which
    reads no bf16 and, before 2.3, no wide unsigned types)."""
    __slots__ = ("__cuda_array_interface__", "buffer")

    def __init__(self, buffer, typestr):
        self.buffer = buffer
        self.__cuda_array_interface__ = buffer._interface(typestr)


_SIGNED = {"bf16": "<i2", "f16": "<i2", "u16": "<i2", "u32": "<i4", "u64": "<i8"}
_TORCH_DTYPES = {"i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
                 "u16": "uint16", "u32": "uint32", "u64": "uint64", "f16": "float16",
                 "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def _as_tensor(torch, buf):
    """A tensor over buf's memory, without a copy."""
    info = buf.info
    dtype = getattr(torch, _TORCH_DTYPES[info.dtype], None)
    if info.kind in ("host", "extern host"):
        if dtype is None:
            raise Error("this PyTorch has no %s dtype" % _TORCH_DTYPES[info.dtype])
        raw = (C.c_char * info.nbytes).from_address(buf.ptr)
        raw.buffer = buf  # the tensor keeps raw, raw keeps the graph's memory
        return torch.frombuffer(raw, dtype=dtype).view(info.shape)
    if info.dtype != "bf16":
        try:
            return torch.as_tensor(buf, device="cuda:%d" % buf.device if buf.device is not None
                                   else "cuda")
        except TypeError:
            if info.dtype not in _SIGNED or dtype is None:
                raise
    t = torch.as_tensor(_Interface(buf, _SIGNED[info.dtype]))
    if dtype is None:
        raise Error("this PyTorch has no %s dtype" % _TORCH_DTYPES[info.dtype])
    return t.view(dtype)


def _load_speedups():
    """cgc._speedups (_speedups.c), the C hot path of set and launch, where
    it was built and CGC_PURE_PYTHON is not set; else None, and the same
    code runs in Python."""
    if os.environ.get("CGC_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    return _speedups


_SPEEDUPS = _load_speedups()


class _PureCore:
    """What _speedups.Core holds, where there is no _speedups."""
    __slots__ = ("_stream_fn",)


def speedups():
    """Whether graph objects set scalars and launch through the C extension
    cgc._speedups (built by pip where a C compiler and Python's headers
    are; CGC_PURE_PYTHON=1 turns it off): the same behaviour, a faster
    g.NAME = value and launch()."""
    return _SPEEDUPS is not None


class Graph(_SPEEDUPS.Core if _SPEEDUPS else _PureCore):
    """One graph object: created by calling its class with the extern
    buffers (``m.decode_step(x=t, ...)``, cgc.Options positionally first
    if any); see the package's documentation for every method."""
    __slots__ = ("_h", "_handle", "_rt", "_set_launch", "_device", "_cells", "_views",
                 "_pending", "_marks", "_values", "_stream", "_stream_c",
                 "__weakref__")
    _info = None  # the class's GraphInfo
    _rt_class = None

    def __init__(self, options=None, /, **externs):
        info, rt = self._info, self._rt_class
        self._h = None
        self._handle = None
        self._rt = rt
        self._set_launch = rt.set_launch
        opts = _options(options, info.name)
        device = _device_index(opts.device, info.name)
        for name in externs:
            if name not in info.buffers or info.buffers[name] not in info.externs:
                raise info.unknown(name, "extern buffer")
        missing = [b.name for b in info.externs if b.name not in externs]
        if missing:
            raise BindError("%s: create needs every extern buffer; missing: %s (it takes %s)" % (
                info.name, ", ".join(missing), ", ".join(b.name for b in info.externs)))
        ptrs = (C.c_void_p * max(1, len(info.externs)))()
        for i, b in enumerate(info.externs):
            ptrs[i] = _check(info, b, externs[b.name], device)
        torch = sys.modules.get("torch")
        if opts.stream is not None:
            stream = _stream_handle(opts.stream, info.name + ": options")
        elif torch is not None and device is not None:
            stream = torch.cuda.current_stream(device).cuda_stream
        else:
            stream = 0
        user = opts.user.value if isinstance(opts.user, C.c_void_p) else opts.user
        if user is not None and not (isinstance(user, int) and 0 <= user < _arrays.ADDRESS_END):
            raise BindTypeError("%s: options: user is an address (an int) or None; got %r" % (
                info.name, opts.user))
        c_opts = _abi.Options(_abi.CURRENT_DEVICE if device is None else device, user,
                              1 if opts.upload else 0, stream)
        h = C.c_void_p()
        status = rt.create(C.byref(h), info.address, ptrs, C.byref(c_opts))
        if status != _abi.OK:
            # Without a GPU, CUDA's own error (cudaErrorInsufficientDriver
            # where no driver is installed) does not say so; the driver does.
            why = _cuda.no_gpu() if status == _abi.ERROR_CUDA else None
            raise CgrtError("%s: create failed (%s): %s" % (
                info.name, _abi.STATUS_NAMES.get(status, status),
                "no GPU: %s; the runtime said: %s" % (why, rt.message()) if why else
                rt.message()), status)
        self._handle = _Handle(rt, h, dict(externs))
        self._h = h
        self._device = device
        self._stream_fn = None
        self._stream, self._stream_c = 0, C.c_void_p(0)
        # Scalars are staged: a set converts the value into the scalar's
        # cell and marks it; launch hands the marks and the cells' addresses
        # to cgrt_set_launch, which sets the marked ones and launches, one
        # call a step.
        n = len(info.scalars)
        cells = []
        for s in info.scalars.values():
            cell = _CELLS[s.type]()
            convert = (_int_converter if s.type < F16 else _float_converter)(s.type, info.name,
                                                                             s.name)
            cells.append((convert, cell))
        self._cells = cells
        self._pending = (C.c_uint8 * max(1, n))()
        self._values = (C.c_void_p * max(1, n))(*[C.addressof(c) for _, c in cells])
        # Stores through memoryviews, which check an int's range and a value's
        # type in C: the attribute path's fast case (_scalar_property).
        self._marks = memoryview(self._pending).cast("B")
        self._views = [memoryview(c).cast("B").cast(_VIEW_FORMATS[s.type])
                       for (_, c), s in zip(cells, info.scalars.values())]
        if _SPEEDUPS:
            self._core_init(C.cast(rt.set_launch, C.c_void_p).value, h.value,
                            C.addressof(self._pending), C.addressof(self._values), n)

    # ---- scalars ----

    def set(self, **scalars):
        """Sets scalars for the launches issued after this: g.set(pos=3)."""
        info = self._info
        for name, value in scalars.items():
            s = info.scalars.get(name)
            if s is None:
                raise info.unknown(name, "scalar")
            self._set(s.index, value)

    def _set(self, i, value):
        if self._h is None:
            raise self._closed()
        convert, cell = self._cells[i]
        cell.value = convert(value)
        self._marks[i] = 1

    def _flush(self):
        """Hands the staged scalars to the runtime now (as a launch would)."""
        pending, h = self._pending, self._h
        for i, (_, cell) in enumerate(self._cells):
            if pending[i]:
                status = self._rt.set_scalar(h, C.c_uint32(i), C.c_void_p(C.addressof(cell)))
                if status:
                    raise self._error("set", status)
                pending[i] = 0

    def get(self, name):
        """A scalar's value after the launches issued so far (this waits for
        them when the scalar has a device slot)."""
        info = self._info
        s = info.scalars.get(name)
        if s is None:
            raise info.unknown(name, "scalar")
        h = self._h
        if h is None:
            raise self._closed()
        self._flush()
        cell = _CELLS[s.type]()
        status = self._rt.get_scalar(h, C.c_uint32(s.index), C.c_void_p(C.addressof(cell)))
        if status:
            raise self._error("get", status)
        if s.type == F16 or s.type == BF16:
            return _from_bits(s.type, cell.value)
        return cell.value

    # ---- buffers ----

    def bind(self, **buffers):
        """Points extern buffers at other memory, for the launches issued
        after this.  Every argument is checked before any is bound; if the
        runtime refuses one, those already bound are put back."""
        info, h = self._info, self._h
        if h is None:
            raise self._closed()
        todo = []
        for name, obj in buffers.items():
            b = info.buffers.get(name)
            if b is None or b not in info.externs:
                raise info.unknown(name, "extern buffer")
            todo.append((b, obj, _check(info, b, obj, self._device)))
        keep = self._handle.keep
        done = []
        for b, obj, ptr in todo:
            old = self._rt.buffer(h, b.index)
            status = self._rt.bind(h, b.index, ptr)
            if status:
                err = self._error("bind %s" % b.name, status)
                for d, previous in reversed(done):
                    self._rt.bind(h, d.index, previous)
                raise err
            done.append((b, old))
        for b, obj, _ in todo:
            keep[b.name] = obj

    def buffer(self, name):
        """A buffer (owned, or an extern one's current memory) as a
        cgc.Buffer, which shares its memory (__cuda_array_interface__)."""
        info, h = self._info, self._h
        b = info.buffers.get(name)
        if b is None:
            raise info.unknown(name, "buffer")
        if h is None:
            raise self._closed()
        return Buffer(info.name, b, self._rt.buffer(h, b.index) or 0, self._device,
                      self._handle)

    def tensor(self, name):
        """A buffer as a torch.Tensor over the same memory (PyTorch must be
        imported)."""
        torch = sys.modules.get("torch")
        if torch is None:
            raise Error("%s.tensor('%s') needs PyTorch: import torch first, or use .buffer('%s')"
                        " with any library that reads __cuda_array_interface__" % (
                            self._info.name, name, name))
        return _as_tensor(torch, self.buffer(name))

    # ---- launching ----

    def _launch_slow(self, stream=None):
        """Launches the graph in `stream`: by default PyTorch's current stream
        when PyTorch is imported, else the legacy default stream (0).
        (_speedups.Core.launch calls this for what it leaves to Python.)"""
        h = self._h
        if h is None:
            raise self._closed()
        if stream is None:
            if "torch" in sys.modules:
                fn = self._stream_fn
                if fn is None:
                    fn = self._stream_fn = _torch_stream(sys.modules["torch"], self._device)
                stream = fn()
            else:
                stream = 0
        elif type(stream) is not int or not 0 <= stream < _arrays.ADDRESS_END:
            stream = _stream_handle(stream, self._info.name + ".launch")
        if stream != self._stream:  # one ctypes object per stream, made when it changes
            self._stream, self._stream_c = stream, C.c_void_p(stream)
        status = self._set_launch(h, self._pending, self._values, self._stream_c)
        if status:
            raise self._error("launch", status)

    if not _SPEEDUPS:
        launch = _launch_slow

    # ---- the rest ----

    @property
    def user(self):
        """Options.user as given at create (an int), or None."""
        if self._h is None:
            raise self._closed()
        return self._rt.user(self._h)

    @property
    def device(self):
        """The GPU's ordinal, or None for "the device current at create"
        when neither Options nor PyTorch named one."""
        return self._device

    @property
    def closed(self):
        return self._h is None

    def close(self):
        """Destroys the graph (cgrt_destroy): at once, or, while a Buffer or
        tensor taken from it is alive, once the last of them is gone.  The
        graph object cannot be used after this."""
        if _SPEEDUPS:
            self._core_close()  # its fast paths hand everything to Python, which finds it closed
        self._h = None
        self._views = None  # the attribute path's fast case fails, and finds it closed
        self._handle = None  # the last reference, unless a Buffer holds one

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getattr__(self, name):
        info = type(self)._info
        if info is not None and name in info.buffers:
            raise AttributeError("%s: '%s' is a buffer: use .buffer('%s') or .tensor('%s')" % (
                info.name, name, name, name))
        if info is not None and name in info.scalars:
            raise AttributeError("%s: scalar '%s' has no attribute of its own (its name is the "
                                 "graph object's or begins with '_'): use .get('%s') and "
                                 ".set(%s=...)" % (info.name, name, name, name))
        raise AttributeError("%s has no attribute '%s'%s" % (
            info.name if info else "graph", name,
            "; its scalars: " + ", ".join(info.scalars) if info and info.scalars else ""))

    def __repr__(self):
        info = self._info
        return "<cgc graph %s from %s%s>" % (info.name, info.source,
                                              ", closed" if self._h is None else "")

    def _closed(self):
        return ValueError("%s: the graph is closed" % self._info.name)

    def _error(self, what, status):
        return CgrtError("%s: %s failed (%s): %s" % (
            self._info.name, what, _abi.STATUS_NAMES.get(status, status), self._rt.message()),
            status)


def _check(info, b, obj, device):
    try:
        return _arrays.check(_arrays.view(obj, b.kind == "extern host"), b, device)
    except BindError as e:
        raise type(e)("%s: extern buffer '%s': %s" % (info.name, b.name, e)) from None


_RESERVED = set(dir(Graph))


def _scalar_property(s, doc):
    """g.NAME: get, and a set written for speed (this is the hot path of a
    decode loop): the value goes into the scalar's cell through a
    memoryview of its format, which refuses in C what does not fit; then
    _set does it again slowly, to say why (or that the graph is closed).
    f16 and bf16 always take _set."""
    index, name = s.index, s.name

    def fget(self):
        return self.get(name)

    if s.type in (F16, BF16):
        def fset(self, value):
            self._set(index, value)
    else:
        def fset(self, value):
            try:
                self._views[index][0] = value
            except (TypeError, ValueError, OverflowError):
                self._set(index, value)
                return
            self._marks[index] = 1
    prop = property(fget, fset, doc=doc)
    # The C descriptor stores an int or float that fits and hands the rest
    # (and gets) to the property.
    return _SPEEDUPS.Scalar(index, s.type, prop) if _SPEEDUPS else prop


def graph_class(info, rt):
    """The class of one graph: Graph with its description, and a property
    per scalar whose name is free (g.pos = 3; g.pos reads it back)."""
    ns = {"__slots__": (), "_info": info, "_rt_class": rt, "name": info.name,
          "source": info.source, "buffers": info.buffers, "scalars": info.scalars,
          "externs": tuple(b.name for b in info.externs), "__doc__": Graph.__doc__}
    for s in info.scalars.values():
        if s.name not in _RESERVED and not s.name.startswith("_") and s.name not in ns:
            ns[s.name] = _scalar_property(s, "scalar %s: %s" % (s.name, s.dtype))
    return type(info.name, (Graph,), ns)


class Module:
    """A loaded library: one class per graph, as attributes and in
    `graphs`; `path` is the library, `built` whether cgc.build compiled it
    (False when it came from the cache)."""

    def __init__(self, path, graphs, built):
        self.path, self.graphs, self.built = path, graphs, built

    def __getattr__(self, name):
        graphs = self.__dict__.get("graphs", {})
        if name in graphs:
            return graphs[name]
        raise AttributeError("%s has no graph '%s'; its graphs: %s" % (
            os.path.basename(self.__dict__.get("path", "the module")), name,
            ", ".join(graphs) or "none"))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.graphs))

    def __repr__(self):
        return "<cgc module %s: %s>" % (self.path, ", ".join(self.graphs))


def _read_program(lib, path, program):
    """{name: class} of every graph that lib's program() lists."""
    try:
        fn = getattr(lib, program)
    except AttributeError:
        raise Error("%s defines no %s(): compile its generated C with -DCGC_PROGRAM=%s" % (
            path, program, program)) from None
    try:
        rt = _abi.Runtime(lib)
    except AttributeError as e:
        raise Error("%s does not hold the cgrt runtime (%s): link it with libcgrt" % (
            path, e)) from None
    fn.argtypes = []
    fn.restype = C.POINTER(C.c_void_p)
    table = fn()
    graphs = {}
    i = 0
    while table[i]:
        info = GraphInfo(path, table[i])
        graphs[info.name] = graph_class(info, rt)
        i += 1
    return graphs


def _dlclose(handle):
    try:
        from _ctypes import dlclose
    except ImportError:  # not on this platform: the library stays loaded
        return
    dlclose(handle)


def load(path, program=PROGRAM, built=False):
    """Loads a library holding generated C compiled with -DCGC_PROGRAM=program
    and linked with the runtime (what cgc.build makes; or a library of your
    own build), privately (RTLD_LOCAL), so programs loaded together keep
    their names apart."""
    path = os.path.abspath(path)
    try:
        lib = C.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as e:
        raise Error("cannot load %s: %s" % (path, e)) from None
    try:
        graphs = _read_program(lib, path, program)
    except BaseException:
        # Closed again, so that a library refused here is not kept loaded,
        # where dlopen would hand it back for a good one put at its path.
        _dlclose(lib._handle)
        raise
    module = Module(path, graphs, built)
    module._lib = lib  # the classes' functions live in it
    return module
