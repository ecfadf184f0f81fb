/* redundancy.c: redundant constraint rows, found before they make the Newton matrix singular,
 * dropped when they repeat the others, refused when they conflict.
 *
 * A planar four-bar built from four revolute joints in 3D is the classic case: its 20 joint
 * equations on 3 links hold only 17 independent ones (the out-of-plane equations of the
 * loop repeat), so the constraint Jacobian G loses rank and [M G^T; G 0] is singular at
 * every configuration. A sparse QR of G^T that reveals its rank (SuiteSparseQR, Heath's
 * method: a column whose remaining norm is below the tolerance is "dead", it adds no pivot)
 * with the columns in a fixed order (rigidity rows, joint rows in deck order, then the rows
 * of prescribed motions) marks the rows that repeat earlier ones. Such a row of a joint holds
 * wherever the rows it repeats hold, so it is dropped: the Newton system is built without
 * it. A prescribed motion's row that repeats others is refused: the loop already fixes that
 * joint, and the motion would either be ignored or fight the joints.
 *
 * The multipliers of a loop with dropped rows are not unique: any self-equilibrated set of
 * forces in the loop's joints can be added. mbs_model_min_norm_reactions picks the set of
 * least norm, using the body-joint graph's 2-edge-connected components (Tarjan's bridges)
 * to find the rows of the loop. Ground and fixed bodies are one static vertex. */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SuiteSparseQR_C.h>

#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "util/vec3.h"

/* Rank tolerance. Each row of G is scaled to unit 2-norm before the QR, so a row is dead
 * when less than RANK_TOL of it is independent of the rows before it. Rows that repeat
 * exactly (the planar loop's out-of-plane rows) leave only rounding, at most about 1e-16
 * times the growth of the factorization (1e-31 measured on decks/four_bar.yaml along its
 * run); an independent row leaves the sine of its angle to the span of the rows before it
 * (the smallest pivot of the shipped four-bars is 0.41), which stays above 1e-3 for a
 * mechanism not within about a millidegree of a singular (dead-centre) position. 1e-9 sits
 * between them with six decades on either side, and matches the tolerance with which the
 * compiler checks joints and velocities at t = 0. */
#define RANK_TOL 1e-9
/* a dropped row must hold at t = 0: |g| below this times the model's size */
#define HOLD_TOL 1e-9
/* at run time the loop's rows must still repeat: what remains of a dropped row after
 * projecting out the kept ones, relative to its norm (above it: a singular position) */
#define REPEAT_TOL 1e-6
/* the move along the loop's motion that checks a repeated row repeats wherever the loop is
 * (only_here): its size relative to the model's, and the rank tolerance after it */
#define MOVE_H 1e-3
#define MOVED_TOL 3e-5
/* the dense loop block of the minimum-norm reactions: rows x columns at most */
#define MAX_DENSE 1000000L

/* ---- the body-joint graph: vertex 0 is static (ground, fixed bodies), body b is b + 1 ---- */

typedef struct {
  int nv, ne;
  int *eu, *ev;          /* (ne) end vertices of joint e */
  int *start, *adj, *ae; /* CSR adjacency: neighbours adj[start[v] .. start[v+1]) by joint ae */
} Graph;

/* the graph's vertices are the attachment frames, all static ones merged into vertex 0 (the
 * ground): a body's frame is 1 + b, a beam node's one of its own */
static int vertex(const mbsModel *m, int f) {
  return m->attach_node[f] < 0 ? 0 : f;
}

static int find(int *parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

/* bridge[e] = 1 for joints on no cycle (iterative Tarjan lowlink; parallel joints between
 * the same two bodies form a cycle) */
static int find_bridges(const Graph *g, int *bridge) {
  int *disc = malloc((size_t)g->nv * sizeof(int));
  int *low = malloc((size_t)g->nv * sizeof(int));
  int *sv = malloc((size_t)g->nv * sizeof(int)); /* stack: vertex, */
  int *se = malloc((size_t)g->nv * sizeof(int)); /* the joint it was reached by, */
  int *si = malloc((size_t)g->nv * sizeof(int)); /* its next adjacency slot */
  if (!disc || !low || !sv || !se || !si) {
    free(disc);
    free(low);
    free(sv);
    free(se);
    free(si);
    return -1;
  }
  for (int v = 0; v < g->nv; v++) {
    disc[v] = -1;
  }
  int time = 0;
  for (int root = 0; root < g->nv; root++) {
    if (disc[root] >= 0) {
      continue;
    }
    int top = 0;
    sv[0] = root;
    se[0] = -1;
    si[0] = g->start[root];
    disc[root] = low[root] = time++;
    while (top >= 0) {
      int v = sv[top];
      if (si[top] < g->start[v + 1]) {
        int k = si[top]++;
        int w = g->adj[k], e = g->ae[k];
        if (e == se[top]) {
          continue;
        }
        if (disc[w] < 0) {
          disc[w] = low[w] = time++;
          top++;
          sv[top] = w;
          se[top] = e;
          si[top] = g->start[w];
        } else if (disc[w] < low[v]) {
          low[v] = disc[w];
        }
        continue;
      }
      /* v is done: its lowlink goes to its parent; a joint up to a parent that v's subtree
       * cannot get around is a bridge */
      top--;
      if (top >= 0) {
        int p = sv[top];
        if (low[v] < low[p]) {
          low[p] = low[v];
        }
        if (low[v] > disc[p]) {
          bridge[se[top + 1]] = 1;
        }
      }
    }
  }
  free(disc);
  free(low);
  free(sv);
  free(se);
  free(si);
  return 0;
}

/* compv (nattach): the 2-edge-connected component of each vertex (its root vertex);
 * compj (njoint): that of each joint on a cycle, -1 for a bridge. Returns -1 out of memory. */
static int loop_components(const mbsModel *m, int *compv, int *compj) {
  Graph g;
  memset(&g, 0, sizeof(g));
  g.nv = m->nattach;
  g.ne = m->njoint;
  int ne = g.ne > 0 ? g.ne : 1;
  g.eu = malloc((size_t)ne * sizeof(int));
  g.ev = malloc((size_t)ne * sizeof(int));
  g.start = calloc((size_t)g.nv + 1, sizeof(int));
  g.adj = malloc((size_t)(2 * ne) * sizeof(int));
  g.ae = malloc((size_t)(2 * ne) * sizeof(int));
  int *bridge = calloc((size_t)ne, sizeof(int));
  int *parent = malloc((size_t)g.nv * sizeof(int));
  int *deg = calloc((size_t)g.nv + 1, sizeof(int));
  int rc = -1;
  if (!g.eu || !g.ev || !g.start || !g.adj || !g.ae || !bridge || !parent || !deg) {
    goto done;
  }
  for (int e = 0; e < g.ne; e++) {
    g.eu[e] = vertex(m, m->joint_attach[2 * e]);
    g.ev[e] = vertex(m, m->joint_attach[2 * e + 1]);
    g.start[g.eu[e] + 1]++;
    g.start[g.ev[e] + 1]++;
  }
  for (int v = 0; v < g.nv; v++) {
    g.start[v + 1] += g.start[v];
  }
  for (int e = 0; e < g.ne; e++) {
    int u = g.eu[e], v = g.ev[e];
    g.adj[g.start[u] + deg[u]] = v;
    g.ae[g.start[u] + deg[u]++] = e;
    g.adj[g.start[v] + deg[v]] = u;
    g.ae[g.start[v] + deg[v]++] = e;
  }
  if (find_bridges(&g, bridge) < 0) {
    goto done;
  }
  /* the ends of every joint on a cycle belong together */
  for (int v = 0; v < g.nv; v++) {
    parent[v] = v;
  }
  for (int e = 0; e < g.ne; e++) {
    if (!bridge[e]) {
      parent[find(parent, g.eu[e])] = find(parent, g.ev[e]);
    }
  }
  for (int v = 0; v < g.nv; v++) {
    compv[v] = find(parent, v);
  }
  for (int e = 0; e < g.ne; e++) {
    compj[e] = bridge[e] ? -1 : compv[g.eu[e]];
  }
  rc = 0;
done:
  free(g.eu);
  free(g.ev);
  free(g.start);
  free(g.adj);
  free(g.ae);
  free(bridge);
  free(parent);
  free(deg);
  return rc;
}

/* ---- finding the rows that repeat: SuiteSparseQR of G^T ---- */

/* the joint that owns global row r (quadratic rows, then element rows), -1 for rigidity or
 * an element of no joint; *elem = 1 for element rows */
static int row_owner(const mbsModel *m, int r, int *elem) {
  *elem = r >= m->nrow;
  if (r < m->nrow) {
    return m->con[r].joint;
  }
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (r >= el->con0 && r < el->con0 + el->ncon) {
      return el->joint;
    }
  }
  return -1;
}

/* close one column of gradient_columns: its n distinct rows idx (values in scatter, which is
 * cleared again) scaled to unit norm, rows sorted as CHOLMOD promises with sorted = 1;
 * returns the next free entry */
static SuiteSparse_long finish_column(int *idx, int n, double *scatter, SuiteSparse_long *Ai,
                                      double *Ax, SuiteSparse_long p) {
  double norm = 0.0;
  for (int i = 0; i < n; i++) {
    norm += scatter[idx[i]] * scatter[idx[i]];
  }
  norm = norm > 0.0 ? 1.0 / sqrt(norm) : 0.0;
  for (int i = 1; i < n; i++) {
    for (int j = i; j > 0 && idx[j - 1] > idx[j]; j--) {
      int s = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = s;
    }
  }
  for (int i = 0; i < n; i++) {
    Ai[p] = idx[i];
    Ax[p++] = scatter[idx[i]] * norm;
    scatter[idx[i]] = 0.0;
  }
  return p;
}

/* A = G(q, t)^T (nq x ncon, column r = row r scaled to unit norm), as CHOLMOD CSC; NULL when
 * out of memory. scatter (nq) is scratch, zero on entry and exit; mark (nq) scratch, -1 on
 * entry (the last column that touched each coordinate). */
static cholmod_sparse *gradient_columns(const mbsModel *m, const double *q, double t,
                                        double *scatter, int *mark, cholmod_common *cc) {
  size_t nnz = 0;
  for (int r = 0; r < m->nrow; r++) {
    nnz += 3 * (size_t)m->con[r].nnode;
  }
  for (int k = 0; k < m->nelem; k++) {
    nnz += (size_t)m->elem[k].ncon * (size_t)m->elem[k].nq;
  }
  cholmod_sparse *A =
      cholmod_l_allocate_sparse((size_t)m->nq, (size_t)m->ncon, nnz + 1, 1, 1, 0, CHOLMOD_REAL, cc);
  if (!A) {
    return NULL;
  }
  SuiteSparse_long *Ap = A->p, *Ai = A->i;
  double *Ax = A->x;
  int nidx = m->elem_maxq > 3 * MBS_CON_MAXNODE ? m->elem_maxq : 3 * MBS_CON_MAXNODE;
  int *idx = malloc((size_t)nidx * sizeof(int));
  double *work = malloc(mbs_rows_work_size(m) * sizeof(double));
  if (!idx || !work) {
    free(idx);
    free(work);
    cholmod_l_free_sparse(&A, cc);
    return NULL;
  }
  SuiteSparse_long p = 0;
  int col = 0;
  /* every row, quadratic and of constraint elements, in the global order */
  mbsRowIter it;
  for (mbs_rows_begin(&it, m, q, t, 1, work); mbs_rows_next(&it); col++) {
    assert(it.row == col && it.nz <= nidx);
    Ap[col] = p;
    int n = 0;
    for (int e = 0; e < it.nz; e++) {
      int qi = it.idx[e];
      if (mark[qi] != col) {
        mark[qi] = col;
        idx[n++] = qi;
      }
      scatter[qi] += it.val[e];
    }
    p = finish_column(idx, n, scatter, Ai, Ax, p);
  }
  assert(col == m->ncon);
  Ap[col] = p;
  free(idx);
  free(work);
  return A;
}

/* the value of global row r at (q, t) */
static double row_value(const mbsModel *m, int r, const double *q, double t) {
  double g[MBS_ELEM_MAXCON];
  return mbs_row_value(m, r, q, t, g);
}

/* Rows that repeat the others only at q: a loop that starts at a singular position (a dead
 * centre, or a change point where its links line up) loses rank there only, and a row
 * dropped there would not hold once the loop moves. So the loop is moved along a tangent of
 * its scleronomic kept rows, q1 = q + h v with G_kept(q) v = 0 (v the part of a fixed
 * pseudo-random vector that the kept rows allow, by a least-squares solve with G_kept^T), and
 * factorized again. At q1 a row that repeats the others wherever the loop is still repeats
 * them up to the curvature of the constraints, O(h^2) (exactly, for a planar loop moving in
 * its plane), while a row that repeats them only at q has moved away by O(h): with
 * h = 1e-3 of the model's size the tolerance MOVED_TOL = 3e-5 ~ h^1.5 lies between the two.
 * *gone = the first row dead at q but not at q1, or -1. Returns -1 when out of memory. */
static int only_here(const mbsModel *m, const double *q, double t, const cholmod_sparse *A,
                     const int *dead, double *scatter, int *mark, cholmod_common *cc, int *gone) {
  const SuiteSparse_long *Ap = A->p, *Ai = A->i;
  const double *Ax = A->x;
  cholmod_sparse *K = NULL, *A1 = NULL, *R1 = NULL;
  cholmod_dense *W = NULL, *X = NULL;
  SuiteSparse_long *E1 = NULL;
  double *q1 = NULL;
  int rc = -1, nk = 0;
  size_t nnz = 0;
  *gone = -1;
  for (int r = 0; r < m->nrow; r++) {
    if (!dead[r]) {
      nk++;
      nnz += (size_t)(Ap[r + 1] - Ap[r]);
    }
  }
  K = cholmod_l_allocate_sparse((size_t)m->nq, (size_t)nk, nnz + 1, 1, 1, 0, CHOLMOD_REAL, cc);
  W = cholmod_l_allocate_dense((size_t)m->nq, 1, (size_t)m->nq, CHOLMOD_REAL, cc);
  q1 = malloc((size_t)m->nq * sizeof(double));
  if (!K || !W || !q1) {
    goto done;
  }
  SuiteSparse_long *Kp = K->p, *Ki = K->i, p = 0;
  double *Kx = K->x;
  for (int r = 0, c = 0; r < m->nrow; r++) {
    if (dead[r]) {
      continue;
    }
    Kp[c++] = p;
    for (SuiteSparse_long k = Ap[r]; k < Ap[r + 1]; k++) {
      Ki[p] = Ai[k];
      Kx[p++] = Ax[k];
    }
  }
  Kp[nk] = p;
  /* a fixed pseudo-random vector (the result does not depend on the run) */
  double *w = W->x;
  unsigned long long s = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < m->nq; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    w[i] = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
  }
  X = SuiteSparseQR_C_backslash(SPQR_ORDERING_DEFAULT, SPQR_DEFAULT_TOL, K, W, cc);
  if (!X) {
    goto done;
  }
  /* v = w - K x: what is left of w normal to every kept row */
  const double *x = X->x;
  for (int c = 0; c < nk; c++) {
    for (SuiteSparse_long k = Kp[c]; k < Kp[c + 1]; k++) {
      w[Ki[k]] -= Kx[k] * x[c];
    }
  }
  double vmax = 0.0, size = 1.0;
  for (int i = 0; i < m->nq; i++) {
    vmax = fmax(vmax, fabs(w[i]));
    size = fmax(size, fabs(q[i]));
  }
  if (!(vmax > 1e-9)) {
    rc = 0; /* the kept rows allow no motion: nothing moves away */
    goto done;
  }
  for (int i = 0; i < m->nq; i++) {
    q1[i] = q[i] + MOVE_H * size / vmax * w[i];
  }
  A1 = gradient_columns(m, q1, t, scatter, mark, cc);
  if (!A1) {
    goto done;
  }
  SuiteSparse_long rank = SuiteSparseQR_C(SPQR_ORDERING_FIXED, MOVED_TOL, 0, 0, A1, NULL, NULL,
                                          NULL, NULL, &R1, &E1, NULL, NULL, NULL, cc);
  if (rank < 0 || !R1 || E1) {
    goto done;
  }
  const SuiteSparse_long *Rp = R1->p, *Ri = R1->i;
  const double *Rx = R1->x;
  int nlive = 0;
  for (int j = 0; j < m->ncon; j++) {
    int live = 0;
    for (SuiteSparse_long k = Rp[j]; k < Rp[j + 1]; k++) {
      live |= Ri[k] == nlive && Rx[k] != 0.0;
    }
    nlive += live;
    if (live && dead[j] && *gone < 0) {
      *gone = j;
    }
  }
  rc = 0;
done:
  cholmod_l_free_sparse(&K, cc);
  cholmod_l_free_sparse(&A1, cc);
  cholmod_l_free_sparse(&R1, cc);
  cholmod_l_free_dense(&W, cc);
  cholmod_l_free_dense(&X, cc);
  if (E1) {
    cholmod_l_free((size_t)m->ncon, sizeof(SuiteSparse_long), E1, cc);
  }
  free(q1);
  return rc;
}

/* the suggestion for n joint equations to free in a loop of revolute joints */
static const char *free_suggestion(int n) {
  switch (n) {
    case 1:
      return "e.g. replace one revolute joint by a cylindrical joint (frees 1)";
    case 2:
      return "e.g. replace one revolute joint by a spherical joint (frees 2)";
    case 3:
      return "e.g. replace one revolute joint by a spherical joint (frees 2) and another by a "
             "cylindrical joint (frees 1), as in decks/slider_crank.yaml";
    default:
      return "e.g. replace revolute joints by spherical (frees 2) and cylindrical joints "
             "(frees 1), as in decks/slider_crank.yaml";
  }
}

/* the refusal: the joints of the loop, how many equations repeat, which of them cannot be
 * dropped and what to change */
static mbsStatus report(const mbsModel *m, const int *loop, int ndep, int nrow_joints, double t,
                        int motion_joint, int bad_row, double bad_value, mbsError *err) {
  char names[600], why[700];
  size_t k = 0;
  int first = -1, count = 0;
  names[0] = '\0';
  for (int j = 0; j < m->njoint; j++) {
    if (!loop[j]) {
      continue;
    }
    if (first < 0) {
      first = j;
    }
    count++;
    int w = snprintf(names + k, sizeof(names) - k, "%s'%s' (%s)", k ? ", " : "", m->joint_name[j],
                     mbs_joint_type_word(m->joint_type[j]));
    if (w < 0 || (size_t)w >= sizeof(names) - k) {
      snprintf(names + sizeof(names) - 5, 5, "...");
      break;
    }
    k += (size_t)w;
  }
  if (motion_joint >= 0) {
    snprintf(why, sizeof(why),
             " The prescribed motion of joint '%s' is one of them: the loop's other joints and "
             "motions already fix that joint, so its motion conflicts with them (it cannot be "
             "dropped, it would be ignored). Remove the motion of '%s', or prescribe the motion "
             "of a single joint of the loop",
             m->joint_name[motion_joint], m->joint_name[motion_joint]);
  } else {
    const mbsConRow *row = &m->con[bad_row];
    snprintf(why, sizeof(why),
             " Joint '%s' row %d is one of them but does not hold at t = %g (residual %.3g), so "
             "it conflicts with the others instead of repeating them. Free %d equation%s of the "
             "loop without adding motion: %s, replace a link and its two joints by one distance "
             "joint, or remove a joint that repeats another",
             row->joint >= 0 ? m->joint_name[row->joint] : "?", row->jrow + 1, t, bad_value, ndep,
             ndep == 1 ? "" : "s", free_suggestion(ndep));
  }
  mbsMark mark = first >= 0 ? m->joint_mark[first] : (mbsMark){0, 0};
  return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, mark.line, mark.col,
                       "the constraints are redundant: joint%s %s close%s a loop in which %d of "
                       "the %d joint equations repeat the others at t = %g, so the Newton matrix "
                       "would be singular.%s",
                       count == 1 ? "" : "s", names, count == 1 ? "s" : "", ndep, nrow_joints, t,
                       why);
}

/* remove the dead quadratic rows from con into m->drop; renumber joints and elements */
static int compact(mbsModel *m, const int *dead, int ndead) {
  m->drop = malloc((size_t)ndead * sizeof(mbsConRow));
  if (!m->drop) {
    return -1;
  }
  int w = 0;
  m->ndrop = 0;
  for (int r = 0; r < m->nrow; r++) {
    if (dead[r]) {
      m->drop[m->ndrop++] = m->con[r];
    } else {
      m->con[w++] = m->con[r];
    }
  }
  m->nrow = w;
  for (int j = 0; j < m->njoint; j++) {
    m->joint_ncon[j] = 0;
    m->joint_con[j] = m->nrow;
  }
  for (int r = m->nrow - 1; r >= 0; r--) {
    int j = m->con[r].joint;
    if (j >= 0) {
      m->joint_con[j] = r;
      m->joint_ncon[j]++;
    }
  }
  mbs_model_number_rows(m);
  return 0;
}

/* the frame whose rigidity a row (joint < 0) is: a body's, or a beam node's (found from its
 * nodes); -1 for none */
static int rigidity_frame(const mbsModel *m, const mbsConRow *row) {
  if (row->body >= 0) {
    return m->body_attach[row->body];
  }
  for (int i = 0; i < m->nbeam; i++) {
    const mbsBeam *b = &m->beam[i];
    int k = row->node[0] - b->node0;
    if (row->nnode > 0 && k >= 0 && k < 4 * b->nnode) {
      return b->attach0 + k / 4;
    }
  }
  return -1;
}

/* the loop block of the minimum-norm reactions: the kept rows of the loops that hold
 * dropped rows (rigidity of their bodies, then their joints' rows) and their coordinates */
static int loop_block(mbsModel *m) {
  int *compv = malloc((size_t)(m->nattach) * sizeof(int));
  int *compj = malloc((size_t)(m->njoint > 0 ? m->njoint : 1) * sizeof(int));
  int *want = calloc((size_t)(m->nattach), sizeof(int));
  int rc = -1;
  if (!compv || !compj || !want || loop_components(m, compv, compj) < 0) {
    goto done;
  }
  int any = 0;
  for (int a = 0; a < m->ndrop; a++) {
    int j = m->drop[a].joint;
    if (compj[j] >= 0) {
      want[compj[j]] = 1;
      any = 1;
    }
  }
  /* and the loops of the union graph that a joint that engages or releases closes: a phase
   * may drop rows there (mbs_model_phase_redundant) */
  for (int j = 0; j < m->njoint; j++) {
    if (mbs_joint_switches(m, j) && compj[j] >= 0) {
      want[compj[j]] = 1;
      any = 1;
    }
  }
  if (!any) {
    rc = 0; /* no loop can hold a dropped row: no block */
    goto done;
  }
  m->red_row = malloc((size_t)(m->nrow > 0 ? m->nrow : 1) * sizeof(int));
  m->red_colmap = malloc((size_t)m->nq * sizeof(int));
  if (!m->red_row || !m->red_colmap) {
    goto done;
  }
  for (int i = 0; i < m->nq; i++) {
    m->red_colmap[i] = -1;
  }
  m->red_nrow = m->red_ncol = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int r = 0; r < m->nrow; r++) {
      const mbsConRow *row = &m->con[r];
      int rf = row->joint < 0 ? rigidity_frame(m, row) : -1;
      int in = pass == 0 ? (rf >= 0 && want[compv[rf]])
                         : (row->joint >= 0 && compj[row->joint] >= 0 && want[compj[row->joint]]);
      if (in) {
        m->red_row[m->red_nrow++] = r;
      }
    }
  }
  for (int i = 0; i < m->red_nrow + m->ndrop; i++) {
    const mbsConRow *row = i < m->red_nrow ? &m->con[m->red_row[i]] : &m->drop[i - m->red_nrow];
    for (int k = 0; k < row->nnode; k++) {
      for (int c = 0; c < 3; c++) {
        int qi = 3 * row->node[k] + c;
        if (m->red_colmap[qi] < 0) {
          m->red_colmap[qi] = m->red_ncol++;
        }
      }
    }
  }
  long ns = m->red_nrow, nd = m->ndrop, nc = m->red_ncol;
  if ((ns + nd) * nc > MAX_DENSE) {
    m->red_nrow = 0; /* too large to handle densely: the reduced system's reactions */
    m->red_nwork = 0;
  } else if (m->nengage > 0) {
    /* a phase moves rows of the block from kept to dropped: the largest split's need */
    long nt = ns + nd;
    m->red_nwork = (int)(2 * nt * nc + 3 * nt * nt + 3 * nt);
  } else {
    m->red_nwork =
        (int)((ns + nd) * nc + ns * nc + ns * ns + 2 * (ns + nd) + nd * (ns + nd) + nd * nd + nd);
  }
  rc = 0;
done:
  free(compv);
  free(compj);
  free(want);
  return rc;
}

/* 1 if global row r is a zero row of a released joint (or one dropped in this phase) */
static int row_off(const mbsModel *m, int r) {
  return r < m->nrow && mbs_row_released(m, r);
}

/* The rows that repeat the others at (q, t), into dead (ncon, zeroed on entry; *ndead of
 * them): every row except the zero rows of released joints, which take no part (their zero
 * columns in the QR are dead and move nothing). Refusals (MBS_ERR_MODEL): a repeated motion
 * row, a repeated joint row that does not hold, a repeated row that repeats the others only
 * at q, a repeated rigidity row; MBS_ERR_NOMEM. */
static mbsStatus find_dead(const mbsModel *m, const double *q, double t, int *dead, int *ndead_out,
                           mbsError *err) {
  *ndead_out = 0;
  if (m->ncon == 0 || m->njoint < 2) {
    return MBS_OK; /* a loop needs two joints */
  }
  /* only joints that close a loop can repeat rows: the rows of a joint that is a bridge of the
   * body-joint graph act on a subtree it alone holds, and a rigid motion of that subtree shows
   * they are independent of all others. A tree needs no QR. */
  {
    int *compv = malloc((size_t)(m->nattach) * sizeof(int));
    int *compj = malloc((size_t)m->njoint * sizeof(int));
    int cycle = 0;
    if (!compv || !compj || loop_components(m, compv, compj) < 0) {
      free(compv);
      free(compj);
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
    }
    for (int j = 0; j < m->njoint; j++) {
      cycle |= compj[j] >= 0;
    }
    free(compv);
    free(compj);
    if (!cycle) {
      return MBS_OK;
    }
  }
  cholmod_common cc;
  cholmod_sparse *A = NULL, *R = NULL;
  SuiteSparse_long *E = NULL;
  double *scatter = NULL, *b = NULL, *y = NULL;
  int *live_col = NULL, *loop = NULL, *mark = NULL;
  mbsStatus st = MBS_OK;
  int started = cholmod_l_start(&cc);
  cc.print = 0;
  scatter = calloc((size_t)m->nq, sizeof(double));
  mark = malloc((size_t)m->nq * sizeof(int));
  live_col = malloc((size_t)m->ncon * sizeof(int));
  loop = calloc((size_t)m->njoint, sizeof(int));
  b = malloc((size_t)m->ncon * sizeof(double));
  y = malloc((size_t)m->ncon * sizeof(double));
  if (!started || !scatter || !mark || !live_col || !loop || !b || !y) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
    goto done;
  }
  for (int i = 0; i < m->nq; i++) {
    mark[i] = -1;
  }
  A = gradient_columns(m, q, t, scatter, mark, &cc);
  if (!A) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
    goto done;
  }
  /* fixed ordering: the columns are factorized in the order given, so a dead column repeats
   * the columns before it (rigidity before joints before motions) */
  SuiteSparse_long rank = SuiteSparseQR_C(SPQR_ORDERING_FIXED, RANK_TOL, 0, 0, A, NULL, NULL, NULL,
                                          NULL, &R, &E, NULL, NULL, NULL, &cc);
  int permuted = 0;
  for (int k = 0; E && k < m->ncon; k++) {
    permuted |= E[k] != k;
  }
  if (rank < 0 || !R || permuted) {
    st = mbs_error_set(
        err, rank < 0 && cc.status == CHOLMOD_OUT_OF_MEMORY ? MBS_ERR_NOMEM : MBS_ERR_MODEL, NULL,
        0, 0, "the rank of the constraint Jacobian could not be found (%s)",
        rank < 0 ? "SuiteSparseQR failed" : "unexpected column permutation");
    goto done;
  }
  if (rank >= m->ncon) {
    goto done;
  }

  /* R is "squeezed": rank x ncon, a live column j has its pivot in row k = (live columns
   * before j), a dead column has entries above that row only */
  SuiteSparse_long *Rp = R->p, *Ri = R->i;
  double *Rx = R->x;
  int nlive = 0, ndead = 0;
  for (int j = 0; j < m->ncon; j++) {
    int live = 0;
    for (SuiteSparse_long p = Rp[j]; p < Rp[j + 1]; p++) {
      live |= Ri[p] == nlive && Rx[p] != 0.0;
    }
    if (live) {
      live_col[nlive++] = j;
    } else {
      dead[j] = 1;
      ndead++;
    }
  }
  if (ndead == 0) {
    goto done; /* no dead column after all: a singular matrix is reported by the solver */
  }

  /* each dead row: the rows it repeats (back substitution in the live columns) give the
   * joints of its loop; it may be dropped if it is a joint row that holds at (q, t) */
  double size = 1.0;
  for (int i = 0; i < m->nq; i++) {
    size = fmax(size, fabs(q[i]));
  }
  int motion_joint = -1, bad_row = -1;
  double bad_value = 0.0;
  for (int r = 0; r < m->ncon; r++) {
    if (!dead[r] || row_off(m, r)) {
      continue;
    }
    int is_elem, owner = row_owner(m, r, &is_elem);
    double gr = row_value(m, r, q, t);
    int refuse = is_elem || owner < 0 || !(fabs(gr) <= HOLD_TOL * size);
    if (!refuse) {
      continue;
    }
    for (int k = 0; k < nlive; k++) {
      b[k] = 0.0;
    }
    for (SuiteSparse_long p = Rp[r]; p < Rp[r + 1]; p++) {
      b[Ri[p]] = Rx[p];
    }
    double ymax = 0.0;
    for (int k = nlive - 1; k >= 0; k--) {
      int j = live_col[k];
      double diag = 0.0;
      for (SuiteSparse_long p = Rp[j]; p < Rp[j + 1]; p++) {
        diag = Ri[p] == k ? Rx[p] : diag;
      }
      y[k] = b[k] / diag;
      for (SuiteSparse_long p = Rp[j]; p < Rp[j + 1]; p++) {
        b[Ri[p]] -= y[k] * Rx[p];
      }
      ymax = fmax(ymax, fabs(y[k]));
    }
    if (owner >= 0) {
      loop[owner] = 1;
    }
    for (int k = 0; k < nlive; k++) {
      int e, o = row_owner(m, live_col[k], &e);
      if (o >= 0 && fabs(y[k]) > 1e-6 * ymax) {
        loop[o] = 1;
      }
    }
    if (is_elem && owner >= 0 && motion_joint < 0) {
      motion_joint = owner;
    } else if (!is_elem && owner >= 0 && bad_row < 0 && motion_joint < 0) {
      bad_row = r;
      bad_value = gr;
    }
  }
  if (motion_joint >= 0 || bad_row >= 0) {
    /* count the loop's equations and those of them that repeat */
    int nrow_joints = 0, ndep = 0;
    for (int r = 0; r < m->ncon; r++) {
      int e, o = row_owner(m, r, &e);
      if (o >= 0 && loop[o] && !row_off(m, r)) {
        nrow_joints++;
        ndep += dead[r];
      }
    }
    st = report(m, loop, ndep, nrow_joints, t, motion_joint, bad_row, bad_value, err);
    goto done;
  }
  int nlive_dead = 0;
  for (int r = 0; r < m->ncon; r++) {
    nlive_dead += dead[r] && !row_off(m, r);
  }
  if (nlive_dead == 0) {
    for (int r = 0; r < m->ncon; r++) {
      dead[r] = 0; /* only the zero rows of released joints */
    }
    goto done;
  }
  int gone = -1;
  if (only_here(m, q, t, A, dead, scatter, mark, &cc, &gone) < 0) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
    goto done;
  }
  if (gone >= 0) {
    int e, j = row_owner(m, gone, &e);
    mbsMark mk = m->joint_mark[j];
    st = mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, mk.line, mk.col,
                       "the constraints are redundant only here: joint '%s' row %d repeats the "
                       "others at t = %g but not once the loop moves, so the loop starts at a "
                       "singular position (a dead centre, or a change point where its links line "
                       "up) and the Newton matrix would be singular; start the mechanism away "
                       "from that position%s",
                       m->joint_name[j], m->con[gone].jrow + 1, t,
                       t > 0.0 ? " (or engage the joints that close the loop elsewhere)" : "");
    goto done;
  }
  /* the zero rows of released joints are no part of the phase */
  for (int r = 0; r < m->nrow; r++) {
    if (dead[r] && row_off(m, r)) {
      dead[r] = 0;
      ndead--;
    }
  }
  for (int r = 0; r < m->ncon; r++) {
    int e;
    if (dead[r] && row_owner(m, r, &e) < 0) {
      /* a dead rigidity row or a row of no joint: not a loop, cannot be dropped */
      st = mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, 0, 0,
                         "the constraints are redundant: %d of the %d constraint rows repeat the "
                         "others at t = %g, so the Newton matrix would be singular",
                         ndead, m->ncon, t);
      goto done;
    }
  }
  *ndead_out = ndead;

done:
  cholmod_l_free_sparse(&A, &cc);
  cholmod_l_free_sparse(&R, &cc);
  if (E) {
    cholmod_l_free((size_t)m->ncon, sizeof(SuiteSparse_long), E, &cc);
  }
  if (started) {
    cholmod_l_finish(&cc);
  }
  free(scatter);
  free(mark);
  free(live_col);
  free(loop);
  free(b);
  free(y);
  return st;
}

/* the engagement state of joint j (model.h joint_engage) */
static double *engage_state(const mbsModel *m, int j) {
  return m->joint_engage + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j;
}

/* mark the repeated rows of switching joints as dropped for the phase (joint_engage [14]),
 * clearing them in dead; returns how many are left in dead */
static int mark_phase(const mbsModel *m, int *dead, int ndead) {
  for (int r = 0; r < m->nrow; r++) {
    int j = m->con[r].joint;
    if (dead[r] && j >= 0 && mbs_joint_switches(m, j)) {
      double *es = engage_state(m, j);
      es[14] = (double)((unsigned)es[14] | 1u << m->con[r].jrow);
      dead[r] = 0;
      ndead--;
    }
  }
  for (int j = 0; j < m->njoint; j++) {
    if (mbs_joint_switches(m, j) && engage_state(m, j)[14] != 0.0) {
      mbs_model_joint_apply(m, j);
    }
  }
  return ndead;
}

mbsStatus mbs_model_drop_redundant(mbsModel *m, const double *q, double t, mbsError *err) {
  int *dead = calloc((size_t)(m->ncon > 0 ? m->ncon : 1), sizeof(int)), ndead = 0;
  if (!dead) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
  }
  mbsStatus st = find_dead(m, q, t, dead, &ndead, err);
  if (st == MBS_OK && ndead > 0 && m->nengage > 0) {
    /* a switching joint's repeated rows are dropped for the first phase only; its state of
     * t = 0 (which every run starts from) keeps them */
    ndead = mark_phase(m, dead, ndead);
    for (int j = 0; j < m->njoint; j++) {
      m->joint_engage0[(size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j + 14] = engage_state(m, j)[14];
    }
  }
  if (st == MBS_OK && ndead > 0 && compact(m, dead, ndead) < 0) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory dropping redundant rows");
  }
  if (st == MBS_OK && (m->ndrop > 0 || m->nengage > 0) && loop_block(m) < 0) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory dropping redundant rows");
  }
  free(dead);
  return st;
}

mbsStatus mbs_model_phase_redundant(const mbsModel *m, const double *q, double t, mbsError *err) {
  /* the rows dropped in the phase before come back */
  for (int j = 0; j < m->njoint; j++) {
    if (mbs_joint_switches(m, j) && engage_state(m, j)[14] != 0.0) {
      engage_state(m, j)[14] = 0.0;
      mbs_model_joint_apply(m, j);
    }
  }
  int *dead = calloc((size_t)(m->ncon > 0 ? m->ncon : 1), sizeof(int)), ndead = 0;
  if (!dead) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
  }
  mbsStatus st = find_dead(m, q, t, dead, &ndead, err);
  if (st == MBS_OK && ndead > 0) {
    ndead = mark_phase(m, dead, ndead);
  }
  /* what is left is a row of a joint that holds all the time (rows that repeated at t = 0
   * were removed then): its loop has come to a singular position */
  for (int r = 0; st == MBS_OK && ndead > 0 && r < m->ncon; r++) {
    int e, j = row_owner(m, r, &e);
    if (dead[r] && j >= 0) {
      mbsMark mk = m->joint_mark[j];
      st = mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, mk.line, mk.col,
                         "the constraints are redundant at t = %g: joint '%s' row %d repeats the "
                         "others where the joints that hold now meet, but it holds all the time "
                         "(its loop is at a singular position, a dead centre or a change point), "
                         "so the Newton matrix would be singular",
                         t, m->joint_name[j], m->con[r].jrow + 1);
    }
  }
  free(dead);
  return st;
}

int mbs_model_describe_phase_dropped(const mbsModel *m, char *buf, size_t n) {
  size_t k = 0;
  if (n > 0) {
    buf[0] = '\0';
  }
  for (int j = 0; j < m->njoint && m->nengage > 0; j++) {
    unsigned mask = (unsigned)engage_state(m, j)[14];
    int first = 1;
    for (int i = 0; i < MBS_ELEM_MAXCON; i++) {
      if (!(mask >> i & 1u)) {
        continue;
      }
      char *at = k < n ? buf + k : NULL;
      size_t left = k < n ? n - k : 0;
      int w = first ? snprintf(at, left, "%sjoint '%s' row%s %d", k > 0 ? "; " : "",
                               m->joint_name[j], mask >> (i + 1) ? "s" : "", i + 1)
                    : snprintf(at, left, ", %d", i + 1);
      if (w < 0) {
        return (int)k;
      }
      k += (size_t)w;
      first = 0;
    }
  }
  return (int)k;
}

int mbs_model_describe_dropped(const mbsModel *m, char *buf, size_t n) {
  size_t k = 0;
  if (n > 0) {
    buf[0] = '\0';
  }
  for (int a = 0; a < m->ndrop; a++) {
    const mbsConRow *row = &m->drop[a];
    int same = a > 0 && m->drop[a - 1].joint == row->joint;
    int more = a + 1 < m->ndrop && m->drop[a + 1].joint == row->joint;
    int w;
    if (same) {
      w = snprintf(k < n ? buf + k : NULL, k < n ? n - k : 0, ", %d", row->jrow + 1);
    } else {
      int multi = more;
      w = snprintf(k < n ? buf + k : NULL, k < n ? n - k : 0, "%sjoint '%s' row%s %d",
                   a > 0 ? "; " : "", m->joint_name[row->joint], multi ? "s" : "", row->jrow + 1);
    }
    if (w < 0) {
      break;
    }
    k += (size_t)w;
  }
  return (int)k;
}

/* ---- minimum-norm reactions ---- */

/* the gradient of row into the dense block row a (red_ncol), zeroed first */
static void block_row(const mbsModel *m, const mbsConRow *row, const double *q, double *a) {
  double grad[3 * MBS_CON_MAXNODE];
  memset(a, 0, (size_t)m->red_ncol * sizeof(double));
  mbs_con_eval(row, q, grad);
  for (int k = 0; k < row->nnode; k++) {
    for (int c = 0; c < 3; c++) {
      int j = m->red_colmap[3 * row->node[k] + c];
      if (j >= 0) {
        a[j] += grad[3 * k + c];
      }
    }
  }
}

/* row i of the block (min_norm_reactions' list: a row of con, of m->drop or rebuilt) */
static const mbsConRow *list_row(const mbsModel *m, const int *list, const mbsConRow *rebuilt,
                                 int i) {
  int v = list[i];
  if (v >= 0) {
    return &m->con[v];
  }
  return -1 - v < m->ndrop ? &m->drop[-1 - v] : &rebuilt[-1 - v - m->ndrop];
}

/* force and torque on frame b about p of the nt rows of the list of joint j weighted by
 * -delta */
static void resultant(const mbsModel *m, const int *list, const mbsConRow *rebuilt, int nt, int j,
                      int b, const double *q, const double *p, const double *delta, double out[6]) {
  double grad[3 * MBS_CON_MAXNODE], gen[4][3];
  memset(gen, 0, sizeof(gen));
  int n0 = m->attach_node[b], rigid = mbs_attach_nnode(m->attach_kind[b]) == 4;
  for (int i = 0; i < nt; i++) {
    const mbsConRow *row = list_row(m, list, rebuilt, i);
    if (row->joint != j || delta[i] == 0.0) {
      continue;
    }
    mbs_con_eval(row, q, grad);
    for (int k = 0; k < row->nnode; k++) {
      int li = row->node[k] - n0;
      if (li >= 0 && li < 4 && (li == 0 || rigid)) {
        vaxpy(gen[li], -delta[i], grad + 3 * k);
      }
    }
  }
  double arm[3], t[3];
  vcopy(out, gen[0]);
  vsub(arm, q + 3 * n0, p);
  vcross(out + 3, arm, gen[0]);
  if (rigid) {
    for (int i = 1; i < 4; i++) {
      vcross(t, q + 3 * (n0 + i), gen[i]);
      vaxpy(out + 3, 1.0, t);
    }
  }
}

int mbs_model_min_norm_reactions(const mbsModel *m, const double *q, double t, const double *mu,
                                 double scale, double *reaction, double *work, int *list,
                                 mbsConRow *rebuilt) {
  (void)t; /* the loop's rows are joint rows, independent of time */
  /* the block's rows of this phase: kept (list >= 0, rows of con), then dropped (list < 0:
   * those of t = 0, then the rows a phase dropped, rebuilt from their joints' state); the
   * rows of released joints take no part */
  int ns = 0, nreb = 0, nc = m->red_ncol;
  for (int k = 0; k < m->red_nrow; k++) {
    int r = m->red_row[k];
    if (!mbs_row_released(m, r)) {
      list[ns++] = r;
    } else if (mbs_joint_holds(m, m->con[r].joint) &&
               mbs_model_joint_held_row(m, m->con[r].joint, m->con[r].jrow, &rebuilt[nreb]) == 0) {
      nreb++;
    }
  }
  int nd = m->ndrop + nreb, nt = ns + nd;
  for (int a = 0; a < nd; a++) {
    list[ns + a] = -1 - a;
  }
  if (nd == 0 || ns == 0) {
    return 0;
  }
  double *A = work;                 /* (nt x nc) the rows: kept, then dropped */
  double *Q = A + (size_t)nt * nc;  /* (ns x nc) orthonormal basis of the kept rows */
  double *Rt = Q + (size_t)ns * nc; /* (ns x ns) Rt[i ns + k]: kept row k on q_i */
  double *x = Rt + (size_t)ns * ns; /* (nt) coefficients */
  double *lam = x + nt;             /* (nt) multipliers of the block's rows */
  double *N = lam + nt;             /* (nd x nt) self-equilibrated sets */
  double *C = N + (size_t)nd * nt;  /* (nd x nd) N N^T */
  double *c = C + (size_t)nd * nd;  /* (nd) */
  for (int i = 0; i < nt; i++) {
    block_row(m, list_row(m, list, rebuilt, i), q, A + (size_t)i * nc);
  }

  /* Gram-Schmidt of the kept rows (twice: Kahan's "twice is enough"), then each dropped
   * row = sum_k y_k kept_k: the set e_drop - sum_k y_k e_k is self-equilibrated */
  for (int r = 0; r < nt; r++) {
    const double *a = A + (size_t)r * nc;
    double *v = r < ns ? Q + (size_t)r * nc : A + (size_t)r * nc;
    int nb = r < ns ? r : ns;
    double na = 0.0;
    for (int k = 0; k < nc; k++) {
      na += a[k] * a[k];
    }
    na = sqrt(na);
    if (r < ns) {
      memcpy(v, a, (size_t)nc * sizeof(double));
    }
    for (int i = 0; i < nb; i++) {
      x[i] = 0.0;
    }
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < nb; i++) {
        const double *qi = Q + (size_t)i * nc;
        double d = 0.0;
        for (int k = 0; k < nc; k++) {
          d += qi[k] * v[k];
        }
        for (int k = 0; k < nc; k++) {
          v[k] -= d * qi[k];
        }
        x[i] += d;
      }
    }
    double nv = 0.0;
    for (int k = 0; k < nc; k++) {
      nv += v[k] * v[k];
    }
    nv = sqrt(nv);
    if (r < ns) {
      if (!(nv > RANK_TOL * na)) {
        return -1; /* the kept rows lost rank here: a singular position */
      }
      for (int k = 0; k < nc; k++) {
        v[k] /= nv;
      }
      for (int i = 0; i < r; i++) {
        Rt[(size_t)i * ns + r] = x[i];
      }
      Rt[(size_t)r * ns + r] = nv;
      continue;
    }
    if (!(nv <= REPEAT_TOL * na)) {
      return -1; /* the dropped row no longer repeats the kept ones */
    }
    /* back substitution: y = Rt^-1 x, into row a = r - ns of N */
    double *n = N + (size_t)(r - ns) * nt;
    for (int i = ns - 1; i >= 0; i--) {
      double s = x[i];
      for (int j = i + 1; j < ns; j++) {
        s -= Rt[(size_t)i * ns + j] * x[j];
      }
      x[i] = s / Rt[(size_t)i * ns + i];
    }
    for (int i = 0; i < nt; i++) {
      n[i] = 0.0;
    }
    for (int i = 0; i < ns; i++) {
      /* rigidity multipliers are free: only the joint rows' part counts in the norm */
      n[i] = m->con[list[i]].joint >= 0 ? -x[i] : 0.0;
    }
    n[r] = 1.0;
  }

  /* least norm: lam - N^T (N N^T)^-1 N lam over the joint rows (dropped ones at zero) */
  for (int i = 0; i < nt; i++) {
    lam[i] = i < ns ? scale * mu[list[i]] : 0.0;
  }
  for (int a = 0; a < nd; a++) {
    const double *na = N + (size_t)a * nt;
    double s = 0.0;
    for (int i = 0; i < nt; i++) {
      s += na[i] * lam[i];
    }
    c[a] = s;
    for (int b = 0; b <= a; b++) {
      const double *nb = N + (size_t)b * nt;
      double d = 0.0;
      for (int i = 0; i < nt; i++) {
        d += na[i] * nb[i];
      }
      C[(size_t)a * nd + b] = d;
    }
  }
  /* Cholesky of C (positive definite: each row has its own dropped row's 1), solve C c = c */
  for (int a = 0; a < nd; a++) {
    for (int b = 0; b <= a; b++) {
      double s = C[(size_t)a * nd + b];
      for (int k = 0; k < b; k++) {
        s -= C[(size_t)a * nd + k] * C[(size_t)b * nd + k];
      }
      if (a == b) {
        if (!(s > 0.0)) {
          return -1;
        }
        C[(size_t)a * nd + a] = sqrt(s);
      } else {
        C[(size_t)a * nd + b] = s / C[(size_t)b * nd + b];
      }
    }
  }
  for (int a = 0; a < nd; a++) {
    double s = c[a];
    for (int k = 0; k < a; k++) {
      s -= C[(size_t)a * nd + k] * c[k];
    }
    c[a] = s / C[(size_t)a * nd + a];
  }
  for (int a = nd - 1; a >= 0; a--) {
    double s = c[a];
    for (int k = a + 1; k < nd; k++) {
      s -= C[(size_t)k * nd + a] * c[k];
    }
    c[a] = s / C[(size_t)a * nd + a];
  }
  /* the change of the multipliers, delta = -N^T c, into x */
  for (int i = 0; i < nt; i++) {
    x[i] = 0.0;
  }
  for (int a = 0; a < nd; a++) {
    for (int i = 0; i < nt; i++) {
      x[i] -= N[(size_t)a * nt + i] * c[a];
    }
  }

  /* and of the loop joints' reactions, as mbs_joint_reactions computes them */
  for (int j = 0; j < m->njoint; j++) {
    int has = 0;
    for (int i = 0; i < nt && !has; i++) {
      has = list_row(m, list, rebuilt, i)->joint == j && x[i] != 0.0;
    }
    if (!has) {
      continue;
    }
    int f1 = m->joint_attach[2 * j], f2 = m->joint_attach[2 * j + 1];
    double p[3], out[6];
    mbs_attach_point(m, f2, m->joint_point + 3 * j, q, p);
    if (m->attach_node[f2] >= 0) {
      resultant(m, list, rebuilt, nt, j, f2, q, p, x, out);
    } else {
      /* body 2 is static: minus what the joint exerts on body 1 */
      resultant(m, list, rebuilt, nt, j, f1, q, p, x, out);
      for (int i = 0; i < 6; i++) {
        out[i] = -out[i];
      }
    }
    for (int i = 0; i < 6; i++) {
      reaction[6 * j + i] += out[i];
    }
  }
  return 0;
}
