/* solver.h: the mutable run state (MuJoCo's mjData split) and the time steppers.
 *
 * mbsData owns everything that changes while a model runs: time, q, v, multipliers,
 * statistics and all workspace, allocated once by mbs_data_create() so that the step loop
 * never allocates. Kernel functions take (const mbsModel *m, mbsData *d, ...). */
#ifndef MBSIM_SOLVER_H
#define MBSIM_SOLVER_H

#include "mbsim/model.h"

typedef struct mbsLinsolve mbsLinsolve;
typedef struct mbsSystem mbsSystem;
struct mbsIntegratorTable;
struct mbsArena;

/* one named array of an integrator's state, as records carry it for a restart: name is the
 * dataset under /state/ ("scheme_velocity", "multipliers", "acceleration", ...); data NULL:
 * the integrator has no valid value now (written as NaN). columns > 0: a table whose number
 * of rows varies from record to record (length = rows x columns values, row-major), written
 * as the ragged table /state/<name>/{count,offsets,table} with column_names (columns
 * strings) and units; 0 (the default): a series /state/<name> [N, length] */
typedef struct {
  const char *name;
  int length;
  double *data;
  int columns;
  const char *const *column_names;
  const char *units;
} mbsStateArray;

#define MBS_STATE_MAX 12 /* at most this many arrays per integrator */

/* the most nodes of the error control's history (advance.c) */
#define MBS_CONTROL_MAXNODES 5

/* error control (solver.tolerance; advance.c, docs/integrators.md "Error control"): what it
 * carries from step to step, its statistics, and room to take a rejected step back */
typedef struct mbsStepControl {
  /* carried (a record's /state/step_control and /state/step_history, so that a restart
   * chooses the same steps): carry = {the next step [s] (0: not started), the times of the
   * history's other nodes, oldest first, relative to d->t [s] (its last node is d->t)}; hist
   * (nodes x nq): the polynomial of degree nodes - 1 through the last `nodes` step ends (nodes
   * repeat at the start, where it is the Taylor polynomial of the consistent state),
   * q(d->t + s) ~ a + b s + c s^2 + ..., its coefficients a, b, c, ... each (nq). nodes = 3
   * (second order: em, midpoint, genalpha, spacetime of degree 1) or 5 (fourth order at the
   * step ends: spacetime of degree 2) */
  int nodes;
  double carry[MBS_CONTROL_MAXNODES];
  double *hist;
  double *scale; /* (nq) the absolute floor over the tolerance: the model's length [m] for
                    positions, 1 for directors and angles */
  double est_factor; /* the local error over h^nodes times the nodes-th divided difference */
  /* statistics since the data was created: steps accepted, rejected by the estimate, and
   * the smallest, largest and summed accepted steps [s] */
  long accepted, rejected;
  double h_min, h_max, h_sum;
  /* the state at the start of the step being tried */
  double t, last_dt, acc[10];
  long step;
  double *q;
  int nsaved;
  mbsStateArray saved[MBS_STATE_MAX];
  double *saved_data;
  size_t saved_cap;
} mbsStepControl;

typedef struct mbsData {
  double t;       /* [s] */
  long step;      /* steps taken */
  double *q, *v;  /* (nq) state at t (v: the integrator's own velocities) */
  double *lambda; /* (ncon) [N, N m] multipliers of the last step (0 before it) */

  /* the integrator: its table entry and the workspace it owns (iterate, multipliers
   * dt^2 lambda, per-step vectors, genalpha's accelerations) */
  const struct mbsIntegratorTable *integrator;
  void *integrator_work;
  int factor_valid; /* the linear solver holds a usable factorization of the Newton matrix */
  int *con_diag;    /* (ncon) slot of each constraint row's diagonal in the Newton matrix (its
                       identity while its joint is released), -1 when absent: only models
                       with joints that engage and release have these slots */
  int *joint_active;        /* (njoint) /joints/active: 1 while the joint holds, 0 while a joint
                               with `active` is released (filled by the recorder) */
  double capture_dissipated; /* [J] the part of dissipated lost in the plastic captures of
                               engaging joints */
  char phase_note[512];      /* the rows the phases of switching joints dropped as redundant
                                ("t = 1: joint 'grip' rows 1, 2; ..."), for the summary */

  /* statistics */
  int iterations;       /* Newton iterations of the last step */
  long newton_total;    /* all Newton iterations */
  long solves;          /* linear solves */
  long rejected;        /* steps rejected and retried with dt/2 */
  long retried;         /* moreau: steps tried again with contact points they missed */
  long contact_admitted; /* moreau: points a step's first solution left out, taken in when
                            its impulses closed them */
  long factorizations;  /* numeric factorizations */
  double max_violation; /* max over steps of |g(q)| */
  double external_work; /* [J] work of non-potential loads since t = 0 */
  double dissipated;    /* [J] energy removed since t = 0: dampers, contacts and the moreau
                           theta method's numerical damping */
  double contact_dissipated; /* [J] the part of it removed by contacts (moreau): impact +
                                friction */
  double impact_dissipated;  /* [J] by the normal laws: the work of the normal impulses (over
                                the mean of each step's start and end velocities) and of the
                                position projection; a penalty contact's damping */
  double friction_dissipated;  /* [J] by Coulomb's law: the work of the tangential impulses */
  double contact_potential;    /* [J] the penalty contacts' springs, 1/2 k g^2 over the
                                  penetrating points at q: part of the potential energy */
  double gravity_unapplied;    /* [J] static with ramped gravity: -(1 - lambda) V_g(q), minus
                                  the potential of the share of gravity not applied at the load
                                  level lambda, so that the potential energy holds lambda V_g;
                                  0 otherwise (part of the potential energy) */
  double numerical_dissipated; /* [J] by the theta method itself (theta > 1/2, and the
                                  projection of the velocities onto the constraints) */
  int contact_iterations;    /* contact solver sweeps of the last step (moreau) */
  double contact_residual;   /* prox residual left by the last step's contact solver,
                                relative to its velocity scale */
  long contact_sweeps;       /* all contact solver sweeps */
  long contact_stalled;      /* steps whose contact residual was accepted above
                                contact_tolerance (the solver stalled, at most 1e-6 of the
                                velocity scale) */
  double contact_stall_max;  /* the largest such residual, relative */
  long contact_regularized;  /* steps with an island solved with the last resort's compliance
                                (1e-6 of its Delassus matrix; residual at most 1e-4) */
  int contact_active_max;    /* most contacts in one step's contact problem */
  double contact_gap_min;    /* [m] smallest gap after a step's position projection (0 until
                                a contact was seen) */
  double last_residual; /* max norm of the last Newton residual */
  /* the round-off of stiff elements' gradients in the last assembled residual (its hterm):
   * where it exceeds the inertia terms, the residual cannot show an error of a soft direction */
  double residual_roundoff;
  double last_dt;       /* [s] size of the last step */
  mbsStepControl *control; /* error control (m->tolerance > 0), else NULL */

  /* the record's consistent state (consistent.c): velocities projected onto
   * G v + g_t = 0, the multipliers and accelerations of the index-1 equations there */
  double *v_rec;             /* (nq) */
  double *lambda_rec;        /* (ncon) [N, N m] */
  double *acc_rec;           /* (nq) */
  double velocity_violation; /* max |G v_rec + g_t| */
  double *joint_coord;       /* (njoint x 3) joint coordinates, angles continuous in time
                                (mbs_joint_track); NaN beyond each joint's count */
  double *joint_rate;        /* (njoint x 3) their rates at the record (from v_rec) */
  double *load_force;        /* (nload x 6) force and torque of each load on its second body */
  double *joint_drive;       /* (njoint x 6) force and torque of its motion and joint loads on
                                its second body, along and about its axes (mbs_joint_drives) */

  /* workspace */
  double *vtmp;           /* (nq) */
  double *res;            /* (sys->n_max) residual */
  double *dx;             /* (sys->n_max) Newton increment */
  double *jac;            /* (sys->nnz_max) Newton matrix values */
  double *kkt_jac;        /* (sys->nnz_max) the records' KKT matrix values (consistent.c) */
  double *ework;          /* (sys->ework_len) element Jacobian blocks (layout in system.h;
                             outside the step) */
  struct mbsArena *arena; /* per-step storage (util/arena.h), sized from the model's bounds,
                             reset at the start of every step */
  double *body_pos, *body_rot, *body_vel, *body_omega; /* (nbody x 3 / 9) observables */
  double *joint_reaction; /* (njoint x 6) force and torque on the second body */
  double *redund_work;    /* (m->red_nwork) minimum-norm reactions of loops with dropped rows */
  int *redund_list;       /* (m->red_nrow + m->ndrop) their rows (scratch) */
  mbsConRow *redund_rows; /* (m->red_nrow) the rows a phase dropped, rebuilt (scratch) */
  mbsSystem *sys;  /* the Newton matrix's pattern, scatter maps and LU (solver/system.h) */
  mbsLinsolve *ls; /* sys->ls */
  mbsLinsolve *kkt_ls; /* sys->kkt_ls */
  struct mbsSchur *schur; /* the records' KKT systems through S = G M^-1 G^T (solver/schur.h),
                             made at the first record; NULL before or when the model does not
                             suit it */
  int schur_state;        /* 0: not tried yet, 1: made, -1: the KKT matrix (KLU or UMFPACK)
                             for every record (the model does not suit it, or a caller asked) */
  int schur_factored;     /* 1: the last KKT factorization is the Schur complement's */

  /* spacetime's action integral per temporal element (seed 003 sec. 4.2): when set, called
   * once for each element whose end a step passes, in time order, with row = its start and
   * end [s], the number of its block (0, 1, ... in the order this run solved them), the
   * integrals over it of T + V and of T - V [J s] (MBS_ACTION_COLS values; the caller copies
   * them); ctx is action_ctx. NULL (the default): nothing is called. */
  void (*action_sink)(void *ctx, const double *row);
  void *action_ctx;
} mbsData;

#define MBS_ACTION_COLS 5 /* t_start, t_end, block, int (T + V) dt, int (T - V) dt */

/* one contact (moreau), as a record's /contacts/table row carries it: a contact of the last
 * step, or one that took part in a step since the sums were last cleared and is gone now
 * (status 0, impulse 0, its last geometry) */
typedef struct {
  int body[2];       /* body a, body b (-1: the ground) */
  double point[3];   /* [m] world, midway between the surfaces at the step's start */
  double normal[3];  /* unit, from a towards b */
  double gap;        /* [m] at the end of the step (after the position projection) */
  double tangent[2][3]; /* unit tangents: (normal, tangent[0], tangent[1]) right-handed */
  double impulse[3]; /* [N s] of the last step: normal, then along the two tangents */
  double impulse_sum[3]; /* [N s] world components of the impulse on b (-impulse_sum on a)
                            summed over the steps since mbs_solver_contacts_clear (the last
                            record), the last step's included */
  int status;        /* 0 open, 1 stick, 2 slip */
  mbsShapePair pair; /* its shapes and contacts entry, and with feature (the touching
                        features) its identity, the same while the contact persists */
  int feature;
} mbsContactRecord;

/* the contacts of the last step and those since the last clear (valid until the next
 * step), sorted by (pair.a, pair.b, feature): their count, and the array into *rec; 0 for
 * integrators without contacts */
int mbs_solver_contacts(const mbsData *d, const mbsContactRecord **rec);

/* restart the sums of mbs_solver_contacts (after a record): contacts gone since drop out */
void mbs_solver_contacts_clear(mbsData *d);

/* observables at the current state (docs/output.md); bodies go into d->body_* */
typedef struct {
  double kinetic, potential, external_work, dissipated, contact_dissipated;
  double impact_dissipated, friction_dissipated, numerical_dissipated;
  double linear_momentum[3], angular_momentum[3];
  double violation;          /* max |g(q, t)| */
  double velocity_violation; /* max |G v + g_t| of the recorded velocities */
} mbsObservables;

/* create the run state at the model's initial condition; NULL on failure (err filled) */
mbsData *mbs_data_create(const mbsModel *m, mbsError *err);

/* release (accepts NULL) */
void mbs_data_destroy(mbsData *d);

/* what the integrator needs at the current state before its first step, which the first
 * step would otherwise compute (genalpha: the consistent accelerations of the index-1
 * system, zero when it is singular; nothing for the one-step schemes or when d holds them
 * already, e.g. after a restart) */
void mbs_solver_start(const mbsModel *m, mbsData *d);

/* the integrator's state a record carries so that a restart repeats the run: up to max
 * (MBS_STATE_MAX is enough) named arrays into out, pointing into d; returns their count */
int mbs_solver_state_export(const mbsModel *m, mbsData *d, mbsStateArray *out, int max);

/* continue from exported arrays (a restart's file, or the arrays of a record just written,
 * so that the run and a restart from that record take identical steps): arrays absent or
 * with data NULL keep their current values; the names of the integrator's arrays that were
 * absent go into missing (comma-separated, may be NULL). d->last_dt must be set first
 * (multipliers are scaled by it). */
mbsStatus mbs_solver_state_import(const mbsModel *m, mbsData *d, const mbsStateArray *in, int n,
                                  char *missing, size_t nmissing, mbsError *err);

/* the state (q, v: nq each, may be NULL) at time t inside the last step [t - last_dt, t]
 * (dense output); at t itself exactly d->q and d->v */
void mbs_solver_interpolate(const mbsModel *m, const mbsData *d, double t, double *q, double *v);

/* [bytes] the capacity and high-water mark of the per-step storage */
void mbs_solver_arena_usage(const mbsData *d, size_t *size, size_t *high);

/* Advance from d->t by dt with the model's integrator (its entry in the integrator table;
 * em, midpoint, euler: seed 000 eq. 57, genalpha: Arnold & Bruls 2007, with the one Newton
 * driver). On success d->t, q, v, lambda are at the end of the step. On failure the state is left
 * at the start of the step and err says when, which iteration, the residual and the worst
 * constraint. */
mbsStatus mbs_solver_step(const mbsModel *m, mbsData *d, double dt, mbsError *err);

/* Advance from d->t to t_target with step control: a step whose Newton iteration fails is
 * retried with half the step, up to m->max_halvings times, and the step grows back by
 * doubling after two successes. With m->tolerance > 0 each step is chosen from the local
 * error estimate of the last (at most m->dt, the steps to t_target split evenly), a step
 * whose estimate exceeds the tolerance is taken back and retried with a smaller one. d->iterations holds the Newton iterations of the whole
 * advance. On failure at the smallest step the state is that of the last success and err
 * says when and why. */
mbsStatus mbs_solver_advance(const mbsModel *m, mbsData *d, double t_target, mbsError *err);

/* called after each successful step of an advance, d at the step's end (the step covered
 * [d->t - d->last_dt, d->t]: mbs_solver_interpolate is defined on it) */
typedef void (*mbsStepVisit)(void *ctx, const mbsModel *m, const mbsData *d);

/* error control's state for model m (m->tolerance > 0) into d->control; MBS_ERR_NOMEM (called
 * by mbs_data_create) */
mbsStatus mbs_step_control_create(const mbsModel *m, mbsData *d, mbsError *err);
void mbs_step_control_destroy(mbsStepControl *c);

/* mbs_solver_advance, calling each (when not NULL) after every step it takes, halved ones
 * included, so that a caller can sample the scheme's interpolation inside every step */
mbsStatus mbs_solver_advance_each(const mbsModel *m, mbsData *d, double t_target,
                                  mbsStepVisit each, void *ctx, mbsError *err);

/* the consistent state of a record at (d->t, d->q, d->v) into d->v_rec (velocities
 * projected onto G v + g_t = 0 in the mass metric; the residual left in
 * d->velocity_violation), d->lambda_rec and d->acc_rec (the index-1 equations at the
 * projected state). d->q, d->v and the integrator's state (its Newton factorization too: the
 * KKT matrix has its own, d->kkt_ls) are not changed. Fails only if the KKT matrix is
 * singular. */
mbsStatus mbs_solver_consistent(const mbsModel *m, mbsData *d, mbsError *err);

/* pin the pivot order of the KKT matrix [M G^T; G 0] at (d->q, d->t) for the records' KKT
 * factorizations and the first factorization of every step of em, midpoint, euler and
 * genalpha (util/linsolve.h, mbs_linsolve_pin): call once at the start of a run, at the
 * configuration a restart of the run starts from as well (the assembled initial one), so
 * that both factor every matrix alike. Nothing for the other integrators, without
 * constraints or when that KKT matrix is singular; fails only when out of memory. */
mbsStatus mbs_solver_pin(const mbsModel *m, mbsData *d, mbsError *err);

/* project d->v itself onto G v + g_t = 0 at (d->t, d->q), adding the kinetic energy it
 * changes to d->external_work (the impulse of a prescribed motion whose rate jumps) */
mbsStatus mbs_solver_project_velocity(const mbsModel *m, mbsData *d, mbsError *err);

/* initial.project_velocities: d->v at t = 0 onto G v + g_t = 0, in the mass metric, with the
 * given joint rates (joint_initial_rate) as further conditions; the largest change of the
 * velocity coordinates of a body or beam node [m/s or 1/s] and its attachment frame (its name
 * m->attach_name) into *max_change, *body (-1: none).
 * Fails with a message when the rates conflict with the joints. */
mbsStatus mbs_solver_initial_velocities(const mbsModel *m, mbsData *d, double *max_change,
                                        int *body, mbsError *err);

/* what initial.assemble did (mbs_solver_assemble) */
typedef struct {
  int iterations;  /* Gauss-Newton steps */
  double residual; /* largest constraint violation left (all rows, the redundant ones too) */
  double max_move; /* [m] the largest move of a body's reference point (or a beam node's) */
  int frame;       /* its attachment frame (m->attach_name), -1 when nothing moved */
  double max_turn; /* the largest change of a director, |d_i - d_i0| = 2 sin(angle / 2) */
} mbsAssembly;

/* initial.assemble: d->q at t = 0 onto the constraints g(q, 0) = 0, the nearest
 * configuration in the metric of the mass matrix (Gauss-Newton on the KKT system); then
 * mbs_model_set_initial(m, d->q) makes it the model's (and the velocities follow). Fails,
 * with d->q unchanged, when the joints cannot all hold (a message naming the worst row). */
mbsStatus mbs_solver_assemble(const mbsModel *m, mbsData *d, mbsAssembly *out, mbsError *err);

/* r (ncon, may be NULL) = G(q) v + g_t(q, t); returns max |r| */
double mbs_velocity_residual(const mbsModel *m, mbsData *d, const double *q, const double *v,
                             double t, double *r);

/* follow the joint coordinates to the current q: angles continue from their last values
 * (add whole turns), so call it after every step; the first call (d->step == 0 or after a
 * restart that set them) starts from the current values */
void mbs_joint_track(const mbsModel *m, mbsData *d);

/* kinetic and potential energy of (q, v) */
void mbs_energy(const mbsModel *m, const double *q, const double *v, double *kinetic,
                double *potential);

/* energies, momenta, constraint violation, body kinematics and joint reactions of a record:
 * from d->q and the consistent d->v_rec, d->lambda_rec (call mbs_solver_consistent first) */
void mbs_observe(const mbsModel *m, mbsData *d, mbsObservables *o);

/* force (3) and torque (3) each joint exerts on its second body, world components, about
 * the joint point, from d->lambda_rec at (d->q, d->t) into d->joint_reaction; called by
 * mbs_observe */
void mbs_joint_reactions(const mbsModel *m, mbsData *d);

/* the part of each joint's action on its second body that its prescribed motion (the drive
 * row's multiplier in d->lambda_rec) and its joint loads (joint_torque, joint_force, given or
 * by a control law) apply, about the joint point as /joints/reaction, in components along the
 * joint's axes d'_1, d'_2, d'_3 of its first body (world axes if that is static): force (3),
 * torque (3) into d->joint_drive; called by mbs_observe */
void mbs_joint_drives(const mbsModel *m, mbsData *d);

/* max norm of g(q, t) over all bilateral constraints, and the row where it is attained */
double mbs_constraint_violation(const mbsModel *m, const double *q, double t, int *worst_row);

/* a short description of constraint row r ("joint 'hinge' row 2", "rigidity of 'link1'") */
void mbs_constraint_describe(const mbsModel *m, int r, char *buf, int n);

#endif
