/* weights_hash.h: the random weights' formula (weights.h says it in
 * words), one copy for the host (weights.c) and the device
 * (weights_random.cu). */
#ifndef DSV2_WEIGHTS_HASH_H
#define DSV2_WEIGHTS_HASH_H

#include <stdint.h>

#ifdef __CUDACC__
#define DSV2_HD __host__ __device__
#else
#define DSV2_HD
#endif

/* MurmurHash3's 32-bit finaliser. */
static inline DSV2_HD uint32_t dsv2_fmix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

/* The key of one buffer under one seed. */
static inline DSV2_HD uint32_t dsv2_buffer_key(uint32_t seed, int buffer) {
  return dsv2_fmix32(seed ^ dsv2_fmix32(0x9e3779b9u * (uint32_t)(buffer + 1)));
}

/* Element i's 24 random bits. */
static inline DSV2_HD uint32_t dsv2_bits24(uint32_t key, uint64_t i) {
  uint32_t h = dsv2_fmix32(dsv2_fmix32(key ^ (uint32_t)i) ^ (uint32_t)(i >> 32));
  return h >> 8;
}

/* The value before rounding to bf16: each operation rounded to fp32 on its
 * own (weights.cmake builds the host's with -ffp-contract=off, and the
 * device's are the _rn intrinsics, so neither is fused into an FMA). */
static inline DSV2_HD float dsv2_random_float(uint32_t bits24, float scale, float offset) {
  float t = (float)bits24 * 0x1p-23f - 1.0f; /* exact */
#ifdef __CUDA_ARCH__
  return __fadd_rn(__fmul_rn(t, scale), offset);
#else
  return t * scale + offset;
#endif
}

#endif
