/* check.c: the contact checks of a compiled model: no overlap of shapes at t = 0, nor in the
 * state a restart starts from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mbsim/contact.h"

/* [m] overlap at t = 0 that is round-off of a body placed exactly on another, not an error */
#define OVERLAP_TOL 1e-9

/* the first pair (by a, then b) whose shapes overlap at q by more than tol: an error at its
 * body shape. The broad phase finds the pairs that may overlap. */
static mbsStatus check_overlap(const mbsModel *m, const double *q, double t, double tol,
                               mbsError *err) {
  if (m->ncontact_paired == 0) {
    return MBS_OK;
  }
  int cap = 1;
  for (int s = 0; s < m->nshape; s++) {
    cap = m->shape[s].npts > cap ? m->shape[s].npts : cap;
  }
  cap = cap > 16 + 72 ? cap : 16 + 72; /* mbs_collide_max of every pair of kinds */
  mbsContactPoint *pts = malloc((size_t)cap * sizeof(*pts));
  mbsPose *poses = malloc((size_t)m->nshape * sizeof(*poses));
  mbsBroad *bp = mbs_broad_create(m, err);
  mbsStatus st = MBS_OK;
  if (!bp) {
    st = err->status;
    goto done;
  }
  if (!pts || !poses) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto done;
  }
  for (int s = 0; s < m->nshape; s++) {
    mbs_shape_pose(m, &m->shape[s], q, &poses[s]);
  }
  const mbsShapePair *pair = NULL;
  int npair = mbs_broad_pairs(bp, m, poses, NULL, &pair);
  if (npair < 0) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto done;
  }
  for (int k = 0; k < npair && st == MBS_OK; k++) {
    const mbsShapePair *p = &pair[k];
    const mbsShape *a = &m->shape[p->a], *b = &m->shape[p->b];
    int n = mbs_collide(a, &poses[p->a], b, &poses[p->b], m->contact_pts, 0.0, pts, cap);
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
done:
  mbs_broad_destroy(bp);
  free(poses);
  free(pts);
  return st;
}

mbsStatus mbs_contact_check_initial(const mbsModel *m, mbsError *err) {
  return check_overlap(m, m->q0, 0.0, OVERLAP_TOL, err);
}

mbsStatus mbs_contact_check_state(const mbsModel *m, const double *q, double t, mbsError *err) {
  return check_overlap(m, q, t, MBS_OVERLAP_STATE_TOL, err);
}

/* dt against each penalty contact's period T = 2 pi sqrt(m / k), m the lightest body of the
 * shapes it pairs (some of their pairs may belong to an earlier entry): a step longer than
 * T / 10 does not resolve the spring (a warning per entry, "file:line:col: text\n" lines into
 * buf) */
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
    for (int k = 0; k < m->nshape; k++) {
      int b = m->shape[k].body, paired = 0;
      for (int i = m->shape_member[k]; i < m->shape_member[k + 1]; i++) {
        paired |= m->member_contact[i] == s && (m->member_side[i] & MBS_MEMBER_PAIRED);
      }
      /* a body (a beam node's shape names no body of the model) */
      if (paired && b >= 0 && b < m->nbody && !m->body_fixed[b] && m->body_mass[b] < mass) {
        mass = m->body_mass[b];
        light = b;
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
