/* fake_cgrt.c: a stand-in for the runtime, for the Python package's tests
 * on machines without a GPU.  It keeps what the package asks of it (the
 * extern pointers at create, the scalar bits set, bindings, the launch
 * streams) and fails on request, so the tests can check every argument
 * that crosses from Python to cgrt_* and every error path, without CUDA.
 * It implements the functions of cgrt.h that the package calls, with the
 * same signatures; fake_* are the tests' own. */
#include "cgrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cgrt_graph {
  const cgrt_graph_desc *d;
  void **base;        /* per buffer: bound, or a made-up address for owned ones */
  uint64_t *bits;     /* per scalar */
  cgrt_options opt;
  long launches, sets; /* cgrt_set_scalar calls */
  void *last_stream;
};

static char message[256];
static int fail_status;  /* the next call fails with this status, once */
static long live_graphs;

static cgrt_status failing(const cgrt_graph_desc *d, const char *what) {
  if (!fail_status)
    return CGRT_OK;
  cgrt_status s = fail_status;
  fail_status = 0;
  snprintf(message, sizeof message, "%s: graph %s: %s: fake failure", d->source, d->name, what);
  return s;
}

const char *cgrt_last_error(void) { return message; }

cgrt_status cgrt_create(cgrt_graph **out, const cgrt_graph_desc *d, void *const *externs,
                        const cgrt_options *opt) {
  *out = NULL;
  cgrt_status s = failing(d, "create");
  if (s)
    return s;
  if (d->abi != CGRT_ABI) {
    snprintf(message, sizeof message, "ABI %d", d->abi);
    return CGRT_ERROR_INVALID;
  }
  cgrt_graph *g = calloc(1, sizeof *g);
  g->d = d;
  g->base = calloc(d->nbuffers + 1, sizeof *g->base);
  g->bits = calloc(d->nscalars + 1, sizeof *g->bits);
  g->opt = *opt;
  for (uint32_t i = 0, e = 0; i < d->nbuffers; i++) {
    uint8_t k = d->buffers[i].kind;
    g->base[i] = k == CGRT_EXTERN || k == CGRT_EXTERN_HOST ? externs[e++]
                                                            : (void *)(uintptr_t)(0x100000 * (i + 1));
  }
  for (uint32_t i = 0; i < d->nscalars; i++)
    g->bits[i] = d->scalars[i].init;
  live_graphs++;
  *out = g;
  return CGRT_OK;
}

cgrt_status cgrt_launch(cgrt_graph *g, cudaStream_t stream) {
  cgrt_status s = failing(g->d, "launch");
  if (s)
    return s;
  g->launches++;
  g->last_stream = (void *)stream;
  return CGRT_OK;
}

cgrt_status cgrt_set_scalar(cgrt_graph *g, uint32_t i, const void *value) {
  cgrt_status s = failing(g->d, "set");
  if (s)
    return s;
  if (i >= g->d->nscalars) {
    snprintf(message, sizeof message, "scalar %u of %u", i, g->d->nscalars);
    return CGRT_ERROR_INVALID;
  }
  g->bits[i] = 0;
  memcpy(&g->bits[i], value, g->d->scalars[i].size);
  g->sets++;
  return CGRT_OK;
}

/* As the runtime's: each marked scalar set, its mark cleared, then the launch. */
cgrt_status cgrt_set_launch(cgrt_graph *g, uint8_t *set, const void *const *values,
                            cudaStream_t stream) {
  for (uint32_t i = 0; i < g->d->nscalars; i++)
    if (set[i]) {
      cgrt_status s = cgrt_set_scalar(g, i, values[i]);
      if (s)
        return s;
      set[i] = 0;
    }
  return cgrt_launch(g, stream);
}

cgrt_status cgrt_get_scalar(cgrt_graph *g, uint32_t i, void *value) {
  cgrt_status s = failing(g->d, "get");
  if (s)
    return s;
  memcpy(value, &g->bits[i], g->d->scalars[i].size);
  return CGRT_OK;
}

cgrt_status cgrt_bind(cgrt_graph *g, uint32_t b, void *ptr) {
  cgrt_status s = failing(g->d, "bind");
  if (s)
    return s;
  g->base[b] = ptr;
  return CGRT_OK;
}

void *cgrt_buffer(cgrt_graph *g, uint32_t b) { return g->base[b]; }
void *cgrt_user(cgrt_graph *g) { return g->opt.user; }
size_t cgrt_pool_bytes(const cgrt_graph_desc *d) {
  size_t bytes = 0;
  for (uint32_t i = 0; i < d->nbuffers; i++)
    if (d->buffers[i].kind == CGRT_DEVICE)
      bytes = (bytes + d->buffers[i].bytes + 255) / 256 * 256;
  return bytes;
}

void cgrt_destroy(cgrt_graph *g) {
  if (!g)
    return;
  free(g->base);
  free(g->bits);
  free(g);
  live_graphs--;
}

cgrt_status cgrt_invalid(const cgrt_graph_desc *d, const char *what) {
  snprintf(message, sizeof message, "%s: graph %s: %s", d->source, d->name, what);
  return CGRT_ERROR_INVALID;
}

/* ---- for the tests ---- */

void fake_fail_next(int status) { fail_status = status; }
long fake_live_graphs(void) { return live_graphs; }
uint64_t fake_scalar_bits(cgrt_graph *g, uint32_t i) { return g->bits[i]; }
void *fake_base(cgrt_graph *g, uint32_t b) { return g->base[b]; }
long fake_launches(cgrt_graph *g) { return g->launches; }
long fake_sets(cgrt_graph *g) { return g->sets; }
void *fake_last_stream(cgrt_graph *g) { return g->last_stream; }
int fake_device(cgrt_graph *g) { return g->opt.device; }
int fake_upload(cgrt_graph *g) { return g->opt.upload; }
void *fake_upload_stream(cgrt_graph *g) { return (void *)g->opt.stream; }
