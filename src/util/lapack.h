/* lapack.h: the LAPACK routines the kernel calls (OpenBLAS exports them with the Fortran
 * calling convention; Debian ships no LAPACKE header with it). Dense LU of small blocks:
 * the contact solver's components (src/contact/problem.c) and the Newton matrix of small
 * components (src/util/linsolve.c, mbs_linsolve_set_blocks). */
#ifndef MBS_UTIL_LAPACK_H
#define MBS_UTIL_LAPACK_H

/* LU with partial pivoting of the n x n column-major a (leading dimension lda): info 0, or
 * > 0 when U(info, info) is exactly zero */
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);

/* solve with the factors of dgetrf_: trans "N", nrhs right-hand sides b (ldb) in place */
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, unsigned long trans_len);

/* y = alpha op(a) x + beta y, op "N" or "T", a m x n column-major (lda), strides incx, incy */
void dgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy, unsigned long trans_len);

#endif
