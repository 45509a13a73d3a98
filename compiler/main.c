/* main.c: the cgc command line. */
#include "cgc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: cgc [options] FILE.cgraph\n"
    "       cgc fmt [--check] FILE.cgraph|-...   (cgc fmt --help)\n"
    "       cgc lsp                              the language server, on stdin and stdout\n"
    "  -o OUT            output file: C into OUT.c (or .cc, .cpp, .cxx, .cu), its header\n"
    "                    beside it; default FILE_graph.c beside FILE.cgraph\n"
    "                    (--emit=dot: standard output without -o)\n"
    "  -H HEADER         header path (with --emit=c)\n"
    "  --emit=c|dot      C and header (default), or Graphviz DOT of every graph\n"
    "  --dot-details     with --emit=dot: each kernel node's launch configuration,\n"
    "                    and on each edge the buffer or scalar that made it (or 'written')\n"
    "  --check           parse and check only; write nothing\n"
    "  -I DIR            search DIR for include files\n"
    "  -D NAME=VALUE     override a top-level const\n"
    "  --depfile FILE    write a Makefile-style dependency file\n"
    "  --prefix=P        begin every name the C declares for a graph with P\n"
    "  --templates FILE  the companion CUDA file of template kernels (with --emit=c;\n"
    "                    default OUT_templates.cu, written only when a graph uses one)\n"
    "%s" /* -Wno-NAME and the warnings: print_usage */
    "                    (-WNAME turns it back on)\n"
    "  -Wall, -Wextra    every warning on, the default (-Wno-NAME still silences one)\n"
    "  -Werror           warnings are errors\n"
    "  --diagnostics-format=text|json\n"
    "                    diagnostics as text (default) or one JSON object a line\n"
    "  --diagnostics-output=stderr|stdout\n"
    "                    where diagnostics go (stderr by default)\n"
    "  --explain CODE    what the diagnostic of CODE (E0004, W0001) means, with an\n"
    "                    example, and exit\n"
    "  -h, --help        print this help and exit\n"
    "  --version         print the version and exit\n"
    "More: man cgc (doc/cgc.1), and the language reference, doc/language.md.\n";

/* --help: usage_text with the warnings of warnings.def, folded at 80
 * columns. */
static void print_usage(void) {
  char list[512];
  size_t n = 0, line = 0;
  n += (size_t)snprintf(list, sizeof list, "  -Wno-NAME         silence a warning:");
  line = n;
  for (int w = 0; w < W_COUNT; w++) {
    const char *name = warning_name((Warning)w);
    size_t need = 1 + strlen(name) + (w + 1 < W_COUNT);
    if (line + need > 80) {
      n += (size_t)snprintf(list + n, sizeof list - n, "\n                   ");
      line = 19;
    }
    n += (size_t)snprintf(list + n, sizeof list - n, " %s%s", name, w + 1 < W_COUNT ? "," : "");
    line += need;
  }
  snprintf(list + n, sizeof list - n, "\n");
  printf(usage_text, list);
}

/* "a, b and c": the warnings' names, for a message. */
static void warning_list(char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (int w = 0; w < W_COUNT && n < size; w++)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", w ? (w + 1 < W_COUNT ? ", " : " and ") : "",
                          warning_name((Warning)w));
}

/* A usage error: text on stderr, or, after --diagnostics-format=json, a
 * JSON diagnostic (without position) where diagnostics go. */
static int usage_error(bool json, bool to_stdout, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int usage_error(bool json, bool to_stdout, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (json) {
    Diag *d = diag_new();
    diag_set_json(d, true);
    diag_set_output(d, to_stdout ? stdout : stderr);
    verror_at(d, span_at(NO_POS), fmt, ap);
    diag_flush(d);
    diag_free(d);
    va_end(ap);
    return 2;
  }
  char *msg;
  if (vasprintf(&msg, fmt, ap) < 0)
    msg = NULL;
  va_end(ap);
  fprintf(stderr, "cgc: error[%s]: ", error_code(fmt));
  fput_escaped(stderr, msg ? msg : fmt);
  fputs("\n(cgc --help lists the options)\n", stderr);
  free(msg);
  return 2;
}

/* An option that names one thing (-o, -H, --depfile, --templates,
 * --prefix): *slot takes val, or, given already, the usage error E0248
 * naming both values goes into *status and this returns false.  Which of
 * two a build's flags meant is not for cgc to guess. */
static bool once(bool json, bool to_stdout, const char *option, const char **slot,
                 const char *val, int *status) {
  if (*slot) {
    *status = usage_error(json, to_stdout, "%s is given twice ('%s', then '%s')", option, *slot,
                          val);
    return false;
  }
  *slot = val;
  return true;
}

/* Parses VALUE of -D NAME=VALUE, an integer literal with an optional sign
 * and K, M or G suffix, into *out: 1, or 0 when it is no such literal, or
 * -1 when it is one but does not fit in 64 bits.  The magnitude is built
 * unsigned so that INT64_MIN, whose magnitude INT64_MAX cannot hold, fits. */
static int parse_define_value(const char *s, int64_t *out) {
  bool neg = *s == '-';
  if (neg || *s == '+')
    s++;
  int base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    base = 16, s += 2;
  if (!*s)
    return 0;
  uint64_t v = 0;
  bool overflow = false;
  const char *digits = s;
  for (; *s; s++) {
    int c = (unsigned char)*s, d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f')
      d = (c | 0x20) - 'a' + 10;
    else
      break;
    overflow |=
        __builtin_mul_overflow(v, (uint64_t)base, &v) || __builtin_add_overflow(v, (uint64_t)d, &v);
  }
  if (s == digits)
    return 0;
  if (*s == 'K' || *s == 'M' || *s == 'G') {
    int shift = *s == 'K' ? 10 : *s == 'M' ? 20 : 30;
    overflow |= __builtin_mul_overflow(v, (uint64_t)1 << shift, &v);
    s++;
  }
  if (*s)
    return 0;
  if (overflow || v > (uint64_t)INT64_MAX + neg)
    return -1;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 1;
}

static bool valid_name(const char *s, size_t n) {
  if (!n || n > MAX_IDENT_LEN || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z')))
      return false;
  return true;
}

/* A name in a depfile: Make reads a space, '#' and '\\' escaped and '$'
 * doubled, but has no way to write a line break. */
static bool write_dep_path(Diag *d, FILE *f, const char *s) {
  if (strpbrk(s, "\n\r")) {
    error_at(d, NO_POS,
             "a depfile cannot name '%s': Make has no way to write a line break in a file name", s);
    return false;
  }
  for (; *s; s++) {
    if (*s == ' ' || *s == '#' || *s == '\\')
      fputc('\\', f);
    if (*s == '$')
      fputc('$', f);
    fputc(*s, f);
  }
  return true;
}

static bool write_depfile(Compiler *c, FILE *f, const char *target) {
  if (!write_dep_path(c->diag, f, target))
    return false;
  fputc(':', f);
  for (size_t i = 0; i < c->files.n; i++) {
    const Source *s = source_get(c->diag, c->files.v[i]);
    fputs(" \\\n  ", f);
    if (!write_dep_path(c->diag, f, s->realpath ? s->realpath : s->path))
      return false;
  }
  for (size_t i = 0; i < c->deps.n; i++) { /* modules and template headers */
    fputs(" \\\n  ", f);
    if (!write_dep_path(c->diag, f, c->deps.v[i]))
      return false;
  }
  fputc('\n', f);
  return true;
}

static const char *const c_sources[] = {".c", ".cpp", ".cc", ".cxx", ".cu"};

/* Whether `out` names a file the C can go into: one whose file name has
 * no extension, or one of c_sources (out.h would get C, and its header
 * out.h.h). */
static bool c_source_name(const char *out) {
  const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base)
    return true;
  for (size_t i = 0; i < sizeof c_sources / sizeof *c_sources; i++)
    if (!strcmp(dot, c_sources[i]))
      return true;
  return false;
}

/* OUT.c's header is OUT.h unless -H names another, and so is that of
 * OUT.cpp, OUT.cc, OUT.cxx (C++ files that hold the same C) and OUT.cu;
 * its companion CUDA file OUT_templates.cu unless --templates names
 * another: the given path, or OUT without its extension and `suffix`
 * after it. */
static char *beside(const char *out, const char *given, const char *suffix) {
  size_t n = strlen(out), stem = n, m = strlen(suffix) + 1;
  if (given)
    return strcpy(xrealloc(NULL, strlen(given) + 1), given);
  for (size_t i = 0; i < sizeof c_sources / sizeof *c_sources; i++) {
    size_t k = strlen(c_sources[i]);
    if (n > k && !strcmp(out + n - k, c_sources[i]))
      stem = n - k;
  }
  char *h = xrealloc(NULL, stem + m);
  snprintf(h, stem + m, "%.*s%s", (int)stem, out, suffix);
  return h;
}

/* Every output of the run, or none: the C and its header (hpath) and the
 * companion CUDA file of template kernels (cupath, or NULL), or the DOT
 * (hpath NULL), then the depfile. */
static bool write_outputs(Compiler *c, const Program *p, const char *input, const char *out,
                          const char *hpath, const char *cupath, const char *depfile,
                          bool dot_details) {
  Outputs os = {.diag = c->diag};
  /* -o goes in last: a C file never stands beside an old header. */
  FILE *f = output_add(&os, out);
  FILE *h = f && hpath ? output_add(&os, hpath) : NULL;
  FILE *cu = h && cupath ? output_add(&os, cupath) : NULL;
  FILE *d = f && (h || !hpath) && (cu || !cupath) && depfile ? output_add(&os, depfile) : NULL;
  if (!f || (hpath && !h) || (cupath && !cu) || (depfile && !d)) {
    outputs_abort(&os);
    return false;
  }
  if (hpath)
    emit_c(f, h, c, p, input, hpath);
  else
    emit_dot(f, p, dot_details);
  if (cu)
    emit_templates(cu, c, p, input, hpath);
  if (d && !write_depfile(c, d, out)) {
    outputs_abort(&os);
    return false;
  }
  return outputs_commit(&os);
}

/* What went to standard output (--help, --version) must all get there. */
static int stdout_status(void) {
  int err = flush_stdout();
  if (!err)
    return 0;
  fprintf(stderr, "cgc: error[%s]: cannot write standard output: %s\n",
          error_code("cannot write standard output: %s"), strerror(err));
  return 2;
}

/* The outputs, each with what names it in a message. */
typedef struct Named {
  const char *what;
  const char *path;
} Named;

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "fmt"))
    return cgc_fmt(argc - 2, argv + 2);
  if (argc > 1 && !strcmp(argv[1], "lsp"))
    return cgc_lsp(argc - 2, argv + 2);
  const char *input = NULL, *out = NULL, *header = NULL, *depfile = NULL, *prefix = NULL;
  const char *templates = NULL;
  char *hpath = NULL, *cupath = NULL, *default_out = NULL;
  bool check_only = false, emit_dot_mode = false, json = false, werror = false;
  bool diag_stdout = false, dot_details = false;
  int warning_on[W_COUNT]; /* -WNAME 1, -Wno-NAME 0, else -1: the last says */
  for (int w = 0; w < W_COUNT; w++)
    warning_on[w] = -1;
  const char **incs = xrealloc(NULL, (size_t)argc * sizeof *incs);
  Define *defs = xrealloc(NULL, (size_t)argc * sizeof *defs);
  const char **def_text = xrealloc(NULL, (size_t)argc * sizeof *def_text); /* each VALUE */
  int ninc = 0, ndef = 0, status = 0;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = NULL;
#define TAKE(flag)                                                                                 \
  (!strcmp(a, flag)                                                                                \
       ? (i + 1 < argc                                                                             \
              ? (val = argv[++i], true)                                                            \
              : (status = usage_error(json, diag_stdout, "%s needs a value", flag), false))        \
       : (!strncmp(a, flag, strlen(flag)) && strlen(flag) == 2 ? (val = a + 2, true) : false))
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      print_usage();
      goto done;
    } else if (!strncmp(a, "--explain=", 10) || !strcmp(a, "--explain")) {
      const char *code = a[9] ? a + 10 : i + 1 < argc ? argv[++i] : NULL;
      if (!code)
        status = usage_error(json, diag_stdout, "%s needs a value", a);
      else if (!explain_code(code, stdout))
        status = usage_error(json, diag_stdout,
                             "no diagnostic has the code '%s' (the codes are listed in "
                             "doc/language.md, section 19.1)",
                             code);
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
      status = usage_error(json, diag_stdout, "unknown diagnostics format '%s' (use text or json)",
                           a + 21);
      goto done;
    } else if (!strcmp(a, "--diagnostics-output=stdout")) {
      diag_stdout = true;
    } else if (!strcmp(a, "--diagnostics-output=stderr")) {
      diag_stdout = false;
    } else if (!strncmp(a, "--diagnostics-output=", 21)) {
      status = usage_error(json, diag_stdout,
                           "unknown diagnostics output '%s' (use stderr or stdout)", a + 21);
      goto done;
    } else if (!strcmp(a, "-Werror")) {
      werror = true;
    } else if (!strcmp(a, "-Wall") || !strcmp(a, "-Wextra")) {
      /* Every warning is on by default; as in C compilers, a -Wno-NAME
       * wins over them wherever it stands. */
    } else if (!strncmp(a, "-W", 2) && a[2]) {
      bool no = !strncmp(a + 2, "no-", 3);
      Warning w;
      if (!warning_named(a + (no ? 5 : 2), &w)) {
        char names[256];
        warning_list(names, sizeof names);
        status = usage_error(json, diag_stdout, "unknown warning '%s' (the warnings are %s)",
                             a + (no ? 5 : 2), names);
        goto done;
      }
      warning_on[w] = !no;
    } else if (!strcmp(a, "--dot-details")) {
      dot_details = true;
    } else if (!strcmp(a, "--emit=dot")) {
      emit_dot_mode = true;
    } else if (!strcmp(a, "--emit=c")) {
      emit_dot_mode = false;
    } else if (!strncmp(a, "--emit=", 7)) {
      status = usage_error(json, diag_stdout,
                           "unknown output kind '%s' (use --emit=c or --emit=dot)", a + 7);
      goto done;
    } else if (!strncmp(a, "--prefix=", 9)) {
      if (!once(json, diag_stdout, "--prefix", &prefix, a + 9, &status))
        goto done;
      if (!valid_name(prefix, strlen(prefix)) || strlen(prefix) > MAX_PREFIX_LEN) {
        status = usage_error(json, diag_stdout,
                             "--prefix takes the start of a C name, at most %d bytes of letters, "
                             "digits and '_' (not '%s')",
                             MAX_PREFIX_LEN, prefix);
        goto done;
      }
    } else if (!strncmp(a, "--depfile=", 10)) {
      if (!once(json, diag_stdout, "--depfile", &depfile, a + 10, &status))
        goto done;
    } else if (!strcmp(a, "--depfile")) {
      if (i + 1 == argc) {
        status = usage_error(json, diag_stdout, "%s needs a value", a);
        goto done;
      }
      if (!once(json, diag_stdout, "--depfile", &depfile, argv[++i], &status))
        goto done;
    } else if (!strncmp(a, "--templates=", 12)) {
      if (!once(json, diag_stdout, "--templates", &templates, a + 12, &status))
        goto done;
    } else if (!strcmp(a, "--templates")) {
      if (i + 1 == argc) {
        status = usage_error(json, diag_stdout, "%s needs a value", a);
        goto done;
      }
      if (!once(json, diag_stdout, "--templates", &templates, argv[++i], &status))
        goto done;
    } else if (TAKE("-o")) {
      if (!once(json, diag_stdout, "-o", &out, val, &status))
        goto done;
    } else if (TAKE("-H")) {
      if (!once(json, diag_stdout, "-H", &header, val, &status))
        goto done;
    } else if (TAKE("-I")) {
      incs[ninc++] = val;
    } else if (TAKE("-D")) {
      const char *eq = strchr(val, '=');
      int64_t v;
      if (!eq || !valid_name(val, (size_t)(eq - val))) {
        status = usage_error(json, diag_stdout, "-D takes NAME=VALUE, not '%s'", val);
        goto done;
      }
      int parsed = parse_define_value(eq + 1, &v);
      if (parsed <= 0) {
        status = usage_error(json, diag_stdout,
                             parsed ? "-D %s: the value does not fit in 64 bits"
                                    : "-D %s: the value must be an integer",
                             val);
        goto done;
      }
      ((char *)eq)[0] = 0; /* NAME ends here; argv is ours to edit */
      /* A name given again must have the same value: which of two a
       * build's -D flags meant is not for cgc to guess. */
      int d = 0;
      while (d < ndef && strcmp(defs[d].name, val))
        d++;
      if (d < ndef && defs[d].value != v) {
        status = usage_error(json, diag_stdout,
                             "-D %s is given twice, with different values ('%s', then '%s')", val,
                             def_text[d], eq + 1);
        goto done;
      }
      defs[d] = (Define){.name = val, .value = v};
      def_text[d] = eq + 1;
      ndef += d == ndef;
    } else if (status) {
      goto done;
    } else if (a[0] == '-' && a[1]) {
      status = usage_error(json, diag_stdout, "unknown option '%s'", a);
      goto done;
    } else if (input) {
      status = usage_error(json, diag_stdout, "more than one input file ('%s')", a);
      goto done;
    } else {
      input = a;
    }
#undef TAKE
    if (status)
      goto done;
  }
  if (!input) {
    status = usage_error(json, diag_stdout, "no input file");
    goto done;
  }
  /* Without -o, FILE.cgraph's C goes beside it as FILE_graph.c. */
  if (!check_only && !emit_dot_mode && !out) {
    const char *base = strrchr(input, '/') ? strrchr(input, '/') + 1 : input;
    size_t n = strlen(input), stem = n;
    if (n - (size_t)(base - input) > 7 && !strcmp(input + n - 7, ".cgraph"))
      stem = n - 7;
    default_out = xrealloc(NULL, stem + sizeof "_graph.c");
    snprintf(default_out, stem + sizeof "_graph.c", "%.*s_graph.c", (int)stem, input);
    out = default_out;
  }
  /* The C goes into a C, C++ or CUDA source file, never a header. */
  if (!check_only && !emit_dot_mode && !c_source_name(out)) {
    status = usage_error(json, diag_stdout,
                         "-o '%s': C output goes into a .c, .cc, .cpp, .cxx or .cu file, "
                         "not a '%s' file (its header is written beside it; -H names another)",
                         out, strrchr(out, '.'));
    goto done;
  }
  if (header && emit_dot_mode) {
    status = usage_error(json, diag_stdout, "-H applies to --emit=c only");
    goto done;
  }
  if (templates && emit_dot_mode) {
    status = usage_error(json, diag_stdout, "--templates applies to --emit=c only");
    goto done;
  }
  if (diag_stdout && emit_dot_mode && !out && !check_only) {
    status = usage_error(json, diag_stdout,
                         "--emit=dot without -o writes the DOT to standard output; "
                         "diagnostics cannot go there too");
    goto done;
  }
  if (depfile && !out) {
    status = usage_error(json, diag_stdout, "--depfile needs -o to name the target");
    goto done;
  }
  if (check_only)
    out = header = depfile = templates = NULL;
  if (!emit_dot_mode && out) {
    hpath = beside(out, header, ".h");
    cupath = beside(out, templates, "_templates.cu");
  }
  /* Each output is a file of its own, and none is the input.  The
   * companion CUDA file is one when --templates names it; otherwise only
   * when a graph uses a template kernel, which is known after checking. */
  Named files[] = {{"-o", out},
                   {header ? "-H" : "the header", hpath},
                   {"--depfile", depfile},
                   {templates ? "--templates" : "the companion CUDA file", templates ? cupath : NULL},
                   {"the input", input}};
  size_t nfiles = sizeof files / sizeof *files, noutputs = nfiles - 1;
  for (size_t i = 0; i < noutputs; i++)
    if (files[i].path && !*files[i].path) {
      status =
          usage_error(json, diag_stdout, "%s needs a file name", i == 1 ? "-H" : files[i].what);
      goto done;
    }
  /* The C includes the header by its file name. */
  const char *flaw = !hpath                ? NULL
                     : strrchr(hpath, '/') ? include_name_flaw(strrchr(hpath, '/') + 1)
                                           : include_name_flaw(hpath);
  if (flaw) {
    status =
        usage_error(json, diag_stdout,
                    "the header '%s' cannot be named in #include \"...\" (it has %s)", hpath, flaw);
    goto done;
  }
  for (size_t i = 0; i < nfiles; i++)
    for (size_t j = i + 1; j < nfiles; j++)
      if (files[i].path && files[j].path && same_file(files[i].path, files[j].path)) {
        status = usage_error(json, diag_stdout, "%s '%s' and %s '%s' are the same file",
                             files[i].what, files[i].path, files[j].what, files[j].path);
        goto done;
      }
  if (hpath && header_hides_runtime(hpath)) {
    status =
        usage_error(json, diag_stdout,
                    "the header '%s' would include itself in place of the runtime's " CGRT_HEADER
                    "; name it otherwise (-o or -H)",
                    hpath);
    goto done;
  }

  Compiler c = {.include_dirs = incs, .ninclude_dirs = ninc, .defines = defs,
                .ndefines = ndef, .prefix = prefix};
  compiler_init(&c);
  diag_set_color(c.diag, isatty(diag_stdout ? 1 : 2) && !getenv("NO_COLOR"));
  diag_set_json(c.diag, json);
  if (diag_stdout)
    diag_set_output(c.diag, stdout);
  diag_set_werror(c.diag, werror);
  for (int w = 0; w < W_COUNT; w++)
    if (warning_on[w] >= 0)
      diag_enable_warning(c.diag, (Warning)w, warning_on[w]);
  if (!parse_program(&c, input)) {
    status = 2;
  } else {
    Program *p = analyze_program(&c);
    if (cupath && !templates && !diag_errors(c.diag) && uses_templates(&c, p)) {
      files[3].path = cupath; /* the companion is written after all */
      for (size_t j = 0; j < nfiles && !status; j++)
        if (j != 3 && files[j].path && same_file(files[j].path, cupath)) {
          error_at(c.diag, NO_POS, "%s '%s' and %s '%s' are the same file", files[j].what,
                   files[j].path, files[3].what, cupath);
          status = 2;
        }
    }
    /* Nor is any output a file the program includes, or a module or
     * header it reads. */
    size_t nread = c.files.n + c.deps.n;
    for (size_t i = 1; i < nread && !diag_errors(c.diag); i++)
      for (size_t j = 0; j < noutputs; j++) {
        const char *path = i < c.files.n ? source_get(c.diag, c.files.v[i])->path
                                         : c.deps.v[i - c.files.n];
        if (files[j].path && same_file(files[j].path, path)) {
          error_at(c.diag, NO_POS, "%s '%s' is '%s', a file the program reads", files[j].what,
                   files[j].path, path);
          status = 2;
        }
      }
    if (!status && !diag_errors(c.diag))
      warn_program(&c, p); /* -Werror makes them errors */
    if (!status && diag_errors(c.diag))
      status = 1;
    if (status) {
      /* nothing is written */
    } else if (emit_dot_mode && !out && !check_only) {
      emit_dot(stdout, p, dot_details);
      int err = flush_stdout();
      if (err) {
        error_at(c.diag, NO_POS, "cannot write standard output: %s", strerror(err));
        status = 2;
      }
    } else if (out) {
      status = write_outputs(&c, p, input, out, hpath, files[3].path, depfile, dot_details) ? 0 : 2;
    }
    program_free(p);
  }
  compiler_free(&c);
done:
  if (!status)
    status = stdout_status();
  free(default_out);
  free(hpath);
  free(cupath);
  free(incs);
  free(defs);
  free(def_text);
  return status;
}
