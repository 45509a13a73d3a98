/* test_types: every element type through kernels, views, copy and fill,
 * with scalars by pointer and by value, replayed with new values. */
#include "types_graph.h"
#include "gpu_test.h"

enum { N = 256 };

/* Small random values of each kind that sum exactly or round alike. */
static int64_t small_int(void) { return (int64_t)(rand64() % 41) - 20; }
static uint64_t small_uint(void) { return rand64() % 40; }

static uint16_t float_to_half(float f) {
  /* Only values exactly representable in f16 are used here. */
  if (f == 0) return 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  int e;
  float m = frexpf(fabsf(f), &e);
  return sign | (uint16_t)((e + 14) << 10) | (uint16_t)((uint32_t)ldexpf(m, 11) & 1023);
}

static uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (uint16_t)(u >> 16); /* exact for the values used here */
}

typedef struct Check { const char *name; int size; void *(*buffer)(types *); uint64_t fill; } Check;

static const Check checks[] = {
  {"i8", 1, types_buffer_b_i8, UINT64_C(0xfd)},
  {"i16", 2, types_buffer_b_i16, UINT64_C(0xfed4)},
  {"i32", 4, types_buffer_b_i32, UINT64_C(0xfffe1dc0)},
  {"i64", 8, types_buffer_b_i64, UINT64_C(0xffffffffffffffff)},
  {"u8", 1, types_buffer_b_u8, UINT64_C(0xc8)},
  {"u16", 2, types_buffer_b_u16, UINT64_C(0xea60)},
  {"u32", 4, types_buffer_b_u32, UINT64_C(0xee6b2800)},
  {"u64", 8, types_buffer_b_u64, UINT64_C(0x100000001)},
  {"f16", 2, types_buffer_b_f16, UINT64_C(0x3e00)},
  {"bf16", 2, types_buffer_b_bf16, UINT64_C(0xc020)},
  {"f32", 4, types_buffer_b_f32, UINT64_C(0x3f400000)},
  {"f64", 8, types_buffer_b_f64, UINT64_C(0x4004000000000000)},
};

/* The expected y = x + p + v, as bits, for element i of type t. */
static uint64_t expect(int t, const void *x, int i, uint64_t p, uint64_t v) {
  switch (t) {
  case 0: { int8_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); int8_t r = (int8_t)(a + (int8_t)p + (int8_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 1: { int16_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); int16_t r = (int16_t)(a + (int16_t)p + (int16_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 2: { int32_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); int32_t r = (int32_t)(a + (int32_t)p + (int32_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 3: { int64_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); int64_t r = (int64_t)(a + (int64_t)p + (int64_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 4: { uint8_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); uint8_t r = (uint8_t)(a + (uint8_t)p + (uint8_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 5: { uint16_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); uint16_t r = (uint16_t)(a + (uint16_t)p + (uint16_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 6: { uint32_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); uint32_t r = (uint32_t)(a + (uint32_t)p + (uint32_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 7: { uint64_t a; memcpy(&a, (const char *)x + i * sizeof a, sizeof a); uint64_t r = (uint64_t)(a + (uint64_t)p + (uint64_t)v); uint64_t o = 0; memcpy(&o, &r, sizeof r); return o; }
  case 8: { uint16_t a; memcpy(&a, (const char *)x + i * 2, 2); return float_to_half(half_to_float(a) + half_to_float((uint16_t)p) + half_to_float((uint16_t)v)); }
  case 9: { uint16_t a; memcpy(&a, (const char *)x + i * 2, 2); return float_to_bf16(bf16_to_float(a) + bf16_to_float((uint16_t)p) + bf16_to_float((uint16_t)v)); }
  case 10: { float a, pp, vv; memcpy(&a, (const char *)x + i * 4, 4); memcpy(&pp, &p, 4); memcpy(&vv, &v, 4); float r = a + pp + vv; uint32_t o; memcpy(&o, &r, 4); return o; }
  case 11: { double a, pp, vv; memcpy(&a, (const char *)x + i * 8, 8); memcpy(&pp, &p, 8); memcpy(&vv, &v, 8); double r = a + pp + vv; uint64_t o; memcpy(&o, &r, 8); return o; }
  }
  return 0;
}

/* A random small value of type t, as bits; floats are small integers or
 * halves, so every sum is exact in every format. */
static uint64_t random_value(int t) {
  int64_t s = small_int();
  switch (t) {
  case 0: case 1: case 2: case 3: return (uint64_t)s;
  case 4: case 5: case 6: case 7: return small_uint();
  case 8: return float_to_half((float)s / 2);
  case 9: return float_to_bf16((float)s / 2);
  case 10: { float f = (float)s / 2; uint32_t o; memcpy(&o, &f, 4); return o; }
  default: { double f = (double)s / 2; uint64_t o; memcpy(&o, &f, 8); return o; }
  }
}

static void set_scalars(types *g, int t, uint64_t p, uint64_t v) {
  switch (t) {
  case 0: CGRT(types_set_p_i8(g, (int8_t)p)); CGRT(types_set_v_i8(g, (int8_t)v)); break;
  case 1: CGRT(types_set_p_i16(g, (int16_t)p)); CGRT(types_set_v_i16(g, (int16_t)v)); break;
  case 2: CGRT(types_set_p_i32(g, (int32_t)p)); CGRT(types_set_v_i32(g, (int32_t)v)); break;
  case 3: CGRT(types_set_p_i64(g, (int64_t)p)); CGRT(types_set_v_i64(g, (int64_t)v)); break;
  case 4: CGRT(types_set_p_u8(g, (uint8_t)p)); CGRT(types_set_v_u8(g, (uint8_t)v)); break;
  case 5: CGRT(types_set_p_u16(g, (uint16_t)p)); CGRT(types_set_v_u16(g, (uint16_t)v)); break;
  case 6: CGRT(types_set_p_u32(g, (uint32_t)p)); CGRT(types_set_v_u32(g, (uint32_t)v)); break;
  case 7: CGRT(types_set_p_u64(g, (uint64_t)p)); CGRT(types_set_v_u64(g, (uint64_t)v)); break;
  case 8: CGRT(types_set_p_f16(g, (uint16_t)p)); CGRT(types_set_v_f16(g, (uint16_t)v)); break;
  case 9: CGRT(types_set_p_bf16(g, (uint16_t)p)); CGRT(types_set_v_bf16(g, (uint16_t)v)); break;
  case 10: { float a, b; memcpy(&a, &p, 4); memcpy(&b, &v, 4); CGRT(types_set_p_f32(g, a)); CGRT(types_set_v_f32(g, b)); break; }
  case 11: { double a, b; memcpy(&a, &p, 8); memcpy(&b, &v, 8); CGRT(types_set_p_f64(g, a)); CGRT(types_set_v_f64(g, b)); break; }
  }
}

int main(void) {
  test_start("test_types");
  types *g;
  CGRT(types_create(&g, NULL));
  int nt = (int)(sizeof checks / sizeof *checks);
  unsigned char *host = malloc(4 * N * 8), *x = malloc(N * 8);
  for (int round = 0; round < 3; round++) {
    uint64_t p[12], v[12];
    for (int t = 0; t < nt; t++) {
      int sz = checks[t].size;
      for (int i = 0; i < N; i++) {
        uint64_t r = random_value(t);
        memcpy(x + i * sz, &r, (size_t)sz);
      }
      unsigned char *dev = checks[t].buffer(g);
      CUDA(cudaMemset(dev, 0xa5, 4 * N * (size_t)sz)); /* poison */
      CUDA(cudaMemcpy(dev, x, N * (size_t)sz, cudaMemcpyHostToDevice));
      p[t] = random_value(t);
      v[t] = random_value(t);
      set_scalars(g, t, p[t], v[t]);
    }
    CGRT(types_launch(g, 0));
    CUDA(cudaStreamSynchronize(0));
    for (int t = 0; t < nt; t++) {
      int sz = checks[t].size, bad_k = 0, bad_c = 0, bad_f = 0;
      CUDA(cudaMemcpy(host, checks[t].buffer(g), 4 * N * (size_t)sz, cudaMemcpyDeviceToHost));
      for (int i = 0; i < N; i++) {
        uint64_t y = 0, c = 0, f = 0, want = expect(t, host, i, p[t], v[t]);
        memcpy(&y, host + (N + i) * sz, (size_t)sz);
        memcpy(&c, host + (2 * N + i) * sz, (size_t)sz);
        memcpy(&f, host + (3 * N + i) * sz, (size_t)sz);
        bad_k += y != want;
        bad_c += c != y;
        bad_f += f != checks[t].fill;
      }
      EXPECT(!bad_k, "%s: %d of %d kernel results wrong (round %d)", checks[t].name, bad_k, N, round);
      EXPECT(!bad_c, "%s: %d of %d copied elements wrong", checks[t].name, bad_c, N);
      EXPECT(!bad_f, "%s: %d of %d filled elements wrong", checks[t].name, bad_f, N);
    }
  }
  types_destroy(g);
  free(host);
  free(x);
  return test_end("test_types");
}
