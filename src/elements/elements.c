/* elements.c: the element table and the helpers shared by the element kinds */
#include "mbsim/elements.h"

#include <stddef.h>

#include "util/profile.h"
#include "util/vec3.h"

extern const mbsElementKindTable mbs_elem_gravity;
extern const mbsElementKindTable mbs_elem_force;
extern const mbsElementKindTable mbs_elem_torque;
extern const mbsElementKindTable mbs_elem_joint_torque;
extern const mbsElementKindTable mbs_elem_joint_force;
extern const mbsElementKindTable mbs_elem_augmented_torque;
extern const mbsElementKindTable mbs_elem_drive;
extern const mbsElementKindTable mbs_elem_spring;
extern const mbsElementKindTable mbs_elem_rotational_spring;
extern const mbsElementKindTable mbs_elem_beam;
extern const mbsElementKindTable mbs_elem_joint_control;
extern const mbsElementKindTable mbs_elem_slide;

const mbsElementKindTable *mbs_element_kind(mbsElemKind kind) {
  switch (kind) {
    case MBS_ELEM_GRAVITY:
      return &mbs_elem_gravity;
    case MBS_ELEM_FORCE:
      return &mbs_elem_force;
    case MBS_ELEM_TORQUE:
      return &mbs_elem_torque;
    case MBS_ELEM_JOINT_TORQUE:
      return &mbs_elem_joint_torque;
    case MBS_ELEM_JOINT_FORCE:
      return &mbs_elem_joint_force;
    case MBS_ELEM_AUGMENTED_TORQUE:
      return &mbs_elem_augmented_torque;
    case MBS_ELEM_DRIVE:
      return &mbs_elem_drive;
    case MBS_ELEM_SPRING:
      return &mbs_elem_spring;
    case MBS_ELEM_ROTATIONAL_SPRING:
      return &mbs_elem_rotational_spring;
    case MBS_ELEM_JOINT_CONTROL:
      return &mbs_elem_joint_control;
    case MBS_ELEM_BEAM:
      return &mbs_elem_beam;
    case MBS_ELEM_SLIDE:
      return &mbs_elem_slide;
    case MBS_ELEM_KIND_COUNT:
      break;
  }
  return NULL;
}

void mbs_elem_gather(const mbsElem *e, const double *x, double *loc) {
  for (int i = 0; i < e->nq; i++) {
    loc[i] = x[e->qidx[i]];
  }
}

double mbs_contravariant_directors(double dcon[9], const double d[9]) {
  /* d^i = (d_j x d_k) / (d1 . (d2 x d3)) for even permutations (i, j, k), seed 000 eq. 9 */
  double a[9];
  vcross(a + 0, d + 3, d + 6);
  vcross(a + 3, d + 6, d + 0);
  vcross(a + 6, d + 0, d + 3);
  double vol = vdot(d + 0, a + 0);
  for (int i = 0; i < 9; i++) {
    dcon[i] = a[i] / vol;
  }
  return vol;
}

double mbs_elem_profile(const mbsModel *m, int ip, double t, double *rate) {
  if (ip < 0 || ip >= m->nprofile) {
    if (rate) {
      *rate = 0.0;
    }
    return 1.0;
  }
  const mbsProfile *p = &m->profile[ip];
  return mbs_profile_eval(p->kind, p->p, m->profile_table + 2 * p->tab0, p->ntab, p->ev, t, rate);
}

double mbs_elem_profile_accel(const mbsModel *m, int ip, double t) {
  if (ip < 0 || ip >= m->nprofile) {
    return 0.0;
  }
  return mbs_profile_accel(m->profile[ip].kind, m->profile[ip].p, m->profile[ip].ev, t);
}

int mbs_elem_profile_kink_in(const mbsModel *m, int ip, double a, double b) {
  if (ip < 0 || ip >= m->nprofile) {
    return 0;
  }
  const mbsProfile *p = &m->profile[ip];
  return mbs_profile_kink_in(p->kind, p->p, m->profile_table + 2 * p->tab0, p->ntab, p->ev, a,
                             b);
}
