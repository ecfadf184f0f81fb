/* check.c: the contact checks of a compiled model at t = 0. */
#include <math.h>
#include <stdlib.h>

#include "mbsim/contact.h"

/* [m] overlap at t = 0 that is round-off of a body placed exactly on another, not an error */
#define OVERLAP_TOL 1e-9

mbsStatus mbs_contact_check_initial(const mbsModel *m, mbsError *err) {
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
    mbs_shape_pose(m, a, m->q0, &pa);
    mbs_shape_pose(m, b, m->q0, &pb);
    int n = mbs_collide(a, &pa, b, &pb, m->contact_pts, 0.0, pts, cap);
    double depth = 0.0;
    for (int i = 0; i < n; i++) {
      depth = fmax(depth, -pts[i].gap);
    }
    if (depth > OVERLAP_TOL) {
      const mbsShape *at = a->mark.line > 0 ? a : b;
      st = mbs_error_set(err, MBS_ERR_DECK, m->deck_path, at->mark.line, at->mark.col,
                         "'%s' (%s) and '%s' (%s) overlap by %.6g m at t = 0 (contacts entry "
                         "'%s'): place them apart, or touching",
                         a->name, mbs_shape_word(a->kind), b->name, mbs_shape_word(b->kind), depth,
                         m->contact[p->spec].name);
    }
  }
  free(pts);
  return st;
}
