/* sema_internal.h: what the files of sema share, private to them.
 *
 * sema.c         names, the top level, declarations, limits, edges, the walk
 * sema_eval.c    constant expressions, types and values
 * sema_node.c    a node statement's checks: arguments, views, copies, fills,
 *                collectives, launch configurations and grids
 * sema_control.c control flow: conditions, switch cases, control nodes
 * sema_uses.c    what each name stands for (Program.uses, for cgc lsp)
 * sema_warn.c    warnings, a phase of its own after ordering */
#ifndef CGC_SEMA_INTERNAL_H
#define CGC_SEMA_INTERNAL_H

#include "cgc.h"

typedef struct Value {
  bool is_float;
  int64_t i;
  double f;
} Value;

typedef struct Global {
  Item *item;
  int64_t value; /* IT_CONST */
  bool valid;    /* its value could be computed */
  bool defining; /* its initialiser is being evaluated */
} Global;

typedef enum BindKind { B_CONST, B_LOOP, B_RES } BindKind;

typedef struct Binding {
  BindKind kind;
  Sym *name;
  Pos pos;
  int64_t value; /* B_CONST, B_LOOP */
  bool valid;
  int res;       /* B_RES */
  Stmt *stmt;    /* its declaration; NULL: the graph's variant variable */
  uintptr_t shadowed; /* locals: index + 1 of the binding it hides, or 0 */
} Binding;

typedef struct PendingEdge {
  const char *from, *to;
  Pos from_pos, to_pos, arrow;
  bool programmatic; /* written with '=>' */
} PendingEdge;

/* The launch configurations made so far, each once (intern_launch). */
typedef struct LaunchSet {
  const Launch **slots; /* open addressing, cap a power of two */
  size_t n, cap;
} LaunchSet;

typedef struct Sema {
  Compiler *c;
  Diag *d;
  Map globals; /* Sym -> Global */
  Map consts;  /* Sym -> Item, every top-level const, defined or not yet */
  Sym *defining; /* the graph's or loop's constant being evaluated */
  Map use_sites; /* where a use is recorded (Program.uses): its AST record */
  Map undefined_at; /* "file:line:col" of each undefined name reported */
  /* The graph being checked: */
  Graph *g;
  Item *item;        /* its item as written (a variant's too) */
  Map names;         /* Sym -> Binding, graph level */
  Map later;         /* Sym -> Stmt, every graph-level declaration */
  Map node_decls;    /* Sym (base name) -> Stmt */
  Map decided;       /* Stmt -> Stmt: a node's, the if of constants around it; such an if, itself */
  size_t node_stmts; /* statements that make a node, outside every for */
  Map node_index;    /* node name -> index + 1, made for written edges only */
  VEC(Binding) locals; /* loop variables and loop-body constants */
  Map local_index;     /* Sym -> index + 1 of its innermost local */
  VEC(uint32_t) subtree_end; /* per node: a control node's end of its bodies' nodes */
  Stmt *loops[MAX_NESTING];
  int64_t index[MAX_NESTING];
  int depth;
  VEC(PendingEdge) pending;
  /* The whole program's budgets (cgc.h): */
  int64_t expanded;     /* statements run by unrolling */
  int64_t nodes_before; /* nodes of the graphs already checked */
  int64_t accesses;     /* node arguments, and accesses copied into control nodes */
  bool too_big;         /* a limit was reported: checking stops */
  int64_t owned_bytes;
  int32_t scope, branch; /* the body nodes go into: a control node, or -1 */
  int blocks;            /* control-flow bodies open */
  bool at_bound;         /* a buffer's size: a bounded scalar is its bound */
  Stmt *cur_stmt;        /* the node statement being checked */
  LaunchSet launches;    /* the whole program's */
} Sema;

static inline const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

/* Room for any name: a base and an index per loop, "[-9223372036854775808]"
 * at most, so that distinct nodes never share a clipped name. */
enum { NAME_BUF = MAX_IDENT_LEN + MAX_NESTING * 22 + 1 };

typedef enum Undefined { UNDEFINED_NAME, UNDEFINED_KERNEL, UNDEFINED_NODE } Undefined;

/* sema.c */
void pop_locals(Sema *s, size_t mark);
void push_local(Sema *s, Binding b);
Binding *lookup(Sema *s, Sym *name);
void report_undefined(Sema *s, Pos p, Undefined what, const Sym *name, const char *meant);
bool undefined_reported(Sema *s, Pos p);
void undefined(Sema *s, Pos p, Sym *name);
bool dropped(Sema *s, Pos p);
const char *describe_res(Sema *s, int res);
bool access_budget(Sema *s, Pos p, int64_t accesses);
bool node_budget(Sema *s, Pos p, int64_t accesses);
void walk(Sema *s, Stmt **body, int n);

/* sema_eval.c */
void no_bound(Sema *s, Expr *e, const Resource *r, const char *what);
bool eval_int(Sema *s, Expr *e, int64_t *out);
bool eval(Sema *s, Expr *e, Value *out);
bool check_fits(Sema *s, Span p, Value v, Type t, const char *what);
/* Whether check_fits would take the value without a word (nothing reported). */
bool value_fits(Value v, Type t);
const char *shape_text(Sema *s, Type t, const int64_t *dims, int ndims);

/* sema_node.c */
bool resolve_view(Sema *s, Expr *e, Arg *arg, bool *is_ref);
Span arg_span(const Expr *e, Pos at);
void report_control_in_handle_body(Sema *s, const Node *w, Pos at, NodeKind kind);
const char *checked_name(Sema *s, Pos p, const char *buf, int len, const char *has);
const char *node_name(Sema *s, Pos p, Sym *base, int depth);
bool keyword_named(const Stmt *st);
void add_node(Sema *s, Stmt *st);
void check_scalar_values(Sema *s);

/* sema_control.c */
void walk_control(Sema *s, Stmt *st);

/* sema_uses.c: each records what a name stands for, when keep_uses asks */
Binding *lookup_use(Sema *s, Expr *e); /* lookup of name e, recorded */
void note_stmt(Sema *s, const void *site, Pos at, Stmt *decl);
void note_item(Sema *s, const void *site, Pos at, Item *it);
void note_decl(Sema *s, Stmt *st);        /* a graph's declaration's name */
void note_item_decls(Sema *s, Item *it);  /* an item's name, parameters, variable */
void note_names(Sema *s, Stmt *st);       /* st's names the checks left unresolved */

#endif
