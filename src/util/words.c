/* words.c: the word tables of the enums in types.h, one X-macro list each, so that the kernel
 * can name a joint type or an integrator without the deck reader. */
#include <string.h>

#include "mbsim/types.h"

#define WORD(name, word) word,
const char *const mbs_body_type_words[MBS_BODY_TYPE_COUNT] = {MBS_BODY_TYPE_LIST(WORD)};
const char *const mbs_joint_type_words[MBS_JOINT_TYPE_COUNT] = {MBS_JOINT_TYPE_LIST(WORD)};
const char *const mbs_load_type_words[MBS_LOAD_TYPE_COUNT] = {MBS_LOAD_TYPE_LIST(WORD)};
const char *const mbs_frame_words[MBS_FRAME_COUNT] = {MBS_FRAME_LIST(WORD)};
const char *const mbs_torque_method_words[MBS_TORQUE_METHOD_COUNT] = {MBS_TORQUE_METHOD_LIST(WORD)};
const char *const mbs_augmentation_words[MBS_AUGMENTATION_COUNT] = {MBS_AUGMENTATION_LIST(WORD)};
const char *const mbs_profile_words[MBS_PROFILE_COUNT] = {MBS_PROFILE_LIST(WORD)};
const char *const mbs_integrator_words[MBS_INTEGRATOR_COUNT] = {MBS_INTEGRATOR_LIST(WORD)};
const char *const mbs_linear_solver_words[MBS_LINEAR_SOLVER_COUNT] = {MBS_LINEAR_SOLVER_LIST(WORD)};
const char *const mbs_elem_kind_words[MBS_ELEM_KIND_COUNT] = {MBS_ELEM_KIND_LIST(WORD)};
const char *const mbs_shape_words[MBS_SHAPE_COUNT] = {MBS_SHAPE_LIST(WORD)};
const char *const mbs_visual_words[MBS_VISUAL_COUNT] = {MBS_VISUAL_LIST(WORD)};
const char *const mbs_contact_law_words[MBS_CONTACT_LAW_COUNT] = {MBS_CONTACT_LAW_LIST(WORD)};
const char *const mbs_moreau_variant_words[MBS_MOREAU_VARIANT_COUNT] = {
    MBS_MOREAU_VARIANT_LIST(WORD)};
#undef WORD

const char *mbs_body_type_word(mbsBodyType t) {
  return (unsigned)t < MBS_BODY_TYPE_COUNT ? mbs_body_type_words[t] : "unknown";
}

const char *mbs_joint_type_word(mbsJointType t) {
  return (unsigned)t < MBS_JOINT_TYPE_COUNT ? mbs_joint_type_words[t] : "unknown";
}

const char *mbs_load_type_word(mbsLoadType t) {
  return (unsigned)t < MBS_LOAD_TYPE_COUNT ? mbs_load_type_words[t] : "unknown";
}

const char *mbs_linear_solver_word(mbsLinearSolver t) {
  return (unsigned)t < MBS_LINEAR_SOLVER_COUNT ? mbs_linear_solver_words[t] : "unknown";
}

const char *mbs_integrator_word(mbsIntegrator t) {
  return (unsigned)t < MBS_INTEGRATOR_COUNT ? mbs_integrator_words[t] : "unknown";
}

const char *mbs_elem_kind_word(mbsElemKind t) {
  return (unsigned)t < MBS_ELEM_KIND_COUNT ? mbs_elem_kind_words[t] : "unknown";
}

const char *mbs_shape_word(mbsShapeKind t) {
  return (unsigned)t < MBS_SHAPE_COUNT ? mbs_shape_words[t] : "unknown";
}

const char *mbs_contact_law_word(mbsContactLaw t) {
  return (unsigned)t < MBS_CONTACT_LAW_COUNT ? mbs_contact_law_words[t] : "unknown";
}

mbsVisualKind mbs_visual_from_word(const char *word) {
  for (int i = 0; word && i < MBS_VISUAL_COUNT; i++) {
    if (strcmp(word, mbs_visual_words[i]) == 0) {
      return (mbsVisualKind)i;
    }
  }
  return MBS_VISUAL_NONE;
}

int mbs_integrator_from_word(const char *word) {
  if (!word) {
    return -1;
  }
  for (int i = 0; i < MBS_INTEGRATOR_COUNT; i++) {
    if (strcmp(word, mbs_integrator_words[i]) == 0) {
      return i;
    }
  }
  return -1;
}
