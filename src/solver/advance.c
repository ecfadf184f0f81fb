/* advance.c: step control around mbs_solver_step. A step whose Newton iteration fails
 * (no convergence, a singular matrix, a non-finite residual) is retried with half the step
 * at most m->max_halvings levels below the requested step; after two successful steps at a
 * level the step doubles again, back up to the requested size. static adapts its load
 * increments within the step itself (static.c), and its failure is final here. With
 * solver.tolerance (m->tolerance > 0) the steps are chosen from a local error estimate
 * instead (error control, below). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/solver.h"

static mbsStatus advance_controlled(const mbsModel *m, mbsData *d, double t_target,
                                    mbsStepVisit each, void *ctx, mbsError *err);

mbsStatus mbs_solver_advance(const mbsModel *m, mbsData *d, double t_target, mbsError *err) {
  return mbs_solver_advance_each(m, d, t_target, NULL, NULL, err);
}

mbsStatus mbs_solver_advance_each(const mbsModel *m, mbsData *d, double t_target, mbsStepVisit each,
                                  void *ctx, mbsError *err) {
  if (d->control) {
    return advance_controlled(m, d, t_target, each, ctx, err);
  }
  double h_full = t_target - d->t;
  int level = 0, successes = 0, iterations = 0;
  mbsError step_err;
  mbs_error_clear(&step_err);
  /* within a relative 1e-12 of the target counts as there (the time grid is n dt) */
  while (t_target - d->t > 1e-12 * fmax(1.0, fabs(t_target))) {
    double h = ldexp(h_full, -level);
    double rest = t_target - d->t;
    double hs = (h >= rest * (1.0 - 1e-12)) ? rest : h;
    mbsStatus st = mbs_solver_step(m, d, hs, &step_err);
    iterations += d->iterations;
    if (st == MBS_OK) {
      if (each) {
        each(ctx, m, d);
      }
      if (level > 0 && ++successes >= 2) {
        level--;
        successes = 0;
      }
      continue;
    }
    if (st != MBS_ERR_SOLVER && st != MBS_ERR_LINSOLVE) {
      d->iterations = iterations;
      if (err) {
        *err = step_err;
      }
      return st;
    }
    if (mbs_integrator_policy(m->integrator)->equilibrium) {
      /* static controls its load increments itself (static.c): it has halved them already */
      d->iterations = iterations;
      if (err) {
        *err = step_err;
      }
      return st;
    }
    if (level >= m->max_halvings) {
      d->iterations = iterations;
      mbs_error_set(err, st, NULL, 0, 0,
                    "%s; gave up at dt = %.3g after halving the step %d times. Try a smaller "
                    "dt (--dt) or more halvings (solver.max_halvings); a motion that blew up "
                    "points to loads or initial velocities far too large",
                    step_err.msg, hs, level);
      return st;
    }
    level++;
    d->rejected++;
    successes = 0;
  }
  d->t = t_target;
  d->iterations = iterations;
  return MBS_OK;
}

/* ---- error control (solver.tolerance) ----
 *
 * The estimate. em, midpoint and genalpha are of second order: a step's local error in q is
 * -h^3/12 q^(3) + O(h^4) for the trapezoidal rule q1 = q0 + h (v0 + v1)/2 that em and
 * midpoint obey (genalpha's Newmark update has the same order, with beta - 1/6 for 1/12).
 * spacetime's continuous Galerkin elements of degree k are at their ends of order 2k (seed
 * 003; on q' = lambda q their end values are the diagonal Pade approximant of degree k of
 * exp(lambda h), whose error is h^(2k+1) q^(2k+1) (k!)^2 / ((2k)! (2k+1)!): 1/12 for k = 1,
 * 1/720 for k = 2), and a block of N elements of h/N makes N of these errors. With p the
 * order (2 or 4) and c its constant, q^(p+1) is estimated by the (p+1)-th divided difference
 * of the step ends themselves: the polynomial P of degree p through the last p + 1 (t_n and
 * the p before it) is extrapolated to the new end t_n+1, and
 * q[t_n-p, ..., t_n, t_n+1] = (q_n+1 - P(t_n+1)) / prod (t_n+1 - t_i), q^(p+1) ~ (p+1)! times
 * it (a Milne-type device: predictor P, corrector the step; Hairer, Norsett & Wanner I,
 * III.5). At the start the nodes repeat at t_0 and P is the Taylor polynomial
 * q0 + v0 s + a0 s^2 / 2 of the consistent state (confluent divided differences; for p = 4
 * its missing terms in s^3 and s^4 make the first estimates too large, and the first steps
 * short, until the history holds step ends only). Only q enters: the schemes' own velocities
 * carry, on constrained models, a component normal to the constraints that alternates from
 * step to step without being an error of the motion, while every error of v shows up in q
 * within the next steps.
 *
 * The norm: err = RMS_i (c (p+1)! h^(p+1) |q[...]_i| / N^p / (tol (s_i + max(|q0_i|,
 * |q1_i|)))) (c (p+1)! = 1/2 for p = 2, 1/6 for p = 4), s_i the floor: the model's length
 * L (the largest |x| of the initial positions, 1 m if all are 0) for position coordinates, 1
 * for directors (unit vectors) and angles.
 *
 * The controller: a step with err <= 1 is accepted, the next is
 * h min(5, max(0.2, 0.9 err^(-1/(p+1)))) (at most h right after a rejection); a rejected
 * step is taken back (state, integrator arrays, accumulated energies) and retried with
 * h max(0.2, min(0.9, 0.9 err^(-1/(p+1)))). Steps never exceed m->dt, and the steps left to
 * t_target are split evenly (no short last step). A step whose Newton iteration fails is
 * taken back and retried with half of it, up to m->max_halvings times in a row. */

#define FACMAX 5.0
#define FACMIN 0.2
#define SAFETY 0.9

/* the accumulated quantities a step adds to, which a rejected step must give back */
#define NACC_CTL 10
static double *acc_field(mbsData *d, int k) {
  double *f[NACC_CTL] = {&d->external_work,     &d->dissipated,
                         &d->contact_dissipated, &d->impact_dissipated,
                         &d->friction_dissipated, &d->numerical_dissipated,
                         &d->contact_potential,   &d->capture_dissipated,
                         &d->gravity_unapplied,   &d->max_violation};
  return f[k];
}
_Static_assert(NACC_CTL <= sizeof(((mbsStepControl *)0)->acc) / sizeof(double),
               "mbsStepControl.acc holds the accumulated quantities");

void mbs_step_control_destroy(mbsStepControl *c) {
  if (!c) {
    return;
  }
  free(c->hist);
  free(c->scale);
  free(c->q);
  free(c->saved_data);
  free(c);
}

mbsStatus mbs_step_control_create(const mbsModel *m, mbsData *d, mbsError *err) {
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1);
  mbsStepControl *c = calloc(1, sizeof(*c));
  /* the order p = nodes - 1 and the estimate's factor c (p+1)! / N^p (above) */
  int st = m->integrator == MBS_INTEGRATOR_SPACETIME;
  int nodes = st && m->spacetime_degree == 2 ? 5 : 3;
  double ne = st && m->spacetime_elements > 1 ? (double)m->spacetime_elements : 1.0;
  if (c) {
    c->nodes = nodes;
    c->est_factor = (nodes == 5 ? 1.0 / 6.0 : 0.5) / pow(ne, (double)(nodes - 1));
  }
  if (!c || !(c->hist = calloc((size_t)nodes * nq, sizeof(double))) ||
      !(c->scale = calloc(nq, sizeof(double))) || !(c->q = calloc(nq, sizeof(double)))) {
    mbs_step_control_destroy(c);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  /* the floor: the model's length for positions (vector nodes that are positions), 1 for
   * directors and the scalar coordinates (angles) */
  double L = 0.0;
  for (int i = 0; i < 3 * m->nnode; i++) {
    if (m->node_position[i / 3]) {
      L = fmax(L, fabs(m->q0[i]));
    }
  }
  L = L > 0.0 ? L : 1.0;
  for (int i = 0; i < m->nq; i++) {
    c->scale[i] = i < 3 * m->nnode && m->node_position[i / 3] ? L : 1.0;
  }
  d->control = c;
  /* room for the integrator's arrays (and the controller's own) at a step's start */
  mbsStateArray a[MBS_STATE_MAX];
  int n = mbs_solver_state_export(m, d, a, MBS_STATE_MAX);
  size_t total = 0;
  for (int k = 0; k < n; k++) {
    total += (size_t)(a[k].length > 0 ? a[k].length : 0);
  }
  c->saved_cap = total > 0 ? total : 1;
  if (!(c->saved_data = malloc(c->saved_cap * sizeof(double)))) {
    d->control = NULL;
    mbs_step_control_destroy(c);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  return MBS_OK;
}

/* keep the state at the start of a step (0 when the integrator's arrays do not fit) */
static int save_state(const mbsModel *m, mbsData *d, mbsStepControl *c) {
  c->t = d->t;
  c->last_dt = d->last_dt;
  c->step = d->step;
  for (int k = 0; k < NACC_CTL; k++) {
    c->acc[k] = *acc_field(d, k);
  }
  memcpy(c->q, d->q, (size_t)m->nq * sizeof(double));
  c->nsaved = mbs_solver_state_export(m, d, c->saved, MBS_STATE_MAX);
  size_t off = 0;
  for (int k = 0; k < c->nsaved; k++) {
    mbsStateArray *a = &c->saved[k];
    if (!a->data || a->columns > 0) {
      a->data = NULL;
      continue;
    }
    if (off + (size_t)a->length > c->saved_cap) {
      return 0;
    }
    memcpy(c->saved_data + off, a->data, (size_t)a->length * sizeof(double));
    a->data = c->saved_data + off;
    off += (size_t)a->length;
  }
  return 1;
}

/* take the step back to the state save_state kept */
static mbsStatus restore_state(const mbsModel *m, mbsData *d, mbsStepControl *c, mbsError *err) {
  d->t = c->t;
  d->last_dt = c->last_dt;
  d->step = c->step;
  for (int k = 0; k < NACC_CTL; k++) {
    *acc_field(d, k) = c->acc[k];
  }
  memcpy(d->q, c->q, (size_t)m->nq * sizeof(double));
  return mbs_solver_state_import(m, d, c->saved, c->nsaved, NULL, 0, err);
}

/* the RMS of x (nq) relative to the state's scale s_i + |q_i| */
static double rms_scaled(const mbsModel *m, const mbsStepControl *c, const double *q,
                         const double *x) {
  double sum = 0.0;
  for (int i = 0; i < m->nq; i++) {
    double r = x[i] / (c->scale[i] + fabs(q[i]));
    sum += r * r;
  }
  return sqrt(sum / (double)(m->nq > 0 ? m->nq : 1));
}

/* start (or start afresh, after a restart without the controller's arrays): the history is
 * the Taylor polynomial of the consistent state at d->t, and the first step follows from the
 * size of v and a against the tolerance's scale (the idea of Hairer, Norsett & Wanner I,
 * II.4): with omega = max(|v|_s, sqrt(|a|_s)) the motion's rate in the scaled norm, the step
 * with h^3 omega^3 / 12 = tol (the estimate's size on q ~ sin(omega t)), halved */
static void control_start(const mbsModel *m, mbsData *d, mbsStepControl *c) {
  int nq = m->nq;
  mbsError cerr;
  const double *v = d->v, *a = NULL;
  if (mbs_solver_consistent(m, d, &cerr) == MBS_OK) {
    v = d->v_rec;
    a = d->acc_rec;
  }
  for (int i = 0; i < nq; i++) {
    c->hist[i] = d->q[i];
    c->hist[nq + i] = v[i];
    c->hist[2 * nq + i] = a ? 0.5 * a[i] : 0.0;
  }
  memset(c->hist + 3 * (size_t)nq, 0, (size_t)(c->nodes - 3) * (size_t)nq * sizeof(double));
  for (int j = 1; j < c->nodes; j++) {
    c->carry[j] = 0.0;
  }
  double sv = rms_scaled(m, c, d->q, v), sa = a ? rms_scaled(m, c, d->q, a) : 0.0;
  double omega = fmax(sv, sqrt(sa)), h = m->dt;
  if (omega > 0.0) {
    h = fmin(h, 0.5 * cbrt(12.0 * m->tolerance) / omega);
  }
  c->carry[0] = h;
}

/* the history usable (a restart file's arrays are untrusted): finite, nodes at or before
 * d->t, a positive next step */
static int control_valid(const mbsModel *m, const mbsStepControl *c) {
  if (!(c->carry[0] > 0.0 && isfinite(c->carry[0]) && isfinite(c->carry[1]) &&
        c->carry[c->nodes - 1] <= 0.0)) {
    return 0;
  }
  for (int j = 1; j + 1 < c->nodes; j++) {
    if (!(c->carry[j] <= c->carry[j + 1])) {
      return 0;
    }
  }
  for (int i = 0; i < c->nodes * m->nq; i++) {
    if (!isfinite(c->hist[i])) {
      return 0;
    }
  }
  return 1;
}

/* the error estimate of the step of size h just taken from q0 to d->q, and with update the
 * history moved on to its end (the step accepted) */
static double control_estimate(const mbsModel *m, const mbsData *d, mbsStepControl *c,
                               const double *q0, double h, int update) {
  int nq = m->nq, P = c->nodes - 1;
  const double *o = c->carry + 1; /* the nodes before t_n: o[0] .. o[P-1]; t_n is at 0 */
  double den = h - o[0], sum = 0.0, hp = h;
  for (int j = 1; j < P; j++) {
    den *= h - o[j];
  }
  den *= h;
  for (int j = 0; j < P; j++) {
    hp *= h;
  }
  /* wp: the coefficients of prod_{j >= 1} (s - o_j) s, of degree P */
  double wp[MBS_CONTROL_MAXNODES] = {1.0};
  for (int j = 1; j <= P; j++) {
    double r = j < P ? o[j] : 0.0;
    for (int l = j; l >= 0; l--) {
      wp[l] = (l > 0 ? wp[l - 1] : 0.0) - r * (l < j ? wp[l] : 0.0);
    }
  }
  double *A = c->hist;
  for (int i = 0; i < nq; i++) {
    double p = A[(size_t)P * nq + i];
    for (int l = P - 1; l >= 0; l--) {
      p = A[(size_t)l * nq + i] + h * p;
    }
    double q1 = d->q[i], dd = (q1 - p) / den;
    double e = c->est_factor * hp * dd /
               (m->tolerance * (c->scale[i] + fmax(fabs(q0[i]), fabs(q1))));
    sum += e * e;
    if (update) {
      /* the polynomial through the last p + 1 nodes, P + dd (t_n+1 - t_n-p) prod_{j >= 1}
       * (s - o_j) s, then about the new end (its coefficients: the Taylor shift by h) */
      double k = dd * (h - o[0]), a[MBS_CONTROL_MAXNODES];
      for (int l = 0; l <= P; l++) {
        a[l] = A[(size_t)l * nq + i] + k * wp[l];
      }
      A[i] = q1;
      for (int l = 1; l <= P; l++) {
        double t = a[l], hl = 1.0, binom = 1.0;
        for (int mm = l + 1; mm <= P; mm++) {
          hl *= h;
          binom = binom * (double)mm / (double)(mm - l);
          t += binom * a[mm] * hl;
        }
        A[(size_t)l * nq + i] = t;
      }
    }
  }
  if (update) {
    for (int j = 1; j < P; j++) {
      c->carry[j] = c->carry[j + 1] - h;
    }
    c->carry[P] = -h;
  }
  return sqrt(sum / (double)(nq > 0 ? nq : 1));
}

static mbsStatus advance_controlled(const mbsModel *m, mbsData *d, double t_target,
                                    mbsStepVisit each, void *ctx, mbsError *err) {
  mbsStepControl *c = d->control;
  mbsError step_err;
  mbs_error_clear(&step_err);
  int iterations = 0, newton_failures = 0, after_reject = 0;
  /* genalpha's accelerations before its first step (nothing when it has them) */
  mbs_solver_start(m, d);
  if (!control_valid(m, c)) {
    control_start(m, d, c);
  }
  /* within a relative 1e-12 of the target counts as there (the grid's times are n dt) */
  while (t_target - d->t > 1e-12 * fmax(1.0, fabs(t_target))) {
    double rest = t_target - d->t;
    double h_prop = fmin(c->carry[0], m->dt);
    /* the steps left split evenly (rest carries the round-off of the grid's times, up to
     * about 1e-12 of it relative at t = 1e4 dt: a step at most 1e-10 longer than proposed
     * is not split) */
    double nsplit = ceil(rest / h_prop - 1e-10);
    double hs = nsplit <= 1.0 ? rest : rest / nsplit;
    if (!(hs > 64.0 * DBL_EPSILON * fmax(1.0, fabs(d->t)))) {
      d->iterations = iterations;
      return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0,
                           "error control: the step fell to %.3g s at t = %.9g, the resolution "
                           "of time: the motion is not smooth enough there for "
                           "solver.tolerance = %g (a jump of a load or a prescribed motion?)",
                           hs, d->t, m->tolerance);
    }
    if (!save_state(m, d, c)) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                           "error control: the integrator's state outgrew its copy");
    }
    mbsStatus st = mbs_solver_step(m, d, hs, &step_err);
    iterations += d->iterations;
    if (st != MBS_OK) {
      if (st != MBS_ERR_SOLVER && st != MBS_ERR_LINSOLVE) {
        d->iterations = iterations;
        if (err) {
          *err = step_err;
        }
        return st;
      }
      if (newton_failures >= m->max_halvings) {
        d->iterations = iterations;
        mbs_error_set(err, st, NULL, 0, 0,
                      "%s; gave up at dt = %.3g after halving the step %d times in a row "
                      "(error control, solver.tolerance = %g). Try more halvings "
                      "(solver.max_halvings); a motion that blew up points to loads or "
                      "initial velocities far too large",
                      step_err.msg, hs, newton_failures, m->tolerance);
        return st;
      }
      /* the step left q, v at its start; what else it changed goes back too */
      st = restore_state(m, d, c, err);
      if (st != MBS_OK) {
        return st;
      }
      newton_failures++;
      d->rejected++;
      c->carry[0] = 0.5 * hs;
      after_reject = 1;
      continue;
    }
    newton_failures = 0;
    double e = control_estimate(m, d, c, c->q, hs, 0);
    double fac = isfinite(e) && e > 0.0 ? SAFETY * pow(e, -1.0 / (double)c->nodes) : FACMAX;
    if (!(e <= 1.0)) {
      /* rejected: back to the step's start, retried with a smaller step */
      st = restore_state(m, d, c, err);
      if (st != MBS_OK) {
        return st;
      }
      c->rejected++;
      c->carry[0] = hs * (isfinite(e) ? fmax(FACMIN, fmin(fac, SAFETY)) : FACMIN);
      after_reject = 1;
      continue;
    }
    (void)control_estimate(m, d, c, c->q, hs, 1);
    double h_next = hs * fmin(after_reject ? 1.0 : FACMAX, fmax(FACMIN, fac));
    /* a step shortened to end at t_target does not shrink the next */
    c->carry[0] = hs < h_prop ? fmax(h_next, fmin(h_prop, h_next / hs * h_prop)) : h_next;
    after_reject = 0;
    c->accepted++;
    c->h_sum += hs;
    c->h_min = c->accepted == 1 ? hs : fmin(c->h_min, hs);
    c->h_max = fmax(c->h_max, hs);
    if (each) {
      each(ctx, m, d);
    }
  }
  d->t = t_target;
  d->iterations = iterations;
  return MBS_OK;
}
