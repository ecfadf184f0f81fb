/* test_fuzz_regressions.c: every input the fuzzer found (tests/fuzz/regressions/: crashes,
 * hangs, leaks and sanitizer reports, each fixed) goes through the fuzz harness's path
 * again, fuzz_one() of tests/fuzz/fuzz_input.h: deck reader from memory, compiler, one
 * step. None may crash (the sanitizer build, make test-asan, also catches leaks and
 * undefined behaviour), hang or come back inconsistent; an error status is fine. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/fuzz_input.h"

/* the whole file (caller frees), its size in *n */
static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  long len = ftell(f);
  ck_assert_int_ge(len, 0);
  ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
  unsigned char *buf = malloc((size_t)len + 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
  fclose(f);
  *n = (size_t)len;
  return buf;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

START_TEST(test_regressions) {
  static const char *const dirs[] = {"../tests/fuzz/regressions", "tests/fuzz/regressions", NULL};
  DIR *dir = NULL;
  const char *base = NULL;
  for (int i = 0; dirs[i] && !dir; i++) {
    dir = opendir(dirs[i]);
    base = dirs[i];
  }
  ck_assert_msg(dir != NULL, "tests/fuzz/regressions not found (run from build/ or the top)");

  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) {
      continue;
    }
    char path[1024];
    size_t size;
    snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
    unsigned char *data = slurp(path, &size);
    double t0 = now();
    FuzzResult r = fuzz_one(data, size);
    double took = now() - t0;
    free(data);
    ck_assert_msg(r.bad == NULL, "%s: %s", e->d_name, r.bad ? r.bad : "");
    /* the hangs it found must now end quickly (generously: sanitizers and valgrind) */
    ck_assert_msg(took < 20.0, "%s took %.1f s", e->d_name, took);
    n++;
  }
  closedir(dir);
  ck_assert_int_ge(n, 1);
}
END_TEST

/* the harness itself: overrides from "#set" lines reach the deck, errors carry messages */
START_TEST(test_harness) {
  static const char good[] = "#set bodies.bob.mass=2\n"
                             "mbsim: 1\n"
                             "bodies:\n"
                             "  - {name: bob, type: point, mass: 1, position: [1, 0, 0]}\n"
                             "solver: {dt: 0.001, t_end: 0.01}\n";
  FuzzResult r = fuzz_one((const unsigned char *)good, strlen(good));
  ck_assert_ptr_null(r.bad);
  ck_assert_int_eq(r.deck, MBS_OK);
  ck_assert_int_eq(r.compile, MBS_OK);
  ck_assert_int_eq(r.step, MBS_OK);

  static const char bad_set[] = "#set bodies.nobody.mass=2\n"
                                "mbsim: 1\n"
                                "bodies:\n"
                                "  - {name: bob, type: point, mass: 1, position: [1, 0, 0]}\n";
  r = fuzz_one((const unsigned char *)bad_set, strlen(bad_set));
  ck_assert_ptr_null(r.bad);
  ck_assert_int_eq(r.deck, MBS_ERR_ARGS);

  r = fuzz_one((const unsigned char *)"", 0);
  ck_assert_ptr_null(r.bad);
  ck_assert_int_eq(r.deck, MBS_ERR_DECK);
}
END_TEST

Suite *fuzz_regressions_suite(void) {
  Suite *s = suite_create("fuzz_regressions");
  TCase *tc = tcase_create("regressions");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_regressions);
  tcase_add_test(tc, test_harness);
  suite_add_tcase(s, tc);
  return s;
}
