/* cgraph.y: the .cgraph grammar (pure, with locations).  Each action is one
 * call into parse.c. */
%define api.pure full
%define api.location.type {Pos}
%define parse.error custom
%locations
%expect 0
%param {void *scanner}
%parse-param {ParseState *ps}

%code requires {
#include "cgc.h"
#include "parse_actions.h"
}

%code provides {
int yylex(YYSTYPE *lval, YYLTYPE *lloc, void *scanner);
}

%code {
#include <string.h>

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                            \
  do {                                                                         \
    (Cur) = (N) ? YYRHSLOC(Rhs, 1) : YYRHSLOC(Rhs, 0);                         \
  } while (0)

static void yyerror(YYLTYPE *loc, void *scanner, ParseState *ps, const char *msg);
}

%union {
  int64_t ival;
  double fval;
  Sym *sym;
  const char *str;
  Type type;
  Mode mode;
  BufferKind bkind;
  LaunchKey lkey;
  bool flag;
  Expr *expr;
  Stmt *stmt;
  Item *item;
  Param *param;
  LaunchItem *launch;
  EdgeGroup *group;
  List *list;
  Cond *cond;
  CaseItem *case_item;
  int cmp;
}

%token <sym> IDENT "identifier"
%token <ival> INT "integer"
%token <fval> FLOAT "floating-point number"
%token <str> STRING "string"
%token <type> TYPE "type name"
%token ARROW "'->'" FATARROW "'=>'" DOTDOT "'..'"
/* The operators of conditions (language v2), scanned so that their use is
 * a syntax error rather than a stray character. */
%token EQ "'=='" NE "'!='" LE "'<='" GE "'>='" ANDAND "'&&'" OROR "'||'"
%token '<' '>' '!'
%token <sym> INCLUDE "'include'" CONST "'const'" KERNEL "'kernel'" GRAPH "'graph'"
%token <sym> BUFFER "'buffer'" SCALAR "'scalar'" NODE "'node'" EXTERN "'extern'"
%token <sym> HOST "'host'" IN "'in'" OUT "'out'" INOUT "'inout'" FOR "'for'"
%token <sym> EXPLICIT "'explicit'" PDL "'pdl'" COPY "'copy'" FILL "'fill'"
%token <sym> GRID "'grid'" BLOCK "'block'" SMEM "'smem'" CLUSTER "'cluster'"
%token <sym> PRIORITY "'priority'" WHILE "'while'" IF "'if'" ELSE "'else'"
%token <sym> SWITCH "'switch'" CASE "'case'" DEFAULT "'default'" MAX "'max'"
%token <sym> CAPTURE "'capture'" FROM "'from'" SYMBOL "'symbol'"
/* The text between a template's < and >, normalised (the scanner reads it
 * after `kernel NAME = TEMPLATE`). */
%token <str> TEMPLATE_ARGS "template arguments"

%type <item> item kernel graph
%type <param> param
%type <mode> mode
%type <type> type
%type <flag> pointer pdl explicit arrow
%type <bkind> buffer_kind
%type <lkey> launch_key
%type <launch> launch
%type <stmt> stmt call
%type <group> group
%type <expr> expr init noderef
%type <list> params params1 stmts exprs exprs1 launches chain noderefs else_ifs else_opt cases
%type <list> sources
%type <cond> cond
%type <expr> max_opt
%type <cmp> cmp

%left OROR
%left ANDAND
%precedence '!'
%left '+' '-'
%left '*' '/' '%'
%precedence NEG
%precedence '['
/* An if's chain takes every else after its body (the reductions that
 * would end it, marked THEN, lose to shifting ELSE); an else that begins a
 * statement is a stray one (stmt). */
%precedence THEN
%precedence ELSE

%%

program
  : %empty
  | program item                  { if ($2) add_item(ps, $2); }
  ;

item
  : INCLUDE STRING semi           { $$ = item_include(ps, @1, $2); }
  | CONST IDENT '=' expr semi     { $$ = item_const(ps, @1, $2, @2, $4); }
  | kernel
  | graph
  | error ';'                     { $$ = NULL; recovered(ps); yyerrok; }
  | error '}'                     { $$ = NULL; recovered(ps); yyerrok; }
  ;

kernel
  : pdl KERNEL IDENT '(' params ')' sources semi
                                  { $$ = item_kernel(ps, $1 ? @1 : @2, $1, false, $3, @3, $5, $7); }
  | pdl KERNEL IDENT '=' IDENT TEMPLATE_ARGS '(' params ')' sources semi
                                  { $$ = item_template(ps, $1 ? @1 : @2, $1, $3, @3, $5, @5, $6, $8, $10); }
  | CAPTURE IDENT '(' params ')' sources semi
                                  { $$ = item_kernel(ps, @1, false, true, $2, @2, $4, $6); }
  ;

sources
  : %empty                        { $$ = NULL; }
  | sources FROM STRING           { $$ = list_push(ps, $1, clause_new(ps, @2, false, $3, @3)); }
  | sources SYMBOL STRING         { $$ = list_push(ps, $1, clause_new(ps, @2, true, $3, @3)); }
  ;

pdl
  : %empty                        { $$ = false; }
  | PDL                           { $$ = true; }
  ;

params
  : %empty                        { $$ = NULL; }
  | params1
  ;

params1
  : param                         { $$ = list_push(ps, NULL, $1); }
  | params1 ',' param             { $$ = list_push(ps, $1, $3); }
  ;

param
  : mode IDENT ':' type pointer   { $$ = param_new(ps, @2, $1, $2, $4, $5); }
  ;

mode
  : %empty                        { $$ = MODE_NONE; }
  | IN                            { $$ = MODE_IN; }
  | OUT                           { $$ = MODE_OUT; }
  | INOUT                         { $$ = MODE_INOUT; }
  ;

/* A name that is no type (float) is reported with the type meant, which
 * the declaration then has; with none close, the declaration is dropped. */
type
  : TYPE
  | IDENT                         { if (!type_meant(ps, @1, $1, &$$)) YYERROR; }
  ;

pointer
  : %empty                        { $$ = false; }
  | '*'                           { $$ = true; }
  ;

graph
  : explicit GRAPH IDENT '{' stmts '}'
                                  { $$ = item_graph(ps, $1 ? @1 : @2, $1, $3, @3, $5); }
  | explicit GRAPH IDENT FOR IDENT IN '[' exprs1 ']' '{' stmts '}'
                                  { $$ = item_graph(ps, $1 ? @1 : @2, $1, $3, @3, $11);
                                    item_variants(ps, $$, $5, @5, $8); }
  ;

explicit
  : %empty                        { $$ = false; }
  | EXPLICIT                      { $$ = true; }
  ;

stmts
  : %empty                        { $$ = NULL; }
  | stmts stmt                    { $$ = $2 ? list_push(ps, $1, $2) : $1; }
  ;

stmt
  : CONST IDENT '=' expr semi     { $$ = stmt_const(ps, @1, $2, @2, $4); }
  | SCALAR IDENT ':' type max_opt init semi
                                  { $$ = stmt_scalar(ps, @1, $2, @2, data_type(ps, @4, $4, "scalar"), @4, $5, $6); }
  | buffer_kind BUFFER IDENT ':' type '[' exprs1 ']' init semi
                                  { $$ = stmt_buffer(ps, $1 == BUF_DEVICE ? @2 : @1, $1, $3, @3,
                                                     data_type(ps, @5, $5, "buffer"), $7, $9); }
  | NODE IDENT '=' call launches semi
                                  { $$ = stmt_node(ps, @1, $2, @2, $4, $5); }
  | call launches semi            { $$ = stmt_node(ps, @1, NULL, @1, $1, $2); }
  | IDENT '=' call launches semi  { $$ = stmt_node(ps, @1, $1, @1, $3, $4);
                                    node_keyword_missing(ps, @1, $1); }
  | chain semi                    { $$ = stmt_edge(ps, $1); }
  | FOR IDENT IN expr DOTDOT expr '{' stmts '}'
                                  { $$ = stmt_for(ps, @1, $2, @2, $4, $6, $8); }
  | FOR IDENT IN expr '{' stmts '}'
                                  { $$ = stmt_for_without_range(ps, @1, $2, @2, $4, $6); }
  | WHILE cond max_opt '{' stmts '}'
                                  { $$ = stmt_while(ps, @1, $2, $3, $5); }
  | IF cond '{' stmts '}' else_ifs else_opt
                                  { $$ = stmt_if(ps, @1, $2, $4, else_if_chain(ps, $6, $7)); }
  | SWITCH expr '{' cases '}'     { $$ = stmt_switch(ps, @1, $2, $4); }
  | NODE IDENT '=' WHILE cond max_opt '{' stmts '}'
                                  { $$ = stmt_named(stmt_while(ps, @4, $5, $6, $8), $2, @2); }
  | NODE IDENT '=' IF cond '{' stmts '}' else_ifs else_opt
                                  { $$ = stmt_named(stmt_if(ps, @4, $5, $7, else_if_chain(ps, $9, $10)),
                                                    $2, @2); }
  | NODE IDENT '=' SWITCH expr '{' cases '}'
                                  { $$ = stmt_named(stmt_switch(ps, @4, $5, $7), $2, @2); }
  /* An else after a statement that is no if: one error, its body dropped. */
  | ELSE '{' stmts '}'            { $$ = NULL; stray_else(ps, @1, $3); }
  | ELSE IF cond '{' stmts '}'    { $$ = NULL; stray_else(ps, @1, $5); }
  | error ';'                     { $$ = NULL; recovered(ps); yyerrok; }
  ;

/* A statement's end.  Missing at the end of a line, it is reported there
 * (yyreport_syntax_error) and the statement is kept, as if the ';' were
 * there: the next statement is parsed, and its errors reported, as usual. */
semi
  : ';'
  | error                         { if (semicolon_inserted(ps)) yyerrok; }
  ;

max_opt
  : %empty                        { $$ = NULL; }
  | MAX expr                      { $$ = $2; }
  ;

/* `else if` links, left-recursive so that a long chain takes no stack:
 * else_if_chain nests them. */
else_ifs
  : %empty                        { $$ = NULL; }
  | else_ifs ELSE IF cond '{' stmts '}'
                                  { $$ = list_push(ps, $1, else_if(ps, @3, $4, $6)); }
  /* No body: the link is dropped, and the parse goes on after the
   * condition (quietly at the end of the input, which is the error). */
  | else_ifs ELSE IF cond error   { $$ = $1; recovered(ps); if (yychar != YYEOF) yyerrok; }
  ;

/* More of the chain after its last else is a stray else (stmt): one error
 * each, and the parse goes on after it. */
else_opt
  : %empty %prec THEN             { $$ = NULL; }
  | ELSE '{' stmts '}'            { $$ = else_body(ps, $3); }
  ;

cases
  : %empty                        { $$ = NULL; }
  | cases CASE expr '{' stmts '}' { $$ = list_push(ps, $1, case_new(ps, @2, $3, $5)); }
  | cases DEFAULT '{' stmts '}'   { $$ = list_push(ps, $1, case_new(ps, @2, NULL, $4)); }
  ;

cond
  : expr cmp expr                 { $$ = cond_cmp(ps, @2, $2, $1, $3); }
  | cond ANDAND cond              { $$ = cond_join(ps, @2, COND_AND, $1, $3); }
  | cond OROR cond                { $$ = cond_join(ps, @2, COND_OR, $1, $3); }
  | '!' cond                      { $$ = cond_join(ps, @1, COND_NOT, $2, NULL); }
  | '(' cond ')'                  { $$ = $2; }
  ;

cmp
  : EQ                            { $$ = CMP_EQ; }
  | NE                            { $$ = CMP_NE; }
  | '<'                           { $$ = CMP_LT; }
  | LE                            { $$ = CMP_LE; }
  | '>'                           { $$ = CMP_GT; }
  | GE                            { $$ = CMP_GE; }
  ;

init
  : %empty                        { $$ = NULL; }
  | '=' expr                      { $$ = $2; }
  ;

buffer_kind
  : %empty                        { $$ = BUF_DEVICE; }
  | EXTERN                        { $$ = BUF_EXTERN; }
  | HOST                          { $$ = BUF_HOST; }
  | EXTERN HOST                   { $$ = BUF_EXTERN_HOST; }
  ;

call
  : IDENT '(' exprs ')'           { $$ = stmt_call(ps, @1, NK_KERNEL, $1, $3); }
  | COPY '(' exprs ')'            { $$ = stmt_call(ps, @1, NK_COPY, NULL, $3); }
  | FILL '(' exprs ')'            { $$ = stmt_call(ps, @1, NK_FILL, NULL, $3); }
  ;

launches
  : %empty                        { $$ = NULL; }
  | launches launch               { $$ = list_push(ps, $1, $2); }
  ;

launch
  : launch_key '(' exprs ')'      { $$ = launch_new(ps, @1, $1, $3); }
  ;

launch_key
  : GRID                          { $$ = LK_GRID; }
  | BLOCK                         { $$ = LK_BLOCK; }
  | SMEM                          { $$ = LK_SMEM; }
  | CLUSTER                       { $$ = LK_CLUSTER; }
  | PRIORITY                      { $$ = LK_PRIORITY; }
  ;

chain
  : group arrow group             { $$ = edge_link(ps, NULL, $1, @2, $2, $3); }
  | chain arrow group             { $$ = edge_link(ps, $1, NULL, @2, $2, $3); }
  ;

arrow
  : ARROW                         { $$ = false; }
  | FATARROW                      { $$ = true; }
  ;

group
  : noderef                       { $$ = edge_group(ps, list_push(ps, NULL, $1)); }
  | '{' noderefs '}'              { $$ = edge_group(ps, $2); }
  ;

noderefs
  : noderef                       { $$ = list_push(ps, NULL, $1); }
  | noderefs ',' noderef          { $$ = list_push(ps, $1, $3); }
  ;

noderef
  : IDENT                         { $$ = expr_name(ps, @1, $1); }
  | noderef '[' expr ']'          { $$ = expr_index(ps, @2, $1, $3); }
  ;

exprs
  : %empty                        { $$ = NULL; }
  | exprs1
  ;

exprs1
  : expr                          { $$ = list_push(ps, NULL, $1); }
  | exprs1 ',' expr               { $$ = list_push(ps, $1, $3); }
  ;

expr
  : INT                           { $$ = expr_int(ps, @1, $1); }
  | FLOAT                         { $$ = expr_float(ps, @1, $1); }
  | IDENT                         { $$ = expr_name(ps, @1, $1); }
  | IDENT '(' exprs ')'           { $$ = expr_call(ps, @1, $1, $3); }
  | MAX '(' exprs ')'             { $$ = expr_call(ps, @1, $1, $3); }
  | MAX                           { $$ = expr_name(ps, @1, $1); } /* all_reduce(x, max) */
  | '(' expr ')'                  { $$ = $2; }
  | expr '[' expr ']'             { $$ = expr_index(ps, @2, $1, $3); }
  | expr '[' expr ':' expr ']'    { $$ = expr_slice(ps, @2, $1, $3, $5); }
  | '-' expr %prec NEG            { $$ = expr_neg(ps, @1, $2); }
  | expr '+' expr                 { $$ = expr_bin(ps, @2, '+', $1, $3); }
  | expr '-' expr                 { $$ = expr_bin(ps, @2, '-', $1, $3); }
  | expr '*' expr                 { $$ = expr_bin(ps, @2, '*', $1, $3); }
  | expr '/' expr                 { $$ = expr_bin(ps, @2, '/', $1, $3); }
  | expr '%' expr                 { $$ = expr_bin(ps, @2, '%', $1, $3); }
  ;

%%

static void yyerror(YYLTYPE *loc, void *scanner, ParseState *ps, const char *msg) {
  (void)scanner;
  if (ps->stop)
    return;
  /* Bison's own stack limit: only input nested beyond reason reaches it. */
  if (!strcmp(msg, "memory exhausted"))
    error_at(ps->c->diag, *loc, "input nested too deeply");
  else
    error_at(ps->c->diag, *loc, "%s", msg);
  ps->stop = true;
}

/* Bison's names for tokens: keywords and punctuation are quoted with single
 * quotes inside its double quotes; the others are descriptions. */
static const char *token_text(yysymbol_kind_t k) {
  const char *name = yysymbol_name(k);
  static _Thread_local char buf[64];
  size_t n = strlen(name);
  if (n >= 2 && name[0] == '"' && n < sizeof buf) {
    memcpy(buf, name + 1, n - 2);
    buf[n - 2] = 0;
    return buf;
  }
  return name;
}

/* The token scanned `back` tokens before the newest (0: the lookahead),
 * or NULL. */
static const struct ScannedToken *scanned(const ParseState *ps, unsigned back) {
  return ps->ntokens > back ? &ps->tokens[(ps->ntokens - 1 - back) % 4] : NULL;
}

/* A keyword's text from its symbol's name ("'kernel'"), or NULL. */
static const char *keyword_text(yysymbol_kind_t k, char *buf, size_t size) {
  const char *t = token_text(k);
  size_t n = strlen(t);
  if (n < 3 || t[0] != '\'' || t[n - 1] != '\'' || n - 2 >= size)
    return NULL;
  for (size_t i = 1; i + 1 < n; i++)
    if (!(t[i] >= 'a' && t[i] <= 'z'))
      return NULL;
  memcpy(buf, t + 1, n - 2);
  buf[n - 2] = 0;
  return buf;
}

/* The keyword among `kinds` closest to `word`, into buf, or NULL. */
static const char *keyword_meant(const char *word, const yysymbol_kind_t *kinds, int n,
                                 char (*buf)[16]) {
  Suggest sg;
  suggest_init(&sg, word);
  for (int i = 0; i < n; i++)
    suggest_try(&sg, keyword_text(kinds[i], buf[i], sizeof buf[i]));
  return suggest_best(&sg);
}

/* Whether t may begin a statement or a parameter: after these tokens, at
 * the start, or first on its line. */
static bool starts_here(Diag *d, const struct ScannedToken *before,
                        const struct ScannedToken *t) {
  return !before || before->kind == ';' || before->kind == '{' || before->kind == '}' ||
         before->kind == '(' || before->kind == ',' ||
         pos_line(d, before->end) < pos_line(d, t->at);
}

static Span token_span(const struct ScannedToken *t) {
  return (Span){.at = t->at, .lo = t->at, .hi = t->end};
}

/* Recovery from this error discards tokens up to a ';' or '}', the
 * lookahead and perhaps the identifier before it among them: names that
 * may have been declared there, which are not reported undefined. */
static void discarding(ParseState *ps) {
  ps->recovering = true;
  lose_name(ps, scanned(ps, 0));
  lose_name(ps, scanned(ps, 1));
}

static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, ParseState *ps) {
  (void)scanner;
  if (ps->stop)
    return 0;
  Diag *d = ps->c->diag;
  Pos at = *yypcontext_location(ctx);
  /* The scanner already reported what went wrong on this line. */
  if (pos_line(d, at) == ps->lex_error_line) {
    discarding(ps);
    return 0;
  }
  yysymbol_kind_t tok = yypcontext_token(ctx);
  yysymbol_kind_t expected[YYNTOKENS];
  int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
  const struct ScannedToken *look = scanned(ps, 0), *prev = scanned(ps, 1);
  bool semicolon = false;
  for (int i = 0; i < n; i++)
    semicolon |= !strcmp(token_text(expected[i]), "';'");
  /* A kernel's declaration ends where `from` or `symbol` could go on:
   * the missing ';' is what to say. */
  for (int i = 0, m = n; semicolon && i < m; i++)
    if (expected[i] == YYSYMBOL_FROM || expected[i] == YYSYMBOL_SYMBOL) {
      memmove(&expected[i], &expected[i + 1], (size_t)(m - i - 1) * sizeof *expected);
      i--, m--, n--;
    }
  /* A ';' missing at the end of a line: said there, not at the next
   * token, and inserted (the parser goes on as if it were there). */
  if (semicolon && prev && look &&
      (tok == YYSYMBOL_YYEOF || pos_line(d, look->at) > pos_line(d, prev->end))) {
    if (pos_line(d, prev->end) == ps->lex_error_line) {
      discarding(ps);
      return 0; /* what the scanner reported there is the mistake */
    }
    Span sp = {.at = prev->end, .lo = prev->end, .hi = prev->end};
    error_span(d, sp, "expected ';' at the end of the statement");
    diag_fix(d, sp, ";");
    ps->semicolon_inserted = true;
    return 0;
  }
  discarding(ps);
  /* A C parameter list (kernel k(f16* x, const f16* y)): one error, and
   * the kernel's name is not then reported undefined at each call. */
  const struct ScannedToken *two = scanned(ps, 2), *three = scanned(ps, 3);
  if ((tok == YYSYMBOL_TYPE || tok == YYSYMBOL_CONST) && prev && prev->kind == '(' && two &&
      two->kind == IDENT && three && (three->kind == KERNEL || three->kind == CAPTURE)) {
    lose_name(ps, two);
    error_at(d, at,
             "a parameter is written 'MODE NAME: TYPE', as in 'in x: f16*' or 'n: u32' (MODE "
             "in, out or inout for a pointer), not as in C");
    return 0;
  }
  /* A CUDA prototype pasted where declarations go. */
  bool at_top = false;
  for (int i = 0; i < n; i++)
    at_top |= expected[i] == YYSYMBOL_KERNEL;
  if (at_top &&
      (tok == YYSYMBOL_EXTERN || (tok == YYSYMBOL_IDENT && !strcmp(ps->last, "__global__")))) {
    error_at(d, at,
             "a kernel is declared as 'kernel NAME(in x: f16*, n: u32);', not as a CUDA "
             "prototype: cgc writes the extern \"C\" declaration from it");
    return 0;
  }
  if (tok == YYSYMBOL_IDENT && look) {
    /* A misspelt keyword where keywords are expected. */
    char buf[YYNTOKENS][16];
    const char *meant = keyword_meant(ps->last, expected, n, buf);
    if (meant) {
      error_at(d, at, "'%s' is not a keyword; did you mean '%s'?", ps->last, meant);
      diag_fix(d, token_span(look), meant);
      return 0;
    }
  }
  /* An identifier that begins a statement and the token after it makes no
   * sense: a misspelt keyword (bufer x: f32[4];). */
  const struct ScannedToken *before = scanned(ps, 2);
  if (prev && prev->kind == IDENT && starts_here(d, before, prev) && prev->at.off < at.off) {
    yysymbol_kind_t all[YYNTOKENS];
    int nall = 0;
    for (int k = 0; k < YYNTOKENS; k++)
      all[nall++] = (yysymbol_kind_t)k;
    char buf[YYNTOKENS][16];
    const char *meant = keyword_meant(prev->text, all, nall, buf);
    if (meant) {
      error_at(d, prev->at, "'%s' is not a keyword; did you mean '%s'?", prev->text, meant);
      diag_fix(d, token_span(prev), meant);
      return 0;
    }
  }
  char unexpected[128];
  if (tok == YYSYMBOL_IDENT || tok == YYSYMBOL_INT || tok == YYSYMBOL_FLOAT ||
      tok == YYSYMBOL_TYPE)
    snprintf(unexpected, sizeof unexpected, "%s '%s'", token_text(tok), ps->last);
  else
    snprintf(unexpected, sizeof unexpected, "%s", token_text(tok));
  /* `if {`, `else if {`, `while {`: the condition left out. */
  if (prev && (prev->kind == IF || prev->kind == WHILE) && prev->at.off <= at.off) {
    error_at(d, at, "expected a condition after '%s', such as 's == 0', before %s",
             prev->kind == IF ? "if" : "while", unexpected);
    return 0;
  }
  /* An else where a statement could start: after one that is no if. */
  if (tok == YYSYMBOL_ELSE && prev &&
      (prev->kind == ';' || prev->kind == '{' || prev->kind == '}')) {
    error_at(d, at, DIAG_UNEXPECTED_ELSE_ELSE_COMES);
    return 0;
  }
  if (n <= 0 || n > 4) {
    error_at(d, at, "unexpected %s", unexpected);
    return 0;
  }
  char list[256] = "";
  for (int i = 0; i < n; i++) {
    size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s%s",
             i == 0 ? "" : i == n - 1 ? " or " : ", ", token_text(expected[i]));
  }
  error_at(d, at, "expected %s before %s", list, unexpected);
  return 0;
}
