/* make.h: the element kinds' constructors, for the compiler (src/model/compile.c).
 *
 * Each kind packs its own constants into mbsElem.param and iparam, so their layout stays
 * private to src/elements/ (elem_internal.h and each kind's file). The caller has cleared the
 * element, given it its coordinates (the model's pool, mbs_model_add_element or the
 * compiler's own), its body, load and joint; a constructor sets the kind, the constraint rows
 * of a constraint kind and the constants. Profiles are the model's indices (-1: constant 1). */
#ifndef MBS_ELEM_MAKE_H
#define MBS_ELEM_MAKE_H

#include "mbsim/model.h"

/* one side of a two-sided element (joint_torque, joint_force, joint_control,
 * augmented_torque, drive, spring, rotational_spring, and a joint's frame, mbsModel.joint_frame;
 * side 0 is the joint's first body), as body-fixed quantities at t = 0 (seed 004 eq. 5) */
typedef struct {
  int attach;      /* its attachment frame (mbsModel.attach_*) */
  int nblock;      /* its local vector nodes: 0 static, 1 point mass, 4 director frame */
  double frame[9]; /* the joint frame d'_a (frame + 3 a, a = 0..2; d'_1 is the joint axis):
                    * C_ai with d'_a = sum_i C_ai d_i for a director frame, the world vector
                    * z_a for a static side (unused for a point mass) */
  double point[3]; /* the joint point as mbs_attach_coords gives it (phi + c^i d_i, x, or the
                    * world point) */
} mbsElemSide;

/* set side s (0, 1) of a two-sided element; its coordinates are side 0's blocks, then side
 * 1's, then the kind's scalar coordinates */
void mbs_elem_side_make(mbsElem *e, int s, const mbsElemSide *side);

/* the 12 frame coordinates of side s (the frame's 9, then the point's 3, as
 * mbsElemSide.frame and .point), read and replaced (a joint that engages takes its first
 * side's from the configuration at engagement: model/engage.c) */
const double *mbs_elem_side_coords(const mbsElem *e, int s);
void mbs_elem_side_set_coords(mbsElem *e, int s, const double c[12]);

/* replace the point of side s (as mbsElemSide.point) */
void mbs_elem_side_set_point(mbsElem *e, int s, const double point[3]);

/* the frame (world vectors d'_a, rows of D) and the point p of side s at q */
void mbs_elem_side_at(const mbsModel *m, const mbsElem *e, int s, const double *q, double D[9],
                      double p[3]);

/* make the frame and point of the moving side (the second body's, or the first's when the
 * second is fixed) coincide with the other side's at q: the element's angles and
 * displacements are then zero at q (nothing when that side is not a director frame) */
void mbs_elem_sides_rebase(const mbsModel *m, mbsElem *e, const double *q);

/* what the element measures from t = 0 measured from q instead (mbs_model_set_initial): a
 * rotational spring's angle (its sides rebased), a spring's default rest length (its length
 * at q); nothing for the other kinds */
void mbs_elem_rebase(const mbsModel *m, mbsElem *e, const double *q);

/* gravity g [m/s^2] on a body of mass M [kg] whose centre of mass is phi + e^i d_i (e: the
 * reference e^i = M r^i, NULL for a point mass or a beam node's consistent share) */
void mbs_elem_gravity_make(mbsElem *e, const double g[3], double mass, const double *eref);

/* a force value [N] (x profile) at the body point of convected coordinates theta (NULL:
 * at phi), frame MBS_FRAME_WORLD or MBS_FRAME_BODY (a follower force) */
void mbs_elem_force_make(mbsElem *e, const double value[3], const double *theta, int frame,
                         int profile);

/* a beam node's share value [N] (x profile) of a distributed force, world frame, on its phi;
 * phi0: the global index of the beam's node 0 phi, about which /loads/force takes the torque */
void mbs_elem_force_share_make(mbsElem *e, const double value[3], int profile, int phi0);

/* a torque value [N m] (x profile) on a rigid body, frame world or body, method a
 * mbsTorqueMethod */
void mbs_elem_torque_make(mbsElem *e, const double value[3], int frame, int profile, int method);

/* a torque tau [N m] (x profile) about a joint's axis, method a mbsTorqueMethod */
void mbs_elem_joint_torque_make(mbsElem *e, double tau, int profile, int method);

/* the same through coordinate augmentation (one constraint row; the caller appends the joint
 * angle gamma as the last coordinate), augmentation a mbsAugmentation */
void mbs_elem_augmented_torque_make(mbsElem *e, double tau, int profile, int augmentation);

/* a force F [N] (x profile) along a joint's axis */
void mbs_elem_joint_force_make(mbsElem *e, double force, int profile);

/* a PID law on the joint coordinate against target x profile(t): a torque (force = 0) or a
 * force (force = 1); slot: its place in mbsModel.ctrl_state */
void mbs_elem_joint_control_make(mbsElem *e, double kp, double kd, double ki, double target,
                                 int profile, int slot, int force);

/* a prescribed motion: the joint's angle (prismatic = 0) [rad] or displacement (1) [m] follows
 * value x profile(t) (one constraint row) */
void mbs_elem_drive_make(mbsElem *e, double value, int profile, int prismatic);

/* a computed-torque law on the joint's angle (force = 0) or displacement (1): a drive row on
 * the error dynamics e'' + kd e' + kp e = 0 around target x profile(t), whose error at t = 0
 * makes the target the joint's coordinate 0 there (its rate is completed by
 * mbs_elem_drive_initial_rate) */
void mbs_elem_computed_torque_make(const mbsModel *m, mbsElem *e, double target, double kp,
                                   double kd, int profile, int force);

/* a computed-torque law's initial error rate completed by the joint's rate from the model's
 * initial velocities m->v0 (nothing for other elements) */
void mbs_elem_drive_initial_rate(const mbsModel *m, mbsElem *e);

/* 1 if the drive element's coordinate is a displacement [m], 0 an angle [rad] */
int mbs_elem_drive_prismatic(const mbsElem *e);

/* a point c (phi + c^i d_i) of a rigid body sliding along beam `beam` (the model's index) with
 * the scalar coordinate s as the last local coordinate (slide.c); orient: the body's frame
 * C_ai d_i (C row-major, row a) follows the beam's directors (three more rows); ring: s is
 * periodic over the beam's length */
void mbs_elem_slide_make(mbsElem *e, int beam, const double c[3], const double C[9], int orient,
                         int ring);

/* the same element in a plane that planar joints already hold it in: its point's rows along
 * the two unit vectors in_plane (3 each) only, and the orientation rows of the bits of
 * orient_pairs (bit o: e_1 . D_2, e_1 . D_3, e_2 . D_3 for o = 0, 1, 2) */
void mbs_elem_slide_planar(mbsElem *e, const double in_plane[6], int orient_pairs);

/* the element (made without the coordinate s) in the absolute parametrization: no s, the
 * foot point found by projection at each evaluation, and the orientation rows; planar (after
 * mbs_elem_slide_planar): one row for the point (its normal distance from the centre line);
 * otherwise two (its distance along the beam's directors D_2, D_3 at the foot point) */
void mbs_elem_slide_absolute(mbsElem *e, int planar);

/* a spring-damper k [N/m], c [N s/m] of rest length L [m] between the sides' points;
 * rest_default: L is the length at t = 0 (set by mbs_elem_rebase) */
void mbs_elem_spring_make(mbsElem *e, double k, double c, double rest, int rest_default);

/* a torsion spring-damper k [N m/rad], d [N m s/rad] with rest angle [rad] on a joint */
void mbs_elem_rotational_spring_make(mbsElem *e, double k, double d, double rest);

#endif
