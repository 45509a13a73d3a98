#!/usr/bin/env python3
"""cgc.build's cache and toolchain, with the real cgc and a stand-in nvcc
(fake_nvcc.py): a second build of the same inputs runs nothing, a change
to any input (the .cgraph, a file it includes, a source, a header a source
includes, the runtime's header and library, defines, architectures, flags,
cgc, nvcc's version) builds again, failures leave nothing behind,
concurrent builds agree; where cgc, the runtime and nvcc are found; the
depfile reader; arguments.  No CUDA needed."""
import os
import shutil
import stat
import subprocess
import sys
import textwrap

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
        self.assertIn("bad.cgraph:2:19: error: dimension 0 of 'x' is 0; it must be at least 1",
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
        code = textwrap.dedent("""
            import sys
            sys.path.insert(0, %r)
            import cgc._build as b
            print(b.compile_library(%r, **%r)[0])
            """ % (os.path.join(common.SOURCE, "python"), self.cgraph, self.kwargs()))
        env = dict(os.environ, FAKE_NVCC_SLEEP="0.3")
        procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, env=env)
                 for _ in range(4)]
        outs = [p.communicate()[0] for p in procs]
        self.assertEqual([p.returncode for p in procs], [0] * 4, outs)
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
        ]
        for kw, msg in cases:
            with self.assertRaises(cgc.BuildError, msg=msg) as e:
                self.build(**kw)
            self.assertEqual(str(e.exception), msg)
        with self.assertRaises(cgc.BuildError) as e:
            _build.compile_library(os.path.join(self.tmp, "no.cgraph"), **self.kwargs())
        self.assertEqual(str(e.exception), "no such .cgraph file: %s" %
                         os.path.join(self.tmp, "no.cgraph"))
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
