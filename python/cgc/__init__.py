"""cgc from Python: build a .cgraph program into a shared library and drive
its graphs with PyTorch tensors (or anything with __cuda_array_interface__),
with no copies.

    import cgc, torch
    m = cgc.build("decode_step.cgraph", sources=["kernels/decode_step.cu"])
    g = m.decode_step(x=x, wn=wn, wq=wq, wk=wk, wv=wv, wo=wo, kc=kc, vc=vc)
    for pos in range(64):
        g.pos, g.nkeys = pos, pos + 1
        g.launch()                      # on torch.cuda.current_stream()
    h = g.tensor("h")                   # the graph's own buffer, as a tensor

Pure Python over ctypes; PyTorch is used only when it is imported.  See
python/README.md for the whole interface.
"""
from ._errors import BindError, BindTypeError, BuildError, CgrtError, Error
from ._graph import Buffer, BufferInfo, Graph, Module, Options, ScalarInfo, load, speedups
from ._build import cache_root, toolchain

__version__ = "0.1.0"

__all__ = ["build", "load", "Options", "Module", "Graph", "Buffer", "BufferInfo", "ScalarInfo",
           "Error", "BuildError", "BindError", "BindTypeError", "CgrtError", "cache_root",
           "toolchain", "speedups"]


def build(cgraph, sources=(), defines=None, arch=None, include_dirs=(), cgc=None, nvcc=None,
          cuda_flags=(), link_flags=(), cache_dir=None, verbose=False):
    """Builds (or finds in the cache) and loads a .cgraph program.

    cgraph        the .cgraph file; cgc runs in its folder, as cgc_add_graph
                  does, and writes NAME_graph.c and NAME_graph.h, which the
                  sources include as "NAME_graph.h"
    sources       .cu (or .c, .cpp) files defining the kernels and capture
                  functions, compiled by nvcc
    defines       {NAME: value}: cgc's -D NAME=VALUE (constants)
    arch          CUDA architecture(s): 90, '90a', 'sm_90', '9.0' or a list;
                  None: $CGC_CUDA_ARCH, else this machine's GPU (PyTorch's
                  device when imported, else nvidia-smi), said on stderr;
                  with neither, BuildError (never nvcc's default)
    include_dirs  folders for cgc's include and nvcc's #include
    cgc           cgc's executable or install prefix; None: $CGC_HOME, else
                  cgc on PATH.  The runtime is the prefix's include/cgrt.h
                  and lib/libcgrt.a
    nvcc          nvcc; None: $CUDA_HOME/bin, $CUDA_PATH/bin, PATH,
                  /usr/local/cuda/bin
    cuda_flags    more nvcc flags for the sources (-DNAME, -lineinfo, ...)
    link_flags    more flags for the link (-lcublas for capture functions)
    cache_dir     the cache; None: $CGC_CACHE, else ~/.cache/cgc
    verbose       print each command

    A template kernel's companion (NAME_graph_templates.cu) is compiled
    and linked too.  The cache keys every file the build read, every file
    that would be read in place of one, and the libraries link_flags name.

    Returns a cgc.Module with one class per graph (m.decode_step); its
    `built` is False when the library came from the cache.  Raises
    cgc.BuildError with the failing command's output."""
    from ._build import compile_library
    path, built = compile_library(cgraph, sources, defines, arch, include_dirs, cgc, nvcc,
                                  cuda_flags, link_flags, cache_dir, verbose)
    return load(path, built=built)
