/* output.h: the HDF5 result file (format "mbsim-run/1", README "Output") and its XDMF sidecar.
 *
 * The writer knows nothing about models or integrators: it is given names and sizes
 * once, then one mbsRecord per output step. Datasets are chunked along time with an
 * unlimited first dimension, compressed with shuffle + gzip, and flushed so that an
 * interrupted run leaves a readable file whose root attribute `status` says what
 * happened. Only src/output/ includes the HDF5 header. */
#ifndef MBSIM_OUTPUT_H
#define MBSIM_OUTPUT_H

#include "mbsim/error.h"

typedef struct mbsWriter mbsWriter;

/* what the file describes; strings are copied, arrays are read during the call only */
typedef struct {
  const char *version;                 /* program version, root attribute `version` */
  const char *title;                   /* root attribute `title` */
  const char *deck_text;               /* root attribute `deck` */
  const char *integrator;              /* root attribute `integrator` (after auto was resolved) */
  const char *integrator_reason;       /* root attribute `integrator_reason` (why it was picked) */
  const char *linear_solver;           /* root attribute `linear_solver` (NULL: written empty) */
  double dt;                           /* [s] root attribute `dt` */
  double t_end;                        /* [s] root attribute `t_end` */
  int n_coordinates;                   /* n: root attribute and second dimension of /state/q */
  int n_constraints;                   /* root attribute */
  int n_dof;                           /* root attribute */
  const char *const *coordinate_names; /* n labels like "link1.d2.z" (dataset /state/names;
                                          also the attribute `names` of /state/q and /state/v
                                          for n <= 4000, where it fits an object header) */
  const char *const *coordinate_units; /* n units of /state/q ("m", "1", "rad"; at most 6
                                          characters), written with those per second and per
                                          second squared as the attribute `column_units` of
                                          the /state series for n <= 4000; NULL: none */
  const char *const *joint_units;      /* nj units of each joint's /joints/coordinates ("rad",
                                          "rad, m", ...: attribute `joint_units`); NULL: none */
  const char *const *joint_rate_units; /* nj units of /joints/rates; NULL: none */
  int nbody;                           /* nb */
  const char *const *body_names;       /* nb names */
  int write_xdmf;                      /* 1: also write <path>.xmf (path with .h5 replaced, or
                                          appended) and append the new records at every
                                          flush */
  int njoint;                          /* nj (0 when there are no joints: /joints datasets are
                                          then written with a zero second dimension) */
  const char *const *joint_names;      /* nj names (dataset /joints/names); NULL when nj = 0 */
  int nload;                           /* nl */
  const char *const *load_names;       /* nl names (dataset /loads/names); NULL when nl = 0 */
  int overwrite;                       /* 1: replace whatever regular file is at the path; 0:
                                          only an earlier mbsim-run result (see
                                          mbs_output_create) */
  const char *restart_from;            /* root attribute `restart_from` ("RUN.h5 at t=5"): the
                                          run continues an earlier one; NULL: a run from t = 0 */
  int write_acceleration;              /* 1 (genalpha): also the datasets /state/acceleration
                                          and /state/algorithmic_acceleration [N,n] */
  const char *redundant_rows;          /* root attribute `redundant_rows`: the joint rows
                                          dropped as redundant ("joint 'D' rows 3, 4, 5"; NULL:
                                          written empty) */
} mbsOutputInfo;

/* one output record: all quantities at the end of a step, SI, world components */
typedef struct {
  double time;                 /* [s] */
  double kinetic;              /* [J] */
  double potential;            /* [J] */
  double external_work;        /* [J] since t = 0 */
  double dissipated;           /* [J] since t = 0 */
  double linear_momentum[3];   /* [kg m/s] */
  double angular_momentum[3];  /* [kg m^2/s] about the world origin */
  double violation;            /* [m or 1] max norm of g(q) */
  double velocity_violation;   /* [m/s or 1/s] max norm of G(q) v + dg/dt of the recorded v
                                  (/constraints/velocity_violation) */
  int iterations;              /* Newton iterations of the step that ended here */
  int factorizations;          /* numeric factorizations since the previous record (/solver/...) */
  int solves;                  /* linear solves since the previous record (/solver/solves) */
  double step_size;            /* [s] size of the last (sub)step that ended here, the dt
                                  of lambda = mu / dt^2 (/solver/step_size); 0 at t = 0 */
  const double *q;             /* (n) */
  const double *v;             /* (n) velocities, consistent with the constraints */
  const double *scheme_velocity; /* (n) the integrator's own velocities, from which a restart
                                  continues (/state/scheme_velocity); NULL: written as NaN */
  const double *body_position; /* (nb x 3) centre of mass */
  const double *body_orientation;      /* (nb x 3 x 3) row-major rotation matrix, column i = d_i */
  const double *body_velocity;         /* (nb x 3) */
  const double *body_angular_velocity; /* (nb x 3) */
  const double *joint_reaction;        /* (nj x 6) force (3) and torque (3) that each joint exerts
                                          on its second body, world, about the joint point */
  const double *joint_position;        /* (nj x 3) [m] world position of each joint point, fixed
                                          to the joint's second body (/joints/position); NULL:
                                          written as NaN */
  const double *joint_coordinates;     /* (nj x 3) [rad or m] /joints/coordinates; NULL: NaN */
  const double *load_force;            /* (nl x 6) [N, N m] force and torque of each load on its
                                          second body (/loads/force); NULL: NaN */
  const double *joint_rates;           /* (nj x 3) [rad/s or m/s] /joints/rates; NULL: NaN */
  const double *multipliers;           /* (n_constraints) Lagrange multipliers lambda of the step
                                          that ended here, in the units of each constraint row
                                          (/state/multipliers; a restart's predictor starts from
                                          them); NULL: written as NaN */
  const double *acceleration;          /* (n) genalpha: the accelerations qdd of the step that
                                          ended here (/state/acceleration); NULL: NaN */
  const double *algorithmic_acceleration; /* (n) genalpha: the algorithmic accelerations a
                                          (/state/algorithmic_acceleration); NULL: NaN */
} mbsRecord;

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

/* append one record; flushes the file (and appends to the XDMF) when at least
 * flush_seconds of wall time passed since the last flush */
mbsStatus mbs_output_append(mbsWriter *w, const mbsRecord *rec, mbsError *err);

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
  int iterations;          /* /solver/iterations (>= 0) */
  double step_size;        /* [s] /solver/step_size (>= 0); 0 when the file has none */
  double *q, *v;           /* (n_coordinates) /state/q and /state/v */
  double *multipliers;     /* (n_constraints) /state/multipliers; NULL when the file has none
                              (older files) or they are NaN throughout (none were given) */
  double *joint_reaction;  /* (njoint x 6) /joints/reaction; NULL when njoint = 0 */
  double *joint_coordinates; /* (njoint x 3) /joints/coordinates of the record (NULL in files
                                without it) */
  double *scheme_velocity; /* (n_coordinates) /state/scheme_velocity: the integrator's own
                              velocities (NULL in files without it; then /state/v) */
  double *acceleration;    /* (n_coordinates) /state/acceleration and */
  double *algorithmic_acceleration; /* /state/algorithmic_acceleration of a genalpha run; NULL
                                       when the file has none or they are NaN throughout */
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
