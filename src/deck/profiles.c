/* profiles.c: time profiles f(t) of loads and prescribed motions (docs/decks.md "Profiles"):
 * constant, window, ramp, sine, table and expression, validated (t0 < t1, tables strictly
 * increasing in t, expressions of t that can be differentiated). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"
#include "util/profile.h"

/* ---------------------------------------------------------------------------------------- */
/* profiles (docs/decks.md "Profiles") */

/* [t0, t1] with t0 < t1 */
static mbsStatus profile_interval(DeckReader *r, yaml_node_t *n, const char *field, double p[3]) {
  mbsStatus st;
  char f[160];
  if ((st = deck_pair_list(r, n, field, "[t0, t1]")) != MBS_OK) {
    return st;
  }
  snprintf(f, sizeof(f), "%.100s[0]", field);
  if ((st = deck_number(r, deck_item(r, n, 0), f, &p[0])) != MBS_OK) {
    return st;
  }
  snprintf(f, sizeof(f), "%.100s[1]", field);
  if ((st = deck_number(r, deck_item(r, n, 1), f, &p[1])) != MBS_OK) {
    return st;
  }
  if (!(p[1] > p[0])) {
    return deck_fail(r, n, "%s: t1 = %g must be greater than t0 = %g", field, p[1], p[0]);
  }
  return MBS_OK;
}

/* {amplitude, frequency, phase}: amplitude and frequency required, phase default 0 */
static mbsStatus profile_sine(DeckReader *r, yaml_node_t *n, const char *field, double p[3]) {
  static const char *const sine_keys[] = {"amplitude", "frequency", "phase", NULL};
  DeckMap m = {0};
  char f[160];
  mbsStatus st;
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "%s: expected a mapping {amplitude, frequency, phase}, got %s", field,
                     deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK ||
      (st = deck_check_keys(r, &m, field, sine_keys, NULL)) != MBS_OK) {
    goto fail;
  }
  for (int k = 0; k < 3; k++) {
    yaml_node_t *v = deck_map_get(&m, sine_keys[k]);
    snprintf(f, sizeof(f), "%.100s.%s", field, sine_keys[k]);
    if (!v && k < 2) {
      st = deck_fail(r, n, "%s: missing required key '%s'", field, sine_keys[k]);
      goto fail;
    }
    p[k] = 0.0;
    if (v && (st = deck_number(r, v, f, &p[k])) != MBS_OK) {
      goto fail;
    }
  }
fail:
  deck_map_free(&m);
  return st;
}

/* [[t, f], ...]: at least one point, strictly increasing in t */
static mbsStatus profile_table(DeckReader *r, yaml_node_t *n, const char *field,
                               mbsDeckProfile *p) {
  char f[160];
  mbsStatus st;
  if (n->type != YAML_SEQUENCE_NODE || deck_count(n) < 1) {
    return deck_fail(r, n, "%s: expected a list of points [[t, f], ...], got %s", field,
                     n->type == YAML_SEQUENCE_NODE ? "an empty list" : deck_kind(n));
  }
  int np = deck_count(n);
  if (!(p->table = malloc((size_t)np * 2 * sizeof(double)))) {
    return deck_nomem(r);
  }
  p->ntab = np;
  for (int k = 0; k < np; k++) {
    yaml_node_t *pt = deck_item(r, n, k);
    snprintf(f, sizeof(f), "%.100s[%d]", field, k);
    if ((st = deck_pair_list(r, pt, f, "a point [t, f]")) != MBS_OK) {
      return st;
    }
    snprintf(f, sizeof(f), "%.100s[%d][0]", field, k);
    if ((st = deck_number(r, deck_item(r, pt, 0), f, &p->table[2 * k])) != MBS_OK) {
      return st;
    }
    snprintf(f, sizeof(f), "%.100s[%d][1]", field, k);
    if ((st = deck_number(r, deck_item(r, pt, 1), f, &p->table[2 * k + 1])) != MBS_OK) {
      return st;
    }
    if (k > 0 && !(p->table[2 * k] > p->table[2 * k - 2])) {
      return deck_fail(r, pt,
                       "%s[%d]: t = %g must be greater than the previous t = %g (a table "
                       "increases in t)",
                       field, k, p->table[2 * k], p->table[2 * k - 2]);
    }
  }
  return MBS_OK;
}

/* {expression: "f(t)"}: the text with $parameters replaced by their values, checked by the
 * deck's expression parser (located errors) with t defined, then differentiated exactly */
static mbsStatus profile_expression(DeckReader *r, yaml_node_t *n, const char *field,
                                    mbsDeckProfile *p) {
  const char *s = deck_text(n);
  if (!s || n->type != YAML_SCALAR_NODE || deck_is_null(n)) {
    return deck_fail(r, n, "%s: expected an expression of t (a string), got %s", field,
                     deck_kind(n));
  }
  double f0;
  mbsStatus st = deck_time_expression(r, n, field, s, &f0);
  if (st != MBS_OK) {
    return st;
  }
  /* $name -> (value) */
  size_t cap = strlen(s) * 4 + 64, k = 0;
  char *out = malloc(cap);
  if (!out) {
    return deck_nomem(r);
  }
  for (const char *c = s; *c;) {
    if (*c == '$') {
      const char *e = c + 1;
      while ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9') ||
             *e == '_') {
        e++;
      }
      char name[MBS_NAME_MAX];
      snprintf(name, sizeof(name), "%.*s", (int)(e - c - 1), c + 1);
      int i = deck_names_get(&r->param_names, name);
      double v = i >= 0 ? r->params[i].value : 0.0;
      if (k + 40 >= cap) {
        char *bigger = realloc(out, cap *= 2);
        if (!bigger) {
          free(out);
          return deck_nomem(r);
        }
        out = bigger;
      }
      k += (size_t)snprintf(out + k, cap - k, "(%.17g)", v);
      c = e;
    } else {
      if (k + 2 >= cap) {
        char *bigger = realloc(out, cap *= 2);
        if (!bigger) {
          free(out);
          return deck_nomem(r);
        }
        out = bigger;
      }
      out[k++] = *c++;
    }
  }
  out[k] = '\0';
  char why[256];
  p->ev = mbs_profile_expr_create(out, why, sizeof(why));
  if (!p->ev) {
    free(out);
    return deck_fail(r, n, "%s: '%.64s': %s", field, s, why);
  }
  p->expr = out;
  return MBS_OK;
}

/* `constant` or a mapping with one key: {window: [t0, t1]}, {ramp: [t0, t1]},
 * {sine: {amplitude, frequency, phase}}, {table: [[t, f], ...]}; on failure p->table is
 * released */
mbsStatus deck_read_profile(DeckReader *r, yaml_node_t *n, const char *field, mbsDeckProfile *p) {
  static const char *const want = "constant, {window: [t0, t1]}, {ramp: [t0, t1]}, {sine: "
                                  "{amplitude, frequency, phase}}, {table: [[t, f], ...]} or "
                                  "{expression: \"f(t)\"}";
  DeckMap m = {0};
  char f[160];
  int t;
  mbsStatus st = MBS_OK;

  memset(p, 0, sizeof(*p));
  p->kind = MBS_PROFILE_CONSTANT;
  if (n->type == YAML_SCALAR_NODE) {
    if (deck_text_is(n, "constant")) {
      return MBS_OK;
    }
    for (t = 1; t < MBS_PROFILE_COUNT; t++) {
      if (deck_text_is(n, mbs_profile_words[t])) {
        return deck_fail(r, n, "%s: the %s profile needs parameters, e.g. {%s: ...}", field,
                         mbs_profile_words[t], mbs_profile_words[t]);
      }
    }
    return deck_fail(r, n, "%s: expected %s", field, want);
  }
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "%s: expected %s, got %s", field, want, deck_kind(n));
  }
  if ((st = deck_map_flatten(r, n, &m)) != MBS_OK) {
    return st;
  }
  if (m.n != 1) {
    st = deck_fail(r, n,
                   "%s: expected one profile (a mapping with one key: window, ramp, sine, "
                   "table or expression), got %d keys",
                   field, m.n);
    goto fail;
  }
  if ((st = deck_word(r, m.kv[0].key, field, "profile", mbs_profile_words, MBS_PROFILE_COUNT,
                      &t)) != MBS_OK) {
    goto fail;
  }
  p->kind = (mbsProfileKind)t;
  snprintf(f, sizeof(f), "%.100s.%s", field, mbs_profile_words[t]);
  yaml_node_t *v = m.kv[0].value;
  switch (p->kind) {
    case MBS_PROFILE_CONSTANT:
      st = deck_fail(r, m.kv[0].key, "%s: write `constant` without parameters", field);
      break;
    case MBS_PROFILE_WINDOW:
    case MBS_PROFILE_RAMP:
      st = profile_interval(r, v, f, p->p);
      break;
    case MBS_PROFILE_SINE:
      st = profile_sine(r, v, f, p->p);
      break;
    case MBS_PROFILE_TABLE:
      st = profile_table(r, v, f, p);
      break;
    case MBS_PROFILE_EXPRESSION:
      st = profile_expression(r, v, f, p);
      break;
    case MBS_PROFILE_COUNT:
      break;
  }
fail:
  deck_map_free(&m);
  if (st != MBS_OK) {
    free(p->table);
    p->table = NULL;
    p->ntab = 0;
    free(p->expr);
    p->expr = NULL;
    mbs_profile_expr_destroy(p->ev);
    p->ev = NULL;
  }
  return st;
}

/* value x profile(t) of a deck profile at t (the deck only needs t = 0) */
double deck_profile_at(const mbsDeckProfile *p, double t, double *rate) {
  return mbs_profile_eval(p->kind, p->p, p->table, p->ntab, p->ev, t, rate);
}

