/* scalars.c: scalar nodes to values (numbers, integers, booleans, words, vectors, 3x3
 * matrices), $parameters, key checks with "did you mean" suggestions, and the error helpers
 * that give every message its file:line:col and the entry it is about. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* messages */

void deck_node_pos(const yaml_node_t *n, int *line, int *col) {
  /* libyaml marks are 0-based, ours 1-based; nodes made by --set have no position */
  if (!n || n->start_mark.index == DECK_SET_MARK) {
    *line = 0;
    *col = 0;
    return;
  }
  *line = (int)n->start_mark.line + 1;
  *col = (int)n->start_mark.column + 1;
}

static mbsStatus vfail(DeckReader *r, const yaml_node_t *n, int prefix, int offset,
                       const char *fmt, va_list ap) {
  char msg[MBS_ERROR_MSG_MAX];
  size_t k = 0;
  int line, col;

  /* "<entry>: <problem>" */
  msg[0] = '\0';
  if (prefix && r->ctx[0]) {
    int w = snprintf(msg, sizeof(msg), "%s: ", r->ctx);
    k = w > 0 ? (size_t)w : 0;
  }
  if (k < sizeof(msg)) {
    vsnprintf(msg + k, sizeof(msg) - k, fmt, ap);
  }

  /* a value that came from --set has no position: say where it came from instead */
  if (n && n->start_mark.index == DECK_SET_MARK && n->start_mark.column < (size_t)r->noverride) {
    const mbsOverride *ov = &r->overrides[n->start_mark.column];
    size_t used = strlen(msg);
    snprintf(msg + used, sizeof(msg) - used, " (from --set %s=%s)", ov->path, ov->value);
  }
  deck_node_pos(n, &line, &col);
  /* a position inside the scalar: past the opening quote of a quoted one; only on its first
   * line (a folded scalar's columns would not add up) */
  if (offset >= 0 && n && n->type == YAML_SCALAR_NODE && n->start_mark.index != DECK_SET_MARK &&
      n->start_mark.line == n->end_mark.line) {
    int quoted = n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                 n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    col += offset + quoted;
  }
  return mbs_error_set(r->err, MBS_ERR_DECK, r->file, line, col, "%s", msg);
}

mbsStatus deck_fail(DeckReader *r, const yaml_node_t *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mbsStatus st = vfail(r, n, 1, -1, fmt, ap);
  va_end(ap);
  return st;
}

mbsStatus deck_fail_at(DeckReader *r, const yaml_node_t *n, int offset, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mbsStatus st = vfail(r, n, 1, offset, fmt, ap);
  va_end(ap);
  return st;
}

mbsStatus deck_fail_bare(DeckReader *r, const yaml_node_t *n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mbsStatus st = vfail(r, n, 0, -1, fmt, ap);
  va_end(ap);
  return st;
}

void deck_warn(DeckReader *r, const yaml_node_t *n, const char *fmt, ...) {
  char msg[512];
  int line, col;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  deck_node_pos(n, &line, &col);
  char full[1400];
  int len = snprintf(full, sizeof(full), "%s:%d:%d: %s%s%s\n", r->file ? r->file : "", line, col,
                     r->ctx[0] ? r->ctx : "", r->ctx[0] ? ": " : "", msg);
  if (len <= 0 || r->nwarn >= DECK_MAX_WARNINGS) {
    return;
  }
  size_t k = (size_t)len < sizeof(full) ? (size_t)len : sizeof(full) - 1;
  char *w = realloc(r->warnings, r->warn_len + k + 1);
  if (!w) {
    return; /* a warning lost to memory shortage is not an error */
  }
  memcpy(w + r->warn_len, full, k);
  r->warn_len += k;
  w[r->warn_len] = '\0';
  r->warnings = w;
  r->nwarn++;
}

void deck_warn_turn(DeckReader *r, const yaml_node_t *n, const char *key, double angle,
                    const char *deg_key, double written) {
  /* 2 pi to the last digit: a full turn itself is no mistake */
  if (fabs(angle) > 6.283185307179586) {
    deck_warn(r, n,
              "%s %g rad is more than a turn (%.2f turns); did you mean %s: %g? (if radians are "
              "meant, write %s: %.10g: an angle in degrees is taken as written, without this "
              "warning)",
              key, angle, angle / 6.283185307179586, deg_key, written, deg_key,
              written * (180.0 / 3.141592653589793));
  }
}

mbsStatus deck_nomem(DeckReader *r) {
  return mbs_error_set(r->err, MBS_ERR_NOMEM, r->file, 0, 0, "out of memory");
}

/* edit distance between two short words (longer ones never match) */
static int levenshtein(const char *a, const char *b) {
  enum { MAXLEN = 64 };
  size_t na = strlen(a), nb = strlen(b);
  int row[MAXLEN + 1];
  if (na > MAXLEN || nb > MAXLEN) {
    return INT_MAX / 2;
  }
  for (size_t j = 0; j <= nb; j++) {
    row[j] = (int)j;
  }
  for (size_t i = 1; i <= na; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= nb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) {
        best = up + 1;
      }
      if (row[j - 1] + 1 < best) {
        best = row[j - 1] + 1;
      }
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

const char *deck_nearest(const char *word, const char *const *cands, int n) {
  const char *best = NULL;
  int bestd = INT_MAX;
  int len = (int)strlen(word);

  /* n < 0: cands is NULL-terminated */
  for (int i = 0; n < 0 ? cands[i] != NULL : i < n; i++) {
    int d = levenshtein(word, cands[i]);
    if (d < bestd) {
      bestd = d;
      best = cands[i];
    }
  }
  /* close enough to be a typo, and not a complete rewrite of a short word */
  int limit = len / 3 > 2 ? len / 3 : 2;
  if (best && bestd <= limit && bestd < len) {
    return best;
  }
  return NULL;
}

/* ", "-separated list of words into buf */
static void join_words(char *buf, size_t cap, const char *const *words, int n) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; n < 0 ? words[i] != NULL : i < n; i++) {
    int w = snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", words[i]);
    if (w < 0 || (size_t)w >= cap - k) {
      break;
    }
    k += (size_t)w;
  }
}

/* ---------------------------------------------------------------------------------------- */
/* scalar text */

const char *deck_text(const yaml_node_t *n) {
  if (!n || n->type != YAML_SCALAR_NODE) {
    return NULL;
  }
  /* a scalar with an embedded NUL (from "\0") is not text we can use */
  const char *s = (const char *)n->data.scalar.value;
  if (strlen(s) != n->data.scalar.length) {
    return NULL;
  }
  return s;
}

int deck_text_is(const yaml_node_t *n, const char *s) {
  const char *t = deck_text(n);
  return t && strcmp(t, s) == 0;
}

int deck_is_null(const yaml_node_t *n) {
  const char *t = deck_text(n);
  if (!t || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
    return 0;
  }
  return !strcmp(t, "") || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") ||
         !strcmp(t, "NULL");
}

const char *deck_kind(const yaml_node_t *n) {
  if (!n) {
    return "nothing";
  }
  switch (n->type) {
    case YAML_MAPPING_NODE:
      return "a mapping";
    case YAML_SEQUENCE_NODE:
      return "a list";
    case YAML_SCALAR_NODE:
      return deck_is_null(n) ? "an empty value" : "a scalar";
    default:
      return "nothing";
  }
}

/* ---------------------------------------------------------------------------------------- */
/* numbers */

/* decimal numbers only: [+-] digits [. digits] [(e|E) [+-] digits]; no hex, no inf/nan */
static int real_syntax(const char *s) {
  size_t i = 0, nd = 0;
  if (s[i] == '+' || s[i] == '-') {
    i++;
  }
  while (s[i] >= '0' && s[i] <= '9') {
    i++;
    nd++;
  }
  if (s[i] == '.') {
    i++;
    while (s[i] >= '0' && s[i] <= '9') {
      i++;
      nd++;
    }
  }
  if (nd == 0) {
    return 0;
  }
  if (s[i] == 'e' || s[i] == 'E') {
    size_t ne = 0;
    i++;
    if (s[i] == '+' || s[i] == '-') {
      i++;
    }
    while (s[i] >= '0' && s[i] <= '9') {
      i++;
      ne++;
    }
    if (ne == 0) {
      return 0;
    }
  }
  return s[i] == '\0';
}

/* inf, .inf, -Infinity, nan, .NaN, ... */
static int nonfinite_word(const char *s) {
  char low[16];
  size_t k = 0;
  if (*s == '+' || *s == '-') {
    s++;
  }
  if (*s == '.') {
    s++;
  }
  for (; *s && k + 1 < sizeof(low); s++) {
    low[k++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
  }
  low[k] = '\0';
  return !strcmp(low, "inf") || !strcmp(low, "infinity") || !strcmp(low, "nan");
}

/* value of $name */
static mbsStatus param_lookup(DeckReader *r, const yaml_node_t *n, const char *field,
                              const char *name, double *out) {
  int found = deck_names_get(&r->param_names, name);
  if (found >= 0) {
    *out = r->params[found].value;
    r->params[found].used = 1;
    return MBS_OK;
  }
  return deck_unknown_param(r, n, field, name, -1);
}

mbsStatus deck_unknown_param(DeckReader *r, const yaml_node_t *n, const char *field,
                             const char *name, int offset) {
  /* inside `parameters`: one defined further down */
  for (int i = 0; r->param_map && i < r->param_map->n; i++) {
    const char *k = deck_text(r->param_map->kv[i].key);
    if (k && !strcmp(k, name)) {
      return deck_fail_at(r, n, offset,
                          "%s: parameter '$%.64s' is defined below it: a parameter may refer only "
                          "to the ones above it",
                          field, name);
    }
  }
  /* unknown: suggest the nearest defined name */
  if (r->nparam <= 0) {
    return deck_fail_at(r, n, offset,
                        "%s: unknown parameter '$%.64s' (the deck defines no parameters)", field,
                        name);
  }
  const char **names = malloc((size_t)r->nparam * sizeof(*names));
  if (!names) {
    return deck_nomem(r);
  }
  for (int i = 0; i < r->nparam; i++) {
    names[i] = r->params[i].name;
  }
  const char *near = deck_nearest(name, names, r->nparam);
  mbsStatus st;
  if (near) {
    st = deck_fail_at(r, n, offset, "%s: unknown parameter '$%.64s'; did you mean '$%s'?", field,
                      name, near);
  } else {
    st = deck_fail_at(r, n, offset, "%s: unknown parameter '$%.64s'", field, name);
  }
  free(names);
  return st;
}

mbsStatus deck_number(DeckReader *r, const yaml_node_t *n, const char *field, double *out) {
  const char *s = deck_text(n);
  if (!s || deck_is_null(n)) {
    return deck_fail(r, n, "%s: expected a number, got %s", field, deck_kind(n));
  }

  /* $name: a parameter */
  if (s[0] == '$' && deck_names_get(&r->param_names, s + 1) >= 0) {
    return param_lookup(r, n, field, s + 1, out);
  }

  /* the whole scalar must be a finite decimal number, or an expression */
  if (!real_syntax(s)) {
    if (nonfinite_word(s)) {
      return deck_fail(r, n, "%s: must be a finite number (got '%.64s')", field, s);
    }
    if (deck_expr_looks(s)) {
      int plain = 0;
      mbsStatus st = deck_expression(r, n, field, s, out, &plain);
      if (!plain) {
        return st;
      }
    }
    return deck_fail(r, n, "%s: expected a number (got '%.64s')", field, s);
  }
  errno = 0;
  double v = strtod(s, NULL);
  if (!isfinite(v)) {
    return deck_fail(r, n, "%s: number out of range (got '%.64s')", field, s);
  }

  /* a nonzero literal that underflows to zero (1e-999) would silently become 0 */
  if (v == 0.0 && errno == ERANGE) {
    return deck_fail(r, n, "%s: number out of range, too close to zero (got '%.64s')", field, s);
  }
  *out = v;
  return MBS_OK;
}

mbsStatus deck_positive(DeckReader *r, const yaml_node_t *n, const char *field, double *out) {
  mbsStatus st = deck_number(r, n, field, out);
  if (st != MBS_OK) {
    return st;
  }
  if (!(*out > 0.0)) {
    return deck_fail(r, n, "%s must be > 0 (got %g)", field, *out);
  }
  return MBS_OK;
}

mbsStatus deck_integer(DeckReader *r, const yaml_node_t *n, const char *field, int *out) {
  const char *s = deck_text(n);
  if (!s || deck_is_null(n)) {
    return deck_fail(r, n, "%s: expected an integer, got %s", field, deck_kind(n));
  }

  /* $name: the parameter must hold a whole number */
  if (s[0] == '$') {
    double v = 0.0;
    mbsStatus st = param_lookup(r, n, field, s + 1, &v);
    if (st != MBS_OK) {
      return st;
    }
    if (v != floor(v) || v < INT_MIN || v > INT_MAX) {
      return deck_fail(r, n, "%s: expected an integer (parameter '%s' is %g)", field, s + 1, v);
    }
    *out = (int)v;
    return MBS_OK;
  }

  /* [+-] digits */
  size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
  size_t nd = 0;
  while (s[i + nd] >= '0' && s[i + nd] <= '9') {
    nd++;
  }
  if (nd == 0 || s[i + nd] != '\0') {
    return deck_fail(r, n, "%s: expected an integer (got '%.64s')", field, s);
  }
  errno = 0;
  long v = strtol(s, NULL, 10);
  if (errno == ERANGE || v < INT_MIN || v > INT_MAX) {
    return deck_fail(r, n, "%s: integer out of range (got '%.64s')", field, s);
  }
  *out = (int)v;
  return MBS_OK;
}

mbsStatus deck_bool(DeckReader *r, const yaml_node_t *n, const char *field, int *out) {
  const char *s = deck_text(n);
  if (s && (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))) {
    *out = 1;
    return MBS_OK;
  }
  if (s && (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))) {
    *out = 0;
    return MBS_OK;
  }
  if (s) {
    return deck_fail(r, n, "%s: expected true or false (got '%.64s')", field, s);
  }
  return deck_fail(r, n, "%s: expected true or false, got %s", field, deck_kind(n));
}

mbsStatus deck_string(DeckReader *r, const yaml_node_t *n, const char *field, char *buf,
                      size_t cap) {
  const char *s = deck_text(n);
  if (!s) {
    return deck_fail(r, n, "%s: expected a string, got %s", field, deck_kind(n));
  }
  if (strlen(s) >= cap) {
    return deck_fail(r, n, "%s is longer than %zu characters", field, cap - 1);
  }
  memcpy(buf, s, strlen(s) + 1);
  return MBS_OK;
}

mbsStatus deck_word(DeckReader *r, const yaml_node_t *n, const char *field, const char *what,
                    const char *const *words, int nword, int *out) {
  char valid[256];
  const char *s = deck_text(n);
  if (s) {
    for (int i = 0; i < nword; i++) {
      if (strcmp(s, words[i]) == 0) {
        *out = i;
        return MBS_OK;
      }
    }
  }

  /* name the valid words: an unsupported one may be a typo or a later feature */
  join_words(valid, sizeof(valid), words, nword);
  if (s) {
    return deck_fail(r, n, "%s '%.64s' is not supported; valid: %s", what, s, valid);
  }
  return deck_fail(r, n, "%s: expected one of %s, got %s", field, valid, deck_kind(n));
}

/* ---------------------------------------------------------------------------------------- */
/* vectors and matrices */

/* |v| of n components without overflow or underflow in the squares: an axis of 1e200 or
 * 1e-200 is a direction like any other */
double deck_norm(const double *v, int n) {
  double s = 0;
  for (int k = 0; k < n; k++) {
    s = fmax(s, fabs(v[k]));
  }
  if (s == 0 || !isfinite(s)) {
    return s;
  }
  double sum = 0;
  for (int k = 0; k < n; k++) {
    sum += (v[k] / s) * (v[k] / s);
  }
  return s * sqrt(sum);
}

mbsStatus deck_vec3(DeckReader *r, yaml_node_t *n, const char *field, double out[3]) {
  char f[160];
  if (!n || n->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, n, "%s: expected a list of 3 numbers, got %s", field, deck_kind(n));
  }
  if (deck_count(n) != 3) {
    return deck_fail(r, n, "%s: expected a list of 3 numbers (got %d items)", field, deck_count(n));
  }
  for (int k = 0; k < 3; k++) {
    snprintf(f, sizeof(f), "%s[%d]", field, k);
    mbsStatus st = deck_number(r, deck_item(r, n, k), f, &out[k]);
    if (st != MBS_OK) {
      return st;
    }
  }
  return MBS_OK;
}

mbsStatus deck_mat3(DeckReader *r, yaml_node_t *n, const char *field, int allow_diag,
                    double out[9]) {
  const char *want = allow_diag ? "[a, b, c] or a 3x3 list of lists" : "a 3x3 list of lists";
  if (!n || n->type != YAML_SEQUENCE_NODE || deck_count(n) != 3) {
    return deck_fail(r, n, "%s: expected %s, got %s", field, want, deck_kind(n));
  }

  /* [a, b, c]: the diagonal */
  if (allow_diag && deck_item(r, n, 0)->type == YAML_SCALAR_NODE) {
    double d[3];
    mbsStatus st = deck_vec3(r, n, field, d);
    if (st != MBS_OK) {
      return st;
    }
    memset(out, 0, 9 * sizeof(double));
    out[0] = d[0];
    out[4] = d[1];
    out[8] = d[2];
    return MBS_OK;
  }

  /* three rows of three */
  for (int i = 0; i < 3; i++) {
    char f[160];
    yaml_node_t *row = deck_item(r, n, i);
    if (row->type != YAML_SEQUENCE_NODE || deck_count(row) != 3) {
      return deck_fail(r, row, "%s: expected %s (row %d is not a list of 3 numbers)", field, want,
                       i);
    }
    snprintf(f, sizeof(f), "%s[%d]", field, i);
    mbsStatus st = deck_vec3(r, row, f, &out[3 * i]);
    if (st != MBS_OK) {
      return st;
    }
  }
  return MBS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* keys */

static int in_list(const char *s, const char *const *list) {
  for (int i = 0; list && list[i]; i++) {
    if (strcmp(s, list[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

mbsStatus deck_check_keys(DeckReader *r, const DeckMap *m, const char *where,
                          const char *const *allowed, const char *const *reserved) {
  char in[256], valid[512];
  if (where && where[0]) {
    snprintf(in, sizeof(in), "in %s", where);
  } else {
    snprintf(in, sizeof(in), "at top level");
  }

  for (int i = 0; i < m->n; i++) {
    const yaml_node_t *key = m->kv[i].key;
    const char *k = deck_text(key);
    if (k && in_list(k, allowed)) {
      continue;
    }
    if (!k) {
      return deck_fail_bare(r, key, "invalid key %s", in);
    }

    /* a key of the deck format that a later version implements */
    if (in_list(k, reserved)) {
      return deck_fail_bare(
          r, key, "unsupported key '%s' %s: this version of mbsim-run does not support it", k, in);
    }

    /* a typo: suggest the nearest valid key, or list them all */
    const char *near = deck_nearest(k, allowed, -1);
    if (near) {
      return deck_fail_bare(r, key, "unknown key '%.64s' %s; did you mean '%s'?", k, in, near);
    }
    join_words(valid, sizeof(valid), allowed, -1);
    return deck_fail_bare(r, key, "unknown key '%.64s' %s (valid keys: %s)", k, in, valid);
  }
  return MBS_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* parameters and entry names */

static int ident_char(char c, int first) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
         (!first && c >= '0' && c <= '9');
}

/* parameters are numbers or expressions of the parameters above them (so there are no cycles
 * to detect: a later one is unknown where an earlier one refers to it) */
mbsStatus deck_read_parameters(DeckReader *r, yaml_node_t *n) {
  DeckMap m = {0};
  mbsStatus st = MBS_OK;

  if (!n || deck_is_null(n)) {
    return MBS_OK;
  }
  if (n->type != YAML_MAPPING_NODE) {
    return deck_fail(r, n, "parameters: expected a mapping of names to numbers, got %s",
                     deck_kind(n));
  }
  st = deck_map_flatten(r, n, &m);
  if (st != MBS_OK) {
    goto fail;
  }
  if (m.n > 0) {
    r->params = calloc((size_t)m.n, sizeof(*r->params));
    if (!r->params || !deck_names_init(&r->param_names, m.n)) {
      st = deck_nomem(r);
      goto fail;
    }
  }

  r->param_map = &m;
  for (int i = 0; i < m.n; i++) {
    char field[MBS_NAME_MAX + 16];
    const char *name = deck_text(m.kv[i].key);
    const yaml_node_t *v = m.kv[i].value;

    /* names are identifiers so that "$name" is unambiguous */
    int ok = name && name[0] && strlen(name) < MBS_NAME_MAX;
    for (size_t k = 0; ok && name[k]; k++) {
      ok = ident_char(name[k], k == 0);
    }
    if (!ok) {
      st = deck_fail(r, m.kv[i].key,
                     "parameters: name '%.64s' must be a letter or '_' followed by letters, "
                     "digits or '_' (at most %d characters)",
                     name ? name : "", MBS_NAME_MAX - 1);
      goto fail;
    }
    snprintf(field, sizeof(field), "parameters.%s", name);
    st = deck_number(r, v, field, &r->params[i].value);
    if (st != MBS_OK) {
      goto fail;
    }
    r->params[i].name = name;
    r->params[i].key = m.kv[i].key;
    r->nparam = i + 1;
    deck_names_put(&r->param_names, name, i);
  }

fail:
  r->param_map = NULL;
  deck_map_free(&m);
  return st;
}

static int name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

mbsStatus deck_unit_vec3(DeckReader *r, yaml_node_t *n, const char *field, double out[3]) {
  mbsStatus st = deck_vec3(r, n, field, out);
  if (st != MBS_OK) {
    return st;
  }
  double len = deck_norm(out, 3);
  if (!(len > 0) || !isfinite(len)) {
    return deck_fail(r, n, "%s must be a nonzero vector", field);
  }
  for (int k = 0; k < 3; k++) {
    out[k] /= len;
  }
  return MBS_OK;
}

void deck_entry_ctx(DeckReader *r, const yaml_node_t *node, const char *section, int i) {
  const char *raw = NULL;

  /* the entry's own `name` (merged ones are seen once the mapping is flattened) */
  if (node->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
         p++) {
      if (deck_text_is(yaml_document_get_node(r->doc, p->key), "name")) {
        raw = deck_text(yaml_document_get_node(r->doc, p->value));
        break;
      }
    }
  }
  if (raw && raw[0]) {
    snprintf(r->ctx, sizeof(r->ctx), "%s[%d] '%.64s'", section, i, raw);
  } else {
    snprintf(r->ctx, sizeof(r->ctx), "%s[%d]", section, i);
  }
}

mbsStatus deck_entry_open(DeckReader *r, yaml_node_t *node, const char *section, int i,
                          const char *what, const char *const *allowed,
                          const char *const *reserved, char name[MBS_NAME_MAX],
                          const yaml_node_t **name_node, DeckMap *m) {
  deck_entry_ctx(r, node, section, i);
  if (node->type != YAML_MAPPING_NODE) {
    return deck_fail(r, node, "expected a mapping (one %s), got %s", what, deck_kind(node));
  }
  mbsStatus st = deck_map_flatten(r, node, m);
  if (st == MBS_OK) {
    st = deck_entry_start(r, m, section, i, allowed, reserved, name, name_node);
  }
  if (st != MBS_OK) {
    deck_map_free(m);
  }
  return st;
}

mbsStatus deck_entry_start(DeckReader *r, const DeckMap *m, const char *section, int i,
                           const char *const *allowed, const char *const *reserved,
                           char name[MBS_NAME_MAX], const yaml_node_t **name_node) {
  const yaml_node_t *nn = deck_map_get(m, "name");
  const char *raw = deck_text(nn);

  /* messages about this entry start with "bodies[1] 'link2'" */
  if (raw && raw[0]) {
    snprintf(r->ctx, sizeof(r->ctx), "%s[%d] '%.64s'", section, i, raw);
  } else {
    snprintf(r->ctx, sizeof(r->ctx), "%s[%d]", section, i);
  }
  mbsStatus st = deck_check_keys(r, m, r->ctx, allowed, reserved);
  if (st != MBS_OK) {
    return st;
  }

  /* a name is a non-empty word of [A-Za-z0-9_.-] */
  if (!nn) {
    return deck_fail(r, m->node, "missing required key 'name'");
  }
  if (!raw || deck_is_null(nn)) {
    return deck_fail(r, nn, "name: expected a string, got %s", deck_kind(nn));
  }
  if (!raw[0]) {
    return deck_fail(r, nn, "name must not be empty");
  }
  if (strlen(raw) >= MBS_NAME_MAX) {
    return deck_fail(r, nn, "name is longer than %d characters", MBS_NAME_MAX - 1);
  }
  for (size_t k = 0; raw[k]; k++) {
    if (!name_char(raw[k])) {
      return deck_fail(r, nn, "name '%s' may only contain letters, digits, '_', '.' and '-'", raw);
    }
  }
  memcpy(name, raw, strlen(raw) + 1);
  *name_node = nn;
  return MBS_OK;
}
