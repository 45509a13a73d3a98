/* sema_node.c: a node statement's checks: its kernel's arguments and
 * the views they pass, copies, fills, collectives, the launch configuration
 * and grids that follow bounded scalars; each makes the node's arguments
 * and accesses. */
#include "sema_internal.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- graphs: nodes ---- */

/* Resolves a buffer or scalar reference with views into an argument. */
bool resolve_view(Sema *s, Expr *e, Arg *arg, bool *is_ref) {
  Expr *chain[MAX_EXPR_DEPTH + 1];
  int n = 0;
  Expr *root = e;
  while (root->kind == EX_INDEX || root->kind == EX_SLICE) {
    chain[n++] = root;
    root = root->a;
  }
  *is_ref = false;
  if (root->kind != EX_NAME)
    return true;
  Binding *b = lookup_use(s, root);
  if (!b && !map_get(&s->globals, root->name)) {
    undefined(s, root->pos, root->name);
    return false;
  }
  if (!b || b->kind != B_RES)
    return true;
  *is_ref = true;
  Resource *r = &s->g->res.v[b->res];
  arg->pos = root->pos;
  arg->res = b->res;
  if (r->kind == RES_SCALAR) {
    if (n > 0) {
      error_span(s->d, expr_span(chain[n - 1]), "scalar '%s' cannot be indexed", r->name->name);
      return false;
    }
    arg->kind = ARG_SCALAR_PTR;
    arg->count = 1;
    return true;
  }
  arg->kind = ARG_VIEW;
  if (r->count == 0)
    return dropped(s, root->pos); /* the declaration was in error */
  int64_t offset = 0, lead = r->ndims > 0 ? r->dims[0] : 1;
  int dim = 0;                    /* the buffer dimension now leading */
  int64_t slice = r->count / lead; /* elements in one slice of it */
  for (int i = n - 1; i >= 0; i--) {
    Expr *v = chain[i];
    if (dim >= r->ndims) {
      error_span(s->d, expr_span(v), "'%s' has %d dimension%s; this index is one too many",
                 r->name->name, r->ndims, plural(r->ndims));
      return false;
    }
    int64_t lo, hi;
    if (!eval_int(s, v->b, &lo))
      return false;
    if (v->kind == EX_INDEX) {
      if (lo < 0 || lo >= lead) {
        error_span(s->d, expr_span(v->b),
                   "index %lld is out of range for dimension %d of '%s' (size %lld)", (long long)lo,
                   dim, r->name->name, (long long)lead);
        return false;
      }
      offset += lo * slice;
      dim++;
      lead = dim < r->ndims ? r->dims[dim] : 1;
      slice = dim < r->ndims ? slice / lead : 1;
    } else {
      if (!eval_int(s, v->c, &hi))
        return false;
      if (lo < 0 || hi > lead || lo >= hi) {
        error_span(s->d, expr_span(v->b),
                   "slice %lld:%lld is out of range for dimension %d of '%s' (size %lld)",
                   (long long)lo, (long long)hi, dim, r->name->name, (long long)lead);
        return false;
      }
      offset += lo * slice;
      lead = hi - lo;
    }
  }
  arg->count = lead * slice;
  if (dim >= r->ndims)
    arg->count = 1;
  arg->offset = offset * type_size(r->type);
  return true;
}

/* An argument's whole text, the caret at its buffer or scalar. */
Span arg_span(const Expr *e, Pos at) {
  Span sp = expr_span(e);
  sp.at = at;
  return sp;
}

/* "wq[0] (f16[1024, 1024], 1048576 elements)" */
static const char *arg_text(Sema *s, Expr *e, const Arg *a) {
  const Resource *r = &s->g->res.v[a->res];
  const char *name = r->name->name;
  if (e->kind == EX_NAME)
    return arena_printf(s->c->arena, "%s '%s' (%s)", r->kind == RES_SCALAR ? "scalar" : "buffer",
                        name, shape_text(s, r->type, r->dims, r->ndims));
  return arena_printf(s->c->arena, "view of '%s' (%s, %lld element%s)", name,
                      type_name(r->type), (long long)a->count, plural(a->count));
}

static void add_access(Sema *s, Node *n, const Arg *a, AccessMode mode) {
  Access *acc = &n->acc[n->nacc++];
  acc->res = a->res;
  acc->lo = a->kind == ARG_VIEW ? a->offset : 0;
  acc->hi = acc->lo + arg_bytes(s->g, a);
  acc->mode = mode;
  (void)s;
}


/* The declaration of the while node that a bare name in an argument
 * names, when no buffer, scalar or constant has that name. */
static Stmt *while_named(Sema *s, const Expr *e) {
  if (e->kind != EX_NAME || lookup(s, e->name) || map_get(&s->globals, e->name))
    return NULL;
  Stmt *decl = map_get(&s->node_decls, e->name);
  return decl && decl->kind == ST_WHILE ? decl : NULL;
}

/* "an if node", "a kernel node": what a node's declaration makes. */
static const char *node_decl_text(const Stmt *decl) {
  switch (decl->kind) {
  case ST_IF: return "an if node";
  case ST_SWITCH: return "a switch node";
  case ST_WHILE: return "a while node";
  default: break;
  }
  switch (decl->node_kind) {
  case NK_COPY: return "a copy node";
  case NK_FILL: return "a fill node";
  default: return "a kernel node";
  }
}

/* A loop whose body's kernel sets its handle holds no control flow and is
 * in none, so that ordering it apart from the other control nodes of its
 * graph (order.c, WHY_APART) needs to look at one level only.  `kind` is
 * the control node found in its body. */
void report_control_in_handle_body(Sema *s, const Node *w, Pos at, NodeKind kind) {
  error_at(s->d, at,
           "while '%s' has %s %s node in its body, and its body's kernel sets its handle; such "
           "a loop holds no control flow",
           w->name, node_kinds[kind].an ? "an" : "a", node_kinds[kind].name);
  note_at(s->d, w->control->handle_at, "the handle is passed here");
}

/* An argument of a handle parameter: the name of a while node whose body
 * holds this call directly (a for's copies are in the body itself).  The
 * while's body then ends with no condition kernel: this node sets the
 * condition, and only one node of the body may take the handle. */
static bool check_handle_arg(Sema *s, Node *n, Param *p, Expr *e, Arg *arg) {
  const char *kname = n->kernel->name->name;
  Stmt *decl = e->kind == EX_NAME ? map_get(&s->node_decls, e->name) : NULL;
  if (!decl) {
    bool named = e->kind == EX_NAME && !lookup_use(s, e) && !map_get(&s->globals, e->name);
    if (named && !s->c->include_failed) {
      if (undefined_reported(s, e->pos))
        return false;
      Suggest sg;
      suggest_init(&sg, e->name->name);
      for (size_t i = 0; i < s->node_decls.cap; i++) {
        const Stmt *d = s->node_decls.slots[i].value;
        if (s->node_decls.slots[i].key && d->kind == ST_WHILE)
          suggest_try(&sg, d->base->name);
      }
      report_undefined(s, e->pos, UNDEFINED_NODE, e->name, suggest_best(&sg));
      return false;
    }
    if (named)
      return false; /* it may be the missing include's */
    error_span(s->d, expr_span(e),
               "parameter '%s' of '%s' is a handle; pass the name of a while node whose body "
               "holds this call (node NAME = while ...)",
               p->name->name, kname);
    note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
    return false;
  }
  note_stmt(s, e, e->pos, decl);
  if (decl->kind != ST_WHILE) {
    error_at(s->d, e->pos,
             "'%s' is %s; only a while's handle can be passed, by a kernel in its body",
             e->name->name, node_decl_text(decl));
    return false;
  }
  /* This iteration's while, when the call is inside the loops that
   * declare it; then it must enclose the call. */
  int32_t w = -1;
  Stmt *a = decl->parent_for, *b = s->cur_stmt ? s->cur_stmt->parent_for : NULL;
  int depth = s->cur_stmt ? s->cur_stmt->loop_depth : 0;
  for (; depth > decl->loop_depth; depth--)
    b = b->parent_for;
  const char *name = depth == decl->loop_depth && a == b
                         ? node_name(s, e->pos, decl->base, decl->loop_depth)
                         : NULL;
  for (int32_t x = s->scope; name && x >= 0; x = s->g->nodes.v[x].scope)
    if (node_kinds[s->g->nodes.v[x].kind].loop && !strcmp(s->g->nodes.v[x].name, name)) {
      w = x;
      break;
    }
  if (w < 0) {
    error_at(s->d, e->pos,
             "'%s' is a while node, but this call is not in its body; a while's handle is passed "
             "only by a kernel in its body",
             e->name->name);
    note_at(s->d, decl->name_pos, "'%s' is declared here", e->name->name);
    return false;
  }
  Node *wn = &s->g->nodes.v[w];
  if (s->scope != w) {
    /* Measured on the H200: a kernel of an inner loop's body that set the
     * outer loop's handle made launches fail now and then (unspecified
     * launch failure) while another conditional node ran beside it. */
    Node *in = &s->g->nodes.v[s->scope];
    error_at(s->d, e->pos,
             "the handle of while '%s' is passed from inside %s '%s' in its body; a loop's "
             "condition is set by a kernel directly in its body (or in a 'for' there)",
             wn->name, node_kinds[in->kind].name, in->name);
    note_at(s->d, decl->name_pos, "'%s' is declared here", e->name->name);
    return false;
  }
  Control *wc = wn->control;
  if (pos_set(wc->handle_at)) {
    if (!wc->handle_reported) {
      bool copy = wc->handle_at.off == e->pos.off;
      error_at(s->d, e->pos,
               "the handle of while '%s' is passed a second time%s; one node of a loop's body "
               "sets its condition",
               wn->name, copy ? " (a 'for' repeats this call)" : "");
      note_at(s->d, wc->handle_at, "it is first passed here");
      wc->handle_reported = true;
    }
    return false;
  }
  wc->handle_at = e->pos;
  if (wn->scope >= 0) {
    const Node *out = &s->g->nodes.v[wn->scope];
    error_at(s->d, e->pos,
             "while '%s' is inside %s '%s'; only a loop outside control flow may have its "
             "condition set by its body's kernel",
             wn->name, node_kinds[out->kind].name, out->name);
    note_at(s->d, decl->name_pos, "'%s' is declared here", e->name->name);
    return false;
  }
  /* The call is in w's body, so every node made since w is of that body
   * (a control node comes before its bodies' nodes): only those are looked
   * at, which keeps a program of many such loops linear. */
  for (size_t i = (size_t)w + 1; i < s->g->nodes.n; i++) {
    const Node *c = &s->g->nodes.v[i];
    if (c->scope == w && node_kinds[c->kind].bodies) {
      report_control_in_handle_body(s, wn, node_pos(c), c->kind);
      return false;
    }
  }
  if (decl->max_iter) {
    error_at(s->d, e->pos,
             "while '%s' has a bound (max), which the runtime's condition kernel counts; a loop "
             "whose body sets its handle has no such kernel, so it cannot have one",
             wn->name);
    note_at(s->d, decl->max_iter->pos, "the bound is given here");
    return false;
  }
  arg->kind = ARG_HANDLE;
  arg->pos = e->pos;
  arg->res = w;
  return true;
}

static bool check_kernel_arg(Sema *s, Node *n, Param *p, Expr *e, Arg *arg) {
  if (p->type == TY_HANDLE)
    return check_handle_arg(s, n, p, e, arg);
  const char *kname = n->kernel->name->name;
  Stmt *w = while_named(s, e);
  if (w) {
    note_stmt(s, e, e->pos, w);
    error_at(s->d, e->pos,
             "parameter '%s' of '%s' is %s%s, but '%s' is a while node; only a handle parameter "
             "takes a while's name",
             p->name->name, kname, type_name(p->type), p->pointer ? "*" : "", e->name->name);
    note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
    return false;
  }
  bool is_ref;
  if (!resolve_view(s, e, arg, &is_ref))
    return false;
  if (p->pointer) {
    if (!is_ref) {
      error_span(s->d, expr_span(e),
                 "parameter '%s' of '%s' is a pointer (%s*); pass a buffer or a scalar",
                 p->name->name, kname, type_name(p->type));
      return false;
    }
    Resource *r = &s->g->res.v[arg->res];
    if (r->kind == RES_BUFFER && (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST)) {
      error_span(s->d, arg_span(e, arg->pos), "'%s' is a host buffer; %s take device memory",
                 r->name->name, n->kernel->capture ? "capture functions" : "kernels");
      return false;
    }
    if (r->type != p->type) {
      error_span(s->d, arg_span(e, arg->pos),
                 "parameter '%s' of '%s' is %s*, but the argument is %s", p->name->name, kname,
                 type_name(p->type), arg_text(s, e, arg));
      note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
      return false;
    }
    if (r->kind == RES_SCALAR && (p->mode & MODE_OUT) && !pos_set(r->written_at))
      r->written_at = arg->pos;
    if (r->kind == RES_SCALAR)
      r->memory = true;
    add_access(s, n, arg, (AccessMode)p->mode);
    return true;
  }
  if (is_ref) {
    Resource *r = &s->g->res.v[arg->res];
    if (r->kind == RES_BUFFER) {
      error_span(s->d, arg_span(e, arg->pos),
                 "parameter '%s' of '%s' is a value (%s), but the argument is %s", p->name->name,
                 kname, type_name(p->type), arg_text(s, e, arg));
      return false;
    }
    if (r->type != p->type) {
      error_span(s->d, arg_span(e, arg->pos), "parameter '%s' of '%s' is %s, but scalar '%s' is %s",
                 p->name->name, kname, type_name(p->type), r->name->name, type_name(r->type));
      return false;
    }
    if (node_kinds[n->kind].captured) {
      /* The function runs once, at create: its captured work would keep
       * the value the scalar had then. */
      error_span(s->d, arg_span(e, arg->pos),
                 "scalar '%s' cannot reach capture function '%s' by value: capture would freeze "
                 "it; declare parameter '%s' as a pointer (%s*) and pass the scalar's slot",
                 r->name->name, kname, p->name->name, type_name(p->type));
      note_at(s->d, p->pos, "'%s' is declared here", p->name->name);
      return false;
    }
    arg->kind = ARG_SCALAR_VALUE;
    add_access(s, n, arg, ACC_READ);
    return true;
  }
  Value v;
  if (!eval(s, e, &v))
    return false;
  if (!value_fits(v, p->type)) { /* the use named only for the message */
    char what[300];
    snprintf(what, sizeof what, "parameter '%s' of '%s'", p->name->name, kname);
    check_fits(s, expr_span(e), v, p->type, what);
    return false;
  }
  arg->pos = e->pos;
  arg->bits = value_bits(p->type, v.is_float, v.i, v.f);
  if (v.is_float) {
    arg->kind = ARG_FLOAT;
    arg->fval = v.f;
  } else if (type_is_float(p->type)) {
    arg->kind = ARG_FLOAT;
    arg->fval = (double)v.i;
  } else {
    arg->kind = ARG_INT;
    arg->ival = v.i;
  }
  return true;
}

static bool check_copy_fill_ref(Sema *s, Expr *e, Arg *arg, const char *what) {
  bool is_ref;
  if (!resolve_view(s, e, arg, &is_ref))
    return false;
  if (!is_ref) {
    error_span(s->d, expr_span(e), "the %s must be a buffer, a view or a scalar", what);
    return false;
  }
  if (arg->kind == ARG_SCALAR_PTR)
    s->g->res.v[arg->res].memory = true;
  return true;
}

static void check_copy(Sema *s, Node *n, Stmt *st) {
  if (st->nargs != 2) {
    error_at(s->d, st->callee_pos, "copy takes 2 arguments (destination, source), %d given",
             st->nargs);
    return;
  }
  n->args = arena_alloc(s->c->arena, 2 * sizeof *n->args);
  n->nargs = 2;
  Arg *dst = &n->args[0], *src = &n->args[1];
  if (!check_copy_fill_ref(s, st->args[0], dst, "destination of a copy") ||
      !check_copy_fill_ref(s, st->args[1], src, "source of a copy"))
    return;
  const Resource *rd = &s->g->res.v[dst->res], *rs = &s->g->res.v[src->res];
  if (rd->type != rs->type) {
    error_at(s->d, st->callee_pos, "copy between different element types: the destination is %s, the source %s",
             arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
    return;
  }
  if (dst->count != src->count) {
    error_at(s->d, st->callee_pos, "copy sizes differ: the destination is %s, the source %s",
             arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
    return;
  }
  int64_t dlo = dst->kind == ARG_VIEW ? dst->offset : 0;
  int64_t slo = src->kind == ARG_VIEW ? src->offset : 0;
  if (dst->res == src->res && dlo < slo + arg_bytes(s->g, src) &&
      slo < dlo + arg_bytes(s->g, dst)) {
    error_at(s->d, st->callee_pos, "the source and destination of this copy overlap in '%s'",
             rd->name->name);
    return;
  }
  if (rd->kind == RES_SCALAR && !pos_set(rd->written_at))
    s->g->res.v[dst->res].written_at = dst->pos;
  add_access(s, n, dst, ACC_WRITE);
  add_access(s, n, src, ACC_READ);
}

static void check_fill(Sema *s, Node *n, Stmt *st) {
  if (st->nargs != 2) {
    error_at(s->d, st->callee_pos, "fill takes 2 arguments (destination, value), %d given",
             st->nargs);
    return;
  }
  n->args = arena_alloc(s->c->arena, 2 * sizeof *n->args);
  n->nargs = 2;
  Arg *dst = &n->args[0];
  if (!check_copy_fill_ref(s, st->args[0], dst, "destination of a fill"))
    return;
  Resource *r = &s->g->res.v[dst->res];
  if (r->kind == RES_BUFFER && (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST)) {
    error_span(s->d, arg_span(st->args[0], dst->pos),
               "'%s' is a host buffer; fill needs device memory", r->name->name);
    return;
  }
  Value v;
  if (!eval(s, st->args[1], &v))
    return;
  char what[300];
  snprintf(what, sizeof what, "'%s'", r->name->name);
  if (!check_fits(s, expr_span(st->args[1]), v, r->type, what))
    return;
  Arg *val = &n->args[1];
  val->pos = st->args[1]->pos;
  val->kind = v.is_float || type_is_float(r->type) ? ARG_FLOAT : ARG_INT;
  if (val->kind == ARG_FLOAT)
    val->fval = v.is_float ? v.f : (double)v.i;
  else
    val->ival = v.i;
  val->bits = value_bits(r->type, v.is_float, v.i, v.f);
  if (r->kind == RES_SCALAR && !pos_set(r->written_at))
    r->written_at = dst->pos;
  add_access(s, n, dst, ACC_WRITE);
}

/* ---- collectives ---- */

/* Each collective's arguments (collective_kinds names it). */
static const struct {
  int min_args, max_args;
  const char *usage;
} collectives[NCOLLECTIVES] = {
    [CGRT_ALL_REDUCE] = {2, 3, "all_reduce(buffer, op) or all_reduce(dst, src, op)"},
    [CGRT_ALL_GATHER] = {2, 2, "all_gather(dst, src)"},
    [CGRT_REDUCE_SCATTER] = {3, 3, "reduce_scatter(dst, src, op)"},
    [CGRT_BROADCAST] = {2, 3, "broadcast(buffer, root) or broadcast(dst, src, root)"},
};

/* The collective a call names, or -1: the name, unless a kernel has it. */
static int collective_index(const Sym *name) {
  for (int i = 0; i < NCOLLECTIVES; i++)
    if (!strcmp(name->name, collective_kinds[i].name))
      return i;
  return -1;
}

/* A collective's buffer or view: device memory of a type NCCL has. */
static bool check_collective_ref(Sema *s, Expr *e, Arg *arg, const char *what,
                                 const char *name) {
  char buf[80];
  snprintf(buf, sizeof buf, "%s of %s", what, name);
  if (!check_copy_fill_ref(s, e, arg, buf))
    return false;
  const Resource *r = &s->g->res.v[arg->res];
  if (r->kind == RES_BUFFER && (r->buffer_kind == BUF_HOST || r->buffer_kind == BUF_EXTERN_HOST)) {
    error_at(s->d, arg->pos, "'%s' is a host buffer; %s needs device memory", r->name->name,
             name);
    return false;
  }
  if (r->type == TY_I16 || r->type == TY_U16) {
    error_at(s->d, arg->pos, "NCCL has no 16-bit integer type, and '%s' is %s", r->name->name,
             type_name(r->type));
    return false;
  }
  return true;
}

static bool check_reduce_op(Sema *s, Node *n, Expr *e, Type type, const char *name) {
  if (e->kind == EX_NAME)
    for (int i = 0; i < NREDUCTIONS; i++)
      if (!strcmp(e->name->name, reductions[i].name)) {
        if (i == CGRT_AVG && !type_is_float(type)) {
          error_at(s->d, e->pos, "avg needs floating-point elements, and these are %s",
                   type_name(type));
          return false;
        }
        n->collective->reduce_op = i;
        return true;
      }
  error_at(s->d, e->pos, "the reduction of %s is one of sum, prod, max, min and avg", name);
  return false;
}

/* all_reduce, all_gather, reduce_scatter and broadcast. */
static void check_collective(Sema *s, Node *n, Stmt *st, int c) {
  const char *name = collective_kinds[c].name;
  n->kind = NK_COLLECTIVE;
  n->collective = arena_alloc(s->c->arena, sizeof *n->collective);
  n->collective->which = c;
  if (st->nargs < collectives[c].min_args || st->nargs > collectives[c].max_args) {
    error_at(s->d, st->callee_pos, "%s takes %d argument%s, %d given: %s", name,
             collectives[c].min_args, plural(collectives[c].min_args), st->nargs,
             collectives[c].usage);
    return;
  }
  if (s->scope >= 0) {
    error_at(s->d, st->callee_pos,
             "%s cannot be in the body of a while, if or switch: NCCL's captured work may hold "
             "host nodes, which a conditional body cannot",
             name);
    return;
  }
  if (st->nlaunch) {
    error_at(s->d, st->launch[0].pos, "%s takes no launch configuration", name);
    return;
  }
  /* The in-place forms: all_reduce(buf, op), broadcast(buf, root). */
  bool in_place = (c == CGRT_ALL_REDUCE || c == CGRT_BROADCAST) && st->nargs == 2;
  n->args = arena_alloc(s->c->arena, 2 * sizeof *n->args);
  n->acc = arena_alloc(s->c->arena, 2 * sizeof *n->acc);
  n->nargs = 2;
  Arg *dst = &n->args[0], *src = &n->args[1];
  if (!check_collective_ref(s, st->args[0], dst, in_place ? "the buffer" : "the destination",
                            name))
    return;
  if (in_place)
    *src = *dst;
  else if (!check_collective_ref(s, st->args[1], src, "the source", name))
    return;
  const Resource *rd = &s->g->res.v[dst->res], *rs = &s->g->res.v[src->res];
  if (rd->type != rs->type) {
    error_at(s->d, st->callee_pos,
             "%s between different element types: the destination is %s, the source %s", name,
             arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
    return;
  }
  int64_t dlo = dst->kind == ARG_VIEW ? dst->offset : 0;
  int64_t slo = src->kind == ARG_VIEW ? src->offset : 0;
  if (!in_place && dst->res == src->res && dlo < slo + arg_bytes(s->g, src) &&
      slo < dlo + arg_bytes(s->g, dst)) {
    error_at(s->d, st->callee_pos,
             "the source and destination of %s overlap in '%s'; for the in-place form name one "
             "buffer",
             name, rd->name->name);
    return;
  }
  n->collective->send_count = src->count;
  n->collective->recv_count = dst->count;
  switch (c) {
  case CGRT_ALL_REDUCE:
  case CGRT_BROADCAST:
    if (dst->count != src->count) {
      error_at(s->d, st->callee_pos, "%s sizes differ: the destination is %s, the source %s",
               name, arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
      return;
    }
    break;
  case CGRT_ALL_GATHER:
    if (dst->count % src->count) {
      error_at(s->d, st->callee_pos,
               "all_gather's destination holds the source of every rank, a multiple of its "
               "size: the destination is %s, the source %s",
               arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
      return;
    }
    break;
  case CGRT_REDUCE_SCATTER:
    if (src->count % dst->count) {
      error_at(s->d, st->callee_pos,
               "reduce_scatter's source holds a destination's worth for every rank, a multiple "
               "of its size: the destination is %s, the source %s",
               arg_text(s, st->args[0], dst), arg_text(s, st->args[1], src));
      return;
    }
    break;
  }
  Expr *last = st->args[st->nargs - 1];
  if (c == CGRT_BROADCAST) {
    int64_t root;
    if (!eval_int(s, last, &root))
      return;
    if (root < 0 || root > INT32_MAX) {
      error_at(s->d, last->pos, "broadcast's root is a rank, from 0 to %d; %lld is not",
               INT32_MAX, (long long)root);
      return;
    }
    n->collective->root = root;
  } else if (c != CGRT_ALL_GATHER && !check_reduce_op(s, n, last, rd->type, name)) {
    return;
  }
  if (in_place) {
    if (rd->kind == RES_SCALAR && !pos_set(rd->written_at))
      s->g->res.v[dst->res].written_at = dst->pos;
    add_access(s, n, dst, ACC_RW);
    return;
  }
  if (rd->kind == RES_SCALAR && !pos_set(rd->written_at))
    s->g->res.v[dst->res].written_at = dst->pos;
  add_access(s, n, dst, ACC_WRITE);
  add_access(s, n, src, ACC_READ);
}

static const char *const launch_names[] = {"grid", "block", "smem", "cluster", "priority"};

static bool launch_extents(Sema *s, LaunchItem *l, int64_t out[3]) {
  if (l->nargs < 1 || l->nargs > 3) {
    error_at(s->d, l->pos, "%s takes 1 to 3 extents, %d given", launch_names[l->key], l->nargs);
    return false;
  }
  out[0] = out[1] = out[2] = 1;
  for (int i = 0; i < l->nargs; i++) {
    if (!eval_int(s, launch_arg(l, i), &out[i]))
      return false;
    if (out[i] < 1) {
      error_span(s->d, expr_span(launch_arg(l, i)), "%s extent %lld must be at least 1",
                 launch_names[l->key], (long long)out[i]);
      return false;
    }
  }
  return true;
}

/* ---- grids that follow scalars ---- */

typedef VEC(int64_t) GridCode;

/* Whether e names a scalar: then it is a grid's program, not a constant. */
static bool names_scalar(Sema *s, const Expr *e) {
  switch (e->kind) {
  case EX_NAME: {
    Binding *b = lookup_use(s, (Expr *)e);
    return b && b->kind == B_RES && s->g->res.v[b->res].kind == RES_SCALAR;
  }
  case EX_CALL:
    for (int i = 0; i < e->nargs; i++)
      if (names_scalar(s, e->args[i]))
        return true;
    return false;
  case EX_NEG: return names_scalar(s, e->a);
  case EX_BIN: return names_scalar(s, e->a) || names_scalar(s, e->b);
  case EX_INT:
  case EX_FLOAT:
  case EX_INDEX:
  case EX_SLICE: break;
  }
  return false;
}

/* Appends the program of grid expression e to code (postfix, scalars by
 * their Graph.res index); *depth: the operands it holds at once.  False
 * after an error. */
static bool grid_program(Sema *s, Expr *e, GridCode *code, int *depth) {
  if (!names_scalar(s, e)) {
    int64_t v;
    if (!eval_int(s, e, &v))
      return false;
    vec_push(code, CGRT_GRID_CONST);
    vec_push(code, v);
    *depth = 1;
    return true;
  }
  Expr *a = NULL, *b = NULL;
  int64_t op = 0;
  switch (e->kind) {
  case EX_NAME: {
    Binding *bind = lookup_use(s, e);
    Resource *r = &s->g->res.v[bind->res];
    if (type_is_float(r->type)) {
      error_span(s->d, expr_span(e), "scalar '%s' is %s; a grid follows integer scalars only",
                 r->name->name, type_name(r->type));
      return false;
    }
    if (!r->bounded) {
      no_bound(s, e, r, "a grid");
      return false;
    }
    if (!pos_set(r->grid_at))
      r->grid_at = e->pos;
    vec_push(code, CGRT_GRID_SCALAR);
    vec_push(code, bind->res);
    *depth = 1;
    return true;
  }
  case EX_NEG:
    if (!grid_program(s, e->a, code, depth))
      return false;
    vec_push(code, CGRT_GRID_NEG);
    return true;
  case EX_CALL: {
    Value v;
    const char *fn = e->fn->name;
    if ((strcmp(fn, "cdiv") && strcmp(fn, "min") && strcmp(fn, "max")) || e->nargs != 2)
      return eval(s, e, &v); /* reports it */
    a = e->args[0];
    b = e->args[1];
    op = fn[0] == 'c' ? CGRT_GRID_CDIV : fn[1] == 'i' ? CGRT_GRID_MIN : CGRT_GRID_MAX;
    break;
  }
  case EX_BIN:
    a = e->a;
    b = e->b;
    op = e->op == '+'   ? CGRT_GRID_ADD
         : e->op == '-' ? CGRT_GRID_SUB
         : e->op == '*' ? CGRT_GRID_MUL
         : e->op == '/' ? CGRT_GRID_DIV
                        : CGRT_GRID_MOD;
    break;
  case EX_INT:
  case EX_FLOAT:
  case EX_INDEX:
  case EX_SLICE: {
    Value v;
    return eval(s, e, &v); /* reports it */
  }
  }
  int da = 0, db = 0;
  bool ok = grid_program(s, a, code, &da);
  ok = grid_program(s, b, code, &db) && ok;
  if (!ok)
    return false;
  vec_push(code, op);
  *depth = da > db + 1 ? da : db + 1;
  return true;
}

/* "n = 4096, m = 8": the bounds of the scalars a program follows, or
 * their initial values. */
static const char *bounds_text(Sema *s, const int64_t *code, size_t lo, size_t hi, bool initial) {
  CharVec text = {0};
  bool *seen = xrealloc(NULL, s->g->res.n + 1);
  memset(seen, 0, s->g->res.n + 1);
  for (size_t i = lo; i < hi; i++) {
    if (code[i] != CGRT_GRID_CONST && code[i] != CGRT_GRID_SCALAR)
      continue;
    if (code[i++] == CGRT_GRID_CONST || seen[code[i]])
      continue;
    seen[code[i]] = true;
    const Resource *r = &s->g->res.v[code[i]];
    char buf[320];
    int len = snprintf(buf, sizeof buf, "%s%s = %lld", text.n ? ", " : "", r->name->name,
                       (long long)(initial ? r->init_i : r->bound));
    for (int k = 0; k < len && k < (int)sizeof buf - 1; k++)
      vec_push(&text, buf[k]);
  }
  vec_push(&text, '\0');
  const char *out = arena_strdup(s->c->arena, text.v);
  vec_free(&text);
  free(seen);
  return out;
}

/* grid(...): constant extents into cfg->grid, or, when an extent follows
 * bounded scalars, every extent's program into cfg->grid_code and the grid
 * at the bounds into cfg->grid, checked there against CUDA's limits. */
static bool grid_extents(Sema *s, Launch *cfg, LaunchItem *l) {
  bool dynamic = false;
  for (int i = 0; i < l->nargs; i++)
    dynamic |= names_scalar(s, launch_arg(l, i));
  if (!dynamic || l->nargs < 1 || l->nargs > 3)
    return launch_extents(s, l, cfg->grid);
  GridCode code = {0};
  size_t start[4] = {0};
  bool ok = true;
  for (int i = 0; i < 3; i++) {
    start[i] = code.n;
    int depth = 1;
    if (i >= l->nargs) {
      vec_push(&code, CGRT_GRID_CONST);
      vec_push(&code, 1);
    } else if (!grid_program(s, launch_arg(l, i), &code, &depth)) {
      ok = false;
    } else if (depth > CGRT_GRID_STACK) {
      error_span(s->d, expr_span(launch_arg(l, i)),
                 "grid extent %c holds %d values at once; the runtime evaluates at most %d", "xyz"[i],
                 depth, CGRT_GRID_STACK);
      ok = false;
    }
    vec_push(&code, CGRT_GRID_END);
  }
  start[3] = code.n;
  if (ok) {
    /* The grid at the bounds, by the runtime's own evaluator. */
    size_t nres = s->g->res.n;
    cgrt_scalar_desc *descs = xrealloc(NULL, (nres + 1) * sizeof *descs);
    uint64_t *values = xrealloc(NULL, (nres + 1) * sizeof *values);
    for (size_t r = 0; r < nres; r++) {
      const Resource *res = &s->g->res.v[r];
      descs[r] = (cgrt_scalar_desc){.type = (uint8_t)(res->type == TY_NONE ? CGRT_I64 : abi_type(res->type))};
      values[r] = (uint64_t)res->bound;
    }
    static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
    uint32_t at = 0;
    for (int i = 0; i < 3 && ok; i++) {
      int64_t v = 0;
      int err = cgrt_grid_eval(code.v, (uint32_t)code.n, &at, descs, (uint32_t)nres, values, &v);
      Span sp = i < l->nargs ? expr_span(launch_arg(l, i)) : span_at(l->pos);
      const char *when = bounds_text(s, code.v, start[i], start[i + 1], false);
      if (err == CGRT_GRID_DIVZERO)
        error_span(s->d, sp, "grid extent %c divides by zero when %s", "xyz"[i], when);
      else if (err != CGRT_GRID_OK)
        error_span(s->d, sp, "grid extent %c overflows 64 bits when %s", "xyz"[i], when);
      else if (v < 1)
        error_span(s->d, sp, "grid extent %c is %lld when %s; at the bounds it must be at least 1",
                   "xyz"[i], (long long)v, when);
      else if (v > limit[i])
        error_span(s->d, sp, "grid extent %c is %lld when %s; CUDA allows at most %lld", "xyz"[i],
                   (long long)v, when, (long long)limit[i]);
      else
        cfg->grid[i] = v;
      ok = err == CGRT_GRID_OK && v >= 1 && v <= limit[i];
    }
    /* And at the scalars' initial values, which create sets the grid to:
     * there an extent may be 0 (the node is off until a set), no less. */
    for (size_t r = 0; r < nres; r++)
      values[r] = s->g->res.v[r].init_bits;
    at = 0;
    for (int i = 0; i < 3 && ok; i++) {
      int64_t v = 0;
      int err = cgrt_grid_eval(code.v, (uint32_t)code.n, &at, descs, (uint32_t)nres, values, &v);
      if (err == CGRT_GRID_OK && v >= 0 && v <= limit[i])
        continue;
      Span sp = i < l->nargs ? expr_span(launch_arg(l, i)) : span_at(l->pos);
      const char *when = bounds_text(s, code.v, start[i], start[i + 1], true);
      if (err == CGRT_GRID_DIVZERO)
        error_span(s->d, sp,
                   "grid extent %c divides by zero when %s, the initial values, which create "
                   "sets it with",
                   "xyz"[i], when);
      else if (err != CGRT_GRID_OK)
        error_span(s->d, sp,
                   "grid extent %c overflows 64 bits when %s, the initial values, which create "
                   "sets it with",
                   "xyz"[i], when);
      else
        error_span(s->d, sp,
                   "grid extent %c is %lld when %s, the initial values, which create sets it "
                   "with; there it must be 0 (the node is off) to %lld",
                   "xyz"[i], (long long)v, when, (long long)limit[i]);
      ok = false;
    }
    free(descs);
    free(values);
  }
  if (ok) {
    int64_t *kept = arena_alloc(s->c->arena, code.n * sizeof *code.v);
    memcpy(kept, code.v, code.n * sizeof *code.v);
    cfg->grid_code = kept;
    cfg->ngrid_code = (int)code.n;
  }
  vec_free(&code);
  return ok;
}

/* Launches alike are one Launch, found by content in s->launches (open
 * addressing): the many kernel nodes of a large graph share a few. */
static void hash_word(uint64_t *h, int64_t w) { *h = (*h ^ (uint64_t)w) * 0x100000001b3u; }

static uint64_t launch_hash(const Launch *cfg) {
  uint64_t h = 0xcbf29ce484222325u;
  for (int i = 0; i < 3; i++) {
    hash_word(&h, cfg->grid[i]);
    hash_word(&h, cfg->block[i]);
    hash_word(&h, cfg->cluster[i]);
  }
  hash_word(&h, cfg->smem);
  hash_word(&h, cfg->priority);
  hash_word(&h, cfg->has_cluster * 2 + cfg->has_priority);
  for (int i = 0; i < cfg->ngrid_code; i++)
    hash_word(&h, cfg->grid_code[i]);
  return h;
}

static bool launch_same(const Launch *a, const Launch *b) {
  for (int i = 0; i < 3; i++)
    if (a->grid[i] != b->grid[i] || a->block[i] != b->block[i] || a->cluster[i] != b->cluster[i])
      return false;
  return a->smem == b->smem && a->priority == b->priority && a->has_cluster == b->has_cluster &&
         a->has_priority == b->has_priority && a->ngrid_code == b->ngrid_code &&
         (!a->ngrid_code ||
          !memcmp(a->grid_code, b->grid_code, (size_t)a->ngrid_code * sizeof *a->grid_code));
}

static void launches_grow(LaunchSet *set) {
  size_t cap = set->cap ? set->cap * 2 : 64;
  const Launch **slots = xrealloc(NULL, cap * sizeof *slots);
  memset(slots, 0, cap * sizeof *slots);
  for (size_t i = 0; i < set->cap; i++)
    if (set->slots[i]) {
      size_t j = launch_hash(set->slots[i]) & (cap - 1);
      while (slots[j])
        j = (j + 1) & (cap - 1);
      slots[j] = set->slots[i];
    }
  free(set->slots);
  set->slots = slots;
  set->cap = cap;
}

/* The Launch the same as cfg: one made before, or a copy of cfg. */
static const Launch *intern_launch(Sema *s, const Launch *cfg) {
  LaunchSet *set = &s->launches;
  if (2 * (set->n + 1) > set->cap)
    launches_grow(set);
  size_t j = launch_hash(cfg) & (set->cap - 1);
  for (; set->slots[j]; j = (j + 1) & (set->cap - 1))
    if (launch_same(set->slots[j], cfg))
      return set->slots[j];
  Launch *kept = arena_alloc(s->c->arena, sizeof *kept);
  *kept = *cfg;
  set->slots[j] = kept;
  set->n++;
  return kept;
}

/* The launch items seen, checked, into cfg. */
static void check_launch_items(Sema *s, Node *n, Launch *cfg, LaunchItem *seen[LK_COUNT],
                               const Stmt *st) {
  LaunchItem *grid = seen[LK_GRID], *block = seen[LK_BLOCK];
  if (!grid || !block) {
    error_at(s->d, st->callee_pos, "kernel node '%s' needs %s", n->name,
             !grid && !block ? "grid(...) and block(...)" : !grid ? "grid(...)" : "block(...)");
  }
  bool grid_ok = grid && grid_extents(s, cfg, grid);
  if (grid_ok && !cfg->grid_code) {
    static const int64_t limit[3] = {INT32_MAX, 65535, 65535};
    for (int i = 0; i < 3; i++)
      if (cfg->grid[i] > limit[i]) {
        error_span(s->d, expr_span(launch_arg(grid, i)),
                   "grid extent %c is %lld; CUDA allows at most %lld", "xyz"[i],
                   (long long)cfg -> grid[i], (long long)limit[i]);
        grid_ok = false;
      }
  }
  if (block && launch_extents(s, block, cfg->block)) {
    static const int64_t limit[3] = {1024, 1024, 64};
    bool ok = true;
    for (int i = 0; i < 3; i++)
      if (cfg->block[i] > limit[i]) {
        error_span(s->d, expr_span(launch_arg(block, i)),
                   "block extent %c is %lld; CUDA allows at most %lld", "xyz"[i],
                   (long long)cfg -> block[i], (long long)limit[i]);
        ok = false;
      }
    int64_t threads = ok ? cfg->block[0] * cfg->block[1] * cfg->block[2] : 0;
    if (threads > 1024)
      error_at(s->d, block->pos, "a block of %lld threads is more than the 1024 CUDA allows",
               (long long)threads);
  }
  if (seen[LK_SMEM]) {
    LaunchItem *l = seen[LK_SMEM];
    if (l->nargs != 1)
      error_at(s->d, l->pos, "smem takes 1 value (bytes), %d given", l->nargs);
    else if (eval_int(s, launch_arg(l, 0), &cfg->smem) && (cfg->smem < 0 || cfg->smem > 227 * 1024))
      error_span(s->d, expr_span(launch_arg(l, 0)),
                 "smem(%lld) is out of range: a block can have 0 to 227K (232448) bytes",
                 (long long)cfg->smem);
  }
  if (seen[LK_CLUSTER]) {
    LaunchItem *l = seen[LK_CLUSTER];
    if (launch_extents(s, l, cfg->cluster)) {
      cfg->has_cluster = true;
      int64_t blocks;
      if (__builtin_mul_overflow(cfg->cluster[0], cfg->cluster[1], &blocks) ||
          __builtin_mul_overflow(blocks, cfg->cluster[2], &blocks))
        error_at(s->d, l->pos,
                 "a cluster of %lld x %lld x %lld blocks is more than 16, the most a GPU allows "
                 "(more than 8 is not portable)",
                 (long long)cfg->cluster[0], (long long)cfg->cluster[1],
                 (long long)cfg->cluster[2]);
      else if (blocks > 16) /* 9 to 16: non-portable, which the runtime opts the kernel in to */
        error_at(s->d, l->pos,
                 "a cluster of %lld blocks is more than 16, the most a GPU allows (more than 8 is "
                 "not portable)",
                 (long long)blocks);
      else if (grid_ok)
        for (int i = 0; i < 3; i++)
          if (cfg->grid[i] % cfg->cluster[i]) {
            error_span(s->d, expr_span(launch_arg(l, i < l->nargs ? i : 0)),
                       "grid extent %c (%lld) is not a multiple of the cluster's (%lld)", "xyz"[i],
                       (long long)cfg -> grid[i], (long long)cfg -> cluster[i]);
            break;
          }
    }
  }
  if (seen[LK_PRIORITY]) {
    LaunchItem *l = seen[LK_PRIORITY];
    if (l->nargs != 1)
      error_at(s->d, l->pos, "priority takes 1 value, %d given", l->nargs);
    else if (eval_int(s, launch_arg(l, 0), &cfg->priority)) {
      if (cfg->priority < INT32_MIN || cfg->priority > INT32_MAX)
        error_span(s->d, expr_span(launch_arg(l, 0)), "priority %lld does not fit an int",
                   (long long)cfg->priority);
      else
        cfg->has_priority = true;
    }
  }
}

/* A node's launch items: each given once, and only to a kernel node, whose
 * configuration they make (n->launch). */
static void check_launch(Sema *s, Node *n, Stmt *st) {
  LaunchItem *seen[LK_COUNT] = {0};
  for (int i = 0; i < st->nlaunch; i++) {
    LaunchItem *l = &st->launch[i];
    if (!node_kinds[n->kind].launch) {
      error_at(s->d, l->pos,
               "%s nodes take no %s(...); only kernel nodes have a launch configuration",
               node_kinds[n->kind].name, launch_names[l->key]);
      return;
    }
    if (seen[l->key]) {
      error_at(s->d, l->pos, "%s is given twice", launch_names[l->key]);
      note_at(s->d, seen[l->key]->pos, "first given here");
      continue;
    }
    seen[l->key] = l;
  }
  if (!node_kinds[n->kind].launch)
    return;
  Launch cfg = {0};
  check_launch_items(s, n, &cfg, seen, st);
  n->launch = intern_launch(s, &cfg);
}

/* A node's name is never clipped: one longer than MAX_NODE_NAME is an
 * error at `p`, and NULL. */
const char *checked_name(Sema *s, Pos p, const char *buf, int len, const char *has) {
  if (len <= MAX_NODE_NAME)
    return arena_strdup(s->c->arena, buf);
  error_at(s->d, p, "node '%.40s...' %s a name of %d bytes; a node's name with its indices has at "
           "most %d", buf, has, len, MAX_NODE_NAME);
  return NULL;
}

/* "norm[0][1]": the node of base name `base` in this iteration. */
const char *node_name(Sema *s, Pos p, Sym *base, int depth) {
  if (depth == 0)
    return base->name;
  char buf[NAME_BUF];
  int n = snprintf(buf, sizeof buf, "%s", base->name);
  for (int i = 0; i < depth; i++)
    n += snprintf(buf + n, sizeof buf - (size_t)n, "[%lld]", (long long)s->index[i]);
  assert(n < (int)sizeof buf);
  return checked_name(s, p, buf, n, "has");
}

/* An unnamed copy, fill, while, if or switch is named after its keyword,
 * which an edge cannot spell; its later namesakes (copy_2) it can. */
bool keyword_named(const Stmt *st) { return !st->name && !strchr(st->base->name, '_'); }

/* Room for the accesses a kernel node's arguments can make: one for each
 * pointer parameter and each value written as a name or a view (which may
 * name a scalar); a literal or an arithmetic expression makes none. */
static int access_room(const Item *k, const Stmt *st) {
  int room = 0;
  for (int i = 0; i < k->nparams; i++) {
    ExprKind e = (ExprKind)st->args[i]->kind;
    room += k->params[i].pointer || e == EX_NAME || e == EX_INDEX || e == EX_SLICE;
  }
  return room;
}

/* A kernel node's kernel and arguments; false after an error. */
static bool check_kernel_node(Sema *s, Node *n, Stmt *st) {
  Global *gl = map_get(&s->globals, st->kernel);
  if (gl)
    note_item(s, &st->callee_pos, st->callee_pos, gl->item);
  /* A collective's name is the collective unless a kernel or capture
   * function has it: a constant or graph of the name does not hide it. */
  int which = gl && gl->item->kind == IT_KERNEL ? -1 : collective_index(st->kernel);
  if (which >= 0) {
    int errors = diag_errors(s->d);
    check_collective(s, n, st, which);
    return diag_errors(s->d) == errors;
  }
  if (!gl || gl->item->kind != IT_KERNEL) {
    if (gl) {
      error_at(s->d, st->callee_pos, "'%s' is not a kernel", st->kernel->name);
    } else if (!s->c->include_failed && !undefined_reported(s, st->callee_pos)) {
      /* (with an include that failed, it may be the missing file's) */
      Suggest sg;
      suggest_init(&sg, st->kernel->name);
      for (size_t i = 0; i < s->globals.cap; i++) {
        const Global *k = s->globals.slots[i].value;
        if (s->globals.slots[i].key && k->item->kind == IT_KERNEL)
          suggest_try(&sg, k->item->name->name);
      }
      report_undefined(s, st->callee_pos, UNDEFINED_KERNEL, st->kernel, suggest_best(&sg));
    }
    return false;
  }
  Item *k = gl->item;
  n->kernel = k;
  if (k->capture)
    n->kind = NK_CAPTURE;
  if (st->nargs != k->nparams) {
    error_at(s->d, st->callee_pos, "%s '%s' takes %d argument%s, %d given",
             k->capture ? "capture function" : "kernel", k->name->name, k->nparams,
             plural(k->nparams), st->nargs);
    note_at(s->d, k->name_pos, "'%s' is declared here", k->name->name);
    return false;
  }
  n->nargs = k->nparams;
  n->args = arena_alloc(s->c->arena, (size_t)n->nargs * sizeof *n->args);
  n->acc = arena_alloc(s->c->arena, (size_t)access_room(k, st) * sizeof *n->acc);
  bool ok = true;
  for (int i = 0; i < n->nargs; i++)
    ok &= check_kernel_arg(s, n, &k->params[i], st->args[i], &n->args[i]);
  check_launch(s, n, st);
  return ok;
}

/* A copy's or fill's launch clauses (refused), with room for its two accesses. */
static void check_memory_node(Sema *s, Node *n, Stmt *st) {
  n->acc = arena_alloc(s->c->arena, 2 * sizeof *n->acc);
  check_launch(s, n, st);
}

void add_node(Sema *s, Stmt *st) {
  if (!st->base)
    return; /* a duplicate name, reported */
  if (!node_budget(s, st->pos, node_kinds[st->node_kind].called ? st->nargs : 2))
    return;
  Node n = {.name = node_name(s, st->pos, st->base, st->loop_depth),
            .stmt = st,
            .kind = st->node_kind,
            .scope = s->scope,
            .branch = s->branch,
            .keyword_name = !node_kinds[st->node_kind].called && keyword_named(st)};
  if (!n.name)
    return;
  switch (n.kind) {
  case NK_KERNEL:
  case NK_CAPTURE: /* which of the two, the declaration says */
  case NK_COLLECTIVE: /* or a collective's name, when no kernel has it */
    if (!check_kernel_node(s, &n, st))
      return;
    break;
  case NK_COPY:
    check_memory_node(s, &n, st);
    check_copy(s, &n, st);
    break;
  case NK_FILL:
    check_memory_node(s, &n, st);
    check_fill(s, &n, st);
    break;
  case NK_WHILE:
  case NK_IF:
  case NK_SWITCH: return; /* control statements make their nodes in walk_control */
  }
  vec_push(&s->g->nodes, n);
  vec_push(&s->subtree_end, 0);
}

/* A scalar a kernel writes cannot also be a by-value argument. */
void check_scalar_values(Sema *s) {
  Graph *g = s->g;
  for (size_t i = 0; i < g->nodes.n; i++) {
    Node *n = &g->nodes.v[i];
    for (int j = 0; j < n->nargs; j++) {
      Arg *a = &n->args[j];
      if (a->kind != ARG_SCALAR_VALUE)
        continue;
      Resource *r = &g->res.v[a->res];
      if (!pos_set(r->written_at))
        continue;
      error_at(s->d, a->pos,
               "scalar '%s' is written on the device, so it cannot be passed by value; "
               "pass it to a pointer parameter",
               r->name->name);
      note_at(s->d, r->written_at, "'%s' is written here", r->name->name);
    }
  }
  for (size_t r = 0; r < g->res.n; r++) {
    Resource *res = &g->res.v[r];
    if (res->kind != RES_SCALAR || !pos_set(res->grid_at) || !pos_set(res->written_at))
      continue;
    error_at(s->d, res->grid_at,
             "scalar '%s' is written on the device, so a grid cannot follow it: the host sets a "
             "grid before the launch",
             res->name->name);
    note_at(s->d, res->written_at, "'%s' is written here", res->name->name);
  }
}
