/* test_output.c: the HDF5 result writer (docs/output.md): shapes, values, attributes, chunking
 * and filters read back with the HDF5 C API; status and records visible after a flush
 * while the writer is still open; the XDMF sidecar; clean failures; no leaked HDF5 ids. */
#include <check.h>
#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mbsim/output.h"
#include "scratch_dir.h"
#include "std_layout.h"

#define NQ 4
#define NB 2
#define NJ 1
#define NC 3

/* ---------- fixture: a scratch directory and a record with known values ---------- */

static void setup(void) {
  scratch_make("mbs_test_output");
}

static void path_in(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/%s", scratch, name);
}

/* an output writer at path (the test's title and t_end, dt 0.01, em), asserted open */
static mbsWriter *open_test_writer(const char *path, const char *title, double t_end, int xdmf,
                                   int overwrite) {
  mbsOutputInfo info = {.version = "0.1.0",
                        .title = title,
                        .deck_text = "",
                        .integrator = "em",
                        .integrator_reason = "test",
                        .dt = 0.01,
                        .t_end = t_end,
                        .overwrite = overwrite,
                        .write_xdmf = xdmf};
  mbsError err;
  mbsWriter *w = mbs_output_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  return w;
}

static const char *const coord_names[NQ] = {"link1.x", "link1.d2.z", "mass.y", "\xc3\xbc.x"};
static const char *const body_names[NB] = {"link1", "mass"};
static const char *const joint_names[NJ] = {"hinge"};

static testInfo make_info(int nq, int nb, int nj, int xdmf) {
  testInfo info = {
      .version = "0.1.0",
      .title = "test run",
      .deck_text = "title: test run\nbodies: []\n",
      .integrator = "em",
      .integrator_reason = "conservative system",
      .dt = 1e-3,
      .t_end = 2.5,
      .n_coordinates = nq,
      .n_constraints = NC,
      .n_dof = 5,
      .coordinate_names = nq > 0 ? coord_names : NULL,
      .nbody = nb,
      .body_names = nb > 0 ? body_names : NULL,
      .write_xdmf = xdmf,
      .njoint = nj,
      .joint_names = nj > 0 ? joint_names : NULL,
  };
  return info;
}

/* the known values of record k */
static double val_q(long k, int i) {
  return (double)k + 0.001 * i;
}
static double val_v(long k, int i) {
  return -(double)k + 0.002 * i;
}
static double val_pos(long k, int b, int i) {
  return 1000.0 * b + (double)k + 0.1 * i;
}
static double val_rot(long k, int b, int r, int c) {
  return 100.0 * b + 10 * r + c + 1e-3 * k;
}
static double val_vel(long k, int b, int i) {
  return 2.0 * k + b + 0.1 * i;
}
static double val_angvel(long k, int b, int i) {
  return 3.0 * k - b - 0.1 * i;
}
static double val_reaction(long k, int j, int i) {
  return (double)k + 10 * j + i;
}
static double val_mu(long k, int r) {
  return -3.0 * k + 0.25 * r;
}
static double val_jpos(long k, int j, int i) {
  return 0.5 * k - j + 0.01 * i;
}

typedef struct {
  double q[NQ], v[NQ];
  double pos[NB * 3], rot[NB * 9], vel[NB * 3], angvel[NB * 3];
  double reaction[NJ * 6];
  double mu[NC], jpos[NJ * 3];
  testRecord rec;
} recordBuf;

static const testRecord *make_record(recordBuf *rb, long k) {
  for (int i = 0; i < NQ; i++) {
    rb->q[i] = val_q(k, i);
    rb->v[i] = val_v(k, i);
  }
  for (int b = 0; b < NB; b++) {
    for (int i = 0; i < 3; i++) {
      rb->pos[b * 3 + i] = val_pos(k, b, i);
      rb->vel[b * 3 + i] = val_vel(k, b, i);
      rb->angvel[b * 3 + i] = val_angvel(k, b, i);
      for (int c = 0; c < 3; c++) {
        rb->rot[b * 9 + i * 3 + c] = val_rot(k, b, i, c);
      }
    }
  }
  for (int j = 0; j < NJ; j++) {
    for (int i = 0; i < 6; i++) {
      rb->reaction[j * 6 + i] = val_reaction(k, j, i);
    }
    for (int i = 0; i < 3; i++) {
      rb->jpos[j * 3 + i] = val_jpos(k, j, i);
    }
  }
  for (int r = 0; r < NC; r++) {
    rb->mu[r] = val_mu(k, r);
  }
  testRecord r = {
      .time = 0.01 * k,
      .kinetic = 1.0 + k,
      .potential = -0.5 * k,
      .external_work = 0.25 * k,
      .dissipated = 0.125 * k,
      .linear_momentum = {k, k + 0.1, k + 0.2},
      .angular_momentum = {-k, -k - 0.1, -k - 0.2},
      .violation = 1e-12 * k,
      .iterations = (int)(k % 7),
      .step_size = 1e-3 * (double)(k % 3 + 1),
      .q = rb->q,
      .v = rb->v,
      .body_position = rb->pos,
      .body_orientation = rb->rot,
      .body_velocity = rb->vel,
      .body_angular_velocity = rb->angvel,
      .joint_reaction = rb->reaction,
      .joint_position = rb->jpos,
      .multipliers = rb->mu,
  };
  rb->rec = r;
  return &rb->rec;
}

/* a result of one record at path, all of it succeeding (what names the case) */
static void write_one_record(const char *path, const testInfo *info, recordBuf *rb,
                             const char *what) {
  mbsError err;
  mbsWriter *w = tl_create(path, info, &err);
  ck_assert_msg(w != NULL, "%s: %s", what, err.msg);
  ck_assert_int_eq(tl_append(w, make_record(rb, 0), &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
}

static long open_ids(void) {
  return (long)H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
}

/* ---------- reading back ---------- */

/* rank and dims of a dataset */
static int dset_dims(hid_t file, const char *path, hsize_t *dims) {
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  ck_assert_msg(d >= 0, "dataset %s missing", path);
  hid_t s = H5Dget_space(d);
  int rank = H5Sget_simple_extent_dims(s, dims, NULL);
  H5Sclose(s);
  H5Dclose(d);
  return rank;
}

/* the whole float64 dataset (caller frees) */
static double *read_doubles(hid_t file, const char *path, size_t expect_elems) {
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  ck_assert_msg(d >= 0, "dataset %s missing", path);
  hid_t s = H5Dget_space(d);
  size_t n = (size_t)H5Sget_simple_extent_npoints(s);
  ck_assert_msg(n == expect_elems, "%s: %zu elements, expected %zu", path, n, expect_elems);
  double *buf = malloc((n > 0 ? n : 1) * sizeof(double));
  ck_assert_ptr_nonnull(buf);
  if (n > 0) {
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
  }
  H5Sclose(s);
  H5Dclose(d);
  return buf;
}

/* a scalar string attribute, checked to be variable-length UTF-8 (caller frees) */
static char *read_string_attr(hid_t loc, const char *name) {
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  ck_assert_msg(a >= 0, "attribute %s missing", name);
  hid_t ft = H5Aget_type(a);
  ck_assert_int_eq(H5Tget_class(ft), H5T_STRING);
  ck_assert_int_gt(H5Tis_variable_str(ft), 0);
  ck_assert_int_eq(H5Tget_cset(ft), H5T_CSET_UTF8);
  hid_t mt = H5Tcopy(H5T_C_S1);
  H5Tset_size(mt, H5T_VARIABLE);
  H5Tset_cset(mt, H5T_CSET_UTF8);
  char *value = NULL;
  ck_assert_int_ge(H5Aread(a, mt, &value), 0);
  char *copy = strdup(value);
  H5free_memory(value);
  H5Tclose(mt);
  H5Tclose(ft);
  H5Aclose(a);
  return copy;
}

static void check_string_attr(hid_t loc, const char *name, const char *expect) {
  char *v = read_string_attr(loc, name);
  ck_assert_str_eq(v, expect);
  free(v);
}

static double read_double_attr(hid_t loc, const char *name) {
  double v = NAN;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  ck_assert_msg(a >= 0, "attribute %s missing", name);
  ck_assert_int_ge(H5Aread(a, H5T_NATIVE_DOUBLE, &v), 0);
  H5Aclose(a);
  return v;
}

static int read_int_attr(hid_t loc, const char *name) {
  int v = -1;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  ck_assert_msg(a >= 0, "attribute %s missing", name);
  ck_assert_int_ge(H5Aread(a, H5T_NATIVE_INT, &v), 0);
  H5Aclose(a);
  return v;
}

/* n strings of a vector attribute or dataset, compared with expect */
static void check_strings(hid_t obj, int is_attr, const char *const *expect, int n) {
  hid_t space = is_attr ? H5Aget_space(obj) : H5Dget_space(obj);
  ck_assert_int_eq(H5Sget_simple_extent_npoints(space), n);
  hid_t mt = H5Tcopy(H5T_C_S1);
  H5Tset_size(mt, H5T_VARIABLE);
  H5Tset_cset(mt, H5T_CSET_UTF8);
  char *values[8] = {0};
  ck_assert_int_le(n, 8);
  if (n > 0) {
    herr_t rc = is_attr ? H5Aread(obj, mt, values)
                        : H5Dread(obj, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    ck_assert_int_ge(rc, 0);
  }
  for (int i = 0; i < n; i++) {
    ck_assert_str_eq(values[i], expect[i]);
    H5free_memory(values[i]);
  }
  H5Tclose(mt);
  H5Sclose(space);
}

static void check_names_attr(hid_t file, const char *dset, const char *const *expect, int n) {
  hid_t d = H5Dopen2(file, dset, H5P_DEFAULT);
  ck_assert_int_ge(d, 0);
  hid_t a = H5Aopen(d, "names", H5P_DEFAULT);
  ck_assert_msg(a >= 0, "%s has no attribute names", dset);
  check_strings(a, 1, expect, n);
  H5Aclose(a);
  H5Dclose(d);
}

static void check_names_dset(hid_t file, const char *dset, const char *const *expect, int n) {
  hid_t d = H5Dopen2(file, dset, H5P_DEFAULT);
  ck_assert_msg(d >= 0, "dataset %s missing", dset);
  check_strings(d, 0, expect, n);
  H5Dclose(d);
}

/* every series holds records 0 .. n-1 with the known values */
static void check_records(hid_t file, long n, int nq, int nb, int nj) {
  double *t = read_doubles(file, "/time", (size_t)n);
  double *ek = read_doubles(file, "/energy/kinetic", (size_t)n);
  double *ep = read_doubles(file, "/energy/potential", (size_t)n);
  double *et = read_doubles(file, "/energy/total", (size_t)n);
  double *ew = read_doubles(file, "/energy/external_work", (size_t)n);
  double *ed = read_doubles(file, "/energy/dissipated", (size_t)n);
  double *lin = read_doubles(file, "/momentum/linear", (size_t)n * 3);
  double *ang = read_doubles(file, "/momentum/angular", (size_t)n * 3);
  double *viol = read_doubles(file, "/constraints/violation", (size_t)n);
  double *q = read_doubles(file, "/state/q", (size_t)(n * nq));
  double *v = read_doubles(file, "/state/v", (size_t)(n * nq));
  double *pos = read_doubles(file, "/bodies/position", (size_t)(n * nb * 3));
  double *rot = read_doubles(file, "/bodies/orientation", (size_t)(n * nb * 9));
  double *vel = read_doubles(file, "/bodies/velocity", (size_t)(n * nb * 3));
  double *angvel = read_doubles(file, "/bodies/angular_velocity", (size_t)(n * nb * 3));
  double *reac = read_doubles(file, "/joints/reaction", (size_t)(n * nj * 6));

  /* iterations are int32 in the file */
  hid_t d = H5Dopen2(file, "/solver/iterations", H5P_DEFAULT);
  hid_t ft = H5Dget_type(d);
  ck_assert_int_eq(H5Tget_class(ft), H5T_INTEGER);
  ck_assert_int_eq((int)H5Tget_size(ft), 4);
  H5Tclose(ft);
  int *it = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
  ck_assert_ptr_nonnull(it);
  if (n > 0) {
    ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, it), 0);
  }
  H5Dclose(d);

  for (long k = 0; k < n; k++) {
    ck_assert_double_eq(t[k], 0.01 * k);
    ck_assert_double_eq(ek[k], 1.0 + k);
    ck_assert_double_eq(ep[k], -0.5 * k);
    ck_assert_double_eq(et[k], (1.0 + k) + (-0.5 * k));
    ck_assert_double_eq(ew[k], 0.25 * k);
    ck_assert_double_eq(ed[k], 0.125 * k);
    ck_assert_double_eq(viol[k], 1e-12 * k);
    ck_assert_int_eq(it[k], (int)(k % 7));
    for (int i = 0; i < 3; i++) {
      ck_assert_double_eq(lin[k * 3 + i], (double)k + 0.1 * i);
      ck_assert_double_eq(ang[k * 3 + i], -(double)k - 0.1 * i);
    }
    for (int i = 0; i < nq; i++) {
      ck_assert_double_eq(q[k * nq + i], val_q(k, i));
      ck_assert_double_eq(v[k * nq + i], val_v(k, i));
    }
    for (int b = 0; b < nb; b++) {
      for (int i = 0; i < 3; i++) {
        long at = (k * nb + b) * 3 + i;
        ck_assert_double_eq(pos[at], val_pos(k, b, i));
        ck_assert_double_eq(vel[at], val_vel(k, b, i));
        ck_assert_double_eq(angvel[at], val_angvel(k, b, i));
        for (int c = 0; c < 3; c++) {
          ck_assert_double_eq(rot[((k * nb + b) * 3 + i) * 3 + c], val_rot(k, b, i, c));
        }
      }
    }
    for (int j = 0; j < nj; j++) {
      for (int i = 0; i < 6; i++) {
        ck_assert_double_eq(reac[(k * nj + j) * 6 + i], val_reaction(k, j, i));
      }
    }
  }
  free(it);
  free(reac);
  free(angvel);
  free(vel);
  free(rot);
  free(pos);
  free(v);
  free(q);
  free(viol);
  free(ang);
  free(lin);
  free(ed);
  free(ew);
  free(et);
  free(ep);
  free(ek);
  free(t);
}

/* byte copy of a file: what a process killed at this moment would leave on disk */
static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb");
  ck_assert_ptr_nonnull(in);
  FILE *out = fopen(to, "wb");
  ck_assert_ptr_nonnull(out);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
    ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
  }
  fclose(in);
  ck_assert_int_eq(fclose(out), 0);
}

/* the whole text of a file (caller frees), NULL if missing */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(s);
  ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
  s[n] = '\0';
  fclose(f);
  return s;
}

static long count_substr(const char *s, const char *sub) {
  long n = 0;
  for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) {
    n++;
  }
  return n;
}

static long xmf_grids(const char *xmf_path) {
  char *s = slurp(xmf_path);
  ck_assert_msg(s != NULL, "no XDMF file %s", xmf_path);
  long n = count_substr(s, "<Grid Name=\"record ");
  free(s);
  return n;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* ---------- tests ---------- */

/* 1000 records with known values, read back with the C API */
START_TEST(test_roundtrip) {
  char path[256];
  path_in(path, sizeof(path), "run.h5");
  testInfo info = make_info(NQ, NB, NJ, 1);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  recordBuf rb;
  for (long k = 0; k < 1000; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
    /* an explicit flush off the chunk grid: later blocks must continue seamlessly */
    if (k == 332) {
      ck_assert_int_eq(mbs_output_flush(w, &err), MBS_OK);
    }
  }
  ck_assert_int_eq(mbs_output_count(w), 1000);
  ck_assert_int_eq(mbs_output_set_status(w, "completed", &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(open_ids(), 0);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);

  /* root attributes */
  check_string_attr(f, "format", "mbsim-run/1");
  check_string_attr(f, "status", "completed");
  check_string_attr(f, "version", "0.1.0");
  check_string_attr(f, "title", "test run");
  check_string_attr(f, "deck", "title: test run\nbodies: []\n");
  check_string_attr(f, "integrator", "em");
  check_string_attr(f, "integrator_reason", "conservative system");
  ck_assert_double_eq(read_double_attr(f, "dt"), 1e-3);
  ck_assert_double_eq(read_double_attr(f, "t_end"), 2.5);
  ck_assert_int_eq(read_int_attr(f, "n_coordinates"), NQ);
  ck_assert_int_eq(read_int_attr(f, "n_constraints"), 3);
  ck_assert_int_eq(read_int_attr(f, "n_dof"), 5);

  /* shapes */
  hsize_t dims[4];
  ck_assert_int_eq(dset_dims(f, "/time", dims), 1);
  ck_assert_uint_eq(dims[0], 1000);
  ck_assert_int_eq(dset_dims(f, "/momentum/angular", dims), 2);
  ck_assert_uint_eq(dims[1], 3);
  ck_assert_int_eq(dset_dims(f, "/state/q", dims), 2);
  ck_assert_uint_eq(dims[0], 1000);
  ck_assert_uint_eq(dims[1], NQ);
  ck_assert_int_eq(dset_dims(f, "/bodies/position", dims), 3);
  ck_assert_uint_eq(dims[1], NB);
  ck_assert_uint_eq(dims[2], 3);
  ck_assert_int_eq(dset_dims(f, "/bodies/orientation", dims), 4);
  ck_assert_uint_eq(dims[0], 1000);
  ck_assert_uint_eq(dims[1], NB);
  ck_assert_uint_eq(dims[2], 3);
  ck_assert_uint_eq(dims[3], 3);
  ck_assert_int_eq(dset_dims(f, "/joints/reaction", dims), 3);
  ck_assert_uint_eq(dims[1], NJ);
  ck_assert_uint_eq(dims[2], 6);

  ck_assert_int_eq(dset_dims(f, "/state/multipliers", dims), 2);
  ck_assert_uint_eq(dims[0], 1000);
  ck_assert_uint_eq(dims[1], NC);
  ck_assert_int_eq(dset_dims(f, "/joints/position", dims), 3);
  ck_assert_uint_eq(dims[0], 1000);
  ck_assert_uint_eq(dims[1], NJ);
  ck_assert_uint_eq(dims[2], 3);

  /* values, labels */
  check_records(f, 1000, NQ, NB, NJ);
  double *mu = read_doubles(f, "/state/multipliers", 1000 * NC);
  double *jpos = read_doubles(f, "/joints/position", 1000 * NJ * 3);
  for (long k = 0; k < 1000; k++) {
    for (int r = 0; r < NC; r++) {
      ck_assert_double_eq(mu[k * NC + r], val_mu(k, r));
    }
    for (int j = 0; j < NJ; j++) {
      for (int i = 0; i < 3; i++) {
        ck_assert_double_eq(jpos[(k * NJ + j) * 3 + i], val_jpos(k, j, i));
      }
    }
  }
  free(mu);
  free(jpos);
  check_names_attr(f, "/state/q", coord_names, NQ);
  check_names_attr(f, "/state/v", coord_names, NQ);
  check_names_dset(f, "/bodies/names", body_names, NB);
  check_names_dset(f, "/joints/names", joint_names, NJ);

  /* /state/q: unlimited along time, chunked, shuffle + deflate */
  hid_t d = H5Dopen2(f, "/state/q", H5P_DEFAULT);
  hid_t s = H5Dget_space(d);
  hsize_t maxdims[2];
  H5Sget_simple_extent_dims(s, dims, maxdims);
  ck_assert(maxdims[0] == H5S_UNLIMITED);
  ck_assert_uint_eq(maxdims[1], NQ);
  hid_t dcpl = H5Dget_create_plist(d);
  ck_assert_int_eq(H5Pget_layout(dcpl), H5D_CHUNKED);
  hsize_t chunk[2];
  ck_assert_int_eq(H5Pget_chunk(dcpl, 2, chunk), 2);
  ck_assert_uint_eq(chunk[0], 16384 / (NQ * 8));
  ck_assert_uint_eq(chunk[1], NQ);
  unsigned flags;
  size_t nelmts = 1;
  unsigned level = 0;
  ck_assert_int_ge(
      H5Pget_filter_by_id2(dcpl, H5Z_FILTER_SHUFFLE, &flags, NULL, NULL, 0, NULL, NULL), 0);
  ck_assert_int_ge(
      H5Pget_filter_by_id2(dcpl, H5Z_FILTER_DEFLATE, &flags, &nelmts, &level, 0, NULL, NULL), 0);
  ck_assert_uint_eq(level, 1);
  H5Pclose(dcpl);
  H5Sclose(s);
  H5Dclose(d);

  /* a whole chunk (compressed by the writer itself, not by HDF5's pipeline) went through
   * both filters, is smaller than its data, and inflated to the values checked above */
  d = H5Dopen2(f, "/bodies/orientation", H5P_DEFAULT);
  hsize_t origin[4] = {0, 0, 0, 0};
  unsigned mask = 99;
  haddr_t addr;
  hsize_t stored = 0;
  ck_assert_int_ge(H5Dget_chunk_info_by_coord(d, origin, &mask, &addr, &stored), 0);
  ck_assert_uint_eq(mask, 0);
  ck_assert_uint_gt(stored, 0);
  ck_assert_uint_lt(stored, (16384 / (NB * 9 * 8)) * NB * 9 * 8);
  H5Dclose(d);

  ck_assert_int_ge(H5Fclose(f), 0);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* after a flush the file on disk opens with every record so far and status "running",
 * while the writer still has it open (read from a byte copy: HDF5 locks the original) */
START_TEST(test_running_after_flush) {
  char path[256], copy[256], xmf[256];
  path_in(path, sizeof(path), "live.h5");
  path_in(copy, sizeof(copy), "copy.h5");
  path_in(xmf, sizeof(xmf), "live.xmf");
  testInfo info = make_info(NQ, NB, NJ, 1);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  mbs_output_set_flush_interval(w, INFINITY);

  /* right after create: no records, status running, under the temporary name (the file
   * takes its own name, and the sidecar appears, with the first record) */
  char tmp[512] = "";
  DIR *dir = opendir(scratch);
  ck_assert_ptr_nonnull(dir);
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    if (strncmp(e->d_name, ".live.h5.tmp-", strlen(".live.h5.tmp-")) == 0) {
      snprintf(tmp, sizeof(tmp), "%s/%s", scratch, e->d_name);
    }
  }
  closedir(dir);
  ck_assert_msg(tmp[0], "no temporary file .live.h5.tmp-* in %s", scratch);
  ck_assert_int_ne(access(path, F_OK), 0);
  ck_assert_int_ne(access(xmf, F_OK), 0);
  copy_file(tmp, copy);
  hid_t f = H5Fopen(copy, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_string_attr(f, "status", "running");
  check_records(f, 0, NQ, NB, NJ);
  H5Fclose(f);

  /* 10 records, flush */
  recordBuf rb;
  for (long k = 0; k < 10; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(mbs_output_flush(w, &err), MBS_OK);
  copy_file(path, copy);
  f = H5Fopen(copy, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_string_attr(f, "status", "running");
  check_string_attr(f, "format", "mbsim-run/1");
  check_records(f, 10, NQ, NB, NJ);
  H5Fclose(f);
  ck_assert_int_eq(xmf_grids(xmf), 10);

  /* 7 more, then a status change (which flushes) */
  for (long k = 10; k < 17; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(mbs_output_set_status(w, "interrupted at t=0.16", &err), MBS_OK);
  copy_file(path, copy);
  f = H5Fopen(copy, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_string_attr(f, "status", "interrupted at t=0.16");
  check_records(f, 17, NQ, NB, NJ);
  H5Fclose(f);
  ck_assert_int_eq(xmf_grids(xmf), 17);

  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* flush interval 0: every append reaches the disk; many flushes keep values and size sane */
START_TEST(test_flush_every_append) {
  char path[256], copy[256];
  path_in(path, sizeof(path), "each.h5");
  path_in(copy, sizeof(copy), "copy.h5");
  testInfo info = make_info(NQ, NB, NJ, 0);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  mbs_output_set_flush_interval(w, 0.0);
  recordBuf rb;
  for (long k = 0; k < 3; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  copy_file(path, copy);
  hid_t f = H5Fopen(copy, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_records(f, 3, NQ, NB, NJ);
  H5Fclose(f);

  /* then explicit flushes off the chunk grid (a flush compresses every partial chunk,
   * about 5 ms here, so 2000 of them would only slow the test down) */
  mbs_output_set_flush_interval(w, INFINITY);
  for (long k = 3; k < 2000; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
    if (k % 97 == 0) {
      ck_assert_int_eq(mbs_output_flush(w, &err), MBS_OK);
    }
  }
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_records(f, 2000, NQ, NB, NJ);
  H5Fclose(f);

  /* 2000 records hold about 1 MB of doubles; rewritten partial chunks must not pile up */
  ck_assert_int_lt(file_size(path), 2L << 20);
  ck_assert_int_eq(open_ids(), 0);
  char xmf[256];
  path_in(xmf, sizeof(xmf), "each.xmf");
  ck_assert_int_ne(access(xmf, F_OK), 0);
}
END_TEST

/* rewriting the same status does not grow the file */
START_TEST(test_status_rewrite) {
  char path[256];
  path_in(path, sizeof(path), "status.h5");
  testInfo info = make_info(NQ, NB, NJ, 0);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  recordBuf rb;
  ck_assert_int_eq(tl_append(w, make_record(&rb, 0), &err), MBS_OK);
  ck_assert_int_eq(mbs_output_set_status(w, "interrupted at t=1.5", &err), MBS_OK);
  ck_assert_int_eq(mbs_output_flush(w, &err), MBS_OK); /* the end-of-file gap reaches disk */
  long size = file_size(path);
  for (int i = 0; i < 1000; i++) {
    ck_assert_int_eq(mbs_output_set_status(w, "interrupted at t=1.5", &err), MBS_OK);
  }
  ck_assert_int_eq(file_size(path), size);
  ck_assert_int_eq(mbs_output_set_status(w, "failed: Newton did not converge at t=1.5", &err),
                   MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_string_attr(f, "status", "failed: Newton did not converge at t=1.5");
  H5Fclose(f);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* a file in a directory without write permission: NULL, a message that says so, nothing
 * created; 0 when all of that holds, else the number of the first thing that did not */
static int permission_case(const char *dir, const testInfo *info) {
  char path[256];
  mbsError err;
  snprintf(path, sizeof(path), "%s/out.h5", dir);
  if (tl_create(path, info, &err) != NULL) {
    return 1;
  }
  if (err.status != MBS_ERR_OUTPUT) {
    return 2;
  }
  if (strstr(err.msg, "permission") == NULL || strstr(err.msg, path) == NULL) {
    return 3;
  }
  return access(path, F_OK) == 0 ? 4 : 0;
}

/* a file that cannot be created: NULL, a message naming the path and why, nothing left */
START_TEST(test_create_fails) {
  char path[256];
  testInfo info = make_info(NQ, NB, NJ, 1);
  mbsError err;

  path_in(path, sizeof(path), "missing/out.h5");
  ck_assert_ptr_null(tl_create(path, &info, &err));
  ck_assert_int_eq(err.status, MBS_ERR_OUTPUT);
  ck_assert_ptr_nonnull(strstr(err.msg, "cannot create output file '"));
  ck_assert_ptr_nonnull(strstr(err.msg, path));
  ck_assert_msg(strstr(err.msg, "does not exist") != NULL, "message: %s", err.msg);

  /* the parent is a regular file */
  char plain[256];
  path_in(plain, sizeof(plain), "plain.txt");
  FILE *fp = fopen(plain, "w");
  ck_assert_ptr_nonnull(fp);
  fclose(fp);
  path_in(path, sizeof(path), "plain.txt/out.h5");
  ck_assert_ptr_null(tl_create(path, &info, &err));
  ck_assert_int_eq(err.status, MBS_ERR_OUTPUT);
  ck_assert_msg(strstr(err.msg, "is not a directory") != NULL, "message: %s", err.msg);

  /* the path is a directory */
  ck_assert_ptr_null(tl_create(scratch, &info, &err));
  ck_assert_int_eq(err.status, MBS_ERR_OUTPUT);
  ck_assert_msg(strstr(err.msg, "is a directory") != NULL, "message: %s", err.msg);

  /* no permission; root may write anywhere, so as root the case runs in a child that has
   * dropped to the unprivileged uid and gid 65534 (nobody) */
  char ro[256];
  path_in(ro, sizeof(ro), "ro");
  ck_assert_int_eq(mkdir(ro, 0555), 0);
  if (geteuid() != 0) {
    ck_assert_int_eq(permission_case(ro, &info), 0);
  } else {
    ck_assert_int_eq(chmod(scratch, 0755), 0); /* nobody must reach ro */
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      _exit(setgid(65534) == 0 && setuid(65534) == 0 && geteuid() == 65534
                ? permission_case(ro, &info)
                : 10);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "permission case as uid 65534 failed (%d; 10: cannot drop root)",
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  rmdir(ro);

  /* bad arguments */
  ck_assert_ptr_null(tl_create(NULL, &info, &err));
  ck_assert_int_eq(err.status, MBS_ERR_ARGS);
  testInfo bad = make_info(NQ, NB, NJ, 0);
  bad.coordinate_names = NULL;
  path_in(path, sizeof(path), "bad.h5");
  ck_assert_ptr_null(tl_create(path, &bad, &err));
  ck_assert_int_eq(err.status, MBS_ERR_ARGS);
  ck_assert_int_ne(access(path, F_OK), 0);

  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* a record without the arrays the sizes call for is refused and not counted */
START_TEST(test_bad_record) {
  char path[256];
  path_in(path, sizeof(path), "bad.h5");
  testInfo info = make_info(NQ, NB, NJ, 0);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  recordBuf rb;
  ck_assert_int_eq(tl_append(w, make_record(&rb, 0), &err), MBS_OK);
  testRecord r = *make_record(&rb, 1);
  r.body_orientation = NULL;
  ck_assert_int_eq(tl_append(w, &r, &err), MBS_ERR_ARGS);
  ck_assert_ptr_nonnull(strstr(err.msg, "/bodies/orientation"));
  ck_assert_int_eq(mbs_output_count(w), 1);
  ck_assert_int_eq(tl_append(w, make_record(&rb, 1), &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_records(f, 2, NQ, NB, NJ);
  H5Fclose(f);

  /* NULL is accepted where the API says so */
  ck_assert_int_eq(tl_close(NULL, &err), MBS_OK);
  ck_assert_int_eq(mbs_output_count(NULL), 0);
  mbs_output_set_flush_interval(NULL, 1.0);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* the sidecar: one Uniform grid per flushed record, hyperslabs into the file by basename */
START_TEST(test_xdmf) {
  char path[256], xmf[256];
  path_in(path, sizeof(path), "pendulum.h5");
  path_in(xmf, sizeof(xmf), "pendulum.xmf");
  testInfo info = make_info(NQ, NB, NJ, 1);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  mbs_output_set_flush_interval(w, INFINITY);
  recordBuf rb;
  for (long k = 0; k < 20; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(mbs_output_flush(w, &err), MBS_OK);
  ck_assert_int_eq(xmf_grids(xmf), 20);

  /* appended but not flushed: the sidecar still lists what the file holds */
  for (long k = 20; k < 37; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(xmf_grids(xmf), 20);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(xmf_grids(xmf), 37);
  DIR *dir = opendir(scratch);
  ck_assert_ptr_nonnull(dir);
  for (struct dirent *e; (e = readdir(dir)) != NULL;) {
    ck_assert_msg(strstr(e->d_name, ".tmp-") == NULL, "left behind: %s", e->d_name);
  }
  closedir(dir);

  char *s = slurp(xmf);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(strstr(s, "<Xdmf Version=\"2.0\">"));
  ck_assert_int_eq(count_substr(s, "GridType=\"Collection\" CollectionType=\"Temporal\""), 2);
  /* the joints: a second temporal collection, points from /joints/position with the
   * reaction force and torque (components 0-2 and 3-5 of /joints/reaction) */
  ck_assert_ptr_nonnull(strstr(s, "<Grid Name=\"joints\" GridType=\"Collection\""));
  ck_assert_int_eq(count_substr(s, "<Grid Name=\"joints "), 37);
  ck_assert_int_eq(count_substr(s, ">pendulum.h5:/joints/position<"), 37);
  ck_assert_int_eq(count_substr(s, ">pendulum.h5:/joints/reaction<"), 2 * 37);
  ck_assert_ptr_nonnull(strstr(s, ">36 0 3 1 1 1 1 1 3<"));
  /* the dataset dimensions say N records, one entity that each flush updates in place */
  ck_assert_ptr_nonnull(strstr(s, "<!ENTITY N \"37 "));
  ck_assert_ptr_nonnull(strstr(s, "Dimensions=\"&N; 1 6\""));
  ck_assert_ptr_nonnull(
      strstr(s, "<Attribute Name=\"torque\" AttributeType=\"Vector\" Center=\"Node\">"));
  ck_assert_int_eq(count_substr(s, "<Time Value="), 2 * 37);
  const char *last = strstr(s, "\"record 36\"");
  ck_assert_ptr_nonnull(last);
  last = strstr(last, "<Time Value=\"");
  ck_assert_ptr_nonnull(last);
  ck_assert_double_eq(strtod(last + strlen("<Time Value=\""), NULL), 0.01 * 36);
  ck_assert_ptr_nonnull(strstr(s, "TopologyType=\"Polyvertex\" NumberOfElements=\"2\""));
  ck_assert_int_eq(count_substr(s, ">pendulum.h5:/bodies/position<"), 37);
  ck_assert_int_eq(count_substr(s, ">pendulum.h5:/bodies/velocity<"), 37);
  ck_assert_int_eq(count_substr(s, ">pendulum.h5:/bodies/angular_velocity<"), 37);
  ck_assert_int_eq(count_substr(s, ">pendulum.h5:/bodies/orientation<"), 3 * 37);
  ck_assert_ptr_null(strstr(s, scratch));
  /* record 36: start, stride, count into [N,nb,3] and column 1 (d2) of [N,nb,3,3] */
  ck_assert_ptr_nonnull(strstr(s, ">36 0 0 1 1 1 1 2 3<"));
  ck_assert_ptr_nonnull(strstr(s, ">36 0 0 1 1 1 1 1 1 2 3 1<"));
  ck_assert_ptr_nonnull(strstr(s, "Dimensions=\"&N; 2 3\""));
  ck_assert_ptr_nonnull(strstr(s, "Dimensions=\"&N; 2 3 3\""));
  /* closed: no reserve left */
  ck_assert_ptr_null(strstr(s, "<!--    "));
  ck_assert_ptr_nonnull(
      strstr(s, "<Attribute Name=\"d3\" AttributeType=\"Vector\" Center=\"Node\">"));
  free(s);

  /* a name without .h5 gets .xmf appended; write_xdmf = 0 writes none */
  char other[256], other_xmf[256];
  path_in(other, sizeof(other), "run.hdf5");
  path_in(other_xmf, sizeof(other_xmf), "run.hdf5.xmf");
  write_one_record(other, &info, &rb, "create");
  ck_assert_int_eq(xmf_grids(other_xmf), 1);
  info.write_xdmf = 0;
  path_in(other, sizeof(other), "plain.h5");
  path_in(other_xmf, sizeof(other_xmf), "plain.xmf");
  write_one_record(other, &info, &rb, "create");
  ck_assert_int_ne(access(other_xmf, F_OK), 0);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* no coordinates, bodies or joints: datasets with a zero second dimension */
START_TEST(test_zero_sizes) {
  char path[256], xmf[256];
  path_in(path, sizeof(path), "empty.h5");
  path_in(xmf, sizeof(xmf), "empty.xmf");
  testInfo info = make_info(0, 0, 0, 1);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  testRecord r = {.time = 0.0};
  for (long k = 0; k < 5; k++) {
    r.time = 0.01 * k;
    r.kinetic = 1.0 + k;
    r.potential = -0.5 * k;
    r.external_work = 0.25 * k;
    r.dissipated = 0.125 * k;
    for (int i = 0; i < 3; i++) {
      r.linear_momentum[i] = (double)k + 0.1 * i;
      r.angular_momentum[i] = -(double)k - 0.1 * i;
    }
    r.violation = 1e-12 * k;
    r.iterations = (int)(k % 7);
    ck_assert_int_eq(tl_append(w, &r, &err), MBS_OK);
  }
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  hsize_t dims[4];
  ck_assert_int_eq(dset_dims(f, "/state/q", dims), 2);
  ck_assert_uint_eq(dims[0], 5);
  ck_assert_uint_eq(dims[1], 0);
  ck_assert_int_eq(dset_dims(f, "/bodies/orientation", dims), 4);
  ck_assert_uint_eq(dims[0], 5);
  ck_assert_uint_eq(dims[1], 0);
  ck_assert_int_eq(dset_dims(f, "/bodies/names", dims), 1);
  ck_assert_uint_eq(dims[0], 0);
  check_records(f, 5, 0, 0, 0);
  check_names_attr(f, "/state/q", NULL, 0);
  check_names_dset(f, "/bodies/names", NULL, 0);
  ck_assert_int_eq(read_int_attr(f, "n_coordinates"), 0);
  /* multipliers not given: NaN rows */
  double *mu = read_doubles(f, "/state/multipliers", 5 * NC);
  for (int i = 0; i < 5 * NC; i++) {
    ck_assert(isnan(mu[i]));
  }
  free(mu);
  H5Fclose(f);
  char *xs = slurp(xmf);
  ck_assert_ptr_nonnull(xs);
  ck_assert_ptr_null(strstr(xs, "joints"));
  free(xs);
  ck_assert_int_eq(xmf_grids(xmf), 5);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* the last record read back for a restart */
START_TEST(test_read_last) {
  char path[256];
  path_in(path, sizeof(path), "last.h5");
  testInfo info = make_info(NQ, NB, NJ, 0);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  recordBuf rb;
  for (long k = 0; k < 700; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(mbs_output_set_status(w, "interrupted at t=6.99", &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);

  mbsLastRecord last;
  ck_assert_msg(mbs_output_read_last(path, &last, &err) == MBS_OK, "read: %s", err.msg);
  ck_assert_int_eq(last.nrecord, 700);
  ck_assert_str_eq(last.status, "interrupted at t=6.99");
  ck_assert_double_eq(last.dt, 1e-3);
  ck_assert_int_eq(last.n_coordinates, NQ);
  ck_assert_int_eq(last.n_constraints, NC);
  ck_assert_int_eq(last.njoint, NJ);
  ck_assert_double_eq(last.time, 0.01 * 699);
  ck_assert_double_eq(last.external_work, 0.25 * 699);
  ck_assert_double_eq(last.dissipated, 0.125 * 699);
  ck_assert_int_eq(last.iterations, 699 % 7);
  ck_assert_double_eq(last.step_size, 1e-3 * (699 % 3 + 1));
  for (int i = 0; i < NQ; i++) {
    ck_assert_str_eq(last.coordinate_names[i], coord_names[i]);
    ck_assert_double_eq(last.q[i], val_q(699, i));
    ck_assert_double_eq(last.v[i], val_v(699, i));
  }
  ck_assert_ptr_nonnull(last.multipliers);
  for (int r = 0; r < NC; r++) {
    ck_assert_double_eq(last.multipliers[r], val_mu(699, r));
  }
  for (int i = 0; i < 6; i++) {
    ck_assert_double_eq(last.joint_reaction[i], val_reaction(699, 0, i));
  }
  mbs_output_last_free(&last);
  mbs_output_last_free(&last);
  mbs_output_last_free(NULL);

  /* a file whose multipliers were not given reads back without them */
  w = tl_create(path, &info, &err);
  ck_assert_ptr_nonnull(w);
  testRecord r = *make_record(&rb, 3);
  r.multipliers = NULL;
  ck_assert_int_eq(tl_append(w, &r, &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(mbs_output_read_last(path, &last, &err), MBS_OK);
  ck_assert_ptr_null(last.multipliers);
  ck_assert_double_eq(last.q[1], val_q(3, 1));
  mbs_output_last_free(&last);

  /* a writer closed without records leaves the earlier result as it was */
  w = tl_create(path, &info, &err);
  ck_assert_ptr_nonnull(w);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(mbs_output_read_last(path, &last, &err), MBS_OK);
  ck_assert_double_eq(last.q[1], val_q(3, 1));
  mbs_output_last_free(&last);

  /* no file, not HDF5, not ours */
  char missing[256], text[256], foreign[256];
  path_in(missing, sizeof(missing), "missing.h5");
  ck_assert_int_eq(mbs_output_read_last(missing, &last, &err), MBS_ERR_IO);
  ck_assert_ptr_nonnull(strstr(err.msg, "missing.h5"));
  path_in(text, sizeof(text), "text.h5");
  FILE *fp = fopen(text, "w");
  ck_assert_ptr_nonnull(fp);
  fputs("not an HDF5 file\n", fp);
  fclose(fp);
  ck_assert_int_eq(mbs_output_read_last(text, &last, &err), MBS_ERR_IO);
  path_in(foreign, sizeof(foreign), "foreign.h5");
  hid_t f = H5Fcreate(foreign, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  H5Fclose(f);
  ck_assert_int_eq(mbs_output_read_last(foreign, &last, &err), MBS_ERR_OUTPUT);
  ck_assert_ptr_nonnull(strstr(err.msg, "not an mbsim-run result"));
  ck_assert_ptr_null(last.q);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* the records in a closed result file (-1 if it does not open as HDF5) */
static long records_in(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    return -1;
  }
  hid_t d = H5Dopen2(f, "/time", H5P_DEFAULT);
  ck_assert_int_ge(d, 0);
  hid_t sp = H5Dget_space(d);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(sp, &n, NULL);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return (long)n;
}

static void write_text(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  ck_assert_ptr_nonnull(fp);
  fputs(text, fp);
  ck_assert_int_eq(fclose(fp), 0);
}

/* what is at the output path: an earlier result is replaced only once the new file has a
 * record; anything else is refused (naming it) unless overwrite is set; a directory or a
 * device never; a symbolic link is followed */
START_TEST(test_output_path_safety) {
  char path[256], xmf[256], text[256], foreign[256], link[256];
  path_in(path, sizeof(path), "result.h5");
  path_in(xmf, sizeof(xmf), "result.xmf");
  testInfo info = make_info(NQ, NB, NJ, 1);
  mbsError err;
  recordBuf rb;

  /* an earlier result of 5 records */
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  for (long k = 0; k < 5; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(records_in(path), 5);
  ck_assert_int_eq(xmf_grids(xmf), 5);

  /* a new run at the same path: the earlier result and its sidecar stay until the first
   * record is on disk, then both are replaced */
  w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create over a result: %s", err.msg);
  mbs_output_set_flush_interval(w, INFINITY);
  ck_assert_int_eq(records_in(path), 5);
  ck_assert_int_eq(xmf_grids(xmf), 5);
  ck_assert_int_eq(tl_append(w, make_record(&rb, 0), &err), MBS_OK);
  ck_assert_int_eq(xmf_grids(xmf), 1);
  ck_assert_int_eq(tl_append(w, make_record(&rb, 1), &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(records_in(path), 2);
  char *s = slurp(xmf);
  ck_assert_ptr_nonnull(strstr(s, ">result.h5:/bodies/position<"));
  ck_assert_ptr_null(strstr(s, ".tmp-"));
  free(s);

  /* a text file is refused, named, and left as it was */
  path_in(text, sizeof(text), "notes.h5");
  write_text(text, "my notes\n");
  ck_assert_ptr_null(tl_create(text, &info, &err));
  ck_assert_int_eq(err.status, MBS_ERR_OUTPUT);
  ck_assert_msg(strstr(err.msg, text) && strstr(err.msg, "not an mbsim-run result") &&
                    strstr(err.msg, "not an HDF5 file") && strstr(err.msg, "--overwrite"),
                "message: %s", err.msg);
  char *kept = slurp(text);
  ck_assert_str_eq(kept, "my notes\n");
  free(kept);

  /* an HDF5 file of someone else: refused too */
  path_in(foreign, sizeof(foreign), "foreign.h5");
  hid_t f = H5Fcreate(foreign, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  H5Fclose(f);
  ck_assert_ptr_null(tl_create(foreign, &info, &err));
  ck_assert_msg(strstr(err.msg, "HDF5 file without the root attribute format"), "message: %s",
                err.msg);
  f = H5Fopen(foreign, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  ck_assert_int_eq(H5Aexists(f, "format"), 0);
  H5Fclose(f);

  /* with overwrite both are replaced, once the first record is written */
  info.overwrite = 1;
  w = tl_create(text, &info, &err);
  ck_assert_msg(w != NULL, "overwrite: %s", err.msg);
  kept = slurp(text);
  ck_assert_str_eq(kept, "my notes\n");
  free(kept);
  ck_assert_int_eq(tl_append(w, make_record(&rb, 0), &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(records_in(text), 1);

  /* a device is never replaced, even with overwrite */
  ck_assert_ptr_null(tl_create("/dev/null", &info, &err));
  ck_assert_msg(strstr(err.msg, "not a regular file"), "message: %s", err.msg);
  struct stat st;
  ck_assert_int_eq(stat("/dev/null", &st), 0);
  ck_assert(S_ISCHR(st.st_mode));
  info.overwrite = 0;

  /* a symbolic link: the file it points to is replaced, the link stays */
  path_in(link, sizeof(link), "link.h5");
  ck_assert_int_eq(symlink(path, link), 0);
  w = tl_create(link, &info, &err);
  ck_assert_msg(w != NULL, "create through a link: %s", err.msg);
  for (long k = 0; k < 3; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_int_eq(lstat(link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  ck_assert_int_eq(records_in(path), 3);
  remove(link);

  /* no temporary file is left behind */
  DIR *dir = opendir(scratch);
  ck_assert_ptr_nonnull(dir);
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    ck_assert_msg(strstr(e->d_name, ".tmp-") == NULL, "left behind: %s", e->d_name);
  }
  closedir(dir);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* the sidecar grows in place: flushed after every record (its reserve used up and renewed
 * several times), it lists exactly the records flushed, ends with its closing tags and says
 * N records; closed, it is byte for byte the sidecar that one write at the end gives */
START_TEST(test_xdmf_in_place) {
  char path[256], xmf[256];
  path_in(path, sizeof(path), "grow.h5");
  path_in(xmf, sizeof(xmf), "grow.xmf");
  testInfo info = make_info(NQ, NB, NJ, 1);
  mbsError err;
  recordBuf rb;
  const long n = 400;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  mbs_output_set_flush_interval(w, 0.0);
  long rewrites = 0, last_size = 0;
  for (long k = 0; k < n; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
    char *s = slurp(xmf);
    ck_assert_ptr_nonnull(s);
    size_t len = strlen(s);
    char want[64];
    snprintf(want, sizeof(want), "<!ENTITY N \"%ld ", k + 1);
    ck_assert_msg(strstr(s, want) != NULL, "record %ld: the count", k);
    ck_assert_int_eq(count_substr(s, "<Grid Name=\"record "), k + 1);
    ck_assert_int_eq(count_substr(s, "<Grid Name=\"joints "), k + 1);
    ck_assert_msg(len > 40 && strcmp(s + len - 32, "    </Grid>\n  </Domain>\n</Xdmf>\n") == 0,
                  "record %ld: the closing tags end the file", k);
    /* the bodies' grids stay before the joints' collection, the reserve between them */
    const char *mid = strstr(s, "<Grid Name=\"joints\"");
    ck_assert_ptr_nonnull(mid);
    snprintf(want, sizeof(want), "<Grid Name=\"record %ld\"", k);
    const char *lastb = strstr(s, want);
    ck_assert(lastb != NULL && lastb < mid);
    /* a rewrite shows as a jump of the reserve (the file grows by more than a record) */
    long size = (long)len;
    if (k > 0 && size - last_size > 16384) {
      rewrites++;
    }
    last_size = size;
    free(s);
  }
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  ck_assert_msg(rewrites >= 2 && rewrites <= 8, "%ld rewrites for %ld records", rewrites, n);
  char *grown = slurp(xmf);
  ck_assert_ptr_nonnull(grown);

  /* the same records written once, at close */
  w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  mbs_output_set_flush_interval(w, INFINITY);
  for (long k = 0; k < n; k++) {
    ck_assert_int_eq(tl_append(w, make_record(&rb, k), &err), MBS_OK);
  }
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  char *once = slurp(xmf);
  ck_assert_ptr_nonnull(once);
  ck_assert_str_eq(grown, once);
  free(grown);
  free(once);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* the sidecar's path: a directory, something mbsim-run did not write, a dangling link; and
 * dangling links and loops at the output path: refused before anything is replaced */
START_TEST(test_sidecar_path_rules) {
  char path[256], xmf[256], link[256], other[256];
  path_in(path, sizeof(path), "side.h5");
  path_in(xmf, sizeof(xmf), "side.xmf");
  testInfo info = make_info(NQ, NB, NJ, 1);
  mbsError err;
  recordBuf rb;
  write_one_record(path, &info, &rb, "create");
  char *before = slurp(path);

  /* a directory named like the sidecar: refused, the earlier result untouched */
  ck_assert_int_eq(remove(xmf), 0);
  ck_assert_int_eq(mkdir(xmf, 0755), 0);
  ck_assert_ptr_null(tl_create(path, &info, &err));
  ck_assert_msg(strstr(err.msg, "is a directory") && strstr(err.msg, xmf), "message: %s",
                err.msg);
  ck_assert_int_eq(records_in(path), 1);
  ck_assert_int_eq(rmdir(xmf), 0);

  /* someone's own XDMF file: refused, untouched; --overwrite replaces it */
  const char *mine = "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"2.0\"><Domain/></Xdmf>\n";
  write_text(xmf, mine);
  ck_assert_ptr_null(tl_create(path, &info, &err));
  ck_assert_msg(strstr(err.msg, "not one that mbsim-run wrote") && strstr(err.msg, "--overwrite"),
                "message: %s", err.msg);
  char *kept = slurp(xmf);
  ck_assert_str_eq(kept, mine);
  free(kept);
  info.overwrite = 1;
  write_one_record(path, &info, &rb, "overwrite");
  ck_assert_int_eq(xmf_grids(xmf), 1);
  info.overwrite = 0;

  /* a dangling link as the sidecar, and as the output: refused, nothing replaced */
  path_in(other, sizeof(other), "nowhere/missing.xmf");
  ck_assert_int_eq(remove(xmf), 0);
  ck_assert_int_eq(symlink(other, xmf), 0);
  ck_assert_ptr_null(tl_create(path, &info, &err));
  ck_assert_msg(strstr(err.msg, "dangling"), "message: %s", err.msg);
  ck_assert_int_eq(remove(xmf), 0);
  path_in(link, sizeof(link), "dangling.h5");
  ck_assert_int_eq(symlink(other, link), 0);
  ck_assert_ptr_null(tl_create(link, &info, &err));
  ck_assert_msg(strstr(err.msg, "dangling") && strstr(err.msg, link), "message: %s", err.msg);
  struct stat st;
  ck_assert_int_eq(lstat(link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  ck_assert_int_eq(remove(link), 0);

  /* a loop of links */
  path_in(link, sizeof(link), "loop_a.h5");
  path_in(other, sizeof(other), "loop_b.h5");
  ck_assert_int_eq(symlink(other, link), 0);
  ck_assert_int_eq(symlink(link, other), 0);
  ck_assert_ptr_null(tl_create(link, &info, &err));
  ck_assert_msg(strstr(err.msg, "loop"), "message: %s", err.msg);
  ck_assert_int_eq(lstat(link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  remove(link);
  remove(other);

  /* a link planted at a temporary name is never followed: the result is written beside it */
  free(before);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* a record holding NaN or infinity is refused as a blown-up solution: nothing of it is
 * written and the writer goes on with finite records */
START_TEST(test_nonfinite_record) {
  char path[256];
  path_in(path, sizeof(path), "blowup.h5");
  testInfo info = make_info(NQ, NB, NJ, 0);
  mbsError err;
  recordBuf rb;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  ck_assert_int_eq(tl_append(w, make_record(&rb, 0), &err), MBS_OK);

  /* NaN in a coordinate, infinity in an energy, overflow of the total energy */
  testRecord r = *make_record(&rb, 1);
  rb.q[2] = NAN;
  ck_assert_int_eq(tl_append(w, &r, &err), MBS_ERR_SOLVER);
  ck_assert_msg(strstr(err.msg, "/state/q") && strstr(err.msg, "blown up") &&
                    strstr(err.msg, "t = 0.01"),
                "message: %s", err.msg);
  r = *make_record(&rb, 1);
  r.kinetic = INFINITY;
  ck_assert_int_eq(tl_append(w, &r, &err), MBS_ERR_SOLVER);
  ck_assert_ptr_nonnull(strstr(err.msg, "/energy/kinetic"));
  r = *make_record(&rb, 1);
  r.kinetic = 1.5e308;
  r.potential = 1.5e308;
  ck_assert_int_eq(tl_append(w, &r, &err), MBS_ERR_SOLVER);
  ck_assert_ptr_nonnull(strstr(err.msg, "/energy/total"));
  ck_assert_int_eq(mbs_output_count(w), 1);

  /* optional arrays left out are written as NaN on purpose and are not refused */
  r = *make_record(&rb, 1);
  r.multipliers = NULL;
  ck_assert_int_eq(tl_append(w, &r, &err), MBS_OK);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  check_records(f, 2, NQ, NB, NJ);
  H5Fclose(f);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* ---------- the registry: ragged tables, grids of every kind ---------- */

/* records of the registry test: enough for the grids of the first two collections to
 * outgrow their reserves */
#define NREG 150

/* rows of record k of the ragged test table: k % 5 rows (0 for every fifth), 600 rows once
 * so that a record spans chunks */
static long ragged_rows_of(long k) {
  return k == 7 ? 600 : k % 5;
}

static double ragged_val(long k, long row, int col) {
  return 1000.0 * (double)k + 10.0 * (double)row + col;
}

/* the aligned dataset /contacts/sum (2 columns) beside the ragged test table */
static double aligned_val(long k, long row, int col) {
  return -(1000.0 * (double)k + 10.0 * (double)row + col) - 0.5;
}

/* a run of nrec records with a body grid, a polyline grid (a 4-node "beam") and a ragged
 * point grid (contacts, 4 columns: point and a pressure) at path; flush at every append
 * when every_flush */
static void write_registry_run(const char *path, long nrec, int every_flush) {
  mbsError err;
  mbsWriter *w = open_test_writer(path, "registry", 1.0, 1, 0);
  mbs_output_set_flush_interval(w, every_flush ? 0.0 : INFINITY);

  /* a beam of 4 nodes: positions and tangents, its own group */
  mbsSeriesSpec pos = {"/beams/rod/position", MBS_OUT_FLOAT64, 2, {4, 3, 0}, "m", 0, 0, 0};
  mbsSeriesSpec tan = {"/beams/rod/tangent", MBS_OUT_FLOAT64, 2, {4, 3, 0}, "1", 0, 0, 0};
  int hp = mbs_output_add_series(w, &pos, &err);
  ck_assert_msg(hp > 0, "add: %s", err.msg);
  int ht = mbs_output_add_series(w, &tan, &err);
  ck_assert_int_gt(ht, hp);
  static const char *const cols[4] = {"x", "y", "z", "pressure"};
  int hc = mbs_output_add_ragged(w, "/contacts", 4, "m, m, m, Pa", cols, &err);
  ck_assert_msg(hc >= 0, "ragged: %s", err.msg);
  static const char *const acols[2] = {"u", "v"};
  int ha = mbs_output_add_aligned(w, hc, "/contacts/sum", 2, "N s", acols, &err);
  ck_assert_msg(ha > 0, "aligned: %s", err.msg);
  /* no such ragged table; no column; a path taken */
  ck_assert_int_lt(mbs_output_add_aligned(w, hc + 1, "/contacts/x", 2, "1", NULL, &err), 0);
  ck_assert_int_eq(err.status, MBS_ERR_ARGS);
  ck_assert_int_lt(mbs_output_add_aligned(w, hc, "/contacts/x", 0, "1", NULL, &err), 0);
  ck_assert_int_lt(mbs_output_add_aligned(w, hc, "/contacts/sum", 2, "1", NULL, &err), 0);

  /* the same path twice, a bad shape: refused */
  ck_assert_int_lt(mbs_output_add_series(w, &pos, &err), 0);
  ck_assert_int_eq(err.status, MBS_ERR_ARGS);
  mbsSeriesSpec badspec = {"/beams/x", MBS_OUT_INT32, 1, {2, 0, 0}, "1", 1, 0, 0};
  ck_assert_int_lt(mbs_output_add_series(w, &badspec, &err), 0);
  ck_assert_int_eq(err.status, MBS_ERR_ARGS);

  static const mbsGridVector tvec[1] = {{"tangent", "/beams/rod/tangent", 3, 0, 0}};
  mbsGridSpec beam = {MBS_GRID_POLYLINE, "beams", "rod", 4, 0,
                      {NULL, "/beams/rod/position", 3, 0, 0}, 1, tvec};
  static const mbsGridVector cvec[1] = {{"normal", NULL, 4, 1, 0}};
  mbsGridSpec contacts = {MBS_GRID_RAGGED_POINTS, "contacts", "contacts", 0, hc,
                          {NULL, NULL, 4, 0, 0}, 1, cvec};
  mbsGridSpec empty = {MBS_GRID_POINTS, "nothing", "nothing", 0, 0,
                       {NULL, "/beams/rod/position", 3, 0, 0}, 0, NULL};
  ck_assert_int_eq(mbs_output_add_grid(w, &empty, &err), MBS_OK);
  ck_assert_int_eq(mbs_output_add_grid(w, &beam, &err), MBS_OK);
  ck_assert_int_eq(mbs_output_add_grid(w, &contacts, &err), MBS_OK);

  double p[12], tg[12];
  double *rows = malloc(600 * 4 * sizeof(double));
  double *arows = malloc(600 * 2 * sizeof(double));
  ck_assert_ptr_nonnull(rows);
  ck_assert_ptr_nonnull(arows);
  for (long k = 0; k < nrec; k++) {
    for (int i = 0; i < 12; i++) {
      p[i] = (double)k + 0.1 * i;
      tg[i] = (i % 3 == 0) ? 1.0 : 0.0;
    }
    long n = ragged_rows_of(k);
    for (long r = 0; r < n; r++) {
      for (int c = 0; c < 4; c++) {
        rows[r * 4 + c] = ragged_val(k, r, c);
      }
      arows[r * 2] = aligned_val(k, r, 0);
      arows[r * 2 + 1] = aligned_val(k, r, 1);
    }
    mbs_output_put(w, hp, p);
    mbs_output_put(w, ht, tg);
    mbs_output_put_rows(w, hc, n > 0 ? rows : NULL, n);
    mbs_output_put_aligned(w, ha, n > 0 ? arows : NULL);
    ck_assert_msg(mbs_output_append(w, 0.01 * (double)k, &err) == MBS_OK, "append: %s",
                  err.msg);
    if (k == 0) {
      /* nothing is registered after the first record */
      ck_assert_int_lt(mbs_output_add_series(w, &badspec, &err), 0);
      ck_assert_int_eq(mbs_output_add_grid(w, &beam, &err), MBS_ERR_ARGS);
    }
  }

  /* a required row missing, aligned rows missing, a non-finite table or aligned value:
   * refused, nothing written */
  mbs_output_put(w, hp, p);
  ck_assert_int_eq(mbs_output_append(w, 9.0, &err), MBS_ERR_ARGS);
  ck_assert_ptr_nonnull(strstr(err.msg, "/beams/rod/tangent"));
  mbs_output_put(w, hp, p);
  mbs_output_put(w, ht, tg);
  mbs_output_put_rows(w, hc, rows, 1);
  ck_assert_int_eq(mbs_output_append(w, 9.0, &err), MBS_ERR_ARGS);
  ck_assert_ptr_nonnull(strstr(err.msg, "/contacts/sum"));
  arows[1] = INFINITY;
  mbs_output_put(w, hp, p);
  mbs_output_put(w, ht, tg);
  mbs_output_put_rows(w, hc, rows, 1);
  mbs_output_put_aligned(w, ha, arows);
  ck_assert_int_eq(mbs_output_append(w, 9.0, &err), MBS_ERR_SOLVER);
  ck_assert_ptr_nonnull(strstr(err.msg, "/contacts/sum"));
  arows[1] = 0.0;
  rows[2] = NAN;
  mbs_output_put(w, hp, p);
  mbs_output_put(w, ht, tg);
  mbs_output_put_rows(w, hc, rows, 1);
  mbs_output_put_aligned(w, ha, arows);
  ck_assert_int_eq(mbs_output_append(w, 9.0, &err), MBS_ERR_SOLVER);
  ck_assert_ptr_nonnull(strstr(err.msg, "/contacts/table"));
  ck_assert_int_eq(mbs_output_count(w), nrec);
  free(rows);
  free(arows);
  ck_assert_int_eq(mbs_output_close(w, &err), MBS_OK);
}

/* reading back: counts, offsets and rows of the ragged table, record by record */
static void check_ragged(const char *path, long nrec) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  long total = 0;
  for (long k = 0; k < nrec; k++) {
    total += ragged_rows_of(k);
  }
  hsize_t dims[4];
  ck_assert_int_eq(dset_dims(f, "/contacts/table", dims), 2);
  ck_assert_uint_eq(dims[0], (hsize_t)total);
  ck_assert_uint_eq(dims[1], 4);
  ck_assert_int_eq(dset_dims(f, "/contacts/count", dims), 1);
  ck_assert_uint_eq(dims[0], (hsize_t)nrec);
  long long *count = malloc((size_t)nrec * sizeof(long long));
  long long *offsets = malloc((size_t)nrec * sizeof(long long));
  ck_assert(count && offsets);
  hid_t d = H5Dopen2(f, "/contacts/count", H5P_DEFAULT);
  hid_t ft = H5Dget_type(d);
  ck_assert_int_eq(H5Tget_class(ft), H5T_INTEGER);
  ck_assert_uint_eq(H5Tget_size(ft), 8);
  H5Tclose(ft);
  ck_assert_int_ge(H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, count), 0);
  H5Dclose(d);
  d = H5Dopen2(f, "/contacts/offsets", H5P_DEFAULT);
  ck_assert_int_ge(H5Dread(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, offsets), 0);
  H5Dclose(d);
  double *table = read_doubles(f, "/contacts/table", (size_t)total * 4);
  ck_assert_int_eq(dset_dims(f, "/contacts/sum", dims), 2);
  ck_assert_uint_eq(dims[0], (hsize_t)total);
  ck_assert_uint_eq(dims[1], 2);
  double *sum = read_doubles(f, "/contacts/sum", (size_t)total * 2);
  long long at = 0;
  for (long k = 0; k < nrec; k++) {
    ck_assert_int_eq(count[k], ragged_rows_of(k));
    ck_assert_int_eq(offsets[k], at);
    for (long r = 0; r < count[k]; r++) {
      for (int c = 0; c < 4; c++) {
        ck_assert(table[(offsets[k] + r) * 4 + c] == ragged_val(k, r, c));
      }
      /* the aligned rows: the same offsets */
      ck_assert(sum[(offsets[k] + r) * 2] == aligned_val(k, r, 0));
      ck_assert(sum[(offsets[k] + r) * 2 + 1] == aligned_val(k, r, 1));
    }
    at += count[k];
  }
  hid_t ds = H5Dopen2(f, "/contacts/sum", H5P_DEFAULT);
  ck_assert_int_ge(ds, 0);
  check_string_attr(ds, "units", "N s");
  check_string_attr(ds, "aligned_with", "/contacts/table");
  H5Dclose(ds);
  free(sum);
  d = H5Dopen2(f, "/contacts/table", H5P_DEFAULT);
  check_string_attr(d, "units", "m, m, m, Pa");
  static const char *const cols[4] = {"x", "y", "z", "pressure"};
  hid_t a = H5Aopen(d, "columns", H5P_DEFAULT);
  ck_assert_int_ge(a, 0);
  check_strings(a, 1, cols, 4);
  H5Aclose(a);
  H5Dclose(d);
  double *bp = read_doubles(f, "/beams/rod/position", (size_t)nrec * 12);
  ck_assert(bp[12 * (nrec - 1) + 5] == (double)(nrec - 1) + 0.5);
  free(bp);
  free(table);
  free(count);
  free(offsets);
  H5Fclose(f);
}

/* sub is in s (the message shows where the sidecar differs) */
static void has_text(const char *s, const char *sub) {
  ck_assert_msg(strstr(s, sub) != NULL, "sidecar lacks: %.200s", sub);
}

/* the well-formed XML of a sidecar, checked by Python's parser when it is there: 1 parsed,
 * 0 no python3 */
static int python_parses(const char *xmf, long nrec) {
  if (access("/usr/bin/python3", X_OK) != 0) {
    return 0;
  }
  char cmd[1024];
  snprintf(cmd, sizeof(cmd),
           "/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; "
           "r = E.parse(sys.argv[1]).getroot(); "
           "g = r.find('Domain').findall('Grid'); "
           "assert [c.get('Name') for c in g] == ['nothing', 'beams', 'contacts'], g; "
           "assert all(len(c.findall('Grid')) == %ld for c in g)\" '%s'",
           nrec, xmf);
  int rc = system(cmd);
  ck_assert_msg(rc == 0, "python3 xml.etree does not accept %s", xmf);
  return 1;
}

/* a ragged table over records of 0 .. 600 rows, and the grids of every kind in the sidecar:
 * the same result file and sidecar whether it was flushed at every record (appended in
 * place, the reserves of the first two collections used up and the file rewritten) or
 * once */
/* the chunks written whole (chunk_write): a table's columns each in chunks of their own,
 * a chunk that deflate does not shrink stored shuffled only (deflate marked skipped), a
 * chunk of zeros not written at all; every value reads back as written */
#define NPACK 3000
static double pack_noise(long k, int c) {
  /* incompressible bits: a 64-bit mix of the record and column, as a double in [1, 2) */
  unsigned long long x = (unsigned long long)(k * 8 + c) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  double m = 1.0 + (double)(x >> 11) / 9007199254740992.0;
  /* and a sign and a binary exponent in [-100, 100] of other bits: deflate gains ~6% */
  return ((x & 1u) ? -1.0 : 1.0) * ldexp(m, (int)((x >> 1) % 201) - 100);
}

START_TEST(test_chunk_packing) {
  char path[256];
  path_in(path, sizeof(path), "pack.h5");
  mbsError err;
  mbsWriter *w = open_test_writer(path, "packing", 30.0, 0, 0);
  mbs_output_set_flush_interval(w, INFINITY);
  mbsSeriesSpec noise = {"/noise", MBS_OUT_FLOAT64, 1, {4, 0, 0}, "1", 0, 0, 0};
  mbsSeriesSpec zeros = {"/zeros", MBS_OUT_FLOAT64, 1, {4, 0, 0}, "1", 0, 0, 0};
  int hn = mbs_output_add_series(w, &noise, &err);
  int hz = mbs_output_add_series(w, &zeros, &err);
  ck_assert_int_gt(hz, hn);
  /* three rows per record: zeros, noise and a smooth column */
  int ht = mbs_output_add_ragged(w, "/table", 3, "1", NULL, &err);
  ck_assert_msg(ht >= 0, "ragged: %s", err.msg);
  double n4[4], z4[4] = {0.0, 0.0, 0.0, 0.0}, rows[9];
  for (long k = 0; k < NPACK; k++) {
    for (int c = 0; c < 4; c++) {
      n4[c] = pack_noise(k, c);
    }
    for (int r = 0; r < 3; r++) {
      rows[3 * r] = 0.0;
      rows[3 * r + 1] = pack_noise(k, 4 + r);
      rows[3 * r + 2] = 0.001 * (double)(3 * k + r);
    }
    mbs_output_put(w, hn, n4);
    mbs_output_put(w, hz, z4);
    mbs_output_put_rows(w, ht, rows, 3);
    ck_assert_msg(mbs_output_append(w, 0.01 * (double)k, &err) == MBS_OK, "append: %s",
                  err.msg);
  }
  ck_assert_int_eq(mbs_output_close(w, &err), MBS_OK);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  double *buf = malloc((size_t)NPACK * 9 * sizeof(double));
  ck_assert_ptr_nonnull(buf);
  /* the values */
  hid_t d = H5Dopen2(f, "/noise", H5P_DEFAULT);
  ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
  for (long k = 0; k < NPACK; k++) {
    for (int c = 0; c < 4; c++) {
      ck_assert(buf[4 * k + c] == pack_noise(k, c));
    }
  }
  /* a noise chunk stored with deflate skipped (filter mask bit 1) */
  hsize_t nchunk = 0, off[2];
  unsigned mask = 0, skipped = 0;
  haddr_t addr;
  hsize_t size;
  hid_t space = H5Dget_space(d);
  ck_assert_int_ge(H5Dget_num_chunks(d, space, &nchunk), 0);
  for (hsize_t i = 0; i < nchunk; i++) {
    ck_assert_int_ge(H5Dget_chunk_info(d, space, i, off, &mask, &addr, &size), 0);
    skipped += (mask & 2u) != 0;
  }
  ck_assert_uint_gt(skipped, 0);
  H5Sclose(space);
  H5Dclose(d);
  d = H5Dopen2(f, "/zeros", H5P_DEFAULT);
  for (long i = 0; i < 4 * NPACK; i++) {
    buf[i] = 1.0;
  }
  ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
  for (long i = 0; i < 4 * NPACK; i++) {
    ck_assert(buf[i] == 0.0);
  }
  /* none of its 6 chunks is on disk: neither the whole ones nor those written partly
   * filled (the first, flushed with the first record, and the last, at the close) */
  space = H5Dget_space(d);
  ck_assert_int_ge(H5Dget_num_chunks(d, space, &nchunk), 0);
  ck_assert_uint_eq(nchunk, 0);
  H5Sclose(space);
  H5Dclose(d);
  /* the table: a chunk per column */
  d = H5Dopen2(f, "/table/table", H5P_DEFAULT);
  hid_t dcpl = H5Dget_create_plist(d);
  hsize_t cdims[2];
  ck_assert_int_eq(H5Pget_chunk(dcpl, 2, cdims), 2);
  ck_assert_uint_eq(cdims[1], 1);
  ck_assert_uint_gt(cdims[0], 1);
  H5Pclose(dcpl);
  ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
  for (long k = 0; k < NPACK; k++) {
    for (int r = 0; r < 3; r++) {
      const double *row = buf + 9 * k + 3 * r;
      ck_assert(row[0] == 0.0);
      ck_assert(row[1] == pack_noise(k, 4 + r));
      ck_assert(row[2] == 0.001 * (double)(3 * k + r));
    }
  }
  H5Dclose(d);
  free(buf);
  H5Fclose(f);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* wide rows (more than 16 KiB) get 4 records per chunk, fewer where 4 would pass 1 MiB: a
 * step history like /state/previous_increments (a new block each record, the others the
 * previous record's shifted by one) deflates to well under its size, which a chunk per
 * record could not (every block new in it, incompressible); every value reads back bit for
 * bit, flushed at the close only or at every record (chunks written partly filled) */
#define NHIST 1024
#define NHREC 41
static double hist_val(long k, int b, int i) {
  /* block b of record k: the block that was new at record k - b */
  return pack_noise(k - b, 8 + i);
}

/* what block b of record k holds: hist_val, or with zeroed the rows of a record-every-step
 * history whose repeated blocks are zeros (blocks 1-3 zero but in records 5 and 6, the
 * second chunk of 4 rows) */
static double hist_want(long k, int b, int i, int zeroed) {
  return !zeroed || b == 0 || k == 5 || k == 6 ? hist_val(k, b, i) : 0.0;
}

static void hist_row(double *row, long k, int zeroed) {
  for (int b = 0; b < 4; b++) {
    for (int i = 0; i < NHIST; i++) {
      row[b * NHIST + i] = hist_want(k, b, i, zeroed);
    }
  }
}

/* /history of the file at path, opened (its file in *f), chunked 4 records at a time: the
 * chunk's shape in cdims */
static hid_t hist_open(const char *path, hid_t *f, hsize_t cdims[2]) {
  *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(*f, 0);
  hid_t d = H5Dopen2(*f, "/history", H5P_DEFAULT);
  ck_assert_int_ge(d, 0);
  hid_t dcpl = H5Dget_create_plist(d);
  ck_assert_int_eq(H5Pget_chunk(dcpl, 2, cdims), 2);
  ck_assert_uint_eq(cdims[0], 4);
  H5Pclose(dcpl);
  return d;
}

/* every value of /history (d) reads back bit for bit */
static void hist_check(hid_t d, int zeroed) {
  double *all = malloc((size_t)NHREC * 4 * NHIST * sizeof(double));
  ck_assert_ptr_nonnull(all);
  ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all), 0);
  for (long k = 0; k < NHREC; k++) {
    for (int b = 0; b < 4; b++) {
      for (int i = 0; i < NHIST; i++) {
        ck_assert(all[(k * 4 + b) * NHIST + i] == hist_want(k, b, i, zeroed));
      }
    }
  }
  free(all);
}

/* a row of equal blocks (mbsSeriesSpec.blocks, /state/previous_increments) is chunked a
 * block at a time: a block of zeros in every record of a chunk is a chunk never written,
 * and every value reads back bit for bit, at the close only or flushed at every record */
START_TEST(test_block_chunks) {
  for (int flush_each = 0; flush_each < 2; flush_each++) {
    for (int level = 0; level < 2; level++) {
      char path[256];
      path_in(path, sizeof(path), "blocks.h5");
      mbsError err;
      mbsOutputInfo info = {.version = "0.1.0", .title = "blocks", .deck_text = "",
                            .integrator = "em", .integrator_reason = "test", .dt = 0.01,
                            .t_end = 1.0, .overwrite = 1, .deflate_level = level ? 1 : -1};
      mbsWriter *w = mbs_output_create(path, &info, &err);
      ck_assert_msg(w != NULL, "create: %s", err.msg);
      mbs_output_set_flush_interval(w, flush_each ? 0.0 : INFINITY);
      mbsSeriesSpec hist = {.path = "/history", .type = MBS_OUT_FLOAT64, .rank = 1,
                            .shape = {4 * NHIST, 0, 0}, .units = "1", .blocks = 4};
      int hh = mbs_output_add_series(w, &hist, &err);
      ck_assert_msg(hh >= 0, "series: %s", err.msg);
      double *row = malloc(4 * NHIST * sizeof(double));
      ck_assert_ptr_nonnull(row);
      for (long k = 0; k < NHREC; k++) {
        hist_row(row, k, 1);
        mbs_output_put(w, hh, row);
        ck_assert_msg(mbs_output_append(w, 0.01 * (double)k, &err) == MBS_OK, "append: %s",
                      err.msg);
      }
      ck_assert_int_eq(mbs_output_close(w, &err), MBS_OK);
      hid_t f;
      hsize_t cdims[2];
      hid_t d = hist_open(path, &f, cdims);
      ck_assert_uint_eq(cdims[1], NHIST);
      /* block 0 of every chunk of rows, and blocks 1-3 of the second */
      hsize_t nchunk = 0;
      hid_t fs = H5Dget_space(d);
      ck_assert_int_ge(H5Dget_num_chunks(d, fs, &nchunk), 0);
      H5Sclose(fs);
      ck_assert_uint_eq(nchunk, (NHREC + 3) / 4 + 3);
      hist_check(d, 1);
      free(row);
      H5Dclose(d);
      H5Fclose(f);
      ck_assert_int_eq(open_ids(), 0);
    }
  }
}
END_TEST

START_TEST(test_wide_row_chunks) {
  for (int flush_each = 0; flush_each < 2; flush_each++) {
    char path[256];
    path_in(path, sizeof(path), "wide.h5");
    mbsError err;
    mbsWriter *w = open_test_writer(path, "wide rows", 1.0, 0, 1);
    mbs_output_set_flush_interval(w, flush_each ? 0.0 : INFINITY);
    /* 4 blocks of NHIST doubles (32 kB a row), and a row of 40000 doubles (320 kB) */
    mbsSeriesSpec hist = {"/history", MBS_OUT_FLOAT64, 1, {4 * NHIST, 0, 0}, "1", 0, 0, 0};
    mbsSeriesSpec big = {"/big", MBS_OUT_FLOAT64, 1, {40000, 0, 0}, "1", 0, 0, 0};
    int hh = mbs_output_add_series(w, &hist, &err);
    int hb = mbs_output_add_series(w, &big, &err);
    ck_assert_msg(hh >= 0 && hb > hh, "series: %s", err.msg);
    double *row = malloc(4 * NHIST * sizeof(double)), *brow = calloc(40000, sizeof(double));
    ck_assert(row && brow);
    for (long k = 0; k < NHREC; k++) {
      hist_row(row, k, 0);
      brow[k] = (double)k;
      mbs_output_put(w, hh, row);
      mbs_output_put(w, hb, brow);
      ck_assert_msg(mbs_output_append(w, 0.01 * (double)k, &err) == MBS_OK, "append: %s",
                    err.msg);
    }
    ck_assert_int_eq(mbs_output_close(w, &err), MBS_OK);

    hid_t f;
    hsize_t cdims[2];
    hid_t d = hist_open(path, &f, cdims);
    hist_check(d, 0);
    /* 7 of a chunk's 16 blocks are new (4 in its first row, 1 in each other): about 0.45 of
     * the raw size; a chunk per record stores every block (0.94 at best) */
    double raw = (double)NHREC * 4 * NHIST * sizeof(double);
    double stored = (double)H5Dget_storage_size(d);
    ck_assert_msg(stored < 0.6 * raw, "history stored in %.0f of %.0f bytes", stored, raw);
    H5Dclose(d);
    d = H5Dopen2(f, "/big", H5P_DEFAULT);
    hid_t dcpl = H5Dget_create_plist(d);
    ck_assert_int_eq(H5Pget_chunk(dcpl, 2, cdims), 2);
    ck_assert_uint_eq(cdims[0], 3); /* 3 x 320 kB within 1 MiB */
    H5Pclose(dcpl);
    double *col = malloc(NHREC * sizeof(double));
    ck_assert_ptr_nonnull(col);
    hid_t fs = H5Dget_space(d);
    hsize_t start[2] = {0, 0}, count[2] = {NHREC, 1};
    ck_assert_int_ge(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), 0);
    hid_t ms = H5Screate_simple(2, count, NULL);
    /* column c holds c from record c on (the row keeps what was put before), 0 before */
    for (int c = 1; c < NHREC; c += 19) {
      start[1] = (hsize_t)c;
      ck_assert_int_ge(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), 0);
      ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, col), 0);
      for (long k = 0; k < NHREC; k++) {
        ck_assert(col[k] == (k >= c ? (double)c : 0.0));
      }
    }
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
    free(col);
    free(row);
    free(brow);
    H5Fclose(f);
    ck_assert_int_eq(open_ids(), 0);
  }
}
END_TEST

/* the series of a vector or matrix per object ([T, n, 3], [T, n, 3, 3]) chunked one
 * component (last index) at a time: a component that stays 0 has no chunk on disk, the
 * others read back bit for bit, whether the file was flushed at every record (chunks
 * written partly filled and again longer) or only at the close */
#define NCOMP 700
#define NOBJ 50
static double comp_val(long k, int i, int c) {
  /* component 0 smooth, 1 zero, 2 noise */
  return c == 0 ? 0.001 * (double)k + (double)i : c == 1 ? 0.0 : pack_noise(k * NOBJ + i, c);
}

START_TEST(test_component_chunks) {
  for (int every = 0; every < 2; every++) {
    /* (flushed at every record: 100 records, 3 chunks of /vec, 8 of /mat, each written
     * partly filled at every record) */
    long nrec = every ? 100 : NCOMP;
    char path[256];
    path_in(path, sizeof(path), every ? "comp_flushed.h5" : "comp.h5");
    mbsError err;
    mbsWriter *w = open_test_writer(path, "components", 7.0, 0, 0);
    mbs_output_set_flush_interval(w, every ? 0.0 : INFINITY);
    mbsSeriesSpec vec = {"/vec", MBS_OUT_FLOAT64, 2, {NOBJ, 3, 0}, "m", 0, 0, 0};
    mbsSeriesSpec mat = {"/mat", MBS_OUT_FLOAT64, 3, {NOBJ, 3, 3}, "1", 0, 0, 0};
    int hv = mbs_output_add_series(w, &vec, &err);
    int hm = hv < 0 ? -1 : mbs_output_add_series(w, &mat, &err);
    ck_assert_msg(hm > hv, "series: %s", err.msg);
    double v[NOBJ * 3], mt[NOBJ * 9];
    for (long k = 0; k < nrec; k++) {
      for (int i = 0; i < NOBJ; i++) {
        for (int c = 0; c < 3; c++) {
          v[3 * i + c] = comp_val(k, i, c);
          for (int r = 0; r < 3; r++) {
            mt[9 * i + 3 * r + c] = comp_val(k + r, i, c);
          }
        }
      }
      mbs_output_put(w, hv, v);
      mbs_output_put(w, hm, mt);
      ck_assert_msg(mbs_output_append(w, 0.01 * (double)k, &err) == MBS_OK, "append: %s",
                    err.msg);
    }
    ck_assert_int_eq(mbs_output_close(w, &err), MBS_OK);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    double *buf = malloc((size_t)NCOMP * NOBJ * 9 * sizeof(double));
    ck_assert_ptr_nonnull(buf);
    static const char *const names[2] = {"/vec", "/mat"};
    for (int which = 0; which < 2; which++) {
      int rank = which ? 4 : 3;
      hid_t d = H5Dopen2(f, names[which], H5P_DEFAULT);
      ck_assert_int_ge(d, 0);
      hid_t dcpl = H5Dget_create_plist(d);
      hsize_t cdims[4];
      ck_assert_int_eq(H5Pget_chunk(dcpl, rank, cdims), rank);
      H5Pclose(dcpl);
      ck_assert_uint_gt(cdims[0], 1);
      ck_assert_uint_eq(cdims[1], NOBJ);
      ck_assert_uint_eq(cdims[rank - 1], 1);
      ck_assert_int_ge(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
      for (long k = 0; k < nrec; k++) {
        for (int i = 0; i < NOBJ; i++) {
          for (int c = 0; c < 3; c++) {
            if (which) {
              for (int r = 0; r < 3; r++) {
                ck_assert(buf[((size_t)k * NOBJ + (size_t)i) * 9 + 3 * (size_t)r + (size_t)c] ==
                          comp_val(k + r, i, c));
              }
            } else {
              ck_assert(buf[((size_t)k * NOBJ + (size_t)i) * 3 + (size_t)c] ==
                        comp_val(k, i, c));
            }
          }
        }
      }
      /* no chunk of the zero component on disk; the others all there */
      hid_t space = H5Dget_space(d);
      hsize_t nchunk = 0, off[4];
      unsigned mask;
      haddr_t addr;
      hsize_t size;
      ck_assert_int_ge(H5Dget_num_chunks(d, space, &nchunk), 0);
      hsize_t per_comp = ((hsize_t)nrec + cdims[0] - 1) / cdims[0];
      ck_assert_uint_eq(nchunk, 2 * per_comp);
      for (hsize_t i = 0; i < nchunk; i++) {
        ck_assert_int_ge(H5Dget_chunk_info(d, space, i, off, &mask, &addr, &size), 0);
        ck_assert_uint_ne(off[rank - 1], 1);
      }
      H5Sclose(space);
      H5Dclose(d);
    }
    free(buf);
    H5Fclose(f);
  }
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

START_TEST(test_ragged_and_grids) {
  char path[256], xmf[256], path2[256], xmf2[256];
  path_in(path, sizeof(path), "reg.h5");
  path_in(xmf, sizeof(xmf), "reg.xmf");
  /* the same name in another directory: the sidecar names the file */
  path_in(path2, sizeof(path2), "once");
  ck_assert_int_eq(mkdir(path2, 0755), 0);
  path_in(path2, sizeof(path2), "once/reg.h5");
  path_in(xmf2, sizeof(xmf2), "once/reg.xmf");
  write_registry_run(path, NREG, 1);
  write_registry_run(path2, NREG, 0);
  check_ragged(path, NREG);
  check_ragged(path2, NREG);

  char *s = slurp(xmf);
  char *s2 = slurp(xmf2);
  ck_assert_ptr_nonnull(s);
  ck_assert_ptr_nonnull(s2);
  size_t at = 0;
  while (s[at] && s[at] == s2[at]) {
    at++;
  }
  ck_assert_msg(s[at] == s2[at], "sidecars differ at byte %zu: '%.80s' and '%.80s'", at, s + at,
                s2 + at);
  /* the entities, one collection per grid, one grid per record in each */
  has_text(s, "<!ENTITY N \"150 ");
  char ent[64];
  long total = 0, empty = 0;
  for (long k = 0; k < NREG; k++) {
    total += ragged_rows_of(k);
    empty += ragged_rows_of(k) == 0;
  }
  snprintf(ent, sizeof(ent), "<!ENTITY R1 \"%ld ", total);
  ck_assert_msg(strstr(s, ent), "no %s in\n%.400s", ent, s);
  ck_assert_int_eq(count_substr(s, "CollectionType=\"Temporal\""), 3);
  ck_assert_int_eq(count_substr(s, "<Grid Name=\"rod "), NREG);
  ck_assert_int_eq(count_substr(s, "<Grid Name=\"contacts "), NREG);
  ck_assert_int_eq(count_substr(s, "<Grid Name=\"nothing "), NREG);
  ck_assert_int_eq(count_substr(s, "<Grid "), count_substr(s, "</Grid>"));
  ck_assert_int_eq(count_substr(s, "TopologyType=\"Polyline\" NumberOfElements=\"1\" "
                                   "NodesPerElement=\"4\""),
                   NREG);
  /* record 7: 600 rows from row 0 + 1 + 2 + 3 + 4 + 0 + 1 = 11 of the table, the normal
   * from its column 1 */
  has_text(s, "<Grid Name=\"contacts 7\" GridType=\"Uniform\">\n"
                                  "        <Time Value=\"0.07\"/>\n"
                                  "        <Topology TopologyType=\"Polyvertex\" "
                                  "NumberOfElements=\"600\"");
  has_text(s, ">11 1 1 1 600 3</DataItem>");
  has_text(s, "Dimensions=\"&R1; 4\"");
  /* an empty record: an empty spatial collection with its time only (ParaView 5.11 crashes
   * on a Uniform grid without Geometry); so are the records of the grid of no points */
  has_text(s, "<Grid Name=\"contacts 0\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
              "        <Time Value=\"0\"/>\n"
              "      </Grid>\n");
  ck_assert_int_eq(count_substr(s, "NumberOfElements=\"0\""), 0);
  ck_assert_int_eq(count_substr(s, "CollectionType=\"Spatial\""), NREG + empty);
  python_parses(xmf, NREG);
  free(s);
  free(s2);
  /* (the scratch teardown removes files, not directories with files in them) */
  ck_assert_int_eq(remove(path2), 0);
  ck_assert_int_eq(remove(xmf2), 0);
  path_in(path2, sizeof(path2), "once");
  ck_assert_int_eq(rmdir(path2), 0);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

/* fixed tables (mbs_output_add_table): values, types, an empty one, string attributes of a
 * dataset, and the refusals (a bad spec, a path taken, an attribute of nothing, a table after
 * the first record) */
START_TEST(test_fixed_tables) {
  char path[256];
  path_in(path, sizeof(path), "tables.h5");
  testInfo info = make_info(NQ, NB, NJ, 0);
  mbsError err;
  mbsWriter *w = tl_create(path, &info, &err);
  ck_assert_msg(w != NULL, "create: %s", err.msg);
  static const double rows[3][4] = {{1, 2, 3, 4}, {-1, 0.5, 1e300, 0}, {7, 8, 9, -10}};
  static const int ints[2][2] = {{-1, 0}, {3, 2}};
  static const char *const cols[4] = {"owner", "kind", "size", "x"};
  static const char *const kinds[3] = {"sphere", "box", "cylinder"};
  mbsTableSpec t = {.path = "/shapes/table",
                    .type = MBS_OUT_FLOAT64,
                    .nrow = 3,
                    .ncol = 4,
                    .data = rows,
                    .units = "index, index, m, m",
                    .column_names = cols};
  mbsTableSpec ti = {
      .path = "/model/pairs", .type = MBS_OUT_INT32, .nrow = 2, .ncol = 2, .data = ints};
  mbsTableSpec empty = {
      .path = "/shapes/points", .type = MBS_OUT_FLOAT64, .nrow = 0, .ncol = 3, .units = "m"};
  ck_assert_msg(mbs_output_add_table(w, &t, &err) == MBS_OK, "table: %s", err.msg);
  ck_assert_msg(mbs_output_add_table(w, &ti, &err) == MBS_OK, "ints: %s", err.msg);
  ck_assert_msg(mbs_output_add_table(w, &empty, &err) == MBS_OK, "empty: %s", err.msg);
  ck_assert_msg(mbs_output_dataset_attr(w, "/shapes/table", "kinds", kinds, 3, &err) == MBS_OK,
                "attr: %s", err.msg);

  /* refused: the same path, no columns, rows without data, an attribute of nothing */
  ck_assert_int_eq(mbs_output_add_table(w, &t, &err), MBS_ERR_ARGS);
  ck_assert_ptr_nonnull(strstr(err.msg, "twice"));
  mbsTableSpec bad = t;
  bad.path = "/shapes/bad";
  bad.ncol = 0;
  ck_assert_int_eq(mbs_output_add_table(w, &bad, &err), MBS_ERR_ARGS);
  bad.ncol = 4;
  bad.data = NULL;
  ck_assert_int_eq(mbs_output_add_table(w, &bad, &err), MBS_ERR_ARGS);
  ck_assert_int_eq(mbs_output_dataset_attr(w, "/shapes/none", "kinds", kinds, 3, &err),
                   MBS_ERR_ARGS);
  ck_assert_ptr_nonnull(strstr(err.msg, "/shapes/none"));

  recordBuf rb;
  ck_assert_int_eq(tl_append(w, make_record(&rb, 0), &err), MBS_OK);
  mbsTableSpec late = t;
  late.path = "/shapes/late";
  ck_assert_int_eq(mbs_output_add_table(w, &late, &err), MBS_ERR_ARGS);
  ck_assert_int_eq(tl_close(w, &err), MBS_OK);

  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  ck_assert_int_ge(f, 0);
  hsize_t dims[4];
  ck_assert_int_eq(dset_dims(f, "/shapes/table", dims), 2);
  ck_assert_uint_eq(dims[0], 3);
  ck_assert_uint_eq(dims[1], 4);
  double *v = read_doubles(f, "/shapes/table", 12);
  for (int i = 0; i < 12; i++) {
    ck_assert_double_eq(v[i], rows[i / 4][i % 4]);
  }
  free(v);
  ck_assert_int_eq(dset_dims(f, "/shapes/points", dims), 2);
  ck_assert_uint_eq(dims[0], 0);
  ck_assert_uint_eq(dims[1], 3);
  ck_assert_int_eq(H5Lexists(f, "/shapes/late", H5P_DEFAULT), 0);
  ck_assert_int_eq(H5Lexists(f, "/shapes/bad", H5P_DEFAULT), 0);
  hid_t d = H5Dopen2(f, "/model/pairs", H5P_DEFAULT);
  ck_assert_int_ge(d, 0);
  hid_t ft = H5Dget_type(d);
  ck_assert_int_eq(H5Tget_class(ft), H5T_INTEGER);
  ck_assert_uint_eq(H5Tget_size(ft), 4);
  int back[4] = {0};
  ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back), 0);
  ck_assert_int_eq(back[0], -1);
  ck_assert_int_eq(back[3], 2);
  H5Tclose(ft);
  H5Dclose(d);
  d = H5Dopen2(f, "/shapes/table", H5P_DEFAULT);
  check_string_attr(d, "units", "index, index, m, m");
  hid_t a = H5Aopen(d, "columns", H5P_DEFAULT);
  check_strings(a, 1, cols, 4);
  H5Aclose(a);
  a = H5Aopen(d, "kinds", H5P_DEFAULT);
  check_strings(a, 1, kinds, 3);
  H5Aclose(a);
  H5Dclose(d);
  H5Fclose(f);
  ck_assert_int_eq(open_ids(), 0);
}
END_TEST

Suite *output_suite(void) {
  Suite *s = suite_create("output");
  TCase *tc = tcase_create("writer");
  tcase_add_checked_fixture(tc, setup, scratch_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_roundtrip);
  tcase_add_test(tc, test_running_after_flush);
  tcase_add_test(tc, test_flush_every_append);
  tcase_add_test(tc, test_status_rewrite);
  tcase_add_test(tc, test_create_fails);
  tcase_add_test(tc, test_bad_record);
  tcase_add_test(tc, test_xdmf);
  tcase_add_test(tc, test_zero_sizes);
  tcase_add_test(tc, test_read_last);
  tcase_add_test(tc, test_output_path_safety);
  tcase_add_test(tc, test_xdmf_in_place);
  tcase_add_test(tc, test_sidecar_path_rules);
  tcase_add_test(tc, test_nonfinite_record);
  tcase_add_test(tc, test_ragged_and_grids);
  tcase_add_test(tc, test_chunk_packing);
  tcase_add_test(tc, test_wide_row_chunks);
  tcase_add_test(tc, test_block_chunks);
  tcase_add_test(tc, test_component_chunks);
  tcase_add_test(tc, test_fixed_tables);
  suite_add_tcase(s, tc);
  return s;
}
