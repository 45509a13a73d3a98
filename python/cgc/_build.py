"""cgc.build: cgc and nvcc into a shared library, cached.

A build runs cgc on the .cgraph (in its folder, with --depfile), compiles
the generated C with -DCGC_PROGRAM=cgc_program and each source with nvcc
(-MMD), and links them with the runtime's static library and CUDA's static
runtime into lib<name>.so.  Everything is written in a fresh folder under
the cache's tmp/ and renamed into place at the end, so a concurrent build
or reader never sees half a result.

The cache.  A build's key is the hash of everything it was asked (the
paths of the .cgraph and the sources, the defines, include folders,
architectures and flags) and of its tools (cgc's --version and the hash of
its executable, nvcc's --version, the hash of libcgrt.a).  Under that key
each result keeps the list of files it read (the .cgraph and what it
includes, from cgc's depfile; the sources and the headers they include,
from nvcc's) with their hashes.  A call whose key has a result whose files
all hash as they did returns it and runs nothing: no cgc, no nvcc; within
one process not even --version (tools are known by their path, size and
modification time).
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from ._errors import BuildError
from ._graph import PROGRAM

FORMAT = "cgc-python-build 1"  # what the commands below make; raise it when they change

_memo = {}


def _stat_key(kind, path):
    st = os.stat(path)
    return (kind, path, st.st_mtime_ns, st.st_size, st.st_ino)


def file_hash(path):
    """sha256 of a file's bytes, remembered for as long as its size and
    modification time stay."""
    key = _stat_key("hash", path)
    h = _memo.get(key)
    if h is None:
        d = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                d.update(block)
        h = _memo[key] = d.hexdigest()
    return h


def tool_version(path):
    """What `path --version` prints, remembered per executable."""
    key = _stat_key("version", path)
    v = _memo.get(key)
    if v is None:
        try:
            r = subprocess.run([path, "--version"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        except OSError as e:
            raise BuildError("%s --version: %s" % (path, e)) from None
        if r.returncode != 0:
            raise BuildError("%s --version failed (exit %d):\n%s" % (path, r.returncode,
                                                                      r.stdout))
        v = _memo[key] = r.stdout.strip()
    return v


def cache_root(cache_dir=None):
    """The cache folder: cache_dir, else $CGC_CACHE, else
    $XDG_CACHE_HOME/cgc or ~/.cache/cgc."""
    if cache_dir:
        return os.path.abspath(os.fspath(cache_dir))
    if os.environ.get("CGC_CACHE"):
        return os.path.abspath(os.environ["CGC_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cgc")


class Toolchain:
    """cgc, the runtime beside it (include/cgrt.h, lib/libcgrt.a) and nvcc."""

    def __init__(self, cgc, include, runtime, nvcc):
        self.cgc, self.include, self.runtime, self.nvcc = cgc, include, runtime, nvcc

    def __repr__(self):
        return "Toolchain(cgc=%r, include=%r, runtime=%r, nvcc=%r)" % (
            self.cgc, self.include, self.runtime, self.nvcc)


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_cgc(cgc=None):
    """(cgc's executable, its install prefix).  `cgc` is the executable or
    the prefix; else $CGC_HOME (a prefix); else cgc on PATH (whose prefix
    is the folder above its bin/)."""
    tried = []
    if cgc is not None:
        cgc = os.path.abspath(os.fspath(cgc))
        candidates = [(os.path.join(cgc, "bin", "cgc"), cgc)] if os.path.isdir(cgc) else [
            (cgc, os.path.dirname(os.path.dirname(cgc)))]
        origin = "the cgc argument"
    elif os.environ.get("CGC_HOME"):
        home = os.path.abspath(os.environ["CGC_HOME"])
        candidates = [(os.path.join(home, "bin", "cgc"), home)]
        origin = "$CGC_HOME"
    else:
        found = shutil.which("cgc")
        candidates = [(os.path.abspath(found), os.path.dirname(os.path.dirname(
            os.path.abspath(found))))] if found else []
        origin = "PATH"
    for exe, prefix in candidates:
        if _executable(exe):
            return exe, prefix
        tried.append(exe)
    raise BuildError("cgc not found (%s%s): pass cgc= (the executable or its install prefix), "
                     "set CGC_HOME to the prefix cgc was installed to, or put cgc on PATH" % (
                         origin, ": tried " + ", ".join(tried) if tried else ""))


def find_runtime(prefix):
    """(the folder holding cgrt.h, libcgrt.a) under an install prefix."""
    include = os.path.join(prefix, "include")
    libs = []
    for libdir in ("lib", "lib64"):
        libs.append(os.path.join(prefix, libdir, "libcgrt.a"))
    libs += sorted(os.path.join(prefix, "lib", d, "libcgrt.a")
                   for d in (os.listdir(os.path.join(prefix, "lib"))
                             if os.path.isdir(os.path.join(prefix, "lib")) else ()))
    lib = next((p for p in libs if os.path.isfile(p)), None)
    if not os.path.isfile(os.path.join(include, "cgrt.h")) or lib is None:
        raise BuildError("the cgc runtime is not under %s (it needs include/cgrt.h and "
                         "lib/libcgrt.a, which `cmake --install` puts there when cgc is built "
                         "with the CUDA Toolkit)" % prefix)
    return include, lib


def find_nvcc(nvcc=None):
    """nvcc: the argument, else $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc,
    nvcc on PATH, /usr/local/cuda/bin/nvcc."""
    if nvcc is not None:
        nvcc = os.fspath(nvcc)
        found = nvcc if os.sep in nvcc else shutil.which(nvcc)
        if found and _executable(found):
            return os.path.abspath(found)
        raise BuildError("nvcc not found: %s is not an executable" % nvcc)
    candidates = [os.path.join(os.environ[v], "bin", "nvcc")
                  for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates += [shutil.which("nvcc") or "", "/usr/local/cuda/bin/nvcc"]
    for c in candidates:
        if c and _executable(c):
            return os.path.abspath(c)
    raise BuildError("nvcc not found (looked in $CUDA_HOME/bin, $CUDA_PATH/bin, PATH and "
                     "/usr/local/cuda/bin): install the CUDA Toolkit or pass nvcc=")


def toolchain(cgc=None, nvcc=None):
    exe, prefix = find_cgc(cgc)
    include, runtime = find_runtime(prefix)
    return Toolchain(exe, include, runtime, find_nvcc(nvcc))


def _detect_arch():
    """The GPU's compute capability ('90'), from PyTorch when it is
    imported, else nvidia-smi; None when neither knows."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return "%d%d" % (major, minor)
    except Exception:
        pass
    if "smi" not in _memo:
        _memo["smi"] = None
        smi = shutil.which("nvidia-smi")
        if smi:
            try:
                r = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   timeout=30)
                line = r.stdout.strip().splitlines()[0] if r.returncode == 0 else ""
                if re.fullmatch(r"\d+\.\d+", line.strip()):
                    _memo["smi"] = line.strip().replace(".", "")
            except (OSError, subprocess.SubprocessError, IndexError):
                pass
    return _memo["smi"]


def arch_flags(arch):
    """nvcc's -gencode flags for arch: '90', 90, 'sm_90', '9.0', '90a', a
    list of them, or None: $CGC_CUDA_ARCH (comma-separated), else the GPU
    here, else nvcc's default (no flag)."""
    if arch is None:
        arch = os.environ.get("CGC_CUDA_ARCH") or _detect_arch()
        if arch is None:
            return []
        if isinstance(arch, str):
            arch = [a for a in arch.split(",") if a.strip()]
    archs = arch if isinstance(arch, (list, tuple)) else [arch]
    flags = []
    for a in archs:
        s = str(a).strip().lower()
        for p in ("sm_", "compute_"):
            if s.startswith(p):
                s = s[len(p):]
        if re.fullmatch(r"\d+\.\d+[af]?", s):
            s = s.replace(".", "")
        if not re.fullmatch(r"\d{2,3}[af]?", s):
            raise BuildError("arch %r is no CUDA architecture: give a compute capability such as "
                             "90, '90a', 'sm_90' or '9.0'" % (a,))
        flags.append("-gencode=arch=compute_%s,code=[sm_%s,compute_%s]" % (s, s, s))
    return flags


def parse_depfile(path):
    """Every prerequisite a Makefile-style depfile names (cgc's, nvcc's):
    escaped spaces, '#' and '\\', '$$', continued lines."""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    deps, word, rule_started, i = [], [], False, 0

    def end_word():
        if word:
            w = "".join(word)
            word.clear()
            return w
        return None

    words = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "\n":
                w = end_word()
                if w is not None:
                    words.append(w)
                i += 2
                continue
            if nxt in " #\\":
                word.append(nxt)
                i += 2
                continue
        if ch == "$" and text[i + 1:i + 2] == "$":
            word.append("$")
            i += 2
            continue
        if ch in " \t":
            w = end_word()
            if w is not None:
                words.append(w)
        elif ch == "\n":
            w = end_word()
            if w is not None:
                words.append(w)
            words.append("\n")
        else:
            word.append(ch)
        i += 1
    w = end_word()
    if w is not None:
        words.append(w)
    for w in words:
        if w == "\n":
            rule_started = False
        elif not rule_started:
            if w.endswith(":"):
                rule_started = True
            elif ":" == w:
                rule_started = True
        else:
            deps.append(w)
    return deps


def _run(cmd, cwd, verbose):
    """Runs one build step; BuildError with the command and its output if it
    fails."""
    if verbose:
        print("cgc.build: (cd %s && %s)" % (cwd, " ".join(cmd)), file=sys.stderr, flush=True)
    try:
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    except OSError as e:
        raise BuildError("%s: %s" % (cmd[0], e)) from None
    if verbose and r.stdout:
        print(r.stdout, end="", file=sys.stderr, flush=True)
    if r.returncode != 0:
        raise BuildError("%s failed (exit %d):\n  (cd %s && %s)\n%s" % (
            os.path.basename(cmd[0]), r.returncode, cwd, " ".join(cmd), r.stdout.rstrip()))
    return r.stdout


def _strings(value, what):
    if value is None:
        return []
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fspath(value)]
    try:
        items = list(value)
    except TypeError:
        raise BuildError("%s must be a list of strings, got %r" % (what, value)) from None
    for v in items:
        if not isinstance(v, (str, os.PathLike)):
            raise BuildError("%s must be a list of strings, got %r in it" % (what, v))
    return [os.fspath(v) for v in items]


def _defines(defines):
    if defines is None:
        return []
    if not isinstance(defines, dict):
        raise BuildError("defines must be a dict {NAME: value}, got %r" % (defines,))
    out = []
    for name, value in sorted(defines.items()):
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise BuildError("defines: %r is not a constant's name" % (name,))
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise BuildError("defines: %s must be an integer (or its literal as a string), got "
                             "%r" % (name, value))
        out.append("%s=%s" % (name, value))
    return out


def _deps_match(deps):
    for path, digest in deps:
        try:
            if file_hash(path) != digest:
                return False
        except OSError:
            return False
    return True


def _lookup(entries):
    """A result under a key whose files all hash as they did, or None."""
    try:
        names = sorted(os.listdir(entries))
    except FileNotFoundError:
        return None
    for name in names:
        entry = os.path.join(entries, name)
        try:
            with open(os.path.join(entry, "deps.json")) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            continue
        lib = os.path.join(entry, meta.get("library", ""))
        if os.path.isfile(lib) and _deps_match(meta.get("deps", [])):
            return lib
    return None


def _clean_tmp(tmp_root, older_than=24 * 3600):
    """Leftovers of builds killed more than a day ago."""
    try:
        now = time.time()
        for name in os.listdir(tmp_root):
            p = os.path.join(tmp_root, name)
            if now - os.stat(p).st_mtime > older_than:
                shutil.rmtree(p, ignore_errors=True)
    except OSError:
        pass


def compile_library(cgraph, sources=(), defines=None, arch=None, include_dirs=(), cgc=None,
                    nvcc=None, cuda_flags=(), link_flags=(), cache_dir=None, verbose=False):
    """(the library's path, whether this call built it): see cgc.build."""
    cgraph = os.path.abspath(os.fspath(cgraph))
    if not os.path.isfile(cgraph):
        raise BuildError("no such .cgraph file: %s" % cgraph)
    sources = [os.path.abspath(s) for s in _strings(sources, "sources")]
    for s in sources:
        if not os.path.isfile(s):
            raise BuildError("no such source file: %s" % s)
    include_dirs = [os.path.abspath(d) for d in _strings(include_dirs, "include_dirs")]
    cuda_flags = _strings(cuda_flags, "cuda_flags")
    link_flags = _strings(link_flags, "link_flags")
    defs = _defines(defines)
    tools = toolchain(cgc, nvcc)
    gencode = arch_flags(arch)
    key = {
        "format": FORMAT,
        "cgc": [tools.cgc, tool_version(tools.cgc), file_hash(tools.cgc)],
        "nvcc": [tools.nvcc, tool_version(tools.nvcc)],
        "runtime": [tools.runtime, file_hash(tools.runtime), tools.include],
        "cgraph": cgraph, "sources": sources, "defines": defs, "include_dirs": include_dirs,
        "arch": gencode, "cuda_flags": cuda_flags, "link_flags": link_flags,
    }
    key_hash = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    root = cache_root(cache_dir)
    entries = os.path.join(root, "builds", key_hash)
    found = _lookup(entries)
    if found:
        return found, False

    tmp_root = os.path.join(root, "tmp")
    os.makedirs(tmp_root, exist_ok=True)
    _clean_tmp(tmp_root)
    tmp = tempfile.mkdtemp(prefix=key_hash[:8] + "-", dir=tmp_root)
    try:
        stem = os.path.basename(cgraph)
        stem = stem[:-len(".cgraph")] if stem.endswith(".cgraph") else os.path.splitext(stem)[0]
        gen_c = os.path.join(tmp, stem + "_graph.c")
        deps_files = [os.path.join(tmp, stem + "_graph.d")]
        cmd = [tools.cgc, "-o", gen_c, "--depfile", deps_files[0]]
        for d in include_dirs:
            cmd += ["-I", d]
        for d in defs:
            cmd += ["-D", d]
        _run(cmd + [os.path.basename(cgraph)], os.path.dirname(cgraph), verbose)
        includes = ["-I", tmp, "-I", tools.include]
        for d in include_dirs:
            includes += ["-I", d]
        objects = [os.path.join(tmp, stem + "_graph.o")]
        deps_files.append(os.path.join(tmp, stem + "_graph.o.d"))
        _run([tools.nvcc, "-c", "-O2", "-Xcompiler", "-fPIC", "-DCGC_PROGRAM=" + PROGRAM,
              "-I", tmp, "-I", tools.include, "-MMD", "-MF", deps_files[-1], gen_c, "-o",
              objects[0]], tmp, verbose)
        for i, src in enumerate(sources):
            obj = os.path.join(tmp, "%d_%s.o" % (i, os.path.basename(src)))
            deps_files.append(obj + ".d")
            _run([tools.nvcc, "-c", "-O3", "-Xcompiler", "-fPIC"] + gencode + includes +
                 cuda_flags + ["-MMD", "-MF", deps_files[-1], src, "-o", obj], tmp, verbose)
            objects.append(obj)
        lib_name = "lib%s.so" % stem
        # CUDA's runtime goes in statically and its names stay inside the
        # library (--exclude-libs), bound there (-Bsymbolic): the kernels
        # are registered with the same runtime that launches them, whatever
        # other CUDA runtime the process has loaded (PyTorch's).
        _run([tools.nvcc, "-shared"] + gencode + ["-o", os.path.join(tmp, lib_name)] + objects +
             [tools.runtime, "-cudart", "static", "-Xlinker",
              "--exclude-libs,libcudart_static.a", "-Xlinker", "-Bsymbolic"] + link_flags,
             tmp, verbose)
        read = {cgraph, *sources}
        for d in deps_files:
            read.update(os.path.abspath(os.path.join(tmp, p)) for p in parse_depfile(d))
        tmp_real = os.path.realpath(tmp)
        read = sorted(p for p in read if not os.path.realpath(p).startswith(tmp_real + os.sep))
        deps = [[p, file_hash(p)] for p in read]
        meta = {"library": lib_name, "deps": deps, "key": key}
        with open(os.path.join(tmp, "deps.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
        result = hashlib.sha256(json.dumps(deps).encode()).hexdigest()[:16]
        final = os.path.join(entries, result)
        os.makedirs(entries, exist_ok=True)
        try:
            os.rename(tmp, final)
        except OSError:
            if not os.path.isfile(os.path.join(final, lib_name)):
                raise
            # Another process finished the same build first: use its result.
            shutil.rmtree(tmp, ignore_errors=True)
        return os.path.join(final, lib_name), True
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
