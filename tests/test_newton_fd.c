/* test_newton_fd.c: the assembled Newton matrix of every implicit integrator equals central
 * finite differences of the assembled residual, on the model of every shipped deck (decks/
 * and decks/beams/), at a
 * perturbed state inside a step (after two real steps, so that v, lambda and genalpha's
 * accelerations are not trivial; with step control, which step_halving.yaml needs; static
 * from where its steps fail on decks without an equilibrium).
 *
 * Unknowns x = [q1 - q0; mu] (mu = dt^2 lambda), residual r(x) = [r_q; r_g] (assemble.c);
 * Newton solves J dx = r and sets x -= dx, so J must be dr/dx. Column j of J is compared
 * with (r(x + h e_j) - r(x - h e_j)) / 2h over the whole dense column, so an entry missing
 * from the sparsity pattern shows up too.
 *
 * Tolerance: the central difference errs by h^2/6 |r'''| (truncation) plus about
 * eps |r| / h (round-off of the residual's terms). With h = 1e-6 (1 + |x_j|) in dq, whose
 * scale is dt |v| ~ 1e-3, the truncation is ~1e-12 of a column's size for O(1) curvature
 * and the round-off ~1e-10 of the largest residual term; mu enters linearly. A wrong
 * derivative term shows up as an O(1) relative error of its entries, and a wrong weight
 * (alpha, cv, dt^2) as an error of 50 % or more, far above the 1e-6 relative test used. */
#include <check.h>
#include <float.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"
#include "solver/integrator.h"
#include "solver/system.h"

#define DECKS "../decks/"

static const char *const INTEGRATORS[] = {"em", "midpoint", "euler", "genalpha", "static"};
#define NINTEGRATORS ((int)(sizeof(INTEGRATORS) / sizeof(INTEGRATORS[0])))

/* the residual at the unknowns (dq, mu) into r (nsys); returns the largest term of r_q */
static double residual(const mbsModel *m, mbsData *d, mbsImplicitWork *w, const mbsSchemeWeights *s,
                       double dt, double t0, double *r) {
  for (int i = 0; i < m->nq; i++) {
    d->q[i] = w->q_prev[i] + w->dq[i];
  }
  double scale = mbs_assemble(m, d, w, s, dt, t0, 0);
  memcpy(r, d->res, (size_t)d->sys->n * sizeof(double));
  return scale;
}

/* 0 when the check passed, else a message in msg */
static int check_model(const mbsModel *m, const char *what, char *msg, size_t nmsg) {
  mbsError err;
  mbsData *d = mbs_data_create(m, &err);
  if (!d) {
    snprintf(msg, nmsg, "%s: %s", what, err.msg);
    return 1;
  }
  int fail = 0, ns = d->sys->n, nq = m->nq;
  double dt = m->dt;
  /* two real steps: a non-trivial v, lambda (and genalpha accelerations). Most shipped
   * decks are mechanisms with a free degree of freedom, which have no static equilibrium:
   * static's matrix is then checked where its step failed (the state is restored to the
   * step's start) */
  mbs_solver_start(m, d);
  int equilibrium = m->integrator == MBS_INTEGRATOR_STATIC;
  for (int k = 0; k < 2 && !fail; k++) {
    mbsStatus st = mbs_solver_advance(m, d, d->t + dt, &err);
    if (st != MBS_OK && equilibrium) {
      break;
    }
    if (st != MBS_OK) {
      snprintf(msg, nmsg, "%s: step %d failed: %s", what, k + 1, err.msg);
      fail = 1;
    }
  }
  double *J = calloc((size_t)ns * ns, sizeof(double));
  double *rp = calloc((size_t)ns, sizeof(double)), *rm = calloc((size_t)ns, sizeof(double));
  if (!fail && (!J || !rp || !rm)) {
    snprintf(msg, nmsg, "out of memory");
    fail = 1;
  }
  if (!fail) {
    /* a state inside the third step: the predictor, perturbed, and perturbed multipliers */
    mbsSchemeWeights s;
    double t0 = d->t;
    d->integrator->prepare(m, d, dt, &s);
    mbsImplicitWork *w = d->integrator_work;
    double vmax = 1.0;
    for (int i = 0; i < nq; i++) {
      vmax = fmax(vmax, fabs(w->v_prev[i]));
    }
    for (int i = 0; i < nq; i++) {
      w->dq[i] = dt * w->v_prev[i] + 0.05 * dt * vmax * sin(1.0 + 7.3 * i);
    }
    double mumax = 0.0;
    for (int i = 0; i < m->ncon; i++) {
      mumax = fmax(mumax, fabs(w->mu[i]));
    }
    for (int i = 0; i < m->ncon; i++) {
      w->mu[i] *= 1.0 + 0.1 * cos(2.0 + 3.1 * i);
      w->mu[i] += 0.01 * (mumax > 0.0 ? mumax : dt * dt) * sin(0.5 + 1.7 * i);
    }
    /* the scale of dq for the differences: dt v for the dynamic schemes; static has no
     * velocities, and its matrix is the stiffness alone, whose terms cancel near a spring's
     * rest length (k l - k L): there the residual's round-off is eps k l, not eps |r|, and
     * differences over dt v ~ 1e-3 m lose three digits to it, so the scale of q itself */
    double dqs = equilibrium ? fmax(1.0, mbs_norm_inf(w->q_prev, nq)) : dt * vmax;
    /* the assembled matrix, dense */
    for (int i = 0; i < nq; i++) {
      d->q[i] = w->q_prev[i] + w->dq[i];
    }
    double scale = mbs_assemble(m, d, w, &s, dt, t0, 1);
    double rmax = scale;
    for (int i = 0; i < ns; i++) {
      rmax = fmax(rmax, fabs(d->res[i]));
    }
    for (int c = 0; c < ns; c++) {
      for (int p = d->sys->colptr[c]; p < d->sys->colptr[c + 1]; p++) {
        J[(size_t)c * ns + d->sys->rowind[p]] += d->jac[p];
      }
    }
    /* static: the round-off of a row is that of its terms before they cancel (a spring
     * near its rest length: k l - k L), about sum_j |J_ij| |q_j|; the dynamic schemes form
     * their large inertia terms from increments, so there the residual's size is it */
    if (equilibrium) {
      for (int i = 0; i < ns; i++) {
        double terms = 0.0;
        for (int c = 0; c < nq; c++) {
          terms += fabs(J[(size_t)c * ns + i]) * fabs(d->q[c]);
        }
        rmax = fmax(rmax, terms);
      }
    }
    /* central differences, column by column */
    for (int c = 0; c < ns && !fail; c++) {
      double *x = c < nq ? &w->dq[c] : &w->mu[c - nq];
      double x0 = *x;
      double h = c < nq ? 1e-6 * (fabs(x0) + dqs) : 1e-6 * (fabs(x0) + dt * dt + mumax);
      *x = x0 + h;
      double sp = residual(m, d, w, &s, dt, t0, rp);
      *x = x0 - h;
      double sm = residual(m, d, w, &s, dt, t0, rm);
      *x = x0;
      double rs = fmax(rmax, fmax(sp, sm));
      double cmax = 0.0;
      for (int r = 0; r < ns; r++) {
        cmax = fmax(cmax, fabs(J[(size_t)c * ns + r]));
      }
      for (int r = 0; r < ns && !fail; r++) {
        double fd = (rp[r] - rm[r]) / (2.0 * h);
        double a = J[(size_t)c * ns + r];
        double tol = 1e-6 * fmax(cmax, fabs(fd)) + 1e3 * DBL_EPSILON * rs / h;
        if (!(fabs(fd - a) <= tol)) {
          snprintf(msg, nmsg,
                   "%s: d r[%d] / d x[%d] (%s) assembled %.10e, finite differences %.10e "
                   "(tolerance %.2e)",
                   what, r, c, c < nq ? "dq" : "mu", a, fd, tol);
          fail = 1;
        }
      }
    }
  }
  free(J);
  free(rp);
  free(rm);
  mbs_data_destroy(d);
  return fail;
}

/* spacetime: the block's matrix (all its temporal nodes at once) against central differences
 * of the block's residual, at the predictor of the block after two steps, perturbed. 0 when
 * the check passed, else a message in msg */
static int check_spacetime(const mbsModel *m, const char *what, char *msg, size_t nmsg) {
  mbsError err;
  mbsData *d = mbs_data_create(m, &err);
  if (!d) {
    snprintf(msg, nmsg, "%s: %s", what, err.msg);
    return 1;
  }
  int fail = 0;
  double dt = m->dt;
  mbs_solver_start(m, d);
  for (int k = 0; k < 2 && !fail; k++) {
    if (mbs_solver_advance(m, d, d->t + dt, &err) != MBS_OK) {
      snprintf(msg, nmsg, "%s: step %d failed: %s", what, k + 1, err.msg);
      fail = 1;
    }
  }
  const mbsSystem *sys = fail ? NULL : mbs_spacetime_begin(m, d, dt);
  int ns = sys ? sys->n : 1;
  double *J = calloc((size_t)ns * ns, sizeof(double)), *x = calloc((size_t)ns, sizeof(double));
  double *rp = calloc((size_t)ns, sizeof(double)), *rm = calloc((size_t)ns, sizeof(double));
  double *xs = calloc((size_t)ns, sizeof(double));
  if (!fail && (!J || !x || !rp || !rm || !xs)) {
    snprintf(msg, nmsg, "out of memory");
    fail = 1;
  }
  if (!fail) {
    /* the predictor, perturbed: positions and velocities by 5 % of a step's motion, the
     * multipliers by 10 % and an offset */
    mbs_spacetime_unknowns(d, x);
    double xmax = fmax(1.0, mbs_norm_inf(x, ns));
    for (int i = 0; i < ns; i++) {
      x[i] += 1e-3 * xmax * sin(1.0 + 7.3 * i);
      xs[i] = fabs(x[i]) + 1e-3 * xmax;
    }
    mbs_spacetime_set_unknowns(d, x);
    const double *jac;
    const double *res = mbs_spacetime_assemble(d, 1, &jac);
    double rmax = mbs_norm_inf(res, ns);
    for (int c = 0; c < ns; c++) {
      for (int p = sys->colptr[c]; p < sys->colptr[c + 1]; p++) {
        J[(size_t)c * ns + sys->rowind[p]] += jac[p];
      }
    }
    for (int c = 0; c < ns && !fail; c++) {
      double x0 = x[c], h = 1e-6 * xs[c];
      x[c] = x0 + h;
      mbs_spacetime_set_unknowns(d, x);
      memcpy(rp, mbs_spacetime_assemble(d, 0, &jac), (size_t)ns * sizeof(double));
      x[c] = x0 - h;
      mbs_spacetime_set_unknowns(d, x);
      memcpy(rm, mbs_spacetime_assemble(d, 0, &jac), (size_t)ns * sizeof(double));
      x[c] = x0;
      double cmax = 0.0;
      for (int r = 0; r < ns; r++) {
        cmax = fmax(cmax, fabs(J[(size_t)c * ns + r]));
      }
      for (int r = 0; r < ns && !fail; r++) {
        double fd = (rp[r] - rm[r]) / (2.0 * h), a = J[(size_t)c * ns + r];
        double tol = 1e-6 * fmax(cmax, fabs(fd)) + 1e3 * DBL_EPSILON * rmax / h;
        if (!(fabs(fd - a) <= tol)) {
          snprintf(msg, nmsg,
                   "%s: d r[%d] / d x[%d] (stage %d, unknown %d) assembled %.10e, finite "
                   "differences %.10e (tolerance %.2e)",
                   what, r, c, c / sys->nsp, c % sys->nsp, a, fd, tol);
          fail = 1;
        }
      }
    }
  }
  free(J);
  free(x);
  free(rp);
  free(rm);
  free(xs);
  mbs_data_destroy(d);
  return fail;
}

START_TEST(test_newton_matrix_fd_spacetime) {
  glob_t g;
  ck_assert_int_eq(glob(DECKS "*.yaml", 0, NULL, &g), 0);
  int checked = 0;
  for (size_t k = 0; k < g.gl_pathc; k++) {
    for (int deg = 1; deg <= 2; deg++) {
      char sdeg[2] = {(char)('0' + deg), 0};
      mbsOverride ov[] = {{"solver.integrator", "spacetime"},
                          {"solver.spacetime.degree", sdeg},
                          {"solver.spacetime.elements_per_block", "2"}};
      mbsDeck deck;
      mbsError err;
      memset(&deck, 0, sizeof(deck));
      ck_assert_msg(mbs_deck_load(&deck, g.gl_pathv[k], ov, 3, &err) == MBS_OK, "%s: %s",
                    g.gl_pathv[k], err.msg);
      mbsModel *m = mbs_model_compile(&deck, &err);
      ck_assert_msg(m != NULL, "%s: %s", g.gl_pathv[k], err.msg);
      char what[512], msg[4096];
      snprintf(what, sizeof(what), "%s (spacetime, degree %d)", g.gl_pathv[k], deg);
      int fail = check_spacetime(m, what, msg, sizeof(msg));
      mbs_model_destroy(m);
      mbs_deck_free(&deck);
      ck_assert_msg(!fail, "%s", msg);
      checked++;
    }
  }
  globfree(&g);
  ck_assert_int_eq(checked, 2 * (int)g.gl_pathc);
}
END_TEST

START_TEST(test_newton_matrix_fd_every_deck_every_integrator) {
  glob_t g;
  ck_assert_int_eq(glob(DECKS "*.yaml", 0, NULL, &g), 0);
  ck_assert_msg(g.gl_pathc >= 10, "only %zu shipped decks found", g.gl_pathc);
  /* and the beams (decks/beams/: strains quadratic in q, discrete gradients, a beam welded to
   * a rigid body; about a second for all of them) */
  size_t nrigid = g.gl_pathc;
  ck_assert_int_eq(glob(DECKS "beams/*.yaml", GLOB_APPEND, NULL, &g), 0);
  ck_assert_msg(g.gl_pathc >= nrigid + 4, "only %zu beam decks found", g.gl_pathc - nrigid);
  int checked = 0, skipped = 0, engaged_static = 0;
  for (size_t k = 0; k < g.gl_pathc; k++) {
    /* a deck with contacts runs with moreau only (the others refuse it), whose Newton matrix
     * is not in this list: decks/beams/beam_obstacle.yaml, elastic_rocking_rod.yaml,
     * woodpecker_elastic.yaml, woodpecker_spatial.yaml and push_belt.yaml */
    mbsDeck probe;
    mbsError perr;
    memset(&probe, 0, sizeof(probe));
    ck_assert_msg(mbs_deck_load(&probe, g.gl_pathv[k], NULL, 0, &perr) == MBS_OK, "%s: %s",
                  g.gl_pathv[k], perr.msg);
    int contacts = probe.ncontact > 0, engaging = 0;
    for (int j = 0; j < probe.njoint; j++) {
      engaging |= probe.joints[j].has_active;
    }
    mbs_deck_free(&probe);
    if (contacts) {
      skipped++;
      continue;
    }
    for (size_t i = 0; i < sizeof(INTEGRATORS) / sizeof(INTEGRATORS[0]); i++) {
      /* joints that engage and release (decks/beams/robot_cable.yaml) need a time-stepping
       * integrator: static refuses them */
      if (engaging && strcmp(INTEGRATORS[i], "static") == 0) {
        engaged_static++;
        continue;
      }
      mbsOverride ov[] = {{"solver.integrator", INTEGRATORS[i]}};
      mbsDeck deck;
      mbsError err;
      memset(&deck, 0, sizeof(deck));
      ck_assert_msg(mbs_deck_load(&deck, g.gl_pathv[k], ov, 1, &err) == MBS_OK, "%s: %s",
                    g.gl_pathv[k], err.msg);
      mbsModel *m = mbs_model_compile(&deck, &err);
      ck_assert_msg(m != NULL, "%s: %s", g.gl_pathv[k], err.msg);
      char what[512], msg[4096];
      snprintf(what, sizeof(what), "%s (%s)", g.gl_pathv[k], INTEGRATORS[i]);
      int fail = check_model(m, what, msg, sizeof(msg));
      mbs_model_destroy(m);
      mbs_deck_free(&deck);
      ck_assert_msg(!fail, "%s", msg);
      checked++;
    }
  }
  globfree(&g);
  ck_assert_int_le(skipped, 5);
  ck_assert_int_le(engaged_static, 1);
  ck_assert_int_eq(checked, NINTEGRATORS * ((int)g.gl_pathc - skipped) - engaged_static);
}
END_TEST

/* dense output: at the step's end the state itself, inside the step between the ends */
START_TEST(test_interpolate_ends) {
  mbsDeck deck;
  mbsError err;
  memset(&deck, 0, sizeof(deck));
  ck_assert(mbs_deck_load(&deck, DECKS "double_pendulum.yaml", NULL, 0, &err) == MBS_OK);
  mbsModel *m = mbs_model_compile(&deck, &err);
  ck_assert(m != NULL);
  mbsData *d = mbs_data_create(m, &err);
  ck_assert(d != NULL);
  mbs_solver_start(m, d);
  ck_assert(mbs_solver_step(m, d, m->dt, &err) == MBS_OK);
  double *q = calloc((size_t)m->nq, sizeof(double)), *v = calloc((size_t)m->nq, sizeof(double));
  mbs_solver_interpolate(m, d, d->t, q, v);
  ck_assert(memcmp(q, d->q, (size_t)m->nq * sizeof(double)) == 0);
  ck_assert(memcmp(v, d->v, (size_t)m->nq * sizeof(double)) == 0);
  mbs_solver_interpolate(m, d, d->t - 0.5 * d->last_dt, q, v);
  for (int i = 0; i < m->nq; i++) {
    ck_assert(isfinite(q[i]) && isfinite(v[i]));
    ck_assert(fabs(q[i] - d->q[i]) <= fabs(d->last_dt) * (fabs(d->v[i]) + 1.0));
  }
  free(q);
  free(v);
  mbs_data_destroy(d);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* the integrator table: an entry named by its deck word for every time-stepping value,
 * none for auto (resolved when the model is compiled) or a value out of range */
START_TEST(test_integrator_table) {
  for (int k = 0; k < MBS_INTEGRATOR_COUNT; k++) {
    const mbsIntegratorTable *t = mbs_integrator_table((mbsIntegrator)k);
    if (k == MBS_INTEGRATOR_AUTO) {
      ck_assert(t == NULL);
      continue;
    }
    ck_assert_msg(t != NULL, "integrator %d has no entry", k);
    ck_assert_str_eq(t->name, mbs_integrator_word((mbsIntegrator)k));
    /* spacetime has no one-step assembler (its block matrix: test_newton_matrix_fd_spacetime) */
    ck_assert(t->init && t->step && t->interpolate && t->state_export && t->state_import &&
              t->free && (t->prepare || k == MBS_INTEGRATOR_SPACETIME));
  }
  ck_assert(mbs_integrator_table(MBS_INTEGRATOR_COUNT) == NULL);
  ck_assert(mbs_integrator_table((mbsIntegrator)-1) == NULL);
}
END_TEST

Suite *newton_fd_suite(void) {
  Suite *s = suite_create("newton_fd");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_newton_matrix_fd_every_deck_every_integrator);
  tcase_add_test(tc, test_newton_matrix_fd_spacetime);
  tcase_add_test(tc, test_interpolate_ends);
  tcase_add_test(tc, test_integrator_table);
  suite_add_tcase(s, tc);
  return s;
}
