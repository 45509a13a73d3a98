/* emit_functions.c: a graph's functions in the generated C (language
 * reference, section 17.3), each a call into cgrt. */
#include "emit_internal.h"

#include <stdlib.h>
#include <string.h>

/* The definitions name their parameters cgc_*, which no name of the
 * program can be, so a graph's type never hides behind a parameter. */
/* G_create: the extern pointers into an array, then cgrt_create. */
static void emit_create(FILE *c, const Graph *g, const GraphNames *n) {
  const char *gt = n->type;
  size_t next = 0;
  for (size_t r = 0; r < g->res.n; r++)
    next += is_extern(&g->res.v[r]);
  fprintf(c, "\n");
  if (next) {
    fprintf(c,
            "cgrt_status %s(%s **cgc_out, const %s *cgc_ext, const cgrt_options "
            "*cgc_opt) {\n"
            "  void *cgc_externs[%zu];\n"
            "  cgrt_graph *cgc_graph = NULL;\n"
            "  cgrt_status cgc_status;\n"
            "  if (!cgc_out || !cgc_ext)\n"
            "    return cgrt_invalid(&%s, cgc_out ? \"create: ext is NULL\" : \"create: "
            "out is NULL\");\n",
            n->create, gt, n->ext, next, n->desc);
    size_t e = 0;
    for (size_t r = 0; r < g->res.n; r++)
      if (is_extern(&g->res.v[r]))
        fprintf(c, "  cgc_externs[%zu] = cgc_ext->%s;\n", e++, member_c_name(&g->res.v[r]));
    fprintf(c, "  cgc_status = cgrt_create(&cgc_graph, &%s, cgc_externs, cgc_opt);\n", n->desc);
  } else {
    fprintf(c,
            "cgrt_status %s(%s **cgc_out, const cgrt_options *cgc_opt) {\n"
            "  cgrt_graph *cgc_graph = NULL;\n"
            "  cgrt_status cgc_status;\n"
            "  if (!cgc_out)\n"
            "    return cgrt_invalid(&%s, \"create: out is NULL\");\n"
            "  cgc_status = cgrt_create(&cgc_graph, &%s, NULL, cgc_opt);\n",
            n->create, gt, n->desc, n->desc);
  }
  fprintf(c, "  *cgc_out = (%s *)cgc_graph;\n  return cgc_status;\n}\n\n", gt);
}

/* Per scalar its set and get, per buffer its bind (extern) or address
 * (owned), in the order they are declared. */
static void emit_resource_functions(FILE *c, const Graph *g, const char *gt) {
  uint32_t nb = 0, ns = 0;
  char fn[CNAME_SIZE], fn2[CNAME_SIZE];
  for (size_t r = 0; r < g->res.n; r++) {
    const Resource *res = &g->res.v[r];
    if (res->kind == RES_SCALAR) {
      fprintf(c,
              "cgrt_status %s(%s *cgc_graph, %s cgc_value) {\n"
              "  return cgrt_set_scalar((cgrt_graph *)cgc_graph, %u, &cgc_value);\n}\n\n"
              "cgrt_status %s(%s *cgc_graph, %s *cgc_value) {\n"
              "  return cgrt_get_scalar((cgrt_graph *)cgc_graph, %u, cgc_value);\n}\n\n",
              graph_c_name(fn, GN_SET, g, res), gt, c_type(res->type), ns,
              graph_c_name(fn2, GN_GET, g, res), gt, c_type(res->type), ns);
      ns++;
      continue;
    }
    if (is_extern(res))
      fprintf(c,
              "cgrt_status %s(%s *cgc_graph, void *cgc_ptr) {\n"
              "  return cgrt_bind((cgrt_graph *)cgc_graph, %u, cgc_ptr);\n}\n\n",
              graph_c_name(fn, GN_BIND, g, res), gt, nb);
    else
      fprintf(c,
              "void *%s(%s *cgc_graph) {\n"
              "  return cgrt_buffer((cgrt_graph *)cgc_graph, %u);\n}\n\n",
              graph_c_name(fn, GN_BUFFER, g, res), gt, nb);
    nb++;
  }
}

void emit_functions(FILE *c, const Graph *g) {
  GraphNames n;
  graph_names(&n, g);
  const char *gt = n.type;
  emit_create(c, g, &n);
  fprintf(c,
          "cgrt_status %s(%s *cgc_graph, cudaStream_t cgc_stream) {\n"
          "  return cgrt_launch((cgrt_graph *)cgc_graph, cgc_stream);\n}\n\n",
          n.launch, gt);
  emit_resource_functions(c, g, gt);
  fprintf(c,
          "void *%s(%s *cgc_graph) {\n  return cgrt_user((cgrt_graph *)cgc_graph);\n}\n\n"
          "void %s(%s *cgc_graph) {\n  cgrt_destroy((cgrt_graph *)cgc_graph);\n}\n\n"
          "size_t %s(void) {\n  return cgrt_pool_bytes(&%s);\n}\n",
          n.user, gt, n.destroy, gt, n.pool_bytes, n.desc);
}
