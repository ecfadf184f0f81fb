/* drive.c: a prescribed joint motion (rheonomic constraint), one row owned by the joint.
 *
 * revolute: the angle theta of the second body relative to the first about d'_1 follows
 * theta*(t) = value x profile(t). With the body-fixed frames of seed 004 eq. 4-6,
 * d'_2(II) = cos theta d'_2(I) + sin theta d'_3(I), and the row
 *     g = (sin theta* d'_2(I) - cos theta* d'_3(I)) . d'_2(II) = sin(theta* - theta)
 * is exact at t = 0 (theta* = theta = 0), vanishes only at theta = theta* near the motion
 * (the other root is half a turn away) and has dg/dtheta = -1 there: never singular.
 * prismatic: the displacement of the second joint point along d'_1 follows x*(t):
 *     g = d'_1(I) . (p'_II - p'_I) - x*(t).
 * Both rows are bilinear in q at fixed t, so their gradient at the midpoint is their exact
 * discrete gradient (no constraint_discrete_gradient needed).
 *   param[24] = value [rad or m], iparam[2] = profile, iparam[3] = 0 revolute, 1 prismatic. */
#include <math.h>

#include "elements/elem_internal.h"

/* the row as A . B - x*(t) */
static void row(const mbsModel *m, const mbsElem *e, double t, ElemVx *A, ElemVx *B, double *x) {
  double target = e->param[ELEM_P] * mbs_elem_profile(m, e->iparam[2], t, NULL);
  if (e->iparam[3] == 0) {
    ElemVx a2 = elem_dir(e, 0, 1), a3 = elem_dir(e, 0, 2);
    *A = elem_vx_lin(sin(target), &a2, -cos(target), &a3);
    *B = elem_dir(e, 1, 1);
    *x = 0.0;
  } else {
    ElemVx p1 = elem_point(e, 0), p2 = elem_point(e, 1);
    *A = elem_dir(e, 0, 0);
    *B = elem_vx_lin(1.0, &p2, -1.0, &p1);
    *x = target;
  }
}

static void constraint(const mbsModel *m, const mbsElem *e, const double *q, double t, double *g,
                       double *G) {
  ElemVx A, B;
  double x;
  row(m, e, t, &A, &B, &x);
  if (G) {
    for (int i = 0; i < e->nq; i++) {
      G[i] = 0.0;
    }
  }
  g[0] = elem_dot(e, &A, &B, q, 1.0, G, NULL) - x;
}

static void constraint_hessian(const mbsModel *m, const mbsElem *e, const double *q, double t,
                               const double *mu, double *H) {
  ElemVx A, B;
  double x;
  row(m, e, t, &A, &B, &x);
  elem_dot(e, &A, &B, q, mu[0], NULL, H);
}

const mbsElementKindTable mbs_elem_drive = {
    .name = "drive",
    .constraint = constraint,
    .constraint_hessian = constraint_hessian,
};
