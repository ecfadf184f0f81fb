/* onestep.c: the one-step schemes em, midpoint and euler: one implementation, three weight
 * sets (seed 000 eq. 57). em and midpoint take q* = (q0 + q1)/2 and v1 = 2 dq/dt - v0, em
 * with discrete gradients (energy-momentum), midpoint with the gradients at q*; euler is
 * implicit Euler, q* = q1 and v1 = dq/dt. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/integrator.h"

typedef struct {
  double cM;    /* mass factor */
  double alpha; /* q* = q0 + alpha (q1 - q0) */
  double c1;    /* end velocity v1 = c1 (q1 - q0)/dt - (c1 - 1) v0 */
  int discrete; /* discrete gradients */
} OneStep;

static const OneStep EM = {2.0, 0.5, 2.0, 1}, MIDPOINT = {2.0, 0.5, 2.0, 0},
                     EULER = {1.0, 1.0, 1.0, 0};

/* the assembler's weights for a step of size dt */
static mbsSchemeWeights weights(const OneStep *os, double dt) {
  mbsSchemeWeights s = {os->cM, os->alpha, 1.0 / dt, 0.5 * dt, os->discrete};
  /* end-point schemes take the loads' profiles just before the step's end (the left
   * limit): a window or table jump that falls on a step boundary then acts on exactly the
   * steps inside it, as with the midpoint schemes (1e-9 dt is far above the round-off of
   * t = n dt and far below anything a continuous profile resolves) */
  if (s.alpha == 1.0) {
    s.tf = dt * (1.0 - 1e-9);
  }
  return s;
}

/* 1 if the model is large enough for the extrapolating predictor (predict) */
static int large(const mbsModel *m) {
  return m->nq + m->ncon >= MBS_NEWTON_LARGE;
}

static mbsStatus init(const mbsModel *m, void **work, mbsError *err) {
  mbsImplicitWork *w = calloc(1, sizeof(*w));
  if (!w || mbs_implicit_work_init(m, w) != MBS_OK) {
    free(w);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  if (large(m)) {
    size_t nc = (size_t)(m->ncon > 0 ? m->ncon : 1);
    w->inc_hist = calloc((size_t)MBS_PRED_STEPS * (size_t)m->nq, sizeof(double));
    w->lam_hist = calloc(nc, sizeof(double));
    w->mu_pred = calloc(nc, sizeof(double));
    if (!w->inc_hist || !w->lam_hist || !w->mu_pred) {
      mbs_implicit_work_free(w);
      free(w);
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
  }
  *work = w;
  return MBS_OK;
}

static void work_free(void *work) {
  if (work) {
    mbs_implicit_work_free(work);
    free(work);
  }
}

static void prepare(const OneStep *os, const mbsModel *m, mbsData *d, double dt,
                    mbsSchemeWeights *s) {
  mbsImplicitWork *w = d->integrator_work;
  *s = weights(os, dt);
  mbs_implicit_begin(m, d, w);
  /* the per-step vectors as increments from q0: qhat - q0 = dt v0, v* = dq/dt */
  for (int i = 0; i < m->nq; i++) {
    w->qhat[i] = dt * w->v_prev[i];
    w->qbase[i] = 0.0;
    w->vbase[i] = 0.0;
  }
}

/* The predictor of q1 - q0 of midpoint and euler: the Adams-Bashforth step of second order
 * from the velocities at the step's start and at the start of the step before (h its size),
 *     q1 - q0 = dt v0 + dt^2/2 (v0 - v_{-1})/h,
 * whose error is O(dt^3), where the constant velocity dt v0 is off by dt^2/2 q''. Newton's
 * matrix is then factored nearer to the solution, and the chord iterations with it contract
 * faster: midpoint takes 3.28 -> 2.08 iterations per step on the 10-link chain of
 * scripts/bench/chain (dt = 1e-3, 0.3 s), 4.03 -> 3.00 with 200 links, 5.71 -> 3.71 with
 * 1000 (CPU -15 to -26 %). The converged step is the same to round-off, the predictor being
 * only where Newton starts. v_{-1} is part of the exported state (previous_velocity), so a
 * restart predicts as the run would. The extrapolation is used while its correction is at
 * most the constant-velocity increment (a velocity jump of a drive's kink, a hostile restart
 * file); otherwise the predictor is dt v0.
 * em keeps dt v0 below MBS_NEWTON_LARGE unknowns: with this predictor its round-off moved
 * (the heavy top's energy drifted 3.4e-14 per 1e4 steps over 1e5 steps against 2.4e-15, the
 * stiff chain's energy error at omega dt = 14 grew from 1.0e-11 to 7.2e-11; full Newton from
 * dt v0 drifts 1.2e-14), more than tests/integration/test_conservation.py and
 * test_energy_behaviour.py allow. From that size em predicts so too: on the chain of
 * scripts/bench/chain (dt = 1e-3, 200 steps) 3.92 -> 2.77 iterations per step with 50 links,
 * 4.62 -> 3.00 with 500, 5.62 -> 3.54 with 1000 (1.6x less CPU), one factorization per step,
 * and the energy holds to round-off (tests/integration/test_newton_chain.py).
 * Into w->pred; returns 0 for dt v0. */
static int predict(const OneStep *os, const mbsModel *m, const mbsData *d, mbsImplicitWork *w,
                   double dt) {
  double h = d->last_dt;
  if ((os->discrete && m->nq + m->ncon < MBS_NEWTON_LARGE) || !w->hist_valid || !(h > 0.0)) {
    return 0;
  }
  double c = 0.5 * dt * dt / h, corr = 0.0, base = 0.0;
  for (int i = 0; i < m->nq; i++) {
    corr = fmax(corr, fabs(c * (w->v_prev[i] - w->v_hist[i])));
    base = fmax(base, fabs(dt * w->v_prev[i]));
  }
  if (!(corr <= base)) {
    return 0;
  }
  for (int i = 0; i < m->nq; i++) {
    w->pred[i] = dt * w->v_prev[i] + c * (w->v_prev[i] - w->v_hist[i]);
  }
  return 1;
}

/* Lagrange weights L[1..P] at tau = t of the nodes tau_0 = 0 and tau_k = -(h[0] + ... +
 * h[k-1]) (the weight of tau_0 is not needed: the values are differences from it) */
static void lagrange(const double *h, int P, double t, double *L) {
  double tau[MBS_PRED_STEPS + 1];
  tau[0] = 0.0;
  for (int k = 1; k <= P; k++) {
    tau[k] = tau[k - 1] - h[k - 1];
  }
  for (int k = 1; k <= P; k++) {
    L[k] = 1.0;
    for (int j = 0; j <= P; j++) {
      if (j != k) {
        L[k] *= (t - tau[j]) / (tau[k] - tau[j]);
      }
    }
  }
}

/* The predictor of models from MBS_NEWTON_LARGE unknowns, once MBS_PRED_MIN_STEPS steps are known:
 * q1 - q0 from the polynomial of degree P through the positions at the ends of the last P steps
 * and at t0 (their increments and sizes; P = MBS_PRED_MIN_STEPS, or MBS_PRED_STEPS where that
 * predicts better, below; with equal steps and P = 4: q1 - q0 = 4 d1 - 6 d2 + 4 d3 - d4, d1 the
 * last step's increment), and the multipliers mu = dt^2 lambda by linear extrapolation of lambda
 * from the last two steps (taken at their midpoints). On the chain of scripts/bench/chain (em, dt =
 * 1e-3, 200 steps) the second-order predictor's increment was 3e-5 off with 2000 links (1.5 % of
 * the increment, at the fold that runs down the chain from its pin), the first iteration left the
 * joints' rows at 2e-10 and the chord iteration needed 3.9 iterations per step; from this
 * one 2.2e-5 and 2.9 (1000 links: 3.56 -> 2.76). Degree 6 (where it predicts better, below) instead
 * of 4: the fold runs faster down a longer chain (at t = 0.2 s it is at link 29 of 2000, link 11 of
 * 200), the quartic was 5.8e-6 off there with 2000 links (5e-7 with 200), and the chord iteration
 * on the predictor's factorization needed a third solve to reach round-off; iterations per
 * step 2.94 -> 2.42 at 2000 links, 2.76 -> 2.03 at 1000 (docs/integrators.md, "Newton's method").
 * Over the AB2 increment (in w->pred) only while the two differ by at most the constant-velocity
 * increment (a velocity jump, a step much longer than the last ones). Returns 1 if w->pred and
 * w->mu_pred hold it. */
static int predict_history(const mbsModel *m, mbsImplicitWork *w, double dt) {
  int nq = m->nq;
  if (!w->inc_hist) {
    return 0;
  }
  int known = 0;
  while (known < MBS_PRED_STEPS && w->inc_h[known] > 0.0) {
    known++;
  }
  if (known < MBS_PRED_MIN_STEPS) {
    return 0;
  }
  /* the degree P: MBS_PRED_MIN_STEPS, or MBS_PRED_STEPS once that many steps are known and
   * the last step's increment was predicted better from the steps before it by degree
   * MBS_PRED_STEPS - 1 than by MBS_PRED_MIN_STEPS (where the motion is resolved, higher
   * degrees are better; where a mode is not, with omega dt above 1, a higher degree amplifies
   * it more: the beam of decks/beams/cantilever_modes.yaml, EA/EI = 1.2e7, took 5.24 -> 5.51
   * iterations per step with degree 6 always) */
  int P = MBS_PRED_MIN_STEPS;
  if (known == MBS_PRED_STEPS) {
    enum { LO = MBS_PRED_MIN_STEPS, HI = MBS_PRED_STEPS - 1 };
    double Llo[LO + 1], Lhi[HI + 1], elo = 0.0, ehi = 0.0;
    lagrange(w->inc_h + 1, LO, w->inc_h[0], Llo);
    lagrange(w->inc_h + 1, HI, w->inc_h[0], Lhi);
    for (int i = 0; i < nq; i++) {
      /* q_{-1-k} - q_{-1} = -(d_2 + ... + d_{k+1}) */
      double acc = 0.0, xlo = 0.0, xhi = 0.0;
      for (int k = 1; k <= HI; k++) {
        acc -= w->inc_hist[(size_t)k * (size_t)nq + (size_t)i];
        xhi += Lhi[k] * acc;
        if (k <= LO) {
          xlo += Llo[k] * acc;
        }
      }
      elo = fmax(elo, fabs(xlo - w->inc_hist[i]));
      ehi = fmax(ehi, fabs(xhi - w->inc_hist[i]));
    }
    if (ehi < elo) {
      P = MBS_PRED_STEPS;
    }
  }
  double L[MBS_PRED_STEPS + 1];
  lagrange(w->inc_h, P, dt, L);
  double base = 0.0, off = 0.0;
  for (int i = 0; i < nq; i++) {
    /* q_{-k} - q0 = -(d_1 + ... + d_k) */
    double acc = 0.0, x = 0.0;
    for (int k = 1; k <= P; k++) {
      acc -= w->inc_hist[(size_t)(k - 1) * (size_t)nq + (size_t)i];
      x += L[k] * acc;
    }
    base = fmax(base, fabs(dt * w->v_prev[i]));
    off = fmax(off, fabs(x - w->pred[i]));
    w->dq[i] = x; /* scratch: the Newton iteration's step_predict overwrites it */
  }
  if (!(off <= base)) {
    return 0;
  }
  memcpy(w->pred, w->dq, (size_t)nq * sizeof(double));
  /* lambda_n = mu_prev / h_1^2 over the last step, lambda_{n-1} over the one before */
  double h1 = w->inc_h[0], h2 = w->inc_h[1];
  double c = (dt + h1) / (h1 + h2), dt2 = dt * dt;
  for (int r = 0; r < m->ncon; r++) {
    double l1 = w->mu_prev[r] / (h1 * h1);
    w->mu_pred[r] = dt2 * (l1 + c * (l1 - w->lam_hist[r]));
    if (r < m->nrow && mbs_row_released(m, r)) {
      w->mu_pred[r] = 0.0;
    }
  }
  return 1;
}

/* after a step: its increment and size into the predictor's history, lambda_n into lam_hist */
static void history_push(const mbsModel *m, mbsImplicitWork *w, double h_prev, double dt) {
  int nq = m->nq;
  if (!w->inc_hist) {
    return;
  }
  memmove(w->inc_hist + nq, w->inc_hist,
          (size_t)(MBS_PRED_STEPS - 1) * (size_t)nq * sizeof(double));
  memcpy(w->inc_hist, w->dq, (size_t)nq * sizeof(double));
  memmove(w->inc_h + 1, w->inc_h, (MBS_PRED_STEPS - 1) * sizeof(double));
  w->inc_h[0] = dt;
  /* lambda of the step that ended at this step's start (none before the first step: 0) */
  for (int r = 0; r < m->ncon; r++) {
    w->lam_hist[r] = h_prev > 0.0 ? w->mu_prev[r] / (h_prev * h_prev) : 0.0;
  }
}

static mbsStatus step(const OneStep *os, const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  mbsImplicitWork *w = d->integrator_work;
  mbsSchemeWeights s;
  int nq = m->nq;
  double t0 = d->t;
  prepare(os, m, d, dt, &s);
  char why[1200];
  const double *pred = predict(os, m, d, w, dt) ? w->pred : NULL;
  w->use_mu_pred = pred && predict_history(m, w, dt);
  mbsStatus st = mbs_implicit_newton(m, d, w, &s, dt, t0, pred, why, sizeof(why), err);
  w->use_mu_pred = 0;
  if (st != MBS_OK) {
    return mbs_implicit_fail(m, d, w, st, why, t0, dt, err);
  }
  history_push(m, w, d->last_dt, dt);
  /* velocities at the end of the step */
  for (int i = 0; i < nq; i++) {
    d->v[i] = os->c1 * w->dq[i] / dt - (os->c1 - 1.0) * w->v_prev[i];
  }
  memcpy(w->v_hist, w->v_prev, (size_t)nq * sizeof(double));
  w->hist_valid = 1;
  /* the work of non-potential forces and drives over the step, as the scheme balances
   * it: F* . (q1 - q0) at the evaluation state (exact for em) */
  mbs_assemble_work(m, d, w, &s, w->qm, w->vm, t0 + s.tf, t0 + s.alpha * dt, w->mu, 1.0 / (dt * dt),
                    1.0, &d->external_work, &d->dissipated);
  mbs_implicit_end(m, d, w, t0, dt);
  return MBS_OK;
}

static void prepare_em(const mbsModel *m, mbsData *d, double dt, mbsSchemeWeights *s) {
  prepare(&EM, m, d, dt, s);
}
static void prepare_midpoint(const mbsModel *m, mbsData *d, double dt, mbsSchemeWeights *s) {
  prepare(&MIDPOINT, m, d, dt, s);
}
static void prepare_euler(const mbsModel *m, mbsData *d, double dt, mbsSchemeWeights *s) {
  prepare(&EULER, m, d, dt, s);
}

static mbsStatus step_em(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  return step(&EM, m, d, dt, err);
}
static mbsStatus step_midpoint(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  return step(&MIDPOINT, m, d, dt, err);
}
static mbsStatus step_euler(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  return step(&EULER, m, d, dt, err);
}

static void interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v) {
  mbs_implicit_interpolate(m, d, d->integrator_work, t, q, v);
}

/* midpoint's and euler's state, and em's from MBS_NEWTON_LARGE unknowns: mbs_implicit_export's
 * and v_{-1} of the predictor; before the first step v_{-1} is v itself (the predictor is then
 * dt v0, as without history) */
static int state_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max) {
  mbsImplicitWork *w = d->integrator_work;
  int n = mbs_implicit_export(m, d, out, max);
  if (d->integrator == &mbs_integrator_em && m->nq + m->ncon < MBS_NEWTON_LARGE) {
    return n; /* em predicts dt v0 (predict) */
  }
  if (n < max) {
    out[n++] = (mbsStateArray){
        .name = "previous_velocity", .length = m->nq, .data = w->hist_valid ? w->v_hist : d->v};
  }
  /* the extrapolating predictor's history (predict_history) */
  if (w->inc_hist && n + 3 <= max) {
    out[n++] = (mbsStateArray){.name = "previous_increments",
                               .length = MBS_PRED_STEPS * m->nq,
                               .data = w->inc_hist,
                               .units = "those of /state/q, per step"};
    out[n++] = (mbsStateArray){
        .name = "previous_steps", .length = MBS_PRED_STEPS, .data = w->inc_h, .units = "s"};
    out[n++] = (mbsStateArray){.name = "previous_multipliers",
                               .length = m->ncon,
                               .data = w->lam_hist,
                               .units = "N or N m (J per unit of the constraint row)"};
  }
  return n;
}

/* the predictor's history from a state import; 0 with a note in missing when the arrays are
 * absent (the first MBS_PRED_STEPS steps then predict by Adams-Bashforth) */
static mbsStatus import_history(const mbsModel *m, mbsImplicitWork *w, const mbsStateArray *in,
                                int n, char *missing, size_t nmissing, mbsError *err) {
  if (!w->inc_hist) {
    return MBS_OK;
  }
  const mbsStateArray *a[3] = {mbs_state_find(in, n, "previous_increments"),
                               mbs_state_find(in, n, "previous_steps"),
                               mbs_state_find(in, n, "previous_multipliers")};
  double *dst[3] = {w->inc_hist, w->inc_h, w->lam_hist};
  int len[3] = {MBS_PRED_STEPS * m->nq, MBS_PRED_STEPS, m->ncon};
  if (!a[0] || !a[1] || !a[2] || a[0]->length != len[0] || a[1]->length != len[1] ||
      a[2]->length != len[2]) {
    memset(w->inc_h, 0, sizeof(w->inc_h));
    if (missing && nmissing > 0) {
      size_t l = strlen(missing);
      snprintf(missing + l, nmissing - l,
               "%sprevious_increments, previous_steps, previous_multipliers (absent, or the "
               "history of another length): the first %d steps predict by Adams-Bashforth",
               l > 0 ? "; " : "", MBS_PRED_MIN_STEPS);
    }
    return MBS_OK;
  }
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < len[k]; i++) {
      if (!isfinite(a[k]->data[i]) || (k == 1 && a[k]->data[i] < 0.0)) {
        return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "/state/%s holds %s value (column %d)",
                             a[k]->name, k == 1 ? "a negative or non-finite" : "a non-finite",
                             i + 1);
      }
    }
  }
  for (int k = 0; k < 3; k++) {
    if (a[k]->data != dst[k] && len[k] > 0) {
      memcpy(dst[k], a[k]->data, (size_t)len[k] * sizeof(double));
    }
  }
  return MBS_OK;
}

static mbsStatus import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                        char *missing, size_t nmissing, mbsError *err) {
  mbsImplicitWork *w = d->integrator_work;
  const mbsStateArray *pv = mbs_state_find(in, n, "previous_velocity");
  if (d->integrator == &mbs_integrator_em && m->nq + m->ncon < MBS_NEWTON_LARGE) {
    /* em predicts dt v0 (predict) */
  } else if (pv && pv->length == m->nq) {
    for (int i = 0; i < m->nq; i++) {
      if (!isfinite(pv->data[i])) {
        return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                             "/state/previous_velocity holds a non-finite value (column %d)",
                             i + 1);
      }
    }
    if (pv->data != w->v_hist) {
      memcpy(w->v_hist, pv->data, (size_t)m->nq * sizeof(double));
    }
    w->hist_valid = 1;
  } else {
    /* a file from before the predictor had v_{-1}: the first step predicts dt v0 */
    w->hist_valid = 0;
    if (missing && nmissing > 0) {
      snprintf(missing, nmissing,
               "previous_velocity: the first step's Newton iteration starts from dt v");
    }
  }
  mbsStatus st = import_history(m, w, in, n, missing, nmissing, err);
  if (st != MBS_OK) {
    return st;
  }
  mbs_implicit_import(m, d, w, in, n);
  return MBS_OK;
}

const mbsIntegratorTable mbs_integrator_em = {.name = "em",
                                              .init = init,
                                              .prepare = prepare_em,
                                              .step = step_em,
                                              .interpolate = interpolate,
                                              .state_export = state_export,
                                              .state_import = import,
                                              .free = work_free};
const mbsIntegratorTable mbs_integrator_midpoint = {.name = "midpoint",
                                                    .init = init,
                                                    .prepare = prepare_midpoint,
                                                    .step = step_midpoint,
                                                    .interpolate = interpolate,
                                                    .state_export = state_export,
                                                    .state_import = import,
                                                    .free = work_free};
const mbsIntegratorTable mbs_integrator_euler = {.name = "euler",
                                                 .init = init,
                                                 .prepare = prepare_euler,
                                                 .step = step_euler,
                                                 .interpolate = interpolate,
                                                 .state_export = state_export,
                                                 .state_import = import,
                                                 .free = work_free};
