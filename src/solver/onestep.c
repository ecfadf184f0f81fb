/* onestep.c: the one-step schemes em, midpoint and euler: one implementation, three weight
 * sets (seed 000 eq. 57). em and midpoint take q* = (q0 + q1)/2 and v1 = 2 dq/dt - v0, em
 * with discrete gradients (energy-momentum), midpoint with the gradients at q*; euler is
 * implicit Euler, q* = q1 and v1 = dq/dt. */
#include <math.h>
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

static mbsStatus init(const mbsModel *m, void **work, mbsError *err) {
  mbsImplicitWork *w = calloc(1, sizeof(*w));
  if (!w || mbs_implicit_work_init(m, w) != MBS_OK) {
    free(w);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
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

static mbsStatus step(const OneStep *os, const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  mbsImplicitWork *w = d->integrator_work;
  mbsSchemeWeights s;
  int nq = m->nq;
  double t0 = d->t;
  prepare(os, m, d, dt, &s);
  char why[1200];
  mbsStatus st = mbs_implicit_newton(m, d, w, &s, dt, t0, NULL, why, sizeof(why), err);
  if (st != MBS_OK) {
    return mbs_implicit_fail(m, d, w, st, why, t0, dt, err);
  }
  /* velocities at the end of the step */
  for (int i = 0; i < nq; i++) {
    d->v[i] = os->c1 * w->dq[i] / dt - (os->c1 - 1.0) * w->v_prev[i];
  }
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

static mbsStatus import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                        char *missing, size_t nmissing, mbsError *err) {
  (void)missing;
  (void)nmissing;
  (void)err;
  mbs_implicit_import(m, d, d->integrator_work, in, n);
  return MBS_OK;
}

const mbsIntegratorTable mbs_integrator_em = {.name = "em",
                                              .init = init,
                                              .prepare = prepare_em,
                                              .step = step_em,
                                              .interpolate = interpolate,
                                              .state_export = mbs_implicit_export,
                                              .state_import = import,
                                              .free = work_free};
const mbsIntegratorTable mbs_integrator_midpoint = {.name = "midpoint",
                                                    .init = init,
                                                    .prepare = prepare_midpoint,
                                                    .step = step_midpoint,
                                                    .interpolate = interpolate,
                                                    .state_export = mbs_implicit_export,
                                                    .state_import = import,
                                                    .free = work_free};
const mbsIntegratorTable mbs_integrator_euler = {.name = "euler",
                                                 .init = init,
                                                 .prepare = prepare_euler,
                                                 .step = step_euler,
                                                 .interpolate = interpolate,
                                                 .state_export = mbs_implicit_export,
                                                 .state_import = import,
                                                 .free = work_free};
