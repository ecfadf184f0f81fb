/* schur.h: the records' KKT systems [M G^T; G 0] [x; y] = [b; c] through the Schur
 * complement S = G M^-1 G^T of the constant mass matrix (schur.c). */
#ifndef MBS_SOLVER_SCHUR_H
#define MBS_SOLVER_SCHUR_H

#include "mbsim/error.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"

typedef struct mbsSchur mbsSchur;

/* the Schur complement's fixed part for model m with d's row walk (M^-1 block by block, the
 * pattern of G at (q, t) and of S, S's symbolic Cholesky): NULL with *err untouched when the model
 * does not suit it (a scalar coordinate, a beam, joints that engage, a mass block of more
 * than a body's 4 nodes, a node without mass, an inconsistent gradient pattern), NULL with
 * err filled (MBS_ERR_NOMEM, MBS_ERR_LINSOLVE) on failure */
mbsSchur *mbs_schur_create(const mbsModel *m, mbsData *d, const double *q, double t, mbsError *err);
/* G at (q, t) and the Cholesky factor of S; MBS_ERR_LINSOLVE when S is not positive
 * definite or G's pattern is not the one of create: the caller then takes the KKT matrix */
mbsStatus mbs_schur_factor(mbsSchur *s, const mbsModel *m, mbsData *d, const double *q, double t,
                           mbsError *err);
/* x = [M G^T; G 0]^-1 b (b and x: nq + ncon, not aliased) with the last factor */
mbsStatus mbs_schur_solve(mbsSchur *s, const mbsModel *m, const double *b, double *x,
                          mbsError *err);
/* max |G v + g_t| at the last factor's (q, t), and G v + g_t into r (ncon, may be NULL):
 * mbs_velocity_residual with the G of the factor instead of a walk over the rows */
double mbs_schur_velocity_residual(const mbsSchur *s, const mbsModel *m, const double *q,
                                   const double *v, double t, double *r);
/* 1 when s (may be NULL) holds a factor at exactly (q, t): its G and violation are those of
 * a walk over the rows there */
int mbs_schur_at(const mbsSchur *s, const double *q, double t);
/* max |g| over the rows at the last factor's (q, t): mbs_constraint_violation's value */
double mbs_schur_violation(const mbsSchur *s);
/* row `row` of G at the last factor: its values, *idx its coordinates, *nz entries, in the
 * order of the row walk (mbs_rows_next) */
const double *mbs_schur_row(const mbsSchur *s, int row, const int **idx, int *nz);
void mbs_schur_destroy(mbsSchur *s);

#endif
