/* sema_control.c: control flow (language v2): a condition's operands
 * and instructions, a switch's selector and cases, and the control nodes
 * whose bodies the walk checks. */
#include "sema_internal.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- graphs: control flow (language v2) ---- */

typedef VEC(Access) AccessVec;

/* The first scalar or buffer that arithmetic `e` computes with, or NULL. */
static Expr *computed_ref(Sema *s, Expr *e) {
  switch (e->kind) {
  case EX_NAME: {
    Binding *b = lookup_use(s, e);
    return b && b->kind == B_RES ? e : NULL;
  }
  case EX_INDEX:
  case EX_SLICE: return computed_ref(s, e->a);
  case EX_NEG: return computed_ref(s, e->a);
  case EX_BIN: {
    Expr *r = computed_ref(s, e->a);
    return r ? r : computed_ref(s, e->b);
  }
  case EX_CALL:
    for (int i = 0; i < e->nargs; i++)
      if (computed_ref(s, e->args[i]))
        return computed_ref(s, e->args[i]);
    return NULL;
  default: return NULL;
  }
}

/* One side of a comparison: a scalar, one element of a buffer, or a
 * constant.  What it reads goes into `reads`. */
static bool cond_operand(Sema *s, Expr *e, Arg *out, Type *type, bool *is_ref, Value *v,
                         AccessVec *reads) {
  if (!resolve_view(s, e, out, is_ref))
    return false;
  if (!*is_ref) {
    out->pos = e->pos;
    Expr *ref =
        e->kind == EX_BIN || e->kind == EX_NEG || e->kind == EX_CALL ? computed_ref(s, e) : NULL;
    if (ref) {
      error_span(s->d, expr_span(e),
                 "a condition cannot compute with '%s': each side of a comparison is a scalar, "
                 "one buffer element or a constant expression; move the arithmetic to the "
                 "constant side, or have a kernel compute the value into a scalar or element",
                 ref->name->name);
      return false;
    }
    return eval(s, e, v);
  }
  Resource *r = &s->g->res.v[out->res];
  if (r->kind == RES_BUFFER) {
    if (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST) {
      error_span(s->d, arg_span(e, out->pos),
                 "'%s' is a host buffer; conditions are evaluated on the device", r->name->name);
      return false;
    }
    if (out->count != 1) {
      error_span(s->d, arg_span(e, out->pos),
                 "a condition compares single values, and this is %lld elements of '%s'; "
                 "index it, as in %s[0]",
                 (long long)out->count, r->name->name, r->name->name);
      return false;
    }
  } else {
    r->memory = true; /* the condition kernel reads its slot */
  }
  *type = r->type;
  Access a = {.lo = out->kind == ARG_VIEW ? out->offset : 0, .res = out->res, .mode = ACC_READ};
  a.hi = a.lo + arg_bytes(s->g, out);
  vec_push(reads, a);
  return true;
}

static void cond_constant(Arg *a, Type t, Value v) {
  a->kind = v.is_float ? ARG_FLOAT : ARG_INT;
  if (v.is_float)
    a->fval = v.f;
  else
    a->ival = v.i;
  a->bits = value_bits(t, v.is_float, v.i, v.f);
}

static CheckedCond *check_cond(Sema *s, Cond *c, bool is_if, AccessVec *reads) {
  CheckedCond *r = arena_alloc(s->c->arena, sizeof *r);
  r->kind = c->kind;
  r->cmp = c->cmp;
  if (c->kind != COND_CMP) {
    r->a = check_cond(s, c->a, is_if, reads);
    r->b = c->b ? check_cond(s, c->b, is_if, reads) : NULL;
    return r->a && (!c->b || r->b) ? r : NULL;
  }
  Type lt = TY_NONE, rt = TY_NONE;
  bool lref, rref;
  Value lv = {0}, rv = {0};
  bool ok = cond_operand(s, c->lhs, &r->lhs, &lt, &lref, &lv, reads);
  ok = cond_operand(s, c->rhs, &r->rhs, &rt, &rref, &rv, reads) && ok;
  if (!ok)
    return NULL;
  if (lref && rref) {
    if (lt != rt) {
      error_at(s->d, c->pos, "the condition compares %s with %s; both sides must have one type",
               type_name(lt), type_name(rt));
      return NULL;
    }
    r->type = lt;
  } else if (lref || rref) {
    r->type = lref ? lt : rt;
    if (!check_fits(s, expr_span(lref ? c->rhs : c->lhs), lref ? rv : lv, r->type,
                    "the other side of the comparison"))
      return NULL;
    cond_constant(lref ? &r->rhs : &r->lhs, r->type, lref ? rv : lv);
  } else if (is_if) {
    error_at(s->d, c->pos,
             "the condition compares two constants beside values the device reads; an if is "
             "decided when cgc compiles only where every comparison compares constants");
    return NULL;
  } else {
    error_at(s->d, c->pos, "the condition compares two constants");
    return NULL;
  }
  return r;
}

/* Where a condition's text starts: its first comparison's left side. */
static Pos cond_start(const Cond *c) {
  while (c->kind != COND_CMP)
    c = c->a;
  return c->lhs->pos;
}

/* A condition lowered to the runtime's postfix code (CondInstr), next to
 * grids: the generated C prints it as it is. */
typedef VEC(CondInstr) CondCode;

static void lower_cond_to(CondCode *code, const CheckedCond *c, bool negate) {
  switch (c->kind) {
  case COND_CMP:
    vec_push(code, ((CondInstr){.op = CGRT_COND_CMP, .cmp = c->cmp, .negate = negate,
                                .type = c->type, .lhs = &c->lhs, .rhs = &c->rhs}));
    break;
  case COND_AND:
  case COND_OR:
    lower_cond_to(code, c->a, negate);
    lower_cond_to(code, c->b, negate);
    vec_push(code, ((CondInstr){.op = (c->kind == COND_AND) != negate ? CGRT_COND_AND
                                                                      : CGRT_COND_OR}));
    break;
  case COND_NOT: lower_cond_to(code, c->a, !negate); break;
  }
}

static void lower_cond(Sema *s, Control *ctl) {
  CondCode code = {0};
  lower_cond_to(&code, ctl->cond, false);
  ctl->cond_code = arena_alloc(s->c->arena, code.n * sizeof *code.v + 1);
  memcpy(ctl->cond_code, code.v, code.n * sizeof *code.v);
  ctl->ncond_code = (int)code.n;
  vec_free(&code);
}

static int count_comparisons(const Cond *c) {
  if (c->kind == COND_CMP)
    return 1;
  return count_comparisons(c->a) + (c->b ? count_comparisons(c->b) : 0);
}

/* A switch's selector: an integer scalar. */
static int check_selector(Sema *s, Expr *e, AccessVec *reads) {
  Arg a = {0};
  bool is_ref;
  if (!resolve_view(s, e, &a, &is_ref))
    return -1;
  Resource *r = is_ref ? &s->g->res.v[a.res] : NULL;
  if (!r || r->kind != RES_SCALAR || type_is_float(r->type)) {
    error_span(s->d, expr_span(e), "switch takes an integer scalar");
    return -1;
  }
  r->memory = true;
  Access acc = {.lo = 0, .hi = r->bytes, .res = a.res, .mode = ACC_READ};
  vec_push(reads, acc);
  return a.res;
}

typedef struct CaseKey {
  int64_t value;
  int k; /* the case's index */
} CaseKey;
typedef VEC(CaseKey) CaseKeys;

static int cmp_case_key(const void *pa, const void *pb) {
  const CaseKey *a = pa, *b = pb;
  if (a->value != b->value)
    return a->value < b->value ? -1 : 1;
  return (a->k > b->k) - (a->k < b->k);
}

/* Each case value once: sorted, so that many cases cost n log n. */
static void check_case_values(Sema *s, Stmt *st, CaseKeys *keys, const int64_t *values) {
  if (!keys->n)
    return;
  qsort(keys->v, keys->n, sizeof *keys->v, cmp_case_key);
  int *first = xrealloc(NULL, (size_t)st->ncases * sizeof *first);
  for (int k = 0; k < st->ncases; k++)
    first[k] = -1;
  for (size_t i = 1; i < keys->n; i++)
    if (keys->v[i].value == keys->v[i - 1].value)
      first[keys->v[i].k] = first[keys->v[i - 1].k] >= 0 ? first[keys->v[i - 1].k]
                                                            : keys->v[i - 1].k;
  for (int k = 0; k < st->ncases; k++)
    if (first[k] >= 0) {
      error_at(s->d, st->cases[k].pos, "case %lld is given twice", (long long)values[k]);
      note_at(s->d, st->cases[first[k]].pos, "first given here");
    }
  free(first);
}

static int cmp_access(const void *pa, const void *pb) {
  const Access *a = pa, *b = pb;
  if (a->res != b->res)
    return a->res < b->res ? -1 : 1;
  if (a->mode != b->mode)
    return a->mode < b->mode ? -1 : 1;
  return (a->lo > b->lo) - (a->lo < b->lo);
}

/* A control node stands for all its bodies' accesses: per resource and
 * mode, the union of their byte ranges is what orders it, so overlapping
 * and adjacent ranges are merged, and nesting does not multiply them. */
static void merge_accesses(AccessVec *acc) {
  if (acc->n < 2)
    return;
  qsort(acc->v, acc->n, sizeof *acc->v, cmp_access);
  size_t k = 0;
  for (size_t i = 1; i < acc->n; i++) {
    Access *last = &acc->v[k], *a = &acc->v[i];
    if (a->res == last->res && a->mode == last->mode && a->lo <= last->hi) {
      if (a->hi > last->hi)
        last->hi = a->hi;
    } else {
      acc->v[++k] = *a;
    }
  }
  acc->n = k + 1;
}

/* Whether a comparison of c reads a scalar or a buffer element. */
static bool reads_device(Sema *s, const Cond *c) {
  if (c->kind != COND_CMP)
    return reads_device(s, c->a) || (c->b && reads_device(s, c->b));
  return computed_ref(s, c->lhs) || computed_ref(s, c->rhs);
}

/* A condition of constants only, decided here: integers compared as
 * integers, anything else as doubles.  Every operand is evaluated, so
 * that each error is reported. */
static bool decide_cond(Sema *s, const Cond *c, bool *out) {
  if (c->kind != COND_CMP) {
    bool a = false, b = false;
    bool ok = decide_cond(s, c->a, &a);
    if (c->b)
      ok = decide_cond(s, c->b, &b) && ok;
    *out = c->kind == COND_AND ? a && b : c->kind == COND_OR ? a || b : !a;
    return ok;
  }
  Value l, r;
  bool ok = eval(s, c->lhs, &l);
  ok = eval(s, c->rhs, &r) && ok;
  if (!ok)
    return false;
  int lt, gt; /* l < r, l > r */
  if (!l.is_float && !r.is_float) {
    lt = l.i < r.i, gt = l.i > r.i;
  } else {
    double a = l.is_float ? l.f : (double)l.i, b = r.is_float ? r.f : (double)r.i;
    lt = a < b, gt = a > b;
  }
  switch (c->cmp) {
  case CMP_EQ: *out = !lt && !gt; break;
  case CMP_NE: *out = lt || gt; break;
  case CMP_LT: *out = lt; break;
  case CMP_LE: *out = !gt; break;
  case CMP_GT: *out = gt; break;
  default: *out = !lt; break;
  }
  return true;
}

/* Each statement in body that makes a node, however deep, is one of
 * the if's, for note_undecided. */
static void mark_decided(Sema *s, Stmt **body, int n, Stmt *iff) {
  for (int i = 0; i < n; i++) {
    Stmt *st = body[i];
    if (st->kind == ST_NODE || st->kind == ST_WHILE || st->kind == ST_IF || st->kind == ST_SWITCH)
      map_put(&s->decided, st, iff);
    if (st->kind == ST_FOR || st->kind == ST_WHILE || st->kind == ST_IF)
      mark_decided(s, st->body, st->nbody, iff);
    if (st->kind == ST_IF)
      mark_decided(s, st->else_body, st->nelse, iff);
    for (int k = 0; st->kind == ST_SWITCH && k < st->ncases; k++)
      mark_decided(s, st->cases[k].body, st->cases[k].nbody, iff);
  }
}

/* An if whose comparisons all compare constants is decided when cgc
 * compiles: the body it takes is checked as if written in its place (its
 * nodes in the surrounding body, ordered with their neighbours), the other
 * is not checked, and no node stands for the if.  False where the if is
 * one the device decides. */
static bool walk_constant_if(Sema *s, Stmt *st) {
  if (reads_device(s, st->cond))
    return false;
  if (st->name)
    error_at(s->d, st->name_pos,
             "this if compares only constants, so cgc decides it when it compiles and it makes "
             "no node: it cannot be named ('node %s = if ...')",
             st->name->name);
  bool take;
  if (!decide_cond(s, st->cond, &take))
    return true;
  /* Once, however often loops check it (an if it holds marks its own
   * bodies when it is decided, after this: the innermost wins). */
  if (map_get(&s->decided, st) != st) {
    mark_decided(s, st->body, st->nbody, st);
    mark_decided(s, st->else_body, st->nelse, st);
    map_put(&s->decided, st, st);
  }
  size_t mark = s->locals.n;
  s->blocks++; /* no scalars or buffers in it, its constants its own */
  if (take)
    walk(s, st->body, st->nbody);
  else if (st->has_else)
    walk(s, st->else_body, st->nelse);
  s->blocks--;
  pop_locals(s, mark);
  return true;
}

/* while, if and switch are nodes in their own body, holding bodies of
 * nodes; their accesses are their bodies' and their condition's. */
void walk_control(Sema *s, Stmt *st) {
  if (st->kind == ST_IF && walk_constant_if(s, st))
    return;
  if (!st->base)
    return; /* a duplicate name, already reported */
  if (!node_budget(s, st->pos, 0))
    return;
  Graph *g = s->g;
  Node n = {.name = node_name(s, st->pos, st->base, st->loop_depth),
            .stmt = st,
            .scope = s->scope,
            .branch = s->branch,
            .keyword_name = keyword_named(st)};
  if (!n.name)
    return;
  n.kind = st->node_kind;
  Control *ctl = arena_alloc(s->c->arena, sizeof *ctl);
  *ctl = (Control){.default_body = -1, .selector = -1, .handle_at = NO_POS};
  n.control = ctl;
  if (s->scope >= 0 && pos_set(g->nodes.v[s->scope].control->handle_at))
    report_control_in_handle_body(s, &g->nodes.v[s->scope], st->pos, st->node_kind);
  AccessVec acc = {0};
  Stmt ***bodies = NULL;
  int *nbody = NULL;
  if (st->kind != ST_SWITCH) {
    ctl->cond = check_cond(s, st->cond, st->kind == ST_IF, &acc);
    if (ctl->cond) /* NULL where an error was reported */
      lower_cond(s, ctl);
    int ncmp = count_comparisons(st->cond);
    if (ncmp > MAX_COND_CMP)
      error_at(s->d, cond_start(st->cond),
               "this condition makes %d comparisons; one condition makes at most %d", ncmp,
               MAX_COND_CMP);
    ctl->nbodies = st->kind == ST_IF && st->has_else ? 2 : 1;
  } else {
    ctl->selector = check_selector(s, st->selector, &acc);
    if (st->ncases == 0)
      error_at(s->d, st->pos,
               "this switch has no case and no default; a switch node needs at least one body");
    ctl->nbodies = st->ncases;
    ctl->case_values = arena_alloc(s->c->arena, (size_t)st->ncases * sizeof *ctl->case_values + 1);
  }
  if (st->kind == ST_WHILE && st->max_iter) {
    int64_t m;
    if (eval_int(s, st->max_iter, &m)) {
      if (m < 1)
        error_span(s->d, expr_span(st->max_iter), "max %lld: a loop's bound must be at least 1",
                   (long long)m);
      else
        ctl->max_iter = m;
    }
  }
  bodies = xrealloc(NULL, ((size_t)ctl->nbodies + 1) * sizeof *bodies);
  nbody = xrealloc(NULL, ((size_t)ctl->nbodies + 1) * sizeof *nbody);
  if (st->kind != ST_SWITCH) {
    bodies[0] = st->body, nbody[0] = st->nbody;
    if (ctl->nbodies == 2)
      bodies[1] = st->else_body, nbody[1] = st->nelse;
  } else {
    Resource *sel = ctl->selector >= 0 ? &g->res.v[ctl->selector] : NULL;
    CaseKeys keys = {0};
    for (int k = 0; k < st->ncases; k++) {
      CaseItem *c = &st->cases[k];
      bodies[k] = c->body, nbody[k] = c->nbody;
      if (!c->value) {
        if (ctl->default_body >= 0) {
          error_at(s->d, c->pos, "default is given twice");
          note_at(s->d, st->cases[ctl->default_body].pos, "first given here");
        }
        ctl->default_body = k;
        continue;
      }
      int64_t v;
      if (!eval_int(s, c->value, &v))
        continue;
      char what[300];
      if (sel) {
        snprintf(what, sizeof what, "scalar '%s'", sel->name->name);
        if (!check_fits(s, expr_span(c->value), (Value){.i = v}, sel->type, what))
          continue;
      }
      ctl->case_values[k] = v;
      CaseKey key = {v, k};
      vec_push(&keys, key);
    }
    check_case_values(s, st, &keys, ctl->case_values);
    vec_free(&keys);
  }
  vec_push(&g->nodes, n);
  vec_push(&s->subtree_end, 0);
  int32_t self = (int32_t)g->nodes.n - 1;
  int32_t scope = s->scope, branch = s->branch;
  s->scope = self;
  s->blocks++;
  for (int b = 0; b < ctl->nbodies && !diag_stopped(s->d); b++) {
    size_t mark = s->locals.n;
    s->branch = b;
    walk(s, bodies[b], nbody[b]);
    pop_locals(s, mark);
  }
  s->blocks--;
  s->scope = scope;
  s->branch = branch;
  /* The bodies' nodes follow this one; a nested control node already
   * holds the accesses of its own bodies, which are skipped. */
  s->subtree_end.v[self] = (uint32_t)g->nodes.n;
  for (size_t i = (size_t)self + 1; i < g->nodes.n;) {
    const Node *m = &g->nodes.v[i];
    for (int k = 0; k < m->nacc; k++)
      vec_push(&acc, m->acc[k]);
    i = node_kinds[m->kind].bodies ? s->subtree_end.v[i] : i + 1;
  }
  merge_accesses(&acc);
  if (!access_budget(s, st->pos, (int64_t)acc.n))
    acc.n = 0; /* reported; checking stops */
  Node *np = &g->nodes.v[self];
  np->nacc = (int)acc.n;
  np->acc = arena_alloc(s->c->arena, acc.n * sizeof *np->acc + 1);
  if (acc.n)
    memcpy(np->acc, acc.v, acc.n * sizeof *np->acc);
  vec_free(&acc);
  free(bodies);
  free(nbody);
}
