/* eig3.h: eigenvalues of a symmetric 3x3 matrix (principal moments of inertia) */
#ifndef MBS_UTIL_EIG3_H
#define MBS_UTIL_EIG3_H

/* the eigenvalues of the symmetric 3x3 matrix m (row-major) into lam, ascending */
void mbs_sym3_eigenvalues(const double m[9], double lam[3]);

#endif
