/* compartments: an SEIR epidemic over 64 regions, 50 launches of 8 steps
 * from one instantiated explicit graph, with the contact rate halved
 * halfway through (a by-value scalar set between launches, with nothing
 * synchronised); checked against a CPU run of the same model. */
#include "compartments_graph.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { R = 64, STEPS = 8, LAUNCHES = 50 };
static const double DT = 0.1, SIGMA = 0.2, GAMMA = 0.1;

static uint64_t rng;
static double uniform01(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (rng >> 11) * 0x1.0p-53;
}

int main(void) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("compartments: built; running it needs a GPU, and this machine has none\n");
    return 77;
  }
  rng = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15u;
  printf("compartments: seed %llu\n", (unsigned long long)rng);

  /* Two time levels of each compartment, as the graph keeps them. */
  float s[2 * R] = {0}, e[2 * R] = {0}, in[2 * R] = {0}, r[2 * R] = {0}, pop[R], mix[R * R];
  for (int a = 0; a < R; a++) {
    pop[a] = (float)(1e4 + 1e6 * uniform01());
    in[a] = uniform01() < 0.2 ? (float)(10 + 100 * uniform01()) : 0;
    s[a] = pop[a] - in[a];
    double row = 0;
    for (int b = 0; b < R; b++)
      row += mix[a * R + b] = a == b ? 20.0f : (float)uniform01();
    for (int b = 0; b < R; b++)
      mix[a * R + b] = (float)(mix[a * R + b] / row);
  }
  float *d[6];
  const void *host[6] = {s, e, in, r, pop, mix};
  size_t bytes[6] = {sizeof s, sizeof e, sizeof in, sizeof r, sizeof pop, sizeof mix};
  for (int k = 0; k < 6; k++) {
    CUDA(cudaMalloc((void **)&d[k], bytes[k]));
    CUDA(cudaMemcpy(d[k], host[k], bytes[k], cudaMemcpyHostToDevice));
  }
  seir_extern ext = {d[0], d[1], d[2], d[3], d[4], d[5]};
  seir *g;
  CGRT(seir_create(&g, &ext, NULL));
  for (int k = 0; k < LAUNCHES; k++) {
    if (k == LAUNCHES / 2)
      CGRT(seir_set_beta(g, 0.15f)); /* an intervention */
    CGRT(seir_launch(g, 0));
  }
  float gs[2 * R], ge[2 * R], gi[2 * R], gr[2 * R];
  CUDA(cudaMemcpy(gs, d[0], sizeof gs, cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(ge, d[1], sizeof ge, cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(gi, d[2], sizeof gi, cudaMemcpyDeviceToHost));
  CUDA(cudaMemcpy(gr, d[3], sizeof gr, cudaMemcpyDeviceToHost));

  /* The same steps on the CPU, in double. */
  double cs[R], ce[R], ci[R], cr[R];
  for (int a = 0; a < R; a++)
    cs[a] = s[a], ce[a] = 0, ci[a] = in[a], cr[a] = 0;
  for (int step = 0; step < LAUNCHES * STEPS; step++) {
    double beta = step < LAUNCHES / 2 * STEPS ? 0.3 : 0.15, lambda[R];
    for (int a = 0; a < R; a++) {
      double sum = 0;
      for (int b = 0; b < R; b++)
        sum += (double)mix[a * R + b] * ci[b] / pop[b];
      lambda[a] = beta * sum;
    }
    for (int a = 0; a < R; a++) {
      double ns = cs[a] - DT * lambda[a] * cs[a];
      double ne = ce[a] + DT * (lambda[a] * cs[a] - SIGMA * ce[a]);
      double ni = ci[a] + DT * (SIGMA * ce[a] - GAMMA * ci[a]);
      double nr = cr[a] + DT * GAMMA * ci[a];
      cs[a] = ns, ce[a] = ne, ci[a] = ni, cr[a] = nr;
    }
  }
  double worst = 0, drift = 0, recovered = 0;
  for (int a = 0; a < R; a++) {
    double got[4] = {gs[a], ge[a], gi[a], gr[a]}, want[4] = {cs[a], ce[a], ci[a], cr[a]};
    for (int c = 0; c < 4; c++) {
      double err = fabs(got[c] - want[c]) / pop[a];
      worst = isnan(got[c]) ? INFINITY : err > worst ? err : worst;
    }
    double total = got[0] + got[1] + got[2] + got[3];
    drift = fmax(drift, fabs(total - pop[a]) / pop[a]);
    recovered += got[3];
  }
  int ok = worst < 1e-4 && drift < 1e-4;
  printf("compartments: %d regions, %d steps in %d launches; %.0f recovered in all\n", R,
         LAUNCHES * STEPS, LAUNCHES, recovered);
  printf("compartments: largest error %.2e of a region's population, population drift %.2e: "
         "%s\n",
         worst, drift, ok ? "OK" : "FAILED");
  seir_destroy(g);
  for (int k = 0; k < 6; k++)
    CUDA(cudaFree(d[k]));
  return ok ? 0 : 1;
}
