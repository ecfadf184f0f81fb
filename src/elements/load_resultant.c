/* load_resultant.c: the force and torque a load exerts on its second body (/loads/force),
 * from the element's generalized forces on that body's nodes: with f_phi on the reference
 * point and f^i on the directors, F = f_phi and the torque about a body-fixed point p is
 * M = sum_i d_i x f^i + (phi - p) x F (seed 000 eq. 33, as for joint reactions). The point is
 * the load's attachment point on that body (springs, joint loads: its joint or spring point;
 * a force: its application point, where M = 0; a torque: the reference point). A load whose
 * second body is static (ground) reports minus what it exerts on the first body. */
#include <assert.h>
#include <string.h>

#include "elements/elem_internal.h"
#include "util/vec3.h"

/* the generalized force of the element at (q, v, t): -grad V + F */
static void generalized(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                        double t, double *f) {
  const mbsElementKindTable *kind = mbs_element_kind(e->kind);
  double g[ELEM_SIDES_MAXQ];
  assert(e->nq <= ELEM_SIDES_MAXQ); /* loads are one- or two-sided kinds */
  memset(f, 0, (size_t)e->nq * sizeof(double));
  if (kind->gradient) {
    kind->gradient(m, e, q, g, NULL);
    for (int i = 0; i < e->nq; i++) {
      f[i] -= g[i];
    }
  }
  if (kind->force) {
    kind->force(m, e, q, v, t, g, NULL, NULL);
    for (int i = 0; i < e->nq; i++) {
      f[i] += g[i];
    }
  }
}

/* resultant of the local forces f of nb blocks from local block b0 about the point p */
static void resultant(const mbsElem *e, const double *q, const double *f, int b0, int nb,
                      const double p[3], double out[6]) {
  double F[3], M[3], arm[3], t3[3];
  vcopy(F, f + 3 * b0);
  memset(M, 0, sizeof(M));
  double phiv[3];
  for (int c = 0; c < 3; c++) {
    phiv[c] = q[e->qidx[3 * b0 + c]];
  }
  for (int i = 1; i < nb; i++) {
    double di[3];
    for (int c = 0; c < 3; c++) {
      di[c] = q[e->qidx[3 * (b0 + i) + c]];
    }
    vcross(t3, di, f + 3 * (b0 + i));
    vaxpy(M, 1.0, t3);
  }
  vsub(arm, phiv, p);
  vcross(t3, arm, F);
  vaxpy(M, 1.0, t3);
  vcopy(out, F);
  vcopy(out + 3, M);
}

void mbs_load_resultant(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                        double t, double out[6]) {
  double f[ELEM_SIDES_MAXQ], p[3];
  memset(out, 0, 6 * sizeof(double));
  generalized(m, e, q, v, t, f);
  switch (e->kind) {
    case MBS_ELEM_FORCE:
    case MBS_ELEM_TORQUE: {
      /* one body: the application point phi + Theta^i d_i on its frame (a torque: phi) */
      int nb = e->nq / 3;
      if (e->kind == MBS_ELEM_FORCE) {
        mbs_attach_point(m, e->attach[0], e->param + 3, q, p);
      } else {
        vcopy(p, q + e->qidx[0]);
      }
      resultant(e, q, f, 0, nb, p, out);
      return;
    }
    case MBS_ELEM_AUGMENTED_TORQUE: {
      /* the torque acts through the augmentation constraint: tau about the axis d'_1(I) */
      double tau = f[e->nq - 1];
      ElemVx a = elem_dir(e, 0, 0);
      elem_vx_eval(e, &a, q, p);
      for (int c = 0; c < 3; c++) {
        out[3 + c] = tau * p[c];
      }
      return;
    }
    default:
      break;
  }
  mbs_elem_side_resultant(e, q, f, out);
}

void mbs_elem_joint_axis(const mbsElem *e, const double *q, int a, double out[3]) {
  ElemVx X = elem_dir(e, 0, a);
  elem_vx_eval(e, &X, q, out);
}

void mbs_elem_side_resultant(const mbsElem *e, const double *q, const double *f, double out[6]) {
  double p[3];
  memset(out, 0, 6 * sizeof(double));
  /* two-sided kinds: side 1 is the second body; if it is static, minus side 0's */
  int s = e->iparam[1] > 0 ? 1 : 0;
  ElemVx P = elem_point(e, s);
  elem_vx_eval(e, &P, q, p);
  if (e->iparam[s] == 0) {
    return;
  }
  resultant(e, q, f, elem_side_offset(e, s) / 3, e->iparam[s], p, out);
  if (s == 0) {
    for (int k = 0; k < 6; k++) {
      out[k] = -out[k];
    }
  }
}
