/* expr.c: numbers written as expressions of parameters ("$m * ($L^2 + 0.02^2) / 12",
 * "-$L", "2 * pi") and the profile expressions of t, read with the engine of util/expr.h
 * (one grammar for both: + - * / ^ right-associative and above unary minus, parentheses,
 * numbers, $name of a parameter defined above, pi, t in profiles, and the functions sqrt
 * sin cos tan asin acos atan atan2 exp log abs min max clamp if smoothstep). Errors are
 * located at the offending token. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"
#include "util/expr.h"

/* $name: a parameter defined above the value (marked as used) */
static int param_value(void *ctx, const char *name, int len, double *value) {
  DeckReader *r = ctx;
  char buf[MBS_NAME_MAX];
  if (len <= 0 || len >= (int)sizeof(buf)) {
    return -1;
  }
  memcpy(buf, name, (size_t)len);
  buf[len] = '\0';
  int i = deck_names_get(&r->param_names, buf);
  if (i < 0 || i >= r->nparam) {
    return -1;
  }
  r->params[i].used = 1;
  *value = r->params[i].value;
  return 0;
}

/* the expression s parsed (with t when allow_t), or NULL with the error set (or
 * *plain_error = 1: a single word that is not a name, a number with letters glued to it) */
static mbsExpr *parse(DeckReader *r, const yaml_node_t *n, const char *field, const char *s,
                      int allow_t, int *plain_error, mbsStatus *st) {
  mbsExprError e;
  *plain_error = 0;
  *st = MBS_OK;
  mbsExpr *ex = mbs_expr_parse(s, param_value, r, allow_t, &e);
  if (ex) {
    return ex;
  }
  switch (e.fault) {
    case MBS_EXPR_NOMEM:
      *st = deck_nomem(r);
      break;
    case MBS_EXPR_UNKNOWN: {
      char name[MBS_NAME_MAX + 64];
      snprintf(name, sizeof(name), "%.*s", e.len - 1 > 64 ? 64 : e.len - 1, s + e.pos + 1);
      *st = deck_unknown_param(r, n, field, name, e.pos);
      break;
    }
    case MBS_EXPR_TIME:
      *st = deck_fail_at(r, n, e.pos,
                         "%s: t is the time of a profile expression ({expression: ...}); here "
                         "the value is a number (got '%.64s')",
                         field, s);
      break;
    case MBS_EXPR_NUMBER:
      *plain_error = 1;
      *st = MBS_ERR_DECK;
      break;
    default:
      if (e.pos == 0 && e.len == (int)strlen(s) && !strncmp(e.msg, "unknown name", 12)) {
        *plain_error = 1;
        *st = MBS_ERR_DECK;
        break;
      }
      *st = deck_fail_at(r, n, e.pos, "%s: %s, in the expression '%.64s'", field, e.msg, s);
      break;
  }
  return NULL;
}

int deck_expr_looks(const char *s) {
  for (; *s; s++) {
    if (!((*s >= '0' && *s <= '9') || *s == '.')) {
      return 1;
    }
  }
  return 0;
}

mbsStatus deck_expression(DeckReader *r, const yaml_node_t *n, const char *field, const char *s,
                          double *out, int *plain_error) {
  mbsStatus st;
  mbsExpr *ex = parse(r, n, field, s, 0, plain_error, &st);
  if (!ex) {
    return st;
  }
  double v = mbs_expr_eval(ex, 0.0, NULL, NULL);
  mbs_expr_destroy(ex);
  if (!isfinite(v)) {
    return deck_fail(r, n, "%s: the expression '%.64s' is not a finite number (%g)", field, s, v);
  }
  *out = v;
  return MBS_OK;
}

mbsStatus deck_time_expression(DeckReader *r, const yaml_node_t *n, const char *field,
                               const char *s, double *f0) {
  int plain = 0;
  mbsStatus st;
  mbsExpr *ex = parse(r, n, field, s, 1, &plain, &st);
  if (!ex) {
    if (plain) {
      return deck_fail(r, n, "%s: expected an expression of t (got '%.64s')", field, s);
    }
    return st;
  }
  /* f, f' and f'' at t = 0 (right limits): finite, or the run could not start (sqrt(t),
   * log(t) and t^0.5 have no finite rate at 0) */
  double der[2];
  double v = mbs_expr_eval(ex, 0.0, der, NULL);
  mbs_expr_destroy(ex);
  if (!isfinite(v)) {
    return deck_fail(r, n, "%s: the expression '%.64s' is not a finite number at t = 0 (%g)",
                     field, s, v);
  }
  if (!isfinite(der[0]) || !isfinite(der[1])) {
    return deck_fail(r, n,
                     "%s: the expression '%.64s' has no finite %s derivative at t = 0 (%g); a "
                     "profile needs a finite rate and acceleration (sqrt, log and ^ with a "
                     "fractional exponent have none at 0)",
                     field, s, isfinite(der[0]) ? "second" : "first",
                     isfinite(der[0]) ? der[1] : der[0]);
  }
  *f0 = v;
  return MBS_OK;
}
