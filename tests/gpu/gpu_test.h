/* gpu_test.h: what the GPU tests share.  A test exits 77 (skipped) when
 * there is no GPU, 1 on any failure, 0 when every check passed. */
#ifndef GPU_TEST_H
#define GPU_TEST_H

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgrt.h"
#include "check.h"


static int test_failures, test_checks;

#define EXPECT(cond, ...)                                                                  \
  do {                                                                                     \
    test_checks++;                                                                         \
    if (!(cond)) {                                                                         \
      test_failures++;                                                                     \
      fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond);                   \
      fprintf(stderr, __VA_ARGS__);                                                        \
      fputc('\n', stderr);                                                                 \
    }                                                                                      \
  } while (0)

/* Skips the test (exit 77) where there is no GPU; seeds the generator
 * afresh each run and prints the seed. */
static uint64_t test_rng;
static inline void test_start(const char *name) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("%s: skipped: no GPU\n", name);
    exit(77);
  }
  test_rng = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
  printf("%s: seed %llu\n", name, (unsigned long long)test_rng);
}

static inline uint64_t rand64(void) {
  test_rng ^= test_rng << 13;
  test_rng ^= test_rng >> 7;
  test_rng ^= test_rng << 17;
  return test_rng;
}

static inline int test_end(const char *name) {
  printf("%s: %d checks, %d failed\n", name, test_checks, test_failures);
  return test_failures ? 1 : 0;
}

static inline float half_to_float(uint16_t h) {
  int e = h >> 10 & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY)
                                                     : ldexpf((float)(m + 1024), e - 25);
  return h >> 15 ? -v : v;
}

static inline float bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

#endif
