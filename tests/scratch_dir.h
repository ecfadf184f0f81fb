/* scratch_dir.h: a scratch directory per test case, shared by test_output.c and
 * test_reader.c: created by scratch_setup (mkdtemp under /tmp), emptied and removed by
 * scratch_teardown (whatever the test left in it). */
#ifndef MBSIM_TESTS_SCRATCH_DIR_H
#define MBSIM_TESTS_SCRATCH_DIR_H

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the directory of the running test case */
static char scratch[64];

static void scratch_make(const char *prefix) {
  snprintf(scratch, sizeof(scratch), "/tmp/%s_XXXXXX", prefix);
  ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void scratch_teardown(void) {
  DIR *d = opendir(scratch);
  if (d) {
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
        snprintf(p, sizeof(p), "%s/%s", scratch, e->d_name);
        remove(p);
      }
    }
    closedir(d);
  }
  rmdir(scratch);
}

#endif
