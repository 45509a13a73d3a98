/* arena.c: one pool for everything a compilation makes (QBE's way), so no
 * error path can leak or free twice. */
#include "cgc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Under ASan, the room of a chunk not handed out is poisoned, and each
 * allocation is unpoisoned to its exact size, so that reading past the
 * part of a struct that was allocated (an Expr's kind, a Stmt's) is an
 * error instead of a read of its neighbour. */
#if defined(__SANITIZE_ADDRESS__)
#define CGC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CGC_ASAN 1
#endif
#endif
#ifdef CGC_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

/* A compilation that has taken SMALL_CHUNKS chunks is a large one: its
 * further chunks are HUGE_CHUNK_SIZE, aligned to it, which the kernel may
 * back with one huge page each.  Faulting in fresh pages was half of
 * `cgc --check`'s time on a graph of 100,000 nodes (BENCHMARKS.md). */
enum { CHUNK_SIZE = 1 << 20, HUGE_CHUNK_SIZE = 2 << 20, SMALL_CHUNKS = 4 };

typedef struct Chunk {
  struct Chunk *next;
  size_t used, size;
  bool mapped; /* a huge chunk, mapped for itself (munmap, not free) */
  _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
  int nchunks; /* chunks of CHUNK_SIZE made so far */
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
    ASAN_UNPOISON_MEMORY_REGION(c->data, c->size);
    if (c->mapped)
      munmap(c, HUGE_CHUNK_SIZE);
    else
      free(c);
  }
  free(a);
}

/* A chunk of HUGE_CHUNK_SIZE bytes at an address aligned to it, with
 * MADV_HUGEPAGE; NULL where the system has no such advice or no memory
 * (a plain chunk is made instead).  Fresh from mmap, it is zero. */
static Chunk *huge_chunk(void) {
#ifdef MADV_HUGEPAGE
  size_t size = HUGE_CHUNK_SIZE;
  unsigned char *p =
      mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return NULL;
  unsigned char *q = (unsigned char *)(((uintptr_t)p + size - 1) & ~(uintptr_t)(size - 1));
  if (q > p)
    munmap(p, (size_t)(q - p));
  munmap(q + size, size - (size_t)(q - p));
  madvise(q, size, MADV_HUGEPAGE); /* advice: without it, small pages */
  Chunk *c = (Chunk *)q;
  c->mapped = true;
  c->size = size - sizeof *c;
  return c;
#else
  return NULL;
#endif
}

/* A chunk with room for `want` bytes (or more). */
static Chunk *chunk_new(Arena *a, size_t want) {
  Chunk *c = NULL;
  if (want == CHUNK_SIZE && a->nchunks++ >= SMALL_CHUNKS)
    c = huge_chunk();
  if (c)
    return c;
  /* calloc: memory fresh from the system is zero already, and nothing in
   * a chunk is handed out twice, so no allocation is cleared again. */
  c = calloc(1, sizeof *c + want);
  if (!c)
    out_of_memory();
  c->size = want;
  return c;
}

void *arena_alloc(Arena *a, size_t size) {
  size_t asked = size;
  size = (size + 7) & ~(size_t)7;
  Chunk *c = a->head;
  if (!c || c->size - c->used < size) {
    size_t want = size > CHUNK_SIZE / 4 ? size : CHUNK_SIZE;
    c = chunk_new(a, want);
    ASAN_POISON_MEMORY_REGION(c->data, c->size);
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
  ASAN_UNPOISON_MEMORY_REGION(p, asked);
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
