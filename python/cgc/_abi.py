"""The runtime's tables and entry points as ctypes sees them.

This mirrors runtime/cgrt_abi.h (the graph descriptions that cgc generates)
and runtime/cgrt.h (cgrt_options and the functions that take a graph by
index), for ABI version 7.  A test compiles a C program that prints every
size and offset below and compares them.
"""
import ctypes as C

ABI = 7
MAX_DIMS = 8

# cgrt_buffer_kind
DEVICE, EXTERN, HOST, EXTERN_HOST = range(4)
BUFFER_KINDS = {DEVICE: "device", EXTERN: "extern", HOST: "host", EXTERN_HOST: "extern host"}

# The element types, in the tables' order (CGRT_I8 ... CGRT_F64): the
# cgraph name, the size, and the __cuda_array_interface__ typestr (bf16 has
# none of its own: two opaque bytes).
TYPES = (
    ("i8", 1, "|i1"), ("i16", 2, "<i2"), ("i32", 4, "<i4"), ("i64", 8, "<i8"),
    ("u8", 1, "|u1"), ("u16", 2, "<u2"), ("u32", 4, "<u4"), ("u64", 8, "<u8"),
    ("f16", 2, "<f2"), ("bf16", 2, "<V2"), ("f32", 4, "<f4"), ("f64", 8, "<f8"),
)
TYPE_NAMES = tuple(t[0] for t in TYPES)

OK, ERROR_CUDA, ERROR_INVALID, ERROR_NO_MEMORY, ERROR_COMM = range(5)
STATUS_NAMES = {OK: "CGRT_OK", ERROR_CUDA: "CGRT_ERROR_CUDA", ERROR_INVALID: "CGRT_ERROR_INVALID",
                ERROR_NO_MEMORY: "CGRT_ERROR_NO_MEMORY", ERROR_COMM: "CGRT_ERROR_COMM"}

CURRENT_DEVICE = -1


class BufferDesc(C.Structure):
    _fields_ = [
        ("name", C.c_char_p),
        ("kind", C.c_uint8),
        ("zero", C.c_uint8),
        ("type", C.c_uint8),
        ("ndims", C.c_uint8),
        ("bytes", C.c_uint64),
        ("dims", C.c_uint64 * MAX_DIMS),
    ]


class ScalarDesc(C.Structure):
    _fields_ = [
        ("name", C.c_char_p),
        ("size", C.c_uint8),
        ("memory", C.c_uint8),
        ("type", C.c_uint8),
        ("init", C.c_uint64),
        ("from_comm", C.c_uint8),
        ("bounded", C.c_uint8),
        ("max", C.c_uint64),
    ]


class GraphDesc(C.Structure):
    """cgrt_graph_desc.  The tables this package does not read (nodes,
    arguments, edges, ...) are opaque pointers."""
    _fields_ = [
        ("abi", C.c_int),
        ("name", C.c_char_p),
        ("source", C.c_char_p),
        ("nbuffers", C.c_uint32),
        ("nscalars", C.c_uint32),
        ("nnodes", C.c_uint32),
        ("nedges", C.c_uint32),
        ("nkernels", C.c_uint32),
        ("nloads", C.c_uint32),
        ("ncode", C.c_uint32),
        ("ncases", C.c_uint32),
        ("buffers", C.POINTER(BufferDesc)),
        ("scalars", C.POINTER(ScalarDesc)),
        ("nodes", C.c_void_p),
        ("args", C.c_void_p),
        ("edges", C.c_void_p),
        ("loads", C.c_void_p),
        ("kernels", C.c_void_p),
        ("kernel_names", C.c_void_p),
        ("code", C.c_void_p),
        ("cases", C.c_void_p),
        ("ncaptures", C.c_uint32),
        ("captures", C.c_void_p),
        ("capture_names", C.c_void_p),
        ("collectives", C.c_void_p),
        ("kernel_from", C.c_void_p),
        ("nmodules", C.c_uint32),
        ("modules", C.c_void_p),
        ("ngrid_code", C.c_uint32),
        ("grid_code", C.c_void_p),
    ]


class Options(C.Structure):
    """cgrt_options."""
    _fields_ = [
        ("device", C.c_int),
        ("user", C.c_void_p),
        ("upload", C.c_int),
        ("stream", C.c_void_p),
        ("pool", C.c_void_p),
        ("comm", C.c_void_p),
        ("safe", C.c_uint),
    ]


class Runtime:
    """The runtime's entry points in one loaded library, typed once.

    set_launch, set_scalar and get_scalar are called with ctypes objects
    only (a handle, arrays, an index, pointers), so they carry no argtypes:
    ctypes then passes them as they are, the cheapest call it makes (a
    conversion through argtypes costs more than the call)."""

    def __init__(self, lib):
        self.lib = lib
        self.create = lib.cgrt_create
        self.create.argtypes = [C.POINTER(C.c_void_p), C.c_void_p, C.c_void_p, C.POINTER(Options)]
        self.create.restype = C.c_int
        self.launch = lib.cgrt_launch
        self.launch.argtypes = [C.c_void_p, C.c_void_p]
        self.launch.restype = C.c_int
        self.set_launch = lib.cgrt_set_launch
        self.set_launch.restype = C.c_int
        self.set_scalar = lib.cgrt_set_scalar
        self.set_scalar.restype = C.c_int
        self.get_scalar = lib.cgrt_get_scalar
        self.get_scalar.restype = C.c_int
        self.bind = lib.cgrt_bind
        self.bind.argtypes = [C.c_void_p, C.c_uint32, C.c_void_p]
        self.bind.restype = C.c_int
        self.buffer = lib.cgrt_buffer
        self.buffer.argtypes = [C.c_void_p, C.c_uint32]
        self.buffer.restype = C.c_void_p
        self.user = lib.cgrt_user
        self.user.argtypes = [C.c_void_p]
        self.user.restype = C.c_void_p
        self.destroy = lib.cgrt_destroy
        self.destroy.argtypes = [C.c_void_p]
        self.destroy.restype = None
        self.last_error = lib.cgrt_last_error
        self.last_error.argtypes = []
        self.last_error.restype = C.c_char_p

    def message(self):
        text = self.last_error()
        return text.decode("utf-8", "replace") if text else ""
