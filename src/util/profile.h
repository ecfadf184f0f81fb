/* profile.h: time profiles f(t) that scale loads and prescribed motions (docs/decks.md
 * "Profiles"): constant 1; window [t0, t1): 1 inside, 0 outside (the rectangular load of
 * seed 003 sec. 4.1); ramp: 0 before t0, linear to 1 at t1, 1 after; sine a sin(2 pi f t + p);
 * table: piecewise linear through (t_k, f_k), held constant outside. The deck reader
 * validates the parameters (t0 < t1, tables strictly increasing in t). */
#ifndef MBS_UTIL_PROFILE_H
#define MBS_UTIL_PROFILE_H

#include <stddef.h>

#include "mbsim/types.h"

/* f(t) of a profile of the given kind with parameters p (window, ramp: t0, t1; sine:
 * amplitude, frequency [Hz], phase [rad]) and, for tables, ntab points (t, f) in table;
 * the right derivative df/dt at t into *rate when rate is not NULL (0 at the jumps of a
 * window) */
double mbs_profile_eval(mbsProfileKind kind, const double p[3], const double *table, int ntab,
                        const mbsProfileExpr *ex, double t, double *rate);

/* an expression profile f(t) with its exact derivatives (util/expr.h: f' and f'' are
 * computed with f, right limits at the kinks of piecewise functions): NULL and a reason in
 * why when text is not an expression of t (parameters already replaced by their values) */
mbsProfileExpr *mbs_profile_expr_create(const char *text, char *why, size_t nwhy);
void mbs_profile_expr_destroy(mbsProfileExpr *ex);

/* the right second derivative d2f/dt2 at t (sine: -a (2 pi f)^2 sin(...); 0 for the
 * piecewise linear and piecewise constant kinds) */
double mbs_profile_accel(mbsProfileKind kind, const double p[3], const mbsProfileExpr *ex,
                         double t);

/* 1 if the profile has a kink or a jump (a point where its rate is discontinuous) in the
 * interval (a, b]: the ends of a window or ramp, every interior point of a table, a change
 * of branch of a piecewise function of an expression (abs, min, max, clamp, if, smoothstep) */
int mbs_profile_kink_in(mbsProfileKind kind, const double p[3], const double *table, int ntab,
                        const mbsProfileExpr *ex, double a, double b);

#endif
