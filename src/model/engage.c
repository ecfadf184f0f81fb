/* engage.c: joints that engage and release during a run (docs/decks.md "Joints that engage
 * and release"). A switching joint keeps its rows in the model all the time, so the Newton
 * matrix keeps its size and pattern: while it is released they are zero rows (their node
 * lists kept), which the solver closes with an identity on their multipliers (lambda = 0);
 * while it holds they are the joint's rows with the frames taken at engagement. */
#include <assert.h>
#include <string.h>

#include "elements/make.h"
#include "mbsim/model.h"
#include "util/vec3.h"

static double *state(const mbsModel *m, int j) {
  return m->joint_engage + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j;
}

void mbs_model_joint_apply(const mbsModel *m, int j) {
  const double *es = state(m, j);
  mbsConRow rows[MBS_ELEM_MAXCON];
  int holds = es[0] != 0.0, nr = 0;
  if (holds) {
    double par[24];
    memcpy(par, es + 1, 12 * sizeof(double));
    memcpy(par + 12, mbs_elem_side_coords(&m->joint_frame[j], 1), 12 * sizeof(double));
    nr = mbs_model_joint_rows(m, j, par, es[13], rows);
  }
  /* its kept rows, then those the redundancy check dropped (the minimum-norm reactions of
   * its loop use them) */
  int nkept = m->joint_ncon[j];
  for (int k = 0; k < nkept + m->ndrop; k++) {
    mbsConRow *row = k < nkept ? &m->con[m->joint_con[j] + k] : &m->drop[k - nkept];
    if (row->joint != j) {
      continue;
    }
    if (holds && !((unsigned)es[14] >> row->jrow & 1u)) {
      /* its row of that number (jrow: the row within the joint, whatever was dropped) */
      assert(row->jrow < nr && rows[row->jrow].nnode == row->nnode);
      int jrow = row->jrow;
      *row = rows[jrow];
    } else {
      /* a zero row on the same nodes (released, or dropped as redundant in this phase):
       * g = 0, G = 0, no Hessian */
      memset(row->wa, 0, sizeof(row->wa));
      memset(row->wb, 0, sizeof(row->wb));
      memset(row->ca, 0, sizeof(row->ca));
      memset(row->cb, 0, sizeof(row->cb));
      memset(row->n, 0, sizeof(row->n));
      row->s = 0.0;
      row->c0 = 0.0;
    }
  }
  /* the joint's coordinates are measured from its frames (the first side's) */
  mbs_elem_side_set_coords(&m->joint_frame[j], 0, es + 1);
  /* the joint point on the first side (viewers) */
  vcopy(m->joint_point_first + 3 * j, es + 10);
}

int mbs_model_joint_held_row(const mbsModel *m, int j, int jrow, mbsConRow *out) {
  const double *es = state(m, j);
  mbsConRow rows[MBS_ELEM_MAXCON];
  double par[24];
  memcpy(par, es + 1, 12 * sizeof(double));
  memcpy(par + 12, mbs_elem_side_coords(&m->joint_frame[j], 1), 12 * sizeof(double));
  int nr = mbs_model_joint_rows(m, j, par, es[13], rows);
  if (jrow < 0 || jrow >= nr) {
    return -1;
  }
  *out = rows[jrow];
  return 0;
}

/* the frame of side s of joint j at q: its directions D (column a... as rows: D[3 a + c]) in
 * world components and its point p, from the frame coordinates par (mbs_model_joint_rows) */
static void side_frame(const mbsModel *m, int j, int s, const double par[12], const double *q,
                       double D[9], double p[3]) {
  int f = m->joint_attach[2 * j + s], n0 = m->attach_node[f];
  int nn = mbs_attach_nnode(m->attach_kind[f]);
  for (int a = 0; a < 3; a++) {
    if (nn == 4) {
      memset(D + 3 * a, 0, 3 * sizeof(double));
      for (int i = 0; i < 3; i++) {
        vaxpy(D + 3 * a, par[3 * a + i], q + 3 * (n0 + 1 + i));
      }
    } else {
      vcopy(D + 3 * a, par + 3 * a); /* static: world; a point mass: zero */
    }
  }
  mbs_attach_point(m, f, par + 9, q, p);
}

mbsStatus mbs_model_joint_engage(const mbsModel *m, int j, const double *q) {
  double *es = state(m, j);
  const double *par2 = mbs_elem_side_coords(&m->joint_frame[j], 1);
  double D2[9], p2[3];
  side_frame(m, j, 1, par2, q, D2, p2);
  if (m->joint_type[j] == MBS_JOINT_DISTANCE) {
    /* the points stay; the length is the distance at q */
    double D1[9], p1[3], d[3];
    side_frame(m, j, 0, es + 1, q, D1, p1);
    vsub(d, p2, p1);
    es[13] = vdot(d, d);
  } else {
    int f = m->joint_attach[2 * j], n0 = m->attach_node[f];
    int nn = mbs_attach_nnode(m->attach_kind[f]);
    double *c1 = es + 10, *C1 = es + 1;
    if (nn == 4) {
      /* the first side's frame coordinates that put its point and directions on the second
       * side's at q: sum_i c^i d_i = p2 - phi and sum_i C_a^i d_i = D2_a, solved exactly
       * (seed 004 eq. 5 with the directors at q, which are orthonormal only to the
       * constraint tolerance) */
      double Dm[9], rel[3];
      for (int i = 0; i < 3; i++) {
        for (int c = 0; c < 3; c++) {
          Dm[3 * c + i] = q[3 * (n0 + 1 + i) + c]; /* column i = d_i */
        }
      }
      vsub(rel, p2, q + 3 * n0);
      int ok = msolve3(Dm, rel, c1);
      for (int a = 0; a < 3 && ok; a++) {
        ok = msolve3(Dm, D2 + 3 * a, C1 + 3 * a);
      }
      if (!ok) {
        return MBS_ERR_SOLVER;
      }
    } else {
      /* a static side: the world point and directions; a point mass (the deck allows it
       * only as the second side of an engaging joint) has neither */
      assert(nn == 0);
      vcopy(c1, p2);
      memcpy(C1, D2, 9 * sizeof(double));
    }
  }
  es[0] = 1.0;
  mbs_model_joint_apply(m, j);
  return MBS_OK;
}

void mbs_model_joint_release(const mbsModel *m, int j) {
  state(m, j)[0] = 0.0;
  state(m, j)[14] = 0.0;
  mbs_model_joint_apply(m, j);
}

void mbs_model_joint_reset(const mbsModel *m) {
  for (int j = 0; j < m->njoint && m->nengage > 0; j++) {
    if (!mbs_joint_switches(m, j)) {
      continue;
    }
    /* the frames of t = 0 (compile's) */
    memcpy(state(m, j), m->joint_engage0 + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j,
           MBS_JOINT_ENGAGE_LEN * sizeof(double));
    mbs_model_joint_apply(m, j);
  }
}
