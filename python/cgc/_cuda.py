"""Whether CUDA has a GPU here, asked of the CUDA driver (libcuda) through
ctypes, for the message of a create that failed in CUDA: without a GPU the
runtime says cudaErrorInsufficientDriver (no driver installed) or
cudaErrorNoDevice, which do not say what is wrong.  Asked only after a
failure, when the runtime has started CUDA in this process already."""
import ctypes as C

DRIVER = "libcuda.so.1"  # the driver's library; the tests name a stand-in
NO_DEVICE = 100  # CUDA_ERROR_NO_DEVICE


def _error_name(lib, status):
    name = C.c_char_p()
    try:
        get = lib.cuGetErrorName
    except AttributeError:
        return str(status)
    get.argtypes = [C.c_int, C.POINTER(C.c_char_p)]
    get.restype = C.c_int
    if get(status, C.byref(name)) != 0 or not name.value:
        return str(status)
    return name.value.decode("ascii", "replace")


def no_gpu():
    """Why CUDA has no GPU here, or None when the driver has one."""
    try:
        lib = C.CDLL(DRIVER)
    except OSError:
        return "no CUDA driver is installed (%s cannot be loaded)" % DRIVER
    try:
        init, count_devices = lib.cuInit, lib.cuDeviceGetCount
    except AttributeError:
        return "%s is no CUDA driver (it has no cuInit or cuDeviceGetCount)" % DRIVER
    init.argtypes, init.restype = [C.c_uint], C.c_int
    count_devices.argtypes, count_devices.restype = [C.POINTER(C.c_int)], C.c_int
    status = init(0)
    if status == NO_DEVICE:
        return "the CUDA driver finds none"
    if status != 0:
        return "the CUDA driver cannot start (cuInit: %s)" % _error_name(lib, status)
    count = C.c_int(0)
    status = count_devices(C.byref(count))
    if status != 0:
        return "the CUDA driver cannot count them (cuDeviceGetCount: %s)" % _error_name(
            lib, status)
    return "the CUDA driver finds none" if count.value == 0 else None
