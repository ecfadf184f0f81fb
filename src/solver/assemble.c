/* assemble.c: the one assembler of the implicit schemes (em, midpoint, euler, genalpha),
 * parameterised by the scheme's weights (mbsSchemeWeights).
 *
 * With v eliminated through the scheme's update (em/midpoint: q_{n+1} - q_n = dt/2 (v_n +
 * v_{n+1}), seed 000 eq. 57_1; euler: q_{n+1} - q_n = dt v_{n+1}; genalpha: Newmark), the
 * unknowns are q1 = q_{n+1} and mu = dt^2 lambda:
 *     r_q = cM M (q1 - qhat) + dt^2 (P - F) + G(q*)^T mu = 0
 *     r_g = g(q1, t1) = 0
 * em/midpoint: cM = 2, qhat = q0 + dt v0, q* = (q0 + q1)/2; euler: cM = 1, q* = q1;
 * genalpha (Arnold & Bruls 2007, index 3): cM = (1 - am)/(beta (1 - af)), q* = q1, qhat from
 * the Newmark predictor and the previous accelerations.
 * P is the discrete gradient of V for em (seed 000 eq. 57_2), the gradient at q* otherwise;
 * F the non-potential force at (q*, v*, t*) (eq. 61 for torques) with v* linear in q1.
 * Multiplying the momentum balance by dt^2 and solving for dt^2 lambda is the row/column
 * scaling that removes the O(dt^-3) ill-conditioning of the index-3 iteration matrix. The
 * generic constraint rows are at most quadratic, so G((q0 + q1)/2) is their exact discrete
 * gradient: G(q*) (q1 - q0) = g(q1) - g(q0), and constraint forces do no work over a step.
 *
 * The element blocks come from the per-step arena. Every value goes into the Newton matrix
 * through the scatter helpers at the top (one per kind of map). */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/solver.h"
#include "solver/integrator.h"
#include "solver/system.h"
#include "util/arena.h"
#include "util/vec3.h"

/* max |x_i|, NaN if any x_i is NaN (fmax alone would skip it, and a NaN residual would
 * pass the convergence test) */
double mbs_norm_inf(const double *x, int n) {
  double r = 0.0;
  for (int i = 0; i < n; i++) {
    double a = fabs(x[i]);
    if (!(a <= r)) {
      if (isnan(a)) {
        return x[i];
      }
      r = a;
    }
  }
  return r;
}

static void jac_add(double *jac, int slot, double val) {
  if (slot >= 0) {
    jac[slot] += val;
  }
}

/* ---- the scatter into the Newton matrix: the only code here that knows its maps ---- */

/* inertia entry e (a 3 x 3 multiple of I3 coupling two nodes), component c: both places */
static void put_mass(const mbsSystem *sys, double *jac, int e, int c, double val) {
  jac_add(jac, sys->mass_map[6 * e + c], val);
  jac_add(jac, sys->mass_map[6 * e + 3 + c], val);
}

/* entry i of element k's block (n x n, row-major in its coordinates) */
static void put_elem(const mbsSystem *sys, double *jac, int k, int i, double val) {
  jac_add(jac, mbs_system_elem_jmap(sys, k)[i], val);
}

/* element k's constraint c, its coordinate i: the constraint row (G, transposed = 0) or the
 * multiplier's column of the balance (G^T, transposed = 1) */
static void put_elem_g(const mbsSystem *sys, const mbsModel *m, double *jac, int k, int c, int i,
                       int transposed, double val) {
  const int *gmap = mbs_system_elem_gmap(sys, k);
  jac_add(jac, gmap[(c * m->elem[k].nq + i) * 2 + transposed], val);
}

/* quadratic row `row`, its node k, component j: G (transposed = 0) or G^T (1) */
static void put_con_g(const mbsSystem *sys, double *jac, int row, int k, int j, int transposed,
                      double val) {
  const int *gmap = mbs_system_con_gmap(sys, row);
  jac_add(jac, gmap[6 * k + 3 * transposed + j], val);
}

/* Hessian block p of the quadratic rows (a multiple of I3), component j */
static void put_con_h(const mbsSystem *sys, double *jac, int p, int j, double val) {
  jac_add(jac, sys->con_hmap[3 * p + j], val);
}

void mbs_released_rows_diag(const mbsModel *m, const mbsData *d, double *jac) {
  for (int row = 0; row < m->nrow && m->nengage > 0; row++) {
    if (mbs_row_released(m, row)) {
      assert(d->con_diag[row] >= 0);
      jac_add(jac, d->con_diag[row], 1.0);
    }
  }
}

/* fmax(m, |x|) inline, NaN as fmax treats it (a NaN argument gives the other): the library
 * call took 2 % of an em step on the chain */
static inline double max_abs(double m, double x) {
  double a = fabs(x);
  return a > m || isnan(m) ? a : m;
}

/* a quadratic row's g(q1) from the step's start and increment, q1 = q0 + dq: A = A(q0) + W dq
 * (and B alike). Evaluated at the stored q1, a row of points far from the origin (a chain
 * 200 m long) carries the rounding of q1 itself, eps |q|, and that noise, fed through the
 * stale matrix of a chord iteration, held the balance rows' residual above its round-off
 * floor on chains of 1000 links and more; A(q0) is the same in every iteration of the step,
 * so here only the increment's rounding, eps |dq|, changes from one iterate to the next */
static double con_eval_step(const mbsConRow *c, const double *q0, const double *dq) {
  double A[3], B[3], dA[3] = {0.0, 0.0, 0.0}, dB[3] = {0.0, 0.0, 0.0};
  if (c->s == 0.0) {
    /* a linear row: B does not enter (mbs_con_eval) */
    vcopy(A, c->ca);
    for (int k = 0; k < c->nnode; k++) {
      vaxpy(A, c->wa[k], q0 + 3 * c->node[k]);
      vaxpy(dA, c->wa[k], dq + 3 * c->node[k]);
    }
    vaxpy(A, 1.0, dA);
    return vdot(c->n, A) + c->c0;
  }
  mbs_con_ab(c, q0, A, B);
  for (int k = 0; k < c->nnode; k++) {
    const double *x = dq + 3 * c->node[k];
    vaxpy(dA, c->wa[k], x);
    vaxpy(dB, c->wb[k], x);
  }
  vaxpy(A, 1.0, dA);
  vaxpy(B, 1.0, dB);
  return c->s * vdot(A, B) + vdot(c->n, A) + c->c0;
}

/* a constraint element: Gbar^T mu (discrete gradient for em, else G(q*)^T mu) into r_q, its
 * Hessian term into the Newton matrix, g(q1, t1) into r_g with G(q1, t1); returns the
 * largest constraint force term */
static double elem_constraint(const mbsModel *m, mbsData *d, const mbsImplicitWork *iw,
                              const mbsSchemeWeights *s, const mbsElem *el, int k, const double *q0,
                              const double *q1, double tm, double t1, int with_jac, double *g,
                              double *H, double *Ge) {
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  const double *mu = iw->mu + el->con0;
  double *r = d->res, *jac = d->jac, scale = 0.0;
  int n = el->nq, nc = el->ncon;
  memset(H, 0, (size_t)(n * n) * sizeof(double));
  double hfac = s->alpha;
  if (s->discrete && kind->constraint_discrete_gradient) {
    kind->constraint_discrete_gradient(m, el, q0, q1, tm, mu, Ge, with_jac ? H : NULL);
    hfac = 1.0;
  } else {
    kind->constraint(m, el, iw->qm, tm, g, Ge);
    if (with_jac && kind->constraint_hessian) {
      kind->constraint_hessian(m, el, iw->qm, tm, mu, H);
    }
  }
  for (int i = 0; i < n; i++) {
    double f = 0.0;
    for (int c = 0; c < nc; c++) {
      f += Ge[c * n + i] * mu[c];
      if (with_jac) {
        put_elem_g(d->sys, m, jac, k, c, i, 1, Ge[c * n + i]);
      }
    }
    r[el->qidx[i]] += f;
    scale = max_abs(scale, f);
  }
  if (with_jac) {
    for (int i = 0; i < n * n; i++) {
      put_elem(d->sys, jac, k, i, hfac * H[i]);
    }
  }
  /* g(q1, t1) and G(q1, t1) */
  kind->constraint(m, el, q1, t1, g, with_jac ? Ge : NULL);
  for (int c = 0; c < nc; c++) {
    r[m->nq + el->con0 + c] = g[c];
    if (with_jac) {
      for (int i = 0; i < n; i++) {
        put_elem_g(d->sys, m, jac, k, c, i, 0, Ge[c * n + i]);
      }
    }
  }
  return scale;
}

double mbs_assemble(const mbsModel *m, mbsData *d, mbsImplicitWork *iw, const mbsSchemeWeights *s,
                    double dt, double t0, int with_jac) {
  const double *q0 = iw->q_prev, *q1 = d->q;
  double *r = d->res, *jac = d->jac;
  int nq = m->nq;
  double dt2 = dt * dt, tm = t0 + s->alpha * dt, tf = t0 + s->tf;
  double scale = 0.0, hterm = 0.0;
  memset(r, 0, (size_t)d->sys->n * sizeof(double));
  if (with_jac) {
    memset(jac, 0, (size_t)d->sys->nnz * sizeof(double));
  }
  /* evaluation state of forces and constraint gradients */
  /* increments from q0 (dq, qhat, qbase) keep the O(dt^2) inertia residual free of
   * the cancellation of O(1) coordinates, so it can be driven to round-off */
  const double *dhat = iw->qhat, *dbase = iw->qbase, *vbase = iw->vbase, *dq = iw->dq;
  for (int i = 0; i < nq; i++) {
    iw->qm[i] = q0[i] + s->alpha * dq[i];
    iw->vm[i] = vbase[i] + s->cv * (dq[i] - dbase[i]);
  }
  /* inertia: cM M (q1 - qhat) */
  for (int e = 0; e < m->nmass; e++) {
    int a = m->mass_a[e], b = m->mass_b[e];
    double w = s->cM * m->mass_val[e];
    for (int c = 0; c < 3; c++) {
      double db = dq[3 * b + c] - dhat[3 * b + c];
      r[3 * a + c] += w * db;
      if (a != b) {
        double da = dq[3 * a + c] - dhat[3 * a + c];
        r[3 * b + c] += w * da;
      }
      if (with_jac) {
        put_mass(d->sys, jac, e, c, w);
      }
    }
  }
  scale = mbs_norm_inf(r, nq);
  /* elements: potential and non-potential forces */
  /* element blocks and vectors from the per-step arena (given back at the end), sized by the
   * model's largest element (system.h: eblock, evec) */
  size_t mark = mbs_arena_mark(d->arena);
  size_t bsz = (size_t)d->sys->eblock * sizeof(double);
  double *H = mbs_arena_alloc(d->arena, bsz), *Fq = mbs_arena_alloc(d->arena, bsz);
  double *Fv = mbs_arena_alloc(d->arena, bsz), *Ge = mbs_arena_alloc(d->arena, bsz);
  double *g = mbs_arena_alloc(d->arena, (size_t)d->sys->evec * sizeof(double));
  assert(H && Fq && Fv && Ge && g); /* the arena is sized for these (data.c) */
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    int n = el->nq;
    if (kind->gradient) {
      /* H (and Fq, Fv below) only for the matrix: without it the kinds are given NULL */
      if (with_jac) {
        memset(H, 0, (size_t)(n * n) * sizeof(double));
      }
      double hfac = s->alpha;
      if (s->discrete && kind->discrete_gradient) {
        kind->discrete_gradient(m, el, q0, q1, g, with_jac ? H : NULL);
        hfac = 1.0;
      } else {
        kind->gradient(m, el, iw->qm, g, with_jac ? H : NULL);
      }
      /* static: gravity at the load level (linear: its Hessian is zero) */
      if (el->kind == MBS_ELEM_GRAVITY && iw->gravity_off != 0.0) {
        for (int i = 0; i < n; i++) {
          g[i] *= 1.0 - iw->gravity_off;
        }
      }
      for (int i = 0; i < n; i++) {
        r[el->qidx[i]] += dt2 * g[i];
        scale = max_abs(scale, dt2 * g[i]);
      }
      if (with_jac) {
        double hm = 0.0, qe = 0.0;
        for (int i = 0; i < n * n; i++) {
          put_elem(d->sys, jac, k, i, dt2 * hfac * H[i]);
          hm = max_abs(hm, H[i]);
        }
        for (int i = 0; i < n; i++) {
          qe = max_abs(qe, q1[el->qidx[i]]);
        }
        hterm = fmax(hterm, dt2 * hfac * hm * qe);
      }
    }
    if (kind->force) {
      if (with_jac) {
        memset(Fq, 0, (size_t)(n * n) * sizeof(double));
        memset(Fv, 0, (size_t)(n * n) * sizeof(double));
      }
      kind->force(m, el, iw->qm, iw->vm, tf, g, with_jac ? Fq : NULL, with_jac ? Fv : NULL);
      for (int i = 0; i < n; i++) {
        r[el->qidx[i]] -= dt2 * g[i];
        scale = max_abs(scale, dt2 * g[i]);
      }
      if (with_jac) {
        for (int i = 0; i < n * n; i++) {
          put_elem(d->sys, jac, k, i, -dt2 * (s->alpha * Fq[i] + s->cv * Fv[i]));
        }
      }
    }
    if (kind->constraint) {
      scale =
          fmax(scale, elem_constraint(m, d, iw, s, el, k, q0, q1, tm, t0 + dt, with_jac, g, H, Ge));
    }
  }
  /* quadratic constraint rows: G(q*)^T mu into r_q, g(q1) into r_g */
  double grad[3 * MBS_CON_MAXNODE];
  for (int row = 0; row < m->nrow; row++) {
    const mbsConRow *c = &m->con[row];
    double mu = iw->mu[row];
    mbs_con_eval(c, iw->qm, grad);
    for (int k = 0; k < c->nnode; k++) {
      for (int j = 0; j < 3; j++) {
        double f = mu * grad[3 * k + j];
        r[3 * c->node[k] + j] += f;
        scale = max_abs(scale, f);
        if (with_jac) {
          put_con_g(d->sys, jac, row, k, j, 1, grad[3 * k + j]);
        }
      }
    }
    if (with_jac) {
      (void)mbs_con_eval(c, q1, grad);
    }
    r[nq + row] = con_eval_step(c, q0, dq);
    if (mbs_row_released(m, row)) {
      /* a released joint's zero row: mu = 0 (the identity on its diagonal) */
      r[nq + row] = mu;
    }
    if (with_jac) {
      for (int k = 0; k < c->nnode; k++) {
        for (int j = 0; j < 3; j++) {
          put_con_g(d->sys, jac, row, k, j, 0, grad[3 * k + j]);
        }
      }
      /* d(G(q*)^T mu)/dq1 = alpha sum mu H (constant Hessians, multiples of I3) */
      for (int p = d->sys->con_hstart[row]; p < d->sys->con_hstart[row + 1]; p++) {
        for (int j = 0; j < 3; j++) {
          put_con_h(d->sys, jac, p, j, s->alpha * mu * d->sys->con_hcoef[p]);
        }
      }
    }
  }
  mbs_arena_release(d->arena, mark);
  if (with_jac) {
    mbs_released_rows_diag(m, d, jac);
    iw->hterm = hterm;
  }
  d->residual_roundoff = iw->hterm;
  return fmax(scale, iw->hterm);
}

double mbs_constraint_violation(const mbsModel *m, const double *q, double t, int *worst_row) {
  /* the walk without gradients: an element's g alone (MBS_ELEM_MAXCON doubles of work) */
  double worst = 0.0, work[MBS_ELEM_MAXCON];
  int wr = -1;
  mbsRowIter it;
  for (mbs_rows_begin(&it, m, q, t, 0, work); mbs_rows_next(&it);) {
    /* a row that is not finite is the worst: the first of them is named (every later row
     * would pass !(|g| <= NaN)) */
    if (!(fabs(it.g) <= worst) && !isnan(worst)) {
      worst = fabs(it.g);
      wr = it.row;
    }
  }
  if (worst_row) {
    *worst_row = wr;
  }
  return worst;
}

void mbs_constraint_describe(const mbsModel *m, int r, char *buf, int n) {
  if (r < 0 || r >= m->ncon) {
    snprintf(buf, (size_t)n, "none");
    return;
  }
  /* the row's owner, as the walk names it (the row is not evaluated) */
  int erow = 0, elem = mbs_row_element(m, r, &erow);
  if (elem >= 0) {
    const mbsElem *el = &m->elem[elem];
    if (el->joint >= 0) {
      snprintf(buf, (size_t)n, "joint '%s' (%s, row %d)", m->joint_name[el->joint],
               mbs_element_kind(el->kind)->name, erow + 1);
    } else if (el->kind == MBS_ELEM_DRIVE && el->load >= 0 && el->load < m->nload) {
      snprintf(buf, (size_t)n, "load '%s' (computed torque)", m->load_name[el->load]);
    } else {
      snprintf(buf, (size_t)n, "%s constraint, row %d", mbs_element_kind(el->kind)->name, erow + 1);
    }
    return;
  }
  if (r >= m->nrow) {
    snprintf(buf, (size_t)n, "constraint row %d", r + 1); /* no owner: cannot happen */
    return;
  }
  const mbsConRow *c = &m->con[r];
  if (c->joint >= 0) {
    snprintf(buf, (size_t)n, "joint '%s' (%s, row %d)", m->joint_name[c->joint],
             mbs_joint_type_word(m->joint_type[c->joint]), c->jrow + 1);
  } else {
    int f = -1;
    for (int i = 0; c->body < 0 && i < m->nbeam; i++) {
      int k = c->node[0] - m->beam[i].node0;
      f = k >= 0 && k < 4 * m->beam[i].nnode ? m->beam[i].attach0 + k / 4 : f;
    }
    if (c->body >= 0) {
      snprintf(buf, (size_t)n, "rigidity of body '%s'", m->body_name[c->body]);
    } else {
      snprintf(buf, (size_t)n, "rigidity of beam node '%s'", f >= 0 ? m->attach_name[f] : "?");
    }
  }
}

void mbs_assemble_theta_work(const mbsModel *m, mbsData *d, const mbsImplicitWork *iw,
                             const mbsSchemeWeights *s, double dt, double *potential,
                             double *rigidity) {
  size_t mark = mbs_arena_mark(d->arena);
  double *g = mbs_arena_alloc(d->arena, (size_t)d->sys->evec * sizeof(double));
  assert(g);
  double pw = 0.0, rw = 0.0;
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (!kind->gradient) {
      continue;
    }
    if (s->discrete && kind->discrete_gradient) {
      kind->discrete_gradient(m, el, iw->q_prev, d->q, g, NULL);
    } else {
      kind->gradient(m, el, iw->qm, g, NULL);
    }
    for (int i = 0; i < el->nq; i++) {
      pw += g[i] * iw->dq[el->qidx[i]];
    }
  }
  mbs_arena_release(d->arena, mark);
  double grad[3 * MBS_CON_MAXNODE];
  for (int row = 0; row < m->nrow; row++) {
    const mbsConRow *c = &m->con[row];
    mbs_con_eval(c, iw->qm, grad);
    double gdq = 0.0;
    for (int k = 0; k < c->nnode; k++) {
      for (int j = 0; j < 3; j++) {
        gdq += grad[3 * k + j] * iw->dq[3 * c->node[k] + j];
      }
    }
    rw += iw->mu[row] * gdq;
  }
  *potential = pw;
  *rigidity = rw / (dt * dt);
}

void mbs_assemble_work(const mbsModel *m, mbsData *d, const mbsImplicitWork *iw,
                       const mbsSchemeWeights *s, const double *qf, const double *vf, double tf,
                       double tc, const double *mu, double lam_fac, double wgt, double *work,
                       double *diss) {
  double ge[MBS_ELEM_MAXCON];
  size_t mark = mbs_arena_mark(d->arena);
  double *Ge = mbs_arena_alloc(d->arena, (size_t)d->sys->eblock * sizeof(double));
  double *f = mbs_arena_alloc(d->arena, (size_t)d->sys->evec * sizeof(double));
  assert(Ge && f);
  for (int k = 0; k < m->nelem; k++) {
    const mbsElem *el = &m->elem[k];
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    if (kind->force) {
      kind->force(m, el, qf, vf, tf, f, NULL, NULL);
      double wk = 0.0;
      for (int i = 0; i < el->nq; i++) {
        wk += f[i] * iw->dq[el->qidx[i]];
      }
      if (kind->dissipative) {
        *diss -= wgt * wk;
      } else {
        *work += wgt * wk;
      }
    }
    /* zero for scleronomic rows (G dq = g(q1) - g(q0) = 0), the work of the drive for
     * rheonomic ones */
    if (kind->constraint) {
      if (s->discrete && kind->constraint_discrete_gradient) {
        kind->constraint_discrete_gradient(m, el, iw->q_prev, d->q, tc, mu + el->con0, Ge, NULL);
      } else {
        kind->constraint(m, el, qf, tc, ge, Ge);
      }
      for (int c = 0; c < el->ncon; c++) {
        double lambda = mu[el->con0 + c] * lam_fac, gdq = 0.0;
        for (int i = 0; i < el->nq; i++) {
          gdq += Ge[c * el->nq + i] * iw->dq[el->qidx[i]];
        }
        *work -= wgt * lambda * gdq;
      }
    }
  }
  mbs_arena_release(d->arena, mark);
}
