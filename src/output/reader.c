/* reader.c: read the last record of a result file back (FORMAT.md, "mbsim-run/1"), so that
 * a run can continue from it (mbsim-run --restart).
 *
 * The datasets of a file written by a killed run may hold different numbers of rows (each
 * series is written in its own blocks); the record taken is the last row that every
 * dataset read here has, so all values belong to the same time. */
#include "mbsim/output.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FORMAT_NAME "mbsim-run/1"
#define H5_REASON_MAX 256

/* innermost (most specific) message on HDF5's error stack */
static herr_t walk_first(unsigned n, const H5E_error2_t *e, void *data) {
  char *reason = data;
  if (n == 0 && e->desc && e->desc[0]) {
    snprintf(reason, H5_REASON_MAX, "%s", e->desc);
  }
  return 0;
}

static mbsStatus read_fail(mbsError *err, const char *path, const char *what) {
  char reason[H5_REASON_MAX];
  snprintf(reason, sizeof(reason), "no details from HDF5");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_first, reason);
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "result file '%s': cannot read %s (%s)",
                       path, what, reason);
}

static char *copy_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) {
    memcpy(c, s, n);
  }
  return c;
}

/* a string attribute (variable or fixed length) of loc as a malloc'd copy; NULL on failure
 * (*nomem set when memory ran out) */
static char *read_string_attr(hid_t loc, const char *name, int *nomem) {
  char *out = NULL;
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  hid_t ftype = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  hid_t mtype = H5I_INVALID_HID;
  if (ftype < 0 || H5Tget_class(ftype) != H5T_STRING) {
    goto done;
  }
  /* HDF5 converts no strings between character sets: read in the file's own */
  mtype = H5Tcopy(H5T_C_S1);
  if (mtype < 0 || H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0) {
    goto done;
  }
  if (H5Tis_variable_str(ftype) > 0) {
    char *v = NULL;
    if (H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Aread(attr, mtype, &v) < 0) {
      goto done;
    }
    out = copy_string(v ? v : "");
    *nomem = !out;
    H5free_memory(v);
  } else {
    size_t n = H5Tget_size(ftype);
    out = calloc(n + 1, 1);
    if (!out) {
      *nomem = 1;
      goto done;
    }
    if (H5Tset_size(mtype, n + 1) < 0 || H5Aread(attr, mtype, out) < 0) {
      free(out);
      out = NULL;
    }
  }

done:
  if (mtype >= 0) {
    H5Tclose(mtype);
  }
  if (ftype >= 0) {
    H5Tclose(ftype);
  }
  if (attr >= 0) {
    H5Aclose(attr);
  }
  return out;
}

/* a numeric scalar attribute of loc converted to mem_type; < 0 on failure */
static herr_t read_num_attr(hid_t loc, const char *name, hid_t mem_type, void *value) {
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  if (attr < 0) {
    return -1;
  }
  herr_t rc = H5Aread(attr, mem_type, value);
  H5Aclose(attr);
  return rc;
}

/* rank (<= 4) and dims of the dataset at path; < 0 when missing or unreadable */
static int dataset_dims(hid_t file, const char *path, hsize_t dims[4]) {
  if (H5Lexists(file, path, H5P_DEFAULT) <= 0) {
    return -1;
  }
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) {
    return -1;
  }
  hid_t s = H5Dget_space(d);
  int rank = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
  if (rank < 1 || rank > 4 || H5Sget_simple_extent_dims(s, dims, NULL) < 0) {
    rank = -1;
  }
  if (s >= 0) {
    H5Sclose(s);
  }
  H5Dclose(d);
  return rank;
}

/* row `row` of the time-major dataset at path into out (all elements after the time
 * dimension, converted to mem_type); < 0 on failure */
static herr_t read_row(hid_t file, const char *path, hsize_t row, hid_t mem_type, void *out) {
  herr_t rc = -1;
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  hid_t fspace = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
  hid_t mspace = H5I_INVALID_HID;
  hsize_t dims[4], start[4] = {row, 0, 0, 0}, count[4];
  int rank = fspace >= 0 ? H5Sget_simple_extent_ndims(fspace) : -1;
  if (rank < 1 || rank > 4 || H5Sget_simple_extent_dims(fspace, dims, NULL) < 0 || row >= dims[0]) {
    goto done;
  }
  hsize_t nelem = 1;
  for (int i = 0; i < rank; i++) {
    count[i] = i == 0 ? 1 : dims[i];
    nelem *= count[i];
  }
  if (nelem == 0) {
    rc = 0;
    goto done;
  }
  mspace = H5Screate_simple(1, &nelem, NULL);
  if (mspace < 0 || H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
      H5Dread(d, mem_type, mspace, fspace, H5P_DEFAULT, out) < 0) {
    goto done;
  }
  rc = 0;

done:
  if (mspace >= 0) {
    H5Sclose(mspace);
  }
  if (fspace >= 0) {
    H5Sclose(fspace);
  }
  if (d >= 0) {
    H5Dclose(d);
  }
  return rc;
}

/* the n labels of attribute `names` of /state/q as malloc'd copies */
static mbsStatus read_names(hid_t file, const char *path, int n, char ***out, mbsError *err) {
  mbsStatus st = MBS_OK;
  char **vl = NULL;
  hid_t d = H5Dopen2(file, "/state/q", H5P_DEFAULT);
  hid_t attr = d >= 0 ? H5Aopen(d, "names", H5P_DEFAULT) : H5I_INVALID_HID;
  hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  hid_t ftype = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  hid_t mtype = H5Tcopy(H5T_C_S1);
  hssize_t npts = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  if (attr < 0 || space < 0 || ftype < 0 || mtype < 0 || H5Tis_variable_str(ftype) <= 0 ||
      H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0) {
    st = read_fail(err, path, "attribute 'names' of /state/q");
    goto done;
  }
  if (npts != n) {
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                       "result file '%s': /state/q has %lld coordinate names for %d coordinates",
                       path, (long long)npts, n);
    goto done;
  }
  *out = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  vl = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  if (!*out || !vl) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory reading '%s'", path);
    goto done;
  }
  if (n > 0 && H5Aread(attr, mtype, vl) < 0) {
    st = read_fail(err, path, "attribute 'names' of /state/q");
    goto done;
  }
  for (int i = 0; i < n; i++) {
    (*out)[i] = copy_string(vl[i] ? vl[i] : "");
    if (!(*out)[i]) {
      st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory reading '%s'", path);
      break;
    }
  }
  for (int i = 0; i < n; i++) {
    H5free_memory(vl[i]);
  }

done:
  free(vl);
  if (mtype >= 0) {
    H5Tclose(mtype);
  }
  if (ftype >= 0) {
    H5Tclose(ftype);
  }
  if (space >= 0) {
    H5Sclose(space);
  }
  if (attr >= 0) {
    H5Aclose(attr);
  }
  if (d >= 0) {
    H5Dclose(d);
  }
  return st;
}

mbsStatus mbs_output_read_last(const char *path, mbsLastRecord *rec, mbsError *err) {
  mbsStatus st = MBS_OK;
  hid_t file = H5I_INVALID_HID;
  char *format = NULL;
  int nomem = 0;

  if (!rec) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no record to read into");
  }
  memset(rec, 0, sizeof(*rec));
  if (!path || !path[0]) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no result file given");
  }
  if (access(path, R_OK) != 0) {
    return mbs_error_set(err, MBS_ERR_IO, NULL, 0, 0, "result file '%s': %s", path,
                         strerror(errno));
  }

  /* the library never prints: HDF5's automatic error stack printing goes off */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    char reason[H5_REASON_MAX];
    snprintf(reason, sizeof(reason), "no details from HDF5");
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_first, reason);
    st = mbs_error_set(err, MBS_ERR_IO, NULL, 0, 0,
                       "result file '%s': cannot open it as HDF5 (%s; is it still being "
                       "written?)",
                       path, reason);
    goto fail;
  }

  /* root attributes: the format first, so that a foreign file gets a clear message */
  format = read_string_attr(file, "format", &nomem);
  if (!format || strcmp(format, FORMAT_NAME) != 0) {
    st = nomem ? mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory reading '%s'", path)
               : mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                               "result file '%s': not an mbsim-run result (root attribute "
                               "'format' is %s%s%s, expected '%s')",
                               path, format ? "'" : "missing", format ? format : "",
                               format ? "'" : "", FORMAT_NAME);
    goto fail;
  }
  rec->status = read_string_attr(file, "status", &nomem);
  if (!rec->status) {
    st = nomem ? mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory reading '%s'", path)
               : read_fail(err, path, "root attribute 'status'");
    goto fail;
  }
  if (read_num_attr(file, "dt", H5T_NATIVE_DOUBLE, &rec->dt) < 0) {
    st = read_fail(err, path, "root attribute 'dt'");
    goto fail;
  }
  if (read_num_attr(file, "n_coordinates", H5T_NATIVE_INT, &rec->n_coordinates) < 0 ||
      read_num_attr(file, "n_constraints", H5T_NATIVE_INT, &rec->n_constraints) < 0 ||
      rec->n_coordinates < 0 || rec->n_constraints < 0) {
    st = read_fail(err, path, "root attributes 'n_coordinates' and 'n_constraints'");
    goto fail;
  }
  int nq = rec->n_coordinates, nc = rec->n_constraints;

  /* the datasets read, their row widths, and the last row they all have */
  hsize_t dims[4];
  if (dataset_dims(file, "/joints/names", dims) != 1) {
    st = read_fail(err, path, "dataset /joints/names");
    goto fail;
  }
  rec->njoint = (int)dims[0];
  int has_mu = dataset_dims(file, "/state/multipliers", dims) == 2;
  int has_dt = dataset_dims(file, "/solver/step_size", dims) == 1;
  int has_sv = dataset_dims(file, "/state/scheme_velocity", dims) == 2;
  int has_jc = dataset_dims(file, "/joints/coordinates", dims) == 3;
  int has_acc = dataset_dims(file, "/state/acceleration", dims) == 2 &&
                dataset_dims(file, "/state/algorithmic_acceleration", dims) == 2;
  struct {
    const char *path;
    hsize_t width; /* elements after the time dimension */
    int needed;
  } sets[] = {
      {"/time", 1, 1},
      {"/energy/external_work", 1, 1},
      {"/energy/dissipated", 1, 1},
      {"/solver/iterations", 1, 1},
      {"/state/q", (hsize_t)nq, 1},
      {"/state/v", (hsize_t)nq, 1},
      {"/state/scheme_velocity", (hsize_t)nq, has_sv},
      {"/joints/coordinates", 3 * (hsize_t)rec->njoint, has_jc && rec->njoint > 0},
      {"/state/multipliers", (hsize_t)nc, has_mu},
      {"/joints/reaction", 6 * (hsize_t)rec->njoint, 1},
      {"/solver/step_size", 1, has_dt},
      {"/state/acceleration", (hsize_t)nq, has_acc},
      {"/state/algorithmic_acceleration", (hsize_t)nq, has_acc},
  };
  hsize_t nrow = 0;
  for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
    if (!sets[i].needed) {
      continue;
    }
    int rank = dataset_dims(file, sets[i].path, dims);
    if (rank < 0) {
      st = read_fail(err, path, sets[i].path);
      goto fail;
    }
    hsize_t width = 1;
    for (int k = 1; k < rank; k++) {
      width *= dims[k];
    }
    if (width != sets[i].width) {
      st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "result file '%s': dataset %s has %llu values per record, expected %llu",
                         path, sets[i].path, (unsigned long long)width,
                         (unsigned long long)sets[i].width);
      goto fail;
    }
    nrow = i == 0 || dims[0] < nrow ? dims[0] : nrow;
  }
  if (nrow == 0) {
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "result file '%s' holds no record", path);
    goto fail;
  }
  rec->nrecord = (long)nrow;

  /* the values of the last record */
  size_t nqa = (size_t)(nq > 0 ? nq : 1), nca = (size_t)(nc > 0 ? nc : 1);
  rec->q = malloc(nqa * sizeof(double));
  rec->v = malloc(nqa * sizeof(double));
  rec->multipliers = has_mu ? malloc(nca * sizeof(double)) : NULL;
  rec->scheme_velocity = has_sv ? malloc(nqa * sizeof(double)) : NULL;
  has_jc = has_jc && rec->njoint > 0;
  rec->joint_coordinates = has_jc ? malloc((size_t)rec->njoint * 3 * sizeof(double)) : NULL;
  rec->joint_reaction = rec->njoint > 0 ? malloc((size_t)rec->njoint * 6 * sizeof(double)) : NULL;
  rec->acceleration = has_acc ? malloc(nqa * sizeof(double)) : NULL;
  rec->algorithmic_acceleration = has_acc ? malloc(nqa * sizeof(double)) : NULL;
  if (!rec->q || !rec->v || (has_mu && !rec->multipliers) || (has_sv && !rec->scheme_velocity) ||
      (has_jc && !rec->joint_coordinates) ||
      (rec->njoint > 0 && !rec->joint_reaction) ||
      (has_acc && (!rec->acceleration || !rec->algorithmic_acceleration))) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory reading '%s'", path);
    goto fail;
  }
  hsize_t last = nrow - 1;
  struct {
    const char *path;
    hid_t type;
    void *out;
  } rows[] = {
      {"/time", H5T_NATIVE_DOUBLE, &rec->time},
      {"/energy/external_work", H5T_NATIVE_DOUBLE, &rec->external_work},
      {"/energy/dissipated", H5T_NATIVE_DOUBLE, &rec->dissipated},
      {"/solver/iterations", H5T_NATIVE_INT, &rec->iterations},
      {"/state/q", H5T_NATIVE_DOUBLE, rec->q},
      {"/state/v", H5T_NATIVE_DOUBLE, rec->v},
      {"/state/scheme_velocity", H5T_NATIVE_DOUBLE, rec->scheme_velocity},
      {"/joints/coordinates", H5T_NATIVE_DOUBLE, rec->joint_coordinates},
      {"/state/multipliers", H5T_NATIVE_DOUBLE, rec->multipliers},
      {"/joints/reaction", H5T_NATIVE_DOUBLE, rec->joint_reaction},
      {"/solver/step_size", H5T_NATIVE_DOUBLE, has_dt ? &rec->step_size : NULL},
      {"/state/acceleration", H5T_NATIVE_DOUBLE, rec->acceleration},
      {"/state/algorithmic_acceleration", H5T_NATIVE_DOUBLE, rec->algorithmic_acceleration},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    if (rows[i].out && read_row(file, rows[i].path, last, rows[i].type, rows[i].out) < 0) {
      st = read_fail(err, path, rows[i].path);
      goto fail;
    }
  }

  /* multipliers or accelerations written as NaN (a writer that was not given them) are
   * none */
  for (int i = 0; rec->multipliers && i < nc; i++) {
    if (isnan(rec->multipliers[i])) {
      free(rec->multipliers);
      rec->multipliers = NULL;
    }
  }
  for (int i = 0; rec->scheme_velocity && i < nq; i++) {
    if (isnan(rec->scheme_velocity[i])) {
      free(rec->scheme_velocity);
      rec->scheme_velocity = NULL;
    }
  }
  for (int i = 0; rec->acceleration && i < nq; i++) {
    if (isnan(rec->acceleration[i]) || isnan(rec->algorithmic_acceleration[i])) {
      free(rec->acceleration);
      free(rec->algorithmic_acceleration);
      rec->acceleration = rec->algorithmic_acceleration = NULL;
    }
  }

  st = read_names(file, path, nq, &rec->coordinate_names, err);
  if (st != MBS_OK) {
    goto fail;
  }
  free(format);
  format = NULL;
  if (H5Fclose(file) < 0) {
    file = H5I_INVALID_HID;
    st = read_fail(err, path, "(closing) the file");
    goto fail;
  }
  return MBS_OK;

fail:
  free(format);
  if (file >= 0) {
    H5Fclose(file);
  }
  mbs_output_last_free(rec);
  return st;
}

void mbs_output_last_free(mbsLastRecord *rec) {
  if (!rec) {
    return;
  }
  if (rec->coordinate_names) {
    for (int i = 0; i < rec->n_coordinates; i++) {
      free(rec->coordinate_names[i]);
    }
  }
  free(rec->coordinate_names);
  free(rec->status);
  free(rec->q);
  free(rec->v);
  free(rec->multipliers);
  free(rec->scheme_velocity);
  free(rec->joint_coordinates);
  free(rec->joint_reaction);
  free(rec->acceleration);
  free(rec->algorithmic_acceleration);
  memset(rec, 0, sizeof(*rec));
}
