/* schur.c: the records' KKT systems through the Schur complement of the mass matrix.
 *
 * A record solves [M G^T; G 0] [x; y] = [b; c] twice at one configuration (the projection
 * of the velocities and the index-1 multipliers, consistent.c). In natural coordinates M is
 * constant (seed 000 eq. 15: M = M^ab (x) I3, one block of at most four nodes per body), so
 * its inverse is known block by block from the start, and the system reduces to
 *     S y = G M^-1 b - c,   x = M^-1 (b - G^T y),   S = G M^-1 G^T,
 * with S symmetric positive definite when the rows of G are independent (the compiled model
 * keeps independent rows only: redundancy.c). S has a row per constraint and couples the
 * rows that share a body: for a chain of rigid bodies it is 9N x 9N and block tridiagonal,
 * where the KKT matrix is 21N x 21N with an LU on the Newton matrix's whole pattern. S is
 * assembled body by body from G's rows (G M^-1 G^T restricted to each mass block) and
 * factored by CHOLMOD's sparse Cholesky, analysed once: S's products are added straight into
 * the upper triangle of P S P^T (P: AMD's order, chol_analyse), which CHOLMOD factors as
 * given (given its own order and the lower triangle, it transposed the matrix at every
 * record: 0.55 M of its 2.38 M instructions on the 200-link chain).
 *
 * Models this does not suit keep the KKT matrix (mbs_schur_create returns NULL): scalar
 * coordinates or beams (their mass blocks span a whole beam), joints that engage (released
 * rows), a node without mass. A record whose S is not positive definite to working
 * precision, or whose system has grown a dynamic tail, takes the KKT matrix too. */
#include "solver/schur.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "solver/system.h"
#include "util/linsolve.h"
#include "util/vec3.h"

/* the largest mass block handled: a body's four nodes (phi, d1, d2, d3) */
#define SCHUR_MAXK 4

struct mbsSchur {
  int nq, ncon;
  int nrow; /* the quadratic rows (a body's rigidity), rows 0 .. nrow - 1; the elements' after */
  /* mass blocks: the connected node sets of M^ab */
  int ncomp;
  int *comp_start; /* (ncomp + 1) into comp_node */
  int *comp_node;  /* (nnode) the nodes of each block, increasing */
  int *comp_inv;   /* (ncomp) offset of the block's k x k inverse in inv */
  double *inv;     /* the inverses of the blocks M^ab [1/kg, ...] */
  int *node_comp;  /* (nnode) block of each node */
  int *node_local; /* (nnode) its index within the block */
  /* G by rows, in the walk's entries (a coordinate may repeat) */
  int *g_ptr;    /* (ncon + 1) */
  int *g_idx;    /* (nnz) coordinates */
  double *g_val; /* (nnz) dg/dq at the last factor */
  int *g_pos;    /* (nnz) place of each entry in its (row, block) dense piece in gblk */
  /* (row, block) pairs: the pieces of each row on each block it touches */
  int *rc_ptr;  /* (ncon + 1) into the pairs */
  int *rc_comp; /* (nrc) block */
  int *rc_off;  /* (nrc) offset of the pair's dense piece (3k values) in gblk and yblk */
  unsigned char *rc_nodes; /* (nrc) bit a: the row has entries on the block's node a */
  int nblk;     /* values of all pieces */
  double *gblk; /* the pieces of G, dense per block */
  double *yblk; /* the pieces of (M^-1 G^T)^T = G M^-1 */
  /* S = sum over blocks of the products of the pieces on that block */
  int npair;
  /* (npair) the (row, block) pieces i, j whose product adds to S: the offsets of i in gblk
   * and of j in yblk, and the nodes of the block that row i has entries on (rc_nodes[i]) */
  int *pair_goff, *pair_yoff;
  unsigned char *pair_nodes;
  int *pair_pos;        /* (npair) into S's values, stored as C below */
  int *s_colptr, *s_rowind; /* S's lower triangle by columns (natural order) */
  double *s_val;            /* C's values */
  /* the Cholesky factorization of C = P S P^T (CHOLMOD, simplicial, in the order given):
   * C's upper triangle by columns, rows sorted, in the fill-reducing order perm (AMD), its
   * pattern fixed at create, S's products added straight into it (pair_pos), so a
   * factorization is numeric only (no transpose of the matrix, no symbolic work) */
  int *perm;                /* (ncon) row of S of C's row k */
  int *c_colptr, *c_rowind; /* C's upper triangle by columns */
  mbsCholesky *chol;
  double *lx, *ly; /* (ncon) P b and P x of a solve */
  int factored;
  double *w1, *w2, *w3; /* (nq), (ncon), (ncon) scratch of solve */
  /* the configuration of the last factor (its G), for the record's observables */
  int at_valid; /* 1 once a factor succeeded */
  double *q_at; /* (nq) */
  double t_at;
  double violation; /* max |g| over the rows at (q_at, t_at), as mbs_constraint_violation */
};

void mbs_schur_destroy(mbsSchur *s) {
  if (!s) {
    return;
  }
  mbs_cholesky_destroy(s->chol);
  void *ptrs[] = {s->comp_start, s->comp_node, s->comp_inv, s->inv,    s->node_comp, s->node_local,
                  s->g_ptr,      s->g_idx,     s->g_val,    s->g_pos,  s->rc_ptr,    s->rc_comp,
                  s->rc_off,     s->rc_nodes,  s->gblk,     s->yblk,   s->pair_goff, s->pair_yoff,
                  s->pair_pos,   s->pair_nodes, s->perm, s->c_colptr, s->c_rowind, s->lx, s->ly,
                  s->s_colptr,   s->s_rowind,  s->s_val,    s->w1,     s->w2,        s->w3,
                  s->q_at};
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  free(s);
}

static int find_root(int *parent, int a) {
  while (parent[a] != a) {
    parent[a] = parent[parent[a]];
    a = parent[a];
  }
  return a;
}

/* the inverse of the symmetric positive definite k x k matrix A (row-major) into Ai by
 * Gauss-Jordan elimination on the diagonal (no pivoting is needed for an SPD matrix);
 * returns 0 when a pivot is not positive */
static int spd_inverse(double *Ai, const double *A, int k) {
  double a[SCHUR_MAXK * SCHUR_MAXK];
  memcpy(a, A, (size_t)(k * k) * sizeof(double));
  for (int i = 0; i < k * k; i++) {
    Ai[i] = (i / k == i % k) ? 1.0 : 0.0;
  }
  for (int p = 0; p < k; p++) {
    double piv = a[p * k + p];
    if (!(piv > 0.0)) {
      return 0;
    }
    for (int j = 0; j < k; j++) {
      a[p * k + j] /= piv;
      Ai[p * k + j] /= piv;
    }
    for (int i = 0; i < k; i++) {
      double f = a[i * k + p];
      if (i == p || f == 0.0) {
        continue;
      }
      for (int j = 0; j < k; j++) {
        a[i * k + j] -= f * a[p * k + j];
        Ai[i * k + j] -= f * Ai[p * k + j];
      }
    }
  }
  return 1;
}

static int cmp_long(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* the mass blocks and their inverses; 0 when M does not suit (a block too large or not
 * positive definite, a node without mass), -1 when out of memory */
static int mass_blocks(mbsSchur *s, const mbsModel *m) {
  int nn = m->nnode;
  int *parent = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(int));
  s->node_comp = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(int));
  s->node_local = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(int));
  s->comp_node = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(int));
  s->comp_start = malloc((size_t)(nn + 1) * sizeof(int));
  if (!parent || !s->node_comp || !s->node_local || !s->comp_node || !s->comp_start) {
    free(parent);
    return -1;
  }
  for (int a = 0; a < nn; a++) {
    parent[a] = a;
  }
  for (int e = 0; e < m->nmass; e++) {
    int ra = find_root(parent, m->mass_a[e]), rb = find_root(parent, m->mass_b[e]);
    if (ra != rb) {
      parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
    }
  }
  /* blocks numbered by their smallest node; nodes of a block in increasing order */
  int nc = 0;
  for (int a = 0; a < nn; a++) {
    int r = find_root(parent, a);
    s->node_comp[a] = r == a ? nc++ : s->node_comp[r];
  }
  free(parent);
  s->ncomp = nc;
  memset(s->comp_start, 0, (size_t)(nn + 1) * sizeof(int));
  for (int a = 0; a < nn; a++) {
    s->comp_start[s->node_comp[a] + 1]++;
  }
  for (int c = 0; c < nc; c++) {
    if (s->comp_start[c + 1] > SCHUR_MAXK) {
      return 0;
    }
    s->comp_start[c + 1] += s->comp_start[c];
  }
  int *fill = calloc((size_t)(nc > 0 ? nc : 1), sizeof(int));
  s->comp_inv = malloc((size_t)(nc > 0 ? nc : 1) * sizeof(int));
  if (!fill || !s->comp_inv) {
    free(fill);
    return -1;
  }
  int ninv = 0;
  for (int c = 0; c < nc; c++) {
    int k = s->comp_start[c + 1] - s->comp_start[c];
    s->comp_inv[c] = ninv;
    ninv += k * k;
  }
  for (int a = 0; a < nn; a++) {
    int c = s->node_comp[a];
    s->node_local[a] = fill[c];
    s->comp_node[s->comp_start[c] + fill[c]++] = a;
  }
  free(fill);
  double *blk = calloc((size_t)(ninv > 0 ? ninv : 1), sizeof(double));
  s->inv = malloc((size_t)(ninv > 0 ? ninv : 1) * sizeof(double));
  if (!blk || !s->inv) {
    free(blk);
    return -1;
  }
  /* M^ab, a <= b listed once (a == b: the diagonal) */
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e], c = s->node_comp[a];
    int k = s->comp_start[c + 1] - s->comp_start[c];
    int la = s->node_local[a], lb = s->node_local[b];
    blk[s->comp_inv[c] + la * k + lb] += m->mass_val[e];
    if (a != b) {
      blk[s->comp_inv[c] + lb * k + la] += m->mass_val[e];
    }
  }
  int ok = 1;
  for (int c = 0; c < nc && ok; c++) {
    int k = s->comp_start[c + 1] - s->comp_start[c];
    ok = spd_inverse(s->inv + s->comp_inv[c], blk + s->comp_inv[c], k);
  }
  free(blk);
  return ok;
}

/* G's pattern from a walk at (q, t), its (row, block) pieces and S's pattern; 0 when it
 * does not suit (a scalar coordinate in a row), -1 when out of memory */
static int row_pattern(mbsSchur *s, const mbsModel *m, mbsData *d, const double *q, double t) {
  int nc = m->ncon;
  mbsRowIter it;
  /* entries per row */
  s->g_ptr = calloc((size_t)nc + 1, sizeof(int));
  s->rc_ptr = calloc((size_t)nc + 1, sizeof(int));
  if (!s->g_ptr || !s->rc_ptr) {
    return -1;
  }
  for (mbs_rows_begin(&it, m, q, t, 1, d->ework); mbs_rows_next(&it);) {
    s->g_ptr[it.row + 1] = it.nz;
  }
  for (int r = 0; r < nc; r++) {
    s->g_ptr[r + 1] += s->g_ptr[r];
  }
  int nnz = s->g_ptr[nc];
  s->g_idx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int));
  s->g_val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(double));
  s->g_pos = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int));
  /* at most one piece per entry */
  s->rc_comp = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int));
  s->rc_off = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof(int));
  s->rc_nodes = calloc((size_t)(nnz > 0 ? nnz : 1), 1);
  if (!s->g_idx || !s->g_val || !s->g_pos || !s->rc_comp || !s->rc_off || !s->rc_nodes) {
    return -1;
  }
  int nrc = 0, off = 0;
  for (mbs_rows_begin(&it, m, q, t, 1, d->ework); mbs_rows_next(&it);) {
    int r = it.row, first = nrc;
    for (int i = 0; i < it.nz; i++) {
      int j = it.idx[i];
      if (j < 0 || j >= 3 * m->nnode) {
        return 0;
      }
      s->g_idx[s->g_ptr[r] + i] = j;
    }
    /* the pieces of row r in the order the rows come (the walk goes r = 0, 1, ...) */
    s->rc_ptr[r] = nrc;
    for (int i = 0; i < it.nz; i++) {
      int c = s->node_comp[it.idx[i] / 3], p = first;
      while (p < nrc && s->rc_comp[p] != c) {
        p++;
      }
      if (p == nrc) {
        s->rc_comp[nrc] = c;
        s->rc_off[nrc++] = off;
        off += 3 * (s->comp_start[c + 1] - s->comp_start[c]);
      }
      s->g_pos[s->g_ptr[r] + i] = s->rc_off[p] + 3 * s->node_local[it.idx[i] / 3] + it.idx[i] % 3;
      s->rc_nodes[p] |= (unsigned char)(1u << s->node_local[it.idx[i] / 3]);
    }
    s->rc_ptr[r + 1] = nrc;
  }
  s->nblk = off;
  s->gblk = malloc((size_t)(off > 0 ? off : 1) * sizeof(double));
  s->yblk = malloc((size_t)(off > 0 ? off : 1) * sizeof(double));
  if (!s->gblk || !s->yblk) {
    return -1;
  }

  /* the pieces on each block, then every product of two of them (i >= j by row) */
  int ncomp = s->ncomp;
  int *cstart = calloc((size_t)ncomp + 1, sizeof(int));
  int *clist = malloc((size_t)(nrc > 0 ? nrc : 1) * sizeof(int));
  int *cfill = calloc((size_t)(ncomp > 0 ? ncomp : 1), sizeof(int));
  if (!cstart || !clist || !cfill) {
    free(cstart);
    free(clist);
    free(cfill);
    return -1;
  }
  for (int p = 0; p < nrc; p++) {
    cstart[s->rc_comp[p] + 1]++;
  }
  long np = 0;
  for (int c = 0; c < ncomp; c++) {
    long n = cstart[c + 1];
    np += n * (n + 1) / 2;
    cstart[c + 1] += cstart[c];
  }
  /* rows in increasing order within each block: the pieces are numbered by row */
  for (int p = 0; p < nrc; p++) {
    int c = s->rc_comp[p];
    clist[cstart[c] + cfill[c]++] = p;
  }
  free(cfill);
  int *prow = malloc((size_t)(nrc > 0 ? nrc : 1) * sizeof(int));
  s->pair_goff = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
  s->pair_yoff = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
  s->pair_nodes = malloc((size_t)(np > 0 ? np : 1));
  s->pair_pos = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
  long *key = malloc((size_t)(np > 0 ? np : 1) * sizeof(long));
  if (!prow || !s->pair_goff || !s->pair_yoff || !s->pair_nodes || !s->pair_pos || !key) {
    free(prow);
    free(key);
    free(cstart);
    free(clist);
    return -1;
  }
  for (int r = 0; r < nc; r++) {
    for (int p = s->rc_ptr[r]; p < s->rc_ptr[r + 1]; p++) {
      prow[p] = r;
    }
  }
  s->npair = (int)np;
  np = 0;
  for (int c = 0; c < ncomp; c++) {
    for (int a = cstart[c]; a < cstart[c + 1]; a++) {
      for (int b = cstart[c]; b <= a; b++) {
        s->pair_goff[np] = s->rc_off[clist[a]];
        s->pair_yoff[np] = s->rc_off[clist[b]];
        s->pair_nodes[np] = s->rc_nodes[clist[a]];
        /* lower triangle by columns: column = the smaller row */
        int ra = prow[clist[a]], rb = prow[clist[b]];
        key[np] = ra < rb ? (long)ra * nc + rb : (long)rb * nc + ra;
        np++;
      }
    }
  }
  free(cstart);
  free(clist);
  long *sorted = malloc((size_t)(np > 0 ? np : 1) * sizeof(long));
  if (!sorted) {
    free(prow);
    free(key);
    return -1;
  }
  memcpy(sorted, key, (size_t)np * sizeof(long));
  qsort(sorted, (size_t)np, sizeof(long), cmp_long);
  long ns = 0;
  for (long k = 0; k < np; k++) {
    if (ns == 0 || sorted[k] != sorted[ns - 1]) {
      sorted[ns++] = sorted[k];
    }
  }
  s->s_colptr = calloc((size_t)nc + 1, sizeof(int));
  s->s_rowind = malloc((size_t)(ns > 0 ? ns : 1) * sizeof(int));
  s->s_val = malloc((size_t)(ns > 0 ? ns : 1) * sizeof(double));
  if (!s->s_colptr || !s->s_rowind || !s->s_val) {
    free(prow);
    free(key);
    free(sorted);
    return -1;
  }
  for (long k = 0; k < ns; k++) {
    s->s_colptr[sorted[k] / nc + 1]++;
    s->s_rowind[k] = (int)(sorted[k] % nc);
  }
  for (int r = 0; r < nc; r++) {
    s->s_colptr[r + 1] += s->s_colptr[r];
  }
  for (long k = 0; k < np; k++) {
    long *hit = bsearch(&key[k], sorted, (size_t)ns, sizeof(long), cmp_long);
    s->pair_pos[k] = (int)(hit - sorted);
  }
  free(prow);
  free(key);
  free(sorted);
  return 1;
}

static mbsStatus assemble(mbsSchur *s, const mbsModel *m, mbsData *d, const double *q, double t,
                          mbsError *err);

/* a row of S and its diagonal, sorted by the diagonal, then by the row */
typedef struct {
  double diag;
  int row;
} diag_row;

static int cmp_diag(const void *a, const void *b) {
  const diag_row *x = a, *y = b;
  if (x->diag != y->diag) {
    return x->diag < y->diag ? -1 : 1;
  }
  return (x->row > y->row) - (x->row < y->row);
}

/* the symbolic analysis of C = P S P^T: the order (AMD of S's pattern), C's upper triangle
 * and where each product of S's pieces adds to it, the elimination tree, and L's pattern
 * row by row (cs_ereach) and column by column */
static mbsStatus chol_analyse(mbsSchur *s, const double *diag, mbsError *err) {
  int n = s->ncon, ns = s->s_colptr[n];
  mbsStatus st = MBS_ERR_NOMEM;
  int *pinv = malloc((size_t)n * sizeof(int));
  int *smap = malloc((size_t)(ns > 0 ? ns : 1) * sizeof(int));
  int *src = malloc((size_t)(ns > 0 ? ns : 1) * sizeof(int));
  int *work = malloc((size_t)n * sizeof(int));
  int *mark = malloc((size_t)n * sizeof(int));
  s->perm = malloc((size_t)n * sizeof(int));
  s->c_colptr = calloc((size_t)n + 1, sizeof(int));
  s->c_rowind = malloc((size_t)(ns > 0 ? ns : 1) * sizeof(int));
  s->lx = calloc((size_t)n, sizeof(double));
  s->ly = calloc((size_t)n, sizeof(double));
  if (!pinv || !smap || !src || !work || !mark || !s->perm || !s->c_colptr || !s->c_rowind ||
      !s->lx || !s->ly) {
    mbs_error_set(err, st, NULL, 0, 0, "out of memory (Schur complement)");
    goto done;
  }
  /* AMD on S's pattern with its rows numbered by their diagonal at q0, smallest first:
   * among rows of equal degree AMD then eliminates a joint's rows (S_ii ~ 400 on the
   * 200-link chain) before the rigidity rows of the bodies it joins (S_ii ~ 2.4e7, directors
   * of small inertia); eliminated while both their joints wait, as AMD's own tie-breaks
   * did, the reactions came out 1.5e-11 relative off the KKT matrix's LU, 1.3e-12 in this
   * order (CHOLMOD's: 1.0e-12; largest diagonal first: 1.5e-11 again) */
  {
    int *rank = work, *cp = mark;
    int *rip = malloc((size_t)(ns > 0 ? ns : 1) * sizeof(int));
    int *ord = malloc((size_t)n * sizeof(int));
    diag_row *dr = malloc((size_t)n * sizeof(diag_row));
    if (!rip || !ord || !dr) {
      free(rip);
      free(ord);
      free(dr);
      mbs_error_set(err, st, NULL, 0, 0, "out of memory (Schur complement)");
      goto done;
    }
    for (int i = 0; i < n; i++) {
      dr[i].diag = diag[i];
      dr[i].row = i;
    }
    qsort(dr, (size_t)n, sizeof(diag_row), cmp_diag);
    for (int i = 0; i < n; i++) {
      ord[i] = dr[i].row;
      rank[ord[i]] = i;
      cp[i] = 0;
    }
    free(dr);
    int *cptr = calloc((size_t)n + 1, sizeof(int));
    if (!cptr) {
      free(rip);
      free(ord);
      mbs_error_set(err, st, NULL, 0, 0, "out of memory (Schur complement)");
      goto done;
    }
    for (int j = 0; j < n; j++) {
      for (int p = s->s_colptr[j]; p < s->s_colptr[j + 1]; p++) {
        cptr[rank[j] + 1]++;
      }
    }
    for (int k = 0; k < n; k++) {
      cptr[k + 1] += cptr[k];
      cp[k] = cptr[k];
    }
    for (int j = 0; j < n; j++) {
      for (int p = s->s_colptr[j]; p < s->s_colptr[j + 1]; p++) {
        rip[cp[rank[j]]++] = rank[s->s_rowind[p]];
      }
    }
    st = mbs_linsolve_amd(n, cptr, rip, s->perm, err);
    free(cptr);
    free(rip);
    if (st == MBS_OK) {
      for (int k = 0; k < n; k++) {
        s->perm[k] = ord[s->perm[k]];
      }
    }
    free(ord);
    if (st != MBS_OK) {
      goto done;
    }
  }
  for (int k = 0; k < n; k++) {
    pinv[s->perm[k]] = k;
  }
  /* C's upper triangle: S's entry (i, j), i >= j, at (min, max) of (pinv i, pinv j) */
  for (int j = 0; j < n; j++) {
    for (int p = s->s_colptr[j]; p < s->s_colptr[j + 1]; p++) {
      int a = pinv[s->s_rowind[p]], b = pinv[j];
      s->c_colptr[(a > b ? a : b) + 1]++;
    }
  }
  for (int k = 0; k < n; k++) {
    s->c_colptr[k + 1] += s->c_colptr[k];
    work[k] = s->c_colptr[k];
  }
  for (int j = 0; j < n; j++) {
    for (int p = s->s_colptr[j]; p < s->s_colptr[j + 1]; p++) {
      int a = pinv[s->s_rowind[p]], b = pinv[j];
      int q = work[a > b ? a : b]++;
      s->c_rowind[q] = a < b ? a : b;
      src[q] = p;
    }
  }
  /* each column's rows sorted (insertion: a column holds a few dozen), then where S's entry
   * p went */
  for (int k = 0; k < n; k++) {
    for (int q = s->c_colptr[k] + 1; q < s->c_colptr[k + 1]; q++) {
      int r = s->c_rowind[q], o = src[q], u = q;
      for (; u > s->c_colptr[k] && s->c_rowind[u - 1] > r; u--) {
        s->c_rowind[u] = s->c_rowind[u - 1];
        src[u] = src[u - 1];
      }
      s->c_rowind[u] = r;
      src[u] = o;
    }
  }
  for (int q = 0; q < ns; q++) {
    smap[src[q]] = q;
  }
  for (int k = 0; k < s->npair; k++) {
    s->pair_pos[k] = smap[s->pair_pos[k]];
  }
  s->chol = mbs_cholesky_create(n, s->c_colptr, s->c_rowind, err);
  if (!s->chol) {
    st = err ? err->status : MBS_ERR_LINSOLVE;
    goto done;
  }
  st = MBS_OK;
done:
  free(pinv);
  free(smap);
  free(src);
  free(work);
  free(mark);
  return st;
}

/* C = P S P^T (s_val) factored */
static mbsStatus chol_factor(mbsSchur *s, mbsError *err) {
  s->factored = 0;
  mbsStatus st = mbs_cholesky_factor(s->chol, s->s_val, err);
  s->factored = st == MBS_OK;
  return st;
}

/* x = S^-1 b = P^T C^-1 P b (x and b may not overlap) */
static mbsStatus chol_solve(mbsSchur *s, const double *b, double *x, mbsError *err) {
  int n = s->ncon;
  for (int k = 0; k < n; k++) {
    s->lx[k] = b[s->perm[k]];
  }
  mbsStatus st = mbs_cholesky_solve(s->chol, s->lx, s->ly, err);
  if (st == MBS_OK) {
    for (int k = 0; k < n; k++) {
      x[s->perm[k]] = s->ly[k];
    }
  }
  return st;
}

mbsSchur *mbs_schur_create(const mbsModel *m, mbsData *d, const double *q, double t,
                           mbsError *err) {
  if (m->ncon == 0 || m->nscalar > 0 || m->nbeam > 0 || m->nengage > 0 ||
      d->sys->n != m->nq + m->ncon) {
    return NULL;
  }
  mbsSchur *s = calloc(1, sizeof(*s));
  if (!s) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (Schur complement)");
    return NULL;
  }
  s->nq = m->nq;
  s->ncon = m->ncon;
  s->nrow = m->nrow;
  int ok = mass_blocks(s, m);
  if (ok > 0) {
    ok = row_pattern(s, m, d, q, t);
  }
  if (ok > 0) {
    s->w1 = malloc((size_t)m->nq * sizeof(double));
    s->w2 = malloc((size_t)m->ncon * sizeof(double));
    s->w3 = malloc((size_t)m->ncon * sizeof(double));
    s->q_at = malloc((size_t)m->nq * sizeof(double));
    ok = s->w1 && s->w2 && s->w3 && s->q_at ? 1 : -1;
  }
  if (ok < 0) {
    mbs_schur_destroy(s);
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory (Schur complement)");
    return NULL;
  }
  if (ok == 0) {
    mbs_schur_destroy(s);
    return NULL;
  }
  /* S once, for the order: its diagonal (the first entry of each of its lower triangle's
   * columns) at the model's initial configuration and t = 0, not at this record's: the
   * order, and so the reactions' last bits, are then the same in a run and in its restart
   * from any record (a run restarted assembles the same q0) */
  double *diag = malloc((size_t)m->ncon * sizeof(double));
  mbsStatus ast = diag ? assemble(s, m, d, m->q0, 0.0, err) : MBS_ERR_NOMEM;
  if (ast == MBS_OK) {
    for (int j = 0; j < m->ncon; j++) {
      diag[j] = s->s_val[s->s_colptr[j]];
    }
    ast = chol_analyse(s, diag, err);
  } else if (ast == MBS_ERR_NOMEM) {
    mbs_error_set(err, ast, NULL, 0, 0, "out of memory (Schur complement)");
  }
  free(diag);
  if (ast != MBS_OK) {
    mbs_schur_destroy(s);
    return NULL;
  }
  return s;
}

/* y = (M^-1 (x) I3) restricted to block c, on a dense piece (3k values, node by node) */
static void block_apply(const mbsSchur *s, int c, const double *g, double *y) {
  int k = s->comp_start[c + 1] - s->comp_start[c];
  const double *inv = s->inv + s->comp_inv[c];
  if (k == 1) {
    /* a node of its own: the loop's sums (from 0.0, so a -0.0 product gives 0.0 alike) */
    double w = inv[0];
    y[0] = 0.0 + w * g[0];
    y[1] = 0.0 + w * g[1];
    y[2] = 0.0 + w * g[2];
    return;
  }
  for (int a = 0; a < k; a++) {
    double y0 = 0.0, y1 = 0.0, y2 = 0.0;
    for (int b = 0; b < k; b++) {
      double w = inv[a * k + b];
      y0 += w * g[3 * b];
      y1 += w * g[3 * b + 1];
      y2 += w * g[3 * b + 2];
    }
    y[3 * a] = y0;
    y[3 * a + 1] = y1;
    y[3 * a + 2] = y2;
  }
}

/* S at (q, t) into s_val (where pair_pos says) */
static mbsStatus assemble(mbsSchur *s, const mbsModel *m, mbsData *d, const double *q, double t,
                          mbsError *err) {
  if (d->sys->n != m->nq + m->ncon) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "the system has a dynamic tail");
  }
  /* G at (q, t), in the pattern of create; the largest |g| on the way, as
   * mbs_constraint_violation takes it (the same g of the same walk) */
  mbsRowIter it;
  double worst = 0.0;
  s->at_valid = 0;
  s->factored = 0;
  for (mbs_rows_begin(&it, m, q, t, 1, d->ework); mbs_rows_next(&it);) {
    int r = it.row, p = s->g_ptr[r];
    if (it.nz != s->g_ptr[r + 1] - p || memcmp(it.idx, s->g_idx + p, (size_t)it.nz * sizeof(int))) {
      return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "row %d changed its pattern", r);
    }
    memcpy(s->g_val + p, it.val, (size_t)it.nz * sizeof(double));
    if (!(fabs(it.g) <= worst) && !isnan(worst)) {
      worst = fabs(it.g);
    }
  }
  s->violation = worst;
  /* the pieces of G and of G M^-1 on each block */
  int nrc = s->rc_ptr[s->ncon];
  memset(s->gblk, 0, (size_t)s->nblk * sizeof(double));
  for (int e = 0; e < s->g_ptr[s->ncon]; e++) {
    s->gblk[s->g_pos[e]] += s->g_val[e];
  }
  for (int p = 0; p < nrc; p++) {
    int c = s->rc_comp[p];
    const double *g = s->gblk + s->rc_off[p];
    double *y = s->yblk + s->rc_off[p];
    if (s->comp_start[c + 1] - s->comp_start[c] == 1) {
      /* a node of its own: block_apply's sums without the call */
      double w = s->inv[s->comp_inv[c]];
      y[0] = 0.0 + w * g[0];
      y[1] = 0.0 + w * g[1];
      y[2] = 0.0 + w * g[2];
      continue;
    }
    block_apply(s, c, g, y);
  }
  /* S_ij = sum over the blocks both rows touch of G_i,c M_c^-1 G_j,c^T, over the nodes of
   * the block that row i has entries on (its piece is 0 elsewhere: the terms left out are
   * exact zeros, so the sum is the one over the whole piece, bit for bit; a rigid body's
   * rows d_i . d_j touch two of its four nodes) */
  memset(s->s_val, 0, (size_t)s->s_colptr[s->ncon] * sizeof(double));
  for (int k = 0; k < s->npair; k++) {
    const double *gi = s->gblk + s->pair_goff[k], *yj = s->yblk + s->pair_yoff[k];
    double sum = 0.0;
    unsigned nodes = s->pair_nodes[k];
    if (nodes == 1u) {
      /* a block of one node (a body whose reference point is its centre of mass has a
       * diagonal M: every node is a block), the same sum without the loop */
      sum += gi[0] * yj[0];
      sum += gi[1] * yj[1];
      sum += gi[2] * yj[2];
    } else {
      for (int l = 0; nodes; l += 3, nodes >>= 1) {
        if (nodes & 1u) {
          sum += gi[l] * yj[l];
          sum += gi[l + 1] * yj[l + 1];
          sum += gi[l + 2] * yj[l + 2];
        }
      }
    }
    s->s_val[s->pair_pos[k]] += sum;
  }
  return MBS_OK;
}

mbsStatus mbs_schur_factor(mbsSchur *s, const mbsModel *m, mbsData *d, const double *q, double t,
                           mbsError *err) {
  mbsStatus st = assemble(s, m, d, q, t, err);
  if (st == MBS_OK) {
    st = chol_factor(s, err);
  }
  if (st == MBS_OK) {
    memcpy(s->q_at, q, (size_t)s->nq * sizeof(double));
    s->t_at = t;
    s->at_valid = 1;
  }
  return st;
}

int mbs_schur_at(const mbsSchur *s, const double *q, double t) {
  return s && s->at_valid && s->t_at == t && !memcmp(s->q_at, q, (size_t)s->nq * sizeof(double));
}

double mbs_schur_violation(const mbsSchur *s) {
  return s->violation;
}

const double *mbs_schur_row(const mbsSchur *s, int row, const int **idx, int *nz) {
  *idx = s->g_idx + s->g_ptr[row];
  *nz = s->g_ptr[row + 1] - s->g_ptr[row];
  return s->g_val + s->g_ptr[row];
}

/* x (nq) = M^-1 b, block by block */
static void mass_solve(const mbsSchur *s, const double *b, double *x) {
  double g[3 * SCHUR_MAXK], y[3 * SCHUR_MAXK];
  for (int c = 0; c < s->ncomp; c++) {
    int k = s->comp_start[c + 1] - s->comp_start[c];
    const int *node = s->comp_node + s->comp_start[c];
    if (k == 1) {
      /* a node of its own: block_apply's sums in place, without the copies */
      double w = s->inv[s->comp_inv[c]];
      const double *bn = b + 3 * node[0];
      double *xn = x + 3 * node[0];
      xn[0] = 0.0 + w * bn[0];
      xn[1] = 0.0 + w * bn[1];
      xn[2] = 0.0 + w * bn[2];
      continue;
    }
    for (int a = 0; a < k; a++) {
      memcpy(g + 3 * a, b + 3 * node[a], 3 * sizeof(double));
    }
    block_apply(s, c, g, y);
    for (int a = 0; a < k; a++) {
      memcpy(x + 3 * node[a], y + 3 * a, 3 * sizeof(double));
    }
  }
}

mbsStatus mbs_schur_solve(mbsSchur *s, const mbsModel *m, const double *b, double *x,
                          mbsError *err) {
  int nq = m->nq, nc = m->ncon;
  /* S y = G M^-1 b - c */
  mass_solve(s, b, s->w1);
  for (int r = 0; r < nc; r++) {
    double sum = 0.0;
    for (int e = s->g_ptr[r]; e < s->g_ptr[r + 1]; e++) {
      sum += s->g_val[e] * s->w1[s->g_idx[e]];
    }
    s->w2[r] = sum - b[nq + r];
  }
  if (!s->factored) {
    return mbs_error_set(err, MBS_ERR_LINSOLVE, NULL, 0, 0, "Cholesky: solve before factorization");
  }
  mbsStatus st = chol_solve(s, s->w2, s->w3, err);
  if (st != MBS_OK) {
    return st;
  }
  /* x = M^-1 (b - G^T y) */
  memcpy(s->w1, b, (size_t)nq * sizeof(double));
  for (int r = 0; r < nc; r++) {
    double yr = s->w3[r];
    for (int e = s->g_ptr[r]; e < s->g_ptr[r + 1]; e++) {
      s->w1[s->g_idx[e]] -= s->g_val[e] * yr;
    }
  }
  mass_solve(s, s->w1, x);
  memcpy(x + nq, s->w3, (size_t)nc * sizeof(double));
  return MBS_OK;
}

double mbs_schur_velocity_residual(const mbsSchur *s, const mbsModel *m, const double *q,
                                   const double *v, double t, double *r) {
  double worst = 0.0;
  /* quadratic rows: node by node, as the walk lists them (entries 3k .. 3k+2: node k) */
  for (int row = 0; row < m->nrow; row++) {
    double sum = 0.0;
    for (int e = s->g_ptr[row]; e < s->g_ptr[row + 1]; e += 3) {
      sum += vdot(s->g_val + e, v + s->g_idx[e]);
    }
    if (r) {
      r[row] = sum;
    }
    worst = fmax(worst, fabs(sum));
  }
  /* element rows: the element's rates g_t, once for all its rows */
  double gt[MBS_ELEM_MAXCON], gdd[MBS_ELEM_MAXCON];
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->ncon == 0) {
      continue;
    }
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    memset(gt, 0, sizeof(gt));
    if (kind->constraint_rates) {
      kind->constraint_rates(m, el, q, v, t, gt, gdd);
    }
    for (int c = 0; c < el->ncon; c++) {
      int row = el->con0 + c;
      double sum = gt[c];
      for (int e = s->g_ptr[row]; e < s->g_ptr[row + 1]; e++) {
        sum += s->g_val[e] * v[s->g_idx[e]];
      }
      if (r) {
        r[row] = sum;
      }
      worst = fmax(worst, fabs(sum));
    }
  }
  return worst;
}
