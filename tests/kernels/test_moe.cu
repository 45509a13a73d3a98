// test_moe.cu: the mixture-of-experts kernels of kernels/llm.cgraph:
// llm_moe_route (logits, softmax, top k on the device), then llm_moe_gate_up
// and llm_moe_down (and llm_moe_down_lean, the same bits) on the experts the
// router chose, against a CPU reference, at DeepSeek-V2-Lite's sizes and at
// small awkward ones.
#include "llm_test.h"

namespace {

const float EPS = 1e-6f;

auto B(bf16_bits *p) { return reinterpret_cast<__nv_bfloat16 *>(p); }

struct Moe {
  unsigned experts, k, topk, fe, fs; // n, the down projections' outputs, is k
};

// The softmax of n logits, in double.
std::vector<double> softmax(const float *logits, unsigned n) {
  std::vector<double> p(n);
  double mx = -INFINITY, sum = 0;
  for (unsigned e = 0; e < n; e++)
    mx = std::max(mx, (double)logits[e]);
  for (unsigned e = 0; e < n; e++)
    sum += p[e] = exp(logits[e] - mx);
  for (auto &v : p)
    v /= sum;
  return p;
}

// The router's state on the device, kept across calls (count must come back
// to zero for the next call).
struct Router {
  const Moe &s;
  unsigned m;
  std::vector<bf16_bits> w, g;
  Dev<bf16_bits> dw, dg, dx;
  Dev<float> dlogits, dweights;
  Dev<uint32_t> dcount, dids;
  // distinct: where not 0, expert e's row is expert e % distinct's, so that
  // experts tie (the same logits to the bit).
  Router(const Moe &shape, unsigned tokens, unsigned distinct = 0)
      : s(shape), m(tokens), w(rand_bf16((size_t)shape.experts * shape.k,
                                         1.7f / sqrtf((float)shape.k))),
        g(shape.k), dw(w.size()), dg(shape.k), dx((size_t)tokens * shape.k),
        dlogits((size_t)tokens * shape.experts), dweights((size_t)tokens * shape.topk),
        dcount(tokens), dids((size_t)tokens * shape.topk) {
    for (auto &v : g)
      v = f2bf(0.5f + rand01());
    for (size_t e = distinct; distinct && e < shape.experts; e++)
      std::copy_n(w.begin() + (e % distinct) * shape.k, shape.k, w.begin() + e * shape.k);
    dw.put(w);
    dg.put(g);
    CK(cudaMemset(dcount.d, 0, m * sizeof(uint32_t)));
  }

  // The same launch as clusters of its blocks, one a token (compute
  // capability 9.0; skipped before): the logits meet in the first block's
  // shared memory instead of global memory and an atomic count, and every
  // output must be the same to the bit.
  void route_as_clusters(const std::vector<uint32_t> &ids, const std::vector<float> &weights,
                         const std::vector<float> &logits) {
    int dev = 0, clusters = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, dev));
    const unsigned blocks = cdiv(s.experts, LLM_SWIGLU_ROWS);
    if (!clusters || blocks > 8)
      return;
    CK(cudaMemset(dids.d, 0xff, dids.n * sizeof(uint32_t)));
    CK(cudaMemset(dweights.d, 0xff, dweights.n * sizeof(float)));
    CK(cudaMemset(dlogits.d, 0xff, dlogits.n * sizeof(float)));
    cudaLaunchConfig_t c = {};
    c.gridDim = dim3(blocks, m);
    c.blockDim = dim3(LLM_THREADS);
    c.dynamicSmemBytes = s.k * 2;
    cudaLaunchAttribute attr = cluster_along_x(blocks);
    c.attrs = &attr;
    c.numAttrs = 1;
    CK(cudaLaunchKernelEx(&c, llm_moe_route, (const __nv_bfloat16 *)B(dw.d),
                          (const __nv_bfloat16 *)B(dx.d), (const __nv_bfloat16 *)B(dg.d),
                          dlogits.d, dcount.d, dids.d, dweights.d, s.experts, s.k, m, s.topk,
                          EPS));
    CK_LAUNCH();
    EXPECT(dids.get() == ids, "clusters of %u blocks: other expert ids", blocks);
    const std::vector<float> w2 = dweights.get(), l2 = dlogits.get();
    EXPECT(memcmp(w2.data(), weights.data(), w2.size() * sizeof(float)) == 0,
           "clusters of %u blocks: other weights", blocks);
    EXPECT(memcmp(l2.data(), logits.data(), l2.size() * sizeof(float)) == 0,
           "clusters of %u blocks: other logits", blocks);
    const std::vector<uint32_t> count = dcount.get();
    for (unsigned t = 0; t < m; t++)
      EXPECT(count[t] == 0, "clusters: token %u: count left at %u", t, count[t]);
  }

  // Routes x ([m][k]) and checks the ids and weights against the CPU's.
  void route(const std::vector<bf16_bits> &x, std::vector<uint32_t> &ids,
             std::vector<float> &weights) {
    dx.put(x);
    CK(cudaMemset(dids.d, 0xff, dids.n * sizeof(uint32_t)));
    llm_moe_route<<<dim3(cdiv(s.experts, LLM_SWIGLU_ROWS), m), LLM_THREADS, s.k * 2>>>(
        B(dw.d), B(dx.d), B(dg.d), dlogits.d, dcount.d, dids.d, dweights.d, s.experts, s.k, m,
        s.topk, EPS);
    CK_LAUNCH();
    ids = dids.get();
    weights = dweights.get();
    const std::vector<uint32_t> count = dcount.get();
    const std::vector<float> logits = dlogits.get();
    route_as_clusters(ids, weights, logits);

    const std::vector<float> wf = to_float(w), gf = to_float(g), xf = to_float(x);
    std::vector<float> xn(s.k), lref_all;
    for (unsigned t = 0; t < m; t++) {
      float *lref = &*lref_all.insert(lref_all.end(), s.experts, 0.0f);
      EXPECT(count[t] == 0, "token %u: count left at %u", t, count[t]);
      ref_rmsnorm(xf.data() + (size_t)t * s.k, gf.data(), xn.data(), s.k, EPS);
      for (unsigned e = 0; e < s.experts; e++)
        lref[e] = (float)dot(wf.data() + (size_t)e * s.k, xn.data(), s.k);
      const std::vector<double> p = softmax(lref, s.experts);
      // The choice is checked against the kernel's own logits (checked
      // against the CPU's below): two experts whose probabilities differ by
      // less than the logits' error (a normalised input rounded the other
      // way moves a logit by ~1e-4 relative) may come in either order on the
      // CPU, and the test would fail at random seeds.  pk: the softmax of the
      // kernel's logits, in double.
      const std::vector<double> pk = softmax(logits.data() + (size_t)t * s.experts, s.experts);
      std::vector<uint32_t> order(s.experts);
      for (unsigned e = 0; e < s.experts; e++)
        order[e] = e;
      std::stable_sort(order.begin(), order.end(),
                       [&](uint32_t a, uint32_t b) { return pk[a] > pk[b]; });
      // The top k of the kernel's logits, largest first.  Another expert in
      // a place only where the two probabilities are within 1e-6 of each
      // other (relative: f32 expf and sum against double).  The weights are
      // the CPU's probabilities within what the logits' own error allows:
      // logits each off by at most d move a softmax probability by a factor
      // within exp(+-2d) (a normalised input rounded the other way, rsqrtf
      // against the exact root, moves a logit by ~1e-4; a few such inputs
      // together, past 1e-3).  expect_close below bounds d itself.
      double d = 0;
      for (unsigned e = 0; e < s.experts; e++)
        d = std::max(d, fabs((double)logits[(size_t)t * s.experts + e] - lref[e]));
      const double p_tol = expm1(2 * d) + 1e-5;
      for (unsigned j = 0; j < s.topk; j++) {
        const uint32_t e = ids[(size_t)t * s.topk + j], want = order[j];
        const float wgt = weights[(size_t)t * s.topk + j];
        if (e >= s.experts) {
          EXPECT(e < s.experts, "token %u slot %u: expert id %u", t, j, e);
          continue;
        }
        for (unsigned i = 0; i < j; i++)
          EXPECT(ids[(size_t)t * s.topk + i] != e, "token %u: expert %u chosen twice", t, e);
        EXPECT(e == want || fabs(pk[e] - pk[want]) <= 1e-6 * pk[want],
               "token %u slot %u: expert %u (p %.9g), the top k of the logits' %u (p %.9g)", t,
               j, e, pk[e], want, pk[want]);
        EXPECT(fabs(wgt - pk[e]) <= 1e-5 * pk[e] + 1e-8,
               "token %u slot %u: weight %.9g, the softmax of the logits %.9g", t, j, wgt, pk[e]);
        EXPECT(fabs(wgt - p[e]) <= p_tol * p[e] + 1e-8,
               "token %u slot %u: weight %.9g, p %.9g (logits off by up to %.3g)", t, j, wgt, p[e],
               d);
        if (j)
          EXPECT(wgt <= weights[(size_t)t * s.topk + j - 1],
                 "token %u: slot %u weighs more than slot %u", t, j, j - 1);
      }
    }
    expect_close("router logits", logits, lref_all);
    // Among experts whose logits are the same to the bit (so are their
    // probabilities), the lower expert comes first: every such expert below
    // a chosen one is chosen before it.
    for (unsigned t = 0; t < m; t++)
      for (unsigned j = 0; j < s.topk; j++) {
        const uint32_t e = ids[(size_t)t * s.topk + j];
        if (e >= s.experts)
          continue;
        const float *l = logits.data() + (size_t)t * s.experts;
        for (uint32_t lower = 0; lower < e; lower++)
          if (memcmp(&l[lower], &l[e], sizeof(float)) == 0)
            EXPECT(std::find(ids.begin() + (size_t)t * s.topk, ids.begin() + (size_t)t * s.topk + j,
                             lower) != ids.begin() + (size_t)t * s.topk + j,
                   "token %u slot %u: expert %u chosen before expert %u of the same logit", t, j,
                   e, lower);
      }
  }
};

// The router at these sizes, then the experts it chose.
void run_moe(const Moe &s, unsigned m) {
  printf("MoE experts=%u k=%u topk=%u fe=%u fs=%u m=%u\n", s.experts, s.k, s.topk, s.fe, s.fs, m);
  Router router(s, m);
  const std::vector<bf16_bits> x = rand_bf16((size_t)m * s.k, 2.0f);
  std::vector<uint32_t> ids;
  std::vector<float> weights;
  router.route(x, ids, weights);
  for (auto &e : ids)
    if (e >= s.experts)
      return; // route reported it; the experts cannot run on it

  // gate and up: w [experts][2 fe][k], w_shared [2 fs][k]
  const std::vector<bf16_bits> wgu =
      rand_bf16((size_t)s.experts * 2 * s.fe * s.k, 1.7f / sqrtf((float)s.k));
  const std::vector<bf16_bits> wsgu = rand_bf16((size_t)2 * s.fs * s.k, 1.7f / sqrtf((float)s.k));
  const size_t act_token = (size_t)s.topk * s.fe + s.fs;
  Dev<bf16_bits> dwgu(wgu.size()), dwsgu(wsgu.size()), dact(m * act_token + 64);
  dwgu.put(wgu);
  dwsgu.put(wsgu);
  const std::vector<bf16_bits> act0(dact.n, 0x7fc1); // NaN: a value left unwritten fails
  // Any grid computes every unit, with the same bits: the launch rule's one
  // pass, a few blocks, and one.
  const size_t smem_gu = (size_t)m * s.k * 2;
  allow_smem(llm_moe_gate_up, smem_gu);
  std::vector<bf16_bits> act;
  const unsigned one_pass = cdiv(s.fs, LLM_SWIGLU_ROWS) + m * s.topk * cdiv(s.fe, LLM_SWIGLU_ROWS);
  for (unsigned grid_gu : {one_pass, 5u, 1u}) {
    dact.put(act0);
    llm_moe_gate_up<<<grid_gu, LLM_THREADS, smem_gu>>>(B(dwgu.d), B(dwsgu.d), B(router.dx.d),
                                                       B(router.dg.d), router.dids.d, B(dact.d),
                                                       s.fe, s.fs, s.topk, s.k, m, EPS);
    CK_LAUNCH();
    std::vector<bf16_bits> got = dact.get();
    EXPECT(std::equal(got.begin() + m * act_token, got.end(), act0.begin()),
           "gate_up (grid %u) wrote past m * (topk * fe + fs)", grid_gu);
    if (act.empty())
      act = got;
    else
      EXPECT(got == act, "gate_up with grid %u differs from grid %u", grid_gu, one_pass);
  }
  act.resize(m * act_token);

  const std::vector<float> xf = to_float(x), gf = to_float(router.g);
  std::vector<float> xn((size_t)m * s.k), act_ref(m * act_token), act_extra(m * act_token);
  for (unsigned t = 0; t < m; t++)
    ref_rmsnorm(xf.data() + (size_t)t * s.k, gf.data(), xn.data() + (size_t)t * s.k, s.k, EPS);
  // unit u of (t, slot): slot < topk a routed expert's, topk the shared one's;
  // *extra: how far it moves with the kernel's sums within their slack
  // (f_extra in llm_test.h)
  const auto act_value = [](const double *sum) {
    return rbf(rbf(ref_silu(rbf((float)sum[0]))) * rbf((float)sum[1]));
  };
  auto swiglu = [&](const bf16_bits *w, size_t f, size_t u, const float *xr, float *extra) {
    std::vector<float> a(s.k), b(s.k);
    for (unsigned i = 0; i < s.k; i++) {
      a[i] = bf2f(w[u * s.k + i]);
      b[i] = bf2f(w[(f + u) * s.k + i]);
    }
    const double sum[2] = {dot(a.data(), xr, s.k), dot(b.data(), xr, s.k)};
    const double slack[2] = {dot_slack(a.data(), xr, s.k), dot_slack(b.data(), xr, s.k)};
    *extra = (float)f_extra(act_value, sum, slack, 2);
    return act_value(sum);
  };
  parallel_for((size_t)m * (s.topk + 1), [&](size_t ts) {
    const size_t t = ts / (s.topk + 1), slot = ts % (s.topk + 1);
    const float *xr = xn.data() + t * s.k;
    const size_t at = t * act_token + slot * s.fe;
    float *dst = act_ref.data() + at, *ex = act_extra.data() + at;
    if (slot < s.topk) {
      const bf16_bits *w = wgu.data() + (size_t)ids[t * s.topk + slot] * 2 * s.fe * s.k;
      for (size_t u = 0; u < s.fe; u++)
        dst[u] = swiglu(w, s.fe, u, xr, &ex[u]);
    } else
      for (size_t u = 0; u < s.fs; u++)
        dst[u] = swiglu(wsgu.data(), s.fs, u, xr, &ex[u]);
  });
  expect_close_bf16("act (llm_moe_gate_up)", act, act_ref, TOL_REL, TOL_RMS, &act_extra);

  // down: w [experts][n][fe], w_shared [n][fs], on the kernel's own act
  const unsigned n = s.k;
  const std::vector<bf16_bits> wd =
      rand_bf16((size_t)s.experts * n * s.fe, 1.7f / sqrtf((float)s.fe));
  const std::vector<bf16_bits> wsd = rand_bf16((size_t)n * s.fs, 1.7f / sqrtf((float)s.fs));
  const std::vector<bf16_bits> res = rand_bf16((size_t)m * n + 64, 1.0f); // and a guard
  Dev<bf16_bits> dwd(wd.size()), dwsd(wsd.size()), dres(res.size());
  dwd.put(wd);
  dwsd.put(wsd);
  dres.put(res);
  const size_t smem_d = act_token * 4;
  allow_smem(llm_moe_down, smem_d);
  llm_moe_down<<<dim3(cdiv(n, LLM_SWIGLU_ROWS), m), LLM_THREADS, smem_d>>>(
      B(dwd.d), B(dwsd.d), B(dact.d), router.dids.d, router.dweights.d, B(dres.d), s.fe, s.fs,
      s.topk, n, m);
  CK_LAUNCH();
  std::vector<bf16_bits> got = dres.get();
  EXPECT(std::equal(got.begin() + (size_t)m * n, got.end(), res.begin() + (size_t)m * n),
         "down wrote past m * n");
  // llm_moe_down_lean: the same sums with fewer loads in flight, so the same bits.
  dres.put(res);
  allow_smem(llm_moe_down_lean, smem_d);
  llm_moe_down_lean<<<dim3(cdiv(n, LLM_SWIGLU_ROWS), m), LLM_THREADS, smem_d>>>(
      B(dwd.d), B(dwsd.d), B(dact.d), router.dids.d, router.dweights.d, B(dres.d), s.fe, s.fs,
      s.topk, n, m);
  CK_LAUNCH();
  EXPECT(dres.get() == got, "llm_moe_down_lean differs from llm_moe_down (m=%u)", m);
  got.resize((size_t)m * n);

  // routed = sum_s w_s bf16(acc_s) in f32, rounded; plus bf16(shared),
  // rounded; added into x, rounded.  That is monotone in every sum (the
  // routing weights are not negative), so its extra bound (f_extra's) is
  // taken at two corners: every sum at the low end of its slack, and every
  // one at the high end.
  const std::vector<float> actf = to_float(act), wdf = to_float(wd), wsdf = to_float(wsd);
  std::vector<float> ref((size_t)m * n), extra((size_t)m * n);
  parallel_for(n, [&](size_t d) {
    for (unsigned t = 0; t < m; t++) {
      const float *at = actf.data() + t * act_token;
      std::vector<double> sum(s.topk + 1), slack(s.topk + 1);
      for (unsigned sl = 0; sl <= s.topk; sl++) {
        const float *w = sl < s.topk ? wdf.data() + ((size_t)ids[t * s.topk + sl] * n + d) * s.fe
                                     : wsdf.data() + d * s.fs;
        const unsigned kk = sl < s.topk ? s.fe : s.fs;
        sum[sl] = dot(w, at + (size_t)sl * s.fe, kk);
        slack[sl] = dot_slack(w, at + (size_t)sl * s.fe, kk);
      }
      const float x0 = bf2f(res[(size_t)t * n + d]);
      const auto value = [&](double dir) {
        float routed = 0;
        for (unsigned sl = 0; sl < s.topk; sl++)
          routed += weights[t * s.topk + sl] * rbf((float)(sum[sl] + dir * slack[sl]));
        const float shared = rbf((float)(sum[s.topk] + dir * slack[s.topk]));
        return rbf(x0 + rbf(rbf(routed) + shared));
      };
      const float r = value(0);
      ref[(size_t)t * n + d] = r;
      extra[(size_t)t * n + d] = fmaxf(fabsf(value(-1) - r), fabsf(value(1) - r));
    }
  });
  expect_close_bf16("x (llm_moe_down)", got, ref, TOL_REL, TOL_RMS, &extra);
}

// Across calls with random inputs the router chooses every expert.
void run_union(const Moe &s) {
  const unsigned m = 8, calls = 40;
  printf("llm_moe_route: %u calls of %u tokens, experts=%u topk=%u\n", calls, m, s.experts,
         s.topk);
  Router router(s, m);
  std::vector<char> seen(s.experts, 0);
  std::vector<uint32_t> ids;
  std::vector<float> weights;
  for (unsigned c = 0; c < calls; c++) {
    router.route(rand_bf16((size_t)m * s.k, 2.0f), ids, weights);
    for (uint32_t e : ids)
      if (e < s.experts)
        seen[e] = 1;
  }
  const long chosen = std::count(seen.begin(), seen.end(), 1);
  printf("  %ld of %u experts chosen\n", chosen, s.experts);
  EXPECT(chosen == (long)s.experts, "%ld of %u experts chosen in %u calls", chosen, s.experts,
         calls);
}

} // namespace

int main() {
  test_start("gpu.kernels.moe");
  const Moe lite = {64, 2048, 6, 1408, 2816}; // DeepSeek-V2-Lite's
  const Moe small = {5, 72, 2, 24, 40};       // no size a multiple of a tile
  for (unsigned m = 1; m <= 8; m++) {
    Router router(lite, m);
    std::vector<uint32_t> ids;
    std::vector<float> weights;
    printf("llm_moe_route experts=64 k=2048 topk=6 m=%u\n", m);
    router.route(rand_bf16((size_t)m * lite.k, 2.0f), ids, weights);
  }
  for (unsigned m : {1u, 3u}) { // experts in tied fours, in one lane and across lanes
    Router tied(lite, m, 16);
    std::vector<uint32_t> ids;
    std::vector<float> weights;
    printf("llm_moe_route experts=64 (16 distinct) k=2048 topk=6 m=%u\n", m);
    tied.route(rand_bf16((size_t)m * lite.k, 2.0f), ids, weights);
    EXPECT(ids[0] < 16 && ids[1] == ids[0] + 16 && ids[2] == ids[0] + 32 && ids[3] == ids[0] + 48,
           "token 0: the four tied experts first are %u, %u, %u, %u", ids[0], ids[1], ids[2],
           ids[3]);
  }
  // More experts than 64 (not launched as clusters: more than 8 blocks):
  // the top k over 4 and over 8 slots a lane, DeepSeek-V2's 160 experts
  // among them, and the most the router takes (256, 8 chosen).
  const Moe wide[] = {{100, 256, 8, 0, 0}, {160, 2048, 6, 0, 0}, {256, 512, 8, 0, 0}};
  for (const Moe &s : wide)
    for (unsigned m : {1u, 3u}) {
      Router router(s, m);
      std::vector<uint32_t> ids;
      std::vector<float> weights;
      printf("llm_moe_route experts=%u k=%u topk=%u m=%u\n", s.experts, s.k, s.topk, m);
      router.route(rand_bf16((size_t)m * s.k, 2.0f), ids, weights);
    }
  run_union(lite);
  run_moe(lite, 1);
  run_moe(lite, 8);
  for (unsigned m : {1u, 3u, 8u})
    run_moe(small, m);
  return test_end();
}
