/* loads.c: one entry of `loads:` (docs/decks.md "Loads"): forces, torques, joint torques
 * and forces, springs and rotational springs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* keys */

static const char *const load_keys[] = {
    "name",        "type",       "body",         "joint",   "bodies", "value",     "frame",
    "point",       "method",     "augmentation", "profile", "points", "stiffness", "damping",
    "rest_length", "rest_angle", "beam",         "control", "rest_angle_deg", NULL};

/* keys of the deck format that this version does not read yet: "unsupported", not "unknown" */
static const char *const load_later[] = {NULL};

/* ---------------------------------------------------------------------------------------- */
/* loads */

/* the keys each load type takes besides name and type */
static const char *const *load_type_keys(mbsLoadType t) {
  static const char *const force[] = {"body", "value", "frame", "point", "profile", NULL};
  static const char *const torque[] = {"body", "value", "frame", "method", "profile", NULL};
  static const char *const joint_torque[] = {"joint",   "value",   "method", "augmentation",
                                             "profile", "control", NULL};
  static const char *const joint_force[] = {"joint", "value", "profile", "control", NULL};
  static const char *const spring[] = {"bodies",  "points",      "stiffness",
                                       "damping", "rest_length", NULL};
  static const char *const rotational_spring[] = {"joint",      "stiffness",      "damping",
                                                  "rest_angle", "rest_angle_deg", NULL};
  static const char *const distributed_force[] = {"beam", "value", "profile", NULL};
  switch (t) {
    case MBS_LOAD_DISTRIBUTED_FORCE:
      return distributed_force;
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
                     s, mbs_joint_type_words[jt], need, tw, mbs_joint_type_words[a],
                     mbs_joint_type_words[b]);
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
  if ((st = deck_body_ref(r, v, "body", &l->body)) != MBS_OK) {
    return st;
  }
  if (l->body < 0) {
    return deck_fail(r, v, "a load cannot act on 'ground'");
  }
  /* a beam node is a director frame like a rigid body's */
  if (l->body < deck->nbody) {
    const mbsDeckBody *b = &deck->bodies[l->body];
    if (b->fixed) {
      return deck_fail(r, v, "body '%s' is fixed (welded to ground) and cannot carry a load",
                       b->name);
    }
    if (l->type == MBS_LOAD_TORQUE && b->type != MBS_BODY_RIGID) {
      return deck_fail(r, v, "a torque needs a rigid body ('%s' is a point mass)", b->name);
    }
  }

  /* value, frame */
  if (!(v = deck_map_get(m, "value"))) {
    return deck_fail(r, m->node, "missing required key 'value'");
  }
  if ((st = deck_vec3(r, v, "value", l->value)) != MBS_OK) {
    return st;
  }
  if ((v = deck_map_get(m, "frame"))) {
    if ((st = deck_word(r, v, "frame", "frame", mbs_frame_words, MBS_FRAME_COUNT, &t)) != MBS_OK) {
      return st;
    }
    l->frame = (mbsFrame)t;
  }

  /* point: forces only, default the body's centre of mass */
  double R[9];
  deck_ref_pose(deck, l->body, l->point, R);
  if ((kv = deck_map_find(m, "point"))) {
    if ((st = deck_vec3(r, kv->value, "point", l->point)) != MBS_OK) {
      return st;
    }
    l->has_point = 1;
  }

  /* method: torques only; augmentation needs a joint axis */
  if ((kv = deck_map_find(m, "method"))) {
    if ((st = deck_word(r, kv->value, "method", "torque method", mbs_torque_method_words,
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

/* control: {kp, kd, ki, target} on a joint_torque or joint_force: a PID law on the joint's
 * coordinate against target = a number or {value, profile}; or {computed_torque: reference,
 * kp, kd}: the inverse dynamics of the reference plus PD feedback */
static mbsStatus read_control(DeckReader *r, mbsDeckLoad *l, yaml_node_t *n) {
  static const char *const keys[] = {"kp", "kd", "ki", "target", "computed_torque", NULL};
  static const char *const target_keys[] = {"value", "profile", NULL};
  DeckMap m = {0}, tm = {0};
  yaml_node_t *v;
  mbsStatus st;
  int torque = l->type == MBS_LOAD_JOINT_TORQUE;

  deck_node_pos(n, &l->control_mark.line, &l->control_mark.col);
  l->target_profile.kind = MBS_PROFILE_CONSTANT;
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "control: expected a mapping {kp, kd, ki, target}, got %s",
                     deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, "control", keys, NULL)) != MBS_OK) {
    goto fail;
  }
  if (!(v = deck_map_get(&m, "kp"))) {
    st = deck_fail(r, n, "control: missing required key 'kp' (the stiffness of the law [%s])",
                   torque ? "N m/rad" : "N/m");
    goto fail;
  }
  if ((st = nonnegative(r, v, "control.kp", &l->kp)) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "kd")) && (st = nonnegative(r, v, "control.kd", &l->kd)) != MBS_OK) {
    goto fail;
  }
  if ((v = deck_map_get(&m, "ki")) && (st = nonnegative(r, v, "control.ki", &l->ki)) != MBS_OK) {
    goto fail;
  }
  const DeckKeyValue *ct = deck_map_find(&m, "computed_torque");
  if (ct) {
    const DeckKeyValue *o = deck_map_find(&m, "target");
    o = o ? o : deck_map_find(&m, "ki");
    if (o) {
      st = deck_fail(r, o->key,
                     "control: computed_torque takes no '%s' (the reference motion is its "
                     "value; the law has kp and kd only)",
                     deck_text(o->key));
      goto fail;
    }
    l->computed_torque = 1;
  }
  if (!(v = ct ? ct->value : deck_map_get(&m, "target"))) {
    st = deck_fail(r, n,
                   "control: missing required key 'target' (a number [%s] or {value, "
                   "profile}) or 'computed_torque' (a reference motion)",
                   torque ? "rad" : "m");
    goto fail;
  }
  if (v->type != YAML_MAPPING_NODE) {
    st = deck_number(r, v, ct ? "control.computed_torque" : "control.target", &l->target_value);
    goto fail;
  }
  if ((st = deck_map_flatten(r, v, &tm)) != MBS_OK ||
      (st = deck_check_keys(r, &tm, ct ? "control.computed_torque" : "control.target", target_keys,
                            NULL)) != MBS_OK) {
    goto fail;
  }
  yaml_node_t *tv = deck_map_get(&tm, "value");
  if (!tv) {
    st = deck_fail(r, v, "%s: missing required key 'value' [%s]",
                   ct ? "control.computed_torque" : "control.target", torque ? "rad" : "m");
    goto fail;
  }
  if ((st = deck_number(r, tv, ct ? "control.computed_torque.value" : "control.target.value",
                        &l->target_value)) != MBS_OK) {
    goto fail;
  }
  yaml_node_t *pn = deck_map_get(&tm, "profile");
  if (pn) {
    st = deck_read_profile(r, pn, ct ? "control.computed_torque.profile" : "control.target.profile",
                           &l->target_profile);
  }
fail:
  deck_map_free(&tm);
  deck_map_free(&m);
  if (st == MBS_OK) {
    l->has_control = 1;
  }
  return st;
}

/* joint_torque, joint_force: joint, value (scalar) or control, method, augmentation */
static mbsStatus read_joint_load(DeckReader *r, mbsDeck *deck, const DeckNames *jnames,
                                 mbsDeckLoad *l, DeckMap *m) {
  const DeckKeyValue *kv;
  yaml_node_t *v;
  int t;
  mbsStatus st;
  const char *tw = mbs_load_type_words[l->type];

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
  if ((kv = deck_map_find(m, "control"))) {
    const DeckKeyValue *o = deck_map_find(m, "value");
    o = o ? o : deck_map_find(m, "profile");
    if (o) {
      return deck_fail(r, o->key,
                       "a %s with 'control' takes no '%s' (the control law gives the value)", tw,
                       deck_text(o->key));
    }
    if ((o = deck_map_find(m, "method")) && !deck_text_is(o->value, "contravariant")) {
      return deck_fail(r, o->value,
                       "a control law applies contravariant torques: remove 'method' or use "
                       "method: contravariant");
    }
    return read_control(r, l, kv->value);
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
    if ((st = deck_word(r, kv->value, "method", "torque method", mbs_torque_method_words,
                        MBS_TORQUE_METHOD_COUNT, &t)) != MBS_OK) {
      return st;
    }
    l->method = (mbsTorqueMethod)t;
  }
  if ((kv = deck_map_find(m, "augmentation"))) {
    if (l->method != MBS_TORQUE_AUGMENTED) {
      return deck_fail(r, kv->key, "'augmentation' only applies to method: augmented");
    }
    if ((st = deck_word(r, kv->value, "augmentation", "augmentation", mbs_augmentation_words,
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
  if ((st = deck_pair_list(r, v, "bodies", "a list of two body names [first, second]")) != MBS_OK ||
      (st = deck_body_ref(r, deck_item(r, v, 0), "bodies[0]", &l->bodies[0])) != MBS_OK ||
      (st = deck_body_ref(r, deck_item(r, v, 1), "bodies[1]", &l->bodies[1])) != MBS_OK) {
    return st;
  }
  if (l->bodies[0] == l->bodies[1]) {
    return deck_fail(r, v, "the two bodies must differ (both are '%s')",
                     deck_text(deck_item(r, v, 0)));
  }
  kv = deck_map_find(m, "points");
  if (kv) {
    if ((st = deck_pair_list(r, kv->value, "points", "two points [[x, y, z], [x, y, z]]")) !=
            MBS_OK ||
        (st = deck_vec3(r, deck_item(r, kv->value, 0), "points[0]", l->points[0])) != MBS_OK ||
        (st = deck_vec3(r, deck_item(r, kv->value, 1), "points[1]", l->points[1])) != MBS_OK) {
      return st;
    }
  } else if (l->bodies[0] < 0 || l->bodies[1] < 0) {
    return deck_fail(r, m->node, "a spring to ground needs 'points'");
  } else {
    double R[9];
    deck_ref_pose(deck, l->bodies[0], l->points[0], R);
    deck_ref_pose(deck, l->bodies[1], l->points[1], R);
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
  l->rest_length_default = 1;
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
  yaml_node_t *vd = deck_map_get(m, "rest_angle_deg");
  v = deck_map_get(m, "rest_angle");
  if (v && vd) {
    return deck_fail(r, vd, "give rest_angle (radians) or rest_angle_deg, not both");
  }
  if (v || vd) {
    double a;
    if ((st = deck_number(r, v ? v : vd, v ? "rest_angle" : "rest_angle_deg", &a)) != MBS_OK) {
      return st;
    }
    l->rest_angle = v ? a : a * (3.141592653589793 / 180.0);
    if (v) {
      deck_warn_turn(r, v, "rest_angle", a, "rest_angle_deg", a);
    }
  }
  return MBS_OK;
}

/* distributed_force: beam (a defined beam), value [N/m] (world components, per unit length of
 * the beam at t = 0) */
static mbsStatus read_distributed_force(DeckReader *r, mbsDeck *deck, mbsDeckLoad *l, DeckMap *m) {
  yaml_node_t *v;
  if (!(v = deck_map_get(m, "beam"))) {
    return deck_fail(r, m->node, "missing required key 'beam'");
  }
  const char *s = deck_text(v);
  if (!s || deck_is_null(v)) {
    return deck_fail(r, v, "beam: expected a beam name, got %s", deck_kind(v));
  }
  if ((l->beam = deck_names_get(&r->beam_names, s)) < 0) {
    return deck_fail(r, v, "beam '%.64s' is not defined", s);
  }
  (void)deck;
  if (!(v = deck_map_get(m, "value"))) {
    return deck_fail(r, m->node, "missing required key 'value' [N/m]");
  }
  return deck_vec3(r, v, "value", l->value);
}

mbsStatus deck_read_load(DeckReader *r, mbsDeck *deck, DeckNames *names, const DeckNames *jnames,
                           int i, yaml_node_t *node) {
  mbsDeckLoad *l = &deck->loads[i];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL;
  yaml_node_t *v;
  int t;
  mbsStatus st;

  deck_node_pos(node, &l->mark.line, &l->mark.col);
  l->body = l->joint = l->bodies[0] = l->bodies[1] = l->beam = -1;
  l->frame = MBS_FRAME_WORLD;
  l->method = MBS_TORQUE_CONTRAVARIANT;
  l->augmentation = MBS_AUGMENTATION_VARIABLE;
  l->profile.kind = MBS_PROFILE_CONSTANT;
  if ((st = deck_entry_open(r, node, "loads", i, "load", load_keys, load_later, l->name, &nn,
                            &m)) != MBS_OK) {
    return st;
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
  if ((st = deck_word(r, v, "type", "load type", mbs_load_type_words, MBS_LOAD_TYPE_COUNT, &t)) !=
      MBS_OK) {
    goto fail;
  }
  l->type = (mbsLoadType)t;

  /* every key must belong to this type */
  const char *const *mine = load_type_keys(l->type);
  for (int k = 0; k < m.n; k++) {
    const char *key = deck_text(m.kv[k].key);
    if (key && strcmp(key, "name") != 0 && strcmp(key, "type") != 0 && !word_in(key, mine)) {
      st = deck_fail(r, m.kv[k].key, "a %s takes no '%s'", mbs_load_type_words[t], key);
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
    case MBS_LOAD_DISTRIBUTED_FORCE:
      st = read_distributed_force(r, deck, l, &m);
      break;
    case MBS_LOAD_TYPE_COUNT:
      break;
  }
  if (st != MBS_OK) {
    goto fail;
  }

  /* profile: scales the value of force, torque, joint_torque, joint_force */
  if ((v = deck_map_get(&m, "profile")) &&
      (st = deck_read_profile(r, v, "profile", &l->profile)) != MBS_OK) {
    goto fail;
  }

fail:
  deck_map_free(&m);
  return st;
}

