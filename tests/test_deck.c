/* test_deck.c: the YAML deck reader (deck.h): good decks and their values, mass properties,
 * orientations, parameters, merge keys, --set overrides, the deck text, and bad decks with
 * their file:line:col messages (inline and from tests/bad/expected.tsv). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbsim/deck.h"

#define TOL 1e-12

/* ---------------------------------------------------------------------------------------- */
/* helpers */

/* write text to a new mkstemp file; returns its malloc'ed path */
static char *write_temp(const char *text) {
  char tmpl[] = "/tmp/mbs_deck_XXXXXX";
  int fd = mkstemp(tmpl);
  ck_assert_int_ge(fd, 0);
  size_t n = strlen(text);
  ck_assert_int_eq((long)write(fd, text, n), (long)n);
  close(fd);
  char *path = strdup(tmpl);
  ck_assert_ptr_nonnull(path);
  return path;
}

/* write a file with a chosen name inside a new mkdtemp directory */
static char *write_named(const char *name, const char *text, char dir[64]) {
  snprintf(dir, 64, "/tmp/mbs_deckdir_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  size_t len = strlen(dir) + strlen(name) + 2;
  char *path = malloc(len);
  ck_assert_ptr_nonnull(path);
  snprintf(path, len, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* load text as a deck (with overrides), removing the file afterwards */
static mbsStatus load_text(const char *text, const mbsOverride *ov, int nov, mbsDeck *d,
                           mbsError *e) {
  char *path = write_temp(text);
  mbsStatus st = mbs_deck_load(d, path, ov, nov, e);
  unlink(path);
  free(path);
  return st;
}

/* load a deck that must be good */
static void load_ok(const char *text, const mbsOverride *ov, int nov, mbsDeck *d) {
  mbsError e;
  mbsStatus st = load_text(text, ov, nov, d, &e);
  ck_assert_msg(st == MBS_OK, "expected a good deck, got %d: %d:%d: %s", st, e.line, e.col, e.msg);
}

/* load a deck that must fail with status, line:col and a message containing msg */
static void load_bad(const char *text, const mbsOverride *ov, int nov, mbsStatus status, int line,
                     int col, const char *msg) {
  mbsDeck d;
  mbsError e;
  mbsStatus st = load_text(text, ov, nov, &d, &e);
  ck_assert_msg(st == status, "expected status %d, got %d (%d:%d: %s)", status, st, e.line, e.col,
                e.msg);
  ck_assert_int_eq(e.status, status);
  ck_assert_msg(strstr(e.msg, msg) != NULL, "message '%s' lacks '%s'", e.msg, msg);
  ck_assert_msg(e.line == line && e.col == col, "expected %d:%d, got %d:%d (%s)", line, col, e.line,
                e.col, e.msg);
  ck_assert_ptr_null(d.bodies);
  ck_assert_ptr_null(d.text);
  mbs_deck_free(&d);
}

static void assert_vec(const double *got, const double *want, int n, double tol) {
  for (int k = 0; k < n; k++) {
    ck_assert_msg(fabs(got[k] - want[k]) <= tol, "component %d: got %.17g, want %.17g", k, got[k],
                  want[k]);
  }
}

/* a minimal good deck around one body written by the caller */
#define ONE_BODY(body) "mbsim: 1\nbodies:\n  - " body "\n"

/* ---------------------------------------------------------------------------------------- */
/* keywords */

START_TEST(test_keywords) {
  ck_assert_str_eq(mbs_body_type_word(MBS_BODY_RIGID), "rigid");
  ck_assert_str_eq(mbs_body_type_word(MBS_BODY_POINT), "point");
  ck_assert_str_eq(mbs_joint_type_word(MBS_JOINT_DISTANCE), "distance");
  ck_assert_str_eq(mbs_load_type_word(MBS_LOAD_TORQUE), "torque");
  ck_assert_str_eq(mbs_integrator_word(MBS_INTEGRATOR_MIDPOINT), "midpoint");
  ck_assert_int_eq(mbs_integrator_from_word("em"), MBS_INTEGRATOR_EM);
  ck_assert_int_eq(mbs_integrator_from_word("auto"), MBS_INTEGRATOR_AUTO);
  ck_assert_int_eq(mbs_integrator_from_word("genalpha"), MBS_INTEGRATOR_GENALPHA);
  ck_assert_int_eq(mbs_integrator_from_word("moreau"), MBS_INTEGRATOR_MOREAU);
  ck_assert_int_eq(mbs_integrator_from_word("rk4"), -1);
  ck_assert_int_eq(mbs_integrator_from_word(NULL), -1);
  for (int i = 0; i < MBS_INTEGRATOR_COUNT; i++) {
    ck_assert_int_eq(mbs_integrator_from_word(mbs_integrator_word((mbsIntegrator)i)), i);
  }
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* a complete deck */

static const char *pendulum = "mbsim: 1                      # deck format version\n"
                              "title: Double pendulum\n"
                              "gravity: [0, 0, -9.81]\n"
                              "parameters:\n"
                              "  L: 1.0\n"
                              "  m: 2.0\n"
                              "  k: 10\n"
                              "bodies:\n"
                              "  - name: link1\n"
                              "    type: rigid\n"
                              "    mass: $m\n"
                              "    inertia: [0.1, 0.1, 0.01]\n"
                              "    position: [0.5, 0, 0]\n"
                              "    reference_point: [-0.5, 0, 0]\n"
                              "    orientation:\n"
                              "      directors: [[1,0,0],[0,1,0],[0,0,1]]\n"
                              "    velocity: [0, 1, 0]\n"
                              "    angular_velocity: [0, 0, 2]\n"
                              "    fixed: false\n"
                              "  - name: bob\n"
                              "    type: point\n"
                              "    mass: 1.0\n"
                              "    position: [$L, 0, 0]\n"
                              "joints:\n"
                              "  - name: hinge\n"
                              "    type: revolute\n"
                              "    bodies: [ground, link1]\n"
                              "    point: [0, 0, 0]\n"
                              "    axis: [0, 2, 0]\n"
                              "  - name: rod\n"
                              "    type: distance\n"
                              "    bodies: [link1, bob]\n"
                              "loads:\n"
                              "  - name: motor\n"
                              "    type: torque\n"
                              "    body: link1\n"
                              "    value: [0, 0, 200]\n"
                              "    frame: body\n"
                              "    method: contravariant\n"
                              "    profile: constant\n"
                              "  - name: push\n"
                              "    type: force\n"
                              "    body: bob\n"
                              "    value: [1, 2, 3]\n"
                              "solver:\n"
                              "  integrator: em\n"
                              "  dt: 1.0e-3\n"
                              "  t_end: 10.0\n"
                              "  newton: {tolerance: 1.0e-9, max_iterations: 30}\n"
                              "output:\n"
                              "  file: double_pendulum.h5\n"
                              "  every: $k\n"
                              "  xdmf: false\n";

START_TEST(test_good_deck) {
  mbsDeck d;
  load_ok(pendulum, NULL, 0, &d);

  /* top level */
  ck_assert_int_eq(d.version, 1);
  ck_assert_str_eq(d.title, "Double pendulum");
  assert_vec(d.gravity, (double[]){0, 0, -9.81}, 3, 0);
  ck_assert_int_eq(d.nbody, 2);
  ck_assert_int_eq(d.njoint, 2);
  ck_assert_int_eq(d.nload, 2);

  /* bodies */
  const mbsDeckBody *b = &d.bodies[0];
  ck_assert_str_eq(b->name, "link1");
  ck_assert_int_eq(b->mark.line, 9);
  ck_assert_int_eq(b->mark.col, 5);
  ck_assert_int_eq(b->type, MBS_BODY_RIGID);
  ck_assert_double_eq(b->mass, 2.0);
  assert_vec(b->inertia, (double[]){0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.01}, 9, 0);
  assert_vec(b->position, (double[]){0.5, 0, 0}, 3, 0);
  assert_vec(b->reference_point, (double[]){-0.5, 0, 0}, 3, 0);
  assert_vec(b->directors, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9, 0);
  assert_vec(b->velocity, (double[]){0, 1, 0}, 3, 0);
  assert_vec(b->angular_velocity, (double[]){0, 0, 2}, 3, 0);
  ck_assert_int_eq(b->fixed, 0);
  ck_assert_int_eq(b->has_shape, 0);
  b = &d.bodies[1];
  ck_assert_str_eq(b->name, "bob");
  ck_assert_int_eq(b->type, MBS_BODY_POINT);
  ck_assert_double_eq(b->mass, 1.0);
  assert_vec(b->position, (double[]){1, 0, 0}, 3, 0);
  assert_vec(b->directors, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9, 0);
  assert_vec(b->inertia, (double[]){0, 0, 0, 0, 0, 0, 0, 0, 0}, 9, 0);

  /* joints: axis normalised, distance points default to the centres */
  const mbsDeckJoint *j = &d.joints[0];
  ck_assert_str_eq(j->name, "hinge");
  ck_assert_int_eq(j->type, MBS_JOINT_REVOLUTE);
  ck_assert_int_eq(j->body[0], -1);
  ck_assert_int_eq(j->body[1], 0);
  assert_vec(j->axis, (double[]){0, 1, 0}, 3, TOL);
  j = &d.joints[1];
  ck_assert_int_eq(j->type, MBS_JOINT_DISTANCE);
  ck_assert_int_eq(j->body[0], 0);
  ck_assert_int_eq(j->body[1], 1);
  ck_assert_int_eq(j->has_points, 0);
  assert_vec(j->points[0], (double[]){0.5, 0, 0}, 3, 0);
  assert_vec(j->points[1], (double[]){1, 0, 0}, 3, 0);

  /* loads */
  const mbsDeckLoad *l = &d.loads[0];
  ck_assert_int_eq(l->type, MBS_LOAD_TORQUE);
  ck_assert_int_eq(l->body, 0);
  ck_assert_int_eq(l->frame, MBS_FRAME_BODY);
  ck_assert_int_eq(l->method, MBS_TORQUE_CONTRAVARIANT);
  ck_assert_int_eq(l->profile.kind, MBS_PROFILE_CONSTANT);
  assert_vec(l->value, (double[]){0, 0, 200}, 3, 0);
  l = &d.loads[1];
  ck_assert_int_eq(l->type, MBS_LOAD_FORCE);
  ck_assert_int_eq(l->body, 1);
  ck_assert_int_eq(l->frame, MBS_FRAME_WORLD);
  ck_assert_int_eq(l->has_point, 0);
  assert_vec(l->point, (double[]){1, 0, 0}, 3, 0);

  /* solver, output */
  ck_assert_int_eq(d.solver.integrator, MBS_INTEGRATOR_EM);
  ck_assert_double_eq(d.solver.dt, 1e-3);
  ck_assert_double_eq(d.solver.t_end, 10.0);
  ck_assert_double_eq(d.solver.newton_tolerance, 1e-9);
  ck_assert_int_eq(d.solver.newton_max_iterations, 30);
  ck_assert_str_eq(d.output.file, "double_pendulum.h5");
  ck_assert_int_eq(d.output.every, 10);
  ck_assert_int_eq(d.output.xdmf, 0);

  /* no overrides: the text is the file, verbatim */
  ck_assert_str_eq(d.text, pendulum);
  mbs_deck_free(&d);
  ck_assert_ptr_null(d.bodies);
  ck_assert_ptr_null(d.text);
}
END_TEST

START_TEST(test_defaults) {
  mbsDeck d;
  char dir[64];
  char *path = write_named("pend.yaml",
                           ONE_BODY("{name: bob, type: point, mass: 1, "
                                    "position: [0, 0, 0]}"),
                           dir);
  mbsError e;
  ck_assert_int_eq(mbs_deck_load(&d, path, NULL, 0, &e), MBS_OK);
  ck_assert_str_eq(d.path, path);
  ck_assert_str_eq(d.title, "");
  assert_vec(d.gravity, (double[]){0, 0, 0}, 3, 0);
  ck_assert_int_eq(d.njoint, 0);
  ck_assert_int_eq(d.nload, 0);
  ck_assert_ptr_null(d.joints);
  ck_assert_int_eq(d.solver.integrator, MBS_INTEGRATOR_AUTO);
  ck_assert_double_eq(d.solver.dt, 1e-3);
  ck_assert_double_eq(d.solver.t_end, 1.0);
  ck_assert_double_eq(d.solver.newton_tolerance, 1e-10);
  ck_assert_int_eq(d.solver.newton_max_iterations, 25);
  ck_assert_str_eq(d.output.file, "pend.h5");
  ck_assert_int_eq(d.output.every, 1);
  ck_assert_int_eq(d.output.xdmf, 1);
  mbs_deck_free(&d);
  unlink(path);
  free(path);
  rmdir(dir);

  /* .yml too; other names just get .h5 appended */
  path = write_named("a.b.yml", ONE_BODY("{name: bob, type: point, mass: 1, position: [0, 0, 0]}"),
                     dir);
  ck_assert_int_eq(mbs_deck_load(&d, path, NULL, 0, &e), MBS_OK);
  ck_assert_str_eq(d.output.file, "a.b.h5");
  mbs_deck_free(&d);
  unlink(path);
  free(path);
  rmdir(dir);
  path = write_named("deck.txt", ONE_BODY("{name: bob, type: point, mass: 1, position: [0, 0, 0]}"),
                     dir);
  ck_assert_int_eq(mbs_deck_load(&d, path, NULL, 0, &e), MBS_OK);
  ck_assert_str_eq(d.output.file, "deck.txt.h5");
  mbs_deck_free(&d);
  unlink(path);
  free(path);
  rmdir(dir);

  /* empty optional sections */
  load_ok("mbsim: 1\nparameters:\njoints:\nloads: []\nsolver:\noutput: {}\nbodies:\n"
          "  - {name: bob, type: point, mass: 1, position: [0, 0, 0]}\n",
          NULL, 0, &d);
  ck_assert_int_eq(d.nbody, 1);
  mbs_deck_free(&d);
}
END_TEST

/* solver.tolerance: parsed with its mark; without dt the largest step is t_end / 20 and
 * records fall every t_end / 100 (unless output says otherwise); refused out of range and for
 * the integrators without an error estimate, at the key */
START_TEST(test_tolerance) {
  mbsDeck d;
  const char *body = "bodies:\n  - {name: bob, type: point, mass: 1, position: [0, 0, 0]}\n";
  char text[512];
  snprintf(text, sizeof(text), "mbsim: 1\n%ssolver: {tolerance: 1.0e-6, t_end: 2}\n", body);
  load_ok(text, NULL, 0, &d);
  ck_assert_double_eq(d.solver.tolerance, 1e-6);
  ck_assert_int_eq(d.solver.tolerance_mark.line, 4);
  ck_assert_int_eq(d.solver.dt_given, 0);
  ck_assert_double_eq_tol(d.solver.dt, 0.1, 1e-15);
  ck_assert_double_eq_tol(d.output.dt, 0.02, 1e-15);
  mbs_deck_free(&d);
  /* dt given: it is the largest step, and records follow output.every */
  snprintf(text, sizeof(text),
           "mbsim: 1\n%ssolver: {tolerance: 1.0e-6, t_end: 2, dt: 0.01}\n", body);
  load_ok(text, NULL, 0, &d);
  ck_assert_int_eq(d.solver.dt_given, 1);
  ck_assert_double_eq(d.solver.dt, 0.01);
  ck_assert_double_eq(d.output.dt, 0.0);
  mbs_deck_free(&d);
  /* output.every given: no default output.dt */
  snprintf(text, sizeof(text),
           "mbsim: 1\n%ssolver: {tolerance: 1.0e-6}\noutput: {every: 2}\n", body);
  load_ok(text, NULL, 0, &d);
  ck_assert_double_eq(d.output.dt, 0.0);
  ck_assert_double_eq_tol(d.solver.dt, 0.05, 1e-15);
  mbs_deck_free(&d);
  /* without tolerance: fixed steps */
  snprintf(text, sizeof(text), "mbsim: 1\n%ssolver: {t_end: 2}\n", body);
  load_ok(text, NULL, 0, &d);
  ck_assert_double_eq(d.solver.tolerance, 0.0);
  ck_assert_double_eq(d.solver.dt, 1e-3);
  mbs_deck_free(&d);
  snprintf(text, sizeof(text), "mbsim: 1\n%ssolver: {tolerance: 0.5}\n", body);
  load_bad(text, NULL, 0, MBS_ERR_DECK, 4, 21, "tolerance must be in [1e-10, 0.1]");
  const char *words[] = {"euler", "static", "moreau"};
  for (int i = 0; i < 3; i++) {
    snprintf(text, sizeof(text), "mbsim: 1\n%ssolver: {integrator: %s, tolerance: 1.0e-6}\n",
             body, words[i]);
    int col = 35 + (int)strlen(words[i]);
    load_bad(text, NULL, 0, MBS_ERR_DECK, 4, col, "em, midpoint, genalpha and spacetime only");
  }
  /* spacetime takes a tolerance: without dt its largest step is t_end / 20 */
  snprintf(text, sizeof(text),
           "mbsim: 1\n%ssolver: {integrator: spacetime, tolerance: 1.0e-6, t_end: 2}\n", body);
  load_ok(text, NULL, 0, &d);
  ck_assert_double_eq_tol(d.solver.dt, 0.1, 1e-15);
  ck_assert_double_eq_tol(d.output.dt, 0.02, 1e-15);
  mbs_deck_free(&d);
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* mass properties */

START_TEST(test_shapes) {
  mbsDeck d;
  const double pi = 3.14159265358979323846;
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: box, shape: {box: [1, 2, 3]}, density: 2, position: [0, 0, 0]}\n"
          "  - {name: ball, shape: {sphere: 0.5}, density: 3, position: [1, 0, 0]}\n"
          "  - name: can\n"
          "    shape: {cylinder: {radius: 0.2, length: 1.5}}\n"
          "    density: 7800\n"
          "    position: [2, 0, 0]\n",
          NULL, 0, &d);

  /* box: m = rho a b c, I1 = m (b^2 + c^2) / 12 */
  const mbsDeckBody *b = &d.bodies[0];
  double m = 2.0 * 6.0;
  ck_assert_double_eq_tol(b->mass, m, TOL);
  assert_vec(b->inertia, (double[]){m * 13 / 12, 0, 0, 0, m * 10 / 12, 0, 0, 0, m * 5 / 12}, 9,
             1e-12 * m);
  ck_assert_int_eq(b->has_shape, 1);
  ck_assert_str_eq(b->shape_kind, "box");
  assert_vec(b->shape_size, (double[]){1, 2, 3}, 3, 0);

  /* sphere: m = rho 4/3 pi r^3, I = 2/5 m r^2 */
  b = &d.bodies[1];
  m = 3.0 * 4.0 / 3.0 * pi * 0.125;
  ck_assert_double_eq_tol(b->mass, m, 1e-14);
  double I = 0.4 * m * 0.25;
  assert_vec(b->inertia, (double[]){I, 0, 0, 0, I, 0, 0, 0, I}, 9, 1e-14);
  ck_assert_str_eq(b->shape_kind, "sphere");
  ck_assert_double_eq(b->shape_size[0], 0.5);

  /* cylinder along d3: m = rho pi r^2 l, I3 = m r^2 / 2, I1 = I2 = m (3 r^2 + l^2) / 12 */
  b = &d.bodies[2];
  m = 7800 * pi * 0.04 * 1.5;
  ck_assert_double_eq_tol(b->mass, m, 1e-12 * m);
  double I1 = m * (3 * 0.04 + 2.25) / 12, I3 = m * 0.04 / 2;
  assert_vec(b->inertia, (double[]){I1, 0, 0, 0, I1, 0, 0, 0, I3}, 9, 1e-12 * m);
  ck_assert_str_eq(b->shape_kind, "cylinder");
  assert_vec(b->shape_size, (double[]){0.2, 1.5, 0}, 3, 0);
  mbs_deck_free(&d);

  /* shape + mass: the shape's inertia scaled to the mass (uniform density m / volume), the
   * same closed forms; shape + mass + inertia: the given inertia, the shape kept as geometry */
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: box, mass: 2, shape: {box: [0.1, 0.2, 0.3]}, position: [0, 0, 0]}\n"
          "  - {name: ball, mass: 5, shape: {sphere: 0.5}, position: [1, 0, 0]}\n"
          "  - {name: can, mass: 3, shape: {cylinder: {radius: 0.2, length: 1.5}},\n"
          "     position: [2, 0, 0]}\n"
          "  - {name: given, mass: 4, inertia: [1, 2, 2.5], shape: {box: [1, 1, 1]},\n"
          "     position: [3, 0, 0]}\n",
          NULL, 0, &d);
  b = &d.bodies[0];
  ck_assert_double_eq_tol(b->mass, 2.0, 1e-15);
  assert_vec(b->inertia,
             (double[]){2 * 0.13 / 12, 0, 0, 0, 2 * 0.10 / 12, 0, 0, 0, 2 * 0.05 / 12}, 9,
             1e-15);
  ck_assert_str_eq(b->shape_kind, "box");
  b = &d.bodies[1];
  ck_assert_double_eq_tol(b->mass, 5.0, 1e-15);
  I = 0.4 * 5.0 * 0.25;
  assert_vec(b->inertia, (double[]){I, 0, 0, 0, I, 0, 0, 0, I}, 9, 1e-14);
  b = &d.bodies[2];
  I1 = 3.0 * (3 * 0.04 + 2.25) / 12;
  I3 = 3.0 * 0.04 / 2;
  ck_assert_double_eq_tol(b->mass, 3.0, 1e-15);
  assert_vec(b->inertia, (double[]){I1, 0, 0, 0, I1, 0, 0, 0, I3}, 9, 1e-14);
  b = &d.bodies[3];
  ck_assert_double_eq(b->mass, 4.0);
  assert_vec(b->inertia, (double[]){1, 0, 0, 0, 2, 0, 0, 0, 2.5}, 9, 0);
  ck_assert_int_eq(b->has_shape, 1);
  ck_assert_str_eq(b->shape_kind, "box");
  mbs_deck_free(&d);
}
END_TEST

START_TEST(test_euler_tensor) {
  mbsDeck d;

  /* I = tr(E) 1 - E: I11 = E22 + E33, ... */
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: a, mass: 2, euler_tensor: [1, 2, 3], position: [0, 0, 0]}\n"
          "  - name: b\n"
          "    mass: 1\n"
          "    euler_tensor: [[1, 0.5, 0], [0.5, 2, 0.25], [0, 0.25, 3]]\n"
          "    position: [0, 0, 0]\n"
          "  - {name: plate, mass: 1, euler_tensor: [1, 2, 0], position: [0, 0, 0]}\n",
          NULL, 0, &d);
  assert_vec(d.bodies[0].inertia, (double[]){5, 0, 0, 0, 4, 0, 0, 0, 3}, 9, TOL);
  assert_vec(d.bodies[1].inertia, (double[]){5, -0.5, 0, -0.5, 4, -0.25, 0, -0.25, 3}, 9, TOL);
  assert_vec(d.bodies[2].inertia, (double[]){2, 0, 0, 0, 1, 0, 0, 0, 3}, 9, TOL);
  mbs_deck_free(&d);

  /* a negative second moment, and a rod (two zero eigenvalues) */
  load_bad(ONE_BODY("{name: a, mass: 1, euler_tensor: [1, -1, 1], position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 38, "euler_tensor is not positive semi-definite");
  load_bad(ONE_BODY("{name: a, mass: 1, euler_tensor: [0, 0, 1], position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 38, "inertia is degenerate");
}
END_TEST

START_TEST(test_inertia_checks) {
  mbsDeck d;

  /* thin plates (I3 = I1 + I2, E33 = 0) are valid, also with decimal round-off */
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: a, mass: 1, inertia: [1, 2, 3], position: [0, 0, 0]}\n"
          "  - {name: b, mass: 1, inertia: [0.1, 0.2, 0.3], position: [0, 0, 0]}\n"
          "  - {name: c, mass: 1, inertia: [0.3, 0.1, 0.2], position: [0, 0, 0]}\n"
          "  - name: d\n"
          "    mass: 1\n"
          "    inertia: [[1.5, 0.5, 0], [0.5, 1.5, 0], [0, 0, 3]]\n"
          "    position: [0, 0, 0]\n",
          NULL, 0, &d);
  assert_vec(d.bodies[3].inertia, (double[]){1.5, 0.5, 0, 0.5, 1.5, 0, 0, 0, 3}, 9, 0);
  mbs_deck_free(&d);

  /* off-diagonal inertia: principal moments 1, 2, 4 violate the triangle inequality */
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [[1.5, 0.5, 0], [0.5, 1.5, 0], [0, 0, 4]], "
                    "position: [0, 0, 0]}"),
           NULL, 0, MBS_ERR_DECK, 3, 33, "triangle inequality");
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [0, 0, 0], position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 33, "inertia is all zero");
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [[1, 0], [0, 1]], position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 33, "inertia: expected [a, b, c] or a 3x3 list of lists");

  /* exactly one of mass + inertia, mass + euler_tensor, shape + density, shape + mass */
  load_bad(ONE_BODY("{name: a, mass: 1, position: [0, 0, 0]}"), NULL, 0, MBS_ERR_DECK, 3, 5,
           "missing required key 'inertia'");
  load_bad(ONE_BODY("{name: a, inertia: [1, 1, 1], position: [0, 0, 0]}"), NULL, 0, MBS_ERR_DECK, 3,
           5, "missing required key 'mass'");
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], euler_tensor: [1, 1, 1], "
                    "position: [0, 0, 0]}"),
           NULL, 0, MBS_ERR_DECK, 3, 44, "give inertia or euler_tensor, not both");
  load_bad(ONE_BODY("{name: a, mass: 1, shape: {sphere: 1}, density: 1, position: [0, 0, 0]}"),
           NULL, 0, MBS_ERR_DECK, 3, 15, "not both 'mass' and 'density'");
  load_bad(ONE_BODY("{name: a, inertia: [1, 1, 1], shape: {sphere: 1}, position: [0, 0, 0]}"),
           NULL, 0, MBS_ERR_DECK, 3, 15, "inertia needs 'mass'");
  load_bad(ONE_BODY("{name: a, shape: {sphere: 1}, position: [0, 0, 0]}"), NULL, 0, MBS_ERR_DECK, 3,
           15, "shape needs 'density'");
  load_bad(ONE_BODY("{name: a, shape: {sphere: 1, box: [1, 1, 1]}, density: 1, "
                    "position: [0, 0, 0]}"),
           NULL, 0, MBS_ERR_DECK, 3, 22, "give exactly one of box, sphere, cylinder");
  load_bad(ONE_BODY("{name: a, shape: {cube: 1}, density: 1, position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 23, "unknown key 'cube' in bodies[0] 'a' shape");
  load_bad(ONE_BODY("{name: a, shape: {box: [1, 0, 1]}, density: 1, position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 28, "shape.box: sizes must be > 0");
  load_bad(ONE_BODY("{name: a, shape: {cylinder: {radius: 1}}, density: 1, position: [0, 0, 0]}"),
           NULL, 0, MBS_ERR_DECK, 3, 33, "shape.cylinder: needs radius and length");
  load_bad(ONE_BODY("{name: a, shape: {sphere: 1}, density: 0, position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 44, "density must be > 0 (got 0)");
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* orientation */

/* axes and quaternions of any finite size are directions: normalised without overflow or
 * underflow in the squares (1e200 and 1e-200 once gave "must be a nonzero vector") */
START_TEST(test_extreme_axes) {
  mbsDeck d;
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {axis: [0, 0, 1e200], angle_deg: 90}}\n"
          "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 1],\n"
          "     orientation: {axis: [0, 0, 1e-200], angle_deg: 90}}\n"
          "  - {name: c, mass: 1, inertia: [1, 1, 1], position: [0, 0, 2],\n"
          "     orientation: {quaternion: [1e200, 0, 0, 1e200]}}\n"
          "  - {name: e, mass: 1, inertia: [1, 1, 1], position: [0, 0, 3],\n"
          "     orientation: {quaternion: [1e-200, 0, 0, 1e-200]}}\n"
          "joints:\n"
          "  - {name: h, type: revolute, bodies: [ground, a], point: [0, 0, 0],\n"
          "     axis: [3e200, 4e200, 0]}\n"
          "  - {name: u, type: universal, bodies: [a, b], point: [0, 0, 0.5],\n"
          "     axes: [[1e-300, 0, 0], [0, 1e300, 0]]}\n",
          NULL, 0, &d);
  const double rz[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
  for (int b = 0; b < 4; b++) {
    assert_vec(d.bodies[b].directors, rz, 9, 1e-15);
  }
  assert_vec(d.joints[0].axis, (double[]){0.6, 0.8, 0}, 3, 1e-15);
  assert_vec(d.joints[1].axes[0], (double[]){1, 0, 0}, 3, 0);
  assert_vec(d.joints[1].axes[1], (double[]){0, 1, 0}, 3, 0);
  mbs_deck_free(&d);
}
END_TEST

START_TEST(test_orientation) {
  mbsDeck d;
  load_ok("mbsim: 1\nbodies:\n"
          "  - name: q\n"
          "    mass: 1\n"
          "    inertia: [1, 1, 1]\n"
          "    position: [0, 0, 0]\n"
          "    orientation: {quaternion: [0.7071067811865476, 0, 0, 0.7071067811865476]}\n"
          "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {axis: [0, 0, 2], angle: 1.5707963267948966}}\n"
          "  - {name: g, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {axis: [0, 0, 1], angle_deg: 90}}\n"
          "  - {name: dr, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {directors: [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]}}\n"
          "  - {name: q2, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {quaternion: [2, 0, 0, 0]}}\n"
          "  - {name: x, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {axis: [1, 0, 0], angle_deg: 90}}\n",
          NULL, 0, &d);

  /* 90 degrees about z: d1 = e2, d2 = -e1, d3 = e3; column i of R is d_i */
  const double rz[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
  assert_vec(d.bodies[0].directors, rz, 9, 1e-15);
  assert_vec(d.bodies[1].directors, rz, 9, 1e-15);
  assert_vec(d.bodies[2].directors, rz, 9, 1e-15);
  assert_vec(d.bodies[3].directors, rz, 9, 0);
  assert_vec(d.bodies[4].directors, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9, 0);

  /* 90 degrees about x: d2 = e3, d3 = -e2 */
  assert_vec(d.bodies[5].directors, (double[]){1, 0, 0, 0, 0, -1, 0, 1, 0}, 9, 1e-15);
  mbs_deck_free(&d);

  /* quaternion and axis-angle agree for a general rotation */
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {axis: [1, 2, 3], angle: 0.7}}\n"
          "  - {name: q, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {quaternion: [$w, $x, $y, $z]}}\n"
          "parameters: {w: 0.9393727128473789, x: 0.0916432938695913,\n"
          "             y: 0.1832865877391826, z: 0.2749298816087739}\n",
          NULL, 0, &d);
  assert_vec(d.bodies[0].directors, d.bodies[1].directors, 9, 1e-14);
  mbs_deck_free(&d);

  /* bad forms */
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                    "orientation: {axis: [0, 0, 1]}}"),
           NULL, 0, MBS_ERR_DECK, 3, 85, "axis needs angle");
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                    "orientation: {axis: [0, 0, 0], angle: 1}}"),
           NULL, 0, MBS_ERR_DECK, 3, 85, "orientation.axis must be a nonzero vector");
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                    "orientation: {quaternion: [0, 0, 0, 0]}}"),
           NULL, 0, MBS_ERR_DECK, 3, 91, "orientation.quaternion must be nonzero");
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                    "orientation: {axis: [0, 0, 1], angle: 1, angle_deg: 2}}"),
           NULL, 0, MBS_ERR_DECK, 3, 117, "give angle or angle_deg, not both");
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                    "orientation: {angel: 1}}"),
           NULL, 0, MBS_ERR_DECK, 3, 79,
           "unknown key 'angel' in bodies[0] 'a' orientation; "
           "did you mean 'angle'?");

  /* directors within 1e-9 pass, beyond fail */
  load_ok(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                   "orientation: {directors: [[1, 0, 0], [0, 1, 1e-10], [0, 0, 1]]}}"),
          NULL, 0, &d);
  mbs_deck_free(&d);
  load_bad(ONE_BODY("{name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0], "
                    "orientation: {directors: [[1, 0, 0], [0, 1, 1e-8], [0, 0, 1]]}}"),
           NULL, 0, MBS_ERR_DECK, 3, 90, "directors are not orthonormal");
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* parameters */

START_TEST(test_parameters) {
  mbsDeck d;
  load_ok("mbsim: 1\n"
          "title: $L\n"
          "parameters: {L: 2.5, m: 3, n: 4, I: 0.5, neg: -1e-3}\n"
          "gravity: [0, 0, $neg]\n"
          "bodies:\n"
          "  - {name: a, mass: $m, inertia: [[$I, 0, 0], [0, $I, 0], [0, 0, $I]],\n"
          "     position: [$L, 0, 0]}\n"
          "output: {every: $n}\n",
          NULL, 0, &d);
  ck_assert_str_eq(d.title, "$L"); /* strings are not substituted */
  ck_assert_double_eq(d.gravity[2], -1e-3);
  ck_assert_double_eq(d.bodies[0].mass, 3.0);
  ck_assert_double_eq(d.bodies[0].inertia[4], 0.5);
  ck_assert_double_eq(d.bodies[0].position[0], 2.5);
  ck_assert_int_eq(d.output.every, 4);
  mbs_deck_free(&d);

  load_bad("mbsim: 1\nparameters: {a: $b, b: 1}\n", NULL, 0, MBS_ERR_DECK, 2, 17,
           "parameters.a: parameter '$b' is defined below it: a parameter may refer only to the "
           "ones above it");
  /* a parameter as an expression of the ones above; unknown names, syntax errors located */
  load_ok("mbsim: 1\nparameters: {m: 2, L: 0.5, I: \"$m * ($L^2 + 0.02^2) / 12\"}\n"
          "bodies: [{name: b, mass: $m, inertia: [\"$I\", \"$I\", \"2 * $I\"],\n"
          "          position: [0, \"-$L / 2\", \"atan2(1, 1) * 4 - pi\"]}]\n",
          NULL, 0, &d);
  ck_assert_double_eq_tol(d.bodies[0].inertia[0], 2.0 * (0.25 + 0.0004) / 12, 1e-15);
  ck_assert_double_eq_tol(d.bodies[0].inertia[8], 4.0 * (0.25 + 0.0004) / 12, 1e-15);
  ck_assert_double_eq(d.bodies[0].position[1], -0.25);
  ck_assert_double_eq_tol(d.bodies[0].position[2], 0.0, 1e-15);
  ck_assert_ptr_null(d.warnings);
  mbs_deck_free(&d);
  load_bad("mbsim: 1\nparameters: {L: 1}\nbodies: [{name: b, type: point, mass: \"2 * $Lx\", "
           "position: [0, 0, 0]}]\n",
           NULL, 0, MBS_ERR_DECK, 3, 44, "mass: unknown parameter '$Lx'; did you mean '$L'?");
  load_bad("mbsim: 1\nbodies: [{name: b, type: point, mass: \"(2 + 3\", position: [0, 0, 0]}]\n",
           NULL, 0, MBS_ERR_DECK, 2, 40,
           "mass: missing ')' for the '(' at character 1 (got the end), in the expression "
           "'(2 + 3'");
  load_bad("mbsim: 1\nbodies: [{name: b, type: point, mass: \"1 = 2\", position: [0, 0, 0]}]\n",
           NULL, 0, MBS_ERR_DECK, 2, 42, "mass: '=' is not part of an expression");
  load_bad("mbsim: 1\nbodies: [{name: b, type: point, mass: \"1/0\", position: [0, 0, 0]}]\n",
           NULL, 0, MBS_ERR_DECK, 2, 39, "mass: the expression '1/0' is not a finite number");
  load_bad("mbsim: 1\nbodies: [{name: b, type: point, mass: \"max(1 2)\", position: [0, 0, "
           "0]}]\n",
           NULL, 0, MBS_ERR_DECK, 2, 46,
           "mass: expected ',' or ')' in the arguments of max, got '2', in the expression");
  /* profile expressions: of t only; t nowhere else */
  load_ok("mbsim: 1\nparameters: {w: 2}\nbodies: [{name: b, type: point, mass: 1, position: [0, 0, "
          "0]}]\nloads: [{name: f, type: force, body: b, value: [1, 0, 0], profile: {expression: "
          "\"sin($w * t)\"}}]\n",
          NULL, 0, &d);
  ck_assert_int_eq(d.loads[0].profile.kind, MBS_PROFILE_EXPRESSION);
  ck_assert_str_eq(d.loads[0].profile.expr, "sin((2) * t)");
  mbs_deck_free(&d);
  load_bad("mbsim: 1\nbodies: [{name: b, type: point, mass: 1, position: [0, 0, 0]}]\nloads: "
           "[{name: f, type: force, body: b, value: [1, 0, 0], profile: {expression: "
           "\"atan2(t, x)\"}}]\n",
           NULL, 0, MBS_ERR_DECK, 3, 91, "profile.expression: unknown name 'x' (a parameter is "
           "written $name; the names are pi and t), in the expression 'atan2(t, x)'");
  load_bad("mbsim: 1\nbodies: [{name: b, type: point, mass: \"2 * t\", position: [0, 0, 0]}]\n",
           NULL, 0, MBS_ERR_DECK, 2, 44, "mass: t is the time of a profile expression");
  /* relative placement: a body in the frame of one above it, a joint in a body's frame */
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [1, 2, 3],\n"
          "     orientation: {axis: [0, 0, 1], angle_deg: 90}}\n"
          "  - {name: b, mass: 1, inertia: [1, 1, 1], relative_to: a, position: [0.5, 0, 0.25],\n"
          "     orientation: {axis: [1, 0, 0], angle_deg: 90}}\n"
          "joints:\n"
          "  - {name: j, type: revolute, bodies: [a, b], relative_to: a, point: [0.5, 0, 0],\n"
          "     axis: [0, 1, 0]}\n",
          NULL, 0, &d);
  /* a's d1 = y, d2 = -x, d3 = z: b's centre = (1, 2, 3) + 0.5 y + 0.25 z */
  ck_assert_double_eq_tol(d.bodies[1].position[0], 1.0, 1e-15);
  ck_assert_double_eq_tol(d.bodies[1].position[1], 2.5, 1e-15);
  ck_assert_double_eq_tol(d.bodies[1].position[2], 3.25, 1e-15);
  /* b's d2 = R_a (R_x(90) e2) = R_a e3 = z (column 1 of the row-major matrix) */
  ck_assert_double_eq_tol(d.bodies[1].directors[3 * 2 + 1], 1.0, 1e-15);
  /* the joint point (1, 2.5, 3) and its axis R_a e2 = -x */
  ck_assert_double_eq_tol(d.joints[0].point[1], 2.5, 1e-15);
  ck_assert_double_eq_tol(d.joints[0].axis[0], -1.0, 1e-15);
  mbs_deck_free(&d);
  load_bad("mbsim: 1\nbodies:\n  - {name: a, mass: 1, inertia: [1, 1, 1], relative_to: b, "
           "position: [0, 0, 0]}\n  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n",
           NULL, 0, MBS_ERR_DECK, 3, 57, "relative_to: 'b' is not a body defined above 'a'");
  /* a parameter nothing uses is a warning, at its key */
  load_ok("mbsim: 1\nparameters: {m: 2, spare: 1}\n"
          "bodies: [{name: b, type: point, mass: $m, position: [0, 0, 0]}]\n",
          NULL, 0, &d);
  ck_assert_ptr_nonnull(d.warnings);
  ck_assert_ptr_nonnull(strstr(d.warnings, ":2:20: parameter 'spare' is not used\n"));
  mbs_deck_free(&d);
  /* --set parameters.NAME for a NAME the deck does not define */
  const mbsOverride typo[] = {{"parameters.mm", "3"}};
  load_bad("mbsim: 1\nparameters: {m: 2}\n"
           "bodies: [{name: b, type: point, mass: $m, position: [0, 0, 0]}]\n",
           typo, 1, MBS_ERR_ARGS, 0, 0,
           "--set parameters.mm=3: the deck defines no parameter 'mm' (its parameters: 'm')");
  load_bad("mbsim: 1\nparameters: {a: 1, 2b: 3}\n", NULL, 0, MBS_ERR_DECK, 2, 20,
           "parameters: name '2b' must be a letter");
  load_bad("mbsim: 1\nparameters: {a: x}\n", NULL, 0, MBS_ERR_DECK, 2, 17,
           "parameters.a: expected a number (got 'x')");
  load_bad("mbsim: 1\nparameters: [1]\n", NULL, 0, MBS_ERR_DECK, 2, 13,
           "parameters: expected a mapping of names to numbers");
  load_bad("mbsim: 1\nparameters: {k: 1.5}\noutput: {every: $k}\n"
           "bodies: [{name: b, type: point, mass: 1, position: [0, 0, 0]}]\n",
           NULL, 0, MBS_ERR_DECK, 3, 17, "every: expected an integer (parameter 'k' is 1.5)");
  load_bad(ONE_BODY("{name: b, type: point, mass: $m, position: [0, 0, 0]}"), NULL, 0, MBS_ERR_DECK,
           3, 34, "mass: unknown parameter '$m' (the deck defines no parameters)");
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* anchors, aliases, merge keys */

START_TEST(test_merge_keys) {
  mbsDeck d;
  load_ok("mbsim: 1\n"
          "bodies:\n"
          "  - &base\n"
          "    name: a\n"
          "    mass: 1\n"
          "    inertia: &I [1, 2, 2]\n"
          "    position: [0, 0, 0]\n"
          "  - <<: *base\n" /* explicit keys win over merged ones */
          "    name: b\n"
          "    mass: 5\n"
          "  - &heavy\n"
          "    mass: 7\n"
          "    position: [1, 1, 1]\n"
          "    <<: *base\n" /* a merge key after the explicit keys: still explicit wins */
          "    name: c\n"
          "  - <<: [*heavy, *base]\n" /* earlier sources win over later ones */
          "    name: d\n"
          "  - {name: e, mass: 1, inertia: *I, position: [2, 2, 2]}\n",
          NULL, 0, &d);
  ck_assert_int_eq(d.nbody, 5);
  ck_assert_double_eq(d.bodies[0].mass, 1);
  ck_assert_double_eq(d.bodies[1].mass, 5);
  assert_vec(d.bodies[1].inertia, (double[]){1, 0, 0, 0, 2, 0, 0, 0, 2}, 9, 0);
  ck_assert_double_eq(d.bodies[2].mass, 7);
  ck_assert_double_eq(d.bodies[3].mass, 7);
  assert_vec(d.bodies[3].position, (double[]){1, 1, 1}, 3, 0);
  ck_assert_str_eq(d.bodies[3].name, "d");
  assert_vec(d.bodies[4].inertia, (double[]){1, 0, 0, 0, 2, 0, 0, 0, 2}, 9, 0);
  mbs_deck_free(&d);

  /* merged keys are validated too, at their own position */
  load_bad("mbsim: 1\n"
           "bodies:\n"
           "  - &b {name: a, type: point, mass: 1, position: [0, 0, 0]}\n"
           "  - <<: *b\n"
           "    name: b\n"
           "    mass: -2\n",
           NULL, 0, MBS_ERR_DECK, 6, 11, "bodies[1] 'b': mass must be > 0 (got -2)");
  load_bad("mbsim: 1\n"
           "bodies:\n"
           "  - {name: a, type: point, mass: 1, position: [0, 0, 0]}\n"
           "  - <<: {name: x, typo: 1}\n"
           "    name: b\n",
           NULL, 0, MBS_ERR_DECK, 4, 19, "unknown key 'typo' in bodies[1] 'b'");
  load_bad("mbsim: 1\nbodies:\n  - <<: [{a: 1}, 2]\n", NULL, 0, MBS_ERR_DECK, 3, 18,
           "'<<' (merge key) takes a mapping or a list of mappings, got a scalar");
  load_bad("mbsim: 1\nbodies:\n  - {name: a, <<: {}, <<: {}}\n", NULL, 0, MBS_ERR_DECK, 3, 23,
           "duplicate key '<<'");
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* --set overrides */

static const char *small = "mbsim: 1\n"
                           "parameters:\n"
                           "  m: 2\n"
                           "bodies:\n"
                           "  - &b\n"
                           "    name: link.1\n"
                           "    mass: $m\n"
                           "    inertia: [1, 1, 1]\n"
                           "    position: [0, 0, 0]\n"
                           "  - <<: *b\n"
                           "    name: link2\n"
                           "    position: [1, 0, 0]\n"
                           "gravity: [0, 0, -9.81]\n";

START_TEST(test_overrides) {
  mbsDeck d, again;
  mbsError e;

  /* replace, select by name (names may hold dots), add missing keys and mappings */
  const mbsOverride ov[] = {
      {"parameters.m", "3"},   {"bodies.link.1.mass", "4"},
      {"solver.dt", "1e-4"},   {"solver.newton.max_iterations", "7"},
      {"output.every", "5"},   {"output.xdmf", "false"},
      {"gravity.2", "-1.62"},  {"title", "swept: m=3"},
  };
  load_ok(small, ov, 8, &d);
  ck_assert_double_eq(d.bodies[0].mass, 4);
  ck_assert_double_eq(d.bodies[1].mass, 3); /* $m, overridden, through the merge */
  ck_assert_double_eq(d.solver.dt, 1e-4);
  ck_assert_int_eq(d.solver.newton_max_iterations, 7);
  ck_assert_double_eq(d.solver.newton_tolerance, 1e-10);
  ck_assert_int_eq(d.output.every, 5);
  ck_assert_int_eq(d.output.xdmf, 0);
  ck_assert_double_eq(d.gravity[2], -1.62);
  ck_assert_str_eq(d.title, "swept: m=3");

  /* the text is the modified document, re-emitted: it loads to the same deck */
  ck_assert_ptr_nonnull(strstr(d.text, "dt: 1e-4"));
  ck_assert_ptr_null(strstr(d.text, "# "));
  ck_assert_int_eq(load_text(d.text, NULL, 0, &again, &e), MBS_OK);
  ck_assert_double_eq(again.bodies[0].mass, 4);
  ck_assert_double_eq(again.bodies[1].mass, 3);
  ck_assert_double_eq(again.solver.dt, 1e-4);
  ck_assert_int_eq(again.solver.newton_max_iterations, 7);
  ck_assert_double_eq(again.gravity[2], -1.62);
  ck_assert_str_eq(again.title, "swept: m=3");
  mbs_deck_free(&again);
  mbs_deck_free(&d);

  /* a value that only one entry shares through an anchor changes for that entry only */
  const mbsOverride one[] = {{"bodies.link2.mass", "9"}, {"bodies.link.1.position.1", "5"}};
  load_ok(small, one, 2, &d);
  ck_assert_double_eq(d.bodies[0].mass, 2);
  ck_assert_double_eq(d.bodies[1].mass, 9);
  assert_vec(d.bodies[0].position, (double[]){0, 5, 0}, 3, 0);
  assert_vec(d.bodies[1].position, (double[]){1, 0, 0}, 3, 0);
  ck_assert_int_eq(load_text(d.text, NULL, 0, &again, &e), MBS_OK);
  ck_assert_double_eq(again.bodies[0].mass, 2);
  ck_assert_double_eq(again.bodies[1].mass, 9);
  assert_vec(again.bodies[0].position, (double[]){0, 5, 0}, 3, 0);
  mbs_deck_free(&again);
  mbs_deck_free(&d);

  /* a merged mapping edited through one entry stays as it was for the others */
  const mbsOverride orient[] = {{"bodies.link2.orientation.angle_deg", "90"}};
  load_ok("mbsim: 1\nbodies:\n"
          "  - &b {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "        orientation: {axis: [0, 0, 1], angle_deg: 0}}\n"
          "  - {<<: *b, name: link2}\n",
          orient, 1, &d);
  assert_vec(d.bodies[0].directors, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9, 1e-15);
  assert_vec(d.bodies[1].directors, (double[]){0, -1, 0, 1, 0, 0, 0, 0, 1}, 9, 1e-15);
  mbs_deck_free(&d);
}
END_TEST

/* a value written as a flow list replaces a list, a scalar or a missing key */
START_TEST(test_override_lists) {
  mbsDeck d, again;
  mbsError e;
  const mbsOverride ov[] = {
      {"bodies.link2.inertia", "[2, 3, 4]"},    /* merged from link.1: link2 only */
      {"gravity", " [0, 0, -1.62]"},            /* leading blanks */
      {"bodies.link.1.velocity", "[1, $m, 0]"}, /* a missing key; parameters inside */
      {"bodies.link.1.position", "[0, 0, 0.5]"},
  };
  load_ok(small, ov, 4, &d);
  assert_vec(d.bodies[1].inertia, (double[]){2, 0, 0, 0, 3, 0, 0, 0, 4}, 9, 0);
  assert_vec(d.bodies[0].inertia, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9, 0);
  assert_vec(d.gravity, (double[]){0, 0, -1.62}, 3, 0);
  assert_vec(d.bodies[0].velocity, (double[]){1, 2, 0}, 3, 0);
  assert_vec(d.bodies[0].position, (double[]){0, 0, 0.5}, 3, 0);
  assert_vec(d.bodies[1].position, (double[]){1, 0, 0}, 3, 0);
  /* the re-emitted text holds the lists and loads to the same deck */
  ck_assert_ptr_nonnull(strstr(d.text, "[2, 3, 4]"));
  ck_assert_int_eq(load_text(d.text, NULL, 0, &again, &e), MBS_OK);
  assert_vec(again.bodies[1].inertia, (double[]){2, 0, 0, 0, 3, 0, 0, 0, 4}, 9, 0);
  assert_vec(again.bodies[0].velocity, (double[]){1, 2, 0}, 3, 0);
  assert_vec(again.gravity, (double[]){0, 0, -1.62}, 3, 0);
  mbs_deck_free(&again);
  mbs_deck_free(&d);

  /* errors: not YAML, a list where a mapping is, a wrong length, too deep, too large */
  const mbsOverride open[] = {{"gravity", "[0, 0"}};
  load_bad(small, open, 1, MBS_ERR_ARGS, 0, 0, "--set gravity: '[0, 0' is not a valid YAML list");
  const mbsOverride onmap[] = {{"parameters", "[1]"}};
  load_bad(small, onmap, 1, MBS_ERR_ARGS, 0, 0,
           "'parameters' is a mapping; only scalars and lists can be set");
  const mbsOverride two[] = {{"gravity", "[0, -9.81]"}};
  load_bad(small, two, 1, MBS_ERR_DECK, 0, 0,
           "gravity: expected a list of 3 numbers (got 2 items) (from --set gravity=[0, -9.81])");
  char deep[256] = "";
  for (int k = 0; k < 70; k++) {
    strcat(deep, "[");
  }
  for (int k = 0; k < 70; k++) {
    strcat(deep, "]");
  }
  const mbsOverride nested[] = {{"gravity", deep}};
  load_bad(small, nested, 1, MBS_ERR_ARGS, 0, 0, "nested deeper than 64 levels");
  /* aliases inside the value are copied: 10^6 entries from a few lines are refused */
  const mbsOverride laughs[] = {
      {"gravity", "[&a [1,1,1,1,1,1,1,1,1,1], &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a], "
                  "&c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b], &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c], "
                  "&e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d], [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]]"}};
  load_bad(small, laughs, 1, MBS_ERR_ARGS, 0, 0, "together make more than 100000 YAML nodes");
}
END_TEST

/* all --set overrides together are bounded, not each one: 95 lists of 100,000 nodes each
 * once took 18 s and 1.6 GB */
START_TEST(test_override_totals) {
  mbsDeck d;
  /* a list of 30 x 300 = 9000 nodes from 1.5 kB; 11 of them pass 100,000 together */
  static char list[4096];
  int n = snprintf(list, sizeof(list), "[&a [");
  for (int k = 0; k < 300; k++) {
    n += snprintf(list + n, sizeof(list) - (size_t)n, "%s0", k ? "," : "");
  }
  n += snprintf(list + n, sizeof(list) - (size_t)n, "]");
  for (int k = 0; k < 29; k++) {
    n += snprintf(list + n, sizeof(list) - (size_t)n, ", *a");
  }
  snprintf(list + n, sizeof(list) - (size_t)n, "]");
  mbsOverride lists[12];
  char paths[12][32];
  for (int k = 0; k < 12; k++) {
    snprintf(paths[k], sizeof(paths[k]), "output.p%d", k);
    lists[k].path = paths[k];
    lists[k].value = list;
  }
  /* ten are fine (the keys are unknown: the deck then fails for that, not the bound) */
  load_bad(small, lists, 10, MBS_ERR_DECK, 0, 0, "output");
  /* the twelfth crosses the bound: named, with the bound */
  load_bad(small, lists, 12, MBS_ERR_ARGS, 0, 0,
           "--set output.p11: the --set values together make more than 100000 YAML nodes");

  /* at most 1000 overrides, at most 1 MiB of paths and values together */
  static mbsOverride many[1001];
  for (int k = 0; k < 1001; k++) {
    many[k].path = "gravity.0";
    many[k].value = "1";
  }
  load_ok(small, many, 1000, &d);
  ck_assert_double_eq(d.gravity[0], 1);
  mbs_deck_free(&d);
  load_bad(small, many, 1001, MBS_ERR_ARGS, 0, 0, "--set: 1001 overrides; at most 1000");
  static char big[60001];
  memset(big, '1', 60000);
  mbsOverride bigs[18];
  for (int k = 0; k < 18; k++) {
    bigs[k].path = "title";
    bigs[k].value = big;
  }
  load_bad(small, bigs, 18, MBS_ERR_ARGS, 0, 0,
           "--set: the paths and values together are 1080090 bytes; at most 1048576");
}
END_TEST

/* lists of 64 entries or more are searched through a hash of the names: the longest name
 * that prefixes the path wins, names may hold dots, a renamed entry is found by its new name
 * and entries shared through an anchor are still copied before they change */
START_TEST(test_override_index) {
  mbsDeck d;
  char text[16384];
  int n = snprintf(text, sizeof(text), "mbsim: 1\nbodies:\n");
  for (int k = 0; k < 70; k++) {
    n += snprintf(text + n, sizeof(text) - (size_t)n,
                  "  - {name: %s%d, type: point, mass: 1, position: [%d, 0, 0]}\n",
                  k == 5 ? "x" : k == 6 ? "x.y" : "b", k, k);
  }
  n += snprintf(text + n, sizeof(text) - (size_t)n,
                "  - &s {name: s, type: point, mass: 1, position: [0, 1, 0]}\n"
                "  - {<<: *s, name: t, position: [0, 2, 0]}\n");
  const mbsOverride ov[] = {
      {"bodies.b69.mass", "2"},       {"bodies.x5.mass", "3"},   /* "x5" */
      {"bodies.x.y6.mass", "4"},      {"bodies.b7.name", "r7"},  /* renamed ... */
      {"bodies.r7.mass", "5"},                                   /* ... found by the new name */
      {"bodies.8.mass", "6"},         {"bodies.t.mass", "7"},    /* an index; a merged entry */
  };
  load_ok(text, ov, 7, &d);
  ck_assert_int_eq(d.nbody, 72);
  ck_assert_double_eq(d.bodies[69].mass, 2);
  ck_assert_double_eq(d.bodies[5].mass, 3);
  ck_assert_double_eq(d.bodies[6].mass, 4);
  ck_assert_str_eq(d.bodies[7].name, "r7");
  ck_assert_double_eq(d.bodies[7].mass, 5);
  ck_assert_double_eq(d.bodies[8].mass, 6);
  ck_assert_double_eq(d.bodies[71].mass, 7);
  ck_assert_double_eq(d.bodies[70].mass, 1); /* the anchor's own entry is untouched */
  ck_assert_double_eq(d.bodies[0].mass, 1);
  mbs_deck_free(&d);
  const mbsOverride gone[] = {{"bodies.b7.name", "r7"}, {"bodies.b7.mass", "5"}};
  load_bad(text, gone, 2, MBS_ERR_ARGS, 0, 0, "no entry named 'b7' in 'bodies'");
}
END_TEST

START_TEST(test_override_errors) {
  /* paths that name nothing: MBS_ERR_ARGS without a position */
  const mbsOverride noent[] = {{"bodies.foo.mass", "1"}};
  load_bad(small, noent, 1, MBS_ERR_ARGS, 0, 0,
           "--set bodies.foo.mass: no entry named 'foo' in 'bodies'");
  const mbsOverride through[] = {{"solver.dt.x", "1"}};
  load_bad("mbsim: 1\nsolver: {dt: 1}\n", through, 1, MBS_ERR_ARGS, 0, 0,
           "--set solver.dt.x: 'dt' is a scalar; it has no 'x'");
  const mbsOverride nonscalar[] = {{"bodies.link2.inertia", "2"}};
  load_bad(small, nonscalar, 1, MBS_ERR_ARGS, 0, 0,
           "'inertia' is a list; only scalars and lists can be set (a list as [a, b, ...])");
  const mbsOverride entry[] = {{"bodies.link2", "1"}};
  load_bad(small, entry, 1, MBS_ERR_ARGS, 0, 0, "'link2' is a list entry; only scalars");
  const mbsOverride empty[] = {{"solver..dt", "1"}};
  load_bad(small, empty, 1, MBS_ERR_ARGS, 0, 0, "--set solver..dt: empty key in the path");
  const mbsOverride bad_index[] = {{"gravity.3", "1"}};
  load_bad(small, bad_index, 1, MBS_ERR_ARGS, 0, 0, "no entry named '3' in 'gravity'");

  /* overridden values are validated like the rest; they have no position */
  const mbsOverride neg[] = {{"bodies.link2.mass", "-1"}};
  load_bad(small, neg, 1, MBS_ERR_DECK, 0, 0,
           "bodies[1] 'link2': mass must be > 0 (got -1) (from --set bodies.link2.mass=-1)");
  const mbsOverride dt[] = {{"solver.dt", "0"}};
  load_bad(small, dt, 1, MBS_ERR_DECK, 0, 0, "solver: dt must be > 0 (got 0) (from --set");
  const mbsOverride typo[] = {{"solver.dtt", "1"}};
  load_bad(small, typo, 1, MBS_ERR_DECK, 0, 0,
           "unknown key 'dtt' in solver; did you mean 'dt'? (from --set solver.dtt=1)");
  const mbsOverride word[] = {{"solver.integrator", "rk4"}};
  load_bad(small, word, 1, MBS_ERR_DECK, 0, 0, "integrator 'rk4' is not supported");

  /* a long created path is bounded by the depth check */
  char path[256] = "solver.newton";
  for (int k = 0; k < 70; k++) {
    strcat(path, ".x");
  }
  const mbsOverride deep[] = {{path, "1"}};
  load_bad(small, deep, 1, MBS_ERR_DECK, 0, 0, "nested deeper than 64 levels");
}
END_TEST

START_TEST(test_override_directives) {
  /* %YAML directives survive the re-emit (and are freed exactly once) */
  mbsDeck d;
  const mbsOverride ov[] = {{"bodies.bob.mass", "2"}};
  load_ok("%YAML 1.1\n---\nmbsim: 1\n"
          "bodies: [{name: bob, type: point, mass: 1, position: [0, 0, 0]}]\n",
          ov, 1, &d);
  ck_assert_double_eq(d.bodies[0].mass, 2);
  ck_assert_ptr_nonnull(strstr(d.text, "%YAML 1.1"));
  mbs_deck_free(&d);
}
END_TEST

/* ---------------------------------------------------------------------------------------- */
/* bad decks */

START_TEST(test_files_and_syntax) {
  mbsDeck d;
  mbsError e;

  /* a missing file: MBS_ERR_IO naming the path and the reason */
  ck_assert_int_eq(mbs_deck_load(&d, "/nonexistent/deck.yaml", NULL, 0, &e), MBS_ERR_IO);
  ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent/deck.yaml"));
  ck_assert_ptr_nonnull(strstr(e.msg, "No such file or directory"));
  mbs_deck_free(&d);
  ck_assert_int_eq(mbs_deck_load(&d, "/tmp", NULL, 0, &e), MBS_ERR_IO);
  ck_assert_ptr_nonnull(strstr(e.msg, "Is a directory"));
  mbs_deck_free(&d);

  /* syntax errors: libyaml's problem at 1-based line:col */
  load_bad("mbsim: 1\nbodies: [1, 2\n", NULL, 0, MBS_ERR_SYNTAX, 3, 1,
           "YAML syntax error: did not find expected ',' or ']'");
  load_bad("mbsim: 1\n  x: 1\n", NULL, 0, MBS_ERR_SYNTAX, 2, 4,
           "YAML syntax error: mapping values are not allowed");
  load_bad("mbsim: 1\ntitle: *nope\n", NULL, 0, MBS_ERR_SYNTAX, 2, 8, "found undefined alias");
  load_bad("mbsim: 1\ntitle: \"\xff\"\n", NULL, 0, MBS_ERR_SYNTAX, 2, 9, "invalid");

  /* empty and not-one-document decks */
  load_bad("", NULL, 0, MBS_ERR_DECK, 0, 0, "empty deck");
  load_bad("# only a comment\n", NULL, 0, MBS_ERR_DECK, 0, 0, "empty deck");
  load_bad("---\n", NULL, 0, MBS_ERR_DECK, 0, 0, "empty deck");
  load_bad("a: 1\n---\nb: 2\n", NULL, 0, MBS_ERR_DECK, 2, 1, "a second one starts here");
  load_bad("- 1\n", NULL, 0, MBS_ERR_DECK, 1, 1, "a deck is a mapping");
}
END_TEST

START_TEST(test_bad_values) {
  /* top level */
  load_bad("mbsim: 1\nbodys: []\n", NULL, 0, MBS_ERR_DECK, 2, 1,
           "unknown key 'bodys' at top level; did you mean 'bodies'?");
  load_bad("mbsim: 1\nzzzzzzzz: 1\n", NULL, 0, MBS_ERR_DECK, 2, 1,
           "unknown key 'zzzzzzzz' at top level (valid keys: mbsim, title");
  load_bad("mbsim: 1.0\n", NULL, 0, MBS_ERR_DECK, 1, 8, "mbsim: expected an integer (got '1.0')");
  load_bad("mbsim: 1\n", NULL, 0, MBS_ERR_DECK, 1, 1, "missing required key 'bodies'");
  load_bad("mbsim: 1\nbodies: {a: 1}\n", NULL, 0, MBS_ERR_DECK, 2, 9,
           "bodies: expected a list of bodies, got a mapping");
  load_bad("mbsim: 1\ngravity: [0, 0]\n", NULL, 0, MBS_ERR_DECK, 2, 10,
           "gravity: expected a list of 3 numbers (got 2 items)");
  load_bad("mbsim: 1\ngravity: [0, 0, 0x10]\n", NULL, 0, MBS_ERR_DECK, 2, 17,
           "gravity[2]: expected a number (got '0x10')");
  load_bad("mbsim: 1\ngravity: [0, 0, 1e999]\n", NULL, 0, MBS_ERR_DECK, 2, 17,
           "gravity[2]: number out of range");
  load_bad("mbsim: 1\ngravity: [0, 0, -.inf]\n", NULL, 0, MBS_ERR_DECK, 2, 17,
           "gravity[2]: must be a finite number");
  load_bad("mbsim: 1\n1: 2\n", NULL, 0, MBS_ERR_DECK, 2, 1, "unknown key '1' at top level");
  load_bad("mbsim: 1\n[a]: 2\n", NULL, 0, MBS_ERR_DECK, 2, 1, "mapping keys must be scalars");

  /* names */
  load_bad(ONE_BODY("{name: 'a b', type: point, mass: 1, position: [0, 0, 0]}"), NULL, 0,
           MBS_ERR_DECK, 3, 12, "name 'a b' may only contain letters, digits");
  load_bad(ONE_BODY("{name: "
                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, "
                    "type: point, mass: 1, position: [0, 0, 0]}"),
           NULL, 0, MBS_ERR_DECK, 3, 12, "name is longer than 63 characters");
  load_bad(ONE_BODY("{type: point, mass: 1, position: [0, 0, 0]}"), NULL, 0, MBS_ERR_DECK, 3, 5,
           "bodies[0]: missing required key 'name'");
  load_bad(ONE_BODY("{name: b, type: pointy, mass: 1, position: [0, 0, 0]}"), NULL, 0, MBS_ERR_DECK,
           3, 21, "body type 'pointy' is not supported; valid: rigid, point");
  load_bad(ONE_BODY("{name: b, type: point, mass: 1, position: [0, 0, 0], fixed: yes}"), NULL, 0,
           MBS_ERR_DECK, 3, 65, "fixed: expected true or false (got 'yes')");
  load_bad(ONE_BODY("{name: b, type: point, mass: 1, position: [0, 0, 0], orientation: {}}"), NULL,
           0, MBS_ERR_DECK, 3, 58, "a point mass takes no 'orientation'");

  /* joints */
  static const char *two = "mbsim: 1\nbodies:\n"
                           "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n"
                           "  - {name: p, type: point, mass: 1, position: [1, 0, 0]}\n"
                           "joints:\n  - ";
  char buf[1024];
  snprintf(buf, sizeof(buf), "%s%s\n", two,
           "{name: j, type: revolute, bodies: [a, a], "
           "point: [0, 0, 0], axis: [0, 0, 1]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 39, "joints[0] 'j': the two bodies must differ");
  snprintf(buf, sizeof(buf), "%s%s\n", two,
           "{name: j, type: revolute, bodies: [ground, a], "
           "point: [0, 0, 0]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 5, "missing required key 'axis'");
  snprintf(buf, sizeof(buf), "%s%s\n", two,
           "{name: j, type: spherical, bodies: [ground, a], "
           "point: [0, 0, 0], axis: [0, 0, 1]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 71, "a spherical joint takes no 'axis'");
  snprintf(buf, sizeof(buf), "%s%s\n", two, "{name: j, type: fixed, bodies: [ground, a]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 5, "missing required key 'point'");
  snprintf(buf, sizeof(buf), "%s%s\n", two, "{name: j, type: distance, bodies: [ground, p]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 5, "a distance joint to ground needs 'points'");
  snprintf(buf, sizeof(buf), "%s%s\n", two,
           "{name: j, type: distance, bodies: [a, p], "
           "point: [0, 0, 0]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 47, "a distance joint takes no 'point'");
  snprintf(buf, sizeof(buf), "%s%s\n", two, "{name: j, type: distance, bodies: [a]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 39, "bodies: expected a list of two body names");
  snprintf(buf, sizeof(buf), "%s%s\n", two,
           "{name: j, type: distance, bodies: [ground, p], "
           "points: [[0, 0, 0], [0, 0, 0]]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 60, "the two points of a distance joint coincide");
  snprintf(buf, sizeof(buf), "%s%s\n  - %s\n", two,
           "{name: j, type: spherical, bodies: [ground, a], point: [0, 0, 0]}",
           "{name: j, type: spherical, bodies: [a, p], point: [0, 0, 0]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 7, 12, "duplicate joint name 'j' (first at 6:5)");

  /* a good distance joint to ground with its points */
  mbsDeck d;
  snprintf(buf, sizeof(buf), "%s%s\n", two,
           "{name: j, type: distance, bodies: [ground, p], "
           "points: [[0, 0, 0], [1, 0, 0]]}");
  load_ok(buf, NULL, 0, &d);
  ck_assert_int_eq(d.joints[0].has_points, 1);
  assert_vec(d.joints[0].points[1], (double[]){1, 0, 0}, 3, 0);
  mbs_deck_free(&d);

  /* loads */
  static const char *loads = "mbsim: 1\nbodies:\n"
                             "  - {name: a, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}\n"
                             "  - {name: p, type: point, mass: 1, position: [1, 0, 0]}\n"
                             "loads:\n  - ";
  snprintf(buf, sizeof(buf), "%s%s\n", loads, "{name: t, type: torque, body: p, value: [1, 0, 0]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 35, "a torque needs a rigid body ('p' is a point mass)");
  snprintf(buf, sizeof(buf), "%s%s\n", loads,
           "{name: t, type: torque, body: a, value: [1, 0, 0], point: [0, 0, 0]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 56, "a torque takes no 'point'");
  snprintf(buf, sizeof(buf), "%s%s\n", loads,
           "{name: t, type: force, body: a, value: [1, 0, 0], method: contravariant}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 55, "a force takes no 'method'");
  snprintf(buf, sizeof(buf), "%s%s\n", loads,
           "{name: t, type: torque, body: a, value: [1, 0, 0], method: augmented}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 64, "method 'augmented' adds a joint angle coordinate");
  snprintf(buf, sizeof(buf), "%s%s\n", loads,
           "{name: t, type: force, body: a, value: [1, 0, 0], profile: {ramp: [1, 0]}}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 71, "profile.ramp: t1 = 0 must be greater than t0 = 1");
  snprintf(buf, sizeof(buf), "%s%s\n", loads,
           "{name: t, type: force, body: ground, "
           "value: [1, 0, 0]}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 34, "a load cannot act on 'ground'");
  snprintf(buf, sizeof(buf), "%s%s\n", loads, "{name: t, type: damper, body: a}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 21, "load type 'damper' is not supported");
  snprintf(buf, sizeof(buf), "%s%s\n", loads, "{name: t, type: spring, body: a}");
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 6, 29, "a spring takes no 'body'");
  snprintf(buf, sizeof(buf), "%s%s\n", loads,
           "{name: t, type: force, body: a, value: [1, 0, 0], "
           "point: [0, 1, 0]}");
  load_ok(buf, NULL, 0, &d);
  ck_assert_int_eq(d.loads[0].has_point, 1);
  assert_vec(d.loads[0].point, (double[]){0, 1, 0}, 3, 0);
  mbs_deck_free(&d);

  /* solver and output */
  static const char *one = ONE_BODY("{name: b, type: point, mass: 1, position: [0, 0, 0]}");
  snprintf(buf, sizeof(buf), "%ssolver: {newton: {max_iterations: 0}}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 35, "newton.max_iterations must be >= 1 (got 0)");
  snprintf(buf, sizeof(buf), "%ssolver: {newton: {tol: 1}}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 19, "unknown key 'tol' in solver.newton");
  snprintf(buf, sizeof(buf), "%ssolver: {genalpha: {rho_inf: 1.5}}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 30, "genalpha.rho_inf must be in [0, 1] (got 1.5)");
  snprintf(buf, sizeof(buf), "%ssolver: {spacetime: {degree: 3}}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 30, "spacetime.degree must be 1 or 2 (got 3)");
  snprintf(buf, sizeof(buf), "%ssolver: {spacetime: {elements_per_block: 0}}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 42,
           "spacetime.elements_per_block must be in [1, 100000] (got 0)");
  snprintf(buf, sizeof(buf), "%ssolver: {spacetime: {order: 1}}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 22, "unknown key 'order' in solver.spacetime");
  /* spacetime: its keys, and KLU as its default linear solver like every integrator's (an
   * explicit one kept) */
  {
    mbsDeck sd;
    mbsError se;
    snprintf(buf, sizeof(buf),
             "%ssolver: {integrator: spacetime, spacetime: {degree: 2, elements_per_block: 7}}\n",
             one);
    ck_assert_int_eq(load_text(buf, NULL, 0, &sd, &se), MBS_OK);
    ck_assert_int_eq(sd.solver.spacetime_degree, 2);
    ck_assert_int_eq(sd.solver.spacetime_elements, 7);
    ck_assert_int_eq(sd.solver.linear_solver, MBS_LINEAR_KLU);
    mbs_deck_free(&sd);
    snprintf(buf, sizeof(buf), "%ssolver: {integrator: spacetime, linear_solver: umfpack}\n", one);
    ck_assert_int_eq(load_text(buf, NULL, 0, &sd, &se), MBS_OK);
    ck_assert_int_eq(sd.solver.spacetime_degree, 1);
    ck_assert_int_eq(sd.solver.linear_solver, MBS_LINEAR_UMFPACK);
    mbs_deck_free(&sd);
  }
  snprintf(buf, sizeof(buf), "%ssolver: {t_end: -1}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 17, "solver: t_end must be > 0 (got -1)");
  snprintf(buf, sizeof(buf), "%soutput: {every: 0}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 17, "output: every must be >= 1 (got 0)");
  snprintf(buf, sizeof(buf), "%soutput: {every: 2.5}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 17, "every: expected an integer (got '2.5')");
  snprintf(buf, sizeof(buf), "%soutput: {file: ''}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 16, "file must not be empty");
  snprintf(buf, sizeof(buf), "%soutput: {xdmf: 1}\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 16, "xdmf: expected true or false (got '1')");
  snprintf(buf, sizeof(buf), "%soutput: []\n", one);
  load_bad(buf, NULL, 0, MBS_ERR_DECK, 4, 9, "output: expected a mapping, got a list");
}
END_TEST

/* every row of tests/bad/expected.tsv whose deck the reader rejects must give a message
 * containing the expected text (rows for a missing file, or for decks that only fail later
 * in the CLI, are skipped here) */
START_TEST(test_bad_table) {
  static const char *const dirs[] = {"../tests/bad", "tests/bad", NULL};
  char path[4096], line[2048];
  FILE *f = NULL;
  const char *dir = NULL;
  int checked = 0;

  for (int i = 0; dirs[i] && !f; i++) {
    snprintf(path, sizeof(path), "%s/expected.tsv", dirs[i]);
    f = fopen(path, "r");
    dir = dirs[i];
  }
  ck_assert_msg(f != NULL, "tests/bad/expected.tsv not found (run from build/ or the top)");

  while (fgets(line, sizeof(line), f)) {
    char *tab = strchr(line, '\t');
    if (!tab || line[0] == '#') {
      continue;
    }
    *tab = '\0';
    char *want = tab + 1;
    want[strcspn(want, "\r\n")] = '\0';
    snprintf(path, sizeof(path), "%s/%s", dir, line);
    if (access(path, R_OK) != 0) {
      continue;
    }

    mbsDeck d;
    mbsError e;
    char msg[2048];
    mbsStatus st = mbs_deck_load(&d, path, NULL, 0, &e);
    mbs_deck_free(&d);
    if (st == MBS_OK) {
      continue;
    }
    mbs_error_format(&e, msg, sizeof(msg));
    ck_assert_msg(strstr(msg, want) != NULL, "%s: got '%s', want '%s'", line, msg, want);
    checked++;
  }
  fclose(f);
  ck_assert_int_ge(checked, 35);
}
END_TEST

/* an angle in radians beyond a turn was probably meant in degrees: a warning at the value */
START_TEST(test_angle_turn_warning) {
  mbsDeck d;
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {axis: [0, 0, 1], angle: 30}}\n"
          "  - {name: c, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0],\n"
          "     orientation: {axis: [0, 0, 1], angle: -6.3}}\n"
          "joints:\n"
          "  - {name: h, type: revolute, bodies: [ground, b], point: [0, 0, 0], axis: [0, 0, 1]}\n"
          "loads:\n"
          "  - {name: k, type: rotational_spring, joint: h, stiffness: 1, rest_angle: 90}\n",
          NULL, 0, &d);
  ck_assert_ptr_nonnull(d.warnings);
  ck_assert_ptr_nonnull(strstr(d.warnings,
                               ":4:44: bodies[0] 'b': orientation.angle 30 rad is more "
                               "than a turn (4.77 turns); did you mean angle_deg: 30? (if "
                               "radians are meant, write angle_deg: 1718.873385: an angle in "
                               "degrees is taken as written, without this warning)\n"));
  ck_assert_ptr_nonnull(strstr(d.warnings,
                               ":6:44: bodies[1] 'c': orientation.angle -6.3 rad is "
                               "more than a turn (-1.00 turns); did you mean angle_deg: "
                               "-6.3? (if radians are meant, write angle_deg: -360.9634109"));
  ck_assert_ptr_nonnull(strstr(d.warnings, ":10:76: loads[0] 'k': rest_angle 90 rad is more than a "
                                           "turn (14.32 turns); did you mean rest_angle_deg: 90? "
                                           "(if radians are meant, write rest_angle_deg: "
                                           "5156.620156"));
  mbs_deck_free(&d);
  /* a turn or less, or degrees: no warning */
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],\n"
          "     orientation: {axis: [0, 0, 1], angle: \"-2 * pi\"}}\n"
          "  - {name: c, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0],\n"
          "     orientation: {axis: [0, 0, 1], angle_deg: 720}}\n"
          "joints:\n"
          "  - {name: h, type: revolute, bodies: [ground, b], point: [0, 0, 0], axis: [0, 0, 1]}\n"
          "loads:\n"
          "  - {name: k, type: rotational_spring, joint: h, stiffness: 1, rest_angle: 6.28}\n",
          NULL, 0, &d);
  ck_assert_ptr_null(d.warnings);
  mbs_deck_free(&d);

  /* a revolute joint's motion: value x the profile's largest |f| beyond a turn warns at the
   * value; value_deg and rest_angle_deg are degrees (converted, never warned about) */
  const char *arm = "mbsim: 1\nbodies:\n"
                    "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}\n"
                    "  - {name: c, mass: 1, inertia: [1, 1, 1], position: [2, 0, 0]}\n"
                    "joints:\n"
                    "  - {name: h, type: revolute, bodies: [ground, b], point: [0, 0, 0],\n"
                    "     axis: [0, 0, 1], motion: {value: 70, profile: {ramp: [0, 1]}}}\n"
                    "  - {name: e, type: revolute, bodies: [b, c], point: [1.5, 0, 0],\n"
                    "     axis: [0, 0, 1], motion: {value: 20, profile: {sine: {amplitude: 0.5, "
                    "frequency: 1}}}}\n";
  load_ok(arm, NULL, 0, &d);
  ck_assert_ptr_nonnull(d.warnings);
  ck_assert_ptr_nonnull(strstr(d.warnings, ":7:39: joints[0] 'h': motion.value 70 rad is more "
                                           "than a turn (11.14 turns); did you mean value_deg: "
                                           "70? (if radians are meant, write value_deg: "
                                           "4010.704566"));
  ck_assert_ptr_nonnull(strstr(d.warnings, "joints[1] 'e': motion.value x the profile's largest "
                                           "|f| 10 rad is more than a turn (1.59 turns); did you "
                                           "mean value_deg: 20?"));
  ck_assert_double_eq(d.joints[0].motion_value, 70.0);
  mbs_deck_free(&d);
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}\n"
          "joints:\n"
          "  - {name: h, type: revolute, bodies: [ground, b], point: [0, 0, 0],\n"
          "     axis: [0, 0, 1], motion: {value_deg: 4010.704566, profile: {ramp: [0, 1]}}}\n"
          "loads:\n"
          "  - {name: k, type: rotational_spring, joint: h, stiffness: 1, rest_angle_deg: 90}\n",
          NULL, 0, &d);
  ck_assert_ptr_null(d.warnings);
  ck_assert_double_eq_tol(d.joints[0].motion_value, 4010.704566 * (3.141592653589793 / 180.0),
                          1e-12);
  ck_assert_double_eq_tol(d.loads[0].rest_angle, 3.141592653589793 / 2, 1e-15);
  mbs_deck_free(&d);
  load_bad("mbsim: 1\nbodies:\n"
           "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}\n"
           "joints:\n"
           "  - {name: h, type: prismatic, bodies: [ground, b], point: [0, 0, 0],\n"
           "     axis: [1, 0, 0], motion: {value_deg: 3, profile: {ramp: [0, 1]}}}\n",
           NULL, 0, MBS_ERR_DECK, 6, 43, "value_deg is for a revolute joint's angle");
  load_bad("mbsim: 1\nbodies:\n"
           "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}\n"
           "joints:\n"
           "  - {name: h, type: revolute, bodies: [ground, b], point: [0, 0, 0],\n"
           "     axis: [0, 0, 1], motion: {value: 1, value_deg: 3, profile: {ramp: [0, 1]}}}\n",
           NULL, 0, MBS_ERR_DECK, 6, 53, "give value (radians) or value_deg, not both");
  /* a joint's point more than twice either body's size from both their centres: a warning at
   * the point (two rods 1 m long, size 0.5 m: the elbow at their ends is 0.5 m from each) */
  const char *rods = "mbsim: 1\nbodies:\n"
                     "  - {name: a, mass: 1, shape: {box: [1, 0.02, 0.02]}, position: [0.5, 0, 0]}\n"
                     "  - {name: b, mass: 1, shape: {box: [1, 0.02, 0.02]}, position: [1.5, 0, 0]}\n"
                     "joints:\n"
                     "  - {name: shoulder, type: revolute, bodies: [ground, a], point: [0, 0, 5],\n"
                     "     axis: [0, 0, 1]}\n"
                     "  - {name: elbow, type: revolute, bodies: [a, b], point: [1, %s, 0],\n"
                     "     axis: [0, 0, 1]}\n";
  char text[1024];
  snprintf(text, sizeof(text), rods, "0");
  load_ok(text, NULL, 0, &d);
  ck_assert_ptr_null(d.warnings); /* at the rods' ends; the shoulder's ground is everywhere */
  mbs_deck_free(&d);
  /* the same elbow given in a's frame (relative_to): judged where it is, in the world */
  load_ok("mbsim: 1\nbodies:\n"
          "  - {name: a, mass: 1, shape: {box: [1, 0.02, 0.02]}, position: [0.5, 0, 0]}\n"
          "  - {name: b, mass: 1, shape: {box: [1, 0.02, 0.02]}, position: [1.5, 0, 0]}\n"
          "joints:\n"
          "  - {name: elbow, type: revolute, bodies: [a, b], point: [0.5, 0, 0],\n"
          "     axis: [0, 0, 1], relative_to: a}\n",
          NULL, 0, &d);
  ck_assert_ptr_null(d.warnings);
  mbs_deck_free(&d);
  snprintf(text, sizeof(text), rods, "1.2");
  load_ok(text, NULL, 0, &d);
  ck_assert_ptr_nonnull(d.warnings);
  ck_assert_ptr_nonnull(strstr(d.warnings, ":8:58: joints[1] 'elbow': point [1, 1.2, 0] m is 1.3 m "
                                           "from the centre of 'a' (size 0.5 m) and 1.3 m from "
                                           "that of 'b' (size 0.5 m), more than twice the size of "
                                           "either: is it in the right place?"));
  mbs_deck_free(&d);
  load_bad("mbsim: 1\nbodies:\n"
           "  - {name: b, mass: 1, inertia: [1, 1, 1], position: [1, 0, 0]}\n"
           "joints:\n"
           "  - {name: h, type: revolute, bodies: [ground, b], point: [0, 0, 0], axis: [0, 0, 1]}\n"
           "loads:\n"
           "  - {name: k, type: rotational_spring, joint: h, stiffness: 1, rest_angle: 1,\n"
           "     rest_angle_deg: 90}\n",
           NULL, 0, MBS_ERR_DECK, 8, 22, "give rest_angle (radians) or rest_angle_deg, not both");
}
END_TEST

START_TEST(test_free) {
  mbsDeck d;
  memset(&d, 0, sizeof(d));
  mbs_deck_free(&d);
  mbs_deck_free(NULL);

  /* bad arguments */
  mbsError e;
  ck_assert_int_eq(mbs_deck_load(&d, NULL, NULL, 0, &e), MBS_ERR_ARGS);
  ck_assert_int_eq(mbs_deck_load(&d, "x.yaml", NULL, 1, &e), MBS_ERR_ARGS);
  ck_assert_int_eq(mbs_deck_load(NULL, "x.yaml", NULL, 0, &e), MBS_ERR_ARGS);
  mbs_deck_free(&d);

  /* a NULL error is allowed */
  ck_assert_int_eq(load_text("mbsim: 2\n", NULL, 0, &d, NULL), MBS_ERR_DECK);
  mbs_deck_free(&d);
}
END_TEST

Suite *deck_suite(void) {
  Suite *s = suite_create("deck");
  TCase *tc = tcase_create("deck");
  tcase_add_test(tc, test_keywords);
  tcase_add_test(tc, test_good_deck);
  tcase_add_test(tc, test_defaults);
  tcase_add_test(tc, test_tolerance);
  tcase_add_test(tc, test_shapes);
  tcase_add_test(tc, test_euler_tensor);
  tcase_add_test(tc, test_inertia_checks);
  tcase_add_test(tc, test_orientation);
  tcase_add_test(tc, test_extreme_axes);
  tcase_add_test(tc, test_parameters);
  tcase_add_test(tc, test_merge_keys);
  tcase_add_test(tc, test_overrides);
  tcase_add_test(tc, test_override_lists);
  tcase_add_test(tc, test_override_errors);
  tcase_add_test(tc, test_override_totals);
  tcase_add_test(tc, test_override_index);
  tcase_add_test(tc, test_override_directives);
  tcase_add_test(tc, test_files_and_syntax);
  tcase_add_test(tc, test_bad_values);
  tcase_add_test(tc, test_bad_table);
  tcase_add_test(tc, test_angle_turn_warning);
  tcase_add_test(tc, test_free);
  suite_add_tcase(s, tc);
  return s;
}
