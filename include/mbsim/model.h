/* model.h: the compiled model, read-only while the solver runs (MuJoCo's mjModel split),
 * with one exception: the control laws' run state behind ctrl_state (the error integrals of
 * PID laws), which mbs_data_create zeroes and mbs_solver_step advances, because the element
 * functions see only the model (one run per model at a time).
 *
 * Every body is a stack of 3-vectors in the world frame ("vector nodes", seed 000 sec. 2-5):
 * a point mass has one node x, a rigid body four: phi, d1, d2, d3. So q in R^nq with
 * nq = 3 * nnode, the mass matrix M = M^ab (x) I3 is constant (seed 000 eq. 15), and the
 * equations of motion are one DAE
 *     M q'' + grad V(q) + G(q)^T lambda = F(q, q', t),   g(q) = 0.
 * Bilateral constraints (rigidity, joints) are all at most quadratic in q and are stored
 * in one generic form (mbsConRow); potentials and non-potential forces are elements with
 * a small table of functions (elements.h). */
#ifndef MBSIM_MODEL_H
#define MBSIM_MODEL_H

#include <math.h>

#include "mbsim/error.h"
#include "mbsim/types.h"

/* max vector nodes one constraint row touches (two bodies of four nodes each); make_row in
 * compile.c checks it */
#define MBS_CON_MAXNODE 8
/* coordinates of an element between two frames (two rigid bodies, 24, and up to three
 * scalars): the bound of the two-body kinds' own scratch (springs, drives, joint loads,
 * augmentation; asserted there). Elements in general have no size limit: qidx points into
 * the model's pool, m->elem_maxq is the largest element, and the solver's maps and scratch
 * are sized from it (solver/system.c). */
#define MBS_TWO_BODY_MAXQ 27
/* doubles of one joint's engagement state (mbsModel.joint_engage) */
#define MBS_JOINT_ENGAGE_LEN 15

/* max constraint rows of one constraint element (compile checks it) */
#define MBS_ELEM_MAXCON 6

/* One bilateral constraint row, at most quadratic in q (seed 000 eq. 22, 48-49; seed 004
 * eq. 7). With the two linear vector expressions
 *     A(q) = sum_k wa[k] q_node[k] + ca,   B(q) = sum_k wb[k] q_node[k] + cb
 * the row is  g(q) = s (A . B) + n . A + c0.
 * Rigidity rows are s = 1/2, B = A (half squared length) or s = 1 (dot product); a
 * spherical joint's rows are s = 0 with n a unit vector; a distance joint is
 * s = 1/2, B = A = p2 - p1, c0 = -L^2/2. Its Hessian is constant:
 *     d2g / dq_k dq_l = s (wa[k] wb[l] + wb[k] wa[l]) I3. */
typedef struct {
  int nnode;                  /* distinct vector nodes touched */
  int node[MBS_CON_MAXNODE];  /* global node indices */
  double wa[MBS_CON_MAXNODE]; /* weights of A */
  double wb[MBS_CON_MAXNODE]; /* weights of B */
  double ca[3], cb[3];        /* constant parts (static bodies, ground) */
  double s;
  double n[3];
  double c0;
  int joint; /* owning joint index, or -1 for a body's rigidity */
  int body;  /* owning body for rigidity rows, else -1 (also for a beam node's rigidity) */
  int jrow;  /* its row number within the joint (0-based, as listed in docs/decks.md,
                whatever was dropped), or within the body's rigidity */
} mbsConRow;

#define MBS_ELEM_NPARAM 32
#define MBS_ELEM_NIPARAM 4

/* a time profile f(t) that scales a load or a prescribed motion (docs/decks.md "Profiles";
 * evaluated by src/util/profile.c) */
typedef struct {
  mbsProfileKind kind;
  double p[3]; /* window, ramp: t0, t1 [s]; sine: amplitude, frequency [Hz], phase [rad] */
  int ntab;    /* table: number of points */
  int tab0;    /* table: first point in mbsModel.profile_table */
  mbsProfileExpr *ev; /* expression: f(t) and its derivatives (owned by the model), else NULL */
} mbsProfile;

/* Attachment frames: what joints, loads and springs attach to (the design's "frames"; named
 * attach_* so as not to clash with MBS_FRAME_LIST, a torque's world/body frame). Frame 0 is
 * the ground; then one frame per body (body_attach): a rigid body's director frame (nodes
 * phi, d1, d2, d3), a point mass's single node x, a fixed body's static frame; then one per
 * beam node (kind "beam node": its director frame, the same point expression as a rigid
 * body's; mbsBeam.attach0). A point fixed to a frame is x = phi + c^i d_i
 * (mbs_attach_point); on a static frame c is the world point itself. */
/* the ground's attachment frame */
#define MBS_ATTACH_GROUND_ID 0

/* The linear expression of a point (or direction) fixed to a frame over its vector nodes:
 * x = sum_k w[k] q_node[k] + c (seed 004 eq. 4-5), the node weights of constraint rows. */
typedef struct {
  int n;       /* nodes: 0 (static), 1 (point mass or a direction's none), up to 4 */
  int node[4]; /* node indices (global, or an element's local blocks) */
  double w[4]; /* their weights: 1, c^1, c^2, c^3 for a point; C^1, C^2, C^3 for a direction */
  double c[3]; /* constant part (static frames) */
} mbsPointWeights;

/* one element instance */
typedef struct {
  mbsElemKind kind;
  int body;                      /* body it acts on (the first one for two-body elements; -1
                                    for beam elements and elements on beam nodes) */
  int attach[2];                 /* attachment frames of its sides (one-body kinds: attach[0]
                                    is the body's, attach[1] = -1) */
  int load;                      /* deck load index, or -1 */
  int joint;                     /* owning joint, or -1 (its constraint rows count for the
                                    joint's reaction) */
  int ncon;                      /* constraint rows of a constraint element (else 0) */
  int con0;                      /* their first global row */
  int nq;                        /* coordinates touched (body coordinates, then scalars) */
  int qadr;                      /* first entry in mbsModel.elem_qidx_pool */
  int *qidx;                     /* (nq) their global indices (points into the model's pool,
                                    no size limit) */
  double param[MBS_ELEM_NPARAM]; /* kind-specific constants (elements.c documents them) */
  int iparam[MBS_ELEM_NIPARAM];
} mbsElem;

/* ---- contacts (include/mbsim/contact.h has the geometry functions) ----
 * A shape is fixed to an attachment frame: a body's (rigid body or point mass) or the
 * ground's. Its centre is the frame point c (mbs_attach_point: phi + c^i d_i; on the ground
 * the world point), its axes the frame directions C (column i = axis i, components c^j on the
 * frame's directors; on the ground world components), so that the shape moves with the
 * frame exactly as a joint point does. */
typedef struct {
  mbsShapeKind kind;
  int body;       /* owner body, -1: the ground */
  int attach;     /* attachment frame (MBS_ATTACH_GROUND_ID for the ground) */
  double size[3]; /* sphere: r; box: half edges; capsule: r, half length (along axis 3);
                     plane: unused */
  double c[3];    /* centre in frame coordinates (plane: a point of it) */
  double C[9];    /* axes in frame coordinates, row-major, column i = axis i (plane: axis 3 is
                     the normal, pointing out of the solid side) */
  int npts, pt0;  /* points: count and first point in mbsModel.contact_pts (shape axes, about
                     the centre) */
  double radius;  /* [m] bounding sphere about the centre (broad phase); INFINITY for a plane;
                     a segment's at t = 0 (the solver widens it as the segment stretches) */
  int segment;    /* 1: a beam segment, a capsule of radius size[0] from the point phi of frame
                     attach to that of frame attach + 1 (consecutive nodes of a beam): its centre,
                     axis 3 and half length follow the two points (mbs_shape_pose); c, C and
                     size[1] are unused. 0: a shape fixed to one frame */
  int corner[4];  /* a patch (MBS_SHAPE_PATCH) only: the attachment frames of its corner nodes
                     (point masses) at (xi, eta) = (0, 0), (1, 0), (1, 1), (0, 1); attach is
                     corner[0]; c, C and size are unused */
  int closed;     /* a patch only: bit 0 its edge xi = 1, bit 1 its edge eta = 1 is the
                     surface's border, so the patch owns it (an inner edge belongs to the next
                     patch: a point on it is that patch's) */
  int nbr[2][2];  /* a patch only: the attachment frames of the far corners of the patch across
                     its edge xi = 0 (nbr[0]: that patch's corners (0, 0), (0, 1)) and across
                     its edge eta = 0 (nbr[1]: its corners (0, 0), (1, 0)); -1 at the surface's
                     border. The patch takes the points over the convex side of those edges
                     that neither patch's projection reaches (mbs_collide) */
  int surface;    /* a segment only, 1: its contact points are material points of the capsule's
                     surface, fixed to the two nodes' directors (the impulses have moments on
                     them); 0: points of its axis */
  int owner;      /* what it moves with: its body, nbody + the beam's index for a beam's node
                     or segment, -1 the ground; shapes of one owner never make a pair */
  int fixed;      /* 1: it never moves (the ground's, a fixed body's); two such never pair */
  int paired;     /* 1: some contacts entry pairs it with a shape it may touch */
  char name[MBS_NAME_MAX]; /* "die3" (the body's name, with "#2" for its second shape) or the
                              ground entry's name */
  mbsMark mark;            /* deck position of its entry */
} mbsShape;

/* one `contacts:` entry: the law and its constants */
typedef struct {
  char name[MBS_NAME_MAX];
  mbsMark mark;
  MBS_CONTACT_FIELDS(MBS_FIELD_MEMBER) /* the deck's law and constants (mbsim/types.h) */
  int paired;               /* 1: it names a pair of shapes that may touch (some of them may
                               belong to an earlier entry) */
} mbsContactSpec;

/* which side of a contacts entry a shape is on (mbsModel.member_side, a bit set) */
#define MBS_MEMBER_FIRST 1  /* matched by the entry's first pattern */
#define MBS_MEMBER_SECOND 2 /* matched by its second */
#define MBS_MEMBER_PAIRED 4 /* the other side has a shape it may touch (see mbsShapePair) */

/* the shapes one shape touches at once in mbsModel.contact_max (the kissing number of equal
 * spheres) */
#define MBS_CONTACT_NEIGHBOURS 12

/* a pair of shapes that may touch and the contacts entry it belongs to (the broad phase's
 * candidates, a contact's identity): a < b, so the ground's shapes (the last) are b. Two
 * shapes may touch when they have different owners and are not both fixed */
typedef struct {
  int a, b; /* shape indices */
  int spec; /* its contacts: entry */
} mbsShapePair;

/* A beam (docs/decks.md "Beams"): a geometrically exact director beam (Simo-Reissner in
 * director form, seed 000 sec. 5, seed 001). Its node k is a director frame like a rigid
 * body's: vector nodes node0 + 4 k .. node0 + 4 k + 3 are phi, d1, d2, d3 (d1 the tangent at
 * t = 0, d2 the section's `up` axis, d3 = d1 x d2), with the six rigidity rows of a rigid
 * body, and attachment frame attach0 + k (kind "beam node"). Its elements are
 * m->elem[elem0 .. elem0 + nelem - 1] (kind "beam"), element j on nodes order j .. order j
 * + order. */
typedef struct {
  char name[MBS_NAME_MAX];
  int order;     /* 1: two-node elements, 2: three-node elements */
  int nelem;     /* elements */
  int nnode;     /* nodes: order nelem + 1 */
  int node0;     /* first vector node (phi of node 0) */
  int attach0;   /* attachment frame of node 0 */
  int elem0;     /* first element */
  double length; /* [m] arc length at t = 0 */
  double k[6];   /* section stiffnesses EA, GA2, GA3 [N], GJ, EI2, EI3 [N m^2] */
  double rho[3]; /* per unit length: rho A [kg/m], rho I2, rho I3 [kg m] (I2 = int x3^2 dA,
                    I3 = int x2^2 dA; d2 carries rho I3, d3 rho I2) */
  double damping; /* [s] stiffness-proportional (Kelvin-Voigt) factor */
  double section[2]; /* [m] the section's extent, for viewers: a rectangle's h (along d2) and w
                        (along d3); a circle's diameter twice; explicit constants A, I2, I3: the
                        rectangle of the same radii of gyration, sqrt(12 I3 / A), sqrt(12 I2 / A) */
  int section_circle; /* 1: the section is a circle (section[0] = section[1] = its diameter) */
  mbsMark mark;   /* deck position of its entry */
} mbsBeam;

typedef struct mbsModel {
  /* sizes */
  int nq;      /* coordinates: 3 nnode vector-node coordinates, then nscalar scalars */
  int nnode;   /* vector nodes */
  int nscalar; /* scalar coordinates (e.g. augmentation angles, seed 004 sec. 5) */
  int ncon;    /* bilateral constraint rows: nrow quadratic rows, then element rows */
  int nrow;    /* generic quadratic rows (con) */
  int ndof;    /* nq - ncon (the rows left after dropping redundant ones are independent);
                  with joints that engage and release, of the first phase (the zero rows of
                  joints released at t = 0 not counted) */
  int nbody, njoint, nload, nelem;
  int nattach;   /* attachment frames: the ground, then one per body, then one per beam node */
  int elem_maxq; /* largest element's nq (the solver's element scratch and maps) */

  /* coordinates */
  char *coord_names;  /* (nq x MBS_NAME_MAX*2) labels like "link1.d2.z" */
  int coord_name_len; /* stride of coord_names */
  double *q0, *v0;    /* (nq) initial state [m, 1] and [m/s, 1/s] */
  int *node_position; /* (nnode) 1: a position (phi, point), 0: a director; linear
                         momentum is sum over position nodes a of M^ab v_b */

  /* bodies */
  char (*body_name)[MBS_NAME_MAX];
  mbsBodyType *body_type; /* (nbody) */
  int *body_fixed;        /* (nbody) 1: welded to ground, no coordinates */
  int *body_node;         /* (nbody) first vector node, -1 if fixed */
  double *body_mass;      /* (nbody) [kg] */
  double *body_e;         /* (nbody x 3) [kg m] e^i = M theta_c^i (seed 000 eq. 14) */
  double *body_E;         /* (nbody x 9) [kg m^2] E^ij about phi (seed 000 eq. 14) */
  double *body_ref;       /* (nbody x 3) [m] phi relative to the centre, body axes */
  double *body_pos0;      /* (nbody x 3) [m] centre of mass at t = 0 */
  double *body_R0;        /* (nbody x 9) directors at t = 0, column i = d_i */
  int *body_attach;       /* (nbody) the body's attachment frame */
  mbsVisualKind *body_visual; /* (nbody) the deck's `shape` (viewers only; MBS_VISUAL_NONE: none),
                                 centred on the centre of mass, body axes */
  double *body_visual_size;   /* (nbody x 3) [m] box: edges a, b, c; sphere: r; cylinder: radius,
                                 length (its axis along body axis 3) */

  /* attachment frames (MBS_ATTACH_KIND_LIST) */
  mbsAttachKind *attach_kind;        /* (nattach) */
  int *attach_node;                  /* (nattach) first vector node (phi or x), -1 if static */
  int *attach_body;                  /* (nattach) owner body, -1 for the ground */
  char (*attach_name)[MBS_NAME_MAX]; /* (nattach) for messages ("ground", the body's name) */
  double *attach_pos0;               /* (nattach x 3) [m] reference point phi at t = 0 */
  double *attach_R0;                 /* (nattach x 9) directors at t = 0, column i = d_i */

  /* constant mass matrix M^ab (x) I3, node level, a <= b (seed 000 eq. 15) */
  int nmass, mass_cap;  /* entries, allocated entries (grows while compiling) */
  int *mass_a, *mass_b; /* (nmass) node indices */
  double *mass_val;     /* (nmass) [kg, kg m, kg m^2] */

  /* constraints */
  mbsConRow *con; /* (nrow) quadratic rows; mbs_rows_begin walks them with the element rows */
  int con_cap;    /* allocated rows */

  /* joint rows dropped at compile time because they repeat the others (a closed loop with
   * redundant equations, mbs_model_drop_redundant): not in con or the Newton system, kept
   * for the minimum-norm reactions of their loop */
  int ndrop;
  mbsConRow *drop; /* (ndrop) in joint order, jrow says which row of the joint */
  /* the loop block of the minimum-norm reactions (mbs_model_min_norm_reactions; also the
   * loops a joint that engages or releases closes, where a phase may drop rows): kept rows
   * (global indices, quadratic rows < nrow, then element rows) and the coordinates they
   * touch; red_nrow = 0 when the block was too large to handle densely */
  int red_nrow, red_ncol;
  int *red_row;    /* (red_nrow) */
  int *red_colmap; /* (nq) coordinate -> block column, -1 */
  int red_nwork;   /* doubles of workspace it needs */

  /* joints */
  char (*joint_name)[MBS_NAME_MAX];
  mbsJointType *joint_type; /* (njoint) */
  int *joint_con;           /* (njoint) first constraint row */
  int *joint_ncon;          /* (njoint) number of rows */
  int *joint_elem;          /* (njoint x 2) the joint's constraint elements lie in elem[first,
                               last + 1) (among others); NULL: anywhere */
  mbsMark *joint_mark;      /* (njoint) deck position */
  int *joint_body;          /* (njoint x 2) deck body indices, -1 = ground or a beam node
                               (joint_attach says which) */
  int *joint_attach;        /* (njoint x 2) attachment frames of its two sides */
  mbsElem *joint_frame;     /* (njoint) the joint's two sides as a two-sided element (no
                               kind): body-fixed frames d'_a and points of both bodies, for
                               /joints/coordinates (mbs_joint_coordinates) */
  double *joint_point;      /* (njoint x 3) the joint point c on its second side's frame
                               (mbs_attach_point; the world point if static) */
  double *joint_point_first; /* (njoint x 3) the same on its first side's frame (viewers: a
                                distance joint's other end) */
  /* joints that engage and release (`active`, docs/decks.md): joint j holds from the first
   * step that starts at t >= joint_from[j] until the first that starts at t >= joint_until[j].
   * Its run state, like ctrl_state, sits behind this pointer of the otherwise constant model
   * (mbs_data_create resets it, the solver switches it (through the const model, as
 * ctrl_state), records carry it as
   * /state/joint_engagement): joint_engage[MBS_JOINT_ENGAGE_LEN j + ...] is
   *   [0] 1 while the joint holds, 0 while it is released (its rows are zero rows, lambda 0),
   *   [1 .. 12] its first side's frame as mbs_model_joint_rows takes it (direction a's frame
   *             coordinates at 1 + 3 a, the point's at 10 .. 12): set at t = 0, re-taken at
   *             engagement from the configuration then (the first body grips the second
   *             where it is),
   *   [13] a distance joint's squared length (re-taken at engagement),
   *   [14] the rows of the joint dropped as redundant in the current phase (the span between
   *        two switching times, over which the set of joints that hold is constant): bit k
   *        for its row jrow = k, set by mbs_model_phase_redundant at the phase's start (zero
   *        rows, lambda 0, as if released). */
  int nengage;          /* joints with `active` */
  double *joint_from;   /* (njoint) [s] -INFINITY: held from t = 0 */
  double *joint_until;  /* (njoint) [s] INFINITY: never released */
  double *joint_engage; /* (njoint x MBS_JOINT_ENGAGE_LEN) */
  double *joint_engage0; /* (njoint x MBS_JOINT_ENGAGE_LEN) the same at t = 0 (constant) */

  /* elements (gravity, loads, springs, drives of joints with a motion) */
  mbsElem *elem; /* (nelem) */
  int elem_cap;  /* allocated elements */
  int *elem_qidx_pool; /* (elem_qidx_n) coordinates of every element and joint_frame entry */
  int elem_qidx_n, elem_qidx_cap;
  char (*load_name)[MBS_NAME_MAX];
  /* control laws (joint_control elements): their run state, which the solver updates after
   * every step (mbs_solver_step) and restarts carry (/state/control_integral), through this
   * pointer of the otherwise constant model, because elements see only the model:
   * ctrl_state[k] = z_k, the integral of the error of law k up to t_n;
   * ctrl_state[nctrl + k] = its error at t_n; ctrl_state[2 nctrl] = t_n */
  int nctrl;
  double *ctrl_state; /* (2 nctrl + 1), zeroed by mbs_data_create */
  int *load_joint; /* (nload) the joint of a joint_torque or joint_force (given or by a control
                      law; also augmented), else -1 (rotational springs too: not a drive) */

  /* time profiles of loads and motions; elements refer to them by index (-1: constant 1) */
  int nprofile, profile_cap;
  int nprofile_points;   /* table points of all profiles */
  mbsProfile *profile;   /* (nprofile) */
  double *profile_table; /* (sum of ntab x 2) table points (t, f) */

  /* problem data */
  double gravity[3]; /* [m/s^2] */

  /* contacts (mbsShape above): shapes of bodies and the ground, contact entries, the entries
   * each shape belongs to, and the points of point-set shapes. No table of pairs: a pair of
   * shapes (a, b) belongs to the first entry with a on one side and b on the other
   * (mbs_contact_pair_entry); the broad phase finds the pairs that may touch at each step */
  int nshape, ncontact, ncontact_pts;
  mbsShape *shape;           /* (nshape) */
  mbsContactSpec *contact;   /* (ncontact) */
  int nmember;               /* shape-entry memberships */
  int *shape_member;         /* (nshape + 1) the memberships of shape s: shape_member[s] ..
                                shape_member[s + 1] - 1 */
  int *member_contact;       /* (nmember) the entry, ascending within a shape */
  int *member_side;          /* (nmember) MBS_MEMBER_* bits */
  int ncontact_paired;       /* entries that name a pair (0: the model has no contacts) */
  int nshape_paired;         /* shapes in some pair */
  double *contact_pts;       /* (ncontact_pts x 3) [m] */
  int contact_max;           /* the solver's initial per-step storage of contact points: for
                                each shape in a pair, MBS_CONTACT_NEIGHBOURS times the most
                                points one of its pairs can give (mbs_collide_max), summed;
                                a bound while no shape touches more shapes than that at once */

  /* beams (mbsBeam above) */
  int nbeam;
  mbsBeam *beam; /* (nbeam) */

  /* solver and output settings (deck, after overrides; auto resolved) */
  mbsIntegrator integrator;
  char integrator_reason[256];
  MBS_SOLVER_FIELDS(MBS_FIELD_MEMBER) /* the deck's solver section as it is: dt, t_end [s],
                                         newton_*, ... (mbsim/types.h) */
  int spacetime_elements; /* spacetime: temporal elements per block (one Newton solve) */
  int project_velocities;     /* initial velocities are projected onto the joints at t = 0 */
  int assemble;               /* initial positions are projected onto the joints at t = 0
                                 (mbs_solver_assemble, then mbs_model_set_initial) */
  double *joint_initial_rate; /* (njoint) [rad/s or m/s] initial_rate, NaN where not given */
  double energy_warning;  /* relative |E - E0 - W + D| above which the run warns */
  double energy_unstable; /* relative energy gain E - E0 - W + D above which it fails */
  int output_every;
  double output_dt; /* [s] records at k output_dt, between steps interpolated (0: none) */
  int output_xdmf;
  int output_compression; /* deflate level 1..9 of the time series, 0: none */
  char output_file[1024];
  char title[256];
  char deck_path[1024];

} mbsModel;

/* Compile a validated deck into a model: coordinate layout, mass matrix, rigidity and
 * joint constraints with body-fixed frames set at t = 0 (seed 004 eq. 4-7), elements,
 * initial state and integrator choice (the Newton matrix's pattern is the solver's,
 * src/solver/system.h).
 * Checks what needs the whole model (e.g. initial velocities that violate a joint).
 * Returns NULL and fills err on failure. */
typedef struct mbsDeck mbsDeck; /* deck.h */
mbsModel *mbs_model_compile(const mbsDeck *deck, mbsError *err);

/* release a model (accepts NULL) */
void mbs_model_destroy(mbsModel *m);

/* initial.assemble: q (nq) becomes the initial configuration q0 (from mbs_solver_assemble);
 * each body and beam node keeps the velocity of its centre of mass and its angular velocity
 * (world), so v0 follows its new orientation; then the checks of t = 0 that depend on the
 * positions run: shapes must not overlap, the velocities must satisfy the joints (unless
 * project_velocities). MBS_OK, or the error of a failed check. */
mbsStatus mbs_model_set_initial(mbsModel *m, const double *q, mbsError *err);

/* Append an element to the model: a copy of *proto with the nq coordinates qidx (copied into
 * the model's pool: no size limit; proto->qidx and qadr are ignored). Every element's qidx
 * and m->elem_maxq follow. Model-level use (compile builds every element this way; tests,
 * new kinds): the Newton pattern of a compiled model does not know the new element, and its
 * constraint rows get numbers from mbs_model_number_rows. Returns the element's index, or -1
 * when out of memory (the model is unchanged). */
int mbs_model_add_element(mbsModel *m, const mbsElem *proto, const int *qidx, int nq);

/* Redundant constraint rows at the configuration q, time t (mbs_model_compile calls it at q0,
 * t = 0, after the rows are built; joints that engage later are released then, their zero
 * rows take no part, and a repeated row of a joint that switches is not removed but dropped
 * for the first phase only, as mbs_model_phase_redundant does): a rank-revealing sparse QR
 * (SuiteSparseQR) of G(q)^T, rigidity rows first, then joint rows in deck order, then the
 * rows of constraint elements (prescribed motions), finds the rows that repeat earlier ones.
 * A repeated joint row that holds at q (|g| within tolerance) is dropped: it leaves con (the
 * rows after it move up, joint_con/joint_ncon and the elements' con0 follow) and is kept in
 * m->drop; nrow, ncon and ndof are updated. A repeated row of a prescribed motion (the
 * loop already fixes that joint), a repeated row that does not hold, or one that repeats the
 * others only at q (the loop moved a little along its motion no longer repeats it: a singular
 * starting position) is refused: MBS_ERR_MODEL
 * naming the joints of the loop, how many equations repeat and what to change (at the deck
 * position of the first of them). MBS_ERR_NOMEM when out of memory. */
mbsStatus mbs_model_drop_redundant(mbsModel *m, const double *q, double t, mbsError *err);

/* Redundant rows of the phase that starts at (q, t) (joints that engage and release,
 * src/model/engage.c): the switching joints' rows dropped in the previous phase come back,
 * then the check of mbs_model_drop_redundant runs on the rows of the joints that hold now
 * (released joints' zero rows take no part) and marks the repeated rows of switching joints
 * as dropped for this phase (joint_engage [14]: zero rows, lambda 0; their joints' rows are
 * rebuilt). Refusals are mbs_model_drop_redundant's (a repeated motion row, a repeated row
 * that does not hold, one that repeats only here), and a repeated row of a joint that holds
 * all the time (its loop is at a singular position) or a rigidity row. The solver calls it at
 * every change of the joints that hold, before the capture (the positions are those of the
 * capture). MBS_ERR_MODEL, or MBS_ERR_NOMEM when out of memory. */
mbsStatus mbs_model_phase_redundant(const mbsModel *m, const double *q, double t, mbsError *err);

/* "joint 'rocker_pin' rows 3, 4, 5": the rows of switching joints dropped in the current
 * phase (joint_engage [14]), "" when none; returns the length it needed */
int mbs_model_describe_phase_dropped(const mbsModel *m, char *buf, size_t n);

/* (compile) number the constraint rows: the quadratic rows, then each constraint element's
 * (con0), and set ncon, ndof */
void mbs_model_number_rows(mbsModel *m);

/* "joint 'D' rows 3, 4, 5; joint 'E' row 1": the dropped rows (1-based row numbers within
 * each joint, as in docs/decks.md), "" when none; returns the length it needed */
int mbs_model_describe_dropped(const mbsModel *m, char *buf, size_t n);

/* Minimum-norm reactions of the loops with dropped rows. The multipliers lambda_i =
 * scale mu_i of the kept rows (the solver's, at the configuration q and time t where the
 * constraint forces were evaluated) give reactions that are one choice among many: any
 * self-equilibrated set of multipliers of the loop's joint rows (including the dropped ones)
 * can be added. This adds to reaction (njoint x 6: force and torque on each joint's second
 * body, about the joint point, as mbs_joint_reactions writes it) the change of the loop
 * joints' reactions that makes the multipliers of all the loop's joint and motion rows the
 * ones of least Euclidean norm (N and N m counted alike); rigidity rows are free. The dropped
 * rows are those of t = 0 and, with joints that engage and release, those the current phase
 * dropped (joint_engage [14]); released joints' rows take no part. work has m->red_nwork
 * doubles, list m->red_nrow + m->ndrop ints, rebuilt m->red_nrow rows (scratch). Returns 0,
 * or -1 when the loop's rows no longer repeat at q (a singular position): reaction is then
 * left as it was. */
int mbs_model_min_norm_reactions(const mbsModel *m, const double *q, double t, const double *mu,
                                 double scale, double *reaction, double *work, int *list,
                                 mbsConRow *rebuilt);

/* the rows of joint j (its type's rows, jrow 0, 1, ..., at most MBS_ELEM_MAXCON) into rows
 * from the frames of its sides: par[12 s + 3 a + i] = C_a^i, the frame coordinates of the
 * joint frame's direction a on side s (seed 004 eq. 5-6; world components on a static side,
 * zero on a point mass), par[12 s + 9 ..] the joint point's frame coordinates on side s
 * (mbs_attach_point); L2 a distance joint's squared length. Returns the row count. */
int mbs_model_joint_rows(const mbsModel *m, int j, const double par[24], double L2,
                         mbsConRow *rows);

/* ---- joints that engage and release (src/model/engage.c) ---- */

/* 1 if joint j has `active` (it engages or releases during the run) */
static inline int mbs_joint_switches(const mbsModel *m, int j) {
  return m->nengage > 0 && (m->joint_from[j] > 0.0 || m->joint_until[j] < INFINITY);
}

/* 1 while joint j holds (always, for a joint without `active`) */
static inline int mbs_joint_holds(const mbsModel *m, int j) {
  return m->nengage == 0 || m->joint_engage[(size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j] != 0.0;
}

/* 1 if quadratic row r (< nrow) belongs to a released joint, or is a row of a switching joint
 * dropped as redundant in the current phase (a zero row, its multiplier 0) */
static inline int mbs_row_released(const mbsModel *m, int r) {
  if (m->nengage == 0 || m->con[r].joint < 0) {
    return 0;
  }
  const double *es = m->joint_engage + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)m->con[r].joint;
  return es[0] == 0.0 || ((unsigned)es[14] >> m->con[r].jrow & 1u);
}

/* the rows of joint j from its engagement state: its kept rows (those the redundancy check
 * did not drop) rebuilt from the state's frames while it holds, zero rows (the node lists
 * kept, so the Newton pattern stays) while it is released; its joint_frame's first side (its
 * coordinates) follows */
void mbs_model_joint_apply(const mbsModel *m, int j);

/* joint j engages at q: its first side's frame is re-taken so that it coincides with the
 * second side's at q (a distance joint keeps its points and takes the distance at q), the
 * state says it holds, and its rows follow (mbs_model_joint_apply). MBS_ERR_NUMERIC when the
 * first side's directors are singular at q. */
mbsStatus mbs_model_joint_engage(const mbsModel *m, int j, const double *q);

/* row jrow of joint j as it holds with its engagement state's frames (whatever the phase
 * dropped: the minimum-norm reactions of its loop use it) into out; -1 if it has no such row */
int mbs_model_joint_held_row(const mbsModel *m, int j, int jrow, mbsConRow *out);

/* joint j releases: its rows become zero rows */
void mbs_model_joint_release(const mbsModel *m, int j);

/* the state of t = 0: each switching joint holds if it is active at t = 0, with the frames of
 * t = 0 (compile's); the rows follow */
void mbs_model_joint_reset(const mbsModel *m);

/* label of coordinate i (points into m->coord_names) */
const char *mbs_model_coord_name(const mbsModel *m, int i);

/* evaluate constraint row r at q: value, and gradient wrt its nodes (nnode x 3) if grad
 * is not NULL (seed 000 eq. 22; seed 004 eq. 7) */
double mbs_con_eval(const mbsConRow *row, const double *q, double *grad);

/* compute the 3-vectors A(q) and B(q) of a row */
void mbs_con_ab(const mbsConRow *row, const double *q, double A[3], double B[3]);

/* ---- attachment frames and the one point expression (src/model/attach.c) ---- */

/* vector nodes of a frame kind: 0 static, 1 point mass, 4 director frame */
int mbs_attach_nnode(mbsAttachKind kind);

/* the point fixed to a frame of nnode nodes starting at node0 (global nodes, or an element's
 * local blocks) with frame coordinates c: x = q_node0 + c^i q_node0+1+i (seed 004 eq. 4-5),
 * a point mass's x, or the constant c on a static frame (nnode = 0) */
void mbs_point_weights(mbsPointWeights *pw, int nnode, int node0, const double c[3]);

/* the direction fixed to the frame C^i d_i (seed 004 eq. 5-6: d'_a); the constant C on a
 * static frame, nothing (n = 0, c = 0) on a point mass, which has no directors */
void mbs_dir_weights(mbsPointWeights *pw, int nnode, int node0, const double C[3]);

/* the weights of the point c fixed to attachment frame f (global nodes) */
void mbs_attach_point_weights(const mbsModel *m, int f, const double c[3], mbsPointWeights *pw);

/* x = phi + c^i d_i of attachment frame f at q (a point mass: its x; static: c) */
void mbs_attach_point(const mbsModel *m, int f, const double c[3], const double *q, double x[3]);

/* frame coordinates of the world point P at t = 0: c^i = d_i(0) . (P - phi(0)) for a director
 * frame (seed 004 eq. 5), 0 for a point mass, P itself on a static frame */
void mbs_attach_coords(const mbsModel *m, int f, const double P[3], double c[3]);

/* ---- one walk over every constraint row (src/model/rows.c) ----
 * The quadratic rows (m->con, mbs_con_eval) and the rows of constraint elements (elements
 * with ncon > 0) in the global order: row r = 0 .. ncon-1. Each step gives the row's owner,
 * its value g at (q, t) and, when asked, its gradient as a sparse row (idx, val; a
 * coordinate may repeat when an element's sides share one: add the entries). A constraint
 * element is evaluated once for all its rows. Usage:
 *   mbsRowIter it;
 *   for (mbs_rows_begin(&it, m, q, t, 1, work); mbs_rows_next(&it);) { ... it.row ... } */
typedef struct {
  /* the current row */
  int row;           /* global row index */
  int joint;         /* owning joint, -1 for a body's rigidity */
  int body;          /* owning body of a rigidity row, else -1 */
  int elem;          /* constraint element, -1 for a quadratic row */
  int erow;          /* row within the element (0 for quadratic rows) */
  double g;          /* value at (q, t) */
  int nz;            /* gradient entries (0 if no gradient was asked) */
  const int *idx;    /* (nz) coordinates */
  const double *val; /* (nz) dg/dq */
  /* private */
  const mbsModel *m;
  const double *q;
  double t;
  int grad, only_joint, next_q, next_e, end_q, end_e;
  double *work;
  int ibuf[3 * MBS_CON_MAXNODE];
  double gbuf[3 * MBS_CON_MAXNODE];
} mbsRowIter;

/* doubles of work the walk needs (an element's g and G) */
size_t mbs_rows_work_size(const mbsModel *m);

/* start a walk over every row at (q, t); gradients when grad != 0; work has
 * mbs_rows_work_size(m) doubles (MBS_ELEM_MAXCON suffice when grad = 0), kept by the caller:
 * nothing is allocated, so the walk may run in the step loop */
void mbs_rows_begin(mbsRowIter *it, const mbsModel *m, const double *q, double t, int grad,
                    double *work);

/* the same over the rows joint j owns (its quadratic rows, then its constraint elements') */
void mbs_rows_begin_joint(mbsRowIter *it, const mbsModel *m, int j, const double *q, double t,
                          int grad, double *work);

/* advance to the next row: 1 while there is one, 0 at the end */
int mbs_rows_next(mbsRowIter *it);

/* the constraint element that owns global row r (0 <= r < ncon) and, in *erow (may be NULL),
 * the row within it (the walk's elem and erow); -1 and 0 for a quadratic row */
int mbs_row_element(const mbsModel *m, int r, int *erow);

/* the value of global row r alone at (q, t); work has MBS_ELEM_MAXCON doubles */
double mbs_row_value(const mbsModel *m, int r, const double *q, double t, double *work);

#endif
