/* spacetime.c: continuous Galerkin in time, solved block by block (seed 003 sec. 3-4; the
 * Petrov-Galerkin form of Livens' principle as in Betsch & Steinmann's energy-conserving time
 * finite elements).
 *
 * On a temporal element [t_e, t_e + h], tau = (t - t_e)/h in [0, 1], positions q and scaled
 * velocities w = h v are Lagrange polynomials of degree k (1 or 2) through equidistant
 * temporal nodes; both are continuous across elements (the independent velocity field of
 * Livens' principle; the momentum is M v). The multipliers mu = h^2 lambda are polynomials of
 * degree k - 1 per element (discontinuous; Lagrange in tau = 0 and 1 for k = 2). With test
 * functions psi_i of degree k - 1 (the same space as mu), i = 1..k:
 *   balance   int psi_i [M w' + h^2 (grad V(q) - F(q, w/h, t)) + G(q)^T mu] dtau = 0
 *   kinematic int psi_i [q' - w] dtau = 0
 *   rows      int psi_i (d/dtau) g(q(tau), t) dtau = 0, with g = 0 at the element's start:
 *             psi_i(1) g(q_k) - int psi_i' g dtau = 0
 * (' = d/dtau), integrated by Gauss quadrature with 1 (k = 1) or 3 (k = 2) points (exact for
 * quadratic potentials and rows; k = 1 is then the implicit midpoint rule). With psi = dq/dtau-like tests the constraint forces do no work
 * (int mu . dg/dtau = 0 for mu in the test space): energy is conserved for conservative
 * systems with at most quadratic potentials and constraints, and the rows hold at every
 * element's end.
 *
 * A block of N elements is solved one element after the other: no equation of an element
 * involves a later one (the block's Newton matrix is block lower triangular by elements), so
 * solving element e with the elements before it fixed is the block's solution, at N times
 * one element's cost and memory (the block's whole system, factored at once, cost 3-8 times
 * as much per element and 1.2 GB at 1000 links and 10 elements). Each element is one Newton
 * solve on the solver-owned staged system of one element: its unknown temporal nodes
 * n = 1..k give two stages each, A = (q_n, mu) with mu the multiplier
 * value of the element that node closes or lies in, and B = (w_n, unused: identity). The
 * equations of test function i go to the rows of its node's stages so that the diagonal
 * carries the large entries (the sparse LU then pivots on it and keeps the band's fill):
 * A's rows the kinematic equation (q) and the rows (mu), B's the balance (M w).
 * A block's end values start the next block. A step of the run either interpolates inside
 * the solved block (dense output from the polynomials) or solves the block that starts
 * there, with elements of the step's size: a failed block is thus retried with half the
 * elements by the step control (advance.c). The predictor is the cubic through the previous
 * block's start and end states, continued, and for the block's later elements the cubic
 * through the element before's; the multipliers (degree 2) continue the line of the element
 * before. Under error control (solver.tolerance) every step is a
 * block of N elements of dt / N, its predictor the controller's history, and the records
 * between steps the cubic Hermite of the element ends (advance.c estimates the error of the
 * ends, of order 2k). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "solver/integrator.h"
#include "solver/system.h"
#include "util/arena.h"

#define ST_MAXK 2
#define ST_MAXG 3

typedef struct {
  int k, ne, nnode; /* degree, elements per block, nodes per block (ne k + 1) */
  int e0;           /* the element the system holds now (solve_block's window) */
  int ng;           /* Gauss points */
  double gx[ST_MAXG], gw[ST_MAXG];
  /* basis values at the Gauss points: phi[g][b], dphi[g][b] (d/dtau), psi[g][i], dpsi */
  double phi[ST_MAXG][ST_MAXK + 1], dphi[ST_MAXG][ST_MAXK + 1];
  double psi[ST_MAXG][ST_MAXK], dpsi[ST_MAXG][ST_MAXK];
  double A[ST_MAXK][ST_MAXK + 1], B[ST_MAXK][ST_MAXK + 1]; /* int psi_i phi_b', psi_i phi_b */
  double psi1[ST_MAXK];                                    /* psi_i(1) */

  mbsSystem *sys;            /* the system of one element (the window e0) */
  double *res, *dx, *jac;    /* its vectors */
  int *diag;                 /* (nblock x nsp) slot of each unknown's diagonal per block */
  int blk[2 * ST_MAXK][2 * ST_MAXK]; /* the block of (row stage, column stage), -1 if absent
                                        (looked up once: the assembly asks 10^5 times an
                                        element) */
  double *Q, *W, *MU;        /* (nnode nq), (nnode nq), (ne k ncon): the block's iterate, Q as
                                increments from qs (no round-off of O(1) coordinates in
                                the kinematic rows) */
  double *qs, *qe;           /* (nq) the block's start; scratch */
  double *Q0, *W0, *MU0;     /* the predictor */
  double *Wext, *Wdis;       /* (ne + 1) work and dissipation since the block's start */
  double *Z, *Z0;            /* (nnode ncon) the unused unknowns of the B stages (zero) */
  double *qg, *vg;           /* (ng nq) state at the Gauss points of one element */
  double *mug;               /* (ng ncon) */
  double *pt, *pg;           /* (nq) scratch */
  double t0, h;              /* the solved block: start, element length */
  int valid;                 /* a block is solved */
  double ext0, dis0;         /* d's work and dissipation at the block's start */
  double hterm;
  double scale;              /* the last assembly's scale of the balance terms (st_split) */
  int sc_valid;              /* sc_qn, sc_inertia are st_scales' of the iterate now (the
                                driver asks 4-5 times an iteration; st_apply, the resets and
                                a new window invalidate them) */
  double sc_qn, sc_inertia;
  const mbsModel *m;
  mbsData *d;
  double *act;  /* (ne x 2) the solved block's int (T + V) dt, int (T - V) dt per element */
  int act_next; /* its first element not yet given to d->action_sink */
  long nsolved; /* blocks solved by this run */
  int pred_cubic; /* the block's predictor continues the previous block (else: constant v) */
  int repivot_next; /* a state was imported (the grid's step end, a restart, a step taken
                       back): under error control the next block's first factorization
                       pivots afresh, so a restarted run repeats the pivots, and the bits */
} StWork;

/* ---- the temporal basis ---- */

static double lag(int k, int b, double x, double *dx) {
  double nodes[ST_MAXK + 1];
  for (int i = 0; i <= k; i++) {
    nodes[i] = (double)i / k;
  }
  double v = 1.0, dv = 0.0;
  for (int i = 0; i <= k; i++) {
    if (i == b) {
      continue;
    }
    double f = (x - nodes[i]) / (nodes[b] - nodes[i]), df = 1.0 / (nodes[b] - nodes[i]);
    dv = dv * f + v * df;
    v *= f;
  }
  if (dx) {
    *dx = dv;
  }
  return v;
}

/* test functions (and mu's shape): k = 1: 1; k = 2: 1 - tau, tau */
static double test_fn(int k, int i, double x, double *dx) {
  if (k == 1) {
    *dx = 0.0;
    return 1.0;
  }
  *dx = i == 0 ? -1.0 : 1.0;
  return i == 0 ? 1.0 - x : x;
}

static void basis_init(StWork *w, int k) {
  static const double x3[3] = {-0.7745966692414834, 0.0, 0.7745966692414834};
  static const double w3[3] = {0.5555555555555556, 0.8888888888888888, 0.5555555555555556};
  w->k = k;
  /* k = 1: the midpoint (exact for the linear integrands of quadratic potentials and rows;
   * the scheme is then the implicit midpoint rule, and a torque's contravariant director
   * forces at one point give exactly its impulse); k = 2: 3 points, exact to degree 5 (the
   * rows' int psi' g(q) and G(q)^T mu psi are of degree 4) */
  w->ng = k == 1 ? 1 : 3;
  for (int g = 0; g < w->ng; g++) {
    w->gx[g] = k == 1 ? 0.5 : 0.5 * (1.0 + x3[g]);
    w->gw[g] = k == 1 ? 1.0 : 0.5 * w3[g];
    for (int b = 0; b <= k; b++) {
      w->phi[g][b] = lag(k, b, w->gx[g], &w->dphi[g][b]);
    }
    for (int i = 0; i < k; i++) {
      w->psi[g][i] = test_fn(k, i, w->gx[g], &w->dpsi[g][i]);
    }
  }
  for (int i = 0; i < k; i++) {
    double dd;
    w->psi1[i] = test_fn(k, i, 1.0, &dd);
    for (int b = 0; b <= k; b++) {
      w->A[i][b] = w->B[i][b] = 0.0;
      for (int g = 0; g < w->ng; g++) {
        w->A[i][b] += w->gw[g] * w->psi[g][i] * w->dphi[g][b];
        w->B[i][b] += w->gw[g] * w->psi[g][i] * w->phi[g][b];
      }
    }
  }
}

/* stage of the system's node n >= 1 (node e0 k + n of the block): A (q, mu) or B (w) */
static int stage_a(int n) {
  return 2 * (n - 1);
}
static int stage_b(int n) {
  return 2 * (n - 1) + 1;
}

/* the block's nodes of the system (window e0): n0 (known) .. n0 + k */
static int win_n0(const StWork *w) {
  return w->e0 * w->k;
}

/* ---- workspace ---- */

static void work_free(void *work) {
  StWork *w = work;
  if (!w) {
    return;
  }
  mbs_system_destroy(w->sys);
  void *p[] = {w->res, w->dx, w->jac, w->diag, w->Q,  w->W,  w->MU, w->Q0, w->W0,
               w->MU0, w->Z, w->Z0, w->Wext, w->Wdis, w->qg, w->vg, w->mug, w->pt, w->pg, w->qs, w->qe};
  for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
    free(p[i]);
  }
  free(w->act);
  free(w);
}

static mbsStatus init(const mbsModel *m, void **work, mbsError *err) {
  int k = m->spacetime_degree, ne = m->spacetime_elements;
  if (k < 1 || k > ST_MAXK || ne < 1) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "spacetime: degree %d and %d elements per block: the degree must be 1 "
                         "or 2 and the elements at least 1",
                         k, ne);
  }
  StWork *w = calloc(1, sizeof(*w));
  if (!w) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  basis_init(w, k);
  w->ne = ne;
  w->nnode = ne * k + 1;
  /* the system holds one element (its k unknown nodes): no row of a node involves a later
   * element, so the block's equations are block lower triangular by elements and
   * solve_block solves them one element after the other, on this one system (the block's
   * memory is linear in its elements, its cost that many single elements') */
  int ns = 2 * k, np = 0;
  /* (row stage, column stage, parts) of the blocks: 4 per pair of nodes of the element, and
   * the unused unknowns' identity */
  size_t cap = (size_t)k * (4 * (size_t)(k + 1) + 1);
  int *bs = malloc(cap * sizeof(int)), *bs2 = malloc(cap * sizeof(int));
  int *parts = malloc(cap * sizeof(int));
  if (!bs || !bs2 || !parts) {
    free(bs);
    free(bs2);
    free(parts);
    free(w);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
#define BLOCK(r, c, p) (bs[np] = (r), bs2[np] = (c), parts[np++] = (p))
  /* the equations of element e's test function i (at node e k + i + 1) involve the
   * unknowns of the element's nodes e k + b, and only through these terms: A rows
   * (kinematic, constraint rows) the coordinates' diagonal of q and w and G; B rows
   * (balance) the mass on w, the Hessians and G^T on q and mu, the forces' d/dv on w, and the
   * identity on their unused unknowns. The element's first node is known (the block's start
   * or the element before's end) */
  for (int e = 0; e < 1; e++) {
    for (int i = 0; i < k; i++) {
      int ni = e * k + i + 1;
      for (int b = 0; b <= k; b++) {
        int nb = e * k + b;
        if (nb < 1) {
          continue;
        }
        BLOCK(stage_a(ni), stage_a(nb), MBS_PART_DIAG | MBS_PART_G);
        BLOCK(stage_a(ni), stage_b(nb), MBS_PART_DIAG);
        BLOCK(stage_b(ni), stage_a(nb), MBS_PART_HESS | MBS_PART_GT);
        BLOCK(stage_b(ni), stage_b(nb), MBS_PART_MASS | MBS_PART_FORCE_V);
      }
      BLOCK(stage_b(ni), stage_b(ni), MBS_PART_CON_DIAG);
    }
  }
#undef BLOCK
  w->sys = mbs_system_create_parts(m, ns, np, bs, bs2, parts, err);
  free(bs);
  free(bs2);
  free(parts);
  if (!w->sys) {
    free(w);
    return MBS_ERR_NOMEM;
  }
  /* COLAMD within the block triangular form: on the 200-link chain's element 6 % fewer
   * flops than AMD (7.4 M against 7.9 M, L + U 435,000 against 443,000 entries) */
  mbs_linsolve_set_ordering(w->sys->ls, 1);
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1), nc = (size_t)(m->ncon > 0 ? m->ncon : 1);
  size_t nn = (size_t)w->nnode, nsp = (size_t)w->sys->nsp;
  w->res = calloc((size_t)w->sys->n_max, sizeof(double));
  w->dx = calloc((size_t)w->sys->n_max, sizeof(double));
  w->jac = calloc((size_t)w->sys->nnz_max, sizeof(double));
  w->diag = malloc((size_t)w->sys->nblock * nsp * sizeof(int));
  w->Q = calloc(nn * nq, sizeof(double));
  w->W = calloc(nn * nq, sizeof(double));
  w->MU = calloc((size_t)(ne * k) * nc, sizeof(double));
  w->Q0 = calloc(nn * nq, sizeof(double));
  w->W0 = calloc(nn * nq, sizeof(double));
  w->MU0 = calloc((size_t)(ne * k) * nc, sizeof(double));
  w->Z = calloc(nn * nc, sizeof(double));
  w->Z0 = calloc(nn * nc, sizeof(double));
  w->Wext = calloc((size_t)ne + 1, sizeof(double));
  w->Wdis = calloc((size_t)ne + 1, sizeof(double));
  w->qg = calloc((size_t)w->ng * nq, sizeof(double));
  w->vg = calloc((size_t)w->ng * nq, sizeof(double));
  w->mug = calloc((size_t)w->ng * nc, sizeof(double));
  w->pt = calloc(nq, sizeof(double));
  w->pg = calloc(nq, sizeof(double));
  w->qs = calloc(nq, sizeof(double));
  w->qe = calloc(nq, sizeof(double));
  w->act = calloc(2 * (size_t)ne, sizeof(double));
  if (!w->res || !w->dx || !w->jac || !w->diag || !w->Q || !w->W || !w->MU || !w->Q0 || !w->W0 ||
      !w->MU0 || !w->Z || !w->Z0 || !w->Wext || !w->Wdis || !w->qg || !w->vg || !w->mug || !w->pt || !w->pg || !w->qs || !w->qe ||
      !w->act) {
    work_free(w);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  for (int s = 0; s < ns; s++) {
    for (int s2 = 0; s2 < ns; s2++) {
      w->blk[s][s2] = mbs_system_block(w->sys, s, s2);
    }
    for (int b = w->sys->block_start[s]; b < w->sys->block_start[s + 1]; b++) {
      int s2 = w->sys->block_stage[b];
      for (int i = 0; i < (int)nsp; i++) {
        w->diag[(size_t)b * nsp + (size_t)i] = mbs_system_slot(
            w->sys, mbs_system_index(w->sys, s, i), mbs_system_index(w->sys, s2, i));
      }
    }
  }
  *work = w;
  return MBS_OK;
}

/* ---- assembly ---- */

/* max(a, b) for an accumulator a that is never NaN (fmax's result; inlined, where fmax is a
 * call in the assembly's inner loops) */
static inline double larger(double a, double b) {
  return b > a ? b : a;
}

static void jadd(double *jac, int slot, double v) {
  if (slot >= 0) {
    jac[slot] += v;
  }
}

/* block maps of (row stage, column stage) */
static const mbsSystemMaps *bmaps(const StWork *w, int s, int s2) {
  int b = w->blk[s][s2];
  return b < 0 ? NULL : &w->sys->maps[b];
}

/* the diagonal's slots of block (s, s') (nsp), NULL if the block is absent */
static const int *bdiag(const StWork *w, int s, int s2) {
  int b = w->blk[s][s2];
  return b < 0 ? NULL : w->diag + (size_t)b * (size_t)w->sys->nsp;
}

/* the state of element e at the Gauss points (q, v = w/h, mu) */
static void element_state(StWork *w, int e) {
  const mbsModel *m = w->m;
  int nq = m->nq, k = w->k;
  for (int g = 0; g < w->ng; g++) {
    double *q = w->qg + (size_t)g * nq, *v = w->vg + (size_t)g * nq;
    double *mu = w->mug + (size_t)g * m->ncon;
    /* the sums node by node over contiguous rows (the compiler vectorises them), in the
     * order of the nodes: sum_j phi_j Q_j, then q = qs + that */
    memset(q, 0, (size_t)nq * sizeof(double));
    memset(v, 0, (size_t)nq * sizeof(double));
    for (int j = 0; j <= k; j++) {
      const double *Qj = w->Q + (size_t)(e * k + j) * nq, *Wj = w->W + (size_t)(e * k + j) * nq;
      double p = w->phi[g][j];
      for (int i = 0; i < nq; i++) {
        q[i] += p * Qj[i];
        v[i] += p * Wj[i];
      }
    }
    for (int i = 0; i < nq; i++) {
      q[i] = w->qs[i] + q[i];
      v[i] = v[i] / w->h;
    }
    memset(mu, 0, (size_t)m->ncon * sizeof(double));
    for (int j = 0; j < k; j++) {
      const double *Mj = w->MU + (size_t)(e * k + j) * m->ncon;
      double p = w->psi[g][j];
      for (int r = 0; r < m->ncon; r++) {
        mu[r] += p * Mj[r];
      }
    }
  }
}

/* residual (and matrix) of the whole block; returns the scale of the balance terms */
static void st_scales(void *ctx, double *qn, double *inertia);

static double st_assemble(void *ctx, int with_jac) {
  StWork *w = ctx;
  const mbsModel *m = w->m;
  mbsData *d = w->d;
  const mbsSystem *sys = w->sys;
  int nq = m->nq, nc = m->ncon, nsp = sys->nsp, k = w->k;
  double h = w->h, h2 = h * h, scale = 0.0, hterm = 0.0;
  memset(w->res, 0, (size_t)sys->n * sizeof(double));
  if (with_jac) {
    memset(w->jac, 0, (size_t)sys->nnz * sizeof(double));
  }
  size_t mark = mbs_arena_mark(d->arena);
  size_t bsz = (size_t)sys->eblock * sizeof(double);
  double *H = mbs_arena_alloc(d->arena, bsz), *Fq = mbs_arena_alloc(d->arena, bsz);
  double *Fv = mbs_arena_alloc(d->arena, bsz), *Ge = mbs_arena_alloc(d->arena, bsz);
  double *gv = mbs_arena_alloc(d->arena, (size_t)sys->evec * sizeof(double));
  double grad[3 * MBS_CON_MAXNODE];
  for (int e = w->e0; e < w->e0 + 1; e++) {
    element_state(w, e);
    double te = w->t0 + e * h;
    /* the element's nodes and stages (its first node is known: stage -1) */
    int sa[ST_MAXK + 1], sbv[ST_MAXK + 1];
    for (int b = 0; b <= k; b++) {
      int n = e * k + b - win_n0(w);
      sa[b] = n >= 1 ? stage_a(n) : -1;
      sbv[b] = n >= 1 ? stage_b(n) : -1;
    }
    for (int i = 0; i < k; i++) {
      int si = sa[i + 1], sk = sbv[i + 1]; /* A: kinematic + rows, B: balance + unused */
      double *rb = w->res + (size_t)sk * nsp, *rk = w->res + (size_t)si * nsp;
      /* inertia: sum_b A_ib M w_b; kinematic: sum_b A_ib q_b - B_ib w_b */
      for (int b = 0; b <= k; b++) {
        const double *wb = w->W + (size_t)(e * k + b) * nq, *qb = w->Q + (size_t)(e * k + b) * nq;
        const mbsSystemMaps *mpw = with_jac && sbv[b] >= 0 ? bmaps(w, sk, sbv[b]) : NULL;
        for (int c = 0; c < m->nmass; c++) {
          int a = m->mass_a[c], bb = m->mass_b[c];
          double val = w->A[i][b] * m->mass_val[c];
          for (int j = 0; j < 3; j++) {
            rb[3 * a + j] += val * wb[3 * bb + j];
            if (a != bb) {
              rb[3 * bb + j] += val * wb[3 * a + j];
            }
          }
          if (mpw) {
            const mbsSystemMaps *mp = mpw;
            for (int j = 0; j < 3; j++) {
              jadd(w->jac, mp->mass_map[6 * c + j], val);
              jadd(w->jac, mp->mass_map[6 * c + 3 + j], val);
            }
          }
        }
        for (int j = 0; j < nq; j++) {
          rk[j] += w->A[i][b] * qb[j] - w->B[i][b] * wb[j];
        }
        if (with_jac) {
          const int *dq = sa[b] >= 0 ? bdiag(w, si, sa[b]) : NULL;
          const int *dw = sbv[b] >= 0 ? bdiag(w, si, sbv[b]) : NULL;
          for (int j = 0; j < nq; j++) {
            if (dq) {
              jadd(w->jac, dq[j], w->A[i][b]);
            }
            if (dw) {
              jadd(w->jac, dw[j], -w->B[i][b]);
            }
          }
        }
      }
      scale = larger(scale, mbs_norm_inf(rb, nq));
      /* the unused rows of stage B: identity on their (zero) unknowns */
      const int *dz = with_jac ? bdiag(w, sk, sk) : NULL;
      for (int r = 0; r < nc; r++) {
        rb[nq + r] = w->Z[(size_t)(e * k + i + 1) * nc + r];
        if (dz) {
          jadd(w->jac, dz[nq + r], 1.0);
        }
      }
      /* the end value of the rows, psi_i(1) g(q_k) */
      if (w->psi1[i] != 0.0) {
        double *qk = w->qe;
        for (int j = 0; j < nq; j++) {
          qk[j] = w->qs[j] + w->Q[(size_t)(e * k + k) * nq + j];
        }
        double tk = te + h;
        for (int row = 0; row < m->nrow; row++) {
          const mbsConRow *c = &m->con[row];
          rk[nq + row] += w->psi1[i] * mbs_con_eval(c, qk, with_jac ? grad : NULL);
          if (with_jac) {
            const mbsSystemMaps *mp = bmaps(w, si, sa[k]);
            const int *gm = mp->con_gmap + sys->con_goff[row];
            for (int a = 0; a < c->nnode; a++) {
              for (int j = 0; j < 3; j++) {
                jadd(w->jac, gm[6 * a + j], w->psi1[i] * grad[3 * a + j]);
              }
            }
          }
        }
        for (int ie = 0; ie < m->nelem; ie++) {
          const mbsElem *el = &m->elem[ie];
          const mbsElementKindTable *kind = mbs_element_kind(el->kind);
          if (!kind->constraint) {
            continue;
          }
          kind->constraint(m, el, qk, tk, gv, with_jac ? Ge : NULL);
          for (int r = 0; r < el->ncon; r++) {
            rk[nq + el->con0 + r] += w->psi1[i] * gv[r];
            if (with_jac) {
              const int *gm = bmaps(w, si, sa[k])->elem_gmap + sys->elem_goff[ie];
              for (int j = 0; j < el->nq; j++) {
                jadd(w->jac, gm[(r * el->nq + j) * 2], w->psi1[i] * Ge[r * el->nq + j]);
              }
            }
          }
        }
      }
    }
    /* the quadrature terms */
    for (int g = 0; g < w->ng; g++) {
      const double *q = w->qg + (size_t)g * nq, *v = w->vg + (size_t)g * nq;
      const double *mu = w->mug + (size_t)g * nc;
      double tg = te + w->gx[g] * h, wg = w->gw[g];
      for (int ie = 0; ie < m->nelem; ie++) {
        const mbsElem *el = &m->elem[ie];
        const mbsElementKindTable *kind = mbs_element_kind(el->kind);
        int n = el->nq;
        if (kind->gradient) {
          /* a linear potential (gravity) has no Hessian: its blocks are not in the pattern
           * (system.c), and it adds nothing to hterm */
          int hess = with_jac && !kind->linear;
          if (hess) {
            memset(H, 0, (size_t)(n * n) * sizeof(double));
          }
          kind->gradient(m, el, q, gv, hess ? H : NULL);
          for (int i = 0; i < k; i++) {
            double *rb = w->res + (size_t)sbv[i + 1] * nsp, f = wg * w->psi[g][i] * h2;
            for (int j = 0; j < n; j++) {
              rb[el->qidx[j]] += f * gv[j];
              scale = larger(scale, fabs(f * gv[j]));
            }
            if (hess) {
              double hm = 0.0;
              for (int b = 0; b <= k; b++) {
                if (sa[b] < 0) {
                  continue;
                }
                const int *jm = bmaps(w, sbv[i + 1], sa[b])->elem_jmap + sys->elem_joff[ie];
                for (int j = 0; j < n * n; j++) {
                  jadd(w->jac, jm[j], f * w->phi[g][b] * H[j]);
                  hm = larger(hm, fabs(H[j]));
                }
              }
              double qe = 0.0;
              for (int j = 0; j < n; j++) {
                qe = larger(qe, fabs(q[el->qidx[j]]));
              }
              hterm = larger(hterm, h2 * hm * qe);
            }
          }
        }
        if (kind->force) {
          memset(Fq, 0, (size_t)(n * n) * sizeof(double));
          memset(Fv, 0, (size_t)(n * n) * sizeof(double));
          kind->force(m, el, q, v, tg, gv, with_jac ? Fq : NULL, with_jac ? Fv : NULL);
          for (int i = 0; i < k; i++) {
            double *rb = w->res + (size_t)sbv[i + 1] * nsp, f = wg * w->psi[g][i] * h2;
            for (int j = 0; j < n; j++) {
              rb[el->qidx[j]] -= f * gv[j];
              scale = larger(scale, fabs(f * gv[j]));
            }
            if (with_jac) {
              for (int b = 0; b <= k; b++) {
                if (sa[b] < 0) {
                  continue;
                }
                const int *ja = bmaps(w, sbv[i + 1], sa[b])->elem_jmap + sys->elem_joff[ie];
                const int *jb = bmaps(w, sbv[i + 1], sbv[b])->elem_jmap + sys->elem_joff[ie];
                for (int j = 0; j < n * n; j++) {
                  jadd(w->jac, ja[j], -f * w->phi[g][b] * Fq[j]);
                  jadd(w->jac, jb[j], -f * w->phi[g][b] * Fv[j] / h);
                }
              }
            }
          }
        }
        if (kind->constraint) {
          const double *mue = mu + el->con0;
          memset(H, 0, (size_t)(n * n) * sizeof(double));
          kind->constraint(m, el, q, tg, gv, Ge);
          if (with_jac && kind->constraint_hessian) {
            kind->constraint_hessian(m, el, q, tg, mue, H);
          }
          for (int i = 0; i < k; i++) {
            int si = sa[i + 1], sk = sbv[i + 1];
            double *rb = w->res + (size_t)sk * nsp, *rc = w->res + (size_t)si * nsp, f = wg * w->psi[g][i];
            double fr = -wg * w->dpsi[g][i];
            for (int j = 0; j < n; j++) {
              double t = 0.0;
              for (int r = 0; r < el->ncon; r++) {
                t += Ge[r * n + j] * mue[r];
              }
              rb[el->qidx[j]] += f * t;
              scale = larger(scale, fabs(f * t));
            }
            for (int r = 0; r < el->ncon; r++) {
              rc[nq + el->con0 + r] += fr * gv[r];
            }
            if (!with_jac) {
              continue;
            }
            for (int b = 0; b <= k; b++) {
              if (sa[b] < 0) {
                continue;
              }
              const int *jm = bmaps(w, sk, sa[b])->elem_jmap + sys->elem_joff[ie];
              const int *gm = bmaps(w, si, sa[b])->elem_gmap + sys->elem_goff[ie];
              for (int j = 0; j < n * n; j++) {
                jadd(w->jac, jm[j], f * w->phi[g][b] * H[j]);
              }
              for (int r = 0; r < el->ncon; r++) {
                for (int j = 0; j < n; j++) {
                  jadd(w->jac, gm[(r * n + j) * 2], fr * w->phi[g][b] * Ge[r * n + j]);
                }
              }
            }
            /* d/dmu_j: G^T psi_j */
            for (int jj = 0; jj < k; jj++) {
              const int *gm = bmaps(w, sk, sa[jj + 1])->elem_gmap + sys->elem_goff[ie];
              for (int r = 0; r < el->ncon; r++) {
                for (int j = 0; j < n; j++) {
                  jadd(w->jac, gm[(r * n + j) * 2 + 1], f * w->psi[g][jj] * Ge[r * n + j]);
                }
              }
            }
          }
        }
      }
      /* quadratic rows */
      if (!with_jac) {
        /* the residual alone: each row's gradient into the k balance stages at once (the
         * same sums in the same order as below) */
        double fm_f[ST_MAXK], fr_i[ST_MAXK];
        double *rb_i[ST_MAXK], *rc_i[ST_MAXK];
        for (int i = 0; i < k; i++) {
          fm_f[i] = wg * w->psi[g][i];
          fr_i[i] = -wg * w->dpsi[g][i];
          rb_i[i] = w->res + (size_t)sbv[i + 1] * nsp;
          rc_i[i] = w->res + (size_t)sa[i + 1] * nsp + nq;
        }
        for (int row = 0; row < m->nrow; row++) {
          const mbsConRow *c = &m->con[row];
          double gval = mbs_con_eval(c, q, grad), gmax = 0.0;
          for (int x = 0; x < 3 * c->nnode; x++) {
            gmax = larger(gmax, fabs(grad[x]));
          }
          double fm[ST_MAXK];
          for (int i = 0; i < k; i++) {
            fm[i] = fm_f[i] * mu[row];
            scale = larger(scale, fabs(fm[i]) * gmax);
            rc_i[i][row] += fr_i[i] * gval;
          }
          for (int a = 0; a < c->nnode; a++) {
            const double *ga = grad + 3 * a;
            for (int i = 0; i < k; i++) {
              double *ra = rb_i[i] + 3 * c->node[a];
              ra[0] += fm[i] * ga[0];
              ra[1] += fm[i] * ga[1];
              ra[2] += fm[i] * ga[2];
            }
          }
        }
        continue;
      }
      for (int row = 0; row < m->nrow; row++) {
        const mbsConRow *c = &m->con[row];
        double gval = mbs_con_eval(c, q, grad);
        /* the largest |f mu grad| of the row is |f mu| max |grad| (rounding is monotone and
         * symmetric): one pass over the gradient for the scale */
        double gmax = 0.0;
        for (int x = 0; x < 3 * c->nnode; x++) {
          gmax = larger(gmax, fabs(grad[x]));
        }
        for (int i = 0; i < k; i++) {
          int si = sa[i + 1], sk = sbv[i + 1];
          double *rb = w->res + (size_t)sk * nsp, *rc = w->res + (size_t)si * nsp, f = wg * w->psi[g][i];
          double fr = -wg * w->dpsi[g][i], fm = f * mu[row];
          for (int a = 0; a < c->nnode; a++) {
            double *ra = rb + 3 * c->node[a];
            const double *ga = grad + 3 * a;
            ra[0] += fm * ga[0];
            ra[1] += fm * ga[1];
            ra[2] += fm * ga[2];
          }
          scale = larger(scale, fabs(fm) * gmax);
          rc[nq + row] += fr * gval;
          if (!with_jac) {
            continue;
          }
          for (int b = 0; b <= k; b++) {
            if (sa[b] < 0) {
              continue;
            }
            const mbsSystemMaps *mp = bmaps(w, sk, sa[b]);
            const int *gm = bmaps(w, si, sa[b])->con_gmap + sys->con_goff[row];
            double fb = fr * w->phi[g][b], hb = f * w->phi[g][b] * mu[row];
            for (int a = 0; a < c->nnode; a++) {
              for (int j = 0; j < 3; j++) {
                jadd(w->jac, gm[6 * a + j], fb * grad[3 * a + j]);
              }
            }
            for (int p = sys->con_hstart[row]; p < sys->con_hstart[row + 1]; p++) {
              for (int j = 0; j < 3; j++) {
                jadd(w->jac, mp->con_hmap[3 * p + j], hb * sys->con_hcoef[p]);
              }
            }
          }
          for (int jj = 0; jj < k; jj++) {
            const int *gm = bmaps(w, sk, sa[jj + 1])->con_gmap + sys->con_goff[row];
            double fj = f * w->psi[g][jj];
            for (int a = 0; a < c->nnode; a++) {
              for (int j = 0; j < 3; j++) {
                jadd(w->jac, gm[6 * a + 3 + j], fj * grad[3 * a + j]);
              }
            }
          }
        }
      }
    }
  }
  mbs_arena_release(d->arena, mark);
  if (with_jac) {
    w->hterm = hterm;
  }
  /* the block's rows are interleaved (balance, rows, kinematic per stage), so the driver
   * tests them together (n2 = 0): the scale is floored where the constraint rows' round-off
   * (64 eps (1 + |q|)^2, newton.c's floor of constraint rows) is within tol of it */
  double qn;
  st_scales(w, &qn, NULL);
  double cfloor = 64.0 * DBL_EPSILON * (1.0 + qn) * (1.0 + qn) / m->newton_tolerance;
  w->scale = fmax(fmax(scale, w->hterm), cfloor);
  return w->scale;
}

static void st_scales(void *ctx, double *qn, double *inertia) {
  StWork *w = ctx;
  int nq = w->m->nq;
  if (!w->sc_valid) {
    /* the system's nodes (the element e0's, its known first node too) */
    const double *Qw = w->Q + (size_t)win_n0(w) * nq, *Ww = w->W + (size_t)win_n0(w) * nq;
    double dn = mbs_norm_inf(Qw, (w->k + 1) * nq);
    w->sc_qn = mbs_norm_inf(w->qs, nq) + dn;
    /* the inertia terms (M w) and the kinematic rows' (increments of q, w) */
    double mmax = 1.0, wn = mbs_norm_inf(Ww, (w->k + 1) * nq);
    for (int c = 0; c < w->m->nmass; c++) {
      mmax = fmax(mmax, fabs(w->m->mass_val[c]));
    }
    w->sc_inertia = fmax(mmax * wn, dn);
    w->sc_valid = 1;
  }
  *qn = w->sc_qn;
  if (inertia) {
    *inertia = w->sc_inertia;
  }
}

/* the max norms of the block's balance, kinematic and unused rows (rq) and of its
 * constraint rows (rg, the A stages' rows after nq), which newton.c follows apart: tested
 * together, the constraint rows' round-off, 64 eps (1 + |q|)^2, lies far above the balance
 * rows' floor, and the chord iteration ran on until its 12th iteration forced a
 * refactorization (13 iterations and 2 factorizations per block where 5 and 1 do) */
static void st_split(void *ctx, const double *res, double *rq, double *rg) {
  StWork *w = ctx;
  int nq = w->m->nq, nsp = w->sys->nsp;
  double a = 0.0, b = 0.0;
  for (int n = 1; n <= w->k; n++) {
    const double *ra = res + (size_t)stage_a(n) * nsp, *rb = res + (size_t)stage_b(n) * nsp;
    for (int i = 0; i < nsp; i++) {
      a = larger(a, fabs(rb[i]));
      if (i < nq) {
        a = larger(a, fabs(ra[i]));
      } else {
        b = larger(b, fabs(ra[i]));
      }
    }
  }
  /* residuals below the round-off the one-step schemes' reused factorizations stop at (4
   * eps of the balance terms, 4 eps (1 + |q|)^2 of the constraint rows: newton.c) count as
   * that round-off, so that the stall test fires on the iteration after reaching it, not
   * only once the noise below it stops falling by 4 */
  double qn, inertia;
  st_scales(w, &qn, &inertia);
  *rq = fmax(a, 4.0 * DBL_EPSILON * fmax(w->scale, inertia));
  *rg = fmax(b, 4.0 * DBL_EPSILON * (1.0 + qn) * (1.0 + qn));
}

static void st_apply(void *ctx, const double *dx) {
  StWork *w = ctx;
  w->sc_valid = 0;
  int nq = w->m->nq, nc = w->m->ncon, nsp = w->sys->nsp;
  for (int l = 1; l <= w->k; l++) {
    const double *xa = dx + (size_t)stage_a(l) * nsp, *xb = dx + (size_t)stage_b(l) * nsp;
    int n = win_n0(w) + l;
    for (int i = 0; i < nq; i++) {
      w->Q[(size_t)n * nq + i] -= xa[i];
      w->W[(size_t)n * nq + i] -= xb[i];
    }
    for (int r = 0; r < nc; r++) {
      w->MU[(size_t)(n - 1) * nc + r] -= xa[nq + r];
      w->Z[(size_t)n * nc + r] -= xb[nq + r];
    }
  }
}

/* the iterate of the block's nodes n0 + 1 .. n1 back to the predictor (the multipliers of
 * the elements they lie in or close) */
static void reset_nodes(StWork *w, int n0, int n1) {
  size_t nq = (size_t)w->m->nq, nc = (size_t)w->m->ncon, a = (size_t)n0 + 1;
  size_t c = (size_t)(n1 - n0);
  w->sc_valid = 0;
  memcpy(w->Q + a * nq, w->Q0 + a * nq, c * nq * sizeof(double));
  memcpy(w->W + a * nq, w->W0 + a * nq, c * nq * sizeof(double));
  memcpy(w->MU + (size_t)n0 * nc, w->MU0 + (size_t)n0 * nc, c * nc * sizeof(double));
  memcpy(w->Z + a * nc, w->Z0 + a * nc, c * nc * sizeof(double));
}

/* Newton's reset: the system's element back to its predictor (the elements solved before
 * it stay) */
static void st_reset(void *ctx) {
  StWork *w = ctx;
  reset_nodes(w, win_n0(w), win_n0(w) + w->k);
}

/* ---- the block ---- */

/* the whole block's iterate back to the predictor */
static void reset_all(StWork *w) {
  size_t nq = (size_t)w->m->nq, nc = (size_t)w->m->ncon;
  w->sc_valid = 0;
  memcpy(w->Q, w->Q0, (size_t)w->nnode * nq * sizeof(double));
  memcpy(w->W, w->W0, (size_t)w->nnode * nq * sizeof(double));
  memcpy(w->MU, w->MU0, (size_t)(w->ne * w->k) * nc * sizeof(double));
  memcpy(w->Z, w->Z0, (size_t)w->nnode * nc * sizeof(double));
}

mbsSystem *mbs_spacetime_begin(const mbsModel *m, mbsData *d, double h);

/* the work of the loads and constraint elements over element e (after a solve) */
static void element_work(StWork *w, int e, double *ext, double *dis) {
  const mbsModel *m = w->m;
  mbsData *d = w->d;
  int nq = m->nq, nc = m->ncon, k = w->k;
  size_t mark = mbs_arena_mark(d->arena);
  double *Ge = mbs_arena_alloc(d->arena, (size_t)w->sys->eblock * sizeof(double));
  double *f = mbs_arena_alloc(d->arena, (size_t)w->sys->evec * sizeof(double));
  element_state(w, e);
  *ext = *dis = 0.0;
  for (int g = 0; g < w->ng; g++) {
    const double *q = w->qg + (size_t)g * nq, *v = w->vg + (size_t)g * nq;
    double tg = w->t0 + (e + w->gx[g]) * w->h;
    /* q' at the point: w->pg */
    for (int i = 0; i < nq; i++) {
      double a = 0.0;
      for (int b = 0; b <= k; b++) {
        a += w->dphi[g][b] * w->Q[(size_t)(e * k + b) * nq + i];
      }
      w->pg[i] = a;
    }
    for (int ie = 0; ie < m->nelem; ie++) {
      const mbsElem *el = &m->elem[ie];
      const mbsElementKindTable *kind = mbs_element_kind(el->kind);
      if (kind->force) {
        kind->force(m, el, q, v, tg, f, NULL, NULL);
        double wk = 0.0;
        for (int i = 0; i < el->nq; i++) {
          wk += f[i] * w->pg[el->qidx[i]];
        }
        if (kind->dissipative) {
          *dis -= w->gw[g] * wk;
        } else {
          *ext += w->gw[g] * wk;
        }
      }
      if (kind->constraint) {
        kind->constraint(m, el, q, tg, f, Ge);
        for (int r = 0; r < el->ncon; r++) {
          double gdq = 0.0;
          for (int i = 0; i < el->nq; i++) {
            gdq += Ge[r * el->nq + i] * w->pg[el->qidx[i]];
          }
          *ext -= w->gw[g] * w->mug[(size_t)g * nc + el->con0 + r] / (w->h * w->h) * gdq;
        }
      }
    }
  }
  mbs_arena_release(d->arena, mark);
}

/* the predictor of a block from (q0, v0) at t0: the cubic through the previous block's start
 * and end values and velocities (Hermite), continued (its error over the next block is of
 * the block length's fourth power, where the previous quadratic Taylor polynomial's was of
 * the third: about half the Newton iterations per block of the double spherical pendulum),
 * or constant velocity for the first block. Under error control (d->control) with prev the
 * block continues the controller's history instead (advance.c: the polynomial through the
 * last step ends, about d->t, which a record carries) and its multipliers start from
 * d->lambda: the predictor then depends only on what a restart reads, and a restarted run
 * repeats the uninterrupted one bit for bit. */
static void predict_history(StWork *w, const double *q0, const double *v0);

static void predict(StWork *w, const double *q0, const double *v0, int prev, double hprev) {
  const mbsModel *m = w->m;
  int nq = m->nq, nc = m->ncon, k = w->k;
  if (prev && w->d && w->d->control && w->d->control->hist) {
    predict_history(w, q0, v0);
    return;
  }
  /* acceleration w->pt and jerk w->pg at the previous block's end */
  double T = w->ne * hprev;
  w->pred_cubic = prev;
  for (int i = 0; i < nq; i++) {
    double a = 0.0, j = 0.0;
    if (prev) {
      double dq = w->Q[(size_t)(w->nnode - 1) * nq + i] / T, vs = w->W[i] / hprev;
      double c2 = (3.0 * dq - 2.0 * vs - v0[i]) / T, c3 = (vs + v0[i] - 2.0 * dq) / (T * T);
      a = 2.0 * c2 + 6.0 * c3 * T;
      j = 6.0 * c3;
    }
    w->pt[i] = a;
    w->pg[i] = j;
  }
  for (int n = 0; n < w->nnode; n++) {
    double s = n * w->h / k;
    for (int i = 0; i < nq; i++) {
      w->Q0[(size_t)n * nq + i] = s * (v0[i] + s * (0.5 * w->pt[i] + s * w->pg[i] / 6.0));
      w->W0[(size_t)n * nq + i] = w->h * (v0[i] + s * (w->pt[i] + 0.5 * s * w->pg[i]));
    }
  }
  /* multipliers: the previous block's last value (scaled to the new h), for degree 2
   * continued along the line of its last element (its two values: 4.6 -> 4.3 Newton
   * iterations per element on the 200-link chain), else zero */
  for (int n = 0; n < w->ne * k; n++) {
    /* the time of value n from the block's start: element n / k at tau = n % k */
    double tn = (double)(n / k + n % k) * w->h;
    for (int r = 0; r < nc; r++) {
      double mu = prev ? w->MU[(size_t)(w->ne * k - 1) * nc + r] / (hprev * hprev) : 0.0;
      if (prev && k == 2) {
        double ma = w->MU[(size_t)(w->ne * k - 2) * nc + r] / (hprev * hprev);
        mu += (mu - ma) / hprev * tn;
      }
      w->MU0[(size_t)n * nc + r] = mu * w->h * w->h;
    }
  }
  /* the known start */
  memcpy(w->qs, q0, (size_t)nq * sizeof(double));
  w->sc_valid = 0;
  memset(w->Q0, 0, (size_t)nq * sizeof(double));
  for (int i = 0; i < nq; i++) {
    w->W0[i] = w->h * v0[i];
  }
}

static void predict_history(StWork *w, const double *q0, const double *v0) {
  const mbsModel *m = w->m;
  const mbsStepControl *c = w->d->control;
  int nq = m->nq, nc = m->ncon, k = w->k, P = c->nodes - 1;
  w->pred_cubic = 1;
  for (int n = 0; n < w->nnode; n++) {
    double s = n * w->h / k;
    for (int i = 0; i < nq; i++) {
      /* increments from q0: the history's terms s^l, l >= 1, and h times its derivative */
      double a = 0.0, b = 0.0;
      for (int l = P; l >= 1; l--) {
        a = (a + c->hist[(size_t)l * nq + i]) * s;
        b = b * s + l * c->hist[(size_t)l * nq + i];
      }
      w->Q0[(size_t)n * nq + i] = a;
      w->W0[(size_t)n * nq + i] = w->h * b;
    }
  }
  for (int n = 0; n < w->ne * k; n++) {
    for (int r = 0; r < nc; r++) {
      w->MU0[(size_t)n * nc + r] = w->d->lambda[r] * w->h * w->h;
    }
  }
  memcpy(w->qs, q0, (size_t)nq * sizeof(double));
  w->sc_valid = 0;
  memset(w->Q0, 0, (size_t)nq * sizeof(double));
  for (int i = 0; i < nq; i++) {
    w->W0[i] = w->h * v0[i];
  }
}

/* the predictor of element e0 > 0 of a block from the element before, solved: the cubic
 * through its start and end values and velocities, continued (cubic), or constant velocity
 * from its end; the multipliers its last value, for degree 2 with the cubic continued along
 * the element's line (its values at tau = 0 and 1) */
static void predict_element(StWork *w, int cubic) {
  const mbsModel *m = w->m;
  int nq = m->nq, nc = m->ncon, k = w->k, c = win_n0(w), a = c - k;
  double h = w->h;
  for (int i = 0; i < nq; i++) {
    double qa = w->Q[(size_t)a * nq + i], qc = w->Q[(size_t)c * nq + i];
    double va = w->W[(size_t)a * nq + i] / h, vc = w->W[(size_t)c * nq + i] / h;
    double acc = 0.0, jerk = 0.0;
    if (cubic) {
      double dq = (qc - qa) / h;
      double c2 = (3.0 * dq - 2.0 * va - vc) / h, c3 = (va + vc - 2.0 * dq) / (h * h);
      acc = 2.0 * c2 + 6.0 * c3 * h;
      jerk = 6.0 * c3;
    }
    for (int l = 1; l <= k; l++) {
      double s = l * h / k;
      w->Q0[(size_t)(c + l) * nq + i] = qc + s * (vc + s * (0.5 * acc + s * jerk / 6.0));
      w->W0[(size_t)(c + l) * nq + i] = h * (vc + s * (acc + 0.5 * s * jerk));
    }
  }
  for (int l = 0; l < k; l++) {
    for (int r = 0; r < nc; r++) {
      double mb = w->MU[(size_t)(c - 1) * nc + r], ma = w->MU[(size_t)(c - k) * nc + r];
      w->MU0[(size_t)(c + l) * nc + r] = mb + (cubic && k == 2 ? l * (mb - ma) : 0.0);
    }
  }
  for (int l = 1; l <= k; l++) {
    memset(w->Z0 + (size_t)(c + l) * nc, 0, (size_t)nc * sizeof(double));
  }
}

/* q, v (may be NULL) and mu/h^2 (lambda, may be NULL) at t in the solved block */
static void block_eval(const StWork *w, double t, double *q, double *v, double *lambda) {
  const mbsModel *m = w->m;
  int nq = m->nq, nc = m->ncon, k = w->k;
  double x = (t - w->t0) / w->h;
  int e = (int)floor(x);
  e = e < 0 ? 0 : (e >= w->ne ? w->ne - 1 : e);
  double tau = x - e;
  double ph[ST_MAXK + 1], dd;
  for (int b = 0; b <= k; b++) {
    ph[b] = lag(k, b, tau, &dd);
  }
  for (int i = 0; i < nq; i++) {
    double a = 0.0, c = 0.0;
    for (int b = 0; b <= k; b++) {
      a += ph[b] * w->Q[(size_t)(e * k + b) * nq + i];
      c += ph[b] * w->W[(size_t)(e * k + b) * nq + i];
    }
    if (q) {
      q[i] = w->qs[i] + a;
    }
    if (v) {
      v[i] = c / w->h;
    }
  }
  if (lambda) {
    for (int r = 0; r < nc; r++) {
      double a = 0.0;
      for (int j = 0; j < k; j++) {
        a += test_fn(k, j, tau, &dd) * w->MU[(size_t)(e * k + j) * nc + r];
      }
      lambda[r] = a / (w->h * w->h);
    }
  }
}

/* the action integral of element e (seed 003 sec. 4.2, Fig. 9 and 13), after a solve, by the
 * element's Gauss quadrature: *hint = int (T + V) dt, *lint = int (T - V) dt, with
 * T = 1/2 v . M v of the velocity field (the momenta M v of Livens' principle) and V every
 * element's potential (gravity, springs, strain) at the points */
static void element_action(StWork *w, int e, double *hint, double *lint) {
  const mbsModel *m = w->m;
  element_state(w, e);
  *hint = *lint = 0.0;
  for (int g = 0; g < w->ng; g++) {
    double T, V;
    mbs_energy(m, w->qg + (size_t)g * m->nq, w->vg + (size_t)g * m->nq, &T, &V);
    *hint += w->gw[g] * w->h * (T + V);
    *lint += w->gw[g] * w->h * (T - V);
  }
}

/* give d->action_sink the elements of the solved block that end by t1 and were not given */
static void release_actions(StWork *w, mbsData *d, double t1) {
  while (d->action_sink && w->act_next < w->ne &&
         w->t0 + (w->act_next + 1) * w->h <= t1 + 1e-9 * w->h) {
    int e = w->act_next++;
    double row[MBS_ACTION_COLS] = {w->t0 + e * w->h, w->t0 + (e + 1) * w->h,
                                   (double)(w->nsolved - 1), w->act[2 * e], w->act[2 * e + 1]};
    d->action_sink(d->action_ctx, row);
  }
}

static mbsStatus solve_block(const mbsModel *m, mbsData *d, StWork *w, double h, mbsError *err) {
  mbs_spacetime_begin(m, d, h);
  w->ext0 = d->external_work;
  w->dis0 = d->dissipated;
  /* the Newton driver works on d's system: lend it the block's */
  mbsSystem *sys0 = d->sys;
  mbsLinsolve *ls0 = d->ls;
  double *res0 = d->res, *dx0 = d->dx, *jac0 = d->jac;
  d->sys = w->sys;
  d->ls = w->sys->ls;
  d->res = w->res;
  d->dx = w->dx;
  d->jac = w->jac;
  mbsNewtonProblem p = {w->sys->n, 0, w, st_assemble, st_scales, st_apply, st_reset, st_split, 0};
  char why[1200];
  mbsStatus st = MBS_OK;
  int iters = 0;
  /* after an imported state (error control) the first element pivots afresh */
  int repivot = d->control && w->repivot_next;
  w->repivot_next = 0;
  /* the elements one after the other (the block is block lower triangular by elements),
   * each from the cubic continuation of the one before (the first: of the previous block) */
  for (int e = 0; e < w->ne && st == MBS_OK; e++) {
    w->e0 = e;
    w->sc_valid = 0;
    int cubic = e > 0 || w->pred_cubic;
    if (e > 0) {
      predict_element(w, 1);
      st_reset(w);
    }
    w->hterm = 0.0;
    st = mbs_newton_solve(m, d, &p, e == 0 ? repivot : 0, why, sizeof(why), err);
    iters += d->iterations;
    if (st == MBS_ERR_SOLVER && cubic) {
      /* the cubic continuation can be far off (a fast top: 12 rad in 50 elements of a
       * block); once more from constant velocities before the step is halved */
      if (e == 0) {
        predict(w, d->q, d->v, 0, w->h);
        reset_all(w);
      } else {
        predict_element(w, 0);
        st_reset(w);
      }
      w->hterm = 0.0;
      st = mbs_newton_solve(m, d, &p, 0, why, sizeof(why), err);
      iters += d->iterations;
    }
  }
  d->iterations = iters;
  d->sys = sys0;
  d->ls = ls0;
  d->res = res0;
  d->dx = dx0;
  d->jac = jac0;
  /* d's own factorization is untouched, but the counters say a factorization is valid */
  d->factor_valid = 0;
  if (st != MBS_OK) {
    return mbs_error_set(err, st == MBS_ERR_LINSOLVE ? MBS_ERR_LINSOLVE : MBS_ERR_SOLVER, NULL, 0,
                         0, "spacetime block at t=%.9g (%d elements of %.3g s): %s", d->t, w->ne,
                         h, why);
  }
  w->Wext[0] = w->Wdis[0] = 0.0;
  for (int e = 0; e < w->ne; e++) {
    double ext, dis;
    element_work(w, e, &ext, &dis);
    w->Wext[e + 1] = w->Wext[e] + ext;
    w->Wdis[e + 1] = w->Wdis[e] + dis;
    element_action(w, e, &w->act[2 * e], &w->act[2 * e + 1]);
  }
  w->act_next = 0;
  w->nsolved++;
  w->valid = 1;
  return MBS_OK;
}

static mbsStatus step(const mbsModel *m, mbsData *d, double dt, mbsError *err) {
  StWork *w = d->integrator_work;
  w->m = m;
  w->d = d;
  double t1 = d->t + dt;
  int iters = 0;
  /* under error control (advance.c) every step is a block of its own, of elements dt / N */
  if (d->control ||
      !(w->valid && d->t >= w->t0 - 1e-9 * w->h && t1 <= w->t0 + w->ne * w->h + 1e-9 * w->h)) {
    mbsStatus st = solve_block(m, d, w, d->control ? dt / w->ne : dt, err);
    if (st != MBS_OK) {
      return st;
    }
    iters = d->iterations;
  }
  block_eval(w, t1, d->q, d->v, d->lambda);
  release_actions(w, d, t1);
  /* work: exact at element ends, linear in between */
  double x = (t1 - w->t0) / w->h;
  int e = (int)floor(x + 1e-9);
  e = e < 0 ? 0 : (e > w->ne ? w->ne : e);
  double f = x - e;
  if (e >= w->ne || fabs(f) < 1e-9) {
    f = 0.0;
  }
  double ext = w->Wext[e], dis = w->Wdis[e];
  if (f > 0.0 && e < w->ne) {
    ext += f * (w->Wext[e + 1] - w->Wext[e]);
    dis += f * (w->Wdis[e + 1] - w->Wdis[e]);
  }
  d->external_work = w->ext0 + ext;
  d->dissipated = w->dis0 + dis;
  d->iterations = iters;
  d->t = t1;
  d->last_dt = dt;
  d->step++;
  d->max_violation = fmax(d->max_violation, mbs_constraint_violation(m, d->q, d->t, NULL));
  return MBS_OK;
}

/* under error control the records between steps: the cubic Hermite of the element's end
 * values of q and v (of order 2k there, where the element's own polynomials inside are of
 * order k + 1: for degree 2 the records then follow the step ends' accuracy, which the
 * controller holds; for degree 1 it is the one-step schemes' dense output) */
static void hermite_eval(const StWork *w, double t, double *q, double *v) {
  int nq = w->m->nq, k = w->k;
  double x = (t - w->t0) / w->h;
  int e = (int)floor(x);
  e = e < 0 ? 0 : (e >= w->ne ? w->ne - 1 : e);
  double s = x - e, s2 = s * s, s3 = s2 * s;
  double h00 = 2.0 * s3 - 3.0 * s2 + 1.0, h10 = s3 - 2.0 * s2 + s, h01 = 3.0 * s2 - 2.0 * s3,
         h11 = s3 - s2;
  double d00 = 6.0 * s2 - 6.0 * s, d10 = 3.0 * s2 - 4.0 * s + 1.0, d11 = 3.0 * s2 - 2.0 * s;
  const double *Qa = w->Q + (size_t)(e * k) * nq, *Qb = w->Q + (size_t)((e + 1) * k) * nq;
  const double *Wa = w->W + (size_t)(e * k) * nq, *Wb = w->W + (size_t)((e + 1) * k) * nq;
  for (int i = 0; i < nq; i++) {
    if (q) {
      q[i] = w->qs[i] + (h00 * Qa[i] + h10 * Wa[i] + h01 * Qb[i] + h11 * Wb[i]);
    }
    if (v) {
      v[i] = (d00 * (Qa[i] - Qb[i]) + d10 * Wa[i] + d11 * Wb[i]) / w->h;
    }
  }
}

static void interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v) {
  const StWork *w = d->integrator_work;
  if (!w->valid || t >= d->t || t < w->t0) {
    if (q) {
      memcpy(q, d->q, (size_t)m->nq * sizeof(double));
    }
    if (v) {
      memcpy(v, d->v, (size_t)m->nq * sizeof(double));
    }
    return;
  }
  if (d->control) {
    hermite_eval(w, t, q, v);
    return;
  }
  block_eval(w, t, q, v, NULL);
}

static mbsStatus state_import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                              char *missing, size_t nmissing, mbsError *err) {
  (void)missing;
  (void)nmissing;
  (void)err;
  StWork *w = d->integrator_work;
  w->repivot_next = 1;
  const mbsStateArray *sv = mbs_state_find(in, n, "scheme_velocity");
  const mbsStateArray *mul = mbs_state_find(in, n, "multipliers");
  int same = 1;
  if (sv && sv->length == m->nq) {
    same = same && memcmp(d->v, sv->data, (size_t)m->nq * sizeof(double)) == 0;
    memmove(d->v, sv->data, (size_t)m->nq * sizeof(double));
  }
  if (mul && mul->length == m->ncon) {
    same = same && memcmp(d->lambda, mul->data, (size_t)m->ncon * sizeof(double)) == 0;
    memmove(d->lambda, mul->data, (size_t)m->ncon * sizeof(double));
  }
  /* the run's own record (the state it just wrote) keeps the solved block; any other state
   * (a restart) starts a new block from itself at the next step */
  if (!same) {
    w->valid = 0;
  }
  return MBS_OK;
}

/* ---- what the tests see (integrator.h) ---- */

mbsSystem *mbs_spacetime_begin(const mbsModel *m, mbsData *d, double h) {
  StWork *w = d->integrator_work;
  w->m = m;
  w->d = d;
  int prev = d->control || (w->valid && fabs(w->t0 + w->ne * w->h - d->t) <= 1e-9 * w->h);
  double hprev = w->h;
  w->h = h;
  predict(w, d->q, d->v, prev, hprev);
  w->valid = 0;
  w->t0 = d->t;
  w->e0 = 0;
  w->sc_valid = 0;
  reset_all(w);
  return w->sys;
}

void mbs_spacetime_unknowns(mbsData *d, double *x) {
  StWork *w = d->integrator_work;
  int nq = w->m->nq, nc = w->m->ncon, nsp = w->sys->nsp;
  for (int l = 1; l <= w->k; l++) {
    double *xa = x + (size_t)stage_a(l) * nsp, *xb = x + (size_t)stage_b(l) * nsp;
    int n = win_n0(w) + l;
    for (int i = 0; i < nq; i++) {
      xa[i] = w->Q[(size_t)n * nq + i];
      xb[i] = w->W[(size_t)n * nq + i];
    }
    for (int r = 0; r < nc; r++) {
      xa[nq + r] = w->MU[(size_t)(n - 1) * nc + r];
      xb[nq + r] = w->Z[(size_t)n * nc + r];
    }
  }
}

void mbs_spacetime_set_unknowns(mbsData *d, const double *x) {
  StWork *w = d->integrator_work;
  int n = w->sys->n;
  mbs_spacetime_unknowns(d, w->dx);
  for (int i = 0; i < n; i++) {
    w->dx[i] -= x[i];
  }
  st_apply(w, w->dx);
}

const double *mbs_spacetime_assemble(mbsData *d, int with_jac, const double **jac) {
  StWork *w = d->integrator_work;
  st_assemble(w, with_jac);
  *jac = w->jac;
  return w->res;
}

const mbsIntegratorTable mbs_integrator_spacetime = {
    .name = "spacetime",
    .init = init,
    .step = step,
    .interpolate = interpolate,
    .state_export = mbs_implicit_export, /* velocity and multipliers: a restart
                                           solves a new block from the record's state */
    .state_import = state_import,
    .free = work_free,
};
