/* test_linsolve.c: the sparse LU wrapper (src/solver/linsolve.c) with both back ends.
 * UMFPACK and KLU solve saddle-point systems shaped like our Newton matrices to round-off
 * (checked through the residual, which neither solver computes for us); KLU's reuse of
 * a pivot order falls back to fresh pivoting when the new values make that order break
 * down; a singular matrix is a clear MBS_ERR_LINSOLVE from both. */
#include <check.h>
#include <math.h>
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
  unsigned s = 7;
  for (int i = 0; i < N; i++) {
    b[i] = next_value(&s);
  }
  kkt(a, 1);
  pattern(a, colptr, rowind);
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
  unsigned s = 11;
  for (int i = 0; i < NRHS * N; i++) {
    b[i] = next_value(&s);
  }
  kkt(a, 3);
  pattern(a, colptr, rowind);
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

Suite *linsolve_suite(void) {
  Suite *s = suite_create("linsolve");
  TCase *tc = tcase_create("umfpack_klu");
  tcase_add_test(tc, test_solvers_agree);
  tcase_add_test(tc, test_solve_many);
  tcase_add_test(tc, test_solve_many_pinned);
  tcase_add_test(tc, test_klu_repivots);
  tcase_add_test(tc, test_klu_repivot_ratio);
  tcase_add_test(tc, test_klu_diagonal_pivots);
  tcase_add_test(tc, test_singular);
  tcase_add_test(tc, test_reanalyse);
  suite_add_tcase(s, tc);
  return s;
}
