/* weights_cuda.c: dsv2_load to the device, through two pinned staging
 * buffers taking turns, so that copying the mapped file into one overlaps
 * the DMA out of the other. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "weights.h"

#define STAGING_BYTES ((size_t)32 << 20)

typedef struct Staging {
  const Dsv2Config *config;
  void *const *device;
  cudaStream_t stream;
  unsigned char *pinned[2];
  cudaEvent_t drained[2]; /* the last copy out of each staging buffer */
  int next;
  char failure[160]; /* the CUDA call that failed, and why */
} Staging;

static int cuda_failed(Staging *s, const char *call, cudaError_t e) {
  snprintf(s->failure, sizeof s->failure, "%s: %s", call, cudaGetErrorString(e));
  return 1;
}

static int stage(Dsv2BufferId dst, size_t offset, const void *src, size_t bytes, void *ctx) {
  Staging *s = ctx;
  if (2 * offset + bytes > 2 * dsv2_buffer_elems(s->config, dst)) {
    snprintf(s->failure, sizeof s->failure, "a copy past the end of buffer %s",
             dsv2_buffer_name(dst));
    return 1;
  }
  unsigned char *to = (unsigned char *)s->device[dst] + 2 * offset;
  const unsigned char *from = src;
  while (bytes) {
    size_t n = bytes < STAGING_BYTES ? bytes : STAGING_BYTES;
    int slot = s->next;
    cudaError_t e = cudaEventSynchronize(s->drained[slot]);
    if (e != cudaSuccess)
      return cuda_failed(s, "cudaEventSynchronize", e);
    memcpy(s->pinned[slot], from, n);
    e = cudaMemcpyAsync(to, s->pinned[slot], n, cudaMemcpyHostToDevice, s->stream);
    if (e != cudaSuccess)
      return cuda_failed(s, "cudaMemcpyAsync", e);
    e = cudaEventRecord(s->drained[slot], s->stream);
    if (e != cudaSuccess)
      return cuda_failed(s, "cudaEventRecord", e);
    s->next = !slot;
    to += n;
    from += n;
    bytes -= n;
  }
  return 0;
}

int dsv2_load_device(const Dsv2Config *c, const char *const *paths, int npaths,
                     void *const device[DSV2_NBUFFERS], char *err, size_t errlen) {
  if (dsv2_check_config(c, err, errlen))
    return 1;
  for (int b = 0; b < DSV2_NBUFFERS; b++)
    if (!device[b] && dsv2_buffer_elems(c, (Dsv2BufferId)b)) {
      snprintf(err, errlen, "dsv2_load_device: no device buffer for %s",
               dsv2_buffer_name((Dsv2BufferId)b));
      return 1;
    }
  Staging s = {.config = c, .device = device};
  int rc = 1, load_failed = 0; /* when dsv2_load has written err */
  cudaError_t e = cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    s.stream = NULL;
    cuda_failed(&s, "cudaStreamCreateWithFlags", e);
    goto done;
  }
  for (int i = 0; i < 2; i++) {
    if ((e = cudaHostAlloc((void **)&s.pinned[i], STAGING_BYTES, cudaHostAllocDefault)) !=
        cudaSuccess) {
      s.pinned[i] = NULL;
      cuda_failed(&s, "cudaHostAlloc", e);
      goto done;
    }
    if ((e = cudaEventCreateWithFlags(&s.drained[i], cudaEventDisableTiming)) != cudaSuccess) {
      s.drained[i] = NULL;
      cuda_failed(&s, "cudaEventCreateWithFlags", e);
      goto done;
    }
  }
  if (dsv2_load(c, paths, npaths, stage, &s, err, errlen)) {
    load_failed = 1;
    goto done;
  }
  if ((e = cudaStreamSynchronize(s.stream)) != cudaSuccess) {
    cuda_failed(&s, "cudaStreamSynchronize", e);
    goto done;
  }
  rc = 0;
done:
  /* The copies still in flight read the staging buffers: wait before freeing. */
  if (s.stream && (e = cudaStreamSynchronize(s.stream)) != cudaSuccess && !s.failure[0])
    cuda_failed(&s, "cudaStreamSynchronize", e);
  for (int i = 0; i < 2; i++) {
    if (s.drained[i] && (e = cudaEventDestroy(s.drained[i])) != cudaSuccess && !s.failure[0])
      cuda_failed(&s, "cudaEventDestroy", e);
    if (s.pinned[i] && (e = cudaFreeHost(s.pinned[i])) != cudaSuccess && !s.failure[0])
      cuda_failed(&s, "cudaFreeHost", e);
  }
  if (s.stream && (e = cudaStreamDestroy(s.stream)) != cudaSuccess && !s.failure[0])
    cuda_failed(&s, "cudaStreamDestroy", e);
  if (s.failure[0]) {
    /* dsv2_load's message says which tensor; add what CUDA said.  Before
     * dsv2_load (or after it succeeded) err holds nothing of ours. */
    size_t used = load_failed ? strlen(err) : 0;
    if (used && used + 2 < errlen) {
      snprintf(err + used, errlen - used, ": %s", s.failure);
    } else {
      snprintf(err, errlen, "dsv2_load_device: %s", s.failure);
    }
    rc = 1;
  }
  return rc;
}
