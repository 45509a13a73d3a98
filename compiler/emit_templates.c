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
    const Param *pa = &k->params[i];
    fprintf(f, "%s%s%s%s", i ? ", " : "", pa->pointer && pa->mode == MODE_IN ? "const " : "",
            cuda_type(pa->type), pa->pointer ? " *" : "");
  }
  if (!k->nparams)
    fprintf(f, "void");
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
              " * registers the kernel), through a pointer of the declared signature, so\n"
              " * that nvcc checks the template's parameters against the declaration. */\n"
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
  char name[CNAME_SIZE];
  for (size_t i = 0; i < n; i++) {
    const Item *t = k.v[i];
    fprintf(cu, "\n/* %s */\nextern \"C\" __attribute__((weak)) const void *%s(void) {\n  void (*cgc_kernel)(",
            t->name->name, template_c_name(name, t));
    emit_param_types(cu, t);
    fprintf(cu, ") = %s<%s>;\n  return (const void *)cgc_kernel;\n}\n", t->template_name->name,
            t->template_args);
  }
  free(k.v);
}
