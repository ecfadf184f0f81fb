/* data.c: the run state and its workspace, allocated once per run */
#include <stdlib.h>
#include <string.h>

#include "mbsim/solver.h"
#include "solver/linsolve.h"
#include "solver/system.h"

mbsData *mbs_data_create(const mbsModel *m, mbsError *err) {
  mbsData *d = calloc(1, sizeof(mbsData));
  if (!d) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    return NULL;
  }
  d->sys = mbs_system_create(m, 1, NULL, 0, 0, err);
  if (!d->sys) {
    free(d);
    return NULL;
  }
  d->ls = d->sys->ls;
  size_t nq = (size_t)(m->nq > 0 ? m->nq : 1), nc = (size_t)(m->ncon > 0 ? m->ncon : 1);
  size_t ns = (size_t)(d->sys->n_max > 0 ? d->sys->n_max : 1);
  size_t nb = (size_t)(m->nbody > 0 ? m->nbody : 1);
  d->q = calloc(nq, sizeof(double));
  d->v = calloc(nq, sizeof(double));
  d->mu = calloc(nc, sizeof(double));
  d->q_prev = calloc(nq, sizeof(double));
  d->v_prev = calloc(nq, sizeof(double));
  d->res = calloc(ns, sizeof(double));
  d->dx = calloc(ns, sizeof(double));
  d->jac = calloc((size_t)(d->sys->nnz_max > 0 ? d->sys->nnz_max : 1), sizeof(double));
  d->qm = calloc(nq, sizeof(double));
  d->vm = calloc(nq, sizeof(double));
  d->qlam = calloc(nq, sizeof(double));
  d->rscale = calloc(nq, sizeof(double));
  d->mu_prev = calloc(nc, sizeof(double));
  d->acc = calloc(nq, sizeof(double));
  d->aacc = calloc(nq, sizeof(double));
  d->qhat = calloc(nq, sizeof(double));
  d->dq = calloc(nq, sizeof(double));
  d->qbase = calloc(nq, sizeof(double));
  d->vbase = calloc(nq, sizeof(double));
  d->ework = calloc((size_t)d->sys->ework_len, sizeof(double));
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
  d->redund_work = calloc((size_t)(m->red_nwork > 0 ? m->red_nwork : 1), sizeof(double));
  if (!d->q || !d->v || !d->mu || !d->q_prev || !d->v_prev || !d->res || !d->dx || !d->jac ||
      !d->qm || !d->vm || !d->qlam || !d->rscale || !d->ework || !d->mu_prev || !d->acc ||
      !d->aacc || !d->qhat || !d->dq || !d->qbase || !d->vbase || !d->body_pos || !d->body_rot ||
      !d->body_vel || !d->body_omega || !d->joint_reaction || !d->v_rec || !d->lambda_rec ||
      !d->acc_rec || !d->vtmp || !d->redund_work || !d->joint_coord || !d->joint_rate ||
      !d->load_force) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
    mbs_data_destroy(d);
    return NULL;
  }
  memcpy(d->q, m->q0, (size_t)m->nq * sizeof(double));
  memcpy(d->v, m->v0, (size_t)m->nq * sizeof(double));
  memcpy(d->v_rec, m->v0, (size_t)m->nq * sizeof(double));
  mbs_joint_track(m, d);
  return d;
}

void mbs_data_destroy(mbsData *d) {
  if (!d) {
    return;
  }
  mbs_system_destroy(d->sys);
  void *ptrs[] = {d->q,        d->v,        d->mu,       d->q_prev,     d->v_prev,
                  d->res,      d->dx,       d->jac,      d->qm,         d->vm,
                  d->qlam,     d->rscale,   d->ework,    d->mu_prev,    d->acc,
                  d->aacc,     d->qhat,     d->dq,       d->qbase,      d->vbase,
                  d->body_pos, d->body_rot, d->body_vel, d->body_omega, d->joint_reaction,
                  d->v_rec,    d->lambda_rec, d->acc_rec, d->vtmp, d->joint_coord,
                  d->joint_rate, d->load_force};
  free(d->redund_work);
  for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
    free(ptrs[i]);
  }
  free(d);
}
