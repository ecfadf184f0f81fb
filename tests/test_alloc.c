/* test_alloc.c: nothing is allocated in the step loop. malloc, calloc, realloc are
 * interposed for the whole runner (glibc's __libc_* do the work) and counted while a test
 * asks for it; the library's own allocations and those of the linear solvers' shared
 * libraries are both seen. With KLU, a step after the first allocates nothing unless KLU
 * pivots afresh (klu_factor allocates a new numeric object: when the reused pivot order's
 * condition estimate drops by 1e3, after a record, after a drive's kink); a refactorization
 * on the last pivot order reuses its storage. UMFPACK allocates inside every numeric
 * factorization (umfpack_di_numeric), which the test shows as well.
 *
 * Under AddressSanitizer (which owns malloc) the interposition is left out and the test
 * only runs the steps. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"
#include "util/linsolve.h"

#if defined(__SANITIZE_ADDRESS__)
#define COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNTING 0
#endif
#endif
#ifndef COUNTING
#define COUNTING 1
#endif

static long g_allocs;
static int g_counting;

#if COUNTING
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

void *malloc(size_t n) {
  if (g_counting) {
    g_allocs++;
  }
  return __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
  if (g_counting) {
    g_allocs++;
  }
  return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
  if (g_counting) {
    g_allocs++;
  }
  return __libc_realloc(p, n);
}
#endif

#define DECKS "../decks/"

/* steps 2..nsteps of deck under integrator and linear solver: the allocations in steps
 * without a fresh pivoting into *plain, those in steps with one into *fresh, and the count
 * of such steps into *nfresh */
static void allocs_in_steps(const char *deck_name, const char *integrator, const char *solver,
                            int nsteps, long *plain, long *fresh, int *nfresh) {
  char path[256];
  snprintf(path, sizeof(path), DECKS "%s", deck_name);
  mbsOverride ov[] = {{"solver.integrator", integrator}, {"solver.linear_solver", solver}};
  mbsDeck deck;
  mbsError err;
  memset(&deck, 0, sizeof(deck));
  ck_assert_msg(mbs_deck_load(&deck, path, ov, 2, &err) == MBS_OK, "%s: %s", path, err.msg);
  mbsModel *m = mbs_model_compile(&deck, &err);
  ck_assert_msg(m != NULL, "%s: %s", path, err.msg);
  mbsData *d = mbs_data_create(m, &err);
  ck_assert_msg(d != NULL, "%s: %s", path, err.msg);
  mbs_solver_start(m, d);
  ck_assert_msg(mbs_solver_advance(m, d, d->t + m->dt, &err) == MBS_OK, "%s: %s", path, err.msg);
  *plain = *fresh = 0;
  *nfresh = 0;
  for (int k = 1; k < nsteps; k++) {
    long f0 = mbs_linsolve_fresh_count(d->ls);
    g_allocs = 0;
    g_counting = 1;
    mbsStatus st = mbs_solver_advance(m, d, d->t + m->dt, &err);
    g_counting = 0;
    ck_assert_msg(st == MBS_OK, "%s (%s): step %d: %s", path, integrator, k + 1, err.msg);
    if (mbs_linsolve_fresh_count(d->ls) != f0) {
      *fresh += g_allocs;
      (*nfresh)++;
    } else {
      *plain += g_allocs;
    }
  }
  size_t size, high;
  mbs_solver_arena_usage(d, &size, &high);
  ck_assert_msg(high > 0 && high <= size, "arena high-water mark %zu of %zu", high, size);
  mbs_data_destroy(d);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}

/* decks with constraint rows, constraint elements, springs, dampers and torques; no
 * prescribed motion (a step across a kink of one projects the velocities, which pivots
 * afresh: KLU then allocates a new numeric object) */
static const char *const DECK_LIST[] = {"quickstart.yaml",        "double_pendulum.yaml",
                                        "spacecraft.yaml",        "stiff_chain.yaml",
                                        "rotational_spring.yaml", "free_body_torque.yaml",
                                        "revolute_pair.yaml",     "damped_oscillator.yaml"};
static const char *const INTEGRATORS[] = {"em", "midpoint", "euler", "genalpha"};

START_TEST(test_no_allocation_in_steps_klu) {
  for (size_t k = 0; k < sizeof(DECK_LIST) / sizeof(DECK_LIST[0]); k++) {
    for (size_t i = 0; i < sizeof(INTEGRATORS) / sizeof(INTEGRATORS[0]); i++) {
      long plain, fresh;
      int nfresh;
      allocs_in_steps(DECK_LIST[k], INTEGRATORS[i], "klu", 50, &plain, &fresh, &nfresh);
      ck_assert_msg(!COUNTING || plain == 0,
                    "%s (%s, klu): %ld allocations in the %d of 49 steps that kept KLU's "
                    "pivot order",
                    DECK_LIST[k], INTEGRATORS[i], plain, 49 - nfresh);
      /* fresh pivoting is the exception, not every step */
      ck_assert_msg(nfresh <= 5, "%s (%s, klu): KLU pivoted afresh in %d of 49 steps", DECK_LIST[k],
                    INTEGRATORS[i], nfresh);
    }
  }
}
END_TEST

/* static (equilibria at each time of the grid) on the decks that have them: the step loop
 * allocates nothing either */
static const char *const STATIC_DECKS[] = {"static_spring.yaml", "static_pendulum.yaml",
                                           "static_truss.yaml", "expressions.yaml",
                                           "rotational_spring.yaml"};

START_TEST(test_no_allocation_in_static_steps_klu) {
  for (size_t k = 0; k < sizeof(STATIC_DECKS) / sizeof(STATIC_DECKS[0]); k++) {
    long plain, fresh;
    int nfresh;
    allocs_in_steps(STATIC_DECKS[k], "static", "klu", 50, &plain, &fresh, &nfresh);
    ck_assert_msg(!COUNTING || plain == 0,
                  "%s (static, klu): %ld allocations in the %d of 49 steps that kept KLU's "
                  "pivot order",
                  STATIC_DECKS[k], plain, 49 - nfresh);
    ck_assert_msg(nfresh <= 5, "%s (static, klu): KLU pivoted afresh in %d of 49 steps",
                  STATIC_DECKS[k], nfresh);
  }
}
END_TEST

/* UMFPACK pivots afresh and allocates in every numeric factorization: documented, not
 * wanted (klu for runs that must not allocate) */
START_TEST(test_umfpack_allocates) {
  long plain, fresh;
  int nfresh;
  allocs_in_steps("double_pendulum.yaml", "em", "umfpack", 10, &plain, &fresh, &nfresh);
  ck_assert_int_eq(nfresh, 9);
  ck_assert_msg(!COUNTING || fresh > 0, "umfpack: %ld allocations in 9 steps", fresh);
}
END_TEST

Suite *alloc_suite(void) {
  Suite *s = suite_create("alloc");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_no_allocation_in_steps_klu);
  tcase_add_test(tc, test_no_allocation_in_static_steps_klu);
  tcase_add_test(tc, test_umfpack_allocates);
  suite_add_tcase(s, tc);
  return s;
}
