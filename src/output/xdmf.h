/* xdmf.h: the XDMF 2 sidecar that lets ParaView read the HDF5 result file (private to
 * src/output/). The sidecar copies no data: every DataItem is a HyperSlab into the
 * time-major datasets under /bodies and /joints, one Uniform grid per record inside a
 * temporal collection for the bodies and another for the joints. */
#ifndef MBSIM_OUTPUT_XDMF_H
#define MBSIM_OUTPUT_XDMF_H

#include "mbsim/error.h"

/* sidecar path for an HDF5 path: a trailing ".h5" replaced by ".xmf", else ".xmf"
 * appended; returns a malloc'd string (caller frees) or NULL when out of memory */
char *mbs_xdmf_path(const char *h5_path);

/* write the sidecar at xmf_path listing records 0 .. nrecord-1 at times time[k] [s] of
 * nbody bodies and njoint joints (no joint collection when njoint = 0);
 * h5_name is the HDF5 file name as the sidecar refers to it (a basename, so that the
 * pair can be moved together). The text goes to "<xmf_path>.tmp" first and is renamed
 * into place, so a reader never sees half a file. Returns MBS_ERR_OUTPUT or
 * MBS_ERR_NOMEM with err filled on failure. */
mbsStatus mbs_xdmf_write(const char *xmf_path, const char *h5_name, int nbody, int njoint,
                         long nrecord, const double *time, mbsError *err);

/* remove the file at xmf_path when it is a sidecar this writer made for h5_name (an XDMF
 * file whose first HyperSlab points into h5_name): a run that writes no sidecar must not
 * leave one describing the result it replaced. Anything else there is left alone. */
void mbs_xdmf_remove_stale(const char *xmf_path, const char *h5_name);

#endif
