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
 * Contacts are detected at the step's start q0 (broad and narrow phase, src/contact/):
 * points whose gap is predicted to close within half a step, g0 + dt/2 min(gamma_N0, 0) <=
 * 1e-9 m (Siconos' activation rule), enter the contact problem with their frame W at q0. The
 * contact velocities gamma = W^T u1 depend on the impulses Lambda through the Newton matrix J
 * of the step: d u1 / d Lambda = (1/theta) J^-1 [W; 0] (its coordinate rows), so
 *     gamma(Lambda) = gamma(Lambda_j) + G (Lambda - Lambda_j),  G = (1/theta) W^T J^-1 W
 * (the Delassus matrix, seed 002 eq. 5.4, with the bilateral constraints inside J). The prox
 * equations (eq. 5.5) per contact k, with Newton's law on xi_N = gamma_N + e min(gamma_N0, 0)
 * (eq. 2.32) and r_k = 1 / max diag G_kk,
 *     Lambda_N = prox_{R+}(Lambda_N - r xi_N),
 *     Lambda_T = prox_{|x| <= mu Lambda_N}(Lambda_T - r gamma_T)      (eq. 2.35b, c)
 * are solved by non-smooth Gauss-Seidel over the contacts, each contact's 3 x 3 problem
 * exactly (open, stick, else slip by its own prox iteration), with the velocities updated
 * after each contact (cost per sweep: the contacts' W and J^-1 W columns, never G itself).
 * The nonlinear step is then solved again with the new impulses (alternating: the linear
 * model and the nonlinear step agree when the impulses stop changing), at most
 * CONTACT_OUTER times; a contact problem that does not reach contact_tolerance within
 * contact_iterations sweeps fails the step, which the step control retries with dt/2.
 *
 * J^-1 W: the Newton matrix falls into components (sets of unknowns coupled by its pattern:
 * a free body's 12 coordinates and 6 rigidity rows; a mechanism's bodies and joints). A
 * component of at most DENSE_MAX unknowns is factored densely (Gaussian elimination, dense_solve) when a
 * contact touches it, and its columns of J^-1 W come from that block; larger components use
 * the sparse LU of the whole matrix.
 *
 * After the step, the unilateral gaps are projected (Siconos' MoreauJeanDirectProjection):
 * points with g < -1e-10 m at q1 are pushed out along their normals in the metric of J (a
 * Gauss-Seidel iteration on the gaps, only pushing), then the bilateral constraints are
 * restored by Newton steps with J; velocities stay. The energy this changes (potential and
 * constraint energy of the moved positions) is counted as contact dissipation, like the
 * impulses' work: for theta = 1/2 the discrete energy balance of em holds exactly,
 *     E1 - E0 = W_ext - D_dampers + Lambda . W^T (q1 - q0) / dt,
 * so E - E0 - W + D closes to the Newton tolerance with the contacts' share counted. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/contact.h"
#include "solver/integrator.h"
#include "solver/linsolve.h"
#include "solver/system.h"
#include "util/lapack.h"
#include "util/vec3.h"

#define DENSE_MAX 96        /* unknowns of a component factored densely */
#define CONTACT_OUTER 8     /* alternations of contact problem and nonlinear step */
#define GAP_ACTIVE 1e-9     /* [m] predicted gap below which a point is in the contact problem */
#define GAP_PROJECT 1e-10   /* [m] penetration the position projection removes */
#define GAP_PROBE 1e-3      /* [m] how far the records look for a contact that opened */
#define PROJECT_ROUNDS 8    /* detections and corrections of one position projection */
#define MAX_W 24            /* entries of one W column: two director frames, 4 nodes x 3 */
#define MAX_COMP MAX_W      /* components one contact touches (at most one per entry) */
#define ISLAND_MAX 128      /* contacts of an island solved by semi-smooth Newton */
#define NSGS_CHECK 4       /* Gauss-Seidel sweeps between residual checks while impulses move */
#define PRE_SWEEPS 50      /* Gauss-Seidel sweeps before the islands' semi-smooth Newton */
#define CHUNK_PASSES 8     /* block Gauss-Seidel passes over the chunks of a large island */
#define SSN_GOAL 1e-3     /* the regularized problems' tolerance, relative to the rigid one's */
#define SSN_CONTRACT 0.25   /* a chord step of the semi-smooth Newton must contract this much */
#ifndef PROX_EPS
#define PROX_EPS 1e-3       /* compliance of the proximal-point iterations, relative to G */
#endif

/* one contact of a step */
typedef struct {
  int pair, feature; /* identity (warm starts) */
  int frame[2];      /* attachment frames of shapes a and b */
  int segment[2];    /* 1: the shape is a beam segment between frames frame and frame + 1 */
  int body[2];       /* bodies (-1 ground) */
  double point[3];   /* world, midway */
  double pa[3], pb[3]; /* the closest points (the material points W is built at) */
  double n[3], t1[3], t2[3];
  double gap0, gap1; /* at q0, at the end of the step */
  double e, mu;
  double gN0;    /* normal velocity at the step's start */
  double target; /* an impact's normal velocity at the step's end (Newton's law) */
  double tgt[3]; /* the law holds for xi = W^T u1 - tgt (see set_targets) */
  int impact;    /* 1: an impact within the step: the end gap is set to gend */
  double gend;   /* [m] the end gap of the impact's motion */
  double L[3];   /* impulse: normal, tangents [N s] */
  double G[9];   /* Delassus block G_kk */
  double r;      /* prox parameter */
  int status;    /* 0 open, 1 stick, 2 slip */
  int seen;      /* the position projection's last detection reported it */
  int nw;        /* W columns: entries (coordinates widx, values w[dir]) */
  int widx[MAX_W];
  double w[3][MAX_W];
  int ncomp;             /* components of the Newton matrix its coordinates belong to (a
                            rigid body's phi_x, phi_y, phi_z and directors are four) */
  int comp[MAX_COMP];
  long xoff[MAX_COMP];   /* its J^-1 W columns: 3 vectors per component, at x + xoff */
} Contact;

/* a component of the Newton matrix */
typedef struct {
  int nunk, ncoord; /* unknowns (coordinates first, then multiplier rows), coordinates */
  int unk0;         /* first entry in comp_unk */
  long lu0;         /* dense: its block at lu + lu0 (nunk^2 row-major, the elimination's work) and the
                       coordinate block of its inverse at zinv + lu0 (ncoord^2, column-major);
                       -1 sparse */
  int stamp;        /* step at which the LU was factored (dense) */
} Component;

typedef struct {
  mbsImplicitWork base; /* must be first */
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
  int factor_stamp;
  /* contacts */
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
  int *cand;      /* (npair) broad-phase output */
  mbsBroad *broad;
  double *rhs, *sol; /* (n) sparse solves */
  double *u;         /* (nq) velocities of the linear model */
  double *du;        /* (nq) */
  double *gq;        /* (nq) projection increments */
  int *viol;         /* (cap) violated points of the projection */
  double *nu;        /* (cap) */
  Contact *vc;       /* (cap) their geometry */
  double *rowwork;   /* the row walk's work */
  double *q0save, *hres; /* (nq) semi-explicit variant: the step's start, -dt^2 h(q1, u0, t1) */
  double *qJ;        /* (nq) the configuration the Newton matrix was last assembled at */
  /* islands and the semi-smooth Newton of one island (3 ISLAND_MAX unknowns at most) */
  int *isl, *isl_order, *isl_start, *comp_fill, *comp_first;
  double *sn_G, *sn_J, *sn_L, *sn_L0, *sn_xi, *sn_phi, *sn_phit, *sn_dL, *sn_Lt, *sn_D, *sn_Lref;
  double *sn_v, *sn_vt, *sn_gd; /* contact velocities of the iterate and the trial, G dL */
  int *sn_piv;
  /* [J] what the step dissipated: by the normal laws (and the position projection), by
   * friction, by the theta method itself (moreau's energy balance, step) */
  double dissip_impact, dissip_friction, dissip_num;
} MoreauWork;

/* ---- setup ---- */

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
  free(parent);
  free(root_comp);
  return w->lu && w->zinv && w->zwork ? 0 : -1;
}

static void work_free(void *p) {
  MoreauWork *w = p;
  if (!w) {
    return;
  }
  mbs_implicit_work_free(&w->base);
  mbs_broad_destroy(w->broad);
  free(w->pen);
  free(w->q0save);
  free(w->hres);
  free(w->qJ);
  void *ptrs[] = {w->comp, w->comp_of, w->pos_in, w->comp_unk, w->lu,  w->c,
                  w->prev, w->rec, w->stepr, w->old, w->now, w->x,      w->pts,      w->pose, w->extra, w->cand, w->rhs,
                  w->sol,  w->u,       w->du,     w->gq,       w->viol, w->nu,   w->vc,
                  w->rowwork, w->isl, w->isl_order, w->isl_start, w->comp_fill,
                  w->comp_first, w->zinv, w->zwork, w->sn_G, w->sn_J, w->sn_L, w->sn_L0, w->sn_xi, w->sn_phi,
                  w->sn_phit, w->sn_dL, w->sn_Lt, w->sn_D, w->sn_piv, w->sn_Lref,
                  w->sn_v, w->sn_vt, w->sn_gd};
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
  /* the semi-explicit variant's velocity update is M (u1 - u0) = dt h + W L: the impulses'
   * effect on u1 is J^-1 W, as for theta = 1 */
  w->theta = m->moreau_variant == MBS_MOREAU_EXPLICIT ? 1.0 : m->moreau_theta;
  /* the contact storage: every possible point, up to a bound a few times the shapes */
  long cap = m->contact_max;
  long bound = 64 + 32L * m->nshape;
  w->cap = (int)(cap < bound ? cap : bound);
  if (w->cap < 1) {
    w->cap = 1;
  }
  w->ptcap = 1;
  for (int k = 0; k < m->npair; k++) {
    int mx = mbs_collide_max(&m->shape[m->pair[k].a], &m->shape[m->pair[k].b]);
    w->ptcap = mx > w->ptcap ? mx : w->ptcap;
  }
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1);
  size_t nsp = (size_t)(m->nq + m->ncon > 0 ? m->nq + m->ncon : 1);
  w->c = calloc((size_t)w->cap, sizeof(Contact));
  w->prev = calloc((size_t)w->cap, sizeof(Contact));
  w->pen = calloc((size_t)w->cap, sizeof(Contact));
  w->q0save = calloc(nq, sizeof(double));
  w->hres = calloc(nq, sizeof(double));
  w->qJ = calloc(nq, sizeof(double));
  w->reccap = w->cap;
  w->rec = calloc((size_t)w->reccap, sizeof(mbsContactRecord));
  w->old = calloc((size_t)w->reccap, sizeof(mbsContactRecord));
  w->now = calloc((size_t)w->reccap, sizeof(int));
  w->stepr = calloc((size_t)w->cap, sizeof(mbsContactRecord));
  w->pts = calloc((size_t)w->ptcap, sizeof(mbsContactPoint));
  w->pose = calloc((size_t)(m->nshape > 0 ? m->nshape : 1), sizeof(mbsPose));
  w->extra = calloc((size_t)(m->nshape > 0 ? m->nshape : 1), sizeof(double));
  w->cand = calloc((size_t)(m->npair > 0 ? m->npair : 1), sizeof(int));
  w->comp_of = calloc(nsp, sizeof(int));
  w->pos_in = calloc(nsp, sizeof(int));
  w->comp_unk = calloc(nsp, sizeof(int));
  w->rhs = calloc(nsp, sizeof(double));
  w->sol = calloc(nsp, sizeof(double));
  w->u = calloc(nq, sizeof(double));
  w->du = calloc(nq, sizeof(double));
  w->gq = calloc(nq, sizeof(double));
  w->viol = calloc((size_t)w->cap, sizeof(int));
  w->nu = calloc((size_t)w->cap, sizeof(double));
  w->vc = calloc((size_t)w->cap, sizeof(Contact));
  w->rowwork = calloc(mbs_rows_work_size(m) + 1, sizeof(double));
  size_t ni = (size_t)(w->cap < ISLAND_MAX ? w->cap : ISLAND_MAX), N = 3 * ni;
  w->isl = calloc((size_t)w->cap, sizeof(int));
  w->isl_order = calloc((size_t)w->cap, sizeof(int));
  w->isl_start = calloc((size_t)w->cap + 1, sizeof(int));
  w->comp_fill = calloc((size_t)w->cap + 1, sizeof(int));
  w->sn_G = calloc(N * N, sizeof(double));
  w->sn_J = calloc(N * N, sizeof(double));
  w->sn_L = calloc(N, sizeof(double));
  w->sn_L0 = calloc(N, sizeof(double));
  w->sn_xi = calloc(N, sizeof(double));
  w->sn_phi = calloc(N, sizeof(double));
  w->sn_phit = calloc(N, sizeof(double));
  w->sn_dL = calloc(N, sizeof(double));
  w->sn_Lt = calloc(N, sizeof(double));
  w->sn_Lref = calloc(N, sizeof(double));
  w->sn_v = calloc(N, sizeof(double));
  w->sn_vt = calloc(N, sizeof(double));
  w->sn_gd = calloc(N, sizeof(double));
  w->sn_D = calloc(3 * N, sizeof(double));
  w->sn_piv = calloc(N, sizeof(int));
  if (!w->c || !w->prev || !w->pen || !w->q0save || !w->hres || !w->qJ || !w->rec || !w->old || !w->now || !w->stepr || !w->pts || !w->pose || !w->extra || !w->cand || !w->comp_of ||
      !w->pos_in || !w->comp_unk || !w->rhs || !w->sol || !w->u || !w->du ||
      !w->gq || !w->viol || !w->nu || !w->vc || !w->rowwork || !w->isl || !w->isl_order ||
      !w->isl_start || !w->comp_fill || !w->sn_G || !w->sn_J || !w->sn_L || !w->sn_L0 ||
      !w->sn_xi || !w->sn_phi || !w->sn_phit || !w->sn_dL || !w->sn_Lt || !w->sn_Lref || !w->sn_D || !w->sn_v || !w->sn_vt || !w->sn_gd ||
      !w->sn_piv) {
    work_free(w);
    *work = NULL;
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  if (m->npair > 0) {
    w->broad = mbs_broad_create(m, err);
    if (!w->broad) {
      work_free(w);
      *work = NULL;
      return err->status;
    }
  }
  return MBS_OK;
}

/* the components and J^-1 W storage need the system (built after init): on the first step */
static mbsStatus setup_components(const mbsModel *m, mbsData *d, MoreauWork *w, mbsError *err) {
  if (w->comp) {
    return MBS_OK;
  }
  if (components(w, d->sys) != 0) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  int maxc = 1;
  for (int k = 0; k < w->ncomp; k++) {
    maxc = w->comp[k].ncoord > maxc ? w->comp[k].ncoord : maxc;
  }
  /* each contact: 3 columns over its components (two bodies: each body's phi_x, phi_y, phi_z
   * and directors, or the mechanism a body belongs to); the violated points of the
   * projection: 1 column each */
  w->comp_first = malloc((size_t)(w->ncomp > 0 ? w->ncomp : 1) * sizeof(int));
  if (!w->comp_first) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  for (int k = 0; k < w->ncomp; k++) {
    w->comp_first[k] = -1;
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

/* [m] the radius of a rounded shape fixed to one frame (sphere, capsule), 0 otherwise (and
 * for a beam segment, whose material point is already on its axis) */
static double rounded_radius(const mbsShape *s) {
  if (s->segment) {
    return 0.0;
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
    c->w[dd][e] = 0.0;
  }
  return e;
}

/* add sign times the velocity of the material point p (world, at q) of contact side `side`
 * along the directions dirs[d0 .. d1) to c's W columns. On a director frame (a rigid body, a
 * beam node) the velocity is that of the rigid part of the director rates: phi' + omega x r
 * with r = p - phi and omega = 1/2 sum_i d_i x d_i' (exact for rigid rates, and blind to the
 * rates that violate the rigidity), so its entries are dir on phi and 1/2 (r x dir) x d_i on
 * d_i instead of the material point's c^i dir. For rigid rates both are the same; the
 * difference is what makes the contact problem consistent: the end velocities u1 of the
 * theta step meet the rigidity only to O(dt omega^2), and W^T u1 with the material point's
 * columns had that part in it, which depends on the configuration (so the alternation of
 * contact problem and nonlinear step converged only linearly, by dt omega per pass) and which
 * no impulse can remove (so the prox residual of a stack stalled) */
static void add_point(const mbsModel *m, Contact *c, int side, const double *q, const double p[3],
                      double sign, int d0, int d1) {
  const double *dirs[3] = {c->n, c->t1, c->t2};
  int f = c->frame[side];
  mbsAttachKind kind = m->attach_kind[f];
  if (!c->segment[side] && (kind == MBS_ATTACH_DIRECTORS || kind == MBS_ATTACH_BEAM_NODE)) {
    int n0 = m->attach_node[f];
    const double *phi = q + 3 * n0;
    double r[3];
    vsub(r, p, phi);
    for (int dd = d0; dd < d1; dd++) {
      double rn[3];
      vcross(rn, r, dirs[dd]);
      for (int j = 0; j < 3; j++) {
        c->w[dd][w_entry(c, 3 * n0 + j)] += sign * dirs[dd][j];
      }
      for (int i = 0; i < 3; i++) {
        double a[3];
        vcross(a, rn, q + 3 * (n0 + 1 + i));
        for (int j = 0; j < 3; j++) {
          c->w[dd][w_entry(c, 3 * (n0 + 1 + i) + j)] += sign * 0.5 * a[j];
        }
      }
    }
    return;
  }
  mbsPointWeights pw;
  side_weights(m, c, side, q, p, &pw);
  for (int k = 0; k < pw.n; k++) {
    for (int j = 0; j < 3; j++) {
      int e = w_entry(c, 3 * pw.node[k] + j);
      for (int dd = d0; dd < d1; dd++) {
        c->w[dd][e] += sign * pw.w[k] * dirs[dd][j];
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
static void contact_columns(const mbsModel *m, Contact *c, const double *q, const double pa[3],
                            const double pb[3]) {
  const mbsShapePair *pr = &m->pair[c->pair];
  const double rad[2] = {rounded_radius(&m->shape[pr->a]), rounded_radius(&m->shape[pr->b])};
  c->nw = 0;
  for (int side = 0; side < 2; side++) {
    const double *p = side ? pb : pa;
    double sign = side ? 1.0 : -1.0;
    if (rad[side] == 0.0) {
      add_point(m, c, side, q, p, sign, 0, 3);
      continue;
    }
    add_point(m, c, side, q, p, sign, 1, 3);
    double centre[3];
    for (int j = 0; j < 3; j++) {
      centre[j] = p[j] + sign * rad[side] * c->n[j];
    }
    add_point(m, c, side, q, centre, sign, 0, 1);
  }
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
  if (x->pair != y->pair) {
    return x->pair < y->pair ? -1 : 1;
  }
  return (x->feature > y->feature) - (x->feature < y->feature);
}

/* [m] how far shape s can move in time dt at the velocities v: its centre's speed and its
 * radius times the director rates' norm (a bound of the rotation's speed) */
static double shape_reach(const mbsModel *m, const mbsShape *s, const double *v, double dt) {
  int f = s->attach;
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

/* all points of the candidate pairs at q with gap below each pair's margin, widened by how
 * far the two shapes can move within dt at the velocities v (v NULL: not widened), into out
 * (at most cap); returns the count, -1 when cap overflowed. The candidates are the broad
 * phase's, or with only (nonly contacts sorted by pair) just the pairs of those contacts.
 * columns = 0 leaves the W columns out (nw = 0: contact_columns when needed). */
static int detect(const mbsModel *m, MoreauWork *w, const double *q, const double *v, double dt,
                  Contact *out, int cap, const Contact *only, int nonly, int columns) {
  for (int s = 0; s < m->nshape; s++) {
    mbs_shape_pose(m, &m->shape[s], q, &w->pose[s]);
    w->extra[s] = v ? shape_reach(m, &m->shape[s], v, dt) : 0.0;
    if (m->shape[s].segment) {
      /* a segment's bounding sphere grows as it stretches */
      w->extra[s] += fmax(0.0, m->shape[s].size[0] + w->pose[s].half - m->shape[s].radius);
    }
  }
  int ncand = 0;
  if (only) {
    for (int k = 0; k < nonly; k++) {
      if (ncand == 0 || w->cand[ncand - 1] != only[k].pair) {
        w->cand[ncand++] = only[k].pair;
      }
    }
  } else {
    ncand = mbs_broad_pairs(w->broad, m, w->pose, w->extra, w->cand, m->npair);
  }
  int n = 0;
  for (int i = 0; i < ncand; i++) {
    int k = w->cand[i];
    const mbsShapePair *pr = &m->pair[k];
    const mbsShape *sa = &m->shape[pr->a], *sb = &m->shape[pr->b];
    const mbsContactSpec *sp = &m->contact[pr->spec];
    double margin = sp->margin + w->extra[pr->a] + w->extra[pr->b];
    int np = mbs_collide(sa, &w->pose[pr->a], sb, &w->pose[pr->b], m->contact_pts, margin, w->pts,
                         w->ptcap);
    for (int j = 0; j < np; j++) {
      if (n >= cap) {
        return -1;
      }
      const mbsContactPoint *p = &w->pts[j];
      Contact *c = &out[n++];
      memset(c, 0, sizeof(*c));
      c->pair = k;
      c->feature = p->feature;
      c->frame[0] = sa->attach;
      c->frame[1] = sb->attach;
      c->segment[0] = sa->segment;
      c->segment[1] = sb->segment;
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
        contact_columns(m, c, q, p->pa, p->pb);
      }
    }
  }
  qsort(out, (size_t)n, sizeof(Contact), contact_cmp);
  return n;
}

/* the step's contacts at the predicted evaluation point q0 + theta dt u0: the same points
 * (pair and feature) found there get their normal, tangents and material points from there;
 * returns the largest change of a W entry */
static double refresh_geometry(const mbsModel *m, MoreauWork *w, double dt) {
  const mbsImplicitWork *b = &w->base;
  for (int i = 0; i < m->nq; i++) {
    w->gq[i] = b->q_prev[i] + w->theta * dt * b->v_prev[i];
  }
  int nv = detect(m, w, w->gq, b->v_prev, dt, w->vc, w->cap, w->c, w->nc, 0);
  double change = 0.0;
  for (int k = 0; k < w->nc && nv > 0; k++) {
    Contact *c = &w->c[k];
    const Contact *hit = bsearch(c, w->vc, (size_t)nv, sizeof(Contact), contact_cmp);
    if (!hit) {
      continue;
    }
    Contact old = *c;
    memcpy(c->n, hit->n, sizeof(c->n));
    memcpy(c->t1, hit->t1, sizeof(c->t1));
    memcpy(c->t2, hit->t2, sizeof(c->t2));
    memcpy(c->pa, hit->pa, sizeof(c->pa));
    memcpy(c->pb, hit->pb, sizeof(c->pb));
    memcpy(c->point, hit->point, sizeof(c->point));
    contact_columns(m, c, w->gq, c->pa, c->pb);
    if (c->nw != old.nw) {
      change = INFINITY;
      continue;
    }
    for (int e = 0; e < c->nw; e++) {
      for (int dir = 0; dir < 3; dir++) {
        change = fmax(change, fabs(c->w[dir][e] - old.w[dir][e]));
      }
    }
  }
  return change;
}

/* ---- J^-1 W ---- */

/* b = a^-1 b for the row-major n x n a (overwritten) and the row-major n x nrhs b: Gaussian
 * elimination with partial pivoting by rows (contiguous), skipping zero multipliers (a
 * component's block is sparse, and a few dozen unknowns are below what LAPACK's blocking
 * pays for); 0 when a pivot is exactly zero */
static int dense_solve(int n, double *a, int nrhs, double *b) {
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
    double inv = 1.0 / ak[k];
    for (int i = k + 1; i < n; i++) {
      double *ai = a + (size_t)i * n, *bi = b + (size_t)i * nrhs;
      double f = ai[k] * inv;
      if (f == 0.0) {
        continue;
      }
      for (int j = k + 1; j < n; j++) {
        ai[j] -= f * ak[j];
      }
      for (int j = 0; j < nrhs; j++) {
        bi[j] -= f * bk[j];
      }
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    const double *ai = a + (size_t)i * n;
    double *bi = b + (size_t)i * nrhs;
    for (int l = i + 1; l < n; l++) {
      const double *bl = b + (size_t)l * nrhs;
      double f = ai[l];
      if (f != 0.0) {
        for (int j = 0; j < nrhs; j++) {
          bi[j] -= f * bl[j];
        }
      }
    }
    double inv = 1.0 / ai[i];
    for (int j = 0; j < nrhs; j++) {
      bi[j] *= inv;
    }
  }
  return 1;
}

/* Z of the dense components the contacts touch (once per step: stamp) */
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
      if (!dense_solve(nu, a, nco, b)) {
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
 * pool; MBS_ERR_SOLVER when the pool is full */
static mbsStatus contact_solve(mbsData *d, MoreauWork *w, Contact *c, int ndir, mbsError *err) {
  for (int side = 0; side < c->ncomp; side++) {
    const Component *cp = &w->comp[c->comp[side]];
    if (w->xused + (long)ndir * cp->ncoord > w->xcap) {
      return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0, "contact storage exhausted");
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
    for (int dir = 0; dir < ndir; dir++, xo += nco) {
      double we = c->w[dir][e];
      for (int i = 0; i < nco; i++) {
        xo[i] += we * zc[i];
      }
    }
  }
  /* large components: sparse solves with the whole matrix */
  for (int side = 0; side < c->ncomp; side++) {
    const Component *cp = &w->comp[c->comp[side]];
    for (int dir = 0; dir < ndir && cp->lu0 < 0; dir++) {
      double *xo = w->x + c->xoff[side] + (long)dir * cp->ncoord;
      int n = d->sys->n;
      memset(w->rhs, 0, (size_t)n * sizeof(double));
      for (int e = 0; e < c->nw; e++) {
        w->rhs[c->widx[e]] = c->w[dir][e];
      }
      mbsStatus st = mbs_newton_linear_solve(d, w->rhs, w->sol, err);
      if (st != MBS_OK) {
        return st;
      }
      for (int i = 0; i < cp->ncoord; i++) {
        xo[i] = w->sol[w->comp_unk[cp->unk0 + i]];
      }
    }
  }
  return MBS_OK;
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
  w->factor_stamp++;
  w->xused = 0;
  for (int k = 0; k < w->nc; k++) {
    contact_components(w, &w->c[k]);
  }
  mbsStatus st = factor_components(d, w, w->c, w->nc, err);
  for (int k = 0; k < w->nc && st == MBS_OK; k++) {
    st = contact_solve(d, w, &w->c[k], 3, err);
    if (st == MBS_OK) {
      delassus_block(w, &w->c[k]);
    }
  }
  return st;
}

/* v onto the velocities the constraints allow at q, G(q) v + g_t = 0, in the metric of the
 * factored Newton matrix J (constraint rows G(qJ)): one solve J [dv; nu] = [0; -(G(q) v +
 * g_t)] */
static mbsStatus project_velocity(const mbsModel *m, mbsData *d, MoreauWork *w, const double *q,
                                  double *v, double t1, mbsError *err) {
  int nq = m->nq;
  if (m->ncon == 0) {
    return MBS_OK;
  }
  double r = mbs_velocity_residual(m, d, q, v, t1, w->rhs + nq);
  if (!(r > 0.0)) {
    return MBS_OK;
  }
  memset(w->rhs, 0, (size_t)nq * sizeof(double));
  for (int i = 0; i < m->ncon; i++) {
    w->rhs[nq + i] = -w->rhs[nq + i];
  }
  mbsStatus st = mbs_newton_linear_solve(d, w->rhs, w->sol, err);
  if (st != MBS_OK) {
    return st;
  }
  for (int i = 0; i < nq; i++) {
    v[i] += w->sol[i];
  }
  return MBS_OK;
}

/* The velocities of the linear model, w->u, onto those the constraints allow at the
 * configuration qJ the Newton matrix J was assembled at: the changes J^-1 W L of the
 * contact problem are admissible there, so the contact velocities W^T u of the model lie in
 * the range of the Delassus matrix and its problem can be solved to round-off (projected at
 * q1 instead, the part of u admissible at q1 but not at qJ, O(|q1 - qJ| |u|), is a velocity
 * no impulse removes: the prox residual of a stack of boxes stalled at 1e-7 of its scale) */
static mbsStatus rigid_velocity(const mbsModel *m, mbsData *d, MoreauWork *w, double t1,
                                mbsError *err) {
  return project_velocity(m, d, w, w->qJ, w->u, t1, err);
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
static void set_targets(MoreauWork *w, const double *u0) {
  double f = (1.0 - w->theta) / w->theta;
  /* one law for all closed points of a pair of shapes (the contacts are sorted by pair): the
   * targets of a face's four corners must be the values of one rigid velocity field, or no
   * impulses meet them all (a corner approaching at 1e-10 m/s beside one separating stalled the
   * contact problem of two dice at that level) */
  for (int k0 = 0, k1; k0 < w->nc; k0 = k1) {
    int approach = 0;
    for (k1 = k0; k1 < w->nc && w->c[k1].pair == w->c[k0].pair; k1++) {
      approach |= !w->c[k1].impact && wdot(&w->c[k1], 0, u0) < 0.0;
    }
    for (int k = k0; k < k1; k++) {
      Contact *c = &w->c[k];
      c->tgt[0] = c->impact ? c->target : approach ? 0.0 : -f * wdot(c, 0, u0);
      c->tgt[1] = c->tgt[2] = 0.0;
    }
  }
}

/* ---- the local contact problem ---- */

/* prox of (xN, xT) onto the law: xN >= 0, |xT| <= mu xN */
static void prox(double mu, double L[3]) {
  L[0] = fmax(L[0], 0.0);
  double t = sqrt(L[1] * L[1] + L[2] * L[2]), lim = mu * L[0];
  if (t > lim) {
    double s = t > 0.0 ? lim / t : 0.0;
    L[1] *= s;
    L[2] *= s;
  }
}

/* 3 x 3 solve A x = b (Cramer); 0 when singular */
static int solve3(const double A[9], const double b[3], double x[3]) {
  double c0 = A[4] * A[8] - A[5] * A[7], c1 = A[5] * A[6] - A[3] * A[8],
         c2 = A[3] * A[7] - A[4] * A[6];
  double det = A[0] * c0 + A[1] * c1 + A[2] * c2;
  if (!(fabs(det) > 1e-300)) {
    return 0;
  }
  double inv[9] = {c0,
                   A[2] * A[7] - A[1] * A[8],
                   A[1] * A[5] - A[2] * A[4],
                   c1,
                   A[0] * A[8] - A[2] * A[6],
                   A[2] * A[3] - A[0] * A[5],
                   c2,
                   A[1] * A[6] - A[0] * A[7],
                   A[0] * A[4] - A[1] * A[3]};
  for (int i = 0; i < 3; i++) {
    x[i] = (inv[3 * i] * b[0] + inv[3 * i + 1] * b[1] + inv[3 * i + 2] * b[2]) / det;
  }
  return 1;
}

/* Solve contact k's problem xi = x0 + G L (xi: Newton-shifted normal velocity and the
 * tangential ones) exactly: open, stick, or slip (prox iteration, eq. 2.35); L in/out */
static void local_solve(Contact *c, const double x0[3], double tol) {
  double L[3];
  if (x0[0] >= 0.0) { /* open: no impulse keeps xi_N >= 0 */
    c->L[0] = c->L[1] = c->L[2] = 0.0;
    c->status = 0;
    return;
  }
  double b[3] = {-x0[0], -x0[1], -x0[2]};
  if (c->mu > 0.0 && solve3(c->G, b, L) && L[0] > 0.0 && sqrt(L[1] * L[1] + L[2] * L[2]) <= c->mu * L[0]) {
    memcpy(c->L, L, sizeof(L));
    c->status = 1;
    return;
  }
  if (c->mu == 0.0) { /* frictionless: the normal alone */
    c->L[0] = c->G[0] > 0.0 ? -x0[0] / c->G[0] : 0.0;
    c->L[1] = c->L[2] = 0.0;
    c->status = 2;
    return;
  }
  /* slip: prox fixed point from the current impulse */
  memcpy(L, c->L, sizeof(L));
  prox(c->mu, L);
  double scale = fabs(x0[0]) + fabs(x0[1]) + fabs(x0[2]);
  for (int it = 0; it < 200; it++) {
    double xi[3], Ln[3];
    for (int i = 0; i < 3; i++) {
      xi[i] = x0[i] + c->G[3 * i] * L[0] + c->G[3 * i + 1] * L[1] + c->G[3 * i + 2] * L[2];
      Ln[i] = L[i] - c->r * xi[i];
    }
    prox(c->mu, Ln);
    double ch = fabs(Ln[0] - L[0]) + fabs(Ln[1] - L[1]) + fabs(Ln[2] - L[2]);
    memcpy(L, Ln, sizeof(L));
    if (ch <= 1e-3 * tol * c->r * scale) {
      break;
    }
  }
  memcpy(c->L, L, sizeof(L));
  c->status = L[0] > 0.0 ? 2 : 0;
}

/* the contact velocities xi of contact c at the velocities u (Newton shift on the normal) */
static void contact_xi(const Contact *c, const double *u, double xi[3]) {
  for (int dir = 0; dir < 3; dir++) {
    xi[dir] = wdot(c, dir, u);
  }
  for (int dir = 0; dir < 3; dir++) {
    xi[dir] -= c->tgt[dir];
  }
}

/* the prox residual [m/s]: max over contacts and directions of |L - prox(L - r xi)| / r */
static double prox_residual(const MoreauWork *w, const double *u) {
  double res = 0.0;
  for (int k = 0; k < w->nc; k++) {
    const Contact *c = &w->c[k];
    double xi[3], L[3];
    contact_xi(c, u, xi);
    for (int i = 0; i < 3; i++) {
      L[i] = c->L[i] - c->r * xi[i];
    }
    prox(c->mu, L);
    double r = fmax(fabs(L[0] - c->L[0]), fmax(fabs(L[1] - c->L[1]), fabs(L[2] - c->L[2])));
    res = fmax(res, r / c->r);
  }
  return res;
}

/* non-smooth Gauss-Seidel on the linear model u = w->u + (1/theta) J^-1 W (L - L_j): the
 * impulses in w->c[].L are updated in place and w->u follows them; returns the sweeps or -1
 * when contact_iterations did not reach the tolerance */
static int nsgs(const mbsModel *m, MoreauWork *w, double vscale, int max_sweeps,
                double *res_out) {
  double tol = m->contact_tolerance * vscale;
  double res = INFINITY;
  int sweep;
  for (sweep = 1; sweep <= max_sweeps; sweep++) {
    double chg = 0.0; /* the sweep's largest impulse change, in velocity units */
    for (int k = 0; k < w->nc; k++) {
      Contact *c = &w->c[k];
      double xi[3], x0[3], L0[3];
      contact_xi(c, w->u, xi);
      memcpy(L0, c->L, sizeof(L0));
      for (int i = 0; i < 3; i++) {
        x0[i] = xi[i] - (c->G[3 * i] * L0[0] + c->G[3 * i + 1] * L0[1] + c->G[3 * i + 2] * L0[2]);
      }
      local_solve(c, x0, m->contact_tolerance);
      for (int dir = 0; dir < 3; dir++) {
        add_column(w, c, dir, (c->L[dir] - L0[dir]) / w->theta, w->u);
        chg = fmax(chg, fabs(c->L[dir] - L0[dir]) / c->r);
      }
    }
    /* the residual (a second pass over the contacts) where it may have reached tol: once
     * the sweep changed little, and every NSGS_CHECK sweeps (redundant contacts' impulses
     * may keep moving where the velocities have converged) */
    if (chg <= tol || sweep % NSGS_CHECK == 0 || sweep == max_sweeps) {
      res = prox_residual(w, w->u);
      if (res <= tol) {
        break;
      }
    }
  }
  *res_out = res / vscale;
  return sweep <= max_sweeps ? sweep : -1;
}

/* 1 if contacts k and l touch a common component of the Newton matrix (else their block of
 * G is zero) */
static int share_component(const Contact *ck, const Contact *cl) {
  for (int i = 0; i < ck->ncomp; i++) {
    for (int j = 0; j < cl->ncomp; j++) {
      if (ck->comp[i] == cl->comp[j]) {
        return 1;
      }
    }
  }
  return 0;
}

/* entry (a, b) of G = (1/theta) W^T J^-1 W between contacts k (row) and l (column): zero
 * unless they touch a common component */
static double g_entry(const MoreauWork *w, const Contact *ck, int a, const Contact *cl, int b) {
  double s = 0.0;
  for (int e = 0; e < ck->nw; e++) {
    int i = ck->widx[e], ci = w->comp_of[i], side = comp_slot(cl, ci);
    if (side >= 0) {
      const Component *cp = &w->comp[ci];
      s += ck->w[a][e] * w->x[cl->xoff[side] + (long)b * cp->ncoord + w->pos_in[i]];
    }
  }
  return s / w->theta;
}

/* the islands of the contact problem: contacts coupled through a component of the Newton
 * matrix (bodies joined by joints or touching each other; the ground couples nothing);
 * island of each contact into w->isl, members grouped in w->isl_order with starts
 * w->isl_start (nisl + 1); returns nisl */
static int islands(MoreauWork *w) {
  int nc = w->nc;
  int *par = w->isl; /* union-find over contacts, then the island numbers */
  for (int k = 0; k < nc; k++) {
    par[k] = k;
    for (int side = 0; side < w->c[k].ncomp; side++) {
      int ci = w->c[k].comp[side];
      int f = w->comp_first[ci];
      if (f < 0) {
        w->comp_first[ci] = k;
      } else {
        int a = uf_find(par, f), b = uf_find(par, k);
        if (a != b) {
          par[a < b ? b : a] = a < b ? a : b;
        }
      }
    }
  }
  for (int k = 0; k < nc; k++) {
    for (int side = 0; side < w->c[k].ncomp; side++) {
      w->comp_first[w->c[k].comp[side]] = -1;
    }
  }
  /* number the roots in order, then count and place */
  int nisl = 0;
  for (int k = 0; k < nc; k++) {
    int r = uf_find(par, k);
    w->isl_order[k] = r == k ? nisl++ : -1;
  }
  for (int k = 0; k < nc; k++) {
    w->isl_order[k] = w->isl_order[uf_find(par, k)];
  }
  for (int k = 0; k < nc; k++) {
    w->isl[k] = w->isl_order[k];
  }
  for (int i = 0; i <= nisl; i++) {
    w->isl_start[i] = 0;
  }
  for (int k = 0; k < nc; k++) {
    w->isl_start[w->isl[k] + 1]++;
  }
  for (int i = 0; i < nisl; i++) {
    w->isl_start[i + 1] += w->isl_start[i];
  }
  for (int i = 0; i < nisl; i++) {
    w->comp_fill[i] = w->isl_start[i];
  }
  for (int k = 0; k < nc; k++) {
    w->isl_order[w->comp_fill[w->isl[k]]++] = k;
  }
  return nisl;
}

/* the prox map of one contact at y (in place) and its derivative D (3 x 3, row-major):
 * y_N >= 0, then the disk of radius mu y_N (seed 002 eq. 2.35b, c) */
static void prox_deriv(double mu, double y[3], double D[9]) {
  memset(D, 0, 9 * sizeof(double));
  if (!(y[0] > 0.0)) {
    y[0] = y[1] = y[2] = 0.0;
    return;
  }
  D[0] = 1.0;
  double t = sqrt(y[1] * y[1] + y[2] * y[2]), lim = mu * y[0];
  if (t <= lim) {
    D[4] = D[8] = 1.0;
    return;
  }
  double e1 = y[1] / t, e2 = y[2] / t, f = lim / t;
  D[3] = mu * e1;
  D[6] = mu * e2;
  D[4] = f * (1.0 - e1 * e1);
  D[5] = D[7] = -f * e1 * e2;
  D[8] = f * (1.0 - e2 * e2);
  y[1] = lim * e1;
  y[2] = lim * e2;
}

/* xi = xi0 + G (L - L0) + eps (L - Lref) of an island (N unknowns, G row-major; dl: N of
 * work) */
static void island_xi(int N, const double *G, const double *xi0, const double *L0, double eps,
                      const double *Lref, const double *L, double *dl, double *xi) {
  for (int i = 0; i < N; i++) {
    dl[i] = L[i] - L0[i];
    xi[i] = xi0[i] + eps * (L[i] - Lref[i]);
  }
  /* G row-major is G^T column-major */
  int one = 1;
  double d1 = 1.0;
  dgemv_("T", &N, &N, &d1, G, &N, dl, &one, &d1, xi, &one, 1);
}

/* Phi = L - prox(L - R xi) of an island (n contacts, unknowns 3n) at the impulses L and
 * their contact velocities xi (island_xi; eps = 0: the rigid problem); D (3x3 per contact)
 * when asked; returns max |Phi_i| / r_i and the merit sum (Phi_i / r_i)^2 */
static double island_phi(const MoreauWork *w, const int *mem, int n, const double *xi,
                         const double *L, double *phi, double *D, double *merit) {
  double res = 0.0, m2 = 0.0;
  for (int k = 0; k < n; k++) {
    const Contact *c = &w->c[mem[k]];
    double y[3], Dk[9];
    for (int a = 0; a < 3; a++) {
      y[a] = L[3 * k + a] - c->r * xi[3 * k + a];
    }
    prox_deriv(c->mu, y, Dk);
    for (int a = 0; a < 3; a++) {
      double f = L[3 * k + a] - y[a];
      phi[3 * k + a] = f;
      res = fmax(res, fabs(f) / c->r);
      m2 += (f / c->r) * (f / c->r);
    }
    if (D) {
      memcpy(D + 9 * k, Dk, sizeof(Dk));
    }
  }
  *merit = m2;
  return res;
}

/* Semi-smooth Newton (Alart & Curnier's generalized Newton; Jacobian I - D (I - R (G +
 * eps I)), D the prox map's derivative, dense LU by LAPACK) on the regularized problem of
 * island_phi, with a line search on the merit; L in/out. The contact velocities follow the
 * steps linearly (xi + alpha (G + eps I) dL: one product with G per step). The LU in
 * w->sn_J is kept for the next iterations (a chord step, O(N^2) instead of O(N^3)) while
 * they contract the residual by at least SSN_CONTRACT, and refactored when they do not;
 * *lu_ok (in/out) says that w->sn_J holds a factorization of this island's Jacobian (from an
 * earlier call with the same G and eps). Returns the final residual. */
static double island_ssn(MoreauWork *w, const int *mem, int n, const double *G, const double *xi0,
                         const double *L0, double eps, const double *Lref, double *L, double goal,
                         int maxit, int *iters, int *lu_ok) {
  int N = 3 * n, one = 1;
  double *J = w->sn_J, *phi = w->sn_phi, *dL = w->sn_dL, *Lt = w->sn_Lt, *D = w->sn_D;
  double *xi = w->sn_v, *xit = w->sn_vt, *gd = w->sn_gd;
  double merit, mt, d1 = 1.0;
  island_xi(N, G, xi0, L0, eps, Lref, L, Lt, xi);
  double res = island_phi(w, mem, n, xi, L, phi, D, &merit);
  int slow = 0;
  for (int it = 0; it < maxit && res > goal; it++) {
    (*iters)++;
    int fresh = !*lu_ok || slow;
    if (fresh) {
      /* J^T column-major (J row-major): row 3k + a of J is
       * r_k sum_b D_k[a][b] G[3k + b][.] + (I - D_k (1 - r_k eps))[a][.] on block k */
      for (int k = 0; k < n; k++) {
        const double *Dk = D + 9 * k;
        double rk = w->c[mem[k]].r;
        for (int a = 0; a < 3; a++) {
          double *row = J + (size_t)(3 * k + a) * N;
          double c0 = rk * Dk[3 * a], c1 = rk * Dk[3 * a + 1], c2 = rk * Dk[3 * a + 2];
          if (c0 == 0.0 && c1 == 0.0 && c2 == 0.0) {
            memset(row, 0, (size_t)N * sizeof(double));
          } else {
            const double *g0 = G + (size_t)(3 * k) * N, *g1 = g0 + N, *g2 = g1 + N;
            for (int j = 0; j < N; j++) {
              row[j] = c0 * g0[j] + c1 * g1[j] + c2 * g2[j];
            }
          }
          for (int bb = 0; bb < 3; bb++) {
            row[3 * k + bb] += (a == bb ? 1.0 : 0.0) - Dk[3 * a + bb] * (1.0 - rk * eps);
          }
        }
      }
      int info = 0;
      dgetrf_(&N, &N, J, &N, w->sn_piv, &info);
      *lu_ok = info == 0;
      if (info != 0) {
        break;
      }
    }
    for (int i = 0; i < N; i++) {
      dL[i] = -phi[i];
    }
    int info = 0;
    dgetrs_("T", &N, &one, J, &N, w->sn_piv, dL, &N, &info, 1);
    /* gd = (G + eps I) dL */
    for (int i = 0; i < N; i++) {
      gd[i] = eps * dL[i];
    }
    dgemv_("T", &N, &N, &d1, G, &N, dL, &one, &d1, gd, &one, 1);
    double alpha = 1.0, rn = INFINITY;
    mt = INFINITY;
    for (int ls = 0; ls < 30; ls++) {
      for (int i = 0; i < N; i++) {
        Lt[i] = L[i] + alpha * dL[i];
        xit[i] = xi[i] + alpha * gd[i];
      }
      rn = island_phi(w, mem, n, xit, Lt, w->sn_phit, NULL, &mt);
      if (mt < (1.0 - 1e-4 * alpha) * merit || rn <= goal) {
        break;
      }
      alpha *= 0.5;
    }
    if (!(mt < merit) && !(rn <= goal)) {
      if (!fresh) {
        slow = 1; /* the old Jacobian is no descent direction here: refactor */
        continue;
      }
      break;
    }
    memcpy(L, Lt, (size_t)N * sizeof(double));
    memcpy(xi, xit, (size_t)N * sizeof(double));
    double res_old = res;
    res = island_phi(w, mem, n, xi, L, phi, D, &merit);
    slow = !(res <= SSN_CONTRACT * res_old);
  }
  return res;
}

/* One island's prox equations (seed 002 eq. 2.35 with 5.4) by proximal-point iterations:
 * each solves the problem with a compliance eps (G + eps I is positive definite also for
 * redundant contacts such as the four corners of a face on a plane, where G is singular and
 * Newton's Jacobian with it) about the last solution Lref by semi-smooth Newton, which then
 * converges fast; the iterations remove the compliance (the impulses converge to the rigid
 * problem's solution nearest the start). The impulses and w->u follow the result when it
 * reaches tol in the rigid problem. Returns the Newton iterations, or -1. */
static int island_newton(MoreauWork *w, const int *mem, int n, double tol, int maxit) {
  int N = 3 * n;
  double *G = w->sn_G, *L = w->sn_L, *L0 = w->sn_L0, *xi0 = w->sn_xi, *Lref = w->sn_Lref;
  double gmax = 0.0, merit;
  for (int k = 0; k < n; k++) {
    const Contact *ck = &w->c[mem[k]];
    double xi[3];
    contact_xi(ck, w->u, xi);
    for (int a = 0; a < 3; a++) {
      L0[3 * k + a] = L[3 * k + a] = ck->L[a];
      xi0[3 * k + a] = xi[a];
      gmax = fmax(gmax, ck->G[4 * a]);
    }
  }
  double res = island_phi(w, mem, n, xi0, L, w->sn_phi, NULL, &merit);
  double res_start = res;
  if (res <= tol) {
    return 0; /* already solved (by the sweeps before, or a warm start) */
  }
  for (int k = 0; k < n; k++) {
    const Contact *ck = &w->c[mem[k]];
    for (int l = 0; l < n; l++) {
      const Contact *cl = &w->c[mem[l]];
      int coupled = l == k || share_component(ck, cl);
      for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
          G[(size_t)(3 * k + a) * N + 3 * l + b] =
              l == k ? ck->G[3 * a + b] : coupled ? g_entry(w, ck, a, cl, b) : 0.0;
        }
      }
    }
  }
  double eps = PROX_EPS * gmax;
  int iters = 0, lu_ok = 0;
  if (getenv("CDUMP")) {
    static int ndump = 0;
    char fn[64]; snprintf(fn, sizeof fn, "/tmp/i23/dump%d.txt", ndump++ % 50);
    FILE *f = fopen(fn, "w");
    fprintf(f, "%d %.17g %.17g\n", n, eps, tol);
    for (int k = 0; k < n; k++) { const Contact *ck = &w->c[mem[k]]; fprintf(f, "%.17g %.17g\n", ck->mu, ck->r); }
    for (int i = 0; i < N; i++) fprintf(f, "%.17g %.17g\n", xi0[i], L0[i]);
    for (int i = 0; i < N * N; i++) fprintf(f, "%.17g\n", G[i]);
    fclose(f);
  }
  for (int pp = 0; pp < maxit && res > tol && iters < maxit; pp++) {
    memcpy(Lref, L, (size_t)N * sizeof(double));
    island_ssn(w, mem, n, G, xi0, L0, eps, Lref, L, SSN_GOAL * tol, maxit - iters, &iters, &lu_ok);
    island_xi(N, G, xi0, L0, 0.0, L0, L, w->sn_Lt, w->sn_v);
    res = island_phi(w, mem, n, w->sn_v, L, w->sn_phi, NULL, &merit);
  }
  /* short of tol, the impulses are still kept when they are better than the start: the
   * Gauss-Seidel sweeps that follow go on from there */
  if (!(res < res_start)) {
    return -1;
  }
  for (int k = 0; k < n; k++) {
    Contact *c = &w->c[mem[k]];
    for (int a = 0; a < 3; a++) {
      add_column(w, c, a, (L[3 * k + a] - c->L[a]) / w->theta, w->u);
      c->L[a] = L[3 * k + a];
    }
    c->status = c->L[0] > 0.0 ? (hypot(c->L[1], c->L[2]) < c->mu * c->L[0] * (1.0 - 1e-9) ? 1 : 2)
                              : 0;
  }
  return res <= tol ? iters : -1;
}

/* the contact problem on the linear model: up to PRE_SWEEPS Gauss-Seidel sweeps (a sweep
 * costs O(contacts), an LU of a large island's Newton matrix as much as a hundred sweeps:
 * warm-started piles mostly converge in the sweeps), then semi-smooth Newton per island
 * (islands above ISLAND_MAX contacts in chunks), then Gauss-Seidel up to contact_iterations
 * where Newton failed; returns the iterations (sweeps and Newton iterations) or -1 when the
 * tolerance was not reached */
static int contact_problem(const mbsModel *m, MoreauWork *w, double vscale, double *res_out) {
  double tol = m->contact_tolerance * vscale;
  int pre = m->contact_iterations < PRE_SWEEPS ? m->contact_iterations : PRE_SWEEPS;
  int sw = nsgs(m, w, vscale, pre, res_out);
  if (getenv("CSTAT")) fprintf(stderr, "CP nc=%d pre=%d\n", w->nc, sw);
  if (sw >= 0) {
    return sw;
  }
  int total = pre;
  int nisl = islands(w);
  double res = INFINITY;
  /* a second pass corrects what the dense model and the applied updates differ by; an
   * island above ISLAND_MAX contacts is solved in chunks of at most ISLAND_MAX (block
   * Gauss-Seidel: each chunk's problem exactly, the others' impulses fixed), which the
   * further passes iterate */
  int chunked = 0;
  for (int i = 0; i < nisl; i++) {
    chunked |= w->isl_start[i + 1] - w->isl_start[i] > ISLAND_MAX;
  }
  int passes = chunked ? CHUNK_PASSES : 3;
  for (int pass = 0; pass < passes && !(res <= tol); pass++) {
    for (int i = 0; i < nisl; i++) {
      int n = w->isl_start[i + 1] - w->isl_start[i];
      int nchunk = (n + ISLAND_MAX - 1) / ISLAND_MAX;
      for (int ch = 0; ch < nchunk; ch++) {
        int a = (int)((long)n * ch / nchunk), b = (int)((long)n * (ch + 1) / nchunk);
        int it = island_newton(w, w->isl_order + w->isl_start[i] + a, b - a, tol,
                               m->contact_iterations);
        total += it < 0 ? m->contact_iterations : it;
      }
    }
    res = prox_residual(w, w->u);
  }
  *res_out = res / vscale;
  if (getenv("CSTAT")) { int big=0; for (int i=0;i<nisl;i++) big = big > w->isl_start[i+1]-w->isl_start[i] ? big : w->isl_start[i+1]-w->isl_start[i]; fprintf(stderr, "SSN nisl=%d big=%d total=%d res=%g\n", nisl, big, total, res/vscale); }
  if (res <= tol) {
    return total;
  }
  sw = nsgs(m, w, vscale, m->contact_iterations, res_out);
  if (getenv("CSTAT")) fprintf(stderr, "POST sw=%d\n", sw);
  return sw < 0 ? -1 : total + sw;
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
 * gets its normal velocity at u0; penetrating points of penalty pairs go to w->pen with
 * their impulse, the unilateral points stay in w->c (their count is returned, -1 when the
 * storage overflowed) for the caller's activation rule */
static int gather(const mbsModel *m, MoreauWork *w, const double *q, const double *vw,
                  const double *u0, double dt) {
  int nc = detect(m, w, q, vw, dt, w->c, w->cap, NULL, 0, 1), keep = 0;
  w->npen = 0;
  for (int k = 0; k < nc; k++) {
    Contact *c = &w->c[k];
    c->gN0 = wdot(c, 0, u0);
    const mbsContactSpec *sp = &m->contact[m->pair[c->pair].spec];
    if (sp->law == MBS_CONTACT_PENALTY) {
      if (c->gap0 < 0.0) {
        penalty_impulse(sp, c, u0, dt);
        w->pen[w->npen++] = *c;
      }
      continue;
    }
    w->c[keep++] = *c;
  }
  return nc < 0 ? -1 : keep;
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
  if (with_jac) {
    memcpy(w->qJ, p->d->q, (size_t)p->m->nq * sizeof(double));
  }
  for (int k = 0; k < w->nc + w->npen; k++) {
    const Contact *c = k < w->nc ? &w->c[k] : &w->pen[k - w->nc];
    for (int e = 0; e < c->nw; e++) {
      double f = p->dt * (c->w[0][e] * c->L[0] + c->w[1][e] * c->L[1] + c->w[2][e] * c->L[2]);
      p->d->res[c->widx[e]] -= f;
      scale = fmax(scale, fabs(f));
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
 * to w->vc (nv points there, sorted; the poses are detect's at q1). Returns the new count,
 * -1 when the storage overflowed. */
static int impact_points(const mbsModel *m, MoreauWork *w, int nv) {
  int n = nv;
  for (int k = 0; k < w->nc; k++) {
    const Contact *c = &w->c[k];
    if (!c->impact || !(c->L[0] > 0.0) ||
        bsearch(c, w->vc, (size_t)nv, sizeof(Contact), contact_cmp)) {
      continue;
    }
    const mbsShapePair *pr = &m->pair[c->pair];
    double reach = 2.0 * (fabs(c->gap0) + fabs(c->gend)) + m->contact[pr->spec].margin + 1.0;
    int np = mbs_collide(&m->shape[pr->a], &w->pose[pr->a], &m->shape[pr->b], &w->pose[pr->b],
                         m->contact_pts, reach, w->pts, w->ptcap);
    for (int j = 0; j < np; j++) {
      if (w->pts[j].feature != c->feature) {
        continue;
      }
      if (n >= w->cap) {
        return -1;
      }
      Contact *v = &w->vc[n++];
      *v = *c;
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

/* Push violated unilateral gaps out (q1 += J^-1 W_N nu, nu >= 0, by Gauss-Seidel on the
 * gaps), then restore the bilateral rows with Newton steps on J; up to 4 rounds. The
 * active contacts' end gaps follow. */
static mbsStatus project_positions(const mbsModel *m, mbsData *d, MoreauWork *w, double t1,
                                   mbsError *err) {
  int nq = m->nq;
  double V0 = potential(m, d->q, d->v);
  long xmark = w->xused;
  w->factor_stamp++; /* the Newton matrix stays: its components are factored once */
  for (int round = 0;; round++) {
    w->xused = xmark;
    for (int k = 0; k < w->nc; k++) {
      w->c[k].seen = 0;
    }
    int nv = detect(m, w, d->q, NULL, 0.0, w->vc, w->cap, NULL, 0, 0);
    if (nv >= 0 && round == 0) {
      nv = impact_points(m, w, nv);
    }
    if (nv < 0) {
      return mbs_error_set(err, MBS_ERR_SOLVER, NULL, 0, 0,
                           "more than %d contact points at once (the contact storage's bound)",
                           w->cap);
    }
    /* the step's contacts get their end gaps; in the first round, an impact within the
     * step gets the end gap of its motion (vc[].impact: either sign of push) */
    for (int k = 0; k < nv; k++) {
      Contact *key = &w->vc[k];
      Contact *hit = bsearch(key, w->c, (size_t)w->nc, sizeof(Contact), contact_cmp);
      key->impact = 0;
      key->gend = 0.0;
      if (hit) {
        hit->gap1 = key->gap0;
        hit->seen = 1;
        if (round == 0 && hit->impact && hit->L[0] > 0.0 &&
            fabs(key->gap0 - hit->gend) > GAP_PROJECT) {
          key->impact = 1;
          key->gend = hit->gend;
        }
      }
    }
    /* the penetrating points (and impacts); once there is one, every closed point joins the
     * projection (g + W^T dq >= 0 for it too), so that pushing one body out does not push
     * it into its neighbours */
    int nviol = 0, nclosed = 0;
    double gmin = 0.0;
    for (int pass = 0; pass < 2; pass++) {
      for (int k = 0; k < nv; k++) {
        /* a penalty contact's penetration is its law: not projected */
        if (m->contact[m->pair[w->vc[k].pair].spec].law == MBS_CONTACT_PENALTY) {
          continue;
        }
        int viol = w->vc[k].gap0 < -GAP_PROJECT || w->vc[k].impact;
        if (pass == 0) {
          gmin = w->vc[k].impact ? gmin : fmin(gmin, w->vc[k].gap0);
          nviol += viol;
        } else if (viol || w->vc[k].gap0 <= GAP_ACTIVE) {
          Contact *c = &w->vc[nclosed++];
          if (c != &w->vc[k]) {
            *c = w->vc[k];
          }
          contact_columns(m, c, d->q, c->pa, c->pb);
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
      }
      mbsStatus st = factor_components(d, w, w->vc, nviol, err);
      for (int k = 0; k < nviol && st == MBS_OK; k++) {
        st = contact_solve(d, w, &w->vc[k], 1, err);
        if (st == MBS_OK) {
          /* S_kk = W_N^T J^-1 W_N */
          Contact *c = &w->vc[k];
          double s = 0.0;
          for (int e = 0; e < c->nw; e++) {
            int i = c->widx[e], ci = w->comp_of[i];
            int side = comp_slot(c, ci);
            s += c->w[0][e] * w->x[c->xoff[side] + w->pos_in[i]];
          }
          c->G[0] = s;
          w->nu[k] = 0.0;
        }
      }
      if (st != MBS_OK) {
        return st;
      }
      /* Gauss-Seidel: g_k + W_k^T dq = gend_k (0 for the penetrating points, pushed only:
       * nu_k >= 0; an impact's end gap with either sign) */
      for (int sweep = 0; sweep < 200; sweep++) {
        double worst = 0.0;
        for (int k = 0; k < nviol; k++) {
          Contact *c = &w->vc[k];
          double gk = c->gap0 + wdot(c, 0, w->gq) - c->gend;
          double nun = w->nu[k] - gk / c->G[0];
          if (!c->impact) {
            nun = fmax(0.0, nun);
          }
          add_column(w, c, 0, nun - w->nu[k], w->gq);
          w->nu[k] = nun;
          if (nun != 0.0 || gk < 0.0) {
            worst = fmax(worst, fabs(gk));
          }
        }
        if (worst <= 1e-3 * GAP_PROJECT) {
          break;
        }
      }
      for (int i = 0; i < nq; i++) {
        d->q[i] += w->gq[i];
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
        g = fmax(g, fabs(ri.g));
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
    const mbsShapePair *pr = &m->pair[c->pair];
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
  return MBS_OK;
}

static int record_cmp(const mbsContactRecord *x, const mbsContactRecord *y) {
  if (x->pair != y->pair) {
    return x->pair < y->pair ? -1 : 1;
  }
  return (x->feature > y->feature) - (x->feature < y->feature);
}

static int record_qsort_cmp(const void *a, const void *b) {
  return record_cmp(a, b);
}

/* the records: the step's contacts (w->stepr, nstep, sorted) merged into those since the
 * last clear (w->rec), their impulses summed; MBS_ERR_NOMEM when the storage could not grow */
static mbsStatus merge_records(MoreauWork *w, mbsError *err) {
  int need = w->nrec + w->nstep;
  if (need > w->reccap) {
    int cap = need > 2 * w->reccap ? need : 2 * w->reccap;
    mbsContactRecord *r = realloc(w->rec, (size_t)cap * sizeof(*r));
    if (r) {
      w->rec = r;
    }
    mbsContactRecord *o = realloc(w->old, (size_t)cap * sizeof(*o));
    if (o) {
      w->old = o;
    }
    int *nw = realloc(w->now, (size_t)cap * sizeof(*nw));
    if (nw) {
      w->now = nw;
    }
    if (!r || !o || !nw) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                           "out of memory for the contact records (%d)", cap);
    }
    w->reccap = cap;
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
  memcpy(w->prev, w->c, (size_t)nc * sizeof(Contact));
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
    r->status = c->status;
  }
  if (w->npen > 0) {
    qsort(w->stepr, (size_t)w->nstep, sizeof(*w->stepr), record_qsort_cmp);
  }
  return merge_records(w, err);
}

static mbsStatus step_explicit(const mbsModel *m, mbsData *d, double dt, mbsError *err);

static mbsStatus step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  MoreauWork *w = d->integrator_work;
  mbsImplicitWork *b = &w->base;
  int nq = m->nq;
  double t0 = d->t;
  mbsSchemeWeights s;
  if (m->moreau_variant == MBS_MOREAU_EXPLICIT) {
    return step_explicit(m, d, dt, err);
  }
  mbsStatus st = setup_components(m, d, w, err);
  if (st != MBS_OK) {
    return st;
  }
  prepare(m, d, dt, &s);
  w->dissip_impact = w->dissip_friction = w->dissip_num = 0.0;
  w->xused = 0;
  char why[1200];
  why[0] = '\0';
  /* contacts at q0: the points predicted to close within half a step */
  int nc = 0;
  if (m->npair > 0) {
    nc = gather(m, w, b->q_prev, b->v_prev, b->v_prev, dt);
    if (nc < 0) {
      snprintf(why, sizeof(why), "more than %d contact points at once (the contact storage's bound)",
               w->cap);
      return mbs_implicit_fail(m, d, b, MBS_ERR_SOLVER, why, t0, dt, err);
    }
    int keep = 0;
    for (int k = 0; k < nc; k++) {
      Contact *c = &w->c[k];
      /* candidates: closing within the step at twice the speed and with gravity's help; the
       * step's first solution decides (below) */
      if (c->gap0 + 2.0 * dt * fmin(c->gN0, 0.0) - dt * dt * vnorm(m->gravity) > GAP_ACTIVE) {
        continue;
      }
      /* warm start from the last step's contact with the same identity */
      Contact *hit = bsearch(c, w->prev, (size_t)w->nprev, sizeof(Contact), contact_cmp);
      if (hit) {
        memcpy(c->L, hit->L, sizeof(c->L));
      }
      if (keep != k) {
        w->c[keep] = *c;
      }
      keep++;
    }
    nc = keep;
  }
  w->nc = nc;
  /* the contact frames at the step's evaluation point, predicted as q0 + theta dt u0: the
   * material points that touch there carry the impulses (em: a rolling body's contact does
   * no work) */
  if (nc > 0) {
    refresh_geometry(m, w, dt);
  }
  StepCtx ctx = {m, d, w, &s, dt, t0};
  mbsNewtonProblem p = {m->nq, m->ncon, &ctx, ctx_assemble, ctx_scales, ctx_apply, ctx_reset, NULL};
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
  if (st == MBS_OK && nc > 0) {
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
    for (int k = 0; k < nc && st == MBS_OK; k++) {
      Contact *c = &w->c[k];
      double own = c->G[0] * c->L[0] + c->G[1] * c->L[1] + c->G[2] * c->L[2];
      double g1 = wdot(c, 0, w->u) - own; /* its end velocity without its own impulse */
      double a = (g1 - c->gN0) / dt;
      /* a new point (open at the step's start, no warm start) whose gap the step does not
       * close stays out (no impulse, no law). A closed point stays in whatever the
       * prediction says: the end velocity of the material point that touches at the
       * evaluation point is a poor predictor for a rolling body (that point turns away from
       * the surface, by omega^2 r dt / 2), and the law lets a closed point open */
      double gpred = c->gap0 + dt * ((1.0 - w->theta) * c->gN0 + w->theta * g1);
      if (c->gap0 > GAP_ACTIVE && gpred > GAP_ACTIVE && c->L[0] == 0.0 && c->L[1] == 0.0 &&
          c->L[2] == 0.0) {
        continue;
      }
      c->target = 0.0;
      c->impact = 0;
      if (c->gN0 < 0.0) {
        /* the time it closes: g0 + gN0 tau + a tau^2 / 2 = 0, its first root */
        double tau = 0.0;
        if (c->gap0 > 0.0) {
          double disc = c->gN0 * c->gN0 - 2.0 * a * c->gap0;
          tau = disc >= 0.0 && a != 0.0 ? (-c->gN0 - sqrt(disc)) / a : c->gap0 / -c->gN0;
          tau = tau > 0.0 ? fmin(tau, dt) : fmin(c->gap0 / -c->gN0, dt);
        }
        double gminus = c->gN0 + a * tau;
        /* approaching faster than one step of its acceleration or of gravity: an impact (a
         * is only an estimate: W is at the step's evaluation point, gN0 at its start) */
        if (gminus < -(fmax(fabs(a), gnorm) * dt + 1e-12)) {
          double vplus = -c->e * gminus, rest = dt - tau;
          c->target = fmax(0.0, vplus + a * rest);
          c->impact = 1;
          c->gend = c->target > 0.0 ? fmax(0.0, vplus * rest + 0.5 * a * rest * rest) : 0.0;
        }
      }
      if (kept != k) {
        w->c[kept] = *c;
      }
      kept++;
    }
    nc = w->nc = kept;
    set_targets(w, b->v_prev);
    /* the velocity scale of the contact problem */
    double vscale = contact_vscale(m, w, b->v_prev, dt);
    for (outer = 1; st == MBS_OK && outer <= CONTACT_OUTER; outer++) {
      end_velocity(m, w, dt, w->u);
      st = getenv("NORV") ? MBS_OK : rigid_velocity(m, d, w, t0 + dt, err);
      if (st != MBS_OK) {
        snprintf(why, sizeof(why), "%s", err->msg);
        break;
      }
      /* the prox residual (with the r of the last Delassus blocks) first: the step's
       * Newton matrix is factored afresh for J^-1 W only when the impulses must change */
      double res0 = prox_residual(w, w->u);
      if (getenv("CSTAT")) fprintf(stderr, "OUTER %d res0=%.3e newton_done=%d\n", outer, res0 / vscale, newton_done);
      if (res0 <= m->contact_tolerance * vscale && !newton_done) {
        /* the impulses hold at the linear model's point: the step's equations with them to
         * the Newton tolerance, and the check again */
        st = mbs_newton_solve(m, d, &p, 0, why, sizeof(why), err);
        newton_done = 1;
        continue;
      }
      if (res0 <= m->contact_tolerance * vscale) {
        cres = res0 / vscale;
        break;
      }
      if (outer > 1) {
        st = contact_matrices(d, w, err);
        if (st != MBS_OK) {
          snprintf(why, sizeof(why), "%s", err->msg);
          break;
        }
      }
      memcpy(w->du, w->u, (size_t)nq * sizeof(double));
      int sw = contact_problem(m, w, vscale, &cres);
      if (sw < 0) {
        unconverged(why, sizeof(why), m, nc, cres, vscale);
        st = MBS_ERR_SOLVER;
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
      st = mbs_newton_solve(m, d, &p, 0, why, sizeof(why), err);
      newton_done = 1;
    }
    if (st == MBS_OK && outer > CONTACT_OUTER) {
      snprintf(why, sizeof(why),
               "the contact impulses and the step did not agree after %d alternations (prox "
               "residual %.3e)",
               CONTACT_OUTER, cres);
      st = MBS_ERR_SOLVER;
    }
  }
  if (st != MBS_OK) {
    return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
  }
  if (getenv("CSTAT")) fprintf(stderr, "STEP nc=%d outer=%d\n", nc, outer);
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
    double Tdu, Vq, pw, rw, V0, V1;
    for (int i = 0; i < nq; i++) {
      w->du[i] = d->v[i] - b->v_prev[i];
    }
    mbs_energy(m, d->q, w->du, &Tdu, &V1);
    mbs_energy(m, b->q_prev, w->du, &Tdu, &V0);
    mbs_assemble_theta_work(m, d, b, &s, dt, &pw, &rw);
    w->dissip_num = (w->theta - 0.5) * (2.0 * Tdu - ldg) + (pw - (V1 - V0)) + rw;
    (void)Vq;
  }
  w->dissip_impact = -work_n;
  w->dissip_friction = -work_t;
  mbs_assemble_work(m, d, b, &s, b->qm, b->vm, t0 + s.tf, t0 + s.alpha * dt, b->mu, 1.0 / (dt * dt),
                    1.0, &d->external_work, &d->dissipated);
  /* the velocities onto the constraints at q1: em's end velocity 2 Delta q / dt - u0 meets
   * G(q1) u1 = 0 only to O(dt^2 omega^2) and keeps the rest alternating in sign from step to
   * step (after a box lands on an edge, 1.6 mm/s at its corners, forever); the kinetic
   * energy it takes is numerical damping */
  if (m->ncon > 0) {
    double T1, T1p, Vd;
    mbs_energy(m, d->q, d->v, &T1, &Vd);
    st = project_velocity(m, d, w, d->q, d->v, t0 + dt, err);
    if (st != MBS_OK) {
      snprintf(why, sizeof(why), "%s", err->msg);
      return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
    }
    mbs_energy(m, d->q, d->v, &T1p, &Vd);
    w->dissip_num += T1 - T1p;
  }
  if (m->npair > 0) {
    st = project_positions(m, d, w, t0 + dt, err);
    if (st != MBS_OK) {
      snprintf(why, sizeof(why), "the position projection failed: %s", err->msg);
      return mbs_implicit_fail(m, d, b, st, why, t0, dt, err);
    }
  }
  st = finish_step(m, d, w, t0, dt, nc, sweeps, cres, err);
  (void)nq;
  return st;
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
  w->xused = 0;
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
  if (m->npair > 0) {
    nc = gather(m, w, d->q, NULL, b->v_prev, dt);
    if (nc < 0) {
      snprintf(why, sizeof(why), "more than %d contact points at once (the contact storage's bound)",
               w->cap);
      return mbs_implicit_fail(m, d, b, MBS_ERR_SOLVER, why, t0, dt, err);
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
      w->c[keep++] = *c;
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
      sweeps = contact_problem(m, w, vscale, &cres);
      if (sweeps < 0) {
        unconverged(why, sizeof(why), m, nc, cres, vscale);
        st = MBS_ERR_SOLVER;
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
  if (m->npair > 0) {
    st = project_positions(m, d, w, t1, err);
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

static void interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v) {
  const MoreauWork *w = d->integrator_work;
  mbs_implicit_interpolate(m, d, &w->base, t, q, v);
}

static mbsStatus import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                        char *missing, size_t nmissing, mbsError *err) {
  (void)missing;
  (void)nmissing;
  (void)err;
  MoreauWork *w = d->integrator_work;
  mbs_implicit_import(m, d, &w->base, in, n);
  return MBS_OK;
}

const mbsIntegratorTable mbs_integrator_moreau = {
    .name = "moreau",
    .init = init,
    .start = NULL,
    .prepare = prepare,
    .step = step,
    .interpolate = interpolate,
    .state_export = mbs_implicit_export,
    .state_import = import,
    .free = work_free,
    .contacts = contacts,
    .contacts_clear = contacts_clear,
};
