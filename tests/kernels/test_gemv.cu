// test_gemv.cu: the GEMV kernels of kernels/llm.cgraph (llm_gemv and its
// residual, SwiGLU, grouped, norm and argmax forms, with llm_argmax after the
// argmax form) at DeepSeek-V2-Lite's shapes and at awkward ones, against a
// CPU reference.
#include "llm_test.h"

namespace {

enum Kind { PLAIN, RESIDUAL, SWIGLU, GROUPED, NORM, NORM_SWIGLU, NORM_ARGMAX };
const char *const kind_names[] = {"llm_gemv",      "llm_gemv_residual",   "llm_gemv_swiglu",
                                  "llm_gemv_grouped", "llm_norm_gemv",    "llm_norm_gemv_swiglu",
                                  "llm_norm_gemv_argmax"};

struct Case {
  const char *what;
  Kind kind;
  unsigned n, k, m;
  unsigned grid;  // 0: one pass, cdiv(n, LLM_GEMV_ROWS), LLM_SWIGLU_ROWS for SwiGLU
  unsigned x_off; // elements before x's first: an offset that is not 16-byte aligned
  unsigned group, x_group, x_token; // llm_gemv_grouped's
  unsigned g_off; // elements before the norm weights' first
};

Case C(const char *what, Kind kind, unsigned n, unsigned k, unsigned m, unsigned grid = 0,
       unsigned x_off = 0, unsigned g_off = 0) {
  return Case{what, kind, n, k, m, grid, x_off, 0, 0, 0, g_off};
}
Case grouped(const char *what, unsigned n, unsigned k, unsigned m, unsigned grid, unsigned group,
             unsigned x_group, unsigned x_token) {
  return Case{what, GROUPED, n, k, m, grid, 0, group, x_group, x_token, 0};
}

const float EPS = 1e-6f;
const unsigned GUARD = 64; // values past each output, which no kernel may write

bool swiglu(Kind k) { return k == SWIGLU || k == NORM_SWIGLU; }
bool normed(Kind k) { return k == NORM || k == NORM_SWIGLU || k == NORM_ARGMAX; }

void run_case(const Case &c) {
  const unsigned grid =
      c.grid ? c.grid : cdiv(c.n, swiglu(c.kind) ? LLM_SWIGLU_ROWS : LLM_GEMV_ROWS);
  printf("%s: %s n=%u k=%u m=%u grid=%u%s%s\n", c.what, kind_names[c.kind], c.n, c.k, c.m, grid,
         c.x_off ? " (x not 16-byte aligned)" : "", c.g_off ? " (g not 16-byte aligned)" : "");
  const size_t rows = swiglu(c.kind) ? 2 * (size_t)c.n : c.n;
  const size_t x_token = c.kind == GROUPED ? c.x_token : c.k;
  const size_t groups = c.kind == GROUPED ? c.n / c.group : 1;
  const size_t x_len = c.x_off + (c.m - 1) * x_token + (groups - 1) * c.x_group + c.k;

  // Weights about 1/sqrt(k) so that the outputs are about 1 at every k.
  std::vector<bf16_bits> w = rand_bf16(rows * c.k, 1.7f / sqrtf((float)c.k));
  std::vector<bf16_bits> x = rand_bf16(x_len, 1.0f);
  std::vector<bf16_bits> g(c.g_off + c.k);
  for (auto &v : g)
    v = f2bf(0.5f + rand01());
  const size_t out = (size_t)c.m * c.n;
  std::vector<bf16_bits> y0 = rand_bf16(out + GUARD, 1.0f); // the residual's, and the guard
  if (c.kind != RESIDUAL)
    std::fill(y0.begin(), y0.begin() + out, (bf16_bits)0x7fc1); // NaN: a value left unwritten fails

  Dev<bf16_bits> dw(w.size()), dx(x.size()), dg(g.size()), dy(out + GUARD);
  Dev<float> dyf(out + GUARD);
  Dev<uint64_t> dbest((size_t)c.m * grid);
  Dev<uint32_t> dtok(c.m);
  dw.put(w);
  dx.put(x);
  dg.put(g);
  dy.put(y0);
  std::vector<float> yf0(out + GUARD, NAN);
  for (unsigned i = 0; i < GUARD; i++)
    yf0[out + i] = (float)i;
  dyf.put(yf0);

  const auto *W = reinterpret_cast<const __nv_bfloat16 *>(dw.d);
  const auto *X = reinterpret_cast<const __nv_bfloat16 *>(dx.d) + c.x_off;
  const auto *G = reinterpret_cast<const __nv_bfloat16 *>(dg.d) + c.g_off;
  auto *Y = reinterpret_cast<__nv_bfloat16 *>(dy.d);
  const size_t smem = (size_t)c.m * c.k * 2;
  switch (c.kind) {
  case PLAIN:
    allow_smem(llm_gemv, smem);
    llm_gemv<<<grid, LLM_THREADS, smem>>>(W, X, Y, c.n, c.k, c.m);
    break;
  case RESIDUAL:
    allow_smem(llm_gemv_residual, smem);
    llm_gemv_residual<<<grid, LLM_THREADS, smem>>>(W, X, Y, c.n, c.k, c.m);
    break;
  case SWIGLU:
    allow_smem(llm_gemv_swiglu, smem);
    llm_gemv_swiglu<<<grid, LLM_THREADS, smem>>>(W, X, Y, c.n, c.k, c.m);
    break;
  case GROUPED:
    allow_smem(llm_gemv_grouped, smem);
    llm_gemv_grouped<<<grid, LLM_THREADS, smem>>>(W, X, Y, c.n, c.k, c.m, c.group, c.x_group,
                                                   c.x_token);
    break;
  case NORM:
    allow_smem(llm_norm_gemv, smem);
    llm_norm_gemv<<<grid, LLM_THREADS, smem>>>(W, X, G, Y, c.n, c.k, c.m, EPS);
    break;
  case NORM_SWIGLU:
    allow_smem(llm_norm_gemv_swiglu, smem);
    llm_norm_gemv_swiglu<<<grid, LLM_THREADS, smem>>>(W, X, G, Y, c.n, c.k, c.m, EPS);
    break;
  case NORM_ARGMAX:
    allow_smem(llm_norm_gemv_argmax, smem);
    llm_norm_gemv_argmax<<<grid, LLM_THREADS, smem>>>(W, X, G, dyf.d, dbest.d, c.n, c.k, c.m,
                                                       EPS);
    CK_LAUNCH();
    llm_argmax<<<c.m, LLM_THREADS>>>(dbest.d, grid, dtok.d, c.m);
    break;
  }
  CK_LAUNCH();

  // The reference: each token's input row (normalised where the kernel
  // normalises), then a sum a weight row in double, rounded as the kernel rounds.
  const std::vector<float> wf = to_float(w), xf = to_float(x), gf = to_float(g);
  std::vector<float> xin((size_t)c.m * groups * c.k);
  for (unsigned t = 0; t < c.m; t++)
    for (size_t gi = 0; gi < groups; gi++) {
      const float *src = xf.data() + c.x_off + t * x_token + gi * c.x_group;
      float *dst = xin.data() + (t * groups + gi) * c.k;
      if (normed(c.kind))
        ref_rmsnorm(src, gf.data() + c.g_off, dst, c.k, EPS);
      else
        std::copy(src, src + c.k, dst);
    }
  // extra: how far the value moves with the kernel's f32 sums anywhere
  // within their slack of the reference's (f_extra in llm_test.h).
  std::vector<float> ref(out), extra(out);
  parallel_for(c.n, [&](size_t u) {
    const size_t gi = c.kind == GROUPED ? u / c.group : 0;
    for (unsigned t = 0; t < c.m; t++) {
      const float *xr = xin.data() + (t * groups + gi) * c.k;
      const float y0v = c.kind == RESIDUAL ? bf2f(y0[t * c.n + u]) : 0.0f;
      const auto value = [&](const double *sum) -> float {
        const float acc = (float)sum[0];
        if (swiglu(c.kind))
          return rbf(rbf(ref_silu(rbf(acc))) * rbf((float)sum[1]));
        if (c.kind == RESIDUAL)
          return rbf(y0v + rbf(acc));
        return c.kind == NORM_ARGMAX ? acc : rbf(acc);
      };
      // row u's sum, and for SwiGLU its up row's (row n + u)
      const int sums = swiglu(c.kind) ? 2 : 1;
      double sum[2], slack[2];
      for (int j = 0; j < sums; j++) {
        const float *w = wf.data() + (j * c.n + u) * c.k;
        sum[j] = dot(w, xr, c.k);
        slack[j] = dot_slack(w, xr, c.k);
      }
      ref[t * c.n + u] = value(sum);
      extra[t * c.n + u] = (float)f_extra(value, sum, slack, sums);
    }
  });

  if (c.kind == NORM_ARGMAX) {
    std::vector<float> yf = dyf.get();
    bool guard_ok = true;
    for (unsigned i = 0; i < GUARD; i++)
      guard_ok = guard_ok && yf[out + i] == (float)i;
    EXPECT(guard_ok, "%s: a logit written past m * n", c.what);
    const std::vector<uint32_t> tok = dtok.get();
    for (unsigned t = 0; t < c.m; t++) {
      // The token is the first index of the largest of the kernel's own logits.
      const float *l = yf.data() + (size_t)t * c.n;
      const uint32_t first = (uint32_t)(std::max_element(l, l + c.n) - l);
      EXPECT(tok[t] == first, "%s: token %u: llm_argmax chose %u, the first largest logit is %u",
             c.what, t, tok[t], first);
    }
    yf.resize(out);
    expect_close("logits", yf, ref, TOL_REL, TOL_RMS, &extra);
  } else {
    std::vector<bf16_bits> y = dy.get();
    EXPECT(std::equal(y.begin() + out, y.end(), y0.begin() + out), "%s: a value written past m * n",
           c.what);
    y.resize(out);
    expect_close_bf16(kind_names[c.kind], y, ref, TOL_REL, TOL_RMS, &extra);
  }
}

} // namespace

int main() {
  test_start("gpu.kernels.gemv");
  const unsigned H = 2048; // DeepSeek-V2-Lite's hidden size
  const Case cases[] = {
      // DeepSeek-V2-Lite's shapes: q_proj and kv_a_proj stacked, normalised input
      C("q_proj+kv_a", NORM, 3648, H, 1),
      C("q_proj+kv_a", NORM, 3648, H, 3),
      C("q_proj+kv_a", NORM, 3648, H, 8),
      C("o_proj", RESIDUAL, H, H, 1),
      C("o_proj", RESIDUAL, H, H, 8),
      C("dense gate+up", NORM_SWIGLU, 10944, H, 1),
      C("dense gate+up", NORM_SWIGLU, 10944, H, 8),
      C("dense gate+up", SWIGLU, 10944, H, 3),
      C("dense down", RESIDUAL, H, 10944, 1),
      C("dense down", RESIDUAL, H, 10944, 8),
      C("expert gate+up", SWIGLU, 1408, H, 1),
      C("expert down (k = 1408)", RESIDUAL, H, 1408, 1),
      C("expert down (k = 1408)", RESIDUAL, H, 1408, 8),
      C("k = 1408", PLAIN, H, 1408, 3),
      C("k = 1408", NORM, 37, 1408, 8),
      grouped("MLA value half", 16 * 128, 512, 1, 0, 128, 512, 16 * 512),
      grouped("MLA value half", 16 * 128, 512, 8, 0, 128, 512, 16 * 512),
      C("LM head", NORM_ARGMAX, 102400, H, 1),
      C("LM head", NORM_ARGMAX, 102400, H, 8),
      // n and k no multiple of any tile (k % 8 != 0: the value-at-a-time path)
      C("n, k off the tiles", PLAIN, 37, 1000, 1),
      C("n, k off the tiles", PLAIN, 37, 1000, 3),
      C("n, k off the tiles", PLAIN, 37, 1000, 8),
      C("n, k off the tiles", RESIDUAL, 37, 1000, 3),
      C("n, k off the tiles", SWIGLU, 37, 1000, 8),
      C("n, k off the tiles", NORM, 37, 1000, 1),
      C("n, k off the tiles", NORM_SWIGLU, 37, 1000, 3),
      C("n, k off the tiles", NORM_ARGMAX, 37, 1000, 8),
      grouped("n, k off the tiles", 48, 1000, 3, 0, 16, 1003, 3 * 1003),
      C("n = 1, k = 8", PLAIN, 1, 8, 1),
      C("n = 1, k = 8", PLAIN, 1, 8, 8),
      C("n = 1, k = 8", NORM_ARGMAX, 1, 8, 3),
      // x not 16-byte aligned (the value-at-a-time path at a fast k)
      C("x misaligned", PLAIN, H, H, 1, 0, 1),
      C("x misaligned", NORM, 3648, H, 8, 0, 3),
      C("x misaligned", RESIDUAL, 100, 1408, 3, 0, 5),
      // grids smaller than one pass (blocks take several) and larger
      C("grid of 3", PLAIN, 3648, H, 8, 3),
      C("grid of 3", SWIGLU, 1000, H, 3, 3),
      C("grid of 3", NORM_ARGMAX, 5000, H, 8, 3),
      grouped("grid of 3", 16 * 128, 512, 3, 3, 128, 512, 16 * 512),
      C("grid of 1", RESIDUAL, 100, 64, 8, 1),
      C("grid of 1", NORM_ARGMAX, 37, 1000, 1, 1),
      C("grid past one pass", PLAIN, 37, 1000, 3, 10),
      C("grid past one pass", NORM_ARGMAX, 37, 1000, 3, 10),
      // the norm weights not 16-byte aligned, x aligned (the path for any
      // alignment: the vector path reads g 16 bytes at a time)
      C("g misaligned", NORM, 3648, H, 3, 0, 0, 1),
      C("g misaligned", NORM_SWIGLU, 1408, H, 1, 0, 0, 3),
  };
  for (const Case &c : cases)
    run_case(c);
  return test_end();
}
