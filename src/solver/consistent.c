/* consistent.c: the state of a record made consistent with the constraints, and the
 * reactions that belong to it.
 *
 * The one-step schemes leave velocities that satisfy the velocity constraints
 * G(q) v + dg/dt = 0 only approximately: em and midpoint fix (v_n + v_{n+1})/2 through
 * q_{n+1} - q_n, so v_{n+1} = 2 (q_{n+1} - q_n)/dt - v_n carries an undamped alternating
 * mode (O(dt^2) for smooth motion; after a kink of a prescribed motion it never dies out),
 * euler's v = dq/dt is off by O(dt). At every record the velocities are projected, in the
 * metric of the mass matrix, onto the constraint manifold's tangent space,
 *     [M G^T; G 0] [dv; nu] = [0; -(G v + g_t)],
 * and the multipliers come from the index-1 equations of the projected state,
 *     [M G^T; G 0] [a; lambda] = [F(q, v, t) - grad V(q); -gdd(q, v, t)],
 * with gdd = d2/ds2 g(q + s v, t + s) the curvature of the constraints along the motion. The
 * reactions written are those of this lambda: they belong to the recorded time (not to a
 * step's midpoint), are as accurate as the recorded state (second order), and exist at
 * t = 0. Both systems share one KKT matrix: one factorization per record. The projection is
 * an observation: the integrator's own velocities go on unchanged (so em keeps conserving
 * energy, and runs with different output.every take identical steps); they are written as
 * /state/scheme_velocity, from which a restart continues. The projections are linear: one
 * factorization and one solve (repeated while it gains) through the Newton driver's
 * counted linear-solve helpers (newton.c). The initial projection's solves are not counted
 * (they come before the first record's statistics). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/solver.h"
#include "solver/integrator.h"
#include "solver/schur.h"
#include "util/linsolve.h"
#include "solver/system.h"
#include "util/vec3.h"

static void jac_put(double *jac, int slot, double val) {
  if (slot >= 0) {
    jac[slot] += val;
  }
}

/* the slot of entry i of the walk's current row in the system: G (transposed = 0) or G^T
 * (1). The walk lists a quadratic row's gradient node by node (entry 3k + c), a constraint
 * element's row by its coordinates (entry i of row erow), as the maps do (system.h). */
static int row_gslot(const mbsSystem *sys, const mbsRowIter *it, int i, int transposed) {
  if (it->elem < 0) {
    return mbs_system_con_gmap(sys, it->row)[6 * (i / 3) + 3 * transposed + i % 3];
  }
  return mbs_system_elem_gmap(sys, it->elem)[(it->erow * it->nz + i) * 2 + transposed];
}

/* the first vector node of the beams (they follow the bodies' nodes), m->nnode without */
static int first_beam_node(const mbsModel *m) {
  int n = m->nnode;
  for (int k = 0; k < m->nbeam; k++) {
    n = m->beam[k].node0 < n ? m->beam[k].node0 : n;
  }
  return n;
}

/* the KKT matrix [M G^T; G 0] at (q, t) into d->kkt_jac; the beams' mass entries times
 * beam_weight (the assembly's metric; 1 elsewhere) */
static void kkt_fill(const mbsModel *m, mbsData *d, const double *q, double t, double beam_weight) {
  double *jac = d->kkt_jac;
  int nb0 = first_beam_node(m);
  memset(jac, 0, (size_t)d->sys->nnz * sizeof(double));
  for (int e = 0; e < m->nmass; e++) {
    double w = m->mass_val[e] * (m->mass_a[e] >= nb0 ? beam_weight : 1.0);
    for (int c = 0; c < 3; c++) {
      jac_put(jac, d->sys->mass_map[6 * e + c], w);
      jac_put(jac, d->sys->mass_map[6 * e + 3 + c], w);
    }
  }
  /* G and G^T, row by row (d->ework holds an element's g and G: mbs_rows_work_size) */
  mbsRowIter it;
  for (mbs_rows_begin(&it, m, q, t, 1, d->ework); mbs_rows_next(&it);) {
    for (int i = 0; i < it.nz; i++) {
      jac_put(jac, row_gslot(d->sys, &it, i, 0), it.val[i]);
      jac_put(jac, row_gslot(d->sys, &it, i, 1), it.val[i]);
    }
  }
  mbs_released_rows_diag(m, d, jac);
}

/* the KKT matrix at (q, t) factored in its own storage (d->kkt_ls, d->kkt_jac), never the
 * Newton matrix's: a record leaves the integrator's factorization as it was. The pivots are
 * those pinned at the start of the run (mbs_solver_pin: a klu_refactor, no pivot search, no
 * allocation) while they stay well conditioned, else fresh ones: either way a function of
 * this matrix alone, so a record's reactions do not depend on the records before it (a
 * restart writes the same bits). Counted with the Newton driver's factorizations. */
static mbsStatus kkt_factor_weighted(const mbsModel *m, mbsData *d, const double *q, double t,
                                     double beam_weight, mbsError *err) {
  kkt_fill(m, d, q, t, beam_weight);
  d->factorizations++;
  d->schur_factored = 0;
  return mbs_linsolve_factor(d->kkt_ls, d->kkt_jac, 1, err);
}

/* a solve with the last KKT factorization (the Schur complement's or the matrix's),
 * counted with the Newton driver's */
static mbsStatus kkt_solve(const mbsModel *m, mbsData *d, const double *b, double *x,
                           mbsError *err) {
  d->solves++;
  if (d->schur_factored) {
    return mbs_schur_solve(d->schur, m, b, x, err);
  }
  return mbs_linsolve_solve(d->kkt_ls, d->kkt_jac, b, x, err);
}

mbsStatus mbs_solver_pin(const mbsModel *m, mbsData *d, mbsError *err) {
  if (!mbs_integrator_policy(m->integrator)->pin_pivots || m->ncon == 0) {
    return MBS_OK;
  }
  /* a singular matrix pins nothing: every factorization then pivots afresh, and the first
   * record reports the singular KKT matrix where it is */
  kkt_fill(m, d, d->q, d->t, 1.0);
  mbsError perr;
  mbsStatus st = mbs_linsolve_pin(d->kkt_ls, d->kkt_jac, &perr);
  if (st == MBS_OK) {
    st = mbs_linsolve_pin(d->ls, d->kkt_jac, &perr);
  }
  if (st == MBS_ERR_NOMEM) {
    return mbs_error_set(err, st, NULL, 0, 0, "%s", perr.msg);
  }
  return MBS_OK;
}

static mbsStatus kkt_factor(const mbsModel *m, mbsData *d, const double *q, double t,
                            mbsError *err) {
  return kkt_factor_weighted(m, d, q, t, 1.0, err);
}

/* a record's KKT systems at (q, t) factored for the solves that follow: through the Schur
 * complement of the constant mass matrix where the model suits it (schur.c: a Cholesky of
 * S = G M^-1 G^T, ncon x ncon, instead of an LU of the KKT matrix on the whole Newton
 * pattern), else, or when S is not positive definite, the KKT matrix itself. Either way
 * a function of this configuration alone. Only the records' observation takes this path:
 * what changes the integrator's state (the initial velocities, a projection after a
 * kink, a capture) keeps the KKT matrix, so its steps are those of before. */
static mbsStatus record_factor(const mbsModel *m, mbsData *d, const double *q, double t,
                               mbsError *err) {
  if (d->schur_state == 0) {
    mbsError serr;
    memset(&serr, 0, sizeof(serr));
    /* (a caller that set the state back to 0 asks for a fresh one: tests/test_schur.c) */
    mbs_schur_destroy(d->schur);
    d->schur = mbs_schur_create(m, d, q, t, &serr);
    if (!d->schur && serr.status == MBS_ERR_NOMEM) {
      *err = serr;
      return serr.status;
    }
    d->schur_state = d->schur ? 1 : -1;
  }
  if (d->schur_state > 0) {
    mbsError serr;
    if (mbs_schur_factor(d->schur, m, d, q, t, &serr) == MBS_OK) {
      d->factorizations++;
      d->schur_factored = 1;
      return MBS_OK;
    }
  }
  return kkt_factor_weighted(m, d, q, t, 1.0, err);
}

double mbs_velocity_residual(const mbsModel *m, mbsData *d, const double *q, const double *v,
                             double t, double *r) {
  double gt[MBS_ELEM_MAXCON], gdd[MBS_ELEM_MAXCON], worst = 0.0;
  mbsRowIter it;
  for (mbs_rows_begin(&it, m, q, t, 1, d->ework); mbs_rows_next(&it);) {
    double s = 0.0;
    if (it.elem < 0) {
      /* a quadratic row, node by node: entries 3k .. 3k+2 are node k's */
      for (int i = 0; i < it.nz; i += 3) {
        s += vdot(it.val + i, v + it.idx[i]);
      }
    } else {
      if (it.erow == 0) {
        /* the element's rates g_t, once for all its rows */
        const mbsElem *el = &m->elem[it.elem];
        const mbsElementKindTable *kind = mbs_element_kind(el->kind);
        memset(gt, 0, sizeof(gt));
        if (kind->constraint_rates) {
          kind->constraint_rates(m, el, q, v, t, gt, gdd);
        }
      }
      s = gt[it.erow];
      for (int i = 0; i < it.nz; i++) {
        s += it.val[i] * v[it.idx[i]];
      }
    }
    if (r) {
      r[it.row] = s;
    }
    worst = fmax(worst, fabs(s));
  }
  return worst;
}

/* v <- v + dv with [M G^T; G 0] [dv; nu] = [0; -(G v + g_t)] on the factored KKT matrix;
 * repeated while it gains (round-off of one solve on a badly scaled system); returns the
 * residual left */
/* G v + g_t at the factored configuration: from the Schur complement's G when the last
 * factorization was its own (no walk over the rows) */
static double factored_residual(const mbsModel *m, mbsData *d, const double *q, const double *v,
                                double t, double *r) {
  if (d->schur_factored) {
    return mbs_schur_velocity_residual(d->schur, m, q, v, t, r);
  }
  return mbs_velocity_residual(m, d, q, v, t, r);
}

static mbsStatus project(const mbsModel *m, mbsData *d, const double *q, double *v, double t,
                         double *left, mbsError *err) {
  int nq = m->nq;
  double *rhs = d->res, *x = d->dx;
  double r = factored_residual(m, d, q, v, t, rhs + nq);
  /* round-off of G v: eps |G| |v| with |G| ~ |q| for the quadratic rows */
  double floor = 8.0 * DBL_EPSILON;
  for (int i = 0; i < nq; i++) {
    floor = fmax(floor, 8.0 * DBL_EPSILON * fabs(v[i]) * (1.0 + fabs(q[i])));
  }
  for (int pass = 0; pass < 3 && r > floor; pass++) {
    memset(rhs, 0, (size_t)nq * sizeof(double));
    for (int i = 0; i < m->ncon; i++) {
      rhs[nq + i] = -rhs[nq + i];
    }
    mbsStatus st = kkt_solve(m, d, rhs, x, err);
    if (st != MBS_OK) {
      return st;
    }
    for (int i = 0; i < nq; i++) {
      d->vtmp[i] = v[i] + x[i];
    }
    double rn = factored_residual(m, d, q, d->vtmp, t, rhs + nq);
    if (!(rn < r)) {
      break;
    }
    memcpy(v, d->vtmp, (size_t)nq * sizeof(double));
    r = rn;
  }
  *left = r;
  return MBS_OK;
}

/* 1/2 v . M v */
static double kinetic(const mbsModel *m, const double *v) {
  double T = 0.0;
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    double w = m->mass_val[e];
    T += (a == b ? 0.5 : 1.0) * w * vdot(v + 3 * a, v + 3 * b);
  }
  return T;
}

mbsStatus mbs_solver_project_velocity(const mbsModel *m, mbsData *d, mbsError *err) {
  if (m->ncon == 0) {
    return MBS_OK;
  }
  mbsStatus st = kkt_factor(m, d, d->q, d->t, err);
  if (st != MBS_OK) {
    return st;
  }
  double T0 = kinetic(m, d->v), left;
  st = project(m, d, d->q, d->v, d->t, &left, err);
  if (st == MBS_OK) {
    /* the impulse of the constraints that made the velocities follow the new motion: the
     * work of the drives (scleronomic rows do no work on the projected velocity) */
    d->external_work += kinetic(m, d->v) - T0;
  }
  return st;
}

mbsStatus mbs_solver_capture(const mbsModel *m, mbsData *d, mbsError *err) {
  mbsStatus st = kkt_factor(m, d, d->q, d->t, err);
  if (st != MBS_OK) {
    char why[sizeof(err->msg)];
    memcpy(why, err->msg, sizeof(why));
    return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0,
                         "a joint engaging at t = %.9g makes the constraint Jacobian singular "
                         "(it repeats constraints the model already has): %s",
                         d->t, why);
  }
  double T0 = kinetic(m, d->v), left, vmax = mbs_norm_inf(d->v, m->nq);
  st = project(m, d, d->q, d->v, d->t, &left, err);
  if (st != MBS_OK) {
    return st;
  }
  double qmax = mbs_norm_inf(d->q, m->nq);
  if (!(left <= 1e-8 * (1.0 + vmax) * (1.0 + qmax))) {
    return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0,
                         "the velocity jump of a joint engaging at t = %.9g leaves the velocity "
                         "constraints off by %.3g",
                         d->t, left);
  }
  double lost = T0 - kinetic(m, d->v);
  d->dissipated += lost;
  d->capture_dissipated += lost;
  return MBS_OK;
}

mbsStatus mbs_solver_consistent(const mbsModel *m, mbsData *d, mbsError *err) {
  /* an equilibrium (static): at rest by definition, with the multipliers of its own
   * solution (at t = 0 those static.c starts from: the index-1 ones of the initial
   * configuration at rest); what is left of G v + g_t (the rate of a prescribed motion) is
   * reported, not projected away */
  if (mbs_integrator_policy(m->integrator)->equilibrium) {
    memcpy(d->v_rec, d->v, (size_t)m->nq * sizeof(double));
    memset(d->acc_rec, 0, (size_t)m->nq * sizeof(double));
    d->velocity_violation = 0.0;
    if (m->ncon > 0) {
      memcpy(d->lambda_rec, d->lambda, (size_t)m->ncon * sizeof(double));
      d->velocity_violation = mbs_velocity_residual(m, d, d->q, d->v_rec, d->t, NULL);
    }
    return MBS_OK;
  }
  return mbs_consistent_index1(m, d, err);
}

mbsStatus mbs_consistent_index1(const mbsModel *m, mbsData *d, mbsError *err) {
  int nq = m->nq;
  const double *q = d->q;
  double t = d->t;
  memcpy(d->v_rec, d->v, (size_t)nq * sizeof(double));
  memset(d->lambda_rec, 0, (size_t)(m->ncon > 0 ? m->ncon : 1) * sizeof(double));
  d->velocity_violation = 0.0;
  /* without constraints the matrix is M alone: nothing to project, but the accelerations
   * (genalpha's start) still come from it */
  mbsStatus st = record_factor(m, d, q, t, err);
  if (st == MBS_OK && m->ncon > 0) {
    st = project(m, d, q, d->v_rec, t, &d->velocity_violation, err);
  }
  if (st != MBS_OK) {
    return st;
  }
  /* index-1 right-hand side at the projected state */
  const double *v = d->v_rec;
  double *r = d->res, *g = d->ework + 4 * d->sys->eblock;
  double gt[MBS_ELEM_MAXCON], gdd[MBS_ELEM_MAXCON];
  double *H = d->ework + d->sys->eblock, mu[MBS_ELEM_MAXCON];
  memset(r, 0, (size_t)d->sys->n * sizeof(double));
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (kind->gradient) {
      kind->gradient(m, el, q, g, NULL);
      for (int i = 0; i < el->nq; i++) {
        r[el->qidx[i]] -= g[i];
      }
    }
    if (kind->force) {
      kind->force(m, el, q, v, t, g, NULL, NULL);
      for (int i = 0; i < el->nq; i++) {
        r[el->qidx[i]] += g[i];
      }
    }
    if (!kind->constraint) {
      continue;
    }
    if (kind->constraint_rates) {
      kind->constraint_rates(m, el, q, v, t, gt, gdd);
    } else {
      /* time-independent rows: gdd = v^T (d2 g / dq2) v, row by row */
      for (int c = 0; c < el->ncon; c++) {
        gdd[c] = 0.0;
        if (!kind->constraint_hessian) {
          continue;
        }
        memset(mu, 0, sizeof(mu));
        mu[c] = 1.0;
        memset(H, 0, (size_t)(el->nq * el->nq) * sizeof(double));
        kind->constraint_hessian(m, el, q, t, mu, H);
        for (int i = 0; i < el->nq; i++) {
          for (int j = 0; j < el->nq; j++) {
            gdd[c] += v[el->qidx[i]] * H[i * el->nq + j] * v[el->qidx[j]];
          }
        }
      }
    }
    for (int c = 0; c < el->ncon; c++) {
      r[nq + el->con0 + c] = -gdd[c];
    }
  }
  /* quadratic rows: g'' = v^T H v with the constant Hessian blocks coef I3 */
  for (int row = 0; row < m->nrow; row++) {
    const mbsConRow *c = &m->con[row];
    double curv = 0.0;
    for (int p = d->sys->con_hstart[row]; p < d->sys->con_hstart[row + 1]; p++) {
      curv += d->sys->con_hcoef[p] *
              vdot(v + 3 * c->node[d->sys->con_hk[p]], v + 3 * c->node[d->sys->con_hl[p]]);
    }
    r[nq + row] = -curv;
  }
  st = kkt_solve(m, d, r, d->dx, err);
  if (st != MBS_OK) {
    return st;
  }
  memcpy(d->acc_rec, d->dx, (size_t)nq * sizeof(double));
  memcpy(d->lambda_rec, d->dx + nq, (size_t)m->ncon * sizeof(double));
  return MBS_OK;
}

/* the coefficients of joint j's first rate at q (rates are linear in v): coef[i] for the
 * joint's coordinates idx[i], n of them; vz (nq) is zero on entry and exit */
static int rate_row(const mbsModel *m, int j, const double *q, double *vz, int *idx,
                    double *coef) {
  const mbsElem *e = &m->joint_frame[j];
  int n = 0;
  for (int i = 0; i < e->nq; i++) {
    double x[3], xd[3];
    int ang[3];
    vz[e->qidx[i]] = 1.0;
    mbs_joint_coordinates(m, j, q, vz, x, xd, ang);
    vz[e->qidx[i]] = 0.0;
    if (isfinite(xd[0]) && xd[0] != 0.0) {
      idx[n] = e->qidx[i];
      coef[n++] = xd[0];
    }
  }
  return n;
}

/* solve the small dense system S x = b (n x n, row-major) by Gaussian elimination with
 * partial pivoting; 0, or -1 when S is singular */
static int small_solve(double *S, double *b, int n) {
  double smax = 0.0;
  for (int i = 0; i < n * n; i++) {
    smax = fmax(smax, fabs(S[i]));
  }
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++) {
      if (fabs(S[r * n + c]) > fabs(S[p * n + c])) {
        p = r;
      }
    }
    if (!(fabs(S[p * n + c]) > 1e-12 * smax)) {
      return -1;
    }
    for (int k = 0; k < n; k++) {
      double tmp = S[c * n + k];
      S[c * n + k] = S[p * n + k];
      S[p * n + k] = tmp;
    }
    double tb = b[c];
    b[c] = b[p];
    b[p] = tb;
    for (int r = c + 1; r < n; r++) {
      double f = S[r * n + c] / S[c * n + c];
      for (int k = c; k < n; k++) {
        S[r * n + k] -= f * S[c * n + k];
      }
      b[r] -= f * b[c];
    }
  }
  for (int c = n - 1; c >= 0; c--) {
    for (int k = c + 1; k < n; k++) {
      b[c] -= S[c * n + k] * b[k];
    }
    b[c] /= S[c * n + c];
  }
  return 0;
}

mbsStatus mbs_solver_initial_velocities(const mbsModel *m, mbsData *d, double *max_change,
                                        int *body, mbsError *err) {
  int nq = m->nq, ns = d->sys->n, nr = 0, mq = 1;
  *max_change = 0.0;
  *body = -1;
  for (int j = 0; j < m->njoint; j++) {
    nr += isfinite(m->joint_initial_rate[j]);
  }
  double *Y = calloc((size_t)(nr > 0 ? nr : 1) * (size_t)ns, sizeof(double));
  double *S = calloc((size_t)(nr > 0 ? nr * nr : 1), sizeof(double));
  double *rb = calloc((size_t)(nr > 0 ? nr : 1), sizeof(double));
  for (int j = 0; j < m->njoint; j++) {
    mq = m->joint_frame[j].nq > mq ? m->joint_frame[j].nq : mq;
  }
  double *coef = calloc((size_t)mq * (size_t)(nr > 0 ? nr : 1), sizeof(double));
  int *idx = calloc((size_t)mq * (size_t)(nr > 0 ? nr : 1), sizeof(int));
  int *nrow = calloc((size_t)(nr > 0 ? nr : 1), sizeof(int));
  int *joint = calloc((size_t)(nr > 0 ? nr : 1), sizeof(int));
  double *y0 = calloc((size_t)ns, sizeof(double));
  double *v0 = calloc((size_t)(nq > 0 ? nq : 1), sizeof(double));
  mbsStatus st = MBS_OK;
  if (!Y || !S || !rb || !coef || !idx || !nrow || !joint || !y0 || !v0) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto done;
  }
  memcpy(v0, d->v, (size_t)nq * sizeof(double));
  if (m->ncon + nr == 0) {
    goto done;
  }
  /* the rows of the given joint rates R v = r (linear in v at q0) */
  memset(d->vtmp, 0, (size_t)nq * sizeof(double));
  for (int j = 0, k = 0; j < m->njoint; j++) {
    if (!isfinite(m->joint_initial_rate[j])) {
      continue;
    }
    joint[k] = j;
    nrow[k] = rate_row(m, j, d->q, d->vtmp, idx + k * mq, coef + k * mq);
    double rv = 0.0;
    for (int i = 0; i < nrow[k]; i++) {
      rv += coef[k * mq + i] * v0[idx[k * mq + i]];
    }
    rb[k] = m->joint_initial_rate[j] - rv;
    k++;
  }
  /* min 1/2 |v - v0|_M^2 with G v + g_t = 0 and R v = r: the KKT system bordered by R,
   * solved through the factored [M G^T; G 0] and the small Schur complement R K^-1 R^T */
  st = kkt_factor(m, d, d->q, d->t, err);
  if (st != MBS_OK) {
    goto done;
  }
  double *rhs = d->res;
  memset(rhs, 0, (size_t)ns * sizeof(double));
  mbs_velocity_residual(m, d, d->q, v0, d->t, rhs + nq);
  for (int i = 0; i < m->ncon; i++) {
    rhs[nq + i] = -rhs[nq + i];
  }
  if ((st = kkt_solve(m, d, rhs, y0, err)) != MBS_OK) {
    goto done;
  }
  for (int k = 0; k < nr; k++) {
    memset(rhs, 0, (size_t)ns * sizeof(double));
    for (int i = 0; i < nrow[k]; i++) {
      rhs[idx[k * mq + i]] = coef[k * mq + i];
    }
    if ((st = kkt_solve(m, d, rhs, Y + (size_t)k * ns, err)) != MBS_OK) {
      goto done;
    }
  }
  for (int a = 0; a < nr; a++) {
    double ry = 0.0;
    for (int i = 0; i < nrow[a]; i++) {
      ry += coef[a * mq + i] * y0[idx[a * mq + i]];
    }
    rb[a] = ry - rb[a];
    for (int b = 0; b < nr; b++) {
      double s = 0.0;
      for (int i = 0; i < nrow[a]; i++) {
        s += coef[a * mq + i] * Y[(size_t)b * ns + idx[a * mq + i]];
      }
      S[a * nr + b] = s;
    }
  }
  if (nr > 0 && small_solve(S, rb, nr) != 0) {
    st = mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, m->joint_mark[joint[0]].line,
                       m->joint_mark[joint[0]].col,
                       "the initial_rate of the joints (the first: '%s') conflict with the "
                       "constraints or each other: the mechanism cannot move so; give fewer "
                       "initial rates",
                       m->joint_name[joint[0]]);
    goto done;
  }
  for (int i = 0; i < nq; i++) {
    double dv = y0[i];
    for (int k = 0; k < nr; k++) {
      dv -= Y[(size_t)k * ns + i] * rb[k];
    }
    d->v[i] = v0[i] + dv;
  }
  /* what it did: the residual left, and the largest change of a body's velocities */
  double left = mbs_velocity_residual(m, d, d->q, d->v, d->t, NULL);
  double vscale = 1.0;
  for (int i = 0; i < nq; i++) {
    vscale = fmax(vscale, fabs(d->v[i]));
  }
  if (!(left <= 1e-10 * vscale)) {
    st = mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, 0, 0,
                       "the initial velocities could not be projected onto the joints "
                       "(residual %.3g left)",
                       left);
    goto done;
  }
  /* over the frames that own coordinates: bodies and beam nodes */
  for (int f = 1; f < m->nattach; f++) {
    int n0 = m->attach_node[f];
    if (n0 < 0) {
      continue;
    }
    int nn = mbs_attach_nnode(m->attach_kind[f]);
    for (int i = 3 * n0; i < 3 * (n0 + nn); i++) {
      if (fabs(d->v[i] - v0[i]) > *max_change) {
        *max_change = fabs(d->v[i] - v0[i]);
        *body = f;
      }
    }
  }
  memcpy(d->v_rec, d->v, (size_t)nq * sizeof(double));
done:
  free(Y);
  free(S);
  free(rb);
  free(coef);
  free(idx);
  free(nrow);
  free(joint);
  free(y0);
  free(v0);
  return st;
}

/* the assembly moves rigid bodies and point masses: beam nodes weigh this many times their
 * mass in its metric, so a beam keeps its shape (moving one node alone would strain it) */
#define BEAM_WEIGHT 1e10

/* initial.assemble: the configuration nearest to d->q in the metric of the mass matrix that
 * satisfies the constraints, min 1/2 |q - q0|_M^2 with g(q, 0) = 0, by Gauss-Newton steps
 *     [M G^T; G 0] [dq; mu] = [0; -g(q)]
 * (each the least-squares correction of the linearized constraints, as the velocity
 * projection above for G v + g_t = 0), halved while the largest violation does not fall;
 * stops at round-off or when a step gains nothing */
/* the joint a global constraint row belongs to (a quadratic row's, or its element's), -1 for
 * a body's rigidity */
static int row_joint(const mbsModel *m, int row) {
  if (row < 0) {
    return -1;
  }
  if (row < m->nrow) {
    return m->con[row].joint;
  }
  int k = mbs_row_element(m, row, NULL);
  return k >= 0 ? m->elem[k].joint : -1;
}

/* the Gauss-Newton matrix of the assembly is singular at q: the joint row whose gradient
 * vanishes there (a distance joint whose points coincide has no direction), else the
 * factorization's message, at the joint's deck position */
static mbsStatus assemble_singular(const mbsModel *m, mbsData *d, const double *q, int it,
                                   double qmax, mbsError *err) {
  char what[256], why[600];
  snprintf(why, sizeof(why), "%.500s", err->msg);
  mbsRowIter ri;
  for (mbs_rows_begin(&ri, m, q, 0.0, 1, d->ework); mbs_rows_next(&ri);) {
    double gn = 0.0;
    for (int i = 0; i < ri.nz; i++) {
      gn = fmax(gn, fabs(ri.val[i]));
    }
    int j = row_joint(m, ri.row);
    if (j >= 0 && !(gn > 1e-12 * (1.0 + qmax))) {
      mbs_constraint_describe(m, ri.row, what, (int)sizeof(what));
      return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, m->joint_mark[j].line,
                           m->joint_mark[j].col,
                           "initial.assemble: %s has no gradient at the configuration reached "
                           "after %d Gauss-Newton steps (%s), so the assembly cannot move the "
                           "bodies onto it; place the bodies so that its points are apart",
                           what, it,
                           m->joint_type[j] == MBS_JOINT_DISTANCE
                               ? "its two points coincide: the direction of a distance joint "
                                 "is undefined there"
                               : "the row is stationary there");
    }
  }
  return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, 0, 0,
                       "initial.assemble: the joints' equations are singular at the "
                       "configuration reached after %d Gauss-Newton steps (%s); check the joint "
                       "points and axes",
                       it, why);
}

/* the joint row left furthest off at q (rigidity rows aside): its violation into *g, -1 when
 * no joint row is off */
static int worst_joint_row(const mbsModel *m, mbsData *d, const double *q, double *g) {
  int worst = -1;
  *g = 0.0;
  mbsRowIter ri;
  for (mbs_rows_begin(&ri, m, q, 0.0, 0, d->ework); mbs_rows_next(&ri);) {
    if (row_joint(m, ri.row) >= 0 && fabs(ri.g) > *g) {
      *g = fabs(ri.g);
      worst = ri.row;
    }
  }
  return worst;
}

mbsStatus mbs_solver_assemble(const mbsModel *m, mbsData *d, mbsAssembly *out, mbsError *err) {
  int nq = m->nq, ns = d->sys->n;
  double *q = d->q, *rhs = d->res, *x = d->dx, *trial = d->vtmp, work[MBS_ELEM_MAXCON];
  memset(out, 0, sizeof(*out));
  out->frame = -1;
  double qmax = 0.0;
  for (int i = 0; i < nq; i++) {
    qmax = fmax(qmax, fabs(q[i]));
  }
  double *q0 = malloc((size_t)(nq > 0 ? nq : 1) * sizeof(double));
  if (!q0) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  memcpy(q0, q, (size_t)nq * sizeof(double));
  double r = mbs_constraint_violation(m, q, 0.0, NULL), goal = 1e-14 * (1.0 + qmax);
  mbsStatus st = MBS_OK;
  for (int it = 0; it < 100 && r > goal && m->ncon > 0; it++) {
    if ((st = kkt_factor_weighted(m, d, q, 0.0, BEAM_WEIGHT, err)) != MBS_OK) {
      if (st != MBS_ERR_NOMEM) {
        st = assemble_singular(m, d, q, it, qmax, err);
      }
      goto done;
    }
    memset(rhs, 0, (size_t)ns * sizeof(double));
    mbsRowIter ri;
    for (mbs_rows_begin(&ri, m, q, 0.0, 0, work); mbs_rows_next(&ri);) {
      rhs[nq + ri.row] = -ri.g;
    }
    if ((st = kkt_solve(m, d, rhs, x, err)) != MBS_OK) {
      goto done;
    }
    int gained = 0;
    for (double a = 1.0; a > 1e-6 && !gained; a *= 0.5) {
      for (int i = 0; i < nq; i++) {
        trial[i] = q[i] + a * x[i];
      }
      double rt = mbs_constraint_violation(m, trial, 0.0, NULL);
      if (rt < r) {
        memcpy(q, trial, (size_t)nq * sizeof(double));
        r = rt;
        gained = 1;
      }
    }
    out->iterations = it + 1;
    if (!gained) {
      break;
    }
  }
  /* the rows dropped as redundant must hold too (they repeat the others where the mechanism
   * closes) */
  int worst = -1, wdrop = -1;
  double rmax = mbs_constraint_violation(m, q, 0.0, &worst);
  for (int k = 0; k < m->ndrop; k++) {
    double g = fabs(mbs_con_eval(&m->drop[k], q, NULL));
    if (!(g <= rmax)) {
      rmax = g;
      wdrop = k;
    }
  }
  out->residual = rmax;
  if (!(rmax <= 1e-10 * (1.0 + qmax))) {
    char what[256];
    int j = -1;
    if (wdrop >= 0) {
      j = m->drop[wdrop].joint;
    } else {
      j = row_joint(m, worst);
    }
    /* a loop that cannot close leaves the least-squares correction spread over the rows, a
     * body's rigidity among them: name the joint left furthest off, which the deck can
     * change */
    double gj = 0.0;
    int wj = j < 0 ? worst_joint_row(m, d, q, &gj) : -1;
    if (wj >= 0 && gj > 1e-10 * (1.0 + qmax)) {
      worst = wj;
      j = row_joint(m, wj);
      rmax = gj;
    }
    if (wdrop >= 0 && j >= 0) {
      snprintf(what, sizeof(what), "joint '%s' (row %d, one of its redundant rows)",
               m->joint_name[j], m->drop[wdrop].jrow + 1);
    } else {
      mbs_constraint_describe(m, worst, what, (int)sizeof(what));
    }
    const mbsMark *mk = j >= 0 ? &m->joint_mark[j] : NULL;
    st = mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, mk ? mk->line : 0, mk ? mk->col : 0,
                       "initial.assemble: the joints cannot all hold: the nearest configuration "
                       "found (%d Gauss-Newton steps) leaves %s off by %.3g; check the "
                       "mechanism's lengths and joint points (can it close?)",
                       out->iterations, what, rmax);
    goto done;
  }
  /* how far each body (and beam node) moved: its reference point, its directors; a beam
   * node must not have moved (a beam joined to the ground where it is not) */
  int nb0 = first_beam_node(m);
  for (int f = 1; f < m->nattach; f++) {
    int n0 = m->attach_node[f];
    if (n0 < 0) {
      continue;
    }
    int nn = mbs_attach_nnode(m->attach_kind[f]);
    double dp[3], beam_move = 0.0;
    for (int k = 0; k < nn; k++) {
      vsub(dp, q + 3 * (n0 + k), q0 + 3 * (n0 + k));
      if (k == 0 && vnorm(dp) > out->max_move) {
        out->max_move = vnorm(dp);
        out->frame = f;
      } else if (k > 0) {
        out->max_turn = fmax(out->max_turn, vnorm(dp));
      }
      for (int c = 0; n0 >= nb0 && c < 3; c++) {
        beam_move = fmax(beam_move, fabs(dp[c]));
      }
    }
    if (beam_move > 1e-9 * (1.0 + qmax)) {
      st = mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, 0, 0,
                         "initial.assemble would move beam node '%s' (by %.3g), straining its "
                         "beam: the assembly moves rigid bodies and point masses; place the "
                         "beam where its joints are",
                         m->attach_name[f], beam_move);
      goto done;
    }
  }
done:
  if (st != MBS_OK) {
    memcpy(q, q0, (size_t)nq * sizeof(double));
  }
  free(q0);
  return st;
}
