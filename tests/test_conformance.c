/* test_conformance.c: every element kind and the generic quadratic constraint rows through the
 * same checks, so a new kind is checked by adding one entry to CASES below.
 *
 * A case builds a small model from a deck string through the library (mbs_deck_load_text,
 * mbs_model_compile), takes every element of its kind (or, for the pseudo-kind
 * CONF_QUADRATIC_ROWS, every mbsConRow wrapped as a one-row constraint element), and runs what
 * the kind's table provides, at generic states: q = q0 + a random perturbation (off the
 * constraint manifold, triads neither unit nor orthogonal), random v, random multipliers mu,
 * all from a fixed seed.
 *   potential: gradient vs central differences of V; Hessian vs differences of the gradient;
 *     discrete gradient: V(qb) - V(qa) = g . (qb - qa) to round-off, g -> gradient(qa) as
 *     qb -> qa, Hb = dg/dqb vs differences. A NULL discrete_gradient is checked as the solver
 *     uses it: the gradient at the midpoint and half the midpoint Hessian, which the identity
 *     then proves exact (the kind's potential is at most quadratic).
 *   force: Fq and Fv vs differences of f.
 *   constraint: G vs differences of g; constraint_hessian vs differences of G^T mu (NULL: zero);
 *     constraint_discrete_gradient: Gbar (qb - qa) = g(qb) - g(qa) to round-off, Gbar -> G(qa)
 *     as qb -> qa, Hb = d(Gbar^T mu)/dqb vs differences (NULL: the midpoint G and half the
 *     midpoint Hessian, as in the solver); constraint_rates: gt vs dg/dt, gdd vs the second
 *     difference of g(q + s v, t + s) at s = 0 (NULL, as in the solver: gt = 0, gdd = v^T H v
 *     row by row).
 *
 * Tolerances. Differences use h = 1e-6 max(1, |x|) (|x| <= ~3 here): the central difference of
 * f has truncation error h^2/6 |f'''| ~ 1e-12 |f'''| and round-off ~ eps |f| / h ~ 2e-10 |f|;
 * the functions here have |f'''| of the order of |f| and the derivatives (lengths ~ 1 m,
 * angles ~ 1 rad), so the error is ~ 1e-9 (1 + scale), scale the largest |value| differenced
 * or compared; TOL_FD = 1e-7 (1 + scale) leaves a margin of 100. The second difference along
 * (v, 1) uses hs = 1e-4: round-off 4 eps |g| / hs^2 ~ 1e-7 |g|, truncation hs^2/12 |g''''| ~
 * 1e-9 |g''''|: TOL_DD = 1e-5 (1 + scale). The discrete-gradient identities hold to round-off
 * of the sums involved: TOL_DG = 1e-13 (|Va| + |Vb| + sum |g_j dq_j|), ~ 450 eps, for the
 * quotients of differences inside the kinds (sinc forms, Gonzalez corrections); the largest
 * seen is ~ 10 eps. The limit qb = qa + delta d, delta = 1e-7, |d_i| <= 1:
 * g(qa, qb) - grad(qa) = H dq / 2 + O(delta^2), so TOL_LIM = nq delta (1 + max |H|), H of V
 * or of a single constraint row. The largest error seen is below 0.1 of each tolerance. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "solver/system.h"

#define H_FD 1e-6
#define H_DD 1e-4
#define TOL_FD 1e-7
#define TOL_DD 1e-5
#define TOL_DG 1e-13
#define DELTA_LIM 1e-7
/* local arrays: the largest element or row this suite meets (a row touches 8 nodes; a
 * three-node beam element has 36 coordinates; a slide_on_beam element on a beam of three
 * nodes 49) */
#define NMAX 49
_Static_assert(NMAX >= MBS_TWO_BODY_MAXQ, "NMAX covers the two-body kinds");
#define CMAX MBS_ELEM_MAXCON

/* the generic quadratic rows as a pseudo-kind after the element kinds */
#define CONF_QUADRATIC_ROWS MBS_ELEM_KIND_COUNT

/* ---- decks ---------------------------------------------------------------------------- */

/* three rigid bodies with general orientations (one with an offset reference point), a fixed
 * body and a point mass */
#define BODIES                                                                                     \
  "mbsim: 1\n"                                                                                     \
  "gravity: [0.3, -0.5, -9.81]\n"                                                                  \
  "bodies:\n"                                                                                      \
  "  - {name: a, mass: 1.5, inertia: [0.1, 0.2, 0.25], position: [0, 0, 0],\n"                     \
  "     orientation: {axis: [1, 2, 3], angle: 0.4}}\n"                                             \
  "  - {name: b, mass: 1.0, inertia: [0.05, 0.1, 0.12], position: [1, 0.2, 0],\n"                  \
  "     reference_point: [-0.1, 0, 0.05], orientation: {axis: [0, 1, 1], angle: -0.7}}\n"          \
  "  - {name: c, mass: 2.0, inertia: [0.3, 0.3, 0.2], position: [0, 1.5, 0.3],\n"                  \
  "     orientation: {axis: [1, 0, 0], angle: 0.3}}\n"                                             \
  "  - {name: base, mass: 1, inertia: [1, 1, 1], position: [0, 0, -2], fixed: true}\n"             \
  "  - {name: bob, type: point, mass: 0.7, position: [2, 0, 0]}\n"

/* a cylindrical joint between the two bodies and a revolute one from the fixed body */
#define CYL_REV                                                                                    \
  "joints:\n"                                                                                      \
  "  - {name: cyl, type: cylindrical, bodies: [a, b], point: [0.5, 0.1, 0],\n"                     \
  "     axis: [0.3, 0.6, 0.8]}\n"                                                                  \
  "  - {name: rev, type: revolute, bodies: [base, a], point: [0, 0, -1], axis: [0.2, 0, 1]}\n"

/* every joint type in a tree (no redundant rows) */
#define ALL_JOINTS                                                                                 \
  "mbsim: 1\n"                                                                                     \
  "bodies:\n"                                                                                      \
  "  - {name: a, mass: 1.5, inertia: [0.1, 0.2, 0.25], position: [0, 0, 0],\n"                     \
  "     orientation: {axis: [1, 2, 3], angle: 0.4}}\n"                                             \
  "  - {name: b, mass: 1.0, inertia: [0.05, 0.1, 0.12], position: [1, 0.2, 0],\n"                  \
  "     reference_point: [-0.1, 0, 0.05], orientation: {axis: [0, 1, 1], angle: -0.7}}\n"          \
  "  - {name: c, mass: 2.0, inertia: [0.3, 0.3, 0.2], position: [1.5, 1.5, 0.3]}\n"                \
  "  - {name: d, mass: 0.8, inertia: [0.1, 0.1, 0.1], position: [2, 1, 0.5],\n"                    \
  "     orientation: {axis: [1, 0, 0], angle: 0.3}}\n"                                             \
  "  - {name: e, mass: 0.8, inertia: [0.1, 0.2, 0.1], position: [2.5, 0, 0.5]}\n"                  \
  "  - {name: f, mass: 0.6, inertia: [0.1, 0.1, 0.2], position: [3, 0.5, 0],\n"                    \
  "     orientation: {axis: [0, 0, 1], angle: 0.9}}\n"                                             \
  "  - {name: g, mass: 0.5, inertia: [0.1, 0.1, 0.1], position: [3.5, 0.5, 0.5]}\n"                \
  "  - {name: base, mass: 1, inertia: [1, 1, 1], position: [0, 0, -2], fixed: true}\n"             \
  "  - {name: bob, type: point, mass: 0.7, position: [1, -1, 0]}\n"                                \
  "  - {name: bob2, type: point, mass: 0.7, position: [4, 1, 0]}\n"                                \
  "joints:\n"                                                                                      \
  "  - {name: sph, type: spherical, bodies: [base, a], point: [0, 0, -0.5]}\n"                     \
  "  - {name: rev, type: revolute, bodies: [a, b], point: [0.5, 0.1, 0], axis: [0, 0.6, 0.8]}\n"   \
  "  - {name: cyl, type: cylindrical, bodies: [b, c], point: [1.2, 0.8, 0.1],\n"                   \
  "     axis: [0.3, 0.6, 0.8]}\n"                                                                  \
  "  - {name: pri, type: prismatic, bodies: [c, d], point: [1.8, 1.2, 0.4], axis: [1, 1, 0]}\n"    \
  "  - {name: uni, type: universal, bodies: [d, e], point: [2.2, 0.5, 0.5],\n"                     \
  "     axes: [[1, 0, 0], [0, 0.6, 0.8]]}\n"                                                       \
  "  - {name: pla, type: planar, bodies: [e, f], point: [2.8, 0.2, 0.3], axis: [0, 0.2, 1]}\n"     \
  "  - {name: fix, type: fixed, bodies: [f, g], point: [3.2, 0.5, 0.2]}\n"                         \
  "  - {name: dis, type: distance, bodies: [a, bob], points: [[0.1, -0.2, 0], [1, -1, 0]]}\n"      \
  "  - {name: sp2, type: spherical, bodies: [g, bob2], point: [4, 1, 0]}\n"                        \
  "  - {name: dgr, type: distance, bodies: [ground, c], points: [[1, 3, 1], [1.5, 1.6, 0.3]]}\n"

/* one check case: a deck, the kind whose elements are checked, and the time of the
 * time-dependent checks (inside a smooth stretch of every profile of the deck) */
typedef struct {
  int kind; /* an mbsElemKind, or CONF_QUADRATIC_ROWS */
  const char *label;
  const char *deck;
  double t;
  /* the function whose exact discrete gradient the kind's constraint_discrete_gradient is,
   * when it is not the constraint itself (NULL: g); qa the start of the step */
  double (*dg_reference)(const mbsModel *m, const mbsElem *e, const double *qa, double *q,
                         double t);
} ConfCase;

/* the variable augmentation (augmented.c, seed 004 eq. 23) freezes a = cos gamma_a,
 * b = sin gamma_a at the start of the step: its discrete gradient is the one of
 * a (u + sin gamma) + b (w - cos gamma), not of the single-q form u cos gamma + w sin gamma.
 * u and w come from the element's own g with gamma set to 0 and pi/2. */
static double frozen_augmentation(const mbsModel *m, const mbsElem *e, const double *qa, double *q,
                                  double t) {
  const mbsElementKindTable *kind = mbs_element_kind(e->kind);
  int ig = e->qidx[e->nq - 1];
  double save = q[ig], u, w, ga = qa[ig];
  q[ig] = 0.0;
  kind->constraint(m, e, q, t, &u, NULL);
  q[ig] = 2.0 * atan(1.0);
  kind->constraint(m, e, q, t, &w, NULL);
  q[ig] = save;
  return cos(ga) * (u + sin(save)) + sin(ga) * (w - cos(save));
}

/* THE LIST: one entry per (kind, configuration); a new element kind adds its entries here */
static const ConfCase CASES[] = {
    {MBS_ELEM_GRAVITY, "gravity", BODIES, 0.3, NULL},
    {MBS_ELEM_FORCE, "force (world, body frame, profiles, point mass)",
     BODIES "loads:\n"
            "  - {name: fw, type: force, body: b, value: [0, 1, 0.5], point: [1.2, 0.2, 0.1],\n"
            "     profile: {ramp: [0, 1]}}\n"
            "  - {name: fb, type: force, body: a, value: [1, -2, 0.5], point: [0.1, 0.3, 0],\n"
            "     frame: body, profile: {sine: {amplitude: 2, frequency: 0.3, phase: 0.1}}}\n"
            "  - {name: fp, type: force, body: bob, value: [0, 0, 3]}\n",
     0.45, NULL},
    {MBS_ELEM_TORQUE, "torque (contravariant, naive, body frame)",
     BODIES "loads:\n"
            "  - {name: tc, type: torque, body: a, value: [0.3, 1, -2],\n"
            "     profile: {sine: {amplitude: 2, frequency: 0.3, phase: 0.1}}}\n"
            "  - {name: tn, type: torque, body: b, value: [1, -2, 0.5], method: naive, frame: "
            "body}\n"
            "  - {name: tb, type: torque, body: a, value: [1, 0.5, 0.2], frame: body}\n",
     0.45, NULL},
    {MBS_ELEM_JOINT_TORQUE, "joint_torque (contravariant, naive)",
     BODIES CYL_REV "loads:\n"
                    "  - {name: tq, type: joint_torque, joint: cyl, value: 2.0}\n"
                    "  - {name: tqn, type: joint_torque, joint: rev, value: -1.5, method: naive,\n"
                    "     profile: {sine: {amplitude: 2, frequency: 0.3, phase: 0.1}}}\n",
     0.45, NULL},
    {MBS_ELEM_JOINT_FORCE, "joint_force (prismatic, cylindrical)",
     BODIES "joints:\n"
            "  - {name: pri, type: prismatic, bodies: [ground, b], point: [1, 0.2, 0],\n"
            "     axis: [1, 1, 0]}\n"
            "  - {name: cyl, type: cylindrical, bodies: [b, a], point: [0.5, 0.1, 0],\n"
            "     axis: [0.3, 0.6, 0.8]}\n"
            "loads:\n"
            "  - {name: fj, type: joint_force, joint: pri, value: 3.0,\n"
            "     profile: {table: [[0, 1], [1, 2]]}}\n"
            "  - {name: fjc, type: joint_force, joint: cyl, value: -1.0}\n",
     0.45, NULL},
    {MBS_ELEM_AUGMENTED_TORQUE, "augmented_torque (variable)",
     BODIES CYL_REV "loads:\n"
                    "  - {name: tqa, type: joint_torque, joint: cyl, value: 0.7, method: "
                    "augmented}\n"
                    "  - {name: tqb, type: joint_torque, joint: rev, value: -0.4, method: "
                    "augmented,\n"
                    "     profile: {ramp: [0, 1]}}\n",
     0.45, frozen_augmentation},
    {MBS_ELEM_AUGMENTED_TORQUE, "augmented_torque (classical)",
     BODIES CYL_REV "loads:\n"
                    "  - {name: tqc, type: joint_torque, joint: rev, value: 0.4, method: "
                    "augmented,\n"
                    "     augmentation: classical}\n"
                    "  - {name: tqd, type: joint_torque, joint: cyl, value: 0.4, method: "
                    "augmented,\n"
                    "     augmentation: classical}\n",
     0.45, NULL},
    {MBS_ELEM_DRIVE, "drive (revolute, prismatic; both sides moving)",
     BODIES
     "joints:\n"
     "  - {name: rev, type: revolute, bodies: [b, c], point: [0.5, 1, 0.2], axis: [0, 0.3, 1],\n"
     "     motion: {value: 1.0, profile: {expression: \"1 - cos(2 * t)\"}}}\n"
     "  - {name: pri, type: prismatic, bodies: [a, b], point: [1, 0.2, 0], axis: [1, 1, 0],\n"
     "     motion: {value: 0.5, profile: {table: [[0, 0], [1, 0], [2, 1]]}}}\n"
     "  - {name: rvg, type: revolute, bodies: [base, a], point: [0, 0, -1], axis: [0.2, 0, "
     "1],\n"
     "     motion: {value: -0.5, profile: {expression: \"t^2\"}}}\n",
     1.3, NULL},
    {MBS_ELEM_SPRING, "spring (two bodies, ground, point mass, damped)",
     BODIES "loads:\n"
            "  - {name: sp, type: spring, bodies: [a, bob], points: [[0.2, 0.1, 0.3], [2, 0, 0]],\n"
            "     stiffness: 50, damping: 2, rest_length: 1.2}\n"
            "  - {name: sg, type: spring, bodies: [ground, b], points: [[0, 0, 2], [1.1, 0.3, "
            "0.1]],\n"
            "     stiffness: 10, damping: 0.5}\n"
            "  - {name: sab, type: spring, bodies: [a, b], stiffness: 7}\n"
            "  - {name: sfx, type: spring, bodies: [base, b], points: [[0, 0, -2], [1, 0.2, 0]],\n"
            "     stiffness: 3, rest_length: 0.5}\n",
     0.45, NULL},
    {MBS_ELEM_ROTATIONAL_SPRING, "rotational_spring (cylindrical, revolute, damped)",
     BODIES CYL_REV "loads:\n"
                    "  - {name: rs, type: rotational_spring, joint: cyl, stiffness: 3, damping: "
                    "0.2,\n"
                    "     rest_angle: 0.3}\n"
                    "  - {name: rsb, type: rotational_spring, joint: rev, stiffness: 5}\n",
     0.45, NULL},
    {MBS_ELEM_BEAM, "beam (orders 1 and 2 on curved references; damped and undamped)", BODIES, 0.45,
     NULL},
    {MBS_ELEM_BEAM, "beam from a deck (straight order 1, polyline order 2, damped)",
     BODIES "beams:\n"
            "  - {name: rod, from: [0, 0, 1], to: [1, 0.5, 1.2], elements: 2, up: [0, 0, 1],\n"
            "     section: {E: 2000, nu: 0.3, density: 10, rectangle: [0.1, 0.05]}}\n"
            "  - {name: arc, nodes: [[0, 0, 0], [0.5, 0.1, 0], [1, 0.3, 0.1]], order: 2,\n"
            "     damping: 0.01, section: {E: 1000, G: 400, density: 5, circle: 0.05}}\n",
     0.45, NULL},
    {MBS_ELEM_JOINT_CONTROL, "joint_control (PID torque on cylindrical, PD on revolute)",
     BODIES CYL_REV "loads:\n"
                    "  - {name: pc, type: joint_torque, joint: cyl,\n"
                    "     control: {kp: 3, kd: 0.7, ki: 1.5, target: {value: 0.4, profile:\n"
                    "       {expression: \"sin(2 * t)\"}}}}\n"
                    "  - {name: pr, type: joint_torque, joint: rev, control: {kp: 2, kd: 0.3, "
                    "target: -0.2}}\n",
     0.45, NULL},
    {MBS_ELEM_JOINT_CONTROL, "joint_control (PID force on prismatic, cylindrical)",
     BODIES
     "joints:\n"
     "  - {name: pri, type: prismatic, bodies: [ground, b], point: [1, 0.2, 0],\n"
     "     axis: [1, 1, 0]}\n"
     "  - {name: cyl, type: cylindrical, bodies: [b, a], point: [0.5, 0.1, 0],\n"
     "     axis: [0.3, 0.6, 0.8]}\n"
     "loads:\n"
     "  - {name: fp, type: joint_force, joint: pri,\n"
     "     control: {kp: 5, kd: 1.2, ki: 0.8, target: {value: 0.3, profile: {ramp: [0, 1]}}}}\n"
     "  - {name: fc, type: joint_force, joint: cyl, control: {kp: 4, target: 0.1}}\n",
     0.45, NULL},
    {MBS_ELEM_DRIVE, "drive of computed-torque laws (under- and over-damped error)",
     BODIES CYL_REV
     "loads:\n"
     "  - {name: ca, type: joint_torque, joint: rev,\n"
     "     control: {computed_torque: {value: 0.6, profile: {expression: \"cos(t)\"}},\n"
     "       kp: 9, kd: 1.5}}\n"
     "  - {name: cb, type: joint_force, joint: cyl,\n"
     "     control: {computed_torque: 0.2, kp: 4, kd: 5}}\n",
     1.3, NULL},
    {MBS_ELEM_SLIDE, "slide_on_beam (linear elements with orient, quadratic without)",
     "mbsim: 1\n"
     "bodies:\n"
     "  - {name: p, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.3, 0.02, 0],\n"
     "     orientation: {axis: [1, 2, 3], angle: 0.4}}\n"
     "  - {name: r, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.4, 1.05, 0.2]}\n"
     "beams:\n"
     "  - {name: b1, nodes: [[0, 0, 0], [0.3, 0.02, 0], [0.6, 0, 0.05]], up: [0, 0, 1],\n"
     "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
     "  - {name: b2, nodes: [[0, 1, 0], [0.4, 1.05, 0], [0.8, 1, 0.1]], order: 2, up: [0, 0, 1],\n"
     "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
     "joints:\n"
     "  - {name: s1, type: slide_on_beam, bodies: [p, b1], point: [0, 0, 0], orient: true}\n"
     "  - {name: s2, type: slide_on_beam, bodies: [r, b2], point: [0, 0, -0.2]}\n",
     0.45, NULL},
    {CONF_QUADRATIC_ROWS, "quadratic rows (rigidity, every joint type)", ALL_JOINTS, 0.45, NULL},
};
#define NCASE ((int)(sizeof(CASES) / sizeof(CASES[0])))

/* a new element kind must add its case(s) to CASES and then this count: the runtime test
 * test_coverage below names the kind that has none */
_Static_assert(MBS_ELEM_KIND_COUNT == 12, "a new element kind: add its case(s) to CASES in "
                                          "tests/test_conformance.c, then update this count");

/* ---- the quadratic rows as one-row constraint elements --------------------------------- */

/* e->iparam[0] = the row; qidx = its nodes' coordinates in the row's node order */
static void qrow_constraint(const mbsModel *m, const mbsElem *e, const double *q, double t,
                            double *g, double *G) {
  (void)t;
  double grad[3 * MBS_CON_MAXNODE];
  g[0] = mbs_con_eval(&m->con[e->iparam[0]], q, G ? grad : NULL);
  if (G) {
    memcpy(G, grad, (size_t)e->nq * sizeof(double));
  }
}

/* the system the solver assembles from (its Hessian pairs), set by test_case for the
 * quadratic rows' model */
static const mbsSystem *qrow_sys;

/* the compiled Hessian pairs the solver assembles: block (k, l) = coef I3 */
static void qrow_hessian(const mbsModel *m, const mbsElem *e, const double *q, double t,
                         const double *mu, double *H) {
  (void)m;
  (void)q;
  (void)t;
  const mbsSystem *sys = qrow_sys;
  int r = e->iparam[0], n = e->nq;
  for (int p = sys->con_hstart[r]; p < sys->con_hstart[r + 1]; p++) {
    for (int c = 0; c < 3; c++) {
      H[(3 * sys->con_hk[p] + c) * n + 3 * sys->con_hl[p] + c] += mu[0] * sys->con_hcoef[p];
    }
  }
}

static const mbsElementKindTable QROW_KIND = {
    .name = "quadratic_row",
    .constraint = qrow_constraint,
    .constraint_hessian = qrow_hessian,
};

/* qidx: storage for the element's coordinates (3 MBS_CON_MAXNODE) */
static mbsElem qrow_elem(const mbsModel *m, int r, int *qidx) {
  mbsElem e;
  memset(&e, 0, sizeof(e));
  e.qidx = qidx;
  const mbsConRow *row = &m->con[r];
  e.body = -1;
  e.load = -1;
  e.joint = row->joint;
  e.ncon = 1;
  e.con0 = r;
  e.nq = 3 * row->nnode;
  for (int k = 0; k < row->nnode; k++) {
    for (int c = 0; c < 3; c++) {
      e.qidx[3 * k + c] = 3 * row->node[k] + c;
    }
  }
  e.iparam[0] = r;
  return e;
}

/* ---- state ----------------------------------------------------------------------------- */

/* a fixed-seed generator independent of the C library: uniform in [-1, 1] */
static double uniform(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

static void perturb(double *x, const double *x0, int n, double eps, uint64_t *s) {
  for (int i = 0; i < n; i++) {
    x[i] = x0[i] + eps * uniform(s);
  }
}

/* one checked subject: a kind table and an element of it, at a state */
typedef struct {
  const mbsModel *m;
  const mbsElementKindTable *kind;
  const mbsElem *e;
  const ConfCase *cs;
  double *qa, *qb, *v; /* (m->nq) */
  double t;
  double mu[CMAX];
  char what[160]; /* for messages */
} Subject;

static double hstep(double x) {
  return H_FD * fmax(1.0, fabs(x));
}

static double max_abs(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    s = fmax(s, fabs(x[i]));
  }
  return s;
}

#define CHECK_CLOSE(an, ref, tol, ...) ck_assert_msg(fabs((an) - (ref)) <= (tol), __VA_ARGS__)

/* ---- potentials ------------------------------------------------------------------------ */

/* the discrete gradient as the em scheme uses it: the kind's, or the midpoint gradient and
 * half the midpoint Hessian */
static void potential_dg(const Subject *s, const double *qa, const double *qb, double *g,
                         double *Hb) {
  if (s->kind->discrete_gradient) {
    s->kind->discrete_gradient(s->m, s->e, qa, qb, g, Hb);
    return;
  }
  int n = s->m->nq, ne = s->e->nq;
  double *qm = malloc((size_t)n * sizeof(double)), H[NMAX * NMAX];
  ck_assert_ptr_nonnull(qm);
  for (int i = 0; i < n; i++) {
    qm[i] = 0.5 * (qa[i] + qb[i]);
  }
  memset(H, 0, sizeof(H));
  s->kind->gradient(s->m, s->e, qm, g, Hb ? H : NULL);
  if (Hb) {
    for (int i = 0; i < ne * ne; i++) {
      Hb[i] += 0.5 * H[i];
    }
  }
  free(qm);
}

/* a discrete gradient (potential_dg, constraint_dg) at qb with coordinate i moved by +h into
 * fp and by -h into fm (qb restored); returns h */
typedef void (*DgFn)(const Subject *s, const double *qa, const double *qb, double *out,
                     double *Hb);
static double diff_qb(const Subject *s, const double *qa, double *qb, int i, DgFn f, double *fp,
                      double *fm) {
  double save = qb[i], h = hstep(save);
  qb[i] = save + h;
  f(s, qa, qb, fp, NULL);
  qb[i] = save - h;
  f(s, qa, qb, fm, NULL);
  qb[i] = save;
  return h;
}

static void check_potential(const Subject *s) {
  const mbsModel *m = s->m;
  const mbsElem *e = s->e;
  const mbsElementKindTable *k = s->kind;
  int ne = e->nq;
  double *qa = s->qa, *qb = s->qb;
  double g[NMAX], gp[NMAX], gm[NMAX], H[NMAX * NMAX], Hb[NMAX * NMAX];
  ck_assert_msg(k->gradient != NULL, "%s: a potential needs a gradient", s->what);

  /* gradient and Hessian at qa */
  memset(H, 0, sizeof(H));
  k->gradient(m, e, qa, g, H);
  double gs = max_abs(g, ne), Hs = max_abs(H, ne * ne);
  for (int j = 0; j < ne; j++) {
    int i = e->qidx[j];
    double save = qa[i], h = hstep(save);
    qa[i] = save + h;
    double vp = k->potential(m, e, qa);
    k->gradient(m, e, qa, gp, NULL);
    qa[i] = save - h;
    double vm = k->potential(m, e, qa);
    k->gradient(m, e, qa, gm, NULL);
    qa[i] = save;
    double fd = (vp - vm) / (2 * h);
    CHECK_CLOSE(g[j], fd, TOL_FD * (1 + fmax(gs, fmax(fabs(vp), fabs(vm)))),
                "%s: dV/dq_%d = %.12g, differences %.12g", s->what, j, g[j], fd);
    for (int r = 0; r < ne; r++) {
      fd = (gp[r] - gm[r]) / (2 * h);
      CHECK_CLOSE(H[r * ne + j], fd, TOL_FD * (1 + fmax(gs, Hs)),
                  "%s: Hessian (%d, %d) = %.12g, differences of the gradient %.12g", s->what, r, j,
                  H[r * ne + j], fd);
    }
  }

  /* V(qb) - V(qa) = g . (qb - qa) */
  memset(Hb, 0, sizeof(Hb));
  potential_dg(s, qa, qb, g, Hb);
  double Va = k->potential(m, e, qa), Vb = k->potential(m, e, qb), lin = 0.0, size = 0.0;
  for (int j = 0; j < ne; j++) {
    double dq = qb[e->qidx[j]] - qa[e->qidx[j]];
    lin += g[j] * dq;
    size += fabs(g[j] * dq);
  }
  ck_assert_msg(fabs((Vb - Va) - lin) <= TOL_DG * (fabs(Va) + fabs(Vb) + size),
                "%s: V(qb) - V(qa) = %.17g, discrete gradient . (qb - qa) = %.17g", s->what,
                Vb - Va, lin);

  /* Hb = d g(qa, qb) / d qb */
  double Hbs = max_abs(Hb, ne * ne);
  gs = max_abs(g, ne);
  for (int j = 0; j < ne; j++) {
    double h = diff_qb(s, qa, qb, e->qidx[j], potential_dg, gp, gm);
    for (int r = 0; r < ne; r++) {
      double fd = (gp[r] - gm[r]) / (2 * h);
      CHECK_CLOSE(Hb[r * ne + j], fd, TOL_FD * (1 + fmax(gs, Hbs)),
                  "%s: Hb (%d, %d) = %.12g, differences of the discrete gradient %.12g", s->what, r,
                  j, Hb[r * ne + j], fd);
    }
  }

  /* qb -> qa: the discrete gradient tends to the gradient */
  int n = m->nq;
  double *qc = malloc((size_t)n * sizeof(double));
  ck_assert_ptr_nonnull(qc);
  uint64_t seed = 99;
  for (int i = 0; i < n; i++) {
    qc[i] = qa[i] + DELTA_LIM * uniform(&seed);
  }
  potential_dg(s, qa, qc, g, NULL);
  k->gradient(m, e, qa, gp, NULL);
  for (int j = 0; j < ne; j++) {
    CHECK_CLOSE(g[j], gp[j], ne * DELTA_LIM * (1 + Hs),
                "%s: discrete gradient %.12g at qb = qa + O(1e-7), gradient at qa %.12g", s->what,
                g[j], gp[j]);
  }
  free(qc);
}

/* ---- forces ---------------------------------------------------------------------------- */

static void check_force(const Subject *s) {
  const mbsModel *m = s->m;
  const mbsElem *e = s->e;
  int ne = e->nq;
  double f[NMAX], fp[NMAX], fm[NMAX], Fq[NMAX * NMAX], Fv[NMAX * NMAX];
  memset(Fq, 0, sizeof(Fq));
  memset(Fv, 0, sizeof(Fv));
  s->kind->force(m, e, s->qa, s->v, s->t, f, Fq, Fv);
  double fs = max_abs(f, ne), Ds = fmax(max_abs(Fq, ne * ne), max_abs(Fv, ne * ne));
  for (int j = 0; j < ne; j++) {
    int i = e->qidx[j];
    for (int pass = 0; pass < 2; pass++) {
      double *x = pass ? s->v : s->qa, save = x[i], h = hstep(save);
      x[i] = save + h;
      s->kind->force(m, e, s->qa, s->v, s->t, fp, NULL, NULL);
      x[i] = save - h;
      s->kind->force(m, e, s->qa, s->v, s->t, fm, NULL, NULL);
      x[i] = save;
      const double *A = pass ? Fv : Fq;
      for (int r = 0; r < ne; r++) {
        double fd = (fp[r] - fm[r]) / (2 * h);
        CHECK_CLOSE(A[r * ne + j], fd, TOL_FD * (1 + fmax(fs, Ds)),
                    "%s: d f_%d / d %s_%d = %.12g, differences %.12g", s->what, r, pass ? "v" : "q",
                    j, A[r * ne + j], fd);
      }
    }
  }
}

/* ---- constraints ----------------------------------------------------------------------- */

/* Gbar and Hb as the em scheme uses them: the kind's, or the midpoint G and half the
 * midpoint Hessian */
static void constraint_dg(const Subject *s, const double *qa, const double *qb, double *Gbar,
                          double *Hb) {
  if (s->kind->constraint_discrete_gradient) {
    s->kind->constraint_discrete_gradient(s->m, s->e, qa, qb, s->t, s->mu, Gbar, Hb);
    return;
  }
  int n = s->m->nq, ne = s->e->nq;
  double *qm = malloc((size_t)n * sizeof(double)), g[CMAX], H[NMAX * NMAX];
  ck_assert_ptr_nonnull(qm);
  for (int i = 0; i < n; i++) {
    qm[i] = 0.5 * (qa[i] + qb[i]);
  }
  s->kind->constraint(s->m, s->e, qm, s->t, g, Gbar);
  if (Hb && s->kind->constraint_hessian) {
    memset(H, 0, sizeof(H));
    s->kind->constraint_hessian(s->m, s->e, qm, s->t, s->mu, H);
    for (int i = 0; i < ne * ne; i++) {
      Hb[i] += 0.5 * H[i];
    }
  }
  free(qm);
}

/* the function the discrete gradient is exact for: g itself or the case's reference */
static void dg_reference(const Subject *s, double *q, double *g) {
  if (s->cs->dg_reference) {
    ck_assert_int_eq(s->e->ncon, 1);
    g[0] = s->cs->dg_reference(s->m, s->e, s->qa, q, s->t);
  } else {
    s->kind->constraint(s->m, s->e, q, s->t, g, NULL);
  }
}

/* gt and gdd as the solver uses them: the kind's, or 0 and v^T H v row by row */
static void constraint_rates(const Subject *s, double *gt, double *gdd) {
  if (s->kind->constraint_rates) {
    s->kind->constraint_rates(s->m, s->e, s->qa, s->v, s->t, gt, gdd);
    return;
  }
  int ne = s->e->nq;
  double mu[CMAX], H[NMAX * NMAX];
  for (int c = 0; c < s->e->ncon; c++) {
    gt[c] = 0.0;
    gdd[c] = 0.0;
    if (!s->kind->constraint_hessian) {
      continue;
    }
    memset(mu, 0, sizeof(mu));
    mu[c] = 1.0;
    memset(H, 0, sizeof(H));
    s->kind->constraint_hessian(s->m, s->e, s->qa, s->t, mu, H);
    for (int i = 0; i < ne; i++) {
      for (int j = 0; j < ne; j++) {
        gdd[c] += s->v[s->e->qidx[i]] * H[i * ne + j] * s->v[s->e->qidx[j]];
      }
    }
  }
}

static void check_constraint(const Subject *s) {
  const mbsModel *m = s->m;
  const mbsElem *e = s->e;
  const mbsElementKindTable *k = s->kind;
  int ne = e->nq, nc = e->ncon, n = m->nq;
  double *qa = s->qa, *qb = s->qb, t = s->t;
  double g[CMAX], gp[CMAX], gm[CMAX], G[CMAX * NMAX], Gp[CMAX * NMAX], Gm[CMAX * NMAX];
  double H[NMAX * NMAX], Hb[NMAX * NMAX];
  ck_assert_msg(nc >= 1 && nc <= CMAX, "%s: %d rows", s->what, nc);

  /* G and sum mu_c d2 g_c / dq2 at qa */
  k->constraint(m, e, qa, t, g, G);
  memset(H, 0, sizeof(H));
  if (k->constraint_hessian) {
    k->constraint_hessian(m, e, qa, t, s->mu, H);
  }
  double gs = fmax(max_abs(g, nc), max_abs(G, nc * ne)), Hs = max_abs(H, ne * ne);
  for (int j = 0; j < ne; j++) {
    int i = e->qidx[j];
    double save = qa[i], h = hstep(save);
    qa[i] = save + h;
    k->constraint(m, e, qa, t, gp, Gp);
    qa[i] = save - h;
    k->constraint(m, e, qa, t, gm, Gm);
    qa[i] = save;
    for (int c = 0; c < nc; c++) {
      double fd = (gp[c] - gm[c]) / (2 * h);
      CHECK_CLOSE(G[c * ne + j], fd, TOL_FD * (1 + gs), "%s: G (%d, %d) = %.12g, differences %.12g",
                  s->what, c, j, G[c * ne + j], fd);
    }
    for (int r = 0; r < ne; r++) {
      double fd = 0.0;
      for (int c = 0; c < nc; c++) {
        fd += s->mu[c] * (Gp[c * ne + r] - Gm[c * ne + r]) / (2 * h);
      }
      CHECK_CLOSE(H[r * ne + j], fd, TOL_FD * (1 + fmax(gs, Hs)),
                  "%s: constraint Hessian (%d, %d) = %.12g, differences of G^T mu %.12g", s->what,
                  r, j, H[r * ne + j], fd);
    }
  }

  /* Gbar (qb - qa) = g(qb) - g(qa), row by row */
  double Gbar[CMAX * NMAX], Gbp[CMAX * NMAX], Gbm[CMAX * NMAX], ra[CMAX], rb[CMAX];
  memset(Hb, 0, sizeof(Hb));
  constraint_dg(s, qa, qb, Gbar, Hb);
  dg_reference(s, qa, ra);
  dg_reference(s, qb, rb);
  for (int c = 0; c < nc; c++) {
    double lin = 0.0, size = 0.0;
    for (int j = 0; j < ne; j++) {
      double dq = qb[e->qidx[j]] - qa[e->qidx[j]];
      lin += Gbar[c * ne + j] * dq;
      size += fabs(Gbar[c * ne + j] * dq);
    }
    ck_assert_msg(fabs((rb[c] - ra[c]) - lin) <= TOL_DG * (fabs(ra[c]) + fabs(rb[c]) + size),
                  "%s: row %d: g(qb) - g(qa) = %.17g, Gbar (qb - qa) = %.17g", s->what, c,
                  rb[c] - ra[c], lin);
  }

  /* Hb = d (Gbar^T mu) / d qb */
  double Hbs = max_abs(Hb, ne * ne), Gbs = max_abs(Gbar, nc * ne);
  for (int j = 0; j < ne; j++) {
    double h = diff_qb(s, qa, qb, e->qidx[j], constraint_dg, Gbp, Gbm);
    for (int r = 0; r < ne; r++) {
      double fd = 0.0;
      for (int c = 0; c < nc; c++) {
        fd += s->mu[c] * (Gbp[c * ne + r] - Gbm[c * ne + r]) / (2 * h);
      }
      CHECK_CLOSE(Hb[r * ne + j], fd, TOL_FD * (1 + fmax(Gbs, Hbs)),
                  "%s: Hb (%d, %d) = %.12g, differences of Gbar^T mu %.12g", s->what, r, j,
                  Hb[r * ne + j], fd);
    }
  }

  /* qb -> qa: Gbar tends to the gradient of the reference at qa (G itself, or by central
   * differences of the reference) */
  double *qc = malloc((size_t)n * sizeof(double)), Gref[CMAX * NMAX];
  ck_assert_ptr_nonnull(qc);
  if (s->cs->dg_reference) {
    for (int j = 0; j < ne; j++) {
      int i = e->qidx[j];
      memcpy(qc, qa, (size_t)n * sizeof(double));
      double h = hstep(qa[i]);
      qc[i] = qa[i] + h;
      dg_reference(s, qc, gp);
      qc[i] = qa[i] - h;
      dg_reference(s, qc, gm);
      Gref[j] = (gp[0] - gm[0]) / (2 * h);
    }
  } else {
    memcpy(Gref, G, (size_t)(nc * ne) * sizeof(double));
  }
  uint64_t seed = 101;
  for (int i = 0; i < n; i++) {
    qc[i] = qa[i] + DELTA_LIM * uniform(&seed);
  }
  constraint_dg(s, qa, qc, Gbar, NULL);
  /* Gbar - Gref = O(delta) times a row's curvature: the largest entry of any single row's
   * Hessian bounds it (the Hessian above is weighted by mu); Gref by differences adds
   * TOL_FD (1 + gs) */
  double Hrow = 0.0, mu1[CMAX];
  for (int c = 0; k->constraint_hessian && c < nc; c++) {
    memset(mu1, 0, sizeof(mu1));
    mu1[c] = 1.0;
    memset(H, 0, sizeof(H));
    k->constraint_hessian(m, e, qa, t, mu1, H);
    Hrow = fmax(Hrow, max_abs(H, ne * ne));
  }
  double tol_lim = ne * DELTA_LIM * (1 + Hrow) + (s->cs->dg_reference ? TOL_FD * (1 + gs) : 0.0);
  for (int c = 0; c < nc; c++) {
    for (int j = 0; j < ne; j++) {
      CHECK_CLOSE(Gbar[c * ne + j], Gref[c * ne + j], tol_lim,
                  "%s: Gbar (%d, %d) = %.12g at qb = qa + O(1e-7), gradient at qa %.12g", s->what,
                  c, j, Gbar[c * ne + j], Gref[c * ne + j]);
    }
  }
  free(qc);

  /* gt = dg/dt at fixed q; gdd = d2/ds2 g(qa + s v, t + s) at s = 0 */
  double gt[CMAX], gdd[CMAX], g0[CMAX];
  constraint_rates(s, gt, gdd);
  double ht = hstep(t);
  k->constraint(m, e, qa, t + ht, gp, NULL);
  k->constraint(m, e, qa, t - ht, gm, NULL);
  for (int c = 0; c < nc; c++) {
    double fd = (gp[c] - gm[c]) / (2 * ht);
    CHECK_CLOSE(gt[c], fd, TOL_FD * (1 + fmax(gs, fabs(gt[c]))),
                "%s: row %d: g_t = %.12g, differences in t %.12g", s->what, c, gt[c], fd);
  }
  double *qp = malloc((size_t)n * sizeof(double)), *qm = malloc((size_t)n * sizeof(double));
  ck_assert(qp && qm);
  for (int i = 0; i < n; i++) {
    qp[i] = qa[i] + H_DD * s->v[i];
    qm[i] = qa[i] - H_DD * s->v[i];
  }
  k->constraint(m, e, qp, t + H_DD, gp, NULL);
  k->constraint(m, e, qm, t - H_DD, gm, NULL);
  k->constraint(m, e, qa, t, g0, NULL);
  for (int c = 0; c < nc; c++) {
    double dd = (gp[c] - 2.0 * g0[c] + gm[c]) / (H_DD * H_DD);
    CHECK_CLOSE(gdd[c], dd, TOL_DD * (1 + fmax(fabs(g0[c]), fabs(gdd[c]))),
                "%s: row %d: gdd = %.12g, second difference along (v, 1) %.12g", s->what, c, gdd[c],
                dd);
  }
  free(qp);
  free(qm);
}

/* ---- driver ---------------------------------------------------------------------------- */

static mbsModel *compile_case(const ConfCase *cs, mbsDeck *deck) {
  mbsError err;
  ck_assert_msg(mbs_deck_load_text(deck, "conformance.yaml", cs->deck, strlen(cs->deck), NULL, 0,
                                   &err) == MBS_OK,
                "%s: %d:%d: %s", cs->label, err.line, err.col, err.msg);
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s: %s", cs->label, err.msg);
  return m;
}

/* Beam elements on the frames of the rigid bodies a, b, c of BODIES (a beam node is a frame
 * phi, d1, d2, d3 like a rigid body's): order 1 on (a, b), order 2 on (a, b, c) and on
 * (c, b, a), so the references are curved and the triads general; one is undamped. Added to
 * the compiled model by hand (mbs_model_add_element, mbs_beam_element_setup), which is all
 * the element needs. */
static void add_beam_elements(mbsModel *m) {
  static const char *const nodes[3][3] = {{"a", "b", NULL}, {"a", "b", "c"}, {"c", "b", "a"}};
  static const double k[3][6] = {{3.0, 2.0, 1.5, 0.8, 0.6, 0.5},
                                 {2.0, 1.0, 1.2, 0.4, 0.7, 0.9},
                                 {1.0, 0.8, 0.6, 0.5, 0.3, 0.4}};
  static const double eta[3] = {0.1, 0.0, 0.25};
  for (int c = 0; c < 3; c++) {
    int order = nodes[c][2] ? 2 : 1, qidx[36];
    for (int j = 0; j <= order; j++) {
      int b = 0;
      while (b < m->nbody && strcmp(m->body_name[b], nodes[c][j]) != 0) {
        b++;
      }
      ck_assert_int_lt(b, m->nbody);
      for (int i = 0; i < 12; i++) {
        qidx[12 * j + i] = 3 * m->body_node[b] + i;
      }
    }
    mbsElem proto;
    memset(&proto, 0, sizeof(proto));
    proto.kind = MBS_ELEM_BEAM;
    proto.body = -1;
    proto.attach[0] = proto.attach[1] = -1;
    proto.load = -1;
    proto.joint = -1;
    int id = mbs_model_add_element(m, &proto, qidx, 12 * (order + 1));
    ck_assert_int_ge(id, 0);
    ck_assert_int_eq(mbs_beam_element_setup(&m->elem[id], m->q0, order, k[c], eta[c]), 0);
  }
}

/* run every check the kind provides on one subject at three states; returns the number of
 * the table's function groups it checked (potential, force, constraint) */
static int check_subject(Subject *s) {
  const mbsModel *m = s->m;
  int n = m->nq, groups = 0;
  uint64_t seed = 12345 + 977 * (uint64_t)(s->e - m->elem);
  for (int trial = 0; trial < 3; trial++) {
    /* off the manifold: q0 + 0.1 (the models are ~ 1 m, so the rows are far from zero) */
    perturb(s->qa, m->q0, n, 0.1, &seed);
    perturb(s->qb, s->qa, n, 0.1, &seed);
    perturb(s->v, m->v0, n, 1.0, &seed);
    for (int c = 0; c < CMAX; c++) {
      s->mu[c] = 1.5 * uniform(&seed);
    }
    groups = 0;
    if (s->kind->potential) {
      check_potential(s);
      groups++;
    }
    if (s->kind->force) {
      check_force(s);
      groups++;
    }
    if (s->kind->constraint) {
      check_constraint(s);
      groups++;
    }
  }
  return groups;
}

START_TEST(test_case) {
  const ConfCase *cs = &CASES[_i];
  mbsDeck deck;
  mbsModel *m = compile_case(cs, &deck);
  if (cs->kind == MBS_ELEM_BEAM && m->nbeam == 0) {
    add_beam_elements(m);
  }
  int n = m->nq, nsubject = 0;
  double *qa = malloc((size_t)n * sizeof(double)), *qb = malloc((size_t)n * sizeof(double));
  double *v = malloc((size_t)n * sizeof(double));
  ck_assert(qa && qb && v);
  Subject s;
  memset(&s, 0, sizeof(s));
  s.m = m;
  s.cs = cs;
  s.qa = qa;
  s.qb = qb;
  s.v = v;
  s.t = cs->t;
  if (cs->kind == CONF_QUADRATIC_ROWS) {
    s.kind = &QROW_KIND;
    mbsError err;
    mbsSystem *sys = mbs_system_create(m, 1, NULL, 0, 0, &err);
    ck_assert_msg(sys != NULL, "%s: %s", cs->label, err.msg);
    qrow_sys = sys;
    int qidx[3 * MBS_CON_MAXNODE];
    for (int r = 0; r < m->nrow; r++) {
      mbsElem e = qrow_elem(m, r, qidx);
      ck_assert_int_le(e.nq, NMAX);
      s.e = &e;
      snprintf(s.what, sizeof(s.what), "%s: row %d (joint %d, body %d, row %d)", cs->label, r,
               m->con[r].joint, m->con[r].body, m->con[r].jrow);
      ck_assert_int_eq(check_subject(&s), 1);
      nsubject++;
    }
    qrow_sys = NULL;
    mbs_system_destroy(sys);
  } else {
    for (int k = 0; k < m->nelem; k++) {
      if ((int)m->elem[k].kind != cs->kind) {
        continue;
      }
      s.e = &m->elem[k];
      s.kind = mbs_element_kind(s.e->kind);
      ck_assert_ptr_nonnull(s.kind);
      ck_assert_int_le(s.e->nq, NMAX);
      snprintf(s.what, sizeof(s.what), "%s: element %d (%s, load %d, joint %d)", cs->label, k,
               s.kind->name, s.e->load, s.e->joint);
      /* every kind provides something to check */
      ck_assert_msg(check_subject(&s) >= 1, "%s: the kind's table is empty", s.what);
      nsubject++;
    }
  }
  ck_assert_msg(nsubject >= 1, "%s: the deck has no element of the kind", cs->label);
  free(qa);
  free(qb);
  free(v);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_coverage) {
  /* every element kind and the quadratic rows have at least one case */
  int seen[MBS_ELEM_KIND_COUNT + 1] = {0};
  for (int c = 0; c < NCASE; c++) {
    ck_assert_int_ge(CASES[c].kind, 0);
    ck_assert_int_le(CASES[c].kind, CONF_QUADRATIC_ROWS);
    seen[CASES[c].kind]++;
  }
  for (int k = 0; k <= CONF_QUADRATIC_ROWS; k++) {
    ck_assert_msg(seen[k] > 0, "kind %d (%s) has no conformance case in CASES", k,
                  k < MBS_ELEM_KIND_COUNT ? mbs_element_kind((mbsElemKind)k)->name
                                          : "quadratic rows");
  }
}
END_TEST

Suite *conformance_suite(void) {
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("every_kind");
  tcase_add_test(tc, test_coverage);
  tcase_add_loop_test(tc, test_case, 0, NCASE);
  suite_add_tcase(s, tc);
  return s;
}
