/* deck_internal.h: private interface between the files of the deck reader (src/deck/).
 *
 * yamltree.c  reads the file, parses it with libyaml's document loader, bounds its depth,
 *             flattens merge keys (<<) and applies --set overrides to the node tree;
 * scalars.c   turns scalar nodes into numbers, integers, booleans, words and vectors,
 *             resolves $parameters and writes every error message;
 * deck.c      implements the public API (deck.h) and reads the top level, section by section;
 * body.c      reads one body (mass properties, orientation);
 * joints.c    reads one joint;
 * loads.c     reads one load, spring or damper;
 * profiles.c  reads the time profiles of loads and motions;
 * chains.c    reads the chains (Denavit-Hartenberg tables) into bodies and joints;
 * beams.c     reads the beams and resolves beam node names NAME[i];
 * surfaces.c  reads the deformable contact surfaces (patches over point masses or beam nodes);
 * contacts.c  reads a body's collision shapes, the ground's, the contacts entries and
 *             solver.moreau;
 * solver.c    reads the sections initial, solver and output;
 * expr.c      reads expressions (util/expr.h);
 * names.c     hashes entry names for duplicate checks and lookups.
 * Only this directory includes <yaml.h>. */
#ifndef MBSIM_DECK_INTERNAL_H
#define MBSIM_DECK_INTERNAL_H

#include <stddef.h>
#include <yaml.h>

#include "mbsim/deck.h"

/* deepest nesting of lists and mappings a deck may have; also bounds every recursion */
#define DECK_MAX_DEPTH 64
/* largest deck file we read [bytes] */
#define DECK_MAX_BYTES (64L * 1024 * 1024)
/* most YAML nodes (scalars, lists, mappings) a deck may have, counting every alias as the
 * whole subtree it repeats: bounds the work of every later pass and the memory of the
 * parser (about 200 bytes a node) against huge lists and alias bombs ("billion laughs") */
#define DECK_MAX_NODES 1000000L
/* most anchors (&name) a deck may define: libyaml resolves each alias by a linear search
 * of the anchors, so their number times the number of aliases is bounded */
#define DECK_MAX_ANCHORS 256L
/* most steps a run may take (t_end / dt), so that step counts fit any integer type */
#define DECK_MAX_STEPS 1e12
/* bounds of solver.newton: every step ends after at most DECK_MAX_NEWTON iterations */
#define DECK_MAX_NEWTON 1000
#define DECK_MIN_TOLERANCE 1e-15
/* the largest initial energy, momentum, angular momentum or Steiner term of one body: the
 * solver sums such terms over the bodies and multiplies them further, so a deck whose products
 * overflow is refused where the values are, not at the first record */
#define DECK_MAX_SCALE 1e300
/* bounds of a beam's section constants and of its stiffnesses and masses per length (SI),
 * of its shear factor and of its damping factor [s]: values outside make the Newton matrix
 * singular or its terms non-finite */
#define DECK_SECTION_MIN 1e-150
#define DECK_SECTION_MAX 1e150
#define DECK_MAX_SHEAR_FACTOR 1e8
#define DECK_MAX_BEAM_DAMPING 1e6
/* the largest rotation angle [rad]: beyond it round-off leaves no digits for the fraction of
 * a turn */
#define DECK_MAX_ANGLE 1e6
/* mappings with more keys than this look keys up through a hash index */
#define DECK_MAP_INDEX_MIN 16
/* --set overrides together: at most DECK_SET_MAX of them, DECK_SET_MAX_BYTES of paths and
 * values (one value at most 64 KiB) and DECK_SET_MAX_NODES new YAML nodes (lists, aliases in
 * them copied, and the copies of shared entries an override goes through): bounds the time
 * and memory of all overrides, not of each */
#define DECK_SET_MAX 1000
#define DECK_SET_MAX_BYTES (1L << 20)
#define DECK_SET_MAX_NODES 100000
/* start_mark.index of a node created by --set; start_mark.column holds the override index */
#define DECK_SET_MARK ((size_t)-1)

/* one key of a mapping after merge keys are resolved */
typedef struct {
  yaml_node_t *key; /* a scalar */
  yaml_node_t *value;
  int pair; /* index in the mapping's own pairs, -1 if it came through '<<' */
} DeckKeyValue;

/* a mapping with its merge keys resolved: its own keys first, then merged ones that it does
 * not define itself (earlier merge sources win over later ones, as YAML says) */
typedef struct {
  yaml_node_t *node;
  DeckKeyValue *kv;
  int n, cap;
  int *index; /* (icap) open-addressing table of kv positions + 1 (0 = empty); NULL while the
                 map is small, so that lookups stay linear in the keys of big ones */
  int icap;
} DeckMap;

/* a named number from `parameters:` */
typedef struct {
  const char *name; /* the key's text, owned by the document */
  double value;
  const yaml_node_t *key; /* where it is defined (for the warning when nothing uses it) */
  int used;               /* some value of the deck refers to it */
} DeckParam;

/* entry names -> indices (names.c); the names are owned by the deck's entries */
typedef struct {
  const char *name;
  int index;
} DeckNameSlot;

typedef struct {
  DeckNameSlot *slot;
  int cap, n;
} DeckNames;

/* state shared by the reader; ctx names the entry being read for messages
 * ("bodies[1] 'link2'", "solver", "" at the top level) */
typedef struct {
  yaml_document_t *doc;
  const char *file;
  mbsError *err;
  const mbsOverride *overrides;
  int noverride;
  DeckParam *params;
  int nparam;
  DeckNames param_names; /* parameter name -> index into params */
  const DeckMap *param_map; /* the parameters mapping while it is read, else NULL */
  DeckNames body_names;
  DeckNames beam_names; /* beam name -> index into deck->beams */
  const mbsDeck *deck;  /* the deck being filled (beam node names resolve against it) */
  int *refs; /* (nref) per node id: how many collections refer to it, kept by every --set edit;
                ids at or beyond nref are new nodes not referred to yet */
  int nref;
  int set_base; /* nodes of the document before the first override */
  DeckNames entry_index; /* names of the entries of list node entry_seq (0: none), so that
                            overrides of a list of 60,000 bodies find theirs by hashing */
  int entry_seq, entry_n;
  unsigned *visit; /* (nvisit) per node id: the flatten pass that last reached it */
  int nvisit;
  unsigned pass;
  char *warnings; /* "file:line:col: text\n" lines (deck_warn), handed to the deck */
  size_t warn_len;
  int nwarn;
  int contact_pairs; /* 1 + the first contacts entry that gives a pair of shapes, 0: none
                        (so that solver.integrator can require moreau) */
  char ctx[192];
} DeckReader;

/* names.c: init sizes the table for n entries (0 on out of memory); get gives -1 if absent */
int deck_names_init(DeckNames *t, int n);
void deck_names_free(DeckNames *t);
int deck_names_get(const DeckNames *t, const char *name);
void deck_names_put(DeckNames *t, const char *name, int index);

/* yamltree.c */
mbsStatus deck_read_file(const char *path, char **text, size_t *len, mbsError *err);
mbsStatus deck_parse(DeckReader *r, const char *text, size_t len);
mbsStatus deck_check_depth(DeckReader *r);
mbsStatus deck_map_flatten(DeckReader *r, yaml_node_t *node, DeckMap *m);
void deck_map_free(DeckMap *m);
const DeckKeyValue *deck_map_find(const DeckMap *m, const char *key);
yaml_node_t *deck_map_get(const DeckMap *m, const char *key);
mbsStatus deck_check_overrides(DeckReader *r);
mbsStatus deck_apply_override(DeckReader *r, int i);
mbsStatus deck_emit(DeckReader *r, char **text);

/* scalars.c: messages */
void deck_node_pos(const yaml_node_t *n, int *line, int *col);
mbsStatus deck_fail(DeckReader *r, const yaml_node_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* a warning at n ("file:line:col: entry: text"), kept in the deck's warnings; at most
 * DECK_MAX_WARNINGS */
#define DECK_MAX_WARNINGS 100
void deck_warn(DeckReader *r, const yaml_node_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* the warning for an angle in radians whose magnitude is more than a turn (angle, of key at n,
 * probably meant in degrees): it names deg_key, the key that takes the written value in
 * degrees, both for degrees meant and to silence it where radians are meant */
void deck_warn_turn(DeckReader *r, const yaml_node_t *n, const char *key, double angle,
                    const char *deg_key, double written);
mbsStatus deck_fail_at(DeckReader *r, const yaml_node_t *n, int offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* the error for $name that the deck does not define, with the nearest defined name; offset:
 * where in the scalar */
mbsStatus deck_unknown_param(DeckReader *r, const yaml_node_t *n, const char *field,
                             const char *name, int offset);
/* expr.c: 1 if the scalar text s has anything but digits and points (worth trying as an
 * expression); the value of the expression s into out; *plain_error = 1 (no message set)
 * when s is a single word that is neither a number nor a known name */
int deck_expr_looks(const char *s);
mbsStatus deck_expression(DeckReader *r, const yaml_node_t *n, const char *field, const char *s,
                          double *out, int *plain_error);
/* a profile expression of t: checked as deck_expression with t defined, and with f, f', f''
 * finite at t = 0; f(0) into f0 */
mbsStatus deck_time_expression(DeckReader *r, const yaml_node_t *n, const char *field,
                               const char *s, double *f0);
mbsStatus deck_fail_bare(DeckReader *r, const yaml_node_t *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
mbsStatus deck_nomem(DeckReader *r);
const char *deck_nearest(const char *word, const char *const *cands, int n);
/* the body or beam name of r->deck nearest to word, if close enough to be a typo, else NULL
 * (the pointer is into the deck) */
const char *deck_nearest_body(const DeckReader *r, const char *word);

/* scalars.c: values; `field` names the value in messages ("mass", "orientation.axis") */
const char *deck_text(const yaml_node_t *n);
int deck_text_is(const yaml_node_t *n, const char *s);
int deck_is_null(const yaml_node_t *n);
const char *deck_kind(const yaml_node_t *n);
mbsStatus deck_number(DeckReader *r, const yaml_node_t *n, const char *field, double *out);
mbsStatus deck_positive(DeckReader *r, const yaml_node_t *n, const char *field, double *out);
mbsStatus deck_integer(DeckReader *r, const yaml_node_t *n, const char *field, int *out);
mbsStatus deck_bool(DeckReader *r, const yaml_node_t *n, const char *field, int *out);
mbsStatus deck_string(DeckReader *r, const yaml_node_t *n, const char *field, char *buf,
                      size_t cap);
mbsStatus deck_word(DeckReader *r, const yaml_node_t *n, const char *field, const char *what,
                    const char *const *words, int nword, int *out);
double deck_norm(const double *v, int n);
mbsStatus deck_vec3(DeckReader *r, yaml_node_t *n, const char *field, double out[3]);
mbsStatus deck_mat3(DeckReader *r, yaml_node_t *n, const char *field, int allow_diag,
                    double out[9]);
mbsStatus deck_check_keys(DeckReader *r, const DeckMap *m, const char *where,
                          const char *const *allowed, const char *const *reserved);
mbsStatus deck_read_parameters(DeckReader *r, yaml_node_t *n);
void deck_entry_ctx(DeckReader *r, const yaml_node_t *node, const char *section, int i);
/* a 3-vector that must be nonzero, normalised */
mbsStatus deck_unit_vec3(DeckReader *r, yaml_node_t *n, const char *field, double out[3]);
/* open list entry i of a section (bodies, joints, loads): the context of its messages, a
 * mapping ("expected a mapping (one <what>)"), flattened into m, its keys and its name
 * checked (deck_entry_start); on failure m is freed */
mbsStatus deck_entry_open(DeckReader *r, yaml_node_t *node, const char *section, int i,
                          const char *what, const char *const *allowed,
                          const char *const *reserved, char name[MBS_NAME_MAX],
                          const yaml_node_t **name_node, DeckMap *m);
mbsStatus deck_entry_start(DeckReader *r, const DeckMap *m, const char *section, int i,
                           const char *const *allowed, const char *const *reserved,
                           char name[MBS_NAME_MAX], const yaml_node_t **name_node);

/* the k-th item of a list node, and the number of its items */
static inline yaml_node_t *deck_item(DeckReader *r, const yaml_node_t *seq, int k) {
  return yaml_document_get_node(r->doc, seq->data.sequence.items.start[k]);
}

static inline int deck_count(const yaml_node_t *seq) {
  return (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

/* deck.c: a body name ("ground" -> -1, a defined body -> its index, a beam node NAME[i] ->
 * nbody + its node number, see mbsDeckBeam); a list of exactly two
 * entries (want says what they are in the message) */
mbsStatus deck_body_ref(DeckReader *r, const yaml_node_t *n, const char *field, int *out);
mbsStatus deck_pair_list(DeckReader *r, yaml_node_t *n, const char *field, const char *want);

/* profiles.c: the profile mapping n ({window: [t0, t1]}, ...) into p; value x profile(t) of a
 * deck profile at t, its rate into *rate when rate is not NULL */
mbsStatus deck_read_profile(DeckReader *r, yaml_node_t *n, const char *field,
                            mbsDeckProfile *p);
double deck_profile_at(const mbsDeckProfile *p, double t, double *rate);

/* body.c: an orientation mapping (directors, axis + angle or angle_deg, quaternion) into the
 * rotation matrix R (row-major, column i = axis i) */
mbsStatus deck_orientation(DeckReader *r, yaml_node_t *n, double R[9]);

/* contacts.c: body b's `collision` list (v; NULL: the default from its shape), the section
 * `ground`, the list `contacts` (after bodies and ground), the mapping solver.moreau; release
 * n shapes and their points */
mbsStatus deck_read_collision(DeckReader *r, mbsDeckBody *b, yaml_node_t *v);
mbsStatus deck_read_ground(DeckReader *r, mbsDeck *deck, yaml_node_t *node);
mbsStatus deck_read_contacts(DeckReader *r, mbsDeck *deck, yaml_node_t *node);
/* surfaces.c: the `surfaces:` list (after the bodies and beams, before the contacts) */
mbsStatus deck_read_surfaces(DeckReader *r, mbsDeck *deck, yaml_node_t *node);
mbsStatus deck_read_moreau(DeckReader *r, mbsDeckSolver *s, yaml_node_t *node);
void deck_free_shapes(mbsDeckShape *s, int n);

/* beams.c: the section `beams` (after bodies, before joints); a beam node name NAME[i] in s:
 * returns 0 if s is not of that form, else 1 with *st the result and *out the body reference
 * (mbsDeck.nbody + node); the pose (position, directors R row-major, column i = d_i) of a body
 * reference at t = 0 (identity and origin for the ground) */
mbsStatus deck_read_beams(DeckReader *r, mbsDeck *deck, yaml_node_t *node);
int deck_beam_ref(DeckReader *r, const yaml_node_t *n, const char *s, int *out, mbsStatus *st);
/* `planar: {normal: n}` (a beam's or the model's): the unit normal and where it is written;
 * a beam's nodes and velocity must lie in the plane through its node 0 (deck_beam_in_plane:
 * the message points at `at`) */
mbsStatus deck_read_planar(DeckReader *r, yaml_node_t *node, double normal[3], mbsMark *mark);
mbsStatus deck_beam_in_plane(DeckReader *r, const yaml_node_t *at, const mbsDeckBeam *b,
                             const double n[3]);
/* joints.c: the planar joints the `planar` options make (a beam's on each of its nodes, the
 * model's on every other beam's nodes and every rigid body), appended to deck->joints after
 * the deck's own (which moves them: called once nothing holds a pointer into them; their
 * names hold ':', which no deck name may, so they are not looked up by name) */
mbsStatus deck_planar_joints(DeckReader *r, mbsDeck *deck, const yaml_node_t *model_planar);
void deck_ref_pose(const mbsDeck *deck, int ref, double pos[3], double R[9]);

/* joints.c: a joint's `motion` mapping (revolute or prismatic j->type) into j */
mbsStatus deck_read_motion(DeckReader *r, mbsDeckJoint *j, yaml_node_t *n);

/* body.c: a chain link's `body:` mapping into b (rigid; mass properties, center_of_mass in the
 * link frame, collision), posed in the link frame (origin, R row-major, column i = axis i) */
mbsStatus deck_read_link_body(DeckReader *r, const mbsDeck *deck, mbsDeckBody *b,
                              yaml_node_t *node, const double origin[3], const double R[9]);

/* chains.c: the section `chains` (after the bodies, before the beams): each row's link is
 * appended to deck->bodies (r->body_names rebuilt), each row's joint to *joints (*njoint of
 * them, owned by the caller also on failure: their motion profiles), and deck->chains filled */
mbsStatus deck_read_chains(DeckReader *r, mbsDeck *deck, yaml_node_t *node,
                           mbsDeckJoint **joints, int *njoint);

/* solver.c: the defaults of the sections solver and output, set before anything is read */
void deck_default_settings(mbsDeck *deck);

/* the section readers: body i, joint i (the i-th of `joints:`) into deck->joints[slot] (names:
 * the joint names so far), load i (names: the load names so far, jnames: all joint names), the
 * sections initial, solver and output (node NULL when the deck has none) */
mbsStatus deck_read_body(DeckReader *r, mbsDeck *deck, int i, yaml_node_t *node);
mbsStatus deck_read_joint(DeckReader *r, mbsDeck *deck, DeckNames *names, int slot, int i,
                          yaml_node_t *node);
mbsStatus deck_read_load(DeckReader *r, mbsDeck *deck, DeckNames *names, const DeckNames *jnames,
                         int i, yaml_node_t *node);
mbsStatus deck_read_initial(DeckReader *r, mbsDeck *deck, yaml_node_t *node);
mbsStatus deck_read_solver(DeckReader *r, mbsDeck *deck, yaml_node_t *node);
mbsStatus deck_read_output(DeckReader *r, mbsDeck *deck, yaml_node_t *node);

#endif
