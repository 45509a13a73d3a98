/* deepseek_v2_lite: DeepSeek-V2-Lite's decode from one .cgraph.
 *
 *   deepseek_v2_lite [--batch B] [--prompt 1,2,3] [--tokens N] [--keys K]
 *                    [--seed S] [--eos ID] [CHECKPOINT.safetensors ...]
 *   deepseek_v2_lite --write-checkpoint FILE [--seed S]
 *
 * The weights are the checkpoint's files (the published tensor names,
 * weights.h) or, without files, random ones made on the GPU from the seed.
 * The graph `decode` (variants 1, 2, 4 and 8, created together in one
 * memory pool) makes `limit` tokens a launch: the prompt goes in one
 * position a launch (limit 1), then one launch makes the N tokens on the
 * device, read back once at the end.  With --keys K the prompt is first
 * K - 1 positions of filler, so that the timed tokens attend to about K
 * keys.  Then it makes N tokens again, a launch a token from the host.
 * It prints the tokens of each sequence and the time a token
 * (bench/deepseek_v2_lite.py reads these lines).  --write-checkpoint writes
 * the seed's random weights as a safetensors file in the published names
 * (at the sizes this program was built for) and stops. */
#include "check.h"
#include "deepseek_v2_lite_graph.h"
#include "llm.h"
#include "weights.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_PROMPT = 4096 };

/* What every variant's graph binds: the weights and the state of MAXB
 * sequences (a variant of B uses the first B). */
typedef struct Model {
  Dsv2Config cfg;
  void *w[DSV2_NBUFFERS];
  void *cache, *inv_freq, *tok, *pos, *logits, *made;
} Model;

/* The variants behind one set of calls. */
typedef struct Variant {
  int batch;
  void *graph;
  cgrt_status (*set_limit)(void *g, uint32_t v);
  cgrt_status (*set_eos)(void *g, uint32_t v);
  cgrt_status (*launch)(void *g, cudaStream_t s);
  void (*destroy)(void *g);
} Variant;

#define EXTERN(e, m)                                                                       \
  do {                                                                                     \
    (e).tok = (m)->tok;                                                                    \
    (e).pos = (m)->pos;                                                                    \
    (e).cache = (m)->cache;                                                                \
    (e).inv_freq = (m)->inv_freq;                                                          \
    (e).logits = (m)->logits;                                                              \
    (e).made = (m)->made;                                                                  \
    (e).embed = (m)->w[DSV2_EMBED];                                                        \
    (e).attn_norm = (m)->w[DSV2_ATTN_NORM];                                                \
    (e).ffn_norm = (m)->w[DSV2_FFN_NORM];                                                  \
    (e).kv_norm = (m)->w[DSV2_KV_NORM];                                                    \
    (e).final_norm = (m)->w[DSV2_FINAL_NORM];                                              \
    (e).lm_head = (m)->w[DSV2_LM_HEAD];                                                    \
    (e).w_qkv = (m)->w[DSV2_W_QKV];                                                        \
    (e).w_ukt = (m)->w[DSV2_W_UK_T];                                                       \
    (e).w_uv = (m)->w[DSV2_W_UV];                                                          \
    (e).w_o = (m)->w[DSV2_W_O];                                                            \
    (e).dense_gu = (m)->w[DSV2_DENSE_GU];                                                  \
    (e).dense_down = (m)->w[DSV2_DENSE_DOWN];                                              \
    (e).router = (m)->w[DSV2_ROUTER];                                                      \
    (e).exp_gu = (m)->w[DSV2_EXP_GU];                                                      \
    (e).exp_down = (m)->w[DSV2_EXP_DOWN];                                                  \
    (e).sh_gu = (m)->w[DSV2_SH_GU];                                                        \
    (e).sh_down = (m)->w[DSV2_SH_DOWN];                                                    \
  } while (0)

#define VARIANT(B)                                                                         \
  static cgrt_status set_limit_##B(void *g, uint32_t v) { return decode_##B##_set_limit(g, v); } \
  static cgrt_status set_eos_##B(void *g, uint32_t v) { return decode_##B##_set_eos(g, v); }     \
  static cgrt_status launch_##B(void *g, cudaStream_t s) { return decode_##B##_launch(g, s); }   \
  static void destroy_##B(void *g) { decode_##B##_destroy(g); }                            \
  static cgrt_status create_##B(Variant *v, const Model *m, const cgrt_options *opt) {     \
    decode_##B##_extern e;                                                                 \
    decode_##B *g = NULL;                                                                  \
    EXTERN(e, m);                                                                          \
    cgrt_status s = decode_##B##_create(&g, &e, opt);                                      \
    *v = (Variant){B, g, set_limit_##B, set_eos_##B, launch_##B, destroy_##B};             \
    return s;                                                                              \
  }
VARIANT(1)
VARIANT(2)
VARIANT(4)
VARIANT(8)

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *device_alloc(size_t bytes) {
  void *p = NULL;
  CUDA(cudaMalloc(&p, bytes));
  return p;
}

/* The graph's constants that are not integers (written out in the .cgraph)
 * against the published code's formulas. */
static void check_constants(void) {
  const double scale = llm_mla_softmax_scale(192, 40, 0.707);
  const double rope = llm_yarn_rope_mscale(40, 0.707, 0.707);
  if (fabs(scale - 0.114721387) > 1e-8 || fabs(rope - 1.0) > 1e-7) {
    fprintf(stderr, "deepseek_v2_lite: the .cgraph's softmax scale 0.114721387 and RoPE factor 1 "
                    "disagree with kernels/llm.h's %.9f and %.9f\n", scale, rope);
    exit(1);
  }
}

static Dsv2Config graph_config(void) {
  Dsv2Config c = dsv2_lite();
  c.layers = DSV2_LAYERS;
  c.dense_layers = DSV2_DENSE;
  c.experts = DSV2_EXPERTS;
  c.vocab = DSV2_VOCAB;
  return c;
}

static void model_create(Model *m, char **files, int nfiles, uint32_t seed) {
  char err[512];
  memset(m, 0, sizeof *m);
  m->cfg = graph_config();
  size_t total = 0;
  for (int i = 0; i < DSV2_NBUFFERS; i++) {
    const size_t bytes = dsv2_buffer_elems(&m->cfg, (Dsv2BufferId)i) * 2;
    m->w[i] = device_alloc(bytes);
    total += bytes;
  }
  const double t0 = now();
  int rc = nfiles ? dsv2_load_device(&m->cfg, (const char *const *)files, nfiles, m->w, err,
                                     sizeof err)
                  : dsv2_random_device(&m->cfg, seed, m->w, NULL, err, sizeof err);
  if (rc != 0) {
    fprintf(stderr, "deepseek_v2_lite: %s\n", err);
    exit(1);
  }
  CUDA(cudaDeviceSynchronize());
  printf("weights: %.2f GB, %s in %.2f s\n", (double)total / 1e9,
         nfiles ? "loaded" : "random from the seed", now() - t0);

  float inv_freq[32];
  llm_yarn_inv_freq(inv_freq, 64, 10000, 40, 4096, 32, 1);
  m->inv_freq = device_alloc(sizeof inv_freq);
  CUDA(cudaMemcpy(m->inv_freq, inv_freq, sizeof inv_freq, cudaMemcpyHostToDevice));
  m->cache = device_alloc((size_t)DSV2_LAYERS * 8 * DSV2_MAXPOS * 576 * 2);
  m->tok = device_alloc(8 * sizeof(uint32_t));
  m->pos = device_alloc(8 * sizeof(uint32_t));
  m->logits = device_alloc((size_t)8 * DSV2_VOCAB * sizeof(float));
  m->made = device_alloc((size_t)8 * DSV2_MAXGEN * sizeof(uint32_t));
}

static void model_destroy(Model *m) {
  for (int i = 0; i < DSV2_NBUFFERS; i++)
    CUDA(cudaFree(m->w[i]));
  CUDA(cudaFree(m->inv_freq));
  CUDA(cudaFree(m->cache));
  CUDA(cudaFree(m->tok));
  CUDA(cudaFree(m->pos));
  CUDA(cudaFree(m->logits));
  CUDA(cudaFree(m->made));
}

/* One launch that makes `limit` tokens for the variant's sequences. */
static void run(const Variant *v, uint32_t limit, cudaStream_t s) {
  CGRT(v->set_limit(v->graph, limit));
  CGRT(v->launch(v->graph, s));
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (s[0] < '0' || s[0] > '9' || errno || *end || v > max) /* digits only: no sign, no space */
    return 0;
  *out = v;
  return 1;
}

/* ID,ID,...: each id digits only (no sign, no space), below the vocabulary;
 * no empty id (",1", "1,,2", "1,"). */
static int parse_prompt(const char *s, uint32_t *ids, int *n) {
  *n = 0;
  for (;;) {
    char *end;
    if (*s < '0' || *s > '9' || *n == MAX_PROMPT)
      return 0;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || v >= DSV2_VOCAB || (*end && *end != ','))
      return 0;
    ids[(*n)++] = (uint32_t)v;
    if (!*end)
      return 1;
    s = end + 1;
  }
}

static void usage(void) {
  fprintf(stderr, "usage: deepseek_v2_lite [--batch 1|2|4|8] [--prompt ID,ID,...] [--tokens N] "
                  "[--keys K] [--seed S] [--eos ID] [CHECKPOINT.safetensors ...]\n"
                  "       deepseek_v2_lite --write-checkpoint FILE [--seed S]\n");
  exit(2);
}

int main(int argc, char **argv) {
  unsigned long batch = 1, ntok = 32, keys = 0, seed = 1, eos = DSV2_VOCAB;
  static uint32_t prompt[MAX_PROMPT];
  int nprompt = 0;
  const char *write_to = NULL;
  char **files = calloc((size_t)argc, sizeof *files);
  int nfiles = 0;
  if (!files)
    return 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1;
    if (!strcmp(a, "--batch"))
      ok = val && parse_uint(val, 8, &batch) && (batch & (batch - 1)) == 0 && batch, i++;
    else if (!strcmp(a, "--tokens"))
      ok = val && parse_uint(val, DSV2_MAXGEN, &ntok) && ntok > 0, i++;
    else if (!strcmp(a, "--keys"))
      ok = val && parse_uint(val, DSV2_MAXPOS, &keys), i++;
    else if (!strcmp(a, "--seed"))
      ok = val && parse_uint(val, 0xffffffffu, &seed), i++;
    else if (!strcmp(a, "--eos"))
      ok = val && parse_uint(val, DSV2_VOCAB, &eos), i++;
    else if (!strcmp(a, "--write-checkpoint"))
      ok = (write_to = val) != NULL, i++;
    else if (!strcmp(a, "--prompt"))
      ok = val && parse_prompt(val, prompt, &nprompt), i++;
    else if (a[0] == '-')
      ok = 0;
    else
      files[nfiles++] = argv[i];
    if (!ok) {
      fprintf(stderr, "deepseek_v2_lite: bad or missing value for '%s'\n", a);
      usage();
    }
  }
  if (write_to) {
    char err[512];
    const Dsv2Config cfg = graph_config();
    free(files);
    if (dsv2_write_checkpoint(&cfg, write_to, (uint32_t)seed, err, sizeof err) != 0) {
      fprintf(stderr, "deepseek_v2_lite: %s\n", err);
      return 1;
    }
    printf("wrote %s: the random weights of seed %lu\n", write_to, seed);
    return 0;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    printf("deepseek_v2_lite: skipped: no GPU\n");
    free(files);
    return 77;
  }
  if (!nprompt) { /* a default prompt */
    const uint32_t p[] = {100000, 2991, 457, 245, 4863, 13, 340, 10, 17};
    for (int i = 0; i < (int)(sizeof p / sizeof p[0]); i++)
      prompt[nprompt++] = p[i] % DSV2_VOCAB;
  }
  const int filler = keys > (unsigned long)nprompt ? (int)keys - nprompt : 0;
  if ((unsigned long)filler + nprompt + 2 * ntok > DSV2_MAXPOS) {
    fprintf(stderr, "deepseek_v2_lite: %d prompt positions and %lu tokens exceed the cache's %d "
                    "positions (MAXPOS)\n", filler + nprompt, ntok, DSV2_MAXPOS);
    return 2;
  }
  check_constants();

  Model m;
  model_create(&m, files, nfiles, (uint32_t)seed);
  cudaStream_t s;
  CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  /* The four variants in one pool: together they take the memory of the
   * largest one's owned buffers. */
  size_t need = decode_1_pool_bytes();
  need = decode_2_pool_bytes() > need ? decode_2_pool_bytes() : need;
  need = decode_4_pool_bytes() > need ? decode_4_pool_bytes() : need;
  need = decode_8_pool_bytes() > need ? decode_8_pool_bytes() : need;
  cgrt_pool *pool;
  CGRT(cgrt_pool_create(&pool, need, CGRT_CURRENT_DEVICE));
  cgrt_options opt = CGRT_OPTIONS_INIT;
  opt.pool = pool;
  opt.stream = s;
  Variant vs[4];
  const double c0 = now();
  CGRT(create_1(&vs[0], &m, &opt));
  CGRT(create_2(&vs[1], &m, &opt));
  CGRT(create_4(&vs[2], &m, &opt));
  CGRT(create_8(&vs[3], &m, &opt));
  CUDA(cudaStreamSynchronize(s));
  printf("created: 4 variants (batch 1, 2, 4, 8) in %.1f ms, pool %.1f MB\n", (now() - c0) * 1e3,
         (double)need / 1e6);
  const Variant *v = &vs[batch == 1 ? 0 : batch == 2 ? 1 : batch == 4 ? 2 : 3];
  CGRT(v->set_eos(v->graph, (uint32_t)eos));

  /* The prompt, one position a launch; sequence t's ids are the prompt's
   * shifted by t, so that the sequences differ. */
  uint32_t tok[8], pos[8];
  const int len = filler + nprompt;
  for (int i = 0; i < len; i++) {
    for (int t = 0; t < (int)batch; t++) {
      const uint32_t id = i < filler ? (uint32_t)(i * 7919 + 13) % DSV2_VOCAB
                                     : (prompt[i - filler] + (uint32_t)t) % DSV2_VOCAB;
      tok[t] = id;
      pos[t] = (uint32_t)i;
    }
    CUDA(cudaMemcpyAsync(m.tok, tok, batch * sizeof *tok, cudaMemcpyHostToDevice, s));
    CUDA(cudaMemcpyAsync(m.pos, pos, batch * sizeof *pos, cudaMemcpyHostToDevice, s));
    run(v, 1, s);
  }
  CUDA(cudaMemcpyAsync(tok, m.tok, batch * sizeof *tok, cudaMemcpyDeviceToHost, s));
  CUDA(cudaStreamSynchronize(s));

  /* The rest on the device in one launch: the first token came from the
   * prompt's last launch. */
  cudaEvent_t e0, e1;
  CUDA(cudaEventCreate(&e0));
  CUDA(cudaEventCreate(&e1));
  CUDA(cudaEventRecord(e0, s));
  if (ntok > 1)
    run(v, (uint32_t)ntok - 1, s);
  CUDA(cudaEventRecord(e1, s));
  static uint32_t made[8 * DSV2_MAXGEN];
  CUDA(cudaMemcpyAsync(made, m.made, batch * DSV2_MAXGEN * sizeof *made, cudaMemcpyDeviceToHost,
                       s));
  CUDA(cudaStreamSynchronize(s));
  float ms = 0;
  CUDA(cudaEventElapsedTime(&ms, e0, e1));

  for (int t = 0; t < (int)batch; t++) {
    printf("sequence %d:", t);
    printf(" %u", tok[t]);
    for (unsigned long i = 0; i + 1 < ntok; i++)
      printf(" %u", made[(size_t)t * DSV2_MAXGEN + i]);
    printf("\n");
  }
  if (ntok > 1) {
    const double us = ms * 1e3 / (double)(ntok - 1);
    printf("generation: %lu tokens a sequence in one launch after %d prompt positions: %.1f us a "
           "step, %.1f tokens/s\n", ntok - 1, len, us, 1e6 * (double)batch / us);
  }
  /* The same number of tokens again, a launch a token from the host (the
   * graph carries on from the device's tokens and positions). */
  if (ntok > 1) {
    CUDA(cudaEventRecord(e0, s));
    for (unsigned long i = 0; i + 1 < ntok; i++)
      run(v, 1, s);
    CUDA(cudaEventRecord(e1, s));
    CUDA(cudaEventSynchronize(e1));
    CUDA(cudaEventElapsedTime(&ms, e0, e1));
    const double us = ms * 1e3 / (double)(ntok - 1);
    printf("host-launched: %lu launches of one token: %.1f us a step, %.1f tokens/s\n", ntok - 1,
           us, 1e6 * (double)batch / us);
  }
  size_t free_b = 0, total_b = 0;
  CUDA(cudaMemGetInfo(&free_b, &total_b));
  printf("GPU memory in use: %.2f GB\n", (double)(total_b - free_b) / 1e9);

  CUDA(cudaEventDestroy(e0));
  CUDA(cudaEventDestroy(e1));
  for (int i = 0; i < 4; i++)
    vs[i].destroy(vs[i].graph);
  CGRT(cgrt_pool_destroy(pool));
  CUDA(cudaStreamDestroy(s));
  model_destroy(&m);
  free(files);
  return 0;
}
