/* system.h: the linear system of the Newton iteration, owned by the solver (internal).
 *
 * Built from the model's structure when the run data is created (mbs_data_create), it
 * holds the sparsity pattern of the Newton matrix in CSC, the scatter maps that put each
 * mass, constraint and element entry into its slot, and the sparse LU (linsolve.h).
 *
 * Unknowns, in order:
 *   - the fixed part: nstage temporal nodes (stages), each a spatial block of
 *     nsp = nq + ncon unknowns [dq; dt^2 lambda]; unknown i of stage s is s nsp + i. A
 *     block (s, s') of the matrix is present where the caller's coupling says so (the
 *     diagonal always) and carries the whole spatial pattern (or, mbs_system_create_parts,
 *     the parts of it the caller names per block). nstage = 1 is the one-step
 *     schemes' system, with the pattern and slot order it always had.
 *   - the dynamic tail: ntail further rows and columns (contacts), after the fixed part,
 *     whose entries the caller sets per step (mbs_system_set_tail). Its entries couple a
 *     tail row or column to anything; entries between two fixed unknowns belong to the fixed
 *     part. The LU is re-analysed only when the tail's structure changes.
 *
 * Element maps have variable length: element e's dense nq x nq block (row-major) has its
 * slots at elem_jmap + elem_joff[e], a constraint element's G (row c, coordinate i) and G^T
 * at elem_gmap + elem_goff[e] + (c nq + i) 2 (+ 1 for G^T). Maps of block (0, 0) are the
 * arrays named here; those of another block through mbs_system_block_maps. */
#ifndef MBS_SOLVER_SYSTEM_H
#define MBS_SOLVER_SYSTEM_H

#include "mbsim/model.h"
#include "util/linsolve.h"

/* the scatter maps of one (s, s') block: CSC slots, -1 where nothing goes */
typedef struct {
  int *mass_map;  /* (nmass x 6) slots of the 3 diagonal entries of the (a,b) block, then
                     of (b,a); -1 when a == b */
  int *con_gmap;  /* rows' G (row, 3k+c) then G^T (3k+c, row), c = 0..2, for k < nnode:
                     row r at con_goff[r] + 6 k */
  int *con_hmap;  /* (npair x 3) slots of the diagonal of Hessian block (k, l) */
  int *elem_jmap; /* element e's nq x nq block at elem_joff[e] */
  int *elem_gmap; /* constraint element e's G, G^T at elem_goff[e] */
} mbsSystemMaps;

typedef struct mbsSystem {
  /* sizes */
  int nq, ncon;           /* spatial: coordinates, constraint rows */
  int nmass, nrow, nelem; /* the model's mass entries, quadratic rows, elements */
  int nsp;                /* nq + ncon: unknowns of one stage */
  int nstage;             /* temporal nodes of the fixed part */
  int full_diag;          /* 1: the diagonal of every unknown, constraint rows too, is in
                             the pattern (mbs_system_create_full) */
  int nblock;             /* present (s, s') blocks, numbered by s, then s' */
  int *block_start;       /* (nstage + 1) the blocks of row stage s are block_start[s] ..
                             block_start[s + 1] - 1 (mbs_system_block finds one) */
  int *block_stage;       /* (nblock) column stage s' of each block, ascending per row */
  int *block_parts;       /* (nblock) MBS_PART_ bits of each block (MBS_PART_ALL, with
                             MBS_PART_CON_DIAG if full_diag, but mbs_system_create_parts') */
  int nfix;               /* nstage nsp: unknowns of the fixed part */
  int nfix_nnz;           /* entries of the fixed part */
  int n;                  /* unknowns now: nfix + ntail */
  int nnz;                /* entries now */
  int n_max, nnz_max;     /* capacity: with the largest tail (size of res, dx and jac) */

  /* the pattern now (fixed part, then the tail), CSC, arrays of capacity n_max + 1 and
   * nnz_max; the LU references them */
  int *colptr, *rowind;

  /* Hessian pairs of the quadratic rows (stage-independent): row r's pairs are
   * con_hstart[r] .. con_hstart[r + 1] - 1, local nodes (con_hk, con_hl) with the constant
   * coefficient s (wa_k wb_l + wb_k wa_l) != 0 */
  int npair;
  int *con_hstart; /* (nrow + 1) */
  int *con_hk, *con_hl;
  double *con_hcoef;

  /* offsets of the variable-length maps (the same in every block) */
  int *con_goff;  /* (nrow + 1) into con_gmap */
  int *elem_joff; /* (nelem + 1) into elem_jmap */
  int *elem_goff; /* (nelem + 1) into elem_gmap */
  int *elem_nq;   /* (nelem) coordinates of each element (the row length of its map) */
  int map_len;    /* ints of one block's maps */

  /* maps of every block (nblock), and block (0, 0)'s under the usual names */
  mbsSystemMaps *maps;
  int *mass_map, *con_gmap, *con_hmap, *elem_jmap, *elem_gmap;

  /* element scratch (d->ework): the largest element, and its layout: 4 matrix blocks of
   * eblock doubles (H, Fq, Fv, Ge), then vectors of evec doubles */
  int elem_maxq, elem_maxcon;
  int eblock;    /* elem_maxq x max(elem_maxq, elem_maxcon) */
  int evec;      /* max(elem_maxq, elem_maxcon) */
  int ework_len; /* 4 eblock + 4 evec */

  /* the dynamic tail */
  int ntail, tail_max;        /* rows/columns now, capacity */
  int tail_nnz, tail_nnz_max; /* entries now, capacity */
  int *tail_row, *tail_col;   /* (tail_nnz_max) the tail's entries, sorted by column */
  int *tail_srow, *tail_scol; /* (tail_nnz_max) scratch of set_tail */
  int *tail_colnnz;           /* (n_max + 1) scratch of set_tail: entries per column */
  int *pool;     /* the maps of all blocks (nblock map_len), slots of the pattern now */
  int *pool_fix; /* the same in slots of the fixed pattern (NULL without a tail capacity) */
  int *fix_colptr, *fix_rowind; /* the fixed pattern (aliases of colptr/rowind without a
                                   tail capacity) */
  int *fix_col; /* (nfix_nnz) column of each fixed slot (NULL without a tail capacity) */

  /* the LU and its counters */
  mbsLinsolve *ls;
  mbsLinsolve *kkt_ls; /* the records' KKT matrix [M G^T; G 0] (consistent.c) on the same
                          pattern, with its own numeric factorization and pivots, so that a
                          record never touches the Newton matrix's */
  long tail_changes;   /* set_tail calls that changed the structure */
} mbsSystem;

/* Build the system of model m (m->linear_solver's LU): nstage >= 1 temporal nodes with
 * couple[s nstage + s'] != 0 where stage s's equations involve stage s''s unknowns (NULL:
 * all-to-all; the diagonal is always present), and room for a tail of up to tail_max rows
 * and columns with tail_nnz_max entries (0, 0: no tail). NULL and err filled on failure.
 * The system keeps no pointer into m. */
mbsSystem *mbs_system_create(const mbsModel *m, int nstage, const int *couple, int tail_max,
                             int tail_nnz_max, mbsError *err);

/* the same with full_diag = 1: every unknown's diagonal, also of the constraint rows, is in
 * every present block's pattern (space-time: stages whose constraint unknowns are unused
 * carry an identity there); its slots through mbs_system_slot */
mbsSystem *mbs_system_create_full(const mbsModel *m, int nstage, const int *couple, int tail_max,
                                  int tail_nnz_max, int full_diag, mbsError *err);

/* the parts of the spatial pattern a block (s, s') carries (mbs_system_create_parts): bits */
enum {
  MBS_PART_DIAG = 1 << 0,     /* the coordinates' diagonal (i, i), i < nq */
  MBS_PART_CON_DIAG = 1 << 1, /* the constraint rows' diagonal (nq + r, nq + r) */
  MBS_PART_MASS = 1 << 2,     /* the mass blocks M^ab I3 */
  MBS_PART_G = 1 << 3,        /* G: (nq + r, q) of quadratic rows and constraint elements */
  MBS_PART_GT = 1 << 4,       /* G^T: (q, nq + r) */
  MBS_PART_HESS = 1 << 5,     /* quadratic rows' Hessian blocks, the nq x nq block of every
                                 element but a linear potential's (d/dq) */
  MBS_PART_FORCE_V = 1 << 6,  /* the nq x nq blocks of the elements with a force (d/dv) */
  MBS_PART_LINEAR = 1 << 7,   /* the (zero) nq x nq blocks of linear potentials (gravity) */
  /* what a block of mbs_system_create carries (the pattern the LU was always analysed for) */
  MBS_PART_ALL =
      MBS_PART_DIAG | MBS_PART_MASS | MBS_PART_G | MBS_PART_GT | MBS_PART_HESS | MBS_PART_LINEAR
};

/* the same without a tail, block (s[k], s2[k]) carrying the MBS_PART_ bits parts[k], k <
 * nentry (repeats or-ed; parts 0 adds nothing); the other blocks are absent but the
 * diagonal ones (MBS_PART_DIAG). A staged system whose stages couple only through some of the
 * spatial terms (space-time: the kinematic rows only through the coordinates' diagonal) gets
 * a sparser pattern and LU, and memory linear in its blocks (a dense coupling takes nstage^2
 * ints). Map entries of terms a block does not carry are -1 (or the slot of the same entry
 * of a part it carries). */
mbsSystem *mbs_system_create_parts(const mbsModel *m, int nstage, int nentry, const int *s,
                                   const int *s2, const int *parts, mbsError *err);

/* the Hessian coefficients of the quadratic rows from m->con again, after joints that engage
 * and release changed their rows (the pattern holds every pair of their rows) */
void mbs_system_refresh_rows(mbsSystem *sys, const mbsModel *m);

/* release (accepts NULL); destroys its LU */
void mbs_system_destroy(mbsSystem *sys);

/* Set the dynamic tail: ntail rows and columns after the fixed part, with nent entries
 * (row[k], col[k]) (global indices < nfix + ntail; each with a row or a column in the tail;
 * any order, repeats allowed). Allocates nothing. When the structure differs from the last
 * one, the pattern and every map are rebuilt and the next factorization re-analyses;
 * otherwise nothing changes. *changed (may be NULL) says which. MBS_ERR_LINSOLVE for an
 * entry out of range or beyond the capacity. The values (d->jac) must be reassembled
 * after a change: slots move. */
mbsStatus mbs_system_set_tail(mbsSystem *sys, int ntail, int nent, const int *row, const int *col,
                              int *changed, mbsError *err);

/* slot of (row, col) in the pattern now, -1 if absent (binary search: not for the step loop's
 * fixed part, whose maps hold the slots) */
int mbs_system_slot(const mbsSystem *sys, int row, int col);

/* index b of block (s, s') (its maps are maps[b]), -1 if absent (a binary search) */
int mbs_system_block(const mbsSystem *sys, int s, int s2);

/* maps of block (s, s'), NULL if the block is absent */
const mbsSystemMaps *mbs_system_block_maps(const mbsSystem *sys, int s, int s2);

/* symbolic analyses the LU has done (1 after the first factorization; one more after every
 * change of the tail's structure) */
long mbs_system_analyses(const mbsSystem *sys);

/* unknown i (< nsp) of stage s */
static inline int mbs_system_index(const mbsSystem *sys, int s, int i) {
  return s * sys->nsp + i;
}

/* element e's nq x nq slot map (block (0, 0)), and the slot of its entry (i, j) */
static inline const int *mbs_system_elem_jmap(const mbsSystem *sys, int e) {
  return sys->elem_jmap + sys->elem_joff[e];
}
static inline int mbs_system_elem_slot(const mbsSystem *sys, int e, int i, int j) {
  return sys->elem_jmap[sys->elem_joff[e] + i * sys->elem_nq[e] + j];
}
/* constraint element e's G/G^T map: G (c, i) at [(c nq + i) 2], G^T at [(c nq + i) 2 + 1] */
static inline const int *mbs_system_elem_gmap(const mbsSystem *sys, int e) {
  return sys->elem_gmap + sys->elem_goff[e];
}
/* quadratic row r's G/G^T map: node k, component c: G at [6 k + c], G^T at [6 k + 3 + c] */
static inline const int *mbs_system_con_gmap(const mbsSystem *sys, int r) {
  return sys->con_gmap + sys->con_goff[r];
}

#endif
