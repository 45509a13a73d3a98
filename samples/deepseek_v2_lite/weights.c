/* weights.c: the buffers, the published tensors' places in them, the
 * checkpoint loader and writer, and the random weights' host formula. */
#include "weights.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "safetensors.h"
#include "weights_hash.h"

Dsv2Config dsv2_lite(void) {
  return (Dsv2Config){.vocab = 102400,
                      .hidden = 2048,
                      .layers = 27,
                      .dense_layers = 1,
                      .heads = 16,
                      .kv_lora_rank = 512,
                      .qk_nope = 128,
                      .qk_rope = 64,
                      .v_head = 128,
                      .ffn = 10944,
                      .experts = 64,
                      .expert_ffn = 1408,
                      .shared_ffn = 2 * 1408};
}

#define DSV2_BUFFER_NAME(id, name, layout, fields) name,
#define DSV2_BUFFER_LAYOUT(id, name, layout, fields) layout,
#define DSV2_BUFFER_FIELDS(id, name, layout, fields) fields,
static const char *const buffer_names[] = {DSV2_BUFFERS(DSV2_BUFFER_NAME)};
static const char *const buffer_layouts[] = {DSV2_BUFFERS(DSV2_BUFFER_LAYOUT)};
static const char *const buffer_fields[] = {DSV2_BUFFERS(DSV2_BUFFER_FIELDS)};

/* *bytes *= each of the n factors: 0, or 1 where that overflows a size_t. */
static int product(size_t *bytes, size_t n, const size_t *factors) {
  int over = 0;
  for (size_t i = 0; i < n; i++)
    over |= __builtin_mul_overflow(*bytes, factors[i], bytes);
  return over;
}
#define PRODUCT(...)                                                                               \
  product(bytes, sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t), (size_t[]){__VA_ARGS__})

/* Buffer b's bytes (2 an element, bf16) into *bytes: 0, or 1 where they
 * overflow a size_t (dsv2_check_config refuses such a config). */
static int buffer_bytes(const Dsv2Config *c, Dsv2BufferId b, size_t *bytes) {
  size_t L = (size_t)c->layers, Ld = (size_t)c->dense_layers, Lm = L - Ld;
  size_t H = (size_t)c->heads, D = (size_t)c->hidden, R = (size_t)c->kv_lora_rank;
  size_t N = (size_t)c->qk_nope, P = (size_t)c->qk_rope, V = (size_t)c->v_head;
  size_t E = (size_t)c->experts, F = (size_t)c->expert_ffn, S = (size_t)c->shared_ffn;
  size_t FD = (size_t)c->ffn, vocab = (size_t)c->vocab, rows;
  *bytes = 2;
  switch (b) {
  case DSV2_EMBED: return PRODUCT(vocab, D);
  case DSV2_ATTN_NORM: return PRODUCT(L, D);
  case DSV2_FFN_NORM: return PRODUCT(L, D);
  case DSV2_KV_NORM: return PRODUCT(L, R);
  case DSV2_FINAL_NORM: return PRODUCT(D);
  case DSV2_LM_HEAD: return PRODUCT(vocab, D);
  case DSV2_W_QKV: /* H * (N + P) + R + P rows (N + P and R + P fit: each was an int) */
    if (__builtin_mul_overflow(H, N + P, &rows) || __builtin_add_overflow(rows, R + P, &rows))
      return 1;
    return PRODUCT(L, rows, D);
  case DSV2_W_UK_T: return PRODUCT(L, H, R, N);
  case DSV2_W_UV: return PRODUCT(L, H, V, R);
  case DSV2_W_O: return PRODUCT(L, D, H, V);
  case DSV2_DENSE_GU: return PRODUCT(Ld, 2, FD, D);
  case DSV2_DENSE_DOWN: return PRODUCT(Ld, D, FD);
  case DSV2_ROUTER: return PRODUCT(Lm, E, D);
  case DSV2_EXP_GU: return PRODUCT(Lm, E, 2, F, D);
  case DSV2_EXP_DOWN: return PRODUCT(Lm, E, D, F);
  case DSV2_SH_GU: return PRODUCT(Lm, 2, S, D);
  case DSV2_SH_DOWN: return PRODUCT(Lm, D, S);
  case DSV2_NBUFFERS: break;
  }
  *bytes = 0;
  return 0;
}
#undef PRODUCT

/* The tensors of the published checkpoint for c, in *count: 3 globals, 7
 * attention tensors a layer, 3 a dense layer, and a router, 3 an expert and
 * 3 shared a layer of experts.  1 where that overflows a size_t.  A formula,
 * not a walk over the layers and experts, so that counting the table of an
 * absurd config takes no time (dsv2_tensors' count is this). */
static int tensor_count(const Dsv2Config *c, size_t *count) {
  size_t L = (size_t)c->layers, Ld = (size_t)c->dense_layers, moe;
  return __builtin_mul_overflow((size_t)c->experts, (size_t)3, &moe) ||
         __builtin_add_overflow(moe, (size_t)4, &moe) ||
         __builtin_mul_overflow(L - Ld, moe, &moe) ||
         __builtin_add_overflow(moe, 3 + 7 * L + 3 * Ld, count);
}

int dsv2_check_config(const Dsv2Config *c, char *err, size_t errlen) {
  const struct {
    const char *name;
    int value;
  } fields[] = {{"vocab", c->vocab},
                {"hidden", c->hidden},
                {"layers", c->layers},
                {"heads", c->heads},
                {"kv_lora_rank", c->kv_lora_rank},
                {"qk_nope", c->qk_nope},
                {"qk_rope", c->qk_rope},
                {"v_head", c->v_head},
                {"ffn", c->ffn},
                {"experts", c->experts},
                {"expert_ffn", c->expert_ffn},
                {"shared_ffn", c->shared_ffn}};
  for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
    if (fields[i].value <= 0) {
      snprintf(err, errlen, "config: %s is %d, and must be positive", fields[i].name,
               fields[i].value);
      return 1;
    }
  if (c->dense_layers < 0 || c->dense_layers > c->layers) {
    snprintf(err, errlen, "config: dense_layers is %d, and must be 0 to layers (%d)",
             c->dense_layers, c->layers);
    return 1;
  }
  /* Every buffer's bytes, all of them together, and the table of tensors
   * fit a size_t. */
  size_t total = 0, largest = 0;
  Dsv2BufferId big = DSV2_EMBED;
  for (int b = 0; b < DSV2_NBUFFERS; b++) {
    size_t bytes;
    if (buffer_bytes(c, (Dsv2BufferId)b, &bytes)) {
      snprintf(err, errlen,
               "config: %s are too large together: buffer %s (%s) would take more than "
               "%zu bytes",
               buffer_fields[b], dsv2_buffer_name((Dsv2BufferId)b),
               dsv2_buffer_layout((Dsv2BufferId)b), (size_t)SIZE_MAX);
      return 1;
    }
    if (bytes > largest)
      largest = bytes, big = (Dsv2BufferId)b;
    if (__builtin_add_overflow(total, bytes, &total)) {
      snprintf(err, errlen,
               "config: the buffers together would take more than %zu bytes (the largest, %s, "
               "%zu bytes: %s)",
               (size_t)SIZE_MAX, dsv2_buffer_name(big), largest, buffer_fields[big]);
      return 1;
    }
  }
  size_t count;
  if (tensor_count(c, &count) || __builtin_mul_overflow(count, sizeof(Dsv2Tensor), &count)) {
    snprintf(err, errlen,
             "config: layers, dense_layers and experts are too large together: the table of "
             "tensors would take more than %zu bytes",
             (size_t)SIZE_MAX);
    return 1;
  }
  return 0;
}

size_t dsv2_buffer_elems(const Dsv2Config *c, Dsv2BufferId b) {
  size_t bytes;
  return buffer_bytes(c, b, &bytes) ? 0 : bytes / 2;
}


const char *dsv2_buffer_name(Dsv2BufferId b) {
  return (unsigned)b < DSV2_NBUFFERS ? buffer_names[b] : "?";
}
const char *dsv2_buffer_layout(Dsv2BufferId b) {
  return (unsigned)b < DSV2_NBUFFERS ? buffer_layouts[b] : "?";
}

/* Adds one tensor to the table (or only counts it). */
static void add(Dsv2Tensor *out, size_t max, size_t *n, int layer, Dsv2Placement place,
                Dsv2BufferId buffer, size_t offset, int64_t rows, int64_t cols, const char *fmt,
                int a, int b) {
  if (out && *n < max) {
    Dsv2Tensor *t = &out[*n];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, fmt, a, b);
    t->ndim = cols ? 2 : 1;
    t->shape[0] = rows;
    t->shape[1] = cols;
    t->place = place;
    t->buffer = buffer;
    t->offset = offset;
    t->layer = layer;
  }
  (*n)++;
}

size_t dsv2_tensors(const Dsv2Config *c, Dsv2Tensor *out, size_t max) {
  size_t n = 0, total;
  if (tensor_count(c, &total))
    return SIZE_MAX;
  if (!out || max == 0)
    return total;
  size_t D = (size_t)c->hidden, R = (size_t)c->kv_lora_rank, H = (size_t)c->heads;
  size_t N = (size_t)c->qk_nope, P = (size_t)c->qk_rope, V = (size_t)c->v_head;
  size_t E = (size_t)c->experts, F = (size_t)c->expert_ffn, S = (size_t)c->shared_ffn;
  size_t FD = (size_t)c->ffn, qkv_rows = H * (N + P) + R + P;
#define ROWS DSV2_PLACE_ROWS
  add(out, max, &n, -1, ROWS, DSV2_EMBED, 0, c->vocab, c->hidden, "model.embed_tokens.weight", 0,
      0);
  for (int l = 0; l < c->layers && n < max; l++) {
    size_t L = (size_t)l;
    const char *pre = "model.layers.%d.";
    char f[96];
#define NAME(suffix) (snprintf(f, sizeof f, "%s%s", pre, suffix), f)
    add(out, max, &n, l, ROWS, DSV2_ATTN_NORM, L * D, c->hidden, 0, NAME("input_layernorm.weight"),
        l, 0);
    add(out, max, &n, l, ROWS, DSV2_W_QKV, L * qkv_rows * D, (int64_t)(H * (N + P)), c->hidden,
        NAME("self_attn.q_proj.weight"), l, 0);
    add(out, max, &n, l, ROWS, DSV2_W_QKV, (L * qkv_rows + H * (N + P)) * D, (int64_t)(R + P),
        c->hidden, NAME("self_attn.kv_a_proj_with_mqa.weight"), l, 0);
    add(out, max, &n, l, ROWS, DSV2_KV_NORM, L * R, c->kv_lora_rank, 0,
        NAME("self_attn.kv_a_layernorm.weight"), l, 0);
    add(out, max, &n, l, DSV2_PLACE_KV_B, DSV2_W_UK_T, 0, (int64_t)(H * (N + V)), c->kv_lora_rank,
        NAME("self_attn.kv_b_proj.weight"), l, 0);
    add(out, max, &n, l, ROWS, DSV2_W_O, L * D * H * V, c->hidden, (int64_t)(H * V),
        NAME("self_attn.o_proj.weight"), l, 0);
    add(out, max, &n, l, ROWS, DSV2_FFN_NORM, L * D, c->hidden, 0,
        NAME("post_attention_layernorm.weight"), l, 0);
    if (l < c->dense_layers) {
      add(out, max, &n, l, ROWS, DSV2_DENSE_GU, L * 2 * FD * D, c->ffn, c->hidden,
          NAME("mlp.gate_proj.weight"), l, 0);
      add(out, max, &n, l, ROWS, DSV2_DENSE_GU, (L * 2 + 1) * FD * D, c->ffn, c->hidden,
          NAME("mlp.up_proj.weight"), l, 0);
      add(out, max, &n, l, ROWS, DSV2_DENSE_DOWN, L * D * FD, c->hidden, c->ffn,
          NAME("mlp.down_proj.weight"), l, 0);
      continue;
    }
    size_t m = (size_t)(l - c->dense_layers);
    add(out, max, &n, l, ROWS, DSV2_ROUTER, m * E * D, c->experts, c->hidden,
        NAME("mlp.gate.weight"), l, 0);
    for (int e = 0; e < c->experts && n < max; e++) {
      size_t me = m * E + (size_t)e;
      add(out, max, &n, l, ROWS, DSV2_EXP_GU, me * 2 * F * D, c->expert_ffn, c->hidden,
          "model.layers.%d.mlp.experts.%d.gate_proj.weight", l, e);
      add(out, max, &n, l, ROWS, DSV2_EXP_GU, (me * 2 + 1) * F * D, c->expert_ffn, c->hidden,
          "model.layers.%d.mlp.experts.%d.up_proj.weight", l, e);
      add(out, max, &n, l, ROWS, DSV2_EXP_DOWN, me * D * F, c->hidden, c->expert_ffn,
          "model.layers.%d.mlp.experts.%d.down_proj.weight", l, e);
    }
    add(out, max, &n, l, ROWS, DSV2_SH_GU, m * 2 * S * D, c->shared_ffn, c->hidden,
        NAME("mlp.shared_experts.gate_proj.weight"), l, 0);
    add(out, max, &n, l, ROWS, DSV2_SH_GU, (m * 2 + 1) * S * D, c->shared_ffn, c->hidden,
        NAME("mlp.shared_experts.up_proj.weight"), l, 0);
    add(out, max, &n, l, ROWS, DSV2_SH_DOWN, m * D * S, c->hidden, c->shared_ffn,
        NAME("mlp.shared_experts.down_proj.weight"), l, 0);
#undef NAME
  }
  add(out, max, &n, -1, ROWS, DSV2_FINAL_NORM, 0, c->hidden, 0, "model.norm.weight", 0, 0);
  add(out, max, &n, -1, ROWS, DSV2_LM_HEAD, 0, c->vocab, c->hidden, "lm_head.weight", 0, 0);
#undef ROWS
  return total;
}

/* Where element j (in the published row-major order) of tensor t lands:
 * its buffer and element index there. */
static void place_element(const Dsv2Config *c, const Dsv2Tensor *t, size_t j, Dsv2BufferId *b,
                          size_t *i) {
  if (t->place == DSV2_PLACE_ROWS) {
    *b = t->buffer;
    *i = t->offset + j;
    return;
  }
  size_t R = (size_t)c->kv_lora_rank, N = (size_t)c->qk_nope, V = (size_t)c->v_head;
  size_t lh0 = (size_t)t->layer * (size_t)c->heads;
  size_t row = j / R, col = j % R, h = row / (N + V), k = row % (N + V);
  if (k < N) {
    *b = DSV2_W_UK_T;
    *i = ((lh0 + h) * R + col) * N + k;
  } else {
    *b = DSV2_W_UV;
    *i = ((lh0 + h) * V + (k - N)) * R + col;
  }
}

/* ---- bf16 ---- */

uint16_t dsv2_bf16_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)(u >> 16 | 0x40); /* quiet NaN */
  u += 0x7fffu + (u >> 16 & 1);
  return (uint16_t)(u >> 16);
}

float dsv2_float_from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static float float_from_f16(uint16_t h) {
  int exp = h >> 10 & 0x1f, man = h & 0x3ff;
  float v = exp == 0    ? ldexpf((float)man, -24)
            : exp == 31 ? (man ? NAN : INFINITY)
                        : ldexpf((float)(man | 0x400), exp - 25);
  return h & 0x8000 ? -v : v;
}

/* ---- the random weights' host formula ---- */

void dsv2_random_params(const Dsv2Config *c, Dsv2BufferId b, float *scale, float *offset) {
  double k = 1, gain = 1;
  *offset = 0;
  switch (b) {
  case DSV2_EMBED: k = 1; break;
  case DSV2_ATTN_NORM:
  case DSV2_FFN_NORM:
  case DSV2_KV_NORM:
  case DSV2_FINAL_NORM:
    *scale = 0.1f;
    *offset = 1;
    return;
  case DSV2_LM_HEAD:
  case DSV2_W_QKV:
  case DSV2_DENSE_GU:
  case DSV2_ROUTER:
  case DSV2_EXP_GU:
  case DSV2_SH_GU: k = c->hidden; break;
  case DSV2_W_UK_T:
  case DSV2_W_UV: k = c->kv_lora_rank; break;
  case DSV2_W_O:
    k = (double)c->heads * c->v_head;
    gain = 0.5;
    break;
  case DSV2_DENSE_DOWN:
    k = c->ffn;
    gain = 0.5;
    break;
  case DSV2_EXP_DOWN:
    k = c->expert_ffn;
    gain = 0.5;
    break;
  case DSV2_SH_DOWN:
    k = c->shared_ffn;
    gain = 0.5;
    break;
  case DSV2_NBUFFERS: break;
  }
  *scale = (float)(gain * sqrt(3.0 / k));
}

uint16_t dsv2_random_value(uint32_t seed, Dsv2BufferId b, uint64_t i, float scale, float offset) {
  uint32_t bits = dsv2_bits24(dsv2_buffer_key(seed, (int)b), i);
  return dsv2_bf16_from_float(dsv2_random_float(bits, scale, offset));
}

/* ---- loading ---- */

/* A tensor of one of the files, for finding by name. */
typedef struct Found {
  const char *name;
  int file;
  const StTensor *tensor;
} Found;

static int by_found_name(const void *a, const void *b) {
  return strcmp(((const Found *)a)->name, ((const Found *)b)->name);
}

static void shape_text(char *s, size_t n, int ndim, const int64_t *shape) {
  size_t used = (size_t)snprintf(s, n, "[");
  for (int d = 0; d < ndim && used < n; d++)
    used += (size_t)snprintf(s + used, n - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
  if (used < n)
    snprintf(s + used, n - used, "]");
}

/* The staging of converted or rearranged elements (one tensor at most). */
typedef struct Scratch {
  uint16_t *p;
  size_t cap;
} Scratch;

static uint16_t *scratch(Scratch *s, size_t elems) {
  if (elems > s->cap) {
    uint16_t *p = realloc(s->p, elems * sizeof *p);
    if (!p)
      return NULL;
    s->p = p;
    s->cap = elems;
  }
  return s->p;
}

/* Copies one found tensor into place. */
static int load_tensor(const Dsv2Config *c, const Dsv2Tensor *t, const StFile *f,
                       const StTensor *st, Dsv2CopyFn copy, void *ctx, Scratch *s, char *err,
                       size_t errlen) {
  size_t elems = (size_t)t->shape[0] * (size_t)(t->ndim == 2 ? t->shape[1] : 1);
  const unsigned char *src = f->data + st->begin;
  const unsigned char *bf = src; /* maybe not 2-aligned: read by memcpy */
  if (st->dtype != ST_BF16) {
    uint16_t *out = scratch(s, elems);
    if (!out) {
      snprintf(err, errlen, "%s: %s: out of memory converting %s to bf16", f->path, t->name,
               st->dtype_name);
      return 1;
    }
    for (size_t j = 0; j < elems; j++) {
      float v;
      if (st->dtype == ST_F32) {
        memcpy(&v, src + 4 * j, 4);
      } else {
        uint16_t h;
        memcpy(&h, src + 2 * j, 2);
        v = float_from_f16(h);
      }
      out[j] = dsv2_bf16_from_float(v);
    }
    bf = (const unsigned char *)out;
  }
  if (t->place == DSV2_PLACE_ROWS) {
    if (copy(t->buffer, t->offset, bf, elems * 2, ctx))
      goto copy_failed;
    return 0;
  }
  /* kv_b_proj, head by head: the key rows [N][R] transposed to [R][N], the
   * value rows [V][R] as they are. */
  size_t R = (size_t)c->kv_lora_rank, N = (size_t)c->qk_nope, V = (size_t)c->v_head;
  uint16_t *keys = malloc(R * N * sizeof *keys);
  if (!keys) {
    snprintf(err, errlen, "%s: %s: out of memory", f->path, t->name);
    return 1;
  }
  for (size_t h = 0; h < (size_t)c->heads; h++) {
    const unsigned char *head = bf + 2 * h * (N + V) * R;
    size_t lh = (size_t)t->layer * (size_t)c->heads + h;
    for (size_t n = 0; n < N; n++)
      for (size_t r = 0; r < R; r++)
        memcpy(&keys[r * N + n], head + 2 * (n * R + r), 2);
    if (copy(DSV2_W_UK_T, lh * R * N, keys, R * N * 2, ctx) ||
        copy(DSV2_W_UV, lh * V * R, head + 2 * N * R, V * R * 2, ctx)) {
      free(keys);
      goto copy_failed;
    }
  }
  free(keys);
  return 0;
copy_failed:
  snprintf(err, errlen, "%s: %s: the copy failed", f->path, t->name);
  return 1;
}

/* 1, with a message, when a checkpoint file is named twice, by one name
 * or by two (a file's tensors would each be in two files). */
static int named_twice(const char *const *paths, int npaths, char *err, size_t errlen) {
  for (int i = 0; i < npaths; i++)
    for (int j = 0; j < i; j++) {
      struct stat a, b;
      if (!strcmp(paths[i], paths[j])) {
        snprintf(err, errlen, "%s is named twice (files %d and %d): name each file once", paths[i],
                 j + 1, i + 1);
        return 1;
      }
      if (!stat(paths[i], &a) && !stat(paths[j], &b) && a.st_dev == b.st_dev &&
          a.st_ino == b.st_ino) {
        snprintf(err, errlen, "%s and %s are the same file (files %d and %d): name each file once",
                 paths[j], paths[i], j + 1, i + 1);
        return 1;
      }
    }
  return 0;
}

int dsv2_load(const Dsv2Config *c, const char *const *paths, int npaths, Dsv2CopyFn copy, void *ctx,
              char *err, size_t errlen) {
  if (dsv2_check_config(c, err, errlen))
    return 1;
  if (npaths <= 0) {
    snprintf(err, errlen, "no checkpoint files given");
    return 1;
  }
  if (named_twice(paths, npaths, err, errlen)) {
    st_message_text(err, errlen);
    return 1;
  }
  int rc = 1;
  size_t ntensors = dsv2_tensors(c, NULL, 0), nfound = 0;
  StFile *files = calloc((size_t)npaths, sizeof *files);
  Dsv2Tensor *want = malloc(ntensors * sizeof *want);
  Found *found = NULL;
  Scratch s = {NULL, 0};
  int opened = 0;
  if (!files || !want) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  dsv2_tensors(c, want, ntensors);
  for (; opened < npaths; opened++) {
    if (st_open(&files[opened], paths[opened], err, errlen))
      goto done;
    nfound += files[opened].ntensors;
  }
  found = malloc((nfound ? nfound : 1) * sizeof *found);
  if (!found) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  nfound = 0;
  for (int i = 0; i < npaths; i++)
    for (size_t j = 0; j < files[i].ntensors; j++)
      found[nfound++] = (Found){files[i].tensors[j].name, i, &files[i].tensors[j]};
  qsort(found, nfound, sizeof *found, by_found_name);
  for (size_t j = 1; j < nfound; j++)
    if (!strcmp(found[j - 1].name, found[j].name)) {
      int a = found[j - 1].file < found[j].file ? found[j - 1].file : found[j].file;
      int b = found[j - 1].file < found[j].file ? found[j].file : found[j - 1].file;
      snprintf(err, errlen, "%s: tensor %s is also in %s: a tensor must be in one file", paths[b],
               found[j].name, paths[a]);
      goto done;
    }
  /* Every tensor checked before any is copied, so that a bad checkpoint
   * leaves the buffers as they were. */
  for (size_t k = 0; k < ntensors; k++) {
    const Dsv2Tensor *t = &want[k];
    char expected[64], got[64];
    shape_text(expected, sizeof expected, t->ndim, t->shape);
    Found key = {t->name, 0, NULL};
    const Found *hit = nfound ? bsearch(&key, found, nfound, sizeof *found, by_found_name) : NULL;
    if (!hit) {
      snprintf(err, errlen, "%s%s: missing tensor %s (bf16 %s)", paths[0],
               npaths > 1 ? " and the other files" : "", t->name, expected);
      goto done;
    }
    const StTensor *st = hit->tensor;
    if (st->dtype != ST_BF16 && st->dtype != ST_F32 && st->dtype != ST_F16) {
      snprintf(err, errlen, "%s: tensor %s: dtype %s, expected BF16 (or F32 or F16)",
               paths[hit->file], t->name, st->dtype_name);
      goto done;
    }
    int same = st->ndim == t->ndim;
    for (int d = 0; same && d < t->ndim; d++)
      same = st->shape[d] == t->shape[d];
    if (!same) {
      shape_text(got, sizeof got, st->ndim, st->shape);
      snprintf(err, errlen, "%s: tensor %s: shape %s, expected %s", paths[hit->file], t->name, got,
               expected);
      goto done;
    }
  }
  for (size_t k = 0; k < ntensors; k++) {
    Found key = {want[k].name, 0, NULL};
    const Found *hit = bsearch(&key, found, nfound, sizeof *found, by_found_name);
    if (load_tensor(c, &want[k], &files[hit->file], hit->tensor, copy, ctx, &s, err, errlen))
      goto done;
  }
  rc = 0;
done:
  if (rc)
    st_message_text(err, errlen); /* a name from a file may be in it */
  for (int i = 0; i < opened; i++)
    st_close(&files[i]);
  free(files);
  free(want);
  free(found);
  free(s.p);
  return rc;
}

/* ---- writing ---- */

/* Which file of `npaths` a tensor goes to: the globals with the first
 * layer's and the last, the layers spread evenly between. */
static int file_of(const Dsv2Config *c, const Dsv2Tensor *t, int npaths) {
  int layer = t->layer >= 0 ? t->layer : t->buffer == DSV2_EMBED ? 0 : c->layers - 1;
  return (int)((long long)layer * npaths / c->layers);
}

static int write_file(const Dsv2Config *c, const Dsv2Tensor *want, size_t ntensors, int which,
                      int npaths, const char *path, uint32_t seed, char *err, size_t errlen) {
  size_t cap = 256, len = 0;
  char *header = malloc(cap);
  uint16_t *row = NULL;
  char *partial = NULL;
  FILE *out = NULL;
  int rc = 1;
  float scale[DSV2_NBUFFERS], offset[DSV2_NBUFFERS];
  for (int b = 0; b < DSV2_NBUFFERS; b++)
    dsv2_random_params(c, (Dsv2BufferId)b, &scale[b], &offset[b]);
  if (!header)
    goto oom;
  uint64_t at = 0;
  len = (size_t)snprintf(header, cap, "{\"__metadata__\":{\"format\":\"pt\"}");
  for (size_t k = 0; k < ntensors; k++) {
    const Dsv2Tensor *t = &want[k];
    if (file_of(c, t, npaths) != which)
      continue;
    uint64_t bytes = 2 * (uint64_t)t->shape[0] * (uint64_t)(t->ndim == 2 ? t->shape[1] : 1);
    for (;;) {
      char dims[64];
      shape_text(dims, sizeof dims, t->ndim, t->shape);
      int n = snprintf(header + len, cap - len,
                       ",\"%s\":{\"dtype\":\"BF16\",\"shape\":%s,\"data_offsets\":[%llu,%llu]}",
                       t->name, dims, (unsigned long long)at, (unsigned long long)(at + bytes));
      if (n >= 0 && (size_t)n < cap - len) {
        len += (size_t)n;
        break;
      }
      char *grown = realloc(header, 2 * cap);
      if (!grown)
        goto oom;
      header = grown;
      cap *= 2;
    }
    at += bytes;
  }
  if (len + 8 > cap) {
    char *grown = realloc(header, len + 8);
    if (!grown)
      goto oom;
    header = grown;
  }
  header[len++] = '}';
  while (len % 8)
    header[len++] = ' ';
  /* Written whole under another name, then renamed over path: a failed
   * write leaves no half file, and an older file at path as it was. */
  size_t plen = strlen(path) + sizeof ".partial";
  partial = malloc(plen);
  if (!partial)
    goto oom;
  snprintf(partial, plen, "%s.partial", path);
  out = fopen(partial, "wb");
  if (!out) {
    snprintf(err, errlen, "%s: cannot write: %s", partial, strerror(errno));
    goto done;
  }
  unsigned char size[8];
  for (int i = 0; i < 8; i++)
    size[i] = (unsigned char)((uint64_t)len >> (8 * i));
  int ok = fwrite(size, 1, 8, out) == 8 && fwrite(header, 1, len, out) == len;
  size_t row_cap = 0;
  for (size_t k = 0; ok && k < ntensors; k++) {
    const Dsv2Tensor *t = &want[k];
    if (file_of(c, t, npaths) != which)
      continue;
    size_t cols = (size_t)(t->ndim == 2 ? t->shape[1] : t->shape[0]);
    size_t rows = t->ndim == 2 ? (size_t)t->shape[0] : 1;
    if (cols > row_cap) {
      uint16_t *grown = realloc(row, cols * sizeof *row);
      if (!grown)
        goto oom;
      row = grown;
      row_cap = cols;
    }
    for (size_t r = 0; ok && r < rows; r++) {
      for (size_t j = 0; j < cols; j++) {
        Dsv2BufferId b;
        size_t i;
        place_element(c, t, r * cols + j, &b, &i);
        uint16_t v = dsv2_random_value(seed, b, i, scale[b], offset[b]);
        unsigned char le[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
        memcpy(&row[j], le, 2);
      }
      ok = fwrite(row, 2, cols, out) == cols;
    }
  }
  if (!ok || ferror(out)) {
    snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    goto done;
  }
  rc = 0;
  goto done;
oom:
  snprintf(err, errlen, "%s: out of memory", path);
done:
  if (out && fclose(out) != 0 && rc == 0) {
    snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    rc = 1;
  }
  if (out && rc == 0 && rename(partial, path) != 0) {
    snprintf(err, errlen, "%s: cannot rename %s to it: %s", path, partial, strerror(errno));
    rc = 1;
  }
  if (out && rc != 0)
    remove(partial);
  free(partial);
  free(header);
  free(row);
  return rc;
}

int dsv2_write_checkpoint_files(const Dsv2Config *c, const char *const *paths, int npaths,
                                uint32_t seed, char *err, size_t errlen) {
  if (dsv2_check_config(c, err, errlen))
    return 1;
  if (npaths <= 0) {
    snprintf(err, errlen, "no checkpoint files given");
    return 1;
  }
  size_t ntensors = dsv2_tensors(c, NULL, 0);
  Dsv2Tensor *want = malloc(ntensors * sizeof *want);
  if (!want) {
    snprintf(err, errlen, "out of memory");
    return 1;
  }
  dsv2_tensors(c, want, ntensors);
  int rc = 0;
  for (int i = 0; i < npaths && !rc; i++)
    rc = write_file(c, want, ntensors, i, npaths, paths[i], seed, err, errlen);
  free(want);
  return rc;
}

int dsv2_write_checkpoint(const Dsv2Config *c, const char *path, uint32_t seed, char *err,
                          size_t errlen) {
  return dsv2_write_checkpoint_files(c, &path, 1, seed, err, errlen);
}
