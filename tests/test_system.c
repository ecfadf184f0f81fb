/* test_system.c: the solver's linear system (src/solver/system.c).
 *
 * For every shipped deck's model, the one-stage pattern is the set of entries the Newton
 * matrix needs (coordinate diagonals, mass blocks, quadratic rows' G, G^T and Hessian
 * blocks, element blocks, constraint elements' G, G^T), sorted, and every map entry is the
 * slot of its own (row, column). The stage expansion equals a reference built here from the
 * one-stage pattern. With a dynamic tail the sparse LU solves what dense LAPACK (dgesv)
 * solves, re-analyses only when the tail's structure changes, and KLU's refactorization
 * allocates nothing (counted through SuiteSparse's allocator hooks). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <SuiteSparse_config.h>

#include "mbsim/deck.h"
#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "solver/system.h"

/* the runner runs in build/, the decks are in ../decks */
#define DECKS "../decks/"

/* LAPACK's dense LU solve (Fortran interface, from the BLAS/LAPACK the program links) */
extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b,
                   const int *ldb, int *info);

static mbsModel *load(const char *path, mbsDeck *deck) {
  mbsError err;
  memset(deck, 0, sizeof(*deck));
  ck_assert_msg(mbs_deck_load(deck, path, NULL, 0, &err) == MBS_OK, "%s: %s", path, err.msg);
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s: %s", path, err.msg);
  return m;
}

static mbsSystem *make_system(const mbsModel *m, int nstage, const int *couple, int tail_max,
                              int tail_nnz_max) {
  mbsError err;
  mbsSystem *sys = mbs_system_create(m, nstage, couple, tail_max, tail_nnz_max, &err);
  ck_assert_msg(sys != NULL, "%s", err.msg);
  return sys;
}

/* the column of a slot in the pattern now */
static int col_of(const mbsSystem *sys, int slot) {
  int lo = 0, hi = sys->n - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (sys->colptr[mid] <= slot) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

/* slot holds (row, col) of the pattern now, and is marked as used */
static void expect_slot(const mbsSystem *sys, int slot, int row, int col, char *used) {
  ck_assert_int_ge(slot, 0);
  ck_assert_int_lt(slot, sys->nnz);
  ck_assert_int_eq(sys->rowind[slot], row);
  ck_assert_int_eq(col_of(sys, slot), col);
  if (used) {
    used[slot] = 1;
  }
}

/* every map of block (s, s') holds the slots of its entries; marks them in used (or NULL) */
static void check_maps(const mbsModel *m, const mbsSystem *sys, int s, int s2, char *used) {
  const mbsSystemMaps *mp = mbs_system_block_maps(sys, s, s2);
  ck_assert_ptr_nonnull(mp);
  int nq = m->nq, ro = s * sys->nsp, co = s2 * sys->nsp;
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    for (int c = 0; c < 3; c++) {
      expect_slot(sys, mp->mass_map[6 * e + c], ro + 3 * a + c, co + 3 * b + c, used);
      if (a == b) {
        ck_assert_int_eq(mp->mass_map[6 * e + 3 + c], -1);
      } else {
        /* (a, b) and (b, a): two distinct slots */
        expect_slot(sys, mp->mass_map[6 * e + 3 + c], ro + 3 * b + c, co + 3 * a + c, used);
        ck_assert_int_ne(mp->mass_map[6 * e + c], mp->mass_map[6 * e + 3 + c]);
      }
    }
  }
  for (int r = 0; r < m->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    const int *g = mp->con_gmap + sys->con_goff[r];
    ck_assert_int_eq(sys->con_goff[r + 1] - sys->con_goff[r], 6 * row->nnode);
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        expect_slot(sys, g[6 * k + c], ro + nq + r, co + 3 * row->node[k] + c, used);
        expect_slot(sys, g[6 * k + 3 + c], ro + 3 * row->node[k] + c, co + nq + r, used);
      }
    }
    for (int p = sys->con_hstart[r]; p < sys->con_hstart[r + 1]; p++) {
      int k = sys->con_hk[p], l = sys->con_hl[p];
      double h = row->s * (row->wa[k] * row->wb[l] + row->wb[k] * row->wa[l]);
      ck_assert(h != 0.0 && h == sys->con_hcoef[p]);
      for (int c = 0; c < 3; c++) {
        expect_slot(sys, mp->con_hmap[3 * p + c], ro + 3 * row->node[k] + c,
                    co + 3 * row->node[l] + c, used);
      }
    }
  }
  for (int e = 0; e < m->nelem; e++) {
    const mbsElem *el = &m->elem[e];
    const int *map = mp->elem_jmap + sys->elem_joff[e];
    const int *gm = mp->elem_gmap + sys->elem_goff[e];
    ck_assert_int_eq(sys->elem_joff[e + 1] - sys->elem_joff[e], el->nq * el->nq);
    ck_assert_int_eq(sys->elem_goff[e + 1] - sys->elem_goff[e], 2 * el->ncon * el->nq);
    for (int i = 0; i < el->nq; i++) {
      for (int j = 0; j < el->nq; j++) {
        expect_slot(sys, map[i * el->nq + j], ro + el->qidx[i], co + el->qidx[j], used);
        if (s == 0 && s2 == 0) {
          ck_assert_int_eq(mbs_system_elem_slot(sys, e, i, j), map[i * el->nq + j]);
        }
      }
      for (int r = 0; r < el->ncon; r++) {
        int row = nq + el->con0 + r;
        expect_slot(sys, gm[(r * el->nq + i) * 2], ro + row, co + el->qidx[i], used);
        expect_slot(sys, gm[(r * el->nq + i) * 2 + 1], ro + el->qidx[i], co + row, used);
      }
    }
  }
  /* the coordinates' diagonals */
  for (int i = 0; i < nq; i++) {
    int sl = mbs_system_slot(sys, ro + i, co + i);
    expect_slot(sys, sl, ro + i, co + i, used);
  }
}

/* CSC well formed: columns ascending, rows strictly ascending within a column */
static void check_csc(const mbsSystem *sys) {
  ck_assert_int_eq(sys->colptr[0], 0);
  ck_assert_int_eq(sys->colptr[sys->n], sys->nnz);
  for (int c = 0; c < sys->n; c++) {
    ck_assert_int_le(sys->colptr[c], sys->colptr[c + 1]);
    for (int k = sys->colptr[c] + 1; k < sys->colptr[c + 1]; k++) {
      ck_assert_int_lt(sys->rowind[k - 1], sys->rowind[k]);
    }
  }
}

/* the deck files, sorted */
static int deck_names(char names[][256], int max) {
  DIR *dir = opendir(DECKS);
  ck_assert_ptr_nonnull(dir);
  int n = 0;
  struct dirent *ent;
  while ((ent = readdir(dir)) && n < max) {
    size_t len = strlen(ent->d_name);
    if (len > 5 && strcmp(ent->d_name + len - 5, ".yaml") == 0) {
      int w = snprintf(names[n], 256, DECKS "%.*s", 200, ent->d_name);
      ck_assert_msg(w > 0 && w < 256 && len <= 200, "deck name too long: %s", ent->d_name);
      n++;
    }
  }
  closedir(dir);
  qsort(names, (size_t)n, 256, (int (*)(const void *, const void *))strcmp);
  return n;
}

START_TEST(test_one_stage_pattern) {
  /* every shipped deck: nothing in the pattern that no map or diagonal uses, every map
   * entry at its own (row, col), the sizes of the one-stage system */
  static char names[64][256];
  int ndeck = deck_names(names, 64);
  ck_assert_int_ge(ndeck, 6);
  long apart = 0; /* node pairs of a linear row left out of the pattern */
  for (int k = 0; k < ndeck; k++) {
    mbsDeck deck;
    mbsModel *m = load(names[k], &deck);
    mbsSystem *sys = make_system(m, 1, NULL, 0, 0);
    ck_assert_int_eq(sys->n, m->nq + m->ncon);
    /* a linear row (s = 0: a spherical joint's) has no Hessian: the node pairs of its two
     * bodies are in the pattern only through some other part */
    for (int r = 0; r < m->nrow; r++) {
      const mbsConRow *row = &m->con[r];
      for (int a = 0; a < row->nnode && row->s == 0.0; a++) {
        for (int b = 0; b < row->nnode; b++) {
          apart += mbs_system_slot(sys, 3 * row->node[a], 3 * row->node[b]) < 0;
        }
      }
    }
    ck_assert_int_eq(sys->nblock, 1);
    check_csc(sys);
    char *used = calloc((size_t)sys->nnz, 1);
    ck_assert_ptr_nonnull(used);
    check_maps(m, sys, 0, 0, used);
    for (int i = 0; i < sys->nnz; i++) {
      ck_assert_msg(used[i], "%s: slot %d (row %d) is in no map", names[k], i, sys->rowind[i]);
    }
    /* the element scratch holds the largest element */
    for (int e = 0; e < m->nelem; e++) {
      ck_assert_int_le(m->elem[e].nq * m->elem[e].nq, sys->eblock);
      ck_assert_int_le(m->elem[e].ncon * m->elem[e].nq, sys->eblock);
      ck_assert_int_le(m->elem[e].nq, sys->evec);
    }
    free(used);
    mbs_system_destroy(sys);
    mbs_model_destroy(m);
    mbs_deck_free(&deck);
  }
  ck_assert_int_gt(apart, 0);
}
END_TEST

START_TEST(test_stage_expansion) {
  /* three stages coupled as in a temporal element with a neighbour on each side only:
   * block (0, 2) and (2, 0) absent */
  static const int couple[9] = {1, 1, 0, 1, 1, 1, 0, 1, 1};
  mbsDeck deck;
  mbsModel *m = load(DECKS "cardan_shaft.yaml", &deck);
  mbsSystem *one = make_system(m, 1, NULL, 0, 0);
  mbsSystem *st = make_system(m, 3, couple, 0, 0);
  int nsp = one->n;
  ck_assert_int_eq(st->n, 3 * nsp);
  ck_assert_int_eq(st->nblock, 7);
  check_csc(st);
  /* reference: a dense flag matrix of the expected entries from the one-stage pattern */
  int n = st->n;
  char *ref = calloc((size_t)n * (size_t)n, 1);
  ck_assert_ptr_nonnull(ref);
  long nref = 0;
  for (int s = 0; s < 3; s++) {
    for (int s2 = 0; s2 < 3; s2++) {
      if (!couple[3 * s + s2]) {
        continue;
      }
      for (int c = 0; c < nsp; c++) {
        for (int k = one->colptr[c]; k < one->colptr[c + 1]; k++) {
          ref[(size_t)(s2 * nsp + c) * (size_t)n + (size_t)(s * nsp + one->rowind[k])] = 1;
          nref++;
        }
      }
    }
  }
  ck_assert_int_eq(st->nnz, nref);
  for (int c = 0; c < n; c++) {
    for (int k = st->colptr[c]; k < st->colptr[c + 1]; k++) {
      ck_assert(ref[(size_t)c * (size_t)n + (size_t)st->rowind[k]]);
    }
  }
  /* the maps of every present block, and none for an absent one */
  char *used = calloc((size_t)st->nnz, 1);
  ck_assert_ptr_nonnull(used);
  for (int s = 0; s < 3; s++) {
    for (int s2 = 0; s2 < 3; s2++) {
      if (couple[3 * s + s2]) {
        check_maps(m, st, s, s2, used);
      } else {
        ck_assert_ptr_null(mbs_system_block_maps(st, s, s2));
      }
    }
  }
  for (int i = 0; i < st->nnz; i++) {
    ck_assert(used[i]);
  }
  /* the diagonal blocks are present whatever the caller says */
  static const int none[4] = {0, 0, 0, 0};
  mbsSystem *two = make_system(m, 2, none, 0, 0);
  ck_assert_int_eq(two->nblock, 2);
  ck_assert_int_eq(two->nnz, 2 * one->nnz);
  mbs_system_destroy(two);
  free(used);
  free(ref);
  mbs_system_destroy(st);
  mbs_system_destroy(one);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* a fixed pseudo-random sequence in [-1, 1) */
static double next_value(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

/* values of a nonsingular saddle-point matrix on the system's fixed part (strong coordinate
 * diagonal, random off-diagonals, constraint rows with a zero block) and a tail of ntail
 * rows coupled to coordinates, with a negative compliance on its diagonal; the tail's
 * entries into row/col (global) */
static int tail_entries(const mbsSystem *sys, int ntail, int shift, int *row, int *col) {
  int ne = 0;
  for (int t = 0; t < ntail; t++) {
    int r = sys->nfix + t;
    for (int k = 0; k < 5; k++) {
      int q = (7 * t + 3 * k + shift) % sys->nq;
      row[ne] = r;
      col[ne++] = q;
      row[ne] = q;
      col[ne++] = r;
    }
    row[ne] = r;
    col[ne++] = r;
    /* a repeat: set_tail removes it */
    row[ne] = r;
    col[ne++] = r;
  }
  return ne;
}

static void fill_values(const mbsSystem *sys, double *x, unsigned seed) {
  unsigned s = seed;
  for (int c = 0; c < sys->n; c++) {
    for (int k = sys->colptr[c]; k < sys->colptr[c + 1]; k++) {
      int r = sys->rowind[k];
      double v = 0.3 * next_value(&s);
      if (r == c) {
        v = r < sys->nq ? 20.0 + next_value(&s) : (r >= sys->nfix ? -1.0 : 0.0);
      } else if (r >= sys->nq && c >= sys->nq) {
        v = 0.0;
      } else if (r >= sys->nq || c >= sys->nq) {
        v = 1.0 + next_value(&s);
      }
      x[k] = v;
    }
  }
}

/* the sparse solution against dgesv's on the dense copy */
static double dense_error(const mbsSystem *sys, const double *x, const double *b,
                          const double *sol) {
  int n = sys->n, one = 1, info = 0;
  double *a = calloc((size_t)n * (size_t)n, sizeof(double));
  double *bb = malloc((size_t)n * sizeof(double));
  int *ipiv = malloc((size_t)n * sizeof(int));
  ck_assert(a && bb && ipiv);
  for (int c = 0; c < n; c++) {
    for (int k = sys->colptr[c]; k < sys->colptr[c + 1]; k++) {
      a[(size_t)c * (size_t)n + (size_t)sys->rowind[k]] = x[k];
    }
  }
  memcpy(bb, b, (size_t)n * sizeof(double));
  dgesv_(&n, &one, a, &n, ipiv, bb, &n, &info);
  ck_assert_int_eq(info, 0);
  double err = 0.0, scale = 0.0;
  for (int i = 0; i < n; i++) {
    err = fmax(err, fabs(sol[i] - bb[i]));
    scale = fmax(scale, fabs(bb[i]));
  }
  free(a);
  free(bb);
  free(ipiv);
  return err / scale;
}

/* counting allocator hooks of SuiteSparse (KLU and UMFPACK allocate through them) */
static long nalloc;
static void *count_malloc(size_t n) {
  nalloc++;
  return malloc(n);
}
static void *count_calloc(size_t n, size_t s) {
  nalloc++;
  return calloc(n, s);
}
static void *count_realloc(void *p, size_t n) {
  nalloc++;
  return realloc(p, n);
}

static void tail_solve(mbsLinearSolver kind) {
  mbsDeck deck;
  mbsModel *m = load(DECKS "four_bar.yaml", &deck);
  m->linear_solver = kind;
  enum { TMAX = 4, TNNZ = 64 };
  mbsSystem *sys = make_system(m, 1, NULL, TMAX, TNNZ);
  mbsError err;
  int row[TNNZ], col[TNNZ], changed = -1;
  double *x = calloc((size_t)sys->nnz_max, sizeof(double));
  double *b = calloc((size_t)sys->n_max, sizeof(double));
  double *sol = calloc((size_t)sys->n_max, sizeof(double));
  ck_assert(x && b && sol);
  unsigned s = 7;
  for (int i = 0; i < sys->n_max; i++) {
    b[i] = next_value(&s);
  }
  /* no tail: the fixed part alone */
  fill_values(sys, x, 1);
  ck_assert_int_eq(mbs_system_analyses(sys), 0);
  ck_assert_int_eq(mbs_linsolve_factor(sys->ls, x, 1, &err), MBS_OK);
  ck_assert_int_eq(mbs_linsolve_solve(sys->ls, x, b, sol, &err), MBS_OK);
  ck_assert_double_le(dense_error(sys, x, b, sol), 1e-10);
  ck_assert_int_eq(mbs_system_analyses(sys), 1);
  /* a tail of 3 rows: the structure changes, one more analysis */
  int ne = tail_entries(sys, 3, 0, row, col);
  ck_assert_int_eq(mbs_system_set_tail(sys, 3, ne, row, col, &changed, &err), MBS_OK);
  ck_assert_int_eq(changed, 1);
  ck_assert_int_eq(sys->n, sys->nfix + 3);
  ck_assert_int_eq(sys->nnz, sys->nfix_nnz + ne - 3);
  check_csc(sys);
  /* the fixed part's maps follow the slots that moved */
  check_maps(m, sys, 0, 0, NULL);
  for (int k = 0; k < ne; k++) {
    expect_slot(sys, mbs_system_slot(sys, row[k], col[k]), row[k], col[k], NULL);
  }
  fill_values(sys, x, 2);
  ck_assert_int_eq(mbs_linsolve_factor(sys->ls, x, 1, &err), MBS_OK);
  ck_assert_int_eq(mbs_linsolve_solve(sys->ls, x, b, sol, &err), MBS_OK);
  ck_assert_double_le(dense_error(sys, x, b, sol), 1e-10);
  ck_assert_int_eq(mbs_system_analyses(sys), 2);
  /* the same structure in another order: no change, no analysis; new values refactor */
  int rrow[TNNZ], rcol[TNNZ];
  for (int k = 0; k < ne; k++) {
    rrow[k] = row[ne - 1 - k];
    rcol[k] = col[ne - 1 - k];
  }
  ck_assert_int_eq(mbs_system_set_tail(sys, 3, ne, rrow, rcol, &changed, &err), MBS_OK);
  ck_assert_int_eq(changed, 0);
  fill_values(sys, x, 3);
  for (int rep = 0; rep < 3; rep++) {
    ck_assert_int_eq(mbs_linsolve_factor(sys->ls, x, rep == 0, &err), MBS_OK);
    ck_assert_int_eq(mbs_linsolve_solve(sys->ls, x, b, sol, &err), MBS_OK);
    ck_assert_double_le(dense_error(sys, x, b, sol), 1e-10);
  }
  ck_assert_int_eq(mbs_system_analyses(sys), 2);
  /* KLU refactors on its pivot order with no allocation; UMFPACK's numeric factorization
   * allocates every time */
  struct SuiteSparse_config_struct saved = SuiteSparse_config;
  SuiteSparse_config.malloc_func = count_malloc;
  SuiteSparse_config.calloc_func = count_calloc;
  SuiteSparse_config.realloc_func = count_realloc;
  nalloc = 0;
  for (int i = 0; i < sys->nnz; i++) {
    x[i] *= 1.0 + 1e-3 * next_value(&s);
  }
  ck_assert_int_eq(mbs_linsolve_factor(sys->ls, x, 0, &err), MBS_OK);
  ck_assert_int_eq(mbs_linsolve_solve(sys->ls, x, b, sol, &err), MBS_OK);
  long allocs = nalloc;
  SuiteSparse_config = saved;
  if (kind == MBS_LINEAR_KLU) {
    ck_assert_int_eq(allocs, 0);
  } else {
    ck_assert_int_gt(allocs, 0);
  }
  /* the perturbed values on the order pivoted for the others: 1.5e-10 on this random matrix
   * (1e-10 held while the pattern kept the spherical joints' zero Hessian pairs, which the
   * values filled with random entries too) */
  ck_assert_double_le(dense_error(sys, x, b, sol), 1e-9);
  /* another structure (other coordinates, 2 rows): one more analysis */
  ne = tail_entries(sys, 2, 5, row, col);
  ck_assert_int_eq(mbs_system_set_tail(sys, 2, ne, row, col, &changed, &err), MBS_OK);
  ck_assert_int_eq(changed, 1);
  check_maps(m, sys, 0, 0, NULL);
  fill_values(sys, x, 4);
  ck_assert_int_eq(mbs_linsolve_factor(sys->ls, x, 0, &err), MBS_OK);
  ck_assert_int_eq(mbs_linsolve_solve(sys->ls, x, b, sol, &err), MBS_OK);
  ck_assert_double_le(dense_error(sys, x, b, sol), 1e-10);
  ck_assert_int_eq(mbs_system_analyses(sys), 3);
  ck_assert_int_eq(sys->tail_changes, 2);
  /* back to no tail: the fixed pattern again */
  ck_assert_int_eq(mbs_system_set_tail(sys, 0, 0, row, col, &changed, &err), MBS_OK);
  ck_assert_int_eq(changed, 1);
  ck_assert_int_eq(sys->n, sys->nfix);
  ck_assert_int_eq(sys->nnz, sys->nfix_nnz);
  check_maps(m, sys, 0, 0, NULL);
  /* refused: beyond the capacity, an entry between two fixed unknowns, out of range */
  ck_assert_int_eq(mbs_system_set_tail(sys, TMAX + 1, 0, row, col, NULL, &err), MBS_ERR_LINSOLVE);
  int fr[1] = {0}, fc[1] = {1};
  ck_assert_int_eq(mbs_system_set_tail(sys, 1, 1, fr, fc, NULL, &err), MBS_ERR_LINSOLVE);
  fr[0] = sys->nfix + 1;
  ck_assert_int_eq(mbs_system_set_tail(sys, 1, 1, fr, fc, NULL, &err), MBS_ERR_LINSOLVE);
  free(x);
  free(b);
  free(sol);
  mbs_system_destroy(sys);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}

/* the entries of block (s, s') of sys's pattern into E (nsp x nsp, row-major) */
static void block_entries(const mbsSystem *sys, int s, int s2, char *E) {
  int nsp = sys->nsp;
  memset(E, 0, (size_t)nsp * (size_t)nsp);
  for (int c = 0; c < nsp; c++) {
    int col = s2 * nsp + c;
    for (int k = sys->colptr[col]; k < sys->colptr[col + 1]; k++) {
      int r = sys->rowind[k] - s * nsp;
      if (r >= 0 && r < nsp) {
        E[r * nsp + c] = 1;
      }
    }
  }
}

/* what a block with the parts in mask must hold, from the model (the spec of system.h) */
static void part_entries(const mbsModel *m, int mask, char *E) {
  int nq = m->nq, nsp = m->nq + m->ncon;
  memset(E, 0, (size_t)nsp * (size_t)nsp);
#define SET(r, c) (E[(r)*nsp + (c)] = 1)
  for (int i = 0; i < nsp; i++) {
    if (mask & (i < nq ? MBS_PART_DIAG : MBS_PART_CON_DIAG)) {
      SET(i, i);
    }
  }
  for (int e = 0; e < m->nmass && (mask & MBS_PART_MASS); e++) {
    for (int c = 0; c < 3; c++) {
      SET(3 * m->mass_a[e] + c, 3 * m->mass_b[e] + c);
      SET(3 * m->mass_b[e] + c, 3 * m->mass_a[e] + c);
    }
  }
  for (int r = 0; r < m->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        if (mask & MBS_PART_G) {
          SET(nq + r, 3 * row->node[k] + c);
        }
        if (mask & MBS_PART_GT) {
          SET(3 * row->node[k] + c, nq + r);
        }
        for (int l = 0; l < row->nnode && (mask & MBS_PART_HESS); l++) {
          /* the pairs of a nonzero Hessian coefficient, every pair of a switching joint */
          double h = row->s * (row->wa[k] * row->wb[l] + row->wb[k] * row->wa[l]);
          if (h != 0.0 || (row->joint >= 0 && mbs_joint_switches(m, row->joint))) {
            SET(3 * row->node[k] + c, 3 * row->node[l] + c);
          }
        }
      }
    }
  }
  for (int e = 0; e < m->nelem; e++) {
    const mbsElem *el = &m->elem[e];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    int zero = kind->linear && !kind->force && !kind->constraint; /* gravity */
    int dense = (mask & (zero ? MBS_PART_LINEAR : MBS_PART_HESS)) ||
                ((mask & MBS_PART_FORCE_V) && kind->force);
    for (int i = 0; i < el->nq; i++) {
      for (int j = 0; j < el->nq && dense; j++) {
        SET(el->qidx[i], el->qidx[j]);
      }
      for (int r = 0; r < el->ncon; r++) {
        if (mask & MBS_PART_G) {
          SET(nq + el->con0 + r, el->qidx[i]);
        }
        if (mask & MBS_PART_GT) {
          SET(el->qidx[i], nq + el->con0 + r);
        }
      }
    }
  }
#undef SET
}

START_TEST(test_parts) {
  /* every shipped deck: a staged system whose blocks carry parts of the spatial pattern
   * holds in each block exactly those parts' entries (an absent block none, a diagonal block
   * given 0 the coordinates' diagonal), the whole part equals the one-stage pattern, and
   * every map entry of a block is -1 or the slot of its own (row, col) */
  static char names[64][256];
  int ndeck = deck_names(names, 64);
  enum { NS = 3 };
  const int parts[NS * NS] = {MBS_PART_ALL,
                              MBS_PART_DIAG,
                              MBS_PART_HESS,
                              0,
                              MBS_PART_MASS | MBS_PART_CON_DIAG,
                              MBS_PART_FORCE_V,
                              MBS_PART_G | MBS_PART_GT | MBS_PART_LINEAR,
                              0,
                              0};
  for (int k = 0; k < ndeck; k++) {
    mbsDeck deck;
    mbsError err;
    mbsModel *m = load(names[k], &deck);
    /* as (s, s', parts) entries: the nonzero ones, each split in two (or-ed back) */
    int es[2 * NS * NS], es2[2 * NS * NS], ep[2 * NS * NS], ne = 0;
    for (int i = 0; i < NS * NS; i++) {
      for (int h = 0; h < 2 && parts[i]; h++) {
        es[ne] = i / NS;
        es2[ne] = i % NS;
        ep[ne++] = h == 0 ? parts[i] & ~MBS_PART_DIAG : parts[i] & MBS_PART_DIAG;
      }
    }
    mbsSystem *sys = mbs_system_create_parts(m, NS, ne, es, es2, ep, &err);
    ck_assert_msg(sys != NULL, "%s: %s", names[k], err.msg);
    mbsSystem *one = make_system(m, 1, NULL, 0, 0);
    check_csc(sys);
    int nsp = sys->nsp;
    char *E = malloc((size_t)nsp * (size_t)nsp), *X = malloc((size_t)nsp * (size_t)nsp);
    ck_assert(E && X);
    for (int s = 0; s < NS; s++) {
      for (int s2 = 0; s2 < NS; s2++) {
        int mask = parts[s * NS + s2];
        if (s == s2 && mask == 0) {
          mask = MBS_PART_DIAG;
        }
        ck_assert_int_eq(mbs_system_block_maps(sys, s, s2) != NULL, mask != 0);
        block_entries(sys, s, s2, E);
        part_entries(m, mask, X);
        if (mask == MBS_PART_ALL) {
          block_entries(one, 0, 0, X);
        }
        for (int i = 0; i < nsp * nsp; i++) {
          ck_assert_msg(E[i] == X[i], "%s: block (%d, %d) entry (%d, %d): %d, expected %d",
                        names[k], s, s2, i / nsp, i % nsp, E[i], X[i]);
        }
        const mbsSystemMaps *mp = mbs_system_block_maps(sys, s, s2);
        for (int i = 0; mp && i < sys->map_len; i++) {
          int sl = mp->mass_map[i]; /* the block's maps are one run of map_len ints */
          ck_assert(sl >= -1 && sl < sys->nnz);
          if (sl >= 0) {
            int c = col_of(sys, sl);
            ck_assert_int_eq(c / nsp, s2);
            ck_assert_int_eq(sys->rowind[sl] / nsp, s);
          }
        }
      }
    }
    free(E);
    free(X);
    mbs_system_destroy(one);
    mbs_system_destroy(sys);
    mbs_model_destroy(m);
    mbs_deck_free(&deck);
  }
}
END_TEST

START_TEST(test_tail_klu) {
  tail_solve(MBS_LINEAR_KLU);
}
END_TEST

START_TEST(test_tail_umfpack) {
  tail_solve(MBS_LINEAR_UMFPACK);
}
END_TEST

Suite *system_suite(void) {
  Suite *s = suite_create("system");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_one_stage_pattern);
  tcase_add_test(tc, test_stage_expansion);
  tcase_add_test(tc, test_parts);
  tcase_add_test(tc, test_tail_klu);
  tcase_add_test(tc, test_tail_umfpack);
  suite_add_tcase(s, tc);
  return s;
}
