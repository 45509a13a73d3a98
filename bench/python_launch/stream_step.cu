// The decode step's 32 kernels launched one after another on a stream, for
// bench/python_launch.py, which captures them into a torch.cuda.CUDAGraph:
// the same kernels as cgc's graph of samples/decode_step (this file is
// built into the same library), each after the first launched with
// programmatic stream serialization, so that the captured graph has the
// programmatic edges cgc's has.  pos and nkeys are read from device memory,
// as in cgc's graph.
#include "decode_step_graph.h"

#include <cuda_runtime.h>

namespace {

const uint32_t D = 256, MAXPOS = 128, LAYERS = 4;

template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), unsigned grid, unsigned block, size_t smem,
                   cudaStream_t stream, bool after, Args... args) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = after ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<Params>(args)...);
}

}  // namespace

// buf: x, wn, wq, wk, wv, wo, kc, vc, h, q, k, v, a, o (as the graph
// declares them); scal: pos, nkeys.  Returns the first launch's error.
extern "C" int decode_step_on_stream(float *const *buf, const uint32_t *scal, cudaStream_t s) {
  float *x = buf[0], *h = buf[8], *q = buf[9], *k = buf[10], *v = buf[11], *a = buf[12],
        *o = buf[13];
  cudaError_t err = cudaSuccess;
  for (uint32_t l = 0; l < LAYERS && err == cudaSuccess; l++) {
    const float *wn = buf[1] + l * D, *wq = buf[2] + l * D * D, *wk = buf[3] + l * D * D,
                *wv = buf[4] + l * D * D, *wo = buf[5] + l * D * D;
    float *kc = buf[6] + l * MAXPOS * D, *vc = buf[7] + l * MAXPOS * D;
    cudaError_t e[] = {
        launch(rmsnorm, 1, 256, 0, s, l > 0, x, wn, h, D),
        launch(matvec, D / 8, 256, 0, s, true, wq, h, q, D, D),
        launch(matvec, D / 8, 256, 0, s, true, wk, h, k, D, D),
        launch(matvec, D / 8, 256, 0, s, true, wv, h, v, D, D),
        launch(kv_store, (D + 255) / 256, 256, 0, s, true, k, v, kc, vc, scal, D),
        launch(attention, 1, 256, MAXPOS * 4, s, true, q, kc, vc, scal + 1, a, D),
        launch(matvec, D / 8, 256, 0, s, true, wo, a, o, D, D),
        launch(add, (D + 255) / 256, 256, 0, s, true, x, o, D),
    };
    for (cudaError_t one : e)
      if (err == cudaSuccess)
        err = one;
  }
  return (int)err;
}
