/* arena.c: one pool for everything a compilation makes (QBE's way), so no
 * error path can leak or free twice. */
#include "cgc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK_SIZE = 1 << 20 };

typedef struct Chunk {
  struct Chunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
};

static void out_of_memory(void) {
  fputs("cgc: out of memory\n", stderr);
  exit(2);
}

void *xrealloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (!q)
    out_of_memory();
  return q;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p)
    out_of_memory();
  return p;
}

Arena *arena_new(void) {
  Arena *a = calloc(1, sizeof *a);
  if (!a)
    out_of_memory();
  return a;
}

void arena_free(Arena *a) {
  if (!a)
    return;
  for (Chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(a);
}

void *arena_alloc(Arena *a, size_t size) {
  size = (size + 7) & ~(size_t)7;
  Chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t want = size > CHUNK_SIZE / 4 ? size : CHUNK_SIZE;
    /* calloc: memory fresh from the system is zero already, and nothing
     * in a chunk is handed out twice, so no allocation is cleared again. */
    c = calloc(1, sizeof *c + want);
    if (!c)
      out_of_memory();
    c->used = 0;
    c->size = want;
    if (want == size && a->head) {
      /* A large block: keep the current chunk for small ones. */
      c->next = a->head->next;
      a->head->next = c;
    } else {
      c->next = a->head;
      a->head = c;
    }
  }
  void *p = c->data + c->used;
  c->used += size;
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) {
  return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}
