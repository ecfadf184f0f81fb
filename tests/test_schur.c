/* test_schur.c: a record's KKT systems through the Schur complement S = G M^-1 G^T
 * (solver/schur.c) give the state, accelerations and multipliers of the KKT matrix's LU
 * (the path every model took before, and still takes where the complement does not suit),
 * on every shipped deck at a state a few steps into its run, with the velocities perturbed
 * off the constraints so that the projection has work to do.
 *
 * Tolerance: both solve the same linear systems; they differ by round-off times the
 * condition of the KKT matrix: at most 3e-13 relative on these decks (slider_crank).
 * A wrong block of M^-1, a missing product in S or a sign in the back substitution changes
 * the multipliers by O(1) of their size, far above the 1e-9 used. */
#include <check.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"
#include "deck_steps.h"
#include "solver/integrator.h"
#include "solver/schur.h"

#define DECKS "../decks/"

static double norm_inf(const double *x, int n) {
  double r = 0.0;
  for (int i = 0; i < n; i++) {
    r = fmax(r, fabs(x[i]));
  }
  return r;
}

/* largest |a - b| over the scale of b (at least 1e-6: a static deck's accelerations and
 * multipliers at rest are round-off, 1e-38) */
static double rel_diff(const double *a, const double *b, int n) {
  double d = 0.0;
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
  }
  return d / fmax(norm_inf(b, n), 1e-6);
}

/* 1 when the deck took the Schur path (and agreed to tol, relative), 0 when it kept the KKT
 * matrix */
static int check_deck_tol(const char *path, double tol) {
  mbsDeck deck;
  mbsError err;
  mbsData *d;
  mbsModel *m = deck_advanced(path, 3, &deck, &d);
  /* velocities off the constraints, by a deterministic pattern of 1e-3 of their size */
  double vs = fmax(norm_inf(d->v, m->nq), 1.0);
  for (int i = 0; i < m->nq; i++) {
    d->v[i] += 1e-3 * vs * sin(1.0 + 0.7 * i);
  }
  int nq = m->nq, nc = m->ncon > 0 ? m->ncon : 1;
  double *v_ref = malloc((size_t)nq * sizeof(double));
  double *a_ref = malloc((size_t)nq * sizeof(double));
  double *l_ref = malloc((size_t)nc * sizeof(double));
  ck_assert(v_ref && a_ref && l_ref);

  /* the KKT matrix */
  d->schur_state = -1;
  ck_assert_msg(mbs_consistent_index1(m, d, &err) == MBS_OK, "%s: %s", path, err.msg);
  ck_assert_int_eq(d->schur_factored, 0);
  memcpy(v_ref, d->v_rec, (size_t)nq * sizeof(double));
  memcpy(a_ref, d->acc_rec, (size_t)nq * sizeof(double));
  memcpy(l_ref, d->lambda_rec, (size_t)nc * sizeof(double));

  /* the Schur complement, where it suits */
  d->schur_state = 0;
  ck_assert_msg(mbs_consistent_index1(m, d, &err) == MBS_OK, "%s: %s", path, err.msg);
  int took = d->schur_factored;
  ck_assert_int_eq(took, d->schur != NULL);
  if (took) {
    double dv = rel_diff(d->v_rec, v_ref, nq), da = rel_diff(d->acc_rec, a_ref, nq);
    double dl = rel_diff(d->lambda_rec, l_ref, m->ncon);
    ck_assert_msg(dv <= tol && da <= tol && dl <= tol,
                  "%s: Schur against KKT: velocities %.3g, accelerations %.3g, multipliers "
                  "%.3g (relative)",
                  path, dv, da, dl);
    /* the observables take G and max |g| from the complement factored at (q, t): the same
     * bits as a walk over the rows (the complement hidden) */
    ck_assert(mbs_schur_at(d->schur, d->q, d->t));
    mbsObservables o1, o2;
    mbs_observe(m, d, &o1);
    size_t nr = 6 * (size_t)m->njoint;
    double *r1 = malloc((nr > 0 ? nr : 1) * sizeof(double));
    ck_assert(r1);
    memcpy(r1, d->joint_reaction, nr * sizeof(double));
    struct mbsSchur *keep = d->schur;
    d->schur = NULL;
    mbs_observe(m, d, &o2);
    d->schur = keep;
    ck_assert_msg(o1.violation == o2.violation, "%s: violation %.17g, walked %.17g", path,
                  o1.violation, o2.violation);
    ck_assert_msg(nr == 0 || !memcmp(r1, d->joint_reaction, nr * sizeof(double)),
                  "%s: joint reactions differ from the walk's", path);
    free(r1);
    /* a configuration one ulp away is not the factored one */
    double q0 = d->q[0];
    d->q[0] = nextafter(q0, INFINITY);
    ck_assert(!mbs_schur_at(d->schur, d->q, d->t));
    d->q[0] = q0;
    ck_assert(!mbs_schur_at(d->schur, d->q, nextafter(d->t, INFINITY)));
  }
  free(v_ref);
  free(a_ref);
  free(l_ref);
  mbs_data_destroy(d);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
  return took;
}

static int check_deck(const char *path) {
  return check_deck_tol(path, 1e-9);
}

START_TEST(test_schur_matches_kkt_every_deck) {
  glob_t g;
  ck_assert_int_eq(glob(DECKS "*.yaml", 0, NULL, &g), 0);
  int took = 0;
  for (size_t k = 0; k < g.gl_pathc; k++) {
    took += check_deck(g.gl_pathv[k]);
  }
  /* the pendulums, mechanisms and free bodies of decks/ are rigid bodies on joints: most
   * take the complement */
  ck_assert_msg(took >= (int)g.gl_pathc / 2, "only %d of %zu decks took the Schur path", took,
                g.gl_pathc);
  globfree(&g);
}
END_TEST

/* a mechanism: the double pendulum takes the complement and keeps it record after record */
START_TEST(test_schur_double_pendulum) {
  ck_assert_int_eq(check_deck(DECKS "double_pendulum.yaml"), 1);
  ck_assert_int_eq(check_deck(DECKS "four_bar.yaml"), 1);
}
END_TEST

/* the 200-link chain of scripts/bench/chain (box links on spherical joints): S's rigidity rows
 * have diagonals 1e4-1e5 times a joint's, and the order of its Cholesky decides its
 * accuracy: here, 3 steps in with the velocities pushed off the constraints, the multipliers
 * came out 2.3e-11 relative off the KKT matrix's LU with the rigidity rows eliminated before
 * the joints between them (the largest diagonal first; AMD's own tie-breaks did the same),
 * 1.9e-12 in the order schur.c takes (the smallest diagonal first among equals) */
START_TEST(test_schur_chain_order) {
  char path[] = "/tmp/mbs_test_schur_chainXXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  ck_assert(f);
  fprintf(f, "mbsim: 1\ntitle: 200-link chain\ngravity: [0, 0, -9.81]\nbodies:\n");
  for (int i = 0; i < 200; i++) {
    fprintf(f,
            "  - name: link%d\n    shape: {box: [0.1, 0.01, 0.01]}\n    density: 1000\n"
            "    position: [%.17g, 0, 0]\n",
            i, 0.1 * i + 0.05);
  }
  fprintf(f, "joints:\n");
  for (int i = 0; i < 200; i++) {
    char prev[32];
    snprintf(prev, sizeof(prev), i == 0 ? "ground" : "link%d", i - 1);
    fprintf(f, "  - name: j%d\n    type: spherical\n    bodies: [%s, link%d]\n"
            "    point: [%.17g, 0, 0]\n", i, prev, i, 0.1 * i);
  }
  fprintf(f, "solver: {integrator: em, dt: 1e-3, t_end: 0.01}\noutput: {every: 1, xdmf: false}\n");
  ck_assert_int_eq(fclose(f), 0);
  int took = check_deck_tol(path, 6e-12);
  remove(path);
  ck_assert_int_eq(took, 1);
}
END_TEST

Suite *schur_suite(void) {
  Suite *s = suite_create("schur");
  TCase *tc = tcase_create("schur");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_schur_matches_kkt_every_deck);
  tcase_add_test(tc, test_schur_double_pendulum);
  tcase_add_test(tc, test_schur_chain_order);
  suite_add_tcase(s, tc);
  return s;
}
