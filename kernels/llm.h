/* llm.h: host helpers of cgc's kernel library (doc/kernels.md): the numbers
 * a model's graph passes to the kernels, worked out as the published
 * DeepSeek-V2 code works them out. */
#ifndef LLM_H
#define LLM_H

#ifdef __cplusplus
extern "C" {
#endif

/* YaRN's RoPE frequencies for a rotary dimension `dim` (64 in DeepSeek-V2,
 * so `dim / 2` values go to inv_freq), in f32 as the published code
 * computes them (DeepseekV2YarnRotaryEmbedding).  factor <= 1 gives plain
 * RoPE frequencies. */
void llm_yarn_inv_freq(float *inv_freq, int dim, double base, double factor,
                       int original_max_position, double beta_fast, double beta_slow);

/* yarn_get_mscale: 0.1 * mscale * ln(factor) + 1 (1 for factor <= 1). */
double llm_yarn_mscale(double factor, double mscale);

/* The factor on cos and sin: mscale(factor, mscale) / mscale(factor, mscale_all_dim). */
float llm_yarn_rope_mscale(double factor, double mscale, double mscale_all_dim);

/* MLA's softmax scale: qk_head_dim^-0.5 times mscale(factor, mscale_all_dim)^2. */
float llm_mla_softmax_scale(int qk_head_dim, double factor, double mscale_all_dim);

#ifdef __cplusplus
}
#endif

#endif
