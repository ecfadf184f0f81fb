/* elem_common.c: linear vector expressions over an element's local nodes, bilinear forms
 * with their gradients and Hessians, and the director forces of a torque (elem_internal.h) */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "elements/elem_internal.h"
#include "elements/make.h"
#include "util/vec3.h"

int elem_side_offset(const mbsElem *e, int s) {
  return s == 0 ? 0 : 3 * e->iparam[0];
}

/* the model's point expression over the element's local blocks */
static ElemVx from_weights(const mbsPointWeights *pw) {
  ElemVx v;
  memset(&v, 0, sizeof(v));
  v.n = pw->n;
  for (int k = 0; k < pw->n; k++) {
    v.blk[k] = pw->node[k];
    v.w[k] = pw->w[k];
  }
  vcopy(v.c, pw->c);
  return v;
}

ElemVx elem_dir(const mbsElem *e, int s, int a) {
  mbsPointWeights pw;
  mbs_dir_weights(&pw, e->iparam[s], s == 0 ? 0 : e->iparam[0], e->param + 12 * s + 3 * a);
  return from_weights(&pw);
}

ElemVx elem_point(const mbsElem *e, int s) {
  mbsPointWeights pw;
  mbs_point_weights(&pw, e->iparam[s], s == 0 ? 0 : e->iparam[0], e->param + 12 * s + 9);
  return from_weights(&pw);
}

ElemVx elem_vx_lin(double sa, const ElemVx *A, double sb, const ElemVx *B) {
  ElemVx v;
  memset(&v, 0, sizeof(v));
  for (int c = 0; c < 3; c++) {
    v.c[c] = sa * A->c[c] + sb * B->c[c];
  }
  /* merge equal blocks so that the expression stays within 8 terms */
  const ElemVx *src[2] = {A, B};
  double sc[2] = {sa, sb};
  for (int p = 0; p < 2; p++) {
    for (int k = 0; k < src[p]->n; k++) {
      int slot = -1;
      for (int j = 0; j < v.n; j++) {
        if (v.blk[j] == src[p]->blk[k]) {
          slot = j;
        }
      }
      if (slot < 0) {
        assert(v.n < 8);
        slot = v.n++;
        v.blk[slot] = src[p]->blk[k];
      }
      v.w[slot] += sc[p] * src[p]->w[k];
    }
  }
  return v;
}

void elem_vx_eval(const mbsElem *e, const ElemVx *v, const double *q, double out[3]) {
  vcopy(out, v->c);
  for (int k = 0; k < v->n; k++) {
    for (int c = 0; c < 3; c++) {
      out[c] += v->w[k] * q[e->qidx[3 * v->blk[k] + c]];
    }
  }
}

void elem_vx_rate(const mbsElem *e, const ElemVx *X, const double *v, double out[3]) {
  ElemVx h = *X;
  h.c[0] = h.c[1] = h.c[2] = 0.0;
  elem_vx_eval(e, &h, v, out);
}

double elem_dot(const mbsElem *e, const ElemVx *A, const ElemVx *B, const double *q, double s,
                double *g, double *H) {
  assert(e->nq <= ELEM_SIDES_MAXQ);
  double a[3], b[3];
  elem_vx_eval(e, A, q, a);
  elem_vx_eval(e, B, q, b);
  int n = e->nq;
  if (g) {
    /* d(A . B)/dx_k = wa_k B + wb_k A */
    for (int k = 0; k < A->n; k++) {
      vaxpy(g + 3 * A->blk[k], s * A->w[k], b);
    }
    for (int k = 0; k < B->n; k++) {
      vaxpy(g + 3 * B->blk[k], s * B->w[k], a);
    }
  }
  if (H) {
    /* d2(A . B)/dx_k dx_l = (wa_k wb_l + wb_k wa_l) I3 */
    for (int i = 0; i < A->n; i++) {
      for (int j = 0; j < B->n; j++) {
        double h = s * A->w[i] * B->w[j];
        int bi = 3 * A->blk[i], bj = 3 * B->blk[j];
        for (int c = 0; c < 3; c++) {
          H[(bi + c) * n + bj + c] += h;
          H[(bj + c) * n + bi + c] += h;
        }
      }
    }
  }
  return vdot(a, b);
}

void elem_triad(const mbsElem *e, const double *q, int blk, double d[9]) {
  for (int i = 0; i < 9; i++) {
    d[i] = q[e->qidx[3 * blk + 3 + i]];
  }
}

void elem_torque_forces(const double d[9], const double m[3], int naive, double f[9], double *dfd,
                        double *dfm) {
  double D[9];
  if (naive) {
    memcpy(D, d, sizeof(D));
  } else {
    mbs_contravariant_directors(D, d);
  }
  for (int i = 0; i < 3; i++) {
    vcross(f + 3 * i, m, D + 3 * i);
    for (int c = 0; c < 3; c++) {
      f[3 * i + c] *= 0.5;
    }
  }
  if (dfm) {
    /* d(1/2 m x D^i)/dm = -1/2 [D^i]x */
    for (int i = 0; i < 3; i++) {
      double S[9];
      vskew(S, D + 3 * i);
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          dfm[(3 * i + r) * 3 + c] = -0.5 * S[3 * r + c];
        }
      }
    }
  }
  if (!dfd) {
    return;
  }
  memset(dfd, 0, 81 * sizeof(double));
  double Sm[9];
  vskew(Sm, m);
  if (naive) {
    /* d f_i / d d_j = 1/2 [m]x delta_ij */
    for (int i = 0; i < 3; i++) {
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          dfd[(3 * i + r) * 9 + 3 * i + c] = 0.5 * Sm[3 * r + c];
        }
      }
    }
    return;
  }
  /* d f^i = 1/2 [m]x d d^i */
  double dD[81];
  elem_contravariant_derivative(d, dD);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          double s = 0.0;
          for (int k = 0; k < 3; k++) {
            s += Sm[3 * r + k] * dD[(3 * i + k) * 9 + 3 * j + c];
          }
          dfd[(3 * i + r) * 9 + 3 * j + c] = 0.5 * s;
        }
      }
    }
  }
}

void elem_contravariant_derivative(const double d[9], double dD[81]) {
  double D[9], a[9];
  double vol = mbs_contravariant_directors(D, d);
  /* d d^i / d d_j = (d a_i / d d_j) / vol - d^i (x) a_j / vol, with a_i = d_j x d_k (even
   * permutations, seed 000 eq. 9) and d vol / d d_j = a_j */
  for (int i = 0; i < 9; i++) {
    a[i] = D[i] * vol;
  }
  memset(dD, 0, 81 * sizeof(double));
  for (int i = 0; i < 3; i++) {
    int j1 = (i + 1) % 3, j2 = (i + 2) % 3;
    for (int j = 0; j < 3; j++) {
      double Dij[9] = {0};
      if (j == j1) {
        /* a_i = d_j1 x d_j2: d/d d_j1 = -[d_j2]x */
        double S[9];
        vskew(S, d + 3 * j2);
        for (int r = 0; r < 9; r++) {
          Dij[r] = -S[r] / vol;
        }
      } else if (j == j2) {
        double S[9];
        vskew(S, d + 3 * j1);
        for (int r = 0; r < 9; r++) {
          Dij[r] = S[r] / vol;
        }
      }
      for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) {
          dD[(3 * i + r) * 9 + 3 * j + c] = Dij[3 * r + c] - D[3 * i + r] * a[3 * j + c] / vol;
        }
      }
    }
  }
}

double elem_sinc(double x, double *dsinc) {
  /* series below |x| = 1e-3: the truncation error is below 1e-22 */
  if (fabs(x) < 1e-3) {
    double x2 = x * x;
    if (dsinc) {
      *dsinc = x * (-1.0 / 3.0 + x2 * (1.0 / 30.0 - x2 / 840.0));
    }
    return 1.0 - x2 / 6.0 * (1.0 - x2 / 20.0 * (1.0 - x2 / 42.0));
  }
  double s = sin(x) / x;
  if (dsinc) {
    *dsinc = (cos(x) - s) / x;
  }
  return s;
}

void elem_dir_dots(const mbsElem *e, const double *q, int ia, int ib, int jc, double *x, double *y,
                   double *gx, double *gy, double *Hx, double *Hy) {
  int n = e->nq;
  ElemVx a = elem_dir(e, 0, ia), b = elem_dir(e, 0, ib), c = elem_dir(e, 1, jc);
  memset(gx, 0, (size_t)n * sizeof(double));
  memset(gy, 0, (size_t)n * sizeof(double));
  if (Hx) {
    memset(Hx, 0, (size_t)(n * n) * sizeof(double));
    memset(Hy, 0, (size_t)(n * n) * sizeof(double));
  }
  *x = elem_dot(e, &a, &c, q, 1.0, gx, Hx);
  *y = elem_dot(e, &b, &c, q, 1.0, gy, Hy);
}

/* the revolute joint angle (see elem_internal.h) */
double elem_joint_angle(const mbsElem *e, const double *q, double *gt, double *H) {
  int n = e->nq;
  double c, s, gc[ELEM_SIDES_MAXQ], gs[ELEM_SIDES_MAXQ];
  double Hc[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ], Hs[ELEM_SIDES_MAXQ * ELEM_SIDES_MAXQ];
  elem_dir_dots(e, q, 1, 2, 1, &c, &s, gc, gs, H ? Hc : NULL, H ? Hs : NULL);
  double r2 = c * c + s * s;
  if (!(r2 > 0.0)) {
    memset(gt, 0, (size_t)n * sizeof(double));
    if (H) {
      memset(H, 0, (size_t)(n * n) * sizeof(double));
    }
    return 0.0;
  }
  /* grad theta = N / r2, N = c grad s - s grad c */
  for (int i = 0; i < n; i++) {
    gt[i] = (c * gs[i] - s * gc[i]) / r2;
  }
  if (H) {
    /* H = (grad s (x) grad c - grad c (x) grad s + c Hs - s Hc) / r2
     *     - N (x) (2 c grad c + 2 s grad s) / r2^2 */
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) {
        H[i * n + j] =
            (gs[i] * gc[j] - gc[i] * gs[j] + c * Hs[i * n + j] - s * Hc[i * n + j]) / r2 -
            gt[i] * (2.0 * c * gc[j] + 2.0 * s * gs[j]) / r2;
      }
    }
  }
  return atan2(s, c);
}

void mbs_elem_side_make(mbsElem *e, int s, const mbsElemSide *side) {
  assert(s == 0 || s == 1);
  assert(12 * s + 12 <= ELEM_P && ELEM_P + 3 <= MBS_ELEM_NPARAM);
  double *par = e->param + 12 * s;
  e->iparam[s] = side->nblock;
  e->attach[s] = side->attach;
  memcpy(par, side->frame, 9 * sizeof(double));
  vcopy(par + 9, side->point);
}

const double *mbs_elem_side_coords(const mbsElem *e, int s) {
  assert(s == 0 || s == 1);
  return e->param + 12 * s;
}

void mbs_elem_side_set_coords(mbsElem *e, int s, const double c[12]) {
  assert(s == 0 || s == 1);
  memcpy(e->param + 12 * s, c, 12 * sizeof(double));
}

void mbs_elem_side_set_point(mbsElem *e, int s, const double point[3]) {
  vcopy(e->param + 12 * s + 9, point);
}

void mbs_elem_side_at(const mbsModel *m, const mbsElem *e, int s, const double *q, double D[9],
                      double p[3]) {
  const double *par = e->param + 12 * s;
  int f = e->attach[s], n0 = m->attach_node[f];
  for (int a = 0; a < 3; a++) {
    if (e->iparam[s] == 4) {
      memset(D + 3 * a, 0, 3 * sizeof(double));
      for (int i = 0; i < 3; i++) {
        vaxpy(D + 3 * a, par[3 * a + i], q + 3 * (n0 + 1 + i));
      }
    } else {
      vcopy(D + 3 * a, par + 3 * a);
    }
  }
  mbs_attach_point(m, f, par + 9, q, p);
}

void mbs_elem_sides_rebase(const mbsModel *m, mbsElem *e, const double *q) {
  int s = e->iparam[1] == 4 ? 1 : 0, o = 1 - s;
  if (e->iparam[s] != 4) {
    return;
  }
  double Do[9], po[3], Ds[9], ps[3];
  mbs_elem_side_at(m, e, o, q, Do, po);
  mbs_elem_side_at(m, e, s, q, Ds, ps);
  int n0 = m->attach_node[e->attach[s]];
  double *par = e->param + 12 * s, rel[3];
  vsub(rel, po, q + 3 * n0);
  for (int i = 0; i < 3; i++) {
    const double *di = q + 3 * (n0 + 1 + i);
    for (int a = 0; a < 3; a++) {
      par[3 * a + i] = vdot(di, Do + 3 * a);
    }
    par[9 + i] = vdot(di, rel);
  }
}

void mbs_elem_rebase(const mbsModel *m, mbsElem *e, const double *q) {
  if (e->kind == MBS_ELEM_ROTATIONAL_SPRING) {
    mbs_elem_sides_rebase(m, e, q);
  } else if (e->kind == MBS_ELEM_SPRING) {
    elem_spring_rebase(m, e, q);
  }
}
