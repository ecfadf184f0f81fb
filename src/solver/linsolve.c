/* linsolve.c: the only file that includes umfpack.h */
#include "solver/linsolve.h"

#include <stdlib.h>
#include <umfpack.h>

struct mbsLinsolve {
  int n;
  const int *colptr, *rowind;
  void *symbolic, *numeric;
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
};

mbsLinsolve *mbs_linsolve_create(int n, const int *colptr, const int *rowind, mbsError *err) {
  mbsLinsolve *ls = calloc(1, sizeof(mbsLinsolve));
  if (!ls) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (linear solver)");
    return NULL;
  }
  ls->n = n;
  ls->colptr = colptr;
  ls->rowind = rowind;
  umfpack_di_defaults(ls->control);
  ls->control[UMFPACK_PRL] = 0;
  /* no iterative refinement: Newton's method refines the solution itself, and a
   * refinement step costs a matrix-vector product and a solve (10x a plain solve) */
  ls->control[UMFPACK_IRSTEP] = 0;
  return ls;
}

static const char *umf_reason(int status) {
  switch (status) {
    case UMFPACK_WARNING_singular_matrix:
      return "the Newton matrix is singular (redundant or conflicting constraints, or a "
             "coordinate without mass and stiffness)";
    case UMFPACK_ERROR_out_of_memory:
      return "out of memory";
    case UMFPACK_ERROR_invalid_matrix:
      return "invalid matrix pattern";
    default:
      return "UMFPACK error";
  }
}

mbsStatus mbs_linsolve_factor(mbsLinsolve *ls, const double *values, mbsError *err) {
  int status;
  if (!ls->symbolic) {
    status = umfpack_di_symbolic(ls->n, ls->n, ls->colptr, ls->rowind, values, &ls->symbolic,
                                 ls->control, ls->info);
    if (status != UMFPACK_OK) {
      return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                           "symbolic factorization failed: %s (status %d)", umf_reason(status),
                           status);
    }
  }
  if (ls->numeric) {
    umfpack_di_free_numeric(&ls->numeric);
  }
  status = umfpack_di_numeric(ls->colptr, ls->rowind, values, ls->symbolic, &ls->numeric,
                              ls->control, ls->info);
  if (status != UMFPACK_OK) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "%s (UMFPACK status %d)",
                         umf_reason(status), status);
  }
  return MBS_OK;
}

mbsStatus mbs_linsolve_solve(mbsLinsolve *ls, const double *values, const double *b, double *x,
                             mbsError *err) {
  int status = umfpack_di_solve(UMFPACK_A, ls->colptr, ls->rowind, values, x, b, ls->numeric,
                                ls->control, ls->info);
  if (status != UMFPACK_OK) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "%s (UMFPACK status %d)",
                         umf_reason(status), status);
  }
  return MBS_OK;
}

void mbs_linsolve_destroy(mbsLinsolve *ls) {
  if (!ls) {
    return;
  }
  if (ls->numeric) {
    umfpack_di_free_numeric(&ls->numeric);
  }
  if (ls->symbolic) {
    umfpack_di_free_symbolic(&ls->symbolic);
  }
  free(ls);
}
