/* deck_steps.h: a deck loaded, compiled, started and advanced a few steps, for the unit tests
 * that check a quantity on every shipped deck. */
#ifndef MBS_TESTS_DECK_STEPS_H
#define MBS_TESTS_DECK_STEPS_H

#include <check.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"

/* the model of the deck at path (into *deck) and its data (*data) after `steps` steps of dt
 * (none for a static deck), each stage asserted; the caller frees all three */
static inline mbsModel *deck_advanced(const char *path, int steps, mbsDeck *deck, mbsData **data) {
  mbsError err;
  memset(deck, 0, sizeof(*deck));
  ck_assert_msg(mbs_deck_load(deck, path, NULL, 0, &err) == MBS_OK, "%s: %s", path, err.msg);
  mbsModel *m = mbs_model_compile(deck, &err);
  ck_assert_msg(m != NULL, "%s: %s", path, err.msg);
  mbsData *d = mbs_data_create(m, &err);
  ck_assert_msg(d != NULL, "%s: %s", path, err.msg);
  mbs_solver_start(m, d);
  for (int k = 0; k < (m->integrator == MBS_INTEGRATOR_STATIC ? 0 : steps); k++) {
    ck_assert_msg(mbs_solver_advance(m, d, d->t + m->dt, &err) == MBS_OK, "%s: %s", path,
                  err.msg);
  }
  *data = d;
  return m;
}

#endif
