/* deck.h: the model graph read from a YAML deck (docs/decks.md, format version 1).
 *
 * mbs_deck_load() parses the file with libyaml, applies --set overrides, resolves
 * $parameters, anchors, aliases and merge keys, validates every value and fills an
 * mbsDeck. Nothing downstream reads YAML: the compiler (model.h) only sees these
 * plain structs. Every entry keeps the source position of its fields so that later
 * stages can still report file:line:column. */
#ifndef MBSIM_DECK_H
#define MBSIM_DECK_H

#include <stddef.h>

#include "mbsim/error.h"
#include "mbsim/types.h"

/* a contact shape of a body (body axes, about the centre of mass) or of the ground (world) */
typedef struct {
  char name[MBS_NAME_MAX]; /* ground entries: `name` (default "ground#i", 1-based); bodies: "" */
  mbsMark mark;            /* the list entry */
  mbsShapeKind kind;
  double size[3];        /* sphere: r; box: a, b, c (full edges); capsule: radius, length */
  double offset[3];      /* [m] centre (plane: `point`) */
  double orientation[9]; /* row-major R, column i = shape axis i (identity if not given) */
  double normal[3];      /* plane: unit normal (world), pointing out of the solid */
  int npts;              /* points: count */
  double *pts;           /* points: (npts x 3) in shape axes about the centre (owned) */
} mbsDeckShape;

/* a rigid body or point mass, all quantities already in SI and world axes at t = 0.
 * Mass properties are normalised by the reader: whichever of inertia, euler_tensor or
 * shape+density the deck used, `mass` and `inertia` (about the centre of mass, body axes,
 * symmetric 3x3 row-major) are filled and checked (mass > 0, inertia positive
 * semi-definite and satisfying the triangle inequalities, so that the Euler tensor
 * E = tr(I)/2 * 1 - I is positive semi-definite). */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark; /* the list entry */
  mbsBodyType type;
  double mass;                /* [kg] */
  double inertia[9];          /* [kg m^2] about the centre of mass, body axes (rigid only) */
  double position[3];         /* [m] centre of mass, world, t = 0 */
  double reference_point[3];  /* [m] the point phi, body axes, relative to the centre of mass */
  double directors[9];        /* row-major 3x3 R: column i is director d_i in world; orthonormal,
                                 det = +1 (identity for point masses) */
  double velocity[3];         /* [m/s] of the centre of mass, world */
  double angular_velocity[3]; /* [rad/s] world (zero for point masses) */
  int fixed;                  /* 1: welded to ground (no coordinates) */
  int has_shape;              /* 1 if `shape` was given (for viewers) */
  char shape_kind[16];        /* "box" | "sphere" | "cylinder" | "" */
  double shape_size[3];       /* box: a b c; sphere: r; cylinder: radius length */
  int ncollision;             /* contact geometry (`collision`, default: from `shape` when it
                                 is a box or sphere, else none) */
  mbsDeckShape *collision;    /* (ncollision, owned) */
} mbsDeckBody;

/* a `beams:` entry (docs/decks.md "Beams"): a geometrically exact director beam, its nodes
 * and section already resolved. A body reference (joints, loads, springs: mbsDeckJoint.body,
 * mbsDeckLoad.body, bodies) b >= mbsDeck.nbody names beam node b - nbody counted over all
 * beams in order: node i of beam k is nbody + beams[k].node0 + i (mbs_deck_ref_beam). */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark; /* the list entry */
  int order;    /* 1: two-node elements, 2: three-node elements */
  int nelem;    /* elements (>= 1) */
  int nnode;    /* order nelem + 1 */
  int node0;    /* its first node among all beams' nodes */
  double *pos;  /* (nnode x 3) [m] node positions, world, t = 0 (owned) */
  double *R;    /* (nnode x 9) row-major, column i = director d_i at t = 0: d1 the tangent, d2
                   `up` made normal to it, d3 = d1 x d2 (owned) */
  double length; /* [m] arc length of the node polygon */
  double E, G;   /* [Pa] Young's and shear modulus (G from nu when nu was given) */
  double density; /* [kg/m^3] */
  double A, I2, I3, J; /* [m^2], [m^4] area, I2 = int x3^2 dA, I3 = int x2^2 dA (x2 along d2),
                          torsion constant */
  int section_circle;  /* 1: `section.circle` (A = pi r^2), for viewers; 0: a rectangle or the
                          explicit constants */
  double shear_factor; /* shear correction factor kappa (shear area kappa A) */
  double rotary[2];    /* [kg m] rotary inertia per length rho I2, rho I3: section.rotary_inertia,
                          else density I2, density I3 */
  double velocity[3];  /* [m/s] initial: of every node, or of the point `about` in a rigid motion */
  double angular_velocity[3]; /* [rad/s] initial rigid motion's, world (0: a translation) */
  double *vel;         /* (nnode x 3) [m/s] every node's initial velocity, world: the rigid
                          motion's velocity + angular_velocity x (x - about), or the given
                          `node_velocities` (owned); the directors start with
                          angular_velocity x d_i */
  double damping;      /* [s] stiffness-proportional (Kelvin-Voigt) factor >= 0 */
  double collision_radius; /* [m] `collision: {sphere: r}`: a sphere of radius r on every node
                              (contact geometry), 0: none; or the capsules' (below) */
  mbsMark collision_mark;  /* deck position of `collision` */
  int collision_segments;  /* 1: `collision: {capsule: r}`: a capsule of radius r along every
                              segment between consecutive nodes instead of the spheres */
  int collision_surface;   /* 1: `surface: true` of the capsules: a contact point is the
                              material point of the section's perimeter under it, moving with
                              the nodes' directors (0: the point of the axis) */
  int planar;              /* 1: `planar: {normal: n}`: every node moves in the plane through
                              its position normal to planar_normal and turns only about it
                              (a generated planar joint to the ground per node) */
  double planar_normal[3]; /* unit, world */
  mbsMark planar_mark;     /* deck position of `planar` (the beam's or the model's) */
} mbsDeckBeam;

/* a `surfaces:` entry (docs/decks.md "Surfaces"): a deformable contact surface of bilinear
 * patches over a grid of point masses; node (i, j) of the rows x cols grid is
 * nodes[i * cols + j], patch (i, j) spans nodes (i, j), (i, j + 1), (i + 1, j + 1),
 * (i + 1, j) */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark;
  int rows, cols; /* >= 2 each */
  int *nodes;     /* (rows x cols, owned) body indices (point masses, not fixed) */
} mbsDeckSurface;

/* a `contacts:` entry */
typedef struct {
  char name[MBS_NAME_MAX]; /* default "contact#i" (1-based) */
  mbsMark mark;
  char between[2][MBS_NAME_MAX]; /* body-name patterns (fnmatch: *, ?), or "ground" */
  mbsMark between_mark[2];
  int between_node[2];      /* a pattern NAME[i] naming one beam node: its body reference (nbody +
                               node, mbs_deck_ref_beam) + 1; 0 for a pattern */
  MBS_CONTACT_FIELDS(MBS_FIELD_MEMBER) /* the law and its constants (mbsim/types.h) */
} mbsDeckContact;

/* a time profile f(t) (docs/decks.md "Profiles"), validated: t0 < t1, table strictly increasing
 * in t */
typedef struct {
  mbsProfileKind kind;
  double p[3];   /* window, ramp: t0, t1 [s]; sine: amplitude, frequency [Hz], phase [rad] */
  int ntab;      /* table: number of points (>= 1) */
  double *table; /* table: (ntab x 2) points (t, f), owned by the deck; NULL otherwise */
  char *expr;    /* expression: the text in t with parameters substituted (owned), else NULL */
  mbsProfileExpr *ev; /* expression: its evaluators (owned), else NULL */
} mbsDeckProfile;

/* a joint between two bodies; body index -1 is ground */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark;
  mbsJointType type;
  int body[2];         /* indices into mbsDeck.bodies, -1 = ground */
  double point[3];     /* [m] world, t = 0 (all but distance; with `body_points`: the point
                          on the second body) */
  double axis[3];      /* unit vector, world, t = 0 (revolute, cylindrical, prismatic: the
                          axis; planar: the plane normal); zero if not given */
  double axes[2][3];   /* universal: unit axes, world, t = 0, the first fixed to body 1, the
                          second to body 2; perpendicular */
  int has_points;      /* distance: 1 if `points` or `body_points` was given */
  double points[2][3]; /* [m] world, t = 0: the joint point as fixed to body 1 and to body 2
                          (distance: the attachment points, default the bodies' centres of
                          mass, ground requires them; the others: both `point` unless
                          `body_points` places them apart) */
  int has_body_points; /* 1 if `body_points` gave points[] in the bodies' own frames */
  int has_length;      /* distance: 1 if `length` was given */
  double length;       /* distance: [m] > 0 (default: the distance at t = 0) */
  int has_motion;      /* revolute, prismatic: 1 if `motion` prescribes the joint */
  double motion_value; /* [rad] or [m]: the angle or displacement is value x profile(t),
                          relative to t = 0 (value x profile(0) = 0) */
  mbsDeckProfile motion_profile;
  mbsMark motion_mark; /* the `motion` entry */
  int has_initial_rate; /* revolute, cylindrical, prismatic: 1 if `initial_rate` was given */
  double initial_rate;  /* [rad/s] or [m/s]: the joint's rate at t = 0 (its first coordinate) */
  int generated;        /* 1: made by a `planar` option (a beam's or the model's), not listed
                           under `joints:`; its name is NODE.planar or BODY.planar */
  int has_active;       /* 1 if `active: {from, until}` was given (a joint that engages and
                           releases during the run) */
  double active_from;   /* [s] >= 0: it engages at the first step at or after it; -INFINITY
                           when not given (held from t = 0) */
  double active_until;  /* [s] > active_from: it releases at the first step at or after it;
                           INFINITY when not given */
  mbsMark active_mark;  /* the `active` key */
  int beam;             /* slide_on_beam: the beam (index into mbsDeck.beams) its body slides
                           along (body[1] is then the beam's node 0) */
  int orient;           /* slide_on_beam: 1 if the body's frame follows the beam's directors */
  int reach;            /* slide_on_beam: the elements on either side of its place at t = 0
                           that it may reach (0: the whole beam) */
  mbsMark point_mark;   /* slide_on_beam: the `point` value */
  int absolute;         /* slide_on_beam: 1 for `param: absolute` (no s among the unknowns),
                           0 for relative (the default) */
  mbsMark param_mark;   /* slide_on_beam: the `param` value's place in the deck */
} mbsDeckJoint;

/* a `chains:` entry (docs/decks.md "Chains"): a serial arm by its Denavit-Hartenberg table,
 * expanded by the reader into ordinary bodies NAME.link1..n (appended to mbsDeck.bodies from
 * body0 on) and joints NAME.joint1..n (in mbsDeck.joints from joint0 on, before the deck's
 * own joints) */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark;     /* the list entry */
  int modified;     /* 1: modified (Craig) DH convention, 0: standard */
  int base;         /* body index, -1 = ground */
  int nlink;        /* rows (>= 1) */
  int body0, joint0;
} mbsDeckChain;

/* an applied load, a spring or a damper */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark;
  mbsLoadType type;
  int body;        /* force, torque: index into mbsDeck.bodies (not ground, not fixed); else -1 */
  int joint;       /* joint_torque, joint_force, rotational_spring: index into mbsDeck.joints,
                      else -1 */
  double value[3]; /* force, torque: [N] or [N m]; joint_torque, joint_force: value[0] [N m]
                      or [N], acting on the joint's second body (the first gets minus it) */
  mbsFrame frame;  /* components in world or in the body's director frame */
  int has_point;
  double point[3];              /* force: application point, world at t = 0 (default: centre) */
  mbsTorqueMethod method;       /* torque, joint_torque */
  mbsAugmentation augmentation; /* joint_torque with method augmented */
  mbsDeckProfile profile;
  /* spring: the two bodies (-1 = ground) and attachment points, world at t = 0 (default:
   * the bodies' centres of mass; ground requires `points`) */
  int bodies[2];
  double points[2][3];
  double stiffness;   /* spring [N/m], rotational_spring [N m/rad], >= 0 */
  double damping;     /* spring [N s/m], rotational_spring [N m s/rad], >= 0, default 0 */
  double rest_length; /* spring [m] >= 0, default the distance at t = 0 (must not vanish) */
  int rest_length_default; /* spring: 1 when rest_length is that default */
  double rest_angle;  /* rotational_spring [rad], default 0 (the angle at t = 0) */
  int beam;           /* distributed_force: index into mbsDeck.beams (value [N/m], world),
                         else -1 */
  int has_control;    /* joint_torque, joint_force: 1 if `control` gives the value (then value
                         and profile are absent) */
  int computed_torque; /* control: 1 for {computed_torque: reference, kp, kd}: the reference
                          motion is target_value x target_profile(t) */
  double kp, kd, ki;  /* control: >= 0, [N m/rad], [N m s/rad], [N m/(rad s)] (a force: [N/m],
                         [N s/m], [N/(m s)]) */
  double target_value; /* control: the target coordinate value x target_profile(t) [rad or m]
                          (the joint's coordinate is 0 at t = 0) */
  mbsDeckProfile target_profile;
  mbsMark control_mark; /* the `control` entry */
} mbsDeckLoad;

typedef struct {
  mbsIntegrator integrator;
  int integrator_override;   /* 0: integrator from the file (or the default); i + 1: from the
                                override overrides[i] (--set solver.integrator=, --integrator) */
  MBS_SOLVER_FIELDS(MBS_FIELD_MEMBER) /* dt, t_end, newton_*, ... with their defaults
                                         (mbsim/types.h) */
  double memory_limit;       /* [GB] solver.memory_limit: the memory a model may need (its
                                estimate, mbs_model_memory_estimate); 0 (default): what the
                                machine allows (physical memory, cgroup and address-space
                                limits) */
  double energy_warning;  /* relative energy-balance error above which a run completes with a
                             warning; < 0: the integrator's default */
  double energy_unstable; /* relative energy gain above which a run stops as unstable; < 0:
                             default */
  int spacetime_elements;    /* solver.spacetime.elements_per_block >= 1, default 10 */
  mbsMark spacetime_mark;    /* where solver.spacetime was given (line 0: not given) */
  mbsMark tolerance_mark;    /* where solver.tolerance was given */
  int dt_given;              /* 1: the deck (or an override) gave solver.dt; without it and
                                with a tolerance, dt (the largest step) is t_end / 100 */
} mbsDeckSolver;

typedef struct {
  char file[1024]; /* output path; default: deck base name + ".h5" in the cwd */
  int every;       /* write every k-th step, default 1 */
  double dt;       /* [s] records at k dt independent of the step (0: every k-th step) */
  int xdmf;        /* default 1 */
  int compression; /* deflate level of the time series 1..9, 0: none (`off`); default
                      DECK_DEFAULT_COMPRESSION */
} mbsDeckOutput;

/* output.compression when the deck does not give it (docs/output.md, "Compression") */
#define DECK_DEFAULT_COMPRESSION 1

/* the whole deck */
typedef struct mbsDeck {
  char path[1024]; /* the file it was read from */
  int version;     /* `mbsim:` */
  char title[256];
  double gravity[3]; /* [m/s^2] */
  int nbody, njoint, nload;
  mbsDeckBody *bodies;
  mbsDeckJoint *joints;
  mbsDeckLoad *loads;
  int nchain;
  mbsDeckChain *chains;  /* `chains:` (owned), already expanded into bodies and joints */
  int nbeam, nbeam_node; /* beams and their nodes together */
  mbsDeckBeam *beams;    /* `beams:` (owned) */
  int nground_shape, ncontact;
  mbsDeckShape *ground_shapes; /* `ground: collision:` (owned) */
  mbsDeckContact *contacts;    /* `contacts:` (owned) */
  int nsurface;
  mbsDeckSurface *surfaces; /* `surfaces:` (owned); contact patterns match their names, and
                               their patches are participants after the beam nodes */
  mbsDeckSolver solver;
  mbsDeckOutput output;
  char *text; /* deck text after --set overrides (NUL-terminated, owned) */
  int project_velocities; /* initial.project_velocities: project the initial velocities onto
                             the joints (keeping initial_rate), instead of refusing them */
  int planar;   /* 1: the top-level `planar: {normal: n}`: every beam without its own `planar`
                   and every rigid body moves in a plane normal to n (generated planar joints
                   to the ground, after the deck's own joints: mbsDeckJoint.generated) */
  double planar_normal[3]; /* unit, world */
  mbsMark planar_mark;
  int assemble; /* initial.assemble: project the initial positions onto the joints (mass-
                   weighted least squares), instead of refusing joints that do not hold */
  char *warnings; /* NULL or "file:line:col: text" lines, each ending in a newline (owned): a
                     parameter nothing uses, an angle in radians above 2 pi ... */
} mbsDeck;

/* the beam of body reference b (b >= deck->nbody: a beam node) and its node index in *node;
 * -1 when b is the ground or a body */
static inline int mbs_deck_ref_beam(const mbsDeck *deck, int b, int *node) {
  if (b < deck->nbody) {
    return -1;
  }
  int k = b - deck->nbody;
  for (int i = 0; i < deck->nbeam; i++) {
    if (k < deck->beams[i].node0 + deck->beams[i].nnode) {
      *node = k - deck->beams[i].node0;
      return i;
    }
  }
  return -1;
}

/* one --set override: path like "parameters.m", "bodies.link1.mass", "solver.dt" */
typedef struct {
  const char *path;
  const char *value; /* YAML scalar text */
} mbsOverride;

/* Read and validate a deck.
 *  path:       the YAML file
 *  overrides:  --set entries applied in order before validation (may be NULL if n == 0)
 *  deck:       filled on success; must be released with mbs_deck_free() in every case
 *  err:        on failure, file/line/col/msg of the first problem
 * Returns MBS_OK, MBS_ERR_IO (missing/unreadable file), MBS_ERR_SYNTAX, MBS_ERR_DECK,
 * MBS_ERR_ARGS (an override path that names nothing) or MBS_ERR_NOMEM. */
mbsStatus mbs_deck_load(mbsDeck *deck, const char *path, const mbsOverride *overrides,
                        int noverride, mbsError *err);

/* Read and validate a deck held in memory, exactly as mbs_deck_load() reads a file.
 *  name:       the deck's file name, used in messages and for the default output name
 *  text, len:  the YAML text (len bytes, need not be NUL-terminated; copied)
 * Other arguments and the result as for mbs_deck_load(); MBS_ERR_IO when len exceeds the
 * size limit of deck files. */
mbsStatus mbs_deck_load_text(mbsDeck *deck, const char *name, const char *text, size_t len,
                             const mbsOverride *overrides, int noverride, mbsError *err);

/* release everything a deck owns (accepts a zeroed or partly filled deck) */
void mbs_deck_free(mbsDeck *deck);

#endif
