/* constraint.c: the generic quadratic constraint row g = s (A . B) + n . A + c0 */
#include <string.h>

#include "mbsim/model.h"
#include "util/vec3.h"

void mbs_con_ab(const mbsConRow *row, const double *q, double A[3], double B[3]) {
  vcopy(A, row->ca);
  vcopy(B, row->cb);
  for (int k = 0; k < row->nnode; k++) {
    const double *x = q + 3 * row->node[k];
    vaxpy(A, row->wa[k], x);
    vaxpy(B, row->wb[k], x);
  }
}

double mbs_con_eval(const mbsConRow *row, const double *q, double *grad) {
  double A[3], B[3];
  if (row->s == 0.0) {
    /* a linear row (a spherical joint's: 8 nodes): B does not enter, and the gradient is
     * the constant wa_k n (a third of the chain's rows, most of their evaluation's cost) */
    vcopy(A, row->ca);
    for (int k = 0; k < row->nnode; k++) {
      vaxpy(A, row->wa[k], q + 3 * row->node[k]);
    }
    if (grad) {
      for (int k = 0; k < row->nnode; k++) {
        for (int c = 0; c < 3; c++) {
          grad[3 * k + c] = row->wa[k] * row->n[c];
        }
      }
    }
    return vdot(row->n, A) + row->c0;
  }
  mbs_con_ab(row, q, A, B);
  double g = row->s * vdot(A, B) + vdot(row->n, A) + row->c0;
  if (grad) {
    /* dg/dq_k = s (wa_k B + wb_k A) + wa_k n */
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        grad[3 * k + c] = row->s * (row->wa[k] * B[c] + row->wb[k] * A[c]) + row->wa[k] * row->n[c];
      }
    }
  }
  return g;
}
