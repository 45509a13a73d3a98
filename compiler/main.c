/* main.c: the cgc command line. */
#include "cgc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: cgc [options] FILE.cgraph\n"
    "       cgc fmt [--check] FILE.cgraph...   (cgc fmt --help)\n"
    "  -o OUT            output file (--emit=dot: standard output without -o)\n"
    "  -H HEADER         header path (with --emit=c)\n"
    "  --emit=c|dot      C and header (default), or Graphviz DOT of every graph\n"
    "  --check           parse and check only; write nothing\n"
    "  -I DIR            search DIR for include files\n"
    "  -D NAME=VALUE     override a top-level const\n"
    "  --depfile FILE    write a Makefile-style dependency file\n"
    "  --diagnostics-format=text|json\n"
    "                    diagnostics as text (default) or one JSON object a line\n"
    "  --help            print this help and exit\n"
    "  --version         print the version and exit\n";

static int usage_error(const char *fmt, const char *arg) {
  fputs("cgc: error: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\n(cgc --help lists the options)\n", stderr);
  return 2;
}

/* Parses VALUE of -D NAME=VALUE as an integer literal with an optional
 * sign and K, M or G suffix. */
static bool parse_define_value(const char *s, int64_t *out) {
  bool neg = *s == '-';
  if (neg || *s == '+')
    s++;
  int base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    base = 16, s += 2;
  if (!*s)
    return false;
  int64_t v = 0;
  for (; *s; s++) {
    int c = (unsigned char)*s, d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
      d = (c | 0x20) - 'a' + 10;
    else
      break;
    if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v))
      return false;
  }
  int64_t scale = 1;
  if (*s == 'K' || *s == 'M' || *s == 'G') {
    scale = (int64_t)1 << (*s == 'K' ? 10 : *s == 'M' ? 20 : 30);
    s++;
  }
  if (*s || __builtin_mul_overflow(v, scale, &v))
    return false;
  *out = neg ? -v : v;
  return true;
}

static bool valid_name(const char *s, size_t n) {
  if (!n || n > MAX_IDENT_LEN || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z')))
      return false;
  return true;
}

static void write_dep_path(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == ' ' || *s == '#' || *s == '\\')
      fputc('\\', f);
    if (*s == '$')
      fputc('$', f);
    fputc(*s, f);
  }
}

static bool write_depfile(Compiler *c, const char *depfile, const char *target) {
  Output o;
  if (!output_open(&o, depfile))
    return false;
  write_dep_path(o.f, target);
  fputc(':', o.f);
  for (size_t i = 0; i < c->files.n; i++) {
    const Source *s = source_get(c->diag, c->files.v[i]);
    fputs(" \\\n  ", o.f);
    write_dep_path(o.f, s->realpath ? s->realpath : s->path);
  }
  fputc('\n', o.f);
  return output_commit(&o);
}

/* OUT.c's header is OUT.h unless -H names another. */
static char *header_path(const char *out, const char *header) {
  size_t n = strlen(out);
  if (header)
    return strcpy(xrealloc(NULL, strlen(header) + 1), header);
  char *h = xrealloc(NULL, n + 3);
  if (n > 2 && !strcmp(out + n - 2, ".c"))
    snprintf(h, n + 3, "%.*s.h", (int)(n - 2), out);
  else
    snprintf(h, n + 3, "%s.h", out);
  return h;
}

static bool write_c(Compiler *c, const Program *p, const char *input, const char *out,
                    const char *header) {
  char *hpath = header_path(out, header);
  Output oc, oh;
  bool ok = false;
  if (output_open(&oh, hpath)) {
    if (output_open(&oc, out)) {
      emit_c(oc.f, oh.f, c, p, input, hpath);
      /* The header goes in first: a C file never stands beside an old one. */
      ok = output_commit(&oh);
      if (ok)
        ok = output_commit(&oc);
      else
        output_abort(&oc);
    } else {
      output_abort(&oh);
    }
  }
  free(hpath);
  return ok;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "fmt"))
    return cgc_fmt(argc - 2, argv + 2);
  const char *input = NULL, *out = NULL, *header = NULL, *depfile = NULL;
  bool check_only = false, emit_dot_mode = false, json = false;
  const char **incs = xrealloc(NULL, (size_t)argc * sizeof *incs);
  Define *defs = xrealloc(NULL, (size_t)argc * sizeof *defs);
  int ninc = 0, ndef = 0, status = 0;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = NULL;
#define TAKE(flag)                                                             \
  (!strcmp(a, flag) ? (i + 1 < argc ? (val = argv[++i], true)                  \
                                    : (status = usage_error("%s needs a value", flag), false)) \
   : (!strncmp(a, flag, strlen(flag)) && strlen(flag) == 2 ? (val = a + 2, true) : false))
    if (!strcmp(a, "--help")) {
      fputs(usage_text, stdout);
      goto done;
    } else if (!strcmp(a, "--version")) {
      printf("cgc %s\n", CGC_VERSION);
      goto done;
    } else if (!strcmp(a, "--check")) {
      check_only = true;
    } else if (!strcmp(a, "--diagnostics-format=json")) {
      json = true;
    } else if (!strcmp(a, "--diagnostics-format=text")) {
      json = false;
    } else if (!strncmp(a, "--diagnostics-format=", 21)) {
      status = usage_error("unknown diagnostics format '%s' (use text or json)", a + 21);
      goto done;
    } else if (!strcmp(a, "--emit=dot")) {
      emit_dot_mode = true;
    } else if (!strcmp(a, "--emit=c")) {
      emit_dot_mode = false;
    } else if (!strncmp(a, "--emit=", 7)) {
      status = usage_error("unknown output kind '%s' (use --emit=c or --emit=dot)", a + 7);
      goto done;
    } else if (!strncmp(a, "--depfile=", 10)) {
      depfile = a + 10;
    } else if (!strcmp(a, "--depfile")) {
      if (i + 1 == argc) {
        status = usage_error("%s needs a value", a);
        goto done;
      }
      depfile = argv[++i];
    } else if (TAKE("-o")) {
      out = val;
    } else if (TAKE("-H")) {
      header = val;
    } else if (TAKE("-I")) {
      incs[ninc++] = val;
    } else if (TAKE("-D")) {
      const char *eq = strchr(val, '=');
      int64_t v;
      if (!eq || !valid_name(val, (size_t)(eq - val))) {
        status = usage_error("-D takes NAME=VALUE, not '%s'", val);
        goto done;
      }
      if (!parse_define_value(eq + 1, &v)) {
        status = usage_error("-D %s: the value must be an integer", val);
        goto done;
      }
      defs[ndef++] = (Define){.name = val, .value = v};
      ((char *)eq)[0] = 0; /* NAME ends here; argv is ours to edit */
    } else if (status) {
      goto done;
    } else if (a[0] == '-' && a[1]) {
      status = usage_error("unknown option '%s'", a);
      goto done;
    } else if (input) {
      status = usage_error("more than one input file ('%s')", a);
      goto done;
    } else {
      input = a;
    }
#undef TAKE
    if (status)
      goto done;
  }
  if (!input) {
    status = usage_error("%s", "no input file");
    goto done;
  }
  if (!check_only && !emit_dot_mode && !out) {
    status = usage_error("%s", "C output needs -o OUT.c (the header goes beside it)");
    goto done;
  }
  if (header && emit_dot_mode) {
    status = usage_error("%s", "-H applies to --emit=c only");
    goto done;
  }
  if (depfile && !out) {
    status = usage_error("%s", "--depfile needs -o to name the target");
    goto done;
  }
  if (!check_only && !emit_dot_mode) {
    char *hpath = header_path(out, header);
    if (header_hides_runtime(hpath))
      status = usage_error("the header '%s' would include itself in place of the runtime's "
                           CGRT_HEADER "; name it otherwise (-o or -H)", hpath);
    free(hpath);
    if (status)
      goto done;
  }

  Compiler c = {.include_dirs = incs, .ninclude_dirs = ninc, .defines = defs,
                .ndefines = ndef};
  compiler_init(&c);
  diag_set_color(c.diag, isatty(2) && !getenv("NO_COLOR"));
  diag_set_json(c.diag, json);
  if (!parse_program(&c, input)) {
    status = 2;
  } else {
    Program *p = check_program(&c);
    for (int i = 0; i < ndef && !diag_errors(c.diag); i++)
      if (!defs[i].used)
        warning_at(c.diag, (Pos){.file = -1}, "-D %s: the program has no top-level constant '%s'",
                   defs[i].name, defs[i].name);
    for (size_t i = 0; i < p->graphs.n && !diag_errors(c.diag); i++)
      order_graph(&c, p->graphs.v[i]);
    if (diag_errors(c.diag)) {
      status = 1;
    } else if (!check_only && !emit_dot_mode) {
      status = write_c(&c, p, input, out, header) ? 0 : 2;
      if (!status && depfile && !write_depfile(&c, depfile, out))
        status = 2;
    } else if (!check_only) {
      if (!out) {
        emit_dot(stdout, p);
        if (fflush(stdout) != 0)
          status = 2;
      } else {
        Output o;
        if (output_open(&o, out)) {
          emit_dot(o.f, p);
          status = output_commit(&o) ? 0 : 2;
        } else {
          status = 2;
        }
      }
      if (!status && depfile && !write_depfile(&c, depfile, out))
        status = 2;
    }
    program_free(p);
  }
  compiler_free(&c);
done:
  free(incs);
  free(defs);
  return status;
}
