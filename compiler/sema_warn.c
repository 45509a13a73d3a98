/* sema_warn.c: warnings, a phase of its own: they run on a program
 * without errors once order.c has given each graph its edges. */
#include "sema_internal.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- warnings ---- */

/* The byte ranges of one buffer written so far, sorted and disjoint; past
 * MAX_WRITTEN of them the buffer is no longer followed (no warning), which
 * keeps the pass linear in the program. */
enum { MAX_WRITTEN = 64 };
typedef struct Written {
  int64_t lo[MAX_WRITTEN], hi[MAX_WRITTEN];
  int n;
  bool given_up, warned;
} Written;

static bool covered(const Written *w, int64_t lo, int64_t hi) {
  for (int i = 0; i < w->n; i++)
    if (w->lo[i] <= lo && hi <= w->hi[i])
      return true;
  return lo >= hi;
}

static void add_written(Written *w, int64_t lo, int64_t hi) {
  int64_t l = lo, h = hi;
  int k = 0;
  for (int i = 0; i < w->n; i++) {
    if (w->hi[i] < l || w->lo[i] > h) { /* apart: kept */
      w->lo[k] = w->lo[i], w->hi[k] = w->hi[i], k++;
      continue;
    }
    l = w->lo[i] < l ? w->lo[i] : l; /* touching or overlapping: merged */
    h = w->hi[i] > h ? w->hi[i] : h;
  }
  if (k == MAX_WRITTEN) {
    w->given_up = true;
    return;
  }
  int at = k;
  while (at > 0 && w->lo[at - 1] > l)
    at--;
  memmove(&w->lo[at + 1], &w->lo[at], (size_t)(k - at) * sizeof *w->lo);
  memmove(&w->hi[at + 1], &w->hi[at], (size_t)(k - at) * sizeof *w->hi);
  w->lo[at] = l, w->hi[at] = h;
  w->n = k + 1;
}

/* The buffer an argument views, when it is an owned device buffer not
 * zeroed at create, and still followed. */
static Written *followed(const Graph *g, Written *written, const Arg *a) {
  if (a->kind != ARG_VIEW)
    return NULL;
  const Resource *r = &g->res.v[a->res];
  Written *w = &written[a->res];
  return r->buffer_kind == BUF_DEVICE && !r->zero && !w->given_up && !w->warned ? w : NULL;
}

static void read_before_write(Diag *d, const Graph *g, Written *written, const Node *n,
                              const Arg *a) {
  Written *w = followed(g, written, a);
  if (!w || covered(w, a->offset, a->offset + arg_bytes(g, a)))
    return;
  const Resource *r = &g->res.v[a->res];
  w->warned = true;
  warn_at(d, W_UNINITIALIZED, a->pos,
          "node '%s' reads %s '%s' before anything writes %s: it holds what the memory held "
          "before; zero it at create with '= 0', or write it first",
          n->name, w->n ? "bytes of buffer" : "buffer", r->name->name, w->n ? "them" : "it");
  note_at(d, r->pos, "'%s' is declared here", r->name->name);
}

static void write_before_read(const Graph *g, Written *written, const Arg *a) {
  Written *w = followed(g, written, a);
  if (w)
    add_written(w, a->offset, a->offset + arg_bytes(g, a));
}

/* The operands of a condition that are elements of buffers. */
static void cond_reads(Diag *d, const Graph *g, Written *written, const Node *n,
                       const CheckedCond *c) {
  if (!c)
    return;
  if (c->kind != COND_CMP) {
    cond_reads(d, g, written, n, c->a);
    cond_reads(d, g, written, n, c->b);
    return;
  }
  read_before_write(d, g, written, n, &c->lhs);
  read_before_write(d, g, written, n, &c->rhs);
}

/* The nodes in an order they can run in: as written in a plain graph; in
 * an explicit graph, a topological order of its written edges, a control
 * node before its bodies' nodes, ties in written order (a cycle, which
 * order.c reports, leaves the nodes on it out). */
static uint32_t *run_order(const Graph *g) {
  size_t n = g->nodes.n, k = 0;
  uint32_t *order = xrealloc(NULL, (n + 1) * sizeof *order);
  if (!g->is_explicit) {
    for (size_t v = 0; v < n; v++)
      order[v] = (uint32_t)v;
    return order;
  }
  uint32_t *indeg = xrealloc(NULL, (n + 1) * sizeof *indeg);
  uint32_t *start = xrealloc(NULL, (n + 2) * sizeof *start);
  uint32_t *succ = xrealloc(NULL, (g->written.n + n + 1) * sizeof *succ);
  memset(indeg, 0, (n + 1) * sizeof *indeg);
  memset(start, 0, (n + 2) * sizeof *start);
  for (size_t e = 0; e < g->written.n; e++)
    start[g->written.v[e].from + 1]++, indeg[g->written.v[e].to]++;
  for (size_t v = 0; v < n; v++)
    if (g->nodes.v[v].scope >= 0)
      start[g->nodes.v[v].scope + 1]++, indeg[v]++;
  for (size_t v = 0; v < n; v++)
    start[v + 1] += start[v];
  uint32_t *fill = xrealloc(NULL, (n + 1) * sizeof *fill);
  memcpy(fill, start, (n + 1) * sizeof *fill);
  for (size_t e = 0; e < g->written.n; e++)
    succ[fill[g->written.v[e].from]++] = g->written.v[e].to;
  for (size_t v = 0; v < n; v++)
    if (g->nodes.v[v].scope >= 0)
      succ[fill[g->nodes.v[v].scope]++] = (uint32_t)v;
  for (size_t v = 0; v < n; v++)
    if (!indeg[v])
      order[k++] = (uint32_t)v;
  for (size_t i = 0; i < k; i++)
    for (uint32_t j = start[order[i]]; j < start[order[i] + 1]; j++)
      if (!--indeg[succ[j]])
        order[k++] = succ[j];
  for (size_t v = 0; v < n; v++) /* on a cycle: last, in written order */
    if (indeg[v])
      order[k++] = (uint32_t)v;
  free(fill);
  free(succ);
  free(start);
  free(indeg);
  return order;
}

/* Each node's reads of an owned device buffer (through `in` parameters,
 * copies and conditions), in an order the nodes run in, against the bytes
 * that nodes before it wrote.  A node reads before it writes. */
static void warn_uninitialized(Diag *d, const Graph *g) {
  Written *written = xrealloc(NULL, (g->res.n + 1) * sizeof *written);
  memset(written, 0, (g->res.n + 1) * sizeof *written);
  uint32_t *order = run_order(g);
  for (size_t i = 0; i < g->nodes.n; i++) {
    const Node *n = &g->nodes.v[order[i]];
    for (int pass = 0; pass < 2; pass++) {
      bool reads = pass == 0;
      switch (n->kind) {
      case NK_KERNEL:
      case NK_CAPTURE:
        /* An inout parameter may be written before it is read (a
         * workspace), as C compilers take a pointer that is not const:
         * only `in` reads. */
        for (int j = 0; j < n->nargs; j++) {
          Mode m = n->kernel->params[j].mode;
          if (reads && m == MODE_IN)
            read_before_write(d, g, written, n, &n->args[j]);
          if (!reads && (m & MODE_OUT))
            write_before_read(g, written, &n->args[j]);
        }
        break;
      case NK_COPY:
      case NK_COLLECTIVE: /* in place, args[1] is args[0]: read, then written */
        if (reads)
          read_before_write(d, g, written, n, &n->args[1]);
        else
          write_before_read(g, written, &n->args[0]);
        break;
      case NK_FILL:
        if (!reads)
          write_before_read(g, written, &n->args[0]);
        break;
      case NK_WHILE:
      case NK_IF:
        if (reads)
          cond_reads(d, g, written, n, n->control->cond);
        break;
      case NK_SWITCH: break; /* its selector is a scalar */
      }
    }
  }
  free(order);
  free(written);
}

/* Where a node's statement gives its block(...) (a program without errors
 * gives a kernel node's once), or else the statement's position. */
static Pos block_pos(const Node *n) {
  for (int i = 0; i < n->stmt->nlaunch; i++)
    if (n->stmt->launch[i].key == LK_BLOCK)
      return n->stmt->launch[i].pos;
  return node_pos(n);
}

/* A kernel node whose block is not a whole number of warps. */
static void warn_block_size(Diag *d, const Graph *g) {
  for (size_t v = 0; v < g->nodes.n; v++) {
    const Node *n = &g->nodes.v[v];
    if (!node_kinds[n->kind].launch)
      continue;
    int64_t threads = n->launch->block[0] * n->launch->block[1] * n->launch->block[2];
    if (threads % 32)
      warn_at(d, W_BLOCK_SIZE, block_pos(n),
              "a block of %lld thread%s is not a multiple of the warp size, 32: its last warp "
              "runs %lld of its 32 lanes",
              (long long)threads, plural(threads), (long long)(threads % 32));
  }
}

/* Marks in used (g->res.n flags) the buffers and scalars of g that a node,
 * condition or switch reaches. */
static void mark_used(const Graph *g, bool *used) {
  for (size_t v = 0; v < g->nodes.n; v++)
    for (int k = 0; k < g->nodes.v[v].nacc; k++)
      used[g->nodes.v[v].acc[k].res] = true;
  for (size_t r = 0; r < g->res.n; r++)
    used[r] |= g->res.v[r].kind == RES_SCALAR && pos_set(g->res.v[r].grid_at);
}

/* Whether graphs a and b come from one declaration: variants of one
 * `graph NAME for VAR in [...]` (sema's copies of its item, which share
 * its body). */
static bool same_declaration(const Graph *a, const Graph *b) {
  return a->item == b->item || (a->item->variant_var && a->item->body == b->item->body);
}

/* A buffer or scalar no node, condition or switch reaches in any variant
 * of graph gi's declaration: one that only the nodes of an `if` of
 * constants use is used where some variants leave those nodes out.  Said
 * once, at the declaration's first variant. */
static void warn_unused(Diag *d, const Program *p, size_t gi) {
  const Graph *g = p->graphs.v[gi];
  for (size_t j = 0; j < gi; j++)
    if (same_declaration(p->graphs.v[j], g))
      return;
  bool *used = xrealloc(NULL, g->res.n + 1);
  memset(used, 0, g->res.n + 1);
  mark_used(g, used);
  for (size_t j = gi + 1; j < p->graphs.n; j++) {
    const Graph *o = p->graphs.v[j];
    if (!same_declaration(o, g))
      continue;
    bool *theirs = xrealloc(NULL, o->res.n + 1);
    memset(theirs, 0, o->res.n + 1);
    mark_used(o, theirs);
    /* The variants declare the same resources in the same order (a
     * graph's declarations are all at its top level), so resource r is
     * theirs r; else (not expected) it is found by name. */
    for (size_t r = 0; r < g->res.n; r++) {
      if (used[r])
        continue;
      if (r < o->res.n && o->res.v[r].name == g->res.v[r].name) {
        used[r] = theirs[r];
        continue;
      }
      for (size_t q = 0; q < o->res.n && !used[r]; q++)
        used[r] = theirs[q] && o->res.v[q].name == g->res.v[r].name;
    }
    free(theirs);
  }
  for (size_t r = 0; r < g->res.n; r++)
    if (!used[r])
      warn_at(d, W_UNUSED, g->res.v[r].pos, "%s '%s' is never used",
              g->res.v[r].kind == RES_SCALAR ? "scalar" : "buffer", g->res.v[r].name->name);
  free(used);
}

/* Whether a kernel writes nothing the graph can see: it has pointer
 * parameters, all `in`, and no handle parameter (which sets a loop's
 * condition). */
static bool writes_nothing(const Item *k) {
  bool pointers = false;
  for (int i = 0; i < k->nparams; i++) {
    if (k->params[i].type == TY_HANDLE || (k->params[i].pointer && k->params[i].mode != MODE_IN))
      return false;
    pointers |= k->params[i].pointer;
  }
  return pointers;
}

/* A kernel node whose every pointer argument is `in`: no later node waits
 * for what it does, the common slip of `in` for `out`.  Once
 * a kernel, at its first node in the program. */
static void warn_writes_nothing(Diag *d, const Program *p) {
  VEC(const Item *) seen = {0};
  for (size_t i = 0; i < p->graphs.n; i++) {
    const Graph *g = p->graphs.v[i];
    for (size_t v = 0; v < g->nodes.n; v++) {
      const Node *n = &g->nodes.v[v];
      if (!node_kinds[n->kind].launch || !n->kernel || !writes_nothing(n->kernel))
        continue;
      size_t k = 0;
      while (k < seen.n && seen.v[k] != n->kernel)
        k++;
      if (k < seen.n)
        continue;
      vec_push(&seen, n->kernel);
      warn_at(d, W_WRITES_NOTHING, node_pos(n),
              "kernel '%s' writes nothing the graph can see: all its pointer parameters are "
              "'in', so no later node waits for its results; declare the ones it writes 'out' "
              "or 'inout'",
              n->kernel->name->name);
      note_at(d, n->kernel->name_pos, "'%s' is declared here", n->kernel->name->name);
    }
  }
  vec_free(&seen);
}

void warn_program(Compiler *c, const Program *p) {
  warn_writes_nothing(c->diag, p);
  for (size_t i = 0; i < p->graphs.n; i++) {
    warn_unused(c->diag, p, i);
    warn_uninitialized(c->diag, p->graphs.v[i]);
    warn_block_size(c->diag, p->graphs.v[i]);
  }
}
