// test_tokens.cu: the token kernels of kernels/llm.cgraph: llm_embed,
// llm_argmax after llm_norm_gemv_argmax (ties, negative logits, any grid),
// llm_sample_top_p (determinism, its limits, kept sets, frequencies) and
// llm_advance.
#include "llm_test.h"

namespace {

auto B(bf16_bits *p) { return reinterpret_cast<__nv_bfloat16 *>(p); }

void run_embed(unsigned vocab, unsigned n, const std::vector<uint32_t> &tokens) {
  const unsigned m = (unsigned)tokens.size();
  printf("llm_embed vocab=%u n=%u m=%u\n", vocab, n, m);
  const std::vector<bf16_bits> table = rand_bf16((size_t)vocab * n, 1.0f);
  Dev<bf16_bits> dtable(table.size()), dx((size_t)m * n + 64);
  Dev<uint32_t> dtok(m);
  dtable.put(table);
  dtok.put(tokens);
  const std::vector<bf16_bits> x0(dx.n, 0x7fc1);
  dx.put(x0);
  llm_embed<<<m, LLM_THREADS>>>(B(dtable.d), dtok.d, B(dx.d), n, m);
  CK_LAUNCH();
  const std::vector<bf16_bits> x = dx.get();
  size_t bad = 0;
  for (unsigned t = 0; t < m; t++)
    for (unsigned i = 0; i < n; i++)
      bad += x[(size_t)t * n + i] != table[(size_t)tokens[t] * n + i];
  EXPECT(bad == 0, "%zu values are not their token's row", bad);
  EXPECT(std::equal(x.begin() + (size_t)m * n, x.end(), x0.begin()), "a value written past m * n");
}

// llm_argmax after llm_norm_gemv_argmax with grid(parts).  Token t's input
// has the rows ties[t] equal and far larger than the others (rows of
// sign(x) against random ones of 1/64 the size): identical rows give
// identical sums, so the token must be the lowest of them.  With
// `negative` (one token), every weight has the opposite sign of x, so that
// every logit is negative, and the equal rows are the smallest (-sign(x) /
// 4096 against about 1/128): the largest logits.
void run_argmax(unsigned n, unsigned k, const std::vector<std::vector<uint32_t>> &ties,
                unsigned parts, bool negative) {
  const unsigned m = (unsigned)ties.size();
  printf("llm_argmax n=%u k=%u m=%u parts=%u%s\n", n, k, m, parts,
         negative ? " (negative logits)" : "");
  std::vector<bf16_bits> x = rand_bf16((size_t)m * k, 1.0f);
  std::vector<bf16_bits> w = rand_bf16((size_t)n * k, 1.0f / 64);
  std::vector<bf16_bits> g(k, f2bf(1.0f));
  if (negative)
    for (size_t u = 0; u < n; u++)
      for (size_t i = 0; i < k; i++) { // -|w| sign(x of token u % m)
        const float xv = bf2f(x[(u % m) * k + i]), wv = fabsf(bf2f(w[u * k + i]));
        w[u * k + i] = f2bf(xv >= 0 ? -wv : wv);
      }
  for (unsigned t = 0; t < m; t++)
    for (uint32_t u : ties[t])
      for (size_t i = 0; i < k; i++)
        w[u * k + i] = negative ? f2bf(bf2f(x[(size_t)t * k + i]) >= 0 ? -1.0f / 4096 : 1.0f / 4096)
                                : f2bf(bf2f(x[(size_t)t * k + i]) >= 0 ? 0.5f : -0.5f);
  Dev<bf16_bits> dw(w.size()), dx(x.size()), dg(k);
  Dev<float> dy((size_t)m * n);
  Dev<uint64_t> dbest((size_t)m * parts);
  Dev<uint32_t> dtok(m);
  dw.put(w);
  dx.put(x);
  dg.put(g);
  llm_norm_gemv_argmax<<<parts, LLM_THREADS, m * k * 2>>>(B(dw.d), B(dx.d), B(dg.d), dy.d,
                                                          dbest.d, n, k, m, 1e-6f);
  CK_LAUNCH();
  llm_argmax<<<m, LLM_THREADS>>>(dbest.d, parts, dtok.d, m);
  CK_LAUNCH();
  const std::vector<float> y = dy.get();
  const std::vector<uint32_t> tok = dtok.get();
  for (unsigned t = 0; t < m; t++) {
    const float *l = y.data() + (size_t)t * n;
    const uint32_t first = (uint32_t)(std::max_element(l, l + n) - l);
    const uint32_t lowest = *std::min_element(ties[t].begin(), ties[t].end());
    bool equal = true;
    for (uint32_t u : ties[t])
      equal = equal && l[u] == l[lowest];
    EXPECT(equal, "token %u: the equal rows' logits differ", t);
    EXPECT(first == lowest, "token %u: the largest logit is first at %u, not at row %u", t, first,
           lowest);
    EXPECT(tok[t] == first, "token %u: llm_argmax chose %u, the first largest is %u", t, tok[t],
           first);
    if (negative)
      EXPECT(l[first] < 0, "token %u: the largest logit %g is not negative", t, l[first]);
  }
}

// llm_sample_top_p over `steps` steps of m tokens, each row of the logits
// the same; returns how often each index was drawn.
struct Sampler {
  unsigned n, m;
  Dev<float> dl;
  Dev<uint32_t> dtok, dstep;
  Sampler(const std::vector<float> &row, unsigned tokens)
      : n((unsigned)row.size()), m(tokens), dl((size_t)tokens * row.size()), dtok(tokens),
        dstep(1) {
    std::vector<float> l;
    for (unsigned t = 0; t < m; t++)
      l.insert(l.end(), row.begin(), row.end());
    dl.put(l);
  }
  std::vector<uint32_t> draw(float temperature, float top_p, uint64_t seed, uint32_t step) {
    dstep.put({step});
    CK(cudaMemset(dtok.d, 0xff, m * sizeof(uint32_t)));
    llm_sample_top_p<<<m, 1024>>>(dl.d, dtok.d, n, m, temperature, top_p, seed, dstep.d);
    CK_LAUNCH();
    return dtok.get();
  }
  std::vector<unsigned> counts(float temperature, float top_p, unsigned steps) {
    std::vector<unsigned> c(n + 1, 0); // c[n]: drawn out of range
    const uint64_t seed = rand64();
    for (unsigned s = 0; s < steps; s++)
      for (uint32_t tok : draw(temperature, top_p, seed, s))
        c[tok < n ? tok : n]++;
    return c;
  }
};

// Pearson's chi-square of counts at `idx` against probabilities `p` (which
// sum to 1): every other index must never be drawn.  The bound is loose
// (far past the 1e-6 tail for these degrees of freedom), so that a fair
// sampler fails about never, while a wrong distribution (a token dropped
// from the kept set, a temperature not applied) is off by hundreds.
void expect_frequencies(const char *what, const std::vector<unsigned> &c,
                        const std::vector<uint32_t> &idx, const std::vector<double> &p,
                        double bound) {
  unsigned total = 0, inside = 0;
  for (unsigned v : c)
    total += v;
  double chi2 = 0;
  for (size_t i = 0; i < idx.size(); i++) {
    const double e = p[i] * total;
    chi2 += (c[idx[i]] - e) * (c[idx[i]] - e) / e;
    inside += c[idx[i]];
    printf("    index %u: %u of %u (expected %.1f)\n", idx[i], c[idx[i]], total, e);
  }
  printf("  %s: chi-square %.2f (bound %.0f, %zu classes)\n", what, chi2, bound, idx.size());
  EXPECT(inside == total, "%s: %u of %u draws outside the kept set", what, total - inside, total);
  EXPECT(chi2 <= bound, "%s: chi-square %.2f over %.0f", what, chi2, bound);
}

void run_sampling() {
  // Random logits over DeepSeek-V2-Lite's vocabulary: the same seed and
  // step draw the same tokens.
  {
    const unsigned n = 102400;
    std::vector<float> row(n);
    for (auto &v : row)
      v = rand_pm(5.0f);
    printf("llm_sample_top_p n=%u m=8: the same seed and step, the same tokens\n", n);
    Sampler s(row, 8);
    const uint64_t seed = rand64();
    for (uint32_t step : {0u, 1u, 77u}) {
      const std::vector<uint32_t> a = s.draw(0.8f, 0.9f, seed, step), b = s.draw(0.8f, 0.9f, seed, step);
      EXPECT(a == b, "step %u: two draws with the same seed differ", step);
      for (uint32_t tok : a)
        EXPECT(tok < n, "step %u: token %u", step, tok);
    }
  }
  // A top_p or a temperature near 0 leaves the largest logit alone.
  // Temperature 0 takes the first index of the largest.
  {
    const unsigned n = 1000;
    std::vector<float> row(n);
    for (auto &v : row)
      v = rand_pm(5.0f);
    const uint32_t best = (uint32_t)(std::max_element(row.begin(), row.end()) - row.begin());
    row[best] += 0.5f; // a gap of at least 0.5: 5 10^5 temperatures of 1e-6
    printf("llm_sample_top_p n=%u m=8: limits give the argmax (%u)\n", n, best);
    Sampler s(row, 8);
    for (uint32_t step = 0; step < 20; step++) {
      for (uint32_t tok : s.draw(1.0f, 1e-6f, 5, step))
        EXPECT(tok == best, "top_p 1e-6: token %u, not %u", tok, best);
      for (uint32_t tok : s.draw(1e-6f, 0.9f, 5, step))
        EXPECT(tok == best, "temperature 1e-6: token %u, not %u", tok, best);
    }
    std::vector<float> tie = row;
    tie[n - 1] = tie[best + 1 < n ? best + 1 : best] = tie[best];
    Sampler st(tie, 3);
    for (uint32_t tok : st.draw(0.0f, 0.9f, 5, 0))
      EXPECT(tok == best, "temperature 0: token %u, not the first largest %u", tok, best);
  }
  const unsigned n = 1000, steps = 500; // 4000 draws a case
  const float far = -60.0f; // e^-60 against 1: never drawn in 4000
  // Four equal tokens and the rest ~0, top_p 0.5: the kept set is the
  // probabilities at or above the threshold that reaches 0.5, so all four
  // (equal ones stay together), each drawn a quarter of the time.
  {
    std::vector<float> row(n, far);
    const std::vector<uint32_t> top = {3, 500, 501, 999};
    for (uint32_t i : top)
      row[i] = 0.0f;
    printf("llm_sample_top_p: four equal tokens, top_p 0.5\n");
    Sampler s(row, 8);
    expect_frequencies("four equal", s.counts(1.0f, 0.5f, steps), top, {0.25, 0.25, 0.25, 0.25},
                       40);
  }
  // 0.3, 0.3, 0.2, 0.2, top_p 0.5: the two of 0.3 (0.6 reaches 0.5, one does
  // not), half the time each; the two of 0.2 never.
  {
    std::vector<float> row(n, far);
    row[10] = logf(0.2f);
    row[20] = logf(0.3f);
    row[30] = logf(0.2f);
    row[40] = logf(0.3f);
    printf("llm_sample_top_p: 0.3, 0.3, 0.2, 0.2, top_p 0.5\n");
    Sampler s(row, 8);
    const std::vector<unsigned> c = s.counts(1.0f, 0.5f, steps);
    EXPECT(c[20] > 0 && c[40] > 0, "a kept token never drawn (%u, %u)", c[20], c[40]);
    expect_frequencies("two kept of four", c, {20, 40}, {0.5, 0.5}, 30);
  }
  // 0.4, 0.3, 0.2, 0.1 with top_p 0.95 (all four kept), at temperature 1 and
  // at 2 (probabilities as their square roots, normalised).
  {
    std::vector<float> row(n, far);
    const std::vector<uint32_t> idx = {7, 300, 600, 998};
    const double p[4] = {0.4, 0.3, 0.2, 0.1};
    for (int i = 0; i < 4; i++)
      row[idx[i]] = logf((float)p[i]);
    printf("llm_sample_top_p: 0.4, 0.3, 0.2, 0.1, top_p 0.95\n");
    Sampler s(row, 8);
    expect_frequencies("temperature 1", s.counts(1.0f, 0.95f, steps), idx, {0.4, 0.3, 0.2, 0.1},
                       40);
    double z = 0;
    for (double v : p)
      z += sqrt(v);
    expect_frequencies("temperature 2", s.counts(2.0f, 0.95f, steps), idx,
                       {sqrt(p[0]) / z, sqrt(p[1]) / z, sqrt(p[2]) / z, sqrt(p[3]) / z}, 40);
  }
}

// llm_advance against llm.cgraph's rule, step by step: made[t][count] =
// tokens[t] (eos once t has made eos) while count < maxgen, pos[t] += 1,
// count += 1, live = the sequences without eos.
void run_advance(unsigned m, unsigned maxgen, unsigned steps, uint32_t eos,
                 const std::vector<std::vector<uint32_t>> *given) {
  printf("llm_advance m=%u maxgen=%u steps=%u eos=%u\n", m, maxgen, steps, eos);
  std::vector<uint32_t> pos(m), made((size_t)m * maxgen + 8, 12345), done(m, 0);
  for (auto &p : pos)
    p = rand_below(4096);
  uint32_t count = 0;
  Dev<uint32_t> dtok(m), dpos(m), dmade(made.size()), dcount(1), ddone(m), dlive(1);
  dpos.put(pos);
  dmade.put(made);
  dcount.put({count});
  ddone.put(done);
  dlive.put({999});
  for (unsigned s = 0; s < steps; s++) {
    std::vector<uint32_t> tok(m);
    for (unsigned t = 0; t < m; t++) // eos about one time in 6
      tok[t] = given ? (*given)[s][t] : (rand_below(6) == 0 ? eos : rand_below(50));
    dtok.put(tok);
    llm_advance<<<1, 32>>>(dtok.d, dpos.d, dmade.d, dcount.d, ddone.d, dlive.d, eos, maxgen, m);
    CK_LAUNCH();
    uint32_t live = 0;
    for (unsigned t = 0; t < m; t++) {
      const uint32_t v = done[t] ? eos : tok[t];
      if (count < maxgen)
        made[(size_t)t * maxgen + count] = v;
      if (v == eos)
        done[t] = 1;
      pos[t]++;
      live += !done[t];
    }
    count++;
    EXPECT(dmade.get() == made, "step %u: made differs", s);
    EXPECT(dpos.get() == pos, "step %u: pos differs", s);
    EXPECT(ddone.get() == done, "step %u: done differs", s);
    EXPECT(dcount.get()[0] == count, "step %u: count %u, not %u", s, dcount.get()[0], count);
    EXPECT(dlive.get()[0] == live, "step %u: live %u, not %u", s, dlive.get()[0], live);
  }
}

} // namespace

int main() {
  test_start("gpu.kernels.tokens");
  run_embed(102400, 2048, {0, 102399, 17});
  run_embed(1000, 2048, {5});
  std::vector<uint32_t> eight;
  for (int t = 0; t < 8; t++)
    eight.push_back(rand_below(1000));
  run_embed(1000, 37, eight);

  const unsigned V = 102400, lm_parts = cdiv(V, LLM_GEMV_ROWS);
  for (unsigned parts : {lm_parts, 3u, 1u}) {
    run_argmax(V, 64, {{70000, 5, 102399}}, parts, false);
    run_argmax(V, 64, {{70000, 5, 102399}, {102398, 80000}, {16, 17}}, parts, false);
  }
  run_argmax(V, 64, {{40000, 90000}}, lm_parts, true);
  run_argmax(V, 64, {{40000, 90000}}, 3, true);
  run_argmax(37, 1000, {{36, 20}, {0, 1, 2}}, 3, false);

  run_sampling();

  const std::vector<std::vector<uint32_t>> script = {
      {5, 2, 7}, {2, 9, 8}, {4, 4, 4}, {1, 1, 2}, {6, 6, 6}};
  run_advance(3, 4, 5, 2, &script); // the last step past maxgen
  run_advance(1, 16, 20, 0, nullptr);
  run_advance(8, 64, 70, 1, nullptr);
  run_advance(32, 8, 12, 3, nullptr);
  return test_end();
}
