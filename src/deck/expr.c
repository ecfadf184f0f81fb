/* expr.c: numbers written as expressions of parameters ("$m * ($L^2 + 0.02^2) / 12",
 * "-$L", "2 * pi"), evaluated with muparser (Debian's libmuparser-dev, its C interface): a
 * maintained parser with the operator precedence, functions and error positions a deck needs,
 * where libmatheval lacks atan2, min and max.
 *
 * Grammar: + - * / ^ (right-associative, above unary minus: -2^2 = -4), parentheses, numbers,
 * $name of a parameter defined above, pi, and the functions sqrt sin cos tan asin acos atan
 * atan2 exp log (natural) abs min max (muparser's others, sinh ln log10 ..., work as well).
 * Only these characters may appear: muparser's assignment, comparison, ternary and comma
 * operators are refused before it sees them, and a list of values is not one number. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <muParserDLL.h>

#include "deck/deck_internal.h"

static muFloat_t f_atan2(muFloat_t y, muFloat_t x) {
  return atan2(y, x);
}

static muFloat_t f_log(muFloat_t x) {
  return log(x);
}

/* errors are read back with mupError; the handler only has to exist */
static void on_error(muParserHandle_t h) {
  (void)h;
}

static const char NAME_CHARS[] =
    "0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ$";

/* the reader's parser, created on first use with the parameters read so far */
static muParserHandle_t parser(DeckReader *r) {
  if (!r->expr) {
    muParserHandle_t h = mupCreate(muBASETYPE_FLOAT);
    if (!h) {
      return NULL;
    }
    mupSetErrorHandler(h, on_error);
    mupDefineNameChars(h, NAME_CHARS);
    mupDefineConst(h, "pi", 3.14159265358979323846);
    mupDefineFun2(h, "atan2", f_atan2, 1);
    mupDefineFun1(h, "log", f_log, 1);
    if (mupError(h)) {
      mupRelease(h);
      return NULL;
    }
    /* t: defined for profile expressions (deck_time_expression), refused elsewhere */
    mupDefineVar(h, "t", &r->expr_t);
    if (mupError(h)) {
      mupRelease(h);
      return NULL;
    }
    r->expr = h;
    r->expr_nvar = 0;
  }
  muParserHandle_t h = r->expr;
  /* parameters defined since the last call, as variables "$name" */
  for (; r->expr_nvar < r->nparam; r->expr_nvar++) {
    char name[MBS_NAME_MAX + 2];
    snprintf(name, sizeof(name), "$%s", r->params[r->expr_nvar].name);
    mupDefineVar(h, name, &r->params[r->expr_nvar].value);
    if (mupError(h)) {
      return NULL;
    }
  }
  return h;
}

void deck_expr_free(DeckReader *r) {
  if (r->expr) {
    mupRelease(r->expr);
    r->expr = NULL;
  }
}

/* the quoted token of a muparser message ("Unexpected token "$Lx" found at position 0.") */
static void quoted_token(const char *msg, char *tok, size_t n) {
  const char *a = strchr(msg, '"'), *b = a ? strchr(a + 1, '"') : NULL;
  tok[0] = '\0';
  if (a && b && (size_t)(b - a - 1) < n) {
    memcpy(tok, a + 1, (size_t)(b - a - 1));
    tok[b - a - 1] = '\0';
  }
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
  *plain_error = 0;
  /* the grammar's characters only */
  for (const char *c = s; *c; c++) {
    if (!strchr(NAME_CHARS, *c) && !strchr("+-*/^()., \t", *c)) {
      return deck_fail_at(r, n, (int)(c - s), "%s: '%c' is not part of an expression (got '%.64s')",
                          field, *c, s);
    }
  }
  muParserHandle_t h = parser(r);
  if (!h) {
    return deck_nomem(r);
  }
  mupSetExpr(h, s);
  int nres = 0;
  muFloat_t *res = mupEvalMulti(h, &nres);
  if (mupError(h)) {
    const char *msg = mupGetErrorMsg(h);
    int pos = mupGetErrorPos(h);
    char tok[128];
    quoted_token(msg, tok, sizeof(tok));
    if (tok[0] == '$') {
      /* an unknown parameter: the message with a suggestion */
      return deck_unknown_param(r, n, field, tok + 1, pos);
    }
    /* one word that is neither a number nor a name, or a number with letters glued to it
     * (0x1A): the plain "expected a number" */
    if ((tok[0] && !strcmp(tok, s)) ||
        (pos > 0 && pos < (int)strlen(s) && ((s[pos - 1] >= '0' && s[pos - 1] <= '9') ||
                                              s[pos - 1] == '.'))) {
      *plain_error = 1;
      return MBS_ERR_DECK;
    }
    /* muparser's message without its own position (the error has file:line:column) */
    char what[256];
    snprintf(what, sizeof(what), "%s", msg);
    char *cut = strstr(what, " found at position");
    if (!cut) {
      cut = strstr(what, " at position");
    }
    if (cut) {
      *cut = '\0';
    }
    return deck_fail_at(r, n, pos > 0 ? pos : 0, "%s: %s in the expression '%.64s'", field, what,
                        s);
  }
  if (nres != 1) {
    return deck_fail(r, n, "%s: the expression '%.64s' gives %d values, not one number", field, s,
                     nres);
  }
  if (!isfinite(res[0])) {
    return deck_fail(r, n, "%s: the expression '%.64s' is not a finite number (%g)", field, s,
                     res[0]);
  }
  /* mark the parameters it uses; t only where a profile allows it */
  int nv = mupGetExprVarNum(h);
  for (int k = 0; k < nv; k++) {
    const muChar_t *name = NULL;
    muFloat_t *ptr = NULL;
    mupGetExprVar(h, (unsigned)k, &name, &ptr);
    if (name && !strcmp(name, "t") && !r->expr_allow_t) {
      return deck_fail(r, n,
                       "%s: t is the time of a profile expression ({expression: ...}); here the "
                       "value is a number (got '%.64s')",
                       field, s);
    }
    int i = name && name[0] == '$' ? deck_names_get(&r->param_names, name + 1) : -1;
    if (i >= 0) {
      r->params[i].used = 1;
    }
  }
  *out = res[0];
  return MBS_OK;
}

mbsStatus deck_time_expression(DeckReader *r, const yaml_node_t *n, const char *field,
                               const char *s, double *f0) {
  int plain = 0;
  r->expr_allow_t = 1;
  r->expr_t = 0.0;
  mbsStatus st = deck_expression(r, n, field, s, f0, &plain);
  r->expr_allow_t = 0;
  if (plain) {
    return deck_fail(r, n, "%s: expected an expression of t (got '%.64s')", field, s);
  }
  return st;
}
