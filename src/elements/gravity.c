/* gravity.c: uniform gravity on one body, a potential linear in q.
 * V = -g . (M phi + e^i d_i) = -M g . x_c   (seed 000 eq. 13-14: M x_c = M phi + e^i d_i)
 * param[0..2] = g, param[3] = M, param[4..6] = e^i (zero for point masses). Linear, so the
 * gradient is constant and is its own discrete gradient. */
#include "mbsim/elements.h"

#include "elements/make.h"

#include "util/vec3.h"

static double potential(const mbsModel *m, const mbsElem *e, const double *q) {
  (void)m;
  const double *g = e->param;
  double V = -e->param[3] * vdot(g, q + e->qidx[0]);
  for (int i = 1; 3 * i < e->nq; i++) {
    V -= e->param[3 + i] * vdot(g, q + e->qidx[3 * i]);
  }
  return V;
}

static void gradient(const mbsModel *m, const mbsElem *e, const double *q, double *grad,
                     double *H) {
  (void)m;
  (void)q;
  (void)H;
  const double *g = e->param;
  for (int c = 0; c < 3; c++) {
    grad[c] = -e->param[3] * g[c];
  }
  for (int i = 1; 3 * i < e->nq; i++) {
    for (int c = 0; c < 3; c++) {
      grad[3 * i + c] = -e->param[3 + i] * g[c];
    }
  }
}

const mbsElementKindTable mbs_elem_gravity = {
    .name = "gravity",
    .potential = potential,
    .gradient = gradient,
    .discrete_gradient = NULL,
    .force = NULL,
    .linear = 1, /* V = -m g . phi (a rigid body's or beam node's centre) */
};

void mbs_elem_gravity_make(mbsElem *e, const double g[3], double mass, const double *eref) {
  e->kind = MBS_ELEM_GRAVITY;
  vcopy(e->param, g);
  e->param[3] = mass;
  if (eref) {
    vcopy(e->param + 4, eref);
  }
}
