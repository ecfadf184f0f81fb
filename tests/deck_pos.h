/* deck_pos.h: where a marker stands in a deck text, for the deck tests that check an error's
 * file:line:col. */
#ifndef MBS_TESTS_DECK_POS_H
#define MBS_TESTS_DECK_POS_H

#include <check.h>
#include <string.h>

/* line and column (1-based) of the occ-th occurrence (0-based) of marker in text */
static inline void pos_of(const char *text, const char *marker, int occ, int *line, int *col) {
  const char *p = strstr(text, marker);
  for (int k = 0; k < occ && p; k++) {
    p = strstr(p + 1, marker);
  }
  ck_assert_msg(p != NULL, "marker '%s' not in the deck", marker);
  const char *ls = text;
  *line = 1;
  for (const char *q = text; q < p; q++) {
    if (*q == '\n') {
      (*line)++;
      ls = q + 1;
    }
  }
  *col = (int)(p - ls) + 1;
}

#endif
