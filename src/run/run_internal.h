/* run_internal.h: the parts of a run (run.c) that live in files of their own: continuing an
 * earlier run (restart.c) and the datasets a run registers with the writer and the rows of
 * its records (record.c). Private to src/run/. */
#ifndef MBSIM_RUN_INTERNAL_H
#define MBSIM_RUN_INTERNAL_H

#include <stddef.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/output.h"
#include "mbsim/solver.h"

/* what a restart hands to the step loop */
typedef struct {
  int active;             /* 1: the run continues an earlier one */
  char *from;             /* "RUN.h5 at t=5" (root attribute restart_from), malloc'd */
  long n_first;           /* first step number of the loop; steps end at t_n = n dt as in
                             the run from t = 0, so the restarted run continues its grid */
  double *joint_reaction; /* (njoint x 6) reactions of the restart record, or NULL */
  double *joint_drive;    /* (njoint x 6) drive forces of the restart record, or NULL */
  int iterations;         /* Newton iterations of the restart record */
} mbsRestart;

/* Continue from the last record of the result file at path (read in a child process within
 * limits): check that it belongs to the same model (coordinates, constraints, coordinate
 * names) and that t_end lies after it, refuse an output path that is the restart file
 * itself, then set d->t, q, last_dt, the integrator's state (mbs_solver_state_import) and
 * the external work and dissipation accumulators. Notes (what the file lacks) are appended
 * to notes (nnotes bytes, NUL-terminated), one line each. Returns MBS_OK when rs is filled
 * (release with mbs_restart_free), else the reason in err. */
mbsStatus mbs_restart_load(mbsRestart *rs, const char *path, const char *out_path,
                           const mbsInspectLimits *limits, const mbsModel *m, mbsData *d,
                           char *notes, size_t nnotes, mbsError *err);

/* after mbs_observe of the restart state: the first record repeats the restart record
 * (joint reactions and iterations come from the file, not from a step of this run) */
void mbs_restart_first_record(const mbsRestart *rs, const mbsModel *m, mbsData *d);

/* release (accepts a zeroed rs) */
void mbs_restart_free(mbsRestart *rs);

/* record quantities that mbsData does not hold as such: the world position of each joint
 * point fixed to the joint's second body (njoint x 3) */
void mbs_record_extras(const mbsModel *m, const mbsData *d, double *joint_pos);

/* the state arrays of a result file's last record, named as exported (for
 * mbs_solver_state_import); returns their count (<= max), absent arrays left out */
int mbs_state_from_last(const mbsLastRecord *last, mbsStateArray *out, int max);

#define MBS_REC_OBS_SCALARS 7
/* columns of /contacts/table */
#define MBS_REC_CONTACT_COLS 14

/* the datasets of a run: the handles the describe functions got and the rows of a record
 * that exist nowhere else */
typedef struct {
  mbsWriter *w;
  int nq;
  const char *const *qunits; /* (nq) unit of each coordinate (borrowed) */
  int h_obs[MBS_REC_OBS_SCALARS], h_linear, h_angular;
  int h_iterations, h_factorizations, h_solves, h_step_size;
  int h_q, h_v;
  int nstate, h_state[MBS_STATE_MAX]; /* /state/<name> of the integrator's arrays */
  int state_columns[MBS_STATE_MAX];   /* > 0: h_state is a ragged table of these columns */
  int h_body_pos, h_body_rot, h_body_vel, h_body_omega;
  int h_joint_reaction, h_joint_position, h_joint_coord, h_joint_rate, h_joint_drive;
  int h_joint_active; /* /joints/active, -1 without joints that engage or release */
  int h_capture_dissipated; /* /energy/capture_dissipated, -1 without them */
  int h_load_force;
  int h_contact_dissipated, h_contacts; /* models with contact pairs: the series and the
                                           ragged table /contacts (-1 otherwise) */
  int h_contact_sum, h_contact_t1; /* /contacts/impulse_since_record and /contacts/tangent1,
                                      aligned with the rows of /contacts/table */
  double contact_dissipated;
  int h_impact_dissipated, h_friction_dissipated, h_numerical_dissipation;
  double dissipation_parts[3]; /* impact, friction, numerical */
  int h_contact_iterations, h_contact_residual; /* the last step's contact solver */
  int contact_iterations;
  double contact_residual;
  long nrecord;         /* records given so far (the table's record column) */
  double *contact_rows; /* the rows of the current record: (cap x MBS_REC_CONTACT_COLS) of the
                           table, then (cap x 3) impulse sums, then (cap x 3) tangents t1 */
  int contact_cap;
  double obs[MBS_REC_OBS_SCALARS];
  int iterations, factorizations, solves;
  double step_size;
  long fact_seen, solves_seen; /* solver counters at the previous record */
  double *extra;               /* (3 njoint) joint points */
  int h_strain_energy;         /* /energy/strain (models with beams; -1 otherwise) */
  double strain_energy;
  int *h_beam;      /* (3 nbeam) /beams/<name>/{position,directors,strain} */
  double *beam_row; /* the beams' rows, beam after beam: positions (nnode x 3), directors
                       (nnode x 9), strains (nelem x 6) */
  const char **unit_col;       /* (nq) scratch of column_units */
  char *unit_text;
  const char **labels;         /* (max(nbody, njoint, nload)) scratch of the names datasets */
  int h_action;        /* ragged /solver/action (spacetime; -1 otherwise) */
  double *action_rows; /* (action_cap x MBS_ACTION_COLS) elements completed since the last
                          record, as the solver's action_sink gives them */
  long action_n, action_cap;
  int action_sent;     /* the rows were given to the last record: the next sink call or
                          record starts afresh */
  int action_nomem;    /* a row could not be kept (out of memory): the next record fails */
  /* /state/history_repeats (record.c mark_repeats): the predictor's history rows that repeat
   * the previous record's, written as zeros and marked; h_repeats -1 without such a history */
  int h_repeats, repeats;
  int rep_inc, rep_pv, rep_sv, rep_pm, rep_mu; /* indices of the integrator's arrays, or -1:
                                                  previous_increments, previous_velocity,
                                                  scheme_velocity, previous_multipliers,
                                                  multipliers */
  int rep_blocks, rep_ncon;  /* blocks of nq in previous_increments; length of multipliers */
  double *rep_prev;          /* the previous record's previous_increments blocks 0 .. K-2,
                                scheme_velocity and multipliers, as given */
  double *rep_inc_row;       /* previous_increments as written: block 0, then zeros */
  double *rep_zero;          /* zeros: a repeated velocity or multiplier row as written */
  int rep_have;              /* bits: which parts of rep_prev hold the previous record's */
  long rep_count;            /* the writer's record count at the previous record's rows */
} mbsRecorder;

/* register every dataset and sidecar grid of a run of model m with w (docs/output.md; the
 * integrator's arrays as mbs_solver_state_export lists them, under /state/<name>);
 * names, qunits: (nq) coordinate names and units; junits, jrunits: (njoint) units of the
 * joint coordinates and rates. Release out with mbs_recorder_free. */
mbsStatus mbs_recorder_describe(mbsRecorder *out, mbsWriter *w, const mbsModel *m, mbsData *d,
                              const char *const *names, const char *const *qunits,
                              const char *const *junits, const char *const *jrunits,
                              mbsError *err);

/* give the rows of the record of the current state (then mbs_output_append); the
 * integrator's exported arrays written (MBS_STATE_MAX) go into state, their count is
 * returned; the contacts' impulse sums start afresh after it */
int mbs_recorder_put(mbsRecorder *out, const mbsModel *m, mbsData *d, const mbsObservables *o,
                   mbsStateArray *state);

/* release (accepts NULL and a zeroed out) */
void mbs_recorder_free(mbsRecorder *out);

/* the units of a joint's /joints/coordinates and /joints/rates columns */
void mbs_record_joint_units(mbsJointType t, const char **coord, const char **rate);

#endif
