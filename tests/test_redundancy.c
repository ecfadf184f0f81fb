/* test_redundancy.c: redundant joint constraints found when compiling
 * (mbs_model_check_redundancy, src/model/redundancy.c): closed loops whose equations repeat
 * are refused with the joints of the loop named; loops that are not redundant, trees and
 * long chains compile. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"

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

START_TEST(test_four_bar_revolute) {
  /* axes given with the joints' points via flow maps: revolute needs an axis */
  static const char text[] =
      "mbsim: 1\n"
      "bodies:\n"
      "  - {name: crank, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [0, 0.5, 0]}\n"
      "  - {name: coupler, shape: {box: [2, 0.05, 0.05]}, density: 1000, position: [1, 1, 0]}\n"
      "  - {name: rocker, shape: {box: [0.05, 1, 0.05]}, density: 1000, position: [2, 0.5, 0]}\n"
      "  - {name: free, type: point, mass: 1, position: [9, 9, 9]}\n"
      "joints:\n"
      "  - {name: A, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: B, type: revolute, bodies: [crank, coupler], point: [0, 1, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: C, type: revolute, bodies: [coupler, rocker], point: [2, 1, 0], axis: [0, 0, "
      "1]}\n"
      "  - {name: D, type: revolute, bodies: [ground, rocker], point: [2, 0, 0], axis: [0, 0, "
      "1]}\n";
  mbsError err;
  ck_assert_int_eq(compile(text, &err), MBS_ERR_MODEL);
  ck_assert_msg(strstr(err.msg, "redundant") &&
                    strstr(err.msg, "'A' (revolute), 'B' (revolute), 'C' (revolute), "
                                    "'D' (revolute)") &&
                    strstr(err.msg, "3 of the 20 joint equations"),
                "message: %s", err.msg);
  ck_assert_int_eq(err.line, 8);
  ck_assert_int_eq(err.col, 5);
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

START_TEST(test_parallel_joints) {
  /* two identical distance joints between the same pair: one equation repeats */
  static const char text[] = "mbsim: 1\n"
                             "bodies:\n"
                             "  - {name: a, type: point, mass: 1, position: [0, 0, 0]}\n"
                             "  - {name: b, type: point, mass: 1, position: [1, 0, 0]}\n"
                             "joints:\n"
                             "  - {name: rod, type: distance, bodies: [a, b]}\n"
                             "  - {name: spare_rod, type: distance, bodies: [b, a]}\n";
  mbsError err;
  ck_assert_int_eq(compile(text, &err), MBS_ERR_MODEL);
  ck_assert_msg(strstr(err.msg, "joints 'rod' (distance), 'spare_rod' (distance) close a loop") &&
                    strstr(err.msg, "1 of the 2 joint equations"),
                "message: %s", err.msg);
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
  tcase_add_test(tc, test_four_bar_revolute);
  tcase_add_test(tc, test_loops_that_hold);
  tcase_add_test(tc, test_parallel_joints);
  tcase_add_test(tc, test_long_chain);
  suite_add_tcase(s, tc);
  return s;
}
