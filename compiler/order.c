/* order.c: the edges of a graph (language reference, section 6).
 *
 * Data flow: every buffer and scalar keeps a map of byte segments, each
 * with its last writer and the readers since that write (a treap keyed by
 * segment start).  A node's access adds an edge from each such writer, and
 * for a write from each such reader; this set of edges has the same
 * transitive closure as "an edge for every conflicting pair" at a cost
 * proportional to the edges it finds.
 *
 * Reduction and hazards ask "does u reach v?" with a depth-first search
 * over predecessors that stops below the topological position of the
 * oldest candidate and as soon as every candidate is settled.  Searching
 * the unreduced predecessors finds the short way round: linear time for
 * chains, layers, fan-in and fan-out. */
#include "cgc.h"

#include <stdlib.h>
#include <string.h>

/* Why an inferred edge is there: a resource's data flow, or two collectives,
 * which run in the order written (every rank must run a communicator's
 * collectives in one order, or they wait for each other forever). */
/* WHY_RMW: the later node reads and writes what the earlier wrote. */
enum { WHY_RAW, WHY_WAR, WHY_WAW, WHY_RMW, WHY_COMM, WHY_APART };

/* ---- segments of one resource ---- */

typedef struct Seg {
  int64_t lo, hi;
  int32_t writer; /* -1: none since the graph began */
  uint32_t prio;
  uint32_t *readers, nreaders, cap;
  struct Seg *l, *r;
} Seg;

typedef struct Infer {
  Compiler *c;
  const Graph *g;
  EdgeVec *out;
  uint32_t rng;
  int64_t max_edges;
  bool over; /* the edge limit was reached */
} Infer;

static Seg *seg_new(Infer *in, int64_t lo, int64_t hi, int32_t writer) {
  Seg *s = xrealloc(NULL, sizeof *s);
  memset(s, 0, sizeof *s);
  s->lo = lo;
  s->hi = hi;
  s->writer = writer;
  in->rng = in->rng * 1664525u + 1013904223u;
  s->prio = in->rng;
  return s;
}

static void seg_free_tree(Seg *s) {
  if (!s)
    return;
  seg_free_tree(s->l);
  seg_free_tree(s->r);
  free(s->readers);
  free(s);
}

static void seg_add_reader(Seg *s, uint32_t node) {
  if (s->nreaders && s->readers[s->nreaders - 1] == node)
    return;
  if (s->nreaders == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 4;
    s->readers = xrealloc(s->readers, s->cap * sizeof *s->readers);
  }
  s->readers[s->nreaders++] = node;
}

/* Splits t into segments starting before key (*a) and the rest (*b). */
static void split(Seg *t, int64_t key, Seg **a, Seg **b) {
  if (!t) {
    *a = *b = NULL;
  } else if (t->lo < key) {
    split(t->r, key, &t->r, b);
    *a = t;
  } else {
    split(t->l, key, a, &t->l);
    *b = t;
  }
}

static Seg *merge(Seg *a, Seg *b) {
  if (!a || !b)
    return a ? a : b;
  if (a->prio > b->prio) {
    a->r = merge(a->r, b);
    return a;
  }
  b->l = merge(a, b->l);
  return b;
}

/* Cuts the last segment of t at `at` if it straddles it; returns the part
 * after `at`, or NULL. */
static Seg *cut_last(Infer *in, Seg *t, int64_t at) {
  if (!t)
    return NULL;
  while (t->r)
    t = t->r;
  if (t->hi <= at)
    return NULL;
  Seg *rest = seg_new(in, at, t->hi, t->writer);
  for (uint32_t i = 0; i < t->nreaders; i++)
    seg_add_reader(rest, t->readers[i]);
  t->hi = at;
  return rest;
}

static void add_edge(Infer *in, uint32_t from, uint32_t to, int res, int why) {
  if (from == to || in->over)
    return;
  if (++in->c->nedges > in->max_edges) {
    /* Reported at the node whose accesses need one edge too many. */
    error_at(in->c->diag, node_pos(&in->g->nodes.v[to]),
             "the program has more than %lld " EDGE_LIMIT_TEXT, (long long)in->max_edges);
    in->over = true;
    return;
  }
  Edge e = {.from = from, .to = to, .res = res, .why = (uint8_t)why};
  vec_push(in->out, e);
}

static void visit(Infer *in, Seg *s, uint32_t node, int res, AccessMode mode) {
  if (!s || in->over)
    return;
  visit(in, s->l, node, res, mode);
  if (s->writer >= 0)
    add_edge(in, (uint32_t)s->writer, node, res,
             mode == ACC_RW     ? WHY_RMW
             : mode & ACC_WRITE ? WHY_WAW
                                : WHY_RAW);
  if (mode & ACC_WRITE)
    for (uint32_t i = 0; i < s->nreaders; i++)
      add_edge(in, s->readers[i], node, res, WHY_WAR);
  else
    seg_add_reader(s, node);
  visit(in, s->r, node, res, mode);
}

static Seg *access(Infer *in, Seg *root, uint32_t node, int res, const Access *a) {
  Seg *left, *mid, *right;
  split(root, a->lo, &left, &mid);
  mid = merge(cut_last(in, left, a->lo), mid);
  split(mid, a->hi, &mid, &right);
  right = merge(cut_last(in, mid, a->hi), right);
  visit(in, mid, node, res, a->mode);
  if (a->mode & ACC_WRITE) {
    seg_free_tree(mid);
    mid = seg_new(in, a->lo, a->hi, (int32_t)node);
  }
  return merge(merge(left, mid), right);
}

/* The data-flow edges of the nodes taken in `order`; false when the edge
 * limit was reached (reported).  `roots` has a NULL per resource of the
 * graph, and is left so: only the resources these nodes touch cost time,
 * however many bodies of a large graph are ordered one after another. */
static bool infer_edges(Compiler *c, Graph *g, const uint32_t *order, EdgeVec *out, Seg **roots) {
  Infer in = {.c = c, .g = g, .out = out, .rng = 12345,
              .max_edges = c->max_edges ? c->max_edges : MAX_EDGES};
  VEC(int32_t) touched = {0};
  int64_t last_collective = -1;
  /* A loop whose body's kernel sets its handle runs apart from the other
   * control nodes of its graph (such a loop is at the top and holds none):
   * on the H200 such a loop beside another conditional node made launches
   * fail now and then.  It follows every control node since the last such
   * loop, and every control node after it follows it. */
  int64_t last_apart = -1;
  VEC(uint32_t) since = {0};
  for (size_t i = 0; i < g->nodes.n && !in.over; i++) {
    const Node *n = &g->nodes.v[order[i]];
    if (node_kinds[n->kind].collective) {
      if (last_collective >= 0)
        add_edge(&in, (uint32_t)last_collective, order[i], -1, WHY_COMM);
      last_collective = order[i];
    }
    if (node_kinds[n->kind].bodies) {
      if (node_kinds[n->kind].loop && pos_set(n->control->handle_at)) {
        for (size_t j = 0; j < since.n; j++)
          add_edge(&in, since.v[j], order[i], -1, WHY_APART);
        if (!since.n && last_apart >= 0)
          add_edge(&in, (uint32_t)last_apart, order[i], -1, WHY_APART);
        since.n = 0;
        last_apart = order[i];
      } else {
        if (last_apart >= 0)
          add_edge(&in, (uint32_t)last_apart, order[i], -1, WHY_APART);
        vec_push(&since, order[i]);
      }
    }
    for (int k = 0; k < n->nacc; k++) {
      const Access *a = &n->acc[k];
      if (a->hi <= a->lo)
        continue;
      if (!roots[a->res]) {
        roots[a->res] = seg_new(&in, 0, g->res.v[a->res].bytes, -1);
        vec_push(&touched, a->res);
      }
      roots[a->res] = access(&in, roots[a->res], order[i], a->res, a);
    }
  }
  for (size_t i = 0; i < touched.n; i++) {
    seg_free_tree(roots[touched.v[i]]);
    roots[touched.v[i]] = NULL;
  }
  vec_free(&touched);
  vec_free(&since);
  return !in.over;
}

/* ---- edge sets ---- */

static int cmp_to_from(const void *pa, const void *pb) {
  const Edge *a = pa, *b = pb;
  if (a->to != b->to)
    return a->to < b->to ? -1 : 1;
  if (a->from != b->from)
    return a->from < b->from ? -1 : 1;
  return (int)b->written - (int)a->written; /* written first */
}

static int cmp_u32(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  return a < b ? -1 : a > b;
}

static int cmp_from_to(const void *pa, const void *pb) {
  const Edge *a = pa, *b = pb;
  if (a->from != b->from)
    return a->from < b->from ? -1 : 1;
  return a->to < b->to ? -1 : a->to > b->to;
}

/* qsort of e[0..n) by cmp, stable as glibc's, without its copy of the
 * edges (it merges through a buffer as large as its array): the edges'
 * indices are merge-sorted, and the edges moved into their places along
 * the permutation's cycles. */
static void sort_edges(Edge *e, size_t n, int (*cmp)(const void *, const void *)) {
  if (n < 2)
    return;
  uint32_t *at = xrealloc(NULL, n * sizeof *at);
  uint32_t *tmp = xrealloc(NULL, n * sizeof *tmp);
  for (size_t i = 0; i < n; i++)
    at[i] = (uint32_t)i;
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = mid + width < n ? mid + width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = cmp(&e[at[j]], &e[at[i]]) < 0 ? at[j++] : at[i++];
      while (i < mid)
        tmp[k++] = at[i++];
      while (j < hi)
        tmp[k++] = at[j++];
    }
    uint32_t *t = at;
    at = tmp;
    tmp = t;
  }
  free(tmp);
  /* e[i] takes e[at[i]]; a place filled gets at[i] = i. */
  for (size_t i = 0; i < n; i++) {
    if (at[i] == i)
      continue;
    Edge first = e[i];
    size_t j = i;
    while (at[j] != i) {
      size_t k = at[j];
      e[j] = e[k];
      at[j] = (uint32_t)j;
      j = k;
    }
    e[j] = first;
    at[j] = (uint32_t)j;
  }
  free(at);
}

/* Sorts by (to, from) and drops duplicates, keeping a written one. */
static void dedupe(Edge *e, size_t *n) {
  if (!*n)
    return;
  sort_edges(e, *n, cmp_to_from);
  size_t k = 0;
  for (size_t i = 0; i < *n; i++)
    if (!k || e[k - 1].to != e[i].to || e[k - 1].from != e[i].from)
      e[k++] = e[i];
  *n = k;
}

/* Predecessor lists over edges sorted by (to, from). */
typedef struct Preds {
  uint32_t *start; /* n + 1 */
  const Edge *e;
} Preds;

static Preds preds_build(size_t n, const Edge *e, size_t m) {
  Preds p = {.start = xrealloc(NULL, (n + 1) * sizeof *p.start), .e = e};
  size_t j = 0;
  for (size_t v = 0; v <= n; v++) {
    p.start[v] = (uint32_t)j;
    while (j < m && e[j].to == v)
      j++;
  }
  return p;
}

static const Edge *find_edge(const Preds *p, uint32_t from, uint32_t to) {
  for (uint32_t i = p->start[to]; i < p->start[to + 1]; i++)
    if (p->e[i].from == from)
      return &p->e[i];
  return NULL;
}

/* ---- topological order ---- */

/* Kahn's algorithm taking the lowest-numbered ready node first, so the
 * order is the written order wherever the edges allow.  Returns the number
 * of nodes placed; fewer than all means a cycle. */
static size_t topo_sort(size_t n, const Edge *e, size_t m, uint32_t *order) {
  uint32_t *indeg = xrealloc(NULL, (n + 1) * sizeof *indeg);
  uint32_t *succ_start = xrealloc(NULL, (n + 2) * sizeof *succ_start);
  uint32_t *succ = xrealloc(NULL, (m + 1) * sizeof *succ);
  memset(indeg, 0, (n + 1) * sizeof *indeg);
  memset(succ_start, 0, (n + 2) * sizeof *succ_start);
  for (size_t i = 0; i < m; i++) {
    indeg[e[i].to]++;
    succ_start[e[i].from + 1]++;
  }
  for (size_t v = 0; v < n; v++)
    succ_start[v + 1] += succ_start[v];
  uint32_t *fill = xrealloc(NULL, (n + 1) * sizeof *fill);
  memcpy(fill, succ_start, (n + 1) * sizeof *fill);
  for (size_t i = 0; i < m; i++)
    succ[fill[e[i].from]++] = e[i].to;
  free(fill);
  /* A binary min-heap of ready nodes. */
  uint32_t *heap = xrealloc(NULL, (n + 1) * sizeof *heap);
  size_t hn = 0, placed = 0;
  for (size_t v = 0; v < n; v++)
    if (!indeg[v])
      heap[hn++] = (uint32_t)v; /* ascending: already a heap */
  while (hn) {
    uint32_t v = heap[0];
    heap[0] = heap[--hn];
    for (size_t i = 0;;) {
      size_t l = 2 * i + 1, r = l + 1, m2 = i;
      if (l < hn && heap[l] < heap[m2])
        m2 = l;
      if (r < hn && heap[r] < heap[m2])
        m2 = r;
      if (m2 == i)
        break;
      uint32_t t = heap[i];
      heap[i] = heap[m2];
      heap[m2] = t;
      i = m2;
    }
    order[placed++] = v;
    for (uint32_t i = succ_start[v]; i < succ_start[v + 1]; i++)
      if (!--indeg[succ[i]]) {
        size_t j = hn++;
        heap[j] = succ[i];
        while (j && heap[(j - 1) / 2] > heap[j]) {
          uint32_t t = heap[j];
          heap[j] = heap[(j - 1) / 2];
          heap[(j - 1) / 2] = t;
          j = (j - 1) / 2;
        }
      }
  }
  free(heap);
  free(indeg);
  free(succ_start);
  free(succ);
  return placed;
}

static const char *why_text(int why) {
  return why == WHY_RAW ? "reads" : why == WHY_RMW ? "reads and writes" : "writes";
}

const char *edge_reason(const Edge *e) {
  switch (e->why) {
  case WHY_COMM: return "collectives in order";
  case WHY_APART: return "a loop whose body sets its handle runs apart";
  case WHY_RAW: return "read after write";
  case WHY_WAR: return "write after read";
  case WHY_RMW: return "read and write after write";
  default: return "write after write";
  }
}

static void describe_step(Compiler *c, Graph *g, const Edge *e) {
  const Node *a = &g->nodes.v[e->from], *b = &g->nodes.v[e->to];
  if (e->written) {
    note_at(c->diag, e->pos, "'%s -> %s' is written here", a->name, b->name);
    return;
  }
  if (e->why == WHY_COMM) {
    note_at(c->diag, node_pos(b), "'%s' follows '%s' because collectives run in the order written",
            b->name, a->name);
    return;
  }
  if (e->why == WHY_APART) {
    note_at(c->diag, node_pos(b),
            "'%s' follows '%s' because a loop whose body sets its handle runs apart from the "
            "other control nodes",
            b->name, a->name);
    return;
  }
  const char *res = g->res.v[e->res].name->name;
  note_at(c->diag, node_pos(b), "'%s' follows '%s' because it %s '%s', which '%s' %s", b->name,
          a->name, why_text(e->why), res, a->name, e->why == WHY_WAR ? "reads" : "writes");
}

/* The innermost for statement whose body (or a while's or if's body in
 * it) holds the statement at p, with `loop` the one around body; NULL
 * when there is none. */
static const Stmt *loop_of(Stmt *const *body, int n, Pos p, const Stmt *loop) {
  for (int i = 0; i < n; i++) {
    const Stmt *st = body[i];
    if (st->pos.off == p.off && st->kind != ST_FOR)
      return loop;
    if (st->kind == ST_FOR || st->kind == ST_WHILE || st->kind == ST_IF) {
      const Stmt *in = loop_of(st->body, st->nbody, p, st->kind == ST_FOR ? st : loop);
      if (in)
        return in;
    }
  }
  return NULL;
}

/* Reports one cycle among the nodes that topo_sort could not place. */
static void report_cycle(Compiler *c, Graph *g, const Preds *p, const uint32_t *order,
                         size_t placed) {
  size_t n = g->nodes.n;
  uint8_t *done = xrealloc(NULL, n);
  memset(done, 0, n);
  for (size_t i = 0; i < placed; i++)
    done[order[i]] = 1;
  uint32_t start = 0;
  while (done[start])
    start++;
  /* Walk back along unplaced predecessors until a node repeats. */
  uint32_t *seen_at = xrealloc(NULL, n * sizeof *seen_at);
  uint32_t *path = xrealloc(NULL, (n + 1) * sizeof *path);
  memset(seen_at, 0xff, n * sizeof *seen_at);
  size_t len = 0;
  uint32_t v = start;
  while (seen_at[v] == UINT32_MAX) {
    seen_at[v] = (uint32_t)len;
    path[len++] = v;
    for (uint32_t i = p->start[v]; i < p->start[v + 1]; i++)
      if (!done[p->e[i].from]) {
        v = p->e[i].from;
        break;
      }
  }
  /* path[seen_at[v] .. len) runs backwards round the cycle. */
  size_t first = seen_at[v], k = len - first;
  uint32_t *cyc = xrealloc(NULL, (k + 1) * sizeof *cyc);
  for (size_t i = 0; i < k; i++)
    cyc[i] = path[len - 1 - i];
  /* Start the message at the lowest-numbered node, for a stable text. */
  size_t rot = 0;
  for (size_t i = 1; i < k; i++)
    if (cyc[i] < cyc[rot])
      rot = i;
  char *text = NULL;
  size_t tlen = 0;
  Pos at = node_pos(&g->nodes.v[cyc[rot]]);
  bool have_written = false;
  for (size_t i = 0; i <= k; i++) {
    const char *name = g->nodes.v[cyc[(rot + i) % k]].name;
    size_t add = strlen(name) + 4;
    text = xrealloc(text, tlen + add + 1);
    tlen += (size_t)snprintf(text + tlen, add + 1, "%s%s", i ? " -> " : "", name);
    if (i < k && !have_written) {
      const Edge *e = find_edge(p, cyc[(rot + i) % k], cyc[(rot + i + 1) % k]);
      if (e && e->written) {
        at = e->pos;
        have_written = true;
      }
    }
  }
  error_at(c->diag, at, "edges of graph '%s' form a cycle: %s", g->name->name, text);
  for (size_t i = 0; i < k; i++)
    describe_step(c, g, find_edge(p, cyc[(rot + i) % k], cyc[(rot + i + 1) % k]));
  free(text);
  free(cyc);
  free(path);
  free(seen_at);
  free(done);
}

/* ---- reachability ---- */

/* Interval labels (GRAIL: Yildirim, Chaoji and Zaki, 2010).  A depth-first
 * walk numbers each node after its successors (post) and gives it the
 * least number below it (low).  If u reaches v, v's interval [low, post]
 * lies within u's; so a node whose interval lies outside every target's
 * in some labelling cannot lead back to a target, and a search skips it.
 * Two walks, children taken in opposite orders, prune more than one. */
enum { NLABELS = 2, FEW_TARGETS = 8 };

typedef struct Labels {
  uint32_t *low[NLABELS], *post[NLABELS];
} Labels;

static Labels labels_new(size_t n, const Edge *e, size_t m) {
  Labels lab;
  uint32_t *start = xrealloc(NULL, (n + 2) * sizeof *start);
  uint32_t *succ = xrealloc(NULL, (m + 1) * sizeof *succ);
  memset(start, 0, (n + 2) * sizeof *start);
  for (size_t i = 0; i < m; i++)
    start[e[i].from + 1]++;
  for (size_t v = 0; v < n; v++)
    start[v + 1] += start[v];
  uint32_t *fill = xrealloc(NULL, (n + 1) * sizeof *fill);
  memcpy(fill, start, (n + 1) * sizeof *fill);
  for (size_t i = 0; i < m; i++)
    succ[fill[e[i].from]++] = e[i].to;
  uint32_t *stack = xrealloc(NULL, (n + 1) * sizeof *stack);
  uint32_t *next = fill; /* per node on the stack: successors taken so far */
  for (int l = 0; l < NLABELS; l++) {
    uint32_t *low = lab.low[l] = xrealloc(NULL, (n + 1) * sizeof *low);
    uint32_t *post = lab.post[l] = xrealloc(NULL, (n + 1) * sizeof *post);
    memset(post, 0, (n + 1) * sizeof *post); /* 0: not yet numbered */
    memset(next, 0, (n + 1) * sizeof *next);
    uint32_t count = 0;
    for (size_t r = 0; r < n; r++) {
      uint32_t root = (uint32_t)(l ? n - 1 - r : r);
      if (post[root] || next[root])
        continue;
      size_t sp = 0;
      stack[sp++] = root;
      next[root] = 1;
      while (sp) {
        uint32_t v = stack[sp - 1], deg = start[v + 1] - start[v];
        if (next[v] <= deg) {
          uint32_t k = next[v]++ - 1;
          uint32_t w = succ[start[v] + (l ? deg - 1 - k : k)];
          if (!post[w] && !next[w]) {
            next[w] = 1;
            stack[sp++] = w;
          }
          continue;
        }
        sp--;
        post[v] = ++count;
        low[v] = post[v];
        for (uint32_t i = start[v]; i < start[v + 1]; i++)
          if (low[succ[i]] < low[v])
            low[v] = low[succ[i]];
      }
    }
  }
  free(stack);
  free(fill);
  free(start);
  free(succ);
  return lab;
}

static void labels_free(Labels *lab) {
  for (int l = 0; l < NLABELS; l++) {
    free(lab->low[l]);
    free(lab->post[l]);
  }
}

static bool within(const Labels *lab, uint32_t v, uint32_t t) {
  for (int l = 0; l < NLABELS; l++)
    if (lab->low[l][v] < lab->low[l][t] || lab->post[l][v] > lab->post[l][t])
      return false;
  return true;
}

/* The searches of the whole program stop after SEARCH_STEPS_PER_ITEM steps
 * for each node and edge ordered so far, plus SEARCH_STEPS_BASE, so that
 * ordering takes linear time however the edges are tangled. */
static int64_t search_budget(const Compiler *c) {
  return c->max_search_steps ? c->max_search_steps
                             : SEARCH_STEPS_BASE + SEARCH_STEPS_PER_ITEM * c->search_items;
}

static bool spend(Compiler *c, size_t steps) {
  c->search_steps += (int64_t)steps;
  return c->search_steps <= search_budget(c);
}

typedef struct Search {
  const Preds *p;
  const uint32_t *topo; /* node -> position in the topological order */
  const Labels *lab;
  uint32_t *visited;    /* stamp per node */
  uint32_t *target;     /* stamp per node: a candidate still unsettled */
  uint32_t *stack;
  uint32_t stamp;
  const bool *usable;   /* per edge; NULL: every edge */
  Compiler *c;          /* its search budget */
} Search;

static bool promising(const Search *s, uint32_t w, const uint32_t *targets, size_t ntargets,
                      const uint32_t *hull_low, const uint32_t *hull_post) {
  for (int l = 0; l < NLABELS; l++)
    if (s->lab->low[l][w] < hull_low[l] || s->lab->post[l][w] > hull_post[l])
      return false;
  if (ntargets > FEW_TARGETS)
    return true;
  for (size_t i = 0; i < ntargets; i++)
    if (within(s->lab, w, targets[i]))
      return true;
  return false;
}

/* Marks found[i] for each targets[i] reached by walking back from the
 * nodes in `from` (those count as reached).  Stops once `want` are found.
 * False when the program's budget of steps is spent. */
static bool search(Search *s, const uint32_t *from, size_t nfrom, const uint32_t *targets,
                   size_t ntargets, bool *found, size_t want) {
  s->stamp++;
  uint32_t floor = UINT32_MAX;
  for (size_t i = 0; i < ntargets; i++) {
    s->target[targets[i]] = s->stamp;
    if (s->topo[targets[i]] < floor)
      floor = s->topo[targets[i]];
  }
  /* A node worth walking through lies within some target's intervals:
   * each target's when they are few, else the hull of them all. */
  uint32_t hull_low[NLABELS], hull_post[NLABELS];
  for (int l = 0; l < NLABELS; l++) {
    hull_low[l] = UINT32_MAX;
    hull_post[l] = 0;
    for (size_t i = 0; i < ntargets; i++) {
      if (s->lab->low[l][targets[i]] < hull_low[l])
        hull_low[l] = s->lab->low[l][targets[i]];
      if (s->lab->post[l][targets[i]] > hull_post[l])
        hull_post[l] = s->lab->post[l][targets[i]];
    }
  }
  size_t nfound = 0, sp = 0;
#define PUSH(w)                                                                \
  do {                                                                         \
    uint32_t w_ = (w);                                                         \
    if (s->topo[w_] >= floor && s->visited[w_] != s->stamp &&                  \
        promising(s, w_, targets, ntargets, hull_low, hull_post)) {            \
      s->visited[w_] = s->stamp;                                               \
      if (s->target[w_] == s->stamp)                                           \
        nfound++;                                                              \
      s->stack[sp++] = w_;                                                     \
    }                                                                          \
  } while (0)
  for (size_t i = 0; i < nfrom && nfound < want; i++)
    PUSH(from[i]);
  while (sp && nfound < want) {
    uint32_t v = s->stack[--sp];
    uint32_t lo = s->p->start[v], hi = s->p->start[v + 1];
    if (!spend(s->c, hi - lo))
      return false;
    for (uint32_t i = lo; i < hi && nfound < want; i++)
      if (!s->usable || s->usable[i])
        PUSH(s->p->e[i].from);
  }
#undef PUSH
  for (size_t i = 0; i < ntargets; i++)
    found[i] = s->visited[targets[i]] == s->stamp;
  return true;
}

/* A search over the predecessors `p` of a graph whose edges are e[0..m). */
static Search search_new(Compiler *c, const Preds *p, const uint32_t *topo, const Labels *lab,
                         size_t n, size_t m) {
  Search s = {.p = p, .topo = topo, .lab = lab, .c = c};
  s.visited = xrealloc(NULL, (n + 1) * sizeof *s.visited);
  s.target = xrealloc(NULL, (n + 1) * sizeof *s.target);
  s.stack = xrealloc(NULL, (n + 1) * sizeof *s.stack);
  memset(s.visited, 0, (n + 1) * sizeof *s.visited);
  memset(s.target, 0, (n + 1) * sizeof *s.target);
  c->search_items += (int64_t)(n + m);
  return s;
}

static void search_free(Search *s) {
  free(s->visited);
  free(s->target);
  free(s->stack);
}

#define SEARCH_SPENT "ordering graph '%s' spent the program's %lld steps of search"

/* Keeps in `all` those of its edges that `keep` marks, in their order. */
static void keep_marked(EdgeVec *all, const bool *keep) {
  size_t k = 0;
  for (size_t i = 0; i < all->n; i++)
    if (keep[i])
      all->v[k++] = all->v[i];
  all->n = k;
  if (k)
    vec_fit(all);
  else
    vec_free(all);
}

/* The transitive reduction of a DAG whose edges, in `all`, are sorted by
 * (to, from): what it keeps of them, in that order, becomes g->edges (which
 * is empty), and `all` is left empty.  The edges are not copied: those
 * kept are marked while the searches read them all, then moved down. */
static void reduce(Compiler *c, Graph *g, EdgeVec *all, const uint32_t *topo) {
  size_t n = g->nodes.n, m = all->n;
  const Edge *e = all->v;
  Labels lab = labels_new(n, e, m); /* first: its scratch arrays are given back */
  bool *keep = xcalloc(m + 1, sizeof *keep);
  Preds p = preds_build(n, e, m);
  Search s = search_new(c, &p, topo, &lab, n, m);
  bool ok = spend(c, 0); /* false: spent before, and reported then */
  uint32_t *cand = NULL, *from = NULL;
  bool *found = NULL;
  size_t cap = 0;
  for (uint32_t v = 0; v < n; v++) {
    size_t k = p.start[v + 1] - p.start[v];
    if (k > cap) {
      cap = k;
      cand = xrealloc(cand, cap * sizeof *cand);
      found = xrealloc(found, cap * sizeof *found);
    }
    for (size_t i = 0; i < k; i++) {
      cand[i] = e[p.start[v] + i].from;
      found[i] = false;
    }
    if (k > 1 && ok) {
      /* Start from the candidates' own predecessors: a candidate reached
       * from there lies on a longer path to v. */
      size_t nfrom = 0;
      for (size_t i = 0; i < k; i++)
        nfrom += p.start[cand[i] + 1] - p.start[cand[i]];
      if ((ok = spend(c, nfrom))) {
        from = xrealloc(from, (nfrom + 1) * sizeof *from);
        nfrom = 0;
        for (size_t i = 0; i < k; i++)
          for (uint32_t j = p.start[cand[i]]; j < p.start[cand[i] + 1]; j++)
            from[nfrom++] = e[j].from;
        ok = search(&s, from, nfrom, cand, k, found, k - 1);
      }
      if (!ok) {
        /* Every edge is kept from here: the graph is as correct, only
         * some of its edges are redundant. */
        for (size_t i = 0; i < k; i++)
          found[i] = false;
        warn_at(c->diag, W_SEARCH_BUDGET, g->item->name_pos,
                SEARCH_SPENT "; the edges into node '%s' and every node ordered after it are "
                             "kept without reduction",
                g->name->name, (long long)search_budget(c), g->nodes.v[v].name);
      }
    }
    for (size_t i = 0; i < k; i++)
      keep[p.start[v] + i] = !found[i];
  }
  free(cand);
  free(from);
  free(found);
  search_free(&s);
  labels_free(&lab);
  free(p.start);
  keep_marked(all, keep);
  free(keep);
  g->edges = *all;
  *all = (EdgeVec){0};
}

/* In an explicit graph every conflicting pair must be ordered by written
 * edges.  `need` are the data-flow edges of the topological order; each is
 * checked by a search of the written edges and of the needed edges already
 * proven, which reach no further than the written ones but take the short
 * way round (a chain whose every node reads what its first node wrote). */
static bool check_hazards(Compiler *c, Graph *g, const uint32_t *order, const uint32_t *topo,
                          const Edge *written, size_t nwritten, const Edge *need, size_t nneed) {
  size_t n = g->nodes.n, m = 0;
  Edge *all = xrealloc(NULL, (nwritten + nneed + 1) * sizeof *all);
  for (size_t i = 0; i < nwritten; i++)
    all[m++] = written[i];
  for (size_t i = 0; i < nneed; i++)
    all[m++] = need[i];
  dedupe(all, &m); /* a needed edge that is also written is proven */
  Preds p = preds_build(n, all, m);
  bool *usable = xrealloc(NULL, (m + 1) * sizeof *usable);
  for (size_t i = 0; i < m; i++)
    usable[i] = all[i].written;
  Labels lab = labels_new(n, all, m);
  Search s = search_new(c, &p, topo, &lab, n, m);
  s.usable = usable;
  bool ok = true;
  uint32_t *targets = NULL, *from = NULL;
  size_t *which = NULL;
  bool *found = NULL;
  size_t cap = 0;
  for (size_t t = 0; t < n && ok && !diag_stopped(c->diag); t++) {
    uint32_t v = order[t];
    size_t k = 0, nfrom = 0, deg = p.start[v + 1] - p.start[v];
    if (deg > cap) {
      cap = deg;
      targets = xrealloc(targets, cap * sizeof *targets);
      from = xrealloc(from, cap * sizeof *from);
      which = xrealloc(which, cap * sizeof *which);
      found = xrealloc(found, cap * sizeof *found);
    }
    for (uint32_t i = p.start[v]; i < p.start[v + 1]; i++) {
      if (all[i].written) {
        from[nfrom++] = all[i].from;
      } else {
        which[k] = i;
        targets[k++] = all[i].from;
      }
    }
    if (!k)
      continue;
    if (!search(&s, from, nfrom, targets, k, found, k)) {
      ok = false;
      break;
    }
    for (size_t j = 0; j < k; j++) {
      if (found[j]) {
        usable[which[j]] = true;
        continue;
      }
      const Edge *e = &all[which[j]];
      const Node *a = &g->nodes.v[e->from], *b = &g->nodes.v[e->to];
      Pos pa = node_pos(a), pb = node_pos(b);
      if (e->why == WHY_COMM) {
        error_at(c->diag, pb,
                 "collectives '%s' and '%s' have no path of edges between them: every rank "
                 "must run a communicator's collectives in one order",
                 a->name, b->name);
      } else if (e->why == WHY_APART) {
        error_at(c->diag, pb,
                 "control nodes '%s' and '%s' have no path of edges between them: a loop whose "
                 "body sets its handle runs apart from the other control nodes",
                 a->name, b->name);
      } else {
        const char *res = g->res.v[e->res].name->name;
        const char *ra = e->why == WHY_WAR ? "reads" : "writes";
        error_at(c->diag, pb,
                 "hazard on '%s': node '%s' %s it and node '%s' %s it, with no path of edges "
                 "between them",
                 res, b->name, why_text(e->why), a->name, ra);
      }
      /* Two nodes of one iteration of a for body ('kp[2]', 'rope[2]'): the
       * edge the user writes is the body's, 'kp -> rope;'. */
      const char *ia = strchr(a->name, '['), *ib = strchr(b->name, '[');
      bool same_iteration = ia && ib && !strcmp(ia, ib);
      if (same_iteration) {
        const Stmt *la = loop_of(g->item->body, g->item->nbody, pa, NULL);
        same_iteration = la && la == loop_of(g->item->body, g->item->nbody, pb, NULL);
      }
      size_t na = same_iteration ? (size_t)(ia - a->name) : strlen(a->name),
             nb = same_iteration ? (size_t)(ib - b->name) : strlen(b->name);
      if (!a->keyword_name && !b->keyword_name) {
        /* The edge, as data for an editor; where both nodes are at the
         * top of the graph, outside loops, its statement can go on a line
         * before the second. */
        bool top =
            a->scope < 0 && b->scope < 0 &&
            ((!ia && !ib) || (same_iteration && pos_file(c->diag, pa) == pos_file(c->diag, pb)));
        char *text = arena_printf(c->arena, "%.*s -> %.*s;\n%*s", (int)na, a->name, (int)nb,
                                  b->name, pos_col(c->diag, pb) - 1, "");
        Span at = top ? (Span){.at = pb, .lo = pb, .hi = pb} : span_at(NO_POS);
        diag_fix_edge(c->diag, a->name, b->name, at, text);
      }
      if (!a->keyword_name && !b->keyword_name && same_iteration)
        note_at(c->diag, pa,
                "node '%s' is here; add '%.*s -> %.*s;' to the loop's body to run it first",
                a->name, (int)na, a->name, (int)nb, b->name);
      else if (!a->keyword_name && !b->keyword_name)
        note_at(c->diag, pa, "node '%s' is here; add '%s -> %s;' to run it first", a->name, a->name,
                b->name);
      else
        note_at(c->diag, pa,
                "node '%s' is here; name the unnamed one ('node NAME = ...') and add an edge "
                "from '%s' to '%s' to run it first",
                a->name, a->name, b->name);
    }
  }
  free(targets);
  free(from);
  free(which);
  free(found);
  free(usable);
  search_free(&s);
  labels_free(&lab);
  free(p.start);
  free(all);
  if (!ok) {
    error_at(c->diag, g->item->name_pos,
             SEARCH_SPENT ", and could not tell whether its written edges order every access",
             g->name->name, (long long)search_budget(c));
  }
  return ok;
}

/* Every edge from a kernel into a pdl kernel is programmatic: the pdl
 * kernel may start before its predecessor ends, and waits for it in
 * cudaGridDependencySynchronize().  Through such edges the reduction stays
 * sound: a predecessor's completion, with its writes, is visible to a pdl
 * kernel once that call returns. */
static void mark_programmatic(Graph *g) {
  for (size_t i = 0; i < g->edges.n; i++) {
    Edge *e = &g->edges.v[i];
    const Node *a = &g->nodes.v[e->from], *b = &g->nodes.v[e->to];
    e->programmatic =
        node_kinds[a->kind].programmatic && node_kinds[b->kind].programmatic && b->kernel->pdl;
  }
}

/* The scalar upload (the runtime's first node) writes every scalar slot:
 * it precedes each node that touches a slot and has no ancestor that does. */
static void find_loads(Graph *g, const uint32_t *order) {
  size_t n = g->nodes.n;
  uint8_t *touches = xrealloc(NULL, n + 1), *after = xrealloc(NULL, n + 1);
  for (size_t v = 0; v < n; v++) {
    const Node *nd = &g->nodes.v[v];
    touches[v] = 0;
    after[v] = 0;
    for (int k = 0; k < nd->nacc; k++)
      if (g->res.v[nd->acc[k].res].kind == RES_SCALAR && g->res.v[nd->acc[k].res].memory &&
          nd->acc[k].hi > nd->acc[k].lo)
        touches[v] = 1;
  }
  /* Edges sorted by (from, to): walk them in the topological order. */
  uint32_t *start = xrealloc(NULL, (n + 1) * sizeof *start);
  size_t j = 0;
  for (size_t v = 0; v <= n; v++) {
    start[v] = (uint32_t)j;
    while (j < g->edges.n && g->edges.v[j].from == v)
      j++;
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t v = order[i];
    if (touches[v] && !after[v])
      vec_push(&g->loads, v);
    for (uint32_t k = start[v]; k < start[v + 1]; k++)
      after[g->edges.v[k].to] |= after[v] | touches[v];
  }
  if (g->loads.n)
    qsort(g->loads.v, g->loads.n, sizeof *g->loads.v, cmp_u32);
  free(start);
  free(touches);
  free(after);
}

/* Orders one body of nodes (all of them, in a graph without control flow):
 * its edges into g->edges, and at the top level the scalar upload's. */
static void order_flat(Compiler *c, Graph *g, bool top, Seg **roots) {
  size_t n = g->nodes.n;
  uint32_t *order = xrealloc(NULL, (n + 1) * sizeof *order);
  uint32_t *topo = xrealloc(NULL, (n + 1) * sizeof *topo);
  EdgeVec all = {0};
  for (size_t i = 0; i < g->written.n; i++)
    vec_push(&all, g->written.v[i]);
  if (!g->is_explicit) {
    for (size_t v = 0; v < n; v++)
      order[v] = (uint32_t)v;
    if (!infer_edges(c, g, order, &all, roots)) {
      vec_free(&all);
      free(order);
      free(topo);
      return;
    }
  }
  dedupe(all.v, &all.n);
  if (all.n)
    vec_fit(&all); /* the room it grew, given back before the reduction's arrays */
  size_t placed = topo_sort(n, all.v, all.n, order);
  if (placed < n) {
    Preds p = preds_build(n, all.v, all.n);
    report_cycle(c, g, &p, order, placed);
    free(p.start);
  } else {
    for (size_t i = 0; i < n; i++)
      topo[order[i]] = (uint32_t)i;
    if (g->is_explicit) {
      EdgeVec need = {0};
      if (infer_edges(c, g, order, &need, roots))
        check_hazards(c, g, order, topo, all.v, all.n, need.v, need.n);
      vec_free(&need);
    }
    /* The order is topo's inverse: given back while the reduction runs,
     * and made again for find_loads. */
    free(order);
    order = NULL;
    reduce(c, g, &all, topo);
    /* Sorted once the reduction's arrays are given back: the sort's own
     * copy of the edges need not lie beside them. */
    if (g->edges.n)
      sort_edges(g->edges.v, g->edges.n, cmp_from_to);
    mark_programmatic(g);
    if (top) {
      order = xrealloc(NULL, (n + 1) * sizeof *order);
      for (size_t v = 0; v < n; v++)
        order[topo[v]] = (uint32_t)v;
      find_loads(g, order);
    }
  }
  vec_free(&all);
  free(order);
  free(topo);
}

/* With control flow each body is ordered on its own, its while, if or
 * switch standing in the enclosing body as one node with all the accesses
 * of what it holds (language reference, section 7).  The nodes and the
 * written edges are sorted into their bodies once, so that the cost is
 * that of the bodies, not of the bodies times the graph. */
void order_graph(Compiler *c, Graph *g) {
  size_t n = g->nodes.n;
  Seg **roots = xrealloc(NULL, (g->res.n + 1) * sizeof *roots);
  memset(roots, 0, (g->res.n + 1) * sizeof *roots);
  /* Body 0 is the top; a control node's bodies are numbered from its base. */
  uint32_t *body = xrealloc(NULL, (n + 1) * sizeof *body);
  uint32_t *base = xrealloc(NULL, (n + 1) * sizeof *base);
  size_t nbodies = 1;
  for (size_t v = 0; v < n; v++) {
    const Node *nd = &g->nodes.v[v];
    body[v] = nd->scope < 0 ? 0 : base[nd->scope] + (uint32_t)nd->branch;
    if (node_kinds[nd->kind].bodies) {
      base[v] = (uint32_t)nbodies;
      nbodies += (size_t)nd->control->nbodies;
    }
  }
  if (nbodies == 1) {
    order_flat(c, g, true, roots);
    free(roots);
    free(body);
    free(base);
    return;
  }
  /* Counting sorts: each body's nodes in order, and its written edges. */
  uint32_t *first = xrealloc(NULL, (nbodies + 1) * sizeof *first);
  uint32_t *first_edge = xrealloc(NULL, (nbodies + 1) * sizeof *first_edge);
  memset(first, 0, (nbodies + 1) * sizeof *first);
  memset(first_edge, 0, (nbodies + 1) * sizeof *first_edge);
  for (size_t v = 0; v < n; v++)
    first[body[v] + 1]++;
  for (size_t i = 0; i < g->written.n; i++)
    first_edge[body[g->written.v[i].from] + 1]++;
  for (size_t b = 0; b < nbodies; b++) {
    first[b + 1] += first[b];
    first_edge[b + 1] += first_edge[b];
  }
  uint32_t *members = xrealloc(NULL, (n + 1) * sizeof *members);
  uint32_t *local = xrealloc(NULL, (n + 1) * sizeof *local);
  Edge *written = xrealloc(NULL, (g->written.n + 1) * sizeof *written);
  uint32_t *fill = xrealloc(NULL, (nbodies + 1) * sizeof *fill);
  memcpy(fill, first, (nbodies + 1) * sizeof *fill);
  for (size_t v = 0; v < n; v++) {
    local[v] = fill[body[v]] - first[body[v]];
    members[fill[body[v]]++] = (uint32_t)v;
  }
  memcpy(fill, first_edge, (nbodies + 1) * sizeof *fill);
  for (size_t i = 0; i < g->written.n; i++) {
    Edge e = g->written.v[i]; /* sema keeps an edge within one body */
    uint32_t b = body[e.from];
    e.from = local[e.from];
    e.to = local[e.to];
    written[fill[b]++] = e;
  }
  free(fill);
  for (size_t b = 0; b < nbodies && !diag_errors(c->diag); b++) {
    Graph sub = {.item = g->item, .name = g->name, .is_explicit = g->is_explicit,
                 .res = g->res};
    for (uint32_t i = first[b]; i < first[b + 1]; i++)
      vec_push(&sub.nodes, g->nodes.v[members[i]]);
    for (uint32_t i = first_edge[b]; i < first_edge[b + 1]; i++)
      vec_push(&sub.written, written[i]);
    order_flat(c, &sub, b == 0, roots);
    const uint32_t *global = members + first[b];
    for (size_t i = 0; i < sub.edges.n; i++) {
      Edge e = sub.edges.v[i];
      e.from = global[e.from];
      e.to = global[e.to];
      vec_push(&g->edges, e);
    }
    for (size_t i = 0; i < sub.loads.n; i++)
      vec_push(&g->loads, global[sub.loads.v[i]]);
    vec_free(&sub.nodes);
    vec_free(&sub.written);
    vec_free(&sub.edges);
    vec_free(&sub.loads);
  }
  if (g->edges.n)
    sort_edges(g->edges.v, g->edges.n, cmp_from_to);
  free(first);
  free(first_edge);
  free(members);
  free(local);
  free(written);
  free(body);
  free(base);
  free(roots);
}
