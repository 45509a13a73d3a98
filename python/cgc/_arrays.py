"""What an object passed for a buffer holds, and the checks against the
buffer's declaration.

Two kinds of object are read: PyTorch tensors (directly: data_ptr, dtype,
shape, is_contiguous, device; bf16 has no __cuda_array_interface__) and
anything with __cuda_array_interface__ (CuPy, Numba, JAX, this package's
own Buffer), or, for an extern host buffer, __array_interface__ (NumPy).
Nothing here calls CUDA, so every check runs without a GPU.
"""
import ctypes
import sys

from ._abi import TYPES, TYPE_NAMES
from ._errors import BindError, BindTypeError

# The cgraph type of a typestr's kind and size ('f', 4 -> f32).
_BY_TYPESTR = {}
for _i, (_name, _size, _ts) in enumerate(TYPES):
    _BY_TYPESTR[(_ts[1], _size)] = _i

_TORCH_TYPES = None
# Past the last address a pointer holds: ctypes would wrap or truncate an
# int there silently (here and in _graph's streams and user pointer).
ADDRESS_END = 1 << (8 * ctypes.sizeof(ctypes.c_void_p))


def _torch_types(torch):
    """torch dtype -> type index, built once (torch's unsigned types beyond
    uint8 exist from 2.3)."""
    global _TORCH_TYPES
    if _TORCH_TYPES is None:
        names = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "bfloat16", "float32", "float64")
        _TORCH_TYPES = {getattr(torch, n): i for i, n in enumerate(names) if hasattr(torch, n)}
    return _TORCH_TYPES


def shape_text(type_index, shape):
    return "%s[%s]" % (TYPE_NAMES[type_index], ", ".join(str(d) for d in shape))


class ArrayView:
    """What an object offers as memory: its address, element type (an index
    of TYPES, or None with `type_text` saying what it is), shape,
    contiguity, device (('cuda', n), ('cpu', None), or None when the object
    does not say) and whether it is a PyTorch tensor."""
    __slots__ = ("ptr", "type", "type_text", "shape", "strides", "contiguous", "device",
                 "is_torch", "what", "pinned")


def _device_of(obj):
    """('cuda', n) or ('cpu', None) from a `device` attribute in the ways
    libraries spell it (torch.device, CuPy's Device, an int), else None."""
    dev = getattr(obj, "device", None)
    if dev is None:
        return None
    kind = getattr(dev, "type", None)
    if isinstance(kind, str):
        index = getattr(dev, "index", None)
        return (kind, index if isinstance(index, int) else None)
    ident = getattr(dev, "id", None)  # CuPy
    if isinstance(ident, int):
        return ("cuda", ident)
    if isinstance(dev, int) and not isinstance(dev, bool):
        return ("cuda", dev)
    return None


def _from_torch(obj, torch):
    v = ArrayView()
    v.is_torch = True
    v.what = "tensor"
    v.type = _torch_types(torch).get(obj.dtype)
    v.type_text = str(obj.dtype).replace("torch.", "")
    v.shape = tuple(obj.shape)
    v.strides = tuple(obj.stride())
    v.contiguous = obj.is_contiguous()
    d = obj.device
    v.device = (d.type, d.index)
    v.ptr = obj.data_ptr()
    v.pinned = d.type == "cpu" and obj.is_pinned()
    return v


def _c_strides(shape, itemsize):
    strides, n = [], itemsize
    for d in reversed(shape):
        strides.append(n)
        n *= d
    return tuple(reversed(strides))


def _from_interface(obj, iface, name, host):
    """An ArrayView from a __cuda_array_interface__ (or, host, an
    __array_interface__) dict; `name` is the interface's name for messages."""
    if not isinstance(iface, dict):
        raise BindTypeError("its %s is a %s, not a dict" % (name, type(iface).__name__))
    try:
        shape = tuple(int(d) for d in iface["shape"])
        typestr = iface["typestr"]
        data = iface["data"]
    except (KeyError, TypeError, ValueError) as e:
        raise BindTypeError("its %s lacks shape, typestr or data (%s)" % (name, e))
    if any(d < 0 for d in shape):
        raise BindTypeError("its %s's shape %s has a negative dimension" % (name, list(shape)))
    if iface.get("mask") is not None:
        raise BindError("its %s has a mask; masked arrays cannot be bound" % name)
    if not isinstance(data, tuple) or len(data) != 2:
        raise BindTypeError("its %s's data is %r, not (address, readonly)" % (name, data))
    try:
        ptr = int(data[0] or 0)
    except (TypeError, ValueError):
        raise BindTypeError("its %s's data is %r, not (address, readonly)" % (name, data)) \
            from None
    v = ArrayView()
    v.is_torch = False
    v.what = type(obj).__name__
    v.pinned = None
    v.ptr = ptr
    v.shape = shape
    v.type_text = str(typestr)
    v.type = None
    if isinstance(typestr, str) and len(typestr) >= 3 and typestr[1:2] in "iufV":
        order, kind, size = typestr[0], typestr[1], typestr[2:]
        if size.isascii() and size.isdigit() and (order in "<|=" or int(size) == 1):
            v.type = _BY_TYPESTR.get((kind, int(size)))
    itemsize = TYPES[v.type][1] if v.type is not None else 1
    strides = iface.get("strides")
    try:
        v.strides = None if strides is None else tuple(int(s) for s in strides)
    except (TypeError, ValueError):
        raise BindTypeError("its %s's strides are %r, not a tuple of integers" % (
            name, strides)) from None
    if strides is None or 0 in shape:
        v.contiguous = True
    else:
        want = _c_strides(shape, itemsize)
        v.contiguous = len(v.strides) == len(shape) and all(
            s == w or d == 1 for s, w, d in zip(v.strides, want, shape))
    v.device = _device_of(obj) if not host else ("cpu", None)
    return v


def view(obj, host):
    """The ArrayView of obj for a device buffer (host False) or a host
    buffer; BindTypeError when obj is no array of that kind."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(obj, torch.Tensor):
        return _from_torch(obj, torch)
    names = ("__array_interface__",) if host else ("__cuda_array_interface__",)
    for name in names:
        try:
            iface = getattr(obj, name)
        except AttributeError:
            continue
        except Exception as e:  # a property that refuses (a CPU array's CUDA interface)
            raise BindTypeError("its %s cannot be read: %s" % (name, e))
        return _from_interface(obj, iface, name, host)
    if host:
        raise BindTypeError("it needs pinned host memory (a pinned torch.Tensor, or an object "
                            "with __array_interface__), got %s" % type(obj).__name__)
    if hasattr(obj, "__array_interface__"):
        raise BindError("it needs device memory, got host memory (%s with __array_interface__)"
                        % type(obj).__name__)
    raise BindTypeError("it needs device memory (a torch.Tensor, or an object with "
                        "__cuda_array_interface__), got %s" % type(obj).__name__)


def check(v, buf, device):
    """The checks of view v against BufferInfo buf for a graph on `device`
    (an int, or None when unknown); returns the address to bind, or raises
    BindError whose text says what was expected and what was given (the
    caller puts the graph and buffer's name in front)."""
    want = shape_text(buf.type, buf.shape)
    host = buf.kind in ("host", "extern host")
    if v.device is not None:
        kind, index = v.device
        if host and kind != "cpu":
            raise BindError("expected %s in pinned host memory, got a %s on %s" % (
                want, v.what, _device_text(v.device)))
        if not host and kind != "cuda":
            raise BindError("expected %s on %s, got a %s on %s" % (
                want, "cuda:%d" % device if device is not None else "the GPU", v.what,
                _device_text(v.device)))
        if not host and device is not None and index is not None and index != device:
            raise BindError("expected %s on cuda:%d, where the graph is, got a %s on cuda:%d "
                            "(create the graph with cgc.Options(device=%d), or move the %s)" % (
                                want, device, v.what, index, index, v.what))
    if host and v.is_torch and not v.pinned:
        raise BindError("expected %s in pinned host memory, got a tensor that is not pinned "
                        "(use .pin_memory())" % want)
    if v.type != buf.type:
        raise BindTypeError("expected %s, got a %s of %s%s" % (
            want, v.what, v.type_text,
            "" if v.type is None else " (%s)" % TYPE_NAMES[v.type]))
    if v.shape != buf.shape:
        n = 1
        for d in v.shape:
            n *= d
        size = TYPES[buf.type][1]
        if n * size < buf.nbytes:
            detail = "too small: %d bytes, it needs %d" % (n * size, buf.nbytes)
        elif n * size > buf.nbytes:
            detail = "too large: %d bytes, it takes %d" % (n * size, buf.nbytes)
        else:
            detail = "the same %d elements, but another shape: reshape it" % n
        raise BindError("expected %s, got a %s of shape [%s] (%s)" % (
            want, v.what, ", ".join(str(d) for d in v.shape), detail))
    if not v.contiguous:
        raise BindError("expected a contiguous (row-major) %s, got a %s with strides %s%s" % (
            want, v.what, list(v.strides), " (use .contiguous())" if v.is_torch else ""))
    if v.ptr == 0:
        raise BindError("expected %s, got a %s whose address is NULL" % (want, v.what))
    if not 0 < v.ptr < ADDRESS_END:
        raise BindError("expected %s, got a %s whose address %d is not a %d-bit address" % (
            want, v.what, v.ptr, 8 * ctypes.sizeof(ctypes.c_void_p)))
    size = TYPES[buf.type][1]
    if v.ptr % size:
        raise BindError("expected %s aligned to its %d-byte elements, got a %s at 0x%x" % (
            want, size, v.what, v.ptr))
    return v.ptr


def _device_text(device):
    kind, index = device
    return kind if index is None else "%s:%d" % (kind, index)
