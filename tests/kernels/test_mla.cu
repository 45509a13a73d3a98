// test_mla.cu: multi-head latent attention of kernels/llm.cgraph: llm_mla_prep
// (queries into the latent space, RoPE, the cache row), then llm_mla_decode
// split over keys and llm_mla_combine, against CPU attention in the
// absorbed form; llm_mla_combine_up against llm_mla_combine and
// llm_gemv_grouped.
#include "llm.h"
#include "llm_test.h"

namespace {

const unsigned H = LLM_MLA_H, NOPE = LLM_MLA_NOPE, ROPE = LLM_MLA_ROPE, KVR = LLM_MLA_KVR;
const unsigned QK = NOPE + ROPE, CH = KVR + ROPE, QKV = H * QK + KVR + ROPE;
const unsigned COMBINE_THREADS = 128; // llm_mla_combine's block(128)
const float EPS = 1e-6f;

auto B(bf16_bits *p) { return reinterpret_cast<__nv_bfloat16 *>(p); }

int compute_major() {
  int dev = 0, major = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return major;
}

// As tests/kernels/test_norm.cu's ref_rope: rope64's formula.
void ref_rope(const float *in, float *out, uint32_t pos, const float *inv_freq, float mscale) {
  for (int i = 0; i < 32; i++) {
    const float angle = (float)pos * inv_freq[i];
    const float c = rbf((float)cos((double)angle) * mscale);
    const float s = rbf((float)sin((double)angle) * mscale);
    const float x1 = in[2 * i], x2 = in[2 * i + 1];
    out[i] = rbf(rbf(x1 * c) + rbf(-x2 * s));
    out[32 + i] = rbf(rbf(x2 * c) + rbf(x1 * s));
  }
}

// llm_mla_prep for m tokens at positions pos, cache rows of maxpos.
void run_prep(const std::vector<uint32_t> &pos, unsigned maxpos, const float *inv_freq,
              float mscale) {
  const unsigned m = (unsigned)pos.size();
  printf("llm_mla_prep m=%u maxpos=%u\n", m, maxpos);
  const std::vector<bf16_bits> w = rand_bf16((size_t)H * KVR * NOPE, 1.7f / sqrtf((float)NOPE));
  const std::vector<bf16_bits> qkv = rand_bf16((size_t)m * QKV, 2.0f);
  std::vector<bf16_bits> kv_norm(KVR);
  for (auto &v : kv_norm)
    v = f2bf(0.5f + rand01());
  const size_t cache_len = (size_t)m * maxpos * CH;
  const std::vector<bf16_bits> cache0 = rand_bf16(cache_len, 1.0f);
  Dev<bf16_bits> dw(w.size()), dqkv(qkv.size()), dnorm(KVR), dqlat((size_t)m * H * KVR),
      dqpe((size_t)m * H * ROPE), dcache(cache_len);
  Dev<float> dfreq(32);
  Dev<uint32_t> dpos(m);
  dw.put(w);
  dqkv.put(qkv);
  dnorm.put(kv_norm);
  dcache.put(cache0);
  dfreq.put(std::vector<float>(inv_freq, inv_freq + 32));
  dpos.put(pos);
  dqlat.put(std::vector<bf16_bits>(dqlat.n, 0x7fc1)); // NaN: a value left unwritten fails
  dqpe.put(std::vector<bf16_bits>(dqpe.n, 0x7fc1));
  const unsigned grid = cdiv(H * KVR, LLM_GEMV_ROWS) + 1;
  llm_mla_prep<<<grid, LLM_THREADS, m * LLM_MLA_PREP_SMEM>>>(B(dw.d), B(dqkv.d), B(dnorm.d), dfreq.d,
                                                   dpos.d, B(dqlat.d), B(dqpe.d), B(dcache.d), m,
                                                   maxpos, EPS, mscale);
  CK_LAUNCH();

  const std::vector<float> wf = to_float(w), qf = to_float(qkv), nf = to_float(kv_norm);
  std::vector<float> qlat((size_t)m * H * KVR), qpe((size_t)m * H * ROPE);
  parallel_for((size_t)H * KVR, [&](size_t row) { // row h * KVR + c reads head h's q_nope
    const size_t h = row / KVR;
    for (unsigned t = 0; t < m; t++)
      qlat[(size_t)t * H * KVR + row] =
          rbf((float)dot(wf.data() + row * NOPE, qf.data() + (size_t)t * QKV + h * QK, NOPE));
  });
  std::vector<float> cache_ref = to_float(cache0);
  for (unsigned t = 0; t < m; t++) {
    const float *row = qf.data() + (size_t)t * QKV;
    for (unsigned h = 0; h < H; h++)
      ref_rope(row + h * QK + NOPE, qpe.data() + ((size_t)t * H + h) * ROPE, pos[t], inv_freq,
               mscale);
    float *dst = cache_ref.data() + ((size_t)t * maxpos + pos[t]) * CH;
    ref_rmsnorm(row + H * QK, nf.data(), dst, KVR, EPS);
    ref_rope(row + H * QK + KVR, dst + KVR, pos[t], inv_freq, mscale);
  }
  expect_close_bf16("q_lat", dqlat.get(), qlat);
  expect_close_bf16("q_pe", dqpe.get(), qpe);
  const std::vector<bf16_bits> cache = dcache.get();
  size_t moved = 0;
  std::vector<float> rows_got, rows_ref;
  for (unsigned t = 0; t < m; t++)
    for (unsigned p = 0; p < maxpos; p++) {
      const size_t at = ((size_t)t * maxpos + p) * CH;
      for (unsigned i = 0; i < CH; i++) {
        if (p == pos[t]) {
          rows_got.push_back(bf2f(cache[at + i]));
          rows_ref.push_back(cache_ref[at + i]);
        } else
          moved += cache[at + i] != cache0[at + i];
      }
    }
  EXPECT(moved == 0, "%zu cache values outside the rows at pos[t] changed", moved);
  expect_close("cache rows at pos[t]", rows_got, rows_ref);
}

// llm_mla_combine_up joins the splits as llm_mla_combine does and multiplies
// by w_uv as llm_gemv_grouped does: its output must be those two kernels'
// to the bit (the same operations in the same order), at one pass (also in
// clusters) and, when the combine was given a small grid, at `grid` blocks
// striding.
void check_combine_up(Dev<bf16_bits> &o, Dev<float> &part, Dev<float> &ml, unsigned splits,
                      unsigned m, unsigned grid) {
  const unsigned N = H * LLM_MLA_VD, rows = LLM_GEMV_ROWS;
  const std::vector<bf16_bits> w = rand_bf16((size_t)N * KVR, 1.0f / sqrtf((float)KVR));
  Dev<bf16_bits> dw(w.size()), want((size_t)m * N), got((size_t)m * N);
  dw.put(w);
  want.put(std::vector<bf16_bits>(want.n, 0x7fc1));
  got.put(std::vector<bf16_bits>(got.n, 0x7fc1));
  const size_t smem = (size_t)m * KVR * 2;
  llm_gemv_grouped<<<N / rows, LLM_THREADS, smem>>>(B(dw.d), B(o.d), B(want.d), N, KVR, m,
                                                    LLM_MLA_VD, KVR, H * KVR);
  CK_LAUNCH();
  llm_mla_combine_up<<<grid ? grid : N / rows, LLM_THREADS, smem>>>(B(dw.d), part.d, ml.d,
                                                                    B(got.d), splits, m);
  CK_LAUNCH();
  const std::vector<bf16_bits> a = want.get();
  const auto compare = [&](const char *how) {
    const std::vector<bf16_bits> b = got.get();
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); i++)
      differ += a[i] != b[i];
    EXPECT(differ == 0, "llm_mla_combine_up%s: %zu of %zu outputs differ from llm_mla_combine + "
                        "llm_gemv_grouped (first at %zu)",
           how, differ, a.size(),
           (size_t)(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin()));
  };
  compare("");
  // In clusters of 2 and 8 blocks of a head, which join its splits together
  // (one pass; compute capability 9.0): the same bits.
  if (grid || compute_major() < 9)
    return;
  for (unsigned c : {2u, 8u}) {
    got.put(std::vector<bf16_bits>(got.n, 0x7fc1));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(N / rows);
    cfg.blockDim = dim3(LLM_THREADS);
    cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr = cluster_along_x(c);
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, llm_mla_combine_up, (const __nv_bfloat16 *)B(dw.d),
                          (const float *)part.d, (const float *)ml.d, B(got.d), splits, m));
    CK_LAUNCH();
    compare(c == 2 ? " in clusters of 2" : " in clusters of 8");
  }
}

// llm_mla_decode over `splits` blocks a token (in clusters of `cluster`
// blocks when it is past 1, whose splits are joined in the cluster: splits
// / cluster partial results a token), then llm_mla_combine, for
// tokens at positions pos (pos[t] + 1 live keys each) in a cache of maxpos
// rows.  Rows past pos[t] hold NaN: a kernel that reads one fails.  With
// `count`, the queries are 0 (every live key weighs the same) and the
// latent value d of key j is 1 where j % KVR == d, else 0: o[t][h][d] is
// the share of the live keys j with j % KVR == d, so a key lost or taken
// twice shows.
// combine_grid: llm_mla_combine's grid.x (0: one pass).  stages: the tiles
// of keys the decode keeps in flight (its smem by the launch rule).
void run_decode(const std::vector<uint32_t> &pos, unsigned maxpos, unsigned splits, float scale,
                bool count, unsigned combine_grid = 0, unsigned cluster = 1,
                unsigned stages = 1) {
  const unsigned m = (unsigned)pos.size(), parts = splits / cluster;
  const unsigned cgrid = combine_grid ? combine_grid : H * KVR / COMBINE_THREADS;
  const size_t smem = LLM_MLA_SMEM + (size_t)(stages - 1) * LLM_MLA_TILE_SMEM;
  printf("llm_mla_decode + llm_mla_combine%s: m=%u keys=%u.. splits=%u cluster=%u stages=%u "
         "maxpos=%u combine grid=%u\n",
         count ? " (counting keys)" : "", m, pos[0] + 1, splits, cluster, stages, maxpos, cgrid);
  std::vector<bf16_bits> qlat = rand_bf16((size_t)m * H * KVR, 1.0f);
  std::vector<bf16_bits> qpe = rand_bf16((size_t)m * H * ROPE, 1.0f);
  std::vector<bf16_bits> cache = rand_bf16((size_t)m * maxpos * CH, 1.0f);
  for (unsigned t = 0; t < m; t++)
    for (unsigned p = 0; p < maxpos; p++)
      for (unsigned i = 0; i < CH; i++) {
        bf16_bits &v = cache[((size_t)t * maxpos + p) * CH + i];
        if (p > pos[t])
          v = 0x7fc1;
        else if (count && i < KVR)
          v = f2bf(p % KVR == i ? 1.0f : 0.0f);
      }
  if (count) {
    std::fill(qlat.begin(), qlat.end(), 0);
    std::fill(qpe.begin(), qpe.end(), 0);
  }
  Dev<bf16_bits> dqlat(qlat.size()), dqpe(qpe.size()), dcache(cache.size()),
      dout((size_t)m * H * KVR);
  Dev<uint32_t> dpos(m);
  // A partial result past the ones the decode writes is NaN: a join that
  // read one would show it.
  Dev<float> dpart((size_t)m * splits * H * KVR), dml((size_t)m * splits * H * 2);
  dpart.put(std::vector<float>(dpart.n, NAN));
  dml.put(std::vector<float>(dml.n, NAN));
  dqlat.put(qlat);
  dqpe.put(qpe);
  dcache.put(cache);
  dpos.put(pos);
  dout.put(std::vector<bf16_bits>(dout.n, 0x7fc1));
  allow_smem(llm_mla_decode, smem);
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(splits, m);
  cfg.blockDim = dim3(LLM_MLA_THREADS);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr = cluster_along_x(cluster);
  cfg.attrs = &attr;
  cfg.numAttrs = cluster > 1 ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, llm_mla_decode, (const __nv_bfloat16 *)B(dqlat.d),
                        (const __nv_bfloat16 *)B(dqpe.d), (const __nv_bfloat16 *)B(dcache.d),
                        (const uint32_t *)dpos.d, dpart.d, dml.d, m, maxpos, scale));
  CK_LAUNCH();
  llm_mla_combine<<<dim3(cgrid, m), COMBINE_THREADS>>>(dpart.d, dml.d, B(dout.d), parts, m);
  CK_LAUNCH();

  // scores_h(j) = scale (q_lat[h] . c[j][:KVR] + q_pe[h] . c[j][KVR:]),
  // softmax over j <= pos[t], o[h] = sum_j p_j c[j][:KVR].  The kernel rounds
  // each p_j to bf16 before P.V (2^-9 of it at most) and its exponentials
  // are __expf's: the bound adds 2^-8 sum_j p_j |c_j[d]| to each value's.
  const std::vector<float> qlf = to_float(qlat), qpf = to_float(qpe), cf = to_float(cache);
  std::vector<float> ref((size_t)m * H * KVR), extra(ref.size());
  parallel_for((size_t)m * H, [&](size_t th) {
    const size_t t = th / H, nk = pos[t] + 1;
    const float *c = cf.data() + t * maxpos * CH;
    std::vector<double> s(nk);
    double mx = -INFINITY;
    for (size_t j = 0; j < nk; j++) {
      s[j] = scale * (dot(qlf.data() + th * KVR, c + j * CH, KVR) +
                      dot(qpf.data() + th * ROPE, c + j * CH + KVR, ROPE));
      mx = std::max(mx, s[j]);
    }
    double l = 0;
    for (size_t j = 0; j < nk; j++)
      l += s[j] = exp(s[j] - mx);
    std::vector<double> o(KVR, 0.0), a(KVR, 0.0);
    for (size_t j = 0; j < nk; j++)
      for (unsigned d = 0; d < KVR; d++) {
        o[d] += s[j] * c[j * CH + d];
        a[d] += s[j] * fabs(c[j * CH + d]);
      }
    for (unsigned d = 0; d < KVR; d++) {
      ref[th * KVR + d] = (float)(o[d] / l);
      extra[th * KVR + d] = count ? 0.0f : (float)(a[d] / l / 256);
    }
  });
  // Counting: 0 and 1 are exact in bf16 and every p is 1, so only the
  // output's rounding (2^-8 of it) and f32 division remain.
  const std::vector<bf16_bits> o = dout.get();
  expect_close_bf16("o", o, ref, TOL_REL, count ? 0.0 : 1e-3, &extra);
  check_combine_up(dout, dpart, dml, parts, m, combine_grid);
}

} // namespace

int main() {
  test_start("gpu.kernels.mla");
  float inv_freq[32]; // DeepSeek-V2-Lite's YaRN (test_norm.cu checks these)
  llm_yarn_inv_freq(inv_freq, 64, 10000, 40, 4096, 32, 1);
  const float mscale = llm_yarn_rope_mscale(40, 0.707, 0.707);
  const float scale = llm_mla_softmax_scale(QK, 40, 0.707);

  run_prep({4095}, 4096, inv_freq, mscale);
  run_prep({0}, 3, inv_freq, mscale);
  std::vector<uint32_t> eight;
  for (unsigned t = 0; t < 8; t++)
    eight.push_back(rand_below(64));
  run_prep(eight, 64, inv_freq, mscale);
  run_prep({163839, 5, 0}, 163840, inv_freq, 1.25f); // the last position, cos and sin scaled

  // Splits of at least 64 keys each (llm.cgraph): 128 and 256 splits leave
  // most blocks past the keys, even at 4096.
  for (unsigned keys : {1u, 37u, 4096u})
    for (unsigned splits : {1u, 5u, 128u, 256u})
      for (unsigned m : {1u, 8u})
        for (bool count : {false, true}) {
          std::vector<uint32_t> pos;
          for (unsigned t = 0; t < m; t++) // token 0 at keys - 1, the others fewer
            pos.push_back(t == 0 ? keys - 1 : rand_below(keys));
          run_decode(pos, keys + 3, splits, scale, count);
        }
  // Clusters (compute capability 9.0): the sample's 64 splits in clusters
  // of 8, clusters wholly and partly past the keys, and clusters of 2.
  if (compute_major() >= 9) {
    for (unsigned keys : {1u, 37u, 300u, 4096u})
      for (unsigned m : {1u, 8u})
        for (bool count : {false, true}) {
          std::vector<uint32_t> pos;
          for (unsigned t = 0; t < m; t++)
            pos.push_back(t == 0 ? keys - 1 : rand_below(keys));
          run_decode(pos, keys + 3, 64, scale, count, 0, 8);
          run_decode(pos, keys + 3, 6, scale, count, 0, 2);
        }
    run_decode({4095, 100, 4000}, 4096, 256, scale, false, 5, 8);
    // Clusters with 2 and 4 tiles of keys in flight: 2 tiles a split (64
    // splits), and many (6 splits) with the newest key in the last.
    for (unsigned stages : {2u, 4u})
      for (bool count : {false, true}) {
        run_decode({4095, 1000, 31, 3000}, 4096, 64, scale, count, 0, 8, stages);
        run_decode({4095, 32, 2500}, 4096, 6, scale, count, 0, 2, stages);
      }
  } else
    printf("llm_mla_decode in clusters: skipped (compute capability %d)\n", compute_major());
  // 2 to 4 tiles of keys in flight: splits of one tile (the newest key
  // asked for after the wait into the first buffer), of 2 (into the
  // second), of fewer tiles than buffers, and of many tiles (the ring
  // wrapping round), their last tile full or partial.
  for (unsigned stages : {2u, 3u, 4u})
    for (unsigned keys : {37u, 300u, 4096u})
      for (unsigned splits : {1u, 5u, 64u})
        for (bool count : {false, true}) {
          std::vector<uint32_t> pos = {keys - 1};
          if (splits == 5)
            pos = {keys - 1, rand_below(keys), 0, keys / 2};
          run_decode(pos, keys + 3, splits, scale, count, 0, 1, stages);
        }
  // llm_mla_combine with fewer blocks than units (any grid.x is correct)
  run_decode({4095, 100, 4000}, 4096, 64, scale, false, 3);
  run_decode({4095}, 4096, 5, scale, true, 1);
  return test_end();
}
