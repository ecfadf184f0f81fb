/* integrator.h: the integrator table and what the implicit schemes share (solver-internal).
 *
 * Every value of mbsIntegrator has one entry in mbs_integrators[] (integrator.c, checked
 * against MBS_INTEGRATOR_COUNT at compile time). An entry owns its workspace (init/free),
 * advances the run data by one step, gives the state inside the last step (dense output),
 * and exports/imports the arrays a record must carry for a restart to repeat the run
 * (state_export/state_import: the CLI and the writer see only named arrays). "auto" is
 * resolved when the model is compiled: its entry has no functions, and a step with it is
 * refused. A new integrator is one file with its entry and one line in the table.
 *
 * The implicit schemes share one assembler (assemble.c: the residual and Newton matrix of
 * the momentum balance and constraints, parameterised by the scheme's weights) and one
 * Newton driver (newton.c: modified-Newton reuse and full-Newton fallback), which the
 * projections of consistent.c use for their linear solves too. */
#ifndef MBS_SOLVER_INTEGRATOR_H
#define MBS_SOLVER_INTEGRATOR_H

#include <stddef.h>

#include "mbsim/solver.h"

struct mbsSchemeWeights;

typedef struct mbsIntegratorTable {
  const char *name; /* the deck word */
  /* the workspace for model m into *work; MBS_OK or MBS_ERR_NOMEM */
  mbsStatus (*init)(const mbsModel *m, void **work, mbsError *err);
  /* whatever the scheme needs at the current state before its first step (genalpha: the
   * consistent accelerations); NULL when nothing. Called by mbs_solver_start, and by step. */
  void (*start)(const mbsModel *m, mbsData *d);
  /* implicit schemes: begin a step of size dt from the current state (state saved, the
   * per-step vectors set, the per-step arena reset) and give the assembler's weights; the
   * step itself does this first. NULL for a scheme without a Newton iteration. (Exposed so
   * that tests can check the assembled Newton matrix of every scheme.) */
  void (*prepare)(const mbsModel *m, mbsData *d, double dt, struct mbsSchemeWeights *s);
  /* advance d from d->t by dt (mbs_solver_step's contract) */
  mbsStatus (*step)(const mbsModel *m, mbsData *d, double dt, mbsError *err);
  /* q and v (nq each, may be NULL) at t in [t - last_dt, t] of the last step */
  void (*interpolate)(const mbsModel *m, const mbsData *d, double t, double *q, double *v);
  /* the arrays a record carries (mbsStateArray); returns their count (<= max) */
  int (*state_export)(const mbsModel *m, mbsData *d, mbsStateArray *out, int max);
  /* continue from these arrays (absent or NULL data: keep the current value); the names
   * of the integrator's own arrays that were absent, and what it does instead, into
   * missing */
  mbsStatus (*state_import)(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                            char *missing, size_t nmissing, mbsError *err);
  void (*free)(void *work);
  /* the contacts of the last step (mbs_solver_contacts); NULL for schemes without contacts */
  int (*contacts)(const mbsData *d, const mbsContactRecord **rec);
  /* restart the sums of the contacts (mbs_solver_contacts_clear); NULL with contacts NULL */
  void (*contacts_clear)(mbsData *d);
  /* joints engaged or released at the start of a step changed the constraint rows (and the
   * velocities jumped): restart what the scheme carries from step to step (genalpha: the
   * consistent accelerations); NULL when nothing */
  void (*rows_changed)(const mbsModel *m, mbsData *d);
} mbsIntegratorTable;

/* the entry of integrator k, NULL for auto or a value out of range */
const mbsIntegratorTable *mbs_integrator_table(mbsIntegrator k);

extern const mbsIntegratorTable mbs_integrator_em, mbs_integrator_midpoint, mbs_integrator_euler,
    mbs_integrator_genalpha, mbs_integrator_static, mbs_integrator_moreau,
    mbs_integrator_spacetime;

/* ---- what the implicit schemes share ---- */

/* Unknowns (nq + ncon) from which em predicts each step by second-order Adams-Bashforth, as
 * midpoint does (onestep.c). Below it the prediction saves no iteration (the chain of 10
 * links takes 3 per step either way), and on the heavy top of
 * tests/integration/test_conservation.py (11 unknowns) it moved em's round-off into a drift. */
#define MBS_NEWTON_LARGE 256

/* the steps whose increments the predictor of MBS_NEWTON_LARGE models keeps (onestep.c): it
 * extrapolates the polynomial through the last MBS_PRED_MIN_STEPS step ends and q0 once that
 * many are known, through the last MBS_PRED_STEPS where their history shows that this
 * predicts better */
#define MBS_PRED_STEPS 6
#define MBS_PRED_MIN_STEPS 4

/* the iterate and per-step vectors of an implicit scheme (its workspace starts with this) */
typedef struct {
  double *mu, *mu_prev;         /* (ncon) scaled multipliers dt^2 lambda: iterate, step start */
  double *q_prev, *v_prev;      /* (nq) state at the start of the step */
  double *dq;                   /* (nq) the Newton unknown q1 - q0 */
  double *qhat, *qbase, *vbase; /* (nq) per-step vectors of the scheme, increments from q0 */
  double *qm, *vm;              /* (nq) evaluation state of forces */
  double *v_hist;               /* (nq) midpoint, euler and em from MBS_NEWTON_LARGE
                                   unknowns: the velocity at the start of the step that ended
                                   at t_n (v_{n-1}), for their predictor; written as
                                   /state/previous_velocity */
  double *pred;                 /* (nq) their predictor of q1 - q0 */
  /* from MBS_NEWTON_LARGE unknowns, em, midpoint and euler (onestep.c predict): the
   * increments q_{n+1-k} - q_{n-k} of the last MBS_PRED_STEPS steps, newest first (k-major,
   * MBS_PRED_STEPS x nq), those steps' sizes (0: no such step yet) and the physical
   * multipliers of the step before the last (lambda_{n-1}, ncon); written as
   * /state/previous_increments, previous_steps and previous_multipliers. NULL below */
  double *inc_hist, *lam_hist;
  double inc_h[MBS_PRED_STEPS];
  double *mu_pred;              /* (ncon) the multipliers' predictor, when use_mu_pred */
  int use_mu_pred;
  int hist_valid;               /* 0: no step taken or imported yet (v_hist unset) */
  int refactor_next;            /* the next step's first factorization pivots afresh (after a
                                   state import: a record or a restart) */
  double mmax;                  /* largest |mass entry| (round-off floor of the test) */
  double hterm;                 /* largest |dt^2 H| |q| over the elements' potentials at the
                                   last assembly with the Newton matrix: the round-off of a
                                   stiff element's gradient (a beam's EA times the rounding of
                                   its strains), a floor of the residual's scale */
  double gravity_off;           /* static: 1 - lambda, the share of gravity not applied at the
                                   step's load level lambda (static.c); 0 for the other schemes
                                   (zeroed by mbs_implicit_work_init) */
} mbsImplicitWork;

/* the scheme's weights for a step of size dt (seed 000 eq. 57 and its variants) */
typedef struct mbsSchemeWeights {
  double cM;    /* mass factor of the scaled momentum balance */
  double alpha; /* q* = q0 + alpha (q1 - q0): where forces and constraint gradients act */
  double cv;    /* v* = vbase + cv (q1 - qbase) */
  double tf;    /* forces are evaluated at t0 + tf */
  int discrete; /* discrete gradients (energy-momentum) */
} mbsSchemeWeights;

mbsStatus mbs_implicit_work_init(const mbsModel *m, mbsImplicitWork *w);
void mbs_implicit_work_free(mbsImplicitWork *w);

/* 1 on the diagonal of every released joint's row in jac (Newton and KKT matrices: its zero
 * row then gives lambda = 0) */
void mbs_released_rows_diag(const mbsModel *m, const mbsData *d, double *jac);

/* the residual [r_q; r_g] into d->res (and the Newton matrix into d->jac if with_jac) at the
 * iterate q1 = q0 + w->dq, w->mu; returns the largest term of r_q (relative convergence) */
double mbs_assemble(const mbsModel *m, mbsData *d, mbsImplicitWork *w, const mbsSchemeWeights *s,
                    double dt, double t0, int with_jac);

/* The powers of the step (increment w->dq) that the theta method's energy balance needs
 * (moreau.c): *potential = grad V* . dq, the potential forces as the residual takes them
 * (at the evaluation state w->qm, or the discrete gradient); *rigidity = lambda . G(qm) dq
 * of the quadratic constraint rows (lambda = mu / dt^2), zero at the midpoint */
void mbs_assemble_theta_work(const mbsModel *m, mbsData *d, const mbsImplicitWork *w,
                             const mbsSchemeWeights *s, double dt, double *potential,
                             double *rigidity);

/* wgt times the work over the step (increment w->dq) of the non-potential forces at (qf, vf,
 * tf) and of the constraint elements' forces -G^T lambda (G at (qf, tc), lambda = lam_fac mu)
 * into *work (external) and *diss (dampers) */
void mbs_assemble_work(const mbsModel *m, mbsData *d, const mbsImplicitWork *w,
                       const mbsSchemeWeights *s, const double *qf, const double *vf, double tf,
                       double tc, const double *mu, double lam_fac, double wgt, double *work,
                       double *diss);

/* the Newton iteration of one step: the problem's callbacks on ctx */
typedef struct {
  int n1, n2; /* layout: n1 balance rows (relative test), then n2 constraint rows */
  void *ctx;
  /* residual into d->res, the matrix into d->jac when with_jac; the largest term of the
   * balance rows */
  double (*assemble)(void *ctx, int with_jac);
  /* the iterate's max norm *qn and (when inertia is not NULL) the scale of the inertia
   * terms *inertia (round-off floors of the test) */
  void (*scales)(void *ctx, double *qn, double *inertia);
  /* iterate <- iterate - dx (n1 + n2) */
  void (*apply)(void *ctx, const double *dx);
  /* back to the predictor (the full-Newton retry) */
  void (*reset)(void *ctx);
  /* optional, where balance and constraint rows are interleaved (n2 = 0; NULL: the
   * ranges n1, n2 hold them): the max norms of the residual's balance rows *rq and
   * constraint rows *rg. A reused factorization's iteration then stops, within the
   * tolerance, once neither falls by 4 any more: each kind is at its own round-off */
  void (*split)(void *ctx, const double *res, double *rq, double *rg);
  /* 1: an equilibrium without inertia (static): an iterate of a reused factorization is
   * accepted by the tolerance test (there is no conservation law that round-off must
   * keep), and a chord iteration that stalls near the tolerance switches to full Newton
   * (a fresh factorization every iteration) for the rest of the step. 0: the dynamic
   * schemes' tests (newton.c) */
  int equilibrium;
} mbsNewtonProblem;

/* Newton's method on p with d's linear solver (see newton.c); repivot asks the first
 * factorization for fresh pivots. On failure why says what happened. d->iterations,
 * newton_total, factorizations, solves, last_residual, factor_valid are updated. */
mbsStatus mbs_newton_solve(const mbsModel *m, mbsData *d, const mbsNewtonProblem *p, int repivot,
                           char *why, size_t nwhy, mbsError *err);

/* mbs_newton_solve within a step that has factored its Newton matrix already (moreau: the
 * linear model of its contact problem at a nearby iterate): the iteration starts on that
 * factorization, refactoring when it contracts too slowly, as modified Newton does */
mbsStatus mbs_newton_solve_again(const mbsModel *m, mbsData *d, const mbsNewtonProblem *p,
                                 char *why, size_t nwhy, mbsError *err);

/* numeric factorization of d->jac, counted in d->factorizations */
mbsStatus mbs_newton_factor(mbsData *d, int repivot, mbsError *err);
/* x = A^-1 b with the last factorization, counted in d->solves */
mbsStatus mbs_newton_linear_solve(mbsData *d, const double *b, double *x, mbsError *err);
/* the same for nrhs right-hand sides at once (b, x: n x nrhs, column-major) */
mbsStatus mbs_newton_linear_solve_many(mbsData *d, int nrhs, const double *b, double *x,
                                       mbsError *err);

/* max |x_i|, NaN if any x_i is NaN */
double mbs_norm_inf(const double *x, int n);

/* the common frame of an implicit step: state saved at its start, the failure report and
 * restore, and the bookkeeping at its end (time, lambda, violation, drive kinks) */
/* predictor (w->dq = pred, or dt v0 when pred is NULL; mu of the last step) and Newton's
 * iteration on the assembler with weights s; why says what failed */
mbsStatus mbs_implicit_newton(const mbsModel *m, mbsData *d, mbsImplicitWork *w,
                              const mbsSchemeWeights *s, double dt, double t0, const double *pred,
                              char *why, size_t nwhy, mbsError *err);
void mbs_implicit_begin(const mbsModel *m, mbsData *d, mbsImplicitWork *w);
mbsStatus mbs_implicit_fail(const mbsModel *m, mbsData *d, mbsImplicitWork *w, mbsStatus st,
                            const char *why, double t0, double dt, mbsError *err);
void mbs_implicit_end(const mbsModel *m, mbsData *d, const mbsImplicitWork *w, double t0,
                      double dt);
/* shared state_export/state_import of the implicit schemes: scheme_velocity, multipliers */
int mbs_implicit_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max);
void mbs_implicit_import(const mbsModel *m, mbsData *d, mbsImplicitWork *w, const mbsStateArray *in,
                         int n);
/* the array called name in the list, NULL if absent or without data */
const mbsStateArray *mbs_state_find(const mbsStateArray *in, int n, const char *name);
/* the plastic capture of joints that engaged at d->t (their rows in the model now): the
 * velocities jump onto all constraints with the impulse of least kinetic energy, M (v+ - v-)
 * = G^T Lambda, G v+ = 0 (the joints' impulses are internal: linear and angular momentum are
 * kept), and the kinetic energy lost goes to d->dissipated (and d->engage_dissipated): the
 * loss of the scheme's own velocities, whose energy the records' balance holds (observe.c).
 * MBS_ERR_SOLVER naming the time when the KKT matrix is singular (a joint that repeats
 * others) or the jump leaves the velocity constraints violated. */
mbsStatus mbs_solver_capture(const mbsModel *m, mbsData *d, mbsError *err);

/* the consistent state of a record by the index-1 equations (consistent.c: what
 * mbs_solver_consistent does for the dynamic schemes), also for an equilibrium scheme: at
 * v = 0 its multipliers are the reactions of the configuration released from rest */
mbsStatus mbs_consistent_index1(const mbsModel *m, mbsData *d, mbsError *err);
/* the one-step schemes' dense output (cubic Hermite from the step's ends) */
void mbs_implicit_interpolate(const mbsModel *m, const mbsData *d, const mbsImplicitWork *w,
                              double t, double *q, double *v);

/* spacetime (spacetime.c), for the tests of its Newton matrix: begin a block of elements of
 * length h at d's state (the predictor as the iterate; returns the block's system), the
 * block's unknowns (sys->n, in the system's order) out of and into its iterate, and the
 * residual (returned) and matrix (*jac, when with_jac) at the iterate */
struct mbsSystem;
struct mbsSystem *mbs_spacetime_begin(const mbsModel *m, mbsData *d, double h);
void mbs_spacetime_unknowns(mbsData *d, double *x);
void mbs_spacetime_set_unknowns(mbsData *d, const double *x);
const double *mbs_spacetime_assemble(mbsData *d, int with_jac, const double **jac);

#endif
