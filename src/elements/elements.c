/* elements.c: the element table and the helpers shared by the element kinds */
#include "mbsim/elements.h"

#include <stddef.h>

#include "util/vec3.h"

extern const mbsElementKindTable mbs_elem_gravity;
extern const mbsElementKindTable mbs_elem_force;
extern const mbsElementKindTable mbs_elem_torque;

const mbsElementKindTable *mbs_element_kind(mbsElemKind kind) {
  switch (kind) {
    case MBS_ELEM_GRAVITY:
      return &mbs_elem_gravity;
    case MBS_ELEM_FORCE:
      return &mbs_elem_force;
    case MBS_ELEM_TORQUE:
      return &mbs_elem_torque;
    case MBS_ELEM_KIND_COUNT:
      break;
  }
  return NULL;
}

void mbs_elem_gather(const mbsElem *e, const double *x, double *loc) {
  for (int i = 0; i < e->nq; i++) {
    loc[i] = x[e->qidx[i]];
  }
}

double mbs_contravariant_directors(double dcon[9], const double d[9]) {
  /* d^i = (d_j x d_k) / (d1 . (d2 x d3)) for even permutations (i, j, k), seed 000 eq. 9 */
  double a[9];
  vcross(a + 0, d + 3, d + 6);
  vcross(a + 3, d + 6, d + 0);
  vcross(a + 6, d + 0, d + 3);
  double vol = vdot(d + 0, a + 0);
  for (int i = 0; i < 9; i++) {
    dcon[i] = a[i] / vol;
  }
  return vol;
}
