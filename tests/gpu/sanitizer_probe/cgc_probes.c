/* cgc_probes.c: runs one graph of probes.cgraph through the runtime, by
 * name (README.md beside this file): create, launch, set n (when the
 * probe does), launch again, and check the last launch's count `it` and
 * the partial sums.  `cgc_probes --list` prints the names.  Exit 0 when
 * right, 1 when not (or a call failed, which it names), 77 without a GPU;
 * CGRT_SANITIZER_SAFE reaches create as usual. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "probes_graph.h"

enum { BLOCKS = 8, THREADS = 256 };

/* Whether it is `want` and every partial sum THREADS; says what is not. */
static int check(const char *name, uint32_t it, uint32_t want, const float *part) {
  float host[BLOCKS];
  CUDA(cudaMemcpy(host, part, sizeof host, cudaMemcpyDeviceToHost));
  if (it != want) {
    fprintf(stderr, "%s: it is %u, not %u\n", name, it, want);
    return 1;
  }
  for (int b = 0; b < BLOCKS; b++)
    if (host[b] != THREADS) {
      fprintf(stderr, "%s: part[%d] is %g, not %d\n", name, b, host[b], THREADS);
      return 1;
    }
  printf("%s: ok\n", name);
  return 0;
}

/* Graph G: launched, n set to SET (when not 0), launched again; `it` must
 * then be WANT. */
#define PROBE(G, SET, WANT)                                                                        \
  static int probe_##G(float *part) {                                                              \
    G *g = NULL;                                                                                   \
    G##_extern ext = {part};                                                                       \
    cudaStream_t s;                                                                                \
    uint32_t it = 0;                                                                               \
    CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));                                    \
    CGRT(G##_create(&g, &ext, NULL));                                                              \
    CGRT(G##_launch(g, s));                                                                        \
    if (SET)                                                                                       \
      CGRT(G##_set_n(g, SET));                                                                     \
    CGRT(G##_launch(g, s));                                                                        \
    CUDA(cudaStreamSynchronize(s));                                                                \
    CGRT(G##_get_it(g, &it));                                                                      \
    G##_destroy(g);                                                                                \
    CUDA(cudaStreamDestroy(s));                                                                    \
    return check(#G, it, WANT, part);                                                              \
  }

PROBE(plain, 3, 3)
PROBE(while_cond1, 3, 3)
PROBE(while_max, 30, 5)
PROBE(while_general, 3, 3)
PROBE(while_handle, 3, 3)
PROBE(while_pdl, 3, 3)
PROBE(if_smem, 0, 1)     /* n stays 20: the body counts once */
PROBE(switch_smem, 2, 5) /* n = 2: the default's put */
PROBE(devupd, 3, 12)     /* four nodes add n */
PROBE(devgrid, 3, 12)    /* four nodes of n blocks add 1 a block */
PROBE(programmatic, 3, 3)

static const struct {
  const char *name;
  int (*run)(float *part);
} probes[] = {
    {"plain", probe_plain},
    {"while_cond1", probe_while_cond1},
    {"while_max", probe_while_max},
    {"while_general", probe_while_general},
    {"while_handle", probe_while_handle},
    {"while_pdl", probe_while_pdl},
    {"if_smem", probe_if_smem},
    {"switch_smem", probe_switch_smem},
    {"devupd", probe_devupd},
    {"devgrid", probe_devgrid},
    {"programmatic", probe_programmatic},
};
enum { NPROBES = sizeof probes / sizeof probes[0] };

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cgc_probes NAME | --list\n");
    return 2;
  }
  if (!strcmp(argv[1], "--list")) {
    for (int i = 0; i < NPROBES; i++)
      printf("%s\n", probes[i].name);
    return 0;
  }
  int p = 0;
  while (p < NPROBES && strcmp(argv[1], probes[p].name))
    p++;
  if (p == NPROBES) {
    fprintf(stderr, "cgc_probes: no probe '%s' (--list names them)\n", argv[1]);
    return 2;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("cgc_probes: skipped: no GPU\n");
    return 77;
  }
  float *part;
  CUDA(cudaMalloc((void **)&part, BLOCKS * sizeof *part));
  CUDA(cudaMemset(part, 0, BLOCKS * sizeof *part));
  int rc = probes[p].run(part);
  CUDA(cudaFree(part));
  return rc;
}
