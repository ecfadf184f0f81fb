/* test_deck_contacts.c: the contact keys of a deck (collision, ground, contacts,
 * solver.moreau) through the reader and the compiler: every shape kind with its placement,
 * the candidate pairs the patterns give (sorted, each once, the ground's shape as b), the
 * contact point bound, the integrator auto picks, --set overrides and parameters, and every
 * error with the file:line:col of the offending value (found in the deck text here). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/contact.h"
#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "deck_pos.h"

#define TOL 1e-12
#define PI 3.14159265358979323846

/* ---------------------------------------------------------------------------------------- */
/* helpers */

static mbsStatus load(const char *text, const mbsOverride *ov, int nov, mbsDeck *d, mbsError *e) {
  return mbs_deck_load_text(d, "contacts.yaml", text, strlen(text), ov, nov, e);
}


/* the deck must fail in the reader (or, compile = 1, in the compiler) with status MBS_ERR_DECK
 * at the occ-th occurrence of marker (NULL: line 0, col 0) and a message containing msg */
static void bad_at(const char *text, const mbsOverride *ov, int nov, int compile,
                   const char *marker, int occ, const char *msg) {
  mbsDeck d;
  mbsError e;
  int line = 0, col = 0;
  if (marker) {
    pos_of(text, marker, occ, &line, &col);
  }
  mbsStatus st = load(text, ov, nov, &d, &e);
  if (compile) {
    ck_assert_msg(st == MBS_OK, "deck should load, got %d:%d: %s", e.line, e.col, e.msg);
    mbsModel *m = mbs_model_compile(&d, &e);
    ck_assert_ptr_null(m);
    st = e.status;
  }
  ck_assert_msg(st == MBS_ERR_DECK, "expected a deck error, got %d (%d:%d: %s)", st, e.line, e.col,
                e.msg);
  ck_assert_msg(strstr(e.msg, msg) != NULL, "message '%s' lacks '%s'", e.msg, msg);
  ck_assert_msg(e.line == line && e.col == col, "expected %d:%d ('%s'), got %d:%d (%s)", line, col,
                marker ? marker : "", e.line, e.col, e.msg);
  ck_assert_str_eq(e.file, "contacts.yaml");
  if (!compile) {
    ck_assert_ptr_null(d.bodies);
    ck_assert_ptr_null(d.contacts);
    ck_assert_ptr_null(d.ground_shapes);
  }
  mbs_deck_free(&d);
}

static void assert_vec(const double *got, const double *want, int n, double tol) {
  for (int k = 0; k < n; k++) {
    ck_assert_msg(fabs(got[k] - want[k]) <= tol, "component %d: got %.17g, want %.17g", k, got[k],
                  want[k]);
  }
}

/* rotation by angle about a unit coordinate axis (0, 1, 2), written out */
static void rot_axis(double R[9], int axis, double a) {
  double c = cos(a), s = sin(a);
  memset(R, 0, 9 * sizeof(double));
  int i = (axis + 1) % 3, j = (axis + 2) % 3;
  R[4 * axis] = 1.0;
  R[3 * i + i] = c;
  R[3 * i + j] = -s;
  R[3 * j + i] = s;
  R[3 * j + j] = c;
}

static void mat_mul(double R[9], const double A[9], const double B[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      R[3 * i + j] = 0;
      for (int k = 0; k < 3; k++) {
        R[3 * i + j] += A[3 * i + k] * B[3 * k + j];
      }
    }
  }
}

/* shape s's centre and axes in the world at the initial state: the frame point c and the
 * directions C on the frame's directors (the ground, fixed bodies and point masses: as they
 * are) */
static void world_pose(const mbsModel *m, const mbsShape *s, double x[3], double W[9]) {
  mbs_attach_point(m, s->attach, s->c, m->q0, x);
  int n0 = m->attach_node[s->attach];
  if (n0 < 0 || m->attach_kind[s->attach] != MBS_ATTACH_DIRECTORS) {
    memcpy(W, s->C, sizeof(s->C));
    return;
  }
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 3; i++) {
      W[3 * r + i] = 0;
      for (int j = 0; j < 3; j++) {
        W[3 * r + i] += s->C[3 * j + i] * m->q0[3 * (n0 + 1 + j) + r];
      }
    }
  }
}

static int shape_index(const mbsModel *m, const char *name) {
  for (int k = 0; k < m->nshape; k++) {
    if (strcmp(m->shape[k].name, name) == 0) {
      return k;
    }
  }
  ck_abort_msg("no shape '%s'", name);
  return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* a good deck with every shape kind */

static const char *good =
    "mbsim: 1\n"
    "parameters: {r: 0.05, mu: 0.1}\n"
    "bodies:\n"
    "  - name: die1\n"
    "    shape: {box: [0.1, 0.2, 0.3]}\n"
    "    density: 1000\n"
    "    position: [0, 0, 1]\n"
    "    reference_point: [0.01, 0.02, 0.03]\n"
    "    orientation: {axis: [0, 0, 1], angle_deg: 90}\n"
    "  - name: die2\n"
    "    shape: {box: [0.1, 0.1, 0.1]}\n"
    "    density: 1000\n"
    "    position: [1, 0, 1]\n"
    "    orientation: {axis: [0, 0, 1], angle_deg: 90}\n"
    "    collision:\n"
    "      - {sphere: $r, offset: [0.1, 0, 0]}\n"
    "      - {capsule: {radius: 0.02, length: 0.3}, orientation: {axis: [1, 0, 0], angle_deg: "
    "90}}\n"
    "      - {points: [[0.1, 0, 0], [0, 0.2, 0], [0, 0, -0.3]]}\n"
    "  - {name: ball, type: point, mass: 1, position: [2, 0, 1], collision: [{sphere: 0.1}]}\n"
    "  - name: post\n"
    "    shape: {sphere: 0.2}\n"
    "    density: 100\n"
    "    position: [3, 0, 0]\n"
    "    orientation: {axis: [0, 0, 1], angle_deg: 90}\n"
    "    fixed: true\n"
    "    collision: [{box: [0.1, 0.2, 0.3], offset: [0.1, 0, 0]}]\n"
    "  - {name: rod, shape: {cylinder: {radius: 0.1, length: 1}}, density: 1, position: [5, 0, "
    "0]}\n"
    "ground:\n"
    "  collision:\n"
    "    - {name: floor, plane: {point: [0, 0, -1], normal: [0, 0, 2]}}\n"
    "    - {name: wall, box: [0.02, 1.0, 0.2], offset: [0.5, 0, 0.1],\n"
    "       orientation: {axis: [0, 0, 1], angle: 0.1}}\n"
    "contacts:\n"
    "  - name: dice_floor\n"
    "    between: [die*, ground]\n"
    "    restitution: 0.5\n"
    "    friction: \"3 * $mu\"\n"
    "  - {name: dice, between: [die*, die*], law: penalty, stiffness: 1e5, damping: 10}\n"
    "  - {between: [ball, post], margin: 0.01}\n"
    "  - {name: again, between: [ground, die1], friction: 0.9}\n"
    "  - {name: static, between: [post, ground]}\n"
    "solver:\n"
    "  moreau: {theta: 0.75, variant: explicit, contact_tolerance: 1e-8, contact_iterations: "
    "50}\n";

START_TEST(test_deck_values) {
  mbsDeck d;
  mbsError e;
  ck_assert_int_eq(load(good, NULL, 0, &d, &e), MBS_OK);

  /* bodies: die1 takes its box shape, die2 its list, the point mass a sphere, rod none */
  ck_assert_int_eq(d.bodies[0].ncollision, 1);
  ck_assert_int_eq(d.bodies[0].collision[0].kind, MBS_SHAPE_BOX);
  assert_vec(d.bodies[0].collision[0].size, (double[]){0.1, 0.2, 0.3}, 3, 0);
  assert_vec(d.bodies[0].collision[0].orientation, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9, 0);
  ck_assert_int_eq(d.bodies[1].ncollision, 3);
  ck_assert_int_eq(d.bodies[1].collision[0].kind, MBS_SHAPE_SPHERE);
  ck_assert_double_eq(d.bodies[1].collision[0].size[0], 0.05);
  assert_vec(d.bodies[1].collision[0].offset, (double[]){0.1, 0, 0}, 3, 0);
  int line, col;
  pos_of(good, "{sphere: $r", 0, &line, &col);
  ck_assert_int_eq(d.bodies[1].collision[0].mark.line, line);
  ck_assert_int_eq(d.bodies[1].collision[0].mark.col, col);
  ck_assert_int_eq(d.bodies[1].collision[1].kind, MBS_SHAPE_CAPSULE);
  assert_vec(d.bodies[1].collision[1].size, (double[]){0.02, 0.3}, 2, 0);
  double Rx[9];
  rot_axis(Rx, 0, PI / 2);
  assert_vec(d.bodies[1].collision[1].orientation, Rx, 9, TOL);
  ck_assert_int_eq(d.bodies[1].collision[2].kind, MBS_SHAPE_POINTS);
  ck_assert_int_eq(d.bodies[1].collision[2].npts, 3);
  assert_vec(d.bodies[1].collision[2].pts, (double[]){0.1, 0, 0, 0, 0.2, 0, 0, 0, -0.3}, 9, 0);
  ck_assert_int_eq(d.bodies[2].ncollision, 1);
  ck_assert_int_eq(d.bodies[3].ncollision, 1);
  ck_assert_int_eq(d.bodies[3].collision[0].kind, MBS_SHAPE_BOX);
  ck_assert_int_eq(d.bodies[4].ncollision, 0);

  /* ground */
  ck_assert_int_eq(d.nground_shape, 2);
  ck_assert_str_eq(d.ground_shapes[0].name, "floor");
  ck_assert_int_eq(d.ground_shapes[0].kind, MBS_SHAPE_PLANE);
  assert_vec(d.ground_shapes[0].normal, (double[]){0, 0, 1}, 3, 0);
  assert_vec(d.ground_shapes[0].offset, (double[]){0, 0, -1}, 3, 0);
  ck_assert_str_eq(d.ground_shapes[1].name, "wall");

  /* contacts: names, defaults, parameters and expressions */
  ck_assert_int_eq(d.ncontact, 5);
  const mbsDeckContact *c = d.contacts;
  ck_assert_str_eq(c[0].name, "dice_floor");
  ck_assert_str_eq(c[0].between[0], "die*");
  ck_assert_str_eq(c[0].between[1], "ground");
  pos_of(good, "die*, ground", 0, &line, &col);
  ck_assert_int_eq(c[0].between_mark[0].line, line);
  ck_assert_int_eq(c[0].between_mark[0].col, col);
  pos_of(good, "ground]", 0, &line, &col);
  ck_assert_int_eq(c[0].between_mark[1].line, line);
  ck_assert_int_eq(c[0].between_mark[1].col, col);
  ck_assert_int_eq(c[0].law, MBS_CONTACT_UNILATERAL);
  ck_assert_double_eq(c[0].restitution, 0.5);
  ck_assert_double_eq_tol(c[0].friction, 0.3, TOL);
  ck_assert_double_eq(c[0].margin, 1e-3);
  ck_assert_int_eq(c[1].law, MBS_CONTACT_PENALTY);
  ck_assert_double_eq(c[1].stiffness, 1e5);
  ck_assert_double_eq(c[1].damping, 10);
  ck_assert_double_eq(c[1].friction_velocity, 1e-3);
  ck_assert_double_eq(c[1].friction, 0);
  ck_assert_double_eq(c[1].restitution, 0);
  ck_assert_str_eq(c[2].name, "contact#3");
  ck_assert_double_eq(c[2].margin, 0.01);

  /* solver.moreau */
  ck_assert_double_eq(d.solver.moreau_theta, 0.75);
  ck_assert_int_eq(d.solver.moreau_variant, MBS_MOREAU_EXPLICIT);
  ck_assert_double_eq(d.solver.contact_tolerance, 1e-8);
  ck_assert_int_eq(d.solver.contact_iterations, 50);
  mbs_deck_free(&d);

  /* defaults of solver.moreau and of a deck without contacts */
  ck_assert_int_eq(
      load("mbsim: 1\nbodies: [{name: b, type: point, mass: 1, position: [0, 0, 0]}]\n", NULL, 0,
           &d, &e),
      MBS_OK);
  ck_assert_double_eq(d.solver.moreau_theta, 0.5);
  ck_assert_int_eq(d.solver.moreau_variant, MBS_MOREAU_THETA);
  ck_assert_double_eq(d.solver.contact_tolerance, 1e-10);
  ck_assert_int_eq(d.solver.contact_iterations, 100);
  ck_assert_int_eq(d.ncontact, 0);
  ck_assert_int_eq(d.nground_shape, 0);
  ck_assert_int_eq(d.bodies[0].ncollision, 0);
  mbs_deck_free(&d);
}
END_TEST

START_TEST(test_compiled_shapes) {
  mbsDeck d;
  mbsError e;
  ck_assert_int_eq(load(good, NULL, 0, &d, &e), MBS_OK);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%d:%d: %s", e.line, e.col, e.msg);

  /* shapes in body order, then the ground's */
  ck_assert_int_eq(m->nshape, 8);
  static const char *names[8] = {"die1", "die2", "die2#2", "die2#3",
                                 "ball", "post", "floor",  "wall"};
  for (int k = 0; k < 8; k++) {
    ck_assert_str_eq(m->shape[k].name, names[k]);
  }
  double Rz[9], Rx[9], RzRx[9], Rw[9], I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, x[3], W[9];
  rot_axis(Rz, 2, PI / 2);
  rot_axis(Rx, 0, PI / 2);
  mat_mul(RzRx, Rz, Rx);
  rot_axis(Rw, 2, 0.1);

  /* die1: its box about the centre of mass, whatever the reference point */
  const mbsShape *s = &m->shape[0];
  ck_assert_int_eq(s->kind, MBS_SHAPE_BOX);
  ck_assert_int_eq(s->body, 0);
  ck_assert_int_eq(s->attach, m->body_attach[0]);
  assert_vec(s->size, (double[]){0.05, 0.1, 0.15}, 3, TOL);
  assert_vec(s->c, (double[]){-0.01, -0.02, -0.03}, 3, TOL);
  ck_assert_double_eq_tol(s->radius, sqrt(0.05 * 0.05 + 0.1 * 0.1 + 0.15 * 0.15), TOL);
  world_pose(m, s, x, W);
  assert_vec(x, (double[]){0, 0, 1}, 3, TOL);
  assert_vec(W, Rz, 9, TOL);

  /* die2: a sphere off the centre (offset in body axes, the body turned 90 deg about z) */
  s = &m->shape[1];
  ck_assert_int_eq(s->kind, MBS_SHAPE_SPHERE);
  ck_assert_double_eq(s->size[0], 0.05);
  ck_assert_double_eq(s->radius, 0.05);
  world_pose(m, s, x, W);
  assert_vec(x, (double[]){1, 0.1, 1}, 3, TOL);
  /* a capsule turned about the body's x axis: radius, half length, bounding sphere */
  s = &m->shape[2];
  ck_assert_int_eq(s->kind, MBS_SHAPE_CAPSULE);
  assert_vec(s->size, (double[]){0.02, 0.15}, 2, TOL);
  ck_assert_double_eq_tol(s->radius, 0.17, TOL);
  assert_vec(s->C, Rx, 9, TOL);
  world_pose(m, s, x, W);
  assert_vec(x, (double[]){1, 0, 1}, 3, TOL);
  assert_vec(W, RzRx, 9, TOL);
  /* points: in the model's point list, bounding sphere the farthest point */
  s = &m->shape[3];
  ck_assert_int_eq(s->kind, MBS_SHAPE_POINTS);
  ck_assert_int_eq(s->npts, 3);
  ck_assert_int_eq(m->ncontact_pts, 3);
  assert_vec(m->contact_pts + 3 * s->pt0, (double[]){0.1, 0, 0, 0, 0.2, 0, 0, 0, -0.3}, 9, 0);
  ck_assert_double_eq_tol(s->radius, 0.3, TOL);

  /* the point mass: a sphere on it */
  s = &m->shape[4];
  ck_assert_int_eq(s->attach, m->body_attach[2]);
  assert_vec(s->c, (double[]){0, 0, 0}, 3, 0);
  world_pose(m, s, x, W);
  assert_vec(x, (double[]){2, 0, 1}, 3, TOL);

  /* the fixed body: a static frame, world centre x + R offset and axes R */
  s = &m->shape[5];
  ck_assert_int_eq(m->attach_node[s->attach], -1);
  assert_vec(s->c, (double[]){3, 0.1, 0}, 3, TOL);
  assert_vec(s->C, Rz, 9, TOL);
  assert_vec(s->size, (double[]){0.05, 0.1, 0.15}, 3, TOL);
  world_pose(m, s, x, W);
  assert_vec(x, (double[]){3, 0.1, 0}, 3, TOL);

  /* the ground's plane: its point, axis 3 the unit normal, axes 1, 2 completing a rotation */
  s = &m->shape[6];
  ck_assert_int_eq(s->body, -1);
  ck_assert_int_eq(s->attach, MBS_ATTACH_GROUND_ID);
  ck_assert_int_eq(s->kind, MBS_SHAPE_PLANE);
  ck_assert(isinf(s->radius));
  assert_vec(s->c, (double[]){0, 0, -1}, 3, 0);
  assert_vec((double[]){s->C[2], s->C[5], s->C[8]}, (double[]){0, 0, 1}, 3, TOL);
  double CtC[9], Ct[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      Ct[3 * i + j] = s->C[3 * j + i];
    }
  }
  mat_mul(CtC, Ct, s->C);
  assert_vec(CtC, I3, 9, TOL);
  double det = s->C[0] * (s->C[4] * s->C[8] - s->C[5] * s->C[7]) -
               s->C[1] * (s->C[3] * s->C[8] - s->C[5] * s->C[6]) +
               s->C[2] * (s->C[3] * s->C[7] - s->C[4] * s->C[6]);
  ck_assert_double_eq_tol(det, 1.0, TOL);
  /* the ground's box */
  s = &m->shape[7];
  assert_vec(s->size, (double[]){0.01, 0.5, 0.1}, 3, TOL);
  assert_vec(s->c, (double[]){0.5, 0, 0.1}, 3, 0);
  assert_vec(s->C, Rw, 9, TOL);
  int line, col;
  pos_of(good, "{name: wall", 0, &line, &col);
  ck_assert_int_eq(s->mark.line, line);
  ck_assert_int_eq(s->mark.col, col);

  /* contact entries */
  ck_assert_int_eq(m->ncontact, 5);
  ck_assert_str_eq(m->contact[0].name, "dice_floor");
  ck_assert_double_eq_tol(m->contact[0].friction, 0.3, TOL);
  ck_assert_int_eq(m->contact[1].law, MBS_CONTACT_PENALTY);
  ck_assert_double_eq(m->contact[1].stiffness, 1e5);
  ck_assert_double_eq(m->contact[2].margin, 0.01);
  pos_of(good, "name: dice_floor", 0, &line, &col);
  ck_assert_int_eq(m->contact[0].mark.line, line);
  ck_assert_int_eq(m->contact[0].mark.col, col);

  /* moreau settings */
  ck_assert_double_eq(m->moreau_theta, 0.75);
  ck_assert_int_eq(m->moreau_variant, MBS_MOREAU_EXPLICIT);
  ck_assert_double_eq(m->contact_tolerance, 1e-8);
  ck_assert_int_eq(m->contact_iterations, 50);
  mbs_model_destroy(m);
  mbs_deck_free(&d);
}
END_TEST

/* the pairs of a model by its rule (mbs_contact_pair_entry over every a < b), at most max,
 * sorted by (a, b); their count */
static int model_pairs(const mbsModel *m, mbsShapePair *out, int max) {
  int n = 0;
  for (int a = 0; a < m->nshape; a++) {
    for (int b = a + 1; b < m->nshape; b++) {
      int e = mbs_contact_pair_entry(m, a, b);
      ck_assert_int_eq(e, mbs_contact_pair_entry(m, b, a));
      if (e >= 0 && n < max) {
        out[n++] = (mbsShapePair){a, b, e};
      }
    }
  }
  return n;
}

START_TEST(test_pairs) {
  mbsDeck d;
  mbsError e;
  ck_assert_int_eq(load(good, NULL, 0, &d, &e), MBS_OK);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%d:%d: %s", e.line, e.col, e.msg);

  /* dice_floor: every die shape with both ground shapes (ground as b); dice: die1 with each
   * of die2's shapes, never die2 with itself; contact#3: ball-post; again: repeats
   * dice_floor's die1 pairs (dice_floor keeps them); static: fixed body and ground, none */
  static const int want[][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {0, 6, 0}, {0, 7, 0}, {1, 6, 0},
                                {1, 7, 0}, {2, 6, 0}, {2, 7, 0}, {3, 6, 0}, {3, 7, 0}, {4, 5, 2}};
  int n = (int)(sizeof(want) / sizeof(want[0]));
  mbsShapePair pair[32];
  ck_assert_int_eq(model_pairs(m, pair, 32), n);
  int sum = 0;
  for (int k = 0; k < n; k++) {
    ck_assert_msg(pair[k].a == want[k][0] && pair[k].b == want[k][1] && pair[k].spec == want[k][2],
                  "pair %d: got (%d, %d, %d), want (%d, %d, %d)", k, pair[k].a, pair[k].b,
                  pair[k].spec, want[k][0], want[k][1], want[k][2]);
    sum += mbs_collide_max(&m->shape[want[k][0]], &m->shape[want[k][1]]);
  }
  /* no table of pairs: each shape's entries (die1: dice_floor, dice, again), 18 in all (the
   * five entries' shapes: 6, 4, 2, 3, 3) */
  ck_assert_int_eq(m->shape_member[1] - m->shape_member[0], 3);
  ck_assert_int_eq(m->nmember, 6 + 4 + 2 + 3 + 3);
  /* the bound of contact points: box-sphere 1 (the closest point), box-capsule 14, box-points
   * 8 (box vertices), box-plane 8, box-box 88 (16 vertices, 72 edge pairs), sphere-plane 1,
   * sphere-box 1, capsule-plane 2, capsule-box 14, points-plane 3, points-box 8, sphere-box 1 */
  ck_assert_int_eq(sum, 1 + 14 + 8 + 8 + 88 + 1 + 1 + 2 + 14 + 3 + 8 + 1);
  /* the solver's storage: MBS_CONTACT_NEIGHBOURS times the most points of a pair of each
   * bounded shape: die1 88 (box-box), die2's sphere 1, capsule 14, points 8 (with a box),
   * ball 1, post 1, the wall 88 */
  ck_assert_int_eq(m->contact_max, MBS_CONTACT_NEIGHBOURS * (88 + 1 + 14 + 8 + 1 + 1 + 88));
  ck_assert_int_eq(m->nshape_paired, 8);
  ck_assert_int_eq(m->ncontact_paired, 4);
  ck_assert_int_eq(m->contact[4].paired, 0);

  /* a unilateral contact: auto picks moreau and says why; its energy threshold (the deck's
   * explicit variant balances energy like euler) */
  ck_assert_int_eq(m->integrator, MBS_INTEGRATOR_MOREAU);
  ck_assert_str_eq(m->integrator_reason,
                   "auto: unilateral contacts ('dice_floor'), so Moreau-Jean time stepping "
                   "(moreau)");
  ck_assert_double_eq(m->energy_warning, 0.2);
  mbs_model_destroy(m);
  mbs_deck_free(&d);
}
END_TEST

/* a surface of 2 x 3 nodes: two bilinear patches after the bodies' shapes, their corners the
 * nodes' frames in the order (0, 0), (1, 0), (1, 1), (0, 1), the surface's border edges closed,
 * one owner; a pattern matches it like a body; the poses follow the nodes */
START_TEST(test_surface_patches) {
  static const char *text =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: a0, type: point, mass: 1, position: [0, 0, 0]}\n"
      "  - {name: a1, type: point, mass: 1, position: [1, 0, 0]}\n"
      "  - {name: a2, type: point, mass: 1, position: [2, 0, 0.5]}\n"
      "  - {name: b0, type: point, mass: 1, position: [0, 1, 0]}\n"
      "  - {name: b1, type: point, mass: 1, position: [1, 1, 0]}\n"
      "  - {name: b2, type: point, mass: 1, position: [2, 1, 0.5]}\n"
      "  - {name: ball, mass: 1, inertia: [1, 1, 1], position: [0.5, 0.5, 1],\n"
      "     collision: [{sphere: 0.1}]}\n"
      "ground:\n"
      "  collision: [{name: floor, plane: {point: [0, 0, -1], normal: [0, 0, 1]}}]\n"
      "surfaces:\n"
      "  - {name: sheet, nodes: [a0, a1, a2, b0, b1, b2], grid: [2, 3]}\n"
      "contacts:\n"
      "  - {name: ball_sheet, between: [ball, \"sh*\"]}\n"
      "  - {name: ball_floor, between: [ball, ground]}\n";
  mbsDeck d;
  mbsError e;
  ck_assert_msg(load(text, NULL, 0, &d, &e) == MBS_OK, "%d:%d: %s", e.line, e.col, e.msg);
  ck_assert_int_eq(d.nsurface, 1);
  ck_assert_int_eq(d.surfaces[0].rows, 2);
  ck_assert_int_eq(d.surfaces[0].cols, 3);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%d:%d: %s", e.line, e.col, e.msg);
  /* ball, the two patches, the floor */
  ck_assert_int_eq(m->nshape, 4);
  static const char *names[2] = {"sheet[0,0]", "sheet[0,1]"};
  static const int corners[2][4] = {{0, 1, 4, 3}, {1, 2, 5, 4}};
  for (int k = 0; k < 2; k++) {
    const mbsShape *s = &m->shape[1 + k];
    ck_assert_int_eq(s->kind, MBS_SHAPE_PATCH);
    ck_assert_str_eq(s->name, names[k]);
    ck_assert_int_eq(s->closed, k == 0 ? 2 : 3);
    ck_assert_int_eq(s->owner, m->nbody + m->nbeam);
    ck_assert_int_eq(s->fixed, 0);
    ck_assert_int_eq(s->paired, 1);
    for (int c = 0; c < 4; c++) {
      ck_assert_int_eq(s->corner[c], m->body_attach[corners[k][c]]);
    }
    /* across xi = 0: none, then the first patch's far corners a0, b0; across eta = 0: none */
    ck_assert_int_eq(s->nbr[0][0], k == 0 ? -1 : m->body_attach[0]);
    ck_assert_int_eq(s->nbr[0][1], k == 0 ? -1 : m->body_attach[3]);
    ck_assert_int_eq(s->nbr[1][0], -1);
    ck_assert_int_eq(s->nbr[1][1], -1);
    /* the pose at q0: the corners' places, centred on their mean */
    mbsPose P;
    mbs_shape_pose(m, s, m->q0, &P);
    for (int c = 0; c < 4; c++) {
      assert_vec(P.corner + 3 * c, d.bodies[corners[k][c]].position, 3, 0.0);
    }
    ck_assert_double_eq_tol(P.x[0], 0.5 + k, 1e-15);
    ck_assert_double_eq_tol(P.x[2], k == 0 ? 0.0 : 0.25, 1e-15);
  }
  /* the ball with both patches (ball_sheet) and the floor; the patches never with each other
   * nor with the floor, which no entry pairs them with */
  mbsShapePair pair[8];
  ck_assert_int_eq(model_pairs(m, pair, 8), 3);
  ck_assert_int_eq(mbs_contact_pair_entry(m, 0, 1), 0);
  ck_assert_int_eq(mbs_contact_pair_entry(m, 0, 2), 0);
  ck_assert_int_eq(mbs_contact_pair_entry(m, 0, 3), 1);
  ck_assert_int_eq(mbs_contact_pair_entry(m, 1, 2), -1);
  ck_assert_int_eq(mbs_contact_pair_entry(m, 1, 3), -1);
  mbs_model_destroy(m);
  mbs_deck_free(&d);
}
END_TEST

/* a surface over beam nodes and point masses mixed: the corners are the beam nodes' frames
 * (their phi), the pose follows them; a node's own sphere never pairs with the patches it is
 * a corner of, a sphere of a node off the patch does */
START_TEST(test_surface_beam_nodes) {
  static const char *text =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: p0, type: point, mass: 1, position: [0, 1, 0], collision: [{sphere: 0.05}]}\n"
      "  - {name: p1, type: point, mass: 1, position: [1, 1, 0], collision: [{sphere: 0.05}]}\n"
      "beams:\n"
      "  - {name: c, from: [0, 0, 0], to: [2, 0, 0], elements: 2, collision: {sphere: 0.05},\n"
      "     section: {E: 1.0e9, nu: 0.3, density: 1000, rectangle: [0.02, 0.02]}}\n"
      "surfaces:\n"
      "  - {name: sheet, nodes: [\"c[0]\", \"c[1]\", p0, p1], grid: [2, 2]}\n"
      "contacts:\n"
      "  - {name: all, between: [\"*\", \"*\"]}\n";
  mbsDeck d;
  mbsError e;
  ck_assert_msg(load(text, NULL, 0, &d, &e) == MBS_OK, "%d:%d: %s", e.line, e.col, e.msg);
  ck_assert_int_eq(d.nsurface, 1);
  ck_assert_int_eq(d.surfaces[0].nodes[0], d.nbody);
  ck_assert_int_eq(d.surfaces[0].nodes[1], d.nbody + 1);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%d:%d: %s", e.line, e.col, e.msg);
  /* p0's and p1's spheres, c's three node spheres, the patch */
  ck_assert_int_eq(m->nshape, 6);
  const mbsShape *s = &m->shape[5];
  ck_assert_int_eq(s->kind, MBS_SHAPE_PATCH);
  /* corners (0, 0), (1, 0), (1, 1), (0, 1): c[0], c[1], p1, p0 (frames 1 + nbody + k) */
  ck_assert_int_eq(s->corner[0], 1 + d.nbody);
  ck_assert_int_eq(s->corner[1], 2 + d.nbody);
  ck_assert_int_eq(s->corner[2], m->body_attach[1]);
  ck_assert_int_eq(s->corner[3], m->body_attach[0]);
  ck_assert_int_eq(s->body, d.nbody);
  mbsPose P;
  mbs_shape_pose(m, s, m->q0, &P);
  static const double want[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  assert_vec(P.corner, want, 12, 1e-15);
  /* p0's, p1's, c[0]'s and c[1]'s spheres sit in the patch: no pair; c[2]'s pairs with it */
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(mbs_contact_pair_entry(m, k, 5), -1);
  }
  ck_assert_int_eq(mbs_contact_pair_entry(m, 4, 5), 0);
  /* p0's sphere and c's node spheres: different owners */
  ck_assert_int_eq(mbs_contact_pair_entry(m, 0, 2), 0);
  mbs_model_destroy(m);
  mbs_deck_free(&d);
}
END_TEST

/* three dice under one pattern: the three pairs within it, once each, in order */
static const char *three =
    "mbsim: 1\n"
    "bodies:\n"
    "  - {name: a1, shape: {sphere: 0.1}, density: 1, position: [0, 0, 1]}\n"
    "  - {name: a2, shape: {sphere: 0.1}, density: 1, position: [1, 0, 1]}\n"
    "  - {name: a3, shape: {sphere: 0.1}, density: 1, position: [2, 0, 1], fixed: true}\n"
    "  - {name: b, type: point, mass: 1, position: [3, 0, 1], collision: [{sphere: 0.1}]}\n"
    "ground: {collision: [{plane: {normal: [0, 0, 1]}}, {points: [[0, 0, 0]]}]}\n"
    "contacts:\n"
    "  - {name: soft, between: [a?, a?], law: penalty, stiffness: 1000}\n"
    "  - {name: hard, between: [ground, \"*\"]}\n";

START_TEST(test_same_pattern) {
  mbsDeck d;
  mbsError e;
  ck_assert_int_eq(load(three, NULL, 0, &d, &e), MBS_OK);
  ck_assert_str_eq(d.ground_shapes[0].name, "ground#1");
  ck_assert_str_eq(d.ground_shapes[1].name, "ground#2");
  assert_vec(d.ground_shapes[0].offset, (double[]){0, 0, 0}, 3, 0);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%d:%d: %s", e.line, e.col, e.msg);
  /* shapes a1 0, a2 1, a3 2 (fixed), b 3, ground#1 4, ground#2 5: soft gives (0,1), (0,2),
   * (1,2); hard gives every moving sphere with both ground shapes, not the fixed a3 */
  static const int want[][3] = {{0, 1, 0}, {0, 2, 0}, {0, 4, 1}, {0, 5, 1}, {1, 2, 0},
                                {1, 4, 1}, {1, 5, 1}, {3, 4, 1}, {3, 5, 1}};
  int n = (int)(sizeof(want) / sizeof(want[0]));
  mbsShapePair pair[32];
  ck_assert_int_eq(model_pairs(m, pair, 32), n);
  for (int k = 0; k < n; k++) {
    ck_assert_msg(pair[k].a == want[k][0] && pair[k].b == want[k][1] && pair[k].spec == want[k][2],
                  "pair %d: got (%d, %d, %d)", k, pair[k].a, pair[k].b, pair[k].spec);
  }
  ck_assert_int_eq(shape_index(m, "ground#2"), 5);
  ck_assert_int_eq(m->integrator, MBS_INTEGRATOR_MOREAU);
  ck_assert_str_eq(m->integrator_reason,
                   "auto: unilateral contacts ('hard'), so Moreau-Jean time stepping (moreau)");
  mbs_model_destroy(m);
  mbs_deck_free(&d);

  /* penalty only: auto still picks moreau, and says why */
  static const char *pen = "mbsim: 1\n"
                           "bodies:\n"
                           "  - {name: a1, shape: {sphere: 0.1}, density: 1, position: [0, 0, 1]}\n"
                           "ground: {collision: [{plane: {normal: [0, 0, 1]}}]}\n"
                           "contacts: [{name: pc, between: [a1, ground], law: penalty, "
                           "stiffness: 1e4, friction_velocity: 0.01}]\n"
                           "solver: {integrator: moreau}\n";
  ck_assert_int_eq(load(pen, NULL, 0, &d, &e), MBS_OK);
  ck_assert_double_eq(d.contacts[0].friction_velocity, 0.01);
  m = mbs_model_compile(&d, &e);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(m->integrator, MBS_INTEGRATOR_MOREAU);
  ck_assert_str_eq(m->integrator_reason, "chosen in the deck");
  mbs_model_destroy(m);
  mbs_deck_free(&d);
  mbsOverride ov = {"solver.integrator", "auto"};
  ck_assert_int_eq(load(pen, &ov, 1, &d, &e), MBS_OK);
  m = mbs_model_compile(&d, &e);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(m->integrator, MBS_INTEGRATOR_MOREAU);
  ck_assert_ptr_nonnull(strstr(m->integrator_reason, "auto: penalty contacts ('pc')"));
  mbs_model_destroy(m);
  mbs_deck_free(&d);

  /* contacts that give no pair (a fixed body and the ground): no contacts for the integrator,
   * so em stays allowed and auto picks it */
  static const char *none =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: a1, shape: {sphere: 0.1}, density: 1, position: [0, 0, 1]}\n"
      "  - {name: f, shape: {sphere: 0.1}, density: 1, position: [1, 0, 0], "
      "fixed: true}\n"
      "ground: {collision: [{plane: {normal: [0, 0, 1]}}]}\n"
      "contacts: [{between: [f, ground]}, {between: [a1, a1]}]\n"
      "solver: {integrator: em}\n";
  ck_assert_int_eq(load(none, NULL, 0, &d, &e), MBS_OK);
  m = mbs_model_compile(&d, &e);
  ck_assert_ptr_nonnull(m);
  mbsShapePair none_pair[4];
  ck_assert_int_eq(model_pairs(m, none_pair, 4), 0);
  ck_assert_int_eq(m->ncontact_paired, 0);
  ck_assert_int_eq(m->nshape_paired, 0);
  ck_assert_int_eq(m->contact_max, 0);
  ck_assert_int_eq(m->nshape, 3);
  ck_assert_int_eq(m->integrator, MBS_INTEGRATOR_EM);
  mbs_model_destroy(m);
  mbs_deck_free(&d);
}
END_TEST

/* --set overrides reach the contact keys like any other value */
START_TEST(test_overrides) {
  mbsDeck d;
  mbsError e;
  mbsOverride ov[] = {{"contacts.dice_floor.friction", "0.7"},
                      {"ground.collision.floor.plane.normal", "[0, 1, 0]"},
                      {"bodies.die2.collision.0.sphere", "0.25"},
                      {"solver.moreau.theta", "1"},
                      {"parameters.mu", "0.2"},
                      {"contacts.dice.friction", "$mu"}};
  ck_assert_int_eq(load(good, ov, 6, &d, &e), MBS_OK);
  ck_assert_double_eq(d.contacts[0].friction, 0.7);
  assert_vec(d.ground_shapes[0].normal, (double[]){0, 1, 0}, 3, 0);
  ck_assert_double_eq(d.bodies[1].collision[0].size[0], 0.25);
  ck_assert_double_eq(d.solver.moreau_theta, 1.0);
  ck_assert_double_eq(d.contacts[1].friction, 0.2);
  mbs_deck_free(&d);

  /* an override's bad value says where it came from */
  mbsOverride bad = {"contacts.dice_floor.restitution", "2"};
  bad_at(good, &bad, 1, 0, NULL, 0,
         "restitution must be in [0, 1] (got 2) (from --set contacts.dice_floor.restitution=2)");
  mbsOverride integ = {"solver.integrator", "euler"};
  bad_at(good, &integ, 1, 0, NULL, 0,
         "integrator euler cannot handle contacts ('dice_floor' gives pairs of shapes that may "
         "touch); contacts need integrator: moreau");
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* errors */

#define HEAD                                                                                       \
  "mbsim: 1\n"                                                                                     \
  "bodies:\n"                                                                                      \
  "  - {name: die1, shape: {box: [0.1, 0.1, 0.1]}, density: 1000, position: [0, 0, 1]}\n"          \
  "  - {name: bob, type: point, mass: 1, position: [1, 0, 1]}\n"

#define FLOOR "ground: {collision: [{name: floor, plane: {normal: [0, 0, 1]}}]}\n"

/* one body with collision value COL */
#define BODY(col)                                                                                  \
  "mbsim: 1\nbodies:\n  - {name: die1, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "         \
  "collision: " col "}\n"

START_TEST(test_shape_errors) {
  bad_at(BODY("[{cylinder: {radius: 1, length: 2}}]"), NULL, 0, 0, "cylinder", 0,
         "bodies[0] 'die1' collision[0]: unknown shape 'cylinder'; the shapes are sphere, box, "
         "capsule, points");
  bad_at(HEAD "ground: {collision: [{cone: 1}]}\n", NULL, 0, 0, "cone", 0,
         "ground collision[0]: unknown shape 'cone'; the shapes are sphere, box, capsule, points, "
         "plane");
  bad_at(BODY("[{plane: {normal: [0, 0, 1]}}]"), NULL, 0, 0, "plane", 0,
         "a plane is ground geometry");
  bad_at(BODY("[{sphere: -0.5}]"), NULL, 0, 0, "-0.5", 0, "sphere must be > 0 (got -0.5)");
  bad_at(BODY("[{box: [0.1, -2, 0.1]}]"), NULL, 0, 0, "-2", 0, "box[1] must be > 0 (got -2)");
  bad_at(BODY("[{capsule: {radius: 0, length: 1}}]"), NULL, 0, 0, "0, length", 0,
         "capsule.radius must be > 0 (got 0)");
  bad_at(BODY("[{capsule: {radius: 1, length: -1}}]"), NULL, 0, 0, "-1}", 0,
         "capsule.length must be > 0 (got -1)");
  bad_at(BODY("[{capsule: {radius: 1}}]"), NULL, 0, 0, "{radius", 0,
         "capsule: needs radius and length");
  bad_at(BODY("[{ring: 0}]"), NULL, 0, 0, "0}", 0, "ring must be > 0 (got 0)");
  bad_at(BODY("[{points: []}]"), NULL, 0, 0, "[]", 0, "points: the list is empty");
  bad_at(BODY("[{points: [[0, 0, 0], [1, 2]]}]"), NULL, 0, 0, "[1, 2]", 0,
         "points[1]: expected a list of 3 numbers (got 2 items)");
  bad_at(BODY("[{sphere: 1, box: [1, 1, 1]}]"), NULL, 0, 0, "box", 0,
         "give one shape per entry, not both 'sphere' and 'box'");
  bad_at(BODY("[{offset: [0, 0, 0]}]"), NULL, 0, 0, "{offset", 0,
         "give a shape: one of sphere, box, capsule, points");
  bad_at(BODY("[{sphere: 1, ofset: [0, 0, 0]}]"), NULL, 0, 0, "ofset", 0,
         "unknown key 'ofset' in bodies[0] 'die1' collision[0]; did you mean 'offset'?");
  bad_at(BODY("[{name: x, sphere: 1}]"), NULL, 0, 0, "name: x", 0,
         "unknown key 'name' in bodies[0] 'die1' collision[0]");
  bad_at(BODY("[{sphere: 1, orientation: {axis: [0, 0, 0], angle: 1}}]"), NULL, 0, 0,
         "[0, 0, 0], angle", 0, "orientation.axis must be a nonzero vector");
  bad_at(BODY("{sphere: 1}"), NULL, 0, 0, "{sphere", 0, "collision: expected a list of shapes");
  bad_at(BODY("[{sphere: \"$rr\"}]"), NULL, 0, 0, "$rr", 0, "rr");
  bad_at("mbsim: 1\nbodies: [{name: p, type: point, mass: 1, position: [0, 0, 0], collision: "
         "[{sphere: 1, offset: [1, 0, 0]}]}]\n",
         NULL, 0, 0, "offset", 0, "offset: a point mass's shapes are centred on it");

  /* ground */
  bad_at(HEAD "ground: {collision: [{plane: {point: [1, 2, 3], normal: [0, 0, 0]}}]}\n", NULL, 0, 0,
         "[0, 0, 0]", 0, "ground collision[0]: plane.normal must be a nonzero vector");
  bad_at(HEAD "ground: {collision: [{plane: {point: [1, 2, 3]}}]}\n", NULL, 0, 0, "{point", 0,
         "plane: missing required key 'normal'");
  bad_at(HEAD "ground: {collision: [{plane: {normal: [0, 0, 1]}, offset: [0, 0, 1]}]}\n", NULL, 0,
         0, "offset", 0, "a plane is placed by its point and normal; 'offset' does not apply");
  bad_at(HEAD "ground: {colision: []}\n", NULL, 0, 0, "colision", 0,
         "unknown key 'colision' in ground; did you mean 'collision'?");
  bad_at(HEAD "ground: {collision: [{name: w, sphere: 1}, {name: w, box: [1, 1, 1]}]}\n", NULL, 0,
         0, "{name: w, box", 0, "ground collision[1]: duplicate shape name 'w' (first at 5:22)");
  bad_at(HEAD "ground: {collision: [{name: 'a b', sphere: 1}]}\n", NULL, 0, 0, "'a b'", 0,
         "may only contain letters");
}
END_TEST

START_TEST(test_contact_errors) {
  bad_at(HEAD FLOOR "contacts: [{between: [dice*, ground]}]\n", NULL, 0, 0, "dice*", 0,
         "contacts[0]: between[0]: the pattern 'dice*' matches no body");
  /* the nearest body or beam name, where one is close enough to be a typo */
  bad_at(HEAD FLOOR "contacts: [{between: [die2, ground]}]\n", NULL, 0, 0, "die2", 0,
         "between[0]: the pattern 'die2' matches no body or beam; did you mean 'die1'?");
  bad_at(HEAD FLOOR
         "joints: [{name: j, type: spherical, bodies: [ground, boob], point: [1, 0, 1]}]\n",
         NULL, 0, 0, "boob", 0, "body 'boob' is not defined; did you mean 'bob'?");
  bad_at(HEAD FLOOR "contacts: [{between: [ground, b?b]}]\n", NULL, 0, 0, "b?b", 0,
         "between[1]: body 'bob' (matched by 'b?b') has no collision geometry; give it "
         "`collision: [{sphere: r}]`");
  bad_at(HEAD "contacts: [{between: [die1, ground]}]\n", NULL, 0, 0, "ground]", 0,
         "between[1]: the ground has no collision geometry; add it as ground: {collision:");
  bad_at(HEAD FLOOR "contacts: [{between: [die1]}]\n", NULL, 0, 0, "[die1]", 0,
         "between: expected a list of two body-name patterns [pattern, pattern] (got 1 items)");
  bad_at(HEAD FLOOR "contacts: [{name: c, friction: 1}]\n", NULL, 0, 0, "{name: c", 0,
         "contacts[0] 'c': missing required key 'between'");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], friction: -0.1}]\n", NULL, 0, 0, "-0.1",
         0, "friction must be >= 0 (got -0.1)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], restitution: 1.5}]\n", NULL, 0, 0, "1.5",
         0, "restitution must be in [0, 1] (got 1.5)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], restitution: -0.2}]\n", NULL, 0, 0,
         "-0.2", 0, "restitution must be in [0, 1] (got -0.2)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], margin: -1}]\n", NULL, 0, 0, "-1}", 0,
         "margin must be >= 0 (got -1)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], law: soft}]\n", NULL, 0, 0, "soft", 0,
         "contact law 'soft' is not supported; valid: unilateral, penalty");
  bad_at(HEAD FLOOR "contacts: [{name: u, between: [die1, ground], stiffness: 1e5}]\n", NULL, 0, 0,
         "stiffness", 0, "contacts[0] 'u': 'stiffness' belongs to law: penalty");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], law: unilateral, damping: 1}]\n", NULL, 0,
         0, "damping", 0, "'damping' belongs to law: penalty");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], friction_velocity: 1}]\n", NULL, 0, 0,
         "friction_velocity", 0, "'friction_velocity' belongs to law: penalty");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], law: penalty}]\n", NULL, 0, 0, "{between",
         0, "law penalty needs 'stiffness' [N/m] > 0");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], law: penalty, stiffness: 0}]\n", NULL, 0,
         0, "0}", 0, "stiffness must be > 0 (got 0)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], law: penalty, stiffness: 1, damping: "
                    "-3}]\n",
         NULL, 0, 0, "-3", 0, "damping must be >= 0 (got -3)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], law: penalty, stiffness: 1, "
                    "friction_velocity: 0}]\n",
         NULL, 0, 0, "0}", 0, "friction_velocity must be > 0 (got 0)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], frction: 0.3}]\n", NULL, 0, 0, "frction",
         0, "unknown key 'frction' in contacts[0]; did you mean 'friction'?");
  bad_at(HEAD FLOOR "contacts: [{name: a, between: [die1, ground]}, {name: a, between: [die1, "
                    "ground]}]\n",
         NULL, 0, 0, "a, between", 1, "contacts[1] 'a': duplicate contact name 'a' (first at");
  bad_at(HEAD FLOOR "contacts: {between: [die1, ground]}\n", NULL, 0, 0, "{between", 0,
         "contacts: expected a list");

  /* solver.moreau */
  bad_at(HEAD "solver: {moreau: {theta: 0.4}}\n", NULL, 0, 0, "0.4", 0,
         "solver: moreau.theta must be in [0.5, 1] (got 0.4)");
  bad_at(HEAD "solver: {moreau: {theta: 1.1}}\n", NULL, 0, 0, "1.1", 0,
         "moreau.theta must be in [0.5, 1] (got 1.1)");
  bad_at(HEAD "solver: {moreau: {variant: implicit}}\n", NULL, 0, 0, "implicit", 0,
         "moreau variant 'implicit' is not supported; valid: theta, explicit");
  bad_at(HEAD "solver: {moreau: {contact_tolerance: 0}}\n", NULL, 0, 0, "0}", 0,
         "moreau.contact_tolerance must be > 0 (got 0)");
  bad_at(HEAD "solver: {moreau: {contact_iterations: 0}}\n", NULL, 0, 0, "0}", 0,
         "moreau.contact_iterations must be >= 1 (got 0)");
  bad_at(HEAD "solver: {moreau: {thta: 0.5}}\n", NULL, 0, 0, "thta", 0,
         "unknown key 'thta' in solver.moreau; did you mean 'theta'?");

  /* an integrator other than moreau with contacts, at solver.integrator */
  bad_at(
      HEAD FLOOR "contacts: [{name: c1, between: [die1, ground]}]\nsolver: {integrator: em}\n",
      NULL, 0, 0, "em}", 0,
      "solver: integrator em cannot handle contacts ('c1' gives pairs of shapes that may touch); "
      "contacts need integrator: moreau (or auto, which picks it)");
  bad_at(HEAD FLOOR "contacts: [{between: [die1, ground], law: penalty, stiffness: 1}]\n"
                    "solver: {integrator: genalpha}\n",
         NULL, 0, 0, "genalpha}", 0, "integrator genalpha cannot handle contacts ('contact#1'");

  /* a pair of kinds the geometry has no function for: at the contacts entry, in the compiler */
  bad_at("mbsim: 1\nbodies: [{name: p1, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
         "collision: [{points: [[0, 0, 0]]}]}]\n"
         "ground: {collision: [{name: pins, points: [[1, 0, 0]]}]}\n"
         "contacts:\n  - {name: pp, between: [p1, ground]}\n",
         NULL, 0, 1, "{name: pp", 0, "contacts[0] 'pp': shapes 'p1' (points) and 'pins' (points)");
  bad_at("mbsim: 1\nbodies: [{name: p1, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
         "collision: [{sphere: 1}, {points: [[0, 0, 0]]}]},\n"
         "  {name: p2, mass: 1, inertia: [1, 1, 1], position: [5, 0, 0], collision: [{points: [[0, "
         "0, 0]]}]}]\n"
         "contacts:\n  - {between: [p?, p?]}\n",
         NULL, 0, 1, "{between", 0,
         "contacts[0] 'contact#1': shapes 'p1#2' (points) and 'p2' (points) cannot touch");
  {
    /* the message lists the supported pairs */
    mbsDeck d;
    mbsError e;
    char want[512];
    snprintf(want, sizeof(want), "supported pairs: %s", mbs_collide_supported_list());
    bad_at("mbsim: 1\nbodies: [{name: p1, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
           "collision: [{points: [[0, 0, 0]]}]}]\n"
           "ground: {collision: [{name: pins, points: [[1, 0, 0]]}]}\n"
           "contacts:\n  - {name: pp, between: [p1, ground]}\n",
           NULL, 0, 1, "{name: pp", 0, want);
    (void)d;
    (void)e;
  }
}
END_TEST

/* a failure in the middle of a body's or the ground's shapes leaves nothing allocated */
START_TEST(test_free_partial) {
  mbsDeck d;
  mbsError e;
  /* points allocated, then a bad point; a later body fails after the first took shapes */
  ck_assert_int_eq(load(BODY("[{points: [[0, 0, 0], [0, 0, x]]}]"), NULL, 0, &d, &e), MBS_ERR_DECK);
  mbs_deck_free(&d);
  ck_assert_int_eq(load(HEAD "  - {name: c, shape: {sphere: 1}, density: 1, position: [0, 0, 0], "
                             "mass: 2}\n",
                        NULL, 0, &d, &e),
                   MBS_ERR_DECK);
  mbs_deck_free(&d);
  ck_assert_int_eq(load(HEAD "  - {name: c, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                             "collision: [{points: [[0, 0, 0]]}, {sphere: 0}]}\n",
                        NULL, 0, &d, &e),
                   MBS_ERR_DECK);
  mbs_deck_free(&d);
  ck_assert_int_eq(
      load(HEAD "ground: {collision: [{points: [[0, 0, 0]]}, {box: [1, 1]}]}\n", NULL, 0, &d, &e),
      MBS_ERR_DECK);
  mbs_deck_free(&d);
  /* a good deck freed twice (the second a no-op) */
  ck_assert_int_eq(load(good, NULL, 0, &d, &e), MBS_OK);
  mbs_deck_free(&d);
  mbs_deck_free(&d);
}
END_TEST

/* 10,000 spheres (r = 0.01 m) on a grid of pitch 0.025 m resting on a floor, every sphere
 * paired with every other and with the ground: the model holds each shape's entries (2 per
 * sphere, 1 for the floor), not the 5e7 pairs; its contact storage is linear in the shapes;
 * the broad phase at t = 0 finds the 10,000 sphere-floor pairs and no other (no sphere is
 * within the margin of another), each with its entry */
#define MANY 10000

START_TEST(test_many_spheres) {
  size_t cap = 128 + (size_t)MANY * 100, len = 0;
  char *text = malloc(cap);
  ck_assert_ptr_nonnull(text);
  len += (size_t)snprintf(text + len, cap - len, "mbsim: 1\nbodies:\n");
  for (int i = 0; i < MANY; i++) {
    len += (size_t)snprintf(text + len, cap - len,
                            "  - {name: s%d, shape: {sphere: 0.01}, density: 1000, position: "
                            "[%.3f, %.3f, 0.01]}\n",
                            i + 1, 0.025 * (i % 100), 0.025 * (i / 100));
    ck_assert_uint_lt(len, cap - 256);
  }
  snprintf(text + len, cap - len,
           "ground: {collision: [{name: floor, plane: {normal: [0, 0, 1]}}]}\n"
           "contacts: [{name: spheres, between: [s*, s*]}, {name: floor, between: [s*, "
           "ground]}]\n");
  mbsDeck d;
  mbsError e;
  ck_assert_int_eq(load(text, NULL, 0, &d, &e), MBS_OK);
  mbsModel *m = mbs_model_compile(&d, &e);
  ck_assert_msg(m != NULL, "%d:%d: %s", e.line, e.col, e.msg);
  ck_assert_int_eq(m->nshape, MANY + 1);
  ck_assert_int_eq(m->nmember, 2 * MANY + 1);
  ck_assert_int_eq(m->nshape_paired, MANY + 1);
  ck_assert_int_eq(m->contact_max, MBS_CONTACT_NEIGHBOURS * MANY);
  /* the rule: the first and the last sphere are a pair of 'spheres', each with the floor one
   * of 'floor', the floor never with itself */
  ck_assert_int_eq(mbs_contact_pair_entry(m, 0, MANY - 1), 0);
  ck_assert_int_eq(mbs_contact_pair_entry(m, MANY - 1, MANY), 1);
  ck_assert_int_eq(mbs_contact_pair_entry(m, MANY, MANY), -1);
  mbsPose *poses = malloc(sizeof(*poses) * (size_t)m->nshape);
  ck_assert_ptr_nonnull(poses);
  for (int s = 0; s < m->nshape; s++) {
    mbs_shape_pose(m, &m->shape[s], m->q0, &poses[s]);
  }
  mbsBroad *bp = mbs_broad_create(m, &e);
  ck_assert_ptr_nonnull(bp);
  const mbsShapePair *pair = NULL;
  ck_assert_int_eq(mbs_broad_pairs(bp, m, poses, NULL, &pair), MANY);
  for (int k = 0; k < MANY; k++) {
    ck_assert(pair[k].a == k && pair[k].b == MANY && pair[k].spec == 1);
  }
  /* all lifted by 2 mm, beyond the 1 mm margin: none; then one moved next to its neighbour
   * (a gap of 0.5 mm): that pair alone */
  for (int s = 0; s < MANY; s++) {
    poses[s].x[2] += 0.002;
  }
  ck_assert_int_eq(mbs_broad_pairs(bp, m, poses, NULL, &pair), 0);
  poses[1].x[0] = poses[0].x[0] + 0.0205;
  ck_assert_int_eq(mbs_broad_pairs(bp, m, poses, NULL, &pair), 1);
  ck_assert(pair[0].a == 0 && pair[0].b == 1 && pair[0].spec == 0);
  mbs_broad_destroy(bp);
  free(poses);
  mbs_model_destroy(m);
  mbs_deck_free(&d);
  free(text);
}
END_TEST

Suite *deck_contacts_suite(void) {
  Suite *s = suite_create("deck_contacts");
  TCase *tc = tcase_create("deck_contacts");
  tcase_add_test(tc, test_deck_values);
  tcase_add_test(tc, test_compiled_shapes);
  tcase_add_test(tc, test_pairs);
  tcase_add_test(tc, test_surface_patches);
  tcase_add_test(tc, test_surface_beam_nodes);
  tcase_add_test(tc, test_same_pattern);
  tcase_add_test(tc, test_overrides);
  tcase_add_test(tc, test_shape_errors);
  tcase_add_test(tc, test_contact_errors);
  tcase_add_test(tc, test_free_partial);
  tcase_add_test(tc, test_many_spheres);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return s;
}
