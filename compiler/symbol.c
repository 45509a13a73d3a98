/* symbol.c: interned identifiers, maps and the element types. */
#include "cgc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

struct SymTab {
  Arena *arena;
  Sym **slots;
  size_t n, cap;
};

SymTab *symtab_new(Arena *a) {
  SymTab *t = arena_alloc(a, sizeof *t);
  t->arena = a;
  t->cap = 1024;
  t->slots = xcalloc(t->cap, sizeof *t->slots);
  return t;
}

void symtab_free(SymTab *t) {
  if (t)
    free(t->slots);
}

static void symtab_grow(SymTab *t) {
  size_t cap = t->cap * 2;
  Sym **slots = xcalloc(cap, sizeof *slots);
  for (size_t i = 0; i < t->cap; i++) {
    Sym *s = t->slots[i];
    if (!s)
      continue;
    size_t j = s->hash & (cap - 1);
    while (slots[j])
      j = (j + 1) & (cap - 1);
    slots[j] = s;
  }
  free(t->slots);
  t->slots = slots;
  t->cap = cap;
}

Sym *intern(SymTab *t, const char *s, size_t len) {
  uint32_t h = hash_bytes(s, len);
  size_t j = h & (t->cap - 1);
  for (Sym *e; (e = t->slots[j]); j = (j + 1) & (t->cap - 1))
    if (e->hash == h && e->len == len && !memcmp(e->name, s, len))
      return e;
  Sym *e = arena_alloc(t->arena, sizeof *e);
  e->name = arena_strndup(t->arena, s, len);
  e->len = (uint32_t)len;
  e->hash = h;
  t->slots[j] = e;
  if (++t->n * 2 > t->cap)
    symtab_grow(t);
  return e;
}

static uint32_t key_hash(const Map *m, const void *key) {
  if (m->by_string)
    return hash_bytes(key, strlen(key));
  uintptr_t k = (uintptr_t)key;
  k ^= k >> 17;
  k *= 0xed5ad4bbu;
  k ^= k >> 11;
  return (uint32_t)k;
}

static bool key_eq(const Map *m, const void *a, const void *b) {
  return m->by_string ? !strcmp(a, b) : a == b;
}

void *map_get(const Map *m, const void *key) {
  if (!m->cap)
    return NULL;
  for (size_t j = key_hash(m, key) & (m->cap - 1); m->slots[j].key;
       j = (j + 1) & (m->cap - 1))
    if (key_eq(m, m->slots[j].key, key))
      return m->slots[j].value;
  return NULL;
}

static void map_insert(MapEntry *slots, size_t cap, const Map *m,
                       const void *key, void *value, size_t *n) {
  size_t j = key_hash(m, key) & (cap - 1);
  for (; slots[j].key; j = (j + 1) & (cap - 1))
    if (key_eq(m, slots[j].key, key)) {
      slots[j].value = value;
      return;
    }
  slots[j].key = key;
  slots[j].value = value;
  (*n)++;
}

void map_put(Map *m, const void *key, void *value) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    MapEntry *slots = xcalloc(cap, sizeof *slots);
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].key)
        map_insert(slots, cap, m, m->slots[i].key, m->slots[i].value, &n);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    m->n = n;
  }
  map_insert(m->slots, m->cap, m, key, value, &m->n);
}

void map_free(Map *m) {
  free(m->slots);
  m->slots = NULL;
  m->n = m->cap = 0;
}

static const struct {
  const char *name;
  int size;
  int abi;
} types[] = {
    [TY_NONE] = {"?", 0, -1},          [TY_I8] = {"i8", 1, CGRT_I8},
    [TY_I16] = {"i16", 2, CGRT_I16},   [TY_I32] = {"i32", 4, CGRT_I32},
    [TY_I64] = {"i64", 8, CGRT_I64},   [TY_U8] = {"u8", 1, CGRT_U8},
    [TY_U16] = {"u16", 2, CGRT_U16},   [TY_U32] = {"u32", 4, CGRT_U32},
    [TY_U64] = {"u64", 8, CGRT_U64},   [TY_F16] = {"f16", 2, CGRT_F16},
    [TY_BF16] = {"bf16", 2, CGRT_BF16}, [TY_F32] = {"f32", 4, CGRT_F32},
    [TY_F64] = {"f64", 8, CGRT_F64},   [TY_HANDLE] = {"handle", 8, -1},
};

const char *type_name(Type t) { return types[t].name; }
int type_size(Type t) { return types[t].size; }
int abi_type(Type t) { return types[t].abi; }
bool type_is_float(Type t) { return t >= TY_F16 && t <= TY_F64; }
bool type_is_signed(Type t) { return t >= TY_I8 && t <= TY_I64; }

/* Rounds a finite non-negative double to a float format with `mant`
 * stored mantissa bits and exponent bias `bias`, to nearest even; returns
 * the bits without the sign. */
static uint64_t round_to_format(double v, int mant, int bias, int exp_bits) {
  if (v == 0)
    return 0;
  int e;
  frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
  int biased = e - 1 + bias;
  uint64_t max_exp = ((uint64_t)1 << exp_bits) - 1;
  if (biased >= 1) {
    uint64_t q = (uint64_t)nearbyint(ldexp(v, mant - (e - 1)));
    if (q == (uint64_t)1 << (mant + 1)) {
      q >>= 1;
      biased++;
    }
    if ((uint64_t)biased >= max_exp)
      return max_exp << mant; /* infinity */
    return (uint64_t)biased << mant | (q - ((uint64_t)1 << mant));
  }
  /* Subnormal: v = q * 2^(1 - bias - mant). */
  return (uint64_t)nearbyint(ldexp(v, bias - 1 + mant));
}

uint64_t value_bits(Type t, bool is_float, int64_t i, double f) {
  if (!type_is_float(t)) {
    uint64_t v = (uint64_t)i;
    int bits = 8 * type_size(t);
    return bits == 64 ? v : v & (((uint64_t)1 << bits) - 1);
  }
  double v = is_float ? f : (double)i;
  switch (t) {
  case TY_F16:
    return (signbit(v) ? 0x8000u : 0) | round_to_format(fabs(v), 10, 15, 5);
  case TY_BF16:
    return (signbit(v) ? 0x8000u : 0) | round_to_format(fabs(v), 7, 127, 8);
  case TY_F32: {
    float x = (float)v;
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
  }
  default: {
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
  }
  }
}

int shortest_float(char *buf, size_t size, double v) {
  int digits = 1;
  for (; digits < 17; digits++) {
    snprintf(buf, size, "%.*g", digits, v);
    if (strtod(buf, NULL) == v)
      return digits;
  }
  snprintf(buf, size, "%.*g", digits, v);
  return digits;
}
