/* dot.c: Graphviz output, one digraph per graph.  Node ids are the quoted
 * node names; written edges are drawn bold. */
#include "cgc.h"

static void emit_node(FILE *out, const Node *n, int indent) {
  const NodeKindInfo *k = &node_kinds[n->kind];
  fprintf(out, "%*s\"%s\" [label=\"%s\\n%s%s%s\"%s];\n", indent, "", n->name, n->name, k->name,
          n->kernel ? " " : "", n->kernel ? n->kernel->name->name : "", k->dot);
}

static const char *body_label(const Graph *g, const Node *c, int branch, char *buf, size_t size) {
  (void)g;
  switch (c->kind) {
  case NK_WHILE: snprintf(buf, size, "%s: body", c->name); break;
  case NK_IF: snprintf(buf, size, "%s: %s", c->name, branch ? "else" : "then"); break;
  case NK_SWITCH:
    if (branch == c->default_body)
      snprintf(buf, size, "%s: default", c->name);
    else
      snprintf(buf, size, "%s: case %lld", c->name, (long long)c->case_values[branch]);
    break;
  case NK_KERNEL:
  case NK_COPY:
  case NK_FILL:
  case NK_CAPTURE: snprintf(buf, size, "%s", c->name); break; /* holds no body */
  }
  return buf;
}

/* The nodes of one body, each control node's bodies as nested clusters. */
static void emit_scope(FILE *out, const Graph *g, int64_t scope, int branch, int indent) {
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    if (n->scope != scope || (scope >= 0 && n->branch != branch))
      continue;
    emit_node(out, n, indent);
    for (int b = 0; node_kinds[n->kind].bodies && b < n->nbodies; b++) {
      char label[600];
      fprintf(out, "%*ssubgraph \"cluster_%zu_%d\" {\n%*slabel=\"%s\";\n", indent, "", v, b,
              indent + 2, "", body_label(g, n, b, label, sizeof label));
      emit_scope(out, g, (int64_t)v, b, indent + 2);
      fprintf(out, "%*s}\n", indent, "");
      /* The control node leads into each entry node of its body. */
      for (size_t w = v + 1; w < g->nodes.n; w++) {
        const Node *m = &g->nodes.v[w];
        bool entry = m->scope == (int32_t)v && m->branch == b;
        for (size_t k = 0; entry && k < g->edges.n; k++)
          entry = g->edges.v[k].to != w;
        if (entry)
          fprintf(out, "%*s\"%s\" -> \"%s\" [style=dotted];\n", indent, "", n->name, m->name);
      }
    }
  }
}

void emit_dot(FILE *out, const Program *p) {
  for (size_t i = 0; i < p->graphs.n; i++) {
    const Graph *g = p->graphs.v[i];
    fprintf(out, "digraph \"%s\" {\n", g->name->name);
    fprintf(out, "  node [shape=box, fontname=\"monospace\"];\n");
    emit_scope(out, g, -1, 0, 2);
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
