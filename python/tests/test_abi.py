#!/usr/bin/env python3
"""The package's ctypes structures against runtime/cgrt_abi.h and cgrt.h:
a C program prints the size of each struct and the offset of each field
the package declares, and they must agree; the constants too.  Needs a C
compiler only."""
import ctypes
import os
import re
import subprocess
import unittest

import common

from cgc import _abi

STRUCTS = {
    "cgrt_buffer_desc": _abi.BufferDesc,
    "cgrt_scalar_desc": _abi.ScalarDesc,
    "cgrt_graph_desc": _abi.GraphDesc,
    "cgrt_options": _abi.Options,
}


class Layout(common.TempDir):
    def test_structs_and_constants(self):
        lines = ['#include "cgrt.h"', "#include <stddef.h>", "#include <stdio.h>",
                 "int main(void) {"]
        for cname, py in STRUCTS.items():
            lines.append('  printf("%s size %%zu\\n", sizeof(%s));' % (cname, cname))
            for field, _ in py._fields_:
                lines.append('  printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (
                    cname, field, cname, field))
        consts = ["CGRT_ABI", "CGRT_MAX_DIMS", "CGRT_DEVICE", "CGRT_EXTERN", "CGRT_HOST",
                  "CGRT_EXTERN_HOST", "CGRT_OK", "CGRT_ERROR_CUDA", "CGRT_ERROR_INVALID",
                  "CGRT_ERROR_NO_MEMORY", "CGRT_CURRENT_DEVICE", "CGRT_I8", "CGRT_I16", "CGRT_I32",
                  "CGRT_I64", "CGRT_U8", "CGRT_U16", "CGRT_U32", "CGRT_U64", "CGRT_F16",
                  "CGRT_BF16", "CGRT_F32", "CGRT_F64"]
        for c in consts:
            lines.append('  printf("%s %%d\\n", (int)%s);' % (c, c))
        lines += ["  return 0;", "}"]
        src = os.path.join(self.tmp, "layout.c")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        exe = os.path.join(self.tmp, "layout")
        common.run([common.c_compiler(), "-std=c11", "-I", os.path.join(common.HERE, "stub"),
                    "-I", os.path.join(common.SOURCE, "runtime"), src, "-o", exe])
        out = dict(l.rsplit(" ", 1) for l in subprocess.check_output([exe], text=True).split("\n")
                   if l)
        checked = 0
        for cname, py in STRUCTS.items():
            self.assertEqual(int(out["%s size" % cname]), ctypes.sizeof(py), cname)
            for field, _ in py._fields_:
                self.assertEqual(int(out["%s.%s" % (cname, field)]), getattr(py, field).offset,
                                 "%s.%s" % (cname, field))
                checked += 1
        self.assertGreater(checked, 30)
        py_consts = {"CGRT_ABI": _abi.ABI, "CGRT_MAX_DIMS": _abi.MAX_DIMS,
                     "CGRT_DEVICE": _abi.DEVICE, "CGRT_EXTERN": _abi.EXTERN,
                     "CGRT_HOST": _abi.HOST, "CGRT_EXTERN_HOST": _abi.EXTERN_HOST,
                     "CGRT_OK": _abi.OK, "CGRT_ERROR_CUDA": _abi.ERROR_CUDA,
                     "CGRT_ERROR_INVALID": _abi.ERROR_INVALID,
                     "CGRT_ERROR_NO_MEMORY": _abi.ERROR_NO_MEMORY,
                     "CGRT_CURRENT_DEVICE": _abi.CURRENT_DEVICE}
        for i, (name, size, _) in enumerate(_abi.TYPES):
            py_consts["CGRT_" + name.upper()] = i
        self.assertEqual(set(py_consts), set(consts))
        for c, v in py_consts.items():
            self.assertEqual(int(out[c]), v, c)
        # The C extension numbers the types and declares cgrt_set_launch on
        # its own (pip builds it from python/ alone): the same as the runtime.
        with open(os.path.join(common.SOURCE, "python", "cgc", "_speedups.c")) as f:
            ext = f.read()
        names = re.search(r"enum \{ (I8, .*?), NTYPES \};", ext).group(1).split(", ")
        self.assertEqual(["CGRT_" + n for n in names],
                         ["CGRT_" + t[0].upper() for t in _abi.TYPES])
        with open(os.path.join(common.SOURCE, "runtime", "cgrt.h")) as f:
            decl = re.search(r"cgrt_status cgrt_set_launch\((.*?)\);", f.read(), re.S).group(1)
        self.assertEqual(" ".join(decl.split()), "cgrt_graph *g, uint8_t *set, const void *const "
                         "*values, cudaStream_t stream")
        self.assertIn("typedef int (*set_launch_fn)(void *graph, uint8_t *set, const void "
                      "*const *values, void *stream);", ext)

    def test_every_field_of_the_tables(self):
        """A field added to cgrt_abi.h's graph, buffer or scalar
        descriptions must be added here too (the layout test only checks the
        fields the package declares)."""
        with open(os.path.join(common.SOURCE, "runtime", "cgrt_abi.h")) as f:
            text = f.read()
        for cname in ("cgrt_buffer_desc", "cgrt_scalar_desc", "cgrt_graph_desc"):
            body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (cname, cname), text, re.S)
            self.assertIsNotNone(body, cname)
            declared = []  # each declaration's names: "uint32_t a, b;" gives a, b
            for decl in re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S).split(";"):
                declared += re.findall(r"(\w+)\s*(?:\[\w+\])?\s*(?:,|$)", decl.strip())
            self.assertGreater(len(declared), 4, cname)
            self.assertEqual(declared, [f for f, _ in STRUCTS[cname]._fields_], cname)


class Documents(unittest.TestCase):
    def test_abi_number(self):
        """Where the package's documents give the ABI's number, it is
        cgrt_abi.h's: python/README.md, doc/building.md's section on Python, the
        reference, and _abi's own docstring."""
        with open(os.path.join(common.SOURCE, "runtime", "cgrt_abi.h")) as f:
            abi = int(re.search(r"^#define CGRT_ABI (\d+)$", f.read(), re.M).group(1))
        self.assertEqual(_abi.ABI, abi)
        texts = {}
        for rel in ("python/README.md", "doc/building.md", "doc/language.md"):
            with open(os.path.join(common.SOURCE, rel)) as f:
                texts[rel] = f.read()
        python = re.search(r"^## From Python\n(.*?)^## ", texts["doc/building.md"], re.S | re.M)
        self.assertIsNotNone(python, "doc/building.md has a section '## From Python'")
        texts["doc/building.md"] = python.group(1)
        texts["cgc/_abi.py"] = _abi.__doc__
        for where, text in texts.items():
            for m in re.finditer(r"\bABI(?: version)? (\d+)\b", text):
                self.assertEqual(int(m.group(1)), abi, "%s says %r; cgrt_abi.h has CGRT_ABI %d" % (
                    where, m.group(0), abi))


if __name__ == "__main__":
    common.c_compiler()
    common.main()
