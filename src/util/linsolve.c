/* linsolve.c: the only file that includes umfpack.h and klu.h.
 *
 * Both are SuiteSparse's sparse LU codes, analysed once for the pattern of the Newton
 * matrix (system.c) and again only when that pattern changes (mbs_linsolve_reanalyse: the
 * system's dynamic tail). UMFPACK (`solver.linear_solver: umfpack`) refactors with fresh
 * pivoting at every call, allocating its numeric factorization anew. KLU (the default)
 * refactors on the pivot order of its last full factorization (klu_refactor, no
 * allocation), which for our small, banded KKT matrices costs a fraction of UMFPACK's
 * multifrontal setup; the reused order is kept only while KLU's reciprocal
 * condition estimate stays within REPIVOT_RCOND of the fresh one, else it pivots afresh.
 * `make bench` compares the two. */
#include "util/linsolve.h"

#include <stdlib.h>
#include <string.h>
#include <amd.h>
#include <cholmod.h>
#include <klu.h>
#include <umfpack.h>

/* a reused KLU pivot order is dropped once the crude reciprocal condition estimate
 * min|u_kk| / max|u_kk| falls this far below the one of the last fresh pivoting */
#define REPIVOT_RCOND 1e-3
/* a pinned order (mbs_linsolve_pin) is kept only while it stays within this factor of the
 * pin's own estimate: it was chosen for another matrix (the run's initial one), and a heavy
 * top whose body turns over on its pin left a chord iteration 4x the energy drift of fresh
 * pivots with 1e-3 (1.2e-14 per 1e4 steps against 2e-15; 1e-1: 2e-15, pivoting afresh at
 * a fifth of its steps; the 200-link chain never leaves its pin) */
#define PIN_RCOND 1e-1

struct mbsLinsolve {
  mbsLinearSolver kind;
  int n;
  const int *colptr, *rowind;
  /* umfpack */
  void *symbolic, *numeric;
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
  /* klu */
  klu_common common;
  klu_symbolic *ksym;
  klu_numeric *knum;  /* the last factorization with fresh pivots */
  klu_numeric *kpin;  /* the pinned pivot order (mbs_linsolve_pin), or NULL */
  klu_numeric *kcur;  /* the factorization solves use: knum or kpin */
  double rcond_pin;   /* rcond of the pinned order's own factorization */
  const int *perm;    /* NULL, or the pivot order given (mbs_linsolve_set_order) */
  double rcond_fresh; /* rcond of the last factorization with fresh pivoting */
  double repivot;     /* a reused order's rcond below this times rcond_fresh: fresh pivots */
  int btf;            /* KLU's block triangular form before its AMD order (1 by default) */
  long analyses;      /* symbolic analyses done */
  long fresh;         /* full factorizations with fresh pivoting (these allocate) */
};

static const char *const singular_reason =
    "the Newton matrix is singular (redundant or conflicting constraints, or a coordinate "
    "without mass and stiffness)";

mbsLinsolve *mbs_linsolve_create(mbsLinearSolver kind, int n, const int *colptr, const int *rowind,
                                 mbsError *err) {
  mbsLinsolve *ls = calloc(1, sizeof(mbsLinsolve));
  if (!ls) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (linear solver)");
    return NULL;
  }
  ls->kind = kind;
  ls->n = n;
  ls->colptr = colptr;
  ls->rowind = rowind;
  umfpack_di_defaults(ls->control);
  ls->control[UMFPACK_PRL] = 0;
  /* no iterative refinement: Newton's method refines the solution itself, and a
   * refinement step costs a matrix-vector product and a solve (10x a plain solve) */
  ls->control[UMFPACK_IRSTEP] = 0;
  if (!klu_defaults(&ls->common)) {
    free(ls);
    mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "KLU: cannot set defaults");
    return NULL;
  }
  /* partial pivoting that prefers the diagonal only within a factor 10 (KLU's default,
   * 1000, lets our saddle-point matrices grow their factors: residuals of 1e-11 where
   * 0.1 keeps round-off, at no measurable cost) */
  ls->common.tol = 0.1;
  ls->repivot = REPIVOT_RCOND;
  ls->btf = 1;
  return ls;
}

static const char *umf_reason(int status) {
  switch (status) {
    case UMFPACK_WARNING_singular_matrix:
      return singular_reason;
    case UMFPACK_ERROR_out_of_memory:
      return "out of memory";
    case UMFPACK_ERROR_invalid_matrix:
      return "invalid matrix pattern";
    default:
      return "UMFPACK error";
  }
}

static const char *klu_reason(int status) {
  switch (status) {
    case KLU_SINGULAR:
      return singular_reason;
    case KLU_OUT_OF_MEMORY:
      return "out of memory";
    case KLU_INVALID:
      return "invalid matrix pattern";
    case KLU_TOO_LARGE:
      return "matrix too large for 32-bit indices";
    default:
      return "KLU error";
  }
}

static mbsStatus umf_factor(mbsLinsolve *ls, const double *values, mbsError *err) {
  int status;
  if (!ls->symbolic) {
    status = umfpack_di_symbolic(ls->n, ls->n, ls->colptr, ls->rowind, values, &ls->symbolic,
                                 ls->control, ls->info);
    if (status != UMFPACK_OK) {
      return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                           "symbolic factorization failed: %s (status %d)", umf_reason(status),
                           status);
    }
    ls->analyses++;
  }
  if (ls->numeric) {
    umfpack_di_free_numeric(&ls->numeric);
  }
  ls->fresh++;
  status = umfpack_di_numeric(ls->colptr, ls->rowind, values, ls->symbolic, &ls->numeric,
                              ls->control, ls->info);
  if (status != UMFPACK_OK) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "%s (UMFPACK status %d)",
                         umf_reason(status), status);
  }
  return MBS_OK;
}

static mbsStatus klu_fail(mbsLinsolve *ls, const char *what, mbsError *err) {
  return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "%s%s (KLU status %d)", what,
                       klu_reason(ls->common.status), ls->common.status);
}

/* KLU's symbolic analysis of the pattern, once */
static mbsStatus klu_analyse(mbsLinsolve *ls, mbsError *err) {
  /* KLU's prototypes take non-const arrays that they only read */
  int *ap = (int *)ls->colptr, *ai = (int *)ls->rowind;
  if (!ls->ksym) {
    if (ls->perm) {
      /* KLU's prototype takes non-const permutations that it only reads */
      int *q = (int *)ls->perm;
      ls->common.btf = 0;
      ls->ksym = klu_analyze_given(ls->n, ap, ai, q, q, &ls->common);
    } else {
      ls->common.btf = ls->btf;
      ls->ksym = klu_analyze(ls->n, ap, ai, &ls->common);
    }
    if (!ls->ksym) {
      return klu_fail(ls, "symbolic factorization failed: ", err);
    }
    ls->analyses++;
  }
  return MBS_OK;
}

/* a factorization with fresh pivoting into the numeric slot *slot (freed first), and its
 * condition estimate into *rcond */
static mbsStatus klu_fresh_into(mbsLinsolve *ls, int *ap, int *ai, double *ax, klu_numeric **slot,
                                double *rcond, mbsError *err) {
  if (*slot) {
    klu_free_numeric(slot, &ls->common);
  }
  ls->fresh++;
  *slot = klu_factor(ap, ai, ax, ls->ksym, &ls->common);
  if (!*slot || ls->common.status != KLU_OK) {
    if (*slot) {
      klu_free_numeric(slot, &ls->common);
    }
    return klu_fail(ls, "", err);
  }
  if (!klu_rcond(ls->ksym, *slot, &ls->common)) {
    klu_free_numeric(slot, &ls->common);
    return klu_fail(ls, "condition estimate failed: ", err);
  }
  *rcond = ls->common.rcond;
  return MBS_OK;
}

static mbsStatus klu_factor_values(mbsLinsolve *ls, const double *values, int repivot,
                                   mbsError *err) {
  int *ap = (int *)ls->colptr, *ai = (int *)ls->rowind;
  double *ax = (double *)values;
  mbsStatus st = klu_analyse(ls, err);
  if (st != MBS_OK) {
    return st;
  }
  /* the pinned order (repivot, with a pin) or the last one, while it stays about as well
   * conditioned as the pivoting it came from */
  klu_numeric *order = repivot ? ls->kpin : ls->kcur;
  if (order && klu_refactor(ap, ai, ax, ls->ksym, order, &ls->common) &&
      ls->common.status == KLU_OK && klu_rcond(ls->ksym, order, &ls->common) &&
      ls->common.rcond >=
          (order == ls->kpin ? PIN_RCOND * ls->rcond_pin : ls->repivot * ls->rcond_fresh)) {
    ls->kcur = order;
    return MBS_OK;
  }
  /* fresh pivoting, into knum (the pinned order stays for the next repivot) */
  ls->kcur = NULL;
  st = klu_fresh_into(ls, ap, ai, ax, &ls->knum, &ls->rcond_fresh, err);
  if (st == MBS_OK) {
    ls->kcur = ls->knum;
  }
  return st;
}

long mbs_linsolve_fresh_count(const mbsLinsolve *ls) {
  return ls->fresh;
}

mbsStatus mbs_linsolve_factor(mbsLinsolve *ls, const double *values, int repivot, mbsError *err) {
  return ls->kind == MBS_LINEAR_KLU ? klu_factor_values(ls, values, repivot, err)
                                    : umf_factor(ls, values, err);
}

mbsStatus mbs_linsolve_solve(mbsLinsolve *ls, const double *values, const double *b, double *x,
                             mbsError *err) {
  if (ls->kind == MBS_LINEAR_KLU) {
    if (!ls->kcur) {
      return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "KLU: solve before factorization");
    }
    memcpy(x, b, (size_t)ls->n * sizeof(double));
    if (!klu_solve(ls->ksym, ls->kcur, ls->n, 1, x, &ls->common)) {
      return klu_fail(ls, "solve failed: ", err);
    }
    return MBS_OK;
  }
  int status = umfpack_di_solve(UMFPACK_A, ls->colptr, ls->rowind, values, x, b, ls->numeric,
                                ls->control, ls->info);
  if (status != UMFPACK_OK) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "%s (UMFPACK status %d)",
                         umf_reason(status), status);
  }
  return MBS_OK;
}

mbsStatus mbs_linsolve_solve_many(mbsLinsolve *ls, const double *values, int nrhs,
                                  const double *b, double *x, mbsError *err) {
  if (ls->kind != MBS_LINEAR_KLU) {
    for (int j = 0; j < nrhs; j++) {
      mbsStatus st = mbs_linsolve_solve(ls, values, b + (size_t)j * ls->n,
                                        x + (size_t)j * ls->n, err);
      if (st != MBS_OK) {
        return st;
      }
    }
    return MBS_OK;
  }
  if (!ls->kcur) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "KLU: solve before factorization");
  }
  memcpy(x, b, (size_t)nrhs * (size_t)ls->n * sizeof(double));
  /* the factorization the last factor() left for solves (knum, or kpin when the pinned order
   * was refactored): knum may hold an earlier matrix's factors then */
  if (!klu_solve(ls->ksym, ls->kcur, ls->n, nrhs, x, &ls->common)) {
    return klu_fail(ls, "solve failed: ", err);
  }
  return MBS_OK;
}

/* drop both factorizations: the next factor() analyses the new pattern */
static void drop(mbsLinsolve *ls) {
  if (ls->numeric) {
    umfpack_di_free_numeric(&ls->numeric);
  }
  if (ls->symbolic) {
    umfpack_di_free_symbolic(&ls->symbolic);
  }
  if (ls->knum) {
    klu_free_numeric(&ls->knum, &ls->common);
  }
  if (ls->kpin) {
    klu_free_numeric(&ls->kpin, &ls->common);
  }
  ls->kcur = NULL;
  if (ls->ksym) {
    klu_free_symbolic(&ls->ksym, &ls->common);
  }
}

void mbs_linsolve_reanalyse(mbsLinsolve *ls, int n, const int *colptr, const int *rowind) {
  drop(ls);
  ls->n = n;
  ls->colptr = colptr;
  ls->rowind = rowind;
  ls->rcond_fresh = 0.0;
}

void mbs_linsolve_set_scaling(mbsLinsolve *ls, int scale) {
  ls->common.scale = scale;
}

void mbs_linsolve_set_pivoting(mbsLinsolve *ls, double tol, double ratio, int btf) {
  ls->common.tol = tol;
  ls->repivot = ratio;
  ls->btf = btf;
}

long mbs_linsolve_analyses(const mbsLinsolve *ls) {
  return ls->analyses;
}

void mbs_linsolve_destroy(mbsLinsolve *ls) {
  if (!ls) {
    return;
  }
  drop(ls);
  free(ls);
}

void mbs_linsolve_set_order(mbsLinsolve *ls, const int *perm) {
  ls->perm = perm;
}

double mbs_linsolve_lu_entries(const mbsLinsolve *ls) {
  return ls->kind == MBS_LINEAR_KLU && ls->kcur ? (double)ls->kcur->lnz + (double)ls->kcur->unz
                                                : 0.0;
}

mbsStatus mbs_linsolve_pin(mbsLinsolve *ls, const double *values, mbsError *err) {
  if (ls->kind != MBS_LINEAR_KLU) {
    return MBS_OK;
  }
  mbsStatus st = klu_analyse(ls, err);
  if (st != MBS_OK) {
    return st;
  }
  ls->kcur = ls->knum;
  st = klu_fresh_into(ls, (int *)ls->colptr, (int *)ls->rowind, (double *)values, &ls->kpin,
                      &ls->rcond_pin, err);
  if (st == MBS_OK) {
    ls->kcur = ls->kpin;
  }
  return st;
}

mbsStatus mbs_linsolve_amd(int n, const int *colptr, const int *rowind, int *perm, mbsError *err) {
  double control[AMD_CONTROL], info[AMD_INFO];
  amd_defaults(control);
  int status = amd_order(n, colptr, rowind, perm, control, info);
  if (status == AMD_OUT_OF_MEMORY) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (AMD ordering)");
  }
  if (status != AMD_OK && status != AMD_OK_BUT_JUMBLED) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "AMD ordering failed (status %d)",
                         status);
  }
  return MBS_OK;
}

/* ---------- sparse Cholesky (CHOLMOD) ---------- */

struct mbsCholesky {
  cholmod_common cc;
  int started;
  cholmod_sparse *A; /* the lower triangle (stype -1); its values are the caller's last */
  cholmod_factor *L;
  cholmod_dense *B, *X, *Y, *E; /* solve's right-hand side, solution and workspaces */
  int factored;
};

static mbsStatus cholmod_fail(mbsCholesky *ch, const char *what, mbsError *err) {
  if (ch->cc.status == CHOLMOD_OUT_OF_MEMORY) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (CHOLMOD %s)", what);
  }
  return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "CHOLMOD %s failed (status %d)", what,
                       ch->cc.status);
}

void mbs_cholesky_destroy(mbsCholesky *ch) {
  if (!ch) {
    return;
  }
  if (ch->started) {
    cholmod_free_sparse(&ch->A, &ch->cc);
    cholmod_free_factor(&ch->L, &ch->cc);
    cholmod_free_dense(&ch->B, &ch->cc);
    cholmod_free_dense(&ch->X, &ch->cc);
    cholmod_free_dense(&ch->Y, &ch->cc);
    cholmod_free_dense(&ch->E, &ch->cc);
    cholmod_finish(&ch->cc);
  }
  free(ch);
}

mbsCholesky *mbs_cholesky_create(int n, const int *colptr, const int *rowind, mbsError *err) {
  mbsCholesky *ch = calloc(1, sizeof(*ch));
  if (!ch) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (Cholesky factorization)");
    return NULL;
  }
  ch->started = cholmod_start(&ch->cc);
  if (!ch->started) {
    mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "CHOLMOD: cannot start");
    free(ch);
    return NULL;
  }
  /* quiet, AMD alone (no search among orderings: the same order every run), and a
   * simplicial or supernodal factor as CHOLMOD judges from the fill */
  ch->cc.print = 0;
  ch->cc.error_handler = NULL;
  ch->cc.nmethods = 1;
  ch->cc.method[0].ordering = CHOLMOD_AMD;
  ch->cc.postorder = 1;
  size_t nnz = (size_t)colptr[n];
  ch->A = cholmod_allocate_sparse((size_t)n, (size_t)n, nnz > 0 ? nnz : 1, 1, 1, -1, CHOLMOD_REAL,
                                  &ch->cc);
  ch->B = cholmod_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, &ch->cc);
  if (!ch->A || !ch->B) {
    cholmod_fail(ch, "allocation", err);
    mbs_cholesky_destroy(ch);
    return NULL;
  }
  memcpy(ch->A->p, colptr, (size_t)(n + 1) * sizeof(int));
  memcpy(ch->A->i, rowind, nnz * sizeof(int));
  memset(ch->A->x, 0, (nnz > 0 ? nnz : 1) * sizeof(double));
  ch->L = cholmod_analyze(ch->A, &ch->cc);
  if (!ch->L) {
    cholmod_fail(ch, "analysis", err);
    mbs_cholesky_destroy(ch);
    return NULL;
  }
  return ch;
}

mbsStatus mbs_cholesky_factor(mbsCholesky *ch, const double *values, mbsError *err) {
  size_t nnz = (size_t)((const int *)ch->A->p)[ch->A->ncol];
  memcpy(ch->A->x, values, nnz * sizeof(double));
  ch->factored = 0;
  if (!cholmod_factorize(ch->A, ch->L, &ch->cc)) {
    return cholmod_fail(ch, "factorization", err);
  }
  if (ch->cc.status == CHOLMOD_NOT_POSDEF) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                         "the matrix is not positive definite (column %d)", (int)ch->L->minor);
  }
  ch->factored = 1;
  return MBS_OK;
}

mbsStatus mbs_cholesky_solve(mbsCholesky *ch, const double *b, double *x, mbsError *err) {
  if (!ch->factored) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                         "Cholesky: solve before factorization");
  }
  size_t n = ch->A->nrow;
  memcpy(ch->B->x, b, n * sizeof(double));
  /* X, Y and E are allocated by the first solve and reused by the next ones */
  if (!cholmod_solve2(CHOLMOD_A, ch->L, ch->B, NULL, &ch->X, NULL, &ch->Y, &ch->E, &ch->cc)) {
    return cholmod_fail(ch, "solve", err);
  }
  memcpy(x, ch->X->x, n * sizeof(double));
  return MBS_OK;
}
