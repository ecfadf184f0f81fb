/* arena.c: the per-step bump allocator (arena.h) */
#include "util/arena.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

int mbs_arena_init(mbsArena *a, size_t size) {
  memset(a, 0, sizeof(*a));
  a->base = malloc(size > 0 ? size : 1);
  if (!a->base) {
    return -1;
  }
  a->size = size;
  return 0;
}

void mbs_arena_free(mbsArena *a) {
  if (!a) {
    return;
  }
  free(a->base);
  memset(a, 0, sizeof(*a));
}

void *mbs_arena_alloc(mbsArena *a, size_t n) {
  const size_t align = alignof(max_align_t);
  size_t start = (a->used + align - 1) / align * align;
  if (!a->base || start > a->size || n > a->size - start) {
    return NULL;
  }
  a->used = start + n;
  if (a->used > a->high) {
    a->high = a->used;
  }
  return a->base + start;
}

double *mbs_arena_doubles(mbsArena *a, size_t n) {
  double *p = mbs_arena_alloc(a, n * sizeof(double));
  if (p) {
    memset(p, 0, n * sizeof(double));
  }
  return p;
}

void mbs_arena_reset(mbsArena *a) {
  a->used = 0;
}

size_t mbs_arena_mark(const mbsArena *a) {
  return a->used;
}

void mbs_arena_release(mbsArena *a, size_t mark) {
  if (mark <= a->used) {
    a->used = mark;
  }
}
