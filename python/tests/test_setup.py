#!/usr/bin/env python3
"""What pip runs to build the package's optional C extension: setup.py's
build_ext, in a copy of python/, with this Python's setuptools; the
package copied beside what it built must then set and launch through
cgc._speedups.  Needs setuptools, a C compiler and Python's headers (skips
without them)."""
import os
import shutil
import subprocess
import sys
import sysconfig

import common


class SetupPy(common.TempDir):
    def test_build_ext(self):
        src = os.path.join(common.SOURCE, "python")
        copy = os.path.join(self.tmp, "python")
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("tests", "__pycache__",
                                                                 "build", "*.egg-info", "*.so"))
        out = os.path.join(self.tmp, "lib")
        common.run([sys.executable, "setup.py", "-q", "build_ext", "-b", out, "-t",
                    os.path.join(self.tmp, "obj")], cwd=copy)
        built = [f for f in os.listdir(os.path.join(out, "cgc")) if f.startswith("_speedups")]
        self.assertEqual(built, ["_speedups" + sysconfig.get_config_var("EXT_SUFFIX")])
        for f in os.listdir(os.path.join(copy, "cgc")):
            if f.endswith(".py"):
                shutil.copy(os.path.join(copy, "cgc", f), os.path.join(out, "cgc"))
        check = ("import cgc, sys; sys.exit(0 if cgc.speedups() and "
                 "cgc._graph.Graph.__mro__[1].__module__ == 'cgc._speedups' else 1)")
        env = dict(os.environ, PYTHONPATH=out)
        env.pop("CGC_PURE_PYTHON", None)
        self.assertEqual(subprocess.run([sys.executable, "-c", check], env=env).returncode, 0)
        env["CGC_PURE_PYTHON"] = "1"
        self.assertEqual(subprocess.run([sys.executable, "-c", check], env=env).returncode, 1)


if __name__ == "__main__":
    try:
        import setuptools  # noqa: F401
    except ImportError:
        common.skip("this Python has no setuptools")
    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        common.skip("no Python.h for this Python (its development headers)")
    common.c_compiler()
    common.main()
