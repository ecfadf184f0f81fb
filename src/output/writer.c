/* writer.c: the HDF5 result file (format "mbsim-run/1", docs/output.md).
 *
 * The writer keeps a registry: the code that owns a quantity declares its series (path,
 * type, row shape, units: mbs_output_add_series) or ragged table (mbs_output_add_ragged:
 * count, offsets and rows; mbs_output_add_aligned: more datasets with a row for each of
 * the table's rows), gives a row per record (mbs_output_put) and the writer stores
 * them; it names no model or integrator quantity itself, only /time.
 *
 * Every time series is a dataset with an unlimited first dimension, chunked along time
 * (about 16 KiB per chunk, at least 4 records of a longer row up to 1 MiB; a table's rows
 * and a vector or matrix per object one column or component at a time, series_init),
 * compressed with shuffle + deflate at the level the caller asks
 * for (mbsOutputInfo.deflate_level) or written without filters. Appending a record only
 * copies it into a per-dataset buffer that holds one chunk; the buffer is written as that
 * chunk, compressed here, when it is full. Every flush_interval seconds (and on request)
 * the buffers are written as they are (a chunk partly filled, padded with zeros that the
 * extent leaves out, and kept in the buffer: series_write), the file is flushed with
 * H5Fflush and the XDMF
 * sidecar gets the new records (it grows in place, see xdmf.h), so that a run killed after
 * a flush leaves a file that opens with every record up to that flush.
 *
 * That needs one more thing than H5Fflush: a chunk flushed while partly filled is written
 * again (longer) when more rows arrive, and HDF5 frees its old place in the file. With the
 * default file space strategy that place is reused at once, for any chunk that fits, so a
 * run killed before the next flush left a file whose last flushed chunks held other data
 * or did not inflate. The file is therefore created with H5F_FSPACE_STRATEGY_NONE (freed
 * space is never reused: the same rule SWMR writers follow for chunks) and each flush that
 * wrote something moves the end of the file past everything written, so no freed block
 * lies at the end either. What the last flush wrote is never overwritten until the next
 * flush has made it obsolete, but by HDF5 itself in one case: a chunk written again with
 * the size it had is written in place. It then holds the rows it held, with the same bytes
 * at the same places (shuffle puts byte j of element i at j * nelem + i whatever the
 * number of rows), and more rows where it had zeros; a chunk stored without deflate is
 * never the size of a deflated one (chunk_write), so the filter mask the last flush wrote
 * still holds. The price is the space of superseded partial chunks: at most a chunk per
 * series and flush (about 16 KiB, up to 1 MiB for 4 records of a wide row).
 *
 * The file keeps the default (earliest) format otherwise: superblock versions 0-2 carry no
 * "open for writing" flag, so a copy or a crashed file opens without h5clear (SWMR would
 * need the latest format, whose crashed files only open with h5clear or in SWMR mode).
 *
 * A file is written under a temporary name in the same directory and renamed to its own
 * name once its first record is on disk, so an earlier result of that name survives every
 * failure before that; a path holding anything but an mbsim-run result is refused unless
 * the caller asks to overwrite it (mbsOutputInfo.overwrite). */
/* realpath() is an XSI function */
#define _XOPEN_SOURCE 700

#include "mbsim/output.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "output/xdmf.h"

#define FORMAT_NAME "mbsim-run/1"
#define CHUNK_TARGET_BYTES 16384
/* records per chunk of a series whose rows exceed CHUNK_TARGET_BYTES, as far as a chunk
 * stays within CHUNK_MAX_BYTES (1 MiB: HDF5's and h5py's default chunk cache, so that
 * reading the records one by one inflates each chunk once) */
#ifndef CHUNK_MIN_ROWS
#define CHUNK_MIN_ROWS 4
#endif
#define CHUNK_MAX_BYTES (1024 * 1024)
/* the level of mbsOutputInfo.deflate_level 0 (the library's default; the deck's is none,
 * docs/output.md "Compression"). Shuffle + deflate, a whole chunk compressed by ISA-L's igzip
 * at level 1 (pack): on the chunks of the 200-link chain's records, 1.84 ns a byte against
 * libdeflate's 3.57 at its level 1, for files 2.67 against 2.77 times smaller than
 * uncompressed; levels 2..9 are libdeflate's. Before, libdeflate at
 * level 1: on the 200-link
 * chain with a record every step (16800 numbers each) zlib took 2.7 ms per record at level
 * 4 (1.9 ms at level 1) for files 2.71x smaller than uncompressed, libdeflate 0.72 ms at
 * level 1 for 2.68x, 1.4 ms at level 4 for 2.71x (docs/output.md). Readers see ordinary
 * zlib streams. (Where memory and file types differ, on a big-endian machine, HDF5
 * compresses with zlib at the same level.) */
#define DEFLATE_LEVEL 1
/* (a measurement build may set it: -DDEFAULT_FLUSH_SECONDS=1e9 leaves out the flushes that
 * callgrind's slowdown makes frequent) */
#ifndef DEFAULT_FLUSH_SECONDS
#define DEFAULT_FLUSH_SECONDS 2.0
#endif
/* free space a flush must find on the file system: new index nodes and object header
 * blocks of ~20 datasets, with a wide margin */
#define FLUSH_SPACE_BYTES (256.0 * 1024.0)
#define H5_REASON_MAX 256

/* one extendable dataset and the rows not yet written to it */
typedef struct {
  char *path;         /* dataset path */
  hid_t dset;         /* open dataset, or H5I_INVALID_HID */
  mbsOutType type;
  hid_t mem_type;     /* H5T_NATIVE_DOUBLE, _INT or _LLONG (library ids, never closed) */
  int rank;           /* including the time (or row) dimension */
  hsize_t dims[4];    /* dims[0]: rows in the file before the buffer's (a multiple of
                         chunk_rows); dims[1..]: row shape */
  hsize_t chunk_rows; /* rows per chunk, >= 1 */
  size_t row_bytes;   /* bytes of one row in memory (0 for a zero-width row) */
  unsigned char *buf; /* (chunk_rows x row_bytes) rows buffered, NULL when row_bytes = 0 */
  hsize_t nbuf;       /* rows buffered, <= chunk_rows: the chunk at row dims[0] */
  hsize_t nflushed;   /* of them in the file (a flush wrote the chunk partly filled) */
  int optional;       /* a record without a row writes NaN */
  int nonfinite_ok;   /* NaN and infinity are data here */
  int table;          /* 1: the table of a ragged series, 2: a dataset aligned with such a
                         table (mbs_output_add_aligned); their rows are not records */
  const void *row;    /* the row given for the next record, NULL when none */
  int direct;         /* memory and file type have the same bytes: whole chunks are
                         compressed here and written raw (chunk_write) */
  int columns;        /* 1: a chunk per column (the rows of a table, or the last index of a
                         body's or joint's vectors and matrices, see series_init) */
  size_t ncol;        /* chunks side by side per block of rows: the columns, or 1 */
  size_t col_stride;  /* bytes from one element of a column to the next in the buffer */
  size_t block_elems; /* > 0: the row is ncol blocks of this many elements, a chunk each
                         (mbsSeriesSpec.blocks) */
  unsigned char *stored; /* (1, or the columns) chunks to store without deflate before the
                            next one is tried again (chunk_write) */
} series;

/* what compresses whole chunks (chunk_write), shared by the series of one file: sized
 * for the largest chunk when a series is added, so a record allocates nothing */
typedef struct {
  int level; /* deflate level 1..12 (libdeflate's), 0: the chunks are written as they are,
                without filters (mbsOutputInfo.deflate_level) */
  struct libdeflate_compressor *dc; /* levels 2.. */
  struct isal_zstream *igzip;       /* level 1: igzip's stream (82 kB) and its hash tables */
  unsigned char *igzip_buf;         /* (ISAL_DEF_LVL1_DEFAULT), zeroed once (valgrind) */
  unsigned char *shuffled; /* (cap) the chunk's bytes grouped by significance */
  unsigned char *packed;   /* (cap) the deflated chunk */
  size_t cap;
} chunk_packer;

/* datasets aligned row by row with one ragged table (mbs_output_add_aligned) */
#define RAGGED_ALIGNED_MAX 4

/* a ragged table: three series and the rows of every record (for the sidecar) */
typedef struct {
  int count_h, offsets_h, table_h; /* series handles */
  int aligned_h[RAGGED_ALIGNED_MAX]; /* (naligned) series handles of the aligned datasets */
  int naligned;
  int ncols;
  const double *rows;              /* the rows given for the next record */
  long nrow;
  long long cur_count, cur_offset; /* the next record's count and offset rows */
  long long total;                 /* rows written so far */
  mbsXdmfTable hist;               /* (hist_cap) offset and count of every record */
  long hist_cap;
} ragged;

struct mbsWriter {
  char *path;          /* HDF5 file path as given (the final name) */
  char *target;        /* the file path names (where a symbolic link at path points) */
  char *tmp_path;      /* the name it is written under until its first record is on disk */
  int committed;       /* 1 once tmp_path was renamed to path */
  int dirty;           /* something was written since the last flush */
  int broken;          /* a write to the file failed: it is left as the last flush made it */
  char *xmf_path;      /* sidecar path, NULL when no sidecar */
  mbsXdmf *xmf;        /* the sidecar (written from the first flush after the commit on) */
  char *lock_path;     /* "<dir>/.<name>.lock" beside target, held while the run writes */
  int lock_fd;         /* its descriptor with a write lock (fcntl), -1 when none */
  const char *h5_name; /* basename of path (points into path): the sidecar refers to it */
  hid_t file;
  series *s;           /* (ns) the registered series; s[TIME_SERIES] is /time */
  int ns, s_cap;
  ragged **r;          /* (nr) the ragged tables (each allocated alone: the sidecar points
                          at their offsets) */
  int nr;
  long count;   /* records appended */
  char *status; /* value of the root attribute `status` */
  double *time; /* (time_cap) time of every record, for the sidecar */
  long time_cap;
  double flush_interval;      /* [s] wall time between automatic flushes */
  struct timespec last_flush; /* end of the last flush */
  chunk_packer pk;
};

/* the writer's own series */
#define TIME_SERIES 0

/* ---------- errors ---------- */

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

  /* a failed system call: HDF5's description ends in "errno = 28, error message = 'No
   * space left on device', buf = ..."; the system's message is what a user can act on */
  const char *msg = strstr(reason, "error message = '");
  if (msg) {
    char sys[H5_REASON_MAX];
    msg += strlen("error message = '");
    size_t n = strcspn(msg, "'");
    snprintf(sys, sizeof(sys), "%.*s", (int)n, msg);
    snprintf(reason, H5_REASON_MAX, "%s", sys);
  }
}

/* MBS_ERR_OUTPUT naming the file, what failed and why */
static mbsStatus h5_fail_reason(mbsError *err, const char *path, const char *what,
                                const char *object, const char *reason) {
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "output file '%s': cannot %s '%s' (%s)",
                       path, what, object, reason);
}

/* the same with the reason on HDF5's error stack now */
static mbsStatus h5_fail(mbsError *err, const char *path, const char *what, const char *object) {
  char reason[H5_REASON_MAX];
  h5_reason(reason);
  return h5_fail_reason(err, path, what, object, reason);
}

/* why the file could not be created, from the file system's point of view; returns 1 when
 * HDF5 found a file at the (temporary) name it was to create, else 0 */
static int create_reason(const char *path, char *reason, size_t n) {
  struct stat st;
  const char *slash = strrchr(path, '/');
  size_t dlen = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
  char *dir = malloc(dlen + 1);
  if (!dir) {
    snprintf(reason, n, "out of memory");
    return 0;
  }
  memcpy(dir, !slash ? "." : slash == path ? "/" : path, dlen);
  dir[dlen] = '\0';

  /* the directory: missing, not a directory, not writable */
  int bad = 1;
  if (stat(dir, &st) != 0) {
    if (errno == ENOENT) {
      snprintf(reason, n, "directory '%s' does not exist", dir);
    } else {
      snprintf(reason, n, "directory '%s': %s", dir, strerror(errno));
    }
  } else if (!S_ISDIR(st.st_mode)) {
    snprintf(reason, n, "'%s' is not a directory", dir);
  } else if (access(dir, W_OK | X_OK) != 0) {
    snprintf(reason, n, "no permission to create files in directory '%s'", dir);
  } else {
    bad = 0;
  }
  free(dir);
  if (bad) {
    return 0;
  }

  /* the file itself: a directory, or not writable */
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      snprintf(reason, n, "it is a directory");
      return 0;
    }
    if (access(path, W_OK) != 0) {
      snprintf(reason, n, "no permission to overwrite it");
      return 0;
    }
  }

  /* otherwise HDF5 knows best: the system's reason (a full disk: "No space left on
   * device"), or a lock that another program holds */
  char h5[H5_REASON_MAX];
  h5_reason(h5);
  if (strcmp(h5, strerror(EEXIST)) == 0) {
    snprintf(reason, n, "%s", h5);
    return 1;
  }
  if (strcmp(h5, strerror(EAGAIN)) == 0 || strcmp(h5, strerror(EWOULDBLOCK)) == 0) {
    snprintf(reason, n, "%s: the file is locked (is it open in another program?)", h5);
  } else {
    snprintf(reason, n, "%s", h5);
  }
  return 0;
}

/* ---------- attributes ---------- */

/* variable-length UTF-8 string type (h5py 3 reads it back as str); caller closes */
static hid_t string_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) {
    return H5I_INVALID_HID;
  }
  if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
    H5Tclose(t);
    return H5I_INVALID_HID;
  }
  return t;
}

/* write (or replace) attribute name of loc; returns < 0 on failure.
 * rank 0: a scalar, else a vector of len elements. An existing attribute is deleted and
 * created anew, so that its type and size may change. */
static herr_t attr_write(hid_t loc, const char *name, hid_t file_type, hid_t mem_type, int rank,
                         hsize_t len, const void *value) {
  herr_t rc = -1;
  hid_t space = H5I_INVALID_HID;
  hid_t attr = H5I_INVALID_HID;

  htri_t exists = H5Aexists(loc, name);
  if (exists < 0 || (exists > 0 && H5Adelete(loc, name) < 0)) {
    goto done;
  }
  space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &len, NULL);
  if (space < 0) {
    goto done;
  }
  attr = H5Acreate2(loc, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attr < 0) {
    goto done;
  }
  if (len > 0 && H5Awrite(attr, mem_type, value) < 0) {
    goto done;
  }
  rc = 0;

done:
  if (attr >= 0 && H5Aclose(attr) < 0) {
    rc = -1;
  }
  if (space >= 0 && H5Sclose(space) < 0) {
    rc = -1;
  }
  return rc;
}

static herr_t attr_string(hid_t loc, const char *name, const char *value) {
  const char *v = value ? value : "";
  hid_t t = string_type();
  if (t < 0) {
    return -1;
  }
  herr_t rc = attr_write(loc, name, t, t, 0, 1, &v);
  if (H5Tclose(t) < 0) {
    rc = -1;
  }
  return rc;
}

static herr_t attr_strings(hid_t loc, const char *name, const char *const *values, int n) {
  hid_t t = string_type();
  if (t < 0) {
    return -1;
  }
  herr_t rc = attr_write(loc, name, t, t, 1, (hsize_t)n, values);
  if (H5Tclose(t) < 0) {
    rc = -1;
  }
  return rc;
}

static herr_t attr_double(hid_t loc, const char *name, double value) {
  return attr_write(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, 1, &value);
}

static herr_t attr_int(hid_t loc, const char *name, int value) {
  return attr_write(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT, 0, 1, &value);
}

/* ---------- datasets ---------- */

/* a dataset of rank 1 or 2 written whole, not compressed and without time stamps: data in
 * mem_type (NULL: nothing to write, an empty dataset); returns < 0 on failure */
static herr_t whole_write(hid_t file, const char *path, hid_t file_type, hid_t mem_type, int rank,
                          const hsize_t *dims, const void *data) {
  herr_t rc = -1;
  hid_t space = H5Screate_simple(rank, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t dset = H5I_INVALID_HID;
  if (space < 0 || dcpl < 0 || H5Pset_obj_track_times(dcpl, 0) < 0) {
    goto done;
  }
  dset = H5Dcreate2(file, path, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dset < 0) {
    goto done;
  }
  if (data && H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    goto done;
  }
  rc = 0;

done:
  if (dset >= 0 && H5Dclose(dset) < 0) {
    rc = -1;
  }
  if (dcpl >= 0 && H5Pclose(dcpl) < 0) {
    rc = -1;
  }
  if (space >= 0 && H5Sclose(space) < 0) {
    rc = -1;
  }
  return rc;
}

/* a fixed [n] dataset of strings (body and joint names); returns < 0 on failure */
static herr_t names_write(hid_t file, const char *path, const char *const *names, int n) {
  hsize_t len = (hsize_t)n;
  hid_t t = string_type();
  if (t < 0) {
    return -1;
  }
  herr_t rc = whole_write(file, path, t, t, 1, &len, n > 0 ? (const void *)names : NULL);
  if (H5Tclose(t) < 0) {
    rc = -1;
  }
  return rc;
}

/* a fixed [nrow, ncol] dataset of numbers (type: float64, int32 or int64), written whole
 * and not compressed (a few rows that describe the model); returns < 0 on failure */
static herr_t table_write(hid_t file, const char *path, mbsOutType type, int nrow, int ncol,
                          const void *data) {
  hsize_t dims[2] = {(hsize_t)nrow, (hsize_t)ncol};
  hid_t file_type = type == MBS_OUT_INT32   ? H5T_STD_I32LE
                    : type == MBS_OUT_INT64 ? H5T_STD_I64LE
                                            : H5T_IEEE_F64LE;
  hid_t mem_type = type == MBS_OUT_INT32   ? H5T_NATIVE_INT
                   : type == MBS_OUT_INT64 ? H5T_NATIVE_LLONG
                                           : H5T_NATIVE_DOUBLE;
  return whole_write(file, path, file_type, mem_type, 2, dims,
                     nrow > 0 && ncol > 0 ? data : NULL);
}

/* the string attribute name of the dataset at path: values[0 .. n-1] (a vector), or n < 0:
 * the scalar values[0]; returns < 0 on failure */
static herr_t dataset_attr_strings(hid_t file, const char *path, const char *name,
                                   const char *const *values, int n) {
  hid_t dset = H5Dopen2(file, path, H5P_DEFAULT);
  if (dset < 0) {
    return -1;
  }
  herr_t rc = n < 0 ? attr_string(dset, name, values[0]) : attr_strings(dset, name, values, n);
  if (H5Dclose(dset) < 0) {
    rc = -1;
  }
  return rc;
}

/* row shape, memory type and chunking of a series of rank-1 + 1 dimensions (dims[1..] set
 * by the caller); allocates its buffer */
static int series_init(series *s, mbsOutType type, int rank, int table, int blocks) {
  s->dset = H5I_INVALID_HID;
  s->type = type;
  s->rank = rank;
  s->dims[0] = 0;
  size_t elem = sizeof(double);
  size_t file_elem = 8;
  s->mem_type = H5T_NATIVE_DOUBLE;
  if (type == MBS_OUT_INT32) {
    s->mem_type = H5T_NATIVE_INT;
    elem = sizeof(int);
    file_elem = 4;
  } else if (type == MBS_OUT_INT64) {
    s->mem_type = H5T_NATIVE_LLONG;
    elem = sizeof(long long);
  }

  /* about 16 KiB of file elements per chunk, at least one row; a zero-width row
   * (no coordinates, bodies or joints) still needs a chunk shape of at least 1 */
  hsize_t row_elems = 1;
  hsize_t chunk_elems = 1;
  for (int i = 1; i < s->rank; i++) {
    row_elems *= s->dims[i];
    chunk_elems *= s->dims[i] > 0 ? s->dims[i] : 1;
  }
  /* the rows of a table (contacts, ...) mix columns of unlike kinds (indices, positions,
   * impulses, flags): chunked one column at a time, shuffle and deflate see a column's
   * similar numbers together, and compress them 2.6x better in 40% less time (measured
   * on the 50 dice's /contacts/table and /state/contacts/table, docs/output.md) */
  s->columns = table && type == MBS_OUT_FLOAT64 && rank == 2 && s->dims[1] > 1;
  /* so are the series of a vector or matrix per object (/bodies/position [T, n, 3],
   * /bodies/orientation [T, n, 3, 3], /joints/reaction [T, n, 6]): a chunk holds one
   * component (the last index) of every object over several records, so that a
   * component that stays 0 (a planar motion's out-of-plane one, a ball joint's torque)
   * is a chunk of zeros, never written nor deflated, and the others deflate among like
   * numbers (docs/output.md "Compression") */
  if (!table && type == MBS_OUT_FLOAT64 && rank >= 3 && chunk_elems == row_elems &&
      s->dims[rank - 1] > 1 && s->dims[rank - 1] <= 9) {
    s->columns = 1;
  }
  s->ncol = s->columns ? (size_t)s->dims[rank - 1] : 1;
  s->col_stride = s->ncol * elem;
  /* a row of equal blocks, a chunk each (/state/previous_increments: the blocks a record
   * repeats from the one before are zeros, record.c mark_repeats, and so chunks of zeros,
   * neither shuffled, deflated nor written) */
  s->block_elems = 0;
  if (blocks > 1 && !table && !s->columns && rank == 2 && s->dims[1] > 0 &&
      s->dims[1] % (hsize_t)blocks == 0) {
    s->ncol = (size_t)blocks;
    s->block_elems = (size_t)(s->dims[1] / (hsize_t)blocks);
  }
  hsize_t chunk_row_bytes = chunk_elems / s->ncol * file_elem;
  s->chunk_rows = CHUNK_TARGET_BYTES / chunk_row_bytes;
  /* wide rows (/state/q and the integrator's arrays, a row of 14-77 kB on the 200-link
   * chain) still get CHUNK_MIN_ROWS records per chunk, up to CHUNK_MAX_BYTES: deflate then
   * sees a record beside the one before, whose high-order bytes it repeats (the step
   * history's blocks that repeat the previous record's are zeros: record.c mark_repeats;
   * docs/output.md "Compression") */
  if (s->chunk_rows < CHUNK_MIN_ROWS) {
    hsize_t most = CHUNK_MAX_BYTES / chunk_row_bytes;
    s->chunk_rows = most < CHUNK_MIN_ROWS ? most : CHUNK_MIN_ROWS;
  }
  if (s->chunk_rows < 1) {
    s->chunk_rows = 1;
  }
  s->row_bytes = (size_t)row_elems * elem;
  s->nbuf = 0;
  s->nflushed = 0;
  s->buf = NULL;
  s->stored = calloc(s->ncol, 1);
  if (!s->stored) {
    return -1;
  }
  if (s->row_bytes > 0) {
    s->buf = malloc((size_t)s->chunk_rows * s->row_bytes);
    if (!s->buf) {
      free(s->stored);
      s->stored = NULL;
      return -1;
    }
  }
  return 0;
}

/* create the empty extendable dataset of s; returns < 0 on failure */
static herr_t series_create(hid_t file, const char *path, series *s, int level) {
  herr_t rc = -1;
  hid_t space = H5I_INVALID_HID;
  hid_t dcpl = H5I_INVALID_HID;
  hid_t dapl = H5I_INVALID_HID;
  hsize_t maxdims[4];
  hsize_t chunk[4];

  /* unlimited along time; a zero row dimension is declared unlimited too because a
   * chunk dimension may not exceed a fixed maximum of 0 */
  for (int i = 0; i < s->rank; i++) {
    maxdims[i] = (i == 0 || s->dims[i] == 0) ? H5S_UNLIMITED : s->dims[i];
    chunk[i] = i == 0                                 ? s->chunk_rows
               : i == s->rank - 1 && s->columns     ? 1
               : i == s->rank - 1 && s->block_elems ? s->block_elems
               : s->dims[i] > 0                     ? s->dims[i]
                                                    : 1;
  }
  space = H5Screate_simple(s->rank, s->dims, maxdims);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  dapl = H5Pcreate(H5P_DATASET_ACCESS);
  if (space < 0 || dcpl < 0 || dapl < 0) {
    goto done;
  }

  /* no chunk cache: blocks are written whole, and a chunk reaches the disk (or fails to)
   * inside H5Dwrite, before any metadata that points at it is flushed */
  if (H5Pset_chunk_cache(dapl, 0, 0, H5D_CHUNK_CACHE_W0_DEFAULT) < 0) {
    goto done;
  }

  /* shuffle groups the bytes of neighbouring doubles before deflate, which helps
   * slowly varying time series considerably; without deflate (level 0) no filter at all */
  if (H5Pset_chunk(dcpl, s->rank, chunk) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
      (level > 0 && (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, level) < 0))) {
    goto done;
  }
  hid_t file_type = s->type == MBS_OUT_INT32   ? H5T_STD_I32LE
                    : s->type == MBS_OUT_INT64 ? H5T_STD_I64LE
                                               : H5T_IEEE_F64LE;
  s->dset = H5Dcreate2(file, path, file_type, space, H5P_DEFAULT, dcpl, dapl);
  if (s->dset < 0) {
    goto done;
  }
  htri_t same = H5Tequal(s->mem_type, file_type);
  if (same < 0) {
    goto done;
  }
  s->direct = same > 0;
  rc = 0;

done:
  if (dapl >= 0 && H5Pclose(dapl) < 0) {
    rc = -1;
  }
  if (dcpl >= 0 && H5Pclose(dcpl) < 0) {
    rc = -1;
  }
  if (space >= 0 && H5Sclose(space) < 0) {
    rc = -1;
  }
  return rc;
}

/* room in pk for chunks of the series s; returns < 0 when out of memory */
static int packer_fit(chunk_packer *pk, const series *s) {
  size_t need = (size_t)s->chunk_rows * s->row_bytes / s->ncol;
  if (pk->level == 1 && !pk->igzip) {
    pk->igzip = calloc(1, sizeof(*pk->igzip));
    pk->igzip_buf = calloc(1, ISAL_DEF_LVL1_DEFAULT);
    if (!pk->igzip || !pk->igzip_buf) {
      return -1;
    }
  } else if (pk->level > 1 && !pk->dc) {
    pk->dc = libdeflate_alloc_compressor(pk->level);
    if (!pk->dc) {
      return -1;
    }
  }
  if (need <= pk->cap) {
    return 0;
  }
  unsigned char *a = malloc(need);
  unsigned char *b = malloc(need);
  if (!a || !b) {
    free(a);
    free(b);
    return -1;
  }
  free(pk->shuffled);
  free(pk->packed);
  pk->shuffled = a;
  pk->packed = b;
  pk->cap = need;
  return 0;
}

/* the high k bytes of each 2k-byte group of word a swapped with the low k bytes of word b
 * (m: the low k bytes of each group): one stage of an 8 x 8 byte transpose */
static inline void swap_bytes(uint64_t *x, int a, int b, int k, uint64_t m) {
  uint64_t t = ((x[a] >> (8 * k)) ^ x[b]) & m;
  x[b] ^= t;
  x[a] ^= t << (8 * k);
}

/* elements i0, i0 + 1, ... of one chunk shuffled as HDF5's filter does (byte j of element i
 * goes to j * nelem + i): element i at src + i * stride (stride = esize for a whole-row
 * chunk, the row's bytes for a column of a table) */
static void shuffle_chunk(unsigned char *dst, const unsigned char *src, size_t nelem, size_t esize,
                          size_t stride) {
  size_t i0 = 0;
  if (esize == 8) {
    /* eight doubles at a time: an 8 x 8 transpose of their bytes in registers (blocks of
     * 4, 2 and 1 bytes swapped across the diagonal), a quarter of the byte loop's time or
     * less (measured on 16 KiB chunks). Direct writes have the file's little-endian bytes
     * in memory (series_create), so a word loaded with memcpy has byte j of its double in
     * bits 8j .. 8j + 7. */
    const uint64_t m4 = 0x00000000FFFFFFFFull, m2 = 0x0000FFFF0000FFFFull;
    const uint64_t m1 = 0x00FF00FF00FF00FFull;
    for (; i0 + 8 <= nelem; i0 += 8) {
      uint64_t x[8];
      for (int k = 0; k < 8; k++) {
        memcpy(&x[k], src + (i0 + (size_t)k) * stride, sizeof(uint64_t));
      }
      /* written out: the loop form runs 4x slower (measured, gcc -O2) */
      swap_bytes(x, 0, 4, 4, m4);
      swap_bytes(x, 1, 5, 4, m4);
      swap_bytes(x, 2, 6, 4, m4);
      swap_bytes(x, 3, 7, 4, m4);
      swap_bytes(x, 0, 2, 2, m2);
      swap_bytes(x, 1, 3, 2, m2);
      swap_bytes(x, 4, 6, 2, m2);
      swap_bytes(x, 5, 7, 2, m2);
      swap_bytes(x, 0, 1, 1, m1);
      swap_bytes(x, 2, 3, 1, m1);
      swap_bytes(x, 4, 5, 1, m1);
      swap_bytes(x, 6, 7, 1, m1);
      for (int j = 0; j < 8; j++) {
        memcpy(dst + (size_t)j * nelem + i0, &x[j], sizeof(uint64_t));
      }
    }
  }
  for (size_t i = i0; i < nelem; i++) {
    const unsigned char *e = src + i * stride;
    for (size_t j = 0; j < esize; j++) {
      dst[j * nelem + i] = e[j];
    }
  }
}

/* 1 when the n bytes at p are all 0 */
static int all_zero(const unsigned char *p, size_t n) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, sizeof(x));
    acc |= x;
    if (acc) {
      return 0;
    }
  }
  for (; i < n; i++) {
    acc |= p[i];
  }
  return acc == 0;
}

/* when deflate shrinks a chunk by less than 1/STORE_GAIN of its size, the next STORE_RUN
 * chunks of that series (or table column) are stored shuffled only before deflate is tried
 * again: the velocities and multipliers of the 50 dice deflate to 0.92
 * of their size at the cost of a whole deflate (docs/output.md) */
#define STORE_GAIN 8
#define STORE_RUN 15

/* the n bytes at in as a zlib stream (RFC 1950) at pk's level into out, at most cap bytes:
 * its length, 0 when it does not fit. Level 1 by ISA-L's igzip (stateless, its stream and
 * hash tables in pk: the init leaves parts of the stream as they were, which its code reads,
 * so they are zeroed once rather than taken from the stack), the others by libdeflate; any
 * zlib inflates either. */
static size_t pack(chunk_packer *pk, const unsigned char *in, size_t n, unsigned char *out,
                   size_t cap) {
  if (pk->level != 1) {
    return libdeflate_zlib_compress(pk->dc, in, n, out, cap);
  }
  if (n > UINT32_MAX || cap > UINT32_MAX) {
    return 0;
  }
  struct isal_zstream *z = pk->igzip;
  isal_deflate_stateless_init(z);
  z->level = 1;
  z->level_buf = pk->igzip_buf;
  z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
  z->gzip_flag = IGZIP_ZLIB;
  z->end_of_stream = 1;
  z->flush = NO_FLUSH;
  z->next_in = (uint8_t *)(uintptr_t)in; /* igzip reads it only */
  z->avail_in = (uint32_t)n;
  z->next_out = out;
  z->avail_out = (uint32_t)cap;
  size_t len = isal_deflate_stateless(z) == COMP_OK ? (size_t)z->total_out : 0;
#if defined(__x86_64__) || defined(__i386__)
  /* igzip's AVX-512 code returns with the upper halves of the vector registers dirty: every
   * SSE instruction after it (KLU's, libm's) then waited on them, and a run's steps took
   * twice the CPU (0.99 s against 0.49 s for 200 steps of the 200-link chain, even with no
   * record but the first and last); vzeroupper clears them */
  if (__builtin_cpu_supports("avx")) {
    __asm__ volatile("vzeroupper" ::: "memory");
  }
#endif
  return len;
}

/* the full buffer of s as the chunk at row s->dims[0] (a table's: one chunk per column),
 * through the dataset's own filter pipeline done here: HDF5's shuffle, then a zlib stream
 * (RFC 1950) from pack. A chunk stored without deflate has the deflate filter (the
 * pipeline's second) marked as skipped, as HDF5's own optional filter does. The extent
 * already covers the chunk's rows. */
static herr_t chunk_write(series *s, chunk_packer *pk) {
  size_t esize = H5Tget_size(s->mem_type);
  size_t ncol = s->ncol;
  size_t bytes = (size_t)s->chunk_rows * s->row_bytes / ncol;
  /* the chunk's place: column c of the last index (0 for whole rows) */
  hsize_t offset[4] = {s->dims[0], 0, 0, 0};
  if (esize == 0 || bytes > pk->cap) {
    return -1;
  }
  size_t block_bytes = s->block_elems * esize;
  for (size_t c = 0; c < ncol; c++) {
    /* a block of the row: its rows gathered (into packed, free until pack), a block of
     * zeros not written (see below) */
    const unsigned char *block = NULL;
    if (s->block_elems) {
      unsigned char *g = pk->level == 0 ? pk->shuffled : pk->packed;
      for (size_t r = 0; r < (size_t)s->chunk_rows; r++) {
        memcpy(g + r * block_bytes, s->buf + r * s->row_bytes + c * block_bytes, block_bytes);
      }
      offset[s->rank - 1] = c * s->block_elems;
      if (all_zero(g, bytes)) {
        continue;
      }
      block = g;
    }
    if (pk->level == 0) {
      /* no filters: the chunk's elements as they are (a table's column gathered) */
      const unsigned char *chunk = block ? block : s->buf;
      if (s->columns) {
        for (size_t i = 0; i < bytes / esize; i++) {
          memcpy(pk->shuffled + i * esize, s->buf + c * esize + i * s->col_stride, esize);
        }
        chunk = pk->shuffled;
      }
      if (s->columns) {
        offset[s->rank - 1] = c;
      }
      if (!all_zero(chunk, bytes) &&
          H5Dwrite_chunk(s->dset, H5P_DEFAULT, 0, offset, bytes, chunk) < 0) {
        return -1;
      }
      continue;
    }
    shuffle_chunk(pk->shuffled, block ? block : s->buf + c * esize, bytes / esize, esize,
                  s->columns ? s->col_stride : esize);
    /* a chunk of zeros (a drive's columns where nothing drives) is not written: a chunk
     * never written reads as the fill value, 0, in every HDF5 reader, and one a flush
     * wrote partly filled held the same rows (the buffer keeps them) and zero padding */
    if (all_zero(pk->shuffled, bytes)) {
      continue;
    }
    size_t packed = 0;
    if (s->stored[c] > 0) {
      s->stored[c]--;
    } else {
      packed = pack(pk, pk->shuffled, bytes, pk->packed, bytes);
      if (packed == 0 || packed > bytes - bytes / STORE_GAIN) {
        s->stored[c] = STORE_RUN;
      }
      /* a deflated chunk is shorter than a stored one (see the top of the file) */
      packed = packed < bytes ? packed : 0;
    }
    if (s->columns) {
      offset[s->rank - 1] = c;
    }
    herr_t rc = packed == 0
                    ? H5Dwrite_chunk(s->dset, H5P_DEFAULT, 1u << 1, offset, bytes, pk->shuffled)
                    : H5Dwrite_chunk(s->dset, H5P_DEFAULT, 0, offset, packed, pk->packed);
    if (rc < 0) {
      return rc;
    }
  }
  return 0;
}

/* the buffered rows of s to its dataset as the chunk at row dims[0]; returns < 0 on
 * failure, with HDF5's reason in reason (H5_REASON_MAX). A whole chunk empties the buffer;
 * a partly filled one (a flush) is written padded with zeros beyond its rows, which the
 * extent leaves out, and stays buffered: when more rows arrive the chunk is written again,
 * whole or longer, by the same path (no chunk is read back, inflated and merged, as
 * HDF5's own partial writes do). On failure the rows stay buffered and a later call writes
 * them to the same place. */
static herr_t series_write(series *s, chunk_packer *pk, char *reason) {
  if (s->nbuf == s->nflushed) {
    return 0;
  }
  int whole = s->nbuf == s->chunk_rows;
  herr_t rc = -1;
  hid_t fspace = H5I_INVALID_HID;
  hid_t mspace = H5I_INVALID_HID;
  hsize_t start[4] = {s->dims[0], 0, 0, 0};
  hsize_t count[4];
  hsize_t grown[4];
  for (int i = 0; i < s->rank; i++) {
    count[i] = i == 0 ? s->nbuf : s->dims[i];
    grown[i] = i == 0 ? s->dims[0] + s->nbuf : s->dims[i];
  }

  if (H5Dset_extent(s->dset, grown) < 0) {
    goto done;
  }
  if (s->row_bytes > 0 && s->direct) {
    /* compressed here (igzip and libdeflate are 4-8x faster than HDF5's zlib) */
    if (!whole) {
      memset(s->buf + (size_t)s->nbuf * s->row_bytes, 0,
             (size_t)(s->chunk_rows - s->nbuf) * s->row_bytes);
    }
    if (chunk_write(s, pk) < 0) {
      goto done;
    }
  } else if (s->row_bytes > 0) {
    fspace = H5Dget_space(s->dset);
    if (fspace < 0 || H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0) {
      goto done;
    }
    mspace = H5Screate_simple(s->rank, count, NULL);
    if (mspace < 0 || H5Dwrite(s->dset, s->mem_type, mspace, fspace, H5P_DEFAULT, s->buf) < 0) {
      goto done;
    }
  }
  if (whole) {
    s->dims[0] += s->nbuf;
    s->nbuf = 0;
    s->nflushed = 0;
  } else {
    s->nflushed = s->nbuf;
  }
  rc = 0;

done:
  /* HDF5's reason, taken before the calls below clear its error stack */
  if (rc < 0) {
    h5_reason(reason);
  }
  if (mspace >= 0 && H5Sclose(mspace) < 0) {
    rc = -1;
  }
  if (fspace >= 0 && H5Sclose(fspace) < 0) {
    rc = -1;
  }
  return rc;
}

/* ---------- writer ---------- */

static double elapsed_since(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

/* close every HDF5 id and free the writer; returns < 0 if a close failed. A broken file
 * is not closed: closing flushes, and after a failed write (a full disk) a flush writes
 * metadata that points at data that never reached the disk, spoiling what the last good
 * flush left. Its ids stay open until the process ends. */
static void release_lock(mbsWriter *w);

static herr_t writer_free(mbsWriter *w) {
  herr_t rc = 0;
  for (int i = 0; i < w->ns; i++) {
    if (!w->broken && w->s[i].dset >= 0 && H5Dclose(w->s[i].dset) < 0) {
      rc = -1;
    }
    free(w->s[i].buf);
    free(w->s[i].stored);
    free(w->s[i].path);
  }
  free(w->s);
  if (w->pk.dc) {
    libdeflate_free_compressor(w->pk.dc);
  }
  free(w->pk.igzip);
  free(w->pk.igzip_buf);
  free(w->pk.shuffled);
  free(w->pk.packed);
  if (!w->broken && w->file >= 0 && H5Fclose(w->file) < 0) {
    rc = -1;
  }
  mbs_xdmf_close(w->xmf, 0, NULL, NULL);
  for (int i = 0; i < w->nr; i++) {
    free(w->r[i]->hist.offset);
    free(w->r[i]->hist.count);
    free(w->r[i]);
  }
  free(w->r);
  release_lock(w);
  free(w->time);
  free(w->status);
  free(w->xmf_path);
  free(w->tmp_path);
  free(w->target);
  free(w->path);
  free(w);
  return rc;
}

/* check that a names array has n non-NULL entries */
static mbsStatus check_names(const char *const *names, int n, const char *what, const char *path,
                             mbsError *err) {
  if (n < 0) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "output file '%s': negative number of %s (%d)", path, what, n);
  }
  if (n > 0 && !names) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output file '%s': %d %s without names",
                         path, n, what);
  }
  for (int i = 0; i < n; i++) {
    if (!names[i]) {
      return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                           "output file '%s': name %d of the %s is NULL", path, i, what);
    }
  }
  return MBS_OK;
}

/* ---------- the file's place: an earlier result, a temporary name ---------- */

/* a temporary name beside target: "<dir>/.<name>.tmp-<pid>-<k>"; malloc'd, NULL if no
 * memory. The file is created with O_EXCL (H5F_ACC_EXCL), so a name that exists (a file or a
 * link planted there) is never opened: the next k is tried. */
static char *temp_path(const char *target, int k) {
  const char *slash = strrchr(target, '/');
  int dlen = slash ? (int)(slash - target) + 1 : 0;
  const char *base = slash ? slash + 1 : target;
  size_t n = strlen(target) + 64;
  char *t = malloc(n);
  if (t) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(t, n, "%.*s.%s.tmp-%ld-%d%04ld", dlen, target, base, (long)getpid(), k,
             (long)(ts.tv_nsec / 1000 % 10000));
  }
  return t;
}

/* ---------- one run per output file: a lock ---------- */

/* "<dir>/.<name>.lock" beside target; malloc'd */
static char *lock_name(const char *target) {
  const char *slash = strrchr(target, '/');
  int dlen = slash ? (int)(slash - target) + 1 : 0;
  const char *base = slash ? slash + 1 : target;
  size_t n = strlen(target) + 16;
  char *t = malloc(n);
  if (t) {
    snprintf(t, n, "%.*s.%s.lock", dlen, target, base);
  }
  return t;
}

/* Take the write lock of the output file: an fcntl lock on its lock file, which the system
 * releases when the process ends however it ends, so a lock file left by a killed run does
 * not block. Another live run holding it is named by its PID. */
static mbsStatus take_lock(mbsWriter *w, mbsError *err) {
  w->lock_path = lock_name(w->target);
  if (!w->lock_path) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory creating output file '%s'",
                         w->path);
  }
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd = open(w->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == ENOENT || errno == EACCES || errno == EROFS || errno == ENOTDIR) {
        /* the directory is missing or not writable: creating the file says so */
        return MBS_OK;
      }
      return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                           "cannot create output file '%s': cannot open its lock file '%s': %s",
                           w->path, w->lock_path,
                           errno == ELOOP ? "it is a symbolic link" : strerror(errno));
    }
    struct stat held, now;
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
      close(fd);
      return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                           "cannot create output file '%s': its lock file '%s' is not a regular "
                           "file",
                           w->path, w->lock_path);
    }
    if (fcntl(fd, F_SETLK, &fl) != 0) {
      int saved = errno;
      long pid = 0;
      if (saved == EAGAIN || saved == EACCES) {
        if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) {
          pid = (long)fl.l_pid;
        }
        close(fd);
        if (pid == 0) {
          continue; /* released meanwhile */
        }
        return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                             "output file '%s' is being written by another mbsim-run (PID %ld, "
                             "lock file '%s'); two runs never write one file: wait for that run "
                             "or choose another output file",
                             w->path, pid, w->lock_path);
      }
      close(fd);
      return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                           "cannot create output file '%s': cannot lock '%s': %s", w->path,
                           w->lock_path, strerror(saved));
    }
    /* the holder before us removes the file as it lets go: a lock on a removed file
     * guards nothing, so take the one that is there now */
    if (stat(w->lock_path, &now) != 0 || now.st_ino != held.st_ino ||
        now.st_dev != held.st_dev) {
      close(fd);
      continue;
    }
    /* the PID inside is for people; the lock itself names its holder */
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
      /* the lock holds without its text */
    }
    w->lock_fd = fd;
    return MBS_OK;
  }
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                       "cannot create output file '%s': its lock file '%s' keeps changing",
                       w->path, w->lock_path);
}

/* let go of the lock: the file is removed while still held (see take_lock) */
static void release_lock(mbsWriter *w) {
  if (w->lock_fd >= 0) {
    unlink(w->lock_path);
    close(w->lock_fd);
    w->lock_fd = -1;
  }
  free(w->lock_path);
  w->lock_path = NULL;
}

/* the root attribute `format` of an open file into buf ("" if it has none or it is not a
 * single string) */
static void read_format(hid_t file, char *buf, size_t n) {
  buf[0] = '\0';
  if (H5Aexists(file, "format") <= 0) {
    return;
  }
  hid_t a = H5Aopen(file, "format", H5P_DEFAULT);
  hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
  hid_t space = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
  if (t >= 0 && space >= 0 && H5Tget_class(t) == H5T_STRING &&
      H5Sget_simple_extent_npoints(space) == 1) {
    /* same character set as stored: HDF5 does not convert between ASCII and UTF-8 */
    hid_t mt = H5Tcopy(H5T_C_S1);
    if (mt >= 0 && H5Tset_cset(mt, H5Tget_cset(t)) < 0) {
      H5Tclose(mt);
      mt = H5I_INVALID_HID;
    }
    if (H5Tis_variable_str(t) > 0) {
      char *val = NULL;
      if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &val) >= 0 && val) {
        snprintf(buf, n, "%s", val);
        H5free_memory(val);
      }
    } else {
      size_t size = H5Tget_size(t);
      if (mt >= 0 && size > 0 && size < n && H5Tset_size(mt, size) >= 0 &&
          H5Aread(a, mt, buf) >= 0) {
        buf[size] = '\0';
      } else {
        buf[0] = '\0';
      }
    }
    if (mt >= 0) {
      H5Tclose(mt);
    }
  }
  if (space >= 0) {
    H5Sclose(space);
  }
  if (t >= 0) {
    H5Tclose(t);
  }
  if (a >= 0) {
    H5Aclose(a);
  }
}

/* 1 if the regular file at path is an mbsim-run result; else 0 and why says what it is */
static int is_result(const char *path, char *why, size_t n) {
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8];
  int hdf5 = 0;

  /* the HDF5 signature: at offset 0, 512, 1024, 2048, ... (where the library looks) */
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(why, n, "it cannot be read: %s", strerror(errno));
    return 0;
  }
  for (long off = 0; !hdf5 && off <= (1L << 24); off = off ? 2 * off : 512) {
    if (fseek(f, off, SEEK_SET) != 0 || fread(head, 1, sizeof(head), f) != sizeof(head)) {
      break;
    }
    hdf5 = memcmp(head, signature, sizeof(head)) == 0;
  }
  fclose(f);
  if (!hdf5) {
    snprintf(why, n, "it is not an HDF5 file");
    return 0;
  }

  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    char reason[H5_REASON_MAX];
    h5_reason(reason);
    snprintf(why, n, "it is an HDF5 file that does not open (%s; is another program writing it?)",
             reason);
    return 0;
  }
  char format[256];
  read_format(file, format, sizeof(format));
  H5Fclose(file);
  if (strcmp(format, FORMAT_NAME) == 0) {
    return 1;
  }
  if (format[0]) {
    snprintf(why, n, "it is an HDF5 file of format '%.64s'", format);
  } else {
    snprintf(why, n, "it is an HDF5 file without the root attribute format = \"%s\"", FORMAT_NAME);
  }
  return 0;
}

/* May a new result be written to path? Nothing there, or an earlier mbsim-run result (or
 * anything regular when overwrite is set). *target is the file that the new result will
 * replace: path, or where path points when it is a symbolic link (malloc'd). */
static mbsStatus check_target(mbsWriter *w, const char *path, int overwrite, mbsError *err) {
  struct stat st;
  char why[512];
  char **target = &w->target;

  *target = NULL;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    /* a link is followed; one that points nowhere is an error, never replaced */
    *target = realpath(path, NULL);
    if (!*target) {
      return mbs_output_bad_link("output file", path, errno, err);
    }
  }
  if (!*target) {
    *target = malloc(strlen(path) + 1);
    if (!*target) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                           "out of memory creating output file '%s'", path);
    }
    strcpy(*target, path);
  }
  int exists = stat(*target, &st) == 0;
  /* (nothing there, or not reachable: creating the file will say why) */
  if (exists && S_ISDIR(st.st_mode)) {
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "cannot create output file '%s': it is a directory", path);
  }
  if (exists && !S_ISREG(st.st_mode)) {
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "cannot create output file '%s': it exists and is not a regular file "
                         "(a device, pipe or socket), which a result never replaces",
                         path);
  }
  if (exists && access(*target, W_OK) != 0) {
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "cannot create output file '%s': no permission to overwrite it", path);
  }

  /* one run per file: the lock comes before a look inside (a result that another run is
   * writing does not open) */
  mbsStatus st_lock = take_lock(w, err);
  if (st_lock != MBS_OK) {
    return st_lock;
  }
  if (!exists || overwrite || is_result(*target, why, sizeof(why))) {
    return MBS_OK;
  }
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                       "output file '%s' exists and is not an mbsim-run result (%s); refusing to "
                       "replace it: remove it, choose another output file, or allow overwriting "
                       "it (mbsim-run --overwrite)",
                       path, why);
}

/* The first record is on disk: the file takes its name, replacing an earlier result */
static mbsStatus commit(mbsWriter *w, mbsError *err) {
  if (rename(w->tmp_path, w->target) != 0) {
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "output file '%s': cannot rename the temporary file '%s' to it: %s",
                         w->path, w->tmp_path, strerror(errno));
  }
  w->committed = 1;
  /* without a sidecar of its own, the run removes the one of the result it replaced */
  if (!w->xmf_path) {
    char *old = mbs_xdmf_path(w->path);
    if (old) {
      mbs_xdmf_remove_stale(old, w->h5_name);
      free(old);
    }
  }
  return MBS_OK;
}

/* the first non-finite value of the rows given for the next record (in *bad) and the
 * dataset it would go to; NULL when all are finite. Optional rows not given are skipped
 * (written as NaN on purpose: "not available"), and so are series whose columns may be NaN
 * (nonfinite_ok). */
static const char *nonfinite(const mbsWriter *w, double *bad) {
  for (int i = 0; i < w->ns; i++) {
    const series *s = &w->s[i];
    if (s->type != MBS_OUT_FLOAT64 || !s->row || s->nonfinite_ok || s->table) {
      continue;
    }
    const double *x = s->row;
    for (size_t k = 0; k < s->row_bytes / sizeof(double); k++) {
      if (!isfinite(x[k])) {
        *bad = x[k];
        return s->path;
      }
    }
  }
  for (int i = 0; i < w->nr; i++) {
    const ragged *r = w->r[i];
    const series *s = &w->s[r->table_h];
    for (long k = 0; r->rows && !s->nonfinite_ok && k < r->nrow * r->ncols; k++) {
      if (!isfinite(r->rows[k])) {
        *bad = r->rows[k];
        return s->path;
      }
    }
    for (int j = 0; j < r->naligned; j++) {
      const series *a = &w->s[r->aligned_h[j]];
      const double *x = a->row;
      long nval = r->nrow * (long)(a->row_bytes / sizeof(double));
      for (long k = 0; x && k < nval; k++) {
        if (!isfinite(x[k])) {
          *bad = x[k];
          return a->path;
        }
      }
    }
  }
  return NULL;
}

/* the rows given for the next record are forgotten */
static void forget_rows(mbsWriter *w) {
  for (int i = 0; i < w->ns; i++) {
    w->s[i].row = NULL;
  }
  for (int i = 0; i < w->nr; i++) {
    w->r[i]->rows = NULL;
    w->r[i]->nrow = 0;
  }
}

/* the groups above path ("/a/b/c": /a, /a/b), created where missing; < 0 on failure */
static herr_t make_parents(hid_t file, const char *path) {
  char buf[512];
  if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
    return -1;
  }
  for (char *p = strchr(buf + 1, '/'); p; p = strchr(p + 1, '/')) {
    *p = '\0';
    htri_t exists = H5Lexists(file, buf, H5P_DEFAULT);
    if (exists < 0) {
      return -1;
    }
    if (!exists) {
      hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
      hid_t group = H5I_INVALID_HID;
      if (gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0) {
        group = H5Gcreate2(file, buf, H5P_DEFAULT, gcpl, H5P_DEFAULT);
      }
      herr_t rc = group >= 0 ? H5Gclose(group) : -1;
      if (gcpl >= 0 && H5Pclose(gcpl) < 0) {
        rc = -1;
      }
      if (rc < 0) {
        return -1;
      }
    }
    *p = '/';
  }
  return 0;
}

/* may something be registered at path now? MBS_OK, or the error */
static mbsStatus check_new(mbsWriter *w, const char *path, mbsError *err);

mbsWriter *mbs_output_create(const char *path, const mbsOutputInfo *info, mbsError *err) {
  mbsWriter *w = NULL;
  hid_t fcpl = H5I_INVALID_HID;
  int created = 0;

  if (!path || !path[0] || !info) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no file path or no run information");
    return NULL;
  }
  if (info->n_constraints < 0) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                  "output file '%s': negative number of constraints (%d)", path,
                  info->n_constraints);
    return NULL;
  }

  /* HDF5's exit handler closes what is still open, and crashes on a file whose close
   * already failed (a full disk): the writer closes its files itself, so it goes off
   * (effective when this is the first HDF5 call of the process) */
  H5dont_atexit();

  /* the library never prints: HDF5's automatic error stack printing goes off */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

  /* the writer and its buffers */
  w = calloc(1, sizeof(*w));
  if (!w) {
    goto nomem;
  }

  w->file = H5I_INVALID_HID;
  w->lock_fd = -1;

  w->path = malloc(strlen(path) + 1);
  if (!w->path) {
    goto nomem;
  }
  strcpy(w->path, path);

  /* what is at path now: nothing, an earlier result, or something to leave alone; the
   * lock that keeps a second run off the file */
  if (check_target(w, path, info->overwrite, err) != MBS_OK) {
    goto fail;
  }
  w->flush_interval = DEFAULT_FLUSH_SECONDS;
  w->pk.level = info->deflate_level < 0   ? 0
                : info->deflate_level == 0 ? DEFLATE_LEVEL
                : info->deflate_level > 9  ? 9
                                           : info->deflate_level;
  const char *slash = strrchr(w->path, '/');
  w->h5_name = slash ? slash + 1 : w->path;
  w->status = malloc(sizeof("running"));
  if (!w->status) {
    goto nomem;
  }
  strcpy(w->status, "running");
  /* the sidecar follows the same rules, checked before anything is replaced */
  if (info->write_xdmf) {
    char *xmf_target = NULL;
    w->xmf_path = mbs_xdmf_path(path);
    if (!w->xmf_path) {
      goto nomem;
    }
    if (mbs_xdmf_check_path(w->xmf_path, info->overwrite, &xmf_target, err) != MBS_OK) {
      goto fail;
    }
    w->xmf = mbs_xdmf_create(w->xmf_path, xmf_target, w->h5_name, err);
    free(xmf_target);
    if (!w->xmf) {
      goto fail;
    }
  }

  /* the file, under its temporary name; freed file space is never reused (see the top) */
  fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (fcpl < 0 || H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, 0, 1) < 0) {
    h5_fail(err, path, "set the file space strategy of", path);
    goto fail;
  }
  /* a new name (O_EXCL): whatever is at a name already, a file or a link, stays untouched */
  for (int k = 0; k < 100 && w->file < 0; k++) {
    free(w->tmp_path);
    w->tmp_path = temp_path(w->target, k);
    if (!w->tmp_path) {
      goto nomem;
    }
    struct stat st;
    if (lstat(w->tmp_path, &st) == 0) {
      continue;
    }
    w->file = H5Fcreate(w->tmp_path, H5F_ACC_EXCL, fcpl, H5P_DEFAULT);
    if (w->file < 0) {
      char reason[1024];
      int exists = create_reason(path, reason, sizeof(reason));
      if (exists) {
        continue; /* another file took the name between the look and the creation */
      }
      /* a file that was created and could not be written (a full disk) goes */
      if (lstat(w->tmp_path, &st) == 0 && S_ISREG(st.st_mode)) {
        remove(w->tmp_path);
      }
      mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "cannot create output file '%s': %s", path,
                    reason);
      H5Pclose(fcpl);
      fcpl = H5I_INVALID_HID;
      goto fail;
    }
  }
  H5Pclose(fcpl);
  fcpl = H5I_INVALID_HID;
  if (w->file < 0) {
    mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                  "cannot create output file '%s': no free temporary name beside it", path);
    goto fail;
  }
  created = 1;

  /* root attributes (docs/output.md) */
  struct {
    const char *name;
    const char *value;
  } text[] = {
      {"format", FORMAT_NAME},
      {"version", info->version},
      {"title", info->title},
      {"deck", info->deck_text},
      {"integrator", info->integrator},
      {"integrator_reason", info->integrator_reason},
      {"linear_solver", info->linear_solver},
      {"redundant_rows", info->redundant_rows},
      {"status", w->status},
  };
  for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
    if (attr_string(w->file, text[i].name, text[i].value) < 0) {
      h5_fail(err, path, "write root attribute", text[i].name);
      goto fail;
    }
  }
  if (info->restart_from && attr_string(w->file, "restart_from", info->restart_from) < 0) {
    h5_fail(err, path, "write root attribute", "restart_from");
    goto fail;
  }
  if (attr_double(w->file, "dt", info->dt) < 0) {
    h5_fail(err, path, "write root attribute", "dt");
    goto fail;
  }
  if (attr_double(w->file, "t_end", info->t_end) < 0) {
    h5_fail(err, path, "write root attribute", "t_end");
    goto fail;
  }
  struct {
    const char *name;
    int value;
  } sizes[] = {
      {"n_coordinates", info->n_coordinates},
      {"n_constraints", info->n_constraints},
      {"n_dof", info->n_dof},
  };
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    if (attr_int(w->file, sizes[i].name, sizes[i].value) < 0) {
      h5_fail(err, path, "write root attribute", sizes[i].name);
      goto fail;
    }
  }

  /* the writer's own series: the time of every record */
  mbsSeriesSpec time_spec = {.path = "/time", .type = MBS_OUT_FLOAT64, .units = "s"};
  if (mbs_output_add_series(w, &time_spec, err) != TIME_SERIES) {
    goto fail;
  }

  /* a file that opens (status "running", no records) from the start */
  if (mbs_output_flush(w, err) != MBS_OK) {
    goto fail;
  }
  return w;

nomem:
  mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory creating output file '%s'", path);
fail:
  if (fcpl >= 0) {
    H5Pclose(fcpl);
  }
  if (w) {
    /* the temporary file goes; an earlier result at path was never touched */
    char *tmp = created ? w->tmp_path : NULL;
    if (tmp) {
      w->tmp_path = NULL;
    }
    writer_free(w);
    if (tmp) {
      remove(tmp);
      free(tmp);
    }
  }
  return NULL;
}

/* the error of every call on a writer whose file broke */
static mbsStatus abandoned(const mbsWriter *w, mbsError *err) {
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                       "output file '%s' is no longer written after the write error above: it "
                       "keeps the records of its last flush, with status 'running'",
                       w->path);
}

/* ---------- the registry ---------- */

static mbsStatus check_new(mbsWriter *w, const char *path, mbsError *err) {
  if (!w) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no writer");
  }
  if (w->broken) {
    return abandoned(w, err);
  }
  if (!path || path[0] != '/' || strlen(path) >= 500) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "output file '%s': a dataset path must start with '/' (got '%s')",
                         w->path, path ? path : "(null)");
  }
  if (w->count > 0) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "output file '%s': dataset '%s' registered after the first record",
                         w->path, path);
  }
  htri_t exists = make_parents(w->file, path) < 0 ? -1 : H5Lexists(w->file, path, H5P_DEFAULT);
  if (exists < 0) {
    return h5_fail(err, w->path, "create the groups of", path);
  }
  if (exists) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "output file '%s': dataset '%s' registered twice", w->path, path);
  }
  return MBS_OK;
}

/* a new series (dims[1..] from shape) with its dataset and `units`; its handle or -1 */
static int add_series(mbsWriter *w, const mbsSeriesSpec *spec, int table, mbsError *err) {
  if (!spec || spec->rank < 0 || spec->rank > MBS_OUT_MAX_RANK || spec->type < 0 ||
      spec->type >= MBS_OUT_TYPE_COUNT || (spec->optional && spec->type != MBS_OUT_FLOAT64)) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                  "output file '%s': bad description of dataset '%s' (rank, type, or an "
                  "optional series that is not float64)",
                  w ? w->path : "?", spec && spec->path ? spec->path : "(null)");
    return -1;
  }
  for (int i = 0; i < spec->rank; i++) {
    if (spec->shape[i] < 0) {
      mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                    "output file '%s': dataset '%s': negative dimension %d", w->path,
                    spec->path, spec->shape[i]);
      return -1;
    }
  }
  if (check_new(w, spec->path, err) != MBS_OK) {
    return -1;
  }
  if (w->ns == w->s_cap) {
    int cap = w->s_cap > 0 ? 2 * w->s_cap : 32;
    series *grown = realloc(w->s, (size_t)cap * sizeof(*grown));
    if (!grown) {
      goto nomem;
    }
    w->s = grown;
    w->s_cap = cap;
  }
  series *s = &w->s[w->ns];
  memset(s, 0, sizeof(*s));
  s->dset = H5I_INVALID_HID;
  for (int i = 0; i < spec->rank; i++) {
    s->dims[1 + i] = (hsize_t)spec->shape[i];
  }
  s->path = malloc(strlen(spec->path) + 1);
  if (!s->path) {
    goto nomem;
  }
  strcpy(s->path, spec->path);
  if (series_init(s, spec->type, spec->rank + 1, table, spec->blocks) < 0) {
    free(s->path);
    goto nomem;
  }
  if (packer_fit(&w->pk, s) < 0) {
    free(s->buf);
    free(s->stored);
    free(s->path);
    goto nomem;
  }
  s->optional = spec->optional;
  s->nonfinite_ok = spec->nonfinite_ok;
  s->table = table;
  w->ns++;
  if (series_create(w->file, s->path, s, w->pk.level) < 0) {
    h5_fail(err, w->path, "create dataset", s->path);
    return -1;
  }
  if (spec->units && attr_string(s->dset, "units", spec->units) < 0) {
    h5_fail(err, w->path, "write attribute 'units' of", s->path);
    return -1;
  }
  return w->ns - 1;

nomem:
  mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory creating output file '%s'",
                w->path);
  return -1;
}

int mbs_output_add_series(mbsWriter *w, const mbsSeriesSpec *spec, mbsError *err) {
  return add_series(w, spec, 0, err);
}

mbsStatus mbs_output_series_attr(mbsWriter *w, int h, const char *name,
                                 const char *const *values, int n, mbsError *err) {
  if (!w || h < 0 || h >= w->ns || !name) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no writer, series or name");
  }
  if (w->broken) {
    return abandoned(w, err);
  }
  mbsStatus st = check_names(values, n, name, w->path, err);
  if (st != MBS_OK || n > MBS_OUTPUT_ATTR_MAX) {
    return st;
  }
  if (attr_strings(w->s[h].dset, name, values, n) < 0) {
    char what[128];
    snprintf(what, sizeof(what), "write attribute '%s' of", name);
    return h5_fail(err, w->path, what, w->s[h].path);
  }
  return MBS_OK;
}

mbsStatus mbs_output_add_names(mbsWriter *w, const char *path, const char *const *names, int n,
                               mbsError *err) {
  mbsStatus st = check_new(w, path, err);
  if (st == MBS_OK) {
    st = check_names(names, n, path, w->path, err);
  }
  if (st == MBS_OK && names_write(w->file, path, names, n) < 0) {
    st = h5_fail(err, w->path, "write dataset", path);
  }
  return st;
}

mbsStatus mbs_output_add_table(mbsWriter *w, const mbsTableSpec *spec, mbsError *err) {
  if (!spec || spec->nrow < 0 || spec->ncol < 1 || spec->type < 0 ||
      spec->type >= MBS_OUT_TYPE_COUNT || (spec->nrow > 0 && !spec->data)) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "output file '%s': bad description of table '%s' (type, rows, "
                         "columns or data)",
                         w ? w->path : "?", spec && spec->path ? spec->path : "(null)");
  }
  mbsStatus st = check_new(w, spec->path, err);
  if (st == MBS_OK && spec->column_names) {
    st = check_names(spec->column_names, spec->ncol, "columns", w->path, err);
  }
  if (st != MBS_OK) {
    return st;
  }
  if (table_write(w->file, spec->path, spec->type, spec->nrow, spec->ncol, spec->data) < 0) {
    return h5_fail(err, w->path, "write dataset", spec->path);
  }
  if (spec->units && dataset_attr_strings(w->file, spec->path, "units", &spec->units, -1) < 0) {
    return h5_fail(err, w->path, "write attribute 'units' of", spec->path);
  }
  if (spec->column_names && spec->ncol <= MBS_OUTPUT_ATTR_MAX &&
      dataset_attr_strings(w->file, spec->path, "columns", spec->column_names, spec->ncol) < 0) {
    return h5_fail(err, w->path, "write attribute 'columns' of", spec->path);
  }
  return MBS_OK;
}

mbsStatus mbs_output_dataset_attr(mbsWriter *w, const char *path, const char *name,
                                  const char *const *values, int n, mbsError *err) {
  if (!w || !path || !name) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no writer, dataset or name");
  }
  if (w->broken) {
    return abandoned(w, err);
  }
  mbsStatus st = check_names(values, n, name, w->path, err);
  if (st != MBS_OK || n > MBS_OUTPUT_ATTR_MAX) {
    return st;
  }
  htri_t exists = H5Lexists(w->file, path, H5P_DEFAULT);
  if (exists <= 0) {
    return exists < 0 ? h5_fail(err, w->path, "look up dataset", path)
                      : mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                                      "output file '%s': no dataset '%s' for attribute '%s'",
                                      w->path, path, name);
  }
  if (dataset_attr_strings(w->file, path, name, values, n) < 0) {
    char what[128];
    snprintf(what, sizeof(what), "write attribute '%s' of", name);
    return h5_fail(err, w->path, what, path);
  }
  return MBS_OK;
}

int mbs_output_add_ragged(mbsWriter *w, const char *path, int ncols, const char *units,
                          const char *const *column_names, mbsError *err) {
  char sub[520];
  if (check_new(w, path, err) != MBS_OK) {
    return -1;
  }
  if (ncols < 1) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                  "output file '%s': ragged table '%s' needs at least one column", w->path, path);
    return -1;
  }
  ragged **grown = realloc(w->r, (size_t)(w->nr + 1) * sizeof(*grown));
  if (!grown) {
    goto nomem;
  }
  w->r = grown;
  ragged *r = calloc(1, sizeof(*r));
  if (!r) {
    goto nomem;
  }
  w->r[w->nr++] = r;
  r->ncols = ncols;

  /* count and offsets: one int64 per record; the table: ncols float64 per row */
  mbsSeriesSpec spec = {.path = sub, .type = MBS_OUT_INT64, .units = "1"};
  snprintf(sub, sizeof(sub), "%s/count", path);
  r->count_h = add_series(w, &spec, 0, err);
  snprintf(sub, sizeof(sub), "%s/offsets", path);
  r->offsets_h = r->count_h < 0 ? -1 : add_series(w, &spec, 0, err);
  snprintf(sub, sizeof(sub), "%s/table", path);
  spec.type = MBS_OUT_FLOAT64;
  spec.rank = 1;
  spec.shape[0] = ncols;
  spec.units = units;
  r->table_h = r->offsets_h < 0 ? -1 : add_series(w, &spec, 1, err);
  if (r->table_h < 0) {
    return -1;
  }
  if (column_names &&
      mbs_output_series_attr(w, r->table_h, "columns", column_names, ncols, err) != MBS_OK) {
    return -1;
  }
  return w->nr - 1;

nomem:
  mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory creating output file '%s'",
                w->path);
  return -1;
}

int mbs_output_add_aligned(mbsWriter *w, int h, const char *path, int ncols, const char *units,
                           const char *const *column_names, mbsError *err) {
  if (!w || h < 0 || h >= w->nr || ncols < 1 || w->r[h]->naligned == RAGGED_ALIGNED_MAX) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                  "output file '%s': bad aligned dataset '%s' (no such ragged table, no "
                  "column, or more than %d aligned with one table)",
                  w ? w->path : "?", path ? path : "(null)", RAGGED_ALIGNED_MAX);
    return -1;
  }
  ragged *r = w->r[h];
  mbsSeriesSpec spec = {
      .path = path, .type = MBS_OUT_FLOAT64, .rank = 1, .shape = {ncols}, .units = units};
  int a = add_series(w, &spec, 2, err);
  if (a < 0) {
    return -1;
  }
  /* which table's rows these are: tools slice it by that table's count and offsets */
  if (attr_string(w->s[a].dset, "aligned_with", w->s[r->table_h].path) < 0) {
    h5_fail(err, w->path, "write attribute 'aligned_with' of", path);
    return -1;
  }
  if (column_names &&
      mbs_output_series_attr(w, a, "columns", column_names, ncols, err) != MBS_OK) {
    return -1;
  }
  r->aligned_h[r->naligned++] = a;
  return a;
}

void mbs_output_put(mbsWriter *w, int h, const void *row) {
  if (w && h > TIME_SERIES && h < w->ns && !w->s[h].table) {
    w->s[h].row = row;
  }
}

void mbs_output_put_rows(mbsWriter *w, int h, const double *rows, long nrow) {
  if (w && h >= 0 && h < w->nr) {
    w->r[h]->rows = rows;
    w->r[h]->nrow = rows ? nrow : 0;
  }
}

void mbs_output_put_aligned(mbsWriter *w, int a, const double *rows) {
  if (w && a > TIME_SERIES && a < w->ns && w->s[a].table == 2) {
    w->s[a].row = rows;
  }
}

mbsStatus mbs_output_add_grid(mbsWriter *w, const mbsGridSpec *grid, mbsError *err) {
  if (!w || !grid || !grid->name || !grid->label || grid->kind < 0 ||
      grid->kind >= MBS_GRID_KIND_COUNT || grid->nvector < 0 ||
      (grid->nvector > 0 && !grid->vector) ||
      (grid->kind == MBS_GRID_RAGGED_POINTS && (grid->ragged < 0 || grid->ragged >= w->nr))) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: bad XDMF grid description");
  }
  if (w->count > 0) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "output file '%s': XDMF grid '%s' added after the first record",
                         w->path, grid->name);
  }
  if (!w->xmf) {
    return MBS_OK;
  }
  if (grid->kind == MBS_GRID_RAGGED_POINTS) {
    const ragged *r = w->r[grid->ragged];
    return mbs_xdmf_add_grid(w->xmf, grid, w->s[r->table_h].path, r->ncols, &r->hist, err);
  }
  return mbs_xdmf_add_grid(w->xmf, grid, NULL, 0, NULL, err);
}

/* ---------- records ---------- */

/* copy one row into the buffer of s (its row, or NaN for an optional series without one) */
static void series_push(series *s, const void *src) {
  if (s->row_bytes == 0) {
    s->nbuf++;
    return;
  }
  unsigned char *row = s->buf + (size_t)s->nbuf * s->row_bytes;
  if (src) {
    memcpy(row, src, s->row_bytes);
  } else {
    /* an optional row the caller did not give (only float64 series are optional) */
    const double nan = NAN;
    for (size_t i = 0; i + sizeof(double) <= s->row_bytes; i += sizeof(double)) {
      memcpy(row + i, &nan, sizeof(double));
    }
  }
  s->nbuf++;
}

/* room in the sidecar's record of ragged table r for one more record; < 0 out of memory */
static int hist_room(ragged *r, long count) {
  if (count < r->hist_cap) {
    return 0;
  }
  long cap = r->hist_cap > 0 ? 2 * r->hist_cap : 1024;
  long long *off = realloc(r->hist.offset, (size_t)cap * sizeof(*off));
  if (!off) {
    return -1;
  }
  r->hist.offset = off;
  long long *cnt = realloc(r->hist.count, (size_t)cap * sizeof(*cnt));
  if (!cnt) {
    return -1;
  }
  r->hist.count = cnt;
  r->hist_cap = cap;
  return 0;
}

mbsStatus mbs_output_append(mbsWriter *w, double t, mbsError *err) {
  if (!w) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no writer");
  }
  if (w->broken) {
    forget_rows(w);
    return abandoned(w, err);
  }
  w->s[TIME_SERIES].row = &t;
  /* a ragged table's count and first row of this record */
  for (int i = 0; i < w->nr; i++) {
    ragged *r = w->r[i];
    r->cur_count = r->nrow;
    r->cur_offset = r->total;
    w->s[r->count_h].row = &r->cur_count;
    w->s[r->offsets_h].row = &r->cur_offset;
  }


  /* every row that is not optional must be there */
  for (int i = 0; i < w->ns; i++) {
    const series *s = &w->s[i];
    if (!s->row && !s->optional && !s->table && s->row_bytes > 0) {
      mbsStatus st = mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                                   "output file '%s': record %ld: no row given for %s", w->path,
                                   w->count, s->path);
      forget_rows(w);
      return st;
    }
  }
  /* nor the rows of an aligned dataset when its table has rows */
  for (int i = 0; i < w->nr; i++) {
    const ragged *r = w->r[i];
    for (int j = 0; j < r->naligned && r->nrow > 0; j++) {
      const series *a = &w->s[r->aligned_h[j]];
      if (!a->row) {
        mbsStatus st = mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                                     "output file '%s': record %ld: no rows given for %s",
                                     w->path, w->count, a->path);
        forget_rows(w);
        return st;
      }
    }
  }

  char reason[H5_REASON_MAX];

  /* a record that is not finite is a solution that blew up, never a result */
  double bad = 0.0;
  const char *where = nonfinite(w, &bad);
  if (where) {
    mbsStatus st = mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0,
                                 "the record at t = %.9g holds a non-finite value (%g) in %s: "
                                 "the solution has blown up; the record was not written to '%s'",
                                 t, bad, where, w->path);
    forget_rows(w);
    return st;
  }

  /* room for the record everywhere before anything changes, so that a failure leaves
   * all series with the same number of rows (a full buffer means an earlier write failed) */
  if (w->count == w->time_cap) {
    long cap = w->time_cap > 0 ? 2 * w->time_cap : 1024;
    double *tt = realloc(w->time, (size_t)cap * sizeof(double));
    if (!tt) {
      forget_rows(w);
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing '%s'", w->path);
    }
    w->time = tt;
    w->time_cap = cap;
  }
  for (int i = 0; i < w->nr; i++) {
    if (hist_room(w->r[i], w->count) < 0) {
      forget_rows(w);
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing '%s'", w->path);
    }
  }
  for (int i = 0; i < w->ns; i++) {
    if (w->s[i].nbuf == w->s[i].chunk_rows && series_write(&w->s[i], &w->pk, reason) < 0) {
      w->broken = 1;
      forget_rows(w);
      return h5_fail_reason(err, w->path, "write dataset", w->s[i].path, reason);
    }
  }

  /* buffer the record; a series whose rows now end on a chunk boundary is written */
  for (int i = 0; i < w->ns; i++) {
    if (!w->s[i].table) {
      series_push(&w->s[i], w->s[i].row);
    }
  }
  w->time[w->count] = t;
  for (int i = 0; i < w->nr; i++) {
    ragged *r = w->r[i];
    r->hist.offset[w->count] = r->cur_offset;
    r->hist.count[w->count] = r->cur_count;
  }
  w->count++;
  w->dirty = 1;
  for (int i = 0; i < w->ns; i++) {
    series *s = &w->s[i];
    if (!s->table && (s->dims[0] + s->nbuf) % s->chunk_rows == 0 &&
        series_write(s, &w->pk, reason) < 0) {
      w->broken = 1;
      forget_rows(w);
      return h5_fail_reason(err, w->path, "write dataset", s->path, reason);
    }
  }

  /* the tables' rows: any number per record, written chunk by chunk */
  for (int i = 0; i < w->nr; i++) {
    ragged *r = w->r[i];
    series *s = &w->s[r->table_h];
    for (int j = -1; j < r->naligned; j++) {
      /* the table, then each aligned dataset: the same number of rows */
      series *a = j < 0 ? s : &w->s[r->aligned_h[j]];
      const double *rows = j < 0 ? r->rows : a->row;
      size_t width = j < 0 ? (size_t)r->ncols : a->row_bytes / sizeof(double);
      for (long k = 0; k < r->nrow; k++) {
        series_push(a, rows + (size_t)k * width);
        if ((a->dims[0] + a->nbuf) % a->chunk_rows == 0 && series_write(a, &w->pk, reason) < 0) {
          w->broken = 1;
          forget_rows(w);
          return h5_fail_reason(err, w->path, "write dataset", a->path, reason);
        }
      }
    }
    r->total += r->nrow;
  }
  forget_rows(w);

  /* periodic flush so that an interrupted run keeps its records: a flush writes what is
   * new (buffered rows, the sidecar's new grids), so its cost does not grow with the run
   * and the interval holds at any length. The first record is flushed at once: then the
   * file replaces an earlier result. */
  if (!w->committed || elapsed_since(&w->last_flush) >= w->flush_interval) {
    return mbs_output_flush(w, err);
  }
  return MBS_OK;
}

mbsStatus mbs_output_flush(mbsWriter *w, mbsError *err) {
  if (!w) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no writer");
  }
  if (w->broken) {
    return abandoned(w, err);
  }
  mbsStatus st = MBS_OK;

  /* every buffered row, then data and metadata to the operating system; a failure breaks
   * the file (writer_free says why) */
  for (int i = 0; i < w->ns; i++) {
    char reason[H5_REASON_MAX];
    if (series_write(&w->s[i], &w->pk, reason) < 0) {
      w->broken = 1;
      st = h5_fail_reason(err, w->path, "write dataset", w->s[i].path, reason);
      goto done;
    }
  }
  /* the metadata that H5Fflush writes partly in place, partly at the end of the file: on a
   * file system too full for the new part, the flush would fail half way and leave a file
   * whose metadata points at nothing. So it is not started without room to spare (on file
   * systems that report their size). */
  struct statvfs fs;
  if (statvfs(w->tmp_path && !w->committed ? w->tmp_path : w->target, &fs) == 0 &&
      fs.f_blocks > 0 && (double)fs.f_bavail * (double)fs.f_frsize < FLUSH_SPACE_BYTES) {
    w->broken = 1;
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                       "output file '%s': cannot flush: the file system is full (%.0f kB "
                       "free; a flush needs up to %.0f kB)",
                       w->path, (double)fs.f_bavail * (double)fs.f_frsize / 1024.0,
                       FLUSH_SPACE_BYTES / 1024.0);
    goto done;
  }
  if (H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) {
    w->broken = 1;
    st = h5_fail(err, w->path, "flush", w->path);
    goto done;
  }

  /* the next allocation starts past everything written so far, so that no block this
   * flush made part of the file lies at its end, where freeing would hand it out again */
  if (w->dirty && H5Fincrement_filesize(w->file, 1) < 0) {
    w->broken = 1;
    st = h5_fail(err, w->path, "extend", w->path);
    goto done;
  }
  w->dirty = 0;

  /* the first record is on disk: the file takes its name */
  if (!w->committed && w->count > 0 && (st = commit(w, err)) != MBS_OK) {
    goto done;
  }

  /* the sidecar lists exactly the records now in the file (and names the file by its
   * final name, so it waits for the commit); it grows by the new records only */
  if (w->xmf && w->committed) {
    st = mbs_xdmf_update(w->xmf, w->count, w->time, err);
  }

done:
  /* the interval counts from the end of this flush */
  clock_gettime(CLOCK_MONOTONIC, &w->last_flush);
  return st;
}

mbsStatus mbs_output_set_status(mbsWriter *w, const char *status, mbsError *err) {
  if (!w || !status) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "output: no writer or no status");
  }
  if (w->broken) {
    return abandoned(w, err);
  }

  /* HDF5 1.10 never frees the old string of a rewritten variable-length attribute
   * (about its length + 20 bytes stay in the file), so an unchanged status is not
   * rewritten and the file grows only when the status really changes */
  if (strcmp(status, w->status) != 0) {
    size_t len = strlen(status);
    char *copy = malloc(len + 1);
    if (!copy) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing '%s'", w->path);
    }
    memcpy(copy, status, len + 1);
    if (attr_string(w->file, "status", copy) < 0) {
      free(copy);
      w->broken = 1;
      return h5_fail(err, w->path, "write root attribute", "status");
    }
    free(w->status);
    w->status = copy;
    w->dirty = 1;
  }
  return mbs_output_flush(w, err);
}

long mbs_output_count(const mbsWriter *w) {
  return w ? w->count : 0;
}

mbsStatus mbs_output_close(mbsWriter *w, mbsError *err) {
  if (!w) {
    return MBS_OK;
  }

  /* the first error wins; everything is released in any case. A broken file already
   * returned its error to the call that broke it. */
  mbsStatus st = w->broken ? MBS_OK : mbs_output_flush(w, err);
  /* the finished sidecar drops its reserve */
  if (!w->broken && st == MBS_OK && w->xmf && w->committed) {
    st = mbs_xdmf_close(w->xmf, w->count, w->time, err);
    w->xmf = NULL;
  }
  char path[MBS_ERROR_MSG_MAX];
  snprintf(path, sizeof(path), "%s", w->path);

  /* a file without records never took its name: it goes, an earlier result stays */
  char *drop = NULL;
  if (!w->committed && w->count == 0) {
    drop = w->tmp_path;
    w->tmp_path = NULL;
  }
  if (writer_free(w) < 0 && st == MBS_OK) {
    st = h5_fail(err, path, "close", path);
  }
  if (drop) {
    remove(drop);
    free(drop);
  }
  return st;
}

double mbs_output_estimate(const mbsWriter *w, long nrecord, double *h5, double *xmf) {
  *h5 = 0.0;
  *xmf = 0.0;
  if (!w) {
    return -1.0;
  }
  /* (a ragged table's rows are not known before the run: not counted) */
  for (int i = 0; i < w->ns; i++) {
    if (!w->s[i].table) {
      *h5 += (double)w->s[i].row_bytes * (double)nrecord;
    }
  }
  if (w->xmf) {
    *xmf = mbs_xdmf_record_bytes(w->xmf, nrecord) * (double)nrecord;
  }
  struct statvfs fs;
  const char *where = w->tmp_path ? w->tmp_path : w->target;
  if (where && statvfs(where, &fs) == 0 && fs.f_blocks > 0) {
    return (double)fs.f_bavail * (double)fs.f_frsize;
  }
  return -1.0;
}

void mbs_output_set_flush_interval(mbsWriter *w, double seconds) {
  if (!w) {
    return;
  }
  /* NaN or negative: flush at every append; +inf: only on request */
  w->flush_interval = (isnan(seconds) || seconds < 0.0) ? 0.0 : seconds;
}
