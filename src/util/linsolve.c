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
#include "util/lapack.h"

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
  int ordering;       /* KLU's fill-reducing order: 0 AMD (the default), 1 COLAMD */
  int btf;            /* KLU's block triangular form before its AMD order: 1 (the default),
                       * 0 none, -1 only where it finds more than one block */
  long analyses;      /* symbolic analyses done */
  long fresh;         /* full factorizations with fresh pivoting (these allocate) */
  /* dense blocks (mbs_linsolve_set_blocks): the pattern's connected components, each
   * factored by LAPACK when none has more than blk_max unknowns */
  int blk_max;      /* 0: KLU alone */
  int nblk;         /* blocks of the analysed pattern; 0 not analysed, -1 one is too large */
  int blk_size;     /* unknowns of the largest block */
  int *blk_ptr;     /* (nblk + 1) each block's unknowns in blk_unk */
  int *blk_unk;     /* (n) the unknowns block by block, ascending within each */
  int *blk_pos;     /* (n) each unknown's place in its block */
  long *blk_lu0;    /* (nblk + 1) each block's LU (column-major, size^2) in blk_lu */
  double *blk_lu;   /* dgetrf's factors, block after block */
  int *blk_piv;     /* (n) dgetrf's row interchanges, block after block (1-based in each) */
  double *blk_work; /* (blk_size) one block's right-hand side */
  int blk_valid;    /* the blocks hold a factorization of the current values */
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
      ls->common.btf = ls->btf != 0;
      ls->common.ordering = ls->ordering;
      ls->ksym = klu_analyze(ls->n, ap, ai, &ls->common);
      /* btf -1: a pattern that the block triangular form leaves one block is ordered again,
       * by AMD on its own symmetric pattern (mbs_linsolve_set_btf) */
      if (ls->ksym && ls->btf < 0 && ls->ksym->nblocks == 1) {
        klu_free_symbolic(&ls->ksym, &ls->common);
        ls->common.btf = 0;
        ls->ksym = klu_analyze(ls->n, ap, ai, &ls->common);
      }
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

/* ---------- dense blocks (mbs_linsolve_set_blocks) ----------
 *
 * A Newton matrix whose pattern falls apart into small connected components (free rigid
 * bodies: 18 unknowns each, and nothing between them) is factored component by component:
 * each gathered into a contiguous column-major block and factored by LAPACK's dgetrf
 * (partial pivoting by rows, a function of the block's values alone), solved by dgetrs.
 * The components are found once per pattern (at the first factorization after create,
 * set_blocks or reanalyse); a factorization only gathers and factors, allocating nothing. */

static void blk_free(mbsLinsolve *ls) {
  free(ls->blk_ptr);
  free(ls->blk_unk);
  free(ls->blk_pos);
  free(ls->blk_lu0);
  free(ls->blk_lu);
  free(ls->blk_piv);
  free(ls->blk_work);
  ls->blk_ptr = ls->blk_unk = ls->blk_pos = ls->blk_piv = NULL;
  ls->blk_lu0 = NULL;
  ls->blk_lu = ls->blk_work = NULL;
  ls->nblk = 0;
  ls->blk_size = 0;
  ls->blk_valid = 0;
}

/* the root of i's component, halving the path on the way */
static int blk_root(int *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/* the connected components of the pattern (an entry (i, j) joins unknowns i and j) into
 * ls->blk_*, numbered by their smallest unknown, each one's unknowns ascending; nblk = -1
 * (and nothing kept) when one has more than blk_max unknowns; MBS_ERR_NOMEM */
static mbsStatus blk_analyse(mbsLinsolve *ls, mbsError *err) {
  int n = ls->n;
  size_t n1 = (size_t)(n > 0 ? n : 1);
  int *parent = malloc(n1 * sizeof(int)), *of = malloc(n1 * sizeof(int));
  int *cnt = calloc(n1 + 1, sizeof(int));
  mbsStatus st = MBS_OK;
  if (!parent || !of || !cnt) {
    goto nomem;
  }
  /* union-find over the entries, the smaller unknown the root */
  for (int i = 0; i < n; i++) {
    parent[i] = i;
  }
  for (int j = 0; j < n; j++) {
    for (int p = ls->colptr[j]; p < ls->colptr[j + 1]; p++) {
      int a = blk_root(parent, ls->rowind[p]), b = blk_root(parent, j);
      if (a != b) {
        parent[a < b ? b : a] = a < b ? a : b;
      }
    }
  }
  /* block numbers in the order of the roots (a root precedes its component's unknowns) */
  int nb = 0, smax = 0;
  for (int i = 0; i < n; i++) {
    int r = blk_root(parent, i);
    of[i] = r == i ? nb++ : of[r];
    cnt[of[i] + 1]++;
  }
  for (int b = 0; b < nb; b++) {
    smax = cnt[b + 1] > smax ? cnt[b + 1] : smax;
  }
  ls->analyses++;
  if (smax > ls->blk_max) {
    ls->nblk = -1;
    goto done;
  }
  ls->blk_ptr = malloc(((size_t)nb + 1) * sizeof(int));
  ls->blk_lu0 = malloc(((size_t)nb + 1) * sizeof(long));
  ls->blk_unk = malloc(n1 * sizeof(int));
  ls->blk_pos = malloc(n1 * sizeof(int));
  ls->blk_piv = malloc(n1 * sizeof(int));
  ls->blk_work = malloc(((size_t)smax + 1) * sizeof(double));
  if (!ls->blk_ptr || !ls->blk_lu0 || !ls->blk_unk || !ls->blk_pos || !ls->blk_piv ||
      !ls->blk_work) {
    goto nomem;
  }
  /* each block's unknowns (ascending) and LU storage (s^2, one after the other) */
  ls->blk_lu0[0] = 0;
  for (int b = 0; b < nb; b++) {
    ls->blk_lu0[b + 1] = ls->blk_lu0[b] + (long)cnt[b + 1] * cnt[b + 1];
    cnt[b + 1] += cnt[b];
  }
  memcpy(ls->blk_ptr, cnt, ((size_t)nb + 1) * sizeof(int));
  for (int i = 0; i < n; i++) {
    int k = cnt[of[i]]++;
    ls->blk_unk[k] = i;
    ls->blk_pos[i] = k - ls->blk_ptr[of[i]];
  }
  ls->blk_lu = malloc((size_t)(ls->blk_lu0[nb] > 0 ? ls->blk_lu0[nb] : 1) * sizeof(double));
  if (!ls->blk_lu) {
    goto nomem;
  }
  ls->nblk = nb;
  ls->blk_size = smax;
  goto done;
nomem:
  blk_free(ls);
  st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (linear solver)");
done:
  free(cnt);
  free(of);
  free(parent);
  return st;
}

/* each block gathered from the compressed columns and factored P A = L U by dgetrf */
static mbsStatus blk_factor(mbsLinsolve *ls, const double *values, mbsError *err) {
  ls->blk_valid = 0;
  ls->fresh++;
  for (int b = 0; b < ls->nblk; b++) {
    int s = ls->blk_ptr[b + 1] - ls->blk_ptr[b], info = 0;
    const int *unk = ls->blk_unk + ls->blk_ptr[b];
    double *a = ls->blk_lu + ls->blk_lu0[b];
    memset(a, 0, (size_t)s * (size_t)s * sizeof(double));
    for (int jj = 0; jj < s; jj++) {
      int j = unk[jj];
      for (int p = ls->colptr[j]; p < ls->colptr[j + 1]; p++) {
        a[(size_t)jj * s + ls->blk_pos[ls->rowind[p]]] += values[p];
      }
    }
    dgetrf_(&s, &s, a, &s, ls->blk_piv + ls->blk_ptr[b], &info);
    if (info > 0) {
      /* U(info, info) exactly zero, as KLU's halt at a zero pivot */
      return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                           "%s (dense block of %d unknowns: zero pivot at unknown %d)",
                           singular_reason, s, unk[info - 1]);
    }
    if (info < 0) {
      return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "LAPACK dgetrf: argument %d",
                           -info);
    }
  }
  ls->blk_valid = 1;
  return MBS_OK;
}

/* x_j = A^-1 b_j (nrhs columns of n; x may be b) with the blocks: per block, each
 * right-hand side gathered and solved by its own dgetrs (several at once take another path
 * through OpenBLAS, dtrsm for dtrsv, and other bits: each x_j stays a single solve's) */
static mbsStatus blk_solve(mbsLinsolve *ls, int nrhs, const double *b, double *x,
                           mbsError *err) {
  if (!ls->blk_valid) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                         "dense blocks: solve before factorization");
  }
  size_t n = (size_t)ls->n;
  double *y = ls->blk_work;
  int one = 1;
  for (int r = 0; r < nrhs; r++) {
    const double *bj = b + (size_t)r * n;
    double *xj = x + (size_t)r * n;
    for (int bl = 0; bl < ls->nblk; bl++) {
      int s = ls->blk_ptr[bl + 1] - ls->blk_ptr[bl], info = 0;
      const int *unk = ls->blk_unk + ls->blk_ptr[bl];
      for (int i = 0; i < s; i++) {
        y[i] = bj[unk[i]];
      }
      dgetrs_("N", &s, &one, ls->blk_lu + ls->blk_lu0[bl], &s, ls->blk_piv + ls->blk_ptr[bl], y,
              &s, &info, 1);
      if (info != 0) {
        return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "LAPACK dgetrs: argument %d",
                             -info);
      }
      for (int i = 0; i < s; i++) {
        xj[unk[i]] = y[i];
      }
    }
  }
  return MBS_OK;
}

/* 1 when the dense blocks serve this pattern (analysed on the first call), 0 for KLU, -1
 * out of memory (err) */
static int blk_active(mbsLinsolve *ls, mbsError *err) {
  if (ls->kind != MBS_LINEAR_KLU || ls->blk_max <= 0) {
    return 0;
  }
  if (ls->nblk == 0 && ls->n > 0 && blk_analyse(ls, err) != MBS_OK) {
    return -1;
  }
  return ls->nblk > 0;
}

/* the blocks hold the last factorization (solves go through them) */
static int blk_serving(const mbsLinsolve *ls) {
  return ls->kind == MBS_LINEAR_KLU && ls->blk_max > 0 && ls->nblk > 0;
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
  int blk = blk_active(ls, err);
  if (blk != 0) {
    return blk < 0 ? MBS_ERR_NOMEM : blk_factor(ls, values, err);
  }
  return ls->kind == MBS_LINEAR_KLU ? klu_factor_values(ls, values, repivot, err)
                                    : umf_factor(ls, values, err);
}

mbsStatus mbs_linsolve_solve(mbsLinsolve *ls, const double *values, const double *b, double *x,
                             mbsError *err) {
  if (blk_serving(ls)) {
    return blk_solve(ls, 1, b, x, err);
  }
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
  if (blk_serving(ls)) {
    return blk_solve(ls, nrhs, b, x, err);
  }
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
  blk_free(ls);
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

void mbs_linsolve_set_btf(mbsLinsolve *ls, int btf) {
  ls->btf = btf;
}

void mbs_linsolve_set_ordering(mbsLinsolve *ls, int colamd) {
  ls->ordering = colamd ? 1 : 0;
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

void mbs_linsolve_set_blocks(mbsLinsolve *ls, int max) {
  if (max != ls->blk_max) {
    blk_free(ls);
    ls->blk_max = max;
  }
}

void mbs_linsolve_set_order(mbsLinsolve *ls, const int *perm) {
  ls->perm = perm;
}

double mbs_linsolve_lu_entries(const mbsLinsolve *ls) {
  if (blk_serving(ls)) {
    return ls->blk_valid ? (double)ls->blk_lu0[ls->nblk] : 0.0;
  }
  return ls->kind == MBS_LINEAR_KLU && ls->kcur ? (double)ls->kcur->lnz + (double)ls->kcur->unz
                                                : 0.0;
}

mbsStatus mbs_linsolve_pin(mbsLinsolve *ls, const double *values, mbsError *err) {
  int blk = blk_active(ls, err);
  if (blk != 0) {
    /* the blocks pivot afresh at every factorization, cheaply: nothing to pin */
    return blk < 0 ? MBS_ERR_NOMEM : MBS_OK;
  }
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
  cholmod_sparse *A; /* the upper triangle (stype 1); its values are the caller's last */
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
  /* quiet, the caller's order (natural, not postordered) and a simplicial factor: the upper
   * triangle in the order it is factored is what CHOLMOD's up-looking factorization
   * (cholmod_rowfac) reads as it is, where a fill-reducing order of its own or the lower
   * triangle would have it transpose the matrix at every factorization */
  ch->cc.print = 0;
  ch->cc.error_handler = NULL;
  ch->cc.nmethods = 1;
  ch->cc.method[0].ordering = CHOLMOD_NATURAL;
  ch->cc.postorder = 0;
  ch->cc.supernodal = CHOLMOD_SIMPLICIAL;
  size_t nnz = (size_t)colptr[n];
  ch->A = cholmod_allocate_sparse((size_t)n, (size_t)n, nnz > 0 ? nnz : 1, 1, 1, 1, CHOLMOD_REAL,
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
