/* xdmf.h: the XDMF 2 sidecar that lets ParaView read the HDF5 result file (private to
 * src/output/). The sidecar copies no data: every DataItem is a HyperSlab into the
 * time-major datasets, one Uniform grid per record inside one temporal collection per grid
 * of the list (mbsGridSpec: bodies, joints, beams' polylines, contact points).
 *
 * The sidecar grows in place: a flush appends the grids of the new records (and rewrites
 * the few bytes of the closing tags and of the record counts), so its cost is proportional
 * to what is new, not to the length of the run. Every collection but the last keeps a
 * reserve of XML comments that new grids overwrite; when one is used up the file is written
 * anew with reserves as large as what comes before them (so rewrites are rare and cost O(1)
 * per record on average), and at the end the reserves are dropped. */
#ifndef MBSIM_OUTPUT_XDMF_H
#define MBSIM_OUTPUT_XDMF_H

#include "mbsim/error.h"
#include "mbsim/output.h"

typedef struct mbsXdmf mbsXdmf;

/* sidecar path for an HDF5 path: a trailing ".h5" replaced by ".xmf", else ".xmf"
 * appended; returns a malloc'd string (caller frees) or NULL when out of memory */
char *mbs_xdmf_path(const char *h5_path);

/* May the sidecar be written at xmf_path? Nothing there, or a sidecar that mbsim-run
 * wrote, or (overwrite) any regular file. A symbolic link is followed (*target is where it
 * points), a dangling link or a loop of links is refused, and so are directories and other
 * non-regular files. *target is malloc'd (caller frees) on MBS_OK. Changes nothing. */
mbsStatus mbs_xdmf_check_path(const char *xmf_path, int overwrite, char **target, mbsError *err);

/* a sidecar to be written at target (the checked path; messages name xmf_path) for the
 * HDF5 file h5_name (a basename, as the sidecar refers to it, so that the pair can be moved
 * together), without grids yet. Nothing is written before the first mbs_xdmf_update (and
 * nothing at all while it has no grid). NULL with err filled on failure. */
mbsXdmf *mbs_xdmf_create(const char *xmf_path, const char *target, const char *h5_name,
                         mbsError *err);

/* the rows of a ragged table as the writer keeps them: offset[k], count[k] of record k
 * (the arrays may move between updates; the struct stays) */
typedef struct {
  long long *offset;
  long long *count;
} mbsXdmfTable;

/* add a collection (spec copied) before the first update; a ragged grid takes its points
 * from the table dataset table_path [R, table_width] and its rows from table */
mbsStatus mbs_xdmf_add_grid(mbsXdmf *x, const mbsGridSpec *spec, const char *table_path,
                            int table_width, const mbsXdmfTable *table, mbsError *err);

/* bring the sidecar to records 0 .. nrecord-1 at times time[k] [s]: the first call writes
 * it (under a temporary name created with O_EXCL, renamed into place), later calls append
 * in place. Returns MBS_ERR_OUTPUT or MBS_ERR_NOMEM with err filled on failure; the file
 * then still lists the records of the last successful update. */
mbsStatus mbs_xdmf_update(mbsXdmf *x, long nrecord, const double *time, mbsError *err);

/* drop a large reserve (the file written anew, compact) and release; accepts NULL */
mbsStatus mbs_xdmf_close(mbsXdmf *x, long nrecord, const double *time, mbsError *err);

/* bytes the sidecar takes per record for a run of about nrecord records (ragged grids
 * counted empty); 0 for NULL */
double mbs_xdmf_record_bytes(const mbsXdmf *x, long nrecord);

/* the error for a symbolic link at path (what: "output file", "XDMF sidecar") that points
 * nowhere (errnum ENOENT: dangling) or into a loop of links (ELOOP): MBS_ERR_OUTPUT */
mbsStatus mbs_output_bad_link(const char *what, const char *path, int errnum, mbsError *err);

/* remove the file at xmf_path when it is a sidecar this writer made for h5_name (an XDMF
 * file whose first HyperSlab points into a dataset of h5_name): a run that writes no sidecar must not
 * leave one describing the result it replaced. Anything else there is left alone. */
void mbs_xdmf_remove_stale(const char *xmf_path, const char *h5_name);

#endif
