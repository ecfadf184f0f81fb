/* attach.c: attachment frames and the one point expression x = phi + c^i d_i (model.h).
 *
 * Joints, loads, springs, observers and records all name a point fixed to a frame; its
 * value, its node weights (for constraint rows and elements) and its frame coordinates at
 * t = 0 are computed here only (seed 004 eq. 4-5). A beam node's director frame (phi, d1, d2,
 * d3, seed 000 sec. 5) is the same expression as a rigid body's. */
#include <assert.h>
#include <string.h>

#include "mbsim/model.h"
#include "util/vec3.h"

int mbs_attach_nnode(mbsAttachKind kind) {
  switch (kind) {
    case MBS_ATTACH_POINT:
      return 1;
    case MBS_ATTACH_DIRECTORS:
    case MBS_ATTACH_BEAM_NODE:
      return 4;
    default:
      return 0;
  }
}

void mbs_point_weights(mbsPointWeights *pw, int nnode, int node0, const double c[3]) {
  assert(nnode == 0 || nnode == 1 || nnode == 4);
  memset(pw, 0, sizeof(*pw));
  if (nnode == 0) {
    vcopy(pw->c, c);
    return;
  }
  pw->n = 1;
  pw->node[0] = node0;
  pw->w[0] = 1.0;
  if (nnode == 4) {
    for (int i = 0; i < 3; i++) {
      pw->node[pw->n] = node0 + 1 + i;
      pw->w[pw->n] = c[i];
      pw->n++;
    }
  }
}

void mbs_dir_weights(mbsPointWeights *pw, int nnode, int node0, const double C[3]) {
  assert(nnode == 0 || nnode == 1 || nnode == 4);
  memset(pw, 0, sizeof(*pw));
  if (nnode == 0) {
    vcopy(pw->c, C);
    return;
  }
  if (nnode == 4) {
    for (int i = 0; i < 3; i++) {
      pw->node[pw->n] = node0 + 1 + i;
      pw->w[pw->n] = C[i];
      pw->n++;
    }
  }
}

void mbs_attach_point_weights(const mbsModel *m, int f, const double c[3], mbsPointWeights *pw) {
  assert(f >= 0 && f < m->nattach);
  mbs_point_weights(pw, mbs_attach_nnode(m->attach_kind[f]), m->attach_node[f], c);
}

void mbs_attach_point(const mbsModel *m, int f, const double c[3], const double *q, double x[3]) {
  assert(f >= 0 && f < m->nattach);
  int n0 = m->attach_node[f];
  if (n0 < 0) {
    vcopy(x, c);
    return;
  }
  /* phi, then + c^i d_i in this order (the records are bit for bit what they were) */
  vcopy(x, q + 3 * n0);
  if (mbs_attach_nnode(m->attach_kind[f]) == 4) {
    for (int i = 0; i < 3; i++) {
      vaxpy(x, c[i], q + 3 * (n0 + 1 + i));
    }
  }
}

void mbs_attach_coords(const mbsModel *m, int f, const double P[3], double c[3]) {
  assert(f >= 0 && f < m->nattach);
  switch (m->attach_kind[f]) {
    case MBS_ATTACH_DIRECTORS:
    case MBS_ATTACH_BEAM_NODE: {
      /* c^i = d_i(0) . (P - phi0) since the directors are orthonormal at t = 0 */
      const double *R = m->attach_R0 + 9 * f;
      double rel[3];
      vsub(rel, P, m->attach_pos0 + 3 * f);
      for (int i = 0; i < 3; i++) {
        c[i] = R[0 + i] * rel[0] + R[3 + i] * rel[1] + R[6 + i] * rel[2];
      }
      return;
    }
    case MBS_ATTACH_POINT:
      c[0] = c[1] = c[2] = 0.0;
      return;
    default:
      vcopy(c, P);
      return;
  }
}
