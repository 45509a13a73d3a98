// gemv.cu: the GEMV kernels of llm.cgraph.
#include "llm_graph.h" // the declarations: nvcc checks each definition against them

#include "llm_config.cuh"
#include "llm_gemv.cuh"

using namespace llm;

namespace {
__device__ __forceinline__ GemvArgs args(const bf16 *w, const bf16 *x, const bf16 *g, bf16 *y,
                                         float *yf, uint64_t *best, uint32_t n, uint32_t k,
                                         uint32_t m, float eps) {
  return GemvArgs{w, x, g, y, yf, reinterpret_cast<unsigned long long *>(best), (int)n, (int)k,
                  (int)m, eps, 0, 0, (int)k, 0};
}
} // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_gemv(const bf16 *w, const bf16 *x, bf16 *y, uint32_t n, uint32_t k, uint32_t m) {
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Plain>(args(w, x, nullptr, y, nullptr, nullptr, n, k, m, 0),
                                            blockIdx.x, gridDim.x);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_gemv_residual(const bf16 *w, const bf16 *x, bf16 *y, uint32_t n, uint32_t k, uint32_t m) {
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Residual>(
      args(w, x, nullptr, y, nullptr, nullptr, n, k, m, 0), blockIdx.x, gridDim.x);
}

extern "C" __global__ void __launch_bounds__(THREADS, SWIGLU_BLOCKS)
    llm_gemv_swiglu(const bf16 *w, const bf16 *x, bf16 *y, uint32_t n, uint32_t k, uint32_t m) {
  gemv_dispatch<SWIGLU_R, SWIGLU_U, Epi::Swiglu>(args(w, x, nullptr, y, nullptr, nullptr, n, k, m, 0),
                                             blockIdx.x, gridDim.x);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_gemv_grouped(const bf16 *w, const bf16 *x, bf16 *y, uint32_t n, uint32_t k, uint32_t m,
                     uint32_t group, uint32_t x_group, uint32_t x_token) {
  if (group % GEMV_ROWS != 0) // a block's rows must read one group
    __trap();
  GemvArgs a = args(w, x, nullptr, y, nullptr, nullptr, n, k, m, 0);
  a.group = (int)group;
  a.x_group = (int)x_group;
  a.x_token = (int)x_token;
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Plain>(a, blockIdx.x, gridDim.x);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_norm_gemv(const bf16 *w, const bf16 *x, const bf16 *g, bf16 *y, uint32_t n, uint32_t k,
                  uint32_t m, float eps) {
  // The next kernel starts as this one does, before its wait: the kernel
  // after a model's q/kv projection (llm_mla_prep) reads only weights before
  // its own wait, and asking for them one kernel earlier paid
  // (doc/kernels.md, "Conventions", has the rule and the figures).
  trigger();
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Plain>(args(w, x, g, y, nullptr, nullptr, n, k, m, eps),
                                            blockIdx.x, gridDim.x);
}

extern "C" __global__ void __launch_bounds__(THREADS, SWIGLU_BLOCKS)
    llm_norm_gemv_swiglu(const bf16 *w, const bf16 *x, const bf16 *g, bf16 *y, uint32_t n,
                         uint32_t k, uint32_t m, float eps) {
  gemv_dispatch<SWIGLU_R, SWIGLU_U, Epi::Swiglu>(args(w, x, g, y, nullptr, nullptr, n, k, m, eps),
                                             blockIdx.x, gridDim.x);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_norm_gemv_argmax(const bf16 *w, const bf16 *x, const bf16 *g, float *y, uint64_t *best,
                         uint32_t n, uint32_t k, uint32_t m, float eps) {
  gemv_dispatch<GEMV_R, GEMV_U, Epi::Argmax>(args(w, x, g, nullptr, y, best, n, k, m, eps),
                                             blockIdx.x, gridDim.x);
}
