/* linsolve.h: sparse LU (UMFPACK or KLU) of the Newton matrix and of the contact problem's
 * islands: the symbolic analysis is done once per pattern (again after
 * mbs_linsolve_reanalyse), the numeric factorization at every call of factor(). */
#ifndef MBS_UTIL_LINSOLVE_H
#define MBS_UTIL_LINSOLVE_H

#include "mbsim/types.h"
#include "mbsim/error.h"

typedef struct mbsLinsolve mbsLinsolve;

/* pattern arrays are referenced, not copied: they must outlive the solver */
mbsLinsolve *mbs_linsolve_create(mbsLinearSolver kind, int n, const int *colptr, const int *rowind,
                                 mbsError *err);
/* numeric factorization of the matrix with these values (symbolic on the first call);
 * repivot = 1 asks for a factorization that depends on these values alone (and the pin):
 * the pinned pivot order (mbs_linsolve_pin) while it stays well conditioned, else fresh
 * pivoting; repivot = 0 lets KLU reuse its last pivot order (UMFPACK always pivots afresh);
 * a singular matrix is MBS_ERR_LINSOLVE */
mbsStatus mbs_linsolve_factor(mbsLinsolve *ls, const double *values, int repivot, mbsError *err);
/* solve A x = b with the last factorization */
mbsStatus mbs_linsolve_solve(mbsLinsolve *ls, const double *values, const double *b, double *x,
                             mbsError *err);
/* solve A x_j = b_j for nrhs right-hand sides at once (b and x: n x nrhs, column-major) with
 * the last factorization: KLU passes them through its factors together (four at a time),
 * each x_j the same as a single solve's */
mbsStatus mbs_linsolve_solve_many(mbsLinsolve *ls, const double *values, int nrhs,
                                  const double *b, double *x, mbsError *err);
/* the pattern changed (the dynamic tail of system.h): n and the arrays (referenced, as in
 * create) describe it; the factorization is dropped and the next factor() analyses afresh */
void mbs_linsolve_reanalyse(mbsLinsolve *ls, int n, const int *colptr, const int *rowind);
/* KLU's row scaling of the matrix before factoring: 2 (the default: by the largest entry of
 * each row), 1 (by the row sums), 0 (none, for matrices scaled by construction) or -1 (none,
 * and the pattern not checked: for patterns built sorted and without duplicates); UMFPACK
 * keeps its own */
void mbs_linsolve_set_scaling(mbsLinsolve *ls, int scale);
/* KLU: partial pivoting that keeps the diagonal entry while it is at least tol times the
 * column's largest (0.1 by default), a reused pivot order kept while its condition estimate
 * stays above ratio times the one of the last fresh pivoting (1e-3 by default; smaller keeps
 * orders longer), and whether the next analysis looks for a block triangular form (btf 1,
 * the default; 0 for patterns known to be one irreducible block, whose BTF search finds
 * nothing) */
void mbs_linsolve_set_pivoting(mbsLinsolve *ls, double tol, double ratio, int btf);
/* KLU: whether the next analysis (create, reanalyse) permutes the matrix to block triangular
 * form before its AMD order (btf 1, the default), orders the symmetric pattern A + A^T by
 * AMD as it stands (btf 0), or does the first and, when it finds one block, the second
 * (btf -1: one more symbolic analysis of such a pattern). On a structurally symmetric
 * saddle-point matrix that is one block (the chain of N links) the BTF's maximum matching
 * pairs each multiplier's column with a coordinate's row, and AMD on that unsymmetric
 * permutation needs 1.6 times the flops of AMD on the pattern as it stands; where the BTF
 * finds several blocks (the four-bar, the slider-crank, the cardan shaft) they are worth
 * more: L + U of 0.67 times the matrix's entries against 1.45-1.64 without. The order
 * changes the round-off of every factorization, not what is solved. */
void mbs_linsolve_set_btf(mbsLinsolve *ls, int btf);
/* KLU: the fill-reducing order of the next analysis (create, reanalyse) within each block
 * of the block triangular form: AMD on the symmetric pattern A + A^T (colamd 0, the
 * default) or COLAMD on A's columns (colamd 1; the space-time element: 6 % fewer flops) */
void mbs_linsolve_set_ordering(mbsLinsolve *ls, int colamd);
/* symbolic analyses done so far */
long mbs_linsolve_analyses(const mbsLinsolve *ls);
/* the numeric factorizations with fresh pivoting so far (UMFPACK: every one; KLU: those of
 * klu_factor, which allocates its numeric object, while refactorizations on the last pivot
 * order allocate nothing) */
long mbs_linsolve_fresh_count(const mbsLinsolve *ls);
/* KLU kind: when no connected component of the pattern (unknowns joined by an entry) has
 * more than max unknowns, factor each component as a dense block with LAPACK (dgetrf,
 * partial pivoting; solves by dgetrs) instead of KLU (max = 0, the default: KLU alone).
 * Every such factorization pivots afresh and is a function of its values alone (repivot and
 * the pin change nothing; it counts as fresh in mbs_linsolve_fresh_count but allocates
 * nothing), at three quarters of the instructions of KLU's fresh pivoting for 50 free rigid
 * bodies (18 unknowns each; KLU's refactorization on a kept order costs less than either).
 * A zero pivot is MBS_ERR_LINSOLVE, as KLU's. The components are found once per pattern, at
 * the next factorization (the first after create, reanalyse or a new max); with a larger
 * component KLU serves as before. */
void mbs_linsolve_set_blocks(mbsLinsolve *ls, int max);
/* KLU: pivot in the given order (perm (n), referenced like the pattern: the k-th pivot column
 * is perm[k], and the k-th row preferred is the same unknown) with no block triangular form,
 * instead of KLU's own AMD order; NULL gives KLU's order back. Takes effect at the next
 * analysis (create, reanalyse). */
void mbs_linsolve_set_order(mbsLinsolve *ls, const int *perm);
/* KLU: factor these values with fresh pivoting and pin that pivot order: every later
 * factor() with repivot = 1 refactors on it (klu_refactor: no pivot search, no allocation)
 * while its condition estimate stays within a factor 10 of the pin's own, and pivots afresh
 * (keeping the pin) otherwise. A pin taken from a reproducible matrix (the run's initial
 * configuration) makes every such factorization a function of its own matrix, as fresh
 * pivoting is, at a third of the cost. Dropped by reanalyse; UMFPACK ignores it. */
mbsStatus mbs_linsolve_pin(mbsLinsolve *ls, const double *values, mbsError *err);
/* entries of the last KLU factorization's L and U (the fill; 0 before one or for UMFPACK) */
double mbs_linsolve_lu_entries(const mbsLinsolve *ls);
/* An AMD fill-reducing order (Amestoy, Davis and Duff) of the symmetric pattern of the n x n
 * matrix (colptr, rowind: duplicate and unsorted entries allowed; its transpose's pattern is
 * added) into perm (n); MBS_ERR_NOMEM or MBS_ERR_LINSOLVE (err filled). */
mbsStatus mbs_linsolve_amd(int n, const int *colptr, const int *rowind, int *perm, mbsError *err);

/* A sparse Cholesky factorization of a symmetric positive definite n x n matrix (CHOLMOD,
 * simplicial): the pattern, its upper triangle in compressed columns (colptr (n + 1), rowind
 * sorted within each column), in the order it is to be factored (the caller permutes: no
 * ordering here), is copied and analysed once; each factor() is numeric only, and neither
 * it nor solve() allocates after the first. */
typedef struct mbsCholesky mbsCholesky;
mbsCholesky *mbs_cholesky_create(int n, const int *colptr, const int *rowind, mbsError *err);
/* factor the matrix with these values (colptr[n] of them, in the pattern's order); a matrix
 * that is not positive definite (to working precision) is MBS_ERR_LINSOLVE */
mbsStatus mbs_cholesky_factor(mbsCholesky *ch, const double *values, mbsError *err);
/* x = A^-1 b with the last factorization (b and x: n; they may not alias) */
mbsStatus mbs_cholesky_solve(mbsCholesky *ch, const double *b, double *x, mbsError *err);
void mbs_cholesky_destroy(mbsCholesky *ch);
void mbs_linsolve_destroy(mbsLinsolve *ls);

#endif
