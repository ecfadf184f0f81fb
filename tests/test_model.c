/* test_model.c: mass matrix, constraint Jacobians and Hessians, discrete gradients and
 * element Jacobians against analytic values and finite differences */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"
#include "con_rows_fd.h"

/* a rotation matrix (column i = d_i) from an axis and angle */
static void rot(double R[9], const double axis[3], double angle) {
  double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  double k[3] = {axis[0] / n, axis[1] / n, axis[2] / n};
  double c = cos(angle), s = sin(angle), C = 1 - c;
  R[0] = c + k[0] * k[0] * C;
  R[1] = k[0] * k[1] * C - k[2] * s;
  R[2] = k[0] * k[2] * C + k[1] * s;
  R[3] = k[1] * k[0] * C + k[2] * s;
  R[4] = c + k[1] * k[1] * C;
  R[5] = k[1] * k[2] * C - k[0] * s;
  R[6] = k[2] * k[0] * C - k[1] * s;
  R[7] = k[2] * k[1] * C + k[0] * s;
  R[8] = c + k[2] * k[2] * C;
}

static void box_body(mbsDeckBody *b, const char *name, double rho, double a, double bb, double c) {
  memset(b, 0, sizeof(*b));
  snprintf(b->name, sizeof(b->name), "%s", name);
  b->type = MBS_BODY_RIGID;
  b->mass = rho * a * bb * c;
  b->inertia[0] = b->mass * (bb * bb + c * c) / 12.0;
  b->inertia[4] = b->mass * (a * a + c * c) / 12.0;
  b->inertia[8] = b->mass * (a * a + bb * bb) / 12.0;
  b->directors[0] = b->directors[4] = b->directors[8] = 1.0;
}

/* a deck with every joint type, ground and a fixed body, a point mass and all loads */
static mbsDeck *joint_deck(void) {
  mbsDeck *d = calloc(1, sizeof(mbsDeck));
  d->nbody = 5;
  d->bodies = calloc(5, sizeof(mbsDeckBody));
  box_body(&d->bodies[0], "a", 1.5, 1.0, 0.5, 0.3);
  box_body(&d->bodies[1], "b", 1.0, 0.8, 0.4, 0.2);
  box_body(&d->bodies[2], "base", 1.0, 1.0, 1.0, 1.0);
  d->bodies[2].fixed = 1;
  d->bodies[1].position[0] = 1.0;
  d->bodies[1].reference_point[0] = -0.1;
  d->bodies[1].reference_point[2] = 0.05;
  double ax[3] = {1, 2, 3};
  rot(d->bodies[1].directors, ax, 0.7);
  d->bodies[2].position[2] = -2.0;
  memset(&d->bodies[3], 0, sizeof(mbsDeckBody));
  snprintf(d->bodies[3].name, MBS_NAME_MAX, "bob");
  d->bodies[3].type = MBS_BODY_POINT;
  d->bodies[3].mass = 0.7;
  d->bodies[3].position[0] = 2.0;
  d->bodies[3].directors[0] = d->bodies[3].directors[4] = d->bodies[3].directors[8] = 1.0;
  box_body(&d->bodies[4], "c", 2.0, 0.3, 0.6, 0.9);
  d->bodies[4].position[1] = 1.5;
  d->njoint = 5;
  d->joints = calloc(5, sizeof(mbsDeckJoint));
  mbsDeckJoint *j = d->joints;
  j[0] = (mbsDeckJoint){.name = "sph", .type = MBS_JOINT_SPHERICAL, .body = {-1, 0}};
  j[0].point[0] = -0.5;
  j[1] = (mbsDeckJoint){.name = "rev", .type = MBS_JOINT_REVOLUTE, .body = {0, 1}};
  j[1].point[0] = 0.5;
  j[1].axis[1] = 0.6;
  j[1].axis[2] = 0.8;
  j[2] = (mbsDeckJoint){.name = "fix", .type = MBS_JOINT_FIXED, .body = {2, 4}};
  j[2].point[2] = -1.0;
  j[3] = (mbsDeckJoint){.name = "dist", .type = MBS_JOINT_DISTANCE, .body = {1, 3}};
  j[4] =
      (mbsDeckJoint){.name = "dist2", .type = MBS_JOINT_DISTANCE, .body = {-1, 1}, .has_points = 1};
  j[4].points[0][2] = 3.0;
  j[4].points[1][0] = 1.2;
  d->gravity[2] = -9.81;
  d->nload = 4;
  d->loads = calloc(4, sizeof(mbsDeckLoad));
  mbsDeckLoad *l = d->loads;
  l[0] = (mbsDeckLoad){.name = "tw", .type = MBS_LOAD_TORQUE, .body = 1, .value = {1, -2, 3}};
  l[1] = (mbsDeckLoad){.name = "tb",
                       .type = MBS_LOAD_TORQUE,
                       .body = 0,
                       .value = {0.5, 2, -1},
                       .frame = MBS_FRAME_BODY};
  l[2] = (mbsDeckLoad){.name = "fb",
                       .type = MBS_LOAD_FORCE,
                       .body = 1,
                       .value = {3, 1, 2},
                       .frame = MBS_FRAME_BODY,
                       .has_point = 1,
                       .point = {1.3, 0.2, -0.1}};
  l[3] = (mbsDeckLoad){.name = "fw", .type = MBS_LOAD_FORCE, .body = 3, .value = {0, 0, 1}};
  d->solver = (mbsDeckSolver){.integrator = MBS_INTEGRATOR_EM,
                              .dt = 1e-2,
                              .t_end = 1.0,
                              .newton_tolerance = 1e-10,
                              .newton_max_iterations = 25,
                              .newton_reuse = 1,
                              .rho_inf = 0.8,
                              .max_halvings = 10};
  d->output.every = 1;
  return d;
}

static void free_deck(mbsDeck *d) {
  free(d->bodies);
  free(d->joints);
  free(d->loads);
  free(d);
}

/* a perturbed configuration (not on the constraint manifold) */
static void perturb(double *q, const double *q0, int n, double eps, unsigned seed) {
  srand(seed);
  for (int i = 0; i < n; i++) {
    q[i] = q0[i] + eps * (2.0 * rand() / (double)RAND_MAX - 1.0);
  }
}

START_TEST(test_mass_matrix_box) {
  /* T = 1/2 v^T M v with v_phi = v_c + w x (phi - x_c), v_i = w x d_i equals
   * 1/2 m |v_c|^2 + 1/2 w . I_world w for the box's analytic inertia */
  mbsDeck *deck = joint_deck();
  deck->njoint = 0;
  deck->nload = 0;
  memset(deck->gravity, 0, sizeof(deck->gravity));
  double w[3] = {0.3, -1.1, 0.7}, vc[3] = {0.2, 0.5, -0.4};
  memcpy(deck->bodies[1].angular_velocity, w, sizeof(w));
  memcpy(deck->bodies[1].velocity, vc, sizeof(vc));
  mbsError err;
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  mbsData *d = mbs_data_create(m, &err);
  ck_assert_ptr_nonnull(d);
  mbsObservables o;
  mbs_observe(m, d, &o);
  const mbsDeckBody *b = &deck->bodies[1];
  const double *R = b->directors;
  double Iw[9] = {0}, T = 0.5 * b->mass * (vc[0] * vc[0] + vc[1] * vc[1] + vc[2] * vc[2]);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      for (int k = 0; k < 3; k++) {
        for (int l = 0; l < 3; l++) {
          Iw[3 * i + j] += R[3 * i + k] * b->inertia[3 * k + l] * R[3 * j + l];
        }
      }
    }
  }
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      T += 0.5 * w[i] * Iw[3 * i + j] * w[j];
    }
  }
  ck_assert_double_eq_tol(o.kinetic, T, 1e-13 * T);
  /* momenta: L = m v_c, J = x_c x m v_c + I_world w (only body 'b' moves) */
  double J[3] = {b->mass * (b->position[1] * vc[2] - b->position[2] * vc[1]),
                 b->mass * (b->position[2] * vc[0] - b->position[0] * vc[2]),
                 b->mass * (b->position[0] * vc[1] - b->position[1] * vc[0])};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      J[i] += Iw[3 * i + j] * w[j];
    }
  }
  for (int k = 0; k < 3; k++) {
    ck_assert_double_eq_tol(o.linear_momentum[k], b->mass * vc[k], 1e-14);
    ck_assert_double_eq_tol(o.angular_momentum[k], J[k], 1e-13);
  }
  /* body 'b' has a reference-point offset: e^i = -M r^i, E = E_c + M r r^T (seed 000 eq.
   * 14) and its centre and angular velocity are reported back exactly */
  ck_assert_double_eq_tol(m->body_e[3 + 0], -b->mass * b->reference_point[0], 1e-15);
  double a = 0.8, bb = 0.4, c = 0.2;
  ck_assert_double_eq_tol(m->body_E[9 + 0], b->mass * a * a / 12 + b->mass * 0.01, 1e-14);
  ck_assert_double_eq_tol(m->body_E[9 + 4], b->mass * bb * bb / 12, 1e-14);
  ck_assert_double_eq_tol(m->body_E[9 + 8], b->mass * c * c / 12 + b->mass * 0.0025, 1e-14);
  ck_assert_double_eq_tol(m->body_E[9 + 2], b->mass * (-0.1) * 0.05, 1e-15);
  for (int k = 0; k < 3; k++) {
    ck_assert_double_eq_tol(d->body_pos[3 + k], b->position[k], 1e-14);
    ck_assert_double_eq_tol(d->body_vel[3 + k], vc[k], 1e-14);
    ck_assert_double_eq_tol(d->body_omega[3 + k], w[k], 1e-14);
  }
  mbs_data_destroy(d);
  mbs_model_destroy(m);
  free_deck(deck);
}
END_TEST

START_TEST(test_constraint_jacobians) {
  mbsDeck *deck = joint_deck();
  mbsError err;
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  ck_assert_int_eq(m->ncon, 3 * 6 + 3 + 5 + 6 + 1 + 1);
  ck_assert_int_eq(m->nq, 3 * 12 + 3);
  /* every constraint holds at t = 0 */
  ck_assert_double_le(mbs_constraint_violation(m, m->q0, 0.0, NULL), 1e-14);
  double *q = malloc((size_t)m->nq * sizeof(double));
  perturb(q, m->q0, m->nq, 0.1, 7);
  assert_con_rows_fd(m, q, 0, m->ncon);
  free(q);
  mbs_model_destroy(m);
  free_deck(deck);
}
END_TEST

START_TEST(test_discrete_gradient_property) {
  /* g(q1) - g(q0) = G((q0 + q1)/2) (q1 - q0) for every constraint row (a linear row's G the
   * same at every q), and
   * V(q1) - V(q0) = dgV(q0, q1) . (q1 - q0) for every potential, to 1e-12 relative */
  mbsDeck *deck = joint_deck();
  mbsError err;
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_ptr_nonnull(m);
  int n = m->nq;
  double *q0 = malloc((size_t)n * sizeof(double)), *q1 = malloc((size_t)n * sizeof(double));
  double *qm = malloc((size_t)n * sizeof(double));
  perturb(q0, m->q0, n, 0.3, 3);
  perturb(q1, m->q0, n, 0.3, 5);
  for (int i = 0; i < n; i++) {
    qm[i] = 0.5 * (q0[i] + q1[i]);
  }
  double grad[3 * MBS_CON_MAXNODE];
  int nlinear = 0;
  for (int r = 0; r < m->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    double dg = mbs_con_eval(row, q1, NULL) - mbs_con_eval(row, q0, NULL);
    mbs_con_eval(row, qm, grad);
    double lin = 0.0, mag = fabs(mbs_con_eval(row, q1, NULL)) + fabs(mbs_con_eval(row, q0, NULL));
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        int i = 3 * row->node[k] + c;
        lin += grad[3 * k + c] * (q1[i] - q0[i]);
      }
    }
    ck_assert_double_eq_tol(dg, lin, 1e-12 * fmax(mag, 1.0));
    if (row->s == 0.0) {
      /* a linear row (mbs_con_eval's short path): its gradient w_a n is the same everywhere */
      double g0[3 * MBS_CON_MAXNODE], g1[3 * MBS_CON_MAXNODE];
      mbs_con_eval(row, q0, g0);
      mbs_con_eval(row, q1, g1);
      for (int i = 0; i < 3 * row->nnode; i++) {
        ck_assert(g0[i] == grad[i] && g1[i] == grad[i]);
      }
      nlinear++;
    }
  }
  /* the spherical joints' rows are linear */
  ck_assert_int_gt(nlinear, 0);
  double g[MBS_TWO_BODY_MAXQ];
  int npot = 0;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (!kind->potential) {
      continue;
    }
    npot++;
    if (kind->discrete_gradient) {
      kind->discrete_gradient(m, el, q0, q1, g, NULL);
    } else {
      kind->gradient(m, el, qm, g, NULL);
    }
    double dV = kind->potential(m, el, q1) - kind->potential(m, el, q0), lin = 0.0;
    for (int i = 0; i < el->nq; i++) {
      lin += g[i] * (q1[el->qidx[i]] - q0[el->qidx[i]]);
    }
    double mag = fabs(kind->potential(m, el, q1)) + fabs(kind->potential(m, el, q0));
    ck_assert_double_eq_tol(dV, lin, 1e-12 * fmax(mag, 1e-300));
  }
  ck_assert_int_ge(npot, 3);
  free(q0);
  free(q1);
  free(qm);
  mbs_model_destroy(m);
  free_deck(deck);
}
END_TEST

START_TEST(test_element_jacobians) {
  /* analytic dF/dq of every force element against central differences, at a triad that is
   * not orthonormal (as at the midpoint of a step) */
  mbsDeck *deck = joint_deck();
  mbsError err;
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_ptr_nonnull(m);
  int n = m->nq;
  double *q = malloc((size_t)n * sizeof(double)), *v = calloc((size_t)n, sizeof(double));
  perturb(q, m->q0, n, 0.2, 11);
  double f[MBS_TWO_BODY_MAXQ], fp[MBS_TWO_BODY_MAXQ], fm[MBS_TWO_BODY_MAXQ];
  double Fq[MBS_TWO_BODY_MAXQ * MBS_TWO_BODY_MAXQ], Fv[MBS_TWO_BODY_MAXQ * MBS_TWO_BODY_MAXQ];
  int nforce = 0;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (!kind->force) {
      continue;
    }
    nforce++;
    memset(Fq, 0, sizeof(Fq));
    memset(Fv, 0, sizeof(Fv));
    kind->force(m, el, q, v, 0.0, f, Fq, Fv);
    double h = 1e-6;
    for (int j = 0; j < el->nq; j++) {
      int i = el->qidx[j];
      double save = q[i];
      q[i] = save + h;
      kind->force(m, el, q, v, 0.0, fp, NULL, NULL);
      q[i] = save - h;
      kind->force(m, el, q, v, 0.0, fm, NULL, NULL);
      q[i] = save;
      for (int r = 0; r < el->nq; r++) {
        ck_assert_double_eq_tol(Fq[r * el->nq + j], (fp[r] - fm[r]) / (2 * h), 1e-7);
      }
    }
  }
  ck_assert_int_eq(nforce, 4);
  free(q);
  free(v);
  mbs_model_destroy(m);
  free_deck(deck);
}
END_TEST

START_TEST(test_contravariant_directors) {
  double d[9] = {1.1, 0.1, -0.2, 0.3, 0.9, 0.05, -0.1, 0.2, 1.2}, dc[9];
  mbs_contravariant_directors(dc, d);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      double s = dc[3 * i] * d[3 * j] + dc[3 * i + 1] * d[3 * j + 1] + dc[3 * i + 2] * d[3 * j + 2];
      ck_assert_double_eq_tol(s, i == j ? 1.0 : 0.0, 1e-14);
    }
  }
}
END_TEST

START_TEST(test_torque_momentum_balance) {
  /* a free body under a constant world torque m: J_{n+1} - J_n = dt m exactly with the
   * contravariant director forces at the midpoint (seed 000 eq. 61-64), for both midpoint
   * schemes */
  mbsDeck *deck = joint_deck();
  deck->nbody = 1;
  deck->njoint = 0;
  deck->nload = 1;
  memset(deck->gravity, 0, sizeof(deck->gravity));
  deck->loads[0] =
      (mbsDeckLoad){.name = "t", .type = MBS_LOAD_TORQUE, .body = 0, .value = {1, 1, 1}};
  box_body(&deck->bodies[0], "a", 1.5, 2.0, 1.0, 1.0); /* seed 003 sec. 4.1 */
  deck->bodies[0].velocity[0] = 5;
  deck->bodies[0].velocity[1] = 5;
  deck->bodies[0].velocity[2] = 5;
  mbsIntegrator ints[2] = {MBS_INTEGRATOR_EM, MBS_INTEGRATOR_MIDPOINT};
  for (int s = 0; s < 2; s++) {
    deck->solver.integrator = ints[s];
    mbsError err;
    mbsModel *m = mbs_model_compile(deck, &err);
    ck_assert_ptr_nonnull(m);
    mbsData *d = mbs_data_create(m, &err);
    mbsObservables o;
    mbs_observe(m, d, &o);
    double dt = 0.01;
    for (int n = 0; n < 100; n++) {
      double J0[3] = {o.angular_momentum[0], o.angular_momentum[1], o.angular_momentum[2]};
      mbsStatus st = mbs_solver_step(m, d, dt, &err);
      ck_assert_msg(st == MBS_OK, "%s", err.msg);
      mbs_observe(m, d, &o);
      for (int c = 0; c < 3; c++) {
        double dJ = o.angular_momentum[c] - J0[c];
        ck_assert_double_eq_tol(dJ, dt * 1.0, 1e-12);
      }
    }
    /* the centre moves uniformly: linear momentum m v stays (measured: exactly; J above to
     * 8.7e-13) */
    ck_assert_double_eq_tol(o.linear_momentum[0], 5 * m->body_mass[0], 1e-13);
    mbs_data_destroy(d);
    mbs_model_destroy(m);
  }
  free_deck(deck);
}
END_TEST

Suite *model_suite(void) {
  Suite *s = suite_create("model");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_mass_matrix_box);
  tcase_add_test(tc, test_constraint_jacobians);
  tcase_add_test(tc, test_discrete_gradient_property);
  tcase_add_test(tc, test_element_jacobians);
  tcase_add_test(tc, test_contravariant_directors);
  tcase_add_test(tc, test_torque_momentum_balance);
  suite_add_tcase(s, tc);
  return s;
}
