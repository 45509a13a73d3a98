/* emit_templates.c: the companion CUDA file that instantiates the
 * template kernels (language reference, section 6.5). */
#include "emit_internal.h"

#include <stdlib.h>
#include <string.h>

bool uses_templates(Compiler *cc, const Program *p) {
  Kernels k = used_kernels(cc, p, NK_KERNEL);
  bool any = false;
  for (size_t i = 0; i < k.n; i++)
    any |= k.v[i]->source == KS_TEMPLATE;
  free(k.v);
  return any;
}

/* A template kernel's parameter types, as a function pointer to its
 * instantiation must have them (no names: the template's header may
 * define a macro of a parameter's name). */
static void emit_param_types(FILE *f, const Item *k) {
  for (int i = 0; i < k->nparams; i++) {
    fprintf(f, "%s", i ? ", " : "");
    emit_param_cxx_type(f, &k->params[i]);
  }
  if (!k->nparams)
    fprintf(f, "void");
}

/* The check of the instantiations: the header's helpers (emit_header.c),
 * and cgc_kernel_template_signature<D>(&t<ARGS>, 0), the parameter types of
 * the instantiation when its template arguments name one function
 * (cgc_kernel_params<A...>), or cgc_kernel_unchecked when they leave some to
 * be deduced from the declared pointer type D, which the accessor's pointer
 * then does. */
static void emit_template_check_helpers(FILE *cu) {
  emit_check_helpers(cu);
  fprintf(cu, "#ifndef CGC_TEMPLATE_CHECK_HELPERS_\n#define CGC_TEMPLATE_CHECK_HELPERS_\n"
              "struct cgc_kernel_unchecked {};\n"
              "template <class D, class... A>\n"
              "cgc_kernel_params<A...> cgc_kernel_template_signature(void (*)(A...), int);\n"
              "template <class D> cgc_kernel_unchecked cgc_kernel_template_signature(D, long);\n"
              "#endif\n");
}

void emit_templates(FILE *cu, Compiler *cc, const Program *p, const char *source,
                    const char *header) {
  const char *base = strrchr(header, '/') ? strrchr(header, '/') + 1 : header;
  Kernels k = used_kernels(cc, p, NK_KERNEL);
  size_t n = 0;
  for (size_t i = 0; i < k.n; i++)
    if (k.v[i]->source == KS_TEMPLATE)
      k.v[n++] = k.v[i];
  emit_generated_line(cu, source);
  if (!n) {
    fprintf(cu, "/* Its graphs use no template kernel: nothing to compile here. */\n");
    free(k.v);
    return;
  }
  fprintf(cu, "/* The template kernels.  Each accessor gives the address of its\n"
              " * instantiation's host stub (taking it instantiates the template, and nvcc\n"
              " * registers the kernel), through a pointer of the declared signature; before\n"
              " * it, static_asserts compare the instantiation's parameters with the\n"
              " * declaration, each naming the kernel and the parameter that differs. */\n"
              "#include \"%s\"\n\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <stdint.h>\n\n",
          base);
  /* Each header once, in the order the kernels name them. */
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < i && strcmp(k.v[j]->header, k.v[i]->header))
      j++;
    if (j == i)
      fprintf(cu, "#include \"%s\"\n", k.v[i]->header);
  }
  fprintf(cu, "\n");
  emit_template_check_helpers(cu);
  char name[CNAME_SIZE];
  for (size_t i = 0; i < n; i++) {
    const Item *t = k.v[i];
    template_c_name(name, t);
    fprintf(cu, "\n/* %s */\nnamespace cgc_template_check {\n", t->name->name);
    emit_kernel_check(cu, t, name);
    fprintf(cu, "template struct %s<decltype(cgc_kernel_template_signature<void (*)(", name);
    emit_param_types(cu, t);
    fprintf(cu, ")>(&%s<%s>, 0))>;\n}\n", t->template_name->name, t->template_args);
    fprintf(cu, "extern \"C\" __attribute__((weak)) const void *%s(void) {\n  void (*cgc_kernel)(",
            name);
    emit_param_types(cu, t);
    fprintf(cu, ") = %s<%s>;\n  return (const void *)cgc_kernel;\n}\n", t->template_name->name,
            t->template_args);
  }
  free(k.v);
}
