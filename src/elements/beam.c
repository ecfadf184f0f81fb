/* beam.c: the geometrically exact (Simo-Reissner) beam element in director form (seed 000
 * sec. 5: a beam node is a frame phi, d1, d2, d3 like a rigid body's; Betsch & Steinmann
 * 2002, seed 000 ref. [16]).
 *
 * Discretisation. An element of order p (1 or 2) has p + 1 nodes, equally spaced in
 * xi in [-1, 1], with the Lagrange shape functions N_k(xi); phi and the three directors are
 * interpolated with the same N_k (the interpolated directors are neither unit nor
 * orthogonal: that is what makes the strains below quadratic in q). The reference arc
 * length L is the length of the polyline through the nodes' positions at t = 0, and
 * d/ds = (2 / L) d/dxi (J = L / 2).
 *
 * Strains (fields u_0 = phi, u_i = d_i, ' = d/ds):
 *     Gamma_i = d_i . phi'                     axial Gamma_1, shear Gamma_2, Gamma_3
 *     K_1 = 1/2 (d_3 . d_2' - d_2 . d_3')      torsion
 *     K_2 = 1/2 (d_1 . d_3' - d_3 . d_1')      bending about d_2
 *     K_3 = 1/2 (d_2 . d_1' - d_1 . d_2')      bending about d_3
 * i.e. K_i = 1/2 e_ijk d_k . d_j'. For orthonormal directors d_j' = k x d_j with the spatial
 * curvature k, so K_i = k . d_i and Gamma_i = d_i . phi' are the material strains of the
 * Simo-Reissner beam; all six are dot products of the fields and their derivatives, so they
 * are unchanged by rigid motions (objective) and each is a homogeneous quadratic form
 * eps_a = 1/2 q^T S_a q in the element's coordinates. A straight beam bent into an arc of
 * curvature kappa turning d_1 toward d_2 (about d_3) has K_3 = +kappa. The curvatures take
 * the skew part of d_i . d_j' only: the symmetric part (d_i . d_j)' / 2 is the rate of an
 * orthonormality constraint, not bending or torsion.
 *
 * The axial strain carries one more term, the length defect of the interpolated d_1:
 *     Gamma_1 = d_1 . phi' + c,    c = 1/2 sum_{k<l} N_k N_l |d1_k - d1_l|^2,
 * where d1_k are the nodes' (unit) directors. With unit nodal directors and sum N_k = 1,
 * 1 - |d_1|^2 = 2 c, so d_1 . phi' + c = d_1 . phi' / |d_1| to second order in the
 * nodes' relative angles (at a stretch d_1 . phi' near 1): the axial strain measured with
 * the unit director that the interpolation shrinks. Without c, nodal directors
 * that turn against each other (+-theta, alternating from node to node: a mode that only
 * EI resists under reduced integration) shorten d_1 by 1 - cos(theta) and with it the
 * axial strain, so an axial force N releases N L (1 - cos theta) per element against
 * 2 EI theta^2 / L of bending: for N > 4 EI / L^2 the element buckles in that zigzag. A
 * slack steel rope (EI = 0.2 N m^2, 20 elements of 0.57 m) buckled at 2.4 N of tension, 4 %
 * of its weight; with c the release is N L (1 - cos theta)^2 / 2, fourth order, and the
 * element is stable under tension. c is a homogeneous quadratic in the coordinates like
 * the other strains (and rigid-motion invariant), so the discrete gradient below stays
 * exact; it is O(L^2 kappa^2), so the element converges at the same order (and closer: a
 * uniform bending no longer stretches or shortens d_1 . phi' as the interpolation did).
 *
 * Energy: W = 1/2 sum_g w_g J sum_a k_a (eps_a - eps0_a)^2 at the Gauss points
 * (reduced integration against shear locking: one point for order 1, two for order 2),
 * k = {EA, GA2, GA3, GJ, EI2, EI3}, eps0 the strains of the initial configuration at the
 * same points (stress-free start; curved initial beams). With B_a = grad eps_a = S_a q:
 *     grad W = sum_g w J sum_a k_a (eps_a - eps0_a) B_a
 *     Hess W = sum_g w J sum_a k_a (B_a B_a^T + (eps_a - eps0_a) S_a).
 * Discrete gradient (strain-averaged form, seed 001 eq. 82-84; Gonzalez): since eps_a is a
 * homogeneous quadratic, eps_a(q_b) - eps_a(q_a) = B_a(q_m) . (q_b - q_a) exactly with
 * q_m = (q_a + q_b) / 2, so
 *     gbar = sum_g w J sum_a k_a ((eps_a(q_a) + eps_a(q_b)) / 2 - eps0_a) B_a(q_m)
 * gives W(q_b) - W(q_a) = gbar . (q_b - q_a) exactly; B_a(q_m) is the gradient of a
 * rigid-motion invariant at q_m, so gbar exerts no net force and no net moment about the
 * origin at q_m (linear and angular momentum are conserved by the em scheme, seed 000 eq. 57).
 * Damping (Kelvin-Voigt, stiffness-proportional with factor eta [s]): the strain rates
 * epsdot_a = B_a(q) . v and F = -eta sum_g w J sum_a k_a epsdot_a B_a(q), dissipative.
 *
 * Parameters (mbs_beam_element_setup):
 *   param[0..5] = k, param[6] = eta, param[7] = L,
 *   param[8..13] = eps0 at the midpoint xi = 0 (mbs_beam_element_strain),
 *   param[14 + 6 g + a] = eps0_a at Gauss point g;
 *   iparam[0] = order. Local coordinates: node k's phi, d1, d2, d3 at 12 k + 3 j + c. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "mbsim/elements.h"
#include "util/vec3.h"

#define BEAM_MAXNODE 3
#define BEAM_MAXQ (12 * BEAM_MAXNODE)
#define BEAM_MAXGAUSS 2

#define BP_K 0
#define BP_ETA 6
#define BP_LEN 7
#define BP_EPS0_MID 8
#define BP_EPS0_GAUSS 14
_Static_assert(BP_EPS0_GAUSS + 6 * BEAM_MAXGAUSS <= MBS_ELEM_NPARAM,
               "beam parameters must fit into mbsElem.param");

/* the strains as sums of terms c u_f . u'_h (fields 0 = phi, 1..3 = d1..d3) */
typedef struct {
  int a, f, h;
  double c;
} StrainTerm;

static const StrainTerm TERMS[9] = {
    {0, 1, 0, 1.0}, {1, 2, 0, 1.0},  {2, 3, 0, 1.0}, /* Gamma_i = d_i . phi' */
    {3, 3, 2, 0.5}, {3, 2, 3, -0.5},                 /* K_1 */
    {4, 1, 3, 0.5}, {4, 3, 1, -0.5},                 /* K_2 */
    {5, 2, 1, 0.5}, {5, 1, 2, -0.5},                 /* K_3 */
};
#define NTERM ((int)(sizeof(TERMS) / sizeof(TERMS[0])))

/* Gauss-Legendre points and weights on [-1, 1], by order: one point (order 1), two (order 2),
 * one fewer than the nodes (reduced integration) */
static const int NGAUSS[3] = {0, 1, 2};
static const double GAUSS_XI[3][BEAM_MAXGAUSS] = {
    {0.0, 0.0}, {0.0, 0.0}, {-0.57735026918962576451, 0.57735026918962576451}};
static const double GAUSS_W[3][BEAM_MAXGAUSS] = {{0.0, 0.0}, {2.0, 0.0}, {1.0, 1.0}};

/* the interpolated fields at one point of the element */
typedef struct {
  int nn;                   /* nodes */
  double N[BEAM_MAXNODE];   /* shape functions */
  double dN[BEAM_MAXNODE];  /* their derivatives d/ds */
  double u[4][3], du[4][3]; /* phi, d1, d2, d3 and their s-derivatives */
  double spread;            /* 1/2 sum_{k<l} N_k N_l |d1_k - d1_l|^2 (the axial correction) */
  double dev[BEAM_MAXNODE][3]; /* its gradient by node: N_k (d1_k - d1), d1 interpolated */
} BeamPoint;

static int beam_order(const mbsElem *e) {
  int p = e->iparam[0];
  assert(p == 1 || p == 2);
  assert(e->nq == 12 * (p + 1));
  return p;
}

/* Lagrange shape functions of order p on equally spaced nodes and d/ds = (2 / L) d/dxi */
static void shape(int p, double xi, double L, double *N, double *dN) {
  double s = 2.0 / L;
  if (p == 1) {
    N[0] = 0.5 * (1.0 - xi);
    N[1] = 0.5 * (1.0 + xi);
    dN[0] = -0.5 * s;
    dN[1] = 0.5 * s;
  } else {
    N[0] = 0.5 * xi * (xi - 1.0);
    N[1] = 1.0 - xi * xi;
    N[2] = 0.5 * xi * (xi + 1.0);
    dN[0] = (xi - 0.5) * s;
    dN[2] = (xi + 0.5) * s;
    dN[1] = -(dN[0] + dN[2]); /* sum dN = 0 as exactly as it rounds (point_fields) */
  }
}

/* shape functions only (the fields come from point_fields) */
static void point_shape(BeamPoint *P, int p, double xi, double L) {
  P->nn = p + 1;
  shape(p, xi, L, P->N, P->dN);
}

/* the fields at the point from local coordinates x (12 nn). The derivatives are summed
 * from the differences to node 0, u' = sum_k N_k' (x_k - x_0) (sum_k N_k' = 0): the terms are
 * then of the size of u' itself, not |x| / h, so a beam far from the origin keeps the
 * round-off of its strains (times EA in the gradient) at a few eps */
static void point_fields(BeamPoint *P, const double *x) {
  memset(P->u, 0, sizeof(P->u));
  memset(P->du, 0, sizeof(P->du));
  for (int k = 0; k < P->nn; k++) {
    for (int j = 0; j < 4; j++) {
      vaxpy(P->u[j], P->N[k], x + 12 * k + 3 * j);
      if (k > 0) {
        double dx[3];
        vsub(dx, x + 12 * k + 3 * j, x + 3 * j);
        vaxpy(P->du[j], P->dN[k], dx);
      }
    }
  }
  /* the axial correction from the differences of the nodes' d1 (no cancellation of terms
   * near 1): spread = 1/2 sum_{k<l} N_k N_l |d1_k - d1_l|^2, whose gradient by d1_k is
   * N_k sum_l N_l (d1_k - d1_l) = N_k (d1_k - d1) since sum_l N_l = 1 */
  P->spread = 0.0;
  memset(P->dev, 0, sizeof(P->dev));
  for (int k = 0; k < P->nn; k++) {
    for (int l = 0; l < P->nn; l++) {
      if (l == k) {
        continue;
      }
      double dd[3];
      vsub(dd, x + 12 * k + 3, x + 12 * l + 3);
      vaxpy(P->dev[k], P->N[k] * P->N[l], dd);
      if (l > k) {
        P->spread += 0.5 * P->N[k] * P->N[l] * vdot(dd, dd);
      }
    }
  }
}

static void strains(const BeamPoint *P, double eps[6]) {
  memset(eps, 0, 6 * sizeof(double));
  for (int t = 0; t < NTERM; t++) {
    eps[TERMS[t].a] += TERMS[t].c * vdot(P->u[TERMS[t].f], P->du[TERMS[t].h]);
  }
  eps[0] += P->spread;
}

/* B[a * n + i] = d eps_a / d x_i (n = 12 nn): with Pv_aj = d eps_a / d u_j and
 * Qv_aj = d eps_a / d u_j', the block of node k, field j is N_k Pv_aj + N_k' Qv_aj */
static void strain_gradients(const BeamPoint *P, double *B) {
  double Pv[6][4][3], Qv[6][4][3];
  memset(Pv, 0, sizeof(Pv));
  memset(Qv, 0, sizeof(Qv));
  for (int t = 0; t < NTERM; t++) {
    const StrainTerm *T = &TERMS[t];
    vaxpy(Pv[T->a][T->f], T->c, P->du[T->h]);
    vaxpy(Qv[T->a][T->h], T->c, P->u[T->f]);
  }
  int n = 12 * P->nn;
  for (int a = 0; a < 6; a++) {
    for (int k = 0; k < P->nn; k++) {
      for (int j = 0; j < 4; j++) {
        for (int c = 0; c < 3; c++) {
          B[a * n + 12 * k + 3 * j + c] = P->N[k] * Pv[a][j][c] + P->dN[k] * Qv[a][j][c];
        }
      }
    }
  }
  for (int k = 0; k < P->nn; k++) {
    for (int c = 0; c < 3; c++) {
      B[12 * k + 3 + c] += P->dev[k][c];
    }
  }
}

/* H += sum_a s_a S_a (S_a the constant Hessian of eps_a): the term c u_f . u'_h contributes
 * c N_k N_l' I3 to the block (node k field f, node l field h) and its transpose */
static void add_strain_hessians(const BeamPoint *P, const double s[6], double *H) {
  double M[4][4];
  memset(M, 0, sizeof(M));
  for (int t = 0; t < NTERM; t++) {
    M[TERMS[t].f][TERMS[t].h] += s[TERMS[t].a] * TERMS[t].c;
  }
  int n = 12 * P->nn;
  for (int f = 0; f < 4; f++) {
    for (int h = 0; h < 4; h++) {
      if (M[f][h] == 0.0) {
        continue;
      }
      for (int k = 0; k < P->nn; k++) {
        for (int l = 0; l < P->nn; l++) {
          double val = M[f][h] * P->N[k] * P->dN[l];
          int r = 12 * k + 3 * f, c = 12 * l + 3 * h;
          for (int i = 0; i < 3; i++) {
            H[(r + i) * n + c + i] += val;
            H[(c + i) * n + r + i] += val;
          }
        }
      }
    }
  }
  /* the axial correction's Hessian: (delta_kl N_k - N_k N_l) I3 on the d1 blocks */
  if (s[0] != 0.0) {
    for (int k = 0; k < P->nn; k++) {
      for (int l = 0; l < P->nn; l++) {
        double val = s[0] * ((k == l ? P->N[k] : 0.0) - P->N[k] * P->N[l]);
        for (int i = 0; i < 3; i++) {
          H[(12 * k + 3 + i) * n + 12 * l + 3 + i] += val;
        }
      }
    }
  }
}

/* H += sum_a s_a A_a C_a^T (rows of A and C: the strains' vectors of n entries) */
static void add_outer(const double s[6], const double *A, const double *C, int n, double *H) {
  for (int a = 0; a < 6; a++) {
    if (s[a] == 0.0) {
      continue;
    }
    const double *x = A + a * n, *y = C + a * n;
    for (int i = 0; i < n; i++) {
      double xi = s[a] * x[i];
      for (int j = 0; j < n; j++) {
        H[i * n + j] += xi * y[j];
      }
    }
  }
}

static double potential(const mbsModel *m, const mbsElem *e, const double *q) {
  (void)m;
  int p = beam_order(e);
  double x[BEAM_MAXQ], eps[6], W = 0.0, L = e->param[BP_LEN];
  mbs_elem_gather(e, q, x);
  for (int g = 0; g < NGAUSS[p]; g++) {
    BeamPoint P;
    point_shape(&P, p, GAUSS_XI[p][g], L);
    point_fields(&P, x);
    strains(&P, eps);
    const double *e0 = e->param + BP_EPS0_GAUSS + 6 * g;
    double wJ = GAUSS_W[p][g] * 0.5 * L, sum = 0.0;
    for (int a = 0; a < 6; a++) {
      double d = eps[a] - e0[a];
      sum += e->param[BP_K + a] * d * d;
    }
    W += 0.5 * wJ * sum;
  }
  return W;
}

static void gradient(const mbsModel *m, const mbsElem *e, const double *q, double *gr, double *H) {
  (void)m;
  int p = beam_order(e), n = e->nq;
  double x[BEAM_MAXQ], B[6 * BEAM_MAXQ], eps[6], L = e->param[BP_LEN];
  mbs_elem_gather(e, q, x);
  memset(gr, 0, (size_t)n * sizeof(double));
  for (int g = 0; g < NGAUSS[p]; g++) {
    BeamPoint P;
    point_shape(&P, p, GAUSS_XI[p][g], L);
    point_fields(&P, x);
    strains(&P, eps);
    strain_gradients(&P, B);
    const double *e0 = e->param + BP_EPS0_GAUSS + 6 * g;
    double wJ = GAUSS_W[p][g] * 0.5 * L, sig[6], kw[6];
    for (int a = 0; a < 6; a++) {
      kw[a] = wJ * e->param[BP_K + a];
      sig[a] = kw[a] * (eps[a] - e0[a]);
      for (int i = 0; i < n; i++) {
        gr[i] += sig[a] * B[a * n + i];
      }
    }
    if (H) {
      add_outer(kw, B, B, n, H);
      add_strain_hessians(&P, sig, H);
    }
  }
}

static void discrete_gradient(const mbsModel *m, const mbsElem *e, const double *qa,
                              const double *qb, double *gr, double *Hb) {
  (void)m;
  int p = beam_order(e), n = e->nq;
  double xa[BEAM_MAXQ], xb[BEAM_MAXQ], xm[BEAM_MAXQ], L = e->param[BP_LEN];
  double Bm[6 * BEAM_MAXQ], Bb[6 * BEAM_MAXQ], ea[6], eb[6];
  mbs_elem_gather(e, qa, xa);
  mbs_elem_gather(e, qb, xb);
  for (int i = 0; i < n; i++) {
    xm[i] = 0.5 * (xa[i] + xb[i]);
  }
  memset(gr, 0, (size_t)n * sizeof(double));
  for (int g = 0; g < NGAUSS[p]; g++) {
    BeamPoint Pa, Pb, Pm;
    point_shape(&Pa, p, GAUSS_XI[p][g], L);
    Pb = Pa;
    Pm = Pa;
    point_fields(&Pa, xa);
    point_fields(&Pb, xb);
    point_fields(&Pm, xm);
    strains(&Pa, ea);
    strains(&Pb, eb);
    strain_gradients(&Pm, Bm);
    const double *e0 = e->param + BP_EPS0_GAUSS + 6 * g;
    double wJ = GAUSS_W[p][g] * 0.5 * L, sig[6], kw[6];
    for (int a = 0; a < 6; a++) {
      kw[a] = wJ * e->param[BP_K + a];
      /* the stress of the averaged strain (seed 001 eq. 84) */
      sig[a] = kw[a] * (0.5 * (ea[a] + eb[a]) - e0[a]);
      for (int i = 0; i < n; i++) {
        gr[i] += sig[a] * Bm[a * n + i];
      }
    }
    if (Hb) {
      /* d/dq_b: d eps(q_b)/dq_b = B(q_b), d B(q_m)/dq_b = S / 2 */
      strain_gradients(&Pb, Bb);
      double half[6], sh[6];
      for (int a = 0; a < 6; a++) {
        half[a] = 0.5 * kw[a];
        sh[a] = 0.5 * sig[a];
      }
      add_outer(half, Bm, Bb, n, Hb);
      add_strain_hessians(&Pm, sh, Hb);
    }
  }
}

static void force(const mbsModel *m, const mbsElem *e, const double *q, const double *v, double t,
                  double *f, double *Fq, double *Fv) {
  (void)m;
  (void)t;
  int p = beam_order(e), n = e->nq;
  double eta = e->param[BP_ETA], L = e->param[BP_LEN];
  memset(f, 0, (size_t)n * sizeof(double));
  if (eta == 0.0) {
    return;
  }
  double x[BEAM_MAXQ], xv[BEAM_MAXQ], B[6 * BEAM_MAXQ], Bv[6 * BEAM_MAXQ];
  mbs_elem_gather(e, q, x);
  mbs_elem_gather(e, v, xv);
  for (int g = 0; g < NGAUSS[p]; g++) {
    BeamPoint P, Pv;
    point_shape(&P, p, GAUSS_XI[p][g], L);
    Pv = P;
    point_fields(&P, x);
    strain_gradients(&P, B);
    double wJ = GAUSS_W[p][g] * 0.5 * L, kw[6], sig[6];
    for (int a = 0; a < 6; a++) {
      kw[a] = -eta * wJ * e->param[BP_K + a];
      double rate = 0.0;
      for (int i = 0; i < n; i++) {
        rate += B[a * n + i] * xv[i];
      }
      sig[a] = kw[a] * rate;
      for (int i = 0; i < n; i++) {
        f[i] += sig[a] * B[a * n + i];
      }
    }
    if (Fv) {
      add_outer(kw, B, B, n, Fv);
    }
    if (Fq) {
      /* d(rate_a)/dq = S_a v = B_a evaluated at v (B_a is linear in q) */
      point_fields(&Pv, xv);
      strain_gradients(&Pv, Bv);
      add_outer(kw, B, Bv, n, Fq);
      add_strain_hessians(&P, sig, Fq);
    }
  }
}

const mbsElementKindTable mbs_elem_beam = {
    .name = "beam",
    .potential = potential,
    .gradient = gradient,
    .discrete_gradient = discrete_gradient,
    .force = force,
    .dissipative = 1,
};

int mbs_beam_element_setup(mbsElem *e, const double *q0, int order, const double k[6], double eta) {
  if (order != 1 && order != 2) {
    return -1;
  }
  if (e->nq != 12 * (order + 1) || !e->qidx) {
    return -1;
  }
  double x[BEAM_MAXQ];
  mbs_elem_gather(e, q0, x);
  /* the arc length of the polyline through the nodes */
  double L = 0.0;
  for (int j = 0; j < order; j++) {
    double d[3];
    vsub(d, x + 12 * (j + 1), x + 12 * j);
    L += vnorm(d);
  }
  if (!(L > 0.0) || !isfinite(L)) {
    return -1;
  }
  e->iparam[0] = order;
  for (int a = 0; a < 6; a++) {
    e->param[BP_K + a] = k[a];
  }
  e->param[BP_ETA] = eta;
  e->param[BP_LEN] = L;
  BeamPoint P;
  point_shape(&P, order, 0.0, L);
  point_fields(&P, x);
  strains(&P, e->param + BP_EPS0_MID);
  for (int g = 0; g < NGAUSS[order]; g++) {
    point_shape(&P, order, GAUSS_XI[order][g], L);
    point_fields(&P, x);
    strains(&P, e->param + BP_EPS0_GAUSS + 6 * g);
  }
  return 0;
}

void mbs_beam_element_strain(const mbsElem *e, const double *q, double out[6]) {
  int p = beam_order(e);
  double x[BEAM_MAXQ];
  mbs_elem_gather(e, q, x);
  BeamPoint P;
  point_shape(&P, p, 0.0, e->param[BP_LEN]);
  point_fields(&P, x);
  strains(&P, out);
  for (int a = 0; a < 6; a++) {
    out[a] -= e->param[BP_EPS0_MID + a];
  }
}

double mbs_beam_strain_energy(const mbsModel *m, const double *q) {
  double e = 0.0;
  for (int i = 0; i < m->nbeam; i++) {
    const mbsBeam *b = &m->beam[i];
    for (int k = 0; k < b->nelem; k++) {
      const mbsElem *el = &m->elem[b->elem0 + k];
      assert(el->kind == MBS_ELEM_BEAM);
      e += potential(m, el, q);
    }
  }
  return e;
}

double mbs_beam_element_length(const mbsElem *e) {
  return e->param[BP_LEN];
}
