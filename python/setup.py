"""The package's one compiled part, optional: cgc._speedups (the C hot path
of setting scalars and launching).  Where it cannot be built (no C compiler,
no Python headers) pip installs the package without it, and the same code
runs in Python over ctypes.  Everything else is in pyproject.toml."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("cgc._speedups", ["cgc/_speedups.c"], optional=True)])
