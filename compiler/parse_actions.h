/* parse_actions.h: what the grammar's actions call (parse.c), one call an
 * action, so the logic lives in C that can be read and tested. */
#ifndef PARSE_ACTIONS_H
#define PARSE_ACTIONS_H

#include "cgc.h"

/* A list the parser grows, its elements on the heap (ParseState.lists
 * holds every list, and parse_source frees their elements).  Once they are
 * copied out (list_array) it is kept in ParseState.spare_lists for the next
 * list, which grows in the room it has. */
typedef struct List {
  void **v;
  int n, cap;
} List;

List *list_push(ParseState *ps, List *l, void *x); /* l may be NULL */

void add_item(ParseState *ps, Item *it);
Item *item_include(ParseState *ps, Pos p, const char *path);
Item *item_const(ParseState *ps, Pos p, Sym *name, Pos np, Expr *value);
/* `from "PATH"` or `symbol "NAME"` after a kernel's parameters. */
typedef struct Clause {
  bool symbol;      /* symbol, else from */
  Pos pos;          /* of the keyword */
  const char *text; /* NULL: the string was malformed (reported) */
  Pos text_pos;
} Clause;

Clause *clause_new(ParseState *ps, Pos p, bool symbol, const char *text, Pos tp);
Item *item_kernel(ParseState *ps, Pos p, bool pdl, bool capture, Sym *name, Pos np, List *params,
                  List *clauses);
/* kernel NAME = TEMPLATE<ARGS>(params) from "HEADER"; args NULL when they
 * were malformed (reported). */
Item *item_template(ParseState *ps, Pos p, bool pdl, Sym *name, Pos np, Sym *tmpl, Pos tp,
                    const char *args, List *params, List *clauses);
Param *param_new(ParseState *ps, Pos p, Mode mode, Sym *name, Type type, bool pointer);
/* A name where a type goes: reported, with the type meant (float: f32) in
 * *type; false when no type is close. */
bool type_meant(ParseState *ps, Pos p, Sym *name, Type *type);
/* A scalar's or buffer's type (`what`): `handle` is refused, a kernel
 * parameter's type only (u64, its bits, stands in after the error). */
Type data_type(ParseState *ps, Pos p, Type type, const char *what);
/* Whether the syntax error just recovered from was a ';' missing at the end
 * of a line (then the parser goes on as if it were there); clears it. */
bool semicolon_inserted(ParseState *ps);
/* Parsing resumes after a syntax error (at its ';' or '}'). */
void recovered(ParseState *ps);
/* Token t's name, if it is an identifier, is lost to a syntax error: it
 * is not reported undefined (Compiler.lost). */
void lose_name(ParseState *ps, const struct ScannedToken *t);
Item *item_graph(ParseState *ps, Pos p, bool is_explicit, Sym *name, Pos np, List *body);
void item_variants(ParseState *ps, Item *graph, Sym *var, Pos vp, List *values);

Stmt *stmt_const(ParseState *ps, Pos p, Sym *name, Pos np, Expr *value);
Stmt *stmt_scalar(ParseState *ps, Pos p, Sym *name, Pos np, Type type, Pos tp, Expr *bound,
                  Expr *init);
Stmt *stmt_buffer(ParseState *ps, Pos p, BufferKind kind, Sym *name, Pos np,
                  Type type, List *dims, Expr *init);
Stmt *stmt_call(ParseState *ps, Pos p, NodeKind node_kind, Sym *kernel, List *args);
Stmt *stmt_node(ParseState *ps, Pos p, Sym *name, Pos np, Stmt *call, List *launch);
LaunchItem *launch_new(ParseState *ps, Pos p, LaunchKey key, List *args);
EdgeGroup *edge_group(ParseState *ps, List *refs);
List *edge_link(ParseState *ps, List *chain, EdgeGroup *from, Pos arrow,
                bool programmatic, EdgeGroup *to);
Stmt *stmt_edge(ParseState *ps, List *chain);
Stmt *stmt_for(ParseState *ps, Pos p, Sym *var, Pos vp, Expr *lo, Expr *hi, List *body);
/* Slips answered with the fix: `for l in range(N)` (taken as 0 .. N, or
 * 0 .. EXPR, after the error) and `norm = rmsnorm(...)` without `node`. */
Stmt *stmt_for_without_range(ParseState *ps, Pos p, Sym *var, Pos vp, Expr *e, List *body);
void node_keyword_missing(ParseState *ps, Pos p, Sym *name);
Stmt *stmt_named(Stmt *control, Sym *name, Pos np);
Stmt *stmt_while(ParseState *ps, Pos p, Cond *cond, Expr *max_iter, List *body);
Stmt *stmt_if(ParseState *ps, Pos p, Cond *cond, List *then_body, List *else_body);
/* `else if COND { ... }`, one link of a chain; else_if_chain nests the
 * links, each in the else of the one before, and gives the first if's
 * else (else_list where there is no link). */
Stmt *else_if(ParseState *ps, Pos p, Cond *cond, List *then_body);
List *else_if_chain(ParseState *ps, List *chain, List *else_list);
/* An else that no if takes (after the last one, or after a statement that
 * is no if): reported, its body dropped and the names it declares lost. */
void stray_else(ParseState *ps, Pos p, List *body);
Stmt *stmt_switch(ParseState *ps, Pos p, Expr *selector, List *cases);
CaseItem *case_new(ParseState *ps, Pos p, Expr *value, List *body);
/* An else, or an empty one: never NULL. */
List *else_body(ParseState *ps, List *body);
Cond *cond_cmp(ParseState *ps, Pos p, int cmp, Expr *lhs, Expr *rhs);
Cond *cond_join(ParseState *ps, Pos p, CondKind kind, Cond *a, Cond *b);

Expr *expr_int(ParseState *ps, Pos p, int64_t v);
Expr *expr_float(ParseState *ps, Pos p, double v);
Expr *expr_name(ParseState *ps, Pos p, Sym *name);
Expr *expr_index(ParseState *ps, Pos p, Expr *base, Expr *index);
Expr *expr_slice(ParseState *ps, Pos p, Expr *base, Expr *lo, Expr *hi);
Expr *expr_call(ParseState *ps, Pos p, Sym *fn, List *args);
Expr *expr_neg(ParseState *ps, Pos p, Expr *a);
Expr *expr_bin(ParseState *ps, Pos p, char op, Expr *a, Expr *b);

void parse_source(Compiler *c, int file, ItemVec *items);

#endif
