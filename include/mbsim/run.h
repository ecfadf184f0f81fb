/* run.h: a run of a deck as an object (docs/library.md).
 *
 * An mbsRun holds everything of one run: the deck, the compiled model, the run state, the
 * step grid t_n = n dt (the last step shortened to land on t_end), the energy monitor, its
 * status and, when attached, its output file. No global state: any number of runs may live
 * in one process, each used by one thread at a time. Like the rest of libmbsim it never
 * prints and never exits: a failing call returns a negative mbsStatus and fills an mbsError.
 *
 *   mbsRunOptions o = {.deck_path = "decks/double_pendulum.yaml"};
 *   mbsRun *r = mbs_run_create(&o, &err);           -- read and compile the deck
 *   mbs_run_start(r, NULL, NULL, NULL, &err);        -- the state at t = 0
 *   mbs_run_attach(r, "out.h5", 0, &err);            -- optional: an output file
 *   mbs_run_record(r, &err);                         -- its first record
 *   while (!mbs_run_done(r) && mbs_run_step(r, &err) == MBS_OK) {}
 *   mbs_run_finish(r, &err);                         -- status, close the file
 *   mbs_run_destroy(r);
 *
 * A record never changes the trajectory: every step ends in the state a restart from a
 * record at that step would read (the integrator's exported state imported back), so the
 * steps are the same for any output.every, for a run advanced in pieces and for a restart. */
#ifndef MBSIM_RUN_H
#define MBSIM_RUN_H

#include <stddef.h>

#include "mbsim/deck.h"
#include "mbsim/error.h"
#include "mbsim/model.h"
#include "mbsim/output.h"
#include "mbsim/solver.h"

typedef struct mbsRun mbsRun;

typedef struct {
  const char *deck_path;          /* the deck file; with deck_text: its name in messages */
  const char *deck_text;          /* NULL: read deck_path; else the deck itself (YAML) */
  const mbsOverride *overrides;   /* the --set KEY=VALUE overrides, in order */
  int noverrides;
  const char *const *override_option; /* NULL or (noverrides) NULL or the option that gave
                                         the override ("--integrator"): the integrator's
                                         reason then names it instead of --set */
} mbsRunOptions;

/* read and compile the deck; NULL on failure (err filled: file:line:column for the deck) */
mbsRun *mbs_run_create(const mbsRunOptions *opt, mbsError *err);

/* release (accepts NULL); closes an attached output without a status */
void mbs_run_destroy(mbsRun *r);

/* the deck's and the compiler's warnings, "file:line:col: text" lines each ending in a
 * newline ("" when none); valid until destroy */
const char *mbs_run_warnings(const mbsRun *r);

/* notes of mbs_run_start (what a restart file lacks), one line each, or "" */
const char *mbs_run_notes(const mbsRun *r);

/* the deck, the model and the state (for listings; the state is NULL before start) */
const mbsDeck *mbs_run_deck(const mbsRun *r);
const mbsModel *mbs_run_model(const mbsRun *r);
const mbsData *mbs_run_data(const mbsRun *r);

/* The state at t = 0: initial.assemble, initial.project_velocities, the integrator's
 * start. With restart_path, the run continues from that result file's last record instead
 * (out_path: the output the run will write, refused when it is the restart file; limits:
 * of the child process that reads it, NULL for the defaults). */
mbsStatus mbs_run_start(mbsRun *r, const char *restart_path, const char *out_path,
                        const mbsInspectLimits *limits, mbsError *err);

/* what mbs_run_start did (for messages) */
typedef struct {
  int assembled;          /* initial.assemble ran */
  mbsAssembly assembly;   /* its result */
  const double *q_deck;   /* (nq) the deck's configuration before assembly, or NULL */
  int projected;          /* initial.project_velocities ran */
  double projection_change; /* its largest velocity change */
  int projection_frame;     /* and where (attachment frame index, -1 none) */
  int restarted;            /* the run continues a result file */
  const char *restart_from; /* "RUN.h5 at t=5", or NULL */
  long n_first;             /* the number of the first step on the grid t_n = n dt */
} mbsRunStart;
const mbsRunStart *mbs_run_start_info(const mbsRun *r);

/* Open an output file (the writer's rules: overwrite = --overwrite) and register every
 * dataset; records are written by mbs_run_record and by mbs_run_step every output.every
 * steps, at t_end and at a failure. One output at a time. */
mbsStatus mbs_run_attach(mbsRun *r, const char *path, int overwrite, mbsError *err);

/* the attached writer (NULL when none), e.g. for mbs_output_estimate */
const mbsWriter *mbs_run_writer(const mbsRun *r);

/* write the status attribute and close the output (detach); records given so far into
 * *nrecords (may be NULL) */
mbsStatus mbs_run_detach(mbsRun *r, long *nrecords, mbsError *err);

/* write a record of the current state to the attached output (none: MBS_ERR_ARGS); a second
 * call at the same step does nothing */
mbsStatus mbs_run_record(mbsRun *r, mbsError *err);

/* one step of the grid (with its energy monitor and due record); a failure sets the status
 * "failed: ..." and returns the error. MBS_ERR_ARGS when the run is done or failed. */
mbsStatus mbs_run_step(mbsRun *r, mbsError *err);

/* steps until the time reaches t (rounded to the grid: the step ending at or after
 * t - 1e-9 dt; t beyond t_end: to t_end) */
mbsStatus mbs_run_advance(mbsRun *r, double t, mbsError *err);

/* 1 when the last step of the grid is done or the run failed or was interrupted */
int mbs_run_done(const mbsRun *r);

typedef enum {
  MBS_RUN_FAIL_NONE = 0,
  MBS_RUN_FAIL_SOLVER,   /* a step failed (the error says why) */
  MBS_RUN_FAIL_UNSTABLE, /* the energy monitor stopped the run (see the status) */
  MBS_RUN_FAIL_RECORD    /* a record could not be computed or written */
} mbsRunFailure;
mbsRunFailure mbs_run_failure(const mbsRun *r);

/* the run was interrupted (a signal, a user): status "interrupted at t=..." */
void mbs_run_interrupt(mbsRun *r);

/* the status: "running", "completed", "completed with warning: ...",
 * "failed: ...", "interrupted at t=..."; valid until the next call on r */
const char *mbs_run_status(const mbsRun *r);

/* set the final status after the last step ("completed" or "completed with warning: ..."),
 * then detach an attached output */
mbsStatus mbs_run_finish(mbsRun *r, long *nrecords, mbsError *err);

/* the summary a run prints at its end (status, steps, Newton, linear solver, step control,
 * storage, constraints, contacts, energy balance, wall time since create), one line each,
 * into buf (n bytes); returns the length it needed */
size_t mbs_run_summary(const mbsRun *r, char *buf, size_t n);

/* Observe the current state into caller memory: what names one quantity of the record
 * (docs/library.md lists them: "time", "q", "v", "bodies/position",
 * "energy/kinetic", ...); up to n values into out (may be NULL with n = 0). Returns the
 * number of values the quantity has, or -1 for an unknown name. Quantities of a record
 * (velocities on the constraints, reactions, energies) are computed on first use after a
 * step; the trajectory does not depend on them. */
long mbs_run_get(mbsRun *r, const char *what, double *out, long n, mbsError *err);

/* the columns of mbs_run_get(r, "contacts"), one row per contact of the last step and those
 * since the last record: shape a, shape b (indices, names by mbs_run_name "shapes"), status
 * (0 open, 1 stick, 2 slip), point (3), normal (3), gap, impulse (normal, tangent 1,
 * tangent 2: N s of the last step), feature */
#define MBS_RUN_CONTACT_COLS 14

/* names: "bodies", "joints", "loads", "coordinates", "shapes", "beams" (index i); NULL past the end */
const char *mbs_run_name(const mbsRun *r, const char *kind, int i);

#endif
