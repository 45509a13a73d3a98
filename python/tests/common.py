"""What the Python package's tests share: where the build put things (from
the environment CTest gives them), skipping with exit status 77, and
libraries over the stand-in runtime (fake_cgrt.c).

The environment:
  CGC_TEST_SOURCE  the source tree
  CGC_TEST_PACKAGE the folder holding the package (cgc/) to test: the
                   build tree's copy, with cgc._speedups where it was built;
                   default the source tree's python/
  CGC_TEST_SPEEDUPS 1: the package must set and launch through
                   cgc._speedups; 0: in pure Python (unset: either)
  CGC_TEST_CGC     the cgc executable of the build
  CGC_TEST_PREFIX  where the build was installed (bin/cgc, include/cgrt.h,
                   lib/libcgrt.a); empty when it has no runtime
  CGC_TEST_NVCC    nvcc, when the build found one
  CC               the C compiler
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("CGC_TEST_SOURCE") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.environ.get("CGC_TEST_PACKAGE") or os.path.join(SOURCE, "python"))

SKIP = 77


def check_speedups():
    """Fails unless the package runs the path CGC_TEST_SPEEDUPS names, so
    that a test run twice does test both."""
    want = os.environ.get("CGC_TEST_SPEEDUPS")
    if want in ("0", "1"):
        import cgc
        if cgc.speedups() != (want == "1"):
            sys.exit("FAIL: cgc.speedups() is %s in %s, but CGC_TEST_SPEEDUPS=%s" % (
                cgc.speedups(), os.path.dirname(cgc.__file__), want))
        print("cgc.speedups(): %s" % cgc.speedups(), flush=True)


def skip(why):
    """Ends the test as skipped (CTest's SKIP_RETURN_CODE), saying why."""
    print("SKIPPED: " + why, flush=True)
    sys.exit(SKIP)


def need_env(name, why):
    value = os.environ.get(name)
    if not value:
        skip("%s is not set (%s)" % (name, why))
    return value


def cgc_exe():
    path = need_env("CGC_TEST_CGC", "the cgc executable; CTest sets it")
    if not os.access(path, os.X_OK):
        sys.exit("FAIL: CGC_TEST_CGC=%s is not an executable" % path)
    return path


def c_compiler():
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        skip("no C compiler (set CC)")
    return cc


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise AssertionError("%s failed (exit %d):\n%s" % (" ".join(cmd), r.returncode, r.stdout))
    return r.stdout


def fake_library(cgraph, out_dir):
    """The library cgc.build would make of cgraph, over the stand-in
    runtime and compiled with the C compiler only: the generated C with
    -DCGC_PROGRAM=cgc_program, fake_cgrt.c, and an empty function for each
    kernel the generated C names."""
    stem = os.path.basename(cgraph)[:-len(".cgraph")]
    gen = os.path.join(out_dir, stem + "_graph.c")
    run([cgc_exe(), "-o", gen, os.path.basename(cgraph)], cwd=os.path.dirname(cgraph))
    with open(gen) as f:
        kernels = re.findall(r"^extern void (\w+)\(void\);$", f.read(), re.M)
    stubs = os.path.join(out_dir, "kernel_stubs.c")
    with open(stubs, "w") as f:
        f.write("".join("void %s(void);\nvoid %s(void) {}\n" % (k, k) for k in kernels))
    lib = os.path.join(out_dir, "lib%s_fake.so" % stem)
    run([c_compiler(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
         "-DCGC_PROGRAM=cgc_program", "-I", out_dir, "-I", os.path.join(HERE, "stub"), "-I",
         os.path.join(SOURCE, "runtime"), gen, os.path.join(HERE, "fake_cgrt.c"), stubs, "-o",
         lib])
    return lib


class TempDir(unittest.TestCase):
    """A test case with a fresh folder, removed after each test."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cgc-py-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)


def main():
    """unittest.main, which exits 0 only when every test ran and passed
    (this suite skips nothing test by test: a whole file skips, with 77)."""
    check_speedups()
    unittest.main(module="__main__", verbosity=2)
