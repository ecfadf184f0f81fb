/* contact_geom.c: cost of the contact geometry (src/contact/), microseconds per call of the
 * narrow phase for resting pairs and of the broad phase for 50 dice on a floor in a 1 x 1 m
 * box. Not part of the build or the tests (no timing is asserted anywhere); build and run:
 *   make -s all && cc -O2 -Iinclude -Isrc scripts/bench/contact_geom.c build/libmbsim.a -lm \
 *     -o build/bench_contact_geom && build/bench_contact_geom */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mbsim/contact.h"
#include "../../tests/rotation.h"


static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static mbsShape make(mbsShapeKind kind, double s0, double s1, double s2) {
  mbsShape s;
  memset(&s, 0, sizeof(s));
  s.kind = kind;
  s.size[0] = s0;
  s.size[1] = s1;
  s.size[2] = s2;
  s.C[0] = s.C[4] = s.C[8] = 1;
  s.radius = kind == MBS_SHAPE_PLANE ? INFINITY : sqrt(s0 * s0 + s1 * s1 + s2 * s2);
  return s;
}

/* microseconds per mbs_collide of the pair (moved by 1e-15 each call so that nothing is
 * hoisted), and the point count */
static void time_pair(const char *what, const mbsShape *a, mbsPose pa, const mbsShape *b,
                      const mbsPose *pb) {
  mbsContactPoint c[256];
  int n = mbs_collide(a, &pa, b, pb, NULL, 1e-3, c, 256), calls = 100000;
  long total = 0;
  double t0 = now();
  for (int i = 0; i < calls; i++) {
    pa.x[0] += 1e-15;
    total += mbs_collide(a, &pa, b, pb, NULL, 1e-3, c, 256);
  }
  double t1 = now();
  printf("%-46s %2d points  %7.3f us/call  (%ld)\n", what, n, (t1 - t0) / calls * 1e6,
         total % 2);
}

int main(void) {
  double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, R[9];
  mbsShape die = make(MBS_SHAPE_BOX, 0.05, 0.05, 0.05), plane = make(MBS_SHAPE_PLANE, 0, 0, 0);
  mbsShape ball = make(MBS_SHAPE_SPHERE, 0.05, 0, 0), cap = make(MBS_SHAPE_CAPSULE, 0.02, 0.1, 0);
  mbsPose p0 = {{0, 0, 0}, {0}}, p1 = {{0.01, 0.02, 0.1 - 1e-5}, {0}};
  memcpy(p0.R, I, sizeof(I));
  memcpy(p1.R, I, sizeof(I));
  time_pair("box-box resting face on face, aligned", &die, p0, &die, &p1);
  rot(p1.R, 0, 0, 1, 0.3);
  time_pair("box-box resting face on face, turned 0.3 rad", &die, p0, &die, &p1);
  p1.x[2] += 0.01;
  time_pair("box-box 1 cm apart (separating axis)", &die, p0, &die, &p1);
  p1.x[0] = 1.0;
  time_pair("box-box far apart (bounding spheres)", &die, p0, &die, &p1);
  mbsPose fl = {{0, 0, -0.05 + 1e-5}, {0}};
  memcpy(fl.R, I, sizeof(I));
  time_pair("box-plane resting", &die, p0, &plane, &fl);
  rot(R, 1, 2, 3, 0.7);
  memcpy(p0.R, R, sizeof(R));
  time_pair("box-plane tilted (one vertex)", &die, p0, &plane, &fl);
  mbsPose ps = {{0.01, 0.02, 0.1}, {0}};
  memcpy(ps.R, I, sizeof(I));
  time_pair("sphere-box", &ball, ps, &die, &p0);
  mbsPose pc = {{0, 0, 0.04}, {0}};
  rot(pc.R, 0, 1, 0, 1.5707963267948966);
  time_pair("capsule-capsule crossing", &cap, p0, &cap, &pc);

  /* broad phase: 50 dice on a jittered grid on the floor of a 1 x 1 m box (5 ground planes),
   * every die with every other and with each plane */
  int nd = 50, ns = nd + 5, np = 0;
  mbsShape *sh = calloc((size_t)ns, sizeof(*sh));
  mbsPose *P = calloc((size_t)ns, sizeof(*P));
  mbsShapePair *pr = calloc((size_t)(nd * ns), sizeof(*pr));
  int *member0 = calloc((size_t)ns + 1, sizeof(int)), *mc = calloc((size_t)ns, sizeof(int));
  int *mside = calloc((size_t)ns, sizeof(int)), attach_node[1] = {-1};
  if (!sh || !P || !pr || !member0 || !mc || !mside) {
    return 1;
  }
  unsigned seed = 1u;
  for (int i = 0; i < ns; i++) {
    sh[i] = i < nd ? die : plane;
    sh[i].owner = i < nd ? i : -1;
    sh[i].fixed = i >= nd;
    sh[i].paired = 1;
    /* one entry: the dice on both sides, the planes on the second */
    member0[i + 1] = i + 1;
    mside[i] = i < nd ? MBS_MEMBER_FIRST | MBS_MEMBER_SECOND : MBS_MEMBER_SECOND;
    memcpy(P[i].R, I, sizeof(I));
    if (i < nd) {
      seed = seed * 1103515245u + 12345u;
      P[i].x[0] = 0.1 + 0.12 * (i % 7) + 0.02 * ((double)(seed >> 8) / 16777216.0);
      P[i].x[1] = 0.1 + 0.12 * ((i / 7) % 7) + 0.02 * ((double)(seed >> 16) / 65536.0);
      P[i].x[2] = 0.05 + 0.11 * (i / 49);
    }
  }
  for (int i = 0; i < nd; i++) {
    for (int j = i + 1; j < ns; j++) {
      pr[np++] = (mbsShapePair){i, j, 0};
    }
  }
  mbsContactSpec spec;
  memset(&spec, 0, sizeof(spec));
  spec.margin = 1e-3;
  mbsModel m;
  memset(&m, 0, sizeof(m));
  m.nshape = ns;
  m.shape = sh;
  m.nmember = ns;
  m.shape_member = member0;
  m.member_contact = mc;
  m.member_side = mside;
  m.ncontact_paired = 1;
  m.attach_node = attach_node;
  m.ncontact = 1;
  m.contact = &spec;
  mbsBroad *bp = mbs_broad_create(&m, NULL);
  if (!bp) {
    return 1;
  }
  int calls = 20000, n = 0;
  double t0 = now();
  for (int it = 0; it < calls; it++) {
    P[it % nd].x[0] += 1e-9;
    const mbsShapePair *out = NULL;
    n = mbs_broad_pairs(bp, &m, P, NULL, &out);
  }
  double t1 = now();
  printf("broad phase, 50 dice on a floor, %d pairs: %d candidates, %.2f us/call\n", np, n,
         (t1 - t0) / calls * 1e6);
  /* against testing every pair's bounding spheres */
  t0 = now();
  for (int it = 0; it < calls; it++) {
    P[it % nd].x[0] += 1e-9;
    n = 0;
    for (int k = 0; k < np; k++) {
      const double *xa = P[pr[k].a].x, *xb = P[pr[k].b].x;
      double dx = xa[0] - xb[0], dy = xa[1] - xb[1], dz = xa[2] - xb[2];
      double reach = sh[pr[k].a].radius + sh[pr[k].b].radius + spec.margin;
      n += !(dx * dx + dy * dy + dz * dz >= reach * reach);
    }
  }
  t1 = now();
  printf("every pair tested instead: %d candidates, %.2f us/call\n", n, (t1 - t0) / calls * 1e6);
  mbs_broad_destroy(bp);
  free(sh);
  free(P);
  free(pr);
  free(member0);
  free(mc);
  free(mside);
  return 0;
}
