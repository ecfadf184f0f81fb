/* joint_coords.c: the coordinates of a joint and their rates (/joints/coordinates,
 * /joints/rates), from the body-fixed joint frames d'_a and points p' of its two sides
 * (seed 004 eq. 4-6), which coincide at t = 0, so every coordinate is 0 there.
 * With R_ab = d'_a(I) . d'_b(II) the rotation of frame II in frame I:
 *   revolute: theta = atan2(R_21, R_11), the angle about d'_1 (as the rotational spring);
 *   prismatic: x = d'_1(I) . (p'_II - p'_I);  cylindrical: theta, x;
 *   universal: theta_1 = atan2(R_21, R_11) about the first axis, theta_2 = atan2(R_02, R_00)
 *     about the second (R = R_1(theta_1) R_2(theta_2));
 *   planar: x_2 = d'_2(I) . (p'_II - p'_I), x_3 = d'_3(I) . (...), theta about the normal d'_1;
 *   slide_on_beam: s, the material coordinate of the body's point along the beam [m];
 *   spherical: the rotation vector of R (components in frame I); its rates are the relative
 *     angular velocity omega_II - omega_I in frame I (omega = 1/2 sum_a d'_a x d'_a').
 * Angles are returned in (-pi, pi]; the caller makes them continuous in time. */
#include <math.h>
#include <string.h>

#include "elements/elem_internal.h"
#include "util/vec3.h"

/* frame vectors and their rates (dd NULL: not wanted) of side s */
static void side_frame(const mbsElem *e, int s, const double *q, const double *v, double d[3][3],
                       double dd[3][3]) {
  for (int a = 0; a < 3; a++) {
    ElemVx X = elem_dir(e, s, a);
    elem_vx_eval(e, &X, q, d[a]);
    if (dd) {
      elem_vx_rate(e, &X, v, dd[a]);
    }
  }
}

/* atan2(y, x) and its rate */
static double angle(double y, double x, double yd, double xd, double *rate) {
  double r2 = x * x + y * y;
  *rate = r2 > 0.0 ? (x * yd - y * xd) / r2 : 0.0;
  return atan2(y, x);
}

int mbs_joint_coordinates(const mbsModel *m, int j, const double *q, const double *v, double *x_out,
                          double *xd_out, int angular[3]) {
  const mbsElem *e = &m->joint_frame[j];
  double dI[3][3], dII[3][3], dIr[3][3], dIIr[3][3], R[3][3], Rd[3][3];
  /* what the caller does not want is worked out into these and dropped (the same
   * operations for what it wants: the same bits either way) */
  double xs[3], xds[3], *x = x_out ? x_out : xs, *xd = xd_out ? xd_out : xds;
  for (int k = 0; k < 3; k++) {
    x[k] = xd[k] = NAN;
    angular[k] = 0;
  }
  mbsJointType type = m->joint_type[j];
  if (type == MBS_JOINT_SLIDE_ON_BEAM) {
    /* the material coordinate s along the beam, the joint's own coordinate (slide.c) */
    for (int k = 0; k < m->nelem; k++) {
      const mbsElem *el = &m->elem[k];
      if (el->kind == MBS_ELEM_SLIDE && el->joint == j && el->iparam[3]) {
        /* absolute: the foot point, by projection */
        x[0] = mbs_slide_foot(m, el, q, v, &xd[0]);
        return 1;
      }
      if (el->kind == MBS_ELEM_SLIDE && el->joint == j) {
        x[0] = q[el->qidx[el->nq - 1]];
        xd[0] = v[el->qidx[el->nq - 1]];
        return 1;
      }
    }
    return 0;
  }
  /* a point mass (1 block) has no frame: no angles at a spherical joint */
  if (type == MBS_JOINT_FIXED || type == MBS_JOINT_DISTANCE || e->iparam[0] == 1 ||
      e->iparam[1] == 1) {
    return 0;
  }
  /* the frames' rates, R_ab and its rate, p'_II - p'_I and its rate: each where the
   * joint's coordinates or rates wanted need it (a spherical joint's rates need the
   * frames and their rates alone) */
  int spherical = type == MBS_JOINT_SPHERICAL;
  int rates = xd_out != NULL || !spherical;
  side_frame(e, 0, q, v, dI, rates ? dIr : NULL);
  side_frame(e, 1, q, v, dII, rates ? dIIr : NULL);
  if (x_out || !spherical) {
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) {
        R[a][b] = vdot(dI[a], dII[b]);
        Rd[a][b] = spherical ? 0.0 : vdot(dIr[a], dII[b]) + vdot(dI[a], dIIr[b]);
      }
    }
  }
  double r[3] = {0.0, 0.0, 0.0}, rd[3] = {0.0, 0.0, 0.0};
  if (type == MBS_JOINT_PRISMATIC || type == MBS_JOINT_CYLINDRICAL || type == MBS_JOINT_PLANAR) {
    ElemVx p1 = elem_point(e, 0), p2 = elem_point(e, 1);
    ElemVx D = elem_vx_lin(1.0, &p2, -1.0, &p1);
    elem_vx_eval(e, &D, q, r);
    elem_vx_rate(e, &D, v, rd);
  }
  switch (type) {
    case MBS_JOINT_REVOLUTE:
    case MBS_JOINT_CYLINDRICAL:
      x[0] = angle(R[2][1], R[1][1], Rd[2][1], Rd[1][1], &xd[0]);
      angular[0] = 1;
      if (type == MBS_JOINT_REVOLUTE) {
        return 1;
      }
      x[1] = vdot(dI[0], r);
      xd[1] = vdot(dIr[0], r) + vdot(dI[0], rd);
      return 2;
    case MBS_JOINT_PRISMATIC:
      x[0] = vdot(dI[0], r);
      xd[0] = vdot(dIr[0], r) + vdot(dI[0], rd);
      return 1;
    case MBS_JOINT_UNIVERSAL:
      x[0] = angle(R[2][1], R[1][1], Rd[2][1], Rd[1][1], &xd[0]);
      x[1] = angle(R[0][2], R[0][0], Rd[0][2], Rd[0][0], &xd[1]);
      angular[0] = angular[1] = 1;
      return 2;
    case MBS_JOINT_PLANAR:
      for (int k = 0; k < 2; k++) {
        x[k] = vdot(dI[k + 1], r);
        xd[k] = vdot(dIr[k + 1], r) + vdot(dI[k + 1], rd);
      }
      x[2] = angle(R[2][1], R[1][1], Rd[2][1], Rd[1][1], &xd[2]);
      angular[2] = 1;
      return 3;
    case MBS_JOINT_SPHERICAL: {
      /* rotation vector: theta n with cos theta = (tr R - 1)/2, n from the skew part */
      if (x_out) {
        double w[3] = {R[2][1] - R[1][2], R[0][2] - R[2][0], R[1][0] - R[0][1]};
        double sn = 0.5 * vnorm(w), cs = 0.5 * (R[0][0] + R[1][1] + R[2][2] - 1.0);
        double th = atan2(sn, cs);
        double f = sn > 1e-12 ? th / (2.0 * sn) : 0.5;
        for (int k = 0; k < 3; k++) {
          x[k] = f * w[k];
        }
      }
      /* relative angular velocity, world, then in frame I */
      if (xd_out) {
        double om[3] = {0.0, 0.0, 0.0}, t3[3];
        for (int a = 0; a < 3; a++) {
          vcross(t3, dII[a], dIIr[a]);
          vaxpy(om, 0.5, t3);
          vcross(t3, dI[a], dIr[a]);
          vaxpy(om, -0.5, t3);
        }
        for (int k = 0; k < 3; k++) {
          xd[k] = vdot(om, dI[k]);
        }
      }
      return 3;
    }
    default:
      return 0;
  }
}
