/* torque.c: a torque m on a rigid body through contravariant directors.
 * Director forces f^i = 1/2 m x d^i (seed 000 eq. 41); evaluated by the integrators at the
 * midpoint directors, this is eq. 61 and gives J_{n+1} - J_n = dt m exactly (eq. 64), because
 * d_i x (m x d^i) = (d_i . d^i) m - (d_i . m) d^i = 2 m for any non-degenerate triad.
 * param[0..2] = value, iparam[0] = frame (world | body: m = value^k d_k), param[6] = profile
 * factor. */
#include "mbsim/elements.h"

#include <string.h>

#include "util/vec3.h"

static void force(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                  double *f, double *Fq, double *Fv) {
  (void)m;
  (void)v;
  (void)t;
  (void)Fv;
  double d[9], dcon[9], a[9];
  for (int i = 0; i < 9; i++) {
    d[i] = q[e->qidx[3 + i]];
  }
  double vol = mbs_contravariant_directors(dcon, d);
  double scale = e->param[6];
  int body_frame = (e->iparam[0] == MBS_FRAME_BODY);
  double mt[3];
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
  for (int i = 0; i < 3; i++) {
    vcross(f + 3 + 3 * i, mt, dcon + 3 * i);
    for (int c = 0; c < 3; c++) {
      f[3 + 3 * i + c] *= 0.5;
    }
  }
  if (!Fq) {
    return;
  }
  /* d d^i / d d_j = (d a_i / d d_j) / vol - d^i (x) a_j / vol, with a_i = d_j x d_k and
   * d vol / d d_j = a_j; then d f^i = 1/2 [m]x d d^i (+ the follower part of m) */
  for (int i = 0; i < 9; i++) {
    a[i] = dcon[i] * vol;
  }
  double Sm[9];
  vskew(Sm, mt);
  for (int i = 0; i < 3; i++) {
    int j1 = (i + 1) % 3, j2 = (i + 2) % 3;
    for (int j = 0; j < 3; j++) {
      /* D = d d^i / d d_j (3x3) */
      double D[9] = {0};
      if (j == j1) {
        /* a_i = d_j1 x d_j2: d/d d_j1 = -[d_j2]x */
        double S[9];
        vskew(S, d + 3 * j2);
        for (int r = 0; r < 9; r++) {
          D[r] = -S[r] / vol;
        }
      } else if (j == j2) {
        double S[9];
        vskew(S, d + 3 * j1);
        for (int r = 0; r < 9; r++) {
          D[r] = S[r] / vol;
        }
      }
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          D[3 * r + c] -= dcon[3 * i + r] * a[3 * j + c] / vol;
        }
      }
      /* 1/2 [m]x D */
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          double s = 0.0;
          for (int k = 0; k < 3; k++) {
            s += Sm[3 * r + k] * D[3 * k + c];
          }
          Fq[(3 + 3 * i + r) * 12 + 3 + 3 * j + c] += 0.5 * s;
        }
      }
      /* follower torque: d m / d d_j = value^j I, so d f^i += -1/2 [d^i]x value^j */
      if (body_frame) {
        double Sd[9];
        vskew(Sd, dcon + 3 * i);
        for (int r = 0; r < 3; r++) {
          for (int c = 0; c < 3; c++) {
            Fq[(3 + 3 * i + r) * 12 + 3 + 3 * j + c] -= 0.5 * scale * e->param[j] * Sd[3 * r + c];
          }
        }
      }
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
