/* isolate.h: running the parsing of an untrusted file in a child process (private to
 * src/output/).
 *
 * HDF5 is not hardened against damaged files: a few flipped bytes can make it read out of
 * bounds, loop forever or allocate what the file claims. The reader therefore parses a
 * file it has not written in a forked child under a CPU-time, wall-time and address-space
 * limit; the child sends what it read back through a pipe and the calling process never
 * opens the file itself. A child that dies, hangs or sends a malformed answer makes the
 * file "not an mbsim-run result". */
#ifndef MBSIM_OUTPUT_ISOLATE_H
#define MBSIM_OUTPUT_ISOLATE_H

#include <stddef.h>
#include <sys/types.h>

#include "mbsim/output.h"

/* a running child and the read end of its pipe */
typedef struct {
  pid_t pid;       /* -1 when none */
  int fd;          /* read end, -1 when closed */
  double deadline; /* [s] CLOCK_MONOTONIC time after which the child is killed */
  double seconds;  /* the limit it was started with (for messages) */
} isoChild;

/* Start work(arg, fd) in a child process limited by lim (NULL: defaults): the child writes
 * its answer to fd and exits with _exit(0) after work returns (whatever it returns: the
 * answer says how the work went). Returns 0, or -1 with why filled (no pipe, no fork). */
int iso_start(isoChild *c, const mbsInspectLimits *lim, void (*work)(void *arg, int fd), void *arg,
              char *why, size_t nwhy);

/* read exactly n bytes of the answer before the deadline; 0, or -1 when the child closed
 * the pipe early or the deadline passed (iso_finish then says what happened) */
int iso_read(isoChild *c, void *buf, size_t n);

/* End the child (killed when kill_it or when it is still running after the deadline) and
 * reap it. Returns 0 when it exited normally with status 0 and was not killed for time,
 * else -1 with why saying how it ended ("it crashed with signal 11 (Segmentation fault)",
 * "it did not finish within 10 s", ...). */
int iso_finish(isoChild *c, int kill_it, char *why, size_t nwhy);

/* write all n bytes to fd (the child's side); -1 on failure */
int iso_write(int fd, const void *buf, size_t n);

#endif
