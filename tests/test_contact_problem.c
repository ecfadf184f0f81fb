/* test_contact_problem.c: the contact problem's Newton system in its two forms (problem.c):
 * on random problems built from their factors (per body an SPD matrix J, its inverse Z, the
 * contacts' columns W on the body's coordinates, X = Z W, G = W^T X / theta), the islands
 * solved through G's blocks (dense LU) and through the augmented form [A' B W^T; -s X/theta
 * s I] (forced with augmented = 2) reach the same impulses: to 1e-12 where G is regular (the
 * Newton iterates are the same in exact arithmetic), and within the tolerance asked where
 * many contacts on one body make G singular (the disc on points). And a pile's island (a
 * lattice of bodies on a floor) at two sizes: the sparse LU on G's pattern stays sparse, and
 * the largest converges to the tolerance with the default settings. And
 * the iterations a step reports when its contact problem fails and the step is halved. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/contact.h"
#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "mbsim/solver.h"

#define NB_MAX 4  /* bodies */
#define NC_MAX 48 /* contacts */
#define ND_MAX 16 /* coordinates of a body */
#define THETA 0.5

/* a random problem: body of each contact (one or two), its W entries on all the body's
 * coordinates, the factors and G by blocks */
typedef struct {
  int n, nb, nd;
  int body[NC_MAX][2], nbody[NC_MAX];
  double Z[NB_MAX][ND_MAX * ND_MAX]; /* column-major */
  double W[NC_MAX][2][3][ND_MAX];    /* per side, direction, coordinate */
  double X[NC_MAX][2][3][ND_MAX];    /* Z W */
  int gptr[NC_MAX + 1], gcol[NC_MAX * NC_MAX];
  double gval[9 * NC_MAX * NC_MAX];
  int sptr[NC_MAX + 1], sy0[2 * NC_MAX], slen[2 * NC_MAX];
  long soff[2 * NC_MAX];
  double xval[2 * NC_MAX * 3 * ND_MAX];
  int wptr[NC_MAX + 1], wy[2 * NC_MAX * ND_MAX];
  double wval[3 * 2 * NC_MAX * ND_MAX];
  double mu[NC_MAX], xi0[3 * NC_MAX];
} Rand;

static double urand(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xffffff) / (double)0x1000000;
}

/* Z = (C C^T + nd I)^-1 by Gauss-Jordan (an SPD inverse mass) */
static void spd_inverse(unsigned *seed, int nd, double *Z) {
  double J[ND_MAX * ND_MAX], C[ND_MAX * ND_MAX];
  for (int i = 0; i < nd * nd; i++) {
    C[i] = urand(seed) - 0.5;
  }
  for (int i = 0; i < nd; i++) {
    for (int j = 0; j < nd; j++) {
      double s = i == j ? 0.5 * nd : 0.0;
      for (int k = 0; k < nd; k++) {
        s += C[i * nd + k] * C[j * nd + k];
      }
      J[i * nd + j] = s;
      Z[i * nd + j] = i == j ? 1.0 : 0.0;
    }
  }
  for (int c = 0; c < nd; c++) {
    double piv = J[c * nd + c];
    for (int j = 0; j < nd; j++) {
      J[c * nd + j] /= piv;
      Z[c * nd + j] /= piv;
    }
    for (int r = 0; r < nd; r++) {
      double f = J[r * nd + c];
      if (r != c && f != 0.0) {
        for (int j = 0; j < nd; j++) {
          J[r * nd + j] -= f * J[c * nd + j];
          Z[r * nd + j] -= f * Z[c * nd + j];
        }
      }
    }
  }
}

/* a contact's free velocity: approaching (normal in -1.5 .. -0.5), tangential in -0.5 .. 0.5 */
static void free_velocity(unsigned *seed, double *xi) {
  xi[0] = -0.5 - urand(seed);
  xi[1] = urand(seed) - 0.5;
  xi[2] = urand(seed) - 0.5;
}

/* one side of a contact on body b (nd coordinates, inverse Zb): its W columns w (3 per
 * coordinate, interleaved, already in place) get their coordinates wy, X = Zb W goes to
 * xval at *xo (by direction), and the side's entry q of sy0, slen, soff */
static void add_side(int nd, int b, const double *Zb, const double *w, int *wy, double *xval,
                     long *xo, int q, int *sy0, int *slen, long *soff) {
  for (int i = 0; i < nd; i++) {
    wy[i] = b * nd + i;
  }
  for (int a = 0; a < 3; a++) {
    for (int i = 0; i < nd; i++) {
      double x = 0.0;
      for (int j = 0; j < nd; j++) {
        x += Zb[i * nd + j] * w[3 * j + a];
      }
      xval[*xo + a * nd + i] = x;
    }
  }
  sy0[q] = b * nd;
  slen[q] = nd;
  soff[q] = *xo;
  *xo += 3 * nd;
}

/* G by block rows from the problem's columns: G_kl = W_k^T X_l / theta summed over the bodies
 * contacts k and l share (sy0: a side's first coordinate), every such block kept, ascending;
 * returns the number of blocks (at most gcap) */
static int g_blocks(int n, int nd, const int *sptr, const int *sy0, const int *wptr,
                    const double *wval, const long *soff, const double *xval, int *gptr,
                    int *gcol, double *gval, int gcap) {
  int nbk = 0;
  for (int k = 0; k < n; k++) {
    gptr[k] = nbk;
    for (int l = 0; l < n; l++) {
      double g[9] = {0.0};
      int share = 0;
      for (int s = sptr[k]; s < sptr[k + 1]; s++) {
        for (int t = sptr[l]; t < sptr[l + 1]; t++) {
          if (sy0[s] != sy0[t]) {
            continue;
          }
          share = 1;
          const double *w = wval + 3 * (size_t)(wptr[k] + (s - sptr[k]) * nd);
          const double *x = xval + soff[t];
          for (int a = 0; a < 3; a++) {
            for (int c = 0; c < 3; c++) {
              for (int i = 0; i < nd; i++) {
                g[3 * a + c] += w[3 * i + a] * x[c * nd + i] / THETA;
              }
            }
          }
        }
      }
      if (share) {
        ck_assert_int_lt(nbk, gcap);
        gcol[nbk] = l;
        memcpy(gval + 9 * (size_t)nbk, g, sizeof(g));
        nbk++;
      }
    }
  }
  gptr[n] = nbk;
  return nbk;
}

static void make(Rand *R, unsigned seed, int n, int nb, int nd, double mu) {
  memset(R, 0, sizeof(*R));
  R->n = n;
  R->nb = nb;
  R->nd = nd;
  for (int b = 0; b < nb; b++) {
    spd_inverse(&seed, nd, R->Z[b]);
  }
  int q = 0, e = 0;
  long xo = 0;
  for (int k = 0; k < n; k++) {
    R->body[k][0] = k % nb;
    R->nbody[k] = nb > 1 && urand(&seed) < 0.5 ? 2 : 1;
    R->body[k][1] = (k + 1) % nb;
    R->sptr[k] = q;
    R->wptr[k] = e;
    for (int s = 0; s < R->nbody[k]; s++) {
      int b = R->body[k][s];
      for (int a = 0; a < 3; a++) {
        for (int i = 0; i < nd; i++) {
          R->W[k][s][a][i] = urand(&seed) - 0.5 + (a == 0 && i == 0 ? 1.0 : 0.0);
        }
      }
      for (int i = 0; i < nd; i++) {
        for (int a = 0; a < 3; a++) {
          R->wval[3 * (e + i) + a] = R->W[k][s][a][i];
        }
      }
      long x0 = xo;
      add_side(nd, b, R->Z[b], R->wval + 3 * (size_t)e, R->wy + e, R->xval, &xo, q++, R->sy0,
               R->slen, R->soff);
      for (int a = 0; a < 3; a++) {
        for (int i = 0; i < nd; i++) {
          R->X[k][s][a][i] = R->xval[x0 + a * nd + i];
        }
      }
      e += nd;
    }
    R->mu[k] = mu;
    free_velocity(&seed, R->xi0 + 3 * k);
  }
  R->sptr[n] = q;
  R->wptr[n] = e;
  /* G by block rows: every pair sharing a body (all blocks kept, ascending) */
  g_blocks(n, nd, R->sptr, R->sy0, R->wptr, R->wval, R->soff, R->xval, R->gptr, R->gcol, R->gval,
           NC_MAX * NC_MAX);
}

/* solve R from zero impulses with the given form, at most iter sweeps and Newton iterations
 * (accept: huge, no sweeps after Newton); the impulses into L */
static int solve(const Rand *R, int augmented, double tol, int iter, double accept, double *L,
                 mbsContactStats *st) {
  mbsError err;
  mbsContactSolver *cs = mbs_contact_solver_create(&err);
  ck_assert_ptr_nonnull(cs);
  memset(L, 0, 3 * (size_t)R->n * sizeof(double));
  mbsContactProblem p = {.n = R->n,
                         .gptr = R->gptr,
                         .gcol = R->gcol,
                         .gval = R->gval,
                         .mu = R->mu,
                         .xi0 = R->xi0,
                         .L = L,
                         .tol = tol,
                         .vscale = 1.0,
                         .accept = accept,
                         .max_iter = iter,
                         .reg = 0.0,
                         .accept_reg = tol,
                         .pen = NULL,
                         .ny = R->nb * R->nd,
                         .theta = THETA,
                         .sptr = R->sptr,
                         .sy0 = R->sy0,
                         .slen = R->slen,
                         .soff = R->soff,
                         .xval = R->xval,
                         .wptr = R->wptr,
                         .wy = R->wy,
                         .wval = R->wval,
                         .augmented = augmented};
  int ok = mbs_contact_solve(cs, &p, st, &err);
  mbs_contact_solver_destroy(cs);
  return ok;
}

static double max_diff(const double *a, const double *b, int n, double *scale) {
  double d = 0.0, s = 0.0;
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    s = fmax(s, fabs(a[i]));
  }
  *scale = s;
  return d;
}

/* regular G (fewer unknowns per body than coordinates): two sweeps and two Newton
 * iterations (the same iterates in exact arithmetic: a Jacobian off by 1e-6 shows), and the
 * converged solutions, to 1e-12 */
START_TEST(test_augmented_matches_dense) {
  for (unsigned seed = 1; seed <= 20; seed++) {
    Rand *R = malloc(sizeof(Rand));
    ck_assert_ptr_nonnull(R);
    make(R, seed, 8, 3, 16, seed % 3 == 0 ? 0.0 : 0.4);
    double La[3 * NC_MAX], Ld[3 * NC_MAX], scale;
    mbsContactStats sa, sd;
    for (int pass = 0; pass < 2; pass++) {
      int iter = pass == 0 ? 2 : 200;
      double accept = pass == 0 ? 1e30 : 1e-13;
      int okd = solve(R, -1, 1e-13, iter, accept, Ld, &sd);
      int oka = solve(R, 2, 1e-13, iter, accept, La, &sa);
      ck_assert_int_eq(okd, oka);
      ck_assert_int_eq(sd.newton, sa.newton);
      ck_assert_int_gt(sa.newton, 0); /* Newton did the work */
      double d = max_diff(Ld, La, 3 * R->n, &scale);
      ck_assert_msg(d <= 1e-12 * scale, "seed %u, %d iterations: |L_aug - L_dense| = %.3e of %.3e",
                    seed, iter, d, scale);
    }
    free(R);
  }
}
END_TEST

/* 40 contacts on one body of 12 coordinates (G of rank 12 in 120 unknowns: the disc on
 * points: KLU on G's pattern against the augmented form):
 * both reach the tolerance, and the velocities they give agree to it */
START_TEST(test_augmented_redundant) {
  Rand *R = malloc(sizeof(Rand));
  ck_assert_ptr_nonnull(R);
  make(R, 7, 40, 1, 12, 0.5);
  double La[3 * NC_MAX], Ld[3 * NC_MAX];
  mbsContactStats sa, sd;
  double tol = 1e-10;
  ck_assert_int_eq(solve(R, -1, tol, 200, tol, Ld, &sd), 1);
  ck_assert_int_eq(solve(R, 1, tol, 200, tol, La, &sa), 1);
  ck_assert_int_gt(sa.newton, 0);
  ck_assert(sa.residual <= tol);
  /* the body's velocity change X L / theta: the same to the tolerance's order */
  for (int i = 0; i < R->nd; i++) {
    double ya = 0.0, yd = 0.0, s = 0.0;
    for (int k = 0; k < R->n; k++) {
      for (int a = 0; a < 3; a++) {
        ya += R->X[k][0][a][i] * La[3 * k + a] / THETA;
        yd += R->X[k][0][a][i] * Ld[3 * k + a] / THETA;
        s += fabs(R->X[k][0][a][i] * Ld[3 * k + a] / THETA);
      }
    }
    ck_assert_msg(fabs(ya - yd) <= 1e-8 * s + 10 * tol, "coordinate %d: %.3e against %.3e", i, ya,
                  yd);
  }
  free(R);
}
END_TEST

/* ---- a pile's island at two sizes: the sparse LU's fill ----
 * m x m bodies of 6 coordinates on a floor (four points each on the ground) and each pair of
 * neighbours in the lattice touching at two points (random W, normals mostly along a
 * coordinate of each kind): G couples every two points of a body, as
 * a pile's does. A Newton iteration costs the LU's entries; they must grow with the contacts
 * (a bounded fill), where a dense LU of the 3n unknowns would hold 9 n^2. */
#define LAT_ND 6
typedef struct {
  int n, nb, nbody[1], *body; /* body: (2 n) */
  int *gptr, *gcol, *sptr, *sy0, *slen, *wptr, *wy;
  long *soff;
  double *gval, *xval, *wval, *mu, *xi0;
} Lattice;

static void lattice_free(Lattice *P) {
  void *ptrs[] = {P->body, P->gptr, P->gcol, P->sptr, P->sy0, P->slen, P->wptr, P->wy,
                  P->soff, P->gval, P->xval, P->wval, P->mu,   P->xi0};
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
}

static void lattice(Lattice *P, int m, unsigned seed) {
  const int nd = LAT_ND;
  int nb = m * m, n = 4 * nb + 4 * m * (m - 1);
  memset(P, 0, sizeof(*P));
  P->n = n;
  P->nb = nb;
  double *Z = malloc(sizeof(double) * nd * nd * (size_t)nb);
  P->body = malloc(sizeof(int) * 2 * (size_t)n);
  P->sptr = malloc(sizeof(int) * ((size_t)n + 1));
  P->wptr = malloc(sizeof(int) * ((size_t)n + 1));
  P->sy0 = malloc(sizeof(int) * 2 * (size_t)n);
  P->slen = malloc(sizeof(int) * 2 * (size_t)n);
  P->soff = malloc(sizeof(long) * 2 * (size_t)n);
  P->wy = malloc(sizeof(int) * 2 * (size_t)n * nd);
  P->wval = malloc(sizeof(double) * 6 * (size_t)n * nd);
  P->xval = malloc(sizeof(double) * 6 * (size_t)n * nd);
  P->mu = malloc(sizeof(double) * (size_t)n);
  P->xi0 = malloc(sizeof(double) * 3 * (size_t)n);
  P->gptr = malloc(sizeof(int) * ((size_t)n + 1));
  int gcap = 40 * n; /* a body holds at most 12 points, a point touches 2 bodies */
  P->gcol = malloc(sizeof(int) * (size_t)gcap);
  P->gval = malloc(sizeof(double) * 9 * (size_t)gcap);
  ck_assert(Z && P->body && P->sptr && P->wptr && P->sy0 && P->slen && P->soff && P->wy &&
            P->wval && P->xval && P->mu && P->xi0 && P->gptr && P->gcol && P->gval);
  for (int b = 0; b < nb; b++) {
    spd_inverse(&seed, nd, Z + (size_t)nd * nd * b);
  }
  /* the points: four on the ground per body, then two per neighbour pair (x, then y) */
  int k = 0;
  for (int b = 0; b < nb; b++) {
    for (int c = 0; c < 4; c++, k++) {
      P->body[2 * k] = b;
      P->body[2 * k + 1] = -1;
    }
  }
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < m; j++) {
      for (int dir = 0; dir < 2; dir++) {
        int i2 = i + (dir == 0), j2 = j + (dir == 1);
        for (int c = 0; c < 2 && i2 < m && j2 < m; c++, k++) {
          P->body[2 * k] = i * m + j;
          P->body[2 * k + 1] = i2 * m + j2;
        }
      }
    }
  }
  ck_assert_int_eq(k, n);
  /* W (random, a normal along the first coordinate), X = Z W */
  int q = 0, e = 0;
  long xo = 0;
  for (k = 0; k < n; k++) {
    P->sptr[k] = q;
    P->wptr[k] = e;
    for (int s = 0; s < 2 && P->body[2 * k + s] >= 0; s++) {
      int b = P->body[2 * k + s];
      /* the normals along a coordinate of their own: the ground's, the x pairs', the y
       * pairs' (so that separating every pair is feasible: the pile's problem has a solution) */
      int axis = P->body[2 * k + 1] < 0 ? 0 : P->body[2 * k + 1] == P->body[2 * k] + m ? 1 : 2;
      const double *Zb = Z + (size_t)nd * nd * b;
      double *w = P->wval + 3 * (size_t)e;
      for (int i = 0; i < nd; i++) {
        for (int a = 0; a < 3; a++) {
          w[3 * i + a] = 0.4 * (urand(&seed) - 0.5) + (a == 0 && i == axis ? (s == 0 ? 1.0 : -1.0) : 0.0);
        }
      }
      add_side(nd, b, Zb, w, P->wy + e, P->xval, &xo, q++, P->sy0, P->slen, P->soff);
      e += nd;
    }
    P->mu[k] = 0.3;
    free_velocity(&seed, P->xi0 + 3 * k);
  }
  P->sptr[n] = q;
  P->wptr[n] = e;
  /* G by block rows: the points sharing a body, ascending */
  g_blocks(n, nd, P->sptr, P->sy0, P->wptr, P->wval, P->soff, P->xval, P->gptr, P->gcol, P->gval,
           gcap);
  free(Z);
}

/* the lattice's contact problem with the settings of a Moreau step (1e-6 accepted where the
 * solver stalls, the compliance's last resort), tolerance tol of the velocity scale 1 */
static mbsContactProblem lattice_problem(const Lattice *P, double *L, double tol, int max_iter,
                                         int augmented) {
  mbsContactProblem p = {.n = P->n, .gptr = P->gptr, .gcol = P->gcol, .gval = P->gval,
                         .mu = P->mu, .xi0 = P->xi0, .L = L, .tol = tol, .vscale = 1.0,
                         .accept = 1e-6, .max_iter = max_iter, .reg = 1e-6, .accept_reg = 1e-4,
                         .pen = NULL, .ny = P->nb * LAT_ND, .theta = THETA, .sptr = P->sptr,
                         .sy0 = P->sy0, .slen = P->slen, .soff = P->soff, .xval = P->xval,
                         .wptr = P->wptr, .wy = P->wy, .wval = P->wval, .augmented = augmented};
  return p;
}

/* the island's Newton on G's pattern (augmented = -1): the LU's entries per contact grow by
 * less than half when the contacts grow fourfold (a dense LU: 4x). Whether the random
 * frictional problem converges is asked in test_pile_converges; here its factorizations are
 * what is measured. */
START_TEST(test_pile_fill) {
  double per[2];
  int ns[2];
  for (int t = 0; t < 2; t++) {
    Lattice P;
    lattice(&P, t == 0 ? 5 : 10, 11u);
    double *L = calloc(3 * (size_t)P.n, sizeof(double));
    ck_assert_ptr_nonnull(L);
    mbsError err;
    mbsContactSolver *cs = mbs_contact_solver_create(&err);
    ck_assert_ptr_nonnull(cs);
    double tol = 1e-10;
    mbsContactProblem p = lattice_problem(&P, L, tol, 200, -1);
    mbsContactStats st;
    ck_assert_int_ge(mbs_contact_solve(cs, &p, &st, &err), 0);
    ck_assert_int_eq(st.islands, 1);
    ck_assert_int_gt(st.newton, 0);
    ck_assert(st.lu_factors > 0.0);
    ns[t] = P.n;
    per[t] = st.lu_factors / P.n;
    mbs_contact_solver_destroy(cs);
    free(L);
    lattice_free(&P);
  }
  ck_assert_int_ge(ns[1], 4 * ns[0] - 100);
  /* measured: 174 per contact at 180 contacts, 239 at 760 (a dense LU: 1620 and 6840) */
  ck_assert_msg(per[1] <= 1.5 * per[0], "LU entries per contact %.1f at %d contacts, %.1f at %d",
                per[0], ns[0], per[1], ns[1]);
}
END_TEST

/* the laws at L, checked on their own terms (not through the solver's prox residual): the
 * velocities xi = xi0 + G L of every contact obey Signorini (L_N >= 0, xi_N >= 0, L_N xi_N =
 * 0) and Coulomb (|L_T| <= mu L_N; sticking: xi_T = 0; sliding: L_T = -mu L_N xi_T / |xi_T|)
 * to the velocity tol (an impulse's share: tol times the contact's 1 / max diag G); returns
 * the largest violation relative to that allowance (<= 1 passes) */
static double law_violation(const Lattice *P, const double *L, double tol) {
  double worst = 0.0;
  for (int k = 0; k < P->n; k++) {
    double xi[3] = {P->xi0[3 * k], P->xi0[3 * k + 1], P->xi0[3 * k + 2]}, dmax = 0.0;
    for (int q = P->gptr[k]; q < P->gptr[k + 1]; q++) {
      const double *g = P->gval + 9 * (size_t)q, *l = L + 3 * P->gcol[q];
      for (int a = 0; a < 3; a++) {
        xi[a] += g[3 * a] * l[0] + g[3 * a + 1] * l[1] + g[3 * a + 2] * l[2];
      }
      if (P->gcol[q] == k) {
        dmax = fmax(g[0], fmax(g[4], g[8]));
      }
    }
    const double *l = L + 3 * k;
    /* allowances: 2 tol for a velocity, 4 tol / max diag G for an impulse (the prox map
     * projects normal and tangential parts together); xi_T's direction is known to tol / |xi_T| */
    double lt = hypot(l[1], l[2]), vt = hypot(xi[1], xi[2]), vtol = 2.0 * tol;
    double ltol = 4.0 * tol / dmax;
    double v = fmax(-l[0] / ltol, -xi[0] / vtol);
    v = fmax(v, fmin(l[0] / ltol, xi[0] / vtol)); /* one of the two is zero */
    v = fmax(v, (lt - P->mu[k] * l[0]) / ltol);
    if (lt < P->mu[k] * l[0] - ltol) {
      v = fmax(v, vt / vtol); /* sticking */
    } else if (vt > vtol) {   /* sliding: L_T against xi_T at the cone's edge */
      double dir = ltol + 2.0 * P->mu[k] * l[0] * tol / vt;
      for (int a = 1; a < 3; a++) {
        v = fmax(v, fabs(l[a] + P->mu[k] * l[0] * xi[a] / vt) / dir);
      }
    }
    worst = fmax(worst, v);
  }
  return worst;
}

/* a pile's island of redundant frictional contacts (the 10 x 10 lattice: 760 points, four
 * on the ground under each body, G singular, the impulses non-unique) with the settings a
 * Moreau step gives its problem by default (contact_tolerance 1e-10 of the velocity scale,
 * 100 iterations, 1e-6 accepted where the solver stalls, the compliance's last resort): the
 * semi-smooth Newton iteration reaches the tolerance on every seed, without being stopped as
 * stalled and without the compliance, and the impulses obey the contact laws. Measured:
 * 24-31 Newton iterations, residual below 1e-11 (seeds 1-10 alike); with a stall window of 8
 * iterations at every island size (the rule before) seeds 1, 3, 5 and 7 failed at 0.1-0.2 of
 * the velocity scale (a step would be halved) and 4 and 8 took the compliance (9e-5, 7e-5). */
START_TEST(test_pile_converges) {
  const unsigned seeds[] = {1u, 3u, 4u, 5u, 7u, 8u};
  for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
    Lattice P;
    lattice(&P, 10, seeds[i]);
    double *L = calloc(3 * (size_t)P.n, sizeof(double));
    ck_assert_ptr_nonnull(L);
    mbsError err;
    mbsContactSolver *cs = mbs_contact_solver_create(&err);
    ck_assert_ptr_nonnull(cs);
    double tol = 1e-10;
    mbsContactProblem p = lattice_problem(&P, L, tol, 100, 0);
    mbsContactStats st;
    ck_assert_int_eq(mbs_contact_solve(cs, &p, &st, &err), 1);
    ck_assert_int_eq(st.islands, 1);
    ck_assert_int_eq(P.n, 760);
    ck_assert_msg(st.residual <= tol && st.stalled == 0 && st.regularized == 0,
                  "seed %u: residual %.3e after %d Newton iterations (%d stalled, %d with the "
                  "compliance)",
                  seeds[i], st.residual, st.newton, st.stalled, st.regularized);
    ck_assert_int_le(st.newton, 100);
    double v = law_violation(&P, L, tol);
    ck_assert_msg(v <= 1.0, "seed %u: the laws violated by %.3g of the tolerance", seeds[i], v);
    /* the check itself can fail: the impulses a thousandth off */
    for (int k = 0; k < 3 * P.n; k++) {
      L[k] *= 1.001;
    }
    ck_assert(law_violation(&P, L, tol) > 1.0);
    mbs_contact_solver_destroy(cs);
    free(L);
    lattice_free(&P);
  }
}
END_TEST

/* two boxes landing with spin on a floor and on each other, one contact iteration allowed:
 * the contact problem of the second step fails at dt and at its first halvings */
static const char HALVED_DECK[] =
    "mbsim: 1\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: b1, mass: 1, shape: {box: [0.2, 0.2, 0.1]}, position: [0, 0, 0.0501],"
    " velocity: [0.3, 0, -1], angular_velocity: [2, 1, 0]}\n"
    "  - {name: b2, mass: 1, shape: {box: [0.2, 0.2, 0.1]}, position: [0, 0, 0.1503]}\n"
    "ground:\n"
    "  collision:\n"
    "    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}\n"
    "contacts:\n"
    "  - {name: c, between: [\"b*\", ground], friction: 0.5}\n"
    "  - {name: bb, between: [b1, b2], friction: 0.5}\n"
    "solver: {integrator: moreau, dt: 1.0e-3, t_end: 0.01, moreau: {contact_iterations: 1}}\n";

/* a try whose contact problem fails (moreau: before the step's Newton iteration) counts no
 * Newton iterations. mbs_solver_advance sums d->iterations over its tries; the failed ones
 * left the count that was there (the last advance's sum, or a restart record's), so each
 * step whose first two tries failed doubled the reported count (the elastic bowl's
 * /solver/iterations: 4439, 8883, 17771, ... to 4.8e8 per record at 1.27 s, then past
 * INT_MAX) */
START_TEST(test_failed_try_iterations) {
  mbsDeck deck;
  mbsError err;
  memset(&deck, 0, sizeof(deck));
  ck_assert_msg(mbs_deck_load_text(&deck, "halved.yaml", HALVED_DECK, strlen(HALVED_DECK), NULL, 0,
                                   &err) == MBS_OK,
                "%s", err.msg);
  mbsModel *m = mbs_model_compile(&deck, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  mbsData *d = mbs_data_create(m, &err);
  ck_assert_msg(d != NULL, "%s", err.msg);
  mbs_solver_start(m, d);
  ck_assert_msg(mbs_solver_advance(m, d, d->t + m->dt, &err) == MBS_OK, "%s", err.msg);
  long rejected = d->rejected;
  d->iterations = 1000000; /* what a restart from a record with that count starts with */
  ck_assert_msg(mbs_solver_advance(m, d, d->t + m->dt, &err) == MBS_OK, "%s", err.msg);
  ck_assert_msg(d->rejected > rejected, "no try failed: the scene no longer tests the count");
  /* at most newton_max_iterations (25) twice per try, 2 max_halvings + 1 tries */
  ck_assert_msg(d->iterations <= 50 * (2 * m->max_halvings + 1),
                "%d Newton iterations reported for one step of %ld failed tries", d->iterations,
                d->rejected - rejected);
  mbs_data_destroy(d);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

Suite *contact_problem_suite(void) {
  Suite *s = suite_create("contact_problem");
  TCase *tc = tcase_create("augmented");
  tcase_add_test(tc, test_augmented_matches_dense);
  tcase_add_test(tc, test_augmented_redundant);
  suite_add_tcase(s, tc);
  TCase *tp = tcase_create("pile");
  tcase_add_test(tp, test_pile_fill);
  tcase_add_test(tp, test_pile_converges);
  suite_add_tcase(s, tp);
  TCase *ta = tcase_create("advance");
  tcase_add_test(ta, test_failed_try_iterations);
  suite_add_tcase(s, ta);
  return s;
}
