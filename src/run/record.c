/* record.c: what a run writes to its result file. The quantities the command computes from
 * the model and the run state (joint points), and the datasets themselves:
 * each owner (observables, solver statistics, state, the integrator's arrays, bodies,
 * joints, loads) has a describe_* function that registers its series (path, type, row
 * shape, units) and sidecar grids with the writer, and a put_* function that gives its rows
 * at each record. A new element kind adds a describe/put pair here (beams:
 * /beams/<name>/position ... and a polyline grid) and leaves the writer alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run_internal.h"
#include "mbsim/elements.h"

void mbs_record_extras(const mbsModel *m, const mbsData *d, double *joint_pos) {
  /* the joint point on body 2: phi + c^i d_i (a point mass: its position); a static second
   * body keeps the world point */
  for (int j = 0; j < m->njoint; j++) {
    mbs_attach_point(m, m->joint_attach[2 * j + 1], m->joint_point + 3 * j, d->q,
                     joint_pos + 3 * j);
  }
}

/* ---------- the datasets of a run (docs/output.md), registered by what owns them ---------- */

/* units of the /state series: those of /state/q per second, per second squared */
#define U_Q "m, 1 or rad (per column: attribute column_units)"
#define U_V "m/s, 1/s or rad/s (per column: attribute column_units)"
#define U_A "m/s^2, 1/s^2 or rad/s^2 (per column: attribute column_units)"

/* a series of rank 0 .. 2 and the handle it gets; -1 on failure */
static int series(mbsRecorder *out, const char *path, mbsOutType type, int rank, int n0, int n1,
                  const char *units, int optional, mbsError *err) {
  mbsSeriesSpec s = {.path = path,
                     .type = type,
                     .rank = rank,
                     .shape = {n0, n1, 0},
                     .units = units,
                     .optional = optional};
  return mbs_output_add_series(out->w, &s, err);
}

/* the attribute `column_units` of a coordinate series: the unit of each coordinate with
 * suffix ("/s": per second); only where an object header holds it, like `names` */
static mbsStatus column_units(mbsRecorder *out, int h, const char *suffix, mbsError *err) {
  int nq = out->nq;
  if (!out->qunits || nq <= 0 || nq > MBS_OUTPUT_ATTR_MAX) {
    return MBS_OK;
  }
  for (int i = 0; i < nq; i++) {
    snprintf(out->unit_text + 16 * (size_t)i, 16, "%.6s%s", out->qunits[i], suffix);
    out->unit_col[i] = out->unit_text + 16 * (size_t)i;
  }
  return mbs_output_series_attr(out->w, h, "column_units", out->unit_col, nq, err);
}

/* the dataset path [n] of the names of a model's objects (char[MBS_NAME_MAX] each) */
static mbsStatus names(mbsRecorder *out, const char *path, char (*name)[MBS_NAME_MAX], int n,
                       mbsError *err) {
  for (int i = 0; i < n; i++) {
    out->labels[i] = name[i];
  }
  return mbs_output_add_names(out->w, path, out->labels, n, err);
}

/* observables: energies (seed 000 energy balance), momenta about the world origin and the
 * constraint violations */
static mbsStatus describe_observables(mbsRecorder *out, mbsError *err) {
  static const struct {
    const char *path, *units;
  } scalar[MBS_REC_OBS_SCALARS] = {
      {"/energy/kinetic", "J"},
      {"/energy/potential", "J"},
      {"/energy/total", "J"},
      {"/energy/external_work", "J"},
      {"/energy/dissipated", "J"},
      {"/constraints/violation", "m or 1 (that of the worst row)"},
      {"/constraints/velocity_violation", "m/s or 1/s (that of the worst row)"},
  };
  /* (in this order the writer looks for a non-finite value, naming the first) */
  for (int i = 0; i < MBS_REC_OBS_SCALARS; i++) {
    if (i == 5) {
      out->h_linear = series(out, "/momentum/linear", MBS_OUT_FLOAT64, 1, 3, 0, "kg m/s", 0, err);
      out->h_angular =
          out->h_linear < 0
              ? -1
              : series(out, "/momentum/angular", MBS_OUT_FLOAT64, 1, 3, 0, "kg m^2/s", 0, err);
      if (out->h_angular < 0) {
        return err->status;
      }
    }
    out->h_obs[i] = series(out, scalar[i].path, MBS_OUT_FLOAT64, 0, 0, 0, scalar[i].units, 0, err);
    if (out->h_obs[i] < 0) {
      return err->status;
    }
  }
  return MBS_OK;
}

static void put_observables(mbsRecorder *out, const mbsObservables *o) {
  out->obs[0] = o->kinetic;
  out->obs[1] = o->potential;
  out->obs[2] = o->kinetic + o->potential;
  out->obs[3] = o->external_work;
  out->obs[4] = o->dissipated;
  out->obs[5] = o->violation;
  out->obs[6] = o->velocity_violation;
  for (int i = 0; i < MBS_REC_OBS_SCALARS; i++) {
    mbs_output_put(out->w, out->h_obs[i], &out->obs[i]);
  }
  mbs_output_put(out->w, out->h_linear, o->linear_momentum);
  mbs_output_put(out->w, out->h_angular, o->angular_momentum);
}

/* solver statistics of the step that ended at the record */
static mbsStatus describe_solver(mbsRecorder *out, mbsError *err) {
  out->h_iterations = series(out, "/solver/iterations", MBS_OUT_INT32, 0, 0, 0, "1", 0, err);
  out->h_factorizations = out->h_iterations < 0 ? -1
                          : series(out, "/solver/factorizations", MBS_OUT_INT32, 0, 0, 0, "1",
                                   0, err);
  out->h_solves = out->h_factorizations < 0
                      ? -1
                      : series(out, "/solver/solves", MBS_OUT_INT32, 0, 0, 0, "1", 0, err);
  out->h_step_size = out->h_solves < 0 ? -1
                     : series(out, "/solver/step_size", MBS_OUT_FLOAT64, 0, 0, 0, "s", 0, err);
  return out->h_step_size < 0 ? err->status : MBS_OK;
}

static void put_solver(mbsRecorder *out, const mbsData *d) {
  out->iterations = d->iterations;
  /* factorizations and solves since the previous record */
  out->factorizations = (int)(d->factorizations - out->fact_seen);
  out->solves = (int)(d->solves - out->solves_seen);
  out->fact_seen = d->factorizations;
  out->solves_seen = d->solves;
  /* the last step (a restarted run's first record: the step that ended at the restart) */
  out->step_size = d->step > 0 || d->t > 0.0 ? d->last_dt : 0.0;
  mbs_output_put(out->w, out->h_iterations, &out->iterations);
  mbs_output_put(out->w, out->h_factorizations, &out->factorizations);
  mbs_output_put(out->w, out->h_solves, &out->solves);
  mbs_output_put(out->w, out->h_step_size, &out->step_size);
}

/* the coordinates q and the recorded velocities v, with their names: the dataset
 * /state/names for any size, the attribute `names` where an object header holds it */
static mbsStatus describe_state(mbsRecorder *out, const char *const *qnames, mbsError *err) {
  int nq = out->nq;
  out->h_q = series(out, "/state/q", MBS_OUT_FLOAT64, 1, nq, 0, U_Q, 0, err);
  out->h_v = out->h_q < 0 ? -1 : series(out, "/state/v", MBS_OUT_FLOAT64, 1, nq, 0, U_V, 0, err);
  if (out->h_v < 0 || column_units(out, out->h_q, "", err) != MBS_OK ||
      column_units(out, out->h_v, "/s", err) != MBS_OK ||
      mbs_output_add_names(out->w, "/state/names", qnames, nq, err) != MBS_OK ||
      mbs_output_series_attr(out->w, out->h_q, "names", qnames, nq, err) != MBS_OK ||
      mbs_output_series_attr(out->w, out->h_v, "names", qnames, nq, err) != MBS_OK) {
    return err->status;
  }
  return MBS_OK;
}

static void put_state(mbsRecorder *out, const mbsData *d) {
  mbs_output_put(out->w, out->h_q, d->q);
  mbs_output_put(out->w, out->h_v, d->v_rec);
}

/* the integrator's named arrays (mbsStateArray) under /state/<name>; their units by name */
static mbsStatus describe_integrator_state(mbsRecorder *out, const mbsStateArray *a, int n,
                                           mbsError *err) {
  static const struct {
    const char *name, *units, *suffix; /* suffix: column_units from those of q; NULL: none */
  } known[] = {
      {"scheme_velocity", U_V, "/s"},
      {"previous_velocity", U_V, "/s"},
      {"multipliers", "N or N m (J per unit of the constraint row)", NULL},
      {"acceleration", U_A, "/s^2"},
      {"algorithmic_acceleration", U_A, "/s^2"},
  };
  out->nstate = 0;
  for (int i = 0; i < n && i < MBS_STATE_MAX; i++) {
    const char *units = a[i].units ? a[i].units : "the integrator's own (docs/output.md)";
    const char *suffix = NULL;
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
      if (strcmp(a[i].name, known[k].name) == 0) {
        units = known[k].units;
        suffix = known[k].suffix;
      }
    }
    char path[128];
    snprintf(path, sizeof(path), "/state/%s", a[i].name);
    out->state_columns[out->nstate] = a[i].columns;
    if (a[i].columns > 0) {
      /* a table of varying rows (moreau's contacts) */
      int h = mbs_output_add_ragged(out->w, path, a[i].columns, a[i].units ? a[i].units : units,
                                    a[i].column_names, err);
      if (h < 0) {
        return err->status;
      }
      out->h_state[out->nstate++] = h;
      continue;
    }
    /* the predictor's history a block per step, a chunk each: the blocks that repeat the
     * previous record's are written as zeros (mark_repeats), chunks never written */
    mbsSeriesSpec spec = {.path = path,
                          .type = MBS_OUT_FLOAT64,
                          .rank = 1,
                          .shape = {a[i].length, 0, 0},
                          .units = units,
                          .optional = 1};
    if (strcmp(a[i].name, "previous_increments") == 0 && out->nq > 0 &&
        a[i].length % out->nq == 0) {
      spec.blocks = a[i].length / out->nq;
    }
    int h = mbs_output_add_series(out->w, &spec, err);
    if (h < 0 || (suffix && a[i].length == out->nq && column_units(out, h, suffix, err))) {
      return err->status;
    }
    out->h_state[out->nstate++] = h;
  }
  return MBS_OK;
}

/* /state/history_repeats: the predictor's history (onestep.c) repeats what the previous
 * record wrote when every step is recorded: blocks 1 .. K-1 of previous_increments are its
 * blocks 0 .. K-2, previous_velocity its scheme_velocity, previous_multipliers its
 * multipliers. Where a row repeats them bit for bit it is written as zeros and this
 * record's mark has the bit (the restart reader takes them from the records before:
 * reader.c resolve_repeats); 91 of the 245 kB of a record of the 200-link chain, which
 * the writer need not shuffle and deflate (docs/output.md) */
#define REPEAT_INCREMENTS 1
#define REPEAT_VELOCITY 2
#define REPEAT_MULTIPLIERS 4

static int state_index(const mbsStateArray *a, int n, const char *name, int length) {
  for (int i = 0; i < n && i < MBS_STATE_MAX; i++) {
    if (a[i].columns == 0 && strcmp(a[i].name, name) == 0 && a[i].length == length) {
      return i;
    }
  }
  return -1;
}

static mbsStatus describe_repeats(mbsRecorder *out, const mbsStateArray *a, int n, int ncon,
                                  mbsError *err) {
  int nq = out->nq;
  out->h_repeats = -1;
  out->rep_count = -1;
  out->rep_inc = -1;
  out->rep_blocks = 0;
  for (int i = 0; i < n && i < MBS_STATE_MAX && nq > 0; i++) {
    if (a[i].columns == 0 && strcmp(a[i].name, "previous_increments") == 0 &&
        a[i].length % nq == 0 && a[i].length / nq >= 2) {
      out->rep_inc = i;
      out->rep_blocks = a[i].length / nq;
    }
  }
  out->rep_pv = state_index(a, n, "previous_velocity", nq);
  out->rep_sv = state_index(a, n, "scheme_velocity", nq);
  out->rep_pm = state_index(a, n, "previous_multipliers", ncon);
  out->rep_mu = state_index(a, n, "multipliers", ncon);
  if (out->rep_pv < 0 || out->rep_sv < 0) {
    out->rep_pv = out->rep_sv = -1;
  }
  if (out->rep_pm < 0 || out->rep_mu < 0 || ncon == 0) {
    out->rep_pm = out->rep_mu = -1;
  }
  if (out->rep_inc < 0 && out->rep_pv < 0 && out->rep_pm < 0) {
    return MBS_OK;
  }
  out->rep_ncon = ncon;
  size_t nprev = (size_t)(out->rep_blocks > 1 ? out->rep_blocks - 1 : 0) * (size_t)nq +
                 (size_t)nq + (size_t)ncon;
  size_t nzero = (size_t)(nq > ncon ? nq : ncon);
  out->rep_prev = malloc(nprev * sizeof(double));
  out->rep_inc_row = calloc((size_t)(out->rep_blocks > 0 ? out->rep_blocks : 1) * (size_t)nq,
                            sizeof(double));
  out->rep_zero = calloc(nzero, sizeof(double));
  if (!out->rep_prev || !out->rep_inc_row || !out->rep_zero) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory describing the output");
  }
  out->h_repeats =
      series(out, "/state/history_repeats", MBS_OUT_INT32, 0, 0, 0, "1", 0, err);
  return out->h_repeats < 0 ? err->status : MBS_OK;
}

/* this record's marks, and rows[i] (the rows to write) of the repeated rows set to zeros;
 * this record's history kept for the next record */
static void mark_repeats(mbsRecorder *out, const mbsStateArray *a, const double **rows) {
  if (out->h_repeats < 0) {
    return;
  }
  size_t nq = (size_t)out->nq;
  size_t ninc = out->rep_blocks > 1 ? (size_t)(out->rep_blocks - 1) * nq : 0;
  double *prev_inc = out->rep_prev, *prev_sv = prev_inc + ninc, *prev_mu = prev_sv + nq;
  /* the previous record's rows count only when the writer took that record */
  int have = out->rep_count >= 0 && mbs_output_count(out->w) == out->rep_count + 1
                 ? out->rep_have
                 : 0;
  const double *inc = out->rep_inc >= 0 ? a[out->rep_inc].data : NULL;
  const double *pv = out->rep_pv >= 0 ? a[out->rep_pv].data : NULL;
  const double *sv = out->rep_sv >= 0 ? a[out->rep_sv].data : NULL;
  const double *pm = out->rep_pm >= 0 ? a[out->rep_pm].data : NULL;
  const double *mu = out->rep_mu >= 0 ? a[out->rep_mu].data : NULL;
  size_t nmu = (size_t)out->rep_ncon;
  out->repeats = 0;
  if (inc && (have & REPEAT_INCREMENTS) && ninc > 0 &&
      memcmp(inc + nq, prev_inc, ninc * sizeof(double)) == 0) {
    memcpy(out->rep_inc_row, inc, nq * sizeof(double));
    rows[out->rep_inc] = out->rep_inc_row;
    out->repeats |= REPEAT_INCREMENTS;
  }
  if (pv && (have & REPEAT_VELOCITY) && memcmp(pv, prev_sv, nq * sizeof(double)) == 0) {
    rows[out->rep_pv] = out->rep_zero;
    out->repeats |= REPEAT_VELOCITY;
  }
  if (pm && (have & REPEAT_MULTIPLIERS) && memcmp(pm, prev_mu, nmu * sizeof(double)) == 0) {
    rows[out->rep_pm] = out->rep_zero;
    out->repeats |= REPEAT_MULTIPLIERS;
  }
  out->rep_have = 0;
  if (inc && ninc > 0) {
    memcpy(prev_inc, inc, ninc * sizeof(double));
    out->rep_have |= REPEAT_INCREMENTS;
  }
  if (sv) {
    memcpy(prev_sv, sv, nq * sizeof(double));
    out->rep_have |= REPEAT_VELOCITY;
  }
  if (mu) {
    memcpy(prev_mu, mu, nmu * sizeof(double));
    out->rep_have |= REPEAT_MULTIPLIERS;
  }
  out->rep_count = mbs_output_count(out->w);
  mbs_output_put(out->w, out->h_repeats, &out->repeats);
}

static void put_integrator_state(mbsRecorder *out, const mbsStateArray *a, int n) {
  const double *rows[MBS_STATE_MAX];
  for (int i = 0; i < n && i < MBS_STATE_MAX; i++) {
    rows[i] = a[i].data;
  }
  mark_repeats(out, a, rows);
  for (int i = 0; i < n && i < out->nstate; i++) {
    if (out->state_columns[i] > 0) {
      long rows_n = a[i].data && a[i].columns == out->state_columns[i]
                        ? a[i].length / out->state_columns[i]
                        : 0;
      mbs_output_put_rows(out->w, out->h_state[i], a[i].data, rows_n);
    } else {
      mbs_output_put(out->w, out->h_state[i], rows[i]);
    }
  }
}

/* a sidecar grid of n points at the rows of the series `position` (n x 3), with nvec vector
 * attributes */
static mbsStatus point_grid(mbsRecorder *out, const char *name, const char *label, int n,
                            const char *position, const mbsGridVector *vec, int nvec,
                            mbsError *err) {
  mbsGridSpec grid = {.kind = MBS_GRID_POINTS,
                      .name = name,
                      .label = label,
                      .npoint = n,
                      .position = {NULL, position, 3, 0, 0},
                      .nvector = nvec,
                      .vector = vec};
  return mbs_output_add_grid(out->w, &grid, err);
}

/* bodies: centre of mass, director frame, velocities; one point grid in the sidecar */
static mbsStatus describe_bodies(mbsRecorder *out, const mbsModel *m, mbsError *err) {
  int nb = m->nbody;
  out->h_body_pos = series(out, "/bodies/position", MBS_OUT_FLOAT64, 2, nb, 3, "m", 0, err);
  if (out->h_body_pos < 0) {
    return err->status;
  }
  mbsSeriesSpec rot = {.path = "/bodies/orientation",
                       .type = MBS_OUT_FLOAT64,
                       .rank = 3,
                       .shape = {nb, 3, 3},
                       .units = "1"};
  out->h_body_rot = mbs_output_add_series(out->w, &rot, err);
  out->h_body_vel = out->h_body_rot < 0 ? -1
                    : series(out, "/bodies/velocity", MBS_OUT_FLOAT64, 2, nb, 3, "m/s", 0, err);
  out->h_body_omega = out->h_body_vel < 0 ? -1
                      : series(out, "/bodies/angular_velocity", MBS_OUT_FLOAT64, 2, nb, 3,
                               "rad/s", 0, err);
  if (out->h_body_omega < 0 ||
      names(out, "/bodies/names", m->body_name, nb, err)) {
    return err->status;
  }
  /* the sidecar: points with velocities and the directors d1, d2, d3 */
  static const mbsGridVector vec[] = {
      {"velocity", "/bodies/velocity", 3, 0, 0},
      {"angular_velocity", "/bodies/angular_velocity", 3, 0, 0},
      {"d1", "/bodies/orientation", 9, 0, 1},
      {"d2", "/bodies/orientation", 9, 1, 1},
      {"d3", "/bodies/orientation", 9, 2, 1},
  };
  /* a model of beams only has no body grid (an empty one would have no geometry) */
  return nb == 0 ? MBS_OK
                 : point_grid(out, "bodies", "record", nb, "/bodies/position", vec, 5, err);
}

static void put_bodies(mbsRecorder *out, const mbsData *d) {
  mbs_output_put(out->w, out->h_body_pos, d->body_pos);
  mbs_output_put(out->w, out->h_body_rot, d->body_rot);
  mbs_output_put(out->w, out->h_body_vel, d->body_vel);
  mbs_output_put(out->w, out->h_body_omega, d->body_omega);
}

/* joints: reaction on the second body, the drive's part of it in the joint frame, joint
 * point, joint coordinates and rates (their
 * units per joint: attribute joint_units); one point grid in the sidecar when there are
 * joints */
static mbsStatus describe_joints(mbsRecorder *out, const mbsModel *m, const char *const *junits,
                                 const char *const *jrunits, mbsError *err) {
  int nj = m->njoint;
  out->h_joint_reaction =
      series(out, "/joints/reaction", MBS_OUT_FLOAT64, 2, nj, 6, "N, N m", 0, err);
  out->h_joint_drive = out->h_joint_reaction < 0
                           ? -1
                           : series(out, "/joints/drive", MBS_OUT_FLOAT64, 2, nj, 6, "N, N m",
                                    1, err);
  out->h_joint_position = out->h_joint_drive < 0
                              ? -1
                              : series(out, "/joints/position", MBS_OUT_FLOAT64, 2, nj, 3, "m",
                                       1, err);
  if (out->h_joint_position < 0) {
    return err->status;
  }
  /* joints that engage and release: which hold at each record, and the energy their
   * captures took */
  out->h_joint_active = out->h_capture_dissipated = -1;
  if (m->nengage > 0) {
    out->h_joint_active = series(out, "/joints/active", MBS_OUT_INT32, 1, nj, 0, "1", 0, err);
    out->h_capture_dissipated =
        out->h_joint_active < 0
            ? -1
            : series(out, "/energy/capture_dissipated", MBS_OUT_FLOAT64, 0, 0, 0, "J", 0, err);
    if (out->h_capture_dissipated < 0) {
      return err->status;
    }
  }
  /* coordinates beyond a joint's count are NaN */
  mbsSeriesSpec c = {.path = "/joints/coordinates",
                     .type = MBS_OUT_FLOAT64,
                     .rank = 2,
                     .shape = {nj, 3},
                     .units = "rad or m (per joint: attribute joint_units)",
                     .optional = 1,
                     .nonfinite_ok = 1};
  out->h_joint_coord = mbs_output_add_series(out->w, &c, err);
  c.path = "/joints/rates";
  c.units = "rad/s or m/s (per joint: attribute joint_units)";
  out->h_joint_rate = out->h_joint_coord < 0 ? -1 : mbs_output_add_series(out->w, &c, err);
  if (out->h_joint_rate < 0 ||
      (nj > 0 && (mbs_output_series_attr(out->w, out->h_joint_coord, "joint_units", junits, nj,
                                         err) != MBS_OK ||
                  mbs_output_series_attr(out->w, out->h_joint_rate, "joint_units", jrunits, nj,
                                         err) != MBS_OK)) ||
      names(out, "/joints/names", m->joint_name, nj, err) != MBS_OK) {
    return err->status;
  }
  if (nj == 0) {
    return MBS_OK;
  }
  /* the sidecar: the joint points with the force and torque on body 2 */
  static const mbsGridVector vec[] = {
      {"force", "/joints/reaction", 6, 0, 0},
      {"torque", "/joints/reaction", 6, 3, 0},
  };
  return point_grid(out, "joints", "joints", nj, "/joints/position", vec, 2, err);
}

static void put_joints(mbsRecorder *out, const mbsModel *m, const mbsData *d,
                       const double *joint_pos) {
  if (out->h_joint_active >= 0) {
    for (int j = 0; j < m->njoint; j++) {
      d->joint_active[j] = mbs_joint_holds(m, j);
    }
    mbs_output_put(out->w, out->h_joint_active, d->joint_active);
    mbs_output_put(out->w, out->h_capture_dissipated, &d->capture_dissipated);
  }
  mbs_output_put(out->w, out->h_joint_reaction, d->joint_reaction);
  mbs_output_put(out->w, out->h_joint_drive, d->joint_drive);
  mbs_output_put(out->w, out->h_joint_position, joint_pos);
  mbs_output_put(out->w, out->h_joint_coord, d->joint_coord);
  mbs_output_put(out->w, out->h_joint_rate, d->joint_rate);
}

/* loads: force and torque on their second body */
static mbsStatus describe_loads(mbsRecorder *out, const mbsModel *m, mbsError *err) {
  out->h_load_force =
      series(out, "/loads/force", MBS_OUT_FLOAT64, 2, m->nload, 6, "N, N m", 1, err);
  if (out->h_load_force < 0 ||
      names(out, "/loads/names", m->load_name, m->nload, err) != MBS_OK) {
    return err->status;
  }
  return MBS_OK;
}

/* beams: per beam /beams/<name>/position [nodes, 3] (phi), directors [nodes, 3, 3] (column i
 * = d_i), strain [elements, 6] (mbs_beam_element_strain: axial, two shear, torsion, two
 * bending, at each element's midpoint), /energy/strain (the beam elements' potential, also
 * in /energy/potential); the sidecar draws each beam as a polyline with d2 and d3 */
static mbsStatus describe_beams(mbsRecorder *out, const mbsModel *m, mbsError *err) {
  out->h_strain_energy = -1;
  if (m->nbeam == 0) {
    return MBS_OK;
  }
  /* the rows stay in place until the writer's append reads them: one block for all */
  size_t nrow = 0;
  for (int i = 0; i < m->nbeam; i++) {
    nrow += 12 * (size_t)m->beam[i].nnode + 6 * (size_t)m->beam[i].nelem;
  }
  out->h_beam = malloc((size_t)(3 * m->nbeam) * sizeof(int));
  out->beam_row = malloc(nrow * sizeof(double));
  if (!out->h_beam || !out->beam_row) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory describing the output");
  }
  out->h_strain_energy = series(out, "/energy/strain", MBS_OUT_FLOAT64, 0, 0, 0, "J", 0, err);
  if (out->h_strain_energy < 0) {
    return err->status;
  }
  for (int i = 0; i < m->nbeam; i++) {
    const mbsBeam *b = &m->beam[i];
    char pos[MBS_NAME_MAX + 32], dir[MBS_NAME_MAX + 32], str[MBS_NAME_MAX + 32];
    snprintf(pos, sizeof(pos), "/beams/%s/position", b->name);
    snprintf(dir, sizeof(dir), "/beams/%s/directors", b->name);
    snprintf(str, sizeof(str), "/beams/%s/strain", b->name);
    int *h = out->h_beam + 3 * i;
    mbsSeriesSpec rot = {
        .path = dir, .type = MBS_OUT_FLOAT64, .rank = 3, .shape = {b->nnode, 3, 3}, .units = "1"};
    h[0] = series(out, pos, MBS_OUT_FLOAT64, 2, b->nnode, 3, "m", 0, err);
    h[1] = h[0] < 0 ? -1 : mbs_output_add_series(out->w, &rot, err);
    h[2] = h[1] < 0 ? -1
                    : series(out, str, MBS_OUT_FLOAT64, 2, b->nelem, 6,
                             "1 (axial, shear: columns 0-2), 1/m (torsion, bending: columns 3-5)",
                             0, err);
    if (h[2] < 0) {
      return err->status;
    }
    const mbsGridVector vec[] = {{"d2", dir, 9, 1, 1}, {"d3", dir, 9, 2, 1}};
    char gname[MBS_NAME_MAX + 8];
    snprintf(gname, sizeof(gname), "beam_%s", b->name);
    mbsGridSpec grid = {.kind = MBS_GRID_POLYLINE,
                        .name = gname,
                        .label = "record",
                        .npoint = b->nnode,
                        .position = {NULL, pos, 3, 0, 0},
                        .nvector = 2,
                        .vector = vec};
    if (mbs_output_add_grid(out->w, &grid, err) != MBS_OK) {
      return err->status;
    }
  }
  return MBS_OK;
}

static void put_beams(mbsRecorder *out, const mbsModel *m, const mbsData *d) {
  if (out->h_strain_energy < 0) {
    return;
  }
  const double *q = d->q;
  out->strain_energy = mbs_beam_strain_energy(m, q);
  double *row = out->beam_row;
  for (int i = 0; i < m->nbeam; i++) {
    const mbsBeam *b = &m->beam[i];
    const int *h = out->h_beam + 3 * i;
    for (int k = 0; k < b->nnode; k++) {
      memcpy(row + 3 * k, q + 3 * (b->node0 + 4 * k), 3 * sizeof(double));
    }
    mbs_output_put(out->w, h[0], row);
    row += 3 * b->nnode;
    for (int k = 0; k < b->nnode; k++) {
      for (int a = 0; a < 3; a++) {
        const double *da = q + 3 * (b->node0 + 4 * k + 1 + a);
        for (int c = 0; c < 3; c++) {
          row[9 * k + 3 * c + a] = da[c];
        }
      }
    }
    mbs_output_put(out->w, h[1], row);
    row += 9 * b->nnode;
    for (int e = 0; e < b->nelem; e++) {
      mbs_beam_element_strain(&m->elem[b->elem0 + e], q, row + 6 * e);
    }
    mbs_output_put(out->w, h[2], row);
    row += 6 * b->nelem;
  }
  mbs_output_put(out->w, out->h_strain_energy, &out->strain_energy);
}

/* contacts (models with contact pairs): /energy/contact_dissipated, the ragged table
 * /contacts/{count,offsets,table} of the contacts since the previous record (each with the
 * geometry and impulses of its last step), beside it row by row the impulse each contact
 * gave over all those steps (/contacts/impulse_since_record: with a coarse output.every no
 * impact between records is lost) and the tangent t1 of the step's impulse columns
 * (/contacts/tangent1; t2 = normal x t1), and the points with normals in the sidecar */
static mbsStatus describe_contacts(mbsRecorder *out, const mbsModel *m, mbsError *err) {
  out->h_contact_dissipated = out->h_contacts = -1;
  out->h_impact_dissipated = out->h_friction_dissipated = out->h_numerical_dissipation = -1;
  out->h_contact_sum = out->h_contact_t1 = -1;
  out->h_contact_iterations = out->h_contact_residual = -1;
  if (m->ncontact_paired == 0) {
    return MBS_OK;
  }
  static const char *const cols[MBS_REC_CONTACT_COLS] = {
      "record",   "body_a",   "body_b", "point_x",   "point_y",   "point_z",   "normal_x",
      "normal_y", "normal_z", "gap",    "impulse_n", "impulse_t1", "impulse_t2", "status"};
  static const char *const xyz[3] = {"x", "y", "z"};
  out->h_contact_dissipated =
      series(out, "/energy/contact_dissipated", MBS_OUT_FLOAT64, 0, 0, 0, "J", 0, err);
  /* its parts, and the theta method's numerical damping (moreau's energy balance) */
  out->h_impact_dissipated =
      out->h_contact_dissipated < 0
          ? -1
          : series(out, "/energy/impact_dissipated", MBS_OUT_FLOAT64, 0, 0, 0, "J", 0, err);
  out->h_friction_dissipated =
      out->h_impact_dissipated < 0
          ? -1
          : series(out, "/energy/friction_dissipated", MBS_OUT_FLOAT64, 0, 0, 0, "J", 0, err);
  out->h_numerical_dissipation =
      out->h_friction_dissipated < 0
          ? -1
          : series(out, "/energy/numerical_dissipation", MBS_OUT_FLOAT64, 0, 0, 0, "J", 0, err);
  out->h_contact_iterations =
      out->h_numerical_dissipation < 0
          ? -1
          : series(out, "/solver/contact_iterations", MBS_OUT_INT32, 0, 0, 0, "1", 0, err);
  out->h_contact_residual =
      out->h_contact_iterations < 0
          ? -1
          : series(out, "/solver/contact_residual", MBS_OUT_FLOAT64, 0, 0, 0,
                   "1 (relative to the step's contact velocity scale)", 0, err);
  if (out->h_contact_residual < 0) {
    return err->status;
  }
  out->h_contacts = mbs_output_add_ragged(
      out->w, "/contacts", MBS_REC_CONTACT_COLS,
      "1, index, index, m (3), 1 (3), m, N s (3: impulses of the step), 1 (0 open, 1 stick, 2 slip)",
      cols, err);
  if (out->h_contacts < 0) {
    return err->status;
  }
  out->h_contact_sum = mbs_output_add_aligned(
      out->w, out->h_contacts, "/contacts/impulse_since_record", 3,
      "N s (world components, on body b; -impulse on body a)", xyz, err);
  out->h_contact_t1 = out->h_contact_sum < 0
                          ? -1
                          : mbs_output_add_aligned(out->w, out->h_contacts, "/contacts/tangent1",
                                                   3, "1", xyz, err);
  if (out->h_contact_t1 < 0) {
    return err->status;
  }
  out->contact_cap = 16;
  out->contact_rows = malloc((size_t)out->contact_cap * (MBS_REC_CONTACT_COLS + 6) * sizeof(double));
  if (!out->contact_rows) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory describing the output");
  }
  static const mbsGridVector vec[] = {{"normal", NULL, MBS_REC_CONTACT_COLS, 6, 0}};
  mbsGridSpec grid = {.kind = MBS_GRID_RAGGED_POINTS,
                      .name = "contacts",
                      .label = "record",
                      .ragged = out->h_contacts,
                      .position = {NULL, NULL, MBS_REC_CONTACT_COLS, 3, 0},
                      .nvector = 1,
                      .vector = vec};
  return mbs_output_add_grid(out->w, &grid, err);
}

/* the rows of the contacts since the previous record; grows its row buffer outside the step
 * loop (a record), and on failure writes the rows it has room for */
static void put_contacts(mbsRecorder *out, const mbsData *d) {
  if (out->h_contacts < 0) {
    return;
  }
  out->contact_dissipated = d->contact_dissipated;
  mbs_output_put(out->w, out->h_contact_dissipated, &out->contact_dissipated);
  out->dissipation_parts[0] = d->impact_dissipated;
  out->dissipation_parts[1] = d->friction_dissipated;
  out->dissipation_parts[2] = d->numerical_dissipated;
  mbs_output_put(out->w, out->h_impact_dissipated, &out->dissipation_parts[0]);
  mbs_output_put(out->w, out->h_friction_dissipated, &out->dissipation_parts[1]);
  mbs_output_put(out->w, out->h_numerical_dissipation, &out->dissipation_parts[2]);
  out->contact_iterations = d->contact_iterations;
  out->contact_residual = d->contact_residual;
  mbs_output_put(out->w, out->h_contact_iterations, &out->contact_iterations);
  mbs_output_put(out->w, out->h_contact_residual, &out->contact_residual);
  const mbsContactRecord *c = NULL;
  int n = mbs_solver_contacts(d, &c);
  if (n > out->contact_cap) {
    double *grown =
        realloc(out->contact_rows, (size_t)n * (MBS_REC_CONTACT_COLS + 6) * sizeof(double));
    if (grown) {
      out->contact_rows = grown;
      out->contact_cap = n;
    } else {
      n = out->contact_cap;
    }
  }
  /* the three blocks of the buffer (their sizes follow the capacity) */
  double *sum = out->contact_rows + (size_t)out->contact_cap * MBS_REC_CONTACT_COLS;
  double *t1 = sum + 3 * (size_t)out->contact_cap;
  for (int k = 0; k < n; k++) {
    double *r = out->contact_rows + (size_t)k * MBS_REC_CONTACT_COLS;
    r[0] = (double)out->nrecord;
    r[1] = c[k].body[0];
    r[2] = c[k].body[1];
    for (int i = 0; i < 3; i++) {
      r[3 + i] = c[k].point[i];
      r[6 + i] = c[k].normal[i];
      r[10 + i] = c[k].impulse[i];
      sum[3 * k + i] = c[k].impulse_sum[i];
      t1[3 * k + i] = c[k].tangent[0][i];
    }
    r[9] = c[k].gap;
    r[13] = c[k].status;
  }
  mbs_output_put_rows(out->w, out->h_contacts, out->contact_rows, n);
  mbs_output_put_aligned(out->w, out->h_contact_sum, sum);
  mbs_output_put_aligned(out->w, out->h_contact_t1, t1);
}

/* spacetime: the action integral of each temporal element (seed 003 sec. 4.2), a ragged
 * table /solver/action whose record k holds the elements that ended after record k - 1 and
 * by record k (a restarted run's file continues with the elements after its first record) */
static void action_sink(void *ctx, const double *row) {
  mbsRecorder *out = ctx;
  if (out->action_sent) {
    out->action_n = 0;
    out->action_sent = 0;
  }
  if (out->action_n == out->action_cap) {
    /* doubling: a handful of reallocations per run (outside the library's step loop) */
    long cap = out->action_cap > 0 ? 2 * out->action_cap : 256;
    double *grown = realloc(out->action_rows, (size_t)cap * MBS_ACTION_COLS * sizeof(double));
    if (!grown) {
      out->action_nomem = 1;
      return;
    }
    out->action_rows = grown;
    out->action_cap = cap;
  }
  memcpy(out->action_rows + (size_t)out->action_n * MBS_ACTION_COLS, row,
         MBS_ACTION_COLS * sizeof(double));
  out->action_n++;
}

static mbsStatus describe_action(mbsRecorder *out, const mbsModel *m, mbsData *d, mbsError *err) {
  out->h_action = -1;
  if (!mbs_integrator_policy(m->integrator)->action) {
    return MBS_OK;
  }
  static const char *const cols[MBS_ACTION_COLS] = {"t_start", "t_end", "block",
                                                    "energy_integral", "lagrangian_action"};
  out->h_action = mbs_output_add_ragged(
      out->w, "/solver/action", MBS_ACTION_COLS,
      "s, s, 1 (index), J s (integral of T + V over the element), J s (integral of T - V)",
      cols, err);
  if (out->h_action < 0) {
    return err->status;
  }
  d->action_sink = action_sink;
  d->action_ctx = out;
  return MBS_OK;
}

static void put_action(mbsRecorder *out) {
  if (out->h_action < 0) {
    return;
  }
  if (out->action_sent) {
    out->action_n = 0;
  }
  mbs_output_put_rows(out->w, out->h_action, out->action_rows, out->action_n);
  out->action_sent = 1;
}

/* shapes (docs/output.md): every shape the model holds, evaluated, for viewers that must not
 * read the deck: /shapes/table [rows, SHAPE_COLS], /shapes/names [rows], /shapes/points
 * [points, 3]. A row is a body's drawn `shape` (role 0), a contact shape of a body, beam node
 * or the ground (role 1), or a beam's section swept along its nodes (role 2), placed in its
 * owner's frame: a body's centre of mass and directors (/bodies/position, orientation), a beam
 * node's phi and directors (/beams/<name>/position, directors), the world for the ground. */
#define SHAPE_COLS 21
/* the drawn cylinder's kind code, after the first five contact shapes' (a ring, added later,
 * is 6: the codes stay what they were) */
#define SHAPE_CYLINDER 5
_Static_assert(MBS_SHAPE_RING == SHAPE_CYLINDER && MBS_SHAPE_PATCH == SHAPE_CYLINDER + 1 &&
                   MBS_SHAPE_COUNT == SHAPE_CYLINDER + 2,
               "the shape codes of /shapes/table: 0 .. 4 the first contact shapes, 5 the drawn "
               "cylinder, 6 a ring, 7 a surface's patch");

/* the code of a contact shape's kind in /shapes/table */
static int shape_code(mbsShapeKind k) {
  return k >= MBS_SHAPE_RING ? (int)k + 1 : (int)k;
}

/* one row: owner, role, kind, sizes, offset and axes (column i = shape axis i, owner axes) */
static void shape_row(double *r, int owner, int role, int kind, const double size[3],
                      const double offset[3], const double axes[9]) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  static const double zero[3] = {0, 0, 0};
  r[0] = owner;
  r[1] = role;
  r[2] = kind;
  for (int i = 0; i < 3; i++) {
    r[3 + i] = size ? size[i] : 0.0;
    r[6 + i] = offset ? offset[i] : zero[i];
  }
  for (int i = 0; i < 9; i++) {
    r[9 + i] = axes ? axes[i] : I3[i];
  }
  r[18] = r[19] = r[20] = 0.0;
}

/* a point c and axes C (may be NULL) fixed to attachment frame f, in frame coordinates
 * (model.h: about the frame's point phi on its directors; a static frame's in the world), as
 * the offset and axes in the frame's owner's: a body's centre of mass and directors, a beam
 * node's phi and directors, the world for the ground. The owner is f - 1 (-1 the ground,
 * nbody + k beam node k: frames 1 + b and 1 + nbody + k). */
static void owner_coords(const mbsModel *m, int f, const double c[3], const double C[9],
                         double off[3], double axes[9]) {
  int b = m->attach_body[f];
  memcpy(off, c, 3 * sizeof(double));
  if (C) {
    memcpy(axes, C, 9 * sizeof(double));
  }
  if (m->attach_kind[f] == MBS_ATTACH_STATIC) {
    /* a fixed body's: offset R0^T (c - x0), axes R0^T C */
    const double *x0 = m->body_pos0 + 3 * b, *R0 = m->body_R0 + 9 * b;
    for (int i = 0; i < 3; i++) {
      off[i] = 0.0;
      for (int k = 0; k < 3; k++) {
        off[i] += R0[3 * k + i] * (c[k] - x0[k]);
      }
      for (int j = 0; C && j < 3; j++) {
        axes[3 * i + j] = 0.0;
        for (int k = 0; k < 3; k++) {
          axes[3 * i + j] += R0[3 * k + i] * C[3 * k + j];
        }
      }
    }
  } else if (m->attach_kind[f] == MBS_ATTACH_DIRECTORS) {
    /* a rigid body's c is about phi, and its centre of mass is phi - body_ref */
    for (int i = 0; i < 3; i++) {
      off[i] = c[i] + m->body_ref[3 * b + i];
    }
  }
}

/* contact shape s as a row, placed in its owner's frame */
static void contact_shape_row(const mbsModel *m, const mbsShape *s, double *r) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double size[3] = {0, 0, 0}, off[3] = {0, 0, 0}, axes[9];
  switch (s->kind) {
    case MBS_SHAPE_SPHERE:
      size[0] = s->size[0];
      break;
    case MBS_SHAPE_BOX:
      for (int i = 0; i < 3; i++) {
        size[i] = 2.0 * s->size[i];
      }
      break;
    case MBS_SHAPE_CAPSULE:
      size[0] = s->size[0];
      size[1] = 2.0 * s->size[1];
      break;
    case MBS_SHAPE_RING:
      size[0] = s->size[0];
      break;
    case MBS_SHAPE_PATCH:
      /* the owners of its corners 2, 3, 4 (the row's owner is corner 1's) */
      for (int k = 0; k < 3; k++) {
        size[k] = s->corner[k + 1] - 1;
      }
      break;
    default:
      break;
  }
  /* a beam segment follows its two nodes, a surface's patch its four corners: no offset or
   * axes */
  if (s->segment || s->kind == MBS_SHAPE_PATCH) {
    memcpy(axes, I3, sizeof(axes));
  } else {
    owner_coords(m, s->attach, s->c, s->C, off, axes);
  }
  shape_row(r, s->attach - 1, 1, shape_code(s->kind), size, off, axes);
  if (s->kind == MBS_SHAPE_POINTS) {
    r[18] = s->pt0;
    r[19] = s->npts;
  }
  r[20] = s->segment;
}

/* joints: /joints/bodies [nj, 2] (int32, the owners of its two sides) and /joints/points
 * [nj, 6] (its point on each side in that owner's frame), so that a viewer draws the links
 * from body to joint to body without the deck */
static mbsStatus describe_joint_points(mbsRecorder *out, const mbsModel *m, mbsError *err) {
  static const char *const pcols[6] = {"point_1_x", "point_1_y", "point_1_z",
                                       "point_2_x", "point_2_y", "point_2_z"};
  static const char *const bcols[2] = {"body_1", "body_2"};
  int nj = m->njoint;
  int *bodies = malloc((size_t)(nj > 0 ? 2 * nj : 1) * sizeof(int));
  double *points = malloc((size_t)(nj > 0 ? 6 * nj : 1) * sizeof(double));
  mbsStatus st = MBS_OK;
  if (!bodies || !points) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory describing the output");
    goto done;
  }
  for (int j = 0; j < nj; j++) {
    const double *c[2] = {m->joint_point_first + 3 * j, m->joint_point + 3 * j};
    for (int k = 0; k < 2; k++) {
      int f = m->joint_attach[2 * j + k];
      bodies[2 * j + k] = f - 1;
      owner_coords(m, f, c[k], NULL, points + 6 * j + 3 * k, NULL);
    }
  }
  mbsTableSpec tb = {.path = "/joints/bodies",
                     .type = MBS_OUT_INT32,
                     .nrow = nj,
                     .ncol = 2,
                     .data = bodies,
                     .units = "index",
                     .column_names = bcols};
  mbsTableSpec tp = {.path = "/joints/points",
                     .type = MBS_OUT_FLOAT64,
                     .nrow = nj,
                     .ncol = 6,
                     .data = points,
                     .units = "m",
                     .column_names = pcols};
  st = mbs_output_add_table(out->w, &tb, err);
  if (st == MBS_OK) {
    st = mbs_output_add_table(out->w, &tp, err);
  }

done:
  free(bodies);
  free(points);
  return st;
}

static mbsStatus describe_shapes(mbsRecorder *out, const mbsModel *m, mbsError *err) {
  static const char *const cols[SHAPE_COLS] = {
      "owner",    "role",     "kind",    "size_1",  "size_2",       "size_3",       "offset_x",
      "offset_y", "offset_z", "axes_11", "axes_12", "axes_13",      "axes_21",      "axes_22",
      "axes_23",  "axes_31",  "axes_32", "axes_33", "points_first", "points_count", "segment"};
  static const char *const roles[3] = {"shape", "collision", "beam section"};
  const char *kinds[MBS_SHAPE_COUNT + 1];
  for (int i = 0; i < MBS_SHAPE_COUNT; i++) {
    kinds[shape_code((mbsShapeKind)i)] = mbs_shape_words[i];
  }
  kinds[SHAPE_CYLINDER] = "cylinder";

  int nrow = m->nshape + m->nbeam;
  for (int b = 0; b < m->nbody; b++) {
    nrow += m->body_visual[b] != MBS_VISUAL_NONE;
  }
  double *rows = malloc((size_t)(nrow > 0 ? nrow : 1) * SHAPE_COLS * sizeof(double));
  const char **label = malloc((size_t)(nrow > 0 ? nrow : 1) * sizeof(*label));
  mbsStatus st = MBS_OK;
  if (!rows || !label) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory describing the output");
    goto done;
  }

  /* the bodies' drawn shapes, centred on their centres of mass in body axes */
  int k = 0;
  for (int b = 0; b < m->nbody; b++) {
    const double *sz = m->body_visual_size + 3 * b;
    double size[3] = {sz[0], 0.0, 0.0};
    int kind = MBS_SHAPE_SPHERE;
    switch (m->body_visual[b]) {
      case MBS_VISUAL_BOX:
        kind = MBS_SHAPE_BOX;
        memcpy(size, sz, sizeof(size));
        break;
      case MBS_VISUAL_CYLINDER:
        kind = SHAPE_CYLINDER;
        size[1] = sz[1];
        break;
      case MBS_VISUAL_SPHERE:
        break;
      default:
        continue;
    }
    shape_row(rows + (size_t)k * SHAPE_COLS, b, 0, kind, size, NULL, NULL);
    label[k++] = m->body_name[b];
  }
  /* the contact shapes of bodies, beam nodes and the ground */
  for (int i = 0; i < m->nshape; i++) {
    contact_shape_row(m, &m->shape[i], rows + (size_t)k * SHAPE_COLS);
    label[k++] = m->shape[i].name;
  }
  /* the beams' sections along d1 from their first node: a box [length, h, w], a cylinder
   * [radius, length] */
  for (int i = 0; i < m->nbeam; i++) {
    const mbsBeam *bm = &m->beam[i];
    double box[3] = {bm->length, bm->section[0], bm->section[1]};
    double cyl[3] = {0.5 * bm->section[0], bm->length, 0.0};
    shape_row(rows + (size_t)k * SHAPE_COLS, bm->attach0 - 1, 2,
              bm->section_circle ? SHAPE_CYLINDER : MBS_SHAPE_BOX, bm->section_circle ? cyl : box,
              NULL, NULL);
    label[k++] = bm->name;
  }

  mbsTableSpec table = {.path = "/shapes/table",
                        .type = MBS_OUT_FLOAT64,
                        .nrow = nrow,
                        .ncol = SHAPE_COLS,
                        .data = rows,
                        .units = "index, index (attribute roles), index (attribute kinds), m (3: "
                                 "sizes), m (3: offset), 1 (9: axes), index, 1, 1",
                        .column_names = cols};
  mbsTableSpec points = {.path = "/shapes/points",
                         .type = MBS_OUT_FLOAT64,
                         .nrow = m->ncontact_pts,
                         .ncol = 3,
                         .data = m->contact_pts,
                         .units = "m"};
  st = mbs_output_add_table(out->w, &table, err);
  if (st == MBS_OK) {
    st = mbs_output_dataset_attr(out->w, "/shapes/table", "kinds", kinds, MBS_SHAPE_COUNT + 1, err);
  }
  if (st == MBS_OK) {
    st = mbs_output_dataset_attr(out->w, "/shapes/table", "roles", roles, 3, err);
  }
  if (st == MBS_OK) {
    st = mbs_output_add_names(out->w, "/shapes/names", label, nrow, err);
  }
  if (st == MBS_OK) {
    st = mbs_output_add_table(out->w, &points, err);
  }

done:
  free(rows);
  free(label);
  return st;
}

/* what viewers need of the model's geometry, written once: shapes and joint points */
static mbsStatus describe_geometry(mbsRecorder *out, const mbsModel *m, mbsError *err) {
  mbsStatus st = describe_shapes(out, m, err);
  return st == MBS_OK ? describe_joint_points(out, m, err) : st;
}

int mbs_state_from_last(const mbsLastRecord *last, mbsStateArray *out, int max) {
  int n = 0;
  /* files without /state/scheme_velocity: the projected /state/v (the restart then agrees
   * with the uninterrupted run to the integrator's accuracy only) */
  const mbsStateArray all[] = {
      {.name = "scheme_velocity",
       .length = last->n_coordinates,
       .data = last->scheme_velocity ? last->scheme_velocity : last->v},
      {.name = "multipliers", .length = last->n_constraints, .data = last->multipliers},
      {.name = "acceleration", .length = last->n_coordinates, .data = last->acceleration},
      {.name = "algorithmic_acceleration",
       .length = last->n_coordinates,
       .data = last->algorithmic_acceleration},
  };
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]) && n < max; i++) {
    if (all[i].data) {
      out[n++] = all[i];
    }
  }
  /* the integrator's other arrays by name (moreau's contacts), for its import to check */
  for (int i = 0; i < last->nstate && n < max; i++) {
    int known = 0;
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
      known |= strcmp(last->state[i].name, all[k].name) == 0;
    }
    if (!known && last->state[i].data) {
      const mbsLastArray *a = &last->state[i];
      out[n++] = (mbsStateArray){.name = a->name, .length = a->length, .data = a->data};
    }
  }
  return n;
}

void mbs_recorder_free(mbsRecorder *out) {
  if (!out) {
    return;
  }
  free(out->extra);
  free(out->unit_col);
  free(out->unit_text);
  free(out->labels);
  free(out->contact_rows);
  free(out->h_beam);
  free(out->beam_row);
  free(out->action_rows);
  free(out->rep_prev);
  free(out->rep_inc_row);
  free(out->rep_zero);
  memset(out, 0, sizeof(*out));
}

mbsStatus mbs_recorder_describe(mbsRecorder *out, mbsWriter *w, const mbsModel *m, mbsData *d,
                              const char *const *names, const char *const *qunits,
                              const char *const *junits, const char *const *jrunits,
                              mbsError *err) {
  memset(out, 0, sizeof(*out));
  out->w = w;
  out->h_repeats = -1;
  out->nq = m->nq;
  out->qunits = qunits;
  out->extra = malloc((size_t)(3 * m->njoint + 1) * sizeof(double));
  out->unit_col = malloc((size_t)(m->nq > 0 ? m->nq : 1) * sizeof(*out->unit_col));
  out->unit_text = malloc((size_t)(m->nq > 0 ? m->nq : 1) * 16);
  int nlabel = m->nbody > m->njoint ? m->nbody : m->njoint;
  nlabel = nlabel > m->nload ? nlabel : m->nload;
  out->labels = malloc((size_t)(nlabel > 0 ? nlabel : 1) * sizeof(*out->labels));
  if (!out->extra || !out->unit_col || !out->unit_text || !out->labels) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory describing the output");
  }
  for (int i = 0; i < 3 * m->njoint + 1; i++) {
    out->extra[i] = 0.0;
  }
  /* the integrator's named arrays (its state for a restart), as they are now: genalpha's
   * accelerations are there before they exist (data NULL, written as NaN) */
  mbsStateArray state[MBS_STATE_MAX];
  int nstate = mbs_solver_state_export(m, d, state, MBS_STATE_MAX);
  mbsStatus st = describe_observables(out, err);
  if (st == MBS_OK) {
    st = describe_solver(out, err);
  }
  if (st == MBS_OK) {
    st = describe_state(out, names, err);
  }
  if (st == MBS_OK) {
    st = describe_integrator_state(out, state, nstate, err);
  }
  if (st == MBS_OK) {
    st = describe_repeats(out, state, nstate, m->ncon, err);
  }
  if (st == MBS_OK) {
    st = describe_bodies(out, m, err);
  }
  if (st == MBS_OK) {
    st = describe_joints(out, m, junits, jrunits, err);
  }
  if (st == MBS_OK) {
    st = describe_loads(out, m, err);
  }
  if (st == MBS_OK) {
    st = describe_contacts(out, m, err);
  }
  if (st == MBS_OK) {
    st = describe_beams(out, m, err);
  }
  if (st == MBS_OK) {
    st = describe_action(out, m, d, err);
  }
  if (st == MBS_OK) {
    st = describe_geometry(out, m, err);
  }
  return st;
}

int mbs_recorder_put(mbsRecorder *out, const mbsModel *m, mbsData *d, const mbsObservables *o,
                   mbsStateArray *state) {
  /* extra: (njoint x 3) joint positions */
  mbs_record_extras(m, d, out->extra);
  int nstate = mbs_solver_state_export(m, d, state, MBS_STATE_MAX);
  put_observables(out, o);
  put_solver(out, d);
  put_state(out, d);
  put_integrator_state(out, state, nstate);
  put_bodies(out, d);
  put_joints(out, m, d, out->extra);
  mbs_output_put(out->w, out->h_load_force, d->load_force);
  put_contacts(out, d);
  mbs_solver_contacts_clear(d); /* the next record's sums start after this one */
  put_beams(out, m, d);
  put_action(out);
  out->nrecord++;
  return nstate;
}

void mbs_record_joint_units(mbsJointType t, const char **coord, const char **rate) {
  switch (t) {
    case MBS_JOINT_REVOLUTE:
      *coord = "rad";
      *rate = "rad/s";
      return;
    case MBS_JOINT_PRISMATIC:
      *coord = "m";
      *rate = "m/s";
      return;
    case MBS_JOINT_CYLINDRICAL:
      *coord = "rad, m";
      *rate = "rad/s, m/s";
      return;
    case MBS_JOINT_UNIVERSAL:
      *coord = "rad, rad";
      *rate = "rad/s, rad/s";
      return;
    case MBS_JOINT_PLANAR:
      *coord = "m, m, rad";
      *rate = "m/s, m/s, rad/s";
      return;
    case MBS_JOINT_SLIDE_ON_BEAM:
      *coord = "m";
      *rate = "m/s";
      return;
    case MBS_JOINT_SPHERICAL:
      *coord = "rad, rad, rad";
      *rate = "rad/s, rad/s, rad/s";
      return;
    default: /* fixed, distance: no coordinates (NaN) */
      *coord = "none";
      *rate = "none";
      return;
  }
}
