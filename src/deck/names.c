/* names.c: a small open-addressing hash table from entry names to indices, so that decks
 * with many bodies, joints and loads are checked for duplicates and resolved in linear time.
 * The table does not own the names: they live in the deck's entries. */
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

/* FNV-1a */
static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  for (; *s; s++) {
    h = (h ^ (unsigned char)*s) * 16777619u;
  }
  return h;
}

int deck_names_init(DeckNames *t, int n) {
  /* a power of two at least twice the entries keeps probe chains short */
  int cap = 16;
  while (cap < 2 * n + 1) {
    cap *= 2;
  }
  t->slot = calloc((size_t)cap, sizeof(*t->slot));
  t->cap = t->slot ? cap : 0;
  t->n = 0;
  return t->slot != NULL;
}

void deck_names_free(DeckNames *t) {
  free(t->slot);
  memset(t, 0, sizeof(*t));
}

int deck_names_get(const DeckNames *t, const char *name) {
  if (t->cap == 0) {
    return -1;
  }
  for (unsigned k = hash(name) & (unsigned)(t->cap - 1);; k = (k + 1) & (unsigned)(t->cap - 1)) {
    if (!t->slot[k].name) {
      return -1;
    }
    if (strcmp(t->slot[k].name, name) == 0) {
      return t->slot[k].index;
    }
  }
}

void deck_names_put(DeckNames *t, const char *name, int index) {
  /* the caller sized the table for all entries: there is always a free slot */
  unsigned k = hash(name) & (unsigned)(t->cap - 1);
  while (t->slot[k].name) {
    k = (k + 1) & (unsigned)(t->cap - 1);
  }
  t->slot[k].name = name;
  t->slot[k].index = index;
  t->n++;
}
