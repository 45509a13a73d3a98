/* sema_uses.c: what each name in the text stands for, as sema resolves
 * it (Program.uses, kept when Compiler.keep_uses asks: cgc lsp reads it
 * for hover and definition).
 *
 * The checks record each name they resolve, through lookup_use, note_stmt
 * and note_item, at the place the name is; every declaration's own name is
 * recorded before unrolling.  A place is recorded once, however often
 * unrolling checks it: the first record stands.  After each statement of a
 * graph, note_names records the names the checks left unresolved (an
 * error stopped them first, or the walk never ran the body), in the walk's
 * scopes. */
#include "sema_internal.h"

/* ---- records ---- */

/* Records that the name at `at` stands for u's declaration; `site`, the
 * AST record (or field) that holds the name, keeps one record a place. */
static void note_use(Sema *s, const void *site, Pos at, Use u) {
  if (!s->c->keep_uses || map_get(&s->use_sites, site))
    return;
  map_put(&s->use_sites, site, (void *)1);
  u.at = at;
  vec_push(&((Program *)s->c->program)->uses, u);
}

void note_stmt(Sema *s, const void *site, Pos at, Stmt *decl) {
  note_use(s, site, at, (Use){.kind = DECL_STMT, .item = s->item, .stmt = decl});
}

void note_item(Sema *s, const void *site, Pos at, Item *it) {
  note_use(s, site, at, (Use){.kind = DECL_ITEM, .item = it});
}

/* A name no binding has: the global of that name, else what an error
 * says it is (undefined): a top-level constant or a graph's declaration
 * further on, or a node. */
static void note_unbound(Sema *s, Expr *e) {
  Global *gl = map_get(&s->globals, e->name);
  Item *top = map_get(&s->consts, e->name);
  Stmt *later = map_get(&s->later, e->name);
  Stmt *node = map_get(&s->node_decls, e->name);
  if (gl || top)
    note_item(s, e, e->pos, gl ? gl->item : top);
  else if (later || node)
    note_stmt(s, e, e->pos, later ? later : node);
}

/* lookup of the name e, recording what it stands for: the binding's
 * declaration, else note_unbound's. */
Binding *lookup_use(Sema *s, Expr *e) {
  Binding *b = lookup(s, e->name);
  if (b && b->stmt)
    note_stmt(s, e, e->pos, b->stmt);
  else if (b)
    note_use(s, e, e->pos, (Use){.kind = DECL_VARIANT, .item = s->item});
  else if (s->c->keep_uses)
    note_unbound(s, e);
  return b;
}

/* Each declaration's name stands for it: a graph's, before unrolling, so
 * that a loop's body run no time has them too. */
void note_decl(Sema *s, Stmt *st) {
  if (st->name && st->kind != ST_EDGE)
    note_stmt(s, &st->name_pos, st->name_pos, st);
}

/* A top-level item's name, its kernel's parameters and its variable. */
void note_item_decls(Sema *s, Item *it) {
  if (it->kind == IT_INCLUDE || !it->name)
    return;
  note_item(s, &it->name_pos, it->name_pos, it);
  for (int i = 0; i < it->nparams; i++)
    note_use(s, &it->params[i], it->params[i].pos,
             (Use){.kind = DECL_PARAM, .item = it, .param = &it->params[i]});
  if (it->variant_var)
    note_use(s, &it->variant_pos, it->variant_pos, (Use){.kind = DECL_VARIANT, .item = it});
}

/* ---- names the checks left unresolved ---- */

/* What each name in e stands for, recorded without checking e. */
static void note_expr(Sema *s, Expr *e) {
  if (!e)
    return;
  switch (e->kind) {
  case EX_NAME: lookup_use(s, e); break;
  case EX_INDEX:
  case EX_SLICE:
  case EX_NEG:
  case EX_BIN: /* only its kind's operands are allocated */
    note_expr(s, e->a);
    if (e->kind != EX_NEG)
      note_expr(s, e->b);
    if (e->kind == EX_SLICE)
      note_expr(s, e->c);
    break;
  case EX_CALL:
    for (int i = 0; i < e->nargs; i++)
      note_expr(s, e->args[i]);
    break;
  case EX_INT:
  case EX_FLOAT: break;
  }
}

static void note_cond(Sema *s, Cond *c) {
  if (!c)
    return;
  note_expr(s, c->lhs);
  note_expr(s, c->rhs);
  note_cond(s, c->a);
  note_cond(s, c->b);
}

/* An edge's indices; its nodes are edge_ref's to resolve. */
static void note_edge(Sema *s, Stmt *st) {
  for (int g = 0; g < st->ngroups; g++)
    for (int r = 0; r < st->groups[g].nrefs; r++)
      for (Expr *e = st->groups[g].refs[r]; e && e->kind == EX_INDEX; e = e->a)
        note_expr(s, e->b);
}

/* A call's kernel (or the global of its name), as check_kernel_node finds it. */
static void note_callee(Sema *s, Stmt *st) {
  Global *gl = node_kinds[st->node_kind].called ? map_get(&s->globals, st->kernel) : NULL;
  if (gl)
    note_item(s, &st->callee_pos, st->callee_pos, gl->item);
}

/* The names in statement st's own expressions (not its bodies'). */
static void note_own(Sema *s, Stmt *st) {
  switch (st->kind) {
  case ST_CONST:
  case ST_SCALAR:
  case ST_BUFFER:
    note_expr(s, st->value);
    note_expr(s, st->bound);
    for (int i = 0; i < st->ndims; i++)
      note_expr(s, st->dims[i]);
    break;
  case ST_NODE:
    note_callee(s, st);
    for (int i = 0; i < st->nargs; i++)
      note_expr(s, st->args[i]);
    for (int i = 0; i < st->nlaunch; i++)
      for (int j = 0; j < st->launch[i].nargs; j++)
        note_expr(s, launch_arg(&st->launch[i], j));
    break;
  case ST_EDGE: note_edge(s, st); break;
  case ST_FOR:
    note_expr(s, st->lo);
    note_expr(s, st->hi);
    break;
  case ST_WHILE:
  case ST_IF:
  case ST_SWITCH:
    note_cond(s, st->cond);
    note_expr(s, st->max_iter);
    if (st->kind == ST_SWITCH) { /* its selector and cases share the if's else */
      note_expr(s, st->selector);
      for (int i = 0; i < st->ncases; i++)
        note_expr(s, st->cases[i].value);
    }
    break;
  }
}

/* A body's names, in a scope of its own. */
static void note_body(Sema *s, Stmt **body, int n) {
  size_t mark = s->locals.n;
  for (int i = 0; i < n; i++)
    note_names(s, body[i]);
  pop_locals(s, mark);
}

/* Whether declaring `name` here would hide nothing (check_new_name, silent). */
static bool name_free(Sema *s, Sym *name) {
  Global *gl = map_get(&s->globals, name);
  return !lookup(s, name) && !(gl && gl->item->kind == IT_CONST);
}

/* What each name in statement st and its bodies stands for, where the
 * check left it unresolved: an error stopped it first (an undefined
 * kernel leaves its arguments unchecked, a loop's range that has no value
 * its body), or the walk never ran it (a loop run no time).  It follows
 * the walk's scopes without its checks; a name the check resolved keeps
 * that record. */
void note_names(Sema *s, Stmt *st) {
  note_own(s, st);
  /* A graph's own constant the walk declared already: name_free is false. */
  if (st->kind == ST_CONST && name_free(s, st->name))
    push_local(s, (Binding){.kind = B_CONST, .name = st->name, .pos = st->name_pos, .stmt = st});
  if (st->kind == ST_FOR) {
    size_t mark = s->locals.n;
    if (name_free(s, st->name))
      push_local(s, (Binding){.kind = B_LOOP, .name = st->name, .pos = st->name_pos, .stmt = st});
    note_body(s, st->body, st->nbody);
    pop_locals(s, mark);
  }
  if (st->kind == ST_WHILE || st->kind == ST_IF || st->kind == ST_SWITCH) {
    note_body(s, st->body, st->nbody);
    if (st->kind == ST_IF)
      note_body(s, st->else_body, st->nelse);
    if (st->kind == ST_SWITCH)
      for (int k = 0; k < st->ncases; k++)
        note_body(s, st->cases[k].body, st->cases[k].nbody);
  }
}
