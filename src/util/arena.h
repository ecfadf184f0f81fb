/* arena.h: per-step storage. One block allocated when the run data is created, sized from
 * the model's bounds; a step bump-allocates from it and resets it at its start, so nothing is
 * allocated in the step loop (contact sets, Delassus blocks and element scratch of any size
 * fit as long as the bound holds). The high-water mark says how much a run needed. */
#ifndef MBS_UTIL_ARENA_H
#define MBS_UTIL_ARENA_H

#include <stddef.h>

typedef struct mbsArena {
  unsigned char *base; /* the block (NULL until mbs_arena_init) */
  size_t size;         /* [bytes] its capacity */
  size_t used;         /* [bytes] taken since the last reset */
  size_t high;         /* [bytes] the most ever taken between two resets */
} mbsArena;

/* allocate the block of size bytes (at least 1); 0, or -1 when out of memory */
int mbs_arena_init(mbsArena *a, size_t size);

/* release the block (accepts a zeroed arena) */
void mbs_arena_free(mbsArena *a);

/* n bytes aligned for any scalar type, NULL when the block is exhausted (a bound of the
 * model was wrong: callers treat it as an internal error) */
void *mbs_arena_alloc(mbsArena *a, size_t n);

/* n doubles, zeroed */
double *mbs_arena_doubles(mbsArena *a, size_t n);

/* scoped use: what a mark returns, release gives back (everything allocated after it) */
size_t mbs_arena_mark(const mbsArena *a);
void mbs_arena_release(mbsArena *a, size_t mark);

/* forget everything allocated since the last reset (the high-water mark stays) */
void mbs_arena_reset(mbsArena *a);

#endif
