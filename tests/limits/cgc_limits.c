/* cgc_limits: cgc with the limits on the whole program made small, so that
 * each limit is reached by a small input (tests/limits/).  It checks and
 * orders like cgc and writes nothing; each case runs through run_case.sh,
 * its limits in its first line ("// cgc-args: --max-edges=20"), and must
 * end in a diagnostic: it exits 1 when it printed any, error or warning.
 *   cgc_limits [--max-nodes=N] [--max-statements=N] [--max-accesses=N]
 *              [--max-edges=N] [--max-search-steps=N] [--max-module-bytes=N]
 *              [--max-source-bytes=N]
 *              [--emit=dot] [--check] [--diagnostics-format=json] [-o IGNORED] FILE */
#include "cgc.h"

#include <stdlib.h>
#include <string.h>

static bool limit_arg(const char *a, const char *flag, int64_t *out) {
  size_t n = strlen(flag);
  if (strncmp(a, flag, n) || a[n] != '=')
    return false;
  *out = strtoll(a + n + 1, NULL, 10);
  return true;
}

int main(int argc, char **argv) {
  Compiler c = {0};
  const char *input = NULL;
  bool json = false;
  int64_t max_source_bytes = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (limit_arg(a, "--max-nodes", &c.max_nodes) ||
        limit_arg(a, "--max-statements", &c.max_statements) ||
        limit_arg(a, "--max-accesses", &c.max_accesses) ||
        limit_arg(a, "--max-edges", &c.max_edges) ||
        limit_arg(a, "--max-search-steps", &c.max_search_steps) ||
        limit_arg(a, "--max-module-bytes", &c.max_module_bytes) ||
        limit_arg(a, "--max-source-bytes", &max_source_bytes) || !strcmp(a, "--emit=dot") ||
        !strcmp(a, "--check"))
      continue;
    if (!strcmp(a, "--diagnostics-format=json")) {
      json = true;
      continue;
    }
    if (!strcmp(a, "-o") && i + 1 < argc) {
      i++;
      continue;
    }
    input = a;
  }
  if (!input) {
    fputs("usage: cgc_limits [--max-KIND=N]... FILE\n", stderr);
    return 2;
  }
  compiler_init(&c);
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  diag_set_output(c.diag, out);
  diag_set_json(c.diag, json);
  if (max_source_bytes)
    diag_set_max_source_bytes(c.diag, max_source_bytes);
  int status = 2;
  if (parse_program(&c, input)) {
    Program *p = analyze_program(&c);
    program_free(p);
    status = 0;
  }
  diag_flush(c.diag);
  compiler_free(&c);
  fclose(out);
  fwrite(text, 1, len, stderr);
  free(text);
  return status ? status : len ? 1 : 0;
}
