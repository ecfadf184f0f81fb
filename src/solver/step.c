/* step.c: one Newton driver for the implicit one-step schemes em, midpoint, euler, genalpha.
 *
 * With v eliminated through the scheme's update (em/midpoint: q_{n+1} - q_n = dt/2 (v_n +
 * v_{n+1}), seed 000 eq. 57_1; euler: q_{n+1} - q_n = dt v_{n+1}; genalpha: Newmark), the
 * unknowns are q1 = q_{n+1} and mu = dt^2 lambda:
 *     r_q = cM M (q1 - qhat) + dt^2 (P - F) + G(q*)^T mu = 0
 *     r_g = g(q1, t1) = 0
 * em/midpoint: cM = 2, qhat = q0 + dt v0, q* = (q0 + q1)/2; euler: cM = 1, q* = q1;
 * genalpha (Arnold & Bruls 2007, index 3): cM = (1 - am)/(beta (1 - af)), q* = q1, qhat from
 * the Newmark predictor and the previous accelerations.
 * P is the discrete gradient of V for em (seed 000 eq. 57_2), the gradient at q* otherwise;
 * F the non-potential force at (q*, v*, t*) (eq. 61 for torques) with v* linear in q1.
 * Multiplying the momentum balance by dt^2 and solving for dt^2 lambda is the row/column
 * scaling that removes the O(dt^-3) ill-conditioning of the index-3 iteration matrix. The
 * generic constraint rows are at most quadratic, so G((q0 + q1)/2) is their exact discrete
 * gradient: G(q*) (q1 - q0) = g(q1) - g(q0), and constraint forces do no work over a step.
 *
 * Newton's method either refactors at every iteration or (newton.reuse, modified Newton)
 * factors the Newton matrix once per step, at the predictor, and keeps that factorization
 * for the step's further iterations while they contract by at least 4, refactoring when the
 * contraction slows. A factorization is never carried into the next step: over a step the
 * matrix changes by O(dt) (a top spinning at 50 rad/s turns 0.05 rad per 1 ms step), the
 * chord iteration then contracts only linearly by 0.3-0.5, and the residual it stops at is
 * biased in one direction, step after step: em's energy and momenta drifted linearly (1.3e-9
 * relative over 1e4 steps) and the state depended on where records forced a refactorization.
 * Within a step the matrix moves by the predictor's error only, the chord iteration contracts
 * by ~1e-3 and is driven to round-off (4 eps of the residual's terms). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/solver.h"
#include "solver/linsolve.h"
#include "solver/system.h"
#include "util/vec3.h"

typedef struct {
  double cM;    /* mass factor */
  double alpha; /* q* = q0 + alpha (q1 - q0) */
  double cv;    /* v* = vbase + cv (q1 - qbase) */
  double c1;    /* end velocity v1 = c1 (q1 - q0)/dt - (c1 - 1) v0 (not genalpha) */
  double tf;    /* forces are evaluated at t0 + tf */
  int discrete; /* use discrete gradients */
  int genalpha;
  double am, af, gamma, beta; /* generalized-alpha parameters */
} Scheme;

/* the scheme's constants for a step of size dt; genalpha from rho_inf (Chung & Hulbert).
 * Returns 0 for a value that is not a scheme (auto, which the compiler resolves, or out of
 * range): the switch names every integrator, so a new one that is not added here is a
 * compile error (-Wswitch), and a stray value is refused, never run as another scheme. */
static int scheme_of(const mbsModel *m, double dt, Scheme *out) {
  Scheme s;
  memset(&s, 0, sizeof(s));
  s.cM = 2.0;
  s.alpha = 0.5;
  s.cv = 1.0 / dt;
  s.c1 = 2.0;
  s.tf = 0.5 * dt;
  switch (m->integrator) {
    case MBS_INTEGRATOR_EM:
      s.discrete = 1;
      break;
    case MBS_INTEGRATOR_MIDPOINT:
      break;
    case MBS_INTEGRATOR_EULER:
      s.cM = 1.0;
      s.alpha = 1.0;
      s.c1 = 1.0;
      break;
    case MBS_INTEGRATOR_GENALPHA: {
      double rho = m->rho_inf;
      s.genalpha = 1;
      s.am = (2.0 * rho - 1.0) / (rho + 1.0);
      s.af = rho / (rho + 1.0);
      s.gamma = 0.5 + s.af - s.am;
      s.beta = 0.25 * (s.gamma + 0.5) * (s.gamma + 0.5);
      s.cM = (1.0 - s.am) / (s.beta * (1.0 - s.af));
      s.alpha = 1.0;
      s.cv = s.gamma / (s.beta * dt);
      break;
    }
    case MBS_INTEGRATOR_AUTO:
    case MBS_INTEGRATOR_COUNT:
    default:
      return 0;
  }
  /* end-point schemes take the loads' profiles just before the step's end (the left
   * limit): a window or table jump that falls on a step boundary then acts on exactly the
   * steps inside it, as with the midpoint schemes (1e-9 dt is far above the round-off of
   * t = n dt and far below anything a continuous profile resolves) */
  if (s.alpha == 1.0) {
    s.tf = dt * (1.0 - 1e-9);
  }
  *out = s;
  return 1;
}

/* max |x_i|, NaN if any x_i is NaN (fmax alone would skip it, and a NaN residual would
 * pass the convergence test) */
static double norm_inf(const double *x, int n) {
  double r = 0.0;
  for (int i = 0; i < n; i++) {
    if (isnan(x[i])) {
      return x[i];
    }
    r = fmax(r, fabs(x[i]));
  }
  return r;
}

static void jac_add(double *jac, int slot, double val) {
  if (slot >= 0) {
    jac[slot] += val;
  }
}

/* a constraint element: Gbar^T mu (discrete gradient for em, else G(q*)^T mu) into r_q, its
 * Hessian term into the Newton matrix, g(q1, t1) into r_g with G(q1, t1); returns the
 * largest constraint force term */
static double elem_constraint(const mbsModel *m, mbsData *d, const Scheme *s, const mbsElem *el,
                              int k, const double *q0, const double *q1, double tm, double t1,
                              int with_jac, double *g, double *H, double *Ge) {
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  const int *map = mbs_system_elem_jmap(d->sys, k);
  const int *gmap = mbs_system_elem_gmap(d->sys, k);
  const double *mu = d->mu + el->con0;
  double *r = d->res, *jac = d->jac, scale = 0.0;
  int n = el->nq, nc = el->ncon;
  memset(H, 0, (size_t)(n * n) * sizeof(double));
  double hfac = s->alpha;
  if (s->discrete && kind->constraint_discrete_gradient) {
    kind->constraint_discrete_gradient(m, el, q0, q1, tm, mu, Ge, with_jac ? H : NULL);
    hfac = 1.0;
  } else {
    kind->constraint(m, el, d->qm, tm, g, Ge);
    if (with_jac && kind->constraint_hessian) {
      kind->constraint_hessian(m, el, d->qm, tm, mu, H);
    }
  }
  for (int i = 0; i < n; i++) {
    double f = 0.0;
    for (int c = 0; c < nc; c++) {
      f += Ge[c * n + i] * mu[c];
      if (with_jac) {
        jac_add(jac, gmap[(c * n + i) * 2 + 1], Ge[c * n + i]);
      }
    }
    r[el->qidx[i]] += f;
    scale = fmax(scale, fabs(f));
  }
  if (with_jac) {
    for (int i = 0; i < n * n; i++) {
      jac_add(jac, map[i], hfac * H[i]);
    }
  }
  /* g(q1, t1) and G(q1, t1) */
  kind->constraint(m, el, q1, t1, g, with_jac ? Ge : NULL);
  for (int c = 0; c < nc; c++) {
    r[m->nq + el->con0 + c] = g[c];
    if (with_jac) {
      for (int i = 0; i < n; i++) {
        jac_add(jac, gmap[(c * n + i) * 2], Ge[c * n + i]);
      }
    }
  }
  return scale;
}

/* residual (and Newton matrix if with_jac) at the iterate d->q, d->mu; returns the
 * magnitude of the largest term of r_q (for the relative convergence test) */
static double assemble(const mbsModel *m, mbsData *d, const Scheme *s, double dt, double t0,
                       int with_jac) {
  const double *q0 = d->q_prev, *v0 = d->v_prev, *q1 = d->q;
  double *r = d->res, *jac = d->jac;
  int nq = m->nq;
  double dt2 = dt * dt, tm = t0 + s->alpha * dt, tf = t0 + s->tf;
  double scale = 0.0;
  memset(r, 0, (size_t)d->sys->n * sizeof(double));
  if (with_jac) {
    memset(jac, 0, (size_t)d->sys->nnz * sizeof(double));
  }
  /* evaluation state of forces and constraint gradients */
  /* increments from q0 (d->dq, d->qhat, d->qbase) keep the O(dt^2) inertia residual free of
   * the cancellation of O(1) coordinates, so it can be driven to round-off */
  const double *dhat = d->qhat, *dbase = d->qbase, *vbase = d->vbase, *dq = d->dq;
  for (int i = 0; i < nq; i++) {
    d->qm[i] = q0[i] + s->alpha * dq[i];
    d->vm[i] = vbase[i] + s->cv * (dq[i] - dbase[i]);
  }
  (void)v0;
  /* inertia: cM M (q1 - qhat) */
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    double w = s->cM * m->mass_val[e];
    for (int c = 0; c < 3; c++) {
      double db = dq[3 * b + c] - dhat[3 * b + c];
      r[3 * a + c] += w * db;
      if (a != b) {
        double da = dq[3 * a + c] - dhat[3 * a + c];
        r[3 * b + c] += w * da;
      }
      if (with_jac) {
        jac_add(jac, d->sys->mass_map[6 * e + c], w);
        jac_add(jac, d->sys->mass_map[6 * e + 3 + c], w);
      }
    }
  }
  scale = norm_inf(r, nq);
  /* elements: potential and non-potential forces */
  double *g = d->ework + 4 * d->sys->eblock;
  double *H = d->ework, *Fq = d->ework + d->sys->eblock;
  double *Fv = d->ework + 2 * d->sys->eblock;
  double *Ge = d->ework + 3 * d->sys->eblock;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    const int *map = mbs_system_elem_jmap(d->sys, k);
    int n = el->nq;
    if (kind->gradient) {
      memset(H, 0, (size_t)(n * n) * sizeof(double));
      double hfac = s->alpha;
      if (s->discrete && kind->discrete_gradient) {
        kind->discrete_gradient(m, el, q0, q1, g, with_jac ? H : NULL);
        hfac = 1.0;
      } else {
        kind->gradient(m, el, d->qm, g, with_jac ? H : NULL);
      }
      for (int i = 0; i < n; i++) {
        r[el->qidx[i]] += dt2 * g[i];
        scale = fmax(scale, fabs(dt2 * g[i]));
      }
      if (with_jac) {
        for (int i = 0; i < n * n; i++) {
          jac_add(jac, map[i], dt2 * hfac * H[i]);
        }
      }
    }
    if (kind->force) {
      memset(Fq, 0, (size_t)(n * n) * sizeof(double));
      memset(Fv, 0, (size_t)(n * n) * sizeof(double));
      kind->force(m, el, d->qm, d->vm, tf, g, with_jac ? Fq : NULL, with_jac ? Fv : NULL);
      for (int i = 0; i < n; i++) {
        r[el->qidx[i]] -= dt2 * g[i];
        scale = fmax(scale, fabs(dt2 * g[i]));
      }
      if (with_jac) {
        for (int i = 0; i < n * n; i++) {
          jac_add(jac, map[i], -dt2 * (s->alpha * Fq[i] + s->cv * Fv[i]));
        }
      }
    }
    if (kind->constraint) {
      scale = fmax(scale, elem_constraint(m, d, s, el, k, q0, q1, tm, t0 + dt, with_jac, g, H, Ge));
    }
  }
  /* quadratic constraint rows: G(q*)^T mu into r_q, g(q1) into r_g */
  double grad[3 * MBS_CON_MAXNODE];
  for (int row = 0; row < m->nrow; row++) {
    const mbsConRow *c = &m->con[row];
    const int *gmap = mbs_system_con_gmap(d->sys, row);
    double mu = d->mu[row];
    mbs_con_eval(c, d->qm, grad);
    for (int k = 0; k < c->nnode; k++) {
      for (int j = 0; j < 3; j++) {
        double f = mu * grad[3 * k + j];
        r[3 * c->node[k] + j] += f;
        scale = fmax(scale, fabs(f));
        if (with_jac) {
          jac_add(jac, gmap[6 * k + 3 + j], grad[3 * k + j]);
        }
      }
    }
    r[nq + row] = mbs_con_eval(c, q1, with_jac ? grad : NULL);
    if (with_jac) {
      for (int k = 0; k < c->nnode; k++) {
        for (int j = 0; j < 3; j++) {
          jac_add(jac, gmap[6 * k + j], grad[3 * k + j]);
        }
      }
      /* d(G(q*)^T mu)/dq1 = alpha sum mu H (constant Hessians, multiples of I3) */
      for (int p = d->sys->con_hstart[row]; p < d->sys->con_hstart[row + 1]; p++) {
        for (int j = 0; j < 3; j++) {
          jac_add(jac, d->sys->con_hmap[3 * p + j], s->alpha * mu * d->sys->con_hcoef[p]);
        }
      }
    }
  }
  return scale;
}

double mbs_constraint_violation(const mbsModel *m, const double *q, double t, int *worst_row) {
  double worst = 0.0;
  int wr = -1;
  for (int r = 0; r < m->nrow; r++) {
    double g = fabs(mbs_con_eval(&m->con[r], q, NULL));
    if (!(g <= worst)) {
      worst = g;
      wr = r;
    }
  }
  double ge[MBS_ELEM_MAXCON];
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (!kind->constraint) {
      continue;
    }
    kind->constraint(m, el, q, t, ge, NULL);
    for (int c = 0; c < el->ncon; c++) {
      if (!(fabs(ge[c]) <= worst)) {
        worst = fabs(ge[c]);
        wr = el->con0 + c;
      }
    }
  }
  if (worst_row) {
    *worst_row = wr;
  }
  return worst;
}

void mbs_constraint_describe(const mbsModel *m, int r, char *buf, int n) {
  if (r < 0 || r >= m->ncon) {
    snprintf(buf, (size_t)n, "none");
    return;
  }
  if (r >= m->nrow) {
    for (int k = 0; k < m->nelem; k++) {
      const mbsElem *el = &m->elem[k];
      if (r >= el->con0 && r < el->con0 + el->ncon) {
        if (el->joint >= 0) {
          snprintf(buf, (size_t)n, "joint '%s' (%s, row %d)", m->joint_name[el->joint],
                   mbs_element_kind(el->kind)->name, r - el->con0 + 1);
        } else {
          snprintf(buf, (size_t)n, "%s constraint, row %d", mbs_element_kind(el->kind)->name,
                   r - el->con0 + 1);
        }
        return;
      }
    }
  }
  const mbsConRow *c = &m->con[r];
  if (c->joint >= 0) {
    snprintf(buf, (size_t)n, "joint '%s' (%s, row %d)", m->joint_name[c->joint],
             mbs_joint_type_word(m->joint_type[c->joint]), c->jrow + 1);
  } else {
    snprintf(buf, (size_t)n, "rigidity of body '%s'", m->body_name[c->body]);
  }
}

/* the per-step vectors of the scheme as increments from q0: qhat - q0, and the base of
 * v* = vbase + cv (q1 - qbase) */
static void prepare(const mbsModel *m, mbsData *d, const Scheme *s, double dt) {
  const double *q0 = d->q_prev, *v0 = d->v_prev;
  for (int i = 0; i < m->nq; i++) {
    if (s->genalpha) {
      /* Newmark predictor with the pseudo-acceleration a_n, and the alpha terms folded in:
       * dt^2 M qddot_{n+1} = cM M (q1 - qhat) */
      double pred = q0[i] + dt * v0[i] + dt * dt * (0.5 - s->beta) * d->aacc[i];
      d->qbase[i] = pred - q0[i];
      d->vbase[i] = v0[i] + dt * (1.0 - s->gamma) * d->aacc[i];
      double extra = dt * dt * (s->am * d->aacc[i] - s->af * d->acc[i]) / (1.0 - s->af);
      d->qhat[i] = pred - q0[i] - extra / s->cM;
    } else {
      d->qhat[i] = dt * v0[i];
      d->qbase[i] = 0.0;
      d->vbase[i] = 0.0;
    }
  }
}

void mbs_solver_start(const mbsModel *m, mbsData *d) {
  if (m->integrator != MBS_INTEGRATOR_GENALPHA || d->acc_valid) {
    return;
  }
  /* consistent accelerations from the index-1 equations (consistent.c) */
  mbsError aerr;
  if (mbs_solver_consistent(m, d, &aerr) == MBS_OK) {
    memcpy(d->acc, d->acc_rec, (size_t)m->nq * sizeof(double));
    memcpy(d->aacc, d->acc_rec, (size_t)m->nq * sizeof(double));
    for (int i = 0; i < m->ncon; i++) {
      d->mu[i] = d->lambda_rec[i] * m->dt * m->dt;
    }
    d->acc_valid = 1;
  } else {
    /* singular index-1 system: start from rest accelerations (first order start) */
    memset(d->acc, 0, (size_t)m->nq * sizeof(double));
    memset(d->aacc, 0, (size_t)m->nq * sizeof(double));
    d->acc_valid = 1;
  }
}

/* w times the work over the step of the non-potential forces at (qf, vf, tf) and of the
 * constraint elements' forces -G^T lambda (G at (qf, tc), lambda = lam_fac mu), with the
 * step's increment dq, into *work (external) and *diss (dampers) */
static void step_work(const mbsModel *m, mbsData *d, const Scheme *s, const double *qf,
                      const double *vf, double tf, double tc, const double *mu, double lam_fac,
                      double w, double *work, double *diss) {
  double *f = d->ework + 4 * d->sys->eblock, ge[MBS_ELEM_MAXCON], *Ge = d->ework;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (kind->force) {
      kind->force(m, el, qf, vf, tf, f, NULL, NULL);
      double wk = 0.0;
      for (int i = 0; i < el->nq; i++) {
        wk += f[i] * d->dq[el->qidx[i]];
      }
      if (kind->dissipative) {
        *diss -= w * wk;
      } else {
        *work += w * wk;
      }
    }
    /* zero for scleronomic rows (G dq = g(q1) - g(q0) = 0), the work of the drive for
     * rheonomic ones */
    if (kind->constraint) {
      if (s->discrete && kind->constraint_discrete_gradient) {
        kind->constraint_discrete_gradient(m, el, d->q_prev, d->q, tc, mu + el->con0, Ge, NULL);
      } else {
        kind->constraint(m, el, qf, tc, ge, Ge);
      }
      for (int c = 0; c < el->ncon; c++) {
        double lambda = mu[el->con0 + c] * lam_fac, gdq = 0.0;
        for (int i = 0; i < el->nq; i++) {
          gdq += Ge[c * el->nq + i] * d->dq[el->qidx[i]];
        }
        *work -= w * lambda * gdq;
      }
    }
  }
}

/* 1 if a prescribed motion's profile has a kink or a jump in (t0, t1] */
static int drive_kink(const mbsModel *m, double t0, double t1) {
  double tol = 1e-9 * (t1 - t0);
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->kind == MBS_ELEM_DRIVE && mbs_elem_profile_kink_in(m, el->iparam[2], t0 + tol, t1 + tol)) {
      return 1;
    }
  }
  return 0;
}

mbsStatus mbs_solver_step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  Scheme s;
  if (!scheme_of(m, dt, &s)) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "internal error: integrator %d is not a time-stepping scheme",
                         (int)m->integrator);
  }
  int nq = m->nq;
  double tol = m->newton_tolerance;
  double t0 = d->t;
  if (s.genalpha) {
    mbs_solver_start(m, d);
  }
  memcpy(d->q_prev, d->q, (size_t)nq * sizeof(double));
  memcpy(d->v_prev, d->v, (size_t)nq * sizeof(double));
  memcpy(d->mu_prev, d->mu, (size_t)m->ncon * sizeof(double));
  prepare(m, d, &s, dt);
  /* predictor: constant velocity (genalpha: Newmark); multipliers of the last step */
  for (int i = 0; i < nq; i++) {
    d->dq[i] = s.genalpha ? d->qbase[i] : dt * d->v_prev[i];
    d->q[i] = d->q_prev[i] + d->dq[i];
  }
  double mmax = 0.0;
  for (int e = 0; e < m->nmass; e++) {
    mmax = fmax(mmax, fabs(m->mass_val[e]));
  }
  /* every step starts with a fresh factorization (see the top of the file) */
  int reuse = 0;
  /* after a record, also fresh pivots: the factorization then depends on this step alone,
   * not on the history of pivot orders (KLU), so a restart from the record is bit-exact */
  int repivot = d->refactor_next;
  d->refactor_next = 0;
  int fresh_only = !m->newton_reuse;
  double last_dq = INFINITY, prev_dq = INFINITY;
  int it = 0, stale = 0, since_factor = 0, restarted = 0;
  mbsStatus st = MBS_OK;
  char why[1200] = "";
  for (;;) {
    int refactor = fresh_only || !reuse;
    double scale = assemble(m, d, &s, dt, t0, refactor);
    double qn = norm_inf(d->q, nq);
    double rq = norm_inf(d->res, nq), rg = norm_inf(d->res + nq, m->ncon);
    d->last_residual = fmax(rq, rg);
    if (!isfinite(rq) || !isfinite(rg)) {
      snprintf(why, sizeof(why), "the residual is not finite (the motion blew up)");
      st = MBS_ERR_SOLVER;
      break;
    }
    /* converged after a fresh factorization: residual small relative to its terms
     * (floored at round-off) and the last increment small; Newton converges
     * quadratically, so the error left is far below the increment. With a stale
     * factorization the contraction is only linear: then the residual itself must reach
     * round-off (em's energy balance holds only as well as the equations are solved). */
    double rq_floor = 64.0 * DBL_EPSILON * fmax(scale, s.cM * mmax * norm_inf(d->dq, nq));
    double rg_floor = 64.0 * DBL_EPSILON * (1.0 + qn) * (1.0 + qn);
    int converged;
    if (stale) {
      /* 4 eps, not 64: a chord iteration's residual keeps its sign from step to step, and
       * 64 eps left a linear drift of the angular momentum (1.5e-12 over 1e5 steps of a
       * heavy top, tests/integration/test_conservation.py); 4 eps leaves round-off */
      converged = rq <= rq_floor / 16.0 && rg <= rg_floor / 16.0 && last_dq <= tol * (1.0 + qn);
    } else {
      converged = rq <= fmax(tol * scale, rq_floor) && rg <= fmax(tol, rg_floor) &&
                  last_dq <= tol * (1.0 + qn);
    }
    if (it > 0 && converged) {
      break;
    }
    if (it >= m->newton_max_iterations) {
      if (!fresh_only && !restarted) {
        /* a stale factorization may be what failed: redo the step with full Newton */
        restarted = 1;
        fresh_only = 1;
        memcpy(d->q, d->q_prev, (size_t)nq * sizeof(double));
        memcpy(d->mu, d->mu_prev, (size_t)m->ncon * sizeof(double));
        for (int i = 0; i < nq; i++) {
          d->dq[i] = s.genalpha ? d->qbase[i] : dt * d->v_prev[i];
          d->q[i] = d->q_prev[i] + d->dq[i];
        }
        d->newton_total += it;
        it = 0;
        last_dq = prev_dq = INFINITY;
        continue;
      }
      snprintf(why, sizeof(why),
               "Newton did not converge in %d iterations (residual %.3e, constraint "
               "residual %.3e)",
               it, rq, rg);
      st = MBS_ERR_SOLVER;
      break;
    }
    /* Newton update */
    if (refactor) {
      st = mbs_linsolve_factor(d->ls, d->jac, repivot, err);
      repivot = 0;
      d->factorizations++;
      d->factor_valid = (st == MBS_OK);
      since_factor = 0;
      if (st != MBS_OK) {
        snprintf(why, sizeof(why), "%s", err ? err->msg : "linear solver failure");
        break;
      }
    }
    st = mbs_linsolve_solve(d->ls, d->jac, d->res, d->dx, err);
    d->solves++;
    if (st != MBS_OK) {
      snprintf(why, sizeof(why), "%s", err ? err->msg : "linear solver failure");
      break;
    }
    for (int i = 0; i < nq; i++) {
      d->dq[i] -= d->dx[i];
      d->q[i] = d->q_prev[i] + d->dq[i];
    }
    for (int i = 0; i < m->ncon; i++) {
      d->mu[i] -= d->dx[nq + i];
    }
    prev_dq = it > 0 ? last_dq : INFINITY;
    last_dq = norm_inf(d->dx, nq);
    stale = !refactor || since_factor > 0;
    since_factor++;
    it++;
    /* modified Newton: keep the factorization while it contracts by at least 4 */
    {
      double floor = 64.0 * DBL_EPSILON * (1.0 + norm_inf(d->q, nq));
      int slow = prev_dq < INFINITY && last_dq > 0.25 * prev_dq && last_dq > floor;
      reuse = !fresh_only && d->factor_valid && !slow && since_factor < 12;
    }
  }
  d->iterations = it;
  d->newton_total += it;
  if (st != MBS_OK) {
    int wr;
    double viol = mbs_constraint_violation(m, d->q, t0 + dt, &wr);
    char wdesc[256];
    mbs_constraint_describe(m, wr, wdesc, sizeof(wdesc));
    mbs_error_set(err, st, NULL, 0, 0,
                  "%s at t = %.9g (step %ld, dt = %.3g, %s); worst constraint: %s with |g| = %.3e",
                  why, t0, d->step + 1, dt, mbs_integrator_word(m->integrator), wdesc, viol);
    memcpy(d->q, d->q_prev, (size_t)nq * sizeof(double));
    memcpy(d->v, d->v_prev, (size_t)nq * sizeof(double));
    memcpy(d->mu, d->mu_prev, (size_t)m->ncon * sizeof(double));
    d->factor_valid = 0;
    return st;
  }
  /* velocities (and genalpha accelerations) at the end of the step */
  if (s.genalpha) {
    for (int i = 0; i < nq; i++) {
      double anew = (d->dq[i] - d->qbase[i]) / (s.beta * dt * dt);
      double qdd = ((1.0 - s.am) * anew + s.am * d->aacc[i] - s.af * d->acc[i]) / (1.0 - s.af);
      d->v[i] = d->vbase[i] + dt * s.gamma * anew;
      d->aacc[i] = anew;
      d->acc[i] = qdd;
    }
  } else {
    for (int i = 0; i < nq; i++) {
      d->v[i] = s.c1 * d->dq[i] / dt - (s.c1 - 1.0) * d->v_prev[i];
    }
  }
  /* the work of non-potential forces and drives over the step, as the scheme balances
   * it: em/midpoint/euler F* . (q1 - q0) at their evaluation state (exact for em); genalpha
   * evaluates forces at the step's end only, and F(t1) . dq is first order (a window load's
   * work 0.49503 J for 0.5 J of kinetic energy gained): the trapezoidal rule over the
   * step's two ends is second order and exact for a constant load */
  if (s.genalpha) {
    double ldt = d->last_dt > 0.0 ? d->last_dt : m->dt;
    step_work(m, d, &s, d->q_prev, d->v_prev, t0 + 1e-9 * dt, t0, d->mu_prev, 1.0 / (ldt * ldt),
              0.5, &d->external_work, &d->dissipated);
    step_work(m, d, &s, d->q, d->v, t0 + s.tf, t0 + dt, d->mu, 1.0 / (dt * dt), 0.5,
              &d->external_work, &d->dissipated);
  } else {
    step_work(m, d, &s, d->qm, d->vm, t0 + s.tf, t0 + s.alpha * dt, d->mu, 1.0 / (dt * dt), 1.0,
              &d->external_work, &d->dissipated);
  }
  d->t = t0 + dt;
  d->last_dt = dt;
  d->step++;
  d->max_violation = fmax(d->max_violation, mbs_constraint_violation(m, d->q, d->t, NULL));
  /* a kink of a prescribed motion calls for a velocity jump that no scheme makes by
   * itself: em and midpoint keep (v_n + v_{n+1})/2 = dq/dt, so the jump alternates from
   * step to step forever (+-3.1 rad/s after a ramp, kN bearing forces); genalpha keeps
   * 7.9 J of kinetic energy in a slider-crank locked after its ramp. After a step across
   * such a kink the velocities are projected onto the new motion (the drive's impulse),
   * and the kinetic energy that changes is counted as the drive's work. A failed
   * projection (a singular constraint Jacobian) leaves v as it is: the record's
   * /constraints/velocity_violation then says so. */
  if (drive_kink(m, t0, d->t)) {
    mbsError perr;
    (void)mbs_solver_project_velocity(m, d, &perr);
  }
  return MBS_OK;
}
