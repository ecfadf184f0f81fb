/* rotation.h: the rotation matrix the contact-geometry tests and their benchmark pose shapes
 * with, written apart from the library's own (Rodrigues' formula). */
#ifndef MBS_TESTS_ROTATION_H
#define MBS_TESTS_ROTATION_H

#include <math.h>

/* R (row-major) of the rotation by angle about the axis (ux, uy, uz) (need not be unit) */
static inline void rot(double R[9], double ux, double uy, double uz, double angle) {
  double n = sqrt(ux * ux + uy * uy + uz * uz);
  double u[3] = {ux / n, uy / n, uz / n}, c = cos(angle), s = sin(angle);
  double K[9] = {0, -u[2], u[1], u[2], 0, -u[0], -u[1], u[0], 0};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      R[3 * i + j] = (i == j ? c : 0.0) + s * K[3 * i + j] + (1 - c) * u[i] * u[j];
    }
  }
}

#endif
