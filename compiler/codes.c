/* codes.c: the stable code of every error, by the format of its message,
 * and of every warning.
 *
 * JSON and text diagnostics carry these codes, so that editors and CI can
 * tell one kind of error from another whatever its words.  The errors'
 * codes and formats are the rows of diagnostics.def, the warnings' those
 * of warnings.def.  The diagnostics tests check that every error printed
 * has a code. */
#include "cgc.h"

#include <string.h>

static const struct {
  const char *code, *format;
} errors[] = {
#define ERR(name, code, format) {code, format},
#include "diagnostics.def"
};

/* Unknown formats get E0000, which the diagnostics tests refuse.  At most
 * MAX_ERRORS errors are printed: a search through the table is enough. */
const char *error_code(const char *fmt) {
  for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
    if (!strcmp(errors[i].format, fmt))
      return errors[i].code;
  return "E0000";
}

/* The i-th format of `code` (from 0), or NULL past the last. */
const char *error_format(const char *code, int i) {
  for (size_t k = 0; k < sizeof errors / sizeof *errors; k++)
    if (!strcmp(errors[k].code, code) && i-- == 0)
      return errors[k].format;
  return NULL;
}

static const struct {
  const char *name, *code, *help;
} warnings[W_COUNT] = {
#define WARNING(e, name, code, help) [W_##e] = {name, code, help},
#include "warnings.def"
};

const char *warning_code(Warning w) { return warnings[w].code; }
const char *warning_name(Warning w) { return warnings[w].name; }
const char *warning_help(Warning w) { return warnings[w].help; }

bool warning_named(const char *name, Warning *w) {
  for (int i = 0; i < W_COUNT; i++)
    if (!strcmp(name, warnings[i].name)) {
      *w = (Warning)i;
      return true;
    }
  return false;
}
