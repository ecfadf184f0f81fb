/* slide.c: a point of a rigid body sliding along a beam's centre line (joint type
 * slide_on_beam; Zander 2008 sec. 4.1.2: the material position s of the body's reference
 * point C on the flexible body is a coordinate of the rigid body, eq. 4.9).
 *
 * The joint owns the scalar coordinate s, the material coordinate along the beam measured
 * at t = 0 (the reference arc length of the elements, the beams' own d/ds): element j spans
 * S_j <= s <= S_j + L_j (S_j the sum of the lengths before it) and maps s to
 * xi = -1 + 2 (s - S_j) / L_j, where the beam's shape functions N_k(xi) interpolate its
 * nodes (beam.c). So the centre line and its directors along the beam are
 *     r(s) = sum_k N_k(s) phi_k,    D_a(s) = sum_k N_k(s) d_a,k,
 * piecewise polynomials in s, continuous across the elements (each N_k is continuous). Beyond
 * the ends of an open beam the end elements' polynomials continue; on a ring (a beam whose
 * last node is at its first, joined there by a joint) s is taken modulo the length.
 *
 * Rows (bilateral, the joint's constraint element):
 *     g_1..3 = phi + c^i d_i - r(s) = 0                 (the point on the centre line)
 * and with `orient` the body's frame e_a = C_ai d_i (the interpolated director frame at t = 0)
 * follows the directors at s:
 *     g_4 = e_1 . D_2(s),  g_5 = e_1 . D_3(s),  g_6 = e_2 . D_3(s).
 * s carries no mass: its row of the equations of motion, G_s^T lambda = 0, says that the
 * reaction has no component along the tangent r'(s) (frictionless sliding).
 *
 * Discrete gradient (Gonzalez), for the energy-momentum scheme: each row is a sum of terms
 * N_k(s) h_k(q) with h_k linear (phi_k) or bilinear (e_a . d_b,k) in q. With bars the means of
 * the two states and DN_k = (N_k(s_b) - N_k(s_a)) / (s_b - s_a),
 *     N_k(s_b) h_k(q_b) - N_k(s_a) h_k(q_a) = Nbar_k (h_k(q_b) - h_k(q_a)) + DN_k hbar_k (s_b - s_a)
 * exactly, and h_k(q_b) - h_k(q_a) = grad h_k(q_mid) . (q_b - q_a) for a bilinear h_k. DN_k is
 * summed over the pieces of [s_a, s_b] in each element, where it is the derivative at the
 * piece's midpoint times its length (exact for polynomials of degree 2), so it stays exact
 * and free of cancellation across element boundaries. Gbar (q_b - q_a) = g(q_b) - g(q_a) makes
 * the reactions workless over a step: energy is conserved to the solver's tolerance.
 *
 * Layout: local coordinates 0..11 the body (phi, d1, d2, d3), then the beam's nodes it may
 * reach, 12 each (phi, d1, d2, d3; all of them, or those of the elements about its place at
 * t = 0, `reach`, found by their global index: w_locate), then s (the last);
 *   param[0..2] = c (the point: phi + c^i d_i), param[3 + 3 a + i] = C_ai (a, i = 0..2),
 *   param[12] = on a ring the period of s, the sum of the elements' lengths (0: an open beam;
 *   not the beam's `length`, which follows the interpolated curve), param[13 + 3 r] = B_r, the directions of the point's
 *   rows (the world axes; in a plane, two axes in it); iparam[0] = the beam, iparam[1] = the
 *   orientation rows (bit o: the pair o of orient_pair below), iparam[2] = the point's rows.
 * In a plane (the beam held in it and the body by a planar joint of the same normal) the
 * rows that the planar joints already hold are left out, or the Newton matrix would be
 * singular: the point's row along the normal, and the orientation rows of a body direction
 * or a director along the normal. */
#include <math.h>
#include <string.h>

#include "elements/make.h"
#include "mbsim/elements.h"
#include "util/vec3.h"

static void v0set(double r[3]) {
  r[0] = r[1] = r[2] = 0.0;
}

#define SL_MAXN 3 /* nodes of one beam element */

/* the piece of the beam at s: first node n0, count nn, shape functions N, dN/ds, d2N/ds2;
 * next: the material coordinate where the element ends (the start of the next piece;
 * INFINITY past the last element of an open beam) */
typedef struct {
  int n0, nn;
  double N[SL_MAXN], dN[SL_MAXN], ddN[SL_MAXN];
  double next;
  int j;         /* the element */
  double S0, L0; /* its start (in the s of the call: a ring's turns included) and length */
} Piece;

static void locate(const mbsModel *m, const mbsElem *e, double s, Piece *p) {
  const mbsBeam *b = &m->beam[e->iparam[0]];
  double x = s, shift = 0.0;
  if (e->param[12] != 0.0) {
    /* a ring: s modulo the sum of the element lengths that S_j counts */
    shift = e->param[12] * floor(s / e->param[12]);
    x = s - shift;
  }
  int j = 0;
  double S = 0.0, L = mbs_beam_element_length(&m->elem[b->elem0]);
  while (j + 1 < b->nelem && x >= S + L) {
    S += L;
    j++;
    L = mbs_beam_element_length(&m->elem[b->elem0 + j]);
  }
  p->next = (j + 1 < b->nelem || e->param[12] != 0.0) ? shift + S + L : INFINITY;
  if (p->next <= s) {
    p->next = s + 0.5 * L; /* round-off at the end of a ring: move on */
  }
  p->n0 = b->order * j;
  p->nn = b->order + 1;
  p->j = j;
  p->S0 = shift + S;
  p->L0 = L;
  double xi = -1.0 + 2.0 * (x - S) / L, a = 2.0 / L;
  if (b->order == 1) {
    p->N[0] = 0.5 * (1.0 - xi);
    p->N[1] = 0.5 * (1.0 + xi);
    p->dN[0] = -0.5 * a;
    p->dN[1] = 0.5 * a;
    p->ddN[0] = p->ddN[1] = 0.0;
  } else {
    p->N[0] = 0.5 * xi * (xi - 1.0);
    p->N[1] = 1.0 - xi * xi;
    p->N[2] = 0.5 * xi * (xi + 1.0);
    p->dN[0] = a * (xi - 0.5);
    p->dN[1] = a * (-2.0 * xi);
    p->dN[2] = a * (xi + 0.5);
    p->ddN[0] = a * a;
    p->ddN[1] = -2.0 * a * a;
    p->ddN[2] = a * a;
  }
}

/* the shape functions of the nodes a row touches, a short sparse list (a step that crosses
 * more elements than it holds fails as a NaN row, which Newton reports) */
#define SL_MAXW 12
typedef struct {
  int n;
  int node[SL_MAXW];
  double N[SL_MAXW], dN[SL_MAXW], ddN[SL_MAXW];
  double d3N[SL_MAXW]; /* the third derivatives (the absolute form's blend at a node only) */
  int loc[SL_MAXW];    /* the local index of the node's phi (w_locate) */
  int full;            /* 1: too many nodes, or a node outside the element's reach */
} Weights;

static void w_add(Weights *w, int node, double N, double dN, double ddN) {
  int k = 0;
  while (k < w->n && w->node[k] != node) {
    k++;
  }
  if (k == w->n) {
    if (w->n == SL_MAXW) {
      w->full = 1;
      return;
    }
    w->node[w->n++] = node;
    w->N[k] = w->dN[k] = w->ddN[k] = 0.0;
  }
  w->N[k] += N;
  w->dN[k] += dN;
  w->ddN[k] += ddN;
}

/* the nodes' shape functions at s, times f, added into w */
static void w_at(const mbsModel *m, const mbsElem *e, double s, double f, Weights *w) {
  Piece p;
  locate(m, e, s, &p);
  for (int l = 0; l < p.nn; l++) {
    w_add(w, p.n0 + l, f * p.N[l], f * p.dN[l], f * p.ddN[l]);
  }
}

/* into w->dN: DN_k = (N_k(sb) - N_k(sa)) / (sb - sa) summed over the pieces of [sa, sb]
 * (N_k'(sa) when sa = sb): each piece contributes N_k' at its midpoint times its length,
 * exact for the element polynomials of degree <= 2; into w->N the means (N_k(sa) +
 * N_k(sb)) / 2 */
static void w_discrete(const mbsModel *m, const mbsElem *e, double sa, double sb, Weights *w) {
  Weights tmp;
  memset(w, 0, sizeof(*w));
  memset(&tmp, 0, sizeof(tmp));
  w_at(m, e, sa, 0.5, &tmp);
  w_at(m, e, sb, 0.5, &tmp);
  for (int k = 0; k < tmp.n; k++) {
    w_add(w, tmp.node[k], tmp.N[k], 0.0, 0.0);
  }
  double lo = fmin(sa, sb), hi = fmax(sa, sb);
  if (!(hi > lo)) {
    Piece p;
    locate(m, e, sa, &p);
    for (int l = 0; l < p.nn; l++) {
      w_add(w, p.n0 + l, 0.0, p.dN[l], 0.0);
    }
  }
  int guard = 4 * m->beam[e->iparam[0]].nelem + 8;
  for (double x = lo; x < hi && guard-- > 0;) {
    Piece p;
    locate(m, e, x, &p);
    double end = fmin(p.next, hi);
    if (!(end > x)) {
      break;
    }
    Piece pm;
    locate(m, e, 0.5 * (x + end), &pm);
    for (int l = 0; l < pm.nn; l++) {
      w_add(w, pm.n0 + l, 0.0, pm.dN[l] * (end - x) / (hi - lo), 0.0);
    }
    x = end;
  }
  w->full |= tmp.full;
}

/* the local index of each node's phi among the element's beam nodes (its reach: all the
 * beam's nodes, or those of the elements about its place at t = 0, `reach`); a node outside
 * it marks w full (the rows become NaN: the step fails, naming the joint) */
static void w_locate(const mbsModel *m, const mbsElem *e, Weights *w) {
  /* the beam's nodes follow the body's 12 coordinates (and precede s, when there is one) */
  int node0 = m->beam[e->iparam[0]].node0, nslot = (e->nq - 12 - (e->iparam[3] ? 0 : 1)) / 12;
  for (int k = 0; k < w->n; k++) {
    int gi = 3 * (node0 + 4 * w->node[k]), slot = 0;
    while (slot < nslot && e->qidx[12 + 12 * slot] != gi) {
      slot++;
    }
    w->full |= slot == nslot;
    w->loc[k] = 12 + 12 * (slot < nslot ? slot : 0);
  }
}

/* component i of the local coordinates: the mean of two states (the same q twice: its
 * value) */
static double X(const mbsElem *e, const double *qa, const double *qb, int i) {
  return 0.5 * (qa[e->qidx[i]] + qb[e->qidx[i]]);
}

static void X3(const mbsElem *e, const double *qa, const double *qb, int i, double out[3]) {
  for (int c = 0; c < 3; c++) {
    out[c] = X(e, qa, qb, i + c);
  }
}

/* the body's frame vector e_a = C_ai d_i */
static void body_dir(const mbsElem *e, const double *qa, const double *qb, int a, double out[3]) {
  v0set(out);
  for (int i = 0; i < 3; i++) {
    double d[3];
    X3(e, qa, qb, 3 + 3 * i, d);
    vaxpy(out, e->param[3 + 3 * a + i], d);
  }
}

/* the orientation rows' pairs (a body direction, a beam director) */
static const int orient_pair[3][2] = {{0, 2}, {0, 3}, {1, 3}};

/* the point's rows: npos of them (3, or 2 in a plane), row r = B_r . (point - r(s)) with the
 * unit vectors B_r at param[13 + 3 r]; the orientation rows: the pairs o of orient_pair with
 * bit o of iparam[1] set, after them */
static int npos(const mbsElem *e) {
  return e->iparam[2];
}

static int nrows(const mbsElem *e) {
  int n = npos(e);
  for (int o = 0; o < 3; o++) {
    n += (e->iparam[1] >> o) & 1;
  }
  return n;
}

/* the row of orientation pair o, -1 if the element has none */
static int orient_row(const mbsElem *e, int o) {
  if (!((e->iparam[1] >> o) & 1)) {
    return -1;
  }
  int r = npos(e);
  for (int k = 0; k < o; k++) {
    r += (e->iparam[1] >> k) & 1;
  }
  return r;
}

/* sum_r mu_r B_r: the point rows' multipliers as one vector */
static void mu_point(const mbsElem *e, const double *mu, double out[3]) {
  out[0] = out[1] = out[2] = 0.0;
  for (int r = 0; r < npos(e); r++) {
    vaxpy(out, mu[r], e->param + 13 + 3 * r);
  }
}

/* g and, if G is not NULL, G (ncon x nq) at the mean of qa and qb, with the weights w (the
 * shape functions at s, or for a discrete gradient their means and quotients); hbar: NULL,
 * or the means of e_a . d_b,k over the two states (a discrete gradient's) */
static void rows_at(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb,
                    const Weights *w, const double *hbar, double *g, double *G) {
  (void)m;
  int nq = e->nq, is = nq - 1;
  const double *c = e->param;
  if (G) {
    memset(G, 0, (size_t)(nrows(e) * nq) * sizeof(double));
  }
  /* the point: phi + c^i d_i - sum_k N_k phi_k, and the tangent r' = sum_k N_k' phi_k */
  double r[3], t[3], v[3];
  X3(e, qa, qb, 0, r);
  for (int i = 0; i < 3; i++) {
    X3(e, qa, qb, 3 + 3 * i, v);
    vaxpy(r, c[i], v);
  }
  v0set(t);
  for (int k = 0; k < w->n; k++) {
    X3(e, qa, qb, (w->loc[k] + 3 * (0)), v);
    vaxpy(r, -w->N[k], v);
    vaxpy(t, w->dN[k], v);
  }
  for (int rr = 0; rr < npos(e); rr++) {
    const double *B = e->param + 13 + 3 * rr;
    if (g) {
      g[rr] = vdot(B, r);
    }
    if (!G) {
      continue;
    }
    double *Gr = G + rr * nq;
    for (int cc = 0; cc < 3; cc++) {
      Gr[cc] = B[cc];
      for (int i = 0; i < 3; i++) {
        Gr[3 + 3 * i + cc] = c[i] * B[cc];
      }
      for (int k = 0; k < w->n; k++) {
        Gr[(w->loc[k] + 3 * (0)) + cc] = -w->N[k] * B[cc];
      }
    }
    Gr[is] = -vdot(B, t);
  }
  /* the orientation: e_a . sum_k N_k d_b,k */
  for (int o = 0; o < 3; o++) {
    int row = orient_row(e, o);
    if (row < 0) {
      continue;
    }
    int a = orient_pair[o][0], bd = orient_pair[o][1];
    double ea[3], D[3];
    body_dir(e, qa, qb, a, ea);
    v0set(D);
    double us = 0.0;
    for (int k = 0; k < w->n; k++) {
      X3(e, qa, qb, (w->loc[k] + 3 * (bd)), v);
      vaxpy(D, w->N[k], v);
      us += w->dN[k] * (hbar ? hbar[o * SL_MAXW + k] : vdot(ea, v));
    }
    if (g) {
      g[row] = vdot(ea, D);
    }
    if (!G) {
      continue;
    }
    double *Gr = G + row * nq;
    for (int i = 0; i < 3; i++) {
      for (int cc = 0; cc < 3; cc++) {
        Gr[3 + 3 * i + cc] = e->param[3 + 3 * a + i] * D[cc];
      }
    }
    for (int k = 0; k < w->n; k++) {
      for (int cc = 0; cc < 3; cc++) {
        Gr[(w->loc[k] + 3 * (bd)) + cc] = w->N[k] * ea[cc];
      }
    }
    Gr[is] = us;
  }
}

static void nan_rows(const mbsElem *e, double *g, double *G) {
  for (int r = 0; g && r < nrows(e); r++) {
    g[r] = NAN;
  }
  for (int i = 0; G && i < nrows(e) * e->nq; i++) {
    G[i] = NAN;
  }
}

/* ---- the absolute parametrization (`param: absolute`; Zander 2008 sec. 6.5) ----
 * No s among the unknowns (iparam[3] = 1; the local coordinates are the body's and the
 * beam nodes' only): the foot point s*(q) of the body's point P = phi + c^i d_i on the
 * centre line is found at each evaluation by projection,
 *     f(s*, q) = (r(s*) - P) . r'(s*) = 0,
 * Newton from the nearest node of the element's reach, and the joint is a bilateral
 * constraint in absolute coordinates. In a plane (iparam[2] = 1; normal n = B_0 x B_1, the
 * point's two in-plane axes of mbs_elem_slide_planar) one row holds the point on the line:
 *     g_0 = nu . (P - r(s*)),   nu = n x r'(s*) / |r'(s*)|   (the normal distance),
 * and with `orient` the orientation rows of the relative form taken at s*. As P - r(s*) is
 * normal to r'(s*) and along nu (in the plane), neither s* nor nu enters G_0 (an envelope):
 *     G_0 = nu^T (dP/dq - sum_k N_k(s*) dphi_k/dq);
 * the orientation rows add (e_a . D_b'(s*)) d(s*)/dq with, from df = 0,
 *     d(s*) = [r' . (dP - sum_k N_k dphi_k) + (P - r) . sum_k N_k' dphi_k] / (|r'|^2 - (P - r) . r'').
 * The Hessian of g_0 follows from d nu = -t (nu . (dr' + r'' ds*)) / |r'| (t the unit
 * tangent); that of the orientation rows is the part at fixed s* (the Newton matrix only).
 * In space (iparam[2] = 2) two rows hold the point, along the beam's cross-section directors
 * at the foot point, D_a(s) = sum_k N_k(s) d_a,k:
 *     g_0 = D_2(s*) . (P - r(s*)),   g_1 = D_3(s*) . (P - r(s*)),
 * then the relative form's three orientation rows at s* with `orient`. As P - r(s*) is normal
 * to r'(s*), g_a equals (D_a - (D_a . t) t) . (P - r(s*)): the directors made normal to the
 * tangent, which span the normal plane unless the section is sheared flat onto the axis, so
 * the rows vanish exactly where P is on the line. No row's direction follows that plane along
 * the beam (the directors twist), so s* enters every gradient: with each row a function
 * G(s, q) of a free s, g_q = G_q + G_s a, a = d(s*)/dq = -f_q / f_s (f_s = |r'|^2 -
 * (P - r) . r''), and the Hessian, exact with the second derivative of s*(q) from f's,
 *     sum_r mu_r g_r,qq = Phi_qq + a Phi_qs^T + Phi_qs a^T + Phi_ss a a^T,
 *     Phi = sum_r mu_r G_r - lambda f,   lambda = sum_r mu_r G_r,s / f_s
 * (space_row, space_hessian; f_ss = 3 r' . r'' - (P - r) . r''' needs r''', nonzero only in
 * the blend at a node). For em the discrete gradient is Gonzalez's general one, the mean of
 * the two states' gradients plus (g(qb) - g(qa) - G dq) dq^T / |dq|^2, so that Gbar dq =
 * g(qb) - g(qa) exactly (abs_discrete_gradient says why not the midpoint's). */

static int absolute(const mbsElem *e) {
  return e->iparam[3] != 0;
}

/* the reference arc length at node k of beam b */
static double node_s(const mbsModel *m, const mbsBeam *b, int k) {
  int j = k / b->order, l = k - b->order * j;
  if (j >= b->nelem) {
    j = b->nelem - 1;
    l = b->order;
  }
  double S = 0.0;
  for (int i = 0; i < j; i++) {
    S += mbs_beam_element_length(&m->elem[b->elem0 + i]);
  }
  return S + mbs_beam_element_length(&m->elem[b->elem0 + j]) * l / b->order;
}

/* the body's point P = phi + c^i d_i */
static void body_point(const mbsElem *e, const double *qa, const double *qb, double P[3]) {
  double v[3];
  X3(e, qa, qb, 0, P);
  for (int i = 0; i < 3; i++) {
    X3(e, qa, qb, 3 + 3 * i, v);
    vaxpy(P, e->param[i], v);
  }
}

/* the foot point and what the rows need of it */
typedef struct {
  double s, P[3], r[3], t[3], tt[3]; /* s*, the point, r, r', r'' at s* */
  double ttt[3];                     /* r''' at s* (in space) */
  double n[3], nu[3], tn, D;         /* the plane's normal, nu, |r'|, |r'|^2 - (P - r) . r'' */
  Weights w;                         /* the shape functions at s* (located) */
} Foot;

static void centre_at(const mbsElem *e, const double *qa, const double *qb, Foot *f) {
  v0set(f->r);
  v0set(f->t);
  v0set(f->tt);
  for (int k = 0; k < f->w.n; k++) {
    double v[3];
    X3(e, qa, qb, f->w.loc[k], v);
    vaxpy(f->r, f->w.N[k], v);
    vaxpy(f->t, f->w.dN[k], v);
    vaxpy(f->tt, f->w.ddN[k], v);
  }
}

/* r''' at the foot point: nonzero only where the blend joins two elements */
static void centre_ttt(const mbsElem *e, const double *qa, const double *qb, Foot *f) {
  v0set(f->ttt);
  for (int k = 0; k < f->w.n; k++) {
    double v[3];
    X3(e, qa, qb, f->w.loc[k], v);
    vaxpy(f->ttt, f->w.d3N[k], v);
  }
}

/* the shape functions of an element of beam b starting at S, of length L, at s (its
 * polynomials continued beyond its ends) and their first and second derivatives in s */
static void poly_at(const mbsBeam *b, double S, double L, double s, double N[3], double dN[3],
                    double ddN[3]) {
  double xi = -1.0 + 2.0 * (s - S) / L, a = 2.0 / L;
  if (b->order == 1) {
    N[0] = 0.5 * (1.0 - xi);
    N[1] = 0.5 * (1.0 + xi);
    dN[0] = -0.5 * a;
    dN[1] = 0.5 * a;
    ddN[0] = ddN[1] = 0.0;
  } else {
    N[0] = 0.5 * xi * (xi - 1.0);
    N[1] = 1.0 - xi * xi;
    N[2] = 0.5 * xi * (xi + 1.0);
    dN[0] = a * (xi - 0.5);
    dN[1] = a * (-2.0 * xi);
    dN[2] = a * (xi + 0.5);
    ddN[0] = a * a;
    ddN[1] = -2.0 * a * a;
    ddN[2] = a * a;
  }
}

/* the guide's centre line at s as weights of the nodes, located; 0 when every node is in the
 * element's reach. The Lagrange elements' centre line has a kink at each node between
 * elements (r' jumps: 1.1e-3 rad on the push belt's ring), where the normal distance is not
 * differentiable (a point on the line at a node has no gradient; the rows' Jacobian jumps by
 * the kink as the foot passes it, which Newton's quadratic convergence does not allow).
 * Within DELTA = 1e-5 of an element's length of such a node the guide blends the two
 * elements' polynomials, r = (1 - w) r_A + w r_B with w the C1 smoothstep over [-DELTA,
 * DELTA]: a C1 curve that leaves the centre line by about a tenth of the kink angle times
 * DELTA (4e-11 m on the push belt's ring) */
static int foot_weights(const mbsModel *m, const mbsElem *e, double s, Weights *w) {
  const mbsBeam *b = &m->beam[e->iparam[0]];
  int ring = e->param[12] != 0.0;
  Piece p;
  memset(w, 0, sizeof(*w));
  locate(m, e, s, &p);
  double delta = 1e-5 * p.L0;
  int ja = -1, jb = -1;
  double Sa = 0.0, Sb = 0.0, u = 0.0;
  if (fabs(s - p.S0) < delta && (p.j > 0 || ring)) {
    ja = p.j > 0 ? p.j - 1 : b->nelem - 1;
    jb = p.j;
    Sb = p.S0;
    Sa = p.S0 - mbs_beam_element_length(&m->elem[b->elem0 + ja]);
    u = (s - (p.S0 - delta)) / (2.0 * delta);
  } else if (fabs(p.S0 + p.L0 - s) < delta && (p.j + 1 < b->nelem || ring)) {
    ja = p.j;
    jb = p.j + 1 < b->nelem ? p.j + 1 : 0;
    Sa = p.S0;
    Sb = p.S0 + p.L0;
    u = (s - (Sb - delta)) / (2.0 * delta);
  }
  if (ja < 0) {
    w_at(m, e, s, 1.0, w);
  } else {
    double La = mbs_beam_element_length(&m->elem[b->elem0 + ja]);
    double Lb = mbs_beam_element_length(&m->elem[b->elem0 + jb]);
    double bw = u * u * (3.0 - 2.0 * u), bd = 6.0 * u * (1.0 - u) / (2.0 * delta);
    double bdd = (6.0 - 12.0 * u) / (4.0 * delta * delta);
    double N[3], dN[3], ddN[3];
    poly_at(b, Sa, La, s, N, dN, ddN);
    for (int l = 0; l <= b->order; l++) {
      w_add(w, b->order * ja + l, (1.0 - bw) * N[l], (1.0 - bw) * dN[l] - bd * N[l],
            (1.0 - bw) * ddN[l] - 2.0 * bd * dN[l] - bdd * N[l]);
    }
    poly_at(b, Sb, Lb, s, N, dN, ddN);
    for (int l = 0; l <= b->order; l++) {
      w_add(w, b->order * jb + l, bw * N[l], bw * dN[l] + bd * N[l],
            bw * ddN[l] + 2.0 * bd * dN[l] + bdd * N[l]);
    }
    /* the third derivatives (the element polynomials' own vanish: degree <= 2) */
    double b3 = -12.0 / (8.0 * delta * delta * delta);
    for (int side = 0; side < 2; side++) {
      double sg = side ? 1.0 : -1.0;
      int jj = side ? jb : ja;
      poly_at(b, side ? Sb : Sa, side ? Lb : La, s, N, dN, ddN);
      for (int l = 0; l <= b->order; l++) {
        int k = 0;
        while (k < w->n && w->node[k] != b->order * jj + l) {
          k++;
        }
        if (k < w->n) {
          w->d3N[k] += sg * (3.0 * bd * ddN[l] + 3.0 * bdd * dN[l] + b3 * N[l]);
        }
      }
    }
  }
  w_locate(m, e, w);
  return w->full ? -1 : 0;
}

/* the foot point at the mean of qa and qb: 0, or -1 when it leaves the element's reach or
 * the projection fails */
static int foot(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb, Foot *f) {
  const mbsBeam *b = &m->beam[e->iparam[0]];
  int nslot = (e->nq - 12) / 12, kbest = 0;
  double best = INFINITY, h = b->length / b->nelem;
  body_point(e, qa, qb, f->P);
  for (int slot = 0; slot < nslot; slot++) {
    double x[3], d[3];
    X3(e, qa, qb, 12 + 12 * slot, x);
    vsub(d, x, f->P);
    if (vnorm(d) < best) {
      best = vnorm(d);
      kbest = (e->qidx[12 + 12 * slot] / 3 - b->node0) / 4;
    }
  }
  double s = node_s(m, b, kbest);
  int done = 0;
  for (int it = 0; it < 40 && !done; it++) {
    if (foot_weights(m, e, s, &f->w) != 0) {
      return -1;
    }
    centre_at(e, qa, qb, f);
    double d[3];
    vsub(d, f->r, f->P);
    double fs = vdot(f->t, f->t) + vdot(d, f->tt), step;
    step = -vdot(d, f->t) / (fs > 0.0 ? fs : vdot(f->t, f->t));
    step = fmax(-0.25 * h, fmin(0.25 * h, step));
    s += step;
    done = fabs(step) <= 1e-12 * h;
  }
  if (!done || foot_weights(m, e, s, &f->w) != 0) {
    return -1;
  }
  centre_at(e, qa, qb, f);
  f->s = s;
  f->tn = vnorm(f->t);
  double nn = 1.0, d[3];
  if (npos(e) == 1) {
    /* in a plane: nu */
    vcross(f->n, e->param + 13, e->param + 16);
    vcross(f->nu, f->n, f->t);
    nn = vnorm(f->nu);
    for (int c = 0; c < 3; c++) {
      f->nu[c] /= nn;
    }
  } else {
    centre_ttt(e, qa, qb, f);
  }
  vsub(d, f->P, f->r);
  f->D = vdot(f->t, f->t) - vdot(d, f->tt);
  return f->tn > 0.0 && nn > 0.0 && f->D > 0.0 ? 0 : -1;
}

/* a sparse vector over the local coordinates: the body's 12 and the phi of the foot's nodes */
typedef struct {
  int n;
  int idx[12 + 6 * SL_MAXW];
  double v[12 + 6 * SL_MAXW];
} SVec;

static void sv_body(SVec *x, const mbsElem *e, const double u[3]) {
  x->n = 0;
  for (int cc = 0; cc < 3; cc++) {
    x->idx[x->n] = cc;
    x->v[x->n++] = u[cc];
    for (int i = 0; i < 3; i++) {
      x->idx[x->n] = 3 + 3 * i + cc;
      x->v[x->n++] = e->param[i] * u[cc];
    }
  }
}

/* d(s*)/dq (a) and optionally t . (dP - dr) (u) and nu . dr' (bv), over the body and the
 * foot's nodes */
static void foot_vectors(const mbsElem *e, const Foot *f, SVec *a, SVec *u, SVec *bv) {
  double th[3], pr[3], z[3] = {0, 0, 0};
  vsub(pr, f->P, f->r);
  for (int c = 0; c < 3; c++) {
    th[c] = f->t[c] / f->tn;
    z[c] = f->t[c] / f->D;
  }
  sv_body(a, e, z);
  if (u) {
    sv_body(u, e, th);
    bv->n = 0;
  }
  for (int k = 0; k < f->w.n; k++) {
    for (int cc = 0; cc < 3; cc++) {
      int i = f->w.loc[k] + cc;
      a->idx[a->n] = i;
      a->v[a->n++] = (-f->w.N[k] * f->t[cc] + f->w.dN[k] * pr[cc]) / f->D;
      if (u) {
        u->idx[u->n] = i;
        u->v[u->n++] = -f->w.N[k] * th[cc];
        bv->idx[bv->n] = i;
        bv->v[bv->n++] = f->w.dN[k] * f->nu[cc];
      }
    }
  }
}

/* ---- the absolute parametrization in space (two point rows; see the comment above) ----
 * The rows as functions G_r(s, q) of a free s, at s = s*(q); with f(s, q) = (r - P) . r' the
 * projection's condition and a = ds* / dq = -f_q / f_s:
 *     g_q = G_q + G_s a,
 *     sum_r mu_r g_qq = Phi_qq + a Phi_qs^T + Phi_qs a^T + Phi_ss a a^T,
 * Phi = sum_r mu_r G_r - lambda f, lambda = sum_r mu_r G_r,s / f_s (the second derivative of
 * s*(q) from f's: exact). Vectors over the foot's coordinates: the body's 12, then 12 for each
 * node of the foot's weights (phi, d1, d2, d3), mapped to the local ones by fv_loc */
typedef struct {
  double v[12 + 12 * SL_MAXW];
} FVec;

static int fv_len(const Foot *f) {
  return 12 + 12 * f->w.n;
}

static int fv_loc(const Foot *f, int i) {
  return i < 12 ? i : f->w.loc[(i - 12) / 12] + (i - 12) % 12;
}

static void fv_zero(FVec *x, const Foot *f) {
  memset(x->v, 0, (size_t)fv_len(f) * sizeof(double));
}

/* x += sc dP/dq^T u (P = phi + c^i d_i) */
static void fv_body(FVec *x, const mbsElem *e, double sc, const double u[3]) {
  for (int cc = 0; cc < 3; cc++) {
    x->v[cc] += sc * u[cc];
    for (int i = 0; i < 3; i++) {
      x->v[3 + 3 * i + cc] += sc * e->param[i] * u[cc];
    }
  }
}

/* x += sc u at node k's vector off (0 phi, 3 d1, 6 d2, 9 d3) */
static void fv_node(FVec *x, int k, int off, double sc, const double u[3]) {
  for (int cc = 0; cc < 3; cc++) {
    x->v[12 + 12 * k + off + cc] += sc * u[cc];
  }
}

/* G[row] += sc x, in local coordinates */
static void fv_add(double *Gr, const Foot *f, double sc, const FVec *x) {
  for (int i = 0; i < fv_len(f); i++) {
    Gr[fv_loc(f, i)] += sc * x->v[i];
  }
}

/* H += sc (x y^T + y x^T) / 2, in local coordinates */
static void fv_outer(double *H, int nq, const Foot *f, double sc, const FVec *x, const FVec *y) {
  int n = fv_len(f);
  for (int i = 0; i < n; i++) {
    if (x->v[i] == 0.0 && y->v[i] == 0.0) {
      continue;
    }
    int li = fv_loc(f, i);
    for (int j = 0; j < n; j++) {
      int lj = fv_loc(f, j);
      double h = 0.5 * sc * (x->v[i] * y->v[j] + y->v[i] * x->v[j]);
      H[li * nq + lj] += h;
    }
  }
}

/* H += v at (i, P_cc) and (P_cc, i) for the body's point P = phi + c^i d_i */
static void h_body(double *H, int nq, const mbsElem *e, int i, int cc, double v) {
  H[i * nq + cc] += v;
  H[cc * nq + i] += v;
  for (int l = 0; l < 3; l++) {
    int bi = 3 + 3 * l + cc;
    H[i * nq + bi] += e->param[l] * v;
    H[bi * nq + i] += e->param[l] * v;
  }
}

/* a beam vector (off 0 phi, 3 d1, 6 d2, 9 d3) and its first and second derivatives in s at
 * the foot */
static void foot_field(const mbsElem *e, const double *qa, const double *qb, const Foot *f, int off,
                       double X0[3], double X1[3], double X2[3]) {
  v0set(X0);
  v0set(X1);
  v0set(X2);
  for (int k = 0; k < f->w.n; k++) {
    double v[3];
    X3(e, qa, qb, f->w.loc[k] + off, v);
    vaxpy(X0, f->w.N[k], v);
    vaxpy(X1, f->w.dN[k], v);
    vaxpy(X2, f->w.ddN[k], v);
  }
}

/* row r's G_r at s* (value), G_s, G_ss, G_q and G_qs (NULL: not needed); its second
 * derivatives in q (G_qq, constant in q at a fixed s) times mu added into H when H is given */
static double space_row(const mbsElem *e, const double *qa, const double *qb, const Foot *f, int r,
                        double *Gs, double *Gss, FVec *Gq, FVec *Gqs, double *H, double mu) {
  int nq = e->nq;
  double pr[3];
  vsub(pr, f->P, f->r);
  if (r < 2) {
    /* D . (P - r): D = D_2 or D_3 at s* */
    int off = 6 + 3 * r;
    double D[3], Dp[3], Dpp[3];
    foot_field(e, qa, qb, f, off, D, Dp, Dpp);
    *Gs = vdot(Dp, pr) - vdot(D, f->t);
    *Gss = vdot(Dpp, pr) - 2.0 * vdot(Dp, f->t) - vdot(D, f->tt);
    if (Gq) {
      fv_zero(Gq, f);
      fv_body(Gq, e, 1.0, D);
      for (int k = 0; k < f->w.n; k++) {
        fv_node(Gq, k, 0, -f->w.N[k], D);
        fv_node(Gq, k, off, f->w.N[k], pr);
      }
    }
    if (Gqs) {
      fv_zero(Gqs, f);
      fv_body(Gqs, e, 1.0, Dp);
      for (int k = 0; k < f->w.n; k++) {
        fv_node(Gqs, k, 0, -f->w.dN[k], D);
        fv_node(Gqs, k, 0, -f->w.N[k], Dp);
        fv_node(Gqs, k, off, f->w.dN[k], pr);
        fv_node(Gqs, k, off, -f->w.N[k], f->t);
      }
    }
    for (int k = 0; H && k < f->w.n; k++) {
      int dk = f->w.loc[k] + off;
      for (int cc = 0; cc < 3; cc++) {
        h_body(H, nq, e, dk + cc, cc, mu * f->w.N[k]);
        for (int l = 0; l < f->w.n; l++) {
          int pl = f->w.loc[l] + cc;
          double h = -mu * f->w.N[k] * f->w.N[l];
          H[(dk + cc) * nq + pl] += h;
          H[pl * nq + dk + cc] += h;
        }
      }
    }
    return vdot(D, pr);
  }
  /* an orientation row e_a . D_b at s* */
  int o = 0;
  while (orient_row(e, o) != r) {
    o++;
  }
  int ai = orient_pair[o][0], off = 3 * orient_pair[o][1];
  double ea[3], D[3], Dp[3], Dpp[3];
  body_dir(e, qa, qb, ai, ea);
  foot_field(e, qa, qb, f, off, D, Dp, Dpp);
  *Gs = vdot(ea, Dp);
  *Gss = vdot(ea, Dpp);
  for (int pass = 0; pass < 2; pass++) {
    FVec *x = pass ? Gqs : Gq;
    const double *Dx = pass ? Dp : D;
    if (!x) {
      continue;
    }
    fv_zero(x, f);
    for (int i = 0; i < 3; i++) {
      for (int cc = 0; cc < 3; cc++) {
        x->v[3 + 3 * i + cc] += e->param[3 + 3 * ai + i] * Dx[cc];
      }
    }
    for (int k = 0; k < f->w.n; k++) {
      fv_node(x, k, off, pass ? f->w.dN[k] : f->w.N[k], ea);
    }
  }
  for (int k = 0; H && k < f->w.n; k++) {
    for (int i = 0; i < 3; i++) {
      for (int cc = 0; cc < 3; cc++) {
        int bi = 3 + 3 * i + cc, dk = f->w.loc[k] + off + cc;
        double h = mu * e->param[3 + 3 * ai + i] * f->w.N[k];
        H[bi * nq + dk] += h;
        H[dk * nq + bi] += h;
      }
    }
  }
  return vdot(ea, D);
}

/* a = d(s*)/dq = -f_q / f_s over the foot's coordinates */
static void foot_rate(const mbsElem *e, const Foot *f, FVec *a) {
  double pr[3];
  vsub(pr, f->P, f->r);
  fv_zero(a, f);
  fv_body(a, e, 1.0 / f->D, f->t);
  for (int k = 0; k < f->w.n; k++) {
    fv_node(a, k, 0, -f->w.N[k] / f->D, f->t);
    fv_node(a, k, 0, f->w.dN[k] / f->D, pr);
  }
}

/* g and, if G is not NULL, gs G added into G, at the mean of qa and qb; -1 when the foot is
 * lost */
static int space_rows(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb,
                      double *g, double *G, double gs) {
  Foot f;
  if (foot(m, e, qa, qb, &f) != 0) {
    return -1;
  }
  FVec a, Gq;
  foot_rate(e, &f, &a);
  for (int r = 0; r < nrows(e); r++) {
    double Gs, Gss, v = space_row(e, qa, qb, &f, r, &Gs, &Gss, G ? &Gq : NULL, NULL, NULL, 0.0);
    if (g) {
      g[r] = v;
    }
    if (G) {
      fv_add(G + r * e->nq, &f, gs, &Gq);
      fv_add(G + r * e->nq, &f, gs * Gs, &a);
    }
  }
  return 0;
}

/* sum_r mu_r d2g_r/dq2 at the mean of qa and qb, times scale, added into H (exact) */
static void space_hessian(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb,
                          const double *mu, double scale, double *H) {
  int nq = e->nq;
  Foot f;
  if (foot(m, e, qa, qb, &f) != 0) {
    return;
  }
  FVec a, Gqs, Pqs;
  foot_rate(e, &f, &a);
  fv_zero(&Pqs, &f);
  double Gs, Gss, Pss = 0.0, lam = 0.0;
  for (int r = 0; r < nrows(e); r++) {
    space_row(e, qa, qb, &f, r, &Gs, &Gss, NULL, &Gqs, H, scale * mu[r]);
    lam += mu[r] * Gs;
    Pss += mu[r] * Gss;
    for (int i = 0; i < fv_len(&f); i++) {
      Pqs.v[i] += mu[r] * Gqs.v[i];
    }
  }
  lam /= f.D;
  /* - lambda f: f_ss = 3 r' . r'' - (P - r) . r''', f_qs, and f_qq (phi_k with phi_l and
   * with P) */
  double pr[3];
  vsub(pr, f.P, f.r);
  Pss -= lam * (3.0 * vdot(f.t, f.tt) - vdot(pr, f.ttt));
  fv_body(&Pqs, e, lam, f.tt);
  for (int k = 0; k < f.w.n; k++) {
    fv_node(&Pqs, k, 0, -lam * 2.0 * f.w.dN[k], f.t);
    fv_node(&Pqs, k, 0, -lam * f.w.N[k], f.tt);
    fv_node(&Pqs, k, 0, lam * f.w.ddN[k], pr);
    for (int cc = 0; cc < 3; cc++) {
      int pk = f.w.loc[k] + cc;
      h_body(H, nq, e, pk, cc, scale * lam * f.w.dN[k]);
      for (int l = 0; l < f.w.n; l++) {
        int pl = f.w.loc[l] + cc;
        H[pk * nq + pl] -= scale * lam * (f.w.N[k] * f.w.dN[l] + f.w.dN[k] * f.w.N[l]);
      }
    }
  }
  fv_outer(H, nq, &f, 2.0 * scale, &a, &Pqs);
  fv_outer(H, nq, &f, scale * Pss, &a, &a);
}

/* g and, if G is not NULL, gs G added into G, at the mean of qa and qb; -1 when the foot is
 * lost */
static int abs_rows(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb,
                    double *g, double *G, double gs) {
  if (npos(e) == 2) {
    return space_rows(m, e, qa, qb, g, G, gs);
  }
  int nq = e->nq;
  Foot f;
  if (foot(m, e, qa, qb, &f) != 0) {
    return -1;
  }
  double pr[3];
  vsub(pr, f.P, f.r);
  if (g) {
    g[0] = vdot(f.nu, pr);
  }
  SVec a;
  foot_vectors(e, &f, &a, NULL, NULL);
  if (G) {
    for (int cc = 0; cc < 3; cc++) {
      G[cc] += gs * f.nu[cc];
      for (int i = 0; i < 3; i++) {
        G[3 + 3 * i + cc] += gs * e->param[i] * f.nu[cc];
      }
      for (int k = 0; k < f.w.n; k++) {
        G[f.w.loc[k] + cc] += -gs * f.w.N[k] * f.nu[cc];
      }
    }
  }
  for (int o = 0; o < 3; o++) {
    int row = orient_row(e, o);
    if (row < 0) {
      continue;
    }
    int ai = orient_pair[o][0], bd = orient_pair[o][1];
    double ea[3], D[3], Dp[3], v[3];
    body_dir(e, qa, qb, ai, ea);
    v0set(D);
    v0set(Dp);
    for (int k = 0; k < f.w.n; k++) {
      X3(e, qa, qb, f.w.loc[k] + 3 * bd, v);
      vaxpy(D, f.w.N[k], v);
      vaxpy(Dp, f.w.dN[k], v);
    }
    if (g) {
      g[row] = vdot(ea, D);
    }
    if (!G) {
      continue;
    }
    double *Gr = G + row * nq, us = vdot(ea, Dp);
    for (int i = 0; i < 3; i++) {
      for (int cc = 0; cc < 3; cc++) {
        Gr[3 + 3 * i + cc] += gs * e->param[3 + 3 * ai + i] * D[cc];
      }
    }
    for (int k = 0; k < f.w.n; k++) {
      for (int cc = 0; cc < 3; cc++) {
        Gr[f.w.loc[k] + 3 * bd + cc] += gs * f.w.N[k] * ea[cc];
      }
    }
    for (int l = 0; l < a.n; l++) {
      Gr[a.idx[l]] += gs * us * a.v[l];
    }
  }
  return 0;
}

/* H += scale sym(x y^T) */
static void sv_outer(double *H, int nq, double scale, const SVec *x, const SVec *y) {
  for (int i = 0; i < x->n; i++) {
    for (int j = 0; j < y->n; j++) {
      double h = 0.5 * scale * x->v[i] * y->v[j];
      H[x->idx[i] * nq + y->idx[j]] += h;
      H[y->idx[j] * nq + x->idx[i]] += h;
    }
  }
}

/* sum_r mu_r d2g_r/dq2 at the mean of qa and qb, times scale, added into H */
static void abs_hessian(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb,
                        const double *mu, double scale, double *H) {
  if (npos(e) == 2) {
    space_hessian(m, e, qa, qb, mu, scale, H);
    return;
  }
  int nq = e->nq;
  Foot f;
  if (foot(m, e, qa, qb, &f) != 0) {
    return;
  }
  /* the point's row: -(1/|r'|) u (bv + kappa a)^T - bv a^T, kappa = nu . r'' */
  SVec a, u, bv, bk;
  foot_vectors(e, &f, &a, &u, &bv);
  double kappa = vdot(f.nu, f.tt);
  bk = bv;
  for (int l = 0; l < a.n; l++) {
    bk.idx[bk.n] = a.idx[l];
    bk.v[bk.n++] = kappa * a.v[l];
  }
  sv_outer(H, nq, -scale * mu[0] / f.tn, &u, &bk);
  sv_outer(H, nq, -scale * mu[0], &bv, &a);
  /* the orientation rows at fixed s*: a body director with a beam director */
  for (int o = 0; o < 3; o++) {
    int row = orient_row(e, o);
    if (row < 0) {
      continue;
    }
    int ai = orient_pair[o][0], bd = orient_pair[o][1];
    for (int i = 0; i < 3; i++) {
      double Ca = scale * mu[row] * e->param[3 + 3 * ai + i];
      for (int k = 0; k < f.w.n; k++) {
        for (int cc = 0; cc < 3; cc++) {
          int bi = 3 + 3 * i + cc, dk = f.w.loc[k] + 3 * bd + cc;
          H[bi * nq + dk] += Ca * f.w.N[k];
          H[dk * nq + bi] += Ca * f.w.N[k];
        }
      }
    }
  }
}

/* Gonzalez's discrete gradient of the rows (see above), from the mean of the two states'
 * gradients rather than the gradient at the midpoint: the centre line of Lagrange elements
 * has a kink at each node between elements (r' jumps; blended in foot_weights), so where a
 * step takes the foot point across one the midpoint's foot may change sides from one Newton
 * iteration to the next, while each end's stays on its own side. Hb += d(Gbar^T mu)/dq_b taken as half the
 * Hessian at q_b (the correction's derivative left out: Newton's matrix only) */
static void abs_discrete_gradient(const mbsModel *m, const mbsElem *e, const double *qa,
                                  const double *qb, const double *mu, double *Gbar, double *Hb) {
  int nq = e->nq, nc = nrows(e);
  double ga[MBS_ELEM_MAXCON], gb[MBS_ELEM_MAXCON];
  memset(Gbar, 0, (size_t)(nc * nq) * sizeof(double));
  if (abs_rows(m, e, qa, qa, ga, Gbar, 0.5) != 0 || abs_rows(m, e, qb, qb, gb, Gbar, 0.5) != 0) {
    nan_rows(e, NULL, Gbar);
    return;
  }
  double dd = 0.0;
  for (int i = 0; i < nq; i++) {
    double d = qb[e->qidx[i]] - qa[e->qidx[i]];
    dd += d * d;
  }
  for (int r = 0; r < nc && dd > 0.0; r++) {
    double *Gr = Gbar + r * nq, lin = 0.0;
    for (int i = 0; i < nq; i++) {
      lin += Gr[i] * (qb[e->qidx[i]] - qa[e->qidx[i]]);
    }
    double corr = (gb[r] - ga[r] - lin) / dd;
    for (int i = 0; i < nq; i++) {
      Gr[i] += corr * (qb[e->qidx[i]] - qa[e->qidx[i]]);
    }
  }
  if (Hb) {
    abs_hessian(m, e, qb, qb, mu, 0.5, Hb);
  }
}

static void constraint(const mbsModel *m, const mbsElem *e, const double *q, double t, double *g,
                       double *G) {
  (void)t;
  if (absolute(e)) {
    if (G) {
      memset(G, 0, (size_t)(nrows(e) * e->nq) * sizeof(double));
    }
    if (abs_rows(m, e, q, q, g, G, 1.0) != 0) {
      nan_rows(e, g, G);
    }
    return;
  }
  Weights w;
  memset(&w, 0, sizeof(w));
  w_at(m, e, q[e->qidx[e->nq - 1]], 1.0, &w);
  w_locate(m, e, &w);
  if (w.full) {
    nan_rows(e, g, G);
    return;
  }
  rows_at(m, e, q, q, &w, NULL, g, G);
}

/* sum_r mu_r d2g_r/dq2 at q with the weights w at s, times scale (1/2: the derivative of a
 * discrete gradient with respect to its second state) */
static void hessian_at(const mbsElem *e, const double *q, const Weights *w, const double *mu,
                       double scale, double *H) {
  int nq = e->nq, is = nq - 1;
#define HADD(i, j, v)                                                                            \
  do {                                                                                           \
    H[(i) * nq + (j)] += (v);                                                                    \
  } while (0)
  /* the point rows: -mu_r (N_k' in the phi_k,r-s terms, N_k'' phi_k,r in s-s), mu_r the
   * components of sum_r mu_r B_r */
  double ss = 0.0, v[3], mp[3];
  mu_point(e, mu, mp);
  for (int k = 0; k < w->n; k++) {
    X3(e, q, q, (w->loc[k] + 3 * (0)), v);
    for (int r = 0; r < 3; r++) {
      double h = -scale * mp[r] * w->dN[k];
      HADD((w->loc[k] + 3 * (0)) + r, is, h);
      HADD(is, (w->loc[k] + 3 * (0)) + r, h);
      ss -= mp[r] * w->ddN[k] * v[r];
    }
  }
  HADD(is, is, scale * ss);
  for (int o = 0; o < 3; o++) {
    int row = orient_row(e, o);
    if (row < 0) {
      continue;
    }
    int a = orient_pair[o][0], bd = orient_pair[o][1];
    double f = scale * mu[row], ea[3], Dp[3], Dpp[3];
    body_dir(e, q, q, a, ea);
    v0set(Dp);
    v0set(Dpp);
    for (int k = 0; k < w->n; k++) {
      X3(e, q, q, (w->loc[k] + 3 * (bd)), v);
      vaxpy(Dp, w->dN[k], v);
      vaxpy(Dpp, w->ddN[k], v);
    }
    for (int i = 0; i < 3; i++) {
      double Ca = e->param[3 + 3 * a + i];
      for (int cc = 0; cc < 3; cc++) {
        int bi = 3 + 3 * i + cc;
        /* a body director with a beam director (C_ai N_k I3) and with s (C_ai D_b') */
        for (int k = 0; k < w->n; k++) {
          double h = f * Ca * w->N[k];
          HADD(bi, (w->loc[k] + 3 * (bd)) + cc, h);
          HADD((w->loc[k] + 3 * (bd)) + cc, bi, h);
        }
        HADD(bi, is, f * Ca * Dp[cc]);
        HADD(is, bi, f * Ca * Dp[cc]);
      }
    }
    /* a beam director with s (N_k' e_a), and s-s (e_a . D_b'') */
    for (int k = 0; k < w->n; k++) {
      for (int cc = 0; cc < 3; cc++) {
        HADD((w->loc[k] + 3 * (bd)) + cc, is, f * w->dN[k] * ea[cc]);
        HADD(is, (w->loc[k] + 3 * (bd)) + cc, f * w->dN[k] * ea[cc]);
      }
    }
    HADD(is, is, f * vdot(ea, Dpp));
  }
#undef HADD
}

static void constraint_hessian(const mbsModel *m, const mbsElem *e, const double *q, double t,
                               const double *mu, double *H) {
  (void)t;
  if (absolute(e)) {
    abs_hessian(m, e, q, q, mu, 1.0, H);
    return;
  }
  Weights w;
  memset(&w, 0, sizeof(w));
  w_at(m, e, q[e->qidx[e->nq - 1]], 1.0, &w);
  w_locate(m, e, &w);
  if (!w.full) {
    hessian_at(e, q, &w, mu, 1.0, H);
  }
}

static int w_find(const Weights *w, int node) {
  for (int k = 0; k < w->n; k++) {
    if (w->node[k] == node) {
      return k;
    }
  }
  return -1;
}

/* Hb += d(Gbar^T mu)/dq_b for the discrete gradient of the weights w (Nbar, DN) and hbar:
 * with dNbar_k/ds_b = N_k'(s_b) / 2 and dDN_k/ds_b = (N_k'(s_b) - DN_k) / (s_b - s_a), which
 * is N_k'' / 2 when both ends lie in one element (its polynomial has degree <= 2) */
static void discrete_hb(const mbsModel *m, const mbsElem *e, const double *qa, const double *qb,
                        const Weights *w, const double *hbar, const double *mu, double *Hb) {
  int nq = e->nq, is = nq - 1;
  double sa = qa[e->qidx[is]], sb = qb[e->qidx[is]];
  Weights u = *w, wb;
  memset(&wb, 0, sizeof(wb));
  w_at(m, e, sb, 1.0, &wb);
  for (int k = 0; k < u.n; k++) {
    u.ddN[k] = 0.0;
  }
  for (int k = 0; k < wb.n; k++) {
    w_add(&u, wb.node[k], 0.0, 0.0, wb.dN[k]); /* ddN holds N_k'(s_b) */
  }
  w_locate(m, e, &u);
  if (u.full) {
    return;
  }
  Piece pa, pb;
  locate(m, e, sa, &pa);
  locate(m, e, sb, &pb);
  int one = pa.n0 == pb.n0 && pa.next == pb.next;
  double dD[SL_MAXW];
  for (int k = 0; k < u.n; k++) {
    int kb = w_find(&wb, u.node[k]);
    double dN2 = kb >= 0 ? wb.ddN[kb] : 0.0;
    dD[k] = one || sb == sa ? 0.5 * dN2 : (u.ddN[k] - u.dN[k]) / (sb - sa);
  }
#define HADD(i, j, v)                                                                            \
  do {                                                                                           \
    Hb[(i) * nq + (j)] += (v);                                                                   \
  } while (0)
  double ss = 0.0, v[3], mp[3];
  mu_point(e, mu, mp);
  for (int k = 0; k < u.n; k++) {
    X3(e, qa, qb, (u.loc[k] + 3 * (0)), v);
    for (int r = 0; r < 3; r++) {
      /* F[phi_k,r] = -mu_r Nbar_k; F[s] = -mu_r DN_k phibar_k,r */
      HADD((u.loc[k] + 3 * (0)) + r, is, -0.5 * mp[r] * u.ddN[k]);
      HADD(is, (u.loc[k] + 3 * (0)) + r, -0.5 * mp[r] * u.dN[k]);
      ss -= mp[r] * dD[k] * v[r];
    }
  }
  HADD(is, is, ss);
  for (int o = 0; o < 3; o++) {
    int row = orient_row(e, o);
    if (row < 0) {
      continue;
    }
    int a = orient_pair[o][0], bd = orient_pair[o][1];
    double f = mu[row], eb[3], em[3], Dp[3], db[3], dm[3];
    body_dir(e, qb, qb, a, eb);
    body_dir(e, qa, qb, a, em);
    Dp[0] = Dp[1] = Dp[2] = 0.0;
    double hs = 0.0;
    for (int k = 0; k < u.n; k++) {
      int at = (u.loc[k] + 3 * (bd));
      X3(e, qa, qb, at, dm);
      X3(e, qb, qb, at, db);
      vaxpy(Dp, 0.5 * u.ddN[k], dm);
      int kw = w_find(w, u.node[k]);
      hs += dD[k] * (kw >= 0 ? hbar[o * SL_MAXW + kw] : 0.0);
      for (int i = 0; i < 3; i++) {
        double Ca = e->param[3 + 3 * a + i];
        for (int cc = 0; cc < 3; cc++) {
          int bi = 3 + 3 * i + cc;
          /* F[body d_i] = mu C_ai sum Nbar_k dbar_k; F[d_k] = mu Nbar_k ebar;
           * F[s] = mu sum DN_k hbar_k */
          HADD(bi, at + cc, 0.5 * f * Ca * u.N[k]);
          HADD(at + cc, bi, 0.5 * f * Ca * u.N[k]);
          HADD(is, bi, 0.5 * f * u.dN[k] * Ca * db[cc]);
        }
      }
      for (int cc = 0; cc < 3; cc++) {
        HADD(at + cc, is, 0.5 * f * u.ddN[k] * em[cc]);
        HADD(is, at + cc, 0.5 * f * u.dN[k] * eb[cc]);
      }
    }
    for (int i = 0; i < 3; i++) {
      for (int cc = 0; cc < 3; cc++) {
        HADD(3 + 3 * i + cc, is, f * e->param[3 + 3 * a + i] * Dp[cc]);
      }
    }
    HADD(is, is, f * hs);
  }
#undef HADD
}

static void constraint_discrete_gradient(const mbsModel *m, const mbsElem *e, const double *qa,
                                         const double *qb, double t, const double *mu, double *Gbar,
                                         double *Hb) {
  (void)t;
  if (absolute(e)) {
    abs_discrete_gradient(m, e, qa, qb, mu, Gbar, Hb);
    return;
  }
  int is = e->nq - 1;
  Weights w;
  w_discrete(m, e, qa[e->qidx[is]], qb[e->qidx[is]], &w);
  w_locate(m, e, &w);
  if (w.full) {
    nan_rows(e, NULL, Gbar);
    return;
  }
  /* hbar_k: the mean of e_a . d_b,k over the two states (bilinear: not its midpoint value) */
  double hbar[3 * SL_MAXW];
  for (int o = 0; o < 3; o++) {
    double ea[3], eb[3], da[3], db[3];
    if (orient_row(e, o) < 0) {
      continue;
    }
    body_dir(e, qa, qa, orient_pair[o][0], ea);
    body_dir(e, qb, qb, orient_pair[o][0], eb);
    for (int k = 0; k < w.n; k++) {
      int at = (w.loc[k] + 3 * (orient_pair[o][1]));
      X3(e, qa, qa, at, da);
      X3(e, qb, qb, at, db);
      hbar[o * SL_MAXW + k] = 0.5 * (vdot(ea, da) + vdot(eb, db));
    }
  }
  rows_at(m, e, qa, qb, &w, hbar, NULL, Gbar);
  if (Hb) {
    discrete_hb(m, e, qa, qb, &w, hbar, mu, Hb);
  }
}

/* the Hessian couples the body and s with the beam's nodes, never two of the beam's
 * coordinates with each other: the Newton matrix stays sparse however long the beam */
static int hess_pair(const mbsElem *e, int i, int j) {
  if (absolute(e) && npos(e) == 1) {
    /* absolute: the point's row couples the phi of the beam's nodes through s*(q) */
    return i < 12 || j < 12 || ((i - 12) % 12 < 3 && (j - 12) % 12 < 3);
  }
  if (absolute(e)) {
    /* in space also a node's phi with the directors d_2, d_3 of the rows (never d_1, never
     * two directors) */
    int ti = (i - 12) % 12, tj = (j - 12) % 12;
    return i < 12 || j < 12 || (ti < 3 && (tj < 3 || tj >= 6)) || (tj < 3 && ti >= 6);
  }
  int beam_i = i >= 12 && i < e->nq - 1, beam_j = j >= 12 && j < e->nq - 1;
  return !(beam_i && beam_j);
}

const mbsElementKindTable mbs_elem_slide = {
    .name = "slide_on_beam",
    .constraint = constraint,
    .constraint_hessian = constraint_hessian,
    .constraint_discrete_gradient = constraint_discrete_gradient,
    .hess_pair = hess_pair,
};

void mbs_elem_slide_make(mbsElem *e, int beam, const double c[3], const double C[9], int orient,
                         int ring) {
  e->kind = MBS_ELEM_SLIDE;
  memcpy(e->param, c, 3 * sizeof(double));
  memcpy(e->param + 3, C, 9 * sizeof(double));
  e->param[12] = ring ? 1.0 : 0.0;
  e->iparam[0] = beam;
  e->iparam[1] = orient ? 7 : 0;
  e->iparam[2] = 3;
  for (int r = 0; r < 3; r++) {
    for (int cc = 0; cc < 3; cc++) {
      e->param[13 + 3 * r + cc] = r == cc ? 1.0 : 0.0;
    }
  }
  e->ncon = nrows(e);
}

void mbs_elem_slide_planar(mbsElem *e, const double in_plane[6], int orient_pairs) {
  memcpy(e->param + 13, in_plane, 6 * sizeof(double));
  e->iparam[2] = 2;
  e->iparam[1] = orient_pairs;
  e->ncon = nrows(e);
}

void mbs_elem_slide_absolute(mbsElem *e, int planar) {
  e->iparam[3] = 1;
  e->iparam[2] = planar ? 1 : 2;
  e->ncon = nrows(e);
}

double mbs_slide_foot(const mbsModel *m, const mbsElem *e, const double *q, const double *v,
                      double *rate) {
  Foot f;
  *rate = NAN;
  if (foot(m, e, q, q, &f) != 0) {
    return NAN;
  }
  SVec a;
  foot_vectors(e, &f, &a, NULL, NULL);
  *rate = 0.0;
  for (int l = 0; l < a.n; l++) {
    *rate += a.v[l] * v[e->qidx[a.idx[l]]];
  }
  return f.s;
}

double mbs_slide_position(const mbsModel *m, const mbsElem *e, const double *q, double s,
                          double r[3], double tangent[3]) {
  int n0 = m->beam[e->iparam[0]].node0;
  Piece p;
  locate(m, e, s, &p);
  v0set(r);
  v0set(tangent);
  for (int l = 0; l < p.nn; l++) {
    const double *phi = q + 3 * (n0 + 4 * (p.n0 + l));
    vaxpy(r, p.N[l], phi);
    vaxpy(tangent, p.dN[l], phi);
  }
  return vnorm(tangent);
}

double mbs_slide_project(const mbsModel *m, const mbsElem *e, const double *q, const double P[3],
                         double *s_out) {
  const mbsBeam *b = &m->beam[e->iparam[0]];
  double best = INFINITY, S = 0.0;
  *s_out = 0.0;
  for (int j = 0; j < b->nelem; j++) {
    double L = mbs_beam_element_length(&m->elem[b->elem0 + j]), sj = S, dj = INFINITY;
    /* the nearest of a few samples, then Newton on (r(s) - P) . r'(s) = 0 within the element */
    for (int k = 0; k <= 8; k++) {
      double x = S + L * k / 8.0, r[3], t[3], d[3];
      mbs_slide_position(m, e, q, fmin(x, S + L * (1.0 - 1e-15)), r, t);
      vsub(d, r, P);
      if (vnorm(d) < dj) {
        dj = vnorm(d);
        sj = x;
      }
    }
    for (int it = 0; it < 50; it++) {
      double x = fmin(sj, S + L * (1.0 - 1e-15)), r[3], t[3], d[3], rp[3], tp[3], h = 1e-6 * L;
      mbs_slide_position(m, e, q, x, r, t);
      vsub(d, r, P);
      double f = vdot(d, t);
      /* f' = |r'|^2 + (r - P) . r'' (r'' by a difference: Newton only needs a slope) */
      double xs = x + h < S + L ? x + h : x - h;
      mbs_slide_position(m, e, q, xs, rp, tp);
      double fp = vdot(t, t) + (vdot(d, tp) - vdot(d, t)) / (xs - x);
      double step = fp > 0.0 ? -f / fp : 0.0;
      double nx = fmin(fmax(x + step, S), S + L);
      sj = nx;
      if (fabs(nx - x) <= 1e-15 * (1.0 + L + fabs(S))) {
        break;
      }
    }
    double r[3], t[3], d[3];
    mbs_slide_position(m, e, q, fmin(sj, S + L * (1.0 - 1e-15)), r, t);
    vsub(d, r, P);
    if (vnorm(d) < best) {
      best = vnorm(d);
      *s_out = sj;
    }
    S += L;
  }
  return best;
}
