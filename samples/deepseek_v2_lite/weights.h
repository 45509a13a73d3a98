/* weights.h: DeepSeek-V2-Lite's weights on the device, and the two ways of
 * filling them: from the published checkpoint's safetensors files
 * (weights.c, safetensors.c, weights_cuda.c) and from a seed, on the GPU
 * (weights_random.cu), with a formula that reference.py repeats bit for bit.
 *
 * Every weight is bf16 and lives in one of DSV2_NBUFFERS buffers, each
 * holding that kind of weight for all layers, stacked.  The buffers' layouts
 * are in the DSV2_BUFFERS table below; README.md says the same in prose. */
#ifndef DSV2_WEIGHTS_H
#define DSV2_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The model's shape (the published config.json's names in comments). */
typedef struct Dsv2Config {
  int vocab;        /* vocab_size */
  int hidden;       /* hidden_size: D */
  int layers;       /* num_hidden_layers: L */
  int dense_layers; /* first_k_dense_replace: the first layers have a dense MLP */
  int heads;        /* num_attention_heads: H */
  int kv_lora_rank; /* R: the latent that the KV cache holds */
  int qk_nope;      /* qk_nope_head_dim: N */
  int qk_rope;      /* qk_rope_head_dim: P */
  int v_head;       /* v_head_dim: V */
  int ffn;          /* intermediate_size, of the dense layers */
  int experts;      /* n_routed_experts */
  int expert_ffn;   /* moe_intermediate_size */
  int shared_ffn;   /* n_shared_experts * moe_intermediate_size */
} Dsv2Config;

/* The published DeepSeek-V2-Lite (q_lora_rank is null: q_proj is one matrix). */
Dsv2Config dsv2_lite(void);

/* 0 when every field is positive, dense_layers <= layers, and the sizes
 * made of them (each buffer's bytes, all of them together, the table of
 * tensors) fit a size_t; otherwise 1 and a message naming the fields. */
int dsv2_check_config(const Dsv2Config *c, char *err, size_t errlen);

/* The buffers: X(id, name, layout, fields), fields the config's that its
 * size is made of (for messages).  L = layers, Lm = layers - dense_layers,
 * H = heads, D = hidden, R = kv_lora_rank, N = qk_nope, P = qk_rope,
 * V = v_head; rows then columns, the last index fastest.  ORDER BUFFERS:
 * weights_random.cu's and reference.py's formula use the id's number. */
#define DSV2_BUFFERS(X)                                                                            \
  X(DSV2_EMBED, "embed", "[vocab][D]",                                                             \
    "vocab and hidden")                                                                            \
  X(DSV2_ATTN_NORM, "attn_norm", "[L][D]",                                                         \
    "layers and hidden")                                                                           \
  X(DSV2_FFN_NORM, "ffn_norm", "[L][D]",                                                           \
    "layers and hidden")                                                                           \
  X(DSV2_KV_NORM, "kv_norm", "[L][R]",                                                             \
    "layers and kv_lora_rank")                                                                     \
  X(DSV2_FINAL_NORM, "final_norm", "[D]",                                                          \
    "hidden")                                                                                      \
  X(DSV2_LM_HEAD, "lm_head", "[vocab][D]",                                                         \
    "vocab and hidden")                                                                            \
  X(DSV2_W_QKV, "w_qkv", "[L][H*(N+P) + R + P][D]: q_proj rows, then kv_a_proj_with_mqa's",        \
    "layers, heads, qk_nope, qk_rope, kv_lora_rank and hidden")                                    \
  X(DSV2_W_UK_T, "w_uk_t", "[L][H][R][N]: kv_b_proj's key rows of each head, transposed",          \
    "layers, heads, kv_lora_rank and qk_nope")                                                     \
  X(DSV2_W_UV, "w_uv", "[L][H][V][R]: kv_b_proj's value rows of each head",                        \
    "layers, heads, v_head and kv_lora_rank")                                                      \
  X(DSV2_W_O, "w_o", "[L][D][H*V]",                                                                \
    "layers, hidden, heads and v_head")                                                            \
  X(DSV2_DENSE_GU, "dense_gu", "[dense_layers][2*ffn][D]: gate rows, then up rows",                \
    "dense_layers, ffn and hidden")                                                                \
  X(DSV2_DENSE_DOWN, "dense_down", "[dense_layers][D][ffn]",                                       \
    "dense_layers, hidden and ffn")                                                                \
  X(DSV2_ROUTER, "router", "[Lm][experts][D]",                                                     \
    "layers, dense_layers, experts and hidden")                                                    \
  X(DSV2_EXP_GU, "exp_gu", "[Lm][experts][2*expert_ffn][D]: gate rows, then up rows",              \
    "layers, dense_layers, experts, expert_ffn and hidden")                                        \
  X(DSV2_EXP_DOWN, "exp_down", "[Lm][experts][D][expert_ffn]",                                     \
    "layers, dense_layers, experts, hidden and expert_ffn")                                        \
  X(DSV2_SH_GU, "sh_gu", "[Lm][2*shared_ffn][D]: gate rows, then up rows",                         \
    "layers, dense_layers, shared_ffn and hidden")                                                 \
  X(DSV2_SH_DOWN, "sh_down", "[Lm][D][shared_ffn]",                                                \
    "layers, dense_layers, hidden and shared_ffn")

#define DSV2_BUFFER_ENUM(id, name, layout, fields) id,
typedef enum Dsv2BufferId { DSV2_BUFFERS(DSV2_BUFFER_ENUM) DSV2_NBUFFERS } Dsv2BufferId;
#undef DSV2_BUFFER_ENUM

/* A buffer's number of bf16 elements (0 for a config whose sizes
 * dsv2_check_config refuses), its short name, its layout in words. */
size_t dsv2_buffer_elems(const Dsv2Config *c, Dsv2BufferId b);
const char *dsv2_buffer_name(Dsv2BufferId b);
const char *dsv2_buffer_layout(Dsv2BufferId b);

/* How a published tensor lands in the buffers. */
typedef enum Dsv2Placement {
  DSV2_PLACE_ROWS, /* as it is, at `offset` elements into `buffer` */
  DSV2_PLACE_KV_B  /* kv_b_proj of `layer`: split into DSV2_W_UK_T and DSV2_W_UV */
} Dsv2Placement;

/* One tensor of the published checkpoint. */
typedef struct Dsv2Tensor {
  char name[80]; /* e.g. model.layers.3.mlp.experts.17.gate_proj.weight */
  int ndim;      /* 1 or 2 */
  int64_t shape[2];
  Dsv2Placement place;
  Dsv2BufferId buffer; /* DSV2_PLACE_ROWS */
  size_t offset;       /* DSV2_PLACE_ROWS: in elements */
  int layer;
} Dsv2Tensor;

/* The tensors the config needs, in checkpoint order; writes at most `max`
 * into `out` (which may be NULL) and returns how many there are, counted
 * without walking them (SIZE_MAX where the count overflows a size_t, a
 * config that dsv2_check_config refuses). */
size_t dsv2_tensors(const Dsv2Config *c, Dsv2Tensor *out, size_t max);

/* Where a loaded tensor's bytes go: `bytes` bytes of bf16 to `offset`
 * elements into buffer `dst`.  Returns 0, or nonzero to stop the load. */
typedef int (*Dsv2CopyFn)(Dsv2BufferId dst, size_t offset, const void *src, size_t bytes,
                          void *ctx);

/* Loads a checkpoint of one or more safetensors files: every tensor of
 * dsv2_tensors() must be in exactly one of them, bf16 (F32 and F16 are
 * converted, rounding to nearest even), of the config's shape.  Tensors the
 * config does not use (more layers or experts than it has) are ignored.
 * Returns 0, or 1 with a message naming the file, the tensor and what was
 * expected; a file named twice (by one name or two) is said to be so. */
int dsv2_load(const Dsv2Config *c, const char *const *paths, int npaths, Dsv2CopyFn copy, void *ctx,
              char *err, size_t errlen);

/* dsv2_load into device buffers of dsv2_buffer_elems() bf16 elements each,
 * through pinned staging buffers; returns when the copies are done. */
int dsv2_load_device(const Dsv2Config *c, const char *const *paths, int npaths,
                     void *const device[DSV2_NBUFFERS], char *err, size_t errlen);

/* Writes a checkpoint in the published names and shapes whose load is
 * exactly the seed's random weights (dsv2_random_value); the tensors are
 * spread over the files by layer, as the published ones are.  Each file is
 * written as PATH.partial, then renamed to PATH: a failed write leaves no
 * half file, and what was at PATH as it was (files before it in paths are
 * written). */
int dsv2_write_checkpoint_files(const Dsv2Config *c, const char *const *paths, int npaths,
                                uint32_t seed, char *err, size_t errlen);
int dsv2_write_checkpoint(const Dsv2Config *c, const char *path, uint32_t seed, char *err,
                          size_t errlen);

/* The random weights.  Element i (0-based, in the buffer's layout) of
 * buffer b for a seed is
 *
 *   k = fmix32(seed ^ fmix32(0x9e3779b9 * (b + 1)))       (mod 2^32)
 *   h = fmix32(fmix32(k ^ lo32(i)) ^ hi32(i))
 *   u = h >> 8                                      (24 bits)
 *   x = ((float)u * 2^-23 - 1) * scale + offset     (fp32, each step rounded)
 *
 * rounded to bf16 to nearest even; fmix32 is MurmurHash3's finaliser.
 * scale and offset come from dsv2_random_params: uniform on [-a, a] has
 * standard deviation a / sqrt(3), so a matrix of k inputs takes
 * a = gain * sqrt(3 / k), with gain 1 except the projections back into the
 * residual stream (o_proj, the down projections: gain 0.5); norm weights
 * are 1 +- 0.1; the embedding is uniform on [-sqrt 3, sqrt 3]. */
void dsv2_random_params(const Dsv2Config *c, Dsv2BufferId b, float *scale, float *offset);
uint16_t dsv2_random_value(uint32_t seed, Dsv2BufferId b, uint64_t i, float scale, float offset);

/* Fills the device buffers with the seed's random weights on `stream`
 * (a cudaStream_t; 0 is the legacy stream) and waits for it. */
int dsv2_random_device(const Dsv2Config *c, uint32_t seed, void *const device[DSV2_NBUFFERS],
                       void *stream, char *err, size_t errlen);

/* bf16 helpers: round to nearest even (NaN stays NaN), and back. */
uint16_t dsv2_bf16_from_float(float f);
float dsv2_float_from_bf16(uint16_t h);

#ifdef __cplusplus
}
#endif

#endif
