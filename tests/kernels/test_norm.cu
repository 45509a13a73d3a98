// test_norm.cu: llm_rmsnorm, llm_add_rmsnorm and llm_rope of kernels/llm.cgraph
// against a CPU reference; llm_yarn_inv_freq (llm.h) against YaRN's two ends.
#include "llm.h"
#include "llm_test.h"

namespace {

const float EPS = 1e-6f;

// x = [m][n] (x updated by llm_add_rmsnorm, r added), y = RMSNorm(x) * g.
void run_rmsnorm(unsigned n, unsigned m, bool add) {
  printf("%s n=%u m=%u\n", add ? "llm_add_rmsnorm" : "llm_rmsnorm", n, m);
  const size_t len = (size_t)n * m;
  std::vector<bf16_bits> x = rand_bf16(len, 2.0f), r = rand_bf16(len, 1.0f), g(n);
  for (auto &v : g)
    v = f2bf(0.5f + rand01());
  std::vector<bf16_bits> y0(len + 64, 0x7fc1); // NaN: a value left unwritten fails
  Dev<bf16_bits> dx(len), dr(len), dg(n), dy(len + 64);
  dx.put(x);
  dr.put(r);
  dg.put(g);
  dy.put(y0);
  auto B = [](bf16_bits *p) { return reinterpret_cast<__nv_bfloat16 *>(p); };
  if (add)
    llm_add_rmsnorm<<<m, LLM_THREADS>>>(B(dx.d), B(dr.d), B(dg.d), B(dy.d), n, m, EPS);
  else
    llm_rmsnorm<<<m, LLM_THREADS>>>(B(dx.d), B(dg.d), B(dy.d), n, m, EPS);
  CK_LAUNCH();

  // x + r rounded to bf16 is exact on both sides; the norm is not (rsqrtf).
  std::vector<float> xs(len), ref(len), gf = to_float(g);
  for (size_t i = 0; i < len; i++)
    xs[i] = add ? rbf(bf2f(x[i]) + bf2f(r[i])) : bf2f(x[i]);
  for (unsigned t = 0; t < m; t++)
    ref_rmsnorm(xs.data() + (size_t)t * n, gf.data(), ref.data() + (size_t)t * n, n, EPS);
  const std::vector<bf16_bits> xg = dx.get();
  size_t x_bad = 0;
  for (size_t i = 0; i < len; i++)
    x_bad += bf2f(xg[i]) != xs[i];
  EXPECT(x_bad == 0, "%zu values of x are not %s", x_bad, add ? "bf16(x + r)" : "left as they were");
  std::vector<bf16_bits> y = dy.get();
  EXPECT(std::equal(y.begin() + len, y.end(), y0.begin() + len), "a value written past m * n");
  y.resize(len);
  expect_close_bf16("y", y, ref);
}

// DeepSeek-V2's RoPE (kernels/llm_mla.cuh, rope64) on the 64 values at
// x + t * x_token + h * x_head: pairs (x[2i], x[2i + 1]) laid out as
// (x'[i], x'[32 + i]), then x' cos + rotate_half(x') sin, with cos and sin
// times mscale rounded to bf16 and each product and the sum rounded.
void ref_rope(const float *in, float *out, uint32_t pos, const float *inv_freq, float mscale) {
  for (int i = 0; i < 32; i++) {
    const float angle = (float)pos * inv_freq[i]; // the kernel's f32 product
    const float c = rbf((float)cos((double)angle) * mscale);
    const float s = rbf((float)sin((double)angle) * mscale);
    const float x1 = in[2 * i], x2 = in[2 * i + 1];
    out[i] = rbf(rbf(x1 * c) + rbf(-x2 * s));
    out[32 + i] = rbf(rbf(x2 * c) + rbf(x1 * s));
  }
}

void run_rope(const char *what, const std::vector<uint32_t> &pos, unsigned heads, unsigned x_head,
              unsigned x_token, unsigned offset, float mscale, const float *inv_freq) {
  const unsigned m = (unsigned)pos.size();
  printf("llm_rope %s: m=%u heads=%u x_head=%u x_token=%u mscale=%g\n", what, m, heads, x_head,
         x_token, mscale);
  const size_t len = (size_t)m * x_token;
  const std::vector<bf16_bits> x = rand_bf16(len, 2.0f);
  Dev<bf16_bits> dx(len);
  Dev<uint32_t> dpos(m);
  Dev<float> dfreq(32);
  dx.put(x);
  dpos.put(pos);
  dfreq.put(std::vector<float>(inv_freq, inv_freq + 32));
  llm_rope<<<m, LLM_THREADS>>>(reinterpret_cast<__nv_bfloat16 *>(dx.d) + offset, dpos.d, dfreq.d,
                               heads, x_head, x_token, m, mscale);
  CK_LAUNCH();

  std::vector<float> ref = to_float(x);
  std::vector<char> roped(len, 0);
  for (unsigned t = 0; t < m; t++)
    for (unsigned h = 0; h < heads; h++) {
      const size_t at = offset + (size_t)t * x_token + (size_t)h * x_head;
      std::vector<float> in(ref.begin() + at, ref.begin() + at + 64);
      ref_rope(in.data(), ref.data() + at, pos[t], inv_freq, mscale);
      std::fill(roped.begin() + at, roped.begin() + at + 64, 1);
    }
  const std::vector<bf16_bits> got = dx.get();
  size_t moved = 0;
  std::vector<float> gr, rr;
  for (size_t i = 0; i < len; i++) {
    if (!roped[i])
      moved += got[i] != x[i];
    else {
      gr.push_back(bf2f(got[i]));
      rr.push_back(ref[i]);
    }
  }
  EXPECT(moved == 0, "%s: %zu values outside the RoPE parts changed", what, moved);
  expect_close("roped values", gr, rr);
}

} // namespace

int main() {
  test_start("gpu.kernels.norm");
  for (unsigned m : {1u, 3u, 8u}) {
    run_rmsnorm(2048, m, false);
    run_rmsnorm(2048, m, true);
  }
  run_rmsnorm(512, 8, false); // kv_a_layernorm's size
  run_rmsnorm(37, 3, false);  // fewer values than threads
  run_rmsnorm(3001, 2, true); // not a multiple of the block
  run_rmsnorm(10944, 1, true);

  // DeepSeek-V2-Lite's YaRN: rope_theta 10000, factor 40, 4096 original
  // positions, beta_fast 32, beta_slow 1, mscale = mscale_all_dim = 0.707.
  float inv_freq[32], plain[32];
  llm_yarn_inv_freq(inv_freq, 64, 10000, 40, 4096, 32, 1);
  llm_yarn_inv_freq(plain, 64, 10000, 1, 4096, 32, 1);
  const float mscale = llm_yarn_rope_mscale(40, 0.707, 0.707);
  EXPECT(mscale == 1.0f, "DeepSeek-V2-Lite's cos/sin factor is %g, not 1", mscale);
  // YaRN's ends: the fastest frequencies (below dimension 10 here) are kept,
  // the slowest (23 and above) divided by the factor; 1 keeps them all.
  for (int i = 0; i < 32; i++) {
    const double base = pow(10000.0, -2.0 * i / 64);
    EXPECT(fabs(plain[i] - base) <= 1e-6 * base, "plain inv_freq[%d] = %g, not %g", i, plain[i],
           base);
    if (i <= 10)
      EXPECT(fabs(inv_freq[i] - base) <= 1e-6 * base, "inv_freq[%d] = %g, not %g", i, inv_freq[i],
             base);
    if (i >= 23)
      EXPECT(fabs(inv_freq[i] - base / 40) <= 1e-6 * base / 40, "inv_freq[%d] = %g, not %g", i,
             inv_freq[i], base / 40);
  }

  const std::vector<uint32_t> ends = {0, 1, 4095, 163839};
  std::vector<uint32_t> mixed;
  for (int t = 0; t < 8; t++)
    mixed.push_back(rand_below(163840));
  const unsigned QKV = LLM_MLA_H * (LLM_MLA_NOPE + LLM_MLA_ROPE) + LLM_MLA_KVR + LLM_MLA_ROPE;
  const unsigned QK = LLM_MLA_NOPE + LLM_MLA_ROPE;
  // q's RoPE parts in a row of q_proj + kv_a_proj's outputs, 16 heads
  run_rope("q", ends, LLM_MLA_H, QK, QKV, LLM_MLA_NOPE, mscale, inv_freq);
  run_rope("q", mixed, LLM_MLA_H, QK, QKV, LLM_MLA_NOPE, mscale, inv_freq);
  // the shared key's, one head
  run_rope("k_pe", ends, 1, 0, QKV, LLM_MLA_H * QK + LLM_MLA_KVR, mscale, inv_freq);
  // more heads than warps, and cos and sin scaled
  run_rope("40 heads", {7, 163839, 2}, 40, 64, 40 * 64 + 8, 0, 1.25f, inv_freq);
  run_rope("plain frequencies", ends, 2, 64, 128, 0, 1.0f, plain);
  return test_end();
}
