/* deck.c: mbs_deck_load and the deck schema (decks/README.md, format version 1) apart from bodies:
 * the top level, joints, loads, solver and output. The pipeline is
 *   read file -> parse (libyaml loader) -> depth check -> --set overrides -> validate
 *   -> deck text (verbatim, or re-emitted when overridden);
 * every step reports file:line:col through mbsError and never prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"
#include "util/profile.h"

/* ---------------------------------------------------------------------------------------- */
/* keyword tables (one X-macro list each in deck.h) */

#define WORD(name, word) word,
static const char *const body_type_words[] = {MBS_BODY_TYPE_LIST(WORD)};
static const char *const joint_type_words[] = {MBS_JOINT_TYPE_LIST(WORD)};
static const char *const load_type_words[] = {MBS_LOAD_TYPE_LIST(WORD)};
static const char *const frame_words[] = {MBS_FRAME_LIST(WORD)};
static const char *const method_words[] = {MBS_TORQUE_METHOD_LIST(WORD)};
static const char *const augmentation_words[] = {MBS_AUGMENTATION_LIST(WORD)};
static const char *const profile_words[] = {MBS_PROFILE_LIST(WORD)};
static const char *const integrator_words[] = {MBS_INTEGRATOR_LIST(WORD)};
static const char *const linear_solver_words[] = {MBS_LINEAR_SOLVER_LIST(WORD)};
#undef WORD

const char *mbs_body_type_word(mbsBodyType t) {
  return (unsigned)t < MBS_BODY_TYPE_COUNT ? body_type_words[t] : "unknown";
}

const char *mbs_joint_type_word(mbsJointType t) {
  return (unsigned)t < MBS_JOINT_TYPE_COUNT ? joint_type_words[t] : "unknown";
}

const char *mbs_load_type_word(mbsLoadType t) {
  return (unsigned)t < MBS_LOAD_TYPE_COUNT ? load_type_words[t] : "unknown";
}

const char *mbs_linear_solver_word(mbsLinearSolver t) {
  return (unsigned)t < MBS_LINEAR_SOLVER_COUNT ? linear_solver_words[t] : "unknown";
}

const char *mbs_integrator_word(mbsIntegrator t) {
  return (unsigned)t < MBS_INTEGRATOR_COUNT ? integrator_words[t] : "unknown";
}

int mbs_integrator_from_word(const char *word) {
  if (!word) {
    return -1;
  }
  for (int i = 0; i < MBS_INTEGRATOR_COUNT; i++) {
    if (strcmp(word, integrator_words[i]) == 0) {
      return i;
    }
  }
  return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* keys */

static const char *const top_keys[] = {"mbsim",  "title", "gravity", "parameters", "bodies",
                                       "joints", "loads", "solver",  "output",     "initial",
                                       NULL};
static const char *const initial_keys[] = {"assemble", "project_velocities", NULL};
static const char *const joint_keys[] = {"name", "type",   "bodies", "point", "axis",
                                         "axes", "points", "motion", "initial_rate",
                                         "relative_to", NULL};
static const char *const load_keys[] = {
    "name",      "type",    "body",        "joint",        "bodies",  "value",
    "frame",     "point",   "method",      "augmentation", "profile", "points",
    "stiffness", "damping", "rest_length", "rest_angle",   NULL};
static const char *const solver_keys[] = {"integrator",    "dt",           "t_end",
                                          "newton",        "genalpha",     "max_halvings",
                                          "linear_solver", "energy_balance", NULL};
static const char *const energy_keys[] = {"warning", "unstable", NULL};
static const char *const newton_keys[] = {"tolerance", "max_iterations", "reuse", NULL};
static const char *const genalpha_keys[] = {"rho_inf", NULL};
static const char *const output_keys[] = {"file", "every", "xdmf", NULL};

/* keys of the deck format that this version does not read yet: "unsupported", not "unknown" */
static const char *const joint_later[] = {NULL};
static const char *const load_later[] = {NULL};
static const char *const solver_later[] = {"moreau", "spacetime", NULL};

/* ---------------------------------------------------------------------------------------- */
/* helpers */

static yaml_node_t *item(DeckReader *r, const yaml_node_t *seq, int k) {
  return yaml_document_get_node(r->doc, seq->data.sequence.items.start[k]);
}

static int count(const yaml_node_t *seq) {
  return (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

/* "ground" -> -1, a defined body -> its index */
static mbsStatus body_ref(DeckReader *r, const yaml_node_t *n, const char *field, int *out) {
  const char *s = deck_text(n);
  if (!s || deck_is_null(n)) {
    return deck_fail(r, n, "%s: expected a body name, got %s", field, deck_kind(n));
  }
  if (strcmp(s, "ground") == 0) {
    *out = -1;
    return MBS_OK;
  }
  *out = deck_names_get(&r->body_names, s);
  if (*out < 0) {
    return deck_fail(r, n, "body '%.64s' is not defined", s);
  }
  return MBS_OK;
}

/* a list of exactly two entries */
static mbsStatus pair_list(DeckReader *r, yaml_node_t *n, const char *field, const char *want) {
  if (n->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, n, "%s: expected %s, got %s", field, want, deck_kind(n));
  }
  if (count(n) != 2) {
    return deck_fail(r, n, "%s: expected %s (got %d items)", field, want, count(n));
  }
  return MBS_OK;
}

/* a list that may also be absent or empty (joints, loads) */
static mbsStatus entry_list(DeckReader *r, yaml_node_t *n, const char *field, int *nitem) {
  *nitem = 0;
  if (!n || deck_is_null(n)) {
    return MBS_OK;
  }
  if (n->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, n, "%s: expected a list, got %s", field, deck_kind(n));
  }
  *nitem = count(n);
  return MBS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* profiles (decks/README.md "Profiles") */

/* [t0, t1] with t0 < t1 */
static mbsStatus profile_interval(DeckReader *r, yaml_node_t *n, const char *field, double p[3]) {
  mbsStatus st;
  char f[160];
  if ((st = pair_list(r, n, field, "[t0, t1]")) != MBS_OK) {
    return st;
  }
  snprintf(f, sizeof(f), "%.100s[0]", field);
  if ((st = deck_number(r, item(r, n, 0), f, &p[0])) != MBS_OK) {
    return st;
  }
  snprintf(f, sizeof(f), "%.100s[1]", field);
  if ((st = deck_number(r, item(r, n, 1), f, &p[1])) != MBS_OK) {
    return st;
  }
  if (!(p[1] > p[0])) {
    return deck_fail(r, n, "%s: t1 = %g must be greater than t0 = %g", field, p[1], p[0]);
  }
  return MBS_OK;
}

/* {amplitude, frequency, phase}: amplitude and frequency required, phase default 0 */
static mbsStatus profile_sine(DeckReader *r, yaml_node_t *n, const char *field, double p[3]) {
  static const char *const sine_keys[] = {"amplitude", "frequency", "phase", NULL};
  DeckMap m = {0};
  char f[160];
  mbsStatus st;
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "%s: expected a mapping {amplitude, frequency, phase}, got %s", field,
                     deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, field, sine_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  for (int k = 0; k < 3; k++) {
    yaml_node_t *v = deck_map_get(&m, sine_keys[k]);
    snprintf(f, sizeof(f), "%.100s.%s", field, sine_keys[k]);
    if (!v && k < 2) {
      st = deck_fail(r, n, "%s: missing required key '%s'", field, sine_keys[k]);
      goto fail;
    }
    p[k] = 0.0;
    if (v && (st = deck_number(r, v, f, &p[k])) != MBS_OK) {
      goto fail;
    }
  }
fail:
  deck_map_free(&m);
  return st;
}

/* [[t, f], ...]: at least one point, strictly increasing in t */
static mbsStatus profile_table(DeckReader *r, yaml_node_t *n, const char *field,
                               mbsDeckProfile *p) {
  char f[160];
  mbsStatus st;
  if (n->type != YAML_SEQUENCE_NODE || count(n) < 1) {
    return deck_fail(r, n, "%s: expected a list of points [[t, f], ...], got %s", field,
                     n->type == YAML_SEQUENCE_NODE ? "an empty list" : deck_kind(n));
  }
  int np = count(n);
  if (!(p->table = malloc((size_t)np * 2 * sizeof(double)))) {
    return deck_nomem(r);
  }
  p->ntab = np;
  for (int k = 0; k < np; k++) {
    yaml_node_t *pt = item(r, n, k);
    snprintf(f, sizeof(f), "%.100s[%d]", field, k);
    if ((st = pair_list(r, pt, f, "a point [t, f]")) != MBS_OK) {
      return st;
    }
    snprintf(f, sizeof(f), "%.100s[%d][0]", field, k);
    if ((st = deck_number(r, item(r, pt, 0), f, &p->table[2 * k])) != MBS_OK) {
      return st;
    }
    snprintf(f, sizeof(f), "%.100s[%d][1]", field, k);
    if ((st = deck_number(r, item(r, pt, 1), f, &p->table[2 * k + 1])) != MBS_OK) {
      return st;
    }
    if (k > 0 && !(p->table[2 * k] > p->table[2 * k - 2])) {
      return deck_fail(r, pt,
                       "%s[%d]: t = %g must be greater than the previous t = %g (a table "
                       "increases in t)",
                       field, k, p->table[2 * k], p->table[2 * k - 2]);
    }
  }
  return MBS_OK;
}

/* {expression: "f(t)"}: the text with $parameters replaced by their values, checked by the
 * deck's expression parser (located errors) with t defined, then differentiated exactly */
static mbsStatus profile_expression(DeckReader *r, yaml_node_t *n, const char *field,
                                    mbsDeckProfile *p) {
  const char *s = deck_text(n);
  if (!s || n->type != YAML_SCALAR_NODE || deck_is_null(n)) {
    return deck_fail(r, n, "%s: expected an expression of t (a string), got %s", field,
                     deck_kind(n));
  }
  double f0;
  mbsStatus st = deck_time_expression(r, n, field, s, &f0);
  if (st != MBS_OK) {
    return st;
  }
  /* $name -> (value) */
  size_t cap = strlen(s) * 4 + 64, k = 0;
  char *out = malloc(cap);
  if (!out) {
    return deck_nomem(r);
  }
  for (const char *c = s; *c;) {
    if (*c == '$') {
      const char *e = c + 1;
      while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9') ||
             *e == '_') {
        e++;
      }
      char name[MBS_NAME_MAX];
      snprintf(name, sizeof(name), "%.*s", (int)(e - c - 1), c + 1);
      int i = deck_names_get(&r->param_names, name);
      double v = i >= 0 ? r->params[i].value : 0.0;
      if (k + 40 >= cap) {
        char *bigger = realloc(out, cap *= 2);
        if (!bigger) {
          free(out);
          return deck_nomem(r);
        }
        out = bigger;
      }
      k += (size_t)snprintf(out + k, cap - k, "(%.17g)", v);
      c = e;
    } else {
      if (k + 2 >= cap) {
        char *bigger = realloc(out, cap *= 2);
        if (!bigger) {
          free(out);
          return deck_nomem(r);
        }
        out = bigger;
      }
      out[k++] = *c++;
    }
  }
  out[k] = '\0';
  char why[256];
  p->ev = mbs_profile_expr_create(out, why, sizeof(why));
  if (!p->ev) {
    free(out);
    return deck_fail(r, n, "%s: '%.64s': %s", field, s, why);
  }
  p->expr = out;
  return MBS_OK;
}

/* `constant` or a mapping with one key: {window: [t0, t1]}, {ramp: [t0, t1]},
 * {sine: {amplitude, frequency, phase}}, {table: [[t, f], ...]}; on failure p->table is
 * released */
static mbsStatus read_profile(DeckReader *r, yaml_node_t *n, const char *field, mbsDeckProfile *p) {
  static const char *const want = "constant, {window: [t0, t1]}, {ramp: [t0, t1]}, {sine: "
                                  "{amplitude, frequency, phase}}, {table: [[t, f], ...]} or "
                                  "{expression: \"f(t)\"}";
  DeckMap m = {0};
  char f[160];
  int t;
  mbsStatus st = MBS_OK;

  memset(p, 0, sizeof(*p));
  p->kind = MBS_PROFILE_CONSTANT;
  if (n->type == YAML_SCALAR_NODE) {
    if (deck_text_is(n, "constant")) {
      return MBS_OK;
    }
    for (t = 1; t < MBS_PROFILE_COUNT; t++) {
      if (deck_text_is(n, profile_words[t])) {
        return deck_fail(r, n, "%s: the %s profile needs parameters, e.g. {%s: ...}", field,
                         profile_words[t], profile_words[t]);
      }
    }
    return deck_fail(r, n, "%s: expected %s", field, want);
  }
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "%s: expected %s, got %s", field, want, deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK) {
    return st;
  }
  if (m.n != 1) {
    st = deck_fail(r, n,
                   "%s: expected one profile (a mapping with one key: window, ramp, sine, "
                   "table or expression), got %d keys",
                   field, m.n);
    goto fail;
  }
  if ((st = deck_word(r, m.kv[0].key, field, "profile", profile_words, MBS_PROFILE_COUNT, &t)) !=
      MBS_OK) {
    goto fail;
  }
  p->kind = (mbsProfileKind)t;
  snprintf(f, sizeof(f), "%.100s.%s", field, profile_words[t]);
  yaml_node_t *v = m.kv[0].value;
  switch (p->kind) {
    case MBS_PROFILE_CONSTANT:
      st = deck_fail(r, m.kv[0].key, "%s: write `constant` without parameters", field);
      break;
    case MBS_PROFILE_WINDOW:
    case MBS_PROFILE_RAMP:
      st = profile_interval(r, v, f, p->p);
      break;
    case MBS_PROFILE_SINE:
      st = profile_sine(r, v, f, p->p);
      break;
    case MBS_PROFILE_TABLE:
      st = profile_table(r, v, f, p);
      break;
    case MBS_PROFILE_EXPRESSION:
      st = profile_expression(r, v, f, p);
      break;
    case MBS_PROFILE_COUNT:
      break;
  }
fail:
  deck_map_free(&m);
  if (st != MBS_OK) {
    free(p->table);
    p->table = NULL;
    p->ntab = 0;
    free(p->expr);
    p->expr = NULL;
    mbs_profile_expr_destroy(p->ev);
    p->ev = NULL;
  }
  return st;
}

/* value x profile(t) of a deck profile at t (the deck only needs t = 0) */
static double profile_at(const mbsDeckProfile *p, double t, double *rate) {
  return mbs_profile_eval(p->kind, p->p, p->table, p->ntab, p->ev, t, rate);
}

/* ---------------------------------------------------------------------------------------- */
/* joints */

/* a nonzero vector, normalised */
static mbsStatus unit_vec3(DeckReader *r, yaml_node_t *n, const char *field, double out[3]) {
  mbsStatus st = deck_vec3(r, n, field, out);
  if (st != MBS_OK) {
    return st;
  }
  double len = deck_norm(out, 3);
  if (!(len > 0) || !isfinite(len)) {
    return deck_fail(r, n, "%s must be a nonzero vector", field);
  }
  for (int k = 0; k < 3; k++) {
    out[k] /= len;
  }
  return MBS_OK;
}

/* motion: {value, profile} on a revolute (angle) or prismatic (displacement) joint; the
 * prescribed value x profile(t) is relative to t = 0, so it must vanish there */
static mbsStatus read_motion(DeckReader *r, mbsDeckJoint *j, yaml_node_t *n) {
  static const char *const motion_keys[] = {"value", "profile", NULL};
  DeckMap m = {0};
  yaml_node_t *v;
  mbsStatus st;
  const char *what = j->type == MBS_JOINT_REVOLUTE ? "angle" : "displacement";

  deck_node_pos(n, &j->motion_mark.line, &j->motion_mark.col);
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "motion: expected a mapping {value, profile}, got %s", deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "motion", motion_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  if (!(v = deck_map_get(&m, "value"))) {
    st = deck_fail(r, n, "motion: missing required key 'value' (the %s [%s])", what,
                   j->type == MBS_JOINT_REVOLUTE ? "rad" : "m");
    goto fail;
  }
  if ((st = deck_number(r, v, "motion.value", &j->motion_value)) != MBS_OK) {
    goto fail;
  }
  j->motion_profile.kind = MBS_PROFILE_CONSTANT;
  yaml_node_t *pn = deck_map_get(&m, "profile");
  if (pn && (st = read_profile(r, pn, "motion.profile", &j->motion_profile)) != MBS_OK) {
    goto fail;
  }
  double f0 = j->motion_value * profile_at(&j->motion_profile, 0.0, NULL);
  if (f0 != 0.0) {
    st = deck_fail(r, pn ? pn : v,
                   "motion: the prescribed %s is relative to t = 0 and must be 0 there, but "
                   "value x profile(0) = %g; use a profile that starts at 0 (ramp, sine, table)",
                   what, f0);
    goto fail;
  }
  j->has_motion = 1;
fail:
  deck_map_free(&m);
  if (st != MBS_OK) {
    free(j->motion_profile.table);
    memset(&j->motion_profile, 0, sizeof(j->motion_profile));
  }
  return st;
}

static int joint_has_axis(mbsJointType t) {
  return t == MBS_JOINT_REVOLUTE || t == MBS_JOINT_CYLINDRICAL || t == MBS_JOINT_PRISMATIC ||
         t == MBS_JOINT_PLANAR;
}

static mbsStatus read_joint(DeckReader *r, mbsDeck *deck, DeckNames *names, int i,
                            yaml_node_t *node) {
  mbsDeckJoint *j = &deck->joints[i];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL;
  const DeckKeyValue *kv;
  yaml_node_t *v;
  int t;
  mbsStatus st;

  j->body[0] = j->body[1] = -1;
  deck_node_pos(node, &j->mark.line, &j->mark.col);
  deck_entry_ctx(r, node, "joints", i);
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node, "expected a mapping (one joint), got %s", deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK) {
    return st;
  }
  if ((st = deck_entry_start(r, &m, "joints", i, joint_keys, joint_later, j->name, &nn)) !=
      MBS_OK) {
    goto fail;
  }
  int first = deck_names_get(names, j->name);
  if (first >= 0) {
    st = deck_fail(r, nn, "duplicate joint name '%s' (first at %d:%d)", j->name,
                   deck->joints[first].mark.line, deck->joints[first].mark.col);
    goto fail;
  }
  deck_names_put(names, j->name, i);

  /* type */
  if (!(v = deck_map_get(&m, "type"))) {
    st = deck_fail(r, m.node, "missing required key 'type'");
    goto fail;
  }
  if ((st = deck_word(r, v, "type", "joint type", joint_type_words, MBS_JOINT_TYPE_COUNT, &t)) !=
      MBS_OK) {
    goto fail;
  }
  j->type = (mbsJointType)t;
  const char *tw = joint_type_words[t];

  /* the two bodies, different, "ground" = -1 */
  if (!(v = deck_map_get(&m, "bodies"))) {
    st = deck_fail(r, m.node, "missing required key 'bodies'");
    goto fail;
  }
  if ((st = pair_list(r, v, "bodies", "a list of two body names [first, second]")) != MBS_OK ||
      (st = body_ref(r, item(r, v, 0), "bodies[0]", &j->body[0])) != MBS_OK ||
      (st = body_ref(r, item(r, v, 1), "bodies[1]", &j->body[1])) != MBS_OK) {
    goto fail;
  }
  if (j->body[0] == j->body[1]) {
    st = deck_fail(r, v, "the two bodies must differ (both are '%s')", deck_text(item(r, v, 0)));
    goto fail;
  }

  /* point: all but distance */
  kv = deck_map_find(&m, "point");
  if (j->type == MBS_JOINT_DISTANCE) {
    if (kv) {
      st = deck_fail(r, kv->key, "a distance joint takes no 'point' (use 'points')");
      goto fail;
    }
  } else if (!kv) {
    st = deck_fail(r, m.node, "missing required key 'point' (a %s joint needs it)", tw);
    goto fail;
  } else if ((st = deck_vec3(r, kv->value, "point", j->point)) != MBS_OK) {
    goto fail;
  }

  /* axis: revolute, cylindrical, prismatic (the axis), planar (the plane normal); normalised */
  kv = deck_map_find(&m, "axis");
  if (joint_has_axis(j->type)) {
    if (!kv) {
      st = deck_fail(r, m.node, "missing required key 'axis' (a %s joint needs it%s)", tw,
                     j->type == MBS_JOINT_PLANAR ? ": the normal of the plane" : "");
      goto fail;
    }
    if ((st = unit_vec3(r, kv->value, "axis", j->axis)) != MBS_OK) {
      goto fail;
    }
  } else if (kv) {
    st = deck_fail(r, kv->key, "a %s joint takes no 'axis'%s", tw,
                   j->type == MBS_JOINT_UNIVERSAL ? " (use 'axes')" : "");
    goto fail;
  }

  /* axes: universal only, two perpendicular unit vectors (the cross of a Cardan joint) */
  kv = deck_map_find(&m, "axes");
  if (j->type == MBS_JOINT_UNIVERSAL) {
    if (!kv) {
      st = deck_fail(r, m.node,
                     "missing required key 'axes' (a universal joint needs [axis on body 1, "
                     "axis on body 2])");
      goto fail;
    }
    if ((st = pair_list(r, kv->value, "axes", "two axes [[x, y, z], [x, y, z]]")) != MBS_OK ||
        (st = unit_vec3(r, item(r, kv->value, 0), "axes[0]", j->axes[0])) != MBS_OK ||
        (st = unit_vec3(r, item(r, kv->value, 1), "axes[1]", j->axes[1])) != MBS_OK) {
      goto fail;
    }
    double c = j->axes[0][0] * j->axes[1][0] + j->axes[0][1] * j->axes[1][1] +
               j->axes[0][2] * j->axes[1][2];
    if (fabs(c) > 1e-9) {
      st = deck_fail(r, kv->value,
                     "axes: the two axes of a universal joint must be perpendicular (they are "
                     "at %.6g degrees)",
                     acos(fmax(-1.0, fmin(1.0, c))) * 180.0 / 3.14159265358979323846);
      goto fail;
    }
  } else if (kv) {
    st = deck_fail(r, kv->key, "a %s joint takes no 'axes'%s", tw,
                   joint_has_axis(j->type) ? " (use 'axis')" : "");
    goto fail;
  }

  /* points: distance only; default the centres of mass, required next to ground */
  kv = deck_map_find(&m, "points");
  if (j->type != MBS_JOINT_DISTANCE) {
    if (kv) {
      st = deck_fail(r, kv->key, "a %s joint takes no 'points'", tw);
      goto fail;
    }
  } else {
    if (kv) {
      if ((st = pair_list(r, kv->value, "points", "two points [[x, y, z], [x, y, z]]")) != MBS_OK ||
          (st = deck_vec3(r, item(r, kv->value, 0), "points[0]", j->points[0])) != MBS_OK ||
          (st = deck_vec3(r, item(r, kv->value, 1), "points[1]", j->points[1])) != MBS_OK) {
        goto fail;
      }
      j->has_points = 1;
    } else if (j->body[0] < 0 || j->body[1] < 0) {
      st = deck_fail(r, m.node, "a distance joint to ground needs 'points'");
      goto fail;
    } else {
      memcpy(j->points[0], deck->bodies[j->body[0]].position, sizeof(j->points[0]));
      memcpy(j->points[1], deck->bodies[j->body[1]].position, sizeof(j->points[1]));
    }

    /* the length is the distance at t = 0: it must not vanish */
    double d2 = 0, s2 = 0;
    for (int k = 0; k < 3; k++) {
      double dk = j->points[1][k] - j->points[0][k];
      d2 += dk * dk;
      s2 += j->points[0][k] * j->points[0][k] + j->points[1][k] * j->points[1][k];
    }
    if (!(d2 <= DECK_MAX_SCALE) || !(s2 <= DECK_MAX_SCALE)) {
      st = deck_fail(r, kv ? kv->value : m.node,
                     "%s: the points of a distance joint are too far apart or from the origin "
                     "(their squares exceed %g; the constraint would overflow)",
                     kv ? "points" : "the bodies' positions", DECK_MAX_SCALE);
      goto fail;
    }
    if (sqrt(d2) <= 1e-12 * (1.0 + sqrt(s2))) {
      st = deck_fail(r, kv ? kv->value : m.node,
                     "the two points of a distance joint coincide (the length would be zero)");
      goto fail;
    }
  }

  /* relative_to: point, axis, axes and points given in a body's frame (its centre of mass and
   * directors at t = 0) */
  kv = deck_map_find(&m, "relative_to");
  if (kv) {
    int b;
    if ((st = body_ref(r, kv->value, "relative_to", &b)) != MBS_OK) {
      goto fail;
    }
    if (b >= 0) {
      const mbsDeckBody *rb = &deck->bodies[b];
      double *pts[3] = {j->point, j->points[0], j->points[1]};
      double *dirs[3] = {j->axis, j->axes[0], j->axes[1]};
      for (int k = 0; k < 3; k++) {
        double x[3], a[3];
        for (int c = 0; c < 3; c++) {
          x[c] = rb->position[c];
          a[c] = 0.0;
          for (int l = 0; l < 3; l++) {
            x[c] += rb->directors[3 * c + l] * pts[k][l];
            a[c] += rb->directors[3 * c + l] * dirs[k][l];
          }
        }
        if (k == 0 || j->has_points) {
          memcpy(pts[k], x, sizeof(x));
        }
        memcpy(dirs[k], a, sizeof(a));
      }
    }
  }

  /* motion: revolute and prismatic joints only */
  kv = deck_map_find(&m, "motion");
  if (kv && j->type != MBS_JOINT_REVOLUTE && j->type != MBS_JOINT_PRISMATIC) {
    st = deck_fail(r, kv->key,
                   "a %s joint takes no 'motion' (only revolute and prismatic joints can be "
                   "driven)",
                   tw);
    goto fail;
  }
  if (kv && (st = read_motion(r, j, kv->value)) != MBS_OK) {
    goto fail;
  }

  /* initial_rate: the joint's rate at t = 0, kept when velocities are projected */
  kv = deck_map_find(&m, "initial_rate");
  if (kv && j->type != MBS_JOINT_REVOLUTE && j->type != MBS_JOINT_PRISMATIC &&
      j->type != MBS_JOINT_CYLINDRICAL) {
    st = deck_fail(r, kv->key,
                   "a %s joint takes no 'initial_rate' (revolute, cylindrical and prismatic "
                   "joints do)",
                   tw);
    goto fail;
  }
  if (kv && j->has_motion) {
    st = deck_fail(r, kv->key,
                   "joint '%s' has a motion, which sets its rate: it takes no 'initial_rate'",
                   j->name);
    goto fail;
  }
  if (kv) {
    if ((st = deck_number(r, kv->value, "initial_rate", &j->initial_rate)) != MBS_OK) {
      goto fail;
    }
    j->has_initial_rate = 1;
  }

fail:
  deck_map_free(&m);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* loads */

/* the keys each load type takes besides name and type */
static const char *const *load_type_keys(mbsLoadType t) {
  static const char *const force[] = {"body", "value", "frame", "point", "profile", NULL};
  static const char *const torque[] = {"body", "value", "frame", "method", "profile", NULL};
  static const char *const joint_torque[] = {"joint",        "value",   "method",
                                             "augmentation", "profile", NULL};
  static const char *const joint_force[] = {"joint", "value", "profile", NULL};
  static const char *const spring[] = {"bodies",  "points",      "stiffness",
                                       "damping", "rest_length", NULL};
  static const char *const rotational_spring[] = {"joint", "stiffness", "damping", "rest_angle",
                                                  NULL};
  switch (t) {
    case MBS_LOAD_FORCE:
      return force;
    case MBS_LOAD_TORQUE:
      return torque;
    case MBS_LOAD_JOINT_TORQUE:
      return joint_torque;
    case MBS_LOAD_JOINT_FORCE:
      return joint_force;
    case MBS_LOAD_SPRING:
      return spring;
    case MBS_LOAD_ROTATIONAL_SPRING:
      return rotational_spring;
    case MBS_LOAD_TYPE_COUNT:
      break;
  }
  return NULL;
}

static int word_in(const char *s, const char *const *list) {
  for (int i = 0; list && list[i]; i++) {
    if (strcmp(s, list[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

/* a number >= 0 */
static mbsStatus nonnegative(DeckReader *r, const yaml_node_t *n, const char *field, double *out) {
  mbsStatus st = deck_number(r, n, field, out);
  if (st == MBS_OK && !(*out >= 0.0)) {
    return deck_fail(r, n, "%s must be >= 0 (got %g)", field, *out);
  }
  return st;
}

/* joint: a defined joint of one of the given types (what the load needs it for) */
static mbsStatus joint_ref(DeckReader *r, const mbsDeck *deck, const DeckNames *jnames,
                           yaml_node_t *n, const char *tw, mbsJointType a, mbsJointType b,
                           const char *need, int *out) {
  const char *s = deck_text(n);
  if (!s || deck_is_null(n)) {
    return deck_fail(r, n, "joint: expected a joint name, got %s", deck_kind(n));
  }
  *out = deck_names_get(jnames, s);
  if (*out < 0) {
    return deck_fail(r, n, "joint '%.64s' is not defined", s);
  }
  mbsJointType jt = deck->joints[*out].type;
  if (jt != a && jt != b) {
    return deck_fail(r, n, "joint '%s' is a %s joint, which has no %s; a %s needs a %s or %s joint",
                     s, joint_type_words[jt], need, tw, joint_type_words[a], joint_type_words[b]);
  }
  return MBS_OK;
}

/* force, torque: body, value (vector), frame, point, method */
static mbsStatus read_body_load(DeckReader *r, mbsDeck *deck, mbsDeckLoad *l, DeckMap *m) {
  const DeckKeyValue *kv;
  yaml_node_t *v;
  int t;
  mbsStatus st;

  /* body: defined, moving; a torque needs a rigid body */
  if (!(v = deck_map_get(m, "body"))) {
    return deck_fail(r, m->node, "missing required key 'body'");
  }
  if ((st = body_ref(r, v, "body", &l->body)) != MBS_OK) {
    return st;
  }
  if (l->body < 0) {
    return deck_fail(r, v, "a load cannot act on 'ground'");
  }
  const mbsDeckBody *b = &deck->bodies[l->body];
  if (b->fixed) {
    return deck_fail(r, v, "body '%s' is fixed (welded to ground) and cannot carry a load",
                     b->name);
  }
  if (l->type == MBS_LOAD_TORQUE && b->type != MBS_BODY_RIGID) {
    return deck_fail(r, v, "a torque needs a rigid body ('%s' is a point mass)", b->name);
  }

  /* value, frame */
  if (!(v = deck_map_get(m, "value"))) {
    return deck_fail(r, m->node, "missing required key 'value'");
  }
  if ((st = deck_vec3(r, v, "value", l->value)) != MBS_OK) {
    return st;
  }
  if ((v = deck_map_get(m, "frame"))) {
    if ((st = deck_word(r, v, "frame", "frame", frame_words, MBS_FRAME_COUNT, &t)) != MBS_OK) {
      return st;
    }
    l->frame = (mbsFrame)t;
  }

  /* point: forces only, default the body's centre of mass */
  memcpy(l->point, b->position, sizeof(l->point));
  if ((kv = deck_map_find(m, "point"))) {
    if ((st = deck_vec3(r, kv->value, "point", l->point)) != MBS_OK) {
      return st;
    }
    l->has_point = 1;
  }

  /* method: torques only; augmentation needs a joint axis */
  if ((kv = deck_map_find(m, "method"))) {
    if ((st = deck_word(r, kv->value, "method", "torque method", method_words,
                        MBS_TORQUE_METHOD_COUNT, &t)) != MBS_OK) {
      return st;
    }
    if (t == MBS_TORQUE_AUGMENTED) {
      return deck_fail(r, kv->value,
                       "method 'augmented' adds a joint angle coordinate and needs a joint axis: "
                       "use type joint_torque on a revolute or cylindrical joint");
    }
    l->method = (mbsTorqueMethod)t;
  }
  return MBS_OK;
}

/* joint_torque, joint_force: joint, value (scalar), method, augmentation */
static mbsStatus read_joint_load(DeckReader *r, mbsDeck *deck, const DeckNames *jnames,
                                 mbsDeckLoad *l, DeckMap *m) {
  const DeckKeyValue *kv;
  yaml_node_t *v;
  int t;
  mbsStatus st;
  const char *tw = load_type_words[l->type];

  if (!(v = deck_map_get(m, "joint"))) {
    return deck_fail(r, m->node, "missing required key 'joint'");
  }
  if (l->type == MBS_LOAD_JOINT_TORQUE) {
    st = joint_ref(r, deck, jnames, v, tw, MBS_JOINT_REVOLUTE, MBS_JOINT_CYLINDRICAL,
                   "rotation axis", &l->joint);
  } else {
    st = joint_ref(r, deck, jnames, v, tw, MBS_JOINT_PRISMATIC, MBS_JOINT_CYLINDRICAL,
                   "translation axis", &l->joint);
  }
  if (st != MBS_OK) {
    return st;
  }
  if (!(v = deck_map_get(m, "value"))) {
    return deck_fail(r, m->node, "missing required key 'value' (a number: the %s)",
                     l->type == MBS_LOAD_JOINT_TORQUE ? "torque [N m] about the joint axis"
                                                      : "force [N] along the joint axis");
  }
  if ((st = deck_number(r, v, "value", &l->value[0])) != MBS_OK) {
    return st;
  }
  if ((kv = deck_map_find(m, "method"))) {
    if ((st = deck_word(r, kv->value, "method", "torque method", method_words,
                        MBS_TORQUE_METHOD_COUNT, &t)) != MBS_OK) {
      return st;
    }
    l->method = (mbsTorqueMethod)t;
  }
  if ((kv = deck_map_find(m, "augmentation"))) {
    if (l->method != MBS_TORQUE_AUGMENTED) {
      return deck_fail(r, kv->key, "'augmentation' only applies to method: augmented");
    }
    if ((st = deck_word(r, kv->value, "augmentation", "augmentation", augmentation_words,
                        MBS_AUGMENTATION_COUNT, &t)) != MBS_OK) {
      return st;
    }
    l->augmentation = (mbsAugmentation)t;
  }
  return MBS_OK;
}

/* spring: bodies, points (default the centres), stiffness, damping, rest_length (default the
 * length at t = 0, which then must not vanish) */
static mbsStatus read_spring(DeckReader *r, mbsDeck *deck, mbsDeckLoad *l, DeckMap *m) {
  const DeckKeyValue *kv;
  yaml_node_t *v;
  mbsStatus st;

  if (!(v = deck_map_get(m, "bodies"))) {
    return deck_fail(r, m->node, "missing required key 'bodies'");
  }
  if ((st = pair_list(r, v, "bodies", "a list of two body names [first, second]")) != MBS_OK ||
      (st = body_ref(r, item(r, v, 0), "bodies[0]", &l->bodies[0])) != MBS_OK ||
      (st = body_ref(r, item(r, v, 1), "bodies[1]", &l->bodies[1])) != MBS_OK) {
    return st;
  }
  if (l->bodies[0] == l->bodies[1]) {
    return deck_fail(r, v, "the two bodies must differ (both are '%s')", deck_text(item(r, v, 0)));
  }
  kv = deck_map_find(m, "points");
  if (kv) {
    if ((st = pair_list(r, kv->value, "points", "two points [[x, y, z], [x, y, z]]")) != MBS_OK ||
        (st = deck_vec3(r, item(r, kv->value, 0), "points[0]", l->points[0])) != MBS_OK ||
        (st = deck_vec3(r, item(r, kv->value, 1), "points[1]", l->points[1])) != MBS_OK) {
      return st;
    }
  } else if (l->bodies[0] < 0 || l->bodies[1] < 0) {
    return deck_fail(r, m->node, "a spring to ground needs 'points'");
  } else {
    memcpy(l->points[0], deck->bodies[l->bodies[0]].position, sizeof(l->points[0]));
    memcpy(l->points[1], deck->bodies[l->bodies[1]].position, sizeof(l->points[1]));
  }
  if (!(v = deck_map_get(m, "stiffness"))) {
    return deck_fail(r, m->node, "missing required key 'stiffness' [N/m]");
  }
  if ((st = nonnegative(r, v, "stiffness", &l->stiffness)) != MBS_OK) {
    return st;
  }
  if ((v = deck_map_get(m, "damping")) &&
      (st = nonnegative(r, v, "damping", &l->damping)) != MBS_OK) {
    return st;
  }

  /* the rest length defaults to the length at t = 0, which then must not vanish: a spring
   * of zero length has no direction */
  double d2 = 0, s2 = 0;
  for (int k = 0; k < 3; k++) {
    double dk = l->points[1][k] - l->points[0][k];
    d2 += dk * dk;
    s2 += l->points[0][k] * l->points[0][k] + l->points[1][k] * l->points[1][k];
  }
  if (!(d2 <= DECK_MAX_SCALE) || !(s2 <= DECK_MAX_SCALE)) {
    return deck_fail(r, kv ? kv->value : m->node,
                     "%s: the points of the spring are too far apart or from the origin (their "
                     "squares exceed %g; the spring force would overflow)",
                     kv ? "points" : "the bodies' positions", DECK_MAX_SCALE);
  }
  if ((v = deck_map_get(m, "rest_length"))) {
    return nonnegative(r, v, "rest_length", &l->rest_length);
  }
  if (sqrt(d2) <= 1e-12 * (1.0 + sqrt(s2))) {
    return deck_fail(r, kv ? kv->value : m->node,
                     "the two points of the spring coincide at t = 0 and no rest_length is "
                     "given (the rest length would be zero); give rest_length or move a point");
  }
  l->rest_length = sqrt(d2);
  return MBS_OK;
}

/* rotational_spring: joint, stiffness, damping, rest_angle */
static mbsStatus read_rotational_spring(DeckReader *r, mbsDeck *deck, const DeckNames *jnames,
                                        mbsDeckLoad *l, DeckMap *m) {
  yaml_node_t *v;
  mbsStatus st;
  if (!(v = deck_map_get(m, "joint"))) {
    return deck_fail(r, m->node, "missing required key 'joint'");
  }
  if ((st = joint_ref(r, deck, jnames, v, "rotational_spring", MBS_JOINT_REVOLUTE,
                      MBS_JOINT_CYLINDRICAL, "rotation axis", &l->joint)) != MBS_OK) {
    return st;
  }
  if (!(v = deck_map_get(m, "stiffness"))) {
    return deck_fail(r, m->node, "missing required key 'stiffness' [N m/rad]");
  }
  if ((st = nonnegative(r, v, "stiffness", &l->stiffness)) != MBS_OK) {
    return st;
  }
  if ((v = deck_map_get(m, "damping")) &&
      (st = nonnegative(r, v, "damping", &l->damping)) != MBS_OK) {
    return st;
  }
  if ((v = deck_map_get(m, "rest_angle"))) {
    if ((st = deck_number(r, v, "rest_angle", &l->rest_angle)) != MBS_OK) {
      return st;
    }
    char hint[80];
    snprintf(hint, sizeof(hint), "degrees, written rest_angle: \"%g * pi / 180\"", l->rest_angle);
    deck_warn_turn(r, v, "rest_angle", l->rest_angle, hint);
  }
  return MBS_OK;
}

static mbsStatus read_load(DeckReader *r, mbsDeck *deck, DeckNames *names, const DeckNames *jnames,
                           int i, yaml_node_t *node) {
  mbsDeckLoad *l = &deck->loads[i];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL;
  yaml_node_t *v;
  int t;
  mbsStatus st;

  deck_node_pos(node, &l->mark.line, &l->mark.col);
  deck_entry_ctx(r, node, "loads", i);
  l->body = l->joint = l->bodies[0] = l->bodies[1] = -1;
  l->frame = MBS_FRAME_WORLD;
  l->method = MBS_TORQUE_CONTRAVARIANT;
  l->augmentation = MBS_AUGMENTATION_VARIABLE;
  l->profile.kind = MBS_PROFILE_CONSTANT;
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node, "expected a mapping (one load), got %s", deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK) {
    return st;
  }
  if ((st = deck_entry_start(r, &m, "loads", i, load_keys, load_later, l->name, &nn)) != MBS_OK) {
    goto fail;
  }
  int first = deck_names_get(names, l->name);
  if (first >= 0) {
    st = deck_fail(r, nn, "duplicate load name '%s' (first at %d:%d)", l->name,
                   deck->loads[first].mark.line, deck->loads[first].mark.col);
    goto fail;
  }
  deck_names_put(names, l->name, i);

  /* type */
  if (!(v = deck_map_get(&m, "type"))) {
    st = deck_fail(r, m.node, "missing required key 'type'");
    goto fail;
  }
  if ((st = deck_word(r, v, "type", "load type", load_type_words, MBS_LOAD_TYPE_COUNT, &t)) !=
      MBS_OK) {
    goto fail;
  }
  l->type = (mbsLoadType)t;

  /* every key must belong to this type */
  const char *const *mine = load_type_keys(l->type);
  for (int k = 0; k < m.n; k++) {
    const char *key = deck_text(m.kv[k].key);
    if (key && strcmp(key, "name") != 0 && strcmp(key, "type") != 0 && !word_in(key, mine)) {
      st = deck_fail(r, m.kv[k].key, "a %s takes no '%s'", load_type_words[t], key);
      goto fail;
    }
  }

  switch (l->type) {
    case MBS_LOAD_FORCE:
    case MBS_LOAD_TORQUE:
      st = read_body_load(r, deck, l, &m);
      break;
    case MBS_LOAD_JOINT_TORQUE:
    case MBS_LOAD_JOINT_FORCE:
      st = read_joint_load(r, deck, jnames, l, &m);
      break;
    case MBS_LOAD_SPRING:
      st = read_spring(r, deck, l, &m);
      break;
    case MBS_LOAD_ROTATIONAL_SPRING:
      st = read_rotational_spring(r, deck, jnames, l, &m);
      break;
    case MBS_LOAD_TYPE_COUNT:
      break;
  }
  if (st != MBS_OK) {
    goto fail;
  }

  /* profile: scales the value of force, torque, joint_torque, joint_force */
  if ((v = deck_map_get(&m, "profile")) &&
      (st = read_profile(r, v, "profile", &l->profile)) != MBS_OK) {
    goto fail;
  }

fail:
  deck_map_free(&m);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* solver and output */

static mbsStatus read_solver(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
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
      (st = deck_check_keys(r, &m, "solver", solver_keys, solver_later)) != MBS_OK) {
    goto fail;
  }

  if ((v = deck_map_get(&m, "integrator"))) {
    if ((st = deck_word(r, v, "integrator", "integrator", integrator_words, MBS_INTEGRATOR_COUNT,
                        &t)) != MBS_OK) {
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
  }
  if ((v = deck_map_get(&m, "linear_solver"))) {
    if ((st = deck_word(r, v, "linear_solver", "linear solver", linear_solver_words,
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

static mbsStatus read_output(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
  mbsDeckOutput *o = &deck->output;
  DeckMap m = {0};
  yaml_node_t *v;
  mbsStatus st;

  if ((st = default_output(r, deck)) != MBS_OK) {
    return st;
  }
  snprintf(r->ctx, sizeof(r->ctx), "output");
  if (!node || deck_is_null(node)) {
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
  if ((v = deck_map_get(&m, "every"))) {
    if ((st = deck_integer(r, v, "every", &o->every)) != MBS_OK) {
      goto fail;
    }
    if (o->every < 1) {
      st = deck_fail(r, v, "every must be >= 1 (got %d)", o->every);
      goto fail;
    }
  }
  if ((v = deck_map_get(&m, "xdmf")) && (st = deck_bool(r, v, "xdmf", &o->xdmf)) != MBS_OK) {
    goto fail;
  }

fail:
  deck_map_free(&m);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* the whole deck */

static mbsStatus read_deck(DeckReader *r, mbsDeck *deck) {
  yaml_node_t *root = yaml_document_get_root_node(r->doc);
  DeckMap m = {0};
  DeckNames names = {0}, jnames = {0};
  yaml_node_t *v;
  int n;
  mbsStatus st;

  /* defaults */
  deck->solver.integrator = MBS_INTEGRATOR_AUTO;
  deck->solver.linear_solver = MBS_LINEAR_KLU;
  deck->solver.dt = 1e-3;
  deck->solver.t_end = 1.0;
  deck->solver.newton_tolerance = 1e-10;
  deck->solver.newton_max_iterations = 25;
  deck->solver.newton_reuse = 1;
  deck->solver.rho_inf = 0.8;
  deck->solver.max_halvings = 10;
  deck->solver.energy_warning = -1.0;
  deck->solver.energy_unstable = -1.0;
  deck->output.every = 1;
  deck->output.xdmf = 1;

  r->ctx[0] = '\0';
  if (root->type != YAML_MAPPING_NODE) {
    return deck_fail(r, root, "a deck is a mapping (mbsim: 1, bodies: [...], ...), got %s",
                     deck_kind(root));
  }
  if ((st = deck_map_flatten(r, root, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "", top_keys, NULL)) != MBS_OK) {
    goto fail;
  }

  /* format version first: a newer deck should say so rather than fail on its keys */
  if (!(v = deck_map_get(&m, "mbsim"))) {
    st = deck_fail(r, root, "missing required key 'mbsim' (the deck format version: mbsim: 1)");
    goto fail;
  }
  if ((st = deck_integer(r, v, "mbsim", &deck->version)) != MBS_OK) {
    goto fail;
  }
  if (deck->version != 1) {
    st = deck_fail(r, v, "mbsim: unsupported deck format version %d (this reader knows 1)",
                   deck->version);
    goto fail;
  }

  /* parameters before anything that may use them */
  if ((st = deck_read_parameters(r, deck_map_get(&m, "parameters"))) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "title")) && !deck_is_null(v) &&
      (st = deck_string(r, v, "title", deck->title, sizeof(deck->title))) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "gravity")) &&
      (st = deck_vec3(r, v, "gravity", deck->gravity)) != MBS_OK) {
    goto fail;
  }

  /* bodies: at least one */
  if (!(v = deck_map_get(&m, "bodies"))) {
    st = deck_fail(r, root, "missing required key 'bodies'");
    goto fail;
  }
  if (v->type != YAML_SEQUENCE_NODE) {
    st = deck_fail(r, v, "bodies: expected a list of bodies, got %s", deck_kind(v));
    goto fail;
  }
  if ((n = count(v)) == 0) {
    st = deck_fail(r, v, "bodies: a deck needs at least one body");
    goto fail;
  }
  if (!(deck->bodies = calloc((size_t)n, sizeof(*deck->bodies))) ||
      !deck_names_init(&r->body_names, n)) {
    st = deck_nomem(r);
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    deck->nbody = i;
    if ((st = deck_read_body(r, deck, i, item(r, v, i))) != MBS_OK) {
      goto fail;
    }
  }
  deck->nbody = n;

  /* joints, loads: optional lists */
  r->ctx[0] = '\0';
  v = deck_map_get(&m, "joints");
  if ((st = entry_list(r, v, "joints", &n)) != MBS_OK) {
    goto fail;
  }
  if ((n > 0 && !(deck->joints = calloc((size_t)n, sizeof(*deck->joints)))) ||
      !deck_names_init(&jnames, n)) {
    st = deck_nomem(r);
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    if ((st = read_joint(r, deck, &jnames, i, item(r, v, i))) != MBS_OK) {
      goto fail;
    }
    deck->njoint = i + 1;
  }
  r->ctx[0] = '\0';
  v = deck_map_get(&m, "loads");
  if ((st = entry_list(r, v, "loads", &n)) != MBS_OK) {
    goto fail;
  }
  if ((n > 0 && !(deck->loads = calloc((size_t)n, sizeof(*deck->loads)))) ||
      !deck_names_init(&names, n)) {
    st = deck_nomem(r);
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    if ((st = read_load(r, deck, &names, &jnames, i, item(r, v, i))) != MBS_OK) {
      goto fail;
    }
    deck->nload = i + 1;
  }

  /* initial: {project_velocities} */
  if ((v = deck_map_get(&m, "initial")) && !deck_is_null(v)) {
    DeckMap im = {0};
    r->ctx[0] = '\0';
    if (v->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, v, "initial: expected a mapping {project_velocities}, got %s",
                     deck_kind(v));
      goto fail;
    }
    if ((st = deck_map_flatten(r, v, &im)) == MBS_OK &&
        (st = deck_check_keys(r, &im, "initial", initial_keys, NULL)) == MBS_OK) {
      yaml_node_t *a = deck_map_get(&im, "assemble");
      yaml_node_t *pv = deck_map_get(&im, "project_velocities");
      if (a) {
        st = deck_fail(r, a,
                       "initial.assemble: joints are set up from the positions at t = 0 (each "
                       "joint's frames on both bodies at its point), so positions always satisfy "
                       "them and there is nothing to assemble; place the bodies where the "
                       "mechanism is");
      } else if (pv) {
        st = deck_bool(r, pv, "initial.project_velocities", &deck->project_velocities);
      }
    }
    deck_map_free(&im);
    if (st != MBS_OK) {
      goto fail;
    }
  }
  for (int i = 0; i < deck->njoint; i++) {
    if (deck->joints[i].has_initial_rate && !deck->project_velocities) {
      r->ctx[0] = '\0';
      st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, deck->joints[i].mark.line,
                         deck->joints[i].mark.col,
                         "joint '%s': initial_rate sets the joint's rate by projecting the "
                         "velocities: add `initial: {project_velocities: true}`",
                         deck->joints[i].name);
      goto fail;
    }
  }

  if ((st = read_solver(r, deck, deck_map_get(&m, "solver"))) != MBS_OK ||
      (st = read_output(r, deck, deck_map_get(&m, "output"))) != MBS_OK) {
    goto fail;
  }
  r->ctx[0] = '\0';

fail:
  deck_names_free(&names);
  deck_names_free(&jnames);
  deck_map_free(&m);
  return st;
}

/* everything the reader allocated besides the document */
static void reader_free(DeckReader *r) {
  deck_expr_free(r);
  free(r->warnings);
  deck_names_free(&r->body_names);
  deck_names_free(&r->param_names);
  free(r->params);
  free(r->refs);
  deck_names_free(&r->entry_index);
  free(r->visit);
}

/* the value of key in the mapping node map (its own pairs), or NULL */
static yaml_node_t *plain_get(yaml_document_t *doc, yaml_node_t *map, const char *key) {
  if (!map || map->type != YAML_MAPPING_NODE) {
    return NULL;
  }
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(doc, p->key);
    if (k && k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, key)) {
      return yaml_document_get_node(doc, p->value);
    }
  }
  return NULL;
}

/* --set parameters.NAME=...: NAME must be a parameter of the deck */
static mbsStatus check_parameter_override(DeckReader *r, int i) {
  const mbsOverride *ov = &r->overrides[i];
  const char *pre = "parameters.";
  if (strncmp(ov->path, pre, strlen(pre)) != 0 || strchr(ov->path + strlen(pre), '.')) {
    return MBS_OK;
  }
  const char *name = ov->path + strlen(pre);
  yaml_node_t *params = plain_get(r->doc, yaml_document_get_root_node(r->doc), "parameters");
  if (plain_get(r->doc, params, name)) {
    return MBS_OK;
  }
  char known[512] = "";
  size_t k = 0;
  for (yaml_node_pair_t *p = params && params->type == YAML_MAPPING_NODE
                                 ? params->data.mapping.pairs.start
                                 : NULL;
       p && p < params->data.mapping.pairs.top && k + 70 < sizeof(known); p++) {
    yaml_node_t *key = yaml_document_get_node(r->doc, p->key);
    if (key && key->type == YAML_SCALAR_NODE) {
      int w = snprintf(known + k, sizeof(known) - k, "%s'%.64s'", k ? ", " : "",
                       (const char *)key->data.scalar.value);
      k += w > 0 ? (size_t)w : 0;
    }
  }
  return mbs_error_set(r->err, MBS_ERR_ARGS, r->file, 0, 0,
                       "--set %s=%s: the deck defines no parameter '%.64s' (%s%s); a typo here "
                       "would run the deck unchanged",
                       ov->path, ov->value, name, k ? "its parameters: " : "it has none",
                       known);
}

/* the common part of both entry points: deck->path is set, text (len bytes plus a NUL) is
 * owned and released here */
static mbsStatus load(mbsDeck *deck, char *text, size_t len, const mbsOverride *overrides,
                      int noverride, mbsError *err) {
  yaml_document_t doc;
  DeckReader r;
  mbsStatus st;

  memset(&doc, 0, sizeof(doc));
  memset(&r, 0, sizeof(r));
  r.doc = &doc;
  r.file = deck->path;
  r.err = err;
  r.overrides = overrides;
  r.noverride = noverride;

  /* the overrides' count and size first: they bound the work of applying them */
  if (noverride > 0 && (st = deck_check_overrides(&r)) != MBS_OK) {
    goto fail;
  }
  /* text -> document, bounded in size, depth and alias expansion */
  if ((st = deck_parse(&r, text, len)) != MBS_OK || (st = deck_check_depth(&r)) != MBS_OK) {
    goto fail;
  }

  /* --set parameters.NAME needs a NAME the deck defines: a misspelt parameter in a sweep would
   * otherwise run the same case again and again */
  for (int i = 0; i < noverride; i++) {
    if ((st = check_parameter_override(&r, i)) != MBS_OK) {
      goto fail;
    }
  }

  /* --set overrides edit the tree, in order, before anything is validated */
  for (int i = 0; i < noverride; i++) {
    if ((st = deck_apply_override(&r, i)) != MBS_OK) {
      goto fail;
    }
  }
  if (noverride > 0 && (st = deck_check_depth(&r)) != MBS_OK) {
    goto fail;
  }

  /* validate and fill */
  if ((st = read_deck(&r, deck)) != MBS_OK) {
    goto fail;
  }
  /* a parameter nothing refers to is likely a typo (or one a sweep varies in vain) */
  r.ctx[0] = '\0';
  for (int i = 0; i < r.nparam; i++) {
    if (!r.params[i].used) {
      deck_warn(&r, r.params[i].key, "parameter '%s' is not used", r.params[i].name);
    }
  }
  deck->warnings = r.warnings;
  r.warnings = NULL;

  /* the deck text: verbatim, or what the overrides made of it */
  if (noverride == 0) {
    deck->text = text;
    text = NULL;
  } else if ((st = deck_emit(&r, &deck->text)) != MBS_OK) {
    goto fail;
  }

fail:
  reader_free(&r);
  free(text);
  yaml_document_delete(&doc);
  if (st != MBS_OK) {
    /* leave nothing half-filled behind; keep the path for messages */
    char keep[sizeof(deck->path)];
    memcpy(keep, deck->path, sizeof(keep));
    mbs_deck_free(deck);
    memcpy(deck->path, keep, sizeof(keep));
  }
  return st;
}

/* argument checks shared by both entry points; fills deck->path */
static mbsStatus start(mbsDeck *deck, const char *path, const mbsOverride *overrides, int noverride,
                       mbsError *err) {
  mbs_error_clear(err);
  if (!deck) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "mbs_deck_load: no deck");
  }
  memset(deck, 0, sizeof(*deck));
  if (!path || !path[0]) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "mbs_deck_load: no deck path");
  }
  if (noverride < 0 || (noverride > 0 && !overrides)) {
    return mbs_error_set(err, MBS_ERR_ARGS, path, 0, 0, "mbs_deck_load: bad override list");
  }
  if (strlen(path) >= sizeof(deck->path)) {
    return mbs_error_set(err, MBS_ERR_IO, NULL, 0, 0, "deck path is longer than %zu characters",
                         sizeof(deck->path) - 1);
  }
  memcpy(deck->path, path, strlen(path) + 1);
  return MBS_OK;
}

mbsStatus mbs_deck_load(mbsDeck *deck, const char *path, const mbsOverride *overrides,
                        int noverride, mbsError *err) {
  char *text = NULL;
  size_t len = 0;
  mbsStatus st = start(deck, path, overrides, noverride, err);
  if (st != MBS_OK) {
    return st;
  }
  if ((st = deck_read_file(deck->path, &text, &len, err)) != MBS_OK) {
    return st;
  }
  return load(deck, text, len, overrides, noverride, err);
}

mbsStatus mbs_deck_load_text(mbsDeck *deck, const char *name, const char *text, size_t len,
                             const mbsOverride *overrides, int noverride, mbsError *err) {
  mbsStatus st = start(deck, name, overrides, noverride, err);
  if (st != MBS_OK) {
    return st;
  }
  if (!text && len > 0) {
    return mbs_error_set(err, MBS_ERR_ARGS, name, 0, 0, "mbs_deck_load_text: no text");
  }
  if (len > (size_t)DECK_MAX_BYTES) {
    return mbs_error_set(err, MBS_ERR_IO, name, 0, 0, "deck is larger than %ld bytes",
                         DECK_MAX_BYTES);
  }

  /* a private copy with a terminating NUL, as deck_read_file makes */
  char *copy = malloc(len + 1);
  if (!copy) {
    return mbs_error_set(err, MBS_ERR_NOMEM, name, 0, 0, "out of memory");
  }
  if (len > 0) {
    memcpy(copy, text, len);
  }
  copy[len] = '\0';
  return load(deck, copy, len, overrides, noverride, err);
}

void mbs_deck_free(mbsDeck *deck) {
  if (!deck) {
    return;
  }
  free(deck->bodies);
  for (int i = 0; deck->joints && i < deck->njoint; i++) {
    free(deck->joints[i].motion_profile.table);
    free(deck->joints[i].motion_profile.expr);
    mbs_profile_expr_destroy(deck->joints[i].motion_profile.ev);
  }
  for (int i = 0; deck->loads && i < deck->nload; i++) {
    free(deck->loads[i].profile.table);
    free(deck->loads[i].profile.expr);
    mbs_profile_expr_destroy(deck->loads[i].profile.ev);
  }
  free(deck->joints);
  free(deck->loads);
  free(deck->text);
  free(deck->warnings);
  memset(deck, 0, sizeof(*deck));
}
