/* advance.c: step control around mbs_solver_step. A step whose Newton iteration fails
 * (no convergence, a singular matrix, a non-finite residual) is retried with half the step
 * at most m->max_halvings levels below the requested step; after two successful steps at a
 * level the step doubles again, back up to the requested size. static adapts its load
 * increments within the step itself (static.c), and its failure is final here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbsim/solver.h"

mbsStatus mbs_solver_advance(const mbsModel *m, mbsData *d, double t_target, mbsError *err) {
  return mbs_solver_advance_each(m, d, t_target, NULL, NULL, err);
}

mbsStatus mbs_solver_advance_each(const mbsModel *m, mbsData *d, double t_target, mbsStepVisit each,
                                  void *ctx, mbsError *err) {
  double h_full = t_target - d->t;
  int level = 0, successes = 0, iterations = 0;
  mbsError step_err;
  mbs_error_clear(&step_err);
  /* within a relative 1e-12 of the target counts as there (the time grid is n dt) */
  while (t_target - d->t > 1e-12 * fmax(1.0, fabs(t_target))) {
    double h = ldexp(h_full, -level);
    double rest = t_target - d->t;
    double hs = (h >= rest * (1.0 - 1e-12)) ? rest : h;
    mbsStatus st = mbs_solver_step(m, d, hs, &step_err);
    iterations += d->iterations;
    if (st == MBS_OK) {
      if (each) {
        each(ctx, m, d);
      }
      if (level > 0 && ++successes >= 2) {
        level--;
        successes = 0;
      }
      continue;
    }
    if (st != MBS_ERR_SOLVER && st != MBS_ERR_LINSOLVE) {
      d->iterations = iterations;
      if (err) {
        *err = step_err;
      }
      return st;
    }
    if (mbs_integrator_policy(m->integrator)->equilibrium) {
      /* static controls its load increments itself (static.c): it has halved them already */
      d->iterations = iterations;
      if (err) {
        *err = step_err;
      }
      return st;
    }
    if (level >= m->max_halvings) {
      d->iterations = iterations;
      mbs_error_set(err, st, NULL, 0, 0,
                    "%s; gave up at dt = %.3g after halving the step %d times. Try a smaller "
                    "dt (--dt) or more halvings (solver.max_halvings); a motion that blew up "
                    "points to loads or initial velocities far too large",
                    step_err.msg, hs, level);
      return st;
    }
    level++;
    d->rejected++;
    successes = 0;
  }
  d->t = t_target;
  d->iterations = iterations;
  return MBS_OK;
}
