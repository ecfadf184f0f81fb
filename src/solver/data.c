/* data.c: the run state and its workspace, allocated once per run */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "mbsim/solver.h"
#include "solver/integrator.h"
#include "util/linsolve.h"
#include "solver/schur.h"
#include "solver/system.h"
#include "util/arena.h"

/* [bytes] the per-step storage a step can need: the assembler's element blocks (Hessian,
 * force derivatives, constraint gradients) of the system's largest element and one element
 * vector, each aligned */
static size_t arena_bound(const mbsSystem *sys) {
  size_t block = (size_t)sys->eblock * sizeof(double), vec = (size_t)sys->evec * sizeof(double);
  return 4 * (block + alignof(max_align_t)) + vec + alignof(max_align_t);
}

mbsData *mbs_data_create(const mbsModel *m, mbsError *err) {
  mbsData *d = calloc(1, sizeof(mbsData));
  if (!d) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NULL;
  }
  /* joints that engage later start released (their rows zero rows; model.h joint_engage), and
   * the Newton matrix keeps a diagonal slot on every constraint row for the identity of a
   * released joint's rows */
  mbs_model_joint_reset(m);
  d->sys = mbs_system_create_full(m, 1, NULL, 0, 0, m->nengage > 0, err);
  if (!d->sys) {
    free(d);
    return NULL;
  }
  d->ls = d->sys->ls;
  d->kkt_ls = d->sys->kkt_ls;
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1), nc = (size_t)(m->ncon > 0 ? m->ncon : 1);
  size_t ns = (size_t)(d->sys->n_max > 0 ? d->sys->n_max : 1);
  size_t nb = (size_t)(m->nbody > 0 ? m->nbody : 1);
  d->q = calloc(nq, sizeof(double));
  d->v = calloc(nq, sizeof(double));
  d->lambda = calloc(nc, sizeof(double));
  d->res = calloc(ns, sizeof(double));
  d->dx = calloc(ns, sizeof(double));
  d->jac = calloc((size_t)(d->sys->nnz_max > 0 ? d->sys->nnz_max : 1), sizeof(double));
  d->kkt_jac = calloc((size_t)(d->sys->nnz_max > 0 ? d->sys->nnz_max : 1), sizeof(double));
  /* element blocks (system.h) outside the step, and the row walk's work (observe.c) */
  size_t nework = (size_t)d->sys->ework_len;
  if (nework < mbs_rows_work_size(m)) {
    nework = mbs_rows_work_size(m);
  }
  d->ework = calloc(nework, sizeof(double));
  d->body_pos = calloc(3 * nb, sizeof(double));
  d->body_rot = calloc(9 * nb, sizeof(double));
  d->body_vel = calloc(3 * nb, sizeof(double));
  d->body_omega = calloc(3 * nb, sizeof(double));
  d->joint_reaction = calloc(6 * (size_t)(m->njoint > 0 ? m->njoint : 1), sizeof(double));
  d->v_rec = calloc(nq, sizeof(double));
  d->lambda_rec = calloc(nc, sizeof(double));
  d->acc_rec = calloc(nq, sizeof(double));
  d->vtmp = calloc(nq, sizeof(double));
  d->joint_coord = calloc(3 * (size_t)(m->njoint > 0 ? m->njoint : 1), sizeof(double));
  d->joint_rate = calloc(3 * (size_t)(m->njoint > 0 ? m->njoint : 1), sizeof(double));
  d->load_force = calloc(6 * (size_t)(m->nload > 0 ? m->nload : 1), sizeof(double));
  /* the control laws' run state starts at zero (model.h ctrl_state) */
  if (m->nctrl > 0) {
    memset(m->ctrl_state, 0, (size_t)(2 * m->nctrl + 1) * sizeof(double));
  }
  d->joint_drive = calloc(6 * (size_t)(m->njoint > 0 ? m->njoint : 1), sizeof(double));
  d->redund_work = calloc((size_t)(m->red_nwork > 0 ? m->red_nwork : 1), sizeof(double));
  d->redund_list = malloc((size_t)(m->red_nrow + m->ndrop + 1) * sizeof(int));
  d->redund_rows = malloc((size_t)(m->red_nrow + 1) * sizeof(mbsConRow));
  d->arena = calloc(1, sizeof(mbsArena));
  d->con_diag = malloc(nc * sizeof(int));
  d->joint_active = calloc((size_t)(m->njoint > 0 ? m->njoint : 1), sizeof(int));
  for (int r = 0; d->con_diag && r < m->ncon; r++) {
    d->con_diag[r] = m->nengage > 0 ? mbs_system_slot(d->sys, m->nq + r, m->nq + r) : -1;
  }
  if (!d->con_diag || !d->joint_active || !d->q || !d->v || !d->lambda || !d->res || !d->dx || !d->jac || !d->kkt_jac || !d->ework || !d->body_pos ||
      !d->body_rot || !d->body_vel || !d->body_omega || !d->joint_reaction || !d->v_rec ||
      !d->lambda_rec || !d->acc_rec || !d->vtmp || !d->redund_work || !d->redund_list || !d->redund_rows || !d->joint_coord ||
      !d->joint_rate || !d->load_force || !d->joint_drive || !d->arena ||
      mbs_arena_init(d->arena, arena_bound(d->sys)) != 0) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    mbs_data_destroy(d);
    return NULL;
  }
  /* the integrator's entry and workspace ("auto" is resolved by the compiler: a model
   * still holding it, or a value out of range, is refused rather than run as another) */
  d->integrator = mbs_integrator_table(m->integrator);
  if (!d->integrator) {
    mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                  "internal error: integrator %d is not a time-stepping scheme",
                  (int)m->integrator);
    mbs_data_destroy(d);
    return NULL;
  }
  if (d->integrator->init(m, &d->integrator_work, err) != MBS_OK) {
    mbs_data_destroy(d);
    return NULL;
  }
  memcpy(d->q, m->q0, (size_t)m->nq * sizeof(double));
  memcpy(d->v, m->v0, (size_t)m->nq * sizeof(double));
  memcpy(d->v_rec, m->v0, (size_t)m->nq * sizeof(double));
  mbs_joint_track(m, d);
  if (m->tolerance > 0.0 && mbs_step_control_create(m, d, err) != MBS_OK) {
    mbs_data_destroy(d);
    return NULL;
  }
  return d;
}

void mbs_data_destroy(mbsData *d) {
  if (!d) {
    return;
  }
  mbs_step_control_destroy(d->control);
  mbs_system_destroy(d->sys); /* and its LU, d->ls */
  if (d->integrator && d->integrator_work) {
    d->integrator->free(d->integrator_work);
  }
  mbs_arena_free(d->arena);
  free(d->arena);
  mbs_schur_destroy(d->schur);
  void *ptrs[] = {
      d->q,          d->v,           d->lambda,     d->res,      d->dx,          d->jac,
      d->ework,      d->body_pos,    d->body_rot,   d->body_vel, d->body_omega,  d->joint_reaction,
      d->v_rec,      d->lambda_rec,  d->acc_rec,    d->vtmp,     d->joint_coord, d->joint_rate,
      d->load_force, d->redund_work, d->redund_list, d->redund_rows, d->joint_drive, d->con_diag, d->joint_active, d->kkt_jac};
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  free(d);
}

void mbs_solver_arena_usage(const mbsData *d, size_t *size, size_t *high) {
  *size = d->arena ? d->arena->size : 0;
  *high = d->arena ? d->arena->high : 0;
}
