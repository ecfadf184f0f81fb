/* static.c: the static solution (integrator: static): an equilibrium at each time of the
 * grid, without inertia. Loads follow their profiles, so t is the load factor of a ramp.
 *
 * The step from t0 to t1 = t0 + dt solves, with the one assembler and the one Newton driver,
 *     r_q = dt^2 (grad V(q1) - F(q1, 0, t1)) + G(q1)^T mu = 0,    r_g = g(q1, t1) = 0,
 * mu = dt^2 lambda: the residual of the dynamic schemes at the weights cM = 0 (no inertia),
 * alpha = 1 (gradients, forces and constraint gradients at q1), cv = 0 (velocities zero, so
 * dampers exert no force), tf = dt (the loads at t1 itself) and no discrete gradients. dt
 * only scales the balance rows and the multipliers, as in the dynamic schemes, so the
 * assembler, the driver and its convergence test are shared unchanged. Newton starts from
 * the previous equilibrium (q0, lambda0). A step of the grid is taken in load increments
 * that adapt (step below): a failed increment is halved, an intermediate load level is
 * solved, then the grid time again. Newton's driver knows the problem is an equilibrium
 * (mbsNewtonProblem.equilibrium, newton.c): a reused factorization's iterate is accepted by
 * the tolerance test, the matrix is assembled afresh while the increment is large, and a
 * chord iteration that stalls near the tolerance goes over to full Newton.
 *
 * Gravity follows the load factor min(t, 1) unless solver.static.gravity is full: the
 * assembler scales the gravity elements by 1 - w->gravity_off. The potential energy then
 * holds lambda V_g (mbsData.gravity_unapplied) and the external work its rise, the power
 * V_g dlambda of a time-dependent potential, by the trapezoidal rule.
 *
 * Velocities are zero by definition (the initial velocities of the deck are ignored), so the
 * kinetic energy is zero. The external work is that of the non-potential loads and of
 * prescribed motions along the path of equilibria, by the trapezoidal rule over each
 * increment: 1/2 (F(q0, 0, t0) - G(q0, t0)^T lambda0 + F(q1, 0, t1) - G(q1, t1)^T lambda1) .
 * (q1 - q0); potential loads (gravity, springs) are in V. V - V0 - W is then zero only along
 * a path that starts at an equilibrium, to the rule's O(dt^2): a start away from equilibrium
 * or a load that jumps releases energy that a dynamic run would turn into motion, so the
 * command line does not check the energy balance of a static run.
 *
 * Without inertia a motion that no stiffness and no constraint resists (a mechanism's free
 * degree of freedom: a joint without a spring, a free body) makes the Newton matrix
 * singular. Halving the load does not help then: the step fails at once (MBS_ERR_MODEL)
 * and names the coordinate that the free motion moves most. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "solver/integrator.h"
#include "solver/system.h"

/* the load factor of gravity at t: min(t, 1), as if gravity had the profile {ramp: [0, 1]}
 * (solver.static.gravity: ramp, the default), or 1 (full: from the first increment). t, not
 * t / t_end: a run stopped early (--t-end) or restarted follows the same path */
static double gravity_factor(const mbsModel *m, double t) {
  if (m->static_gravity_full) {
    return 1.0;
  }
  return t <= 0.0 ? 0.0 : t >= 1.0 ? 1.0 : t;
}

/* V_g(q): the potential of full gravity (the gravity elements) */
static double gravity_potential(const mbsModel *m, const double *q) {
  double V = 0.0;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->kind == MBS_ELEM_GRAVITY) {
      V += mbs_element_kind(el->kind)->potential(m, el, q);
    }
  }
  return V;
}

/* the potential energy holds lambda V_g, the gravity applied (mbsData.gravity_unapplied) */
static void gravity_unapplied(const mbsModel *m, mbsData *d) {
  double lam = gravity_factor(m, d->t);
  d->gravity_unapplied = lam < 1.0 ? -(1.0 - lam) * gravity_potential(m, d->q) : 0.0;
}

/* the assembler's weights: no inertia, everything at the end point q1 and at t1 */
static mbsSchemeWeights weights(double dt) {
  return (mbsSchemeWeights){0.0, 1.0, 0.0, dt, 0};
}

typedef struct {
  mbsImplicitWork base; /* first: the assembler and the Newton driver see this */
  int started;          /* the multipliers Newton starts from are set (start, or an import) */
  double h;             /* the load increment the next step starts with (0: the grid's dt);
                           carried from step to step and in the records (a restart repeats
                           the run bit for bit) */
} Work;

static mbsStatus init(const mbsModel *m, void **work, mbsError *err) {
  Work *w = calloc(1, sizeof(*w));
  if (!w || mbs_implicit_work_init(m, &w->base) != MBS_OK) {
    free(w);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  *work = w;
  return MBS_OK;
}

static void work_free(void *work) {
  Work *w = work;
  if (w) {
    mbs_implicit_work_free(&w->base);
    free(w);
  }
}

/* velocities are zero by definition, from the start. Newton's first iteration starts from
 * the multipliers of the initial configuration released from rest (the index-1 equations
 * at v = 0, consistent.c): they are the equilibrium's when it is one, and they give the
 * first Newton matrix the geometric stiffness of the constraints (a pendulum hanging under
 * gravity, whose stiffness against swinging is lambda times the rod's curvature, would be
 * singular with lambda = 0). Where they are not defined (a singular KKT matrix) Newton
 * starts from zero. */
static void start(const mbsModel *m, mbsData *d) {
  Work *gw = d->integrator_work;
  memset(d->v, 0, (size_t)m->nq * sizeof(double));
  gravity_unapplied(m, d);
  if (gw->started) {
    return;
  }
  gw->started = 1;
  if (d->step > 0 || m->ncon == 0) {
    return;
  }
  mbsError kerr;
  if (mbs_consistent_index1(m, d, &kerr) == MBS_OK) {
    memcpy(d->lambda, d->lambda_rec, (size_t)m->ncon * sizeof(double));
  } else {
    memset(d->lambda, 0, (size_t)m->ncon * sizeof(double));
  }
}

static void prepare(const mbsModel *m, mbsData *d, double dt, mbsSchemeWeights *s) {
  mbsImplicitWork *w = d->integrator_work;
  *s = weights(dt);
  start(m, d);
  mbs_implicit_begin(m, d, w);
  /* gravity at the increment's load level */
  w->gravity_off = 1.0 - gravity_factor(m, d->t + dt);
  /* the multipliers of the previous equilibrium, scaled for this increment (a halved
   * increment after a failure has another dt than the step that found them) */
  for (int r = 0; r < m->ncon; r++) {
    w->mu[r] = w->mu_prev[r] = dt * dt * d->lambda[r];
  }
  /* no inertia and no velocities: the per-step vectors are zero, and so is the predictor
   * of q1 - q0 (Newton starts from the previous equilibrium) */
  memset(w->qhat, 0, (size_t)m->nq * sizeof(double));
  memset(w->qbase, 0, (size_t)m->nq * sizeof(double));
  memset(w->vbase, 0, (size_t)m->nq * sizeof(double));
}

/* back to the previous equilibrium after a failure */
static void restore(const mbsModel *m, mbsData *d, mbsImplicitWork *w) {
  memcpy(d->q, w->q_prev, (size_t)m->nq * sizeof(double));
  memset(d->v, 0, (size_t)m->nq * sizeof(double));
  memcpy(w->mu, w->mu_prev, (size_t)m->ncon * sizeof(double));
  d->factor_valid = 0;
}

/* the slot of the diagonal entry of column c in the Newton matrix, -1 if not in the pattern */
static int diag_slot(const mbsSystem *sys, int c) {
  for (int p = sys->colptr[c]; p < sys->colptr[c + 1]; p++) {
    if (sys->rowind[p] == c) {
      return p;
    }
  }
  return -1;
}

/* the motion that a singular Newton matrix (in d->jac, as assembled) does not resist: the
 * coordinate it moves most, -1 if not found. Inverse iteration with the balance rows'
 * diagonal shifted by a small multiple of the matrix's largest entry (the shift makes the
 * matrix regular; the solution is then dominated by the null vector). Overwrites d->jac. */
static int free_motion(const mbsModel *m, mbsData *d) {
  int nq = m->nq, n = d->sys->n, coord = -1;
  mbsError ferr;
  double amax = mbs_norm_inf(d->jac, d->sys->nnz);
  double shift = 1e-9 * (amax > 0.0 ? amax : 1.0);
  for (int c = 0; c < nq; c++) {
    int p = diag_slot(d->sys, c);
    if (p >= 0) {
      d->jac[p] += shift;
    }
  }
  d->factor_valid = 0;
  if (mbs_newton_factor(d, 1, &ferr) != MBS_OK) {
    return -1;
  }
  /* x <- A^-1 x twice from a start with every coordinate in it */
  for (int i = 0; i < n; i++) {
    d->res[i] = i < nq ? 1.0 + 0.1 * sin(1.0 + i) : 0.0;
  }
  for (int k = 0; k < 2; k++) {
    if (mbs_newton_linear_solve(d, d->res, d->dx, &ferr) != MBS_OK) {
      return -1;
    }
    double xn = mbs_norm_inf(d->dx, nq);
    if (!(xn > 0.0) || !isfinite(xn)) {
      return -1;
    }
    for (int i = 0; i < n; i++) {
      d->res[i] = i < nq ? d->dx[i] / xn : 0.0;
    }
  }
  double best = 0.0;
  for (int i = 0; i < nq; i++) {
    if (fabs(d->res[i]) > best) {
      best = fabs(d->res[i]);
      coord = i;
    }
  }
  return coord;
}

/* the free motion (free_motion's vector, in d->res) named by what it moves: coordinate
 * coord, and where coord is a director of a beam node whose motion is mostly a rotation
 * about the beam's own axis d1 (a cable between two spherical joints twists freely), that
 * twist with the beam and node and what holds it. The rotation of a director frame is
 * omega = 1/2 sum_i d_i x dd_i (seed 000 eq. 33's angular velocity, for the increments). */
static void describe_free(const mbsModel *m, const mbsData *d, int coord, char *buf, size_t n) {
  if (coord < 0) {
    snprintf(buf, n, "an unknown coordinate");
    return;
  }
  snprintf(buf, n, "%s", mbs_model_coord_name(m, coord));
  int vn = coord / 3;
  for (int b = 0; b < m->nbeam; b++) {
    const mbsBeam *bm = &m->beam[b];
    int k = vn - bm->node0;
    if (k < 0 || k >= 4 * bm->nnode || k % 4 == 0) {
      continue;
    }
    int n0 = bm->node0 + 4 * (k / 4);
    double om[3] = {0.0, 0.0, 0.0};
    for (int i = 1; i <= 3; i++) {
      const double *di = d->q + 3 * (n0 + i), *ddi = d->res + 3 * (n0 + i);
      om[0] += 0.5 * (di[1] * ddi[2] - di[2] * ddi[1]);
      om[1] += 0.5 * (di[2] * ddi[0] - di[0] * ddi[2]);
      om[2] += 0.5 * (di[0] * ddi[1] - di[1] * ddi[0]);
    }
    const double *d1 = d->q + 3 * (n0 + 1);
    double on = sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]);
    double d1n = sqrt(d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]);
    double twist = (om[0] * d1[0] + om[1] * d1[1] + om[2] * d1[2]) / (d1n > 0.0 ? d1n : 1.0);
    if (on > 0.0 && fabs(twist) >= 0.9 * on) {
      size_t len = strlen(buf);
      snprintf(buf + len, n - len,
               " (the rotation of beam '%s' about its own axis, a twist, at its node '%s': "
               "nothing holds the beam's twist, as between two spherical joints; hold it with "
               "a revolute, universal or fixed joint at one end, or a rotational_spring about "
               "the beam's axis at a node)",
               bm->name, m->attach_name[bm->attach0 + k / 4]);
    }
    return;
  }
}

/* Is the Newton matrix singular at the previous equilibrium (q0, mu0)? Then no load
 * increment, however small, has a solution nearby: some motion is resisted by nothing.
 * Returns 1 and the coordinate that this motion moves most in *coord. Leaves d->q, w->dq
 * and w->mu at the previous equilibrium. */
static int singular_at_start(const mbsModel *m, mbsData *d, mbsImplicitWork *w,
                             const mbsSchemeWeights *s, double dt, double t0, int *coord) {
  mbsError ferr;
  *coord = -1;
  memset(w->dq, 0, (size_t)m->nq * sizeof(double));
  memcpy(d->q, w->q_prev, (size_t)m->nq * sizeof(double));
  memcpy(w->mu, w->mu_prev, (size_t)m->ncon * sizeof(double));
  (void)mbs_assemble(m, d, w, s, dt, t0, 1);
  mbsStatus st = mbs_newton_factor(d, 1, &ferr);
  d->factor_valid = 0;
  if (st == MBS_OK) {
    return 0;
  }
  *coord = free_motion(m, d);
  return 1;
}

static mbsStatus increment(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  mbsImplicitWork *w = d->integrator_work;
  int nq = m->nq;
  double t0 = d->t, t1 = t0 + dt;
  mbsSchemeWeights s;
  prepare(m, d, dt, &s);
  char why[2000];
  mbsStatus st = mbs_implicit_newton(m, d, w, &s, dt, t0, w->qbase, why, sizeof(why), err);
  if (st != MBS_OK) {
    int coord = -1;
    char fdesc[600];
    /* a singular matrix at an iterate: say which motion it leaves free (d->jac holds it) */
    if (st == MBS_ERR_LINSOLVE) {
      int it_coord = free_motion(m, d);
      describe_free(m, d, it_coord, fdesc, sizeof(fdesc));
      size_t len = strlen(why);
      snprintf(why + len, sizeof(why) - len,
               " at an iterate where nothing resists a motion that moves %s most (a load "
               "level where the stiffness against it vanishes: a limit point, or springs "
               "at their rest length with nothing else holding a body sideways)",
               fdesc);
    }
    if (st == MBS_ERR_LINSOLVE && singular_at_start(m, d, w, &s, dt, t0, &coord)) {
      describe_free(m, d, coord, fdesc, sizeof(fdesc));
      restore(m, d, w);
      return mbs_error_set(
          err, MBS_ERR_MODEL, NULL, 0, 0,
          "no static equilibrium at t = %.9g (static): the equilibrium equations are singular "
          "at the start of the load increment (t = %.9g): some motion is resisted by no "
          "stiffness (springs, elastic strain, gravity on a pendulum) and no constraint, so "
          "no load along it can be carried; it moves %s most. Such a mechanism with a free "
          "degree of freedom (a joint without a spring, a free body, or a start where the "
          "stiffness against the motion vanishes, such as a pendulum held horizontal) has no "
          "static solution: hold it with a spring, a joint or a prescribed motion, or use a "
          "dynamic integrator",
          t1, t0, fdesc);
    }
    int wr;
    double viol = mbs_constraint_violation(m, d->q, t1, &wr);
    char wdesc[256], worst[400] = "";
    if (wr >= 0) {
      mbs_constraint_describe(m, wr, wdesc, sizeof(wdesc));
      snprintf(worst, sizeof(worst), "; worst constraint: %s with |g| = %.3e", wdesc, viol);
    }
    restore(m, d, w);
    return mbs_error_set(err, st, NULL, 0, 0,
                         "no static equilibrium found at t = %.9g from the one at t = %.9g "
                         "(static, load increment dt = %.3g): %s%s",
                         t1, t0, dt, why, worst);
  }
  /* the work of the non-potential loads and prescribed motions over the increment: the
   * trapezoidal rule along the path of equilibria (the velocities are zero: w->vbase) */
  mbs_assemble_work(m, d, w, &s, w->q_prev, w->vbase, t0, t0, w->mu_prev, 1.0 / (dt * dt), 0.5,
                    &d->external_work, &d->dissipated);
  mbs_assemble_work(m, d, w, &s, d->q, w->vbase, t1, t1, w->mu, 1.0 / (dt * dt), 0.5,
                    &d->external_work, &d->dissipated);
  /* ramped gravity, lambda V_g(q) in the potential: its rise is the power V_g d(lambda), by
   * the same rule (the partial time derivative of a time-dependent potential) */
  double lam0 = gravity_factor(m, t0), lam1 = gravity_factor(m, t1);
  if (lam1 != lam0) {
    d->external_work +=
        0.5 * (gravity_potential(m, w->q_prev) + gravity_potential(m, d->q)) * (lam1 - lam0);
  }
  memset(d->v, 0, (size_t)nq * sizeof(double));
  /* the end of the step (the dynamic schemes' mbs_implicit_end without its velocity jump
   * at a drive's kink: there are no velocities) */
  d->t = t1;
  d->last_dt = dt;
  d->step++;
  d->max_violation = fmax(d->max_violation, mbs_constraint_violation(m, d->q, d->t, NULL));
  for (int r = 0; r < m->ncon; r++) {
    d->lambda[r] = w->mu[r] / (dt * dt);
  }
  gravity_unapplied(m, d);
  return MBS_OK;
}

/* One step of the grid, from t0 to t0 + dt, in load increments that adapt: an increment
 * whose Newton iteration fails is halved (at most solver.max_halvings times below dt), one
 * that converged slowly (more than half of newton.max_iterations) halves the next, one that
 * converged easily (at most 4 iterations, or at most 8 on at most two factorizations: a
 * reused factorization's iteration costs a solve only) doubles it, up to dt. (A slack
 * rope's Newton takes 7 iterations on 2 factorizations per increment at small loads, where
 * only its bending stiffness resists: counting iterations alone kept its increments at
 * 1e-4 of the load for 287 increments.) The increments of a step are
 * equal (the rest of the step divided evenly), so the step ends on the grid, where the
 * records are; the increment reached is where the next step starts. */
static mbsStatus step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  Work *gw = d->integrator_work;
  double t_end = d->t + dt, hmin = ldexp(dt, -m->max_halvings);
  double h = gw->h > 0.0 ? fmin(gw->h, dt) : dt;
  long iterations = 0;
  mbsError ierr;
  mbs_error_clear(&ierr);
  while (t_end - d->t > 1e-12 * fmax(1.0, fabs(t_end))) {
    double rest = t_end - d->t;
    double n = ceil(rest / h * (1.0 - 1e-12));
    double hs = n <= 1.0 ? rest : rest / n;
    long f0 = d->factorizations;
    mbsStatus st = increment(m, d, hs, &ierr);
    iterations += d->iterations;
    if (st == MBS_OK) {
      long nf = d->factorizations - f0;
      if (d->iterations > m->newton_max_iterations / 2) {
        h = fmax(0.5 * hs, hmin);
      } else if (d->iterations <= 4 || (nf <= 2 && d->iterations <= 8)) {
        h = fmin(2.0 * fmax(h, hs), dt);
      }
      continue;
    }
    if (st != MBS_ERR_SOLVER && st != MBS_ERR_LINSOLVE) {
      d->iterations = (int)iterations;
      if (err) {
        *err = ierr;
      }
      return st;
    }
    if (hs <= hmin * (1.0 + 1e-9)) {
      /* the step is a load increment, and no inertia can blow up */
      d->iterations = (int)iterations;
      return mbs_error_set(
          err, st, NULL, 0, 0,
          "%s; gave up at a load increment of dt = %.3g after halving it %d times. Past a "
          "limit point (snap-through, buckling) or beyond the largest load the structure "
          "carries there is no nearby equilibrium to follow; else try a smaller dt (--dt) or "
          "more halvings (solver.max_halvings)",
          ierr.msg, hs, (int)lround(log2(dt / hs)));
    }
    h = 0.5 * hs;
    d->rejected++;
  }
  d->t = t_end;
  gw->h = h;
  d->iterations = (int)iterations;
  return MBS_OK;
}

/* between two equilibria: linear in the load factor, at rest (within the last increment of
 * the step; before it, the equilibrium at its start) */
static void interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v) {
  const mbsImplicitWork *w = d->integrator_work;
  double h = d->last_dt;
  double a = (h > 0.0 && d->step > 0 && t < d->t) ? (t - (d->t - h)) / h : 1.0;
  a = a < 0.0 ? 0.0 : a;
  for (int i = 0; i < m->nq; i++) {
    if (q) {
      q[i] = a >= 1.0 ? d->q[i] : w->q_prev[i] + a * (d->q[i] - w->q_prev[i]);
    }
    if (v) {
      v[i] = 0.0;
    }
  }
}

/* the state a record carries: the multipliers of the equilibrium (the next Newton
 * iteration starts from them); q is the record's own, and there are no velocities */
static int state_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max) {
  int n = 0;
  Work *gw = d->integrator_work;
  if (n < max) {
    out[n++] = (mbsStateArray){.name = "multipliers", .length = m->ncon, .data = d->lambda};
  }
  /* the load increment the next step starts with */
  if (n < max) {
    out[n++] = (mbsStateArray){.name = "load_increment", .length = 1, .data = &gw->h, .units = "s"};
  }
  return n;
}

static mbsStatus state_import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                              char *missing, size_t nmissing, mbsError *err) {
  (void)missing;
  (void)nmissing;
  (void)err;
  Work *gw = d->integrator_work;
  mbsImplicitWork *w = &gw->base;
  const mbsStateArray *mul = mbs_state_find(in, n, "multipliers");
  if (mul && mul->length == m->ncon && mul->data != d->lambda && m->ncon > 0) {
    memcpy(d->lambda, mul->data, (size_t)m->ncon * sizeof(double));
  }
  const mbsStateArray *inc = mbs_state_find(in, n, "load_increment");
  if (inc && inc->length == 1 && isfinite(inc->data[0]) && inc->data[0] >= 0.0) {
    gw->h = inc->data[0];
  }
  /* velocities of another integrator's file are not part of an equilibrium */
  memset(d->v, 0, (size_t)m->nq * sizeof(double));
  gravity_unapplied(m, d);
  /* fresh pivots for the next factorization, as the other implicit schemes (a restart from
   * a record then repeats the run bit for bit) */
  w->refactor_next = 1;
  gw->started = 1;
  return MBS_OK;
}

const mbsIntegratorTable mbs_integrator_static = {
    .name = "static",
    .init = init,
    .start = start,
    .prepare = prepare,
    .step = step,
    .interpolate = interpolate,
    .state_export = state_export,
    .state_import = state_import,
    .free = work_free,
    .contacts = NULL,
};
