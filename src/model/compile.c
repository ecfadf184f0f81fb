/* compile.c: deck (model graph) -> compiled model.
 *
 * Lays out the vector nodes of every body, fills the constant mass matrix (seed 000 eq.
 * 13-15), writes rigidity (eq. 22, 58) and joint constraints with body-fixed frames set in
 * the initial configuration (seed 004 eq. 4-7) in the generic quadratic row form, creates
 * the elements, the initial state, and the fixed sparsity pattern of the Newton matrix. */
#include <assert.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elements/make.h"
#include "mbsim/contact.h"
#include "mbsim/deck.h"
#include "mbsim/elements.h"
#include "mbsim/model.h"
#include "util/memory.h"
#include "util/profile.h"
#include "util/vec3.h"

#define PI 3.14159265358979323846

#define NAME_LEN (2 * MBS_NAME_MAX)

/* a linear vector expression sum_k w_k q_node[k] + c */
typedef struct {
  int n;
  int node[MBS_CON_MAXNODE];
  double w[MBS_CON_MAXNODE];
  double c[3];
} Vx;

/* one side of a joint: the attachment frame of a moving body (nodes) or a static frame
 * (ground, fixed body) */
typedef struct {
  int body;       /* deck body index or -1 */
  int attach;     /* its attachment frame */
  int node0;      /* first node, -1 if static */
  int rigid;      /* has directors */
  double R0[9];   /* directors at t = 0 (column i = d_i) */
} Side;

static Vx vx_from(const mbsPointWeights *pw) {
  Vx v;
  memset(&v, 0, sizeof(v));
  assert(pw->n <= MBS_CON_MAXNODE);
  v.n = pw->n;
  for (int k = 0; k < pw->n; k++) {
    v.node[k] = pw->node[k];
    v.w[k] = pw->w[k];
  }
  vcopy(v.c, pw->c);
  return v;
}

/* the frame coordinates C_i = d_i(0) . z of a direction z (world, t = 0) on a director
 * frame (seed 004 eq. 5: C = R0^-1 R'0); z itself on a static frame */
static void dir_coords(const Side *s, const double z[3], double C[3]) {
  if (s->node0 < 0) {
    vcopy(C, z);
    return;
  }
  for (int i = 0; i < 3; i++) {
    C[i] = s->rigid ? s->R0[0 + i] * z[0] + s->R0[3 + i] * z[1] + s->R0[6 + i] * z[2] : 0.0;
  }
}

/* the name of body reference b: "ground", a body's, a beam node's "cable[3]" (buf: at least
 * NAME_LEN bytes) */
static const char *side_name_buf(const mbsDeck *deck, int b, char *buf) {
  int node = 0, k = mbs_deck_ref_beam(deck, b, &node);
  if (k >= 0) {
    snprintf(buf, NAME_LEN, "%s[%d]", deck->beams[k].name, node);
    return buf;
  }
  return b < 0 ? "ground" : deck->bodies[b].name;
}
#define side_name(deck, b) side_name_buf(deck, b, (char[NAME_LEN]){0})

/* the position at t = 0 of body reference b (a body's centre of mass, a beam node's phi) */
static const double *ref_pos(const mbsDeck *deck, int b) {
  int node = 0, k = mbs_deck_ref_beam(deck, b, &node);
  return k >= 0 ? deck->beams[k].pos + 3 * node : deck->bodies[b].position;
}

/* the attachment frame of body reference b: the ground, a body's, a beam node's (frames
 * 1 + nbody + k) */
static int ref_attach(const mbsModel *m, int b) {
  return b < 0 ? MBS_ATTACH_GROUND_ID : b < m->nbody ? m->body_attach[b] : 1 + b;
}

/* a - b */
static Vx vx_sub(const Vx *a, const Vx *b) {
  Vx v = *a;
  assert(a->n + b->n <= MBS_CON_MAXNODE);
  for (int c = 0; c < 3; c++) {
    v.c[c] -= b->c[c];
  }
  for (int k = 0; k < b->n; k++) {
    v.node[v.n] = b->node[k];
    v.w[v.n] = -b->w[k];
    v.n++;
  }
  return v;
}

/* merge A and B into one row with a distinct node list */
static void fill_row(mbsConRow *row, const Vx *A, const Vx *B, double s, const double n[3],
                     double c0, int joint, int body) {
  memset(row, 0, sizeof(*row));
  const Vx *src[2] = {A, B};
  for (int p = 0; p < 2; p++) {
    for (int k = 0; k < src[p]->n; k++) {
      int node = src[p]->node[k], slot = -1;
      for (int j = 0; j < row->nnode; j++) {
        if (row->node[j] == node) {
          slot = j;
        }
      }
      if (slot < 0) {
        assert(row->nnode < MBS_CON_MAXNODE);
        slot = row->nnode++;
        row->node[slot] = node;
      }
      if (p == 0) {
        row->wa[slot] += src[p]->w[k];
      } else {
        row->wb[slot] += src[p]->w[k];
      }
    }
  }
  vcopy(row->ca, A->c);
  vcopy(row->cb, B->c);
  row->s = s;
  if (n) {
    vcopy(row->n, n);
  }
  row->c0 = c0;
  row->joint = joint;
  row->body = body;
}

/* room for one more row in m->con; MBS_ERR_NOMEM when out of memory */
static mbsStatus grow_con(mbsModel *m) {
  if (m->nrow == m->con_cap) {
    int cap = m->con_cap ? 2 * m->con_cap : 64;
    mbsConRow *nc = realloc(m->con, (size_t)cap * sizeof(mbsConRow));
    if (!nc) {
      return MBS_ERR_NOMEM;
    }
    m->con = nc;
    m->con_cap = cap;
  }
  return MBS_OK;
}

/* merge A and B into one row with a distinct node list, appended to m->con (grown as
 * needed); MBS_ERR_NOMEM when out of memory */
static mbsStatus add_row(mbsModel *m, const Vx *A, const Vx *B, double s, const double n[3],
                         double c0, int joint, int body) {
  if (grow_con(m) != MBS_OK) {
    return MBS_ERR_NOMEM;
  }
  fill_row(&m->con[m->nrow++], A, B, s, n, c0, joint, body);
  return MBS_OK;
}

/* complete a unit vector a to a right-handed orthonormal frame Z = [a, b, c] (columns) */
static void frame_from_axis(double Z[9], const double a[3]) {
  double t[3] = {1, 0, 0};
  if (fabs(a[0]) > 0.9) {
    t[0] = 0;
    t[1] = 1;
  }
  double b[3], c[3];
  vcross(b, a, t);
  double nb = vnorm(b);
  for (int i = 0; i < 3; i++) {
    b[i] /= nb;
  }
  vcross(c, a, b);
  for (int r = 0; r < 3; r++) {
    Z[3 * r + 0] = a[r];
    Z[3 * r + 1] = b[r];
    Z[3 * r + 2] = c[r];
  }
}

static void col(double out[3], const double R[9], int i) {
  out[0] = R[i];
  out[1] = R[3 + i];
  out[2] = R[6 + i];
}

/* ---- the compiler ---- */

static mbsStatus alloc_model(mbsModel *m) {
  int nb = m->nbody > 0 ? m->nbody : 1, nj = m->njoint > 0 ? m->njoint : 1;
  int nl = m->nload > 0 ? m->nload : 1, nq = m->nq > 0 ? m->nq : 1;
  /* mass entries, rows, elements and profiles grow as they are added (add_mass, add_row,
   * new_elem, add_profile): nothing here bounds what one body or element may bring */
  m->coord_name_len = NAME_LEN;
  m->coord_names = calloc((size_t)nq, NAME_LEN);
  m->q0 = calloc((size_t)nq, sizeof(double));
  m->v0 = calloc((size_t)nq, sizeof(double));
  m->node_position = calloc((size_t)nq, sizeof(int));
  m->body_name = calloc((size_t)nb, MBS_NAME_MAX);
  m->body_type = calloc((size_t)nb, sizeof(mbsBodyType));
  m->body_fixed = calloc((size_t)nb, sizeof(int));
  m->body_node = calloc((size_t)nb, sizeof(int));
  m->body_mass = calloc((size_t)nb, sizeof(double));
  m->body_e = calloc((size_t)nb * 3, sizeof(double));
  m->body_E = calloc((size_t)nb * 9, sizeof(double));
  m->body_ref = calloc((size_t)nb * 3, sizeof(double));
  m->body_pos0 = calloc((size_t)nb * 3, sizeof(double));
  m->body_R0 = calloc((size_t)nb * 9, sizeof(double));
  m->body_attach = calloc((size_t)nb, sizeof(int));
  m->body_visual = calloc((size_t)nb, sizeof(mbsVisualKind));
  m->body_visual_size = calloc((size_t)nb * 3, sizeof(double));
  /* frames: the ground, the bodies, the beam nodes (nattach is set as they are made) */
  size_t nf = (size_t)nb + 1 + (size_t)m->nattach;
  m->attach_kind = calloc(nf, sizeof(mbsAttachKind));
  m->attach_node = calloc(nf, sizeof(int));
  m->attach_body = calloc(nf, sizeof(int));
  m->attach_name = calloc(nf, MBS_NAME_MAX);
  m->attach_pos0 = calloc(nf * 3, sizeof(double));
  m->attach_R0 = calloc(nf * 9, sizeof(double));
  m->beam = calloc((size_t)(m->nbeam > 0 ? m->nbeam : 1), sizeof(mbsBeam));
  m->joint_name = calloc((size_t)nj, MBS_NAME_MAX);
  m->joint_type = calloc((size_t)nj, sizeof(mbsJointType));
  m->joint_con = calloc((size_t)nj, sizeof(int));
  m->joint_ncon = calloc((size_t)nj, sizeof(int));
  m->joint_mark = calloc((size_t)nj, sizeof(mbsMark));
  m->joint_body = calloc((size_t)nj * 2, sizeof(int));
  m->joint_attach = calloc((size_t)nj * 2, sizeof(int));
  m->joint_point = calloc((size_t)nj * 3, sizeof(double));
  m->joint_point_first = calloc((size_t)nj * 3, sizeof(double));
  m->joint_frame = calloc((size_t)nj, sizeof(mbsElem));
  m->joint_initial_rate = calloc((size_t)nj, sizeof(double));
  m->joint_engage = calloc((size_t)nj * MBS_JOINT_ENGAGE_LEN, sizeof(double));
  m->joint_engage0 = calloc((size_t)nj * MBS_JOINT_ENGAGE_LEN, sizeof(double));
  m->joint_from = calloc((size_t)nj, sizeof(double));
  m->joint_until = calloc((size_t)nj, sizeof(double));
  m->profile_table =
      calloc((size_t)(m->nprofile_points > 0 ? 2 * m->nprofile_points : 1), sizeof(double));
  m->load_name = calloc((size_t)nl, MBS_NAME_MAX);
  m->load_joint = calloc((size_t)nl, sizeof(int));
  m->ctrl_state = calloc((size_t)(2 * m->nctrl + 1), sizeof(double));
  if (!m->coord_names || !m->q0 || !m->v0 || !m->node_position || !m->body_name || !m->body_type ||
      !m->body_fixed || !m->body_node || !m->body_mass || !m->body_e || !m->body_E ||
      !m->body_ref || !m->body_pos0 || !m->body_R0 || !m->body_attach || !m->body_visual ||
      !m->body_visual_size || !m->attach_kind || !m->attach_node || !m->attach_body ||
      !m->attach_name || !m->attach_pos0 || !m->attach_R0 || !m->joint_name || !m->joint_type ||
      !m->joint_con || !m->joint_ncon || !m->joint_mark || !m->joint_body || !m->joint_attach ||
      !m->joint_point || !m->joint_point_first || !m->joint_frame || !m->joint_initial_rate ||
      !m->joint_engage || !m->joint_engage0 || !m->joint_from || !m->joint_until ||
      !m->load_name || !m->load_joint || !m->ctrl_state || !m->profile_table || !m->beam) {
    return MBS_ERR_NOMEM;
  }
  return MBS_OK;
}

/* grow an array of n entries of size sz to at least need entries (doubling); -1 when out of
 * memory (the old block stays valid and owned by the caller) */
static int grow(void **p, int *cap, int need, size_t sz, int first) {
  if (need <= *cap) {
    return 0;
  }
  int c = *cap > 0 ? *cap : first;
  while (c < need) {
    c *= 2;
  }
  void *np = realloc(*p, (size_t)c * sz);
  if (!np) {
    return -1;
  }
  *p = np;
  *cap = c;
  return 0;
}

static mbsStatus add_mass(mbsModel *m, int a, int b, double val) {
  if (m->nmass == m->mass_cap) {
    int ca = m->mass_cap, cb = m->mass_cap, cv = m->mass_cap;
    if (grow((void **)&m->mass_a, &ca, m->nmass + 1, sizeof(int), 64) ||
        grow((void **)&m->mass_b, &cb, m->nmass + 1, sizeof(int), 64) ||
        grow((void **)&m->mass_val, &cv, m->nmass + 1, sizeof(double), 64)) {
      return MBS_ERR_NOMEM;
    }
    assert(ca == cb && cb == cv);
    m->mass_cap = ca;
  }
  m->mass_a[m->nmass] = a;
  m->mass_b[m->nmass] = b;
  m->mass_val[m->nmass] = val;
  m->nmass++;
  return MBS_OK;
}

static void name_node(mbsModel *m, int node, const char *body, const char *what) {
  static const char axes[3] = {'x', 'y', 'z'};
  for (int c = 0; c < 3; c++) {
    snprintf(m->coord_names + (size_t)(3 * node + c) * NAME_LEN, NAME_LEN, "%s.%s.%c", body, what,
             axes[c]);
  }
}

/* attachment frame f: the ground (b = -1) or body b's */
static void set_attach(mbsModel *m, int f, int b) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int n0 = b < 0 ? -1 : m->body_node[b];
  m->attach_body[f] = b;
  m->attach_node[f] = n0;
  m->attach_kind[f] = b < 0                               ? MBS_ATTACH_GROUND
                      : n0 < 0                            ? MBS_ATTACH_STATIC
                      : m->body_type[b] == MBS_BODY_RIGID ? MBS_ATTACH_DIRECTORS
                                                          : MBS_ATTACH_POINT;
  snprintf(m->attach_name[f], MBS_NAME_MAX, "%s", b < 0 ? "ground" : m->body_name[b]);
  memcpy(m->attach_R0 + 9 * f, b < 0 ? I3 : m->body_R0 + 9 * b, 9 * sizeof(double));
  if (n0 >= 0) {
    vcopy(m->attach_pos0 + 3 * f, m->q0 + 3 * n0);
  }
  if (b >= 0) {
    m->body_attach[b] = f;
  }
}

/* the bodies: nodes, mass matrix, rigidity, initial state, attachment frames */
static mbsStatus compile_bodies(mbsModel *m, const mbsDeck *deck) {
  int node = 0, fail = 0;
  for (int b = 0; b < deck->nbody; b++) {
    const mbsDeckBody *db = &deck->bodies[b];
    snprintf(m->body_name[b], MBS_NAME_MAX, "%s", db->name);
    m->body_type[b] = db->type;
    m->body_fixed[b] = db->fixed;
    m->body_mass[b] = db->mass;
    memcpy(m->body_pos0 + 3 * b, db->position, 3 * sizeof(double));
    memcpy(m->body_R0 + 9 * b, db->directors, 9 * sizeof(double));
    /* the drawn shape (viewers): the deck's `shape` as given */
    m->body_visual[b] = db->has_shape ? mbs_visual_from_word(db->shape_kind) : MBS_VISUAL_NONE;
    memcpy(m->body_visual_size + 3 * b, db->shape_size, 3 * sizeof(double));
    const double *R = db->directors, *r = db->reference_point;
    double M = db->mass;
    double *e = m->body_e + 3 * b, *E = m->body_E + 9 * b;
    if (db->type == MBS_BODY_RIGID) {
      /* Euler tensor about the centre E_c = tr(I)/2 1 - I; moving the reference point to
       * phi = x_c + r^i d_i puts the centre at theta = -r: e^i = -M r^i,
       * E^ij = E_c^ij + M r^i r^j (seed 000 eq. 14) */
      const double *I = db->inertia;
      double tr = I[0] + I[4] + I[8];
      for (int i = 0; i < 3; i++) {
        e[i] = -M * r[i];
        for (int j = 0; j < 3; j++) {
          E[3 * i + j] = (i == j ? 0.5 * tr : 0.0) - I[3 * i + j] + M * r[i] * r[j];
        }
      }
      memcpy(m->body_ref + 3 * b, r, 3 * sizeof(double));
    }
    if (db->fixed) {
      m->body_node[b] = -1;
      continue;
    }
    m->body_node[b] = node;
    double phi[3], Rr[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
      for (int k = 0; k < 3; k++) {
        Rr[i] += R[3 * i + k] * r[k];
      }
    }
    vcopy(phi, db->position);
    vaxpy(phi, 1.0, Rr);
    /* phi and its velocity v_phi = v_c + omega x (phi - x_c) */
    double w[3];
    vcopy(m->q0 + 3 * node, phi);
    vcross(w, db->angular_velocity, Rr);
    for (int c = 0; c < 3; c++) {
      m->v0[3 * node + c] = db->velocity[c] + w[c];
    }
    name_node(m, node, db->name, "phi");
    m->node_position[node] = 1;
    fail |= add_mass(m, node, node, M) != MBS_OK;
    if (db->type == MBS_BODY_RIGID) {
      /* directors d_i and director velocities v_i = omega x d_i (seed 000 eq. 23) */
      static const char *dn[3] = {"d1", "d2", "d3"};
      for (int i = 0; i < 3; i++) {
        double d[3];
        col(d, R, i);
        vcopy(m->q0 + 3 * (node + 1 + i), d);
        vcross(m->v0 + 3 * (node + 1 + i), db->angular_velocity, d);
        name_node(m, node + 1 + i, db->name, dn[i]);
        if (e[i] != 0.0) {
          fail |= add_mass(m, node, node + 1 + i, e[i]) != MBS_OK;
        }
        for (int j = i; j < 3; j++) {
          if (i == j || E[3 * i + j] != 0.0) {
            fail |= add_mass(m, node + 1 + i, node + 1 + j, E[3 * i + j]) != MBS_OK;
          }
        }
      }
      /* rigidity (seed 000 eq. 22 with eq. 58): 1/2 (d_i . d_i - 1), d_i . d_j */
      for (int i = 0; i < 3; i++) {
        for (int j = i; j < 3; j++) {
          Vx A = {0}, B = {0};
          A.n = B.n = 1;
          A.node[0] = node + 1 + i;
          B.node[0] = node + 1 + j;
          A.w[0] = B.w[0] = 1.0;
          if (i == j) {
            fail |= add_row(m, &A, &B, 0.5, NULL, -0.5, -1, b) != MBS_OK;
          } else {
            fail |= add_row(m, &A, &B, 1.0, NULL, 0.0, -1, b) != MBS_OK;
          }
        }
      }
      node += 4;
    } else {
      node += 1;
    }
  }
  assert(node == m->nnode - 4 * deck->nbeam_node);
  /* the ground, then one frame per body */
  m->nattach = deck->nbody + 1;
  set_attach(m, MBS_ATTACH_GROUND_ID, -1);
  for (int b = 0; b < deck->nbody; b++) {
    set_attach(m, 1 + b, b);
  }
  return fail ? MBS_ERR_NOMEM : MBS_OK;
}

/* the side of body b (-1: ground) as its attachment frame */
static Side make_side(const mbsModel *m, int b) {
  Side s;
  memset(&s, 0, sizeof(s));
  s.body = b;
  s.attach = ref_attach(m, b);
  s.node0 = m->attach_node[s.attach];
  s.rigid = b >= m->nbody || (b >= 0 && m->body_type[b] == MBS_BODY_RIGID);
  memcpy(s.R0, m->attach_R0 + 9 * s.attach, 9 * sizeof(double));
  return s;
}

/* the joint frame Z = [z1, z2, z3] (columns, world, t = 0) that both bodies' frames d'_a
 * coincide with at t = 0 (seed 004 eq. 6): d'_1 along the axis (revolute, cylindrical,
 * prismatic) or the plane normal (planar); universal: d'_1 the first axis (fixed to body 1),
 * d'_2 the second (fixed to body 2); fixed, spherical, distance: the world axes */
static void joint_frame(const mbsDeckJoint *dj, double Z[9]) {
  memset(Z, 0, 9 * sizeof(double));
  switch (dj->type) {
    case MBS_JOINT_REVOLUTE:
    case MBS_JOINT_CYLINDRICAL:
    case MBS_JOINT_PRISMATIC:
    case MBS_JOINT_PLANAR:
      frame_from_axis(Z, dj->axis);
      return;
    case MBS_JOINT_UNIVERSAL: {
      double c[3];
      vcross(c, dj->axes[0], dj->axes[1]);
      for (int r = 0; r < 3; r++) {
        Z[3 * r + 0] = dj->axes[0][r];
        Z[3 * r + 1] = dj->axes[1][r];
        Z[3 * r + 2] = c[r];
      }
      return;
    }
    default:
      Z[0] = Z[4] = Z[8] = 1.0;
      return;
  }
}

static int joint_rows(mbsJointType t);

/* the rows of joint j from the frames of its sides (seed 004 eq. 4-7; seed 000 sec. 4):
 * par[12 s + 3 a + i] = C_a^i, the frame coordinates of the joint frame's direction a on side
 * s (world components on a static side, zero on a point mass), par[12 s + 9 ..] its point's
 * frame coordinates c (mbs_attach_point); L2 the squared length of a distance joint. */
int mbs_model_joint_rows(const mbsModel *m, int j, const double par[24], double L2,
                         mbsConRow *rows) {
  static const double ex[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  Vx p[2], d[2][3], none = {0};
  for (int s = 0; s < 2; s++) {
    int f = m->joint_attach[2 * j + s];
    int nn = mbs_attach_nnode(m->attach_kind[f]), n0 = m->attach_node[f];
    mbsPointWeights pw;
    mbs_attach_point_weights(m, f, par + 12 * s + 9, &pw);
    p[s] = vx_from(&pw);
    for (int a = 0; a < 3; a++) {
      mbs_dir_weights(&pw, nn, n0, par + 12 * s + 3 * a);
      d[s][a] = vx_from(&pw);
    }
  }
  const Vx *p1 = &p[0], *p2 = &p[1], *dI = d[0], *dII = d[1];
  Vx rel = vx_sub(p2, p1);
  int nr = 0;
  switch (m->joint_type[j]) {
    case MBS_JOINT_SPHERICAL:
    case MBS_JOINT_REVOLUTE:
    case MBS_JOINT_FIXED:
    case MBS_JOINT_UNIVERSAL: {
      /* phi'_I - phi'_II = 0 (seed 004 eq. 7, first rows) */
      Vx A = vx_sub(p1, p2);
      for (int c = 0; c < 3; c++) {
        fill_row(&rows[nr++], &A, &none, 0.0, ex[c], 0.0, j, -1);
      }
      /* revolute: d'_1(I) . d'_2(II), d'_1(I) . d'_3(II) (seed 004 eq. 7); fixed adds
       * d'_2(I) . d'_3(II); universal (the cross of a Cardan joint): the first axis d'_1 on
       * body I stays perpendicular to the second axis d'_2 on body II */
      static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
      mbsJointType t = m->joint_type[j];
      int np = t == MBS_JOINT_REVOLUTE ? 2 : t == MBS_JOINT_FIXED ? 3 : t == MBS_JOINT_UNIVERSAL ? 1 : 0;
      for (int k = 0; k < np; k++) {
        fill_row(&rows[nr++], &dI[pairs[k][0]], &dII[pairs[k][1]], 1.0, NULL, 0.0, j, -1);
      }
      break;
    }
    case MBS_JOINT_CYLINDRICAL:
    case MBS_JOINT_PRISMATIC:
    case MBS_JOINT_PLANAR:
      /* cylindrical (seed 000 eq. 48-49 with the axis d'_1): the second joint point stays
       * on the axis, d'_2(I) . (p'_II - p'_I) = d'_3(I) . (p'_II - p'_I) = 0, and the axes
       * stay parallel, d'_1(I) . d'_2(II) = d'_1(I) . d'_3(II) = 0; prismatic adds
       * d'_2(I) . d'_3(II) = 0 (no rotation about the axis); planar (normal d'_1): the
       * point stays in the plane, d'_1(I) . (p'_II - p'_I) = 0, and the normals stay
       * parallel */
      if (m->joint_type[j] == MBS_JOINT_PLANAR) {
        fill_row(&rows[nr++], &dI[0], &rel, 1.0, NULL, 0.0, j, -1);
      } else {
        fill_row(&rows[nr++], &dI[1], &rel, 1.0, NULL, 0.0, j, -1);
        fill_row(&rows[nr++], &dI[2], &rel, 1.0, NULL, 0.0, j, -1);
      }
      fill_row(&rows[nr++], &dI[0], &dII[1], 1.0, NULL, 0.0, j, -1);
      fill_row(&rows[nr++], &dI[0], &dII[2], 1.0, NULL, 0.0, j, -1);
      if (m->joint_type[j] == MBS_JOINT_PRISMATIC) {
        fill_row(&rows[nr++], &dI[1], &dII[2], 1.0, NULL, 0.0, j, -1);
      }
      break;
    case MBS_JOINT_DISTANCE:
      /* 1/2 (|p2 - p1|^2 - L^2) */
      fill_row(&rows[nr++], &rel, &rel, 0.5, NULL, -0.5 * L2, j, -1);
      break;
    case MBS_JOINT_SLIDE_ON_BEAM: /* a constraint element's rows (slide.c) */
    case MBS_JOINT_TYPE_COUNT:
      break;
  }
  for (int k = 0; k < nr; k++) {
    rows[k].jrow = k;
  }
  assert(nr <= MBS_ELEM_MAXCON);
  return nr;
}

/* joints (seed 004 eq. 4-7; seed 000 sec. 4) */
static mbsStatus compile_joints(mbsModel *m, const mbsDeck *deck, mbsError *err) {
  int fail = 0;
  for (int j = 0; j < deck->njoint; j++) {
    const mbsDeckJoint *dj = &deck->joints[j];
    snprintf(m->joint_name[j], MBS_NAME_MAX, "%s", dj->name);
    m->joint_type[j] = dj->type;
    m->joint_mark[j] = dj->mark;
    m->joint_con[j] = m->nrow;
    m->joint_body[2 * j] = dj->body[0] < m->nbody ? dj->body[0] : -1;
    m->joint_body[2 * j + 1] = dj->body[1] < m->nbody ? dj->body[1] : -1;
    Side s1 = make_side(m, dj->body[0]), s2 = make_side(m, dj->body[1]);
    m->joint_attach[2 * j] = s1.attach;
    m->joint_attach[2 * j + 1] = s2.attach;
    if (dj->type == MBS_JOINT_SLIDE_ON_BEAM) {
      /* rows of its constraint element (compile_elements); the beam is the first side and
       * the body the second, so that the reaction is the beam's force on the body at its
       * point (mbs_joint_reactions) */
      m->joint_attach[2 * j] = s2.attach;
      m->joint_attach[2 * j + 1] = s1.attach;
      m->joint_body[2 * j] = -1;
      m->joint_body[2 * j + 1] = dj->body[0];
      mbs_attach_coords(m, s1.attach, dj->point, m->joint_point + 3 * j);
      mbs_attach_coords(m, s2.attach, dj->point, m->joint_point_first + 3 * j);
      double *es = m->joint_engage + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j;
      es[0] = 1.0;
      memcpy(m->joint_engage0 + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j, es,
             MBS_JOINT_ENGAGE_LEN * sizeof(double));
      m->joint_from[j] = -INFINITY;
      m->joint_until[j] = INFINITY;
      m->joint_ncon[j] = 0;
      continue;
    }
    if (s1.node0 < 0 && s2.node0 < 0) {
      return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dj->mark.line, dj->mark.col,
                           "joint '%s' connects '%s' and '%s', which are both fixed; remove it",
                           dj->name, side_name(deck, dj->body[0]), side_name(deck, dj->body[1]));
    }
    /* a point mass has no directors: it can only be a point of a spherical or distance joint */
    for (int k = 0; k < 2; k++) {
      const Side *s = k ? &s2 : &s1;
      if (s->body < 0 || s->rigid) {
        continue;
      }
      if (dj->type != MBS_JOINT_SPHERICAL && dj->type != MBS_JOINT_DISTANCE) {
        return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dj->mark.line, dj->mark.col,
                             "joint '%s': body '%s' is a point mass, which has no orientation "
                             "for a %s joint; use a rigid body or a spherical joint",
                             dj->name, side_name(deck, s->body), mbs_joint_type_word(dj->type));
      }
      const double *x = deck->bodies[s->body].position;
      const double *P = dj->points[k];
      int given = dj->type != MBS_JOINT_DISTANCE || dj->has_points;
      double dxp[3];
      vsub(dxp, P, x);
      if (given && vnorm(dxp) > 1e-9 * (1.0 + vnorm(x))) {
        return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dj->mark.line, dj->mark.col,
                             "joint '%s': body '%s' is a point mass, so the joint point must be "
                             "at its position [%g, %g, %g]",
                             dj->name, side_name(deck, s->body), x[0], x[1], x[2]);
      }
    }
    /* the joint point as a body-fixed point of the second body (for reactions), and of the
     * first (for viewers: the other end of a distance joint) */
    {
      int dflt = dj->type == MBS_JOINT_DISTANCE && !dj->has_points;
      const double *P = dflt ? ref_pos(deck, dj->body[1]) : dj->points[1];
      const double *P1 = dflt ? ref_pos(deck, dj->body[0]) : dj->points[0];
      mbs_attach_coords(m, s2.attach, P, m->joint_point + 3 * j);
      mbs_attach_coords(m, s1.attach, P1, m->joint_point_first + 3 * j);
    }
    double Z[9], z[3][3];
    joint_frame(dj, Z);
    for (int i = 0; i < 3; i++) {
      col(z[i], Z, i);
    }
    /* body-fixed joint points and frame vectors d'_a of both sides (seed 004 eq. 4-6); the
     * points coincide at t = 0 unless `body_points` placed them apart (initial.assemble) */
    /* body-fixed joint points and frame vectors d'_a of both sides (seed 004 eq. 4-6) in the
     * frames' coordinates, as the joint's element keeps them (mbs_model_joint_rows); the
     * points coincide at t = 0 unless `body_points` placed them apart (initial.assemble) */
    double par[24], L2 = 0.0;
    for (int a = 0; a < 3; a++) {
      dir_coords(&s1, z[a], par + 3 * a);
      dir_coords(&s2, z[a], par + 12 + 3 * a);
    }
    if (dj->type == MBS_JOINT_DISTANCE) {
      /* 1/2 (|p2 - p1|^2 - L^2) with L the distance at t = 0 or the given length */
      double P1[3], P2[3], dl[3];
      vcopy(P1, dj->has_points ? dj->points[0] : ref_pos(deck, dj->body[0]));
      vcopy(P2, dj->has_points ? dj->points[1] : ref_pos(deck, dj->body[1]));
      vsub(dl, P2, P1);
      L2 = dj->has_length ? dj->length * dj->length : vdot(dl, dl);
      mbs_attach_coords(m, s1.attach, P1, par + 9);
      mbs_attach_coords(m, s2.attach, P2, par + 21);
    } else {
      mbs_attach_coords(m, s1.attach, dj->points[0], par + 9);
      mbs_attach_coords(m, s2.attach, dj->points[1], par + 21);
    }
    mbsConRow rows[MBS_ELEM_MAXCON];
    int nr = mbs_model_joint_rows(m, j, par, L2, rows);
    for (int k = 0; k < nr && !fail; k++) {
      fail |= grow_con(m) != MBS_OK;
      if (!fail) {
        m->con[m->nrow++] = rows[k];
      }
    }
    /* the run state of a joint that engages and releases (model.h joint_engage) */
    double *es = m->joint_engage + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j;
    es[0] = !dj->has_active || dj->active_from <= 0.0;
    memcpy(es + 1, par, 12 * sizeof(double));
    es[13] = L2;
    memcpy(m->joint_engage0 + (size_t)MBS_JOINT_ENGAGE_LEN * (size_t)j, es,
           MBS_JOINT_ENGAGE_LEN * sizeof(double));
    m->joint_from[j] = dj->has_active ? dj->active_from : -INFINITY;
    m->joint_until[j] = dj->has_active ? dj->active_until : INFINITY;
    m->nengage += dj->has_active;
    m->joint_ncon[j] = m->nrow - m->joint_con[j];
    assert(fail || m->joint_ncon[j] == joint_rows(dj->type));
  }
  /* the rows of joints that engage or release after those of the others: the redundancy
   * check (mbs_model_drop_redundant: a row that repeats earlier ones is dropped) then drops a
   * loop's repeated rows from the switching joint, not from a joint that holds while it is
   * released */
  if (!fail && m->nengage > 0) {
    int first = m->njoint > 0 ? m->joint_con[0] : m->nrow, n = m->nrow - first, w = first;
    mbsConRow *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof(mbsConRow));
    if (!tmp) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    memcpy(tmp, m->con + first, (size_t)n * sizeof(mbsConRow));
    for (int pass = 0; pass < 2; pass++) {
      for (int j = 0; j < m->njoint; j++) {
        if (mbs_joint_switches(m, j) != pass) {
          continue;
        }
        int from = m->joint_con[j] - first;
        memcpy(m->con + w, tmp + from, (size_t)m->joint_ncon[j] * sizeof(mbsConRow));
        m->joint_con[j] = w;
        w += m->joint_ncon[j];
      }
    }
    assert(w == m->nrow);
    free(tmp);
  }
  return fail ? mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory") : MBS_OK;
}

static int joint_rows(mbsJointType t) {
  switch (t) {
    case MBS_JOINT_SPHERICAL:
      return 3;
    case MBS_JOINT_REVOLUTE:
      return 5;
    case MBS_JOINT_FIXED:
      return 6;
    case MBS_JOINT_DISTANCE:
      return 1;
    case MBS_JOINT_CYLINDRICAL:
      return 4;
    case MBS_JOINT_PRISMATIC:
      return 5;
    case MBS_JOINT_UNIVERSAL:
      return 4;
    case MBS_JOINT_PLANAR:
      return 3;
    case MBS_JOINT_SLIDE_ON_BEAM:
    case MBS_JOINT_TYPE_COUNT:
      break;
  }
  return 0;
}

/* a new element at the end of m->elem (grown as needed), zeroed, with no coordinates yet;
 * NULL when out of memory. The pointer holds until the next new_elem. */
static mbsElem *new_elem(mbsModel *m) {
  if (grow((void **)&m->elem, &m->elem_cap, m->nelem + 1, sizeof(mbsElem), 16)) {
    return NULL;
  }
  mbsElem *el = &m->elem[m->nelem++];
  memset(el, 0, sizeof(*el));
  el->qadr = m->elem_qidx_n;
  return el;
}

/* append coordinate qi to the element being built (its coordinates are contiguous in the
 * model's pool; el->qidx is set by link_qidx once every element is built) */
static mbsStatus push_q(mbsModel *m, mbsElem *el, int qi) {
  if (el->nq == 0) {
    el->qadr = m->elem_qidx_n;
  }
  assert(el->qadr + el->nq == m->elem_qidx_n); /* one element is built at a time */
  assert(qi >= 0 && qi < m->nq);
  if (grow((void **)&m->elem_qidx_pool, &m->elem_qidx_cap, m->elem_qidx_n + 1, sizeof(int), 256)) {
    return MBS_ERR_NOMEM;
  }
  m->elem_qidx_pool[m->elem_qidx_n++] = qi;
  el->nq++;
  return MBS_OK;
}

/* computed-torque laws: the error's rate at t = 0 adds the joint's rate from the deck's
 * velocities */
static void initial_errors(mbsModel *m) {
  for (int k = 0; k < m->nelem; k++) {
    mbs_elem_drive_initial_rate(m, &m->elem[k]);
  }
}

/* for each joint the range of elements holding its elements (model.h
 * joint_elem), so that a walk over one joint's rows (mbs_rows_begin_joint, every record's
 * reactions) does not visit every element of the model */
static mbsStatus joint_elements(mbsModel *m) {
  m->joint_elem = calloc((size_t)(m->njoint > 0 ? 2 * m->njoint : 1), sizeof(int));
  if (!m->joint_elem) {
    return MBS_ERR_NOMEM;
  }
  for (int k = 0; k < m->nelem; k++) {
    int j = m->elem[k].joint;
    if (j < 0 || j >= m->njoint) {
      continue;
    }
    if (m->joint_elem[2 * j + 1] == 0) {
      m->joint_elem[2 * j] = k;
    }
    m->joint_elem[2 * j + 1] = k + 1;
  }
  return MBS_OK;
}

/* point every element's qidx into the pool, and the largest element's size */
static void link_qidx(mbsModel *m) {
  m->elem_maxq = 0;
  for (int k = 0; k < m->nelem; k++) {
    mbsElem *el = &m->elem[k];
    el->qidx = m->elem_qidx_pool + el->qadr;
    m->elem_maxq = el->nq > m->elem_maxq ? el->nq : m->elem_maxq;
  }
  for (int j = 0; j < m->njoint; j++) {
    mbsElem *el = &m->joint_frame[j];
    el->qidx = m->elem_qidx_pool + el->qadr;
    m->elem_maxq = el->nq > m->elem_maxq ? el->nq : m->elem_maxq;
  }
}

int mbs_model_add_element(mbsModel *m, const mbsElem *proto, const int *qidx, int nq) {
  assert(nq >= 0);
  int ne = m->nelem, nqidx = m->elem_qidx_n;
  mbsElem *el = new_elem(m);
  if (!el) {
    return -1;
  }
  *el = *proto;
  el->nq = 0;
  el->qadr = m->elem_qidx_n;
  el->qidx = NULL;
  for (int i = 0; i < nq; i++) {
    if (push_q(m, el, qidx[i]) != MBS_OK) {
      m->nelem = ne;
      m->elem_qidx_n = nqidx;
      link_qidx(m);
      return -1;
    }
  }
  link_qidx(m);
  return ne;
}

/* the coordinates of body b (its frame's nodes) */
static mbsStatus body_qidx(mbsModel *m, int b, mbsElem *el) {
  int f = ref_attach(m, b), n0 = m->attach_node[f];
  el->body = b < m->nbody ? b : -1;
  el->attach[0] = f;
  el->attach[1] = -1;
  int n = 3 * mbs_attach_nnode(m->attach_kind[f]);
  for (int i = 0; i < n; i++) {
    if (push_q(m, el, 3 * n0 + i) != MBS_OK) {
      return MBS_ERR_NOMEM;
    }
  }
  return MBS_OK;
}

/* the elements of a space-time block: as the deck says, but never more than the run has
 * steps (a block of 100,000 elements on a 5-step run held 9.7 GB) */
static int spacetime_block(const mbsDeck *deck) {
  double nsteps = ceil(deck->solver.t_end / deck->solver.dt - 1e-9);
  int e = deck->solver.spacetime_elements;
  return nsteps >= 1.0 && nsteps < (double)e ? (int)nsteps : e;
}

/* The model-size budget: what a run of the deck needs, estimated before anything of its
 * size is allocated, against what the machine (or solver.memory_limit) allows. Every
 * unknown of the Newton system (a coordinate, a constraint row; a space-time block has
 * degree x elements stages of 2 nq + ncon) costs the model arrays, the system's pattern and
 * values, the sparse factorization and the workspaces: measured 1.4 to 1.7 kB on beams of
 * 1e4 and 1e5 elements (300 MB and 2.5 GB) and 0.65 kB in space-time blocks, so the
 * estimate takes 2 kB, an upper bound, plus what the program itself holds. */
#define MEM_PER_UNKNOWN 2048.0
#define MEM_BASE 64e6

static mbsStatus memory_budget(const mbsModel *m, const mbsDeck *deck, mbsError *err) {
  /* constraint rows: six per rigid frame (bodies and beam nodes), at most six per joint and
   * one per motion or augmented torque */
  double ncon = 0.0;
  for (int b = 0; b < deck->nbody; b++) {
    ncon += !deck->bodies[b].fixed && deck->bodies[b].type == MBS_BODY_RIGID ? 6.0 : 0.0;
  }
  ncon += 6.0 * deck->nbeam_node + 7.0 * deck->njoint + m->nscalar;
  double unknowns = (double)m->nq + ncon, stages = 0.0;
  int elements = 0;
  if (deck->solver.integrator == MBS_INTEGRATOR_SPACETIME) {
    elements = spacetime_block(deck);
    stages = (double)elements * deck->solver.spacetime_degree;
    unknowns += stages * (2.0 * m->nq + ncon);
  }
  double need = MEM_BASE + MEM_PER_UNKNOWN * unknowns;
  char what[160];
  double limit;
  if (deck->solver.memory_limit > 0.0) {
    limit = deck->solver.memory_limit * 1e9;
    snprintf(what, sizeof(what), "solver.memory_limit = %g GB", deck->solver.memory_limit);
  } else {
    limit = mbs_memory_machine(what, sizeof(what));
  }
  if (limit > 0.0 && need > limit) {
    char block[200] = "";
    if (elements > 0) {
      snprintf(block, sizeof(block),
               "; a space-time block of %d elements of degree %d holds %.0f stages of them",
               elements, deck->solver.spacetime_degree, stages);
    }
    return mbs_error_set(err, MBS_ERR_MODEL, deck->path, 0, 0,
                         "the model needs about %.3g GB of memory (%d coordinates and about "
                         "%.0f constraint rows, about %.0f kB each for the model, the Newton "
                         "system and its factorization%s), more than the %.3g GB allowed by "
                         "%s; make the model smaller, or raise the limit with "
                         "solver.memory_limit (GB; --memory-limit GB)",
                         need / 1e9, m->nq, ncon, MEM_PER_UNKNOWN / 1e3, block, limit / 1e9,
                         what);
  }
  return MBS_OK;
}

/* a deck profile into the model's profile list (grown as needed): its index, -1 for the
 * constant profile, -2 when out of memory */
static int add_profile(mbsModel *m, const mbsDeckProfile *p) {
  if (p->kind == MBS_PROFILE_CONSTANT) {
    return -1;
  }
  if (grow((void **)&m->profile, &m->profile_cap, m->nprofile + 1, sizeof(mbsProfile), 8)) {
    return -2;
  }
  int tab0 = 0;
  for (int i = 0; i < m->nprofile; i++) {
    tab0 += m->profile[i].ntab;
  }
  /* the table was sized from the deck's profiles */
  assert(p->kind != MBS_PROFILE_TABLE || tab0 + p->ntab <= m->nprofile_points);
  mbsProfile *mp = &m->profile[m->nprofile];
  mp->kind = p->kind;
  memcpy(mp->p, p->p, sizeof(mp->p));
  mp->ntab = p->kind == MBS_PROFILE_TABLE ? p->ntab : 0;
  mp->tab0 = tab0;
  mp->ev = NULL;
  if (p->kind == MBS_PROFILE_EXPRESSION) {
    /* the model's own expression (the deck's goes with the deck); the deck checked the
     * text, so only memory can fail here */
    char why[256];
    if (!p->expr || !(mp->ev = mbs_profile_expr_create(p->expr, why, sizeof(why)))) {
      return -2;
    }
  }
  if (mp->ntab > 0) {
    memcpy(m->profile_table + 2 * tab0, p->table, (size_t)mp->ntab * 2 * sizeof(double));
  }
  return m->nprofile++;
}

/* side s of a two-sided element (elements/make.h): the coordinates of body b (none if
 * static), the frame Z (columns z_a, world, t = 0) and the point P (world, t = 0) as
 * body-fixed quantities, seed 004 eq. 5: C = R0^T Z, c = R0^T (P - phi0) */
static mbsStatus elem_side(mbsModel *m, mbsElem *el, int s, int b, const double Z[9],
                           const double P[3]) {
  Side sd = make_side(m, b);
  mbsElemSide side = {.attach = sd.attach, .nblock = mbs_attach_nnode(m->attach_kind[sd.attach])};
  for (int k = 0; k < 3 * side.nblock; k++) {
    if (push_q(m, el, 3 * sd.node0 + k) != MBS_OK) {
      return MBS_ERR_NOMEM;
    }
  }
  for (int a = 0; a < 3; a++) {
    double za[3];
    col(za, Z, a);
    dir_coords(&sd, za, side.frame + 3 * a);
  }
  mbs_attach_coords(m, sd.attach, P, side.point);
  mbs_elem_side_make(el, s, &side);
  return MBS_OK;
}

/* force, torque on one body */
static mbsStatus body_load(mbsModel *m, const mbsDeck *deck, const mbsDeckLoad *dl, mbsElem *el,
                           mbsError *err) {
  int b = dl->body;
  /* a beam node (b >= nbody) is a director frame like a rigid body's */
  int rigid = b >= m->nbody || m->body_type[b] == MBS_BODY_RIGID;
  if (b < 0 || (b < m->nbody && m->body_node[b] < 0)) {
    return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                         "load '%s': body '%s' is fixed, a load on it does nothing; remove it",
                         dl->name, side_name(deck, b));
  }
  int prof = -1;
  if (body_qidx(m, b, el) != MBS_OK || (prof = add_profile(m, &dl->profile)) == -2) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  if (dl->type == MBS_LOAD_TORQUE) {
    if (!rigid) {
      return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                           "load '%s': a torque needs a rigid body, '%s' is a point mass", dl->name,
                           deck->bodies[b].name);
    }
    mbs_elem_torque_make(el, dl->value, dl->frame, prof, dl->method);
    return MBS_OK;
  }
  double theta[3];
  int has_theta = 0;
  if (dl->has_point) {
    /* Theta^i = d_i(0) . (P - phi0) (seed 000 eq. 19) */
    double rel[3];
    vsub(rel, dl->point, m->q0 + 3 * m->attach_node[ref_attach(m, b)]);
    if (rigid) {
      mbs_attach_coords(m, ref_attach(m, b), dl->point, theta);
      has_theta = 1;
    } else if (vnorm(rel) > 1e-9 * (1.0 + vnorm(dl->point))) {
      return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                           "load '%s': body '%s' is a point mass, so the force acts at its "
                           "position; remove `point`",
                           dl->name, deck->bodies[b].name);
    }
  }
  if (dl->frame == MBS_FRAME_BODY && !rigid) {
    return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                         "load '%s': a point mass has no body frame; use frame: world", dl->name);
  }
  mbs_elem_force_make(el, dl->value, has_theta ? theta : NULL, dl->frame, prof);
  return MBS_OK;
}

/* every joint's two sides with its frame and point, for its coordinates */
static mbsStatus joint_frames(mbsModel *m, const mbsDeck *deck) {
  for (int j = 0; j < deck->njoint; j++) {
    const mbsDeckJoint *dj = &deck->joints[j];
    mbsElem *el = &m->joint_frame[j];
    double Z[9];
    joint_frame(dj, Z);
    /* (distance joints have no coordinates here) */
    el->nq = 0;
    el->body = dj->body[1] < m->nbody ? dj->body[1] : -1;
    el->load = -1;
    el->joint = j;
    if (elem_side(m, el, 0, dj->body[0], Z, dj->points[0]) != MBS_OK ||
        elem_side(m, el, 1, dj->body[1], Z, dj->points[1]) != MBS_OK) {
      return MBS_ERR_NOMEM;
    }
    if (dj->type == MBS_JOINT_DISTANCE) {
      /* the points of its row (the bodies' centres by default), for an engaging joint's rows
       * (mbs_model_joint_apply) */
      mbs_elem_side_set_point(el, 0, m->joint_point_first + 3 * j);
      mbs_elem_side_set_point(el, 1, m->joint_point + 3 * j);
    }
  }
  return MBS_OK;
}

/* joint_torque, joint_force, rotational_spring: both sides of the joint with its frame */
static mbsStatus joint_load(mbsModel *m, const mbsDeck *deck, const mbsDeckLoad *dl, mbsElem *el,
                            int *nscalar) {
  const mbsDeckJoint *dj = &deck->joints[dl->joint];
  double Z[9];
  joint_frame(dj, Z);
  el->nq = 0;
  el->body = dj->body[1] < m->nbody ? dj->body[1] : -1;
  int prof = -1;
  if (elem_side(m, el, 0, dj->body[0], Z, dj->points[0]) != MBS_OK ||
      elem_side(m, el, 1, dj->body[1], Z, dj->points[1]) != MBS_OK ||
      (prof = add_profile(m, dl->has_control ? &dl->target_profile : &dl->profile)) == -2) {
    return MBS_ERR_NOMEM;
  }
  int force = dl->type == MBS_LOAD_JOINT_FORCE;
  if (dl->computed_torque) {
    /* the exact inverse dynamics of the reference with PD feedback: a drive row on the error
     * dynamics' trajectory (drive.c); its target at t = 0 is the joint's coordinate 0 (its
     * rate: initial_errors) */
    mbs_elem_computed_torque_make(m, el, dl->target_value, dl->kp, dl->kd, prof, force);
    return MBS_OK;
  }
  if (dl->has_control) {
    /* a PD law on the joint coordinate (joint_load.c); its slot in m->ctrl_state */
    int k = 0;
    for (const mbsDeckLoad *o = deck->loads; o < dl; o++) {
      k += o->has_control && !o->computed_torque;
    }
    mbs_elem_joint_control_make(el, dl->kp, dl->kd, dl->ki, dl->target_value, prof, k,
                                dl->type == MBS_LOAD_JOINT_TORQUE ? 0 : 1);
    return MBS_OK;
  }
  switch (dl->type) {
    case MBS_LOAD_JOINT_TORQUE:
      if (dl->method == MBS_TORQUE_AUGMENTED) {
        /* the joint angle gamma: a scalar coordinate after the vector nodes (seed 004 sec. 5) */
        int qg = 3 * m->nnode + (*nscalar)++;
        mbs_elem_augmented_torque_make(el, dl->value[0], prof, dl->augmentation);
        if (push_q(m, el, qg) != MBS_OK) {
          return MBS_ERR_NOMEM;
        }
        snprintf(m->coord_names + (size_t)qg * NAME_LEN, NAME_LEN, "%s.gamma", dj->name);
      } else {
        mbs_elem_joint_torque_make(el, dl->value[0], prof, dl->method);
      }
      break;
    case MBS_LOAD_JOINT_FORCE:
      mbs_elem_joint_force_make(el, dl->value[0], prof);
      break;
    default:
      /* (its profile added above is unused: constant) */
      mbs_elem_rotational_spring_make(el, dl->stiffness, dl->damping, dl->rest_angle);
      break;
  }
  return MBS_OK;
}

/* a spring between two body points */
static mbsStatus spring_load(mbsModel *m, const mbsDeck *deck, const mbsDeckLoad *dl, mbsElem *el,
                             mbsError *err) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  int moving = 0;
  for (int k = 0; k < 2; k++) {
    int b = dl->bodies[k];
    moving += b >= 0 && m->attach_node[ref_attach(m, b)] >= 0;
    if (b >= 0 && b < deck->nbody && deck->bodies[b].type == MBS_BODY_POINT) {
      double dx[3];
      vsub(dx, dl->points[k], deck->bodies[b].position);
      if (vnorm(dx) > 1e-9 * (1.0 + vnorm(deck->bodies[b].position))) {
        return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                             "spring '%s': body '%s' is a point mass, so the spring point must "
                             "be at its position",
                             dl->name, deck->bodies[b].name);
      }
    }
  }
  if (moving == 0) {
    return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                         "spring '%s' connects '%s' and '%s', which are both fixed; remove it",
                         dl->name, side_name(deck, dl->bodies[0]), side_name(deck, dl->bodies[1]));
  }
  el->nq = 0;
  el->body = dl->bodies[1] < deck->nbody ? dl->bodies[1] : -1;
  if (elem_side(m, el, 0, dl->bodies[0], I3, dl->points[0]) != MBS_OK ||
      elem_side(m, el, 1, dl->bodies[1], I3, dl->points[1]) != MBS_OK) {
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }
  /* a default rest length is recomputed after initial.assemble */
  mbs_elem_spring_make(el, dl->stiffness, dl->damping, dl->rest_length, dl->rest_length_default);
  return MBS_OK;
}

/* joints with `active`: what they cannot do, at the key (docs/decks.md "Joints that engage
 * and release") */
static mbsStatus check_switching(const mbsModel *m, const mbsDeck *deck, mbsError *err) {
  for (int j = 0; j < deck->njoint; j++) {
    const mbsDeckJoint *dj = &deck->joints[j];
    if (!dj->has_active) {
      continue;
    }
    const mbsMark *k = &dj->active_mark;
    if (!mbs_integrator_policy(m->integrator)->stepwise) {
      return mbs_error_set(err, MBS_ERR_DECK, deck->path, k->line, k->col,
                           "joint '%s': a joint that engages or releases ('active') needs a "
                           "time-stepping integrator (em, midpoint, euler, genalpha, moreau); "
                           "%s cannot take its velocity jump",
                           dj->name, mbs_integrator_word(m->integrator));
    }
    if (deck->assemble) {
      return mbs_error_set(err, MBS_ERR_DECK, deck->path, k->line, k->col,
                           "joint '%s': a joint that engages or releases ('active') takes its "
                           "frames from the configuration, which `initial: {assemble: true}` "
                           "moves; give consistent initial positions instead",
                           dj->name);
    }
    if (!(dj->active_from > 0.0)) {
      continue; /* held from t = 0 with its frames of t = 0: it only releases */
    }
    int f1 = m->joint_attach[2 * j];
    if (dj->type != MBS_JOINT_DISTANCE && m->attach_kind[f1] == MBS_ATTACH_POINT) {
      return mbs_error_set(err, MBS_ERR_DECK, deck->path, k->line, k->col,
                           "joint '%s' engages at t = %g s: its first body '%s' is a point mass, "
                           "which cannot grip the second where it is; list the point mass "
                           "second",
                           dj->name, dj->active_from, m->attach_name[f1]);
    }
    for (int l = 0; l < deck->nload; l++) {
      if (m->load_joint[l] == j ||
          (deck->loads[l].type == MBS_LOAD_ROTATIONAL_SPRING && deck->loads[l].joint == j)) {
        return mbs_error_set(err, MBS_ERR_DECK, deck->path, k->line, k->col,
                             "joint '%s' engages at t = %g s: load '%s' acts on it, which an "
                             "engaging joint does not support (its frames are taken at "
                             "engagement)",
                             dj->name, dj->active_from, deck->loads[l].name);
      }
    }
  }
  return MBS_OK;
}

/* gravity, loads, springs and the drives of joints with a motion */
static mbsStatus compile_elements(mbsModel *m, const mbsDeck *deck, mbsError *err) {
  int nscalar = 0;
  mbsStatus st;
  if (vnorm(deck->gravity) > 0.0) {
    for (int b = 0; b < deck->nbody; b++) {
      if (m->body_node[b] < 0) {
        continue;
      }
      mbsElem *el = new_elem(m);
      if (!el || body_qidx(m, b, el) != MBS_OK) {
        return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
      }
      el->load = -1;
      el->joint = -1;
      mbs_elem_gravity_make(el, deck->gravity, m->body_mass[b],
                            m->body_type[b] == MBS_BODY_RIGID ? m->body_e + 3 * b : NULL);
    }
  }
  for (int l = 0; l < deck->nload; l++) {
    const mbsDeckLoad *dl = &deck->loads[l];
    snprintf(m->load_name[l], MBS_NAME_MAX, "%s", dl->name);
    m->load_joint[l] =
        dl->type == MBS_LOAD_JOINT_TORQUE || dl->type == MBS_LOAD_JOINT_FORCE ? dl->joint : -1;
    mbsElem *el = new_elem(m);
    if (!el) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    el->load = l;
    el->joint = -1;
    switch (dl->type) {
      case MBS_LOAD_FORCE:
      case MBS_LOAD_TORQUE:
        if ((st = body_load(m, deck, dl, el, err)) != MBS_OK) {
          return st;
        }
        break;
      case MBS_LOAD_JOINT_TORQUE:
      case MBS_LOAD_JOINT_FORCE:
      case MBS_LOAD_ROTATIONAL_SPRING:
        /* one gamma per joint: a second augmented torque would duplicate "<joint>.gamma" */
        for (int k = 0; k < l && dl->method == MBS_TORQUE_AUGMENTED; k++) {
          const mbsDeckLoad *o = &deck->loads[k];
          if (o->type == MBS_LOAD_JOINT_TORQUE && o->method == MBS_TORQUE_AUGMENTED &&
              dl->type == MBS_LOAD_JOINT_TORQUE && o->joint == dl->joint) {
            return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                                 "load '%s': joint '%s' already has the augmented torque '%s'; "
                                 "add their values in one load",
                                 dl->name, deck->joints[dl->joint].name, o->name);
          }
        }
        if (dl->computed_torque && deck->joints[dl->joint].has_motion) {
          return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->control_mark.line,
                               dl->control_mark.col,
                               "load '%s': joint '%s' has a motion, which already sets its "
                               "coordinate; a computed_torque law on it would be redundant",
                               dl->name, deck->joints[dl->joint].name);
        }
        for (int k = 0; k < l && dl->computed_torque; k++) {
          const mbsDeckLoad *o = &deck->loads[k];
          if (o->computed_torque && o->joint == dl->joint) {
            return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->control_mark.line,
                                 dl->control_mark.col,
                                 "load '%s': joint '%s' already has the computed_torque law "
                                 "'%s'; one per joint",
                                 dl->name, deck->joints[dl->joint].name, o->name);
          }
        }
        if (dl->has_control && dl->ki > 0.0 && !mbs_integrator_policy(m->integrator)->stepwise) {
          return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->control_mark.line,
                               dl->control_mark.col,
                               "load '%s': control.ki (an integral term) needs a time-stepping "
                               "integrator (em, midpoint, euler, genalpha, moreau), not %s",
                               dl->name, mbs_integrator_word(m->integrator));
        }
        if (joint_load(m, deck, dl, el, &nscalar) != MBS_OK) {
          return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
        }
        break;
      case MBS_LOAD_SPRING:
        if ((st = spring_load(m, deck, dl, el, err)) != MBS_OK) {
          return st;
        }
        break;
      case MBS_LOAD_DISTRIBUTED_FORCE:
        /* one force element per node: added with the beams below */
        m->nelem--;
        break;
      case MBS_LOAD_TYPE_COUNT:
        break;
    }
  }

  /* prescribed motions: a rheonomic constraint element owned by the joint */
  for (int j = 0; j < deck->njoint; j++) {
    const mbsDeckJoint *dj = &deck->joints[j];
    if (!dj->has_motion) {
      continue;
    }
    double Z[9];
    joint_frame(dj, Z);
    mbsElem *el = new_elem(m);
    int prof = -1;
    if (!el || elem_side(m, el, 0, dj->body[0], Z, dj->points[0]) != MBS_OK ||
        elem_side(m, el, 1, dj->body[1], Z, dj->points[1]) != MBS_OK ||
        (prof = add_profile(m, &dj->motion_profile)) == -2) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    el->load = -1;
    el->joint = j;
    el->body = dj->body[1] < m->nbody ? dj->body[1] : -1;
    mbs_elem_drive_make(el, dj->motion_value, prof, dj->type == MBS_JOINT_PRISMATIC);
  }

  /* slide_on_beam: a constraint element over the body, every node of the beam (s moves
   * along all of it) and the joint's coordinate s (slide.c); s, its rate and the orientation
   * frame are set once the beam's elements exist (slide_setup) */
  for (int j = 0; j < deck->njoint; j++) {
    const mbsDeckJoint *dj = &deck->joints[j];
    if (dj->type != MBS_JOINT_SLIDE_ON_BEAM) {
      continue;
    }
    const mbsDeckBeam *db = &deck->beams[dj->beam];
    int fb = ref_attach(m, dj->body[0]), n0 = m->attach_node[fb];
    int qs = dj->absolute ? -1 : 3 * m->nnode + nscalar++; /* absolute: no s */
    mbsElem *el = new_elem(m);
    if (!el) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    el->load = -1;
    el->joint = j;
    el->body = dj->body[0];
    el->attach[0] = fb;
    el->attach[1] = -1;
    int fail = 0;
    for (int i = 0; i < 12; i++) {
      fail |= push_q(m, el, 3 * n0 + i) != MBS_OK;
    }
    /* the beam's nodes it may reach: all, or those of the elements within `reach` of the one
     * at the node nearest to the point (one more before it: the point may lie in the element
     * that ends there), around the closure of a ring */
    double gap[3];
    vsub(gap, db->pos + 3 * (db->nnode - 1), db->pos);
    int ring = vnorm(gap) <= 1e-9 * (1.0 + db->length), ne = db->nelem, j0 = 0, nw = ne;
    if (dj->reach > 0) {
      int kn = 0;
      double best = INFINITY;
      for (int k = 0; k < db->nnode; k++) {
        double d[3];
        vsub(d, db->pos + 3 * k, dj->point);
        if (vnorm(d) < best) {
          best = vnorm(d);
          kn = k;
        }
      }
      int jn = kn / db->order < ne ? kn / db->order : ne - 1;
      int lo = jn - dj->reach - 1, hi = jn + dj->reach;
      if (!ring) {
        lo = lo < 0 ? 0 : lo;
        hi = hi > ne - 1 ? ne - 1 : hi;
      }
      if (hi - lo + 1 < ne) {
        j0 = lo;
        nw = hi - lo + 1;
      }
    }
    int last = -1;
    for (int w = 0; w < nw; w++) {
      int jw = ((j0 + w) % ne + ne) % ne;
      for (int l = 0; l <= db->order; l++) {
        int k = db->order * jw + l;
        if (k == last) {
          continue;
        }
        last = k;
        for (int i = 0; i < 12; i++) {
          fail |= push_q(m, el, 3 * (m->beam[dj->beam].node0 + 4 * k) + i) != MBS_OK;
        }
      }
    }
    if (qs >= 0) {
      fail |= push_q(m, el, qs) != MBS_OK;
    }
    if (fail) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    double c[3], C[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    mbs_attach_coords(m, fb, dj->point, c);
    mbs_elem_slide_make(el, dj->beam, c, C, dj->orient, 0);
    if (qs >= 0) {
      snprintf(m->coord_names + (size_t)qs * NAME_LEN, NAME_LEN, "%s.s", dj->name);
    }
  }
  return MBS_OK;
}

static void beam_shape(int o, double xi, double N[3], double dN[3]);

/* 1 if joint i is a planar joint of normal n (either sense) on body reference ref */
static int slide_node_in_plane(const mbsDeck *deck, int ref, const double n[3], int i) {
  const mbsDeckJoint *o = &deck->joints[i];
  double cr[3];
  vcross(cr, o->axis, n);
  return o->type == MBS_JOINT_PLANAR && (o->body[0] == ref || o->body[1] == ref) &&
         vnorm(cr) <= 1e-12;
}

/* the joints of type slide_on_beam once the beams' elements exist: s at t = 0 (the point of
 * the centre line nearest to the body's point, which must lie on it), a ring (the beam's last
 * node at its first, joined to it by a joint), the body's frame that `orient` holds (the
 * beam's interpolated directors at s, made orthonormal), and the rate of s */
static mbsStatus slide_setup(mbsModel *m, const mbsDeck *deck, mbsError *err) {
  for (int k = 0; k < m->nelem; k++) {
    mbsElem *el = &m->elem[k];
    if (el->kind != MBS_ELEM_SLIDE) {
      continue;
    }
    const mbsDeckJoint *dj = &deck->joints[el->joint];
    const mbsDeckBeam *db = &deck->beams[dj->beam];
    const mbsBeam *bm = &m->beam[dj->beam];
    /* a ring: the last node at the first, held there by a joint between them */
    double gap[3];
    vsub(gap, db->pos + 3 * (db->nnode - 1), db->pos);
    int ring = vnorm(gap) <= 1e-9 * (1.0 + db->length);
    if (ring) {
      int a = deck->nbody + db->node0, b = a + db->nnode - 1, held = 0;
      for (int i = 0; i < deck->njoint; i++) {
        const mbsDeckJoint *o = &deck->joints[i];
        held |= o->type != MBS_JOINT_SLIDE_ON_BEAM && o->type != MBS_JOINT_DISTANCE &&
                ((o->body[0] == a && o->body[1] == b) || (o->body[0] == b && o->body[1] == a));
      }
      if (!held) {
        return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dj->mark.line, dj->mark.col,
                             "joint '%s': beam '%s' ends where it starts (a ring), but no joint "
                             "holds '%s[0]' to '%s[-1]'; close the ring with a fixed joint "
                             "between them",
                             dj->name, db->name, db->name, db->name);
      }
      if (dj->orient) {
        return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dj->mark.line, dj->mark.col,
                             "joint '%s': orient on a ring is not supported (the directors of "
                             "the ring's two end nodes differ by its closing angle, so the "
                             "body's frame would jump where s wraps); slide without orient "
                             "and hold the body's orientation by contacts or other joints",
                             dj->name);
      }
      /* the period of s: the elements' lengths that s is measured along (slide.c) */
      el->param[12] = 0.0;
      for (int je = 0; je < bm->nelem; je++) {
        el->param[12] += mbs_beam_element_length(&m->elem[bm->elem0 + je]);
      }
    }
    double s0, P[3];
    vcopy(P, dj->point);
    double dist = mbs_slide_project(m, el, m->q0, P, &s0);
    if (!(dist <= 1e-10 * (1.0 + bm->length + vnorm(P)))) {
      double r[3], t[3];
      mbs_slide_position(m, el, m->q0, s0, r, t);
      return mbs_error_set(err, MBS_ERR_MODEL, deck->path, dj->point_mark.line,
                           dj->point_mark.col,
                           "joint '%s': the point [%g, %g, %g] lies %.3g m off the centre line "
                           "of beam '%s' (nearest at s = %.6g m, [%g, %g, %g]); place the body "
                           "so that its point is on the beam",
                           dj->name, P[0], P[1], P[2], dist, db->name, s0, r[0], r[1], r[2]);
    }
    if (!dj->absolute) {
      m->q0[el->qidx[el->nq - 1]] = s0;
    }
    /* in a plane: the body held in it (a planar or revolute joint of normal n) and every
     * node of the beam (its `planar`, or a planar joint of normal n on each node or on the
     * node a fixed joint welds it to) */
    const double *pn = NULL;
    for (int i = 0; i < deck->njoint && !pn; i++) {
      const mbsDeckJoint *o = &deck->joints[i];
      if ((o->type == MBS_JOINT_PLANAR || o->type == MBS_JOINT_REVOLUTE) &&
          (o->body[0] == dj->body[0] || o->body[1] == dj->body[0])) {
        pn = o->axis;
      }
    }
    int planar = pn != NULL;
    for (int kn = 0; planar && kn < db->nnode; kn++) {
      int ref = deck->nbody + db->node0 + kn, held = 0;
      for (int i = 0; i < deck->njoint && !held; i++) {
        held = slide_node_in_plane(deck, ref, pn, i);
        const mbsDeckJoint *o = &deck->joints[i];
        if (!held && o->type == MBS_JOINT_FIXED && (o->body[0] == ref || o->body[1] == ref)) {
          int other = o->body[0] == ref ? o->body[1] : o->body[0];
          for (int i2 = 0; i2 < deck->njoint && !held; i2++) {
            held = slide_node_in_plane(deck, other, pn, i2);
          }
        }
      }
      planar = held;
    }
    int pairs = dj->orient ? 7 : 0;
    if (dj->orient) {
      /* e_1 along D_2 x D_3, e_2 along D_2 normal to D_3 (so the three rows vanish at t = 0),
       * as coordinates C_ai on the body's directors */
      double D[3][3], R0[9];
      double N[3], dN[3];
      int order = bm->order, j = 0;
      double S = 0.0, L = mbs_beam_element_length(&m->elem[bm->elem0]);
      while (j + 1 < bm->nelem && s0 >= S + L) {
        S += L;
        j++;
        L = mbs_beam_element_length(&m->elem[bm->elem0 + j]);
      }
      beam_shape(order, -1.0 + 2.0 * (s0 - S) / L, N, dN);
      for (int a = 0; a < 3; a++) {
        D[a][0] = D[a][1] = D[a][2] = 0.0;
        for (int l = 0; l <= order; l++) {
          vaxpy(D[a], N[l], m->q0 + 3 * (bm->node0 + 4 * (order * j + l) + 1 + a));
        }
      }
      double e1[3], e2[3], e3[3];
      vcross(e1, D[1], D[2]);
      double n3 = vnorm(D[2]);
      e3[0] = e3[1] = e3[2] = 0.0;
      vaxpy(e3, 1.0 / n3, D[2]);
      vcopy(e2, D[1]);
      vaxpy(e2, -vdot(e2, e3), e3);
      double n1 = vnorm(e1), n2 = vnorm(e2);
      for (int c = 0; c < 3; c++) {
        e1[c] /= n1;
        e2[c] /= n2;
      }
      vcross(e3, e1, e2);
      memcpy(R0, m->attach_R0 + 9 * el->attach[0], sizeof(R0));
      double *ez[3] = {e1, e2, e3};
      /* in a plane, a row e_a . D_b with e_a or D_b along the normal holds by itself */
      static const int pr[3][2] = {{0, 1}, {0, 2}, {1, 2}};
      for (int o = 0; planar && o < 3; o++) {
        double cr1[3], cr2[3];
        vcross(cr1, ez[pr[o][0]], pn);
        vcross(cr2, D[pr[o][1]], pn);
        if (vnorm(cr1) <= 1e-9 || vnorm(cr2) <= 1e-9 * vnorm(D[pr[o][1]])) {
          pairs &= ~(1 << o);
        }
      }
      for (int a = 0; a < 3; a++) {
        for (int i = 0; i < 3; i++) {
          /* d_i(0) . e_a: column i of R0 is d_i */
          el->param[3 + 3 * a + i] = R0[i] * ez[a][0] + R0[3 + i] * ez[a][1] + R0[6 + i] * ez[a][2];
        }
      }
    }
    if (planar) {
      /* the point's rows along two axes in the plane; its row along the normal repeats the
       * planar joints' */
      double u[6], ax[3] = {1, 0, 0};
      if (fabs(pn[0]) > 0.9) {
        ax[0] = 0.0;
        ax[1] = 1.0;
      }
      vcross(u, pn, ax);
      double nu = vnorm(u);
      for (int c = 0; c < 3; c++) {
        u[c] /= nu;
      }
      vcross(u + 3, pn, u);
      mbs_elem_slide_planar(el, u, pairs);
      if (dj->absolute) {
        mbs_elem_slide_absolute(el, 1);
      }
    } else if (dj->absolute) {
      mbs_elem_slide_absolute(el, 0);
    }
  }
  return MBS_OK;
}

/* the rate of each slide_on_beam joint's s at t = 0: the least-squares solution of its rows
 * G v0 = 0 (the point's velocity along the tangent relative to the beam) */
static void slide_velocities(mbsModel *m) {
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->kind != MBS_ELEM_SLIDE || el->iparam[3]) {
      continue; /* absolute: no s */
    }
    double g[MBS_ELEM_MAXCON];
    double *G = malloc((size_t)(el->ncon * el->nq) * sizeof(double));
    if (!G) {
      continue; /* left as it was: check_initial_velocities reports a violated joint */
    }
    int is = el->nq - 1;
    m->v0[el->qidx[is]] = 0.0;
    mbs_element_kind(el->kind)->constraint(m, el, m->q0, 0.0, g, G);
    double num = 0.0, den = 0.0;
    for (int r = 0; r < el->ncon; r++) {
      double gv = 0.0;
      for (int i = 0; i < is; i++) {
        gv += G[r * el->nq + i] * m->v0[el->qidx[i]];
      }
      num += G[r * el->nq + is] * gv;
      den += G[r * el->nq + is] * G[r * el->nq + is];
    }
    m->v0[el->qidx[is]] = den > 0.0 ? -num / den : 0.0;
    free(G);
  }
}


/* ---- beams ---- */

/* Lagrange shape functions of order o (1, 2) on xi in [-1, 1] and their derivatives */
static void beam_shape(int o, double xi, double N[3], double dN[3]) {
  if (o == 1) {
    N[0] = 0.5 * (1.0 - xi);
    N[1] = 0.5 * (1.0 + xi);
    dN[0] = -0.5;
    dN[1] = 0.5;
    N[2] = dN[2] = 0.0;
  } else {
    N[0] = 0.5 * xi * (xi - 1.0);
    N[1] = 1.0 - xi * xi;
    N[2] = 0.5 * xi * (xi + 1.0);
    dN[0] = xi - 0.5;
    dN[1] = -2.0 * xi;
    dN[2] = xi + 0.5;
  }
}

/* element e of beam db: the node-level mass integrals Me[a][b] = int N_a N_b ds and the load
 * integrals ne[a] = int N_a ds over the arc length at t = 0 (4-point Gauss, exact for
 * straight elements with evenly spaced nodes: l/6 [[2, 1], [1, 2]] for order 1, l/30 [[4, 2,
 * -1], [2, 16, 2], [-1, 2, 4]] for order 2, seed 000 eq. 15 with beam shape functions) */
static void beam_element_integrals(const mbsDeckBeam *db, int e, double Me[3][3], double ne[3]) {
  static const double gx[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563,
                               0.8611363115940526};
  static const double gw[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461,
                               0.3478548451374538};
  int o = db->order;
  memset(Me, 0, 9 * sizeof(double));
  memset(ne, 0, 3 * sizeof(double));
  for (int g = 0; g < 4; g++) {
    double N[3], dN[3], x[3] = {0, 0, 0};
    beam_shape(o, gx[g], N, dN);
    for (int a = 0; a <= o; a++) {
      vaxpy(x, dN[a], db->pos + 3 * (o * e + a));
    }
    double w = gw[g] * vnorm(x);
    for (int a = 0; a <= o; a++) {
      ne[a] += w * N[a];
      for (int b = 0; b <= o; b++) {
        Me[a][b] += w * N[a] * N[b];
      }
    }
  }
}

/* the beams: per node four vector nodes phi, d1, d2, d3 (a director frame like a rigid body's,
 * seed 000 sec. 5), the consistent mass matrix (M^ab (x) I3: phi rho A, d2 rho I3, d3 rho I2,
 * d1 none), the six rigidity rows per node, the initial state and one attachment frame per
 * node (frames 1 + nbody + k) */
static mbsStatus compile_beams(mbsModel *m, const mbsDeck *deck) {
  int node = m->nnode - 4 * deck->nbeam_node, fail = 0;
  double *band = NULL;
  for (int i = 0; i < deck->nbeam; i++) {
    const mbsDeckBeam *db = &deck->beams[i];
    mbsBeam *bm = &m->beam[i];
    snprintf(bm->name, sizeof(bm->name), "%s", db->name);
    bm->order = db->order;
    bm->nelem = db->nelem;
    bm->nnode = db->nnode;
    bm->node0 = node;
    bm->attach0 = 1 + deck->nbody + db->node0;
    bm->elem0 = -1;
    bm->length = db->length;
    double kap = db->shear_factor;
    bm->k[0] = db->E * db->A;
    bm->k[1] = bm->k[2] = kap * db->G * db->A;
    bm->k[3] = db->G * db->J;
    bm->k[4] = db->E * db->I2;
    bm->k[5] = db->E * db->I3;
    bm->rho[0] = db->density * db->A;
    bm->rho[1] = db->rotary[0];
    bm->rho[2] = db->rotary[1];
    bm->damping = db->damping;
    /* the section's extent for viewers: h = sqrt(12 I3 / A) and w = sqrt(12 I2 / A) give a
     * rectangle back exactly; a circle's diameter is 2 sqrt(A / pi) */
    bm->section_circle = db->section_circle;
    if (db->section_circle) {
      bm->section[0] = bm->section[1] = 2.0 * sqrt(db->A / PI);
    } else {
      bm->section[0] = sqrt(12.0 * db->I3 / db->A);
      bm->section[1] = sqrt(12.0 * db->I2 / db->A);
    }
    bm->mark = db->mark;
    /* nodes: state, names, rigidity (seed 000 eq. 22 with eq. 58), frames */
    for (int k = 0; k < db->nnode; k++) {
      int n0 = node + 4 * k, f = bm->attach0 + k;
      char nm[MBS_NAME_MAX + 16];
      snprintf(nm, sizeof(nm), "%s[%d]", db->name, k);
      const double *R = db->R + 9 * k;
      vcopy(m->q0 + 3 * n0, db->pos + 3 * k);
      vcopy(m->v0 + 3 * n0, db->vel + 3 * k);
      m->node_position[n0] = 1;
      name_node(m, n0, nm, "phi");
      static const char *dn[3] = {"d1", "d2", "d3"};
      for (int a = 0; a < 3; a++) {
        col(m->q0 + 3 * (n0 + 1 + a), R, a);
        vcross(m->v0 + 3 * (n0 + 1 + a), db->angular_velocity, m->q0 + 3 * (n0 + 1 + a));
        name_node(m, n0 + 1 + a, nm, dn[a]);
      }
      for (int a = 0; a < 3; a++) {
        for (int c = a; c < 3; c++) {
          Vx A = {0}, B = {0};
          A.n = B.n = 1;
          A.node[0] = n0 + 1 + a;
          B.node[0] = n0 + 1 + c;
          A.w[0] = B.w[0] = 1.0;
          fail |= add_row(m, &A, &B, a == c ? 0.5 : 1.0, NULL, a == c ? -0.5 : 0.0, -1, -1) !=
                  MBS_OK;
        }
      }
      m->attach_kind[f] = MBS_ATTACH_BEAM_NODE;
      m->attach_node[f] = n0;
      m->attach_body[f] = -1;
      size_t len = strlen(nm) < MBS_NAME_MAX ? strlen(nm) : MBS_NAME_MAX - 1;
      memcpy(m->attach_name[f], nm, len);
      m->attach_name[f][len] = '\0';
      vcopy(m->attach_pos0 + 3 * f, db->pos + 3 * k);
      memcpy(m->attach_R0 + 9 * f, R, 9 * sizeof(double));
    }
    /* consistent mass: the node-level band sum_e int N_a N_b ds (half-bandwidth = order) */
    int o = db->order, w = o + 1;
    band = calloc((size_t)db->nnode * (size_t)w, sizeof(double));
    if (!band) {
      return MBS_ERR_NOMEM;
    }
    for (int e = 0; e < db->nelem; e++) {
      double Me[3][3], ne[3];
      beam_element_integrals(db, e, Me, ne);
      for (int a = 0; a <= o; a++) {
        for (int b = a; b <= o; b++) {
          band[(size_t)(o * e + a) * (size_t)w + (size_t)(b - a)] += Me[a][b];
        }
      }
    }
    for (int k = 0; k < db->nnode; k++) {
      for (int j = 0; j < w && k + j < db->nnode; j++) {
        double mab = band[(size_t)k * (size_t)w + (size_t)j];
        if (mab == 0.0) {
          continue;
        }
        int na = node + 4 * k, nb = node + 4 * (k + j);
        fail |= add_mass(m, na, nb, bm->rho[0] * mab) != MBS_OK;
        fail |= add_mass(m, na + 2, nb + 2, bm->rho[2] * mab) != MBS_OK;
        fail |= add_mass(m, na + 3, nb + 3, bm->rho[1] * mab) != MBS_OK;
      }
    }
    free(band);
    band = NULL;
    node += 4 * db->nnode;
  }
  m->nattach = 1 + deck->nbody + deck->nbeam_node;
  assert(node == m->nnode);
  return fail ? MBS_ERR_NOMEM : MBS_OK;
}

/* the beams' elements (kind beam, set up once qidx is linked: beam_setup), their gravity (the
 * consistent load: node a gets rho A g int N_a ds on phi, a gravity element each) and the
 * distributed forces (likewise value int N_a ds, a force element per node) */
static mbsStatus beam_elements(mbsModel *m, const mbsDeck *deck) {
  for (int i = 0; i < deck->nbeam; i++) {
    const mbsDeckBeam *db = &deck->beams[i];
    mbsBeam *bm = &m->beam[i];
    int o = db->order;
    bm->elem0 = m->nelem;
    for (int e = 0; e < db->nelem; e++) {
      mbsElem *el = new_elem(m);
      if (!el) {
        return MBS_ERR_NOMEM;
      }
      el->kind = MBS_ELEM_BEAM;
      el->body = -1;
      el->attach[0] = bm->attach0 + o * e;
      el->attach[1] = bm->attach0 + o * e + o;
      el->load = -1;
      el->joint = -1;
      for (int a = 0; a <= o; a++) {
        for (int c = 0; c < 12; c++) {
          if (push_q(m, el, 3 * (bm->node0 + 4 * (o * e + a)) + c) != MBS_OK) {
            return MBS_ERR_NOMEM;
          }
        }
      }
    }
    /* int N_a ds per node */
    double *na = calloc((size_t)db->nnode, sizeof(double));
    if (!na) {
      return MBS_ERR_NOMEM;
    }
    for (int e = 0; e < db->nelem; e++) {
      double Me[3][3], ne[3];
      beam_element_integrals(db, e, Me, ne);
      for (int a = 0; a <= o; a++) {
        na[o * e + a] += ne[a];
      }
    }
    /* loads on this beam: gravity, then its distributed forces in deck order */
    for (int l = -1; l < deck->nload; l++) {
      const mbsDeckLoad *dl = l >= 0 ? &deck->loads[l] : NULL;
      if (l < 0 ? !(vnorm(deck->gravity) > 0.0)
                : dl->type != MBS_LOAD_DISTRIBUTED_FORCE || dl->beam != i) {
        continue;
      }
      int prof = dl ? add_profile(m, &dl->profile) : -1;
      if (prof == -2) {
        free(na);
        return MBS_ERR_NOMEM;
      }
      for (int k = 0; k < db->nnode; k++) {
        mbsElem *el = new_elem(m);
        if (!el || body_qidx(m, deck->nbody + db->node0 + k, el) != MBS_OK) {
          free(na);
          return MBS_ERR_NOMEM;
        }
        /* phi only: the frame's first three coordinates */
        m->elem_qidx_n = el->qadr + 3;
        el->nq = 3;
        el->joint = -1;
        if (!dl) {
          el->load = -1;
          mbs_elem_gravity_make(el, deck->gravity, bm->rho[0] * na[k], NULL);
        } else {
          /* a world force on phi, the node's share */
          el->load = l;
          double share[3];
          for (int c = 0; c < 3; c++) {
            share[c] = dl->value[c] * na[k];
          }
          mbs_elem_force_share_make(el, share, prof, 3 * bm->node0);
        }
      }
    }
    free(na);
  }
  return MBS_OK;
}

/* the beam elements' reference state from q0 (mbs_beam_element_setup needs qidx linked) */
static mbsStatus beam_setup(mbsModel *m, mbsError *err) {
  for (int i = 0; i < m->nbeam; i++) {
    const mbsBeam *bm = &m->beam[i];
    for (int e = 0; e < bm->nelem; e++) {
      mbsElem *el = &m->elem[bm->elem0 + e];
      assert(el->kind == MBS_ELEM_BEAM);
      if (mbs_beam_element_setup(el, m->q0, bm->order, bm->k, bm->damping) != 0) {
        return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, bm->mark.line, bm->mark.col,
                             "beam '%s': element %d could not be set up (order %d)", bm->name, e,
                             bm->order);
      }
    }
  }
  return MBS_OK;
}

/* the bound that remains fixed: a constraint element's rows (MBS_ELEM_MAXCON, the solver's
 * scratch); an element's coordinates have none */
static mbsStatus check_element_bounds(const mbsModel *m, mbsError *err) {
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->ncon < 0 || el->ncon > MBS_ELEM_MAXCON) {
      return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, 0, 0,
                           "element %d (%s) has %d constraint rows; the solver handles at most %d",
                           k, mbs_element_kind(el->kind)->name, el->ncon, MBS_ELEM_MAXCON);
    }
  }
  return MBS_OK;
}

/* the initial rate of the joint angles gamma of augmented torques: G(q0) v0 = 0 */
static void augmented_velocities(mbsModel *m) {
  double g[MBS_ELEM_MAXCON], G[MBS_ELEM_MAXCON * MBS_TWO_BODY_MAXQ];
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->kind != MBS_ELEM_AUGMENTED_TORQUE) {
      continue;
    }
    assert(el->nq <= MBS_TWO_BODY_MAXQ); /* a two-body kind */
    mbs_element_kind(el->kind)->constraint(m, el, m->q0, 0.0, g, G);
    double gv = 0.0;
    for (int i = 0; i < el->nq - 1; i++) {
      gv += G[i] * m->v0[el->qidx[i]];
    }
    m->v0[el->qidx[el->nq - 1]] = -gv / G[el->nq - 1];
  }
}

/* the joints hold at t = 0 to round-off: |g(q0)| <= 1e-10 (1 + max |q0|), the bound the
 * integrators keep; joints whose points `body_points` (or a distance joint's `length`) set
 * apart need initial.assemble */
static mbsStatus check_initial_positions(const mbsModel *m, mbsError *err) {
  double qmax = 0.0, work[MBS_ELEM_MAXCON];
  for (int i = 0; i < m->nq; i++) {
    qmax = fmax(qmax, fabs(m->q0[i]));
  }
  mbsRowIter it;
  for (mbs_rows_begin(&it, m, m->q0, 0.0, 0, work); mbs_rows_next(&it);) {
    if (it.joint >= 0 && !(fabs(it.g) <= 1e-10 * (1.0 + qmax))) {
      int j = it.joint;
      return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, m->joint_mark[j].line,
                           m->joint_mark[j].col,
                           "joint '%s' does not hold at t = 0 (its row %d is off by %.3g): "
                           "place the bodies so that its points meet, or let mbsim-run move "
                           "them onto the joints: `initial: {assemble: true}`",
                           m->joint_name[j], it.row - m->joint_con[j] + 1, fabs(it.g));
    }
  }
  return MBS_OK;
}

/* the joints' velocity constraints G(q0) v0 = 0 must hold at t = 0 */
static mbsStatus check_initial_velocities(const mbsModel *m, mbsError *err) {
  double grad[3 * MBS_CON_MAXNODE];
  double vscale = 1.0;
  for (int i = 0; i < m->nq; i++) {
    vscale = fmax(vscale, fabs(m->v0[i]));
  }
  for (int j = 0; j < m->njoint; j++) {
    double worst = 0.0;
    /* its rows in the system (i < joint_ncon), then those dropped as redundant */
    for (int i = 0; i < m->joint_ncon[j] + m->ndrop; i++) {
      int dr = i - m->joint_ncon[j];
      if (dr >= 0 && m->drop[dr].joint != j) {
        continue;
      }
      const mbsConRow *row = dr >= 0 ? &m->drop[dr] : &m->con[m->joint_con[j] + i];
      mbs_con_eval(row, m->q0, grad);
      double gv = 0.0;
      for (int k = 0; k < row->nnode; k++) {
        gv += vdot(grad + 3 * k, m->v0 + 3 * row->node[k]);
      }
      worst = fmax(worst, fabs(gv));
    }
    if (worst > 1e-9 * vscale) {
      return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, m->joint_mark[j].line,
                           m->joint_mark[j].col,
                           "joint '%s': the initial velocities violate the joint (velocity "
                           "constraint residual %.3g); give the connected bodies velocity and "
                           "angular_velocity that the joint allows, or let mbsim-run project "
                           "them: `initial: {project_velocities: true}` (with a joint's "
                           "`initial_rate` to set its rate)",
                           m->joint_name[j], worst);
    }
  }

  /* slide_on_beam: the body's point moves along the beam (its rows' G v0 = 0 with the rate of
   * s from slide_velocities) */
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->kind != MBS_ELEM_SLIDE) {
      continue;
    }
    double gs[MBS_ELEM_MAXCON], worst = 0.0;
    double *Gs = malloc((size_t)(el->ncon * el->nq) * sizeof(double));
    if (!Gs) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    }
    mbs_element_kind(el->kind)->constraint(m, el, m->q0, 0.0, gs, Gs);
    for (int r = 0; r < el->ncon; r++) {
      double gv = 0.0;
      for (int i = 0; i < el->nq; i++) {
        gv += Gs[r * el->nq + i] * m->v0[el->qidx[i]];
      }
      worst = fmax(worst, fabs(gv));
    }
    free(Gs);
    if (worst > 1e-9 * vscale) {
      int j = el->joint;
      return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, m->joint_mark[j].line,
                           m->joint_mark[j].col,
                           "joint '%s': the initial velocities violate the joint (velocity "
                           "constraint residual %.3g): the body's point must move along the "
                           "beam%s; give it a velocity (and angular_velocity) the joint allows, "
                           "or `initial: {project_velocities: true}`",
                           m->joint_name[j], worst,
                           el->iparam[1] ? " and its frame turn with the beam's directors" : "");
    }
  }

  /* a prescribed motion: the joint's rate at t = 0 must be the motion's (G v0 + g_t = 0);
   * at t = 0 the drive rows give G v0 = -thetadot (revolute), +xdot (prismatic) */
  double g[MBS_ELEM_MAXCON], G[MBS_ELEM_MAXCON * MBS_TWO_BODY_MAXQ];
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    if (el->kind != MBS_ELEM_DRIVE) {
      continue;
    }
    assert(el->nq <= MBS_TWO_BODY_MAXQ); /* a two-body kind */
    mbs_element_kind(el->kind)->constraint(m, el, m->q0, 0.0, g, G);
    double gv = 0.0, rate;
    for (int i = 0; i < el->nq; i++) {
      gv += G[i] * m->v0[el->qidx[i]];
    }
    double want = (mbs_drive_target(m, el, 0.0, &rate, NULL), rate);
    int prismatic = mbs_elem_drive_prismatic(el);
    double have = prismatic ? gv : -gv;
    if (fabs(have - want) > 1e-9 * vscale) {
      int j = el->joint >= 0 ? el->joint : m->load_joint[el->load];
      const char *unit = prismatic ? "m/s" : "rad/s";
      return mbs_error_set(err, MBS_ERR_MODEL, m->deck_path, m->joint_mark[j].line,
                           m->joint_mark[j].col,
                           "joint '%s': the initial velocities do not follow its motion: the "
                           "motion's rate at t = 0 is %.9g %s, the bodies' velocities give %.9g "
                           "%s; give the bodies velocities that match (or a profile that starts "
                           "with zero slope), or `initial: {project_velocities: true}`",
                           m->joint_name[j], want, unit, have + 0.0, unit);
    }
  }
  return MBS_OK;
}

/* ---- contacts ---- */

/* R = A B (3x3 row-major) */
static void mat3_mul(double R[9], const double A[9], const double B[9]) {
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    }
  }
}

/* shape s of the model from deck shape ds, owned by body b (-1: the ground) whose k-th shape
 * it is; its points go to m->contact_pts from *npts on */
static void compile_shape(mbsModel *m, const mbsDeck *deck, int b, int k, const mbsDeckShape *ds,
                          mbsShape *s, int *npts) {
  memset(s, 0, sizeof(*s));
  s->kind = ds->kind;
  s->body = b;
  s->mark = ds->mark;
  if (b < 0) {
    s->attach = MBS_ATTACH_GROUND_ID;
    snprintf(s->name, sizeof(s->name), "%s", ds->name);
  } else {
    s->attach = m->body_attach[b];
    const char *bn = deck->bodies[b].name;
    if (k == 0) {
      snprintf(s->name, sizeof(s->name), "%s", bn);
    } else {
      /* "die3#2": the suffix is kept, the body name shortened if it must be */
      char suffix[16];
      int ns = snprintf(suffix, sizeof(suffix), "#%d", k + 1);
      int room = MBS_NAME_MAX - 1 - ns;
      snprintf(s->name, sizeof(s->name), "%.*s%s", room, bn, suffix);
    }
  }

  /* placement in the frame (model.h: centre c and axes C in frame coordinates) */
  if (ds->kind == MBS_SHAPE_PLANE) {
    /* axis 3 = the normal, axes 1, 2 any right-handed completion */
    double Z[9];
    frame_from_axis(Z, ds->normal);
    for (int r = 0; r < 3; r++) {
      s->C[3 * r + 0] = Z[3 * r + 1];
      s->C[3 * r + 1] = Z[3 * r + 2];
      s->C[3 * r + 2] = Z[3 * r + 0];
    }
    vcopy(s->c, ds->offset);
  } else if (b < 0) {
    vcopy(s->c, ds->offset);
    memcpy(s->C, ds->orientation, sizeof(s->C));
  } else if (deck->bodies[b].fixed) {
    /* a static frame: world point and axes, x_c + R0 offset and R0 orientation */
    const mbsDeckBody *db = &deck->bodies[b];
    for (int r = 0; r < 3; r++) {
      s->c[r] = db->position[r];
      for (int j = 0; j < 3; j++) {
        s->c[r] += db->directors[3 * r + j] * ds->offset[j];
      }
    }
    mat3_mul(s->C, db->directors, ds->orientation);
  } else if (deck->bodies[b].type == MBS_BODY_RIGID) {
    /* the centre x_c + R offset = phi + R (offset - r), r = body_ref */
    vsub(s->c, ds->offset, m->body_ref + 3 * b);
    memcpy(s->C, ds->orientation, sizeof(s->C));
  } else {
    /* a point mass: its shapes are centred on it (the reader refuses an offset) */
    memcpy(s->C, ds->orientation, sizeof(s->C));
  }

  /* sizes (half extents) and the bounding sphere about the centre */
  switch (ds->kind) {
    case MBS_SHAPE_SPHERE:
      s->size[0] = ds->size[0];
      s->radius = ds->size[0];
      break;
    case MBS_SHAPE_BOX:
      for (int j = 0; j < 3; j++) {
        s->size[j] = 0.5 * ds->size[j];
      }
      s->radius = vnorm(s->size);
      break;
    case MBS_SHAPE_CAPSULE:
      s->size[0] = ds->size[0];
      s->size[1] = 0.5 * ds->size[1];
      s->radius = s->size[0] + s->size[1];
      break;
    case MBS_SHAPE_RING:
      s->size[0] = ds->size[0];
      s->radius = ds->size[0];
      break;
    case MBS_SHAPE_POINTS:
      s->npts = ds->npts;
      s->pt0 = *npts;
      memcpy(m->contact_pts + 3 * (size_t)*npts, ds->pts, 3 * (size_t)ds->npts * sizeof(double));
      *npts += ds->npts;
      for (int p = 0; p < ds->npts; p++) {
        s->radius = fmax(s->radius, vnorm(ds->pts + 3 * p));
      }
      break;
    default:
      s->radius = INFINITY;
      break;
  }
}

/* the sphere on node `node` of beam k (`collision: {sphere: r}`): centred on the node's phi;
 * or (`{capsule: r}`) the segment from that node to the next, a capsule whose ends are the
 * two nodes' phi (mbsShape.segment); owner the node's body reference (nbody + node over all
 * beams, mbs_deck_ref_beam) */
static void compile_node_shape(mbsModel *m, const mbsDeck *deck, int k, int node, mbsShape *s) {
  static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const mbsDeckBeam *db = &deck->beams[k];
  memset(s, 0, sizeof(*s));
  s->kind = db->collision_segments ? MBS_SHAPE_CAPSULE : MBS_SHAPE_SPHERE;
  s->body = deck->nbody + db->node0 + node;
  s->attach = m->beam[k].attach0 + node;
  s->mark = db->collision_mark;
  memcpy(s->C, I3, sizeof(I3));
  s->size[0] = s->radius = db->collision_radius;
  /* "cable[3]", a segment "cable[3..4]": the index is kept, the beam name shortened if it
   * must be */
  char suffix[32];
  int ns = db->collision_segments ? snprintf(suffix, sizeof(suffix), "[%d..%d]", node, node + 1)
                                  : snprintf(suffix, sizeof(suffix), "[%d]", node);
  if (db->collision_segments) {
    double d[3];
    vsub(d, db->pos + 3 * (node + 1), db->pos + 3 * node);
    s->segment = 1;
    s->surface = db->collision_surface;
    s->size[1] = 0.5 * vnorm(d);
    s->radius += s->size[1];
  }
  int room = MBS_NAME_MAX - 1 - ns;
  snprintf(s->name, sizeof(s->name), "%.*s%s", room, db->name, suffix);
}

/* the participants a contacts pattern (side `side` of entry dc) picks: bodies matching it
 * (fnmatch), beam nodes (b >= nbody: body references) of beams matching it or the one node
 * it names, or the ground (-1) for the word `ground` */
static int pattern_picks(const mbsDeck *deck, const mbsDeckContact *dc, int side, int b) {
  const char *pat = dc->between[side];
  if (strcmp(pat, "ground") == 0) {
    return b < 0;
  }
  if (b < 0) {
    return 0;
  }
  if (dc->between_node[side] > 0) {
    return b + 1 == dc->between_node[side];
  }
  if (b < deck->nbody) {
    return fnmatch(pat, deck->bodies[b].name, 0) == 0;
  }
  if (b >= deck->nbody + deck->nbeam_node) {
    /* a surface: all its patches */
    return fnmatch(pat, deck->surfaces[b - deck->nbody - deck->nbeam_node].name, 0) == 0;
  }
  int node = 0, k = mbs_deck_ref_beam(deck, b, &node);
  return k >= 0 && fnmatch(pat, deck->beams[k].name, 0) == 0;
}

/* patch (i, j) of surface f: the bilinear patch over nodes (i, j), (i, j + 1), (i + 1, j + 1),
 * (i + 1, j) of its grid (corners at (xi, eta) = (0, 0), (1, 0), (1, 1), (0, 1): xi along
 * the columns, eta along the rows, so that the contact side is that of the normal
 * x_xi x x_eta); owner the surface (nbody + nbeam + f), named "bowl[i,j]". A node is a point
 * mass or a beam node (body reference b >= nbody): the corner is its frame's origin, the
 * point mass's x or the beam node's phi, so its W columns N_i n fall on those 3 unknowns */
static void compile_patch(mbsModel *m, const mbsDeck *deck, int f, int i, int j, mbsShape *s) {
  static const int di[4] = {0, 0, 1, 1}, dj[4] = {0, 1, 1, 0};
  const mbsDeckSurface *sf = &deck->surfaces[f];
  memset(s, 0, sizeof(*s));
  s->kind = MBS_SHAPE_PATCH;
  double mid[3] = {0.0, 0.0, 0.0};
  for (int k = 0; k < 4; k++) {
    int b = sf->nodes[(i + di[k]) * sf->cols + j + dj[k]];
    s->corner[k] = ref_attach(m, b);
    vaxpy(mid, 0.25, ref_pos(deck, b));
  }
  s->body = sf->nodes[i * sf->cols + j];
  s->attach = s->corner[0];
  /* the far corners of the patches (i, j - 1) and (i - 1, j) across the edges xi = 0 and
   * eta = 0 */
  s->nbr[0][0] = j > 0 ? ref_attach(m, sf->nodes[i * sf->cols + j - 1]) : -1;
  s->nbr[0][1] = j > 0 ? ref_attach(m, sf->nodes[(i + 1) * sf->cols + j - 1]) : -1;
  s->nbr[1][0] = i > 0 ? ref_attach(m, sf->nodes[(i - 1) * sf->cols + j]) : -1;
  s->nbr[1][1] = i > 0 ? ref_attach(m, sf->nodes[(i - 1) * sf->cols + j + 1]) : -1;
  s->closed = (j == sf->cols - 2 ? 1 : 0) | (i == sf->rows - 2 ? 2 : 0);
  for (int k = 0; k < 4; k++) {
    double d[3];
    vsub(d, ref_pos(deck, sf->nodes[(i + di[k]) * sf->cols + j + dj[k]]), mid);
    s->radius = fmax(s->radius, vnorm(d));
  }
  s->owner = deck->nbody + deck->nbeam + f;
  s->mark = sf->mark;
  char suffix[32];
  int ns = snprintf(suffix, sizeof(suffix), "[%d,%d]", i, j);
  snprintf(s->name, sizeof(s->name), "%.*s%s", MBS_NAME_MAX - 1 - ns, sf->name, suffix);
}

/* the shapes on one side of a contacts entry of one kind (or of every kind) that a shape may
 * touch, each the first in the order of the participants (the ground's first, then bodies and
 * beam nodes): two of different owners suffice to find a partner of any shape */
typedef struct {
  int any[2];    /* the first shape, then the first of another owner; -1: none */
  int moving[2]; /* the same among the shapes that move */
  int npts;      /* the most points of a point set among them */
} SideFirst;

static void side_first_add(SideFirst *f, const mbsShape *shape, int s) {
  int *c = f->any;
  for (int pass = 0; pass < 2; pass++, c = f->moving) {
    if (pass == 1 && shape[s].fixed) {
      break;
    }
    if (c[0] < 0) {
      c[0] = s;
    } else if (c[1] < 0 && shape[c[0]].owner != shape[s].owner) {
      c[1] = s;
    }
  }
  f->npts = f->npts > shape[s].npts ? f->npts : shape[s].npts;
}

/* the first shape of f that shape a may touch (another owner, not both fixed), -1 none */
static int side_first_partner(const SideFirst *f, const mbsShape *shape, int a) {
  const int *c = shape[a].fixed ? f->moving : f->any;
  for (int k = 0; k < 2; k++) {
    if (c[k] >= 0 && shape[c[k]].owner != shape[a].owner) {
      return c[k];
    }
  }
  return -1;
}

/* one shape-entry membership while compiling (model.h "contacts") */
typedef struct {
  int shape, contact, side;
} Member;

/* shapes, contact entries and the entries of each shape (model.h "contacts") after the bodies */
static mbsStatus compile_contacts(mbsModel *m, const mbsDeck *deck, mbsError *err) {
  /* participants: bodies 0 .. nb - 1, beam nodes nb .. nb + nbn - 1 (body references), surfaces
   * nb + nbn .. np - 1 (their patches), the
   * ground (-1, its shapes at index np) */
  int nb = deck->nbody, ng = deck->nground_shape, nbn = deck->nbeam_node;
  int np = nb + nbn + deck->nsurface;
  int *first = NULL; /* (np + 2) first shape of participant b, the ground's at index np */
  int *side = NULL;  /* (ns) an entry's MBS_MEMBER_* bits of each shape, then slots */
  long long *pmax = NULL; /* (ns) the most points one of a shape's pairs can give */
  Member *mem = NULL;     /* the memberships, entry by entry */
  mbsStatus st = MBS_OK;

  m->spacetime_elements = spacetime_block(deck);

  /* shapes: each body's in body order, a sphere on each node of beams with collision, then
   * the ground's (last: a pair's shape b) */
  long long nshape = ng, npts = 0;
  for (int b = 0; b < nb; b++) {
    nshape += deck->bodies[b].ncollision;
    for (int k = 0; k < deck->bodies[b].ncollision; k++) {
      npts += deck->bodies[b].collision[k].npts;
    }
  }
  for (int k = 0; k < deck->nbeam; k++) {
    const mbsDeckBeam *db = &deck->beams[k];
    nshape += db->collision_radius > 0.0 ? db->nnode - db->collision_segments : 0;
  }
  for (int f = 0; f < deck->nsurface; f++) {
    nshape += (long long)(deck->surfaces[f].rows - 1) * (deck->surfaces[f].cols - 1);
  }
  for (int k = 0; k < ng; k++) {
    npts += deck->ground_shapes[k].npts;
  }
  if (nshape > INT_MAX / 4 || npts > INT_MAX / 4) {
    return mbs_error_set(err, MBS_ERR_MODEL, deck->path, 0, 0,
                         "too many contact shapes or points");
  }
  if ((nshape > 0 && !(m->shape = calloc((size_t)nshape, sizeof(*m->shape)))) ||
      (npts > 0 && !(m->contact_pts = calloc((size_t)npts * 3, sizeof(double)))) ||
      (deck->ncontact > 0 && !(m->contact = calloc((size_t)deck->ncontact, sizeof(*m->contact)))) ||
      !(first = calloc((size_t)np + 2, sizeof(int)))) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto done;
  }
  int ns = 0, npt = 0;
  for (int b = 0; b < nb; b++) {
    first[b] = ns;
    for (int k = 0; k < deck->bodies[b].ncollision; k++, ns++) {
      compile_shape(m, deck, b, k, &deck->bodies[b].collision[k], &m->shape[ns], &npt);
      m->shape[ns].owner = b;
      m->shape[ns].fixed = deck->bodies[b].fixed;
    }
  }
  for (int k = 0; k < deck->nbeam; k++) {
    const mbsDeckBeam *db = &deck->beams[k];
    for (int i = 0; i < db->nnode; i++) {
      first[nb + db->node0 + i] = ns;
      if (db->collision_radius > 0.0 && i < db->nnode - db->collision_segments) {
        compile_node_shape(m, deck, k, i, &m->shape[ns]);
        m->shape[ns++].owner = nb + k;
      }
    }
  }
  for (int f = 0; f < deck->nsurface; f++) {
    const mbsDeckSurface *sf = &deck->surfaces[f];
    first[nb + nbn + f] = ns;
    for (int i = 0; i + 1 < sf->rows; i++) {
      for (int j = 0; j + 1 < sf->cols; j++) {
        compile_patch(m, deck, f, i, j, &m->shape[ns++]);
      }
    }
  }
  first[np] = ns;
  for (int k = 0; k < ng; k++, ns++) {
    compile_shape(m, deck, -1, k, &deck->ground_shapes[k], &m->shape[ns], &npt);
    m->shape[ns].owner = -1;
    m->shape[ns].fixed = 1;
  }
  first[np + 1] = ns;
  m->nshape = ns;
  m->ncontact_pts = npt;

  /* the contact entries */
  for (int e = 0; e < deck->ncontact; e++) {
    const mbsDeckContact *dc = &deck->contacts[e];
    mbsContactSpec *c = &m->contact[e];
    snprintf(c->name, sizeof(c->name), "%s", dc->name);
    c->mark = dc->mark;
#define CONTACT_COPY(type, name, def) c->name = dc->name;
    MBS_CONTACT_FIELDS(CONTACT_COPY)
#undef CONTACT_COPY
  }
  m->ncontact = deck->ncontact;

  /* the memberships, entry by entry: the shapes of the participants each side picks. No list
   * of pairs: a pair is every (shape of side 1, shape of side 2) of different owners (a body,
   * a beam: its nodes never touch each other), not both fixed, and belongs to the first entry
   * that names it (mbs_contact_pair_entry). Per entry and side the first shapes of each kind
   * (SideFirst) tell in linear time which shapes have a partner, whether the entry names a
   * pair of kinds the geometry does not handle, and the most points a shape's pairs give */
  side = calloc((size_t)ns + 1, sizeof(int));
  pmax = calloc((size_t)ns + 1, sizeof(long long));
  if (!side || !pmax) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto done;
  }
  int nmem = 0, memcap = 0, gfirst = first[np];
  for (int e = 0; e < deck->ncontact; e++) {
    const mbsDeckContact *dc = &deck->contacts[e];
    for (int k = 0; k < ns; k++) {
      side[k] = 0;
    }
    for (int sd = 0; sd < 2; sd++) {
      for (int b = -1; b < np; b++) {
        if (!pattern_picks(deck, dc, sd, b)) {
          continue;
        }
        int ib = b < 0 ? np : b;
        for (int k = first[ib]; k < first[ib + 1]; k++) {
          side[k] |= sd == 0 ? MBS_MEMBER_FIRST : MBS_MEMBER_SECOND;
        }
      }
    }
    /* per side, per kind (and all kinds: index MBS_SHAPE_COUNT), in the participants' order
     * (rank r: the ground's shapes first) */
    SideFirst sf[2][MBS_SHAPE_COUNT + 1];
    for (int sd = 0; sd < 2; sd++) {
      for (int k = 0; k <= MBS_SHAPE_COUNT; k++) {
        sf[sd][k] = (SideFirst){{-1, -1}, {-1, -1}, 0};
      }
    }
    for (int r = 0; r < ns; r++) {
      int k = r < ng ? gfirst + r : r - ng;
      for (int sd = 0; sd < 2; sd++) {
        if (side[k] & (sd == 0 ? MBS_MEMBER_FIRST : MBS_MEMBER_SECOND)) {
          side_first_add(&sf[sd][m->shape[k].kind], m->shape, k);
          side_first_add(&sf[sd][MBS_SHAPE_COUNT], m->shape, k);
        }
      }
    }
    /* a pair of kinds the geometry does not handle: the first shape of side 1 that has a
     * partner of such a kind on side 2, with the first such partner */
    for (int r = 0; r < ns; r++) {
      int a = r < ng ? gfirst + r : r - ng, bb = -1;
      if (!(side[a] & MBS_MEMBER_FIRST)) {
        continue;
      }
      for (int kb = 0; kb < MBS_SHAPE_COUNT; kb++) {
        int c = mbs_collide_supported(m->shape[a].kind, (mbsShapeKind)kb)
                    ? -1
                    : side_first_partner(&sf[1][kb], m->shape, a);
        /* the earliest in the participants' order (rank) */
        if (c >= 0 && (bb < 0 || (c >= gfirst ? c - gfirst : c + ng) <
                                     (bb >= gfirst ? bb - gfirst : bb + ng))) {
          bb = c;
        }
      }
      if (bb >= 0) {
        const mbsShape *sa = &m->shape[a], *sb = &m->shape[bb];
        st = mbs_error_set(err, MBS_ERR_DECK, deck->path, dc->mark.line, dc->mark.col,
                           "contacts[%d] '%s': shapes '%s' (%s) and '%s' (%s) cannot "
                           "touch: no contact of %s with %s; supported pairs: %s",
                           e, dc->name, sa->name, mbs_shape_word(sa->kind), sb->name,
                           mbs_shape_word(sb->kind), mbs_shape_word(sa->kind),
                           mbs_shape_word(sb->kind), mbs_collide_supported_list());
        goto done;
      }
    }
    /* the memberships of the entry, marked where the other side has a partner; the most
     * points a pair of the shape can give */
    for (int k = 0; k < ns; k++) {
      if (!side[k]) {
        continue;
      }
      int sd_bits = side[k];
      for (int sd = 0; sd < 2; sd++) {
        if (!(sd_bits & (sd == 0 ? MBS_MEMBER_FIRST : MBS_MEMBER_SECOND))) {
          continue;
        }
        const SideFirst *other = sf[1 - sd];
        if (side_first_partner(&other[MBS_SHAPE_COUNT], m->shape, k) < 0) {
          continue;
        }
        side[k] |= MBS_MEMBER_PAIRED;
        for (int kb = 0; kb < MBS_SHAPE_COUNT; kb++) {
          if (side_first_partner(&other[kb], m->shape, k) < 0) {
            continue;
          }
          mbsShape rep = {.kind = (mbsShapeKind)kb, .npts = other[kb].npts};
          long long mx = mbs_collide_max(&m->shape[k], &rep);
          pmax[k] = mx > pmax[k] ? mx : pmax[k];
        }
      }
      if (nmem == memcap) {
        memcap = memcap > 0 ? 2 * memcap : 64;
        Member *grown = memcap < INT_MAX / 4 ? realloc(mem, (size_t)memcap * sizeof(*mem)) : NULL;
        if (!grown) {
          st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
          goto done;
        }
        mem = grown;
      }
      mem[nmem++] = (Member){k, e, side[k]};
      if (side[k] & MBS_MEMBER_PAIRED) {
        m->contact[e].paired = 1;
      }
    }
    m->ncontact_paired += m->contact[e].paired;
  }

  /* by shape, the entries ascending within each (the list is in entry order) */
  m->nmember = nmem;
  if (!(m->shape_member = calloc((size_t)ns + 1, sizeof(int))) ||
      !(m->member_contact = malloc((size_t)(nmem > 0 ? nmem : 1) * sizeof(int))) ||
      !(m->member_side = malloc((size_t)(nmem > 0 ? nmem : 1) * sizeof(int)))) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto done;
  }
  for (int k = 0; k < nmem; k++) {
    m->shape_member[mem[k].shape + 1]++;
  }
  for (int k = 0; k < ns; k++) {
    m->shape_member[k + 1] += m->shape_member[k];
    side[k] = m->shape_member[k]; /* the next free slot */
  }
  long long cmax = 0;
  for (int k = 0; k < nmem; k++) {
    int slot = side[mem[k].shape]++;
    m->member_contact[slot] = mem[k].contact;
    m->member_side[slot] = mem[k].side;
    if (mem[k].side & MBS_MEMBER_PAIRED) {
      m->shape[mem[k].shape].paired = 1;
    }
  }
  /* the solver's storage: a few neighbours' points for every bounded shape in a pair (each
   * pair has one: two planes never touch) */
  for (int k = 0; k < ns; k++) {
    if (m->shape[k].paired) {
      m->nshape_paired++;
      cmax += isfinite(m->shape[k].radius) ? MBS_CONTACT_NEIGHBOURS * pmax[k] : 0;
    }
  }
  if (cmax > INT_MAX / 64) {
    st = mbs_error_set(err, MBS_ERR_MODEL, deck->path, 0, 0,
                       "the contact pairs may give %lld contact points at once; too many", cmax);
    goto done;
  }
  m->contact_max = (int)cmax;

  /* only moreau integrates contacts (the reader says so where the integrator is chosen) */
  if (m->ncontact_paired > 0 && deck->solver.integrator != MBS_INTEGRATOR_AUTO &&
      !mbs_integrator_policy(deck->solver.integrator)->contacts) {
    st = mbs_error_set(err, MBS_ERR_DECK, deck->path, 0, 0,
                       "solver.integrator %s cannot handle contacts; contacts need moreau",
                       mbs_integrator_word(deck->solver.integrator));
  }
done:
  free(first);
  free(side);
  free(pmax);
  free(mem);
  return st;
}

/* integrator: auto -> contact pairs -> moreau (Moreau-Jean time stepping, the integrator of
 * set-valued contact laws; penalty contacts go there too for now); otherwise em, also
 * with dampers: their forces at the step's midpoint state dissipate c |dl/dt|^2 dt >= 0 per
 * step, exactly what /energy/dissipated counts, and em stays energy-stable for nonlinear
 * rotation, where genalpha is not (a top spinning at omega dt = 0.2 blows up under it).
 * Runs after compile_contacts. */
static void choose_integrator(mbsModel *m, const mbsDeck *deck) {
  m->integrator = deck->solver.integrator;
  if (m->integrator == MBS_INTEGRATOR_AUTO && m->ncontact_paired > 0) {
    /* the first entry (in deck order) with a pair, unilateral ones first */
    int uni = -1, any = -1;
    for (int e = m->ncontact - 1; e >= 0; e--) {
      if (m->contact[e].paired) {
        any = e;
        uni = m->contact[e].law == MBS_CONTACT_UNILATERAL ? e : uni;
      }
    }
    m->integrator = MBS_INTEGRATOR_MOREAU;
    if (uni >= 0) {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "auto: unilateral contacts ('%s'), so Moreau-Jean time stepping (moreau)",
               m->contact[uni].name);
    } else {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "auto: penalty contacts ('%s'), so Moreau-Jean time stepping (moreau), the "
               "integrator that handles contacts",
               m->contact[any].name);
    }
  } else if (m->integrator == MBS_INTEGRATOR_AUTO) {
    const char *damper = NULL;
    for (int l = 0; l < deck->nload && !damper; l++) {
      const mbsDeckLoad *dl = &deck->loads[l];
      if ((dl->type == MBS_LOAD_SPRING || dl->type == MBS_LOAD_ROTATIONAL_SPRING) &&
          dl->damping > 0.0) {
        damper = dl->name;
      }
    }
    m->integrator = MBS_INTEGRATOR_EM;
    if (deck->nbeam > 0) {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "auto: no contacts, so the energy-momentum scheme (em), also for the beams "
               "('%s'); damping is counted in /energy/dissipated",
               deck->beams[0].name);
    } else if (damper) {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "auto: no contacts or flexible parts, so the energy-momentum scheme (em); the "
               "dissipation of dampers such as '%s' is counted in /energy/dissipated",
               damper);
    } else {
      snprintf(m->integrator_reason, sizeof(m->integrator_reason),
               "auto: no contacts, dampers or flexible parts, so the energy-momentum scheme "
               "(em) conserves energy and momenta");
    }
  } else {
    snprintf(m->integrator_reason, sizeof(m->integrator_reason), "chosen in the deck");
  }
}

/* the energy monitor's defaults per integrator (relative to the energy scale; its policy,
 * mbsIntegratorPolicy): a sound em run balances to 1e-12, midpoint and genalpha to their
 * O(dt^2) error, euler loses energy at first order; any integrator gaining as much energy as
 * the problem holds has blown up */
static void energy_thresholds(mbsModel *m, const mbsDeck *deck) {
  const mbsIntegratorPolicy *p = mbs_integrator_policy(m->integrator);
  double warn = p->energy_warning_explicit > 0.0 && m->moreau_variant == MBS_MOREAU_EXPLICIT
                    ? p->energy_warning_explicit
                    : p->energy_warning;
  m->energy_warning = deck->solver.energy_warning > 0.0 ? deck->solver.energy_warning : warn;
  m->energy_unstable = deck->solver.energy_unstable > 0.0 ? deck->solver.energy_unstable : 1.0;
}

void mbs_model_number_rows(mbsModel *m) {
  /* constraint elements' rows follow the quadratic rows */
  m->ncon = m->nrow;
  for (int e = 0; e < m->nelem; e++) {
    m->elem[e].con0 = m->ncon;
    m->ncon += m->elem[e].ncon;
  }
  m->ndof = m->nq - m->ncon;
}

mbsModel *mbs_model_compile(const mbsDeck *deck, mbsError *err) {
  mbsModel *m = calloc(1, sizeof(mbsModel));
  if (!m) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NULL;
  }
  /* sizes */
  m->nbody = deck->nbody;
  m->njoint = deck->njoint;
  m->nload = deck->nload;
  for (int b = 0; b < deck->nbody; b++) {
    if (deck->bodies[b].fixed) {
      continue;
    }
    int rigid = deck->bodies[b].type == MBS_BODY_RIGID;
    m->nnode += rigid ? 4 : 1;
  }
  m->nnode += 4 * deck->nbeam_node;
  m->nbeam = deck->nbeam;
  m->nattach = deck->nbeam_node; /* the beam nodes' frames: alloc_model adds the bodies' */
  for (int j = 0; j < deck->njoint; j++) {
    m->nprofile_points += deck->joints[j].motion_profile.ntab;
  }
  /* one scalar coordinate (the joint angle) per augmented joint torque */
  for (int l = 0; l < deck->nload; l++) {
    const mbsDeckLoad *dl = &deck->loads[l];
    m->nscalar += dl->type == MBS_LOAD_JOINT_TORQUE && dl->method == MBS_TORQUE_AUGMENTED;
    if ((dl->type == MBS_LOAD_JOINT_TORQUE || dl->type == MBS_LOAD_JOINT_FORCE ||
         dl->type == MBS_LOAD_ROTATIONAL_SPRING) &&
        deck->joints[dl->joint].type == MBS_JOINT_SLIDE_ON_BEAM) {
      mbs_error_set(err, MBS_ERR_MODEL, deck->path, dl->mark.line, dl->mark.col,
                    "load '%s': joint '%s' is a slide_on_beam joint, which takes no joint "
                    "load; apply a force to its body instead",
                    dl->name, deck->joints[dl->joint].name);
      free(m);
      return NULL;
    }
    m->nprofile_points += dl->profile.ntab + dl->target_profile.ntab;
    m->nctrl += dl->has_control && !dl->computed_torque;
  }
  /* one scalar coordinate (the material coordinate s) per slide_on_beam joint in the
   * relative parametrization */
  for (int j = 0; j < deck->njoint; j++) {
    m->nscalar += deck->joints[j].type == MBS_JOINT_SLIDE_ON_BEAM && !deck->joints[j].absolute;
  }
  m->nq = 3 * m->nnode + m->nscalar;
  vcopy(m->gravity, deck->gravity);
  snprintf(m->deck_path, sizeof(m->deck_path), "%s", deck->path);
  snprintf(m->title, sizeof(m->title), "%s", deck->title);
  snprintf(m->output_file, sizeof(m->output_file), "%s", deck->output.file);
#define SOLVER_COPY(type, name, def) m->name = deck->solver.name;
  MBS_SOLVER_FIELDS(SOLVER_COPY)
#undef SOLVER_COPY
  m->output_every = deck->output.every;
  m->output_dt = deck->output.dt;
  m->output_xdmf = deck->output.xdmf;
  m->output_compression = deck->output.compression;
  if (memory_budget(m, deck, err) != MBS_OK) {
    goto fail;
  }
  if (alloc_model(m) != MBS_OK) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto fail;
  }
  if (m->nq == 0) {
    mbs_error_set(err, MBS_ERR_MODEL, deck->path, 0, 0,
                  "every body is fixed: there is nothing to simulate");
    goto fail;
  }
  if (compile_bodies(m, deck) != MBS_OK || compile_beams(m, deck) != MBS_OK) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto fail;
  }
  /* with initial.assemble the overlap of shapes is checked at the assembled positions
   * (mbs_model_set_initial) */
  if (compile_contacts(m, deck, err) != MBS_OK ||
      (!deck->assemble && mbs_contact_check_initial(m, err) != MBS_OK)) {
    goto fail;
  }
  choose_integrator(m, deck);
  /* error control chooses the steps of the schemes that have a local error estimate (auto
   * may have become moreau) */
  if (m->tolerance > 0.0 && !mbs_integrator_policy(m->integrator)->error_control) {
    mbs_error_set(err, MBS_ERR_DECK, deck->path, deck->solver.tolerance_mark.line,
                  deck->solver.tolerance_mark.col,
                  "solver.tolerance chooses the steps of em, midpoint, genalpha and spacetime "
                  "only (the integrator is %s: %s): remove it and give dt",
                  mbs_integrator_word(m->integrator), m->integrator_reason);
    goto fail;
  }
  energy_thresholds(m, deck);
  if (compile_joints(m, deck, err) != MBS_OK) {
    goto fail;
  }
  if (compile_elements(m, deck, err) != MBS_OK || check_switching(m, deck, err) != MBS_OK) {
    goto fail;
  }
  if (beam_elements(m, deck) != MBS_OK) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto fail;
  }
  if (joint_frames(m, deck) != MBS_OK) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto fail;
  }
  link_qidx(m);
  if (joint_elements(m) != MBS_OK) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    goto fail;
  }
  initial_errors(m);
  if (beam_setup(m, err) != MBS_OK || check_element_bounds(m, err) != MBS_OK ||
      slide_setup(m, deck, err) != MBS_OK) {
    goto fail;
  }
  augmented_velocities(m);
  slide_velocities(m);
  /* each row's number within its joint (or body, or beam node: six rows each), which names
   * it whatever is dropped */
  for (int r = 0, b0 = 0; r < m->nrow; r++) {
    mbsConRow *row = &m->con[r];
    b0 = (r > 0 && row->joint < 0 && m->con[r - 1].joint < 0 && m->con[r - 1].body == row->body)
             ? b0
             : r;
    row->jrow = row->joint >= 0 ? r - m->joint_con[row->joint]
                : row->body >= 0 ? r - b0
                                 : (r - b0) % 6;
  }
  mbs_model_number_rows(m);
  /* joints that engage later leave the system until then (zero rows): the checks of t = 0
   * below see the joints that hold at t = 0 */
  mbs_model_joint_reset(m);
  /* redundant rows first: repeated joint rows of closed loops are dropped, conflicting ones
   * refused (they also explain most over-constrained models). Those of joints that hold at
   * t = 0 only: a loop that a switching joint closes later is checked when it engages
   * (mbs_model_phase_redundant), and a switching joint's repeated rows are dropped for the
   * first phase only (engagement state [14], kept in joint_engage0) */
  if (mbs_model_drop_redundant(m, m->q0, 0.0, err) != MBS_OK) {
    goto fail;
  }
  /* the degrees of freedom of the first phase: the zero rows of joints released at t = 0 (or
   * dropped for it) hold nothing */
  for (int r = 0; r < m->nrow && m->nengage > 0; r++) {
    m->ndof += mbs_row_released(m, r);
  }
  if (m->ndof < 0) {
    mbs_error_set(err, MBS_ERR_MODEL, deck->path, 0, 0,
                  "the joints impose %d constraints on %d coordinates: the model is "
                  "over-constrained",
                  m->ncon, m->nq);
    goto fail;
  }
  /* the rows of the first phase (those dropped above as a switching joint's too) */
  mbs_model_joint_reset(m);
  /* positions: the joints hold at t = 0, or are made to when the run starts
   * (initial.assemble: mbs_solver_assemble, then mbs_model_set_initial) */
  m->assemble = deck->assemble;
  if (!m->assemble && check_initial_positions(m, err) != MBS_OK) {
    goto fail;
  }
  /* velocities: checked here (after the assembly with initial.assemble), or projected onto
   * the joints when the run starts */
  m->project_velocities = deck->project_velocities;
  for (int j = 0; j < m->njoint; j++) {
    m->joint_initial_rate[j] = deck->joints[j].has_initial_rate ? deck->joints[j].initial_rate : NAN;
  }
  if (!m->project_velocities && !m->assemble && check_initial_velocities(m, err) != MBS_OK) {
    goto fail;
  }
  return m;
fail:
  mbs_model_destroy(m);
  return NULL;
}

mbsStatus mbs_model_set_initial(mbsModel *m, const double *q, mbsError *err) {
  /* each director frame (a rigid body, a beam node) keeps the velocity of its centre of mass
   * and its angular velocity (world): omega = 1/2 sum_i d_i x v_i for orthonormal d_i (v_i =
   * omega x d_i), the centre x_c = phi - r^i d_i (r the reference point, zero for a beam
   * node) */
  for (int f = 1; f < m->nattach; f++) {
    int n0 = m->attach_node[f];
    if (n0 < 0 || mbs_attach_nnode(m->attach_kind[f]) != 4) {
      continue; /* fixed, or a point mass (its velocity stays) */
    }
    int b = m->attach_body[f];
    const double *r = b >= 0 && b < m->nbody ? m->body_ref + 3 * b : NULL;
    double w[3] = {0, 0, 0}, vc[3], rr0[3] = {0, 0, 0}, rr1[3] = {0, 0, 0}, t[3];
    for (int i = 0; i < 3; i++) {
      vcross(t, m->q0 + 3 * (n0 + 1 + i), m->v0 + 3 * (n0 + 1 + i));
      vaxpy(w, 0.5, t);
      if (r) {
        vaxpy(rr0, r[i], m->q0 + 3 * (n0 + 1 + i));
        vaxpy(rr1, r[i], q + 3 * (n0 + 1 + i));
      }
    }
    vcross(t, w, rr0);
    vsub(vc, m->v0 + 3 * n0, t);
    vcross(t, w, rr1);
    vcopy(m->v0 + 3 * n0, vc);
    vaxpy(m->v0 + 3 * n0, 1.0, t);
    for (int i = 0; i < 3; i++) {
      vcross(m->v0 + 3 * (n0 + 1 + i), w, q + 3 * (n0 + 1 + i));
    }
  }
  memcpy(m->q0, q, (size_t)m->nq * sizeof(double));
  augmented_velocities(m);
  slide_velocities(m);
  /* what is measured from t = 0 is measured from here: the joints' coordinates, the angle of
   * rotational springs, a spring's default rest length (its length at t = 0) */
  for (int j = 0; j < m->njoint; j++) {
    mbs_elem_sides_rebase(m, &m->joint_frame[j], q);
  }
  for (int k = 0; k < m->nelem; k++) {
    mbs_elem_rebase(m, &m->elem[k], q);
  }
  mbsStatus st = mbs_contact_check_initial(m, err);
  if (st != MBS_OK) {
    return st;
  }
  return m->project_velocities ? MBS_OK : check_initial_velocities(m, err);
}

void mbs_model_destroy(mbsModel *m) {
  if (!m) {
    return;
  }
  for (int i = 0; m->profile && i < m->nprofile; i++) {
    mbs_profile_expr_destroy(m->profile[i].ev);
  }
  void *ptrs[] = {
      m->coord_names,  m->q0,          m->v0,          m->node_position, m->body_name,
      m->body_type,    m->body_fixed,  m->body_node,   m->body_mass,     m->body_e,
      m->body_E,       m->body_ref,    m->body_pos0,   m->body_R0,       m->mass_a,
      m->mass_b,       m->mass_val,    m->con,         m->joint_name,    m->joint_type,
      m->joint_con,    m->joint_ncon,  m->joint_elem,  m->joint_mark,  m->joint_body,    m->joint_point,
      m->elem,         m->load_name,   m->profile,     m->profile_table, m->drop,
      m->red_row,      m->red_colmap,  m->joint_frame, m->joint_initial_rate,
      m->joint_attach, m->body_attach, m->attach_kind, m->attach_node,   m->attach_body,
      m->attach_name,  m->attach_pos0, m->attach_R0,   m->elem_qidx_pool,
      m->shape,        m->contact,     m->shape_member, m->member_contact, m->member_side,
      m->contact_pts,  m->beam,
      m->body_visual,  m->body_visual_size,            m->joint_point_first,
      m->load_joint,   m->ctrl_state,  m->joint_engage, m->joint_engage0, m->joint_from, m->joint_until};
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  free(m);
}

const char *mbs_model_coord_name(const mbsModel *m, int i) {
  return m->coord_names + (size_t)i * (size_t)m->coord_name_len;
}
