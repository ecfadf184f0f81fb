/* redundancy.c: redundant joint constraints, found before they make the Newton matrix
 * singular.
 *
 * A planar four-bar built from four revolute joints in 3D is the classic case: its 20 joint
 * equations on 3 links hold only 17 independent ones, so the constraint Jacobian G loses
 * rank and [M G^T; G 0] is singular at every configuration. Only joints that close a loop
 * can do that: the rows of a joint that is a bridge of the body-joint graph (removing it
 * splits the graph) act on a subtree that it alone holds, and a rigid motion of that
 * subtree shows they are independent of all other rows. So the joints are split into the
 * graph's 2-edge-connected components (Tarjan's bridges, iteratively), and for each
 * component with a loop the rows of its joints and the rigidity rows of its bodies are
 * orthogonalised one by one (modified Gram-Schmidt, twice). A row that leaves nothing is
 * redundant; the rows it repeats (from the triangular factor) name the joints of the loop.
 * Ground and fixed bodies are one static vertex without coordinates. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/model.h"

/* a component larger than this (rows x columns of its dense block) is not analysed: the
 * orthogonalisation costs rows x columns x rank, about a second at this size */
#define MAX_DENSE 1000000L
/* a row is redundant when orthogonalisation leaves less than this part of it */
#define RANK_TOL 1e-9

/* the graph: vertex 0 is static (ground, fixed bodies), body b is vertex b + 1 */
typedef struct {
  int nv, ne;
  int *eu, *ev;          /* (ne) end vertices of joint e */
  int *start, *adj, *ae; /* CSR adjacency: neighbours adj[start[v] .. start[v+1]) by joint ae */
} Graph;

static int vertex(const mbsModel *m, int b) {
  return (b < 0 || m->body_node[b] < 0) ? 0 : b + 1;
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

/* one component: its rows as dense gradients over the coordinates they touch */
typedef struct {
  int nrow, ncol;
  int *owner;   /* (nrow) joint of each row, -1 for rigidity */
  double *a;    /* (nrow x ncol) gradients */
  int *colmap;  /* (nq) global coordinate -> column, -1 */
  int *col;     /* (ncol) column -> global coordinate */
  double *grad; /* scratch for element rows */
} Block;

static int colof(Block *b, int qi) {
  if (b->colmap[qi] < 0) {
    b->colmap[qi] = b->ncol;
    b->col[b->ncol++] = qi;
  }
  return b->colmap[qi];
}

/* Gram-Schmidt on the rows of b in order: d[r] = 1 for a row that repeats earlier ones, and
 * for each such row the earlier rows it is made of get used[...] = 1. Returns the number of
 * redundant rows, -1 when out of memory. */
static int redundant_rows(Block *b, int *dep, int *used) {
  int n = b->nrow, c = b->ncol, rank = 0, ndep = 0;
  double *Q = malloc((size_t)n * (size_t)c * sizeof(double)); /* orthonormal basis rows */
  double *R = calloc((size_t)n * (size_t)n, sizeof(double));  /* R[i n + j]: row j on q_i */
  int *which = malloc((size_t)n * sizeof(int));               /* basis i came from row */
  double *x = malloc((size_t)n * sizeof(double));
  if (!Q || !R || !which || !x) {
    free(Q);
    free(R);
    free(which);
    free(x);
    return -1;
  }
  for (int r = 0; r < n; r++) {
    double *v = Q + (size_t)rank * (size_t)c;
    const double *a = b->a + (size_t)r * (size_t)c;
    double na = 0.0;
    for (int k = 0; k < c; k++) {
      v[k] = a[k];
      na += a[k] * a[k];
    }
    na = sqrt(na);
    dep[r] = 0;
    if (na == 0.0) {
      continue; /* a row without gradient here (its coordinates are elsewhere) */
    }
    /* project out the basis, twice (Kahan's "twice is enough") */
    for (int i = 0; i < rank; i++) {
      x[i] = 0.0;
    }
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i < rank; i++) {
        const double *qi = Q + (size_t)i * (size_t)c;
        double d = 0.0;
        for (int k = 0; k < c; k++) {
          d += qi[k] * v[k];
        }
        for (int k = 0; k < c; k++) {
          v[k] -= d * qi[k];
        }
        x[i] += d;
      }
    }
    double nv = 0.0;
    for (int k = 0; k < c; k++) {
      nv += v[k] * v[k];
    }
    nv = sqrt(nv);
    if (nv > RANK_TOL * na) {
      for (int k = 0; k < c; k++) {
        v[k] /= nv;
      }
      for (int i = 0; i < rank; i++) {
        R[(size_t)i * (size_t)n + (size_t)rank] = x[i];
      }
      R[(size_t)rank * (size_t)n + (size_t)rank] = nv;
      which[rank++] = r;
      continue;
    }

    /* a = sum_i x_i q_i: solve R y = x for the earlier rows it combines (back substitution) */
    dep[r] = 1;
    ndep++;
    used[r] = 1;
    double ymax = 0.0;
    for (int i = rank - 1; i >= 0; i--) {
      double s = x[i];
      for (int j = i + 1; j < rank; j++) {
        s -= R[(size_t)i * (size_t)n + (size_t)j] * x[j];
      }
      x[i] = s / R[(size_t)i * (size_t)n + (size_t)i];
      ymax = fmax(ymax, fabs(x[i]));
    }
    for (int i = 0; i < rank; i++) {
      if (fabs(x[i]) > 1e-6 * ymax) {
        used[which[i]] = 1;
      }
    }
  }
  free(Q);
  free(R);
  free(which);
  free(x);
  return ndep;
}

typedef enum { FILL_COUNT, FILL_COLUMNS, FILL_VALUES } FillMode;

/* the rows of component comp: rigidity rows of its bodies, then, joint by joint, the
 * quadratic rows and the rows of constraint elements the joint owns (motion drives).
 * FILL_COUNT returns their number, FILL_COLUMNS assigns the columns of the coordinates they
 * touch, FILL_VALUES writes the gradients at (q, t) into b->a (nrow x ncol). */
static int fill_block(const mbsModel *m, const double *q, double t, const int *compj,
                      const int *compv, int comp, Block *b, FillMode mode) {
  double grad[3 * MBS_CON_MAXNODE];
  int n = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int r = 0; r < m->nrow; r++) {
      const mbsConRow *row = &m->con[r];
      int in = pass == 0 ? (row->joint < 0 && row->body >= 0 && compv[row->body + 1] == comp)
                         : (row->joint >= 0 && compj[row->joint] == comp);
      if (!in) {
        continue;
      }
      if (mode == FILL_VALUES) {
        mbs_con_eval(row, q, grad);
        b->owner[n] = row->joint;
      }
      for (int k = 0; mode != FILL_COUNT && k < row->nnode; k++) {
        for (int c = 0; c < 3; c++) {
          int j = colof(b, 3 * row->node[k] + c);
          if (mode == FILL_VALUES) {
            b->a[(size_t)n * (size_t)b->ncol + (size_t)j] += grad[3 * k + c];
          }
        }
      }
      n++;
    }
  }
  for (int e = 0; e < m->nelem; e++) {
    const mbsElem *el = &m->elem[e];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (el->ncon <= 0 || el->joint < 0 || compj[el->joint] != comp || !kind->constraint) {
      continue;
    }
    if (mode == FILL_VALUES) {
      double g[MBS_ELEM_MAXCON];
      kind->constraint(m, el, q, t, g, b->grad);
    }
    for (int c = 0; mode != FILL_COUNT && c < el->ncon; c++) {
      if (mode == FILL_VALUES) {
        b->owner[n + c] = el->joint;
      }
      for (int i = 0; i < el->nq; i++) {
        int j = colof(b, el->qidx[i]);
        if (mode == FILL_VALUES) {
          b->a[(size_t)(n + c) * (size_t)b->ncol + (size_t)j] += b->grad[c * el->nq + i];
        }
      }
    }
    n += el->ncon;
  }
  return n;
}

/* the message: the joints of the loop, how many equations repeat, what to change */
static mbsStatus report(const mbsModel *m, const int *loop, int ndep, int nrow_joints, double t,
                        mbsError *err) {
  char names[600];
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
  int revolute = 0;
  for (int j = 0; j < m->njoint; j++) {
    revolute |= loop[j] && m->joint_type[j] == MBS_JOINT_REVOLUTE;
  }
  mbsMark mark = first >= 0 ? m->joint_mark[first] : (mbsMark){0, 0};
  return mbs_error_set(
      err, MBS_ERR_MODEL, m->deck_path, mark.line, mark.col,
      "the constraints are redundant: joint%s %s close%s a loop in which %d of the %d joint "
      "equations repeat the others at t = %g, so the Newton matrix would be singular.%s Free %d "
      "equation%s of the loop without adding motion: e.g. replace one revolute joint by a "
      "spherical joint (frees 2) and another by a cylindrical joint (frees 1), as in "
      "decks/slider_crank.yaml, replace a link and its two joints by one distance joint, or "
      "remove a joint that repeats another",
      count == 1 ? "" : "s", names, count == 1 ? "s" : "", ndep, nrow_joints, t,
      revolute ? " A loop of revolute joints with parallel axes is planar and over-constrains "
                 "itself in 3D."
               : "",
      ndep, ndep == 1 ? "" : "s");
}

mbsStatus mbs_model_check_redundancy(const mbsModel *m, const double *q, double t, mbsError *err) {
  Graph g;
  memset(&g, 0, sizeof(g));
  int *bridge = NULL, *parent = NULL, *compv = NULL, *compj = NULL, *deg = NULL;
  mbsStatus st = MBS_OK;

  if (m->njoint < 2) {
    return MBS_OK; /* a loop needs two joints */
  }
  g.nv = m->nbody + 1;
  g.ne = m->njoint;
  g.eu = malloc((size_t)g.ne * sizeof(int));
  g.ev = malloc((size_t)g.ne * sizeof(int));
  g.start = calloc((size_t)g.nv + 1, sizeof(int));
  g.adj = malloc((size_t)(2 * g.ne) * sizeof(int));
  g.ae = malloc((size_t)(2 * g.ne) * sizeof(int));
  bridge = calloc((size_t)g.ne, sizeof(int));
  parent = malloc((size_t)g.nv * sizeof(int));
  compv = malloc((size_t)g.nv * sizeof(int));
  compj = malloc((size_t)g.ne * sizeof(int));
  deg = calloc((size_t)g.nv + 1, sizeof(int));
  if (!g.eu || !g.ev || !g.start || !g.adj || !g.ae || !bridge || !parent || !compv || !compj ||
      !deg) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
    goto done;
  }

  /* the body-joint graph, as CSR */
  for (int e = 0; e < g.ne; e++) {
    g.eu[e] = vertex(m, m->joint_body[2 * e]);
    g.ev[e] = vertex(m, m->joint_body[2 * e + 1]);
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
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
    goto done;
  }

  /* 2-edge-connected components: the ends of every joint on a cycle belong together */
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

  /* each component with a loop (its root vertex stands for it) */
  for (int comp = 0; comp < g.nv && st == MBS_OK; comp++) {
    int has = 0;
    for (int e = 0; e < g.ne && !has; e++) {
      has = compj[e] == comp;
    }
    if (!has) {
      continue;
    }
    Block b;
    memset(&b, 0, sizeof(b));
    int *dep = NULL, *used = NULL, *loop = NULL;
    b.colmap = malloc((size_t)m->nq * sizeof(int));
    b.col = malloc((size_t)m->nq * sizeof(int));
    if (!b.colmap || !b.col) {
      st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
      goto next;
    }
    for (int i = 0; i < m->nq; i++) {
      b.colmap[i] = -1;
    }
    b.nrow = fill_block(m, q, t, compj, compv, comp, &b, FILL_COUNT);
    fill_block(m, q, t, compj, compv, comp, &b, FILL_COLUMNS);
    if ((long)b.nrow * (long)b.ncol > MAX_DENSE) {
      goto next; /* too large to analyse densely: a singular matrix is still reported later */
    }
    b.owner = malloc((size_t)(b.nrow > 0 ? b.nrow : 1) * sizeof(int));
    b.a = calloc((size_t)(b.nrow > 0 ? b.nrow : 1) * (size_t)(b.ncol > 0 ? b.ncol : 1),
                 sizeof(double));
    b.grad = malloc((size_t)MBS_ELEM_MAXCON * MBS_ELEM_MAXQ * sizeof(double));
    dep = calloc((size_t)(b.nrow > 0 ? b.nrow : 1), sizeof(int));
    used = calloc((size_t)(b.nrow > 0 ? b.nrow : 1), sizeof(int));
    loop = calloc((size_t)m->njoint, sizeof(int));
    if (!b.owner || !b.a || !b.grad || !dep || !used || !loop) {
      st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
    } else {
      fill_block(m, q, t, compj, compv, comp, &b, FILL_VALUES);
      int ndep = redundant_rows(&b, dep, used);
      if (ndep < 0) {
        st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory checking the joints");
      } else if (ndep > 0) {
        int njrow = 0;
        for (int r = 0; r < b.nrow; r++) {
          if (used[r] && b.owner[r] >= 0) {
            loop[b.owner[r]] = 1;
          }
        }
        for (int r = 0; r < b.nrow; r++) {
          njrow += b.owner[r] >= 0 && loop[b.owner[r]];
        }
        st = report(m, loop, ndep, njrow, t, err);
      }
    }
  next:
    free(b.owner);
    free(b.a);
    free(b.colmap);
    free(b.col);
    free(b.grad);
    free(dep);
    free(used);
    free(loop);
  }

done:
  free(g.eu);
  free(g.ev);
  free(g.start);
  free(g.adj);
  free(g.ae);
  free(bridge);
  free(parent);
  free(compv);
  free(compj);
  free(deg);
  return st;
}
