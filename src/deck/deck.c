/* deck.c: mbs_deck_load and the top level of the deck schema (docs/decks.md, format version
 * 1): the sections in order (parameters, bodies, chains, beams, joints, loads, ground, contacts,
 * initial, solver, output) and the helpers the section readers share. The sections live in body.c,
 * joints.c, loads.c, profiles.c, contacts.c and solver.c. The pipeline is
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
/* keys */

static const char *const top_keys[] = {"mbsim",  "title",  "gravity", "parameters", "bodies",
                                       "beams",  "joints", "loads",   "ground",     "contacts",
                                       "solver", "output", "initial", "planar",
                                       "chains", "surfaces", NULL};

/* ---------------------------------------------------------------------------------------- */
/* helpers */

/* "ground" -> -1, a defined body -> its index */
const char *deck_nearest_body(const DeckReader *r, const char *word) {
  const mbsDeck *deck = r->deck;
  int n = deck ? deck->nbody + deck->nbeam : 0;
  const char **names = n > 0 ? malloc((size_t)n * sizeof(*names)) : NULL;
  if (!names) {
    return NULL; /* no names, or no memory for the suggestion: none */
  }
  for (int i = 0; i < deck->nbody; i++) {
    names[i] = deck->bodies[i].name;
  }
  for (int i = 0; i < deck->nbeam; i++) {
    names[deck->nbody + i] = deck->beams[i].name;
  }
  const char *near = deck_nearest(word, names, n);
  free(names);
  return near;
}

mbsStatus deck_body_ref(DeckReader *r, const yaml_node_t *n, const char *field, int *out) {
  const char *s = deck_text(n);
  if (!s || deck_is_null(n)) {
    return deck_fail(r, n, "%s: expected a body name, got %s", field, deck_kind(n));
  }
  if (strcmp(s, "ground") == 0) {
    *out = -1;
    return MBS_OK;
  }
  mbsStatus st;
  if (deck_beam_ref(r, n, s, out, &st)) {
    return st;
  }
  *out = deck_names_get(&r->body_names, s);
  if (*out < 0) {
    const char *near = deck_nearest_body(r, s);
    return near ? deck_fail(r, n, "body '%.64s' is not defined; did you mean '%s'?", s, near)
                : deck_fail(r, n, "body '%.64s' is not defined", s);
  }
  return MBS_OK;
}

/* a list of exactly two entries */
mbsStatus deck_pair_list(DeckReader *r, yaml_node_t *n, const char *field, const char *want) {
  if (n->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, n, "%s: expected %s, got %s", field, want, deck_kind(n));
  }
  if (deck_count(n) != 2) {
    return deck_fail(r, n, "%s: expected %s (got %d items)", field, want, deck_count(n));
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
  *nitem = deck_count(n);
  return MBS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* the whole deck */

static mbsStatus read_deck(DeckReader *r, mbsDeck *deck) {
  yaml_node_t *root = yaml_document_get_root_node(r->doc);
  DeckMap m = {0};
  DeckNames names = {0}, jnames = {0};
  mbsDeckJoint *cjoints = NULL; /* the chains' joints until deck->joints holds them */
  int ncj = 0;
  yaml_node_t *v;
  int n;
  mbsStatus st;

  /* defaults */
  deck_default_settings(deck);

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

  /* bodies: at least one, unless the deck has beams or chains */
  r->deck = deck;
  yaml_node_t *vb = deck_map_get(&m, "beams"), *vc = deck_map_get(&m, "chains");
  int has_beams = (vb && vb->type == YAML_SEQUENCE_NODE && deck_count(vb) > 0) ||
                  (vc && vc->type == YAML_SEQUENCE_NODE && deck_count(vc) > 0);
  if (!(v = deck_map_get(&m, "bodies")) && !has_beams) {
    st = deck_fail(r, root, "missing required key 'bodies'");
    goto fail;
  }
  if (v && !deck_is_null(v) && v->type != YAML_SEQUENCE_NODE) {
    st = deck_fail(r, v, "bodies: expected a list of bodies, got %s", deck_kind(v));
    goto fail;
  }
  if ((n = v && v->type == YAML_SEQUENCE_NODE ? deck_count(v) : 0) == 0 && !has_beams) {
    st = deck_fail(r, v ? v : root,
                   "bodies: a deck needs at least one body or beam (or a chain)");
    goto fail;
  }
  if ((n > 0 && !(deck->bodies = calloc((size_t)n, sizeof(*deck->bodies)))) ||
      !deck_names_init(&r->body_names, n)) {
    st = deck_nomem(r);
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    deck->nbody = i;
    if ((st = deck_read_body(r, deck, i, deck_item(r, v, i))) != MBS_OK) {
      goto fail;
    }
  }
  deck->nbody = n;

  /* chains: their links are bodies (named by the beams, joints and loads below), their joints
   * come first in deck->joints */
  if ((st = deck_read_chains(r, deck, vc, &cjoints, &ncj)) != MBS_OK) {
    goto fail;
  }

  /* beams: after the bodies (names unique among both), before anything that names a node */
  if ((st = deck_read_beams(r, deck, vb)) != MBS_OK) {
    goto fail;
  }

  /* the model's plane of motion (its joints are made after the deck's own) */
  yaml_node_t *vplanar = deck_map_get(&m, "planar");
  if (vplanar && (st = deck_read_planar(r, vplanar, deck->planar_normal, &deck->planar_mark)) !=
                     MBS_OK) {
    goto fail;
  }
  deck->planar = vplanar != NULL;

  /* joints, loads: optional lists */
  r->ctx[0] = '\0';
  v = deck_map_get(&m, "joints");
  if ((st = entry_list(r, v, "joints", &n)) != MBS_OK) {
    goto fail;
  }
  if ((n + ncj > 0 && !(deck->joints = calloc((size_t)(n + ncj), sizeof(*deck->joints)))) ||
      !deck_names_init(&jnames, n + ncj)) {
    st = deck_nomem(r);
    goto fail;
  }
  if (ncj > 0) {
    memcpy(deck->joints, cjoints, (size_t)ncj * sizeof(*cjoints));
  }
  deck->njoint = ncj;
  ncj = 0; /* the deck owns them now */
  for (int k = 0; k < deck->njoint; k++) {
    deck_names_put(&jnames, deck->joints[k].name, k);
  }
  for (int i = 0; i < n; i++) {
    /* counted before it is read: what a failed entry already holds (its profile) is
     * released with the deck (the entries are zeroed) */
    int slot = deck->njoint++;
    if ((st = deck_read_joint(r, deck, &jnames, slot, i, deck_item(r, v, i))) != MBS_OK) {
      goto fail;
    }
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
    deck->nload = i + 1; /* as the joints: a failed entry's profile is released */
    if ((st = deck_read_load(r, deck, &names, &jnames, i, deck_item(r, v, i))) != MBS_OK) {
      goto fail;
    }
  }

  /* the planar options' joints: after the loads, which name joints through jnames (its
   * names live in deck->joints, which this grows) */
  r->ctx[0] = '\0';
  if ((st = deck_planar_joints(r, deck, vplanar)) != MBS_OK) {
    goto fail;
  }

  /* contact geometry of the ground, then the contacts entries (they name both) */
  if ((st = deck_read_surfaces(r, deck, deck_map_get(&m, "surfaces"))) != MBS_OK ||
      (st = deck_read_ground(r, deck, deck_map_get(&m, "ground"))) != MBS_OK ||
      (st = deck_read_contacts(r, deck, deck_map_get(&m, "contacts"))) != MBS_OK) {
    goto fail;
  }

  if ((st = deck_read_initial(r, deck, deck_map_get(&m, "initial"))) != MBS_OK) {
    goto fail;
  }

  if ((st = deck_read_solver(r, deck, deck_map_get(&m, "solver"))) != MBS_OK ||
      (st = deck_read_output(r, deck, deck_map_get(&m, "output"))) != MBS_OK) {
    goto fail;
  }
  r->ctx[0] = '\0';

fail:
  for (int k = 0; k < ncj; k++) {
    free(cjoints[k].motion_profile.table);
    free(cjoints[k].motion_profile.expr);
    mbs_profile_expr_destroy(cjoints[k].motion_profile.ev);
  }
  free(cjoints);
  deck_names_free(&names);
  deck_names_free(&jnames);
  deck_map_free(&m);
  return st;
}

/* everything the reader allocated besides the document */
static void reader_free(DeckReader *r) {
  free(r->warnings);
  deck_names_free(&r->body_names);
  deck_names_free(&r->beam_names);
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
  for (int i = 0; deck->bodies && i < deck->nbody; i++) {
    deck_free_shapes(deck->bodies[i].collision, deck->bodies[i].ncollision);
  }
  free(deck->bodies);
  deck_free_shapes(deck->ground_shapes, deck->nground_shape);
  free(deck->contacts);
  for (int i = 0; i < deck->nsurface; i++) {
    free(deck->surfaces[i].nodes);
  }
  free(deck->surfaces);
  for (int i = 0; deck->joints && i < deck->njoint; i++) {
    free(deck->joints[i].motion_profile.table);
    free(deck->joints[i].motion_profile.expr);
    mbs_profile_expr_destroy(deck->joints[i].motion_profile.ev);
  }
  for (int i = 0; deck->loads && i < deck->nload; i++) {
    free(deck->loads[i].profile.table);
    free(deck->loads[i].profile.expr);
    mbs_profile_expr_destroy(deck->loads[i].profile.ev);
    free(deck->loads[i].target_profile.table);
    free(deck->loads[i].target_profile.expr);
    mbs_profile_expr_destroy(deck->loads[i].target_profile.ev);
  }
  for (int i = 0; deck->beams && i < deck->nbeam; i++) {
    free(deck->beams[i].pos);
    free(deck->beams[i].R);
    free(deck->beams[i].vel);
  }
  free(deck->beams);
  free(deck->chains);
  free(deck->joints);
  free(deck->loads);
  free(deck->text);
  free(deck->warnings);
  memset(deck, 0, sizeof(*deck));
}
