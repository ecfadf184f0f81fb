/* contacts.c: contact geometry and contact laws of a deck (docs/decks.md "Contacts"): a
 * body's `collision` shapes, the ground's (`ground: collision:`), and the `contacts:` entries
 * whose body-name patterns (fnmatch(3)) pick the pairs of shapes that may touch. The pairs
 * themselves are formed by the compiler (src/model/contacts.c); the reader checks every value
 * and that each pattern names bodies with geometry. */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* keys */

static const char *const shape_keys[] = {"name",  "sphere", "box",    "capsule",     "points",
                                         "plane", "ring",   "offset", "orientation", NULL};
/* the keys of a body's shape: no name (the shape is named after the body) */
static const char *const body_shape_keys[] = {"sphere", "box",    "capsule",     "points", "plane",
                                              "ring",   "offset", "orientation", NULL};
static const char *const capsule_keys[] = {"radius", "length", NULL};
static const char *const plane_keys[] = {"point", "normal", NULL};
static const char *const ground_keys[] = {"collision", NULL};
static const char *const contact_keys[] = {"name",     "between",   "law",     "restitution",
                                           "friction", "stiffness", "damping", "friction_velocity",
                                           "margin",   NULL};
/* the keys only the penalty law takes */
static const char *const penalty_keys[] = {"stiffness", "damping", "friction_velocity", NULL};

#define SHAPES_BODY "sphere, box, capsule, points, ring"
#define SHAPES_GROUND "sphere, box, capsule, points, plane, ring"

/* ---------------------------------------------------------------------------------------- */
/* shapes */

static int is_shape_word(const char *k) {
  /* a patch is no shape a deck writes: `surfaces:` makes them */
  for (int i = 0; i < MBS_SHAPE_COUNT; i++) {
    if (k && i != MBS_SHAPE_PATCH && strcmp(k, mbs_shape_words[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

static int in_words(const char *k, const char *const *list) {
  for (int i = 0; k && list[i]; i++) {
    if (strcmp(k, list[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

/* box: [a, b, c], each > 0 (full edges) */
static mbsStatus read_box(DeckReader *r, yaml_node_t *v, double size[3]) {
  mbsStatus st = deck_vec3(r, v, "box", size);
  for (int k = 0; st == MBS_OK && k < 3; k++) {
    if (!(size[k] > 0.0)) {
      st = deck_fail(r, deck_item(r, v, k), "box[%d] must be > 0 (got %g)", k, size[k]);
    }
  }
  return st;
}

/* capsule: {radius: r, length: l}, both > 0 (length: of the axis segment, along axis 3) */
static mbsStatus read_capsule(DeckReader *r, yaml_node_t *v, double size[3]) {
  DeckMap m = {0};
  char where[256];
  mbsStatus st;
  yaml_node_t *rn, *ln;
  if (v->type != YAML_MAPPING_NODE) {
    return deck_fail(r, v, "capsule: expected a mapping {radius: r, length: l}, got %s",
                     deck_kind(v));
  }
  if ((st = deck_map_flatten(r, v, &m)) != MBS_OK) {
    return st;
  }
  snprintf(where, sizeof(where), "%s capsule", r->ctx);
  if ((st = deck_check_keys(r, &m, where, capsule_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  rn = deck_map_get(&m, "radius");
  ln = deck_map_get(&m, "length");
  if (!rn || !ln) {
    st = deck_fail(r, v, "capsule: needs radius and length");
    goto fail;
  }
  if ((st = deck_positive(r, rn, "capsule.radius", &size[0])) == MBS_OK) {
    st = deck_positive(r, ln, "capsule.length", &size[1]);
  }
fail:
  deck_map_free(&m);
  return st;
}

/* points: [[x, y, z], ...], at least one */
static mbsStatus read_points(DeckReader *r, yaml_node_t *v, mbsDeckShape *s) {
  char f[64];
  if (v->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, v, "points: expected a list of points [[x, y, z], ...], got %s",
                     deck_kind(v));
  }
  int n = deck_count(v);
  if (n == 0) {
    return deck_fail(r, v, "points: the list is empty; give at least one point [x, y, z]");
  }
  if (!(s->pts = malloc((size_t)n * 3 * sizeof(double)))) {
    return deck_nomem(r);
  }
  s->npts = n;
  for (int k = 0; k < n; k++) {
    snprintf(f, sizeof(f), "points[%d]", k);
    mbsStatus st = deck_vec3(r, deck_item(r, v, k), f, s->pts + 3 * k);
    if (st != MBS_OK) {
      return st;
    }
  }
  return MBS_OK;
}

/* plane: {point: [x, y, z] (default the origin), normal: [x, y, z] (nonzero, normalised)} */
static mbsStatus read_plane(DeckReader *r, yaml_node_t *v, mbsDeckShape *s) {
  DeckMap m = {0};
  char where[256];
  mbsStatus st;
  yaml_node_t *pn, *nn;
  if (v->type != YAML_MAPPING_NODE) {
    return deck_fail(r, v,
                     "plane: expected a mapping {point: [x, y, z], normal: [x, y, z]}, got %s",
                     deck_kind(v));
  }
  if ((st = deck_map_flatten(r, v, &m)) != MBS_OK) {
    return st;
  }
  snprintf(where, sizeof(where), "%s plane", r->ctx);
  if ((st = deck_check_keys(r, &m, where, plane_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  pn = deck_map_get(&m, "point");
  nn = deck_map_get(&m, "normal");
  if (!nn) {
    st = deck_fail(r, v, "plane: missing required key 'normal' (pointing out of the solid side)");
    goto fail;
  }
  if ((pn && (st = deck_vec3(r, pn, "plane.point", s->offset)) != MBS_OK) ||
      (st = deck_unit_vec3(r, nn, "plane.normal", s->normal)) != MBS_OK) {
    goto fail;
  }
fail:
  deck_map_free(&m);
  return st;
}

/* one shape entry (item k of the list `section`, "ground collision" ...), with r->ctx naming
 * it; body_type: the owner's type, or -1 for the ground */
static mbsStatus read_shape(DeckReader *r, yaml_node_t *node, const char *section, int idx,
                            int body_type, mbsDeckShape *s) {
  int ground = body_type < 0;
  DeckMap m = {0};
  mbsStatus st = MBS_OK;
  const DeckKeyValue *kind = NULL;
  yaml_node_t *v;

  s->orientation[0] = s->orientation[4] = s->orientation[8] = 1.0;
  deck_node_pos(node, &s->mark.line, &s->mark.col);
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node,
                     "expected a mapping ({sphere: r}, {box: [a, b, c]}, {capsule: {radius: r, "
                     "length: l}}, {points: [[x, y, z], ...]}, {ring: R}%s), got %s",
                     ground ? ", {plane: {point, normal}}" : "", deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK) {
    return st;
  }

  /* the kind: exactly one shape key; a key that is no key of a shape, in an entry without
   * one, is taken for an unknown shape */
  for (int i = 0; i < m.n; i++) {
    const char *k = deck_text(m.kv[i].key);
    if (!is_shape_word(k)) {
      continue;
    }
    if (kind) {
      st = deck_fail(r, m.kv[i].key, "give one shape per entry, not both '%s' and '%s'",
                     deck_text(kind->key), k);
      goto fail;
    }
    kind = &m.kv[i];
  }
  if (!kind) {
    for (int i = 0; i < m.n; i++) {
      const char *k = deck_text(m.kv[i].key);
      if (k && !in_words(k, shape_keys)) {
        st = deck_fail(r, m.kv[i].key, "unknown shape '%.64s'; the shapes are %s", k,
                       ground ? SHAPES_GROUND : SHAPES_BODY);
        goto fail;
      }
    }
  }
  if (ground) {
    /* the entry's optional name; the context then names it */
    if (deck_map_get(&m, "name")) {
      const yaml_node_t *nn;
      if ((st = deck_entry_start(r, &m, section, idx, shape_keys, NULL, s->name, &nn)) != MBS_OK) {
        goto fail;
      }
    } else if ((st = deck_check_keys(r, &m, r->ctx, shape_keys, NULL)) != MBS_OK) {
      goto fail;
    }
  } else if ((st = deck_check_keys(r, &m, r->ctx, body_shape_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  if (!kind) {
    st = deck_fail(r, node, "give a shape: one of %s", ground ? SHAPES_GROUND : SHAPES_BODY);
    goto fail;
  }

  const char *kw = deck_text(kind->key);
  v = kind->value;
  if (strcmp(kw, "sphere") == 0) {
    s->kind = MBS_SHAPE_SPHERE;
    st = deck_positive(r, v, "sphere", &s->size[0]);
  } else if (strcmp(kw, "box") == 0) {
    s->kind = MBS_SHAPE_BOX;
    st = read_box(r, v, s->size);
  } else if (strcmp(kw, "capsule") == 0) {
    s->kind = MBS_SHAPE_CAPSULE;
    st = read_capsule(r, v, s->size);
  } else if (strcmp(kw, "points") == 0) {
    s->kind = MBS_SHAPE_POINTS;
    st = read_points(r, v, s);
  } else if (strcmp(kw, "ring") == 0) {
    /* the circle of radius R about axis 3 in the plane of axes 1, 2: a bore */
    s->kind = MBS_SHAPE_RING;
    st = deck_positive(r, v, "ring", &s->size[0]);
  } else {
    s->kind = MBS_SHAPE_PLANE;
    if (!ground) {
      st = deck_fail(r, kind->key,
                     "a plane is ground geometry (ground: {collision: [{plane: {point, "
                     "normal}}]}), not a body's; the shapes of a body are " SHAPES_BODY);
    } else {
      st = read_plane(r, v, s);
    }
  }
  if (st != MBS_OK) {
    goto fail;
  }

  /* placement: offset (centre) and orientation (axes); a plane has its point and normal */
  const DeckKeyValue *off = deck_map_find(&m, "offset"), *ori = deck_map_find(&m, "orientation");
  if (s->kind == MBS_SHAPE_PLANE && (off || ori)) {
    st = deck_fail(r, (off ? off : ori)->key,
                   "a plane is placed by its point and normal; '%s' does not apply",
                   deck_text((off ? off : ori)->key));
    goto fail;
  }
  if (off && body_type == MBS_BODY_POINT) {
    st = deck_fail(r, off->key,
                   "offset: a point mass's shapes are centred on it (it has no axes to carry an "
                   "offset); make it a rigid body to place a shape off its centre");
    goto fail;
  }
  if ((off && (st = deck_vec3(r, off->value, "offset", s->offset)) != MBS_OK) ||
      (ori && (st = deck_orientation(r, ori->value, s->orientation)) != MBS_OK)) {
    goto fail;
  }

fail:
  deck_map_free(&m);
  return st;
}

/* a `collision` list (NULL or empty: none) into *out (*n entries, allocated); ctx0 is the
 * context of the owner ("bodies[2] 'die3'", "ground"); r->ctx is restored */
static mbsStatus read_collision_list(DeckReader *r, yaml_node_t *v, int body_type, int *n,
                                     mbsDeckShape **out) {
  char ctx0[sizeof(r->ctx)], section[sizeof(r->ctx)];
  mbsStatus st = MBS_OK;
  *n = 0;
  *out = NULL;
  if (!v || deck_is_null(v)) {
    return MBS_OK;
  }
  if (v->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, v, "collision: expected a list of shapes ([{box: [a, b, c]}, ...]), got %s",
                     deck_kind(v));
  }
  int count = deck_count(v);
  if (count == 0) {
    return MBS_OK;
  }
  if (!(*out = calloc((size_t)count, sizeof(**out)))) {
    return deck_nomem(r);
  }
  *n = count;
  memcpy(ctx0, r->ctx, sizeof(ctx0));
  snprintf(section, sizeof(section), "%.150s%scollision", ctx0, ctx0[0] ? " " : "");
  for (int k = 0; k < count && st == MBS_OK; k++) {
    snprintf(r->ctx, sizeof(r->ctx), "%.160s[%d]", section, k);
    st = read_shape(r, deck_item(r, v, k), section, k, body_type, &(*out)[k]);
  }
  memcpy(r->ctx, ctx0, sizeof(ctx0));
  return st;
}

void deck_free_shapes(mbsDeckShape *s, int n) {
  for (int k = 0; s && k < n; k++) {
    free(s[k].pts);
  }
  free(s);
}

mbsStatus deck_read_collision(DeckReader *r, mbsDeckBody *b, yaml_node_t *v) {
  if (v) {
    return read_collision_list(r, v, (int)b->type, &b->ncollision, &b->collision);
  }
  /* default: the body's shape when it is a box or a sphere, with the same size */
  int box = b->has_shape && strcmp(b->shape_kind, "box") == 0;
  int sphere = b->has_shape && strcmp(b->shape_kind, "sphere") == 0;
  if (!box && !sphere) {
    return MBS_OK;
  }
  if (!(b->collision = calloc(1, sizeof(*b->collision)))) {
    return deck_nomem(r);
  }
  b->ncollision = 1;
  mbsDeckShape *s = b->collision;
  s->mark = b->mark;
  s->kind = box ? MBS_SHAPE_BOX : MBS_SHAPE_SPHERE;
  memcpy(s->size, b->shape_size, sizeof(s->size));
  s->orientation[0] = s->orientation[4] = s->orientation[8] = 1.0;
  return MBS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* ground */

mbsStatus deck_read_ground(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
  DeckMap m = {0};
  mbsStatus st;
  snprintf(r->ctx, sizeof(r->ctx), "ground");
  if (!node || deck_is_null(node)) {
    return MBS_OK;
  }
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node, "expected a mapping {collision: [...]}, got %s", deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) == MBS_OK &&
      (st = deck_check_keys(r, &m, "ground", ground_keys, NULL)) == MBS_OK) {
    st = read_collision_list(r, deck_map_get(&m, "collision"), -1, &deck->nground_shape,
                             &deck->ground_shapes);
  }
  /* names: given or "ground#i", unique */
  for (int k = 0; st == MBS_OK && k < deck->nground_shape; k++) {
    mbsDeckShape *s = &deck->ground_shapes[k];
    if (!s->name[0]) {
      snprintf(s->name, sizeof(s->name), "ground#%d", k + 1);
    }
    for (int j = 0; j < k; j++) {
      if (strcmp(deck->ground_shapes[j].name, s->name) == 0) {
        r->ctx[0] = '\0';
        st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, s->mark.line, s->mark.col,
                           "ground collision[%d]: duplicate shape name '%s' (first at %d:%d)", k,
                           s->name, deck->ground_shapes[j].mark.line,
                           deck->ground_shapes[j].mark.col);
        break;
      }
    }
  }
  deck_map_free(&m);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* contacts */

/* the participants a pattern picks: bodies (indices), beam nodes (body references nbody +
 * node) or the ground (-1), counted by owner (a body, a beam: nbody + beam index, the ground);
 * how many owners, and the first two owners that move (not fixed, not the ground) */
typedef struct {
  int n;
  int only; /* the owner when n == 1 */
  int last; /* the last owner added */
  int moving[2];
  int nmoving;
} Picked;

static void pick_add(const mbsDeck *deck, Picked *p, int owner) {
  if (p->n > 0 && p->last == owner) {
    return;
  }
  if (p->n == 0) {
    p->only = owner;
  }
  p->last = owner;
  p->n++;
  int fixed = owner < 0 || (owner < deck->nbody && deck->bodies[owner].fixed);
  if (!fixed && p->nmoving < 2) {
    p->moving[p->nmoving++] = owner;
  }
}

/* some owner a in p moves and q has an owner other than a (nodes of one beam never touch
 * each other) */
static int pair_from(const Picked *p, const Picked *q) {
  for (int k = 0; k < p->nmoving; k++) {
    if (q->n >= 2 || (q->n == 1 && q->only != p->moving[k])) {
      return 1;
    }
  }
  return 0;
}

/* between[k]: "ground", a beam node NAME[i], or a pattern matching at least one body or beam,
 * each with geometry */
static mbsStatus read_pattern(DeckReader *r, const mbsDeck *deck, yaml_node_t *n, int k,
                              mbsDeckContact *c, Picked *p) {
  const char *s = deck_text(n);
  memset(p, 0, sizeof(*p));
  deck_node_pos(n, &c->between_mark[k].line, &c->between_mark[k].col);
  if (!s || deck_is_null(n) || !s[0]) {
    return deck_fail(r, n, "between[%d]: expected a body-name pattern or 'ground', got %s", k,
                     s && !deck_is_null(n) ? "an empty string" : deck_kind(n));
  }
  if (strlen(s) >= MBS_NAME_MAX) {
    return deck_fail(r, n, "between[%d]: pattern is longer than %d characters", k,
                     MBS_NAME_MAX - 1);
  }
  memcpy(c->between[k], s, strlen(s) + 1);
  if (strcmp(s, "ground") == 0) {
    if (deck->nground_shape == 0) {
      return deck_fail(r, n,
                       "between[%d]: the ground has no collision geometry; add it as ground: "
                       "{collision: [{plane: {point: [0, 0, 0], normal: [0, 0, 1]}}]}",
                       k);
    }
    pick_add(deck, p, -1);
    return MBS_OK;
  }
  /* one beam node NAME[i] (NAME a beam; else the brackets are a pattern's character set) */
  const char *open = strchr(s, '[');
  if (open && open > s && (size_t)(open - s) < MBS_NAME_MAX) {
    char name[MBS_NAME_MAX];
    memcpy(name, s, (size_t)(open - s));
    name[open - s] = '\0';
    int bi = deck_names_get(&r->beam_names, name);
    if (bi >= 0) {
      int ref = -1;
      mbsStatus st = MBS_OK;
      if (!deck_beam_ref(r, n, s, &ref, &st)) {
        return deck_fail(r, n, "between[%d]: '%s': expected a beam node %s[i]", k, s, name);
      }
      if (st != MBS_OK) {
        return st;
      }
      const mbsDeckBeam *db = &deck->beams[bi];
      if (!(db->collision_radius > 0.0)) {
        return deck_fail(r, n,
                         "between[%d]: beam '%s' (node '%s') has no collision geometry; give the "
                         "beam `collision: {sphere: r}` or `{capsule: r}`",
                         k, name, s);
      }
      if (db->collision_segments && ref - deck->nbody - db->node0 == db->nnode - 1) {
        return deck_fail(r, n,
                         "between[%d]: '%s' is the last node of beam '%s', whose capsules run "
                         "along its segments: NAME[i] names the segment from node i to i + 1, "
                         "so i is in 0 .. %d (or -%d .. -2)",
                         k, s, name, db->nnode - 2, db->nnode);
      }
      c->between_node[k] = ref + 1;
      pick_add(deck, p, deck->nbody + bi);
      return MBS_OK;
    }
  }
  for (int b = 0; b < deck->nbody; b++) {
    const mbsDeckBody *db = &deck->bodies[b];
    if (fnmatch(s, db->name, 0) != 0) {
      continue;
    }
    if (db->ncollision == 0) {
      return deck_fail(r, n,
                       "between[%d]: body '%s' (matched by '%s') has no collision geometry; give "
                       "it `collision: [{sphere: r}]` (or a box, capsule or points), or a box or "
                       "sphere `shape`, which it takes by default",
                       k, db->name, s);
    }
    pick_add(deck, p, b);
  }
  /* beams: every node */
  for (int b = 0; b < deck->nbeam; b++) {
    if (fnmatch(s, deck->beams[b].name, 0) != 0) {
      continue;
    }
    if (!(deck->beams[b].collision_radius > 0.0)) {
      return deck_fail(r, n,
                       "between[%d]: beam '%s' (matched by '%s') has no collision geometry; give "
                       "it `collision: {sphere: r}` (a sphere on every node) or `{capsule: r}` "
                       "(along every segment)",
                       k, deck->beams[b].name, s);
    }
    pick_add(deck, p, deck->nbody + b);
  }
  /* surfaces: every patch (the participant nbody + nbeam + surface index) */
  for (int f = 0; f < deck->nsurface; f++) {
    if (fnmatch(s, deck->surfaces[f].name, 0) == 0) {
      pick_add(deck, p, deck->nbody + deck->nbeam + f);
    }
  }
  if (p->n == 0) {
    const char *near = deck_nearest_body(r, s);
    return near ? deck_fail(r, n,
                            "between[%d]: the pattern '%s' matches no body or beam; did you mean "
                            "'%s'?",
                            k, s, near)
                : deck_fail(r, n, "between[%d]: the pattern '%s' matches no body or beam", k, s);
  }
  return MBS_OK;
}

static mbsStatus read_contact(DeckReader *r, mbsDeck *deck, int i, yaml_node_t *node) {
  mbsDeckContact *c = &deck->contacts[i];
  DeckMap m = {0};
  yaml_node_t *v;
  const yaml_node_t *nn = NULL;
  Picked p[2];
  int t;
  mbsStatus st;

#define CONTACT_DEFAULT(type, name, def) c->name = def;
  MBS_CONTACT_FIELDS(CONTACT_DEFAULT)
#undef CONTACT_DEFAULT
  deck_node_pos(node, &c->mark.line, &c->mark.col);
  deck_entry_ctx(r, node, "contacts", i);
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node, "expected a mapping (one contact entry), got %s", deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK) {
    return st;
  }
  if (deck_map_get(&m, "name")) {
    if ((st = deck_entry_start(r, &m, "contacts", i, contact_keys, NULL, c->name, &nn)) != MBS_OK) {
      goto fail;
    }
    for (int j = 0; j < i; j++) {
      if (strcmp(deck->contacts[j].name, c->name) == 0) {
        st = deck_fail(r, nn, "duplicate contact name '%s' (first at %d:%d)", c->name,
                       deck->contacts[j].mark.line, deck->contacts[j].mark.col);
        goto fail;
      }
    }
  } else {
    snprintf(c->name, sizeof(c->name), "contact#%d", i + 1);
    if ((st = deck_check_keys(r, &m, r->ctx, contact_keys, NULL)) != MBS_OK) {
      goto fail;
    }
  }

  /* between: two patterns */
  if (!(v = deck_map_get(&m, "between"))) {
    st = deck_fail(r, m.node,
                   "missing required key 'between' (two body-name patterns, or "
                   "'ground')");
    goto fail;
  }
  if ((st = deck_pair_list(r, v, "between",
                           "a list of two body-name patterns [pattern, pattern]")) != MBS_OK ||
      (st = read_pattern(r, deck, deck_item(r, v, 0), 0, c, &p[0])) != MBS_OK ||
      (st = read_pattern(r, deck, deck_item(r, v, 1), 1, c, &p[1])) != MBS_OK) {
    goto fail;
  }
  if (!r->contact_pairs && (pair_from(&p[0], &p[1]) || pair_from(&p[1], &p[0]))) {
    r->contact_pairs = i + 1;
  }

  /* the law and its constants */
  if ((v = deck_map_get(&m, "law"))) {
    if ((st = deck_word(r, v, "law", "contact law", mbs_contact_law_words, MBS_CONTACT_LAW_COUNT,
                        &t)) != MBS_OK) {
      goto fail;
    }
    c->law = (mbsContactLaw)t;
  }
  if ((v = deck_map_get(&m, "restitution"))) {
    if ((st = deck_number(r, v, "restitution", &c->restitution)) != MBS_OK) {
      goto fail;
    }
    if (!(c->restitution >= 0.0 && c->restitution <= 1.0)) {
      st = deck_fail(r, v, "restitution must be in [0, 1] (got %g)", c->restitution);
      goto fail;
    }
  }
  if ((v = deck_map_get(&m, "friction"))) {
    if ((st = deck_number(r, v, "friction", &c->friction)) != MBS_OK) {
      goto fail;
    }
    if (!(c->friction >= 0.0)) {
      st = deck_fail(r, v, "friction must be >= 0 (got %g)", c->friction);
      goto fail;
    }
  }
  if ((v = deck_map_get(&m, "margin"))) {
    if ((st = deck_number(r, v, "margin", &c->margin)) != MBS_OK) {
      goto fail;
    }
    if (!(c->margin >= 0.0)) {
      st = deck_fail(r, v, "margin must be >= 0 (got %g)", c->margin);
      goto fail;
    }
  }
  if (c->law != MBS_CONTACT_PENALTY) {
    for (int k = 0; penalty_keys[k]; k++) {
      const DeckKeyValue *kv = deck_map_find(&m, penalty_keys[k]);
      if (kv) {
        st = deck_fail(r, kv->key,
                       "'%s' belongs to law: penalty; a %s contact takes restitution, friction "
                       "and margin",
                       penalty_keys[k], mbs_contact_law_words[c->law]);
        goto fail;
      }
    }
  } else {
    if (!(v = deck_map_get(&m, "stiffness"))) {
      st = deck_fail(r, m.node, "law penalty needs 'stiffness' [N/m] > 0");
      goto fail;
    }
    if ((st = deck_positive(r, v, "stiffness", &c->stiffness)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&m, "damping"))) {
      if ((st = deck_number(r, v, "damping", &c->damping)) != MBS_OK) {
        goto fail;
      }
      if (!(c->damping >= 0.0)) {
        st = deck_fail(r, v, "damping must be >= 0 (got %g)", c->damping);
        goto fail;
      }
    }
    if ((v = deck_map_get(&m, "friction_velocity")) &&
        (st = deck_positive(r, v, "friction_velocity", &c->friction_velocity)) != MBS_OK) {
      goto fail;
    }
  }

fail:
  deck_map_free(&m);
  return st;
}

mbsStatus deck_read_contacts(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
  r->ctx[0] = '\0';
  if (!node || deck_is_null(node)) {
    return MBS_OK;
  }
  if (node->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, node, "contacts: expected a list, got %s", deck_kind(node));
  }
  int n = deck_count(node);
  if (n == 0) {
    return MBS_OK;
  }
  if (!(deck->contacts = calloc((size_t)n, sizeof(*deck->contacts)))) {
    return deck_nomem(r);
  }
  for (int i = 0; i < n; i++) {
    mbsStatus st = read_contact(r, deck, i, deck_item(r, node, i));
    if (st != MBS_OK) {
      return st;
    }
    deck->ncontact = i + 1;
  }
  r->ctx[0] = '\0';
  return MBS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* solver.moreau */

mbsStatus deck_read_moreau(DeckReader *r, mbsDeckSolver *s, yaml_node_t *node) {
  static const char *const keys[] = {"theta", "variant", "contact_tolerance", "contact_iterations",
                                     NULL};
  DeckMap m = {0};
  yaml_node_t *v;
  int t;
  mbsStatus st;
  if (deck_is_null(node)) {
    return MBS_OK;
  }
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node,
                     "moreau: expected a mapping {theta, variant, contact_tolerance, "
                     "contact_iterations}, got %s",
                     deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "solver.moreau", keys, NULL)) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "theta"))) {
    if ((st = deck_number(r, v, "moreau.theta", &s->moreau_theta)) != MBS_OK) {
      goto fail;
    }
    if (!(s->moreau_theta >= 0.5 && s->moreau_theta <= 1.0)) {
      st = deck_fail(r, v, "moreau.theta must be in [0.5, 1] (got %g); 1 is implicit Euler",
                     s->moreau_theta);
      goto fail;
    }
  }
  if ((v = deck_map_get(&m, "variant"))) {
    if ((st = deck_word(r, v, "moreau.variant", "moreau variant", mbs_moreau_variant_words,
                        MBS_MOREAU_VARIANT_COUNT, &t)) != MBS_OK) {
      goto fail;
    }
    s->moreau_variant = (mbsMoreauVariant)t;
  }
  if ((v = deck_map_get(&m, "contact_tolerance")) &&
      (st = deck_positive(r, v, "moreau.contact_tolerance", &s->contact_tolerance)) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "contact_iterations"))) {
    if ((st = deck_integer(r, v, "moreau.contact_iterations", &s->contact_iterations)) != MBS_OK) {
      goto fail;
    }
    if (s->contact_iterations < 1) {
      st =
          deck_fail(r, v, "moreau.contact_iterations must be >= 1 (got %d)", s->contact_iterations);
      goto fail;
    }
  }
fail:
  deck_map_free(&m);
  return st;
}
