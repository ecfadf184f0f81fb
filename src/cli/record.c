/* record.c: record quantities the command computes from the model and the run state */
#include "cli/cli.h"

void cli_record_extras(const mbsModel *m, const mbsData *d, double *lambda, double *joint_pos) {
  /* lambda = mu / dt^2 of the last step (the solver keeps mu = dt^2 lambda) */
  double dt2 = d->last_dt * d->last_dt;
  for (int r = 0; r < m->ncon; r++) {
    lambda[r] = dt2 > 0.0 ? d->mu[r] / dt2 : 0.0;
  }

  /* the joint point on body 2: phi + c^i d_i (a point mass: its position); a static second
   * body keeps the world point */
  for (int j = 0; j < m->njoint; j++) {
    mbs_attach_point(m, m->joint_attach[2 * j + 1], m->joint_point + 3 * j, d->q,
                     joint_pos + 3 * j);
  }
}
