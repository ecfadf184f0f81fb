/* joints.c: one entry of `joints:` (docs/decks.md "Joints"): its type, bodies, point, axes,
 * prescribed motion and initial rate. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"
#include "util/profile.h"

/* ---------------------------------------------------------------------------------------- */
/* keys */

static const char *const joint_keys[] = {"name",   "type",        "bodies",      "point",
                                         "axis",   "axes",        "points",      "body_points",
                                         "length", "motion",      "initial_rate", "relative_to",
                                         "active", "orient", "reach", "param", NULL};

/* keys of the deck format that this version does not read yet: "unsupported", not "unknown" */
static const char *const joint_later[] = {NULL};

/* ---------------------------------------------------------------------------------------- */
/* joints */

/* active: {from: T0, until: T1} (either optional, at least one): the joint engages at T0 >= 0
 * and releases at T1 > T0 (docs/decks.md "Joints that engage and release") */
static mbsStatus read_active(DeckReader *r, mbsDeckJoint *j, yaml_node_t *key, yaml_node_t *n) {
  static const char *const active_keys[] = {"from", "until", NULL};
  DeckMap m = {0};
  mbsStatus st;
  deck_node_pos(key, &j->active_mark.line, &j->active_mark.col);
  j->has_active = 1;
  j->active_from = -INFINITY;
  j->active_until = INFINITY;
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "active: expected a mapping {from: T0, until: T1} [s], got %s",
                     deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "active", active_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  yaml_node_t *vf = deck_map_get(&m, "from"), *vu = deck_map_get(&m, "until");
  if (!vf && !vu) {
    st = deck_fail(r, n, "active: give 'from' (the engagement time [s]), 'until' (the release "
                         "time [s]) or both");
    goto fail;
  }
  if (vf) {
    if ((st = deck_number(r, vf, "active.from", &j->active_from)) != MBS_OK) {
      goto fail;
    }
    if (!(j->active_from >= 0.0)) {
      st = deck_fail(r, vf, "active.from must be a time >= 0 [s], got %g", j->active_from);
      goto fail;
    }
  }
  if (vu) {
    if ((st = deck_number(r, vu, "active.until", &j->active_until)) != MBS_OK) {
      goto fail;
    }
    if (!(j->active_until >= 0.0)) {
      st = deck_fail(r, vu, "active.until must be a time >= 0 [s], got %g", j->active_until);
      goto fail;
    }
  }
  if (vf && vu && !(j->active_from < j->active_until)) {
    st = deck_fail(r, vu, "active: until (%g s) must come after from (%g s)", j->active_until,
                   j->active_from);
    goto fail;
  }
fail:
  deck_map_free(&m);
  return st;
}

/* the largest |f(t)| of a profile, t >= 0, where it is bounded by its kind (a table: its
 * largest point); NAN for an expression */
static double profile_bound(const mbsDeckProfile *p) {
  switch (p->kind) {
    case MBS_PROFILE_SINE:
      return fabs(p->p[0]);
    case MBS_PROFILE_TABLE: {
      double f = 0.0;
      for (int i = 0; i < p->ntab; i++) {
        f = fmax(f, fabs(p->table[2 * i + 1]));
      }
      return f;
    }
    case MBS_PROFILE_EXPRESSION:
      return NAN;
    default:
      return 1.0; /* constant, window, ramp */
  }
}

/* motion: {value (or value_deg), profile} on a revolute (angle) or prismatic (displacement)
 * joint; the prescribed value x profile(t) is relative to t = 0, so it must vanish there. An
 * angle whose largest value x profile is more than a turn is probably meant in degrees: a
 * warning (value_deg says degrees, and silences it where radians are meant) */
mbsStatus deck_read_motion(DeckReader *r, mbsDeckJoint *j, yaml_node_t *n) {
  static const char *const motion_keys[] = {"value", "value_deg", "profile", NULL};
  DeckMap m = {0};
  yaml_node_t *v, *vd;
  mbsStatus st;
  int revolute = j->type == MBS_JOINT_REVOLUTE;
  const char *what = revolute ? "angle" : "displacement";

  deck_node_pos(n, &j->motion_mark.line, &j->motion_mark.col);
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "motion: expected a mapping {value, profile}, got %s", deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "motion", motion_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  v = deck_map_get(&m, "value");
  vd = deck_map_get(&m, "value_deg");
  if (vd && !revolute) {
    st = deck_fail(r, vd, "motion: value_deg is for a revolute joint's angle; a prismatic "
                          "joint's motion takes value [m]");
    goto fail;
  }
  if (v && vd) {
    st = deck_fail(r, vd, "motion: give value (radians) or value_deg, not both");
    goto fail;
  }
  if (!v && !vd) {
    st = deck_fail(r, n, "motion: missing required key 'value' (the %s [%s]%s)", what,
                   revolute ? "rad" : "m", revolute ? ", or value_deg in degrees" : "");
    goto fail;
  }
  if ((st = deck_number(r, v ? v : vd, v ? "motion.value" : "motion.value_deg",
                        &j->motion_value)) != MBS_OK) {
    goto fail;
  }
  double written = j->motion_value;
  if (vd) {
    j->motion_value *= 3.141592653589793 / 180.0;
  }
  j->motion_profile.kind = MBS_PROFILE_CONSTANT;
  yaml_node_t *pn = deck_map_get(&m, "profile");
  if (pn && (st = deck_read_profile(r, pn, "motion.profile", &j->motion_profile)) != MBS_OK) {
    goto fail;
  }
  double f0 = j->motion_value * deck_profile_at(&j->motion_profile, 0.0, NULL);
  if (f0 != 0.0) {
    st = deck_fail(r, pn ? pn : v,
                   "motion: the prescribed %s is relative to t = 0 and must be 0 there, but "
                   "value x profile(0) = %g; use a profile that starts at 0 (ramp, sine, table)",
                   what, f0);
    goto fail;
  }
  if (revolute && v) {
    double b = profile_bound(&j->motion_profile);
    deck_warn_turn(r, v, b == 1.0 ? "motion.value" : "motion.value x the profile's largest |f|",
                   written * b, "value_deg", written);
  }
  j->has_motion = 1;
fail:
  deck_map_free(&m);
  if (st != MBS_OK) {
    free(j->motion_profile.table);
    free(j->motion_profile.expr);
    mbs_profile_expr_destroy(j->motion_profile.ev);
    memset(&j->motion_profile, 0, sizeof(j->motion_profile));
  }
  return st;
}

/* a rigid body's size: the half diagonal of the box with its principal moments, sqrt(1.5
 * tr(I) / m) (a slender rod of length L: L / 2; a cube of edge a: a sqrt(3) / 2); 0 where it
 * has none to judge a joint's point by (ground, a point mass, a beam node) */
static double body_size(const mbsDeck *deck, int b) {
  if (b < 0 || b >= deck->nbody || deck->bodies[b].type != MBS_BODY_RIGID) {
    return 0.0;
  }
  const mbsDeckBody *bd = &deck->bodies[b];
  return sqrt(1.5 * (bd->inertia[0] + bd->inertia[4] + bd->inertia[8]) / bd->mass);
}

/* a joint's point more than JOINT_FAR sizes from both its bodies' centres (both rigid, neither
 * ground) is probably misplaced (a point meant in a body's own frame, a typo): a warning at the
 * point; body_points places a point away from the bodies on purpose */
#define JOINT_FAR 2.0
static void warn_far_point(DeckReader *r, const mbsDeck *deck, const mbsDeckJoint *j,
                           const yaml_node_t *n) {
  double d[2], s[2];
  for (int k = 0; k < 2; k++) {
    s[k] = body_size(deck, j->body[k]);
    if (!(s[k] > 0.0)) {
      return;
    }
    const double *c = deck->bodies[j->body[k]].position;
    d[k] = sqrt((j->point[0] - c[0]) * (j->point[0] - c[0]) +
                (j->point[1] - c[1]) * (j->point[1] - c[1]) +
                (j->point[2] - c[2]) * (j->point[2] - c[2]));
  }
  if (d[0] > JOINT_FAR * s[0] && d[1] > JOINT_FAR * s[1]) {
    deck_warn(r, n,
              "point [%g, %g, %g] m is %.3g m from the centre of '%s' (size %.3g m) and %.3g m "
              "from that of '%s' (size %.3g m), more than twice the size of either: is it in the "
              "right place? (the point is in world axes at t = 0; a point meant away from both "
              "bodies is placed with body_points, without this warning)",
              j->point[0], j->point[1], j->point[2], d[0], deck->bodies[j->body[0]].name, s[0],
              d[1], deck->bodies[j->body[1]].name, s[1]);
  }
}

static int joint_has_axis(mbsJointType t) {
  return t == MBS_JOINT_REVOLUTE || t == MBS_JOINT_CYLINDRICAL || t == MBS_JOINT_PRISMATIC ||
         t == MBS_JOINT_PLANAR;
}

/* slide_on_beam: bodies [rigid body, beam], `point` in the body's frame (its centre of mass
 * and directors at t = 0), `orient` (default false); no other key of the other types */
static mbsStatus read_slide(DeckReader *r, mbsDeck *deck, mbsDeckJoint *j, DeckMap *m) {
  static const char *const others[] = {"axis", "axes", "points", "body_points", "length",
                                       "motion", "initial_rate", "relative_to", "active", NULL};
  const DeckKeyValue *kv;
  mbsStatus st;
  for (int k = 0; others[k]; k++) {
    if ((kv = deck_map_find(m, others[k]))) {
      return deck_fail(r, kv->key,
                       "a slide_on_beam joint takes no '%s' (its keys: name, type, bodies: "
                       "[body, beam], point, orient, reach, param)",
                       others[k]);
    }
  }
  yaml_node_t *v = deck_map_get(m, "bodies");
  if (!v) {
    return deck_fail(r, m->node, "missing required key 'bodies' ([body, beam]: a rigid body "
                                 "and the beam it slides along)");
  }
  if ((st = deck_pair_list(r, v, "bodies", "[body, beam]: a rigid body and a beam")) != MBS_OK ||
      (st = deck_body_ref(r, deck_item(r, v, 0), "bodies[0]", &j->body[0])) != MBS_OK) {
    return st;
  }
  yaml_node_t *b0 = deck_item(r, v, 0), *b1 = deck_item(r, v, 1);
  if (j->body[0] < 0 || j->body[0] >= deck->nbody ||
      deck->bodies[j->body[0]].type != MBS_BODY_RIGID || deck->bodies[j->body[0]].fixed) {
    return deck_fail(r, b0,
                     "bodies[0]: '%s' is %s; the body that slides along a beam is a rigid body "
                     "that is not fixed (hold it by other joints instead)",
                     deck_text(b0),
                     j->body[0] < 0                 ? "the ground"
                     : j->body[0] >= deck->nbody    ? "a beam node"
                     : deck->bodies[j->body[0]].fixed ? "fixed"
                                                      : "a point mass");
  }
  const char *bn = deck_text(b1);
  j->beam = bn && !deck_is_null(b1) ? deck_names_get(&r->beam_names, bn) : -1;
  if (j->beam < 0) {
    return deck_fail(r, b1, "bodies[1]: '%s' is not a beam; a slide_on_beam joint names the beam "
                            "the body slides along (by its name, without a node index)",
                     bn && !deck_is_null(b1) ? bn : "(null)");
  }
  j->body[1] = deck->nbody + deck->beams[j->beam].node0;
  kv = deck_map_find(m, "point");
  if (!kv) {
    return deck_fail(r, m->node, "missing required key 'point' (the point of '%s' that slides "
                                 "along the beam, in the body's frame)",
                     deck->bodies[j->body[0]].name);
  }
  double local[3], pos[3], R[9];
  if ((st = deck_vec3(r, kv->value, "point", local)) != MBS_OK) {
    return st;
  }
  deck_node_pos(kv->value, &j->point_mark.line, &j->point_mark.col);
  deck_ref_pose(deck, j->body[0], pos, R);
  for (int c = 0; c < 3; c++) {
    j->point[c] = pos[c] + R[3 * c] * local[0] + R[3 * c + 1] * local[1] + R[3 * c + 2] * local[2];
    j->points[0][c] = j->points[1][c] = j->point[c];
  }
  j->orient = 0;
  if ((kv = deck_map_find(m, "orient")) && (st = deck_bool(r, kv->value, "orient", &j->orient)) !=
                                               MBS_OK) {
    return st;
  }
  j->absolute = 0;
  if ((kv = deck_map_find(m, "param"))) {
    static const char *const params[] = {"relative", "absolute"};
    if ((st = deck_word(r, kv->value, "param", "slide_on_beam parametrization", params, 2,
                        &j->absolute)) != MBS_OK) {
      return st;
    }
    deck_node_pos(kv->value, &j->param_mark.line, &j->param_mark.col);
  }
  j->reach = 0;
  if ((kv = deck_map_find(m, "reach"))) {
    if ((st = deck_integer(r, kv->value, "reach", &j->reach)) != MBS_OK) {
      return st;
    }
    if (j->reach < 1) {
      return deck_fail(r, kv->value,
                       "reach: expected a number of elements >= 1 on either side of the body's "
                       "place on the beam (or no reach: the whole beam), got %d",
                       j->reach);
    }
  }
  return MBS_OK;
}

mbsStatus deck_read_joint(DeckReader *r, mbsDeck *deck, DeckNames *names, int slot, int i,
                          yaml_node_t *node) {
  mbsDeckJoint *j = &deck->joints[slot];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL, *pnode = NULL; /* pnode: the `point` given */
  const DeckKeyValue *kv;
  yaml_node_t *v;
  int t;
  mbsStatus st;

  j->body[0] = j->body[1] = -1;
  deck_node_pos(node, &j->mark.line, &j->mark.col);
  if ((st = deck_entry_open(r, node, "joints", i, "joint", joint_keys, joint_later, j->name, &nn,
                            &m)) != MBS_OK) {
    return st;
  }
  int first = deck_names_get(names, j->name);
  if (first >= 0) {
    st = deck_fail(r, nn, "duplicate joint name '%s' (first at %d:%d)", j->name,
                   deck->joints[first].mark.line, deck->joints[first].mark.col);
    goto fail;
  }
  deck_names_put(names, j->name, slot);

  /* type */
  if (!(v = deck_map_get(&m, "type"))) {
    st = deck_fail(r, m.node, "missing required key 'type'");
    goto fail;
  }
  if ((st = deck_word(r, v, "type", "joint type", mbs_joint_type_words, MBS_JOINT_TYPE_COUNT,
                      &t)) != MBS_OK) {
    goto fail;
  }
  j->type = (mbsJointType)t;
  const char *tw = mbs_joint_type_words[t];
  j->beam = -1;
  if (j->type == MBS_JOINT_SLIDE_ON_BEAM) {
    st = read_slide(r, deck, j, &m);
    goto fail;
  }
  if ((kv = deck_map_find(&m, "orient")) || (kv = deck_map_find(&m, "reach")) ||
      (kv = deck_map_find(&m, "param"))) {
    st = deck_fail(r, kv->key, "a %s joint takes no '%s' (a slide_on_beam joint does)", tw,
                   deck_text(kv->key));
    goto fail;
  }

  /* the two bodies, different, "ground" = -1 */
  if (!(v = deck_map_get(&m, "bodies"))) {
    st = deck_fail(r, m.node, "missing required key 'bodies'");
    goto fail;
  }
  if ((st = deck_pair_list(r, v, "bodies", "a list of two body names [first, second]")) != MBS_OK ||
      (st = deck_body_ref(r, deck_item(r, v, 0), "bodies[0]", &j->body[0])) != MBS_OK ||
      (st = deck_body_ref(r, deck_item(r, v, 1), "bodies[1]", &j->body[1])) != MBS_OK) {
    goto fail;
  }
  if (j->body[0] == j->body[1]) {
    st = deck_fail(r, v, "the two bodies must differ (both are '%s')",
                   deck_text(deck_item(r, v, 0)));
    goto fail;
  }

  /* body_points: the joint point on each body in that body's own frame at t = 0 (its centre
   * of mass and directors; ground: the world), instead of `point` (`points` for distance) */
  const DeckKeyValue *bp = deck_map_find(&m, "body_points");
  if (bp) {
    const char *other = j->type == MBS_JOINT_DISTANCE ? "points" : "point";
    if ((kv = deck_map_find(&m, other))) {
      st = deck_fail(r, kv->key, "give either '%s' or 'body_points', not both", other);
      goto fail;
    }
    for (int k = 0; k < 2 && st == MBS_OK; k++) {
      double local[3], pos[3], R[9];
      if ((st = deck_pair_list(r, bp->value, "body_points",
                               "two points [[x, y, z] on body 1, [x, y, z] on body 2]")) !=
              MBS_OK ||
          (st = deck_vec3(r, deck_item(r, bp->value, k), k ? "body_points[1]" : "body_points[0]",
                          local)) != MBS_OK) {
        goto fail;
      }
      deck_ref_pose(deck, j->body[k], pos, R);
      double s2 = 0.0;
      for (int c = 0; c < 3; c++) {
        j->points[k][c] = pos[c] + R[3 * c] * local[0] + R[3 * c + 1] * local[1] +
                          R[3 * c + 2] * local[2];
        s2 += local[c] * local[c] + j->points[k][c] * j->points[k][c];
      }
      if (!(s2 <= DECK_MAX_SCALE)) {
        st = deck_fail(r, deck_item(r, bp->value, k),
                       "body_points: the point is too far from its body or the origin (its "
                       "squared coordinates exceed %g; the constraint would overflow)",
                       DECK_MAX_SCALE);
        goto fail;
      }
    }
    j->has_body_points = j->has_points = 1;
    memcpy(j->point, j->points[1], sizeof(j->point));
  }

  /* point: all but distance */
  kv = deck_map_find(&m, "point");
  if (j->type == MBS_JOINT_DISTANCE) {
    if (kv) {
      st = deck_fail(r, kv->key, "a distance joint takes no 'point' (use 'points')");
      goto fail;
    }
  } else if (bp) {
    /* the points of body_points */
  } else if (!kv) {
    st = deck_fail(r, m.node,
                   "missing required key 'point' (a %s joint needs it; or 'body_points')", tw);
    goto fail;
  } else if ((st = deck_vec3(r, kv->value, "point", j->point)) != MBS_OK) {
    goto fail;
  } else {
    pnode = kv->value;
  }

  /* axis: revolute, cylindrical, prismatic (the axis), planar (the plane normal); normalised */
  kv = deck_map_find(&m, "axis");
  if (joint_has_axis(j->type)) {
    if (!kv) {
      st = deck_fail(r, m.node, "missing required key 'axis' (a %s joint needs it%s)", tw,
                     j->type == MBS_JOINT_PLANAR ? ": the normal of the plane" : "");
      goto fail;
    }
    if ((st = deck_unit_vec3(r, kv->value, "axis", j->axis)) != MBS_OK) {
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
    if ((st = deck_pair_list(r, kv->value, "axes", "two axes [[x, y, z], [x, y, z]]")) != MBS_OK ||
        (st = deck_unit_vec3(r, deck_item(r, kv->value, 0), "axes[0]", j->axes[0])) != MBS_OK ||
        (st = deck_unit_vec3(r, deck_item(r, kv->value, 1), "axes[1]", j->axes[1])) != MBS_OK) {
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
      st = deck_fail(r, kv->key, "a %s joint takes no 'points' (one 'point', or 'body_points')",
                     tw);
      goto fail;
    }
  } else {
    if (bp) {
      /* the points of body_points */
    } else if (kv) {
      if ((st = deck_pair_list(r, kv->value, "points", "two points [[x, y, z], [x, y, z]]")) !=
              MBS_OK ||
          (st = deck_vec3(r, deck_item(r, kv->value, 0), "points[0]", j->points[0])) != MBS_OK ||
          (st = deck_vec3(r, deck_item(r, kv->value, 1), "points[1]", j->points[1])) != MBS_OK) {
        goto fail;
      }
      j->has_points = 1;
    } else if (j->body[0] < 0 || j->body[1] < 0) {
      st = deck_fail(r, m.node, "a distance joint to ground needs 'points'");
      goto fail;
    } else {
      double R[9];
      deck_ref_pose(deck, j->body[0], j->points[0], R);
      deck_ref_pose(deck, j->body[1], j->points[1], R);
    }

    /* the length is the distance at t = 0 unless given: it must not vanish */
    double d2 = 0, s2 = 0;
    const DeckKeyValue *lk = deck_map_find(&m, "length");
    if (lk) {
      if ((st = deck_number(r, lk->value, "length", &j->length)) != MBS_OK) {
        goto fail;
      }
      if (!(j->length > 0.0) || !(j->length * j->length <= DECK_MAX_SCALE)) {
        st = deck_fail(r, lk->value, "length: expected a positive length [m] below %g, got %g",
                       sqrt(DECK_MAX_SCALE), j->length);
        goto fail;
      }
      j->has_length = 1;
    }
    if (bp) {
      kv = bp;
    }
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
    /* a given length must be resolvable against the coordinates: its square, the
     * constraint's value, above the round-off of the points' squares (1e-300 underflows to
     * 0 and leaves the joint without a direction) */
    if (j->has_length && !(j->length >= 1e-8 * (1.0 + sqrt(s2)))) {
      st = deck_fail(r, lk->value,
                     "length: %g m is too short to be resolved against the joint's points (at "
                     "least %.3g m here: 1e-8 of 1 + their distance from the origin)",
                     j->length, 1e-8 * (1.0 + sqrt(s2)));
      goto fail;
    }
    if (!j->has_length && sqrt(d2) <= 1e-12 * (1.0 + sqrt(s2))) {
      st = deck_fail(r, kv ? kv->value : m.node,
                     "the two points of a distance joint coincide (the length would be zero)");
      goto fail;
    }
  }

  if (j->type != MBS_JOINT_DISTANCE && (kv = deck_map_find(&m, "length"))) {
    st = deck_fail(r, kv->key, "a %s joint takes no 'length' (a distance joint does)", tw);
    goto fail;
  }

  /* relative_to: point, axis, axes and points given in a body's frame (its centre of mass and
   * directors at t = 0); body_points are in their own bodies' frames already */
  kv = deck_map_find(&m, "relative_to");
  if (kv) {
    int b;
    if ((st = deck_body_ref(r, kv->value, "relative_to", &b)) != MBS_OK) {
      goto fail;
    }
    if (b >= 0) {
      mbsDeckBody rbody;
      deck_ref_pose(deck, b, rbody.position, rbody.directors);
      const mbsDeckBody *rb = &rbody;
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
        if ((k == 0 || j->has_points) && !j->has_body_points) {
          memcpy(pts[k], x, sizeof(x));
        }
        memcpy(dirs[k], a, sizeof(a));
      }
    }
  }

  /* one point: the joint point as fixed to either body */
  if (j->type != MBS_JOINT_DISTANCE && !j->has_body_points) {
    memcpy(j->points[0], j->point, sizeof(j->point));
    memcpy(j->points[1], j->point, sizeof(j->point));
  }
  if (pnode) {
    warn_far_point(r, deck, j, pnode);
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
  if (kv && (st = deck_read_motion(r, j, kv->value)) != MBS_OK) {
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

  /* active: a joint that engages and releases (not with a motion, which is a constraint
   * element with its own profile; an engaging joint has no rate at t = 0) */
  kv = deck_map_find(&m, "active");
  if (kv && j->has_motion) {
    st = deck_fail(r, kv->key, "joint '%s' has a motion: it cannot engage or release ('active')",
                   j->name);
    goto fail;
  }
  if (kv && (st = read_active(r, j, kv->key, kv->value)) != MBS_OK) {
    goto fail;
  }
  if (kv && j->has_initial_rate && j->active_from > 0.0) {
    st = deck_fail(r, kv->key,
                   "joint '%s' engages at t = %g s: it takes no 'initial_rate' (it holds "
                   "nothing at t = 0)",
                   j->name, j->active_from);
    goto fail;
  }

fail:
  deck_map_free(&m);
  return st;
}


/* one generated planar joint: ground to body reference `ref` at point p, normal n */
static void planar_joint(mbsDeckJoint *j, const char *name, int ref, const double p[3],
                         const double n[3], mbsMark mark) {
  memset(j, 0, sizeof(*j));
  snprintf(j->name, sizeof(j->name), "%s", name);
  j->mark = mark;
  j->type = MBS_JOINT_PLANAR;
  j->body[0] = -1;
  j->body[1] = ref;
  for (int c = 0; c < 3; c++) {
    j->point[c] = j->points[0][c] = j->points[1][c] = p[c];
    j->axis[c] = n[c];
  }
  j->generated = 1;
}

mbsStatus deck_planar_joints(DeckReader *r, mbsDeck *deck, const yaml_node_t *model_planar) {
  long add = 0;
  for (int k = 0; k < deck->nbeam; k++) {
    if (deck->beams[k].planar || deck->planar) {
      add += deck->beams[k].nnode;
    }
  }
  for (int b = 0; deck->planar && b < deck->nbody; b++) {
    const mbsDeckBody *db = &deck->bodies[b];
    if (db->fixed) {
      continue;
    }
    if (db->type != MBS_BODY_RIGID) {
      return deck_fail(r, model_planar,
                       "planar: body '%s' is a point mass, which a planar joint cannot hold "
                       "(it has no orientation); make it a rigid body or hold it by joints",
                       db->name);
    }
    add++;
  }
  if (add == 0) {
    return MBS_OK;
  }
  if (add > INT_MAX / 2 - deck->njoint) {
    return deck_fail(r, model_planar, "planar: too many joints");
  }
  mbsDeckJoint *js = realloc(deck->joints, (size_t)(deck->njoint + add) * sizeof(*js));
  if (!js) {
    return deck_nomem(r);
  }
  deck->joints = js;
  char name[2 * MBS_NAME_MAX];
  for (int k = 0; k < deck->nbeam; k++) {
    mbsDeckBeam *b = &deck->beams[k];
    if (!b->planar && !deck->planar) {
      continue;
    }
    if (!b->planar) {
      /* the model's plane, through this beam's node 0 */
      mbsStatus st = deck_beam_in_plane(r, model_planar, b, deck->planar_normal);
      if (st != MBS_OK) {
        return st;
      }
      b->planar = 1;
      memcpy(b->planar_normal, deck->planar_normal, sizeof(b->planar_normal));
      b->planar_mark = deck->planar_mark;
    }
    for (int i = 0; i < b->nnode; i++) {
      int len = snprintf(name, sizeof(name), "planar:%s[%d]", b->name, i);
      if (len >= MBS_NAME_MAX) {
        return deck_fail(r, model_planar,
                         "planar: the joint name '%s' of beam '%s' is longer than %d characters; "
                         "shorten the beam's name",
                         name, b->name, MBS_NAME_MAX - 1);
      }
      planar_joint(&deck->joints[deck->njoint++], name, deck->nbody + b->node0 + i,
                   b->pos + 3 * i, b->planar_normal, b->planar_mark);
    }
  }
  for (int bi = 0; deck->planar && bi < deck->nbody; bi++) {
    const mbsDeckBody *db = &deck->bodies[bi];
    if (db->fixed) {
      continue;
    }
    int len = snprintf(name, sizeof(name), "planar:%s", db->name);
    if (len >= MBS_NAME_MAX) {
      return deck_fail(r, model_planar,
                       "planar: the joint name '%s' is longer than %d characters; shorten the "
                       "body's name",
                       name, MBS_NAME_MAX - 1);
    }
    planar_joint(&deck->joints[deck->njoint++], name, bi, db->position, deck->planar_normal,
                 deck->planar_mark);
  }
  return MBS_OK;
}
