/* moreau.c: Moreau-Jean time stepping with set-valued contact laws (seed 002 sec. 2.3-2.4 and
 * 5.1): unilateral contacts with Newton's impact law and spatial Coulomb friction, written as
 * prox equations (seed 002 eq. 2.35) and solved on velocity level.
 *
 * The smooth part is the theta method in generalized-midpoint form on our DAE: with
 * Delta q = q1 - q0 = dt ((1 - theta) u0 + theta u1) and the forces at
 * (q0 + theta Delta q, Delta q / dt, t0 + theta dt),
 *     (1/theta) M (Delta q - dt u0) + dt^2 (grad V - F) + G^T mu - dt W Lambda = 0,
 *     g(q1) = 0,
 * i.e. M (u1 - u0) = dt h + W Lambda (seed 002 eq. 5.3a; its Taylor expansion of h about
 * t^l is the first Newton iteration of this system from Delta q = 0). theta = 1/2 with
 * discrete gradients is em (energy-momentum), theta = 1 is implicit Euler. The bilateral
 * constraints (rigidity, joints) are kept on position level by the same Newton iteration as
 * in the other schemes, so they hold to the Newton tolerance after every step.
 *
 * A step (step_try):
 *  1. Contacts are detected at the step's start q0 (broad and narrow phase, src/contact/),
 *     with a margin that grows with how far the shapes can move in the step; the candidates
 *     whose gap can close within it are warm-started from the last step's impulses of the
 *     same contact (its tangential impulse turned into the new tangents).
 *  2. Their frames W are taken at the step's evaluation point q0 + theta dt u0 (the material
 *     points that touch there carry the impulses, so a rolling body's contact does no work)
 *     and, for contacts whose shapes move within the step, a second set of columns at the
 *     predicted end for the end velocities the laws constrain. W's columns are rigid
 *     projections: the velocity of a point of a rigid body is v + omega x r with omega from
 *     the orthonormalized directors, so impulses never excite the rigidity constraints.
 *  3. One Newton step of the smooth equations gives the linear model: the contact velocities
 *     depend on the impulses through the step's Newton matrix J,
 *         gamma(Lambda) = gamma(Lambda_j) + G (Lambda - Lambda_j),  G = (1/theta) W^T J^-1 W
 *     (the Delassus matrix, seed 002 eq. 5.4, with the bilateral constraints inside J).
 *     J^-1 W comes from the components of J a contact touches (dense LU up to DENSE_MAX
 *     unknowns, else the sparse LU of the whole matrix).
 *  4. The laws: Newton's impact law with the impact inside the step (eq. 2.32): a point
 *     approaching faster than one step of its acceleration leaves with -e gamma^- and its
 *     free acceleration for the rest of the step; a closed point keeps gamma_N >= 0. The
 *     prox equations (eq. 2.35b, c) are solved by the contact problem (contact/problem.c:
 *     islands, Gauss-Seidel sweeps, then a semi-smooth Newton method), whose residual is
 *     a velocity, relative to the step's velocity scale.
 *  5. The nonlinear step is solved again with the new impulses (Newton, on the step's
 *     factorization), and 3-5 alternate until the laws hold at the nonlinear step's end
 *     velocities, at most CONTACT_OUTER times. The candidates of 1. that the first solution
 *     left out (not closing) are kept aside and join the problem once the impulses close them
 *     (admit_reserve, with an alternation more for each of at most MISS_TRIES rounds). A contact problem that stalls short of
 *     contact_tolerance is accepted up to STALL_ACCEPT and counted; a singular one gets a
 *     compliance REG_COMPLIANCE as a last resort, accepted up to REG_ACCEPT and counted;
 *     beyond, the step fails and the step control retries it with dt/2.
 *  6. Penetrations left at q1 (g < GAP_PROJECT) are projected out (Siconos'
 *     MoreauJeanDirectProjection: pushes along the normals in the metric of J, then the
 *     bilateral constraints by Newton steps); velocities stay, except where the pushes raise
 *     V by more than the step's laws dissipate: the kinetic energy of the pushed islands
 *     pays that (pay_projection, finish_step). A point that penetrates at q1
 *     but was not in the contact problem and was a candidate kept aside joins the problem,
 *     and the alternation goes on from its solution (take_missed); one that was no candidate
 *     is pushed out (another try would miss it again); the whole step is tried again with
 *     the points (MISS_TRIES) only where that alternation fails or is not allowed again.
 *  7. The rigid bodies' velocities are projected onto rigid motions in the mass metric.
 *
 * The energy of a step is booked exactly (step_try, after the alternation): each contact law
 * is charged the work of its impulses over the mean of the start and end velocities
 * (Kelvin's theorem: impact and friction dissipation, >= 0 for each law), the theta method's
 * own damping (theta > 1/2), the projections' changes of potential and kinetic energy as
 * numerical dissipation. With them E - E0 - W_ext + D closes to the Newton tolerance for
 * every theta.
 *
 * Penalty contacts (contact_law penalty) enter the contact problem with their own law in
 * place of the prox: the impulse of a spring-damper over the step (a discrete gradient of its
 * potential 1/2 k g^2, implicit), the potential counted in V. The semi-explicit variant
 * (step_explicit) is Moreau's original scheme: positions at the midpoint, one linear solve
 * with the penalty impulses fixed at the step's start, first order. */
#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/contact.h"
#include "mbsim/elements.h"
#include "solver/integrator.h"
#include "util/linsolve.h"
#include "solver/system.h"
#include "util/vec3.h"

#define DENSE_MAX 96        /* unknowns of a component factored densely */
#define BLOCKS_MAX 32       /* the Newton matrix factored as dense blocks (one per component)
                               when none has more unknowns (mbs_linsolve_set_blocks) */
#define CONTACT_OUTER 8     /* alternations of contact problem and nonlinear step */
#define MISS_TRIES 2        /* tries of a step again with the points it missed */
#define END_REACH 1e-12     /* [m] a contact whose shapes move less within a step takes its
                               evaluation point's columns for the end velocities */
#define STALL_ACCEPT 1e-6   /* the contact problem's residual accepted where its solver stalls
                               short of contact_tolerance, relative to the velocity scale */
#define REG_COMPLIANCE 1e-6 /* the compliance of the contact problem's last resort, relative
                               to the largest diagonal of its Delassus matrix */
#define REG_ACCEPT 1e-4     /* the residual accepted from it, relative to the velocity scale */
#define GAP_ACTIVE 1e-9     /* [m] predicted gap below which a point is in the contact problem */
#define GAP_PROJECT 1e-10   /* [m] penetration the position projection removes */
#define GAP_PROBE 1e-3      /* [m] how far the records look for a contact that opened */
#define PROJECT_SOR 1.4     /* over-relaxation of the projection's Gauss-Seidel sweeps (1.0,
                               1.2, 1.4, 1.6, 1.8 on one pile of 100 dice: 38, 24, 22, 31, 67
                               sweeps) */
#define PROJECT_ROUNDS 8    /* detections and corrections of one position projection */
#define PROJECT_LOCAL 1e-5  /* [m] pushes up to which the projection's later rounds look at
                               its first round's pairs alone (the margin is 1e-3 or more) */
#define BROAD_NOMEM (-2)    /* detect's return when the broad phase ran out of memory */
/* mbsContactProblem.augmented: 0 the augmented form where it is the smaller (-1 never, 1
 * every large island: builds for tests and measurements, -DMBS_CONTACT_AUGMENTED=...) */
#define SOLVE_BATCH 4 /* contacts whose J^-1 W columns on large components are solved together
                         (12 right-hand sides: KLU's blocks of 4) */
#ifndef MBS_CONTACT_AUGMENTED
#define MBS_CONTACT_AUGMENTED 0
#endif
/* entries of one W column: two beam segments' surfaces, each over two director frames (4
 * frames x 4 vector nodes x 3) */
#define MAX_W 48
#define MAX_COMP MAX_W      /* components one contact touches (at most one per entry) */
#define PREFETCH_CONTACTS 4 /* contacts ahead whose memory detect_pair fetches */
#define PREFETCH_W 24       /* and their W entries (two rigid bodies' 12 coordinates) */
#define STATE_COLS 25       /* columns of /state/contacts (state_export) */

/* one contact of a step */
typedef struct {
  mbsShapePair pair; /* its shapes and contacts entry: with feature its identity (warm
                        starts), ordered by (pair.a, pair.b, feature) */
  int feature;
  int frame[2];      /* attachment frames of shapes a and b */
  int segment[2];    /* 1: the shape is a beam segment between frames frame and frame + 1 */
  int surface[2];    /* 1: a segment whose points are on its surface (mbsShape.surface) */
  int patch[2];      /* 1: a surface's bilinear patch (corners: point masses, beam nodes) */
  int body[2];       /* bodies (-1 ground) */
  double point[3];   /* world, midway */
  double pa[3], pb[3]; /* the closest points (the material points W is built at) */
  double pae[3], pbe[3]; /* the closest points at the step's predicted end (end_found) */
  int end_found;
  int moving;      /* its shapes move by more than END_REACH within the step */
  double n[3], t1[3], t2[3];
  double gap0, gap1; /* at q0, at the end of the step */
  double e, mu;
  double gN0;    /* normal velocity at the step's start */
  double target; /* an impact's normal velocity at the step's end (Newton's law) */
  double tgt[3]; /* the law holds for xi = W^T u1 - tgt (see set_targets) */
  int impact;    /* 1: an impact within the step: the end gap is set to gend */
  double gend;   /* [m] the end gap of the impact's motion */
  double L[3];   /* impulse: normal, tangents [N s] */
  double lw[3];  /* the warm start's tangential impulse, world components */
  double G[9];   /* Delassus block G_kk */
  double r;      /* prox parameter */
  int status;    /* 0 open, 1 stick, 2 slip */
  int seen;      /* the position projection's last detection reported it */
  int solved;    /* the position projection's J^-1 W_N and S_kk of it are computed */
  int penalty;         /* 1: the penalty law, in the step's contact problem (implicit) */
  mbsContactPenalty pl; /* its law over the step (set_targets; pl.k = 0: unilateral) */
  int endlaw;          /* 1: the normal law constrains the end velocity (wl), 0: the
                          evaluation point's (w); the tangential laws always the end's */
  int ncomp;             /* components of the Newton matrix its coordinates belong to (a
                            rigid body's phi_x, phi_y, phi_z and directors are four) */
  int nw;        /* W columns: entries (coordinates widx, values w[dir]) */
  /* the arrays last: only their first nw (ncomp) entries are set, and only those are
   * copied (contact_copy) */
  int widx[MAX_W];
  double w[3][MAX_W];  /* the impulses' directions, at the step's evaluation point */
  double wl[3][MAX_W]; /* the end velocities' columns, at the step's predicted end */
  int comp[MAX_COMP];
  long xoff[MAX_COMP];   /* its J^-1 W columns: 3 vectors per component, at x + xoff */
} Contact;

/* the fields of a contact before its arrays: a point's identity, geometry, law and impulses
 * (3.6 kB of a Contact are the W columns) */
#define CONTACT_HEAD offsetof(Contact, widx)

/* *dst = *src for the entries in use: the head and the first nw (ncomp) entries of the
 * arrays (a whole Contact copied moved 3.6 kB per point, several times per step) */
static void contact_copy(Contact *dst, const Contact *src) {
  if (dst == src) {
    return;
  }
  size_t nw = (size_t)src->nw, ncomp = (size_t)src->ncomp;
  memcpy(dst, src, CONTACT_HEAD);
  memcpy(dst->widx, src->widx, nw * sizeof(int));
  for (int a = 0; a < 3; a++) {
    memcpy(dst->w[a], src->w[a], nw * sizeof(double));
    memcpy(dst->wl[a], src->wl[a], nw * sizeof(double));
  }
  memcpy(dst->comp, src->comp, ncomp * sizeof(int));
  memcpy(dst->xoff, src->xoff, ncomp * sizeof(long));
}

/* a component of the Newton matrix */
typedef struct {
  int nunk, ncoord; /* unknowns (coordinates first, then multiplier rows), coordinates */
  int unk0;         /* first entry in comp_unk */
  long lu0;         /* dense: its block at lu + lu0 (nunk^2 row-major, the elimination's work) and the
                       coordinate block of its inverse at zinv + lu0 (ncoord^2, column-major);
                       -1 sparse */
  int stamp;        /* step at which the LU was factored (dense) */
  long pushed;      /* the position projection's solve (MoreauWork.push_stamp) that last
                       moved its coordinates */
  int isl;          /* the position projection's islands: union-find parent (components
                       joined by closed contacts; pay_projection) */
  int moved;        /* 1: the last position projection pushed its coordinates; 2 (an
                       island's root): the island pays (pay_projection) */
} Component;

/* a contact point's identity */
typedef struct {
  mbsShapePair pair;
  int feature;
} PointId;

typedef struct {
  mbsImplicitWork base; /* must be first */
  const mbsModel *model;
  double theta;
  /* components */
  int ncomp;
  Component *comp;
  int *comp_of;  /* (nsp) component of each unknown */
  int *pos_in;   /* (nsp) index within its component */
  int *comp_unk; /* (nsp) unknowns of each component, in order */
  double *lu;    /* dense LUs */
  double *zinv;  /* the dense components' (J^-1)_cc (impulse responses: J^-1 W = Z W) */
  double *zwork; /* (DENSE_MAX^2) */
  int *zidx;     /* (DENSE_MAX (DENSE_MAX + 1)): dense_solve's lists */
  int factor_stamp;
  long push_stamp; /* the position projection's Gauss-Seidel solves so far */
  long jac_version;  /* Newton matrices assembled (ctx_assemble, explicit_matrix) */
  long jac_stamped;  /* the one factor_stamp was last advanced for */
  /* what the step's J^-1 W columns and Delassus blocks were computed for, so that an
   * alternation whose Newton iterations kept the matrix and whose contacts did not change
   * reuses them (the same bits: the same matrix, columns and contacts) */
  long mat_jac;   /* jac_version of the last contact_matrices, -1 when the columns are stale */
  long mat_count; /* contact_matrices computed so far */
  long cver;      /* changes of the step's contact list (set_targets, a step's start) */
  long del_mat, del_cver; /* mat_count and cver of the last Delassus blocks (delassus) */
  /* contacts: every array sized from cap (c, prev, pen, stepr, cand, nu, vp, cmark, pmu, ppen;
   * vc, force: 2 cap; pxi, pL: 3 cap; gptr: cap + 1) grows together (grow_contacts) when a
   * detection finds more points; only between the uses of pointers into them (detect,
   * impact_points) */
  int cap, nc, nprev, npen, nrec;
  int nstep, reccap;         /* the last step's records (stepr), the capacity of rec and old */
  mbsContactRecord *stepr;   /* (cap) the last step's contacts, sorted by identity */
  mbsContactRecord *old;     /* (reccap) work of the merge */
  int *now;                  /* (reccap) 1: rec[k] is a contact of the last step */
  Contact *c, *prev;
  Contact *pen; /* (cap) penalty contacts of the step: their impulses are fixed */
  mbsContactRecord *rec;
  double *x; /* J^-1 W columns */
  long xcap, xused;
  mbsContactPoint *pts; /* narrow-phase buffer */
  int ptcap;
  mbsPose *pose;  /* (nshape) */
  double *extra;  /* (nshape) [m] how far each shape may move within the step */
  mbsShapePair *cand; /* (cap) detect's pairs of the contacts it looks at again */
  mbsBroad *broad;
  int fetched; /* detect_pair: the contacts from the detection's first up to this one are
                  fetched into the cache */
  double *rhs, *sol; /* (n) sparse solves */
  double *mrhs, *msol; /* (mcap) the J^-1 W columns' solves, SOLVE_BATCH contacts at a time */
  size_t mcap;
  double *u;         /* (nq) velocities of the linear model */
  double *du;        /* (nq) */
  double *gq;        /* (nq) projection increments */
  double *qe;        /* (nq) the step's predicted end, q0 + dt u0 */
  double *nu;        /* (cap) the projection's multipliers */
  Contact *vc;       /* (2 cap) their geometry (refresh_geometry: the moving contacts, then
                        their detection at the predicted end) */
  Contact *vp;       /* (cap) the projection's first round's points */
  double *rowwork;   /* the row walk's work */
  double *q0save, *hres; /* (nq) semi-explicit variant: the step's start, -dt^2 h(q1, u0, t1) */
  /* the contact problem (src/contact/problem.c): the Delassus blocks by rows (gptr (cap +
   * 1), gcol, gval: gcap blocks), the contacts of each component (ccnt (ncomp + 1) starts,
   * cfill (ncomp), clist: clcap), a mark per contact, the problem's vectors */
  mbsContactSolver *cs;
  int *gptr, *gcol, gcap;
  double *gval;
  int *ccnt, *cfill, *clist, clcap, *cmark;
  double *pxi, *pL, *pmu; /* (3 cap, 3 cap, cap) */
  /* G's factors for the problem (mbsContactProblem.ny ...): each component's first
   * coordinate in y (ybase, ncomp + 1); per contact its segments (fsptr, fcap + 1; fsy0,
   * fslen, fsoff: fscap) and its law columns' entries (fwptr, fcap + 1; fwy, fwcap; fwval,
   * 3 fwcap) */
  int *ybase, *fsptr, *fsy0, *fslen, *fwptr, *fwy, fcap, fscap, fwcap;
  long *fsoff;
  double *fwval;
  mbsContactPenalty *ppen; /* (cap) */
  PointId *force; /* (2 cap) the points a failed try of the step missed, nforce of them */
  int nforce;
  Contact *resv;  /* (resvcap) the step's reserve during its projection (take_missed) */
  int resvcap;
  int nreserve; /* candidates a step's first solution left out, kept in vc (admit_reserve) */
  double *exp;     /* (reccap x STATE_COLS) the rows of /state/contacts (state_export) */
  long cap_failed; /* the capacity grow_contacts could not allocate (storage_error) */
  int step_stalled; /* the step's contact residual was accepted above contact_tolerance */
  int regularized;  /* islands of the step solved with the last resort's compliance */
  double vpen_end;   /* [J] the penalty springs' potential at the end of the step */
  double stall; /* [m/s] the residual an island of the last contact problem stalled at (0:
                   none): the step's check accepts what the problem could reach */
  /* [J] what the step dissipated: by the normal laws (and the position projection), by
   * friction, by the theta method itself (moreau's energy balance, step) */
  double dissip_impact, dissip_friction, dissip_num;
  double proj_rise; /* [J] V(after) - V(before) of the step's position projection */
  double *ortho; /* (18 nnode) per vector node n0 of a director frame: the directors last
                    made orthonormal (q at n0 + 1 .. n0 + 3) and the result (add_frame_point;
                    all zero at first, orthonormal's result for zeros) */
  double open_gain; /* [J] the work of the step's normal impulses on points that were opening
                       at its start (project_positions: activated opening points) */
} MoreauWork;

/* ---- setup ---- */

/* fmax(a, b) inline (contact/problem.c): the projection's sweeps and the assembly's scale */
static inline double maxd(double a, double b) {
  return a > b || b != b ? a : b;
}

static int uf_find(int *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/* the components of the Newton matrix's pattern (block (0, 0), no tail) */
static int components(MoreauWork *w, const mbsSystem *sys) {
  int n = sys->nsp;
  int *parent = malloc((size_t)n * sizeof(int));
  int *root_comp = malloc((size_t)n * sizeof(int));
  if (!parent || !root_comp) {
    free(parent);
    free(root_comp);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    parent[i] = i;
  }
  for (int j = 0; j < n; j++) {
    for (int p = sys->colptr[j]; p < sys->colptr[j + 1]; p++) {
      int a = uf_find(parent, sys->rowind[p]), b = uf_find(parent, j);
      if (a != b) {
        parent[a < b ? b : a] = a < b ? a : b;
      }
    }
  }
  w->ncomp = 0;
  for (int i = 0; i < n; i++) {
    root_comp[i] = -1;
  }
  for (int i = 0; i < n; i++) {
    int r = uf_find(parent, i);
    if (root_comp[r] < 0) {
      root_comp[r] = w->ncomp++;
    }
    w->comp_of[i] = root_comp[r];
  }
  w->comp = calloc((size_t)(w->ncomp > 0 ? w->ncomp : 1), sizeof(Component));
  if (!w->comp) {
    free(parent);
    free(root_comp);
    return -1;
  }
  /* coordinates first (i < nq), then multipliers: unknowns in ascending order */
  for (int i = 0; i < n; i++) {
    Component *c = &w->comp[w->comp_of[i]];
    c->nunk++;
    if (i < sys->nq) {
      c->ncoord++;
    }
  }
  int off = 0;
  long lu = 0;
  for (int k = 0; k < w->ncomp; k++) {
    Component *c = &w->comp[k];
    c->unk0 = off;
    off += c->nunk;
    c->lu0 = -1;
    if (c->nunk <= DENSE_MAX) {
      c->lu0 = lu;
      lu += (long)c->nunk * c->nunk;
    }
    c->nunk = 0; /* refilled below */
    c->stamp = -1;
  }
  for (int i = 0; i < n; i++) {
    Component *c = &w->comp[w->comp_of[i]];
    w->pos_in[i] = c->nunk;
    w->comp_unk[c->unk0 + c->nunk++] = i;
  }
  w->lu = malloc((size_t)(lu > 0 ? lu : 1) * sizeof(double));
  w->zinv = malloc((size_t)(lu > 0 ? lu : 1) * sizeof(double));
  w->zwork = malloc((size_t)DENSE_MAX * DENSE_MAX * sizeof(double));
  w->zidx = malloc((size_t)DENSE_MAX * (DENSE_MAX + 1) * sizeof(int));
  free(parent);
  free(root_comp);
  return w->lu && w->zinv && w->zwork && w->zidx ? 0 : -1;
}

static void work_free(void *p) {
  MoreauWork *w = p;
  if (!w) {
    return;
  }
  mbs_implicit_work_free(&w->base);
  mbs_broad_destroy(w->broad);
  free(w->pen);
  free(w->exp);
  free(w->q0save);
  free(w->hres);
  free(w->resv);
  free(w->ortho);
  void *ptrs[] = {w->comp,  w->comp_of, w->pos_in, w->comp_unk, w->lu,      w->c,     w->prev,
                  w->rec,   w->stepr,   w->old,    w->now,      w->x,       w->pts,   w->pose,
                  w->extra, w->cand,    w->rhs,    w->sol, w->mrhs, w->msol,      w->u,       w->du,    w->gq,
                  w->qe,    w->nu,      w->vc,     w->vp,       w->rowwork, w->zinv,  w->zwork, w->zidx,
                  w->gptr,  w->gcol,    w->gval,   w->ccnt,     w->cfill,   w->clist, w->cmark,
                  w->pxi,   w->pL,      w->pmu,    w->ppen,     w->force,   w->ybase, w->fsptr,
                  w->fsy0,  w->fslen,   w->fsoff,  w->fwptr,    w->fwy,     w->fwval};
  mbs_contact_solver_destroy(w->cs);
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  free(w);
}

static mbsStatus init(const mbsModel *m, void **work, mbsError *err) {
  MoreauWork *w = calloc(1, sizeof(*w));
  if (!w || mbs_implicit_work_init(m, &w->base) != MBS_OK) {
    free(w);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  *work = w;
  w->model = m;
  w->mat_jac = w->del_mat = -1;
  /* the semi-explicit variant's velocity update is M (u1 - u0) = dt h + W L: the impulses'
   * effect on u1 is J^-1 W, as for theta = 1 */
  w->theta = m->moreau_variant == MBS_MOREAU_EXPLICIT ? 1.0 : m->moreau_theta;
  /* the contact storage: a first estimate from the model (every possible point, up to a few
   * per shape), grown by grow_contacts when a step finds more */
  long cap = m->contact_max;
  long estimate = 64 + 32L * m->nshape;
  w->cap = (int)(cap < estimate ? cap : estimate);
  if (w->cap < 1) {
    w->cap = 1;
  }
  /* the narrow phase's buffer: the most points of any pair of kinds (box-box), or of a point
   * set */
  w->ptcap = 16 + 72;
  for (int k = 0; k < m->nshape; k++) {
    w->ptcap = m->shape[k].npts > w->ptcap ? m->shape[k].npts : w->ptcap;
  }
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1);
  size_t nsp = (size_t)(m->nq + m->ncon > 0 ? m->nq + m->ncon : 1);
  w->c = calloc((size_t)w->cap, sizeof(Contact));
  w->prev = calloc((size_t)w->cap, sizeof(Contact));
  w->pen = calloc((size_t)w->cap, sizeof(Contact));
  w->q0save = calloc(nq, sizeof(double));
  w->hres = calloc(nq, sizeof(double));
  w->reccap = w->cap;
  w->rec = calloc((size_t)w->reccap, sizeof(mbsContactRecord));
  w->old = calloc((size_t)w->reccap, sizeof(mbsContactRecord));
  w->now = calloc((size_t)w->reccap, sizeof(int));
  w->stepr = calloc((size_t)w->cap, sizeof(mbsContactRecord));
  w->pts = calloc((size_t)w->ptcap, sizeof(mbsContactPoint));
  w->pose = calloc((size_t)(m->nshape > 0 ? m->nshape : 1), sizeof(mbsPose));
  w->extra = calloc((size_t)(m->nshape > 0 ? m->nshape : 1), sizeof(double));
  w->cand = calloc((size_t)w->cap, sizeof(mbsShapePair));
  w->comp_of = calloc(nsp, sizeof(int));
  w->pos_in = calloc(nsp, sizeof(int));
  w->comp_unk = calloc(nsp, sizeof(int));
  w->rhs = calloc(nsp, sizeof(double));
  w->sol = calloc(nsp, sizeof(double));
  w->u = calloc(nq, sizeof(double));
  w->du = calloc(nq, sizeof(double));
  w->gq = calloc(nq, sizeof(double));
  w->qe = calloc(nq, sizeof(double));
  w->nu = calloc((size_t)w->cap, sizeof(double)); /* the projection's multipliers */
  w->vc = calloc(2 * (size_t)w->cap, sizeof(Contact)); /* 2 cap: refresh_geometry */
  w->vp = calloc((size_t)w->cap, sizeof(Contact));
  w->rowwork = calloc(mbs_rows_work_size(m) + 1, sizeof(double));
  w->gptr = calloc((size_t)w->cap + 1, sizeof(int));
  w->cmark = calloc((size_t)w->cap, sizeof(int));
  w->pxi = calloc(3 * (size_t)w->cap, sizeof(double));
  w->pL = calloc(3 * (size_t)w->cap, sizeof(double));
  w->pmu = calloc((size_t)w->cap, sizeof(double));
  w->ppen = calloc((size_t)w->cap, sizeof(mbsContactPenalty));
  w->force = calloc(2 * (size_t)w->cap, sizeof(*w->force));
  w->exp = calloc((size_t)w->reccap * STATE_COLS, sizeof(double));
  w->ortho = calloc(18 * (size_t)(m->nnode > 0 ? m->nnode : 1), sizeof(double));
  w->cs = mbs_contact_solver_create(err);
  if (!w->c || !w->prev || !w->pen || !w->q0save || !w->hres || !w->rec || !w->old ||
      !w->now || !w->stepr || !w->pts || !w->pose || !w->extra || !w->cand || !w->comp_of ||
      !w->pos_in || !w->comp_unk || !w->rhs || !w->sol || !w->u || !w->du || !w->gq || !w->qe ||
      !w->nu || !w->vc || !w->vp || !w->rowwork || !w->gptr || !w->cmark || !w->pxi ||
      !w->pL || !w->pmu || !w->ppen || !w->force || !w->exp || !w->cs ||
      !w->ortho) {
    work_free(w);
    *work = NULL;
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  if (m->ncontact_paired > 0) {
    w->broad = mbs_broad_create(m, err);
    if (!w->broad) {
      work_free(w);
      *work = NULL;
      return err->status;
    }
  }
  return MBS_OK;
}

/* realloc *p to n elements of size sz; 0 when out of memory (*p then unchanged) */
static int grow_array(void *p, size_t n, size_t sz) {
  void **pp = p;
  void *g = realloc(*pp, (n > 0 ? n : 1) * sz);
  if (!g) {
    return 0;
  }
  *pp = g;
  return 1;
}

/* [MB] the contact storage of cap points: the per-contact arrays (the J^-1 W pool apart) */
static double storage_mb(long cap) {
  return (double)cap *
         (6.0 * sizeof(Contact) + 2.0 * sizeof(mbsContactRecord) + 3.0 * sizeof(mbsShapePair) +
          8.0 * 8.0) /
         1e6;
}

/* Room for at least need contact points in every array sized from cap (doubling, contents
 * kept): pointers into them are stale afterwards, so callers grow only where they hold none.
 * On failure w->cap stays (the arrays that grew are merely larger) and 0 is returned; the
 * caller reports storage_error. */
static int grow_contacts(MoreauWork *w, long need) {
  long cap = 2L * w->cap > need ? 2L * w->cap : need;
  if (cap > INT_MAX / 4) {
    cap = INT_MAX / 4;
  }
  if (cap < need) {
    w->cap_failed = need;
    return 0;
  }
  size_t n = (size_t)cap;
  int ok = grow_array(&w->c, n, sizeof(Contact)) && grow_array(&w->prev, n, sizeof(Contact)) &&
           grow_array(&w->pen, n, sizeof(Contact)) &&
           grow_array(&w->stepr, n, sizeof(mbsContactRecord)) &&
           grow_array(&w->cand, n, sizeof(mbsShapePair)) && grow_array(&w->nu, n, sizeof(double)) &&
           grow_array(&w->vc, 2 * n, sizeof(Contact)) && grow_array(&w->vp, n, sizeof(Contact)) &&
           grow_array(&w->gptr, n + 1, sizeof(int)) && grow_array(&w->cmark, n, sizeof(int)) &&
           grow_array(&w->pxi, 3 * n, sizeof(double)) &&
           grow_array(&w->pL, 3 * n, sizeof(double)) && grow_array(&w->pmu, n, sizeof(double)) &&
           grow_array(&w->ppen, n, sizeof(mbsContactPenalty)) &&
           grow_array(&w->force, 2 * n, sizeof(*w->force));
  if (!ok) {
    w->cap_failed = cap;
    return 0;
  }
  w->cap = (int)cap;
  return 1;
}

/* the error of a contact storage that could not grow: its size and what helps */
static mbsStatus storage_error(const MoreauWork *w, mbsError *err) {
  return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                       "out of memory for the contact storage: %ld contact points at once "
                       "(about %.0f MB; the storage grows with the points the shapes touch at, "
                       "with no fixed limit) could not be allocated. Fewer points help (a "
                       "coarser `points` shape, fewer shapes in contact) or more memory; a "
                       "smaller step does not",
                       w->cap_failed, storage_mb(w->cap_failed));
}

/* the components and J^-1 W storage need the system (built after init): on the first step */
static mbsStatus setup_components(const mbsModel *m, mbsData *d, MoreauWork *w, mbsError *err) {
  if (w->comp) {
    return MBS_OK;
  }
  if (components(w, d->sys) != 0) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  /* free rigid bodies (18 unknowns each) and other small components: the Newton matrix as
   * LAPACK's dense blocks, pivoted afresh at every factorization as every step's first must
   * be (so that records and restarts do not change the trajectory), cheaper than KLU's
   * fresh pivoting */
  mbs_linsolve_set_blocks(d->ls, BLOCKS_MAX);
  int maxc = 1;
  for (int k = 0; k < w->ncomp; k++) {
    maxc = w->comp[k].ncoord > maxc ? w->comp[k].ncoord : maxc;
  }
  /* each contact: 3 columns over its components (two bodies: each body's phi_x, phi_y, phi_z
   * and directors, or the mechanism a body belongs to); the violated points of the
   * projection: 1 column each */
  w->ccnt = calloc((size_t)w->ncomp + 1, sizeof(int));
  w->cfill = calloc((size_t)(w->ncomp > 0 ? w->ncomp : 1), sizeof(int));
  if (!w->ccnt || !w->cfill) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  long per = 8L * maxc < m->nq ? 8L * maxc : m->nq; /* coordinates a contact's components hold */
  w->xcap = (long)w->cap * 3 * per + (long)w->cap * per;
  w->x = malloc((size_t)w->xcap * sizeof(double));
  if (!w->x) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                         "out of memory for the contact solver (%ld doubles)", w->xcap);
  }
  (void)m;
  return MBS_OK;
}

/* ---- geometry ---- */

/* frame coordinates at q of the world point p on frame f: c^i = d_i . (p - phi) for a
 * director frame (the directors are orthonormal), 0 for a point mass, p on a static frame */
static void frame_coords(const mbsModel *m, int f, const double *q, const double p[3],
                         double c[3]) {
  mbsAttachKind kind = m->attach_kind[f];
  if (kind == MBS_ATTACH_DIRECTORS || kind == MBS_ATTACH_BEAM_NODE) {
    const double *phi = q + 3 * m->attach_node[f];
    for (int i = 0; i < 3; i++) {
      const double *di = phi + 3 * (i + 1);
      c[i] = di[0] * (p[0] - phi[0]) + di[1] * (p[1] - phi[1]) + di[2] * (p[2] - phi[2]);
    }
  } else if (kind == MBS_ATTACH_POINT) {
    c[0] = c[1] = c[2] = 0.0;
  } else {
    c[0] = p[0];
    c[1] = p[1];
    c[2] = p[2];
  }
}

/* two unit tangents completing n (deterministic) */
static void tangents(const double n[3], double t1[3], double t2[3]) {
  double a[3] = {0.0, 0.0, 0.0};
  int k = fabs(n[0]) <= fabs(n[1]) ? (fabs(n[0]) <= fabs(n[2]) ? 0 : 2)
                                   : (fabs(n[1]) <= fabs(n[2]) ? 1 : 2);
  a[k] = 1.0;
  vcross(t1, n, a);
  double l = vnorm(t1);
  for (int i = 0; i < 3; i++) {
    t1[i] /= l;
  }
  vcross(t2, n, t1);
}

/* the weights of the material point of contact side `side` at the world point p: the point
 * fixed to its frame, or on a beam segment the point of its axis nearest to p, x = (1 - s)
 * phi_a + s phi_b with s in [0, 1] (the segment's ends phi_a, phi_b: frames f, f + 1) */
static void side_weights(const mbsModel *m, const Contact *c, int side, const double *q,
                         const double p[3], mbsPointWeights *pw) {
  int f = c->frame[side];
  if (c->patch[side]) {
    /* the patch's point under p, x = sum_i N_i r_i with its bilinear weights, so that its
     * velocity is sum_i N_i v_i (seed 002 eq. 3.48, 3.49): the W columns of the corner
     * nodes are N_i n (and N_i t_1, N_i t_2), the impulse shared by the weights */
    static const double zero[3] = {0.0, 0.0, 0.0};
    const mbsShape *sh = &m->shape[side ? c->pair.b : c->pair.a];
    double r[12], st[2] = {0.5, 0.5}, x[3], n[3];
    for (int k = 0; k < 4; k++) {
      mbs_attach_point(m, sh->corner[k], zero, q, r + 3 * k);
    }
    if (mbs_patch_project(r, p, st, x, n)) {
      /* a point on an edge's neighbour (within the projection's tolerance) keeps to this one */
      st[0] = fmin(1.0, fmax(0.0, st[0]));
      st[1] = fmin(1.0, fmax(0.0, st[1]));
    }
    memset(pw, 0, sizeof(*pw));
    pw->n = 4;
    mbs_patch_weights(pw->w, st[0], st[1]);
    for (int k = 0; k < 4; k++) {
      pw->node[k] = m->attach_node[sh->corner[k]];
    }
    return;
  }
  if (!c->segment[side]) {
    double cc[3];
    frame_coords(m, f, q, p, cc);
    mbs_attach_point_weights(m, f, cc, pw);
    return;
  }
  static const double zero[3] = {0.0, 0.0, 0.0};
  double xa[3], xb[3], u[3], d[3];
  mbs_attach_point(m, f, zero, q, xa);
  mbs_attach_point(m, f + 1, zero, q, xb);
  vsub(u, xb, xa);
  vsub(d, p, xa);
  double uu = vdot(u, u), s = uu > 0.0 ? vdot(d, u) / uu : 0.5;
  s = fmin(1.0, fmax(0.0, s));
  memset(pw, 0, sizeof(*pw));
  pw->n = 2;
  pw->node[0] = m->attach_node[f];
  pw->node[1] = m->attach_node[f + 1];
  pw->w[0] = 1.0 - s;
  pw->w[1] = s;
}

/* [m] the radius of a rounded shape fixed to one frame (sphere, capsule) or of a beam
 * segment's surface, 0 otherwise (and for a beam segment without it, whose material point is
 * already on its axis) */
static double rounded_radius(const mbsShape *s) {
  if (s->segment) {
    return s->surface ? s->size[0] : 0.0;
  }
  return s->kind == MBS_SHAPE_SPHERE || s->kind == MBS_SHAPE_CAPSULE ? s->size[0] : 0.0;
}

/* the entry of c's W columns for coordinate idx (created at zero) */
static int w_entry(Contact *c, int idx) {
  for (int s = 0; s < c->nw; s++) {
    if (c->widx[s] == idx) {
      return s;
    }
  }
  int e = c->nw++;
  c->widx[e] = idx;
  for (int dd = 0; dd < 3; dd++) {
    c->w[dd][e] = c->wl[dd][e] = 0.0;
  }
  return e;
}

/* the entries of node n0's 12 coordinates (phi, d_1, d_2, d_3) in c's W columns, those
 * missing created at zero in that order: what w_entry gives for each of them in turn, with
 * one pass over the entries instead of twelve (a die's point: 24 entries, 12 lookups per
 * side, 4 % of a pile's instructions) */
static void frame_entries(Contact *c, int n0, int ent[12]) {
  int i0 = 3 * n0;
  for (int j = 0; j < 12; j++) {
    ent[j] = -1;
  }
  for (int s = 0; s < c->nw; s++) {
    unsigned j = (unsigned)(c->widx[s] - i0);
    if (j < 12 && ent[j] < 0) {
      ent[j] = s;
    }
  }
  for (int j = 0; j < 12; j++) {
    if (ent[j] < 0) {
      int e = c->nw++;
      c->widx[e] = i0 + j;
      for (int dd = 0; dd < 3; dd++) {
        c->w[dd][e] = c->wl[dd][e] = 0.0;
      }
      ent[j] = e;
    }
  }
}

/* the directors d (3 x 3: d_1, d_2, d_3 one after the other) made orthonormal, into e: the
 * polar factor D (D^T D)^-1/2 by its series I - E/2 + 3 E^2/8 in E = D^T D - I (the
 * configurations the columns are built at are predictions q0 + c dt u0, whose directors are
 * off by O(dt^2 omega^2): unnormalized they scaled omega by 1 + dt^2 omega^2, and a ball
 * rolling at 35 rad/s slid at 2 mm/s) */
static void orthonormal(const double *d, double e[9]) {
  double E[9], S[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      E[3 * i + j] = vdot(d + 3 * i, d + 3 * j) - (i == j ? 1.0 : 0.0);
    }
  }
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      double e2 = E[3 * i] * E[j] + E[3 * i + 1] * E[3 + j] + E[3 * i + 2] * E[6 + j];
      S[3 * i + j] = (i == j ? 1.0 : 0.0) - 0.5 * E[3 * i + j] + 0.375 * e2;
    }
  }
  /* e_j = sum_i d_i S_ij */
  for (int j = 0; j < 3; j++) {
    for (int a = 0; a < 3; a++) {
      e[3 * j + a] = d[a] * S[j] + d[3 + a] * S[3 + j] + d[6 + a] * S[6 + j];
    }
  }
}

/* the directors at q of the director frame with vector node n0 (q at n0 + 1 .. n0 + 3) made
 * orthonormal, into e: orthonormal's result, kept per node with the directors it was
 * computed from (w->ortho) and reused while they are the same bits (a die's points at one
 * configuration share its frame: 7 of 8 calls in a pile) */
static void ortho_cached(MoreauWork *w, const double *q, int n0, double e[9]) {
  const double *d = q + 3 * (n0 + 1);
  double *slot = w->ortho + 18 * (size_t)n0;
  if (memcmp(slot, d, 9 * sizeof(double)) != 0) {
    memcpy(slot, d, 9 * sizeof(double));
    orthonormal(d, slot + 9);
  }
  memcpy(e, slot + 9, 9 * sizeof(double));
}

/* 1 if contact side `side` is a point fixed to one director frame (a rigid body, a beam
 * node's sphere), 0 for a point mass, the ground, a beam segment and a surface's patch, whose
 * points move with their nodes' positions alone (a patch's corners may be beam nodes: its
 * frame is corner 1's, which carries none of its other corners' share) */
static int director_side(const mbsModel *m, const Contact *c, int side) {
  mbsAttachKind kind = m->attach_kind[c->frame[side]];
  return !c->segment[side] && !c->patch[side] &&
         (kind == MBS_ATTACH_DIRECTORS || kind == MBS_ATTACH_BEAM_NODE);
}

/* add sign times the velocity of the material point p (world, at q) of contact side `side`
 * along the directions dirs[d0 .. d1) to c's W columns (add_point; add_frame_point: the part
 * of a director frame with node n0, lever r = p - phi). On a director frame (a rigid body, a
 * beam node) the velocity is that of the rigid part of the director rates: phi' + omega x r
 * with r = p - phi and omega = 1/2 sum_i d_i x d_i' (exact for rigid rates, and blind to the
 * rates that violate the rigidity), so its entries are dir on phi and 1/2 (r x dir) x d_i on
 * d_i instead of the material point's c^i dir. For rigid rates both are the same; the
 * difference is what makes the contact problem consistent: the end velocities u1 of the
 * theta step meet the rigidity only to O(dt omega^2), and W^T u1 with the material point's
 * columns had that part in it, which depends on the configuration (so the alternation of
 * contact problem and nonlinear step converged only linearly, by dt omega per pass) and which
 * no impulse can remove (so the prox residual of a stack stalled) */
static void add_frame_point(MoreauWork *w, Contact *c, double (*cols)[MAX_W], const double *q,
                            int n0, const double r[3], double sign, int d0, int d1) {
  const double *dirs[3] = {c->n, c->t1, c->t2};
  double e[9];
  int ent[12]; /* the entries of phi and d_1, d_2, d_3, looked up once */
  ortho_cached(w, q, n0, e);
  frame_entries(c, n0, ent);
  double half = sign * 0.5;
  for (int dd = d0; dd < d1; dd++) {
    const double *dir = dirs[dd];
    double *col = cols[dd], rn[3];
    vcross(rn, r, dir);
    col[ent[0]] += sign * dir[0];
    col[ent[1]] += sign * dir[1];
    col[ent[2]] += sign * dir[2];
    for (int i = 0; i < 3; i++) {
      double a[3];
      vcross(a, rn, e + 3 * i);
      col[ent[3 + 3 * i]] += half * a[0];
      col[ent[4 + 3 * i]] += half * a[1];
      col[ent[5 + 3 * i]] += half * a[2];
    }
  }
}

/* the axis point x = (1 - s) phi_a + s phi_b of a beam segment side under the world point p
 * (side_weights' s) and its weights */
static void segment_axis_point(const mbsModel *m, const Contact *c, int side, const double *q,
                               const double p[3], mbsPointWeights *pw, double x[3]) {
  side_weights(m, c, side, q, p, pw);
  x[0] = x[1] = x[2] = 0.0;
  for (int k = 0; k < pw->n; k++) {
    vaxpy(x, pw->w[k], q + 3 * pw->node[k]);
  }
}

static void add_point(const mbsModel *m, MoreauWork *w, Contact *c, double (*cols)[MAX_W],
                      int side, const double *q, const double p[3], double sign, int d0, int d1) {
  const double *dirs[3] = {c->n, c->t1, c->t2};
  int f = c->frame[side];
  if (director_side(m, c, side)) {
    int n0 = m->attach_node[f];
    double r[3];
    vsub(r, p, q + 3 * n0);
    add_frame_point(w, c, cols, q, n0, r, sign, d0, d1);
    return;
  }
  mbsPointWeights pw;
  if (c->surface[side]) {
    /* a point of a segment's surface, x = sum_k N_k (phi_k + l_k) with the lever l_k = l =
     * p - (the axis point under p) fixed to node k's directors (seed 002 eq. 3.44, the
     * contour point of a cross section, interpolated as its eq. 3.48): its velocity is
     * sum_k N_k (phi_k' + omega_k x l), the translation of the axis point and the section's
     * rotation interpolated between the nodes (seed 002 eq. 3.46, 3.49), each node's part
     * by the rigid part of its director rates as above */
    double x[3], l[3];
    segment_axis_point(m, c, side, q, p, &pw, x);
    vsub(l, p, x);
    for (int k = 0; k < pw.n; k++) {
      add_frame_point(w, c, cols, q, pw.node[k], l, sign * pw.w[k], d0, d1);
    }
    return;
  }
  side_weights(m, c, side, q, p, &pw);
  for (int k = 0; k < pw.n; k++) {
    for (int j = 0; j < 3; j++) {
      int e = w_entry(c, 3 * pw.node[k] + j);
      for (int dd = d0; dd < d1; dd++) {
        cols[dd][e] += sign * pw.w[k] * dirs[dd][j];
      }
    }
  }
}

/* W columns of contact c: the tangential ones gamma_t = t . (v_b(pb) - v_a(pa)), the slip of
 * the touching material points; the normal one the rate of the gap, n . (v_b(pb) - v_a(pa))
 * with a rounded shape's (sphere, capsule) point replaced by its centre or axis point (pa -
 * r n, pb + r n): the gap of a sphere is linear in its centre, so W_N^T (q1 - q0) is the
 * change of the gap exactly, at any rotation; the material point on its surface would add the
 * centripetal term omega x (omega x r) dt / 2 of a spinning sphere, a normal velocity that made
 * a sliding, spinning ball hop */
/* the columns cols of contact c at q with, per side, the touching point ps[side] (world)
 * and, for a rounded shape, its centre or axis point pc[side] for the normal */
static void columns_pts(const mbsModel *m, MoreauWork *w, Contact *c, double (*cols)[MAX_W],
                        const double *q, double ps[2][3], double pc[2][3], const double rad[2]) {
  for (int side = 0; side < 2; side++) {
    double sign = side ? 1.0 : -1.0;
    if (rad[side] == 0.0) {
      add_point(m, w, c, cols, side, q, ps[side], sign, 0, 3);
      continue;
    }
    add_point(m, w, c, cols, side, q, ps[side], sign, 1, 3);
    add_point(m, w, c, cols, side, q, pc[side], sign, 0, 1);
  }
}

/* the touching points of c (pa, pb) and the centres of its rounded shapes (p -+ r n) */
static void contact_points(const mbsModel *m, const Contact *c, const double pa[3],
                           const double pb[3], double ps[2][3], double pc[2][3],
                           double rad[2]) {
  const mbsShapePair *pr = &c->pair;
  rad[0] = rounded_radius(&m->shape[pr->a]);
  rad[1] = rounded_radius(&m->shape[pr->b]);
  for (int j = 0; j < 3; j++) {
    ps[0][j] = pa[j];
    ps[1][j] = pb[j];
    pc[0][j] = pa[j] - rad[0] * c->n[j];
    pc[1][j] = pb[j] + rad[1] * c->n[j];
  }
}

/* c's columns at q: the impulses' (w) and, the same until refresh_geometry sets them at the
 * step's predicted end, the end velocities' (wl) */
static void contact_columns(const mbsModel *m, MoreauWork *w, Contact *c, const double *q,
                            const double pa[3], const double pb[3]) {
  double ps[2][3], pc[2][3], rad[2];
  contact_points(m, c, pa, pb, ps, pc, rad);
  c->nw = 0;
  columns_pts(m, w, c, c->w, q, ps, pc, rad);
  for (int dir = 0; dir < 3; dir++) {
    memcpy(c->wl[dir], c->w[dir], (size_t)c->nw * sizeof(double)); /* the entries in use */
  }
  c->endlaw = 1;
}

/* the world position at qe of the material point at p at q of side's frame (unchanged on a
 * beam segment's axis, a point mass or the ground, whose columns have no lever arm; on a
 * segment's surface the axis point moved with its nodes and the lever with their directors) */
static void point_at(const mbsModel *m, const Contact *c, int side, const double *q,
                     const double *qe, const double p[3], double out[3]) {
  int f = c->frame[side];
  if (c->surface[side]) {
    mbsPointWeights pw;
    double x[3];
    segment_axis_point(m, c, side, q, p, &pw, x);
    out[0] = out[1] = out[2] = 0.0;
    for (int k = 0; k < pw.n; k++) {
      /* the point phi_k + l fixed to node k's frame (frames f, f + 1), carried to qe */
      double pk[3], cc[3], xk[3];
      vsub(pk, p, x);
      vaxpy(pk, 1.0, q + 3 * pw.node[k]);
      frame_coords(m, f + k, q, pk, cc);
      mbs_attach_point(m, f + k, cc, qe, xk);
      vaxpy(out, pw.w[k], xk);
    }
    return;
  }
  if (!director_side(m, c, side)) {
    memcpy(out, p, 3 * sizeof(double));
    return;
  }
  double cc[3];
  frame_coords(m, f, q, p, cc);
  mbs_attach_point(m, f, cc, qe, out);
}

/* c's end-velocity columns wl at the predicted end qe: with the points where the shapes
 * touch there (c->pae, c->pbe: a rolling ball's lowest point, a rod's point over a pin), or,
 * when the narrow phase did not report the point there, the material points that touch at q
 * (the evaluation point) carried to qe */
static void end_columns(const mbsModel *m, MoreauWork *w, Contact *c, const double *q,
                        const double *qe) {
  double ps[2][3], pc[2][3], rad[2], pse[2][3], pce[2][3];
  if (c->end_found) {
    contact_points(m, c, c->pae, c->pbe, pse, pce, rad);
  } else {
    contact_points(m, c, c->pa, c->pb, ps, pc, rad);
    for (int side = 0; side < 2; side++) {
      point_at(m, c, side, q, qe, ps[side], pse[side]);
      point_at(m, c, side, q, qe, pc[side], pce[side]);
    }
  }
  for (int dir = 0; dir < 3; dir++) {
    /* the entries in use (those columns_pts adds are created at zero) */
    memset(c->wl[dir], 0, (size_t)c->nw * sizeof(double));
  }
  columns_pts(m, w, c, c->wl, qe, pse, pce, rad);
}

/* W_k^T u along direction dir */
static double wdot(const Contact *c, int dir, const double *u) {
  double s = 0.0;
  for (int e = 0; e < c->nw; e++) {
    s += c->w[dir][e] * u[c->widx[e]];
  }
  return s;
}

static int contact_cmp(const void *a, const void *b) {
  const Contact *x = a, *y = b;
  int c = mbs_shape_pair_cmp(&x->pair, &y->pair);
  if (c != 0) {
    return c;
  }
  return (x->feature > y->feature) - (x->feature < y->feature);
}

/* the n contacts a by (pair, feature), as qsort with contact_cmp orders them (the keys are
 * distinct): detect's points come pair by pair in the candidates' order, so only a pair's
 * own points may be out of feature order, and an insertion sort moves those few with
 * contact_copy (the entries in use) where qsort moved whole contacts (0.5 % of a pile's
 * instructions) */
static void sort_contacts(Contact *a, int n) {
  Contact tmp;
  for (int i = 1; i < n; i++) {
    if (contact_cmp(&a[i - 1], &a[i]) <= 0) {
      continue;
    }
    contact_copy(&tmp, &a[i]);
    int j = i;
    for (; j > 0 && contact_cmp(&a[j - 1], &tmp) > 0; j--) {
      contact_copy(&a[j], &a[j - 1]);
    }
    contact_copy(&a[j], &tmp);
  }
}

/* [m] how far shape s can move in time dt at the velocities v: its centre's speed and its
 * radius times the director rates' norm (a bound of the rotation's speed) */
static double shape_reach(const mbsModel *m, const mbsShape *s, const double *v, double dt) {
  int f = s->attach;
  if (s->kind == MBS_SHAPE_PATCH) {
    /* every point of the patch moves at a convex combination of its corners' velocities */
    double vmax = 0.0;
    for (int k = 0; k < 4; k++) {
      vmax = fmax(vmax, vnorm(v + 3 * m->attach_node[s->corner[k]]));
    }
    return dt * vmax;
  }
  if (s->segment) {
    /* every point of the segment moves at a convex combination of its ends' velocities */
    return dt * fmax(vnorm(v + 3 * m->attach_node[f]), vnorm(v + 3 * m->attach_node[f + 1]));
  }
  if (m->attach_kind[f] == MBS_ATTACH_POINT) {
    return dt * vnorm(v + 3 * m->attach_node[f]);
  }
  if (m->attach_kind[f] != MBS_ATTACH_DIRECTORS && m->attach_kind[f] != MBS_ATTACH_BEAM_NODE) {
    return 0.0;
  }
  const double *vp = v + 3 * m->attach_node[f];
  double vc[3], rot = 0.0;
  for (int j = 0; j < 3; j++) {
    vc[j] = vp[j] + s->c[0] * vp[3 + j] + s->c[1] * vp[6 + j] + s->c[2] * vp[9 + j];
    rot += vp[3 + j] * vp[3 + j] + vp[6 + j] * vp[6 + j] + vp[9 + j] * vp[9 + j];
  }
  double r = isfinite(s->radius) ? s->radius : 0.0;
  return dt * (vnorm(vc) + r * sqrt(rot));
}

/* the points of the pair pr (poses and extra at q in w) with gap below its margin, widened by
 * how far its shapes can move (w->extra), appended to (*buf)[off + n ...] (at most w->cap
 * points from off: the storage grows when they are more, so *buf and every pointer into the
 * contact arrays may move; pr must not point into them); returns the new count, -1 when the
 * storage could not grow (storage_error) */
static int detect_pair(const mbsModel *m, MoreauWork *w, const double *q, const mbsShapePair *pr,
                       Contact **buf, int off, int n, int columns) {
  const mbsShape *sa = &m->shape[pr->a], *sb = &m->shape[pr->b];
  const mbsContactSpec *sp = &m->contact[pr->spec];
  double margin = sp->margin + w->extra[pr->a] + w->extra[pr->b];
  /* the next points' contacts are written after the narrow phase, their heads (and columns)
   * in cache lines apart from each other's: fetched meanwhile (no value changes) */
  int j0 = w->fetched > off + n ? w->fetched : off + n;
  int j1 = off + n + PREFETCH_CONTACTS < w->cap ? off + n + PREFETCH_CONTACTS : w->cap;
  for (int j = j0; j < j1; j++) {
    const char *h = (const char *)&(*buf)[j];
    for (size_t b = 0; b < CONTACT_HEAD; b += 64) {
      __builtin_prefetch(h + b, 1, 3);
    }
    if (columns) {
      const Contact *c = &(*buf)[j];
      for (size_t b = 0; b < PREFETCH_W * sizeof(int); b += 64) {
        __builtin_prefetch((const char *)c->widx + b, 1, 3);
      }
      for (int a = 0; a < 3; a++) {
        for (size_t b = 0; b < PREFETCH_W * sizeof(double); b += 64) {
          __builtin_prefetch((const char *)c->w[a] + b, 1, 3);
          __builtin_prefetch((const char *)c->wl[a] + b, 1, 3);
        }
      }
    }
  }
  w->fetched = j1 > w->fetched ? j1 : w->fetched;
  int np = mbs_collide(sa, &w->pose[pr->a], sb, &w->pose[pr->b], m->contact_pts, margin, w->pts,
                       w->ptcap);
  if (n + np > w->cap && !grow_contacts(w, (long)n + np)) {
    return -1;
  }
  for (int j = 0; j < np; j++) {
    const mbsContactPoint *p = &w->pts[j];
    Contact *c = &(*buf)[off + n++];
    memset(c, 0, CONTACT_HEAD); /* nw = ncomp = 0: the arrays are filled as they grow */
    c->pair = *pr;
    c->feature = p->feature;
    c->frame[0] = sa->attach;
    c->frame[1] = sb->attach;
    c->segment[0] = sa->segment;
    c->segment[1] = sb->segment;
    c->surface[0] = sa->segment && sa->surface;
    c->surface[1] = sb->segment && sb->surface;
    c->patch[0] = sa->kind == MBS_SHAPE_PATCH;
    c->patch[1] = sb->kind == MBS_SHAPE_PATCH;
    c->body[0] = sa->body;
    c->body[1] = sb->body;
    for (int d3 = 0; d3 < 3; d3++) {
      c->point[d3] = 0.5 * (p->pa[d3] + p->pb[d3]);
      c->n[d3] = p->n[d3];
      c->pa[d3] = p->pa[d3];
      c->pb[d3] = p->pb[d3];
    }
    tangents(c->n, c->t1, c->t2);
    c->gap0 = c->gap1 = p->gap;
    c->e = sp->restitution;
    c->mu = sp->friction;
    if (columns) {
      contact_columns(m, w, c, q, p->pa, p->pb);
    }
  }
  return n;
}

/* all points of the candidate pairs at q with gap below each pair's margin, widened by how
 * far the two shapes can move within dt at the velocities v (v NULL: not widened), into
 * (*buf)[off ...] (w->c or w->vc, at most w->cap points: the storage grows when they are more,
 * so *buf and every pointer into the contact arrays may move); returns the count, -1 when the
 * storage could not grow (storage_error), BROAD_NOMEM when the broad phase ran out of memory.
 * The candidates are the broad phase's (sorted by pair), or with only (nonly <= w->cap
 * contacts sorted by pair, their pairs copied to w->cand before anything is written or grown)
 * just the pairs of those contacts. columns = 0 leaves the W columns out (nw = 0:
 * contact_columns when needed). */
static int detect(const mbsModel *m, MoreauWork *w, const double *q, const double *v, double dt,
                  Contact **buf, int off, const Contact *only, int nonly, int columns) {
  for (int s = 0; s < m->nshape; s++) {
    mbs_shape_pose(m, &m->shape[s], q, &w->pose[s]);
    w->extra[s] = v ? shape_reach(m, &m->shape[s], v, dt) : 0.0;
    if (m->shape[s].segment) {
      /* a segment's bounding sphere grows as it stretches */
      w->extra[s] += fmax(0.0, m->shape[s].size[0] + w->pose[s].half - m->shape[s].radius);
    }
  }
  const mbsShapePair *cand = NULL;
  int ncand = 0;
  if (only) {
    /* only lies in the contact arrays (c, vc, vp), which move when the storage grows */
    assert(nonly <= w->cap);
    for (int k = 0; k < nonly; k++) {
      if (ncand == 0 || mbs_shape_pair_cmp(&w->cand[ncand - 1], &only[k].pair) != 0) {
        w->cand[ncand++] = only[k].pair;
      }
    }
    cand = w->cand;
  } else {
    ncand = mbs_broad_pairs(w->broad, m, w->pose, w->extra, &cand);
    if (ncand < 0) {
      return BROAD_NOMEM;
    }
  }
  /* the broad phase's storage does not move with the contact arrays; w->cand is not one
   * of the arrays detect_pair writes */
  int n = 0;
  w->fetched = off;
  for (int i = 0; i < ncand && n >= 0; i++) {
    n = detect_pair(m, w, q, &cand[i], buf, off, n, columns);
  }
  if (n < 0) {
    return -1;
  }
  sort_contacts(*buf + off, n);
  return n;
}

/* the step's contacts at the predicted evaluation point q0 + theta dt u0: the same points
 * (pair and feature) found there get their normal, tangents and material points from there;
 * returns 0, -1 when the contact storage could not grow */
static double refresh_geometry(const mbsModel *m, MoreauWork *w, double dt) {
  const mbsImplicitWork *b = &w->base;
  for (int i = 0; i < m->nq; i++) {
    w->gq[i] = b->q_prev[i] + w->theta * dt * b->v_prev[i];
    w->qe[i] = b->q_prev[i] + dt * b->v_prev[i];
  }
  /* where the points touch at the predicted end (the end velocities' lever arms), for the
   * contacts whose shapes move within the step (the others: the evaluation point's) */
  int nmove = 0;
  for (int k = 0; k < w->nc; k++) {
    Contact *c = &w->c[k];
    const mbsShapePair *pr = &c->pair;
    double reach = shape_reach(m, &m->shape[pr->a], b->v_prev, dt) +
                   shape_reach(m, &m->shape[pr->b], b->v_prev, dt);
    c->end_found = 0;
    c->moving = reach > END_REACH;
    if (c->moving) {
      contact_copy(&w->vc[nmove++], c);
    }
  }
  /* vc holds 2 cap: the moving contacts (nmove <= nc <= cap), then their points at the end */
  int ne = nmove > 0 ? detect(m, w, w->qe, b->v_prev, dt, &w->vc, nmove, w->vc, nmove, 0) : 0;
  if (ne < 0) {
    return -1.0;
  }
  for (int k = 0; k < w->nc; k++) {
    Contact *c = &w->c[k];
    const Contact *hit = ne > 0 && c->moving
                             ? bsearch(c, w->vc + nmove, (size_t)ne, sizeof(Contact), contact_cmp)
                             : NULL;
    c->end_found = hit != NULL;
    if (hit) {
      memcpy(c->pae, hit->pa, sizeof(c->pae));
      memcpy(c->pbe, hit->pb, sizeof(c->pbe));
    }
  }
  int nv = detect(m, w, w->gq, b->v_prev, dt, &w->vc, 0, w->c, w->nc, 0);
  if (nv < 0) {
    return -1.0;
  }
  for (int k = 0; k < w->nc && nv > 0; k++) {
    Contact *c = &w->c[k];
    const Contact *hit = bsearch(c, w->vc, (size_t)nv, sizeof(Contact), contact_cmp);
    if (!hit) {
      continue;
    }
    memcpy(c->n, hit->n, sizeof(c->n));
    memcpy(c->t1, hit->t1, sizeof(c->t1));
    memcpy(c->t2, hit->t2, sizeof(c->t2));
    memcpy(c->pa, hit->pa, sizeof(c->pa));
    memcpy(c->pb, hit->pb, sizeof(c->pb));
    memcpy(c->point, hit->point, sizeof(c->point));
    contact_columns(m, w, c, w->gq, c->pa, c->pb);
    /* the end velocities' columns at the step's predicted end q0 + dt u0: the velocity of a
     * turning body's point p is phi' + omega x (p - phi) with the lever arm of the end, so
     * that a point that sticks is at rest at the end; with the evaluation point's arm it
     * slid at (1 - theta) dt omega x phi' (a rod pivoting on a pin crept, its friction doing
     * work step after step) */
    if (c->moving) {
      end_columns(m, w, c, w->gq, w->qe);
    }
  }
  return 0.0;
}

/* ---- J^-1 W ---- */

/* b = a^-1 b for the row-major n x n a (overwritten) and the row-major n x nrhs b: Gaussian
 * elimination with partial pivoting by rows (contiguous), skipping zero multipliers (a
 * component's block is sparse, and a few dozen unknowns are below what LAPACK's blocking
 * pays for) and, in each update, the zero entries of the pivot row (listed once per row; b
 * starts as columns of the identity). An update by a zero entry leaves a nonzero entry as
 * it was; a zero of a only ever meets a test against zero, and b holds no -0 before its rows
 * are scaled (+0 - f 0 = +0), so the result is the full loops' to the bit. idx holds
 * n (nrhs + 1) ints. 0 when a pivot is exactly zero */
static int dense_solve(int n, double *a, int nrhs, double *b, int *idx) {
  int *ja = idx, *jb = idx + n; /* the pivot row's nonzero columns of a (n), of b (nrhs) */
  for (int k = 0; k < n; k++) {
    int p = k;
    double amax = fabs(a[(size_t)k * n + k]);
    for (int i = k + 1; i < n; i++) {
      if (fabs(a[(size_t)i * n + k]) > amax) {
        amax = fabs(a[(size_t)i * n + k]);
        p = i;
      }
    }
    if (!(amax > 0.0)) {
      return 0;
    }
    double *ak = a + (size_t)k * n, *bk = b + (size_t)k * nrhs;
    if (p != k) {
      double *ap = a + (size_t)p * n, *bp = b + (size_t)p * nrhs;
      for (int j = k; j < n; j++) {
        double t = ak[j];
        ak[j] = ap[j];
        ap[j] = t;
      }
      for (int j = 0; j < nrhs; j++) {
        double t = bk[j];
        bk[j] = bp[j];
        bp[j] = t;
      }
    }
    int na = 0, nb = 0;
    for (int j = k + 1; j < n; j++) {
      if (ak[j] != 0.0) {
        ja[na++] = j;
      }
    }
    for (int j = 0; j < nrhs; j++) {
      if (bk[j] != 0.0) {
        jb[nb++] = j;
      }
    }
    double inv = 1.0 / ak[k];
    for (int i = k + 1; i < n; i++) {
      double *ai = a + (size_t)i * n, *bi = b + (size_t)i * nrhs;
      double f = ai[k] * inv;
      if (f == 0.0) {
        continue;
      }
      for (int t = 0; t < na; t++) {
        ai[ja[t]] -= f * ak[ja[t]];
      }
      for (int t = 0; t < nb; t++) {
        bi[jb[t]] -= f * bk[jb[t]];
      }
    }
  }
  /* back substitution; the nonzero columns of each finished row of b (cnt, then nrhs each) */
  int *cnt = idx, *jl = idx + n;
  for (int i = n - 1; i >= 0; i--) {
    const double *ai = a + (size_t)i * n;
    double *bi = b + (size_t)i * nrhs;
    for (int l = i + 1; l < n; l++) {
      const double *bl = b + (size_t)l * nrhs;
      const int *jlist = jl + (size_t)l * nrhs;
      double f = ai[l];
      if (f != 0.0) {
        for (int t = 0; t < cnt[l]; t++) {
          bi[jlist[t]] -= f * bl[jlist[t]];
        }
      }
    }
    double inv = 1.0 / ai[i];
    int *jlist = jl + (size_t)i * nrhs;
    cnt[i] = 0;
    for (int j = 0; j < nrhs; j++) {
      bi[j] *= inv;
      if (bi[j] != 0.0) {
        jlist[cnt[i]++] = j;
      }
    }
  }
  return 1;
}

/* a new factor_stamp when the Newton matrix was assembled since the last one: the
 * components' Z are functions of its entries alone, so a matrix that the step's Newton
 * iterations kept (chord iterations, no assembly) keeps them (the contact problem's later
 * alternations and the position projection factored them again at every call) */
static void stamp_components(MoreauWork *w) {
  if (w->jac_stamped != w->jac_version) {
    w->factor_stamp++;
    w->jac_stamped = w->jac_version;
  }
}

/* Z of the dense components the contacts touch (once per Newton matrix: stamp) */
static mbsStatus factor_components(mbsData *d, MoreauWork *w, const Contact *c, int nc,
                                   mbsError *err) {
  const mbsSystem *sys = d->sys;
  for (int k = 0; k < nc; k++) {
    for (int side = 0; side < c[k].ncomp; side++) {
      int ci = c[k].comp[side];
      Component *cp = &w->comp[ci];
      if (cp->lu0 < 0 || cp->stamp == w->factor_stamp) {
        continue;
      }
      int nu = cp->nunk;
      double *a = w->lu + cp->lu0;
      memset(a, 0, (size_t)nu * (size_t)nu * sizeof(double));
      for (int jj = 0; jj < nu; jj++) {
        int col = w->comp_unk[cp->unk0 + jj];
        for (int p = sys->colptr[col]; p < sys->colptr[col + 1]; p++) {
          int row = sys->rowind[p];
          a[(size_t)w->pos_in[row] * nu + jj] = d->jac[p]; /* row-major */
        }
      }
      /* Z = (J^-1)_cc: the solutions for the unit coordinate columns [I; 0] (coordinates
       * come first in a component), their coordinate rows */
      int nco = cp->ncoord;
      double *z = w->zinv + cp->lu0, *b = w->zwork;
      memset(b, 0, (size_t)nu * (size_t)nco * sizeof(double));
      for (int i = 0; i < nco; i++) {
        b[(size_t)i * nco + i] = 1.0; /* row-major nu x nco */
      }
      if (!dense_solve(nu, a, nco, b, w->zidx)) {
        return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                             "the Newton matrix of a contact's body is singular");
      }
      for (int j = 0; j < nco; j++) {
        for (int i = 0; i < nco; i++) {
          z[(size_t)j * nco + i] = b[(size_t)i * nco + j];
        }
      }
      cp->stamp = w->factor_stamp;
    }
  }
  return MBS_OK;
}

/* the slot of component ci among contact c's, -1 if it does not touch it */
static int comp_slot(const Contact *c, int ci) {
  for (int s = 0; s < c->ncomp; s++) {
    if (c->comp[s] == ci) {
      return s;
    }
  }
  return -1;
}

/* the components contact c touches */
static void contact_components(const MoreauWork *w, Contact *c) {
  c->ncomp = 0;
  for (int e = 0; e < c->nw; e++) {
    int ci = w->comp_of[c->widx[e]];
    if (comp_slot(c, ci) < 0) {
      c->comp[c->ncomp++] = ci;
    }
  }
}

/* the columns J^-1 [W_dir; 0] (coordinates of c's components) for ndir directions, into the
 * pool w->x (grown by doubling when full: the contacts keep offsets into it, xoff, never
 * pointers, so the columns stay valid); MBS_ERR_NOMEM when it cannot grow */
/* c's J^-1 W columns (ndir directions): room in w->x for each of its components, and those
 * of its dense components (x = Z w); 1 when one of its components is large (its columns
 * then come from large_solves), 0 if not, -1 out of memory (err) */
static int columns_dense(MoreauWork *w, Contact *c, int ndir, mbsError *err) {
  for (int side = 0; side < c->ncomp; side++) {
    const Component *cp = &w->comp[c->comp[side]];
    long need = w->xused + (long)ndir * cp->ncoord;
    if (need > w->xcap) {
      long xcap = need > 2 * w->xcap ? need : 2 * w->xcap;
      if (!grow_array(&w->x, (size_t)xcap, sizeof(double))) {
        mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                             "out of memory for the contact solver's impulse responses J^-1 W "
                             "(%ld doubles, %.0f MB, for %d contact points); fewer points in "
                             "contact or more memory help, a smaller step does not",
                             xcap, xcap * 8e-6, w->nc);
        return -1;
      }
      w->xcap = xcap;
    }
    c->xoff[side] = w->xused;
    w->xused += (long)ndir * cp->ncoord;
    if (cp->lu0 >= 0) {
      memset(w->x + c->xoff[side], 0, (size_t)ndir * (size_t)cp->ncoord * sizeof(double));
    }
  }
  /* dense components: x = Z w, one pass over W's entries */
  for (int e = 0; e < c->nw; e++) {
    int ci = w->comp_of[c->widx[e]];
    const Component *cp = &w->comp[ci];
    if (cp->lu0 < 0) {
      continue;
    }
    int nco = cp->ncoord;
    const double *zc = w->zinv + cp->lu0 + (size_t)w->pos_in[c->widx[e]] * nco;
    double *xo = w->x + c->xoff[comp_slot(c, ci)];
    if (ndir == 3) {
      /* the three directions in one pass over Z's column (each entry's sum in the same order) */
      double *restrict x0 = xo, *restrict x1 = xo + nco, *restrict x2 = xo + 2 * nco;
      const double *restrict zr = zc;
      double w0 = c->w[0][e], w1 = c->w[1][e], w2 = c->w[2][e];
      int i = 0;
      for (; i + 1 < nco; i += 2) { /* pairs: SSE2's two lanes */
        double za = zr[i], zb = zr[i + 1];
        x0[i] += w0 * za;
        x0[i + 1] += w0 * zb;
        x1[i] += w1 * za;
        x1[i + 1] += w1 * zb;
        x2[i] += w2 * za;
        x2[i + 1] += w2 * zb;
      }
      for (; i < nco; i++) {
        double z = zr[i];
        x0[i] += w0 * z;
        x1[i] += w1 * z;
        x2[i] += w2 * z;
      }
      continue;
    }
    for (int dir = 0; dir < ndir; dir++, xo += nco) {
      double we = c->w[dir][e];
      for (int i = 0; i < nco; i++) {
        xo[i] += we * zc[i];
      }
    }
  }
  int large = 0;
  for (int side = 0; side < c->ncomp; side++) {
    large |= w->comp[c->comp[side]].lu0 < 0;
  }
  return large;
}

/* the J^-1 W columns (ndir directions) of the contacts list[0..m) on their large components:
 * sparse solves with the whole matrix, all m ndir right-hand sides in one pass through the
 * factors (KLU takes them four at a time), once for all of a contact's large sides */
static mbsStatus large_solves(mbsData *d, MoreauWork *w, Contact *const *list, int m, int ndir,
                              mbsError *err) {
  if (m == 0) {
    return MBS_OK;
  }
  size_t n = (size_t)d->sys->n, need = (size_t)m * (size_t)ndir * n;
  if (need > w->mcap) {
    if (!grow_array(&w->mrhs, need, sizeof(double)) ||
        !grow_array(&w->msol, need, sizeof(double))) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                           "out of memory for the contact solver's right-hand sides");
    }
    w->mcap = need;
  }
  memset(w->mrhs, 0, need * sizeof(double));
  for (int j = 0; j < m; j++) {
    const Contact *c = list[j];
    for (int dir = 0; dir < ndir; dir++) {
      double *b = w->mrhs + ((size_t)j * ndir + dir) * n;
      for (int e = 0; e < c->nw; e++) {
        b[c->widx[e]] = c->w[dir][e];
      }
    }
  }
  mbsStatus st = mbs_newton_linear_solve_many(d, m * ndir, w->mrhs, w->msol, err);
  if (st != MBS_OK) {
    return st;
  }
  for (int j = 0; j < m; j++) {
    const Contact *c = list[j];
    for (int side = 0; side < c->ncomp; side++) {
      const Component *cp = &w->comp[c->comp[side]];
      for (int dir = 0; dir < ndir && cp->lu0 < 0; dir++) {
        double *xo = w->x + c->xoff[side] + (long)dir * cp->ncoord;
        const double *so = w->msol + ((size_t)j * ndir + dir) * n;
        for (int i = 0; i < cp->ncoord; i++) {
          xo[i] = so[w->comp_unk[cp->unk0 + i]];
        }
      }
    }
  }
  return MBS_OK;
}

/* c's J^-1 W columns (ndir directions) into w->x (columns_dense, large_solves) */
static mbsStatus contact_solve(mbsData *d, MoreauWork *w, Contact *c, int ndir, mbsError *err) {
  int large = columns_dense(w, c, ndir, err);
  if (large < 0) {
    return MBS_ERR_NOMEM;
  }
  return large ? large_solves(d, w, &c, 1, ndir, err) : MBS_OK;
}

/* The velocity scale of a step's contact problem: the fastest approach, at least g dt and
 * 1 mm/s, and at least the size of the terms that make up a contact velocity W^T u (the sum
 * of |W_i u_i| over the contact's coordinates, at the step's start u0), so that the
 * tolerance never asks for more digits than round-off leaves in W^T u: a die sliding at
 * 1 m/s has no contact velocity below about 1e-16 m/s x (the condition of its problem). */
static double contact_vscale(const mbsModel *m, const MoreauWork *w, const double *u0,
                             double dt) {
  double vs = fmax(1e-3, vnorm(m->gravity) * dt);
  for (int k = 0; k < w->nc; k++) {
    const Contact *c = &w->c[k];
    vs = fmax(vs, fabs(c->gN0));
    for (int dir = 0; dir < 3; dir++) {
      double s = 0.0;
      for (int e = 0; e < c->nw; e++) {
        s += fabs(c->w[dir][e] * u0[c->widx[e]]);
      }
      vs = fmax(vs, s);
    }
  }
  return vs;
}

/* u += s * (J^-1 W_dir) of contact c (coordinates) */
static void add_column(const MoreauWork *w, const Contact *c, int dir, double s, double *u) {
  for (int side = 0; side < c->ncomp && s != 0.0; side++) {
    int ci = c->comp[side];
    const Component *cp = &w->comp[ci];
    const double *xo = w->x + c->xoff[side] + (long)dir * cp->ncoord;
    for (int i = 0; i < cp->ncoord; i++) {
      u[w->comp_unk[cp->unk0 + i]] += s * xo[i];
    }
  }
}

/* G_kk = (1/theta) W^T J^-1 W of contact c */
static void delassus_block(const MoreauWork *w, Contact *c) {
  double g[9] = {0.0};
  for (int e = 0; e < c->nw; e++) {
    int i = c->widx[e], ci = w->comp_of[i];
    const Component *cp = &w->comp[ci];
    const double *x = w->x + c->xoff[comp_slot(c, ci)] + w->pos_in[i];
    for (int b = 0; b < 3; b++) {
      double xb = x[(long)b * cp->ncoord];
      for (int a = 0; a < 3; a++) {
        g[3 * a + b] += c->w[a][e] * xb;
      }
    }
  }
  for (int k = 0; k < 9; k++) {
    c->G[k] = g[k] / w->theta;
  }
  double dmax = fmax(c->G[0], fmax(c->G[4], c->G[8]));
  c->r = dmax > 0.0 ? 1.0 / dmax : 1.0;
}

/* J^-1 W and the Delassus blocks of the step's contacts, at the factored Newton matrix */
static mbsStatus contact_matrices(mbsData *d, MoreauWork *w, mbsError *err) {
  stamp_components(w);
  w->mat_count++;
  w->mat_jac = -1;
  w->xused = 0;
  for (int k = 0; k < w->nc; k++) {
    contact_components(w, &w->c[k]);
  }
  mbsStatus st = factor_components(d, w, w->c, w->nc, err);
  Contact *batch[SOLVE_BATCH];
  int nb = 0;
  for (int k = 0; k < w->nc && st == MBS_OK; k++) {
    int large = columns_dense(w, &w->c[k], 3, err);
    if (large < 0) {
      return MBS_ERR_NOMEM;
    }
    if (large) {
      batch[nb++] = &w->c[k];
    }
    if (nb == SOLVE_BATCH || (k == w->nc - 1 && nb > 0)) {
      st = large_solves(d, w, batch, nb, 3, err);
      nb = 0;
    }
  }
  for (int k = 0; k < w->nc && st == MBS_OK; k++) {
    delassus_block(w, &w->c[k]);
  }
  if (st == MBS_OK) {
    w->mat_jac = w->jac_version;
  }
  return st;
}

/* The velocities of every rigid body onto its rigid motions at q, in its own mass metric:
 * v = (phi', omega x d_i) with omega = A^-1 sum_ij E'^ij d_i x d_j' (A = tr(E') I - D E' D^T,
 * E' = E - e e^T / m the director tensor about the centre of mass, i.e. the inertia tensor in
 * world axes) and phi' keeping the body's linear momentum. An M-orthogonal projection onto
 * the rigid motions keeps each body's linear and angular momentum and removes the kinetic
 * energy of the rest. em's end velocity 2 Delta q / dt - u0 meets the rigidity only to
 * O(dt omega^2) and keeps the rest, alternating in sign from step to step: after the dice
 * tumbled, their director rates broke the rigidity by 0.38 1/s at rest, and each step's
 * predictor q0 + dt u0 and linear model carried it (a contact problem to solve every step
 * of a pile at rest). Beams keep their rates (their nodes are coupled by stiffness). */
static void project_rigid_bodies(const mbsModel *m, const double *q, double *v) {
  for (int bi = 0; bi < m->nbody; bi++) {
    if (m->body_type[bi] != MBS_BODY_RIGID || m->body_node[bi] < 0) {
      continue;
    }
    int n0 = m->body_node[bi];
    double M = m->body_mass[bi];
    const double *e = m->body_e + 3 * bi, *E = m->body_E + 9 * bi;
    double Ep[9];
    for (int i = 0; i < 9; i++) {
      Ep[i] = E[i] - e[i / 3] * e[i % 3] / M;
    }
    const double *d[3] = {q + 3 * (n0 + 1), q + 3 * (n0 + 2), q + 3 * (n0 + 3)};
    double *phid = v + 3 * n0, *dd[3] = {v + 3 * (n0 + 1), v + 3 * (n0 + 2), v + 3 * (n0 + 3)};
    double rhs[3] = {0.0, 0.0, 0.0}, A[9] = {0.0}, tr = Ep[0] + Ep[4] + Ep[8];
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        double c[3], eij = Ep[3 * i + j];
        vcross(c, d[i], dd[j]);
        vaxpy(rhs, eij, c);
        for (int a = 0; a < 3; a++) {
          for (int b2 = 0; b2 < 3; b2++) {
            A[3 * a + b2] -= eij * d[i][a] * d[j][b2];
          }
        }
      }
    }
    A[0] += tr;
    A[4] += tr;
    A[8] += tr;
    double w[3];
    if (!msolve3(A, rhs, w)) {
      continue;
    }
    double dphi[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < 3; i++) {
      double rig[3];
      vcross(rig, w, d[i]);
      for (int a = 0; a < 3; a++) {
        dphi[a] += e[i] * (dd[i][a] - rig[a]) / M;
        dd[i][a] = rig[a];
      }
    }
    vaxpy(phid, 1.0, dphi);
  }
}

/* The velocities the law constrains (xi = W^T u1 - tgt): an impact's normal velocity at the
 * step's end (Newton's law: target); a closed contact that approaches at the step's start,
 * its normal velocity at the step's end (no approach: the contact stops it, as an inelastic
 * impact at the step's start would); a closed contact at rest or separating, the normal
 * velocity of the step's evaluation point, W_N^T ((1 - theta) u0 + theta u1) = W_N^T Delta q
 * / dt, so that it does no work and keeps its gap; the tangential velocities at the step's
 * end, so that a sticking contact ends the step at rest (on the average velocity, em would
 * keep the last sliding velocity alternating in sign forever). With the evaluation point
 * alone a normal velocity alternates in sign from step to step and never decays at theta =
 * 1/2 (u1 = -u0): a box "at rest" chattered; the end-velocity law on an approach stops it
 * within two steps. */
static void set_targets(const mbsModel *m, MoreauWork *w, const double *u0, double dt) {
  double f = (1.0 - w->theta) / w->theta;
  w->cver++; /* the laws' columns (endlaw) and the contact list may have changed */
  /* one law for all closed points of a pair of shapes (the contacts are sorted by pair): the
   * targets of a face's four corners must be the values of one rigid velocity field, or no
   * impulses meet them all (a corner approaching at 1e-10 m/s beside one separating stalled the
   * contact problem of two dice at that level) */
  for (int k0 = 0, k1; k0 < w->nc; k0 = k1) {
    int approach = 0, impact = 0;
    for (k1 = k0; k1 < w->nc && mbs_shape_pair_cmp(&w->c[k1].pair, &w->c[k0].pair) == 0; k1++) {
      approach |= !w->c[k1].impact && wdot(&w->c[k1], 0, u0) < 0.0;
      impact |= w->c[k1].impact;
    }
    for (int k = k0; k < k1; k++) {
      Contact *c = &w->c[k];
      double g0 = wdot(c, 0, u0);
      c->endlaw = 1;
      memset(&c->pl, 0, sizeof(c->pl));
      if (c->penalty) {
        /* the penalty law on the gap of the step's evaluation point (implicit, seed 002 sec.
         * 2.3.1): L_N = dt max(0, -k g_theta - c gbar), gbar = (1 - theta) gamma0 + theta xi
         * the evaluation point's normal velocity, g_theta = g0 + theta dt gbar */
        const mbsContactSpec *sp = &m->contact[c->pair.spec];
        c->pl = (mbsContactPenalty){sp->stiffness, sp->damping,      c->gap0,
                                    (1.0 - w->theta) * g0, w->theta, dt,
                                    sp->friction_velocity};
        c->tgt[0] = c->tgt[1] = c->tgt[2] = 0.0;
        c->endlaw = 0;
        continue;
      }
      if (impact && k1 - k0 > 1) {
        /* several points of a pair with an impact among them: Newton's law on the start
         * velocities, -e gamma0, at all of them (a rigid field again; the moment of impact
         * and the acceleration after it that a single point's target takes in would differ
         * from corner to corner) */
        c->tgt[0] = -c->e * g0;
      } else if (c->impact || approach) {
        c->tgt[0] = c->impact ? c->target : 0.0;
      } else {
        c->tgt[0] = -f * g0;
        c->endlaw = 0;
      }
      c->tgt[1] = c->tgt[2] = 0.0;
    }
  }
}

/* ---- the contact problem ---- */

/* the columns contact c's law measures direction dir with (c->endlaw) */
static const double *law_column(const Contact *c, int dir) {
  return dir == 0 && !c->endlaw ? c->w[0] : c->wl[dir];
}

/* the contact velocities xi of contact c at the velocities u (Newton shift on the normal) */
static void contact_xi(const Contact *c, const double *u, double xi[3]) {
  for (int dir = 0; dir < 3; dir++) {
    const double *col = law_column(c, dir);
    double s = 0.0;
    for (int e = 0; e < c->nw; e++) {
      s += col[e] * u[c->widx[e]];
    }
    xi[dir] = s - c->tgt[dir];
  }
}

/* the prox residual [m/s]: max over contacts and directions of |L - prox(L - r xi)| / r */
static double prox_residual(const MoreauWork *w, const double *u) {
  double res = 0.0;
  for (int k = 0; k < w->nc; k++) {
    const Contact *c = &w->c[k];
    double xi[3], phi[3];
    contact_xi(c, u, xi);
    res = fmax(res, mbs_contact_law(c->mu, c->r, c->penalty ? &c->pl : NULL, c->L, xi, phi, NULL,
                                    NULL, NULL));
  }
  return res;
}

/* grow the int array *a (capacity *cap) to hold n; 0 when out of memory */
static int grow_ints(int **a, int *cap, long n) {
  long c = n > 2L * *cap ? n : 2L * *cap;
  int *g = realloc(*a, (size_t)c * sizeof(int));
  if (!g) {
    return 0;
  }
  *a = g;
  *cap = (int)c;
  return 1;
}

/* room for n Delassus blocks */
static int grow_blocks(MoreauWork *w, long n) {
  long c = n > 2L * w->gcap ? n : 2L * w->gcap;
  int *gc = realloc(w->gcol, (size_t)c * sizeof(int));
  if (!gc) {
    return 0;
  }
  w->gcol = gc;
  double *gv = realloc(w->gval, (size_t)c * 9 * sizeof(double));
  if (!gv) {
    return 0;
  }
  w->gval = gv;
  w->gcap = (int)c;
  return 1;
}

/* block (k, l) of G = (1/theta) W^T J^-1 W (row-major) into g: contact k's W entries against
 * contact l's J^-1 W columns on the components they share */
static void g_block(const MoreauWork *w, const Contact *ck, const Contact *cl, double g[9]) {
  const double *col[3] = {law_column(ck, 0), law_column(ck, 1), law_column(ck, 2)};
  memset(g, 0, 9 * sizeof(double));
  for (int e = 0; e < ck->nw; e++) {
    int i = ck->widx[e], ci = w->comp_of[i], side = comp_slot(cl, ci);
    if (side < 0) {
      continue;
    }
    long ncoord = w->comp[ci].ncoord;
    const double *x = w->x + cl->xoff[side] + w->pos_in[i];
    double x0 = x[0], x1 = x[ncoord], x2 = x[2 * ncoord];
    for (int a = 0; a < 3; a++) { /* g[3 a + b] += col[a][e] x_b: each entry's sum in e's order */
      double ca = col[a][e];
      g[3 * a] += ca * x0;
      g[3 * a + 1] += ca * x1;
      g[3 * a + 2] += ca * x2;
    }
  }
  for (int k = 0; k < 9; k++) {
    g[k] /= w->theta;
  }
}

/* The Delassus matrix of the step's contacts in 3 x 3 blocks by block rows (the pattern of
 * mbsContactProblem): contacts k and l couple when they touch a common component of the
 * Newton matrix (a body, a mechanism, a beam); the contacts on each component are listed
 * once (counting sort), so the cost grows with the coupled pairs, not with nc^2 */
static mbsStatus delassus(MoreauWork *w, mbsError *err) {
  int nc = w->nc;
  /* the contacts of each component: cnt (ncomp + 1) starts, clist the contacts */
  long nref = 0;
  memset(w->ccnt, 0, (size_t)(w->ncomp + 1) * sizeof(int));
  for (int k = 0; k < nc; k++) {
    for (int s2 = 0; s2 < w->c[k].ncomp; s2++) {
      w->ccnt[w->c[k].comp[s2] + 1]++;
      nref++;
    }
  }
  for (int i = 0; i < w->ncomp; i++) {
    w->ccnt[i + 1] += w->ccnt[i];
  }
  if (nref > w->clcap && !grow_ints(&w->clist, &w->clcap, nref)) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory for the contact problem");
  }
  memcpy(w->cfill, w->ccnt, (size_t)w->ncomp * sizeof(int));
  for (int k = 0; k < nc; k++) {
    for (int s2 = 0; s2 < w->c[k].ncomp; s2++) {
      w->clist[w->cfill[w->c[k].comp[s2]]++] = k;
    }
  }
  /* block rows: the neighbours of k (marked with k + 1 in cmark), ascending */
  int nb = 0;
  for (int k = 0; k < nc; k++) {
    w->cmark[k] = 0;
  }
  for (int k = 0; k < nc; k++) {
    const Contact *ck = &w->c[k];
    w->gptr[k] = nb;
    int row0 = nb;
    for (int s2 = 0; s2 < ck->ncomp; s2++) {
      int ci = ck->comp[s2];
      for (int j = w->ccnt[ci]; j < w->ccnt[ci + 1]; j++) {
        int l = w->clist[j];
        if (w->cmark[l] == k + 1) {
          continue;
        }
        w->cmark[l] = k + 1;
        if (nb >= w->gcap && !grow_blocks(w, nb + 1)) {
          return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                               "out of memory for the contact problem");
        }
        w->gcol[nb++] = l;
      }
    }
    /* ascending columns (insertion sort: a row holds a few dozen blocks) */
    for (int i = row0 + 1; i < nb; i++) {
      int v = w->gcol[i], j = i - 1;
      while (j >= row0 && w->gcol[j] > v) {
        w->gcol[j + 1] = w->gcol[j];
        j--;
      }
      w->gcol[j + 1] = v;
    }
    for (int q = row0; q < nb; q++) {
      g_block(w, ck, &w->c[w->gcol[q]], w->gval + 9 * (size_t)q);
    }
  }
  w->gptr[nc] = nb;
  return MBS_OK;
}

/* G's factors for the contact problem p (G = Wl^T X / theta, mbsContactProblem.ny ...): the
 * coordinates y of all components, each contact's X columns on its components (the
 * J^-1 W columns in w->x) and its law columns Wl; MBS_ERR_NOMEM */
static mbsStatus factor_lists(MoreauWork *w, mbsContactProblem *p, mbsError *err) {
  int nc = w->nc;
  if (!w->ybase) {
    w->ybase = malloc((size_t)(w->ncomp + 1) * sizeof(int));
    if (!w->ybase) {
      goto nomem;
    }
    w->ybase[0] = 0;
    for (int i = 0; i < w->ncomp; i++) {
      w->ybase[i + 1] = w->ybase[i] + w->comp[i].ncoord;
    }
  }
  long ns = 0, nw = 0;
  for (int k = 0; k < nc; k++) {
    ns += w->c[k].ncomp;
    nw += w->c[k].nw;
  }
  if (nc + 1 > w->fcap) {
    int c = nc + 1 > 2 * w->fcap ? nc + 1 : 2 * w->fcap;
    if (!grow_array(&w->fsptr, (size_t)c, sizeof(int)) ||
        !grow_array(&w->fwptr, (size_t)c, sizeof(int))) {
      goto nomem;
    }
    w->fcap = c;
  }
  if (ns > w->fscap) {
    long c = ns > 2L * w->fscap ? ns : 2L * w->fscap;
    if (c > INT_MAX || !grow_array(&w->fsy0, (size_t)c, sizeof(int)) ||
        !grow_array(&w->fslen, (size_t)c, sizeof(int)) ||
        !grow_array(&w->fsoff, (size_t)c, sizeof(long))) {
      goto nomem;
    }
    w->fscap = (int)c;
  }
  if (nw > w->fwcap) {
    long c = nw > 2L * w->fwcap ? nw : 2L * w->fwcap;
    if (c > INT_MAX / 3 || !grow_array(&w->fwy, (size_t)c, sizeof(int)) ||
        !grow_array(&w->fwval, 3 * (size_t)c, sizeof(double))) {
      goto nomem;
    }
    w->fwcap = (int)c;
  }
  int q = 0, e = 0;
  for (int k = 0; k < nc; k++) {
    const Contact *c = &w->c[k];
    w->fsptr[k] = q;
    for (int side = 0; side < c->ncomp; side++, q++) {
      w->fsy0[q] = w->ybase[c->comp[side]];
      w->fslen[q] = w->comp[c->comp[side]].ncoord;
      w->fsoff[q] = c->xoff[side];
    }
    w->fwptr[k] = e;
    const double *col[3] = {law_column(c, 0), law_column(c, 1), law_column(c, 2)};
    for (int j = 0; j < c->nw; j++, e++) {
      int i = c->widx[j];
      w->fwy[e] = w->ybase[w->comp_of[i]] + w->pos_in[i];
      for (int a = 0; a < 3; a++) {
        w->fwval[3 * (long)e + a] = col[a][j];
      }
    }
  }
  w->fsptr[nc] = q;
  w->fwptr[nc] = e;
  p->ny = w->ybase[w->ncomp];
  p->theta = w->theta;
  p->sptr = w->fsptr;
  p->sy0 = w->fsy0;
  p->slen = w->fslen;
  p->soff = w->fsoff;
  p->xval = w->x;
  p->wptr = w->fwptr;
  p->wy = w->fwy;
  p->wval = w->fwval;
  return MBS_OK;
nomem:
  return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory for the contact problem");
}

/* the contact problem on the linear model u = w->u + (1/theta) J^-1 W (L - L_j) (J^-1 W from
 * contact_matrices): the step's contacts' impulses in w->c[].L are updated and w->u follows
 * them; returns the iterations (sweeps and Newton iterations), -1 when the tolerance was
 * not reached (the impulses are the best found), -2 out of memory (err) */
static int contact_problem(const mbsModel *m, MoreauWork *w, double vscale, double *res_out,
                           mbsError *err) {
  int nc = w->nc;
  /* the blocks of the last call while its columns and contacts are those of now */
  if (w->del_mat != w->mat_count || w->del_cver != w->cver) {
    w->del_mat = -1;
    if (delassus(w, err) != MBS_OK) {
      return -2;
    }
    w->del_mat = w->mat_count;
    w->del_cver = w->cver;
  }
  int npen = 0;
  for (int k = 0; k < nc; k++) {
    const Contact *c = &w->c[k];
    contact_xi(c, w->u, w->pxi + 3 * k);
    memcpy(w->pL + 3 * k, c->L, sizeof(c->L));
    w->pmu[k] = c->mu;
    w->ppen[k] = c->pl;
    if (!c->penalty) {
      w->ppen[k].k = 0.0;
    }
    npen += c->penalty;
  }
  double tol = m->contact_tolerance * vscale;
  mbsContactProblem p = {.n = nc,
                         .gptr = w->gptr,
                         .gcol = w->gcol,
                         .gval = w->gval,
                         .mu = w->pmu,
                         .xi0 = w->pxi,
                         .L = w->pL,
                         .tol = tol,
                         .vscale = vscale,
                         .accept = fmax(tol, STALL_ACCEPT * vscale),
                         .max_iter = m->contact_iterations,
                         .reg = REG_COMPLIANCE,
                         .accept_reg = fmax(tol, REG_ACCEPT * vscale),
                         .pen = npen ? w->ppen : NULL,
                         .augmented = MBS_CONTACT_AUGMENTED};
  if (factor_lists(w, &p, err) != MBS_OK) {
    return -2;
  }
  mbsContactStats st;
  int ok = mbs_contact_solve(w->cs, &p, &st, err);
  if (ok < 0) {
    return -2;
  }
  for (int k = 0; k < nc; k++) {
    Contact *c = &w->c[k];
    for (int a = 0; a < 3; a++) {
      add_column(w, c, a, (w->pL[3 * k + a] - c->L[a]) / w->theta, w->u);
      c->L[a] = w->pL[3 * k + a];
    }
    c->status = c->L[0] > 0.0 ? (hypot(c->L[1], c->L[2]) < c->mu * c->L[0] * (1.0 - 1e-9) ? 1 : 2)
                              : 0;
  }
  *res_out = st.residual / vscale;
  w->stall = st.stalled > 0 || st.regularized > 0 ? st.residual : 0.0;
  w->regularized += st.regularized;
  return ok ? st.sweeps + st.newton : -1;
}

/* The penalty law (seed 002 sec. 2.3.1) of a penetrating point at the step's start: a
 * spring-damper normal force f_N = max(0, -k g - c gamma_N) and Coulomb's friction
 * regularized below friction_velocity v_r, f_T = -mu f_N gamma_T / max(|gamma_T|, v_r); the
 * step carries the impulse dt f (explicit: stable while k dt^2 stays well below the mass
 * the contact moves) */
static void penalty_impulse(const mbsContactSpec *sp, Contact *c, const double *u0, double dt) {
  double gt1 = wdot(c, 1, u0), gt2 = wdot(c, 2, u0);
  double fn = fmax(0.0, -sp->stiffness * c->gap0 - sp->damping * c->gN0);
  double vt = hypot(gt1, gt2), s = sp->friction * fn / fmax(vt, sp->friction_velocity);
  c->L[0] = dt * fn;
  c->L[1] = -dt * s * gt1;
  c->L[2] = -dt * s * gt2;
  c->status = vt < sp->friction_velocity ? 1 : 2;
  c->gap1 = c->gap0;
}

/* The step's contact points at q (detect, widened by the velocities vw when not NULL): each
 * gets its normal velocity at u0; with implicit 0 (the semi-explicit variant) penetrating
 * points of penalty pairs go to w->pen with their impulse; the others stay in w->c (their
 * count is returned, -1 when the storage overflowed, BROAD_NOMEM out of memory) for the
 * caller's activation rule */
static int gather(const mbsModel *m, MoreauWork *w, const double *q, const double *vw,
                  const double *u0, double dt, int implicit) {
  int nc = detect(m, w, q, vw, dt, &w->c, 0, NULL, 0, 1), keep = 0;
  w->npen = 0;
  for (int k = 0; k < nc; k++) {
    Contact *c = &w->c[k];
    c->gN0 = wdot(c, 0, u0);
    const mbsContactSpec *sp = &m->contact[c->pair.spec];
    c->penalty = sp->law == MBS_CONTACT_PENALTY && implicit;
    if (sp->law == MBS_CONTACT_PENALTY && !implicit) {
      if (c->gap0 < 0.0) {
        penalty_impulse(sp, c, u0, dt);
        contact_copy(&w->pen[w->npen++], c);
      }
      continue;
    }
    contact_copy(&w->c[keep++], c);
  }
  return nc < 0 ? nc : keep;
}

/* why a step's contact problem failed */
static void unconverged(char *why, size_t n, const mbsModel *m, int nc, double cres,
                        double vscale) {
  snprintf(why, n,
           "the contact problem (%d points) did not converge in %d iterations (prox residual "
           "%.3e relative to %.3g m/s; many redundant frictional contacts, a pile, may need "
           "a looser solver.moreau.contact_tolerance such as 1e-4)",
           nc, m->contact_iterations, cres, vscale);
}

/* ---- the step ---- */

typedef struct {
  const mbsModel *m;
  mbsData *d;
  MoreauWork *w;
  const mbsSchemeWeights *s;
  double dt, t0;
} StepCtx;

/* the theta step's residual with the contact impulses: r_q -= dt W L */
static double ctx_assemble(void *ctx, int with_jac) {
  StepCtx *p = ctx;
  MoreauWork *w = p->w;
  double scale = mbs_assemble(p->m, p->d, &w->base, p->s, p->dt, p->t0, with_jac);
  w->jac_version += with_jac != 0;
  for (int k = 0; k < w->nc + w->npen; k++) {
    const Contact *c = k < w->nc ? &w->c[k] : &w->pen[k - w->nc];
    for (int e = 0; e < c->nw; e++) {
      double f = p->dt * (c->w[0][e] * c->L[0] + c->w[1][e] * c->L[1] + c->w[2][e] * c->L[2]);
      p->d->res[c->widx[e]] -= f;
      scale = maxd(scale, fabs(f));
    }
  }
  return scale;
}

static void ctx_scales(void *ctx, double *qn, double *inertia) {
  StepCtx *p = ctx;
  *qn = mbs_norm_inf(p->d->q, p->m->nq);
  if (inertia) {
    *inertia = p->s->cM * p->w->base.mmax * mbs_norm_inf(p->w->base.dq, p->m->nq);
  }
}

static void ctx_apply(void *ctx, const double *dx) {
  StepCtx *p = ctx;
  mbsImplicitWork *b = &p->w->base;
  int nq = p->m->nq;
  for (int i = 0; i < nq; i++) {
    b->dq[i] -= dx[i];
    p->d->q[i] = b->q_prev[i] + b->dq[i];
  }
  for (int i = 0; i < p->m->ncon; i++) {
    b->mu[i] -= dx[nq + i];
  }
}

static void ctx_reset(void *ctx) {
  StepCtx *p = ctx;
  mbsImplicitWork *b = &p->w->base;
  memcpy(b->mu, b->mu_prev, (size_t)p->m->ncon * sizeof(double));
  for (int i = 0; i < p->m->nq; i++) {
    b->dq[i] = p->dt * b->v_prev[i];
    p->d->q[i] = b->q_prev[i] + b->dq[i];
  }
}

static mbsSchemeWeights weights(double theta, double dt) {
  mbsSchemeWeights s = {1.0 / theta, theta, 1.0 / dt, theta * dt, theta == 0.5};
  if (theta == 1.0) {
    s.tf = dt * (1.0 - 1e-9); /* the left limit of profiles at the step's end (onestep.c) */
  }
  return s;
}

static void prepare(const mbsModel *m, mbsData *d, double dt, mbsSchemeWeights *s) {
  MoreauWork *w = d->integrator_work;
  *s = weights(w->theta, dt);
  mbs_implicit_begin(m, d, &w->base);
  for (int i = 0; i < m->nq; i++) {
    w->base.qhat[i] = dt * w->base.v_prev[i];
    w->base.qbase[i] = 0.0;
    w->base.vbase[i] = 0.0;
  }
}

/* u1 from the current Delta q */
static void end_velocity(const mbsModel *m, MoreauWork *w, double dt, double *u) {
  double c1 = 1.0 / w->theta;
  for (int i = 0; i < m->nq; i++) {
    u[i] = c1 * w->base.dq[i] / dt - (c1 - 1.0) * w->base.v_prev[i];
  }
}

/* V(q) + the constraint-free part of the energy that positions carry (the kinetic energy is
 * kept by the projection) */
static double potential(const mbsModel *m, const double *q, const double *v) {
  double T, V;
  mbs_energy(m, q, v, &T, &V);
  return V;
}

/* The step's impacts that the detection at q1 (within each pair's margin) did not report:
 * an impact's end gap is that of its rebound, however far the scheme's midpoint left it
 * (two spheres closing at 60 m/s stay 20 mm apart at the end of the step they meet in), so
 * each is looked up in its pair's narrow phase with a margin beyond that gap and appended
 * to w->vc (nv points there, sorted; the poses are detect's at q1; the storage grows as
 * needed). Returns the new count, -1 when the storage could not grow. */
static int impact_points(const mbsModel *m, MoreauWork *w, int nv) {
  int n = nv;
  for (int k = 0; k < w->nc; k++) {
    const Contact *c = &w->c[k];
    if (!c->impact || !(c->L[0] > 0.0) ||
        bsearch(c, w->vc, (size_t)nv, sizeof(Contact), contact_cmp)) {
      continue;
    }
    const mbsShapePair *pr = &c->pair;
    double reach = 2.0 * (fabs(c->gap0) + fabs(c->gend)) + m->contact[pr->spec].margin + 1.0;
    int np = mbs_collide(&m->shape[pr->a], &w->pose[pr->a], &m->shape[pr->b], &w->pose[pr->b],
                         m->contact_pts, reach, w->pts, w->ptcap);
    for (int j = 0; j < np; j++) {
      if (w->pts[j].feature != c->feature) {
        continue;
      }
      if (n >= w->cap) {
        /* the arrays move: c is taken again */
        if (!grow_contacts(w, (long)n + 1)) {
          return -1;
        }
        c = &w->c[k];
      }
      Contact *v = &w->vc[n++];
      contact_copy(v, c);
      const mbsContactPoint *p = &w->pts[j];
      for (int d3 = 0; d3 < 3; d3++) {
        v->point[d3] = 0.5 * (p->pa[d3] + p->pb[d3]);
        v->n[d3] = p->n[d3];
        v->pa[d3] = p->pa[d3];
        v->pb[d3] = p->pb[d3];
      }
      tangents(v->n, v->t1, v->t2);
      v->gap0 = v->gap1 = p->gap;
      v->nw = 0;
      break;
    }
  }
  if (n > nv) {
    qsort(w->vc, (size_t)n, sizeof(Contact), contact_cmp);
  }
  return n;
}

/* sum 1/2 k g^2 over the penetrating points (g = gap0 < 0) of penalty pairs among c[0..n) */
static double penalty_energy(const mbsModel *m, const Contact *c, int n) {
  double v = 0.0;
  for (int k = 0; k < n; k++) {
    const mbsContactSpec *sp = &m->contact[c[k].pair.spec];
    if (sp->law == MBS_CONTACT_PENALTY && c[k].gap0 < 0.0) {
      v += 0.5 * sp->stiffness * c[k].gap0 * c[k].gap0;
    }
  }
  return v;
}

/* the position projection's islands (Component.isl): the root of component k */
static int island_root(MoreauWork *w, int k) {
  while (w->comp[k].isl != k) {
    w->comp[k].isl = w->comp[w->comp[k].isl].isl;
    k = w->comp[k].isl;
  }
  return k;
}

/* the components of contact c (contact_components) into one island */
static void island_join(MoreauWork *w, const Contact *c) {
  for (int s = 1; s < c->ncomp; s++) {
    int a = island_root(w, c->comp[0]), b = island_root(w, c->comp[s]);
    if (a != b) {
      w->comp[a < b ? b : a].isl = a < b ? a : b;
    }
  }
}

/* island k's rigid motion in v (a translation of its position nodes and a rotation of all
 * its vector nodes about the origin, the M-orthogonal projection of its velocities onto
 * those six motions) into ref on its vector nodes' coordinates: its linear and angular
 * momentum. Directions with no mass (a point mass's rotation) are left out. */
static void island_rigid_motion(const mbsModel *m, MoreauWork *w, const double *q,
                                const double *v, int root, double *ref) {
  /* the generators at node a: R[k] (3 entries) for k < 3 translation e_k (position nodes),
   * k >= 3 rotation e_(k-3) x q_a */
  double A[36] = {0}, rhs[6] = {0};
#define GEN(a_, k_, out_)                                                                   \
  do {                                                                                      \
    const double *qa_ = q + 3 * (a_);                                                       \
    out_[0] = out_[1] = out_[2] = 0.0;                                                      \
    if ((k_) < 3) {                                                                         \
      out_[(k_)] = m->node_position[(a_)] ? 1.0 : 0.0;                                      \
    } else {                                                                                \
      int j_ = (k_)-3;                                                                      \
      out_[(j_ + 1) % 3] = qa_[(j_ + 2) % 3];                                               \
      out_[(j_ + 2) % 3] = -qa_[(j_ + 1) % 3];                                              \
    }                                                                                       \
  } while (0)
  for (int e = 0; e < m->nmass; e++) {
    int na = m->mass_a[e], nb = m->mass_b[e];
    if (w->comp[w->comp_of[3 * na]].isl != root || w->comp[w->comp_of[3 * nb]].isl != root) {
      continue;
    }
    double wv = m->mass_val[e];
    for (int pass = 0; pass < (na == nb ? 1 : 2); pass++) {
      int x = pass ? nb : na, y = pass ? na : nb; /* M^xy (I3) */
      double gx[6][3], gy[6][3];
      for (int k = 0; k < 6; k++) {
        GEN(x, k, gx[k]);
        GEN(y, k, gy[k]);
      }
      for (int k = 0; k < 6; k++) {
        rhs[k] += wv * vdot(gx[k], v + 3 * y);
        for (int l = 0; l < 6; l++) {
          A[6 * k + l] += wv * vdot(gx[k], gy[l]);
        }
      }
    }
  }
  /* A alpha = rhs by Gaussian elimination with full pivoting; pivots below 1e-12 of the
   * largest diagonal leave their direction out */
  double amax = 0.0, alpha[6] = {0};
  int perm[6], used[6] = {0};
  for (int k = 0; k < 6; k++) {
    amax = fmax(amax, fabs(A[7 * k]));
  }
  int nstep = 0;
  for (; nstep < 6; nstep++) {
    int pk = -1;
    double best = 1e-12 * amax;
    for (int k = 0; k < 6; k++) {
      if (!used[k] && fabs(A[7 * k]) > best) {
        best = fabs(A[7 * k]);
        pk = k;
      }
    }
    if (pk < 0) {
      break;
    }
    used[pk] = 1;
    perm[nstep] = pk;
    for (int k = 0; k < 6; k++) {
      if (!used[k] && A[6 * k + pk] != 0.0) {
        double f = A[6 * k + pk] / A[7 * pk];
        for (int l = 0; l < 6; l++) {
          A[6 * k + l] -= f * A[6 * pk + l];
        }
        rhs[k] -= f * rhs[pk];
      }
    }
  }
  for (int i = nstep - 1; i >= 0; i--) {
    int k = perm[i];
    double r = rhs[k];
    for (int j = i + 1; j < nstep; j++) {
      r -= A[6 * k + perm[j]] * alpha[perm[j]];
    }
    alpha[k] = r / A[7 * k];
  }
  for (int na = 0; na < m->nnode; na++) {
    if (w->comp[w->comp_of[3 * na]].isl != root) {
      continue;
    }
    for (int k = 0; k < 6; k++) {
      double g[3];
      GEN(na, k, g);
      for (int c = 0; c < 3; c++) {
        ref[3 * na + c] += alpha[k] * g[c];
      }
    }
  }
#undef GEN
}

/* The energy-consistent position projection: the kinetic energy of the bodies the step's
 * position projection pushed pays up to `gain` [J] of the potential energy the pushes added
 * (finish_step: only what the step's laws did not dissipate). The paying set is every
 * island of a pushed component, an island being the components joined by the projection's
 * points and by the step's closed contacts (an impulse, or an end gap within GAP_ACTIVE).
 * Its velocities relative to a reference are scaled by s = sqrt(1 - paid / T_rel): the
 * reference is zero for an island held by the ground (a contact with it, a joint row a rigid
 * motion would break, a scalar coordinate), else the island's own rigid motion
 * (island_rigid_motion), so that a free island keeps its linear and angular momentum. A
 * scaled relative velocity keeps every scleronomic bilateral row (G v = 0), the rigid bodies'
 * rigid motions, every closed contact's gamma_N >= 0 and stick or slip direction (Coulomb's
 * law is positively homogeneous); not a prescribed motion's rows (G v = -g_t): an island with
 * a row of a drive (a conveyor, a moving obstacle) does not pay. Returns what was paid:
 * min(gain, T_rel), 0 when no island can pay. */
static double pay_projection(const mbsModel *m, mbsData *d, MoreauWork *w, int nc, double t1,
                             double gain) {
  int any = 0;
  for (int k = 0; k < nc; k++) {
    Contact *c = &w->c[k];
    if (c->L[0] > 0.0 || c->gap1 <= GAP_ACTIVE) {
      contact_components(w, c);
      island_join(w, c);
    }
  }
  for (int k = 0; k < w->ncomp; k++) {
    w->comp[k].isl = island_root(w, k);
  }
  /* an island pays (its root's moved & 2) when one of its components was pushed
   * (moved & 1); 4: it is held by the ground */
  for (int k = 0; k < w->ncomp; k++) {
    if (w->comp[k].moved & 1) {
      w->comp[w->comp[k].isl].moved |= 2;
      any = 1;
    }
  }
  if (!any) {
    return 0.0;
  }
  /* the free islands' rigid motions (w->du), on the paying islands' coordinates */
  int nq = m->nq;
  memset(w->du, 0, (size_t)nq * sizeof(double));
  for (int r = 0; r < w->ncomp; r++) {
    if (w->comp[r].isl == r && (w->comp[r].moved & 2)) {
      island_rigid_motion(m, w, d->q, d->v, r, w->du);
    }
  }
  for (int i = 3 * m->nnode; i < nq; i++) {
    w->comp[w->comp[w->comp_of[i]].isl].moved |= 4; /* scalars: no rigid motion */
  }
  double vscale = 0.0;
  for (int i = 0; i < nq; i++) {
    vscale = fmax(vscale, fabs(d->v[i]));
  }
  for (int k = 0; k < nc; k++) {
    Contact *c = &w->c[k];
    if ((c->L[0] > 0.0 || c->gap1 <= GAP_ACTIVE) && c->ncomp > 0 &&
        (c->frame[0] == MBS_ATTACH_GROUND_ID || c->frame[1] == MBS_ATTACH_GROUND_ID)) {
      w->comp[w->comp[c->comp[0]].isl].moved |= 4;
    }
  }
  /* an island with a prescribed motion's row does not pay; one with a row its rigid motion
   * breaks (a joint to the ground) is held by the ground */
  mbsRowIter ri;
  for (mbs_rows_begin(&ri, m, d->q, t1, 1, w->rowwork); mbs_rows_next(&ri);) {
    int root = w->comp[w->comp_of[nq + ri.row]].isl;
    if (!(w->comp[root].moved & 2)) {
      continue;
    }
    if (ri.elem >= 0 && mbs_element_kind(m->elem[ri.elem].kind)->constraint_rates) {
      w->comp[root].moved &= ~2;
      continue;
    }
    double gr = 0.0, gs = 0.0;
    for (int e = 0; e < ri.nz; e++) {
      gr += ri.val[e] * w->du[ri.idx[e]];
      gs += fabs(ri.val[e]) * vscale;
    }
    if (fabs(gr) > 1e-9 * gs) {
      w->comp[root].moved |= 4;
    }
  }
  /* the reference (w->du) on the paying free islands' coordinates; the relative velocities
   * of every paying island into w->gq */
  for (int i = 0; i < nq; i++) {
    int fl = w->comp[w->comp[w->comp_of[i]].isl].moved;
    if (!(fl & 2)) {
      w->du[i] = w->gq[i] = 0.0;
      continue;
    }
    if (fl & 4) {
      w->du[i] = 0.0;
    }
    w->gq[i] = d->v[i] - w->du[i];
  }
  double T, V;
  mbs_energy(m, d->q, w->gq, &T, &V);
  if (!(T > 0.0)) {
    return 0.0;
  }
  double paid = fmin(gain, T);
  double s = sqrt(fmax(0.0, 1.0 - paid / T));
  for (int i = 0; i < nq; i++) {
    if (w->comp[w->comp[w->comp_of[i]].isl].moved & 2) {
      d->v[i] = w->du[i] + s * w->gq[i];
    }
  }
  return paid;
}

/* The work of the step's normal impulses on the points that were opening at its start
 * (gamma_N0 > 0) and that its law closed (L_N > 0): L_N (gamma_N0 + gamma_N1) / 2 > 0 is
 * energy the time discretization makes, not the contact (Moreau-Jean activates a point on its
 * gap, not its velocity: a point of a rocking box opening at 2.4 mm/s 16 um apart took an
 * impulse that stopped it, +2.1e-5 J, where in continuous time its gap stays open through the
 * step). Their bodies count as pushed (moved & 1): their islands pay it back with the
 * projection's rise (pay_projection, finish_step). Returns the sum of those works [J] */
static double open_points_gain(MoreauWork *w, const double *v1) {
  double gain = 0.0;
  for (int k = 0; k < w->nc; k++) {
    Contact *c = &w->c[k];
    if (c->penalty || !(c->L[0] > 0.0)) {
      continue;
    }
    double g0 = wdot(c, 0, w->base.v_prev);
    double wk = 0.5 * c->L[0] * (g0 + wdot(c, 0, v1));
    if (!(g0 > 0.0) || !(wk > 0.0)) {
      continue;
    }
    gain += wk;
    contact_components(w, c);
    for (int s = 0; s < c->ncomp; s++) {
      w->comp[c->comp[s]].moved |= 1;
    }
  }
  return gain;
}

/* whether a push of the projection's current solve moved a body of point c */
static int pushed(const MoreauWork *w, const Contact *c) {
  for (int s = 0; s < c->ncomp; s++) {
    if (w->comp[c->comp[s]].pushed == w->push_stamp) {
      return 1;
    }
  }
  return 0;
}

/* Push violated unilateral gaps out (q1 += J^-1 W_N nu, nu >= 0, by Gauss-Seidel on the
 * gaps), then restore the bilateral rows with Newton steps on J; up to 4 rounds. The
 * active contacts' end gaps follow. */
/* whether an impulse of the step acted on the bodies of point c (its W columns set): a
 * contact of the step with an impulse shares a component of the Newton matrix with it */
static int struck(const MoreauWork *w, Contact *c) {
  contact_components(w, c);
  for (int k = 0; k < w->nc; k++) {
    const Contact *o = &w->c[k];
    if (o->L[0] == 0.0 && o->L[1] == 0.0 && o->L[2] == 0.0) {
      continue;
    }
    for (int s = 0; s < o->ncomp; s++) {
      if (comp_slot(c, o->comp[s]) >= 0) {
        return 1;
      }
    }
  }
  return 0;
}
static mbsStatus project_positions(const mbsModel *m, mbsData *d, MoreauWork *w, double t1,
                                   int may_retry, int *retry, mbsError *err) {
  int nq = m->nq;
  double V0 = potential(m, d->q, d->v);
  long xmark = w->xused;
  stamp_components(w); /* the Newton matrix stays: its components are factored once */
  for (int k = 0; k < w->ncomp; k++) {
    w->comp[k].isl = k;
    w->comp[k].moved = 0;
  }
  w->open_gain = open_points_gain(w, d->v);
  int nvp = 0;        /* the pairs of the first round's points (w->vp) */
  double moved = 0.0; /* [m] the largest position change of the rounds so far */
  for (int round = 0;; round++) {
    w->xused = xmark;
    for (int k = 0; k < w->nc; k++) {
      w->c[k].seen = 0;
    }
    /* the later rounds look again at the first round's pairs alone while the pushes stay
     * far within the margin (no other pair can have come closer than it) */
    int nv = round > 0 && moved < PROJECT_LOCAL
                 ? detect(m, w, d->q, NULL, 0.0, &w->vc, 0, w->vp, nvp, 0)
                 : detect(m, w, d->q, NULL, 0.0, &w->vc, 0, NULL, 0, 0);
    if (nv >= 0 && round == 0) {
      nv = impact_points(m, w, nv);
      nvp = nv;
      for (int k = 0; k < nv; k++) {
        contact_copy(&w->vp[k], &w->vc[k]);
      }
    }
    if (nv == BROAD_NOMEM) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory in the broad phase");
    }
    if (nv < 0) {
      return storage_error(w, err);
    }
    /* the step's contacts get their end gaps; in the first round, an impact within the
     * step gets the end gap of its motion (vc[].impact: either sign of push), and a point
     * that penetrates without having been in the step's problem asks for the step again */
    for (int k = 0; k < nv; k++) {
      Contact *key = &w->vc[k];
      Contact *hit = bsearch(key, w->c, (size_t)w->nc, sizeof(Contact), contact_cmp);
      if (round == 0 && may_retry && !hit && key->gap0 < -GAP_ACTIVE && w->nforce < 2 * w->cap &&
          m->contact[key->pair.spec].law != MBS_CONTACT_PENALTY) {
        /* a point that was approaching at the step's start, or that the smooth forces
         * alone set approaching within the step (no impulse of the step acted on its bodies:
         * a beam's node swinging back into a box it left); one that an impulse of the step
         * set moving (a ball struck towards a wall within the step) meets its obstacle in a
         * later impact of its own, after the projection, with its restitution */
        contact_columns(m, w, key, d->q, key->pa, key->pb);
        if (wdot(key, 0, w->base.v_prev) < 0.0 || !struck(w, key)) {
          w->force[w->nforce].pair = key->pair;
          w->force[w->nforce++].feature = key->feature;
          *retry = 1;
        }
      }
      key->impact = 0;
      key->gend = 0.0;
      if (hit) {
        hit->gap1 = key->gap0;
        hit->seen = 1;
        if (round == 0 && hit->impact && hit->L[0] > 0.0 &&
            fabs(key->gap0 - hit->gend) > GAP_PROJECT) {
          key->impact = 1;
          key->gend = hit->gend;
        } else if (round == 0 && !hit->impact && !hit->penalty && hit->L[0] > 0.0 &&
                   key->gap0 > GAP_ACTIVE) {
          /* a closed contact that took a normal impulse and still has a gap: the velocity
           * laws stop its approach, not its position, so it ends touching (without this a box
           * that landed on a diagonal rested 8e-7 m up on two contacts that carried it) */
          key->impact = 1;
          key->gend = 0.0;
        }
      }
    }
    if (*retry) {
      return MBS_OK;
    }
    if (round == 0) {
      w->vpen_end = penalty_energy(m, w->vc, nv);
    }
    /* the penetrating points (and impacts); once there is one, every closed point joins the
     * projection (g + W^T dq >= 0 for it too), so that pushing one body out does not push
     * it into its neighbours */
    int nviol = 0, nclosed = 0;
    double gmin = 0.0;
    for (int pass = 0; pass < 2; pass++) {
      for (int k = 0; k < nv; k++) {
        /* a penalty contact's penetration is its law: not projected */
        if (m->contact[w->vc[k].pair.spec].law == MBS_CONTACT_PENALTY) {
          continue;
        }
        int viol = w->vc[k].gap0 < -GAP_PROJECT || w->vc[k].impact;
        if (pass == 0) {
          gmin = w->vc[k].impact ? gmin : fmin(gmin, w->vc[k].gap0);
          nviol += viol;
        } else if (viol || w->vc[k].gap0 <= GAP_ACTIVE) {
          Contact *c = &w->vc[nclosed++];
          if (c != &w->vc[k]) {
            contact_copy(c, &w->vc[k]);
          }
          contact_columns(m, w, c, d->q, c->pa, c->pb);
        }
      }
      if (nviol == 0) {
        break;
      }
    }
    double gviol = mbs_constraint_violation(m, d->q, t1, NULL);
    if (nviol == 0 && gviol <= 1e-12) {
      break;
    }
    if (round == PROJECT_ROUNDS) {
      if (nviol == 0 && gviol <= 1e-10) {
        break;
      }
      return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0,
                           "a penetration of %.3e m and a constraint violation of %.3e "
                           "remained after %d rounds",
                           -gmin, gviol, PROJECT_ROUNDS);
    }
    nviol = nclosed;
    memset(w->gq, 0, (size_t)nq * sizeof(double));
    if (nviol > 0) {
      for (int k = 0; k < nviol; k++) {
        contact_components(w, &w->vc[k]);
        island_join(w, &w->vc[k]);
      }
      mbsStatus st = factor_components(d, w, w->vc, nviol, err);
      if (st != MBS_OK) {
        return st;
      }
      for (int k = 0; k < nviol; k++) {
        w->vc[k].solved = 0;
        w->nu[k] = 0.0;
      }
      /* Gauss-Seidel: g_k + W_k^T dq = gend_k (0 for the penetrating points, pushed only:
       * nu_k >= 0; an impact's end gap with either sign). A point at or above its end gap
       * whose bodies no push has moved yet (dq = 0 on its columns) is left as the sweep
       * would leave it (nu_k = 0) without evaluating it: a pile with one point to push
       * out no longer sweeps every closed point of the scene, with the same result to the
       * bit */
      w->push_stamp++;
      double worst_ago[10];
      for (int sweep = 0; sweep < 200; sweep++) {
        double worst = 0.0;
        for (int k = 0; k < nviol; k++) {
          Contact *c = &w->vc[k];
          if (!c->impact && c->gap0 - c->gend >= 0.0 && !pushed(w, c)) {
            continue;
          }
          if (!c->solved) {
            /* its J^-1 W_N and S_kk = W_N^T J^-1 W_N when first evaluated (a third of a
             * settling pile's closed points never are) */
            st = contact_solve(d, w, c, 1, err);
            if (st != MBS_OK) {
              return st;
            }
            double s = 0.0;
            for (int e = 0; e < c->nw; e++) {
              int i = c->widx[e], ci = w->comp_of[i];
              int side = comp_slot(c, ci);
              s += c->w[0][e] * w->x[c->xoff[side] + w->pos_in[i]];
            }
            c->G[0] = s;
            c->solved = 1;
          }
          double gk = c->gap0 + wdot(c, 0, w->gq) - c->gend;
          double nun = w->nu[k] - PROJECT_SOR * gk / c->G[0];
          if (!c->impact) {
            nun = maxd(0.0, nun);
          }
          if (nun - w->nu[k] != 0.0) {
            add_column(w, c, 0, nun - w->nu[k], w->gq);
            for (int s = 0; s < c->ncomp; s++) {
              w->comp[c->comp[s]].pushed = w->push_stamp;
            }
          }
          w->nu[k] = nun;
          if (nun != 0.0 || gk < 0.0) {
            worst = maxd(worst, fabs(gk));
          }
        }
        /* converged; or stalled (a tenth less in ten sweeps: points whose targets
         * contradict each other), the rest left to the next round's detection */
        if (worst <= 1e-3 * GAP_PROJECT || (sweep >= 10 && worst > 0.9 * worst_ago[sweep % 10])) {
          break;
        }
        worst_ago[sweep % 10] = worst;
      }
      for (int i = 0; i < nq; i++) {
        d->q[i] += w->gq[i];
        moved = maxd(moved, fabs(w->gq[i]));
      }
      for (int k = 0; k < nviol; k++) {
        const Contact *c = &w->vc[k];
        for (int s = 0; s < c->ncomp; s++) {
          Component *cp = &w->comp[c->comp[s]];
          cp->moved |= cp->pushed == w->push_stamp;
        }
      }
    }
    /* bilateral rows: J [dq; nu] = [0; -g(q)] (Newton steps with the step's matrix) */
    for (int it = 0; it < 4; it++) {
      double g = 0.0;
      int n = d->sys->n;
      memset(w->rhs, 0, (size_t)n * sizeof(double));
      mbsRowIter ri;
      for (mbs_rows_begin(&ri, m, d->q, t1, 0, w->rowwork); mbs_rows_next(&ri);) {
        w->rhs[nq + ri.row] = -ri.g;
        g = maxd(g, fabs(ri.g));
      }
      if (g <= 1e-13) {
        break;
      }
      mbsStatus st = mbs_newton_linear_solve(d, w->rhs, w->sol, err);
      if (st != MBS_OK) {
        return st;
      }
      for (int i = 0; i < nq; i++) {
        d->q[i] += w->sol[i];
      }
    }
  }
  w->xused = xmark;
  /* a contact of the step that the last detection no longer reports has opened (or its
   * point moved to another feature): its end gap from the narrow phase of its pair within
   * GAP_PROBE, else GAP_PROBE (open by more), so that the records never show a gap from
   * before the projection */
  for (int k = 0; k < w->nc; k++) {
    Contact *c = &w->c[k];
    if (c->seen) {
      continue;
    }
    const mbsShapePair *pr = &c->pair;
    int np = mbs_collide(&m->shape[pr->a], &w->pose[pr->a], &m->shape[pr->b], &w->pose[pr->b],
                         m->contact_pts, GAP_PROBE, w->pts, w->ptcap);
    double g = INFINITY;
    for (int j = 0; j < np; j++) {
      if (w->pts[j].feature == c->feature) {
        g = w->pts[j].gap;
        break;
      }
      g = fmin(g, w->pts[j].gap);
    }
    c->gap1 = isfinite(g) ? g : GAP_PROBE;
  }
  double V1 = potential(m, d->q, d->v);
  w->dissip_impact += V0 - V1;
  w->proj_rise = V1 - V0;
  return MBS_OK;
}

static int record_cmp(const mbsContactRecord *x, const mbsContactRecord *y) {
  int c = mbs_shape_pair_cmp(&x->pair, &y->pair);
  if (c != 0) {
    return c;
  }
  return (x->feature > y->feature) - (x->feature < y->feature);
}

static int record_qsort_cmp(const void *a, const void *b) {
  return record_cmp(a, b);
}

/* the records: the step's contacts (w->stepr, nstep, sorted) merged into those since the
 * last clear (w->rec), their impulses summed; MBS_ERR_NOMEM when the storage could not grow */
/* room for need records in rec, old, now and exp (doubling); MBS_ERR_NOMEM when they cannot
 * grow */
static mbsStatus grow_records(MoreauWork *w, int need, mbsError *err) {
  if (need <= w->reccap) {
    return MBS_OK;
  }
  int cap = need > 2 * w->reccap ? need : 2 * w->reccap;
  if (!grow_array(&w->rec, (size_t)cap, sizeof(*w->rec)) ||
      !grow_array(&w->old, (size_t)cap, sizeof(*w->old)) ||
      !grow_array(&w->now, (size_t)cap, sizeof(*w->now)) ||
      !grow_array(&w->exp, (size_t)cap * STATE_COLS, sizeof(double))) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                         "out of memory for the contact records (%d)", cap);
  }
  w->reccap = cap;
  return MBS_OK;
}

static mbsStatus merge_records(MoreauWork *w, mbsError *err) {
  int need = w->nrec + w->nstep;
  if (grow_records(w, need, err) != MBS_OK) {
    return err->status;
  }
  memcpy(w->old, w->rec, (size_t)w->nrec * sizeof(*w->rec));
  int i = 0, j = 0, n = 0, nold = w->nrec;
  while (i < nold || j < w->nstep) {
    int c = i >= nold ? 1 : j >= w->nstep ? -1 : record_cmp(&w->old[i], &w->stepr[j]);
    mbsContactRecord *r = &w->rec[n];
    if (c < 0) { /* gone: its last geometry, no impulse */
      *r = w->old[i++];
      r->impulse[0] = r->impulse[1] = r->impulse[2] = 0.0;
      r->status = 0;
      w->now[n++] = 0;
      continue;
    }
    double sum[3] = {0.0, 0.0, 0.0};
    if (c == 0) {
      memcpy(sum, w->old[i++].impulse_sum, sizeof(sum));
    }
    *r = w->stepr[j++];
    for (int a = 0; a < 3; a++) {
      r->impulse_sum[a] = sum[a] + r->impulse[0] * r->normal[a] +
                          r->impulse[1] * r->tangent[0][a] + r->impulse[2] * r->tangent[1][a];
    }
    w->now[n++] = 1;
  }
  w->nrec = n;
  return MBS_OK;
}

static void contacts_clear(mbsData *d) {
  MoreauWork *w = d->integrator_work;
  int n = 0;
  for (int k = 0; k < w->nrec; k++) {
    if (w->now[k]) {
      w->rec[n] = w->rec[k];
      w->now[n] = 1;
      w->rec[n].impulse_sum[0] = w->rec[n].impulse_sum[1] = w->rec[n].impulse_sum[2] = 0.0;
      n++;
    }
  }
  w->nrec = n;
}

/* the end of a step: the contacts' dissipation, the implicit schemes' bookkeeping, the
 * contact statistics, the warm starts of the next step and the contacts a record writes */
static mbsStatus finish_step(const mbsModel *m, mbsData *d, MoreauWork *w, double t0, double dt,
                             int nc, int sweeps, double cres, mbsError *err) {
  mbsImplicitWork *b = &w->base;
  /* each part booked only where it removes energy. The parts are not separately signed
   * where the laws couple within a step: a frictional impact's normal and tangential
   * impulses each change the other's velocity (an edge landing with spin gave -0.03 J of
   * friction work beside 0.96 J of impact work), and the theta method moves energy between
   * the smooth forces and the impulses (a slow landing at theta = 1); a negative part is
   * taken from the positive ones in proportion. A step whose parts sum to less than zero
   * created energy: none of it is booked, so that the energy monitor sees it */
  /* the penalty springs hold the work of their normal impulses: what they do not hold,
   * their damping, is the normal laws' dissipation */
  w->dissip_impact -= w->vpen_end - d->contact_potential;
  d->contact_potential = w->vpen_end;
  /* the position projection does not create energy: where the step's parts sum to less
   * than zero and its pushes raised V, the kinetic energy of the pushed islands pays up to
   * that rise (pay_projection), booked with the projection's change of V in the normal
   * laws' part; so is the work of the impulses on points that were opening at the step's
   * start (open_points_gain: their bodies count as pushed). What they cannot pay, and
   * another gain of the laws' own (Kane's paradox), stays unbooked for the energy monitor */
  double sum = w->dissip_impact + w->dissip_friction + w->dissip_num;
  double owed = fmax(w->proj_rise, 0.0) + w->open_gain;
  if (sum < 0.0 && owed > 0.0) {
    w->dissip_impact += pay_projection(m, d, w, nc, t0 + dt, fmin(-sum, owed));
  }
  double part[3] = {w->dissip_impact, w->dissip_friction, w->dissip_num};
  double pos = 0.0, neg = 0.0;
  for (int k = 0; k < 3; k++) {
    pos += fmax(part[k], 0.0);
    neg += fmin(part[k], 0.0);
  }
  double keep = pos + neg > 0.0 ? (pos + neg) / pos : 0.0;
  for (int k = 0; k < 3; k++) {
    part[k] = fmax(part[k], 0.0) * keep;
  }
  double di = part[0], df = part[1], dn = part[2];
  d->impact_dissipated += di;
  d->friction_dissipated += df;
  d->numerical_dissipated += dn;
  d->contact_dissipated += di + df;
  d->dissipated += di + df + dn;
  mbs_implicit_end(m, d, b, t0, dt);
  d->contact_iterations = sweeps;
  d->contact_residual = cres;
  d->contact_sweeps += sweeps;
  d->contact_active_max = nc > d->contact_active_max ? nc : d->contact_active_max;
  /* the warm starts of the next step */
  for (int k = 0; k < nc; k++) {
    /* the heads: identity, impulses and tangents (step_try, state_export) */
    memcpy(&w->prev[k], &w->c[k], CONTACT_HEAD);
    w->prev[k].nw = w->prev[k].ncomp = 0;
  }
  w->nprev = nc;
  w->nstep = nc + w->npen;
  for (int k = 0; k < w->nstep; k++) {
    const Contact *c = k < nc ? &w->c[k] : &w->pen[k - nc];
    mbsContactRecord *r = &w->stepr[k];
    r->body[0] = c->body[0];
    r->body[1] = c->body[1];
    r->pair = c->pair;
    r->feature = c->feature;
    memcpy(r->point, c->point, sizeof(r->point));
    memcpy(r->normal, c->n, sizeof(r->normal));
    memcpy(r->tangent[0], c->t1, sizeof(r->tangent[0]));
    memcpy(r->tangent[1], c->t2, sizeof(r->tangent[1]));
    r->gap = c->gap1;
    d->contact_gap_min = fmin(d->contact_gap_min, c->gap1);
    memcpy(r->impulse, c->L, sizeof(r->impulse));
    /* open, stuck or sliding by the impulse (the status of a warm start that needed no
     * solve would be stale) */
    r->status = c->L[0] > 0.0
                    ? (hypot(c->L[1], c->L[2]) < c->mu * c->L[0] * (1.0 - 1e-9) ? 1 : 2)
                    : 0;
    if (k >= nc) {
      r->status = c->status; /* a penalty point: sliding or not by its slip speed */
    }
  }
  if (w->npen > 0) {
    qsort(w->stepr, (size_t)w->nstep, sizeof(*w->stepr), record_qsort_cmp);
  }
  return merge_records(w, err);
}

static mbsStatus step_explicit(const mbsModel *m, mbsData *d, double dt, mbsError *err);

/* 1 if contact c is one a failed try of the step missed (w->force) */
static int forced(const MoreauWork *w, const Contact *c) {
  for (int k = 0; k < w->nforce; k++) {
    if (mbs_shape_pair_cmp(&w->force[k].pair, &c->pair) == 0 && w->force[k].feature == c->feature) {
      return 1;
    }
  }
  return 0;
}

/* Newton's impact law with the impact inside the step (seed 002 eq. 2.32) for candidate c at
 * the end velocities u: a point that closes at t0 + tau (tau = g0 / -gamma_N0, the free
 * flight's estimate) leaves with -e gamma^- (gamma^- = gamma_N0 + a tau) and moves on with
 * its free normal acceleration a, estimated from u without its own impulse; a point whose
 * rebound does not carry it off within the step (e small) stays closed. 0 (and c untouched)
 * for a new point (open at the step's start, no warm start) whose gap u does not close, unless
 * force. A closed point stays in whatever the prediction says: the end velocity of the
 * material point that touches at the evaluation point is a poor predictor for a rolling body
 * (that point turns away from the surface, by omega^2 r dt / 2), and the law lets a closed
 * point open */
static int admit(const MoreauWork *w, Contact *c, const double *u, double dt, double gnorm,
                 int force) {
  double own = c->G[0] * c->L[0] + c->G[1] * c->L[1] + c->G[2] * c->L[2];
  double g1 = wdot(c, 0, u) - own; /* its end velocity without its own impulse */
  double a = (g1 - c->gN0) / dt;
  double gpred = c->gap0 + dt * ((1.0 - w->theta) * c->gN0 + w->theta * g1);
  if (c->gap0 > GAP_ACTIVE && gpred > GAP_ACTIVE && c->L[0] == 0.0 && c->L[1] == 0.0 &&
      c->L[2] == 0.0 && !force) {
    return 0;
  }
  c->target = 0.0;
  c->impact = 0;
  if (c->gN0 < 0.0 && !c->penalty) {
    /* the time it closes: g0 + gN0 tau + a tau^2 / 2 = 0, its first root */
    double tau = 0.0;
    if (c->gap0 > 0.0) {
      double disc = c->gN0 * c->gN0 - 2.0 * a * c->gap0;
      tau = disc >= 0.0 && a != 0.0 ? (-c->gN0 - sqrt(disc)) / a : c->gap0 / -c->gN0;
      tau = tau > 0.0 ? fmin(tau, dt) : fmin(c->gap0 / -c->gN0, dt);
    }
    double gminus = c->gN0 + a * tau;
    /* approaching faster than one step of its acceleration or of gravity: an impact (a is
     * only an estimate: W is at the step's evaluation point, gN0 at its start) */
    if (gminus < -(fmax(fabs(a), gnorm) * dt + 1e-12)) {
      double vplus = -c->e * gminus, rest = dt - tau;
      c->target = fmax(0.0, vplus + a * rest);
      c->impact = 1;
      c->gend = c->target > 0.0 ? fmax(0.0, vplus * rest + 0.5 * a * rest * rest) : 0.0;
    }
  }
  return 1;
}

/* the candidates kept aside (w->vc[0..nreserve)) whose gaps the end velocities u now close,
 * into the step's contacts (sorted again); their number */
static int admit_reserve(const mbsModel *m, MoreauWork *w, const double *u, double dt) {
  int moved = 0, kept = 0;
  double gnorm = vnorm(m->gravity);
  for (int k = 0; k < w->nreserve; k++) {
    Contact *c = &w->vc[k];
    /* like a missed point (project_positions): one approaching at the step's start, or one
     * that no impulse of the step set moving (a ball struck towards a wall within the step
     * meets it in a later impact of its own, with its restitution) */
    if (w->nc < w->cap && admit(w, c, u, dt, gnorm, 0) && (c->gN0 < 0.0 || !struck(w, c))) {
      c->L[0] = c->L[1] = c->L[2] = 0.0;
      contact_copy(&w->c[w->nc++], c);
      moved++;
    } else {
      if (kept != k) {
        contact_copy(&w->vc[kept], c);
      }
      kept++;
    }
  }
  w->nreserve = kept;
  if (moved > 0) {
    qsort(w->c, (size_t)w->nc, sizeof(Contact), contact_cmp);
  }
  return moved;
}

/* 1 if reserve point c is one the position projection found missed (w->force from nforce0
 * on) */
static int missed(const MoreauWork *w, const Contact *c, int nforce0) {
  for (int k = nforce0; k < w->nforce; k++) {
    if (mbs_shape_pair_cmp(&c->pair, &w->force[k].pair) == 0 && c->feature == w->force[k].feature) {
      return 1;
    }
  }
  return 0;
}

/* 1 if a point the position projection found missed was one of the step's reserve
 * candidates (w->resv: w->vc[0..nreserve) before the projection): a try again takes it in
 * (forced); the points that are no candidate at q0 it would miss again */
static int retry_helps(const MoreauWork *w, int nforce0) {
  for (int j = 0; j < w->nreserve; j++) {
    if (missed(w, &w->resv[j], nforce0)) {
      return 1;
    }
  }
  return 0;
}

/* the reserve candidates the position projection found missed into the step's contacts (as
 * a try again would take them: forced, no warm start), the others back into the reserve
 * (w->vc); their number, 0 when the contacts are full. The alternation goes on from its
 * solution with them: a try again redid the whole step (its detection, the Newton matrix's
 * factorization, the contact problem from the last step's impulses) */
static int take_missed(const mbsModel *m, MoreauWork *w, const double *u, double dt,
                       int nforce0) {
  int moved = 0, kept = 0;
  double gnorm = vnorm(m->gravity);
  for (int k = 0; k < w->nreserve; k++) {
    moved += missed(w, &w->resv[k], nforce0);
  }
  if (w->nc + moved > w->cap) {
    return 0;
  }
  moved = 0;
  for (int k = 0; k < w->nreserve; k++) {
    Contact *c = &w->resv[k];
    if (missed(w, c, nforce0)) {
      admit(w, c, u, dt, gnorm, 1);
      c->L[0] = c->L[1] = c->L[2] = 0.0;
      contact_copy(&w->c[w->nc++], c);
      moved++;
    } else {
      contact_copy(&w->vc[kept++], c);
    }
  }
  w->nreserve = kept;
  if (moved > 0) {
    qsort(w->c, (size_t)w->nc, sizeof(Contact), contact_cmp);
  }
  return moved;
}

static mbsStatus step_try(const mbsModel *m, mbsData *d, double dt, int may_retry, int *retry,
                          mbsError *err) {
  MoreauWork *w = d->integrator_work;
  mbsImplicitWork *b = &w->base;
  int nq = m->nq;
  double t0 = d->t;
  mbsSchemeWeights s;
  *retry = 0;
  mbsStatus st = setup_components(m, d, w, err);
  if (st != MBS_OK) {
    return st;
  }
  prepare(m, d, dt, &s);
  w->dissip_impact = w->dissip_friction = w->dissip_num = 0.0;
  w->proj_rise = w->open_gain = 0.0;
  w->xused = 0;
  w->mat_jac = -1;
  w->cver++;
  char why[1200];
  why[0] = '\0';
  /* contacts at q0: the points predicted to close within half a step */
  int nc = 0;
  if (m->ncontact_paired > 0) {
    nc = gather(m, w, b->q_prev, b->v_prev, b->v_prev, dt, 1);
    if (nc < 0) {
      /* out of memory: the broad phase's candidates, or the contact storage's growth (the
       * step's start restored either way) */
      if (nc == BROAD_NOMEM) {
        snprintf(why, sizeof(why), "out of memory in the broad phase");
      } else {
        snprintf(why, sizeof(why), "%s", (storage_error(w, err), err->msg));
      }
      return mbs_implicit_fail(m, d, b, MBS_ERR_NOMEM, why, t0, dt, err);
    }
    int keep = 0;
    /* the warm starts' impulses scaled by the ratio of the steps: a contact that carries a
     * load takes an impulse in proportion to the step (the first step after a halving
     * started from twice the impulses it needed, the first after the doubling from half) */
    double ratio = d->last_dt > 0.0 ? dt / d->last_dt : 1.0;
    for (int k = 0; k < nc; k++) {
      Contact *c = &w->c[k];
      /* candidates: every point detected within the margin; the step's first solution
       * decides which enter its contact problem, the rest are kept aside in case the
       * impulses of their neighbours close them (admit_reserve). Those not closing within the
       * step at twice the start's speed with gravity's help start as new points (no warm
       * start: a contact that separates, a ball rebounding from another, leaves the problem).
       * Leaving them out altogether missed most of the points a landing die's impulses swing
       * down (100 dice: 222 of 227 missed points; the step was tried again) */
      int near = c->gap0 + 2.0 * dt * fmin(c->gN0, 0.0) - dt * dt * vnorm(m->gravity) <=
                     GAP_ACTIVE ||
                 forced(w, c);
      /* warm start from the last step's contact with the same identity; its tangential
       * impulse as a world vector (lw), turned into this step's tangents once they are set */
      Contact *hit =
          near ? bsearch(c, w->prev, (size_t)w->nprev, sizeof(Contact), contact_cmp) : NULL;
      c->lw[0] = c->lw[1] = c->lw[2] = 0.0;
      if (!near) {
        c->L[0] = c->L[1] = c->L[2] = 0.0;
      } else if (hit) {
        for (int a = 0; a < 3; a++) {
          c->L[a] = ratio * hit->L[a];
          c->lw[a] = ratio * (hit->L[1] * hit->t1[a] + hit->L[2] * hit->t2[a]);
        }
      }
      if (keep != k) {
        contact_copy(&w->c[keep], c);
      }
      keep++;
    }
    nc = keep;
  }
  w->nc = nc;
  w->nreserve = 0;
  w->stall = 0.0;
  w->step_stalled = 0;
  w->regularized = 0;
  w->vpen_end = 0.0;
  /* the contact frames at the step's evaluation point, predicted as q0 + theta dt u0: the
   * material points that touch there carry the impulses (em: a rolling body's contact does
   * no work) */
  if (nc > 0) {
    if (refresh_geometry(m, w, dt) < 0.0) {
      snprintf(why, sizeof(why), "%s", (storage_error(w, err), err->msg));
      return mbs_implicit_fail(m, d, b, MBS_ERR_NOMEM, why, t0, dt, err);
    }
    /* the warm starts' tangential impulses in the step's tangents (those of a normal along
     * an axis are picked by a tie that round-off flips from step to step: the impulses of a
     * pile at rest, carried over unturned, pointed elsewhere every other step) */
    for (int k = 0; k < nc; k++) {
      Contact *c = &w->c[k];
      c->L[1] = vdot(c->lw, c->t1);
      c->L[2] = vdot(c->lw, c->t2);
    }
  }
  StepCtx ctx = {m, d, w, &s, dt, t0};
  mbsNewtonProblem p = {m->nq, m->ncon, &ctx, ctx_assemble, ctx_scales, ctx_apply, ctx_reset, NULL, 0};
  ctx_reset(&ctx);
  int repivot = b->refactor_next;
  b->refactor_next = 0;
  int newton_done = nc == 0; /* the step's equations solved with the current impulses */
  if (nc > 0) {
    /* with contacts, one Newton step from the predictor gives the linear model's point (J,
     * the free velocities with the warm-started impulses): the step's equations are solved
     * to the Newton tolerance in the alternation below, before its residual check passes */
    ctx_assemble(&ctx, 1);
    st = mbs_newton_factor(d, repivot, err);
    d->factor_valid = st == MBS_OK;
    if (st == MBS_OK) {
      st = mbs_newton_linear_solve(d, d->res, d->dx, err);
    }
    if (st == MBS_OK) {
      ctx_apply(&ctx, d->dx);
      d->newton_total++;
    } else {
      snprintf(why, sizeof(why), "%s", err->msg);
    }
  } else {
    st = mbs_newton_solve(m, d, &p, repivot, why, sizeof(why), err);
  }
  int outer = 0, sweeps = 0;
  double cres = 0.0;
  double vscale = 0.0;
  int stalled = 0;
  int extra = 0; /* alternations granted for candidates taken in from the reserve */
  int pending = 0; /* points taken in after the projection found them missed (take_missed) */
  int alternate = st == MBS_OK && nc > 0; /* (even when the first solution admits none) */
  if (alternate) {
    /* J^-1 W at the step's matrix */
    st = contact_matrices(d, w, err);
    if (st != MBS_OK) {
      snprintf(why, sizeof(why), "%s", err->msg);
    }
    /* Newton's impact law with the impact inside the step (seed 002 eq. 2.32): a point
     * that closes at t0 + tau (tau = g0 / -gamma_N0, the free flight's estimate) leaves
     * with -e gamma^- (gamma^- = gamma_N0 + a tau) and moves on with its free normal
     * acceleration a, estimated from the first solution without its own impulse; a point
     * whose rebound does not carry it off within the step (e small) stays closed. */
    end_velocity(m, w, dt, w->u);
    double gnorm = vnorm(m->gravity);
    int kept = 0;
    w->nreserve = 0;
    for (int k = 0; k < nc && st == MBS_OK; k++) {
      Contact *c = &w->c[k];
      if (!admit(w, c, w->u, dt, gnorm, forced(w, c))) {
        /* kept aside (w->vc is free until the position projection): the impulses of its
         * neighbours may still close it within the step */
        contact_copy(&w->vc[w->nreserve++], c);
        continue;
      }
      if (kept != k) {
        contact_copy(&w->c[kept], c);
      }
      kept++;
    }
    nc = w->nc = kept;
    set_targets(m, w, b->v_prev, dt);
    /* the velocity scale of the contact problem */
    vscale = contact_vscale(m, w, b->v_prev, dt);
  }
  /* the alternation; again from its solution when the projection finds candidates it
   * missed (take_missed), MISS_TRIES times at most */
  for (int retake = 0;; retake++) {
    if (st == MBS_OK && alternate) {
      double res_prev = INFINITY;
      for (outer = retake > 0 ? outer + 1 : 1; st == MBS_OK && outer <= CONTACT_OUTER + extra; outer++) {
        end_velocity(m, w, dt, w->u);
        /* the candidates kept aside whose gaps the step now closes (the impulses of their
         * neighbours: a die landing on one corner swings its other corners down) join the
         * contact problem, MISS_TRIES times at most; without this the position projection
         * found them penetrating and the whole step was tried again with them */
        int added = pending > 0 ? pending
                    : outer > 1 && w->nreserve > 0 && extra < MISS_TRIES
                        ? admit_reserve(m, w, w->u, dt)
                        : 0;
        pending = 0;
        if (added > 0) {
          extra++;
          nc = w->nc;
          w->mat_jac = -1; /* the new points' columns */
          set_targets(m, w, b->v_prev, dt);
          vscale = contact_vscale(m, w, b->v_prev, dt);
          d->contact_admitted += added;
        }
        /* the prox residual (with the r of the last Delassus blocks) first: the step's
         * Newton matrix is factored afresh for J^-1 W only when the impulses must change */
        double res0 = added > 0 ? INFINITY : prox_residual(w, w->u);
        double goal = fmax(m->contact_tolerance * vscale,
                           fmin(4.0 * w->stall, (w->regularized ? REG_ACCEPT : STALL_ACCEPT) * vscale));
        if (res0 <= goal && !newton_done) {
          /* the impulses hold at the linear model's point: the step's equations with them to
           * the Newton tolerance, and the check again */
          st = mbs_newton_solve_again(m, d, &p, why, sizeof(why), err);
          newton_done = 1;
          continue;
        }
        /* the alternation stagnates at a floor (the nonlinear step's own accuracy, amplified by
         * 1 / dt in the end velocities): a residual that no longer halves is accepted within
         * STALL_ACCEPT, like a contact problem that stalls */
        if (res0 <= goal || (outer > 2 && res0 > 0.5 * res_prev &&
                             res0 <= (w->regularized ? REG_ACCEPT : STALL_ACCEPT) * vscale)) {
          cres = res0 / vscale;
          stalled = res0 > m->contact_tolerance * vscale;
          break;
        }
        res_prev = res0;
        /* the columns again when the Newton iterations assembled a new matrix or contacts
         * joined (else those of the last alternation, unchanged) */
        if (outer > 1 && w->mat_jac != w->jac_version) {
          st = contact_matrices(d, w, err);
          if (st != MBS_OK) {
            snprintf(why, sizeof(why), "%s", err->msg);
            break;
          }
        }
        memcpy(w->du, w->u, (size_t)nq * sizeof(double));
        int sw = contact_problem(m, w, vscale, &cres, err);
        if (sw < 0) {
          if (sw == -2) {
            snprintf(why, sizeof(why), "%s", err->msg);
          } else {
            unconverged(why, sizeof(why), m, nc, cres, vscale);
          }
          st = sw == -2 ? MBS_ERR_NOMEM : MBS_ERR_SOLVER;
          break;
        }
        sweeps += sw;
        /* the nonlinear step with the new impulses, from the linear model's prediction
         * Delta q += theta dt (u - u_before) = dt J^-1 W (L - L_before): one Newton step of
         * the step's equations already taken */
        for (int i = 0; i < nq; i++) {
          b->dq[i] += w->theta * dt * (w->u[i] - w->du[i]);
          d->q[i] = b->q_prev[i] + b->dq[i];
        }
        st = mbs_newton_solve_again(m, d, &p, why, sizeof(why), err);
        newton_done = 1;
      }
      w->step_stalled = stalled;
      if (st == MBS_OK && outer > CONTACT_OUTER + extra) {
        snprintf(why, sizeof(why),
                 "the contact impulses and the step did not agree after %d alternations (prox "
                 "residual %.3e)",
                 CONTACT_OUTER, cres);
        st = MBS_ERR_SOLVER;
      }
    }
    if (st != MBS_OK && st != MBS_ERR_NOMEM && retake > 0) {
      /* the alternation with the points taken in failed: the step is tried again from
       * its start with them, as before */
      *retry = 1;
      return MBS_OK;
    }
    if (st != MBS_OK) {
      return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
    }
    end_velocity(m, w, dt, d->v);
    /* The energy of the step. With u0, u1 the start and end velocities and
     *     M (u1 - u0) = dt (F - grad V*) - G^T lambda dt + W L,
     *     Delta q = dt ((1 - theta) u0 + theta u1),
     * T1 - T0 = (u1 - u0) . M ((u0 + u1) / 2) gives exactly
     *     E1 - E0 = F . Delta q - L . (gamma0 + gamma1) / 2 ... with the contact velocities
     *     gamma = W^T u: E1 - E0 = W - D_dampers + L . (gamma0 + gamma1) / 2 - D_num,
     *     D_num = (theta - 1/2) ((u1 - u0) . M (u1 - u0) - L . (gamma1 - gamma0))
     *             + (grad V* . Delta q - (V1 - V0)) + lambda . G* Delta q,
     * the theta method's own damping of the smooth forces (zero at theta = 1/2 with the
     * discrete gradients, where G* Delta q = g(q1) - g(q0) = 0 too). Each contact law is
     * charged the work of its impulses over the mean of the step's start and end velocities
     * (Kelvin's theorem for an impulse: an impact with restitution e dissipates L |gamma0| (1 -
     * e) / 2 >= 0; a closed contact at rest does nothing) */
    double work_n = 0.0, work_t = 0.0, ldg = 0.0;
    for (int k = 0; k < nc + w->npen; k++) {
      const Contact *c = k < nc ? &w->c[k] : &w->pen[k - nc];
      for (int dir = 0; dir < 3; dir++) {
        double g0 = wdot(c, dir, b->v_prev), g1 = wdot(c, dir, d->v);
        double wk = c->L[dir] * 0.5 * (g0 + g1);
        if (dir == 0) {
          work_n += wk;
        } else {
          work_t += wk;
        }
        ldg += c->L[dir] * (g1 - g0);
      }
    }
    w->dissip_num = 0.0;
    if (w->theta != 0.5) {
      double Tdu, pw, rw, V0, V1;
      for (int i = 0; i < nq; i++) {
        w->du[i] = d->v[i] - b->v_prev[i];
      }
      mbs_energy(m, d->q, w->du, &Tdu, &V1);
      mbs_energy(m, b->q_prev, w->du, &Tdu, &V0);
      mbs_assemble_theta_work(m, d, b, &s, dt, &pw, &rw);
      w->dissip_num = (w->theta - 0.5) * (2.0 * Tdu - ldg) + (pw - (V1 - V0)) + rw;
    }
    w->dissip_impact = -work_n;
    w->dissip_friction = -work_t;
    if (m->ncontact_paired > 0) {
      /* the reserve, kept (the projection takes w->vc) */
      int nforce0 = w->nforce;
      if (w->nreserve > w->resvcap) {
        Contact *r = realloc(w->resv, (size_t)w->nreserve * sizeof(*r));
        if (!r) {
          snprintf(why, sizeof(why), "out of memory for the step's %d reserve points", w->nreserve);
          return mbs_implicit_fail(m, d, b, MBS_ERR_NOMEM, why, t0, dt, err);
        }
        w->resv = r;
        w->resvcap = w->nreserve;
      }
      for (int k = 0; k < w->nreserve; k++) {
        contact_copy(&w->resv[k], &w->vc[k]);
      }
      st = project_positions(m, d, w, t0 + dt, may_retry, retry, err);
      if (st == MBS_OK && *retry && !retry_helps(w, nforce0)) {
        /* none of the points it missed is a candidate at q0 (a box-box point whose feature
         * the narrow phase reports only at the step's end): another try would be this one
         * again, and the last try projects them out. This try goes on as the last would (100
         * dice, t = 0.7-0.8 s: 10 of 11 retries, each tried twice more) */
        *retry = 0;
        st = project_positions(m, d, w, t0 + dt, 0, retry, err);
      }
      if (st != MBS_OK) {
        snprintf(why, sizeof(why), "the position projection failed: %s", err->msg);
        return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
      }
      if (*retry) {
        pending = retake < MISS_TRIES ? take_missed(m, w, d->v, dt, nforce0) : 0;
        if (pending > 0) {
          *retry = 0;
          nc = w->nc;
          continue;
        }
        return MBS_OK;
      }
    }
    break;
  }
  /* the work of the step's forces and rows over its own Delta q: the constraints' discrete
   * gradients between q0 and q0 + Delta q (G* Delta q = g(q1) - g(q0) = 0 for scleronomic
   * rows), not the projected end, whose pushes are no part of Delta q (the push belt booked
   * 1e-8 J of constraint work a step as external work between q0 and the projected end) */
  if (m->ncontact_paired > 0) {
    for (int i = 0; i < nq; i++) {
      w->qe[i] = d->q[i];
      d->q[i] = b->q_prev[i] + b->dq[i];
    }
  }
  mbs_assemble_work(m, d, b, &s, b->qm, b->vm, t0 + s.tf, t0 + s.alpha * dt, b->mu, 1.0 / (dt * dt),
                    1.0, &d->external_work, &d->dissipated);
  if (m->ncontact_paired > 0) {
    memcpy(d->q, w->qe, (size_t)nq * sizeof(double));
  }
  {
    /* the rigid bodies' velocities onto their rigid motions: the kinetic energy they lose is
     * numerical damping (of a mode the motion does not have) */
    double T1, T1p, Vd;
    mbs_energy(m, d->q, d->v, &T1, &Vd);
    project_rigid_bodies(m, d->q, d->v);
    mbs_energy(m, d->q, d->v, &T1p, &Vd);
    w->dissip_num += T1 - T1p;
  }
  if (w->step_stalled) {
    d->contact_stalled++;
    d->contact_stall_max = fmax(d->contact_stall_max, cres);
  }
  d->contact_regularized += w->regularized > 0;
  return finish_step(m, d, w, t0, dt, nc, sweeps, cres, err);
}

/* A step; tried again with the points it missed: a point that was not in the step's contact
 * problem (its gap at the step's start, widened by how far it could move, did not predict
 * the contact) but penetrates at its end would be pushed out by the position projection, a
 * change of potential energy that no law accounts for (a box bouncing on a vibrating beam
 * gained 1.2 mJ in one step); the second try takes it into the contact problem as an impact.
 * step_try takes such candidates in itself (take_missed) and asks for the try again only
 * where that fails */
static mbsStatus step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  MoreauWork *w = d->integrator_work;
  if (m->moreau_variant == MBS_MOREAU_EXPLICIT) {
    return step_explicit(m, d, dt, err);
  }
  w->nforce = 0;
  for (int attempt = 0;; attempt++) {
    int retry = 0;
    mbsStatus st = step_try(m, d, dt, attempt < MISS_TRIES, &retry, err);
    if (st != MBS_OK || !retry) {
      return st;
    }
    memcpy(d->q, w->base.q_prev, (size_t)m->nq * sizeof(double));
    memcpy(d->v, w->base.v_prev, (size_t)m->nq * sizeof(double));
    memcpy(w->base.mu, w->base.mu_prev, (size_t)m->ncon * sizeof(double));
    d->retried++;
  }
}


/* ---- the semi-explicit variant (seed 002 eq. 2.36-2.37) ----
 * q1 = q0 + dt u0, projected onto the joints and the bodies' rigidity in the mass metric;
 * the contacts closed at q1 (gap <= 1e-9 m) enter the velocity update
 *     M (u1 - u0) + G^T nu = dt h(q1, u0, t1) + W L,   G(q1) u1 + g_t = 0,
 * whose impulse response J^-1 W (J = [M G^T; G 0] at q1) is exact: one contact problem
 * (Newton's law on the end velocity, Coulomb on the tangential end velocity), no iteration
 * of the step. Penetrating points are projected out afterwards. First order and only
 * conditionally stable (h explicit); the impulses' work is taken with the mean velocity. */

/* J = [M G^T; G 0] at d->q (the assembler with no inertia scaling and no force
 * derivatives, forces at (q1, u0, t1)), factored; -dt^2 h into w->hres */
static mbsStatus explicit_matrix(const mbsModel *m, mbsData *d, MoreauWork *w, double dt,
                                 double t1, int repivot, mbsError *err) {
  mbsImplicitWork *b = &w->base;
  mbsSchemeWeights s = {1.0, 0.0, 0.0, 0.0, 0};
  memcpy(w->q0save, b->q_prev, (size_t)m->nq * sizeof(double));
  memcpy(b->q_prev, d->q, (size_t)m->nq * sizeof(double));
  for (int i = 0; i < m->nq; i++) {
    b->dq[i] = b->qhat[i] = b->qbase[i] = 0.0;
    b->vbase[i] = b->v_prev[i];
  }
  for (int r = 0; r < m->ncon; r++) {
    b->mu[r] = 0.0;
  }
  mbs_assemble(m, d, b, &s, dt, t1, 1);
  w->jac_version++;
  memcpy(w->hres, d->res, (size_t)m->nq * sizeof(double));
  memcpy(b->q_prev, w->q0save, (size_t)m->nq * sizeof(double));
  mbsStatus st = mbs_newton_factor(d, repivot, err);
  d->factor_valid = st == MBS_OK;
  return st;
}

static mbsStatus step_explicit(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  MoreauWork *w = d->integrator_work;
  mbsImplicitWork *b = &w->base;
  int nq = m->nq, nc = 0;
  double t0 = d->t, t1 = t0 + dt;
  char why[1200];
  why[0] = '\0';
  mbsStatus st = setup_components(m, d, w, err);
  if (st != MBS_OK) {
    return st;
  }
  mbs_implicit_begin(m, d, b);
  w->dissip_impact = w->dissip_friction = w->dissip_num = 0.0;
  w->proj_rise = w->open_gain = 0.0;
  w->xused = 0;
  w->mat_jac = -1;
  w->cver++;
  w->nc = w->npen = 0;
  int repivot = b->refactor_next;
  b->refactor_next = 0;
  /* positions first (eq. 2.36 step 1), onto the joints and the rigidity */
  for (int i = 0; i < nq; i++) {
    d->q[i] = b->q_prev[i] + dt * b->v_prev[i];
  }
  st = explicit_matrix(m, d, w, dt, t1, repivot, err);
  for (int it = 0; it < 6 && st == MBS_OK; it++) {
    double g = 0.0, qn = mbs_norm_inf(d->q, nq);
    memset(w->rhs, 0, (size_t)d->sys->n * sizeof(double));
    mbsRowIter ri;
    for (mbs_rows_begin(&ri, m, d->q, t1, 0, w->rowwork); mbs_rows_next(&ri);) {
      w->rhs[nq + ri.row] = -ri.g;
      g = fmax(g, fabs(ri.g));
    }
    if (g <= 1e-14 * (1.0 + qn)) {
      break;
    }
    st = mbs_newton_linear_solve(d, w->rhs, w->sol, err);
    for (int i = 0; i < nq && st == MBS_OK; i++) {
      d->q[i] += w->sol[i];
    }
  }
  if (st == MBS_OK) {
    st = explicit_matrix(m, d, w, dt, t1, 0, err);
  }
  if (st != MBS_OK) {
    snprintf(why, sizeof(why), "%s", err->msg);
    return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
  }
  /* the contacts closed at q1 (step 2-3) and the penalty points */
  if (m->ncontact_paired > 0) {
    nc = gather(m, w, d->q, NULL, b->v_prev, dt, 0);
    if (nc < 0) {
      /* out of memory: the broad phase's candidates, or the contact storage's growth (the
       * step's start restored either way) */
      if (nc == BROAD_NOMEM) {
        snprintf(why, sizeof(why), "out of memory in the broad phase");
      } else {
        snprintf(why, sizeof(why), "%s", (storage_error(w, err), err->msg));
      }
      return mbs_implicit_fail(m, d, b, MBS_ERR_NOMEM, why, t0, dt, err);
    }
    int keep = 0;
    double gdt = vnorm(m->gravity) * dt;
    for (int k = 0; k < nc; k++) {
      Contact *c = &w->c[k];
      if (c->gap0 > GAP_ACTIVE) {
        continue;
      }
      Contact *hit = bsearch(c, w->prev, (size_t)w->nprev, sizeof(Contact), contact_cmp);
      if (hit) {
        memcpy(c->L, hit->L, sizeof(c->L));
      }
      /* Newton's law on an approach faster than one step of gravity, else no approach */
      c->impact = 0;
      c->target = c->gN0 < -(gdt + 1e-12) ? -c->e * c->gN0 : 0.0;
      c->tgt[0] = c->target;
      c->tgt[1] = c->tgt[2] = 0.0;
      contact_copy(&w->c[keep++], c);
    }
    nc = w->nc = keep;
  }
  /* the free velocity update with the penalty impulses: J [du; nu] = [dt h + W L_pen;
   * -(G u0 + g_t)] */
  memset(w->rhs, 0, (size_t)d->sys->n * sizeof(double));
  for (int i = 0; i < nq; i++) {
    w->rhs[i] = -w->hres[i] / dt;
  }
  for (int k = 0; k < w->npen; k++) {
    const Contact *c = &w->pen[k];
    for (int e = 0; e < c->nw; e++) {
      w->rhs[c->widx[e]] += c->w[0][e] * c->L[0] + c->w[1][e] * c->L[1] + c->w[2][e] * c->L[2];
    }
  }
  mbs_velocity_residual(m, d, d->q, b->v_prev, t1, w->rhs + nq);
  for (int r = 0; r < m->ncon; r++) {
    w->rhs[nq + r] = -w->rhs[nq + r];
  }
  st = mbs_newton_linear_solve(d, w->rhs, w->sol, err);
  if (st != MBS_OK) {
    snprintf(why, sizeof(why), "%s", err->msg);
    return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
  }
  for (int i = 0; i < nq; i++) {
    w->u[i] = b->v_prev[i] + w->sol[i];
  }
  for (int r = 0; r < m->ncon; r++) {
    b->mu[r] = dt * w->sol[nq + r]; /* the impulse dt lambda, as dt^2 lambda */
  }
  /* the contact problem (eq. 2.37): exact on this linear update. Warm-started impulses are
   * in the problem's unknowns, not yet in u: add them */
  int sweeps = 0;
  double cres = 0.0;
  if (nc > 0) {
    st = contact_matrices(d, w, err);
    for (int k = 0; k < nc && st == MBS_OK; k++) {
      for (int dir = 0; dir < 3; dir++) {
        add_column(w, &w->c[k], dir, w->c[k].L[dir], w->u);
      }
    }
    double vscale = contact_vscale(m, w, b->v_prev, dt);
    if (st == MBS_OK) {
      sweeps = contact_problem(m, w, vscale, &cres, err);
      if (sweeps < 0) {
        if (sweeps == -2) {
          snprintf(why, sizeof(why), "%s", err->msg);
        } else {
          unconverged(why, sizeof(why), m, nc, cres, vscale);
        }
        st = sweeps == -2 ? MBS_ERR_NOMEM : MBS_ERR_SOLVER;
      }
    } else {
      snprintf(why, sizeof(why), "%s", err->msg);
    }
  }
  if (st != MBS_OK) {
    return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
  }
  memcpy(d->v, w->u, (size_t)nq * sizeof(double));
  /* work over the step with the mean velocity: the impulses', and the loads' and dampers'
   * (at q1, u0, t1) */
  for (int i = 0; i < nq; i++) {
    b->dq[i] = 0.5 * dt * (b->v_prev[i] + d->v[i]);
  }
  for (int k = 0; k < nc + w->npen; k++) {
    const Contact *c = k < nc ? &w->c[k] : &w->pen[k - nc];
    w->dissip_impact -= c->L[0] * wdot(c, 0, b->dq) / dt;
    w->dissip_friction -= c->L[1] * wdot(c, 1, b->dq) / dt + c->L[2] * wdot(c, 2, b->dq) / dt;
  }
  mbsSchemeWeights s = {1.0, 0.0, 0.0, 0.0, 0};
  mbs_assemble_work(m, d, b, &s, d->q, b->v_prev, t1, t1, b->mu, 1.0 / (dt * dt), 1.0,
                    &d->external_work, &d->dissipated);
  if (m->ncontact_paired > 0) {
    int retry = 0;
    st = project_positions(m, d, w, t1, 0, &retry, err);
    if (st != MBS_OK) {
      snprintf(why, sizeof(why), "the position projection failed: %s", err->msg);
      return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
    }
  }
  return finish_step(m, d, w, t0, dt, nc, sweeps, cres, err);
}

static int contacts(const mbsData *d, const mbsContactRecord **rec) {
  const MoreauWork *w = d->integrator_work;
  *rec = w->rec;
  return w->nrec;
}

/* the scheme's own path: q_{n+1} = q_n + h v_{n+theta} is a straight line in the step (a
 * cubic through the end velocities would overshoot across an impact and penetrate), and
 * the velocities, which jump by the step's impulses, linear between their end values */
static void interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v) {
  const MoreauWork *w = d->integrator_work;
  double h = d->last_dt;
  double s = (h > 0.0 && d->step > 0 && t < d->t) ? (t - (d->t - h)) / h : 1.0;
  s = s < 0.0 ? 0.0 : s;
  for (int i = 0; i < m->nq; i++) {
    if (q) {
      q[i] = w->base.q_prev[i] + s * (d->q[i] - w->base.q_prev[i]);
    }
    if (v) {
      v[i] = w->base.v_prev[i] + s * (d->v[i] - w->base.v_prev[i]);
    }
  }
}

/* the potential of the penalty springs at q, sum 1/2 k g^2 over the penetrating points
 * (g < 0) of penalty pairs (0 without them) */
static double penalty_potential(const mbsModel *m, MoreauWork *w, const double *q) {
  int any = 0;
  for (int k = 0; k < m->ncontact; k++) {
    any |= m->contact[k].law == MBS_CONTACT_PENALTY;
  }
  if (!any || m->ncontact_paired == 0) {
    return 0.0;
  }
  int nv = detect(m, w, q, NULL, 0.0, &w->vc, 0, NULL, 0, 0);
  return nv > 0 ? penalty_energy(m, w->vc, nv) : 0.0;
}

/* the run's start: the penalty springs' potential */
static void start(const mbsModel *m, mbsData *d) {
  d->contact_potential = penalty_potential(m, d->integrator_work, d->q);
}

/* ---- the state a record carries for a restart ----
 * What the stepper carries from one step to the next beyond q, v and the multipliers: the
 * contacts a record lists (w->rec: those of the last step, w->stepr, and those gone since the
 * previous record, with their impulses summed since then), and among the last step's the warm
 * starts of the next step's contact problem (w->prev: all of them but the semi-explicit
 * variant's penalty points). A record writes them before it clears the sums, as the ragged
 * table /state/contacts, one row per contact identified by its shapes (a < b) and feature (its
 * entry is found again from the shapes), and the run goes on from what it wrote (the record's
 * import, then the clear), exactly as a restart from that record does: its first record then lists
 * the same rows. Everything else of a step (stall state, forced points, the J^-1 W pool, the dense
 * factors) starts afresh each step. */

static const char *const state_columns[STATE_COLS] = {
    "shape_a",       "shape_b",       "feature",       "current",       "warm_start",
    "status",        "impulse_n",     "impulse_t1",    "impulse_t2",    "impulse_sum_x",
    "impulse_sum_y", "impulse_sum_z", "point_x",       "point_y",       "point_z",
    "normal_x",      "normal_y",      "normal_z",      "tangent1_x",    "tangent1_y",
    "tangent1_z",    "tangent2_x",    "tangent2_y",    "tangent2_z",    "gap"};

/* the order of contact identities (pair, feature): -1, 0, 1 */
static int identity_cmp(const mbsShapePair *pa, int fa, const mbsShapePair *pb, int fb) {
  int c = mbs_shape_pair_cmp(pa, pb);
  return c != 0 ? c : (fa > fb) - (fa < fb);
}

static int state_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max) {
  MoreauWork *w = d->integrator_work;
  int n = mbs_implicit_export(m, d, out, max);
  if (m->ncontact_paired == 0 || n >= max) {
    return n;
  }
  /* rec and prev are both sorted by identity, prev a subset of rec's current contacts */
  int j = 0;
  for (int k = 0; k < w->nrec; k++) {
    const mbsContactRecord *r = &w->rec[k];
    double *row = w->exp + (size_t)k * STATE_COLS;
    int c = 1;
    while (j < w->nprev &&
           (c = identity_cmp(&w->prev[j].pair, w->prev[j].feature, &r->pair, r->feature)) < 0) {
      j++;
    }
    int warm = w->now[k] && j < w->nprev && c == 0;
    row[0] = r->pair.a;
    row[1] = r->pair.b;
    row[2] = r->feature;
    row[3] = w->now[k];
    row[4] = warm;
    row[5] = r->status;
    for (int i = 0; i < 3; i++) {
      /* a warm start's impulse and tangents are its step's (finish_step: the same contact) */
      row[6 + i] = r->impulse[i];
      row[9 + i] = r->impulse_sum[i];
      row[12 + i] = r->point[i];
      row[15 + i] = r->normal[i];
      row[18 + i] = r->tangent[0][i];
      row[21 + i] = r->tangent[1][i];
    }
    row[24] = r->gap;
  }
  out[n++] = (mbsStateArray){.name = "contacts",
                             .length = w->nrec * STATE_COLS,
                             .data = w->exp,
                             .columns = STATE_COLS,
                             .column_names = state_columns,
                             .units = "index (3), 1 (3), N s (6), m (3), 1 (9), m"};
  return n;
}

/* the contacts entry of shapes a and b as a contact names them (a < b: the broad phase's
 * order), -1 when no entry pairs them (or they never touch) */
static int entry_of_shapes(const mbsModel *m, int a, int b) {
  return a < b ? mbs_contact_pair_entry(m, a, b) : -1;
}

/* v is an integer in [lo, hi] */
static int is_index(double v, double lo, double hi) {
  return v >= lo && v <= hi && v == floor(v);
}

/* a unit vector to 1e-3 (the narrow phase's normals of some box edges are off by 1e-5) */
static int is_unit(const double *v) {
  return fabs(vnorm(v) - 1.0) <= 1e-3;
}

/* the contacts of /state/contacts (an untrusted file's, or the record's own just written)
 * into rec (the contacts the next record lists so far), stepr (the last step's) and prev
 * (the warm starts) */
static mbsStatus import_contacts(const mbsModel *m, MoreauWork *w, const mbsStateArray *a,
                                 mbsError *err) {
  if (a->length % STATE_COLS != 0) {
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "/state/contacts holds %d values in its last record, not rows of %d",
                         a->length, STATE_COLS);
  }
  int rows = a->length / STATE_COLS, ncur = 0;
  for (int k = 0; k < rows; k++) {
    ncur += a->data[(size_t)k * STATE_COLS + 3] == 1.0;
  }
  /* a record's own rows (a->data = w->exp) fit the storage: it grows only for a restart's
   * (whose growth would otherwise move them) */
  if (ncur > w->cap && !grow_contacts(w, ncur)) {
    return storage_error(w, err);
  }
  if (grow_records(w, rows, err) != MBS_OK) {
    return err->status;
  }
  /* every row checked into the merge's work (old) before anything is taken over: a bad row
   * leaves the state as it was */
  for (int k = 0; k < rows; k++) {
    const double *row = a->data + (size_t)k * STATE_COLS;
    const char *bad = NULL;
    for (int i = 0; i < STATE_COLS && !bad; i++) {
      bad = isfinite(row[i]) ? NULL : "a value that is not finite";
    }
    int spec = -1;
    if (!bad && !(is_index(row[0], 0, m->nshape - 1) && is_index(row[1], 0, m->nshape - 1))) {
      bad = "shape indices outside the model's shapes";
    } else if (!bad && (spec = entry_of_shapes(m, (int)row[0], (int)row[1])) < 0) {
      bad = "shapes that no contacts entry pairs";
    } else if (!bad && !is_index(row[2], 0, INT_MAX)) {
      bad = "a feature that is not an index";
    } else if (!bad && !(is_index(row[3], 0, 1) && is_index(row[4], 0, row[3]))) {
      bad = "current and warm_start flags other than 0 or 1 (warm_start only when current)";
    } else if (!bad && !is_index(row[5], 0, 2)) {
      bad = "a status other than 0, 1 or 2";
    } else if (!bad && !(row[6] >= 0.0)) {
      bad = "a negative normal impulse";
    } else if (!bad && !(is_unit(row + 15) && is_unit(row + 18) && is_unit(row + 21))) {
      bad = "a normal or tangent that is not a unit vector";
    }
    if (bad) {
      return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                           "/state/contacts row %d of the last record holds %s", k + 1, bad);
    }
    mbsContactRecord *r = &w->old[k];
    memset(r, 0, sizeof(*r));
    r->pair = (mbsShapePair){(int)row[0], (int)row[1], spec};
    r->feature = (int)row[2];
    r->body[0] = m->shape[(int)row[0]].body;
    r->body[1] = m->shape[(int)row[1]].body;
    /* the flags travel with the row through the sort in the status's upper bits */
    r->status = (int)row[5] | (int)row[3] << 2 | (int)row[4] << 3;
    for (int i = 0; i < 3; i++) {
      r->impulse[i] = row[6 + i];
      r->impulse_sum[i] = row[9 + i];
      r->point[i] = row[12 + i];
      r->normal[i] = row[15 + i];
      r->tangent[0][i] = row[18 + i];
      r->tangent[1][i] = row[21 + i];
    }
    r->gap = row[24];
  }
  /* by identity, as the step keeps them; one row per contact */
  qsort(w->old, (size_t)rows, sizeof(*w->old), record_qsort_cmp);
  for (int k = 1; k < rows; k++) {
    if (record_cmp(&w->old[k - 1], &w->old[k]) == 0) {
      return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                           "/state/contacts lists the contact of shapes %d and %d, feature %d "
                           "twice in its last record",
                           w->old[k].pair.a, w->old[k].pair.b, w->old[k].feature);
    }
  }
  w->nprev = w->nstep = 0;
  for (int k = 0; k < rows; k++) {
    mbsContactRecord *r = &w->old[k];
    int current = r->status >> 2 & 1, warm = r->status >> 3 & 1;
    r->status &= 3;
    w->rec[k] = *r;
    w->now[k] = current;
    if (current) {
      w->stepr[w->nstep++] = *r;
    }
    if (warm) {
      Contact *c = &w->prev[w->nprev++];
      memset(c, 0, CONTACT_HEAD);
      c->pair = r->pair;
      c->feature = r->feature;
      memcpy(c->L, r->impulse, sizeof(c->L));
      memcpy(c->t1, r->tangent[0], sizeof(c->t1));
      memcpy(c->t2, r->tangent[1], sizeof(c->t2));
    }
  }
  w->nrec = rows;
  return MBS_OK;
}

static mbsStatus import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                        char *missing, size_t nmissing, mbsError *err) {
  MoreauWork *w = d->integrator_work;
  const mbsStateArray *cs = m->ncontact_paired > 0 ? mbs_state_find(in, n, "contacts") : NULL;
  if (cs) {
    mbsStatus st = import_contacts(m, w, cs, err);
    if (st != MBS_OK) {
      return st;
    }
  } else if (m->ncontact_paired > 0 && missing && nmissing > 0) {
    snprintf(missing, nmissing,
             "contacts: the first step's contact problem starts from zero impulses");
  }
  mbs_implicit_import(m, d, &w->base, in, n);
  d->contact_potential = penalty_potential(m, w, d->q);
  return MBS_OK;
}

const mbsIntegratorTable mbs_integrator_moreau = {
    .name = "moreau",
    .init = init,
    .start = start,
    .prepare = prepare,
    .step = step,
    .interpolate = interpolate,
    .state_export = state_export,
    .state_import = import,
    .free = work_free,
    .contacts = contacts,
    .contacts_clear = contacts_clear,
};
