/* test_reader.c: the restart reader run in a child process (mbs_output_read_last_isolated)
 * gives exactly what the reader gives in this process, refuses other sizes before reading
 * the record, never opens a FIFO, and reports a child that crashes or hangs on a damaged
 * file (tests/fuzz/restart-regressions/); mbs_output_inspect on an output path. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mbsim/output.h"
#include "scratch_dir.h"
#include "std_layout.h"

#define NQ 4
#define NC 2
#define NJ 1

static void setup(void) {
  scratch_make("mbs_test_reader");
}

/* a genalpha-like result of 5 records with known values; multipliers only when with_mu */
static void write_result(const char *path, int with_mu) {
  static const char *const cn[NQ] = {"a.x", "a.y", "\xc3\xbc.z", "b.x"};
  static const char *const bn[1] = {"a"};
  static const char *const jn[NJ] = {"hinge"};
  testInfo info = {.version = "0.1.0",
                        .title = "t",
                        .deck_text = "d",
                        .integrator = "genalpha",
                        .integrator_reason = "r",
                        .dt = 0.01,
                        .t_end = 1.0,
                        .n_coordinates = NQ,
                        .n_constraints = NC,
                        .n_dof = NQ - NC,
                        .coordinate_names = cn,
                        .nbody = 1,
                        .body_names = bn,
                        .njoint = NJ,
                        .joint_names = jn,
                        .write_acceleration = 1};
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  double q[NQ], v[NQ], acc[NQ], aacc[NQ], mu[NC], react[6 * NJ], jpos[3 * NJ];
  double pos[3] = {0}, rot[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, vel[3] = {0}, om[3] = {0};
  for (int k = 0; k < 5; k++) {
    for (int i = 0; i < NQ; i++) {
      q[i] = k + 0.1 * i + 1.0 / 3.0;
      v[i] = -k - 0.2 * i;
      acc[i] = 1e-300 * (i + 1);
      aacc[i] = 1e300 / (i + 1);
    }
    for (int r = 0; r < NC; r++) {
      mu[r] = 7.0 * k - r;
    }
    for (int i = 0; i < 6 * NJ; i++) {
      react[i] = i - 2.5;
    }
    for (int i = 0; i < 3 * NJ; i++) {
      jpos[i] = i;
    }
    testRecord rec = {.time = 0.01 * k,
                     .external_work = 0.5 * k,
                     .dissipated = 0.25 * k,
                     .iterations = k + 1,
                     .step_size = k > 0 ? 0.01 : 0.0,
                     .q = q,
                     .v = v,
                     .body_position = pos,
                     .body_orientation = rot,
                     .body_velocity = vel,
                     .body_angular_velocity = om,
                     .joint_reaction = react,
                     .joint_position = jpos,
                     .multipliers = with_mu ? mu : NULL,
                     .acceleration = acc,
                     .algorithmic_acceleration = aacc};
    ck_assert_msg(tl_append(w, &rec, &err) == MBS_OK, "append: %s", err.msg);
  }
  ck_assert_int_eq(mbs_output_set_status(w, "completed", &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
}

static int same_doubles(const double *a, const double *b, int n) {
  return (a == NULL) == (b == NULL) && (!a || memcmp(a, b, (size_t)n * sizeof(double)) == 0);
}

/* the child's record is the in-process record, bit for bit */
START_TEST(test_isolated_equals_in_process) {
  char path[128];
  snprintf(path, sizeof(path), "%s/r.h5", scratch);
  for (int with_mu = 0; with_mu <= 1; with_mu++) {
    write_result(path, with_mu);
    mbsLastRecord a, b;
    mbsError err;
    ck_assert_msg(mbs_output_read_last(path, &a, &err) == MBS_OK, "%s", err.msg);
    mbsModelSizes sizes = {NQ, NC, NJ};
    ck_assert_msg(mbs_output_read_last_isolated(path, &sizes, NULL, &b, &err) == MBS_OK, "%s",
                  err.msg);
    ck_assert_int_eq(a.nrecord, 5);
    ck_assert_int_eq(b.nrecord, a.nrecord);
    ck_assert_str_eq(b.status, "completed");
    ck_assert(b.dt == a.dt && b.t_end == a.t_end && b.time == a.time && b.time == 0.04 &&
              b.first_time == 0.0 && b.external_work == a.external_work &&
              b.dissipated == a.dissipated && b.step_size == a.step_size);
    ck_assert_int_eq(b.iterations, 5);
    ck_assert(b.n_coordinates == NQ && b.n_constraints == NC && b.njoint == NJ);
    ck_assert(same_doubles(a.q, b.q, NQ) && same_doubles(a.v, b.v, NQ));
    ck_assert(same_doubles(a.multipliers, b.multipliers, NC));
    ck_assert(with_mu ? b.multipliers != NULL && b.multipliers[1] == 27.0
                      : b.multipliers == NULL);
    ck_assert(same_doubles(a.joint_reaction, b.joint_reaction, 6 * NJ));
    ck_assert(same_doubles(a.acceleration, b.acceleration, NQ) &&
              same_doubles(a.algorithmic_acceleration, b.algorithmic_acceleration, NQ));
    ck_assert(b.acceleration && b.acceleration[0] == 1e-300 &&
              b.algorithmic_acceleration[0] == 1e300);
    for (int i = 0; i < NQ; i++) {
      ck_assert_str_eq(b.coordinate_names[i], a.coordinate_names[i]);
    }
    ck_assert_str_eq(b.coordinate_names[2], "\xc3\xbc.z");
    /* the /state arrays by name, whatever they are: the same in the child */
    static const char *const state[4] = {"acceleration", "algorithmic_acceleration",
                                         "multipliers", "scheme_velocity"};
    ck_assert_int_eq(a.nstate, 4);
    ck_assert_int_eq(b.nstate, 4);
    for (int i = 0; i < 4; i++) {
      ck_assert_str_eq(a.state[i].name, state[i]);
      ck_assert_str_eq(b.state[i].name, state[i]);
      ck_assert_int_eq(b.state[i].length, a.state[i].length);
      ck_assert(same_doubles(a.state[i].data, b.state[i].data, a.state[i].length));
    }
    ck_assert(same_doubles(b.state[0].data, b.acceleration, NQ));
    ck_assert(same_doubles(b.state[2].data, b.multipliers, NC));
    ck_assert_ptr_null(b.state[3].data); /* not given: NaN throughout */
    ck_assert_int_eq(b.state[2].length, NC);
    mbs_output_last_free(&a);
    mbs_output_last_free(&b);
  }
}
END_TEST

/* other sizes: refused before the record is read, with the file's sizes */
START_TEST(test_isolated_sizes) {
  char path[128];
  snprintf(path, sizeof(path), "%s/r.h5", scratch);
  write_result(path, 1);
  mbsLastRecord r;
  mbsError err;
  mbsModelSizes sizes = {NQ + 1, NC, NJ};
  ck_assert_int_eq(mbs_output_read_last_isolated(path, &sizes, NULL, &r, &err), MBS_ERR_MODEL);
  ck_assert(r.n_coordinates == NQ && r.n_constraints == NC && r.njoint == NJ && r.q == NULL);
  sizes = (mbsModelSizes){NQ, NC, NJ + 2};
  ck_assert_int_eq(mbs_output_read_last_sized(path, &sizes, &r, &err), MBS_ERR_MODEL);
  ck_assert_int_eq(r.njoint, NJ);
  ck_assert_ptr_nonnull(strstr(err.msg, "1 joints"));
}
END_TEST

/* a FIFO is refused at once (nothing writes to it: an open would block for ever) */
START_TEST(test_fifo_not_opened) {
  char path[128];
  snprintf(path, sizeof(path), "%s/fifo", scratch);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  mbsLastRecord r;
  mbsError err;
  ck_assert_int_eq(mbs_output_read_last_isolated(path, NULL, NULL, &r, &err), MBS_ERR_IO);
  ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file (a FIFO)"));
  ck_assert_int_eq(mbs_output_read_last(path, &r, &err), MBS_ERR_IO);
  int is_result = 1;
  ck_assert_int_eq(mbs_output_inspect(path, NULL, &is_result, &err), MBS_OK);
  ck_assert_int_eq(is_result, 0);
}
END_TEST

/* mbs_output_inspect: nothing, a text file, a result */
START_TEST(test_inspect) {
  char path[128], text[128];
  int is_result = 1;
  mbsError err;
  snprintf(path, sizeof(path), "%s/r.h5", scratch);
  ck_assert_int_eq(mbs_output_inspect(path, NULL, &is_result, &err), MBS_OK);
  ck_assert_int_eq(is_result, 0);
  snprintf(text, sizeof(text), "%s/text.h5", scratch);
  FILE *f = fopen(text, "w");
  ck_assert_ptr_nonnull(f);
  fputs("notes\n", f);
  fclose(f);
  is_result = 1;
  ck_assert_int_eq(mbs_output_inspect(text, NULL, &is_result, &err), MBS_OK);
  ck_assert_int_eq(is_result, 0);
  write_result(path, 1);
  ck_assert_int_eq(mbs_output_inspect(path, NULL, &is_result, &err), MBS_OK);
  ck_assert_int_eq(is_result, 1);
}
END_TEST

/* the damaged files that crash or hang HDF5: the child's end is reported, this process
 * lives on, and a hang costs the time limit only */
START_TEST(test_damaged_files) {
  static const char *const dirs[] = {"../tests/fuzz/restart-regressions",
                                     "tests/fuzz/restart-regressions", NULL};
  static const char *const files[] = {"crash-hdf5-global-heap-segv.h5",
                                      "hang-hdf5-global-heap-loop.h5"};
  char path[256];
  const char *d = NULL;
  for (int i = 0; dirs[i] && !d; i++) {
    snprintf(path, sizeof(path), "%s/%s", dirs[i], files[0]);
    d = access(path, R_OK) == 0 ? dirs[i] : NULL;
  }
  ck_assert_msg(d != NULL, "tests/fuzz/restart-regressions not found");
  mbsInspectLimits lim = {1.0, 0.0};
  for (int i = 0; i < 2; i++) {
    snprintf(path, sizeof(path), "%s/%s", d, files[i]);
    mbsLastRecord r;
    mbsError err;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(mbs_output_read_last_isolated(path, NULL, &lim, &r, &err), MBS_ERR_OUTPUT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(strstr(err.msg, "not an mbsim-run result") != NULL, "%s", err.msg);
    /* a signal, or (under AddressSanitizer) its report and exit status 1, or the limit: the
     * wall-time deadline or, on a loaded machine, the CPU-time limit, whichever comes first */
    ck_assert_msg(i == 0 ? strstr(err.msg, "crashed") || strstr(err.msg, "failed (exit status")
                         : strstr(err.msg, "did not finish within 1 s") ||
                               strstr(err.msg, "took more than 1 s of CPU time"),
                  "%s", err.msg);
    ck_assert_msg(secs < 5.0, "%.2f s", secs);
    ck_assert_ptr_null(r.q);
  }
}
END_TEST

Suite *reader_suite(void) {
  Suite *s = suite_create("reader");
  TCase *tc = tcase_create("isolated");
  tcase_add_checked_fixture(tc, setup, scratch_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_isolated_equals_in_process);
  tcase_add_test(tc, test_isolated_sizes);
  tcase_add_test(tc, test_fifo_not_opened);
  tcase_add_test(tc, test_inspect);
  tcase_add_test(tc, test_damaged_files);
  suite_add_tcase(s, tc);
  return s;
}
