/* broad.c: the broad phase. Which of the model's candidate pairs of shapes may touch at a
 * configuration: their bounding spheres (about the shapes' centres, radius mbsShape.radius)
 * come closer than the pair's margin. A sweep and prune along the axis where the centres
 * spread most: the shapes sorted by the lower end of their interval on that axis (insertion
 * sort from the previous step's order, nearly sorted when bodies move little), then each
 * shape against the ones whose interval starts before its own ends, looked up among the
 * model's pairs by a per-shape index built at creation. Pairs with a plane (unbounded) are
 * always candidates. Nothing is allocated per call. */
#include <math.h>
#include <stdlib.h>

#include "mbsim/contact.h"

struct mbsBroad {
  int nshape;
  /* the pairs of bounded shapes by their lower shape index: entries start[i] .. start[i+1]
   * have lower shape i, sorted by the higher one (key_hi), then by pair index (key_pair) */
  int *start;    /* (nshape + 1) */
  int *key_hi;   /* (nkey) */
  int *key_pair; /* (nkey) */
  int nkey;
  int *always; /* (nalways) pairs with an unbounded shape (a plane), ascending */
  int nalways;
  int *order; /* (nsweep) the bounded shapes of any pair, by lower end along the axis */
  int nsweep;
  double *lo, *hi;   /* (nshape) [m] interval on the axis, hi inflated by max_margin */
  int *found;        /* (npair) pairs found by the sweep */
  double max_margin; /* [m] the largest margin of any pair */
};

void mbs_broad_destroy(mbsBroad *bp) {
  if (!bp) {
    return;
  }
  free(bp->start);
  free(bp->key_hi);
  free(bp->key_pair);
  free(bp->always);
  free(bp->order);
  free(bp->lo);
  free(bp->hi);
  free(bp->found);
  free(bp);
}

static void *alloc(size_t n, size_t size) {
  return malloc((n > 0 ? n : 1) * size);
}

mbsBroad *mbs_broad_create(const mbsModel *m, mbsError *err) {
  mbsBroad *bp = calloc(1, sizeof(*bp));
  int *mark = NULL;
  if (!bp) {
    goto fail;
  }
  int ns = m->nshape, np = m->npair;
  bp->nshape = ns;
  bp->start = calloc((size_t)ns + 1, sizeof(int));
  bp->key_hi = alloc((size_t)np, sizeof(int));
  bp->key_pair = alloc((size_t)np, sizeof(int));
  bp->always = alloc((size_t)np, sizeof(int));
  bp->order = alloc((size_t)ns, sizeof(int));
  bp->lo = alloc((size_t)ns, sizeof(double));
  bp->hi = alloc((size_t)ns, sizeof(double));
  bp->found = alloc((size_t)np, sizeof(int));
  mark = calloc((size_t)ns + 1, sizeof(int));
  if (!bp->start || !bp->key_hi || !bp->key_pair || !bp->always || !bp->order || !bp->lo ||
      !bp->hi || !bp->found || !mark) {
    goto fail;
  }
  /* count the bounded pairs per lower shape; the others are always candidates */
  for (int k = 0; k < np; k++) {
    const mbsShapePair *p = m->pair + k;
    double margin = m->contact[p->spec].margin;
    if (margin > bp->max_margin) {
      bp->max_margin = margin;
    }
    if (!isfinite(m->shape[p->a].radius) || !isfinite(m->shape[p->b].radius)) {
      bp->always[bp->nalways++] = k;
      continue;
    }
    bp->start[(p->a < p->b ? p->a : p->b) + 1]++;
    mark[p->a] = mark[p->b] = 1;
  }
  for (int i = 0; i < ns; i++) {
    bp->start[i + 1] += bp->start[i];
    if (mark[i]) {
      bp->order[bp->nsweep++] = i;
    }
  }
  bp->nkey = bp->start[ns];
  /* fill (mark: the next free entry of each lower shape), then sort each run by higher shape */
  for (int i = 0; i < ns; i++) {
    mark[i] = bp->start[i];
  }
  for (int k = 0; k < np; k++) {
    const mbsShapePair *p = m->pair + k;
    if (!isfinite(m->shape[p->a].radius) || !isfinite(m->shape[p->b].radius)) {
      continue;
    }
    int lo = p->a < p->b ? p->a : p->b, hi = p->a < p->b ? p->b : p->a;
    bp->key_hi[mark[lo]] = hi;
    bp->key_pair[mark[lo]++] = k;
  }
  for (int i = 0; i < ns; i++) {
    for (int e = bp->start[i] + 1; e < bp->start[i + 1]; e++) {
      int h = bp->key_hi[e], k = bp->key_pair[e], f = e;
      while (f > bp->start[i] &&
             (bp->key_hi[f - 1] > h || (bp->key_hi[f - 1] == h && bp->key_pair[f - 1] > k))) {
        bp->key_hi[f] = bp->key_hi[f - 1];
        bp->key_pair[f] = bp->key_pair[f - 1];
        f--;
      }
      bp->key_hi[f] = h;
      bp->key_pair[f] = k;
    }
  }
  free(mark);
  return bp;
fail:
  free(mark);
  mbs_broad_destroy(bp);
  mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                "out of memory for the contact broad phase (%d "
                "shapes, %d pairs)",
                m->nshape, m->npair);
  return NULL;
}

/* the pairs of shapes lo < hi whose spheres overlap, appended to found */
static int test_pair(const mbsBroad *bp, const mbsModel *m, const mbsPose *poses,
                     const double *extra, int lo, int hi, int nf) {
  /* first entry of lower shape lo with higher shape hi */
  int l = bp->start[lo], r = bp->start[lo + 1];
  while (l < r) {
    int mid = l + (r - l) / 2;
    if (bp->key_hi[mid] < hi) {
      l = mid + 1;
    } else {
      r = mid;
    }
  }
  for (int e = l; e < bp->start[lo + 1] && bp->key_hi[e] == hi; e++) {
    int k = bp->key_pair[e];
    const mbsShapePair *p = m->pair + k;
    const double *xa = poses[p->a].x, *xb = poses[p->b].x;
    double dx = xa[0] - xb[0], dy = xa[1] - xb[1], dz = xa[2] - xb[2];
    double reach = m->shape[p->a].radius + m->shape[p->b].radius + m->contact[p->spec].margin;
    if (extra) {
      reach += extra[p->a] + extra[p->b];
    }
    if (dx * dx + dy * dy + dz * dz < reach * reach) {
      bp->found[nf++] = k;
    }
  }
  return nf;
}

/* ascending order in place (heap sort: no allocation, n log n) */
static void sift(int *a, int i, int n) {
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) {
      return;
    }
    if (c + 1 < n && a[c + 1] > a[c]) {
      c++;
    }
    if (a[i] >= a[c]) {
      return;
    }
    int t = a[i];
    a[i] = a[c];
    a[c] = t;
    i = c;
  }
}

static void sort_ints(int *a, int n) {
  for (int i = n / 2 - 1; i >= 0; i--) {
    sift(a, i, n);
  }
  for (int i = n - 1; i > 0; i--) {
    int t = a[0];
    a[0] = a[i];
    a[i] = t;
    sift(a, 0, i);
  }
}

int mbs_broad_pairs(mbsBroad *bp, const mbsModel *m, const mbsPose *poses, const double *extra,
                    int *out, int max) {
  int ns = bp->nsweep, nf = 0;
  if (ns > 1) {
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
        double d = poses[bp->order[i]].x[c] - mean[c];
        var[c] += d * d;
      }
    }
    int ax = var[1] > var[0] ? 1 : 0;
    if (var[2] > var[ax]) {
      ax = 2;
    }
    /* intervals (the upper end inflated by the largest margin, and by a few roundings so that
     * the sweep never prunes a pair the exact test keeps), sorted by their lower end */
    for (int i = 0; i < ns; i++) {
      int s = bp->order[i];
      double x = poses[s].x[ax], r = m->shape[s].radius + (extra ? extra[s] : 0.0);
      bp->lo[s] = x - r;
      bp->hi[s] = x + r + bp->max_margin;
      bp->hi[s] += 1e-12 * (fabs(bp->hi[s]) + fabs(bp->lo[s]) + r);
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
      const double *xi = poses[si].x;
      double ri = m->shape[si].radius + bp->max_margin + (extra ? extra[si] : 0.0);
      for (int j = i + 1; j < ns && bp->lo[bp->order[j]] <= end; j++) {
        int sj = bp->order[j];
        /* the spheres with the largest margin first (cheap), then the pairs' own */
        const double *xj = poses[sj].x;
        double dx = xi[0] - xj[0], dy = xi[1] - xj[1], dz = xi[2] - xj[2];
        double reach = (ri + m->shape[sj].radius + (extra ? extra[sj] : 0.0)) * (1 + 1e-12);
        if (dx * dx + dy * dy + dz * dz >= reach * reach) {
          continue;
        }
        nf = si < sj ? test_pair(bp, m, poses, extra, si, sj, nf)
                     : test_pair(bp, m, poses, extra, sj, si, nf);
      }
    }
    sort_ints(bp->found, nf);
  }
  /* merge with the pairs that always are candidates */
  int n = 0, i = 0, j = 0;
  while (n < max && (i < nf || j < bp->nalways)) {
    if (j >= bp->nalways || (i < nf && bp->found[i] < bp->always[j])) {
      out[n++] = bp->found[i++];
    } else {
      out[n++] = bp->always[j++];
    }
  }
  return n;
}
