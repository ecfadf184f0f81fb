/* problem.c: the contact problem of a time step (seed 002 eq. 2.35 with 5.4-5.5).
 *
 * n contacts with the impulses L_k = (normal, t1, t2) [N s] and the velocities the laws
 * constrain, xi = xi0 + G (L - L_start) (the Delassus matrix G = W^T J^-1 W / theta of the
 * step, sparse in 3 x 3 blocks: two contacts couple only through a body or mechanism they
 * both touch). Per contact, with r_k = 1 / max diag G_kk,
 *     Phi_k(L) = L_k - prox_{C_k}(L_k - r_k xi_k) = 0,
 * C_k = {L_N >= 0, |L_T| <= mu_k L_N} (Signorini with Newton's law shifted into xi_N, and
 * Coulomb's law: eq. 2.35b, c). The residual |Phi_k| / r_k is a velocity [m/s].
 *
 * The contacts fall into islands (connected blocks of G), each solved on its own:
 *  1. non-smooth Gauss-Seidel sweeps (each contact's 3 x 3 problem exactly, the others'
 *     impulses fixed): a sweep costs one pass over G's blocks; warm-started problems that
 *     changed little converge in a few;
 *  2. where they do not, a semi-smooth Newton method on Phi (Alart and Curnier's
 *     generalized Newton: Jacobian I - D (I - R G), D the prox map's derivative) with a
 *     Levenberg-Marquardt term: the Jacobian takes G + eps I, eps = |G| min(1e-3, residual /
 *     velocity scale). Redundant contacts (the four corners of a face on a plane, a stack's
 *     faces) have a singular G and non-unique impulses; the term keeps each step defined and
 *     shrinks with the residual, so the iteration converges fast to an impulse set near the
 *     start (Yamashita and Fukushima's rule for equations whose solutions are not isolated).
 *     A non-monotone line search on sum (Phi_k / r_k)^2 (Grippo, Lampariello and Lucidi:
 *     Armijo's condition against the largest merit of the last NONMONO iterates, so that a
 *     full step across a kink of the prox map is taken where a monotone search cut it to a
 *     few percent), the lowest-residual iterate kept; a step that does not descend raises
 *     eps.
 *     The Jacobian H = B G + A + (eps + reg) B has G's block pattern: islands of up to
 *     DENSE_MAX unknowns take a dense LU (LAPACK). Larger ones take a sparse LU (KLU,
 *     util/linsolve.c) either of H on G's pattern, or, where the caller passes G's factors
 *     (G = Wl^T X / theta, X = J^-1 W on the coordinates y of the components the contacts
 *     touch) and their entries are fewer than G's blocks', of the augmented system
 *         [ A + (eps + reg) B   B Wl^T ] [dL]   [-Phi]
 *         [ -s X / theta        s I    ] [y ] = [ 0  ]
 *     whose Schur complement on dL is H (the same Newton iterates in exact arithmetic;
 *     aug_values): G of one body on n points is dense, n^2 blocks and an O(n^3) LU, the
 *     augmented system O(n) entries and, its contacts eliminated first, O(n) fill. A pile
 *     of dice, whose G is sparse, keeps G's pattern (its LU there is 4x smaller). Both
 *     cost the blocks of G in the sweeps and the residuals (xi_row), which the caller
 *     forms;
 *  3. Gauss-Seidel again from the best impulses where Newton stalled, up to max_iter sweeps
 *     or until they stall within the accepted residual (sweeps).
 * An island whose residual stays above tol leaves its best impulses and the call reports
 * it. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/contact.h"
#include "util/lapack.h"
#include "util/linsolve.h"
#include "util/vec3.h"

#define DENSE_MAX 96       /* unknowns of an island solved with a dense LU */
#define PRE_SWEEPS 3       /* Gauss-Seidel sweeps before Newton (10 took 50 dice 1.3 times the CPU:
                              docs/integrators.md) */
#define CHECK_EVERY 4      /* Gauss-Seidel sweeps between residual checks */
#define SWEEP_STALL 0.1    /* sweeps within the accepted residual stop when CHECK_EVERY of them
                              take off less than this fraction of it */
#define LM_MAX 1e-3        /* the largest Levenberg-Marquardt term, relative to |G| */
#define LM_MIN 1e-14       /* the smallest */
#define LOCAL_ITER 40      /* Newton iterations of one contact's problem */
#define GOAL 0.25          /* Newton aims at GOAL tol: the caller's check recomputes xi */
#define STALL_ITER 8       /* Newton iterations without halving the residual: stalled, */
#define STALL_PER 4        /* one more per this many contacts of the island, */
#define STALL_MAX 48       /* up to this many (mbs_contact_solve) */
#define STALL_ITER_OK 3    /* the same once the best iterate's residual is within the accepted
                              one (the non-monotone search may stand above it) */
#define CHORD_CONTRACT 0.1 /* a Newton step on a kept LU must contract the residual this much */
#define SEG_MAX 32         /* components one contact may touch in the augmented form */
#define NONMONO 8          /* Armijo against the largest merit of this many iterates */
#define ISLAND_PIVOT_TOL 1e-3 /* the sparse LU's diagonal preference (sparse_prepare) */
#define ISLAND_REPIVOT 1e-5   /* and its reused pivot order */
#define AUG_RATIO 1.0      /* the augmented form where its entries times this are fewer than H's */

/* a sparse LU of island Newton matrices (util/linsolve.h, KLU): the pattern (hp, hi: CSC) and
 * values (hx) of the island at hand, the pattern last analysed, and whether the LU holds a
 * factorization of that pattern */
typedef struct {
  int *hp, *hi;
  double *hx;
  int hpcap, hcap; /* entries of hp; of hi and hx */
  int *lasthp, *lasthi, lastN, lastcap, lastzcap;
  int held;
  mbsLinsolve *ls;
} SparseLU;

static void sparse_free(SparseLU *s) {
  void *ptrs[] = {s->hp, s->hi, s->hx, s->lasthp, s->lasthi};
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  mbs_linsolve_destroy(s->ls);
}

struct mbsContactSolver {
  int cap;          /* contacts the arrays below hold */
  int *parent;      /* (cap) union-find, then the island of each contact */
  int *member;      /* (cap) contacts grouped by island */
  int *start;       /* (cap + 1) */
  int *local;       /* (cap) index of a contact within its island */
  int *pos;         /* (cap) fill counters */
  double *Lb;       /* (3 cap) the start impulses */
  double *xi, *phi, *D, *B, *dL, *Lt, *xit, *phit, *gd, *best, *nbest, *r; /* (3 cap), D, B: the
                                                       Jacobian blocks A, B (9 cap), r (cap) */
  int *tpos;        /* (blocks) position of the transposed block */
  int bcap;
  /* the Newton matrix of an island: dense (N x N, column-major) or sparse (glu: on G's
   * pattern; alu: the augmented form) */
  double *H;
  int *piv;
  int Hcap;         /* N of the dense H */
  SparseLU glu, alu;
  /* the augmented form's work: the local index of each coordinate of y in the island's
   * unknowns (ymap, -1 outside) and its component's (ycomp); the island's components (their
   * first coordinate cy0, coordinates clen, first local unknown cfirst, nci of them), their
   * graph (cgp, cgi) and AMD order (cperm); for each entry of a y column the W entry and
   * contact it comes from (awe, awk); the unknowns' order (ident), right-hand side and
   * solution (arhs, asol), y's change (yv) */
  int *ymap, *ycomp, ycap, nci;
  int *cy0, *clen, *cfirst, *cperm, *cgp, *ccnt, ccap;
  int *cgi, cgcap;
  int *awe, *awk, awcap;
  int *ident;
  double *arhs, *asol, *yv;
  int mcap;
};

mbsContactSolver *mbs_contact_solver_create(mbsError *err) {
  mbsContactSolver *cs = calloc(1, sizeof(*cs));
  if (!cs) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (contact solver)");
  }
  return cs;
}

void mbs_contact_solver_destroy(mbsContactSolver *cs) {
  if (!cs) {
    return;
  }
  void *ptrs[] = {cs->parent, cs->member, cs->start, cs->local, cs->pos,   cs->Lb,
                  cs->xi,     cs->phi,    cs->D,     cs->B,     cs->dL,    cs->Lt,
                  cs->xit,    cs->phit,   cs->gd,    cs->best,  cs->nbest, cs->r,
                  cs->tpos,   cs->H,      cs->piv,   cs->ymap,  cs->ycomp, cs->cy0,
                  cs->clen,   cs->cfirst, cs->cperm, cs->cgp,   cs->ccnt,  cs->cgi,
                  cs->awe,    cs->awk,    cs->ident, cs->arhs,  cs->asol,  cs->yv};
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  sparse_free(&cs->glu);
  sparse_free(&cs->alu);
  free(cs);
}

/* grow *p to n elements of size sz (contents kept); 0 when out of memory */
static int grow(void **p, size_t n, size_t sz) {
  void *q = realloc(*p, (n > 0 ? n : 1) * sz);
  if (!q) {
    return 0;
  }
  *p = q;
  return 1;
}

static mbsStatus reserve(mbsContactSolver *cs, int n, int nblock, mbsError *err) {
  int ok = 1;
  if (n > cs->cap) {
    int c = n > 2 * cs->cap ? n : 2 * cs->cap;
    size_t c3 = 3 * (size_t)c;
    ok = grow((void **)&cs->parent, (size_t)c, sizeof(int)) &&
         grow((void **)&cs->member, (size_t)c, sizeof(int)) &&
         grow((void **)&cs->start, (size_t)c + 1, sizeof(int)) &&
         grow((void **)&cs->local, (size_t)c, sizeof(int)) &&
         grow((void **)&cs->pos, (size_t)c, sizeof(int)) &&
         grow((void **)&cs->Lb, c3, sizeof(double)) && grow((void **)&cs->xi, c3, sizeof(double)) &&
         grow((void **)&cs->phi, c3, sizeof(double)) &&
         grow((void **)&cs->D, 3 * c3, sizeof(double)) &&
         grow((void **)&cs->B, 3 * c3, sizeof(double)) &&
         grow((void **)&cs->dL, c3, sizeof(double)) && grow((void **)&cs->Lt, c3, sizeof(double)) &&
         grow((void **)&cs->xit, c3, sizeof(double)) &&
         grow((void **)&cs->phit, c3, sizeof(double)) &&
         grow((void **)&cs->gd, c3, sizeof(double)) &&
         grow((void **)&cs->best, c3, sizeof(double)) &&
         grow((void **)&cs->nbest, c3, sizeof(double)) &&
         grow((void **)&cs->r, (size_t)c, sizeof(double));
    if (ok) {
      cs->cap = c;
    }
  }
  if (ok && nblock > cs->bcap) {
    int c = nblock > 2 * cs->bcap ? nblock : 2 * cs->bcap;
    ok = grow((void **)&cs->tpos, (size_t)c, sizeof(int));
    if (ok) {
      cs->bcap = c;
    }
  }
  return ok ? MBS_OK
            : mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                            "out of memory for the contact problem (%d contacts)", n);
}

/* fmax(a, b) as an inline comparison (the same value, a NaN argument the other's): glibc's
 * fmax is a call that the compiler does not inline without -ffinite-math-only, and the
 * contact laws and sweeps take tens of millions of them in a pile of dice */
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

/* the prox map of one contact at y (in place) onto C = {y_N >= 0, |y_T| <= mu y_N} and its
 * derivative D (3 x 3, row-major) when D is not NULL */
static void prox_deriv(double mu, double y[3], double *D) {
  if (D) {
    memset(D, 0, 9 * sizeof(double));
  }
  if (!(y[0] > 0.0)) {
    y[0] = y[1] = y[2] = 0.0;
    return;
  }
  double t = sqrt(y[1] * y[1] + y[2] * y[2]), lim = mu * y[0];
  if (t <= lim) {
    if (D) {
      D[0] = D[4] = D[8] = 1.0;
    }
    return;
  }
  double e1 = y[1] / t, e2 = y[2] / t, f = lim / t;
  if (D) {
    D[0] = 1.0;
    D[3] = mu * e1;
    D[6] = mu * e2;
    D[4] = f * (1.0 - e1 * e1);
    D[5] = D[7] = -f * e1 * e2;
    D[8] = f * (1.0 - e2 * e2);
  }
  y[1] = lim * e1;
  y[2] = lim * e2;
}

/* mbs_contact_law (contact.h): unilateral, A = I - D, B = r D with D the prox map's
 * derivative; penalty, the derivatives of its two laws */
/* V(g) = k min(g, 0)^2 / 2 and V'(g) */
static double pen_v(double k, double g) {
  return g < 0.0 ? 0.5 * k * g * g : 0.0;
}

double mbs_contact_penalty_impulse(const mbsContactPenalty *pl, double xiN, double *dl) {
  double gbar = pl->gbar0 + pl->theta * xiN, dg = pl->dt * gbar, g0 = pl->g0, g1 = g0 + dg;
  double k = pl->k, dv, ddv; /* the discrete gradient of V and its derivative in g1 */
  if (fabs(dg) > 1e-9 * (fabs(g0) + fabs(g1)) + 1e-300) {
    dv = (pen_v(k, g1) - pen_v(k, g0)) / dg;
    ddv = ((g1 < 0.0 ? k * g1 : 0.0) - dv) / dg;
  } else {
    double gm = 0.5 * (g0 + g1);
    dv = gm < 0.0 ? k * gm : 0.0;
    ddv = gm < 0.0 ? 0.5 * k : 0.0;
  }
  double f = pl->dt * (-dv - pl->c * gbar);
  if (dl) {
    *dl = f > 0.0 ? -pl->dt * pl->theta * (pl->dt * ddv + pl->c) : 0.0;
  }
  return f > 0.0 ? f : 0.0;
}

double mbs_contact_law(double mu, double r, const mbsContactPenalty *pl, const double L[3],
                       const double xi[3], double phi[3], double *A, double *B, double *merit) {
  if (pl) {
    double dl, f = mbs_contact_penalty_impulse(pl, xi[0], &dl);
    double t = hypot(xi[1], xi[2]), v = maxd(t, pl->vreg);
    double s1 = xi[1] / v, s2 = xi[2] / v;
    phi[0] = L[0] - f;
    phi[1] = L[1] + mu * L[0] * s1;
    phi[2] = L[2] + mu * L[0] * s2;
    if (A) {
      memset(A, 0, 9 * sizeof(double));
      memset(B, 0, 9 * sizeof(double));
      A[0] = A[4] = A[8] = 1.0;
      A[3] = mu * s1;
      A[6] = mu * s2;
      B[0] = -dl;
      /* ds/dx: I / v in the regularized range, (I - e e^T) / |x| beyond */
      double c = mu * L[0] / v, e1 = t > 0.0 ? xi[1] / t : 0.0, e2 = t > 0.0 ? xi[2] / t : 0.0;
      int slide = t > pl->vreg;
      B[4] = c * (1.0 - (slide ? e1 * e1 : 0.0));
      B[5] = B[7] = -c * (slide ? e1 * e2 : 0.0);
      B[8] = c * (1.0 - (slide ? e2 * e2 : 0.0));
    }
  } else {
    double y[3], D[9];
    for (int a = 0; a < 3; a++) {
      y[a] = L[a] - r * xi[a];
    }
    prox_deriv(mu, y, A ? D : NULL);
    for (int a = 0; a < 3; a++) {
      phi[a] = L[a] - y[a];
    }
    if (A) {
      for (int i = 0; i < 9; i++) {
        A[i] = 0.0 - D[i];
        B[i] = r * D[i];
      }
      A[0] = 1.0 - D[0];
      A[4] = 1.0 - D[4];
      A[8] = 1.0 - D[8];
    }
  }
  double res = 0.0;
  for (int a = 0; a < 3; a++) {
    res = maxd(res, fabs(phi[a]) / r);
    if (merit) {
      *merit += (phi[a] / r) * (phi[a] / r);
    }
  }
  return res;
}

/* mbs_contact_law for contact k of p */
static double law_phi(const mbsContactProblem *p, const mbsContactSolver *cs, int k,
                      const double L[3], const double xi[3], double phi[3], double *A, double *B,
                      double *merit) {
  const mbsContactPenalty *pl = p->pen && p->pen[k].k > 0.0 ? &p->pen[k] : NULL;
  return mbs_contact_law(p->mu[k], cs->r[k], pl, L, xi, phi, A, B, merit);
}

/* 1 if contact k follows the penalty law */
static int penalty(const mbsContactProblem *p, int k) {
  return p->pen && p->pen[k].k > 0.0;
}


/* One contact's problem with the others fixed: xi = x0 + G L (G its 3 x 3 block), exactly.
 * Unilateral: open when x0_N >= 0; else stuck when the impulse that stops it lies in the
 * cone; frictionless, the normal alone; else sliding. Sliding and penalty contacts by Newton
 * on Phi (law_phi) with the Levenberg-Marquardt term and a line search, from the start
 * impulse. L in/out. */
static void local_solve(const mbsContactProblem *p, const mbsContactSolver *cs, int k,
                        const double G[9], const double x0[3], double L[3]) {
  double mu = p->mu[k], r = cs->r[k], tol = p->tol;
  if (!penalty(p, k)) {
    if (x0[0] >= 0.0) {
      L[0] = L[1] = L[2] = 0.0;
      return;
    }
    double b[3] = {-x0[0], -x0[1], -x0[2]}, x[3];
    if (mu > 0.0 && msolve3(G, b, x) && x[0] > 0.0 && hypot(x[1], x[2]) <= mu * x[0]) {
      memcpy(L, x, sizeof(x));
      return;
    }
    if (mu == 0.0) {
      L[0] = G[0] > 0.0 ? -x0[0] / G[0] : 0.0;
      L[1] = L[2] = 0.0;
      return;
    }
    prox_deriv(mu, L, NULL);
  } else {
    L[0] = maxd(L[0], 0.0);
  }
  double gmax = maxd(G[0], maxd(G[4], G[8]));
  double vsc = fabs(x0[0]) + fabs(x0[1]) + fabs(x0[2]) + 1e-300;
  for (int it = 0; it < LOCAL_ITER; it++) {
    double xi[3], phi[3], A[9], B[9], merit = 0.0;
    for (int a = 0; a < 3; a++) {
      xi[a] = x0[a] + G[3 * a] * L[0] + G[3 * a + 1] * L[1] + G[3 * a + 2] * L[2];
    }
    double res = law_phi(p, cs, k, L, xi, phi, A, B, &merit);
    if (res <= GOAL * tol) {
      return;
    }
    double eps = gmax * fmin(LM_MAX, maxd(LM_MIN, res / vsc));
    double H[9], dL[3], mphi[3] = {-phi[0], -phi[1], -phi[2]};
    for (int a = 0; a < 3; a++) {
      for (int c = 0; c < 3; c++) {
        double sum = 0.0;
        for (int e = 0; e < 3; e++) {
          sum += B[3 * a + e] * G[3 * e + c];
        }
        H[3 * a + c] = sum + A[3 * a + c] + eps * B[3 * a + c];
      }
    }
    if (!msolve3(H, mphi, dL)) {
      break;
    }
    double alpha = 1.0, Lt[3], mt = INFINITY;
    for (int ls = 0; ls < 30; ls++) {
      double xt[3], pt[3];
      mt = 0.0;
      for (int a = 0; a < 3; a++) {
        Lt[a] = L[a] + alpha * dL[a];
      }
      for (int a = 0; a < 3; a++) {
        xt[a] = x0[a] + G[3 * a] * Lt[0] + G[3 * a + 1] * Lt[1] + G[3 * a + 2] * Lt[2];
      }
      law_phi(p, cs, k, Lt, xt, pt, NULL, NULL, &mt);
      if (mt <= (1.0 - 1e-4 * alpha) * merit) {
        break;
      }
      alpha *= 0.5;
    }
    if (!(mt < merit)) {
      break;
    }
    memcpy(L, Lt, sizeof(Lt));
  }
  if (penalty(p, k)) {
    return;
  }
  /* the fixed point of the prox map (contracts for r G <= 1) as the last resort */
  for (int it = 0; it < 200; it++) {
    double xi[3], y[3];
    for (int a = 0; a < 3; a++) {
      xi[a] = x0[a] + G[3 * a] * L[0] + G[3 * a + 1] * L[1] + G[3 * a + 2] * L[2];
      y[a] = L[a] - r * xi[a];
    }
    prox_deriv(mu, y, NULL);
    double ch = fabs(y[0] - L[0]) + fabs(y[1] - L[1]) + fabs(y[2] - L[2]);
    memcpy(L, y, sizeof(y));
    if (ch <= 1e-3 * GOAL * tol * r) {
      break;
    }
  }
}

/* xi_k = xi0_k + sum_l G_kl (L_l - Lb_l) of contact k */
static void xi_row(const mbsContactProblem *p, const mbsContactSolver *cs, int k,
                   const double *L, double out[3]) {
  memcpy(out, p->xi0 + 3 * k, 3 * sizeof(double));
  for (int q = p->gptr[k]; q < p->gptr[k + 1]; q++) {
    int l = p->gcol[q];
    const double *g = p->gval + 9 * (size_t)q;
    double d0 = L[3 * l] - cs->Lb[3 * l], d1 = L[3 * l + 1] - cs->Lb[3 * l + 1],
           d2 = L[3 * l + 2] - cs->Lb[3 * l + 2];
    if (d0 == 0.0 && d1 == 0.0 && d2 == 0.0) {
      continue;
    }
    out[0] += g[0] * d0 + g[1] * d1 + g[2] * d2;
    out[1] += g[3] * d0 + g[4] * d1 + g[5] * d2;
    out[2] += g[6] * d0 + g[7] * d1 + g[8] * d2;
  }
}

/* the residual of the island's contacts mem[0..n) at L (max |Phi| / r), their xi and Phi
 * into cs->xi, cs->phi (global indices) */
static double island_residual(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem,
                              int n, const double *L) {
  double res = 0.0, merit = 0.0;
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    xi_row(p, cs, k, L, cs->xi + 3 * k);
    res = maxd(res, law_phi(p, cs, k, L + 3 * k, cs->xi + 3 * k, cs->phi + 3 * k, NULL, NULL,
                            &merit));
  }
  return res;
}

/* Gauss-Seidel sweeps over the island, at most max; returns the sweeps done, the residual
 * into *res (INFINITY when none was computed). They stop at p->tol, or once the residual is
 * within p->accept and stalls: CHECK_EVERY sweeps that take off less than SWEEP_STALL of it
 * (sweeps after a stalled Newton method level off at a floor that 100 more sweeps do not
 * move: 3.79e-7 of the velocity scale from the 4th sweep to the 100th on a pile of dice) */
static int sweeps(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem, int n,
                  int max, double *res) {
  int s;
  double last = INFINITY;
  *res = INFINITY;
  for (s = 1; s <= max; s++) {
    double chg = 0.0;
    for (int i = 0; i < n; i++) {
      int k = mem[i];
      double xi[3], x0[3], L0[3];
      double *L = p->L + 3 * k;
      const double *Gkk = NULL;
      for (int q = p->gptr[k]; q < p->gptr[k + 1] && !Gkk; q++) {
        Gkk = p->gcol[q] == k ? p->gval + 9 * (size_t)q : NULL;
      }
      xi_row(p, cs, k, p->L, xi);
      memcpy(L0, L, sizeof(L0));
      for (int a = 0; a < 3; a++) {
        x0[a] = xi[a] - (Gkk[3 * a] * L0[0] + Gkk[3 * a + 1] * L0[1] + Gkk[3 * a + 2] * L0[2]);
      }
      local_solve(p, cs, k, Gkk, x0, L);
      for (int a = 0; a < 3; a++) {
        chg = maxd(chg, fabs(L[a] - L0[a]) / cs->r[k]);
      }
    }
    if (chg <= p->tol || s % CHECK_EVERY == 0 || s == max) {
      *res = island_residual(p, cs, mem, n, p->L);
      if (*res <= p->tol || (*res <= p->accept && *res > (1.0 - SWEEP_STALL) * last)) {
        break;
      }
      last = *res;
    }
  }
  return s <= max ? s : max;
}

/* room for N unknowns and nz entries in the sparse LU's pattern arrays; 0 when out of memory */
static int sparse_reserve(SparseLU *s, int N, long nz) {
  if (nz > s->hcap) {
    long hc = nz > 2L * s->hcap ? nz : 2L * s->hcap;
    if (hc > INT_MAX || !grow((void **)&s->hi, (size_t)hc, sizeof(int)) ||
        !grow((void **)&s->hx, (size_t)hc, sizeof(double))) {
      return 0;
    }
    s->hcap = (int)hc;
  }
  if (N + 1 > s->hpcap) {
    if (!grow((void **)&s->hp, (size_t)N + 1, sizeof(int))) {
      return 0;
    }
    s->hpcap = N + 1;
  }
  return 1;
}

/* the island's Newton matrix pattern on G's blocks (CSC over its 3n unknowns, local indices)
 * into cs->glu; MBS_ERR_NOMEM */
static mbsStatus island_pattern(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem,
                                int n, mbsError *err) {
  long nb = 0;
  for (int i = 0; i < n; i++) {
    nb += p->gptr[mem[i] + 1] - p->gptr[mem[i]];
  }
  int N = 3 * n;
  SparseLU *s = &cs->glu;
  if (!sparse_reserve(s, N, 9 * nb)) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                         "out of memory for the contact problem's Newton matrix");
  }
  /* column 3 l + b holds rows 3 k + a for the blocks (k, l): the pattern is symmetric, so
   * the k are row l's block columns */
  int nz = 0;
  for (int i = 0; i < n; i++) {
    int l = mem[i];
    for (int b = 0; b < 3; b++) {
      s->hp[3 * i + b] = nz;
      for (int q = p->gptr[l]; q < p->gptr[l + 1]; q++) {
        int kl = cs->local[p->gcol[q]];
        for (int a = 0; a < 3; a++) {
          s->hi[nz++] = 3 * kl + a;
        }
      }
    }
  }
  s->hp[N] = nz;
  return MBS_OK;
}

/* for each block q = (l, k) of the island's rows, the position of block (k, l) in row k */
static void island_transpose(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem,
                             int n) {
  for (int i = 0; i < n; i++) {
    int l = mem[i];
    for (int q = p->gptr[l]; q < p->gptr[l + 1]; q++) {
      int k = p->gcol[q], lo = p->gptr[k], hi = p->gptr[k + 1] - 1;
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (p->gcol[mid] < l) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      cs->tpos[q] = lo;
    }
  }
}

/* 1 if the island pattern in s->hp, hi (N unknowns) is the one the sparse LU analysed last
 * (the same island again, in the step's next alternation: its symbolic analysis and pivot
 * order stay) */
static int same_pattern(const SparseLU *s, int N) {
  return N == s->lastN && memcmp(s->lasthp, s->hp, (size_t)(N + 1) * sizeof(int)) == 0 &&
         memcmp(s->lasthi, s->hi, (size_t)s->hp[N] * sizeof(int)) == 0;
}

/* remember the analysed pattern (the LU references hp and hi themselves) */
static mbsStatus keep_pattern(SparseLU *s, int N) {
  if (N + 1 > s->lastcap || s->hp[N] > s->lastzcap) {
    int c = N + 1 > 2 * s->lastcap ? N + 1 : 2 * s->lastcap;
    int z = s->hp[N] > 2 * s->lastzcap ? s->hp[N] : 2 * s->lastzcap;
    if (!grow((void **)&s->lasthp, (size_t)c, sizeof(int)) ||
        !grow((void **)&s->lasthi, (size_t)z, sizeof(int))) {
      return MBS_ERR_NOMEM;
    }
    s->lastcap = c;
    s->lastzcap = z;
  }
  memcpy(s->lasthp, s->hp, (size_t)(N + 1) * sizeof(int));
  memcpy(s->lasthi, s->hi, (size_t)s->hp[N] * sizeof(int));
  s->lastN = N;
  return MBS_OK;
}

/* the sparse LU s ready for its pattern (N unknowns): created, or analysed afresh when the
 * pattern is not the last one; order NULL (KLU's AMD) or the pivot order; MBS_ERR_NOMEM */
static mbsStatus sparse_prepare(SparseLU *s, int N, const int *order, mbsError *err) {
  if (!s->ls) {
    s->ls = mbs_linsolve_create(MBS_LINEAR_KLU, N, s->hp, s->hi, err);
    if (!s->ls) {
      return err->status;
    }
    /* G's form: rows I - D (...) + r D G, of order one by construction (r = 1 / max diag
     * G); the augmented form: scaled by construction (aug_values). The patterns are ours
     * (sorted, no duplicates), so KLU neither scales nor checks them (its check, a pass
     * over the entries per factorization, took a fifth of the time of the
     * refactorizations of a pile's island) */
    mbs_linsolve_set_scaling(s->ls, -1);
    /* an island is connected: its symmetric pattern is one block, which KLU's BTF search
     * only confirms. Its Newton matrix changes with the contacts' states between
     * iterations: a pivot taken off the diagonal in a contact's row becomes an exact zero
     * once that contact opens (its row is then the identity's), and the condition estimate
     * of the last fresh pivoting is that of another matrix. Pivots kept on the diagonal
     * down to ISLAND_PIVOT_TOL of the column, and reused orders down to ISLAND_REPIVOT of
     * that estimate, took a pile of 100 dice (0.70 -> 0.71 s) from 3.9 fresh pivotings per
     * step (1.1 for a new pattern, 1.5 after a zero pivot, 1.3 on the estimate) to 1.2, and
     * its instructions by 13 % (the default 0.1 and 1e-3 there) */
    mbs_linsolve_set_pivoting(s->ls, ISLAND_PIVOT_TOL, ISLAND_REPIVOT, 0);
    s->held = 0;
  } else if (!same_pattern(s, N)) {
    mbs_linsolve_reanalyse(s->ls, N, s->hp, s->hi);
    s->held = 0;
  }
  mbs_linsolve_set_order(s->ls, order);
  if (keep_pattern(s, N) != MBS_OK) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory for the contact problem");
  }
  return MBS_OK;
}

/* ---- the augmented form of an island's Newton system ----
 * G = Wl^T X / theta (mbsContactProblem.sptr ...) couples every two contacts on a body, so
 * a body on 1000 points has a dense G, and H = B G + A' (A' = A + (eps + reg) B) a dense
 * 3000 x 3000 LU. With y = X dL / theta, the change of the touched components' coordinates'
 * velocities, the Newton system H dL = -Phi is equivalently
 *     [ A'          B Wl^T ] [dL]   [-Phi]
 *     [ -s X/theta  s I    ] [y ] = [ 0  ]
 * (eliminating y gives H back: the Schur complement of the block s I), whose entries grow
 * with the contacts and their W and X entries. The unknowns are ordered dL first (contact by
 * contact: eliminating dL_k touches only the y of k's components, no other contact's dL, so
 * the contacts' elimination makes no fill but the Schur complement on y), then y component
 * by component in an AMD order of the graph of the components the contacts join; the LU of
 * that Schur complement (dense within a component: a rigid body's 12 coordinates, a beam's
 * all) carries the rest. X's columns span their components' coordinates, so a contact on a
 * beam of many elements costs all of the beam's: use_augmented keeps G's pattern there. The scale s
 * (a power of 2, exact) of the y rows keeps KLU's partial pivoting within each contact's 3 x 3
 * block: a sticking contact's column holds only (eps + reg) r on its diagonal, and a pivot in a y
 * row would join that contact's rows to every later column (a dense U). The Newton iterates are H's
 * in exact arithmetic (Alart-Curnier's generalized Newton, the Schur complement equivalence); in
 * floating point the elimination divides by A' (of order eps r for sticking contacts), as the
 * Levenberg-Marquardt step itself does. */

/* ymap back to -1 on the island's coordinates */
static void aug_release(mbsContactSolver *cs) {
  for (int c = 0; c < cs->nci; c++) {
    for (int t = 0; t < cs->clen[c]; t++) {
      cs->ymap[cs->cy0[c] + t] = -1;
    }
  }
}

/* the contacts' segments of an island: each component's coordinates' local unknowns (3n +
 * cfirst[c] + j, the components in an AMD order of their graph), into ymap / ycomp; returns
 * the coordinates (the y's), -1 out of memory */
static int aug_components(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem, int n,
                          mbsError *err) {
  if (p->ny > cs->ycap) {
    if (!grow((void **)&cs->ymap, (size_t)p->ny, sizeof(int)) ||
        !grow((void **)&cs->ycomp, (size_t)p->ny, sizeof(int))) {
      goto nomem;
    }
    for (int g = cs->ycap; g < p->ny; g++) {
      cs->ymap[g] = -1;
    }
    cs->ycap = p->ny;
  }
  int nseg = 0;
  for (int i = 0; i < n; i++) {
    nseg += p->sptr[mem[i] + 1] - p->sptr[mem[i]];
  }
  if (nseg + 1 > cs->ccap) {
    int c = nseg + 1;
    if (!grow((void **)&cs->cy0, (size_t)c, sizeof(int)) ||
        !grow((void **)&cs->clen, (size_t)c, sizeof(int)) ||
        !grow((void **)&cs->cfirst, (size_t)c, sizeof(int)) ||
        !grow((void **)&cs->cperm, (size_t)c, sizeof(int)) ||
        !grow((void **)&cs->ccnt, (size_t)c, sizeof(int)) ||
        !grow((void **)&cs->cgp, (size_t)c + 1, sizeof(int))) {
      goto nomem;
    }
    cs->ccap = c;
  }
  /* the components, numbered as first met (ycomp at their first coordinate) */
  int nci = 0;
  long ge = 0;
  for (int i = 0; i < n; i++) {
    int k = mem[i], ns = p->sptr[k + 1] - p->sptr[k];
    for (int q = p->sptr[k]; q < p->sptr[k + 1]; q++) {
      int y0 = p->sy0[q];
      if (cs->ymap[y0] < 0) {
        cs->ymap[y0] = 0; /* marked: numbered below */
        cs->ycomp[y0] = nci;
        cs->cy0[nci] = y0;
        cs->clen[nci] = p->slen[q];
        nci++;
      }
    }
    ge += (long)ns * ns;
  }
  /* their graph: the components each contact touches form a clique (an AMD input may hold
   * duplicates) */
  if (ge > cs->cgcap) {
    long c = ge > 2L * cs->cgcap ? ge : 2L * cs->cgcap;
    if (c > INT_MAX || !grow((void **)&cs->cgi, (size_t)c, sizeof(int))) {
      goto nomem;
    }
    cs->cgcap = (int)c;
  }
  memset(cs->ccnt, 0, (size_t)nci * sizeof(int));
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    for (int q = p->sptr[k]; q < p->sptr[k + 1]; q++) {
      cs->ccnt[cs->ycomp[p->sy0[q]]] += p->sptr[k + 1] - p->sptr[k];
    }
  }
  cs->cgp[0] = 0;
  for (int c = 0; c < nci; c++) {
    cs->cgp[c + 1] = cs->cgp[c] + cs->ccnt[c];
    cs->ccnt[c] = cs->cgp[c];
  }
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    for (int q = p->sptr[k]; q < p->sptr[k + 1]; q++) {
      int c = cs->ycomp[p->sy0[q]];
      for (int q2 = p->sptr[k]; q2 < p->sptr[k + 1]; q2++) {
        cs->cgi[cs->ccnt[c]++] = cs->ycomp[p->sy0[q2]];
      }
    }
  }
  cs->nci = nci;
  if (mbs_linsolve_amd(nci, cs->cgp, cs->cgi, cs->cperm, err) != MBS_OK) {
    aug_release(cs);
    return -1;
  }
  /* the coordinates' local unknowns in that order */
  int N = 3 * n, ny = 0;
  for (int j = 0; j < nci; j++) {
    int c = cs->cperm[j];
    cs->cfirst[c] = ny;
    for (int t = 0; t < cs->clen[c]; t++) {
      cs->ymap[cs->cy0[c] + t] = N + ny + t;
      cs->ycomp[cs->cy0[c] + t] = c;
    }
    ny += cs->clen[c];
  }
  cs->nci = nci;
  return ny;
nomem:
  mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory for the contact problem");
  return -1;
}

/* the augmented form's pattern (CSC, M = 3n + ny unknowns) into cs->alu, and for each entry
 * of the y columns the W entry and contact it comes from (awe, awk); MBS_ERR_NOMEM */
static mbsStatus aug_pattern(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem,
                             int n, int ny, mbsError *err) {
  int N = 3 * n, M = N + ny;
  long nz = ny, nw = 0;
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    nz += 9;
    for (int q = p->sptr[k]; q < p->sptr[k + 1]; q++) {
      nz += 3L * p->slen[q];
    }
    nw += p->wptr[k + 1] - p->wptr[k];
  }
  nz += 3 * nw;
  SparseLU *s = &cs->alu;
  if (!sparse_reserve(s, M, nz)) {
    goto nomem;
  }
  if (M > cs->mcap) {
    if (!grow((void **)&cs->ident, (size_t)M, sizeof(int)) ||
        !grow((void **)&cs->arhs, (size_t)M, sizeof(double)) ||
        !grow((void **)&cs->asol, (size_t)M, sizeof(double)) ||
        !grow((void **)&cs->yv, (size_t)M, sizeof(double))) {
      goto nomem;
    }
    for (int j = cs->mcap; j < M; j++) {
      cs->ident[j] = j;
    }
    cs->mcap = M;
  }
  if (nw > cs->awcap) {
    long c = nw > 2L * cs->awcap ? nw : 2L * cs->awcap;
    if (c > INT_MAX || !grow((void **)&cs->awe, (size_t)c, sizeof(int)) ||
        !grow((void **)&cs->awk, (size_t)c, sizeof(int))) {
      goto nomem;
    }
    cs->awcap = (int)c;
  }
  /* dL columns: the contact's block rows, then its components' coordinates ascending */
  int e = 0;
  for (int i = 0; i < n; i++) {
    int k = mem[i], q0 = p->sptr[k], ns = p->sptr[k + 1] - q0, ord[SEG_MAX];
    for (int t = 0; t < ns; t++) { /* its segments by local unknown (insertion sort) */
      int v = q0 + t, j = t - 1;
      while (j >= 0 && cs->ymap[p->sy0[ord[j]]] > cs->ymap[p->sy0[v]]) {
        ord[j + 1] = ord[j];
        j--;
      }
      ord[j + 1] = v;
    }
    for (int b = 0; b < 3; b++) {
      s->hp[3 * i + b] = e;
      for (int a = 0; a < 3; a++) {
        s->hi[e++] = 3 * i + a;
      }
      for (int t = 0; t < ns; t++) {
        int y = cs->ymap[p->sy0[ord[t]]];
        for (int j = 0; j < p->slen[ord[t]]; j++) {
          s->hi[e++] = y + j;
        }
      }
    }
  }
  /* y columns: the rows of the contacts whose Wl holds the coordinate, then the diagonal
   * (counting sort by coordinate; contacts ascending) */
  int *cnt = s->hp + N; /* column starts, counted in place */
  memset(cnt, 0, (size_t)(ny + 1) * sizeof(int));
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    for (int q = p->wptr[k]; q < p->wptr[k + 1]; q++) {
      cnt[cs->ymap[p->wy[q]] - N + 1]++;
    }
  }
  for (int j = 0; j < ny; j++) {
    cnt[j + 1] += cnt[j];
  }
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    for (int q = p->wptr[k]; q < p->wptr[k + 1]; q++) {
      int slot = cnt[cs->ymap[p->wy[q]] - N]++;
      cs->awe[slot] = q;
      cs->awk[slot] = k;
    }
  }
  /* cnt[j] now ends column j's W entries (read before hp[N + j], the same int, becomes
   * the column's start): the rows */
  int w0 = 0;
  for (int j = 0; j < ny; j++) {
    int w1 = cnt[j];
    s->hp[N + j] = e;
    for (int t = w0; t < w1; t++) {
      int kl = cs->local[cs->awk[t]];
      for (int a = 0; a < 3; a++) {
        s->hi[e++] = 3 * kl + a;
      }
    }
    s->hi[e++] = N + j;
    w0 = w1;
  }
  s->hp[M] = e;
  return MBS_OK;
nomem:
  return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                       "out of memory for the contact problem's augmented Newton matrix");
}

/* the augmented form's values (the order of aug_pattern) at the island's A, B in cs->D, B,
 * the term c = eps + reg and the y rows' scale sc */
static void aug_values(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem, int n,
                       int ny, double c, double sc) {
  SparseLU *s = &cs->alu;
  int e = 0, N = 3 * n;
  double xs = -sc / p->theta;
  for (int i = 0; i < n; i++) {
    int k = mem[i], q0 = p->sptr[k], ns = p->sptr[k + 1] - q0, ord[SEG_MAX];
    for (int t = 0; t < ns; t++) {
      int v = q0 + t, j = t - 1;
      while (j >= 0 && cs->ymap[p->sy0[ord[j]]] > cs->ymap[p->sy0[v]]) {
        ord[j + 1] = ord[j];
        j--;
      }
      ord[j + 1] = v;
    }
    const double *Ak = cs->D + 9 * k, *Bk = cs->B + 9 * k;
    for (int b = 0; b < 3; b++) {
      for (int a = 0; a < 3; a++) {
        s->hx[e++] = Ak[3 * a + b] + c * Bk[3 * a + b];
      }
      for (int t = 0; t < ns; t++) {
        const double *x = p->xval + p->soff[ord[t]] + (long)b * p->slen[ord[t]];
        for (int j = 0; j < p->slen[ord[t]]; j++) {
          s->hx[e++] = xs * x[j];
        }
      }
    }
  }
  /* y columns: B_k Wl_k^T, then sc on the diagonal */
  int t = 0;
  for (int j = 0; j < ny; j++) {
    int end = s->hp[N + j + 1] - 1;
    for (int q = s->hp[N + j]; q < end; q += 3, t++) {
      int k = cs->awk[t];
      const double *Bk = cs->B + 9 * k, *w = p->wval + 3 * (long)cs->awe[t];
      for (int a = 0; a < 3; a++) {
        s->hx[q + a] = Bk[3 * a] * w[0] + Bk[3 * a + 1] * w[1] + Bk[3 * a + 2] * w[2];
      }
    }
    s->hx[end] = sc;
  }
}

/* gd = G dL of the island through the factors: y = X dL / theta, gd_k = Wl_k^T y (cost:
 * the X and W entries, not G's blocks) */
static void aug_gdl(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem, int n, int ny,
                    const double *dL, double *gd) {
  int N = 3 * n;
  double *y = cs->yv;
  memset(y, 0, (size_t)ny * sizeof(double));
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    for (int q = p->sptr[k]; q < p->sptr[k + 1]; q++) {
      double *yo = y + cs->ymap[p->sy0[q]] - N;
      int len = p->slen[q];
      for (int b = 0; b < 3; b++) {
        const double *x = p->xval + p->soff[q] + (long)b * len;
        double d = dL[3 * i + b] / p->theta;
        for (int j = 0; j < len; j++) {
          yo[j] += x[j] * d;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    double s3[3] = {0.0, 0.0, 0.0};
    for (int q = p->wptr[k]; q < p->wptr[k + 1]; q++) {
      double yq = y[cs->ymap[p->wy[q]] - N];
      for (int a = 0; a < 3; a++) {
        s3[a] += p->wval[3 * (long)q + a] * yq;
      }
    }
    memcpy(gd + 3 * i, s3, sizeof(s3));
  }
}

/* 1 if island mem[0..n) takes the augmented form (mbsContactProblem.augmented): where its
 * entries (the contacts' blocks, X and W entries and the y's) are fewer than those of H on
 * G's pattern (9 per block; the LU's fill grows alike in both) */
static int use_augmented(const mbsContactProblem *p, const int *mem, int n) {
  if (p->ny <= 0 || p->augmented < 0 || n < 2) {
    return 0;
  }
  for (int i = 0; i < n; i++) {
    if (p->sptr[mem[i] + 1] - p->sptr[mem[i]] > SEG_MAX) {
      return 0;
    }
  }
  if (p->augmented == 2) {
    return 1;
  }
  if (3 * n <= DENSE_MAX) {
    return 0;
  }
  if (p->augmented == 1) {
    return 1;
  }
  double nb = 0.0, na = 0.0;
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    nb += 9.0 * (p->gptr[k + 1] - p->gptr[k]);
    na += 9.0 + 3.0 * (p->wptr[k + 1] - p->wptr[k]);
    for (int q = p->sptr[k]; q < p->sptr[k + 1]; q++) {
      na += 4.0 * p->slen[q]; /* X's 3 columns, and y itself (shared: an upper bound) */
    }
  }
  return na * AUG_RATIO < nb;
}

/* Newton (with the Levenberg-Marquardt term and a line search) on the island's Phi from
 * p->L, stalled after window iterations that do not halve the residual; returns the
 * iterations, the residual into *res; p->L holds the best iterate */
static int island_newton(const mbsContactProblem *p, mbsContactSolver *cs, const int *mem, int n,
                         double reg, int window, double *res, mbsContactStats *st,
                         mbsError *err) {
  int N = 3 * n, aug = use_augmented(p, mem, n), dense = !aug && N <= DENSE_MAX, one = 1;
  int ny = 0, M = N;
  SparseLU *sp = aug ? &cs->alu : &cs->glu;
  if (aug) {
    ny = aug_components(p, cs, mem, n, err);
    if (ny < 0) {
      return -1;
    }
    M = N + ny;
    if (aug_pattern(p, cs, mem, n, ny, err) != MBS_OK ||
        sparse_prepare(sp, M, cs->ident, err) != MBS_OK) {
      aug_release(cs);
      return -1;
    }
  } else {
    if (!dense && (island_pattern(p, cs, mem, n, err) != MBS_OK ||
                   sparse_prepare(sp, N, NULL, err) != MBS_OK)) {
      return -1;
    }
    island_transpose(p, cs, mem, n);
  }
  if (dense && N > cs->Hcap) {
    if (!grow((void **)&cs->H, (size_t)N * N, sizeof(double)) ||
        !grow((void **)&cs->piv, (size_t)N, sizeof(int))) {
      mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory for the contact problem");
      return -1;
    }
    cs->Hcap = N;
  }
  double gmax = 0.0, rmin = INFINITY;
  for (int i = 0; i < n; i++) {
    gmax = maxd(gmax, 1.0 / cs->r[mem[i]]);
    rmin = fmin(rmin, cs->r[mem[i]]);
  }
  /* the augmented form's y rows' scale: their entries in a contact's column, s |X| / theta,
   * stay below 1e-3 (c rmin)^2 with c >= gmax LM_MIN the smallest term, below the smallest
   * pivot that contact's block can offer after the block's own elimination; one scale for
   * the whole iteration (KLU's reused pivot order compares condition estimates) */
  double sc = 1.0;
  if (aug) {
    double xmax = 0.0;
    for (int i = 0; i < n; i++) {
      int k = mem[i];
      for (int q = p->sptr[k]; q < p->sptr[k + 1]; q++) {
        const double *x = p->xval + p->soff[q];
        for (long j = 0; j < 3L * p->slen[q]; j++) {
          xmax = maxd(xmax, fabs(x[j]));
        }
      }
    }
    double cr = (gmax * LM_MIN + reg) * rmin, want = 1e-3 * cr * cr / (xmax / p->theta + 1e-300);
    int ex;
    frexp(want, &ex);
    sc = ldexp(1.0, ex < -900 ? -900 : ex - 1);
  }
  /* xi, Phi, D and the merit at p->L */
  double merit = 0.0, r0 = 0.0;
  for (int i = 0; i < n; i++) {
    int k = mem[i];
    xi_row(p, cs, k, p->L, cs->xi + 3 * k);
    for (int a = 0; a < 3; a++) {
      cs->xi[3 * k + a] += reg * (p->L[3 * k + a] - cs->Lb[3 * k + a]);
    }
    r0 = maxd(r0, law_phi(p, cs, k, p->L + 3 * k, cs->xi + 3 * k, cs->phi + 3 * k,
                          cs->D + 9 * k, cs->B + 9 * k, &merit));
  }
  *res = r0;
  double lm = 1.0; /* raises the Levenberg-Marquardt term after a failed line search */
  double rbest = *res, rlow = *res; /* rlow: the lowest residual, its impulses in nbest */
  double mhist[NONMONO];
  for (int j = 0; j < NONMONO; j++) {
    mhist[j] = merit;
  }
  for (int i = 0; i < n; i++) {
    memcpy(cs->nbest + 3 * mem[i], p->L + 3 * mem[i], 3 * sizeof(double));
  }
  int it, slow = 0;
  /* the LU is kept while the steps it gives contract the residual by CHORD_CONTRACT (a
   * factorization costs what many solves cost); the same sparse island again (the step's next
   * alternation) starts from the LU it left */
  int lu_ok = !dense && sp->held, refactor = !lu_ok, chord = 0;
  for (it = 0; it < p->max_iter && *res > GOAL * p->tol &&
              slow < (rlow <= p->accept ? STALL_ITER_OK : window);
       it++) {
    double eps = gmax * fmin(LM_MAX, lm * maxd(LM_MIN, *res / p->vscale));
    double res_before = *res;
    chord = !refactor && lu_ok;
    if (chord) {
      goto solve;
    }
    if (aug) {
      aug_values(p, cs, mem, n, ny, eps + reg, sc);
      mbsError lerr;
      lu_ok = mbs_linsolve_factor(sp->ls, sp->hx, 0, &lerr) == MBS_OK;
      goto factored;
    }
    /* H_kl = B_k G_kl + delta_kl (A_k + eps B_k) (law_phi; unilateral: I - D (I - R (G +
     * eps I))) */
    if (dense) {
      memset(cs->H, 0, (size_t)N * N * sizeof(double));
    }
    /* block by block (its column b of H at hp[3 i + b] in the sparse pattern, island_pattern's
     * order: the blocks of row l, three entries each) */
    double epsr = eps + reg;
    for (int i = 0; i < n; i++) {
      int l = mem[i], q0 = p->gptr[l];
      for (int q = q0; q < p->gptr[l + 1]; q++) {
        int k = p->gcol[q], kl = cs->local[k];
        const double *g = p->gval + 9 * (size_t)cs->tpos[q]; /* block (k, l) */
        const double *Ak = cs->D + 9 * k, *Bk = cs->B + 9 * k;
        for (int b = 0; b < 3; b++) {
          double gb0 = g[b], gb1 = g[3 + b], gb2 = g[6 + b];
          double v0 = Bk[0] * gb0 + Bk[1] * gb1 + Bk[2] * gb2;
          double v1 = Bk[3] * gb0 + Bk[4] * gb1 + Bk[5] * gb2;
          double v2 = Bk[6] * gb0 + Bk[7] * gb1 + Bk[8] * gb2;
          if (k == l) {
            v0 += Ak[b] + epsr * Bk[b];
            v1 += Ak[3 + b] + epsr * Bk[3 + b];
            v2 += Ak[6 + b] + epsr * Bk[6 + b];
          }
          double *h = dense ? cs->H + (size_t)(3 * kl) + (size_t)N * (3 * i + b)
                            : sp->hx + sp->hp[3 * i + b] + 3 * (q - q0);
          h[0] = v0;
          h[1] = v1;
          h[2] = v2;
        }
      }
    }
    if (dense) {
      int info = 0;
      dgetrf_(&N, &N, cs->H, &N, cs->piv, &info);
      lu_ok = info == 0;
    } else {
      mbsError lerr;
      lu_ok = mbs_linsolve_factor(sp->ls, sp->hx, 0, &lerr) == MBS_OK;
    }
  factored:
    refactor = 0;
    if (!lu_ok) {
      if (lm >= 1e12) {
        break;
      }
      lm *= 100.0;
      slow++;
      continue;
    }
  solve:
    for (int i = 0; i < n; i++) {
      int k = mem[i];
      for (int a = 0; a < 3; a++) {
        cs->dL[3 * i + a] = -cs->phi[3 * k + a];
      }
    }
    if (dense) {
      int info = 0;
      dgetrs_("N", &N, &one, cs->H, &N, cs->piv, cs->dL, &N, &info, 1);
    } else {
      mbsError lerr;
      double *b = aug ? cs->arhs : cs->dL, *x = aug ? cs->asol : cs->gd;
      if (aug) {
        memcpy(b, cs->dL, (size_t)N * sizeof(double));
        memset(b + N, 0, (size_t)ny * sizeof(double));
      }
      if (mbs_linsolve_solve(sp->ls, sp->hx, b, x, &lerr) != MBS_OK) {
        lu_ok = 0;
        refactor = 1;
        slow++;
        continue;
      }
      memcpy(cs->dL, x, (size_t)N * sizeof(double));
    }
    /* gd = G dL (island rows): through the factors in the augmented form, else G's blocks;
     * then the line search along dL */
    if (aug) {
      aug_gdl(p, cs, mem, n, ny, cs->dL, cs->gd);
      for (int j = 0; j < N; j++) {
        cs->gd[j] += reg * cs->dL[j];
      }
    } else {
      for (int i = 0; i < n; i++) {
        int k = mem[i];
        double s[3] = {0.0, 0.0, 0.0};
        for (int q = p->gptr[k]; q < p->gptr[k + 1]; q++) {
          int li = cs->local[p->gcol[q]];
          const double *g = p->gval + 9 * (size_t)q, *d = cs->dL + 3 * li;
          s[0] += g[0] * d[0] + g[1] * d[1] + g[2] * d[2];
          s[1] += g[3] * d[0] + g[4] * d[1] + g[5] * d[2];
          s[2] += g[6] * d[0] + g[7] * d[1] + g[8] * d[2];
        }
        for (int a = 0; a < 3; a++) {
          s[a] += reg * cs->dL[3 * i + a];
        }
        memcpy(cs->gd + 3 * i, s, sizeof(s));
      }
    }
    double alpha = 1.0, mt = INFINITY, rt = INFINITY, mref = merit;
    for (int j = 0; j < NONMONO && !chord; j++) {
      mref = maxd(mref, mhist[j]); /* a step on a kept LU must descend */
    }
    for (int ls = 0; ls < 30; ls++) {
      mt = 0.0;
      rt = 0.0;
      for (int i = 0; i < n; i++) {
        int k = mem[i];
        for (int a = 0; a < 3; a++) {
          cs->Lt[3 * k + a] = p->L[3 * k + a] + alpha * cs->dL[3 * i + a];
          cs->xit[3 * k + a] = cs->xi[3 * k + a] + alpha * cs->gd[3 * i + a];
        }
        rt = maxd(rt, law_phi(p, cs, k, cs->Lt + 3 * k, cs->xit + 3 * k, cs->phit + 3 * k, NULL,
                              NULL, &mt));
      }
      if (mt <= mref - 1e-4 * alpha * merit || rt <= GOAL * p->tol) {
        break;
      }
      alpha *= 0.5;
    }
    if (!(mt <= mref - 1e-4 * alpha * merit) && !(rt <= GOAL * p->tol)) {
      refactor = 1;
      if (chord) {
        continue; /* the kept LU gave no descent: a fresh one */
      }
      if (lm >= 1e12) {
        break; /* no descent at any damping: stalled */
      }
      lm *= 100.0;
      slow++;
      continue;
    }
    lm = maxd(1.0, lm / 100.0);
    merit = 0.0;
    *res = 0.0;
    for (int i = 0; i < n; i++) {
      int k = mem[i];
      memcpy(p->L + 3 * k, cs->Lt + 3 * k, 3 * sizeof(double));
      memcpy(cs->xi + 3 * k, cs->xit + 3 * k, 3 * sizeof(double));
      *res = maxd(*res, law_phi(p, cs, k, p->L + 3 * k, cs->xi + 3 * k, cs->phi + 3 * k,
                                cs->D + 9 * k, cs->B + 9 * k, &merit));
    }
    mhist[it % NONMONO] = merit;
    if (*res < rlow) {
      rlow = *res;
      for (int i = 0; i < n; i++) {
        memcpy(cs->nbest + 3 * mem[i], p->L + 3 * mem[i], 3 * sizeof(double));
      }
    }
    refactor = !(*res <= CHORD_CONTRACT * res_before);
    /* stalled: the residual has not halved for window iterations (degenerate contacts at
     * the boundary of their cones, where the iteration creeps) */
    if (*res <= 0.5 * rbest) {
      rbest = *res;
      slow = 0;
    } else {
      slow++;
    }
  }
  if (*res > rlow) { /* the non-monotone search left a worse iterate: the best one */
    for (int i = 0; i < n; i++) {
      memcpy(p->L + 3 * mem[i], cs->nbest + 3 * mem[i], 3 * sizeof(double));
    }
    *res = rlow;
  }
  cs->glu.held = !dense && !aug && lu_ok;
  cs->alu.held = aug && lu_ok;
  if (!dense && lu_ok && sp->hp[M] > st->lu_matrix) { /* the largest sparse one's fill */
    st->lu_matrix = sp->hp[M];
    st->lu_factors = mbs_linsolve_lu_entries(sp->ls);
  }
  if (aug) {
    aug_release(cs);
  }
  return it;
}

int mbs_contact_solve(mbsContactSolver *cs, const mbsContactProblem *p, mbsContactStats *st,
                      mbsError *err) {
  int n = p->n;
  memset(st, 0, sizeof(*st));
  if (n == 0) {
    return 1;
  }
  if (reserve(cs, n, p->gptr[n], err) != MBS_OK) {
    return -1;
  }
  memcpy(cs->Lb, p->L, 3 * (size_t)n * sizeof(double));
  /* r_k from the diagonal blocks; the islands by union-find over the blocks */
  for (int k = 0; k < n; k++) {
    cs->parent[k] = k;
  }
  for (int k = 0; k < n; k++) {
    cs->r[k] = 1.0;
    for (int q = p->gptr[k]; q < p->gptr[k + 1]; q++) {
      int l = p->gcol[q];
      if (l == k) {
        const double *g = p->gval + 9 * (size_t)q;
        double dmax = maxd(g[0], maxd(g[4], g[8]));
        cs->r[k] = dmax > 0.0 ? 1.0 / dmax : 1.0;
      } else {
        int a = uf_find(cs->parent, k), b = uf_find(cs->parent, l);
        if (a != b) {
          cs->parent[a < b ? b : a] = a < b ? a : b;
        }
      }
    }
  }
  /* the island of each contact: its root's number (roots first: member holds them) */
  int nisl = 0;
  for (int k = 0; k < n; k++) {
    cs->member[k] = uf_find(cs->parent, k);
  }
  for (int k = 0; k < n; k++) {
    cs->local[k] = cs->member[k] == k ? nisl++ : -1;
  }
  for (int k = 0; k < n; k++) {
    cs->parent[k] = cs->local[cs->member[k]];
  }
  memset(cs->start, 0, (size_t)(nisl + 1) * sizeof(int));
  for (int k = 0; k < n; k++) {
    cs->start[cs->parent[k] + 1]++;
  }
  for (int i = 0; i < nisl; i++) {
    cs->start[i + 1] += cs->start[i];
  }
  /* members grouped by island in ascending order, and each one's index in its island */
  for (int i = 0; i < nisl; i++) {
    cs->pos[i] = cs->start[i];
  }
  for (int k = 0; k < n; k++) {
    int i = cs->parent[k];
    cs->local[k] = cs->pos[i] - cs->start[i];
    cs->member[cs->pos[i]++] = k;
  }
  st->islands = nisl;
  int converged = 1;
  for (int i = 0; i < nisl; i++) {
    const int *mem = cs->member + cs->start[i];
    int ni = cs->start[i + 1] - cs->start[i];
    st->largest = ni > st->largest ? ni : st->largest;
    double res;
    int pre = p->max_iter < PRE_SWEEPS ? p->max_iter : PRE_SWEEPS;
    /* Newton's stall window grows with the island: on a large pile of redundant frictional
     * contacts (G rank deficient, the impulses non-unique) the semi-smooth Newton iteration
     * creeps with short line-search steps while the points' stick, slip and open states
     * settle, one switch after another, before its fast local convergence sets in (Alart and
     * Curnier's method converges fast once the active set is identified): the damped elastic
     * bowl's 157-point island takes 30-50 iterations without halving its residual, then
     * reaches 1e-7 to 1e-11 of the velocity scale, where a window of 8, the sweeps and the
     * compliance stopped near 1e-4 and the step was halved. Capped: on 400-point islands of
     * 100 dice that do stall, each iteration costs ~2 ms */
    int window = STALL_ITER + ni / STALL_PER;
    window = window < STALL_MAX ? window : STALL_MAX;
    st->sweeps += sweeps(p, cs, mem, ni, ni == 1 ? 1 : pre, &res);
    if (!(res <= p->tol) && ni > 1) {
      memcpy(cs->best, p->L, 3 * (size_t)n * sizeof(double)); /* before Newton */
      double rb = res;
      int it = island_newton(p, cs, mem, ni, 0.0, window, &res, st, err);
      if (it < 0) {
        return -1;
      }
      st->newton += it;
      if (!(res <= p->tol)) {
        if (rb < res) { /* Newton made it worse: back to the sweeps' impulses */
          for (int m = 0; m < ni; m++) {
            memcpy(p->L + 3 * mem[m], cs->best + 3 * mem[m], 3 * sizeof(double));
          }
          res = rb;
        }
        if (!(res <= p->accept)) {
          st->sweeps += sweeps(p, cs, mem, ni, p->max_iter, &res);
        }
      }
    }
    if (!(res <= p->tol)) {
      res = island_residual(p, cs, mem, ni, p->L);
      st->stalled += res <= p->accept;
    }
    if (!(res <= p->accept) && ni > 1 && p->reg > 0.0) {
      /* the last resort: the problem with a compliance reg of every contact (G + reg I is
       * positive definite: a pile jammed by friction, whose rigid problem has no solution
       * the iterations find, has one then), kept when its residual in the rigid problem is
       * within accept_reg */
      double gmax = 0.0, rr;
      for (int m = 0; m < ni; m++) {
        gmax = maxd(gmax, 1.0 / cs->r[mem[m]]);
        memcpy(cs->best + 3 * mem[m], p->L + 3 * mem[m], 3 * sizeof(double));
      }
      int it = island_newton(p, cs, mem, ni, p->reg * gmax, window, &rr, st, err);
      if (it < 0) {
        return -1;
      }
      st->newton += it;
      double rreg = island_residual(p, cs, mem, ni, p->L);
      if (rreg <= p->accept_reg && rreg < res) {
        res = rreg;
        st->regularized++;
      } else {
        for (int m = 0; m < ni; m++) {
          memcpy(p->L + 3 * mem[m], cs->best + 3 * mem[m], 3 * sizeof(double));
        }
      }
    }
    st->residual = maxd(st->residual, res);
    converged &= res <= p->accept || (st->regularized > 0 && res <= p->accept_reg);
    /* the impulses in their cones C_k: Newton's iterates (and the compliance's solution)
     * may end a little outside, a normal impulse of -1e-9 N s in a pile's stalled step,
     * which no law admits and a record would carry into the next step's warm start; the
     * caller checks the velocities that the impulses give against its tolerance */
    for (int m = 0; m < ni; m++) {
      double *l = p->L + 3 * mem[m];
      double lt = hypot(l[1], l[2]), lim = p->mu[mem[m]] * l[0];
      if (!(l[0] >= 0.0)) {
        l[0] = l[1] = l[2] = 0.0;
      } else if (lt > lim) {
        double f = lim / lt;
        l[1] *= f;
        l[2] *= f;
      }
    }
  }
  return converged;
}
