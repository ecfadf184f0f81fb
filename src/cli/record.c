/* record.c: record quantities the command computes from the model and the run state, and
 * the one place where the integrator's exported state (named arrays) meets the writer's
 * record and the reader's last record */
#include <string.h>

#include "cli/cli.h"

/* the record field of each exported array; a name not listed here is not written */
static const double **record_field(mbsRecord *rec, const char *name) {
  if (strcmp(name, "scheme_velocity") == 0) {
    return &rec->scheme_velocity;
  }
  if (strcmp(name, "multipliers") == 0) {
    return &rec->multipliers;
  }
  if (strcmp(name, "acceleration") == 0) {
    return &rec->acceleration;
  }
  if (strcmp(name, "algorithmic_acceleration") == 0) {
    return &rec->algorithmic_acceleration;
  }
  return NULL;
}

void cli_record_state(mbsRecord *rec, const mbsStateArray *a, int n) {
  for (int i = 0; i < n; i++) {
    const double **f = record_field(rec, a[i].name);
    if (f) {
      *f = a[i].data;
    }
  }
}

int cli_state_writes_acceleration(const mbsStateArray *a, int n) {
  for (int i = 0; i < n; i++) {
    if (strcmp(a[i].name, "acceleration") == 0) {
      return 1;
    }
  }
  return 0;
}

int cli_state_from_last(const mbsLastRecord *last, mbsStateArray *out, int max) {
  int n = 0;
  /* files without /state/scheme_velocity: the projected /state/v (the restart then agrees
   * with the uninterrupted run to the integrator's accuracy only) */
  const mbsStateArray all[] = {
      {"scheme_velocity", last->n_coordinates,
       last->scheme_velocity ? last->scheme_velocity : last->v},
      {"multipliers", last->n_constraints, last->multipliers},
      {"acceleration", last->n_coordinates, last->acceleration},
      {"algorithmic_acceleration", last->n_coordinates, last->algorithmic_acceleration},
  };
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]) && n < max; i++) {
    if (all[i].data) {
      out[n++] = all[i];
    }
  }
  return n;
}

void cli_record_extras(const mbsModel *m, const mbsData *d, double *joint_pos) {
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
