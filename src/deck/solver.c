/* solver.c: the run settings of a deck: the sections `initial:`, `solver:` and `output:`
 * (docs/decks.md "Top level", "Solver and output"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* keys */

static const char *const initial_keys[] = {"assemble", "project_velocities", NULL};
static const char *const solver_keys[] = {"integrator",    "dt",           "t_end",
                                          "newton",        "genalpha",     "moreau",
                                          "max_halvings",  "linear_solver", "energy_balance",
                                          "spacetime",     "memory_limit", "static",
                                          "tolerance",     NULL};
static const char *const energy_keys[] = {"warning", "unstable", NULL};
static const char *const newton_keys[] = {"tolerance", "max_iterations", "reuse", NULL};
static const char *const genalpha_keys[] = {"rho_inf", NULL};
static const char *const spacetime_keys[] = {"degree", "elements_per_block", NULL};
static const char *const static_keys[] = {"gravity", NULL};
static const char *const static_gravity_words[] = {"ramp", "full"};
static const char *const output_keys[] = {"file", "every", "dt", "xdmf", "compression", NULL};


/* ---------------------------------------------------------------------------------------- */
/* defaults */

void deck_default_settings(mbsDeck *deck) {
#define SOLVER_DEFAULT(type, name, def) deck->solver.name = def;
  MBS_SOLVER_FIELDS(SOLVER_DEFAULT)
#undef SOLVER_DEFAULT
  deck->solver.integrator = MBS_INTEGRATOR_AUTO;
  deck->solver.energy_warning = -1.0;
  deck->solver.energy_unstable = -1.0;
  deck->solver.spacetime_elements = 1;
  deck->output.every = 1;
  deck->output.xdmf = 1;
  deck->output.compression = DECK_DEFAULT_COMPRESSION;
}

/* ---------------------------------------------------------------------------------------- */
/* initial */

/* initial: {assemble, project_velocities}; a joint's initial_rate needs project_velocities */
mbsStatus deck_read_initial(DeckReader *r, mbsDeck *deck, yaml_node_t *v) {
  mbsStatus st = MBS_OK;
  if (v && !deck_is_null(v)) {
    DeckMap im = {0};
    r->ctx[0] = '\0';
    if (v->type != YAML_MAPPING_NODE) {
      return deck_fail(r, v, "initial: expected a mapping {assemble, project_velocities}, got %s",
                       deck_kind(v));
    }
    if ((st = deck_map_flatten(r, v, &im)) == MBS_OK &&
        (st = deck_check_keys(r, &im, "initial", initial_keys, NULL)) == MBS_OK) {
      yaml_node_t *a = deck_map_get(&im, "assemble");
      yaml_node_t *pv = deck_map_get(&im, "project_velocities");
      if (a) {
        st = deck_bool(r, a, "initial.assemble", &deck->assemble);
      }
      if (st == MBS_OK && pv) {
        st = deck_bool(r, pv, "initial.project_velocities", &deck->project_velocities);
      }
    }
    deck_map_free(&im);
    if (st != MBS_OK) {
      return st;
    }
  }
  for (int i = 0; i < deck->njoint; i++) {
    if (deck->joints[i].has_initial_rate && !deck->project_velocities) {
      r->ctx[0] = '\0';
      return mbs_error_set(r->err, MBS_ERR_DECK, r->file, deck->joints[i].mark.line,
                           deck->joints[i].mark.col,
                           "joint '%s': initial_rate sets the joint's rate by projecting the "
                           "velocities: add `initial: {project_velocities: true}`",
                           deck->joints[i].name);
    }
  }
  return MBS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* solver and output */

mbsStatus deck_read_solver(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
  mbsDeckSolver *s = &deck->solver;
  DeckMap m = {0}, nm = {0};
  yaml_node_t *v, *dtn = NULL, *ten = NULL;
  int t;
  mbsStatus st = MBS_OK;

  snprintf(r->ctx, sizeof(r->ctx), "solver");
  if (!node || deck_is_null(node)) {
    return MBS_OK;
  }
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node, "expected a mapping, got %s", deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "solver", solver_keys, NULL)) != MBS_OK) {
    goto fail;
  }

  if ((v = deck_map_get(&m, "integrator"))) {
    if ((st = deck_word(r, v, "integrator", "integrator", mbs_integrator_words,
                        MBS_INTEGRATOR_COUNT, &t)) != MBS_OK) {
      goto fail;
    }
    s->integrator = (mbsIntegrator)t;
    /* a value node made by --set number i says where the choice came from (unless it is
     * the copy of a file's value that an override of another key went through) */
    if (v->start_mark.index == DECK_SET_MARK && v->start_mark.column < (size_t)r->noverride) {
      const char *path = r->overrides[v->start_mark.column].path;
      if (!strcmp(path, "solver.integrator") || !strcmp(path, "solver")) {
        s->integrator_override = (int)v->start_mark.column + 1;
      }
    }
    /* contacts are handled by moreau only (auto picks it) */
    if (r->contact_pairs && s->integrator != MBS_INTEGRATOR_AUTO &&
        s->integrator != MBS_INTEGRATOR_MOREAU) {
      st = deck_fail(r, v,
                     "integrator %s cannot handle contacts ('%s' gives pairs of shapes that may "
                     "touch); contacts need integrator: moreau (or auto, which picks it)",
                     mbs_integrator_words[s->integrator],
                     deck->contacts[r->contact_pairs - 1].name);
      goto fail;
    }
  }
  if ((v = deck_map_get(&m, "linear_solver"))) {
    if ((st = deck_word(r, v, "linear_solver", "linear solver", mbs_linear_solver_words,
                        MBS_LINEAR_SOLVER_COUNT, &t)) != MBS_OK) {
      goto fail;
    }
    s->linear_solver = (mbsLinearSolver)t;
  }
  if (((dtn = deck_map_get(&m, "dt")) && (st = deck_positive(r, dtn, "dt", &s->dt)) != MBS_OK) ||
      ((ten = deck_map_get(&m, "t_end")) &&
       (st = deck_positive(r, ten, "t_end", &s->t_end)) != MBS_OK)) {
    goto fail;
  }
  s->dt_given = dtn != NULL;
  if (s->dt > s->t_end) {
    st = deck_fail(r, dtn ? dtn : ten, "dt (%g) must not be larger than t_end (%g)", s->dt,
                   s->t_end);
    goto fail;
  }
  if (s->t_end / s->dt > DECK_MAX_STEPS) {
    st = deck_fail(r, dtn ? dtn : ten, "t_end / dt = %g steps; a run may take at most %g steps",
                   s->t_end / s->dt, DECK_MAX_STEPS);
    goto fail;
  }

  /* newton: {tolerance, max_iterations} */
  if ((v = deck_map_get(&m, "newton")) && !deck_is_null(v)) {
    if (v->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, v, "newton: expected a mapping {tolerance, max_iterations}, got %s",
                     deck_kind(v));
      goto fail;
    }
    if ((st = deck_map_flatten(r, v, &nm)) != MBS_OK ||
        (st = deck_check_keys(r, &nm, "solver.newton", newton_keys, NULL)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&nm, "tolerance")) &&
        (st = deck_positive(r, v, "newton.tolerance", &s->newton_tolerance)) != MBS_OK) {
      goto fail;
    }
    if (s->newton_tolerance < DECK_MIN_TOLERANCE || s->newton_tolerance >= 1.0) {
      st = deck_fail(r, v,
                     "newton.tolerance must be in [%g, 1) (got %g): a relative tolerance below "
                     "that is lost in double precision round-off",
                     DECK_MIN_TOLERANCE, s->newton_tolerance);
      goto fail;
    }
    if ((v = deck_map_get(&nm, "max_iterations"))) {
      if ((st = deck_integer(r, v, "newton.max_iterations", &s->newton_max_iterations)) != MBS_OK) {
        goto fail;
      }
      if (s->newton_max_iterations < 1) {
        st = deck_fail(r, v, "newton.max_iterations must be >= 1 (got %d)",
                       s->newton_max_iterations);
        goto fail;
      }
      if (s->newton_max_iterations > DECK_MAX_NEWTON) {
        st = deck_fail(r, v,
                       "newton.max_iterations must be <= %d (got %d): a Newton iteration that "
                       "has not converged by then will not",
                       DECK_MAX_NEWTON, s->newton_max_iterations);
        goto fail;
      }
    }
    if ((v = deck_map_get(&nm, "reuse")) &&
        (st = deck_bool(r, v, "newton.reuse", &s->newton_reuse)) != MBS_OK) {
      goto fail;
    }
  }

  /* genalpha: {rho_inf} */
  if ((v = deck_map_get(&m, "genalpha")) && !deck_is_null(v)) {
    deck_map_free(&nm);
    if (v->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, v, "genalpha: expected a mapping {rho_inf}, got %s", deck_kind(v));
      goto fail;
    }
    if ((st = deck_map_flatten(r, v, &nm)) != MBS_OK ||
        (st = deck_check_keys(r, &nm, "solver.genalpha", genalpha_keys, NULL)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&nm, "rho_inf"))) {
      if ((st = deck_number(r, v, "genalpha.rho_inf", &s->rho_inf)) != MBS_OK) {
        goto fail;
      }
      if (!(s->rho_inf >= 0.0 && s->rho_inf <= 1.0)) {
        st = deck_fail(r, v, "genalpha.rho_inf must be in [0, 1] (got %g)", s->rho_inf);
        goto fail;
      }
    }
  }

  /* spacetime: {degree, elements_per_block} */
  if ((v = deck_map_get(&m, "spacetime")) && !deck_is_null(v)) {
    deck_map_free(&nm);
    if (v->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, v, "spacetime: expected a mapping {degree, elements_per_block}, got %s",
                     deck_kind(v));
      goto fail;
    }
    s->spacetime_mark.line = (int)v->start_mark.line + 1;
    s->spacetime_mark.col = (int)v->start_mark.column + 1;
    if ((st = deck_map_flatten(r, v, &nm)) != MBS_OK ||
        (st = deck_check_keys(r, &nm, "solver.spacetime", spacetime_keys, NULL)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&nm, "degree"))) {
      if ((st = deck_integer(r, v, "spacetime.degree", &s->spacetime_degree)) != MBS_OK) {
        goto fail;
      }
      if (s->spacetime_degree != 1 && s->spacetime_degree != 2) {
        st = deck_fail(r, v, "spacetime.degree must be 1 or 2 (got %d)", s->spacetime_degree);
        goto fail;
      }
    }
    if ((v = deck_map_get(&nm, "elements_per_block"))) {
      if ((st = deck_integer(r, v, "spacetime.elements_per_block", &s->spacetime_elements)) !=
          MBS_OK) {
        goto fail;
      }
      if (s->spacetime_elements < 1 || s->spacetime_elements > 100000) {
        st = deck_fail(r, v, "spacetime.elements_per_block must be in [1, 100000] (got %d)",
                       s->spacetime_elements);
        goto fail;
      }
    }
  }

  /* moreau: {theta, variant, contact_tolerance, contact_iterations} */
  if ((v = deck_map_get(&m, "moreau")) && (st = deck_read_moreau(r, s, v)) != MBS_OK) {
    goto fail;
  }

  /* energy_balance: {warning, unstable} */
  if ((v = deck_map_get(&m, "energy_balance")) && !deck_is_null(v)) {
    deck_map_free(&nm);
    if (v->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, v, "energy_balance: expected a mapping {warning, unstable}, got %s",
                     deck_kind(v));
      goto fail;
    }
    if ((st = deck_map_flatten(r, v, &nm)) != MBS_OK ||
        (st = deck_check_keys(r, &nm, "solver.energy_balance", energy_keys, NULL)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&nm, "warning")) &&
        (st = deck_positive(r, v, "energy_balance.warning", &s->energy_warning)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&nm, "unstable")) &&
        (st = deck_positive(r, v, "energy_balance.unstable", &s->energy_unstable)) != MBS_OK) {
      goto fail;
    }
  }

  /* static: {gravity: ramp | full}: gravity follows the load factor min(t, 1) (ramp, the
   * default) or acts in full from the first increment */
  if ((v = deck_map_get(&m, "static")) && !deck_is_null(v)) {
    deck_map_free(&nm);
    if (v->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, v, "static: expected a mapping {gravity: ramp | full}, got %s",
                     deck_kind(v));
      goto fail;
    }
    if ((st = deck_map_flatten(r, v, &nm)) != MBS_OK ||
        (st = deck_check_keys(r, &nm, "solver.static", static_keys, NULL)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&nm, "gravity")) &&
        (st = deck_word(r, v, "static.gravity", "static gravity", static_gravity_words, 2,
                        &s->static_gravity_full)) != MBS_OK) {
      goto fail;
    }
  }

  /* memory_limit [GB]: what the model's memory estimate may reach (0: the machine's) */
  if ((v = deck_map_get(&m, "memory_limit"))) {
    if ((st = deck_number(r, v, "memory_limit", &s->memory_limit)) != MBS_OK) {
      goto fail;
    }
    if (!(s->memory_limit > 0.0 && s->memory_limit <= 1e9)) {
      st = deck_fail(r, v, "memory_limit must be a number of GB in (0, 1e9] (got %g)",
                     s->memory_limit);
      goto fail;
    }
  }

  /* tolerance: error control (docs/integrators.md "Error control"), for the schemes whose
   * steps it can choose; without dt the largest step is t_end / 20 (the interval of the
   * energy monitor and of the step ends a restart can start from), and records fall every
   * t_end / 100 (output.dt, unless the output section says otherwise) */
  if ((v = deck_map_get(&m, "tolerance"))) {
    if ((st = deck_positive(r, v, "tolerance", &s->tolerance)) != MBS_OK) {
      goto fail;
    }
    s->tolerance_mark.line = (int)v->start_mark.line + 1;
    s->tolerance_mark.col = (int)v->start_mark.column + 1;
    if (s->tolerance < 1e-10 || s->tolerance > 0.1) {
      st = deck_fail(r, v,
                     "tolerance must be in [1e-10, 0.1] (got %g): below that the estimate of "
                     "the local error is lost in the Newton iteration's round-off",
                     s->tolerance);
      goto fail;
    }
    if (!mbs_integrator_policy(s->integrator)->error_control) {
      st = deck_fail(r, v,
                     "tolerance chooses the steps of em, midpoint, genalpha and spacetime only "
                     "(integrator is %s): remove it and give dt, or choose one of those",
                     mbs_integrator_words[s->integrator]);
      goto fail;
    }
    if (!s->dt_given) {
      s->dt = s->t_end / 20.0;
    }
  }

  /* max_halvings: step control */
  if ((v = deck_map_get(&m, "max_halvings"))) {
    if ((st = deck_integer(r, v, "max_halvings", &s->max_halvings)) != MBS_OK) {
      goto fail;
    }
    if (s->max_halvings < 0 || s->max_halvings > 40) {
      st = deck_fail(r, v, "max_halvings must be in [0, 40] (got %d)", s->max_halvings);
      goto fail;
    }
  }

fail:
  deck_map_free(&nm);
  deck_map_free(&m);
  return st;
}

/* the deck's base name with .yaml/.yml replaced by .h5, in the working directory */
static mbsStatus default_output(DeckReader *r, mbsDeck *deck) {
  const char *slash = strrchr(deck->path, '/');
  const char *base = slash ? slash + 1 : deck->path;
  size_t n = strlen(base);
  if (n > 5 && strcmp(base + n - 5, ".yaml") == 0) {
    n -= 5;
  } else if (n > 4 && strcmp(base + n - 4, ".yml") == 0) {
    n -= 4;
  }
  if (n + 4 > sizeof(deck->output.file)) {
    return mbs_error_set(r->err, MBS_ERR_DECK, r->file, 0, 0, "deck file name is too long");
  }
  snprintf(deck->output.file, sizeof(deck->output.file), "%.*s.h5", (int)n, base);
  return MBS_OK;
}

mbsStatus deck_read_output(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
  mbsDeckOutput *o = &deck->output;
  DeckMap m = {0};
  yaml_node_t *v;
  mbsStatus st;

  if ((st = default_output(r, deck)) != MBS_OK) {
    return st;
  }
  snprintf(r->ctx, sizeof(r->ctx), "output");
  if (!node || deck_is_null(node)) {
    if (deck->solver.tolerance > 0.0 && !deck->solver.dt_given) {
      o->dt = deck->solver.t_end / 100.0;
    }
    return MBS_OK;
  }
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node, "expected a mapping, got %s", deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "output", output_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "file"))) {
    if ((st = deck_string(r, v, "file", o->file, sizeof(o->file))) != MBS_OK) {
      goto fail;
    }
    if (!o->file[0]) {
      st = deck_fail(r, v, "file must not be empty");
      goto fail;
    }
  }
  /* output.every or output.dt; one given by --set replaces the other in the deck */
  yaml_node_t *every = deck_map_get(&m, "every"), *dt = deck_map_get(&m, "dt");
  if (every && dt) {
    int every_set = every->start_mark.index == DECK_SET_MARK;
    int dt_set = dt->start_mark.index == DECK_SET_MARK;
    if (every_set == dt_set) {
      st = deck_fail(r, dt,
                     "give output.every (a record every k-th step) or output.dt (records "
                     "every dt seconds), not both");
      goto fail;
    }
    if (dt_set) {
      every = NULL;
    } else {
      dt = NULL;
    }
  }
  if ((v = every)) {
    if ((st = deck_integer(r, v, "every", &o->every)) != MBS_OK) {
      goto fail;
    }
    if (o->every < 1) {
      st = deck_fail(r, v, "every must be >= 1 (got %d)", o->every);
      goto fail;
    }
  }
  if ((v = dt)) {
    /* record times k dt independent of the step (docs/output.md "Records between steps") */
    if ((st = deck_positive(r, v, "dt", &o->dt)) != MBS_OK) {
      goto fail;
    }
    if (o->dt > deck->solver.t_end) {
      st = deck_fail(r, v, "dt (%g) must not be larger than t_end (%g)", o->dt,
                     deck->solver.t_end);
      goto fail;
    }
    if (deck->solver.t_end / o->dt > DECK_MAX_STEPS) {
      st = deck_fail(r, v, "t_end / dt = %g records; a run may write at most %g",
                     deck->solver.t_end / o->dt, DECK_MAX_STEPS);
      goto fail;
    }
  }
  if ((v = deck_map_get(&m, "xdmf")) && (st = deck_bool(r, v, "xdmf", &o->xdmf)) != MBS_OK) {
    goto fail;
  }
  /* the time series' deflate level, or off (docs/output.md "Compression") */
  if ((v = deck_map_get(&m, "compression"))) {
    const char *text = deck_text(v);
    if (deck_text_is(v, "off")) {
      o->compression = 0;
    } else if (!text || deck_is_null(v) || !(*text == '-' || (*text >= '0' && *text <= '9'))) {
      st = deck_fail(r, v, "compression: expected off or a deflate level 1..9 (got %s)",
                     text && !deck_is_null(v) ? text : deck_kind(v));
      goto fail;
    } else if ((st = deck_integer(r, v, "compression", &o->compression)) != MBS_OK) {
      goto fail;
    } else if (o->compression < 0 || o->compression > 9) {
      st = deck_fail(r, v, "compression must be off (or 0) or a deflate level 1..9 (got %d)",
                     o->compression);
      goto fail;
    }
  }
  /* error control without dt: records every t_end / 100 between the chosen steps, unless
   * output.every or output.dt says otherwise */
  if (deck->solver.tolerance > 0.0 && !deck->solver.dt_given && !every && !dt) {
    o->dt = deck->solver.t_end / 100.0;
  }

fail:
  deck_map_free(&m);
  return st;
}
