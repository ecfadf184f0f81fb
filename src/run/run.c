/* run.c: a run of a deck (mbsim/run.h): the initial assembly, the step grid t_n = n dt, the
 * energy monitor, the records and the status, which the command and the Python package
 * drive. Nothing here prints or exits; what a front end tells its user (warnings, notes, the
 * summary) is kept as text. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbsim/contact.h"
#include "mbsim/elements.h"
#include "mbsim/run.h"
#include "run/run_internal.h"

#ifndef MBS_VERSION
#define MBS_VERSION "0.0.0"
#endif

#define STATUS_MAX 1400
#define NOTES_MAX 2048

/* the accumulated scalars a record writes, interpolated linearly within a step */
#define NACC 7
static double *acc_field(mbsData *d, int k) {
  double *f[NACC] = {&d->external_work,     &d->dissipated,          &d->contact_dissipated,
                     &d->impact_dissipated, &d->friction_dissipated, &d->numerical_dissipated,
                     &d->contact_potential};
  return f[k];
}

/* output.dt's samples of one grid step: count states at the times t, each q and v (nq),
 * the multipliers (ncon; static's records carry them) and the accumulated scalars */
typedef struct {
  int n, cap, nomem;
  double *t, *q, *v, *lambda, *acc;
  /* the start of the step being visited: its accumulated scalars and multipliers */
  double acc0[NACC];
  double *lambda0;
  /* room to keep the step's own state while a sample is recorded */
  double *hold_q, *hold_v, *hold_lambda, *hold_vrec, *hold_lrec, *hold_arec, *hold_jc;
} Sampled;

static void sampled_free(Sampled *s);

struct mbsRun {
  mbsDeck deck;
  mbsModel *m;
  mbsData *d;
  char *warnings; /* deck and compiler warnings, lines (owned) */
  char notes[NOTES_MAX];
  mbsRunStart start;
  double *q_deck; /* initial.assemble: the deck's configuration */
  mbsRestart restart;
  /* the output */
  mbsWriter *w;
  mbsRecorder rec;
  const char **names, **qunits, **junits, **jrunits;
  long nrec;
  int recorded; /* a record of the current step was written */
  /* the grid */
  long nsteps, n; /* n: the number of the next step */
  /* output.dt: the next record time is rec_k output_dt; the states of the record times
   * inside the grid step being taken, sampled from the scheme's interpolation after each of
   * its (halved) steps and written after it (Sampled) */
  long rec_k;
  Sampled smp;
  int last_between; /* the last record was a sampled one, between steps */
  /* the observation of the current state */
  mbsObservables o;
  int observed;
  /* the energy monitor (see mbs_run_start) */
  double B0, Escale, dEmax, vmax, vvmax, warn_t, warn_err, last_gain;
  mbsRunFailure failure;
  mbsError first_err; /* the state at t = 0 could not be observed (its record fails) */
  int interrupted, finished;
  char status[STATUS_MAX];
  double wall0;
};

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* append text (lines) to *buf (owned, may be NULL); 0 when out of memory */
static int append_lines(char **buf, const char *text) {
  size_t a = *buf ? strlen(*buf) : 0, b = strlen(text);
  char *p = realloc(*buf, a + b + 1);
  if (!p) {
    return 0;
  }
  memcpy(p + a, text, b + 1);
  *buf = p;
  return 1;
}

/* the semi-explicit Moreau variant integrates forces explicitly, stable only for dt below
 * 2 / omega of the stiffest mode: a warning per spring whose period T = 2 pi sqrt(m / k) (m the
 * lighter of its bodies) dt does not resolve (dt > T / 10; unstable above T / pi), and per
 * beam whose axial stability limit h / (sqrt(3) c) (h the node spacing, c = sqrt(E / rho);
 * the highest axial mode of consistent-mass elements has omega = 2 sqrt(3) c / h) dt exceeds;
 * "file:line:col: text\n" lines into buf; 0 when out of memory */
static int explicit_dt_warnings(const mbsDeck *deck, const mbsModel *m, char **buf) {
  char line[3072];
  for (int l = 0; l < deck->nload; l++) {
    const mbsDeckLoad *dl = &deck->loads[l];
    if (dl->type != MBS_LOAD_SPRING || !(dl->stiffness > 0.0)) {
      continue;
    }
    double mass = INFINITY;
    int light = -1;
    for (int k = 0; k < 2; k++) {
      int b = dl->bodies[k];
      if (b >= 0 && b < deck->nbody && !deck->bodies[b].fixed && deck->bodies[b].mass < mass) {
        mass = deck->bodies[b].mass;
        light = b;
      }
    }
    if (light < 0) {
      continue;
    }
    double period = 4.0 * acos(0.0) * sqrt(mass / dl->stiffness);
    if (!(m->dt > 0.1 * period)) {
      continue;
    }
    snprintf(line, sizeof(line),
             "%s:%d:%d: loads[%d] '%s': the spring (stiffness %g N/m) on body '%s' (%g kg) has "
             "the period 2 pi sqrt(m / k) = %.3g s, and dt = %g s does not resolve it (dt <= "
             "%.3g s does, a tenth of it); the semi-explicit variant integrates it explicitly "
             "and becomes unstable above dt = T / pi = %.3g s\n",
             m->deck_path, dl->mark.line, dl->mark.col, l, dl->name, dl->stiffness,
             deck->bodies[light].name, mass, period, m->dt, 0.1 * period,
             period / (2.0 * acos(0.0)));
    if (!append_lines(buf, line)) {
      return 0;
    }
  }
  for (int i = 0; i < deck->nbeam; i++) {
    const mbsDeckBeam *b = &deck->beams[i];
    double h = b->length / (b->nnode - 1), c = sqrt(b->E / b->density);
    double limit = h / (sqrt(3.0) * c);
    if (!(m->dt > limit)) {
      continue;
    }
    snprintf(line, sizeof(line),
             "%s:%d:%d: beams[%d] '%s': its highest axial mode (node spacing %.3g m, wave speed "
             "sqrt(E / rho) = %.4g m/s) makes the semi-explicit variant unstable above dt = %.3g "
             "s, and dt = %g s; use variant theta, or a smaller dt\n",
             m->deck_path, b->mark.line, b->mark.col, i, b->name, h, c, limit, m->dt);
    if (!append_lines(buf, line)) {
      return 0;
    }
  }
  return 1;
}

mbsRun *mbs_run_create(const mbsRunOptions *opt, mbsError *err) {
  mbsRun *r = calloc(1, sizeof(*r));
  if (!r) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NULL;
  }
  r->wall0 = now_seconds();
  snprintf(r->status, sizeof(r->status), "running");
  mbsStatus st;
  if (opt->deck_text) {
    st = mbs_deck_load_text(&r->deck, opt->deck_path ? opt->deck_path : "<text>", opt->deck_text,
                            strlen(opt->deck_text), opt->overrides, opt->noverrides, err);
  } else {
    st = mbs_deck_load(&r->deck, opt->deck_path, opt->overrides, opt->noverrides, err);
  }
  if (st != MBS_OK) {
    mbs_run_destroy(r);
    return NULL;
  }
  if (!append_lines(&r->warnings, r->deck.warnings ? r->deck.warnings : "")) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    mbs_run_destroy(r);
    return NULL;
  }
  r->m = mbs_model_compile(&r->deck, err);
  if (!r->m) {
    mbs_run_destroy(r);
    return NULL;
  }
  mbsModel *m = r->m;
  if (mbs_integrator_policy(m->integrator)->contacts) {
    /* penalty springs the step does not resolve */
    char pw[2048];
    if (mbs_contact_check_penalty(m, m->dt, m->moreau_variant != MBS_MOREAU_EXPLICIT, pw,
                                  sizeof(pw)) > 0 &&
        !append_lines(&r->warnings, pw)) {
      mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
      mbs_run_destroy(r);
      return NULL;
    }
    if (m->moreau_variant == MBS_MOREAU_EXPLICIT &&
        !explicit_dt_warnings(&r->deck, m, &r->warnings)) {
      mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
      mbs_run_destroy(r);
      return NULL;
    }
  }
  /* an integrator named by an override: say so (the model only knows the deck) */
  const mbsDeck *deck = &r->deck;
  if (deck->solver.integrator_override > 0 && deck->solver.integrator != MBS_INTEGRATOR_AUTO) {
    int i = deck->solver.integrator_override - 1;
    const char *option = opt->override_option ? opt->override_option[i] : NULL;
    if (option) {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "chosen on the command line: %s %s", option, opt->overrides[i].value);
    } else {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "chosen on the command line: --set %.100s=%.100s", opt->overrides[i].path,
               opt->overrides[i].value);
    }
  }
  /* the grid: t_n = n dt, the last step shortened to land on t_end */
  r->nsteps = (long)ceil(m->t_end / m->dt - 1e-9);
  if (r->nsteps < 1) {
    r->nsteps = 1;
  }
  r->n = 1;
  return r;
}

void mbs_run_destroy(mbsRun *r) {
  if (!r) {
    return;
  }
  mbs_output_close(r->w, NULL);
  mbs_recorder_free(&r->rec);
  sampled_free(&r->smp);
  free(r->names);
  free(r->qunits);
  free(r->junits);
  free(r->jrunits);
  free(r->q_deck);
  mbs_restart_free(&r->restart);
  mbs_data_destroy(r->d);
  mbs_model_destroy(r->m);
  mbs_deck_free(&r->deck);
  free(r->warnings);
  free(r);
}

const char *mbs_run_warnings(const mbsRun *r) {
  return r->warnings ? r->warnings : "";
}

const char *mbs_run_notes(const mbsRun *r) {
  return r->notes;
}

const mbsDeck *mbs_run_deck(const mbsRun *r) {
  return &r->deck;
}

const mbsModel *mbs_run_model(const mbsRun *r) {
  return r->m;
}

const mbsData *mbs_run_data(const mbsRun *r) {
  return r->d;
}

const mbsRunStart *mbs_run_start_info(const mbsRun *r) {
  return &r->start;
}

const mbsWriter *mbs_run_writer(const mbsRun *r) {
  return r->w;
}

/* the consistent state of a record (velocities on the constraints, reactions of the
 * index-1 equations) and its observables, once per step */
static void sampled_free(Sampled *s) {
  double *a[] = {s->t,         s->q,         s->v,      s->lambda,      s->acc,
                 s->lambda0,   s->hold_q,    s->hold_v, s->hold_lambda, s->hold_vrec,
                 s->hold_lrec, s->hold_arec, s->hold_jc};
  for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
    free(a[i]);
  }
  memset(s, 0, sizeof(*s));
}

static mbsStatus sampled_init(Sampled *s, const mbsModel *m) {
  size_t nq = (size_t)m->nq, nc = (size_t)m->ncon + 1, nj = 3 * (size_t)m->njoint + 1;
  sampled_free(s);
  s->lambda0 = malloc(nc * sizeof(double));
  s->hold_q = malloc(nq * sizeof(double));
  s->hold_v = malloc(nq * sizeof(double));
  s->hold_lambda = malloc(nc * sizeof(double));
  s->hold_vrec = malloc(nq * sizeof(double));
  s->hold_lrec = malloc(nc * sizeof(double));
  s->hold_arec = malloc(nq * sizeof(double));
  s->hold_jc = malloc(nj * sizeof(double));
  if (!s->lambda0 || !s->hold_q || !s->hold_v || !s->hold_lambda || !s->hold_vrec ||
      !s->hold_lrec || !s->hold_arec || !s->hold_jc) {
    sampled_free(s);
    return MBS_ERR_NOMEM;
  }
  return MBS_OK;
}

/* room for one more sample; 0 when out of memory */
static int sampled_grow(Sampled *s, const mbsModel *m) {
  if (s->n < s->cap) {
    return 1;
  }
  int cap = s->cap ? 2 * s->cap : 4;
  size_t nq = (size_t)m->nq, nc = (size_t)m->ncon + 1, c = (size_t)cap;
  double *t = realloc(s->t, c * sizeof(double));
  s->t = t ? t : s->t;
  double *q = realloc(s->q, c * nq * sizeof(double));
  s->q = q ? q : s->q;
  double *v = realloc(s->v, c * nq * sizeof(double));
  s->v = v ? v : s->v;
  double *l = realloc(s->lambda, c * nc * sizeof(double));
  s->lambda = l ? l : s->lambda;
  double *a = realloc(s->acc, c * NACC * sizeof(double));
  s->acc = a ? a : s->acc;
  if (!t || !q || !v || !l || !a) {
    return 0;
  }
  s->cap = cap;
  return 1;
}

/* the accumulated scalars and multipliers at the start of a step */
static void sampled_mark(Sampled *s, const mbsModel *m, mbsData *d) {
  for (int k = 0; k < NACC; k++) {
    s->acc0[k] = *acc_field(d, k);
  }
  memcpy(s->lambda0, d->lambda, (size_t)m->ncon * sizeof(double));
}

/* the grid step's target time, for the visitor */
typedef struct {
  mbsRun *r;
  double t_next;
} Visit;

/* after each step of an advance (mbsStepVisit): the record times inside it, except one at
 * the grid step's end (an ordinary record), sampled from the scheme's interpolation; the
 * accumulated scalars and the multipliers linear in the step */
static void visit_step(void *ctx, const mbsModel *m, const mbsData *dc) {
  Visit *vis = ctx;
  mbsRun *r = vis->r;
  Sampled *s = &r->smp;
  mbsData *d = r->d; /* dc == d: the run owns it */
  (void)dc;
  double eps = 1e-9 * m->dt, t1 = d->t, h = d->last_dt, t0 = t1 - h;
  for (;;) {
    double tk = (double)r->rec_k * m->output_dt;
    if (tk > t1 + eps || tk >= vis->t_next - eps || !(h > 0.0)) {
      break;
    }
    if (!sampled_grow(s, m)) {
      s->nomem = 1;
      break;
    }
    double a = (tk - t0) / h;
    a = a < 0.0 ? 0.0 : (a > 1.0 ? 1.0 : a);
    size_t nq = (size_t)m->nq, nc = (size_t)m->ncon + 1, i = (size_t)s->n;
    s->t[i] = tk;
    mbs_solver_interpolate(m, d, tk, s->q + i * nq, s->v + i * nq);
    for (int c = 0; c < m->ncon; c++) {
      s->lambda[i * nc + (size_t)c] = s->lambda0[c] + a * (d->lambda[c] - s->lambda0[c]);
    }
    for (int k = 0; k < NACC; k++) {
      s->acc[i * NACC + (size_t)k] = s->acc0[k] + a * (*acc_field(d, k) - s->acc0[k]);
    }
    s->n++;
    r->rec_k++;
  }
  sampled_mark(s, m, d);
}

/* write the samples of the last grid step as records, each of its own state (the step's
 * state is kept aside and restored: a record never changes the trajectory) */
static mbsStatus record_samples(mbsRun *r, mbsError *err) {
  Sampled *s = &r->smp;
  const mbsModel *m = r->m;
  mbsData *d = r->d;
  size_t nq = (size_t)m->nq, nc = (size_t)m->ncon, nj = 3 * (size_t)m->njoint;
  mbsStatus st = MBS_OK;
  for (int i = 0; i < s->n && st == MBS_OK; i++) {
    double t = d->t, acc[NACC];
    for (int k = 0; k < NACC; k++) {
      acc[k] = *acc_field(d, k);
      *acc_field(d, k) = s->acc[(size_t)i * NACC + (size_t)k];
    }
    /* the step's own arrays, kept aside while the sample is recorded */
    struct {
      double *live, *hold;
      size_t n;
    } keep[] = {{d->q, s->hold_q, nq},           {d->v, s->hold_v, nq},
                {d->lambda, s->hold_lambda, nc}, {d->v_rec, s->hold_vrec, nq},
                {d->lambda_rec, s->hold_lrec, nc}, {d->acc_rec, s->hold_arec, nq},
                {d->joint_coord, s->hold_jc, nj}};
    size_t nkeep = sizeof(keep) / sizeof(keep[0]);
    for (size_t k = 0; k < nkeep; k++) {
      memcpy(keep[k].hold, keep[k].live, keep[k].n * sizeof(double));
    }
    d->t = s->t[i];
    memcpy(d->q, s->q + (size_t)i * nq, nq * sizeof(double));
    memcpy(d->v, s->v + (size_t)i * nq, nq * sizeof(double));
    memcpy(d->lambda, s->lambda + (size_t)i * (nc + 1), nc * sizeof(double));
    mbs_joint_track(m, d);
    r->observed = 0;
    r->recorded = 0;
    st = mbs_run_record(r, err);
    d->t = t;
    for (int k = 0; k < NACC; k++) {
      *acc_field(d, k) = acc[k];
    }
    for (size_t k = 0; k < nkeep; k++) {
      memcpy(keep[k].live, keep[k].hold, keep[k].n * sizeof(double));
    }
    r->observed = 0;
    r->recorded = 0;
    r->last_between = 1;
  }
  s->n = 0;
  return st;
}

static mbsStatus observe(mbsRun *r, mbsError *err) {
  if (r->observed) {
    return MBS_OK;
  }
  mbsStatus st = mbs_solver_consistent(r->m, r->d, err);
  if (st != MBS_OK) {
    char msg[1000];
    mbs_error_format(err, msg, sizeof(msg));
    return mbs_error_set(err, st, NULL, 0, 0,
                         "the constraint Jacobian is singular at t = %.9g, so the record's "
                         "velocities and reactions are not defined: %s",
                         r->d->t, msg);
  }
  mbs_observe(r->m, r->d, &r->o);
  r->observed = 1;
  return MBS_OK;
}

mbsStatus mbs_run_start(mbsRun *r, const char *restart_path, const char *out_path,
                        const mbsInspectLimits *limits, mbsError *err) {
  if (r->d) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "the run has started already");
  }
  mbsModel *m = r->m;
  r->d = mbs_data_create(m, err);
  if (!r->d) {
    return err->status;
  }
  mbsData *d = r->d;
  size_t nq1 = (size_t)(m->nq > 0 ? m->nq : 1);
  /* initial.assemble: the positions at t = 0 onto the joints, then the checks of t = 0 at
   * the assembled positions (overlaps, velocities), before anything is written; a restart
   * assembles too (what is measured from t = 0, joint coordinates and spring angles, is
   * measured from the assembled configuration) and then goes on from its file's state */
  if (m->assemble) {
    if (!(r->q_deck = malloc(nq1 * sizeof(double)))) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    memcpy(r->q_deck, d->q, (size_t)m->nq * sizeof(double));
    if (mbs_solver_assemble(m, d, &r->start.assembly, err) != MBS_OK ||
        mbs_model_set_initial(m, d->q, err) != MBS_OK) {
      return err->status;
    }
    memcpy(d->v, m->v0, (size_t)m->nq * sizeof(double));
    memcpy(d->v_rec, m->v0, (size_t)m->nq * sizeof(double));
    mbs_joint_track(m, d);
    r->start.assembled = 1;
    r->start.q_deck = r->q_deck;
  }
  /* the pivot order of the records' and steps' factorizations, from the configuration both
   * an uninterrupted run and a restart of it start from */
  if (mbs_solver_pin(m, d, err) != MBS_OK) {
    return err->status;
  }
  if (restart_path) {
    mbsInspectLimits lim = {MBS_INSPECT_SECONDS, MBS_INSPECT_MEMORY_MB};
    if (mbs_restart_load(&r->restart, restart_path, out_path, limits ? limits : &lim, m, d,
                         r->notes, sizeof(r->notes), err) != MBS_OK) {
      return err->status;
    }
    r->start.restarted = 1;
    r->start.restart_from = r->restart.from;
    r->n = r->restart.n_first;
    r->start.n_first = r->n;
  }
  /* output.dt: the first record time after the start (a restart's record time included) */
  r->rec_k = m->output_dt > 0.0 ? (long)floor(d->t / m->output_dt + 1e-9) + 1 : 0;
  if (m->output_dt > 0.0 && sampled_init(&r->smp, m) != MBS_OK) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                         "out of memory for the records between steps (output.dt)");
  }
  /* initial.project_velocities: the velocities at t = 0 onto the joints, before anything is
   * written (a restart goes on from the state in its file) */
  r->start.projection_frame = -1;
  if (!r->restart.active) {
    r->start.n_first = 1;
  }
  if (!r->restart.active && m->project_velocities) {
    if (mbs_solver_initial_velocities(m, d, &r->start.projection_change,
                                      &r->start.projection_frame, err) != MBS_OK) {
      return err->status;
    }
    r->start.projected = 1;
  }
  /* the integrator's state at t = 0 for the first record (genalpha: its accelerations; a
   * restart has it from its file) */
  if (!r->restart.active) {
    mbs_solver_start(m, d);
  }
  mbs_error_clear(&r->first_err);
  if (observe(r, &r->first_err) != MBS_OK) {
    /* not even the initial state can be recorded (e.g. it is not finite) */
    memset(&r->o, 0, sizeof(r->o));
    r->failure = MBS_RUN_FAIL_RECORD;
    snprintf(r->status, sizeof(r->status), "failed: %s", r->first_err.msg);
  }
  /* the first record repeats the restart record (reactions and iterations from the file) */
  mbs_restart_first_record(&r->restart, m, d);
  /* the energy balance B = T + V - W + D of the integrator's state is conserved; the
   * relative error is max |B - B0| / E_scale with E_scale = max(|E0|, max_t T*(t)), T* =
   * B0 + W - D - V the kinetic energy the balance allows (an exact solution's T): unlike the
   * kinetic energy itself, it does not grow when the motion blows up */
  double T0, V0;
  mbs_energy(m, d->q, d->v, &T0, &V0);
  V0 += d->contact_potential + d->gravity_unapplied;
  double E0 = r->o.kinetic + r->o.potential;
  r->B0 = T0 + V0 - d->external_work + d->dissipated;
  r->Escale = fmax(fabs(E0), T0);
  r->dEmax = 0.0;
  r->vmax = r->o.violation;
  r->vvmax = r->o.velocity_violation;
  r->warn_t = -1.0;
  r->warn_err = 0.0;
  r->last_gain = 0.0;
  return MBS_OK;
}

mbsStatus mbs_run_attach(mbsRun *r, const char *path, int overwrite, mbsError *err) {
  if (!r->d) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "the run has not started");
  }
  if (r->w) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "the run has an output already");
  }
  const mbsModel *m = r->m;
  size_t nq1 = (size_t)(m->nq > 0 ? m->nq : 1), nj1 = (size_t)(m->njoint > 0 ? m->njoint : 1);
  if (!r->names) {
    r->names = malloc(nq1 * sizeof(char *));
    r->qunits = malloc(nq1 * sizeof(char *));
    r->junits = malloc(nj1 * sizeof(char *));
    r->jrunits = malloc(nj1 * sizeof(char *));
    if (!r->names || !r->qunits || !r->junits || !r->jrunits) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    for (int i = 0; i < m->nq; i++) {
      r->names[i] = mbs_model_coord_name(m, i);
      /* vector nodes: positions m, directors 1; the scalars after them are joint angles
       * (gamma), or a slide_on_beam joint's material coordinate s [m] */
      size_t nl = strlen(r->names[i]);
      int slide = nl > 2 && strcmp(r->names[i] + nl - 2, ".s") == 0;
      r->qunits[i] = i < 3 * m->nnode ? (m->node_position[i / 3] ? "m" : "1")
                     : slide          ? "m"
                                      : "rad";
    }
    for (int j = 0; j < m->njoint; j++) {
      mbs_record_joint_units(m->joint_type[j], &r->junits[j], &r->jrunits[j]);
    }
  }
  char dropped[1024];
  mbs_model_describe_dropped(m, dropped, sizeof(dropped));
  mbsOutputInfo info = {
      .version = MBS_VERSION,
      .redundant_rows = dropped,
      .title = r->deck.title,
      .deck_text = r->deck.text ? r->deck.text : "",
      .integrator = mbs_integrator_word(m->integrator),
      .integrator_reason = m->integrator_reason,
      .linear_solver = mbs_linear_solver_word(m->linear_solver),
      .dt = m->dt,
      .t_end = m->t_end,
      .n_coordinates = m->nq,
      .n_constraints = m->ncon,
      .n_dof = m->ndof,
      .write_xdmf = m->output_xdmf,
      .deflate_level = m->output_compression > 0 ? m->output_compression : -1,
      .restart_from = r->restart.from,
      .overwrite = overwrite,
  };
  r->w = mbs_output_create(path, &info, err);
  if (!r->w) {
    return err->status;
  }
  /* the datasets and sidecar grids, registered by what owns them (record.c) */
  if (mbs_recorder_describe(&r->rec, r->w, m, r->d, r->names, r->qunits, r->junits, r->jrunits,
                            err) != MBS_OK ||
      mbs_output_flush(r->w, err) != MBS_OK) {
    mbs_output_close(r->w, NULL);
    r->w = NULL;
    mbs_recorder_free(&r->rec);
    return err->status;
  }
  r->nrec = 0;
  r->recorded = 0;
  return MBS_OK;
}

mbsStatus mbs_run_detach(mbsRun *r, long *nrecords, mbsError *err) {
  if (nrecords) {
    *nrecords = r->w ? mbs_output_count(r->w) : 0;
  }
  if (!r->w) {
    return MBS_OK;
  }
  mbsStatus st = mbs_output_set_status(r->w, mbs_run_status(r), err);
  mbsError cerr;
  mbsStatus cst = mbs_output_close(r->w, st == MBS_OK ? err : &cerr);
  r->w = NULL;
  mbs_recorder_free(&r->rec);
  return st != MBS_OK ? st : cst;
}

mbsStatus mbs_run_record(mbsRun *r, mbsError *err) {
  if (!r->w) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "the run has no output to record to");
  }
  if (r->recorded) {
    return MBS_OK;
  }
  if (r->d->step == 0 && r->first_err.status != MBS_OK) {
    *err = r->first_err;
    return err->status;
  }
  mbsStatus st = observe(r, err);
  if (st != MBS_OK) {
    return st;
  }
  r->vvmax = fmax(r->vvmax, r->o.velocity_violation);
  /* the rows, with the integrator's state (multipliers, its own velocities, genalpha's
   * accelerations): what a restart from this record needs */
  mbsStateArray state[MBS_STATE_MAX];
  (void)mbs_recorder_put(&r->rec, r->m, r->d, &r->o, state);
  if (r->rec.action_nomem) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                         "out of memory keeping the rows of /solver/action at t=%.9g", r->d->t);
  }
  st = mbs_output_append(r->w, r->d->t, err);
  if (st == MBS_OK) {
    r->recorded = 1;
    r->nrec++;
  }
  return st;
}

int mbs_run_done(const mbsRun *r) {
  return !r->d || r->failure != MBS_RUN_FAIL_NONE || r->interrupted || r->n > r->nsteps;
}

mbsRunFailure mbs_run_failure(const mbsRun *r) {
  return r->failure;
}

void mbs_run_interrupt(mbsRun *r) {
  if (r->failure == MBS_RUN_FAIL_NONE && !r->interrupted) {
    r->interrupted = 1;
    snprintf(r->status, sizeof(r->status), "interrupted at t=%.9g", r->d ? r->d->t : 0.0);
  }
}

static void settle(mbsRun *r);

/* the energy monitor after a step: 1 when the energy grew beyond solver.energy_balance.
 * unstable (the status says so) */
static int monitor(mbsRun *r) {
  const mbsModel *m = r->m;
  mbsData *d = r->d;
  double T, V;
  mbs_energy(m, d->q, d->v, &T, &V);
  V += d->contact_potential + d->gravity_unapplied;
  double gain = T + V - d->external_work + d->dissipated - r->B0;
  r->Escale = fmax(r->Escale, r->B0 + d->external_work - d->dissipated - V);
  r->dEmax = fmax(r->dEmax, fabs(gain));
  r->last_gain = gain;
  r->vmax = fmax(r->vmax, mbs_constraint_violation(m, d->q, d->t, NULL));
  /* a static run has no kinetic energy, and V - V0 - W vanishes only along a path that
   * starts at an equilibrium (static.c): its balance is reported, not checked */
  const mbsIntegratorPolicy *policy = mbs_integrator_policy(m->integrator);
  int checked = !policy->equilibrium;
  double Escale = r->Escale;
  if (checked && Escale > 0.0 && fabs(gain) > m->energy_warning * Escale && r->warn_t < 0.0) {
    r->warn_t = d->t;
    r->warn_err = fabs(gain) / Escale;
  }
  int unstable = checked && Escale > 0.0 && gain > m->energy_unstable * Escale;
  if (unstable) {
    snprintf(r->status, sizeof(r->status),
             "failed: unstable at t=%.9g: the energy grew by %.3e J beyond the work of the "
             "loads (%.3g times the energy scale %.3e J; solver.energy_balance.unstable = %g). "
             "%s",
             d->t, gain, gain / Escale, Escale, m->energy_unstable,
             policy->unstable_advice ? policy->unstable_advice : "Try a smaller dt");
  }
  return unstable;
}

mbsStatus mbs_run_step(mbsRun *r, mbsError *err) {
  if (mbs_run_done(r)) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         r->d ? "the run is over (%s)" : "the run has not started%s",
                         r->d ? r->status : "");
  }
  const mbsModel *m = r->m;
  mbsData *d = r->d;
  long n = r->n;
  double t_next = (n == r->nsteps) ? m->t_end : (double)n * m->dt;
  mbsStatus st;
  if (m->output_dt > 0.0) {
    Visit vis = {r, t_next};
    sampled_mark(&r->smp, m, d);
    r->smp.n = 0;
    st = mbs_solver_advance_each(m, d, t_next, visit_step, &vis, err);
    if (st == MBS_OK && r->smp.nomem) {
      st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                         "out of memory keeping the records between steps (output.dt)");
    }
  } else {
    st = mbs_solver_advance(m, d, t_next, err);
  }
  if (st != MBS_OK) {
    char msg[1200];
    mbs_error_format(err, msg, sizeof(msg));
    snprintf(r->status, sizeof(r->status), "failed: %s", msg);
    r->failure = MBS_RUN_FAIL_SOLVER;
    return st;
  }
  d->t = t_next;
  mbs_joint_track(m, d);
  /* the step ends in the state a restart from a record here reads: the integrator's
   * exported arrays imported back (mu = dt^2 lambda from the lambda written, fresh pivots
   * for the next factorization), at every step whether or not a record is written, so the
   * trajectory does not depend on output.every, on a run advanced in pieces or on a
   * restart */
  mbsStateArray state[MBS_STATE_MAX];
  int nstate = mbs_solver_state_export(m, d, state, MBS_STATE_MAX);
  st = mbs_solver_state_import(m, d, state, nstate, NULL, 0, err);
  if (st != MBS_OK) {
    char msg[1200];
    mbs_error_format(err, msg, sizeof(msg));
    snprintf(r->status, sizeof(r->status), "failed: %s", msg);
    r->failure = MBS_RUN_FAIL_SOLVER;
    return st;
  }
  r->n = n + 1;
  r->observed = 0;
  r->recorded = 0;
  int unstable = monitor(r);
  int due = n % m->output_every == 0 || n == r->nsteps;
  if (m->output_dt > 0.0) {
    /* the record times inside the step were sampled; one at its end is an ordinary record */
    double eps = 1e-9 * m->dt;
    due = n == r->nsteps || fabs((double)r->rec_k * m->output_dt - t_next) <= eps;
    while ((double)r->rec_k * m->output_dt <= t_next + eps) {
      r->rec_k++;
    }
    if (r->w && r->smp.n > 0) {
      st = record_samples(r, err);
      if (st != MBS_OK) {
        snprintf(r->status, sizeof(r->status), "failed: %s", err->msg);
        r->failure = MBS_RUN_FAIL_RECORD;
        return st;
      }
    }
    r->smp.n = 0;
  }
  if (r->w && (due || unstable)) {
    r->last_between = 0;
    st = mbs_run_record(r, err);
    if (st != MBS_OK) {
      snprintf(r->status, sizeof(r->status), "failed: %s", err->msg);
      r->failure = MBS_RUN_FAIL_RECORD;
      return st;
    }
  } else if (due) {
    /* no output: the contacts' sums start afresh where a record would be */
    mbs_solver_contacts_clear(d);
  }
  if (unstable) {
    r->failure = MBS_RUN_FAIL_UNSTABLE;
    return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0, "%s",
                         r->status + strlen("failed: "));
  }
  settle(r);
  return MBS_OK;
}

mbsStatus mbs_run_advance(mbsRun *r, double t, mbsError *err) {
  if (!r->d) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "the run has not started");
  }
  while (!mbs_run_done(r) && r->d->t < t - 1e-9 * r->m->dt) {
    mbsStatus st = mbs_run_step(r, err);
    if (st != MBS_OK) {
      return st;
    }
  }
  if (r->failure != MBS_RUN_FAIL_NONE) {
    return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0, "%s", r->status);
  }
  return MBS_OK;
}

const char *mbs_run_status(const mbsRun *r) {
  return r->status;
}

/* the status of a run that took its last step: "completed", or with a warning when the
 * energy balance went beyond solver.energy_balance.warning */
static void settle(mbsRun *r) {
  if (r->failure != MBS_RUN_FAIL_NONE || r->interrupted || r->n <= r->nsteps) {
    return;
  }
  if (r->warn_t >= 0.0) {
    snprintf(r->status, sizeof(r->status),
             "completed with warning: the energy balance |E - E0 - W + D| reached %.3e of the "
             "energy scale (%.3e at t=%.9g, above solver.energy_balance.warning = %g)",
             r->dEmax / r->Escale, r->warn_err, r->warn_t, r->m->energy_warning);
  } else {
    snprintf(r->status, sizeof(r->status), "completed");
  }
}

mbsStatus mbs_run_finish(mbsRun *r, long *nrecords, mbsError *err) {
  settle(r);
  if (r->w && r->failure == MBS_RUN_FAIL_NONE && r->last_between && r->d) {
    /* the last record was between steps (output.dt): one at the step the run stopped at, so
     * that a restart can go on from the file */
    r->last_between = 0;
    if (mbs_run_record(r, err) != MBS_OK) {
      mbs_run_detach(r, nrecords, NULL);
      return err->status;
    }
  }
  if (r->failure == MBS_RUN_FAIL_NONE && !r->interrupted && r->d && r->n <= r->nsteps) {
    snprintf(r->status, sizeof(r->status), "stopped at t=%.9g before t_end", r->d->t);
  }
  r->finished = 1;
  return mbs_run_detach(r, nrecords, err);
}

/* printf into buf at *len, keeping the length it needed */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void put(char *buf, size_t n, size_t *len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(*len < n ? buf + *len : NULL, *len < n ? n - *len : 0, fmt, ap);
  va_end(ap);
  if (k > 0) {
    *len += (size_t)k;
  }
}

size_t mbs_run_summary(const mbsRun *r, char *buf, size_t n) {
  size_t len = 0;
  if (n > 0) {
    buf[0] = '\0';
  }
  const mbsModel *m = r->m;
  const mbsData *d = r->d;
  put(buf, n, &len, "status:       %s\n", r->status);
  if (!d) {
    return len;
  }
  put(buf, n, &len, "steps:        %ld to t = %.6g s (%s = %g s)\n", d->step, d->t,
      d->control ? "largest step dt" : "dt", m->dt);
  put(buf, n, &len,
      "newton:       %ld iterations (%.2f per step), %ld factorizations, %ld solves\n",
      d->newton_total, d->step > 0 ? (double)d->newton_total / (double)d->step : 0.0,
      d->factorizations, d->solves);
  put(buf, n, &len, "linear:       %s sparse LU (solver.linear_solver)\n",
      mbs_linear_solver_word(m->linear_solver));
  if (d->control) {
    const mbsStepControl *c = d->control;
    put(buf, n, &len,
        "error control: tolerance %g: %ld steps accepted, %ld rejected by the error estimate, "
        "%ld retried after Newton failures; step min %.3g s, mean %.3g s, max %.3g s\n",
        m->tolerance, c->accepted, c->rejected, d->rejected, c->h_min,
        c->accepted > 0 ? c->h_sum / (double)c->accepted : 0.0, c->h_max);
  } else {
    put(buf, n, &len, "step control: %ld steps rejected and retried with dt/2\n", d->rejected);
  }
  size_t arena_size, arena_high;
  mbs_solver_arena_usage(d, &arena_size, &arena_high);
  put(buf, n, &len, "step storage: %zu of %zu bytes (high-water mark of the per-step arena)\n",
      arena_high, arena_size);
  put(buf, n, &len, "constraints:  max violation %.3e, velocities %.3e (records%s)\n", r->vmax,
      r->vvmax,
      mbs_integrator_policy(m->integrator)->equilibrium && r->vvmax > 0.0
          ? "; static: at rest, so this is the rate of the prescribed motions"
          : "");
  if (m->ncontact_paired > 0) {
    put(buf, n, &len,
        "contacts:     %d shapes in pairs, at most %d points in one step's contact problem, "
        "%ld solver iterations (%.2f per step), smallest gap %.3e m, dissipated %.6g J "
        "(impacts %.6g J, friction %.6g J)\n",
        m->nshape_paired, d->contact_active_max, d->contact_sweeps,
        d->step > 0 ? (double)d->contact_sweeps / (double)d->step : 0.0, d->contact_gap_min,
        d->contact_dissipated, d->impact_dissipated, d->friction_dissipated);
    if (d->contact_stalled > 0) {
      put(buf, n, &len,
          "contact solver: %ld steps stopped short of solver.moreau.contact_tolerance where "
          "the solver stalled (largest residual %.3e of the velocity scale, accepted up to "
          "1e-06, 1e-04 in steps solved with a compliance)\n",
          d->contact_stalled, d->contact_stall_max);
    }
    if (d->contact_regularized > 0) {
      put(buf, n, &len,
          "contact solver: %ld steps solved a pile's contact problem with a compliance "
          "of 1e-6 of its Delassus matrix (a jam of redundant frictional contacts the "
          "rigid problem's iterations did not resolve; residual in the rigid problem at "
          "most 1e-4 of the velocity scale)\n",
          d->contact_regularized);
    }
    if (d->contact_admitted > 0) {
      put(buf, n, &len,
          "contact steps: %ld points taken into a step's contact problem when the impulses of "
          "their neighbours closed them\n",
          d->contact_admitted);
    }
    if (d->retried > 0) {
      put(buf, n, &len, "contact steps: %ld tried again with contact points the first try missed\n",
          d->retried);
    }
  }
  if (mbs_integrator_policy(m->integrator)->numerical_dissipation &&
      d->numerical_dissipated > 0.0) {
    put(buf, n, &len,
        "numerical:    %.6g J taken out by the theta method's own damping (theta = %g; "
        "counted in /energy/dissipated and /energy/numerical_dissipation)\n",
        d->numerical_dissipated, m->moreau_theta);
  }
  if (m->nengage > 0) {
    put(buf, n, &len,
        "captures:     %.6g J taken out by the plastic captures of engaging joints (counted "
        "in /energy/dissipated and /energy/capture_dissipated)\n",
        d->capture_dissipated);
    if (d->phase_note[0]) {
      put(buf, n, &len, "redundant:    dropped at engagement or release, until the next: %s\n",
          d->phase_note);
    }
  }
  double denom = r->Escale;
  if (mbs_integrator_policy(m->integrator)->equilibrium) {
    put(buf, n, &len,
        "energy:       not checked (static: no kinetic energy; V - W changed by %.6g J, "
        "W = %.6g J the work of the loads by the trapezoidal rule along the equilibria: "
        "zero change only along a path that starts at an equilibrium)\n",
        r->last_gain, d->external_work);
  } else if (denom > 0.0) {
    put(buf, n, &len,
        "energy:       relative error %.3e (max |E - E0 - W + D| / %.4g J, the largest of "
        "|E0| and the kinetic energy the balance allows)%s\n",
        r->dEmax / denom, denom, r->warn_t >= 0.0 ? " WARNING" : "");
  } else {
    put(buf, n, &len, "energy:       relative error 0 (the system never moved)\n");
  }
  double wall = now_seconds() - r->wall0;
  put(buf, n, &len, "wall time:    %.3f s (%.0f steps/s)\n", wall,
      (double)d->step / fmax(wall, 1e-9));
  return len;
}

/* ---- observation ---- */

/* copy k values of src into out (up to n) and return k */
static long give(const double *src, long k, double *out, long n) {
  if (out && n > 0 && k > 0) {
    memcpy(out, src, (size_t)(k < n ? k : n) * sizeof(double));
  }
  return k;
}

long mbs_run_get(mbsRun *r, const char *what, double *out, long n, mbsError *err) {
  const mbsModel *m = r->m;
  mbsData *d = r->d;
  if (!d) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "the run has not started");
    return -1;
  }
  long nq = m->nq, nb = m->nbody, nj = m->njoint, nl = m->nload;
  /* the integrator's state: no observation needed */
  if (strcmp(what, "time") == 0) {
    return give(&d->t, 1, out, n);
  }
  if (strcmp(what, "q") == 0) {
    return give(d->q, nq, out, n);
  }
  if (strcmp(what, "scheme_velocity") == 0) {
    return give(d->v, nq, out, n);
  }
  if (strcmp(what, "dt") == 0) {
    return give(&m->dt, 1, out, n);
  }
  if (strcmp(what, "t_end") == 0) {
    return give(&m->t_end, 1, out, n);
  }
  if (strcmp(what, "step") == 0) {
    double s = (double)d->step;
    return give(&s, 1, out, n);
  }
  if (strcmp(what, "energy/strain") == 0) {
    double e = mbs_beam_strain_energy(m, d->q);
    return give(&e, 1, out, n);
  }
  /* the record's quantities */
  if (observe(r, err) != MBS_OK) {
    return -1;
  }
  const mbsObservables *o = &r->o;
  double total = o->kinetic + o->potential;
  const struct {
    const char *name;
    const double *data;
    long count;
  } table[] = {
      {"v", d->v_rec, nq},
      {"bodies/position", d->body_pos, 3 * nb},
      {"bodies/orientation", d->body_rot, 9 * nb},
      {"bodies/velocity", d->body_vel, 3 * nb},
      {"bodies/angular_velocity", d->body_omega, 3 * nb},
      {"joints/reaction", d->joint_reaction, 6 * nj},
      {"joints/coordinates", d->joint_coord, 3 * nj},
      {"joints/rates", d->joint_rate, 3 * nj},
      {"loads/force", d->load_force, 6 * nl},
      {"energy/kinetic", &o->kinetic, 1},
      {"energy/potential", &o->potential, 1},
      {"energy/total", &total, 1},
      {"energy/external_work", &o->external_work, 1},
      {"energy/dissipated", &o->dissipated, 1},
      {"energy/contact_dissipated", &o->contact_dissipated, 1},
      {"energy/impact_dissipated", &o->impact_dissipated, 1},
      {"energy/friction_dissipated", &o->friction_dissipated, 1},
      {"energy/numerical_dissipation", &o->numerical_dissipated, 1},
      {"energy/capture_dissipated", &d->capture_dissipated, 1},
      {"momentum/linear", o->linear_momentum, 3},
      {"momentum/angular", o->angular_momentum, 3},
      {"constraints/violation", &o->violation, 1},
      {"constraints/velocity_violation", &o->velocity_violation, 1},
  };
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    if (strcmp(what, table[i].name) == 0) {
      return give(table[i].data, table[i].count, out, n);
    }
  }
  if (strcmp(what, "joints/position") == 0) {
    double *p = malloc((size_t)(3 * nj + 1) * sizeof(double));
    if (!p) {
      mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
      return -1;
    }
    mbs_record_extras(m, d, p);
    long k = give(p, 3 * nj, out, n);
    free(p);
    return k;
  }
  if (strcmp(what, "contacts") == 0) {
    /* one row per contact of the last step and those since the last record (run.h) */
    const mbsContactRecord *rec;
    int nc = mbs_solver_contacts(d, &rec);
    long k = 0;
    for (int c = 0; c < nc; c++) {
      const mbsContactRecord *x = &rec[c];
      double row[MBS_RUN_CONTACT_COLS] = {
          x->pair.a,    x->pair.b,    x->status,    x->point[0],  x->point[1],
          x->point[2],  x->normal[0], x->normal[1], x->normal[2], x->gap,
          x->impulse[0], x->impulse[1], x->impulse[2], x->feature};
      for (int i = 0; i < MBS_RUN_CONTACT_COLS; i++, k++) {
        if (out && k < n) {
          out[k] = row[i];
        }
      }
    }
    return k;
  }
  mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "no quantity '%s' in a run", what);
  return -1;
}

const char *mbs_run_name(const mbsRun *r, const char *kind, int i) {
  const mbsModel *m = r->m;
  if (i < 0) {
    return NULL;
  }
  if (strcmp(kind, "bodies") == 0) {
    return i < m->nbody ? m->body_name[i] : NULL;
  }
  if (strcmp(kind, "joints") == 0) {
    return i < m->njoint ? m->joint_name[i] : NULL;
  }
  if (strcmp(kind, "loads") == 0) {
    return i < m->nload ? m->load_name[i] : NULL;
  }
  if (strcmp(kind, "coordinates") == 0) {
    return i < m->nq ? mbs_model_coord_name(m, i) : NULL;
  }
  if (strcmp(kind, "shapes") == 0) {
    return i < m->nshape ? m->shape[i].name : NULL;
  }
  if (strcmp(kind, "beams") == 0) {
    return i < m->nbeam ? m->beam[i].name : NULL;
  }
  return NULL;
}
