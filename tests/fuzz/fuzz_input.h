/* fuzz_input.h: one fuzz input through the deck reader and the model compiler, shared by the
 * libFuzzer harness (tests/fuzz/fuzz_deck.c) and the regression test
 * (tests/test_fuzz_regressions.c) so that both take exactly the same path.
 *
 * An input is a deck. Leading lines "#set PATH=VALUE" (YAML comments, so the deck stays
 * valid YAML) become --set overrides, at most FUZZ_MAX_SET of them, so the fuzzer also
 * exercises the override code. A deck that loads is compiled; a model that compiles and is
 * small is also stepped once, so that compiled data reach the kernel (unless the environment
 * variable FUZZ_NO_STEP is set: deck and compiler only). */
#ifndef MBSIM_FUZZ_INPUT_H
#define MBSIM_FUZZ_INPUT_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"

#define FUZZ_MAX_SET 4
#define FUZZ_MAX_STEP_NQ 96

/* how far an input got, and whether what it produced is consistent */
typedef struct {
  mbsStatus deck;    /* status of mbs_deck_load_text */
  mbsStatus compile; /* MBS_OK, an error, or MBS_ERR_ARGS when not reached */
  mbsStatus step;    /* MBS_OK, an error, or MBS_ERR_ARGS when not reached */
  const char *bad;   /* NULL, or what was inconsistent (a bug even without a crash) */
} FuzzResult;

/* an error must say something */
static int fuzz_error_ok(mbsStatus st, const mbsError *e) {
  return st == MBS_OK ||
         (e->status == st && e->msg[0] != '\0' && memchr(e->msg, '\0', sizeof(e->msg)));
}

static FuzzResult fuzz_one(const unsigned char *data, size_t size) {
  FuzzResult res = {MBS_ERR_ARGS, MBS_ERR_ARGS, MBS_ERR_ARGS, NULL};
  mbsOverride ov[FUZZ_MAX_SET];
  int nov = 0;
  char *head = malloc(size + 1);
  if (!head) {
    return res;
  }
  memcpy(head, data, size);
  head[size] = '\0';

  /* "#set PATH=VALUE\n" lines at the very start */
  char *p = head;
  while (nov < FUZZ_MAX_SET && (size_t)(p - head) < size && strncmp(p, "#set ", 5) == 0) {
    char *eol = strchr(p, '\n');
    char *eq = strchr(p + 5, '=');
    if (!eol || !eq || eq > eol) {
      break;
    }
    *eq = '\0';
    *eol = '\0';
    ov[nov].path = p + 5;
    ov[nov].value = eq + 1;
    nov++;
    p = eol + 1;
  }

  mbsDeck deck;
  mbsError err;
  res.deck = mbs_deck_load_text(&deck, "fuzz.yaml", (const char *)data, size, ov, nov, &err);
  if (!fuzz_error_ok(res.deck, &err)) {
    res.bad = "deck error without a message";
  }
  if (res.deck == MBS_OK) {
    /* what the reader promises about a valid deck */
    int ok = (deck.nbody >= 1 || deck.nbeam >= 1) && deck.text != NULL && deck.solver.dt > 0 &&
             deck.solver.dt <= deck.solver.t_end && deck.output.every >= 1;
    for (int b = 0; ok && b < deck.nbody; b++) {
      ok = deck.bodies[b].mass > 0 && isfinite(deck.bodies[b].mass);
      for (int k = 0; ok && k < 3; k++) {
        ok = isfinite(deck.bodies[b].position[k]) && isfinite(deck.bodies[b].velocity[k]);
      }
    }
    /* a body index names a body or, from nbody on, a beam node */
    int nframe = deck.nbody + deck.nbeam_node;
    for (int j = 0; ok && j < deck.njoint; j++) {
      ok = deck.joints[j].body[0] >= -1 && deck.joints[j].body[0] < nframe &&
           deck.joints[j].body[1] >= -1 && deck.joints[j].body[1] < nframe &&
           deck.joints[j].body[0] != deck.joints[j].body[1];
    }
    for (int l = 0; ok && l < deck.nload; l++) {
      /* each load names a body, a joint, two bodies or a beam (by type); unused ones are -1 */
      const mbsDeckLoad *ld = &deck.loads[l];
      ok = ld->body >= -1 && ld->body < nframe && ld->joint >= -1 && ld->joint < deck.njoint &&
           ld->bodies[0] >= -1 && ld->bodies[0] < nframe && ld->bodies[1] >= -1 &&
           ld->bodies[1] < nframe && ld->beam >= -1 && ld->beam < deck.nbeam &&
           (ld->body >= 0 || ld->joint >= 0 || ld->bodies[0] >= 0 || ld->bodies[1] >= 0 ||
            ld->beam >= 0);
    }
    if (!ok) {
      res.bad = "a loaded deck breaks the reader's promises";
    }

    /* the model-size budget below the fuzzer's RSS limit (-rss_limit_mb=2048) */
    if (!(deck.solver.memory_limit > 0.0)) {
      deck.solver.memory_limit = 1.0;
    }
    mbsModel *m = mbs_model_compile(&deck, &err);
    res.compile = m ? MBS_OK : err.status;
    if (!m && !fuzz_error_ok(err.status, &err)) {
      res.bad = "compile error without a message";
    }
    /* a space-time step solves a block of elements x degree stages at once: the same bound
     * on the block's coordinates (a block of 100 elements of degree 2 of a 24-coordinate
     * model failing on a singular matrix took 18 s) */
    long step_nq = m ? m->nq : 0;
    if (m && m->integrator == MBS_INTEGRATOR_SPACETIME) {
      step_nq *= (long)m->spacetime_elements * m->spacetime_degree;
    }
    if (m && step_nq <= FUZZ_MAX_STEP_NQ && !getenv("FUZZ_NO_STEP")) {
      /* one step: on success the state must be finite */
      mbsData *d = mbs_data_create(m, &err);
      if (d) {
        mbsObservables o;
        mbs_observe(m, d, &o);
        res.step = mbs_solver_step(m, d, m->dt, &err);
        if (res.step == MBS_OK) {
          for (int i = 0; i < m->nq; i++) {
            if (!isfinite(d->q[i]) || !isfinite(d->v[i])) {
              res.bad = "a step succeeded with a non-finite state";
            }
          }
        } else if (!fuzz_error_ok(res.step, &err)) {
          res.bad = "step error without a message";
        }
        mbs_data_destroy(d);
      }
    }
    mbs_model_destroy(m);
  }
  mbs_deck_free(&deck);
  free(head);
  return res;
}

#endif
