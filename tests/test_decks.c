/* test_decks.c: the shipped decks compile to the models the seeds describe */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"

/* the runner runs in build/, the decks are in ../decks */
#define DECKS "../decks/"

static mbsModel *load(const char *name, mbsDeck *deck) {
  mbsError err;
  char path[256];
  snprintf(path, sizeof(path), DECKS "%s", name);
  memset(deck, 0, sizeof(*deck));
  ck_assert_msg(mbs_deck_load(deck, path, NULL, 0, &err) == MBS_OK, "%s: %s", path, err.msg);
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s: %s", path, err.msg);
  return m;
}

START_TEST(test_offset_inertia_coefficients) {
  /* seed 003 sec. 4.2: M = 0.768, S = (0.0768, 0, 0), E = diag(0.0486, 0.0410, 0.0410) to
   * the digits given */
  mbsDeck deck;
  mbsModel *m = load("double_spherical_pendulum_offset.yaml", &deck);
  ck_assert_double_eq_tol(m->body_mass[1], 0.768, 5e-4);
  ck_assert_double_eq_tol(m->body_e[3 + 0], 0.0768, 5e-5);
  ck_assert_double_eq_tol(m->body_e[3 + 1], 0.0, 1e-15);
  ck_assert_double_eq_tol(m->body_e[3 + 2], 0.0, 1e-15);
  const double *E = m->body_E + 9;
  ck_assert_double_eq_tol(E[0], 0.0486, 5e-5);
  ck_assert_double_eq_tol(E[4], 0.0410, 5e-5);
  ck_assert_double_eq_tol(E[8], 0.0410, 5e-5);
  ck_assert_double_eq_tol(E[1], 0.0, 1e-15);
  ck_assert_double_eq_tol(E[2], 0.0, 1e-15);
  ck_assert_double_eq_tol(E[5], 0.0, 1e-15);
  /* the first cube is centred: S = 0, M = 1.5 */
  ck_assert_double_eq_tol(m->body_mass[0], 1.5, 1e-14);
  ck_assert_double_eq_tol(m->body_e[0], 0.0, 1e-15);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

START_TEST(test_shipped_decks_compile) {
  static const char *decks[] = {"quickstart.yaml",
                                "double_pendulum.yaml",
                                "free_body.yaml",
                                "free_body_plate.yaml",
                                "double_spherical_pendulum.yaml",
                                "double_spherical_pendulum_offset.yaml",
                                "spacecraft.yaml",
                                "revolute_pair.yaml",
                                "free_body_torque.yaml",
                                "free_body_torque_window.yaml",
                                "slider_crank.yaml",
                                "cardan_shaft.yaml"};
  for (size_t i = 0; i < sizeof(decks) / sizeof(decks[0]); i++) {
    mbsDeck deck;
    mbsModel *m = load(decks[i], &deck);
    ck_assert_int_eq(m->ndof, m->nq - m->ncon);
    mbs_model_destroy(m);
    mbs_deck_free(&deck);
  }
}
END_TEST

START_TEST(test_plate_singular_mass) {
  /* inertia diag(1, 2, 3): E33 = (1 + 2 - 3)/2 = 0 */
  mbsDeck deck;
  mbsModel *m = load("free_body_plate.yaml", &deck);
  ck_assert_double_eq_tol(m->body_E[8], 0.0, 1e-15);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

Suite *decks_suite(void) {
  Suite *s = suite_create("decks");
  TCase *tc = tcase_create("shipped");
  tcase_add_test(tc, test_offset_inertia_coefficients);
  tcase_add_test(tc, test_shipped_decks_compile);
  tcase_add_test(tc, test_plate_singular_mass);
  suite_add_tcase(s, tc);
  return s;
}
