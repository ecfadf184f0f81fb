/* cli.h: helpers of the mbsim-run command that live outside main.c (private to src/cli/):
 * the look at an existing output file (inspect.c), the escapes of what it prints (text.c),
 * the model listing of --check and the messages of the initial state (check.c). They print their own messages. The run itself
 * is the library's (mbsim/run.h). */
#ifndef MBSIM_CLI_H
#define MBSIM_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "mbsim/deck.h"
#include "mbsim/output.h"
#include "mbsim/run.h"

/* Look at an existing file at the output path (mbs_output_inspect) in a child process
 * before mbs_output_create opens it: prints the reason and returns 1 when the file is a
 * damaged HDF5 file that crashed, hung or exhausted the child; 0 otherwise. */
int cli_inspect_output(const char *out_path);

/* the limits of the child that reads an untrusted file: the library's defaults, the time
 * from the environment variable MBSIM_INSPECT_SECONDS when set (a warning when invalid) */
void cli_inspect_limits(mbsInspectLimits *lim);

/* src into dst (n bytes, always terminated, truncated at a whole escape) with what a
 * terminal would act on written as escapes: control characters (\n, \t, \r, \x1b, ...),
 * C1 controls and direction overrides (\u009b, \u202e), bytes that are not UTF-8
 * (\xff); returns dst */
char *cli_escape(char *dst, size_t n, const char *src);

/* the model listing of --check (check.c): gravity, bodies (mass, principal moments of
 * inertia, centre of mass), joints (type, bodies, point, axes) and loads, world, t = 0 */
void cli_print_check(FILE *f, const mbsDeck *deck);

/* the model summary of --check: deck, bodies, beams, joints, constraints, redundant
 * equations, dof, contacts, integrator, linear solver, time grid */
void cli_print_summary(FILE *f, const mbsModel *m, const mbsDeck *deck);

/* on stdout: what initial.assemble (how far each body moved and turned) and
 * initial.project_velocities did at the start of a run */
void cli_print_initial(const mbsModel *m, const mbsData *d, const mbsRunStart *s);

/* the command's arguments (args.c) */
typedef struct {
  const char *deck_path;
  const char *out_path;
  mbsOverride *ov;
  char **ov_text;           /* owned "key=value" copies split in place */
  unsigned char *ov_option; /* 1: the override came from --dt, --t-end or --integrator */
  int nov;
  int quiet, progress, check;
  int overwrite;       /* --overwrite */
  const char *restart; /* --restart RUN.h5, or NULL */
} CliArgs;

/* reads argv into a (freed by cli_free_args whatever it returns); prints usage, help,
 * version or the error itself; returns -1 to exit 0 (help, version), 1 for bad arguments, 0
 * to go on */
int cli_parse_args(CliArgs *a, int argc, char **argv);
void cli_free_args(CliArgs *a);

#endif
