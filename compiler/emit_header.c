/* emit_header.c: the generated header: each graph's type and functions,
 * the capture functions' prototypes and, under __CUDACC__, the kernels. */
#include "emit_internal.h"

#include <stdlib.h>
#include <string.h>

static void emit_declarations(FILE *h, const Graph *g) {
  GraphNames n;
  graph_names(&n, g);
  const char *gt = n.type;
  char buf[256], fn[CNAME_SIZE], fn2[CNAME_SIZE];
  bool has_extern = false;
  fprintf(h, "\n/* graph %s */\ntypedef struct %s %s;\n", g->name->name, gt, gt);
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (!is_extern(res))
      continue;
    if (!has_extern)
      fprintf(h, "\ntypedef struct %s {\n", n.ext);
    has_extern = true;
    fprintf(h, "  void *%s; /* %s%s */\n", member_c_name(res), shape(buf, sizeof buf, res),
            res->buffer_kind == BUF_EXTERN_HOST ? ", pinned host memory" : "");
  }
  if (has_extern)
    fprintf(h, "} %s;\n", n.ext);
  fprintf(h, "\n");
  if (has_extern)
    fprintf(h, "cgrt_status %s(%s **out, const %s *ext, const cgrt_options *opt);\n", n.create,
            gt, n.ext);
  else
    fprintf(h, "cgrt_status %s(%s **out, const cgrt_options *opt);\n", n.create, gt);
  fprintf(h, "cgrt_status %s(%s *graph, cudaStream_t stream);\n", n.launch, gt);
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (res->kind == RES_SCALAR)
      fprintf(h,
              "cgrt_status %s(%s *graph, %s value); /* %s */\n"
              "cgrt_status %s(%s *graph, %s *value);\n",
              graph_c_name(fn, GN_SET, g, res), gt, c_type(res->type), type_name(res->type),
              graph_c_name(fn2, GN_GET, g, res), gt, c_type(res->type));
    else if (is_extern(res))
      fprintf(h, "cgrt_status %s(%s *graph, void *ptr);\n", graph_c_name(fn, GN_BIND, g, res),
              gt);
    else
      fprintf(h, "void *%s(%s *graph); /* %s%s */\n", graph_c_name(fn, GN_BUFFER, g, res), gt,
              shape(buf, sizeof buf, res), res->buffer_kind == BUF_HOST ? ", pinned host" : "");
  }
  fprintf(h, "void *%s(%s *graph);\nvoid %s(%s *graph);\n", n.user, gt, n.destroy, gt);
  fprintf(h, "size_t %s(void); /* the memory of its owned buffers, for a cgrt_pool */\n",
          n.pool_bytes);
}

/* A capture function's prototype.  The stream and user parameters are
 * named cgc_*, which no parameter of the program can be. */
static void emit_capture_prototype(FILE *h, const Item *k, bool cxx) {
  fprintf(h, "cudaError_t %s(cudaStream_t cgc_stream, void *cgc_user", kernel_c_name(k));
  emit_params(h, k, ", ", cxx);
  fprintf(h, ");\n");
}

static void emit_capture_declarations(FILE *h, Compiler *cc) {
  bool any = false;
  for (size_t i = 0; i < cc->items.n; i++) {
    const Item *k = cc->items.v[i];
    if (k->kind != IT_KERNEL || !k->capture)
      continue;
    if (!any)
      fprintf(h, "\n/* The capture functions, as their definitions must be: each enqueues its\n"
                 " * work on `stream`, which is being captured; `user` is cgrt_options.user. */\n");
    any = true;
    if (has_half_param(k)) {
      fprintf(h, "#ifdef __cplusplus\n");
      emit_capture_prototype(h, k, true);
      fprintf(h, "#else\n");
      emit_capture_prototype(h, k, false);
      fprintf(h, "#endif\n");
    } else {
      emit_capture_prototype(h, k, false);
    }
  }
}

static bool is_linked_kernel(const Item *it) {
  return it->kind == IT_KERNEL && !it->capture && it->source == KS_LINKED;
}

static void emit_kernel_declaration(FILE *h, const Item *k) {
  fprintf(h, "extern \"C\" __global__ void %s(", kernel_c_name(k));
  emit_params(h, k, "", true);
  fprintf(h, "%s);\n", k->nparams ? "" : "void");
}

/* A parameter's C++ type, as the kernel's declaration spells it. */
void emit_param_cxx_type(FILE *h, const Param *p) {
  fprintf(h, "%s%s%s", p->pointer && p->mode == MODE_IN ? "const " : "", cuda_type(p->type),
          p->pointer ? " *" : "");
}

/* A parameter as the .cgraph declares it (a pointer's mode as it means it). */
static void emit_param_cgraph(FILE *h, const Param *p) {
  static const char *const modes[] = {[MODE_NONE] = "", [MODE_IN] = "in ", [MODE_OUT] = "out ",
                                      [MODE_INOUT] = "inout "};
  fprintf(h, "%s%s: %s%s", modes[p->mode], p->name->name, type_name(p->type),
          p->pointer ? "*" : "");
}

/* What the check of the definitions shares, once whichever headers (and
 * companion, emit_templates.c) a translation unit includes: the stand-in's
 * type, and the parameter types of the function that a kernel's name
 * names: cgc_kernel_signature(&k, 0) deduces them from the unit's
 * definition (the stand-in returns another type, so it cannot deduce), and
 * takes the stand-in only when the unit does not define the kernel. */
void emit_check_helpers(FILE *h) {
  fprintf(h,
          "#ifndef CGC_KERNEL_CHECK_HELPERS_\n#define CGC_KERNEL_CHECK_HELPERS_\n"
          "struct cgc_kernel_absent {};\nstruct cgc_kernel_undefined {};\n"
          "template <class... A> struct cgc_kernel_params {};\n"
          "template <class... A>\ncgc_kernel_params<A...> cgc_kernel_signature(void (*)(A...), int);\n"
          "cgc_kernel_undefined cgc_kernel_signature(cgc_kernel_absent (*)(cgc_kernel_absent), long);\n"
          "template <class A, class B> struct cgc_kernel_same { static const bool value = false; };\n"
          "template <class A> struct cgc_kernel_same<A, A> { static const bool value = true; };\n"
          "/* Whether parameter I of A... is T; true where there is no parameter I. */\n"
          "template <unsigned I, class T, class... A> struct cgc_kernel_param_is {\n"
          "  static const bool value = true;\n};\n"
          "template <class T, class A0, class... A> struct cgc_kernel_param_is<0, T, A0, A...> {\n"
          "  static const bool value = cgc_kernel_same<T, A0>::value;\n};\n"
          "template <unsigned I, class T, class A0, class... A>\n"
          "struct cgc_kernel_param_is<I, T, A0, A...> {\n"
          "  static const bool value = cgc_kernel_param_is<I - 1, T, A...>::value;\n};\n"
          "#endif\n");
}

/* A kernel's check, the class template NAME: NAME<cgc_kernel_params<A...> >
 * compares the parameters A... of its definition with the declaration,
 * each with a message that names the kernel, the parameter and the type
 * the .cgraph means; NAME of any other type checks nothing.  The caller
 * instantiates it. */
void emit_kernel_check(FILE *h, const Item *k, const char *name) {
  fprintf(h, "template <class F> struct %s {};\ntemplate <class... A> struct %s<cgc_kernel_params<A...> > {\n",
          name, name);
  fprintf(h, "  static_assert(sizeof...(A) == %d,\n                \"kernel '%s': the .cgraph declares %d parameter%s (",
          k->nparams, k->name->name, k->nparams, k->nparams == 1 ? "" : "s");
  for (int i = 0; i < k->nparams; i++) {
    fprintf(h, "%s", i ? ", " : "");
    emit_param_cgraph(h, &k->params[i]);
  }
  fprintf(h, ")%s", k->nparams ? ", which in C++ are (" : "\");\n");
  for (int i = 0; i < k->nparams; i++) {
    fprintf(h, "%s", i ? ", " : "");
    emit_param_cxx_type(h, &k->params[i]);
  }
  if (k->nparams)
    fprintf(h, ")\");\n");
  for (int i = 0; i < k->nparams; i++) {
    const Param *p = &k->params[i];
    fprintf(h, "  static_assert(cgc_kernel_param_is<%d, ", i);
    emit_param_cxx_type(h, p);
    fprintf(h, ", A...>::value,\n                \"kernel '%s', parameter %d '%s': the .cgraph declares '",
            k->name->name, i + 1, p->name->name);
    emit_param_cgraph(h, p);
    fprintf(h, "', which is '");
    emit_param_cxx_type(h, p);
    fprintf(h, "'\");\n");
  }
  fprintf(h, "};\n");
}

/* The header: the ABI it was written for, each graph's declarations, the
 * capture functions' and, for CUDA sources, the kernels'. */
void emit_header(FILE *h, Compiler *cc, const Program *p, const char *source,
                 const char *header) {
  char buf[HEADER_GUARD_SIZE];
  const char *guard = header_guard(buf, header, cc, p);

  emit_generated_line(h, source);
  fprintf(h, "#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n#include \"" CGRT_HEADER "\"\n\n",
          guard, guard);
  fprintf(h, "#if !defined(CGRT_ABI) || CGRT_ABI != %d\n"
             "#error \"this header was generated by cgc " CGC_VERSION
             " for cgrt ABI %d, but cgrt.h is another version: regenerate it\"\n#endif\n\n",
          CGRT_ABI, CGRT_ABI);
  bool half_captures = false;
  for (size_t i = 0; i < cc->items.n; i++)
    half_captures |= cc->items.v[i]->kind == IT_KERNEL && cc->items.v[i]->capture &&
                     has_half_param(cc->items.v[i]);
  if (half_captures)
    fprintf(h, "#ifdef __cplusplus\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#endif\n\n");
  fprintf(h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
  for (size_t i = 0; i < p->graphs.n; i++)
    emit_declarations(h, p->graphs.v[i]);
  emit_capture_declarations(h, cc);
  fprintf(h, "\n#ifdef __cplusplus\n}\n#endif\n");
  /* The kernels the user defines: not those from modules or templates. */
  size_t nkernels = 0;
  for (size_t i = 0; i < cc->items.n; i++)
    nkernels += is_linked_kernel(cc->items.v[i]);
  if (nkernels) {
    fprintf(h, "\n#ifdef __CUDACC__\n/* The kernels, as their definitions must be. */\n"
               "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n\n");
    fprintf(h, "#ifndef CGC_KERNEL_CHECK\n");
    for (size_t i = 0; i < cc->items.n; i++)
      if (is_linked_kernel(cc->items.v[i]))
        emit_kernel_declaration(h, cc->items.v[i]);
    fprintf(h, "#else\n/* The check of the definitions (section 6.1 of the language reference),\n"
               " * which cgc_add_graph and cgc.build compile when a CUDA file fails: each\n"
               " * kernel's name a host function of another type, so that a definition that\n"
               " * differs is no error here; the checks at the end compare it. */\n");
    emit_check_helpers(h);
    for (size_t i = 0; i < cc->items.n; i++)
      if (is_linked_kernel(cc->items.v[i]))
        fprintf(h, "cgc_kernel_absent %s(cgc_kernel_absent);\n", kernel_c_name(cc->items.v[i]));
    fprintf(h, "#endif\n#endif\n");
  }
  fprintf(h, "\n#endif\n");
  if (nkernels) {
    fprintf(h, "\n/* The check's end, included again after the definitions: each kernel's\n"
               " * parameters against the declaration. */\n"
               "#if defined(__CUDACC__) && defined(CGC_KERNEL_CHECK_END) && !defined(%sCHECKED_)\n"
               "#define %sCHECKED_\nnamespace cgc_kernel_check_%s {\n",
            guard, guard, guard);
    for (size_t i = 0; i < cc->items.n; i++)
      if (is_linked_kernel(cc->items.v[i])) {
        const char *name = kernel_c_name(cc->items.v[i]);
        emit_kernel_check(h, cc->items.v[i], name);
        fprintf(h, "template struct %s<decltype(cgc_kernel_signature(&::%s, 0))>;\n", name, name);
      }
    fprintf(h, "}\n#endif\n");
  }
}
