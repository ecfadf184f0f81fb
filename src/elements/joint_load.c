/* joint_load.c: a torque about, or a force along, a joint axis, equal and opposite on the
 * joint's two bodies (seed 000 Remark 2.2: joint forces are internal, so Newton's third law
 * must hold in F; eq. 67-68 for the reaction wheels of the spacecraft).
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
 *   param[24] = F [N], iparam[2] = profile. */
#include <string.h>

#include "elements/elem_internal.h"
#include "util/vec3.h"

static void joint_torque(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                         double t, double *f, double *Fq, double *Fv) {
  (void)v;
  (void)Fv;
  int n = e->nq, naive = e->iparam[3] == MBS_TORQUE_NAIVE;
  double tau = e->param[ELEM_P] * mbs_elem_profile(m, e->iparam[2], t, NULL);
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

static void joint_force(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                        double t, double *f, double *Fq, double *Fv) {
  (void)v;
  (void)Fv;
  int n = e->nq;
  double F = e->param[ELEM_P] * mbs_elem_profile(m, e->iparam[2], t, NULL);
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

const mbsElementKindTable mbs_elem_joint_torque = {
    .name = "joint_torque",
    .force = joint_torque,
};

const mbsElementKindTable mbs_elem_joint_force = {
    .name = "joint_force",
    .force = joint_force,
};
