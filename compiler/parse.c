/* parse.c: the grammar's actions, and reading a program through its
 * includes. */
#include "parse_actions.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A list no longer used, kept for list_push to start the next with. */
static void list_recycle(ParseState *ps, List *l) {
  if (!l)
    return;
  l->n = 0;
  vec_push(&ps->spare_lists, l);
}

static List *list_new(ParseState *ps) {
  if (ps->spare_lists.n)
    return ps->spare_lists.v[--ps->spare_lists.n];
  List *l = arena_alloc(ps->c->arena, sizeof(List));
  vec_push(&ps->lists, l);
  return l;
}

List *list_push(ParseState *ps, List *l, void *x) {
  if (!l)
    l = list_new(ps);
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 4;
    l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
  }
  l->v[l->n++] = x;
  return l;
}

/* A list's elements as an array of pointers of its own, as long as it
 * (in the arena; NULL when empty); *n gets its length.  The list is
 * recycled. */
static void *list_array(ParseState *ps, List *l, int *n) {
  *n = l ? l->n : 0;
  void **v = NULL;
  if (*n) {
    v = arena_alloc(ps->c->arena, (size_t)*n * sizeof *v);
    memcpy(v, l->v, (size_t)*n * sizeof *v);
  }
  list_recycle(ps, l);
  return v;
}

void add_item(ParseState *ps, Item *it) { vec_push(ps->items, it); }

static Item *new_item(ParseState *ps, ItemKind kind, Pos p) {
  Item *it = arena_alloc(ps->c->arena, sizeof *it);
  it->kind = kind;
  it->pos = p;
  return it;
}

Item *item_include(ParseState *ps, Pos p, const char *path) {
  if (!path)
    return NULL; /* the scanner reported what was wrong with it */
  Item *it = new_item(ps, IT_INCLUDE, p);
  it->path = path;
  return it;
}

Item *item_const(ParseState *ps, Pos p, Sym *name, Pos np, Expr *value) {
  Item *it = new_item(ps, IT_CONST, p);
  it->name = name;
  it->name_pos = np;
  it->value = value;
  return it;
}

Clause *clause_new(ParseState *ps, Pos p, bool symbol, const char *text, Pos tp) {
  Clause *cl = arena_alloc(ps->c->arena, sizeof *cl);
  cl->symbol = symbol;
  cl->pos = p;
  cl->text = text;
  cl->text_pos = tp;
  return cl;
}

/* A kernel's `from` and `symbol`: each at most once, `symbol` only with
 * `from` and not on a template, neither on a capture function. */
static void kernel_clauses(ParseState *ps, Item *it, List *clauses) {
  Diag *d = ps->c->diag;
  Clause *from = NULL, *symbol = NULL;
  for (int i = 0; clauses && i < clauses->n; i++) {
    Clause *cl = clauses->v[i], **slot = cl->symbol ? &symbol : &from;
    const char *kw = cl->symbol ? "symbol" : "from";
    if (it->capture) {
      error_at(d, cl->pos, "capture function '%s' takes no '%s': it is a host function of the "
                           "program's own", it->name->name, kw);
      return;
    }
    if (*slot) {
      error_at(d, cl->pos, "'%s' is given twice for kernel '%s'", kw, it->name->name);
      note_at(d, (*slot)->pos, "it was first given here");
      continue;
    }
    *slot = cl;
  }
  if (it->template_name && !from) {
    error_at(d, it->name_pos,
             "template kernel '%s' needs from \"HEADER\", the header that defines '%s'",
             it->name->name, it->template_name->name);
    return;
  }
  if (symbol && it->template_name) {
    error_at(d, symbol->pos, "template kernel '%s' takes no 'symbol': the template and its "
                             "arguments name the kernel", it->name->name);
    return;
  }
  if (symbol && !from) {
    error_at(d, symbol->pos, "'symbol' names kernel '%s' in a module: it needs from \"MODULE\"",
             it->name->name);
    return;
  }
  if (!from)
    return;
  it->source = it->template_name ? KS_TEMPLATE : KS_MODULE;
  if (from->text && !from->text[0])
    error_at(d, from->text_pos, "'from' names no file: the path is empty");
  else if (from->text)
    it->from = from->text, it->from_pos = from->text_pos;
  if (symbol && symbol->text && !symbol->text[0])
    error_at(d, symbol->text_pos, "the symbol of kernel '%s' is empty", it->name->name);
  if (symbol) /* "" when it was malformed: reported, and not looked for */
    it->symbol = symbol->text ? symbol->text : "", it->symbol_pos = symbol->text_pos;
}

static Item *new_kernel(ParseState *ps, Pos p, bool pdl, bool capture, Sym *name, Pos np,
                        List *params) {
  Item *it = new_item(ps, IT_KERNEL, p);
  it->pdl = pdl;
  it->capture = capture;
  it->name = name;
  it->name_pos = np;
  it->nparams = params ? params->n : 0;
  it->params = arena_alloc(ps->c->arena, (size_t)it->nparams * sizeof(Param) + 1);
  for (int i = 0; i < it->nparams; i++)
    it->params[i] = *(Param *)params->v[i];
  return it;
}

Item *item_kernel(ParseState *ps, Pos p, bool pdl, bool capture, Sym *name, Pos np,
                  List *params, List *clauses) {
  Item *it = new_kernel(ps, p, pdl, capture, name, np, params);
  kernel_clauses(ps, it, clauses);
  return it;
}

Item *item_template(ParseState *ps, Pos p, bool pdl, Sym *name, Pos np, Sym *tmpl, Pos tp,
                    const char *args, List *params, List *clauses) {
  Item *it = new_kernel(ps, p, pdl, false, name, np, params);
  it->template_name = tmpl;
  it->template_pos = tp;
  it->template_args = args;
  kernel_clauses(ps, it, clauses);
  return it;
}

Param *param_new(ParseState *ps, Pos p, Mode mode, Sym *name, Type type, bool pointer) {
  Param *pa = arena_alloc(ps->c->arena, sizeof *pa);
  pa->pos = p;
  pa->mode = mode;
  pa->name = name;
  pa->type = type;
  pa->pointer = pointer;
  return pa;
}

bool type_meant(ParseState *ps, Pos p, Sym *name, Type *type) {
  const char *meant = suggest_type(name->name);
  if (!meant) {
    error_at(ps->c->diag, p,
             "unknown type '%s'; the types are i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, "
             "f32 and f64",
             name->name);
    return false;
  }
  error_at(ps->c->diag, p, "unknown type '%s'; did you mean '%s'?", name->name, meant);
  diag_fix(ps->c->diag, span_at(p), meant);
  for (Type t = TY_I8; t <= TY_F64; t++)
    if (!strcmp(type_name(t), meant))
      *type = t;
  return true;
}

Type data_type(ParseState *ps, Pos p, Type type, const char *what) {
  if (type != TY_HANDLE)
    return type;
  error_at(ps->c->diag, p,
           "a %s cannot be of type 'handle'; a handle is the type of a kernel parameter, which "
           "takes the name of a while node whose body calls the kernel",
           what);
  return TY_U64;
}

bool semicolon_inserted(ParseState *ps) {
  bool inserted = ps->semicolon_inserted;
  ps->semicolon_inserted = false;
  ps->recovering = false;
  return inserted;
}

void recovered(ParseState *ps) {
  ps->recovering = false;
}

void lose_name(ParseState *ps, const struct ScannedToken *t) {
  if (t && t->sym)
    map_put(&ps->c->lost, t->sym, t->sym);
}

Item *item_graph(ParseState *ps, Pos p, bool is_explicit, Sym *name, Pos np, List *body) {
  Item *it = new_item(ps, IT_GRAPH, p);
  it->is_explicit = is_explicit;
  it->name = name;
  it->name_pos = np;
  it->body = list_array(ps, body, &it->nbody);
  return it;
}

void item_variants(ParseState *ps, Item *graph, Sym *var, Pos vp, List *values) {
  (void)ps;
  graph->variant_var = var;
  graph->variant_pos = vp;
  graph->variants = list_array(ps, values, &graph->nvariants);
}

/* The bytes a statement of the kind takes: its kind's part of the union. */
static size_t stmt_size(StmtKind kind) {
  switch (kind) {
  case ST_CONST:
  case ST_SCALAR:
  case ST_BUFFER: return offsetof(Stmt, type_pos) + sizeof(Pos);
  case ST_NODE: return offsetof(Stmt, launch) + sizeof(LaunchItem *);
  case ST_EDGE: return offsetof(Stmt, ngroups) + sizeof(int);
  case ST_FOR: return offsetof(Stmt, hi) + sizeof(Expr *);
  case ST_WHILE:
  case ST_IF:
  case ST_SWITCH: return sizeof(Stmt);
  }
  return sizeof(Stmt);
}

/* How deep the compound statements of body[0 .. n) nest. */
static int body_depth(Stmt *const *body, int n) {
  int d = 0;
  for (int i = 0; i < n; i++) {
    const Stmt *st = body[i];
    bool compound = st && (st->kind == ST_FOR || st->kind == ST_WHILE || st->kind == ST_IF ||
                           st->kind == ST_SWITCH);
    if (compound && st->depth > d)
      d = st->depth;
  }
  return d;
}

/* Statements dropped after an error: the names they declare are lost to
 * it (Compiler.lost), so that a use of one is not reported undefined too. */
static void lose_bodies(ParseState *ps, const Stmt *s);
static void lose_stmts(ParseState *ps, Stmt *const *v, int n) {
  for (int i = 0; i < n; i++) {
    if (v[i]->name)
      map_put(&ps->c->lost, v[i]->name, v[i]->name);
    lose_bodies(ps, v[i]);
  }
}
/* The statements of a compound statement's bodies (none for others). */
static void lose_bodies(ParseState *ps, const Stmt *s) {
  if (s->kind == ST_FOR || s->kind == ST_WHILE || s->kind == ST_IF)
    lose_stmts(ps, s->body, s->nbody);
  if (s->kind == ST_IF)
    lose_stmts(ps, s->else_body, s->nelse);
  for (int k = 0; s->kind == ST_SWITCH && k < s->ncases; k++)
    lose_stmts(ps, s->cases[k].body, s->cases[k].nbody);
}

/* Bounds how deep statements nest, so that the recursive walks of sema.c
 * cannot exhaust the stack.  The scanner's bound on open brackets bounds
 * it, but for an else-if chain: each `else if` nests its if one deeper,
 * with no brace.  Past the bound the statement's bodies are dropped,
 * after one error. */
static Stmt *nested(ParseState *ps, Stmt *s) {
  int d = body_depth(s->body, s->nbody), e;
  if (s->kind == ST_IF && (e = body_depth(s->else_body, s->nelse)) > d)
    d = e;
  for (int k = 0; s->kind == ST_SWITCH && k < s->ncases; k++)
    if ((e = body_depth(s->cases[k].body, s->cases[k].nbody)) > d)
      d = e;
  if (d < MAX_NESTING) {
    s->depth = d + 1;
    return s;
  }
  if (!ps->nesting_error)
    error_at(ps->c->diag, s->pos,
             "this %s holds statements nested more than %d deep: each 'else if' nests its if "
             "one deeper, as 'else { if ... }' does",
             s->kind == ST_FOR     ? "for"
             : s->kind == ST_WHILE ? "while"
             : s->kind == ST_IF    ? "if"
                                   : "switch",
             MAX_NESTING);
  ps->nesting_error = true;
  lose_bodies(ps, s);
  s->nbody = 0;
  if (s->kind == ST_IF)
    s->nelse = 0;
  for (int k = 0; s->kind == ST_SWITCH && k < s->ncases; k++)
    s->cases[k].nbody = 0;
  s->depth = 1;
  return s;
}

static Stmt *new_stmt(ParseState *ps, StmtKind kind, Pos p) {
  Stmt *s = arena_alloc(ps->c->arena, stmt_size(kind));
  s->kind = kind;
  s->pos = p;
  return s;
}

Stmt *stmt_const(ParseState *ps, Pos p, Sym *name, Pos np, Expr *value) {
  Stmt *s = new_stmt(ps, ST_CONST, p);
  s->name = name;
  s->name_pos = np;
  s->value = value;
  return s;
}

Stmt *stmt_scalar(ParseState *ps, Pos p, Sym *name, Pos np, Type type, Pos tp, Expr *bound,
                  Expr *init) {
  Stmt *s = new_stmt(ps, ST_SCALAR, p);
  s->name = name;
  s->name_pos = np;
  s->type = type;
  s->type_pos = tp;
  s->bound = bound;
  s->value = init;
  return s;
}

Stmt *stmt_buffer(ParseState *ps, Pos p, BufferKind kind, Sym *name, Pos np,
                  Type type, List *dims, Expr *init) {
  Stmt *s = new_stmt(ps, ST_BUFFER, p);
  s->buffer_kind = kind;
  s->name = name;
  s->name_pos = np;
  s->type = type;
  s->dims = list_array(ps, dims, &s->ndims);
  s->value = init;
  return s;
}

Stmt *stmt_call(ParseState *ps, Pos p, NodeKind node_kind, Sym *kernel, List *args) {
  Stmt *s = new_stmt(ps, ST_NODE, p);
  s->node_kind = node_kind;
  s->kernel = kernel;
  s->callee_pos = p;
  s->args = list_array(ps, args, &s->nargs);
  return s;
}

Stmt *stmt_node(ParseState *ps, Pos p, Sym *name, Pos np, Stmt *call, List *launch) {
  call->pos = p;
  call->name = name;
  call->name_pos = np;
  call->nlaunch = launch ? launch->n : 0;
  call->launch = arena_alloc(ps->c->arena, (size_t)call->nlaunch * sizeof(LaunchItem));
  for (int i = 0; i < call->nlaunch; i++) {
    call->launch[i] = *(LaunchItem *)launch->v[i];
    vec_push(&ps->spare_launches, (LaunchItem *)launch->v[i]);
  }
  list_recycle(ps, launch);
  return call;
}

LaunchItem *launch_new(ParseState *ps, Pos p, LaunchKey key, List *args) {
  LaunchItem *l = ps->spare_launches.n ? ps->spare_launches.v[--ps->spare_launches.n]
                                       : arena_alloc(ps->c->arena, sizeof *l);
  l->key = key;
  l->pos = p;
  l->nargs = args ? args->n : 0;
  if (l->nargs == 1) {
    l->arg = args->v[0];
    list_recycle(ps, args);
  } else {
    int n;
    l->args = list_array(ps, args, &n);
  }
  return l;
}

EdgeGroup *edge_group(ParseState *ps, List *refs) {
  EdgeGroup *g = arena_alloc(ps->c->arena, sizeof *g);
  g->refs = list_array(ps, refs, &g->nrefs);
  return g;
}

List *edge_link(ParseState *ps, List *chain, EdgeGroup *from, Pos arrow,
                bool programmatic, EdgeGroup *to) {
  if (from)
    chain = list_push(ps, chain, from);
  EdgeGroup *last = chain->v[chain->n - 1];
  last->arrow = arrow;
  last->programmatic = programmatic;
  return list_push(ps, chain, to);
}

Stmt *stmt_edge(ParseState *ps, List *chain) {
  EdgeGroup *first = chain->v[0];
  Stmt *s = new_stmt(ps, ST_EDGE, first->refs[0]->pos);
  s->ngroups = chain->n;
  s->groups = arena_alloc(ps->c->arena, (size_t)chain->n * sizeof(EdgeGroup));
  for (int i = 0; i < chain->n; i++)
    s->groups[i] = *(EdgeGroup *)chain->v[i];
  return s;
}

Stmt *stmt_for_without_range(ParseState *ps, Pos p, Sym *var, Pos vp, Expr *e, List *body) {
  bool range = e->kind == EX_CALL && !strcmp(e->fn->name, "range") && e->nargs == 1;
  Span s = expr_span(e);
  if (range)
    error_span(ps->c->diag, s,
               "a 'for' loop runs over 'START .. END', not range(...): write "
               "'for %s in 0 .. END'",
               var->name);
  else
    error_span(ps->c->diag, s, "a 'for' loop runs over 'START .. END' ('for %s in 0 .. N')",
               var->name);
  Expr *hi = range ? e->args[0] : e;
  return stmt_for(ps, p, var, vp, expr_int(ps, e->pos, 0), hi, body);
}

void node_keyword_missing(ParseState *ps, Pos p, Sym *name) {
  Span at = {.at = p, .lo = p, .hi = p};
  error_at(ps->c->diag, p, "a node is declared with 'node': 'node %s = ...'", name->name);
  diag_fix(ps->c->diag, at, "node ");
}

Stmt *stmt_for(ParseState *ps, Pos p, Sym *var, Pos vp, Expr *lo, Expr *hi, List *body) {
  Stmt *s = new_stmt(ps, ST_FOR, p);
  s->name = var;
  s->name_pos = vp;
  s->lo = lo;
  s->hi = hi;
  s->body = list_array(ps, body, &s->nbody);
  return nested(ps, s);
}

Stmt *stmt_while(ParseState *ps, Pos p, Cond *cond, Expr *max_iter, List *body) {
  Stmt *s = new_stmt(ps, ST_WHILE, p);
  s->node_kind = NK_WHILE;
  s->cond = cond;
  s->max_iter = max_iter;
  s->body = list_array(ps, body, &s->nbody);
  return nested(ps, s);
}

Stmt *stmt_named(Stmt *control, Sym *name, Pos np) {
  control->name = name;
  control->name_pos = np;
  return control;
}

List *else_body(ParseState *ps, List *body) { return body ? body : list_new(ps); }

static void set_else(ParseState *ps, Stmt *s, List *else_list) {
  s->has_else = else_list != NULL;
  s->else_body = list_array(ps, else_list, &s->nelse);
}

Stmt *stmt_if(ParseState *ps, Pos p, Cond *cond, List *then_body, List *else_list) {
  Stmt *s = new_stmt(ps, ST_IF, p);
  s->node_kind = NK_IF;
  s->cond = cond;
  s->body = list_array(ps, then_body, &s->nbody);
  set_else(ps, s, else_list);
  return nested(ps, s);
}

Stmt *else_if(ParseState *ps, Pos p, Cond *cond, List *then_body) {
  Stmt *s = new_stmt(ps, ST_IF, p);
  s->node_kind = NK_IF;
  s->cond = cond;
  s->body = list_array(ps, then_body, &s->nbody);
  return s;
}

void stray_else(ParseState *ps, Pos p, List *body) {
  error_at(ps->c->diag, p, DIAG_UNEXPECTED_ELSE_ELSE_COMES);
  if (body)
    lose_stmts(ps, (Stmt *const *)body->v, body->n);
  list_recycle(ps, body);
}

/* Each if of the chain is the whole else of the one before it, the last
 * one's else else_list: the nested form, built from the inside out. */
List *else_if_chain(ParseState *ps, List *chain, List *else_list) {
  if (!chain)
    return else_list;
  for (int i = chain->n; i-- > 0;) {
    Stmt *s = chain->v[i];
    set_else(ps, s, else_list);
    else_list = list_push(ps, NULL, nested(ps, s));
  }
  list_recycle(ps, chain);
  return else_list;
}

CaseItem *case_new(ParseState *ps, Pos p, Expr *value, List *body) {
  CaseItem *c = arena_alloc(ps->c->arena, sizeof *c);
  c->value = value;
  c->pos = p;
  c->body = list_array(ps, body, &c->nbody);
  return c;
}

Stmt *stmt_switch(ParseState *ps, Pos p, Expr *selector, List *cases) {
  Stmt *s = new_stmt(ps, ST_SWITCH, p);
  s->node_kind = NK_SWITCH;
  s->selector = selector;
  s->ncases = cases ? cases->n : 0;
  s->cases = arena_alloc(ps->c->arena, (size_t)s->ncases * sizeof(CaseItem) + 1);
  for (int i = 0; i < s->ncases; i++)
    s->cases[i] = *(CaseItem *)cases->v[i];
  return nested(ps, s);
}

/* Conditions are bounded in depth like expressions. */
static Cond *cond_bounded(ParseState *ps, Cond *c, int depth) {
  if (depth <= MAX_EXPR_DEPTH) {
    c->depth = depth;
    return c;
  }
  if (!ps->depth_error)
    error_at(ps->c->diag, c->pos, "condition nested more than %d deep", MAX_EXPR_DEPTH);
  ps->depth_error = true;
  c->kind = COND_CMP;
  c->a = c->b = NULL;
  c->lhs = c->rhs = new_expr(ps->c->arena, EX_INT, c->pos);
  c->depth = 1;
  return c;
}

Cond *cond_cmp(ParseState *ps, Pos p, int cmp, Expr *lhs, Expr *rhs) {
  Cond *c = arena_alloc(ps->c->arena, sizeof *c);
  c->kind = COND_CMP;
  c->pos = p;
  c->cmp = cmp;
  c->lhs = lhs;
  c->rhs = rhs;
  c->depth = 1;
  return c;
}

Cond *cond_join(ParseState *ps, Pos p, CondKind kind, Cond *a, Cond *b) {
  Cond *c = arena_alloc(ps->c->arena, sizeof *c);
  c->kind = kind;
  c->pos = p;
  c->a = a;
  c->b = b;
  int d = a->depth > (b ? b->depth : 0) ? a->depth : b->depth;
  return cond_bounded(ps, c, d + 1);
}

static bool is_token(const Expr *e) {
  return e->kind == EX_INT || e->kind == EX_FLOAT || e->kind == EX_NAME;
}

/* The bytes an expression of the kind takes: its kind's part of the union
 * (a literal's or a name's with its end, where its length is not kept). */
static size_t expr_size(ExprKind kind, bool with_end) {
  switch (kind) {
  case EX_INT:
  case EX_FLOAT:
  case EX_NAME: return with_end ? offsetof(Expr, end) + sizeof(Pos) : offsetof(Expr, lo);
  case EX_INDEX:
  case EX_NEG:
  case EX_BIN: return offsetof(Expr, c);
  case EX_CALL: return offsetof(Expr, args) + sizeof(Expr **);
  case EX_SLICE: return sizeof(Expr);
  }
  return sizeof(Expr);
}

/* A literal's or a name's end: with_end, or else one byte past pos. */
static Expr *alloc_expr(Arena *a, ExprKind kind, Pos pos, bool with_end) {
  Expr *e = arena_alloc(a, expr_size(kind, with_end));
  e->kind = kind;
  e->pos = pos;
  if (!is_token(e)) {
    e->depth = 1;
    e->hi = pos_plus(pos, 1);
  } else if (with_end) {
    e->lo = pos;
    e->end = pos_plus(pos, 1);
  } else {
    e->len = 1;
  }
  return e;
}

Expr *new_expr(Arena *a, ExprKind kind, Pos pos) { return alloc_expr(a, kind, pos, false); }

/* Where e's text ends, exclusive. */
static Pos expr_end(const Expr *e) {
  return !is_token(e) ? e->hi : e->len ? pos_plus(e->pos, e->len) : e->end;
}

static int expr_depth(const Expr *e) { return is_token(e) ? 1 : e->depth; }

Span expr_span(const Expr *e) {
  Span sp = {.at = e->pos, .hi = expr_end(e)};
  while (e->kind == EX_INDEX || e->kind == EX_SLICE || e->kind == EX_BIN)
    e = e->a;
  bool replaced = e->kind == EX_INT && e->op == EXPR_REPLACED;
  sp.lo = replaced ? e->lo : e->pos;
  return sp;
}

/* Where the token that starts at p ends, from the tokens just scanned. */
static Pos token_end(const ParseState *ps, Pos p) {
  for (unsigned i = 0; i < 4; i++) {
    const struct ScannedToken *t = &ps->tokens[i];
    if (t->at.off == p.off)
      return t->end;
  }
  return pos_plus(p, 1);
}

/* Ends e's text at the first `close` token scanned at or after `from`
 * (the ']' of a view, the ')' of a call), else leaves it. */
static void end_at_token(const ParseState *ps, Expr *e, int close, Pos from) {
  const struct ScannedToken *best = NULL;
  for (unsigned i = 0; i < 4; i++) {
    const struct ScannedToken *t = &ps->tokens[i];
    if (t->kind == close && t->at.off >= from.off && (!best || t->at.off < best->at.off))
      best = t;
  }
  if (best)
    e->hi = best->end;
}

/* e's text ends where b's does (it starts where its left operand's does). */
static void end_with(Expr *e, const Expr *b) { e->hi = expr_end(b); }

/* Bounds the height of every tree, so that the recursive walks of sema.c
 * cannot exhaust the stack on hostile input such as 100,000 unary minuses
 * or a sum of 100,000 terms. */
static Expr *bounded(ParseState *ps, Expr *e, int depth) {
  if (depth <= MAX_EXPR_DEPTH) {
    e->depth = depth;
    return e;
  }
  if (!ps->depth_error)
    error_at(ps->c->diag, e->pos, "expression nested more than %d deep",
             MAX_EXPR_DEPTH);
  ps->depth_error = true;
  Span sp = expr_span(e);
  Expr *zero = alloc_expr(ps->c->arena, EX_INT, e->pos, true);
  zero->op = EXPR_REPLACED;
  zero->len = 0;
  zero->lo = sp.lo;
  zero->end = sp.hi;
  return zero;
}

static int max_depth(Expr *a, Expr *b) {
  int d = a ? expr_depth(a) : 0;
  return b && expr_depth(b) > d ? expr_depth(b) : d;
}

/* A literal or a name: one token, whose length is kept where it fits. */
static Expr *token_expr(ParseState *ps, ExprKind kind, Pos p) {
  Pos end = token_end(ps, p);
  bool fits = end.off > p.off && end.off - p.off <= UINT16_MAX;
  Expr *e = alloc_expr(ps->c->arena, kind, p, !fits);
  if (fits)
    e->len = (uint16_t)(end.off - p.off);
  else
    e->end = end;
  return e;
}

Expr *expr_int(ParseState *ps, Pos p, int64_t v) {
  Expr *e = token_expr(ps, EX_INT, p);
  e->ival = v;
  if (v == INT64_MIN) /* 2^63 after a unary minus (the scanner's); expr_neg takes it */
    e->op = EXPR_MIN_MAGNITUDE;
  return e;
}

Expr *expr_float(ParseState *ps, Pos p, double v) {
  Expr *e = token_expr(ps, EX_FLOAT, p);
  e->fval = v;
  return e;
}

Expr *expr_name(ParseState *ps, Pos p, Sym *name) {
  Expr *e = token_expr(ps, EX_NAME, p);
  e->name = name;
  return e;
}

Expr *expr_index(ParseState *ps, Pos p, Expr *base, Expr *index) {
  Expr *e = new_expr(ps->c->arena, EX_INDEX, p);
  e->a = base;
  e->b = index;
  end_with(e, index);
  end_at_token(ps, e, ']', e->hi);
  return bounded(ps, e, max_depth(base, index) + 1);
}

Expr *expr_slice(ParseState *ps, Pos p, Expr *base, Expr *lo, Expr *hi) {
  Expr *e = new_expr(ps->c->arena, EX_SLICE, p);
  e->a = base;
  e->b = lo;
  e->c = hi;
  end_with(e, hi);
  end_at_token(ps, e, ']', e->hi);
  int d = max_depth(base, lo);
  return bounded(ps, e, (expr_depth(hi) > d ? expr_depth(hi) : d) + 1);
}

Expr *expr_call(ParseState *ps, Pos p, Sym *fn, List *args) {
  Expr *e = new_expr(ps->c->arena, EX_CALL, p);
  e->fn = fn;
  e->args = list_array(ps, args, &e->nargs);
  end_at_token(ps, e, ')', e->nargs ? expr_end(e->args[e->nargs - 1]) : p);
  int d = 0;
  for (int i = 0; i < e->nargs; i++)
    d = max_depth(e->args[i], NULL) > d ? expr_depth(e->args[i]) : d;
  return bounded(ps, e, d + 1);
}

Expr *expr_neg(ParseState *ps, Pos p, Expr *a) {
  if (a->kind == EX_INT && a->op == EXPR_MIN_MAGNITUDE) {
    /* -9223372036854775808: one literal, -2^63, from the minus on. */
    Expr *e = alloc_expr(ps->c->arena, EX_INT, p, true);
    e->ival = INT64_MIN;
    e->lo = p;
    e->end = expr_end(a);
    return e;
  }
  Expr *e = new_expr(ps->c->arena, EX_NEG, p);
  e->a = a;
  end_with(e, a);
  return bounded(ps, e, expr_depth(a) + 1);
}

Expr *expr_bin(ParseState *ps, Pos p, char op, Expr *a, Expr *b) {
  Expr *e = new_expr(ps->c->arena, EX_BIN, p);
  e->op = op;
  e->a = a;
  e->b = b;
  end_with(e, b);
  return bounded(ps, e, max_depth(a, b) + 1);
}

/* ---- includes ---- */

typedef struct Reader {
  Compiler *c;
  Map done;      /* realpath -> file already read */
  int stack[MAX_INCLUDE_DEPTH + 1];
  Pos stack_at[MAX_INCLUDE_DEPTH + 1]; /* the include that opened each */
  int depth;
} Reader;

/* Whether path names a directory (dir) or something else that exists. */
static bool exists(const char *path, bool dir) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) == !dir;
}

static char *search(Compiler *c, const char *from, const char *name, bool dir) {
  if (name[0] == '/')
    return exists(name, dir) ? arena_strdup(c->arena, name) : NULL;
  char *copy = arena_strdup(c->arena, from);
  char *path = arena_printf(c->arena, "%s/%s", dirname(copy), name);
  if (!strncmp(path, "./", 2) && strncmp(from, "./", 2))
    path += 2;
  if (exists(path, dir))
    return path;
  for (int i = 0; i < c->ninclude_dirs; i++) {
    path = arena_printf(c->arena, "%s/%s", c->include_dirs[i], name);
    if (exists(path, dir))
      return path;
  }
  return NULL;
}

char *find_file(Compiler *c, const char *from, const char *name) {
  return search(c, from, name, false);
}

bool found_directory(Compiler *c, const char *from, const char *name) {
  return search(c, from, name, true) != NULL;
}

static void read_file(Reader *r, int file, Pos at);

static void read_include(Reader *r, Item *inc) {
  Compiler *c = r->c;
  const Source *from = source_get(c->diag, r->stack[r->depth - 1]);
  if (!inc->path[0]) {
    error_at(c->diag, inc->pos, "empty include path");
    c->include_failed = true;
    return;
  }
  char *path = find_file(c, from->path, inc->path);
  char *real = path ? realpath(path, NULL) : NULL;
  if (!real && !path && found_directory(c, from->path, inc->path)) {
    error_at(c->diag, inc->pos, "cannot read '%s': %s", inc->path, strerror(EISDIR));
    c->include_failed = true;
    return;
  }
  if (!real) {
    error_at(c->diag, inc->pos, "cannot find include file '%s'", inc->path);
    c->include_failed = true;
    return;
  }
  for (int i = 0; i < r->depth; i++) {
    const Source *s = source_get(c->diag, r->stack[i]);
    if (s->realpath && !strcmp(s->realpath, real)) {
      free(real);
      error_at(c->diag, inc->pos, "include cycle: '%s' includes itself", s->path);
      for (int j = i + 1; j < r->depth; j++)
        note_at(c->diag, r->stack_at[j], "'%s' includes '%s' here",
                source_get(c->diag, r->stack[j - 1])->path,
                source_get(c->diag, r->stack[j])->path);
      note_at(c->diag, inc->pos, "'%s' includes '%s' here", from->path, s->path);
      return;
    }
  }
  bool seen = map_get(&r->done, real) != NULL;
  if (seen || r->depth == MAX_INCLUDE_DEPTH)
    free(real);
  if (seen)
    return; /* including a file twice is harmless */
  if (r->depth == MAX_INCLUDE_DEPTH) {
    error_at(c->diag, inc->pos, "includes nested more than %d deep",
             MAX_INCLUDE_DEPTH);
    c->include_failed = true;
    return;
  }
  /* An editor's unsaved text of the file comes before the file's. */
  size_t len;
  const char *text = c->overlay ? c->overlay(c->overlay_ctx, real, &len) : NULL;
  int file;
  if (text) {
    file = source_add(c->diag, path, text, len);
    source_set_realpath(c->diag, file, real);
  } else {
    file = source_load(c->diag, path, inc->pos);
  }
  free(real);
  if (file < 0) {
    c->include_failed = true;
    return;
  }
  r->stack_at[r->depth] = inc->pos;
  read_file(r, file, inc->pos);
}

static void read_file(Reader *r, int file, Pos at) {
  Compiler *c = r->c;
  const Source *src = source_get(c->diag, file);
  if (src->realpath)
    map_put(&r->done, src->realpath, (void *)src);
  vec_push(&c->files, file);
  vec_push(&c->included_at, at);
  r->stack[r->depth++] = file;
  ItemVec items = {0};
  parse_source(c, file, &items);
  for (size_t i = 0; i < items.n && !diag_stopped(c->diag); i++) {
    if (items.v[i]->kind == IT_INCLUDE)
      read_include(r, items.v[i]);
    else
      vec_push(&c->items, items.v[i]);
  }
  vec_free(&items);
  r->depth--;
}

static void read_program(Compiler *c, int file) {
  Reader r = {.c = c, .done = {.by_string = true}};
  read_file(&r, file, NO_POS);
  map_free(&r.done);
}

void parse_program_source(Compiler *c, int file) { read_program(c, file); }

bool parse_program(Compiler *c, const char *path) {
  int file = source_load(c->diag, path, NO_POS);
  if (file < 0)
    return false;
  read_program(c, file);
  return true;
}

void parse_program_text(Compiler *c, const char *name, const char *text, size_t len) {
  int file = source_add(c->diag, name, text, len);
  if (file >= 0)
    read_program(c, file);
}

void compiler_init(Compiler *c) {
  c->arena = arena_new();
  c->diag = diag_new();
  c->syms = symtab_new(c->arena);
}

void compiler_free(Compiler *c) {
  for (size_t i = 0; i < c->modules.n; i++) {
    map_free(&c->modules.v[i]->kernels);
    vec_free(&c->modules.v[i]->names);
  }
  vec_free(&c->modules);
  vec_free(&c->deps);
  vec_free(&c->items);
  vec_free(&c->files);
  vec_free(&c->included_at);
  map_free(&c->lost);
  symtab_free(c->syms);
  diag_free(c->diag);
  arena_free(c->arena);
}
