/* spring.c: a translational spring-damper between two body-fixed points p_1, p_2.
 *
 * V = k/2 (l - L)^2 with l = |p_2 - p_1|, written in the invariant C = |p_2 - p_1|^2 as
 * V = W(C), W(C) = k/2 (sqrt(C) - L)^2. C is quadratic in q, so its midpoint gradient is an
 * exact discrete gradient, and the Gonzalez discrete gradient of V is
 *     dgV = Wbar grad C(q_m),  Wbar = (W(C_b) - W(C_a)) / (C_b - C_a) = k/2 (1 - 2L/(l_a + l_b)),
 * the closed form free of cancellation (it is W'(C) when l_a = l_b). The discrete force acts
 * along the midpoint direction p_2 - p_1 at q_m, equal and opposite on the two points, so
 * energy and linear and angular momentum are all conserved (Gonzalez; seed 000 sec. 6).
 * The damper f = -c (e . dp/dt) e on p_2 (minus on p_1), e = (p_2 - p_1)/l, is a
 * dissipative force along the same line (no force at l = 0).
 *   param[24] = k [N/m], param[25] = c [N s/m], param[26] = L [m]. */
#include <math.h>
#include <string.h>

#include "elements/elem_internal.h"
#include "elements/make.h"
#include "util/vec3.h"

static ElemVx delta(const mbsElem *e) {
  ElemVx p1 = elem_point(e, 0), p2 = elem_point(e, 1);
  return elem_vx_lin(1.0, &p2, -1.0, &p1);
}

static double potential(const mbsModel *m, const mbsElem *e, const double *q) {
  (void)m;
  ElemVx D = delta(e);
  double x[3];
  elem_vx_eval(e, &D, q, x);
  double dl = vnorm(x) - e->param[ELEM_P + 2];
  return 0.5 * e->param[ELEM_P] * dl * dl;
}

static void gradient(const mbsModel *m, const mbsElem *e, const double *q, double *g, double *H) {
  (void)m;
  int n = e->nq;
  double k = e->param[ELEM_P], L = e->param[ELEM_P + 2];
  ElemVx D = delta(e);
  double gc[ELEM_SIDES_MAXQ];
  memset(gc, 0, (size_t)n * sizeof(double));
  double C = elem_dot(e, &D, &D, q, 1.0, gc, NULL), l = sqrt(C);
  /* W'(C) = k/2 (1 - L/l), W''(C) = k L / (4 l^3) */
  double W1 = l > 0.0 ? 0.5 * k * (1.0 - L / l) : 0.0;
  double W2 = l > 0.0 ? 0.25 * k * L / (l * l * l) : 0.0;
  for (int i = 0; i < n; i++) {
    g[i] = W1 * gc[i];
  }
  if (H) {
    elem_dot(e, &D, &D, q, W1, NULL, H);
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) {
        H[i * n + j] += W2 * gc[i] * gc[j];
      }
    }
  }
}

static void discrete_gradient(const mbsModel *m, const mbsElem *e, const double *qa,
                              const double *qb, double *g, double *Hb) {
  (void)m;
  int n = e->nq;
  double k = e->param[ELEM_P], L = e->param[ELEM_P + 2];
  ElemVx D = delta(e);
  double ga[ELEM_SIDES_MAXQ], gb[ELEM_SIDES_MAXQ];
  memset(ga, 0, (size_t)n * sizeof(double));
  memset(gb, 0, (size_t)n * sizeof(double));
  double la = sqrt(elem_dot(e, &D, &D, qa, 1.0, ga, NULL));
  double lb = sqrt(elem_dot(e, &D, &D, qb, 1.0, gb, NULL));
  double sum = la + lb;
  double Wbar = sum > 0.0 ? 0.5 * k * (1.0 - 2.0 * L / sum) : 0.5 * k;
  /* grad C(q_m) = (grad C(q_a) + grad C(q_b)) / 2: grad C is linear in q */
  for (int i = 0; i < n; i++) {
    g[i] = Wbar * 0.5 * (ga[i] + gb[i]);
  }
  if (!Hb) {
    return;
  }
  /* d Wbar / d q_b = k L / (l_a + l_b)^2 grad C(q_b) / (2 l_b) */
  elem_dot(e, &D, &D, qb, 0.5 * Wbar, NULL, Hb);
  if (sum > 0.0 && lb > 0.0) {
    double s = k * L / (sum * sum) / (2.0 * lb);
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) {
        Hb[i * n + j] += 0.5 * (ga[i] + gb[i]) * s * gb[j];
      }
    }
  }
}

static void force(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                  double *f, double *Fq, double *Fv) {
  (void)m;
  (void)t;
  int n = e->nq;
  double c = e->param[ELEM_P + 1];
  memset(f, 0, (size_t)n * sizeof(double));
  if (c == 0.0) {
    return;
  }
  ElemVx D = delta(e);
  double x[3], xd[3];
  elem_vx_eval(e, &D, q, x);
  elem_vx_eval(e, &D, v, xd);
  vaxpy(xd, -1.0, D.c); /* static parts do not move */
  double l = vnorm(x);
  if (!(l > 0.0)) {
    return;
  }
  double ev[3] = {x[0] / l, x[1] / l, x[2] / l}, rate = vdot(ev, xd);
  /* F_k = -c (e . xd) w_k e */
  for (int k = 0; k < D.n; k++) {
    vaxpy(f + 3 * D.blk[k], -c * rate * D.w[k], ev);
  }
  /* dF_k/dv_l = -c w_k w_l e e^T; dF_k/dx_l = -c w_k w_l / l (e (x) (I - e e^T) xd +
   * (e . xd)(I - e e^T)) */
  double P[9], pxd[3];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      P[3 * i + j] = (i == j ? 1.0 : 0.0) - ev[i] * ev[j];
    }
  }
  for (int i = 0; i < 3; i++) {
    pxd[i] = P[3 * i] * xd[0] + P[3 * i + 1] * xd[1] + P[3 * i + 2] * xd[2];
  }
  for (int a = 0; a < D.n; a++) {
    for (int b = 0; b < D.n; b++) {
      double w = -c * D.w[a] * D.w[b];
      int ra = 3 * D.blk[a], cb = 3 * D.blk[b];
      for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
          if (Fv) {
            Fv[(ra + i) * n + cb + j] += w * ev[i] * ev[j];
          }
          if (Fq) {
            Fq[(ra + i) * n + cb + j] += w / l * (ev[i] * pxd[j] + rate * P[3 * i + j]);
          }
        }
      }
    }
  }
}

const mbsElementKindTable mbs_elem_spring = {
    .name = "spring",
    .potential = potential,
    .gradient = gradient,
    .discrete_gradient = discrete_gradient,
    .force = force,
    .dissipative = 1,
};

void mbs_elem_spring_make(mbsElem *e, double k, double c, double rest, int rest_default) {
  e->kind = MBS_ELEM_SPRING;
  e->iparam[2] = -1;
  e->param[ELEM_P] = k;
  e->param[ELEM_P + 1] = c;
  e->param[ELEM_P + 2] = rest;
  e->iparam[3] = rest_default;
}

void elem_spring_rebase(const mbsModel *m, mbsElem *e, const double *q) {
  if (!e->iparam[3]) {
    return;
  }
  double p0[3], p1[3], D[9];
  mbs_elem_side_at(m, e, 0, q, D, p0);
  mbs_elem_side_at(m, e, 1, q, D, p1);
  vsub(p1, p1, p0);
  e->param[ELEM_P + 2] = vnorm(p1);
}
