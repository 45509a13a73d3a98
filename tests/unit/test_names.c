/* test_names: cname.c's rules for the names the generated C can use.  The
 * file is included, not linked, to reach its tables: each must be sorted
 * for bsearch, or a name in it would go through unrefused. */
#include "../../compiler/cname.c"

#include <stdio.h>

static int failures, checks;

static void expect(const char *name, bool file_scope, bool refused) {
  const char *why = c_name_refused(name, file_scope);
  checks++;
  if ((why != NULL) != refused) {
    failures++;
    printf("FAIL: '%s' (%s) %s\n", name, file_scope ? "file scope" : "parameter",
           why ? why : "is accepted");
  }
}

int main(void) {
  for (size_t t = 0; t < sizeof tables / sizeof *tables; t++)
    for (size_t i = 0; i < tables[t].n; i++) {
      checks++;
      if (i && strcmp(tables[t].v[i - 1], tables[t].v[i]) >= 0) {
        failures++;
        printf("FAIL: table %zu: '%s' before '%s'\n", t, tables[t].v[i - 1], tables[t].v[i]);
      }
      expect(tables[t].v[i], true, true); /* bsearch finds each */
    }

  /* Refused everywhere: keywords, reserved, prefixes, macros, types. */
  static const char *const everywhere[] = {
      "new",      "typeof",     "_Bool",   "__x",        "_X",           "cgrt",     "cgc",
      "cgrt_x",   "CGRT_ABI",   "CGC_X",   "cudaMalloc", "CUDA_VERSION", "cuInit",   "CUstream",
      "CU_LIMIT", "NV_IS_HOST", "size_t",  "uint32_t",   "INT8_MAX",     "SIZE_MAX", "CHAR_BIT",
      "UINT64_C", "INT_WIDTH",  "PRId64",  "SCNx8",      "NULL",         "EOF",      "errno",
      "linux",    "unix",       "warpSize"};
  for (size_t i = 0; i < sizeof everywhere / sizeof *everywhere; i++) {
    expect(everywhere[i], true, true);
    expect(everywhere[i], false, true);
  }
  /* Refused at file scope only: functions, types and namespaces. */
  static const char *const file_scope[] = {
      "_x",     "main",      "std",     "memcpy",     "free",      "exp",       "expf",
      "expl",   "sinf32",    "cosf64x", "index",      "strdup",    "ffsll",     "rsqrt",
      "rsqrtf", "min",       "float4",  "ulonglong2", "long4_16a", "make_int2", "dim3",
      "half",   "atomicAdd", "FILE",    "tm"};
  for (size_t i = 0; i < sizeof file_scope / sizeof *file_scope; i++) {
    expect(file_scope[i], true, true);
    expect(file_scope[i], false, false);
  }
  /* Near misses, free everywhere. */
  static const char *const free_names[] = {
      "g",       "k",      "N",       "x_",     "Cgrt",   "cgrtx",   "CGRTX",
      "cgcx",    "cumsum", "custom",  "CUBE",   "Cuda",   "NVX",     "linux_x",
      "std_",    "intl",   "self",    "fill",   "topk",   "stride",  "memory",
      "ufloat4", "int5",   "float4x", "make_x", "atomic", "atomics", "INT8_MAXX",
      "size",    "step_T", "EPS",     "gamma_", "E1"};
  for (size_t i = 0; i < sizeof free_names / sizeof *free_names; i++) {
    expect(free_names[i], true, false);
    expect(free_names[i], false, false);
  }
  printf("test_names: %d checks, %d failed\n", checks, failures);
  return failures != 0;
}
