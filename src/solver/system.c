/* system.c: the Newton matrix's pattern, its scatter maps and its LU (system.h).
 *
 * The spatial pattern is the one of seed 000 eq. 57's Newton matrix in the unknowns
 * [dq; dt^2 lambda]: every coordinate's diagonal, the mass blocks M^ab I3, each quadratic
 * row's G, G^T and constant Hessian blocks, each element's dense block and a constraint
 * element's G, G^T. A quadratic row keeps the diagonal blocks of all its node pairs, also
 * those with a zero Hessian coefficient (the pattern the LU was always analysed for). Stages
 * repeat it in every present (s, s') block; the tail adds the caller's entries after it.
 * Pairs are sorted by column, then row, so that nstage = 1 without a tail gives the slots
 * the model's pattern always had (and the same records, bit for bit). */
#include "solver/system.h"

#include "mbsim/elements.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int row, col;
} Pair;

typedef struct {
  Pair *p;
  size_t n, cap;
} PairList;

static int pl_add(PairList *l, int row, int c) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 1024;
    Pair *np = realloc(l->p, cap * sizeof(Pair));
    if (!np) {
      return -1;
    }
    l->p = np;
    l->cap = cap;
  }
  l->p[l->n].row = row;
  l->p[l->n].col = c;
  l->n++;
  return 0;
}

static int pair_cmp(const void *a, const void *b) {
  const Pair *x = a, *y = b;
  if (x->col != y->col) {
    return x->col < y->col ? -1 : 1;
  }
  return (x->row > y->row) - (x->row < y->row);
}

/* CSC slot of (row, col) in a pattern, -1 if absent */
static int find_slot(const int *colptr, const int *rowind, int row, int c) {
  int lo = colptr[c], hi = colptr[c + 1] - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (rowind[mid] == row) {
      return mid;
    }
    if (rowind[mid] < row) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return -1;
}

int mbs_system_slot(const mbsSystem *sys, int row, int col) {
  if (row < 0 || col < 0 || row >= sys->n || col >= sys->n) {
    return -1;
  }
  return find_slot(sys->colptr, sys->rowind, row, col);
}

/* coefficient of the Hessian block (k, l) of a quadratic row */
static double hess_coef(const mbsConRow *row, int k, int l) {
  return row->s * (row->wa[k] * row->wb[l] + row->wb[k] * row->wa[l]);
}

/* 1 if the Hessian pair (k, l) of row r is in the pattern: where its coefficient is not zero,
 * and every pair of a joint that engages and releases (its coefficients change with the
 * frames taken at engagement; mbs_system_refresh_rows) */
static int hess_pair(const mbsModel *m, const mbsConRow *row, int k, int l) {
  return hess_coef(row, k, l) != 0.0 || (row->joint >= 0 && mbs_joint_switches(m, row->joint));
}

/* the spatial pattern's pairs (unknowns of one stage) of the parts in mask (MBS_PART_):
 * diagonals, inertia, quadratic rows, then elements with their constraint rows */
static int spatial_pairs(const mbsModel *m, int mask, PairList *l) {
  int nq = m->nq, fail = 0;
  /* every coordinate keeps its diagonal (with MBS_PART_CON_DIAG every constraint row too: a
   * stage whose constraint unknowns are unused carries an identity there) */
  for (int i = 0; i < nq + m->ncon; i++) {
    if (mask & (i < nq ? MBS_PART_DIAG : MBS_PART_CON_DIAG)) {
      fail |= pl_add(l, i, i);
    }
  }
  for (int e = 0; e < m->nmass && (mask & MBS_PART_MASS); e++) {
    for (int c = 0; c < 3; c++) {
      fail |= pl_add(l, 3 * m->mass_a[e] + c, 3 * m->mass_b[e] + c);
      fail |= pl_add(l, 3 * m->mass_b[e] + c, 3 * m->mass_a[e] + c);
    }
  }
  for (int r = 0; r < m->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        if (mask & MBS_PART_G) {
          fail |= pl_add(l, nq + r, 3 * row->node[k] + c);
        }
        if (mask & MBS_PART_GT) {
          fail |= pl_add(l, 3 * row->node[k] + c, nq + r);
        }
      }
      /* only the pairs of a nonzero Hessian (hess_pair): a linear row's (a spherical joint's
       * 8 nodes, s = 0) were all zero, and coupled the coordinates of the joint's two bodies
       * (22 % of the chain's Newton matrix entries, docs/integrators.md) */
      for (int j = 0; j < row->nnode && (mask & MBS_PART_HESS); j++) {
        if (!hess_pair(m, row, k, j)) {
          continue;
        }
        for (int c = 0; c < 3; c++) {
          fail |= pl_add(l, 3 * row->node[k] + c, 3 * row->node[j] + c);
        }
      }
    }
  }
  for (int e = 0; e < m->nelem; e++) {
    const mbsElem *el = &m->elem[e];
    /* a linear potential's block is zero (a staged system may leave it out) */
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    int zero = kind->linear && !kind->force && !kind->constraint;
    int block = (mask & (zero ? MBS_PART_LINEAR : MBS_PART_HESS)) ||
                ((mask & MBS_PART_FORCE_V) && kind->force);
    for (int i = 0; i < el->nq; i++) {
      for (int j = 0; j < el->nq && block; j++) {
        if (kind->hess_pair && !kind->hess_pair(el, i, j)) {
          continue;
        }
        fail |= pl_add(l, el->qidx[i], el->qidx[j]);
      }
      /* a constraint element's G and G^T */
      for (int r = 0; r < el->ncon; r++) {
        if (mask & MBS_PART_G) {
          fail |= pl_add(l, nq + el->con0 + r, el->qidx[i]);
        }
        if (mask & MBS_PART_GT) {
          fail |= pl_add(l, el->qidx[i], nq + el->con0 + r);
        }
      }
    }
  }
  return fail;
}

/* the parts block b carries */
static int block_mask(const mbsSystem *sys, int b) {
  return sys->block_parts[b];
}

/* the maps of block (s, s') into mp, slots of the pattern (colptr, rowind) */
static void fill_maps(const mbsModel *m, const mbsSystem *sys, const int *colptr, const int *rowind,
                      int s, int s2, const mbsSystemMaps *mp) {
  int nq = m->nq, ro = s * sys->nsp, co = s2 * sys->nsp;
#define SLOT(r, c) find_slot(colptr, rowind, ro + (r), co + (c))
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    for (int c = 0; c < 3; c++) {
      mp->mass_map[6 * e + c] = SLOT(3 * a + c, 3 * b + c);
      mp->mass_map[6 * e + 3 + c] = (a == b) ? -1 : SLOT(3 * b + c, 3 * a + c);
    }
  }
  int p = 0;
  for (int r = 0; r < m->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    int *g = mp->con_gmap + sys->con_goff[r];
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        g[6 * k + c] = SLOT(nq + r, 3 * row->node[k] + c);
        g[6 * k + 3 + c] = SLOT(3 * row->node[k] + c, nq + r);
      }
    }
    for (; p < sys->con_hstart[r + 1]; p++) {
      int k = row->node[sys->con_hk[p]], j = row->node[sys->con_hl[p]];
      for (int c = 0; c < 3; c++) {
        mp->con_hmap[3 * p + c] = SLOT(3 * k + c, 3 * j + c);
      }
    }
  }
  for (int e = 0; e < m->nelem; e++) {
    const mbsElem *el = &m->elem[e];
    int *map = mp->elem_jmap + sys->elem_joff[e];
    int *gm = mp->elem_gmap + sys->elem_goff[e];
    for (int i = 0; i < el->nq; i++) {
      for (int j = 0; j < el->nq; j++) {
        map[i * el->nq + j] = SLOT(el->qidx[i], el->qidx[j]);
      }
    }
    for (int r = 0; r < el->ncon; r++) {
      for (int i = 0; i < el->nq; i++) {
        gm[(r * el->nq + i) * 2] = SLOT(nq + el->con0 + r, el->qidx[i]);
        gm[(r * el->nq + i) * 2 + 1] = SLOT(el->qidx[i], nq + el->con0 + r);
      }
    }
  }
#undef SLOT
}

/* the maps' pointers of every block into a pool */
static void point_maps(mbsSystem *sys, int *pool) {
  for (int b = 0; b < sys->nblock; b++) {
    int *p = pool + (size_t)b * (size_t)sys->map_len;
    mbsSystemMaps *mp = &sys->maps[b];
    mp->mass_map = p;
    p += 6 * sys->nmass;
    mp->con_gmap = p;
    p += sys->con_goff[sys->nrow];
    mp->con_hmap = p;
    p += 3 * sys->npair;
    mp->elem_jmap = p;
    p += sys->elem_joff[sys->nelem];
    mp->elem_gmap = p;
  }
}

static void *alloc_ints(size_t n) {
  return malloc((n > 0 ? n : 1) * sizeof(int));
}

/* sizes, Hessian pairs and map offsets of the model; -1 when a size overflows an int */
static int layout(const mbsModel *m, mbsSystem *sys) {
  long long npair = 0, goff = 0, joff = 0, egoff = 0;
  sys->nmass = m->nmass;
  sys->nrow = m->nrow;
  sys->nelem = m->nelem;
  sys->con_goff = alloc_ints((size_t)m->nrow + 1);
  sys->con_hstart = alloc_ints((size_t)m->nrow + 1);
  sys->elem_joff = alloc_ints((size_t)m->nelem + 1);
  sys->elem_goff = alloc_ints((size_t)m->nelem + 1);
  sys->elem_nq = alloc_ints((size_t)m->nelem);
  if (!sys->con_goff || !sys->con_hstart || !sys->elem_joff || !sys->elem_goff || !sys->elem_nq) {
    return -2;
  }
  for (int r = 0; r < m->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    sys->con_goff[r] = (int)goff;
    sys->con_hstart[r] = (int)npair;
    goff += 6 * row->nnode;
    for (int k = 0; k < row->nnode; k++) {
      for (int j = 0; j < row->nnode; j++) {
        npair += hess_pair(m, row, k, j);
      }
    }
  }
  sys->con_goff[m->nrow] = (int)goff;
  sys->con_hstart[m->nrow] = (int)npair;
  sys->elem_maxq = 1;
  sys->elem_maxcon = 1;
  for (int e = 0; e < m->nelem; e++) {
    const mbsElem *el = &m->elem[e];
    sys->elem_nq[e] = el->nq;
    sys->elem_joff[e] = (int)joff;
    sys->elem_goff[e] = (int)egoff;
    joff += (long long)el->nq * el->nq;
    egoff += 2LL * el->ncon * el->nq;
    sys->elem_maxq = el->nq > sys->elem_maxq ? el->nq : sys->elem_maxq;
    sys->elem_maxcon = el->ncon > sys->elem_maxcon ? el->ncon : sys->elem_maxcon;
    if (joff > INT_MAX || egoff > INT_MAX) {
      return -1;
    }
  }
  sys->elem_joff[m->nelem] = (int)joff;
  sys->elem_goff[m->nelem] = (int)egoff;
  long long len = 6LL * m->nmass + goff + 3 * npair + joff + egoff;
  if (len * sys->nblock > INT_MAX || npair > INT_MAX / 3) {
    return -1;
  }
  sys->npair = (int)npair;
  sys->map_len = (int)len;
  sys->evec = sys->elem_maxq > sys->elem_maxcon ? sys->elem_maxq : sys->elem_maxcon;
  sys->eblock = sys->elem_maxq * sys->evec;
  sys->ework_len = 4 * sys->eblock + 4 * sys->evec;
  /* the Hessian pairs */
  size_t np = (size_t)(npair > 0 ? npair : 1);
  sys->con_hk = malloc(np * sizeof(int));
  sys->con_hl = malloc(np * sizeof(int));
  sys->con_hcoef = malloc(np * sizeof(double));
  if (!sys->con_hk || !sys->con_hl || !sys->con_hcoef) {
    return -2;
  }
  for (int r = 0, p = 0; r < m->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    for (int k = 0; k < row->nnode; k++) {
      for (int j = 0; j < row->nnode; j++) {
        if (hess_pair(m, row, k, j)) {
          sys->con_hk[p] = k;
          sys->con_hl[p] = j;
          sys->con_hcoef[p++] = hess_coef(row, k, j);
        }
      }
    }
  }
  return 0;
}

/* a block's (s, s', parts) while the blocks are collected */
typedef struct {
  int s, s2, parts;
} BlockEntry;

static int entry_cmp(const void *a, const void *b) {
  const BlockEntry *x = a, *y = b;
  if (x->s != y->s) {
    return x->s < y->s ? -1 : 1;
  }
  return (x->s2 > y->s2) - (x->s2 < y->s2);
}

/* the stage blocks, numbered by row stage, then column stage: from the caller's dense
 * coupling (es NULL; couple NULL: all-to-all), every block with the whole pattern, or from
 * nentry (es, es2, eparts) entries, repeats or-ed; the diagonal blocks always (with
 * MBS_PART_DIAG where no part is given). 0, -1 (too large), -2 (memory), -3 (a stage out of
 * range) */
static int stage_blocks(mbsSystem *sys, const int *couple, int nentry, const int *es,
                        const int *es2, const int *eparts) {
  int ns = sys->nstage;
  int all = MBS_PART_ALL | (sys->full_diag ? MBS_PART_CON_DIAG : 0);
  size_t n = 0, cap = (size_t)ns;
  if (es) {
    cap += (size_t)nentry;
  } else {
    cap = 0;
    for (int s = 0; s < ns; s++) {
      for (int s2 = 0; s2 < ns; s2++) {
        cap += s == s2 || !couple || couple[(size_t)s * (size_t)ns + (size_t)s2];
      }
    }
  }
  if (cap > (size_t)INT_MAX) {
    return -1;
  }
  BlockEntry *e = malloc(cap * sizeof(BlockEntry));
  sys->block_start = calloc((size_t)ns + 1, sizeof(int));
  if (!e || !sys->block_start) {
    free(e);
    return -2;
  }
  if (es) {
    for (int k = 0; k < nentry; k++) {
      if (es[k] < 0 || es[k] >= ns || es2[k] < 0 || es2[k] >= ns) {
        free(e);
        return -3;
      }
      if (eparts[k] != 0) {
        e[n++] = (BlockEntry){es[k], es2[k], eparts[k]};
      }
    }
    for (int s = 0; s < ns; s++) {
      e[n++] = (BlockEntry){s, s, 0};
    }
    qsort(e, n, sizeof(BlockEntry), entry_cmp);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
      if (m > 0 && e[m - 1].s == e[k].s && e[m - 1].s2 == e[k].s2) {
        e[m - 1].parts |= e[k].parts;
      } else {
        e[m++] = e[k];
      }
    }
    n = m;
    for (size_t k = 0; k < n; k++) {
      e[k].parts = e[k].parts ? e[k].parts : MBS_PART_DIAG;
    }
  } else {
    for (int s = 0; s < ns; s++) {
      for (int s2 = 0; s2 < ns; s2++) {
        if (s == s2 || !couple || couple[(size_t)s * (size_t)ns + (size_t)s2]) {
          e[n++] = (BlockEntry){s, s2, all};
        }
      }
    }
  }
  sys->nblock = (int)n;
  sys->block_stage = alloc_ints(n);
  sys->block_parts = alloc_ints(n);
  if (!sys->block_stage || !sys->block_parts) {
    free(e);
    return -2;
  }
  for (size_t k = 0; k < n; k++) {
    sys->block_start[e[k].s + 1]++;
    sys->block_stage[k] = e[k].s2;
    sys->block_parts[k] = e[k].parts;
  }
  for (int s = 0; s < ns; s++) {
    sys->block_start[s + 1] += sys->block_start[s];
  }
  free(e);
  return 0;
}

int mbs_system_block(const mbsSystem *sys, int s, int s2) {
  if (s < 0 || s2 < 0 || s >= sys->nstage || s2 >= sys->nstage) {
    return -1;
  }
  int lo = sys->block_start[s], hi = sys->block_start[s + 1] - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (sys->block_stage[mid] == s2) {
      return mid;
    }
    if (sys->block_stage[mid] < s2) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return -1;
}

/* the fixed pattern: the spatial pairs of its parts in every present block, sorted, without
 * repeats */
static int fixed_pattern(const mbsModel *m, mbsSystem *sys) {
  PairList l = {0};
  if (sys->nstage == 1) {
    if (spatial_pairs(m, block_mask(sys, 0), &l) != 0) {
      free(l.p);
      return -2;
    }
  } else {
    /* the spatial pairs of each mask that occurs, built once */
    enum { NMASK = 2 * MBS_PART_LINEAR };
    PairList sp[NMASK];
    memset(sp, 0, sizeof(sp));
    int ns = sys->nstage, fail = 0, built[NMASK] = {0};
    for (int s = 0; s < ns && !fail; s++) {
      for (int b = sys->block_start[s]; b < sys->block_start[s + 1] && !fail; b++) {
        int mask = block_mask(sys, b) & (NMASK - 1), s2 = sys->block_stage[b];
        if (!built[mask]) {
          built[mask] = 1;
          fail |= spatial_pairs(m, mask, &sp[mask]);
        }
        for (size_t i = 0; i < sp[mask].n && !fail; i++) {
          fail |= pl_add(&l, s * sys->nsp + sp[mask].p[i].row, s2 * sys->nsp + sp[mask].p[i].col);
        }
      }
    }
    for (int i = 0; i < NMASK; i++) {
      free(sp[i].p);
    }
    if (fail) {
      free(l.p);
      return -2;
    }
  }
  qsort(l.p, l.n, sizeof(Pair), pair_cmp);
  size_t nnz = 0;
  for (size_t i = 0; i < l.n; i++) {
    if (nnz == 0 || l.p[i].row != l.p[nnz - 1].row || l.p[i].col != l.p[nnz - 1].col) {
      l.p[nnz++] = l.p[i];
    }
  }
  if (nnz > (size_t)INT_MAX - (size_t)sys->tail_nnz_max) {
    free(l.p);
    return -1;
  }
  sys->nfix_nnz = (int)nnz;
  sys->fix_colptr = calloc((size_t)sys->nfix + 1, sizeof(int));
  sys->fix_rowind = alloc_ints(nnz);
  if (!sys->fix_colptr || !sys->fix_rowind) {
    free(l.p);
    return -2;
  }
  for (size_t i = 0; i < nnz; i++) {
    sys->fix_colptr[l.p[i].col + 1]++;
    sys->fix_rowind[i] = l.p[i].row;
  }
  for (int c = 0; c < sys->nfix; c++) {
    sys->fix_colptr[c + 1] += sys->fix_colptr[c];
  }
  free(l.p);
  return 0;
}

mbsSystem *mbs_system_create(const mbsModel *m, int nstage, const int *couple, int tail_max,
                             int tail_nnz_max, mbsError *err) {
  return mbs_system_create_full(m, nstage, couple, tail_max, tail_nnz_max, 0, err);
}

static mbsSystem *create(const mbsModel *m, int nstage, const int *couple, int nentry,
                         const int *es, const int *es2, const int *eparts, int tail_max,
                         int tail_nnz_max, int full_diag, mbsError *err);

mbsSystem *mbs_system_create_full(const mbsModel *m, int nstage, const int *couple, int tail_max,
                                  int tail_nnz_max, int full_diag, mbsError *err) {
  return create(m, nstage, couple, 0, NULL, NULL, NULL, tail_max, tail_nnz_max, full_diag, err);
}

mbsSystem *mbs_system_create_parts(const mbsModel *m, int nstage, int nentry, const int *s,
                                   const int *s2, const int *parts, mbsError *err) {
  static const int none = 0;
  if (nentry < 0 || (nentry > 0 && (!s || !s2 || !parts))) {
    mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "linear system: no parts given");
    return NULL;
  }
  return create(m, nstage, NULL, nentry, nentry > 0 ? s : &none, nentry > 0 ? s2 : &none,
                nentry > 0 ? parts : &none, 0, 0, 0, err);
}

static mbsSystem *create(const mbsModel *m, int nstage, const int *couple, int nentry,
                         const int *es, const int *es2, const int *eparts, int tail_max,
                         int tail_nnz_max, int full_diag, mbsError *err) {
  if (nstage < 1 || tail_max < 0 || tail_nnz_max < 0 || (tail_max == 0) != (tail_nnz_max == 0)) {
    mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                  "linear system: %d stages and a tail of %d rows, %d entries is no shape", nstage,
                  tail_max, tail_nnz_max);
    return NULL;
  }
  mbsSystem *sys = calloc(1, sizeof(mbsSystem));
  if (!sys) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (linear system)");
    return NULL;
  }
  sys->nq = m->nq;
  sys->ncon = m->ncon;
  sys->full_diag = full_diag;
  sys->nsp = m->nq + m->ncon;
  sys->nstage = nstage;
  sys->tail_max = tail_max;
  sys->tail_nnz_max = tail_nnz_max;
  long long nfix = (long long)nstage * sys->nsp;
  int st = nfix + tail_max > INT_MAX - 1 ? -1 : 0;
  if (st == 0) {
    sys->nfix = (int)nfix;
    sys->n_max = sys->nfix + tail_max;
    st = stage_blocks(sys, couple, nentry, es, es2, eparts);
  }
  if (st == 0) {
    st = layout(m, sys);
  }
  if (st == 0) {
    st = fixed_pattern(m, sys);
  }
  if (st == 0) {
    size_t len = (size_t)sys->nblock * (size_t)sys->map_len;
    sys->nnz_max = sys->nfix_nnz + tail_nnz_max;
    sys->maps = calloc((size_t)sys->nblock, sizeof(mbsSystemMaps));
    sys->pool = alloc_ints(len);
    st = (sys->maps && sys->pool) ? 0 : -2;
    if (st == 0 && tail_max > 0) {
      /* the live pattern and maps apart from the fixed ones, which the tail shifts */
      sys->colptr = alloc_ints((size_t)sys->n_max + 1);
      sys->rowind = alloc_ints((size_t)sys->nnz_max);
      sys->pool_fix = alloc_ints(len);
      sys->fix_col = alloc_ints((size_t)sys->nfix_nnz);
      sys->tail_row = alloc_ints((size_t)tail_nnz_max);
      sys->tail_col = alloc_ints((size_t)tail_nnz_max);
      sys->tail_srow = alloc_ints((size_t)tail_nnz_max);
      sys->tail_scol = alloc_ints((size_t)tail_nnz_max);
      sys->tail_colnnz = alloc_ints((size_t)sys->n_max + 1);
      st = (sys->colptr && sys->rowind && sys->pool_fix && sys->fix_col && sys->tail_row &&
            sys->tail_col && sys->tail_srow && sys->tail_scol && sys->tail_colnnz)
               ? 0
               : -2;
    } else if (st == 0) {
      sys->colptr = sys->fix_colptr;
      sys->rowind = sys->fix_rowind;
    }
  }
  if (st != 0) {
    if (st == -1) {
      mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                    "linear system: the Newton matrix is too large for 32-bit indices");
    } else if (st == -3) {
      mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                    "linear system: a block outside the %d stages", nstage);
    } else {
      mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory building the pattern");
    }
    mbs_system_destroy(sys);
    return NULL;
  }
  /* maps of every block in slots of the fixed pattern */
  point_maps(sys, sys->pool_fix ? sys->pool_fix : sys->pool);
  for (int s = 0; s < nstage; s++) {
    for (int b = sys->block_start[s]; b < sys->block_start[s + 1]; b++) {
      fill_maps(m, sys, sys->fix_colptr, sys->fix_rowind, s, sys->block_stage[b], &sys->maps[b]);
    }
  }
  if (sys->pool_fix) {
    for (int c = 0; c < sys->nfix; c++) {
      for (int k = sys->fix_colptr[c]; k < sys->fix_colptr[c + 1]; k++) {
        sys->fix_col[k] = c;
      }
    }
    memcpy(sys->pool, sys->pool_fix, (size_t)sys->nblock * (size_t)sys->map_len * sizeof(int));
    memcpy(sys->colptr, sys->fix_colptr, ((size_t)sys->nfix + 1) * sizeof(int));
    memcpy(sys->rowind, sys->fix_rowind, (size_t)sys->nfix_nnz * sizeof(int));
    point_maps(sys, sys->pool);
  }
  sys->mass_map = sys->maps[0].mass_map;
  sys->con_gmap = sys->maps[0].con_gmap;
  sys->con_hmap = sys->maps[0].con_hmap;
  sys->elem_jmap = sys->maps[0].elem_jmap;
  sys->elem_gmap = sys->maps[0].elem_gmap;
  sys->n = sys->nfix;
  sys->nnz = sys->nfix_nnz;
  sys->ls = mbs_linsolve_create(m->linear_solver, sys->n, sys->colptr, sys->rowind, err);
  if (sys->ls && nstage == 1) {
    /* one stage: a structurally symmetric saddle-point pattern; where the block triangular
     * form finds one block, AMD on the pattern as it stands (mbs_linsolve_set_btf: 13 %
     * fewer instructions a step on the chain, docs/integrators.md); the space-time
     * element's matrix of several stages keeps the BTF order, which fills it less */
    mbs_linsolve_set_btf(sys->ls, -1);
  }
  if (sys->ls) {
    sys->kkt_ls = mbs_linsolve_create(m->linear_solver, sys->n, sys->colptr, sys->rowind, err);
  }
  if (!sys->ls || !sys->kkt_ls) {
    mbs_system_destroy(sys);
    return NULL;
  }
  return sys;
}

void mbs_system_destroy(mbsSystem *sys) {
  if (!sys) {
    return;
  }
  mbs_linsolve_destroy(sys->ls);
  mbs_linsolve_destroy(sys->kkt_ls);
  if (sys->colptr != sys->fix_colptr) {
    free(sys->colptr);
    free(sys->rowind);
  }
  free(sys->block_stage);
  free(sys->block_parts);
  void *ptrs[] = {sys->fix_colptr, sys->fix_rowind, sys->fix_col,   sys->block_start,
                  sys->con_hstart, sys->con_hk,     sys->con_hl,    sys->con_hcoef,
                  sys->con_goff,   sys->elem_joff,  sys->elem_goff, sys->elem_nq,
                  sys->maps,       sys->pool,       sys->pool_fix,  sys->tail_row,
                  sys->tail_col,   sys->tail_srow,  sys->tail_scol, sys->tail_colnnz};
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  free(sys);
}

const mbsSystemMaps *mbs_system_block_maps(const mbsSystem *sys, int s, int s2) {
  int b = mbs_system_block(sys, s, s2);
  return b >= 0 ? &sys->maps[b] : NULL;
}

long mbs_system_analyses(const mbsSystem *sys) {
  return mbs_linsolve_analyses(sys->ls);
}

/* the live pattern and maps for the tail now in tail_row/tail_col (sorted by column) */
static void rebuild(mbsSystem *sys, int ntail) {
  int n = sys->nfix + ntail, t = 0, nz = 0;
  sys->colptr[0] = 0;
  for (int c = 0; c < n; c++) {
    if (c < sys->nfix) {
      for (int k = sys->fix_colptr[c]; k < sys->fix_colptr[c + 1]; k++) {
        sys->rowind[nz++] = sys->fix_rowind[k];
      }
    }
    /* tail rows in a fixed column sort after its fixed rows */
    for (; t < sys->tail_nnz && sys->tail_col[t] == c; t++) {
      sys->rowind[nz++] = sys->tail_row[t];
    }
    sys->colptr[c + 1] = nz;
  }
  sys->n = n;
  sys->nnz = nz;
  sys->ntail = ntail;
  /* a fixed slot moves by the tail entries of the columns before its own */
  size_t len = (size_t)sys->nblock * (size_t)sys->map_len;
  for (size_t i = 0; i < len; i++) {
    int f = sys->pool_fix[i];
    sys->pool[i] = f < 0 ? -1 : f + sys->colptr[sys->fix_col[f]] - sys->fix_colptr[sys->fix_col[f]];
  }
}

mbsStatus mbs_system_set_tail(mbsSystem *sys, int ntail, int nent, const int *row, const int *col,
                              int *changed, mbsError *err) {
  if (changed) {
    *changed = 0;
  }
  if (ntail < 0 || ntail > sys->tail_max || nent < 0 || nent > sys->tail_nnz_max) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                         "linear system: a tail of %d rows, %d entries exceeds its capacity "
                         "(%d rows, %d entries)",
                         ntail, nent, sys->tail_max, sys->tail_nnz_max);
  }
  int n = sys->nfix + ntail, *cnt = sys->tail_colnnz;
  /* counting sort by column (stable), then rows within each column: no allocation */
  memset(cnt, 0, ((size_t)n + 1) * sizeof(int));
  for (int k = 0; k < nent; k++) {
    int r = row[k], c = col[k];
    if (r < 0 || c < 0 || r >= n || c >= n || (r < sys->nfix && c < sys->nfix)) {
      return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0,
                           "linear system: tail entry (%d, %d) is outside the tail of %d "
                           "rows after %d fixed unknowns",
                           r, c, ntail, sys->nfix);
    }
    cnt[c + 1]++;
  }
  for (int c = 0; c < n; c++) {
    cnt[c + 1] += cnt[c];
  }
  for (int k = 0; k < nent; k++) {
    int p = cnt[col[k]]++;
    sys->tail_srow[p] = row[k];
    sys->tail_scol[p] = col[k];
  }
  /* cnt[c] is now the end of column c: insertion sort of each column's rows */
  for (int c = 0, b = 0; c < n; b = cnt[c], c++) {
    for (int i = b + 1; i < cnt[c]; i++) {
      int r = sys->tail_srow[i], j = i;
      for (; j > b && sys->tail_srow[j - 1] > r; j--) {
        sys->tail_srow[j] = sys->tail_srow[j - 1];
      }
      sys->tail_srow[j] = r;
    }
  }
  int m = 0;
  for (int k = 0; k < nent; k++) {
    if (m == 0 || sys->tail_srow[k] != sys->tail_srow[m - 1] ||
        sys->tail_scol[k] != sys->tail_scol[m - 1]) {
      sys->tail_srow[m] = sys->tail_srow[k];
      sys->tail_scol[m++] = sys->tail_scol[k];
    }
  }
  /* the same structure: nothing to do */
  if (ntail == sys->ntail && m == sys->tail_nnz &&
      memcmp(sys->tail_srow, sys->tail_row, (size_t)m * sizeof(int)) == 0 &&
      memcmp(sys->tail_scol, sys->tail_col, (size_t)m * sizeof(int)) == 0) {
    return MBS_OK;
  }
  memcpy(sys->tail_row, sys->tail_srow, (size_t)m * sizeof(int));
  memcpy(sys->tail_col, sys->tail_scol, (size_t)m * sizeof(int));
  sys->tail_nnz = m;
  rebuild(sys, ntail);
  mbs_linsolve_reanalyse(sys->ls, sys->n, sys->colptr, sys->rowind);
  mbs_linsolve_reanalyse(sys->kkt_ls, sys->n, sys->colptr, sys->rowind);
  sys->tail_changes++;
  if (changed) {
    *changed = 1;
  }
  return MBS_OK;
}

void mbs_system_refresh_rows(mbsSystem *sys, const mbsModel *m) {
  for (int r = 0; r < sys->nrow; r++) {
    const mbsConRow *row = &m->con[r];
    for (int p = sys->con_hstart[r]; p < sys->con_hstart[r + 1]; p++) {
      sys->con_hcoef[p] = hess_coef(row, sys->con_hk[p], sys->con_hl[p]);
    }
  }
}
