/* std_layout.h: the datasets of an mbsim-run result (docs/output.md) written through the
 * writer's registry from plain arrays, for the tests of the writer and the reader (the
 * command registers the same datasets from its model in src/run/record.c). testInfo holds
 * the root attributes (mbsOutputInfo) and the sizes and labels; testRecord one record. */
#ifndef MBSIM_TESTS_STD_LAYOUT_H
#define MBSIM_TESTS_STD_LAYOUT_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbsim/output.h"

typedef struct {
  const char *version, *title, *deck_text, *integrator, *integrator_reason, *linear_solver;
  double dt, t_end;
  int n_coordinates, n_constraints, n_dof;
  const char *const *coordinate_names;
  const char *const *coordinate_units;
  const char *const *joint_units;
  const char *const *joint_rate_units;
  int nbody;
  const char *const *body_names;
  int write_xdmf;
  int njoint;
  const char *const *joint_names;
  int nload;
  const char *const *load_names;
  int overwrite;
  const char *restart_from;
  int write_acceleration;
  const char *redundant_rows;
} testInfo;

typedef struct {
  double time, kinetic, potential, external_work, dissipated;
  double linear_momentum[3], angular_momentum[3];
  double violation, velocity_violation;
  int iterations, factorizations, solves;
  double step_size;
  const double *q, *v, *scheme_velocity;
  const double *body_position, *body_orientation, *body_velocity, *body_angular_velocity;
  const double *joint_reaction, *joint_position, *joint_coordinates, *load_force, *joint_rates;
  const double *multipliers, *acceleration, *algorithmic_acceleration;
} testRecord;

/* the handles of one open writer */
enum {
  TL_KINETIC, TL_POTENTIAL, TL_TOTAL, TL_EXTERNAL, TL_DISSIPATED, TL_LINEAR, TL_ANGULAR,
  TL_VIOLATION, TL_VVIOLATION, TL_ITERATIONS, TL_FACTORIZATIONS, TL_SOLVES, TL_STEP, TL_Q, TL_V,
  TL_SCHEME_V, TL_POS, TL_ROT, TL_VEL, TL_OMEGA, TL_REACTION, TL_MULT, TL_JPOS, TL_JCOORD,
  TL_JRATE, TL_LOAD, TL_ACC, TL_AACC, TL_COUNT
};

typedef struct {
  mbsWriter *w;
  int h[TL_COUNT];
  double total;
} tlWriter;

#define TL_MAX_WRITERS 8
static tlWriter tl_open[TL_MAX_WRITERS];

static inline tlWriter *tl_find(const mbsWriter *w) {
  for (int i = 0; i < TL_MAX_WRITERS; i++) {
    if (tl_open[i].w == w) {
      return &tl_open[i];
    }
  }
  return NULL;
}

/* the series of the layout: path, type, rank, shape, units, optional */
static inline int tl_series(mbsWriter *w, const char *path, mbsOutType type, int rank, int n0,
                            int n1, int n2, const char *units, int optional, int nonfinite_ok,
                            mbsError *err) {
  mbsSeriesSpec s = {path, type, rank, {n0, n1, n2}, units, optional, nonfinite_ok, 0};
  return mbs_output_add_series(w, &s, err);
}

/* column_units of a coordinate series (units with suffix) */
static inline int tl_column_units(mbsWriter *w, int h, const testInfo *info, const char *suffix,
                                  mbsError *err) {
  int n = info->n_coordinates;
  if (!info->coordinate_units || n <= 0 || n > MBS_OUTPUT_ATTR_MAX) {
    return 0;
  }
  static char text[64][16];
  static const char *col[64];
  if (n > 64) {
    return 0;
  }
  for (int i = 0; i < n; i++) {
    snprintf(text[i], sizeof(text[i]), "%.6s%s", info->coordinate_units[i], suffix);
    col[i] = text[i];
  }
  return mbs_output_series_attr(w, h, "column_units", col, n, err) == MBS_OK ? 0 : -1;
}

#define U_Q "m, 1 or rad (per column: attribute column_units)"
#define U_V "m/s, 1/s or rad/s (per column: attribute column_units)"
#define U_A "m/s^2, 1/s^2 or rad/s^2 (per column: attribute column_units)"

/* mbs_output_create with the layout's datasets and grids registered; NULL with err */
static inline mbsWriter *tl_create(const char *path, const testInfo *info, mbsError *err) {
  mbsOutputInfo oi = {.version = info->version,
                      .title = info->title,
                      .deck_text = info->deck_text,
                      .integrator = info->integrator,
                      .integrator_reason = info->integrator_reason,
                      .linear_solver = info->linear_solver,
                      .dt = info->dt,
                      .t_end = info->t_end,
                      .n_coordinates = info->n_coordinates,
                      .n_constraints = info->n_constraints,
                      .n_dof = info->n_dof,
                      .write_xdmf = info->write_xdmf,
                      .overwrite = info->overwrite,
                      .restart_from = info->restart_from,
                      .redundant_rows = info->redundant_rows};
  /* labels that must be there: checked before anything is created, as the writer did */
  if (info->n_coordinates > 0 && !info->coordinate_names) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output file '%s': coordinates without names",
                  path ? path : "(null)");
    return NULL;
  }
  tlWriter *t = tl_find(NULL);
  mbsWriter *w = t ? mbs_output_create(path, &oi, err) : NULL;
  if (!w) {
    return NULL;
  }
  int nq = info->n_coordinates, nb = info->nbody, nj = info->njoint, nl = info->nload;
  int *h = t->h;
  int ok = 1;
#define TL(id, ...)                                                                                \
  if (ok) {                                                                                        \
    h[id] = tl_series(w, __VA_ARGS__, err);                                                        \
    ok = h[id] >= 0;                                                                               \
  }
  TL(TL_KINETIC, "/energy/kinetic", MBS_OUT_FLOAT64, 0, 0, 0, 0, "J", 0, 0)
  TL(TL_POTENTIAL, "/energy/potential", MBS_OUT_FLOAT64, 0, 0, 0, 0, "J", 0, 0)
  TL(TL_TOTAL, "/energy/total", MBS_OUT_FLOAT64, 0, 0, 0, 0, "J", 0, 0)
  TL(TL_EXTERNAL, "/energy/external_work", MBS_OUT_FLOAT64, 0, 0, 0, 0, "J", 0, 0)
  TL(TL_DISSIPATED, "/energy/dissipated", MBS_OUT_FLOAT64, 0, 0, 0, 0, "J", 0, 0)
  TL(TL_LINEAR, "/momentum/linear", MBS_OUT_FLOAT64, 1, 3, 0, 0, "kg m/s", 0, 0)
  TL(TL_ANGULAR, "/momentum/angular", MBS_OUT_FLOAT64, 1, 3, 0, 0, "kg m^2/s", 0, 0)
  TL(TL_VIOLATION, "/constraints/violation", MBS_OUT_FLOAT64, 0, 0, 0, 0,
     "m or 1 (that of the worst row)", 0, 0)
  TL(TL_VVIOLATION, "/constraints/velocity_violation", MBS_OUT_FLOAT64, 0, 0, 0, 0,
     "m/s or 1/s (that of the worst row)", 0, 0)
  TL(TL_ITERATIONS, "/solver/iterations", MBS_OUT_INT32, 0, 0, 0, 0, "1", 0, 0)
  TL(TL_FACTORIZATIONS, "/solver/factorizations", MBS_OUT_INT32, 0, 0, 0, 0, "1", 0, 0)
  TL(TL_SOLVES, "/solver/solves", MBS_OUT_INT32, 0, 0, 0, 0, "1", 0, 0)
  TL(TL_STEP, "/solver/step_size", MBS_OUT_FLOAT64, 0, 0, 0, 0, "s", 0, 0)
  TL(TL_Q, "/state/q", MBS_OUT_FLOAT64, 1, nq, 0, 0, U_Q, 0, 0)
  TL(TL_V, "/state/v", MBS_OUT_FLOAT64, 1, nq, 0, 0, U_V, 0, 0)
  TL(TL_SCHEME_V, "/state/scheme_velocity", MBS_OUT_FLOAT64, 1, nq, 0, 0, U_V, 1, 0)
  TL(TL_POS, "/bodies/position", MBS_OUT_FLOAT64, 2, nb, 3, 0, "m", 0, 0)
  TL(TL_ROT, "/bodies/orientation", MBS_OUT_FLOAT64, 3, nb, 3, 3, "1", 0, 0)
  TL(TL_VEL, "/bodies/velocity", MBS_OUT_FLOAT64, 2, nb, 3, 0, "m/s", 0, 0)
  TL(TL_OMEGA, "/bodies/angular_velocity", MBS_OUT_FLOAT64, 2, nb, 3, 0, "rad/s", 0, 0)
  TL(TL_REACTION, "/joints/reaction", MBS_OUT_FLOAT64, 2, nj, 6, 0, "N, N m", 0, 0)
  TL(TL_MULT, "/state/multipliers", MBS_OUT_FLOAT64, 1, info->n_constraints, 0, 0,
     "N or N m (J per unit of the constraint row)", 1, 0)
  TL(TL_JPOS, "/joints/position", MBS_OUT_FLOAT64, 2, nj, 3, 0, "m", 1, 0)
  TL(TL_JCOORD, "/joints/coordinates", MBS_OUT_FLOAT64, 2, nj, 3, 0,
     "rad or m (per joint: attribute joint_units)", 1, 1)
  TL(TL_JRATE, "/joints/rates", MBS_OUT_FLOAT64, 2, nj, 3, 0,
     "rad/s or m/s (per joint: attribute joint_units)", 1, 1)
  TL(TL_LOAD, "/loads/force", MBS_OUT_FLOAT64, 2, nl, 6, 0, "N, N m", 1, 0)
  h[TL_ACC] = h[TL_AACC] = -1;
  if (info->write_acceleration) {
    TL(TL_ACC, "/state/acceleration", MBS_OUT_FLOAT64, 1, nq, 0, 0, U_A, 1, 0)
    TL(TL_AACC, "/state/algorithmic_acceleration", MBS_OUT_FLOAT64, 1, nq, 0, 0, U_A, 1, 0)
  }
#undef TL
  ok = ok && tl_column_units(w, h[TL_Q], info, "", err) == 0 &&
       tl_column_units(w, h[TL_V], info, "/s", err) == 0 &&
       tl_column_units(w, h[TL_SCHEME_V], info, "/s", err) == 0;
  if (ok && info->write_acceleration) {
    ok = tl_column_units(w, h[TL_ACC], info, "/s^2", err) == 0 &&
         tl_column_units(w, h[TL_AACC], info, "/s^2", err) == 0;
  }
  if (ok && info->joint_units && info->joint_rate_units && nj > 0) {
    ok = mbs_output_series_attr(w, h[TL_JCOORD], "joint_units", info->joint_units, nj, err) ==
             MBS_OK &&
         mbs_output_series_attr(w, h[TL_JRATE], "joint_units", info->joint_rate_units, nj,
                                err) == MBS_OK;
  }
  ok = ok &&
       mbs_output_add_names(w, "/state/names", info->coordinate_names, nq, err) == MBS_OK &&
       mbs_output_series_attr(w, h[TL_Q], "names", info->coordinate_names, nq, err) == MBS_OK &&
       mbs_output_series_attr(w, h[TL_V], "names", info->coordinate_names, nq, err) == MBS_OK &&
       mbs_output_add_names(w, "/bodies/names", info->body_names, nb, err) == MBS_OK &&
       mbs_output_add_names(w, "/joints/names", info->joint_names, nj, err) == MBS_OK &&
       mbs_output_add_names(w, "/loads/names", info->load_names, nl, err) == MBS_OK;

  /* the sidecar: bodies (points with velocities and directors), joints */
  static const mbsGridVector bvec[] = {
      {"velocity", "/bodies/velocity", 3, 0, 0},
      {"angular_velocity", "/bodies/angular_velocity", 3, 0, 0},
      {"d1", "/bodies/orientation", 9, 0, 1},
      {"d2", "/bodies/orientation", 9, 1, 1},
      {"d3", "/bodies/orientation", 9, 2, 1},
  };
  static const mbsGridVector jvec[] = {
      {"force", "/joints/reaction", 6, 0, 0},
      {"torque", "/joints/reaction", 6, 3, 0},
  };
  mbsGridSpec bodies = {MBS_GRID_POINTS,       "bodies", "record", nb, 0,
                        {NULL, "/bodies/position", 3, 0, 0}, 5, bvec};
  mbsGridSpec joints = {MBS_GRID_POINTS,       "joints", "joints", nj, 0,
                        {NULL, "/joints/position", 3, 0, 0}, 2, jvec};
  ok = ok && mbs_output_add_grid(w, &bodies, err) == MBS_OK &&
       (nj == 0 || mbs_output_add_grid(w, &joints, err) == MBS_OK);
  /* the empty file complete on disk, as the command leaves it */
  ok = ok && mbs_output_flush(w, err) == MBS_OK;
  if (!ok) {
    mbs_output_close(w, NULL);
    return NULL;
  }
  t->w = w;
  return w;
}

/* mbs_output_append of one record of the layout */
static inline mbsStatus tl_append(mbsWriter *w, const testRecord *r, mbsError *err) {
  tlWriter *t = w ? tl_find(w) : NULL;
  if (!t || !r) {
    return mbs_output_append(NULL, 0.0, err);
  }
  int *h = t->h;
  t->total = r->kinetic + r->potential;
  mbs_output_put(w, h[TL_KINETIC], &r->kinetic);
  mbs_output_put(w, h[TL_POTENTIAL], &r->potential);
  mbs_output_put(w, h[TL_TOTAL], &t->total);
  mbs_output_put(w, h[TL_EXTERNAL], &r->external_work);
  mbs_output_put(w, h[TL_DISSIPATED], &r->dissipated);
  mbs_output_put(w, h[TL_LINEAR], r->linear_momentum);
  mbs_output_put(w, h[TL_ANGULAR], r->angular_momentum);
  mbs_output_put(w, h[TL_VIOLATION], &r->violation);
  mbs_output_put(w, h[TL_VVIOLATION], &r->velocity_violation);
  mbs_output_put(w, h[TL_ITERATIONS], &r->iterations);
  mbs_output_put(w, h[TL_FACTORIZATIONS], &r->factorizations);
  mbs_output_put(w, h[TL_SOLVES], &r->solves);
  mbs_output_put(w, h[TL_STEP], &r->step_size);
  mbs_output_put(w, h[TL_Q], r->q);
  mbs_output_put(w, h[TL_V], r->v);
  mbs_output_put(w, h[TL_SCHEME_V], r->scheme_velocity);
  mbs_output_put(w, h[TL_POS], r->body_position);
  mbs_output_put(w, h[TL_ROT], r->body_orientation);
  mbs_output_put(w, h[TL_VEL], r->body_velocity);
  mbs_output_put(w, h[TL_OMEGA], r->body_angular_velocity);
  mbs_output_put(w, h[TL_REACTION], r->joint_reaction);
  mbs_output_put(w, h[TL_MULT], r->multipliers);
  mbs_output_put(w, h[TL_JPOS], r->joint_position);
  mbs_output_put(w, h[TL_JCOORD], r->joint_coordinates);
  mbs_output_put(w, h[TL_JRATE], r->joint_rates);
  mbs_output_put(w, h[TL_LOAD], r->load_force);
  if (h[TL_ACC] >= 0) {
    mbs_output_put(w, h[TL_ACC], r->acceleration);
    mbs_output_put(w, h[TL_AACC], r->algorithmic_acceleration);
  }
  return mbs_output_append(w, r->time, err);
}

/* mbs_output_close, forgetting the writer's handles */
static inline mbsStatus tl_close(mbsWriter *w, mbsError *err) {
  tlWriter *t = w ? tl_find(w) : NULL;
  if (t) {
    t->w = NULL;
  }
  return mbs_output_close(w, err);
}

#endif
