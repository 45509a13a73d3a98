#!/usr/bin/env python3
"""cgc.build's cache and toolchain, with the real cgc and a stand-in nvcc
(fake_nvcc.py): a second build of the same inputs runs nothing, a change
to any input (the .cgraph, a file it includes, a source, a header a source
includes, the runtime's header and library, defines, architectures, flags,
nvcc's environment, cgc, nvcc's version, a library link_flags names) or a
file appearing where it would be read in place of one builds again,
failures leave nothing behind, concurrent builds agree, a deleted library
is built again; the template companion; odd file names and paths nvcc
cannot take; the architecture chosen or refused; where cgc, the runtime
and nvcc are found; the depfile reader; arguments.  No CUDA needed."""
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
import types

import common

import cgc
from cgc import _build

FAKE_NVCC = os.path.join(common.HERE, "fake_nvcc.py")


class Setup(common.TempDir):
    """A prefix (bin/cgc, include/cgrt.h, lib/libcgrt.a), a copy of the
    decode step whose source also includes a header, a stand-in nvcc and an
    empty cache."""

    def setUp(self):
        super().setUp()
        self.prefix = os.path.join(self.tmp, "prefix")
        for d in ("bin", "include", "lib"):
            os.makedirs(os.path.join(self.prefix, d))
        os.symlink(common.cgc_exe(), os.path.join(self.prefix, "bin", "cgc"))
        for h in ("cgrt.h", "cgrt_abi.h"):
            shutil.copy(os.path.join(common.SOURCE, "runtime", h),
                        os.path.join(self.prefix, "include", h))
        self.write(os.path.join(self.prefix, "lib", "libcgrt.a"), "runtime 1\n")
        self.src = os.path.join(self.tmp, "src")
        sample = os.path.join(common.SOURCE, "samples", "decode_step")
        shutil.copytree(sample, self.src, ignore=shutil.ignore_patterns("main.c", "CMake*"))
        self.cu = os.path.join(self.src, "kernels", "decode_step.cu")
        with open(self.cu) as f:
            text = f.read()
        self.write(self.cu, '#include "extra.h"\n' + text)
        self.write(os.path.join(self.src, "kernels", "extra.h"), "// extra 1\n")
        self.nvcc = os.path.join(self.tmp, "nvcc")
        shutil.copy(FAKE_NVCC, self.nvcc)
        os.chmod(self.nvcc, os.stat(self.nvcc).st_mode | stat.S_IXUSR)
        self.cache = os.path.join(self.tmp, "cache")
        self.log = os.path.join(self.tmp, "nvcc.log")
        os.environ["FAKE_NVCC_LOG"] = self.log
        self.addCleanup(os.environ.pop, "FAKE_NVCC_LOG", None)
        self.cgraph = os.path.join(self.src, "decode_step.cgraph")

    def write(self, path, text):
        with open(path, "w") as f:
            f.write(text)

    def append(self, path, text):
        with open(path, "a") as f:
            f.write(text)

    def kwargs(self, **kw):
        args = dict(sources=[self.cu], cgc=self.prefix, nvcc=self.nvcc, arch="90",
                    cache_dir=self.cache)
        args.update(kw)
        return args

    def build(self, **kw):
        return _build.compile_library(self.cgraph, **self.kwargs(**kw))

    def nvcc_calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [l.split()[0] for l in f]

    def entries(self):
        root = os.path.join(self.cache, "builds")
        return sorted(os.path.join(k, e) for k in os.listdir(root)
                      for e in os.listdir(os.path.join(root, k))) if os.path.isdir(root) else []

    def leftovers(self):
        tmp = os.path.join(self.cache, "tmp")
        return os.listdir(tmp) if os.path.isdir(tmp) else []

    def build_in_four_processes(self, package_dir):
        """compile_library in 4 processes at once (the package imported from
        package_dir; the fake nvcc slowed down so that they overlap): what
        each printed, once all 4 ended with status 0."""
        code = textwrap.dedent("""
            import sys
            sys.path.insert(0, %r)
            import cgc._build as b
            print(b.compile_library(%r, **%r)[0])
            """ % (package_dir, self.cgraph, self.kwargs()))
        env = dict(os.environ, FAKE_NVCC_SLEEP="0.3")
        procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, env=env)
                 for _ in range(4)]
        outs = [p.communicate()[0] for p in procs]
        self.assertEqual([p.returncode for p in procs], [0] * 4, outs)
        return outs


class Cache(Setup):
    def test_second_build_does_nothing(self):
        path, built = self.build()
        self.assertTrue(built)
        self.assertTrue(path.startswith(os.path.join(self.cache, "builds") + os.sep))
        self.assertEqual(os.path.basename(path), "libdecode_step.so")
        with open(path) as f:
            self.assertTrue(f.read().startswith("library\n"))
        # --version once, the generated C, the source, the link.
        self.assertEqual(self.nvcc_calls(), ["--version", "-c", "-c", "-shared"])
        self.assertEqual(len(self.entries()), 1)
        self.assertEqual(self.leftovers(), [])
        import json
        with open(os.path.join(os.path.dirname(path), "deps.json")) as f:
            deps = [p for p, _ in json.load(f)["deps"]]
        for want in (self.cgraph, os.path.join(self.src, "kernels.cgraph"), self.cu,
                     os.path.join(self.src, "kernels", "extra.h"),
                     os.path.join(self.prefix, "include", "cgrt.h"),
                     os.path.join(self.prefix, "include", "cgrt_abi.h")):
            self.assertIn(want, deps)
        self.assertFalse([p for p in deps if p.startswith(os.path.join(self.cache, "tmp"))])

        # The same call again: nothing runs at all.
        runs = []
        real = subprocess.run

        def spy(cmd, *a, **k):
            runs.append(cmd)
            return real(cmd, *a, **k)
        subprocess.run = spy
        try:
            again, built = self.build()
        finally:
            subprocess.run = real
        self.assertEqual((again, built, runs), (path, False, []))
        os.remove(self.log)

        # In a new process: the tools' --version, and nothing else.
        code = textwrap.dedent("""
            import sys
            sys.path.insert(0, %r)
            import cgc._build as b
            path, built = b.compile_library(%r, **%r)
            print(path, built)
            """ % (os.path.join(common.SOURCE, "python"), self.cgraph, self.kwargs()))
        out = subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE,
                             text=True).stdout.split()
        self.assertEqual(out, [path, "False"])
        self.assertEqual(self.nvcc_calls(), ["--version"])

    def test_every_input_counts(self):
        first, _ = self.build()
        kernels = os.path.join(self.src, "kernels.cgraph")
        extra = os.path.join(self.src, "kernels", "extra.h")
        cgrt_h = os.path.join(self.prefix, "include", "cgrt.h")
        runtime = os.path.join(self.prefix, "lib", "libcgrt.a")
        edits = [("the .cgraph", self.cgraph), ("the file it includes", kernels),
                 ("the source", self.cu), ("a header the source includes", extra),
                 ("cgrt.h", cgrt_h), ("the runtime's library", runtime)]
        for what, path in edits:
            with open(path) as f:
                before = f.read()
            self.append(path, "// edited\n")
            _, built = self.build()
            self.assertTrue(built, "a change of %s builds again" % what)
            self.write(path, before)
            again, built = self.build()
            self.assertFalse(built, "%s as it was finds the first build" % what)
            self.assertEqual(again, first, what)
        options = [("defines", dict(defines={"LAYERS": 2})), ("arch", dict(arch="80")),
                   ("two archs", dict(arch=["80", "90"])),
                   ("include_dirs", dict(include_dirs=[self.src])),
                   ("cuda_flags", dict(cuda_flags=["-lineinfo"])),
                   ("link_flags", dict(link_flags=["-lcublas"])),
                   ("another source list", dict(sources=[self.cu, self.cu]))]
        for what, kw in options:
            path, built = self.build(**kw)
            self.assertTrue(built, what)
            self.assertNotEqual(path, first, what)
            self.assertEqual(self.build(**kw), (path, False), what)
        self.assertEqual(self.build(), (first, False))
        # The same architecture however it is spelled.
        for spelling in (90, "sm_90", "9.0", "compute_90"):
            self.assertEqual(self.build(arch=spelling), (first, False), spelling)
        # A new nvcc (its --version differs) and a new cgc (its bytes differ).
        with open(self.nvcc) as f:
            script = f.read()
        self.write(self.nvcc, script.replace("release 1.0", "release 1.1"))
        self.assertTrue(self.build()[1], "a new nvcc builds again")
        self.write(self.nvcc, script)
        self.assertEqual(self.build(), (first, False))
        cgc_copy = os.path.join(self.prefix, "bin", "cgc")
        os.remove(cgc_copy)
        shutil.copy(common.cgc_exe(), cgc_copy)
        self.assertEqual(self.build(), (first, False), "the same cgc, copied")
        with open(cgc_copy, "ab") as f:
            f.write(b"\0")
        self.assertTrue(self.build()[1], "another cgc builds again")
        self.assertEqual(self.leftovers(), [])

    def test_failures_leave_nothing(self):
        bad = os.path.join(self.src, "bad.cgraph")
        self.write(bad, "graph g {\n    buffer x: f32[0];\n}\n")
        with self.assertRaises(cgc.BuildError) as e:
            _build.compile_library(bad, **self.kwargs(sources=[]))
        msg = str(e.exception)
        self.assertIn("cgc failed (exit 1):", msg)
        self.assertIn("bad.cgraph:2:19: error[E0035]: dimension 0 of 'x' is 0; it must be at least 1",
                      msg)
        self.assertIn("--depfile", msg)
        os.environ["FAKE_NVCC_FAIL"] = "decode_step.cu"
        try:
            with self.assertRaises(cgc.BuildError) as e:
                self.build()
        finally:
            del os.environ["FAKE_NVCC_FAIL"]
        msg = str(e.exception)
        self.assertIn("nvcc failed (exit 1):", msg)
        self.assertIn("decode_step.cu(1): error: a failure asked for by FAKE_NVCC_FAIL", msg)
        self.assertEqual(self.entries(), [])
        self.assertEqual(self.leftovers(), [])
        self.assertTrue(self.build()[1])

    def test_concurrent_builds(self):
        outs = self.build_in_four_processes(os.path.join(common.SOURCE, "python"))
        paths = {o.strip() for o in outs}
        self.assertEqual(len(paths), 1, outs)
        path = paths.pop()
        self.assertTrue(os.path.isfile(path))
        self.assertEqual(len(self.entries()), 1)
        self.assertEqual(self.leftovers(), [])
        self.assertGreaterEqual(self.nvcc_calls().count("-shared"), 1)


class Toolchain(Setup):
    def test_where_cgc_is_found(self):
        exe = os.path.join(self.prefix, "bin", "cgc")
        self.assertEqual(_build.find_cgc(self.prefix), (exe, self.prefix))
        self.assertEqual(_build.find_cgc(exe), (exe, self.prefix))
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        os.environ["CGC_HOME"] = self.prefix
        self.assertEqual(_build.find_cgc(), (exe, self.prefix))
        del os.environ["CGC_HOME"]
        os.environ["PATH"] = os.path.join(self.prefix, "bin") + os.pathsep + saved["PATH"]
        self.assertEqual(_build.find_cgc(), (exe, self.prefix))
        os.environ["PATH"] = self.tmp
        with self.assertRaises(cgc.BuildError) as e:
            _build.find_cgc()
        self.assertEqual(str(e.exception), "cgc not found (PATH): pass cgc= (the executable or "
                         "its install prefix), set CGC_HOME to the prefix cgc was installed to, "
                         "or put cgc on PATH")
        os.environ["CGC_HOME"] = self.tmp
        with self.assertRaises(cgc.BuildError) as e:
            _build.find_cgc()
        self.assertEqual(str(e.exception), "cgc not found ($CGC_HOME: tried %s/bin/cgc): pass "
                         "cgc= (the executable or its install prefix), set CGC_HOME to the prefix "
                         "cgc was installed to, or put cgc on PATH" % self.tmp)

    def test_runtime_and_nvcc(self):
        self.assertEqual(_build.find_runtime(self.prefix), (
            os.path.join(self.prefix, "include"), os.path.join(self.prefix, "lib", "libcgrt.a")))
        os.remove(os.path.join(self.prefix, "lib", "libcgrt.a"))
        with self.assertRaises(cgc.BuildError) as e:
            self.build()
        self.assertEqual(str(e.exception), "the cgc runtime is not under %s (it needs "
                         "include/cgrt.h and lib/libcgrt.a, which `cmake --install` puts there "
                         "when cgc is built with the CUDA Toolkit)" % self.prefix)
        self.assertEqual(_build.find_nvcc(self.nvcc), self.nvcc)
        with self.assertRaises(cgc.BuildError) as e:
            _build.find_nvcc(os.path.join(self.tmp, "nope"))
        self.assertEqual(str(e.exception), "nvcc not found: %s is not an executable" %
                         os.path.join(self.tmp, "nope"))
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        os.environ["CUDA_HOME"] = self.tmp
        os.makedirs(os.path.join(self.tmp, "bin"))
        shutil.copy(self.nvcc, os.path.join(self.tmp, "bin", "nvcc"))
        self.assertEqual(_build.find_nvcc(), os.path.join(self.tmp, "bin", "nvcc"))

    def test_arch_flags(self):
        one = ["-gencode=arch=compute_90,code=[sm_90,compute_90]"]
        for spelling in (90, "90", "sm_90", "compute_90", "9.0", " 90 "):
            self.assertEqual(_build.arch_flags(spelling), one, spelling)
        self.assertEqual(_build.arch_flags("90a"),
                         ["-gencode=arch=compute_90a,code=[sm_90a,compute_90a]"])
        self.assertEqual(_build.arch_flags([80, "sm_90"]),
                         ["-gencode=arch=compute_80,code=[sm_80,compute_80]"] + one)
        saved = os.environ.get("CGC_CUDA_ARCH")
        os.environ["CGC_CUDA_ARCH"] = "80,90"
        try:
            self.assertEqual(len(_build.arch_flags(None)), 2)
        finally:
            if saved is None:
                del os.environ["CGC_CUDA_ARCH"]
            else:
                os.environ["CGC_CUDA_ARCH"] = saved
        for bad in ("hopper", "9", "sm_", "sm_9x", 9):
            with self.assertRaises(cgc.BuildError) as e:
                _build.arch_flags(bad)
            self.assertEqual(str(e.exception), "arch %r is no CUDA architecture: give a compute "
                             "capability such as 90, '90a', 'sm_90' or '9.0'" % (bad,))

    def test_arguments(self):
        cases = [
            (dict(sources=[3]), "sources must be a list of strings, got 3 in it"),
            (dict(sources=[os.path.join(self.tmp, "no.cu")]),
             "no such source file: %s" % os.path.join(self.tmp, "no.cu")),
            (dict(defines=["LAYERS=2"]), "defines must be a dict {NAME: value}, got ['LAYERS=2']"),
            (dict(defines={"2x": 1}), "defines: '2x' is not a constant's name"),
            (dict(defines={"LAYERS": 2.5}),
             "defines: LAYERS must be an integer (or its literal as a string), got 2.5"),
            (dict(include_dirs=5), "include_dirs must be a list of strings, got 5"),
            # Names of other types beside str ones: no TypeError from sorting them.
            (dict(defines={"LAYERS": 2, 2: 3}), "defines: 2 is not a constant's name"),
            (dict(defines={"LAYERS": 2, None: 3}), "defines: None is not a constant's name"),
            # bytes alone, as in a list: no TypeError from the paths' checks.
            (dict(sources=self.cu.encode()), "sources must be a list of strings, got %r" %
             self.cu.encode()),
            (dict(cuda_flags=b"-O3"), "cuda_flags must be a list of strings, got b'-O3'"),
        ]
        for kw, msg in cases:
            with self.assertRaises(cgc.BuildError, msg=msg) as e:
                self.build(**kw)
            self.assertEqual(str(e.exception), msg)
        with self.assertRaises(cgc.BuildError) as e:
            _build.compile_library(os.path.join(self.tmp, "no.cgraph"), **self.kwargs())
        self.assertEqual(str(e.exception), "no such .cgraph file: %s" %
                         os.path.join(self.tmp, "no.cgraph"))
        with self.assertRaises(cgc.BuildError) as e:
            _build.compile_library(self.cgraph.encode(), **self.kwargs())
        self.assertEqual(str(e.exception), "cgraph must be a path (a string), got %r" %
                         self.cgraph.encode())
        # A single source may be given as a string; a define as a string literal.
        self.assertTrue(self.build(sources=self.cu, defines={"LAYERS": "0x2"})[1])

    def test_cache_root(self):
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        self.assertEqual(cgc.cache_root("rel"), os.path.abspath("rel"))
        os.environ["CGC_CACHE"] = self.tmp
        self.assertEqual(cgc.cache_root(), self.tmp)
        del os.environ["CGC_CACHE"]
        os.environ["XDG_CACHE_HOME"] = os.path.join(self.tmp, "xdg")
        self.assertEqual(cgc.cache_root(), os.path.join(self.tmp, "xdg", "cgc"))
        del os.environ["XDG_CACHE_HOME"]
        os.environ["HOME"] = self.tmp
        self.assertEqual(cgc.cache_root(), os.path.join(self.tmp, ".cache", "cgc"))


PROGRAM = ("kernel k(inout x: f32*);\ngraph g {\n    buffer x: f32[4] = 0;\n"
           "    k(x) grid(1) block(32);\n}\n")


class Small(Setup):
    """Programs of their own, written in the test's folder."""

    def program(self, path, text=PROGRAM):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.write(path, text)
        return path

    def small(self, cgraph, **kw):
        kw.setdefault("sources", [])
        return _build.compile_library(cgraph, **self.kwargs(**kw))

    def nvcc_lines(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()


class Staleness(Small):
    """Everything a build reads is in its key or its list of files, and so
    is every file that would be read in place of one of them were it
    there."""

    def test_a_file_that_would_shadow_an_include(self):
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"),
                         'include "k.cgraph";\n' + PROGRAM.split("\n", 1)[1])
        inc = os.path.join(self.tmp, "inc")
        self.program(os.path.join(inc, "k.cgraph"), "kernel k(inout x: f32*);\n")
        first, built = self.small(a, include_dirs=[inc])
        self.assertTrue(built)
        self.assertEqual(self.small(a, include_dirs=[inc]), (first, False))
        # cgc looks beside the including file before the -I folders.
        beside = self.program(os.path.join(self.tmp, "a", "k.cgraph"),
                              "kernel k(in x: f32*);\n")
        path, built = self.small(a, include_dirs=[inc])
        self.assertTrue(built, "a k.cgraph beside a.cgraph, which cgc now reads")
        self.assertNotEqual(path, first)
        os.remove(beside)
        self.assertEqual(self.small(a, include_dirs=[inc]), (first, False))

    def test_a_header_that_would_shadow_one_a_source_includes(self):
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        src = os.path.join(self.tmp, "a", "k.cu")
        self.write(src, '#include "a_graph.h"\n#include "h.h"\n')
        for flags in ("include_dirs", "cuda_flags"):
            inc = os.path.join(self.tmp, flags)
            self.program(os.path.join(inc, "h.h"), "// the -I one\n")
            kw = {flags: [inc] if flags == "include_dirs" else ["-I", inc], "sources": [src]}
            first, built = self.small(a, **kw)
            self.assertTrue(built, flags)
            self.assertEqual(self.small(a, **kw), (first, False), flags)
            beside = self.program(os.path.join(self.tmp, "a", "h.h"), "// beside\n")
            self.assertTrue(self.small(a, **kw)[1], "h.h beside the source, with %s" % flags)
            os.remove(beside)
            self.assertEqual(self.small(a, **kw), (first, False), flags)

    def test_libraries_the_link_reads(self):
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        libs = os.path.join(self.tmp, "libs")
        archive = self.program(os.path.join(libs, "libextra.a"), "v1\n")
        early = os.path.join(self.tmp, "early")
        os.makedirs(early)
        for kw in (dict(link_flags=[archive]), dict(link_flags=["-Wl,--whole-archive," + archive]),
                   dict(link_flags=["-Xlinker", archive]),
                   dict(link_flags=["-L", early, "-L" + libs, "-lextra"]),
                   dict(link_flags=["--library-path=" + libs, "--library", "extra"])):
            self.write(archive, "v1\n")
            first, built = self.small(a, **kw)
            self.assertTrue(built, kw)
            self.assertEqual(self.small(a, **kw), (first, False), kw)
            self.write(archive, "v2, another archive\n")
            path, built = self.small(a, **kw)
            self.assertTrue(built, "the archive changed: %s" % kw)
            self.assertEqual(self.small(a, **kw), (path, False), kw)
        # A library of the name that appears in a folder searched earlier,
        # or a shared one beside the archive (which the linker prefers).
        kw = dict(link_flags=["-L", early, "-L" + libs, "-lextra"])
        base, _ = self.small(a, **kw)
        for newcomer in (os.path.join(early, "libextra.a"), os.path.join(libs, "libextra.so")):
            self.write(newcomer, "new\n")
            self.assertTrue(self.small(a, **kw)[1], newcomer)
            os.remove(newcomer)
            self.assertEqual(self.small(a, **kw), (base, False), newcomer)

    def test_nvcc_environment(self):
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        first, _ = self.small(a)
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        for var in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", "NVCC_CCBIN"):
            os.environ[var] = "-lineinfo"
            path, built = self.small(a)
            self.assertTrue(built, var)
            del os.environ[var]
        self.assertEqual(self.small(a), (first, False))

    def test_a_rewrite_that_keeps_size_and_time(self):
        """As cp -p and tar x do: the same size, the modification time put
        back; the change time still moves, within one process too."""
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        first, _ = self.small(a)
        st = os.stat(a)
        self.write(a, PROGRAM.replace("f32[4]", "f32[5]"))
        os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.assertEqual((os.stat(a).st_size, os.stat(a).st_mtime_ns), (st.st_size, st.st_mtime_ns))
        path, built = self.small(a)
        self.assertTrue(built)
        self.assertNotEqual(path, first)


class Templates(Small):
    def test_the_companion_is_compiled_and_linked(self):
        t = os.path.join(self.tmp, "t")
        header = self.program(os.path.join(t, "scale.cuh"),
                              "template <typename T, int N> __global__ void scale(T *x) "
                              "{ x[threadIdx.x] *= N; }\n")
        # A second template, declared in a file of another folder, beside
        # its header.
        self.program(os.path.join(t, "lib", "k.cgraph"),
                     'kernel add = add1<float>(inout x: f32*) from "add.cuh";\n')
        other = self.program(os.path.join(t, "lib", "add.cuh"),
                             "template <typename T> __global__ void add1(T *x) { x[0] += 1; }\n")
        a = self.program(os.path.join(t, "a.cgraph"),
                         'include "lib/k.cgraph";\n'
                         'kernel s = scale<float, 2>(inout x: f32*) from "scale.cuh";\n'
                         "graph g {\n    buffer x: f32[4] = 0;\n    s(x) grid(1) block(32);\n"
                         "    add(x) grid(1) block(1);\n}\n")
        first, built = self.small(a)
        self.assertTrue(built)
        compiles = [l.split() for l in self.nvcc_lines() if l.startswith("-c ")]
        companion = [c for c in compiles if c[c.index("-o") - 1].endswith("a_graph_templates.cu")]
        self.assertEqual(len(companion), 1, compiles)
        flags = companion[0]
        self.assertIn("-gencode=arch=compute_90,code=[sm_90,compute_90]", flags)
        dirs = [flags[i + 1] for i, f in enumerate(flags) if f == "-I"]
        self.assertLess(dirs.index(t), dirs.index(os.path.join(t, "lib")), dirs)
        link = [l.split() for l in self.nvcc_lines() if l.startswith("-shared")][0]
        self.assertIn(flags[flags.index("-o") + 1], link)
        import json
        with open(os.path.join(os.path.dirname(first), "deps.json")) as f:
            deps = [p for p, _ in json.load(f)["deps"]]
        self.assertIn(header, deps)
        self.assertIn(other, deps)
        # The templates' headers are the companion's: an edit builds again.
        for h in (header, other):
            self.append(h, "// edited\n")
            self.assertTrue(self.small(a)[1], h)


class Repair(Small):
    def test_a_deleted_library_is_built_again(self):
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        first, built = self.small(a)
        os.remove(first)
        for attempt in (1, 2):
            path, built = self.small(a)
            self.assertEqual((path, built), (first, attempt == 1), attempt)
            self.assertTrue(os.path.isfile(path))
        meta = os.path.join(os.path.dirname(first), "deps.json")
        self.write(meta, "{not json")
        self.assertEqual(self.small(a), (first, True))
        os.remove(meta)
        self.assertEqual(self.small(a), (first, True))
        self.assertEqual(self.small(a), (first, False))
        self.assertEqual(len(self.entries()), 1)
        self.assertEqual(self.leftovers(), [])

    def test_a_damaged_deps_json_is_built_again(self):
        """A deps.json that is JSON but not what a build writes (its deps or
        absent lists of another shape) is an entry to build again and
        replace, not an error."""
        import json
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        first, _ = self.small(a)
        meta = os.path.join(os.path.dirname(first), "deps.json")
        with open(meta) as f:
            good = json.load(f)
        for damage in ({"deps": 5}, {"deps": [["x"]]}, {"deps": [[None, None]]},
                       {"deps": [[first, 7]]}, {"deps": None}, {"absent": [3]},
                       {"absent": 1}):
            with open(meta, "w") as f:
                json.dump(dict(good, **damage), f)
            self.assertEqual(self.small(a), (first, True), damage)
            self.assertEqual(self.small(a), (first, False), damage)
            self.assertEqual(len(self.entries()), 1, damage)
            self.assertEqual(self.leftovers(), [], damage)

    def test_concurrent_repairs(self):
        """Processes that find the same broken entry at once each build, and
        all end with one complete entry."""
        first, _ = self.build()
        os.remove(first)
        outs = self.build_in_four_processes(os.path.dirname(os.path.dirname(_build.__file__)))
        self.assertEqual({o.strip() for o in outs}, {first}, outs)
        self.assertTrue(os.path.isfile(first))
        self.assertEqual(len(self.entries()), 1)
        self.assertEqual(self.leftovers(), [])
        self.assertEqual(self.build(), (first, False))


class Names(Small):
    """Any file or folder name builds (argument vectors, never a shell), or
    the error says what is wrong with it."""

    def test_odd_names(self):
        import contextlib
        import io
        import shlex
        odd = [os.path.join("tab\there", "a.cgraph"), os.path.join("o", "--version.cgraph"),
               os.path.join("-L x 'q' \"d\" $HOME;", "p q.cgraph"),
               os.path.join("h", "#1 $$x\\y.cgraph")]
        for rel in odd:
            path = self.program(os.path.join(self.tmp, rel))
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                lib, built = self.small(path, verbose=True)
            self.assertTrue(built, rel)
            self.assertTrue(os.path.isfile(lib), rel)
            stem = os.path.basename(rel)[:-len(".cgraph")]
            self.assertEqual(os.path.basename(lib), "lib%s.so" % re.sub(r"[\\$\t]", "_", stem))
            # What verbose prints runs in a shell as it ran.
            cgc_line = [l for l in err.getvalue().splitlines() if " --depfile " in l][0]
            words = shlex.split(cgc_line[len("cgc.build: ("):-1])
            self.assertEqual(words[:2], ["cd", os.path.dirname(path)], cgc_line)
            self.assertEqual(self.small(path), (lib, False), rel)

    def test_unincludable_names(self):
        """A quote or a backslash cannot be in `#include "..."`: those
        characters are '_' in the generated header's name, which a source
        includes."""
        path = self.program(os.path.join(self.tmp, "q", "a\"b'c.cgraph"))
        src = os.path.join(self.tmp, "q", "k.cu")
        self.write(src, '#include "a_b_c_graph.h"\n')
        lib, built = self.small(path, sources=[src])
        self.assertEqual(os.path.basename(lib), "liba_b_c.so")
        with open(os.path.join(os.path.dirname(lib), "deps.json")) as f:
            self.assertIn(src, f.read())

    def test_what_nvcc_cannot_take(self):
        """nvcc hands file names to a shell: a path it would expand (or run,
        for $(...)) is refused before anything runs, naming it."""
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        witness = os.path.join(self.tmp, "ran")
        bad = os.path.join(self.tmp, "x$(touch %s)" % witness)
        src = os.path.join(bad, "k.cu")
        self.program(src, "// k\n")
        template = self.program(os.path.join(bad, "t.cgraph"),
                                'kernel s = scale<float>(inout x: f32*) from "s.cuh";\n'
                                "graph g {\n    buffer x: f32[4] = 0;\n"
                                "    s(x) grid(1) block(32);\n}\n")
        self.write(os.path.join(bad, "s.cuh"), "// s\n")
        why = ("cannot be given to nvcc, which hands file names to a shell (that expands '$' "
               "and '`') and mangles '\"' and '\\' in the files it lists as read: rename it or "
               "move it")
        cases = [(a, dict(sources=[src]), "the source %s " % src),
                 (a, dict(include_dirs=[bad]), "the include folder %s " % bad),
                 (a, dict(cache_dir=os.path.join(self.tmp, "c`d")),
                  "the cache folder %s " % os.path.join(self.tmp, "c`d", "tmp")),
                 (a, dict(include_dirs=[os.path.join(self.tmp, "e\\f")]),
                  "the include folder %s " % os.path.join(self.tmp, "e\\f")),
                 (a, dict(include_dirs=[os.path.join(self.tmp, 'g"h')]),
                  "the include folder %s " % os.path.join(self.tmp, 'g"h')),
                 (template, {}, "the folder of a template's header, %s " % bad)]
        for cgraph, kw, what in cases:
            with self.assertRaises(cgc.BuildError, msg=what) as e:
                self.small(cgraph, **kw)
            self.assertEqual(str(e.exception), what + why)
        self.assertFalse(os.path.exists(witness))
        self.assertEqual(self.nvcc_calls(), ["--version", "-c"])
        self.assertEqual(self.entries(), [])
        self.assertEqual(self.leftovers(), [])

    def test_line_break(self):
        path = self.program(os.path.join(self.tmp, "n\nl", "a.cgraph"))
        with self.assertRaises(cgc.BuildError) as e:
            self.small(path)
        self.assertEqual(str(e.exception), ".cgraph file %r has a line break in its name, which "
                         "no depfile can hold: rename it" % path)

    def test_cache_folder_in_the_way(self):
        a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))
        file = os.path.join(self.tmp, "file")
        self.write(file, "x")
        with self.assertRaises(cgc.BuildError) as e:
            self.small(a, cache_dir=file)
        self.assertEqual(str(e.exception), "the cache folder %s is a file, not a folder: remove "
                         "it, or pass cache_dir= (or set CGC_CACHE) naming a folder" % file)
        below = os.path.join(file, "cache")
        with self.assertRaises(cgc.BuildError) as e:
            self.small(a, cache_dir=below)
        self.assertEqual(str(e.exception), "cannot make the cache folder %s (Not a directory): "
                         "pass cache_dir= (or set CGC_CACHE) naming a folder that can be "
                         "written" % os.path.join(below, "tmp"))
        with open(file) as f:
            self.assertEqual(f.read(), "x")


class Arch(Small):
    """arch=None: $CGC_CUDA_ARCH, else the GPU here, said on stderr; with
    neither, a refusal, never nvcc's default architecture."""

    def setUp(self):
        super().setUp()
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        os.environ.pop("CGC_CUDA_ARCH", None)
        # A PATH with python3 (the stand-in nvcc's interpreter) and,
        # where a test writes one, a stand-in nvidia-smi.
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        os.symlink(sys.executable, os.path.join(self.bin, "python3"))
        os.environ["PATH"] = self.bin
        self.addCleanup(_build._memo.pop, "smi", None)
        _build._memo.pop("smi", None)
        torch = sys.modules.pop("torch", None)
        if torch is not None:
            self.addCleanup(sys.modules.__setitem__, "torch", torch)
        self.a = self.program(os.path.join(self.tmp, "a", "a.cgraph"))

    def smi(self, out, status=0):
        path = os.path.join(self.bin, "nvidia-smi")
        self.write(path, "#!/bin/sh\nprintf '%s'\nexit %d\n" % (out, status))
        os.chmod(path, 0o755)
        _build._memo.pop("smi", None)

    def build_none(self):
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            result = self.small(self.a, arch=None)
        return result, err.getvalue()

    def test_no_gpu_refuses(self):
        refusal = ("no architecture to build for: arch= is not given, CGC_CUDA_ARCH is not set, "
                   "and no GPU was found here (%s). Pass arch= the compute capability of the GPU "
                   "that will load the library (90 for an H100 or H200; a list for several), or "
                   "set CGC_CUDA_ARCH")
        for smi, why in ((None, "nvidia-smi is not on PATH"), ("", "nvidia-smi lists no GPU"),
                         ("No devices were found\n", "nvidia-smi lists no GPU")):
            if smi is not None:
                self.smi(smi, 0 if smi == "" else 6)
            with self.assertRaises(cgc.BuildError) as e:
                self.build_none()
            self.assertEqual(str(e.exception), refusal % why)
        sys.modules["torch"] = types.SimpleNamespace(cuda=types.SimpleNamespace(
            is_available=lambda: False))
        self.addCleanup(sys.modules.pop, "torch", None)
        with self.assertRaises(cgc.BuildError) as e:
            self.build_none()
        self.assertEqual(str(e.exception), refusal % "PyTorch sees no GPU; nvidia-smi lists no GPU")
        self.assertEqual(self.entries(), [])
        self.assertEqual(self.nvcc_calls(), [])

    def test_the_gpu_here_and_said(self):
        self.smi("9.0\n")
        (lib, built), err = self.build_none()
        self.assertTrue(built)
        self.assertEqual(err, "cgc.build: building a.cgraph for sm_90 (arch=None: the GPU here, "
                         "from nvidia-smi)\n")
        self.assertEqual(self.small(self.a, arch="90"), (lib, False))
        self.assertEqual(self.build_none(), ((lib, False), ""))
        sys.modules["torch"] = types.SimpleNamespace(cuda=types.SimpleNamespace(
            is_available=lambda: True, get_device_capability=lambda: (8, 0)))
        self.addCleanup(sys.modules.pop, "torch", None)
        (lib80, built), err = self.build_none()
        self.assertTrue(built)
        self.assertEqual(err, "cgc.build: building a.cgraph for sm_80 (arch=None: the GPU here, "
                         "from PyTorch's current device)\n")
        del sys.modules["torch"]
        os.environ["CGC_CUDA_ARCH"] = "80,90a"
        (_, built), err = self.build_none()
        self.assertEqual(err, "cgc.build: building a.cgraph for sm_80, sm_90a (arch=None: "
                         "$CGC_CUDA_ARCH)\n")


class Depfile(common.TempDir):
    def test_escapes(self):
        path = os.path.join(self.tmp, "x.d")
        with open(path, "w") as f:
            f.write("out/a\\ b.o : /x/a\\ b.cu \\\n  /y/h\\#1.h /y/c\\\\d.h /z/$$HOME.h\n"
                    "phony.h:\n")
        self.assertEqual(_build.parse_depfile(path),
                         ["/x/a b.cu", "/y/h#1.h", "/y/c\\d.h", "/z/$HOME.h"])

    def test_cgc_depfile(self):
        """What cgc itself writes, for a file with a space and a '#' in its
        name."""
        d = os.path.join(self.tmp, "a b#")
        os.makedirs(d)
        with open(os.path.join(d, "inc.cgraph"), "w") as f:
            f.write("const N = 4;\n")
        with open(os.path.join(d, "p q.cgraph"), "w") as f:
            f.write('include "inc.cgraph";\ngraph g {\n    buffer x: f32[N];\n}\n')
        common.run([common.cgc_exe(), "-o", os.path.join(self.tmp, "o.c"), "--depfile",
                    os.path.join(self.tmp, "o.d"), "p q.cgraph"], cwd=d)
        self.assertEqual(_build.parse_depfile(os.path.join(self.tmp, "o.d")),
                         [os.path.join(os.path.realpath(d), "p q.cgraph"),
                          os.path.join(os.path.realpath(d), "inc.cgraph")])


if __name__ == "__main__":
    common.cgc_exe()
    common.main()
