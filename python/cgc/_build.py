"""cgc.build: cgc and nvcc into a shared library, cached.

A build runs cgc on the .cgraph (in its folder, with --depfile), compiles
the generated C with -DCGC_PROGRAM=cgc_program, the companion of template
kernels when cgc writes one and each source with nvcc (-MMD), and links
them with the runtime's static library and CUDA's static runtime into
lib<name>.so.  Everything is written in a fresh folder under the cache's
tmp/ and renamed into place at the end, so a concurrent build or reader
never sees half a result.  Commands are argument vectors, never shell
text.

The cache.  A build's key is the hash of everything it was asked (the
paths of the .cgraph and the sources, the defines, include folders,
architectures and flags, nvcc's environment variables) and of its tools
(cgc's --version and the hash of its executable, nvcc's --version, the
hash of libcgrt.a).  Under that key each result keeps the list of files it
read (the .cgraph and what it includes, from cgc's depfile; the companion's,
the sources' and the headers they include, from nvcc's) with their hashes,
the libraries link_flags name with their size and modification time, and
the paths where a file would be read in place of one of those were it
there (the same name in another folder searched).  A call whose key has
a result whose files all are as they were, and none of whose paths has
appeared, returns it and runs nothing: no cgc, no nvcc; within one process
not even --version (tools are known by their path, size and modification
and change times).
"""
import errno
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from ._errors import BuildError
from ._graph import PROGRAM

FORMAT = "cgc-python-build 2"  # what the commands below make; raise it when they change

_memo = {}


def _stat_key(kind, path):
    # The change time too: a rewrite that keeps the size and puts the
    # modification time back (cp -p, tar x) still moves it.
    st = os.stat(path)
    return (kind, path, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


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
    """(the GPU's compute capability, '90', and where it was read), from
    PyTorch when it is imported, else nvidia-smi (a process of its own, so
    that this process does not initialise CUDA before it forks); or (None,
    why no GPU was found)."""
    why = []
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                major, minor = torch.cuda.get_device_capability()
                return "%d%d" % (major, minor), "PyTorch's current device"
            why.append("PyTorch sees no GPU")
        except Exception as e:
            why.append("PyTorch cannot say (%s)" % e)
    if "smi" not in _memo:
        smi = shutil.which("nvidia-smi")
        if not smi:
            _memo["smi"] = (None, "nvidia-smi is not on PATH")
        else:
            try:
                r = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   timeout=30)
                lines = r.stdout.split() if r.returncode == 0 else []
                if lines and re.fullmatch(r"\d+\.\d+", lines[0]):
                    _memo["smi"] = (lines[0].replace(".", ""), "nvidia-smi")
                else:
                    _memo["smi"] = (None, "nvidia-smi lists no GPU")
            except (OSError, subprocess.SubprocessError) as e:
                _memo["smi"] = (None, "nvidia-smi failed (%s)" % e)
    arch, said = _memo["smi"]
    return (arch, said) if arch else (None, "; ".join(why + [said]))


def resolve_arch(arch):
    """(nvcc's -gencode flags for arch, what chose them).  arch: '90', 90,
    'sm_90', '9.0', '90a', a list of them, or None: $CGC_CUDA_ARCH
    (comma-separated), else the GPU here; with neither, BuildError, for a
    library built for nvcc's default architecture may not run on the GPU
    it is loaded on.  What chose them is None when arch was given."""
    origin = None
    if arch is None:
        if os.environ.get("CGC_CUDA_ARCH"):
            arch, origin = os.environ["CGC_CUDA_ARCH"], "$CGC_CUDA_ARCH"
        else:
            arch, why = _detect_arch()
            if arch is None:
                raise BuildError(
                    "no architecture to build for: arch= is not given, CGC_CUDA_ARCH is not "
                    "set, and no GPU was found here (%s). Pass arch= the compute capability "
                    "of the GPU that will load the library (90 for an H100 or H200; a list for "
                    "several), or set CGC_CUDA_ARCH" % why)
            origin = "the GPU here, from " + why
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
    if not flags:
        raise BuildError("arch %r names no CUDA architecture" % (arch,))
    return flags, origin


def arch_flags(arch):
    """nvcc's -gencode flags for arch (see resolve_arch)."""
    return resolve_arch(arch)[0]


def parse_depfile(path):
    """Every prerequisite a Makefile-style depfile names (cgc's, nvcc's):
    escaped spaces, '#' and '\\', '$$', continued lines.  Words are apart
    by spaces only: a tab is part of a name, as gcc and nvcc write one
    (unescaped), and so is an escaped one."""
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
            if nxt in " \t#\\":
                word.append(nxt)
                i += 2
                continue
        if ch == "$" and text[i + 1:i + 2] == "$":
            word.append("$")
            i += 2
            continue
        if ch == " ":
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


def _shell(cmd, cwd):
    """A command as a shell would take it, to show or paste: every word quoted
    where it needs to be (the build itself passes argument vectors)."""
    return "(cd %s && %s)" % (shlex.quote(cwd), shlex.join(cmd))


def _run(cmd, cwd, verbose):
    """Runs one build step; BuildError with the command and its output if it
    fails."""
    if verbose:
        print("cgc.build: " + _shell(cmd, cwd), file=sys.stderr, flush=True)
    try:
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace")
    except OSError as e:
        raise BuildError("%s: %s" % (cmd[0], e)) from None
    if verbose and r.stdout:
        print(r.stdout, end="", file=sys.stderr, flush=True)
    if r.returncode != 0:
        raise BuildError("%s failed (exit %d):\n  %s\n%s" % (
            os.path.basename(cmd[0]), r.returncode, _shell(cmd, cwd), r.stdout.rstrip()))
    return r.stdout


def _check_definitions(nvcc, src, obj, flags, header, cwd):
    """After src failed to compile: what the generated header's check of the
    kernels' definitions says (doc/language.md, section 6.1), a line each,
    or ''.  src is compiled again with CGC_KERNEL_CHECK, where the header
    declares no kernel, and the header's end follows it, which compares the
    parameters of each kernel that src defines with the .cgraph."""
    check = obj + ".cgc-check.cu"
    with open(check, "w") as f:
        f.write("#define CGC_KERNEL_CHECK 1\n#include \"%s\"\n#define CGC_KERNEL_CHECK_END 1\n"
                "#include \"%s\"\n" % (os.path.abspath(src), header))
    try:
        r = subprocess.run([nvcc, "-c"] + flags + [check, "-o", obj + ".cgc-check.o"], cwd=cwd,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
    except OSError:
        return ""
    finally:
        for f in (check, obj + ".cgc-check.o"):
            if os.path.exists(f):
                os.unlink(f)
    found = re.findall(r'static assertion failed with "(kernel \'.*)"', r.stdout)
    return "\n".join("%s: error: %s" % (src, m) for m in found)


def _is_path(value):
    """A str, or a path-like object whose path is a str (not bytes)."""
    return isinstance(value, (str, os.PathLike)) and isinstance(os.fspath(value), str)


def _strings(value, what):
    if value is None:
        return []
    if _is_path(value):
        return [os.fspath(value)]
    if isinstance(value, (bytes, os.PathLike)):
        raise BuildError("%s must be a list of strings, got %r" % (what, value))
    try:
        items = list(value)
    except TypeError:
        raise BuildError("%s must be a list of strings, got %r" % (what, value)) from None
    for v in items:
        if not _is_path(v):
            raise BuildError("%s must be a list of strings, got %r in it" % (what, v))
    return [os.fspath(v) for v in items]


def _paths(paths, what):
    """Absolute paths; a line break in one is refused, for a depfile cannot
    name that file."""
    out = []
    for p in paths:
        if "\n" in p:
            raise BuildError("%s %r has a line break in its name, which no depfile can hold: "
                             "rename it" % (what, p))
        out.append(os.path.abspath(p))
    return out


def _defines(defines):
    if defines is None:
        return []
    if not isinstance(defines, dict):
        raise BuildError("defines must be a dict {NAME: value}, got %r" % (defines,))
    for name, value in defines.items():  # before sorting, which needs str names
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise BuildError("defines: %r is not a constant's name" % (name,))
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise BuildError("defines: %s must be an integer (or its literal as a string), got "
                             "%r" % (name, value))
    return ["%s=%s" % (name, value) for name, value in sorted(defines.items())]


def _generated_stem(cgraph):
    """NAME of NAME_graph.c, NAME_graph.h and libNAME.so: the .cgraph's file
    name less .cgraph, each character that `#include "..."` cannot hold
    (quotes, backslash, control characters) or nvcc cannot be given ('$',
    '`', see _NVCC_UNSAFE) made '_'."""
    stem = os.path.basename(cgraph)
    stem = stem[:-len(".cgraph")] if stem.endswith(".cgraph") else os.path.splitext(stem)[0]
    return re.sub(r"[\"'\\$`\x00-\x1f\x7f]", "_", stem)


# nvcc runs its steps through a shell, where '$' and '`' expand (a folder
# named x$(cmd) runs cmd), and its depfiles lose what follows a '"' and
# turn '\\' into '/' (CUDA 13.0).
_NVCC_UNSAFE = re.compile(r'[$`"\\]')


def _nvcc_paths(paths, what):
    """BuildError for the first of paths that nvcc would not take as it is."""
    for p in paths:
        if _NVCC_UNSAFE.search(p):
            raise BuildError("%s %s cannot be given to nvcc, which hands file names to a shell "
                             "(that expands '$' and '`') and mangles '\"' and '\\' in the "
                             "files it lists as read: rename it or move it" % (what, p))


def _stat_signature(path):
    st = os.stat(path)
    return "stat %d %d" % (st.st_size, st.st_mtime_ns)


def _signature(path, how):
    """What a file read by the build is known by: its bytes' hash, or, for
    a library the link reads ("stat"), its size and modification time (a
    CUDA library is hundreds of megabytes to hash at every lookup)."""
    return _stat_signature(path) if how == "stat" else file_hash(path)


def _deps_match(meta):
    for path, digest in meta.get("deps", []):
        try:
            if _signature(path, "stat" if digest.startswith("stat ") else "hash") != digest:
                return False
        except OSError:
            return False
    return not any(os.path.exists(p) for p in meta.get("absent", []))


def _read_entry(entry):
    """An entry's deps.json, when it is complete (deps.json and the library
    there); else None."""
    try:
        with open(os.path.join(entry, "deps.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("library"), str):
        return None
    # What a build writes: deps [[path, digest], ...] and absent [path, ...];
    # anything else is a damaged entry, built again and replaced.
    deps, absent = meta.get("deps", []), meta.get("absent", [])
    if not isinstance(deps, list) or not all(
            isinstance(d, list) and len(d) == 2 and all(isinstance(s, str) for s in d)
            for d in deps):
        return None
    if not isinstance(absent, list) or not all(isinstance(p, str) for p in absent):
        return None
    return meta if os.path.isfile(os.path.join(entry, meta["library"])) else None


def _lookup(entries):
    """A result under a key whose files all are as they were and where no
    file that would be read in their place has appeared, or None."""
    try:
        names = sorted(os.listdir(entries))
    except OSError:
        return None
    for name in names:
        entry = os.path.join(entries, name)
        meta = _read_entry(entry)
        if meta is not None and _deps_match(meta):
            return os.path.join(entry, meta["library"])
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


def _cache_folder(root, path):
    """Makes a folder of the cache at root; BuildError, saying what is in the
    way, when it cannot."""
    if os.path.exists(root) and not os.path.isdir(root):
        raise BuildError("the cache folder %s is a file, not a folder: remove it, or pass "
                         "cache_dir= (or set CGC_CACHE) naming a folder" % root)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise BuildError("cannot make the cache folder %s (%s): pass cache_dir= (or set "
                         "CGC_CACHE) naming a folder that can be written" % (
                             path, e.strerror or e)) from None


def _include_dirs(flags):
    """The absolute folders nvcc's -I, -IDIR, --include-path DIR and
    --include-path=DIR name in flags (nvcc runs in the build's own folder,
    from which it would take a relative one)."""
    dirs = []
    for i, f in enumerate(flags):
        for opt in ("-I", "--include-path"):
            if f == opt and i + 1 < len(flags):
                dirs.append(flags[i + 1])
            elif f.startswith(opt + "=") or (opt == "-I" and len(f) > 2 and f.startswith(opt)):
                dirs.append(f[len(opt) + (f[len(opt)] == "="):])
    return [d for d in dirs if os.path.isabs(d)]


def _shadows(found, roots, skip):
    """Where a file would be read in place of one in found, were it there:
    each file's name relative to each folder of roots or of found that holds
    it, in every other of those folders, where nothing is now (a search
    path's order is not known here, so every other folder counts).  Paths
    under skip (the build's own folder) are left out."""
    found = [os.path.realpath(p) for p in found]
    folders = []
    for d in [os.path.realpath(r) for r in roots] + [os.path.dirname(p) for p in found]:
        if d not in folders and not (d + os.sep).startswith(skip + os.sep):
            folders.append(d)
    absent = set()
    for p in found:
        for t in folders:
            rel = os.path.relpath(p, t)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep):
                continue
            for s in folders:
                c = os.path.join(s, rel)
                if s != t and not os.path.exists(c):
                    absent.add(c)
    return absent


def _link_inputs(link_flags, nvcc):
    """(the files the link reads that link_flags name, paths where a library
    of a -l would be found first were it there).  Files: every absolute
    path among the flags (also in -Xlinker and -Wl, lists); a -lNAME's
    libNAME.so or libNAME.a in the -L folders, then CUDA's library folder
    beside nvcc.  A library found nowhere there (a system library) is not
    followed."""
    words, libdirs, names = [], [], []
    # nvcc's options that take a value: the short and the long spelling
    # (the value the next flag), the long one's "--long=VALUE", the short
    # one's joined form, where the value goes, and whether it is a comma list.
    options = (("-Xlinker", "--linker-options", "-Wl,", words, True),
               ("-L", "--library-path", "-L", libdirs, False),
               ("-l", "--library", "-l", names, False))
    i = 0
    while i < len(link_flags):
        f = link_flags[i]
        nxt = link_flags[i + 1] if i + 1 < len(link_flags) else None
        for short, long_, joined, into, is_list in options:
            if f in (short, long_) and nxt is not None:
                value = nxt
                i += 1
            elif f.startswith(long_ + "="):
                value = f[len(long_) + 1:]
            elif f.startswith(joined):
                value = f[len(joined):]
            else:
                continue
            into += value.split(",") if is_list else [value]
            break
        else:
            words.append(f)
        i += 1
    for w in words:  # the linker's own -L and -l
        if w.startswith("-L") and len(w) > 2:
            libdirs.append(w[2:])
        elif w.startswith("-l") and len(w) > 2:
            names.append(w[2:])
    files = {os.path.abspath(w) for w in words if os.path.isabs(w) and os.path.isfile(w)}
    cuda = os.path.dirname(os.path.dirname(nvcc))
    search = [d for d in libdirs if os.path.isabs(d)] + [
        os.path.join(cuda, d) for d in ("lib64", "lib")]
    absent = set()
    for name in names:
        exact = name[1:] if name.startswith(":") else None
        candidates = [exact] if exact else ["lib%s.so" % name, "lib%s.a" % name]
        looked = []
        for d in search:
            hit = next((os.path.join(d, c) for c in candidates
                        if os.path.isfile(os.path.join(d, c))), None)
            looked += [os.path.join(d, c) for c in candidates]
            if hit:
                files.add(hit)
                absent.update(p for p in looked if not os.path.exists(p))
                break
    return files, absent


def _install(tmp, final, tmp_root):
    """Renames the finished build (tmp) into place.  Where a complete entry
    is there already (another process finished the same build first), that
    one is kept and tmp goes; where a broken one is (its library deleted),
    it is moved aside first."""
    for _ in range(16):
        try:
            os.rename(tmp, final)
            return
        except OSError as e:
            error = e
        if _read_entry(final) is not None:
            shutil.rmtree(tmp, ignore_errors=True)
            return
        if error.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
            raise BuildError("cannot put the build in place at %s: %s" % (
                final, error.strerror or error)) from None
        aside = tempfile.mkdtemp(prefix="broken-", dir=tmp_root)
        moved = os.path.join(aside, "entry")
        try:
            os.rename(final, moved)
        except FileNotFoundError:
            pass  # another process moved it first
        except OSError as e:
            shutil.rmtree(aside, ignore_errors=True)
            raise BuildError("the cache entry %s is incomplete and cannot be replaced (%s): "
                             "delete it" % (final, e.strerror or e)) from None
        if _read_entry(moved) is not None:
            # Another process put a complete one there meanwhile: back it goes.
            try:
                os.rename(moved, final)
            except OSError:
                pass
        shutil.rmtree(aside, ignore_errors=True)
    raise BuildError("cannot put the build in place at %s: other processes keep replacing it" %
                     final)


def compile_library(cgraph, sources=(), defines=None, arch=None, include_dirs=(), cgc=None,
                    nvcc=None, cuda_flags=(), link_flags=(), cache_dir=None, verbose=False):
    """(the library's path, whether this call built it): see cgc.build."""
    if not _is_path(cgraph):
        raise BuildError("cgraph must be a path (a string), got %r" % (cgraph,))
    cgraph = _paths([os.fspath(cgraph)], ".cgraph file")[0]
    if not os.path.isfile(cgraph):
        raise BuildError("no such .cgraph file: %s" % cgraph)
    sources = _paths(_strings(sources, "sources"), "source")
    for s in sources:
        if not os.path.isfile(s):
            raise BuildError("no such source file: %s" % s)
    include_dirs = _paths(_strings(include_dirs, "include_dirs"), "include folder")
    cuda_flags = _strings(cuda_flags, "cuda_flags")
    link_flags = _strings(link_flags, "link_flags")
    defs = _defines(defines)
    tools = toolchain(cgc, nvcc)
    gencode, arch_origin = resolve_arch(arch)
    _nvcc_paths(sources, "the source")
    _nvcc_paths(include_dirs, "the include folder")
    _nvcc_paths([tools.include, tools.runtime], "the runtime's")
    key = {
        "format": FORMAT,
        "cgc": [tools.cgc, tool_version(tools.cgc), file_hash(tools.cgc)],
        "nvcc": [tools.nvcc, tool_version(tools.nvcc)],
        # nvcc reads these as flags of every command.
        "nvcc_env": [os.environ.get(v) for v in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
                                                 "NVCC_CCBIN")],
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
    _nvcc_paths([tmp_root], "the cache folder")
    _cache_folder(root, tmp_root)
    _cache_folder(root, entries)
    _clean_tmp(tmp_root)
    try:
        tmp = tempfile.mkdtemp(prefix=key_hash[:8] + "-", dir=tmp_root)
    except OSError as e:
        raise BuildError("cannot write in the cache folder %s: %s" % (
            tmp_root, e.strerror or e)) from None
    tmp_real = os.path.realpath(tmp)
    try:
        stem = _generated_stem(cgraph)
        if arch_origin:
            chosen = ", ".join(re.search(r"code=\[(\w+),", g).group(1) for g in gencode)
            print("cgc.build: building %s for %s (arch=None: %s)" % (
                os.path.basename(cgraph), chosen, arch_origin), file=sys.stderr, flush=True)
        src_dir, src_name = os.path.split(cgraph)
        gen_c = os.path.join(tmp, stem + "_graph.c")
        companion = os.path.join(tmp, stem + "_graph_templates.cu")
        cgc_dep = os.path.join(tmp, stem + "_graph.d")
        cmd = [tools.cgc, "-o", gen_c, "--depfile", cgc_dep]
        for d in include_dirs:
            cmd += ["-I", d]
        for d in defs:
            cmd += ["-D", d]
        # A name that begins with '-' would be an option: ./NAME is the file.
        _run(cmd + ["./" + src_name if src_name.startswith("-") else src_name], src_dir,
             verbose)
        cgc_read = [os.path.abspath(os.path.join(src_dir, p)) for p in parse_depfile(cgc_dep)]
        # (depfile, the folders its command searched), for each nvcc step.
        steps = []
        objects = []

        def nvcc_c(src, obj, flags, searched):
            dep = obj + ".d"
            _run([tools.nvcc, "-c"] + flags + ["-MMD", "-MF", dep, src, "-o", obj], tmp,
                 verbose)
            objects.append(obj)
            steps.append((dep, searched))

        nvcc_c(gen_c, os.path.join(tmp, stem + "_graph.o"),
               ["-O2", "-Xcompiler", "-fPIC", "-DCGC_PROGRAM=" + PROGRAM, "-I", tmp, "-I",
                tools.include], [tools.include])

        def search(dirs):
            return [w for d in dirs for w in ("-I", d)]

        flag_dirs = _include_dirs(cuda_flags)
        if os.path.isfile(companion):
            # The template kernels' instantiations, which cgc writes when a
            # graph uses one: their headers are found as cgc_add_graph finds
            # them (the .cgraph's folder, include_dirs), then in the folders
            # of the other files cgc read, which declare templates.
            dirs = [src_dir] + include_dirs
            for p in cgc_read:
                if os.path.dirname(p) not in dirs:
                    dirs.append(os.path.dirname(p))
            _nvcc_paths(dirs, "the folder of a template's header,")
            nvcc_c(companion, os.path.join(tmp, stem + "_graph_templates.o"),
                   ["-O3", "-Xcompiler", "-fPIC"] + gencode + search([tmp, tools.include] + dirs) +
                   cuda_flags, [tools.include] + dirs + flag_dirs)
        for i, src in enumerate(sources):
            obj = os.path.join(tmp, "%d_%s.o" % (i, os.path.basename(src)))
            flags = (["-O3", "-Xcompiler", "-fPIC"] + gencode +
                     search([tmp, tools.include] + include_dirs) + cuda_flags)
            try:
                nvcc_c(src, obj, flags, [tools.include] + include_dirs + flag_dirs)
            except BuildError as e:
                found = _check_definitions(tools.nvcc, src, obj, flags,
                                           os.path.join(tmp, stem + "_graph.h"), tmp)
                if not found:
                    raise
                raise BuildError("%s\n%s" % (e, found)) from None
        lib_name = "lib%s.so" % stem
        # CUDA's runtime goes in statically and its names stay inside the
        # library (--exclude-libs), bound there (-Bsymbolic): the kernels
        # are registered with the same runtime that launches them, whatever
        # other CUDA runtime the process has loaded (PyTorch's).
        _run([tools.nvcc, "-shared"] + gencode + ["-o", os.path.join(tmp, lib_name)] + objects +
             [tools.runtime, "-cudart", "static", "-Xlinker",
              "--exclude-libs,libcudart_static.a", "-Xlinker", "-Bsymbolic"] + link_flags,
             tmp, verbose)

        def outside(paths):
            return {p for p in paths if not os.path.realpath(p).startswith(tmp_real + os.sep)}

        read = outside({cgraph, *cgc_read})
        absent = _shadows(read, include_dirs, tmp_real)
        read |= set(sources)
        for dep, searched in steps:
            files = outside(os.path.abspath(os.path.join(tmp, p)) for p in parse_depfile(dep))
            absent |= _shadows(files, searched, tmp_real)
            read |= files
        linked, link_absent = _link_inputs(link_flags, tools.nvcc)
        try:
            deps = [[p, file_hash(p)] for p in sorted(read - linked)]
            deps += [[p, _stat_signature(p)] for p in sorted(linked)]
        except OSError as e:
            raise BuildError("the build read %s, cgc's or nvcc's depfile says, but it cannot be "
                             "read now (%s)" % (e.filename, e.strerror or e)) from None
        absent = sorted((absent | link_absent) - {os.path.realpath(p) for p in read | linked})
        meta = {"library": lib_name, "deps": deps, "absent": absent, "key": key}
        with open(os.path.join(tmp, "deps.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
        result = hashlib.sha256(json.dumps([deps, absent]).encode()).hexdigest()[:16]
        final = os.path.join(entries, result)
        _install(tmp, final, tmp_root)
        return os.path.join(final, lib_name), True
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
