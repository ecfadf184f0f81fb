/* genalpha.c: the generalized-alpha method (Chung & Hulbert 1993; index 3 with the
 * Newmark update as in Arnold & Bruls 2007), parameters from rho_inf. It carries the
 * accelerations qdd and the pseudo-accelerations a from step to step: they are its own
 * state (exported for records and restarts as "acceleration", "algorithmic_acceleration"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/integrator.h"

typedef struct {
  mbsImplicitWork base; /* first: the assembler and Newton driver see this */
  double *acc, *aacc;   /* (nq) accelerations and pseudo-accelerations */
  int acc_valid;        /* acc/aacc hold consistent values */
} Work;

typedef struct {
  double am, af, gamma, beta;
} Params;

static Params params(const mbsModel *m) {
  double rho = m->rho_inf;
  Params p;
  p.am = (2.0 * rho - 1.0) / (rho + 1.0);
  p.af = rho / (rho + 1.0);
  p.gamma = 0.5 + p.af - p.am;
  p.beta = 0.25 * (p.gamma + 0.5) * (p.gamma + 0.5);
  return p;
}

static mbsStatus init(const mbsModel *m, void **work, mbsError *err) {
  Work *w = calloc(1, sizeof(*w));
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1);
  if (w && mbs_implicit_work_init(m, &w->base) == MBS_OK) {
    w->acc = calloc(nq, sizeof(double));
    w->aacc = calloc(nq, sizeof(double));
    if (w->acc && w->aacc) {
      *work = w;
      return MBS_OK;
    }
    free(w->acc);
    free(w->aacc);
    mbs_implicit_work_free(&w->base);
  }
  free(w);
  return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
}

static void work_free(void *work) {
  Work *w = work;
  if (w) {
    mbs_implicit_work_free(&w->base);
    free(w->acc);
    free(w->aacc);
    free(w);
  }
}

static void start(const mbsModel *m, mbsData *d);

/* joints engaged or released: the accelerations of the new constraints */
static void rows_changed(const mbsModel *m, mbsData *d) {
  Work *w = d->integrator_work;
  w->acc_valid = 0;
  start(m, d);
}

/* the consistent accelerations of the current state (index-1 system, consistent.c) and
 * mu = dt^2 lambda there; a singular index-1 system starts from rest accelerations (first
 * order start) */
static void start(const mbsModel *m, mbsData *d) {
  Work *w = d->integrator_work;
  if (w->acc_valid) {
    return;
  }
  mbsError aerr;
  if (mbs_solver_consistent(m, d, &aerr) == MBS_OK) {
    memcpy(w->acc, d->acc_rec, (size_t)m->nq * sizeof(double));
    memcpy(w->aacc, d->acc_rec, (size_t)m->nq * sizeof(double));
    for (int i = 0; i < m->ncon; i++) {
      w->base.mu[i] = d->lambda_rec[i] * m->dt * m->dt;
    }
  } else {
    memset(w->acc, 0, (size_t)m->nq * sizeof(double));
    memset(w->aacc, 0, (size_t)m->nq * sizeof(double));
  }
  w->acc_valid = 1;
}

static void prepare(const mbsModel *m, mbsData *d, double dt, mbsSchemeWeights *s) {
  Work *gw = d->integrator_work;
  mbsImplicitWork *w = &gw->base;
  Params p = params(m);
  /* weights: dt^2 M qddot_{n+1} = cM M (q1 - qhat), forces at the end point q* = q1 (just
   * before the step's end, as euler), v* = vbase + gamma/(beta dt) (q1 - qbase) */
  *s = (mbsSchemeWeights){(1.0 - p.am) / (p.beta * (1.0 - p.af)), 1.0, p.gamma / (p.beta * dt),
                          dt * (1.0 - 1e-9), 0};
  start(m, d);
  mbs_implicit_begin(m, d, w);
  /* Newmark predictor with the pseudo-acceleration a_n, and the alpha terms folded in */
  const double *q0 = w->q_prev, *v0 = w->v_prev;
  for (int i = 0; i < m->nq; i++) {
    double pred = q0[i] + dt * v0[i] + dt * dt * (0.5 - p.beta) * gw->aacc[i];
    w->qbase[i] = pred - q0[i];
    w->vbase[i] = v0[i] + dt * (1.0 - p.gamma) * gw->aacc[i];
    double extra = dt * dt * (p.am * gw->aacc[i] - p.af * gw->acc[i]) / (1.0 - p.af);
    w->qhat[i] = pred - q0[i] - extra / s->cM;
  }
}

static mbsStatus step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  Work *gw = d->integrator_work;
  mbsImplicitWork *w = &gw->base;
  Params p = params(m);
  int nq = m->nq;
  double t0 = d->t;
  mbsSchemeWeights s;
  prepare(m, d, dt, &s);
  char why[1200];
  mbsStatus st = mbs_implicit_newton(m, d, w, &s, dt, t0, w->qbase, why, sizeof(why), err);
  if (st != MBS_OK) {
    return mbs_implicit_fail(m, d, w, st, why, t0, dt, err);
  }
  /* velocities and accelerations at the end of the step */
  for (int i = 0; i < nq; i++) {
    double anew = (w->dq[i] - w->qbase[i]) / (p.beta * dt * dt);
    double qdd = ((1.0 - p.am) * anew + p.am * gw->aacc[i] - p.af * gw->acc[i]) / (1.0 - p.af);
    d->v[i] = w->vbase[i] + dt * p.gamma * anew;
    gw->aacc[i] = anew;
    gw->acc[i] = qdd;
  }
  /* the work of non-potential forces and drives over the step: genalpha evaluates forces
   * at the step's end only, and F(t1) . dq is first order (a window load's work 0.49503 J
   * for 0.5 J of kinetic energy gained): the trapezoidal rule over the step's two ends is
   * second order and exact for a constant load */
  double ldt = d->last_dt > 0.0 ? d->last_dt : m->dt;
  mbs_assemble_work(m, d, w, &s, w->q_prev, w->v_prev, t0 + 1e-9 * dt, t0, w->mu_prev,
                    1.0 / (ldt * ldt), 0.5, &d->external_work, &d->dissipated);
  mbs_assemble_work(m, d, w, &s, d->q, d->v, t0 + s.tf, t0 + dt, w->mu, 1.0 / (dt * dt), 0.5,
                    &d->external_work, &d->dissipated);
  mbs_implicit_end(m, d, w, t0, dt);
  return MBS_OK;
}

static void interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v) {
  const Work *w = d->integrator_work;
  mbs_implicit_interpolate(m, d, &w->base, t, q, v);
}

static int state_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max) {
  Work *w = d->integrator_work;
  int n = mbs_implicit_export(m, d, out, max);
  /* NULL before they exist (written as NaN) */
  if (n + 2 <= max) {
    out[n++] = (mbsStateArray){
        .name = "acceleration", .length = m->nq, .data = w->acc_valid ? w->acc : NULL};
    out[n++] = (mbsStateArray){.name = "algorithmic_acceleration",
                               .length = m->nq,
                               .data = w->acc_valid ? w->aacc : NULL};
  }
  return n;
}

static mbsStatus state_import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                              char *missing, size_t nmissing, mbsError *err) {
  (void)err;
  Work *w = d->integrator_work;
  mbs_implicit_import(m, d, &w->base, in, n);
  const mbsStateArray *a = mbs_state_find(in, n, "acceleration");
  const mbsStateArray *aa = mbs_state_find(in, n, "algorithmic_acceleration");
  if (a && aa && a->length == m->nq && aa->length == m->nq) {
    if (a->data != w->acc) {
      memcpy(w->acc, a->data, (size_t)m->nq * sizeof(double));
    }
    if (aa->data != w->aacc) {
      memcpy(w->aacc, aa->data, (size_t)m->nq * sizeof(double));
    }
    w->acc_valid = 1;
  } else if (missing && nmissing > 0) {
    /* without them the first step starts from consistent accelerations (start) */
    snprintf(missing, nmissing,
             "acceleration, algorithmic_acceleration: the first step starts from consistent "
             "accelerations");
  }
  return MBS_OK;
}

const mbsIntegratorTable mbs_integrator_genalpha = {.name = "genalpha",
                                                   .init = init,
                                                   .start = start,
                                                   .rows_changed = rows_changed,
                                                   .prepare = prepare,
                                                   .step = step,
                                                   .interpolate = interpolate,
                                                   .state_export = state_export,
                                                   .state_import = state_import,
                                                   .free = work_free};
