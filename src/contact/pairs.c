/* pairs.c: which pairs of shape kinds the narrow phase handles (geom.c has one function per
 * pair), how many contact points each can give at once (the solver's per-step bound), and
 * which contacts entry a pair of shapes belongs to (the model's per-shape memberships). */
#include "mbsim/contact.h"

/* supported[a][b] for kinds a <= b (symmetric) */
static int supported(mbsShapeKind a, mbsShapeKind b) {
  if ((unsigned)a >= MBS_SHAPE_COUNT || (unsigned)b >= MBS_SHAPE_COUNT) {
    return 0;
  }
  if (a > b) {
    mbsShapeKind t = a;
    a = b;
    b = t;
  }
  switch (a) {
  case MBS_SHAPE_SPHERE: /* sphere with every kind */
    return b == MBS_SHAPE_PLANE || b == MBS_SHAPE_SPHERE || b == MBS_SHAPE_BOX ||
           b == MBS_SHAPE_CAPSULE || b == MBS_SHAPE_POINTS;
  case MBS_SHAPE_BOX: /* box with plane, box, capsule, points */
    return b == MBS_SHAPE_PLANE || b == MBS_SHAPE_BOX || b == MBS_SHAPE_CAPSULE ||
           b == MBS_SHAPE_POINTS;
  case MBS_SHAPE_CAPSULE: /* capsule with plane, capsule, points (sphere, box above) */
    return b == MBS_SHAPE_PLANE || b == MBS_SHAPE_CAPSULE || b == MBS_SHAPE_POINTS;
  case MBS_SHAPE_POINTS: /* points with plane (box, sphere above) */
    return b == MBS_SHAPE_PLANE;
  default: /* plane with plane */
    return 0;
  }
}

int mbs_collide_supported(mbsShapeKind a, mbsShapeKind b) {
  return supported(a, b);
}

const char *mbs_collide_supported_list(void) {
  return "sphere-plane, sphere-sphere, sphere-box, sphere-capsule, box-plane, box-box, "
         "capsule-plane, capsule-capsule, capsule-box, points-plane, points-box, "
         "points-sphere, points-capsule";
}

/* points one shape of the pair can contribute */
static int shape_points(const mbsShape *s) {
  switch (s->kind) {
  case MBS_SHAPE_BOX:
    return 8; /* vertices */
  case MBS_SHAPE_CAPSULE:
    return 2; /* the ends of its segment */
  case MBS_SHAPE_POINTS:
    return s->npts;
  default:
    return 1;
  }
}

int mbs_collide_max(const mbsShape *a, const mbsShape *b) {
  if (!supported(a->kind, b->kind)) {
    return 0;
  }
  if (a->kind == MBS_SHAPE_BOX && b->kind == MBS_SHAPE_BOX) {
    /* the vertices of each on the other's faces, and crossing edges: for each of the 9 pairs
     * of edge directions at most 8 edge pairs have the normal in both edges' cones (geom.c) */
    return 16 + 72;
  }
  if ((a->kind == MBS_SHAPE_SPHERE && b->kind == MBS_SHAPE_BOX) ||
      (a->kind == MBS_SHAPE_BOX && b->kind == MBS_SHAPE_SPHERE)) {
    return 1; /* the box's point closest to the centre */
  }
  if ((a->kind == MBS_SHAPE_BOX && b->kind == MBS_SHAPE_CAPSULE) ||
      (a->kind == MBS_SHAPE_CAPSULE && b->kind == MBS_SHAPE_BOX)) {
    return 2 + 12; /* the segment's ends and its closest approach to each edge */
  }
  int na = shape_points(a), nb = shape_points(b);
  return na > nb ? na : nb;
}

int mbs_contact_pair_entry(const mbsModel *m, int a, int b) {
  const mbsShape *sa = &m->shape[a], *sb = &m->shape[b];
  if (a == b || sa->owner == sb->owner || (sa->fixed && sb->fixed)) {
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
