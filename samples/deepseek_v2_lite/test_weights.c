/* test_weights.c: the checkpoint loader on small safetensors files that the
 * test writes (2 layers, the first dense, 4 experts, small dimensions):
 * every buffer's values and layout, F32 and F16 converted, and every kind
 * of bad checkpoint refused with its message and the buffers untouched.
 *
 *   test_weights DIR           the tests, files under DIR
 *   test_weights --sample      prints sampled random weights for
 *                              test_reference.py to check its formula against
 *   test_weights --write A B SEED   writes the seed's checkpoint of the small
 *                              model in two files, for test_reference.py */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "safetensors.h"
#include "weights.h"

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

static int failures;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                              \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

static const char *dir;

static const char *path_of(const char *name) {
  static char paths[8][512];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

/* ---- host buffers, filled by the callback ---- */

typedef struct Host {
  uint16_t *buf[DSV2_NBUFFERS];
  size_t copies;
} Host;

static void host_alloc(Host *h, const Dsv2Config *c) {
  h->copies = 0;
  for (int b = 0; b < DSV2_NBUFFERS; b++) {
    size_t n = dsv2_buffer_elems(c, (Dsv2BufferId)b);
    h->buf[b] = malloc((n ? n : 1) * 2);
    if (!h->buf[b])
      exit(2);
    memset(h->buf[b], 0xff, n * 2); /* a NaN that the formula never makes */
  }
}

static void host_free(Host *h) {
  for (int b = 0; b < DSV2_NBUFFERS; b++)
    free(h->buf[b]);
}

static int host_copy(Dsv2BufferId dst, size_t offset, const void *src, size_t bytes, void *ctx) {
  Host *h = ctx;
  if (2 * offset + bytes > 2 * dsv2_buffer_elems(&small, dst))
    return 1;
  memcpy(h->buf[dst] + offset, src, bytes);
  h->copies++;
  return 0;
}

/* Every element of every buffer is the seed's random weight. */
static void check_random(const Dsv2Config *c, const Host *h, uint32_t seed, const char *what) {
  for (int b = 0; b < DSV2_NBUFFERS; b++) {
    float scale, offset;
    dsv2_random_params(c, (Dsv2BufferId)b, &scale, &offset);
    size_t n = dsv2_buffer_elems(c, (Dsv2BufferId)b), bad = 0;
    for (size_t i = 0; i < n; i++) {
      uint16_t want = dsv2_random_value(seed, (Dsv2BufferId)b, i, scale, offset);
      if (h->buf[b][i] != want && bad++ == 0)
        CHECK(0, "%s: %s[%zu] is 0x%04x, expected 0x%04x", what, dsv2_buffer_name((Dsv2BufferId)b),
              i, h->buf[b][i], want);
    }
  }
}

/* ---- f16, the test's own conversions (round to nearest even) ---- */

static uint16_t f16_from_float(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (a >= 65520.0f)
    return sign | 0x7c00;
  if (a < 0x1p-14f)
    return sign | (uint16_t)lrintf(a * 0x1p24f); /* subnormal, or 0x400 */
  int e;
  frexpf(a, &e); /* a = [0.5, 1) * 2^e */
  uint32_t m = (uint32_t)lrintf(ldexpf(a, 11 - e)), exp = (uint32_t)(e - 1 + 15);
  if (m == 2048)
    m = 1024, exp++;
  return exp >= 31 ? sign | 0x7c00 : (uint16_t)(sign | exp << 10 | (m - 1024));
}

static float float_from_f16(uint16_t h) {
  int exp = h >> 10 & 0x1f, man = h & 0x3ff;
  float v = exp ? ldexpf((float)(man | 0x400), exp - 25) : ldexpf((float)man, -24);
  return h & 0x8000 ? -v : v;
}

/* ---- a safetensors writer of the test's own, for the bad files ---- */

typedef struct Entry {
  char name[96];
  char dtype[16];
  int ndim;
  int64_t shape[2];
  const void *data;
  size_t bytes;
} Entry;

static void write_raw(const char *path, const char *header, size_t header_len, const Entry *e,
                      size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(2);
  }
  unsigned char len[8];
  for (int i = 0; i < 8; i++)
    len[i] = (unsigned char)((uint64_t)header_len >> (8 * i));
  fwrite(len, 1, 8, f);
  fwrite(header, 1, header_len, f);
  for (size_t i = 0; i < n; i++)
    fwrite(e[i].data, 1, e[i].bytes, f);
  if (fclose(f) != 0)
    exit(2);
}

static void write_entries(const char *path, const Entry *e, size_t n) {
  size_t cap = 1 << 20, len = 0;
  char *h = malloc(cap);
  if (!h)
    exit(2);
  uint64_t at = 0;
  len += (size_t)snprintf(h + len, cap - len, "{");
  for (size_t i = 0; i < n; i++) {
    len += (size_t)snprintf(h + len, cap - len, "%s\"%s\": {\"dtype\": \"%s\", \"shape\": [",
                            i ? ", " : "", e[i].name, e[i].dtype);
    for (int d = 0; d < e[i].ndim; d++)
      len +=
          (size_t)snprintf(h + len, cap - len, "%s%lld", d ? ", " : "", (long long)e[i].shape[d]);
    len += (size_t)snprintf(h + len, cap - len, "], \"data_offsets\": [%llu, %llu]}",
                            (unsigned long long)at, (unsigned long long)(at + e[i].bytes));
    at += e[i].bytes;
  }
  len += (size_t)snprintf(h + len, cap - len, "}");
  if (len >= cap)
    exit(2);
  write_raw(path, h, len, e, n);
  free(h);
}

/* The entries of a file that dsv2_write_checkpoint wrote (mapped by f). */
static size_t entries_of(const StFile *f, Entry *e) {
  for (size_t i = 0; i < f->ntensors; i++) {
    const StTensor *t = &f->tensors[i];
    memset(&e[i], 0, sizeof e[i]);
    snprintf(e[i].name, sizeof e[i].name, "%s", t->name);
    snprintf(e[i].dtype, sizeof e[i].dtype, "%s", t->dtype_name);
    e[i].ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++)
      e[i].shape[d] = t->shape[d];
    e[i].data = f->data + t->begin;
    e[i].bytes = t->end - t->begin;
  }
  return f->ntensors;
}

static size_t find_entry(const Entry *e, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(e[i].name, name))
      return i;
  fprintf(stderr, "no entry %s\n", name);
  exit(2);
}

/* dsv2_load must refuse the files with a message containing each of the
 * fragments, and leave the buffers untouched. */
static void expect_refused(const char *const *paths, int npaths, const char *case_name, ...) {
  Host h;
  char err[512] = "";
  host_alloc(&h, &small);
  int rc = dsv2_load(&small, paths, npaths, host_copy, &h, err, sizeof err);
  CHECK(rc == 1, "%s: loaded, expected a refusal", case_name);
  CHECK(h.copies == 0, "%s: %zu copies before the refusal", case_name, h.copies);
  va_list ap;
  va_start(ap, case_name);
  for (const char *frag; (frag = va_arg(ap, const char *));)
    CHECK(strstr(err, frag), "%s: the message \"%s\" lacks \"%s\"", case_name, err, frag);
  va_end(ap);
  printf("  %s: %s\n", case_name, err);
  host_free(&h);
}

/* ---- the tests ---- */

static void test_table(void) {
  size_t n = dsv2_tensors(&small, NULL, 0);
  /* 3 globals; 7 attention tensors a layer; 3 dense; router, 3 a expert, 3 shared */
  CHECK(n == 3 + 2 * 7 + 3 + (1 + 3 * 4 + 3), "%zu tensors", n);
  Dsv2Config lite = dsv2_lite();
  CHECK(dsv2_tensors(&lite, NULL, 0) == 3 + 27 * 7 + 3 + 26 * (1 + 3 * 64 + 3), "lite: %zu",
        dsv2_tensors(&lite, NULL, 0));
  CHECK(dsv2_buffer_elems(&lite, DSV2_W_QKV) == (size_t)27 * 3648 * 2048,
        "W_QKV at the real shape");
  CHECK(dsv2_buffer_elems(&lite, DSV2_EXP_GU) == (size_t)26 * 64 * 2816 * 2048, "EXP_GU");
  /* Every element of every buffer is written exactly once by some tensor. */
  Dsv2Tensor *t = malloc(n * sizeof *t);
  if (!t)
    exit(2);
  CHECK(dsv2_tensors(&small, t, n) == n, "the count, filling the table");
  /* The count is a formula: the walk must make exactly that many, ending
   * with the final norm and the LM head. */
  CHECK(n >= 2 && !strcmp(t[n - 2].name, "model.norm.weight") &&
            !strcmp(t[n - 1].name, "lm_head.weight"),
        "the table's last entries: %s, %s", t[n - 2].name, t[n - 1].name);
  Dsv2Tensor first[5];
  CHECK(dsv2_tensors(&small, first, 5) == n, "the count, filling 5");
  for (int k = 0; k < 5; k++)
    CHECK(!strcmp(first[k].name, t[k].name) && first[k].offset == t[k].offset,
          "entry %d of 5: %s against %s", k, first[k].name, t[k].name);
  /* An absurd config is counted at once, not walked (2^31 layers of 2^27
   * experts), and a count past a size_t is SIZE_MAX. */
  Dsv2Config huge = small;
  huge.layers = 2147483647;
  huge.dense_layers = 1;
  huge.experts = 1 << 27;
  const size_t huge_count =
      3 + 7 * (size_t)2147483647 + 3 + (size_t)2147483646 * (3 * ((size_t)1 << 27) + 4);
  CHECK(dsv2_tensors(&huge, NULL, 0) == huge_count, "huge: %zu", dsv2_tensors(&huge, NULL, 0));
  Dsv2Tensor one;
  CHECK(dsv2_tensors(&huge, &one, 1) == huge_count &&
            !strcmp(one.name, "model.embed_tokens.weight"),
        "huge, filling 1: %s", one.name);
  huge.dense_layers = 2147483647 - 1;
  huge.layers = 0;
  CHECK(dsv2_tensors(&huge, NULL, 0) == SIZE_MAX, "a count past a size_t");
  size_t covered[DSV2_NBUFFERS] = {0};
  for (size_t k = 0; k < n; k++) {
    size_t elems = (size_t)t[k].shape[0] * (size_t)(t[k].ndim == 2 ? t[k].shape[1] : 1);
    if (t[k].place == DSV2_PLACE_KV_B) {
      covered[DSV2_W_UK_T] += (size_t)small.heads * small.kv_lora_rank * small.qk_nope;
      covered[DSV2_W_UV] += (size_t)small.heads * small.v_head * small.kv_lora_rank;
    } else {
      covered[t[k].buffer] += elems;
    }
  }
  for (int b = 0; b < DSV2_NBUFFERS; b++)
    CHECK(covered[b] == dsv2_buffer_elems(&small, (Dsv2BufferId)b), "%s: %zu of %zu elements",
          dsv2_buffer_name((Dsv2BufferId)b), covered[b],
          dsv2_buffer_elems(&small, (Dsv2BufferId)b));
  free(t);
  char err[200];
  Dsv2Config bad = small;
  bad.dense_layers = 3;
  CHECK(dsv2_check_config(&bad, err, sizeof err) == 1 && strstr(err, "dense_layers"), "%s", err);
  bad = small;
  bad.experts = 0;
  CHECK(dsv2_check_config(&bad, err, sizeof err) == 1 && strstr(err, "experts is 0"), "%s", err);

  /* Sizes that overflow: each field fits an int, their products do not
   * fit a size_t, and the message names the fields. */
  bad = lite;
  bad.expert_ffn = bad.hidden = 2147483647; /* exp_gu: 26 * 64 * 2 * 2^31 * 2^31 * 2 bytes */
  CHECK(dsv2_check_config(&bad, err, sizeof err) == 1 && strstr(err, "too large together") &&
            strstr(err, "experts, expert_ffn and hidden") && strstr(err, "exp_gu"),
        "experts * expert_ffn * hidden: \"%s\"", err);
  bad = lite;
  /* Each buffer's bytes fit (embed's and lm_head's 2^63 - 2^33 + 2, w_o's
   * 2^43 - 2^12), their sum does not. */
  bad.vocab = bad.hidden = 2147483647;
  bad.ffn = bad.expert_ffn = bad.shared_ffn = bad.experts = 1;
  bad.layers = bad.dense_layers = 1;
  bad.kv_lora_rank = bad.qk_nope = bad.qk_rope = 1;
  bad.heads = 16;
  bad.v_head = 128;
  CHECK(dsv2_check_config(&bad, err, sizeof err) == 1 && strstr(err, "together") &&
            strstr(err, "vocab") && strstr(err, "hidden"),
        "the buffers together: \"%s\"", err);
  bad = lite;
  bad.heads = bad.qk_nope = bad.qk_rope = 2147483647; /* H * (N + P) */
  CHECK(dsv2_check_config(&bad, err, sizeof err) == 1 && strstr(err, "heads") &&
            strstr(err, "qk_nope") && strstr(err, "w_qkv"),
        "heads * (qk_nope + qk_rope): \"%s\"", err);
  /* The buffers fit (about 2^61 bytes), the table of 2^31 layers' tensors
   * (3 * 2^27 + 4 a layer) does not. */
  bad = small;
  bad.layers = 2147483647;
  bad.experts = 1 << 27;
  bad.vocab = bad.hidden = bad.heads = bad.kv_lora_rank = bad.qk_nope = bad.qk_rope = 1;
  bad.v_head = bad.ffn = bad.expert_ffn = bad.shared_ffn = 1;
  CHECK(dsv2_check_config(&bad, err, sizeof err) == 1 && strstr(err, "table of tensors") &&
            strstr(err, "layers, dense_layers and experts"),
        "the table of tensors: \"%s\"", err);
  CHECK(dsv2_check_config(&lite, err, sizeof err) == 0, "lite refused: %s", err);
  CHECK(dsv2_check_config(&small, err, sizeof err) == 0, "small refused: %s", err);
}

static void test_bf16(void) {
  CHECK(dsv2_bf16_from_float(1.0f) == 0x3f80, "1.0");
  /* halfway cases round to even */
  CHECK(dsv2_bf16_from_float(dsv2_float_from_bf16(0x3f80) * (1 + 0x1p-8f)) == 0x3f80, "tie down");
  CHECK(dsv2_bf16_from_float(dsv2_float_from_bf16(0x3f81) * (1 + 0x1p-8f / (1 + 0x1p-7f))) ==
            0x3f82,
        "tie up");
  CHECK(dsv2_bf16_from_float(-2.0f) == 0xc000, "-2");
}

/* The seed's checkpoint in three files, loaded; then its kv_b_proj and the
 * stacked matrices read from the file directly against the buffers. */
static void test_load(void) {
  const char *paths[3] = {path_of("model-00001-of-00003.safetensors"),
                          path_of("model-00002-of-00003.safetensors"),
                          path_of("model-00003-of-00003.safetensors")};
  char err[512];
  CHECK(!dsv2_write_checkpoint_files(&small, paths, 3, 7, err, sizeof err), "%s", err);
  Host h;
  host_alloc(&h, &small);
  CHECK(!dsv2_load(&small, paths, 3, host_copy, &h, err, sizeof err), "%s", err);
  check_random(&small, &h, 7, "three files");

  /* The layout, from the published tensors read raw. */
  int R = small.kv_lora_rank, N = small.qk_nope, V = small.v_head, D = small.hidden;
  int H = small.heads, P = small.qk_rope, E = small.experts, F = small.expert_ffn;
  int rows_qkv = H * (N + P) + R + P;
  int found = 0;
  for (int i = 0; i < 3; i++) {
    StFile f;
    CHECK(!st_open(&f, paths[i], err, sizeof err), "%s", err);
    for (size_t k = 0; k < f.ntensors; k++) {
      const StTensor *t = &f.tensors[k];
      const unsigned char *raw = f.data + t->begin;
#define RAW(r, c, cols)                                                                            \
  ((uint16_t)(raw[2 * ((size_t)(r) * (cols) + (c))] | raw[2 * ((size_t)(r) * (cols) + (c)) + 1]    \
                                                          << 8))
      if (!strcmp(t->name, "model.layers.1.self_attn.kv_b_proj.weight")) {
        found++;
        for (int hd = 0; hd < H; hd++)
          for (int r = 0; r < R; r++) {
            for (int n = 0; n < N; n++)
              CHECK(h.buf[DSV2_W_UK_T][(((size_t)1 * H + hd) * R + r) * N + n] ==
                        RAW(hd * (N + V) + n, r, R),
                    "W_UK_T[1][%d][%d][%d] is not kv_b_proj[%d][%d]", hd, r, n, hd * (N + V) + n,
                    r);
            for (int v = 0; v < V; v++)
              CHECK(h.buf[DSV2_W_UV][(((size_t)1 * H + hd) * V + v) * R + r] ==
                        RAW(hd * (N + V) + N + v, r, R),
                    "W_UV[1][%d][%d][%d]", hd, v, r);
          }
      } else if (!strcmp(t->name, "model.layers.1.self_attn.kv_a_proj_with_mqa.weight")) {
        found++;
        for (int r = 0; r < R + P; r++)
          for (int d = 0; d < D; d++)
            CHECK(h.buf[DSV2_W_QKV][((size_t)1 * rows_qkv + H * (N + P) + r) * D + d] ==
                      RAW(r, d, D),
                  "W_QKV[1][%d][%d]", H * (N + P) + r, d);
      } else if (!strcmp(t->name, "model.layers.1.mlp.experts.3.up_proj.weight")) {
        found++;
        for (int r = 0; r < F; r++)
          for (int d = 0; d < D; d++)
            CHECK(h.buf[DSV2_EXP_GU][(((size_t)0 * E + 3) * 2 * F + F + r) * D + d] == RAW(r, d, D),
                  "EXP_GU[0][3][%d][%d]", F + r, d);
      } else if (!strcmp(t->name, "model.layers.0.mlp.down_proj.weight")) {
        found++;
        for (int r = 0; r < D; r++)
          for (int c = 0; c < small.ffn; c++)
            CHECK(h.buf[DSV2_DENSE_DOWN][(size_t)r * small.ffn + c] == RAW(r, c, small.ffn),
                  "DENSE_DOWN[0][%d][%d]", r, c);
      }
#undef RAW
    }
    st_close(&f);
  }
  CHECK(found == 4, "found %d of the 4 tensors looked at", found);
  host_free(&h);

  /* One file; and a model of one layer from the two-layer checkpoint (the
   * tensors it does not use are ignored). */
  const char *one = path_of("one.safetensors");
  CHECK(!dsv2_write_checkpoint(&small, one, 9, err, sizeof err), "%s", err);
  host_alloc(&h, &small);
  CHECK(!dsv2_load(&small, &one, 1, host_copy, &h, err, sizeof err), "%s", err);
  check_random(&small, &h, 9, "one file");
  host_free(&h);
  Dsv2Config first = small;
  first.layers = 1;
  host_alloc(&h, &small);
  CHECK(!dsv2_load(&first, &one, 1, host_copy, &h, err, sizeof err), "%s", err);
  check_random(&first, &h, 9, "the first layer");
  host_free(&h);
}

/* The checkpoint re-encoded as F32 loads to the same bf16; as F16 (which
 * loses the smallest values), to each F32 value rounded to F16 and back. */
static void test_convert(void) {
  const char *good = path_of("convert.safetensors");
  char err[512];
  CHECK(!dsv2_write_checkpoint(&small, good, 11, err, sizeof err), "%s", err);
  StFile f;
  CHECK(!st_open(&f, good, err, sizeof err), "%s", err);
  Entry *e = calloc(f.ntensors, sizeof *e);
  void **data = calloc(f.ntensors, sizeof *data);
  if (!e || !data)
    exit(2);
  size_t n = entries_of(&f, e);
  Host h32;
  for (int f16 = 0; f16 < 2; f16++) {
    for (size_t i = 0; i < n; i++) {
      size_t elems = (f.tensors[i].end - f.tensors[i].begin) / 2;
      const unsigned char *raw = f.data + f.tensors[i].begin;
      unsigned char *out = malloc(elems * (f16 ? 2 : 4));
      if (!out)
        exit(2);
      for (size_t j = 0; j < elems; j++) {
        float v = dsv2_float_from_bf16((uint16_t)(raw[2 * j] | raw[2 * j + 1] << 8));
        if (f16) {
          uint16_t hv = f16_from_float(v);
          memcpy(out + 2 * j, &hv, 2);
        } else {
          memcpy(out + 4 * j, &v, 4);
        }
      }
      free(data[i]);
      data[i] = out;
      e[i].data = out;
      e[i].bytes = elems * (f16 ? 2 : 4);
      snprintf(e[i].dtype, sizeof e[i].dtype, f16 ? "F16" : "F32");
    }
    const char *p = path_of(f16 ? "f16.safetensors" : "f32.safetensors");
    write_entries(p, e, n);
    Host h;
    host_alloc(&h, &small);
    CHECK(!dsv2_load(&small, &p, 1, host_copy, &h, err, sizeof err), "%s", err);
    if (!f16) {
      check_random(&small, &h, 11, "from F32");
      h32 = h;
      continue;
    }
    size_t bad = 0;
    for (int b = 0; b < DSV2_NBUFFERS; b++)
      for (size_t i = 0; i < dsv2_buffer_elems(&small, (Dsv2BufferId)b); i++) {
        uint16_t want = dsv2_bf16_from_float(
            float_from_f16(f16_from_float(dsv2_float_from_bf16(h32.buf[b][i]))));
        if (h.buf[b][i] != want && bad++ == 0)
          CHECK(0, "from F16: %s[%zu] is 0x%04x, expected 0x%04x",
                dsv2_buffer_name((Dsv2BufferId)b), i, h.buf[b][i], want);
      }
    host_free(&h);
    host_free(&h32);
  }
  for (size_t i = 0; i < n; i++)
    free(data[i]);
  free(data);
  free(e);
  st_close(&f);
}

/* Every kind of bad checkpoint. */
static void test_refused(void) {
  const char *good = path_of("good.safetensors");
  char err[512];
  CHECK(!dsv2_write_checkpoint(&small, good, 5, err, sizeof err), "%s", err);
  StFile f;
  CHECK(!st_open(&f, good, err, sizeof err), "%s", err);
  Entry *e = calloc(f.ntensors + 1, sizeof *e);
  if (!e)
    exit(2);
  size_t n = entries_of(&f, e);
  const char *bad = path_of("bad.safetensors");
  const char *kv_b = "model.layers.1.self_attn.kv_b_proj.weight";
  size_t k = find_entry(e, n, kv_b);
  Entry saved = e[k];

  /* missing */
  e[k] = e[n - 1];
  write_entries(bad, e, n - 1);
  e[k] = saved;
  expect_refused(&bad, 1, "missing", bad, "missing tensor", kv_b, "bf16 [28, 16]", NULL);

  /* wrong shape */
  e[k].shape[0] -= 1;
  e[k].bytes -= 2 * (size_t)e[k].shape[1];
  write_entries(bad, e, n);
  e[k] = saved;
  expect_refused(&bad, 1, "shape", bad, kv_b, "shape [27, 16], expected [28, 16]", NULL);

  /* wrong dtype */
  snprintf(e[k].dtype, sizeof e[k].dtype, "I16");
  write_entries(bad, e, n);
  e[k] = saved;
  expect_refused(&bad, 1, "dtype", bad, kv_b, "dtype I16, expected BF16", NULL);

  /* a dtype that safetensors does not have */
  snprintf(e[k].dtype, sizeof e[k].dtype, "BF17");
  write_entries(bad, e, n);
  e[k] = saved;
  expect_refused(&bad, 1, "unknown dtype", bad, "unknown dtype \"BF17\"", NULL);

  /* in two files */
  const char *second = path_of("second.safetensors");
  write_entries(second, &e[k], 1);
  const char *both[2] = {good, second};
  expect_refused(both, 2, "duplicate", second, good, kv_b, "a tensor must be in one file", NULL);

  /* one file named twice, by one name or by two */
  const char *twice[3] = {good, second, good};
  expect_refused(twice, 3, "named twice", good, "is named twice", NULL);
  char err2[512];
  CHECK(dsv2_load(&small, twice, 3, NULL, NULL, err2, sizeof err2) == 1 && !strstr(err2, "also in"),
        "named twice: \"%s\" speaks of its tensors", err2);
  const char *again[2] = {good, path_of("./good.safetensors")};
  expect_refused(again, 2, "one file by two names", again[0], again[1], "the same file", NULL);

  /* the data cut short */
  write_entries(bad, e, n);
  if (truncate(bad, 8 + 100) != 0)
    exit(2); /* inside the header */
  expect_refused(&bad, 1, "truncated header", bad, "truncated: the header length", NULL);
  write_entries(bad, e, n);
  {
    FILE *t = fopen(bad, "rb");
    if (!t || fseek(t, 0, SEEK_END) != 0)
      exit(2);
    long size = ftell(t);
    fclose(t);
    if (truncate(bad, size - 3) != 0)
      exit(2);
  }
  expect_refused(&bad, 1, "truncated data", bad, "past the end of the data", "truncated", NULL);
  if (truncate(bad, 5) != 0)
    exit(2);
  expect_refused(&bad, 1, "shorter than 8 bytes", bad, "truncated: 5 bytes", NULL);

  /* offsets that disagree with the shape, and that overlap */
  e[k].bytes -= 2;
  write_entries(bad, e, n);
  e[k] = saved;
  expect_refused(&bad, 1, "size", bad, kv_b, "hold 894 bytes", "need 896", NULL);

  /* a file that cannot be opened */
  const char *absent = path_of("absent.safetensors");
  expect_refused(&absent, 1, "absent", absent, "cannot open", NULL);
  expect_refused(NULL, 0, "no files", "no checkpoint files", NULL);

  /* bad headers, each with what the message says */
  static const struct {
    const char *header, *message;
  } headers[] = {
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]},}",
       "header byte 62: expected a string"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}",
       "expected ',' or '}', found the end"},
      {"[]", "header byte 0: expected '{', found '['"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1.5], \"data_offsets\": [0, 2]}}",
       "expected an integer, found a fraction"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [-1], \"data_offsets\": [0, 2]}}",
       "expected a non-negative integer"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [01], \"data_offsets\": [0, 2]}}", "leading zero"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2, 4]}}",
       "data_offsets has 3 entries, not 2"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [2, 0]}}",
       "end before they begin"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1]}}", "tensor \"a\" has no data_offsets"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"shape\": [1], \"data_offsets\": [0, 2]}}",
       "\"shape\" given twice"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2], \"x\": 1}}",
       "unknown key \"x\""},
      {"{\"a\\q\": {}}", "unknown escape '\\q'"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}} x",
       "text after the header's object"},
      {"{\"a", "unterminated string"},
      {"{\"\\ud800\": {}}", "a high surrogate \\ud800 without a low one"},
      {"{\"__metadata__\": {\"format\": 1}}", "__metadata__'s values must be strings"},
      {"{\"__metadata__\": {\"format\": \"pt\", \"format\": \"np\"}}",
       "header byte 34: __metadata__: \"format\" given twice"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}, "
       "\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [2, 4]}}",
       "tensor a is in the header twice"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [2], \"data_offsets\": [0, 4]}, "
       "\"b\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [2, 4]}}",
       "tensors a [0, 4] and b [2, 4] overlap"},
      /* bytes of the data (8 of them here) that no tensor holds: after the
       * last, before the first, between two, and with no tensor at all */
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}}",
       "bytes [2, 8] of the data, after the last tensor, a, belong to no tensor"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [6, 8]}}",
       "bytes [0, 6] of the data, before tensor a, belong to no tensor"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}, "
       "\"z\": {\"dtype\": \"BF16\", \"shape\": [0], \"data_offsets\": [2, 2]}, "
       "\"b\": {\"dtype\": \"BF16\", \"shape\": [2], \"data_offsets\": [4, 8]}}",
       "bytes [2, 4] of the data, before tensor b, belong to no tensor"},
      {"{\"__metadata__\": {\"format\": \"pt\"}}", "the header has no tensor, and 8 bytes"},
      {"{\"a\": {\"dtype\": \"BF16\", \"shape\": [9999999999, 9999999999, 9999999999], "
       "\"data_offsets\": [0, 2]}}",
       "need more than 18446744073709551615"},
      {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4611686018427387904, 2], "
       "\"data_offsets\": [0, 2]}}",
       "need more than 18446744073709551615"},
  };
  static const unsigned char data[8];
  for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
    Entry d = {.data = data, .bytes = sizeof data};
    write_raw(bad, headers[i].header, strlen(headers[i].header), &d, 1);
    char name[32];
    snprintf(name, sizeof name, "header %zu", i);
    expect_refused(&bad, 1, name, bad, headers[i].message, NULL);
  }
  /* Every valid escape decodes. */
  const char *escapes =
      "{\"__metadata__\": {\"k\\n\": \"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\r\\t\"}, "
      "\"\\u0041\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}}";
  Entry d = {.data = data, .bytes = 2};
  write_raw(bad, escapes, strlen(escapes), &d, 1);
  StFile g;
  if (st_open(&g, bad, err, sizeof err) == 0) {
    CHECK(g.ntensors == 1 && !strcmp(g.tensors[0].name, "A"), "escapes: the name");
    st_close(&g);
  } else {
    CHECK(0, "escapes: %s", err);
  }
  free(e);
  st_close(&f);
}

static int host_copy_refused(Dsv2BufferId dst, size_t offset, const void *src, size_t bytes,
                             void *ctx) {
  (void)dst, (void)offset, (void)src, (void)bytes, (void)ctx;
  return 1; /* a refused checkpoint copies nothing */
}

/* Headers whose bytes are not text: each refused with the header byte it
 * failed at and a message that neither stops at a NUL nor passes a raw byte
 * on; and names of valid UTF-8 that are not ASCII, accepted as they are. */
static void test_bytes(void) {
  const char *bad = path_of("bytes.safetensors");
#define TENSOR_A "\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}}"
  static const struct {
    const char *header;
    size_t len;
    const char *message;
  } headers[] = {
#define CASE(text, message) {text, sizeof text - 1, message}
      CASE("\0\0\0\0\0\0\0\0", "header byte 0: expected '{', found byte 0x00"),
      CASE("{\"a\"\x01", "header byte 4: expected ':', found byte 0x01"),
      CASE("\xef\xbb\xbf{}", "header byte 0: expected '{', found byte 0xef"),
      CASE("{\"\\u12\xff" TENSOR_A, "byte 0xff is not a hexadecimal digit"),
      CASE("{\"\\\xc3\xa9" TENSOR_A, "unknown escape: a backslash, then byte 0xc3"),
      /* not UTF-8: a stray continuation byte, Latin-1, a sequence cut short
       * by the quote, overlong forms, a surrogate, past U+10FFFF */
      CASE("{\"a\x80" TENSOR_A, "header byte 3: byte 0x80 is not valid UTF-8 in a string"),
      CASE("{\"caf\xe9" TENSOR_A, "header byte 5: byte 0xe9 is not valid UTF-8"),
      CASE("{\"a\xe2\x82" TENSOR_A, "header byte 3: byte 0xe2 is not valid UTF-8"),
      CASE("{\"\xc0\xaf" TENSOR_A, "header byte 2: byte 0xc0 is not valid UTF-8"),
      CASE("{\"\xe0\x80\xaf" TENSOR_A, "byte 0xe0 is not valid UTF-8"),
      CASE("{\"\xed\xa0\x80" TENSOR_A, "byte 0xed is not valid UTF-8"),
      CASE("{\"\xf4\x90\x80\x80" TENSOR_A, "byte 0xf4 is not valid UTF-8"),
      CASE("{\"\xff" TENSOR_A, "byte 0xff is not valid UTF-8"),
      CASE("{\"__metadata__\": {\"k\": \"\xfe\"}}", "byte 0xfe is not valid UTF-8"),
      /* control characters that escapes put in a name, in the messages
       * that name the tensor: spelt as the header spells them */
      CASE("{\"a\\u001b[2Jb\": {}}", "tensor \"a\\u001b[2Jb\" has no dtype"),
      CASE("{\"\\n\\t\\u007f" TENSOR_A, "after the last tensor, \\u000a\\u0009\\u007f, belong"),
#undef CASE
  };
  static const unsigned char data[8];
  for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
    Entry d = {.data = data, .bytes = sizeof data};
    write_raw(bad, headers[i].header, headers[i].len, &d, 1);
    char name[32], err[512];
    snprintf(name, sizeof name, "bytes %zu", i);
    StFile f;
    err[0] = 0;
    if (st_open(&f, bad, err, sizeof err) == 0) {
      CHECK(0, "%s: opened", name);
      st_close(&f);
      continue;
    }
    CHECK(strstr(err, headers[i].message), "%s: the message \"%s\" lacks \"%s\"", name, err,
          headers[i].message);
    for (const unsigned char *c = (const unsigned char *)err; *c; c++)
      CHECK(*c >= 0x20 && *c < 0x7f, "%s: byte 0x%02x in the message \"%s\"", name, *c, err);
  }
  /* A name with a line break in two files: the loader's message too. */
  const char *twice =
      "{\"x\\ny\": {\"dtype\": \"BF16\", \"shape\": [1], \"data_offsets\": [0, 2]}}";
  const char *both[2] = {path_of("bytes-a.safetensors"), path_of("bytes-b.safetensors")};
  for (int i = 0; i < 2; i++) {
    Entry d = {.data = data, .bytes = 2};
    write_raw(both[i], twice, strlen(twice), &d, 1);
  }
  {
    char err[512] = "";
    Dsv2Config c = small;
    CHECK(dsv2_load(&c, both, 2, host_copy_refused, NULL, err, sizeof err) == 1 &&
              strstr(err, "tensor x\\u000ay is also in"),
          "a name in two files: \"%s\"", err);
    for (const unsigned char *p = (const unsigned char *)err; *p; p++)
      CHECK(*p >= 0x20 && *p < 0x7f, "a name in two files: byte 0x%02x in \"%s\"", *p, err);
  }
  /* é, € and an emoji, raw and as escapes: the same names. */
  const char *good = "{\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" TENSOR_A;
  const char *escaped = "{\"\\u00e9\\u20ac\\ud83d\\ude00" TENSOR_A;
  const char *texts[2] = {good, escaped};
  for (int i = 0; i < 2; i++) {
    Entry d = {.data = data, .bytes = 2};
    write_raw(bad, texts[i], strlen(texts[i]), &d, 1);
    StFile f;
    char err[512];
    if (st_open(&f, bad, err, sizeof err) == 0) {
      CHECK(f.ntensors == 1 && !strcmp(f.tensors[0].name, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
            "UTF-8 name %d: \"%s\"", i, f.ntensors ? f.tensors[0].name : "");
      st_close(&f);
    } else {
      CHECK(0, "UTF-8 name %d: %s", i, err);
    }
  }
#undef TENSOR_A
}

/* Every prefix of a small checkpoint, and 1,500 copies of it with a few
 * bytes of the header changed at random: each is loaded or refused with a
 * message, never read out of bounds (valgrind and the sanitizers watch). */
static void test_damaged(void) {
  Dsv2Config one = small;
  one.layers = 1;
  const char *good = path_of("damaged-good.safetensors"), *bad = path_of("damaged.safetensors");
  char err[512];
  CHECK(!dsv2_write_checkpoint(&one, good, 3, err, sizeof err), "%s", err);
  FILE *f = fopen(good, "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0)
    exit(2);
  long size = ftell(f);
  unsigned char *bytes = malloc((size_t)size), *copy = malloc((size_t)size);
  rewind(f);
  if (!bytes || !copy || fread(bytes, 1, (size_t)size, f) != (size_t)size)
    exit(2);
  fclose(f);
  size_t header = 8;
  for (int i = 7; i >= 0; i--)
    header = header << 8 | bytes[i];
  header = header > (size_t)size - 8 ? (size_t)size : header + 8;
  int loaded = 0, refused = 0;
  for (long len = 0; len < size; len += len < (long)header + 64 ? 1 : 997) {
    FILE *o = fopen(bad, "wb");
    if (!o || fwrite(bytes, 1, (size_t)len, o) != (size_t)len || fclose(o) != 0)
      exit(2);
    Host h;
    host_alloc(&h, &one);
    err[0] = 0;
    int rc = dsv2_load(&one, &bad, 1, host_copy, &h, err, sizeof err);
    CHECK(rc == 1 && err[0], "the first %ld bytes: rc %d, \"%s\"", len, rc, err);
    host_free(&h);
  }
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int i = 0; i < 1500; i++) {
    memcpy(copy, bytes, (size_t)size);
    for (int k = 0; k < 1 + i % 3; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      copy[x % header] = (unsigned char)(x >> 40);
    }
    FILE *o = fopen(bad, "wb");
    if (!o || fwrite(copy, 1, (size_t)size, o) != (size_t)size || fclose(o) != 0)
      exit(2);
    Host h;
    host_alloc(&h, &one);
    err[0] = 0;
    int rc = dsv2_load(&one, &bad, 1, host_copy, &h, err, sizeof err);
    CHECK(rc == 0 || (rc == 1 && err[0]), "damage %d: rc %d without a message", i, rc);
    loaded += rc == 0;
    refused += rc == 1;
    host_free(&h);
  }
  printf("  damaged headers: %d loaded, %d refused\n", loaded, refused);
  CHECK(refused > 1000, "only %d of 1500 damaged headers refused", refused);
  free(bytes);
  free(copy);
}

/* Sampled random weights at the real shape and the small one, for
 * test_reference.py: "buffer index bits" a line. */
/* A write that fails part way (past a file-size limit of 4 KB, so fwrite
 * fails with EFBIG) is refused with its message, leaves the older file at
 * its path as it was and no partial file beside it; with the limit gone the
 * same call writes a checkpoint that loads. */
static void test_write_fails(void) {
  const char *path = path_of("limited.safetensors");
  char partial[600], err[512], older[16] = {0};
  snprintf(partial, sizeof partial, "%s.partial", path);
  FILE *f = fopen(path, "wb");
  CHECK(f && fputs("older", f) >= 0 && fclose(f) == 0, "cannot write %s", path);
  struct rlimit was, lim;
  CHECK(getrlimit(RLIMIT_FSIZE, &was) == 0, "getrlimit");
  lim = was;
  lim.rlim_cur = 4096;
  void (*handler)(int) = signal(SIGXFSZ, SIG_IGN); /* fwrite fails instead of the signal */
  CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit");
  const int rc = dsv2_write_checkpoint(&small, path, 5, err, sizeof err);
  CHECK(setrlimit(RLIMIT_FSIZE, &was) == 0, "setrlimit back");
  signal(SIGXFSZ, handler);
  CHECK(rc == 1, "written past a 4 KB file-size limit");
  CHECK(rc != 1 || strstr(err, "cannot write"), "the message \"%s\" lacks \"cannot write\"", err);
  f = fopen(path, "rb");
  CHECK(f && fread(older, 1, sizeof older - 1, f) == 5 && !strcmp(older, "older"),
        "%s is not the older file after the failed write", path);
  if (f)
    fclose(f);
  CHECK(access(partial, F_OK) != 0, "%s left behind", partial);
  CHECK(!dsv2_write_checkpoint(&small, path, 5, err, sizeof err), "%s", err);
  Host h;
  host_alloc(&h, &small);
  CHECK(!dsv2_load(&small, &path, 1, host_copy, &h, err, sizeof err), "%s", err);
  check_random(&small, &h, 5, "written after the failed write");
  host_free(&h);
  CHECK(access(partial, F_OK) != 0, "%s left behind after a good write", partial);
}

static void print_sample(void) {
  const Dsv2Config configs[2] = {dsv2_lite(), small};
  for (int c = 0; c < 2; c++)
    for (int b = 0; b < DSV2_NBUFFERS; b++) {
      float scale, offset;
      dsv2_random_params(&configs[c], (Dsv2BufferId)b, &scale, &offset);
      size_t n = dsv2_buffer_elems(&configs[c], (Dsv2BufferId)b);
      if (!n)
        continue;
      size_t at[5] = {0, 1, n / 3, n - 1, n > ((size_t)1 << 32) ? ((size_t)1 << 32) + 5 : n / 2};
      for (int i = 0; i < 5; i++)
        printf("%s %d %zu %u\n", c ? "small" : "lite", b, at[i],
               dsv2_random_value(1234, (Dsv2BufferId)b, at[i], scale, offset));
    }
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--sample")) {
    print_sample();
    return 0;
  }
  if (argc == 5 && !strcmp(argv[1], "--write")) {
    const char *paths[2] = {argv[2], argv[3]};
    char err[512];
    if (dsv2_write_checkpoint_files(&small, paths, 2, (uint32_t)strtoul(argv[4], NULL, 10), err,
                                    sizeof err)) {
      fprintf(stderr, "test_weights: %s\n", err);
      return 1;
    }
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: test_weights DIR | --sample | --write A B SEED\n");
    return 2;
  }
  dir = argv[1];
  test_table();
  test_bf16();
  test_load();
  test_convert();
  test_refused();
  test_bytes();
  test_damaged();
  test_write_fails();
  if (failures) {
    fprintf(stderr, "test_weights: %d failures\n", failures);
    return 1;
  }
  printf("test_weights: all passed\n");
  return 0;
}
