/* joint_load.c: a torque about, or a force along, a joint axis, equal and opposite on the
 * joint's two bodies, given (joint_torque, joint_force) or by a control law (joint_control) (seed
 * 000 Remark 2.2: joint forces are internal, so Newton's third law must hold in F; eq. 67-68 for
 * the reaction wheels of the spacecraft).
 *
 * joint_torque (revolute, cylindrical): m = tau(t) a with a = d'_1 of the first body (the
 * joint axis, fixed to body 1 at t = 0, seed 004 eq. 4-6); +m on the second body, -m on the
 * first, each as director forces f^i = 1/2 (+-m) x d^i (contravariant, seed 000 eq. 61) or
 * 1/2 (+-m) x d_i (naive, eq. 70). With the same a for both bodies the torques cancel, and
 * by eq. 64 (contravariant) the discrete change of the total angular momentum is exactly 0
 * (eq. 69).
 *   param[24] = tau [N m], iparam[2] = profile, iparam[3] = method (mbsTorqueMethod).
 * joint_force (prismatic, cylindrical): f = F(t) a on the second body at its joint point
 * p_2 = phi + c^i d_i, and -f on the first body at the material point that coincides with
 * p_2 now, whose convected coordinates are theta^i = d^i . (p_2 - phi_1) (seed 000 eq. 16-19
 * with the contravariant directors of the triad at hand). Both act at one point along one
 * line, so linear and angular momentum are conserved exactly for any triad.
 *   param[24] = F [N], iparam[2] = profile.
 * joint_control: the torque (iparam[3] = 0, contravariant, as joint_torque) or force
 * (iparam[3] = 1, as joint_force) tau = -kp (u - u*(t)) - kd (u' - u*'(t)) - ki z of a PID law
 * on the
 * joint's coordinate u (the angle theta of /joints/coordinates, or the displacement d'_1(I) .
 * (p'_II - p'_I)) and its rate u' = grad u . v, against the target u* = value x profile(t)
 * with the profile's exact derivative (an angle error taken in (-pi, pi]). The integrators
 * evaluate it at their force point (q, v) and book f . dq as external work, so the energy
 * balance closes; it is applied like joint_torque / joint_force, so the momentum balances
 * hold as for them. z, the integral of the error, is run state (model.h ctrl_state): within
 * the step from t_n, z(t) = z_n + (t - t_n) e(q, t); after it the solver sets z_{n+1} = z_n +
 * dt/2 (e_n + e_{n+1}) (integrator.c).
 *   param[24] = kp, param[25] = kd, param[26] = ki, param[27] = target value [rad or m],
 *   param[28] = the law's slot k in ctrl_state, iparam[2] = the target's profile,
 *   iparam[3] = 0 torque, 1 force. */
#include <math.h>
#include <string.h>

#include "elements/elem_internal.h"
#include "elements/make.h"
#include "util/vec3.h"

#define PI 3.14159265358979323846

/* the director forces of the torque tau a (+ on the second body, - on the first) into f, their
 * derivative at fixed tau added into Fq if not NULL */
static void torque_forces(const mbsElem *e, const double *q, double tau, int naive, double *f,
                          double *Fq) {
  int n = e->nq;
  ElemVx A = elem_dir(e, 0, 0);
  double a[3], mt[3];
  elem_vx_eval(e, &A, q, a);
  memset(f, 0, (size_t)n * sizeof(double));
  for (int s = 0; s < 2; s++) {
    if (e->iparam[s] != 4) {
      continue;
    }
    /* +m on the second body, -m on the first */
    double sign = s == 1 ? 1.0 : -1.0, d[9], dfd[81], dfm[27];
    int off = elem_side_offset(e, s);
    for (int c = 0; c < 3; c++) {
      mt[c] = sign * tau * a[c];
    }
    elem_triad(e, q, off / 3, d);
    elem_torque_forces(d, mt, naive, f + off + 3, Fq ? dfd : NULL, Fq ? dfm : NULL);
    if (!Fq) {
      continue;
    }
    for (int r = 0; r < 9; r++) {
      for (int c = 0; c < 9; c++) {
        Fq[(off + 3 + r) * n + off + 3 + c] += dfd[r * 9 + c];
      }
      /* through the axis: d m / d x_k = sign tau w_k I */
      for (int k = 0; k < A.n; k++) {
        for (int c = 0; c < 3; c++) {
          Fq[(off + 3 + r) * n + 3 * A.blk[k] + c] += dfm[r * 3 + c] * sign * tau * A.w[k];
        }
      }
    }
  }
}

/* the forces of F a on the two joint points into f, their derivative at fixed F added into Fq
 * if not NULL */
static void axial_forces(const mbsElem *e, const double *q, double F, double *f, double *Fq) {
  int n = e->nq;
  ElemVx A = elem_dir(e, 0, 0), P = elem_point(e, 1);
  double a[3], fw[3], x[3];
  elem_vx_eval(e, &A, q, a);
  elem_vx_eval(e, &P, q, x);
  for (int c = 0; c < 3; c++) {
    fw[c] = F * a[c];
  }
  memset(f, 0, (size_t)n * sizeof(double));

  /* the second body: f at its body-fixed joint point (seed 000 eq. 18-19) */
  for (int k = 0; k < P.n; k++) {
    vaxpy(f + 3 * P.blk[k], P.w[k], fw);
    if (Fq) {
      for (int j = 0; j < A.n; j++) {
        for (int c = 0; c < 3; c++) {
          Fq[(3 * P.blk[k] + c) * n + 3 * A.blk[j] + c] += P.w[k] * F * A.w[j];
        }
      }
    }
  }
  if (e->iparam[0] != 4) {
    return;
  }

  /* the first body: -f at the material point now at x, theta^i = d^i . (x - phi_1) */
  double d[9], dcon[9], rel[3], theta[3];
  elem_triad(e, q, 0, d);
  mbs_contravariant_directors(dcon, d);
  for (int c = 0; c < 3; c++) {
    rel[c] = x[c] - q[e->qidx[c]];
  }
  for (int i = 0; i < 3; i++) {
    theta[i] = vdot(dcon + 3 * i, rel);
  }
  vaxpy(f, -1.0, fw);
  for (int i = 0; i < 3; i++) {
    vaxpy(f + 3 + 3 * i, -theta[i], fw);
  }
  if (!Fq) {
    return;
  }
  double dD[81];
  elem_contravariant_derivative(d, dD);
  for (int j = 0; j < A.n; j++) {
    for (int c = 0; c < 3; c++) {
      /* d(-f)/dx_j and d(-theta^i f)/dx_j through the axis */
      Fq[c * n + 3 * A.blk[j] + c] -= F * A.w[j];
      for (int i = 0; i < 3; i++) {
        Fq[(3 + 3 * i + c) * n + 3 * A.blk[j] + c] -= theta[i] * F * A.w[j];
      }
    }
  }
  for (int i = 0; i < 3; i++) {
    /* - f (x) d theta^i: wrt phi_1 (-d^i), the blocks of x (w_k d^i), the directors d_j of
     * the first body ((d d^i / d d_j)^T rel) */
    for (int r = 0; r < 3; r++) {
      int row = (3 + 3 * i + r) * n;
      for (int c = 0; c < 3; c++) {
        Fq[row + c] += fw[r] * dcon[3 * i + c];
      }
      for (int k = 0; k < P.n; k++) {
        for (int c = 0; c < 3; c++) {
          Fq[row + 3 * P.blk[k] + c] -= fw[r] * P.w[k] * dcon[3 * i + c];
        }
      }
      for (int j = 0; j < 3; j++) {
        for (int c = 0; c < 3; c++) {
          double dth = 0.0;
          for (int l = 0; l < 3; l++) {
            dth += dD[(3 * i + l) * 9 + 3 * j + c] * rel[l];
          }
          Fq[row + 3 + 3 * j + c] -= fw[r] * dth;
        }
      }
    }
  }
}

static void joint_torque(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                         double t, double *f, double *Fq, double *Fv) {
  (void)v;
  (void)Fv;
  double tau = e->param[ELEM_P] * mbs_elem_profile(m, e->iparam[2], t, NULL);
  torque_forces(e, q, tau, e->iparam[3] == MBS_TORQUE_NAIVE, f, Fq);
}

static void joint_force(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                        double t, double *f, double *Fq, double *Fv) {
  (void)v;
  (void)Fv;
  axial_forces(e, q, e->param[ELEM_P] * mbs_elem_profile(m, e->iparam[2], t, NULL), f, Fq);
}

/* x in (-pi, pi] */
static double wrap(double x) {
  return x - 2.0 * PI * ceil((x - PI) / (2.0 * PI));
}

/* the controlled coordinate u (the angle about d'_1, or the displacement d'_1(I) . (p'_II -
 * p'_I) along it) at the global state q, its local gradient gu and, if Hu is not NULL, its
 * Hessian (both written here) */
static double coordinate(const mbsElem *e, const double *q, double *gu, double *Hu) {
  int n = e->nq;
  if (e->iparam[3] == 0) {
    return elem_joint_angle(e, q, gu, Hu);
  }
  ElemVx A = elem_dir(e, 0, 0), p1 = elem_point(e, 0), p2 = elem_point(e, 1);
  ElemVx B = elem_vx_lin(1.0, &p2, -1.0, &p1);
  memset(gu, 0, (size_t)n * sizeof(double));
  if (Hu) {
    memset(Hu, 0, (size_t)(n * n) * sizeof(double));
  }
  return elem_dot(e, &A, &B, q, 1.0, gu, Hu);
}

/* the error u - u*(t) (an angle's in (-pi, pi]) with grad u into gu and, if Hu is not NULL,
 * its Hessian; the target's rate into rate */
static double control_error(const mbsModel *m, const mbsElem *e, const double *q, double t,
                            double *gu, double *Hu, double *rate) {
  double target = e->param[ELEM_P + 3] * mbs_elem_profile(m, e->iparam[2], t, rate);
  *rate *= e->param[ELEM_P + 3];
  double err = coordinate(e, q, gu, Hu) - target;
  return e->iparam[3] == 0 ? wrap(err) : err;
}

int mbs_joint_control_slot(const mbsElem *e) {
  return (int)e->param[ELEM_P + 4];
}

double mbs_joint_control_error(const mbsModel *m, const mbsElem *e, const double *q, double t) {
  double gu[ELEM_SIDES_MAXQ], rate;
  return control_error(m, e, q, t, gu, NULL, &rate);
}

/* the integral of the error at t within the step from t_n: z_n + (t - t_n) err */
static double control_integral(const mbsModel *m, const mbsElem *e, double t, double err,
                               double *dz_derr) {
  int k = mbs_joint_control_slot(e);
  double tn = m->ctrl_state[2 * m->nctrl];
  *dz_derr = t - tn;
  return m->ctrl_state[k] + (t - tn) * err;
}

double mbs_joint_control_value(const mbsModel *m, const mbsElem *e, const double *q,
                               const double *v, double t) {
  double gu[ELEM_SIDES_MAXQ], vl[ELEM_SIDES_MAXQ], rate, ud = 0.0, dz;
  double err = control_error(m, e, q, t, gu, NULL, &rate);
  mbs_elem_gather(e, v, vl);
  for (int i = 0; i < e->nq; i++) {
    ud += gu[i] * vl[i];
  }
  return -e->param[ELEM_P] * err - e->param[ELEM_P + 1] * (ud - rate) -
         e->param[ELEM_P + 2] * control_integral(m, e, t, err, &dz);
}

/* tau(q, v, t) = -kp e - kd (u' - u*') - ki z, e = u - u*, applied as a joint torque or
 * force: f = tau f1 with f1 the forces of a unit value, so Fq = tau dF1/dq + f1 (x) dtau/dq
 * and Fv = f1 (x) dtau/dv with dtau/dq = -(kp + ki (t - t_n)) grad u - kd H_u v, dtau/dv =
 * -kd grad u (u' = grad u . v) */
static void joint_control(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                          double t, double *f, double *Fq, double *Fv) {
  int n = e->nq;
  double kp = e->param[ELEM_P], kd = e->param[ELEM_P + 1], dz;
  double tau = mbs_joint_control_value(m, e, q, v, t);
  control_integral(m, e, t, 0.0, &dz);
  kp += e->param[ELEM_P + 2] * dz;
  double f1[ELEM_SIDES_MAXQ], F1[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ];
  if (Fq) {
    memset(F1, 0, (size_t)(n * n) * sizeof(double));
  }
  if (e->iparam[3] == 0) {
    torque_forces(e, q, 1.0, 0, f1, Fq ? F1 : NULL);
  } else {
    axial_forces(e, q, 1.0, f1, Fq ? F1 : NULL);
  }
  for (int i = 0; i < n; i++) {
    f[i] = tau * f1[i];
  }
  if (!Fq && !Fv) {
    return;
  }
  double gu[ELEM_SIDES_MAXQ], Hu[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ], vl[ELEM_SIDES_MAXQ];
  double dq[ELEM_SIDES_MAXQ];
  coordinate(e, q, gu, Fq ? Hu : NULL);
  mbs_elem_gather(e, v, vl);
  for (int j = 0; Fq && j < n; j++) {
    double hv = 0.0;
    for (int l = 0; l < n; l++) {
      hv += Hu[j * n + l] * vl[l];
    }
    dq[j] = -kp * gu[j] - kd * hv;
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      if (Fq) {
        Fq[i * n + j] += tau * F1[i * n + j] + f1[i] * dq[j];
      }
      if (Fv) {
        Fv[i * n + j] -= kd * f1[i] * gu[j];
      }
    }
  }
}

const mbsElementKindTable mbs_elem_joint_control = {
    .name = "joint_control",
    .force = joint_control,
};

const mbsElementKindTable mbs_elem_joint_torque = {
    .name = "joint_torque",
    .force = joint_torque,
};

const mbsElementKindTable mbs_elem_joint_force = {
    .name = "joint_force",
    .force = joint_force,
};

void mbs_elem_joint_torque_make(mbsElem *e, double tau, int profile, int method) {
  e->kind = MBS_ELEM_JOINT_TORQUE;
  e->param[ELEM_P] = tau;
  e->iparam[2] = profile;
  e->iparam[3] = method;
}

void mbs_elem_joint_force_make(mbsElem *e, double force, int profile) {
  e->kind = MBS_ELEM_JOINT_FORCE;
  e->param[ELEM_P] = force;
  e->iparam[2] = profile;
}

void mbs_elem_joint_control_make(mbsElem *e, double kp, double kd, double ki, double target,
                                 int profile, int slot, int force) {
  e->kind = MBS_ELEM_JOINT_CONTROL;
  e->param[ELEM_P] = kp;
  e->param[ELEM_P + 1] = kd;
  e->param[ELEM_P + 2] = ki;
  e->param[ELEM_P + 3] = target;
  e->param[ELEM_P + 4] = slot;
  e->iparam[2] = profile;
  e->iparam[3] = force;
}
