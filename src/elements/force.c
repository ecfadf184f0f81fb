/* force.c: a force applied at a material point of a body (seed 000 eq. 16-19).
 * With the point at convected coordinates Theta^i relative to phi, the work conjugate
 * forces are f_phi = f and director forces f^i = Theta^i f (eq. 18-19).
 * param[0..2] = value, param[3..5] = Theta, iparam[0] = frame (world | body: f = value^k d_k,
 * a follower force), iparam[1] = profile (-1: constant 1). */
#include "mbsim/elements.h"

#include "elements/make.h"

#include <string.h>

static void force(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                  double *f, double *Fq, double *Fv) {
  (void)v;
  (void)Fv;
  const double *val = e->param;
  const double *theta = e->param + 3;
  double scale = mbs_elem_profile(m, e->iparam[1], t, NULL);
  double fw[3];
  /* world components of the force */
  if (e->iparam[0] == MBS_FRAME_BODY && e->nq == 12) {
    for (int c = 0; c < 3; c++) {
      fw[c] = 0.0;
      for (int k = 0; k < 3; k++) {
        fw[c] += scale * val[k] * q[e->qidx[3 + 3 * k + c]];
      }
    }
  } else {
    for (int c = 0; c < 3; c++) {
      fw[c] = scale * val[c];
    }
  }
  /* f_phi = f, f^i = Theta^i f */
  memcpy(f, fw, sizeof(fw));
  for (int i = 1; 3 * i < e->nq; i++) {
    for (int c = 0; c < 3; c++) {
      f[3 * i + c] = theta[i - 1] * fw[c];
    }
  }
  /* follower force: d f / d d_k = value^k I, for every row block */
  if (Fq && e->iparam[0] == MBS_FRAME_BODY && e->nq == 12) {
    for (int i = 0; i < 4; i++) {
      double wi = (i == 0) ? 1.0 : theta[i - 1];
      for (int k = 0; k < 3; k++) {
        for (int c = 0; c < 3; c++) {
          Fq[(3 * i + c) * 12 + 3 + 3 * k + c] += wi * scale * val[k];
        }
      }
    }
  }
}

const mbsElementKindTable mbs_elem_force = {
    .name = "force",
    .potential = NULL,
    .gradient = NULL,
    .discrete_gradient = NULL,
    .force = force,
};

void mbs_elem_force_make(mbsElem *e, const double value[3], const double *theta, int frame,
                         int profile) {
  e->kind = MBS_ELEM_FORCE;
  memcpy(e->param, value, 3 * sizeof(double));
  if (theta) {
    memcpy(e->param + 3, theta, 3 * sizeof(double));
  }
  e->iparam[0] = frame;
  e->iparam[1] = profile;
}

void mbs_elem_force_share_make(mbsElem *e, const double value[3], int profile, int phi0) {
  mbs_elem_force_make(e, value, NULL, MBS_FRAME_WORLD, profile);
  /* iparam[2] = 1 marks a distributed load's nodal share, whose torque /loads/force takes
   * about the beam's node 0 (iparam[3]: its phi) */
  e->iparam[2] = 1;
  e->iparam[3] = phi0;
}
