/* observe.c: energies, momenta, constraint violation and body kinematics (docs/output.md) */
#include <math.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/solver.h"
#include "solver/schur.h"
#include "util/vec3.h"

/* -lambda_r grad g_r of one row (its entries idx, val) added onto the nodes of frame f (n0 its
 * first node; rigid: a body's four) */
static void row_share(const mbsModel *m, int n0, int rigid, double lambda, const int *idx,
                      const double *val, int nz, double gen[4][3]) {
  for (int e = 0; e < nz; e++) {
    int qi = idx[e], li = qi / 3 - n0;
    if (qi < 3 * m->nnode && li >= 0 && li < 4 && (li == 0 || rigid)) {
      gen[li][qi % 3] -= lambda * val[e];
    }
  }
}

/* resultant of -lambda_r grad g_r on the nodes of frame f (a body's or a beam node's): force F
 * and torque about the
 * point p = phi + c^i d_i (c in director coordinates), M = d_i x f^i + (phi - p) x F
 * (seed 000 eq. 33); q is where the step evaluated the constraint forces */
static void body_resultant(const mbsModel *m, mbsData *d, const mbsSchur *s, int j, int f,
                           const double *q, const double *p_world, double F[3], double M[3]) {
  double gen[4][3];
  memset(gen, 0, sizeof(gen));
  int n0 = m->attach_node[f], rigid = mbs_attach_nnode(m->attach_kind[f]) == 4;
  /* the joint's rows: its quadratic rows, then those of constraint elements it owns (drives,
   * augmentation), in the walk's order; from the record's Schur complement when it holds G
   * at q (s not NULL: the same entries, so the same sums), else walked here (d->ework holds
   * an element's g and G: mbs_rows_work_size doubles) */
  if (s) {
    const int *idx;
    int nz;
    for (int r = m->joint_con[j]; r < m->joint_con[j] + m->joint_ncon[j]; r++) {
      const double *val = mbs_schur_row(s, r, &idx, &nz);
      row_share(m, n0, rigid, d->lambda_rec[r], idx, val, nz, gen);
    }
    int e0 = m->joint_elem ? m->joint_elem[2 * j] : 0;
    int e1 = m->joint_elem ? m->joint_elem[2 * j + 1] : m->nelem;
    for (int k = e0; k < e1; k++) {
      const mbsElem *el = &m->elem[k];
      for (int c = 0; el->joint == j && c < el->ncon; c++) {
        const double *val = mbs_schur_row(s, el->con0 + c, &idx, &nz);
        row_share(m, n0, rigid, d->lambda_rec[el->con0 + c], idx, val, nz, gen);
      }
    }
  } else {
    mbsRowIter it;
    for (mbs_rows_begin_joint(&it, m, j, q, d->t, 1, d->ework); mbs_rows_next(&it);) {
      row_share(m, n0, rigid, d->lambda_rec[it.row], it.idx, it.val, it.nz, gen);
    }
  }
  vcopy(F, gen[0]);
  const double *phi = q + 3 * n0;
  double arm[3], t[3];
  vsub(arm, phi, p_world);
  vcross(M, arm, F);
  if (rigid) {
    for (int i = 1; i < 4; i++) {
      vcross(t, q + 3 * (n0 + i), gen[i]);
      vaxpy(M, 1.0, t);
    }
  }
}

void mbs_joint_reactions(const mbsModel *m, mbsData *d) {
  const double *q = d->q;
  const mbsSchur *s = mbs_schur_at(d->schur, q, d->t) ? d->schur : NULL;
  for (int j = 0; j < m->njoint; j++) {
    double *out = d->joint_reaction + 6 * j;
    memset(out, 0, 6 * sizeof(double));
    int f1 = m->joint_attach[2 * j], f2 = m->joint_attach[2 * j + 1];
    double p[3];
    /* the joint point fixed to body 2 at the evaluation configuration (a world point if
     * body 2 is static) */
    mbs_attach_point(m, f2, m->joint_point + 3 * j, q, p);
    if (m->attach_node[f2] >= 0) {
      body_resultant(m, d, s, j, f2, q, p, out, out + 3);
    } else {
      /* body 2 is static: minus what the joint exerts on body 1 (action and reaction) */
      body_resultant(m, d, s, j, f1, q, p, out, out + 3);
      for (int i = 0; i < 6; i++) {
        out[i] = -out[i];
      }
    }
  }
  /* a loop with rows dropped as redundant: its reactions of least norm (docs/output.md) */
  if (m->red_nrow > 0) {
    mbs_model_min_norm_reactions(m, q, d->t, d->lambda_rec, 1.0, d->joint_reaction,
                                 d->redund_work, d->redund_list, d->redund_rows);
  }
}

/* the force and torque of a drive element's row (a motion or a computed-torque law) on its
 * second body: -lambda grad g, as in the reaction, about the joint point (world) */
static void drive_resultant(const mbsModel *m, const mbsData *d, const mbsElem *el, double r6[6]) {
  double g[1], G[MBS_TWO_BODY_MAXQ], f[MBS_TWO_BODY_MAXQ];
  mbs_element_kind(el->kind)->constraint(m, el, d->q, d->t, g, G);
  for (int i = 0; i < el->nq; i++) {
    f[i] = -d->lambda_rec[el->con0] * G[i];
  }
  mbs_elem_side_resultant(el, d->q, f, r6);
}

void mbs_joint_drives(const mbsModel *m, mbsData *d) {
  const double *q = d->q;
  memset(d->joint_drive, 0, 6 * (size_t)m->njoint * sizeof(double));
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    int j = el->kind == MBS_ELEM_DRIVE && el->joint >= 0 ? el->joint
            : el->load >= 0 && el->load < m->nload       ? m->load_joint[el->load]
                                                         : -1;
    if (j < 0) {
      continue;
    }
    double r6[6];
    if (el->kind == MBS_ELEM_DRIVE) {
      drive_resultant(m, d, el, r6);
    } else {
      mbs_load_resultant(m, el, q, d->v_rec, d->t, r6);
    }
    double *out = d->joint_drive + 6 * j, a[3];
    for (int c = 0; c < 3; c++) {
      mbs_elem_joint_axis(&m->joint_frame[j], q, c, a);
      out[c] += vdot(r6, a);
      out[3 + c] += vdot(r6 + 3, a);
    }
  }
}

void mbs_joint_track(const mbsModel *m, mbsData *d) {
  double x[3];
  int ang[3];
  for (int j = 0; j < m->njoint; j++) {
    double *c = d->joint_coord + 3 * j;
    mbs_joint_coordinates(m, j, d->q, d->v, x, NULL, ang);
    for (int k = 0; k < 3; k++) {
      /* an angle goes on from its last value by the change within (-pi, pi] */
      c[k] = (ang[k] && isfinite(c[k])) ? c[k] + remainder(x[k] - c[k], 6.283185307179586) : x[k];
    }
  }
}

void mbs_energy(const mbsModel *m, const double *q, const double *v, double *kinetic,
                double *potential) {
  double T = 0.0, V = 0.0;
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    T += (a == b ? 0.5 : 1.0) * m->mass_val[e] * vdot(v + 3 * a, v + 3 * b);
  }
  for (int k = 0; k < m->nelem; k++) {
    const mbsElementKindTable *kind = mbs_element_kind(m->elem[k].kind);
    if (kind->potential) {
      V += kind->potential(m, &m->elem[k], q);
    }
  }
  *kinetic = T;
  *potential = V;
}

void mbs_observe(const mbsModel *m, mbsData *d, mbsObservables *o) {
  memset(o, 0, sizeof(*o));
  /* energies and momenta of the integrator's own velocities: the quantities its balance
   * laws hold for (em conserves them exactly); the kinetic energy of the projected
   * velocities differs by 1/2 |dv|_M^2 = O(dt^4). Body velocities and reactions come from
   * the projected, consistent state. */
  const double *q = d->q, *v = d->v;
  o->velocity_violation = d->velocity_violation;
  /* T = 1/2 v . M v; J = sum_ab M^ab q_a x v_b (seed 000 eq. 55); L = sum_ab M^ab v_b over
   * position nodes a only (for a rigid body M v_phi + e^i v_i, seed 000 eq. 24) */
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    double w = m->mass_val[e], jx[3];
    const double *qa = q + 3 * a, *qb = q + 3 * b, *va = v + 3 * a, *vb = v + 3 * b;
    if (a == b) {
      o->kinetic += 0.5 * w * vdot(va, va);
      if (m->node_position[a]) {
        vaxpy(o->linear_momentum, w, va);
      }
      vcross(jx, qa, va);
      vaxpy(o->angular_momentum, w, jx);
    } else {
      o->kinetic += w * vdot(va, vb);
      if (m->node_position[a]) {
        vaxpy(o->linear_momentum, w, vb);
      }
      if (m->node_position[b]) {
        vaxpy(o->linear_momentum, w, va);
      }
      vcross(jx, qa, vb);
      vaxpy(o->angular_momentum, w, jx);
      vcross(jx, qb, va);
      vaxpy(o->angular_momentum, w, jx);
    }
  }
  for (int k = 0; k < m->nelem; k++) {
    const mbsElementKindTable *kind = mbs_element_kind(m->elem[k].kind);
    if (kind->potential) {
      o->potential += kind->potential(m, &m->elem[k], q);
    }
  }
  o->potential += d->contact_potential + d->gravity_unapplied;
  o->external_work = d->external_work;
  o->dissipated = d->dissipated;
  o->contact_dissipated = d->contact_dissipated;
  o->impact_dissipated = d->impact_dissipated;
  o->friction_dissipated = d->friction_dissipated;
  o->numerical_dissipated = d->numerical_dissipated;
  /* from the walk of the record's Schur complement when it factored at this configuration */
  o->violation = mbs_schur_at(d->schur, q, d->t) ? mbs_schur_violation(d->schur)
                                                 : mbs_constraint_violation(m, q, d->t, NULL);
  mbs_joint_reactions(m, d);
  mbs_joint_drives(m, d);
  /* each load's force and torque on its second body, at the consistent state */
  memset(d->load_force, 0, 6 * (size_t)m->nload * sizeof(double));
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    int share = el->kind == MBS_ELEM_FORCE && el->iparam[2] == 1;
    if (el->load >= 0 && el->load < m->nload && share) {
      /* a distributed load's nodal share (a force at the node's phi): summed, with the torque
       * about the beam's node 0 */
      double r6[6], arm[3], t3[3], *out = d->load_force + 6 * el->load;
      mbs_load_resultant(m, el, q, d->v_rec, d->t, r6);
      vsub(arm, q + el->qidx[0], q + el->iparam[3]);
      vcross(t3, arm, r6);
      vaxpy(out, 1.0, r6);
      vaxpy(out + 3, 1.0, r6 + 3);
      vaxpy(out + 3, 1.0, t3);
    } else if (el->load >= 0 && el->load < m->nload && el->kind == MBS_ELEM_DRIVE) {
      drive_resultant(m, d, el, d->load_force + 6 * el->load); /* computed torque */
    } else if (el->load >= 0 && el->load < m->nload) {
      mbs_load_resultant(m, el, q, d->v_rec, d->t, d->load_force + 6 * el->load);
    }
  }
  /* joint coordinates (tracked every step) and their rates at the consistent velocities */
  for (int j = 0; j < m->njoint; j++) {
    int ang[3];
    mbs_joint_coordinates(m, j, q, d->v_rec, NULL, d->joint_rate + 3 * j, ang);
  }
  /* bodies: centre x_c = phi - r^i d_i, v_c = v_phi - r^i v_i, omega = 1/2 d_i x v_i */
  v = d->v_rec;
  for (int b = 0; b < m->nbody; b++) {
    double *pos = d->body_pos + 3 * b, *R = d->body_rot + 9 * b;
    double *vel = d->body_vel + 3 * b, *om = d->body_omega + 3 * b;
    int n0 = m->body_node[b];
    memset(om, 0, 3 * sizeof(double));
    if (n0 < 0) {
      memcpy(pos, m->body_pos0 + 3 * b, 3 * sizeof(double));
      memcpy(R, m->body_R0 + 9 * b, 9 * sizeof(double));
      memset(vel, 0, 3 * sizeof(double));
      continue;
    }
    vcopy(pos, q + 3 * n0);
    vcopy(vel, v + 3 * n0);
    memset(R, 0, 9 * sizeof(double));
    if (m->body_type[b] != MBS_BODY_RIGID) {
      R[0] = R[4] = R[8] = 1.0;
      continue;
    }
    const double *r = m->body_ref + 3 * b;
    for (int i = 0; i < 3; i++) {
      const double *di = q + 3 * (n0 + 1 + i), *vi = v + 3 * (n0 + 1 + i);
      double w[3];
      vaxpy(pos, -r[i], di);
      vaxpy(vel, -r[i], vi);
      vcross(w, di, vi);
      vaxpy(om, 0.5, w);
      for (int c = 0; c < 3; c++) {
        R[3 * c + i] = di[c];
      }
    }
  }
}
