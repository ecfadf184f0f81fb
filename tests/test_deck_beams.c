/* test_deck_beams.c: the section `beams:` through the reader and the compiler: the nodes of
 * straight beams and polylines, the section constants (against closed forms and the exact
 * Saint-Venant series of a rectangle's torsion constant), the default and given `up`, beam
 * node names NAME[i] in joints, loads and springs, the compiled nodes, coordinate names,
 * attachment frames, consistent mass matrix (its node-level blocks against l/6 [[2, 1],
 * [1, 2]] and l/30 [[4, 2, -1], [2, 16, 2], [-1, 2, 4]]), rigidity rows, gravity and
 * distributed loads (their totals), and every error with its file:line:col. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "deck_pos.h"

#define PI 3.14159265358979323846

static mbsStatus load(const char *text, mbsDeck *d, mbsError *e) {
  return mbs_deck_load_text(d, "beams.yaml", text, strlen(text), NULL, 0, e);
}


/* the deck fails in the reader (compile = 0) or the compiler with a message containing msg at
 * the occ-th occurrence of marker */
static void bad_at(const char *text, int compile, const char *marker, int occ, const char *msg) {
  mbsDeck d;
  mbsError e;
  int line = 0, col = 0;
  pos_of(text, marker, occ, &line, &col);
  mbsStatus st = load(text, &d, &e);
  if (compile) {
    ck_assert_msg(st == MBS_OK, "deck should load, got %d:%d: %s", e.line, e.col, e.msg);
    mbsModel *m = mbs_model_compile(&d, &e);
    ck_assert_ptr_null(m);
    st = e.status;
  }
  ck_assert_msg(st != MBS_OK, "expected an error '%s'", msg);
  ck_assert_msg(strstr(e.msg, msg) != NULL, "message '%s' lacks '%s'", e.msg, msg);
  ck_assert_msg(e.line == line && e.col == col, "'%s': expected %d:%d ('%s'), got %d:%d", e.msg,
                line, col, marker, e.line, e.col);
  ck_assert_str_eq(e.file, "beams.yaml");
  mbs_deck_free(&d);
}

#define HEAD "mbsim: 1\n"
#define SEC "section: {E: 2.0e11, nu: 0.3, density: 7800, rectangle: [0.02, 0.01]}"

/* Saint-Venant's torsion constant of a c x t rectangle (c >= t), the exact series:
 * J = c t^3 / 3 (1 - 192 t / (pi^5 c) sum_{n odd} tanh(n pi c / (2 t)) / n^5) */
static double torsion_series(double h, double w) {
  double c = fmax(h, w), t = fmin(h, w), s = 0.0;
  for (int n = 1; n < 200; n += 2) {
    s += tanh(n * PI * c / (2.0 * t)) / pow(n, 5);
  }
  return c * t * t * t / 3.0 * (1.0 - 192.0 * t / (pow(PI, 5) * c) * s);
}

START_TEST(test_values) {
  const char *text = HEAD "gravity: [0, 0, -9.81]\n"
                          "bodies:\n"
                          "  - {name: box, mass: 2, inertia: [1, 1, 1], position: [3, 0, 0]}\n"
                          "beams:\n"
                          "  - name: cable\n"
                          "    from: [0, 0, 0]\n"
                          "    to: [2, 0, 0]\n"
                          "    elements: 4\n"
                          "    " SEC "\n"
                          "    velocity: [0, 1, 0]\n"
                          "    damping: 0.01\n"
                          "  - name: arc\n"
                          "    order: 2\n"
                          "    nodes: [[0, 0, 1], [0, 0, 1.5], [0, 0, 2], [0, 0, 2.5], [0, 0, 3]]\n"
                          "    up: [1, 1, 0]\n"
                          "    section: {E: 1e9, G: 4e8, density: 1000, circle: 0.1,\n"
                          "              rotary_inertia: [3.5, 4.5]}\n"
                          "  - name: bar\n"
                          "    from: [0, 1, 0]\n"
                          "    to: [0, 1, 1]\n"
                          "    elements: 1\n"
                          "    section: {E: 1e9, G: 4e8, density: 10, A: 2e-4, I2: 1e-8, I3: "
                          "2e-8, J: 3e-8}\n";
  mbsDeck d;
  mbsError e;
  ck_assert_msg(load(text, &d, &e) == MBS_OK, "%d:%d: %s", e.line, e.col, e.msg);
  ck_assert_int_eq(d.nbeam, 3);
  ck_assert_int_eq(d.nbeam_node, 5 + 5 + 2);
  const mbsDeckBeam *c = &d.beams[0], *a = &d.beams[1], *b = &d.beams[2];
  /* straight: evenly spaced nodes, d1 = x, default up = z (the world axis least parallel) */
  ck_assert_int_eq(c->nnode, 5);
  ck_assert_int_eq(c->nelem, 4);
  ck_assert_int_eq(c->order, 1);
  ck_assert_int_eq(c->node0, 0);
  ck_assert_double_eq_tol(c->pos[3 * 3], 1.5, 1e-15);
  ck_assert_double_eq_tol(c->length, 2.0, 1e-14);
  static const double Rx[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0};
  for (int k = 0; k < 9; k++) {
    ck_assert_double_eq_tol(c->R[9 * 4 + k], Rx[k], 1e-15);
  }
  /* rectangle [h along up, w]: A = h w, I2 = h w^3/12, I3 = w h^3/12, G = E / (2 (1 + nu)) */
  double h = 0.02, w = 0.01;
  ck_assert_double_eq_tol(c->A, h * w, 1e-18);
  ck_assert_double_eq_tol(c->I2, h * w * w * w / 12, 1e-22);
  ck_assert_double_eq_tol(c->I3, w * h * h * h / 12, 1e-22);
  ck_assert_double_eq_tol(c->G, 2.0e11 / 2.6, 1.0);
  ck_assert_double_eq_tol(c->shear_factor, 5.0 / 6.0, 1e-15);
  double Jx = torsion_series(h, w);
  ck_assert_msg(fabs(c->J - Jx) < 5e-3 * Jx, "J %g, series %g", c->J, Jx);
  double Jsq = torsion_series(1, 1), Jsq_roark = 0.140833333; /* Roark: a = b: 2.2533 a^4 */
  ck_assert_msg(fabs(Jsq - 0.1406) < 1e-3, "series of a square: %g", Jsq);
  ck_assert_msg(fabs(Jsq_roark - Jsq) < 3e-3 * Jsq, "square");
  ck_assert_double_eq(c->velocity[1], 1.0);
  ck_assert_double_eq(c->damping, 0.01);
  /* order 2 polyline along z, up [1, 1, 0] normalised; circle: pi r^4 / 4, / 2 */
  ck_assert_int_eq(a->nnode, 5);
  ck_assert_int_eq(a->nelem, 2);
  ck_assert_int_eq(a->node0, 5);
  ck_assert_double_eq_tol(a->length, 2.0, 1e-14);
  double s2 = sqrt(0.5);
  ck_assert_double_eq_tol(a->R[9 * 2 + 6], 1.0, 1e-15); /* d1 = z */
  ck_assert_double_eq_tol(a->R[9 * 2 + 1], s2, 1e-15);  /* d2 x */
  ck_assert_double_eq_tol(a->R[9 * 2 + 4], s2, 1e-15);  /* d2 y */
  ck_assert_double_eq_tol(a->A, PI * 0.01, 1e-15);
  ck_assert_double_eq_tol(a->I2, PI * 1e-4 / 4, 1e-18);
  ck_assert_double_eq_tol(a->J, PI * 1e-4 / 2, 1e-18);
  ck_assert_double_eq_tol(a->shear_factor, 6.0 / 7.0, 1e-15);
  ck_assert_double_eq(a->G, 4e8);
  /* rotary inertia: given apart, or density I2, density I3 */
  ck_assert_double_eq(a->rotary[0], 3.5);
  ck_assert_double_eq(a->rotary[1], 4.5);
  ck_assert_double_eq_tol(c->rotary[0], 7800.0 * c->I2, 1e-18);
  ck_assert_double_eq_tol(c->rotary[1], 7800.0 * c->I3, 1e-18);
  /* along z the default up is y (x and y tie with z excluded, y first) */
  ck_assert_double_eq_tol(b->R[4], 1.0, 1e-15);
  ck_assert_double_eq(b->J, 3e-8);
  ck_assert_double_eq(b->shear_factor, 1.0);
  ck_assert_int_eq(b->node0, 10);
  mbs_deck_free(&d);
}
END_TEST

/* the compiled model: nodes, names, frames, mass, rigidity, gravity */
START_TEST(test_compiled) {
  const char *text = HEAD "gravity: [0, 0, -9.81]\n"
                          "beams:\n"
                          "  - {name: c1, from: [0, 0, 0], to: [3, 0, 0], elements: 3, " SEC "}\n"
                          "  - {name: c2, order: 2, from: [0, 1, 0], to: [0, 1, 2], elements: 2,\n"
                          "     " SEC "}\n"
                          "loads:\n"
                          "  - {name: wind, type: distributed_force, beam: c2, value: [1, 2, "
                          "3],\n"
                          "     profile: {ramp: [0, 1]}}\n";
  mbsDeck d;
  mbsError e;
  ck_assert_msg(load(text, &d, &e) == MBS_OK, "%d:%d: %s", e.line, e.col, e.msg);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%s", e.msg);
  ck_assert_int_eq(m->nbeam, 2);
  ck_assert_int_eq(m->nnode, 4 * (4 + 5));
  ck_assert_int_eq(m->nrow, 6 * 9);
  ck_assert_int_eq(m->nattach, 1 + 9);
  double rhoA = 7800 * 2e-4, rhoI2 = 7800 * 0.02 * 1e-6 / 12, rhoI3 = 7800 * 0.01 * 8e-6 / 12;
  const mbsBeam *b1 = &m->beam[0], *b2 = &m->beam[1];
  ck_assert_double_eq_tol(b1->rho[0], rhoA, 1e-15);
  ck_assert_double_eq_tol(b1->rho[1], rhoI2, 1e-18);
  ck_assert_double_eq_tol(b1->rho[2], rhoI3, 1e-18);
  ck_assert_double_eq_tol(b1->k[0], 2e11 * 2e-4, 1e-3);
  ck_assert_double_eq_tol(b1->k[1], 5.0 / 6.0 * 2e11 / 2.6 * 2e-4, 1e-3);
  ck_assert_double_eq_tol(b1->k[4], 2e11 * rhoI2 / 7800, 1e-9);
  ck_assert_double_eq_tol(b1->k[5], 2e11 * rhoI3 / 7800, 1e-9);
  ck_assert_int_eq(b1->nnode, 4);
  ck_assert_int_eq(b2->nnode, 5);
  ck_assert_int_eq(b2->node0, 16);
  ck_assert_int_eq(b2->attach0, 5);
  ck_assert_double_eq_tol(b2->length, 2.0, 1e-14);
  /* names and frames */
  ck_assert_str_eq(mbs_model_coord_name(m, 3 * (b2->node0 + 4 * 3)), "c2[3].phi.x");
  ck_assert_str_eq(mbs_model_coord_name(m, 3 * (b2->node0 + 4 * 3 + 2) + 2), "c2[3].d2.z");
  ck_assert_str_eq(m->attach_name[b2->attach0 + 4], "c2[4]");
  ck_assert_int_eq(m->attach_kind[b2->attach0 + 4], MBS_ATTACH_BEAM_NODE);
  ck_assert_int_eq(m->attach_node[b2->attach0 + 4], b2->node0 + 16);
  ck_assert_int_eq(m->node_position[b2->node0 + 4], 1);
  ck_assert_int_eq(m->node_position[b2->node0 + 5], 0);
  /* the point expression of a beam node's frame: phi + c^i d_i */
  double P[3] = {0.1, 1.2, 1.3}, cc[3], x[3];
  mbs_attach_coords(m, b2->attach0 + 3, P, cc);
  mbs_attach_point(m, b2->attach0 + 3, cc, m->q0, x);
  for (int k = 0; k < 3; k++) {
    ck_assert_double_eq_tol(x[k], P[k], 1e-15);
  }
  /* elements: beam kind on the right coordinates */
  const mbsElem *el = &m->elem[b2->elem0 + 1];
  ck_assert_int_eq(el->kind, MBS_ELEM_BEAM);
  ck_assert_int_eq(el->nq, 36);
  ck_assert_int_eq(el->qidx[0], 3 * (b2->node0 + 4 * 2));
  ck_assert_int_eq(el->qidx[35], 3 * (b2->node0 + 4 * 4) + 11);
  ck_assert_int_eq(el->iparam[0], 2);
  /* the node-level mass: order 1, l = 1: 1/6 [[2, 1], [1, 2]]; order 2, l = 1: 1/30 [[4, 2,
   * -1], [2, 16, 2], [-1, 2, 4]]; summed at shared nodes; d1 none */
  double *M = calloc((size_t)m->nnode * (size_t)m->nnode, sizeof(double));
  ck_assert_ptr_nonnull(M);
  for (int k = 0; k < m->nmass; k++) {
    M[m->mass_a[k] * m->nnode + m->mass_b[k]] += m->mass_val[k];
  }
  int n1 = b1->node0, n2 = b2->node0, nn = m->nnode;
  ck_assert_double_eq_tol(M[n1 * nn + n1], rhoA * 2 / 6, 1e-14);
  ck_assert_double_eq_tol(M[(n1 + 4) * nn + n1 + 4], rhoA * 4 / 6, 1e-14);
  ck_assert_double_eq_tol(M[n1 * nn + n1 + 4], rhoA / 6, 1e-14);
  ck_assert_double_eq_tol(M[(n1 + 2) * nn + n1 + 6], rhoI3 / 6, 1e-20);
  ck_assert_double_eq_tol(M[(n1 + 3) * nn + n1 + 7], rhoI2 / 6, 1e-20);
  ck_assert_double_eq(M[(n1 + 1) * nn + n1 + 1], 0.0);
  ck_assert_double_eq_tol(M[n2 * nn + n2], rhoA * 4 / 30, 1e-14);
  ck_assert_double_eq_tol(M[(n2 + 4) * nn + n2 + 4], rhoA * 16 / 30, 1e-14);
  ck_assert_double_eq_tol(M[(n2 + 8) * nn + n2 + 8], rhoA * 8 / 30, 1e-14);
  ck_assert_double_eq_tol(M[n2 * nn + n2 + 8], -rhoA / 30, 1e-14);
  ck_assert_double_eq_tol(M[(n2 + 4) * nn + n2 + 8], rhoA * 2 / 30, 1e-14);
  ck_assert_double_eq_tol(M[(n2 + 8) * nn + n2 + 12], rhoA * 2 / 30, 1e-14);
  /* totals: phi blocks sum to rho A L, d2 to rho I3 L, d3 to rho I2 L */
  double tot[4] = {0, 0, 0, 0};
  for (int k = 0; k < m->nmass; k++) {
    int a = m->mass_a[k], b = m->mass_b[k];
    if (a >= n2 && b >= n2) {
      tot[(a - n2) % 4] += (a == b ? 1.0 : 2.0) * m->mass_val[k];
    }
  }
  ck_assert_double_eq_tol(tot[0], rhoA * 2, 1e-13);
  ck_assert_double_eq(tot[1], 0.0);
  ck_assert_double_eq_tol(tot[2], rhoI3 * 2, 1e-18);
  ck_assert_double_eq_tol(tot[3], rhoI2 * 2, 1e-18);
  free(M);
  /* gravity: rho A g int N_a ds per node, summing to the beams' weight; the distributed load
   * sums to value L */
  double wgt = 0.0, fl[3] = {0, 0, 0};
  int ngrav = 0, nforce = 0;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *x2 = &m->elem[k];
    if (x2->kind == MBS_ELEM_GRAVITY) {
      ck_assert_int_eq(x2->nq, 3);
      wgt += x2->param[3];
      ngrav++;
    } else if (x2->kind == MBS_ELEM_FORCE) {
      ck_assert_int_eq(x2->nq, 3);
      ck_assert_int_eq(x2->load, 0);
      ck_assert_int_ge(x2->qidx[0], 3 * n2);
      for (int c2 = 0; c2 < 3; c2++) {
        fl[c2] += x2->param[c2];
      }
      nforce++;
    }
  }
  ck_assert_int_eq(ngrav, 9);
  ck_assert_int_eq(nforce, 5);
  ck_assert_double_eq_tol(wgt, rhoA * 5, 1e-13);
  ck_assert_double_eq_tol(fl[0], 2.0, 1e-14);
  ck_assert_double_eq_tol(fl[1], 4.0, 1e-14);
  ck_assert_double_eq_tol(fl[2], 6.0, 1e-14);
  /* the quadratic mid node gets 2/3 of its element's load, an end node 1/6 */
  ck_assert_double_eq_tol(m->elem[m->nelem - 4].param[0], 2.0 / 3.0, 1e-14);
  ck_assert_double_eq_tol(m->elem[m->nelem - 5].param[0], 1.0 / 6.0, 1e-14);
  mbs_model_destroy(m);
  mbs_deck_free(&d);
}
END_TEST

/* beam node names in joints, loads and springs */
START_TEST(test_node_names) {
  const char *text =
      HEAD "bodies:\n"
           "  - {name: box, mass: 2, inertia: [1, 1, 1], position: [3, 0, 0]}\n"
           "beams:\n"
           "  - {name: cable, from: [0, 0, 0], to: [2, 0, 0], elements: 4, " SEC "}\n"
           "joints:\n"
           "  - {name: pin, type: spherical, bodies: [ground, \"cable[0]\"], "
           "point: [0, 0, 0]}\n"
           "  - {name: weld, type: fixed, bodies: [\"cable[-1]\", box], point: [2, "
           "0, 0]}\n"
           "  - {name: rope, type: distance, bodies: [\"cable[2]\", box]}\n"
           "loads:\n"
           "  - {name: push, type: force, body: \"cable[-2]\", value: [0, 0, 1]}\n"
           "  - {name: twist, type: torque, body: \"cable[1]\", value: [1, 0, 0],\n"
           "     frame: body}\n"
           "  - {name: sp, type: spring, bodies: [box, \"cable[3]\"], stiffness: "
           "10}\n";
  mbsDeck d;
  mbsError e;
  ck_assert_msg(load(text, &d, &e) == MBS_OK, "%d:%d: %s", e.line, e.col, e.msg);
  ck_assert_int_eq(d.joints[0].body[1], 1 + 0);
  ck_assert_int_eq(d.joints[1].body[0], 1 + 4);
  ck_assert_int_eq(d.loads[0].body, 1 + 3);
  ck_assert_int_eq(d.loads[2].bodies[1], 1 + 3);
  /* the distance joint's and spring's default points: the node's position */
  ck_assert_double_eq_tol(d.joints[2].points[0][0], 1.0, 1e-15);
  ck_assert_double_eq_tol(d.loads[2].points[1][0], 1.5, 1e-15);
  int node = -1;
  ck_assert_int_eq(mbs_deck_ref_beam(&d, 1 + 4, &node), 0);
  ck_assert_int_eq(node, 4);
  ck_assert_int_eq(mbs_deck_ref_beam(&d, 0, &node), -1);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%s", e.msg);
  ck_assert_int_eq(m->joint_attach[0 * 2 + 1], m->beam[0].attach0);
  ck_assert_int_eq(m->joint_attach[1 * 2 + 0], m->beam[0].attach0 + 4);
  ck_assert_int_eq(m->nrow, 6 + 6 * 5 + 3 + 6 + 1);
  /* every joint row holds at t = 0 */
  for (int r = 0; r < m->nrow; r++) {
    ck_assert_double_eq_tol(mbs_con_eval(&m->con[r], m->q0, NULL), 0.0, 1e-14);
  }
  mbs_model_destroy(m);
  mbs_deck_free(&d);
}
END_TEST

/* every error at file:line:col */
START_TEST(test_errors) {
#define B1 HEAD "beams:\n  - name: cable\n"
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n    colour: red\n    " SEC
            "\n",
         0, "colour", 0, "unknown key 'colour'");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1, circle: 0.1, Young: 3}\n",
         0, "Young", 0, "unknown key 'Young'");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {nu: 0.3, density: 1, circle: 0.1}\n",
         0, "{nu", 0, "missing 'E'");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 0, nu: 0.3, density: 1, circle: 0.1}\n",
         0, "0, nu", 0, "section.E must be > 0");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.5, density: 1, circle: 0.1}\n",
         0, "0.5,", 0, "nu must be in (-1, 0.5)");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: -1, density: 1, circle: 0.1}\n",
         0, "-1,", 0, "nu must be in (-1, 0.5)");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, G: 1, nu: 0.2, density: 1, circle: 0.1}\n",
         0, "0.2", 0, "give G or nu, not both");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, density: 1, circle: 0.1}\n",
         0, "{E", 0, "give G [Pa] or nu");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, circle: 0.1}\n",
         0, "{E", 0, "missing 'density'");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1, rectangle: [1, 1], circle: 0.1}\n",
         0, "0.1}", 0, "give one of rectangle, circle or A, I2, I3, J");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1, circle: 0.1, J: 3}\n",
         0, "J:", 0, "give one of rectangle, circle or A, I2, I3, J");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1, A: 1, I2: 1, I3: 1}\n",
         0, "{E", 0, "missing 'J'");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1}\n",
         0, "{E", 0, "missing the geometry");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1, rectangle: [1, -1]}\n",
         0, "-1]", 0, "section.rectangle[1] must be > 0");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1, circle: 1, rotary_inertia: [1, 0]}\n",
         0, "0]}", 0, "section.rotary_inertia[1] must be > 0");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n"
            "    section: {E: 1, nu: 0.3, density: 1, circle: 1, rotary_inertia: 2}\n",
         0, "2}", 0, "section.rotary_inertia: expected [rho I2, rho I3]");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 0\n    " SEC "\n", 0, "0\n    s",
         0, "elements must be in 1");
  bad_at(B1 "    from: [1, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n    " SEC "\n", 0,
         "[1, 0, 0]", 1, "to equals from");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n    up: [2, 0, 0]\n    " SEC
            "\n",
         0, "[2, 0, 0]", 0, "up is parallel to the beam axis at node 0");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 2\n    order: 3\n    " SEC "\n",
         0, "3\n", 0, "order must be 1");
  bad_at(B1 "    order: 2\n    nodes: [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]]\n    " SEC "\n",
         0, "[[", 0, "4 nodes do not make whole elements of order 2");
  bad_at(B1 "    nodes: [[0, 0, 0], [1, 0, 0], [2, 0, 0]]\n    elements: 3\n    " SEC "\n", 0,
         "3\n", 0, "3 nodes of order 1 make 2 elements, not 3");
  bad_at(B1 "    nodes: [[0, 0, 0], [1, 0, 0], [1, 0, 0]]\n    " SEC "\n", 0, "[1, 0, 0]]", 0,
         "nodes[2] coincides with nodes[1]");
  bad_at(B1 "    nodes: [[0, 0, 0], [1, 0, 0]]\n    from: [0, 0, 0]\n    " SEC "\n", 0, "[[", 0,
         "give either from/to or nodes");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    " SEC "\n", 0, "name: cable", 0,
         "missing required key 'elements'");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 1\n", 0, "name: cable", 0,
         "missing required key 'section'");
  bad_at(B1 "    from: [0, 0, 0]\n    to: [1, 0, 0]\n    elements: 1\n    damping: -1\n    " SEC
            "\n",
         0, "-1", 0, "damping must be >= 0");
  bad_at(HEAD "beams:\n  - {name: \"cab[le\", from: [0, 0, 0], to: [1, 0, 0], elements: 1, " SEC
              "}\n",
         0, "\"cab", 0, "may only contain letters");
  bad_at(HEAD "beams:\n  - {name: \"c*\", from: [0, 0, 0], to: [1, 0, 0], elements: 1, " SEC "}\n",
         0, "\"c*", 0, "may only contain letters");
  bad_at(HEAD "bodies:\n  - {name: rope, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n"
              "beams:\n  - {name: rope, from: [0, 0, 0], to: [1, 0, 0], elements: 1, " SEC "}\n",
         0, "rope, from", 0, "beam name 'rope' is the name of a body (at 3:5)");
  bad_at(HEAD "beams:\n  - {name: r, from: [0, 0, 0], to: [1, 0, 0], elements: 1, " SEC "}\n"
              "  - {name: r, from: [0, 0, 0], to: [1, 0, 0], elements: 1, " SEC "}\n",
         0, "r, from", 1, "duplicate beam name 'r' (first at 3:5)");
  /* node names */
#define B2                                                                                         \
  HEAD "bodies:\n  - {name: box, mass: 1, inertia: [1, 1, 1], position: [5, 0, 0]}\n"              \
       "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC "}\n"
  bad_at(B2 "joints:\n  - {name: j, type: spherical, bodies: [ground, \"c[3]\"], point: [0, 0, "
            "0]}\n",
         0, "\"c[3]", 0, "beam 'c' has 3 nodes, so its index is in 0 .. 2 (or -3 .. -1");
  bad_at(B2 "joints:\n  - {name: j, type: spherical, bodies: [ground, \"c[-4]\"], point: [0, 0, "
            "0]}\n",
         0, "\"c[-4]", 0, "has 3 nodes");
  bad_at(B2 "joints:\n  - {name: j, type: spherical, bodies: [ground, \"d[0]\"], point: [0, 0, "
            "0]}\n",
         0, "\"d[0]", 0, "beam 'd' is not defined");
  bad_at(B2 "loads:\n  - {name: f, type: force, body: \"box[0]\", value: [0, 0, 1]}\n", 0,
         "\"box[0]", 0, "'box' is a body, not a beam; name it 'box'");
  bad_at(B2 "loads:\n  - {name: f, type: force, body: \"c[x]\", value: [0, 0, 1]}\n", 0, "\"c[x]",
         0, "the index of a beam node is an integer");
  bad_at(B2 "loads:\n  - {name: f, type: spring, bodies: [\"c[0]\", \"c[0]\"], stiffness: 1}\n", 0,
         "[\"c[0]", 0, "the two bodies must differ");
  bad_at(B2 "loads:\n  - {name: f, type: distributed_force, beam: d, value: [0, 0, 1]}\n", 0, "d,",
         0, "beam 'd' is not defined");
  bad_at(B2 "loads:\n  - {name: f, type: distributed_force, beam: c}\n", 0, "{name: f", 0,
         "missing required key 'value'");
  bad_at(B2 "loads:\n  - {name: f, type: distributed_force, beam: c, value: [1, 0, 0], body: box}"
            "\n",
         0, "body:", 0, "a distributed_force takes no 'body'");
  /* contact geometry on beams: collision: {sphere: r} */
  bad_at(B2 "ground: {collision: [{plane: {normal: [0, 0, 1], point: [0, 0, -1]}}]}\n"
            "contacts:\n  - {between: [\"c[1]\", ground]}\n",
         0, "\"c[1]", 0,
         "between[0]: beam 'c' (node 'c[1]') has no collision geometry; give the beam "
         "`collision: {sphere: r}`");
  bad_at(B2 "ground: {collision: [{plane: {normal: [0, 0, 1], point: [0, 0, -1]}}]}\n"
            "contacts:\n  - {between: [ground, \"c*\"]}\n",
         0, "\"c*", 0, "between[1]: beam 'c' (matched by 'c*') has no collision geometry");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ",\n     collision: {sphere: 0}}\n",
         0, "0}}", 0, "collision.sphere must be > 0");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ",\n     collision: {sphere: -0.01}}\n",
         0, "-0.01", 0, "collision.sphere must be > 0");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ",\n     collision: {cylinder: 0.01}}\n",
         0, "cylinder", 0,
         "collision: unknown key 'cylinder'; a beam's contact geometry is {sphere: r}, a "
         "sphere of radius r on every node, or {capsule: r}");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ",\n     collision: {sphere: 0.01, capsule: 0.01}}\n",
         0, "capsule", 0, "collision: give either sphere or capsule, not both");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ",\n     collision: {capsule: -1}}\n",
         0, "-1}", 0, "collision.capsule must be > 0");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ",\n     collision: [{sphere: 0.01}]}\n",
         0, "[{sphere", 0, "collision: expected a mapping {sphere: r}");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ",\n     collision: {}}\n",
         0, "{}}", 0, "collision: missing 'sphere' or 'capsule'");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ", collision: {sphere: 0.01}}\n"
              "ground: {collision: [{plane: {normal: [0, 0, 1], point: [0, 0, -1]}}]}\n"
              "contacts:\n  - {between: [\"c[5]\", ground]}\n",
         0, "\"c[5]", 0, "beam 'c' has 3 nodes");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ", collision: {capsule: 0.01}}\n"
              "ground: {collision: [{plane: {normal: [0, 0, 1], point: [0, 0, -1]}}]}\n"
              "contacts:\n  - {between: [\"c[-1]\", ground]}\n",
         0, "\"c[-1]", 0,
         "'c[-1]' is the last node of beam 'c', whose capsules run along its segments: NAME[i] "
         "names the segment from node i to i + 1, so i is in 0 .. 1 (or -3 .. -2)");
  /* a node sphere overlapping the ground at t = 0 (compile: the pair and the depth) */
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 2, " SEC
              ", collision: {sphere: 0.01}}\n"
              "ground: {collision: [{plane: {normal: [0, 0, 1], point: [0, 0, 0]}}]}\n"
              "contacts:\n  - {between: [c, ground]}\n",
         1, "{sphere: 0.01}", 0, "overlap");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 1,\n"
              "     section: {E: 1e200, nu: 0.3, density: 1, rectangle: [1e150, 1]}}\n",
         0, "[1e150, 1]", 0, "the second moment I3 [m^4] is inf, outside [1e-150, 1e+150]");
  /* section values the solver cannot resolve, at the value (before: exit 2 at t = 0) */
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 1,\n"
              "     section: {E: 2e11, nu: 0.3, density: 1, rectangle: [1e-200, 1e-200]}}\n",
         0, "[1e-200, 1e-200]", 0, "the area A [m^2] is 0, outside");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 1,\n"
              "     section: {E: 2e11, nu: 0.3, density: 1, rectangle: [0.1, 0.1], "
              "shear_factor: 1e9}}\n",
         0, "1e9}", 0, "section.shear_factor: 1e+09 is above 1e+08");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1, 0, 0], elements: 1, damping: 2e6,\n"
              "     section: {E: 2e11, nu: 0.3, density: 1, rectangle: [0.1, 0.1]}}\n",
         0, "2e6,", 0, "damping: 2e+06 s is above 1e+06 s");
  bad_at(HEAD "beams:\n  - {name: c, from: [0, 0, 0], to: [1e300, 0, 0], elements: 1,\n"
              "     section: {E: 2e11, nu: 0.3, density: 1, rectangle: [0.1, 0.1]}}\n",
         0, "[1e300, 0, 0]", 0, "to: [1e+300, 0, 0] is too far from the origin");
  /* a deck of beams only is fine; one without bodies and beams is not */
  bad_at(HEAD "bodies: []\n", 0, "[]", 0, "a deck needs at least one body or beam");
#undef B1
#undef B2
}
END_TEST

Suite *deck_beams_suite(void) {
  Suite *s = suite_create("deck_beams");
  TCase *tc = tcase_create("deck_beams");
  tcase_add_test(tc, test_values);
  tcase_add_test(tc, test_compiled);
  tcase_add_test(tc, test_node_names);
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return s;
}
