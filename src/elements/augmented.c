/* augmented.c: a joint torque through coordinate augmentation (seed 004 sec. 5).
 *
 * A scalar coordinate gamma (the joint angle, "<joint>.gamma") is tied to the relative
 * rotation about the joint axis d'_1 by one constraint, and the torque tau(t) is the force
 * conjugate to gamma; the constraint force transmits it to the bodies as +tau about the axis
 * on the second body and -tau on the first. With u = d'_2(I) . d'_3(II) = -sin theta and
 * w = d'_3(I) . d'_3(II) = cos theta (theta the rotation of II relative to I about d'_1)
 * the augmentation constraints of seed 004 eq. 22 are
 *     g = a (u + sin gamma) + b (w - cos gamma).
 * classical (eq. 21): a = b = 1; then dg/dgamma = cos gamma + sin gamma vanishes at
 *     gamma = 3 pi/4 (mod pi) and the discrete system loses rank there (seed 004 sec. 5).
 * variable (eq. 23, default): a = cos gamma_n, b = sin gamma_n frozen at the start of the
 *     step. The energy-momentum scheme gets them from q_n, the first argument of the
 *     discrete gradient. The plain constraint call has a single q and no gamma_n, so it uses
 *     a = cos gamma, b = sin gamma of the same q:
 *         g(q) = u cos gamma + w sin gamma = sin(gamma - theta),
 *     which has the same zeros near gamma = theta, dg/dgamma = cos(gamma - theta) = 1 there
 *     (never singular), and equals the frozen form at q = q_n. So the end-of-step equation
 *     g(q_{n+1}) = 0 of every integrator and the em discrete gradient below (built on the
 *     frozen form, whose value at q_n is 0 and at q_{n+1} is 0 as well) are consistent,
 *     and energy is conserved exactly: Gbar (q_{n+1} - q_n) = 0. Non-em integrators use the
 *     gradient of g(q) at their evaluation point.
 * The discrete gradient in gamma (Gonzalez) uses (sin gb - sin ga)/(gb - ga) = cos(gm)
 * sinc(h), (cos gb - cos ga)/(gb - ga) = -sin(gm) sinc(h), gm = (ga + gb)/2, h = (gb - ga)/2,
 * which are exact and free of cancellation; u and w are bilinear in q, so their gradients at
 * the midpoint are exact discrete gradients.
 *   param[24] = tau [N m], iparam[2] = profile, iparam[3] = mbsAugmentation; the last local
 *   coordinate is gamma. */
#include <math.h>
#include <string.h>

#include "elements/elem_internal.h"
#include "elements/make.h"

/* u, w with gradients (local) and, if Hu/Hw are not NULL, Hessians (zeroed here) */
static void uw(const mbsElem *e, const double *q, double *u, double *w, double *gu, double *gw,
               double *Hu, double *Hw) {
  elem_dir_dots(e, q, 1, 2, 2, u, w, gu, gw, Hu, Hw);
}

static void force(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                  double *f, double *Fq, double *Fv) {
  (void)q;
  (void)v;
  (void)Fq;
  (void)Fv;
  memset(f, 0, (size_t)e->nq * sizeof(double));
  f[e->nq - 1] = e->param[ELEM_P] * mbs_elem_profile(m, e->iparam[2], t, NULL);
}

static void constraint(const mbsModel *m, const mbsElem *e, const double *q, double t, double *g,
                       double *G) {
  (void)m;
  (void)t;
  int n = e->nq;
  double u, w, gu[ELEM_SIDES_MAXQ], gw[ELEM_SIDES_MAXQ];
  double gam = q[e->qidx[n - 1]], cg = cos(gam), sg = sin(gam);
  uw(e, q, &u, &w, gu, gw, NULL, NULL);
  if (e->iparam[3] == MBS_AUGMENTATION_CLASSICAL) {
    g[0] = u + sg + w - cg;
  } else {
    g[0] = u * cg + w * sg;
  }
  if (!G) {
    return;
  }
  for (int i = 0; i < n - 1; i++) {
    G[i] = e->iparam[3] == MBS_AUGMENTATION_CLASSICAL ? gu[i] + gw[i] : cg * gu[i] + sg * gw[i];
  }
  G[n - 1] = e->iparam[3] == MBS_AUGMENTATION_CLASSICAL ? cg + sg : -u * sg + w * cg;
}

static void constraint_hessian(const mbsModel *m, const mbsElem *e, const double *q, double t,
                               const double *mu, double *H) {
  (void)m;
  (void)t;
  int n = e->nq, ig = n - 1;
  double u, w, gu[ELEM_SIDES_MAXQ], gw[ELEM_SIDES_MAXQ];
  double Hu[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ], Hw[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ];
  double gam = q[e->qidx[ig]], cg = cos(gam), sg = sin(gam);
  uw(e, q, &u, &w, gu, gw, Hu, Hw);
  if (e->iparam[3] == MBS_AUGMENTATION_CLASSICAL) {
    for (int i = 0; i < n * n; i++) {
      H[i] += mu[0] * (Hu[i] + Hw[i]);
    }
    H[ig * n + ig] += mu[0] * (cg - sg);
    return;
  }
  for (int i = 0; i < n * n; i++) {
    H[i] += mu[0] * (cg * Hu[i] + sg * Hw[i]);
  }
  for (int i = 0; i < ig; i++) {
    double h = mu[0] * (-sg * gu[i] + cg * gw[i]);
    H[i * n + ig] += h;
    H[ig * n + i] += h;
  }
  H[ig * n + ig] += mu[0] * (-u * cg - w * sg);
}

static void constraint_discrete_gradient(const mbsModel *m, const mbsElem *e, const double *qa,
                                         const double *qb, double t, const double *mu, double *Gbar,
                                         double *Hb) {
  (void)m;
  (void)t;
  int n = e->nq, ig = n - 1;
  double ua, wa, ub, wb, gua[ELEM_SIDES_MAXQ], gwa[ELEM_SIDES_MAXQ], gub[ELEM_SIDES_MAXQ],
      gwb[ELEM_SIDES_MAXQ];
  double Hu[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ], Hw[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ];
  uw(e, qa, &ua, &wa, gua, gwa, NULL, NULL);
  uw(e, qb, &ub, &wb, gub, gwb, Hb ? Hu : NULL, Hb ? Hw : NULL);
  double ga = qa[e->qidx[ig]], gb = qb[e->qidx[ig]];

  /* a, b: constant (eq. 21) or frozen at gamma_n = ga (eq. 23) */
  double a = 1.0, b = 1.0;
  if (e->iparam[3] != MBS_AUGMENTATION_CLASSICAL) {
    a = cos(ga);
    b = sin(ga);
  }

  /* gradients of u, w at the midpoint (linear in q): exact discrete gradients */
  for (int i = 0; i < ig; i++) {
    Gbar[i] = 0.5 * (a * (gua[i] + gub[i]) + b * (gwa[i] + gwb[i]));
  }

  /* discrete gradient of a sin(gamma) - b cos(gamma) */
  double gm = 0.5 * (ga + gb), h = 0.5 * (gb - ga), dsinc;
  double sc = elem_sinc(h, &dsinc);
  double Ds = cos(gm) * sc, Dc = -sin(gm) * sc;
  Gbar[ig] = a * Ds - b * Dc;
  if (!Hb) {
    return;
  }
  for (int i = 0; i < n * n; i++) {
    Hb[i] += 0.5 * mu[0] * (a * Hu[i] + b * Hw[i]);
  }
  double dDs = 0.5 * (-sin(gm) * sc + cos(gm) * dsinc);
  double dDc = 0.5 * (-cos(gm) * sc - sin(gm) * dsinc);
  Hb[ig * n + ig] += mu[0] * (a * dDs - b * dDc);
}

const mbsElementKindTable mbs_elem_augmented_torque = {
    .name = "augmented_torque",
    .force = force,
    .constraint = constraint,
    .constraint_hessian = constraint_hessian,
    .constraint_discrete_gradient = constraint_discrete_gradient,
};

void mbs_elem_augmented_torque_make(mbsElem *e, double tau, int profile, int augmentation) {
  e->kind = MBS_ELEM_AUGMENTED_TORQUE;
  e->ncon = 1;
  e->param[ELEM_P] = tau;
  e->iparam[2] = profile;
  e->iparam[3] = augmentation;
}
