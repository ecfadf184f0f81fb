/* pairs.c: which contacts entry a pair of shapes belongs to (the model's per-shape
 * memberships). The pairs of shape kinds the narrow phase handles, and the contact points each
 * can give at once, are one table in geom.c. */
#include "mbsim/contact.h"

/* 1 if shape s is fixed to a corner node of patch p (a point mass's or beam node's own
 * sphere, a beam segment from or to one): it sits in the patch and never touches it */
static int on_corner(const mbsShape *p, const mbsShape *s) {
  if (p->kind != MBS_SHAPE_PATCH || s->kind == MBS_SHAPE_PATCH) {
    return 0;
  }
  for (int k = 0; k < 4; k++) {
    if (s->attach == p->corner[k] || (s->segment && s->attach + 1 == p->corner[k])) {
      return 1;
    }
  }
  return 0;
}

int mbs_contact_pair_entry(const mbsModel *m, int a, int b) {
  const mbsShape *sa = &m->shape[a], *sb = &m->shape[b];
  if (a == b || sa->owner == sb->owner || (sa->fixed && sb->fixed) || on_corner(sa, sb) ||
      on_corner(sb, sa)) {
    return -1;
  }
  /* the two shapes' entries (each ascending) merged: the first with them on opposite sides */
  int i = m->shape_member[a], ie = m->shape_member[a + 1];
  int j = m->shape_member[b], je = m->shape_member[b + 1];
  while (i < ie && j < je) {
    int ea = m->member_contact[i], eb = m->member_contact[j];
    if (ea != eb) {
      i += ea < eb;
      j += eb < ea;
      continue;
    }
    int sa_side = m->member_side[i], sb_side = m->member_side[j];
    if (((sa_side & MBS_MEMBER_FIRST) && (sb_side & MBS_MEMBER_SECOND)) ||
        ((sa_side & MBS_MEMBER_SECOND) && (sb_side & MBS_MEMBER_FIRST))) {
      return ea;
    }
    i++;
    j++;
  }
  return -1;
}

int mbs_shape_pair_cmp(const mbsShapePair *x, const mbsShapePair *y) {
  if (x->a != y->a) {
    return x->a < y->a ? -1 : 1;
  }
  return (x->b > y->b) - (x->b < y->b);
}
