/* beams.c: the section `beams:` (docs/decks.md "Beams"): per beam its nodes (a straight
 * beam from/to with `elements`, or a polyline `nodes`), element order, section axes (`up`),
 * section (elastic moduli, density, rectangle / circle / explicit constants), initial
 * velocity and damping; and the names `NAME[i]` by which joints, loads and springs name a beam
 * node (deck_beam_ref). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

#define PI 3.14159265358979323846

/* the most elements one beam may have (bounds the memory a deck line can ask for) */
#define DECK_MAX_BEAM_ELEMENTS 100000

static const char *const beam_keys[] = {
    "name",   "from",    "to",        "nodes",           "elements", "order",
    "up",     "section", "velocity",  "angular_velocity", "about",   "node_velocities",
    "damping", "collision", "planar", "length",  "sag",     NULL};
static const char *const section_keys[] = {
    "E",  "G",  "nu", "density",      "rectangle",      "circle", "A",
    "I2", "I3", "J",  "shear_factor", "rotary_inertia", NULL};

/* collision: {sphere: r} (a sphere of radius r on every node) or {capsule: r} (a capsule of
 * radius r along every segment between consecutive nodes), with the capsule's `surface: true`
 * (its contact points on the section's perimeter, fixed to the nodes' directors): the beam's
 * contact geometry */
static mbsStatus read_beam_collision(DeckReader *r, mbsDeckBeam *b, yaml_node_t *node) {
  DeckMap m = {0};
  mbsStatus st = MBS_OK;
  yaml_node_t *v = NULL, *surface = NULL;
  deck_node_pos(node, &b->collision_mark.line, &b->collision_mark.col);
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node,
                     "collision: expected a mapping {sphere: r} (a sphere of radius r on every "
                     "node) or {capsule: r} (a capsule along every segment), got %s",
                     deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK) {
    return st;
  }
  for (int k = 0; k < m.n; k++) {
    const char *key = deck_text(m.kv[k].key);
    if (key && strcmp(key, "surface") == 0) {
      surface = m.kv[k].value;
      continue;
    }
    int capsule = key && strcmp(key, "capsule") == 0;
    if (!key || (strcmp(key, "sphere") != 0 && !capsule)) {
      st = deck_fail(r, m.kv[k].key,
                     "collision: unknown key '%s'; a beam's contact geometry is {sphere: r}, a "
                     "sphere of radius r on every node, or {capsule: r}, a capsule of radius r "
                     "along every segment between consecutive nodes (with surface: true, its "
                     "contact points on the section's perimeter)",
                     key ? key : "?");
      goto done;
    }
    if (v) {
      st = deck_fail(r, m.kv[k].key, "collision: give either sphere or capsule, not both");
      goto done;
    }
    v = m.kv[k].value;
    b->collision_segments = capsule;
  }
  if (!v) {
    st = deck_fail(r, node,
                   "collision: missing 'sphere' or 'capsule' (the radius [m] of the sphere on "
                   "every node, or of the capsule along every segment)");
    goto done;
  }
  st = deck_positive(r, v, b->collision_segments ? "collision.capsule" : "collision.sphere",
                     &b->collision_radius);
  if (st == MBS_OK && surface) {
    /* a node's sphere is fixed to its frame already: its points are on its surface */
    if (!b->collision_segments) {
      st = deck_fail(r, surface,
                     "collision.surface: only a capsule takes it ({capsule: r, surface: true}); "
                     "a node's sphere is fixed to the node's frame, so its contact points are "
                     "on its surface already");
      goto done;
    }
    st = deck_bool(r, surface, "collision.surface", &b->collision_surface);
  }
done:
  deck_map_free(&m);
  return st;
}

static double dot3(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

mbsStatus deck_read_planar(DeckReader *r, yaml_node_t *node, double normal[3], mbsMark *mark) {
  static const char *const keys[] = {"normal", NULL};
  DeckMap m = {0};
  mbsStatus st;
  yaml_node_t *v;
  deck_node_pos(node, &mark->line, &mark->col);
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node,
                     "planar: expected a mapping {normal: [x, y, z]} (the normal of the plane "
                     "of motion), got %s",
                     deck_kind(node));
  }
  char where[256];
  snprintf(where, sizeof(where), "%s%splanar", r->ctx, r->ctx[0] ? " " : "");
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, where, keys, NULL)) != MBS_OK) {
    goto done;
  }
  if (!(v = deck_map_get(&m, "normal"))) {
    st = deck_fail(r, node, "planar: missing 'normal' (the normal of the plane of motion, world)");
    goto done;
  }
  st = deck_unit_vec3(r, v, "planar.normal", normal);
done:
  deck_map_free(&m);
  return st;
}

/* a number > 0 of the section mapping (required: missing says what to give) */
static mbsStatus section_value(DeckReader *r, const DeckMap *m, const char *key, const char *why,
                               double *out) {
  yaml_node_t *v = deck_map_get(m, key);
  if (!v) {
    return deck_fail(r, m->node, "section: missing '%s' (%s)", key, why);
  }
  char f[32];
  snprintf(f, sizeof(f), "section.%s", key);
  return deck_positive(r, v, f, out);
}

/* torsion constant of a solid h x w rectangle (Young & Budynas 2002 (Roark), Table 10.7 case 4,
 * with a >= b the half sides): J = a b^3 (16/3 - 3.36 b/a (1 - b^4 / (12 a^4))) */
static double rectangle_torsion(double h, double w) {
  double a = 0.5 * fmax(h, w), b = 0.5 * fmin(h, w), q = b / a;
  return a * b * b * b * (16.0 / 3.0 - 3.36 * q * (1.0 - q * q * q * q / 12.0));
}

/* section: moduli, density, the geometry (rectangle [h along up, w] | circle r | explicit A,
 * I2, I3, J) and the shear factor */
static mbsStatus read_section(DeckReader *r, mbsDeckBeam *b, yaml_node_t *node) {
  DeckMap m = {0};
  mbsStatus st;
  yaml_node_t *v, *vg, *vnu, *vrect, *vcirc;
  const yaml_node_t *vexp = NULL;
  char where[256];
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node,
                     "section: expected a mapping (E, G or nu, density, rectangle, "
                     "circle or A, I2, I3, J), got %s",
                     deck_kind(node));
  }
  snprintf(where, sizeof(where), "%s section", r->ctx);
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, where, section_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  if ((st = section_value(r, &m, "E", "Young's modulus [Pa]", &b->E)) != MBS_OK ||
      (st = section_value(r, &m, "density", "[kg/m^3]", &b->density)) != MBS_OK) {
    goto fail;
  }

  /* G or nu, exactly one */
  vg = deck_map_get(&m, "G");
  vnu = deck_map_get(&m, "nu");
  if (vg && vnu) {
    st = deck_fail(r, vnu, "section: give G or nu, not both");
    goto fail;
  }
  if (!vg && !vnu) {
    st = deck_fail(r, m.node, "section: missing the shear modulus: give G [Pa] or nu");
    goto fail;
  }
  if (vg) {
    if ((st = deck_positive(r, vg, "section.G", &b->G)) != MBS_OK) {
      goto fail;
    }
  } else {
    double nu;
    if ((st = deck_number(r, vnu, "section.nu", &nu)) != MBS_OK) {
      goto fail;
    }
    if (!(nu > -1.0 && nu < 0.5)) {
      st = deck_fail(r, vnu, "section.nu must be in (-1, 0.5) (got %g)", nu);
      goto fail;
    }
    b->G = b->E / (2.0 * (1.0 + nu));
  }

  /* the geometry: one of rectangle, circle or the explicit constants */
  static const char *const explicit_keys[] = {"A", "I2", "I3", "J"};
  vrect = deck_map_get(&m, "rectangle");
  vcirc = deck_map_get(&m, "circle");
  vexp = NULL;
  for (int k = 0; k < 4 && !vexp; k++) {
    const DeckKeyValue *kv = deck_map_find(&m, explicit_keys[k]);
    vexp = kv ? kv->key : NULL;
  }
  if ((vrect != NULL) + (vcirc != NULL) + (vexp != NULL) > 1) {
    st = deck_fail(r, vcirc && vrect ? vcirc : vexp,
                   "section: give one of rectangle, circle or A, I2, I3, J, not several");
    goto fail;
  }
  if (vrect) {
    double hw[2];
    if (vrect->type != YAML_SEQUENCE_NODE || deck_count(vrect) != 2) {
      st = deck_fail(r, vrect, "section.rectangle: expected [height along up, width], got %s",
                     deck_kind(vrect));
      goto fail;
    }
    if ((st = deck_positive(r, deck_item(r, vrect, 0), "section.rectangle[0]", &hw[0])) != MBS_OK ||
        (st = deck_positive(r, deck_item(r, vrect, 1), "section.rectangle[1]", &hw[1])) != MBS_OK) {
      goto fail;
    }
    /* x2 along up (height h), x3 along d3 (width w) */
    double h = hw[0], w = hw[1];
    b->A = h * w;
    b->I2 = h * w * w * w / 12.0;
    b->I3 = w * h * h * h / 12.0;
    b->J = rectangle_torsion(h, w);
    b->shear_factor = 5.0 / 6.0;
  } else if (vcirc) {
    double rad;
    if ((st = deck_positive(r, vcirc, "section.circle", &rad)) != MBS_OK) {
      goto fail;
    }
    double r2 = rad * rad;
    b->A = PI * r2;
    b->I2 = b->I3 = 0.25 * PI * r2 * r2;
    b->J = 0.5 * PI * r2 * r2;
    b->shear_factor = 6.0 / 7.0;
    b->section_circle = 1;
  } else if (vexp) {
    double *dst[4] = {&b->A, &b->I2, &b->I3, &b->J};
    static const char *const why[4] = {"area [m^2]", "int x3^2 dA [m^4]", "int x2^2 dA [m^4]",
                                       "torsion constant [m^4]"};
    for (int k = 0; k < 4; k++) {
      if ((st = section_value(r, &m, explicit_keys[k], why[k], dst[k])) != MBS_OK) {
        goto fail;
      }
    }
    b->shear_factor = 1.0;
  } else {
    st = deck_fail(r, m.node,
                   "section: missing the geometry: give rectangle: [h, w], circle: r "
                   "or A, I2, I3 and J");
    goto fail;
  }
  if ((v = deck_map_get(&m, "shear_factor")) &&
      (st = deck_positive(r, v, "section.shear_factor", &b->shear_factor)) != MBS_OK) {
    goto fail;
  }
  /* the rotary inertia per length: density I2, density I3, or given apart (beam models whose
   * mass and stiffness come from different sections, such as Simo and Vu-Quoc's benchmarks) */
  b->rotary[0] = b->density * b->I2;
  b->rotary[1] = b->density * b->I3;
  if ((v = deck_map_get(&m, "rotary_inertia"))) {
    if (v->type != YAML_SEQUENCE_NODE || deck_count(v) != 2) {
      st = deck_fail(r, v, "section.rotary_inertia: expected [rho I2, rho I3] [kg m], got %s",
                     deck_kind(v));
      goto fail;
    }
    if ((st = deck_positive(r, deck_item(r, v, 0), "section.rotary_inertia[0]", &b->rotary[0])) !=
            MBS_OK ||
        (st = deck_positive(r, deck_item(r, v, 1), "section.rotary_inertia[1]", &b->rotary[1])) !=
            MBS_OK) {
      goto fail;
    }
  }
  /* the section constants and the stiffnesses and masses per length made of them must be
   * numbers the solver can resolve against each other: a rectangle of 1e-200 m has A = 0
   * (underflow, a singular Newton matrix), a shear factor of 1e300 an infinite energy. Each
   * is checked at the value that makes it so. */
  {
    const yaml_node_t *vgeo = vrect ? vrect : (vcirc ? vcirc : vexp);
    const yaml_node_t *vE = deck_map_get(&m, "E"), *vrho = deck_map_get(&m, "density");
    const yaml_node_t *vG = vg ? vg : vnu, *vk = deck_map_get(&m, "shear_factor");
    const yaml_node_t *vrot = deck_map_get(&m, "rotary_inertia");
    const struct {
      const char *what;
      double value;
      const yaml_node_t *at;
    } q[] = {
        {"the area A [m^2]", b->A, vgeo},
        {"the second moment I2 [m^4]", b->I2, vgeo},
        {"the second moment I3 [m^4]", b->I3, vgeo},
        {"the torsion constant J [m^4]", b->J, vgeo},
        {"the axial stiffness E A [N]", b->E * b->A, vE},
        {"the bending stiffness E I2 [N m^2]", b->E * b->I2, vE},
        {"the bending stiffness E I3 [N m^2]", b->E * b->I3, vE},
        {"the torsional stiffness G J [N m^2]", b->G * b->J, vG},
        {"the shear stiffness kappa G A [N]", b->shear_factor * b->G * b->A, vk ? vk : vG},
        {"the mass per length density A [kg/m]", b->density * b->A, vrho},
        {"the rotary inertia per length [kg m]", fmin(b->rotary[0], b->rotary[1]),
         vrot ? vrot : vrho},
        {"the rotary inertia per length [kg m]", fmax(b->rotary[0], b->rotary[1]),
         vrot ? vrot : vrho},
    };
    for (size_t k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
      if (!(q[k].value >= DECK_SECTION_MIN && q[k].value <= DECK_SECTION_MAX)) {
        st = deck_fail(r, q[k].at ? q[k].at : m.node,
                       "section: %s is %g, outside [%g, %g]: the solver cannot resolve it "
                       "against the beam's other terms",
                       q[k].what, q[k].value, DECK_SECTION_MIN, DECK_SECTION_MAX);
        goto fail;
      }
    }
    if (vk && !(b->shear_factor <= DECK_MAX_SHEAR_FACTOR)) {
      st = deck_fail(r, vk,
                     "section.shear_factor: %g is above %g: a shear stiffness that far above "
                     "the beam's other stiffnesses makes its Newton matrix singular in double "
                     "precision (a shear-rigid beam needs no more)",
                     b->shear_factor, DECK_MAX_SHEAR_FACTOR);
      goto fail;
    }
  }
  st = MBS_OK;
fail:
  deck_map_free(&m);
  return st;
}

/* a point of the beam's centreline: its squared distance from the origin below
 * DECK_MAX_SCALE (as the points of springs and distance joints), or the tangents and
 * lengths overflow */
static mbsStatus node_in_range(DeckReader *r, const yaml_node_t *n, const char *field,
                               const double x[3]) {
  if (!(dot3(x, x) <= DECK_MAX_SCALE)) {
    return deck_fail(r, n,
                     "%s: [%g, %g, %g] is too far from the origin (its squared distance "
                     "exceeds %g; the beam's length and tangents would overflow)",
                     field, x[0], x[1], x[2], DECK_MAX_SCALE);
  }
  return MBS_OK;
}

/* the initial motion: a rigid one (`velocity` of the point `about`, default the centre of the
 * node polygon's arc length, plus `angular_velocity`: v_k = v + w x (x_k - about) at every
 * node, the directors turning with w x d_i: a rigid body's velocity field, so the strains start
 * without rates), or `node_velocities` (every node's, the directors at rest); into b->vel */
static mbsStatus read_beam_motion(DeckReader *r, mbsDeckBeam *b, const DeckMap *m) {
  yaml_node_t *vv = deck_map_get(m, "velocity"), *vw = deck_map_get(m, "angular_velocity");
  yaml_node_t *va = deck_map_get(m, "about"), *vn = deck_map_get(m, "node_velocities");
  mbsStatus st;
  double about[3] = {0.0, 0.0, 0.0};

  b->vel = calloc((size_t)b->nnode * 3, sizeof(double));
  if (!b->vel) {
    return deck_nomem(r);
  }
  if (vn) {
    yaml_node_t *other = vv ? vv : vw ? vw : va;
    if (other) {
      return deck_fail(r, other,
                       "give node_velocities or a rigid motion (velocity, angular_velocity, "
                       "about), not both");
    }
    if (vn->type != YAML_SEQUENCE_NODE || deck_count(vn) != b->nnode) {
      return deck_fail(r, vn,
                       "node_velocities: expected a list of %d velocities [vx, vy, vz], one per "
                       "node, got %s",
                       b->nnode, vn->type == YAML_SEQUENCE_NODE ? "another count" : deck_kind(vn));
    }
    for (int k = 0; k < b->nnode; k++) {
      char f[48];
      snprintf(f, sizeof(f), "node_velocities[%d]", k);
      if ((st = deck_vec3(r, deck_item(r, vn, k), f, b->vel + 3 * k)) != MBS_OK) {
        return st;
      }
    }
    return MBS_OK;
  }
  if (vv && (st = deck_vec3(r, vv, "velocity", b->velocity)) != MBS_OK) {
    return st;
  }
  if (vw && (st = deck_vec3(r, vw, "angular_velocity", b->angular_velocity)) != MBS_OK) {
    return st;
  }
  if (va) {
    if (!vw) {
      return deck_fail(r, va, "about: the point of a rigid motion needs 'angular_velocity'");
    }
    if ((st = deck_vec3(r, va, "about", about)) != MBS_OK ||
        (st = node_in_range(r, va, "about", about)) != MBS_OK) {
      return st;
    }
  } else {
    /* the centre of the polygon's arc length (of the mass, for a uniform section) */
    double len = 0.0;
    for (int k = 1; k < b->nnode; k++) {
      const double *x0 = b->pos + 3 * (k - 1), *x1 = b->pos + 3 * k;
      double d[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]}, l = sqrt(dot3(d, d));
      for (int c = 0; c < 3; c++) {
        about[c] += 0.5 * l * (x0[c] + x1[c]);
      }
      len += l;
    }
    for (int c = 0; c < 3; c++) {
      about[c] /= len;
    }
  }
  const double *w = b->angular_velocity;
  for (int k = 0; k < b->nnode; k++) {
    const double *x = b->pos + 3 * k;
    double rr[3] = {x[0] - about[0], x[1] - about[1], x[2] - about[2]};
    double *v = b->vel + 3 * k;
    v[0] = b->velocity[0] + w[1] * rr[2] - w[2] * rr[1];
    v[1] = b->velocity[1] + w[2] * rr[0] - w[0] * rr[2];
    v[2] = b->velocity[2] + w[0] * rr[1] - w[1] * rr[0];
  }
  return MBS_OK;
}


/* the director frame of every node: d1 the tangent of the node polygon's interpolation
 * (averaged where two elements meet), d2 `up` made normal to d1, d3 = d1 x d2. up_node is
 * where messages point (the `up` entry, or the beam's) */
static mbsStatus directors(DeckReader *r, mbsDeckBeam *b, const double up_given[3], int has_up,
                           const yaml_node_t *up_node) {
  int o = b->order;
  double *t = calloc((size_t)b->nnode * 3, sizeof(double));
  if (!t) {
    return deck_nomem(r);
  }
  /* element tangents at its nodes from the Lagrange interpolation on xi in [-1, 1]:
   * order 1: x1 - x0; order 2 at xi = -1, 0, 1: -3x0 + 4x1 - x2, x2 - x0, x0 - 4x1 + 3x2 */
  static const double dN[2][3][3] = {{{-1, 1, 0}, {-1, 1, 0}, {0, 0, 0}},
                                     {{-3, 4, -1}, {-1, 0, 1}, {1, -4, 3}}};
  b->length = 0.0;
  for (int e = 0; e < b->nelem; e++) {
    for (int a = 0; a <= o; a++) {
      double d[3] = {0, 0, 0};
      for (int k = 0; k <= o; k++) {
        for (int c = 0; c < 3; c++) {
          d[c] += dN[o - 1][a][k] * b->pos[3 * (o * e + k) + c];
        }
      }
      double n = sqrt(dot3(d, d));
      for (int c = 0; c < 3; c++) {
        t[3 * (o * e + a) + c] += d[c] / n;
      }
    }
    /* arc length: 4-point Gauss over xi of |x'(xi)| (the chord for order 1) */
    static const double gx[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563,
                                 0.8611363115940526};
    static const double gw[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461,
                                 0.3478548451374538};
    for (int g = 0; g < 4; g++) {
      double xi = gx[g], dn[3], d[3] = {0, 0, 0};
      if (o == 1) {
        dn[0] = -0.5;
        dn[1] = 0.5;
        dn[2] = 0.0;
      } else {
        dn[0] = xi - 0.5;
        dn[1] = -2.0 * xi;
        dn[2] = xi + 0.5;
      }
      for (int k = 0; k <= o; k++) {
        for (int c = 0; c < 3; c++) {
          d[c] += dn[k] * b->pos[3 * (o * e + k) + c];
        }
      }
      b->length += gw[g] * sqrt(dot3(d, d));
    }
  }
  mbsStatus st = MBS_OK;
  for (int i = 0; i < b->nnode; i++) {
    double *ti = t + 3 * i, n = sqrt(dot3(ti, ti));
    if (!(n > 1e-9)) {
      st = deck_fail(r, up_node, "the beam turns back on itself at node %d (no tangent)", i);
      goto done;
    }
    for (int c = 0; c < 3; c++) {
      ti[c] /= n;
    }
  }
  /* the default up: the world axis least parallel to the tangent at node 0 (z, y, x on ties) */
  double up[3] = {0, 0, 0};
  if (has_up) {
    memcpy(up, up_given, sizeof(up));
  } else {
    int best = 2;
    for (int c = 1; c >= 0; c--) {
      if (fabs(t[c]) < fabs(t[best]) - 1e-12) {
        best = c;
      }
    }
    up[best] = 1.0;
  }
  for (int i = 0; i < b->nnode; i++) {
    const double *d1 = t + 3 * i;
    double d2[3], d3[3], s = dot3(up, d1);
    for (int c = 0; c < 3; c++) {
      d2[c] = up[c] - s * d1[c];
    }
    double n = sqrt(dot3(d2, d2));
    if (!(n > 1e-6)) {
      st = deck_fail(r, up_node,
                     "%s is parallel to the beam axis at node %d; give an `up` normal to the axis",
                     has_up ? "up" : "the default up (a world axis)", i);
      goto done;
    }
    for (int c = 0; c < 3; c++) {
      d2[c] /= n;
    }
    d3[0] = d1[1] * d2[2] - d1[2] * d2[1];
    d3[1] = d1[2] * d2[0] - d1[0] * d2[2];
    d3[2] = d1[0] * d2[1] - d1[1] * d2[0];
    double *R = b->R + 9 * i;
    for (int c = 0; c < 3; c++) {
      R[3 * c + 0] = d1[c];
      R[3 * c + 1] = d2[c];
      R[3 * c + 2] = d3[c];
    }
  }
done:
  free(t);
  return st;
}

/* the length of the parabola y = p x + q x^2 / 2 over [0, x] (y' = p + q x), closed form:
 * the integral of sqrt(1 + w^2) dw / q from w = p to p + q x */
static double parabola_arc(double p, double q, double x) {
  if (fabs(q) * x <= 1e-12 * (1.0 + fabs(p))) {
    return x * sqrt(1.0 + p * p);
  }
  double w0 = p, w1 = p + q * x;
  return (w1 * sqrt(1.0 + w1 * w1) + asinh(w1) - w0 * sqrt(1.0 + w0 * w0) - asinh(w0)) /
         (2.0 * q);
}

/* from/to with `length`: the nodes on the curve of that length hanging from x0 to x1 under
 * gravity (`sag: catenary`, the default, or `parabola`), at equal arc lengths. In the plane
 * of the chord and gravity, with x along the chord's horizontal part (span h) and y up (rise
 * v from x0 to x1): the catenary y = a (cosh((x - c) / a) - cosh(c / a)) has the length L
 * when sqrt(L^2 - v^2) = 2 a sinh(h / (2 a)), its lowest point at c = h / 2 - a atanh(v / L);
 * the parabola y = v x / h - 4 d x (h - x) / h^2 has the sag d its closed-form arc length
 * gives. Both by bisection (monotone in the unknown) to round-off */
static mbsStatus hanging_nodes(DeckReader *r, mbsDeckBeam *b, const mbsDeck *deck,
                               const double x0[3], const double x1[3], yaml_node_t *vlen,
                               yaml_node_t *vsag) {
  double L, g = sqrt(dot3(deck->gravity, deck->gravity)), u[3], D[3], e[3];
  mbsStatus st = deck_positive(r, vlen, "length", &L);
  if (st != MBS_OK) {
    return st;
  }
  int parabola = 0;
  if (vsag) {
    const char *w = deck_text(vsag);
    if (w && strcmp(w, "parabola") == 0) {
      parabola = 1;
    } else if (!w || strcmp(w, "catenary") != 0) {
      return deck_fail(r, vsag, "sag: expected catenary or parabola, got %s",
                       w ? w : deck_kind(vsag));
    }
  }
  if (!(g > 0.0)) {
    return deck_fail(r, vlen,
                     "length: a beam hanging between from and to sags along gravity, and the "
                     "deck has none (give `gravity`, or `nodes`)");
  }
  for (int c = 0; c < 3; c++) {
    u[c] = -deck->gravity[c] / g;
    D[c] = x1[c] - x0[c];
  }
  double v = dot3(D, u), chord = sqrt(dot3(D, D));
  for (int c = 0; c < 3; c++) {
    e[c] = D[c] - v * u[c];
  }
  double h = sqrt(dot3(e, e));
  if (!(h > 1e-9 * chord)) {
    return deck_fail(r, vlen,
                     "length: from and to lie on one vertical: there is no span to hang across "
                     "(give `nodes`)");
  }
  if (!(L > chord * (1.0 + 1e-12))) {
    return deck_fail(r, vlen,
                     "length: %g m is not longer than the distance between from and to (%g m): "
                     "a hanging beam is longer than its chord",
                     L, chord);
  }
  for (int c = 0; c < 3; c++) {
    e[c] /= h;
  }
  int n = b->nnode;
  if (!parabola) {
    /* sinh(z) / z = sqrt(L^2 - v^2) / h with z = h / (2 a), increasing in z */
    double ratio = sqrt(L * L - v * v) / h, lo = 0.0, hi = 300.0;
    if (!(ratio < sinh(hi) / hi)) {
      return deck_fail(r, vlen,
                       "length: %g m is too long for the span of %g m to hang as a catenary in "
                       "double precision",
                       L, h);
    }
    for (int it = 0; it < 200; it++) {
      double z = 0.5 * (lo + hi);
      if (sinh(z) / z < ratio) {
        lo = z;
      } else {
        hi = z;
      }
    }
    double a = h / (lo + hi), cx = 0.5 * h - a * atanh(v / L), s0 = sinh(-cx / a);
    for (int k = 0; k < n; k++) {
      double s = L * k / (n - 1), x = cx + a * asinh(s / a + s0);
      double y = a * (cosh((x - cx) / a) - cosh(cx / a));
      for (int c = 0; c < 3; c++) {
        b->pos[3 * k + c] = x0[c] + x * e[c] + y * u[c];
      }
    }
  } else {
    /* y' = p + q x with p = v / h - 4 d / h, q = 8 d / h^2; the length grows with d >= 0 */
    double lo = 0.0, hi = L;
    for (int it = 0; it < 200; it++) {
      double d = 0.5 * (lo + hi);
      if (parabola_arc(v / h - 4.0 * d / h, 8.0 * d / (h * h), h) < L) {
        lo = d;
      } else {
        hi = d;
      }
    }
    double d = 0.5 * (lo + hi), p = v / h - 4.0 * d / h, q = 8.0 * d / (h * h);
    for (int k = 0; k < n; k++) {
      double s = L * k / (n - 1), xl = 0.0, xh = h;
      for (int it = 0; it < 200; it++) {
        double x = 0.5 * (xl + xh);
        if (parabola_arc(p, q, x) < s) {
          xl = x;
        } else {
          xh = x;
        }
      }
      double x = 0.5 * (xl + xh), y = p * x + 0.5 * q * x * x;
      for (int c = 0; c < 3; c++) {
        b->pos[3 * k + c] = x0[c] + x * e[c] + y * u[c];
      }
    }
  }
  /* the ends exactly where the deck puts them */
  memcpy(b->pos, x0, 3 * sizeof(double));
  memcpy(b->pos + 3 * (n - 1), x1, 3 * sizeof(double));
  return MBS_OK;
}

static mbsStatus read_beam(DeckReader *r, mbsDeck *deck, DeckNames *names, int i,
                           yaml_node_t *node) {
  mbsDeckBeam *b = &deck->beams[i];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL;
  yaml_node_t *v, *vnodes, *vfrom, *vto, *vel;
  mbsStatus st;
  double up[3] = {0, 0, 0};
  int has_up = 0;

  deck_node_pos(node, &b->mark.line, &b->mark.col);
  b->order = 1;
  if ((st = deck_entry_open(r, node, "beams", i, "beam", beam_keys, NULL, b->name, &nn, &m)) !=
      MBS_OK) {
    return st;
  }
  /* names: unique among bodies and beams */
  if (strcmp(b->name, "ground") == 0) {
    st = deck_fail(r, nn, "the name 'ground' is reserved for the inertial frame");
    goto fail;
  }
  int first = deck_names_get(&r->body_names, b->name);
  if (first >= 0) {
    st = deck_fail(r, nn, "beam name '%s' is the name of a body (at %d:%d)", b->name,
                   deck->bodies[first].mark.line, deck->bodies[first].mark.col);
    goto fail;
  }
  if ((first = deck_names_get(names, b->name)) >= 0) {
    st = deck_fail(r, nn, "duplicate beam name '%s' (first at %d:%d)", b->name,
                   deck->beams[first].mark.line, deck->beams[first].mark.col);
    goto fail;
  }
  deck_names_put(names, b->name, i);

  if ((v = deck_map_get(&m, "order"))) {
    if ((st = deck_integer(r, v, "order", &b->order)) != MBS_OK) {
      goto fail;
    }
    if (b->order != 1 && b->order != 2) {
      st = deck_fail(r, v, "order must be 1 (two-node elements) or 2 (three-node elements), got %d",
                     b->order);
      goto fail;
    }
  }

  /* geometry: from/to with elements, or a polyline of nodes */
  vnodes = deck_map_get(&m, "nodes");
  vfrom = deck_map_get(&m, "from");
  vto = deck_map_get(&m, "to");
  vel = deck_map_get(&m, "elements");
  if (vnodes && (vfrom || vto)) {
    st = deck_fail(r, vnodes, "give either from/to or nodes, not both");
    goto fail;
  }
  v = deck_map_get(&m, "length") ? deck_map_get(&m, "length") : deck_map_get(&m, "sag");
  if (vnodes && v) {
    st = deck_fail(r, v, "length and sag shape a beam given by from and to; nodes place it "
                         "themselves");
    goto fail;
  }
  if (vel) {
    if ((st = deck_integer(r, vel, "elements", &b->nelem)) != MBS_OK) {
      goto fail;
    }
    if (b->nelem < 1 || b->nelem > DECK_MAX_BEAM_ELEMENTS) {
      st = deck_fail(r, vel, "elements must be in 1 .. %d (got %d)", DECK_MAX_BEAM_ELEMENTS,
                     b->nelem);
      goto fail;
    }
  }
  if (vnodes) {
    if (vnodes->type != YAML_SEQUENCE_NODE || deck_count(vnodes) < 2) {
      st = deck_fail(r, vnodes, "nodes: expected a list of at least 2 points [x, y, z]");
      goto fail;
    }
    int n = deck_count(vnodes);
    if ((n - 1) % b->order != 0) {
      st = deck_fail(r, vnodes,
                     "nodes: %d nodes do not make whole elements of order %d (order 2 needs an "
                     "odd count: the ends and the mid node of each element)",
                     n, b->order);
      goto fail;
    }
    if (vel && b->nelem != (n - 1) / b->order) {
      st = deck_fail(r, vel, "elements: %d nodes of order %d make %d elements, not %d", n, b->order,
                     (n - 1) / b->order, b->nelem);
      goto fail;
    }
    if ((n - 1) / b->order > DECK_MAX_BEAM_ELEMENTS) {
      st = deck_fail(r, vnodes, "nodes: %d nodes make %d elements; a beam has at most %d", n,
                     (n - 1) / b->order, DECK_MAX_BEAM_ELEMENTS);
      goto fail;
    }
    b->nelem = (n - 1) / b->order;
    b->nnode = n;
  } else {
    if (!vfrom || !vto) {
      st = deck_fail(r, m.node,
                     "missing required key '%s' (a beam is from/to with elements, "
                     "or a polyline of nodes)",
                     vfrom ? "to" : "from");
      goto fail;
    }
    if (!vel) {
      st = deck_fail(r, m.node, "missing required key 'elements'");
      goto fail;
    }
    b->nnode = b->order * b->nelem + 1;
  }
  b->pos = calloc((size_t)b->nnode * 3, sizeof(double));
  b->R = calloc((size_t)b->nnode * 9, sizeof(double));
  if (!b->pos || !b->R) {
    st = deck_nomem(r);
    goto fail;
  }
  if (vnodes) {
    for (int k = 0; k < b->nnode; k++) {
      char f[48];
      snprintf(f, sizeof(f), "nodes[%d]", k);
      if ((st = deck_vec3(r, deck_item(r, vnodes, k), f, b->pos + 3 * k)) != MBS_OK ||
          (st = node_in_range(r, deck_item(r, vnodes, k), f, b->pos + 3 * k)) != MBS_OK) {
        goto fail;
      }
      if (k > 0) {
        double d[3] = {b->pos[3 * k] - b->pos[3 * k - 3], b->pos[3 * k + 1] - b->pos[3 * k - 2],
                       b->pos[3 * k + 2] - b->pos[3 * k - 1]};
        double s = sqrt(dot3(b->pos + 3 * k, b->pos + 3 * k)) + 1.0;
        if (!(sqrt(dot3(d, d)) > 1e-12 * s)) {
          st =
              deck_fail(r, deck_item(r, vnodes, k), "nodes[%d] coincides with nodes[%d]", k, k - 1);
          goto fail;
        }
      }
    }
  } else {
    double x0[3], x1[3];
    if ((st = deck_vec3(r, vfrom, "from", x0)) != MBS_OK ||
        (st = deck_vec3(r, vto, "to", x1)) != MBS_OK ||
        (st = node_in_range(r, vfrom, "from", x0)) != MBS_OK ||
        (st = node_in_range(r, vto, "to", x1)) != MBS_OK) {
      goto fail;
    }
    double d[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
    if (!(sqrt(dot3(d, d)) > 1e-12 * (1.0 + sqrt(dot3(x0, x0))))) {
      st = deck_fail(r, vto, "to equals from: a beam needs a length");
      goto fail;
    }
    yaml_node_t *vlen = deck_map_get(&m, "length"), *vsag = deck_map_get(&m, "sag");
    if (vsag && !vlen) {
      st = deck_fail(r, vsag, "sag: the curve of a hanging beam needs its 'length'");
      goto fail;
    }
    if (vlen) {
      if ((st = hanging_nodes(r, b, deck, x0, x1, vlen, vsag)) != MBS_OK) {
        goto fail;
      }
    } else {
      for (int k = 0; k < b->nnode; k++) {
        double s = (double)k / (double)(b->nnode - 1);
        for (int c = 0; c < 3; c++) {
          b->pos[3 * k + c] = x0[c] + s * d[c];
        }
      }
    }
  }

  /* section axes */
  const yaml_node_t *up_node = m.node;
  if ((v = deck_map_get(&m, "up"))) {
    if ((st = deck_unit_vec3(r, v, "up", up)) != MBS_OK) {
      goto fail;
    }
    has_up = 1;
    up_node = v;
  }
  if ((st = directors(r, b, up, has_up, up_node)) != MBS_OK) {
    goto fail;
  }

  /* section */
  if (!(v = deck_map_get(&m, "section"))) {
    st = deck_fail(r, m.node, "missing required key 'section'");
    goto fail;
  }
  if ((st = read_section(r, b, v)) != MBS_OK) {
    goto fail;
  }
  if ((st = read_beam_motion(r, b, &m)) != MBS_OK) {
    goto fail;
  }
  /* the stiffnesses, the mass and the initial energy and momentum must stay far from
   * overflow (the solver sums and multiplies them further) */
  {
    double mass = b->density * b->A * b->length, v2 = 0.0;
    for (int k = 0; k < b->nnode; k++) {
      v2 = fmax(v2, dot3(b->vel + 3 * k, b->vel + 3 * k));
    }
    v2 += dot3(b->angular_velocity, b->angular_velocity) * b->length * b->length;
    double big[] = {b->E * b->A,
                    b->E * b->I2,
                    b->E * b->I3,
                    b->G * b->A,
                    b->G * b->J,
                    mass,
                    mass * v2,
                    mass * dot3(b->pos, b->pos),
                    fmax(b->rotary[0], b->rotary[1]) * b->length};
    for (size_t k = 0; k < sizeof(big) / sizeof(big[0]); k++) {
      if (!(big[k] < DECK_MAX_SCALE)) {
        st = deck_fail(r, deck_map_get(&m, "section"),
                       "the beam's stiffness, mass or initial energy exceeds %g: the solver "
                       "would overflow",
                       DECK_MAX_SCALE);
        goto fail;
      }
    }
  }
  if ((v = deck_map_get(&m, "damping"))) {
    if ((st = deck_number(r, v, "damping", &b->damping)) != MBS_OK) {
      goto fail;
    }
    if (!(b->damping >= 0.0)) {
      st = deck_fail(r, v, "damping must be >= 0 (got %g)", b->damping);
      goto fail;
    }
    if (!(b->damping <= DECK_MAX_BEAM_DAMPING)) {
      st = deck_fail(r, v,
                     "damping: %g s is above %g s: the damping factor is a time (the "
                     "stiffness-proportional damping of a mode of period T is about pi "
                     "damping / T), and one this large makes the Newton matrix singular",
                     b->damping, DECK_MAX_BEAM_DAMPING);
      goto fail;
    }
  }
  if ((v = deck_map_get(&m, "collision")) && (st = read_beam_collision(r, b, v)) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "planar"))) {
    if ((st = deck_read_planar(r, v, b->planar_normal, &b->planar_mark)) != MBS_OK ||
        (st = deck_beam_in_plane(r, v, b, b->planar_normal)) != MBS_OK) {
      goto fail;
    }
    /* the generated joints are named planar:NAME[i] (deck_planar_joints) */
    char jn[2 * MBS_NAME_MAX];
    if (snprintf(jn, sizeof(jn), "planar:%s[%d]", b->name, b->nnode - 1) >= MBS_NAME_MAX) {
      st = deck_fail(r, v,
                     "planar: the joint name '%s' is longer than %d characters; shorten the "
                     "beam's name",
                     jn, MBS_NAME_MAX - 1);
      goto fail;
    }
    b->planar = 1;
  }
  st = MBS_OK;
fail:
  deck_map_free(&m);
  return st;
}

mbsStatus deck_beam_in_plane(DeckReader *r, const yaml_node_t *at, const mbsDeckBeam *b,
                             const double n[3]) {
  /* the tolerance of the joints' check at t = 0, relative to the beam's extent */
  double scale = b->length;
  for (int k = 0; k < b->nnode; k++) {
    scale = fmax(scale, sqrt(dot3(b->pos + 3 * k, b->pos + 3 * k)));
  }
  for (int k = 1; k < b->nnode; k++) {
    double d[3] = {b->pos[3 * k] - b->pos[0], b->pos[3 * k + 1] - b->pos[1],
                   b->pos[3 * k + 2] - b->pos[2]};
    double off = dot3(d, n);
    if (!(fabs(off) <= 1e-9 * scale)) {
      return deck_fail(r, at,
                       "planar: node %d of beam '%s' lies %g m off the plane through node 0 "
                       "normal to [%g, %g, %g]: a planar beam's nodes lie in one plane",
                       k, b->name, off, n[0], n[1], n[2]);
    }
  }
  for (int k = 0; k < b->nnode; k++) {
    const double *v = b->vel + 3 * k;
    if (!(fabs(dot3(v, n)) <= 1e-12 * (1.0 + sqrt(dot3(v, v))))) {
      return deck_fail(r, at,
                       "planar: the beam's velocity [%g, %g, %g] (at node %d) leaves the plane "
                       "normal to [%g, %g, %g]",
                       v[0], v[1], v[2], k, n[0], n[1], n[2]);
    }
  }
  /* a rigid motion's rotation: about the normal only */
  const double *w = b->angular_velocity;
  double wn = dot3(w, n), w2 = dot3(w, w);
  if (!(w2 - wn * wn <= 1e-24 * (1.0 + w2))) {
    return deck_fail(r, at,
                     "planar: the beam's angular_velocity [%g, %g, %g] turns it out of the plane "
                     "normal to [%g, %g, %g] (only a rotation about the normal stays in it)",
                     w[0], w[1], w[2], n[0], n[1], n[2]);
  }
  return MBS_OK;
}

mbsStatus deck_read_beams(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
  mbsStatus st = MBS_OK;
  r->ctx[0] = '\0';
  if (!node || deck_is_null(node)) {
    return MBS_OK;
  }
  if (node->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, node, "beams: expected a list of beams, got %s", deck_kind(node));
  }
  int n = deck_count(node);
  if (n == 0) {
    return MBS_OK;
  }
  if (!(deck->beams = calloc((size_t)n, sizeof(*deck->beams))) ||
      !deck_names_init(&r->beam_names, n)) {
    return deck_nomem(r);
  }
  for (int i = 0; i < n; i++) {
    deck->nbeam = i + 1; /* counted before it is read, so that mbs_deck_free releases it */
    if ((st = read_beam(r, deck, &r->beam_names, i, deck_item(r, node, i))) != MBS_OK) {
      return st;
    }
    deck->beams[i].node0 = deck->nbeam_node;
    if (deck->beams[i].nnode > INT_MAX / 16 - deck->nbeam_node) {
      return deck_fail(r, deck_item(r, node, i), "too many beam nodes");
    }
    deck->nbeam_node += deck->beams[i].nnode;
  }
  r->ctx[0] = '\0';
  return MBS_OK;
}

int deck_beam_ref(DeckReader *r, const yaml_node_t *n, const char *s, int *out, mbsStatus *st) {
  /* NAME[i]: i from 0, or negative from the end */
  const char *open = strchr(s, '[');
  size_t len = strlen(s);
  if (!open || len < 3 || s[len - 1] != ']') {
    return 0;
  }
  char name[MBS_NAME_MAX];
  size_t nl = (size_t)(open - s);
  if (nl == 0 || nl >= sizeof(name)) {
    *st = deck_fail(r, n, "'%.80s': expected a beam node NAME[i]", s);
    return 1;
  }
  memcpy(name, s, nl);
  name[nl] = '\0';
  const char *p = open + 1;
  char *end = NULL;
  long i = strtol(p, &end, 10);
  if (end == p || end != s + len - 1 || strchr(p, '[')) {
    *st = deck_fail(r, n, "'%.80s': the index of a beam node is an integer, as in %s[0] or %s[-1]",
                    s, name, name);
    return 1;
  }
  int k = deck_names_get(&r->beam_names, name);
  if (k < 0) {
    *st = deck_names_get(&r->body_names, name) >= 0
              ? deck_fail(r, n, "'%.80s': '%s' is a body, not a beam; name it '%s'", s, name, name)
              : deck_fail(r, n, "'%.80s': beam '%s' is not defined", s, name);
    return 1;
  }
  const mbsDeckBeam *b = &r->deck->beams[k];
  if (i < -(long)b->nnode || i >= (long)b->nnode) {
    *st = deck_fail(r, n,
                    "'%.80s': beam '%s' has %d nodes, so its index is in 0 .. %d (or -%d .. "
                    "-1 from the end)",
                    s, name, b->nnode, b->nnode - 1, b->nnode);
    return 1;
  }
  if (i < 0) {
    i += b->nnode;
  }
  *out = r->deck->nbody + b->node0 + (int)i;
  *st = MBS_OK;
  return 1;
}

void deck_ref_pose(const mbsDeck *deck, int ref, double pos[3], double R[9]) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int node = 0, k = mbs_deck_ref_beam(deck, ref, &node);
  if (ref < 0) {
    memset(pos, 0, 3 * sizeof(double));
    memcpy(R, I3, sizeof(I3));
  } else if (k < 0) {
    memcpy(pos, deck->bodies[ref].position, 3 * sizeof(double));
    memcpy(R, deck->bodies[ref].directors, 9 * sizeof(double));
  } else {
    memcpy(pos, deck->beams[k].pos + 3 * node, 3 * sizeof(double));
    memcpy(R, deck->beams[k].R + 9 * node, 9 * sizeof(double));
  }
}
