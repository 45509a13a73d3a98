/* fuzz_cgc.c: libFuzzer over the whole pipeline in memory: the text is
 * scanned, parsed, checked (recording what each name stands for, as for
 * cgc lsp), ordered, warned about and emitted as C and DOT, and,
 * when it parses, formatted twice (the second time must change nothing).  The
 * same bytes are read as a module too (PTX, cubin, fatbin), as `from` reads one.
 *   clang -fsanitize=fuzzer,address,undefined (fuzz/CMakeLists.txt) */
#include "cgc.h"
#include "parse_actions.h"

#include <stdlib.h>
#include <string.h>

static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sink)
    sink = fopen("/dev/null", "w");
  Compiler c = {.max_nodes = 20000, .max_statements = 200000, .max_accesses = 200000,
                .max_edges = 400000, .max_search_steps = 20000000,
                .keep_uses = true}; /* sema's record of names too, as cgc lsp asks */
  compiler_init(&c);
  diag_set_output(c.diag, sink);
  parse_program_text(&c, "fuzz.cgraph", (const char *)data, size);
  bool parsed = diag_errors(c.diag) == 0;
  Program *p = analyze_program(&c);
  if (!diag_errors(c.diag))
    warn_program(&c, p);
  if (!diag_errors(c.diag)) {
    emit_dot(sink, p, false);
    emit_dot(sink, p, true);
  }
  if (!diag_errors(c.diag))
    emit_c(sink, sink, &c, p, "fuzz.cgraph", "fuzz_graph.h");
  program_free(p);
  compiler_free(&c);
  const char *why = NULL;
  int format = module_format(data, size, &why);
  if (format >= 0) {
    Module m = {.path = "fuzz", .bytes = data, .len = size, .format = (ModuleFormat)format};
    Arena *a = arena_new();
    module_scan(&m, a, &why);
    map_free(&m.kernels);
    vec_free(&m.names);
    arena_free(a);
  }
  if (parsed && !memchr(data, 0, size)) { /* cgc fmt refuses NUL bytes */
    char *once = fmt_text((const char *)data, size);
    char *twice = fmt_text(once, strlen(once));
    if (strcmp(once, twice))
      abort(); /* cgc fmt must be idempotent */
    free(once);
    free(twice);
  }
  return 0;
}
