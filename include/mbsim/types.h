/* types.h: the model's vocabulary, shared by every layer (deck reader, compiler, elements,
 * solver, output, command line): names, source positions, the enums of body, joint, load and
 * element kinds, frames, torque methods, profiles, integrators and linear solvers, each from
 * one X-macro list (enum value, word), and their word tables. It depends on nothing else, so
 * the kernel links without the deck reader (`make check-layering`). */
#ifndef MBSIM_TYPES_H
#define MBSIM_TYPES_H

/* bytes of the name of a body, joint or load, its NUL included */
#define MBS_NAME_MAX 64

/* source position of a YAML node (1-based; 0 = not from the file) */
typedef struct {
  int line;
  int col;
} mbsMark;

/* X-macro keyword lists: enum value, word (the deck's, the output's and the messages') */
#define MBS_BODY_TYPE_LIST(X)                                                                      \
  X(MBS_BODY_RIGID, "rigid")                                                                       \
  X(MBS_BODY_POINT, "point")

#define MBS_JOINT_TYPE_LIST(X)                                                                     \
  X(MBS_JOINT_SPHERICAL, "spherical")                                                              \
  X(MBS_JOINT_REVOLUTE, "revolute")                                                                \
  X(MBS_JOINT_FIXED, "fixed")                                                                      \
  X(MBS_JOINT_DISTANCE, "distance")                                                                \
  X(MBS_JOINT_CYLINDRICAL, "cylindrical")                                                          \
  X(MBS_JOINT_PRISMATIC, "prismatic")                                                              \
  X(MBS_JOINT_UNIVERSAL, "universal")                                                              \
  X(MBS_JOINT_PLANAR, "planar")                                                                    \
  X(MBS_JOINT_SLIDE_ON_BEAM, "slide_on_beam")

#define MBS_LOAD_TYPE_LIST(X)                                                                      \
  X(MBS_LOAD_FORCE, "force")                                                                       \
  X(MBS_LOAD_TORQUE, "torque")                                                                     \
  X(MBS_LOAD_JOINT_TORQUE, "joint_torque")                                                         \
  X(MBS_LOAD_JOINT_FORCE, "joint_force")                                                           \
  X(MBS_LOAD_SPRING, "spring")                                                                     \
  X(MBS_LOAD_ROTATIONAL_SPRING, "rotational_spring")                                               \
  X(MBS_LOAD_DISTRIBUTED_FORCE, "distributed_force")

#define MBS_FRAME_LIST(X)                                                                          \
  X(MBS_FRAME_WORLD, "world")                                                                      \
  X(MBS_FRAME_BODY, "body")

/* torque methods: contravariant directors (seed 000 eq. 61, the default), the covariant
 * midpoint directors (eq. 70, wrong: kept for comparison), coordinate augmentation (seed 004
 * sec. 5, joint torques only) */
#define MBS_TORQUE_METHOD_LIST(X)                                                                  \
  X(MBS_TORQUE_CONTRAVARIANT, "contravariant")                                                     \
  X(MBS_TORQUE_NAIVE, "naive")                                                                     \
  X(MBS_TORQUE_AUGMENTED, "augmented")

/* augmentation constraints (seed 004 eq. 21-23): variable a = cos gamma_n, b = sin gamma_n
 * (eq. 23, the default) or classical a = b = 1 (eq. 21) */
#define MBS_AUGMENTATION_LIST(X)                                                                   \
  X(MBS_AUGMENTATION_VARIABLE, "variable")                                                         \
  X(MBS_AUGMENTATION_CLASSICAL, "classical")

/* time profiles f(t) (docs/decks.md "Profiles"; src/util/profile.c) */
#define MBS_PROFILE_LIST(X)                                                                        \
  X(MBS_PROFILE_CONSTANT, "constant")                                                              \
  X(MBS_PROFILE_WINDOW, "window")                                                                  \
  X(MBS_PROFILE_RAMP, "ramp")                                                                      \
  X(MBS_PROFILE_SINE, "sine")                                                                      \
  X(MBS_PROFILE_TABLE, "table")                                                                    \
  X(MBS_PROFILE_EXPRESSION, "expression")

/* integrators; "auto" resolves at compile time (model.h) and never picks static */
#define MBS_INTEGRATOR_LIST(X)                                                                     \
  X(MBS_INTEGRATOR_AUTO, "auto")                                                                   \
  X(MBS_INTEGRATOR_EM, "em")                                                                       \
  X(MBS_INTEGRATOR_MIDPOINT, "midpoint")                                                           \
  X(MBS_INTEGRATOR_EULER, "euler")                                                                 \
  X(MBS_INTEGRATOR_GENALPHA, "genalpha")                                                           \
  X(MBS_INTEGRATOR_STATIC, "static")                                                               \
  X(MBS_INTEGRATOR_MOREAU, "moreau")                                                               \
  X(MBS_INTEGRATOR_SPACETIME, "spacetime")

/* sparse LU of the Newton matrix (src/solver/linsolve.c) */
#define MBS_LINEAR_SOLVER_LIST(X)                                                                  \
  X(MBS_LINEAR_UMFPACK, "umfpack")                                                                 \
  X(MBS_LINEAR_KLU, "klu")

/* element kinds: potentials and non-potential forces (elements.h has the function table) */
#define MBS_ELEM_KIND_LIST(X)                                                                      \
  X(MBS_ELEM_GRAVITY, "gravity")                                                                   \
  X(MBS_ELEM_FORCE, "force")                                                                       \
  X(MBS_ELEM_TORQUE, "torque")                                                                     \
  X(MBS_ELEM_JOINT_TORQUE, "joint_torque")                                                         \
  X(MBS_ELEM_JOINT_FORCE, "joint_force")                                                           \
  X(MBS_ELEM_AUGMENTED_TORQUE, "augmented_torque")                                                 \
  X(MBS_ELEM_DRIVE, "drive")                                                                       \
  X(MBS_ELEM_SPRING, "spring")                                                                     \
  X(MBS_ELEM_ROTATIONAL_SPRING, "rotational_spring")                                               \
  X(MBS_ELEM_BEAM, "beam")                                                                         \
  X(MBS_ELEM_JOINT_CONTROL, "joint_control")                                                       \
  X(MBS_ELEM_SLIDE, "slide_on_beam")

/* kinds of attachment frames (model.h): what joints, loads and springs attach to */
#define MBS_ATTACH_KIND_LIST(X)                                                                    \
  X(MBS_ATTACH_GROUND, "ground")                                                                   \
  X(MBS_ATTACH_STATIC, "fixed body")                                                               \
  X(MBS_ATTACH_POINT, "point mass")                                                                \
  X(MBS_ATTACH_DIRECTORS, "rigid body")                                                            \
  X(MBS_ATTACH_BEAM_NODE, "beam node")

/* contact geometry (include/mbsim/contact.h): a shape on a body or on the ground; a plane only
 * on the ground */
#define MBS_SHAPE_LIST(X)                                                                          \
  X(MBS_SHAPE_SPHERE, "sphere")                                                                    \
  X(MBS_SHAPE_BOX, "box")                                                                          \
  X(MBS_SHAPE_CAPSULE, "capsule")                                                                  \
  X(MBS_SHAPE_POINTS, "points")                                                                    \
  X(MBS_SHAPE_PLANE, "plane")                                                                      \
  X(MBS_SHAPE_RING, "ring")                                                                        \
  X(MBS_SHAPE_PATCH, "patch")

/* the drawn shape of a rigid body: its deck `shape` (which also gives its mass and inertia
 * with `density`), kept for viewers */
#define MBS_VISUAL_LIST(X)                                                                         \
  X(MBS_VISUAL_NONE, "none")                                                                       \
  X(MBS_VISUAL_BOX, "box")                                                                         \
  X(MBS_VISUAL_SPHERE, "sphere")                                                                   \
  X(MBS_VISUAL_CYLINDER, "cylinder")

/* contact force laws: set-valued (Signorini + Newton impact + Coulomb, seed 002 eq. 2.28-2.35)
 * or a spring-damper normal law with regularized friction (seed 002 sec. 2.3.1) */
#define MBS_CONTACT_LAW_LIST(X)                                                                    \
  X(MBS_CONTACT_UNILATERAL, "unilateral")                                                          \
  X(MBS_CONTACT_PENALTY, "penalty")

/* moreau integrator variants: theta method (seed 002 eq. 5.3-5.5) or semi-explicit (eq.
 * 2.36-2.37) */
#define MBS_MOREAU_VARIANT_LIST(X)                                                                 \
  X(MBS_MOREAU_THETA, "theta")                                                                     \
  X(MBS_MOREAU_EXPLICIT, "explicit")

#define MBS_ENUM_ENTRY(name, word) name,
typedef enum { MBS_BODY_TYPE_LIST(MBS_ENUM_ENTRY) MBS_BODY_TYPE_COUNT } mbsBodyType;
typedef enum { MBS_JOINT_TYPE_LIST(MBS_ENUM_ENTRY) MBS_JOINT_TYPE_COUNT } mbsJointType;
typedef enum { MBS_LOAD_TYPE_LIST(MBS_ENUM_ENTRY) MBS_LOAD_TYPE_COUNT } mbsLoadType;
typedef enum { MBS_FRAME_LIST(MBS_ENUM_ENTRY) MBS_FRAME_COUNT } mbsFrame;
typedef enum { MBS_TORQUE_METHOD_LIST(MBS_ENUM_ENTRY) MBS_TORQUE_METHOD_COUNT } mbsTorqueMethod;
typedef enum { MBS_AUGMENTATION_LIST(MBS_ENUM_ENTRY) MBS_AUGMENTATION_COUNT } mbsAugmentation;
typedef enum { MBS_PROFILE_LIST(MBS_ENUM_ENTRY) MBS_PROFILE_COUNT } mbsProfileKind;
typedef enum { MBS_INTEGRATOR_LIST(MBS_ENUM_ENTRY) MBS_INTEGRATOR_COUNT } mbsIntegrator;
typedef enum { MBS_LINEAR_SOLVER_LIST(MBS_ENUM_ENTRY) MBS_LINEAR_SOLVER_COUNT } mbsLinearSolver;
typedef enum { MBS_ELEM_KIND_LIST(MBS_ENUM_ENTRY) MBS_ELEM_KIND_COUNT } mbsElemKind;
typedef enum { MBS_ATTACH_KIND_LIST(MBS_ENUM_ENTRY) MBS_ATTACH_KIND_COUNT } mbsAttachKind;
typedef enum { MBS_SHAPE_LIST(MBS_ENUM_ENTRY) MBS_SHAPE_COUNT } mbsShapeKind;
typedef enum { MBS_VISUAL_LIST(MBS_ENUM_ENTRY) MBS_VISUAL_COUNT } mbsVisualKind;
typedef enum { MBS_CONTACT_LAW_LIST(MBS_ENUM_ENTRY) MBS_CONTACT_LAW_COUNT } mbsContactLaw;
typedef enum { MBS_MOREAU_VARIANT_LIST(MBS_ENUM_ENTRY) MBS_MOREAU_VARIANT_COUNT } mbsMoreauVariant;
#undef MBS_ENUM_ENTRY

/* the words of each list, indexed by enum value (src/util/words.c) */
extern const char *const mbs_body_type_words[MBS_BODY_TYPE_COUNT];
extern const char *const mbs_joint_type_words[MBS_JOINT_TYPE_COUNT];
extern const char *const mbs_load_type_words[MBS_LOAD_TYPE_COUNT];
extern const char *const mbs_frame_words[MBS_FRAME_COUNT];
extern const char *const mbs_torque_method_words[MBS_TORQUE_METHOD_COUNT];
extern const char *const mbs_augmentation_words[MBS_AUGMENTATION_COUNT];
extern const char *const mbs_profile_words[MBS_PROFILE_COUNT];
extern const char *const mbs_integrator_words[MBS_INTEGRATOR_COUNT];
extern const char *const mbs_linear_solver_words[MBS_LINEAR_SOLVER_COUNT];
extern const char *const mbs_elem_kind_words[MBS_ELEM_KIND_COUNT];
extern const char *const mbs_shape_words[MBS_SHAPE_COUNT];
extern const char *const mbs_visual_words[MBS_VISUAL_COUNT];
extern const char *const mbs_contact_law_words[MBS_CONTACT_LAW_COUNT];
extern const char *const mbs_moreau_variant_words[MBS_MOREAU_VARIANT_COUNT];

/* What each integrator is, for the compiler, the run and the command to ask instead of
 * branching on its name (src/util/integrators.c: one entry per integrator; the solver's
 * function table is src/solver/integrator.c) */
typedef struct {
  int stepwise;          /* 1: steps through time with velocities that may jump between steps,
                            so joints may engage and release (`active`) and a PID law may
                            integrate its error (control.ki): not static, spacetime */
  int equilibrium;       /* 1: solves equilibria without inertia (static): its velocities are
                            zero by definition, a record carries them as they are (no
                            projection onto the constraints) and the multipliers of its last
                            solution (no index-1 solve); no kinetic energy, so its energy
                            balance is reported, not checked; it controls its load increments
                            itself */
  int contacts;          /* 1: integrates contacts (moreau) */
  int pin_pivots;        /* 1: the one-step schemes whose Newton and KKT factorizations keep
                            the pivot order of t = 0 (mbs_solver_pin) */
  int action;            /* 1: records the action integrals of its temporal elements
                            (/solver/action: spacetime) */
  int numerical_dissipation; /* 1: names the energy its own damping takes out
                                (/energy/numerical_dissipation: the theta method) */
  double energy_warning; /* default relative energy-balance error above which a run warns:
                            1e-6 where the balance closes to round-off, 1e-2 for second-order
                            schemes, 0.2 for first-order ones */
  double energy_warning_explicit; /* the same for its explicit variant (moreau's
                                     semi-explicit: first order, conserves nothing) */
  const char *unstable_advice; /* what to do when a run blows up (NULL: "Try a smaller dt") */
  int error_control;     /* 1: solver.tolerance may choose its steps (solver/advance.c); auto's
                            1: it becomes em, or moreau with contacts, which the compiler then
                            refuses at the key */
} mbsIntegratorPolicy;

/* the entry of integrator k (auto's for a value out of range; never NULL) */
const mbsIntegratorPolicy *mbs_integrator_policy(mbsIntegrator k);

/* Settings that go from a deck section into the compiled model as they are: one field list
 * per section, X(type, name, default), from which the deck's struct (mbsDeckSolver,
 * mbsDeckContact), the model's (mbsModel, mbsContactSpec), the reader's defaults and the
 * compiler's copy are generated, so an option is added in one line. Settings the compiler
 * resolves (the integrator, the energy thresholds, spacetime's elements per block) are not
 * here. MBS_FIELD_MEMBER declares a list's members. */
#define MBS_FIELD_MEMBER(type, name, def) type name;

/* the solver section (docs/decks.md "Solver") */
#define MBS_SOLVER_FIELDS(X)                                                                       \
  X(double, dt, 1e-3)          /* [s] > 0, the step */                                          \
  X(double, t_end, 1.0)        /* [s] > 0 */                                                    \
  X(double, newton_tolerance, 1e-10)                                                             \
  X(int, newton_max_iterations, 25)                                                              \
  X(int, newton_reuse, 1)      /* 1: modified Newton, reuse the factorization while Newton      \
                                  converges fast */                                              \
  X(mbsLinearSolver, linear_solver, MBS_LINEAR_KLU)                                              \
  X(double, rho_inf, 0.8)      /* genalpha spectral radius at infinity in [0, 1] */             \
  X(int, max_halvings, 10)     /* step control: halve dt at most this often per step */         \
  X(int, static_gravity_full, 0) /* solver.static.gravity: 0 ramp (gravity follows the load     \
                                    factor min(t, 1)), 1 full (from the first increment) */     \
  X(double, moreau_theta, 0.5) /* solver.moreau.theta in [0.5, 1] */                            \
  X(mbsMoreauVariant, moreau_variant, MBS_MOREAU_THETA)                                          \
  X(double, contact_tolerance, 1e-10) /* solver.moreau.contact_tolerance > 0: residual of the   \
                                         prox equations */                                       \
  X(int, contact_iterations, 100) /* solver.moreau.contact_iterations >= 1: iteration cap of    \
                                     the contact solver */                                       \
  X(int, spacetime_degree, 1)  /* solver.spacetime.degree: Lagrange degree in time, 1 or 2 */ \
  X(double, tolerance, 0.0)    /* solver.tolerance: the local error allowed per step, relative  \
                                  with an absolute floor (solver/advance.c); dt is then the     \
                                  largest step. 0: fixed steps of dt */

/* a contacts entry's law and its constants (docs/decks.md "Contacts") */
#define MBS_CONTACT_FIELDS(X)                                                                      \
  X(mbsContactLaw, law, MBS_CONTACT_UNILATERAL)                                                  \
  X(double, restitution, 0.0)       /* Newton's normal restitution in [0, 1] */                 \
  X(double, friction, 0.0)          /* Coulomb coefficient >= 0 */                              \
  X(double, stiffness, 0.0)         /* penalty: [N/m] > 0, required */                          \
  X(double, damping, 0.0)           /* penalty: [N s/m] >= 0 */                                 \
  X(double, friction_velocity, 1e-3) /* penalty: [m/s] > 0, regularization of Coulomb's law */  \
  X(double, margin, 1e-3)           /* [m] >= 0, gap below which a pair is a contact candidate */

/* word of an enum value (static string; "unknown" out of range) */
const char *mbs_body_type_word(mbsBodyType t);
const char *mbs_joint_type_word(mbsJointType t);
const char *mbs_load_type_word(mbsLoadType t);
const char *mbs_integrator_word(mbsIntegrator t);
const char *mbs_linear_solver_word(mbsLinearSolver t);
const char *mbs_elem_kind_word(mbsElemKind t);
const char *mbs_shape_word(mbsShapeKind t);
const char *mbs_contact_law_word(mbsContactLaw t);
/* enum value of a body shape word ("box", "sphere", "cylinder"), or MBS_VISUAL_NONE */
mbsVisualKind mbs_visual_from_word(const char *word);
/* enum value of an integrator word, or -1 */
int mbs_integrator_from_word(const char *word);

/* an expression profile f(t) with its derivatives (opaque; src/util/profile.c) */
typedef struct mbsProfileExpr mbsProfileExpr;

/* the eigenvalues of the symmetric 3x3 matrix m (row-major) into lam, ascending (principal
 * moments of inertia; src/util/eig3.c) */
void mbs_sym3_eigenvalues(const double m[9], double lam[3]);

#endif
