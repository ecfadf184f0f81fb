/* main.c: the mbsim-run command: arguments, --set overrides, the step loop with output,
 * progress and summary, signals and exit codes (docs/command-line.md).
 * Arguments are read by args.c. Exit status: 0 done; 1 bad deck or arguments (nothing
 * written); 2 the solver failed (output so far kept); 3 interrupted by SIGINT, SIGTERM, SIGHUP
 * or SIGPIPE (output flushed and closed). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "mbsim/run.h"

#ifndef MBS_VERSION
#define MBS_VERSION "0.0.0"
#endif

enum { EXIT_DONE = 0, EXIT_BAD_INPUT = 1, EXIT_SOLVER = 2, EXIT_INTERRUPTED = 3 };

static volatile sig_atomic_t g_signal = 0;

static void on_signal(int sig) {
  g_signal = sig;
}

/* ---- signals ---- */

/* SIGINT, SIGTERM, SIGHUP (the terminal went away) and SIGPIPE (stdout or stderr is a pipe
 * whose reader left, as in `mbsim-run ... | head`) all end the run the same way: finish the
 * current step, flush and close the file. Installed first thing in main, so that a signal
 * while a large deck loads is not fatal either. */
static void install_signals(void) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
    sigaction(sigs[i], &sa, NULL);
  }
}

static const char *signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return "a signal";
  }
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_error(const mbsError *err) {
  char buf[2048], esc[4096];
  mbs_error_format(err, buf, sizeof(buf));
  fprintf(stderr, "mbsim-run: error: %s\n", cli_escape(esc, sizeof(esc), buf));
}

/* a warning before a run whose output will be very large: more than WARN_OUTPUT_BYTES, or
 * more than the free space of its file system (the HDF5 estimate is uncompressed, so an
 * upper bound) */
#define WARN_OUTPUT_BYTES (4.0 * 1024.0 * 1024.0 * 1024.0)
static void warn_output_size(const mbsWriter *w, const mbsModel *m, long nsteps, long n_first,
                             double t0) {
  long nrec = m->output_dt > 0.0
                  ? (long)fmin((m->t_end - t0) / m->output_dt, 1e15) + 2
                  : (nsteps - n_first + 1) / (m->output_every > 0 ? m->output_every : 1) + 2;
  double h5 = 0.0, xmf = 0.0;
  double avail = mbs_output_estimate(w, nrec, &h5, &xmf);
  double total = h5 + xmf;
  if (total > WARN_OUTPUT_BYTES || (avail >= 0.0 && total > avail)) {
    char room[64] = "";
    if (avail >= 0.0) {
      snprintf(room, sizeof(room), "; %.3g GB free there", avail / 1e9);
    }
    fprintf(stderr,
            "mbsim-run: warning: this run writes about %ld records: up to %.3g GB of HDF5 data "
            "and %.3g GB of XDMF sidecar%s. Write fewer records (--set output.every=K or "
            "output.dt=SECONDS) or no "
            "sidecar (--set output.xdmf=false)\n",
            nrec, h5 / 1e9, xmf / 1e9, room);
  }
}


/* each line of text ("file:line:col: text" lines) as "mbsim-run: WHAT: line" on stderr */
static void print_lines(const char *what, const char *text, int escape) {
  for (const char *l = text; *l;) {
    const char *e = strchr(l, '\n');
    int len = e ? (int)(e - l) : (int)strlen(l);
    if (escape) {
      char line[2048], esc[4096];
      snprintf(line, sizeof(line), "%.*s", len, l);
      fprintf(stderr, "mbsim-run: %s: %s\n", what, cli_escape(esc, sizeof(esc), line));
    } else {
      fprintf(stderr, "mbsim-run: %s: %.*s\n", what, len, l);
    }
    l += len + (e ? 1 : 0);
  }
}


int main(int argc, char **argv) {
  install_signals();
  CliArgs args;
  int rc = cli_parse_args(&args, argc, argv);
  if (rc != 0) {
    cli_free_args(&args);
    return rc < 0 ? EXIT_DONE : EXIT_BAD_INPUT;
  }
  int exit_code = EXIT_BAD_INPUT;
  mbsError err;
  mbs_error_clear(&err);
  const char **option = calloc((size_t)(args.nov > 0 ? args.nov : 1), sizeof(char *));
  if (!option) {
    fprintf(stderr, "mbsim-run: error: out of memory\n");
    cli_free_args(&args);
    return EXIT_BAD_INPUT;
  }
  for (int i = 0; i < args.nov; i++) {
    option[i] = args.ov_option[i] ? "--integrator" : NULL;
  }
  mbsRunOptions opt = {.deck_path = args.deck_path,
                       .overrides = args.ov,
                       .noverrides = args.nov,
                       .override_option = option};
  double t_wall0 = now_seconds();

  /* deck -> model */
  mbsRun *run = mbs_run_create(&opt, &err);
  if (!run) {
    print_error(&err);
    goto done;
  }
  print_lines("warning", mbs_run_warnings(run), 0);
  const mbsModel *m = mbs_run_model(run);
  const mbsDeck *deck = mbs_run_deck(run);
  if (args.check) {
    cli_print_summary(stdout, m, deck);
    cli_print_check(stdout, deck);
    exit_code = EXIT_DONE;
    goto done;
  }
  /* the state at t = 0 (or of the restart file) */
  const char *out = args.out_path ? args.out_path : m->output_file;
  mbsInspectLimits lim;
  cli_inspect_limits(&lim);
  if (mbs_run_start(run, args.restart, out, &lim, &err) != MBS_OK) {
    print_error(&err);
    goto done;
  }
  print_lines("note", mbs_run_notes(run), 1);
  const mbsData *d = mbs_run_data(run);
  /* a signal while the deck loaded: stop before anything is written */
  if (g_signal) {
    fprintf(stderr, "mbsim-run: interrupted by %s before the run started; nothing written\n",
            signal_name(g_signal));
    exit_code = EXIT_INTERRUPTED;
    goto done;
  }
  /* a file already at the output path is looked at in a child process first: HDF5 may
   * crash or hang on a damaged one (with --overwrite the writer does not open it) */
  if (!args.overwrite && cli_inspect_output(out) != 0) {
    goto done;
  }
  if (mbs_run_attach(run, out, args.overwrite, &err) != MBS_OK) {
    print_error(&err);
    goto done;
  }
  if (!args.quiet) {
    char dropped[1024];
    mbs_model_describe_dropped(m, dropped, sizeof(dropped));
    printf("mbsim-run %s: %s -> %s\n", MBS_VERSION, deck->path, out);
    printf("integrator: %s (%s)\n", mbs_integrator_word(m->integrator), m->integrator_reason);
    if (m->ndrop > 0) {
      printf("redundant:  dropped %d equation%s that repeat%s the others: %s\n", m->ndrop,
             m->ndrop == 1 ? "" : "s", m->ndrop == 1 ? "s" : "", dropped);
    }
    fflush(stdout);
  }
  const mbsRunStart *start = mbs_run_start_info(run);
  long nsteps = (long)ceil(m->t_end / m->dt - 1e-9);
  nsteps = nsteps < 1 ? 1 : nsteps;
  long n_first = start->n_first;
  warn_output_size(mbs_run_writer(run), m, nsteps, n_first, d->t);
  /* on a terminal the progress line is rewritten in place (\r); in a log file each update
   * is a line of its own */
  int stderr_tty = isatty(STDERR_FILENO);
  int show_progress = !args.quiet && (args.progress || stderr_tty);
  int progress_cr = show_progress && stderr_tty;
  double t_last_progress = now_seconds();
  if (!args.quiet) {
    cli_print_initial(m, d, start);
  }
  exit_code = EXIT_DONE;
  if (mbs_run_record(run, &err) != MBS_OK) {
    /* not even the initial state could be written (e.g. it is not finite) */
    print_error(&err);
    exit_code = EXIT_SOLVER;
  } else if (g_signal) {
    /* a signal before the first step: the file holds the initial record */
    mbs_run_interrupt(run);
    fprintf(stderr, "mbsim-run: %s by %s; output flushed\n", mbs_run_status(run),
            signal_name(g_signal));
    exit_code = EXIT_INTERRUPTED;
  }
  for (long n = n_first; exit_code == EXIT_DONE && !mbs_run_done(run); n++) {
    if (mbs_run_step(run, &err) != MBS_OK) {
      mbsRunFailure f = mbs_run_failure(run);
      if (f == MBS_RUN_FAIL_RECORD) {
        print_error(&err);
      } else {
        fprintf(stderr, "%smbsim-run: error: %s\n", progress_cr ? "\n" : "",
                f == MBS_RUN_FAIL_UNSTABLE ? mbs_run_status(run) : mbs_run_status(run) + 8);
      }
      exit_code = EXIT_SOLVER;
      break;
    }
    if (g_signal) {
      if (mbs_run_record(run, &err) != MBS_OK) {
        print_error(&err);
        exit_code = EXIT_SOLVER;
        break;
      }
      mbs_run_interrupt(run);
      fprintf(stderr, "%smbsim-run: %s by %s; output flushed\n", progress_cr ? "\n" : "",
              mbs_run_status(run), signal_name(g_signal));
      exit_code = EXIT_INTERRUPTED;
      break;
    }
    if (show_progress && now_seconds() - t_last_progress > 0.5) {
      double el = now_seconds() - t_wall0;
      double rate = (double)(n - n_first + 1) / el;
      fprintf(stderr, "%s  t = %.4g / %.4g s   %ld steps   %.0f steps/s   ETA %.1f s%s",
              progress_cr ? "\r" : "", d->t, m->t_end, n, rate, (double)(nsteps - n) / rate,
              progress_cr ? "   " : "\n");
      t_last_progress = now_seconds();
    }
  }
  if (progress_cr) {
    fprintf(stderr, "\r%*s\r", 78, "");
  }
  long nrec = 0;
  if (mbs_run_finish(run, &nrec, &err) != MBS_OK) {
    print_error(&err);
    exit_code = EXIT_SOLVER;
  }
  if (!args.quiet) {
    char summary[8192];
    mbs_run_summary(run, summary, sizeof(summary));
    fputs(summary, stdout);
    printf("output:       %s (%ld records)\n", out, nrec);
  }

done:
  mbs_run_destroy(run);
  free(option);
  cli_free_args(&args);
  return exit_code;
}
