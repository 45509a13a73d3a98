/* cgc.h: the one header of the cgc compiler library.
 *
 * Data flows one way: text (source.c) -> tokens and AST (grammar/, parse.c)
 * -> checked graphs with accesses (sema.c) -> edges (order.c) -> output
 * (dot.c).  Each section below names the file that implements it. */
#ifndef CGC_H
#define CGC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The layout of the tables the generated C holds, shared with the runtime. */
#include "cgrt_abi.h"

#include "cgc_version.h" /* CGC_VERSION, from CMake's project VERSION */

/* Limits that turn hostile input into a diagnostic instead of a crash. */
enum {
  MAX_IDENT_LEN = 255,             /* bytes in an identifier */
  MAX_NESTING = 256,               /* open ( [ { at once */
  MAX_EXPR_DEPTH = 1000,           /* depth of one expression tree */
  MAX_INCLUDE_DEPTH = 32,          /* files open at once through include */
  MAX_ERRORS = 20,                 /* errors reported before cgc stops */
  /* The whole program's, all graphs together, after unrolling: */
  MAX_NODES = 2 * 1024 * 1024,     /* nodes */
  MAX_EXPANSION = 8 * 1024 * 1024, /* statements run, each loop iteration one */
  MAX_ACCESSES = 16 * 1024 * 1024, /* node arguments, and the accesses a control
                                      node repeats from its bodies */
  MAX_EDGES = 16 * 1024 * 1024,    /* edges: written, and inferred from data flow */
  MAX_NODE_NAME = 512,             /* bytes in a node's name with its indices */
  /* Reachability search steps (edges looked at) in the whole program, this
   * many for each node and edge ordered plus SEARCH_STEPS_BASE; order.c says
   * what happens beyond. */
  SEARCH_STEPS_PER_ITEM = 64,
  SEARCH_STEPS_BASE = 1 << 28,
  MAX_COND_CMP = CGRT_COND_MAX_CMP, /* comparisons in one condition */
  MAX_PARAM_BYTES = 32764,         /* a kernel's parameters, laid out as in C:
                                      CUDA's limit since 12.1 (4096 before) */
  MAX_TEMPLATE_ARGS = 4096         /* bytes of one template's arguments, normalised */
};
#define MAX_FILE_SIZE ((int64_t)256 << 20) /* bytes in one source file */
/* Bytes of every module the program embeds, together (the whole
 * program's): each byte is about five of C. */
#define MAX_MODULE_BYTES ((int64_t)64 << 20)

/* ---- arena.c: all memory of one compilation, freed at once ---- */

typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
/* Zeroed, 8-byte aligned; never NULL, for 0 bytes too; aborts on OOM. */
void *arena_alloc(Arena *a, size_t size);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void *xrealloc(void *p, size_t size); /* heap, aborts on OOM */
/* Zeroed heap memory, aborts on OOM: fresh pages from the system are not
 * cleared again, so a large table costs only the pages it touches. */
void *xcalloc(size_t n, size_t size);

/* A growable array of pointers or plain values, on the heap. */
#define VEC(T)                                                                 \
  struct {                                                                     \
    T *v;                                                                      \
    size_t n, cap;                                                             \
  }
#define vec_push(vec, x)                                                       \
  do {                                                                         \
    if ((vec)->n == (vec)->cap) {                                              \
      (vec)->cap = (vec)->cap ? (vec)->cap * 2 : 8;                            \
      (vec)->v = xrealloc((vec)->v, (vec)->cap * sizeof *(vec)->v);            \
    }                                                                          \
    (vec)->v[(vec)->n++] = (x);                                                \
  } while (0)
#define vec_free(vec) (free((vec)->v), (vec)->v = NULL, (vec)->n = (vec)->cap = 0)
/* Gives back the room a vector has beyond its elements, once it is complete. */
#define vec_fit(vec)                                                                               \
  ((vec)->v = xrealloc((vec)->v, ((vec)->n ? (vec)->n : 1) * sizeof *(vec)->v),                    \
   (vec)->cap = (vec)->n ? (vec)->n : 1)
typedef VEC(char) CharVec;

/* ---- source.c: files in memory, positions, diagnostics ---- */

/* A place in the sources: one number a byte.  Each source added takes
 * the next stretch of one 32-bit space, its bytes and the end past them,
 * so that a position is 4 bytes (a node's tree holds a dozen); 0 is no
 * place.  Its file, line and column are worked out only when asked
 * (pos_loc), from the source's line starts. */
typedef struct Pos {
  uint32_t off;
} Pos;
#define NO_POS ((Pos){0})
static inline bool pos_set(Pos p) { return p.off != 0; }
/* The place n bytes after p, in p's source. */
static inline Pos pos_plus(Pos p, int64_t n) { return (Pos){p.off + (uint32_t)n}; }

/* A place as a person counts it. */
typedef struct Loc {
  int32_t file; /* index into the source table; -1: no place */
  int32_t line; /* 1-based */
  int32_t col;  /* 1-based, in bytes */
} Loc;

typedef struct Source {
  const char *path; /* as the user or the include statement named it */
  const char *text;
  size_t len;
  char *realpath; /* for include identity */
  uint32_t base;  /* the position of its first byte */
  uint32_t nlines;
  const uint32_t *line_starts; /* each line's offset, made when a position in it is first asked */
} Source;

typedef struct Diag Diag;

/* The file, line and column of p; file -1 for no place. */
Loc pos_loc(Diag *d, Pos p);
/* The source index of p, or -1 for no place. */
int pos_file(Diag *d, Pos p);
static inline int pos_line(Diag *d, Pos p) { return pos_loc(d, p).line; }
static inline int pos_col(Diag *d, Pos p) { return pos_loc(d, p).col; }
/* p's byte offset in its source (p must be a place). */
size_t pos_offset(Diag *d, Pos p);
/* The position of byte `off` of source `file` (off <= its length). */
Pos source_pos(Diag *d, int file, size_t off);

Diag *diag_new(void);
void diag_free(Diag *d);
void diag_set_color(Diag *d, bool on);
/* One JSON object a line on stderr instead of text (--diagnostics-format=json). */
void diag_set_json(Diag *d, bool on);
/* Writes out a diagnostic still being collected (JSON keeps its notes). */
void diag_flush(Diag *d);
/* Where diagnostics go (stderr unless told). */
void diag_set_output(Diag *d, FILE *out);
/* Prints nothing: the records below are the diagnostics (cgc lsp). */
void diag_set_quiet(Diag *d, bool on);
/* Adds text already in memory to the source table, as source_load does a
 * file; -1 after an error when it would take the sources past the
 * positions there are (the first source, of MAX_FILE_SIZE bytes at most,
 * always fits). */
int source_add(Diag *d, const char *path, const char *text, size_t len);
/* The most bytes the sources may take together, each one more than its
 * length (its end has a position): the positions there are, unless a
 * test makes it smaller. */
void diag_set_max_source_bytes(Diag *d, int64_t n);
/* Gives a source added from memory the real path of the file it stands
 * for (copied), so that includes know it as that file. */
void source_set_realpath(Diag *d, int file, const char *realpath);
/* Reads a file into the table; returns its index, or -1 after reporting an
 * error at `at` (or without position when at is NO_POS). */
int source_load(Diag *d, const char *path, Pos at);
struct stat;
/* From now on source_load refuses what is not a regular file (cgc lsp,
 * which must not block on a FIFO or a device that a document names). */
void source_set_regular_only(Diag *d, bool on);
/* Opens `path` to read (O_NONBLOCK with `nonblock`, so that opening a FIFO
 * or a device cannot block) and fills *st from what it opened; NULL with
 * errno set when either fails. */
FILE *open_read(const char *path, bool nonblock, struct stat *st);
const Source *source_get(Diag *d, int file);

/* A stretch of source text: the caret at `at`, underlined (^~~~) from
 * lo to hi, hi exclusive, as far as it lies on the caret's line.  A Pos
 * alone (hi NO_POS) underlines the token that starts there. */
typedef struct Span {
  Pos at, lo, hi;
} Span;
/* The token at p, as a Span. */
Span span_at(Pos p);

void error_at(Diag *d, Pos p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void error_span(Diag *d, Span s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void verror_at(Diag *d, Span s, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
void note_at(Diag *d, Pos p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The warnings, each silenced by -Wno-NAME and made an error by -Werror:
 * one row each in warnings.def (name, code, help). */
typedef enum Warning {
#define WARNING(e, name, code, help) W_##e,
#include "warnings.def"
  W_COUNT
} Warning;
/* The help text of a warning (warnings.def). */
const char *warning_help(Warning w);
/* DIAG_NAME: the message format of each row of diagnostics.def (made by
 * the build), for error_at(d, p, DIAG_NAME, ...). */
#include "diag_msgs.h"
/* The stable code of an error, by its message's format ("E0012"), or of a
 * warning ("W0001"): diagnostics.def and warnings.def hold them. */
const char *error_code(const char *fmt);
const char *warning_code(Warning w);
/* The i-th message format of error code `code` (from 0), or NULL. */
const char *error_format(const char *code, int i);
/* cgc --explain CODE (explain.c): the code's message, what it means and
 * an example, on `out`; false for a code no diagnostic has. */
bool explain_code(const char *code, FILE *out);
/* "uninitialized" for W_UNINITIALIZED; warning_named finds a name's
 * warning: false when there is none. */
const char *warning_name(Warning w);
bool warning_named(const char *name, Warning *w);
void diag_enable_warning(Diag *d, Warning w, bool on);
void diag_set_werror(Diag *d, bool on);
void warn_at(Diag *d, Warning w, Pos p, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void warn_span(Diag *d, Warning w, Span s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A fix-it for the diagnostic just reported: `text` in place of the span
 * (inserted where lo and hi meet).  Text shows it under the caret line;
 * JSON gives it as data.  diag_fix_edge says which edge a hazard needs,
 * and where its statement can go (at NO_POS: nowhere in particular). */
void diag_fix(Diag *d, Span s, const char *text);
void diag_fix_edge(Diag *d, const char *from, const char *to, Span at, const char *text);
int diag_errors(const Diag *d);

/* Every diagnostic reported is kept as a record, which the text and JSON
 * printers print and the language server reads: its severity, code,
 * option (-Wname), message and span, and its notes and fix-its (parts,
 * in the order they came).  A span's at NO_POS: no place. */
typedef enum DiagSeverity { DIAG_ERROR, DIAG_WARNING } DiagSeverity;
typedef struct DiagPart {
  bool fix;         /* a fix-it; else a note */
  Span span;        /* the note's place; what the fix replaces */
  const char *text; /* the note's message; the fix's text (NULL: an edge with no place) */
  const char *edge_from, *edge_to; /* diag_fix_edge's edge, else NULL */
} DiagPart;
typedef struct DiagRecord {
  DiagSeverity severity;
  const char *code;   /* "E0004", "W0001" */
  const char *option; /* "-Wname" or "-Werror=name" for a warning's, else NULL */
  const char *message;
  Span span;
  VEC(DiagPart) parts;
} DiagRecord;
size_t diag_count(const Diag *d);
const DiagRecord *diag_record(const Diag *d, size_t i);
/* The columns a span underlines on its caret's line, [*lo, *hi), as the
 * printers show it. */
void diag_span_columns(Diag *d, Span s, int *lo, int *hi);
/* Where a fix's range ends (it starts at lo). */
Pos diag_fix_end(Diag *d, Span s);
/* The length of the UTF-8 character that s starts, or 0 when its bytes are
 * not valid UTF-8 (a NUL is a character of length 1). */
int utf8_len(const char *s);
/* Writes s with its control characters escaped (\n, \t, \r, \xNN), so that
 * a file name cannot split a line of text or act on a terminal. */
void fput_escaped(FILE *f, const char *s);
/* True once MAX_ERRORS errors were reported: every stage stops then. */
bool diag_stopped(const Diag *d);

/* The outputs of one run, written together or not at all.  Each is
 * written to a temporary file beside its target (through symlinks) and
 * renamed into place only when every one is complete; a device, FIFO or
 * /dev/stdout is written in place, from memory, at commit.  New files get
 * 0666 less the umask, replaced files keep their mode.  Errors are
 * reported to diag as "cannot write 'PATH': REASON". */
typedef struct Output Output;
typedef struct Outputs {
  Diag *diag;
  VEC(Output *) v;
} Outputs;
/* A stream for the output at path, or NULL after reporting why not. */
FILE *output_add(Outputs *os, const char *path);
/* Puts every output in place, the first added last (a C file after the
 * header it includes); false after reporting. */
bool outputs_commit(Outputs *os);
/* Removes every temporary and writes nothing. */
void outputs_abort(Outputs *os);
/* Whether writing a and b would reach one file: the same existing file,
 * or the same new name in the same directory, through symlinks.  A device
 * or FIFO, written in place, is no file of its own here. */
bool same_file(const char *a, const char *b);
/* Flushes standard output: 0, or the errno of a write that failed. */
int flush_stdout(void);

/* ---- suggest.c: "did you mean" ---- */

/* The candidate closest to a misspelt name, if one is close enough:
 * suggest_init, suggest_try for each candidate, suggest_best (NULL when
 * none is). */
typedef struct Suggest {
  const char *name;
  size_t len;
  const char *best;
  int dist, limit;
} Suggest;
void suggest_init(Suggest *sg, const char *name);
void suggest_try(Suggest *sg, const char *candidate);
const char *suggest_best(const Suggest *sg);
/* The element type meant by a C or CUDA name (float: f32) or a misspelt
 * one (f23: f32), or NULL. */
const char *suggest_type(const char *name);

/* ---- fmt.c: cgc fmt ---- */

int cgc_fmt(int argc, char **argv);
/* The formatted text of a source that scans and holds no NUL byte (heap;
 * the caller frees it). */
char *fmt_text(const char *src, size_t n);
/* The formatted text of source `file` of c (heap), or NULL after reporting
 * why it cannot be formatted to c->diag: it does not scan and parse, or it
 * holds a NUL byte.  cgc fmt and cgc lsp share it. */
struct Compiler;
char *fmt_source(struct Compiler *c, int file);

/* ---- lsp.c: cgc lsp, the language server ---- */

int cgc_lsp(int argc, char **argv);

/* ---- symbol.c: interned identifiers and pointer-keyed maps ---- */

typedef struct Sym {
  const char *name;
  uint32_t len;
  uint32_t hash;
} Sym;

typedef struct SymTab SymTab;
SymTab *symtab_new(Arena *a);
void symtab_free(SymTab *t);
Sym *intern(SymTab *t, const char *s, size_t len);

/* An open-addressing map from a key (a Sym pointer or a string) to a value. */
typedef struct MapEntry {
  const void *key;
  void *value;
} MapEntry;
typedef struct Map {
  MapEntry *slots;
  size_t n, cap;
  bool by_string; /* keys are NUL-terminated strings, compared by content */
} Map;
void *map_get(const Map *m, const void *key);
void map_put(Map *m, const void *key, void *value); /* replaces */
void map_free(Map *m);

/* ---- types ---- */

typedef enum Type {
  TY_NONE,
  TY_I8, TY_I16, TY_I32, TY_I64,
  TY_U8, TY_U16, TY_U32, TY_U64,
  TY_F16, TY_BF16, TY_F32, TY_F64,
  TY_HANDLE, /* a kernel parameter's only: a while's conditional handle */
} Type;

const char *type_name(Type t);
int type_size(Type t);
bool type_is_float(Type t);
bool type_is_signed(Type t);
/* The runtime's number for a type (CGRT_I8 ...); -1 for TY_NONE. */
int abi_type(Type t);

/* ---- ast.c: the syntax tree the parser builds ---- */

typedef enum ExprKind {
  EX_INT,   /* ival */
  EX_FLOAT, /* fval */
  EX_NAME,  /* name */
  EX_INDEX, /* a[b] */
  EX_SLICE, /* a[b:c] */
  EX_CALL,  /* name(args): cdiv, min, max */
  EX_NEG,   /* -a */
  EX_BIN,   /* a op b, op one of + - * / % */
} ExprKind;

typedef struct Expr Expr;
typedef VEC(Expr *) ExprVec;

/* An expression.  Only its kind's part of the union is allocated
 * (new_expr): a literal or a name takes 16 bytes, a view, a negation, a
 * binary operation or a call 32, a slice 40; code reads the union only as
 * its kind says.  Its text starts where its leftmost operand's does (a
 * view's base, a binary operation's left side) or else at pos, and ends at
 * hi, exclusive (expr_span); a literal's or a name's, one token, ends len
 * bytes after pos, or, where len is 0, at end. */
struct Expr {
  uint8_t kind; /* ExprKind */
  char op;      /* EX_BIN: the operator; EX_INT: EXPR_REPLACED, EXPR_MIN_MAGNITUDE
                   (2^63 right after a unary minus, which takes it), or 0 */
  union {
    int16_t depth; /* height of this tree, bounded by MAX_EXPR_DEPTH (a
                      literal's or a name's is 1) */
    uint16_t len;  /* EX_INT, EX_FLOAT, EX_NAME: its token's bytes, or 0 */
  };
  Pos pos;
  union {
    struct { /* EX_INT, EX_FLOAT, EX_NAME */
      union {
        int64_t ival;
        double fval;
        Sym *name;
      };
      /* Allocated only where len is 0: a token too long for len, or the
       * zero (EX_INT, EXPR_REPLACED) that stands for an expression nested
       * too deep, and where that one's text starts (lo) and ends. */
      Pos lo, end;
    };
    struct { /* the others */
      Pos hi;
      int nargs; /* EX_CALL */
      union {
        struct {
          Expr *a, *b, *c; /* NEG: a; INDEX, BIN: a, b; SLICE: all three */
        };
        struct {
          Sym *fn;
          Expr **args;
        };
      };
    };
  };
};
enum { EXPR_REPLACED = 'r', EXPR_MIN_MAGNITUDE = 'm' };

typedef enum Mode { MODE_NONE = 0, MODE_IN = 1, MODE_OUT = 2, MODE_INOUT = 3 } Mode;

typedef struct Param {
  Sym *name;
  Pos pos;
  Mode mode; /* MODE_NONE only on value parameters */
  Type type;
  bool pointer;
} Param;

typedef enum BufferKind {
  BUF_DEVICE,      /* buffer: owned device memory */
  BUF_EXTERN,      /* extern buffer: caller's device memory */
  BUF_HOST,        /* host buffer: owned pinned host memory */
  BUF_EXTERN_HOST, /* extern host buffer: caller's host memory */
} BufferKind;

typedef enum LaunchKey { LK_GRID, LK_BLOCK, LK_SMEM, LK_CLUSTER, LK_PRIORITY, LK_COUNT } LaunchKey;

/* grid(...), block(...), smem(...), cluster(...) or priority(...) of a
 * node statement.  An item of one argument, the usual, holds it without
 * an array (launch_arg reads either). */
typedef struct LaunchItem {
  Pos pos;
  uint32_t key : 3;    /* LaunchKey */
  uint32_t nargs : 29; /* a file of MAX_FILE_SIZE bytes holds fewer */
  union {
    Expr *arg;    /* nargs 1 */
    Expr **args;  /* otherwise */
  };
} LaunchItem;
static inline Expr *launch_arg(const LaunchItem *l, int i) {
  return l->nargs == 1 ? l->arg : l->args[i];
}

typedef enum StmtKind {
  ST_CONST,  /* const name = value; */
  ST_SCALAR, /* scalar name: type [= value]; */
  ST_BUFFER, /* [extern] [host] buffer name: type[dims] [= value]; */
  ST_NODE,   /* [node name =] callee(args) launch...; */
  ST_EDGE,   /* a -> b -> {c, d}; */
  ST_FOR,    /* for var in lo .. hi { body } */
  ST_WHILE,  /* while cond [max n] { body } */
  ST_IF,     /* if cond { body } [else { else_body }]; else if: else { if ... } */
  ST_SWITCH, /* switch scalar { case v { ... } default { ... } } */
} StmtKind;

/* What a node does.  Each kind's facts are a row of node_kinds (kinds.c);
 * code that treats kinds differently switches over them with no default,
 * so that -Wswitch names every place a new kind must be handled. */
typedef enum NodeKind {
  NK_KERNEL,  /* a kernel launch */
  NK_COPY,    /* copy(dst, src) */
  NK_FILL,    /* fill(dst, value) */
  NK_WHILE,   /* control nodes: hold bodies of nodes */
  NK_IF,
  NK_SWITCH,
  NK_CAPTURE, /* a capture function's stream work, as a child graph */
  NK_COLLECTIVE, /* all_reduce, all_gather, reduce_scatter, broadcast: NCCL's
                    work, captured into a child graph */
} NodeKind;
enum { NK_COUNT = NK_COLLECTIVE + 1 }; /* keep it one past the last kind */

typedef struct NodeKindInfo {
  const char *name;    /* in messages, DOT and the names of unnamed nodes */
  const char *abi;     /* its constant in the generated tables */
  bool launch;         /* launches a kernel: takes grid, block, smem, cluster
                          and priority */
  bool bodies;         /* holds bodies of nodes: a control node */
  bool programmatic;   /* can be an end of a programmatic edge ('=>') */
  bool called;         /* written as a call, CALLEE(args), and an unnamed one
                          named after its callee (else after its keyword) */
  bool memory;         /* copies or sets memory: as many bytes as its first
                          argument's view */
  bool loop;           /* repeats its body while its condition holds; a
                          kernel of its body may set that through its handle */
  bool cases;          /* chooses its body by its case values (the cases table) */
  bool captured;       /* its stream work is captured once, at create, into a
                          child graph */
  bool collective;     /* NCCL's work over the communicator: collectives run
                          in one order on every rank */
  bool an;             /* its name takes "an" in messages ("an if node") */
  const char *dot;     /* its DOT attributes */
} NodeKindInfo;

extern const NodeKindInfo node_kinds[NK_COUNT];

/* A collective (CGRT_ALL_REDUCE ...) or a reduction (CGRT_SUM ...): its
 * name in the language and DOT, and its constant in the generated tables. */
typedef struct NamedConstant {
  const char *name, *abi;
} NamedConstant;
enum { NCOLLECTIVES = CGRT_BROADCAST + 1, NREDUCTIONS = CGRT_AVG + 1 };
extern const NamedConstant collective_kinds[NCOLLECTIVES];
extern const NamedConstant reductions[NREDUCTIONS];

enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, NCOMPARISONS };
/* A comparison (CMP_*, the runtime's CGRT_CMP_* in order): its operator in
 * the language and its constant in the generated tables. */
extern const NamedConstant comparisons[NCOMPARISONS];
typedef enum CondKind { COND_CMP, COND_AND, COND_OR, COND_NOT } CondKind;

/* A condition of `while` or `if`, as written. */
typedef struct Cond {
  CondKind kind;
  Pos pos;
  int cmp;            /* COND_CMP: CMP_* */
  struct Expr *lhs, *rhs;
  struct Cond *a, *b; /* COND_AND, COND_OR: both; COND_NOT: a */
  int depth;
} Cond;

typedef struct CaseItem {
  struct Expr *value; /* NULL: default */
  Pos pos;
  struct Stmt **body;
  int nbody;
} CaseItem;

typedef struct Stmt Stmt;
typedef VEC(Stmt *) StmtVec;

/* One side of an edge: a list of node references (one unless braced). */
typedef struct EdgeGroup {
  Expr **refs; /* EX_NAME or EX_INDEX chains */
  int nrefs;
  Pos arrow; /* position of the '->' that follows this group */
  bool programmatic; /* that arrow is '=>' */
} EdgeGroup;

/* A statement.  Its fields are ordered so that none is padded, its kinds
 * packed in one word, and only its kind's part of the union is allocated
 * (new_stmt): a node statement, the most common by far, takes 72 bytes. */
struct Stmt {
  StmtKind kind : 8;
  NodeKind node_kind : 8; /* node, while, if, switch: the kind of node it makes */
  int16_t loop_depth;     /* sema: enclosing for loops (fewer than MAX_NESTING) */
  Pos pos;
  Pos name_pos;
  Pos callee_pos;          /* node */
  Sym *name;               /* const, scalar, buffer, node (NULL: anonymous), for var */
  Sym *base;               /* sema: a node's name or the anonymous name given it */
  struct Stmt *parent_for; /* sema: innermost enclosing for, or NULL */
  union {
    struct { /* ST_CONST, ST_SCALAR, ST_BUFFER */
      Expr *value; /* const value; scalar and buffer initialiser */
      Expr **dims;
      Expr *bound; /* scalar: NULL unless `max` */
      Type type;
      BufferKind buffer_kind;
      int ndims;
      Pos type_pos; /* scalar: its type */
    };
    struct { /* ST_NODE */
      int nargs;
      int nlaunch;
      Sym *kernel; /* NK_KERNEL */
      Expr **args;
      LaunchItem *launch;
    };
    struct { /* ST_EDGE */
      EdgeGroup *groups;
      int ngroups;
    };
    struct { /* ST_FOR, ST_WHILE, ST_IF, ST_SWITCH */
      Stmt **body; /* for, while, if (its then-body); a switch's is empty */
      int nbody;
      int depth; /* parse: compound statements nested, itself one (at most MAX_NESTING) */
      union {
        struct { /* ST_FOR */
          Expr *lo, *hi;
        };
        struct { /* ST_WHILE, ST_IF, ST_SWITCH */
          Cond *cond;       /* while, if */
          Expr *max_iter;   /* while: NULL unless `max` */
          union {
            struct { /* if */
              Stmt **else_body;
              int nelse;
              bool has_else;
            };
            struct { /* switch */
              Expr *selector;
              CaseItem *cases;
              int ncases;
            };
          };
        };
      };
    };
  };
};

typedef enum ItemKind { IT_INCLUDE, IT_CONST, IT_KERNEL, IT_GRAPH } ItemKind;

/* Where a kernel comes from: linked in (its definition is the user's),
 * a module file, or a C++ template's instantiation (module.c). */
typedef enum KernelSource { KS_LINKED, KS_MODULE, KS_TEMPLATE } KernelSource;

struct Module;

typedef struct Item {
  ItemKind kind;
  Pos pos;
  Sym *name;
  Pos name_pos;
  const char *path; /* include */
  Expr *value;      /* const */
  Param *params;    /* kernel */
  int nparams;
  bool pdl;         /* pdl kernel: calls cudaGridDependencySynchronize() first */
  bool capture;     /* capture: a host function whose stream work is captured */
  bool is_explicit; /* graph */
  Stmt **body;      /* graph */
  int nbody;
  Sym *variant_var; /* graph NAME for VAR in [VALUES]: a graph NAME_value per value */
  Pos variant_pos;
  Expr **variants;
  int nvariants;
  /* kernel: `from "PATH"`, `symbol "NAME"`, `= TEMPLATE<ARGS>` */
  KernelSource source;
  const char *from;     /* the module's or header's path as written */
  Pos from_pos;         /* of the string */
  const char *header;   /* sema: the template header found, as the companion
                           includes it: from the main file's directory */
  const char *symbol;   /* the name in the module, or NULL: the kernel's */
  Pos symbol_pos;
  Sym *template_name;   /* the C++ template */
  Pos template_pos;
  const char *template_args; /* between < and >, normalised */
  struct Module *module;     /* sema: the module it comes from */
} Item;

typedef VEC(Item *) ItemVec;

Expr *new_expr(Arena *a, ExprKind kind, Pos pos);
/* An expression's whole text, the caret at its position (an operator's,
 * a call's name, a view's bracket). */
Span expr_span(const Expr *e);

/* ---- parse.c: files to items, following includes ---- */

typedef struct Define {
  const char *name;
  int64_t value;
  bool used;
} Define;

typedef struct Compiler {
  Arena *arena;
  Diag *diag;
  SymTab *syms;
  const char **include_dirs;
  int ninclude_dirs;
  Define *defines;
  int ndefines;
  ItemVec items;  /* every top-level item of every file, includes spliced in */
  VEC(int) files; /* source indices of every file read, main file first */
  struct Program *program; /* sema.c's result */
  int64_t max_nodes;       /* 0: MAX_NODES */
  int64_t max_statements;  /* 0: MAX_EXPANSION */
  int64_t max_accesses;    /* 0: MAX_ACCESSES */
  int64_t max_edges;       /* 0: MAX_EDGES */
  int64_t max_search_steps; /* 0: SEARCH_STEPS_PER_ITEM a node and edge
                               ordered, plus SEARCH_STEPS_BASE */
  const char *prefix;      /* --prefix: before every generated name of a graph */
  int64_t search_steps;    /* order.c: reachability steps spent */
  int64_t search_items;    /* order.c: nodes and edges searched */
  int64_t nedges;          /* edges made so far (sema.c, order.c) */
  int64_t max_module_bytes; /* 0: MAX_MODULE_BYTES */
  int64_t module_bytes;    /* module.c: bytes of the modules read so far */
  VEC(struct Module *) modules; /* module.c: each module file once, in order read */
  VEC(const char *) deps;  /* module.c: modules and template headers read (real paths) */
  bool include_failed;     /* an include could not be read: the names it
                              would declare are not reported undefined */
  VEC(Pos) included_at;    /* parallel to files: the include that read each
                              (NO_POS for the main file) */
  Map lost;                /* Sym -> Sym: names in text that a syntax error's
                              recovery discarded (`kernal k(...);`), which
                              may have declared them: not reported undefined */
  /* The text to read in place of the file at `realpath` (an editor's
   * unsaved buffer, `cgc lsp`), or NULL to read the file; NULL: files only. */
  const char *(*overlay)(void *ctx, const char *realpath, size_t *len);
  void *overlay_ctx;
  bool keep_uses; /* sema records Program.uses (cgc lsp) */
} Compiler;

/* The message of the edge limit, reported where it is reached. */
#define EDGE_LIMIT_TEXT                                                        \
  "edges, all graphs together (written ones once its loops are unrolled, and those inferred " \
  "from data flow)"

/* A compiler's arena, diagnostics and symbols; compiler_free releases them. */
void compiler_init(Compiler *c);
void compiler_free(Compiler *c);

/* Parses `path` and every file it includes into c->items.  Returns false
 * when the main file could not be read (an I/O error, exit status 2). */
bool parse_program(Compiler *c, const char *path);
/* The same for a program already in memory, named `name` in diagnostics. */
void parse_program_text(Compiler *c, const char *name, const char *text, size_t len);
/* The same for a source already in the table (source_add, source_load). */
void parse_program_source(Compiler *c, int file);

/* Finds a file that `include` or `from` names: beside the file `from`
 * (a path), then in each -I directory; NULL when there is none. */
char *find_file(Compiler *c, const char *from, const char *name);
/* Where find_file found nothing: whether a directory of that name stands
 * where it looked, so that the error can say so. */
bool found_directory(Compiler *c, const char *from, const char *name);

struct List;

/* The scanner and parser (grammar/) talk to parse.c through this. */
typedef struct ParseState {
  Compiler *c;
  const char *input; /* the file's text, which the scanner reads a buffer at a time */
  size_t input_len, input_at;
  ItemVec *items;
  Pos pos;            /* where the scanner is */
  int nesting;        /* open brackets, bounded by MAX_NESTING */
  bool stop;          /* input too deep to go on: no more syntax errors */
  bool depth_error;   /* an expression too deep was reported */
  bool nesting_error; /* statements nested too deep were reported */
  char last[48];      /* the text of the last token, clipped, for messages */
  /* The reserved words by their first byte: those that start with byte b
   * are word_order[word_start[b] .. word_start[b + 1]) (words_index). */
  uint8_t word_start[257];
  uint8_t word_order[64];
  int lex_error_line; /* the line of the last error the scanner reported */
  bool lone_cr;       /* a lone CR was reported */
  int kernel_words;   /* `kernel NAME = TEMPLATE` read so far: 4 when a '<'
                         opens template arguments */
  Pos targs_pos;      /* where the template arguments being scanned start */
  int targs_angle, targs_paren; /* their brackets open */
  bool targs_space;   /* white space seen since the last character kept */
  bool targs_bad;     /* an error was reported in them */
  CharVec targs;      /* their text so far, normalised */
  bool semicolon_inserted; /* the error being recovered from is a missing ';' */
  bool recovering;         /* from a syntax error, up to the ';' or '}' where
                              parsing resumes: the names scanned are lost */
  /* The last tokens scanned, newest at (ntokens - 1) % 4: an LR(1) parser
   * reduces a rule at most one token after its last, so a rule's tokens
   * and the lookahead are here. */
  struct ScannedToken {
    Pos at, end;               /* end: just past it */
    int kind;                  /* the parser's token number */
    char text[48];             /* clipped */
    Sym *sym;                  /* an identifier's */
  } tokens[4];
  unsigned ntokens;
  /* Every list made, whose elements grow on the heap until parse_source
   * frees them; those whose contents were copied out, and launch items,
   * kept to be used again (parse.c): a node statement makes four lists and
   * its launch items, which would otherwise stay in the arena unused. */
  VEC(struct List *) lists;
  VEC(struct List *) spare_lists;
  VEC(LaunchItem *) spare_launches;
} ParseState;

/* ---- module.c: kernels from modules and templates ---- */

typedef enum ModuleFormat { MOD_PTX, MOD_CUBIN, MOD_FATBIN } ModuleFormat;

typedef struct Module {
  const char *path;      /* as the first `from` that names it writes it */
  char *realpath;        /* its identity: a file is embedded once */
  const unsigned char *bytes;
  size_t len;
  ModuleFormat format;
  int index;             /* in c->modules */
  bool scanned;          /* its kernels are listed (PTX, cubin) */
  bool broken;           /* a malformed cubin, reported */
  Map kernels;           /* their names (strings) */
  VEC(const char *) names; /* the same, in the order of the module */
} Module;

/* The module kernel k comes from, read (once) and checked; false after an
 * error at k's `from` or its symbol. */
bool module_kernel(Compiler *c, Item *k);
/* The header a template kernel comes from: found and readable; false
 * after an error at its `from`. */
bool template_header(Compiler *c, Item *k);
/* What a module's bytes are: its format, or -1 with why not in *why. */
int module_format(const unsigned char *b, size_t n, const char **why);
/* The kernels a PTX or cubin module defines, into m->kernels and
 * m->names (strings in a); false with why not in *why (a malformed
 * cubin). */
bool module_scan(Module *m, Arena *a, const char **why);
/* The normalised text of template arguments: white space runs become one
 * space where two words or two operator characters meet, none elsewhere,
 * and one space follows each comma. */
void template_text_put(CharVec *out, bool *space, char ch);
/* The name of a module format in messages and C: "PTX", "cubin", "fatbin". */
const char *module_format_name(ModuleFormat f);
/* The symbol a module kernel has in its module. */
const char *module_symbol(const Item *k);

/* ---- sema.c: checked graphs ---- */

typedef enum ResKind { RES_BUFFER, RES_SCALAR } ResKind;

/* A buffer or a launch scalar: the things accesses are made to. */
typedef struct Resource {
  ResKind kind;
  Sym *name;
  Pos pos;
  Type type;
  BufferKind buffer_kind;  /* buffers */
  int64_t dims[8];
  int ndims;
  int64_t count;           /* elements */
  int64_t bytes;
  bool zero;               /* buffer = 0 */
  bool has_init;           /* scalar = value */
  bool init_is_float;
  int64_t init_i;
  double init_f;
  uint64_t init_bits;      /* scalars: the initial value as the type's bits */
  bool memory;             /* scalars: has a device slot (a pointer argument,
                              a copy or a fill reaches it) */
  Pos written_at;          /* scalars: first out/inout use, NO_POS if none */
  int from_comm;           /* scalars: 0, or = rank (CGRT_RANK) or = ranks (CGRT_RANKS) */
  bool bounded;            /* scalars: declared with a valid `max` */
  bool bound_written;      /* scalars: `max` written, valid or refused there */
  int64_t bound;           /* scalars: the bound */
  Pos grid_at;             /* scalars: first grid(...) that follows it, NO_POS if none */
  Pos bound_at;            /* scalars: just past the type, where `max` goes */
} Resource;

typedef enum ArgKind {
  ARG_VIEW,         /* a buffer or view, by pointer */
  ARG_SCALAR_PTR,   /* a scalar's device slot */
  ARG_SCALAR_VALUE, /* a scalar's value, updated by set */
  ARG_INT,
  ARG_FLOAT,
  ARG_HANDLE,       /* a while's handle: res is the while's index in Graph.nodes */
} ArgKind;

/* A node's argument: 24 bytes, its kind packed beside its resource (a
 * program runs at most MAX_EXPANSION statements, so it has fewer resources,
 * and MAX_NODES nodes, than 29 bits count); the bytes it covers follow from
 * its count and type (arg_bytes). */
typedef struct Arg {
  Pos pos;
  int32_t res : 29; /* ARG_VIEW, ARG_SCALAR_*: index into Graph.res */
  ArgKind kind : 3;
  union {
    int64_t offset; /* ARG_VIEW: bytes from the buffer's start */
    int64_t ival;   /* ARG_INT */
    double fval;    /* ARG_FLOAT */
  };
  union {
    int64_t count; /* ARG_VIEW, ARG_SCALAR_*: elements */
    uint64_t bits; /* ARG_INT, ARG_FLOAT: the value as the parameter's or the
                      filled element's bits */
  };
} Arg;

typedef enum AccessMode { ACC_READ = 1, ACC_WRITE = 2, ACC_RW = 3 } AccessMode;

typedef struct Access {
  int64_t lo, hi; /* byte range [lo, hi) */
  int32_t res;
  AccessMode mode;
} Access;

/* A checked condition: operands are scalars, single buffer elements
 * (ARG_VIEW of one element) or constants (ARG_INT, ARG_FLOAT). */
typedef struct CheckedCond {
  CondKind kind;
  int cmp;
  Type type;          /* COND_CMP: what is compared */
  Arg lhs, rhs;
  struct CheckedCond *a, *b;
} CheckedCond;

/* One instruction of a condition as the runtime evaluates it (postfix, see
 * CGRT_COND_* in cgrt_abi.h): CGRT_COND_AND or CGRT_COND_OR over the two
 * results before it, or CGRT_COND_CMP: lhs compared with rhs as `type` by
 * cmp (CMP_*), the result negated where `negate` says.  `!` is pushed down
 * to the comparisons (De Morgan), so the code holds no NOT. */
typedef struct CondInstr {
  int op;
  int cmp;
  bool negate;
  Type type;
  const Arg *lhs, *rhs;
} CondInstr;

/* A kernel node's launch configuration, checked.  Nodes launched alike
 * share one (sema interns them), so a Launch is never changed once made. */
typedef struct Launch {
  int64_t grid[3], block[3], cluster[3];
  int64_t smem;
  int64_t priority;
  bool has_cluster, has_priority;
  /* A grid that follows bounded scalars: the programs of its extents (each
   * ending with CGRT_GRID_END), CGRT_GRID_SCALAR naming Graph.res indices;
   * NULL when the grid is constant.  grid[] holds it at the bounds. */
  const int64_t *grid_code;
  int ngrid_code;
} Launch;

/* What a while, if or switch node has besides its accesses. */
typedef struct Control {
  CheckedCond *cond;    /* while, if */
  CondInstr *cond_code; /* while, if: cond lowered (lower_cond) */
  int ncond_code;
  int64_t max_iter;     /* while: 0 unless `max` */
  Pos handle_at;        /* while: the argument that passes its handle to a
                           kernel of its body (which then sets the condition),
                           NO_POS if none */
  bool handle_reported; /* while: a second such argument was reported */
  int nbodies;          /* while 1, if 1 or 2, switch: cases with default */
  int64_t *case_values; /* switch: one per body but the default */
  int default_body;     /* switch: the default's body, or -1 */
  int selector;         /* switch: the scalar (index into Graph.res) */
} Control;

/* A collective node's operation: which (CGRT_ALL_REDUCE ...), its
 * reduction (CGRT_SUM ...), elements sent (args[1]) and received
 * (args[0]), broadcast's root. */
typedef struct Collective {
  int which, reduce_op;
  int64_t send_count, recv_count, root;
} Collective;

/* A node of a graph: what every kind has, and its kind's own part out of
 * line, so that the many kernel nodes of a large graph stay small. */
typedef struct Node {
  const char *name;        /* "norm[0]" */
  const struct Stmt *stmt; /* the statement that makes it, at its position (node_pos) */
  NodeKind kind : 8;
  bool keyword_name : 1; /* unnamed copy, fill or control node: no edge can name it */
  int32_t scope;     /* the control node whose body holds this one, or -1 */
  int32_t branch;    /* which body of it: 0, or 1 for else, or a case's index */
  int nargs;
  int nacc;
  Item *kernel; /* NK_KERNEL, NK_CAPTURE: the kernel or capture function */
  Arg *args;
  Access *acc;
  union {
    const Launch *launch;   /* NK_KERNEL */
    Control *control;       /* NK_WHILE, NK_IF, NK_SWITCH */
    Collective *collective; /* NK_COLLECTIVE */
  };
} Node;

/* Where a node is: its statement's position. */
static inline Pos node_pos(const Node *n) { return n->stmt->pos; }

/* An edge: 16 bytes, its flags packed beside its resource (a program has
 * fewer resources than 25 bits count: see Arg). */
typedef struct Edge {
  uint32_t from, to;
  Pos pos;          /* written: the arrow */
  int32_t res : 26; /* inferred: the resource that orders them, else -1 */
  uint32_t why : 4; /* inferred: read after write, write after read or after write */
  uint32_t written : 1;
  uint32_t programmatic : 1; /* order.c: a kernel into a pdl kernel (PDL) */
} Edge;

typedef VEC(Edge) EdgeVec;

typedef struct Graph {
  Item *item;
  Sym *name;           /* NAME, or NAME_value for a variant */
  const char *prefix;  /* of every name the C declares for it (--prefix), or "" */
  bool is_explicit;
  VEC(Resource) res;
  VEC(Node) nodes;
  EdgeVec written;     /* after name resolution, in source order */
  EdgeVec edges;       /* order.c: the reduced edges, sorted by (from, to) */
  VEC(uint32_t) loads; /* order.c: the nodes that follow the scalar upload */
} Graph;

/* The bytes an argument covers: a view's elements, a scalar, a handle (8);
 * a constant covers none. */
static inline int64_t arg_bytes(const Graph *g, const Arg *a) {
  switch (a->kind) {
  case ARG_VIEW:
  case ARG_SCALAR_PTR:
  case ARG_SCALAR_VALUE: return a->count * type_size(g->res.v[a->res].type);
  case ARG_HANDLE: return 8;
  case ARG_INT:
  case ARG_FLOAT: break;
  }
  return 0;
}

/* What a name in the text stands for, as sema resolved it (kept when
 * Compiler.keep_uses asks, for cgc lsp): the declaration of each use of
 * a name (a buffer, scalar, constant, loop variable, kernel, node or a
 * graph's variant variable, in expressions, arguments, grids, conditions,
 * edges and callees), and each declaration's own name as a use of itself.
 * One record a place, however often unrolling checks it. */
typedef enum DeclKind {
  DECL_NONE,    /* no declaration (a reader's answer; never recorded) */
  DECL_ITEM,    /* a top-level constant, kernel or graph: item */
  DECL_STMT,    /* a graph's declaration (const, scalar, buffer, for, node): stmt in item */
  DECL_PARAM,   /* a kernel's parameter: param of item */
  DECL_VARIANT, /* the variant variable of graph item */
} DeclKind;
typedef struct Use {
  Pos at;       /* the name's first byte */
  DeclKind kind;
  Item *item;   /* the declaration, or the item that holds it (as written:
                   a graph's, not one of its variants') */
  Stmt *stmt;   /* DECL_STMT */
  Param *param; /* DECL_PARAM */
} Use;

typedef struct Program {
  VEC(Graph *) graphs;
  VEC(Use) uses; /* with Compiler.keep_uses, in the order sema met them */
} Program;

/* Checks every item and unrolls every graph.  Errors go to c->diag. */
Program *check_program(Compiler *c);
/* check_program, -D's unused constants, and each graph ordered while no
 * error stops it: the front end every driver runs (warnings after). */
Program *analyze_program(Compiler *c);
/* The warnings of a program without errors (checked and ordered): buffers
 * read before anything writes them, buffers and scalars never used, blocks
 * that are not whole warps. */
void warn_program(Compiler *c, const Program *p);
void program_free(Program *p);

/* ---- cname.c: the names the generated C declares, and those it cannot use ---- */

/* What the generated C declares for a graph G: a type, functions, and a
 * function per scalar (set, get) and buffer (bind or buffer). */
typedef enum GraphName {
  GN_TYPE,    /* G: the opaque struct and its typedef */
  GN_EXTERN,  /* G_extern: the extern buffers' pointers */
  GN_CREATE,  /* G_create */
  GN_LAUNCH,  /* G_launch */
  GN_DESTROY, /* G_destroy */
  GN_USER,    /* G_user */
  GN_POOL_BYTES, /* G_pool_bytes */
  GN_SET,     /* G_set_X, for scalar X */
  GN_GET,     /* G_get_X, for scalar X */
  GN_BIND,    /* G_bind_X, for extern buffer X */
  GN_BUFFER,  /* G_buffer_X, for owned buffer X */
} GraphName;

enum { MAX_PREFIX_LEN = 64 }; /* bytes of --prefix */
enum { CNAME_SIZE = 2 * MAX_IDENT_LEN + MAX_PREFIX_LEN + 16 }; /* bytes that hold any generated name */

/* Writes name `which` of graph g into buf (CNAME_SIZE bytes); r is the
 * scalar or buffer of GN_SET ... GN_BUFFER, NULL for the others. */
const char *graph_c_name(char *buf, GraphName which, const Graph *g, const Resource *r);
/* The names a scalar or buffer gives its graph (GN_SET and GN_GET, or
 * GN_BIND, or GN_BUFFER) into out; returns how many. */
int resource_c_names(const Resource *r, GraphName out[2]);
/* cgc_TABLE_G, a static table of the graph's description, into buf
 * (CNAME_SIZE bytes); TABLE is a tag of cname.c's list. */
const char *graph_table_c_name(char *buf, const Graph *g, const char *table);
/* cgc_call_F, the function that calls capture function F with its
 * arguments' words, into buf (CNAME_SIZE bytes). */
const char *capture_caller_c_name(char *buf, const Item *capture);
/* The program's own names, as the C spells them. */
const char *kernel_c_name(const Item *kernel);    /* its symbol */
const char *param_c_name(const Param *param);     /* in the kernel's declaration */
/* A template kernel's accessor in the companion CUDA file, into buf
 * (CNAME_SIZE bytes). */
const char *template_c_name(char *buf, const Item *kernel);
const char *member_c_name(const Resource *r);     /* an extern buffer's, in G_extern */

/* Why `name` cannot be a name of the program in the generated C ("is a C
 * or C++ keyword"), or NULL when it can; graphs and kernels are at file
 * scope. */
const char *c_name_refused(const char *name, bool file_scope);
/* Why a name cgc makes (G_create, G_set_x) cannot be declared, being a name
 * of C, its library or CUDA, or NULL when it can. */
const char *c_name_taken(const char *name);

/* The generated header's include guard, from its file name (OUT_H_ for
 * out.h), with CGC_ before it where it would begin with a digit or '_' or
 * the program gives a name the same spelling; into buf (HEADER_GUARD_SIZE
 * bytes). */
enum { HEADER_GUARD_SIZE = 264 };
const char *header_guard(char *buf, const char *header, const Compiler *c, const Program *p);
/* What `#include "NAME"` cannot hold that `name` holds ("'\"'", "a control
 * character", "'?\?='"), or NULL: '"' ends the name, C leaves ', \ and
 * control characters undefined there (C11 6.4.7), and a trigraph is
 * another character under -std=c11. */
const char *include_name_flaw(const char *name);
/* The runtime's header, which the generated header includes. */
#define CGRT_HEADER "cgrt.h"
/* A header of that name, found first, would include itself instead. */
bool header_hides_runtime(const char *header);

/* ---- order.c: data flow, cycles, hazards, transitive reduction ---- */

void order_graph(Compiler *c, Graph *g);
/* Why an inferred edge is there, in words for DOT and hover: how its
 * resource orders its nodes ("read after write"), or, without a resource,
 * "collectives in order" or "a loop whose body sets its handle runs apart". */
const char *edge_reason(const Edge *e);

/* ---- dot.c; emit_c.c (and the emit files of emit_internal.h), emit_templates.c ---- */

/* details: each kernel node's launch configuration, and on each edge what
 * made it (written, or the buffer or scalar and how). */
void emit_dot(FILE *out, const Program *p, bool details);
/* The generated C and header; `header` is the name the C file includes. */
void emit_c(FILE *c, FILE *h, Compiler *cc, const Program *p, const char *source,
            const char *header);
/* Whether a graph uses a template kernel: then the C needs the companion
 * CUDA file. */
bool uses_templates(Compiler *cc, const Program *p);
/* The companion CUDA file of the template kernels the graphs use (a
 * comment alone when they use none); `header` is the generated header. */
void emit_templates(FILE *cu, Compiler *cc, const Program *p, const char *source,
                    const char *header);
/* The bits of a constant in an element type (float formats rounded to
 * nearest even). */
uint64_t value_bits(Type t, bool is_float, int64_t i, double f);
/* The fewest significant digits (%.*g) that read back as exactly v, and
 * that text in buf. */
int shortest_float(char *buf, size_t size, double v);

#endif
