/* torque.c: a torque m on a rigid body as director forces.
 * contravariant (default): f^i = 1/2 m x d^i (seed 000 eq. 41); evaluated by the integrators
 * at the midpoint directors this is eq. 61 and gives J_{n+1} - J_n = dt m exactly (eq. 64),
 * because d_i x (m x d^i) = (d_i . d^i) m - (d_i . m) d^i = 2 m for any non-degenerate triad.
 * naive: f_i = 1/2 m x d_i with the covariant midpoint directors (seed 000 eq. 70, seed 004
 * eq. 13): only right for an orthonormal triad, so at the midpoint (eq. 60) it violates the
 * discrete balance of angular momentum (seed 004 eq. 15-17). Kept for comparison; wrong.
 * param[0..2] = value, iparam[0] = frame (world | body: m = value^k d_k, a follower torque),
 * iparam[1] = profile (-1: constant), iparam[2] = method (mbsTorqueMethod). */
#include "mbsim/elements.h"

#include <string.h>

#include "elements/elem_internal.h"
#include "elements/make.h"

static void force(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                  double *f, double *Fq, double *Fv) {
  (void)v;
  (void)Fv;
  double d[9], mt[3], dfd[81], dfm[27];
  elem_triad(e, q, 0, d);
  double scale = mbs_elem_profile(m, e->iparam[1], t, NULL);
  int body_frame = (e->iparam[0] == MBS_FRAME_BODY);
  /* the torque in world components */
  for (int c = 0; c < 3; c++) {
    mt[c] = 0.0;
    if (body_frame) {
      for (int k = 0; k < 3; k++) {
        mt[c] += scale * e->param[k] * d[3 * k + c];
      }
    } else {
      mt[c] = scale * e->param[c];
    }
  }
  memset(f, 0, 3 * sizeof(double));
  elem_torque_forces(d, mt, e->iparam[2] == MBS_TORQUE_NAIVE, f + 3, Fq ? dfd : NULL,
                     Fq ? dfm : NULL);
  if (!Fq) {
    return;
  }
  for (int r = 0; r < 9; r++) {
    for (int c = 0; c < 9; c++) {
      double s = dfd[r * 9 + c];
      /* follower torque: d m / d d_j = value^j I */
      if (body_frame) {
        s += dfm[r * 3 + c % 3] * scale * e->param[c / 3];
      }
      Fq[(3 + r) * 12 + 3 + c] += s;
    }
  }
}

const mbsElementKindTable mbs_elem_torque = {
    .name = "torque",
    .potential = NULL,
    .gradient = NULL,
    .discrete_gradient = NULL,
    .force = force,
};

void mbs_elem_torque_make(mbsElem *e, const double value[3], int frame, int profile, int method) {
  e->kind = MBS_ELEM_TORQUE;
  memcpy(e->param, value, 3 * sizeof(double));
  e->iparam[0] = frame;
  e->iparam[1] = profile;
  e->iparam[2] = method;
}
