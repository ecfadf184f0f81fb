/* expr.h: the expressions of a deck (docs/decks.md "Parameters and expressions",
 * "Profiles"), one engine for reading, evaluating and differentiating them.
 *
 * An expression is parsed once into a postfix program; evaluating it carries, with each
 * value, its first and second derivative with respect to t (forward-mode differentiation on
 * truncated Taylor series: exact to round-off, at the cost of one evaluation, whatever the
 * size of the symbolic derivative would be). Piecewise functions (abs, min, max, clamp, if,
 * smoothstep) choose their branch by the value and then by its derivatives, so at a kink
 * they take the branch that holds just after t: the value, rate and acceleration are the
 * right limits, never NaN. */
#ifndef MBS_UTIL_EXPR_H
#define MBS_UTIL_EXPR_H

#include <stddef.h>
#include <stdint.h>

/* the limits of one expression: its nodes (numbers, names, operators, function calls; a
 * 10,000-node expression costs about 0.1 ms to evaluate with its derivatives) and its
 * nesting (parentheses, calls, unary signs, chains of ^) */
#define MBS_EXPR_MAX_NODES 10000
#define MBS_EXPR_MAX_DEPTH 64

typedef struct mbsExpr mbsExpr;

typedef enum {
  MBS_EXPR_OK = 0,
  MBS_EXPR_SYNTAX,  /* not an expression of the grammar */
  MBS_EXPR_UNKNOWN, /* $name that the lookup does not know */
  MBS_EXPR_TIME,    /* t where the time is not allowed */
  MBS_EXPR_NUMBER,  /* a number with letters glued to it (0x1A, 2pi) */
  MBS_EXPR_LIMIT,   /* more than MBS_EXPR_MAX_NODES nodes or MBS_EXPR_MAX_DEPTH levels */
  MBS_EXPR_NOMEM
} mbsExprFault;

/* why a text is not an expression: the fault, the byte offset and length of the token at
 * fault in the text, and a message without position ("missing ')'") */
typedef struct {
  mbsExprFault fault;
  int pos, len;
  char msg[200];
} mbsExprError;

/* the value of the parameter $name (name without the $, len bytes): 0, or -1 when there is
 * none of that name */
typedef int (*mbsExprParam)(void *ctx, const char *name, int len, double *value);

/* parse text (NUL-terminated) into an expression: parameters are resolved through param
 * (may be NULL: every $name is unknown) and become constants; the time t is allowed when
 * allow_t is 1. Returns NULL with the reason in *e. The caller owns the result. */
mbsExpr *mbs_expr_parse(const char *text, mbsExprParam param, void *ctx, int allow_t,
                        mbsExprError *e);
void mbs_expr_destroy(mbsExpr *ex);
/* a copy of ex, or NULL when out of memory */
mbsExpr *mbs_expr_copy(const mbsExpr *ex);

/* 1 if the expression depends on t */
int mbs_expr_uses_t(const mbsExpr *ex);
/* its number of nodes */
int mbs_expr_size(const mbsExpr *ex);

/* f(t), with df/dt and d2f/dt2 (right limits at kinks) into der[0], der[1] when der is not
 * NULL; *branches (when not NULL) a hash of the branches the piecewise functions took, so
 * that two times with different hashes lie on different pieces. No allocation. */
double mbs_expr_eval(const mbsExpr *ex, double t, double der[2], uint64_t *branches);

#endif
