/* restart.c: mbsim-run --restart RUN.h5, continuing an earlier run from its last record.
 *
 * The restarted run writes a new file whose first record repeats the restart record, so
 * that each file holds one run with one deck and one status, and the earlier result is
 * never modified (a restart that fails cannot spoil it). The state taken over is what
 * the next step reads: q, v, the scaled multipliers mu = dt^2 lambda of the last step
 * (the Newton predictor starts from them), the time and the accumulated external work and
 * dissipation. Steps keep ending at t_n = n dt, the grid of the run from t = 0, so a run
 * of [0, 10] and a run of [0, 5] restarted to 10 take the same steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "mbsim/output.h"

static void restart_error(const char *path, const char *what) {
  fprintf(stderr, "mbsim-run: error: --restart '%s': %s\n", path, what);
}

/* 1 when a and b name the same existing file */
static int same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || stat(b, &sb) != 0) {
    return 0;
  }
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_restart_load(cliRestart *rs, const char *path, const char *out_path, const mbsModel *m,
                     mbsData *d) {
  char msg[1400];
  mbsLastRecord last;
  mbsError err;
  mbs_error_clear(&err);
  memset(rs, 0, sizeof(*rs));

  if (out_path && same_file(out_path, path)) {
    restart_error(path, "the output file is the restart file itself; give another output file "
                        "with -o (the restarted run is written to a new file)");
    return 1;
  }
  if (mbs_output_read_last(path, &last, &err) != MBS_OK) {
    char buf[2048];
    mbs_error_format(&err, buf, sizeof(buf));
    fprintf(stderr, "mbsim-run: error: --restart: %s\n", buf);
    return 1;
  }

  /* the file must describe the model of this deck, coordinate by coordinate */
  int bad = 0;
  if (last.n_coordinates != m->nq || last.n_constraints != m->ncon) {
    snprintf(msg, sizeof(msg),
             "the run belongs to another model: %d coordinates and %d constraints in the file, "
             "%d and %d in this deck",
             last.n_coordinates, last.n_constraints, m->nq, m->ncon);
    bad = 1;
  }
  for (int i = 0; !bad && i < m->nq; i++) {
    if (strcmp(last.coordinate_names[i], mbs_model_coord_name(m, i)) != 0) {
      snprintf(msg, sizeof(msg),
               "the run belongs to another model: coordinate %d is '%s' in the file and '%s' "
               "in this deck",
               i + 1, last.coordinate_names[i], mbs_model_coord_name(m, i));
      bad = 1;
    }
  }
  if (!bad && last.njoint != m->njoint) {
    snprintf(msg, sizeof(msg),
             "the run belongs to another model: %d joints in the file, %d in this deck",
             last.njoint, m->njoint);
    bad = 1;
  }

  /* the step loop goes on with n_first: the first n whose t_n = n dt lies after t */
  double t = last.time;
  long n_first = (long)floor(t / m->dt + 1e-9) + 1;
  long nsteps = (long)ceil(m->t_end / m->dt - 1e-9);
  if (!bad && (!(m->t_end > t) || nsteps < n_first)) {
    snprintf(msg, sizeof(msg),
             "the run ends at t = %.9g, which is not before t_end = %.9g; give a later end "
             "with --t-end",
             t, m->t_end);
    bad = 1;
  }
  if (bad) {
    restart_error(path, msg);
    mbs_output_last_free(&last);
    return 1;
  }

  /* the size of the step that ended at t, so that mu = dt^2 lambda with exactly the dt the
   * earlier run divided by: recorded in /solver/step_size, else (older files) the last step
   * on the grid of the earlier run */
  double last_dt = last.step_size;
  if (!(last_dt > 0.0) && t > 0.0 && last.dt > 0.0) {
    long k = (long)ceil(t / last.dt - 1e-9);
    last_dt = t - (double)(k - 1) * last.dt;
  }

  /* the state */
  size_t nq = (size_t)m->nq;
  memcpy(d->q, last.q, nq * sizeof(double));
  /* the integrator goes on with its own velocities; /state/v is their projection onto the
   * velocity constraints (files without /state/scheme_velocity: that, and the restart then
   * agrees with the uninterrupted run to the integrator's accuracy only) */
  memcpy(d->v, last.scheme_velocity ? last.scheme_velocity : last.v, nq * sizeof(double));
  for (int i = 0; i < m->ncon; i++) {
    d->mu[i] = last.multipliers ? last.multipliers[i] * (last_dt * last_dt) : 0.0;
  }
  d->t = t;
  d->last_dt = last_dt;
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
  d->iterations = last.iterations;
  if (!last.multipliers && m->ncon > 0) {
    fprintf(stderr,
            "mbsim-run: note: '%s' has no /state/multipliers; Newton starts the first step "
            "from zero multipliers\n",
            path);
  }
  /* genalpha goes on with the accelerations of the record; without them (a file of another
   * integrator or an older version, or the record at t = 0) it starts from consistent
   * accelerations, as a run from t = 0 does */
  if (m->integrator == MBS_INTEGRATOR_GENALPHA && last.acceleration) {
    memcpy(d->acc, last.acceleration, nq * sizeof(double));
    memcpy(d->aacc, last.algorithmic_acceleration, nq * sizeof(double));
    d->acc_valid = 1;
  } else if (m->integrator == MBS_INTEGRATOR_GENALPHA && t > 0.0) {
    fprintf(stderr,
            "mbsim-run: note: '%s' has no genalpha accelerations at t = %g; the restart starts "
            "from consistent accelerations and does not repeat the earlier run exactly\n",
            path, t);
  }

  /* what the first record and the root attribute restart_from need */
  rs->n_first = n_first;
  rs->iterations = last.iterations;
  size_t n = strlen(path) + 64;
  rs->from = malloc(n);
  if (m->njoint > 0) {
    rs->joint_reaction = malloc((size_t)m->njoint * 6 * sizeof(double));
  }
  if (!rs->from || (m->njoint > 0 && !rs->joint_reaction)) {
    fprintf(stderr, "mbsim-run: error: out of memory\n");
    mbs_output_last_free(&last);
    cli_restart_free(rs);
    return 1;
  }
  snprintf(rs->from, n, "%s at t=%.17g", path, t);
  if (m->njoint > 0) {
    memcpy(rs->joint_reaction, last.joint_reaction, (size_t)m->njoint * 6 * sizeof(double));
  }
  rs->active = 1;
  mbs_output_last_free(&last);
  return 0;
}

void cli_restart_first_record(const cliRestart *rs, const mbsModel *m, mbsData *d) {
  if (!rs->active) {
    return;
  }
  if (rs->joint_reaction) {
    memcpy(d->joint_reaction, rs->joint_reaction, (size_t)m->njoint * 6 * sizeof(double));
  }
  d->iterations = rs->iterations;
}

void cli_restart_free(cliRestart *rs) {
  if (!rs) {
    return;
  }
  free(rs->from);
  free(rs->joint_reaction);
  memset(rs, 0, sizeof(*rs));
}
