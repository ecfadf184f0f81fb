/* cli.h: helpers of the mbsim-run command that live outside main.c (private to src/cli/):
 * continuing an earlier run (--restart) and the record quantities the command computes
 * for the output file (multipliers, joint positions). They print their own messages. */
#ifndef MBSIM_CLI_H
#define MBSIM_CLI_H

#include "mbsim/model.h"
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
 * refuse an output path that is the restart file itself, then set d->t, q, v, mu,
 * last_dt and the external work and dissipation accumulators. Prints the reason and
 * returns 1 when the restart is refused, 0 when rs is filled (release with
 * cli_restart_free). */
int cli_restart_load(cliRestart *rs, const char *path, const char *out_path, const mbsModel *m,
                     mbsData *d);

/* after mbs_observe of the restart state: the first record repeats the restart record
 * (joint reactions and iterations come from the file, not from a step of this run) */
void cli_restart_first_record(const cliRestart *rs, const mbsModel *m, mbsData *d);

/* release (accepts a zeroed rs) */
void cli_restart_free(cliRestart *rs);

/* record quantities that mbsData does not hold as such: the Lagrange multipliers
 * lambda = mu / dt^2 of the last step (ncon, zero before the first step) and the world
 * position of each joint point fixed to the joint's second body (njoint x 3) */
void cli_record_extras(const mbsModel *m, const mbsData *d, double *lambda, double *joint_pos);

#endif
