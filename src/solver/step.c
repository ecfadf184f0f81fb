/* step.c: one Newton driver for the implicit one-step schemes em, midpoint and euler.
 *
 * With v eliminated through q_{n+1} - q_n = dt/2 (v_n + v_{n+1}) (seed 000 eq. 57_1; euler:
 * q_{n+1} - q_n = dt v_{n+1}), the unknowns are q1 = q_{n+1} and mu = dt^2 lambda:
 *     r_q = cM M (q1 - q0 - dt v0) + dt^2 (P - F) + G(q*)^T mu = 0
 *     r_g = g(q1) = 0
 * with cM = 2, q* = (q0 + q1)/2 for the midpoint schemes and cM = 1, q* = q1 for euler.
 * P is the discrete gradient of V for em (seed 000 eq. 57_2), the gradient at q* otherwise;
 * F the non-potential force at (q*, (q1 - q0)/dt, t*) (eq. 61 for torques). Multiplying
 * the momentum balance by dt^2 and solving for dt^2 lambda is the row/column scaling that
 * removes the O(dt^-3) ill-conditioning of the index-3 iteration matrix. All constraints
 * are at most quadratic, so G((q0 + q1)/2) is their exact discrete gradient:
 * G(q*) (q1 - q0) = g(q1) - g(q0), and constraint forces do no work over a step. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/solver.h"
#include "solver/linsolve.h"
#include "util/vec3.h"

typedef struct {
  double cM;    /* mass factor */
  double alpha; /* q* = q0 + alpha (q1 - q0) */
  int discrete; /* use discrete gradients */
} Scheme;

static Scheme scheme_of(mbsIntegrator integ) {
  Scheme s = {2.0, 0.5, 0};
  if (integ == MBS_INTEGRATOR_EM) {
    s.discrete = 1;
  } else if (integ == MBS_INTEGRATOR_EULER) {
    s.cM = 1.0;
    s.alpha = 1.0;
  }
  return s;
}

static double norm_inf(const double *x, int n) {
  double r = 0.0;
  for (int i = 0; i < n; i++) {
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
  const int *map = m->elem_jmap + k * MBS_ELEM_MAXQ * MBS_ELEM_MAXQ;
  const int *gmap = m->elem_gmap + k * MBS_ELEM_MAXCON * MBS_ELEM_MAXQ * 2;
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
        jac_add(jac, gmap[(c * MBS_ELEM_MAXQ + i) * 2 + 1], Ge[c * n + i]);
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
        jac_add(jac, gmap[(c * MBS_ELEM_MAXQ + i) * 2], Ge[c * n + i]);
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
  double dt2 = dt * dt, tm = t0 + s->alpha * dt;
  double scale = 0.0;
  memset(r, 0, (size_t)m->nsys * sizeof(double));
  if (with_jac) {
    memset(jac, 0, (size_t)m->jac_nnz * sizeof(double));
  }
  /* evaluation state of forces and constraint gradients */
  for (int i = 0; i < nq; i++) {
    d->qm[i] = q0[i] + s->alpha * (q1[i] - q0[i]);
    d->vm[i] = (q1[i] - q0[i]) / dt;
  }
  /* inertia: cM M (q1 - q0 - dt v0) */
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    double w = s->cM * m->mass_val[e];
    for (int c = 0; c < 3; c++) {
      double db = q1[3 * b + c] - q0[3 * b + c] - dt * v0[3 * b + c];
      r[3 * a + c] += w * db;
      if (a != b) {
        double da = q1[3 * a + c] - q0[3 * a + c] - dt * v0[3 * a + c];
        r[3 * b + c] += w * da;
      }
      if (with_jac) {
        jac_add(jac, m->mass_map[6 * e + c], w);
        jac_add(jac, m->mass_map[6 * e + 3 + c], w);
      }
    }
  }
  scale = norm_inf(r, nq);
  /* elements: potential and non-potential forces */
  double g[MBS_ELEM_MAXQ];
  double *H = d->ework, *Fq = d->ework + MBS_ELEM_MAXQ * MBS_ELEM_MAXQ;
  double *Fv = d->ework + 2 * MBS_ELEM_MAXQ * MBS_ELEM_MAXQ;
  double *Ge = d->ework + 3 * MBS_ELEM_MAXQ * MBS_ELEM_MAXQ;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    const int *map = m->elem_jmap + k * MBS_ELEM_MAXQ * MBS_ELEM_MAXQ;
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
      kind->force(m, el, d->qm, d->vm, tm, g, with_jac ? Fq : NULL, with_jac ? Fv : NULL);
      for (int i = 0; i < n; i++) {
        r[el->qidx[i]] -= dt2 * g[i];
        scale = fmax(scale, fabs(dt2 * g[i]));
      }
      if (with_jac) {
        for (int i = 0; i < n * n; i++) {
          jac_add(jac, map[i], -dt2 * (s->alpha * Fq[i] + Fv[i] / dt));
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
    const int *gmap = m->con_gmap + row * MBS_CON_MAXNODE * 6;
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
      for (int p = m->con_hstart[row]; p < m->con_hstart[row + 1]; p++) {
        for (int j = 0; j < 3; j++) {
          jac_add(jac, m->con_hmap[3 * p + j], s->alpha * mu * m->con_hcoef[p]);
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
             mbs_joint_type_word(m->joint_type[c->joint]), r - m->joint_con[c->joint] + 1);
  } else {
    snprintf(buf, (size_t)n, "rigidity of body '%s'", m->body_name[c->body]);
  }
}

mbsStatus mbs_solver_step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  Scheme s = scheme_of(m->integrator);
  int nq = m->nq;
  double tol = m->newton_tolerance;
  double t0 = d->t;
  memcpy(d->q_prev, d->q, (size_t)nq * sizeof(double));
  memcpy(d->v_prev, d->v, (size_t)nq * sizeof(double));
  /* predictor: constant velocity; multipliers of the last step */
  for (int i = 0; i < nq; i++) {
    d->q[i] = d->q_prev[i] + dt * d->v_prev[i];
  }
  double mmax = 0.0;
  for (int e = 0; e < m->nmass; e++) {
    mmax = fmax(mmax, fabs(m->mass_val[e]));
  }
  double last_dq = INFINITY;
  int it = 0;
  mbsStatus st = MBS_OK;
  char why[1200] = "";
  for (;;) {
    double scale = assemble(m, d, &s, dt, t0, 1);
    double qn = norm_inf(d->q, nq);
    double rq = norm_inf(d->res, nq), rg = norm_inf(d->res + nq, m->ncon);
    d->last_residual = fmax(rq, rg);
    if (!isfinite(rq) || !isfinite(rg)) {
      snprintf(why, sizeof(why), "the residual is not finite");
      st = MBS_ERR_SOLVER;
      break;
    }
    /* converged: residual small relative to its terms (floored at round-off) and the
     * last increment small, so quadratic convergence put the error far below tol */
    double rq_tol = fmax(tol * scale, 64.0 * DBL_EPSILON * s.cM * mmax * (1.0 + qn));
    double rg_tol = fmax(tol, 64.0 * DBL_EPSILON * (1.0 + qn) * (1.0 + qn));
    if (it > 0 && rq <= rq_tol && rg <= rg_tol && last_dq <= tol * (1.0 + qn)) {
      break;
    }
    if (it >= m->newton_max_iterations) {
      snprintf(why, sizeof(why),
               "Newton did not converge in %d iterations (residual %.3e, constraint "
               "residual %.3e)",
               it, rq, rg);
      st = MBS_ERR_SOLVER;
      break;
    }
    /* Newton update */
    st = mbs_linsolve_factor(d->ls, d->jac, err);
    d->factorizations++;
    if (st == MBS_OK) {
      st = mbs_linsolve_solve(d->ls, d->jac, d->res, d->dx, err);
    }
    if (st != MBS_OK) {
      snprintf(why, sizeof(why), "%s", err ? err->msg : "linear solver failure");
      break;
    }
    for (int i = 0; i < nq; i++) {
      d->q[i] -= d->dx[i];
    }
    for (int i = 0; i < m->ncon; i++) {
      d->mu[i] -= d->dx[nq + i];
    }
    last_dq = norm_inf(d->dx, nq);
    it++;
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
    return st;
  }
  /* velocities at the end of the step, and the work of non-potential forces F* . dq */
  for (int i = 0; i < nq; i++) {
    d->v[i] = s.cM * (d->q[i] - d->q_prev[i]) / dt - (s.cM - 1.0) * d->v_prev[i];
  }
  double f[MBS_ELEM_MAXQ];
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (!kind->force) {
      continue;
    }
    kind->force(m, el, d->qm, d->vm, t0 + s.alpha * dt, f, NULL, NULL);
    double work = 0.0;
    for (int i = 0; i < el->nq; i++) {
      work += f[i] * (d->q[el->qidx[i]] - d->q_prev[el->qidx[i]]);
    }
    if (kind->dissipative) {
      d->dissipated -= work;
    } else {
      d->external_work += work;
    }
  }
  d->t = t0 + dt;
  d->last_dt = dt;
  d->step++;
  d->max_violation = fmax(d->max_violation, mbs_constraint_violation(m, d->q, d->t, NULL));
  return MBS_OK;
}
