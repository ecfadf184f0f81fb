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

/* every shipped deck compiles to the degrees of freedom its mechanism has (counted by hand:
 * 6 per rigid body, 3 per point mass, minus what each joint takes, minus 1 per motion) */
START_TEST(test_shipped_decks_compile) {
  static const struct {
    const char *deck;
    int ndof;
  } decks[] = {
      {"quickstart.yaml", 6},                        /* 2 rigid links, 2 spherical: 12 - 6 */
      {"double_pendulum.yaml", 4},                   /* 2 point masses, 2 distance: 6 - 2 */
      {"free_body.yaml", 6},                         /* one free rigid body */
      {"free_body_plate.yaml", 6},                   /* one free rigid body */
      {"double_spherical_pendulum.yaml", 10},        /* 2 rigid bodies, 2 distance: 12 - 2 */
      {"double_spherical_pendulum_offset.yaml", 10}, /* the same */
      {"spacecraft.yaml", 9},                        /* base 6 + 3 wheels on revolutes */
      {"revolute_pair.yaml", 7},                     /* 2 rigid bodies, 1 revolute: 12 - 5 */
      {"free_body_torque.yaml", 6},                  /* one free rigid body */
      {"free_body_torque_window.yaml", 6},           /* one free rigid body */
      {"slider_crank.yaml", 0},                      /* a one-dof loop, its crank driven */
      {"cardan_shaft.yaml", 0},                      /* a one-dof shaft, its input driven */
      {"torque_profile.yaml", 1},                    /* a pendulum on a revolute */
      {"stiff_chain.yaml", 6},                       /* 2 point masses on springs */
      {"step_halving.yaml", 2},                      /* a point mass on a distance joint */
  };
  for (size_t i = 0; i < sizeof(decks) / sizeof(decks[0]); i++) {
    mbsDeck deck;
    mbsModel *m = load(decks[i].deck, &deck);
    ck_assert_msg(m->ndof == decks[i].ndof, "%s: %d degrees of freedom, expected %d",
                  decks[i].deck, m->ndof, decks[i].ndof);
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
