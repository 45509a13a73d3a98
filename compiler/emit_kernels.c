/* emit_kernels.c: what the graphs call, in the generated C: the kernel
 * table, the template accessors' declarations, the modules' bytes and
 * where each kernel comes from, and a caller per capture function. */
#include "emit_internal.h"

#include <stdlib.h>
#include <string.h>

/* Each capture function is called through a function of one type, which
 * turns the runtime's 64-bit argument words into its parameters. */
/* The conversions from an argument word that the callers use: f16 and
 * bf16 as their bits in C, CUDA's types in C++ (as the header declares the
 * functions), f32 and f64 from their bits. */
static void emit_bits_helpers(FILE *c, const Kernels *captures) {
  bool f32 = false, f64 = false, f16 = false, bf16 = false, halves = false;
  for (size_t i = 0; i < captures->n; i++)
    for (int j = 0; j < captures->v[i]->nparams; j++) {
      const Param *p = &captures->v[i]->params[j];
      f32 |= !p->pointer && p->type == TY_F32;
      f64 |= !p->pointer && p->type == TY_F64;
      f16 |= !p->pointer && p->type == TY_F16;
      bf16 |= !p->pointer && p->type == TY_BF16;
      halves |= p->type == TY_F16 || p->type == TY_BF16;
    }
  /* f16 and bf16 are their bits in C, CUDA's types in C++, as the header
   * declares the functions. */
  if (halves)
    fprintf(c, "#ifdef __cplusplus\ntypedef __half cgc_half;\ntypedef __nv_bfloat16 cgc_bfloat16;\n"
               "#else\ntypedef uint16_t cgc_half;\ntypedef uint16_t cgc_bfloat16;\n#endif\n");
  if (f16)
    fprintf(c,
            "static cgc_half cgc_f16(uint64_t cgc_bits) {\n"
            "#ifdef __cplusplus\n  __half_raw cgc_raw;\n  cgc_raw.x = (unsigned short)cgc_bits;\n"
            "  return cgc_half(cgc_raw);\n#else\n  return (cgc_half)cgc_bits;\n#endif\n}\n");
  if (bf16)
    fprintf(c, "static cgc_bfloat16 cgc_bf16(uint64_t cgc_bits) {\n"
               "#ifdef __cplusplus\n  __nv_bfloat16_raw cgc_raw;\n"
               "  cgc_raw.x = (unsigned short)cgc_bits;\n  return cgc_bfloat16(cgc_raw);\n#else\n"
               "  return (cgc_bfloat16)cgc_bits;\n#endif\n}\n");
  if (f32)
    fprintf(c, "static float cgc_f32(uint64_t cgc_bits) {\n"
               "  union { uint32_t u; float f; } cgc_v;\n"
               "  cgc_v.u = (uint32_t)cgc_bits;\n  return cgc_v.f;\n}\n");
  if (f64)
    fprintf(c, "static double cgc_f64(uint64_t cgc_bits) {\n"
               "  union { uint64_t u; double f; } cgc_v;\n"
               "  cgc_v.u = cgc_bits;\n  return cgc_v.f;\n}\n");
}

/* One capture function's caller: the argument words as its parameters. */
static void emit_capture_caller(FILE *c, const Item *k) {
  char caller[CNAME_SIZE];
  fprintf(c,
          "static int %s(void *cgc_stream, void *cgc_user, const uint64_t *cgc_arg) {\n"
          "  return (int)%s((cudaStream_t)cgc_stream, cgc_user",
          capture_caller_c_name(caller, k), kernel_c_name(k));
  if (!k->nparams)
    fprintf(c, ");\n  (void)cgc_arg;\n}\n");
  for (int j = 0; j < k->nparams; j++) {
    const Param *p = &k->params[j];
    const char *type = p->type == TY_F16    ? "cgc_half"
                       : p->type == TY_BF16 ? "cgc_bfloat16"
                                            : c_type(p->type);
    if (p->pointer)
      fprintf(c, ",\n      (%s%s *)(uintptr_t)cgc_arg[%d]", p->mode == MODE_IN ? "const " : "",
              type, j);
    else if (type_is_float(p->type))
      fprintf(c, ",\n      cgc_%s(cgc_arg[%d])", type_name(p->type), j);
    else
      fprintf(c, ",\n      (%s)cgc_arg[%d]", c_type(p->type), j);
  }
  if (k->nparams)
    fprintf(c, ");\n}\n");
}

void emit_capture_callers(FILE *c, const Kernels *captures) {
  if (!captures->n)
    return;
  char caller[CNAME_SIZE];
  fprintf(c, "\n/* The capture functions, called with the argument words the runtime builds. */\n");
  emit_bits_helpers(c, captures);
  for (size_t i = 0; i < captures->n; i++)
    emit_capture_caller(c, captures->v[i]);
  fprintf(c, "\nstatic const cgrt_capture cgc_captures[] = {");
  for (size_t i = 0; i < captures->n; i++)
    fprintf(c, "%s%s", i ? ", " : "", capture_caller_c_name(caller, captures->v[i]));
  fprintf(c, "};\nstatic const char *const cgc_capture_names[] = {");
  for (size_t i = 0; i < captures->n; i++)
    fprintf(c, "%s\"%s\"", i ? ", " : "", captures->v[i]->name->name);
  fprintf(c, "};\n");
}

/* A module's bytes as a C array: 16 a line, in hex. */
static void emit_module(FILE *c, const Module *m) {
  static const char hex[] = "0123456789abcdef";
  fprintf(c, "\n/* ");
  emit_comment_text(c, m->path);
  fprintf(c, " (%s, %zu bytes) */\nstatic const unsigned char cgc_module_%d[] = {", module_format_name(m->format),
          m->len, m->index);
  size_t n = m->len + (m->format == MOD_PTX); /* PTX is loaded as a C string */
  char line[16 * 5 + 4];
  for (size_t i = 0; i < n; i += 16) {
    size_t len = 0;
    line[len++] = '\n';
    for (size_t j = i; j < n && j < i + 16; j++) {
      unsigned byte = j < m->len ? m->bytes[j] : 0;
      line[len++] = '0', line[len++] = 'x', line[len++] = hex[byte >> 4], line[len++] = hex[byte & 15];
      if (j + 1 < n)
        line[len++] = ',';
    }
    fwrite(line, 1, len, c);
  }
  fprintf(c, "\n};\n");
}

/* The kernels' declarations (host stubs, template accessors), with C
 * linkage when the C is compiled as C++ too, then the kernel table and the
 * kernels' names. */
static void emit_kernel_table(FILE *c, const Kernels *k) {
  char name[CNAME_SIZE];
  bool linked = false, templates = false;
  for (size_t i = 0; i < k->n; i++)
    linked |= k->v[i]->source == KS_LINKED, templates |= k->v[i]->source == KS_TEMPLATE;
  if (linked || templates) /* C linkage when the C is compiled as C++ too */
    fprintf(c, "\n#ifdef __cplusplus\nextern \"C\" {\n#endif");
  if (linked)
    fprintf(c, "\n/* The kernels' host stubs: only their addresses are used. */\n");
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i]->source == KS_LINKED)
      fprintf(c, "extern void %s(void);\n", kernel_c_name(k->v[i]));
  if (templates)
    fprintf(c, "\n/* The template kernels' accessors, in the companion CUDA file: each gives\n"
               " * the address of its instantiation's host stub. */\n");
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i]->source == KS_TEMPLATE)
      fprintf(c, "extern const void *%s(void);\n", template_c_name(name, k->v[i]));
  if (linked || templates)
    fprintf(c, "#ifdef __cplusplus\n}\n#endif\n");
  fprintf(c, "\nstatic const cgrt_kernel cgc_kernels[] = {");
  for (size_t i = 0; i < k->n; i++)
    fprintf(c, "%s%s", i ? ", " : "",
            k->v[i]->source == KS_LINKED ? kernel_c_name(k->v[i]) : "NULL");
  fprintf(c, "};\nstatic const char *const cgc_kernel_names[] = {");
  for (size_t i = 0; i < k->n; i++)
    fprintf(c, "%s\"%s\"", i ? ", " : "", k->v[i]->name->name);
  fprintf(c, "};\n");
}

/* The modules the kernels come from, each once, numbered as read: their
 * bytes and their table.  slot[m] is module m's row; the number of rows. */
static size_t emit_modules(FILE *c, Compiler *cc, const Kernels *k, int *slot) {
  bool *used = xrealloc(NULL, (cc->modules.n + 1) * sizeof *used);
  memset(used, 0, (cc->modules.n + 1) * sizeof *used);
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i]->source == KS_MODULE)
      used[k->v[i]->module->index] = true;
  size_t nmodules = 0;
  for (size_t m = 0; m < cc->modules.n; m++)
    if (used[m]) {
      slot[m] = (int)nmodules++;
      emit_module(c, cc->modules.v[m]);
    }
  if (nmodules) {
    fprintf(c, "\nstatic const cgrt_module_desc cgc_modules[] = {\n");
    for (size_t m = 0; m < cc->modules.n; m++)
      if (used[m]) {
        const Module *mod = cc->modules.v[m];
        fprintf(c, "  {.path = ");
        emit_string(c, mod->path);
        fprintf(c, ", .format = CGRT_MODULE_%s, .bytes = UINT64_C(%zu), .image = cgc_module_%d},\n",
                mod->format == MOD_PTX ? "PTX" : mod->format == MOD_CUBIN ? "CUBIN" : "FATBIN",
                mod->len + (mod->format == MOD_PTX), mod->index);
      }
    fprintf(c, "};\n");
  }
  free(used);
  return nmodules;
}

/* Where each kernel comes from: a row a kernel of the kernel table. */
static void emit_kernel_from(FILE *c, const Kernels *k, const int *slot) {
  char name[CNAME_SIZE];
  fprintf(c, "\nstatic const cgrt_kernel_from cgc_kernel_from[] = {\n");
  for (size_t i = 0; i < k->n; i++) {
    const Item *kn = k->v[i];
    switch (kn->source) {
    case KS_LINKED: fprintf(c, "  {.kind = CGRT_KERNEL_LINKED}, /* %s */\n", kn->name->name); break;
    case KS_TEMPLATE:
      fprintf(c, "  {.kind = CGRT_KERNEL_TEMPLATE, .address = %s}, /* %s = %s<", template_c_name(name, kn),
              kn->name->name, kn->template_name->name);
      emit_comment_text(c, kn->template_args);
      fprintf(c, "> */\n");
      break;
    case KS_MODULE:
      fprintf(c, "  {.kind = CGRT_KERNEL_MODULE, .module = %d, .symbol = ", slot[kn->module->index]);
      emit_string(c, module_symbol(kn));
      fprintf(c, "}, /* %s */\n", kn->name->name);
      break;
    }
  }
  fprintf(c, "};\n");
}

/* The kernel table, and for kernels not linked in the accessors of
 * templates, the modules' bytes and where each kernel comes from.  The
 * number of modules embedded. */
size_t emit_kernels(FILE *c, Compiler *cc, const Kernels *k) {
  if (!k->n)
    return 0;
  emit_kernel_table(c, k);
  if (all_linked(k))
    return 0;
  int *slot = xrealloc(NULL, (cc->modules.n + 1) * sizeof *slot);
  size_t nmodules = emit_modules(c, cc, k, slot);
  emit_kernel_from(c, k, slot);
  free(slot);
  return nmodules;
}
