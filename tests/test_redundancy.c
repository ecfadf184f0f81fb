/* test_redundancy.c: redundant constraint rows found when compiling
 * (mbs_model_drop_redundant, src/model/redundancy.c): joint rows of closed loops that repeat
 * the others are dropped and named, motions that conflict with a loop are refused with the
 * joints of the loop named; loops that are not redundant, trees and long chains compile
 * unchanged. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"
#include "solver/system.h"

#define FOUR_BAR(B, C)                                                                             \
  "mbsim: 1\n"                                                                                     \
  "bodies:\n"                                                                                      \
  "  - {name: crank, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [0, 0.5, 0]}\n"       \
  "  - {name: coupler, shape: {box: [2, 0.05, 0.05]}, density: 1000, position: [1, 1, 0]}\n"       \
  "  - {name: rocker, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [2, 0.5, 0]}\n"      \
  "joints:\n"                                                                                      \
  "  - {name: A, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, 1]}\n"    \
  "  - {name: B, type: " B ", bodies: [crank, coupler], point: [0, 1, 0]}\n"                       \
  "  - {name: C, type: " C ", bodies: [coupler, rocker], point: [2, 1, 0]}\n"                      \
  "  - {name: D, type: revolute, bodies: [ground, rocker], point: [2, 0, 0], axis: [0, 0, 1]}\n"

/* compile text; returns the status, err filled */
static mbsStatus compile(const char *text, mbsError *err) {
  mbsDeck deck;
  mbsStatus st = mbs_deck_load_text(&deck, "loop.yaml", text, strlen(text), NULL, 0, err);
  ck_assert_msg(st == MBS_OK, "deck: %s", err->msg);
  mbsModel *m = mbs_model_compile(&deck, err);
  st = m ? MBS_OK : err->status;
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
  return st;
}

/* compile text that must compile; the model (destroy it), its deck freed */
static mbsModel *compile_ok(const char *text) {
  mbsDeck deck;
  mbsError err;
  mbsStatus st = mbs_deck_load_text(&deck, "loop.yaml", text, strlen(text), NULL, 0, &err);
  ck_assert_msg(st == MBS_OK, "deck: %s", err.msg);
  mbsModel *m = mbs_model_compile(&deck, &err);
  ck_assert_msg(m != NULL, "compile: %s", err.msg);
  mbs_deck_free(&deck);
  return m;
}

#define AXIS_Z "axis: [0, 0, 1]"
#define FOUR_BAR_RRRR(EXTRA_BODY, MOTION_A, MOTION_D)                                              \
  "mbsim: 1\n"                                                                                     \
  "bodies:\n"                                                                                      \
  "  - {name: crank, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [0, 0.5, 0]}\n"       \
  "  - {name: coupler, shape: {box: [2, 0.05, 0.05]}, density: 1000, position: [1, 1, 0]}\n"       \
  "  - {name: rocker, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [2, 0.5, "           \
  "0]}\n" EXTRA_BODY "joints:\n"                                                                   \
  "  - {name: A, type: revolute, bodies: [ground, crank], point: [0, 0, 0], " AXIS_Z MOTION_A      \
  "}\n"                                                                                            \
  "  - {name: B, type: revolute, bodies: [crank, coupler], point: [0, 1, 0], " AXIS_Z "}\n"        \
  "  - {name: C, type: revolute, bodies: [coupler, rocker], point: [2, 1, 0], " AXIS_Z "}\n"       \
  "  - {name: D, type: revolute, bodies: [ground, rocker], point: [2, 0, 0], " AXIS_Z MOTION_D     \
  "}\n"

START_TEST(test_three_redundant_rows) {
  /* a planar four-bar of revolute joints beside a free body (the count of equations does not
   * show it): 3 of the 20 joint rows repeat, the last joint's out-of-plane rows (its z
   * position and the two rows that keep its axis along z) are dropped */
  static const char text[] =
      FOUR_BAR_RRRR("  - {name: free, type: point, mass: 1, position: [9, 9, 9]}\n", "", "");
  mbsModel *m = compile_ok(text);
  ck_assert_int_eq(m->ndrop, 3);
  ck_assert_int_eq(m->nq, 39);
  ck_assert_int_eq(m->ncon, 18 + 20 - 3);
  ck_assert_int_eq(m->ndof, 39 - 35);
  for (int a = 0; a < 3; a++) {
    ck_assert_int_eq(m->drop[a].joint, 3);
    ck_assert_int_eq(m->drop[a].jrow, 2 + a);
  }
  /* the kept rows of D are its x and y rows, still named rows 1 and 2 */
  ck_assert_int_eq(m->joint_ncon[3], 2);
  ck_assert_int_eq(m->con[m->joint_con[3]].jrow, 0);
  ck_assert_int_eq(m->con[m->joint_con[3] + 1].jrow, 1);
  char buf[128];
  mbs_model_describe_dropped(m, buf, sizeof(buf));
  ck_assert_str_eq(buf, "joint 'D' rows 3, 4, 5");
  char row[128];
  mbs_constraint_describe(m, m->joint_con[3] + 1, row, sizeof(row));
  ck_assert_str_eq(row, "joint 'D' (revolute, row 2)");
  /* the Newton system has no row for them */
  mbsError serr;
  mbsSystem *sys = mbs_system_create(m, 1, NULL, 0, 0, &serr);
  ck_assert_ptr_nonnull(sys);
  ck_assert_int_eq(sys->n, m->nq + m->ncon);
  mbs_system_destroy(sys);
  mbs_model_destroy(m);
}
END_TEST

START_TEST(test_one_redundant_row) {
  /* two identical distance joints between the same pair: the second one's row is dropped */
  static const char text[] = "mbsim: 1\n"
                             "bodies:\n"
                             "  - {name: a, type: point, mass: 1, position: [0, 0, 0]}\n"
                             "  - {name: b, type: point, mass: 1, position: [1, 0, 0]}\n"
                             "joints:\n"
                             "  - {name: rod, type: distance, bodies: [a, b]}\n"
                             "  - {name: spare_rod, type: distance, bodies: [b, a]}\n";
  mbsModel *m = compile_ok(text);
  ck_assert_int_eq(m->ndrop, 1);
  ck_assert_int_eq(m->ncon, 1);
  ck_assert_int_eq(m->ndof, 5);
  ck_assert_int_eq(m->joint_ncon[0], 1);
  ck_assert_int_eq(m->joint_ncon[1], 0);
  char buf[128];
  ck_assert_int_eq(mbs_model_describe_dropped(m, buf, sizeof(buf)),
                   (int)strlen("joint 'spare_rod' row 1"));
  ck_assert_str_eq(buf, "joint 'spare_rod' row 1");
  mbs_model_destroy(m);
}
END_TEST

START_TEST(test_conflicting_motions) {
  /* both the crank and the rocker of the one-dof four-bar driven: the rocker's motion repeats
   * what the loop and the crank's motion fix; it cannot be dropped (it would be ignored) */
  static const char text[] = FOUR_BAR_RRRR("", ", motion: {value: 1, profile: {ramp: [0, 1]}}",
                                           ", motion: {value: 1, profile: {ramp: [0, 1]}}");
  mbsError err;
  ck_assert_int_eq(compile(text, &err), MBS_ERR_MODEL);
  ck_assert_msg(strstr(err.msg, "the constraints are redundant") &&
                    strstr(err.msg, "'A' (revolute), 'B' (revolute), 'C' (revolute), "
                                    "'D' (revolute)") &&
                    strstr(err.msg, "4 of the 22 joint equations") &&
                    strstr(err.msg, "The prescribed motion of joint 'D' is one of them") &&
                    strstr(err.msg, "Remove the motion of 'D'"),
                "message: %s", err.msg);
  ck_assert_int_eq(err.line, 7);
  ck_assert_int_eq(err.col, 5);
}
END_TEST

START_TEST(test_one_conflicting_row_message) {
  /* a spatial R-S-C-R four-bar (one dof, no redundant joint row) driven at both ends: exactly
   * one equation repeats; the message counts one and does not suggest freeing three */
  static const char text[] =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: crank, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [0, 0.5, 0]}\n"
      "  - {name: coupler, shape: {box: [2, 0.05, 0.05]}, density: 1000, position: [1, 1, 0]}\n"
      "  - {name: rocker, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [2, 0.5, 0]}\n"
      "joints:\n"
      "  - {name: A, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, "
      "1], motion: {value: 1, profile: {ramp: [0, 1]}}}\n"
      "  - {name: B, type: spherical, bodies: [crank, coupler], point: [0, 1, 0]}\n"
      "  - {name: C, type: cylindrical, bodies: [coupler, rocker], point: [2, 1, 0], axis: [0, "
      "0, 1]}\n"
      "  - {name: D, type: revolute, bodies: [ground, rocker], point: [2, 0, 0], axis: [0, 0, "
      "1], motion: {value: 1, profile: {ramp: [0, 1]}}}\n";
  mbsError err;
  ck_assert_int_eq(compile(text, &err), MBS_ERR_MODEL);
  ck_assert_msg(strstr(err.msg, "1 of the 19 joint equations repeat") &&
                    strstr(err.msg, "motion of joint 'D'") && !strstr(err.msg, "frees 2") &&
                    !strstr(err.msg, "frees 1") && !strstr(err.msg, "Free 3"),
                "message: %s", err.msg);
}
END_TEST

START_TEST(test_singular_start) {
  /* a parallelogram four-bar laid flat (all links on the x axis, a change point): there one
   * in-plane row repeats the others too, but only there; dropping it would let the loop come
   * apart once it moves, so it is refused (the 3 out-of-plane rows alone would be dropped) */
  static const char text[] =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: crank, shape: {box: [1, 0.05, 0.05]}, density: 1000, position: [0.5, 0, 0]}\n"
      "  - {name: coupler, shape: {box: [2, 0.05, 0.05]}, density: 1000, position: [2, 0, 0]}\n"
      "  - {name: rocker, shape: {box: [1, 0.05, 0.05]}, density: 1000, position: [2.5, 0, 0]}\n"
      "joints:\n"
      "  - {name: A, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: B, type: revolute, bodies: [crank, coupler], point: [1, 0, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: C, type: revolute, bodies: [coupler, rocker], point: [3, 0, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: D, type: revolute, bodies: [ground, rocker], point: [2, 0, 0], axis: [0, 0, "
      "1]}\n";
  mbsError err;
  ck_assert_int_eq(compile(text, &err), MBS_ERR_MODEL);
  ck_assert_msg(strstr(err.msg, "redundant only here: joint 'D' row 1 repeats the others at "
                                "t = 0 but not once the loop moves") &&
                    strstr(err.msg, "singular position"),
                "message: %s", err.msg);
  ck_assert_int_eq(err.line, 10);
  ck_assert_int_eq(err.col, 5);
}
END_TEST

START_TEST(test_coaxial_bearings) {
  /* a door on two coaxial revolute bearings: the second bearing's 5 rows repeat the first's
   * wherever the door is, so they are dropped and the door keeps its one degree of freedom */
  static const char text[] =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: door, shape: {box: [1, 0.05, 2]}, density: 500, position: [0.5, 0, 1]}\n"
      "joints:\n"
      "  - {name: lower, type: revolute, bodies: [ground, door], point: [0, 0, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: upper, type: revolute, bodies: [ground, door], point: [0, 0, 2], axis: [0, 0, "
      "1]}\n";
  mbsModel *m = compile_ok(text);
  ck_assert_int_eq(m->ndrop, 5);
  ck_assert_int_eq(m->ndof, 1);
  char buf[128];
  mbs_model_describe_dropped(m, buf, sizeof(buf));
  ck_assert_str_eq(buf, "joint 'upper' rows 1, 2, 3, 4, 5");
  mbs_model_destroy(m);
}
END_TEST

START_TEST(test_loops_that_hold) {
  mbsError err;
  /* spatial four-bars without redundancy: R-S-S-R (one idle spin) and R-S-C-R */
  static const char rssr[] = FOUR_BAR("spherical", "spherical");
  ck_assert_msg(compile(rssr, &err) == MBS_OK, "%s", err.msg);
  static const char rscr[] =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: crank, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [0, 0.5, 0]}\n"
      "  - {name: coupler, shape: {box: [2, 0.05, 0.05]}, density: 1000, position: [1, 1, 0]}\n"
      "  - {name: rocker, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [2, 0.5, 0]}\n"
      "joints:\n"
      "  - {name: A, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: B, type: spherical, bodies: [crank, coupler], point: [0, 1, 0]}\n"
      "  - {name: C, type: cylindrical, bodies: [coupler, rocker], point: [2, 1, 0], axis: [0, "
      "0, 1]}\n"
      "  - {name: D, type: revolute, bodies: [ground, rocker], point: [2, 0, 0], axis: [0, 0, "
      "1]}\n";
  ck_assert_msg(compile(rscr, &err) == MBS_OK, "%s", err.msg);

  /* a rigid triangle of point masses: a loop of three distance joints */
  static const char tri[] = "mbsim: 1\n"
                            "bodies:\n"
                            "  - {name: a, type: point, mass: 1, position: [0, 0, 0]}\n"
                            "  - {name: b, type: point, mass: 1, position: [1, 0, 0]}\n"
                            "  - {name: c, type: point, mass: 1, position: [0, 1, 0]}\n"
                            "joints:\n"
                            "  - {name: ab, type: distance, bodies: [a, b]}\n"
                            "  - {name: bc, type: distance, bodies: [b, c]}\n"
                            "  - {name: ca, type: distance, bodies: [c, a]}\n";
  ck_assert_msg(compile(tri, &err) == MBS_OK, "%s", err.msg);
}
END_TEST

START_TEST(test_long_chain) {
  /* 300 point masses on distance joints and no loop: nothing to analyse */
  static char text[64 * 1024];
  size_t k = (size_t)snprintf(text, sizeof(text), "mbsim: 1\nbodies:\n");
  for (int i = 0; i < 300; i++) {
    k +=
        (size_t)snprintf(text + k, sizeof(text) - k,
                         "  - {name: l%d, type: point, mass: 1, position: [%d, 0, 0]}\n", i, i + 1);
  }
  k += (size_t)snprintf(text + k, sizeof(text) - k,
                        "joints:\n  - {name: j0, type: distance, bodies: [ground, l0], "
                        "points: [[0, 0, 0], [1, 0, 0]]}\n");
  for (int i = 1; i < 300; i++) {
    k += (size_t)snprintf(text + k, sizeof(text) - k,
                          "  - {name: j%d, type: distance, bodies: [l%d, l%d]}\n", i, i - 1, i);
  }
  ck_assert_uint_lt(k, sizeof(text) - 1);
  mbsError err;
  ck_assert_msg(compile(text, &err) == MBS_OK, "%s", err.msg);
}
END_TEST

Suite *redundancy_suite(void) {
  Suite *s = suite_create("redundancy");
  TCase *tc = tcase_create("loops");
  tcase_add_test(tc, test_three_redundant_rows);
  tcase_add_test(tc, test_one_redundant_row);
  tcase_add_test(tc, test_conflicting_motions);
  tcase_add_test(tc, test_one_conflicting_row_message);
  tcase_add_test(tc, test_singular_start);
  tcase_add_test(tc, test_coaxial_bearings);
  tcase_add_test(tc, test_loops_that_hold);
  tcase_add_test(tc, test_long_chain);
  suite_add_tcase(s, tc);
  return s;
}
