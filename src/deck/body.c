/* body.c: one entry of `bodies:` -- a rigid body or a point mass. Mass properties are
 * normalised here (inertia, euler_tensor or shape + density all become mass + inertia and
 * are checked through the Euler tensor), and the orientation (directors, axis + angle,
 * quaternion) becomes the director matrix R whose column i is d_i in world coordinates. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "deck/deck_internal.h"
#include "util/eig3.h"

#define PI 3.14159265358979323846

/* relative tolerance of the inertia checks and absolute one of the director checks */
#define INERTIA_RTOL 1e-12
#define DIRECTOR_TOL 1e-9

static const char *const body_keys[] = {"name",
                                        "type",
                                        "mass",
                                        "inertia",
                                        "euler_tensor",
                                        "shape",
                                        "density",
                                        "position",
                                        "reference_point",
                                        "orientation",
                                        "velocity",
                                        "angular_velocity",
                                        "fixed",
                                        "relative_to",
                                        "collision",
                                        NULL};

/* keys a point mass does not take */
static const char *const point_rejects[] = {
    "inertia",     "euler_tensor",     "shape",           "density",
    "orientation", "angular_velocity", "reference_point", NULL};

/* ---------------------------------------------------------------------------------------- */
/* mass properties */


/* inertia I and Euler tensor E = tr(I)/2 * 1 - I (E^ij = ∫ θi θj dm, seed 000 eq. 14) say
 * the same thing: E must be positive semi-definite, which for I means I is positive
 * semi-definite and its principal moments satisfy the triangle inequalities (a thin plate
 * with I3 = I1 + I2 has E33 = 0 and is valid). A rigid body needs at least two nonzero
 * eigenvalues of E: with two zeros it is a rod or a point, whose rotation is undefined. */
static mbsStatus check_inertia(DeckReader *r, const yaml_node_t *at, int from_euler,
                               const double I[9]) {
  double lam[3], e[3];
  mbs_sym3_eigenvalues(I, lam);
  double scale = fmax(fabs(lam[0]), fabs(lam[2]));
  double tol = INERTIA_RTOL * scale;

  if (scale == 0.0) {
    return deck_fail(r, at, "%s is all zero", from_euler ? "euler_tensor" : "inertia");
  }
  if (!isfinite(scale)) {
    return deck_fail(r, at, "%s is not finite", from_euler ? "euler_tensor" : "inertia");
  }

  /* eigenvalues of E, ascending: e_i = tr(I)/2 - lam_i */
  double half = 0.5 * (lam[0] + lam[1] + lam[2]);
  e[0] = half - lam[2];
  e[1] = half - lam[1];
  e[2] = half - lam[0];
  if (from_euler) {
    if (e[0] < -tol) {
      return deck_fail(r, at, "euler_tensor is not positive semi-definite (eigenvalues %g, %g, %g)",
                       e[0], e[1], e[2]);
    }
  } else {
    if (lam[0] < -tol) {
      return deck_fail(r, at,
                       "inertia is not positive semi-definite (principal moments %g, %g, %g)",
                       lam[0], lam[1], lam[2]);
    }
    if (e[0] < -tol) {
      return deck_fail(r, at,
                       "inertia violates the triangle inequality: principal moments %g, %g, %g "
                       "(each must be <= the sum of the other two)",
                       lam[0], lam[1], lam[2]);
    }
  }
  if (e[1] <= tol) {
    return deck_fail(r, at,
                     "inertia is degenerate: a rigid body needs at least two nonzero "
                     "Euler-tensor eigenvalues (got %g, %g, %g); zero inertia about an axis "
                     "means all mass lies on that axis (a thin rod), whose spin about it is "
                     "undefined: give the rod a small inertia about its axis, or model it as "
                     "point masses with a distance joint",
                     e[0], e[1], e[2]);
  }
  return MBS_OK;
}

/* a symmetric 3x3 from [a, b, c] or rows; symmetrised exactly once checked */
static mbsStatus sym_matrix(DeckReader *r, yaml_node_t *n, const char *field, double M[9]) {
  mbsStatus st = deck_mat3(r, n, field, 1, M);
  if (st != MBS_OK) {
    return st;
  }
  double big = 0.0;
  for (int k = 0; k < 9; k++) {
    big = fmax(big, fabs(M[k]));
  }
  for (int i = 0; i < 3; i++) {
    for (int j = i + 1; j < 3; j++) {
      if (fabs(M[3 * i + j] - M[3 * j + i]) > INERTIA_RTOL * big) {
        return deck_fail(r, n, "%s must be symmetric (%s[%d][%d] = %g but %s[%d][%d] = %g)", field,
                         field, i, j, M[3 * i + j], field, j, i, M[3 * j + i]);
      }
      M[3 * i + j] = M[3 * j + i] = 0.5 * (M[3 * i + j] + M[3 * j + i]);
    }
  }
  return MBS_OK;
}

/* shape + density, or shape + mass (the shape's inertia scaled to the mass: a uniform
 * density mass / volume) -> mass, inertia (about the centre, body axes; cylinder axis = d3);
 * exactly one of density and given_mass is non-NULL */
static mbsStatus shape_mass(DeckReader *r, yaml_node_t *shape, yaml_node_t *density,
                            yaml_node_t *given_mass, mbsDeckBody *b) {
  DeckMap m = {0};
  DeckMap cyl = {0};
  double rho = 1.0, mass = 0, I1 = 0, I2 = 0, I3 = 0, want = 0.0;
  char where[256];
  mbsStatus st = density ? deck_positive(r, density, "density", &rho)
                         : deck_positive(r, given_mass, "mass", &want);
  static const char *const kinds[] = {"box", "sphere", "cylinder", NULL};
  static const char *const cyl_keys[] = {"radius", "length", NULL};

  if (st != MBS_OK) {
    return st;
  }
  if (shape->type != YAML_MAPPING_NODE) {
    return deck_fail(r, shape,
                     "shape: expected a mapping {box: [a, b, c]}, {sphere: r} or "
                     "{cylinder: {radius: r, length: l}}, got %s",
                     deck_kind(shape));
  }
  if ((st = deck_map_flatten(r, shape, &m)) != MBS_OK) {
    goto fail;
  }
  snprintf(where, sizeof(where), "%s shape", r->ctx);
  if ((st = deck_check_keys(r, &m, where, kinds, NULL)) != MBS_OK) {
    goto fail;
  }
  if (m.n != 1) {
    st = deck_fail(r, shape, "shape: give exactly one of box, sphere, cylinder");
    goto fail;
  }

  const char *kind = deck_text(m.kv[0].key);
  yaml_node_t *v = m.kv[0].value;
  snprintf(b->shape_kind, sizeof(b->shape_kind), "%s", kind);
  b->has_shape = 1;
  if (strcmp(kind, "box") == 0) {
    /* box a x b x c: I1 = m (b^2 + c^2) / 12, ... */
    double *s = b->shape_size;
    if ((st = deck_vec3(r, v, "shape.box", s)) != MBS_OK) {
      goto fail;
    }
    if (!(s[0] > 0 && s[1] > 0 && s[2] > 0)) {
      st = deck_fail(r, v, "shape.box: sizes must be > 0 (got %g, %g, %g)", s[0], s[1], s[2]);
      goto fail;
    }
    mass = rho * s[0] * s[1] * s[2];
    I1 = mass * (s[1] * s[1] + s[2] * s[2]) / 12.0;
    I2 = mass * (s[0] * s[0] + s[2] * s[2]) / 12.0;
    I3 = mass * (s[0] * s[0] + s[1] * s[1]) / 12.0;
  } else if (strcmp(kind, "sphere") == 0) {
    /* solid sphere: I = 2/5 m r^2 */
    double rad;
    if ((st = deck_positive(r, v, "shape.sphere", &rad)) != MBS_OK) {
      goto fail;
    }
    b->shape_size[0] = rad;
    mass = rho * 4.0 / 3.0 * PI * rad * rad * rad;
    I1 = I2 = I3 = 0.4 * mass * rad * rad;
  } else {
    /* solid cylinder along d3: I3 = m r^2 / 2, I1 = I2 = m (3 r^2 + l^2) / 12 */
    double rad, len;
    if (v->type != YAML_MAPPING_NODE) {
      st = deck_fail(r, v, "shape.cylinder: expected a mapping {radius: r, length: l}, got %s",
                     deck_kind(v));
      goto fail;
    }
    if ((st = deck_map_flatten(r, v, &cyl)) != MBS_OK) {
      goto fail;
    }
    snprintf(where, sizeof(where), "%s shape.cylinder", r->ctx);
    if ((st = deck_check_keys(r, &cyl, where, cyl_keys, NULL)) != MBS_OK) {
      goto fail;
    }
    if (!deck_map_get(&cyl, "radius") || !deck_map_get(&cyl, "length")) {
      st = deck_fail(r, v, "shape.cylinder: needs radius and length");
      goto fail;
    }
    if ((st = deck_positive(r, deck_map_get(&cyl, "radius"), "shape.cylinder.radius", &rad)) !=
            MBS_OK ||
        (st = deck_positive(r, deck_map_get(&cyl, "length"), "shape.cylinder.length", &len)) !=
            MBS_OK) {
      goto fail;
    }
    b->shape_size[0] = rad;
    b->shape_size[1] = len;
    mass = rho * PI * rad * rad * len;
    I3 = 0.5 * mass * rad * rad;
    I1 = I2 = mass * (3.0 * rad * rad + len * len) / 12.0;
  }

  /* extreme sizes can still overflow or underflow */
  if (!(mass > 0) || !isfinite(mass)) {
    st = deck_fail(r, shape, "shape and density give the mass %g", mass);
    goto fail;
  }
  if (given_mass) { /* mass at unit density so far: scale to the given mass */
    double f = want / mass;
    I1 *= f;
    I2 *= f;
    I3 *= f;
    mass = want;
  }
  b->mass = mass;
  memset(b->inertia, 0, sizeof(b->inertia));
  b->inertia[0] = I1;
  b->inertia[4] = I2;
  b->inertia[8] = I3;
  st = check_inertia(r, shape, 0, b->inertia);

fail:
  deck_map_free(&cyl);
  deck_map_free(&m);
  return st;
}

/* exactly one of mass + inertia, mass + euler_tensor, shape + density, shape + mass; a shape
 * beside mass and inertia (or euler_tensor) is geometry only */
static mbsStatus rigid_mass(DeckReader *r, const DeckMap *m, mbsDeckBody *b) {
  const DeckKeyValue *mass = deck_map_find(m, "mass"), *in = deck_map_find(m, "inertia");
  const DeckKeyValue *eu = deck_map_find(m, "euler_tensor"), *sh = deck_map_find(m, "shape");
  const DeckKeyValue *de = deck_map_find(m, "density");
  double M[9];
  mbsStatus st;

  if (sh) {
    const DeckKeyValue *extra = mass ? mass : in ? in : eu;
    if (de && extra) {
      return deck_fail(r, extra->key,
                       "shape with density gives the mass and inertia; not both '%s' and "
                       "'density' (or give shape with mass: its inertia scaled to the mass)",
                       deck_text(extra->key));
    }
    if (!de && !mass) {
      return deck_fail(r, (in ? in : eu ? eu : sh)->key,
                       in || eu ? "%s needs 'mass'" : "shape needs 'density' or 'mass'",
                       deck_text((in ? in : eu ? eu : sh)->key));
    }
    st = shape_mass(r, sh->value, de ? de->value : NULL, de ? NULL : mass->value, b);
    if (st != MBS_OK || (!in && !eu)) {
      return st;
    }
    /* mass and inertia given beside the shape: those hold, the shape is geometry */
  }
  if (de) {
    return deck_fail(r, de->key, "density needs a 'shape'");
  }
  if (!mass) {
    return deck_fail(r, m->node, "missing required key 'mass' (or give shape with density)");
  }
  if (!in && !eu) {
    return deck_fail(r, m->node,
                     "missing required key 'inertia' (or 'euler_tensor', or shape with density)");
  }
  if (in && eu) {
    return deck_fail(r, eu->key, "give inertia or euler_tensor, not both");
  }
  if ((st = deck_positive(r, mass->value, "mass", &b->mass)) != MBS_OK) {
    return st;
  }

  /* euler_tensor E -> inertia I = tr(E) * 1 - E */
  if (eu) {
    if ((st = sym_matrix(r, eu->value, "euler_tensor", M)) != MBS_OK) {
      return st;
    }
    double tr = M[0] + M[4] + M[8];
    for (int k = 0; k < 9; k++) {
      b->inertia[k] = -M[k];
    }
    b->inertia[0] += tr;
    b->inertia[4] += tr;
    b->inertia[8] += tr;
    return check_inertia(r, eu->value, 1, b->inertia);
  }
  if ((st = sym_matrix(r, in->value, "inertia", b->inertia)) != MBS_OK) {
    return st;
  }
  return check_inertia(r, in->value, 0, b->inertia);
}

/* ---------------------------------------------------------------------------------------- */
/* orientation */

/* directors given as rows d1, d2, d3: orthonormal to DIRECTOR_TOL and right-handed */
static mbsStatus directors(DeckReader *r, yaml_node_t *n, double R[9]) {
  double D[9], worst = 0;
  int wi = 0, wj = 0;
  mbsStatus st = deck_mat3(r, n, "orientation.directors", 0, D);
  if (st != MBS_OK) {
    return st;
  }
  for (int i = 0; i < 3; i++) {
    for (int j = i; j < 3; j++) {
      double dot = D[3 * i] * D[3 * j] + D[3 * i + 1] * D[3 * j + 1] + D[3 * i + 2] * D[3 * j + 2];
      double dev = fabs(dot - (i == j ? 1.0 : 0.0));
      if (dev > worst) {
        worst = dev;
        wi = i;
        wj = j;
      }
    }
  }
  if (worst > DIRECTOR_TOL) {
    return deck_fail(r, n,
                     "orientation.directors are not orthonormal (d%d . d%d is off by %.3g; "
                     "tolerance %g)",
                     wi + 1, wj + 1, worst, DIRECTOR_TOL);
  }
  double det = D[0] * (D[4] * D[8] - D[5] * D[7]) - D[1] * (D[3] * D[8] - D[5] * D[6]) +
               D[2] * (D[3] * D[7] - D[4] * D[6]);
  if (det < 0) {
    return deck_fail(r, n, "orientation.directors are not right-handed (d1 x d2 . d3 = %g)", det);
  }

  /* column i of R is d_i: R[3 r + i] = (d_i)_r */
  for (int row = 0; row < 3; row++) {
    for (int i = 0; i < 3; i++) {
      R[3 * row + i] = D[3 * i + row];
    }
  }
  return MBS_OK;
}

/* rotation by angle about the unit axis k (Rodrigues): R = cos 1 + sin [k]x + (1 - cos) k k^T */
static void axis_angle(const double k[3], double angle, double R[9]) {
  double c = cos(angle), s = sin(angle), v = 1.0 - c;
  R[0] = c + v * k[0] * k[0];
  R[1] = v * k[0] * k[1] - s * k[2];
  R[2] = v * k[0] * k[2] + s * k[1];
  R[3] = v * k[1] * k[0] + s * k[2];
  R[4] = c + v * k[1] * k[1];
  R[5] = v * k[1] * k[2] - s * k[0];
  R[6] = v * k[2] * k[0] - s * k[1];
  R[7] = v * k[2] * k[1] + s * k[0];
  R[8] = c + v * k[2] * k[2];
}

/* unit quaternion [w, x, y, z] -> rotation matrix */
static mbsStatus quaternion(DeckReader *r, yaml_node_t *n, double R[9]) {
  double q[4];
  if (n->type != YAML_SEQUENCE_NODE ||
      n->data.sequence.items.top - n->data.sequence.items.start != 4) {
    return deck_fail(r, n, "orientation.quaternion: expected [w, x, y, z], got %s", deck_kind(n));
  }
  for (int k = 0; k < 4; k++) {
    char f[64];
    snprintf(f, sizeof(f), "orientation.quaternion[%d]", k);
    yaml_node_t *it = yaml_document_get_node(r->doc, n->data.sequence.items.start[k]);
    mbsStatus st = deck_number(r, it, f, &q[k]);
    if (st != MBS_OK) {
      return st;
    }
  }
  double len = deck_norm(q, 4);
  if (!(len > 0) || !isfinite(len)) {
    return deck_fail(r, n, "orientation.quaternion must be nonzero");
  }
  double w = q[0] / len, x = q[1] / len, y = q[2] / len, z = q[3] / len;
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
  return MBS_OK;
}

mbsStatus deck_orientation(DeckReader *r, yaml_node_t *n, double R[9]) {
  static const char *const keys[] = {"directors", "axis", "angle", "angle_deg", "quaternion", NULL};
  DeckMap m = {0};
  char where[256];
  mbsStatus st;

  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n,
                     "orientation: expected a mapping with one of directors, axis + angle, "
                     "axis + angle_deg, quaternion; got %s",
                     deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK) {
    return st;
  }
  snprintf(where, sizeof(where), "%s orientation", r->ctx);
  if ((st = deck_check_keys(r, &m, where, keys, NULL)) != MBS_OK) {
    goto fail;
  }

  /* exactly one form */
  yaml_node_t *dn = deck_map_get(&m, "directors"), *qn = deck_map_get(&m, "quaternion");
  yaml_node_t *an = deck_map_get(&m, "axis"), *g = deck_map_get(&m, "angle");
  yaml_node_t *gd = deck_map_get(&m, "angle_deg");
  int nform = (dn != NULL) + (qn != NULL) + (an || g || gd);
  if (nform != 1) {
    st = deck_fail(r, n,
                   "orientation: give exactly one of directors, axis with angle "
                   "(or angle_deg), quaternion");
    goto fail;
  }
  if (dn) {
    st = directors(r, dn, R);
  } else if (qn) {
    st = quaternion(r, qn, R);
  } else {
    double k[3], angle;
    if (!an) {
      st = deck_fail(r, g ? g : gd, "orientation: %s needs an axis", g ? "angle" : "angle_deg");
    } else if (!g && !gd) {
      st = deck_fail(r, an, "orientation: axis needs angle (radians) or angle_deg");
    } else if (g && gd) {
      st = deck_fail(r, gd, "orientation: give angle or angle_deg, not both");
    } else if ((st = deck_unit_vec3(r, an, "orientation.axis", k)) == MBS_OK &&
               (st = deck_number(r, g ? g : gd, g ? "orientation.angle" : "orientation.angle_deg",
                                 &angle)) == MBS_OK) {
      /* degrees scaled by pi/180 as one factor: angle * PI overflows for 1e308 */
      double rad = g ? angle : angle * (PI / 180.0);
      if (!(fabs(rad) <= DECK_MAX_ANGLE)) {
        st = deck_fail(r, g ? g : gd,
                       "orientation.%s: %g is more than %g radians (%g turns) from zero; round-off "
                       "leaves no digits for the fraction of a turn",
                       g ? "angle" : "angle_deg", angle, DECK_MAX_ANGLE,
                       DECK_MAX_ANGLE / (2 * PI));
      } else {
        if (g) {
          deck_warn_turn(r, g, "orientation.angle", angle, "angle_deg", angle);
        }
        axis_angle(k, rad, R);
      }
    }
  }

fail:
  deck_map_free(&m);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* the body */

/* the initial energy, momenta and Steiner term of a body, bounded by DECK_MAX_SCALE, each
 * product formed so that it overflows only when the true value does; a failure points at the
 * value that makes the product large */
static mbsStatus check_scale(DeckReader *r, const DeckMap *m, const mbsDeckBody *b,
                             const double gravity[3]) {
  double x = deck_norm(b->position, 3), v = deck_norm(b->velocity, 3);
  double w = deck_norm(b->angular_velocity, 3), g = deck_norm(gravity, 3), imax = 0;
  for (int k = 0; k < 9; k++) {
    imax = fmax(imax, fabs(b->inertia[k]));
  }
  imax *= 3; /* bounds the largest principal moment */
  double mv = b->mass * v, iw = imax * w;
  struct {
    double value;
    const char *key, *what;
  } c[] = {
      {0.5 * mv * v, "velocity", "kinetic energy m |v|^2 / 2"},
      {mv, "velocity", "momentum m |v|"},
      {0.5 * iw * w, "angular_velocity", "rotational kinetic energy"},
      {iw, "angular_velocity", "angular momentum"},
      {x * mv, "position", "angular momentum |x| m |v| about the origin"},
      {b->mass * g * x, "position", "potential energy m |g| |x|"},
      {0.5 * mv * v + 0.5 * iw * w, "velocity", "kinetic energy"},
  };
  for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
    if (!(c[k].value <= DECK_MAX_SCALE)) {
      yaml_node_t *at = deck_map_get(m, c[k].key);
      return deck_fail(r, at ? at : m->node,
                       "%s: the body's initial %s is larger than %g (it would overflow in the "
                       "solver)",
                       c[k].key, c[k].what, DECK_MAX_SCALE);
    }
  }
  if (b->type == MBS_BODY_RIGID) {
    /* the Euler tensor about the reference point holds m r r^T (seed 000 eq. 14) */
    double rn = deck_norm(b->reference_point, 3);
    yaml_node_t *at = deck_map_get(m, "reference_point");
    if (!(b->mass * rn * rn <= DECK_MAX_SCALE) && at) {
      return deck_fail(r, at,
                       "reference_point: m |reference_point|^2 is larger than %g (it would "
                       "overflow in the mass matrix)",
                       DECK_MAX_SCALE);
    }
  }
  return MBS_OK;
}

/* the last checks of a body's mapping m (its scale against gravity) and its contact geometry
 * (`collision`, or by default the shape) */
static mbsStatus body_finish(DeckReader *r, DeckMap *m, mbsDeckBody *b, const double gravity[3]) {
  mbsStatus st = check_scale(r, m, b, gravity);
  return st != MBS_OK ? st : deck_read_collision(r, b, deck_map_get(m, "collision"));
}

/* the end of a body's reader: on failure its shapes are released here (the body is not
 * counted in deck->nbody yet), and the mapping m always; returns st */
static mbsStatus body_release(mbsDeckBody *b, DeckMap *m, mbsStatus st) {
  if (st != MBS_OK) {
    deck_free_shapes(b->collision, b->ncollision);
    b->collision = NULL;
    b->ncollision = 0;
  }
  deck_map_free(m);
  return st;
}

static mbsStatus opt_vec3(DeckReader *r, const DeckMap *m, const char *key, double v[3]) {
  yaml_node_t *n = deck_map_get(m, key);
  return n ? deck_vec3(r, n, key, v) : MBS_OK;
}

mbsStatus deck_read_body(DeckReader *r, mbsDeck *deck, int i, yaml_node_t *node) {
  mbsDeckBody *b = &deck->bodies[i];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL;
  yaml_node_t *v;
  int t;
  mbsStatus st;

  /* defaults: a rigid body at rest with identity directors */
  b->type = MBS_BODY_RIGID;
  b->directors[0] = b->directors[4] = b->directors[8] = 1.0;
  deck_node_pos(node, &b->mark.line, &b->mark.col);

  if ((st = deck_entry_open(r, node, "bodies", i, "body", body_keys, NULL, b->name, &nn, &m)) !=
      MBS_OK) {
    return st;
  }

  /* names: unique, and "ground" is the inertial frame */
  if (strcmp(b->name, "ground") == 0) {
    st = deck_fail(r, nn, "the name 'ground' is reserved for the inertial frame");
    goto fail;
  }
  int first = deck_names_get(&r->body_names, b->name);
  if (first >= 0) {
    st = deck_fail(r, nn, "duplicate body name '%s' (first at %d:%d)", b->name,
                   deck->bodies[first].mark.line, deck->bodies[first].mark.col);
    goto fail;
  }
  deck_names_put(&r->body_names, b->name, i);

  if ((v = deck_map_get(&m, "type"))) {
    if ((st = deck_word(r, v, "type", "body type", mbs_body_type_words, MBS_BODY_TYPE_COUNT, &t)) !=
        MBS_OK) {
      goto fail;
    }
    b->type = (mbsBodyType)t;
  }

  /* mass properties */
  if (b->type == MBS_BODY_POINT) {
    for (int k = 0; point_rejects[k]; k++) {
      const DeckKeyValue *kv = deck_map_find(&m, point_rejects[k]);
      if (kv) {
        st = deck_fail(r, kv->key, "a point mass takes no '%s'", point_rejects[k]);
        goto fail;
      }
    }
    if (!(v = deck_map_get(&m, "mass"))) {
      st = deck_fail(r, m.node, "missing required key 'mass'");
      goto fail;
    }
    if ((st = deck_positive(r, v, "mass", &b->mass)) != MBS_OK) {
      goto fail;
    }
  } else if ((st = rigid_mass(r, &m, b)) != MBS_OK) {
    goto fail;
  }

  /* initial state */
  if (!(v = deck_map_get(&m, "position"))) {
    st = deck_fail(r, m.node, "missing required key 'position'");
    goto fail;
  }
  if ((st = deck_vec3(r, v, "position", b->position)) != MBS_OK ||
      (st = opt_vec3(r, &m, "reference_point", b->reference_point)) != MBS_OK ||
      (st = opt_vec3(r, &m, "velocity", b->velocity)) != MBS_OK ||
      (st = opt_vec3(r, &m, "angular_velocity", b->angular_velocity)) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "orientation")) &&
      (st = deck_orientation(r, v, b->directors)) != MBS_OK) {
    goto fail;
  }
  /* relative_to: position and orientation given in the frame of a body above (its centre of
   * mass and directors at t = 0): x = x_ref + R_ref x', R = R_ref R' */
  if ((v = deck_map_get(&m, "relative_to"))) {
    const char *ref = deck_text(v);
    int j = ref ? deck_names_get(&r->body_names, ref) : -1;
    if (!ref || deck_is_null(v)) {
      st = deck_fail(r, v, "relative_to: expected a body name, got %s", deck_kind(v));
      goto fail;
    }
    if (strcmp(ref, "ground") != 0) {
      if (j < 0 || j >= i) {
        st = deck_fail(r, v,
                       "relative_to: '%.64s' is not a body defined above '%s' (a body is "
                       "placed relative to one before it in the list)",
                       ref, b->name);
        goto fail;
      }
      const mbsDeckBody *rb = &deck->bodies[j];
      double x[3], R[9];
      for (int a = 0; a < 3; a++) {
        x[a] = rb->position[a];
        for (int k = 0; k < 3; k++) {
          x[a] += rb->directors[3 * a + k] * b->position[k];
          double rr = 0.0;
          for (int l = 0; l < 3; l++) {
            rr += rb->directors[3 * a + l] * b->directors[3 * l + k];
          }
          R[3 * a + k] = rr;
        }
      }
      memcpy(b->position, x, sizeof(x));
      memcpy(b->directors, R, sizeof(R));
    }
  }
  if ((v = deck_map_get(&m, "fixed")) && (st = deck_bool(r, v, "fixed", &b->fixed)) != MBS_OK) {
    goto fail;
  }
  st = body_finish(r, &m, b, deck->gravity);

fail:
  return body_release(b, &m, st);
}

/* ---------------------------------------------------------------------------------------- */
/* a chain link's body (chains.c): its mass properties, centre of mass and contact geometry
 * from the row's `body:` mapping; the pose R (its DH frame) and the frame origin are the
 * chain's, the centre of mass is at origin + R center_of_mass */

mbsStatus deck_read_link_body(DeckReader *r, const mbsDeck *deck, mbsDeckBody *b,
                              yaml_node_t *node, const double origin[3], const double R[9]) {
  static const char *const link_keys[] = {"mass",  "inertia",        "euler_tensor", "shape",
                                          "density", "center_of_mass", "collision",    NULL};
  DeckMap m = {0};
  char where[256];
  double c[3] = {0, 0, 0};
  mbsStatus st;

  b->type = MBS_BODY_RIGID;
  deck_node_pos(node, &b->mark.line, &b->mark.col);
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node,
                     "body: expected a mapping {mass, inertia} or {mass, shape} (the link's "
                     "mass properties), got %s",
                     deck_kind(node));
  }
  if ((st = deck_map_flatten(r, node, &m)) != MBS_OK) {
    return st;
  }
  snprintf(where, sizeof(where), "%s body", r->ctx);
  if ((st = deck_check_keys(r, &m, where, link_keys, NULL)) != MBS_OK ||
      (st = rigid_mass(r, &m, b)) != MBS_OK ||
      (st = opt_vec3(r, &m, "center_of_mass", c)) != MBS_OK) {
    goto fail;
  }
  memcpy(b->directors, R, sizeof(b->directors));
  for (int a = 0; a < 3; a++) {
    b->position[a] = origin[a] + R[3 * a] * c[0] + R[3 * a + 1] * c[1] + R[3 * a + 2] * c[2];
  }
  st = body_finish(r, &m, b, deck->gravity);

fail:
  return body_release(b, &m, st);
}
