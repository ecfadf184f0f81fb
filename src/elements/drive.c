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
 * A computed-torque law (a joint_torque or joint_force load with control: {computed_torque:
 * reference, kp, kd}) is this row too: the law tau = M(q) (u*'' - kd e' - kp e) + h(q, v),
 * with the model's exact inverse dynamics, makes the joint's acceleration u'' = u*'' - kd e'
 * - kp e, so the error e = u - u* follows e'' + kd e' + kp e = 0 from its initial value and
 * rate: the joint coordinate is u*(t) + e(t) with e in closed form, and the torque (force)
 * of the law is the row's multiplier, the inverse dynamics of the whole model along that
 * motion. The row is invariant under rigid motions of both bodies, so momenta are
 * conserved as by the joint's other rows, and its work is booked as a drive's.
 *   param[24] = value [rad or m], iparam[2] = profile, iparam[3] = 0 revolute, 1 prismatic;
 *   computed torque: param[25] = 1, param[26] = kp, param[27] = kd, param[28] = e(0) [rad or
 *   m], param[29] = e'(0) (param[25] = 0: a motion, target value x profile(t)). */
#include <assert.h>
#include <math.h>

#include "elements/elem_internal.h"
#include "elements/make.h"

/* the error e(t) of e'' + kd e' + kp e = 0 from e(0) = e0, e'(0) = v0, and its rate and
 * acceleration: e = exp(s t) (e0 C + k S), s = -kd/2, k = v0 - s e0, b2 = kd^2/4 - kp, with
 * C = cos(w t), S = sin(w t)/w (b2 = -w^2 < 0) or C = cosh(b t), S = sinh(b t)/b (b2 = b^2),
 * S = t at b2 = 0: C' = b2 S, S' = C, so u = e0 C + k S has u'' = b2 u (no cancellation near
 * critical damping) */
static double error_motion(double kp, double kd, double e0, double v0, double t, double *rate,
                           double *accel) {
  double s = -0.5 * kd, b2 = 0.25 * kd * kd - kp, k = v0 - s * e0, C, S;
  if (b2 < 0.0) {
    double w = sqrt(-b2);
    C = cos(w * t);
    S = w * t == 0.0 ? t : sin(w * t) / w;
  } else if (b2 > 0.0) {
    double b = sqrt(b2);
    C = cosh(b * t);
    S = b * t == 0.0 ? t : sinh(b * t) / b;
  } else {
    C = 1.0;
    S = t;
  }
  double E = exp(s * t), u = e0 * C + k * S, du = e0 * b2 * S + k * C;
  *rate = E * (s * u + du);
  *accel = E * (s * s * u + 2.0 * s * du + b2 * u);
  return E * u;
}

double mbs_drive_target(const mbsModel *m, const mbsElem *e, double t, double *rate,
                        double *accel) {
  double f1 = 0.0, val = e->param[ELEM_P];
  double x = val * mbs_elem_profile(m, e->iparam[2], t, &f1), w = val * f1;
  double al = accel ? val * mbs_elem_profile_accel(m, e->iparam[2], t) : 0.0;
  if (e->param[ELEM_P + 1] != 0.0) {
    double er, ea;
    x += error_motion(e->param[ELEM_P + 2], e->param[ELEM_P + 3], e->param[ELEM_P + 4],
                      e->param[ELEM_P + 5], t, &er, &ea);
    w += er;
    al += ea;
  }
  if (rate) {
    *rate = w;
  }
  if (accel) {
    *accel = al;
  }
  return x;
}

/* the row as A . B - x*(t) */
static void row(const mbsModel *m, const mbsElem *e, double t, ElemVx *A, ElemVx *B, double *x) {
  double target = mbs_drive_target(m, e, t, NULL, NULL);
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

static double dot3(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* dg/dt and d2/ds2 g(q + s v, t + s): the rows are bilinear in q, so along the motion
 * A . B has the exact second derivative 2 A' . B' plus the terms of the target's rate w and
 * acceleration al (right derivatives: after a kink, the new motion). revolute, with
 * P = a2 . b2, Q = a3 . b2 and g = sin(th*) P - cos(th*) Q:
 *   g_t = w (cos th* P + sin th* Q)
 *   gdd = (al c - w^2 s) P + 2 w c P' + s P'' + (al s + w^2 c) Q + 2 w s Q' - c Q''
 * prismatic: g_t = -x*', gdd = 2 a1' . (p2' - p1') - x*'' */
static void constraint_rates(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                             double t, double *gt, double *gdd) {
  double w, al, th = mbs_drive_target(m, e, t, &w, &al);
  if (e->iparam[3] == 0) {
    ElemVx a2 = elem_dir(e, 0, 1), a3 = elem_dir(e, 0, 2), b2 = elem_dir(e, 1, 1);
    double A2[3], A3[3], B2[3], dA2[3], dA3[3], dB2[3];
    elem_vx_eval(e, &a2, q, A2);
    elem_vx_eval(e, &a3, q, A3);
    elem_vx_eval(e, &b2, q, B2);
    elem_vx_rate(e, &a2, v, dA2);
    elem_vx_rate(e, &a3, v, dA3);
    elem_vx_rate(e, &b2, v, dB2);
    double P = dot3(A2, B2), Q = dot3(A3, B2);
    double dP = dot3(dA2, B2) + dot3(A2, dB2), dQ = dot3(dA3, B2) + dot3(A3, dB2);
    double ddP = 2.0 * dot3(dA2, dB2), ddQ = 2.0 * dot3(dA3, dB2);
    double c = cos(th), s = sin(th);
    gt[0] = w * (c * P + s * Q);
    gdd[0] = (al * c - w * w * s) * P + 2.0 * w * c * dP + s * ddP + (al * s + w * w * c) * Q +
             2.0 * w * s * dQ - c * ddQ;
  } else {
    ElemVx a1 = elem_dir(e, 0, 0), p1 = elem_point(e, 0), p2 = elem_point(e, 1);
    ElemVx d = elem_vx_lin(1.0, &p2, -1.0, &p1);
    double dA[3], dD[3];
    elem_vx_rate(e, &a1, v, dA);
    elem_vx_rate(e, &d, v, dD);
    gt[0] = -w;
    gdd[0] = 2.0 * dot3(dA, dD) - al;
  }
}

const mbsElementKindTable mbs_elem_drive = {
    .name = "drive",
    .constraint = constraint,
    .constraint_hessian = constraint_hessian,
    .constraint_rates = constraint_rates,
};

void mbs_elem_drive_make(mbsElem *e, double value, int profile, int prismatic) {
  e->kind = MBS_ELEM_DRIVE;
  e->ncon = 1;
  e->param[ELEM_P] = value;
  e->iparam[2] = profile;
  e->iparam[3] = prismatic;
}

void mbs_elem_computed_torque_make(const mbsModel *m, mbsElem *e, double target, double kp,
                                   double kd, int profile, int force) {
  mbs_elem_drive_make(e, target, profile, force);
  e->param[ELEM_P + 1] = 1.0;
  e->param[ELEM_P + 2] = kp;
  e->param[ELEM_P + 3] = kd;
  /* the target at t = 0 is the joint's coordinate 0: e(0) = -target f(0), and e'(0) =
   * -target f'(0) + the joint's rate (mbs_elem_drive_initial_rate) */
  double rate, f0 = mbs_elem_profile(m, profile, 0.0, &rate);
  e->param[ELEM_P + 4] = -target * f0;
  e->param[ELEM_P + 5] = -target * rate;
}

void mbs_elem_drive_initial_rate(const mbsModel *m, mbsElem *e) {
  if (e->kind != MBS_ELEM_DRIVE || e->param[ELEM_P + 1] == 0.0) {
    return;
  }
  /* the joint's rate from the row (G v0 = -thetadot for an angle, +xdot for a displacement;
   * the row is exact at t = 0, where its target is the coordinate 0) */
  double g[1], G[MBS_TWO_BODY_MAXQ], gv = 0.0;
  assert(e->nq <= MBS_TWO_BODY_MAXQ);
  constraint(m, e, m->q0, 0.0, g, G);
  for (int i = 0; i < e->nq; i++) {
    gv += G[i] * m->v0[e->qidx[i]];
  }
  e->param[ELEM_P + 5] += e->iparam[3] ? gv : -gv;
}

int mbs_elem_drive_prismatic(const mbsElem *e) {
  return e->iparam[3];
}
