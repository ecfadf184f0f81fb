/* rows.c: one walk over every constraint row, quadratic rows and constraint elements' rows
 * alike (model.h, mbsRowIter) */
#include <assert.h>
#include <string.h>

#include "mbsim/elements.h"
#include "mbsim/model.h"

size_t mbs_rows_work_size(const mbsModel *m) {
  int nq = m->elem_maxq > 0 ? m->elem_maxq : 1;
  return (size_t)MBS_ELEM_MAXCON * (size_t)(1 + nq);
}

static void begin(mbsRowIter *it, const mbsModel *m, const double *q, double t, int grad,
                  double *work) {
  memset(it, 0, sizeof(*it));
  it->m = m;
  it->q = q;
  it->t = t;
  it->grad = grad;
  it->work = work;
  it->row = -1;
  it->elem = -1;
  it->erow = -1;
}

void mbs_rows_begin(mbsRowIter *it, const mbsModel *m, const double *q, double t, int grad,
                    double *work) {
  begin(it, m, q, t, grad, work);
  it->only_joint = -1;
  it->next_q = 0;
  it->end_q = m->nrow;
  it->end_e = m->nelem;
}

void mbs_rows_begin_joint(mbsRowIter *it, const mbsModel *m, int j, const double *q, double t,
                          int grad, double *work) {
  assert(j >= 0 && j < m->njoint);
  begin(it, m, q, t, grad, work);
  it->only_joint = j;
  it->next_q = m->joint_con[j];
  it->end_q = m->joint_con[j] + m->joint_ncon[j];
  /* the joint's elements only: a walk per joint over every element cost joints x elements */
  it->next_e = m->joint_elem ? m->joint_elem[2 * j] : 0;
  it->end_e = m->joint_elem ? m->joint_elem[2 * j + 1] : m->nelem;
}

/* the next constraint element (of the joint, if the walk is limited to one) from next_e */
static int next_element(mbsRowIter *it) {
  const mbsModel *m = it->m;
  while (it->next_e < it->end_e) {
    const mbsElem *el = &m->elem[it->next_e++];
    if (el->ncon > 0 && (it->only_joint < 0 || el->joint == it->only_joint)) {
      return it->next_e - 1;
    }
  }
  return -1;
}

int mbs_rows_next(mbsRowIter *it) {
  const mbsModel *m = it->m;
  /* the quadratic rows */
  if (it->next_q < it->end_q) {
    int r = it->next_q++;
    const mbsConRow *row = &m->con[r];
    it->row = r;
    it->joint = row->joint;
    it->body = row->body;
    it->elem = -1;
    it->erow = 0;
    it->g = mbs_con_eval(row, it->q, it->grad ? it->gbuf : NULL);
    it->nz = 0;
    if (it->grad) {
      for (int k = 0; k < row->nnode; k++) {
        for (int c = 0; c < 3; c++) {
          it->ibuf[it->nz++] = 3 * row->node[k] + c;
        }
      }
    }
    it->idx = it->ibuf;
    it->val = it->gbuf;
    return 1;
  }
  /* the rows of constraint elements: the element is evaluated at its first row */
  if (it->elem >= 0 && it->erow + 1 < m->elem[it->elem].ncon) {
    it->erow++;
  } else {
    int k = next_element(it);
    if (k < 0) {
      it->row = m->ncon;
      it->nz = 0;
      return 0;
    }
    const mbsElem *el = &m->elem[k];
    assert(el->ncon <= MBS_ELEM_MAXCON && el->nq <= m->elem_maxq);
    const mbsElementKindTable *kind = mbs_element_kind(el->kind);
    double *g = it->work, *G = it->work + MBS_ELEM_MAXCON;
    if (kind->constraint) {
      kind->constraint(m, el, it->q, it->t, g, it->grad ? G : NULL);
    } else {
      memset(g, 0, (size_t)el->ncon * sizeof(double));
    }
    it->elem = k;
    it->erow = 0;
    it->joint = el->joint;
    it->body = -1;
    it->idx = el->qidx;
  }
  const mbsElem *el = &m->elem[it->elem];
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  it->row = el->con0 + it->erow;
  it->g = it->work[it->erow];
  it->nz = it->grad && kind->constraint ? el->nq : 0;
  /* without gradients the work may hold g alone: point nowhere past it */
  it->val = it->grad ? it->work + MBS_ELEM_MAXCON + (size_t)it->erow * (size_t)el->nq : it->gbuf;
  return 1;
}

int mbs_row_element(const mbsModel *m, int r, int *erow) {
  assert(r >= 0 && r < m->ncon);
  if (r >= m->nrow) {
    for (int k = 0; k < m->nelem; k++) {
      const mbsElem *el = &m->elem[k];
      if (el->ncon > 0 && r >= el->con0 && r < el->con0 + el->ncon) {
        if (erow) {
          *erow = r - el->con0;
        }
        return k;
      }
    }
  }
  if (erow) {
    *erow = 0;
  }
  return -1;
}

double mbs_row_value(const mbsModel *m, int r, const double *q, double t, double *work) {
  assert(r >= 0 && r < m->ncon);
  if (r < m->nrow) {
    return mbs_con_eval(&m->con[r], q, NULL);
  }
  int erow, k = mbs_row_element(m, r, &erow);
  if (k < 0) {
    return 0.0;
  }
  const mbsElem *el = &m->elem[k];
  const mbsElementKindTable *kind = mbs_element_kind(el->kind);
  if (!kind->constraint) {
    return 0.0;
  }
  kind->constraint(m, el, q, t, work, NULL);
  return work[erow];
}
