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
    const double *c = m->joint_point + 3 * j;
    double *p = joint_pos + 3 * j;
    int b2 = m->joint_body[2 * j + 1];
    int n0 = b2 >= 0 ? m->body_node[b2] : -1;
    if (n0 < 0) {
      p[0] = c[0];
      p[1] = c[1];
      p[2] = c[2];
      continue;
    }
    const double *phi = d->q + 3 * n0;
    for (int k = 0; k < 3; k++) {
      p[k] = phi[k];
      if (m->body_type[b2] == MBS_BODY_RIGID) {
        for (int i = 0; i < 3; i++) {
          p[k] += c[i] * d->q[3 * (n0 + 1 + i) + k];
        }
      }
    }
  }
}
