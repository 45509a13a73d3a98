/* dot.c: Graphviz output, one digraph per graph.  Node ids are the quoted
 * node names; written edges are drawn bold. */
#include "cgc.h"

#include <stdlib.h>
#include <string.h>

/* "(8, 4)": an extent list without its trailing 1s. */
static void extents(FILE *out, const char *what, const int64_t v[3]) {
  int n = v[2] != 1 ? 3 : v[1] != 1 ? 2 : 1;
  fprintf(out, "%s(", what);
  for (int i = 0; i < n; i++)
    fprintf(out, "%s%lld", i ? ", " : "", (long long)v[i]);
  fputc(')', out);
}

/* With details, a kernel node's label has its launch configuration, and a
 * copy's or fill's its bytes. */
static void emit_node(FILE *out, const Graph *g, const Node *n, int indent, bool details) {
  const NodeKindInfo *k = &node_kinds[n->kind];
  if (k->collective) {
    const Collective *cl = n->collective;
    fprintf(out, "%*s\"%s\" [label=\"%s\\n%s", indent, "", n->name, n->name,
            collective_kinds[cl->which].name);
    if (cl->which == CGRT_BROADCAST)
      fprintf(out, " from %lld", (long long)cl->root);
    else if (cl->which != CGRT_ALL_GATHER)
      fprintf(out, " %s", reductions[cl->reduce_op].name);
    if (details)
      fprintf(out, "\\n%lld elements in, %lld out", (long long)cl->send_count,
              (long long)cl->recv_count);
    fprintf(out, "\"%s];\n", k->dot);
    return;
  }
  fprintf(out, "%*s\"%s\" [label=\"%s\\n%s%s%s", indent, "", n->name, n->name, k->name,
          n->kernel ? " " : "", n->kernel ? n->kernel->name->name : "");
  if (details && k->launch) {
    const Launch *l = n->launch;
    fputs("\\n", out);
    extents(out, "grid", l->grid);
    if (l->grid_code)
      fputs(" at the bounds", out); /* it follows scalars */
    fputc(' ', out);
    extents(out, "block", l->block);
    if (l->smem)
      fprintf(out, " smem(%lld)", (long long)l->smem);
    if (l->has_cluster) {
      fputc(' ', out);
      extents(out, "cluster", l->cluster);
    }
    if (l->has_priority)
      fprintf(out, " priority(%lld)", (long long)l->priority);
  } else if (details && k->memory) {
    fprintf(out, "\\n%lld bytes", (long long)arg_bytes(g, &n->args[0]));
  }
  fprintf(out, "\"%s];\n", k->dot);
}

/* With details, why an edge is there: written, or the buffer or scalar
 * that orders its nodes and how. */
static void edge_label(FILE *out, const Graph *g, const Edge *e) {
  if (e->written)
    fputs("label=\"written\"", out);
  else if (e->res < 0) /* collectives, or a loop kept apart */
    fprintf(out, "label=\"%s\"", edge_reason(e));
  else
    fprintf(out, "label=\"%s: %s\"", g->res.v[e->res].name->name, edge_reason(e));
}

static const char *body_label(const Graph *g, const Node *c, int branch, char *buf, size_t size) {
  (void)g;
  switch (c->kind) {
  case NK_WHILE: snprintf(buf, size, "%s: body", c->name); break;
  case NK_IF: snprintf(buf, size, "%s: %s", c->name, branch ? "else" : "then"); break;
  case NK_SWITCH:
    if (branch == c->control->default_body)
      snprintf(buf, size, "%s: default", c->name);
    else
      snprintf(buf, size, "%s: case %lld", c->name, (long long)c->control->case_values[branch]);
    break;
  case NK_KERNEL:
  case NK_COPY:
  case NK_FILL:
  case NK_CAPTURE:
  case NK_COLLECTIVE: snprintf(buf, size, "%s", c->name); break; /* holds no body */
  }
  return buf;
}

/* Each body's nodes in order, and which nodes have a predecessor: worked
 * out once, so that writing a graph costs its nodes and edges, however
 * many bodies it has. */
typedef struct Bodies {
  uint32_t *base;    /* a control node's first body */
  uint32_t *first;   /* per body: its first node in `members` */
  uint32_t *members; /* nodes, body after body */
  bool *has_pred;
} Bodies;

static Bodies bodies_new(const Graph *g) {
  size_t n = g->nodes.n, nbodies = 1;
  Bodies b = {.base = xrealloc(NULL, (n + 1) * sizeof *b.base)};
  uint32_t *body = xrealloc(NULL, (n + 1) * sizeof *body);
  for (size_t v = 0; v < n; v++) {
    const Node *nd = &g->nodes.v[v];
    body[v] = nd->scope < 0 ? 0 : b.base[nd->scope] + (uint32_t)nd->branch;
    if (node_kinds[nd->kind].bodies) {
      b.base[v] = (uint32_t)nbodies;
      nbodies += (size_t)nd->control->nbodies;
    }
  }
  b.first = xrealloc(NULL, (nbodies + 1) * sizeof *b.first);
  memset(b.first, 0, (nbodies + 1) * sizeof *b.first);
  for (size_t v = 0; v < n; v++)
    b.first[body[v] + 1]++;
  for (size_t i = 0; i < nbodies; i++)
    b.first[i + 1] += b.first[i];
  uint32_t *fill = xrealloc(NULL, (nbodies + 1) * sizeof *fill);
  memcpy(fill, b.first, (nbodies + 1) * sizeof *fill);
  b.members = xrealloc(NULL, (n + 1) * sizeof *b.members);
  for (size_t v = 0; v < n; v++)
    b.members[fill[body[v]]++] = (uint32_t)v;
  b.has_pred = xrealloc(NULL, n + 1);
  memset(b.has_pred, 0, n + 1);
  for (size_t k = 0; k < g->edges.n; k++)
    b.has_pred[g->edges.v[k].to] = true;
  free(fill);
  free(body);
  return b;
}

static void bodies_free(Bodies *b) {
  free(b->base);
  free(b->first);
  free(b->members);
  free(b->has_pred);
}

/* The nodes of one body, each control node's bodies as nested clusters. */
static void emit_scope(FILE *out, const Graph *g, const Bodies *bs, uint32_t body, int indent,
                       bool details) {
  for (uint32_t i = bs->first[body]; i < bs->first[body + 1]; i++) {
    uint32_t v = bs->members[i];
    const Node *n = &g->nodes.v[v];
    emit_node(out, g, n, indent, details);
    for (int b = 0; node_kinds[n->kind].bodies && b < n->control->nbodies; b++) {
      char label[600];
      uint32_t inner = bs->base[v] + (uint32_t)b;
      fprintf(out, "%*ssubgraph \"cluster_%u_%d\" {\n%*slabel=\"%s\";\n", indent, "", v, b,
              indent + 2, "", body_label(g, n, b, label, sizeof label));
      emit_scope(out, g, bs, inner, indent + 2, details);
      fprintf(out, "%*s}\n", indent, "");
      /* The control node leads into each entry node of its body. */
      for (uint32_t j = bs->first[inner]; j < bs->first[inner + 1]; j++)
        if (!bs->has_pred[bs->members[j]])
          fprintf(out, "%*s\"%s\" -> \"%s\" [style=dotted];\n", indent, "", n->name,
                  g->nodes.v[bs->members[j]].name);
    }
  }
}

void emit_dot(FILE *out, const Program *p, bool details) {
  for (size_t i = 0; i < p->graphs.n; i++) {
    const Graph *g = p->graphs.v[i];
    fprintf(out, "digraph \"%s\" {\n", g->name->name);
    fprintf(out, "  node [shape=box, fontname=\"monospace\"];\n");
    if (details)
      fprintf(out, "  edge [fontname=\"monospace\", fontsize=10];\n");
    Bodies bs = bodies_new(g);
    emit_scope(out, g, &bs, 0, 2, details);
    bodies_free(&bs);
    for (size_t k = 0; k < g->edges.n; k++) {
      const Edge *e = &g->edges.v[k];
      const char *style = e->written && e->programmatic ? "style=\"bold,dashed\""
                          : e->written                  ? "style=bold"
                          : e->programmatic             ? "style=dashed"
                                                        : NULL;
      fprintf(out, "  \"%s\" -> \"%s\"", g->nodes.v[e->from].name, g->nodes.v[e->to].name);
      if (style || details) {
        fprintf(out, " [%s%s", style ? style : "", style && details ? ", " : "");
        if (details)
          edge_label(out, g, e);
        fputc(']', out);
      }
      fputs(";\n", out);
    }
    fprintf(out, "}\n");
  }
}
