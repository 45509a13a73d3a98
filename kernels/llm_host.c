/* llm_host.c: the host helpers of llm.h. */
#include "llm.h"

#include <math.h>

static const double PI = 3.14159265358979323846;

/* The dimension at which `rotations` turns fit in the original context. */
static double correction_dim(double rotations, int dim, double base, int max_position) {
  return dim * log(max_position / (rotations * 2 * PI)) / (2 * log(base));
}

double llm_yarn_mscale(double factor, double mscale) {
  return factor <= 1 ? 1.0 : 0.1 * mscale * log(factor) + 1.0;
}

void llm_yarn_inv_freq(float *inv_freq, int dim, double base, double factor,
                       int original_max_position, double beta_fast, double beta_slow) {
  double low = floor(correction_dim(beta_fast, dim, base, original_max_position));
  double high = ceil(correction_dim(beta_slow, dim, base, original_max_position));
  if (low < 0)
    low = 0;
  if (high > dim - 1)
    high = dim - 1;
  if (low == high)
    high += 0.001;
  for (int i = 0; i < dim / 2; i++) {
    /* f32 throughout, as torch computes arange(0, dim, 2) / dim and the rest */
    const float e = (float)(2 * i) / (float)dim;
    const float extra = 1.0f / powf((float)base, e);
    if (factor <= 1) {
      inv_freq[i] = extra;
      continue;
    }
    const float inter = 1.0f / ((float)factor * powf((float)base, e));
    float ramp = ((float)i - (float)low) / ((float)high - (float)low);
    ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
    const float mask = 1.0f - ramp;
    inv_freq[i] = inter * (1.0f - mask) + extra * mask;
  }
}

float llm_yarn_rope_mscale(double factor, double mscale, double mscale_all_dim) {
  return (float)(llm_yarn_mscale(factor, mscale) / llm_yarn_mscale(factor, mscale_all_dim));
}

float llm_mla_softmax_scale(int qk_head_dim, double factor, double mscale_all_dim) {
  const double m = llm_yarn_mscale(factor, mscale_all_dim);
  return (float)(pow((double)qk_head_dim, -0.5) * m * m);
}
