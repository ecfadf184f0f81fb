/* profile.c: evaluation of the time profiles of docs/decks.md */
#include "util/profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/expr.h"

/* an expression profile: the parsed expression of t, which evaluates f with f' and f''
 * (util/expr.h) */
struct mbsProfileExpr {
  mbsExpr *e;
};

mbsProfileExpr *mbs_profile_expr_create(const char *text, char *why, size_t nwhy) {
  mbsExprError err;
  mbsProfileExpr *ex = calloc(1, sizeof(*ex));
  if (!ex) {
    snprintf(why, nwhy, "out of memory");
    return NULL;
  }
  ex->e = text ? mbs_expr_parse(text, NULL, NULL, 1, &err) : NULL;
  if (!ex->e) {
    snprintf(why, nwhy, "%s", text ? err.msg : "no expression");
    free(ex);
    return NULL;
  }
  return ex;
}

void mbs_profile_expr_destroy(mbsProfileExpr *ex) {
  if (!ex) {
    return;
  }
  mbs_expr_destroy(ex->e);
  free(ex);
}

/* the k-th derivative of an expression profile at t */
static double expr_eval(const mbsProfileExpr *ex, int k, double t) {
  if (!ex || !ex->e) {
    return 0.0;
  }
  double der[2];
  double f = mbs_expr_eval(ex->e, t, der, NULL);
  return k == 0 ? f : der[k - 1];
}

/* piecewise linear through (t_k, f_k), constant outside; right derivative */
static double table_eval(const double *tab, int n, double t, double *rate) {
  *rate = 0.0;
  if (n <= 0) {
    return 1.0;
  }
  if (t < tab[0]) {
    return tab[1];
  }
  if (t >= tab[2 * (n - 1)]) {
    return tab[2 * (n - 1) + 1];
  }
  /* bisection for the segment [t_k, t_k+1) that holds t */
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (tab[2 * mid] <= t) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  double t0 = tab[2 * lo], f0 = tab[2 * lo + 1], t1 = tab[2 * hi], f1 = tab[2 * hi + 1];
  *rate = (f1 - f0) / (t1 - t0);
  return f0 + *rate * (t - t0);
}

double mbs_profile_eval(mbsProfileKind kind, const double p[3], const double *table, int ntab,
                        const mbsProfileExpr *ex, double t, double *rate) {
  double f = 1.0, r = 0.0;
  switch (kind) {
    case MBS_PROFILE_CONSTANT:
    case MBS_PROFILE_COUNT:
      break;
    case MBS_PROFILE_WINDOW:
      f = (t >= p[0] && t < p[1]) ? 1.0 : 0.0;
      break;
    case MBS_PROFILE_RAMP:
      if (t < p[0]) {
        f = 0.0;
      } else if (t >= p[1]) {
        f = 1.0;
      } else {
        r = 1.0 / (p[1] - p[0]);
        f = (t - p[0]) * r;
      }
      break;
    case MBS_PROFILE_SINE: {
      double w = 2.0 * 3.14159265358979323846 * p[1];
      f = p[0] * sin(w * t + p[2]);
      r = p[0] * w * cos(w * t + p[2]);
      break;
    }
    case MBS_PROFILE_TABLE:
      f = table_eval(table, ntab, t, &r);
      break;
    case MBS_PROFILE_EXPRESSION:
      if (ex && ex->e) {
        double der[2];
        f = mbs_expr_eval(ex->e, t, der, NULL);
        r = der[0];
      } else {
        f = 0.0;
      }
      break;
  }
  if (rate) {
    *rate = r;
  }
  return f;
}

double mbs_profile_accel(mbsProfileKind kind, const double p[3], const mbsProfileExpr *ex,
                         double t) {
  if (kind == MBS_PROFILE_EXPRESSION) {
    return expr_eval(ex, 2, t);
  }
  if (kind != MBS_PROFILE_SINE) {
    return 0.0;
  }
  double w = 2.0 * 3.14159265358979323846 * p[1];
  return -p[0] * w * w * sin(w * t + p[2]);
}

int mbs_profile_kink_in(mbsProfileKind kind, const double p[3], const double *table, int ntab,
                        const mbsProfileExpr *ex, double a, double b) {
  switch (kind) {
    case MBS_PROFILE_EXPRESSION: {
      /* the piecewise functions on another branch at b than just after a (their branches
       * are right-continuous, so a kink at b counts and one at a does not) */
      if (!ex || !ex->e) {
        return 0;
      }
      uint64_t ha, hb;
      mbs_expr_eval(ex->e, a, NULL, &ha);
      mbs_expr_eval(ex->e, b, NULL, &hb);
      return ha != hb;
    }
    case MBS_PROFILE_WINDOW:
    case MBS_PROFILE_RAMP:
      return (p[0] > a && p[0] <= b) || (p[1] > a && p[1] <= b);
    case MBS_PROFILE_TABLE:
      for (int k = 0; k < ntab; k++) {
        if (table[2 * k] > a && table[2 * k] <= b) {
          return 1;
        }
      }
      return 0;
    default:
      return 0;
  }
}
