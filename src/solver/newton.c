/* newton.c: the one Newton driver of the implicit schemes, and the counted linear-solve
 * helpers the projections (consistent.c) use.
 *
 * Newton's method either refactors at every iteration or (newton.reuse, modified Newton)
 * factors the Newton matrix once per step, at the predictor, and keeps that factorization
 * for the step's further iterations while they contract by at least 4, refactoring when the
 * contraction slows. A factorization is never carried into the next step: over a step the
 * matrix changes by O(dt) (a top spinning at 50 rad/s turns 0.05 rad per 1 ms step), the
 * chord iteration then contracts only linearly by 0.3-0.5, and the residual it stops at is
 * biased in one direction, step after step: em's energy and momenta drifted linearly (1.3e-9
 * relative over 1e4 steps) and the state depended on where records forced a refactorization.
 * Within a step the matrix moves by the predictor's error only, the chord iteration contracts
 * by ~1e-3 and is driven to round-off (4 eps of the residual's terms). When the iteration
 * does not converge with a reused factorization, the step is redone once with full Newton. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "solver/integrator.h"
#include "util/linsolve.h"

mbsStatus mbs_newton_factor(mbsData *d, int repivot, mbsError *err) {
  mbsStatus st = mbs_linsolve_factor(d->ls, d->jac, repivot, err);
  d->factorizations++;
  return st;
}

mbsStatus mbs_newton_linear_solve(mbsData *d, const double *b, double *x, mbsError *err) {
  mbsStatus st = mbs_linsolve_solve(d->ls, d->jac, b, x, err);
  d->solves++;
  return st;
}

mbsStatus mbs_newton_linear_solve_many(mbsData *d, int nrhs, const double *b, double *x,
                                       mbsError *err) {
  mbsStatus st = mbs_linsolve_solve_many(d->ls, d->jac, nrhs, b, x, err);
  d->solves += nrhs;
  return st;
}

static mbsStatus solve(const mbsModel *m, mbsData *d, const mbsNewtonProblem *p, int repivot,
                       int keep, char *why, size_t nwhy, mbsError *err) {
  int n1 = p->n1, n2 = p->n2;
  double tol = m->newton_tolerance;
  int fresh_only = !m->newton_reuse;
  /* every step starts with a fresh factorization (see the top of the file), or with the
   * step's own from an earlier solve (keep) */
  int reuse = keep && !fresh_only && d->factor_valid;
  double last_dq = INFINITY, prev_dq = INFINITY, last_rq = INFINITY;
  int it = 0, stale = 0, since_factor = 0, restarted = 0;
  int full = 0; /* equilibrium: a stalled chord iteration went over to full Newton */
  double split_q = INFINITY, split_g = INFINITY; /* the last iterate's p->split norms */
  mbsStatus st = MBS_OK;
  why[0] = '\0';
  for (;;) {
    int refactor = fresh_only || full || !reuse;
    double scale = p->assemble(p->ctx, refactor);
    double qn, inertia;
    p->scales(p->ctx, &qn, &inertia);
    double prev_rq = last_rq;
    double rq = mbs_norm_inf(d->res, n1), rg = mbs_norm_inf(d->res + n1, n2);
    last_rq = rq;
    double prev_sq = split_q, prev_sg = split_g;
    if (p->split) {
      p->split(p->ctx, d->res, &split_q, &split_g);
    }
    d->last_residual = fmax(rq, rg);
    if (!isfinite(rq) || !isfinite(rg)) {
      snprintf(why, nwhy, "the residual is not finite (the motion blew up)");
      st = MBS_ERR_SOLVER;
      break;
    }
    /* converged after a fresh factorization: residual small relative to its terms
     * (floored at round-off) and the last increment small; Newton converges
     * quadratically, so the error left is far below the increment. With a stale
     * factorization the contraction is only linear: then the residual itself must reach
     * round-off (em's energy balance holds only as well as the equations are solved). */
    double rq_floor = 64.0 * DBL_EPSILON * fmax(scale, inertia);
    double rg_floor = 64.0 * DBL_EPSILON * (1.0 + qn) * (1.0 + qn);
    int converged;
    if (stale && p->equilibrium) {
      /* no inertia, no conservation law: a chord iterate is as good as the tolerance says
       * (it contracted by at least 4, so the error left is below a third of the increment) */
      converged = rq <= fmax(tol * scale, rq_floor) && rg <= fmax(tol, rg_floor) &&
                  last_dq <= tol * (1.0 + qn);
    } else if (stale) {
      /* 4 eps, not 64: a chord iteration's residual keeps its sign from step to step, and
       * 64 eps left a linear drift of the angular momentum (1.5e-12 over 1e5 steps of a
       * heavy top, tests/integration/test_conservation.py); 4 eps leaves round-off */
      converged = rq <= rq_floor / 16.0 && rg <= rg_floor / 16.0 && last_dq <= tol * (1.0 + qn);
      if (p->split) {
        /* interleaved rows (space-time blocks): one max norm over both kinds stalls at the
         * constraint rows' round-off (64 eps (1 + |q|)^2) above the balance rows' floor,
         * while the balance rows still converge; so each kind is followed until it stops
         * falling (the chord iteration contracts by far more than 4 until round-off) */
        converged = rq <= fmax(tol * scale, rq_floor) && last_dq <= tol * (1.0 + qn) &&
                    split_q >= 0.25 * prev_sq && split_g >= 0.25 * prev_sg;
      }
      /* where a stiff element's round-off (hterm: a beam's EA) sets the floor above the
       * inertia terms, the residual cannot show an error left in a soft direction (bending):
       * with a stale matrix that error is not far below the last increment, so the
       * increment itself must reach the round-off of q. Stopping at tol left 8e-10 of
       * energy drift in the seed 002 cantilever (residual floor 1e-13 from EA), 16 eps
       * 1.6e-11 (fresh Newton: 2.5e-12) */
      if (d->residual_roundoff >= scale && d->residual_roundoff > inertia) {
        converged = converged && last_dq <= 16.0 * DBL_EPSILON * (1.0 + qn);
      }
    } else {
      converged = rq <= fmax(tol * scale, rq_floor) && rg <= fmax(tol, rg_floor) &&
                  last_dq <= tol * (1.0 + qn);
    }
    if (it > 0 && converged) {
      break;
    }
    if (it >= m->newton_max_iterations) {
      if (!fresh_only && !restarted) {
        /* a stale factorization may be what failed: redo the step with full Newton */
        restarted = 1;
        fresh_only = 1;
        full = 0;
        p->reset(p->ctx);
        d->newton_total += it;
        it = 0;
        last_dq = prev_dq = INFINITY;
        split_q = split_g = INFINITY;
        continue;
      }
      snprintf(why, nwhy,
               "Newton did not converge in %d iterations (residual %.3e, constraint "
               "residual %.3e)",
               it, rq, rg);
      st = MBS_ERR_SOLVER;
      break;
    }
    /* equilibrium: the Newton matrix of a load increment's start may be far from the
     * tangent at its end (a beam's geometric stiffness under the new load): the chord
     * iteration diverged there (the roll-up's second iterate 1e4 off). While the increment
     * is large and the residual above the tolerance, the matrix is assembled afresh */
    if (p->equilibrium && !refactor && last_dq > 1e-4 * (1.0 + qn) &&
        !(rq <= fmax(tol * scale, rq_floor) && rg <= fmax(tol, rg_floor))) {
      (void)p->assemble(p->ctx, 1);
      refactor = 1;
    }
    /* a chord iterate whose increments are at the round-off of q and whose residual no
     * longer falls by 4 has reached what the stale matrix can give: on a 1000-link chain the
     * residual then stays at 1e-19..1e-20, above the floor of 4 eps of its terms, the
     * increments cycle at ~5e-13, and the step waited for its 12th iteration, where a fresh
     * matrix reaches 5e-22 in one (7.5 -> 5.6 iterations per step). So the next iteration
     * is a Newton step. (Only at round-off: refactoring a chord iteration that still
     * converges slowly and accepting the fresh step at the tolerance let the heavy top's
     * energy drift 2.2e-14 per 1e4 steps, tests/integration/test_conservation.py.) */
    if (!refactor && stale && !p->equilibrium && p->split == NULL &&
        rq > 0.25 * prev_rq && last_dq <= 64.0 * DBL_EPSILON * (1.0 + qn)) {
      (void)p->assemble(p->ctx, 1);
      refactor = 1;
    }
    /* Newton update */
    if (refactor) {
      st = mbs_newton_factor(d, repivot, err);
      repivot = 0;
      d->factor_valid = (st == MBS_OK);
      since_factor = 0;
      if (st != MBS_OK) {
        snprintf(why, nwhy, "%s", err ? err->msg : "linear solver failure");
        break;
      }
    }
    st = mbs_newton_linear_solve(d, d->res, d->dx, err);
    if (st != MBS_OK) {
      snprintf(why, nwhy, "%s", err ? err->msg : "linear solver failure");
      break;
    }
    p->apply(p->ctx, d->dx);
    prev_dq = it > 0 ? last_dq : INFINITY;
    last_dq = mbs_norm_inf(d->dx, n1);
    stale = !refactor || since_factor > 0;
    since_factor++;
    it++;
    /* modified Newton: keep the factorization while it contracts by at least 4 */
    {
      p->scales(p->ctx, &qn, NULL);
      double floor = 64.0 * DBL_EPSILON * (1.0 + qn);
      int slow = prev_dq < INFINITY && last_dq > 0.25 * prev_dq && last_dq > floor;
      reuse = !fresh_only && d->factor_valid && !slow && since_factor < 12;
      /* equilibrium: a chord iteration that stalls near the tolerance (its round-off, or a
       * matrix too far from the tangent's) goes over to full Newton for the rest of the step,
       * before the step control halves the load increment */
      if (p->equilibrium && slow && last_dq <= 1e3 * tol * (1.0 + qn)) {
        full = 1;
      }
    }
  }
  d->iterations = it;
  d->newton_total += it;
  return st;
}

mbsStatus mbs_newton_solve(const mbsModel *m, mbsData *d, const mbsNewtonProblem *p, int repivot,
                           char *why, size_t nwhy, mbsError *err) {
  return solve(m, d, p, repivot, 0, why, nwhy, err);
}

mbsStatus mbs_newton_solve_again(const mbsModel *m, mbsData *d, const mbsNewtonProblem *p,
                                 char *why, size_t nwhy, mbsError *err) {
  return solve(m, d, p, 0, 1, why, nwhy, err);
}
