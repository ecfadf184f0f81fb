/* test_beam_element.c: the beam element kind (src/elements/beam.c) against closed forms.
 *
 * Beams here are built by hand: a global coordinate vector of nodes (phi, d1, d2, d3, 12
 * each) and elements whose qidx point into it (element j on nodes p j .. p j + p), set up
 * with mbs_beam_element_setup from a reference configuration, then the kind table is called
 * directly. Derivatives against finite differences are tests/test_conformance.c's job; this
 * file checks the mechanics:
 *   - rigid motions of the reference (curved, general triads): W = 0, gradient 0;
 *   - axial stretch by 1 + e: W = EA e^2 L / 2 exactly, midpoint strain (e, 0, ...);
 *   - a straight beam bent into a circular arc of curvature kappa (nodes on the arc, directors
 *     turned with the tangent), about d3 and about d2, and a uniform twist tau: the closed
 *     forms of the interpolated fields at the reduced Gauss points (derived symbolically from
 *     the shape functions, theta = kappa L_e the element's angle):
 *       order 1 (xi = 0):  Gamma1 = K3/kappa = sin(theta)/theta, Gamma2 = 0,
 *       order 2 (xi = +-1/sqrt3): Gamma1 = K3/kappa = c2 = (8 sin(theta/2) - sin theta) /
 *         (3 theta) = 1 - theta^4/480 + ..., Gamma2 = -+sqrt3 (4 cos(theta/2) - cos theta - 3)
 *         / (9 theta) (= +-sqrt3 theta^3/288 + ...), midpoint K3/kappa = sin(theta/2)/(theta/2),
 *     so W = sum over elements L_e/2 (EA (Gamma1 - 1)^2 + GA2 Gamma2^2 + EI3 kappa^2 c^2) and
 *     W -> EI3 kappa^2 L / 2 as the mesh is refined (order 1: relative error -theta^2/3,
 *     order 2: -theta^4/240); checked to 1e-12 relative, and the twist likewise with GJ;
 *   - objectivity: W(R q + c) = W(q) at a deformed, non-orthonormal state;
 *   - no net force and no net moment of the gradient, of the discrete gradient (about the
 *     midpoint state) and of the damping force: sum f_phi = 0,
 *     sum (phi x f_phi + d_i x f_di) = 0;
 *   - the discrete gradient identity W(qb) - W(qa) = g . (qb - qa) on a multi-element beam;
 *   - damping: uniform stretching at rate edot dissipates v . F = -eta EA edot^2 L. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/model.h"

#define MAXEL 16
#define MAXNODE (2 * MAXEL + 1)
#define NQMAX (12 * MAXNODE)

static const double K[6] = {7.0, 5.0, 4.0, 3.0, 2.0, 1.5}; /* EA, GA2, GA3, GJ, EI2, EI3 */

typedef struct {
  int order, nel, nnode, nq;
  double q0[NQMAX];
  int qidx[MAXEL][36];
  mbsElem el[MAXEL];
} Beam;

static mbsModel MODEL; /* the kind's functions do not read the model: a zeroed one */

/* node k of x: position phi and directors, column i of R = d_i (row-major R) */
static void set_node(double *x, int k, const double phi[3], const double R[9]) {
  for (int c = 0; c < 3; c++) {
    x[12 * k + c] = phi[c];
    for (int i = 0; i < 3; i++) {
      x[12 * k + 3 + 3 * i + c] = R[3 * c + i];
    }
  }
}

/* rotation by angle a about the unit axis n (row-major) */
static void rotation(double R[9], const double n[3], double a) {
  double c = cos(a), s = sin(a), t = 1.0 - c;
  R[0] = c + t * n[0] * n[0];
  R[1] = t * n[0] * n[1] - s * n[2];
  R[2] = t * n[0] * n[2] + s * n[1];
  R[3] = t * n[1] * n[0] + s * n[2];
  R[4] = c + t * n[1] * n[1];
  R[5] = t * n[1] * n[2] - s * n[0];
  R[6] = t * n[2] * n[0] - s * n[1];
  R[7] = t * n[2] * n[1] + s * n[0];
  R[8] = c + t * n[2] * n[2];
}

/* a straight beam of length L along x (d1 = x, d2 = y, d3 = z) or, if curved, a reference
 * along a helix-like polyline with turned triads; elements set up with damping eta */
static void beam_init(Beam *b, int order, int nel, double L, int curved, double eta) {
  memset(b, 0, sizeof(*b));
  b->order = order;
  b->nel = nel;
  b->nnode = order * nel + 1;
  b->nq = 12 * b->nnode;
  ck_assert_int_le(b->nnode, MAXNODE);
  for (int k = 0; k < b->nnode; k++) {
    double s = L * k / (b->nnode - 1), phi[3] = {s, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (curved) {
      double ax[3] = {0.48, 0.6, 0.64};
      phi[1] = 0.3 * sin(2.0 * s);
      phi[2] = 0.2 * s * s;
      rotation(R, ax, 0.7 * s);
    }
    set_node(b->q0, k, phi, R);
  }
  for (int j = 0; j < nel; j++) {
    for (int i = 0; i < 12 * (order + 1); i++) {
      b->qidx[j][i] = 12 * order * j + i;
    }
    mbsElem *e = &b->el[j];
    e->kind = MBS_ELEM_BEAM;
    e->body = -1;
    e->load = -1;
    e->joint = -1;
    e->nq = 12 * (order + 1);
    e->qidx = b->qidx[j];
    ck_assert_int_eq(mbs_beam_element_setup(e, b->q0, order, K, eta), 0);
  }
}

static const mbsElementKindTable *kind(void) {
  const mbsElementKindTable *k = mbs_element_kind(MBS_ELEM_BEAM);
  ck_assert_ptr_nonnull(k);
  ck_assert_str_eq(k->name, "beam");
  return k;
}

static double energy(const Beam *b, const double *q) {
  double W = 0.0;
  for (int j = 0; j < b->nel; j++) {
    W += kind()->potential(&MODEL, &b->el[j], q);
  }
  return W;
}

/* the assembled gradient (which = 0), discrete gradient (1, between qa = q and qb), or
 * damping force (2, at q with velocities qb) into g (nq) */
static void assemble(const Beam *b, int which, const double *q, const double *qb, double *g) {
  memset(g, 0, (size_t)b->nq * sizeof(double));
  for (int j = 0; j < b->nel; j++) {
    const mbsElem *e = &b->el[j];
    double ge[36];
    if (which == 0) {
      kind()->gradient(&MODEL, e, q, ge, NULL);
    } else if (which == 1) {
      kind()->discrete_gradient(&MODEL, e, q, qb, ge, NULL);
    } else {
      kind()->force(&MODEL, e, q, qb, 0.0, ge, NULL, NULL);
    }
    for (int i = 0; i < e->nq; i++) {
      g[e->qidx[i]] += ge[i];
    }
  }
}

static double uniform(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

/* x = R q + c on every node (positions moved, directors turned) */
static void rigid_motion(const Beam *b, double *x, const double *q, const double R[9],
                         const double c[3]) {
  for (int k = 0; k < 4 * b->nnode; k++) {
    const double *v = q + 3 * k;
    for (int r = 0; r < 3; r++) {
      x[3 * k + r] =
          R[3 * r] * v[0] + R[3 * r + 1] * v[1] + R[3 * r + 2] * v[2] + (k % 4 == 0 ? c[r] : 0.0);
    }
  }
}

/* the net force and net moment about the origin of the forces g at the state x */
static void resultant(const Beam *b, const double *x, const double *g, double F[3], double Mo[3]) {
  memset(F, 0, 3 * sizeof(double));
  memset(Mo, 0, 3 * sizeof(double));
  for (int k = 0; k < 4 * b->nnode; k++) {
    const double *v = x + 3 * k, *f = g + 3 * k;
    if (k % 4 == 0) {
      for (int r = 0; r < 3; r++) {
        F[r] += f[r];
      }
    }
    Mo[0] += v[1] * f[2] - v[2] * f[1];
    Mo[1] += v[2] * f[0] - v[0] * f[2];
    Mo[2] += v[0] * f[1] - v[1] * f[0];
  }
}

static double max_abs(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    s = fmax(s, fabs(x[i]));
  }
  return s;
}

START_TEST(test_setup) {
  /* order and degenerate elements are refused; layout of the parameters */
  Beam b;
  beam_init(&b, 2, 1, 1.0, 1, 0.3);
  mbsElem e = b.el[0];
  ck_assert_int_eq(mbs_beam_element_setup(&e, b.q0, 3, K, 0.0), -1);
  ck_assert_int_eq(mbs_beam_element_setup(&e, b.q0, 0, K, 0.0), -1);
  ck_assert_int_eq(mbs_beam_element_setup(&e, b.q0, 1, K, 0.0), -1); /* nq is order 2's */
  double z[36];
  memset(z, 0, sizeof(z));
  ck_assert_int_eq(mbs_beam_element_setup(&e, z, 2, K, 0.0), -1); /* zero length */
  /* the arc length of the polyline through the three nodes */
  double L = 0.0;
  for (int j = 0; j < 2; j++) {
    double d2 = 0.0;
    for (int c = 0; c < 3; c++) {
      double d = b.q0[12 * (j + 1) + c] - b.q0[12 * j + c];
      d2 += d * d;
    }
    L += sqrt(d2);
  }
  ck_assert_int_eq(b.el[0].iparam[0], 2);
  ck_assert_double_eq_tol(b.el[0].param[7], L, 1e-15);
  ck_assert_double_eq(b.el[0].param[6], 0.3);
  for (int a = 0; a < 6; a++) {
    ck_assert_double_eq(b.el[0].param[a], K[a]);
  }
  /* the strains at t = 0 are zero, and the reference is stress-free */
  double eps[6];
  mbs_beam_element_strain(&b.el[0], b.q0, eps);
  ck_assert_double_le(max_abs(eps, 6), 1e-15);
  ck_assert_double_le(fabs(kind()->potential(&MODEL, &b.el[0], b.q0)), 1e-30);
  ck_assert_int_eq(kind()->dissipative, 1);
}
END_TEST

START_TEST(test_rigid_motion) {
  /* a rigid rotation and translation of a curved reference: no energy, no force */
  for (int order = 1; order <= 2; order++) {
    Beam b;
    beam_init(&b, order, 4, 1.3, 1, 0.0);
    double R[9], ax[3] = {0.6, -0.0, 0.8}, c[3] = {0.4, -1.2, 2.5}, x[NQMAX], g[NQMAX];
    rotation(R, ax, 2.1);
    rigid_motion(&b, x, b.q0, R, c);
    double W = energy(&b, x);
    ck_assert_msg(fabs(W) < 1e-26, "order %d: W after a rigid motion = %g", order, W);
    assemble(&b, 0, x, NULL, g);
    ck_assert_msg(max_abs(g, b.nq) < 1e-13, "order %d: |gradient| = %g", order, max_abs(g, b.nq));
  }
}
END_TEST

START_TEST(test_axial_stretch) {
  /* phi -> (1 + e) phi, directors unchanged: Gamma1 = 1 + e, W = EA e^2 L / 2 */
  for (int order = 1; order <= 2; order++) {
    Beam b;
    double L = 1.7, e = 0.05, x[NQMAX];
    beam_init(&b, order, 3, L, 0, 0.0);
    memcpy(x, b.q0, (size_t)b.nq * sizeof(double));
    for (int k = 0; k < b.nnode; k++) {
      x[12 * k] *= 1.0 + e;
    }
    double W = energy(&b, x), ref = 0.5 * K[0] * e * e * L;
    ck_assert_msg(fabs(W - ref) <= 1e-14 * ref, "order %d: W = %.17g, EA e^2 L / 2 = %.17g", order,
                  W, ref);
    double eps[6];
    mbs_beam_element_strain(&b.el[1], x, eps);
    ck_assert_double_eq_tol(eps[0], e, 1e-15);
    for (int a = 1; a < 6; a++) {
      ck_assert_double_eq_tol(eps[a], 0.0, 1e-15);
    }
  }
}
END_TEST

/* Uniform bending (mode 0: about d3, mode 1: about d2) or twist (mode 2: about d1) of a
 * straight beam of length L with nel elements by the rate kappa: nodes at arc length s_k
 * (equally spaced), directors turned by kappa s_k. Returns W, fills the strain at the
 * first element's midpoint. */
static double uniform_deformation(Beam *b, int mode, double kappa, double *x, double mid[6]) {
  double L = b->q0[12 * (b->nnode - 1)];
  static const double axes[3][3] = {{0, 0, 1}, {0, 1, 0}, {1, 0, 0}};
  for (int k = 0; k < b->nnode; k++) {
    double s = L * k / (b->nnode - 1), a = kappa * s, R[9], phi[3];
    rotation(R, axes[mode], a);
    if (mode == 0) {
      phi[0] = sin(a) / kappa;
      phi[1] = (1.0 - cos(a)) / kappa;
      phi[2] = 0.0;
    } else if (mode == 1) {
      phi[0] = sin(a) / kappa;
      phi[1] = 0.0;
      phi[2] = -(1.0 - cos(a)) / kappa;
    } else {
      phi[0] = s;
      phi[1] = phi[2] = 0.0;
    }
    set_node(x, k, phi, R);
  }
  mbs_beam_element_strain(&b->el[0], x, mid);
  return energy(b, x);
}

START_TEST(test_uniform_bending_twist) {
  static const char *const what[3] = {"bending about d3", "bending about d2", "twist"};
  for (int mode = 0; mode < 3; mode++) {
    for (int order = 1; order <= 2; order++) {
      double prev_err = 0.0;
      for (int nel = 2; nel <= 16; nel *= 2) {
        Beam b;
        double L = 1.2, kappa = 1.0, x[NQMAX], mid[6];
        beam_init(&b, order, nel, L, 0, 0.0);
        double W = uniform_deformation(&b, mode, kappa, x, mid);
        double Le = L / nel, th = kappa * Le, c, cm, ca, cam, g2 = 0.0;
        /* c, cm: the factor of the curvature and d1 . phi' at the Gauss points and the
         * midpoint; ca, cam: the axial strain, d1 . phi' plus the correction for the
         * interpolated d1's length, 1/2 sum_{k<l} N_k N_l |d1_k - d1_l|^2 with |d1_k - d1_l|
         * = 2 sin of half the angle between the nodes (none for the twist, which leaves d1) */
        double tw = mode == 2 ? 0.0 : 1.0;
        if (order == 1) {
          c = sin(th) / th;
          cm = c;
          ca = c + tw * 0.5 * pow(sin(0.5 * th), 2);
          cam = ca;
        } else {
          c = (8.0 * sin(0.5 * th) - sin(th)) / (3.0 * th);
          g2 = sqrt(3.0) * (4.0 * cos(0.5 * th) - cos(th) - 3.0) / (9.0 * th);
          cm = sin(0.5 * th) / (0.5 * th);
          ca = c + tw * (4.0 / 9.0 * pow(sin(0.25 * th), 2) - 1.0 / 9.0 * pow(sin(0.5 * th), 2));
          cam = cm;
        }
        /* the stiffness of the curvature (EI3, EI2, GJ), the strain index of it, and the
         * shear (Gamma2 in the d1-d2 plane of bending about d3, Gamma3 about d2) */
        int ik = mode == 0 ? 5 : mode == 1 ? 4 : 3;
        double ref;
        if (mode == 2) {
          ref = nel * 0.5 * Le * K[3] * kappa * kappa * c * c;
        } else {
          double kshear = mode == 0 ? K[1] : K[2];
          ref = nel * 0.5 * Le *
                (K[0] * (ca - 1.0) * (ca - 1.0) + kshear * g2 * g2 + K[ik] * kappa * kappa * c * c);
        }
        ck_assert_msg(fabs(W - ref) <= 1e-12 * ref,
                      "%s, order %d, %d elements: W = %.17g, closed "
                      "form %.17g",
                      what[mode], order, nel, W, ref);
        /* the midpoint curvature with its sign, the axial strain, the others zero */
        for (int a = 0; a < 6; a++) {
          double r = a == ik ? kappa * cm : (a == 0 && mode != 2 ? cam - 1.0 : 0.0);
          ck_assert_msg(fabs(mid[a] - r) <= 1e-13 * (1.0 + kappa),
                        "%s, order %d: midpoint strain %d = %.17g, closed form %.17g", what[mode],
                        order, a, mid[a], r);
        }
        /* convergence to the continuum W = k kappa^2 L / 2: order 2 in theta for linear,
         * order 4 for quadratic elements */
        double Wc = 0.5 * K[ik] * kappa * kappa * L, err = fabs(W - Wc) / Wc;
        double lead = order == 1 ? th * th / 3.0 : th * th * th * th / 240.0;
        /* (measured: err / lead = 0.95 .. 1.00 from 4 elements on, the rates 1.95 .. 2.00
         * and 3.99 .. 4.00 from 8 on) */
        if (nel >= 4) {
          ck_assert_msg(fabs(err - lead) <= 0.06 * lead,
                        "%s, order %d, %d elements: relative "
                        "error %.4g, leading term %.4g",
                        what[mode], order, nel, err, lead);
        }
        if (nel >= 8) {
          double rate = log2(prev_err / err);
          ck_assert_msg(fabs(rate - 2.0 * order) < 0.06, "%s, order %d, %d elements: rate %.3f",
                        what[mode], order, nel, rate);
        }
        prev_err = err;
      }
    }
  }
}
END_TEST

/* a deformed, non-orthonormal state of a curved beam: q0 + a random perturbation */
static void deformed(const Beam *b, double *x, double amp, uint64_t *seed) {
  for (int i = 0; i < b->nq; i++) {
    x[i] = b->q0[i] + amp * uniform(seed);
  }
}

START_TEST(test_objectivity_and_momentum) {
  uint64_t seed = 4242;
  for (int order = 1; order <= 2; order++) {
    Beam b;
    beam_init(&b, order, 3, 1.1, 1, 0.2);
    for (int trial = 0; trial < 5; trial++) {
      double qa[NQMAX], qb[NQMAX], v[NQMAX], x[NQMAX], g[NQMAX], R[9], F[3], Mo[3];
      double ax[3] = {uniform(&seed), uniform(&seed), uniform(&seed)}, c[3] = {1, -2, 0.5};
      double n = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
      for (int i = 0; i < 3; i++) {
        ax[i] /= n;
      }
      deformed(&b, qa, 0.15, &seed);
      deformed(&b, qb, 0.15, &seed);
      for (int i = 0; i < b.nq; i++) {
        v[i] = uniform(&seed);
      }
      /* W(R q + c) = W(q) */
      rotation(R, ax, 3.0 * uniform(&seed));
      rigid_motion(&b, x, qa, R, c);
      double Wa = energy(&b, qa), Wx = energy(&b, x);
      ck_assert_msg(Wa > 1e-3, "a deformed state has energy (%g)", Wa);
      ck_assert_msg(fabs(Wx - Wa) <= 1e-13 * Wa, "order %d: W(Rq + c) = %.17g, W(q) = %.17g", order,
                    Wx, Wa);
      /* gradient: no net force, no net moment */
      assemble(&b, 0, qa, NULL, g);
      resultant(&b, qa, g, F, Mo);
      double gs = max_abs(g, b.nq);
      ck_assert_msg(max_abs(F, 3) <= 1e-13 * gs && max_abs(Mo, 3) <= 1e-13 * gs,
                    "order %d: gradient: net force %g, net moment %g (|g| %g)", order,
                    max_abs(F, 3), max_abs(Mo, 3), gs);
      /* discrete gradient: none about the midpoint state; and the energy identity */
      double qm[NQMAX];
      for (int i = 0; i < b.nq; i++) {
        qm[i] = 0.5 * (qa[i] + qb[i]);
      }
      assemble(&b, 1, qa, qb, g);
      resultant(&b, qm, g, F, Mo);
      gs = max_abs(g, b.nq);
      ck_assert_msg(max_abs(F, 3) <= 1e-13 * gs && max_abs(Mo, 3) <= 1e-13 * gs,
                    "order %d: discrete gradient: net force %g, net moment %g", order,
                    max_abs(F, 3), max_abs(Mo, 3));
      double Wb = energy(&b, qb), lin = 0.0, size = 0.0;
      for (int i = 0; i < b.nq; i++) {
        lin += g[i] * (qb[i] - qa[i]);
        size += fabs(g[i] * (qb[i] - qa[i]));
      }
      ck_assert_msg(fabs((Wb - Wa) - lin) <= 1e-14 * (Wa + Wb + size),
                    "order %d: W(qb) - W(qa) = %.17g, g . (qb - qa) = %.17g", order, Wb - Wa, lin);
      /* damping force: none either */
      assemble(&b, 2, qa, v, g);
      resultant(&b, qa, g, F, Mo);
      gs = max_abs(g, b.nq);
      ck_assert_msg(gs > 0.0 && max_abs(F, 3) <= 1e-13 * gs && max_abs(Mo, 3) <= 1e-13 * gs,
                    "order %d: damping: net force %g, net moment %g", order, max_abs(F, 3),
                    max_abs(Mo, 3));
    }
  }
}
END_TEST

START_TEST(test_damping) {
  /* uniform stretching phi -> (1 + e) phi at the rate edot: epsdot_1 = edot, so the damping
   * force dissipates v . F = -eta EA edot^2 L; no force without damping */
  for (int order = 1; order <= 2; order++) {
    Beam b;
    double L = 0.9, eta = 0.03, edot = 1.7, e = 0.02, x[NQMAX], v[NQMAX], f[NQMAX];
    beam_init(&b, order, 3, L, 0, eta);
    memcpy(x, b.q0, (size_t)b.nq * sizeof(double));
    memset(v, 0, sizeof(v));
    for (int k = 0; k < b.nnode; k++) {
      x[12 * k] *= 1.0 + e;
      v[12 * k] = edot * b.q0[12 * k];
    }
    assemble(&b, 2, x, v, f);
    double P = 0.0;
    for (int i = 0; i < b.nq; i++) {
      P += v[i] * f[i];
    }
    double ref = -eta * K[0] * edot * edot * L;
    ck_assert_msg(fabs(P - ref) <= 1e-14 * fabs(ref), "order %d: v . F = %.17g, closed form %.17g",
                  order, P, ref);
    beam_init(&b, order, 3, L, 0, 0.0);
    assemble(&b, 2, x, v, f);
    ck_assert_double_eq(max_abs(f, b.nq), 0.0);
  }
}
END_TEST

Suite *beam_element_suite(void) {
  Suite *s = suite_create("beam_element");
  TCase *tc = tcase_create("beam_element");
  tcase_add_test(tc, test_setup);
  tcase_add_test(tc, test_rigid_motion);
  tcase_add_test(tc, test_axial_stretch);
  tcase_add_test(tc, test_uniform_bending_twist);
  tcase_add_test(tc, test_objectivity_and_momentum);
  tcase_add_test(tc, test_damping);
  suite_add_tcase(s, tc);
  return s;
}
