/* ts_check.c: parses .cgraph files with the tree-sitter grammar
 * (editors/tree-sitter-cgraph/src/parser.c, linked in) and runs its
 * highlight query over them, as an editor would.  It fails on any ERROR or
 * MISSING node, and on a token the query leaves without the capture it
 * should have (a keyword not highlighted as one, a comment not as a
 * comment, ...) or captures under two names (editors disagree on which
 * one wins).  The query's text predicates (#match?, #eq?, #any-of? and
 * their not- forms) are evaluated here, as editors do; where several
 * patterns capture one node, the first pattern wins, as in tree-sitter's
 * own highlighter and Helix.
 *   ts_check [-v] [-c CORPUS]... [-q QUERY]... HIGHLIGHTS_SCM FILE...
 * With -v it prints each file's tree; each -c CORPUS (a file of test/corpus,
 * in `tree-sitter test`'s format) must parse to the trees it shows; each
 * -q QUERY (locals.scm, folds.scm) must compile for the grammar.
 * Exit status: 0, or 1 on a problem. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_cgraph(void);

static char *slurp(const char *path, uint32_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap)
      buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  buf[n] = 0;
  *len = (uint32_t)n;
  return buf;
}

/* The text of a node, in a buffer of the caller's. */
static const char *text_of(TSNode n, const char *src, char *buf, size_t size) {
  uint32_t lo = ts_node_start_byte(n), hi = ts_node_end_byte(n);
  size_t len = hi - lo < size - 1 ? hi - lo : size - 1;
  memcpy(buf, src + lo, len);
  buf[len] = 0;
  return buf;
}

static const TSNode *capture_node(const TSQueryMatch *m, uint32_t id) {
  for (uint16_t i = 0; i < m->capture_count; i++)
    if (m->captures[i].index == id)
      return &m->captures[i].node;
  return NULL;
}

/* Whether a match satisfies its pattern's text predicates. */
static bool predicates_hold(const TSQuery *q, const TSQueryMatch *m, const char *src) {
  uint32_t nsteps;
  const TSQueryPredicateStep *s = ts_query_predicates_for_pattern(q, m->pattern_index, &nsteps);
  for (uint32_t i = 0; i < nsteps;) {
    uint32_t end = i;
    while (end < nsteps && s[end].type != TSQueryPredicateStepTypeDone)
      end++;
    uint32_t len;
    const char *name = ts_query_string_value_for_id(q, s[i].value_id, &len);
    bool negate = !strncmp(name, "not-", 4);
    const char *op = negate ? name + 4 : name;
    const TSNode *node = end > i + 1 && s[i + 1].type == TSQueryPredicateStepTypeCapture
                             ? capture_node(m, s[i + 1].value_id)
                             : NULL;
    char text[512];
    bool holds = true;
    if (node) {
      text_of(*node, src, text, sizeof text);
      if (!strcmp(op, "match?") && end == i + 3) {
        regex_t re;
        const char *pat = ts_query_string_value_for_id(q, s[i + 2].value_id, &len);
        if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB)) {
          fprintf(stderr, "ts_check: the query's regular expression '%s' is not POSIX\n", pat);
          exit(1);
        }
        holds = regexec(&re, text, 0, NULL, 0) == 0;
        regfree(&re);
      } else if (!strcmp(op, "eq?") && end == i + 3) {
        const char *other;
        char buf[512];
        if (s[i + 2].type == TSQueryPredicateStepTypeCapture) {
          const TSNode *o = capture_node(m, s[i + 2].value_id);
          other = o ? text_of(*o, src, buf, sizeof buf) : "";
        } else {
          other = ts_query_string_value_for_id(q, s[i + 2].value_id, &len);
        }
        holds = !strcmp(text, other);
      } else if (!strcmp(op, "any-of?")) {
        holds = false;
        for (uint32_t j = i + 2; j < end; j++)
          holds |= !strcmp(text, ts_query_string_value_for_id(q, s[j].value_id, &len));
      } else {
        fprintf(stderr, "ts_check: the query's predicate #%s is not known here\n", name);
        exit(1);
      }
    }
    if (negate)
      holds = !holds;
    if (!holds)
      return false;
    i = end + 1;
  }
  return true;
}

/* The capture each node gets: the first pattern's that captures it. */
typedef struct {
  uint32_t start, end;
  TSSymbol symbol;
  uint32_t pattern;
  const char *name;
} Capture;

static Capture *caps;
static size_t ncaps, capcap;

static const char *capture_of(TSNode n) {
  uint32_t lo = ts_node_start_byte(n), hi = ts_node_end_byte(n);
  TSSymbol sym = ts_node_symbol(n);
  const char *best = NULL;
  uint32_t best_pattern = UINT32_MAX;
  for (size_t i = 0; i < ncaps; i++)
    if (caps[i].start == lo && caps[i].end == hi && caps[i].symbol == sym &&
        caps[i].pattern < best_pattern) {
      best = caps[i].name;
      best_pattern = caps[i].pattern;
    }
  return best;
}

/* The language's keywords, from its one list. */
static const char *const keywords[] = {
#define KEYWORD(token, spelling) spelling,
#define TYPE_NAME(type, spelling)
#include "keywords.def"
    NULL};

static bool is_keyword(const char *type) {
  for (int i = 0; keywords[i]; i++)
    if (!strcmp(type, keywords[i]))
      return true;
  return false;
}

static bool starts(const char *s, const char *prefix) {
  return s && !strncmp(s, prefix, strlen(prefix));
}

static int problems;
static size_t counts[256];

/* Checks a token's highlight against what it is. */
static void check_leaf(const char *file, TSNode n, const char *src) {
  const char *type = ts_node_type(n);
  /* Its highlight: its own capture, or the innermost around it. */
  const char *c = NULL;
  for (TSNode a = n; !c && !ts_node_is_null(a); a = ts_node_parent(a))
    c = capture_of(a);
  const char *want = NULL;
  if (!ts_node_is_named(n) && is_keyword(type) && !starts(c, "keyword") &&
      !starts(c, "function.builtin") && !starts(c, "property"))
    want = "keyword";
  else if (!strcmp(type, "comment") && !starts(c, "comment"))
    want = "comment";
  else if (!strcmp(type, "primitive_type") && !starts(c, "type"))
    want = "type";
  else if ((!strcmp(type, "integer") || !strcmp(type, "float")) && !starts(c, "number"))
    want = "number";
  else if (!ts_node_is_named(n) && !strcmp(type, "max") && !starts(c, "keyword"))
    want = "keyword";
  else if (!strcmp(type, "string") && !starts(c, "string"))
    want = "string";
  if (want) {
    char text[64];
    TSPoint p = ts_node_start_point(n);
    printf("FAIL: %s:%u:%u: '%s' (%s) is captured as %s, not @%s\n", file, p.row + 1,
           p.column + 1, text_of(n, src, text, sizeof text), type, c ? c : "nothing", want);
    problems++;
  }
}

static void walk(const char *file, TSNode n, const char *src, bool *bad) {
  if (!strcmp(ts_node_type(n), "ERROR") || ts_node_is_missing(n)) {
    TSPoint p = ts_node_start_point(n);
    char text[64];
    if (ts_node_is_missing(n)) {
      printf("FAIL: %s:%u:%u: MISSING %s\n", file, p.row + 1, p.column + 1, ts_node_type(n));
    } else {
      text_of(n, src, text, sizeof text);
      text[strcspn(text, "\r\n")] = 0;
      printf("FAIL: %s:%u:%u: ERROR at '%s'\n", file, p.row + 1, p.column + 1, text);
    }
    problems++;
    *bad = true;
    return;
  }
  uint32_t nc = ts_node_child_count(n);
  if (nc == 0 || !strcmp(ts_node_type(n), "string") || !strcmp(ts_node_type(n), "comment"))
    check_leaf(file, n, src);
  if (!strcmp(ts_node_type(n), "primitive_type"))
    return;
  for (uint32_t i = 0; i < nc; i++)
    walk(file, ts_node_child(n, i), src, bad);
}

/* Whitespace collapsed to single spaces, none after '(' or before ')'. */
static void squeeze(char *s) {
  char *o = s;
  bool space = false;
  for (char *p = s; *p; p++) {
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      space = o > s;
      continue;
    }
    if (space && *p != ')' && o[-1] != '(')
      *o++ = ' ';
    space = false;
    *o++ = *p;
  }
  *o = 0;
}

static bool rule_of(const char *line, char c) {
  size_t n = strspn(line, (char[]){c, 0});
  return n >= 3 && (line[n] == '\n' || line[n] == '\r' || line[n] == 0);
}

/* A corpus file in the tree-sitter CLI's format (`tree-sitter test`):
 * each test is a name between two lines of '=', the input, a line of '-',
 * and the expected tree.  Returns the number of failed tests. */
static int run_corpus(TSParser *parser, const char *path, int *ntests) {
  uint32_t len;
  char *text = slurp(path, &len);
  if (!text)
    return 1;
  int failed = 0;
  char *p = text;
  while (*p) {
    /* The header: ===, name, ===. */
    if (!rule_of(p, '=')) {
      p += strcspn(p, "\n");
      p += *p == '\n';
      continue;
    }
    p += strcspn(p, "\n") + 1;
    char *name = p;
    p += strcspn(p, "\n");
    if (*p)
      *p++ = 0;
    if (!rule_of(p, '='))
      break;
    p += strcspn(p, "\n");
    p += *p == '\n';
    /* The input, up to a line of '-'. */
    char *input = p, *input_end = NULL;
    while (*p && !rule_of(p, '-')) {
      p += strcspn(p, "\n");
      p += *p == '\n';
    }
    input_end = p;
    p += strcspn(p, "\n");
    p += *p == '\n';
    /* The expected tree, up to the next header. */
    char *expected = p;
    while (*p && !rule_of(p, '=')) {
      p += strcspn(p, "\n");
      p += *p == '\n';
    }
    char saved = *p;
    *p = 0;
    char *want = strdup(expected);
    *p = saved;
    squeeze(want);
    TSTree *tree = ts_parser_parse_string(parser, NULL, input, (uint32_t)(input_end - input));
    char *got = ts_node_string(ts_tree_root_node(tree));
    squeeze(got);
    (*ntests)++;
    if (strcmp(got, want)) {
      printf("FAIL: %s: %s:\n  expected %s\n  got      %s\n", path, name, want, got);
      failed++;
    }
    free(got);
    free(want);
    ts_tree_delete(tree);
  }
  free(text);
  return failed;
}

int main(int argc, char **argv) {
  const TSLanguage *lang = tree_sitter_cgraph();
  bool verbose = false;
  for (;;) {
    if (argc > 1 && !strcmp(argv[1], "-v")) {
      verbose = true;
      argv++, argc--;
    } else if (argc > 2 && !strcmp(argv[1], "-c")) {
      /* A corpus of trees the grammar must give. */
      TSParser *p = ts_parser_new();
      ts_parser_set_language(p, lang);
      int n = 0, failed = run_corpus(p, argv[2], &n);
      ts_parser_delete(p);
      printf("%s: %d tests, %d failed\n", argv[2], n, failed);
      if (failed || !n)
        return 1;
      argv += 2, argc -= 2;
    } else if (argc > 2 && !strcmp(argv[1], "-q")) {
      /* Another query (locals, folds): it must compile for this grammar. */
      uint32_t len, off;
      TSQueryError e;
      char *text = slurp(argv[2], &len);
      TSQuery *q = text ? ts_query_new(lang, text, len, &off, &e) : NULL;
      if (!q) {
        printf("FAIL: %s: the query does not compile (error %d at byte %u)\n", argv[2],
               text ? (int)e : -1, text ? off : 0);
        return 1;
      }
      ts_query_delete(q);
      free(text);
      argv += 2, argc -= 2;
    } else {
      break;
    }
  }
  if (argc < 3) {
    fprintf(stderr, "usage: ts_check [-v] [-c CORPUS]... [-q QUERY]... HIGHLIGHTS_SCM FILE...\n");
    return 2;
  }
  uint32_t qlen;
  char *qsrc = slurp(argv[1], &qlen);
  if (!qsrc)
    return 1;
  uint32_t err_offset;
  TSQueryError err;
  TSQuery *query = ts_query_new(lang, qsrc, qlen, &err_offset, &err);
  if (!query) {
    printf("FAIL: %s: the query does not compile (error %d at byte %u: '%.30s')\n", argv[1],
           (int)err, err_offset, qsrc + err_offset);
    return 1;
  }
  uint32_t ncapnames = ts_query_capture_count(query);
  TSParser *parser = ts_parser_new();
  ts_parser_set_language(parser, lang);
  TSQueryCursor *cursor = ts_query_cursor_new();
  size_t files = 0, lines = 0, bad_files = 0;
  for (int a = 2; a < argc; a++) {
    uint32_t len;
    char *src = slurp(argv[a], &len);
    if (!src) {
      problems++;
      continue;
    }
    for (uint32_t i = 0; i < len; i++)
      lines += src[i] == '\n';
    TSTree *tree = ts_parser_parse_string(parser, NULL, src, len);
    TSNode root = ts_tree_root_node(tree);
    if (verbose) {
      char *s = ts_node_string(root);
      printf("%s:\n%s\n", argv[a], s);
      free(s);
    }
    ncaps = 0;
    ts_query_cursor_exec(cursor, query, root);
    TSQueryMatch m;
    while (ts_query_cursor_next_match(cursor, &m)) {
      if (!predicates_hold(query, &m, src))
        continue;
      for (uint16_t i = 0; i < m.capture_count; i++) {
        if (ncaps == capcap)
          caps = realloc(caps, (capcap = capcap ? 2 * capcap : 1024) * sizeof *caps);
        uint32_t nl;
        TSNode n = m.captures[i].node;
        caps[ncaps++] = (Capture){ts_node_start_byte(n), ts_node_end_byte(n), ts_node_symbol(n),
                                  m.pattern_index,
                                  ts_query_capture_name_for_id(query, m.captures[i].index, &nl)};
        if (m.captures[i].index < 256)
          counts[m.captures[i].index]++;
      }
    }
    /* Two names for one node: Helix and Neovim would show it differently. */
    for (size_t i = 0; i < ncaps; i++)
      for (size_t j = i + 1; j < ncaps; j++)
        if (caps[i].start == caps[j].start && caps[i].end == caps[j].end &&
            caps[i].symbol == caps[j].symbol && strcmp(caps[i].name, caps[j].name)) {
          TSPoint p = {0, 0};
          uint32_t line = 1;
          for (uint32_t k = 0; k < caps[i].start; k++)
            if (src[k] == '\n')
              line++, p.column = 0;
            else
              p.column++;
          printf("FAIL: %s:%u:%u: captured both as @%s and as @%s\n", argv[a], line,
                 p.column + 1, caps[i].name, caps[j].name);
          problems++;
        }
    bool bad = false;
    walk(argv[a], root, src, &bad);
    bad_files += bad;
    files++;
    ts_tree_delete(tree);
    free(src);
  }
  printf("%zu files, %zu lines parsed; %zu with syntax errors\n", files, lines, bad_files);
  printf("captures:");
  for (uint32_t i = 0; i < ncapnames && i < 256; i++) {
    uint32_t nl;
    printf(" @%s %zu", ts_query_capture_name_for_id(query, i, &nl), counts[i]);
  }
  printf("\n");
  /* The query must capture each of these somewhere in a valid program. */
  static const char *const needed[] = {"comment", "keyword", "type.builtin", "number", "string",
                                       "function", "function.call", "operator", "label", NULL};
  for (int i = 0; needed[i]; i++) {
    size_t total = 0;
    for (uint32_t j = 0; j < ncapnames && j < 256; j++) {
      uint32_t nl;
      if (!strcmp(ts_query_capture_name_for_id(query, j, &nl), needed[i]))
        total += counts[j];
    }
    if (!total) {
      printf("FAIL: nothing is captured as @%s\n", needed[i]);
      problems++;
    }
  }
  printf("%d problems\n", problems);
  ts_query_cursor_delete(cursor);
  ts_query_delete(query);
  ts_parser_delete(parser);
  return problems ? 1 : 0;
}
