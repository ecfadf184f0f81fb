/* test_expr.c: the expression engine (util/expr.h) against the grammar of docs/decks.md: every
 * documented operator and function against the C library's value at several points, their
 * first and second derivatives against central differences, the right limits at the kinks
 * of the piecewise functions, the error positions and the size limits. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/expr.h"
#include "util/profile.h"

static mbsExpr *parse_t(const char *s) {
  mbsExprError e;
  mbsExpr *ex = mbs_expr_parse(s, NULL, NULL, 1, &e);
  ck_assert_msg(ex != NULL, "'%s' does not parse: %s (at %d)", s, e.msg, e.pos);
  return ex;
}

static double f_of(const char *s, double t, double der[2]) {
  mbsExpr *ex = parse_t(s);
  double v = mbs_expr_eval(ex, t, der, NULL);
  mbs_expr_destroy(ex);
  return v;
}

/* each documented function and operator, as an expression and as C computes it */
typedef struct {
  const char *text;
  double (*ref)(double t);
  double t[3]; /* where to compare (inside the domain, away from kinks) */
} Case;

static double r_add(double t) {
  return 1.5 + t - 0.25;
}
static double r_mul(double t) {
  return 3.0 * t / 7.0;
}
static double r_pow(double t) {
  return pow(2.0, pow(t, 2.0));
}
static double r_neg_pow(double t) {
  return -pow(t, 2.0);
}
static double r_sqrt(double t) {
  return sqrt(t);
}
static double r_sin(double t) {
  return sin(t);
}
static double r_cos(double t) {
  return cos(t);
}
static double r_tan(double t) {
  return tan(t);
}
static double r_asin(double t) {
  return asin(t);
}
static double r_acos(double t) {
  return acos(t);
}
static double r_atan(double t) {
  return atan(t);
}
static double r_atan2(double t) {
  return atan2(t, 1.0 - t);
}
static double r_exp(double t) {
  return exp(t);
}
static double r_log(double t) {
  return log(t);
}
static double r_abs(double t) {
  return fabs(t - 0.5);
}
static double r_min(double t) {
  return fmin(fmin(t, 0.6), 1.0 - t);
}
static double r_max(double t) {
  return fmax(t * t, 0.3);
}
static double r_clamp(double t) {
  return fmin(fmax(2.0 * t, 0.2), 0.9);
}
static double r_if(double t) {
  return t - 0.4 > 0.0 ? t * t : -t;
}
static double r_smooth(double t) {
  double u = fmin(fmax((t - 0.2) / 0.6, 0.0), 1.0);
  return u * u * (3.0 - 2.0 * u);
}
static double r_pi(double t) {
  return 3.14159265358979323846 * t;
}
static double r_powneg(double t) {
  return pow(t, -1.5);
}
static double r_tt(double t) {
  return pow(t, t);
}

static const Case CASES[] = {
    {"1.5 + t - 0.25", r_add, {0.1, 0.45, 0.8}},
    {"3 * t / 7", r_mul, {0.1, 0.45, 0.8}},
    {"2^t^2", r_pow, {0.1, 0.45, 1.0}},
    {"-t^2", r_neg_pow, {0.1, 0.45, 0.8}},
    {"sqrt(t)", r_sqrt, {0.1, 0.45, 0.8}},
    {"sin(t)", r_sin, {0.1, 0.45, 0.8}},
    {"cos(t)", r_cos, {0.1, 0.45, 0.8}},
    {"tan(t)", r_tan, {0.1, 0.45, 0.8}},
    {"asin(t)", r_asin, {0.1, 0.45, 0.8}},
    {"acos(t)", r_acos, {0.1, 0.45, 0.8}},
    {"atan(t)", r_atan, {0.1, 0.45, 0.8}},
    {"atan2(t, 1 - t)", r_atan2, {0.1, 0.45, 0.8}},
    {"exp(t)", r_exp, {0.1, 0.45, 0.8}},
    {"log(t)", r_log, {0.1, 0.45, 0.8}},
    {"abs(t - 0.5)", r_abs, {0.1, 0.45, 0.8}},
    {"min(t, 0.6, 1 - t)", r_min, {0.1, 0.55, 0.8}},
    {"max(t^2, 0.3)", r_max, {0.1, 0.45, 0.8}},
    {"clamp(2 * t, 0.2, 0.9)", r_clamp, {0.05, 0.3, 0.8}},
    {"if(t - 0.4, t^2, -t)", r_if, {0.1, 0.45, 0.8}},
    {"smoothstep(0.2, 0.8, t)", r_smooth, {0.1, 0.45, 0.9}},
    {"pi * t", r_pi, {0.1, 0.45, 0.8}},
    {"t^-1.5", r_powneg, {0.3, 0.45, 0.8}},
    {"t^t", r_tt, {0.1, 0.45, 0.8}},
};

START_TEST(test_functions_and_derivatives) {
  for (size_t c = 0; c < sizeof(CASES) / sizeof(CASES[0]); c++) {
    for (int k = 0; k < 3; k++) {
      double t = CASES[c].t[k], der[2];
      double v = f_of(CASES[c].text, t, der), ref = CASES[c].ref(t);
      ck_assert_msg(fabs(v - ref) <= 1e-14 * fmax(1.0, fabs(ref)), "%s at t = %g: %.17g, C %.17g",
                    CASES[c].text, t, v, ref);
      /* central differences of the C reference: f' to h^2, f'' to h^2 (h = 1e-4 and 1e-3) */
      double h = 1e-5, fd1 = (CASES[c].ref(t + h) - CASES[c].ref(t - h)) / (2.0 * h);
      double H = 1e-3;
      double fd2 = (CASES[c].ref(t + H) - 2.0 * ref + CASES[c].ref(t - H)) / (H * H);
      ck_assert_msg(fabs(der[0] - fd1) <= 1e-7 * fmax(1.0, fabs(fd1)),
                    "%s at t = %g: f' %.12g, differences %.12g", CASES[c].text, t, der[0], fd1);
      ck_assert_msg(fabs(der[1] - fd2) <= 1e-4 * fmax(1.0, fabs(fd2)),
                    "%s at t = %g: f'' %.12g, differences %.12g", CASES[c].text, t, der[1], fd2);
    }
  }
}
END_TEST

/* the grammar of docs/decks.md: ^ right-associative and above unary minus */
START_TEST(test_grammar) {
  ck_assert_double_eq(f_of("2^t^2", 1.0, NULL), 2.0);
  ck_assert_double_eq(f_of("2^3^2", 0.0, NULL), 512.0);
  ck_assert_double_eq(f_of("-2^2", 0.0, NULL), -4.0);
  ck_assert_double_eq(f_of("2^-1", 0.0, NULL), 0.5);
  ck_assert_double_eq(f_of("(-2)^3", 0.0, NULL), -8.0);
  ck_assert_double_eq(f_of("2 * -3", 0.0, NULL), -6.0);
  ck_assert_double_eq(f_of("8 / 4 / 2", 0.0, NULL), 1.0);
  ck_assert_double_eq(f_of("8 - 4 - 2", 0.0, NULL), 2.0);
  ck_assert_double_eq(f_of("1 + 2 * 3 ^ 2", 0.0, NULL), 19.0);
  ck_assert_double_eq(f_of("1.5e-3 * 2E+2", 0.0, NULL), 0.3);
  ck_assert_double_eq(f_of("min(3)", 0.0, NULL), 3.0);
  ck_assert_double_eq(f_of("max(1, 5, 2, 4)", 0.0, NULL), 5.0);
  /* (2^t)^2 would be 4 at t = 1; 2^(t^2) has rate 2 ln 2 t 2^(t^2) = 4 ln 2 there */
  double der[2];
  f_of("2^t^2", 1.0, der);
  ck_assert_double_eq_tol(der[0], 4.0 * log(2.0), 1e-15);
}
END_TEST

/* at a kink the rate and acceleration are the right limits, never NaN */
START_TEST(test_kinks) {
  static const struct {
    const char *text;
    double t, f, d1, d2;
  } K[] = {
      {"abs(t - 1)", 1.0, 0.0, 1.0, 0.0},          {"abs(1 - t)", 1.0, 0.0, 1.0, 0.0},
      {"abs((t - 1)^2)", 1.0, 0.0, 0.0, 2.0},      {"abs(sin(t))", 0.0, 0.0, 1.0, 0.0},
      {"min(t, 1)", 1.0, 1.0, 0.0, 0.0},           {"min(t, 2 - t)", 1.0, 1.0, -1.0, 0.0},
      {"max(t, 1)", 1.0, 1.0, 1.0, 0.0},           {"max(t, 2 - t)", 1.0, 1.0, 1.0, 0.0},
      {"clamp(t, 0, 1)", 0.0, 0.0, 1.0, 0.0},      {"clamp(t, 0, 1)", 1.0, 1.0, 0.0, 0.0},
      {"if(t - 1, 2 * t, 0)", 1.0, 2.0, 2.0, 0.0}, {"if(1 - t, 0, 2 * t)", 1.0, 2.0, 2.0, 0.0},
      {"smoothstep(0, 2, t)", 0.0, 0.0, 0.0, 1.5}, {"smoothstep(0, 2, t)", 2.0, 1.0, 0.0, 0.0},
      {"smoothstep(1, 1, t)", 1.0, 1.0, 0.0, 0.0}, {"t * abs(t)", 0.0, 0.0, 0.0, 2.0},
  };
  for (size_t k = 0; k < sizeof(K) / sizeof(K[0]); k++) {
    double der[2];
    double v = f_of(K[k].text, K[k].t, der);
    ck_assert_msg(v == K[k].f && der[0] == K[k].d1 && der[1] == K[k].d2,
                  "%s at t = %g: (%g, %g, %g), expected (%g, %g, %g)", K[k].text, K[k].t, v, der[0],
                  der[1], K[k].f, K[k].d1, K[k].d2);
  }
  /* the branches tell a kink in (a, b] */
  mbsProfileExpr *p = NULL;
  char why[256];
  ck_assert_ptr_nonnull(p = mbs_profile_expr_create("abs(t - 0.5)", why, sizeof(why)));
  double par[3] = {0};
  ck_assert_int_eq(mbs_profile_kink_in(MBS_PROFILE_EXPRESSION, par, NULL, 0, p, 0.4, 0.5), 1);
  ck_assert_int_eq(mbs_profile_kink_in(MBS_PROFILE_EXPRESSION, par, NULL, 0, p, 0.5, 0.6), 0);
  ck_assert_int_eq(mbs_profile_kink_in(MBS_PROFILE_EXPRESSION, par, NULL, 0, p, 0.1, 0.2), 0);
  mbs_profile_expr_destroy(p);
  ck_assert_ptr_nonnull(p = mbs_profile_expr_create("sin(t)", why, sizeof(why)));
  ck_assert_int_eq(mbs_profile_kink_in(MBS_PROFILE_EXPRESSION, par, NULL, 0, p, 0.0, 10.0), 0);
  mbs_profile_expr_destroy(p);
}
END_TEST

static int one_param(void *ctx, const char *name, int len, double *value) {
  (void)ctx;
  if (len == 1 && name[0] == 'L') {
    *value = 2.0;
    return 0;
  }
  return -1;
}

START_TEST(test_errors) {
  static const struct {
    const char *text;
    int allow_t;
    mbsExprFault fault;
    int pos;
    const char *msg;
  } E[] = {
      {"(2 + 3", 0, MBS_EXPR_SYNTAX, 0, "missing ')'"},
      {"2 + ", 0, MBS_EXPR_SYNTAX, 4, "expected a number, a name or '('"},
      {"max(1 2)", 0, MBS_EXPR_SYNTAX, 6, "expected ',' or ')'"},
      {"1 = 2", 0, MBS_EXPR_SYNTAX, 2, "'=' is not part of an expression"},
      {"1 < 2", 0, MBS_EXPR_SYNTAX, 2, "'<' is not part of an expression"},
      {"3)", 0, MBS_EXPR_SYNTAX, 1, "')' without a '('"},
      {"2 * $Lx", 0, MBS_EXPR_UNKNOWN, 4, "unknown parameter '$Lx'"},
      {"2 * t", 0, MBS_EXPR_TIME, 4, "t is the time"},
      {"0x1A", 0, MBS_EXPR_NUMBER, 0, "'0x1A' is not a number"},
      {"foo(t)", 1, MBS_EXPR_SYNTAX, 0, "unknown function 'foo'"},
      {"sin t", 1, MBS_EXPR_SYNTAX, 0, "sin is a function"},
      {"atan2(t)", 1, MBS_EXPR_SYNTAX, 0, "atan2 takes 2 arguments, got 1"},
      {"clamp(t, 1)", 1, MBS_EXPR_SYNTAX, 0, "clamp takes 3 arguments, got 2"},
      {"inf", 0, MBS_EXPR_SYNTAX, 0, "unknown name 'inf'"},
      {"nan * 1", 0, MBS_EXPR_SYNTAX, 0, "unknown name 'nan'"},
  };
  for (size_t k = 0; k < sizeof(E) / sizeof(E[0]); k++) {
    mbsExprError e;
    mbsExpr *ex = mbs_expr_parse(E[k].text, one_param, NULL, E[k].allow_t, &e);
    ck_assert_msg(ex == NULL, "'%s' parsed", E[k].text);
    ck_assert_msg(e.fault == E[k].fault && e.pos == E[k].pos && strstr(e.msg, E[k].msg),
                  "'%s': fault %d at %d '%s', expected %d at %d '%s'", E[k].text, e.fault, e.pos,
                  e.msg, E[k].fault, E[k].pos, E[k].msg);
  }
  mbsExprError e;
  mbsExpr *ex = mbs_expr_parse("$L^2", one_param, NULL, 0, &e);
  ck_assert_ptr_nonnull(ex);
  ck_assert_double_eq(mbs_expr_eval(ex, 0.0, NULL, NULL), 4.0);
  ck_assert_int_eq(mbs_expr_uses_t(ex), 0);
  mbs_expr_destroy(ex);
}
END_TEST

/* sizes: at most MBS_EXPR_MAX_NODES nodes and MBS_EXPR_MAX_DEPTH levels, refused at the token
 * that crosses the limit; a long product costs one pass with its derivatives */
START_TEST(test_limits) {
  size_t n = 200000;
  char *s = malloc(n);
  ck_assert_ptr_nonnull(s);
  /* 5001 terms t + t + ...: 10,001 nodes */
  size_t k = 0;
  for (int i = 0; i < 5001; i++) {
    k += (size_t)snprintf(s + k, n - k, "%st", i ? "+" : "");
  }
  mbsExprError e;
  mbsExpr *ex = mbs_expr_parse(s, NULL, NULL, 1, &e);
  ck_assert_ptr_null(ex);
  ck_assert_int_eq(e.fault, MBS_EXPR_LIMIT);
  ck_assert_int_eq(e.pos, 2 * 5000 + 1);
  ck_assert_ptr_nonnull(strstr(e.msg, "more than 10000 terms"));
  /* 65 parentheses */
  k = 0;
  for (int i = 0; i < 65; i++) {
    s[k++] = '(';
  }
  s[k++] = 't';
  for (int i = 0; i < 65; i++) {
    s[k++] = ')';
  }
  s[k] = '\0';
  ck_assert_ptr_null(mbs_expr_parse(s, NULL, NULL, 1, &e));
  ck_assert_int_eq(e.fault, MBS_EXPR_LIMIT);
  ck_assert_ptr_nonnull(strstr(e.msg, "nested deeper than 64 levels"));
  ck_assert_int_eq(e.pos, 64);
  /* 200,000 unary minus signs: refused at the 64th, no deep recursion */
  memset(s, '-', n - 2);
  s[n - 2] = 't';
  s[n - 1] = '\0';
  ck_assert_ptr_null(mbs_expr_parse(s, NULL, NULL, 1, &e));
  ck_assert_int_eq(e.fault, MBS_EXPR_LIMIT);
  /* the red team's product of sines (4.5 kB): f' and f'' of the product rule */
  k = 0;
  for (int i = 0; i < 400; i++) {
    k += (size_t)snprintf(s + k, n - k, "%ssin(t+%d)", i ? "*" : "", i);
  }
  ex = mbs_expr_parse(s, NULL, NULL, 1, &e);
  ck_assert_ptr_nonnull(ex);
  double t = 0.3, der[2], v = mbs_expr_eval(ex, t, der, NULL), ref = 1.0, s1 = 0.0, s2 = 0.0;
  for (int i = 0; i < 400; i++) {
    ref *= sin(t + i);
    double c = 1.0 / tan(t + i);
    s1 += c;
    s2 += -1.0 - c * c; /* d/dt cot = -1 - cot^2 */
  }
  ck_assert_double_eq_tol(v, ref, 1e-12 * fabs(ref));
  ck_assert_double_eq_tol(der[0], ref * s1, 1e-9 * fabs(ref * s1));
  ck_assert_double_eq_tol(der[1], ref * (s1 * s1 + s2), 1e-9 * fabs(ref * (s1 * s1 + s2)));
  mbs_expr_destroy(ex);
  free(s);
}
END_TEST

Suite *expr_suite(void) {
  Suite *s = suite_create("expr");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_functions_and_derivatives);
  tcase_add_test(tc, test_grammar);
  tcase_add_test(tc, test_kinks);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_limits);
  suite_add_tcase(s, tc);
  return s;
}
