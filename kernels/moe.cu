// moe.cu: mixture-of-experts kernels of llm.cgraph.
#include "llm_graph.h"

#include "llm_config.cuh"
#include "llm_moe.cuh"

using namespace llm;

typedef Moe<SWIGLU_R, GEMV_U> MoeKernels; // the router too: its logits are few
typedef Moe<SWIGLU_R, SWIGLU_U> MoeGateUp;
typedef Moe<SWIGLU_R, DOWN_LEAN_U> MoeLean; // llm_moe_down_lean

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_moe_route(const bf16 *w, const bf16 *x, const bf16 *g, float *logits, uint32_t *count,
                  uint32_t *ids, float *weights, uint32_t experts, uint32_t k, uint32_t m,
                  uint32_t topk, float eps) {
  MoeKernels::route(w, x, g, logits, count, ids, weights, (int)experts, (int)k, (int)m, (int)topk,
                    eps);
}

// Below compute capability 9.0 ptxas fits the experts' gate/up into 4
// blocks a multiprocessor (64 registers) only by spilling (sm_80: 32 bytes),
// so there it is built for 3; for sm_90 as measured (llm_config.cuh).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define LLM_GATE_UP_BOUNDS __launch_bounds__(THREADS, 3)
#else
#define LLM_GATE_UP_BOUNDS __launch_bounds__(THREADS, MOE_GATE_UP_BLOCKS)
#endif

extern "C" __global__ void LLM_GATE_UP_BOUNDS
    llm_moe_gate_up(const bf16 *w, const bf16 *w_shared, const bf16 *x, const bf16 *g,
                    const uint32_t *ids, bf16 *act, uint32_t fe, uint32_t fs, uint32_t topk,
                    uint32_t k, uint32_t m, float eps) {
  if (m > MAX_TOKENS || topk > MOE_MAX_TOPK)
    __trap();
  MoeGateUp::gate_up(w, w_shared, x, g, ids, act, (int)fe, (int)fs, (int)topk, (int)k, (int)m,
                      eps);
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
    llm_moe_down(const bf16 *w, const bf16 *w_shared, const bf16 *act, const uint32_t *ids,
                 const float *weights, bf16 *x, uint32_t fe, uint32_t fs, uint32_t topk,
                 uint32_t n, uint32_t m) {
  MoeKernels::down(w, w_shared, act, ids, weights, x, (int)fe, (int)fs, (int)topk, (int)n, (int)m);
}

// The same sums with fewer loads in flight and fewer registers, so that three
// blocks fit a multiprocessor: for grids of several waves (llm.cgraph).
extern "C" __global__ void __launch_bounds__(THREADS, DOWN_LEAN_BLOCKS)
    llm_moe_down_lean(const bf16 *w, const bf16 *w_shared, const bf16 *act, const uint32_t *ids,
                      const float *weights, bf16 *x, uint32_t fe, uint32_t fs, uint32_t topk,
                      uint32_t n, uint32_t m) {
  MoeLean::down(w, w_shared, act, ids, weights, x, (int)fe, (int)fs, (int)topk, (int)n, (int)m);
}
