/* test_contact_geom.c: the contact geometry (src/contact/): shape poses on a compiled model,
 * the narrow phase of every supported pair against analytic geometry (gaps, normals, closest
 * points, the number of points), both argument orders, margins, unsupported pairs, and the
 * broad phase against the brute-force test of every pair */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/contact.h"
#include "mbsim/deck.h"
#include "mbsim/model.h"
#include "rotation.h"

#define CAP 512 /* room for the points of one pair in these tests */
#define PI 3.14159265358979323846

/* ---- small geometry of the tests' own (and rot, tests/rotation.h) ---- */

static void matmul(double C[9], const double A[9], const double B[9]) {
  double T[9];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    }
  }
  memcpy(C, T, sizeof(T));
}

static const double EYE[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

static mbsPose pose(double x, double y, double z, const double R[9]) {
  mbsPose p = {{x, y, z}, {0}, 0.0, {0}};
  memcpy(p.R, R ? R : EYE, sizeof(p.R));
  return p;
}

/* world point of shape coordinates (l0, l1, l2) */
static void world(double p[3], const mbsPose *P, double l0, double l1, double l2) {
  for (int r = 0; r < 3; r++) {
    p[r] = P->x[r] + P->R[3 * r] * l0 + P->R[3 * r + 1] * l1 + P->R[3 * r + 2] * l2;
  }
}

/* n numbers uniform in [0, 1) from a linear congruential sequence (seeded, so every run of a
 * test draws the same configurations) */
static void uniforms(unsigned *seed, double *u, int n) {
  for (int i = 0; i < n; i++) {
    *seed = *seed * 1103515245u + 12345u;
    u[i] = (double)(*seed >> 8) / 16777216.0;
  }
}

/* world direction of shape components */
static void wdir(double p[3], const mbsPose *P, double l0, double l1, double l2) {
  for (int r = 0; r < 3; r++) {
    p[r] = P->R[3 * r] * l0 + P->R[3 * r + 1] * l1 + P->R[3 * r + 2] * l2;
  }
}

static mbsShape shape(mbsShapeKind kind, double s0, double s1, double s2) {
  mbsShape s;
  memset(&s, 0, sizeof(s));
  s.kind = kind;
  s.body = -1;
  s.attach = MBS_ATTACH_GROUND_ID;
  s.size[0] = s0;
  s.size[1] = s1;
  s.size[2] = s2;
  memcpy(s.C, EYE, sizeof(s.C));
  switch (kind) {
    case MBS_SHAPE_SPHERE:
      s.radius = s0;
      break;
    case MBS_SHAPE_BOX:
      s.radius = sqrt(s0 * s0 + s1 * s1 + s2 * s2);
      break;
    case MBS_SHAPE_CAPSULE:
      s.radius = s0 + s1;
      break;
    case MBS_SHAPE_PLANE:
      s.radius = INFINITY;
      break;
    default:
      break;
  }
  return s;
}

static double dist3(const double a[3], const double b[3]) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
              (a[2] - b[2]) * (a[2] - b[2]));
}

#define ASSERT_V3(v, x, y, z, tol)                                                                 \
  do {                                                                                             \
    double want_[3] = {(x), (y), (z)};                                                             \
    ck_assert_msg(dist3((v), want_) <= (tol),                                                      \
                  "%s = (%.15g, %.15g, %.15g), want (%.15g, %.15g, "                               \
                  "%.15g)",                                                                        \
                  #v, (v)[0], (v)[1], (v)[2], want_[0], want_[1], want_[2]);                       \
  } while (0)

#define ASSERT_V3V(v, w, tol) ASSERT_V3(v, (w)[0], (w)[1], (w)[2], tol)

/* every point: unit normal, gap = (pb - pa) . n, gap below the margin */
static void check_points(const mbsContactPoint *c, int n, double margin) {
  for (int i = 0; i < n; i++) {
    double nn = sqrt(c[i].n[0] * c[i].n[0] + c[i].n[1] * c[i].n[1] + c[i].n[2] * c[i].n[2]);
    ck_assert_double_eq_tol(nn, 1.0, 1e-12);
    double g = (c[i].pb[0] - c[i].pa[0]) * c[i].n[0] + (c[i].pb[1] - c[i].pa[1]) * c[i].n[1] +
               (c[i].pb[2] - c[i].pa[2]) * c[i].n[2];
    ck_assert_msg(fabs(g - c[i].gap) <= 1e-12 * (1 + fabs(g)),
                  "point %d: gap %.17g, (pb-pa).n %.17g", i, c[i].gap, g);
    ck_assert_msg(c[i].gap < margin, "point %d: gap %g not below the margin %g", i, c[i].gap,
                  margin);
  }
}

/* mbs_collide in both orders: the same points with pa, pb swapped and n flipped (in the same
 * order with the same features for kinds that differ; as sets for a pair of one kind), within
 * mbs_collide_max, features distinct. Returns the count; the points of (a, b) in out. */
static int collide(const mbsShape *a, const mbsPose *Pa, const mbsShape *b, const mbsPose *Pb,
                   const double *pts, double margin, mbsContactPoint *out) {
  mbsContactPoint rev[CAP];
  int n = mbs_collide(a, Pa, b, Pb, pts, margin, out, CAP);
  int nr = mbs_collide(b, Pb, a, Pa, pts, margin, rev, CAP);
  ck_assert_int_ge(n, 0);
  ck_assert_int_eq(n, nr);
  ck_assert_int_le(n, mbs_collide_max(a, b));
  ck_assert_int_eq(mbs_collide_max(a, b), mbs_collide_max(b, a));
  check_points(out, n, margin);
  check_points(rev, nr, margin);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++) {
      ck_assert_int_ne(out[i].feature, out[j].feature);
    }
    int j = i;
    if (a->kind == b->kind) {
      for (j = 0; j < nr; j++) {
        if (dist3(out[i].pa, rev[j].pb) < 1e-12 && dist3(out[i].pb, rev[j].pa) < 1e-12) {
          break;
        }
      }
      ck_assert_msg(j < nr, "point %d of (a, b) not found in (b, a)", i);
    } else {
      ck_assert_int_eq(out[i].feature, rev[i].feature);
    }
    ASSERT_V3V(out[i].pa, rev[j].pb, 1e-12);
    ASSERT_V3V(out[i].pb, rev[j].pa, 1e-12);
    ASSERT_V3(out[i].n, -rev[j].n[0], -rev[j].n[1], -rev[j].n[2], 1e-12);
    ck_assert_double_eq_tol(out[i].gap, rev[j].gap, 1e-12);
  }
  return n;
}

/* the index of the point whose pa is p (within tol), -1 if none */
static int find_pa(const mbsContactPoint *c, int n, const double p[3], double tol) {
  for (int i = 0; i < n; i++) {
    if (dist3(c[i].pa, p) <= tol) {
      return i;
    }
  }
  return -1;
}

/* ---- spheres ---- */

START_TEST(test_sphere_plane) {
  mbsShape s = shape(MBS_SHAPE_SPHERE, 0.5, 0, 0), pl = shape(MBS_SHAPE_PLANE, 0, 0, 0);
  mbsPose Ps = pose(0.3, -0.2, 0.7, NULL), Pp = pose(0, 0, 0, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&s, &Ps, &pl, &Pp, NULL, 0.3, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.2, 1e-15);
  ASSERT_V3(c[0].n, 0, 0, -1, 1e-15);
  ASSERT_V3(c[0].pa, 0.3, -0.2, 0.2, 1e-15);
  ASSERT_V3(c[0].pb, 0.3, -0.2, 0.0, 1e-15);
  /* margin: a gap of 0.2 is no point below a margin of 0.1 or 0.199 */
  ck_assert_int_eq(collide(&s, &Ps, &pl, &Pp, NULL, 0.1, c), 0);
  ck_assert_int_eq(collide(&s, &Ps, &pl, &Pp, NULL, 0.199, c), 0);
  /* penetration */
  Ps.x[2] = 0.4;
  ck_assert_int_eq(collide(&s, &Ps, &pl, &Pp, NULL, 0.0, c), 1);
  ck_assert_double_eq_tol(c[0].gap, -0.1, 1e-15);
}
END_TEST

START_TEST(test_sphere_tilted_plane) {
  /* a plane through (1, 2, 3) whose axis 3 (the normal) is (2, -1, 2)/3 */
  double R[9];
  double nz[3] = {2.0 / 3, -1.0 / 3, 2.0 / 3};
  rot(R, -nz[1], nz[0], 0, acos(nz[2])); /* e3 -> nz */
  mbsPose Pp = pose(1, 2, 3, R);
  ck_assert_double_eq_tol(R[2], nz[0], 1e-15);
  ck_assert_double_eq_tol(R[5], nz[1], 1e-15);
  ck_assert_double_eq_tol(R[8], nz[2], 1e-15);
  mbsShape s = shape(MBS_SHAPE_SPHERE, 0.25, 0, 0), pl = shape(MBS_SHAPE_PLANE, 0, 0, 0);
  mbsPose Ps = pose(1.5, 1.0, 3.5, NULL);
  /* signed distance of the centre: ((0.5, -1, 0.5) . (2, -1, 2)) / 3 = 1 */
  double d = 1.0, r = 0.25;
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&s, &Ps, &pl, &Pp, NULL, 1.0, c), 1);
  ck_assert_double_eq_tol(c[0].gap, d - r, 1e-14);
  ASSERT_V3(c[0].n, -nz[0], -nz[1], -nz[2], 1e-15);
  ASSERT_V3(c[0].pb, 1.5 - d * nz[0], 1.0 - d * nz[1], 3.5 - d * nz[2], 1e-14);
  ASSERT_V3(c[0].pa, 1.5 - r * nz[0], 1.0 - r * nz[1], 3.5 - r * nz[2], 1e-14);
  ck_assert_int_eq(collide(&s, &Ps, &pl, &Pp, NULL, 0.75, c), 0);
}
END_TEST

START_TEST(test_sphere_sphere) {
  mbsShape a = shape(MBS_SHAPE_SPHERE, 1.0, 0, 0), b = shape(MBS_SHAPE_SPHERE, 2.0, 0, 0);
  mbsPose Pa = pose(1, 1, 1, NULL), Pb = pose(4, 5, 1, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 2.5, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 2.0, 1e-14);
  ASSERT_V3(c[0].n, 0.6, 0.8, 0, 1e-15);
  ASSERT_V3(c[0].pa, 1.6, 1.8, 1, 1e-14);
  ASSERT_V3(c[0].pb, 4 - 1.2, 5 - 1.6, 1, 1e-14);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1.99, c), 0);
  Pb.x[0] = 3.4;
  Pb.x[1] = 2.8; /* centres (2.4, 1.8) apart: distance 3, touching */
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1e-9, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.0, 1e-14);
  Pb.x[0] = 2.6;
  Pb.x[1] = 2.2; /* (1.6, 1.2): distance 2, penetration 1 */
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 0, c), 1);
  ck_assert_double_eq_tol(c[0].gap, -1.0, 1e-14);
  ASSERT_V3(c[0].n, 0.8, 0.6, 0, 1e-15);
}
END_TEST

/* a sphere against a rotated box (half edges 1, 2, 3) in each region */
START_TEST(test_sphere_box_regions) {
  double R[9];
  rot(R, 1, -2, 0.5, 0.9);
  mbsShape s = shape(MBS_SHAPE_SPHERE, 0.2, 0, 0), b = shape(MBS_SHAPE_BOX, 1, 2, 3);
  mbsPose Pb = pose(-0.5, 0.25, 2.0, R), Ps;
  mbsContactPoint c[CAP];
  double p[3], nw[3];
  struct {
    double l[3];   /* sphere centre, box coordinates */
    double q[3];   /* closest box point, box coordinates */
    double dist;   /* signed distance centre - box */
    double dir[3]; /* box outward normal there, box coordinates */
  } cases[] = {
      {{1.5, 0.3, -0.5}, {1, 0.3, -0.5}, 0.5, {1, 0, 0}},                         /* face */
      {{1.3, 2.4, 0.1}, {1, 2, 0.1}, 0.5, {0.6, 0.8, 0}},                         /* edge */
      {{-1.2, -2.3, 3.6}, {-1, -2, 3}, 0.7, {-0.2 / 0.7, -0.3 / 0.7, 0.6 / 0.7}}, /* vertex */
      {{0.9, 0.5, 0.0}, {1, 0.5, 0.0}, -0.1, {1, 0, 0}},    /* inside, near +x */
      {{0.2, -1.7, 1.0}, {0.2, -2, 1.0}, -0.3, {0, -1, 0}}, /* inside, near -y */
  };
  int features[5];
  for (int k = 0; k < 5; k++) {
    world(Ps.x, &Pb, cases[k].l[0], cases[k].l[1], cases[k].l[2]);
    memcpy(Ps.R, EYE, sizeof(Ps.R));
    ck_assert_int_eq(collide(&s, &Ps, &b, &Pb, NULL, 0.6, c), 1);
    ck_assert_double_eq_tol(c[0].gap, cases[k].dist - 0.2, 1e-13);
    world(p, &Pb, cases[k].q[0], cases[k].q[1], cases[k].q[2]);
    ASSERT_V3V(c[0].pb, p, 1e-13);
    wdir(nw, &Pb, cases[k].dir[0], cases[k].dir[1], cases[k].dir[2]);
    ASSERT_V3(c[0].n, -nw[0], -nw[1], -nw[2], 1e-13); /* from the sphere to the box */
    ASSERT_V3(c[0].pa, Ps.x[0] - 0.2 * nw[0], Ps.x[1] - 0.2 * nw[1], Ps.x[2] - 0.2 * nw[2], 1e-13);
    features[k] = c[0].feature;
  }
  /* face, edge and vertex regions are different features; inside near +x is the +x face */
  ck_assert_int_ne(features[0], features[1]);
  ck_assert_int_ne(features[1], features[2]);
  ck_assert_int_ne(features[0], features[2]);
  ck_assert_int_eq(features[0], features[3]);
  ck_assert_int_ne(features[3], features[4]);
  /* margin: the vertex case's gap 0.5 */
  world(Ps.x, &Pb, -1.2, -2.3, 3.6);
  ck_assert_int_eq(collide(&s, &Ps, &b, &Pb, NULL, 0.5, c), 0);
}
END_TEST

/* ---- boxes on planes ---- */

START_TEST(test_box_plane_resting) {
  mbsShape b = shape(MBS_SHAPE_BOX, 0.5, 0.3, 0.2), pl = shape(MBS_SHAPE_PLANE, 0, 0, 0);
  mbsPose Pb = pose(1, 2, 0.2, NULL), Pp = pose(0, 0, 0, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&b, &Pb, &pl, &Pp, NULL, 1e-3, c), 4);
  for (int i = 0; i < 4; i++) {
    ck_assert_double_eq_tol(c[i].gap, 0.0, 1e-15);
    ASSERT_V3(c[i].n, 0, 0, -1, 0);
    ck_assert_double_eq_tol(c[i].pa[2], 0.0, 1e-15);
    ck_assert_double_eq_tol(fabs(c[i].pa[0] - 1), 0.5, 1e-15);
    ck_assert_double_eq_tol(fabs(c[i].pa[1] - 2), 0.3, 1e-15);
    ASSERT_V3(c[i].pb, c[i].pa[0], c[i].pa[1], 0, 1e-15);
  }
  /* a plane below a box sunk by 1e-4: the same 4 vertices at gap -1e-4 */
  Pb.x[2] = 0.2 - 1e-4;
  ck_assert_int_eq(collide(&b, &Pb, &pl, &Pp, NULL, 1e-3, c), 4);
  ck_assert_double_eq_tol(c[3].gap, -1e-4, 1e-15);
}
END_TEST

START_TEST(test_box_plane_tilted) {
  /* a generic rotation: one lowest vertex, at height z0 - sum_k |R_3k| h_k */
  double R[9], h[3] = {0.5, 0.3, 0.2};
  rot(R, 0.3, 1.0, -0.4, 0.35);
  mbsShape b = shape(MBS_SHAPE_BOX, h[0], h[1], h[2]), pl = shape(MBS_SHAPE_PLANE, 0, 0, 0);
  double reach = fabs(R[6]) * h[0] + fabs(R[7]) * h[1] + fabs(R[8]) * h[2];
  mbsPose Pb = pose(-1, 0.5, reach + 0.01, R), Pp = pose(0, 0, 0, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&b, &Pb, &pl, &Pp, NULL, 0.02, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.01, 1e-14);
  double v[3];
  world(v, &Pb, R[6] > 0 ? -h[0] : h[0], R[7] > 0 ? -h[1] : h[1], R[8] > 0 ? -h[2] : h[2]);
  ASSERT_V3V(c[0].pa, v, 1e-14);
  /* margin filtering: count the vertices below each margin directly */
  for (double margin = -0.005; margin < 0.6; margin += 0.05) {
    int want = 0;
    for (int k = 0; k < 8; k++) {
      world(v, &Pb, (k & 1) ? h[0] : -h[0], (k & 2) ? h[1] : -h[1], (k & 4) ? h[2] : -h[2]);
      want += v[2] < margin;
    }
    ck_assert_int_eq(collide(&b, &Pb, &pl, &Pp, NULL, margin, c), want);
    for (int i = 0; i < want; i++) {
      world(v, &Pb, (c[i].feature & 1) ? h[0] : -h[0], (c[i].feature & 2) ? h[1] : -h[1],
            (c[i].feature & 4) ? h[2] : -h[2]);
      ASSERT_V3V(c[i].pa, v, 1e-14); /* feature = the vertex */
      ck_assert_double_eq_tol(c[i].gap, v[2], 1e-14);
    }
  }
}
END_TEST

/* ---- box on box ---- */

START_TEST(test_box_box_face_on_face) {
  mbsShape a = shape(MBS_SHAPE_BOX, 1, 1, 1), b = shape(MBS_SHAPE_BOX, 1, 1, 1);
  mbsPose Pa = pose(0, 0, 0, NULL), Pb = pose(0, 0, 2, NULL);
  mbsContactPoint c[CAP];
  /* resting exactly: the 4 corners once each, not once per box */
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1e-3, c), 4);
  for (int i = 0; i < 4; i++) {
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-15);
    ck_assert_double_eq_tol(c[i].gap, 0, 1e-15);
    ck_assert_double_eq_tol(fabs(c[i].pa[0]), 1, 1e-15);
    ck_assert_double_eq_tol(fabs(c[i].pa[1]), 1, 1e-15);
    ck_assert_double_eq_tol(c[i].pa[2], 1, 1e-15);
  }
  /* sunk by 1e-4 and shifted by (1e-3, 2e-3): the corners of the overlap rectangle */
  Pb.x[0] = 1e-3;
  Pb.x[1] = 2e-3;
  Pb.x[2] = 2 - 1e-4;
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1e-3, c), 4);
  for (int sx = -1; sx <= 1; sx += 2) {
    for (int sy = -1; sy <= 1; sy += 2) {
      double p[3] = {sx > 0 ? 1 : -1 + 1e-3, sy > 0 ? 1 : -1 + 2e-3, 1};
      int i = find_pa(c, 4, p, 1e-12);
      ck_assert_int_ge(i, 0);
      ASSERT_V3(c[i].n, 0, 0, 1, 1e-15);
      ck_assert_double_eq_tol(c[i].gap, -1e-4, 1e-14);
      ASSERT_V3(c[i].pb, p[0], p[1], 1 - 1e-4, 1e-14);
    }
  }
  /* slid off a's +y edge but for 0.01, and along x by 0.3: the 4 corners of the overlap, all
   * with the normal z (not the overlap of 0.01 along y at b's vertical edges) */
  Pb = pose(0.3, 1.99, 2 - 1e-4, NULL);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1e-3, c), 4);
  for (int k = 0; k < 4; k++) {
    double p[3] = {k & 1 ? 1 : -0.7, k & 2 ? 1 : 0.99, 1};
    int i = find_pa(c, 4, p, 1e-12);
    ck_assert_int_ge(i, 0);
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-15);
    ck_assert_double_eq_tol(c[i].gap, -1e-4, 1e-14);
  }
  /* a smaller box on top: its 4 vertices; a larger one: a's 4 vertices */
  mbsShape sm = shape(MBS_SHAPE_BOX, 0.3, 0.4, 0.5), lg = shape(MBS_SHAPE_BOX, 2, 3, 0.5);
  Pb = pose(0.2, -0.1, 1.5, NULL);
  ck_assert_int_eq(collide(&a, &Pa, &sm, &Pb, NULL, 1e-3, c), 4);
  for (int i = 0; i < 4; i++) {
    ck_assert_double_eq_tol(fabs(c[i].pb[0] - 0.2), 0.3, 1e-15);
    ck_assert_double_eq_tol(fabs(c[i].pb[1] + 0.1), 0.4, 1e-15);
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-15);
  }
  ck_assert_int_eq(collide(&a, &Pa, &lg, &Pb, NULL, 1e-3, c), 4);
  for (int i = 0; i < 4; i++) {
    ck_assert_double_eq_tol(fabs(c[i].pa[0]), 1, 1e-15);
    ck_assert_double_eq_tol(fabs(c[i].pa[1]), 1, 1e-15);
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-15);
  }
  /* the smaller box tilted by 0.005 rad about x: its low vertices within each margin, at their
   * heights above a's top face */
  double Rt[9], th = 0.005;
  rot(Rt, 1, 0, 0, th);
  Pb = pose(0.2, -0.1, 1 + 0.4 * sin(th) + 0.5 * cos(th) - 1e-5, Rt);
  ck_assert_int_eq(collide(&a, &Pa, &sm, &Pb, NULL, 1e-3, c), 2);
  ck_assert_int_eq(collide(&a, &Pa, &sm, &Pb, NULL, 5e-3, c), 4);
  for (int i = 0; i < 4; i++) {
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-15);
    ck_assert_double_eq_tol(c[i].gap, c[i].pb[2] - 1, 1e-15);
    ck_assert_double_eq_tol(c[i].gap, c[i].pb[1] < -0.1 ? -1e-5 : -1e-5 + 0.8 * sin(th), 1e-14);
  }
  /* lifted beyond the margin: none; separated sideways: none */
  Pb = pose(0, 0, 2.002, NULL);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1e-3, c), 0);
  Pb = pose(2.5, 0, 0, NULL);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1e-3, c), 0);
}
END_TEST

/* a cube turned 45 degrees about the vertical on another: the octagon where the squares
 * overlap, each corner an edge crossing */
START_TEST(test_box_box_rotated_45) {
  double R[9];
  rot(R, 0, 0, 1, PI / 4);
  mbsShape a = shape(MBS_SHAPE_BOX, 1, 1, 1), b = shape(MBS_SHAPE_BOX, 1, 1, 1);
  double t = sqrt(2.0) - 1;
  for (int lift = 0; lift < 2; lift++) {
    double g = lift ? 2e-4 : 0.0;
    mbsPose Pa = pose(0, 0, 0, NULL), Pb = pose(0, 0, 2 + g, R);
    mbsContactPoint c[CAP];
    ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 1e-3, c), 8);
    double want[8][2] = {{1, t}, {1, -t}, {-1, t}, {-1, -t}, {t, 1}, {-t, 1}, {t, -1}, {-t, -1}};
    for (int k = 0; k < 8; k++) {
      double p[3] = {want[k][0], want[k][1], 1};
      int i = find_pa(c, 8, p, 1e-12);
      ck_assert_msg(i >= 0, "octagon corner (%g, %g) missing", p[0], p[1]);
      ASSERT_V3(c[i].n, 0, 0, 1, 1e-12);
      ck_assert_double_eq_tol(c[i].gap, g, 1e-14);
      ASSERT_V3(c[i].pb, p[0], p[1], 1 + g, 1e-12);
      ck_assert_int_ge(c[i].feature, 16); /* edge pairs */
    }
  }
}
END_TEST

/* Sutherland-Hodgman: the polygon P (n vertices, xy) clipped by the convex counterclockwise
 * polygon Q (m vertices) into out; returns the count */
static int clip_polygon(const double (*P)[2], int n, const double (*Q)[2], int m,
                        double (*out)[2]) {
  double cur[16][2], nxt[16][2];
  memcpy(cur, P, sizeof(double) * 2 * (size_t)n);
  for (int e = 0; e < m && n > 0; e++) {
    const double *p = Q[e], *q = Q[(e + 1) % m];
    int k = 0;
    for (int i = 0; i < n; i++) {
      const double *u = cur[i], *v = cur[(i + 1) % n];
      double su = (q[0] - p[0]) * (u[1] - p[1]) - (q[1] - p[1]) * (u[0] - p[0]);
      double sv = (q[0] - p[0]) * (v[1] - p[1]) - (q[1] - p[1]) * (v[0] - p[0]);
      if (su >= 0) {
        nxt[k][0] = u[0];
        nxt[k++][1] = u[1];
      }
      if ((su >= 0) != (sv >= 0)) {
        double t = su / (su - sv);
        nxt[k][0] = u[0] + t * (v[0] - u[0]);
        nxt[k++][1] = u[1] + t * (v[1] - u[1]);
      }
    }
    n = k;
    memcpy(cur, nxt, sizeof(double) * 2 * (size_t)n);
  }
  memcpy(out, cur, sizeof(double) * 2 * (size_t)n);
  return n;
}

/* a box turned about the vertical, shifted and sunk a little into another's top face: the
 * points are the corners of the overlap of the two rectangles (clipped here as polygons) */
START_TEST(test_box_box_overlap_polygon) {
  unsigned seed = 31u;
  int trials = 0;
  for (int trial = 0; trial < 400; trial++) {
    double u[9];
    uniforms(&seed, u, 9);
    double ha[3] = {0.3 + u[0], 0.3 + u[1], 0.2 + u[2]}, hb[3] = {0.3 + u[3], 0.3 + u[4], 0.5};
    double yaw = 2 * PI * u[5], sink = 1e-4 * u[6];
    double bx = 1.6 * (ha[0] + hb[0]) * (u[7] - 0.5), by = 1.6 * (ha[1] + hb[1]) * (u[8] - 0.5);
    double R[9];
    rot(R, 0, 0, 1, yaw);
    mbsShape a = shape(MBS_SHAPE_BOX, ha[0], ha[1], ha[2]);
    mbsShape b = shape(MBS_SHAPE_BOX, hb[0], hb[1], hb[2]);
    mbsPose Pa = pose(0, 0, 0, NULL), Pb = pose(bx, by, ha[2] + hb[2] - sink, R);
    double sq[4][2] = {{-ha[0], -ha[1]}, {ha[0], -ha[1]}, {ha[0], ha[1]}, {-ha[0], ha[1]}};
    double rb[4][2], poly[16][2];
    for (int k = 0; k < 4; k++) {
      double lx = (k == 1 || k == 2) ? hb[0] : -hb[0], ly = k >= 2 ? hb[1] : -hb[1];
      rb[k][0] = bx + R[0] * lx + R[1] * ly;
      rb[k][1] = by + R[3] * lx + R[4] * ly;
    }
    int np = clip_polygon((const double(*)[2])sq, 4, (const double(*)[2])rb, 4, poly);
    /* generic overlaps only: no corner within 1e-4 of another (nor of a corner of either box) */
    int generic = np >= 3;
    for (int i = 0; i < np && generic; i++) {
      for (int j = 0; j < i; j++) {
        generic &= hypot(poly[i][0] - poly[j][0], poly[i][1] - poly[j][1]) > 1e-4;
      }
      for (int k = 0; k < 4; k++) {
        double da = hypot(poly[i][0] - sq[k][0], poly[i][1] - sq[k][1]);
        double db = hypot(poly[i][0] - rb[k][0], poly[i][1] - rb[k][1]);
        generic &= (da < 1e-12 || da > 1e-4) && (db < 1e-12 || db > 1e-4);
      }
    }
    if (!generic) {
      continue;
    }
    trials++;
    mbsContactPoint c[CAP];
    int n = collide(&a, &Pa, &b, &Pb, NULL, 1e-3, c);
    ck_assert_msg(n == np, "trial %d: %d points, the overlap has %d corners", trial, n, np);
    for (int i = 0; i < np; i++) {
      double p[3] = {poly[i][0], poly[i][1], ha[2]};
      int k = find_pa(c, n, p, 1e-12);
      ck_assert_msg(k >= 0, "trial %d: corner (%g, %g) missing", trial, p[0], p[1]);
      ASSERT_V3(c[k].n, 0, 0, 1, 1e-12);
      ck_assert_double_eq_tol(c[k].gap, -sink, 1e-14);
    }
  }
  ck_assert_int_gt(trials, 200);
}
END_TEST

/* a box on its edge (45 degrees about x) under a box on its edge (45 degrees about y): the
 * edges cross at one point */
START_TEST(test_box_box_edge_edge) {
  double Ra[9], Rb[9], ha[3] = {1.0, 0.6, 0.3}, hb[3] = {0.4, 1.5, 0.7};
  rot(Ra, 1, 0, 0, PI / 4);
  rot(Rb, 0, 1, 0, PI / 4);
  mbsShape a = shape(MBS_SHAPE_BOX, ha[0], ha[1], ha[2]);
  mbsShape b = shape(MBS_SHAPE_BOX, hb[0], hb[1], hb[2]);
  double top = (ha[1] + ha[2]) / sqrt(2.0), bottom = (hb[0] + hb[2]) / sqrt(2.0);
  double gaps[3] = {0.01, 0.0, -0.004};
  for (int k = 0; k < 3; k++) {
    double g = gaps[k];
    mbsPose Pa = pose(0, 0, 0, Ra), Pb = pose(0.1, -0.2, top + bottom + g, Rb);
    mbsContactPoint c[CAP];
    ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 0.02, c), 1);
    ck_assert_double_eq_tol(c[0].gap, g, 1e-14);
    ASSERT_V3(c[0].n, 0, 0, 1, 1e-14);
    /* a's top edge runs along x at y = (ha2 - ha3)/sqrt 2, b's bottom edge along y at
     * x = 0.1 + (hb1 - hb3)/sqrt 2 */
    double x = 0.1 + (hb[0] - hb[2]) / sqrt(2.0), y = (ha[1] - ha[2]) / sqrt(2.0);
    ASSERT_V3(c[0].pa, x, y, top, 1e-14);
    ASSERT_V3(c[0].pb, x, y, top + g, 1e-14);
    ck_assert_int_ge(c[0].feature, 16);
    ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, g - 1e-9, c), 0);
  }
}
END_TEST

/* a cube with a vertex pointing down, just beyond and above another's top edge: one point,
 * from the vertex to the edge */
START_TEST(test_box_box_vertex_edge) {
  double R[9], h = 0.5, e = 0.003, g = 0.004;
  rot(R, -1, 1, 0, acos(-1 / sqrt(3.0))); /* (1, 1, 1)/sqrt 3 -> (0, 0, -1) */
  ck_assert_double_eq_tol(R[6] + R[7] + R[8], -sqrt(3.0), 1e-15);
  mbsShape a = shape(MBS_SHAPE_BOX, h, h, h), b = shape(MBS_SHAPE_BOX, 1, 1, 1);
  double V[3] = {1 + e, 0.2, 1 + g};
  mbsPose Pa = pose(V[0], V[1], V[2] + h * sqrt(3.0), R), Pb = pose(0, 0, 0, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 0.01, c), 1);
  double r = hypot(e, g);
  ck_assert_double_eq_tol(c[0].gap, r, 1e-14);
  ck_assert_int_eq(c[0].feature, 7);
  ASSERT_V3V(c[0].pa, V, 1e-14);
  ASSERT_V3(c[0].pb, 1, 0.2, 1, 1e-14);
  ASSERT_V3(c[0].n, -e / r, 0, -g / r, 1e-12);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 0.0049, c), 0);
}
END_TEST

/* two dice of a pile side by side (poses from 200 dice at t = 0.706 s), one 1 mm higher,
 * nearly parallel edges on top of a and at the bottom of b: the boxes are apart (the largest
 * separation of the vertices' extents over the 15 axes, computed here, is 0 to rounding), so no point
 * may claim a penetration; an edge pair with gap -1e-3 (the margin) was reported */
START_TEST(test_box_box_side_by_side_edges) {
  const double h = 0.05, margin = 0.0010716736716320826;
  mbsPose Pa = {{0.33650561261061129, 0.33809165567667981, 0.25033971344983613},
                {-0.0030896764522557172, -0.50376658943628372, -0.86383428808259,
                 -0.010678643772915056, 0.8638057773414155, -0.50371176837429954,
                 0.99993820832419023, 0.0076682722517935004, -0.0080484243228606429},
                0.0,
                {0}};
  mbsPose Pb = {{0.29416103350856931, 0.44999994649975489, 0.35000246472766344},
                {0.99999999907427006, 4.3028594275760216e-05, -2.428075239891855e-10,
                 1.9677515968441497e-10, 1.0698086995859897e-06, 0.99999999999942779,
                 4.3028594275995359e-05, -0.99999999907369774, 1.0698086901286767e-06},
                0.0,
                {0}};
  mbsShape a = shape(MBS_SHAPE_BOX, h, h, h), b = shape(MBS_SHAPE_BOX, h, h, h);
  double va[8][3], vb[8][3], ax[15][3];
  for (int k = 0; k < 8; k++) {
    double l0 = (k & 1) ? h : -h, l1 = (k & 2) ? h : -h, l2 = (k & 4) ? h : -h;
    world(va[k], &Pa, l0, l1, l2);
    world(vb[k], &Pb, l0, l1, l2);
  }
  for (int i = 0; i < 3; i++) {
    wdir(ax[i], &Pa, i == 0, i == 1, i == 2);
    wdir(ax[3 + i], &Pb, i == 0, i == 1, i == 2);
  }
  for (int i = 0; i < 9; i++) {
    const double *u = ax[i / 3], *v = ax[3 + i % 3];
    double *c = ax[6 + i];
    c[0] = u[1] * v[2] - u[2] * v[1];
    c[1] = u[2] * v[0] - u[0] * v[2];
    c[2] = u[0] * v[1] - u[1] * v[0];
  }
  double sep = -INFINITY;
  for (int i = 0; i < 15; i++) {
    double nn = sqrt(ax[i][0] * ax[i][0] + ax[i][1] * ax[i][1] + ax[i][2] * ax[i][2]);
    if (nn < 1e-3) {
      continue;
    }
    double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
    for (int k = 0; k < 8; k++) {
      double pa = (va[k][0] * ax[i][0] + va[k][1] * ax[i][1] + va[k][2] * ax[i][2]) / nn;
      double pb = (vb[k][0] * ax[i][0] + vb[k][1] * ax[i][1] + vb[k][2] * ax[i][2]) / nn;
      amin = fmin(amin, pa);
      amax = fmax(amax, pa);
      bmin = fmin(bmin, pb);
      bmax = fmax(bmax, pb);
    }
    sep = fmax(sep, fmax(bmin - amax, amin - bmax));
  }
  ck_assert_double_ge(sep, -1e-12); /* touching, to rounding: they have contact points */
  ck_assert_double_le(sep, 1e-9);
  mbsContactPoint c[CAP];
  int n = collide(&a, &Pa, &b, &Pb, NULL, margin, c);
  ck_assert_int_ge(n, 1);
  for (int i = 0; i < n; i++) {
    ck_assert_msg(c[i].gap >= -1e-9, "point %d (feature %d): gap %g between boxes %g apart", i,
                  c[i].feature, c[i].gap, sep);
  }
}
END_TEST

/* random pairs of boxes, overlapping or near: at most mbs_collide_max points, the same in
 * both orders, every point's gap at least the boxes' separation along its normal (the
 * extents of each box along n), and a vertex point's pa a vertex */
START_TEST(test_box_box_random) {
  unsigned seed = 2024u;
  int most = 0, total = 0;
  for (int trial = 0; trial < 3000; trial++) {
    double u[8];
    uniforms(&seed, u, 8);
    double Ra[9], Rb[9];
    rot(Ra, u[0] - 0.5, u[1] - 0.5, u[2] - 0.5, 6.0 * u[3]);
    rot(Rb, u[4] - 0.5, u[5] - 0.5, u[6] - 0.5, 6.0 * u[7]);
    if (trial % 3 == 0) {
      memcpy(Rb, Ra, sizeof(Rb)); /* aligned: faces and edges parallel */
    }
    mbsShape a = shape(MBS_SHAPE_BOX, 0.5 + u[0], 0.5 + u[1], 0.5 + u[2]);
    mbsShape b = shape(MBS_SHAPE_BOX, 0.5 + u[5], 0.5 + u[6], 0.5 + u[7]);
    double d = 0.5 + 2.5 * u[3];
    mbsPose Pa = pose(0, 0, 0, Ra), Pb = pose(d * (u[4] - 0.5), d * (u[7] - 0.5), d * u[5], Rb);
    mbsContactPoint c[CAP];
    double margin = 0.05;
    int n = collide(&a, &Pa, &b, &Pb, NULL, margin, c);
    most = n > most ? n : most;
    total += n;
    /* edge pairs: at most 8 per pair of edge directions (the bound of mbs_collide_max) */
    int per[3][3] = {{0}};
    for (int i = 0; i < n; i++) {
      if (c[i].feature >= 16) {
        int e = c[i].feature - 16;
        per[e / 12 / 4][e % 12 / 4]++;
      }
    }
    for (int i = 0; i < 9; i++) {
      ck_assert_int_le(per[i / 3][i % 3], 8);
    }
    for (int i = 0; i < n; i++) {
      /* separating the boxes' extents along n: max over a of x.n <= pa.n, min over b >= pb.n */
      double amax = -INFINITY, bmin = INFINITY;
      for (int k = 0; k < 8; k++) {
        double v[3];
        world(v, &Pa, (k & 1) ? a.size[0] : -a.size[0], (k & 2) ? a.size[1] : -a.size[1],
              (k & 4) ? a.size[2] : -a.size[2]);
        amax = fmax(amax, v[0] * c[i].n[0] + v[1] * c[i].n[1] + v[2] * c[i].n[2]);
        world(v, &Pb, (k & 1) ? b.size[0] : -b.size[0], (k & 2) ? b.size[1] : -b.size[1],
              (k & 4) ? b.size[2] : -b.size[2]);
        bmin = fmin(bmin, v[0] * c[i].n[0] + v[1] * c[i].n[1] + v[2] * c[i].n[2]);
      }
      /* the normal lies in both features' cones up to a tolerance of sine 0.05: the extents
       * reach past the points by at most 0.05 times the boxes' size */
      double slack = 0.05 * 2 * (a.radius + b.radius) + 1e-12;
      double pan = c[i].pa[0] * c[i].n[0] + c[i].pa[1] * c[i].n[1] + c[i].pa[2] * c[i].n[2];
      double pbn = c[i].pb[0] * c[i].n[0] + c[i].pb[1] * c[i].n[1] + c[i].pb[2] * c[i].n[2];
      ck_assert_msg(amax <= pan + slack && bmin >= pbn - slack,
                    "trial %d point %d (feature %d): a reaches %g past pa, b %g before pb", trial,
                    i, c[i].feature, amax - pan, pbn - bmin);
    }
    /* at most max points: the first max of the full list */
    if (n > 1) {
      mbsContactPoint part[CAP];
      int m = mbs_collide(&a, &Pa, &b, &Pb, NULL, margin, part, n - 1);
      ck_assert_int_eq(m, n - 1);
      for (int i = 0; i < m; i++) {
        ck_assert_mem_eq(part[i].pa, c[i].pa, sizeof(c[i].pa));
        ck_assert_mem_eq(part[i].pb, c[i].pb, sizeof(c[i].pb));
        ck_assert_int_eq(part[i].feature, c[i].feature);
      }
    }
  }
  ck_assert_int_le(most, 16 + 72);
  ck_assert_int_gt(total, 1000); /* the trials did touch */
}
END_TEST

/* a box's vertex on the other box's face is found, in either order (feature k, or 8 + k),
 * with its gap: the lowest vertex of a turned box a (along b's axis 3), within half the
 * margin of b's face 3 and over its inner part, both boxes small and far from the origin
 * (box_box skips a vertex by an estimate of its coordinates and a rounding bound that grows
 * with them: a wrong estimate or bound loses such vertices) */
START_TEST(test_box_box_vertex_on_face) {
  unsigned seed = 77u;
  double margin = 1e-3;
  int found = 0;
  for (int trial = 0; trial < 2000; trial++) {
    double u[12];
    uniforms(&seed, u, 12);
    double Ra[9], Rb[9], far = trial % 2 ? 1e3 : 0.0;
    rot(Ra, u[0] - 0.5, u[1] - 0.5, u[2] - 0.5, 0.2 + 2.5 * u[3]);
    rot(Rb, u[4] - 0.5, u[5] - 0.5, u[6] - 0.5, 3.0 * u[7]);
    mbsShape a = shape(MBS_SHAPE_BOX, 0.02 + 0.03 * u[8], 0.03, 0.025);
    mbsShape b = shape(MBS_SHAPE_BOX, 0.05, 0.04 + 0.02 * u[9], 0.03);
    mbsPose Pb = pose(far, -0.7 * far, 0.3 * far, Rb);
    double nb[3];
    wdir(nb, &Pb, 0, 0, 1);
    /* a's vertex lowest along nb, in a's frame at the origin */
    mbsPose Pa = pose(0, 0, 0, Ra);
    int low = -1;
    double vlow[3] = {0.0, 0.0, 0.0}, hmin = INFINITY;
    for (int k = 0; k < 8; k++) {
      double v[3];
      world(v, &Pa, (k & 1) ? a.size[0] : -a.size[0], (k & 2) ? a.size[1] : -a.size[1],
            (k & 4) ? a.size[2] : -a.size[2]);
      double h = v[0] * nb[0] + v[1] * nb[1] + v[2] * nb[2];
      if (h < hmin) {
        hmin = h;
        low = k;
        memcpy(vlow, v, sizeof(v));
      }
    }
    /* the vertex goes to b's face point (s1, s2, h3 + g): a's centre is that less vlow */
    double g = margin * (u[10] - 0.5), s1 = 0.8 * b.size[0] * (2 * u[11] - 1),
           s2 = 0.8 * b.size[1] * (2 * u[9] - 1), target[3];
    world(target, &Pb, s1, s2, b.size[2] + g);
    Pa = pose(target[0] - vlow[0], target[1] - vlow[1], target[2] - vlow[2], Ra);
    for (int order = 0; order < 2; order++) {
      mbsContactPoint c[CAP];
      int n = order ? mbs_collide(&b, &Pb, &a, &Pa, NULL, margin, c, CAP)
                    : mbs_collide(&a, &Pa, &b, &Pb, NULL, margin, c, CAP);
      int want = order ? 8 + low : low, i = 0;
      while (i < n && c[i].feature != want) {
        i++;
      }
      ck_assert_msg(i < n, "trial %d order %d: vertex %d (gap %g) not found among %d points",
                    trial, order, low, g, n);
      ck_assert_msg(fabs(c[i].gap - g) <= 1e-9, "trial %d: gap %.17g, want %.17g", trial,
                    c[i].gap, g);
      found++;
    }
  }
  ck_assert_int_eq(found, 4000);
}
END_TEST

/* two turned boxes whose extreme edges along a_ka x b_kb cross at a gap g within half the
 * margin, both closest points inside the edges: the edge pair is found in either order with
 * that gap (box_box skips the edge directions whose separation lies far below its floors; a
 * wrong separation or bound loses such pairs) */
START_TEST(test_box_box_edge_cross_found) {
  unsigned seed = 4242u;
  double margin = 1e-3;
  int found = 0;
  for (int trial = 0; trial < 2000; trial++) {
    double u[14];
    uniforms(&seed, u, 14);
    double Ra[9], Rb[9], far = trial % 2 ? 1e3 : 0.0;
    rot(Ra, u[0] - 0.5, u[1] - 0.5, u[2] - 0.5, 6.0 * u[3]);
    rot(Rb, u[4] - 0.5, u[5] - 0.5, u[6] - 0.5, 6.0 * u[7]);
    mbsShape a = shape(MBS_SHAPE_BOX, 0.02 + 0.03 * u[8], 0.03, 0.025);
    mbsShape b = shape(MBS_SHAPE_BOX, 0.05, 0.04 + 0.02 * u[9], 0.03);
    int ka = trial % 3, kb = (trial / 3) % 3;
    mbsPose Pa = pose(far, 0.4 * far, -far, Ra);
    double ea[3], eb[3], n[3];
    wdir(ea, &Pa, ka == 0, ka == 1, ka == 2);
    mbsPose Pb = pose(0, 0, 0, Rb);
    wdir(eb, &Pb, kb == 0, kb == 1, kb == 2);
    n[0] = ea[1] * eb[2] - ea[2] * eb[1];
    n[1] = ea[2] * eb[0] - ea[0] * eb[2];
    n[2] = ea[0] * eb[1] - ea[1] * eb[0];
    double sn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (sn < 0.3) {
      continue; /* nearly parallel edges */
    }
    for (int r = 0; r < 3; r++) {
      n[r] /= sn;
    }
    /* a's edge furthest along n, b's furthest along -n, in box coordinates */
    double la[3], lb[3];
    for (int i = 0; i < 3; i++) {
      double ai[3], bi[3];
      wdir(ai, &Pa, i == 0, i == 1, i == 2);
      wdir(bi, &Pb, i == 0, i == 1, i == 2);
      double ca = ai[0] * n[0] + ai[1] * n[1] + ai[2] * n[2];
      double cb = bi[0] * n[0] + bi[1] * n[1] + bi[2] * n[2];
      la[i] = ca >= 0 ? a.size[i] : -a.size[i];
      lb[i] = cb >= 0 ? -b.size[i] : b.size[i];
    }
    la[ka] = a.size[ka] * (u[10] - 0.5);
    lb[kb] = b.size[kb] * (u[11] - 0.5);
    /* b's point goes to a's point plus g n */
    double g = margin * (0.05 + 0.4 * u[12]), pa[3], pbl[3];
    world(pa, &Pa, la[0], la[1], la[2]);
    world(pbl, &Pb, lb[0], lb[1], lb[2]);
    Pb = pose(pa[0] + g * n[0] - pbl[0], pa[1] + g * n[1] - pbl[1], pa[2] + g * n[2] - pbl[2],
              Rb);
    for (int order = 0; order < 2; order++) {
      mbsContactPoint c[CAP];
      int np = order ? mbs_collide(&b, &Pb, &a, &Pa, NULL, margin, c, CAP)
                     : mbs_collide(&a, &Pa, &b, &Pb, NULL, margin, c, CAP);
      int i = 0;
      while (i < np && !(c[i].feature >= 16 && fabs(c[i].gap - g) <= 1e-9)) {
        i++;
      }
      ck_assert_msg(i < np, "trial %d order %d: edges %d, %d crossing at gap %g not found "
                    "among %d points", trial, order, ka, kb, g, np);
      found++;
    }
  }
  ck_assert_int_gt(found, 3000);
}
END_TEST

/* ---- capsules ---- */

START_TEST(test_capsule_plane) {
  double R[9];
  rot(R, 0, 1, 0, PI / 2); /* axis 3 along x */
  mbsShape cp = shape(MBS_SHAPE_CAPSULE, 0.1, 0.5, 0), pl = shape(MBS_SHAPE_PLANE, 0, 0, 0);
  mbsPose Pc = pose(0.2, 0.3, 0.1, R), Pp = pose(0, 0, 0, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&cp, &Pc, &pl, &Pp, NULL, 1e-3, c), 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_double_eq_tol(c[i].gap, 0, 1e-15);
    ck_assert_double_eq_tol(fabs(c[i].pa[0] - 0.2), 0.5, 1e-15);
    ASSERT_V3(c[i].pb, c[i].pa[0], 0.3, 0, 1e-15);
    ASSERT_V3(c[i].n, 0, 0, -1, 0);
  }
  ck_assert_int_ne(c[0].feature, c[1].feature);
  /* tilted by 0.3 rad from the horizontal: the lower end only */
  rot(R, 0, 1, 0, PI / 2 - 0.3);
  Pc = pose(0, 0, 0.5 * sin(0.3) + 0.1 + 0.02, R);
  ck_assert_int_eq(collide(&cp, &Pc, &pl, &Pp, NULL, 0.05, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.02, 1e-14);
  ASSERT_V3(c[0].pa, -0.5 * cos(0.3), 0, 0.02, 1e-14);
}
END_TEST

/* the least distance of two segments by sampling both (independent of the closed form) */
static double sampled_distance(const mbsPose *Pa, double ha, const mbsPose *Pb, double hb) {
  double best = INFINITY;
  int n = 1000;
  for (int i = 0; i <= n; i++) {
    double A[3];
    world(A, Pa, 0, 0, -ha + 2 * ha * i / n);
    for (int j = 0; j <= n; j++) {
      double B[3];
      world(B, Pb, 0, 0, -hb + 2 * hb * j / n);
      best = fmin(best, dist3(A, B));
    }
  }
  return best;
}

START_TEST(test_capsule_capsule) {
  double Rx[9], Ry[9];
  rot(Rx, 0, 1, 0, PI / 2);  /* axis along x */
  rot(Ry, 1, 0, 0, -PI / 2); /* axis along y */
  mbsShape a = shape(MBS_SHAPE_CAPSULE, 0.1, 0.5, 0), b = shape(MBS_SHAPE_CAPSULE, 0.1, 0.4, 0);
  mbsContactPoint c[CAP];
  /* crossing */
  mbsPose Pa = pose(0, 0, 0, Rx), Pb = pose(0.1, 0.2, 0.3, Ry);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 0.15, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.1, 1e-14);
  ASSERT_V3(c[0].n, 0, 0, 1, 1e-14);
  ASSERT_V3(c[0].pa, 0.1, 0, 0.1, 1e-14);
  ASSERT_V3(c[0].pb, 0.1, 0, 0.2, 1e-14);
  /* past a's end: a's end (0.5, 0, 0) to (0.8, 0, 0.3) */
  Pb = pose(0.8, 0.2, 0.3, Ry);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 0.3, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.3 * sqrt(2.0) - 0.2, 1e-14);
  ASSERT_V3(c[0].n, sqrt(0.5), 0, sqrt(0.5), 1e-14);
  ASSERT_V3(c[0].pa, 0.5 + 0.1 * sqrt(0.5), 0, 0.1 * sqrt(0.5), 1e-14);
  /* parallel, overlapping on [-0.2, 0.5]: both ends of the overlap */
  Pb = pose(0.2, 0, 0.25, Rx);
  ck_assert_int_eq(collide(&a, &Pa, &b, &Pb, NULL, 0.1, c), 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_double_eq_tol(c[i].gap, 0.05, 1e-14);
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-14);
  }
  ASSERT_V3(c[0].pa, -0.2, 0, 0.1, 1e-14);
  ASSERT_V3(c[1].pa, 0.5, 0, 0.1, 1e-14);
  /* skew segments in general position: the gap is the sampled least distance minus radii */
  unsigned seed = 77u;
  for (int trial = 0; trial < 20; trial++) {
    double u[8];
    uniforms(&seed, u, 8);
    double R1[9], R2[9];
    rot(R1, u[0] - 0.5, u[1] - 0.5, u[2], 3 * u[3]);
    rot(R2, u[4], u[5] - 0.5, u[6] - 0.5, 3 * u[7]);
    Pa = pose(0, 0, 0, R1);
    Pb = pose(u[1] - 0.5, u[2] - 0.5, 0.5 * u[0], R2);
    int n = collide(&a, &Pa, &b, &Pb, NULL, 10.0, c);
    ck_assert_int_ge(n, 1);
    double d = sampled_distance(&Pa, 0.5, &Pb, 0.4);
    for (int i = 0; i < n; i++) { /* the sampled distance is at most 1e-6 above the least */
      ck_assert_double_ge(c[i].gap, d - 0.2 - 2e-6);
    }
    if (n == 1) {
      ck_assert_msg(fabs(c[0].gap - (d - 0.2)) < 2e-6, "trial %d: gap %.12g, sampled %.12g", trial,
                    c[0].gap, d - 0.2);
    }
  }
}
END_TEST

START_TEST(test_capsule_box) {
  double Rx[9];
  rot(Rx, 0, 1, 0, PI / 2); /* axis along x */
  mbsShape bx = shape(MBS_SHAPE_BOX, 0.5, 0.4, 0.3), cp = shape(MBS_SHAPE_CAPSULE, 0.1, 1.0, 0);
  mbsPose Pb = pose(0, 0, 0, NULL), Pc;
  mbsContactPoint c[CAP];
  /* longer than the box, lying across its top: the two top edges it crosses */
  Pc = pose(0.05, 0.1, 0.4, Rx);
  ck_assert_int_eq(collide(&bx, &Pb, &cp, &Pc, NULL, 1e-3, c), 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_double_eq_tol(c[i].gap, 0, 1e-14);
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-14);
    ck_assert_double_eq_tol(fabs(c[i].pa[0]), 0.5, 1e-14);
    ASSERT_V3(c[i].pa, c[i].pa[0], 0.1, 0.3, 1e-14);
    ASSERT_V3(c[i].pb, c[i].pa[0], 0.1, 0.3, 1e-14);
  }
  /* shorter than the top face, lying on it, sunk by 1e-4: its two ends */
  mbsShape sh = shape(MBS_SHAPE_CAPSULE, 0.1, 0.3, 0);
  Pc = pose(0.05, 0.1, 0.4 - 1e-4, Rx);
  ck_assert_int_eq(collide(&bx, &Pb, &sh, &Pc, NULL, 1e-3, c), 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_double_eq_tol(c[i].gap, -1e-4, 1e-14);
    ASSERT_V3(c[i].n, 0, 0, 1, 1e-14);
    ck_assert_double_eq_tol(fabs(c[i].pa[0] - 0.05), 0.3, 1e-14);
    ck_assert_double_eq_tol(c[i].pa[2], 0.3, 1e-14);
  }
  /* one end over the face, the other past the +x edge: that end and the edge */
  Pc = pose(0.6, 0.1, 0.4, Rx);
  int n = collide(&bx, &Pb, &sh, &Pc, NULL, 1e-3, c);
  ck_assert_int_eq(n, 2);
  double p1[3] = {0.3, 0.1, 0.3}, p2[3] = {0.5, 0.1, 0.3};
  ck_assert_int_ge(find_pa(c, n, p1, 1e-14), 0);
  ck_assert_int_ge(find_pa(c, n, p2, 1e-14), 0);
  /* standing on the top face: its lower end */
  Pc = pose(0.1, -0.1, 0.3 + 1.0 + 0.1 + 0.01, NULL);
  ck_assert_int_eq(collide(&bx, &Pb, &cp, &Pc, NULL, 0.02, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.01, 1e-14);
  ASSERT_V3(c[0].pa, 0.1, -0.1, 0.3, 1e-14);
  /* across a vertical edge, at 45 degrees to both faces: the edge only */
  double Rz[9];
  rot(Rz, 1, 1, 0, PI / 2); /* axis 3 horizontal, normal to (1, 1, 0) */
  ck_assert_double_eq_tol(Rz[8], 0, 1e-15);
  ck_assert_double_eq_tol(Rz[2] + Rz[5], 0, 1e-15);
  double e = 0.05, s2 = sqrt(0.5);
  Pc = pose(0.5 + (0.1 + e) * s2, 0.4 + (0.1 + e) * s2, 0.1, Rz);
  n = collide(&bx, &Pb, &cp, &Pc, NULL, 0.1, c);
  ck_assert_int_eq(n, 1);
  ck_assert_double_eq_tol(c[0].gap, e, 1e-14);
  ASSERT_V3(c[0].n, s2, s2, 0, 1e-14);
  ASSERT_V3(c[0].pa, 0.5, 0.4, 0.1, 1e-14);
}
END_TEST

/* ---- point sets ---- */

static const double PTS[] = {
    9,   9,   9, /* another shape's point (pt0 skips it) */
    0.0, 0.0, 0.0, 0.5, 0.0, -0.1, 0.0, 0.5, 0.2, -0.3, -0.4, 0.3,
};

START_TEST(test_points_plane) {
  double R[9];
  rot(R, 1, 1, 0, 0.4);
  mbsShape ps = shape(MBS_SHAPE_POINTS, 0, 0, 0), pl = shape(MBS_SHAPE_PLANE, 0, 0, 0);
  ps.npts = 4;
  ps.pt0 = 1;
  mbsPose Ps = pose(0.1, 0.2, 0.15, R), Pp = pose(0, 0, 0.05, NULL);
  mbsContactPoint c[CAP];
  double margin = 0.15;
  int want = 0, n = collide(&ps, &Ps, &pl, &Pp, PTS, margin, c);
  for (int k = 0; k < 4; k++) {
    double p[3];
    world(p, &Ps, PTS[3 + 3 * k], PTS[4 + 3 * k], PTS[5 + 3 * k]);
    if (p[2] - 0.05 < margin) {
      ck_assert_int_lt(want, n);
      ck_assert_int_eq(c[want].feature, k);
      ASSERT_V3V(c[want].pa, p, 1e-15);
      ASSERT_V3(c[want].pb, p[0], p[1], 0.05, 1e-15);
      ck_assert_double_eq_tol(c[want].gap, p[2] - 0.05, 1e-15);
      want++;
    }
  }
  ck_assert_int_eq(n, want);
  ck_assert_int_gt(want, 0);
  ck_assert_int_lt(want, 4);
  ck_assert_int_eq(mbs_collide_max(&ps, &pl), 4);
}
END_TEST

START_TEST(test_points_box) {
  double R[9];
  rot(R, 0.2, 1, 0.3, 0.6);
  mbsShape bx = shape(MBS_SHAPE_BOX, 0.2, 0.3, 0.4), ps = shape(MBS_SHAPE_POINTS, 0, 0, 0);
  mbsPose Pb = pose(1, 1, 1, R), Ps = pose(1, 1, 1, R); /* points in the box's coordinates */
  double loc[] = {
      0.25, 0.0,   0.0, /* outside the +x face by 0.05 */
      0.0,  -0.28, 0.1, /* inside, 0.02 below the -y face */
      0.3,  0.4,   0.0, /* beyond the (+x, +y) edge by (0.1, 0.1) */
      0.0,  0.0,   0.7, /* far above */
  };
  ps.npts = 4;
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&bx, &Pb, &ps, &Ps, loc, 0.1, c), 2);
  ck_assert_int_eq(c[0].feature, 0);
  ck_assert_double_eq_tol(c[0].gap, 0.05, 1e-15);
  double w[3];
  wdir(w, &Pb, 1, 0, 0);
  ASSERT_V3V(c[0].n, w, 1e-15);
  world(w, &Pb, 0.2, 0, 0);
  ASSERT_V3V(c[0].pa, w, 1e-15);
  ck_assert_int_eq(c[1].feature, 1);
  ck_assert_double_eq_tol(c[1].gap, -0.02, 1e-15);
  wdir(w, &Pb, 0, -1, 0);
  ASSERT_V3V(c[1].n, w, 1e-15);
  world(w, &Pb, 0.0, -0.3, 0.1);
  ASSERT_V3V(c[1].pa, w, 1e-15);
  ck_assert_int_eq(collide(&bx, &Pb, &ps, &Ps, loc, 0.15, c), 3);
  ck_assert_int_eq(c[2].feature, 2);
  ck_assert_double_eq_tol(c[2].gap, 0.1 * sqrt(2.0), 1e-15);
}
END_TEST

START_TEST(test_points_sphere) {
  mbsShape sp = shape(MBS_SHAPE_SPHERE, 0.5, 0, 0), ps = shape(MBS_SHAPE_POINTS, 0, 0, 0);
  double loc[] = {0.3, 0.4, 0.0, 0.0, 0.0, 0.52, 1.0, 1.0, 1.0};
  ps.npts = 3;
  mbsPose Pa = pose(2, 0, 0, NULL), Pp = pose(2, 0, 0, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&sp, &Pa, &ps, &Pp, loc, 0.05, c), 2);
  ck_assert_double_eq_tol(c[0].gap, 0.0, 1e-15);
  ASSERT_V3(c[0].n, 0.6, 0.8, 0, 1e-15);
  ck_assert_double_eq_tol(c[1].gap, 0.02, 1e-15);
  ASSERT_V3(c[1].pa, 2, 0, 0.5, 1e-15);
  ASSERT_V3(c[1].pb, 2, 0, 0.52, 1e-15);
  ck_assert_int_eq(c[1].feature, 1);
}
END_TEST

/* a sphere against a capsule along x (r = 0.1, half length 0.5 about (0.2, 0.3, 0.1)):
 * beside its middle, beyond its end (the end's hemisphere), tilted */
START_TEST(test_sphere_capsule) {
  double R[9];
  rot(R, 0, 1, 0, PI / 2); /* axis 3 along x */
  mbsShape cp = shape(MBS_SHAPE_CAPSULE, 0.1, 0.5, 0), sp = shape(MBS_SHAPE_SPHERE, 0.2, 0, 0);
  mbsPose Pc = pose(0.2, 0.3, 0.1, R);
  mbsContactPoint c[CAP];
  /* above the axis at x = 0.4: gap 0.45 - 0.1 - 0.2 */
  mbsPose Ps = pose(0.4, 0.3, 0.55, NULL);
  ck_assert_int_eq(collide(&sp, &Ps, &cp, &Pc, NULL, 0.2, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.15, 1e-15);
  ASSERT_V3(c[0].n, 0, 0, -1, 1e-15);
  ASSERT_V3(c[0].pa, 0.4, 0.3, 0.35, 1e-15);
  ASSERT_V3(c[0].pb, 0.4, 0.3, 0.2, 1e-15);
  ck_assert_int_eq(collide(&sp, &Ps, &cp, &Pc, NULL, 0.15, c), 0);
  /* beyond the end x = 0.7, off along (3, 0, 4) / 5 by 0.25: gap 0.25 - 0.3 */
  Ps = pose(0.7 + 0.15, 0.3, 0.1 + 0.2, NULL);
  ck_assert_int_eq(collide(&sp, &Ps, &cp, &Pc, NULL, 0.0, c), 1);
  ck_assert_double_eq_tol(c[0].gap, -0.05, 1e-15);
  ASSERT_V3(c[0].n, -0.6, 0, -0.8, 1e-15);
  ASSERT_V3(c[0].pb, 0.7 + 0.06, 0.3, 0.1 + 0.08, 1e-15);
  /* against the distance to a sampled segment, tilted */
  double Rt[9];
  rot(Rt, 0.3, 0.5, 0.8, 1.1);
  mbsPose Pt = pose(-0.1, 0.2, 0.05, Rt);
  for (int k = 0; k < 5; k++) {
    double x[3] = {0.3 * k - 0.6, 0.1 * k, 0.4 - 0.05 * k}, best = INFINITY;
    Ps = pose(x[0], x[1], x[2], NULL);
    for (int i = 0; i <= 20000; i++) {
      double A[3];
      world(A, &Pt, 0, 0, -0.5 + i / 20000.0);
      best = fmin(best, dist3(A, x));
    }
    ck_assert_int_eq(collide(&sp, &Ps, &cp, &Pt, NULL, 10.0, c), 1);
    ck_assert_double_eq_tol(c[0].gap, best - 0.3, 1e-8);
  }
}
END_TEST

/* points against a capsule: the nearest points of its segment */
START_TEST(test_capsule_points) {
  double R[9];
  rot(R, 0, 1, 0, PI / 2); /* axis 3 along x */
  mbsShape cp = shape(MBS_SHAPE_CAPSULE, 0.1, 0.5, 0), ps = shape(MBS_SHAPE_POINTS, 0, 0, 0);
  double loc[] = {0.0, 0.0, 0.12, 0.8, 0.0, 0.0, 0.0, 0.0, 0.5};
  ps.npts = 3;
  mbsPose Pc = pose(0, 0, 0, R), Pp = pose(0, 0, 0, NULL);
  mbsContactPoint c[CAP];
  ck_assert_int_eq(collide(&cp, &Pc, &ps, &Pp, loc, 0.25, c), 2);
  ck_assert_double_eq_tol(c[0].gap, 0.02, 1e-15);
  ASSERT_V3(c[0].n, 0, 0, 1, 1e-15);
  ASSERT_V3(c[0].pa, 0, 0, 0.1, 1e-15);
  ASSERT_V3(c[0].pb, 0, 0, 0.12, 1e-15);
  ck_assert_int_eq(c[0].feature, 0);
  ck_assert_double_eq_tol(c[1].gap, 0.2, 1e-15);
  ASSERT_V3(c[1].n, 1, 0, 0, 1e-15);
  ASSERT_V3(c[1].pa, 0.6, 0, 0, 1e-15);
  ck_assert_int_eq(c[1].feature, 1);
}
END_TEST

/* a capsule through a ring's bore: the bore's point on the side the axis is displaced to,
 * gap R - r - offset for an axis along the ring's; against a sampled bore when tilted */
START_TEST(test_capsule_ring) {
  double R[9];
  rot(R, 0, 1, 0, PI / 2); /* the capsule's axis 3 along x */
  mbsShape cp = shape(MBS_SHAPE_CAPSULE, 0.1, 0.5, 0), rg = shape(MBS_SHAPE_RING, 0.15, 0, 0);
  rg.radius = 0.15;
  mbsPose Pc = pose(0.2, 0.0, 0.0, R), Pr = pose(0.4, 0.03, -0.02, R); /* ring axis along x */
  mbsContactPoint c[CAP];
  /* the axis is 0.036 from the ring's centre, towards (-3, 2) / sqrt(13) in y, z */
  double off = sqrt(0.03 * 0.03 + 0.02 * 0.02), ey = -0.03 / off, ez = 0.02 / off;
  ck_assert_int_eq(collide(&cp, &Pc, &rg, &Pr, NULL, 0.1, c), 1);
  ck_assert_double_eq_tol(c[0].gap, 0.15 - 0.1 - off, 1e-15);
  ASSERT_V3(c[0].n, 0, ey, ez, 1e-15);
  ASSERT_V3(c[0].pb, 0.4, 0.03 + 0.15 * ey, -0.02 + 0.15 * ez, 1e-15);
  ASSERT_V3(c[0].pa, 0.4, 0.1 * ey, 0.1 * ez, 1e-15);
  ck_assert_int_eq(collide(&cp, &Pc, &rg, &Pr, NULL, 0.15 - 0.1 - off - 1e-12, c), 0);
  /* the axis beyond the bore: the gap is negative by more than the radius */
  Pr = pose(0.4, 0.0, -0.2, R);
  ck_assert_int_eq(collide(&cp, &Pc, &rg, &Pr, NULL, 0.0, c), 1);
  ck_assert_double_eq_tol(c[0].gap, -0.05 - 0.1, 1e-15);
  ASSERT_V3(c[0].n, 0, 0, 1, 1e-15);
  /* the segment ends before the ring's plane, or lies in it: nothing */
  Pr = pose(0.8, 0.0, 0.0, R);
  ck_assert_int_eq(collide(&cp, &Pc, &rg, &Pr, NULL, 1.0, c), 0);
  Pr = pose(0.2, 0.0, 0.0, NULL);
  ck_assert_int_eq(collide(&cp, &Pc, &rg, &Pr, NULL, 1.0, c), 0);
  /* tilted axis: the gap is the distance from the segment to the bore's point on the side
   * of the axis' crossing, less r (the bore sampled) */
  double Rt[9];
  rot(Rt, 0.2, 1.0, 0.1, PI / 2 + 0.2);
  Pr = pose(0.3, 0.02, 0.01, R);
  mbsPose Pt = pose(0.25, 0.0, 0.0, Rt);
  ck_assert_int_eq(collide(&cp, &Pt, &rg, &Pr, NULL, 1.0, c), 1);
  double best = INFINITY, u[3], ax[3] = {1, 0, 0}, X[3], d[3];
  wdir(u, &Pt, 0, 0, 1);
  double t = ((0.3 - 0.25) * ax[0]) / (u[0] * ax[0]);
  world(X, &Pt, 0, 0, t);
  for (int r = 0; r < 3; r++) {
    d[r] = X[r] - Pr.x[r];
  }
  d[0] = 0.0;
  double dn = sqrt(d[1] * d[1] + d[2] * d[2]),
         B[3] = {0.3, 0.02 + 0.15 * d[1] / dn, 0.01 + 0.15 * d[2] / dn};
  for (int i = 0; i <= 20000; i++) {
    double A[3];
    world(A, &Pt, 0, 0, -0.5 + i / 20000.0);
    best = fmin(best, dist3(A, B));
  }
  ASSERT_V3V(c[0].pb, B, 1e-15);
  ck_assert_double_eq_tol(c[0].gap, best - 0.1, 1e-8);
}
END_TEST

/* ---- bilinear patches (surfaces) ---- */

/* a patch shape over the corners r (4 x 3) and its pose (as mbs_shape_pose makes it) */
static mbsShape patch_shape(const double r[12], int closed, mbsPose *P) {
  mbsShape s = shape(MBS_SHAPE_PATCH, 0, 0, 0);
  s.closed = closed;
  s.nbr[0][0] = s.nbr[0][1] = s.nbr[1][0] = s.nbr[1][1] = -1;
  *P = pose(0, 0, 0, NULL);
  memcpy(P->corner, r, 12 * sizeof(double));
  for (int k = 0; k < 4; k++) {
    for (int j = 0; j < 3; j++) {
      P->x[j] += 0.25 * r[3 * k + j];
    }
  }
  for (int k = 0; k < 4; k++) {
    P->half = fmax(P->half, dist3(r + 3 * k, P->x));
  }
  s.radius = P->half;
  return s;
}

/* x(xi, eta) = sum_i N_i r_i and its tangents, written out here */
static void bilinear(const double r[12], double xi, double eta, double x[3], double tx[3],
                     double te[3]) {
  for (int j = 0; j < 3; j++) {
    x[j] = (1 - xi) * (1 - eta) * r[j] + xi * (1 - eta) * r[3 + j] + xi * eta * r[6 + j] +
           (1 - xi) * eta * r[9 + j];
    tx[j] = -(1 - eta) * r[j] + (1 - eta) * r[3 + j] + eta * r[6 + j] - eta * r[9 + j];
    te[j] = -(1 - xi) * r[j] - xi * r[3 + j] + xi * r[6 + j] + (1 - xi) * r[9 + j];
  }
}

/* the projection onto a twisted patch: the closest point is stationary (x - p normal to both
 * tangents), no farther than the nearest of a 400 x 400 sampling of the patch continued to
 * [-0.25, 1.25]^2, the normal the unit x_xi x x_eta; the weights sum to 1 and give x */
START_TEST(test_patch_projection) {
  const double r[12] = {0, 0, 0, 1, 0, 0.2, 1.1, 1, -0.1, 0, 0.9, 0.3};
  unsigned seed = 7;
  for (int t = 0; t < 50; t++) {
    seed = seed * 1103515245u + 12345u;
    double u = (seed >> 8) / 16777216.0;
    seed = seed * 1103515245u + 12345u;
    double v = (seed >> 8) / 16777216.0;
    seed = seed * 1103515245u + 12345u;
    double h = (seed >> 8) / 16777216.0 - 0.5;
    double x0[3], tx[3], te[3], p[3], st[2], x[3], n[3];
    bilinear(r, -0.1 + 1.2 * u, -0.1 + 1.2 * v, x0, tx, te);
    p[0] = x0[0] - 0.1 * h;
    p[1] = x0[1] + 0.05 * h;
    p[2] = x0[2] + 0.4 * h;
    ck_assert_int_eq(mbs_patch_project(r, p, st, x, n), 1);
    double xb[3], d[3];
    bilinear(r, st[0], st[1], xb, tx, te);
    ASSERT_V3V(x, xb, 1e-14);
    for (int j = 0; j < 3; j++) {
      d[j] = x[j] - p[j];
    }
    double g0 = d[0] * tx[0] + d[1] * tx[1] + d[2] * tx[2];
    double g1 = d[0] * te[0] + d[1] * te[1] + d[2] * te[2];
    ck_assert_msg(fabs(g0) <= 1e-13 && fabs(g1) <= 1e-13, "point %d: not stationary (%g, %g)", t,
                  g0, g1);
    double best = INFINITY;
    for (int i = 0; i <= 400; i++) {
      for (int k = 0; k <= 400; k++) {
        double xs[3], a[3], b[3];
        bilinear(r, -0.25 + 1.5 * i / 400, -0.25 + 1.5 * k / 400, xs, a, b);
        best = fmin(best, dist3(xs, p));
      }
    }
    ck_assert_msg(dist3(x, p) <= best + 1e-14, "point %d: %.17g farther than a sample's %.17g",
                  t, dist3(x, p), best);
    double c[3] = {tx[1] * te[2] - tx[2] * te[1], tx[2] * te[0] - tx[0] * te[2],
                   tx[0] * te[1] - tx[1] * te[0]};
    double lc = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    ASSERT_V3(n, c[0] / lc, c[1] / lc, c[2] / lc, 1e-14);
    double N[4], xn[3] = {0, 0, 0};
    mbs_patch_weights(N, st[0], st[1]);
    ck_assert_double_eq_tol(N[0] + N[1] + N[2] + N[3], 1.0, 1e-15);
    for (int k = 0; k < 4; k++) {
      for (int j = 0; j < 3; j++) {
        xn[j] += N[k] * r[3 * k + j];
      }
    }
    ASSERT_V3V(xn, x, 1e-14);
  }
}
END_TEST

/* a sphere and a tilted box on the flat unit patch at z = 0: the gap, the normal from the
 * shape into the patch (-z), the points; nothing beside the patch or far below it */
START_TEST(test_sphere_box_patch) {
  const double r[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  mbsPose Pp, Ps = pose(0.3, 0.6, 0.04, NULL);
  mbsShape sp = patch_shape(r, 3, &Pp), ball = shape(MBS_SHAPE_SPHERE, 0.05, 0, 0);
  mbsContactPoint c[CAP];
  int n = collide(&ball, &Ps, &sp, &Pp, NULL, 1e-3, c);
  ck_assert_int_eq(n, 1);
  ck_assert_double_eq_tol(c[0].gap, -0.01, 1e-15);
  ASSERT_V3(c[0].n, 0, 0, -1, 1e-15);
  ASSERT_V3(c[0].pa, 0.3, 0.6, -0.01, 1e-15);
  ASSERT_V3(c[0].pb, 0.3, 0.6, 0, 1e-15);
  Ps = pose(1.2, 0.6, 0.04, NULL); /* beside it */
  ck_assert_int_eq(collide(&ball, &Ps, &sp, &Pp, NULL, 1e-3, c), 0);
  Ps = pose(0.3, 0.6, -0.2, NULL); /* under it */
  ck_assert_int_eq(collide(&ball, &Ps, &sp, &Pp, NULL, 1e-3, c), 0);
  /* a cube of edge 0.1 tilted by 0.2 rad about y, its lowest edge 1 mm into the patch: two
   * vertices at -1e-3, the two of the next edge up by 0.1 sin 0.2 */
  double R[9];
  rot(R, 0, 1, 0, 0.2);
  double half = 0.05 * (cos(0.2) + sin(0.2));
  mbsPose Pb = pose(0.5, 0.5, half - 1e-3, R);
  mbsShape box = shape(MBS_SHAPE_BOX, 0.05, 0.05, 0.05);
  n = collide(&box, &Pb, &sp, &Pp, NULL, 1e-3, c);
  ck_assert_int_eq(n, 2);
  for (int i = 0; i < n; i++) {
    ck_assert_double_eq_tol(c[i].gap, -1e-3, 1e-15);
    ASSERT_V3(c[i].n, 0, 0, -1, 1e-15);
  }
  /* within 0.05: the next edge up too (at 0.1 sin 0.2 - 1e-3), the top ones (0.097) not */
  n = collide(&box, &Pb, &sp, &Pp, NULL, 0.05, c);
  ck_assert_int_eq(n, 4);
}
END_TEST

/* a patch's node against a box's face: a peak (corner 1 raised 0.1 above the others) 1 mm into
 * the bottom face of a cube resting over it touches at the node (feature 8 + corner, gap
 * -1e-3, the face's normal, the face's point and the node); the cube's vertices clear the
 * slopes by 8.75 mm. The same node in a flat patch is not reported (the vertex carries the
 * cube). Corner 2 (xi = 1) is reported only by a patch on the surface's last column */
START_TEST(test_node_box_patch) {
  mbsShape box = shape(MBS_SHAPE_BOX, 0.05, 0.05, 0.05);
  mbsContactPoint c[CAP];
  for (int k = 0; k < 2; k++) {
    double r[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    r[3 * k + 2] = 0.1;
    for (int closed = 0; closed < 2; closed++) {
      mbsPose Pp, Pb = pose(r[3 * k], r[3 * k + 1], 0.1 + 0.05 - 1e-3, NULL);
      mbsShape sp = patch_shape(r, closed, &Pp);
      int n = collide(&box, &Pb, &sp, &Pp, NULL, 1e-3, c);
      if (k == 1 && !closed) {
        ck_assert_int_eq(n, 0);
        continue;
      }
      ck_assert_int_eq(n, 1);
      ck_assert_int_eq(c[0].feature, 8 + k);
      ck_assert_double_eq_tol(c[0].gap, -1e-3, 1e-15);
      ASSERT_V3(c[0].n, 0, 0, -1, 1e-15);
      ASSERT_V3(c[0].pa, r[3 * k], 0, 0.099, 1e-15);
      ASSERT_V3(c[0].pb, r[3 * k], 0, 0.1, 1e-15);
    }
  }
  /* flat: the vertex over the patch, not the node under the face */
  const double f[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  mbsPose Pp, Pb = pose(0, 0, 0.05 - 1e-3, NULL);
  mbsShape sp = patch_shape(f, 3, &Pp);
  int n = collide(&box, &Pb, &sp, &Pp, NULL, 1e-3, c);
  ck_assert_int_eq(n, 1);
  ck_assert_int_lt(c[0].feature, 8);
  ck_assert_double_eq_tol(c[0].gap, -1e-3, 1e-15);
}
END_TEST

/* two patches sharing an edge: a point over the edge is exactly one patch's when they are
 * flat (the edge belongs to the next patch, the surface's border to its own), both patches'
 * in a valley (a concave crease: each patch's plane is under it) */
START_TEST(test_patch_edges) {
  mbsContactPoint c[CAP];
  mbsShape ball = shape(MBS_SHAPE_SPHERE, 0.05, 0, 0);
  for (int valley = 0; valley < 2; valley++) {
    double z = valley ? 0.1 : 0.0;
    const double ra[12] = {0, 0, z, 1, 0, 0, 1, 1, 0, 0, 1, z};
    const double rb[12] = {1, 0, 0, 2, 0, z, 2, 1, z, 1, 1, 0};
    mbsPose Pa, Pb;
    mbsShape a = patch_shape(ra, 2, &Pa), b = patch_shape(rb, 3, &Pb);
    for (int i = -20; i <= 20; i++) {
      double x = 1.0 + 1e-3 * i + (i == 1 ? 1e-17 : 0.0);
      mbsPose Ps = pose(x, 0.5, 0.05 - 1e-4, NULL);
      int na = collide(&ball, &Ps, &a, &Pa, NULL, 1e-3, c);
      int nb = collide(&ball, &Ps, &b, &Pb, NULL, 1e-3, c);
      if (!valley) {
        ck_assert_msg(na + nb == 1, "x = %.17g: %d + %d points", x, na, nb);
        ck_assert_int_eq(na, x < 1.0 ? 1 : 0);
      } else if (i == 0) {
        ck_assert_int_eq(na, 1);
        ck_assert_int_eq(nb, 1);
      }
    }
    if (!valley) {
      /* the surface's border (the closed edge xi = 1 of b at x = 2) is b's */
      mbsPose Ps = pose(2.0, 0.5, 0.05 - 1e-4, NULL);
      ck_assert_int_eq(collide(&ball, &Ps, &b, &Pb, NULL, 1e-3, c), 1);
    }
  }
}
END_TEST

/* a ridge: two patches falling away from their shared edge at x = 1 by the slope s; a sphere
 * of radius r moved across it at the height h over the edge touches exactly one of them at
 * every x: a patch's face (gap: its distance from the patch's plane less r) or, over the
 * wedge |x - 1| <= h s between the normals, the edge (gap sqrt((x - 1)^2 +
 * h^2) - r, normal along the line to the edge), which patch b takes (a across its edge
 * xi = 0, and again across eta = 0) */
START_TEST(test_patch_ridge) {
  const double sl = 0.2, h = 0.05, rad = 0.05;
  /* dir 0: the edge along y, a on the left (x < 1); dir 1: the edge along x, a below (y < 1) */
  const double ra0[12] = {0, 0, -sl, 1, 0, 0, 1, 1, 0, 0, 1, -sl};
  const double rb0[12] = {1, 0, 0, 2, 0, -sl, 2, 1, -sl, 1, 1, 0};
  const double ra1[12] = {0, 0, -sl, 1, 0, -sl, 1, 1, 0, 0, 1, 0};
  const double rb1[12] = {0, 1, 0, 1, 1, 0, 1, 2, -sl, 0, 2, -sl};
  for (int dir = 0; dir < 2; dir++) {
    mbsPose Pa, Pb;
    mbsShape a = patch_shape(dir ? ra1 : ra0, dir ? 1 : 2, &Pa);
    mbsShape b = patch_shape(dir ? rb1 : rb0, 3, &Pb);
    b.nbr[dir][0] = b.nbr[dir][1] = 1; /* a neighbour across xi = 0 (eta = 0): patch a */
    memcpy(Pb.corner + 12 * (1 + dir), dir ? ra1 : ra0, 12 * sizeof(double));
    mbsShape ball = shape(MBS_SHAPE_SPHERE, rad, 0, 0);
    mbsContactPoint c[CAP];
    double ang = atan(sl), wedge = h * sl;
    int nwedge = 0;
    for (int i = -40; i <= 40; i++) {
      double dx = 0.5e-3 * i, want;
      mbsPose Ps = dir ? pose(0.5, 1.0 + dx, h, NULL) : pose(1.0 + dx, 0.5, h, NULL);
      int na = collide(&ball, &Ps, &a, &Pa, NULL, 0.1, c);
      double ga = na ? c[0].gap : NAN;
      int nb = collide(&ball, &Ps, &b, &Pb, NULL, 0.1, c);
      ck_assert_msg(na + nb == 1, "dir %d, dx = %g: %d + %d points", dir, dx, na, nb);
      if (fabs(dx) <= wedge * (1 - 1e-9)) {
        ck_assert_int_eq(nb, 1);
        ck_assert_int_eq(c[0].feature, 16);
        want = sqrt(dx * dx + h * h) - rad;
        ck_assert_double_eq_tol(c[0].gap, want, 1e-14);
        double nx = -dx / (want + rad), nz = -h / (want + rad);
        ASSERT_V3(c[0].n, dir ? 0 : nx, dir ? nx : 0, nz, 1e-14);
        ASSERT_V3(c[0].pb, dir ? 0.5 : 1, dir ? 1 : 0.5, 0, 1e-14);
        nwedge++;
      } else if (fabs(dx) >= wedge * (1 + 1e-9)) {
        /* a face: the distance from the plane through the edge falling by sl */
        want = (h + sl * fabs(dx)) * cos(ang) - rad;
        ck_assert_double_eq_tol(na ? ga : c[0].gap, want, 1e-14);
        ck_assert_int_eq(na, dx < 0);
      }
    }
    ck_assert_int_ge(nwedge, 3);
    /* behind the ridge (a point under the edge): no wedge point */
    mbsPose Ps = dir ? pose(0.5, 1.0, -0.2, NULL) : pose(1.0, 0.5, -0.2, NULL);
    ck_assert_int_eq(collide(&ball, &Ps, &b, &Pb, NULL, 0.1, c), 0);
  }
}
END_TEST

/* a box lying across a ridge between its nodes: the roof of test_patch_ridge (two patches
 * falling away from their shared edge by the slope 0.2), a cube of edge 0.1 turned by 0.3 rad
 * about the vertical, centred over the ridge's middle with its bottom face 1 mm below the
 * ridge. Its bottom edges along its x axis cross the ridge at y = 0.5 -+ 0.05 / cos 0.3: two
 * edge-edge points (feature >= 32, b's ridge xi = 0 and again eta = 0), gap -1e-3, the normal
 * straight down into the ridge, the box's point 1 mm under the ridge's; its edges along y
 * cross the ridge's line beyond their ends, its vertices clear the slopes by 5.6 mm and its
 * top edges face away. Without a neighbour (no ridge), on a flat joint and in a valley the
 * edges give nothing (the vertices carry the box) */
START_TEST(test_box_ridge_edges) {
  const double sl = 0.2, phi = 0.3;
  const double ra0[12] = {0, 0, -sl, 1, 0, 0, 1, 1, 0, 0, 1, -sl};
  const double rb0[12] = {1, 0, 0, 2, 0, -sl, 2, 1, -sl, 1, 1, 0};
  const double ra1[12] = {0, 0, -sl, 1, 0, -sl, 1, 1, 0, 0, 1, 0};
  const double rb1[12] = {0, 1, 0, 1, 1, 0, 1, 2, -sl, 0, 2, -sl};
  mbsShape box = shape(MBS_SHAPE_BOX, 0.05, 0.05, 0.05);
  mbsContactPoint c[CAP];
  for (int dir = 0; dir < 2; dir++) {
    for (int kind = 0; kind < 4; kind++) { /* ridge, no neighbour, flat, valley */
      double ra[12], rb[12];
      memcpy(ra, dir ? ra1 : ra0, sizeof(ra));
      memcpy(rb, dir ? rb1 : rb0, sizeof(rb));
      for (int k = 0; k < 4; k++) {
        double f = kind == 2 ? 0.0 : kind == 3 ? -1.0 : 1.0;
        if (ra[3 * k + 2] != 0.0) {
          ra[3 * k + 2] *= f;
        }
        if (rb[3 * k + 2] != 0.0) {
          rb[3 * k + 2] *= f;
        }
      }
      mbsPose Pb;
      mbsShape b = patch_shape(rb, 3, &Pb);
      if (kind != 1) {
        b.nbr[dir][0] = b.nbr[dir][1] = 1;
        memcpy(Pb.corner + 12 * (1 + dir), ra, 12 * sizeof(double));
      }
      double R[9];
      rot(R, 0, 0, 1, dir ? phi + PI / 2 : phi);
      mbsPose Px = dir ? pose(0.5, 1.0, 0.05 - 1e-3, R) : pose(1.0, 0.5, 0.05 - 1e-3, R);
      int n = collide(&box, &Px, &b, &Pb, NULL, 1e-3, c), ne = 0;
      for (int i = 0; i < n; i++) {
        if (c[i].feature < 32) {
          continue;
        }
        ne++;
        ck_assert_int_eq(kind, 0);
        double y = 0.5 + (c[i].pb[dir ? 0 : 1] > 0.5 ? 1 : -1) * 0.05 / cos(phi);
        ck_assert_double_eq_tol(c[i].gap, -1e-3, 1e-15);
        ASSERT_V3(c[i].n, 0, 0, -1, 1e-14);
        ASSERT_V3(c[i].pb, dir ? y : 1, dir ? 1 : y, 0, 1e-14);
        ASSERT_V3(c[i].pa, dir ? y : 1, dir ? 1 : y, -1e-3, 1e-14);
      }
      ck_assert_msg(ne == (kind == 0 ? 2 : 0), "dir %d, kind %d: %d edge points", dir, kind, ne);
      if (kind == 0) {
        ck_assert_int_eq(n, 2); /* the vertices clear the slopes */
      }
    }
  }
}
END_TEST

START_TEST(test_unsupported_pairs) {
  mbsShapeKind kinds[] = {MBS_SHAPE_SPHERE, MBS_SHAPE_BOX,   MBS_SHAPE_CAPSULE,
                          MBS_SHAPE_POINTS, MBS_SHAPE_PLANE, MBS_SHAPE_RING};
  mbsPose P = pose(0, 0, 0, NULL);
  mbsContactPoint c[CAP];
  int nsupported = 0;
  for (int i = 0; i < 6; i++) {
    for (int j = 0; j < 6; j++) {
      mbsShape a = shape(kinds[i], 0.5, 0.5, 0.5), b = shape(kinds[j], 0.5, 0.5, 0.5);
      int r = mbs_collide(&a, &P, &b, &P, PTS, 0.1, c, CAP);
      if (mbs_collide_supported(kinds[i], kinds[j])) {
        ck_assert_int_ge(r, 0);
        ck_assert_int_gt(mbs_collide_max(&a, &b), 0);
        nsupported++;
      } else {
        ck_assert_int_eq(r, -1);
        ck_assert_int_eq(mbs_collide_max(&a, &b), 0);
      }
    }
  }
  ck_assert_int_eq(nsupported, 2 * 14 - 3); /* 14 pairs, 3 of one kind (patches apart) */
  mbsShape p1 = shape(MBS_SHAPE_PLANE, 0, 0, 0), p2 = shape(MBS_SHAPE_POINTS, 0, 0, 0);
  ck_assert_int_eq(mbs_collide(&p1, &P, &p1, &P, NULL, 1, c, CAP), -1);
  ck_assert_int_eq(mbs_collide(&p2, &P, &p2, &P, PTS, 1, c, CAP), -1);
}
END_TEST

/* ---- poses on a compiled model ---- */

static const char *POSE_DECK =
    "mbsim: 1\n"
    "title: poses\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - {name: die, type: rigid, shape: {box: [0.2, 0.4, 0.6]}, density: 1000,"
    " position: [1, 2, 3], orientation: {axis: [0, 0.6, 0.8], angle: 0.7}}\n"
    "  - {name: bob, type: point, mass: 0.5, position: [3, 0, -1]}\n"
    "  - {name: base, type: rigid, shape: {box: [1, 1, 1]}, density: 1.0,"
    " position: [0, 0, -2], fixed: true}\n"
    "solver: {integrator: em, dt: 1.0e-3, t_end: 0.01}\n";

START_TEST(test_shape_pose) {
  mbsDeck deck;
  mbsError err;
  memset(&deck, 0, sizeof(deck));
  ck_assert_msg(
      mbs_deck_load_text(&deck, "pose.yaml", POSE_DECK, strlen(POSE_DECK), NULL, 0, &err) == MBS_OK,
      "%s", err.msg);
  mbsModel *m = mbs_model_compile(&deck, &err);
  ck_assert_msg(m != NULL, "%s", err.msg);
  double Rb[9], C[9];
  rot(Rb, 0, 0.6, 0.8, 0.7);
  rot(C, 1, -1, 2, 0.5); /* the shape's axes in the body's */
  mbsShape s = shape(MBS_SHAPE_BOX, 0.1, 0.1, 0.1);
  s.body = 0;
  s.attach = m->body_attach[0];
  s.c[0] = 0.1;
  s.c[1] = -0.2;
  s.c[2] = 0.3;
  memcpy(s.C, C, sizeof(C));
  /* at t = 0: centre phi0 + Rb c, axes Rb C (the deck's rotation, not the model's) */
  mbsPose P;
  mbs_shape_pose(m, &s, m->q0, &P);
  const double *phi = m->q0 + 3 * m->body_node[0];
  ASSERT_V3(phi, 1, 2, 3, 1e-12);
  double x[3];
  for (int r = 0; r < 3; r++) {
    x[r] = phi[r] + Rb[3 * r] * s.c[0] + Rb[3 * r + 1] * s.c[1] + Rb[3 * r + 2] * s.c[2];
  }
  ASSERT_V3V(P.x, x, 1e-12);
  double RC[9];
  matmul(RC, Rb, C);
  for (int i = 0; i < 9; i++) {
    ck_assert_double_eq_tol(P.R[i], RC[i], 1e-12);
  }
  /* at a moved configuration (directors no longer orthonormal): the frame point and C^j_i d_j */
  double *q = malloc((size_t)m->nq * sizeof(double));
  ck_assert_ptr_nonnull(q);
  unsigned seed = 99u;
  for (int i = 0; i < m->nq; i++) {
    seed = seed * 1103515245u + 12345u;
    q[i] = m->q0[i] + 0.1 * ((double)(seed >> 8) / 16777216.0 - 0.5);
  }
  mbs_shape_pose(m, &s, q, &P);
  mbs_attach_point(m, s.attach, s.c, q, x);
  ASSERT_V3V(P.x, x, 0);
  const double *d = q + 3 * (m->body_node[0] + 1);
  for (int r = 0; r < 3; r++) {
    for (int i = 0; i < 3; i++) {
      double want = 0;
      for (int j = 0; j < 3; j++) {
        want += C[3 * j + i] * d[3 * j + r];
      }
      ck_assert_double_eq_tol(P.R[3 * r + i], want, 1e-15);
    }
  }
  /* a point mass: its position, world axes C */
  s.body = 1;
  s.attach = m->body_attach[1];
  mbs_shape_pose(m, &s, q, &P);
  ASSERT_V3V(P.x, q + 3 * m->body_node[1], 0);
  ck_assert_mem_eq(P.R, C, sizeof(C));
  /* a fixed body and the ground: c and C are world */
  for (int k = 0; k < 2; k++) {
    s.body = k ? 2 : -1;
    s.attach = k ? m->body_attach[2] : MBS_ATTACH_GROUND_ID;
    mbs_shape_pose(m, &s, q, &P);
    ASSERT_V3V(P.x, s.c, 0);
    ck_assert_mem_eq(P.R, C, sizeof(C));
  }
  free(q);
  mbs_model_destroy(m);
  mbs_deck_free(&deck);
}
END_TEST

/* ---- broad phase ---- */

#define NB 60 /* spheres, boxes and capsules: 0-9 on the ground, 10-59 on bodies */
#define NPL 2 /* planes */
#define NS (NB + NPL)
#define NE 3 /* contacts entries */

typedef struct {
  mbsModel m;
  mbsShape shape[NS];
  mbsContactSpec spec[NE];
  int member0[NS + 1], mcontact[NS * NE], mside[NS * NE];
  int attach_node[1];
} broadModel;

static unsigned lcg(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static double unit(unsigned *s) {
  return (double)lcg(s) / 16777216.0;
}

/* shapes on one owner each but 40-43 (one body), the ground's fixed, each in some of three
 * entries on a random side (or both) */
static void broad_model(broadModel *bm, unsigned *seed) {
  memset(bm, 0, sizeof(*bm));
  for (int i = 0; i < NB; i++) {
    double r = 0.05 + 0.25 * unit(seed);
    bm->shape[i] = i % 3 == 0   ? shape(MBS_SHAPE_SPHERE, r, 0, 0)
                   : i % 3 == 1 ? shape(MBS_SHAPE_BOX, 0.6 * r, 0.5 * r, 0.4 * r)
                                : shape(MBS_SHAPE_CAPSULE, 0.3 * r, r, 0);
    bm->shape[i].owner = i >= 40 && i < 44 ? 40 : i;
    bm->shape[i].fixed = i < 10;
  }
  for (int i = 0; i < NPL; i++) {
    bm->shape[NB + i] = shape(MBS_SHAPE_PLANE, 0, 0, 0);
    bm->shape[NB + i].owner = -1;
    bm->shape[NB + i].fixed = 1;
  }
  double margins[NE] = {0.0, 0.01, 0.05};
  for (int i = 0; i < NE; i++) {
    bm->spec[i].margin = margins[i];
  }
  int n = 0;
  for (int i = 0; i < NS; i++) {
    bm->member0[i] = n;
    for (int e = 0; e < NE; e++) {
      if (unit(seed) < 0.6) {
        bm->mcontact[n] = e;
        bm->mside[n++] = 1 + (int)(lcg(seed) % 3);
      }
    }
    bm->shape[i].paired = 1;
  }
  bm->member0[NS] = n;
  bm->attach_node[0] = -1;
  bm->m.nshape = NS;
  bm->m.shape = bm->shape;
  bm->m.ncontact = NE;
  bm->m.contact = bm->spec;
  bm->m.nmember = n;
  bm->m.shape_member = bm->member0;
  bm->m.member_contact = bm->mcontact;
  bm->m.member_side = bm->mside;
  bm->m.ncontact_paired = NE;
  bm->m.attach_node = bm->attach_node;
}

/* the entry of (a, b) by the rule itself: the first entry with a and b on opposite sides */
static int brute_entry(const broadModel *bm, int a, int b) {
  const mbsShape *sa = &bm->shape[a], *sb = &bm->shape[b];
  if (a == b || sa->owner == sb->owner || (sa->fixed && sb->fixed)) {
    return -1;
  }
  for (int e = 0; e < NE; e++) {
    int ma = 0, mb = 0;
    for (int k = bm->member0[a]; k < bm->member0[a + 1]; k++) {
      ma |= bm->mcontact[k] == e ? bm->mside[k] : 0;
    }
    for (int k = bm->member0[b]; k < bm->member0[b + 1]; k++) {
      mb |= bm->mcontact[k] == e ? bm->mside[k] : 0;
    }
    if (((ma & 1) && (mb & 2)) || ((ma & 2) && (mb & 1))) {
      return e;
    }
  }
  return -1;
}

/* a random rotation (a unit quaternion) */
static void random_rotation(double R[9], unsigned *seed) {
  double q[4], n = 0.0;
  for (int i = 0; i < 4; i++) {
    q[i] = unit(seed) - 0.5;
    n += q[i] * q[i];
  }
  n = sqrt(n);
  double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                 2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  memcpy(R, M, sizeof(M));
}

/* Every pair whose narrow phase finds a point below its entry's margin is a candidate, with
 * the entry of the rule; the candidates are sorted, each once, all of some entry, their
 * bounding spheres (a plane: the distance) within the margin; the result depends on the poses
 * alone (a fresh broad phase gives the same); and no table of pairs: the planes' pairs come
 * from the distance, the scene is crowded */
START_TEST(test_broad_phase) {
  unsigned seed = 4242u;
  broadModel bm;
  broad_model(&bm, &seed);
  mbsModel *m = &bm.m;
  mbsError err;
  mbsBroad *bp = mbs_broad_create(m, &err);
  ck_assert_ptr_nonnull(bp);
  mbsPose poses[NS];
  mbsContactPoint pts[128];
  long checked = 0, found = 0, touching = 0;
  for (int config = 0; config < 40; config++) {
    /* a scene stretched along a changing axis, then small motions of it; the planes tilted */
    double ext[3] = {1.0 + 2 * unit(&seed), 1.0 + 2 * unit(&seed), 0.5 + unit(&seed)};
    for (int i = 0; i < NS; i++) {
      double R[9];
      random_rotation(R, &seed);
      poses[i] = pose(ext[0] * unit(&seed), ext[1] * unit(&seed), ext[2] * unit(&seed), R);
      poses[i].half = bm.shape[i].kind == MBS_SHAPE_CAPSULE ? bm.shape[i].size[1] : 0.0;
    }
    for (int step = 0; step < 10; step++) {
      const mbsShapePair *got = NULL;
      int n = mbs_broad_pairs(bp, m, poses, NULL, &got);
      ck_assert_int_ge(n, 0);
      for (int k = 0; k < n; k++) {
        const mbsShapePair *p = &got[k];
        ck_assert_int_lt(p->a, p->b);
        ck_assert_int_eq(p->spec, brute_entry(&bm, p->a, p->b));
        ck_assert_int_eq(p->spec, mbs_contact_pair_entry(m, p->b, p->a));
        ck_assert(k == 0 || mbs_shape_pair_cmp(&got[k - 1], p) < 0);
        /* pruned: within reach of the bounding spheres (a plane: of its distance) */
        const double *xa = poses[p->a].x, *xb = poses[p->b].x;
        double margin = bm.spec[p->spec].margin;
        if (p->b >= NB) {
          double h = (xa[0] - xb[0]) * poses[p->b].R[2] + (xa[1] - xb[1]) * poses[p->b].R[5] +
                     (xa[2] - xb[2]) * poses[p->b].R[8];
          ck_assert(h < bm.shape[p->a].radius + margin + 1e-9);
        } else {
          double dx = xa[0] - xb[0], dy = xa[1] - xb[1], dz = xa[2] - xb[2];
          double reach = bm.shape[p->a].radius + bm.shape[p->b].radius + margin + 1e-9;
          ck_assert(dx * dx + dy * dy + dz * dz < reach * reach);
        }
      }
      /* complete: every pair with a point below its margin */
      int k = 0;
      for (int a = 0; a < NS; a++) {
        for (int b = a + 1; b < NS; b++) {
          int e = brute_entry(&bm, a, b);
          if (e < 0) {
            continue;
          }
          int np = mbs_collide(&bm.shape[a], &poses[a], &bm.shape[b], &poses[b], NULL,
                               bm.spec[e].margin, pts, 128);
          ck_assert_int_ge(np, 0);
          while (k < n && (got[k].a < a || (got[k].a == a && got[k].b < b))) {
            k++;
          }
          if (np > 0) {
            ck_assert_msg(k < n && got[k].a == a && got[k].b == b,
                          "pair (%d, %d) touches but is no candidate", a, b);
            touching++;
          }
        }
      }
      /* the same from a fresh broad phase (the sweep's order from earlier calls is not seen) */
      mbsBroad *fresh = mbs_broad_create(m, &err);
      ck_assert_ptr_nonnull(fresh);
      const mbsShapePair *again = NULL;
      ck_assert_int_eq(mbs_broad_pairs(fresh, m, poses, NULL, &again), n);
      ck_assert_mem_eq(again, got, sizeof(*got) * (size_t)n);
      mbs_broad_destroy(fresh);
      checked++;
      found += n;
      for (int i = 0; i < NB; i++) {
        for (int c = 0; c < 3; c++) {
          poses[i].x[c] += 0.05 * (unit(&seed) - 0.5);
        }
      }
    }
  }
  ck_assert_int_gt(found, 20 * checked); /* the scenes are crowded: many pairs overlap */
  ck_assert_int_gt(touching, 5 * checked);
  mbs_broad_destroy(bp);
}
END_TEST

START_TEST(test_broad_empty) {
  /* no shapes, and pairs with a plane only: the shapes below it and within the margin */
  mbsModel m;
  memset(&m, 0, sizeof(m));
  mbsError err;
  mbsBroad *bp = mbs_broad_create(&m, &err);
  ck_assert_ptr_nonnull(bp);
  const mbsShapePair *out = NULL;
  ck_assert_int_eq(mbs_broad_pairs(bp, &m, NULL, NULL, &out), 0);
  mbs_broad_destroy(bp);
  mbs_broad_destroy(NULL);
  mbsShape sh[4] = {shape(MBS_SHAPE_SPHERE, 1, 0, 0), shape(MBS_SHAPE_BOX, 1, 1, 1),
                    shape(MBS_SHAPE_SPHERE, 1, 0, 0), shape(MBS_SHAPE_PLANE, 0, 0, 0)};
  int member0[5] = {0, 1, 2, 3, 4}, mcontact[4] = {0, 0, 0, 0}, mside[4] = {1, 1, 1, 2};
  int attach_node[1] = {-1};
  for (int i = 0; i < 4; i++) {
    sh[i].owner = i < 3 ? i : -1;
    sh[i].fixed = i == 3;
    sh[i].paired = 1;
  }
  mbsContactSpec spec;
  memset(&spec, 0, sizeof(spec));
  spec.margin = 0.01;
  m.nshape = 4;
  m.shape = sh;
  m.ncontact = 1;
  m.contact = &spec;
  m.nmember = 4;
  m.shape_member = member0;
  m.member_contact = mcontact;
  m.member_side = mside;
  m.ncontact_paired = 1;
  m.attach_node = attach_node;
  bp = mbs_broad_create(&m, &err);
  ck_assert_ptr_nonnull(bp);
  /* the sphere far above, the box deep below, the second sphere 5 mm above (its gap within
   * the margin); the spheres and the box on one side: no pairs among them */
  mbsPose poses[4] = {pose(0, 0, 100, NULL), pose(50, 0, -100, NULL), pose(3, 0, 1.005, NULL),
                      pose(0, 0, 0, NULL)};
  ck_assert_int_eq(mbs_broad_pairs(bp, &m, poses, NULL, &out), 2);
  ck_assert(out[0].a == 1 && out[0].b == 3 && out[0].spec == 0);
  ck_assert(out[1].a == 2 && out[1].b == 3 && out[1].spec == 0);
  /* beyond the margin: gone */
  poses[2].x[2] = 1.02;
  ck_assert_int_eq(mbs_broad_pairs(bp, &m, poses, NULL, &out), 1);
  mbs_broad_destroy(bp);
}
END_TEST

Suite *contact_geom_suite(void) {
  Suite *s = suite_create("contact_geom");
  TCase *tc = tcase_create("narrow");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_sphere_plane);
  tcase_add_test(tc, test_sphere_tilted_plane);
  tcase_add_test(tc, test_sphere_sphere);
  tcase_add_test(tc, test_sphere_box_regions);
  tcase_add_test(tc, test_box_plane_resting);
  tcase_add_test(tc, test_box_plane_tilted);
  tcase_add_test(tc, test_box_box_face_on_face);
  tcase_add_test(tc, test_box_box_rotated_45);
  tcase_add_test(tc, test_box_box_overlap_polygon);
  tcase_add_test(tc, test_box_box_edge_edge);
  tcase_add_test(tc, test_box_box_vertex_edge);
  tcase_add_test(tc, test_box_box_side_by_side_edges);
  tcase_add_test(tc, test_box_box_random);
  tcase_add_test(tc, test_box_box_vertex_on_face);
  tcase_add_test(tc, test_box_box_edge_cross_found);
  tcase_add_test(tc, test_capsule_plane);
  tcase_add_test(tc, test_capsule_capsule);
  tcase_add_test(tc, test_capsule_box);
  tcase_add_test(tc, test_points_plane);
  tcase_add_test(tc, test_points_box);
  tcase_add_test(tc, test_points_sphere);
  tcase_add_test(tc, test_sphere_capsule);
  tcase_add_test(tc, test_capsule_points);
  tcase_add_test(tc, test_capsule_ring);
  tcase_add_test(tc, test_patch_projection);
  tcase_add_test(tc, test_sphere_box_patch);
  tcase_add_test(tc, test_node_box_patch);
  tcase_add_test(tc, test_box_ridge_edges);
  tcase_add_test(tc, test_patch_edges);
  tcase_add_test(tc, test_patch_ridge);
  tcase_add_test(tc, test_unsupported_pairs);
  suite_add_tcase(s, tc);
  TCase *tm = tcase_create("model");
  tcase_set_timeout(tm, 60);
  tcase_add_test(tm, test_shape_pose);
  tcase_add_test(tm, test_broad_phase);
  tcase_add_test(tm, test_broad_empty);
  suite_add_tcase(s, tm);
  return s;
}
