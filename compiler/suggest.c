/* suggest.c: "did you mean": the name closest to a misspelt one, by edit
 * distance with transpositions (the optimal string alignment distance).
 *
 * A candidate is close enough within max(1, length / 3) edits of the name
 * as written (rustc's rule), and fewer than the name's length; one that
 * differs only in case is closest of all.  Ties go to the candidate first
 * in byte order, so suggestions do not depend on the order of a map. */
#include "cgc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { SUGGEST_MAX_LEN = MAX_IDENT_LEN + 1 };

/* The distance between a and b, or limit + 1 once it exceeds limit. */
static int distance(const char *a, size_t n, const char *b, size_t m, int limit) {
  if ((n > m ? n - m : m - n) > (size_t)limit || n >= SUGGEST_MAX_LEN || m >= SUGGEST_MAX_LEN)
    return limit + 1;
  /* Three rows of the table: two back for a transposition. */
  static int rows[3][SUGGEST_MAX_LEN + 1];
  int *back2 = rows[0], *back = rows[1], *cur = rows[2];
  for (size_t j = 0; j <= m; j++)
    back[j] = (int)j;
  for (size_t i = 1; i <= n; i++) {
    cur[0] = (int)i;
    int row_min = cur[0];
    for (size_t j = 1; j <= m; j++) {
      int cost = a[i - 1] != b[j - 1];
      int d = back[j - 1] + cost;
      if (back[j] + 1 < d)
        d = back[j] + 1;
      if (cur[j - 1] + 1 < d)
        d = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && back2[j - 2] + 1 < d)
        d = back2[j - 2] + 1;
      cur[j] = d;
      if (d < row_min)
        row_min = d;
    }
    if (row_min > limit)
      return limit + 1;
    int *t = back2;
    back2 = back, back = cur, cur = t;
  }
  return back[m];
}

static bool same_but_case(const char *a, const char *b) {
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
      return false;
  return !*a && !*b;
}

void suggest_init(Suggest *sg, const char *name) {
  *sg = (Suggest){.name = name, .len = strlen(name), .best = NULL};
  size_t limit = sg->len / 3;
  sg->limit = limit < 1 ? 1 : limit > 8 ? 8 : (int)limit;
  if (sg->limit >= (int)sg->len)
    sg->limit = (int)sg->len - 1;
  sg->dist = sg->limit + 1;
}

void suggest_try(Suggest *sg, const char *candidate) {
  if (!candidate || !strcmp(candidate, sg->name))
    return;
  /* Case alone: closer than any edit (counted as half of one). */
  int d = same_but_case(candidate, sg->name)
              ? 0
              : 2 * distance(sg->name, sg->len, candidate, strlen(candidate), sg->limit);
  if (d > 2 * sg->limit)
    return;
  if (!sg->best || d < sg->dist || (d == sg->dist && strcmp(candidate, sg->best) < 0)) {
    sg->best = candidate;
    sg->dist = d;
  }
}

const char *suggest_best(const Suggest *sg) { return sg->best; }

/* The names C and CUDA give the element types. */
static const struct {
  const char *c, *cgraph;
} type_aliases[] = {
    {"float", "f32"},    {"double", "f64"},    {"half", "f16"},
    {"__half", "f16"},   {"bfloat16", "bf16"}, {"__nv_bfloat16", "bf16"},
    {"int", "i32"},      {"unsigned", "u32"},  {"uint", "u32"},
    {"char", "i8"},      {"short", "i16"},     {"long", "i64"},
    {"size_t", "u64"},   {"int8_t", "i8"},     {"int16_t", "i16"},
    {"int32_t", "i32"},  {"int64_t", "i64"},   {"uint8_t", "u8"},
    {"uint16_t", "u16"}, {"uint32_t", "u32"},  {"uint64_t", "u64"},
    {"float16", "f16"},  {"float32", "f32"},   {"float64", "f64"},
    {"fp16", "f16"},     {"fp32", "f32"},      {"fp64", "f64"},
    {"bf16_t", "bf16"},
};

const char *suggest_type(const char *name) {
  for (size_t i = 0; i < sizeof type_aliases / sizeof *type_aliases; i++)
    if (!strcmp(name, type_aliases[i].c))
      return type_aliases[i].cgraph;
  Suggest sg;
  suggest_init(&sg, name);
  for (Type t = TY_I8; t <= TY_F64; t++)
    suggest_try(&sg, type_name(t));
  return suggest_best(&sg);
}
