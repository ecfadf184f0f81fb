/* main.c: the mbsim-run command: arguments, --set overrides, the step loop with output,
 * progress and summary, signals and exit codes (README "Command line").
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
#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/output.h"
#include "mbsim/contact.h"
#include "mbsim/solver.h"

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

static void print_model_summary(FILE *f, const mbsModel *m, const mbsDeck *deck) {
  int nrigid = 0, npoint = 0, nfixed = 0;
  for (int b = 0; b < m->nbody; b++) {
    nfixed += m->body_fixed[b];
    if (m->body_type[b] == MBS_BODY_RIGID) {
      nrigid++;
    } else {
      npoint++;
    }
  }
  fprintf(f, "deck:         %s%s%s%s\n", deck->path, deck->title[0] ? " (" : "", deck->title,
          deck->title[0] ? ")" : "");
  fprintf(f, "bodies:       %d (%d rigid, %d point, %d fixed)\n", m->nbody, nrigid, npoint, nfixed);
  if (m->nbeam > 0) {
    int nnode = 0, nelem = 0;
    for (int i = 0; i < m->nbeam; i++) {
      nnode += m->beam[i].nnode;
      nelem += m->beam[i].nelem;
    }
    fprintf(f, "beams:        %d (%d nodes, %d elements)\n", m->nbeam, nnode, nelem);
  }
  fprintf(f, "joints:       %d\n", m->njoint);
  fprintf(f, "loads:        %d\n", m->nload);
  if (m->nshape > 0 || m->ncontact > 0) {
    fprintf(f,
            "contacts:     %d entr%s, %d shape%s (%d in pairs, found at each step), storage "
            "for %d contact points\n",
            m->ncontact, m->ncontact == 1 ? "y" : "ies", m->nshape, m->nshape == 1 ? "" : "s",
            m->nshape_paired, m->contact_max);
  }
  fprintf(f, "coordinates:  %d\n", m->nq);
  fprintf(f, "constraints:  %d\n", m->ncon);
  if (m->ndrop > 0) {
    char dropped[512];
    mbs_model_describe_dropped(m, dropped, sizeof(dropped));
    fprintf(f, "redundant:    dropped %d equation%s that repeat%s the others: %s\n", m->ndrop,
            m->ndrop == 1 ? "" : "s", m->ndrop == 1 ? "s" : "", dropped);
  }
  fprintf(f, "dof:          %d\n", m->ndof);
  if (m->nshape > 0) {
    fprintf(f, "contacts:     %d shapes (%d in pairs), %d entries\n", m->nshape, m->nshape_paired,
            m->ncontact);
  }
  fprintf(f, "integrator:   %s (%s)\n", mbs_integrator_word(m->integrator), m->integrator_reason);
  fprintf(f, "linear:       %s sparse LU (solver.linear_solver)\n",
          mbs_linear_solver_word(m->linear_solver));
  fprintf(f, "time:         dt = %g s, t_end = %g s\n", m->dt, m->t_end);
}

/* the units of a joint's /joints/coordinates and /joints/rates columns (joint_coords.c) */
static void cli_joint_units(mbsJointType t, const char **coord, const char **rate) {
  switch (t) {
    case MBS_JOINT_REVOLUTE:
      *coord = "rad";
      *rate = "rad/s";
      return;
    case MBS_JOINT_PRISMATIC:
      *coord = "m";
      *rate = "m/s";
      return;
    case MBS_JOINT_CYLINDRICAL:
      *coord = "rad, m";
      *rate = "rad/s, m/s";
      return;
    case MBS_JOINT_UNIVERSAL:
      *coord = "rad, rad";
      *rate = "rad/s, rad/s";
      return;
    case MBS_JOINT_PLANAR:
      *coord = "m, m, rad";
      *rate = "m/s, m/s, rad/s";
      return;
    case MBS_JOINT_SPHERICAL:
      *coord = "rad, rad, rad";
      *rate = "rad/s, rad/s, rad/s";
      return;
    default: /* fixed, distance: no coordinates (NaN) */
      *coord = "none";
      *rate = "none";
      return;
  }
}

/* the consistent state of a record (velocities on the constraints, reactions of the
 * index-1 equations) and its observables */
static mbsStatus observe_record(const mbsModel *m, mbsData *d, mbsObservables *o, mbsError *err) {
  mbsStatus st = mbs_solver_consistent(m, d, err);
  if (st != MBS_OK) {
    char msg[1000];
    mbs_error_format(err, msg, sizeof(msg));
    return mbs_error_set(err, st, NULL, 0, 0,
                         "the constraint Jacobian is singular at t = %.9g, so the record's "
                         "velocities and reactions are not defined: %s",
                         d->t, msg);
  }
  mbs_observe(m, d, o);
  return MBS_OK;
}

/* ---- output size (a warning before the run) ---- */

/* a warning before a run whose output will be very large: more than WARN_OUTPUT_BYTES, or
 * more than the free space of its file system (the HDF5 estimate is uncompressed, so an
 * upper bound) */
#define WARN_OUTPUT_BYTES (4.0 * 1024.0 * 1024.0 * 1024.0)

static void warn_output_size(const mbsWriter *w, long nsteps, int every, long n_first) {
  long nrec = (nsteps - n_first + 1) / (every > 0 ? every : 1) + 2;
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
            "and %.3g GB of XDMF sidecar%s. Write fewer records (--set output.every=K) or no "
            "sidecar (--set output.xdmf=false)\n",
            nrec, h5 / 1e9, xmf / 1e9, room);
  }
}

/* the record of the current state */
static mbsStatus write_record(cliOutput *out, const mbsModel *m, mbsData *d,
                              const mbsObservables *o, mbsError *err) {
  /* the rows, with the integrator's state (multipliers, its own velocities, genalpha's
   * accelerations): what a restart from this record needs */
  mbsStateArray state[MBS_STATE_MAX];
  int nstate = cli_output_put(out, m, d, o, state);
  if (out->action_nomem) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                         "out of memory keeping the rows of /solver/action at t=%.9g", d->t);
  }
  /* the run goes on from the state just written, exactly as a restart from this record
   * does (a fresh factorization, mu = dt^2 lambda rebuilt from the lambda written): both
   * runs then take identical steps */
  mbsStatus st = mbs_solver_state_import(m, d, state, nstate, NULL, 0, err);
  if (st != MBS_OK) {
    return st;
  }
  /* the state written holds the record's contacts before their sums were cleared (moreau): a
   * restart's first record lists them again; the run goes on from the cleared ones */
  mbs_solver_contacts_clear(d);
  return mbs_output_append(out->w, d->t, err);
}

/* initial.assemble: how far each body moved (its centre of mass) and turned, those that did */
static void print_assembly_moves(const mbsModel *m, const double *q0, const double *q1) {
  int shown = 0, more = 0;
  for (int b = 0; b < m->nbody; b++) {
    int n0 = m->body_node[b];
    if (n0 < 0) {
      continue;
    }
    int rigid = m->body_type[b] == MBS_BODY_RIGID;
    double dx[3], tr = 0.0;
    for (int c = 0; c < 3; c++) {
      dx[c] = q1[3 * n0 + c] - q0[3 * n0 + c];
      for (int i = 0; rigid && i < 3; i++) {
        /* x_c = phi - r^i d_i */
        dx[c] -= m->body_ref[3 * b + i] * (q1[3 * (n0 + 1 + i) + c] - q0[3 * (n0 + 1 + i) + c]);
        tr += q1[3 * (n0 + 1 + i) + c] * q0[3 * (n0 + 1 + i) + c];
      }
    }
    double move = sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
    double turn = rigid ? acos(fmax(-1.0, fmin(1.0, 0.5 * (tr - 1.0)))) : 0.0;
    if (!(move > 1e-12 || turn > 1e-12)) {
      continue;
    }
    if (shown == 20) {
      more++;
      continue;
    }
    printf("              %s: centre moved %.4g m%s", m->body_name[b], move,
           rigid ? ", turned " : "\n");
    if (rigid) {
      printf("%.4g deg\n", turn * 180.0 / 3.14159265358979323846);
    }
    shown++;
  }
  if (more) {
    printf("              ... and %d more bodies\n", more);
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
  mbsDeck deck;
  memset(&deck, 0, sizeof(deck));
  mbsModel *m = NULL;
  mbsData *d = NULL;
  mbsWriter *w = NULL;
  const char **names = NULL;
  const char **qunits = NULL, **junits = NULL, **jrunits = NULL;
  double *q_pre = NULL; /* initial.assemble: the deck's configuration */
  cliOutput rec_out = {0};
  cliRestart restart;
  memset(&restart, 0, sizeof(restart));
  double t_wall0 = now_seconds();

  /* deck -> model */
  if (mbs_deck_load(&deck, args.deck_path, args.ov, args.nov, &err) != MBS_OK) {
    print_error(&err);
    goto done;
  }
  if (deck.warnings) {
    /* each line "file:line:col: text" */
    for (const char *l = deck.warnings; *l;) {
      const char *e = strchr(l, '\n');
      int len = e ? (int)(e - l) : (int)strlen(l);
      fprintf(stderr, "mbsim-run: warning: %.*s\n", len, l);
      l += len + (e ? 1 : 0);
    }
  }
  m = mbs_model_compile(&deck, &err);
  if (!m) {
    print_error(&err);
    goto done;
  }
  if (m->integrator == MBS_INTEGRATOR_MOREAU) {
    /* penalty springs the step does not resolve */
    char pw[2048];
    if (mbs_contact_check_penalty(m, m->dt, m->moreau_variant != MBS_MOREAU_EXPLICIT, pw,
                                  sizeof(pw)) > 0) {
      for (const char *l = pw; *l;) {
        const char *e = strchr(l, '\n');
        int len = e ? (int)(e - l) : (int)strlen(l);
        fprintf(stderr, "mbsim-run: warning: %.*s\n", len, l);
        l += len + (e ? 1 : 0);
      }
    }
  }
  /* an integrator named on the command line: say so (the model only knows the deck) */
  if (deck.solver.integrator_override > 0 && deck.solver.integrator != MBS_INTEGRATOR_AUTO) {
    int i = deck.solver.integrator_override - 1;
    if (args.ov_option[i]) {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "chosen on the command line: --integrator %s", args.ov[i].value);
    } else {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "chosen on the command line: --set %.100s=%.100s", args.ov[i].path,
               args.ov[i].value);
    }
  }
  if (args.check) {
    print_model_summary(stdout, m, &deck);
    cli_print_check(stdout, &deck);
    exit_code = EXIT_DONE;
    goto done;
  }
  d = mbs_data_create(m, &err);
  if (!d) {
    print_error(&err);
    goto done;
  }

  /* initial.assemble: the positions at t = 0 onto the joints, then the checks of t = 0 at
   * the assembled positions (overlaps, velocities), before anything is written; a restart
   * assembles too (what is measured from t = 0, joint coordinates and spring angles, is
   * measured from the assembled configuration) and then goes on from its file's state */
  int assembled = 0;
  mbsAssembly asm_info = {0};
  if (m->assemble) {
    if (!(q_pre = malloc((size_t)(m->nq > 0 ? m->nq : 1) * sizeof(double)))) {
      fprintf(stderr, "mbsim-run: error: out of memory\n");
      goto done;
    }
    memcpy(q_pre, d->q, (size_t)m->nq * sizeof(double));
    if (mbs_solver_assemble(m, d, &asm_info, &err) != MBS_OK ||
        mbs_model_set_initial(m, d->q, &err) != MBS_OK) {
      print_error(&err);
      goto done;
    }
    memcpy(d->v, m->v0, (size_t)m->nq * sizeof(double));
    memcpy(d->v_rec, m->v0, (size_t)m->nq * sizeof(double));
    mbs_joint_track(m, d);
    assembled = 1;
  }
  /* output */
  const char *out = args.out_path ? args.out_path : m->output_file;
  if (args.restart && cli_restart_load(&restart, args.restart, out, m, d) != 0) {
    goto done;
  }
  /* initial.project_velocities: the velocities at t = 0 onto the joints, before anything is
   * written (a restart goes on from the state in its file) */
  int projected = 0, proj_body = -1;
  double proj_change = 0.0;
  if (!restart.active && m->project_velocities) {
    if (mbs_solver_initial_velocities(m, d, &proj_change, &proj_body, &err) != MBS_OK) {
      print_error(&err);
      goto done;
    }
    projected = 1;
  }
  names = malloc((size_t)(m->nq > 0 ? m->nq : 1) * sizeof(char *));
  qunits = malloc((size_t)(m->nq > 0 ? m->nq : 1) * sizeof(char *));
  junits = malloc((size_t)(m->njoint > 0 ? m->njoint : 1) * sizeof(char *));
  jrunits = malloc((size_t)(m->njoint > 0 ? m->njoint : 1) * sizeof(char *));
  if (!names || !qunits || !junits || !jrunits) {
    fprintf(stderr, "mbsim-run: error: out of memory\n");
    goto done;
  }
  for (int i = 0; i < m->nq; i++) {
    names[i] = mbs_model_coord_name(m, i);
    /* vector nodes: positions m, directors 1; the scalars after them are joint angles */
    qunits[i] = i < 3 * m->nnode ? (m->node_position[i / 3] ? "m" : "1") : "rad";
  }
  for (int j = 0; j < m->njoint; j++) {
    cli_joint_units(m->joint_type[j], &junits[j], &jrunits[j]);
  }
  char dropped[1024];
  mbs_model_describe_dropped(m, dropped, sizeof(dropped));
  mbsOutputInfo info = {
      .version = MBS_VERSION,
      .redundant_rows = dropped,
      .title = deck.title,
      .deck_text = deck.text ? deck.text : "",
      .integrator = mbs_integrator_word(m->integrator),
      .integrator_reason = m->integrator_reason,
      .linear_solver = mbs_linear_solver_word(m->linear_solver),
      .dt = m->dt,
      .t_end = m->t_end,
      .n_coordinates = m->nq,
      .n_constraints = m->ncon,
      .n_dof = m->ndof,
      .write_xdmf = m->output_xdmf,
      .restart_from = restart.from,
      .overwrite = args.overwrite,
  };
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
  w = mbs_output_create(out, &info, &err);
  if (!w) {
    print_error(&err);
    goto done;
  }
  /* the datasets and sidecar grids, registered by what owns them (record.c) */
  if (cli_output_describe(&rec_out, w, m, d, names, qunits, junits, jrunits, &err) != MBS_OK ||
      mbs_output_flush(w, &err) != MBS_OK) {
    print_error(&err);
    goto done;
  }
  if (!args.quiet) {
    printf("mbsim-run %s: %s -> %s\n", MBS_VERSION, deck.path, out);
    printf("integrator: %s (%s)\n", mbs_integrator_word(m->integrator), m->integrator_reason);
    if (m->ndrop > 0) {
      printf("redundant:  dropped %d equation%s that repeat%s the others: %s\n", m->ndrop,
             m->ndrop == 1 ? "" : "s", m->ndrop == 1 ? "s" : "", dropped);
    }
    fflush(stdout);
  }

  /* the step loop: t_n = n dt, the last step shortened to land on t_end */
  long nsteps = (long)ceil(m->t_end / m->dt - 1e-9);
  if (nsteps < 1) {
    nsteps = 1;
  }
  warn_output_size(w, nsteps, m->output_every, restart.active ? restart.n_first : 1);
  /* on a terminal the progress line is rewritten in place (\r); in a log file each update
   * is a line of its own */
  int stderr_tty = isatty(STDERR_FILENO);
  int show_progress = !args.quiet && (args.progress || stderr_tty);
  int progress_cr = show_progress && stderr_tty;
  double t_last_progress = now_seconds();
  mbsObservables o;
  if (assembled && !restart.active && !args.quiet && asm_info.iterations == 0) {
    printf("initial:      positions already satisfy the joints (violation %.2g): nothing to "
           "assemble\n",
           asm_info.residual);
  } else if (assembled && !restart.active && !args.quiet) {
    printf("initial:      positions assembled onto the joints (%d Gauss-Newton steps, "
           "violation %.2g left): largest move %.4g m (%s '%s'), directors turned by up to "
           "%.4g deg\n",
           asm_info.iterations, asm_info.residual, asm_info.max_move,
           asm_info.frame >= 0 && m->attach_kind[asm_info.frame] == MBS_ATTACH_BEAM_NODE
               ? "beam node"
               : "body",
           asm_info.frame >= 0 ? m->attach_name[asm_info.frame] : "none",
           2.0 * asin(fmin(1.0, 0.5 * asm_info.max_turn)) * 180.0 / 3.14159265358979323846);
    print_assembly_moves(m, q_pre, d->q);
  }
  if (projected && !args.quiet) {
    printf("initial:      velocities projected onto the joints: largest change %.4g (%s "
           "'%s')\n",
           proj_change,
           proj_body >= 0 && m->attach_kind[proj_body] == MBS_ATTACH_BEAM_NODE ? "beam node"
                                                                              : "body",
           proj_body >= 0 ? m->attach_name[proj_body] : "none");
  }
  /* the integrator's state at t = 0 for the first record (genalpha: its accelerations; a
   * restart has it from its file) */
  if (!restart.active) {
    mbs_solver_start(m, d);
  }
  mbsStatus st = observe_record(m, d, &o, &err);
  cli_restart_first_record(&restart, m, d);
  /* the energy balance B = T + V - W + D of the integrator's state is conserved; the
   * relative error is max |B - B0| / E_scale with E_scale = max(|E0|, max_t T*(t)), T* =
   * B0 + W - D - V the kinetic energy the balance allows (an exact solution's T): unlike the
   * kinetic energy itself, it does not grow when the motion blows up */
  double T0, V0;
  mbs_energy(m, d->q, d->v, &T0, &V0);
  V0 += d->contact_potential;
  double E0 = o.kinetic + o.potential;
  double B0 = T0 + V0 - d->external_work + d->dissipated;
  double Escale = fmax(fabs(E0), T0), dEmax = 0.0, vmax = o.violation;
  double vvmax = o.velocity_violation, warn_t = -1.0, warn_err = 0.0, last_gain = 0.0;
  if (st == MBS_OK) {
    st = write_record(&rec_out, m, d, &o, &err);
  }
  char status[1400];
  exit_code = EXIT_DONE;
  if (st != MBS_OK) {
    /* not even the initial state could be written (e.g. it is not finite) */
    print_error(&err);
    snprintf(status, sizeof(status), "failed: %s", err.msg);
    exit_code = EXIT_SOLVER;
  }
  long n_first = restart.active ? restart.n_first : 1;
  if (st == MBS_OK && g_signal) {
    /* a signal before the first step: the file holds the initial record */
    snprintf(status, sizeof(status), "interrupted at t=%.9g", d->t);
    fprintf(stderr, "mbsim-run: %s by %s; output flushed\n", status, signal_name(g_signal));
    exit_code = EXIT_INTERRUPTED;
  }
  for (long n = n_first; n <= nsteps && st == MBS_OK && exit_code == EXIT_DONE; n++) {
    double t_next = (n == nsteps) ? m->t_end : (double)n * m->dt;
    st = mbs_solver_advance(m, d, t_next, &err);
    if (st != MBS_OK) {
      char msg[1200];
      mbs_error_format(&err, msg, sizeof(msg));
      fprintf(stderr, "%smbsim-run: error: %s\n", progress_cr ? "\n" : "", msg);
      snprintf(status, sizeof(status), "failed: %s", msg);
      exit_code = EXIT_SOLVER;
      break;
    }
    d->t = t_next;
    mbs_joint_track(m, d);
    /* the energy monitor, every step */
    double T, V;
    mbs_energy(m, d->q, d->v, &T, &V);
    V += d->contact_potential;
    double gain = T + V - d->external_work + d->dissipated - B0;
    Escale = fmax(Escale, B0 + d->external_work - d->dissipated - V);
    dEmax = fmax(dEmax, fabs(gain));
    last_gain = gain;
    vmax = fmax(vmax, mbs_constraint_violation(m, d->q, d->t, NULL));
    /* a static run has no kinetic energy, and V - V0 - W vanishes only along a path that
     * starts at an equilibrium (static.c): its balance is reported, not checked */
    int checked = m->integrator != MBS_INTEGRATOR_STATIC;
    if (checked && Escale > 0.0 && fabs(gain) > m->energy_warning * Escale && warn_t < 0.0) {
      warn_t = d->t;
      warn_err = fabs(gain) / Escale;
    }
    int unstable = checked && Escale > 0.0 && gain > m->energy_unstable * Escale;
    int sig = g_signal;
    if (n % m->output_every == 0 || n == nsteps || unstable || sig) {
      st = observe_record(m, d, &o, &err);
      if (st == MBS_OK) {
        vvmax = fmax(vvmax, o.velocity_violation);
        st = write_record(&rec_out, m, d, &o, &err);
      }
      if (st != MBS_OK) {
        print_error(&err);
        snprintf(status, sizeof(status), "failed: %s", err.msg);
        exit_code = EXIT_SOLVER;
        break;
      }
    }
    if (unstable) {
      snprintf(status, sizeof(status),
               "failed: unstable at t=%.9g: the energy grew by %.3e J beyond the work of the "
               "loads (%.3g times the energy scale %.3e J; solver.energy_balance.unstable = %g). "
               "%s",
               d->t, gain, gain / Escale, Escale, m->energy_unstable,
               m->integrator == MBS_INTEGRATOR_GENALPHA
                   ? "genalpha is not energy-stable for fast nonlinear rotation: use em, or a "
                     "smaller dt"
                   : "Try a smaller dt");
      fprintf(stderr, "%smbsim-run: error: %s\n", progress_cr ? "\n" : "", status);
      exit_code = EXIT_SOLVER;
      break;
    }
    if (sig) {
      snprintf(status, sizeof(status), "interrupted at t=%.9g", d->t);
      fprintf(stderr, "%smbsim-run: %s by %s; output flushed\n", progress_cr ? "\n" : "", status,
              signal_name(g_signal));
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
  if (exit_code == EXIT_DONE && warn_t >= 0.0) {
    snprintf(status, sizeof(status),
             "completed with warning: the energy balance |E - E0 - W + D| reached %.3e of the "
             "energy scale (%.3e at t=%.9g, above solver.energy_balance.warning = %g)",
             dEmax / Escale, warn_err, warn_t, m->energy_warning);
  } else if (exit_code == EXIT_DONE) {
    snprintf(status, sizeof(status), "completed");
  }
  mbsError cerr;
  mbs_error_clear(&cerr);
  if (mbs_output_set_status(w, status, &cerr) != MBS_OK) {
    print_error(&cerr);
    exit_code = EXIT_SOLVER;
  }
  long nrec = mbs_output_count(w);
  if (mbs_output_close(w, &cerr) != MBS_OK) {
    print_error(&cerr);
    exit_code = EXIT_SOLVER;
  }
  w = NULL;
  double wall = now_seconds() - t_wall0;
  if (!args.quiet) {
    double denom = Escale;
    printf("status:       %s\n", status);
    printf("steps:        %ld to t = %.6g s (dt = %g s)\n", d->step, d->t, m->dt);
    printf("newton:       %ld iterations (%.2f per step), %ld factorizations, %ld solves\n",
           d->newton_total, d->step > 0 ? (double)d->newton_total / (double)d->step : 0.0,
           d->factorizations, d->solves);
    printf("linear:       %s sparse LU (solver.linear_solver)\n",
           mbs_linear_solver_word(m->linear_solver));
    printf("step control: %ld steps rejected and retried with dt/2\n", d->rejected);
    size_t arena_size, arena_high;
    mbs_solver_arena_usage(d, &arena_size, &arena_high);
    printf("step storage: %zu of %zu bytes (high-water mark of the per-step arena)\n", arena_high,
           arena_size);
    printf("constraints:  max violation %.3e, velocities %.3e (records%s)\n", vmax, vvmax,
           m->integrator == MBS_INTEGRATOR_STATIC && vvmax > 0.0
               ? "; static: at rest, so this is the rate of the prescribed motions"
               : "");
    if (m->ncontact_paired > 0) {
      printf("contacts:     %d shapes in pairs, at most %d points in one step's contact problem, "
             "%ld solver iterations (%.2f per step), smallest gap %.3e m, dissipated %.6g J "
             "(impacts %.6g J, friction %.6g J)\n",
             m->nshape_paired, d->contact_active_max, d->contact_sweeps,
             d->step > 0 ? (double)d->contact_sweeps / (double)d->step : 0.0, d->contact_gap_min,
             d->contact_dissipated, d->impact_dissipated, d->friction_dissipated);
      if (d->contact_stalled > 0) {
        printf("contact solver: %ld steps stopped short of solver.moreau.contact_tolerance where "
               "the solver stalled (largest residual %.3e of the velocity scale, accepted up to "
               "1e-06, 1e-04 in steps solved with a compliance)\n",
               d->contact_stalled, d->contact_stall_max);
      }
      if (d->contact_regularized > 0) {
        printf("contact solver: %ld steps solved a pile's contact problem with a compliance "
               "of 1e-6 of its Delassus matrix (a jam of redundant frictional contacts the "
               "rigid problem's iterations did not resolve; residual in the rigid problem at "
               "most 1e-4 of the velocity scale)\n",
               d->contact_regularized);
      }
      if (d->retried > 0) {
        printf("contact steps: %ld tried again with contact points the first try missed\n",
               d->retried);
      }
    }
    if (m->integrator == MBS_INTEGRATOR_MOREAU && d->numerical_dissipated > 0.0) {
      printf("numerical:    %.6g J taken out by the theta method's own damping (theta = %g; "
             "counted in /energy/dissipated and /energy/numerical_dissipation)\n",
             d->numerical_dissipated, m->moreau_theta);
    }
    if (m->integrator == MBS_INTEGRATOR_STATIC) {
      printf("energy:       not checked (static: no kinetic energy; V - W changed by %.6g J, "
             "W = %.6g J the work of the loads by the trapezoidal rule along the equilibria: "
             "zero change only along a path that starts at an equilibrium)\n",
             last_gain, d->external_work);
    } else if (denom > 0.0) {
      printf("energy:       relative error %.3e (max |E - E0 - W + D| / %.4g J, the largest of "
             "|E0| and the kinetic energy the balance allows)%s\n",
             dEmax / denom, denom, warn_t >= 0.0 ? " WARNING" : "");
    } else {
      printf("energy:       relative error 0 (the system never moved)\n");
    }
    printf("wall time:    %.3f s (%.0f steps/s)\n", wall, (double)d->step / fmax(wall, 1e-9));
    printf("output:       %s (%ld records)\n", out, nrec);
  }

done:
  mbs_output_close(w, NULL);
  free(q_pre);
  free(names);
  free(qunits);
  free(junits);
  free(jrunits);
  cli_output_free(&rec_out);
  cli_restart_free(&restart);
  mbs_data_destroy(d);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
  free_args(&args);
  return exit_code;
}
