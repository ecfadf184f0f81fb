/* elem_internal.h: helpers shared by the element kinds of src/elements/ (not public).
 *
 * Elements over joints and springs connect two "sides" (seed 004 sec. 3): side 0 is the
 * joint's first body, side 1 its second. A side is static (ground or a fixed body: no
 * coordinates), a point mass (one vector node x) or a rigid body (phi, d1, d2, d3). The
 * element's local coordinates are side 0's nodes, then side 1's, then scalar coordinates;
 * a "block" is one local vector node (local coordinates 3 blk .. 3 blk + 2).
 *
 * Parameter layout of the two-sided kinds (joint_torque, joint_force, augmented_torque,
 * drive, spring, rotational_spring), set by mbs_elem_side_make and each kind's constructor
 * (elements/make.h) for src/model/compile.c:
 *   param[12 s + 3 a + i], a = 0..2: the body-fixed joint frame d'_a of side s (seed 004
 *       eq. 4-6), d'_a = sum_i C_ai d_i with C_ai = d_i(0) . z_a for a rigid side, the world
 *       vector z_a for a static side (d'_1 is the joint axis);
 *   param[12 s + 9 + i]: the body-fixed point of side s: phi + c^i d_i with c^i = d_i(0) .
 *       (P - phi(0)) for a rigid side, x for a point mass, the world point P if static;
 *   param[24 ..]: kind-specific (each kind's file documents them);
 *   iparam[0], iparam[1]: blocks of side 0 and side 1 (0 static, 1 point mass, 4 rigid);
 *   iparam[2]: profile index (-1: constant 1); iparam[3]: kind-specific variant. */
#ifndef MBS_ELEM_INTERNAL_H
#define MBS_ELEM_INTERNAL_H

#include "mbsim/elements.h"

/* first kind-specific parameter of the two-sided kinds */
#define ELEM_P 24

/* the most coordinates a two-sided kind touches (two rigid sides and up to three scalar
 * coordinates): the size of their local scratch; an element in general has no size limit
 * (mbsElem.qidx, mbsModel.elem_maxq) */
#define ELEM_SIDES_MAXQ MBS_TWO_BODY_MAXQ

/* a linear vector expression over local blocks: sum_k w[k] x_blk[k] + c */
typedef struct {
  int n;
  int blk[8];
  double w[8];
  double c[3];
} ElemVx;

/* the joint frame vector d'_a (a = 0, 1, 2) and the joint point of side s */
ElemVx elem_dir(const mbsElem *e, int s, int a);
ElemVx elem_point(const mbsElem *e, int s);

/* sa A + sb B */
ElemVx elem_vx_lin(double sa, const ElemVx *A, double sb, const ElemVx *B);

/* value at the global state q */
void elem_vx_eval(const mbsElem *e, const ElemVx *v, const double *q, double out[3]);

/* its rate along the velocities v: the value at v without the constant */
void elem_vx_rate(const mbsElem *e, const ElemVx *X, const double *v, double out[3]);

/* u = A(q) . B(q); adds s du/dq into g (local, e->nq) and s d2u/dq2 into H (e->nq x e->nq
 * row-major) when they are not NULL */
double elem_dot(const mbsElem *e, const ElemVx *A, const ElemVx *B, const double *q, double s,
                double *g, double *H);

/* the two joint invariants x = d'_ia(I) . d'_jc(II) and y = d'_ib(I) . d'_jc(II) of a
 * revolute-type element, with gradients gx, gy (nq, zeroed here) and, if Hx/Hy are not
 * NULL, Hessians (nq x nq, zeroed here); directors counted from 0 */
void elem_dir_dots(const mbsElem *e, const double *q, int ia, int ib, int jc, double *x, double *y,
                   double *gx, double *gy, double *Hx, double *Hy);

/* the angle theta = atan2(s, c) of the second side relative to the first about d'_1, with
 * c = d'_2(I) . d'_2(II), s = d'_3(I) . d'_2(II) (as /joints/coordinates), its gradient gt
 * (nq, local) and, if H is not NULL, its Hessian (nq x nq, written here); 0 with zero
 * derivatives if the frames are degenerate */
double elem_joint_angle(const mbsElem *e, const double *q, double *gt, double *H);

/* local index of the first coordinate of side s (0 or the blocks of side 0 times 3) */
int elem_side_offset(const mbsElem *e, int s);

/* the triad d (9: d1, d2, d3) of the rigid body whose phi is local block blk */
void elem_triad(const mbsElem *e, const double *q, int blk, double d[9]);

/* Director forces of a torque m on a triad d: f^i = 1/2 m x D^i with D^i the contravariant
 * directors d^i (seed 000 eq. 41, 61: sum_i d_i x f^i = m for any non-degenerate triad, so
 * J_{n+1} - J_n = dt m exactly, eq. 64) or, if naive, the covariant directors d_i (eq. 70 /
 * seed 004 eq. 13: sum_i d_i x f^i = m only for an orthonormal triad). dfd (9 x 9, row 3i+r,
 * column 3j+c) = d f^i_r / d (d_j)_c at fixed m, and dfm (9 x 3) = d f^i / d m, when not
 * NULL. */
void elem_torque_forces(const double d[9], const double m[3], int naive, double f[9], double *dfd,
                        double *dfm);

/* dD[(3 i + r) * 9 + 3 j + c] = d (d^i)_r / d (d_j)_c for the contravariant directors d^i of
 * the triad d (seed 000 eq. 9) */
void elem_contravariant_derivative(const double d[9], double dD[81]);

/* a spring with a default rest length: its length at q becomes the rest length (spring.c) */
void elem_spring_rebase(const mbsModel *m, mbsElem *e, const double *q);

/* sin(x)/x and its derivative, accurate near 0 */
double elem_sinc(double x, double *dsinc);

#endif
