/* deck.h: the model graph read from a YAML deck (DECK.md, format version 1).
 *
 * mbs_deck_load() parses the file with libyaml, applies --set overrides, resolves
 * $parameters, anchors, aliases and merge keys, validates every value and fills an
 * mbsDeck. Nothing downstream reads YAML: the compiler (model.h) only sees these
 * plain structs. Every entry keeps the source position of its fields so that later
 * stages can still report file:line:column. */
#ifndef MBSIM_DECK_H
#define MBSIM_DECK_H

#include "mbsim/error.h"

#define MBS_NAME_MAX 64

/* source position of a YAML node (1-based; 0 = not from the file) */
typedef struct {
  int line;
  int col;
} mbsMark;

/* X-macro keyword lists: enum value, deck word */
#define MBS_BODY_TYPE_LIST(X)                                                                      \
  X(MBS_BODY_RIGID, "rigid")                                                                       \
  X(MBS_BODY_POINT, "point")

#define MBS_JOINT_TYPE_LIST(X)                                                                     \
  X(MBS_JOINT_SPHERICAL, "spherical")                                                              \
  X(MBS_JOINT_REVOLUTE, "revolute")                                                                \
  X(MBS_JOINT_FIXED, "fixed")                                                                      \
  X(MBS_JOINT_DISTANCE, "distance")

#define MBS_LOAD_TYPE_LIST(X)                                                                      \
  X(MBS_LOAD_FORCE, "force")                                                                       \
  X(MBS_LOAD_TORQUE, "torque")

#define MBS_FRAME_LIST(X)                                                                          \
  X(MBS_FRAME_WORLD, "world")                                                                      \
  X(MBS_FRAME_BODY, "body")

#define MBS_TORQUE_METHOD_LIST(X) X(MBS_TORQUE_CONTRAVARIANT, "contravariant")

#define MBS_PROFILE_LIST(X) X(MBS_PROFILE_CONSTANT, "constant")

/* integrators; "auto" resolves at compile time (model.h) */
#define MBS_INTEGRATOR_LIST(X)                                                                     \
  X(MBS_INTEGRATOR_AUTO, "auto")                                                                   \
  X(MBS_INTEGRATOR_EM, "em")                                                                       \
  X(MBS_INTEGRATOR_MIDPOINT, "midpoint")                                                           \
  X(MBS_INTEGRATOR_EULER, "euler")

#define MBS_ENUM_ENTRY(name, word) name,
typedef enum { MBS_BODY_TYPE_LIST(MBS_ENUM_ENTRY) MBS_BODY_TYPE_COUNT } mbsBodyType;
typedef enum { MBS_JOINT_TYPE_LIST(MBS_ENUM_ENTRY) MBS_JOINT_TYPE_COUNT } mbsJointType;
typedef enum { MBS_LOAD_TYPE_LIST(MBS_ENUM_ENTRY) MBS_LOAD_TYPE_COUNT } mbsLoadType;
typedef enum { MBS_FRAME_LIST(MBS_ENUM_ENTRY) MBS_FRAME_COUNT } mbsFrame;
typedef enum { MBS_TORQUE_METHOD_LIST(MBS_ENUM_ENTRY) MBS_TORQUE_METHOD_COUNT } mbsTorqueMethod;
typedef enum { MBS_PROFILE_LIST(MBS_ENUM_ENTRY) MBS_PROFILE_COUNT } mbsProfileKind;
typedef enum { MBS_INTEGRATOR_LIST(MBS_ENUM_ENTRY) MBS_INTEGRATOR_COUNT } mbsIntegrator;
#undef MBS_ENUM_ENTRY

/* deck word of an enum value (static string) */
const char *mbs_body_type_word(mbsBodyType t);
const char *mbs_joint_type_word(mbsJointType t);
const char *mbs_load_type_word(mbsLoadType t);
const char *mbs_integrator_word(mbsIntegrator t);
/* enum value of a deck word, or -1 */
int mbs_integrator_from_word(const char *word);

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
} mbsDeckBody;

/* a joint between two bodies; body index -1 is ground */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark;
  mbsJointType type;
  int body[2];         /* indices into mbsDeck.bodies, -1 = ground */
  double point[3];     /* [m] world, t = 0 (all but distance) */
  double axis[3];      /* unit vector, world, t = 0 (revolute); zero if not given */
  int has_points;      /* distance: 1 if `points` was given */
  double points[2][3]; /* distance: attachment points, world, t = 0 (default: the
                          bodies' centres of mass; ground requires `points`) */
} mbsDeckJoint;

typedef struct {
  mbsProfileKind kind;
} mbsDeckProfile;

/* an applied load */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark;
  mbsLoadType type;
  int body;        /* index into mbsDeck.bodies (not ground, not fixed) */
  double value[3]; /* [N] or [N m] */
  mbsFrame frame;  /* components in world or in the body's director frame */
  int has_point;
  double point[3];        /* force: application point, world at t = 0 (default: centre) */
  mbsTorqueMethod method; /* torque only */
  mbsDeckProfile profile;
} mbsDeckLoad;

typedef struct {
  mbsIntegrator integrator;
  double dt;                 /* [s] > 0, default 1e-3 */
  double t_end;              /* [s] > 0, default 1.0 */
  double newton_tolerance;   /* default 1e-10 */
  int newton_max_iterations; /* default 25 */
} mbsDeckSolver;

typedef struct {
  char file[1024]; /* output path; default: deck base name + ".h5" in the cwd */
  int every;       /* write every k-th step, default 1 */
  int xdmf;        /* default 1 */
} mbsDeckOutput;

/* the whole deck */
typedef struct {
  char path[1024]; /* the file it was read from */
  int version;     /* `mbsim:` */
  char title[256];
  double gravity[3]; /* [m/s^2] */
  int nbody, njoint, nload;
  mbsDeckBody *bodies;
  mbsDeckJoint *joints;
  mbsDeckLoad *loads;
  mbsDeckSolver solver;
  mbsDeckOutput output;
  char *text; /* deck text after --set overrides (NUL-terminated, owned) */
} mbsDeck;

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

/* release everything a deck owns (accepts a zeroed or partly filled deck) */
void mbs_deck_free(mbsDeck *deck);

#endif
