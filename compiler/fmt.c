/* fmt.c: `cgc fmt`, the one layout of .cgraph files.
 *
 * The layout: 4 spaces an indentation level; one statement a line, and a
 * statement broken over lines in the source keeps its breaks, its later
 * lines one level deeper (but `} else {` and `} else if COND {` are one
 * line each, and after `} else // comment` the if starts the next line at
 * the else's level); spaces around binary operators, `=`, `->`, `=>` and `..`,
 * after `,` and a declaration's `:`, none inside brackets; at most one
 * blank line in a row, none after `{` or before `}`.  In a run of
 * consecutive one-line constants or nodes the `=` line up, in a run of
 * buffers and scalars the types, and in a run of lines with comments at
 * their ends the comments.  Comments stay where they were.
 *
 * Only what the scanner accepts is formatted; the tokens here are scanned
 * again, simply, with the comments and line breaks the grammar drops. */
#include "cgc.h"
#include "parse_actions.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef enum TokKind {
  T_WORD, T_NUMBER, T_STRING, T_COMMENT, T_BLOCK_COMMENT, T_PUNCT,
  T_TEMPLATE, /* a template's arguments with their < >, normalised (in Tok.own) */
  T_EOF
} TokKind;

typedef struct Tok {
  TokKind kind;
  const char *s;
  int len;
  int breaks; /* line breaks between this token and the one before */
  char *own;  /* T_TEMPLATE: its text, on the heap */
} Tok;

typedef VEC(Tok) TokVec;
typedef VEC(char) Text;

static bool is(const Tok *t, const char *s) {
  return (int)strlen(s) == t->len && !memcmp(t->s, s, (size_t)t->len);
}

/* Template arguments from the '<' at s[i] to the '>' that closes it (the
 * scanner's rules: '<' and '>' count outside parentheses), normalised as
 * the compiler keeps them; the index past the '>'. */
static size_t scan_template(const char *s, size_t n, size_t i, Tok *t) {
  CharVec args = {0};
  bool space = false;
  int angle = 0, paren = 0;
  for (i++; i < n; i++) {
    char c = s[i];
    if (c == '>' && !paren && !angle)
      break;
    if (isspace((unsigned char)c)) {
      space = true;
      continue;
    }
    angle += !paren && c == '<';
    angle -= !paren && c == '>';
    paren += c == '(';
    paren -= c == ')';
    template_text_put(&args, &space, c);
  }
  t->kind = T_TEMPLATE;
  t->own = xrealloc(NULL, args.n + 3);
  t->own[0] = '<';
  if (args.n)
    memcpy(t->own + 1, args.v, args.n);
  memcpy(t->own + 1 + args.n, ">", 2);
  t->s = t->own;
  t->len = (int)args.n + 2;
  vec_free(&args);
  return i < n ? i + 1 : n;
}

static void scan(const char *s, size_t n, TokVec *out) {
  size_t i = 0;
  int breaks = 0;
  int words = 0; /* `kernel NAME = TEMPLATE` before template arguments */
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      breaks++, i++;
      continue;
    }
    if (isspace((unsigned char)c)) {
      i++;
      continue;
    }
    Tok t = {.s = s + i, .breaks = breaks};
    size_t j = i + 1;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      t.kind = T_COMMENT;
      while (j < n && s[j] != '\n')
        j++;
      while (j > i && isspace((unsigned char)s[j - 1]))
        j--;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      t.kind = T_BLOCK_COMMENT;
      j = i + 2;
      while (j + 1 < n && !(s[j] == '*' && s[j + 1] == '/'))
        j++;
      j = j + 2 <= n ? j + 2 : n;
    } else if (c == '"') {
      t.kind = T_STRING;
      while (j < n && s[j] != '"' && s[j] != '\n')
        j += s[j] == '\\' && j + 1 < n ? 2 : 1;
      if (j < n && s[j] == '"')
        j++;
    } else if (isalpha((unsigned char)c) || c == '_') {
      t.kind = T_WORD;
      while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
        j++;
    } else if (isdigit((unsigned char)c)) {
      t.kind = T_NUMBER;
      while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_' ||
                       (s[j] == '.' && j + 1 < n && isdigit((unsigned char)s[j + 1])) ||
                       ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') &&
                        !(s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')))))
        j++;
    } else if (c == '<' && words == 4 && !(i + 1 < n && s[i + 1] == '=')) {
      j = scan_template(s, n, i, &t);
    } else {
      t.kind = T_PUNCT;
      static const char *const two[] = {"->", "=>", "..", "==", "!=", "<=", ">=", "&&", "||"};
      for (size_t k = 0; k < sizeof two / sizeof *two; k++)
        if (i + 1 < n && c == two[k][0] && s[i + 1] == two[k][1])
          j = i + 2;
    }
    if (t.kind != T_TEMPLATE)
      t.len = (int)(j - i);
    /* As the scanner counts them (comments are no tokens there). */
    if (t.kind != T_COMMENT && t.kind != T_BLOCK_COMMENT) {
      bool word = t.kind == T_WORD;
      words = word && is(&t, "kernel")                               ? 1
              : (word && (words == 1 || words == 3)) || (words == 2 && is(&t, "=")) ? words + 1
                                                                     : 0;
    }
    vec_push(out, t);
    i = j;
    breaks = 0;
  }
  vec_push(out, ((Tok){.kind = T_EOF, .s = s + n, .breaks = breaks}));
}


static bool is_type(const Tok *t) {
  static const char *const types[] = {
#define KEYWORD(TOKEN, SPELLING)
#define TYPE_NAME(TY, SPELLING) SPELLING,
#include "keywords.def"
  };
  for (size_t k = 0; k < sizeof types / sizeof *types; k++)
    if (is(t, types[k]))
      return true;
  return false;
}

/* Statements whose `{` opens a block rather than a group of edge ends. */
static bool opens_block(const Tok *first) {
  static const char *const words[] = {"graph", "explicit", "for", "while", "if",
                                      "else",  "switch",   "case", "default"};
  for (size_t k = 0; k < sizeof words / sizeof *words; k++)
    if (is(first, words[k]))
      return true;
  return false;
}

/* One output line, with what the alignment pass needs. */
typedef struct Line {
  int indent;
  char *code;     /* without indentation or trailing comment */
  char *comment;  /* trailing comment, or NULL */
  bool whole;     /* a complete one-line statement */
  char kind;      /* 'c' const, 'n' node, 'd' buffer or scalar, 0 other */
} Line;

typedef struct Fmt {
  VEC(Line) lines;
  Text cur; /* the line being built */
  int indent;
  bool cont; /* the current line continues a statement */
  bool stmt_start_line;
} Fmt;

static void text_put(Text *t, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    vec_push(t, s[i]);
}

static char *text_take(Text *t) {
  vec_push(t, 0);
  char *s = t->v;
  memset(t, 0, sizeof *t);
  return s;
}

static void end_line(Fmt *f, const char *comment, bool whole, char kind) {
  Line l = {.indent = f->indent + (f->cont ? 1 : 0), .whole = whole, .kind = kind};
  l.code = text_take(&f->cur);
  l.comment = comment ? strcpy(xrealloc(NULL, strlen(comment) + 1), comment) : NULL;
  vec_push(&f->lines, l);
}

static void blank_line(Fmt *f) {
  if (f->lines.n && (f->lines.v[f->lines.n - 1].code[0] || f->lines.v[f->lines.n - 1].comment)) {
    Line l = {.code = strcpy(xrealloc(NULL, 1), "")};
    vec_push(&f->lines, l);
  }
}

static char kind_of(const Tok *first, const Tok *second) {
  if (is(first, "const"))
    return 'c';
  if (is(first, "node"))
    return 'n';
  if (is(first, "scalar") || is(first, "buffer") ||
      ((is(first, "extern") || is(first, "host")) && second && second->kind == T_WORD))
    return 'd';
  return 0;
}

static char *dupn(const char *s, size_t n) {
  char *p = xrealloc(NULL, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static bool is_punct(const Tok *t, const char *s) { return t && t->kind == T_PUNCT && is(t, s); }

/* Whether a space goes between prev and c.  prev2 is the token before prev
 * in the statement (NULL at its start), slice says a `[` is innermost, and
 * block says the statement's braces open blocks. */
static bool needs_space(const Tok *prev2, const Tok *prev, const Tok *c, bool slice, bool block) {
  if (is_punct(c, ";") || is_punct(c, ",") || is_punct(c, ")") || is_punct(c, "]") ||
      is_punct(c, ":"))
    return false;
  if (is_punct(prev, "(") || is_punct(prev, "["))
    return false;
  if (is_punct(prev, ":"))
    return !slice;
  if (c->kind == T_TEMPLATE || (is_punct(c, "(") && prev->kind == T_TEMPLATE))
    return false; /* scale<__half, 4>(...) */
  if (is_punct(c, "(") && prev->kind == T_WORD && !is(prev, "in") && !is(prev, "while") &&
      !is(prev, "if") && !is(prev, "switch") && !is(prev, "case"))
    return false; /* a call, not a condition in parentheses */
  if (is_punct(c, "[") && ((prev->kind == T_WORD && !is(prev, "in")) || is_punct(prev, "]") ||
                            is_punct(prev, ")")))
    return false; /* an index, not `for B in [1, 2]` */
  if (is_punct(c, "*") && is_type(prev))
    return false;
  if ((is_punct(prev, "-") || is_punct(prev, "+") || is_punct(prev, "!")) &&
      (!prev2 || (prev2->kind == T_PUNCT && !is(prev2, ")") && !is(prev2, "]")) ||
       (prev2->kind == T_WORD && (is(prev2, "max") || is(prev2, "case") || is(prev2, "in")))))
    return false; /* after a unary operator (`max -1`, `case -1`) */
  if (!block && (is_punct(prev, "{") || is_punct(c, "}")))
    return false; /* a group of edge ends */
  return true;
}

static void format_tokens(Fmt *f, const Tok *t, size_t n) {
  const Tok *first = NULL, *second = NULL; /* the current statement's first tokens */
  const Tok *prev = NULL, *prev2 = NULL;
  char open[256];                          /* ( and [ open in this statement */
  int brackets = 0;
  bool multi = false;                      /* this statement spans lines */
  bool named = false;                      /* `node NAME = while|if|switch` */
  for (size_t i = 0; i < n && t[i].kind != T_EOF; i++) {
    const Tok *c = &t[i];
    bool block = first && (opens_block(first) || named);
    /* `} else` and `else if` are one line, whatever breaks the source has
     * between them. */
    bool joined = prev && c->kind == T_WORD &&
                  ((is(c, "else") && is_punct(prev, "}")) ||
                   (is(c, "if") && prev->kind == T_WORD && is(prev, "else")));
    /* A line break inside a statement stays, its next line one level in. */
    if (c->breaks && f->cur.n && !joined) {
      end_line(f, NULL, false, 0);
      f->cont = first != NULL;
      multi = multi || first != NULL;
    }
    /* At most one blank line, and none after `{` or before `}`. */
    if (c->breaks >= 2 && !first && f->lines.n && !is_punct(c, "}") && !joined) {
      const char *last = f->lines.v[f->lines.n - 1].code;
      size_t len = strlen(last);
      if (!(len && last[len - 1] == '{'))
        blank_line(f);
    }
    /* A comment outside a statement keeps its own line, or the end of the
     * line it was on; inside a statement a block comment stays in place. */
    if (c->kind == T_COMMENT || (c->kind == T_BLOCK_COMMENT && !first)) {
      char *comment = dupn(c->s, (size_t)c->len);
      if (!f->cur.n) {
        text_put(&f->cur, comment, strlen(comment));
        end_line(f, NULL, false, 0);
      } else {
        end_line(f, comment, false, 0);
      }
      free(comment);
      /* After `} else // ...`, the if it takes starts the next line at
       * the else's level, as `} else if` would. */
      const bool in_stmt = first != NULL && !(is(first, "else") && !second);
      f->cont = in_stmt;
      multi = multi || in_stmt;
      prev = prev2 = NULL;
      continue;
    }
    if (is_punct(c, "}") && brackets == 0 && (!first || block)) {
      if (f->cur.n)
        end_line(f, NULL, false, 0);
      f->cont = false;
      f->indent = f->indent > 0 ? f->indent - 1 : 0;
      text_put(&f->cur, "}", 1);
      first = second = NULL;
      multi = false;
      prev = c;
      prev2 = NULL;
      const Tok *nx = &t[i + 1];
      if (nx->kind == T_WORD && is(nx, "else")) {
        first = NULL; /* `} else {`: the else starts a statement on this line */
        continue;
      }
      if ((nx->kind == T_COMMENT || nx->kind == T_BLOCK_COMMENT) && !nx->breaks &&
          !memchr(nx->s, '\n', (size_t)nx->len)) {
        char *comment = dupn(nx->s, (size_t)nx->len);
        end_line(f, comment, false, 0);
        free(comment);
        i++;
      } else {
        end_line(f, NULL, false, 0);
      }
      prev = NULL;
      continue;
    }
    if (f->cur.n && prev &&
        needs_space(prev2, prev, c, brackets > 0 && open[brackets - 1] == '[', block))
      text_put(&f->cur, " ", 1);
    text_put(&f->cur, c->s, (size_t)c->len);
    if (!first) {
      first = c;
      second = NULL;
      named = false;
    } else if (!second) {
      second = c;
    } else if (is(first, "node") && prev && is_punct(prev, "=") && c->kind == T_WORD &&
               (is(c, "while") || is(c, "if") || is(c, "switch"))) {
      named = true;
    }
    if (is_punct(c, "(") || is_punct(c, "[")) {
      if (brackets < (int)sizeof open)
        open[brackets] = c->s[0];
      brackets++;
    } else if ((is_punct(c, ")") || is_punct(c, "]")) && brackets > 0) {
      brackets--;
    }
    prev2 = prev;
    prev = c;
    bool ends = false;
    if (is_punct(c, "{") && brackets == 0 && first && (opens_block(first) || named)) {
      end_line(f, NULL, false, 0);
      f->indent++;
      ends = true;
    } else if (is_punct(c, ";") && brackets == 0) {
      char kind = kind_of(first, second);
      const Tok *nx = &t[i + 1];
      if ((nx->kind == T_COMMENT || nx->kind == T_BLOCK_COMMENT) && !nx->breaks &&
          !memchr(nx->s, '\n', (size_t)nx->len)) {
        char *comment = dupn(nx->s, (size_t)nx->len);
        end_line(f, comment, !multi, kind);
        free(comment);
        i++;
      } else {
        end_line(f, NULL, !multi, kind);
      }
      ends = true;
    }
    if (ends) {
      f->cont = false;
      first = second = NULL;
      multi = false;
      prev = prev2 = NULL;
      brackets = 0;
    }
  }
  if (f->cur.n)
    end_line(f, NULL, false, 0);
}

/* Where a line lines up with its neighbours: before the first " = " of a
 * constant or node, after the first ": " of a buffer or scalar. */
static int align_point(const Line *l) {
  const char *p = NULL;
  if (l->kind == 'c' || l->kind == 'n')
    p = strstr(l->code, " = ");
  else if (l->kind == 'd')
    p = strstr(l->code, ": ");
  if (!p)
    return -1;
  return (int)(p - l->code) + (l->kind == 'd' ? 1 : 0);
}

static void pad_at(Line *l, int at, int width) {
  size_t len = strlen(l->code);
  char *s = xrealloc(NULL, len + (size_t)width + 1);
  memcpy(s, l->code, (size_t)at);
  memset(s + at, ' ', (size_t)width);
  memcpy(s + at + width, l->code + at, len - (size_t)at + 1);
  free(l->code);
  l->code = s;
}

static void align(Fmt *f) {
  Line *v = f->lines.v;
  size_t n = f->lines.n;
  /* The columns of runs of one-line declarations of one kind. */
  for (size_t i = 0; i < n;) {
    size_t j = i;
    int most = -1;
    while (j < n && v[j].whole && v[j].kind && v[j].kind == v[i].kind &&
           v[j].indent == v[i].indent && align_point(&v[j]) >= 0) {
      most = align_point(&v[j]) > most ? align_point(&v[j]) : most;
      j++;
    }
    for (size_t k = i; k < j; k++)
      pad_at(&v[k], align_point(&v[k]), most - align_point(&v[k]));
    i = j > i ? j : i + 1;
  }
  /* The comments at the ends of consecutive lines. */
  for (size_t i = 0; i < n;) {
    size_t j = i;
    int most = 0;
    while (j < n && v[j].comment && v[j].indent == v[i].indent) {
      int len = (int)strlen(v[j].code);
      most = len > most ? len : most;
      j++;
    }
    for (size_t k = i; k < j; k++) {
      int len = (int)strlen(v[k].code);
      pad_at(&v[k], len, most - len);
    }
    i = j > i ? j : i + 1;
  }
}

char *fmt_text(const char *src, size_t n) {
  TokVec toks = {0};
  scan(src, n, &toks);
  Fmt f = {0};
  format_tokens(&f, toks.v, toks.n);
  align(&f);
  Text out = {0};
  size_t end = f.lines.n;
  while (end && !f.lines.v[end - 1].code[0] && !f.lines.v[end - 1].comment)
    end--;
  for (size_t i = 0; i < f.lines.n; i++) {
    Line *l = &f.lines.v[i];
    if (i < end) {
      if (l->code[0] || l->comment)
        for (int k = 0; k < 4 * l->indent; k++)
          vec_push(&out, ' ');
      text_put(&out, l->code, strlen(l->code));
      if (l->comment) {
        if (l->code[0])
          text_put(&out, "  ", 2);
        text_put(&out, l->comment, strlen(l->comment));
      }
      vec_push(&out, '\n');
    }
    free(l->code);
    free(l->comment);
  }
  vec_free(&f.lines);
  vec_free(&f.cur);
  for (size_t i = 0; i < toks.n; i++)
    free(toks.v[i].own);
  vec_free(&toks);
  vec_push(&out, 0);
  return out.v;
}

char *fmt_source(Compiler *c, int file) {
  /* Only input that scans and parses is formatted. */
  ItemVec items = {0};
  parse_source(c, file, &items);
  vec_free(&items);
  const Source *text = source_get(c->diag, file);
  const char *nul = memchr(text->text, 0, text->len);
  if (nul && !diag_errors(c->diag)) {
    /* Only in a comment or string the scanner accepts it; a layout of
     * such a file could not keep it, so it is refused. */
    error_at(c->diag, source_pos(c->diag, file, (size_t)(nul - text->text)),
             "cannot format a file with a NUL byte");
  }
  if (diag_errors(c->diag))
    return NULL;
  return fmt_text(text->text, text->len);
}

/* Standard input, whole, as a source named <stdin>; -1 after reporting. */
static int load_stdin(Diag *d) {
  size_t len = 0, cap = 4096;
  char *text = xrealloc(NULL, cap);
  for (;;) {
    if (len == cap) {
      if ((int64_t)cap > MAX_FILE_SIZE) {
        free(text);
        error_at(d, NO_POS, "standard input is larger than %lld MiB",
                 (long long)(MAX_FILE_SIZE >> 20));
        return -1;
      }
      text = xrealloc(text, cap *= 2);
    }
    size_t got = fread(text + len, 1, cap - len, stdin);
    len += got;
    if (got == 0)
      break;
  }
  int file = -1;
  if (ferror(stdin))
    error_at(d, NO_POS, "cannot read standard input: %s", strerror(EIO));
  else
    file = source_add(d, "<stdin>", text, len);
  free(text);
  return file;
}

int cgc_fmt(int argc, char **argv) {
  bool check = false;
  int status = 0, files = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--check")) {
      check = true;
      continue;
    }
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs("usage: cgc fmt [--check] FILE.cgraph|-...\n"
            "  rewrites each file in the one layout of .cgraph files;\n"
            "  -: read standard input and write the layout to standard output\n"
            "  --check: rewrite nothing, list the files that would change, exit 1 if any\n",
            stdout);
      return 0;
    }
    bool piped = !strcmp(argv[i], "-");
    if (argv[i][0] == '-' && !piped) {
      fprintf(stderr, "cgc: error[%s]: unknown fmt option '%s'\n",
              error_code("unknown fmt option '%s'"), argv[i]);
      return 2;
    }
    files++;
    Compiler c = {0};
    compiler_init(&c);
    diag_set_color(c.diag, false);
    int file = piped ? load_stdin(c.diag) : source_load(c.diag, argv[i], NO_POS);
    if (file < 0) {
      status = 2;
    } else {
      char *out = fmt_source(&c, file);
      if (!out) {
        status = status ? status : 1;
      } else {
        const Source *src = source_get(c.diag, file);
        bool same = strlen(out) == src->len && !memcmp(out, src->text, src->len);
        if (!same && check) {
          printf("%s\n", piped ? "<stdin>" : argv[i]);
          status = status ? status : 1;
        } else if (piped && !check) {
          fputs(out, stdout); /* the layout, changed or not */
        } else if (!same) {
          /* Through a symlink the file it names is rewritten, keeping its mode. */
          Outputs os = {.diag = c.diag};
          FILE *f = output_add(&os, argv[i]);
          if (f)
            fputs(out, f);
          if (!f || !outputs_commit(&os))
            status = 2;
        }
        free(out);
      }
    }
    compiler_free(&c);
  }
  if (!files) {
    fprintf(stderr, "cgc: error[%s]: fmt needs files (cgc fmt --help)\n",
            error_code("fmt needs files (cgc fmt --help)"));
    return 2;
  }
  int err = flush_stdout(); /* the list of --check */
  if (err) {
    fprintf(stderr, "cgc: error[%s]: cannot write standard output: %s\n",
            error_code("cannot write standard output: %s"), strerror(err));
    return 2;
  }
  return status;
}
