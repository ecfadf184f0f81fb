/* reader.c: read the last record of a result file (format "mbsim-run/1", docs/output.md)
 * back, so that a run can continue from it (mbsim-run --restart), and look at a file at an
 * output path before it is replaced.
 *
 * The datasets of a file written by a killed run may hold different numbers of rows (each
 * series is written in its own blocks); the record taken is the last row that every
 * dataset read here has, so all values belong to the same time.
 *
 * A file handed to --restart is untrusted input like a deck. Every attribute and dataset is
 * checked for its class, rank, shape and size before anything is read from it; nothing is
 * allocated for a size the caller did not expect; only hard links, datasets stored in the
 * file itself and the filters the writer uses are followed (an external link or an
 * external or virtual dataset would make HDF5 open whatever file it names); and the record
 * must hold the finite numbers the writer writes. HDF5 itself is not hardened against
 * damaged files, so mbs_output_read_last_isolated and mbs_output_inspect do all of this in
 * a child process with a time and memory limit (isolate.h) and the caller never opens the
 * file. */
#include "mbsim/output.h"

#include <errno.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/isolate.h"

#define FORMAT_NAME "mbsim-run/1"
#define H5_REASON_MAX 256
/* bytes of a string attribute (format, status) and of one coordinate name */
#define STRING_MAX 65536
#define NAME_BYTES_MAX 255
/* largest n_coordinates, n_constraints and joint count read without expected sizes */
#define SIZE_MAX_ANY (1 << 24)
#define DETAIL_MAX 512

/* innermost (most specific) message on HDF5's error stack */
static herr_t walk_first(unsigned n, const H5E_error2_t *e, void *data) {
  char *reason = data;
  if (n == 0 && e->desc && e->desc[0]) {
    snprintf(reason, H5_REASON_MAX, "%s", e->desc);
  }
  return 0;
}

static void h5_reason(char *reason) {
  snprintf(reason, H5_REASON_MAX, "no details from HDF5");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_first, reason);
}

/* the detail of a failure, formatted into why (DETAIL_MAX bytes) */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
say(char *why, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, DETAIL_MAX, fmt, ap);
  va_end(ap);
  return -1;
}

static mbsStatus not_result(mbsError *err, const char *path, const char *why) {
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                       "result file '%s' is not an mbsim-run result: %s", path, why);
}

static mbsStatus nomem(mbsError *err, const char *path) {
  return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory reading '%s'", path);
}

static char *copy_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) {
    memcpy(c, s, n);
  }
  return c;
}

/* ---------- what an object must be before it is read ---------- */

typedef enum { KIND_FLOAT, KIND_INT, KIND_STRING } valueKind;

static const char *kind_word(valueKind k) {
  return k == KIND_FLOAT ? "a floating-point number" : k == KIND_INT ? "an integer" : "a string";
}

/* 1 when the file type is of kind as the writer writes it: IEEE floats of 32 or 64 bits,
 * integers of at most 64 bits, strings */
static int type_is(hid_t ftype, valueKind kind) {
  H5T_class_t c = H5Tget_class(ftype);
  size_t size = H5Tget_size(ftype);
  switch (kind) {
    case KIND_FLOAT:
      return c == H5T_FLOAT &&
             (H5Tequal(ftype, H5T_IEEE_F64LE) > 0 || H5Tequal(ftype, H5T_IEEE_F64BE) > 0 ||
              H5Tequal(ftype, H5T_IEEE_F32LE) > 0 || H5Tequal(ftype, H5T_IEEE_F32BE) > 0);
    case KIND_INT:
      return c == H5T_INTEGER && size >= 1 && size <= 8;
    case KIND_STRING:
      return c == H5T_STRING;
  }
  return 0;
}

/* 1 when the dataspace holds exactly one element (a scalar or one element of rank 1) */
static int one_element(hid_t space, hssize_t *npts) {
  H5S_class_t c = H5Sget_simple_extent_type(space);
  *npts = H5Sget_simple_extent_npoints(space);
  if (c == H5S_SCALAR) {
    return *npts == 1;
  }
  return c == H5S_SIMPLE && H5Sget_simple_extent_ndims(space) == 1 && *npts == 1;
}

/* the rank of the dataset at path (-1 when it cannot be opened), and its dims (2 of them)
 * when it is 2: the row length read before the full checks of dset_open_checked */
static int dims_of_2d(hid_t file, const char *path, hsize_t dims[2]) {
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  hid_t space = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
  int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank == 2) {
    H5Sget_simple_extent_dims(space, dims, NULL);
  }
  if (space >= 0) {
    H5Sclose(space);
  }
  if (d >= 0) {
    H5Dclose(d);
  }
  return rank;
}

/* 1 when the object at path exists as a hard link, walking the path component by component
 * (H5Lexists fails on a missing group); 0 when missing; -1 (why filled) when a component
 * is a soft or external link or cannot be looked at */
static int hard_link_exists(hid_t file, const char *path, char *why) {
  char part[256];
  size_t n = strlen(path);
  if (n >= sizeof(part)) {
    return say(why, "path %s too long", path);
  }
  for (size_t i = 1; i <= n; i++) {
    if (i < n && path[i] != '/') {
      continue;
    }
    memcpy(part, path, i);
    part[i] = '\0';
    htri_t e = H5Lexists(file, part, H5P_DEFAULT);
    if (e < 0) {
      return say(why, "%s cannot be looked up", part);
    }
    if (e == 0) {
      return 0;
    }
    H5L_info_t li;
    if (H5Lget_info(file, part, &li, H5P_DEFAULT) < 0) {
      return say(why, "%s cannot be looked up", part);
    }
    if (li.type != H5L_TYPE_HARD) {
      return say(why, "%s is %s link (a result holds only its own objects)", part,
                 li.type == H5L_TYPE_SOFT ? "a soft" : "an external");
    }
  }
  return 1;
}

/* open attribute name of loc, which must hold one value of kind (ftype: its file type);
 * < 0 with why filled otherwise */
static hid_t attr_open_one(hid_t loc, const char *where, const char *name, valueKind kind,
                           hid_t *ftype, char *why) {
  *ftype = H5I_INVALID_HID;
  htri_t e = H5Aexists(loc, name);
  if (e <= 0) {
    say(why, "%sattribute '%s' is %s", where, name, e == 0 ? "missing" : "unreadable");
    return H5I_INVALID_HID;
  }
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  *ftype = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  hssize_t npts = -1;
  int ok = space >= 0 && *ftype >= 0;
  if (!ok) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    say(why, "%sattribute '%s' does not open (%s)", where, name, reason);
  } else if (!type_is(*ftype, kind)) {
    ok = 0;
    say(why, "%sattribute '%s' is not %s", where, name, kind_word(kind));
  } else if (!one_element(space, &npts)) {
    ok = 0;
    say(why, "%sattribute '%s' holds %lld values, expected one", where, name, (long long)npts);
  }
  if (space >= 0) {
    H5Sclose(space);
  }
  if (!ok) {
    if (*ftype >= 0) {
      H5Tclose(*ftype);
      *ftype = H5I_INVALID_HID;
    }
    if (attr >= 0) {
      H5Aclose(attr);
    }
    return H5I_INVALID_HID;
  }
  return attr;
}

/* a string attribute (variable or fixed length, at most STRING_MAX bytes) of loc as a
 * malloc'd copy; 0, -1 (why filled) or -2 (out of memory) */
static int read_string_attr(hid_t loc, const char *where, const char *name, char **out, char *why) {
  int rc = -1;
  hid_t ftype;
  hid_t attr = attr_open_one(loc, where, name, KIND_STRING, &ftype, why);
  hid_t mtype = H5I_INVALID_HID;
  *out = NULL;
  if (attr < 0) {
    return -1;
  }
  /* HDF5 converts no strings between character sets: read in the file's own */
  H5T_cset_t cset = H5Tget_cset(ftype);
  htri_t var = H5Tis_variable_str(ftype);
  mtype = H5Tcopy(H5T_C_S1);
  if ((cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8) || var < 0 || mtype < 0 ||
      H5Tset_cset(mtype, cset) < 0) {
    say(why, "%sattribute '%s' is not an ASCII or UTF-8 string", where, name);
    goto done;
  }
  if (var > 0) {
    char *v = NULL;
    if (H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Aread(attr, mtype, &v) < 0) {
      char reason[H5_REASON_MAX];
      h5_reason(reason);
      say(why, "%sattribute '%s' cannot be read (%s)", where, name, reason);
      goto done;
    }
    if (v && strnlen(v, STRING_MAX + 1) > STRING_MAX) {
      say(why, "%sattribute '%s' is longer than %d bytes", where, name, STRING_MAX);
    } else {
      *out = copy_string(v ? v : "");
      rc = *out ? 0 : -2;
    }
    H5free_memory(v);
  } else {
    size_t n = H5Tget_size(ftype);
    if (n == 0 || n > STRING_MAX) {
      say(why, "%sattribute '%s' is a string of %zu bytes, more than %d", where, name, n,
          STRING_MAX);
      goto done;
    }
    *out = calloc(n + 1, 1);
    if (!*out) {
      rc = -2;
      goto done;
    }
    if (H5Tset_size(mtype, n + 1) < 0 || H5Aread(attr, mtype, *out) < 0) {
      char reason[H5_REASON_MAX];
      h5_reason(reason);
      say(why, "%sattribute '%s' cannot be read (%s)", where, name, reason);
      free(*out);
      *out = NULL;
      goto done;
    }
    (*out)[n] = '\0';
    rc = 0;
  }

done:
  if (mtype >= 0) {
    H5Tclose(mtype);
  }
  H5Tclose(ftype);
  H5Aclose(attr);
  return rc;
}

/* one number of kind from attribute name of loc, converted to mem_type; 0 or -1 (why) */
static int read_num_attr(hid_t loc, const char *name, valueKind kind, hid_t mem_type, void *value,
                         char *why) {
  hid_t ftype;
  hid_t attr = attr_open_one(loc, "root ", name, kind, &ftype, why);
  if (attr < 0) {
    return -1;
  }
  int rc = 0;
  if (H5Aread(attr, mem_type, value) < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    rc = say(why, "root attribute '%s' cannot be read (%s)", name, reason);
  }
  H5Tclose(ftype);
  H5Aclose(attr);
  return rc;
}

/* Open the dataset at path, which must be a hard link to values of kind stored in the file
 * (no external or virtual storage, only the writer's filters) of the given rank whose
 * dimensions after the first are shape[1..]; dims into dims. *absent is set (and < 0
 * returned without a message) when the dataset does not exist; otherwise < 0 means why
 * was filled. */
static hid_t dset_open_checked(hid_t file, const char *path, valueKind kind, int rank,
                               const hsize_t *shape, hsize_t dims[4], int *absent, char *why) {
  hid_t d = H5I_INVALID_HID, space = H5I_INVALID_HID, type = H5I_INVALID_HID;
  hid_t dcpl = H5I_INVALID_HID;
  int ok = 0;
  *absent = 0;
  int e = hard_link_exists(file, path, why);
  if (e <= 0) {
    *absent = e == 0;
    return H5I_INVALID_HID;
  }
  d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    say(why, "dataset %s does not open (%s)", path, reason);
    goto done;
  }
  space = H5Dget_space(d);
  type = H5Dget_type(d);
  dcpl = H5Dget_create_plist(d);
  if (space < 0 || type < 0 || dcpl < 0) {
    say(why, "dataset %s cannot be inspected", path);
    goto done;
  }
  if (!type_is(type, kind)) {
    say(why, "dataset %s does not hold %ss", path,
        kind == KIND_FLOAT ? "floating-point number"
        : kind == KIND_INT ? "integer"
                           : "string");
    goto done;
  }
  if (H5Sget_simple_extent_type(space) != H5S_SIMPLE || H5Sget_simple_extent_ndims(space) != rank ||
      rank < 1 || rank > 4 || H5Sget_simple_extent_dims(space, dims, NULL) != rank) {
    say(why, "dataset %s is not of rank %d", path, rank);
    goto done;
  }
  for (int k = 1; k < rank; k++) {
    if (dims[k] != shape[k]) {
      say(why, "dataset %s has %llu values in dimension %d, expected %llu", path,
          (unsigned long long)dims[k], k + 1, (unsigned long long)shape[k]);
      goto done;
    }
  }
  H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT) {
    say(why, "dataset %s is stored outside the file (a virtual dataset)", path);
    goto done;
  }
  if (H5Pget_external_count(dcpl) != 0) {
    say(why, "dataset %s is stored in external files", path);
    goto done;
  }
  int nfilter = H5Pget_nfilters(dcpl);
  if (nfilter < 0 || nfilter > 8) {
    say(why, "dataset %s has a damaged filter pipeline", path);
    goto done;
  }
  for (int i = 0; i < nfilter; i++) {
    unsigned flags = 0, fconf = 0;
    size_t ncd = 0;
    H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, NULL, 0, NULL, &fconf);
    if (f != H5Z_FILTER_DEFLATE && f != H5Z_FILTER_SHUFFLE && f != H5Z_FILTER_FLETCHER32) {
      say(why, "dataset %s uses filter %d, which a result never uses", path, (int)f);
      goto done;
    }
  }
  ok = 1;

done:
  if (dcpl >= 0) {
    H5Pclose(dcpl);
  }
  if (type >= 0) {
    H5Tclose(type);
  }
  if (space >= 0) {
    H5Sclose(space);
  }
  if (!ok && d >= 0) {
    H5Dclose(d);
    d = H5I_INVALID_HID;
  }
  return d;
}

/* row `row` of the checked, time-major dataset d (rank, dims) into out (all elements after
 * the time dimension, converted to mem_type); 0 or -1 (why) */
static int read_row(hid_t d, const char *path, int rank, const hsize_t *dims, hsize_t row,
                    hid_t mem_type, void *out, char *why) {
  int rc = -1;
  hid_t fspace = H5Dget_space(d);
  hid_t mspace = H5I_INVALID_HID;
  hsize_t start[4] = {row, 0, 0, 0}, count[4];
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
  if (fspace < 0 || mspace < 0 ||
      H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
      H5Dread(d, mem_type, mspace, fspace, H5P_DEFAULT, out) < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    say(why, "dataset %s cannot be read (%s)", path, reason);
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
  return rc;
}

/* the n variable-length strings vl (at most NAME_BYTES_MAX bytes each) as malloc'd copies
 * into out; 0, -1 (why) or -2; vl's strings are released */
static int copy_names(char **vl, int n, char **out, char *why) {
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    const char *s = vl[i] ? vl[i] : "";
    if (strnlen(s, NAME_BYTES_MAX + 1) > NAME_BYTES_MAX) {
      rc = say(why, "coordinate name %d is longer than %d bytes", i + 1, NAME_BYTES_MAX);
    } else if (!(out[i] = copy_string(s))) {
      rc = -2;
    }
  }
  for (int i = 0; i < n; i++) {
    H5free_memory(vl[i]);
  }
  return rc;
}

/* the n variable-length strings of the attribute (attr = 1) or dataset obj of file type ftype
 * into out, through copy_names; what names it in messages */
static int read_vlen_names(hid_t obj, int attr, hid_t ftype, int n, char **out, const char *what,
                           char *why) {
  int rc = -1;
  char **vl = calloc((size_t)n, sizeof(char *));
  hid_t mtype = H5Tcopy(H5T_C_S1);
  if (!vl) {
    rc = -2;
    goto done;
  }
  if (mtype < 0 || H5Tset_size(mtype, H5T_VARIABLE) < 0 ||
      H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0 ||
      (attr ? H5Aread(obj, mtype, vl) : H5Dread(obj, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, vl)) <
          0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    say(why, "%s cannot be read (%s)", what, reason);
    goto done;
  }
  rc = copy_names(vl, n, out, why);
done:
  free(vl);
  if (mtype >= 0) {
    H5Tclose(mtype);
  }
  return rc;
}

/* the n coordinate names from the dataset /state/names (written for any model size); 1 when
 * the file has none (older files: the attribute below), else as read_names */
static int read_names_dataset(hid_t file, int n, char **out, char *why) {
  hsize_t shape[4] = {(hsize_t)n, 0, 0, 0}, dims[4];
  int absent = 0, rc = -1;
  hid_t d = dset_open_checked(file, "/state/names", KIND_STRING, 1, shape, dims, &absent, why);
  if (d < 0) {
    return absent ? 1 : -1;
  }
  hid_t ftype = H5Dget_type(d);
  if (dims[0] != (hsize_t)n) {
    say(why, "dataset /state/names holds %lld names for %d coordinates", (long long)dims[0], n);
    goto done;
  }
  if (ftype < 0 || H5Tis_variable_str(ftype) <= 0) {
    say(why, "dataset /state/names is not a list of variable-length strings");
    goto done;
  }
  rc = n == 0 ? 0 : read_vlen_names(d, 0, ftype, n, out, "dataset /state/names", why);

done:
  if (ftype >= 0) {
    H5Tclose(ftype);
  }
  H5Dclose(d);
  return rc;
}

/* the n labels of attribute `names` of /state/q (variable-length strings of at most
 * NAME_BYTES_MAX bytes) as malloc'd copies into out (n entries, zeroed); 0, -1 (why) or -2.
 * Files that have the dataset /state/names are read from it. */
static int read_names(hid_t file, int n, char **out, char *why) {
  int rc = read_names_dataset(file, n, out, why);
  if (rc != 1) {
    return rc;
  }
  rc = -1;
  hid_t d = H5Dopen2(file, "/state/q", H5P_DEFAULT);
  htri_t e = d >= 0 ? H5Aexists(d, "names") : -1;
  hid_t attr = e > 0 ? H5Aopen(d, "names", H5P_DEFAULT) : H5I_INVALID_HID;
  hid_t space = attr >= 0 ? H5Aget_space(attr) : H5I_INVALID_HID;
  hid_t ftype = attr >= 0 ? H5Aget_type(attr) : H5I_INVALID_HID;
  if (e == 0) {
    say(why, "attribute 'names' of /state/q is missing");
    goto done;
  }
  if (attr < 0 || space < 0 || ftype < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    say(why, "attribute 'names' of /state/q does not open (%s)", reason);
    goto done;
  }
  H5T_cset_t cset = H5Tget_cset(ftype);
  if (H5Tget_class(ftype) != H5T_STRING || H5Tis_variable_str(ftype) <= 0 ||
      (cset != H5T_CSET_ASCII && cset != H5T_CSET_UTF8)) {
    say(why, "attribute 'names' of /state/q is not a list of variable-length strings");
    goto done;
  }
  hssize_t npts = H5Sget_simple_extent_npoints(space);
  if (H5Sget_simple_extent_type(space) != H5S_SIMPLE || H5Sget_simple_extent_ndims(space) != 1 ||
      npts != n) {
    say(why, "attribute 'names' of /state/q holds %lld names for %d coordinates", (long long)npts,
        n);
    goto done;
  }
  rc = n == 0 ? 0 : read_vlen_names(attr, 1, ftype, n, out, "attribute 'names' of /state/q", why);

done:
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
  return rc;
}

/* the first non-finite value of x (n), or -1 */
static long first_nonfinite(const double *x, long n) {
  for (long i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      return i;
    }
  }
  return -1;
}

/* NaN in every entry: a series the writer was not given (multipliers, accelerations) */
static int all_nan(const double *x, long n) {
  for (long i = 0; i < n; i++) {
    if (!isnan(x[i])) {
      return 0;
    }
  }
  return 1;
}

/* a file the caller may read: a readable regular file (a FIFO would block the open) */
static mbsStatus check_path(const char *path, mbsError *err) {
  struct stat st;
  if (!path || !path[0]) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no result file given");
  }
  if (stat(path, &st) != 0 || access(path, R_OK) != 0) {
    return mbs_error_set(err, MBS_ERR_IO, NULL, 0, 0, "result file '%s': %s", path,
                         strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return mbs_error_set(err, MBS_ERR_IO, NULL, 0, 0,
                         "result file '%s' is not a regular file (a %s), so it is not an "
                         "mbsim-run result and is not opened",
                         path,
                         S_ISDIR(st.st_mode)    ? "directory"
                         : S_ISFIFO(st.st_mode) ? "FIFO"
                         : S_ISSOCK(st.st_mode) ? "socket"
                                                : "device");
  }
  return MBS_OK;
}

/* the datasets read, in the order of their pointers in read_last */
enum {
  D_TIME,
  D_EXTERNAL_WORK,
  D_DISSIPATED,
  D_ITERATIONS,
  D_Q,
  D_V,
  D_MULTIPLIERS,
  D_REACTION,
  D_STEP_SIZE,
  D_ACCELERATION,
  D_ALG_ACCELERATION,
  D_SCHEME_VELOCITY,
  D_JOINT_COORDINATES,
  D_CONTACT_DISSIPATED,
  D_IMPACT_DISSIPATED,
  D_FRICTION_DISSIPATED,
  D_NUMERICAL_DISSIPATION,
  D_JOINT_DRIVE,
  D_CAPTURE_DISSIPATED,
  D_COUNT
};

/* the reading itself, in this process; sizes NULL: any sizes up to SIZE_MAX_ANY */
/* names of the members of /state besides q, v and names (H5Literate callback) */
typedef struct {
  char names[MBS_LAST_STATE_MAX][NAME_BYTES_MAX + 1];
  int n;
  int too_many, too_long;
} stateNames;

static herr_t collect_state(hid_t g, const char *name, const H5L_info_t *info, void *data) {
  (void)g;
  (void)info;
  stateNames *sn = data;
  if (strcmp(name, "q") == 0 || strcmp(name, "v") == 0 || strcmp(name, "names") == 0 ||
      strcmp(name, "history_repeats") == 0) {
    return 0;
  }
  if (strlen(name) > NAME_BYTES_MAX) {
    sn->too_long = 1;
    return 1;
  }
  if (sn->n == MBS_LAST_STATE_MAX) {
    sn->too_many = 1;
    return 1;
  }
  snprintf(sn->names[sn->n++], NAME_BYTES_MAX + 1, "%s", name);
  return 0;
}

#define RAGGED_COLS_MAX 64 /* columns of a ragged /state table (moreau's contacts: 21) */

/* record `last` of the ragged table <path>/{count,offsets,table} (an integrator's table of
 * varying rows, such as /state/contacts) into a: its rows, row-major (length = rows x
 * columns; data never NULL, so that an empty table is present); every value finite. 0, -1
 * (why) or -2 (no memory) */
static int read_ragged_last(hid_t file, const char *path, hsize_t last, mbsLastArray *a,
                            char *why) {
  char sub[NAME_BYTES_MAX + 32];
  hsize_t dims[4] = {0}, shape[4] = {0};
  long long at[2] = {0, 0}; /* count, offset of the record */
  int absent = 0;
  static const char *const parts[2] = {"count", "offsets"};
  for (int k = 0; k < 2; k++) {
    snprintf(sub, sizeof(sub), "%s/%s", path, parts[k]);
    hid_t d = dset_open_checked(file, sub, KIND_INT, 1, shape, dims, &absent, why);
    if (d < 0) {
      return absent ? say(why, "dataset %s is missing", sub) : -1;
    }
    int bad = dims[0] <= last ? say(why, "dataset %s has fewer records than the others", sub)
                              : read_row(d, sub, 1, dims, last, H5T_NATIVE_LLONG, &at[k], why);
    H5Dclose(d);
    if (bad < 0) {
      return -1;
    }
  }
  /* the table's row length first (as for the series), then the checks */
  snprintf(sub, sizeof(sub), "%s/table", path);
  int e = hard_link_exists(file, sub, why);
  if (e <= 0) {
    return e < 0 ? -1 : say(why, "dataset %s is missing", sub);
  }
  int rank = dims_of_2d(file, sub, dims);
  if (rank != 2 || dims[1] < 1 || dims[1] > RAGGED_COLS_MAX) {
    return say(why, "%s is not a table [rows, n] of 1 to %d columns", sub, RAGGED_COLS_MAX);
  }
  hsize_t ncol = dims[1], nrows;
  shape[1] = ncol;
  hid_t d = dset_open_checked(file, sub, KIND_FLOAT, 2, shape, dims, &absent, why);
  if (d < 0) {
    return absent ? say(why, "dataset %s is missing", sub) : -1;
  }
  nrows = dims[0];
  long long count = at[0], off = at[1];
  if (count < 0 || off < 0 || (unsigned long long)off > nrows ||
      (unsigned long long)count > nrows - (hsize_t)off ||
      (unsigned long long)count * ncol > SIZE_MAX_ANY) {
    H5Dclose(d);
    return say(why,
               "the last record of %s claims rows %lld to %lld of a table of %llu rows (at "
               "most %d values)",
               path, off, off + count, (unsigned long long)nrows, SIZE_MAX_ANY);
  }
  a->length = (int)(count * (long long)ncol);
  a->data = malloc((size_t)(a->length > 0 ? a->length : 1) * sizeof(double));
  if (!a->data) {
    H5Dclose(d);
    return -2;
  }
  int rc = 0;
  if (count > 0) {
    hsize_t start[2] = {(hsize_t)off, 0}, cnt[2] = {(hsize_t)count, ncol};
    hsize_t nelem = (hsize_t)count * ncol;
    hid_t fspace = H5Dget_space(d);
    hid_t mspace = H5Screate_simple(1, &nelem, NULL);
    if (fspace < 0 || mspace < 0 ||
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
        H5Dread(d, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, a->data) < 0) {
      char reason[H5_REASON_MAX];
      h5_reason(reason);
      rc = say(why, "dataset %s cannot be read (%s)", sub, reason);
    }
    if (mspace >= 0) {
      H5Sclose(mspace);
    }
    if (fspace >= 0) {
      H5Sclose(fspace);
    }
  }
  H5Dclose(d);
  long bad = rc == 0 ? first_nonfinite(a->data, a->length) : -1;
  if (bad >= 0) {
    rc = say(why, "the last record holds a value that an mbsim-run result never holds in %s "
                  "(row %ld, column %ld of the record)",
             sub, bad / (long)ncol + 1, bad % (long)ncol + 1);
  }
  return rc;
}

/* the array of rec->state named name, or NULL */
static mbsLastArray *state_named(mbsLastRecord *rec, const char *name) {
  for (int i = 0; i < rec->nstate; i++) {
    if (rec->state[i].name && strcmp(rec->state[i].name, name) == 0) {
      return &rec->state[i];
    }
  }
  return NULL;
}

/* values [from, from + n) of row `row` of the float64 series /state/<name> into out; 0 or -1
 * (why) */
static int read_state_row(hid_t file, const char *name, hsize_t row, long from, long n,
                          double *out, char *why) {
  char path[NAME_BYTES_MAX + 16];
  snprintf(path, sizeof(path), "/state/%s", name);
  hsize_t dims[4] = {0}, shape[4] = {0};
  int absent = 0;
  if (dims_of_2d(file, path, dims) != 2 || dims[1] < (hsize_t)(from + n)) {
    return say(why, "%s is not a series of arrays of at least %ld values", path, from + n);
  }
  shape[1] = dims[1];
  hid_t d = dset_open_checked(file, path, KIND_FLOAT, 2, shape, dims, &absent, why);
  if (d < 0) {
    return absent ? say(why, "dataset %s is missing", path) : -1;
  }
  int rc = -1;
  hsize_t start[2] = {row, (hsize_t)from}, cnt[2] = {1, (hsize_t)n}, nelem = (hsize_t)n;
  hid_t fspace = H5Dget_space(d);
  hid_t mspace = H5Screate_simple(1, &nelem, NULL);
  if (row >= dims[0]) {
    say(why, "dataset %s has fewer records than the others", path);
  } else if (fspace < 0 || mspace < 0 ||
             H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
             H5Dread(d, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, out) < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    say(why, "dataset %s cannot be read (%s)", path, reason);
  } else {
    rc = 0;
  }
  if (mspace >= 0) {
    H5Sclose(mspace);
  }
  if (fspace >= 0) {
    H5Sclose(fspace);
  }
  H5Dclose(d);
  return rc;
}

/* The predictor's history rows that the writer marked in /state/history_repeats as
 * repeating the previous record's (record.c mark_repeats; docs/output.md), stored as zeros,
 * taken from the records before: bit 1, blocks 1 .. K-1 of previous_increments (K blocks of
 * n_coordinates) are blocks 0 .. K-2 of the record before; bit 2, previous_velocity is its
 * scheme_velocity; bit 4, previous_multipliers its multipliers. A marked row must hold zeros
 * there. 0, -1 (why) or -2 (no memory) */
#define REPEATS_BACK 64 /* the most records a history is followed back */
static int resolve_repeats(hid_t file, hsize_t last, mbsLastRecord *rec, char *why) {
  const char *path = "/state/history_repeats";
  int e = hard_link_exists(file, path, why);
  if (e <= 0) {
    return e; /* none: every row as stored */
  }
  hsize_t dims[4] = {0}, shape[4] = {0};
  int absent = 0;
  hid_t d = dset_open_checked(file, path, KIND_INT, 1, shape, dims, &absent, why);
  if (d < 0) {
    return -1;
  }
  if (dims[0] <= last) {
    H5Dclose(d);
    return say(why, "dataset %s has fewer records than the others", path);
  }
  /* the marks of the last records, newest first */
  long long mark[REPEATS_BACK];
  int nmark = 0;
  for (; nmark < REPEATS_BACK && (hsize_t)nmark <= last; nmark++) {
    if (read_row(d, path, 1, dims, last - (hsize_t)nmark, H5T_NATIVE_LLONG, &mark[nmark],
                 why) < 0) {
      H5Dclose(d);
      return -1;
    }
    if (mark[nmark] < 0 || mark[nmark] > 7 || ((hsize_t)nmark == last && mark[nmark] != 0)) {
      H5Dclose(d);
      return say(why, "%s holds %lld at record %llu, which a result never holds", path,
                 mark[nmark], (unsigned long long)(last - (hsize_t)nmark + 1));
    }
    if (!(mark[nmark] & 1)) {
      nmark++;
      break; /* no mark older than a record with its increments stored is followed */
    }
  }
  H5Dclose(d);
  if (mark[0] == 0) {
    return 0;
  }
  static const struct {
    int bit;
    const char *name, *source;
  } part[3] = {{1, "previous_increments", "previous_increments"},
               {2, "previous_velocity", "scheme_velocity"},
               {4, "previous_multipliers", "multipliers"}};
  for (int k = 0; k < 3; k++) {
    if (!(mark[0] & part[k].bit)) {
      continue;
    }
    mbsLastArray *a = state_named(rec, part[k].name);
    long nq = rec->n_coordinates;
    long from = k == 0 ? nq : 0; /* the stored zeros of a marked row */
    if (!a || !a->data || (k == 0 && (nq <= 0 || a->length % nq != 0 || a->length < 2 * nq))) {
      return say(why, "%s marks /state/%s of the last record as repeated, which it does not "
                      "hold as such",
                 path, part[k].name);
    }
    for (long i = from; i < a->length; i++) {
      if (a->data[i] != 0.0) {
        return say(why, "the last record's /state/%s holds %g at entry %ld where %s marks it "
                        "as the previous record's (stored as 0)",
                   part[k].name, a->data[i], i + 1, path);
      }
    }
    if (k > 0) {
      if (read_state_row(file, part[k].source, last - 1, 0, a->length, a->data, why) < 0) {
        return -1;
      }
    } else {
      /* block b of record r: block b - 1 of record r - 1 while r's mark has bit 1 */
      for (long b = 1; b < a->length / nq; b++) {
        long r = 0, bb = b;
        while (bb > 0 && r < nmark && (mark[r] & 1)) {
          r++;
          bb--;
        }
        if (bb > 0 && r >= nmark) {
          return say(why, "%s marks more than %d records in a row as repeating "
                          "/state/previous_increments", path, REPEATS_BACK);
        }
        if (read_state_row(file, "previous_increments", last - (hsize_t)r, bb * nq, nq,
                           a->data + b * nq, why) < 0) {
          return -1;
        }
      }
    }
    long at = first_nonfinite(a->data, a->length);
    if (at >= 0) {
      return say(why, "the last record holds a value that an mbsim-run result never holds in "
                      "/state/%s (entry %ld, from the records before it)",
                 part[k].name, at + 1);
    }
  }
  return 0;
}

/* the generic list rec->state: row `last` of every float64 series /state/<name> [N, length]
 * (N > last) besides q and v, and the last record's rows of every ragged table
 * /state/<name>/{count,offsets,table}; NaN throughout gives data NULL, other non-finite values
 * are refused. 0, -1 (why) or -2 (no memory) */
static int read_state_arrays(hid_t file, hsize_t last, mbsLastRecord *rec, char *why) {
  stateNames *sn = calloc(1, sizeof(*sn));
  if (!sn) {
    return -2;
  }
  int rc = -1;
  hid_t g = H5Gopen2(file, "/state", H5P_DEFAULT);
  if (g < 0) {
    say(why, "group /state does not open");
    goto done;
  }
  herr_t it = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, collect_state, sn);
  H5Gclose(g);
  if (it < 0 || sn->too_many || sn->too_long) {
    say(why, "group /state %s", sn->too_long   ? "holds a name that is too long"
                                : sn->too_many ? "holds too many datasets"
                                               : "cannot be listed");
    goto done;
  }
  for (int i = 0; i < sn->n; i++) {
    char path[NAME_BYTES_MAX + 16];
    snprintf(path, sizeof(path), "/state/%s", sn->names[i]);
    int link = hard_link_exists(file, path, why);
    if (link < 0) {
      goto done;
    }
    hid_t grp = link > 0 ? H5Gopen2(file, path, H5P_DEFAULT) : H5I_INVALID_HID;
    if (grp >= 0) {
      /* a group: a ragged table */
      H5Gclose(grp);
      mbsLastArray *a = &rec->state[rec->nstate++];
      a->name = copy_string(sn->names[i]);
      if (!a->name) {
        rc = -2;
        goto done;
      }
      int r = read_ragged_last(file, path, last, a, why);
      if (r != 0) {
        rc = r;
        goto done;
      }
      continue;
    }
    /* the row length first, then every check of a dataset the reader opens */
    hsize_t dims[4] = {0}, shape[4] = {0};
    int absent = 0;
    int rank = dims_of_2d(file, path, dims);
    if (rank != 2 || dims[1] > SIZE_MAX_ANY) {
      say(why, "%s is not a series of arrays [N, n] of at most %d values", path, SIZE_MAX_ANY);
      goto done;
    }
    shape[1] = dims[1];
    hid_t d = dset_open_checked(file, path, KIND_FLOAT, 2, shape, dims, &absent, why);
    if (d < 0) {
      if (absent) {
        say(why, "%s is not a dataset", path);
      }
      goto done;
    }
    mbsLastArray *a = &rec->state[rec->nstate];
    a->length = (int)dims[1];
    a->name = copy_string(sn->names[i]);
    a->data = malloc((size_t)(a->length > 0 ? a->length : 1) * sizeof(double));
    rec->nstate++;
    if (!a->name || !a->data) {
      H5Dclose(d);
      rc = -2;
      goto done;
    }
    int bad = dims[0] <= last;
    if (bad) {
      say(why, "dataset %s has fewer records than the others", path);
    } else {
      bad = read_row(d, path, 2, dims, last, H5T_NATIVE_DOUBLE, a->data, why) < 0;
    }
    H5Dclose(d);
    if (bad) {
      goto done;
    }
    long at = first_nonfinite(a->data, a->length);
    if (a->length > 0 && all_nan(a->data, a->length)) {
      free(a->data);
      a->data = NULL;
    } else if (at >= 0) {
      say(why, "the last record holds a value that an mbsim-run result never holds in %s "
               "(entry %ld)",
          path, at + 1);
      goto done;
    }
  }
  rc = 0;

done:
  free(sn);
  return rc;
}

static mbsStatus read_last(const char *path, const mbsModelSizes *sizes, mbsLastRecord *rec,
                           mbsError *err) {
  mbsStatus st = MBS_OK;
  hid_t file = H5I_INVALID_HID;
  hid_t dset[D_COUNT];
  hsize_t dims[D_COUNT][4];
  char *format = NULL;
  char why[DETAIL_MAX];
  int rc;
  for (int i = 0; i < D_COUNT; i++) {
    dset[i] = H5I_INVALID_HID;
  }

  if (!rec) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no record to read into");
  }
  memset(rec, 0, sizeof(*rec));
  st = check_path(path, err);
  if (st != MBS_OK) {
    return st;
  }

  /* the library never prints: HDF5's automatic error stack printing goes off; filters are
   * the built-in ones (no plugin is loaded for a filter id the file names) */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  H5PLset_loading_state(0);
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    st = mbs_error_set(err, MBS_ERR_IO, NULL, 0, 0,
                       "result file '%s' is not an mbsim-run result: it does not open as HDF5 "
                       "(%s; is it still being written?)",
                       path, reason);
    goto fail;
  }

  /* root attributes: the format first, so that a foreign file gets a clear message */
  rc = read_string_attr(file, "root ", "format", &format, why);
  if (rc == 0 && strcmp(format, FORMAT_NAME) != 0) {
    /* the value only as far as it is short and printable */
    int printable = strlen(format) <= 64;
    for (const char *c = format; printable && *c; c++) {
      printable = (unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f;
    }
    rc = printable
             ? say(why, "its root attribute 'format' is '%s', expected '%s'", format, FORMAT_NAME)
             : say(why, "its root attribute 'format' is not '%s'", FORMAT_NAME);
  }
  if (rc == 0) {
    rc = read_string_attr(file, "root ", "status", &rec->status, why);
  }
  if (rc == 0) {
    rc = read_num_attr(file, "dt", KIND_FLOAT, H5T_NATIVE_DOUBLE, &rec->dt, why);
  }
  if (rc == 0 && !(isfinite(rec->dt) && rec->dt > 0.0)) {
    rc = say(why, "its root attribute 'dt' is %g, not a positive number", rec->dt);
  }
  if (rc == 0) {
    rc = read_num_attr(file, "t_end", KIND_FLOAT, H5T_NATIVE_DOUBLE, &rec->t_end, why);
  }
  if (rc == 0 && !(isfinite(rec->t_end) && rec->t_end > 0.0)) {
    rc = say(why, "its root attribute 't_end' is %g, not a positive number", rec->t_end);
  }
  long long nq = -1, nc = -1, nj = -1;
  if (rc == 0) {
    rc = read_num_attr(file, "n_coordinates", KIND_INT, H5T_NATIVE_LLONG, &nq, why);
  }
  if (rc == 0) {
    rc = read_num_attr(file, "n_constraints", KIND_INT, H5T_NATIVE_LLONG, &nc, why);
  }
  if (rc == 0 && (nq < 0 || nc < 0 || (!sizes && (nq > SIZE_MAX_ANY || nc > SIZE_MAX_ANY)))) {
    rc = say(why,
             "its root attributes n_coordinates = %lld and n_constraints = %lld are not "
             "sizes of a model",
             nq, nc);
  }

  /* the joints: only their number, from /joints/names */
  int absent;
  hsize_t shape[4] = {0, 0, 0, 0};
  if (rc == 0) {
    hid_t jn =
        dset_open_checked(file, "/joints/names", KIND_STRING, 1, shape, dims[0], &absent, why);
    if (jn < 0) {
      rc = absent ? say(why, "dataset /joints/names is missing") : -1;
    } else {
      H5Dclose(jn);
      nj = (long long)dims[0][0];
      if (!sizes && nj > SIZE_MAX_ANY) {
        rc = say(why, "dataset /joints/names holds %lld names", nj);
      }
    }
  }
  if (rc == -2) {
    st = nomem(err, path);
    goto fail;
  }
  if (rc != 0) {
    st = not_result(err, path, why);
    goto fail;
  }

  /* the model's sizes, before anything is allocated for the file's */
  if (sizes && (nq != sizes->n_coordinates || nc != sizes->n_constraints || nj != sizes->njoint)) {
    st = mbs_error_set(err, MBS_ERR_MODEL, NULL, 0, 0,
                       "result file '%s' has %lld coordinates, %lld constraints and %lld joints, "
                       "the model %d, %d and %d",
                       path, nq, nc, nj, sizes->n_coordinates, sizes->n_constraints, sizes->njoint);
    free(format);
    H5Fclose(file);
    mbs_output_last_free(rec);
    rec->n_coordinates = nq > INT_MAX ? INT_MAX : (int)nq;
    rec->n_constraints = nc > INT_MAX ? INT_MAX : (int)nc;
    rec->njoint = nj > INT_MAX ? INT_MAX : (int)nj;
    return st;
  }
  rec->n_coordinates = (int)nq;
  rec->n_constraints = (int)nc;
  rec->njoint = (int)nj;

  /* the datasets read, their shapes, and the last row they all have */
  struct {
    const char *path;
    valueKind kind;
    int rank;
    hsize_t shape[4];
    int optional;
  } sets[D_COUNT] = {
      [D_TIME] = {"/time", KIND_FLOAT, 1, {0}, 0},
      [D_EXTERNAL_WORK] = {"/energy/external_work", KIND_FLOAT, 1, {0}, 0},
      [D_DISSIPATED] = {"/energy/dissipated", KIND_FLOAT, 1, {0}, 0},
      [D_ITERATIONS] = {"/solver/iterations", KIND_INT, 1, {0}, 0},
      [D_Q] = {"/state/q", KIND_FLOAT, 2, {0, (hsize_t)nq}, 0},
      [D_V] = {"/state/v", KIND_FLOAT, 2, {0, (hsize_t)nq}, 0},
      [D_MULTIPLIERS] = {"/state/multipliers", KIND_FLOAT, 2, {0, (hsize_t)nc}, 1},
      [D_REACTION] = {"/joints/reaction", KIND_FLOAT, 3, {0, (hsize_t)nj, 6}, 0},
      [D_STEP_SIZE] = {"/solver/step_size", KIND_FLOAT, 1, {0}, 1},
      [D_ACCELERATION] = {"/state/acceleration", KIND_FLOAT, 2, {0, (hsize_t)nq}, 1},
      [D_ALG_ACCELERATION] =
          {"/state/algorithmic_acceleration", KIND_FLOAT, 2, {0, (hsize_t)nq}, 1},
      [D_SCHEME_VELOCITY] = {"/state/scheme_velocity", KIND_FLOAT, 2, {0, (hsize_t)nq}, 1},
      [D_JOINT_COORDINATES] = {"/joints/coordinates", KIND_FLOAT, 3, {0, (hsize_t)nj, 3}, 1},
      [D_CONTACT_DISSIPATED] = {"/energy/contact_dissipated", KIND_FLOAT, 1, {0}, 1},
      [D_IMPACT_DISSIPATED] = {"/energy/impact_dissipated", KIND_FLOAT, 1, {0}, 1},
      [D_FRICTION_DISSIPATED] = {"/energy/friction_dissipated", KIND_FLOAT, 1, {0}, 1},
      [D_NUMERICAL_DISSIPATION] = {"/energy/numerical_dissipation", KIND_FLOAT, 1, {0}, 1},
      [D_JOINT_DRIVE] = {"/joints/drive", KIND_FLOAT, 3, {0, (hsize_t)nj, 6}, 1},
      [D_CAPTURE_DISSIPATED] = {"/energy/capture_dissipated", KIND_FLOAT, 1, {0}, 1},
  };
  hsize_t nrow = 0;
  int first = 1;
  for (int i = 0; i < D_COUNT; i++) {
    dset[i] = dset_open_checked(file, sets[i].path, sets[i].kind, sets[i].rank, sets[i].shape,
                                dims[i], &absent, why);
    if (dset[i] < 0 && !(absent && sets[i].optional)) {
      st = not_result(err, path,
                      absent ? (say(why, "dataset %s is missing", sets[i].path), why) : why);
      goto fail;
    }
    if (dset[i] >= 0) {
      nrow = first || dims[i][0] < nrow ? dims[i][0] : nrow;
      first = 0;
    }
  }
  if ((dset[D_ACCELERATION] >= 0) != (dset[D_ALG_ACCELERATION] >= 0)) {
    st = not_result(err, path,
                    "it has only one of /state/acceleration and "
                    "/state/algorithmic_acceleration");
    goto fail;
  }
  if (nrow == 0) {
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "result file '%s' holds no record", path);
    goto fail;
  }
  rec->nrecord = nrow > (hsize_t)LONG_MAX ? LONG_MAX : (long)nrow;

  /* the values of the last record */
  size_t nqa = (size_t)(nq > 0 ? nq : 1), nca = (size_t)(nc > 0 ? nc : 1);
  int has_mu = dset[D_MULTIPLIERS] >= 0, has_acc = dset[D_ACCELERATION] >= 0;
  int has_sv = dset[D_SCHEME_VELOCITY] >= 0, has_jc = dset[D_JOINT_COORDINATES] >= 0 && nj > 0;
  int has_jd = dset[D_JOINT_DRIVE] >= 0 && nj > 0;
  rec->q = malloc(nqa * sizeof(double));
  rec->v = malloc(nqa * sizeof(double));
  rec->multipliers = has_mu ? malloc(nca * sizeof(double)) : NULL;
  rec->joint_reaction = nj > 0 ? malloc((size_t)nj * 6 * sizeof(double)) : NULL;
  rec->acceleration = has_acc ? malloc(nqa * sizeof(double)) : NULL;
  rec->algorithmic_acceleration = has_acc ? malloc(nqa * sizeof(double)) : NULL;
  rec->scheme_velocity = has_sv ? malloc(nqa * sizeof(double)) : NULL;
  rec->joint_coordinates = has_jc ? malloc((size_t)nj * 3 * sizeof(double)) : NULL;
  rec->joint_drive = has_jd ? malloc((size_t)nj * 6 * sizeof(double)) : NULL;
  rec->coordinate_names = calloc(nqa, sizeof(char *));
  if (!rec->q || !rec->v || (has_mu && !rec->multipliers) || (nj > 0 && !rec->joint_reaction) ||
      (has_acc && (!rec->acceleration || !rec->algorithmic_acceleration)) ||
      (has_sv && !rec->scheme_velocity) || (has_jc && !rec->joint_coordinates) ||
      (has_jd && !rec->joint_drive) || !rec->coordinate_names) {
    st = nomem(err, path);
    goto fail;
  }
  hsize_t last = nrow - 1;
  struct {
    hid_t type;
    void *out;
  } rows[D_COUNT] = {
      [D_TIME] = {H5T_NATIVE_DOUBLE, &rec->time},
      [D_EXTERNAL_WORK] = {H5T_NATIVE_DOUBLE, &rec->external_work},
      [D_DISSIPATED] = {H5T_NATIVE_DOUBLE, &rec->dissipated},
      [D_ITERATIONS] = {H5T_NATIVE_INT, &rec->iterations},
      [D_Q] = {H5T_NATIVE_DOUBLE, rec->q},
      [D_V] = {H5T_NATIVE_DOUBLE, rec->v},
      [D_MULTIPLIERS] = {H5T_NATIVE_DOUBLE, rec->multipliers},
      [D_REACTION] = {H5T_NATIVE_DOUBLE, rec->joint_reaction},
      [D_STEP_SIZE] = {H5T_NATIVE_DOUBLE, &rec->step_size},
      [D_ACCELERATION] = {H5T_NATIVE_DOUBLE, rec->acceleration},
      [D_ALG_ACCELERATION] = {H5T_NATIVE_DOUBLE, rec->algorithmic_acceleration},
      [D_SCHEME_VELOCITY] = {H5T_NATIVE_DOUBLE, rec->scheme_velocity},
      [D_JOINT_COORDINATES] = {H5T_NATIVE_DOUBLE, rec->joint_coordinates},
      [D_CONTACT_DISSIPATED] = {H5T_NATIVE_DOUBLE, &rec->contact_dissipated},
      [D_IMPACT_DISSIPATED] = {H5T_NATIVE_DOUBLE, &rec->impact_dissipated},
      [D_FRICTION_DISSIPATED] = {H5T_NATIVE_DOUBLE, &rec->friction_dissipated},
      [D_NUMERICAL_DISSIPATION] = {H5T_NATIVE_DOUBLE, &rec->numerical_dissipation},
      [D_JOINT_DRIVE] = {H5T_NATIVE_DOUBLE, rec->joint_drive},
      [D_CAPTURE_DISSIPATED] = {H5T_NATIVE_DOUBLE, &rec->capture_dissipated},
  };
  for (int i = 0; i < D_COUNT; i++) {
    if (dset[i] >= 0 && rows[i].out &&
        read_row(dset[i], sets[i].path, sets[i].rank, dims[i], last, rows[i].type, rows[i].out,
                 why) < 0) {
      st = not_result(err, path, why);
      goto fail;
    }
  }
  if (read_row(dset[D_TIME], "/time", 1, dims[D_TIME], 0, H5T_NATIVE_DOUBLE, &rec->first_time,
               why) < 0) {
    st = not_result(err, path, why);
    goto fail;
  }

  /* the numbers the writer writes: finite, except multipliers and accelerations written as
   * NaN throughout (a writer that was not given them), which are none */
  const char *bad = NULL;
  long at = -1;
  double t = rec->time;
  if (!isfinite(rec->time) || !isfinite(rec->first_time)) {
    bad = "/time";
  } else if (!isfinite(rec->external_work)) {
    bad = "/energy/external_work";
  } else if (!isfinite(rec->dissipated)) {
    bad = "/energy/dissipated";
  } else if (!isfinite(rec->contact_dissipated)) {
    bad = "/energy/contact_dissipated";
  } else if (!isfinite(rec->impact_dissipated)) {
    bad = "/energy/impact_dissipated";
  } else if (!isfinite(rec->friction_dissipated)) {
    bad = "/energy/friction_dissipated";
  } else if (!isfinite(rec->numerical_dissipation)) {
    bad = "/energy/numerical_dissipation";
  } else if (!isfinite(rec->capture_dissipated)) {
    bad = "/energy/capture_dissipated";
  } else if (!(isfinite(rec->step_size) && rec->step_size >= 0.0)) {
    bad = "/solver/step_size";
  } else if (rec->iterations < 0) {
    bad = "/solver/iterations";
  } else if ((at = first_nonfinite(rec->q, nq)) >= 0) {
    bad = "/state/q";
  } else if ((at = first_nonfinite(rec->v, nq)) >= 0) {
    bad = "/state/v";
  } else if ((at = first_nonfinite(rec->joint_reaction, 6 * nj)) >= 0) {
    bad = "/joints/reaction";
  } else if (rec->joint_drive && (at = first_nonfinite(rec->joint_drive, 6 * nj)) >= 0) {
    bad = "/joints/drive";
  }
  if (!bad && rec->multipliers && all_nan(rec->multipliers, nc) && nc > 0) {
    free(rec->multipliers);
    rec->multipliers = NULL;
  } else if (!bad && rec->multipliers && (at = first_nonfinite(rec->multipliers, nc)) >= 0) {
    bad = "/state/multipliers";
  }
  /* the integrator's own velocities: written as NaN by a writer not given them; finite
   * otherwise. Joint coordinates are NaN beyond each joint's count: only infinities are bad */
  if (!bad && rec->scheme_velocity && nq > 0 && all_nan(rec->scheme_velocity, nq)) {
    free(rec->scheme_velocity);
    rec->scheme_velocity = NULL;
  } else if (!bad && rec->scheme_velocity && (at = first_nonfinite(rec->scheme_velocity, nq)) >= 0) {
    bad = "/state/scheme_velocity";
  }
  for (long k = 0; !bad && rec->joint_coordinates && k < 3 * nj; k++) {
    if (isinf(rec->joint_coordinates[k])) {
      bad = "/joints/coordinates";
      at = k;
    }
  }
  if (!bad && rec->acceleration && nq > 0 && all_nan(rec->acceleration, nq) &&
      all_nan(rec->algorithmic_acceleration, nq)) {
    free(rec->acceleration);
    free(rec->algorithmic_acceleration);
    rec->acceleration = rec->algorithmic_acceleration = NULL;
  } else if (!bad && rec->acceleration && (at = first_nonfinite(rec->acceleration, nq)) >= 0) {
    bad = "/state/acceleration";
  } else if (!bad && rec->acceleration &&
             (at = first_nonfinite(rec->algorithmic_acceleration, nq)) >= 0) {
    bad = "/state/algorithmic_acceleration";
  }
  if (bad) {
    if (at >= 0) {
      st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "result file '%s': the last record (t = %.9g) holds a value that an "
                         "mbsim-run result never holds in %s (entry %ld)",
                         path, t, bad, at + 1);
    } else {
      st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "result file '%s': the last record holds a value that an mbsim-run "
                         "result never holds in %s",
                         path, bad);
    }
    goto fail;
  }

  rc = read_state_arrays(file, last, rec, why);
  if (rc == 0) {
    rc = resolve_repeats(file, last, rec, why);
  }
  if (rc != 0) {
    st = rc == -2 ? nomem(err, path) : not_result(err, path, why);
    goto fail;
  }
  rc = read_names(file, (int)nq, rec->coordinate_names, why);
  if (rc != 0) {
    st = rc == -2 ? nomem(err, path) : not_result(err, path, why);
    goto fail;
  }
  for (int i = 0; i < D_COUNT; i++) {
    if (dset[i] >= 0) {
      H5Dclose(dset[i]);
    }
  }
  free(format);
  if (H5Fclose(file) < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    say(why, "it does not close (%s)", reason);
    file = H5I_INVALID_HID;
    st = not_result(err, path, why);
    for (int i = 0; i < D_COUNT; i++) {
      dset[i] = H5I_INVALID_HID;
    }
    goto fail;
  }
  return MBS_OK;

fail:
  for (int i = 0; i < D_COUNT; i++) {
    if (dset[i] >= 0) {
      H5Dclose(dset[i]);
    }
  }
  free(format);
  if (file >= 0) {
    H5Fclose(file);
  }
  mbs_output_last_free(rec);
  return st;
}

mbsStatus mbs_output_read_last(const char *path, mbsLastRecord *rec, mbsError *err) {
  return read_last(path, NULL, rec, err);
}

mbsStatus mbs_output_read_last_sized(const char *path, const mbsModelSizes *sizes,
                                     mbsLastRecord *rec, mbsError *err) {
  return read_last(path, sizes, rec, err);
}

/* ---------- the same in a child process ---------- */

#define WIRE_MAGIC 0x6d627331u

/* the answer of the child: this head, then the status string, q, v, the multipliers (when
 * has_mu), the joint reactions, the accelerations (when has_acc), the scheme's velocities
 * (has_sv), the joint coordinates (has_jc) and the names, each
 * followed by its NUL */
typedef struct {
  uint32_t magic;
  int32_t status; /* mbsStatus of the reading */
  int32_t n_coordinates, n_constraints, njoint, iterations, has_mu, has_acc, has_sv, has_jc;
  int32_t has_jd;
  int32_t nstate; /* then, after the names, per array: its name with its NUL, int64 length,
                     int32 has_data, the data when has_data */
  int64_t nrecord;
  double dt, t_end, time, first_time, external_work, dissipated, contact_dissipated, step_size;
  double impact_dissipated, friction_dissipated, numerical_dissipation, capture_dissipated;
  uint64_t status_len; /* bytes of the status string */
  uint64_t names_len;  /* bytes of all names with their NULs */
  char msg[MBS_ERROR_MSG_MAX];
} wireHead;

typedef struct {
  const char *path;
  const mbsModelSizes *sizes;
} readJob;

static void read_work(void *arg, int fd) {
  const readJob *job = arg;
  mbsLastRecord rec;
  mbsError err;
  wireHead h;
  mbs_error_clear(&err);
  memset(&h, 0, sizeof(h));
  h.magic = WIRE_MAGIC;
  h.status = read_last(job->path, job->sizes, &rec, &err);
  if (h.status != MBS_OK) {
    snprintf(h.msg, sizeof(h.msg), "%s", err.msg);
    h.n_coordinates = rec.n_coordinates;
    h.n_constraints = rec.n_constraints;
    h.njoint = rec.njoint;
    iso_write(fd, &h, sizeof(h));
    return;
  }
  int nq = rec.n_coordinates;
  h.n_coordinates = nq;
  h.n_constraints = rec.n_constraints;
  h.njoint = rec.njoint;
  h.iterations = rec.iterations;
  h.has_mu = rec.multipliers != NULL;
  h.has_acc = rec.acceleration != NULL;
  h.has_sv = rec.scheme_velocity != NULL;
  h.has_jc = rec.joint_coordinates != NULL;
  h.has_jd = rec.joint_drive != NULL;
  h.nstate = rec.nstate;
  h.nrecord = rec.nrecord;
  h.dt = rec.dt;
  h.t_end = rec.t_end;
  h.time = rec.time;
  h.first_time = rec.first_time;
  h.external_work = rec.external_work;
  h.dissipated = rec.dissipated;
  h.contact_dissipated = rec.contact_dissipated;
  h.impact_dissipated = rec.impact_dissipated;
  h.friction_dissipated = rec.friction_dissipated;
  h.numerical_dissipation = rec.numerical_dissipation;
  h.capture_dissipated = rec.capture_dissipated;
  h.step_size = rec.step_size;
  h.status_len = strlen(rec.status) + 1;
  for (int i = 0; i < nq; i++) {
    h.names_len += strlen(rec.coordinate_names[i]) + 1;
  }
  size_t nb = (size_t)nq * sizeof(double);
  int rc = iso_write(fd, &h, sizeof(h)) | iso_write(fd, rec.status, h.status_len) |
           iso_write(fd, rec.q, nb) | iso_write(fd, rec.v, nb);
  if (rc == 0 && h.has_mu) {
    rc = iso_write(fd, rec.multipliers, (size_t)rec.n_constraints * sizeof(double));
  }
  if (rc == 0) {
    rc = iso_write(fd, rec.joint_reaction, (size_t)rec.njoint * 6 * sizeof(double));
  }
  if (rc == 0 && h.has_acc) {
    rc = iso_write(fd, rec.acceleration, nb) | iso_write(fd, rec.algorithmic_acceleration, nb);
  }
  if (rc == 0 && h.has_sv) {
    rc = iso_write(fd, rec.scheme_velocity, nb);
  }
  if (rc == 0 && h.has_jc) {
    rc = iso_write(fd, rec.joint_coordinates, (size_t)rec.njoint * 3 * sizeof(double));
  }
  if (rc == 0 && h.has_jd) {
    rc = iso_write(fd, rec.joint_drive, (size_t)rec.njoint * 6 * sizeof(double));
  }
  for (int i = 0; rc == 0 && i < nq; i++) {
    rc = iso_write(fd, rec.coordinate_names[i], strlen(rec.coordinate_names[i]) + 1);
  }
  for (int i = 0; rc == 0 && i < rec.nstate; i++) {
    const mbsLastArray *a = &rec.state[i];
    int64_t len = a->length;
    int32_t has = a->data != NULL;
    rc = iso_write(fd, a->name, strlen(a->name) + 1) | iso_write(fd, &len, sizeof(len)) |
         iso_write(fd, &has, sizeof(has));
    if (rc == 0 && has) {
      rc = iso_write(fd, a->data, (size_t)a->length * sizeof(double));
    }
  }
  mbs_output_last_free(&rec);
}

/* read n doubles of the answer into a new array (NULL: the answer ended or no memory) */
static double *read_doubles(isoChild *c, long n, int *nomem_flag) {
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  if (!x) {
    *nomem_flag = 1;
    return NULL;
  }
  if (n > 0 && iso_read(c, x, (size_t)n * sizeof(double)) != 0) {
    free(x);
    return NULL;
  }
  return x;
}

mbsStatus mbs_output_read_last_isolated(const char *path, const mbsModelSizes *sizes,
                                        const mbsInspectLimits *lim, mbsLastRecord *rec,
                                        mbsError *err) {
  char why[DETAIL_MAX];
  wireHead h;
  isoChild c;
  int nomem_flag = 0;
  char *names = NULL;
  if (!rec) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no record to read into");
  }
  memset(rec, 0, sizeof(*rec));
  mbsStatus st = check_path(path, err);
  if (st != MBS_OK) {
    return st;
  }
  readJob job = {path, sizes};
  if (iso_start(&c, lim, read_work, &job, why, sizeof(why)) != 0) {
    return mbs_error_set(err, MBS_ERR_IO, NULL, 0, 0, "result file '%s': %s", path, why);
  }
  if (iso_read(&c, &h, sizeof(h)) != 0 || h.magic != WIRE_MAGIC) {
    goto child_failed;
  }
  h.msg[sizeof(h.msg) - 1] = '\0';
  if (h.status != MBS_OK) {
    /* the child's own verdict: its message as it is */
    int known = 0;
#define MBS_STATUS_KNOWN(name, code, text) known |= h.status == (code);
    MBS_STATUS_LIST(MBS_STATUS_KNOWN)
#undef MBS_STATUS_KNOWN
    if (!known || h.msg[0] == '\0' || iso_finish(&c, 0, why, sizeof(why)) != 0) {
      if (c.pid >= 0) {
        iso_finish(&c, 1, why, sizeof(why));
      }
      snprintf(why, sizeof(why), "the process that read it gave a malformed answer");
      return not_result(err, path, why);
    }
    st = mbs_error_set(err, (mbsStatus)h.status, NULL, 0, 0, "%s", h.msg);
    if (st == MBS_ERR_MODEL) {
      rec->n_coordinates = h.n_coordinates;
      rec->n_constraints = h.n_constraints;
      rec->njoint = h.njoint;
    }
    return st;
  }

  /* sizes as the caller expects them (or bounded), before anything is allocated */
  long nq = h.n_coordinates, nc = h.n_constraints, nj = h.njoint;
  if (nq < 0 || nc < 0 || nj < 0 || nq > SIZE_MAX_ANY || nc > SIZE_MAX_ANY || nj > SIZE_MAX_ANY ||
      (sizes &&
       (nq != sizes->n_coordinates || nc != sizes->n_constraints || nj != sizes->njoint)) ||
      (h.has_mu != 0 && h.has_mu != 1) || (h.has_acc != 0 && h.has_acc != 1) || h.nstate < 0 ||
      h.nstate > MBS_LAST_STATE_MAX || h.status_len < 1 ||
      h.status_len > STRING_MAX + 1 || h.names_len < (uint64_t)nq ||
      h.names_len > (uint64_t)nq * (NAME_BYTES_MAX + 1) || h.nrecord < 1) {
    iso_finish(&c, 1, why, sizeof(why));
    snprintf(why, sizeof(why), "the process that read it gave a malformed answer");
    return not_result(err, path, why);
  }
  rec->n_coordinates = (int)nq;
  rec->n_constraints = (int)nc;
  rec->njoint = (int)nj;
  rec->nrecord = (long)h.nrecord;
  rec->iterations = h.iterations;
  rec->dt = h.dt;
  rec->t_end = h.t_end;
  rec->time = h.time;
  rec->first_time = h.first_time;
  rec->external_work = h.external_work;
  rec->dissipated = h.dissipated;
  rec->contact_dissipated = h.contact_dissipated;
  rec->impact_dissipated = h.impact_dissipated;
  rec->friction_dissipated = h.friction_dissipated;
  rec->numerical_dissipation = h.numerical_dissipation;
  rec->capture_dissipated = h.capture_dissipated;
  rec->step_size = h.step_size;
  rec->status = malloc((size_t)h.status_len);
  if (!rec->status) {
    nomem_flag = 1;
    goto child_failed;
  }
  if (iso_read(&c, rec->status, (size_t)h.status_len) != 0 ||
      rec->status[h.status_len - 1] != '\0') {
    goto child_failed;
  }
  if (!(rec->q = read_doubles(&c, nq, &nomem_flag)) ||
      !(rec->v = read_doubles(&c, nq, &nomem_flag)) ||
      (h.has_mu && !(rec->multipliers = read_doubles(&c, nc, &nomem_flag))) ||
      (nj > 0 && !(rec->joint_reaction = read_doubles(&c, 6 * nj, &nomem_flag))) ||
      (h.has_acc && (!(rec->acceleration = read_doubles(&c, nq, &nomem_flag)) ||
                     !(rec->algorithmic_acceleration = read_doubles(&c, nq, &nomem_flag)))) ||
      (h.has_sv && !(rec->scheme_velocity = read_doubles(&c, nq, &nomem_flag))) ||
      (h.has_jc && !(rec->joint_coordinates = read_doubles(&c, 3 * nj, &nomem_flag))) ||
      (h.has_jd && !(rec->joint_drive = read_doubles(&c, 6 * nj, &nomem_flag)))) {
    goto child_failed;
  }
  names = malloc((size_t)h.names_len + 1);
  rec->coordinate_names = calloc((size_t)(nq > 0 ? nq : 1), sizeof(char *));
  if (!names || !rec->coordinate_names) {
    nomem_flag = 1;
    goto child_failed;
  }
  if (iso_read(&c, names, (size_t)h.names_len) != 0) {
    goto child_failed;
  }
  names[h.names_len] = '\0';
  /* the /state arrays: a name of at most NAME_BYTES_MAX bytes, a bounded length */
  for (int i = 0; i < h.nstate; i++) {
    mbsLastArray *a = &rec->state[i];
    char nm[NAME_BYTES_MAX + 1];
    int k = 0;
    for (;; k++) {
      if (k > NAME_BYTES_MAX || iso_read(&c, &nm[k], 1) != 0) {
        goto child_failed;
      }
      if (nm[k] == '\0') {
        break;
      }
    }
    int64_t len = 0;
    int32_t has = 0;
    if (iso_read(&c, &len, sizeof(len)) != 0 || iso_read(&c, &has, sizeof(has)) != 0 || len < 0 ||
        len > SIZE_MAX_ANY || (has != 0 && has != 1)) {
      goto child_failed;
    }
    rec->nstate = i + 1;
    a->length = (int)len;
    a->name = copy_string(nm);
    if (!a->name) {
      nomem_flag = 1;
      goto child_failed;
    }
    if (has && !(a->data = read_doubles(&c, len, &nomem_flag))) {
      goto child_failed;
    }
  }
  if (iso_finish(&c, 0, why, sizeof(why)) != 0) {
    free(names);
    mbs_output_last_free(rec);
    return not_result(err, path, why);
  }
  /* nq names, each ending exactly where the next begins */
  size_t off = 0;
  for (long i = 0; i < nq; i++) {
    size_t len = strlen(names + off);
    if (off + len >= h.names_len) {
      free(names);
      mbs_output_last_free(rec);
      snprintf(why, sizeof(why), "the process that read it gave a malformed answer");
      return not_result(err, path, why);
    }
    rec->coordinate_names[i] = copy_string(names + off);
    if (!rec->coordinate_names[i]) {
      free(names);
      mbs_output_last_free(rec);
      return nomem(err, path);
    }
    off += len + 1;
  }
  free(names);
  names = NULL;
  if (off != h.names_len) {
    mbs_output_last_free(rec);
    snprintf(why, sizeof(why), "the process that read it gave a malformed answer");
    return not_result(err, path, why);
  }
  return MBS_OK;

child_failed:
  /* the answer ended early: how the child ended says why */
  free(names);
  mbs_output_last_free(rec);
  if (nomem_flag) {
    iso_finish(&c, 1, why, sizeof(why));
    return nomem(err, path);
  }
  if (iso_finish(&c, 0, why, sizeof(why)) == 0) {
    snprintf(why, sizeof(why), "the process that read it gave an incomplete answer");
  }
  return not_result(err, path, why);
}

/* ---------- a file at an output path ---------- */

/* what the inspecting child found */
enum { FOUND_NOT_HDF5 = 1, FOUND_NO_OPEN = 2, FOUND_OPENED = 3 };

static void inspect_work(void *arg, int fd) {
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  const char *path = arg;
  unsigned char head[8];
  int32_t found = FOUND_NOT_HDF5;
  char format[256] = "";

  /* the HDF5 signature at 0, 512, 1024, 2048, ... (where the library looks), then what the
   * writer does with such a file: open it and read its root attribute format */
  FILE *f = fopen(path, "rb");
  int hdf5 = 0;
  for (long off = 0; f && !hdf5 && off <= (1L << 24); off = off ? 2 * off : 512) {
    if (fseek(f, off, SEEK_SET) != 0 || fread(head, 1, sizeof(head), f) != sizeof(head)) {
      break;
    }
    hdf5 = memcmp(head, signature, sizeof(head)) == 0;
  }
  if (f) {
    fclose(f);
  }
  if (hdf5) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    found = FOUND_NO_OPEN;
    if (file >= 0) {
      char why[DETAIL_MAX], *value = NULL;
      found = FOUND_OPENED;
      if (read_string_attr(file, "root ", "format", &value, why) == 0) {
        snprintf(format, sizeof(format), "%s", value);
      }
      free(value);
      H5Fclose(file);
    }
  }
  iso_write(fd, &found, sizeof(found));
  iso_write(fd, format, sizeof(format));
}

mbsStatus mbs_output_inspect(const char *path, const mbsInspectLimits *lim, int *is_result,
                             mbsError *err) {
  struct stat st;
  char why[DETAIL_MAX];
  int32_t found = 0;
  char format[256];
  isoChild c;
  if (is_result) {
    *is_result = 0;
  }
  if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, R_OK) != 0) {
    /* nothing to look at here: creating the output says what is wrong with the path */
    return MBS_OK;
  }
  if (iso_start(&c, lim, inspect_work, (void *)path, why, sizeof(why)) != 0) {
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "output file '%s' exists: %s", path, why);
  }
  int ok = iso_read(&c, &found, sizeof(found)) == 0 && iso_read(&c, format, sizeof(format)) == 0;
  /* how the child ended says why an answer is missing (it is killed if still running) */
  int ended = iso_finish(&c, 0, why, sizeof(why)) == 0;
  if (!ended || !ok || found < FOUND_NOT_HDF5 || found > FOUND_OPENED) {
    if (ended) {
      snprintf(why, sizeof(why), "the process that read it gave %s answer",
               ok ? "a malformed" : "an incomplete");
    }
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "output file '%s' exists and is not an mbsim-run result (it is a "
                         "damaged HDF5 file: %s); refusing to replace it: remove it, choose "
                         "another output file, or allow overwriting it (mbsim-run --overwrite)",
                         path, why);
  }
  format[sizeof(format) - 1] = '\0';
  if (is_result) {
    *is_result = found == FOUND_OPENED && strcmp(format, FORMAT_NAME) == 0;
  }
  return MBS_OK;
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
  free(rec->joint_reaction);
  free(rec->acceleration);
  free(rec->algorithmic_acceleration);
  free(rec->scheme_velocity);
  free(rec->joint_coordinates);
  free(rec->joint_drive);
  for (int i = 0; i < rec->nstate && i < MBS_LAST_STATE_MAX; i++) {
    free(rec->state[i].name);
    free(rec->state[i].data);
  }
  memset(rec, 0, sizeof(*rec));
}
