/* eig3.c: eigenvalues of a symmetric 3x3 matrix (util/eig3.h) */
#include "util/eig3.h"

#include <math.h>
#include <string.h>

/* cyclic Jacobi rotations (Numerical Recipes sec. 11.1), a few sweeps for 3x3 */
void mbs_sym3_eigenvalues(const double m[9], double lam[3]) {
  static const int pq[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  double a[9];
  memcpy(a, m, sizeof(a));

  for (int sweep = 0; sweep < 64; sweep++) {
    double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
    double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
    if (off <= 1e-40 * diag || off == 0.0) {
      break;
    }

    /* zero a_pq with the rotation of Numerical Recipes sec. 11.1 (A' = P^T A P) */
    for (int k = 0; k < 3; k++) {
      int p = pq[k][0], q = pq[k][1];
      double apq = a[3 * p + q];
      if (apq == 0.0) {
        continue;
      }
      double theta = (a[3 * q + q] - a[3 * p + p]) / (2.0 * apq);
      double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
      double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
      for (int j = 0; j < 3; j++) {
        double ajp = a[3 * j + p], ajq = a[3 * j + q];
        a[3 * j + p] = c * ajp - s * ajq;
        a[3 * j + q] = s * ajp + c * ajq;
      }
      for (int j = 0; j < 3; j++) {
        double apj = a[3 * p + j], aqj = a[3 * q + j];
        a[3 * p + j] = c * apj - s * aqj;
        a[3 * q + j] = s * apj + c * aqj;
      }
    }
  }

  /* sort the diagonal */
  lam[0] = a[0];
  lam[1] = a[4];
  lam[2] = a[8];
  for (int i = 0; i < 2; i++) {
    for (int j = i + 1; j < 3; j++) {
      if (lam[j] < lam[i]) {
        double tmp = lam[i];
        lam[i] = lam[j];
        lam[j] = tmp;
      }
    }
  }
}
