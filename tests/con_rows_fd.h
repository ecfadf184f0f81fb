/* con_rows_fd.h: the finite-difference check of constraint rows shared by test_model.c and
 * test_elements.c: every row's gradient by central differences of its value, and its
 * constant Hessian blocks coef(l, k) I3 by central differences of the gradient. */
#ifndef MBSIM_TESTS_CON_ROWS_FD_H
#define MBSIM_TESTS_CON_ROWS_FD_H

#include <check.h>

#include "mbsim/model.h"
#include "solver/system.h"

/* rows r0 .. r1-1 of m at q (q is perturbed and restored entry by entry) */
static void assert_con_rows_fd(const mbsModel *m, double *q, int r0, int r1) {
  const double h = 1e-6;
  double grad[3 * MBS_CON_MAXNODE], gp[3 * MBS_CON_MAXNODE], gm[3 * MBS_CON_MAXNODE];
  /* the Hessian pair lists are the linear system's */
  mbsError err;
  mbsSystem *sys = mbs_system_create(m, 1, NULL, 0, 0, &err);
  ck_assert_msg(sys != NULL, "%s", err.msg);
  for (int r = r0; r < r1; r++) {
    const mbsConRow *row = &m->con[r];
    mbs_con_eval(row, q, grad);
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        int i = 3 * row->node[k] + c;
        double save = q[i];
        q[i] = save + h;
        double fp = mbs_con_eval(row, q, gp);
        q[i] = save - h;
        double fm = mbs_con_eval(row, q, gm);
        q[i] = save;
        /* gradient by central differences (exact up to round-off for quadratics) */
        ck_assert_double_eq_tol(grad[3 * k + c], (fp - fm) / (2 * h), 1e-8);
        /* Hessian: d grad_l / d q_i = coef(l, k) delta_cc' */
        for (int l = 0; l < row->nnode; l++) {
          for (int cc = 0; cc < 3; cc++) {
            double fd = (gp[3 * l + cc] - gm[3 * l + cc]) / (2 * h);
            double an = 0.0;
            for (int p = sys->con_hstart[r]; p < sys->con_hstart[r + 1]; p++) {
              if (sys->con_hk[p] == l && sys->con_hl[p] == k && cc == c) {
                an += sys->con_hcoef[p];
              }
            }
            ck_assert_double_eq_tol(an, fd, 1e-7);
          }
        }
      }
    }
  }
  mbs_system_destroy(sys);
}

#endif
