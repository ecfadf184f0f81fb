/* fuzz_restart.c: libFuzzer harness for the restart reader (make fuzz-restart).
 *
 * Every input is a result file: it is written to a temporary file and read in this process
 * with mbs_output_read_last_sized (the reader's own checks, without the child process that
 * shields the program from HDF5), once without and once with the sizes of the model of
 * decks/double_pendulum.yaml (6 coordinates, 2 constraints, 2 joints), which the seeds
 * are runs of. Besides crashes, hangs and leaks the harness aborts when the reader breaks
 * its promises: a successful read with a non-finite q or v, without names, with the wrong
 * sizes, or an error without a message, or HDF5 objects left open. Crashes inside HDF5
 * itself (which is not instrumented) are what the child process of
 * mbs_output_read_last_isolated exists for; such inputs go to tests/fuzz/restart-regressions/,
 * which tests/integration/test_corrupt_files.py replays through mbsim-run --restart. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mbsim/output.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char g_path[256];

/* what a successful read promises */
static const char *broken(const mbsLastRecord *r, const mbsModelSizes *sizes) {
  if (r->nrecord < 1 || !r->status || !r->q || !r->v || !r->coordinate_names) {
    return "a successful read without its arrays";
  }
  if (!(r->dt > 0.0) || !isfinite(r->dt) || !isfinite(r->time) || !isfinite(r->t_end)) {
    return "a successful read with a bad time or dt";
  }
  if (sizes && (r->n_coordinates != sizes->n_coordinates ||
                r->n_constraints != sizes->n_constraints || r->njoint != sizes->njoint)) {
    return "a successful read of other sizes than asked for";
  }
  for (int i = 0; i < r->n_coordinates; i++) {
    if (!isfinite(r->q[i]) || !isfinite(r->v[i]) || !r->coordinate_names[i] ||
        strlen(r->coordinate_names[i]) > 255) {
      return "a successful read with a non-finite state or a bad name";
    }
  }
  for (int i = 0; r->multipliers && i < r->n_constraints; i++) {
    if (!isfinite(r->multipliers[i])) {
      return "a successful read with a non-finite multiplier";
    }
  }
  return NULL;
}

static void one(const mbsModelSizes *sizes) {
  mbsLastRecord r;
  mbsError err;
  mbs_error_clear(&err);
  mbsStatus st = mbs_output_read_last_sized(g_path, sizes, &r, &err);
  const char *bad = NULL;
  if (st == MBS_OK) {
    bad = broken(&r, sizes);
    mbs_output_last_free(&r);
  } else if (err.msg[0] == '\0' || r.q || r.status || r.coordinate_names) {
    bad = "a failed read without a message or with something left to free";
  }
  if (!bad && H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0) {
    bad = "HDF5 objects left open";
  }
  if (bad) {
    fprintf(stderr, "fuzz_restart: %s (status %d: %s)\n", bad, (int)st, err.msg);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (!g_path[0]) {
    const char *dir = getenv("TMPDIR");
    snprintf(g_path, sizeof(g_path), "%s/fuzz_restart-%ld.h5", dir && dir[0] ? dir : "/tmp",
             (long)getpid());
  }
  FILE *f = fopen(g_path, "wb");
  if (!f) {
    return 0;
  }
  size_t put = fwrite(data, 1, size, f);
  fclose(f);
  if (put != size) {
    return 0;
  }
  mbsModelSizes sizes = {6, 2, 2};
  one(NULL);
  one(&sizes);
  unlink(g_path);
  return 0;
}
