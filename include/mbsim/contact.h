/* contact.h: contact geometry (src/contact/): where a shape is, the closest points of two
 * shapes (narrow phase, one function per pair of kinds) and the candidate pairs of a model at
 * a configuration (broad phase). The solver (src/solver/moreau.c) turns the points into
 * contact rows; everything here is pure geometry in world coordinates and allocates nothing
 * but the broad phase's own storage (at its creation). */
#ifndef MBSIM_CONTACT_H
#define MBSIM_CONTACT_H

#include "mbsim/model.h"

/* a shape's placement in the world: centre and axes (row-major, column i = axis i) */
typedef struct {
  double x[3];
  double R[9];
  double half; /* a capsule's half length along axis 3 here: size[1], or a beam segment's
                  (mbsShape.segment) half the distance of its two points; a patch's bounding
                  radius about its centre (the corners' mean) */
  double corner[36]; /* a patch's corner positions r_1 .. r_4 (world), then those of the patch
                        across its edge xi = 0 and of the patch across eta = 0 (mbsShape.nbr;
                        each in its own corner order), unused otherwise */
} mbsPose;

/* one contact point of a pair of shapes (a, b) */
typedef struct {
  double pa[3], pb[3]; /* closest points on the surfaces of a and b (world) */
  double n[3];         /* unit normal, from a towards b (world) */
  double gap;          /* signed distance (pb - pa) . n: negative in penetration */
  int feature;         /* which features touch (a vertex, an edge pair, a point's index ...):
                          the same number while the contact persists, for warm starts */
} mbsContactPoint;

/* the world pose of shape s at the configuration q (the frame's point c and directions C,
 * mbs_attach_point) */
void mbs_shape_pose(const mbsModel *m, const mbsShape *s, const double *q, mbsPose *pose);

/* the bilinear weights N_1 .. N_4 of a patch's corners at (xi, eta) (seed 002 eq. 3.48:
 * x = sum_i N_i r_i; corners in the order (0, 0), (1, 0), (1, 1), (0, 1)) */
void mbs_patch_weights(double N[4], double xi, double eta);

/* The projection of the world point p onto the bilinear patch over the corners r (4 x 3,
 * world): the parameters st = (xi, eta) of the closest point of the patch's surface
 * continued beyond its edges (xi, eta in [-1, 2]: a point not over the patch gives
 * parameters outside [0, 1]), that point x and the unit normal n = x_xi x x_eta there
 * (seed 002: n = t_1 x t_2). Returns 1, or 0 for a degenerate patch (no normal). */
int mbs_patch_project(const double r[12], const double p[3], double st[2], double x[3],
                      double n[3]);

/* 1 if the narrow phase handles shapes of kinds a and b (in either order), else 0 */
int mbs_collide_supported(mbsShapeKind a, mbsShapeKind b);

/* "sphere-plane, sphere-sphere, ..." (static string): the supported pairs, for messages */
const char *mbs_collide_supported_list(void);

/* the most contact points the pair (a, b) can give at once (box-plane 8, box-box 8, a point
 * set its count ...), 0 for an unsupported pair */
int mbs_collide_max(const mbsShape *a, const mbsShape *b);

/* The contact points of shapes a and b (poses pa, pb; pts: the model's contact_pts) whose
 * gap is below margin, at most max (mbs_collide_max suffices) into out, normals from a to b.
 * Returns their count, or -1 for an unsupported pair. Deterministic: the same poses give the
 * same points in the same order. */
int mbs_collide(const mbsShape *a, const mbsPose *pa, const mbsShape *b, const mbsPose *pb,
                const double *pts, double margin, mbsContactPoint *out, int max);

/* the model's shapes at q0 must not overlap (by more than 1e-9 m): MBS_ERR_DECK at the
 * deck position of the first such pair (its body shape), naming both, the depth and
 * the contacts entry (src/contact/check.c; mbs_model_compile calls it) */
mbsStatus mbs_contact_check_initial(const mbsModel *m, mbsError *err);

/* ---- the contact problem of a step (src/contact/problem.c) ----
 * n contacts with the impulses L_k = (normal, tangent 1, tangent 2) [N s]; the velocities
 * their laws constrain are xi = xi0 + G (L - L_start) (Newton's law shifted into xi_N), G the
 * Delassus matrix [1/kg] in 3 x 3 blocks by block rows: block row k holds the blocks (k, l)
 * of the contacts l coupled to k (the diagonal among them), columns ascending, the pattern
 * symmetric. Solved: L_k in {L_N >= 0, |L_T| <= mu_k L_N} with xi_N >= 0, L_N xi_N = 0 and
 * Coulomb's law on xi_T (seed 002 eq. 2.35b, c). */
/* A penalty contact's law over a step of size dt (seed 002 sec. 2.3.1): a spring of
 * stiffness k [N/m] with the potential V(g) = k min(g, 0)^2 / 2 and a damper c [N s/m] on
 * the gap g; over the step the gap goes from g0 to g1 = g0 + dt gbar with the mean normal
 * velocity gbar = gbar0 + theta xi_N (xi_N the end velocity), and the normal impulse is
 *     L_N = dt max(0, -(V(g1) - V(g0)) / (g1 - g0) - c gbar),
 * the spring's discrete gradient (its work is exactly -(V(g1) - V(g0)) at theta = 1/2);
 * Coulomb's friction regularized below the slip speed vreg [m/s]: L_T = -mu L_N xi_T /
 * max(|xi_T|, vreg). */
typedef struct {
  double k, c, g0, gbar0, theta, dt, vreg;
} mbsContactPenalty;

/* L_N of a penalty law at the end velocity xi_N [N s], and dL_N/dxi_N into *dl (may be NULL) */
double mbs_contact_penalty_impulse(const mbsContactPenalty *pl, double xiN, double *dl);

typedef struct {
  int n;              /* contacts */
  const int *gptr;    /* (n + 1) first block of each block row */
  const int *gcol;    /* (gptr[n]) block column of each block */
  const double *gval; /* (9 gptr[n]) the blocks, row-major [1/kg] */
  const double *mu;   /* (n) Coulomb coefficients */
  const double *xi0;  /* (3n) [m/s] the law's velocities at the start impulses */
  double *L;          /* (3n) [N s] in: the start impulses; out: the solution (or the best
                         impulses found) */
  double tol;         /* [m/s] the residual to reach: max over contacts of |Phi_k| / r_k,
                         Phi_k = L_k - prox(L_k - r_k xi_k), r_k = 1 / max diag G_kk */
  double vscale;      /* [m/s] the problem's velocity scale (tol relative to it is the
                         relative accuracy asked for) */
  double accept;      /* [m/s] >= tol: an island whose every method stalls short of tol is
                         accepted at a residual up to this (counted in mbsContactStats) */
  int max_iter;       /* the sweeps and Newton iterations an island may take */
  double reg;         /* >= 0: the compliance of the last resort, relative to max diag G */
  double accept_reg;  /* [m/s]: the residual in the rigid problem up to which an island solved
                         with that compliance is accepted (counted in mbsContactStats) */
  /* (n) NULL, or each contact's penalty law (k > 0: a penalty contact, mbsContactPenalty;
   * k = 0: unilateral) */
  const mbsContactPenalty *pen;
  /* G's factors (optional: ny = 0 leaves them unused), G = Wl^T X / theta over the
   * coordinates y (ny of them) of the Newton matrix's components that the contacts touch:
   * X = J^-1 W the contacts' impulse responses on those coordinates, Wl the columns their
   * laws measure velocities with. With them, the Newton system of a large island is solved
   * in the augmented form whose size grows with the contacts (problem.c), not through G. */
  int ny;
  double theta;     /* G's 1 / theta */
  const int *sptr;  /* (n + 1) each contact's segments: one per component it touches */
  const int *sy0;   /* (sptr[n]) the segment's first coordinate in y (a component's
                       coordinates are consecutive, its segments of every contact alike) */
  const int *slen;  /* (sptr[n]) its coordinates */
  const long *soff; /* (sptr[n]) its X columns at xval + soff: direction a (normal, t1,
                       t2) at + a slen [m/s per N s, times theta] */
  const double *xval;
  const int *wptr;    /* (n + 1) each contact's entries of Wl */
  const int *wy;      /* (wptr[n]) the coordinate in y of each (distinct within a contact) */
  const double *wval; /* (3 wptr[n]) the values, direction a at 3 e + a */
  int augmented;      /* the augmented form for islands of more than 96 unknowns: 0 where
                         it has fewer entries than G's pattern, 1 always, -1 never; 2
                         every island Newton solves, the small ones too (for tests) */
} mbsContactProblem;

typedef struct {
  int sweeps, newton;   /* Gauss-Seidel sweeps and Newton iterations, over all islands */
  int islands, largest; /* islands, and the contacts of the largest */
  double residual;      /* [m/s] the largest residual left */
  int stalled;          /* islands accepted above tol (at most accept) */
  int regularized;      /* islands solved with the compliance reg (at most accept_reg) */
  /* the sparse LU of the largest island Newton solved with it (islands of more than 96
   * unknowns): the Newton matrix's entries and its factors' (L + U, at the last
   * factorization); their ratio is the fill, which sets the cost of a Newton iteration */
  double lu_matrix, lu_factors;
} mbsContactStats;

/* One contact's law at its impulse L [N s] and velocities xi [m/s]: the residual Phi (3),
 * zero where the law holds, and (A, B not NULL) its derivative dPhi / dL = A + B dxi/dL (3 x 3
 * row-major each; merit not NULL: adds sum (Phi_a / r)^2). Unilateral (pl NULL): Phi = L -
 * prox(L - r xi) onto {L_N >= 0, |L_T| <= mu L_N} (r > 0 [kg]); penalty: Phi_N = L_N -
 * mbs_contact_penalty_impulse and Phi_T = L_T + mu L_N xi_T / max(|xi_T|, vreg). Returns max
 * |Phi_a| / r [m/s]. */
double mbs_contact_law(double mu, double r, const mbsContactPenalty *pl, const double L[3],
                       const double xi[3], double phi[3], double *A, double *B, double *merit);

typedef struct mbsContactSolver mbsContactSolver;

/* the solver's storage (grown as problems need); NULL when out of memory (err filled) */
mbsContactSolver *mbs_contact_solver_create(mbsError *err);
void mbs_contact_solver_destroy(mbsContactSolver *cs);

/* solve p: 1 when every island reached p->tol or stalled within p->accept, 0 when one did
 * not (p->L holds the best impulses found), -1 out of memory (err filled) */
int mbs_contact_solve(mbsContactSolver *cs, const mbsContactProblem *p, mbsContactStats *st,
                      mbsError *err);

/* the penalty contacts whose spring dt does not resolve (dt above a tenth of 2 pi sqrt(m /
 * k), m the lightest body the entry moves): one "file:line:col: text" line each into buf (at
 * most n bytes, NUL-terminated); implicit 1 for the theta method, 0 for the semi-explicit
 * variant; returns their count */
int mbs_contact_check_penalty(const mbsModel *m, double dt, int implicit, char *buf, size_t n);

/* [m] the overlap a state to restart from may hold: the small penetrations that
 * velocity-level contact leaves in a run's records (1e-10 m in the shipped decks) pass, a
 * deck whose shapes cut into the state does not */
#define MBS_OVERLAP_STATE_TOL 1e-6

/* the model's shapes at the positions q (time t) must not overlap by more than
 * MBS_OVERLAP_STATE_TOL: the check of mbs_contact_check_initial for a state that a restart
 * takes over (a deck whose shapes moved since the earlier run) */
mbsStatus mbs_contact_check_state(const mbsModel *m, const double *q, double t, mbsError *err);

/* ---- the pairs (src/contact/pairs.c) ---- */

/* the contacts entry that the pair of shapes a and b (either order) belongs to: the first
 * with one of them on each side, or -1 when none has or they never touch (the same shape,
 * the same owner, both fixed, a shape fixed to a corner node of the patch it would touch) */
int mbs_contact_pair_entry(const mbsModel *m, int a, int b);

/* the order of pairs and contacts: by a, then b (-1, 0, 1) */
int mbs_shape_pair_cmp(const mbsShapePair *x, const mbsShapePair *y);

/* ---- broad phase (src/contact/broad.c) ---- */
typedef struct mbsBroad mbsBroad;

/* storage for the model's shapes (linear in them); NULL when out of memory (err filled) */
mbsBroad *mbs_broad_create(const mbsModel *m, mbsError *err);
void mbs_broad_destroy(mbsBroad *bp);

/* The pairs of shapes that may touch at a configuration: the pairs of shapes in some pair
 * (mbs_contact_pair_entry) whose bounding volumes (poses: one per shape, m->nshape), each
 * widened by extra[shape] (may be NULL: none; how far the shape can move within a step),
 * come closer than their entry's margin. Sorted by (a, b), whatever the order of earlier
 * calls, so that the result depends on the poses alone. *out points into the broad phase's
 * storage (valid until the next call). Returns their count, or -1 when out of memory (the
 * storage grows when a configuration has more candidates than any before). A sweep and
 * prune of the bounded shapes' boxes along the axis where their centres spread most (cost
 * grows with the shapes and the overlaps, not with the pairs the entries name); the planes
 * against every bounded shape by distance. */
int mbs_broad_pairs(mbsBroad *bp, const mbsModel *m, const mbsPose *poses, const double *extra,
                    const mbsShapePair **out);

#endif
