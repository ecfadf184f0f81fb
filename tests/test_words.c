/* test_words.c: the word tables of types.h (src/util/words.c): one distinct word per enum
 * value, "unknown" out of range, integrator words read back; the integrator policy
 * (src/util/integrators.c) against the solver's table (src/solver/integrator.c). */
#include <check.h>
#include <string.h>

#include "mbsim/types.h"
#include "solver/integrator.h"

/* every entry set, no two equal */
static void check_table(const char *const *words, int n, const char *what) {
  for (int i = 0; i < n; i++) {
    ck_assert_msg(words[i] && words[i][0], "%s %d has no word", what, i);
    for (int k = 0; k < i; k++) {
      ck_assert_msg(strcmp(words[i], words[k]) != 0, "%s: '%s' twice", what, words[i]);
    }
  }
}

START_TEST(test_tables) {
  check_table(mbs_body_type_words, MBS_BODY_TYPE_COUNT, "body type");
  check_table(mbs_joint_type_words, MBS_JOINT_TYPE_COUNT, "joint type");
  check_table(mbs_load_type_words, MBS_LOAD_TYPE_COUNT, "load type");
  check_table(mbs_frame_words, MBS_FRAME_COUNT, "frame");
  check_table(mbs_torque_method_words, MBS_TORQUE_METHOD_COUNT, "torque method");
  check_table(mbs_augmentation_words, MBS_AUGMENTATION_COUNT, "augmentation");
  check_table(mbs_profile_words, MBS_PROFILE_COUNT, "profile");
  check_table(mbs_integrator_words, MBS_INTEGRATOR_COUNT, "integrator");
  check_table(mbs_linear_solver_words, MBS_LINEAR_SOLVER_COUNT, "linear solver");
  check_table(mbs_elem_kind_words, MBS_ELEM_KIND_COUNT, "element kind");
}
END_TEST

START_TEST(test_word_functions) {
  ck_assert_str_eq(mbs_joint_type_word(MBS_JOINT_REVOLUTE), "revolute");
  ck_assert_str_eq(mbs_body_type_word(MBS_BODY_POINT), "point");
  ck_assert_str_eq(mbs_load_type_word(MBS_LOAD_ROTATIONAL_SPRING), "rotational_spring");
  ck_assert_str_eq(mbs_linear_solver_word(MBS_LINEAR_KLU), "klu");
  ck_assert_str_eq(mbs_elem_kind_word(MBS_ELEM_DRIVE), "drive");
  ck_assert_str_eq(mbs_joint_type_word(MBS_JOINT_TYPE_COUNT), "unknown");
  ck_assert_str_eq(mbs_joint_type_word((mbsJointType)-1), "unknown");
  ck_assert_str_eq(mbs_integrator_word(MBS_INTEGRATOR_COUNT), "unknown");
  ck_assert_str_eq(mbs_elem_kind_word(MBS_ELEM_KIND_COUNT), "unknown");
  for (int i = 0; i < MBS_INTEGRATOR_COUNT; i++) {
    ck_assert_int_eq(mbs_integrator_from_word(mbs_integrator_word((mbsIntegrator)i)), i);
  }
  ck_assert_int_eq(mbs_integrator_from_word("unknown"), -1);
  ck_assert_int_eq(mbs_integrator_from_word(""), -1);
  ck_assert_int_eq(mbs_integrator_from_word(NULL), -1);
}
END_TEST

/* each integrator's policy agrees with its solver entry: the integrators with contacts are
 * those whose entry reports contacts, an equilibrium solver does not step with velocities,
 * auto (no entry) is resolved and has the defaults, every monitor has a threshold */
START_TEST(test_integrator_policy) {
  for (int i = 0; i < MBS_INTEGRATOR_COUNT; i++) {
    const mbsIntegratorPolicy *p = mbs_integrator_policy((mbsIntegrator)i);
    const mbsIntegratorTable *t = mbs_integrator_table((mbsIntegrator)i);
    const char *w = mbs_integrator_word((mbsIntegrator)i);
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(p->energy_warning > 0.0 && p->energy_warning < 1.0, "%s: threshold", w);
    if (!t) {
      ck_assert_int_eq(i, MBS_INTEGRATOR_AUTO);
      ck_assert_int_eq(p->stepwise + p->equilibrium + p->contacts + p->pin_pivots, 0);
      continue;
    }
    ck_assert_msg(p->contacts == (t->contacts != NULL), "%s: contacts", w);
    ck_assert_msg(!(p->equilibrium && p->stepwise), "%s: equilibrium and stepwise", w);
    ck_assert_msg(!p->pin_pivots || p->stepwise, "%s: pinned pivots without steps", w);
  }
  ck_assert_ptr_eq(mbs_integrator_policy(MBS_INTEGRATOR_COUNT),
                   mbs_integrator_policy(MBS_INTEGRATOR_AUTO));
  ck_assert_int_eq(mbs_integrator_policy(MBS_INTEGRATOR_STATIC)->equilibrium, 1);
}
END_TEST

Suite *words_suite(void) {
  Suite *s = suite_create("words");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_tables);
  tcase_add_test(tc, test_word_functions);
  tcase_add_test(tc, test_integrator_policy);
  suite_add_tcase(s, tc);
  return s;
}
