/* broad.c: the broad phase. Which pairs of shapes may touch at a configuration, found without
 * a table of the pairs the contacts entries name (that table grows with the square of the
 * shapes). The bounded shapes: a sweep and prune along the axis where their centres spread
 * most, the shapes sorted by the lower end of their interval on that axis (insertion sort from
 * the previous call's order, nearly sorted when bodies move little), each against the ones
 * whose interval starts before its own ends; a pair whose boxes (along the world axes) and
 * bounding spheres come closer than the largest margin is looked up among the entries
 * (mbs_contact_pair_entry: the two shapes' memberships merged) and tested again with its own
 * entry's margin. The planes (unbounded): each against every bounded shape, by the distance
 * of the shape from the plane. The candidates are then sorted by (a, b): the order of the
 * sweep, which depends on earlier calls, never reaches the caller. Storage is linear in the
 * shapes and grows only when a configuration has more candidates than any before. */
#include <math.h>
#include <stdlib.h>

#include "mbsim/contact.h"

/* relative widening of every test, so that rounding never prunes a pair whose narrow phase
 * finds a point below the margin */
#define SLACK 1e-9

struct mbsBroad {
  int nshape;
  int *order; /* (nsweep) the bounded shapes in some pair, by lower end on the axis */
  int nsweep;
  int *plane; /* (nplane) the unbounded shapes (planes) in some pair */
  int nplane;
  double *lo, *hi;     /* (nshape) [m] interval on the sweep axis, hi widened by max_margin */
  double *half;        /* (nshape x 3) [m] half extents of the shape's box along the world axes,
                          widened by extra */
  double *rad;         /* (nshape) [m] its bounding sphere's radius (a beam segment's as it is
                          stretched now), widened by extra */
  mbsShapePair *found; /* (cap) the candidates of the last call */
  int cap;
  double max_margin; /* [m] the largest margin of any entry */
};

void mbs_broad_destroy(mbsBroad *bp) {
  if (!bp) {
    return;
  }
  free(bp->order);
  free(bp->plane);
  free(bp->lo);
  free(bp->hi);
  free(bp->half);
  free(bp->rad);
  free(bp->found);
  free(bp);
}

static void *alloc(size_t n, size_t size) {
  return malloc((n > 0 ? n : 1) * size);
}

mbsBroad *mbs_broad_create(const mbsModel *m, mbsError *err) {
  mbsBroad *bp = calloc(1, sizeof(*bp));
  if (!bp) {
    goto fail;
  }
  int ns = m->nshape;
  bp->nshape = ns;
  /* a few candidates per shape to start with (a pile's shape touches a handful) */
  bp->cap = 4 * ns + 64;
  bp->order = alloc((size_t)ns, sizeof(int));
  bp->plane = alloc((size_t)ns, sizeof(int));
  bp->lo = alloc((size_t)ns, sizeof(double));
  bp->hi = alloc((size_t)ns, sizeof(double));
  bp->half = alloc(3 * (size_t)ns, sizeof(double));
  bp->rad = alloc((size_t)ns, sizeof(double));
  bp->found = alloc((size_t)bp->cap, sizeof(mbsShapePair));
  if (!bp->order || !bp->plane || !bp->lo || !bp->hi || !bp->half || !bp->rad || !bp->found) {
    goto fail;
  }
  for (int e = 0; e < m->ncontact; e++) {
    bp->max_margin = fmax(bp->max_margin, m->contact[e].margin);
  }
  for (int s = 0; s < ns; s++) {
    if (!m->shape[s].paired) {
      continue;
    }
    if (isfinite(m->shape[s].radius)) {
      bp->order[bp->nsweep++] = s;
    } else {
      bp->plane[bp->nplane++] = s;
    }
  }
  return bp;
fail:
  mbs_broad_destroy(bp);
  mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                "out of memory for the contact broad phase (%d shapes)", m->nshape);
  return NULL;
}

/* [m] the half width of bounded shape s (pose p) along the unit direction n: the largest
 * n . (x - centre) over its points x */
static double support(const mbsShape *s, const mbsPose *p, const double n[3]) {
  switch (s->kind) {
    case MBS_SHAPE_SPHERE:
      return s->size[0];
    case MBS_SHAPE_BOX: {
      double h = 0.0;
      for (int i = 0; i < 3; i++) {
        h += fabs(n[0] * p->R[i] + n[1] * p->R[3 + i] + n[2] * p->R[6 + i]) * s->size[i];
      }
      return h;
    }
    case MBS_SHAPE_CAPSULE:
      return fabs(n[0] * p->R[2] + n[1] * p->R[5] + n[2] * p->R[8]) * p->half + s->size[0];
    case MBS_SHAPE_PATCH: { /* the patch lies in its corners' convex hull */
      double h = 0.0;
      for (int k = 0; k < 4; k++) {
        const double *r = p->corner + 3 * k;
        h = fmax(h, fabs(n[0] * (r[0] - p->x[0]) + n[1] * (r[1] - p->x[1]) +
                         n[2] * (r[2] - p->x[2])));
      }
      return h;
    }
    default: /* a point set: its bounding sphere */
      return s->radius;
  }
}

/* a candidate (lo, hi, entry) appended, the storage doubled when full; 0, or -1 out of memory */
static int push(mbsBroad *bp, int *nf, int a, int b, int spec) {
  if (*nf >= bp->cap) {
    int cap = bp->cap > 0 ? 2 * bp->cap : 64;
    mbsShapePair *grown = realloc(bp->found, (size_t)cap * sizeof(*grown));
    if (!grown) {
      return -1;
    }
    bp->found = grown;
    bp->cap = cap;
  }
  bp->found[(*nf)++] = (mbsShapePair){a < b ? a : b, a < b ? b : a, spec};
  return 0;
}

/* the pair of bounded shapes si, sj, whose intervals on the sweep axis overlap: its boxes and
 * bounding spheres within the largest margin, then its entry and that entry's margin; 1 if
 * it is a candidate (*spec its entry), else 0 */
static int bounded_pair(const mbsBroad *bp, const mbsModel *m, const mbsPose *poses, int si, int sj,
                        int *spec) {
  const double *xi = poses[si].x, *xj = poses[sj].x;
  const double *hi = bp->half + 3 * si, *hj = bp->half + 3 * sj;
  double d[3], dist2 = 0.0;
  for (int c = 0; c < 3; c++) {
    d[c] = fabs(xi[c] - xj[c]);
    double reach = hi[c] + hj[c] + bp->max_margin;
    if (d[c] > reach * (1 + SLACK)) {
      return 0;
    }
    dist2 += d[c] * d[c];
  }
  double ri = bp->rad[si], rj = bp->rad[sj];
  double reach = (ri + rj + bp->max_margin) * (1 + SLACK);
  if (dist2 >= reach * reach) {
    return 0;
  }
  int e = mbs_contact_pair_entry(m, si, sj);
  if (e < 0) {
    return 0;
  }
  double margin = m->contact[e].margin;
  if (margin < bp->max_margin) {
    reach = (ri + rj + margin) * (1 + SLACK);
    if (dist2 >= reach * reach) {
      return 0;
    }
    for (int c = 0; c < 3; c++) {
      if (d[c] > (hi[c] + hj[c] + margin) * (1 + SLACK)) {
        return 0;
      }
    }
  }
  *spec = e;
  return 1;
}

/* the bounded shapes against each other: 0, or -1 out of memory */
static int sweep(mbsBroad *bp, const mbsModel *m, const mbsPose *poses, const double *extra,
                 int *nf) {
  int ns = bp->nsweep;
  /* the axis of largest spread of the centres */
  double mean[3] = {0, 0, 0}, var[3] = {0, 0, 0};
  for (int i = 0; i < ns; i++) {
    for (int c = 0; c < 3; c++) {
      mean[c] += poses[bp->order[i]].x[c];
    }
  }
  for (int c = 0; c < 3; c++) {
    mean[c] /= ns;
  }
  for (int i = 0; i < ns; i++) {
    for (int c = 0; c < 3; c++) {
      double dc = poses[bp->order[i]].x[c] - mean[c];
      var[c] += dc * dc;
    }
  }
  int ax = var[1] > var[0] ? 1 : 0;
  if (var[2] > var[ax]) {
    ax = 2;
  }
  /* each shape's box (widened by how far it may move) and its interval on the axis (the
   * upper end widened by the largest margin and the slack), sorted by the lower end */
  for (int i = 0; i < ns; i++) {
    int s = bp->order[i];
    const mbsShape *sh = &m->shape[s];
    double ex = extra ? extra[s] : 0.0;
    bp->rad[s] = (sh->kind == MBS_SHAPE_PATCH
                      ? poses[s].half
                      : (sh->segment ? fmax(sh->radius, sh->size[0] + poses[s].half) : sh->radius)) +
                 ex;
    for (int c = 0; c < 3; c++) {
      const double n[3] = {c == 0, c == 1, c == 2};
      bp->half[3 * s + c] = support(sh, &poses[s], n) + ex;
    }
    double x = poses[s].x[ax], h = bp->half[3 * s + ax];
    bp->lo[s] = x - h;
    bp->hi[s] = x + h + bp->max_margin;
    bp->hi[s] += SLACK * (fabs(x) + h + bp->max_margin);
  }
  for (int i = 1; i < ns; i++) {
    int s = bp->order[i], j = i;
    double key = bp->lo[s];
    while (j > 0 && bp->lo[bp->order[j - 1]] > key) {
      bp->order[j] = bp->order[j - 1];
      j--;
    }
    bp->order[j] = s;
  }
  /* sweep: each shape against those starting before it ends */
  for (int i = 0; i < ns; i++) {
    int si = bp->order[i];
    double end = bp->hi[si];
    for (int j = i + 1; j < ns && bp->lo[bp->order[j]] <= end; j++) {
      int sj = bp->order[j], spec;
      if (bounded_pair(bp, m, poses, si, sj, &spec) && push(bp, nf, si, sj, spec) < 0) {
        return -1;
      }
    }
  }
  return 0;
}

/* each plane against every bounded shape: the shape's support towards the plane reaches
 * within the entry's margin (a plane that moves, which no deck has today, against all) */
static int planes(mbsBroad *bp, const mbsModel *m, const mbsPose *poses, const double *extra,
                  int *nf) {
  for (int k = 0; k < bp->nplane; k++) {
    int p = bp->plane[k];
    const mbsPose *pp = &poses[p];
    const double nrm[3] = {pp->R[2], pp->R[5], pp->R[8]}; /* axis 3, out of the solid */
    const double minus[3] = {-nrm[0], -nrm[1], -nrm[2]};
    int moves = m->attach_node[m->shape[p].attach] >= 0;
    double ep = extra ? extra[p] : 0.0;
    for (int i = 0; i < bp->nsweep; i++) {
      int s = bp->order[i];
      const double *x = poses[s].x;
      double h = 0.0, dist = 0.0, reach = 0.0;
      if (!moves) {
        /* the height of the shape's centre over the plane, against its reach below it */
        dist = nrm[0] * (x[0] - pp->x[0]) + nrm[1] * (x[1] - pp->x[1]) + nrm[2] * (x[2] - pp->x[2]);
        h = support(&m->shape[s], &poses[s], minus) + (extra ? extra[s] : 0.0) + ep;
        reach = h + bp->max_margin;
        if (dist > reach + SLACK * (fabs(dist) + reach)) {
          continue;
        }
      }
      int e = mbs_contact_pair_entry(m, s, p);
      if (e < 0) {
        continue;
      }
      reach = h + m->contact[e].margin;
      if (!moves && dist > reach + SLACK * (fabs(dist) + reach)) {
        continue;
      }
      if (push(bp, nf, s, p, e) < 0) {
        return -1;
      }
    }
  }
  return 0;
}

/* x before y: by a, then b */
static int before(const mbsShapePair *x, const mbsShapePair *y) {
  return x->a < y->a || (x->a == y->a && x->b < y->b);
}

/* ascending order in place (heap sort: no allocation, n log n) */
static void sift(mbsShapePair *p, int i, int n) {
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) {
      return;
    }
    if (c + 1 < n && before(&p[c], &p[c + 1])) {
      c++;
    }
    if (!before(&p[i], &p[c])) {
      return;
    }
    mbsShapePair t = p[i];
    p[i] = p[c];
    p[c] = t;
    i = c;
  }
}

static void sort_pairs(mbsShapePair *p, int n) {
  for (int i = n / 2 - 1; i >= 0; i--) {
    sift(p, i, n);
  }
  for (int i = n - 1; i > 0; i--) {
    mbsShapePair t = p[0];
    p[0] = p[i];
    p[i] = t;
    sift(p, 0, i);
  }
}

int mbs_broad_pairs(mbsBroad *bp, const mbsModel *m, const mbsPose *poses, const double *extra,
                    const mbsShapePair **out) {
  int nf = 0;
  if ((bp->nsweep > 1 && sweep(bp, m, poses, extra, &nf) < 0) ||
      planes(bp, m, poses, extra, &nf) < 0) {
    *out = bp->found;
    return -1;
  }
  sort_pairs(bp->found, nf);
  *out = bp->found;
  return nf;
}
