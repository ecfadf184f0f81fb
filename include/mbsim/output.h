/* output.h: the HDF5 result file (format "mbsim-run/1", docs/output.md) and its XDMF sidecar.
 *
 * The writer knows nothing about models or integrators: the code that owns a quantity
 * registers its dataset (path, type, row shape, units), then gives one row per output step. Datasets are chunked along time with an
 * unlimited first dimension, compressed with shuffle + gzip (or not: deflate_level), and
 * flushed so that an interrupted run leaves a readable file whose root attribute `status`
 * says what happened. Only src/output/ includes the HDF5 header. */
#ifndef MBSIM_OUTPUT_H
#define MBSIM_OUTPUT_H

#include "mbsim/error.h"

typedef struct mbsWriter mbsWriter;

/* what the file describes (root attributes); strings are copied. The datasets are
 * registered afterwards by the code that owns their data (mbs_output_add_series,
 * mbs_output_add_ragged, mbs_output_add_names). */
typedef struct {
  const char *version;           /* program version, root attribute `version` */
  const char *title;             /* root attribute `title` */
  const char *deck_text;         /* root attribute `deck` */
  const char *integrator;        /* root attribute `integrator` (after auto was resolved) */
  const char *integrator_reason; /* root attribute `integrator_reason` (why it was picked) */
  const char *linear_solver;     /* root attribute `linear_solver` (NULL: written empty) */
  double dt;                     /* [s] root attribute `dt` */
  double t_end;                  /* [s] root attribute `t_end` */
  int n_coordinates;             /* root attribute */
  int n_constraints;             /* root attribute */
  int n_dof;                     /* root attribute */
  int write_xdmf;                /* 1: also write <path>.xmf (path with .h5 replaced, or
                                    appended) from the grids of mbs_output_add_grid, and append
                                    the new records at every flush */
  int deflate_level;             /* the time series' compression: shuffle + deflate at this
                                    level, 1..9; 0: level 1 (the default); < 0: none (no
                                    filters, the chunks as they are) */
  int overwrite;                 /* 1: replace whatever regular file is at the path; 0: only an
                                    earlier mbsim-run result (see mbs_output_create) */
  const char *restart_from;      /* root attribute `restart_from` ("RUN.h5 at t=5"): the run
                                    continues an earlier one; NULL: a run from t = 0 */
  const char *redundant_rows;    /* root attribute `redundant_rows`: the joint rows dropped as
                                    redundant ("joint 'D' rows 3, 4, 5"; NULL: written empty) */
} mbsOutputInfo;

/* ---- the registry: datasets declared by the code that owns their data ----
 *
 * Every series has one row per record, stored as a dataset [N, shape...] with an unlimited
 * first dimension, chunked along time (about 16 KiB per chunk) and compressed with
 * shuffle + deflate. The writer itself owns /time [N] (units "s"), the argument of
 * mbs_output_append. Registration happens between mbs_output_create and the first
 * mbs_output_append; handles are small integers >= 0, valid for that writer. Registering
 * writes to the file without flushing: an mbs_output_flush after it puts the complete empty
 * file on disk (the first record flushes in any case). */

/* element type of a series */
typedef enum { MBS_OUT_FLOAT64, MBS_OUT_INT32, MBS_OUT_INT64, MBS_OUT_TYPE_COUNT } mbsOutType;

#define MBS_OUT_MAX_RANK 3 /* dimensions of one row */

/* what a series is; strings are copied */
typedef struct {
  const char *path;            /* "/bodies/position"; missing parent groups are created */
  mbsOutType type;
  int rank;                    /* dimensions of one row, 0 (a scalar per record) .. 3 */
  int shape[MBS_OUT_MAX_RANK]; /* row shape; a 0 gives an empty row (the dataset is still
                                  written, [N, 0, ...]) */
  const char *units;           /* attribute `units` (NULL: none) */
  int optional;                /* 1: a record that gives no row writes NaN (float64 only);
                                  0: a row is required unless the row is empty */
  int nonfinite_ok;            /* 1: NaN or infinity may be written (unused columns); 0: a
                                  non-finite value refuses the whole record (blown up) */
  int blocks;                  /* > 1, rank 1 and a length it divides: the row is that many
                                  equal blocks, chunked apart, so that a block of zeros is a
                                  chunk never written (0 or 1: the row whole) */
} mbsSeriesSpec;

/* declare a series; returns its handle, or -1 with err filled (MBS_ERR_ARGS: a bad spec, a
 * second object at that path, a call after the first record; MBS_ERR_OUTPUT: HDF5 failed) */
int mbs_output_add_series(mbsWriter *w, const mbsSeriesSpec *spec, mbsError *err);

/* the string attribute name = values[0 .. n-1] (a vector) of series h. HDF5 keeps
 * attributes in the object header, at most 64 KiB: a vector longer than MBS_OUTPUT_ATTR_MAX
 * is not written (MBS_OK; such labels belong in a dataset, see mbs_output_add_names). */
#define MBS_OUTPUT_ATTR_MAX 4000
mbsStatus mbs_output_series_attr(mbsWriter *w, int h, const char *name,
                                 const char *const *values, int n, mbsError *err);

/* a fixed dataset [n] of strings at path (labels such as /bodies/names); strings copied */
mbsStatus mbs_output_add_names(mbsWriter *w, const char *path, const char *const *names, int n,
                               mbsError *err);

/* a fixed table: nrow rows of ncol numbers that describe the model, not a record (the
 * shapes of bodies and ground); strings and data copied (written at once) */
typedef struct {
  const char *path;                /* "/shapes/table"; missing parent groups are created */
  mbsOutType type;                 /* float64, int32 (data: int) or int64 (long long) */
  int nrow, ncol;                  /* nrow >= 0 (an empty table is written [0, ncol]), ncol > 0 */
  const void *data;                /* (nrow x ncol) row-major; may be NULL when nrow = 0 */
  const char *units;               /* attribute `units` (NULL: none) */
  const char *const *column_names; /* (ncol) attribute `columns` (NULL: none) */
} mbsTableSpec;

/* write a fixed table [nrow, ncol] now (before the first record, like every registration).
 * MBS_ERR_ARGS: a bad spec, a second object at that path, a call after the first record;
 * MBS_ERR_OUTPUT: HDF5 failed */
mbsStatus mbs_output_add_table(mbsWriter *w, const mbsTableSpec *spec, mbsError *err);

/* the string attribute name = values[0 .. n-1] (a vector) of the dataset at path (a table or
 * names dataset written before); not written for n > MBS_OUTPUT_ATTR_MAX (MBS_OK), as
 * mbs_output_series_attr */
mbsStatus mbs_output_dataset_attr(mbsWriter *w, const char *path, const char *name,
                                  const char *const *values, int n, mbsError *err);

/* A ragged table: a varying number of rows of ncols float64 per record (contacts), stored
 * as <path>/table [R, ncols] (the rows of every record, appended), <path>/count [N] (int64:
 * rows of each record) and <path>/offsets [N] (int64: index in table of each record's first
 * row). units: attribute `units` of table; column_names (ncols strings, may be NULL): its
 * attribute `columns`. Returns a ragged handle (numbered apart from series) or -1. */
int mbs_output_add_ragged(mbsWriter *w, const char *path, int ncols, const char *units,
                          const char *const *column_names, mbsError *err);

/* A dataset aligned with the rows of ragged table h: path [R, ncols] float64 whose row k
 * belongs with row k of h's table (a second table sharing its count and offsets, such as
 * /contacts/impulse_since_record beside /contacts/table). Attributes: `units`, `columns`
 * (column_names, may be NULL) and `aligned_with` (the path of h's table). At most 4 per
 * ragged table, registered before the first record. Returns a handle for
 * mbs_output_put_aligned or -1. */
int mbs_output_add_aligned(mbsWriter *w, int h, const char *path, int ncols, const char *units,
                           const char *const *column_names, mbsError *err);

/* the rows of aligned dataset a for the next append: as many as mbs_output_put_rows gives
 * its table (nrow x ncols, row-major), kept by pointer; required when that table has rows */
void mbs_output_put_aligned(mbsWriter *w, int a, const double *rows);

/* the row of series h for the next mbs_output_append: the pointer is kept (not the data)
 * until that append reads it; NULL: none (optional series only) */
void mbs_output_put(mbsWriter *w, int h, const void *row);

/* the nrow rows (nrow x ncols, row-major) of ragged table h for the next append, kept by
 * pointer as in mbs_output_put (nrow = 0 or nothing given: no rows in this record) */
void mbs_output_put_rows(mbsWriter *w, int h, const double *rows, long nrow);

/* ---- the XDMF sidecar: a list of grids, one temporal collection each ---- */

typedef enum {
  MBS_GRID_POINTS,        /* npoint points (Polyvertex): bodies, joints */
  MBS_GRID_POLYLINE,      /* npoint nodes joined in order (one Polyline): a beam's centreline */
  MBS_GRID_RAGGED_POINTS, /* a varying number of points per record: the rows of a ragged
                             table (contacts) */
  MBS_GRID_KIND_COUNT
} mbsGridKind;

/* three components of a float64 series [N, np, width] (ragged grids: of the table [R,
 * width]) */
typedef struct {
  const char *name; /* XDMF attribute Name ("velocity"); unused for the position */
  const char *path; /* the series ("/bodies/velocity"); ragged grids: unused (the table) */
  int width;        /* size of its last dimension (3 for a vector, 6 for a wrench) */
  int component;    /* first of the three components */
  int director;     /* 1: the series holds row-major 3 x 3 matrices [N, np, 3, 3] and the
                       vector is their column `component` (width unused) */
} mbsGridVector;

/* one temporal collection of the sidecar; strings and arrays are copied */
typedef struct {
  mbsGridKind kind;
  const char *name;            /* collection Name ("bodies": the block name in ParaView) */
  const char *label;           /* each grid's Name: "<label> <record>" */
  int npoint;                  /* points or nodes (POINTS, POLYLINE) */
  int ragged;                  /* RAGGED_POINTS: the handle of mbs_output_add_ragged */
  mbsGridVector position;      /* the geometry (XYZ) */
  int nvector;
  const mbsGridVector *vector; /* (nvector) node attributes of AttributeType Vector */
} mbsGridSpec;

/* add a temporal collection to the sidecar (after those added before); does nothing when
 * the writer writes no sidecar. MBS_ERR_ARGS after the first record or for a bad spec. */
mbsStatus mbs_output_add_grid(mbsWriter *w, const mbsGridSpec *grid, mbsError *err);

/* Create the result file for path, write the root attributes with status "running" and
 * create the empty datasets. Returns NULL and fills err on failure (the message names the
 * path and the reason).
 * What is at path is kept until the new file has its first record on disk: the file is
 * written under a new name "<dir>/.<name>.tmp-<pid>-<k>" (created with O_EXCL: nothing
 * there, a file or a link, is ever opened) and renamed to path by the flush that follows
 * the first mbs_output_append (the sidecar <path>.xmf appears then and names the final
 * file); closing a writer without records removes the temporary file. A regular file at
 * path that is not an mbsim-run result (not HDF5, or without the root attribute
 * format = "mbsim-run/1") is refused unless info->overwrite is set; a directory, device or
 * other non-regular file is always refused; a symbolic link is followed, and one that
 * points nowhere (dangling, or a loop of links) is refused. The sidecar's path gets the
 * same checks (a file there that mbsim-run did not write is refused unless
 * info->overwrite), all before anything is replaced.
 * One run writes a file at a time: the writer holds an fcntl lock on "<dir>/.<name>.lock"
 * (removed at close; a lock file left by a killed run does not block), and a second
 * writer of the same file is refused with the PID of the holder. */
mbsWriter *mbs_output_create(const char *path, const mbsOutputInfo *info, mbsError *err);

/* Append one record at time t [s]: the rows given since the last append (mbs_output_put,
 * mbs_output_put_rows) go to their series, /time gets t. All or nothing: a required row
 * that was not given (MBS_ERR_ARGS, naming the dataset) or a non-finite value
 * (MBS_ERR_SOLVER "the record at t = ... holds a non-finite value ... in <dataset>: the
 * solution has blown up") refuses the record with nothing written; the rows given are then
 * forgotten. Flushes the file (and appends to the XDMF) when at least flush_seconds of wall
 * time passed since the last flush. */
mbsStatus mbs_output_append(mbsWriter *w, double t, mbsError *err);

/* flush data and metadata to disk now, bring the XDMF sidecar up to date */
mbsStatus mbs_output_flush(mbsWriter *w, mbsError *err);

/* set the root attribute `status` ("running", "completed", "failed: ...",
 * "interrupted at t=...") and flush */
mbsStatus mbs_output_set_status(mbsWriter *w, const char *status, mbsError *err);

/* number of records appended so far */
long mbs_output_count(const mbsWriter *w);

/* flush and close; accepts NULL; returns the first error met while closing.
 * After a failed write to the file (a full disk, an I/O error) the writer stops writing:
 * append, flush and set_status return MBS_ERR_OUTPUT at once, the file keeps what its last
 * successful flush wrote (status "running"), and close releases the writer without
 * flushing (HDF5's ids for that file stay open until the process ends) and returns MBS_OK. */
mbsStatus mbs_output_close(mbsWriter *w, mbsError *err);

/* seconds of wall time between automatic flushes (default 2.0; 0 or less: at every
 * append; INFINITY: only on request). A flush writes only what is new (the sidecar grows in
 * place), so the interval holds at any run length. */
void mbs_output_set_flush_interval(mbsWriter *w, double seconds);

/* what a run of nrecord records will write: *h5 the bytes of its datasets uncompressed (an
 * upper bound of the file), *xmf the bytes of the sidecar (0 without one); returns the bytes
 * free on the output's file system, or -1 when unknown */
double mbs_output_estimate(const mbsWriter *w, long nrecord, double *h5, double *xmf);

/* one named array of a record's /state group (an integrator's array) */
typedef struct {
  char *name;   /* "scheme_velocity": the dataset /state/<name> */
  int length;   /* its values per record */
  double *data; /* (length) the last record's values; NULL when NaN throughout (none) */
} mbsLastArray;

#define MBS_LAST_STATE_MAX 16 /* at most this many arrays in /state besides q, v, names */

/* the last record of a result file, read back to continue the run (mbsim-run --restart) */
typedef struct {
  long nrecord;            /* records in the file (the last one is index nrecord - 1) */
  char *status;            /* root attribute `status` */
  double dt;               /* [s] root attribute `dt` (finite, > 0) */
  double t_end;            /* [s] root attribute `t_end` (finite, > 0) */
  int n_coordinates;       /* root attribute, also the length of q, v and coordinate_names */
  int n_constraints;       /* root attribute, also the length of multipliers */
  int njoint;              /* length of /joints/names */
  char **coordinate_names; /* (n_coordinates) attribute `names` of /state/q */
  double time;             /* [s] /time of the last record */
  double first_time;       /* [s] /time of the first record (the restart time of a restarted
                              run, else 0) */
  double external_work;    /* [J] /energy/external_work */
  double dissipated;       /* [J] /energy/dissipated */
  double contact_dissipated; /* [J] /energy/contact_dissipated (0 in files without it) */
  double impact_dissipated, friction_dissipated, numerical_dissipation; /* [J]
                           /energy/impact_dissipated, friction_dissipated,
                           numerical_dissipation (0 in files without them) */
  double capture_dissipated; /* [J] /energy/capture_dissipated (0 in files without it) */
  int iterations;          /* /solver/iterations (>= 0) */
  double step_size;        /* [s] /solver/step_size (>= 0); 0 when the file has none */
  double *q, *v;           /* (n_coordinates) /state/q and /state/v */
  double *multipliers;     /* (n_constraints) /state/multipliers; NULL when the file has none
                              (older files) or they are NaN throughout (none were given) */
  double *joint_reaction;  /* (njoint x 6) /joints/reaction; NULL when njoint = 0 */
  double *joint_coordinates; /* (njoint x 3) /joints/coordinates of the record (NULL in files
                                without it) */
  double *joint_drive;     /* (njoint x 6) /joints/drive of the record (NULL in files without
                              it) */
  double *scheme_velocity; /* (n_coordinates) /state/scheme_velocity: the integrator's own
                              velocities (NULL in files without it; then /state/v) */
  double *acceleration;    /* (n_coordinates) /state/acceleration and */
  double *algorithmic_acceleration; /* /state/algorithmic_acceleration of a genalpha run; NULL
                                       when the file has none or they are NaN throughout */
  int nstate;              /* every float64 dataset /state/<name> [N, length] besides q and v,
                              in name order: the integrator's arrays, whatever their names
                              (scheme_velocity, multipliers, acceleration, ...) */
  mbsLastArray state[MBS_LAST_STATE_MAX];
} mbsLastRecord;

/* Read the last record of the result file at path into rec (caller-owned; release with
 * mbs_output_last_free), in this process: only for files this program wrote itself (and
 * for fuzzing the reader); a file from elsewhere goes through
 * mbs_output_read_last_isolated. The file must be a regular file in the "mbsim-run/1"
 * format with at least one record: every attribute and dataset read is checked for its
 * type, rank, shape and size before it is read (hard links only, datasets stored in the
 * file, the writer's filters), and the record must hold finite numbers (multipliers and
 * accelerations may be NaN throughout: none). When the datasets hold different numbers of
 * rows (a run killed while writing), the last row they all have is taken. Returns
 * MBS_ERR_IO (missing, unreadable, not a regular file, not HDF5) or MBS_ERR_OUTPUT ("...
 * is not an mbsim-run result: ...", or a non-finite value in the record) with err filled,
 * naming the path and the attribute or dataset; rec then holds nothing to free. */
mbsStatus mbs_output_read_last(const char *path, mbsLastRecord *rec, mbsError *err);

/* the sizes a result file must have to belong to a model */
typedef struct {
  int n_coordinates, n_constraints, njoint;
} mbsModelSizes;

/* mbs_output_read_last, in this process, with the sizes checked as
 * mbs_output_read_last_isolated checks them (sizes may be NULL) */
mbsStatus mbs_output_read_last_sized(const char *path, const mbsModelSizes *sizes,
                                     mbsLastRecord *rec, mbsError *err);

/* limits of the child process that reads a file this program did not write */
#define MBS_INSPECT_SECONDS 20.0
#define MBS_INSPECT_MEMORY_MB 1024.0
typedef struct {
  double seconds;   /* [s] wall and CPU time; <= 0: MBS_INSPECT_SECONDS */
  double memory_mb; /* [MiB] address space it may add to the caller's; <= 0:
                       MBS_INSPECT_MEMORY_MB (not limited under AddressSanitizer) */
} mbsInspectLimits;

/* mbs_output_read_last for an untrusted file: the file is opened and read only by a forked
 * child process limited by lim (NULL: the defaults), which sends the record back through a
 * pipe; this process never opens it (HDF5 may crash, loop or allocate without bound on a
 * damaged file). A non-regular file (a FIFO, a device) is refused before anything opens
 * it. With sizes (may be NULL), a file whose n_coordinates, n_constraints or number of
 * joints differ is refused with MBS_ERR_MODEL before anything of the size the file claims
 * is allocated, its sizes then in rec's size fields (nothing to free). A child that dies,
 * exceeds a limit or answers out of form gives MBS_ERR_OUTPUT "... is not an mbsim-run
 * result: reading it crashed ... / did not finish within ...". Forks: call it while the
 * process has one thread. Other results as for mbs_output_read_last. */
mbsStatus mbs_output_read_last_isolated(const char *path, const mbsModelSizes *sizes,
                                        const mbsInspectLimits *lim, mbsLastRecord *rec,
                                        mbsError *err);

/* Look at the file at an output path as mbs_output_create does before replacing it (the
 * HDF5 signature, then the root attribute format), in a forked child limited by lim (NULL:
 * the defaults). MBS_OK when there is nothing to look at (no file, not a regular file) or
 * the child finished, *is_result (may be NULL) then 1 for an mbsim-run result;
 * MBS_ERR_OUTPUT ("output file '...' exists and is not an mbsim-run result (it is a damaged
 * HDF5 file: ...); refusing to replace it ...") when looking at it crashed the child, hung
 * or exceeded its memory: such a file must not be opened in this process. */
mbsStatus mbs_output_inspect(const char *path, const mbsInspectLimits *lim, int *is_result,
                             mbsError *err);

/* release what mbs_output_read_last allocated (accepts NULL and a zeroed rec) */
void mbs_output_last_free(mbsLastRecord *rec);

#endif
