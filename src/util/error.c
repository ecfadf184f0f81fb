/* error.c: status strings and the one printf-style helper that fills mbsError */
#include "mbsim/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *mbs_status_string(mbsStatus s) {
  switch (s) {
#define MBS_STATUS_CASE(name, code, msg)                                                           \
  case name:                                                                                       \
    return msg;
    MBS_STATUS_LIST(MBS_STATUS_CASE)
#undef MBS_STATUS_CASE
  }
  return "unknown status";
}

void mbs_error_clear(mbsError *err) {
  if (err) {
    memset(err, 0, sizeof(*err));
    err->status = MBS_OK;
  }
}

mbsStatus mbs_error_set(mbsError *err, mbsStatus status, const char *file, int line, int col,
                        const char *fmt, ...) {
  if (!err) {
    return status;
  }
  err->status = status;
  snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
  err->line = line;
  err->col = col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
  va_end(ap);
  return status;
}

void mbs_error_format(const mbsError *err, char *buf, size_t n) {
  if (!buf || n == 0) {
    return;
  }
  if (!err) {
    buf[0] = '\0';
    return;
  }
  if (err->file[0] && err->line > 0) {
    snprintf(buf, n, "%s:%d:%d: %s", err->file, err->line, err->col, err->msg);
  } else if (err->file[0]) {
    snprintf(buf, n, "%s: %s", err->file, err->msg);
  } else {
    snprintf(buf, n, "%s", err->msg);
  }
}
