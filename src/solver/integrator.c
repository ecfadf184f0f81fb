/* integrator.c: the integrator table, the public entry points that dispatch through it, and
 * the frame the implicit schemes share (the start and end of a step, the state they export
 * and import, dense output). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "solver/integrator.h"
#include "solver/system.h"
#include "util/arena.h"

/* one entry per integrator value; auto is resolved when the model is compiled
 * (model/compile.c), so it has no functions and data creation refuses it */
static const mbsIntegratorTable auto_entry = {.name = "auto"};


static const mbsIntegratorTable *const table[] = {
    [MBS_INTEGRATOR_AUTO] = &auto_entry,
    [MBS_INTEGRATOR_EM] = &mbs_integrator_em,
    [MBS_INTEGRATOR_MIDPOINT] = &mbs_integrator_midpoint,
    [MBS_INTEGRATOR_EULER] = &mbs_integrator_euler,
    [MBS_INTEGRATOR_GENALPHA] = &mbs_integrator_genalpha,
    [MBS_INTEGRATOR_STATIC] = &mbs_integrator_static,
    [MBS_INTEGRATOR_MOREAU] = &mbs_integrator_moreau,
    [MBS_INTEGRATOR_SPACETIME] = &mbs_integrator_spacetime,
};
_Static_assert(sizeof(table) / sizeof(table[0]) == MBS_INTEGRATOR_COUNT,
               "the integrator table needs one entry per mbsIntegrator value");

const mbsIntegratorTable *mbs_integrator_table(mbsIntegrator k) {
  if ((int)k < 0 || k >= MBS_INTEGRATOR_COUNT || !table[k] || !table[k]->step) {
    return NULL;
  }
  return table[k];
}

/* ---- public entry points ---- */

void mbs_solver_start(const mbsModel *m, mbsData *d) {
  if (d->integrator->start) {
    d->integrator->start(m, d);
  }
}

/* the control laws' errors e_k at (q, t) into ctrl_state[nctrl + k]; with t0 >= 0, first the
 * trapezoidal rule z_k += (t - t0)/2 (e_k(t0) + e_k(t)) over the step just taken; then t_n = t
 * (model.h ctrl_state) */
static void control_update(const mbsModel *m, const double *q, double t, int integrate) {
  int n = m->nctrl;
  double *s = m->ctrl_state, h = t - s[2 * n];
  for (int i = 0; i < m->nelem; i++) {
    const mbsElem *el = &m->elem[i];
    if (el->kind != MBS_ELEM_JOINT_CONTROL) {
      continue;
    }
    int k = mbs_joint_control_slot(el);
    double e1 = mbs_joint_control_error(m, el, q, t);
    if (integrate) {
      s[k] += 0.5 * h * (s[n + k] + e1);
    }
    s[n + k] = e1;
  }
  s[2 * n] = t;
}

/* the rows a new phase dropped as redundant, for the run's summary (d->phase_note) */
static void note_phase_dropped(const mbsModel *m, mbsData *d) {
  char rows[256];
  if (mbs_model_describe_phase_dropped(m, rows, sizeof(rows)) == 0) {
    return;
  }
  size_t len = strlen(d->phase_note);
  if (len + 1 < sizeof(d->phase_note)) {
    snprintf(d->phase_note + len, sizeof(d->phase_note) - len, "%st = %.9g: %s",
             len > 0 ? "; " : "", d->t, rows);
  }
}

/* Joints that engage or release at the start of this step (model.h joint_engage): a joint
 * holds from the first step that starts at t >= from until the first that starts at t >=
 * until (1e-9 dt below them counts: the step grid's sums of dt). A joint that engages takes
 * its frames from the configuration now and the velocities jump onto its constraints with
 * the impulse of a plastic capture (mbs_solver_capture); one that releases leaves its rows
 * (zero rows, lambda 0) without an impulse. Then the Newton matrix's Hessian coefficients
 * follow the rows, and the scheme restarts what it carries (genalpha: its accelerations). */
static mbsStatus switch_joints(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  double tol = 1e-9 * dt;
  int changed = 0, engaged = 0;
  for (int j = 0; j < m->njoint; j++) {
    if (!mbs_joint_switches(m, j)) {
      continue;
    }
    int want = d->t >= m->joint_from[j] - tol && !(d->t >= m->joint_until[j] - tol);
    if (want == mbs_joint_holds(m, j)) {
      continue;
    }
    if (want) {
      if (mbs_model_joint_engage(m, j, d->q) != MBS_OK) {
        return mbs_error_set(err, MBS_ERR_SOLVER, m->deck_path, m->joint_mark[j].line,
                             m->joint_mark[j].col,
                             "joint '%s' cannot engage at t = %.9g: the directors of its first "
                             "body are singular there",
                             m->joint_name[j], d->t);
      }
      engaged = 1;
    } else {
      mbs_model_joint_release(m, j);
      for (int r = m->joint_con[j]; r < m->joint_con[j] + m->joint_ncon[j]; r++) {
        d->lambda[r] = 0.0;
      }
    }
    changed = 1;
  }
  if (!changed) {
    return MBS_OK;
  }
  /* a new phase: its redundant rows, at the configuration of the capture (the positions do
   * not jump), before the capture needs the KKT matrix; rows dropped for it carry no force */
  mbsStatus rst = mbs_model_phase_redundant(m, d->q, d->t, err);
  if (rst != MBS_OK) {
    return rst;
  }
  for (int r = 0; r < m->nrow; r++) {
    if (mbs_row_released(m, r)) {
      d->lambda[r] = 0.0;
    }
  }
  note_phase_dropped(m, d);
  mbs_system_refresh_rows(d->sys, m);
  d->factor_valid = 0;
  if (engaged) {
    mbsStatus st = mbs_solver_capture(m, d, err);
    if (st != MBS_OK) {
      return st;
    }
  }
  if (d->integrator->rows_changed) {
    d->integrator->rows_changed(m, d);
  }
  return MBS_OK;
}

mbsStatus mbs_solver_step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  /* the step's own Newton iterations: a try that fails before its Newton iteration (moreau's
   * contact problem) took none, and mbs_solver_advance adds d->iterations of every try */
  d->iterations = 0;
  if (m->nengage > 0) {
    mbsStatus st = switch_joints(m, d, dt, err);
    if (st != MBS_OK) {
      return st;
    }
  }
  if (m->nctrl > 0) {
    control_update(m, d->q, d->t, 0);
  }
  mbsStatus st = d->integrator->step(m, d, dt, err);
  if (st == MBS_OK && m->nctrl > 0) {
    control_update(m, d->q, d->t, 1);
  }
  return st;
}

int mbs_solver_state_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max) {
  int n = d->integrator->state_export(m, d, out, max);
  /* the engagement state of joints that engage and release (model.h joint_engage) */
  if (m->nengage > 0 && n < max) {
    out[n++] = (mbsStateArray){.name = "joint_engagement",
                               .length = MBS_JOINT_ENGAGE_LEN * m->njoint,
                               .data = m->joint_engage,
                               .units = "1, m"};
  }
  /* the control laws' error integrals z_k at t_n */
  if (m->nctrl > 0 && n < max) {
    out[n++] = (mbsStateArray){.name = "control_integral",
                               .length = m->nctrl,
                               .data = m->ctrl_state,
                               .units = "rad s or m s"};
  }
  /* error control: the next step and the history of step ends its estimate extrapolates */
  if (d->control && n + 2 <= max) {
    out[n++] = (mbsStateArray){
        .name = "step_control", .length = d->control->nodes, .data = d->control->carry,
        .units = "s"};
    out[n++] = (mbsStateArray){.name = "step_history",
                               .length = d->control->nodes * m->nq,
                               .data = d->control->hist,
                               .units = d->control->nodes == 5
                                            ? "q, q/s, q/s^2, q/s^3, q/s^4"
                                            : "q, q/s, q/s^2"};
  }
  return n;
}

mbsStatus mbs_solver_state_import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                                  char *missing, size_t nmissing, mbsError *err) {
  if (missing && nmissing > 0) {
    missing[0] = '\0';
  }
  mbsStatus st = d->integrator->state_import(m, d, in, n, missing, nmissing, err);
  if (st != MBS_OK) {
    return st;
  }
  /* joints that engage and release: their state and frames, and their rows from them */
  if (m->nengage > 0) {
    const mbsStateArray *z = mbs_state_find(in, n, "joint_engagement");
    if (z && z->length == MBS_JOINT_ENGAGE_LEN * m->njoint) {
      if (z->data != m->joint_engage) {
        memcpy(m->joint_engage, z->data,
               (size_t)(MBS_JOINT_ENGAGE_LEN * m->njoint) * sizeof(double));
        for (int j = 0; j < m->njoint; j++) {
          if (mbs_joint_switches(m, j)) {
            mbs_model_joint_apply(m, j);
          }
        }
        mbs_system_refresh_rows(d->sys, m);
        d->factor_valid = 0;
      }
    } else if (missing && nmissing > 0) {
      size_t len = strlen(missing);
      snprintf(missing + len, nmissing - len, "%sjoint_engagement", len > 0 ? ", " : "");
    }
  }
  if (d->control) {
    const mbsStateArray *c = mbs_state_find(in, n, "step_control");
    const mbsStateArray *h = mbs_state_find(in, n, "step_history");
    int nodes = d->control->nodes;
    if (c && h && c->length == nodes && h->length == nodes * m->nq) {
      if (c->data != d->control->carry) {
        memcpy(d->control->carry, c->data, (size_t)nodes * sizeof(double));
        memcpy(d->control->hist, h->data, (size_t)(nodes * m->nq) * sizeof(double));
      }
    } else if (missing && nmissing > 0) {
      /* without them the controller starts afresh, as at t = 0 */
      size_t len = strlen(missing);
      snprintf(missing + len, nmissing - len, "%sstep_control, step_history (the steps are "
               "chosen afresh)", len > 0 ? ", " : "");
      d->control->carry[0] = 0.0;
    }
  }
  if (m->nctrl <= 0) {
    return st;
  }
  const mbsStateArray *z = mbs_state_find(in, n, "control_integral");
  if (z && z->length == m->nctrl) {
    if (z->data != m->ctrl_state) {
      memcpy(m->ctrl_state, z->data, (size_t)m->nctrl * sizeof(double));
    }
  } else if (missing && nmissing > 0) {
    size_t len = strlen(missing);
    snprintf(missing + len, nmissing - len, "%scontrol_integral", len > 0 ? ", " : "");
  }
  return st;
}

int mbs_solver_contacts(const mbsData *d, const mbsContactRecord **rec) {
  *rec = NULL;
  return d->integrator->contacts ? d->integrator->contacts(d, rec) : 0;
}

void mbs_solver_contacts_clear(mbsData *d) {
  if (d->integrator->contacts_clear) {
    d->integrator->contacts_clear(d);
  }
}

void mbs_solver_interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v) {
  d->integrator->interpolate(m, d, t, q, v);
}

/* ---- the implicit schemes' workspace ---- */

mbsStatus mbs_implicit_work_init(const mbsModel *m, mbsImplicitWork *w) {
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1), nc = (size_t)(m->ncon > 0 ? m->ncon : 1);
  memset(w, 0, sizeof(*w));
  w->mu = calloc(nc, sizeof(double));
  w->mu_prev = calloc(nc, sizeof(double));
  w->q_prev = calloc(nq, sizeof(double));
  w->v_prev = calloc(nq, sizeof(double));
  w->dq = calloc(nq, sizeof(double));
  w->v_hist = calloc(nq, sizeof(double));
  w->pred = calloc(nq, sizeof(double));
  w->qhat = calloc(nq, sizeof(double));
  w->qbase = calloc(nq, sizeof(double));
  w->vbase = calloc(nq, sizeof(double));
  w->qm = calloc(nq, sizeof(double));
  w->vm = calloc(nq, sizeof(double));
  if (!w->mu || !w->mu_prev || !w->q_prev || !w->v_prev || !w->dq || !w->v_hist || !w->pred ||
      !w->qhat || !w->qbase || !w->vbase || !w->qm || !w->vm) {
    mbs_implicit_work_free(w);
    return MBS_ERR_NOMEM;
  }
  for (int e = 0; e < m->nmass; e++) {
    w->mmax = fmax(w->mmax, fabs(m->mass_val[e]));
  }
  return MBS_OK;
}

void mbs_implicit_work_free(mbsImplicitWork *w) {
  double *p[] = {w->mu,     w->mu_prev,  w->q_prev,   w->v_prev, w->dq,
                 w->qhat,   w->qbase,    w->vbase,    w->qm,     w->vm,
                 w->v_hist, w->pred,     w->inc_hist, w->lam_hist, w->mu_pred};
  for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
    free(p[i]);
  }
  memset(w, 0, sizeof(*w));
}

/* ---- the frame of an implicit step ---- */

void mbs_implicit_begin(const mbsModel *m, mbsData *d, mbsImplicitWork *w) {
  mbs_arena_reset(d->arena);
  memcpy(w->q_prev, d->q, (size_t)m->nq * sizeof(double));
  memcpy(w->v_prev, d->v, (size_t)m->nq * sizeof(double));
  memcpy(w->mu_prev, w->mu, (size_t)m->ncon * sizeof(double));
}

mbsStatus mbs_implicit_fail(const mbsModel *m, mbsData *d, mbsImplicitWork *w, mbsStatus st,
                            const char *why, double t0, double dt, mbsError *err) {
  int wr;
  double viol = mbs_constraint_violation(m, d->q, t0 + dt, &wr);
  char wdesc[256];
  mbs_constraint_describe(m, wr, wdesc, sizeof(wdesc));
  /* a row that is not finite: a slide_on_beam joint's point has left the beam elements it
   * reaches (its rows are NaN there, slide.c), which the linear solver sees as a singular
   * matrix */
  int erow = 0, el = wr >= 0 ? mbs_row_element(m, wr, &erow) : -1;
  const char *hint = isfinite(viol) ? ""
                     : el >= 0 && m->elem[el].kind == MBS_ELEM_SLIDE
                         ? " (its point has left the beam elements it reaches: a larger `reach`, "
                           "or none for the whole beam)"
                         : " (not finite)";
  mbs_error_set(err, st, NULL, 0, 0,
                "%s at t = %.9g (step %ld, dt = %.3g, %s); worst constraint: %s with |g| = %.3e%s",
                why, t0, d->step + 1, dt, d->integrator->name, wdesc, viol, hint);
  memcpy(d->q, w->q_prev, (size_t)m->nq * sizeof(double));
  memcpy(d->v, w->v_prev, (size_t)m->nq * sizeof(double));
  memcpy(w->mu, w->mu_prev, (size_t)m->ncon * sizeof(double));
  d->factor_valid = 0;
  return st;
}

/* the Newton problem of an implicit step: unknowns [q1 - q0; mu] */
typedef struct {
  const mbsModel *m;
  mbsData *d;
  mbsImplicitWork *w;
  const mbsSchemeWeights *s;
  double dt, t0;
  const double *pred; /* predictor of q1 - q0; NULL: dt v0 */
} StepProblem;

static void step_predict(StepProblem *p) {
  mbsImplicitWork *w = p->w;
  double *q = p->d->q;
  for (int i = 0; i < p->m->nq; i++) {
    w->dq[i] = p->pred ? p->pred[i] : p->dt * w->v_prev[i];
    q[i] = w->q_prev[i] + w->dq[i];
  }
  if (w->use_mu_pred) {
    memcpy(w->mu, w->mu_pred, (size_t)p->m->ncon * sizeof(double));
  }
}

static double step_assemble(void *ctx, int with_jac) {
  StepProblem *p = ctx;
  return mbs_assemble(p->m, p->d, p->w, p->s, p->dt, p->t0, with_jac);
}

static void step_scales(void *ctx, double *qn, double *inertia) {
  StepProblem *p = ctx;
  *qn = mbs_norm_inf(p->d->q, p->m->nq);
  if (inertia) {
    *inertia = p->s->cM * p->w->mmax * mbs_norm_inf(p->w->dq, p->m->nq);
  }
}

static void step_apply(void *ctx, const double *dx) {
  StepProblem *p = ctx;
  int nq = p->m->nq;
  mbsImplicitWork *w = p->w;
  for (int i = 0; i < nq; i++) {
    w->dq[i] -= dx[i];
    p->d->q[i] = w->q_prev[i] + w->dq[i];
  }
  for (int i = 0; i < p->m->ncon; i++) {
    w->mu[i] -= dx[nq + i];
  }
}

static void step_reset(void *ctx) {
  StepProblem *p = ctx;
  memcpy(p->w->mu, p->w->mu_prev, (size_t)p->m->ncon * sizeof(double));
  step_predict(p);
}

mbsStatus mbs_implicit_newton(const mbsModel *m, mbsData *d, mbsImplicitWork *w,
                              const mbsSchemeWeights *s, double dt, double t0, const double *pred,
                              char *why, size_t nwhy, mbsError *err) {
  StepProblem sp = {m, d, w, s, dt, t0, pred};
  /* predictor: pred, or constant velocity; multipliers w->mu_pred (use_mu_pred) or those of
   * the last step */
  step_predict(&sp);
  mbsNewtonProblem p = {.n1 = m->nq,
                        .n2 = m->ncon,
                        .ctx = &sp,
                        .assemble = step_assemble,
                        .scales = step_scales,
                        .apply = step_apply,
                        .reset = step_reset,
                        .equilibrium = mbs_integrator_policy(m->integrator)->equilibrium};
  /* after a record, also fresh pivots: the factorization then depends on this step alone,
   * not on the history of pivot orders (KLU), so a restart from the record is bit-exact */
  int repivot = w->refactor_next;
  w->refactor_next = 0;
  return mbs_newton_solve(m, d, &p, repivot, why, nwhy, err);
}

/* 1 if a prescribed motion's profile has a kink or a jump in (t0, t1] */
static int drive_kink(const mbsModel *m, double t0, double t1) {
  double tol = 1e-9 * (t1 - t0);
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->kind == MBS_ELEM_DRIVE &&
        mbs_elem_profile_kink_in(m, el->iparam[2], t0 + tol, t1 + tol)) {
      return 1;
    }
  }
  return 0;
}

void mbs_implicit_end(const mbsModel *m, mbsData *d, const mbsImplicitWork *w, double t0,
                      double dt) {
  d->t = t0 + dt;
  d->last_dt = dt;
  d->step++;
  d->max_violation = fmax(d->max_violation, mbs_constraint_violation(m, d->q, d->t, NULL));
  /* the physical multipliers of the step: lambda = mu / dt^2 */
  double dt2 = dt * dt;
  for (int r = 0; r < m->ncon; r++) {
    d->lambda[r] = w->mu[r] / dt2;
  }
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
}

/* ---- state export/import shared by the implicit schemes ---- */

int mbs_implicit_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max) {
  int n = 0;
  /* the integrator's own velocities, from which a restart continues */
  if (n < max) {
    out[n++] = (mbsStateArray){.name = "scheme_velocity", .length = m->nq, .data = d->v};
  }
  /* lambda of the last step (zero before it): the predictor of the next step's mu */
  if (n < max) {
    out[n++] = (mbsStateArray){.name = "multipliers", .length = m->ncon, .data = d->lambda};
  }
  return n;
}

const mbsStateArray *mbs_state_find(const mbsStateArray *in, int n, const char *name) {
  for (int i = 0; i < n; i++) {
    if (in[i].data && strcmp(in[i].name, name) == 0) {
      return &in[i];
    }
  }
  return NULL;
}

static void copy_in(double *dst, const double *src, int n) {
  if (dst != src && n > 0) {
    memcpy(dst, src, (size_t)n * sizeof(double));
  }
}

void mbs_implicit_import(const mbsModel *m, mbsData *d, mbsImplicitWork *w, const mbsStateArray *in,
                         int n) {
  const mbsStateArray *sv = mbs_state_find(in, n, "scheme_velocity");
  const mbsStateArray *mul = mbs_state_find(in, n, "multipliers");
  if (sv && sv->length == m->nq) {
    copy_in(d->v, sv->data, m->nq);
  }
  /* mu = dt^2 lambda with the dt of the step that ended here (mu / dt^2 * dt^2 may differ
   * from mu in the last bit: a run that imports the arrays of each record it writes takes
   * the same steps as a restart from that record) */
  if (mul && mul->length == m->ncon) {
    copy_in(d->lambda, mul->data, m->ncon);
    double dt2 = d->last_dt * d->last_dt;
    if (dt2 > 0.0) {
      for (int r = 0; r < m->ncon; r++) {
        w->mu[r] = d->lambda[r] * dt2;
      }
    }
  }
  /* the next step's factorization pivots afresh: it then depends on this step alone, not
   * on the history of pivot orders (KLU), so a restart from here is bit-exact */
  w->refactor_next = 1;
}

void mbs_implicit_interpolate(const mbsModel *m, const mbsData *d, const mbsImplicitWork *w,
                              double t, double *q, double *v) {
  double h = d->last_dt;
  if (!(h > 0.0) || d->step == 0 || t >= d->t) {
    if (q) {
      memcpy(q, d->q, (size_t)m->nq * sizeof(double));
    }
    if (v) {
      memcpy(v, d->v, (size_t)m->nq * sizeof(double));
    }
    return;
  }
  /* cubic Hermite through (q0, v0) and (q1, v1) of the last step, s in [0, 1] */
  double s = (t - (d->t - h)) / h;
  s = s < 0.0 ? 0.0 : s;
  double h00 = (1.0 + 2.0 * s) * (1.0 - s) * (1.0 - s), h10 = s * (1.0 - s) * (1.0 - s);
  double h01 = s * s * (3.0 - 2.0 * s), h11 = s * s * (s - 1.0);
  double d00 = 6.0 * s * (s - 1.0), d10 = (1.0 - s) * (1.0 - 3.0 * s);
  double d01 = -d00, d11 = s * (3.0 * s - 2.0);
  for (int i = 0; i < m->nq; i++) {
    double q0 = w->q_prev[i], v0 = w->v_prev[i], q1 = d->q[i], v1 = d->v[i];
    if (q) {
      q[i] = h00 * q0 + h * h10 * v0 + h01 * q1 + h * h11 * v1;
    }
    if (v) {
      v[i] = (d00 * q0 + d01 * q1) / h + d10 * v0 + d11 * v1;
    }
  }
}
