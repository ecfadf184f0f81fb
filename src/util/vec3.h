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

#endif
