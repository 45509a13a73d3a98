/* test_weights_device.c: the weights on the GPU.
 *
 *   load DIR   a checkpoint written under DIR, loaded to the device and read
 *              back: every element is the seed's random weight; a model
 *              whose embedding is larger than a staging buffer; a bad
 *              checkpoint refused with the file named.
 *   random     dsv2_random_device against the host formula: every element
 *              at small shapes, and samples at the real shape (indices past
 *              2^32 included) where the GPU has the memory.
 *   no_gpu     without a GPU, the load's first CUDA call failing gives
 *              that call's message (exits 77 where there is a GPU).
 * The others exit 77 (skipped) without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "weights.h"

static int failures;

#define CUDA(call)                                                                                 \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static const Dsv2Config small = {.vocab = 64,
                                 .hidden = 32,
                                 .layers = 2,
                                 .dense_layers = 1,
                                 .heads = 2,
                                 .kv_lora_rank = 16,
                                 .qk_nope = 8,
                                 .qk_rope = 4,
                                 .v_head = 6,
                                 .ffn = 48,
                                 .experts = 4,
                                 .expert_ffn = 16,
                                 .shared_ffn = 32};

/* An embedding of 64 MiB, twice a staging buffer, so that copies are split. */
static const Dsv2Config wide = {.vocab = 32768,
                                .hidden = 1024,
                                .layers = 2,
                                .dense_layers = 1,
                                .heads = 2,
                                .kv_lora_rank = 32,
                                .qk_nope = 16,
                                .qk_rope = 8,
                                .v_head = 16,
                                .ffn = 64,
                                .experts = 3,
                                .expert_ffn = 32,
                                .shared_ffn = 64};

static void device_alloc(const Dsv2Config *c, void *d[DSV2_NBUFFERS]) {
  for (int b = 0; b < DSV2_NBUFFERS; b++) {
    size_t n = dsv2_buffer_elems(c, (Dsv2BufferId)b);
    d[b] = NULL;
    if (n)
      CUDA(cudaMalloc(&d[b], 2 * n));
  }
}

static void device_free(void *d[DSV2_NBUFFERS]) {
  for (int b = 0; b < DSV2_NBUFFERS; b++)
    if (d[b])
      CUDA(cudaFree(d[b]));
}

/* Every element of every device buffer against the host formula. */
static void check_all(const Dsv2Config *c, void *d[DSV2_NBUFFERS], uint32_t seed,
                      const char *what) {
  for (int b = 0; b < DSV2_NBUFFERS; b++) {
    size_t n = dsv2_buffer_elems(c, (Dsv2BufferId)b), bad = 0;
    if (!n)
      continue;
    uint16_t *h = malloc(2 * n);
    if (!h)
      exit(2);
    CUDA(cudaMemcpy(h, d[b], 2 * n, cudaMemcpyDeviceToHost));
    float scale, offset;
    dsv2_random_params(c, (Dsv2BufferId)b, &scale, &offset);
    for (size_t i = 0; i < n; i++) {
      uint16_t want = dsv2_random_value(seed, (Dsv2BufferId)b, i, scale, offset);
      if (h[i] != want && bad++ == 0) {
        fprintf(stderr, "%s: %s[%zu] is 0x%04x, expected 0x%04x\n", what,
                dsv2_buffer_name((Dsv2BufferId)b), i, h[i], want);
        failures++;
      }
    }
    free(h);
  }
}

static int test_load(const char *dir) {
  const Dsv2Config *configs[2] = {&small, &wide};
  char err[512];
  for (int k = 0; k < 2; k++) {
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/model-%d-1.safetensors", dir, k);
    snprintf(b, sizeof b, "%s/model-%d-2.safetensors", dir, k);
    const char *paths[2] = {a, b};
    if (dsv2_write_checkpoint_files(configs[k], paths, 2, 21 + k, err, sizeof err)) {
      fprintf(stderr, "%s\n", err);
      return 1;
    }
    void *d[DSV2_NBUFFERS];
    device_alloc(configs[k], d);
    if (dsv2_load_device(configs[k], paths, 2, d, err, sizeof err)) {
      fprintf(stderr, "dsv2_load_device: %s\n", err);
      failures++;
    } else {
      check_all(configs[k], d, 21 + k, k ? "wide" : "small");
    }
    /* Half the checkpoint: refused, naming the missing tensor. */
    err[0] = 0;
    if (dsv2_load_device(configs[k], paths, 1, d, err, sizeof err) == 0 ||
        !strstr(err, "missing tensor")) {
      fprintf(stderr, "half a checkpoint: \"%s\", expected a missing tensor\n", err);
      failures++;
    }
    device_free(d);
  }
  return 0;
}

static int test_random(void) {
  char err[512];
  const Dsv2Config *configs[2] = {&small, &wide};
  for (int k = 0; k < 2; k++) {
    void *d[DSV2_NBUFFERS];
    device_alloc(configs[k], d);
    if (dsv2_random_device(configs[k], 99, d, NULL, err, sizeof err)) {
      fprintf(stderr, "dsv2_random_device: %s\n", err);
      failures++;
    } else {
      check_all(configs[k], d, 99, k ? "wide random" : "small random");
    }
    device_free(d);
  }
  /* The real shape (31 GB of bf16), sampled. */
  Dsv2Config lite = dsv2_lite();
  size_t total = 0, free_bytes, total_bytes;
  for (int b = 0; b < DSV2_NBUFFERS; b++)
    total += 2 * dsv2_buffer_elems(&lite, (Dsv2BufferId)b);
  CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (total + ((size_t)1 << 30) > free_bytes) {
    printf("the real shape's %.1f GB do not fit in the GPU's %.1f GB free: not sampled\n",
           total / 1e9, free_bytes / 1e9);
    return 0;
  }
  void *d[DSV2_NBUFFERS];
  device_alloc(&lite, d);
  cudaStream_t s;
  CUDA(cudaStreamCreate(&s));
  if (dsv2_random_device(&lite, 1234, d, s, err, sizeof err)) {
    fprintf(stderr, "dsv2_random_device: %s\n", err);
    failures++;
  } else {
    uint64_t x = 88172645463325252ull;
    for (int b = 0; b < DSV2_NBUFFERS; b++) {
      size_t n = dsv2_buffer_elems(&lite, (Dsv2BufferId)b);
      float scale, offset;
      dsv2_random_params(&lite, (Dsv2BufferId)b, &scale, &offset);
      for (int i = 0; i < 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t at = i == 0                            ? n - 1
                    : i == 1 && n > ((size_t)1 << 32) ? ((size_t)1 << 32) + 5
                                                      : x % n;
        uint16_t got;
        CUDA(cudaMemcpy(&got, (uint16_t *)d[b] + at, 2, cudaMemcpyDeviceToHost));
        uint16_t want = dsv2_random_value(1234, (Dsv2BufferId)b, at, scale, offset);
        if (got != want) {
          fprintf(stderr, "lite: %s[%zu] is 0x%04x, expected 0x%04x\n",
                  dsv2_buffer_name((Dsv2BufferId)b), at, got, want);
          failures++;
          break;
        }
      }
    }
  }
  CUDA(cudaStreamDestroy(s));
  device_free(d);
  return 0;
}

/* Without a GPU the load's first CUDA call fails: the message is that
 * call's alone, whatever the caller's buffer held before. */
static int test_no_gpu(void) {
  Dsv2Config c = small;
  void *device[DSV2_NBUFFERS];
  static unsigned char fake[DSV2_NBUFFERS];
  for (int b = 0; b < DSV2_NBUFFERS; b++)
    device[b] = &fake[b]; /* never reached: nothing is copied */
  const char *path = "absent.safetensors";
  char err[512];
  snprintf(err, sizeof err, "a stale message");
  int rc = dsv2_load_device(&c, &path, 1, device, err, sizeof err);
  const char *want = "dsv2_load_device: cudaStreamCreateWithFlags: ";
  if (rc != 1 || strncmp(err, want, strlen(want)) || strstr(err, "stale")) {
    failures++;
    fprintf(stderr, "no GPU: rc %d, \"%s\", expected 1 and \"%s...\"\n", rc, err, want);
  }
  printf("  no GPU: %s\n", err);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 ||
      (strcmp(argv[1], "load") && strcmp(argv[1], "random") && strcmp(argv[1], "no_gpu")) ||
      (!strcmp(argv[1], "load") && argc != 3)) {
    fprintf(stderr, "usage: test_weights_device load DIR | random | no_gpu\n");
    return 2;
  }
  int devices = 0;
  if (!strcmp(argv[1], "no_gpu")) {
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
      printf("test_weights_device: skipped: this machine has a GPU\n");
      return 77;
    }
    test_no_gpu();
    if (failures)
      return 1;
    printf("test_weights_device no_gpu: all passed\n");
    return 0;
  }
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("test_weights_device: skipped: no GPU\n");
    return 77;
  }
  int rc = !strcmp(argv[1], "load") ? test_load(argv[2]) : test_random();
  if (rc || failures) {
    fprintf(stderr, "test_weights_device %s: %d failures\n", argv[1], failures);
    return 1;
  }
  printf("test_weights_device %s: all passed\n", argv[1]);
  return 0;
}
