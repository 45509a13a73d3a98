/* emit_internal.h: what the emit files (emit_c.c, emit_header.c,
 * emit_kernels.c, emit_tables.c, emit_functions.c, emit_templates.c) share;
 * private to them.  Each section names the file that implements it. */
#ifndef CGC_EMIT_INTERNAL_H
#define CGC_EMIT_INTERNAL_H

#include "cgc.h"

/* The kernels (or the capture functions) some graph calls, in declaration
 * order. */
typedef struct Kernels {
  const Item **v;
  size_t n;
} Kernels;

/* A graph's names in C that its functions and declarations spell. */
typedef struct GraphNames {
  char type[CNAME_SIZE], ext[CNAME_SIZE], create[CNAME_SIZE], launch[CNAME_SIZE],
      destroy[CNAME_SIZE], user[CNAME_SIZE], pool_bytes[CNAME_SIZE], desc[CNAME_SIZE];
} GraphNames;

/* ---- emit_c.c: C's spelling of types, strings and comments ---- */
const char *c_type(Type t);
const char *cuda_type(Type t);
const char *abi_type_name(char *buf, size_t size, Type t);
const char *shape(char *buf, size_t size, const Resource *r);
void emit_string(FILE *f, const char *s);
void emit_comment_text(FILE *f, const char *s);
void emit_generated_line(FILE *f, const char *source);
bool has_half_param(const Item *k);
void emit_params(FILE *h, const Item *k, const char *sep, bool cuda);
bool is_extern(const Resource *r);
void graph_names(GraphNames *n, const Graph *g);
/* The kernels the graphs use (free .v); an index among them; whether all
 * are linked in (then the tables need no kernel_from). */
Kernels used_kernels(Compiler *cc, const Program *p, NodeKind kind);
size_t kernel_index(const Kernels *k, const Item *kernel);
bool all_linked(const Kernels *k);

/* ---- emit_header.c: the header, and the check of the kernels'
 * definitions, which the companion (emit_templates.c) shares ---- */
void emit_header(FILE *h, Compiler *cc, const Program *p, const char *source,
                 const char *header);
void emit_param_cxx_type(FILE *h, const Param *p);
void emit_check_helpers(FILE *h);
void emit_kernel_check(FILE *h, const Item *k, const char *name);

/* ---- emit_kernels.c: the kernel table (returns the number of modules
 * embedded) and the capture callers ---- */
size_t emit_kernels(FILE *c, Compiler *cc, const Kernels *k);
void emit_capture_callers(FILE *c, const Kernels *captures);

/* ---- emit_tables.c: a graph's tables and description ---- */
void emit_tables(FILE *c, Diag *d, const Kernels *k, const Kernels *captures, size_t nmodules,
                 const Graph *g, const char *source);

/* ---- emit_functions.c: a graph's functions ---- */
void emit_functions(FILE *c, const Graph *g);

#endif
