/* geom.c: the narrow phase. Where a shape is at a configuration (mbs_shape_pose) and the
 * contact points of two shapes (mbs_collide): one static function per pair of kinds, written
 * for the kinds in enum order (sphere, box, capsule, points, plane, ring); the other order swaps
 * the arguments and then flips each normal and swaps the two closest points.
 *
 * Every point is a pair of closest points pa (on a) and pb (on b) with the unit normal n from a
 * to b and the gap (pb - pa) . n, negative in penetration. Polyhedral contacts (boxes) are
 * points of the features that can touch: a vertex on a face (or an edge), and two edges
 * crossing. A feature pair only counts when the normal lies in both features' normal cones
 * (the direction from a into b is one a's feature faces and b's feature faces back), so that
 * its gap is the separation along that normal, as in the separating axis test, and a vertex
 * near a corner of the other box takes the face it really rests on; a point whose overlap is
 * much more than the least one over the separating axes is dropped. */
#include <math.h>
#include <string.h>

#include "mbsim/contact.h"
#include "util/vec3.h"

/* how far (sine of the angle) a normal may lie outside a feature's normal cone: a box resting
 * slightly tilted on a face keeps its vertices and edge crossings within the margin */
#define CONE_TOL 0.05
/* lengths relative to the boxes' size: a vertex this close to a face's border is on the face,
 * an edge's closest point this close to its end is not interior */
#define LEN_TOL 1e-9
/* two points of one pair this close (relative to the size) are one point (a vertex on a
 * vertex, found from both boxes) */
#define DUP_TOL 1e-6
/* edges or segments closer to parallel than this sine: no single closest point */
#define PARALLEL_SIN 1e-3
/* box-box: how far (relative to the margin) an edge pair's gap may lie below twice the boxes'
 * overlap (below 0 for boxes apart): far above a step's penetrations (1e-6 of the margin and
 * less), far below the margin that edges side by side claimed (a die pile) */
#define EDGE_SLACK 0.01

/* ---- poses and frames ---- */

/* a beam segment's pose: centre midway between the points of frames attach and attach + 1,
 * axis 3 from the first to the second (axes 1, 2 any right-handed completion, deterministic),
 * half length half their distance */
static void segment_pose(const mbsModel *m, const mbsShape *s, const double *q, mbsPose *pose) {
  static const double zero[3] = {0.0, 0.0, 0.0};
  double xa[3], xb[3], u[3];
  mbs_attach_point(m, s->attach, zero, q, xa);
  mbs_attach_point(m, s->attach + 1, zero, q, xb);
  vsub(u, xb, xa);
  double l = vnorm(u);
  for (int r = 0; r < 3; r++) {
    pose->x[r] = 0.5 * (xa[r] + xb[r]);
    u[r] = l > 0.0 ? u[r] / l : (r == 2);
  }
  pose->half = 0.5 * l;
  /* axis 1: the world axis least parallel to u made normal to it; axis 2 = u x axis 1 */
  double a[3] = {0.0, 0.0, 0.0}, e1[3], e2[3];
  int k = fabs(u[0]) <= fabs(u[1]) ? (fabs(u[0]) <= fabs(u[2]) ? 0 : 2)
                                   : (fabs(u[1]) <= fabs(u[2]) ? 1 : 2);
  a[k] = 1.0;
  vcross(e2, u, a);
  double n2 = vnorm(e2);
  for (int r = 0; r < 3; r++) {
    e2[r] /= n2;
  }
  vcross(e1, e2, u);
  for (int r = 0; r < 3; r++) {
    pose->R[3 * r] = e1[r];
    pose->R[3 * r + 1] = e2[r];
    pose->R[3 * r + 2] = u[r];
  }
}

/* a bilinear patch's pose: its corners r_1 .. r_4 at q, centre their mean, world axes, half
 * the largest distance of a corner from the centre (its bounding sphere: a bilinear patch
 * lies in the convex hull of its corners); then the corners of its neighbours across the
 * edges xi = 0 (far corners, r_1, r_4) and eta = 0 (far corners, r_2, r_1), in their order */
static void patch_pose(const mbsModel *m, const mbsShape *s, const double *q, mbsPose *pose) {
  static const double zero[3] = {0.0, 0.0, 0.0};
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memcpy(pose->R, I3, sizeof(I3));
  pose->x[0] = pose->x[1] = pose->x[2] = 0.0;
  for (int k = 0; k < 4; k++) {
    mbs_attach_point(m, s->corner[k], zero, q, pose->corner + 3 * k);
    vaxpy(pose->x, 0.25, pose->corner + 3 * k);
  }
  double *l = pose->corner + 12, *b = pose->corner + 24;
  if (s->nbr[0][0] >= 0) {
    mbs_attach_point(m, s->nbr[0][0], zero, q, l);
    vcopy(l + 3, pose->corner);
    vcopy(l + 6, pose->corner + 9);
    mbs_attach_point(m, s->nbr[0][1], zero, q, l + 9);
  }
  if (s->nbr[1][0] >= 0) {
    mbs_attach_point(m, s->nbr[1][0], zero, q, b);
    mbs_attach_point(m, s->nbr[1][1], zero, q, b + 3);
    vcopy(b + 6, pose->corner + 3);
    vcopy(b + 9, pose->corner);
  }
  pose->half = 0.0;
  for (int k = 0; k < 4; k++) {
    double d[3];
    vsub(d, pose->corner + 3 * k, pose->x);
    pose->half = fmax(pose->half, vnorm(d));
  }
}

void mbs_shape_pose(const mbsModel *m, const mbsShape *s, const double *q, mbsPose *pose) {
  if (s->kind == MBS_SHAPE_PATCH) {
    patch_pose(m, s, q, pose);
    return;
  }
  if (s->segment) {
    segment_pose(m, s, q, pose);
    return;
  }
  pose->half = s->size[1];
  mbs_attach_point(m, s->attach, s->c, q, pose->x);
  int f = s->attach;
  int n0 = m->attach_node[f];
  if (n0 < 0 ||
      (m->attach_kind[f] != MBS_ATTACH_DIRECTORS && m->attach_kind[f] != MBS_ATTACH_BEAM_NODE)) {
    /* the ground, a fixed body (world components) or a point mass (no directors) */
    memcpy(pose->R, s->C, sizeof(pose->R));
    return;
  }
  /* axis i = C^j_i d_j with the frame's directors d_j at q */
  const double *d = q + 3 * (n0 + 1);
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 3; i++) {
      pose->R[3 * r + i] = s->C[i] * d[r] + s->C[3 + i] * d[3 + r] + s->C[6 + i] * d[6 + r];
    }
  }
}

/* column i of R */
static void axis(double a[3], const double R[9], int i) {
  a[0] = R[i];
  a[1] = R[3 + i];
  a[2] = R[6 + i];
}

/* world point of shape coordinates l */
static void to_world(double p[3], const mbsPose *P, const double l[3]) {
  for (int r = 0; r < 3; r++) {
    p[r] = P->x[r] + P->R[3 * r] * l[0] + P->R[3 * r + 1] * l[1] + P->R[3 * r + 2] * l[2];
  }
}

/* shape coordinates of world point p (R orthonormal) */
static void to_local(double l[3], const mbsPose *P, const double p[3]) {
  double d[3];
  vsub(d, p, P->x);
  for (int i = 0; i < 3; i++) {
    l[i] = P->R[i] * d[0] + P->R[3 + i] * d[1] + P->R[6 + i] * d[2];
  }
}

static double clamp(double x, double lo, double hi) {
  return x < lo ? lo : (x > hi ? hi : x);
}

/* a unit vector normal to unit u (deterministic) */
static void perpendicular(double p[3], const double u[3]) {
  int k = 0;
  for (int i = 1; i < 3; i++) {
    if (fabs(u[i]) < fabs(u[k])) {
      k = i;
    }
  }
  double e[3] = {0, 0, 0};
  e[k] = 1;
  vcross(p, u, e);
  double s = vnorm(p);
  p[0] /= s;
  p[1] /= s;
  p[2] /= s;
}

/* ---- the output ---- */

typedef struct {
  mbsContactPoint *out;
  int max; /* room in out */
  int n;   /* points written */
} sink;

static void emit(sink *s, const double pa[3], const double pb[3], const double n[3], double gap,
                 int feature) {
  if (s->n >= s->max) {
    return;
  }
  mbsContactPoint *c = s->out + s->n++;
  vcopy(c->pa, pa);
  vcopy(c->pb, pb);
  vcopy(c->n, n);
  c->gap = gap;
  c->feature = feature;
}

/* 1 if a written point has both closest points within tol of pa, pb */
static int written(const sink *s, const double pa[3], const double pb[3], double tol) {
  for (int i = 0; i < s->n; i++) {
    double da[3], db[3];
    vsub(da, pa, s->out[i].pa);
    vsub(db, pb, s->out[i].pb);
    if (vdot(da, da) <= tol * tol && vdot(db, db) <= tol * tol) {
      return 1;
    }
  }
  return 0;
}

/* two round shapes: points A of a and B of b (a centre or a segment's point) with radii ra,
 * rb; when A = B the normal is fallback (oriented along from a's centre to b's) */
static void round_pair(sink *s, const double A[3], double ra, const double B[3], double rb,
                       const double fallback[3], double margin, int feature) {
  double n[3], pa[3], pb[3];
  vsub(n, B, A);
  double dist = vnorm(n);
  double gap = dist - ra - rb;
  if (!(gap < margin)) {
    return;
  }
  if (dist > 0) {
    n[0] /= dist;
    n[1] /= dist;
    n[2] /= dist;
  } else {
    vcopy(n, fallback);
  }
  vcopy(pa, A);
  vaxpy(pa, ra, n);
  vcopy(pb, B);
  vaxpy(pb, -rb, n);
  emit(s, pa, pb, n, gap, feature);
}

/* ---- a point against a box ---- */

/* The point q of box (P, half edges h) closest to p; inside, the point on the face of least
 * penetration. nrm: the box's outward unit normal there (towards p when outside), d: the signed
 * distance (< 0 inside). Returns the region, one base-3 digit per axis (0 between the two
 * faces, 1 beyond the lower one, 2 beyond the upper one; inside: the face's digit). */
static int box_closest(const mbsPose *P, const double h[3], const double p[3], double q[3],
                       double nrm[3], double *d) {
  double l[3], ql[3];
  to_local(l, P, p);
  int code = 0, outside = 0;
  for (int i = 0, w = 1; i < 3; i++, w *= 3) {
    ql[i] = clamp(l[i], -h[i], h[i]);
    if (l[i] > h[i]) {
      code += 2 * w;
      outside = 1;
    } else if (l[i] < -h[i]) {
      code += w;
      outside = 1;
    }
  }
  if (outside) {
    double dl[3], dn[3];
    vsub(dl, l, ql);
    double dist = vnorm(dl);
    for (int r = 0; r < 3; r++) {
      dn[r] = P->R[3 * r] * dl[0] + P->R[3 * r + 1] * dl[1] + P->R[3 * r + 2] * dl[2];
    }
    for (int r = 0; r < 3; r++) {
      nrm[r] = dn[r] / dist;
    }
    *d = dist;
    to_world(q, P, ql);
    return code;
  }
  /* inside: the face of least penetration (the first of equal ones) */
  int best = 0;
  double depth = h[0] - fabs(l[0]);
  for (int i = 1; i < 3; i++) {
    if (h[i] - fabs(l[i]) < depth) {
      depth = h[i] - fabs(l[i]);
      best = i;
    }
  }
  double sgn = l[best] >= 0 ? 1.0 : -1.0;
  ql[best] = sgn * h[best];
  axis(nrm, P->R, best);
  for (int r = 0; r < 3; r++) {
    nrm[r] *= sgn;
  }
  *d = -depth;
  to_world(q, P, ql);
  static const int pow3[3] = {1, 3, 9};
  return (sgn > 0 ? 2 : 1) * pow3[best];
}

/* ---- one function per pair of kinds (kinds in enum order) ---- */

static void sphere_sphere(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                          const mbsPose *Pb, double margin, sink *s) {
  double fb[3];
  axis(fb, Pa->R, 2); /* concentric spheres: a's axis 3 */
  round_pair(s, Pa->x, a->size[0], Pb->x, b->size[0], fb, margin, 0);
}

/* closest point of the box to the centre (inside: the face of least penetration); feature:
 * the box region (box_closest) */
static void sphere_box(const mbsShape *a, const mbsPose *Pa, const mbsShape *b, const mbsPose *Pb,
                       double margin, sink *s) {
  double q[3], nrm[3], d;
  int region = box_closest(Pb, b->size, Pa->x, q, nrm, &d);
  double r = a->size[0], gap = d - r;
  if (gap < margin) {
    double n[3] = {-nrm[0], -nrm[1], -nrm[2]}, pa[3];
    vcopy(pa, Pa->x);
    vaxpy(pa, r, n);
    emit(s, pa, q, n, gap, region);
  }
}

/* each point against the sphere; feature: the point's index */
static void sphere_points(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                          const mbsPose *Pb, const double *pts, double margin, sink *s) {
  double fb[3];
  axis(fb, Pa->R, 2);
  for (int k = 0; k < b->npts; k++) {
    double p[3];
    to_world(p, Pb, pts + 3 * (b->pt0 + k));
    round_pair(s, Pa->x, a->size[0], p, 0.0, fb, margin, k);
  }
}

/* the plane's normal is its axis 3, out of the solid side */
static void sphere_plane(const mbsShape *a, const mbsPose *Pa, const mbsPose *Pb, double margin,
                         sink *s) {
  double np[3], rel[3];
  axis(np, Pb->R, 2);
  vsub(rel, Pa->x, Pb->x);
  double d = vdot(rel, np), r = a->size[0];
  if (d - r < margin) {
    double n[3] = {-np[0], -np[1], -np[2]}, pa[3], pb[3];
    vcopy(pa, Pa->x);
    vaxpy(pa, -r, np);
    vcopy(pb, Pa->x);
    vaxpy(pb, -d, np);
    emit(s, pa, pb, n, d - r, 0);
  }
}

/* a box's centre, axes (a[i] = column i) and half edges; vertex k has coordinate i at +h[i]
 * when bit i of k is set; edge e = 4 k + m runs along axis k at the signs (bit 0, bit 1) of m
 * on the axes k + 1 and k + 2 (mod 3) */
typedef struct {
  double x[3], a[3][3], h[3];
} boxFrame;

static void box_frame(boxFrame *f, const mbsShape *s, const mbsPose *P) {
  vcopy(f->x, P->x);
  for (int i = 0; i < 3; i++) {
    axis(f->a[i], P->R, i);
    f->h[i] = s->size[i];
  }
}

static void box_vertex(double v[3], const boxFrame *f, int k) {
  vcopy(v, f->x);
  for (int i = 0; i < 3; i++) {
    vaxpy(v, (k >> i) & 1 ? f->h[i] : -f->h[i], f->a[i]);
  }
}

/* midpoint of edge e = 4 k + m and the signs of its two faces on axes k + 1, k + 2 */
static void box_edge(double mid[3], double sg[2], const boxFrame *f, int e) {
  int k = e / 4, m = e % 4;
  sg[0] = (m & 1) ? 1.0 : -1.0;
  sg[1] = (m & 2) ? 1.0 : -1.0;
  vcopy(mid, f->x);
  vaxpy(mid, sg[0] * f->h[(k + 1) % 3], f->a[(k + 1) % 3]);
  vaxpy(mid, sg[1] * f->h[(k + 2) % 3], f->a[(k + 2) % 3]);
}

/* closest parameters of the lines p + s u and q + t v (u, v unit, not parallel) */
static void line_params(const double p[3], const double u[3], const double q[3], const double v[3],
                        double *s, double *t) {
  double d[3];
  vsub(d, p, q);
  double b = vdot(u, v), du = vdot(u, d), dv = vdot(v, d);
  *s = (b * dv - du) / (1.0 - b * b);
  *t = dv + b * *s;
}

/* closest parameters of the segments p + s u (|s| <= hu) and q + t v (|t| <= hv), u, v unit
 * (Ericson, Real-Time Collision Detection, sec. 5.1.9) */
static void segment_params(const double p[3], const double u[3], double hu, const double q[3],
                           const double v[3], double hv, double *s, double *t) {
  double d[3];
  vsub(d, p, q);
  double b = vdot(u, v), du = vdot(u, d), dv = vdot(v, d), den = 1.0 - b * b;
  double ss = clamp(den > 1e-12 ? (b * dv - du) / den : 0.0, -hu, hu);
  double tt = dv + b * ss;
  if (tt < -hv || tt > hv) {
    tt = clamp(tt, -hv, hv);
    ss = clamp(b * tt - du, -hu, hu);
  }
  *s = ss;
  *t = tt;
}

/* is -N (the direction from the vertex k of box f into the other shape) in the vertex's
 * normal cone (within CONE_TOL)? N is the other shape's outward normal */
static int vertex_faces(const boxFrame *f, int k, const double N[3]) {
  for (int i = 0; i < 3; i++) {
    double sg = (k >> i) & 1 ? 1.0 : -1.0;
    if (sg * vdot(N, f->a[i]) > CONE_TOL) {
      return 0;
    }
  }
  return 1;
}

/* Vertex k of box A against box B: 1 with the point pb on B, B's outward normal N and the gap
 * when the vertex is within margin of B. Near or inside B its coordinates in B pick the face:
 * of the (at most three) faces on the vertex's side whose tangential extent holds it (within
 * tol) and whose normal the vertex faces, the least penetrated one; beyond an edge or a corner
 * of B, the closest point there. */
static int vertex_box(const boxFrame *A, int k, const boxFrame *B, double tol, double margin,
                      double pb[3], double N[3], double *gap) {
  double v[3], d[3], l[3], ql[3];
  box_vertex(v, A, k);
  vsub(d, v, B->x);
  int nout = 0, jout = -1;
  for (int i = 0; i < 3; i++) {
    l[i] = vdot(d, B->a[i]);
    if (!(fabs(l[i]) - B->h[i] < margin + tol)) {
      return 0; /* beyond the margin of B's slab along axis i (its border belongs) */
    }
    ql[i] = clamp(l[i], -B->h[i], B->h[i]);
    if (fabs(l[i]) > B->h[i] + tol) {
      nout++;
      jout = i;
    }
  }
  if (nout <= 1) {
    int best = -1;
    double bg = -INFINITY;
    for (int i = 0; i < 3; i++) {
      if (nout == 1 && jout != i) {
        continue; /* beyond this face's border */
      }
      double sg = l[i] >= 0 ? 1.0 : -1.0, Ni[3];
      vcopy(Ni, B->a[i]);
      Ni[0] *= sg;
      Ni[1] *= sg;
      Ni[2] *= sg;
      double g = sg * l[i] - B->h[i];
      if (g > bg && vertex_faces(A, k, Ni)) {
        bg = g;
        best = i;
        vcopy(N, Ni);
      }
    }
    if (best < 0 || !(bg < margin)) {
      return 0;
    }
    ql[best] = l[best] >= 0 ? B->h[best] : -B->h[best];
    *gap = bg;
  } else {
    double dl[3];
    vsub(dl, l, ql);
    double dist = vnorm(dl);
    if (!(dist < margin)) {
      return 0;
    }
    for (int r = 0; r < 3; r++) {
      N[r] = (B->a[0][r] * dl[0] + B->a[1][r] * dl[1] + B->a[2][r] * dl[2]) / dist;
    }
    if (!vertex_faces(A, k, N)) {
      return 0;
    }
    *gap = dist;
  }
  vcopy(pb, B->x);
  for (int i = 0; i < 3; i++) {
    vaxpy(pb, ql[i], B->a[i]);
  }
  return 1;
}

/* Box-box: the vertices of a against b (features 0-7), those of b against a (8-15), then the
 * crossing edges (16 + 12 ea + eb): closest points interior to both edges, the normal along
 * their cross product, in a's edge's normal cone and its opposite in b's, so that the gap is
 * the separation along that axis. Points found twice (a vertex on a vertex) count once, and
 * points whose gap lies far below the best separation of the separating axis test (an overlap
 * along a side while the boxes rest on each other) are none. At most 16 + 72 points: for each
 * pair of edge directions the normal is fixed up to its sign, at most two of a's four parallel
 * edges face each sign and at most two of b's face back. */
static void box_box(const mbsShape *a, const mbsPose *Pa, const mbsShape *b, const mbsPose *Pb,
                    double margin, sink *s) {
  boxFrame A, B;
  box_frame(&A, a, Pa);
  box_frame(&B, b, Pb);
  double d[3];
  vsub(d, B.x, A.x);
  /* bounding spheres, then the separating axis test (the 6 face normals and the 9 cross
   * products of edge directions): separated by more than the margin along one axis, every
   * point's gap is larger; overlapping, the axis of least overlap bounds the penetration */
  double ra = vnorm(A.h), rb = vnorm(B.h);
  if (!(vdot(d, d) < (ra + rb + margin) * (ra + rb + margin))) {
    return;
  }
  double c[3][3]; /* c[i][j] = a_i . b_j */
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      c[i][j] = vdot(A.a[i], B.a[j]);
    }
  }
  /* an axis that separates by more than the margin ends the test: best would exceed it */
  double best = -INFINITY; /* the largest separation along an axis */
  for (int i = 0; i < 3; i++) {
    double ea = A.h[i] + B.h[0] * fabs(c[i][0]) + B.h[1] * fabs(c[i][1]) + B.h[2] * fabs(c[i][2]);
    double eb = B.h[i] + A.h[0] * fabs(c[0][i]) + A.h[1] * fabs(c[1][i]) + A.h[2] * fabs(c[2][i]);
    double sa = fabs(vdot(d, A.a[i])) - ea, sb = fabs(vdot(d, B.a[i])) - eb;
    if (sa > margin || sb > margin) {
      return;
    }
    best = fmax(best, fmax(sa, sb));
  }
  double cross[3][3][3]; /* unit a_ka x b_kb, or zero for parallel edges */
  double sepx[3][3];      /* the separation along it */
  for (int ka = 0; ka < 3; ka++) {
    for (int kb = 0; kb < 3; kb++) {
      double *cx = cross[ka][kb];
      vcross(cx, A.a[ka], B.a[kb]);
      double sn = vnorm(cx);
      if (sn < PARALLEL_SIN) {
        cx[0] = cx[1] = cx[2] = 0; /* parallel edges: their ends are vertex points */
        continue;
      }
      cx[0] /= sn;
      cx[1] /= sn;
      cx[2] /= sn;
      double e = 0;
      for (int i = 0; i < 3; i++) {
        e += A.h[i] * fabs(vdot(A.a[i], cx)) + B.h[i] * fabs(vdot(B.a[i], cx));
      }
      double sep = fabs(vdot(d, cx)) - e;
      sepx[ka][kb] = sep;
      if (sep > margin) {
        return;
      }
      best = fmax(best, sep);
    }
  }
  /* A point's gap is the separation along its normal, at most the best one; a point far below
   * it (along an axis where the boxes overlap by their widths, a box slid off another's edge
   * by a little) is no contact: keep gaps above 2 best - margin */
  double floor_gap = best + fmin(best, 0.0) - margin;
  /* two edges whose offset along their cross product claims an overlap far beyond the boxes'
   * (2 best where they overlap, none where they are apart) are no contact either: nearly
   * parallel edges of two boxes side by side, one a little higher (their normal on the
   * boundary of both cones, the boxes apart along another axis), met each other's offset of
   * the margin (a die pile: gap -1e-3 m between boxes 1.6e-10 m apart) */
  double edge_floor = 2.0 * fmin(best, 0.0) - EDGE_SLACK * margin;
  double size = fmax(fmax(fmax(A.h[0], A.h[1]), fmax(A.h[2], B.h[0])), fmax(B.h[1], B.h[2]));
  double tol = LEN_TOL * size, dup = DUP_TOL * size;

  /* vertices on faces (or beyond an edge or corner of the other box). A vertex's coordinate
   * along F's axis i is (V.x - F.x) . f_i + sum_j +-h_j v_j . f_i: a vertex whose estimate
   * from those terms lies beyond F's slab by more than the margin, tol and twice a bound of
   * the estimate's rounding (1e-12 of the coordinates' and half edges' sizes, thousands of
   * times the rounding) is one vertex_box rejects at that axis; it is skipped without its
   * exact coordinates, and the points are the same to the bit */
  for (int side = 0; side < 2; side++) {
    const boxFrame *V = side ? &B : &A, *F = side ? &A : &B;
    double off[3], t[3][3], scale = 0.0;
    for (int r = 0; r < 3; r++) {
      scale += fabs(V->x[r]) + fabs(F->x[r]) + V->h[r];
    }
    double lim = margin + tol + 2e-12 * scale;
    for (int i = 0; i < 3; i++) {
      off[i] = side ? vdot(d, F->a[i]) : -vdot(d, F->a[i]); /* d = B.x - A.x */
      for (int j = 0; j < 3; j++) {
        t[i][j] = V->h[j] * (side ? c[i][j] : c[j][i]);
      }
    }
    for (int k = 0; k < 8; k++) {
      double v[3], q[3], N[3], gap;
      int far = 0;
      for (int i = 0; i < 3 && !far; i++) {
        double l = off[i];
        for (int j = 0; j < 3; j++) {
          l += (k >> j) & 1 ? t[i][j] : -t[i][j];
        }
        far = fabs(l) - F->h[i] > lim;
      }
      if (far || !vertex_box(V, k, F, tol, margin, q, N, &gap) || gap < floor_gap) {
        continue;
      }
      box_vertex(v, V, k);
      if (side == 0) { /* a's vertex, b's face: the normal from a to b is -N */
        double n[3] = {-N[0], -N[1], -N[2]};
        if (!written(s, v, q, dup)) {
          emit(s, v, q, n, gap, k);
        }
      } else if (!written(s, q, v, dup)) {
        emit(s, q, v, N, gap, 8 + k);
      }
    }
  }

  /* crossing edges: the gap along n = o (a_ka x b_kb) is the offset of b's edge from b's centre
   * along n, less a's, plus the centres' (the edges are normal to n), a test before their
   * closest points */
  /* An edge pair within the cones has its gap g at most the axis's separation plus
   * 2 CONE_TOL (the four half edges across it): an edge's offset term s h (a . n) is its
   * box's extent h |a . n| where |a . n| > CONE_TOL, at least that less 2 h CONE_TOL where
   * not. An axis whose separation lies that far (and a rounding bound) below both floors
   * has no edge pair to test. */
  double hsum = A.h[0] + A.h[1] + A.h[2] + B.h[0] + B.h[1] + B.h[2];
  double gfloor = fmin(floor_gap, edge_floor) - tol - 2.0 * CONE_TOL * hsum;
  for (int ka = 0; ka < 3; ka++) {
    int a1 = (ka + 1) % 3, a2 = (ka + 2) % 3;
    for (int kb = 0; kb < 3; kb++) {
      int b1 = (kb + 1) % 3, b2 = (kb + 2) % 3;
      const double *cx = cross[ka][kb];
      if (cx[0] == 0 && cx[1] == 0 && cx[2] == 0) {
        continue;
      }
      if (sepx[ka][kb] < gfloor - 1e-12 * (fabs(sepx[ka][kb]) + hsum)) {
        continue;
      }
      double ca1 = vdot(cx, A.a[a1]), ca2 = vdot(cx, A.a[a2]);
      double cb1 = vdot(cx, B.a[b1]), cb2 = vdot(cx, B.a[b2]), dc = vdot(d, cx);
      for (int ma = 0; ma < 4; ma++) {
        double s1 = (ma & 1) ? 1.0 : -1.0, s2 = (ma & 2) ? 1.0 : -1.0;
        /* the normal points out of a's edge (within its cone), and from a's centre to b's:
         * along -n the boxes would overlap by the sum of their widths less this overlap */
        double o = s1 * ca1 + s2 * ca2 >= 0 ? 1.0 : -1.0;
        if (o * s1 * ca1 < -CONE_TOL || o * s2 * ca2 < -CONE_TOL || !(o * dc > 0)) {
          continue;
        }
        double offa = o * (s1 * A.h[a1] * ca1 + s2 * A.h[a2] * ca2);
        for (int mb = 0; mb < 4; mb++) {
          double u1 = (mb & 1) ? 1.0 : -1.0, u2 = (mb & 2) ? 1.0 : -1.0;
          /* and into b's edge: its opposite within b's edge's cone */
          if (-o * u1 * cb1 < -CONE_TOL || -o * u2 * cb2 < -CONE_TOL) {
            continue;
          }
          double g = o * dc + o * (u1 * B.h[b1] * cb1 + u2 * B.h[b2] * cb2) - offa;
          if (!(g < margin + tol && g >= floor_gap - tol && g >= edge_floor - tol)) {
            continue;
          }
          double ma3[3], mb3[3], sga[2], sgb[2], sa, tb;
          box_edge(ma3, sga, &A, 4 * ka + ma);
          box_edge(mb3, sgb, &B, 4 * kb + mb);
          line_params(ma3, A.a[ka], mb3, B.a[kb], &sa, &tb);
          if (!(fabs(sa) < A.h[ka] - tol && fabs(tb) < B.h[kb] - tol)) {
            continue; /* not interior to both edges */
          }
          double pa[3], pb[3], n[3] = {o * cx[0], o * cx[1], o * cx[2]}, dd[3];
          vcopy(pa, ma3);
          vaxpy(pa, sa, A.a[ka]);
          vcopy(pb, mb3);
          vaxpy(pb, tb, B.a[kb]);
          vsub(dd, pb, pa);
          double gap = vdot(dd, n);
          if (gap < margin && gap >= floor_gap && gap >= edge_floor && !written(s, pa, pb, dup)) {
            emit(s, pa, pb, n, gap, 16 + 12 * (4 * ka + ma) + 4 * kb + mb);
          }
        }
      }
    }
  }
}

/* Box-capsule: each end of the segment as a sphere against the box (features 0, 1), then the
 * segment's closest approach to each edge (2 + edge) where it is interior to both and the
 * segment lies outward of the edge (within its normal cone). */
static void box_capsule(const mbsShape *a, const mbsPose *Pa, const mbsShape *b, const mbsPose *Pb,
                        double margin, sink *s) {
  boxFrame A;
  box_frame(&A, a, Pa);
  double u[3], r = b->size[0], hb = b->size[1], d[3];
  axis(u, Pb->R, 2);
  vsub(d, Pb->x, A.x);
  double reach = vnorm(A.h) + hb + r + margin;
  if (!(vdot(d, d) < reach * reach)) {
    return;
  }
  for (int k = 0; k < 2; k++) {
    double e[3], q[3], nrm[3], dist;
    vcopy(e, Pb->x);
    vaxpy(e, k ? hb : -hb, u);
    box_closest(Pa, a->size, e, q, nrm, &dist);
    if (dist - r < margin) {
      double pb[3];
      vcopy(pb, e);
      vaxpy(pb, -r, nrm);
      emit(s, q, pb, nrm, dist - r, k);
    }
  }
  double size = fmax(fmax(fmax(A.h[0], A.h[1]), A.h[2]), hb);
  double tol = LEN_TOL * size;
  for (int e = 0; e < 12; e++) {
    int k = e / 4;
    double cx[3];
    vcross(cx, A.a[k], u);
    if (vnorm(cx) < PARALLEL_SIN) {
      continue;
    }
    double mid[3], sg[2], se, ts;
    box_edge(mid, sg, &A, e);
    line_params(mid, A.a[k], Pb->x, u, &se, &ts);
    if (!(fabs(se) < A.h[k] - tol && fabs(ts) < hb - tol)) {
      continue;
    }
    double pe[3], ps[3], n[3];
    vcopy(pe, mid);
    vaxpy(pe, se, A.a[k]);
    vcopy(ps, Pb->x);
    vaxpy(ps, ts, u);
    vsub(n, ps, pe);
    double dist = vnorm(n);
    if (!(dist - r < margin) || !(dist > 0)) {
      continue;
    }
    n[0] /= dist;
    n[1] /= dist;
    n[2] /= dist;
    if (sg[0] * vdot(n, A.a[(k + 1) % 3]) < -CONE_TOL ||
        sg[1] * vdot(n, A.a[(k + 2) % 3]) < -CONE_TOL) {
      continue; /* the segment is not outward of this edge */
    }
    double pb[3];
    vcopy(pb, ps);
    vaxpy(pb, -r, n);
    emit(s, pe, pb, n, dist - r, 2 + e);
  }
}

/* each point inside the box or within margin of its surface; feature: the point's index */
static void box_points(const mbsShape *a, const mbsPose *Pa, const mbsShape *b, const mbsPose *Pb,
                       const double *pts, double margin, sink *s) {
  for (int k = 0; k < b->npts; k++) {
    double p[3], q[3], nrm[3], d;
    to_world(p, Pb, pts + 3 * (b->pt0 + k));
    box_closest(Pa, a->size, p, q, nrm, &d);
    if (d < margin) {
      emit(s, q, p, nrm, d, k);
    }
  }
}

/* a point p of a (radius r about it) against the plane (point x, normal np) */
static void point_plane(sink *s, const double p[3], double r, const double x[3], const double np[3],
                        double margin, int feature) {
  double rel[3];
  vsub(rel, p, x);
  double d = vdot(rel, np);
  if (d - r < margin) {
    double n[3] = {-np[0], -np[1], -np[2]}, pa[3], pb[3];
    vcopy(pa, p);
    vaxpy(pa, -r, np);
    vcopy(pb, p);
    vaxpy(pb, -d, np);
    emit(s, pa, pb, n, d - r, feature);
  }
}

/* each vertex within margin of the plane; feature: the vertex */
static void box_plane(const mbsShape *a, const mbsPose *Pa, const mbsPose *Pb, double margin,
                      sink *s) {
  boxFrame A;
  box_frame(&A, a, Pa);
  double np[3];
  axis(np, Pb->R, 2);
  for (int k = 0; k < 8; k++) {
    double v[3];
    box_vertex(v, &A, k);
    point_plane(s, v, 0.0, Pb->x, np, margin, k);
  }
}

/* Capsule-capsule: the closest points of the two segments (feature 0); segments closer to
 * parallel than PARALLEL_SIN that overlap along a's axis: both ends of the overlap (features 1,
 * 2), each with its closest point on b's segment. */
static void capsule_capsule(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                            const mbsPose *Pb, double margin, sink *s) {
  double ua[3], ub[3], cx[3], d[3], fb[3];
  axis(ua, Pa->R, 2);
  axis(ub, Pb->R, 2);
  double ha = a->size[1], hb = b->size[1], ra = a->size[0], rb = b->size[0];
  vsub(d, Pb->x, Pa->x);
  double reach = ha + hb + ra + rb + margin;
  if (!(vdot(d, d) < reach * reach)) {
    return;
  }
  vcross(cx, ua, ub);
  double sn = vnorm(cx);
  /* the normal when the axes meet: across both, from a's centre towards b's */
  if (sn > 0) {
    for (int r = 0; r < 3; r++) {
      fb[r] = cx[r] / sn;
    }
  } else {
    perpendicular(fb, ua);
  }
  if (vdot(fb, d) < 0) {
    fb[0] = -fb[0];
    fb[1] = -fb[1];
    fb[2] = -fb[2];
  }
  if (sn < PARALLEL_SIN) {
    double c0 = vdot(ua, d), bu = fabs(vdot(ua, ub)) * hb;
    double lo = fmax(-ha, c0 - bu), hi = fmin(ha, c0 + bu);
    if (hi - lo > LEN_TOL * fmax(ha, hb)) {
      for (int k = 0; k < 2; k++) {
        double A[3], B[3], rel[3];
        vcopy(A, Pa->x);
        vaxpy(A, k ? hi : lo, ua);
        vsub(rel, A, Pb->x);
        vcopy(B, Pb->x);
        vaxpy(B, clamp(vdot(ub, rel), -hb, hb), ub);
        round_pair(s, A, ra, B, rb, fb, margin, 1 + k);
      }
      return;
    }
  }
  double sa, tb, A[3], B[3];
  segment_params(Pa->x, ua, ha, Pb->x, ub, hb, &sa, &tb);
  vcopy(A, Pa->x);
  vaxpy(A, sa, ua);
  vcopy(B, Pb->x);
  vaxpy(B, tb, ub);
  round_pair(s, A, ra, B, rb, fb, margin, 0);
}

/* the point of capsule b's segment (pose P, half length h) nearest to p */
static void segment_nearest(double B[3], const mbsPose *P, double h, const double p[3]) {
  double u[3], rel[3];
  axis(u, P->R, 2);
  vsub(rel, p, P->x);
  vcopy(B, P->x);
  vaxpy(B, clamp(vdot(u, rel), -h, h), u);
}

/* the sphere's centre against the nearest point of the capsule's segment (a centre on the
 * axis: the normal across the axis); feature 0 */
static void sphere_capsule(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                           const mbsPose *Pb, double margin, sink *s) {
  double B[3], u[3], fb[3];
  segment_nearest(B, Pb, b->size[1], Pa->x);
  axis(u, Pb->R, 2);
  perpendicular(fb, u);
  round_pair(s, Pa->x, a->size[0], B, b->size[0], fb, margin, 0);
}

/* each point against the nearest point of the capsule's segment; feature: the point's index */
static void capsule_points(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                           const mbsPose *Pb, const double *pts, double margin, sink *s) {
  double u[3], fb[3];
  axis(u, Pa->R, 2);
  perpendicular(fb, u);
  for (int k = 0; k < b->npts; k++) {
    double p[3], A[3];
    to_world(p, Pb, pts + 3 * (b->pt0 + k));
    segment_nearest(A, Pa, a->size[1], p);
    round_pair(s, A, a->size[0], p, 0.0, fb, margin, k);
  }
}

/* the two ends of the segment (features 0, 1) */
static void capsule_plane(const mbsShape *a, const mbsPose *Pa, const mbsPose *Pb, double margin,
                          sink *s) {
  double u[3], np[3];
  axis(u, Pa->R, 2);
  axis(np, Pb->R, 2);
  for (int k = 0; k < 2; k++) {
    double e[3];
    vcopy(e, Pa->x);
    vaxpy(e, k ? a->size[1] : -a->size[1], u);
    point_plane(s, e, a->size[0], Pb->x, np, margin, k);
  }
}

/* each point within margin of the plane (or below it); feature: the point's index */
static void points_plane(const mbsShape *a, const mbsPose *Pa, const mbsPose *Pb, const double *pts,
                         double margin, sink *s) {
  double np[3];
  axis(np, Pb->R, 2);
  for (int k = 0; k < a->npts; k++) {
    double p[3];
    to_world(p, Pa, pts + 3 * (a->pt0 + k));
    point_plane(s, p, 0.0, Pb->x, np, margin, k);
  }
}

/* Capsule-ring (feature 0): the capsule's axis passes through the ring's bore (a circle of
 * radius R about the ring's axis 3) and touches it from inside. The axis crosses the ring's
 * plane at X (a capsule whose segment does not cross it within its length, or lies in the
 * plane, gives nothing: a beam's neighbouring segment takes the point); the bore's point B =
 * c + R e on the side e = (X - c) / |X - c| the axis is displaced to from the centre c is the
 * one the capsule can reach, and the gap is B's distance from the segment less r: R - |X - c|
 * - r for an axis along the ring's, the clearance of a sleeve on its pole (seed 002 sec. 6.3:
 * the two circles of the sleeve's bore against the pole). The normal points from the segment
 * to B (from the capsule towards the ring); an axis already beyond the bore (B on its other
 * side) takes e, with the gap negative. A concentric axis takes any e normal to the ring's
 * axis (the gap is the same all round). */
static void capsule_ring(const mbsShape *a, const mbsPose *Pa, const mbsShape *b, const mbsPose *Pb,
                         double margin, sink *s) {
  double u[3], ax[3], d[3], X[3], e[3], B[3], A[3], n[3];
  axis(u, Pa->R, 2);
  axis(ax, Pb->R, 2);
  double h = a->size[1], r = a->size[0], R = b->size[0], un = vdot(u, ax);
  if (fabs(un) < PARALLEL_SIN) {
    return;
  }
  /* where the axis crosses the ring's plane: half open, so that of two segments meeting
   * there one takes it */
  vsub(d, Pb->x, Pa->x);
  double t = vdot(d, ax) / un;
  if (!(t >= -h && t < h)) {
    return;
  }
  vcopy(X, Pa->x);
  vaxpy(X, t, u);
  vsub(e, X, Pb->x);
  vaxpy(e, -vdot(e, ax), ax); /* in the ring's plane (X is, up to round-off) */
  double off = vnorm(e);
  if (off > 0.0) {
    e[0] /= off;
    e[1] /= off;
    e[2] /= off;
  } else {
    perpendicular(e, ax);
  }
  vcopy(B, Pb->x);
  vaxpy(B, R, e);
  segment_nearest(A, Pa, h, B);
  vsub(n, B, A);
  double dist = vnorm(n), side = vdot(n, e);
  double gap = side > 0.0 ? dist - r : side - r;
  if (!(gap < margin)) {
    return;
  }
  if (side > 0.0 && dist > 0.0) {
    n[0] /= dist;
    n[1] /= dist;
    n[2] /= dist;
  } else {
    vcopy(n, e);
  }
  double pa[3];
  vcopy(pa, A);
  vaxpy(pa, r, n);
  emit(s, pa, B, n, gap, 0);
}

/* ---- bilinear patches (seed 002 sec. 3.3, eq. 3.48: x = sum_i N_i r_i) ---- */

/* the point x(xi, eta) of the patch with corners r (4 x 3), its tangents x_xi, x_eta */
static void patch_point(const double r[12], double xi, double eta, double x[3], double txi[3],
                        double teta[3]) {
  double N[4];
  mbs_patch_weights(N, xi, eta);
  for (int j = 0; j < 3; j++) {
    x[j] = N[0] * r[j] + N[1] * r[3 + j] + N[2] * r[6 + j] + N[3] * r[9 + j];
    txi[j] = (1.0 - eta) * (r[3 + j] - r[j]) + eta * (r[6 + j] - r[9 + j]);
    teta[j] = (1.0 - xi) * (r[9 + j] - r[j]) + xi * (r[6 + j] - r[3 + j]);
  }
}

void mbs_patch_weights(double N[4], double xi, double eta) {
  N[0] = (1.0 - xi) * (1.0 - eta);
  N[1] = xi * (1.0 - eta);
  N[2] = xi * eta;
  N[3] = (1.0 - xi) * eta;
}

int mbs_patch_project(const double r[12], const double p[3], double st[2], double x[3],
                      double n[3]) {
  /* Newton on f = |x(xi, eta) - p|^2 / 2: gradient (d . x_xi, d . x_eta), d = x - p, Hessian
   * the tangents' metric plus d . x_xi_eta off the diagonal (Gauss-Newton without it where
   * the Hessian is not positive definite); a start at the centre, steps bounded so that the
   * parameters stay near the patch */
  double xi = 0.5, eta = 0.5, txi[3], teta[3], twist[3];
  for (int j = 0; j < 3; j++) {
    twist[j] = r[j] - r[3 + j] + r[6 + j] - r[9 + j];
  }
  for (int it = 0; it < 30; it++) {
    double d[3];
    patch_point(r, xi, eta, x, txi, teta);
    vsub(d, x, p);
    double g0 = vdot(d, txi), g1 = vdot(d, teta);
    double a = vdot(txi, txi), c = vdot(teta, teta), b = vdot(txi, teta) + vdot(d, twist);
    double det = a * c - b * b;
    if (!(det > 1e-3 * a * c)) {
      b = vdot(txi, teta);
      det = a * c - b * b;
    }
    if (!(det > 0.0)) {
      return 0; /* a degenerate patch (corners on a line) */
    }
    double dxi = -(c * g0 - b * g1) / det, deta = -(a * g1 - b * g0) / det;
    double big = fmax(fabs(dxi), fabs(deta));
    if (big > 0.5) {
      dxi *= 0.5 / big;
      deta *= 0.5 / big;
    }
    xi = clamp(xi + dxi, -1.0, 2.0);
    eta = clamp(eta + deta, -1.0, 2.0);
    if (big < 1e-13) {
      break;
    }
  }
  patch_point(r, xi, eta, x, txi, teta);
  /* the contour normal n = t_1 x t_2 (seed 002 after eq. 3.49) */
  vcross(n, txi, teta);
  double l = vnorm(n);
  if (!(l > 0.0)) {
    return 0;
  }
  for (int j = 0; j < 3; j++) {
    n[j] /= l;
  }
  st[0] = xi;
  st[1] = eta;
  return 1;
}

/* 1 if the parameter t of a patch lies on it: [0, 1) with the edge t = 1 the next patch's,
 * [0, 1] where that edge is the surface's border (closed); widened by LEN_TOL at 0, narrowed
 * at an inner edge 1, so that a point on an edge two patches share is exactly one's */
static int patch_param_in(double t, int closed) {
  return t >= -LEN_TOL && (closed ? t <= 1.0 + LEN_TOL : t < 1.0 - LEN_TOL);
}

/* Point p (a vertex, or a sphere's centre with radius rad) against patch b: its closest point
 * x on the patch (the projection, mbs_patch_project) when that falls on the patch itself (an
 * edge's neighbour takes the rest), the normal from the point into the patch -n, the gap the
 * height of p above the patch along n less rad. A point deeper behind the patch than depth
 * gives nothing (it is the other side's: a shape under the surface is not pulled through). */
/* Over a convex edge (a ridge) between patch b and its neighbour across b's edge xi = 0
 * (dir 0) or eta = 0 (dir 1) lies a wedge between the two patches' normals whose points
 * neither projection reaches: b takes them (the neighbour's edge there is its xi = 1 or
 * eta = 1, which it leaves to b). A point p there, beyond b's edge (st[dir] < 0) and beyond
 * the neighbour's (its parameter >= 1), over the edge's segment, touches the edge's point x_e
 * under it, with the normal along p - x_e, on the outer side of both patches (a point behind
 * both is not over a ridge). Returns 1 with x_e and the unit n (from the patch to p), else 0. */
static int patch_ridge(const mbsShape *b, const mbsPose *Pb, const double p[3],
                       const double st[2], int dir, double x[3], double n[3]) {
  const double *nb = Pb->corner + 12 * (1 + dir);
  double sn[2], xn[3], nn[3], xs[3], ns[3];
  if (b->nbr[dir][0] < 0 || !(st[dir] < -LEN_TOL) ||
      !patch_param_in(st[1 - dir], b->closed & (dir == 0 ? 2 : 1)) ||
      !mbs_patch_project(nb, p, sn, xn, nn) || !(sn[dir] >= 1.0 - LEN_TOL)) {
    return 0;
  }
  /* the edge from corner 1 to corner 4 (xi = 0) or to corner 2 (eta = 0) */
  const double *c0 = Pb->corner, *c1 = Pb->corner + (dir == 0 ? 9 : 3);
  double e[3], d[3];
  vsub(e, c1, c0);
  vsub(d, p, c0);
  double ee = vdot(e, e), t = ee > 0.0 ? vdot(d, e) / ee : -1.0;
  if (!patch_param_in(t, b->closed & (dir == 0 ? 2 : 1))) {
    return 0;
  }
  for (int j = 0; j < 3; j++) {
    x[j] = c0[j] + t * e[j];
    d[j] = p[j] - x[j];
  }
  double l = vnorm(d);
  /* both patches' normals at the edge point: b's at (0, t) or (t, 0), the neighbour's at
   * (1, t) or (t, 1) (their parameters run alike along the edge) */
  if (dir == 0) {
    patch_point(Pb->corner, 0.0, t, xs, ns, nn);
  } else {
    patch_point(Pb->corner, t, 0.0, xs, ns, nn);
  }
  vcross(n, ns, nn);
  if (dir == 0) {
    patch_point(nb, 1.0, t, xs, ns, nn);
  } else {
    patch_point(nb, t, 1.0, xs, ns, nn);
  }
  vcross(xn, ns, nn);
  if (!(l > 0.0) || !(vdot(d, n) > 0.0) || !(vdot(d, xn) > 0.0)) {
    return 0;
  }
  for (int j = 0; j < 3; j++) {
    n[j] = d[j] / l;
  }
  return 1;
}

static void point_patch(sink *s, const double p[3], double rad, double depth, const mbsShape *b,
                        const mbsPose *Pb, double margin, int feature) {
  double st[2], x[3], n[3], d[3];
  if (!mbs_patch_project(Pb->corner, p, st, x, n)) {
    return;
  }
  if (!patch_param_in(st[0], b->closed & 1) || !patch_param_in(st[1], b->closed & 2)) {
    /* over a ridge along the edge xi = 0 or eta = 0: the edge's point (features apart from
     * the patch's own: 16 + the point's) */
    for (int dir = 0; dir < 2; dir++) {
      if (patch_ridge(b, Pb, p, st, dir, x, n)) {
        vsub(d, p, x);
        double h = vnorm(d), pa[3], m[3];
        if (h - rad > margin) {
          return;
        }
        for (int j = 0; j < 3; j++) {
          pa[j] = p[j] - rad * n[j];
          m[j] = -n[j];
        }
        emit(s, pa, x, m, h - rad, 16 + feature);
        return;
      }
    }
    return;
  }
  vsub(d, p, x);
  double h = vdot(d, n);
  if (h - rad > margin || h < -depth) {
    return;
  }
  double pa[3], m[3];
  for (int j = 0; j < 3; j++) {
    pa[j] = p[j] - rad * n[j];
    m[j] = -n[j];
  }
  emit(s, pa, x, m, h - rad, feature);
}

/* Sphere-patch: the centre against the patch (feature 0) */
static void sphere_patch(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                         const mbsPose *Pb, double margin, sink *s) {
  double reach = a->size[0] + Pb->half + margin;
  double d[3];
  vsub(d, Pa->x, Pb->x);
  if (!(vdot(d, d) < reach * reach)) {
    return;
  }
  point_patch(s, Pa->x, a->size[0], a->size[0], b, Pb, margin, 0);
}

/* 1 if corner k of patch b is the one patch of its surface that reports the node: corner 1
 * (xi, eta) = (0, 0) always, the corners on the surface's last column and row (b->closed)
 * too, so that each node of the grid is one patch's */
static int patch_owns_corner(const mbsShape *b, int k) {
  switch (k) {
    case 0:
      return 1;
    case 1:
      return b->closed & 1;
    case 2:
      return b->closed == 3;
    default:
      return (b->closed & 2) != 0;
  }
}

/* Node-box: a node of patch b (corner k, one it owns) against box a's faces, as point-box: a
 * node that pokes towards a face (a peak or a ridge under it: neither of its two neighbours
 * on the patch nearer the face's plane, one farther) touches the face at the node, its
 * impulse on that node alone (feature 8 + k). Under a flat or a hollow part of the surface the
 * box's vertices carry it (box-patch), and no node is reported */
static void node_box(const mbsShape *a, const mbsPose *Pa, const mbsShape *b, const mbsPose *Pb,
                     int k, double margin, sink *s) {
  if (!patch_owns_corner(b, k)) {
    return;
  }
  const double *p = Pb->corner + 3 * k;
  double q[3], nrm[3], dist;
  int region = box_closest(Pa, a->size, p, q, nrm, &dist);
  /* a face's region: one base-3 digit set */
  if (!(dist < margin) || !(region == 1 || region == 2 || region == 3 || region == 6 ||
                            region == 9 || region == 18)) {
    return;
  }
  int farther = 0;
  for (int j = 1; j <= 3; j += 2) {
    double e[3];
    vsub(e, Pb->corner + 3 * ((k + j) % 4), q);
    double h = vdot(e, nrm);
    if (h < dist - LEN_TOL) {
      return;
    }
    farther |= h > dist + LEN_TOL;
  }
  if (farther) {
    emit(s, q, p, nrm, dist, 8 + k);
  }
}

/* Edge-box: a ridge of patch b (its edge xi = 0, dir 0, or eta = 0, dir 1, convex towards a
 * neighbour: patch_ridge) crossing an edge of box a between the ridge's nodes, as two boxes'
 * crossing edges: closest points interior to both edges, the normal n along their cross
 * product, out of the ridge (within the wedge between the two patches' normals there) and
 * into the box's edge (within its normal cone), the gap the box edge's point's height over
 * the ridge's point along n (feature 32 + 12 dir + the box's edge). A box lying across a
 * ridge between nodes rests on these points: its vertices hang over the slopes and no node
 * is under its face. The ridge's point carries the impulse to the edge's two nodes by their
 * weights (1 - t, t) (the bilinear weights on the edge) */
static void edge_box(const mbsShape *a, const boxFrame *A, const mbsShape *b, const mbsPose *Pb,
                     int dir, double margin, sink *s) {
  if (b->nbr[dir][0] < 0) {
    return;
  }
  const double *nb = Pb->corner + 12 * (1 + dir);
  const double *c0 = Pb->corner, *c1 = Pb->corner + (dir == 0 ? 9 : 3);
  double e[3];
  vsub(e, c1, c0);
  double le = vnorm(e);
  if (!(le > 0.0)) {
    return;
  }
  e[0] /= le;
  e[1] /= le;
  e[2] /= le;
  double tol = LEN_TOL * fmax(le, vnorm(A->h));
  for (int eb = 0; eb < 12; eb++) {
    int k = eb / 4;
    double cx[3];
    vcross(cx, A->a[k], e);
    double lc = vnorm(cx);
    if (lc < PARALLEL_SIN) {
      continue; /* parallel: the box edge's ends are vertex points */
    }
    double mid[3], sg[2], sa, te;
    box_edge(mid, sg, A, eb);
    line_params(mid, A->a[k], c0, e, &sa, &te);
    double t = te / le;
    if (!(fabs(sa) < A->h[k] - tol && t > LEN_TOL && t < 1.0 - LEN_TOL)) {
      continue; /* not interior to both: the ends are vertex and node points */
    }
    /* the two patches' normals at the ridge's point (b's at (0, t) or (t, 0), the
     * neighbour's at (1, t) or (t, 1)) and the direction into b: a convex ridge only */
    double x[3], txi[3], teta[3], n1[3], n2[3], w[3];
    patch_point(Pb->corner, dir == 0 ? 0.0 : t, dir == 0 ? t : 0.0, x, txi, teta);
    vcross(n1, txi, teta);
    vcopy(w, dir == 0 ? txi : teta);
    patch_point(nb, dir == 0 ? 1.0 : t, dir == 0 ? t : 1.0, x, txi, teta);
    vcross(n2, txi, teta);
    double l1 = vnorm(n1), l2 = vnorm(n2);
    if (!(l1 > 0.0) || !(l2 > 0.0)) {
      continue;
    }
    for (int j = 0; j < 3; j++) {
      n1[j] /= l1;
      n2[j] /= l2;
      x[j] = c0[j] + te * e[j];
    }
    if (!(vdot(n2, w) < -PARALLEL_SIN * vnorm(w))) {
      continue; /* flat or a valley: the box's vertices rest on the faces */
    }
    double n[3] = {cx[0] / lc, cx[1] / lc, cx[2] / lc};
    if (vdot(n, n1) + vdot(n, n2) < 0.0) {
      n[0] = -n[0];
      n[1] = -n[1];
      n[2] = -n[2];
    }
    /* n = alpha n1 + beta n2 (all three normal to the edge): in the wedge for alpha, beta >= 0 */
    double c = vdot(n1, n2), d1 = vdot(n, n1), d2 = vdot(n, n2), den = 1.0 - c * c;
    if (!(den > 0.0) || (d1 - c * d2) / den < -CONE_TOL || (d2 - c * d1) / den < -CONE_TOL) {
      continue;
    }
    /* -n, from the box into the ridge, out of the box's edge */
    if (-sg[0] * vdot(n, A->a[(k + 1) % 3]) < -CONE_TOL ||
        -sg[1] * vdot(n, A->a[(k + 2) % 3]) < -CONE_TOL) {
      continue;
    }
    double pe[3], dd[3], m[3] = {-n[0], -n[1], -n[2]};
    vcopy(pe, mid);
    vaxpy(pe, sa, A->a[k]);
    vsub(dd, pe, x);
    double gap = vdot(dd, n);
    if (gap < margin && gap > -2.0 * a->radius) {
      emit(s, pe, x, m, gap, 32 + 12 * dir + eb);
    }
  }
}

/* Box-patch: each vertex of the box against the patch (feature: the vertex), as box-plane
 * with the plane's point and normal those of the patch under the vertex; then the patch's
 * nodes that poke towards the box's faces (node_box) and its ridges that cross the box's
 * edges (edge_box) */
static void box_patch(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                      const mbsPose *Pb, double margin, sink *s) {
  double reach = a->radius + Pb->half + margin;
  double d[3];
  vsub(d, Pa->x, Pb->x);
  if (!(vdot(d, d) < reach * reach)) {
    return;
  }
  boxFrame A;
  box_frame(&A, a, Pa);
  for (int k = 0; k < 8; k++) {
    double v[3];
    box_vertex(v, &A, k);
    point_patch(s, v, 0.0, 2.0 * a->radius, b, Pb, margin, k);
  }
  for (int k = 0; k < 4; k++) {
    node_box(a, Pa, b, Pb, k, margin, s);
  }
  for (int dir = 0; dir < 2; dir++) {
    edge_box(a, &A, b, Pb, dir, margin, s);
  }
}

/* ---- the pairs of shape kinds: one table ----
 * Each supported pair once: its kinds in enum order (a <= b; the other order swaps the shapes
 * and turns the normals), the name users read (an unsupported pair's message lists them in
 * this order), the contact points it can give at most (0: the larger of the two shapes' own
 * counts, shape_points) and its function. A new pair is one line here and its function. */
#define PAIR_LIST(X)                                                                              \
  X(SPHERE, PLANE, "sphere-plane", 0, sphere_plane, A)                                             \
  X(SPHERE, SPHERE, "sphere-sphere", 0, sphere_sphere, AB)                                         \
  X(SPHERE, BOX, "sphere-box", 1, sphere_box, AB) /* the box's point closest to the centre */     \
  X(SPHERE, CAPSULE, "sphere-capsule", 0, sphere_capsule, AB)                                      \
  X(BOX, PLANE, "box-plane", 0, box_plane, A)                                                      \
  /* the vertices of each on the other's faces, and crossing edges: for each of the 9 pairs of   \
   * edge directions at most 8 edge pairs have the normal in both edges' cones */                \
  X(BOX, BOX, "box-box", 16 + 72, box_box, AB)                                                     \
  X(CAPSULE, PLANE, "capsule-plane", 0, capsule_plane, A)                                          \
  X(CAPSULE, CAPSULE, "capsule-capsule", 0, capsule_capsule, AB)                                   \
  /* the segment's ends and its closest approach to each edge */                                  \
  X(BOX, CAPSULE, "capsule-box", 2 + 12, box_capsule, AB)                                          \
  X(POINTS, PLANE, "points-plane", 0, points_plane, AP)                                            \
  X(BOX, POINTS, "points-box", 0, box_points, ABP)                                                 \
  X(SPHERE, POINTS, "points-sphere", 0, sphere_points, ABP)                                        \
  X(CAPSULE, POINTS, "points-capsule", 0, capsule_points, ABP)                                     \
  X(CAPSULE, RING, "capsule-ring", 1, capsule_ring, AB) /* the bore's point the axis nears */  \
  X(SPHERE, PATCH, "sphere-patch", 1, sphere_patch, AB)                                           \
  /* the box's vertices, the patch's nodes, its two ridges against the box's edges */              \
  X(BOX, PATCH, "box-patch", 12 + 24, box_patch, AB)

/* one signature for the pair functions, whichever arguments they use */
typedef void (*pair_fn)(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,
                        const mbsPose *Pb, const double *pts, double margin, sink *s);
#define PAIR_CALL_AB(f) f(a, Pa, b, Pb, margin, s)
#define PAIR_CALL_ABP(f) f(a, Pa, b, Pb, pts, margin, s)
#define PAIR_CALL_A(f) f(a, Pa, Pb, margin, s)
#define PAIR_CALL_AP(f) f(a, Pa, Pb, pts, margin, s)
#define PAIR_ADAPTER(ka, kb, name, max, f, args)                                                   \
  static void pair_##f(const mbsShape *a, const mbsPose *Pa, const mbsShape *b,                   \
                       const mbsPose *Pb, const double *pts, double margin, sink *s) {            \
    (void)b;                                                                                       \
    (void)pts;                                                                                     \
    PAIR_CALL_##args(f);                                                                           \
  }
PAIR_LIST(PAIR_ADAPTER)

typedef struct {
  mbsShapeKind a, b; /* a <= b */
  int max;
  pair_fn fn;
} PairKind;
#define PAIR_ENTRY(ka, kb, name, max, f, args) {MBS_SHAPE_##ka, MBS_SHAPE_##kb, max, pair_##f},
static const PairKind pair_kinds[] = {PAIR_LIST(PAIR_ENTRY)};
#define PAIR_NAME(ka, kb, name, max, f, args) ", " name
static const char pair_names[] = PAIR_LIST(PAIR_NAME); /* ", sphere-plane, ..." */

/* the table's entry of the kinds (either order), NULL if unsupported */
static const PairKind *pair_kind(mbsShapeKind a, mbsShapeKind b) {
  if (a > b) {
    mbsShapeKind t = a;
    a = b;
    b = t;
  }
  for (size_t i = 0; i < sizeof(pair_kinds) / sizeof(pair_kinds[0]); i++) {
    if (pair_kinds[i].a == a && pair_kinds[i].b == b) {
      return &pair_kinds[i];
    }
  }
  return NULL;
}

int mbs_collide_supported(mbsShapeKind a, mbsShapeKind b) {
  return pair_kind(a, b) != NULL;
}

const char *mbs_collide_supported_list(void) {
  return pair_names + 2;
}

/* points one shape can contribute to a pair */
static int shape_points(const mbsShape *s) {
  switch (s->kind) {
    case MBS_SHAPE_BOX:
      return 8; /* vertices */
    case MBS_SHAPE_CAPSULE:
      return 2; /* the ends of its segment */
    case MBS_SHAPE_POINTS:
      return s->npts;
    default:
      return 1;
  }
}

int mbs_collide_max(const mbsShape *a, const mbsShape *b) {
  const PairKind *pk = pair_kind(a->kind, b->kind);
  if (!pk) {
    return 0;
  }
  if (pk->max > 0) {
    return pk->max;
  }
  int na = shape_points(a), nb = shape_points(b);
  return na > nb ? na : nb;
}

int mbs_collide(const mbsShape *a, const mbsPose *pa, const mbsShape *b, const mbsPose *pb,
                const double *pts, double margin, mbsContactPoint *out, int max) {
  const PairKind *pk = pair_kind(a->kind, b->kind);
  if (!pk) {
    return -1;
  }
  sink s = {out, max > 0 ? max : 0, 0};
  /* a beam segment is a capsule of the half length its pose has */
  mbsShape sega, segb;
  if (a->segment) {
    sega = *a;
    sega.size[1] = pa->half;
    a = &sega;
  }
  if (b->segment) {
    segb = *b;
    segb.size[1] = pb->half;
    b = &segb;
  }
  if (a->kind <= b->kind) {
    pk->fn(a, pa, b, pb, pts, margin, &s);
    return s.n;
  }
  /* the other order: b's points are the pa, the normals point the other way */
  pk->fn(b, pb, a, pa, pts, margin, &s);
  for (int i = 0; i < s.n; i++) {
    double t[3];
    vcopy(t, out[i].pa);
    vcopy(out[i].pa, out[i].pb);
    vcopy(out[i].pb, t);
    for (int r = 0; r < 3; r++) {
      out[i].n[r] = -out[i].n[r];
    }
  }
  return s.n;
}
