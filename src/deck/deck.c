/* deck.c: mbs_deck_load and the deck schema (DECK.md, format version 1) apart from bodies:
 * the top level, joints, loads, solver and output. The pipeline is
 *   read file -> parse (libyaml loader) -> depth check -> --set overrides -> validate
 *   -> deck text (verbatim, or re-emitted when overridden);
 * every step reports file:line:col through mbsError and never prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* keyword tables (one X-macro list each in deck.h) */

#define WORD(name, word) word,
static const char *const body_type_words[] = {MBS_BODY_TYPE_LIST(WORD)};
static const char *const joint_type_words[] = {MBS_JOINT_TYPE_LIST(WORD)};
static const char *const load_type_words[] = {MBS_LOAD_TYPE_LIST(WORD)};
static const char *const frame_words[] = {MBS_FRAME_LIST(WORD)};
static const char *const method_words[] = {MBS_TORQUE_METHOD_LIST(WORD)};
static const char *const profile_words[] = {MBS_PROFILE_LIST(WORD)};
static const char *const integrator_words[] = {MBS_INTEGRATOR_LIST(WORD)};
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
                                       "joints", "loads", "solver",  "output",     NULL};
static const char *const joint_keys[] = {"name", "type", "bodies", "point", "axis", "points", NULL};
static const char *const load_keys[] = {"name",  "type",   "body",    "value", "frame",
                                        "point", "method", "profile", NULL};
static const char *const solver_keys[] = {"integrator", "dt", "t_end", "newton", NULL};
static const char *const newton_keys[] = {"tolerance", "max_iterations", NULL};
static const char *const output_keys[] = {"file", "every", "xdmf", NULL};

/* keys of DECK.md that this version does not read yet: "unsupported", not "unknown" */
static const char *const joint_later[] = {"axes", "motion", NULL};
static const char *const load_later[] = {"joint",   "bodies",      "points",     "stiffness",
                                         "damping", "rest_length", "rest_angle", NULL};
static const char *const solver_later[] = {"genalpha", "moreau", "spacetime", NULL};

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
/* joints */

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

  /* axis: revolute only, normalised */
  kv = deck_map_find(&m, "axis");
  if (j->type == MBS_JOINT_REVOLUTE) {
    if (!kv) {
      st = deck_fail(r, m.node, "missing required key 'axis' (a revolute joint needs it)");
      goto fail;
    }
    if ((st = deck_vec3(r, kv->value, "axis", j->axis)) != MBS_OK) {
      goto fail;
    }
    double len = sqrt(j->axis[0] * j->axis[0] + j->axis[1] * j->axis[1] + j->axis[2] * j->axis[2]);
    if (!(len > 0) || !isfinite(len)) {
      st = deck_fail(r, kv->value, "axis must be a nonzero vector");
      goto fail;
    }
    for (int k = 0; k < 3; k++) {
      j->axis[k] /= len;
    }
  } else if (kv) {
    st = deck_fail(r, kv->key, "a %s joint takes no 'axis'", tw);
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
    if (sqrt(d2) <= 1e-12 * (1.0 + sqrt(s2))) {
      st = deck_fail(r, kv ? kv->value : m.node,
                     "the two points of a distance joint coincide (the length would be zero)");
      goto fail;
    }
  }

fail:
  deck_map_free(&m);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* loads */

static mbsStatus read_load(DeckReader *r, mbsDeck *deck, DeckNames *names, int i,
                           yaml_node_t *node) {
  mbsDeckLoad *l = &deck->loads[i];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL;
  const DeckKeyValue *kv;
  yaml_node_t *v;
  int t;
  mbsStatus st;

  deck_node_pos(node, &l->mark.line, &l->mark.col);
  deck_entry_ctx(r, node, "loads", i);
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
  const char *tw = load_type_words[t];

  /* body: defined, moving; a torque needs a rigid body */
  if (!(v = deck_map_get(&m, "body"))) {
    st = deck_fail(r, m.node, "missing required key 'body'");
    goto fail;
  }
  if ((st = body_ref(r, v, "body", &l->body)) != MBS_OK) {
    goto fail;
  }
  if (l->body < 0) {
    st = deck_fail(r, v, "a load cannot act on 'ground'");
    goto fail;
  }
  const mbsDeckBody *b = &deck->bodies[l->body];
  if (b->fixed) {
    st = deck_fail(r, v, "body '%s' is fixed (welded to ground) and cannot carry a load", b->name);
    goto fail;
  }
  if (l->type == MBS_LOAD_TORQUE && b->type != MBS_BODY_RIGID) {
    st = deck_fail(r, v, "a torque needs a rigid body ('%s' is a point mass)", b->name);
    goto fail;
  }

  /* value, frame */
  if (!(v = deck_map_get(&m, "value"))) {
    st = deck_fail(r, m.node, "missing required key 'value'");
    goto fail;
  }
  if ((st = deck_vec3(r, v, "value", l->value)) != MBS_OK) {
    goto fail;
  }
  l->frame = MBS_FRAME_WORLD;
  if ((v = deck_map_get(&m, "frame"))) {
    if ((st = deck_word(r, v, "frame", "frame", frame_words, MBS_FRAME_COUNT, &t)) != MBS_OK) {
      goto fail;
    }
    l->frame = (mbsFrame)t;
  }

  /* point: forces only, default the body's centre of mass */
  kv = deck_map_find(&m, "point");
  memcpy(l->point, b->position, sizeof(l->point));
  if (kv && l->type != MBS_LOAD_FORCE) {
    st = deck_fail(r, kv->key, "a %s takes no 'point'", tw);
    goto fail;
  }
  if (kv) {
    if ((st = deck_vec3(r, kv->value, "point", l->point)) != MBS_OK) {
      goto fail;
    }
    l->has_point = 1;
  }

  /* method: torques only */
  kv = deck_map_find(&m, "method");
  l->method = MBS_TORQUE_CONTRAVARIANT;
  if (kv && l->type != MBS_LOAD_TORQUE) {
    st = deck_fail(r, kv->key, "a %s takes no 'method'", tw);
    goto fail;
  }
  if (kv) {
    if ((st = deck_word(r, kv->value, "method", "torque method", method_words,
                        MBS_TORQUE_METHOD_COUNT, &t)) != MBS_OK) {
      goto fail;
    }
    l->method = (mbsTorqueMethod)t;
  }

  /* profile: a word for now (the mapping forms of DECK.md come later) */
  l->profile.kind = MBS_PROFILE_CONSTANT;
  if ((v = deck_map_get(&m, "profile"))) {
    if ((st = deck_word(r, v, "profile", "profile", profile_words, MBS_PROFILE_COUNT, &t)) !=
        MBS_OK) {
      goto fail;
    }
    l->profile.kind = (mbsProfileKind)t;
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
    if ((v = deck_map_get(&nm, "max_iterations"))) {
      if ((st = deck_integer(r, v, "newton.max_iterations", &s->newton_max_iterations)) != MBS_OK) {
        goto fail;
      }
      if (s->newton_max_iterations < 1) {
        st = deck_fail(r, v, "newton.max_iterations must be >= 1 (got %d)",
                       s->newton_max_iterations);
        goto fail;
      }
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
  DeckNames names = {0};
  yaml_node_t *v;
  int n;
  mbsStatus st;

  /* defaults */
  deck->solver.integrator = MBS_INTEGRATOR_AUTO;
  deck->solver.dt = 1e-3;
  deck->solver.t_end = 1.0;
  deck->solver.newton_tolerance = 1e-10;
  deck->solver.newton_max_iterations = 25;
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
      !deck_names_init(&names, n)) {
    st = deck_nomem(r);
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    if ((st = read_joint(r, deck, &names, i, item(r, v, i))) != MBS_OK) {
      goto fail;
    }
    deck->njoint = i + 1;
  }
  deck_names_free(&names);
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
    if ((st = read_load(r, deck, &names, i, item(r, v, i))) != MBS_OK) {
      goto fail;
    }
    deck->nload = i + 1;
  }

  if ((st = read_solver(r, deck, deck_map_get(&m, "solver"))) != MBS_OK ||
      (st = read_output(r, deck, deck_map_get(&m, "output"))) != MBS_OK) {
    goto fail;
  }
  r->ctx[0] = '\0';

fail:
  deck_names_free(&names);
  deck_map_free(&m);
  return st;
}

mbsStatus mbs_deck_load(mbsDeck *deck, const char *path, const mbsOverride *overrides,
                        int noverride, mbsError *err) {
  yaml_document_t doc;
  DeckReader r;
  char *text = NULL;
  size_t len = 0;
  mbsStatus st;

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

  memset(&doc, 0, sizeof(doc));
  memset(&r, 0, sizeof(r));
  r.doc = &doc;
  r.file = deck->path;
  r.err = err;
  r.overrides = overrides;
  r.noverride = noverride;

  /* file -> document, bounded in depth */
  if ((st = deck_read_file(deck->path, &text, &len, err)) != MBS_OK ||
      (st = deck_parse(&r, text, len)) != MBS_OK || (st = deck_check_depth(&r)) != MBS_OK) {
    goto fail;
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

  /* the deck text: verbatim, or what the overrides made of it */
  if (noverride == 0) {
    deck->text = text;
    text = NULL;
  } else if ((st = deck_emit(&r, &deck->text)) != MBS_OK) {
    goto fail;
  }

fail:
  deck_names_free(&r.body_names);
  free(r.params);
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

void mbs_deck_free(mbsDeck *deck) {
  if (!deck) {
    return;
  }
  free(deck->bodies);
  free(deck->joints);
  free(deck->loads);
  free(deck->text);
  memset(deck, 0, sizeof(*deck));
}
