/* restart.c: mbsim-run --restart RUN.h5, continuing an earlier run from its last record.
 *
 * The restarted run writes a new file whose first record repeats the restart record, so
 * that each file holds one run with one deck and one status, and the earlier result is
 * never modified (a restart that fails cannot spoil it). The state taken over is what
 * the next step reads: q, v, the scaled multipliers mu = dt^2 lambda of the last step
 * (the Newton predictor starts from them), the time and the accumulated external work and
 * dissipation. Steps keep ending at t_n = n dt, the grid of the run from t = 0, so a run
 * of [0, 10] and a run of [0, 5] restarted to 10 take the same steps.
 *
 * The restart file is untrusted input like a deck: it is read in a child process with a
 * time and memory limit (mbs_output_read_last_isolated), its sizes are compared with the
 * model before anything of its size is allocated, and its record must be a state of this
 * model (the time on the earlier run's step grid and before t_end, q on the constraints and
 * v tangent to them) before anything of the run's state is replaced. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/run_internal.h"
#include "mbsim/contact.h"
#include "mbsim/elements.h"
#include "mbsim/output.h"

/* relative tolerance of the record's consistency with the constraints: |g(q, t)| against
 * the size of the terms of g (a converged Newton step leaves |g| at the Newton tolerance,
 * far below it) */
#define REL_POSITION 1e-6
/* The velocities: the schemes enforce the constraints on q only, and their v satisfy
 * G(q) v = 0 only to the accuracy of the step (on coarse steps the normal part is as large
 * as the tangential one), so G v cannot tell a bad v from a good one. What a v that no run
 * of this model reaches (one that violates a joint, or is scaled up) shows is energy: em
 * conserves E - W_ext + D to the Newton tolerance, the other integrators dissipate or err
 * by a few percent (genalpha on coarse steps under large loads: up to one energy scale).
 * The record's energy may exceed E0 + W_ext - D (E0 of this deck at t = 0, W_ext and D of
 * the record) by at most REL_ENERGY times the energy scale. Not with prescribed motions,
 * whose drives do work that W_ext does not count. */
#define REL_ENERGY 4.0
/* The other side: a record with less energy than E0 + W_ext - D (not for static, whose
 * work along a path of equilibria balances V only from an equilibrium on). The integrators that do not
 * conserve energy (euler, genalpha with rho_inf < 1, moreau with theta != 0.5) lose some
 * without booking it as D, up to what they were given: the record may fall short by
 * REL_ENERGY energy scales plus REL_WORK of the work and dissipation booked (an euler run
 * that damped away more than half the work of its loads is refused; restart it with em).
 * A work of 1e300 J booked on a state of a few joules is not. */
#define REL_WORK 0.5
/* The balance B = E - W_ext + D must stay resolvable: W_ext and D are sums whose round-off
 * (eps (|W| + |D|)) must stay far below the energy scale, or the monitor's unstable check
 * (a gain of one energy scale) can never fire. RESOLVE bounds eps (|W| + |D|) / scale. */
#define RESOLVE 1e-6

/* The accumulated scalars of a record, one line each (a new energy part is one more line):
 * ACC_WORK may have either sign (the work of loads and drives), ACC_DISSIPATION is the
 * total energy removed (>= 0), ACC_DISSIPATION_PART a part of it (>= 0, at most the total). */
typedef enum { ACC_WORK, ACC_DISSIPATION, ACC_DISSIPATION_PART } accKind;
static const struct {
  const char *dataset;
  size_t offset; /* of the double in mbsLastRecord */
  accKind kind;
} ACCUMULATED[] = {
    {"/energy/external_work", offsetof(mbsLastRecord, external_work), ACC_WORK},
    {"/energy/dissipated", offsetof(mbsLastRecord, dissipated), ACC_DISSIPATION},
    {"/energy/contact_dissipated", offsetof(mbsLastRecord, contact_dissipated),
     ACC_DISSIPATION_PART},
    {"/energy/impact_dissipated", offsetof(mbsLastRecord, impact_dissipated),
     ACC_DISSIPATION_PART},
    {"/energy/friction_dissipated", offsetof(mbsLastRecord, friction_dissipated),
     ACC_DISSIPATION_PART},
    {"/energy/numerical_dissipation", offsetof(mbsLastRecord, numerical_dissipation),
     ACC_DISSIPATION_PART},
    {"/energy/capture_dissipated", offsetof(mbsLastRecord, capture_dissipated),
     ACC_DISSIPATION_PART},
};
#define NACCUMULATED ((int)(sizeof(ACCUMULATED) / sizeof(ACCUMULATED[0])))

static double acc_value(const mbsLastRecord *l, int k) {
  double v;
  memcpy(&v, (const char *)l + ACCUMULATED[k].offset, sizeof(v));
  return v;
}

/* The accumulated scalars against each other and against the record's energies (scale: the
 * energy scale of the deck at t = 0 and of the record): finite, dissipation not negative,
 * parts at most their total, resolvable. 0, or 1 with the message in msg. */
static int check_accumulated(const mbsLastRecord *l, double scale, char *msg, size_t n) {
  double total_d = 0.0, sum_abs = 0.0, work = 0.0;
  for (int k = 0; k < NACCUMULATED; k++) {
    double v = acc_value(l, k);
    if (!isfinite(v)) {
      snprintf(msg, n, "bad restart file: its last record holds %s = %g, not a finite number",
               ACCUMULATED[k].dataset, v);
      return 1;
    }
    if (ACCUMULATED[k].kind == ACC_DISSIPATION) {
      total_d = v;
    }
    if (ACCUMULATED[k].kind == ACC_WORK) {
      work += fabs(v);
    }
    if (ACCUMULATED[k].kind != ACC_DISSIPATION_PART) {
      sum_abs += fabs(v);
    }
  }
  /* round-off of the sums that made them: a few eps of what passed through them */
  double tol = 1e-9 * (scale + work) + 1e-12;
  for (int k = 0; k < NACCUMULATED; k++) {
    double v = acc_value(l, k);
    if (ACCUMULATED[k].kind != ACC_WORK && v < -tol) {
      snprintf(msg, n,
               "bad restart file: its last record holds %s = %.6g J, a negative dissipation "
               "(energy removed only accumulates; at most round-off %.3g J below 0)",
               ACCUMULATED[k].dataset, v, tol);
      return 1;
    }
    if (ACCUMULATED[k].kind == ACC_DISSIPATION_PART && v > total_d + tol) {
      snprintf(msg, n,
               "bad restart file: its last record holds %s = %.6g J, more than the whole "
               "dissipation /energy/dissipated = %.6g J it is a part of",
               ACCUMULATED[k].dataset, v, total_d);
      return 1;
    }
  }
  if (scale > 0.0 && DBL_EPSILON * sum_abs > RESOLVE * scale) {
    snprintf(msg, n,
             "bad restart file: its last record holds a work and dissipation of %.3g J "
             "(/energy/external_work %.6g J, /energy/dissipated %.6g J) on a state whose energy "
             "scale is %.3g J: their round-off alone would hide any blow-up from the energy "
             "balance",
             sum_abs, l->external_work, l->dissipated, scale);
    return 1;
  }
  return 0;
}

/* err: "--restart 'PATH': WHAT" (the caller escapes what it prints) */
static void restart_error(mbsError *err, const char *path, const char *what) {
  mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "--restart '%s': %s", path, what);
}

/* 1 when a and b name the same existing file (stat opens neither) */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) {
    return 0;
  }
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 1 when t is a time a record of the earlier run can have: a step end n dt of its grid
 * (at most 1e12 steps, the limit of a deck), its t_end (a shortened last step) or its first
 * record (the restart time of a restarted run) */
static int on_grid(double t, const mbsLastRecord *l) {
  double k = t / l->dt;
  if (!(k <= 1e12 + 1.0)) {
    return 0;
  }
  if (fabs(k - nearbyint(k)) <= 1e-6 + 4.0 * DBL_EPSILON * k) {
    return 1;
  }
  return fabs(t - l->t_end) <= 1e-12 * fmax(1.0, fabs(l->t_end)) ||
         fabs(t - l->first_time) <= 1e-12 * fmax(1.0, fabs(l->first_time));
}

/* the worst constraint residual of a state, as a multiple of its tolerance */
typedef struct {
  double ratio; /* |residual| / tolerance of the worst row (> 1: inconsistent) */
  double value; /* its residual */
  double tol;   /* its tolerance */
  int row;      /* its constraint row, -1 when none */
} worstRow;

static void note(worstRow *w, double value, double tol, int row) {
  double ratio = fabs(value) / tol;
  if (!(ratio <= w->ratio)) {
    w->ratio = isnan(ratio) ? INFINITY : ratio;
    w->value = value;
    w->tol = tol;
    w->row = row;
  }
}

/* size of the terms of the linear expression sum_k w[k] q_node[k] + c of a row */
static double terms(const mbsConRow *row, const double *w, const double *c, const double *q) {
  double s = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  for (int k = 0; k < row->nnode; k++) {
    const double *x = q + 3 * row->node[k];
    s += fabs(w[k]) * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  }
  return s;
}

/* How far q is from the constraints g(q, t) = 0, row by row against REL_POSITION of the
 * size of each row's terms, with a floor of ten times what a converged Newton step leaves
 * (its tolerance, or round-off). Returns -1 when out of memory. */
static int position_consistency(const mbsModel *m, const double *q, double t, worstRow *pos) {
  double qn = 0.0;
  for (int i = 0; i < m->nq; i++) {
    qn = fmax(qn, fabs(q[i]));
  }
  double floor_abs = 10.0 * fmax(m->newton_tolerance, 64.0 * DBL_EPSILON * (1.0 + qn) * (1.0 + qn));
  memset(pos, 0, sizeof(*pos));
  pos->row = -1;

  /* every row, with its gradient: a quadratic row g = s A.B + n.A + c0 against the size of
   * its terms, a row of a constraint element (drives, augmentation) against the size of G q */
  double *work = malloc(mbs_rows_work_size(m) * sizeof(double));
  if (!work) {
    return -1;
  }
  mbsRowIter it;
  for (mbs_rows_begin(&it, m, q, t, 1, work); mbs_rows_next(&it);) {
    double scale;
    if (it.elem < 0) {
      const mbsConRow *row = &m->con[it.row];
      double at = terms(row, row->wa, row->ca, q), bt = terms(row, row->wb, row->cb, q);
      double nn = sqrt(row->n[0] * row->n[0] + row->n[1] * row->n[1] + row->n[2] * row->n[2]);
      scale = fabs(row->s) * at * bt + nn * at + fabs(row->c0);
    } else {
      scale = 1.0;
      for (int i = 0; i < it.nz; i++) {
        scale += fabs(it.val[i]) * fabs(q[it.idx[i]]);
      }
    }
    note(pos, it.g, REL_POSITION * scale + floor_abs, it.row);
  }
  free(work);
  return 0;
}

mbsStatus mbs_restart_load(mbsRestart *rs, const char *path, const char *out_path,
                           const mbsInspectLimits *limits, const mbsModel *m, mbsData *d,
                           char *notes, size_t nnotes, mbsError *rerr) {
  char msg[2400], e2[300];
  mbsLastRecord last;
  mbsError err;
  mbsInspectLimits lim = *limits;
  mbs_error_clear(&err);
  memset(rs, 0, sizeof(*rs));

  if (out_path && same_file(out_path, path)) {
    restart_error(rerr, path, "the output file is the restart file itself; give another output file "
                        "with -o (the restarted run is written to a new file)");
    return rerr->status;
  }

  /* read in a child process; the sizes of the model first, then anything of the file's */
  mbsModelSizes sizes = {m->nq, m->ncon, m->njoint};
  mbsStatus st = mbs_output_read_last_isolated(path, &sizes, &lim, &last, &err);
  if (st == MBS_ERR_MODEL) {
    if (last.n_coordinates != m->nq || last.n_constraints != m->ncon) {
      snprintf(msg, sizeof(msg),
               "the run belongs to another model: %d coordinates and %d constraints in the "
               "file, %d and %d in this deck",
               last.n_coordinates, last.n_constraints, m->nq, m->ncon);
    } else {
      snprintf(msg, sizeof(msg),
               "the run belongs to another model: %d joints in the file, %d in this deck",
               last.njoint, m->njoint);
    }
    restart_error(rerr, path, msg);
    return rerr->status;
  }
  if (st != MBS_OK) {
    char buf[2048];
    mbs_error_format(&err, buf, sizeof(buf));
    snprintf(msg, sizeof(msg), "bad restart file: %s", buf);
    restart_error(rerr, path, msg);
    return rerr->status;
  }

  /* the file must describe the model of this deck, coordinate by coordinate */
  int bad = 0;
  for (int i = 0; !bad && i < m->nq; i++) {
    if (strcmp(last.coordinate_names[i], mbs_model_coord_name(m, i)) != 0) {
      snprintf(msg, sizeof(msg),
               "the run belongs to another model: coordinate %d is '%s' in the file and '%s' "
               "in this deck",
               i + 1, last.coordinate_names[i], mbs_model_coord_name(m, i));
      bad = 1;
    }
  }

  /* the time: a step end of the earlier run, before t_end; the step loop goes on with
   * n_first, the first n whose t_n = n dt lies after t (both bounded by the deck's limit
   * of 1e12 steps once t < t_end) */
  double t = last.time;
  if (!bad && (t < 0.0 || !on_grid(t, &last))) {
    snprintf(msg, sizeof(msg),
             "bad restart file: its last record is at t = %.17g, which is not a step end "
             "of the earlier run (dt = %.17g, t_end = %.17g): a run restarts only from a "
             "record at a step (records between steps, written by output.dt, are "
             "interpolated; a run that stops or is interrupted writes one at its last step, "
             "a failed run does not)",
             t, last.dt, last.t_end);
    bad = 1;
  }
  long nsteps = (long)ceil(m->t_end / m->dt - 1e-9);
  long n_first = 0;
  if (!bad && !(m->t_end > t)) {
    snprintf(msg, sizeof(msg),
             "the run ends at t = %.9g, which is not before t_end = %.9g; give a later end "
             "with --t-end",
             t, m->t_end);
    bad = 1;
  }
  if (!bad) {
    n_first = (long)floor(t / m->dt + 1e-9) + 1;
    if (nsteps < n_first) {
      snprintf(msg, sizeof(msg),
               "the run ends at t = %.9g, which is not before the last step of t_end = %.9g; "
               "give a later end with --t-end",
               t, m->t_end);
      bad = 1;
    }
  }

  /* the size of the step that ended at t, so that mu = dt^2 lambda with exactly the dt the
   * earlier run divided by: recorded in /solver/step_size (never more than its dt), else
   * (older files) the last step on the grid of the earlier run */
  double last_dt = last.step_size;
  if (!bad && last_dt > last.dt * (1.0 + 1e-9)) {
    snprintf(msg, sizeof(msg),
             "bad restart file: its last step size %.17g is larger than its dt = %.17g", last_dt,
             last.dt);
    bad = 1;
  }
  if (!bad && !(last_dt > 0.0) && t > 0.0) {
    long k = (long)ceil(t / last.dt - 1e-9);
    last_dt = t - (double)(k - 1) * last.dt;
  }
  for (int i = 0; !bad && last.multipliers && i < m->ncon; i++) {
    if (!isfinite(last.multipliers[i] * (last_dt * last_dt))) {
      snprintf(msg, sizeof(msg),
               "bad restart file: multiplier %d (%.17g) times its step size squared is not "
               "finite",
               i + 1, last.multipliers[i]);
      bad = 1;
    }
  }

  /* joints that engage and release: the record's engagement state (which joints hold, their
   * frames, the rows dropped in its phase) gives the rows that q must satisfy */
  if (!bad && m->nengage > 0) {
    mbsStateArray st0[MBS_STATE_MAX];
    int ns0 = mbs_state_from_last(&last, st0, MBS_STATE_MAX);
    const mbsStateArray *z = NULL;
    for (int k = 0; k < ns0; k++) {
      z = strcmp(st0[k].name, "joint_engagement") == 0 ? &st0[k] : z;
    }
    if (z && z->length == MBS_JOINT_ENGAGE_LEN * m->njoint) {
      for (int j = 0; j < m->njoint && !bad; j++) {
        const double *es = z->data + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j;
        int ok = (es[0] == 0.0 || es[0] == 1.0) && es[14] >= 0.0 &&
                 es[14] < (double)(1 << MBS_ELEM_MAXCON) && es[14] == floor(es[14]);
        for (int k = 1; k < 14 && ok; k++) {
          ok = isfinite(es[k]);
        }
        if (!ok) {
          snprintf(msg, sizeof(msg),
                   "bad restart file: /state/joint_engagement of joint '%s' is not an "
                   "engagement state (held flag 0 or 1, finite frames, dropped-row bits)",
                   m->joint_name[j]);
          bad = 1;
        }
      }
      if (!bad) {
        memcpy(m->joint_engage, z->data,
               (size_t)(MBS_JOINT_ENGAGE_LEN * m->njoint) * sizeof(double));
        for (int j = 0; j < m->njoint; j++) {
          if (mbs_joint_switches(m, j)) {
            mbs_model_joint_apply(m, j);
          }
        }
      }
    }
  }

  /* q on the constraints, and no more energy than the run can have */
  worstRow pos;
  if (!bad && position_consistency(m, last.q, t, &pos) != 0) {
    snprintf(msg, sizeof(msg), "out of memory");
    bad = 1;
  }
  if (!bad && pos.ratio > 1.0) {
    mbs_constraint_describe(m, pos.row, e2, sizeof(e2));
    snprintf(msg, sizeof(msg),
             "bad restart file: its last record (t = %.9g) is not a state of this model: its "
             "position q violates %s by %.3g (tolerance %.3g)",
             t, e2, fabs(pos.value), pos.tol);
    bad = 1;
  }
  /* no shapes of the deck overlapping in the state, as at t = 0 (the deck may have moved
   * an obstacle into it) */
  if (!bad && m->ncontact_paired > 0) {
    mbsError cerr;
    mbs_error_clear(&cerr);
    if (mbs_contact_check_state(m, last.q, t, &cerr) != MBS_OK) {
      char buf[1600];
      mbs_error_format(&cerr, buf, sizeof(buf));
      snprintf(msg, sizeof(msg), "bad restart file: its last record (t = %.9g) is not a state "
               "of this deck: %s", t, buf);
      bad = 1;
    }
  }
  int driven = 0;
  for (int k = 0; k < m->nelem; k++) {
    driven |= m->elem[k].kind == MBS_ELEM_DRIVE;
  }
  /* the energies of the deck at t = 0 and of the record: the scale that the accumulated
   * work and dissipation are measured against */
  double e0 = 0.0, e_rec = 0.0, escale = 0.0, escale0 = 0.0;
  if (!bad) {
    mbsObservables o0, o1;
    d->t = 0.0;
    mbs_observe(m, d, &o0);
    memcpy(d->q, last.q, (size_t)m->nq * sizeof(double));
    memcpy(d->v, last.v, (size_t)m->nq * sizeof(double));
    d->t = t;
    mbs_observe(m, d, &o1);
    e0 = o0.kinetic + o0.potential;
    e_rec = o1.kinetic + o1.potential;
    /* escale0 without the record's kinetic energy (what the energy check bounds), escale
     * with it */
    escale0 = fmax(fmax(fabs(e0), o0.kinetic), fabs(o1.potential - o0.potential));
    escale = fmax(escale0, o1.kinetic);
    if (!isfinite(e_rec)) {
      snprintf(msg, sizeof(msg),
               "bad restart file: the energy of its last record (t = %.9g) is not finite", t);
      bad = 1;
    }
  }
  if (!bad) {
    bad = check_accumulated(&last, escale, msg, sizeof(msg));
  }
  if (!bad && !driven) {
    double budget = e0 + last.external_work - last.dissipated;
    double scale = fmax(fmax(fabs(e0), fabs(budget)),
                        fmax(escale0, fmax(fabs(last.external_work), fabs(last.dissipated))));
    double booked = fabs(last.external_work) + fabs(last.dissipated);
    if (!(e_rec - budget <= REL_ENERGY * scale + 1e-12 * (1.0 + fabs(e_rec)))) {
      snprintf(msg, sizeof(msg),
               "bad restart file: its last record (t = %.9g) is not a state this run can "
               "reach: its energy T + V = %.6g J exceeds E0 + W_ext - D = %.6g J of this deck "
               "by %.3g J (more than %g of the energy scale %.3g J; its velocities v violate "
               "the constraints or are too large)",
               t, e_rec, budget, e_rec - budget, REL_ENERGY, scale);
      bad = 1;
    } else if (!mbs_integrator_policy(m->integrator)->equilibrium &&
               !(budget - e_rec <= REL_ENERGY * escale + REL_WORK * booked +
                                       1e-12 * (1.0 + fabs(e_rec)))) {
      snprintf(msg, sizeof(msg),
               "bad restart file: its last record (t = %.9g) does not balance its energy: "
               "E0 + W_ext - D = %.6g J (/energy/external_work %.6g J, /energy/dissipated "
               "%.6g J) exceeds its energy T + V = %.6g J by %.3g J, more than %g of its "
               "energy scale %.3g J and %g of the work and dissipation booked",
               t, budget, last.external_work, last.dissipated, e_rec, budget - e_rec,
               REL_ENERGY, escale, REL_WORK);
      bad = 1;
    }
  }
  if (bad) {
    restart_error(rerr, path, msg);
    mbs_output_last_free(&last);
    return rerr->status;
  }

  /* the state: q and time here; the integrator's own state (its velocities, the
   * multipliers mu = dt^2 lambda with the dt of the step that ended at t, genalpha's
   * accelerations) through its import */
  size_t nq = (size_t)m->nq;
  memcpy(d->q, last.q, nq * sizeof(double));
  d->t = t;
  d->last_dt = last_dt;
  mbsStateArray state[MBS_STATE_MAX];
  int nstate = mbs_state_from_last(&last, state, MBS_STATE_MAX);
  char missing[256] = "";
  mbsError ierr;
  if (mbs_solver_state_import(m, d, state, nstate, missing, sizeof(missing), &ierr) != MBS_OK) {
    /* the integrator's own arrays are untrusted input too (moreau's contacts) */
    char msg2[MBS_ERROR_MSG_MAX + 32];
    snprintf(msg2, sizeof(msg2), "bad restart file: %s", ierr.msg);
    restart_error(rerr, path, msg2);
    mbs_output_last_free(&last);
    return rerr->status;
  }
  /* joint angles go on from the record's (whole turns included); without them, from the
   * angles of q in (-pi, pi] */
  if (last.joint_coordinates) {
    memcpy(d->joint_coord, last.joint_coordinates, (size_t)m->njoint * 3 * sizeof(double));
  } else {
    for (int k = 0; k < 3 * m->njoint; k++) {
      d->joint_coord[k] = NAN;
    }
  }
  mbs_joint_track(m, d);
  d->external_work = last.external_work;
  d->dissipated = last.dissipated;
  d->contact_dissipated = last.contact_dissipated;
  d->impact_dissipated = last.impact_dissipated;
  d->friction_dissipated = last.friction_dissipated;
  d->numerical_dissipated = last.numerical_dissipation;
  d->capture_dissipated = last.capture_dissipated;
  d->iterations = last.iterations;
  if (!last.multipliers && m->ncon > 0) {
    size_t k = strlen(notes);
    snprintf(notes + k, nnotes - k,
             "'%s' has no /state/multipliers; Newton starts the first step from zero "
             "multipliers\n",
             path);
  }
  /* the integrator goes on with its state of the record; without some of it (a file of
   * another integrator or an older version, or the record at t = 0) it starts as a run from
   * t = 0 does (genalpha: from consistent accelerations) */
  if (missing[0] && t > 0.0) {
    size_t k = strlen(notes);
    snprintf(notes + k, nnotes - k,
             "'%s' lacks part of the %s state at t = %g (%s); the restart does not repeat the "
             "earlier run exactly\n",
             path, mbs_integrator_word(m->integrator), t, missing);
  }

  /* what the first record and the root attribute restart_from need */
  rs->n_first = n_first;
  rs->iterations = last.iterations;
  size_t n = strlen(path) + 64;
  rs->from = malloc(n);
  if (m->njoint > 0) {
    rs->joint_reaction = malloc((size_t)m->njoint * 6 * sizeof(double));
    rs->joint_drive = last.joint_drive ? malloc((size_t)m->njoint * 6 * sizeof(double)) : NULL;
  }
  if (!rs->from || (m->njoint > 0 && !rs->joint_reaction) ||
      (last.joint_drive && m->njoint > 0 && !rs->joint_drive)) {
    mbs_output_last_free(&last);
    mbs_restart_free(rs);
    return mbs_error_set(rerr, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  snprintf(rs->from, n, "%s at t=%.17g", path, t);
  if (m->njoint > 0) {
    memcpy(rs->joint_reaction, last.joint_reaction, (size_t)m->njoint * 6 * sizeof(double));
    if (rs->joint_drive) {
      memcpy(rs->joint_drive, last.joint_drive, (size_t)m->njoint * 6 * sizeof(double));
    }
  }
  rs->active = 1;
  mbs_output_last_free(&last);
  return MBS_OK;
}

void mbs_restart_first_record(const mbsRestart *rs, const mbsModel *m, mbsData *d) {
  if (!rs->active) {
    return;
  }
  if (rs->joint_reaction) {
    memcpy(d->joint_reaction, rs->joint_reaction, (size_t)m->njoint * 6 * sizeof(double));
  }
  if (rs->joint_drive) {
    memcpy(d->joint_drive, rs->joint_drive, (size_t)m->njoint * 6 * sizeof(double));
  }
  d->iterations = rs->iterations;
}

void mbs_restart_free(mbsRestart *rs) {
  if (!rs) {
    return;
  }
  free(rs->from);
  free(rs->joint_reaction);
  free(rs->joint_drive);
  memset(rs, 0, sizeof(*rs));
}
