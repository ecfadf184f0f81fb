/* test_linsolve.c: the sparse LU wrapper (src/solver/linsolve.c) with both back ends.
 * UMFPACK and KLU solve saddle-point systems shaped like our Newton matrices to round-off
 * (checked through the residual, which neither solver computes for us); KLU's reuse of
 * a pivot order falls back to fresh pivoting when the new values make that order break
 * down; a singular matrix is a clear MBS_ERR_LINSOLVE from both. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/linsolve.h"

#define NQ 30
#define NC 10
#define N (NQ + NC)

/* a fixed pseudo-random sequence in [-1, 1) (no libc rand: same numbers everywhere) */
static double next_value(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

/* a KKT matrix [[M, G^T], [G, 0]] with a banded SPD M and constraint rows G that each
 * couple a few neighbouring coordinates; dense column-major a[j * N + i] */
static void kkt(double *a, unsigned seed) {
  unsigned s = seed;
  memset(a, 0, sizeof(double) * N * N);
  for (int i = 0; i < NQ; i++) {
    a[i * N + i] = 4.0 + next_value(&s);
    if (i + 1 < NQ) {
      double c = 0.5 * next_value(&s);
      a[(i + 1) * N + i] = c;
      a[i * N + i + 1] = c;
    }
  }
  for (int r = 0; r < NC; r++) {
    for (int k = 0; k < 4; k++) {
      int j = 3 * r + k;
      double g = next_value(&s) + (k == 0 ? 2.0 : 0.0);
      a[j * N + NQ + r] = g;
      a[(NQ + r) * N + j] = g;
    }
  }
}

/* the pattern of kkt() (the same for every seed) in CSC */
static int pattern(const double *a, int *colptr, int *rowind) {
  int nz = 0;
  for (int j = 0; j < N; j++) {
    colptr[j] = nz;
    for (int i = 0; i < N; i++) {
      if (a[j * N + i] != 0.0) {
        rowind[nz++] = i;
      }
    }
  }
  colptr[N] = nz;
  return nz;
}

/* nb right-hand side values from the sequence seeded with bseed, the KKT matrix of seed kseed
 * (dense, in a) and its pattern */
static void kkt_problem(double *a, int *colptr, int *rowind, double *b, int nb, unsigned bseed,
                        unsigned kseed) {
  for (int i = 0; i < nb; i++) {
    b[i] = next_value(&bseed);
  }
  kkt(a, kseed);
  pattern(a, colptr, rowind);
}

static void values(const double *a, const int *colptr, const int *rowind, double *x) {
  for (int j = 0; j < N; j++) {
    for (int p = colptr[j]; p < colptr[j + 1]; p++) {
      x[p] = a[j * N + rowind[p]];
    }
  }
}

/* max |A x - b| / max |b| */
static double residual(const double *a, const double *x, const double *b) {
  double r = 0.0, bn = 0.0;
  for (int i = 0; i < N; i++) {
    double s = -b[i];
    for (int j = 0; j < N; j++) {
      s += a[j * N + i] * x[j];
    }
    r = fmax(r, fabs(s));
    bn = fmax(bn, fabs(b[i]));
  }
  return r / bn;
}

START_TEST(test_solvers_agree) {
  static double a[N * N];
  static int colptr[N + 1], rowind[N * N];
  static double ax[N * N];
  double b[N], x[2][N];
  kkt_problem(a, colptr, rowind, b, N, 7, 1);
  /* several value sets on one pattern: the second and later factorizations of KLU reuse
   * the pivot order of the first */
  mbsLinsolve *ls[2];
  mbsError err;
  for (int k = 0; k < 2; k++) {
    ls[k] =
        mbs_linsolve_create(k == 0 ? MBS_LINEAR_UMFPACK : MBS_LINEAR_KLU, N, colptr, rowind, &err);
    ck_assert_ptr_nonnull(ls[k]);
  }
  for (unsigned seed = 1; seed <= 5; seed++) {
    kkt(a, seed);
    values(a, colptr, rowind, ax);
    for (int k = 0; k < 2; k++) {
      ck_assert_msg(mbs_linsolve_factor(ls[k], ax, seed == 1, &err) == MBS_OK, "%s", err.msg);
      ck_assert_msg(mbs_linsolve_solve(ls[k], ax, b, x[k], &err) == MBS_OK, "%s", err.msg);
      double r = residual(a, x[k], b);
      /* measured: residual up to 5.0e-12, the two solvers agree to 1.2e-12 */
      ck_assert_msg(r <= 1.5e-11, "solver %d, values %u: residual %.3e", k, seed, r);
    }
    for (int i = 0; i < N; i++) {
      ck_assert_double_eq_tol(x[0][i], x[1][i], 4e-12 * (1.0 + fabs(x[0][i])));
    }
  }
  mbs_linsolve_destroy(ls[0]);
  mbs_linsolve_destroy(ls[1]);
}
END_TEST

/* five right-hand sides at once (KLU: a block of four and one) give each single solve's
 * solution bit for bit, with both back ends */
START_TEST(test_solve_many) {
  static double a[N * N];
  static int colptr[N + 1], rowind[N * N];
  static double ax[N * N];
  enum { NRHS = 5 };
  double b[NRHS * N], x[NRHS * N], x1[N];
  kkt_problem(a, colptr, rowind, b, NRHS * N, 11, 3);
  values(a, colptr, rowind, ax);
  mbsError err;
  for (int k = 0; k < 2; k++) {
    mbsLinsolve *ls =
        mbs_linsolve_create(k == 0 ? MBS_LINEAR_UMFPACK : MBS_LINEAR_KLU, N, colptr, rowind, &err);
    ck_assert_ptr_nonnull(ls);
    ck_assert_msg(mbs_linsolve_factor(ls, ax, 1, &err) == MBS_OK, "%s", err.msg);
    ck_assert_msg(mbs_linsolve_solve_many(ls, ax, NRHS, b, x, &err) == MBS_OK, "%s", err.msg);
    for (int j = 0; j < NRHS; j++) {
      ck_assert_msg(mbs_linsolve_solve(ls, ax, b + j * N, x1, &err) == MBS_OK, "%s", err.msg);
      ck_assert_double_le(residual(a, x + j * N, b + j * N), 1.5e-11);
      for (int i = 0; i < N; i++) {
        ck_assert_msg(x[j * N + i] == x1[i], "solver %d, rhs %d, x[%d]: %.17g != %.17g", k, j,
                      i, x[j * N + i], x1[i]);
      }
    }
    mbs_linsolve_destroy(ls);
  }
}
END_TEST

/* several right-hand sides solve with the factorization the last factor or pin left: after a
 * pin of new values (KLU: the pinned order's factors, an earlier matrix's in the fresh slot)
 * they match the single solve bit for bit and the new matrix's residual */
START_TEST(test_solve_many_pinned) {
  static double a1[N * N], a2[N * N];
  static int colptr[N + 1], rowind[N * N];
  static double ax1[N * N], ax2[N * N];
  enum { NRHS = 3 };
  double b[NRHS * N], x[NRHS * N], x1[N];
  unsigned s = 5;
  for (int i = 0; i < NRHS * N; i++) {
    b[i] = next_value(&s);
  }
  kkt(a1, 2);
  kkt(a2, 4);
  pattern(a1, colptr, rowind);
  values(a1, colptr, rowind, ax1);
  values(a2, colptr, rowind, ax2);
  mbsError err;
  mbsLinsolve *ls = mbs_linsolve_create(MBS_LINEAR_KLU, N, colptr, rowind, &err);
  ck_assert_ptr_nonnull(ls);
  ck_assert_msg(mbs_linsolve_factor(ls, ax1, 1, &err) == MBS_OK, "%s", err.msg);
  ck_assert_msg(mbs_linsolve_pin(ls, ax2, &err) == MBS_OK, "%s", err.msg);
  ck_assert_msg(mbs_linsolve_solve_many(ls, ax2, NRHS, b, x, &err) == MBS_OK, "%s", err.msg);
  for (int j = 0; j < NRHS; j++) {
    ck_assert_msg(mbs_linsolve_solve(ls, ax2, b + j * N, x1, &err) == MBS_OK, "%s", err.msg);
    double r = residual(a2, x + j * N, b + j * N);
    ck_assert_msg(r <= 1.5e-11, "rhs %d: residual %.3e of the pinned matrix", j, r);
    for (int i = 0; i < N; i++) {
      ck_assert_msg(x[j * N + i] == x1[i], "rhs %d, x[%d]: %.17g != %.17g", j, i, x[j * N + i],
                    x1[i]);
    }
  }
  mbs_linsolve_destroy(ls);
}
END_TEST

START_TEST(test_klu_repivots) {
  /* 2x2, full pattern. The first values pivot on a11 = 1; the next make a11 zero, then
   * 1e-15: the old order breaks down or is ill-conditioned, and KLU must pivot afresh */
  static const int colptr[3] = {0, 2, 4}, rowind[4] = {0, 1, 0, 1};
  const double first[4] = {1.0, 1.0, 1.0, 0.0};
  const double later[2][4] = {{0.0, 1.0, 1.0, 1.0}, {1e-15, 1.0, 1.0, 1.0}};
  const double b[2] = {1.0, 2.0};
  double x[2];
  mbsError err;
  mbsLinsolve *ls = mbs_linsolve_create(MBS_LINEAR_KLU, 2, colptr, rowind, &err);
  ck_assert_ptr_nonnull(ls);
  ck_assert_msg(mbs_linsolve_factor(ls, first, 1, &err) == MBS_OK, "%s", err.msg);
  ck_assert_int_eq(mbs_linsolve_solve(ls, first, b, x, &err), MBS_OK);
  /* [[1, 1], [1, 0]] x = (1, 2): x = (2, -1) */
  ck_assert_double_eq_tol(x[0], 2.0, 1e-15);
  ck_assert_double_eq_tol(x[1], -1.0, 1e-15);
  for (int k = 0; k < 2; k++) {
    ck_assert_msg(mbs_linsolve_factor(ls, later[k], 0, &err) == MBS_OK, "%s", err.msg);
    ck_assert_int_eq(mbs_linsolve_solve(ls, later[k], b, x, &err), MBS_OK);
    /* [[e, 1], [1, 1]] x = (1, 2): x = (1, 1 - e) / (1 - e) -> (1, 1) */
    double e = later[k][0];
    ck_assert_double_eq_tol(x[0], 1.0 / (1.0 - e), 1e-14);
    ck_assert_double_eq_tol(x[1], (1.0 - 2.0 * e) / (1.0 - e), 1e-14);
  }
  mbs_linsolve_destroy(ls);
}
END_TEST

START_TEST(test_klu_repivot_ratio) {
  /* [[1, 1], [1, 0]] pivots on a11 = 1 (condition estimate 1); [[1e-6, 1], [1, 1]] on that
   * order has pivots 1e-6 and -1e6 (estimate 1e-12): below the default ratio 1e-3 KLU pivots
   * afresh, below a ratio set to 1e-15 it keeps the order (and the solve stays exact to
   * round-off times the growth 1e6) */
  static const int colptr[3] = {0, 2, 4}, rowind[4] = {0, 1, 0, 1};
  const double first[4] = {1.0, 1.0, 1.0, 0.0}, later[4] = {1e-6, 1.0, 1.0, 1.0};
  const double b[2] = {1.0, 2.0};
  double x[2];
  mbsError err;
  for (int kept = 0; kept < 2; kept++) {
    mbsLinsolve *ls = mbs_linsolve_create(MBS_LINEAR_KLU, 2, colptr, rowind, &err);
    ck_assert_ptr_nonnull(ls);
    if (kept) {
      mbs_linsolve_set_pivoting(ls, 0.1, 1e-15, 0);
    }
    ck_assert_msg(mbs_linsolve_factor(ls, first, 0, &err) == MBS_OK, "%s", err.msg);
    ck_assert_msg(mbs_linsolve_factor(ls, later, 0, &err) == MBS_OK, "%s", err.msg);
    ck_assert_int_eq(mbs_linsolve_fresh_count(ls), kept ? 1 : 2);
    ck_assert_int_eq(mbs_linsolve_solve(ls, later, b, x, &err), MBS_OK);
    /* x = (1, 1 - 2e) / (1 - e), e = 1e-6 */
    ck_assert_double_eq_tol(x[0], 1.0 / (1.0 - 1e-6), 1e-9);
    ck_assert_double_eq_tol(x[1], (1.0 - 2e-6) / (1.0 - 1e-6), 1e-9);
    mbs_linsolve_destroy(ls);
  }
}
END_TEST

START_TEST(test_klu_diagonal_pivots) {
  /* [[0.01, 1], [1, 1]]: with the default tolerance 0.1 KLU pivots column 1 on a21 = 1, with
   * 1e-3 on the diagonal 0.01. Then row 2 becomes (0, 1) (a contact that opened): the first
   * order meets an exact zero pivot and pivots afresh, the diagonal one refactors. Both solve
   * [[0.01, 1], [0, 1]] x = (1, 2): x = (-100, 2) */
  static const int colptr[3] = {0, 2, 4}, rowind[4] = {0, 1, 0, 1};
  const double first[4] = {0.01, 1.0, 1.0, 1.0}, later[4] = {0.01, 0.0, 1.0, 1.0};
  const double b[2] = {1.0, 2.0};
  double x[2];
  mbsError err;
  for (int diag = 0; diag < 2; diag++) {
    mbsLinsolve *ls = mbs_linsolve_create(MBS_LINEAR_KLU, 2, colptr, rowind, &err);
    ck_assert_ptr_nonnull(ls);
    mbs_linsolve_set_pivoting(ls, diag ? 1e-3 : 0.1, 1e-3, 1);
    ck_assert_msg(mbs_linsolve_factor(ls, first, 0, &err) == MBS_OK, "%s", err.msg);
    ck_assert_msg(mbs_linsolve_factor(ls, later, 0, &err) == MBS_OK, "%s", err.msg);
    ck_assert_int_eq(mbs_linsolve_fresh_count(ls), diag ? 1 : 2);
    ck_assert_int_eq(mbs_linsolve_solve(ls, later, b, x, &err), MBS_OK);
    ck_assert_double_eq_tol(x[0], -100.0, 1e-12);
    ck_assert_double_eq_tol(x[1], 2.0, 1e-14);
    mbs_linsolve_destroy(ls);
  }
}
END_TEST

/* KLU without the block triangular form (mbs_linsolve_set_btf 0, the Newton matrix's
 * setting): AMD orders the symmetric pattern as it stands, whose constraint rows have zeros
 * on the diagonal, so KLU pivots off the diagonal there; it solves the saddle-point systems
 * to round-off as the BTF order does, on fresh and reused pivots (the fill is a property of
 * the pattern: on this band 292 entries against 289, on the chain of rigid links 6 % fewer) */
START_TEST(test_klu_without_btf) {
  static double a[N * N];
  static int colptr[N + 1], rowind[N * N];
  static double ax[N * N];
  double b[N], x[3][N], lu[3];
  kkt_problem(a, colptr, rowind, b, N, 11, 1);
  mbsLinsolve *ls[3];
  mbsError err;
  for (int k = 0; k < 3; k++) {
    ls[k] = mbs_linsolve_create(MBS_LINEAR_KLU, N, colptr, rowind, &err);
    ck_assert_ptr_nonnull(ls[k]);
  }
  mbs_linsolve_set_btf(ls[1], 0);
  /* -1: the BTF finds one block in this band, so the second order */
  mbs_linsolve_set_btf(ls[2], -1);
  for (unsigned seed = 1; seed <= 5; seed++) {
    kkt(a, seed);
    values(a, colptr, rowind, ax);
    for (int k = 0; k < 3; k++) {
      ck_assert_msg(mbs_linsolve_factor(ls[k], ax, 0, &err) == MBS_OK, "%s", err.msg);
      ck_assert_msg(mbs_linsolve_solve(ls[k], ax, b, x[k], &err) == MBS_OK, "%s", err.msg);
      double r = residual(a, x[k], b);
      /* as test_solvers_agree's bound */
      ck_assert_msg(r <= 1.5e-11, "solver %d, values %u: residual %.3e", k, seed, r);
      lu[k] = mbs_linsolve_lu_entries(ls[k]);
    }
    for (int i = 0; i < N; i++) {
      ck_assert_double_eq_tol(x[0][i], x[1][i], 4e-12 * (1.0 + fabs(x[0][i])));
    }
    ck_assert_msg(lu[1] > 0.0 && lu[1] != lu[0], "L + U: %g without BTF, %g with: the same order?",
                  lu[1], lu[0]);
    ck_assert_msg(lu[2] == lu[1], "L + U: %g with btf -1, %g without BTF", lu[2], lu[1]);
    for (int i = 0; i < N; i++) {
      ck_assert_msg(x[2][i] == x[1][i], "btf -1 and 0 differ in x[%d]", i);
    }
  }
  ck_assert_int_eq(mbs_linsolve_analyses(ls[1]), 1);
  for (int k = 0; k < 3; k++) {
    mbs_linsolve_destroy(ls[k]);
  }
}
END_TEST

START_TEST(test_reanalyse) {
  /* a 2x2 diagonal pattern, then the full 2x2 pattern: the second solve needs the new
   * analysis; factorizations on one pattern analyse once */
  static const int cp1[3] = {0, 1, 2}, ri1[2] = {0, 1};
  static const int cp2[3] = {0, 2, 4}, ri2[4] = {0, 1, 0, 1};
  const double d[2] = {2.0, 4.0}, full[4] = {2.0, 1.0, 1.0, 3.0};
  const double b[2] = {1.0, 2.0};
  double x[2];
  for (int k = 0; k < 2; k++) {
    mbsError err;
    mbsLinsolve *ls =
        mbs_linsolve_create(k == 0 ? MBS_LINEAR_UMFPACK : MBS_LINEAR_KLU, 2, cp1, ri1, &err);
    ck_assert_ptr_nonnull(ls);
    ck_assert_int_eq(mbs_linsolve_analyses(ls), 0);
    for (int rep = 0; rep < 3; rep++) {
      ck_assert_int_eq(mbs_linsolve_factor(ls, d, rep == 0, &err), MBS_OK);
      ck_assert_int_eq(mbs_linsolve_solve(ls, d, b, x, &err), MBS_OK);
      ck_assert_double_eq_tol(x[0], 0.5, 1e-15);
      ck_assert_double_eq_tol(x[1], 0.5, 1e-15);
    }
    ck_assert_int_eq(mbs_linsolve_analyses(ls), 1);
    mbs_linsolve_reanalyse(ls, 2, cp2, ri2);
    ck_assert_int_eq(mbs_linsolve_factor(ls, full, 0, &err), MBS_OK);
    ck_assert_int_eq(mbs_linsolve_solve(ls, full, b, x, &err), MBS_OK);
    /* [[2, 1], [1, 3]] x = (1, 2): x = (0.2, 0.6) */
    ck_assert_double_eq_tol(x[0], 0.2, 1e-15);
    ck_assert_double_eq_tol(x[1], 0.6, 1e-15);
    ck_assert_int_eq(mbs_linsolve_analyses(ls), 2);
    mbs_linsolve_destroy(ls);
  }
}
END_TEST

START_TEST(test_singular) {
  static const int colptr[3] = {0, 2, 4}, rowind[4] = {0, 1, 0, 1};
  const double ones[4] = {1.0, 1.0, 1.0, 1.0};
  for (int k = 0; k < 2; k++) {
    mbsError err;
    mbsLinsolve *ls =
        mbs_linsolve_create(k == 0 ? MBS_LINEAR_UMFPACK : MBS_LINEAR_KLU, 2, colptr, rowind, &err);
    ck_assert_ptr_nonnull(ls);
    ck_assert_int_eq(mbs_linsolve_factor(ls, ones, 1, &err), MBS_ERR_LINSOLVE);
    ck_assert_msg(strstr(err.msg, "singular") != NULL, "message: %s", err.msg);
    mbs_linsolve_destroy(ls);
  }
}
END_TEST

/* dense blocks (mbs_linsolve_set_blocks): a matrix of BNB separate KKT blocks of different
 * sizes (bq coordinates and bc constraint rows each, coupled within a block only), as free
 * rigid bodies give, with the unknowns of the blocks interleaved (no block is a contiguous
 * range) and one block a lone 1 x 1 */
#define BNB 4
#define BNT 45
static const int BLK_Q[BNB] = {12, 9, 1, 14}, BLK_C[BNB] = {6, 2, 0, 1};

/* the unknowns of the blocks: dealt out round robin to the blocks not yet full */
static void block_unknowns(int unk[BNB][BNT]) {
  int fill[BNB] = {0};
  int i = 0;
  while (i < BNT) {
    for (int k = 0; k < BNB && i < BNT; k++) {
      if (fill[k] < BLK_Q[k] + BLK_C[k]) {
        unk[k][fill[k]++] = i++;
      }
    }
  }
}

/* seed's values, dense column-major a[j * BNT + i]; constraint rows scaled by row_scale */
static void blocks(double *a, unsigned seed, double row_scale) {
  int unk[BNB][BNT];
  unsigned s = seed;
  block_unknowns(unk);
  memset(a, 0, sizeof(double) * BNT * BNT);
  for (int k = 0; k < BNB; k++) {
    const int *u = unk[k];
    int q = BLK_Q[k];
    for (int i = 0; i < q; i++) {
      a[u[i] * BNT + u[i]] = 1e-3 * (4.0 + next_value(&s));
      if (i + 1 < q) {
        double c = 5e-4 * next_value(&s);
        a[u[i + 1] * BNT + u[i]] = c;
        a[u[i] * BNT + u[i + 1]] = c;
      }
    }
    for (int r = 0; r < BLK_C[k]; r++) {
      for (int j = 0; j < q; j++) {
        double g = row_scale * next_value(&s);
        a[u[j] * BNT + u[q + r]] = g;
        a[u[q + r] * BNT + u[j]] = g;
      }
    }
  }
}

static void blocks_csc(const double *a, int *colptr, int *rowind, double *ax) {
  int nz = 0;
  for (int j = 0; j < BNT; j++) {
    colptr[j] = nz;
    for (int i = 0; i < BNT; i++) {
      if (a[j * BNT + i] != 0.0) {
        ax[nz] = a[j * BNT + i];
        rowind[nz++] = i;
      }
    }
  }
  colptr[BNT] = nz;
}

/* max |A x - b| / max |b| */
static double blocks_residual(const double *a, const double *x, const double *b) {
  double r = 0.0, bn = 0.0;
  for (int i = 0; i < BNT; i++) {
    double s = -b[i];
    for (int j = 0; j < BNT; j++) {
      s += a[j * BNT + i] * x[j];
    }
    r = fmax(r, fabs(s));
    bn = fmax(bn, fabs(b[i]));
  }
  return r / bn;
}

/* The blocks solve random block matrices to round-off and agree with KLU's solution of the
 * whole matrix; a factorization depends on its values alone (factored after other values,
 * with repivot 0, it gives the bits of the first); eleven right-hand sides at once give
 * the single solves' bits; the LU holds sum s^2 entries; a block
 * larger than the limit leaves the matrix to KLU (KLU's own bits) */
START_TEST(test_dense_blocks) {
  enum { NRHS = 11 };
  static double a[BNT * BNT], a2[BNT * BNT], ax[BNT * BNT], ax2[BNT * BNT];
  static int colptr[BNT + 1], rowind[BNT * BNT], cp2[BNT + 1], ri2[BNT * BNT];
  static double b[NRHS * BNT], xm[NRHS * BNT];
  double x[BNT], xk[BNT], xr[BNT];
  unsigned s = 3;
  for (int i = 0; i < NRHS * BNT; i++) {
    b[i] = next_value(&s);
  }
  mbsError err;
  for (unsigned seed = 1; seed <= 6; seed++) {
    double scale = seed % 2 ? 2.0 : 0.5;
    blocks(a, seed, scale);
    blocks(a2, seed + 100, 1.0 / scale);
    blocks_csc(a, colptr, rowind, ax);
    blocks_csc(a2, cp2, ri2, ax2);
    ck_assert_int_eq(memcmp(colptr, cp2, sizeof(colptr)), 0);
    mbsLinsolve *ls = mbs_linsolve_create(MBS_LINEAR_KLU, BNT, colptr, rowind, &err);
    mbsLinsolve *lk = mbs_linsolve_create(MBS_LINEAR_KLU, BNT, colptr, rowind, &err);
    ck_assert_ptr_nonnull(ls);
    ck_assert_ptr_nonnull(lk);
    mbs_linsolve_set_blocks(ls, 20);
    ck_assert_msg(mbs_linsolve_factor(ls, ax, 1, &err) == MBS_OK, "%s", err.msg);
    ck_assert_msg(mbs_linsolve_solve(ls, ax, b, x, &err) == MBS_OK, "%s", err.msg);
    ck_assert_msg(mbs_linsolve_factor(lk, ax, 1, &err) == MBS_OK, "%s", err.msg);
    ck_assert_msg(mbs_linsolve_solve(lk, ax, b, xk, &err) == MBS_OK, "%s", err.msg);
    double r = blocks_residual(a, x, b), rk = blocks_residual(a, xk, b), dmax = 0.0;
    for (int i = 0; i < BNT; i++) {
      dmax = fmax(dmax, fabs(x[i] - xk[i]) / (1.0 + fabs(xk[i])));
    }
    /* measured: residuals up to 1.4e-13 (KLU's up to 1.7e-13: the blocks mix entries of
     * 1e-3 and 2), solutions within 8.6e-14 of KLU's */
    ck_assert_msg(r <= 1e-12 && rk <= 1e-12, "seed %u: residual %.3e (KLU %.3e)", seed, r, rk);
    ck_assert_msg(dmax <= 1e-12, "seed %u: blocks and KLU differ by %.3e", seed, dmax);
    ck_assert_double_eq(mbs_linsolve_lu_entries(ls), 18.0 * 18 + 11 * 11 + 1 + 15 * 15);
    /* other values in between, then the first again without repivoting: the same bits */
    ck_assert_int_eq(mbs_linsolve_factor(ls, ax2, 0, &err), MBS_OK);
    ck_assert_int_eq(mbs_linsolve_solve(ls, ax2, b, xr, &err), MBS_OK);
    ck_assert_double_le(blocks_residual(a2, xr, b), 1e-12);
    ck_assert_int_eq(mbs_linsolve_factor(ls, ax, 0, &err), MBS_OK);
    ck_assert_int_eq(mbs_linsolve_solve(ls, ax, b, xr, &err), MBS_OK);
    ck_assert_int_eq(memcmp(x, xr, sizeof(x)), 0);
    /* x may be b's storage */
    memcpy(xr, b, sizeof(xr));
    ck_assert_int_eq(mbs_linsolve_solve(ls, ax, xr, xr, &err), MBS_OK);
    ck_assert_int_eq(memcmp(x, xr, sizeof(x)), 0);
    /* many right-hand sides at once: each single solve's bits */
    ck_assert_msg(mbs_linsolve_solve_many(ls, ax, NRHS, b, xm, &err) == MBS_OK, "%s", err.msg);
    for (int j = 0; j < NRHS; j++) {
      ck_assert_int_eq(mbs_linsolve_solve(ls, ax, b + j * BNT, xr, &err), MBS_OK);
      for (int i = 0; i < BNT; i++) {
        ck_assert_msg(xm[j * BNT + i] == xr[i], "rhs %d, x[%d]: %.17g != %.17g", j, i,
                      xm[j * BNT + i], xr[i]);
      }
    }
    /* a limit below the largest block (18): KLU's own bits */
    mbs_linsolve_set_blocks(ls, 17);
    ck_assert_int_eq(mbs_linsolve_factor(ls, ax, 1, &err), MBS_OK);
    ck_assert_int_eq(mbs_linsolve_solve(ls, ax, b, xr, &err), MBS_OK);
    ck_assert_int_eq(memcmp(xk, xr, sizeof(xk)), 0);
    mbs_linsolve_destroy(ls);
    mbs_linsolve_destroy(lk);
  }
}
END_TEST

/* a singular block (a constraint row of block 1 zeroed, the others regular) is a clear
 * MBS_ERR_LINSOLVE naming an unknown of that block, as KLU's for the whole matrix; a solve
 * after it is an error too (no stale factors), and the regular values factor again */
START_TEST(test_dense_blocks_singular) {
  static double a[BNT * BNT], ax[BNT * BNT], axs[BNT * BNT];
  static int colptr[BNT + 1], rowind[BNT * BNT];
  double b[BNT], x[BNT];
  int unk[BNB][BNT];
  unsigned s = 9;
  for (int i = 0; i < BNT; i++) {
    b[i] = next_value(&s);
  }
  block_unknowns(unk);
  blocks(a, 7, 1.0);
  blocks_csc(a, colptr, rowind, ax);
  int row = unk[1][BLK_Q[1] + 1];
  memcpy(axs, ax, sizeof(axs));
  for (int j = 0; j < BNT; j++) {
    for (int p = colptr[j]; p < colptr[j + 1]; p++) {
      if (rowind[p] == row || j == row) {
        axs[p] = 0.0;
      }
    }
  }
  mbsError err;
  mbsLinsolve *ls = mbs_linsolve_create(MBS_LINEAR_KLU, BNT, colptr, rowind, &err);
  mbsLinsolve *lk = mbs_linsolve_create(MBS_LINEAR_KLU, BNT, colptr, rowind, &err);
  ck_assert_ptr_nonnull(ls);
  ck_assert_ptr_nonnull(lk);
  mbs_linsolve_set_blocks(ls, 32);
  ck_assert_int_eq(mbs_linsolve_factor(lk, axs, 1, &err), MBS_ERR_LINSOLVE);
  ck_assert_int_eq(mbs_linsolve_factor(ls, ax, 1, &err), MBS_OK);
  ck_assert_int_eq(mbs_linsolve_factor(ls, axs, 1, &err), MBS_ERR_LINSOLVE);
  ck_assert_msg(strstr(err.msg, "singular") != NULL, "message: %s", err.msg);
  /* the zero pivot is met in block 1 (its unknowns: 1, 5, 9, ...) */
  int named = -1;
  const char *at = strstr(err.msg, "unknown ");
  ck_assert_msg(at != NULL && sscanf(at, "unknown %d", &named) == 1, "message: %s", err.msg);
  int in_block = 0;
  for (int i = 0; i < BLK_Q[1] + BLK_C[1]; i++) {
    in_block |= unk[1][i] == named;
  }
  ck_assert_msg(in_block, "unknown %d is not in the singular block: %s", named, err.msg);
  ck_assert_int_eq(mbs_linsolve_solve(ls, axs, b, x, &err), MBS_ERR_LINSOLVE);
  ck_assert_int_eq(mbs_linsolve_solve_many(ls, axs, 1, b, x, &err), MBS_ERR_LINSOLVE);
  ck_assert_int_eq(mbs_linsolve_factor(ls, ax, 1, &err), MBS_OK);
  ck_assert_int_eq(mbs_linsolve_solve(ls, ax, b, x, &err), MBS_OK);
  ck_assert_double_le(blocks_residual(a, x, b), 1e-12);
  mbs_linsolve_destroy(ls);
  mbs_linsolve_destroy(lk);
}
END_TEST

Suite *linsolve_suite(void) {
  Suite *s = suite_create("linsolve");
  TCase *tc = tcase_create("umfpack_klu");
  tcase_add_test(tc, test_solvers_agree);
  tcase_add_test(tc, test_solve_many);
  tcase_add_test(tc, test_solve_many_pinned);
  tcase_add_test(tc, test_klu_repivots);
  tcase_add_test(tc, test_klu_repivot_ratio);
  tcase_add_test(tc, test_klu_diagonal_pivots);
  tcase_add_test(tc, test_klu_without_btf);
  tcase_add_test(tc, test_singular);
  tcase_add_test(tc, test_reanalyse);
  tcase_add_test(tc, test_dense_blocks);
  tcase_add_test(tc, test_dense_blocks_singular);
  suite_add_tcase(s, tc);
  return s;
}
