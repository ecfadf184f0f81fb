/* check.c: the contact checks of a compiled model: no overlap of shapes at t = 0, nor in the
 * state a restart starts from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mbsim/contact.h"

/* [m] overlap at t = 0 that is round-off of a body placed exactly on another, not an error */
#define OVERLAP_TOL 1e-9

/* the first pair whose shapes overlap at q by more than tol: an error at its body shape */
static mbsStatus check_overlap(const mbsModel *m, const double *q, double t, double tol,
                               mbsError *err) {
  int cap = 1;
  for (int k = 0; k < m->npair; k++) {
    int mx = mbs_collide_max(&m->shape[m->pair[k].a], &m->shape[m->pair[k].b]);
    cap = mx > cap ? mx : cap;
  }
  mbsContactPoint *pts = malloc((size_t)cap * sizeof(*pts));
  if (!pts) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  mbsStatus st = MBS_OK;
  for (int k = 0; k < m->npair && st == MBS_OK; k++) {
    const mbsShapePair *p = &m->pair[k];
    const mbsShape *a = &m->shape[p->a], *b = &m->shape[p->b];
    mbsPose pa, pb;
    mbs_shape_pose(m, a, q, &pa);
    mbs_shape_pose(m, b, q, &pb);
    int n = mbs_collide(a, &pa, b, &pb, m->contact_pts, 0.0, pts, cap);
    double depth = 0.0;
    for (int i = 0; i < n; i++) {
      depth = fmax(depth, -pts[i].gap);
    }
    if (depth > tol) {
      const mbsShape *at = a->mark.line > 0 ? a : b;
      st = mbs_error_set(err, MBS_ERR_DECK, m->deck_path, at->mark.line, at->mark.col,
                         "'%s' (%s) and '%s' (%s) overlap by %.6g m at t = %.9g (contacts entry "
                         "'%s'): %s",
                         a->name, mbs_shape_word(a->kind), b->name, mbs_shape_word(b->kind), depth,
                         t, m->contact[p->spec].name,
                         t == 0.0 && q == m->q0 ? "place them apart, or touching"
                                                : "the state cuts into the deck's shapes");
    }
  }
  free(pts);
  return st;
}

mbsStatus mbs_contact_check_initial(const mbsModel *m, mbsError *err) {
  return check_overlap(m, m->q0, 0.0, OVERLAP_TOL, err);
}

mbsStatus mbs_contact_check_state(const mbsModel *m, const double *q, double t, mbsError *err) {
  return check_overlap(m, q, t, MBS_OVERLAP_STATE_TOL, err);
}

/* dt against each penalty contact's period T = 2 pi sqrt(m / k), m the lightest body its
 * pairs move: a step longer than T / 10 does not resolve the spring (a warning per entry,
 * "file:line:col: text\n" lines into buf) */
int mbs_contact_check_penalty(const mbsModel *m, double dt, int implicit, char *buf, size_t n) {
  int nw = 0;
  size_t used = 0;
  if (n > 0) {
    buf[0] = '\0';
  }
  for (int s = 0; s < m->ncontact; s++) {
    const mbsContactSpec *sp = &m->contact[s];
    if (sp->law != MBS_CONTACT_PENALTY || !(sp->stiffness > 0.0)) {
      continue;
    }
    double mass = INFINITY;
    int light = -1;
    for (int k = 0; k < m->npair; k++) {
      if (m->pair[k].spec != s) {
        continue;
      }
      int bodies[2] = {m->shape[m->pair[k].a].body, m->shape[m->pair[k].b].body};
      for (int i = 0; i < 2; i++) {
        if (bodies[i] >= 0 && !m->body_fixed[bodies[i]] && m->body_mass[bodies[i]] < mass) {
          mass = m->body_mass[bodies[i]];
          light = bodies[i];
        }
      }
    }
    if (light < 0) {
      continue;
    }
    double period = 4.0 * acos(0.0) * sqrt(mass / sp->stiffness);
    if (dt <= 0.1 * period) {
      continue;
    }
    int w = snprintf(buf + used, used < n ? n - used : 0,
                     "%s:%d:%d: contacts entry '%s': the penalty spring (stiffness %g N/m) on "
                     "body '%s' (%g kg) has the period 2 pi sqrt(m / k) = %.3g s, and dt = %g s "
                     "does not resolve it (dt <= %.3g s does, a tenth of it); %s\n",
                     m->deck_path, sp->mark.line, sp->mark.col,
                     sp->name, sp->stiffness, m->body_name[light], mass, period, dt,
                     0.1 * period,
                     implicit ? "the implicit penalty law of the theta method stays stable, but "
                                "the contact's time and penetration are not accurate"
                              : "the semi-explicit variant integrates it explicitly and becomes "
                                "unstable above dt = T / pi");
    if (w > 0) {
      used += (size_t)w;
    }
    nw++;
  }
  return nw;
}
