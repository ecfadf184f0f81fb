/* inspect.c: the look at a file already at the output path, in a child process with a time
 * and memory limit, before the writer opens it (HDF5 may crash or hang on a damaged file). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

void cli_inspect_limits(mbsInspectLimits *lim) {
  const char *s = getenv("MBSIM_INSPECT_SECONDS");
  lim->seconds = MBS_INSPECT_SECONDS;
  lim->memory_mb = MBS_INSPECT_MEMORY_MB;
  if (s && s[0]) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == 0 && *end == '\0' && v > 0.0 && v <= 86400.0) {
      lim->seconds = v;
    } else {
      char e[256];
      fprintf(stderr,
              "mbsim-run: warning: MBSIM_INSPECT_SECONDS='%s' is not a number of seconds in "
              "(0, 86400]; using %g\n",
              cli_escape(e, sizeof(e), s), MBS_INSPECT_SECONDS);
    }
  }
}

int cli_inspect_output(const char *out_path) {
  mbsInspectLimits lim;
  mbsError err;
  mbs_error_clear(&err);
  cli_inspect_limits(&lim);
  if (mbs_output_inspect(out_path, &lim, NULL, &err) != MBS_OK) {
    char buf[2048], esc[2600];
    mbs_error_format(&err, buf, sizeof(buf));
    fprintf(stderr, "mbsim-run: error: %s\n", cli_escape(esc, sizeof(esc), buf));
    return 1;
  }
  return 0;
}
