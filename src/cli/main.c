/* main.c: the mbsim-run command: arguments, --set overrides, the step loop with output,
 * progress and summary, signals and exit codes (docs/command-line.md).
 * Exit status: 0 done; 1 bad deck or arguments (nothing written); 2 the solver failed
 * (output so far kept); 3 interrupted by SIGINT, SIGTERM, SIGHUP or SIGPIPE (output flushed and
 * closed). */
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

static const char *usage_text =
    "usage: mbsim-run DECK.yaml [-o OUT.h5] [--set KEY=VALUE ...] [--dt S] [--t-end S]\n"
    "                 [--integrator NAME] [--restart RUN.h5] [--memory-limit GB]\n"
    "                 [--overwrite] [--quiet] [--progress] [--check] [--version] [--help]\n";

static void print_help(void) {
  printf("%s", usage_text);
  printf(
      "\n"
      "Simulate the multibody system described by DECK.yaml and write the results to HDF5\n"
      "(plus an XDMF sidecar for ParaView).\n"
      "\n"
      "options:\n"
      "  -o, --output OUT.h5   output file (default: output.file of the deck, else the deck's\n"
      "                        base name with .h5 in the working directory)\n"
      "  --set KEY=VALUE       override a scalar or a list of the deck by path, e.g.\n"
      "                        --set parameters.m=3, --set bodies.link1.mass=2,\n"
      "                        --set gravity=[0, 0, -1.62] (list entries by name or\n"
      "                        index); may be repeated; missing keys are added, but\n"
      "                        parameters.NAME must name a parameter of the deck\n"
      "  --dt S                same as --set solver.dt=S\n"
      "  --t-end S             same as --set solver.t_end=S\n"
      "  --integrator NAME     same as --set solver.integrator=NAME (auto, em, midpoint,\n"
      "                        euler, genalpha, static, moreau, spacetime; auto picks\n"
      "                        moreau for contacts; static: an equilibrium at each time of\n"
      "                        the grid, no inertia, loads following their profiles;\n"
      "                        spacetime: Galerkin in time, solver.spacetime.degree 1 or 2,\n"
      "                        elements of length dt solved\n"
      "                        solver.spacetime.elements_per_block at a time)\n"
      "  --restart RUN.h5      continue from the last record of the earlier run RUN.h5 of the\n"
      "                        same model (to t_end, e.g. with --t-end), into a new output file\n"
      "  --memory-limit GB     same as --set solver.memory_limit=GB: the memory the model's\n"
      "                        estimate may reach (default: what the machine allows, the\n"
      "                        smallest of its memory, cgroup and ulimit -v)\n"
      "  --overwrite           replace any regular file at the output path; without it only an\n"
      "                        earlier mbsim-run result is replaced (once the new run has\n"
      "                        written its first record) and anything else is refused\n"
      "  --check               read and compile the deck, print the model summary and its\n"
      "                        bodies, joints and loads, write nothing\n"
      "  --quiet               no progress line and no summary (errors are still printed)\n"
      "  --progress            progress on stderr even when it is not a terminal (then one\n"
      "                        line per update, for log files)\n"
      "  --version             print the version\n"
      "  --help                print this help\n"
      "options with a value also take it as --OPTION=VALUE (--t-end=2, --set=KEY=VALUE)\n"
      "\n"
      "exit status: 0 done (status 'completed', or 'completed with warning: ...' when the\n"
      "energy balance is off by more than solver.energy_balance.warning); 1 bad deck,\n"
      "arguments or restart file, or an output path that may not be replaced (nothing\n"
      "written); 2 the solver failed or the motion blew up ('failed: unstable at t=...';\n"
      "the output so far is kept, its status attribute says where and why); 3 interrupted\n"
      "by SIGINT, SIGTERM, SIGHUP or SIGPIPE (output flushed and closed).\n");
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
} Args;

static int add_override(Args *a, const char *key, const char *value, const char *whole) {
  char *buf;
  if (whole) {
    buf = strdup(whole);
    if (!buf) {
      return -1;
    }
    char *eq = strchr(buf, '=');
    if (!eq || eq == buf) {
      fprintf(stderr, "mbsim-run: error: --set expects KEY=VALUE, got '%s'\n", whole);
      free(buf);
      return -2;
    }
    *eq = '\0';
    key = buf;
    value = eq + 1;
  } else {
    size_t n = strlen(key) + strlen(value) + 2;
    buf = malloc(n);
    if (!buf) {
      return -1;
    }
    snprintf(buf, n, "%s", key);
    snprintf(buf + strlen(key) + 1, n - strlen(key) - 1, "%s", value);
    key = buf;
    value = buf + strlen(buf) + 1;
  }
  a->ov_text[a->nov] = buf;
  a->ov_option[a->nov] = whole == NULL;
  a->ov[a->nov].path = key;
  a->ov[a->nov].value = value;
  a->nov++;
  return 0;
}

static void free_args(Args *a) {
  for (int i = 0; i < a->nov; i++) {
    free(a->ov_text[i]);
  }
  free(a->ov_text);
  free(a->ov_option);
  free(a->ov);
}

/* returns -1 to exit 0 (help/version), 1 for bad arguments, 0 to go on */
static int parse_args(Args *a, int argc, char **argv) {
  memset(a, 0, sizeof(*a));
  a->ov = calloc((size_t)argc + 1, sizeof(mbsOverride));
  a->ov_text = calloc((size_t)argc + 1, sizeof(char *));
  a->ov_option = calloc((size_t)argc + 1, 1);
  if (!a->ov || !a->ov_text || !a->ov_option) {
    fprintf(stderr, "mbsim-run: error: out of memory\n");
    return 1;
  }
  static const char *const valued[] = {"--output",     "--set",     "--dt",          "--t-end",
                                       "--integrator", "--restart", "--memory-limit"};
  char opt[32];
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    int rc = 0, inline_value = 0;
    /* --opt=value is --opt value for the options that take a value */
    const char *eq = !strncmp(s, "--", 2) ? strchr(s, '=') : NULL;
    if (eq) {
      size_t len = (size_t)(eq - s);
      int known = 0;
      for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++) {
        known |= strlen(valued[k]) == len && !strncmp(s, valued[k], len);
      }
      if (!known || len >= sizeof(opt)) {
        fprintf(stderr,
                "mbsim-run: error: unknown option '%s' (only options that take a value accept "
                "--OPTION=VALUE)\n%s",
                s, usage_text);
        return 1;
      }
      memcpy(opt, s, len);
      opt[len] = '\0';
      s = opt;
      next = eq + 1;
      inline_value = 1;
    }
    if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
      print_help();
      return -1;
    } else if (!strcmp(s, "--version")) {
      printf("mbsim-run %s\n", MBS_VERSION);
      return -1;
    } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
      a->quiet = 1;
    } else if (!strcmp(s, "--progress")) {
      a->progress = 1;
    } else if (!strcmp(s, "--check")) {
      a->check = 1;
    } else if (!strcmp(s, "--overwrite")) {
      a->overwrite = 1;
    } else if (!strcmp(s, "-o") || !strcmp(s, "--output") || !strcmp(s, "--set") ||
               !strcmp(s, "--dt") || !strcmp(s, "--t-end") || !strcmp(s, "--integrator") ||
               !strcmp(s, "--restart") || !strcmp(s, "--memory-limit")) {
      if (!next) {
        fprintf(stderr, "mbsim-run: error: %s needs a value\n%s", s, usage_text);
        return 1;
      }
      if (!inline_value) {
        i++;
      }
      if (!strcmp(s, "-o") || !strcmp(s, "--output")) {
        a->out_path = next;
      } else if (!strcmp(s, "--set")) {
        rc = add_override(a, NULL, NULL, next);
      } else if (!strcmp(s, "--dt")) {
        rc = add_override(a, "solver.dt", next, NULL);
      } else if (!strcmp(s, "--t-end")) {
        rc = add_override(a, "solver.t_end", next, NULL);
      } else if (!strcmp(s, "--restart")) {
        a->restart = next;
      } else if (!strcmp(s, "--memory-limit")) {
        rc = add_override(a, "solver.memory_limit", next, NULL);
      } else {
        rc = add_override(a, "solver.integrator", next, NULL);
      }
    } else if (s[0] == '-' && s[1] != '\0') {
      fprintf(stderr, "mbsim-run: error: unknown option '%s'\n%s", s, usage_text);
      return 1;
    } else if (!a->deck_path) {
      a->deck_path = s;
    } else {
      fprintf(stderr, "mbsim-run: error: more than one deck given ('%s' and '%s')\n%s",
              a->deck_path, s, usage_text);
      return 1;
    }
    if (rc == -1) {
      fprintf(stderr, "mbsim-run: error: out of memory\n");
      return 1;
    }
    if (rc) {
      return 1;
    }
  }
  if (!a->deck_path) {
    fprintf(stderr, "mbsim-run: error: no deck given\n%s", usage_text);
    return 1;
  }
  return 0;
}


/* ---- output size (a warning before the run) ---- */

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
  Args args;
  int rc = parse_args(&args, argc, argv);
  if (rc != 0) {
    free_args(&args);
    return rc < 0 ? EXIT_DONE : EXIT_BAD_INPUT;
  }
  int exit_code = EXIT_BAD_INPUT;
  mbsError err;
  mbs_error_clear(&err);
  const char **option = calloc((size_t)(args.nov > 0 ? args.nov : 1), sizeof(char *));
  if (!option) {
    fprintf(stderr, "mbsim-run: error: out of memory\n");
    free_args(&args);
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
  free_args(&args);
  return exit_code;
}
