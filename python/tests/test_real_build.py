#!/usr/bin/env python3
"""cgc.build with the real nvcc and the installed runtime: the decode step
and types.cgraph built into libraries, loaded together (each keeps its own
names), their graphs read from the generated descriptions, a second build
served from the cache, and create failing in the runtime with its message
(no GPU here, which it says, or, on a GPU, memory that is not the
device's).  Needs the CUDA Toolkit (nvcc), not a GPU; skipped without
them."""
import os

import common

import cgc

DECODE = os.path.join(common.SOURCE, "samples", "decode_step")


class CudaArray:
    def __init__(self, shape, ptr):
        self.__cuda_array_interface__ = dict(version=3, shape=tuple(shape), typestr="<f4",
                                             data=(ptr, False), strides=None)


class RealBuild(common.TempDir):
    def test_build_load_and_create(self):
        prefix = os.environ["CGC_TEST_PREFIX"]
        kw = dict(cgc=prefix, nvcc=os.environ["CGC_TEST_NVCC"], cache_dir=self.tmp,
                  arch=os.environ.get("CGC_TEST_ARCH") or None)
        m = cgc.build(os.path.join(DECODE, "decode_step.cgraph"),
                      sources=[os.path.join(DECODE, "kernels", "decode_step.cu")], **kw)
        self.assertTrue(m.built)
        t = cgc.build(os.path.join(common.HERE, "types.cgraph"), **kw)
        self.assertTrue(t.built)
        # Two programs in one process, each with its runtime and its
        # cgc_program (loaded privately): each finds its own graphs.
        self.assertEqual(list(m.graphs), ["decode_step"])
        self.assertEqual(list(t.graphs), ["kinds", "other"])
        G = m.decode_step
        self.assertEqual(G.externs, ("x", "wn", "wq", "wk", "wv", "wo", "kc", "vc"))
        self.assertEqual(G.buffers["kc"].shape, (4, 128, 256))
        self.assertEqual(G.scalars["nkeys"].init, 1)
        self.assertEqual(t.kinds.scalars["half"].init, 1.5)
        again = cgc.build(os.path.join(DECODE, "decode_step.cgraph"),
                          sources=[os.path.join(DECODE, "kernels", "decode_step.cu")], **kw)
        self.assertEqual((again.path, again.built), (m.path, False))
        # The runtime itself refuses: here there is no GPU, or these
        # addresses are not device memory.
        args = {n: CudaArray(G.buffers[n].shape, 0x10000 * (i + 1))
                for i, n in enumerate(G.externs)}
        with self.assertRaises(cgc.CgrtError) as e:
            G(**args)
        msg = str(e.exception)
        self.assertTrue(msg.startswith("decode_step: create failed (CGRT_ERROR_"), msg)
        self.assertIn("decode_step.cgraph: graph decode_step: ", msg)
        # Without a GPU the message says so, not only CUDA's error for it.
        why = cgc._cuda.no_gpu()
        if why:
            self.assertTrue(msg.startswith("decode_step: create failed (CGRT_ERROR_CUDA): no GPU: "
                                           + why + "; the runtime said: "), msg)
        print("create refused as expected: " + msg)

    def test_definition_that_differs(self):
        """A kernel's definition that differs from the .cgraph: the
        BuildError names the parameter and the type the .cgraph means."""
        d = os.path.join(self.tmp, "k")
        os.makedirs(d)
        with open(os.path.join(d, "k.cgraph"), "w") as f:
            f.write("kernel residual(inout x: f16*, in y: f16*, n: u32);\n"
                    "graph g {\n    buffer x: f16[32] = 0;\n    buffer y: f16[32] = 0;\n"
                    "    residual(x, y, 32) grid(1) block(32);\n}\n")
        with open(os.path.join(d, "k.cu"), "w") as f:
            f.write('#include "k_graph.h"\n'
                    'extern "C" __global__ void residual(__half *x, __half *y, uint32_t n) {}\n')
        with self.assertRaises(cgc.BuildError) as e:
            cgc.build(os.path.join(d, "k.cgraph"), sources=[os.path.join(d, "k.cu")],
                      cgc=os.environ["CGC_TEST_PREFIX"], nvcc=os.environ["CGC_TEST_NVCC"],
                      cache_dir=os.path.join(self.tmp, "cache"),
                      arch=os.environ.get("CGC_TEST_ARCH") or None)
        self.assertIn("k.cu: error: kernel 'residual', parameter 2 'y': the .cgraph declares "
                      "'in y: f16*', which is 'const __half *'", str(e.exception))

    def test_template_kernels(self):
        """The companion of template kernels is compiled and linked: the
        library defines each instantiation's accessor, so it loads (RTLD_NOW
        would refuse an undefined cgc_template_... symbol)."""
        d = os.path.join(self.tmp, "t")
        os.makedirs(d)
        with open(os.path.join(d, "scale.cuh"), "w") as f:
            f.write("template <typename T, int N> __global__ void scale(T *x) "
                    "{ x[threadIdx.x] *= N; }\n")
        with open(os.path.join(d, "t.cgraph"), "w") as f:
            f.write('kernel s = scale<float, 2>(inout x: f32*) from "scale.cuh";\n'
                    "graph g {\n    buffer x: f32[32] = 0;\n    s(x) grid(1) block(32);\n}\n")
        m = cgc.build(os.path.join(d, "t.cgraph"), cgc=os.environ["CGC_TEST_PREFIX"],
                      nvcc=os.environ["CGC_TEST_NVCC"], cache_dir=os.path.join(self.tmp, "cache"),
                      arch=os.environ.get("CGC_TEST_ARCH") or None)
        self.assertEqual(list(m.graphs), ["g"])
        self.assertRegex(common.run(["nm", "-D", "--defined-only", m.path]),
                         r" [TW] cgc_template_s_\w+\n")
        self.assertNotIn("cgc_template_", common.run(["nm", "-D", "--undefined-only", m.path]))


if __name__ == "__main__":
    common.need_env("CGC_TEST_NVCC", "this build found no CUDA compiler")
    common.need_env("CGC_TEST_PREFIX", "this build has no runtime (built without CUDA)")
    common.main()
