/* chains.c: the section `chains:` (docs/decks.md "Chains"): a serial arm written as a
 * Denavit-Hartenberg table. Each row expands into one rigid body NAME.linkI, posed in its DH
 * frame at zero joint coordinates (the offsets theta and d as written), and one revolute or
 * prismatic joint NAME.jointI from the previous link (the base for the first) to it, so that
 * the model compiler sees ordinary bodies and joints.
 *
 * Frames (homogeneous transforms, frame 0 the base frame):
 *   standard (distal) DH:   T_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i), joint i about z_{i-1}
 *                           through o_{i-1};
 *   modified (Craig) DH:    T_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i), joint i about
 *                           z_i through o_i (the row holds a_{i-1}, alpha_{i-1} as its a, alpha);
 * F_i = F_{i-1} T_i, and link i's directors are the axes of F_i. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"
#include "util/profile.h"

#define PI 3.14159265358979323846

static const char *const chain_keys[] = {"name",       "base",  "origin", "orientation",
                                         "convention", "links", NULL};
static const char *const row_keys[] = {"a",         "alpha", "alpha_deg", "d",      "theta",
                                       "theta_deg", "type",  "body",      "motion", NULL};
static const char *const conventions[] = {"standard", "modified"};
static const char *const row_types[] = {"revolute", "prismatic"};

/* a frame: rotation R (row-major, column i = axis i, world) and origin o (world) */
typedef struct {
  double R[9], o[3];
} Frame;

/* F <- F Rz(t) (rotation about its own z by t) or F Rx(t) */
static void rotate(Frame *F, int axis, double t) {
  double c = cos(t), s = sin(t), R[9];
  memcpy(R, F->R, sizeof(R));
  /* columns u, v are the two axes turned: u' = c u + s v, v' = -s u + c v */
  int u = axis == 2 ? 0 : 1, v = axis == 2 ? 1 : 2;
  for (int r = 0; r < 3; r++) {
    F->R[3 * r + u] = c * R[3 * r + u] + s * R[3 * r + v];
    F->R[3 * r + v] = -s * R[3 * r + u] + c * R[3 * r + v];
  }
}

/* F <- F T(s along its own axis) */
static void translate(Frame *F, int axis, double s) {
  for (int r = 0; r < 3; r++) {
    F->o[r] += s * F->R[3 * r + axis];
  }
}

/* an angle in radians (key) or degrees (key_deg), exactly one of them; required */
static mbsStatus read_angle(DeckReader *r, const DeckMap *m, const char *key, const char *what,
                            double *out) {
  char kd[32], field[64];
  snprintf(kd, sizeof(kd), "%s_deg", key);
  yaml_node_t *v = deck_map_get(m, key), *vd = deck_map_get(m, kd);
  if (v && vd) {
    return deck_fail(r, vd, "give %s (radians) or %s (degrees), not both", key, kd);
  }
  if (!v && !vd) {
    return deck_fail(r, m->node, "missing required key '%s' (%s [rad], or %s in degrees)", key,
                     what, kd);
  }
  snprintf(field, sizeof(field), "%s", v ? key : kd);
  double x;
  mbsStatus st = deck_number(r, v ? v : vd, field, &x);
  if (st != MBS_OK) {
    return st;
  }
  /* degrees scaled by pi/180 as one factor: x * PI overflows for 1e308 */
  *out = v ? x : x * (PI / 180.0);
  if (!(fabs(*out) <= DECK_MAX_ANGLE)) {
    return deck_fail(r, v ? v : vd,
                     "%s: %g is more than %g radians from zero; round-off leaves no digits for "
                     "the fraction of a turn",
                     field, x, DECK_MAX_ANGLE);
  }
  if (v) {
    deck_warn_turn(r, v, key, x, kd, x);
  }
  return MBS_OK;
}

static mbsStatus read_length(DeckReader *r, const DeckMap *m, const char *key, const char *what,
                             double *out) {
  yaml_node_t *v = deck_map_get(m, key);
  if (!v) {
    return deck_fail(r, m->node, "missing required key '%s' (%s [m])", key, what);
  }
  mbsStatus st = deck_number(r, v, key, out);
  if (st == MBS_OK && !(out[0] * out[0] <= DECK_MAX_SCALE)) {
    return deck_fail(r, v, "%s: %g m is too large (its square exceeds %g)", key, *out,
                     DECK_MAX_SCALE);
  }
  return st;
}

/* the velocity field of the link being placed, v(x) = c + w x x (world) */
typedef struct {
  double c[3], w[3];
} Twist;

static void twist_at(const Twist *T, const double x[3], double v[3]) {
  v[0] = T->c[0] + T->w[1] * x[2] - T->w[2] * x[1];
  v[1] = T->c[1] + T->w[2] * x[0] - T->w[0] * x[2];
  v[2] = T->c[2] + T->w[0] * x[1] - T->w[1] * x[0];
}

/* one chain: its rows into bodies deck->bodies[deck->nbody ...] and joints js[*nj ...] */
static mbsStatus read_chain(DeckReader *r, mbsDeck *deck, int ci, yaml_node_t *node,
                            mbsDeckChain *ch, mbsDeckJoint *js, int *nj) {
  DeckMap m = {0}, row = {0};
  const yaml_node_t *nn = NULL;
  yaml_node_t *v, *links;
  char chain_ctx[sizeof(r->ctx)];
  int t;
  mbsStatus st;
  Frame F = {{1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 0, 0}};
  Twist T = {{0, 0, 0}, {0, 0, 0}};

  deck_node_pos(node, &ch->mark.line, &ch->mark.col);
  if ((st = deck_entry_open(r, node, "chains", ci, "chain", chain_keys, NULL, ch->name, &nn, &m)) !=
      MBS_OK) {
    return st;
  }
  memcpy(chain_ctx, r->ctx, sizeof(chain_ctx));
  for (int k = 0; k < ci; k++) {
    if (strcmp(deck->chains[k].name, ch->name) == 0) {
      st = deck_fail(r, nn, "duplicate chain name '%s' (first at %d:%d)", ch->name,
                     deck->chains[k].mark.line, deck->chains[k].mark.col);
      goto fail;
    }
  }

  /* convention: required, the two tables differ in every row */
  if (!(v = deck_map_get(&m, "convention"))) {
    st = deck_fail(r, m.node,
                   "missing required key 'convention' (standard or modified Denavit-Hartenberg)");
    goto fail;
  }
  if ((st = deck_word(r, v, "convention", "DH convention", conventions, 2, &ch->modified)) !=
      MBS_OK) {
    goto fail;
  }

  /* base: a body above (its frame at t = 0) or the ground; origin and orientation in it */
  if (!(v = deck_map_get(&m, "base"))) {
    st = deck_fail(r, m.node, "missing required key 'base' (a body name or ground)");
    goto fail;
  }
  {
    const char *s = deck_text(v);
    if (!s || deck_is_null(v)) {
      st = deck_fail(r, v, "base: expected a body name or ground, got %s", deck_kind(v));
      goto fail;
    }
    ch->base = strcmp(s, "ground") == 0 ? -1 : deck_names_get(&r->body_names, s);
    if (strcmp(s, "ground") != 0 && ch->base < 0) {
      const char *near = deck_nearest_body(r, s);
      st = near ? deck_fail(r, v,
                            "base: body '%.64s' is not defined above this chain; did you mean "
                            "'%s'?",
                            s, near)
                : deck_fail(r, v,
                            "base: body '%.64s' is not defined above this chain (a body of "
                            "`bodies:` or of a chain before it, or ground)",
                            s);
      goto fail;
    }
  }
  {
    double o[3] = {0, 0, 0}, R0[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if ((v = deck_map_get(&m, "origin")) && (st = deck_vec3(r, v, "origin", o)) != MBS_OK) {
      goto fail;
    }
    if ((v = deck_map_get(&m, "orientation")) && (st = deck_orientation(r, v, R0)) != MBS_OK) {
      goto fail;
    }
    if (ch->base >= 0) {
      /* in the base body's frame: x = x_b + R_b o, R = R_b R0; its rigid motion carries over */
      const mbsDeckBody *b = &deck->bodies[ch->base];
      for (int a = 0; a < 3; a++) {
        F.o[a] = b->position[a];
        for (int k = 0; k < 3; k++) {
          F.o[a] += b->directors[3 * a + k] * o[k];
          double s = 0.0;
          for (int l = 0; l < 3; l++) {
            s += b->directors[3 * a + l] * R0[3 * l + k];
          }
          F.R[3 * a + k] = s;
        }
      }
      if (!b->fixed) {
        memcpy(T.w, b->angular_velocity, sizeof(T.w));
        double wx[3], z[3] = {0, 0, 0};
        memcpy(T.c, z, sizeof(z));
        twist_at(&T, b->position, wx); /* w x x_b */
        for (int a = 0; a < 3; a++) {
          T.c[a] = b->velocity[a] - wx[a];
        }
      }
    } else {
      memcpy(F.o, o, sizeof(o));
      memcpy(F.R, R0, sizeof(R0));
    }
  }

  /* links: one row per joint */
  if (!(links = deck_map_get(&m, "links"))) {
    st = deck_fail(r, m.node,
                   "missing required key 'links' (one row per joint: a, alpha, d, "
                   "theta, type, body)");
    goto fail;
  }
  if (links->type != YAML_SEQUENCE_NODE || deck_count(links) == 0) {
    st = deck_fail(r, links, "links: expected a list of at least one row, got %s",
                   links->type == YAML_SEQUENCE_NODE ? "an empty list" : deck_kind(links));
    goto fail;
  }
  ch->nlink = deck_count(links);
  ch->body0 = deck->nbody;
  ch->joint0 = *nj;
  int prev = ch->base;
  for (int i = 0; i < ch->nlink; i++) {
    yaml_node_t *rn = deck_item(r, links, i);
    mbsDeckBody *b = &deck->bodies[deck->nbody];
    mbsDeckJoint *j = &js[*nj];
    double a, alpha, d, theta;
    memset(b, 0, sizeof(*b));
    memset(j, 0, sizeof(*j));
    snprintf(r->ctx, sizeof(r->ctx), "%.160s links[%d]", chain_ctx, i);
    if (rn->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, rn, "expected a mapping (one row: a, alpha, d, theta, type, body), got %s",
                     deck_kind(rn));
      goto fail;
    }
    if ((st = deck_map_flatten(r, rn, &row)) != MBS_OK ||
        (st = deck_check_keys(r, &row, r->ctx, row_keys, NULL)) != MBS_OK ||
        (st = read_length(r, &row, "a", "the link length along x", &a)) != MBS_OK ||
        (st = read_angle(r, &row, "alpha", "the link twist about x", &alpha)) != MBS_OK ||
        (st = read_length(r, &row, "d", "the link offset along z", &d)) != MBS_OK ||
        (st = read_angle(r, &row, "theta", "the joint-angle offset about z", &theta)) != MBS_OK) {
      goto fail;
    }
    if (!(v = deck_map_get(&row, "type"))) {
      st = deck_fail(r, row.node, "missing required key 'type' (revolute or prismatic)");
      goto fail;
    }
    if ((st = deck_word(r, v, "type", "chain joint type", row_types, 2, &t)) != MBS_OK) {
      goto fail;
    }

    /* the names: NAME.linkI, NAME.jointI (1-based), unique among the bodies */
    deck_node_pos(rn, &j->mark.line, &j->mark.col);
    int lb = snprintf(b->name, sizeof(b->name), "%s.link%d", ch->name, i + 1);
    int lj = snprintf(j->name, sizeof(j->name), "%s.joint%d", ch->name, i + 1);
    if (lb >= MBS_NAME_MAX || lj >= MBS_NAME_MAX) {
      st = deck_fail(r, nn,
                     "the names of this chain's links and joints ('%s.link%d') are longer "
                     "than %d characters; shorten the chain's name",
                     ch->name, i + 1, MBS_NAME_MAX - 1);
      goto fail;
    }
    int first = deck_names_get(&r->body_names, b->name);
    if (first >= 0) {
      st = deck_fail(r, rn, "the link's body name '%s' is taken by the body at %d:%d", b->name,
                     deck->bodies[first].mark.line, deck->bodies[first].mark.col);
      goto fail;
    }

    /* the joint's axis and point, the link's frame (file comment) */
    double axis[3], point[3];
    if (ch->modified) {
      rotate(&F, 0, alpha);
      translate(&F, 0, a);
    }
    for (int c = 0; c < 3; c++) {
      axis[c] = F.R[3 * c + 2];
      point[c] = F.o[c];
    }
    rotate(&F, 2, theta);
    translate(&F, 2, d);
    if (!ch->modified) {
      translate(&F, 0, a);
      rotate(&F, 0, alpha);
    }

    /* the link */
    if (!(v = deck_map_get(&row, "body"))) {
      st = deck_fail(r, row.node,
                     "missing required key 'body' (the link's mass and inertia, or "
                     "mass and shape)");
      goto fail;
    }
    if ((st = deck_read_link_body(r, deck, b, v, F.o, F.R)) != MBS_OK) {
      goto fail;
    }
    deck_node_pos(rn, &b->mark.line, &b->mark.col);
    deck_names_put(&r->body_names, b->name, deck->nbody);
    deck->nbody++;

    /* the joint, from the previous link (or the base) to this one */
    j->type = t ? MBS_JOINT_PRISMATIC : MBS_JOINT_REVOLUTE;
    j->body[0] = prev;
    j->body[1] = deck->nbody - 1;
    memcpy(j->axis, axis, sizeof(axis));
    memcpy(j->point, point, sizeof(point));
    memcpy(j->points[0], point, sizeof(point));
    memcpy(j->points[1], point, sizeof(point));
    (*nj)++; /* counted before its motion: what a failed motion holds is released with js */
    if ((v = deck_map_get(&row, "motion")) && (st = deck_read_motion(r, j, v)) != MBS_OK) {
      goto fail;
    }
    prev = deck->nbody - 1;

    /* velocities: the base's rigid motion and the motions' rates at t = 0 (right derivative),
     * so that the joints' velocity constraints hold at t = 0 */
    if (j->has_motion) {
      double rate = 0.0;
      (void)deck_profile_at(&j->motion_profile, 0.0, &rate);
      rate *= j->motion_value;
      if (j->type == MBS_JOINT_REVOLUTE) {
        double wp[3];
        for (int c = 0; c < 3; c++) {
          T.w[c] += rate * axis[c];
        }
        /* c -= rate axis x point */
        wp[0] = axis[1] * point[2] - axis[2] * point[1];
        wp[1] = axis[2] * point[0] - axis[0] * point[2];
        wp[2] = axis[0] * point[1] - axis[1] * point[0];
        for (int c = 0; c < 3; c++) {
          T.c[c] -= rate * wp[c];
        }
      } else {
        for (int c = 0; c < 3; c++) {
          T.c[c] += rate * axis[c];
        }
      }
    }
    twist_at(&T, b->position, b->velocity);
    memcpy(b->angular_velocity, T.w, sizeof(T.w));
    deck_map_free(&row);
  }

fail:
  deck_map_free(&row);
  deck_map_free(&m);
  return st;
}

mbsStatus deck_read_chains(DeckReader *r, mbsDeck *deck, yaml_node_t *node, mbsDeckJoint **joints,
                           int *njoint) {
  *joints = NULL;
  *njoint = 0;
  r->ctx[0] = '\0';
  if (!node || deck_is_null(node)) {
    return MBS_OK;
  }
  if (node->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, node, "chains: expected a list of chains, got %s", deck_kind(node));
  }
  int n = deck_count(node);
  if (n == 0) {
    return MBS_OK;
  }

  /* rows first: the room for the links and joints (a row that is no mapping counts one) */
  long rows = 0;
  for (int i = 0; i < n; i++) {
    yaml_node_t *c = deck_item(r, node, i);
    yaml_node_t *links = NULL;
    if (c->type == YAML_MAPPING_NODE) {
      DeckMap m = {0};
      mbsStatus st = deck_map_flatten(r, c, &m);
      if (st != MBS_OK) {
        return st;
      }
      links = deck_map_get(&m, "links");
      deck_map_free(&m);
    }
    rows += links && links->type == YAML_SEQUENCE_NODE ? deck_count(links) : 0;
  }
  if (rows > (long)DECK_MAX_NODES) {
    return deck_fail(r, node, "chains: too many links (%ld)", rows);
  }
  size_t nb = (size_t)deck->nbody + (size_t)rows;
  mbsDeckBody *bodies = realloc(deck->bodies, (nb > 0 ? nb : 1) * sizeof(*bodies));
  if (!bodies) {
    return deck_nomem(r);
  }
  deck->bodies = bodies;
  /* the names table points into the bodies, which moved: rebuilt for all of them */
  deck_names_free(&r->body_names);
  if (!deck_names_init(&r->body_names, (int)nb)) {
    return deck_nomem(r);
  }
  for (int b = 0; b < deck->nbody; b++) {
    deck_names_put(&r->body_names, deck->bodies[b].name, b);
  }
  if (!(deck->chains = calloc((size_t)n, sizeof(*deck->chains))) ||
      !(*joints = calloc((size_t)(rows > 0 ? rows : 1), sizeof(**joints)))) {
    return deck_nomem(r);
  }
  for (int i = 0; i < n; i++) {
    deck->nchain = i + 1;
    mbsStatus st = read_chain(r, deck, i, deck_item(r, node, i), &deck->chains[i], *joints, njoint);
    if (st != MBS_OK) {
      return st;
    }
  }
  r->ctx[0] = '\0';
  return MBS_OK;
}
