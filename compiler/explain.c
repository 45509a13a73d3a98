/* explain.c: cgc --explain CODE, from the rows of explain.def and the
 * message formats of diagnostics.def. */
#include "cgc.h"

#include <string.h>

enum {
#define TOPIC(name, section, text) TOPIC_##name,
#include "explain.def"
  TOPIC_COUNT
};

static const struct {
  const char *section, *text;
} topics[TOPIC_COUNT] = {
#define TOPIC(name, section, text) [TOPIC_##name] = {section, text},
#include "explain.def"
};

static const struct {
  const char *code;
  int topic;
  const char *args, *program, *says;
} rows[] = {
#define EXPLAIN(code, topic, args, program, says) {code, TOPIC_##topic, args, program, says},
#include "explain.def"
};

/* A message format with its conversions as "...": "undefined name '...'". */
static void put_format(FILE *out, const char *fmt) {
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') {
      fputc(*p, out);
    } else if (p[1] == '%') {
      fputc('%', out);
      p++;
    } else {
      p++;
      while (*p && strchr("0123456789.l", *p))
        p++;
      fputs("...", out);
      if (!*p)
        break;
    }
  }
  fputc('\n', out);
}

/* Text folded at 76 columns, each line after `indent`. */
static void put_folded(FILE *out, const char *text, const char *indent) {
  const char *p = text;
  while (*p) {
    size_t n = strlen(p), cut = n;
    if (n > 76) {
      cut = 76;
      while (cut > 0 && p[cut] != ' ')
        cut--;
      if (!cut)
        cut = 76;
    }
    fprintf(out, "%s%.*s\n", indent, (int)cut, p);
    p += cut;
    while (*p == ' ')
      p++;
  }
}

/* Each line of text after `indent`. */
static void put_indented(FILE *out, const char *text, const char *indent) {
  while (*text) {
    const char *nl = strchr(text, '\n');
    size_t n = nl ? (size_t)(nl - text) : strlen(text);
    fprintf(out, "%s%.*s\n", n ? indent : "", (int)n, text);
    text += n + (nl != NULL);
  }
}

bool explain_code(const char *code, FILE *out) {
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    if (strcmp(rows[i].code, code))
      continue;
    if (code[0] == 'W') {
      for (int w = 0; w < W_COUNT; w++)
        if (!strcmp(warning_code((Warning)w), code))
          fprintf(out, "warning[%s]: -W%s\n", code, warning_name((Warning)w));
    } else {
      const char *fmt;
      for (int k = 0; (fmt = error_format(code, k)); k++) {
        fprintf(out, "error[%s]: ", code);
        put_format(out, fmt);
      }
    }
    fputc('\n', out);
    put_folded(out, topics[rows[i].topic].text, "");
    fprintf(out, "(doc/language.md, section %s)\n\n", topics[rows[i].topic].section);
    if (*rows[i].program) {
      fprintf(out, "For example, cgc %s%sexample.cgraph of\n\n", rows[i].args,
              *rows[i].args ? " " : "");
      put_indented(out, rows[i].program, "    ");
      fputs("\nsays\n\n", out);
    } else {
      fputs("For example,\n\n", out);
      put_folded(out, rows[i].args, "    ");
      fputs("\ngives a message such as\n\n", out);
    }
    put_indented(out, rows[i].says, "    ");
    return true;
  }
  return false;
}
