// llm_test.h: what the kernel library's GPU tests share (tests/kernels).
// A test exits 77 (skipped) without a GPU, 1 on any failure, 0 when every
// check passed.  Each compares a kernel of kernels/llm.cgraph, launched by
// its launch rule, against a CPU reference that rounds to bf16 where the
// kernel does (kernels/llm_device.cuh) and sums in double.
//
// The random inputs come from one seed, printed at the start; LLM_TEST_SEED
// runs a test again with a seed it printed.
#ifndef LLM_TEST_H
#define LLM_TEST_H

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "llm_graph.h" // the kernels' declarations, from kernels/llm.cgraph

typedef uint16_t bf16_bits; // a bf16 value as the host holds it

static int test_failures, test_checks;
static const char *test_name;

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

// ---------------------------------------------------------------------------
// Device memory: every allocation is recorded, so that a failed CUDA call
// can release what is left before the test stops.

static std::vector<void *> dev_blocks;

static inline void dev_release_all(void) {
  for (void *p : dev_blocks)
    cudaFree(p); // after a failed kernel these may fail too; the process ends next
  dev_blocks.clear();
}

[[noreturn]] static inline void test_abort(void) {
  dev_release_all();
  fprintf(stderr, "%s: stopped after %d checks, %d failed\n", test_name, test_checks,
          test_failures);
  exit(1);
}

#define CK(call)                                                                           \
  do {                                                                                     \
    cudaError_t ck_err_ = (call);                                                          \
    if (ck_err_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                        \
              cudaGetErrorString(ck_err_));                                                \
      test_abort();                                                                        \
    }                                                                                      \
  } while (0)

// After a launch: the launch itself, then the kernel's run.
#define CK_LAUNCH()                                                                        \
  do {                                                                                     \
    CK(cudaGetLastError());                                                                \
    CK(cudaDeviceSynchronize());                                                           \
  } while (0)

// A device array of n T, freed when it goes out of scope.
template <class T> struct Dev {
  T *d = nullptr;
  size_t n = 0;
  explicit Dev(size_t count) : n(count) {
    void *p = nullptr;
    CK(cudaMalloc(&p, (count ? count : 1) * sizeof(T)));
    dev_blocks.push_back(p);
    d = static_cast<T *>(p);
  }
  Dev(const Dev &) = delete;
  Dev &operator=(const Dev &) = delete;
  ~Dev() {
    auto it = std::find(dev_blocks.begin(), dev_blocks.end(), (void *)d);
    if (it == dev_blocks.end())
      return;
    dev_blocks.erase(it);
    cudaError_t e = cudaFree(d);
    EXPECT(e == cudaSuccess, "cudaFree: %s", cudaGetErrorString(e));
  }
  void put(const std::vector<T> &h) {
    CK(cudaMemcpy(d, h.data(), std::min(h.size(), n) * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// Lets a kernel take `bytes` of dynamic shared memory (above 48 KB needs it).
template <class K> static void allow_smem(K *kernel, size_t bytes) {
  CK(cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          (int)bytes));
}

// The launch attribute that asks for clusters of x blocks along x (compute
// capability 9.0): a cudaLaunchConfig_t takes it as its one attribute.
static inline cudaLaunchAttribute cluster_along_x(unsigned x) {
  cudaLaunchAttribute attr = {};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = x;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  return attr;
}

// ---------------------------------------------------------------------------
// Start, randomness, end.

static uint64_t test_rng;

static inline void test_start(const char *name) {
  test_name = name;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("%s: skipped: no GPU\n", name);
    exit(77);
  }
  const char *s = getenv("LLM_TEST_SEED");
  test_rng = s && *s ? strtoull(s, nullptr, 10)
                     : (uint64_t)time(NULL) * 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
  if (!test_rng)
    test_rng = 1; // xorshift's one fixed point
  printf("%s: seed %llu (LLM_TEST_SEED=%llu repeats this run)\n", name,
         (unsigned long long)test_rng, (unsigned long long)test_rng);
  fflush(stdout);
}

static inline int test_end(void) {
  dev_release_all();
  printf("%s: %d checks, %d failed\n", test_name, test_checks, test_failures);
  return test_failures ? 1 : 0;
}

static inline uint64_t rand64(void) {
  test_rng ^= test_rng << 13;
  test_rng ^= test_rng >> 7;
  test_rng ^= test_rng << 17;
  return test_rng;
}
// Uniform in [0, 1), 24 bits.
static inline float rand01(void) { return (float)(rand64() >> 40) * (1.0f / 16777216.0f); }
static inline float rand_pm(float a) { return (2.0f * rand01() - 1.0f) * a; }
static inline uint32_t rand_below(uint32_t n) { return (uint32_t)((rand64() >> 32) % n); }

// ---------------------------------------------------------------------------
// bf16 on the host: round to nearest even, as __float2bfloat16_rn.

static inline float bf2f(bf16_bits b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline bf16_bits f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (bf16_bits)(u >> 16 | 0x40); // a quiet NaN
  u += 0x7fffu + (u >> 16 & 1);
  return (bf16_bits)(u >> 16);
}
// The value a tensor holds where the published code rounds it to bf16.
static inline float rbf(float f) { return bf2f(f2bf(f)); }

// n values uniform in [-a, a], as bf16.  Four values a random draw, so
// that the largest weights (the LM head's 210 M, the experts' 554 M) fill
// in about a second.
static inline std::vector<bf16_bits> rand_bf16(size_t n, float a) {
  std::vector<bf16_bits> v(n);
  const float step = 2.0f * a / 65536.0f;
  size_t i = 0;
  while (i < n) {
    uint64_t r = rand64();
    for (int j = 0; j < 4 && i < n; j++, r >>= 16)
      v[i++] = f2bf(-a + step * (float)(r & 0xffff));
  }
  return v;
}

static inline std::vector<float> to_float(const std::vector<bf16_bits> &v) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); i++)
    f[i] = bf2f(v[i]);
  return f;
}

// Runs body(i) for i < n on the host's cores (the references of the large
// shapes), each thread a contiguous range.
template <class F> static inline void parallel_for(size_t n, F body) {
  unsigned nt = std::thread::hardware_concurrency();
  nt = nt < 1 ? 1 : nt > 32 ? 32 : nt;
  if (n < 64 || nt == 1) {
    for (size_t i = 0; i < n; i++)
      body(i);
    return;
  }
  std::vector<std::thread> th;
  const size_t per = (n + nt - 1) / nt;
  for (unsigned t = 0; t < nt; t++) {
    const size_t i0 = std::min(n, t * per), i1 = std::min(n, i0 + per);
    th.emplace_back([=] {
      for (size_t i = i0; i < i1; i++)
        body(i);
    });
  }
  for (auto &t : th)
    t.join();
}

// sum_i a[i] * b[i] in double (the reference's sums: exact enough that the
// kernel's f32 sums in another order differ from them by ~1e-6 relative).
static inline double dot(const float *a, const float *b, size_t k) {
  double s[4] = {0, 0, 0, 0}; // four chains: the host's adders in parallel
  for (size_t i = 0; i < k; i++)
    s[i & 3] += (double)a[i] * b[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// How far a kernel's f32 sum of a[i] * b[i] may lie from the exact sum
// (dot's): 2^-14 of the sum of the terms' magnitudes.  Each f32 addition
// errs by at most 2^-23 of its partial sum (2^-24 rounded to nearest; the
// tensor cores' adds may truncate), which that sum bounds, and no kernel's
// chain of additions into one f32 is longer than 2^9 (k = 10,944 over a
// warp's 32 lanes is 342 fused multiply-adds a lane, then the lanes',
// warps' and splits' sums of those).  A normalised input that the kernel
// rounds to the bf16 value next to the reference's moves the sum by one
// step of one term, far less.
static inline double dot_slack(const float *a, const float *b, size_t k) {
  double s = 0;
  for (size_t i = 0; i < k; i++)
    s += fabs((double)a[i] * b[i]);
  return s * 0x1p-14;
}

// Where an f32 sum is rounded to bf16 and the rounded value goes on into
// more roundings, the kernel's sum, within its slack of the exact one, can
// round to the bf16 value next to the reference's, and each rounding after
// can take one more step (SwiGLU's silu and product, a residual's add): a
// few steps of the result, past the default bound for values near rms.
// f_extra gives the extra bound: how far f(sums) moves with each sum
// anywhere in [sum - slack, sum + slack], taken at the corners, since
// rounding is monotone and a slack far below a bf16 step of the sum leaves
// it two values to round to (n sums: 2^n corners, n <= 8).
template <class F>
static inline double f_extra(F f, const double *sum, const double *slack, int n) {
  double at[8], r;
  if (n < 1 || n > 8) {
    fprintf(stderr, "f_extra: %d sums (1 to 8)\n", n);
    exit(2);
  }
  for (int i = 0; i < n; i++)
    at[i] = sum[i];
  r = f(at);
  double worst = 0;
  for (int c = 0; c < (1 << n); c++) {
    for (int i = 0; i < n; i++)
      at[i] = sum[i] + ((c >> i) & 1 ? slack[i] : -slack[i]);
    worst = fmax(worst, fabs(f(at) - r));
  }
  return worst;
}

// RMSNorm as the kernels compute it: bf16(g * bf16(x * rsqrt(mean(x^2) + eps))).
static inline void ref_rmsnorm(const float *x, const float *g, float *y, size_t k, float eps) {
  double ss = 0;
  for (size_t i = 0; i < k; i++)
    ss += (double)x[i] * x[i];
  const float r = (float)(1.0 / sqrt(ss / (double)k + eps));
  for (size_t i = 0; i < k; i++)
    y[i] = rbf(g[i] * rbf(x[i] * r));
}

static inline float ref_silu(float v) { return v / (1.0f + expf(-v)); }

// ---------------------------------------------------------------------------
// Comparisons.
//
// The default tolerance, |got - ref| <= 2^-7 |ref| + 1e-2 rms(ref): where
// the kernel and the reference round the same value to bf16, an f32 sum in
// another order (~1e-6 relative) can put them on two sides of a rounding
// boundary, one bf16 step apart: 2^-8 to 2^-7 of the value.  Where a rounded
// value feeds another rounding (SwiGLU's three, the residual add), a step
// in the first moves the next by up to its own step: the rms term covers
// that for values much smaller than the rest, and a check's extra bound
// (f_extra, above) for the others.  A wrong row, a lost
// token, a missing term of the sum or a wrong scale misses by about rms(ref).
static const double TOL_REL = 1.0 / 128, TOL_RMS = 1e-2;

static inline double rms(const std::vector<float> &v) {
  double s = 0;
  for (float f : v)
    s += (double)f * f;
  return v.empty() ? 0 : sqrt(s / (double)v.size());
}

// Checks every got[i] against ref[i] (with extra[i] added to the bound
// where given), prints the worst error as a fraction of its bound.
// LLM_TEST_BREAK=1 makes every reference 2^-5 larger, past the bound of any
// value above half rms(ref): so a run shows that each of these checks
// fails where the kernel is wrong.
static inline void expect_close(const char *what, const std::vector<float> &got,
                                const std::vector<float> &ref_in, double rel = TOL_REL,
                                double rms_frac = TOL_RMS,
                                const std::vector<float> *extra = nullptr) {
  static const bool broken = getenv("LLM_TEST_BREAK") && atoi(getenv("LLM_TEST_BREAK"));
  std::vector<float> ref = ref_in;
  if (broken)
    for (float &v : ref)
      v *= 1.0f + 1.0f / 32;
  EXPECT(got.size() == ref.size(), "%s: %zu values, the reference %zu", what, got.size(),
         ref.size());
  const double floor_abs = rms_frac * rms(ref);
  double worst = 0;
  size_t at = 0, bad = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); i++) {
    const double bound = rel * fabs(ref[i]) + floor_abs + (extra ? (*extra)[i] : 0.0);
    const double err = fabs((double)got[i] - ref[i]);
    const double f = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
    if (!(f <= 1)) // NaN too
      bad++;
    if (!(f <= worst)) {
      worst = f;
      at = i;
    }
  }
  printf("  %s: worst error %.3g of its bound (at %zu: got %.6g, expected %.6g)\n", what, worst,
         at, got.empty() ? 0.0 : got[at], ref.empty() ? 0.0 : ref[at]);
  EXPECT(bad == 0, "%s: %zu of %zu values out of tolerance, worst %.3g of its bound at %zu", what,
         bad, got.size(), worst, at);
}

static inline void expect_close_bf16(const char *what, const std::vector<bf16_bits> &got,
                                     const std::vector<float> &ref, double rel = TOL_REL,
                                     double rms_frac = TOL_RMS,
                                     const std::vector<float> *extra = nullptr) {
  expect_close(what, to_float(got), ref, rel, rms_frac, extra);
}

static inline unsigned cdiv(size_t a, size_t b) { return (unsigned)((a + b - 1) / b); }

#endif
