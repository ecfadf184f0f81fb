/* beam_placeholder.c: PLACEHOLDER for merging, replaced by the beam element's beam.c (branch
 * beam-elem), which implements the kind "beam" (strain energy, its gradient, discrete
 * gradient and damping) behind the same declarations (elements.h). Until then a beam element
 * has no internal forces: beams move as unconnected rigid node frames. Delete this file when
 * beam.c is merged. */
#include "mbsim/elements.h"

#include <string.h>

int mbs_beam_element_setup(mbsElem *e, const double *q0, int order, const double k[6], double eta) {
  (void)q0;
  if (order != 1 && order != 2) {
    return -1;
  }
  memcpy(e->param, k, 6 * sizeof(double));
  e->param[6] = eta;
  e->iparam[0] = order;
  return 0;
}

void mbs_beam_element_strain(const mbsElem *e, const double *q, double out[6]) {
  (void)e;
  (void)q;
  memset(out, 0, 6 * sizeof(double));
}

/* zero strain energy (the placeholder has no stiffness) */
static double potential(const mbsModel *m, const mbsElem *e, const double *q) {
  (void)m;
  (void)e;
  (void)q;
  return 0.0;
}

static void gradient(const mbsModel *m, const mbsElem *e, const double *q, double *g, double *H) {
  (void)m;
  (void)q;
  (void)H;
  memset(g, 0, (size_t)e->nq * sizeof(double));
}

const mbsElementKindTable mbs_elem_beam = {
    .name = "beam", .potential = potential, .gradient = gradient};
