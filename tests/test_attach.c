/* test_attach.c: the model's vocabulary: attachment frames, the one point expression, the
 * walk over every constraint row, growing compile arrays and elements of any size */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"

/* a fixed base, an arm driven about z (a motion: a constraint element), a tip on a hinge
 * about y with an augmented joint torque (a second constraint element and a scalar
 * coordinate), a bob on a string (distance joint): every frame kind and both row kinds */
static const char *DECK_TEXT =
    "mbsim: 1\n"
    "title: vocabulary\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: base, type: rigid, shape: {box: [1, 1, 1]}, density: 1.0, position: [0, 0, 0],"
    " fixed: true}\n"
    "  - {name: arm, type: rigid, shape: {box: [2, 0.2, 0.3]}, density: 1.0,"
    " position: [1, 0, 0], angular_velocity: [0, 0, 0.5], velocity: [0, 0.5, 0]}\n"
    "  - {name: tip, type: rigid, shape: {box: [1, 0.2, 0.2]}, density: 1.0,"
    " position: [2.5, 0, 0], angular_velocity: [0, 0, 0.5], velocity: [0, 1.25, 0]}\n"
    "  - {name: bob, type: point, mass: 0.5, position: [3, 0, -1], velocity: [0, 1.5, 0]}\n"
    "joints:\n"
    "  - {name: hinge, type: revolute, bodies: [base, arm], point: [0, 0, 0], axis: [0, 0, 1],"
    " motion: {value: 1.0, profile: {ramp: [0, 2]}}}\n"
    "  - {name: elbow, type: revolute, bodies: [arm, tip], point: [2, 0, 0], axis: [0, 1, 0]}\n"
    "  - {name: string, type: distance, bodies: [tip, bob], points: [[3, 0, 0], [3, 0, -1]]}\n"
    "loads:\n"
    "  - {name: motor, type: joint_torque, joint: elbow, value: 1.0, method: augmented}\n"
    "  - {name: pull, type: spring, bodies: [ground, arm], points: [[0, 1, 0], [1.5, 0, 0]],"
    " stiffness: 10.0}\n"
    "solver: {integrator: em, dt: 1.0e-3, t_end: 0.01}\n";

static mbsModel *compile_text(const char *text, mbsDeck *deck) {
  mbsError err;
  memset(deck, 0, sizeof(*deck));
  ck_assert_msg(mbs_deck_load_text(deck, "vocab.yaml", text, strlen(text), NULL, 0, &err) == MBS_OK,
                "%s", err.msg);
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  return m;
}

/* q0 moved by a fixed pseudo-random amount (directors no longer orthonormal) */
static double *moved_state(const mbsModel *m, double h) {
  double *q = malloc((size_t)m->nq * sizeof(double));
  ck_assert_ptr_nonnull(q);
  unsigned s = 12345u;
  for (int i = 0; i < m->nq; i++) {
    s = s * 1103515245u + 12345u;
    q[i] = m->q0[i] + h * ((double)(s >> 8) / 16777216.0 - 0.5);
  }
  return q;
}

START_TEST(test_attach_table) {
  mbsDeck deck;
  mbsModel *m = compile_text(DECK_TEXT, &deck);
  ck_assert_int_eq(m->nattach, m->nbody + 1);
  ck_assert_int_eq(m->attach_kind[MBS_ATTACH_GROUND_ID], MBS_ATTACH_GROUND);
  ck_assert_int_eq(m->attach_node[MBS_ATTACH_GROUND_ID], -1);
  ck_assert_str_eq(m->attach_name[MBS_ATTACH_GROUND_ID], "ground");
  static const mbsAttachKind want[4] = {MBS_ATTACH_STATIC, MBS_ATTACH_DIRECTORS,
                                        MBS_ATTACH_DIRECTORS, MBS_ATTACH_POINT};
  for (int b = 0; b < m->nbody; b++) {
    int f = m->body_attach[b];
    ck_assert_int_eq(m->attach_kind[f], want[b]);
    ck_assert_int_eq(m->attach_body[f], b);
    ck_assert_int_eq(m->attach_node[f], m->body_node[b]);
    ck_assert_str_eq(m->attach_name[f], m->body_name[b]);
  }
  /* joints and element sides name frames */
  for (int j = 0; j < m->njoint; j++) {
    for (int s = 0; s < 2; s++) {
      int b = m->joint_body[2 * j + s];
      ck_assert_int_eq(m->joint_attach[2 * j + s],
                       b < 0 ? MBS_ATTACH_GROUND_ID : m->body_attach[b]);
      ck_assert_int_eq(m->joint_frame[j].attach[s], m->joint_attach[2 * j + s]);
    }
  }
  int springs = 0;
  for (int k = 0; k < m->nelem; k++) {
    if (m->elem[k].kind == MBS_ELEM_SPRING) {
      springs++;
      ck_assert_int_eq(m->elem[k].attach[0], MBS_ATTACH_GROUND_ID);
      ck_assert_int_eq(m->elem[k].attach[1], m->body_attach[1]);
    }
  }
  ck_assert_int_eq(springs, 1);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_point_expression) {
  mbsDeck deck;
  mbsModel *m = compile_text(DECK_TEXT, &deck);
  double *q = moved_state(m, 0.2);
  const double c[3] = {0.3, -1.7, 2.2};
  for (int f = 0; f < m->nattach; f++) {
    double x[3], want[3], xw[3];
    mbs_attach_point(m, f, c, q, x);
    int n0 = m->attach_node[f];
    for (int k = 0; k < 3; k++) {
      /* the direct expression: phi + c^1 d1 + c^2 d2 + c^3 d3, summed the other way round */
      switch (m->attach_kind[f]) {
        case MBS_ATTACH_DIRECTORS:
          want[k] = c[2] * q[3 * (n0 + 3) + k] + c[1] * q[3 * (n0 + 2) + k] +
                    c[0] * q[3 * (n0 + 1) + k] + q[3 * n0 + k];
          break;
        case MBS_ATTACH_POINT:
          want[k] = q[3 * n0 + k];
          break;
        default:
          want[k] = c[k];
          break;
      }
    }
    /* its weights: x = sum_k w_k q_node[k] + c */
    mbsPointWeights pw;
    mbs_attach_point_weights(m, f, c, &pw);
    for (int k = 0; k < 3; k++) {
      xw[k] = pw.c[k];
      for (int i = 0; i < pw.n; i++) {
        xw[k] += pw.w[i] * q[3 * pw.node[i] + k];
      }
      ck_assert_double_eq_tol(x[k], want[k], 1e-14);
      ck_assert_double_eq_tol(xw[k], want[k], 1e-14);
    }
  }
  /* frame coordinates at t = 0 give back the world point; a joint's point is the deck's */
  for (int f = 0; f < m->nattach; f++) {
    const double P[3] = {1.25, -0.5, 0.75};
    double cf[3], x[3];
    if (m->attach_kind[f] == MBS_ATTACH_POINT) {
      continue; /* a point mass has only its own position */
    }
    mbs_attach_coords(m, f, P, cf);
    mbs_attach_point(m, f, cf, m->q0, x);
    for (int k = 0; k < 3; k++) {
      ck_assert_double_eq_tol(x[k], P[k], 1e-14);
    }
  }
  for (int j = 0; j < 2; j++) {
    double x[3];
    mbs_attach_point(m, m->joint_attach[2 * j + 1], m->joint_point + 3 * j, m->q0, x);
    for (int k = 0; k < 3; k++) {
      ck_assert_double_eq_tol(x[k], deck.joints[j].point[k], 1e-14);
    }
  }
  free(q);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_row_walk) {
  mbsDeck deck;
  mbsModel *m = compile_text(DECK_TEXT, &deck);
  ck_assert_int_gt(m->ncon, m->nrow); /* both row kinds are there */
  double *q = moved_state(m, 0.05), t = 0.7;
  double *qp = malloc((size_t)m->nq * sizeof(double));
  double *work = malloc(mbs_rows_work_size(m) * sizeof(double));
  double *work2 = malloc(mbs_rows_work_size(m) * sizeof(double));
  double *G = malloc((size_t)m->nq * sizeof(double));
  ck_assert(qp && work && work2 && G);
  int n = 0, nelem_rows = 0;
  mbsRowIter it;
  for (mbs_rows_begin(&it, m, q, t, 1, work); mbs_rows_next(&it); n++) {
    ck_assert_int_eq(it.row, n);
    ck_assert_int_eq(it.elem < 0, it.row < m->nrow);
    if (it.elem >= 0) {
      nelem_rows++;
      ck_assert_int_eq(it.joint, m->elem[it.elem].joint);
      ck_assert_int_eq(it.row, m->elem[it.elem].con0 + it.erow);
    } else {
      ck_assert_int_eq(it.joint, m->con[it.row].joint);
    }
    ck_assert_double_eq(it.g, mbs_row_value(m, it.row, q, t, work2));
    int erow = -1;
    ck_assert_int_eq(mbs_row_element(m, it.row, &erow), it.elem); /* the owner, unevaluated */
    ck_assert_int_eq(erow, it.erow);
    /* G against central differences of g */
    memset(G, 0, (size_t)m->nq * sizeof(double));
    for (int e = 0; e < it.nz; e++) {
      ck_assert(it.idx[e] >= 0 && it.idx[e] < m->nq);
      G[it.idx[e]] += it.val[e];
    }
    const double h = 1e-6;
    for (int i = 0; i < m->nq; i++) {
      memcpy(qp, q, (size_t)m->nq * sizeof(double));
      qp[i] = q[i] + h;
      double gp = mbs_row_value(m, it.row, qp, t, work2);
      qp[i] = q[i] - h;
      double gm = mbs_row_value(m, it.row, qp, t, work2);
      double fd = (gp - gm) / (2 * h);
      ck_assert_msg(fabs(fd - G[i]) <= 1e-7 * (1.0 + fabs(G[i])), "row %d q %d: G %.12g fd %.12g",
                    it.row, i, G[i], fd);
    }
  }
  ck_assert_int_eq(n, m->ncon);
  ck_assert_int_eq(nelem_rows, m->ncon - m->nrow);
  /* the worst row and its description follow the walk */
  double worst = 0.0;
  char want[256], got[256];
  for (mbs_rows_begin(&it, m, q, t, 1, work); mbs_rows_next(&it);) {
    worst = fmax(worst, fabs(it.g));
    mbs_constraint_describe(m, it.row, got, sizeof(got));
    if (it.elem >= 0 && it.joint >= 0) {
      snprintf(want, sizeof(want), "joint '%s' (%s, row %d)", m->joint_name[it.joint],
               mbs_element_kind(m->elem[it.elem].kind)->name, it.erow + 1);
    } else if (it.elem >= 0) {
      snprintf(want, sizeof(want), "%s constraint, row %d",
               mbs_element_kind(m->elem[it.elem].kind)->name, it.erow + 1);
    } else if (it.joint >= 0) {
      snprintf(want, sizeof(want), "joint '%s' (", m->joint_name[it.joint]);
    } else {
      snprintf(want, sizeof(want), "rigidity of body '%s'", m->body_name[it.body]);
    }
    ck_assert_msg(strncmp(got, want, strlen(want)) == 0, "row %d: '%s', want '%s'", it.row, got,
                  want);
  }
  int wr = -2;
  ck_assert_double_eq(mbs_constraint_violation(m, q, t, &wr), worst);
  ck_assert(wr >= 0 && wr < m->ncon);
  ck_assert_double_eq(fabs(mbs_row_value(m, wr, q, t, work2)), worst);
  mbs_constraint_describe(m, m->ncon, got, sizeof(got));
  ck_assert_str_eq(got, "none");
  ck_assert_int_eq(nelem_rows, 2); /* the motion and the augmentation */
  /* the joints' walks and the rows of no joint (rigidity, an augmented torque's) cover
   * every row once */
  int total = 0;
  double gwork[MBS_ELEM_MAXCON]; /* enough without gradients */
  for (mbs_rows_begin(&it, m, q, t, 0, gwork); mbs_rows_next(&it);) {
    total += it.joint < 0;
    ck_assert_int_eq(it.nz, 0);
    ck_assert_double_eq(it.g, mbs_row_value(m, it.row, q, t, work2));
  }
  for (int j = 0; j < m->njoint; j++) {
    for (mbs_rows_begin_joint(&it, m, j, q, t, 0, work); mbs_rows_next(&it);) {
      ck_assert_int_eq(it.joint, j);
      ck_assert_int_eq(it.nz, 0);
      total++;
    }
  }
  ck_assert_int_eq(total, m->ncon);
  free(q);
  free(qp);
  free(work);
  free(work2);
  free(G);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* 300 rigid bodies in a chain of springs (each to the one before, the first to the ground):
 * mass entries, rigidity rows and elements far beyond any first allocation */
START_TEST(test_many_bodies_grow) {
  enum { NB = 300 };
  size_t cap = 400 + (size_t)NB * 400;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  size_t len =
      (size_t)snprintf(text, cap, "mbsim: 1\ntitle: chain\ngravity: [0, 0, -9.81]\nbodies:\n");
  for (int b = 0; b < NB; b++) {
    len += (size_t)snprintf(text + len, cap - len,
                            "  - {name: b%d, type: rigid, shape: {box: [0.5, 0.2, 0.1]},"
                            " density: 100.0, position: [%d, 0, 0]}\n",
                            b, b + 1);
  }
  len += (size_t)snprintf(text + len, cap - len, "loads:\n");
  for (int b = 0; b < NB; b++) {
    if (b == 0) {
      len += (size_t)snprintf(text + len, cap - len,
                              "  - {name: s0, type: spring, bodies: [ground, b0],"
                              " points: [[0, 0, 0], [1, 0, 0]], stiffness: 100.0}\n");
    } else {
      len += (size_t)snprintf(text + len, cap - len,
                              "  - {name: s%d, type: spring, bodies: [b%d, b%d],"
                              " stiffness: 100.0, rest_length: 1.0}\n",
                              b, b - 1, b);
    }
  }
  len += (size_t)snprintf(text + len, cap - len,
                          "solver: {integrator: em, dt: 1.0e-3, t_end: 0.01}\n");
  ck_assert_uint_lt(len, cap);
  mbsDeck deck;
  mbsModel *m = compile_text(text, &deck);
  ck_assert_int_eq(m->nbody, NB);
  ck_assert_int_eq(m->nelem, 2 * NB); /* gravity and a spring per body */
  ck_assert_int_eq(m->nrow, 6 * NB);
  ck_assert_int_ge(m->nmass, 4 * NB);
  ck_assert_int_eq(m->elem_maxq, 24);
  int nq_sum = 0;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    ck_assert_ptr_eq(el->qidx, m->elem_qidx_pool + el->qadr);
    for (int i = 0; i < el->nq; i++) {
      ck_assert(el->qidx[i] >= 0 && el->qidx[i] < m->nq);
    }
    nq_sum += el->nq;
  }
  /* the last spring joins the last two bodies */
  const mbsElem *last = &m->elem[m->nelem - 1];
  ck_assert_int_eq(last->kind, MBS_ELEM_SPRING);
  ck_assert_int_eq(last->qidx[last->nq - 1], m->nq - 1);
  ck_assert_int_le(nq_sum, m->elem_qidx_n);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
  free(text);
}
END_TEST

/* an element of 36 coordinates (three rigid bodies: a three-node beam's size) is one more
 * element: no per-element limit in the model */
START_TEST(test_large_element) {
  mbsDeck deck;
  mbsModel *m = compile_text(DECK_TEXT, &deck);
  int ne = m->nelem, q_last_before = m->elem[0].qidx[m->elem[0].nq - 1];
  mbsElem proto;
  memset(&proto, 0, sizeof(proto));
  proto.kind = MBS_ELEM_GRAVITY;
  proto.body = 1;
  proto.load = proto.joint = -1;
  proto.attach[0] = m->body_attach[1];
  proto.attach[1] = -1;
  int qidx[36];
  for (int i = 0; i < 36; i++) {
    qidx[i] = (3 * m->body_node[1] + i) % m->nq; /* arm, tip, bob, gamma, arm again */
  }
  int k = mbs_model_add_element(m, &proto, qidx, 36);
  ck_assert_int_eq(k, ne);
  ck_assert_int_eq(m->nelem, ne + 1);
  ck_assert_int_eq(m->elem[k].nq, 36);
  ck_assert_int_eq(m->elem_maxq, 36);
  for (int i = 0; i < 36; i++) {
    ck_assert_int_eq(m->elem[k].qidx[i], qidx[i]);
  }
  /* the elements before it still see their coordinates */
  ck_assert_int_eq(m->elem[0].qidx[m->elem[0].nq - 1], q_last_before);
  double loc[36];
  mbs_elem_gather(&m->elem[k], m->q0, loc);
  for (int i = 0; i < 36; i++) {
    ck_assert_double_eq(loc[i], m->q0[qidx[i]]);
  }
  ck_assert_uint_ge(mbs_rows_work_size(m), (size_t)MBS_ELEM_MAXCON * 37);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

Suite *attach_suite(void) {
  Suite *s = suite_create("attach");
  TCase *tc = tcase_create("vocabulary");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_attach_table);
  tcase_add_test(tc, test_point_expression);
  tcase_add_test(tc, test_row_walk);
  tcase_add_test(tc, test_many_bodies_grow);
  tcase_add_test(tc, test_large_element);
  suite_add_tcase(s, tc);
  return s;
}
