/* expr.c: the expression engine of decks (expr.h): a recursive-descent parser into a postfix
 * program, evaluated with its first and second time derivatives.
 *
 * Why our own engine and not a library: deck values and profiles need one grammar (that of
 * docs/decks.md: ^ right-associative and above unary minus), the piecewise functions of profiles
 * (min, max, clamp, if, smoothstep) with exact one-sided derivatives at their kinks, and
 * derivatives whose cost does not explode. Debian's libmuparser parses and evaluates but
 * does not differentiate; libmatheval differentiates symbolically but groups ^ from the left
 * (2^t^2 is (2^t)^2 there), has no atan2, min, max or conditional, gives NaN for the
 * derivative of abs at its kink, and its symbolic derivatives of long products grow
 * quadratically (a product of 149 sines: 564 MB). Two libraries meant two grammars. Here a
 * derivative costs what the value costs: each node computes the truncated Taylor series
 * (f, f', f'') of its value from its arguments' (forward-mode differentiation), exact to
 * round-off, in one pass over the program with a fixed stack and no allocation. */
#include "util/expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846
/* the evaluation stack: enough for MBS_EXPR_MAX_DEPTH levels of three-argument calls */
#define STACK_MAX (4 * MBS_EXPR_MAX_DEPTH + 8)

typedef enum {
  OP_CONST,
  OP_T,
  OP_NEG,
  OP_ADD,
  OP_SUB,
  OP_MUL,
  OP_DIV,
  OP_POW,
  OP_SQRT,
  OP_SIN,
  OP_COS,
  OP_TAN,
  OP_ASIN,
  OP_ACOS,
  OP_ATAN,
  OP_EXP,
  OP_LOG,
  OP_ABS,
  OP_ATAN2,
  OP_MIN,
  OP_MAX,
  OP_CLAMP,
  OP_IF,
  OP_SMOOTHSTEP
} Op;

/* the functions of the grammar: name, operation, arguments (at least, at most; -1: any
 * number, folded pairwise) */
static const struct {
  const char *name;
  Op op;
  int nmin, nmax;
} FUNCS[] = {
    {"sqrt", OP_SQRT, 1, 1},   {"sin", OP_SIN, 1, 1},
    {"cos", OP_COS, 1, 1},     {"tan", OP_TAN, 1, 1},
    {"asin", OP_ASIN, 1, 1},   {"acos", OP_ACOS, 1, 1},
    {"atan", OP_ATAN, 1, 1},   {"exp", OP_EXP, 1, 1},
    {"log", OP_LOG, 1, 1},     {"abs", OP_ABS, 1, 1},
    {"atan2", OP_ATAN2, 2, 2}, {"min", OP_MIN, 1, -1},
    {"max", OP_MAX, 1, -1},    {"clamp", OP_CLAMP, 3, 3},
    {"if", OP_IF, 3, 3},       {"smoothstep", OP_SMOOTHSTEP, 3, 3},
};
#define NFUNCS ((int)(sizeof(FUNCS) / sizeof(FUNCS[0])))
#define FUNC_LIST "sqrt sin cos tan asin acos atan atan2 exp log abs min max clamp if smoothstep"

typedef struct {
  unsigned char op;
  double c; /* OP_CONST: the value */
} Instr;

struct mbsExpr {
  Instr *code;
  int n, cap;
  int uses_t;
};

/* arguments each operation takes from the stack */
static int arity(Op op) {
  switch (op) {
    case OP_CONST:
    case OP_T:
      return 0;
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_DIV:
    case OP_POW:
    case OP_ATAN2:
    case OP_MIN:
    case OP_MAX:
      return 2;
    case OP_CLAMP:
    case OP_IF:
    case OP_SMOOTHSTEP:
      return 3;
    default:
      return 1;
  }
}

/* ---------------------------------------------------------------------------------------- */
/* parsing */

typedef struct {
  const char *s;
  const char *p; /* the next character */
  mbsExprParam param;
  void *ctx;
  int allow_t;
  int depth;
  mbsExpr *ex;
  mbsExprError *e;
} Parser;

static int is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c) {
  return c >= '0' && c <= '9';
}

static void skip_space(Parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') {
    ps->p++;
  }
}

/* the length of the token at p (for messages): a word, a number or one character */
static int token_len(const char *p) {
  int n = 0;
  if (*p == '$' || is_alpha(*p) || is_digit(*p) || *p == '.') {
    for (n = 1; is_alpha(p[n]) || is_digit(p[n]) || p[n] == '.'; n++) {
    }
    return n;
  }
  return *p ? 1 : 0;
}

static int fail(Parser *ps, mbsExprFault f, const char *at, int len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(Parser *ps, mbsExprFault f, const char *at, int len, const char *fmt, ...) {
  if (ps->e->fault != MBS_EXPR_OK) {
    return -1;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ps->e->msg, sizeof(ps->e->msg), fmt, ap);
  va_end(ap);
  ps->e->fault = f;
  ps->e->pos = (int)(at - ps->s);
  ps->e->len = len;
  return -1;
}

/* "the end" or "'tok'" for messages */
static void describe(char *buf, size_t n, const char *p) {
  if (!*p) {
    snprintf(buf, n, "the end");
  } else {
    snprintf(buf, n, "'%.*s'", token_len(p) > 32 ? 32 : token_len(p), p);
  }
}

static int emit(Parser *ps, Op op, double c) {
  mbsExpr *ex = ps->ex;
  if (ex->n >= MBS_EXPR_MAX_NODES) {
    return fail(ps, MBS_EXPR_LIMIT, ps->p, token_len(ps->p),
                "the expression has more than %d terms (numbers, names, operators and calls)",
                MBS_EXPR_MAX_NODES);
  }
  if (ex->n == ex->cap) {
    int cap = ex->cap ? 2 * ex->cap : 16;
    Instr *c2 = realloc(ex->code, (size_t)cap * sizeof(Instr));
    if (!c2) {
      return fail(ps, MBS_EXPR_NOMEM, ps->p, 0, "out of memory");
    }
    ex->code = c2;
    ex->cap = cap;
  }
  ex->code[ex->n].op = (unsigned char)op;
  ex->code[ex->n].c = c;
  ex->n++;
  if (op == OP_T) {
    ex->uses_t = 1;
  }
  return 0;
}

static int enter(Parser *ps) {
  if (++ps->depth > MBS_EXPR_MAX_DEPTH) {
    return fail(ps, MBS_EXPR_LIMIT, ps->p, token_len(ps->p),
                "the expression is nested deeper than %d levels", MBS_EXPR_MAX_DEPTH);
  }
  return 0;
}

static int parse_sum(Parser *ps);
static int parse_unary(Parser *ps);

/* a decimal number: digits [. digits] [e [+-] digits], or . digits; never hex, inf or nan */
static int parse_number(Parser *ps) {
  const char *a = ps->p, *q = a;
  while (is_digit(*q)) {
    q++;
  }
  if (*q == '.') {
    q++;
    while (is_digit(*q)) {
      q++;
    }
  }
  if (q == a + 1 && *a == '.') {
    return fail(ps, MBS_EXPR_SYNTAX, a, 1, "'.' is not a number");
  }
  if ((*q == 'e' || *q == 'E') &&
      (is_digit(q[1]) || ((q[1] == '+' || q[1] == '-') && is_digit(q[2])))) {
    q += 2;
    while (is_digit(*q)) {
      q++;
    }
  }
  if (is_alpha(*q) || is_digit(*q) || *q == '.' || *q == '$') {
    return fail(ps, MBS_EXPR_NUMBER, a, token_len(a), "'%.*s' is not a number",
                token_len(a) > 32 ? 32 : token_len(a), a);
  }
  char buf[400];
  if ((size_t)(q - a) >= sizeof(buf)) {
    return fail(ps, MBS_EXPR_SYNTAX, a, (int)(q - a), "a number of more than %d digits",
                (int)sizeof(buf) - 1);
  }
  memcpy(buf, a, (size_t)(q - a));
  buf[q - a] = '\0';
  double v = strtod(buf, NULL);
  ps->p = q;
  return emit(ps, OP_CONST, v);
}

/* name(args): the function's arguments, folded pairwise for min and max */
static int parse_call(Parser *ps, int f, const char *name_at) {
  int nargs = 0;
  const char *open = ps->p;
  ps->p++; /* ( */
  skip_space(ps);
  if (*ps->p == ')') {
    return fail(ps, MBS_EXPR_SYNTAX, name_at, (int)(ps->p + 1 - name_at),
                "%s takes %s%d argument%s, got none", FUNCS[f].name,
                FUNCS[f].nmax < 0 ? "at least " : "", FUNCS[f].nmin, FUNCS[f].nmin == 1 ? "" : "s");
  }
  for (;;) {
    if (parse_sum(ps)) {
      return -1;
    }
    nargs++;
    if (FUNCS[f].nmax < 0 && nargs >= 2 && emit(ps, FUNCS[f].op, 0.0)) {
      return -1;
    }
    skip_space(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == ')') {
      ps->p++;
      break;
    }
    char what[48];
    describe(what, sizeof(what), ps->p);
    return fail(ps, MBS_EXPR_SYNTAX, ps->p, token_len(ps->p),
                *ps->p ? "expected ',' or ')' in the arguments of %s, got %s"
                       : "missing ')' after the arguments of %s (got %s)",
                FUNCS[f].name, what);
  }
  (void)open;
  if (nargs < FUNCS[f].nmin || (FUNCS[f].nmax >= 0 && nargs > FUNCS[f].nmax)) {
    return fail(ps, MBS_EXPR_SYNTAX, name_at, (int)(ps->p - name_at),
                "%s takes %s%d argument%s, got %d", FUNCS[f].name,
                FUNCS[f].nmax < 0 ? "at least " : "", FUNCS[f].nmin, FUNCS[f].nmin == 1 ? "" : "s",
                nargs);
  }
  if (FUNCS[f].nmax >= 0) {
    return emit(ps, FUNCS[f].op, 0.0);
  }
  return 0;
}

/* a number, pi, t, $name, name(args) or (sum) */
static int parse_primary(Parser *ps) {
  skip_space(ps);
  const char *a = ps->p;
  if (is_digit(*a) || *a == '.') {
    return parse_number(ps);
  }
  if (*a == '(') {
    ps->p++;
    if (parse_sum(ps)) {
      return -1;
    }
    skip_space(ps);
    if (*ps->p != ')') {
      char what[48];
      describe(what, sizeof(what), ps->p);
      return fail(ps, MBS_EXPR_SYNTAX, *ps->p ? ps->p : a, *ps->p ? token_len(ps->p) : 1,
                  "missing ')' for the '(' at character %d (got %s)", (int)(a - ps->s) + 1, what);
    }
    ps->p++;
    return 0;
  }
  if (*a == '$') {
    const char *q = a + 1;
    while (is_alpha(*q) || is_digit(*q)) {
      q++;
    }
    int len = (int)(q - a - 1);
    double v = 0.0;
    if (len == 0 || is_digit(a[1])) {
      return fail(ps, MBS_EXPR_SYNTAX, a, len + 1, "'$' must be followed by a parameter name");
    }
    if (!ps->param || ps->param(ps->ctx, a + 1, len, &v) != 0) {
      return fail(ps, MBS_EXPR_UNKNOWN, a, len + 1, "unknown parameter '%.*s'",
                  len + 1 > 64 ? 64 : len + 1, a);
    }
    ps->p = q;
    return emit(ps, OP_CONST, v);
  }
  if (is_alpha(*a)) {
    const char *q = a;
    while (is_alpha(*q) || is_digit(*q)) {
      q++;
    }
    int len = (int)(q - a);
    ps->p = q;
    if (len == 2 && !strncmp(a, "pi", 2)) {
      return emit(ps, OP_CONST, PI);
    }
    if (len == 1 && *a == 't') {
      if (!ps->allow_t) {
        return fail(ps, MBS_EXPR_TIME, a, 1, "t is the time of a profile expression");
      }
      return emit(ps, OP_T, 0.0);
    }
    for (int f = 0; f < NFUNCS; f++) {
      if ((int)strlen(FUNCS[f].name) == len && !strncmp(a, FUNCS[f].name, (size_t)len)) {
        skip_space(ps);
        if (*ps->p != '(') {
          return fail(ps, MBS_EXPR_SYNTAX, a, len, "%s is a function: write %s(...)", FUNCS[f].name,
                      FUNCS[f].name);
        }
        return parse_call(ps, f, a);
      }
    }
    skip_space(ps);
    if (*ps->p == '(') {
      return fail(ps, MBS_EXPR_SYNTAX, a, len,
                  "unknown function '%.*s' (the functions are " FUNC_LIST ")", len > 64 ? 64 : len,
                  a);
    }
    return fail(ps, MBS_EXPR_SYNTAX, a, len,
                "unknown name '%.*s' (a parameter is written $name; the names are pi%s)",
                len > 64 ? 64 : len, a, ps->allow_t ? " and t" : "");
  }
  char what[48];
  describe(what, sizeof(what), a);
  if (*a && !strchr("+-*/^(),", *a)) {
    return fail(ps, MBS_EXPR_SYNTAX, a, 1, "'%c' is not part of an expression", *a);
  }
  return fail(ps, MBS_EXPR_SYNTAX, a, token_len(a), "expected a number, a name or '(', got %s",
              what);
}

/* primary [^ unary]: right-associative, and the exponent may carry a sign (2^-1) */
static int parse_power(Parser *ps) {
  if (parse_primary(ps)) {
    return -1;
  }
  skip_space(ps);
  if (*ps->p == '^') {
    ps->p++;
    if (enter(ps) || parse_unary(ps)) {
      return -1;
    }
    ps->depth--;
    return emit(ps, OP_POW, 0.0);
  }
  return 0;
}

/* [+-] unary | power: the sign binds below ^, so -2^2 = -(2^2) */
static int parse_unary(Parser *ps) {
  skip_space(ps);
  if (*ps->p == '-' || *ps->p == '+') {
    int neg = *ps->p == '-';
    ps->p++;
    if (enter(ps) || parse_unary(ps)) {
      return -1;
    }
    ps->depth--;
    return neg ? emit(ps, OP_NEG, 0.0) : 0;
  }
  return parse_power(ps);
}

static int parse_term(Parser *ps) {
  if (parse_unary(ps)) {
    return -1;
  }
  for (;;) {
    skip_space(ps);
    char c = *ps->p;
    if (c != '*' && c != '/') {
      return 0;
    }
    ps->p++;
    if (parse_unary(ps) || emit(ps, c == '*' ? OP_MUL : OP_DIV, 0.0)) {
      return -1;
    }
  }
}

static int parse_sum(Parser *ps) {
  if (enter(ps) || parse_term(ps)) {
    return -1;
  }
  for (;;) {
    skip_space(ps);
    char c = *ps->p;
    if (c != '+' && c != '-') {
      break;
    }
    ps->p++;
    if (parse_term(ps) || emit(ps, c == '+' ? OP_ADD : OP_SUB, 0.0)) {
      return -1;
    }
  }
  ps->depth--;
  return 0;
}

/* the largest evaluation stack the program needs */
static int stack_need(const mbsExpr *ex) {
  int sp = 0, mx = 0;
  for (int i = 0; i < ex->n; i++) {
    sp += 1 - arity((Op)ex->code[i].op);
    mx = sp > mx ? sp : mx;
  }
  return mx;
}

mbsExpr *mbs_expr_parse(const char *text, mbsExprParam param, void *ctx, int allow_t,
                        mbsExprError *e) {
  memset(e, 0, sizeof(*e));
  Parser ps = {text, text, param, ctx, allow_t, 0, NULL, e};
  mbsExpr *ex = calloc(1, sizeof(*ex));
  if (!ex) {
    fail(&ps, MBS_EXPR_NOMEM, text, 0, "out of memory");
    return NULL;
  }
  ps.ex = ex;
  if (parse_sum(&ps) == 0) {
    skip_space(&ps);
    if (*ps.p) {
      char what[48];
      describe(what, sizeof(what), ps.p);
      if (*ps.p == ')') {
        fail(&ps, MBS_EXPR_SYNTAX, ps.p, 1, "')' without a '(' before it");
      } else if (!strchr("+-*/^(),$_.", *ps.p) && !is_alpha(*ps.p) && !is_digit(*ps.p)) {
        fail(&ps, MBS_EXPR_SYNTAX, ps.p, 1, "'%c' is not part of an expression", *ps.p);
      } else {
        fail(&ps, MBS_EXPR_SYNTAX, ps.p, token_len(ps.p),
             "expected an operator (+ - * / ^) or the end, got %s", what);
      }
    } else if (stack_need(ex) > STACK_MAX) {
      fail(&ps, MBS_EXPR_LIMIT, text, 0, "the expression is nested too deeply to evaluate");
    }
  }
  if (e->fault != MBS_EXPR_OK) {
    mbs_expr_destroy(ex);
    return NULL;
  }
  return ex;
}

void mbs_expr_destroy(mbsExpr *ex) {
  if (ex) {
    free(ex->code);
    free(ex);
  }
}

mbsExpr *mbs_expr_copy(const mbsExpr *ex) {
  mbsExpr *c = calloc(1, sizeof(*c));
  if (!c) {
    return NULL;
  }
  *c = *ex;
  c->cap = ex->n > 0 ? ex->n : 1;
  c->code = malloc((size_t)c->cap * sizeof(Instr));
  if (!c->code) {
    free(c);
    return NULL;
  }
  memcpy(c->code, ex->code, (size_t)ex->n * sizeof(Instr));
  return c;
}

int mbs_expr_uses_t(const mbsExpr *ex) {
  return ex->uses_t;
}

int mbs_expr_size(const mbsExpr *ex) {
  return ex->n;
}

/* ---------------------------------------------------------------------------------------- */
/* evaluation on truncated Taylor series: a jet (f, f', f'') per value */

typedef struct {
  double v, d, dd;
} Jet;

static Jet jet(double v, double d, double dd) {
  Jet j = {v, d, dd};
  return j;
}

static Jet jsub(Jet a, Jet b) {
  return jet(a.v - b.v, a.d - b.d, a.dd - b.dd);
}

static Jet jmul(Jet a, Jet b) {
  return jet(a.v * b.v, a.d * b.v + a.v * b.d, a.dd * b.v + 2.0 * a.d * b.d + a.v * b.dd);
}

static Jet jdiv(Jet a, Jet b) {
  double q = a.v / b.v;
  double q1 = (a.d - q * b.d) / b.v;
  return jet(q, q1, (a.dd - 2.0 * q1 * b.d - q * b.dd) / b.v);
}

/* g(a) for a scalar function with g' = g1, g'' = g2 at a.v (chain rule) */
static Jet chain(Jet a, double g, double g1, double g2) {
  return jet(g, g1 * a.d, g2 * a.d * a.d + g1 * a.dd);
}

/* a^n for a constant n: the power rule, with the terms whose factor is zero left out (so
 * that a^1 and a^2 stay finite at a = 0) */
static Jet jpow_const(Jet a, double n) {
  if (n == 0.0) {
    return jet(pow(a.v, 0.0), 0.0, 0.0);
  }
  double f = pow(a.v, n);
  double d = a.d != 0.0 ? n * pow(a.v, n - 1.0) * a.d : 0.0;
  double dd = 0.0;
  if (a.dd != 0.0) {
    dd += n * pow(a.v, n - 1.0) * a.dd;
  }
  if (a.d != 0.0 && n != 1.0) {
    dd += n * (n - 1.0) * pow(a.v, n - 2.0) * a.d * a.d;
  }
  return jet(f, d, dd);
}

/* x^2 + y^2 */
static Jet jadd_sq(Jet x, Jet y) {
  Jet a = jmul(x, x), b = jmul(y, y);
  return jet(a.v + b.v, a.d + b.d, a.dd + b.dd);
}

static Jet jlog(Jet a) {
  double r = a.d / a.v;
  return jet(log(a.v), r, a.dd / a.v - r * r);
}

static Jet jexp(Jet a) {
  double f = exp(a.v);
  return jet(f, f * a.d, f * (a.dd + a.d * a.d));
}

/* a^b: the power rule for a constant exponent (negative bases with integer exponents
 * work), else exp(b log a) */
static Jet jpow(Jet a, Jet b) {
  if (b.d == 0.0 && b.dd == 0.0) {
    return jpow_const(a, b.v);
  }
  if (a.v == 0.0 && a.d == 0.0 && a.dd == 0.0 && b.v > 0.0) {
    return jet(0.0, 0.0, 0.0);
  }
  Jet f = jexp(jmul(b, jlog(a)));
  f.v = pow(a.v, b.v);
  return f;
}

/* the sign of a jet: of its value, else of its first derivative, else of its second (the
 * sign just after t); 0 for a zero jet or NaN */
static int jsign(Jet a) {
  if (a.v != 0.0) {
    return a.v > 0.0 ? 1 : (a.v < 0.0 ? -1 : 0);
  }
  if (a.d != 0.0) {
    return a.d > 0.0 ? 1 : (a.d < 0.0 ? -1 : 0);
  }
  return a.dd > 0.0 ? 1 : (a.dd < 0.0 ? -1 : 0);
}

static int jnan(Jet a) {
  return isnan(a.v) || isnan(a.d) || isnan(a.dd);
}

static const Jet JNAN = {NAN, NAN, NAN};

/* the branch hash: FNV-1a over the choices, in program order */
static void branch(uint64_t *h, int choice) {
  *h = (*h ^ (uint64_t)(unsigned)choice) * 1099511628211ull;
}

/* min (lo = 1) or max (lo = 0) of two jets: the one that is smaller (larger) just after t */
static Jet jminmax(Jet a, Jet b, int lo, uint64_t *h) {
  if (jnan(a) || jnan(b)) {
    return JNAN;
  }
  int s = jsign(jsub(a, b));
  int take_a = lo ? s <= 0 : s >= 0;
  branch(h, take_a ? 1 : 2);
  return take_a ? a : b;
}

double mbs_expr_eval(const mbsExpr *ex, double t, double der[2], uint64_t *branches) {
  Jet st[STACK_MAX];
  int sp = 0;
  uint64_t h = 14695981039346656037ull;
  for (int i = 0; i < ex->n; i++) {
    Op op = (Op)ex->code[i].op;
    int na = arity(op);
    Jet *a = &st[sp - na], r;
    switch (op) {
      case OP_CONST:
        r = jet(ex->code[i].c, 0.0, 0.0);
        break;
      case OP_T:
        r = jet(t, 1.0, 0.0);
        break;
      case OP_NEG:
        r = jet(-a[0].v, -a[0].d, -a[0].dd);
        break;
      case OP_ADD:
        r = jet(a[0].v + a[1].v, a[0].d + a[1].d, a[0].dd + a[1].dd);
        break;
      case OP_SUB:
        r = jsub(a[0], a[1]);
        break;
      case OP_MUL:
        r = jmul(a[0], a[1]);
        break;
      case OP_DIV:
        r = jdiv(a[0], a[1]);
        break;
      case OP_POW:
        r = jpow(a[0], a[1]);
        break;
      case OP_SQRT: {
        double f = sqrt(a[0].v);
        r = chain(a[0], f, 0.5 / f, -0.25 / (f * a[0].v));
        break;
      }
      case OP_SIN:
        r = chain(a[0], sin(a[0].v), cos(a[0].v), -sin(a[0].v));
        break;
      case OP_COS:
        r = chain(a[0], cos(a[0].v), -sin(a[0].v), -cos(a[0].v));
        break;
      case OP_TAN: {
        double f = tan(a[0].v), s2 = 1.0 + f * f;
        r = chain(a[0], f, s2, 2.0 * f * s2);
        break;
      }
      case OP_ASIN:
      case OP_ACOS: {
        double x = a[0].v, w = 1.0 / sqrt(1.0 - x * x), sg = op == OP_ASIN ? 1.0 : -1.0;
        r = chain(a[0], op == OP_ASIN ? asin(x) : acos(x), sg * w, sg * x * w * w * w);
        break;
      }
      case OP_ATAN: {
        double x = a[0].v, w = 1.0 / (1.0 + x * x);
        r = chain(a[0], atan(x), w, -2.0 * x * w * w);
        break;
      }
      case OP_EXP:
        r = jexp(a[0]);
        break;
      case OP_LOG:
        r = jlog(a[0]);
        break;
      case OP_ABS: {
        if (jnan(a[0])) {
          r = JNAN;
          break;
        }
        int neg = jsign(a[0]) < 0;
        branch(&h, neg ? 1 : 2);
        r = neg ? jet(-a[0].v, -a[0].d, -a[0].dd) : a[0];
        break;
      }
      case OP_ATAN2: {
        /* atan2(y, x): f' = (x y' - y x') / (x^2 + y^2) */
        Jet y = a[0], x = a[1];
        Jet num = jsub(jmul(x, jet(y.d, y.dd, 0.0)), jmul(y, jet(x.d, x.dd, 0.0)));
        Jet den = jadd_sq(x, y);
        Jet q = jdiv(num, den);
        r = jet(atan2(y.v, x.v), q.v, q.d);
        break;
      }
      case OP_MIN:
      case OP_MAX:
        r = jminmax(a[0], a[1], op == OP_MIN, &h);
        break;
      case OP_CLAMP:
        r = jminmax(jminmax(a[0], a[1], 0, &h), a[2], 1, &h);
        break;
      case OP_IF: {
        if (jnan(a[0])) {
          r = JNAN;
          break;
        }
        int yes = jsign(a[0]) > 0;
        branch(&h, yes ? 1 : 2);
        r = yes ? a[1] : a[2];
        break;
      }
      case OP_SMOOTHSTEP: {
        /* smoothstep(e0, e1, x): u = clamp((x - e0) / (e1 - e0), 0, 1), u^2 (3 - 2 u); e0 = e1
         * is a step at e0 */
        Jet w = jsub(a[1], a[0]), x0 = jsub(a[2], a[0]);
        if (jnan(w) || jnan(x0)) {
          r = JNAN;
          break;
        }
        if (w.v == 0.0) {
          int up = jsign(x0) >= 0;
          branch(&h, up ? 3 : 1);
          r = jet(up ? 1.0 : 0.0, 0.0, 0.0);
          break;
        }
        Jet u = jdiv(x0, w);
        int below = jsign(u)<0, above = jsign(jsub(u, jet(1.0, 0.0, 0.0)))> 0;
        branch(&h, below ? 1 : (above ? 3 : 2));
        if (below || above) {
          r = jet(below ? 0.0 : 1.0, 0.0, 0.0);
        } else {
          double g1 = 6.0 * u.v * (1.0 - u.v), g2 = 6.0 - 12.0 * u.v;
          r = chain(u, u.v * u.v * (3.0 - 2.0 * u.v), g1, g2);
        }
        break;
      }
      default:
        r = JNAN;
        break;
    }
    sp -= na;
    st[sp++] = r;
  }
  if (der) {
    der[0] = st[0].d;
    der[1] = st[0].dd;
  }
  if (branches) {
    *branches = h;
  }
  return st[0].v;
}
