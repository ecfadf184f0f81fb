/* cli.h: helpers of the mbsim-run command that live outside main.c (private to src/cli/):
 * continuing an earlier run (--restart) and the record quantities the command computes
 * for the output file (multipliers, joint positions). They print their own messages. */
#ifndef MBSIM_CLI_H
#define MBSIM_CLI_H

#include <stddef.h>
#include <stdio.h>

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
  int iterations;         /* Newton iterations of the restart record */
} cliRestart;

/* Continue from the last record of the result file at path: check that it belongs to the
 * same model (coordinates, constraints, coordinate names) and that t_end lies after it,
 * refuse an output path that is the restart file itself, then set d->t, q, last_dt, the
 * integrator's state (mbs_solver_state_import) and the external work and dissipation
 * accumulators. Prints the reason and
 * returns 1 when the restart is refused, 0 when rs is filled (release with
 * cli_restart_free). */
int cli_restart_load(cliRestart *rs, const char *path, const char *out_path, const mbsModel *m,
                     mbsData *d);

/* Look at an existing file at the output path (mbs_output_inspect) in a child process
 * before mbs_output_create opens it: prints the reason and returns 1 when the file is a
 * damaged HDF5 file that crashed, hung or exhausted the child; 0 otherwise. */
int cli_inspect_output(const char *out_path);

/* the limits of the child that reads an untrusted file: the library's defaults, the time
 * from the environment variable MBSIM_INSPECT_SECONDS when set (a warning when invalid) */
void cli_inspect_limits(mbsInspectLimits *lim);

/* src into dst (n bytes, always terminated, truncated at a whole escape) with what a
 * terminal would act on written as escapes: control characters (\n, \t, \r, \x1b, ...),
 * C1 controls and direction overrides (\u009b, \u202e), bytes that are not UTF-8
 * (\xff); returns dst */
char *cli_escape(char *dst, size_t n, const char *src);

/* the model listing of --check (check.c): gravity, bodies (mass, principal moments of
 * inertia, centre of mass), joints (type, bodies, point, axes) and loads, world, t = 0 */
void cli_print_check(FILE *f, const mbsDeck *deck);

/* after mbs_observe of the restart state: the first record repeats the restart record
 * (joint reactions and iterations come from the file, not from a step of this run) */
void cli_restart_first_record(const cliRestart *rs, const mbsModel *m, mbsData *d);

/* release (accepts a zeroed rs) */
void cli_restart_free(cliRestart *rs);

/* record quantities that mbsData does not hold as such: the world position of each joint
 * point fixed to the joint's second body (njoint x 3) */
void cli_record_extras(const mbsModel *m, const mbsData *d, double *joint_pos);

/* the integrator's exported state (mbs_solver_state_export) onto the record's fields, by
 * name (the one place that knows which dataset each array is written to) */
void cli_record_state(mbsRecord *rec, const mbsStateArray *a, int n);

/* 1 when the exported state has accelerations (the writer then creates their datasets) */
int cli_state_writes_acceleration(const mbsStateArray *a, int n);

/* the state arrays of a result file's last record, named as exported (for
 * mbs_solver_state_import); returns their count (<= max), absent arrays left out */
int cli_state_from_last(const mbsLastRecord *last, mbsStateArray *out, int max);

#endif
