/* elements.h: the one interface every potential or non-potential force implements.
 *
 * An element touches e->nq coordinates (e->qidx) and fills local arrays of that size.
 * Integrators call only these functions and never know which kind they talk to; a new
 * element kind is one entry in the table, no integrator changes. */
#ifndef MBSIM_ELEMENTS_H
#define MBSIM_ELEMENTS_H

#include "mbsim/model.h"

typedef struct {
  const char *name;
  /* potential energy V(q) [J]; NULL if the kind has no potential */
  double (*potential)(const mbsModel *m, const mbsElem *e, const double *q);
  /* gradient of V at q into g (nq); Hessian (nq x nq row-major) added into H if H is not
   * NULL. NULL if no potential. */
  void (*gradient)(const mbsModel *m, const mbsElem *e, const double *q, double *g, double *H);
  /* discrete gradient (Gonzalez) of V between qa and qb into g, with
   * V(qb) - V(qa) = g . (qb - qa) exactly; derivative wrt qb added into Hb if not NULL.
   * NULL means the potential is at most quadratic, so the gradient at the midpoint is the
   * discrete gradient (seed 000 eq. 57) */
  void (*discrete_gradient)(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb,
                            double *g, double *Hb);
  /* non-potential generalized force F(q, v, t) into f (nq); derivatives wrt q and v added
   * into Fq and Fv (nq x nq row-major) when not NULL. NULL if none. */
  void (*force)(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                double *f, double *Fq, double *Fv);
  /* 1: the work of `force` is dissipation (dampers: /energy/dissipated), 0: external work of
   * a load (/energy/external_work) */
  int dissipative;
  /* 1: the potential is linear in q (its Hessian is zero): a staged system's blocks leave
   * its nq x nq block out of their pattern (solver/system.h, MBS_PART_HESS) */
  int linear;

  /* Constraint elements own e->ncon rows g(q, t) = 0 beyond the generic quadratic rows
   * (rheonomic drives, augmentation constraints). NULL for other kinds.
   * constraint: g (ncon) and, if G is not NULL, G = dg/dq (ncon x nq row-major) at (q, t) */
  void (*constraint)(const mbsModel *m, const mbsElem *e, const double *q, double t, double *g,
                     double *G);
  /* sum_r mu_r d2g_r/dq2 at (q, t) added into H (nq x nq); NULL if g is linear in q */
  void (*constraint_hessian)(const mbsModel *m, const mbsElem *e, const double *q, double t,
                             const double *mu, double *H);
  /* discrete gradient Gbar (ncon x nq) between qa and qb at time t with
   * Gbar (qb - qa) = g(qb, t) - g(qa, t) exactly, and d(Gbar^T mu)/dqb added into Hb when not
   * NULL. NULL: the gradient at the midpoint, exact for g at most quadratic in q. */
  void (*constraint_discrete_gradient)(const mbsModel *m, const mbsElem *e, const double *qa,
                                       const double *qb, double t, const double *mu, double *Gbar,
                                       double *Hb);
  /* time derivatives of a constraint element's rows along the motion (q, v) at t: gt =
   * dg/dt at fixed q, and gdd = d2/ds2 g(q + s v, t + s) at s = 0 (the curvature of the
   * index-1 system G a = -gdd), both with the profiles' right derivatives. NULL: g does not
   * depend on t; gdd then comes from constraint_hessian (v^T H v). */
  void (*constraint_rates)(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                           double t, double *gt, double *gdd);
  /* 1 if the Hessian (or force Jacobian) pair (i, j) of the element's local coordinates may be
   * nonzero, 0 if it is zero for every state: the Newton matrix's pattern leaves it out (an
   * element over a whole beam that couples no two of its nodes). NULL: every pair */
  int (*hess_pair)(const mbsElem *e, int i, int j);
} mbsElementKindTable;

/* the table entry of a kind (never NULL for a valid kind) */
const mbsElementKindTable *mbs_element_kind(mbsElemKind kind);

/* gather the element's coordinates from a global vector into loc (e->nq) */
void mbs_elem_gather(const mbsElem *e, const double *x, double *loc);

/* f(t) of the model's profile ip (1 for ip = -1: constant) and, if rate is not NULL, its
 * right derivative df/dt */
double mbs_elem_profile(const mbsModel *m, int ip, double t, double *rate);

/* the right second derivative of the model's profile ip at t (0 for ip = -1) */
double mbs_elem_profile_accel(const mbsModel *m, int ip, double t);

/* 1 if the model's profile ip has a kink or jump in (a, b] (0 for ip = -1) */
int mbs_elem_profile_kink_in(const mbsModel *m, int ip, double a, double b);

/* the coordinates of joint j at (q, v) (joint_coords.c): up to 3 values into x and their
 * rates into xd (NaN beyond the joint's count), angular[k] = 1 for an angle in (-pi, pi];
 * returns the count (revolute, prismatic 1; cylindrical, universal 2; planar, spherical 3;
 * fixed, distance 0). x or xd may be NULL when not wanted (a spherical joint then skips
 * their work; what is written has the same bits either way) */
int mbs_joint_coordinates(const mbsModel *m, int j, const double *q, const double *v, double *x,
                          double *xd, int angular[3]);

/* the target coordinate x*(t) [rad or m] of a drive element (a prescribed motion, or a
 * computed-torque law's reference plus its error's closed form), with its rate and
 * acceleration (right derivatives) into rate and accel when not NULL (drive.c) */
double mbs_drive_target(const mbsModel *m, const mbsElem *e, double t, double *rate, double *accel);

/* the slot k of a joint_control element's law in mbsModel.ctrl_state */
int mbs_joint_control_slot(const mbsElem *e);

/* the error u - u*(t) of a joint_control element's law at (q, t) [rad or m] (joint_load.c) */
double mbs_joint_control_error(const mbsModel *m, const mbsElem *e, const double *q, double t);

/* the torque [N m] or force [N] a joint_control element applies at (q, v, t) (joint_load.c) */
double mbs_joint_control_value(const mbsModel *m, const mbsElem *e, const double *q,
                               const double *v, double t);

/* the force (3) and torque (3) the load element e exerts on its second body at (q, v, t),
 * world components, about the load's attachment point on that body (load_resultant.c) */
void mbs_load_resultant(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                        double t, double out[6]);

/* the force (3) and torque (3) that the local generalized force f (e->nq) of a two-sided
 * element e exerts on its second body, world components, about that body's joint point (as
 * mbs_load_resultant; a static second body: minus what it exerts on the first) */
void mbs_elem_side_resultant(const mbsElem *e, const double *q, const double *f, double out[6]);

/* the joint frame vector d'_a (a = 0, 1, 2) of the first side of a two-sided element at q
 * (a world axis if that side is static) */
void mbs_elem_joint_axis(const mbsElem *e, const double *q, int a, double out[3]);

/* contravariant directors d^i of a (not necessarily orthonormal) triad d_i (seed 000 eq. 9):
 * dcon[3 i + k] = (d^i)_k, from d[3 i + k] = (d_i)_k; returns the volume d1 . (d2 x d3) */
double mbs_contravariant_directors(double dcon[9], const double d[9]);

/* Beam elements (kind "beam", src/elements/beam.c). e->qidx holds the element's order + 1
 * nodes' coordinates, 12 each (phi, d1, d2, d3), in node order along the beam (nq = 12
 * (order + 1)). Set up by the compiler after qidx is filled: reference strains at the
 * quadrature points from the initial coordinates q0 (global), the section stiffnesses k =
 * {EA, GA2, GA3, GJ, EI2, EI3} and the damping factor eta [s] go into e->param, the order
 * into e->iparam[0]. Returns 0, or -1 when order is not 1 or 2. */
int mbs_beam_element_setup(mbsElem *e, const double *q0, int order, const double k[6], double eta);

/* the element's strains at its midpoint relative to t = 0 (global q): axial Gamma1, shear
 * Gamma2, Gamma3, torsion K1, bending K2, K3 (in that order) */
void mbs_beam_element_strain(const mbsElem *e, const double *q, double out[6]);

/* the reference length L [m] of a beam element (the polyline through its nodes at t = 0) */
double mbs_beam_element_length(const mbsElem *e);

/* a slide_on_beam element (slide.c): the point r(s) of its beam's centre line at the
 * material coordinate s [m] for the global coordinates q, the tangent dr/ds into tangent;
 * returns |dr/ds| */
double mbs_slide_position(const mbsModel *m, const mbsElem *e, const double *q, double s,
                          double r[3], double tangent[3]);

/* the material coordinate of the point of the beam's centre line nearest to P at q into
 * *s; returns the distance [m] */
double mbs_slide_project(const mbsModel *m, const mbsElem *e, const double *q, const double P[3],
                         double *s);

/* a slide_on_beam element in the absolute parametrization (`param: absolute`): its foot
 * point s* [m] on the centre line at the global q (the projection of the body's point), and
 * its rate d(s*)/dt at the velocities v into *rate; NaN (both) when the foot is lost */
double mbs_slide_foot(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                      double *rate);

/* the strain energy [J] of every beam of the model at q (global): the sum of its elements'
 * potentials (/energy/strain) */
double mbs_beam_strain_energy(const mbsModel *m, const double *q);

#endif
