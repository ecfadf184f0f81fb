/* args.c: the mbsim-run command's arguments: options, --set overrides, --help and
 * --version (docs/command-line.md) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#ifndef MBS_VERSION
#define MBS_VERSION "0.0.0"
#endif

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

static int add_override(CliArgs *a, const char *key, const char *value, const char *whole) {
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

void cli_free_args(CliArgs *a) {
  for (int i = 0; i < a->nov; i++) {
    free(a->ov_text[i]);
  }
  free(a->ov_text);
  free(a->ov_option);
  free(a->ov);
}

int cli_parse_args(CliArgs *a, int argc, char **argv) {
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
