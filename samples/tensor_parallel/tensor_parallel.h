/* tensor_parallel.h: the sizes of tensor_parallel.cgraph and the weights of
 * its FFN stack, for the sample (main.c), the benchmark
 * (bench/tensor_parallel) and the CUDA file.  CMake passes one RANKS (and,
 * for the benchmark's sweep, one F) to cgc -D and to the C as TP_RANKS and
 * TP_F.
 *
 * The weights are a function of (seed, matrix, layer, row, column), not a
 * stream of random numbers: every rank makes its own shard, on its GPU,
 * and the reference makes the whole matrices, with the same values. */
#ifndef TENSOR_PARALLEL_H
#define TENSOR_PARALLEL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>

#ifndef TP_RANKS
#define TP_RANKS 1
#endif
#ifndef TP_F
#define TP_F 10944
#endif
#ifndef TP_LAYERS
#define TP_LAYERS 4
#endif

enum {
  TP_D = 2048,             /* hidden size */
  TP_FR = TP_F / TP_RANKS, /* a rank's share of F */
  TP_POSITIONS = 64,       /* the sample's tokens */
  TP_SHARE_THREADS = 128   /* residual_share's blocks, as the .cgraph */
};

#if TP_F % TP_RANKS != 0
#error "F must be a multiple of RANKS"
#endif

/* The library's launch constants (llm.cgraph's LLM_*), for the stream step. */
enum { TP_LLM_THREADS = 256, TP_LLM_ROWS = 16, TP_LLM_SROWS = 8 };
#define TP_EPS 1e-6f

/* What each value is (part of its key). */
enum { TP_GATE = 0, TP_UP = 1, TP_DOWN = 2, TP_NORM = 3, TP_TOKEN = 4 };

#ifdef __CUDACC__
#define TP_HD __host__ __device__
#else
#define TP_HD
#endif

/* Uniform in [-1, 1), exactly (24 bits), from a hash of the value's key:
 * splitmix64 of the key's index in a counter sequence.  rows and columns
 * below 2^24, layers below 256. */
static inline TP_HD float tp_uniform(uint64_t seed, uint32_t what, uint32_t layer, uint32_t row,
                                     uint32_t col) {
  uint64_t key = ((((uint64_t)what << 8 | layer) << 24 | row) << 24) | col;
  uint64_t z = seed + (key + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)(z >> 40) * 0x1.0p-23f - 1.0f;
}

/* bf16 bits <-> float, rounding to nearest even (dense_block.h's, for
 * both sides). */
static inline TP_HD uint16_t tp_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fc0; /* NaN */
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static inline TP_HD float tp_from_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* The model's weights in bf16, as a checkpoint would hold them: gate and
 * up rows (F x D, scale sqrt(3 / D)), down rows (D x F, scale sqrt(3 / F)),
 * the norm's weights (1 + 0.1 u) and the tokens' vectors (u).  scale is
 * worked out by the caller, on the host, once. */
static inline TP_HD uint16_t tp_weight(uint64_t seed, uint32_t what, uint32_t layer, uint32_t row,
                                       uint32_t col, float scale) {
  float u = tp_uniform(seed, what, layer, row, col);
  return tp_to_bf16(what == TP_NORM ? fmaf(0.1f, u, 1.0f) : u * scale);
}

#ifdef __cplusplus
extern "C" {
#endif

/* kernels/tensor_parallel.cu: rank `rank` of `ranks`'s shard of every
 * layer, made on the device on `stream`: w_gu [TP_LAYERS, 2 * f / ranks,
 * TP_D] (its gate rows, then its up rows), w_down [TP_LAYERS, TP_D, f /
 * ranks] (its columns) and norm [TP_LAYERS, TP_D] (the norms' weights,
 * whole on every rank).  rank 0 of 1 is the whole model. */
cudaError_t tp_make_shard(void *w_gu, void *w_down, void *norm, uint64_t seed, uint32_t f, int rank,
                          int ranks, cudaStream_t stream);

/* The benchmark's hand-written step: tp_ffn's nodes in the .cgraph's order,
 * the same kernels (launched without programmatic dependent launch),
 * issued on `stream` (for stream capture), each layer's all-reduce by
 * `reduce` (ncclAllReduce of n bf16 from part into x, summed; the
 * caller's).  me: the rank, in device memory. */
typedef cudaError_t (*tp_reduce_fn)(void *ctx, const void *part, void *x, size_t n,
                                    cudaStream_t stream);
typedef struct TpBuffers {
  const void *w_gu, *w_down, *norm; /* the shard */
  void *x, *act, *part;
  const uint32_t *me;
} TpBuffers;
cudaError_t tp_stream_step(const TpBuffers *b, tp_reduce_fn reduce, void *ctx, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
