// The tensor-parallel FFN's own kernel (residual_share), the weights' maker,
// and the step as stream launches for the benchmark; the GEMVs are the
// kernel library's.
#include "tensor_parallel_graph.h" // declares the kernels: nvcc checks residual_share

#include "tensor_parallel.h"

typedef __nv_bfloat16 bf16;

// part = x on rank 0, zeros on the others: the sum over the ranks of
// part + (each rank's W_down act) is then x + W_down act.  8 values a
// thread; n a multiple of 8.
extern "C" __global__ void residual_share(const bf16 *x, const uint32_t *me, bf16 *part,
                                          uint32_t n) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n / 8)
    return;
  reinterpret_cast<uint4 *>(part)[i] =
      *me == 0 ? reinterpret_cast<const uint4 *>(x)[i] : make_uint4(0, 0, 0, 0);
}

// A shard of every layer (tensor_parallel.h): row i of a layer's w_gu is
// gate row row0 + i for i < fr, else up row row0 + i - fr; row r of its
// w_down is columns col0 .. col0 + fr of down row r.
__global__ void tp_make_gu(uint16_t *w_gu, uint64_t seed, uint32_t fr, uint32_t row0, float scale) {
  const uint64_t per_layer = (uint64_t)2 * fr * TP_D, n = per_layer * TP_LAYERS;
  for (uint64_t e = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; e < n;
       e += (uint64_t)gridDim.x * blockDim.x) {
    const uint32_t l = (uint32_t)(e / per_layer), i = (uint32_t)(e % per_layer / TP_D);
    const uint32_t c = (uint32_t)(e % TP_D);
    w_gu[e] = i < fr ? tp_weight(seed, TP_GATE, l, row0 + i, c, scale)
                     : tp_weight(seed, TP_UP, l, row0 + i - fr, c, scale);
  }
}

__global__ void tp_make_down(uint16_t *w_down, uint64_t seed, uint32_t fr, uint32_t col0,
                             float scale) {
  const uint64_t per_layer = (uint64_t)TP_D * fr, n = per_layer * TP_LAYERS;
  for (uint64_t e = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; e < n;
       e += (uint64_t)gridDim.x * blockDim.x) {
    const uint32_t l = (uint32_t)(e / per_layer), r = (uint32_t)(e % per_layer / fr);
    const uint32_t j = (uint32_t)(e % fr);
    w_down[e] = tp_weight(seed, TP_DOWN, l, r, col0 + j, scale);
  }
}

__global__ void tp_make_norm(uint16_t *norm, uint64_t seed) {
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < TP_LAYERS * TP_D;
       e += gridDim.x * blockDim.x)
    norm[e] = tp_weight(seed, TP_NORM, e / TP_D, 0, e % TP_D, 0.0f);
}

extern "C" cudaError_t tp_make_shard(void *w_gu, void *w_down, void *norm, uint64_t seed,
                                     uint32_t f, int rank, int ranks, cudaStream_t stream) {
  const uint32_t fr = f / (uint32_t)ranks, first = fr * (uint32_t)rank;
  // The scales on the host, once, so that the CPU's values are the same.
  tp_make_gu<<<1024, 256, 0, stream>>>((uint16_t *)w_gu, seed, fr, first, sqrtf(3.0f / TP_D));
  tp_make_down<<<1024, 256, 0, stream>>>((uint16_t *)w_down, seed, fr, first,
                                         sqrtf(3.0f / (float)f));
  tp_make_norm<<<32, 256, 0, stream>>>((uint16_t *)norm, seed);
  return cudaGetLastError();
}

#define TRY(call)                                                                                  \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess)                                                                         \
      return e_;                                                                                   \
  } while (0)

// tp_ffn's nodes in the order tensor_parallel.cgraph writes them, with the
// same launch configurations, on one stream.
extern "C" cudaError_t tp_stream_step(const TpBuffers *b, tp_reduce_fn reduce, void *ctx,
                                      cudaStream_t stream) {
  bf16 *x = (bf16 *)b->x, *act = (bf16 *)b->act, *part = (bf16 *)b->part;
  const unsigned share_grid = (TP_D + 8 * TP_SHARE_THREADS - 1) / (8 * TP_SHARE_THREADS);
  const unsigned gu_grid = (TP_FR + TP_LLM_SROWS - 1) / TP_LLM_SROWS;
  const unsigned down_grid = (TP_D + TP_LLM_ROWS - 1) / TP_LLM_ROWS;
  for (int l = 0; l < TP_LAYERS; l++) {
    const bf16 *w_gu = (const bf16 *)b->w_gu + (size_t)l * 2 * TP_FR * TP_D;
    const bf16 *w_down = (const bf16 *)b->w_down + (size_t)l * TP_D * TP_FR;
    const bf16 *norm = (const bf16 *)b->norm + (size_t)l * TP_D;
    residual_share<<<share_grid, TP_SHARE_THREADS, 0, stream>>>(x, b->me, part, TP_D);
    TRY(cudaGetLastError());
    llm_norm_gemv_swiglu<<<gu_grid, TP_LLM_THREADS, TP_D * 2, stream>>>(w_gu, x, norm, act, TP_FR,
                                                                        TP_D, 1, TP_EPS);
    TRY(cudaGetLastError());
    llm_gemv_residual<<<down_grid, TP_LLM_THREADS, TP_FR * 2, stream>>>(w_down, act, part, TP_D,
                                                                        TP_FR, 1);
    TRY(cudaGetLastError());
    TRY(reduce(ctx, part, x, TP_D, stream));
  }
  return cudaSuccess;
}
