/* test_elements.c: the joint library and the actuation elements (issue 3) against finite
 * differences and their exact discrete properties: every new joint row (gradient, Hessian),
 * constraint element (drives, augmentation: G, the Hessian term, the discrete gradient
 * Gbar (qb - qa) = g(qb) - g(qa) and its derivative), potential (springs, rotational springs:
 * gradient, Hessian, discrete gradient V(qb) - V(qa) = dgV . (qb - qa) and its derivative,
 * momentum of the discrete forces), force (joint torques and forces, dampers, naive torques:
 * Fq, Fv), the profiles, and deck errors of the new keys. */
#include <check.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"
#include "con_rows_fd.h"
#include "deck_steps.h"

/* every new joint type, a fixed body, ground and a point mass; motions; every new load */
static const char *const DECK =
    "mbsim: 1\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: a, mass: 1.5, inertia: [0.1, 0.2, 0.25], position: [0, 0, 0],\n"
    "     orientation: {axis: [1, 2, 3], angle: 0.4}}\n"
    "  - {name: b, mass: 1.0, inertia: [0.05, 0.1, 0.12], position: [1, 0.2, 0],\n"
    "     reference_point: [-0.1, 0, 0.05], orientation: {axis: [0, 1, 1], angle: -0.7}}\n"
    "  - {name: c, mass: 2.0, inertia: [0.3, 0.3, 0.2], position: [0, 1.5, 0.3]}\n"
    "  - {name: d, mass: 0.8, inertia: [0.1, 0.1, 0.1], position: [-1, 0, 0.5],\n"
    "     orientation: {axis: [1, 0, 0], angle: 0.3}}\n"
    "  - {name: base, mass: 1, inertia: [1, 1, 1], position: [0, 0, -2], fixed: true}\n"
    "  - {name: bob, type: point, mass: 0.7, position: [2, 0, 0]}\n"
    "joints:\n"
    "  - {name: cyl, type: cylindrical, bodies: [a, b], point: [0.5, 0.1, 0],\n"
    "     axis: [0.3, 0.6, 0.8]}\n"
    "  - {name: pri, type: prismatic, bodies: [ground, c], point: [0, 1.5, 0.3],\n"
    "     axis: [1, 1, 0], motion: {value: 0.5, profile: {window: [1, 2]}}}\n"
    "  - {name: uni, type: universal, bodies: [a, c], point: [0, 0.8, 0.1],\n"
    "     axes: [[1, 0, 0], [0, 0.6, 0.8]]}\n"
    "  - {name: pla, type: planar, bodies: [b, d], point: [0, 0, 0.3], axis: [0, 0.2, 1]}\n"
    "  - {name: rev, type: revolute, bodies: [base, d], point: [0, 0, -1], axis: [0, 0, 1],\n"
    "     motion: {value: 1.0, profile: {table: [[0, 0], [1, 0], [2, 1]]}}}\n"
    "loads:\n"
    "  - {name: tq, type: joint_torque, joint: cyl, value: 2.0}\n"
    "  - {name: tqn, type: joint_torque, joint: rev, value: -1.5, method: naive,\n"
    "     profile: {sine: {amplitude: 2, frequency: 0.3, phase: 0.1}}}\n"
    "  - {name: tqa, type: joint_torque, joint: cyl, value: 0.7, method: augmented}\n"
    "  - {name: tqc, type: joint_torque, joint: rev, value: 0.4, method: augmented,\n"
    "     augmentation: classical}\n"
    "  - {name: fj, type: joint_force, joint: pri, value: 3.0, profile: {table: [[0, 1], [1, "
    "2]]}}\n"
    "  - {name: fjc, type: joint_force, joint: cyl, value: -1.0}\n"
    "  - {name: sp, type: spring, bodies: [a, bob], points: [[0.2, 0.1, 0.3], [2, 0, 0]],\n"
    "     stiffness: 50, damping: 2, rest_length: 1.2}\n"
    "  - {name: sg, type: spring, bodies: [ground, b], points: [[0, 0, 2], [1.1, 0.3, 0.1]],\n"
    "     stiffness: 10, damping: 0.5}\n"
    "  - {name: sbc, type: spring, bodies: [b, c], stiffness: 7}\n"
    "  - {name: rs, type: rotational_spring, joint: cyl, stiffness: 3, damping: 0.2,\n"
    "     rest_angle: 0.3}\n"
    "  - {name: rsb, type: rotational_spring, joint: rev, stiffness: 5}\n"
    "  - {name: tn, type: torque, body: d, value: [1, -2, 0.5], method: naive, frame: body}\n"
    "  - {name: fw, type: force, body: b, value: [0, 1, 0], point: [1.2, 0.2, 0.1],\n"
    "     profile: {ramp: [0, 1]}}\n"
    "solver: {integrator: em, dt: 0.01, t_end: 1}\n";

static mbsModel *compile_text(const char *text, mbsDeck *deck) {
  mbsError err;
  ck_assert_msg(mbs_deck_load_text(deck, "elements.yaml", text, strlen(text), NULL, 0, &err) ==
                    MBS_OK,
                "%d:%d: %s", err.line, err.col, err.msg);
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  return m;
}

/* a perturbed configuration (off the constraint manifold, triads not orthonormal) */
static void perturb(double *q, const double *q0, int n, double eps, unsigned seed) {
  srand(seed);
  for (int i = 0; i < n; i++) {
    q[i] = q0[i] + eps * (2.0 * rand() / (double)RAND_MAX - 1.0);
  }
}

static int count_kind(const mbsModel *m, mbsElemKind k) {
  int n = 0;
  for (int e = 0; e < m->nelem; e++) {
    n += m->elem[e].kind == k;
  }
  return n;
}

#define H_FD 1e-6
#define TOL_FD 2e-7
#define NMAX MBS_TWO_BODY_MAXQ

START_TEST(test_model_layout) {
  mbsDeck deck;
  mbsModel *m = compile_text(DECK, &deck);
  /* 4 rigid bodies and a point mass, two joint angles */
  ck_assert_int_eq(m->nnode, 17);
  ck_assert_int_eq(m->nscalar, 2);
  ck_assert_int_eq(m->nq, 3 * 17 + 2);
  ck_assert_str_eq(mbs_model_coord_name(m, 51), "cyl.gamma");
  ck_assert_str_eq(mbs_model_coord_name(m, 52), "rev.gamma");
  /* rows: rigidity 24, cylindrical 4, prismatic 5, universal 4, planar 3, revolute 5; then
   * one row per augmentation and per drive */
  ck_assert_int_eq(m->nrow, 24 + 4 + 5 + 4 + 3 + 5);
  ck_assert_int_eq(m->ncon, m->nrow + 2 + 2);
  ck_assert_int_eq(m->joint_ncon[0], 4);
  ck_assert_int_eq(m->joint_ncon[1], 5);
  ck_assert_int_eq(m->joint_ncon[2], 4);
  ck_assert_int_eq(m->joint_ncon[3], 3);
  ck_assert_int_eq(m->joint_ncon[4], 5);
  ck_assert_int_eq(count_kind(m, MBS_ELEM_DRIVE), 2);
  ck_assert_int_eq(count_kind(m, MBS_ELEM_AUGMENTED_TORQUE), 2);
  ck_assert_int_eq(count_kind(m, MBS_ELEM_JOINT_TORQUE), 2);
  ck_assert_int_eq(count_kind(m, MBS_ELEM_JOINT_FORCE), 2);
  ck_assert_int_eq(count_kind(m, MBS_ELEM_SPRING), 3);
  ck_assert_int_eq(count_kind(m, MBS_ELEM_ROTATIONAL_SPRING), 2);
  for (int e = 0; e < m->nelem; e++) {
    /* drives belong to their joint (reactions), nothing else does */
    ck_assert_int_eq(m->elem[e].joint >= 0, m->elem[e].kind == MBS_ELEM_DRIVE);
  }
  /* every constraint, drives and augmentation included, holds at t = 0 */
  ck_assert_double_le(mbs_constraint_violation(m, m->q0, 0.0, NULL), 1e-14);
  /* the default rest length of 'sbc' is the distance of the centres at t = 0 */
  ck_assert_double_eq_tol(deck.loads[8].rest_length, sqrt(1.0 + 1.3 * 1.3 + 0.09), 1e-14);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_joint_rows) {
  /* gradient and Hessian of every quadratic row by central differences */
  mbsDeck deck;
  mbsModel *m = compile_text(DECK, &deck);
  double *q = malloc((size_t)m->nq * sizeof(double));
  perturb(q, m->q0, m->nq, 0.1, 7);
  assert_con_rows_fd(m, q, 24, m->nrow);
  free(q);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* the frozen (eq. 23) augmentation constraint of a variable element at q with a = cos(ga),
 * b = sin(ga): u and w come from the element's own g(q) = u cos gamma + w sin gamma with
 * gamma replaced by 0 and pi/2 */
static double frozen_aug(const mbsModel *m, const mbsElem *el, double *q, double ga) {
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  int ig = el->qidx[el->nq - 1];
  double save = q[ig], u, w, g;
  q[ig] = 0.0;
  kind->constraint(m, el, q, 0.0, &u, NULL);
  q[ig] = 2.0 * atan(1.0);
  kind->constraint(m, el, q, 0.0, &w, NULL);
  q[ig] = save;
  g = cos(ga) * (u + sin(save)) + sin(ga) * (w - cos(save));
  return g;
}

/* element el's constraint Jacobian G and its sum mu_c Hessian H at (q, t) against central
 * differences of g and G (H to htol); with pairs, H is zero wherever the kind's hess_pair says
 * the Newton pattern has no entry. gp, Gp, gm, Gm: scratch of g's and G's sizes */
static void check_fd(const mbsModel *m, const mbsElem *el, double *q, double t, const double *mu,
                     const double *G, const double *H, double *gp, double *Gp, double *gm,
                     double *Gm, double htol, int pairs) {
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  int ne = el->nq, nc = el->ncon;
  for (int j = 0; j < ne; j++) {
    int i = el->qidx[j];
    double save = q[i];
    q[i] = save + H_FD;
    kind->constraint(m, el, q, t, gp, Gp);
    q[i] = save - H_FD;
    kind->constraint(m, el, q, t, gm, Gm);
    q[i] = save;
    for (int c = 0; c < nc; c++) {
      ck_assert_double_eq_tol(G[c * ne + j], (gp[c] - gm[c]) / (2 * H_FD), TOL_FD);
    }
    for (int r = 0; r < ne; r++) {
      double fd = 0.0;
      for (int c = 0; c < nc; c++) {
        fd += mu[c] * (Gp[c * ne + r] - Gm[c * ne + r]) / (2 * H_FD);
      }
      ck_assert_double_eq_tol(H[r * ne + j], fd, htol);
      if (pairs && !kind->hess_pair(el, r, j)) {
        ck_assert(H[r * ne + j] == 0.0);
      }
    }
  }
}

START_TEST(test_constraint_elements) {
  /* drives and augmentation constraints: G, sum mu Hessian, the discrete gradient property
   * and its derivative, at a perturbed state and a time inside the motions */
  mbsDeck deck;
  mbsModel *m = compile_text(DECK, &deck);
  int n = m->nq, nchecked = 0, ndiscrete = 0;
  double *q = malloc((size_t)n * sizeof(double)), *qb = malloc((size_t)n * sizeof(double));
  perturb(q, m->q0, n, 0.1, 11);
  perturb(qb, m->q0, n, 0.1, 13);
  double t = 1.3, mu[MBS_ELEM_MAXCON] = {0.7, -1.3, 0.4, 0.9, -0.2, 1.1};
  double g[MBS_ELEM_MAXCON], gp[MBS_ELEM_MAXCON], gm[MBS_ELEM_MAXCON];
  double G[MBS_ELEM_MAXCON * NMAX], Gp[MBS_ELEM_MAXCON * NMAX], Gm[MBS_ELEM_MAXCON * NMAX];
  double H[NMAX * NMAX], Gbar[MBS_ELEM_MAXCON * NMAX], Gbp[MBS_ELEM_MAXCON * NMAX],
      Gbm[MBS_ELEM_MAXCON * NMAX];
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (!kind->constraint) {
      continue;
    }
    nchecked++;
    int ne = el->nq;
    kind->constraint(m, el, q, t, g, G);
    memset(H, 0, sizeof(H));
    ck_assert(kind->constraint_hessian != NULL);
    kind->constraint_hessian(m, el, q, t, mu, H);
    check_fd(m, el, q, t, mu, G, H, gp, Gp, gm, Gm, TOL_FD, 0);
    if (!kind->constraint_discrete_gradient) {
      continue;
    }
    /* Gbar (qb - qa) = g(qb) - g(qa): the constraint itself for the classical form, the
     * frozen form a (u + sin) + b (w - cos), a = cos(ga), b = sin(ga), for the variable one
     * (whose g(q) equals the frozen form at qa) */
    ndiscrete++;
    memset(H, 0, sizeof(H));
    kind->constraint_discrete_gradient(m, el, q, qb, t, mu, Gbar, H);
    double ga = q[el->qidx[ne - 1]], dg, lin = 0.0;
    if (el->iparam[3] == MBS_AUGMENTATION_CLASSICAL) {
      kind->constraint(m, el, qb, t, gp, NULL);
      kind->constraint(m, el, q, t, gm, NULL);
      dg = gp[0] - gm[0];
    } else {
      kind->constraint(m, el, q, t, gm, NULL);
      ck_assert_double_eq_tol(frozen_aug(m, el, q, ga), gm[0], 1e-14);
      dg = frozen_aug(m, el, qb, ga) - gm[0];
    }
    for (int j = 0; j < ne; j++) {
      lin += Gbar[j] * (qb[el->qidx[j]] - q[el->qidx[j]]);
    }
    ck_assert_double_eq_tol(dg, lin, 1e-13 * fmax(1.0, fabs(dg)));
    /* d(Gbar^T mu)/dqb */
    for (int j = 0; j < ne; j++) {
      int i = el->qidx[j];
      double save = qb[i];
      qb[i] = save + H_FD;
      kind->constraint_discrete_gradient(m, el, q, qb, t, mu, Gbp, NULL);
      qb[i] = save - H_FD;
      kind->constraint_discrete_gradient(m, el, q, qb, t, mu, Gbm, NULL);
      qb[i] = save;
      for (int r = 0; r < ne; r++) {
        ck_assert_double_eq_tol(H[r * ne + j], mu[0] * (Gbp[r] - Gbm[r]) / (2 * H_FD), TOL_FD);
      }
    }
    /* a tiny step in gamma: the sinc form has no cancellation */
    memcpy(qb, q, (size_t)n * sizeof(double));
    qb[el->qidx[ne - 1]] += 1e-9;
    kind->constraint_discrete_gradient(m, el, q, qb, t, mu, Gbar, NULL);
    kind->constraint(m, el, q, t, G, Gp);
    if (el->iparam[3] == MBS_AUGMENTATION_CLASSICAL) {
      ck_assert_double_eq_tol(Gbar[ne - 1], Gp[ne - 1], 1e-8);
    }
    perturb(qb, m->q0, n, 0.1, 13);
  }
  ck_assert_int_eq(nchecked, 4);
  ck_assert_int_eq(ndiscrete, 2);
  free(q);
  free(qb);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* a discrete gradient's defining property, Gbar (qb - qa) = g(qb) - g(qa), to round-off */
static void check_discrete_gradient(const mbsModel *m, const mbsElem *el, const double *qa,
                                    const double *qb, const double *mu, double *G) {
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  double ga[MBS_ELEM_MAXCON], gb[MBS_ELEM_MAXCON];
  kind->constraint_discrete_gradient(m, el, qa, qb, 0.0, mu, G, NULL);
  kind->constraint(m, el, qb, 0.0, gb, NULL);
  kind->constraint(m, el, qa, 0.0, ga, NULL);
  for (int c = 0; c < el->ncon; c++) {
    double lin = 0.0;
    for (int j = 0; j < el->nq; j++) {
      lin += G[c * el->nq + j] * (qb[el->qidx[j]] - qa[el->qidx[j]]);
    }
    ck_assert_double_eq_tol(lin, gb[c] - ga[c], 1e-14);
  }
}

/* the buffers of check_fd for one element: G and its two finite-difference neighbours
 * (ncon x nq), the Hessian term (nq x nq, zeroed) */
typedef struct {
  double *G, *Gp, *Gm, *H;
} FdBufs;

static void fd_bufs(FdBufs *b, const mbsElem *el) {
  size_t nG = (size_t)el->ncon * (size_t)el->nq;
  b->G = malloc(nG * sizeof(double));
  b->Gp = malloc(nG * sizeof(double));
  b->Gm = malloc(nG * sizeof(double));
  b->H = calloc((size_t)el->nq * (size_t)el->nq, sizeof(double));
  ck_assert(b->G && b->Gp && b->Gm && b->H);
}

static void fd_bufs_free(FdBufs *b) {
  free(b->G);
  free(b->Gp);
  free(b->Gm);
  free(b->H);
}

/* the element's constraints hold at the model's initial coordinates */
static void holds_at_start(const mbsModel *m, const mbsElem *el) {
  double g[MBS_ELEM_MAXCON];
  mbs_element_kind(el->kind)->constraint(m, el, m->q0, 0.0, g, NULL);
  for (int c = 0; c < el->ncon; c++) {
    ck_assert_double_eq_tol(g[c], 0.0, 1e-12);
  }
}

/* a slide_on_beam test's model, two coordinate buffers and its slide_on_beam elements in turn */
typedef struct {
  mbsDeck deck;
  mbsModel *m;
  double *q, *qb;
  int next;   /* the element after the last one next_slide returned */
  int nslide; /* slide_on_beam elements returned */
} SlideModel;

static void slide_model(SlideModel *s, const char *text) {
  s->m = compile_text(text, &s->deck);
  s->q = malloc((size_t)s->m->nq * sizeof(double));
  s->qb = malloc((size_t)s->m->nq * sizeof(double));
  ck_assert(s->q && s->qb);
  s->next = 0;
  s->nslide = 0;
}

/* the model's next slide_on_beam element, or NULL after the last */
static const mbsElem *next_slide(SlideModel *s) {
  while (s->next < s->m->nelem) {
    const mbsElem *el = &s->m->elem[s->next++];
    if (el->kind == MBS_ELEM_SLIDE) {
      s->nslide++;
      return el;
    }
  }
  return NULL;
}

/* each test's deck has two slide_on_beam joints: both were checked; everything freed */
static void slide_model_free(SlideModel *s) {
  ck_assert_int_eq(s->nslide, 2);
  free(s->q);
  free(s->qb);
  mbs_model_destroy(s->m);
  mbs_deck_free(&s->deck);
}

/* slide_on_beam (slide.c): G and the Hessian term against finite differences, the pattern's
 * pairs (hess_pair) holding every nonzero of the Hessian, and the discrete gradient's
 * Gbar (qb - qa) = g(qb) - g(qa) exactly when s crosses element boundaries, for quadratic
 * elements with orient and linear ones without */
START_TEST(test_slide_element) {
  static const char *const text =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: p, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.4, 0, 0.02],\n"
      "     orientation: {axis: [1, 2, 3], angle: 0.4}}\n"
      "  - {name: r, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.3, 1.0, 0.1]}\n"
      "beams:\n"
      "  - {name: b2, nodes: [[0, 0, 0], [0.2, 0.05, 0], [0.4, 0, 0.02], [0.6, -0.05, 0],\n"
      "     [0.8, 0, 0], [1.0, 0.1, 0], [1.2, 0, 0]], order: 2, up: [0, 0, 1],\n"
      "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
      "  - {name: b1, from: [0, 1, 0], to: [1, 1, 0], elements: 4, up: [0, 0, 1],\n"
      "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
      "joints:\n"
      "  - {name: s2, type: slide_on_beam, bodies: [p, b2], point: [0, 0, 0], orient: true}\n"
      "  - {name: s1, type: slide_on_beam, bodies: [r, b1], point: [0, 0, -0.1]}\n"
      "solver: {integrator: em, dt: 0.01, t_end: 1}\n";
  SlideModel sm;
  slide_model(&sm, text);
  mbsModel *m = sm.m;
  int n = m->nq;
  double *q = sm.q, *qb = sm.qb;
  double mu[MBS_ELEM_MAXCON] = {0.7, -1.3, 0.4, 0.9, -0.2, 1.1};
  for (const mbsElem *el; (el = next_slide(&sm)) != NULL;) {
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    int ne = el->nq, nc = el->ncon, is = el->qidx[ne - 1];
    ck_assert_int_eq(nc, el->iparam[1] ? 6 : 3);
    FdBufs b;
    fd_bufs(&b, el);
    double g[MBS_ELEM_MAXCON], gp[MBS_ELEM_MAXCON], gm[MBS_ELEM_MAXCON];
    holds_at_start(m, el); /* the joint holds at t = 0 */
    perturb(q, m->q0, n, 0.02, 17);
    q[is] = m->q0[is] + 0.05;
    kind->constraint(m, el, q, 0.0, g, b.G);
    kind->constraint_hessian(m, el, q, 0.0, mu, b.H);
    check_fd(m, el, q, 0.0, mu, b.G, b.H, gp, b.Gp, gm, b.Gm, 1e-6, 1);
    /* discrete gradient across two element boundaries, and within one element */
    double ds[2] = {0.55, 0.01};
    for (int c2 = 0; c2 < 2; c2++) {
      perturb(qb, m->q0, n, 0.02, 19 + c2);
      qb[is] = q[is] + ds[c2];
      check_discrete_gradient(m, el, q, qb, mu, b.G);
    }
    fd_bufs_free(&b);
  }
  slide_model_free(&sm);
}
END_TEST

/* slide_on_beam with `param: absolute` (no s: the foot point by projection), in a plane: G
 * against finite differences (the point's row and the orientation rows, through the foot
 * point's dependence on q), the point row's Hessian term (exact; the orientation rows' is
 * the part at a fixed foot point, so their multipliers are zero here), the pattern holding
 * every nonzero, and Gonzalez's discrete gradient Gbar (qb - qa) = g(qb) - g(qa) */
START_TEST(test_slide_absolute) {
  static const char *const text =
      "mbsim: 1\n"
      "planar: {normal: [0, 0, 1]}\n"
      "bodies:\n"
      "  - {name: p, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.4, 0, 0],\n"
      "     orientation: {axis: [0, 0, 1], angle: 0.4}}\n"
      "  - {name: r, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.3, 1.0, 0]}\n"
      "beams:\n"
      "  - {name: b2, nodes: [[0, 0, 0], [0.2, 0.05, 0], [0.4, 0, 0], [0.6, -0.05, 0],\n"
      "     [0.8, 0, 0], [1.0, 0.1, 0], [1.2, 0, 0]], order: 2, up: [0, 0, 1],\n"
      "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
      "  - {name: b1, from: [0, 1, 0], to: [1, 1, 0], elements: 4, up: [0, 0, 1],\n"
      "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
      "joints:\n"
      "  - {name: s2, type: slide_on_beam, bodies: [p, b2], point: [0, 0, 0], param: absolute}\n"
      "  - {name: s1, type: slide_on_beam, bodies: [r, b1], point: [0.1, 0, 0], orient: true,\n"
      "     param: absolute}\n"
      "solver: {integrator: em, dt: 0.01, t_end: 1}\n";
  SlideModel sm;
  slide_model(&sm, text);
  mbsModel *m = sm.m;
  int n = m->nq;
  ck_assert_int_eq(m->nscalar, 0);
  double *q = sm.q, *qb = sm.qb;
  for (const mbsElem *el; (el = next_slide(&sm)) != NULL;) {
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    int nc = el->ncon, orient = el->iparam[1] != 0;
    double mu[MBS_ELEM_MAXCON] = {0.7, 0.0, 0.0};
    ck_assert_int_eq(nc, orient ? 2 : 1);
    FdBufs b;
    fd_bufs(&b, el);
    double g[MBS_ELEM_MAXCON], gp[MBS_ELEM_MAXCON], gm[MBS_ELEM_MAXCON];
    holds_at_start(m, el);
    /* in the plane: x and y of every vector, s2's point moved along the beam */
    perturb(q, m->q0, n, 0.02, 17);
    for (int i = 2; i < n; i += 3) {
      q[i] = m->q0[i];
    }
    q[3 * m->attach_node[el->attach[0]]] += 0.13;
    kind->constraint(m, el, q, 0.0, g, b.G);
    ck_assert(fabs(g[0]) > 1e-3);
    kind->constraint_hessian(m, el, q, 0.0, mu, b.H);
    check_fd(m, el, q, 0.0, mu, b.G, b.H, gp, b.Gp, gm, b.Gm, 1e-6, 1);
    /* the last element of the beam (its last node the last of the element's coordinates) */
    memcpy(qb, m->q0, (size_t)n * sizeof(double));
    qb[3 * m->attach_node[el->attach[0]]] += orient ? 0.45 : 0.8;
    kind->constraint(m, el, qb, 0.0, gp, NULL);
    ck_assert_double_eq_tol(gp[0], 0.0, 1e-12);
    perturb(qb, q, n, 0.01, 19);
    for (int i = 2; i < n; i += 3) {
      qb[i] = m->q0[i];
    }
    check_discrete_gradient(m, el, q, qb, mu, b.G);
    fd_bufs_free(&b);
  }
  slide_model_free(&sm);
}
END_TEST

/* slide_on_beam with `param: absolute` in space (two point rows D_a(s*) . (P - r(s*)), a = 2,
 * 3, and with orient the three orientation rows at s*), on a curved beam out of every
 * coordinate plane: G against finite differences (what s* contributes), the whole Hessian
 * term with every multiplier nonzero (exact: the second derivative of s*(q) included), the
 * pattern holding every nonzero, and Gonzalez's discrete gradient Gbar (qb - qa) = g(qb) -
 * g(qa), away from the rows' zero set (every row of order 1e-2) */
START_TEST(test_slide_absolute_space) {
  static const char *const text =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: p, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.4, 0, 0.02],\n"
      "     orientation: {axis: [1, 2, 3], angle: 0.4}}\n"
      "  - {name: r, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.3, 1.0, 0.12]}\n"
      "beams:\n"
      "  - {name: b2, nodes: [[0, 0, 0], [0.2, 0.05, 0.03], [0.4, 0, 0.02], [0.6, -0.05, 0],\n"
      "     [0.8, 0, -0.04], [1.0, 0.1, 0], [1.2, 0, 0.05]], order: 2, up: [0, 0.3, 1],\n"
      "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
      "  - {name: b1, from: [0, 1, 0], to: [1, 1, 0.2], elements: 4, up: [0, 0, 1],\n"
      "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
      "joints:\n"
      "  - {name: s2, type: slide_on_beam, bodies: [p, b2], point: [0, 0, 0], orient: true,\n"
      "     param: absolute}\n"
      "  - {name: s1, type: slide_on_beam, bodies: [r, b1], point: [0, 0, -0.06],\n"
      "     param: absolute}\n"
      "solver: {integrator: em, dt: 0.01, t_end: 1}\n";
  SlideModel sm;
  slide_model(&sm, text);
  mbsModel *m = sm.m;
  int n = m->nq;
  ck_assert_int_eq(m->nscalar, 0);
  double *q = sm.q, *qb = sm.qb;
  double mu[MBS_ELEM_MAXCON] = {0.7, -1.3, 0.4, 0.9, -0.2};
  for (const mbsElem *el; (el = next_slide(&sm)) != NULL;) {
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    int orient = el->iparam[1] != 0;
    ck_assert_int_eq(el->ncon, orient ? 5 : 2);
    FdBufs b;
    fd_bufs(&b, el);
    double g[MBS_ELEM_MAXCON], gp[MBS_ELEM_MAXCON], gm[MBS_ELEM_MAXCON];
    holds_at_start(m, el);
    /* off the line: every coordinate perturbed, the point moved along the beam and off it */
    perturb(q, m->q0, n, 0.02, 17);
    int p0 = 3 * m->attach_node[el->attach[0]];
    q[p0] += 0.13;
    q[p0 + 1] += 0.03;
    q[p0 + 2] -= 0.02;
    kind->constraint(m, el, q, 0.0, g, b.G);
    ck_assert(fabs(g[0]) > 1e-3 && fabs(g[1]) > 1e-3);
    kind->constraint_hessian(m, el, q, 0.0, mu, b.H);
    check_fd(m, el, q, 0.0, mu, b.G, b.H, gp, b.Gp, gm, b.Gm, 1e-6, 1);
    /* on the line further along: the rows vanish */
    memcpy(qb, m->q0, (size_t)n * sizeof(double));
    double s0 = 0.0, s1 = 0.0, P[3], r[3], t[3];
    for (int c = 0; c < 3; c++) {
      P[c] = sm.deck.joints[el->joint].point[c]; /* at t = 0 */
    }
    mbs_slide_project(m, el, m->q0, P, &s0);
    mbs_slide_position(m, el, m->q0, s0 + 0.37, r, t);
    for (int c = 0; c < 3; c++) {
      qb[p0 + c] += r[c] - P[c];
    }
    kind->constraint(m, el, qb, 0.0, gp, NULL);
    for (int c = 0; c < 2; c++) {
      ck_assert_double_eq_tol(gp[c], 0.0, 1e-12);
    }
    ck_assert_double_eq_tol(mbs_slide_project(m, el, qb, r, &s1), 0.0, 1e-12);
    ck_assert_double_eq_tol(s1, s0 + 0.37, 1e-9);
    /* the discrete gradient across a step that moves the foot point over element ends */
    perturb(qb, q, n, 0.01, 19);
    qb[p0] += 0.3;
    check_discrete_gradient(m, el, q, qb, mu, b.G);
    fd_bufs_free(&b);
  }
  slide_model_free(&sm);
}
END_TEST

/* the same rows in the C1 blend at a node between two elements (within 1e-5 of an element's
 * length of it, where the curve's second and third derivatives are of order kink / width and
 * kink / width^2): the point 1 cm off the line normal to both elements' tangents, its foot
 * point 1.6e-6 m past the node (the blend's half width each side is 1e-5 of that side's
 * element length, so r'' jumps at the node itself by the two lengths' ratio: the curve is C1,
 * not C2, there); G and the whole Hessian term against Richardson-extrapolated central
 * differences (steps 2e-7 and 1e-7, inside the blend), to 1e-5 of their largest entries (the
 * Hessian without the blend's third derivative r''' is off by 2e-2 of its largest) */
START_TEST(test_slide_absolute_space_blend) {
  static const char *const text =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: p, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0.4, 0, 0.02],\n"
      "     orientation: {axis: [1, 2, 3], angle: 0.4}}\n"
      "beams:\n"
      "  - {name: b2, nodes: [[0, 0, 0], [0.2, 0.05, 0.03], [0.4, 0, 0.02], [0.6, -0.05, 0],\n"
      "     [0.8, 0, -0.04]], order: 2, up: [0, 0.3, 1],\n"
      "     section: {E: 1e7, nu: 0.3, density: 1000, circle: 0.01}}\n"
      "joints:\n"
      "  - {name: s2, type: slide_on_beam, bodies: [p, b2], point: [0, 0, 0], orient: true,\n"
      "     param: absolute}\n"
      "solver: {integrator: em, dt: 0.01, t_end: 1}\n";
  mbsDeck deck;
  mbsModel *m = compile_text(text, &deck);
  const mbsElem *el = NULL;
  for (int k = 0; k < m->nelem; k++) {
    el = m->elem[k].kind == MBS_ELEM_SLIDE ? &m->elem[k] : el;
  }
  ck_assert(el != NULL);
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  int n = m->nq, ne = el->nq, nc = el->ncon;
  double *q = malloc((size_t)n * sizeof(double));
  ck_assert(q != NULL);
  memcpy(q, m->q0, (size_t)n * sizeof(double));
  /* the two elements' tangents at their common node, n normal to both */
  double s0, P[3] = {0.4, 0, 0.02}, ra[3], ta[3], tb[3];
  mbs_slide_project(m, el, q, P, &s0);
  mbs_slide_position(m, el, q, s0 - 1e-9, ra, ta);
  mbs_slide_position(m, el, q, s0 + 1e-9, ra, tb);
  double nv[3] = {ta[1] * tb[2] - ta[2] * tb[1], ta[2] * tb[0] - ta[0] * tb[2],
                  ta[0] * tb[1] - ta[1] * tb[0]};
  double nl = sqrt(nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2]);
  ck_assert(nl > 0.05); /* a kink of more than 0.05 rad */
  int p0 = 3 * m->attach_node[el->attach[0]];
  /* off the node by 1.6e-6 m along the line (0.4 of the blend's half width) */
  for (int c = 0; c < 3; c++) {
    q[p0 + c] += 0.01 * nv[c] / nl + 0.8e-6 * (ta[c] + tb[c]);
  }
  double mu[MBS_ELEM_MAXCON] = {0.7, -1.3, 0.4, 0.9, -0.2};
  FdBufs b;
  fd_bufs(&b, el);
  double g[MBS_ELEM_MAXCON], gp[MBS_ELEM_MAXCON], gm[MBS_ELEM_MAXCON], rate;
  kind->constraint(m, el, q, 0.0, g, b.G);
  ck_assert(fabs(g[0]) + fabs(g[1]) > 5e-3);
  double sf = mbs_slide_foot(m, el, q, q, &rate); /* (rate unused) half width 4.1e-6 m */
  ck_assert(sf - s0 > 1e-6 && sf - s0 < 2.5e-6);
  kind->constraint_hessian(m, el, q, 0.0, mu, b.H);
  double gmax = 0.0, hmax = 0.0;
  for (int i = 0; i < nc * ne; i++) {
    gmax = fmax(gmax, fabs(b.G[i]));
  }
  for (int i = 0; i < ne * ne; i++) {
    hmax = fmax(hmax, fabs(b.H[i]));
  }
  /* Richardson's extrapolation of central differences of steps 2h and h, h = 1e-7 (the foot
   * point's round-off in the blend, ~5e-14 m, spoils smaller steps) */
  double *fg = malloc((size_t)(2 * nc) * sizeof(double));
  double *fh = malloc((size_t)(2 * ne) * sizeof(double));
  ck_assert(fg && fh);
  for (int j = 0; j < ne; j++) {
    int i = el->qidx[j];
    double save = q[i];
    for (int k = 0; k < 2; k++) {
      double h = k ? 1e-7 : 2e-7;
      q[i] = save + h;
      kind->constraint(m, el, q, 0.0, gp, b.Gp);
      q[i] = save - h;
      kind->constraint(m, el, q, 0.0, gm, b.Gm);
      q[i] = save;
      for (int c = 0; c < nc; c++) {
        fg[k * nc + c] = (gp[c] - gm[c]) / (2 * h);
      }
      for (int r = 0; r < ne; r++) {
        fh[k * ne + r] = 0.0;
        for (int c = 0; c < nc; c++) {
          fh[k * ne + r] += mu[c] * (b.Gp[c * ne + r] - b.Gm[c * ne + r]) / (2 * h);
        }
      }
    }
    for (int c = 0; c < nc; c++) {
      ck_assert_double_eq_tol(b.G[c * ne + j], (4.0 * fg[nc + c] - fg[c]) / 3.0, 1e-5 * gmax);
    }
    for (int r = 0; r < ne; r++) {
      ck_assert_double_eq_tol(b.H[r * ne + j], (4.0 * fh[ne + r] - fh[r]) / 3.0, 1e-5 * hmax);
    }
  }
  free(fg);
  free(fh);
  fd_bufs_free(&b);
  free(q);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* sum over the element's vector nodes of q_a x g_a, and of g_a over position nodes */
static void momenta(const mbsModel *m, const mbsElem *el, const double *q, const double *g,
                    double J[3], double L[3]) {
  memset(J, 0, 3 * sizeof(double));
  memset(L, 0, 3 * sizeof(double));
  for (int b = 0; 3 * b + 2 < el->nq; b++) {
    int i0 = el->qidx[3 * b];
    if (i0 >= 3 * m->nnode) {
      break;
    }
    const double *x = q + i0, *f = g + 3 * b;
    J[0] += x[1] * f[2] - x[2] * f[1];
    J[1] += x[2] * f[0] - x[0] * f[2];
    J[2] += x[0] * f[1] - x[1] * f[0];
    if (m->node_position[i0 / 3]) {
      for (int c = 0; c < 3; c++) {
        L[c] += f[c];
      }
    }
  }
}

START_TEST(test_potentials) {
  /* springs and rotational springs: the momentum of the discrete forces (zero net force and
   * torque: energy AND momentum conserving), for steps of size 0.2 and 1e-7; their
   * gradient, Hessian and discrete gradient against finite differences are in the
   * conformance suite (test_conformance.c) */
  mbsDeck deck;
  mbsModel *m = compile_text(DECK, &deck);
  int n = m->nq, nspring = 0;
  double *qa = malloc((size_t)n * sizeof(double)), *qb = malloc((size_t)n * sizeof(double));
  double *qm = malloc((size_t)n * sizeof(double));
  double g[NMAX], J[3], L[3];
  for (int trial = 0; trial < 3; trial++) {
    perturb(qa, m->q0, n, 0.2, 17 + trial);
    perturb(qb, m->q0, n, trial == 2 ? 1e-7 : 0.2, 19 + trial);
    if (trial == 2) {
      memcpy(qb, qa, (size_t)n * sizeof(double));
      for (int i = 0; i < n; i++) {
        qb[i] += 1e-7 * sin(3.0 * i);
      }
    }
    for (int i = 0; i < n; i++) {
      qm[i] = 0.5 * (qa[i] + qb[i]);
    }
    for (int k = 0; k < m->nelem; k++) {
      const mbsElem *el = &m->elem[k];
      const mbsElementKindTable *kind = mbs_element_kind(el->kind);
      if (el->kind != MBS_ELEM_SPRING && el->kind != MBS_ELEM_ROTATIONAL_SPRING) {
        continue;
      }
      nspring += trial == 0;
      int ne = el->nq;
      kind->discrete_gradient(m, el, qa, qb, g, NULL);
      /* no net force or torque at the midpoint (if both sides move: a static side takes a
       * reaction that is not in the element) */
      momenta(m, el, qm, g, J, L);
      if (el->iparam[0] == 0 || el->iparam[1] == 0) {
        memset(J, 0, sizeof(J));
        memset(L, 0, sizeof(L));
      }
      double scale = 0.0;
      for (int j = 0; j < ne; j++) {
        scale = fmax(scale, fabs(g[j]));
      }
      for (int c = 0; c < 3; c++) {
        ck_assert_double_le(fabs(J[c]), 1e-13 * fmax(scale, 1.0));
        ck_assert_double_le(fabs(L[c]), 1e-13 * fmax(scale, 1.0));
      }
    }
  }
  ck_assert_int_eq(nspring, 5);
  free(qa);
  free(qb);
  free(qm);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_rotational_spring_wrap) {
  /* a hinge about z between ground and a body; the body's angle crosses rest + pi within
   * one step: the discrete gradient stays exact */
  static const char *text = "mbsim: 1\n"
                            "bodies:\n"
                            "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n"
                            "joints:\n"
                            "  - {name: h, type: revolute, bodies: [ground, a], point: [0, 0, "
                            "0], axis: [0, 0, 1]}\n"
                            "loads:\n"
                            "  - {name: k, type: rotational_spring, joint: h, stiffness: 4, "
                            "rest_angle: 0.5}\n";
  mbsDeck deck;
  mbsModel *m = compile_text(text, &deck);
  const mbsElem *el = &m->elem[0];
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  double qa[12], qb[12], g[12];
  double pi = 4.0 * atan(1.0);
  struct {
    double ta, tb;
  } cases[] = {{0.5 + pi - 0.1, 0.5 + pi + 0.2}, {0.1, 0.3}, {0.4, 0.4 + 1e-12}, {2.0, -1.0}};
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    double th[2] = {cases[c].ta, cases[c].tb};
    double *qs[2] = {qa, qb};
    for (int s = 0; s < 2; s++) {
      double *q = qs[s];
      memset(q, 0, 12 * sizeof(double));
      q[3] = cos(th[s]);
      q[4] = sin(th[s]);
      q[6] = -sin(th[s]);
      q[7] = cos(th[s]);
      q[11] = 1.0;
    }
    /* the potential is k/2 wrap(theta - rest)^2 */
    double da = remainder(th[0] - 0.5, 2 * pi);
    ck_assert_double_eq_tol(kind->potential(m, el, qa), 2.0 * da * da, 1e-12);
    kind->discrete_gradient(m, el, qa, qb, g, NULL);
    double Va = kind->potential(m, el, qa), Vb = kind->potential(m, el, qb), lin = 0.0;
    for (int j = 0; j < 12; j++) {
      lin += g[j] * (qb[j] - qa[j]);
    }
    ck_assert_double_eq_tol(Vb - Va, lin, 1e-12 * fmax(fabs(Va), fabs(Vb)));
  }
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_forces) {
  /* dF/dq and dF/dv of every force element by central differences at a perturbed state with
   * velocities; joint torques and joint forces exert no net force or torque on the pair
   * (contravariant: for any triad), the naive joint torque does */
  mbsDeck deck;
  mbsModel *m = compile_text(DECK, &deck);
  int n = m->nq, nforce = 0;
  double *q = malloc((size_t)n * sizeof(double)), *v = malloc((size_t)n * sizeof(double));
  perturb(q, m->q0, n, 0.2, 23);
  perturb(v, m->v0, n, 1.0, 29);
  double f[NMAX], fp[NMAX], fm[NMAX], Fq[NMAX * NMAX], Fv[NMAX * NMAX], J[3], L[3];
  double t = 0.45;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (!kind->force) {
      continue;
    }
    nforce++;
    int ne = el->nq;
    memset(Fq, 0, sizeof(Fq));
    memset(Fv, 0, sizeof(Fv));
    kind->force(m, el, q, v, t, f, Fq, Fv);
    for (int j = 0; j < ne; j++) {
      int i = el->qidx[j];
      for (int pass = 0; pass < 2; pass++) {
        double *x = pass ? v : q, save = x[i];
        x[i] = save + H_FD;
        kind->force(m, el, q, v, t, fp, NULL, NULL);
        x[i] = save - H_FD;
        kind->force(m, el, q, v, t, fm, NULL, NULL);
        x[i] = save;
        const double *A = pass ? Fv : Fq;
        for (int r = 0; r < ne; r++) {
          ck_assert_msg(fabs(A[r * ne + j] - (fp[r] - fm[r]) / (2 * H_FD)) <=
                            TOL_FD * fmax(1.0, fabs(A[r * ne + j])),
                        "%s: d f_%d / d %s_%d = %.10g, differences %.10g", kind->name, r,
                        pass ? "v" : "q", j, A[r * ne + j], (fp[r] - fm[r]) / (2 * H_FD));
        }
      }
    }
    /* internal loads: no net force and torque (both sides move for 'tq' and 'fjc') */
    if ((el->kind == MBS_ELEM_JOINT_TORQUE || el->kind == MBS_ELEM_JOINT_FORCE) &&
        el->iparam[0] == 4 && el->iparam[1] == 4) {
      momenta(m, el, q, f, J, L);
      double Jn = sqrt(J[0] * J[0] + J[1] * J[1] + J[2] * J[2]);
      if (el->iparam[3] == MBS_TORQUE_NAIVE && el->kind == MBS_ELEM_JOINT_TORQUE) {
        ck_assert_double_gt(Jn, 1e-3);
      } else {
        ck_assert_double_le(Jn, 1e-13);
      }
      for (int c = 0; c < 3; c++) {
        ck_assert_double_le(fabs(L[c]), 1e-13);
      }
    }
  }
  /* tq, tqn, tqa, tqc, fj, fjc, sp, sg, sbc, rs, rsb, tn, fw */
  ck_assert_int_eq(nforce, 13);
  free(q);
  free(v);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_profiles) {
  static const char *text =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n"
      "loads:\n"
      "  - {name: w, type: force, body: a, value: [1, 0, 0], profile: {window: [0.5, 1.5]}}\n"
      "  - {name: r, type: force, body: a, value: [1, 0, 0], profile: {ramp: [1, 3]}}\n"
      "  - {name: s, type: force, body: a, value: [1, 0, 0],\n"
      "     profile: {sine: {amplitude: 2, frequency: 0.25, phase: 0.5}}}\n"
      "  - {name: t, type: force, body: a, value: [1, 0, 0],\n"
      "     profile: {table: [[0, 1], [1, 3], [2, 2]]}}\n"
      "  - {name: c, type: force, body: a, value: [1, 0, 0], profile: constant}\n";
  mbsDeck deck;
  mbsModel *m = compile_text(text, &deck);
  ck_assert_int_eq(m->nprofile, 4);
  double rate, pi = 4.0 * atan(1.0);
  int w = m->elem[0].iparam[1], r = m->elem[1].iparam[1], s = m->elem[2].iparam[1],
      tb = m->elem[3].iparam[1];
  ck_assert_int_eq(m->elem[4].iparam[1], -1);
  ck_assert_double_eq(mbs_elem_profile(m, w, 0.49, NULL), 0.0);
  ck_assert_double_eq(mbs_elem_profile(m, w, 0.5, NULL), 1.0);
  ck_assert_double_eq(mbs_elem_profile(m, w, 1.4999, NULL), 1.0);
  ck_assert_double_eq(mbs_elem_profile(m, w, 1.5, NULL), 0.0);
  ck_assert_double_eq(mbs_elem_profile(m, r, 0.5, &rate), 0.0);
  ck_assert_double_eq_tol(mbs_elem_profile(m, r, 2.0, &rate), 0.5, 1e-15);
  ck_assert_double_eq_tol(rate, 0.5, 1e-15);
  ck_assert_double_eq(mbs_elem_profile(m, r, 3.5, &rate), 1.0);
  ck_assert_double_eq_tol(mbs_elem_profile(m, s, 0.7, &rate), 2 * sin(2 * pi * 0.25 * 0.7 + 0.5),
                          1e-15);
  ck_assert_double_eq_tol(rate, 2 * 2 * pi * 0.25 * cos(2 * pi * 0.25 * 0.7 + 0.5), 1e-14);
  ck_assert_double_eq(mbs_elem_profile(m, tb, -1.0, &rate), 1.0);
  ck_assert_double_eq_tol(mbs_elem_profile(m, tb, 0.25, &rate), 1.5, 1e-15);
  ck_assert_double_eq_tol(rate, 2.0, 1e-15);
  ck_assert_double_eq_tol(mbs_elem_profile(m, tb, 1.5, &rate), 2.5, 1e-15);
  ck_assert_double_eq(mbs_elem_profile(m, tb, 7.0, &rate), 2.0);
  ck_assert_double_eq(mbs_elem_profile(m, -1, 7.0, &rate), 1.0);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* a deck that must fail to load (or to compile) with a message containing want */
static void bad(const char *text, const char *want) {
  mbsDeck deck;
  mbsError err;
  char msg[2048];
  mbsStatus st = mbs_deck_load_text(&deck, "bad.yaml", text, strlen(text), NULL, 0, &err);
  if (st == MBS_OK) {
    mbsModel *m = mbs_model_compile(&deck, &err);
    ck_assert_msg(m == NULL, "'%s' was accepted", want);
    st = err.status;
  }
  mbs_deck_free(&deck);
  ck_assert_int_ne(st, MBS_OK);
  mbs_error_format(&err, msg, sizeof(msg));
  ck_assert_msg(strstr(msg, want) != NULL, "got '%s', want '%s'", msg, want);
}

#define TWO_BODIES                                                                                 \
  "mbsim: 1\n"                                                                                     \
  "bodies:\n"                                                                                      \
  "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n"                              \
  "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}\n"

START_TEST(test_bad_keys) {
  bad(TWO_BODIES "joints:\n  - {name: u, type: universal, bodies: [a, b], point: [0, 0, 0],\n"
                 "     axes: [[1, 0, 0], [1, 1, 0]]}\n",
      "bad.yaml:7:12: joints[0] 'u': axes: the two axes of a universal joint must be "
      "perpendicular (they are at 45 degrees)");
  bad(TWO_BODIES "joints:\n  - {name: u, type: universal, bodies: [a, b], point: [0, 0, 0],\n"
                 "     axis: [1, 0, 0]}\n",
      "a universal joint takes no 'axis' (use 'axes')");
  bad(TWO_BODIES "joints:\n  - {name: p, type: prismatic, bodies: [a, b], point: [0, 0, 0]}\n",
      "missing required key 'axis' (a prismatic joint needs it)");
  bad(TWO_BODIES "joints:\n  - {name: h, type: revolute, bodies: [a, b], point: [0, 0, 0],\n"
                 "     axis: [1, 0, 0], motion: {value: 1}}\n",
      "value x profile(0) = 1");
  bad(TWO_BODIES "joints:\n  - {name: h, type: revolute, bodies: [ground, b], point: [0, 0, 0],\n"
                 "     axis: [1, 0, 0], motion: {value: 1, profile: {ramp: [0, 2]}}}\n",
      "joint 'h': the initial velocities do not follow its motion: the motion's rate at t = 0 "
      "is 0.5 rad/s, the bodies' velocities give 0 rad/s");
  bad(TWO_BODIES "loads:\n  - {name: t, type: torque, body: a, value: [0, 0, 1], method: "
                 "augmented}\n",
      "method 'augmented' adds a joint angle coordinate and needs a joint axis");
  bad(TWO_BODIES "loads:\n  - {name: t, type: torque, body: a, value: [0, 0, 1], stiffness: 1}\n",
      "bad.yaml:6:56: loads[0] 't': a torque takes no 'stiffness'");
  bad(TWO_BODIES "joints:\n  - {name: h, type: revolute, bodies: [a, b], point: [0, 0, 0],\n"
                 "     axis: [1, 0, 0]}\n"
                 "loads:\n  - {name: t, type: joint_torque, joint: h, value: 1, augmentation: "
                 "classical}\n",
      "'augmentation' only applies to method: augmented");
  bad(TWO_BODIES "joints:\n  - {name: h, type: revolute, bodies: [a, b], point: [0, 0, 0],\n"
                 "     axis: [1, 0, 0]}\n"
                 "loads:\n  - {name: t, type: joint_force, joint: h, value: 1}\n",
      "joint 'h' is a revolute joint, which has no translation axis; a joint_force needs a "
      "prismatic or cylindrical joint");
  bad(TWO_BODIES "joints:\n  - {name: h, type: revolute, bodies: [a, b], point: [0, 0, 0],\n"
                 "     axis: [1, 0, 0]}\n"
                 "loads:\n  - {name: t, type: joint_torque, joint: h, value: 1, method: "
                 "augmented}\n  - {name: t2, type: joint_torque, joint: h, value: 1, method: "
                 "augmented}\n",
      "joint 'h' already has the augmented torque 't'");
  bad(TWO_BODIES "loads:\n  - {name: s, type: spring, bodies: [a, b], stiffness: -1}\n",
      "stiffness must be >= 0 (got -1)");
  bad(TWO_BODIES "loads:\n  - {name: s, type: spring, bodies: [ground, b], stiffness: 1}\n",
      "a spring to ground needs 'points'");
  bad(TWO_BODIES "loads:\n  - {name: f, type: force, body: a, value: [1, 0, 0],\n"
                 "     profile: {sine: {amplitude: 1}}}\n",
      "profile.sine: missing required key 'frequency'");
  bad(TWO_BODIES "loads:\n  - {name: f, type: force, body: a, value: [1, 0, 0], profile: "
                 "ramp}\n",
      "profile: the ramp profile needs parameters");
  bad(TWO_BODIES "loads:\n  - {name: f, type: force, body: a, value: [1, 0, 0],\n"
                 "     profile: {ramp: [0, 1], window: [0, 1]}}\n",
      "expected one profile (a mapping with one key");
  bad(TWO_BODIES "loads:\n  - {name: f, type: force, body: a, value: [1, 0, 0],\n"
                 "     profile: {table: []}}\n",
      "profile.table: expected a list of points [[t, f], ...], got an empty list");
}
END_TEST

/* mbs_joint_coordinates with x or xd NULL (the records want the rates alone, the tracking
 * the coordinates alone): the same bits as the full call, on every joint of the shipped
 * decks a few steps into their runs with velocities off the constraints; and the rates are
 * the derivatives of the coordinates along v (central differences), but a spherical
 * joint's, which are its relative angular velocity and not the rate of its rotation
 * vector */
START_TEST(test_joint_coordinates_parts) {
  glob_t g;
  ck_assert_int_eq(glob("../decks/*.yaml", 0, NULL, &g), 0);
  int njoints = 0;
  for (size_t f = 0; f < g.gl_pathc; f++) {
    const char *path = g.gl_pathv[f];
    mbsDeck deck;
    mbsData *d;
    mbsModel *m = deck_advanced(path, 3, &deck, &d);
    double *qp = malloc((size_t)(m->nq > 0 ? m->nq : 1) * sizeof(double));
    double *qm = malloc((size_t)(m->nq > 0 ? m->nq : 1) * sizeof(double));
    ck_assert(qp && qm);
    for (int i = 0; i < m->nq; i++) {
      d->v[i] += 0.1 * sin(1.0 + 0.7 * i);
    }
    for (int j = 0; j < m->njoint; j++) {
      double x[3], xd[3], x1[3], xd1[3], xp[3], xm[3], dummy[3];
      int ang[3], ang1[3], ang2[3];
      int n = mbs_joint_coordinates(m, j, d->q, d->v, x, xd, ang);
      ck_assert_int_eq(mbs_joint_coordinates(m, j, d->q, d->v, x1, NULL, ang1), n);
      ck_assert_int_eq(mbs_joint_coordinates(m, j, d->q, d->v, NULL, xd1, ang2), n);
      ck_assert_msg(!memcmp(x, x1, sizeof(x)) && !memcmp(xd, xd1, sizeof(xd)) &&
                        !memcmp(ang, ang1, sizeof(ang)) && !memcmp(ang, ang2, sizeof(ang)),
                    "%s: joint %s: a part differs from the full call", path, m->joint_name[j]);
      njoints += n > 0;
      if (n == 0 || m->joint_type[j] == MBS_JOINT_SPHERICAL) {
        continue;
      }
      const double h = 1e-6;
      for (int i = 0; i < m->nq; i++) {
        qp[i] = d->q[i] + h * d->v[i];
        qm[i] = d->q[i] - h * d->v[i];
      }
      mbs_joint_coordinates(m, j, qp, d->v, xp, NULL, ang1);
      mbs_joint_coordinates(m, j, qm, d->v, xm, dummy, ang1);
      for (int k = 0; k < n; k++) {
        double dx = ang[k] ? remainder(xp[k] - xm[k], 6.283185307179586) : xp[k] - xm[k];
        ck_assert_msg(fabs(dx / (2.0 * h) - xd[k]) <= 1e-6 * (1.0 + fabs(xd[k])),
                      "%s: joint %s: rate %d %.12g, central difference %.12g", path,
                      m->joint_name[j], k, xd[k], dx / (2.0 * h));
      }
    }
    free(qp);
    free(qm);
    mbs_data_destroy(d);
    mbs_model_destroy(m);
    mbs_deck_free(&deck);
  }
  globfree(&g);
  ck_assert_int_ge(njoints, 10);
}
END_TEST

Suite *elements_suite(void) {
  Suite *s = suite_create("elements");
  TCase *tc = tcase_create("joints_and_actuation");
  tcase_add_test(tc, test_model_layout);
  tcase_add_test(tc, test_joint_rows);
  tcase_add_test(tc, test_constraint_elements);
  tcase_add_test(tc, test_slide_element);
  tcase_add_test(tc, test_slide_absolute);
  tcase_add_test(tc, test_slide_absolute_space);
  tcase_add_test(tc, test_slide_absolute_space_blend);
  tcase_add_test(tc, test_potentials);
  tcase_add_test(tc, test_rotational_spring_wrap);
  tcase_add_test(tc, test_forces);
  tcase_add_test(tc, test_profiles);
  tcase_add_test(tc, test_bad_keys);
  tcase_add_test(tc, test_joint_coordinates_parts);
  suite_add_tcase(s, tc);
  return s;
}
