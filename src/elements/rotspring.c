/* rotspring.c: a torsion spring-damper on a revolute (or cylindrical) joint.
 *
 * The joint angle theta of the second body relative to the first about d'_1 comes from the
 * body-fixed frames (seed 004 eq. 4-6) through two bilinear invariants,
 *     c = d'_2(I) . d'_2(II) = cos theta,  s = d'_3(I) . d'_2(II) = sin theta,
 * theta = atan2(s, c), and V = k/2 delta^2 with the deflection delta = theta - theta_rest
 * taken in (-pi, pi] (a spring wound past half a turn from rest flips sign: there the
 * potential is continuous but has a kink).
 * Discrete gradient (Gonzalez-type, exact for energy AND momenta): with pi = (c, s) at q_a,
 * q_b, the bars the averages of the end values and grad c, grad s at the midpoint q_m (exact
 * discrete gradients of the bilinear c, s),
 *     dgV = psi (cbar grad s(q_m) - sbar grad c(q_m)),
 *     psi = Wbar kappa,  Wbar = (W(delta_b) - W(delta_a)) / dtheta,  kappa = dtheta / cross,
 * where cross = c_a s_b - s_a c_b, dtheta = atan2(cross, c_a c_b + s_a s_b) is the angle
 * increment. Since cbar ds - sbar dc = cross exactly, dgV . (q_b - q_a) = Wbar dtheta =
 * V(q_b) - V(q_a); and since c, s are invariant under rigid motions of both bodies,
 * grad c, grad s exert no net force or torque, so momenta are conserved as well. Without a
 * wrap Wbar = k/2 (delta_a + delta_b); kappa = atan(u)/(u dot), u = cross/dot, by series
 * near u = 0: no cancellation anywhere.
 * Damping: F = -d thetadot grad theta at the evaluation state, thetadot = grad theta . v, a
 * dissipative force with the same invariance.
 *   param[24] = k [N m/rad], param[25] = d [N m s/rad], param[26] = theta_rest [rad]. */
#include <math.h>
#include <string.h>

#include "elements/elem_internal.h"
#include "elements/make.h"

#define PI 3.14159265358979323846

/* x in (-pi, pi] */
static double wrap(double x) {
  return x - 2.0 * PI * ceil((x - PI) / (2.0 * PI));
}

/* c, s with gradients (zeroed here) and Hessians (zeroed here if not NULL) */
static void cs(const mbsElem *e, const double *q, double *c, double *s, double *gc, double *gs,
               double *Hc, double *Hs) {
  elem_dir_dots(e, q, 1, 2, 1, c, s, gc, gs, Hc, Hs);
}

static double potential(const mbsModel *m, const mbsElem *e, const double *q) {
  (void)m;
  double c, s, gc[ELEM_SIDES_MAXQ], gs[ELEM_SIDES_MAXQ];
  cs(e, q, &c, &s, gc, gs, NULL, NULL);
  double delta = wrap(atan2(s, c) - e->param[ELEM_P + 2]);
  return 0.5 * e->param[ELEM_P] * delta * delta;
}

static void gradient(const mbsModel *m, const mbsElem *e, const double *q, double *g, double *H) {
  (void)m;
  int n = e->nq;
  double k = e->param[ELEM_P], gt[ELEM_SIDES_MAXQ], Ht[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ];
  double delta = wrap(elem_joint_angle(e, q, gt, H ? Ht : NULL) - e->param[ELEM_P + 2]);
  for (int i = 0; i < n; i++) {
    g[i] = k * delta * gt[i];
  }
  if (H) {
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) {
        H[i * n + j] += k * (gt[i] * gt[j] + delta * Ht[i * n + j]);
      }
    }
  }
}

/* atan(u)/u and its derivative, by series near 0 */
static double atan_ratio(double u, double *du) {
  if (fabs(u) < 1e-3) {
    double u2 = u * u;
    *du = u * (-2.0 / 3.0 + u2 * (4.0 / 5.0 - u2 * 6.0 / 7.0));
    return 1.0 - u2 * (1.0 / 3.0 - u2 * (1.0 / 5.0 - u2 / 7.0));
  }
  double F = atan(u) / u;
  *du = (1.0 / (1.0 + u * u) - F) / u;
  return F;
}

static void discrete_gradient(const mbsModel *m, const mbsElem *e, const double *qa,
                              const double *qb, double *g, double *Hb) {
  (void)m;
  int n = e->nq;
  double k = e->param[ELEM_P], rest = e->param[ELEM_P + 2];
  double ca, sa, cb, sb, gca[ELEM_SIDES_MAXQ], gsa[ELEM_SIDES_MAXQ], gcb[ELEM_SIDES_MAXQ],
      gsb[ELEM_SIDES_MAXQ];
  double Hc[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ], Hs[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ];
  cs(e, qa, &ca, &sa, gca, gsa, NULL, NULL);
  cs(e, qb, &cb, &sb, gcb, gsb, Hb ? Hc : NULL, Hb ? Hs : NULL);

  /* the increment of the angle and kappa = dtheta / cross */
  double cross = ca * sb - sa * cb, dot = ca * cb + sa * sb;
  double dth = atan2(cross, dot), kappa, dk[2];
  double dcross[2] = {-sa, ca}, ddot[2] = {ca, sa}, ddth[2];
  double rr = cross * cross + dot * dot;
  for (int j = 0; j < 2; j++) {
    ddth[j] = rr > 0.0 ? (dot * dcross[j] - cross * ddot[j]) / rr : 0.0;
  }
  if (dot > 0.0) {
    double u = cross / dot, dF, F = atan_ratio(u, &dF);
    kappa = F / dot;
    for (int j = 0; j < 2; j++) {
      double du = (dcross[j] - u * ddot[j]) / dot;
      dk[j] = dF * du / dot - F * ddot[j] / (dot * dot);
    }
  } else if (cross != 0.0) {
    kappa = dth / cross;
    for (int j = 0; j < 2; j++) {
      dk[j] = (ddth[j] - kappa * dcross[j]) / cross;
    }
  } else {
    kappa = dk[0] = dk[1] = 0.0; /* half a turn in one step: no direction */
  }

  /* Wbar = (W(delta_b) - W(delta_a)) / dtheta */
  double da = wrap(atan2(sa, ca) - rest), db = wrap(atan2(sb, cb) - rest);
  double rb = cb * cb + sb * sb, ddb[2] = {0.0, 0.0}, Wbar, dW[2];
  if (rb > 0.0) {
    ddb[0] = -sb / rb;
    ddb[1] = cb / rb;
  }
  if (fabs(db - da - dth) <= PI || dth == 0.0) {
    Wbar = 0.5 * k * (da + db);
    for (int j = 0; j < 2; j++) {
      dW[j] = 0.5 * k * ddb[j];
    }
  } else {
    /* the deflection wrapped at +-pi within the step */
    Wbar = 0.5 * k * (db * db - da * da) / dth;
    for (int j = 0; j < 2; j++) {
      dW[j] = (k * db * ddb[j] - Wbar * ddth[j]) / dth;
    }
  }
  double psi = Wbar * kappa, dpsi[2];
  for (int j = 0; j < 2; j++) {
    dpsi[j] = dW[j] * kappa + Wbar * dk[j];
  }

  /* dgV = psi (cbar grad s(q_m) - sbar grad c(q_m)) */
  double cbar = 0.5 * (ca + cb), sbar = 0.5 * (sa + sb), N[ELEM_SIDES_MAXQ];
  for (int i = 0; i < n; i++) {
    N[i] = 0.5 * (cbar * (gsa[i] + gsb[i]) - sbar * (gca[i] + gcb[i]));
    g[i] = psi * N[i];
  }
  if (!Hb) {
    return;
  }
  /* d/dq_b: N (x) dpsi + psi dN, dN = grad s_m (x) grad c_b / 2 - grad c_m (x) grad s_b / 2 +
   * (cbar Hs - sbar Hc) / 2 */
  for (int i = 0; i < n; i++) {
    double gsm = 0.5 * (gsa[i] + gsb[i]), gcm = 0.5 * (gca[i] + gcb[i]);
    for (int j = 0; j < n; j++) {
      double dpsij = dpsi[0] * gcb[j] + dpsi[1] * gsb[j];
      double dN = 0.5 * (gsm * gcb[j] - gcm * gsb[j] + cbar * Hs[i * n + j] - sbar * Hc[i * n + j]);
      Hb[i * n + j] += N[i] * dpsij + psi * dN;
    }
  }
}

static void force(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                  double *f, double *Fq, double *Fv) {
  (void)m;
  (void)t;
  int n = e->nq;
  double d = e->param[ELEM_P + 1];
  memset(f, 0, (size_t)n * sizeof(double));
  if (d == 0.0) {
    return;
  }
  double gt[ELEM_SIDES_MAXQ], Ht[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ], vl[ELEM_SIDES_MAXQ];
  elem_joint_angle(e, q, gt, Fq ? Ht : NULL);
  mbs_elem_gather(e, v, vl);
  double rate = 0.0;
  for (int i = 0; i < n; i++) {
    rate += gt[i] * vl[i];
  }
  for (int i = 0; i < n; i++) {
    f[i] = -d * rate * gt[i];
  }
  /* Fv = -d grad theta (x) grad theta; Fq = -d (grad theta (x) H v + rate H), H symmetric */
  double hv[ELEM_SIDES_MAXQ];
  for (int j = 0; Fq && j < n; j++) {
    hv[j] = 0.0;
    for (int l = 0; l < n; l++) {
      hv[j] += Ht[j * n + l] * vl[l];
    }
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      if (Fv) {
        Fv[i * n + j] -= d * gt[i] * gt[j];
      }
      if (Fq) {
        Fq[i * n + j] -= d * (gt[i] * hv[j] + rate * Ht[i * n + j]);
      }
    }
  }
}

const mbsElementKindTable mbs_elem_rotational_spring = {
    .name = "rotational_spring",
    .potential = potential,
    .gradient = gradient,
    .discrete_gradient = discrete_gradient,
    .force = force,
    .dissipative = 1,
};

void mbs_elem_rotational_spring_make(mbsElem *e, double k, double d, double rest) {
  e->kind = MBS_ELEM_ROTATIONAL_SPRING;
  e->iparam[2] = -1;
  e->param[ELEM_P] = k;
  e->param[ELEM_P + 1] = d;
  e->param[ELEM_P + 2] = rest;
}
