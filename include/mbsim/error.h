/* error.h: status codes and error context shared by every module of libmbsim.
 *
 * The library never prints and never exits: a failing call returns a negative
 * mbsStatus and fills an mbsError with what went wrong and where (deck file, line,
 * column, element, time). Only src/cli/ prints messages and maps them to exit codes. */
#ifndef MBSIM_ERROR_H
#define MBSIM_ERROR_H

#include <stddef.h>

/* X-macro list: enum value, code, short message */
#define MBS_STATUS_LIST(X)                                                                         \
  X(MBS_OK, 0, "ok")                                                                               \
  X(MBS_ERR_IO, -1, "input/output error")                                                          \
  X(MBS_ERR_NOMEM, -2, "out of memory")                                                            \
  X(MBS_ERR_SYNTAX, -3, "YAML syntax error")                                                       \
  X(MBS_ERR_DECK, -4, "invalid deck")                                                              \
  X(MBS_ERR_MODEL, -5, "invalid model")                                                            \
  X(MBS_ERR_ARGS, -6, "invalid arguments")                                                         \
  X(MBS_ERR_SOLVER, -7, "solver failure")                                                          \
  X(MBS_ERR_LINSOLVE, -8, "linear solver failure")                                                 \
  X(MBS_ERR_OUTPUT, -9, "output error")

typedef enum {
#define MBS_STATUS_ENUM(name, code, msg) name = code,
  MBS_STATUS_LIST(MBS_STATUS_ENUM)
#undef MBS_STATUS_ENUM
} mbsStatus;

#define MBS_ERROR_MSG_MAX 1024
#define MBS_ERROR_FILE_MAX 512

/* where and why a call failed; line/col are 1-based, 0 when not applicable */
typedef struct {
  mbsStatus status;
  char file[MBS_ERROR_FILE_MAX]; /* deck file name, or "" */
  int line;
  int col;
  char msg[MBS_ERROR_MSG_MAX]; /* full sentence without the file:line:col prefix */
} mbsError;

/* short description of a status code (static string, never NULL) */
const char *mbs_status_string(mbsStatus s);

/* reset err to MBS_OK with empty fields (err may be NULL) */
void mbs_error_clear(mbsError *err);

/* fill err (may be NULL) and return status; file may be NULL */
mbsStatus mbs_error_set(mbsError *err, mbsStatus status, const char *file, int line, int col,
                        const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* format "file:line:col: msg" (or "file: msg", or "msg") into buf of size n */
void mbs_error_format(const mbsError *err, char *buf, size_t n);

#endif
