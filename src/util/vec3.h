/* vec3.h: small inline 3-vector helpers (output argument first) */
#ifndef MBS_UTIL_VEC3_H
#define MBS_UTIL_VEC3_H

#include <math.h>

static inline double vdot(const double a[3], const double b[3]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void vcross(double r[3], const double a[3], const double b[3]) {
  double x = a[1] * b[2] - a[2] * b[1];
  double y = a[2] * b[0] - a[0] * b[2];
  double z = a[0] * b[1] - a[1] * b[0];
  r[0] = x;
  r[1] = y;
  r[2] = z;
}

static inline double vnorm(const double a[3]) {
  return sqrt(vdot(a, a));
}

/* r += s a */
static inline void vaxpy(double r[3], double s, const double a[3]) {
  r[0] += s * a[0];
  r[1] += s * a[1];
  r[2] += s * a[2];
}

static inline void vcopy(double r[3], const double a[3]) {
  r[0] = a[0];
  r[1] = a[1];
  r[2] = a[2];
}

static inline void vsub(double r[3], const double a[3], const double b[3]) {
  r[0] = a[0] - b[0];
  r[1] = a[1] - b[1];
  r[2] = a[2] - b[2];
}

/* skew matrix [a]x (row-major), [a]x b = a x b */
static inline void vskew(double S[9], const double a[3]) {
  S[0] = 0;
  S[1] = -a[2];
  S[2] = a[1];
  S[3] = a[2];
  S[4] = 0;
  S[5] = -a[0];
  S[6] = -a[1];
  S[7] = a[0];
  S[8] = 0;
}

/* x = A^-1 b for the row-major 3 x 3 A by Cramer's rule; 0 (x untouched) when A is singular
 * to round-off (|det| below 1e-14 of the cube of its diagonal's size) */
static inline int msolve3(const double A[9], const double b[3], double x[3]) {
  double c0 = A[4] * A[8] - A[5] * A[7], c1 = A[5] * A[6] - A[3] * A[8],
         c2 = A[3] * A[7] - A[4] * A[6];
  double det = A[0] * c0 + A[1] * c1 + A[2] * c2;
  double s = fabs(A[0]) + fabs(A[4]) + fabs(A[8]);
  if (!(fabs(det) > 1e-300) || !(fabs(det) > 1e-14 * s * s * s)) {
    return 0;
  }
  double inv[9] = {c0, A[2] * A[7] - A[1] * A[8], A[1] * A[5] - A[2] * A[4],
                   c1, A[0] * A[8] - A[2] * A[6], A[2] * A[3] - A[0] * A[5],
                   c2, A[1] * A[6] - A[0] * A[7], A[0] * A[4] - A[1] * A[3]};
  for (int i = 0; i < 3; i++) {
    x[i] = (inv[3 * i] * b[0] + inv[3 * i + 1] * b[1] + inv[3 * i + 2] * b[2]) / det;
  }
  return 1;
}

#endif
