/* dot.c: Graphviz output, one digraph per graph.  Node ids are the quoted
 * node names; written edges are drawn bold. */
#include "cgc.h"

static const char *kind_label(const Node *n) {
  switch (n->kind) {
  case CALL_KERNEL: return n->kernel->name->name;
  case CALL_COPY: return "copy";
  case CALL_FILL: return "fill";
  }
  return "";
}

void emit_dot(FILE *out, const Program *p) {
  for (size_t i = 0; i < p->graphs.n; i++) {
    const Graph *g = p->graphs.v[i];
    fprintf(out, "digraph \"%s\" {\n", g->name->name);
    fprintf(out, "  node [shape=box, fontname=\"monospace\"];\n");
    for (size_t v = 0; v < g->nodes.n; v++) {
      const Node *n = &g->nodes.v[v];
      fprintf(out, "  \"%s\" [label=\"%s\\n%s%s\"%s];\n", n->name, n->name,
              n->kind == CALL_KERNEL ? "kernel " : "", kind_label(n),
              n->kind == CALL_KERNEL ? "" : ", style=rounded");
    }
    for (size_t k = 0; k < g->edges.n; k++) {
      const Edge *e = &g->edges.v[k];
      fprintf(out, "  \"%s\" -> \"%s\"%s;\n", g->nodes.v[e->from].name, g->nodes.v[e->to].name,
              e->written && e->programmatic ? " [style=\"bold,dashed\"]"
              : e->written                  ? " [style=bold]"
              : e->programmatic             ? " [style=dashed]"
                                            : "");
    }
    fprintf(out, "}\n");
  }
}
